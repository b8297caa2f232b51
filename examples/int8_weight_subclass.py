"""An int8 weight as a ``__torch_dispatch__`` wrapper subclass, trained with straight-through
gradients to float32 master weights.

``Int8Weight`` stores one byte per element plus a per-row scale, and presents itself as a
float32 tensor of the master weight's shape. Its handler serves the ops a linear layer needs
(``t``, ``mm``, ``addmm``, ``view``, ``detach``, ``_to_copy``) on the int8 data and dequantizes
for every other op. Autograd runs above the dispatch level, so the layer's backward works as
for any tensor; the straight-through function hands the weight's gradient to the master weight.

Run: python examples/int8_weight_subclass.py   (prints the two losses and the storage size)
"""

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.utils._pytree import tree_map

aten = tm.ops.aten


class Int8Weight(tm.Tensor):
    """int8 data and float32 per-row scales; public dtype float32."""

    __torch_function__ = tm._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, data, scale, transposed=False):
        rows, cols = data.shape
        shape = (cols, rows) if transposed else (rows, cols)
        self = tm.Tensor._make_wrapper_subclass(cls, shape, dtype=tm.float32)
        self.data_int8, self.scale, self.transposed = data, scale, transposed
        return self

    @classmethod
    def quantize(cls, weight):
        scale = weight.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 127
        return cls((weight / scale).round().clamp(-127, 127).to(tm.int8), scale)

    def dequantize(self):
        weight = self.data_int8.to(tm.float32) * self.scale
        return weight.t() if self.transposed else weight

    def __repr__(self):
        return f"Int8Weight(shape={tuple(self.shape)}, transposed={self.transposed})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is aten.t.default:
            w = args[0]
            return cls(w.data_int8, w.scale, not w.transposed)
        if func in (aten.detach.default, aten._to_copy.default) and not kwargs.get("dtype"):
            w = args[0]
            return cls(w.data_int8, w.scale, w.transposed)
        if func is aten.mm.default and isinstance(args[1], cls) and args[1].transposed:
            x, w = args  # x @ W.t(): the int8 matrix product, then each output column scaled
            return x.mm(w.data_int8.to(x.dtype).t()) * w.scale.t()
        if func is aten.addmm.default and isinstance(args[2], cls) and args[2].transposed:
            bias, x, w = args[:3]
            return x.mm(w.data_int8.to(x.dtype).t()) * w.scale.t() + bias
        # Everything else (views included): on the dequantized float weight.
        return func(*tree_map(lambda a: a.dequantize() if isinstance(a, cls) else a, args),
                    **tree_map(lambda a: a.dequantize() if isinstance(a, cls) else a, kwargs))


class StraightThrough(tm.autograd.Function):
    """Quantizes in the forward pass; the gradient reaches the master weight unchanged."""

    @staticmethod
    def forward(ctx, weight):
        return Int8Weight.quantize(weight.detach())

    @staticmethod
    def backward(ctx, grad):
        return grad.dequantize() if isinstance(grad, Int8Weight) else grad


def train(quantized: bool, steps: int = 60) -> float:
    tm.manual_seed(0)
    x = tm.randn(256, 16)
    y = (x[:, :4].sum(1) > 0).long() + (x[:, 4:8].sum(1) > 0).long()
    layer1, layer2 = tm.nn.Linear(16, 32), tm.nn.Linear(32, 3)
    optimizer = tm.optim.Adam([*layer1.parameters(), *layer2.parameters()], lr=0.01)
    for _ in range(steps):
        w1 = StraightThrough.apply(layer1.weight) if quantized else layer1.weight
        hidden = F.relu(F.linear(x, w1, layer1.bias))
        loss = F.cross_entropy(layer2(hidden), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def main() -> None:
    float_loss, int8_loss = train(False), train(True)
    weight = Int8Weight.quantize(tm.randn(32, 16))
    print(f"float32 loss {float_loss:.4f}, int8-weight loss {int8_loss:.4f}, "
          f"relative difference {abs(int8_loss - float_loss) / float_loss:.2%}")
    print(f"int8 storage: {weight.data_int8.element_size()} byte per element, dtype {weight.dtype}")


if __name__ == "__main__":
    main()
