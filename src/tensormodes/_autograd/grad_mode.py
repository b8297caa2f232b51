"""Grad mode: whether operations are recorded for differentiation.

Like the mode stack, the flag lives in a ``ContextVar``: each thread starts with
grad mode on, an asyncio task inherits its creator's, and every context manager
restores exactly the previous value on exit, also after exceptions.

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

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

_GRAD_ENABLED: ContextVar[bool] = ContextVar("tensormodes_grad_enabled", default=True)
_INFERENCE: ContextVar[bool] = ContextVar("tensormodes_inference_mode", default=False)
grad_enabled = _GRAD_ENABLED.get


def is_grad_enabled() -> bool:
    """True if operations are currently recorded for differentiation.

    >>> import tensormodes as tm
    >>> tm.is_grad_enabled()
    True
    """
    return _GRAD_ENABLED.get()


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return _INFERENCE.get()


class _GradModeContext:
    """A context manager that is also a decorator (with or without parentheses)."""

    _enabled: bool = True

    def __new__(cls, orig_func=None, *args, **kwargs):
        instance = super().__new__(cls)
        if callable(orig_func) and not args and not kwargs and cls._decorates_bare:
            instance.__init__()
            return instance(orig_func)
        return instance

    _decorates_bare = True

    def __enter__(self):
        self._tokens = getattr(self, "_tokens", [])
        self._tokens.append(_GRAD_ENABLED.set(self._enabled))
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        _GRAD_ENABLED.reset(self._tokens.pop())

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
        self._tokens = [_GRAD_ENABLED.set(mode)]

    def __enter__(self):
        return self

    def clone(self):
        return set_grad_enabled(self._enabled)


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (tensors created inside never require grad); ``inference_mode(False)``
    does nothing.

    >>> import tensormodes as tm
    >>> with tm.inference_mode():
    ...     tm.is_inference_mode_enabled(), tm.is_grad_enabled()
    (True, False)
    """

    def __init__(self, mode: bool = True) -> None:
        self._mode = mode

    def __enter__(self):
        self._tokens = getattr(self, "_tokens", [])
        if self._mode:
            self._tokens.append((_GRAD_ENABLED.set(False), _INFERENCE.set(True)))
        else:
            self._tokens.append(None)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        tokens = self._tokens.pop()
        if tokens is not None:
            _INFERENCE.reset(tokens[1])
            _GRAD_ENABLED.reset(tokens[0])

    def clone(self):
        return inference_mode(self._mode)
