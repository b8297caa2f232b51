"""Module calls as nesting levels of an observing mode.

A module call is not a ``__torch_function__`` call, so a mode never sees ``model(x)`` itself,
only the calls its ``forward`` makes. :class:`ModuleCalls` brings module calls in through
``nn.Module``'s global forward hooks, the ones ``FlopCounterMode`` uses: registered while the
mode is entered, they report each module call's start and end, in order, so that a mode can
nest the calls made inside ``model(x)`` under it. :class:`ModuleNames` names modules by path
as PyTorch's module tracker (and ``FlopCounterMode``) does: ``MLP``, ``MLP.fc1``.

>>> import tensormodes as tm
>>> from tensormodes.modes.module_calls import ModuleCalls
>>> seen = []
>>> calls = ModuleCalls(lambda m, name, args: seen.append(f"enter {name}"),
...                     lambda m, name, args, out, error: seen.append(f"leave {name}"))
>>> calls.install()
>>> model = tm.nn.Sequential(tm.nn.Linear(2, 2), tm.nn.ReLU())
>>> _ = model(tm.ones(1, 2)); calls.remove()
>>> print(*seen, sep=chr(10))
enter Sequential
enter Sequential.0
leave Sequential.0
enter Sequential.1
leave Sequential.1
leave Sequential
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from ..nn.modules import module as _module_api
from .observing import ModuleNames

# ModuleNames: from observing, shared with the FLOP counter
__all__ = ["ModuleCalls", "ModuleNames", "NestsModuleCalls"]


class _Open(threading.local):
    """The module calls under way in this thread (innermost last)."""

    def __init__(self) -> None:
        self.modules: list[tuple[Any, BaseException | None]] = []


class ModuleCalls:
    """Reports module calls to an observing mode while installed: ``enter(module, name, args)``
    before each module's ``forward`` (before the module's own pre-hooks) and ``leave(module,
    name, args, output, error)`` after it, also when it raised (``error`` is then the exception
    and ``output`` None). ``name`` is the module's path (:class:`ModuleNames`). Every ``enter``
    gets its ``leave``, innermost first, per thread.
    """

    def __init__(self, enter: Callable[[Any, str, tuple], None],
                 leave: Callable[[Any, str, tuple, Any, BaseException | None], None]) -> None:
        self.enter = enter
        self.leave = leave
        self.names = ModuleNames()
        self._open = _Open()
        self._handles: list = []

    def install(self) -> None:
        """Register the global hooks (once; a second call does nothing)."""
        if not self._handles:
            self._handles = [_module_api.register_module_forward_pre_hook(self._pre_hook),
                             _module_api.register_module_forward_hook(self._post_hook, always_call=True)]

    def remove(self) -> None:
        """Remove the hooks; calls still open are forgotten."""
        handles, self._handles = self._handles, []
        for handle in handles:
            handle.remove()
        self._open.modules = []

    def _pre_hook(self, module: Any, args: tuple) -> None:
        # with the exception being handled around the call, if any (a call made in an except clause)
        self._open.modules.append((module, sys.exc_info()[1]))
        self.enter(module, self.names(module), args)

    def _post_hook(self, module: Any, args: tuple, output: Any) -> None:
        open_modules = self._open.modules
        # an always-called hook also runs when a pre-hook before ours raised: nothing to close
        if not open_modules or open_modules[-1][0] is not module:
            return
        _, ambient = open_modules.pop()
        # when forward raised, this runs inside the except clause of the module call: a handled
        # exception other than the one around the call is the module's error
        error = sys.exc_info()[1]
        if error is ambient:
            error = None
        self.leave(module, self.names(module), args, None if error is not None else output, error)


class NestsModuleCalls:
    """Mixin for an observing mode that nests module calls: the mode's ``_modules``
    (:class:`ModuleCalls`) are installed on the first entry and removed on the last exit
    (a mode may be entered again inside itself), where ``_last_exit()`` lets the mode tidy up.
    It goes before the mode class in the bases, so that its ``__enter__``/``__exit__`` wrap the
    mode stack's.

    >>> from tensormodes.modes import TimingMode
    >>> timer = TimingMode()
    >>> with timer:
    ...     with timer:
    ...         nested = timer._entries
    >>> nested, timer._entries, timer._modules._handles
    (2, 0, [])
    """

    _modules: ModuleCalls
    _entries: int = 0

    def _first_enter(self) -> None:
        """Runs before the first entry pushes the mode (files are opened here)."""

    def _last_exit(self) -> None:
        """Runs after the last exit popped the mode and removed the module hooks."""

    def __enter__(self):
        if self._entries == 0:
            self._first_enter()
            self._modules.install()
        self._entries += 1
        try:
            return super().__enter__()
        except BaseException:
            self._left()
            raise

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        try:
            super().__exit__(exc_type, exc_value, traceback)
        finally:
            self._left()

    def _left(self) -> None:
        self._entries -= 1
        if self._entries == 0:
            self._modules.remove()
            self._last_exit()
