"""PyTorch's "inner autograd" pattern: a wrapper subclass whose handler runs the ops on the
tensor it wraps *with autograd on*, so the inner tensors carry a graph of their own — and the
handler may choose any gradient for an op. Here an embedding table's gradient is forced to
touch only the rows a batch used (the "sparse" update), and the rows are recorded.

The wrapper sits below autograd (its handler sees aten ops: ``aten.embedding.default``, ``t``,
``mm`` ...); the graph that matters is the inner one, so the loss is taken from the inner
tensor (``loss.elem``) and its gradient lands on the wrapped parameter.

Run: python examples/inner_autograd_subclass.py
"""

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.utils._pytree import tree_map

aten = tm.ops.aten


class RowsGradient(tm.autograd.Function):
    """``embedding`` whose backward writes only the rows the indices touched, and says which."""

    @staticmethod
    def forward(ctx, weight, indices, touched):
        ctx.save_for_backward(indices)
        ctx.rows, ctx.touched = weight.shape[0], touched
        return F.embedding(indices, weight)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        flat = indices.reshape(-1)
        ctx.touched.update(flat.tolist())
        weight_grad = tm.zeros(ctx.rows, grad.shape[-1]).index_add(0, flat, grad.reshape(-1, grad.shape[-1]))
        return weight_grad, None, None


class InnerAutograd(tm.Tensor):
    """Wraps ``elem`` (which may require grad); every op runs on the wrapped tensors with grad
    mode on, building their graph; ``embedding`` takes the rows-only gradient."""

    __torch_function__ = tm._C._disabled_torch_function_impl
    touched: set = set()

    @staticmethod
    def __new__(cls, elem):
        self = tm.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
        self.elem = elem
        return self

    def __repr__(self):
        return f"InnerAutograd({self.elem!r})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        args, kwargs = tree_map(lambda a: a.elem if isinstance(a, cls) else a, (args, kwargs or {}))
        with tm.enable_grad():
            if func is aten.embedding.default:
                out = RowsGradient.apply(args[0], args[1], cls.touched)
            else:
                out = func(*args, **kwargs)
        return tree_map(lambda a: cls(a) if isinstance(a, tm.Tensor) else a, out)


def main() -> None:
    tm.manual_seed(0)
    table = tm.randn(10, 4, requires_grad=True)
    head = tm.randn(2, 4)
    indices = tm.tensor([[1, 3], [3, 7]])
    targets = tm.tensor([0, 1])

    # Through the wrapper: the rows-only gradient.
    logits = F.embedding(indices, InnerAutograd(table)).sum(1) @ head.t()
    loss = F.cross_entropy(logits, targets)
    loss.elem.backward()
    inner_grad = table.grad.clone()

    # Plain autograd, for comparison: the same gradient values.
    table.grad = None
    F.cross_entropy(F.embedding(indices, table).sum(1) @ head.t(), targets).backward()

    untouched = sorted(set(range(10)) - InnerAutograd.touched)
    print(f"rows touched: {sorted(InnerAutograd.touched)}; untouched rows all zero: "
          f"{bool((inner_grad[untouched] == 0).all())}; equals plain autograd: "
          f"{bool(tm.allclose(inner_grad, table.grad))}")


if __name__ == "__main__":
    main()
