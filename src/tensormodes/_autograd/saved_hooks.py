"""Saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks``): a pair of functions that
take over how the tensors an op (or a custom Function's ``save_for_backward``) saves for
backward are kept: ``pack_hook(tensor)`` runs when the tensor is saved and its result is kept
instead; ``unpack_hook(packed)`` runs when backward reads it and returns the tensor to use.

>>> import tensormodes as tm
>>> seen = []
>>> x = tm.ones(2, requires_grad=True)
>>> with saved_tensors_hooks(lambda t: seen.append("pack") or t.detach(),
...                          lambda t: seen.append("unpack") or t):
...     y = x.sin()
>>> y.sum().backward(); seen
['pack', 'unpack']

Hooks are a per-thread stack (the innermost pair applies; a new thread starts with none), as
PyTorch's. The pair that packed a tensor unpacks it, whatever hooks are active at backward.

Cost when no hooks are active anywhere: none. ``SavedTensor.__init__`` (run for every saved
tensor of every recorded op) is replaced by the hook-aware one only while some thread has
hooks; a packed ``SavedTensor`` is told apart in ``unpack`` by a version of -1, on the branch
a version mismatch takes anyway, so the unpacking fast path (generated ``apply``) is untouched.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

from .._tensor_base import PLAIN, TensorBase, wrap_array
from .grad_mode import _GRAD_ENABLED, grad_enabled
from .graph import SavedTensor, below_listens
from .graph import _saved_alias as saved_alias
from .nodes import differentiable_tensor, grad_edge, share_version, version_counter

__all__ = ["saved_tensors_hooks", "disable_saved_tensors_hooks", "push_hooks", "pop_hooks"]

# The hook pairs of this thread (or task), innermost last.
_STACK: ContextVar[tuple] = ContextVar("tensormodes_saved_tensors_hooks", default=())
# disable_saved_tensors_hooks's message while it is in force (None: hooks allowed).
_DISABLED: ContextVar[str | None] = ContextVar("tensormodes_saved_tensors_hooks_disabled", default=None)

_PLAIN_INIT = SavedTensor.__init__
_LOCK = threading.Lock()
_PUSHED = [0]  # pairs pushed and not yet popped, across all threads


def push_hooks(pack_hook, unpack_hook) -> None:
    """Make ``(pack_hook, unpack_hook)`` this thread's innermost pair (PyTorch's
    ``torch._C._autograd._push_saved_tensors_default_hooks``)."""
    message = _DISABLED.get()
    if message is not None:
        raise RuntimeError(message)
    _STACK.set(_STACK.get() + ((pack_hook, unpack_hook),))
    with _LOCK:
        _PUSHED[0] += 1
        SavedTensor.__init__ = _init_maybe_packed


def pop_hooks() -> None:
    """Drop this thread's innermost pair."""
    stack = _STACK.get()
    if not stack:
        raise RuntimeError("no saved tensors hooks to pop")
    _STACK.set(stack[:-1])
    with _LOCK:
        _PUSHED[0] -= 1
        if not _PUSHED[0]:
            SavedTensor.__init__ = _PLAIN_INIT


class _Packed:
    """What a packed ``SavedTensor`` keeps (in its ``_tensor`` slot): the pack hook's result, the
    unpack hook, and the history the unpacked tensor is given (as PyTorch's ``SavedVariable``:
    an input keeps its producer's edge or its leaf's accumulator; an output gets its node)."""

    __slots__ = ("packed", "unpack_hook", "edge", "leaf")

    def __init__(self, packed, unpack_hook, edge, leaf: bool) -> None:
        self.packed, self.unpack_hook, self.edge, self.leaf = packed, unpack_hook, edge, leaf

    def unpack(self, saved: SavedTensor, node):
        value = self.unpack_hook(self.packed)
        if not isinstance(value, TensorBase):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(value).__name__}")
        # a tensor of its own (the hook may return anything it keeps), with the saved tensor's history
        if below_listens(value):  # PyTorch's unpacking shows the dispatch level a detach
            unpacked = saved_alias(value)
        elif type(value) is PLAIN.tensor:
            unpacked = wrap_array(value._data)
            share_version(unpacked, value)
        else:
            unpacked = value.detach()
        if saved._is_output:
            if grad_enabled():  # double backward: the output is differentiable, produced by this node
                unpacked._requires_grad = True
                unpacked._grad_fn = node
                if saved._output_nr:
                    unpacked._output_nr = saved._output_nr
        elif self.edge is not None:
            unpacked._requires_grad = True
            if self.leaf:
                unpacked._grad_accumulator = self.edge
            else:
                unpacked._grad_fn = self.edge
                if saved._output_nr:
                    unpacked._output_nr = saved._output_nr
        return unpacked


def _init_maybe_packed(self: SavedTensor, t, is_output: bool, output_nr: int = 0) -> None:
    """``SavedTensor.__init__`` while some thread has hooks: packs ``t`` with this thread's
    innermost pair, if it has one."""
    stack = _STACK.get()
    if not stack:
        _PLAIN_INIT(self, t, is_output, output_nr)
        return
    pack_hook, unpack_hook = stack[-1]
    if is_output and differentiable_tensor(t):
        t._requires_grad = True  # the hook sees an output requiring grad, as PyTorch's (its grad_fn is set after)
    counter = version_counter(t)
    version = counter[0]
    previous = _GRAD_ENABLED.get()
    try:
        _GRAD_ENABLED.set(False)  # the hooks run under no_grad, as PyTorch's
        packed = pack_hook(t)
    finally:
        _GRAD_ENABLED.set(previous)
    if counter[0] != version:
        raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
                           "pack hook cannot be modified by in-place operations as this can lead to unexpected "
                           "side-effects. Please open an issue if you need to perform in-place operations on the "
                           "input to a pack hook.")
    if is_output:
        edge, leaf = None, False
    else:
        output_nr = t.__dict__.get("_output_nr", 0)
        edge, leaf = (t._grad_fn, False) if t._grad_fn is not None else (
            (grad_edge(t)[0], True) if t._requires_grad else (None, False))
    self._tensor = _Packed(packed, unpack_hook, edge, leaf)
    self._counter = counter
    self._version = -1  # unpack takes the hooks' way (no version check with hooks, as PyTorch)
    self._is_output = is_output
    self._detached = False
    self._output_nr = output_nr
    self._producer = None


class saved_tensors_hooks:
    """Context manager: within it, every tensor saved for backward is packed by ``pack_hook``
    and, when backward needs it, unpacked by ``unpack_hook`` (PyTorch's
    ``torch.autograd.graph.saved_tensors_hooks``). Only the innermost pair applies.

    >>> import tensormodes as tm
    >>> x = tm.tensor([1., 2.], requires_grad=True)
    >>> with saved_tensors_hooks(lambda t: t.tolist(), lambda packed: tm.tensor(packed)):
    ...     y = x * x
    >>> y.sum().backward(); x.grad.tolist()
    [2.0, 4.0]
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        push_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        pop_hooks()


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Context manager: within it, using saved-tensor hooks raises ``RuntimeError(error_message)``
    (entering it while hooks are active raises too), as PyTorch's
    ``torch.autograd.graph.disable_saved_tensors_hooks``.

    >>> with disable_saved_tensors_hooks("no hooks here"):
    ...     with saved_tensors_hooks(lambda t: t, lambda t: t):
    ...         pass
    Traceback (most recent call last):
    RuntimeError: no hooks here
    """
    previous = _DISABLED.get()
    try:
        _DISABLED.set(error_message)
        if _STACK.get():
            raise RuntimeError(error_message)
        yield
    finally:
        _DISABLED.set(previous)


@contextlib.contextmanager
def hooks_set_aside() -> Iterator[None]:
    """This thread's hooks set aside for a while: ``utils.checkpoint``'s non-reentrant region
    runs in it, as PyTorch's packs the region's saved tensors with hooks of its own (the user's
    do not see them; under ``disable_saved_tensors_hooks`` the region raises its message)."""
    message = _DISABLED.get()
    if message is not None:
        raise RuntimeError(message)
    stack = _STACK.get()
    _STACK.set(())
    try:
        yield
    finally:
        _STACK.set(stack)
