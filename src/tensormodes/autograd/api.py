"""``tensormodes.autograd.backward`` and ``grad`` as PyTorch's Python functions: the arguments
normalized as PyTorch normalizes them, then the override protocol (a tensor-like among the
outputs or inputs, or an active ``__torch_function__`` mode, receives the call, as
``torch.autograd.grad`` hands it to them), then the engine (``_autograd.api``).

Neither is listed by ``get_overridable_functions()`` (nor is PyTorch's): they take tensors in
sequences, which the generated override layer does not read.

>>> import tensormodes as tm
>>> class Scaled:  # a tensor-like: not a Tensor, defines __torch_function__
...     def __init__(self, t):
...         self.t = t
...     @classmethod
...     def __torch_function__(cls, func, types, args=(), kwargs=None):
...         if func is grad:
...             outputs, inputs = args
...             return tuple(g * 10 for g in grad([o.t for o in outputs], [i.t for i in inputs], **kwargs))
...         return NotImplemented
>>> x = tm.ones(2, requires_grad=True)
>>> s = Scaled(x)
>>> grad(Scaled((x * 3).sum()), s)[0].tolist()
[30.0, 30.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from .._api import namespace as tm
from .._autograd import api as _engine_api
from .._autograd.nodes import GradientEdge
from ..overrides import handle_torch_function, has_torch_function, is_tensor_like

__all__ = ["backward", "grad"]


def _as_inputs(inputs, function: str) -> tuple:
    """``inputs`` as a tuple: one tensor(-like), a dict's values, or a sequence (PyTorch's rules)."""
    if is_tensor_like(inputs) or type(inputs) is GradientEdge:
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{function}()` must be a dict, not {type(inputs).__name__}. "
                        "Other Mapping types are not supported.")
    return tuple(inputs)


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on (or of
    ``inputs`` only). A tensor-like among ``tensors`` or ``inputs``, or an active mode, receives
    the call (``__torch_function__``) first.

    >>> import tensormodes as tm
    >>> x = tm.ones(2, requires_grad=True)
    >>> backward((x * 3).sum()); x.grad.tolist()
    [3.0, 3.0]
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    chosen = () if inputs is None else _as_inputs(inputs, "backward")
    if inputs is not None and not chosen:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = (tensors,) if is_tensor_like(tensors) else tuple(tensors)
    overridable = tuple(t for t in tensors if is_tensor_like(t)) + tuple(t for t in chosen if is_tensor_like(t))
    if has_torch_function(overridable):
        return handle_torch_function(backward, overridable, tensors, grad_tensors=grad_tensors,
                                     retain_graph=retain_graph, create_graph=create_graph,
                                     inputs=chosen if inputs is not None else None)
    return _engine_api.backward(tensors, grad_tensors, retain_graph, create_graph,
                                inputs=list(chosen) if inputs is not None else None)


def _batched_grad(outputs: list, inputs: list, grad_outputs, retain_graph, create_graph: bool, allow_unused: bool,
                  is_grads_batched: bool, materialize_grads: bool) -> tuple:
    """``is_grads_batched=True``: the first dimension of each grad_output is a batch of vectors.
    PyTorch vmaps the backward pass over it; here the pass runs once per batch index (the graph
    kept until the last) and each input's gradients are stacked: the same values, a loop's cost."""
    grads = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else [grad_outputs] * len(outputs)
    for index, (out, batch) in enumerate(zip(outputs, grads)):
        if batch is None:
            if out.dim() == 0:  # PyTorch's implicit grad_output is a scalar, which vmap cannot map over
                raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input "
                                 "is a Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0.")
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if batch.shape[1:] != out.shape:
            # PyTorch's message shows the first vector's shape without its first dimension
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               f"shape of corresponding output, but a mismatch was detected: grad_output[{index}] has "
                               f"a shape of {batch[0].shape[1:]} and output[{index}] has a shape of {out.shape}. If "
                               "you only want some tensors in `grad_output` to be considered batched, consider using "
                               "vmap.")
    sizes = [batch.shape[0] for batch in grads]
    if any(size != sizes[0] for size in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    keep = create_graph if retain_graph is None else retain_graph
    per_index = [_engine_api.grad(outputs, inputs, [batch[index] for batch in grads], keep or index < sizes[0] - 1,
                                  create_graph, allow_unused, False, False) for index in range(sizes[0])]
    results = tuple(None if column[0] is None else tm.stack(column) for column in zip(*per_index))
    if materialize_grads:  # PyTorch fills unused inputs after its vmap: zeros of the input's own shape
        results = tuple(t.new_zeros(t.shape) if g is None else g for g, t in zip(results, inputs))
    return results


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated (a dict
    of ``inputs`` gives a dict). A tensor-like among ``outputs`` or ``inputs``, or an active mode,
    receives the call (``__torch_function__``) first.

    >>> import tensormodes as tm
    >>> x = tm.tensor([2.0], requires_grad=True)
    >>> grad((x ** 3).sum(), x)[0].tolist()
    [12.0]

    ``is_grads_batched=True`` takes a batch of grad_outputs (their first dimension) and gives a
    batch of gradients, one backward pass per vector (PyTorch vmaps one pass):

    >>> y = tm.tensor([1.0, 2.0], requires_grad=True)
    >>> grad(y ** 2, y, tm.eye(2), is_grads_batched=True)[0].tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = (outputs,) if is_tensor_like(outputs) else tuple(outputs)
    chosen = _as_inputs(inputs, "grad")
    if not chosen:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    overridable = tuple(t for t in outputs if is_tensor_like(t)) + tuple(t for t in chosen if is_tensor_like(t))
    if has_torch_function(overridable):
        results = handle_torch_function(grad, overridable, outputs, chosen, grad_outputs=grad_outputs,
                                        retain_graph=retain_graph, create_graph=create_graph,
                                        only_inputs=only_inputs, allow_unused=allow_unused,
                                        is_grads_batched=is_grads_batched, materialize_grads=materialize_grads)
    else:
        if not only_inputs:
            warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                          "gradient for other parts of the graph, please use torch.autograd.backward.",
                          FutureWarning, stacklevel=2)
        run = _batched_grad if is_grads_batched else _engine_api.grad
        results = run(list(outputs), list(chosen), grad_outputs, retain_graph, create_graph, allow_unused,
                      is_grads_batched, materialize_grads)
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), results, strict=True))
    return results


# Public at PyTorch's path, where handlers and DebugMode name them (``tensormodes.autograd.grad``).
backward.__module__ = grad.__module__ = "tensormodes.autograd"
