"""``tensormodes.autograd.graph``: PyTorch's ``torch.autograd.graph`` — the backward graph's
``Node`` and ``GradientEdge``, hooks on the tensors saved for backward
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``), hooks on several
tensors' gradients at once (``register_multi_grad_hook``) and ``increment_version``.

>>> import tensormodes as tm
>>> x = tm.ones(2, requires_grad=True)
>>> y = x * 3
>>> edge = get_gradient_edge(y)
>>> edge.node.name(), edge.output_nr
('MulBackward0', 0)
>>> tm.autograd.grad(y.sum(), edge)[0].tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import functools
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence

from .._api import namespace as tm
from .._autograd.engine import RemovableHandle, current_pass_id, will_execute
from .._autograd.graph import bump_version
from .._autograd.nodes import GradientEdge, Node, grad_edge
from .._autograd.saved_hooks import disable_saved_tensors_hooks, saved_tensors_hooks
from .._tensor_base import TensorBase
from ._mutation import allow_mutation_on_saved_tensors

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook", "RemovableHandle",
           "allow_mutation_on_saved_tensors"]


def _get_grad_fn_or_grad_acc(t) -> Node:
    """The node a tensor's gradient enters: its ``grad_fn``, or a leaf's ``AccumulateGrad``."""
    if isinstance(t, GradientEdge):
        return t.node
    node = t.grad_fn
    if node is None and t.requires_grad:  # a leaf: its AccumulateGrad
        node = grad_edge(t)[0]
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge where ``tensor``'s gradient is computed: ``autograd.grad(loss, edge)`` gives what
    ``autograd.grad(loss, tensor)`` would, also once ``tensor`` is gone or modified in place.

    >>> import tensormodes as tm
    >>> get_gradient_edge(tm.ones(1, requires_grad=True)).node.name()
    'AccumulateGrad'
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    return GradientEdge(_get_grad_fn_or_grad_acc(tensor), tensor.output_nr)


def increment_version(tensor) -> None:
    """Record an in-place change of ``tensor`` (or of each of several) that autograd did not see,
    so that backward through a saved copy of it raises as after any in-place op.

    >>> import tensormodes as tm
    >>> t = tm.zeros(2)
    >>> increment_version(t); t._version
    1
    """
    for t in (tensor,) if isinstance(tensor, TensorBase) else tensor:
        bump_version(t)


class save_on_cpu(saved_tensors_hooks):
    """Context manager: tensors saved for backward within it are kept on the CPU and moved back to
    their device when backward needs them (PyTorch's ``torch.autograd.graph.save_on_cpu``; a
    tensor already on the CPU is kept as it is, as there).

    >>> import tensormodes as tm
    >>> x = tm.ones(2, requires_grad=True)
    >>> with save_on_cpu():
    ...     y = x.exp()
    >>> y.sum().backward(); [round(v, 4) for v in x.grad.tolist()]
    [2.7183, 2.7183]
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            # PyTorch pins when ``device_type``'s accelerator is available: none is, here (a plain copy)
            packed = tm.empty(tensor.size(), dtype=tensor.dtype, layout=tensor.layout)
            packed.copy_(tensor)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class _MultiHandle(RemovableHandle):
    """The handle ``register_multi_grad_hook`` returns: removes the hook from every tensor."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors: Sequence, fn: Callable, *, mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward pass with the gradients of several tensors (PyTorch's).

    ``mode="all"``: after the gradients of all of ``tensors`` the pass computes are known, with
    a list of them (None for a tensor the pass gives none). ``mode="any"``: with the first
    gradient computed among them. Returns a handle whose ``remove()`` unregisters it.

    >>> import tensormodes as tm
    >>> a, b = tm.ones(2, requires_grad=True), tm.ones(2, requires_grad=True)
    >>> c = a * b
    >>> handle = register_multi_grad_hook((a, b, c), lambda grads: print([g is not None for g in grads]))
    >>> c.sum().backward(inputs=(a,))
    [True, False, True]
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        counts: dict[int, int] = {}
        buffers: dict[int, list] = {}
        expected: list = [None]
        grad_fns = [_get_grad_fn_or_grad_acc(t) for t in tensors]

        def inner_hook(index: int, grad) -> None:
            pass_id = current_pass_id()
            if pass_id == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            buffer = buffers.setdefault(pass_id, [None] * len(tensors))
            with lock:
                seen = counts.get(pass_id, 0)
                counts[pass_id] = seen + 1
                if seen == 0:  # the first gradient of this pass: how many this pass will compute
                    expected[0] = sum(map(will_execute, grad_fns))
            buffer[index] = grad
            if seen == expected[0] - 1:
                fn(buffer)
                del counts[pass_id], buffers[pass_id]

        handles = tuple(t.register_hook(functools.partial(inner_hook, i)) for i, t in enumerate(tensors))
    else:
        ran: dict[int, bool] = defaultdict(bool)

        @functools.wraps(fn)
        def wrapped_fn(grad) -> None:
            pass_id = current_pass_id()
            if pass_id == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            with lock:
                previous, ran[pass_id] = ran[pass_id], True
            if not previous:
                fn(grad)

        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)

