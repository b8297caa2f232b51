"""Dispatch-level modes: ``TorchDispatchMode``, its stack and the helpers of ``__torch_dispatch__``
wrapper subclasses. Users import them from ``tensormodes.utils._python_dispatch`` (PyTorch's
path, with PyTorch's underscored names for the stack helpers); they live here, beside the
dispatch level's entry (``dispatch_level.py``), so that the tools built on them
(``_subclasses``: ``FakeTensorMode``, ``missing_ops``) sit below that public face, which
re-exports them too.

>>> from tensormodes.utils._python_dispatch import TorchDispatchMode as Public
>>> Public is TorchDispatchMode, current_dispatch_mode_stack()
(True, [])
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .._dispatch.python_dispatch import active_modes, is_dispatch_class
from .._overrides import dispatch as _state
from .._overrides.dispatch import enter_scope, exit_owned, owned_scope
from .dispatch_level import correct_aliasing
from .tensor import Tensor

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode", "is_in_torch_dispatch_mode", "return_and_correct_aliasing",
           "is_traceable_wrapper_subclass", "transform_subclass", "current_dispatch_mode",
           "current_dispatch_mode_stack", "push_mode", "pop_mode", "pop_mode_temporarily", "disable_current_modes"]


def _stacked(modes: tuple, mode) -> tuple:
    """``modes`` with ``mode`` pushed: on top, or for an infra mode above the other infra modes
    and below every user mode."""
    if not mode.is_infra_mode():
        return (*modes, mode)
    position = 0
    while position < len(modes) and modes[position].is_infra_mode():
        position += 1
    return (*modes[:position], mode, *modes[position:])


class TorchDispatchMode:
    """Base class of dispatch-level modes: override ``__torch_dispatch__(self, func, types,
    args=(), kwargs=None)``; enter with ``with Mode():`` (or ``with mode:``, also re-entered
    from inside its own handler)."""

    # Beyond PyTorch: the ops (``OpOverloadPacket``s or ``OpOverload``s, an overload standing for its
    # packet) the handler wants; the others run as if the mode were not there, and public calls that
    # can reach none of them take their plain fast path. None: every op (PyTorch's behaviour).
    handled_ops: Any = None

    def __init__(self, _dispatch_key=None) -> None:
        self._dispatch_key = _dispatch_key

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} does not override __torch_dispatch__")

    @classmethod
    def is_infra_mode(cls) -> bool:
        """True for modes that must run after every user mode (``FakeTensorMode`` ...)."""
        return False

    def __enter__(self):
        saved = _state.get_state()
        try:
            modes = _state.current_dispatch_modes(settled=True)
            enter_scope(self, f"dispatch mode {self!r}", dispatch_modes=_stacked(modes, self))
        except BaseException:
            _state.set_state(saved)  # an exception arriving mid-way leaves nothing behind
            raise
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        scope = None
        try:
            scope = owned_scope(self)
            exit_owned(self, exc_type, scope)
        except BaseException:
            exit_owned(self, exc_type, scope if scope is not None else owned_scope(self))
            raise

    @classmethod
    def push(cls, *args, **kwargs) -> TorchDispatchMode:
        """``cls(*args, **kwargs)``, to be entered with ``with``."""
        return cls(*args, **kwargs)


class BaseTorchDispatchMode(TorchDispatchMode):
    """A dispatch mode that runs every op unchanged."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def current_dispatch_mode():
    """The mode that sees the next op (the top of the stack), or None."""
    modes = active_modes()
    return modes[-1] if modes else None


def current_dispatch_mode_stack() -> list:
    """The dispatch modes, bottom first."""
    return list(active_modes())


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    """True while a dispatch mode is active (``include_infra_modes=False``: a user mode)."""
    modes = active_modes()
    return bool(modes) if include_infra_modes else any(not m.is_infra_mode() for m in modes)


def _set_modes(modes: tuple) -> None:
    base = _state.get_state()
    if base is None:
        _state.set_state(_state.make_state(dispatch_modes=modes))
    else:
        _state.set_state(base.replace(dispatch_modes=modes))


def push_mode(mode: TorchDispatchMode) -> None:
    """Push ``mode`` without a scope (``pop_mode`` takes it off again)."""
    _set_modes(_stacked(_state.current_dispatch_modes(), mode))


def pop_mode(k=None) -> TorchDispatchMode:
    """Take the top mode off the stack and return it."""
    state = _state.get_state()
    modes = () if state is None else state.dispatch_modes
    if not modes:
        raise AssertionError("Trying to pop from empty mode stack")
    _state.set_state(state.dispatch_popped())  # (the state without it, made once per state: a handler's
    return modes[-1]                           # ``_pop_mode_temporarily`` pops per call)


@contextlib.contextmanager
def pop_mode_temporarily(k=None) -> Iterator[TorchDispatchMode]:
    """Within the block the top mode is off the stack (and yielded); it is back afterwards."""
    state = _state.get_state()
    mode = pop_mode(k)
    try:
        yield mode
    finally:
        _state.set_state(state)


@contextlib.contextmanager
def disable_current_modes() -> Iterator[list]:
    """Within the block no dispatch mode is active; yields the modes, bottom first."""
    state = _state.get_state()
    modes = list(_state.current_dispatch_modes())
    _set_modes(())
    try:
        yield modes
    finally:
        _state.set_state(state)


# -- wrapper subclasses ----------------------------------------------------------------------

def is_traceable_wrapper_subclass(t) -> bool:
    """True for a tensor whose class defines ``__torch_dispatch__``, ``__tensor_flatten__`` and
    ``__tensor_unflatten__`` (tracers take it apart and rebuild it)."""
    cls = type(t)
    return (isinstance(t, Tensor) and cls is not Tensor and is_dispatch_class(cls)
            and hasattr(cls, "__tensor_flatten__") and hasattr(cls, "__tensor_unflatten__"))


def transform_subclass(t, callback: Callable, outer_size=None, outer_stride=None):
    """Rebuild wrapper ``t`` with ``callback(attribute name, inner tensor)`` applied to each
    inner tensor its ``__tensor_flatten__`` names."""
    attributes, context = t.__tensor_flatten__()
    inner = {name: callback(name, getattr(t, name)) for name in attributes}
    return type(t).__tensor_unflatten__(inner, context, t.size() if outer_size is None else outer_size,
                                        t.stride() if outer_stride is None else outer_stride)


def return_and_correct_aliasing(func, args, kwargs, out):
    """What a wrapper's handler returns for ``func`` so that aliasing is right: the input itself
    for an in-place op, the ``out=`` tensor for an out variant, and for a view a result that
    shares its input's version counter and knows its base. (The dispatch level does this by
    default for wrappers; handlers may still call it, as in PyTorch.)"""
    return correct_aliasing(func, args, kwargs or {}, out)
