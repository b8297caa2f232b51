"""Grad mode: whether operations are recorded for differentiation.

Like the mode stack, the flag lives in a ``ContextVar``: each thread starts with
grad mode on, an asyncio task inherits its creator's, and every context manager
restores on exit exactly the value its entry replaced, also after exceptions, when one
object is entered by several tasks or threads at once, or nested in itself.

>>> import tensormodes as tm
>>> x = tm.ones(2, requires_grad=True)
>>> with tm.no_grad():
...     (x * 2).requires_grad
False
>>> (x * 2).requires_grad
True
"""

from __future__ import annotations

import functools
import inspect
from contextvars import ContextVar

from .._dispatch import python_dispatch

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "BELOW_AUTOGRAD"]


class _BelowAutograd(int):
    """The flag's value below autograd (a dispatch handler, the kernel) when grad mode is on above:
    falsy, so nothing records there, yet ``is_grad_enabled()`` reports True — PyTorch's handlers
    run below its autograd key, not under ``no_grad``, and see grad mode as it was outside.
    (``enable_grad()`` inside a handler records again here, which the inner-autograd pattern of
    ``examples/inner_autograd_subclass.py`` uses; PyTorch's would not record.)"""

    # an int 0 of its own: its truth test is the C one (a Python ``__bool__`` would cost a call
    # wherever generated code tests the flag below autograd)
    __slots__ = ()

    def __repr__(self) -> str:
        return "BELOW_AUTOGRAD"


BELOW_AUTOGRAD = _BelowAutograd(0)

_GRAD_ENABLED: ContextVar[bool] = ContextVar("tensormodes_grad_enabled", default=True)
_INFERENCE: ContextVar[bool] = ContextVar("tensormodes_inference_mode", default=False)
# The live entries of the grad-mode context managers in this context, innermost last: each
# is (owner, grad mode, inference mode), the values the entry replaced. An exit finds its
# owner's innermost entry here, so one object (``ng = no_grad()``) can be entered by several
# threads and tasks at once, or nested in itself, and every exit restores what its own
# entry replaced, by value.
_ENTRIES: ContextVar[tuple] = ContextVar("tensormodes_grad_mode_entries", default=())
grad_enabled = _GRAD_ENABLED.get
# The flag's own setter and resetter (token in, token out), for the dispatch level: a call
# below autograd runs with the flag off and restores it at once, with no scope to record.
set_grad_enabled_raw = _GRAD_ENABLED.set
reset_grad_enabled = _GRAD_ENABLED.reset
python_dispatch.HOOKS.enabled = grad_enabled  # an OpOverload called with grad mode on meets autograd


def is_grad_enabled() -> bool:
    """True if operations are currently recorded for differentiation.

    >>> import tensormodes as tm
    >>> tm.is_grad_enabled()
    True
    """
    value = _GRAD_ENABLED.get()
    if value is True:
        return True
    return value is BELOW_AUTOGRAD or bool(value)


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return _INFERENCE.get()


def _entry_of(owner) -> tuple | None:
    """``(entries, index)`` of ``owner``'s innermost entry in this context, or None."""
    entries = _ENTRIES.get()
    for i in range(len(entries) - 1, -1, -1):
        if entries[i][0] is owner:
            return entries, i
    return None


def _exit(found: tuple | None) -> None:
    """Restore what the entry ``_entry_of`` found replaced (entries made after it and never
    exited go with it). By value and the entries last: rerun after an interrupt, it ends
    in the same place, and never pops a second entry of the same owner."""
    if found is not None:
        entries, i = found
        _, grad, inference = entries[i]
        _GRAD_ENABLED.set(grad)
        _INFERENCE.set(inference)
        _ENTRIES.set(entries[:i])


class _GradModeContext:
    """A context manager that is also a decorator (with or without parentheses).

    Each entry records what it replaced in the current context, and each exit restores
    what its own entry replaced: one object can be shared by threads and asyncio tasks,
    nested in itself, or decorate a function called concurrently. An exception arriving
    anywhere in ``__enter__`` or ``__exit__`` (a signal handler's) leaves nothing behind.
    """

    _enabled: bool = True
    _inference: bool | None = None  # None: inference mode is left as it is

    def __new__(cls, orig_func=None, *args, **kwargs):
        instance = super().__new__(cls)
        if callable(orig_func) and not args and not kwargs and cls._decorates_bare:
            instance.__init__()
            return instance(orig_func)
        return instance

    _decorates_bare = True

    # The grad mode the next entry restores on exit instead of the one it finds (set_grad_enabled).
    _replaces: bool | None = None

    def __enter__(self):
        # Written out (no helper calls) for speed; every change happens inside the try, and an
        # exception arriving anywhere (a signal handler's) restores what was read first.
        entries, grad, inference = _ENTRIES.get(), _GRAD_ENABLED.get(), _INFERENCE.get()
        try:
            replaced = grad
            if self._replaces is not None:
                replaced, self._replaces = self._replaces, None
            _ENTRIES.set(entries + ((self, replaced, inference),))
            _GRAD_ENABLED.set(self._enabled)
            if self._inference is not None:
                _INFERENCE.set(self._inference)
        except BaseException:
            _GRAD_ENABLED.set(grad)
            _INFERENCE.set(inference)
            _ENTRIES.set(entries)
            raise
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        found = None
        try:
            entries = _ENTRIES.get()
            if entries and entries[-1][0] is self:  # the innermost entry: the common case, inline
                found = entries, len(entries) - 1
                _, grad, inference = entries[-1]
                _GRAD_ENABLED.set(grad)
                if inference is not _INFERENCE.get():
                    _INFERENCE.set(inference)
                _ENTRIES.set(entries[:-1])
            else:
                found = _entry_of(self)
                _exit(found)
        except BaseException:
            _exit(found if found is not None else _entry_of(self))  # finish an interrupted exit
            raise

    def clone(self):
        """A fresh context manager with the same setting (for decorators)."""
        return type(self)()

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator_wrapper(*args, **kwargs):
                generator = func(*args, **kwargs)
                value = None
                while True:
                    with self.clone():
                        try:
                            value = generator.send(value)
                        except StopIteration as stop:
                            return stop.value
                    value = yield value

            return generator_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Context manager and decorator disabling gradient recording.

    >>> import tensormodes as tm
    >>> @tm.no_grad()
    ... def double(x):
    ...     return x * 2
    >>> double(tm.ones(1, requires_grad=True)).requires_grad
    False
    """

    _enabled = False


class enable_grad(_GradModeContext):
    """Context manager and decorator enabling gradient recording (inside ``no_grad``).

    >>> import tensormodes as tm
    >>> with tm.no_grad(), tm.enable_grad():
    ...     (tm.ones(1, requires_grad=True) * 2).requires_grad
    True
    """

    _enabled = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to ``mode``: immediately as a function, until exit as a context manager.

    As a context manager, its first entry restores on exit the value from before the
    constructor (which already set ``mode``), as PyTorch's does; a later entry restores the
    value it found. As a decorator it sets nothing until the function is called.

    >>> import tensormodes as tm
    >>> with tm.set_grad_enabled(False):
    ...     tm.is_grad_enabled()
    False
    """

    _decorates_bare = False

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self._enabled = mode
        self._before_construction = self._replaces = _GRAD_ENABLED.get()
        _GRAD_ENABLED.set(mode)

    def __call__(self, func):
        # Decorating is not calling set_grad_enabled: undo the constructor's change.
        _GRAD_ENABLED.set(self._before_construction)
        self._replaces = None
        return super().__call__(func)

    def clone(self):
        """A context manager with the same setting that changes nothing until entered."""
        return enable_grad() if self._enabled else no_grad()


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (tensors created inside never require grad). ``inference_mode(False)``
    turns inference mode off and grad mode on inside, as PyTorch's does.

    >>> import tensormodes as tm
    >>> with tm.inference_mode():
    ...     tm.is_inference_mode_enabled(), tm.is_grad_enabled()
    (True, False)
    """

    def __init__(self, mode: bool = True) -> None:
        self._mode = mode
        self._enabled = not mode
        self._inference = bool(mode)

    def clone(self):
        return inference_mode(self._mode)
