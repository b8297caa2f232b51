"""``backward`` and ``grad``: the two ways to run the engine."""

from __future__ import annotations

from .engine import run_backward
from .nodes import GradientEdge

__all__ = ["backward", "grad"]


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on.

    >>> import tensormodes as tm
    >>> x = tm.ones(2, requires_grad=True)
    >>> tm.autograd.backward((x * 3).sum()); x.grad.tolist()
    [3.0, 3.0]
    """
    outputs = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outputs)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        chosen = _as_list(inputs)
        for t in chosen:
            if type(t) is not GradientEdge and t._grad_fn is not None and t._requires_grad:
                t.retain_grad()  # as PyTorch: a non-leaf input keeps its gradient, now and later
        # the leaves' accumulations run in the pass, in plain backward's order (PyTorch's)
        run_backward(outputs, grads, retain_graph=retain_graph, create_graph=create_graph,
                     inputs=chosen, allow_unused=True)
        return
    run_backward(outputs, grads, retain_graph=retain_graph, create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool | None = None, is_grads_batched: bool = False, materialize_grads: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated.

    >>> import tensormodes as tm
    >>> x = tm.tensor([2.0], requires_grad=True)
    >>> tm.autograd.grad((x ** 3).sum(), x)[0].tolist()
    [12.0]
    """
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported")
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    results = run_backward(outs, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=ins,
                           allow_unused=allow_unused, accumulate=False)
    if materialize_grads:
        results = tuple(t.new_zeros(t.shape) if g is None else g for g, t in zip(results, ins))
    return results
