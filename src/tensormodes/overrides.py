"""The ``__torch_function__`` protocol's public Python API: helpers, modes, introspection.

A *mode* intercepts every public call made while it is active, factory
functions included. Modes form a stack; while a mode's handler runs, the modes
below it are active, so calling ``func(*args, **kwargs)`` inside a handler
passes the call on to the next mode down:

>>> import tensormodes as tm
>>> from tensormodes.overrides import TorchFunctionMode
>>> class Logger(TorchFunctionMode):
...     def __init__(self, name):
...         self.name = name
...     def __torch_function__(self, func, types, args=(), kwargs=None):
...         print(self.name, func.__name__)
...         return func(*args, **(kwargs or {}))
>>> with Logger("outer"), Logger("inner"):
...     _ = tm.zeros(3)
inner zeros
outer zeros

Both styles of the protocol's history work together: the original
compositional ``Mode.push(...)`` / ``push_torch_function_mode`` /
``enable_torch_function_mode`` API (each mode knows its ``inner`` mode), and
modes used directly as context managers.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

from . import _generated
from ._api.codegen import parameter_list
from ._overrides import dispatch as _dispatch
from ._overrides.dispatch import (
    IGNORED,
    NO_REQUIRED_TENSOR,
    NO_WRAP,
    OVERRIDABLE,
    PUBLIC_NAMES,
    RELEVANT_OF,
    _get_torch_function_mode,
    _skip_one_hop_torch_function,
    enter_scope,
    exit_owned,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    owned_scope,
)
from ._tensor_base import PLAIN

__all__ = [
    "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
    "handle_torch_function", "wrap_torch_function", "is_tensor_like", "is_tensor_method_or_property",
    "resolve_name", "get_overridable_functions", "get_testing_overrides", "get_ignored_functions",
    "get_default_nowrap_functions", "TorchFunctionMode", "BaseTorchFunctionMode",
    "push_torch_function_mode", "enable_torch_function_mode", "capture_torch_function_modes",
    "CapturedTorchFunctionModes", "explain", "redispatch_function",
]


# -- helpers for third-party code -------------------------------------------------------

def wrap_torch_function(dispatcher: Callable):
    """Decorator making a Python function take part in the protocol.

    ``dispatcher`` receives the function's arguments and returns the relevant ones.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import wrap_torch_function
    >>> @wrap_torch_function(lambda a, b: (a, b))
    ... def plus(a, b):
    ...     return a + b
    >>> plus(tm.ones(1), 1)
    tensor([2.])
    """

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return decorate


def redispatch_function(func: Callable, types, args: tuple, kwargs: dict | None):
    """Call ``func`` skipping one level of ``__torch_function__`` handling: inside a handler,
    run the function itself without this handler (or any other override) seeing the call
    again; the calls ``func`` makes are dispatched as usual. Results are not converted to a
    subclass.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import redispatch_function
    >>> class Logged(tm.Tensor):
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         print("calling", func.__name__)
    ...         return redispatch_function(func, types, args, kwargs)
    >>> x = tm.tensor([3.0]).as_subclass(Logged)
    >>> y = tm.mul(x, x)
    calling mul
    >>> type(y).__name__, (y + 1).tolist()
    ('Tensor', [10.0])
    """
    return _skip_one_hop_torch_function(func, types, args, kwargs)


def is_tensor_like(inp) -> bool:
    """True for Tensors and for objects whose type defines ``__torch_function__``.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import is_tensor_like
    >>> is_tensor_like(tm.ones(1)), is_tensor_like(1.0)
    (True, False)
    """
    return type(inp) is PLAIN.tensor or hasattr(type(inp), "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """True for Tensor methods, operators and property accessors (whose first argument is
    the tensor), as handed to ``__torch_function__``.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import is_tensor_method_or_property
    >>> is_tensor_method_or_property(tm.Tensor.add), is_tensor_method_or_property(tm.Tensor.__add__)
    (True, True)
    >>> is_tensor_method_or_property(tm.add)
    False
    """
    if func in _tensor_callables() or getattr(func, "__name__", None) in ("__get__", "__set__"):
        return True
    name = _tensor_dunder_name(func)
    return name is not None and name.rpartition(".")[2] not in _NOT_METHODS


# Tensor dunders PyTorch names but does not count as methods taking a tensor first.
_NOT_METHODS = frozenset({"__hash__", "__iter__", "__torch_function__", "__init_subclass__"})


def _tensor_type() -> type:
    return PLAIN.tensor


def _tensor_callables() -> set:
    _dispatch.build_everything()
    return set(OVERRIDABLE.get(_tensor_type(), ()))


def _tensor_dunder_name(func) -> str | None:
    """``'tensormodes.Tensor.__add__'`` for an operator or other dunder of Tensor (operators
    present themselves to handlers as their method, ``Tensor.add``, so they have no entry of
    their own in the table of public names)."""
    name = getattr(func, "__name__", None)
    if not (isinstance(name, str) and name.startswith("__") and name.endswith("__")):
        return None
    tensor_type = _tensor_type()
    if name not in vars(tensor_type) or name in ("__new__", "__init__"):
        return None
    if getattr(tensor_type, name) == func or getattr(func, "is_stub", False):
        return f"tensormodes.Tensor.{name}"
    return None


def resolve_name(f) -> str | None:
    """The dotted public name of an overridable callable (``'tensormodes.Tensor.add'``), or None.

    Operators have their own names (``'tensormodes.Tensor.__add__'``), as in PyTorch.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import resolve_name
    >>> resolve_name(tm.add), resolve_name(tm.Tensor.shape.__get__), resolve_name(tm.Tensor.__add__)
    ('tensormodes.add', 'tensormodes.Tensor.shape.__get__', 'tensormodes.Tensor.__add__')
    """
    name = PUBLIC_NAMES.get(f)
    if name is None:
        name = _tensor_dunder_name(f)
    return name


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """Every public callable that can be overridden, by namespace (module or class).

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import get_overridable_functions
    >>> tm.add in get_overridable_functions()[tm]
    True
    """
    _dispatch.build_everything()
    listed = {namespace: [f for f in funcs if f not in NO_REQUIRED_TENSOR] for namespace, funcs in OVERRIDABLE.items()}
    for namespace, funcs in listed.items():
        # A module's names for another namespace's callables (F.bilinear is tm.bilinear) are listed
        # under it as well, as PyTorch lists them under both.
        if isinstance(namespace, types.ModuleType):
            present = {id(f) for f in funcs}
            for name in sorted(vars(namespace)):
                value = vars(namespace)[name]
                if (not name.startswith("_") and id(value) not in present and value in PUBLIC_NAMES
                        and not isinstance(value, type) and value not in NO_REQUIRED_TENSOR):
                    funcs.append(value)
                    present.add(id(value))
    return listed


def get_ignored_functions() -> set[Callable]:
    """Public callables that tensor-like arguments cannot override: those outside the protocol
    (``get_default_dtype``), and factories, whose required arguments carry no tensor (modes
    still see their calls, and an ``out=`` tensor-like still dispatches, as in PyTorch).

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import get_ignored_functions
    >>> tm.get_default_dtype in get_ignored_functions(), tm.zeros in get_ignored_functions()
    (True, True)
    """
    _dispatch.build_everything()
    return IGNORED | NO_REQUIRED_TENSOR


def get_default_nowrap_functions() -> set[Callable]:
    """Callables whose results the default ``Tensor.__torch_function__`` leaves unconverted.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import get_default_nowrap_functions
    >>> tm.Tensor.grad.__get__ in get_default_nowrap_functions()
    True
    """
    return set(NO_WRAP)


@functools.cache
def _testing_overrides() -> dict:
    overrides = {}
    for funcs in get_overridable_functions().values():
        for func in funcs:
            overrides[func] = _dummy_with_signature_of(func)
    return overrides


def get_testing_overrides() -> dict[Callable, Callable]:
    """A dummy returning -1 with exactly the real signature, for every overridable callable.

    Every call returns the same (cached) dict, as PyTorch's does.

    >>> import inspect, tensormodes as tm
    >>> from tensormodes.overrides import get_testing_overrides
    >>> dummy = get_testing_overrides()[tm.add]
    >>> inspect.signature(dummy), dummy(1, 2)
    (<Signature (input, other, *, alpha=1, out=None)>, -1)
    """
    return _testing_overrides()


def _dummy_with_signature_of(func: Callable) -> Callable:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = _accessor_signature(func)
    names: dict = {}
    params, _ = parameter_list(signature, names)
    name = getattr(func, "__name__", "dummy")
    if not name.isidentifier():
        name = "dummy"
    label = resolve_name(func) or getattr(func, "__qualname__", name)
    return _generated.define(f"def {name}({params}):\n    return -1\n", name, names,
                             qualname=getattr(func, "__qualname__", name), label=f"testing override {label}")


def _accessor_signature(func) -> inspect.Signature:
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    if getattr(func, "__name__", "") == "__set__":
        params.append(P("value", P.POSITIONAL_OR_KEYWORD))
    return inspect.Signature(params)


# -- modes ------------------------------------------------------------------------------

class _TorchFunctionModeMeta(type):
    """Gives every mode's ``__init__`` an implicit keyword ``inner``, stored as
    ``self.inner`` before the user's ``__init__`` runs."""

    def __call__(cls, *args, inner=None, **kwargs):
        if cls.__new__ is object.__new__:
            mode = object.__new__(cls)
        else:
            mode = cls.__new__(cls, *args, **kwargs)
        mode.inner = inner
        if isinstance(mode, cls):
            mode.__init__(*args, **kwargs)
        return mode


def _check_mode_class(cls: type) -> None:
    attr = inspect.getattr_static(cls, "__torch_function__", None)
    if isinstance(attr, classmethod):
        raise RuntimeError(f"{cls.__name__}.__torch_function__ is declared as a classmethod: a classmethod is "
                           "not supported, please make it a plain method")


class TorchFunctionMode(metaclass=_TorchFunctionModeMeta):
    """Base class of modes: override ``__torch_function__(self, func, types, args, kwargs)``.

    While the handler runs, the modes below this one are active, so
    ``func(*args, **kwargs)`` continues with the next mode down (``self.inner``).
    A class attribute ``handled_functions`` (a set of public callables) makes
    the dispatcher skip this mode, at almost no cost, for every other function.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import TorchFunctionMode
    >>> class Count(TorchFunctionMode):
    ...     handled_functions = {tm.add, tm.Tensor.add}
    ...     def __init__(self):
    ...         self.n = 0
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         self.n += 1
    ...         return func(*args, **(kwargs or {}))
    >>> with Count() as counter:
    ...     _ = (tm.ones(2) + 1).sum()
    >>> counter.n
    1
    """

    inner: Any = None
    handled_functions: Any = None
    _discarded_entries = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Handle one call; return ``NotImplemented`` to let tensor overrides try it."""
        raise NotImplementedError(f"{type(self).__name__} does not override __torch_function__")

    def __enter__(self):
        # Everything happens inside the try, the state changes last and in one step, and an
        # exception arriving anywhere (a signal handler's) restores what was read first: a
        # ``with`` whose __enter__ raised never calls __exit__, so nothing may stay behind.
        saved = _dispatch.get_state()
        previous_inner = self.inner
        scoped = self._scoped_context_vars()
        replaced = [(var, var.get()) for var, _ in scoped]
        try:
            _check_mode_class(type(self))
            modes = _dispatch.current_modes(settled=True)
            self.inner = modes[-1] if modes else None

            def on_exit(discarded: bool) -> None:
                self.inner = previous_inner
                for var, value in replaced:
                    var.set(value)
                if discarded:
                    self._discarded_entries += 1

            enter_scope(self, f"mode {self!r}", on_exit, modes=modes + (self,))
            for var, value in scoped:
                var.set(value)
        except BaseException:
            self.inner = previous_inner
            for var, value in replaced:
                var.set(value)
            _dispatch.set_state(saved)
            raise
        return self

    def _scoped_context_vars(self) -> tuple:
        """Pairs ``(ContextVar, value)``: each variable holds ``value`` while this mode's entry
        lasts, and gets back exactly what it held before when the entry's scope ends (on
        exit, or when an enclosing scope's exit discards it). Variables need a default."""
        return ()

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        scope = None
        try:
            scope = owned_scope(self)
            found = exit_owned(self, exc_type, scope)
        except BaseException:
            # Finish an exit that was interrupted (a no-op if it was done), see exit_owned.
            exit_owned(self, exc_type, scope if scope is not None else owned_scope(self))
            raise
        if not found:
            if self._discarded_entries:
                # An outer scope already restored the stack (say, a generator
                # holding this mode was abandoned): nothing left to undo.
                self._discarded_entries -= 1
                return
            raise RuntimeError(f"exiting mode {self!r}, which is not active in this context "
                               "(it was never entered, or was already exited)")

    @classmethod
    def push(cls, *args, **kwargs):
        """``push_torch_function_mode(functools.partial(cls, *args, **kwargs))``."""
        return push_torch_function_mode(functools.partial(cls, *args, **kwargs))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that just calls the function: subclass it to override a few things.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import BaseTorchFunctionMode
    >>> with BaseTorchFunctionMode():
    ...     tm.ones(2) * 2
    tensor([2., 2.])
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Pass the call on unchanged."""
        return func(*args, **(kwargs or {}))


class _ScopedContext(contextlib.ContextDecorator):
    """Base of the function-style context managers below (usable as decorators too).

    ``_enter`` opens one scope owned by the context manager and returns what ``with``
    binds; the exit restores what the matching entry replaced in the same context. So one
    object can be entered again, nested, or by several threads and tasks, and an
    exception arriving anywhere in the enter or exit path leaves nothing behind.
    """

    def _enter(self):
        raise NotImplementedError

    def __enter__(self):
        saved = _dispatch.get_state()
        try:
            result = self._enter()
        except BaseException:
            _dispatch.set_state(saved)
            raise
        return result

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        scope = None
        try:
            scope = owned_scope(self)
            exit_owned(self, exc_type, scope)
        except BaseException:
            # Finish an exit that was interrupted (a no-op if it was done), see exit_owned.
            exit_owned(self, exc_type, scope if scope is not None else owned_scope(self))
            raise


class _PushTorchFunctionMode(_ScopedContext):
    """What ``push_torch_function_mode(ctor)`` returns: each entry makes a mode with ``ctor``."""

    def __init__(self, ctor) -> None:
        self.ctor = ctor

    def _enter(self):
        ctor = self.ctor
        if isinstance(ctor, TorchFunctionMode):
            raise ValueError(f"Expected a TorchFunctionMode constructor function, but got an instance of "
                             f"TorchFunctionMode {ctor!r}. Consider using enable_torch_function_mode(mode) to "
                             f"make an existing mode instance active.")
        modes = _dispatch.current_modes(settled=True)
        mode = ctor(inner=modes[-1] if modes else None)
        if not isinstance(mode, TorchFunctionMode):
            raise ValueError(f"The callable passed to push_torch_function_mode must return a TorchFunctionMode, "
                             f"but it returned {type(mode).__name__}")
        _check_mode_class(type(mode))
        enter_scope(self, f"push_torch_function_mode({mode!r})", modes=modes + (mode,))
        return mode


def push_torch_function_mode(ctor: Callable[..., TorchFunctionMode]):
    """Compositional context manager: ``ctor(inner=<current mode>)`` becomes the active mode.

    >>> import functools, tensormodes as tm
    >>> from tensormodes.overrides import BaseTorchFunctionMode, push_torch_function_mode
    >>> with push_torch_function_mode(BaseTorchFunctionMode) as outer:
    ...     with push_torch_function_mode(BaseTorchFunctionMode) as inner:
    ...         inner.inner is outer
    True
    """
    return _PushTorchFunctionMode(ctor)


def _stack_for(mode) -> tuple:
    """The stack that makes ``mode`` active with its chain of ``inner`` modes.

    A mode that is already on the current stack keeps the modes below it there.
    """
    current = _dispatch.current_modes(settled=True)
    chain: list = []
    seen: set[int] = set()
    link = mode
    while link is not None and id(link) not in seen:
        for i in range(len(current) - 1, -1, -1):
            if current[i] is link:
                return current[:i + 1] + tuple(reversed(chain))
        seen.add(id(link))
        chain.append(link)
        link = link.inner if isinstance(link, TorchFunctionMode) else None
    return tuple(reversed(chain))


def _validate_mode_argument(mode) -> None:
    if mode is None or isinstance(mode, TorchFunctionMode):
        return
    if isinstance(mode, type) and not issubclass(mode, TorchFunctionMode):
        if not hasattr(mode, "__torch_function__"):
            raise ValueError(f"The class passed to enable_torch_function_mode, {mode.__name__}, must define "
                             "__torch_function__")
        return
    raise ValueError(f"expected to get TorchFunctionMode, Tensor-like class, or None as an argument, "
                     f"got {mode!r} instead")


class _EnableTorchFunctionMode(_ScopedContext):
    """What ``enable_torch_function_mode(...)`` returns."""

    def __init__(self, mode, replace, ignore_preexisting: bool) -> None:
        self.mode = mode
        self.replace = replace
        self.ignore_preexisting = ignore_preexisting

    def _enter(self):
        mode = self.mode
        _validate_mode_argument(mode)
        if isinstance(mode, TorchFunctionMode):
            _check_mode_class(type(mode))
        current_modes = _dispatch.current_modes(settled=True)
        current = current_modes[-1] if current_modes else None
        if current is mode:
            modes = current_modes  # already active: the scope only restores the stack on exit
        elif current is not None and current is not self.replace and not self.ignore_preexisting:
            if isinstance(mode, type):
                raise ValueError(f"Attempted to enable_torch_function_mode, but there is already an active mode "
                                 f"{current!r}. To make {mode.__name__} the only active mode, use "
                                 f"enable_torch_function_mode({mode.__name__}, ignore_preexisting=True)")
            raise ValueError(f"Attempted to enable_torch_function_mode, but there is already an active mode "
                             f"{current!r}. This is not supported: to stack modes compositionally, use "
                             f"push_torch_function_mode (or `with mode:`)")
        else:
            modes = (mode,) if isinstance(mode, type) else () if mode is None else _stack_for(mode)
        enter_scope(self, f"enable_torch_function_mode({mode!r})", modes=modes)
        return mode


def enable_torch_function_mode(mode, *, replace=None, ignore_preexisting: bool = False):
    """Non-compositional context manager making ``mode`` the active mode.

    ``mode`` is a ``TorchFunctionMode``, a Tensor-like class (whose
    ``__torch_function__`` then handles every call) or None (no mode).
    Enabling the already active mode does nothing; if another mode is active,
    this raises ``ValueError`` unless that mode is ``replace`` or
    ``ignore_preexisting=True``. Inside a handler,
    ``enable_torch_function_mode(self, replace=self.inner)`` makes calls
    re-enter the current mode.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import BaseTorchFunctionMode, enable_torch_function_mode
    >>> from tensormodes._C import _get_torch_function_mode
    >>> mode = BaseTorchFunctionMode()
    >>> with enable_torch_function_mode(mode):
    ...     _get_torch_function_mode() is mode
    True
    """
    return _EnableTorchFunctionMode(mode, replace, ignore_preexisting)


def _get_current_function_mode():
    """The active (top) mode, or None."""
    return _get_torch_function_mode()


def _get_current_function_mode_stack() -> list:
    """The active modes, bottom first."""
    return list(_dispatch.current_modes())


def _len_torch_function_stack() -> int:
    """How many modes are on the stack."""
    return len(_dispatch.current_modes())


def _push_on_torch_function_stack(mode) -> None:
    """Push ``mode`` on the mode stack, with no scope to restore it (PyTorch's low-level push).

    Pair it with ``_pop_torch_function_stack``; a ``with`` block that encloses both
    restores its own stack on exit whatever was pushed or popped inside. ``None`` is
    ignored, as in PyTorch.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import BaseTorchFunctionMode
    >>> mode = BaseTorchFunctionMode()
    >>> tm._C._push_on_torch_function_stack(mode)
    >>> tm._C._len_torch_function_stack(), tm._C._pop_torch_function_stack() is mode
    (1, True)
    """
    if mode is None:
        return
    if isinstance(mode, TorchFunctionMode):
        _check_mode_class(type(mode))
        mode.inner = _get_torch_function_mode()
    elif not (isinstance(mode, type) and hasattr(mode, "__torch_function__")):
        raise TypeError(f"_push_on_torch_function_stack expects a TorchFunctionMode (or a Tensor-like class), "
                        f"got {type(mode).__name__}")
    _dispatch.set_modes(_dispatch.current_modes() + (mode,))


def _pop_torch_function_stack():
    """Remove the top mode from the stack and return it (PyTorch's low-level pop).

    >>> import tensormodes as tm
    >>> tm._C._pop_torch_function_stack()
    Traceback (most recent call last):
    ...
    RuntimeError: trying to pop from empty mode stack
    """
    modes = _dispatch.current_modes()
    if not modes:
        raise RuntimeError("trying to pop from empty mode stack")
    _dispatch.set_modes(modes[:-1])
    return modes[-1]


def _get_function_stack_at(idx: int):
    """The mode at position ``idx`` of the stack, bottom first.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import BaseTorchFunctionMode
    >>> with BaseTorchFunctionMode() as mode:
    ...     tm._C._get_function_stack_at(0) is mode
    True
    """
    modes = _dispatch.current_modes()
    if idx >= len(modes):
        raise RuntimeError("Tried to get stack at idx that's too big")
    if idx < 0:
        raise RuntimeError(f"Tried to get stack at a negative idx ({idx})")
    return modes[idx]


class _EnableTorchFunctionContext(_ScopedContext):
    """What ``_enable_torch_function()`` returns."""

    def _enter(self) -> None:
        enter_scope(self, "_enable_torch_function()", subclasses_enabled=True, modes_enabled=True)


def _enable_torch_function():
    """Context manager turning modes and subclass overrides back on, inside
    ``DisableTorchFunction`` too; the previous state returns on exit.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import _enable_torch_function
    >>> with tm._C.DisableTorchFunction(), _enable_torch_function():
    ...     tm._C._is_torch_function_all_disabled()
    False
    """
    return _EnableTorchFunctionContext()


# -- carrying the stack elsewhere -------------------------------------------------------

class CapturedTorchFunctionModes:
    """The mode stack and protocol flags of one moment, to re-install elsewhere.

    New threads (and executor workers) start with no mode; enter a capture there
    to run code under the modes of the code that captured it.

    >>> import threading, tensormodes as tm
    >>> from tensormodes.overrides import BaseTorchFunctionMode, capture_torch_function_modes
    >>> from tensormodes.overrides import _len_torch_function_stack
    >>> seen = []
    >>> with BaseTorchFunctionMode():
    ...     captured = capture_torch_function_modes()
    >>> worker = threading.Thread(target=captured.wrap(lambda: seen.append(_len_torch_function_stack())))
    >>> worker.start(); worker.join(); seen
    [1]
    """

    def __init__(self) -> None:
        state = _dispatch.get_state()
        self._modes = () if state is None else state.modes
        self._subclasses_enabled = True if state is None else state.subclasses_enabled
        self._modes_enabled = True if state is None else state.modes_enabled

    @property
    def modes(self) -> list:
        """The captured modes, bottom first."""
        return list(self._modes)

    def __enter__(self):
        saved = _dispatch.get_state()
        try:
            enter_scope(self, "captured modes", modes=self._modes, subclasses_enabled=self._subclasses_enabled,
                        modes_enabled=self._modes_enabled)
        except BaseException:
            _dispatch.set_state(saved)  # see TorchFunctionMode.__enter__
            raise
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        scope = None
        try:
            scope = owned_scope(self)
            found = exit_owned(self, exc_type, scope)
        except BaseException:
            # Finish an exit that was interrupted (a no-op if it was done), see exit_owned.
            exit_owned(self, exc_type, scope if scope is not None else owned_scope(self))
            raise
        if not found:
            raise RuntimeError("exiting captured modes that are not active in this context")

    def run(self, fn: Callable, /, *args, **kwargs):
        """Call ``fn(*args, **kwargs)`` with the captured modes active."""
        with self:
            return fn(*args, **kwargs)

    def wrap(self, fn: Callable) -> Callable:
        """``fn`` made to run with the captured modes active, wherever it is called."""

        @functools.wraps(fn)
        def with_captured_modes(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return with_captured_modes


def capture_torch_function_modes() -> CapturedTorchFunctionModes:
    """Capture the active mode stack (and disabled flags) for use in another thread or callback."""
    return CapturedTorchFunctionModes()


# -- explaining dispatch ----------------------------------------------------------------

def explain(func: Callable, *args, **kwargs) -> str:
    """How a call of ``func`` with these arguments would be dispatched right now.

    Nothing is called: the account lists the active modes (which would handle,
    which skip), the overloaded arguments in the order they would be tried,
    and what runs when everybody declines.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import explain
    >>> print(explain(tm.add, tm.ones(1), 2))
    tensormodes.add(Tensor, int)
      modes: none active
      overloaded arguments: none
      -> the built-in implementation runs (fast path)
    """
    state = _dispatch.get_state()
    relevant_of = RELEVANT_OF.get(func)
    if relevant_of is not None:
        relevant = relevant_of(*args, **kwargs)
    else:
        relevant = tuple(args) + tuple(kwargs.values())
    overloaded = _dispatch.overloaded_args(relevant, state)
    name = resolve_name(func) or getattr(func, "__qualname__", repr(func))
    shown = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    lines = [f"{name}({shown})"]
    steps = []
    modes = () if state is None else state.modes
    if not modes:
        lines.append("  modes: none active")
    elif not state.modes_enabled:
        lines.append(f"  modes: {len(modes)} on the stack, disabled by DisableTorchFunction")
    else:
        lines.append("  modes, top first:")
        index = state.handler_index(func)
        for i in range(len(modes) - 1, -1, -1):
            mode = modes[i]
            if i > index:
                verdict = "skips this function (not in its handled_functions)"
            elif i == index:
                verdict = "handles it first (the modes below it stay active during its handler)"
                steps.append(f"{_describe(mode)}.__torch_function__ is called with the {i} mode(s) below it active")
            else:
                verdict = "sees it only if the handler above passes it on"
            lines.append(f"    {_describe(mode)}: {verdict}")
    if state is not None and not state.subclasses_enabled:
        lines.append("  overloaded arguments: ignored (DisableTorchFunctionSubclass)")
    elif overloaded:
        lines.append("  overloaded arguments, in the order they are tried: "
                     + ", ".join(type(a).__name__ for a in overloaded))
        for a in overloaded:
            steps.append(f"{type(a).__name__}.__torch_function__ is tried")
    else:
        lines.append("  overloaded arguments: none")
    if steps:
        for n, step in enumerate(steps, 1):
            suffix = "; if it returns NotImplemented:" if n < len(steps) else ""
            lines.append(f"  {n}. {step}{suffix}")
        lines.append("  -> if every handler returns NotImplemented: TypeError (no implementation found)")
    elif state is None or (not overloaded and state.fast_skip is not None and func not in state.fast_skip):
        lines.append("  -> the built-in implementation runs (fast path)")
    else:
        lines.append("  -> the built-in implementation runs")
    return "\n".join(lines)


def _describe(mode) -> str:
    if isinstance(mode, type):
        return f"{mode.__name__} (a Tensor-like class enabled as a mode)"
    return repr(mode)

