"""``grad`` and ``backward`` as PyTorch's public functions: overridable by the tensor-likes and
Tensor subclasses among the outputs and inputs (PyTorch's ``handle_torch_function(grad, ...)``,
with the same arguments; the active modes then see the call first). Called on plain tensors they
go to the engine directly, so that a mode sees the gradient formulas' public calls instead (DESIGN:
formulas are written with public ops so that modes see them; PyTorch's modes see the call)."""

from __future__ import annotations

from collections.abc import Mapping

from .._api.tensor import Tensor
from .._autograd import api as _engine_api
from ..overrides import handle_torch_function, has_torch_function, is_tensor_like

__all__ = ["backward", "grad"]


def _inputs_tuple(inputs, function: str) -> tuple:
    if is_tensor_like(inputs):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{function}()` must be a dict, not {type(inputs).__name__}. "
                        "Other Mapping types are not supported.")
    return tuple(inputs)


def _overriding(values: tuple) -> tuple:
    """The tensor-likes and Tensor subclass instances among ``values`` (plain tensors are not)."""
    return tuple(t for t in values if type(t) is not Tensor and is_tensor_like(t))


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on.

    >>> import tensormodes as tm
    >>> x = tm.ones(2, requires_grad=True)
    >>> tm.autograd.backward((x * 3).sum()); x.grad.tolist()
    [3.0, 3.0]
    """
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and not inputs_tuple:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = (tensors,) if is_tensor_like(tensors) else tuple(tensors)
    overridable = _overriding(tensors + inputs_tuple)
    if overridable and has_torch_function(overridable):
        return handle_torch_function(backward, overridable, tensors, grad_tensors=grad_tensors,
                                     retain_graph=retain_graph, create_graph=create_graph,
                                     inputs=inputs_tuple if inputs is not None else None)
    return _engine_api.backward(tensors, grad_tensors, retain_graph, create_graph,
                                inputs_tuple if inputs is not None else None)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated
    (``only_inputs`` is accepted and ignored, as in PyTorch; a dict of inputs gives a dict).

    >>> import tensormodes as tm
    >>> x = tm.tensor([2.0], requires_grad=True)
    >>> tm.autograd.grad((x ** 3).sum(), x)[0].tolist()
    [12.0]
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    outputs = (outputs,) if is_tensor_like(outputs) else tuple(outputs)
    inputs_tuple = _inputs_tuple(inputs, "grad")
    if not inputs_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    overridable = _overriding(outputs + inputs_tuple)
    if overridable and has_torch_function(overridable):
        result = handle_torch_function(grad, overridable, outputs, inputs_tuple, grad_outputs=grad_outputs,
                                       retain_graph=retain_graph, create_graph=create_graph,
                                       only_inputs=only_inputs, allow_unused=allow_unused,
                                       is_grads_batched=is_grads_batched, materialize_grads=materialize_grads)
    else:
        result = _engine_api.grad(outputs, inputs_tuple, grad_outputs, retain_graph, create_graph, allow_unused,
                                  is_grads_batched, materialize_grads)
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result))
    return result
