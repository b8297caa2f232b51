"""The override layer's core: dispatch state and the ``__torch_function__`` protocol.

This is what PyTorch keeps in C++. The whole dynamic state of the protocol is one
immutable ``_State`` value in one ``ContextVar`` (``None`` when idle: no mode,
nothing disabled), so the hot path costs a single ``ContextVar.get()`` and a
thread or asyncio task gets its own stack for free.

Scoped changes (entering a mode, disabling overrides ...) go through
``enter_scope`` / ``exit_scope``: each scope remembers the state it replaced and
restores exactly that state when it exits, whatever happened inside, and a
scope exited while scopes entered after it are still live raises instead of
silently popping them.

Public names are re-exported by ``tensormodes._C`` and ``tensormodes.overrides``.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from inspect import getattr_static

from .. import _device
from .._dispatch import declared_ops, python_dispatch
from .._state import STATE
from .._tensor_base import PLAIN, TensorBase

__all__ = [
    "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
    "handle_torch_function", "dispatch", "get_state",
]


class _State:
    """One immutable snapshot of the protocol's dynamic state.

    ``modes`` is the mode stack, bottom first; ``scopes`` the live scope records
    (see ``enter_scope``). ``fast_skip`` lets generated wrappers take the fast path
    under modes that declared ``handled_functions``: it is the union of those
    declarations when every mode declares one, else ``None``.
    """

    __slots__ = ("modes", "subclasses_enabled", "modes_enabled", "scopes", "handled", "fast_skip",
                 "modes_active", "top_handler", "handler", "handler_below", "_below", "_without_subclasses",
                 "dispatch_modes", "dispatch_enabled", "dispatch_active", "_dispatch_popped", "fast_skip_above",
                 "skip_next", "dispatch_lane", "_without_torch_function", "dispatch_handled",
                 "dispatch_reaching", "dispatch_sees_autograd", "dispatch_top_handled", "dispatch_top",
                 "kernel_next", "inline_top")

    def __init__(self, modes: tuple, subclasses_enabled: bool, modes_enabled: bool, scopes: tuple,
                 dispatch_modes: tuple = (), dispatch_enabled: bool = True, skip_next: bool = False) -> None:
        self.modes = modes
        # PyTorch's skip-next flag (``redispatch_function``): the next public call skips its
        # overrides, modes and tensor-likes alike, and clears the flag. While it is set, no
        # fast path and no inline handler is taken, so that the call reaches ``dispatch``.
        self.skip_next = skip_next
        self.subclasses_enabled = subclasses_enabled
        self.modes_enabled = modes_enabled
        self.modes_active = bool(modes) and modes_enabled
        self.scopes = scopes
        # The dispatch level's modes (``TorchDispatchMode``, bottom first) share this state, so
        # that one read tells generated code whether anything below autograd listens, and a
        # scope restores both stacks at once (see ``_dispatch.python_dispatch``).
        self.dispatch_modes = dispatch_modes
        self.dispatch_enabled = dispatch_enabled
        self.dispatch_active = bool(dispatch_modes) and dispatch_enabled
        # the top dispatch mode while one is active (else None); ``kernel_next``: no mode is active and
        # the dispatch level is on — an aten call on plain tensors goes to the kernel (``OpOverload.__call__``)
        self.dispatch_top = dispatch_modes[-1] if self.dispatch_active else None
        self.kernel_next = not self.dispatch_active and dispatch_enabled
        # A dispatch mode listens and no ``__torch_function__`` mode does: generated ops hand plain
        # arguments straight to their implementations (what ``dispatch`` would do, without it).
        self.dispatch_lane = self.dispatch_active and not self.modes_active and not skip_next
        self._dispatch_popped: _State | None | bool = False  # not computed yet
        self._below: dict[int, _State | None] = {}
        self._without_subclasses: _State | None = None
        self._without_torch_function: _State | None = None
        self.handled = tuple(_declared_functions(m) for m in modes)
        # With no declarations the top mode handles everything: generated wrappers
        # call it directly, with the state below it prepared once, here.
        self.top_handler = self.handler = self.handler_below = None
        if self.modes_active and not skip_next and all(h is None for h in self.handled):
            self.top_handler = len(modes) - 1
            self.handler = modes[-1]
            below = modes[:-1]
            # Below the last mode, nothing overrides: the idle state (None) lets the
            # handler's own calls take the fast path. (Scopes are for exits, which
            # happen after the handler returns and the full state is back.)
            plain = not below and subclasses_enabled and not dispatch_modes and dispatch_enabled
            self.handler_below = None if plain else self.replace(modes=below)
        if skip_next:
            self.fast_skip_above = None
        elif not modes_enabled:
            self.fast_skip_above = frozenset()
        elif all(h is not None for h in self.handled):
            self.fast_skip_above = frozenset().union(*self.handled)
        else:
            self.fast_skip_above = None
        # ``fast_skip_above`` is for callables that run no kernel themselves (properties, the
        # Tensor's own methods): only ``__torch_function__`` modes care about them. Ops must
        # reach the dispatch level's modes: no fast path for them while one is active — but for
        # those no op of which a dispatch mode declares it handles (``handled_ops``), when each does.
        self.fast_skip = None if self.dispatch_active else self.fast_skip_above
        # per dispatch mode, bottom first: the packets it declared (``handled_ops``), None for all;
        # ``dispatch_reaching``: when each declared, which ops may reach one (else None: all may)
        self.dispatch_handled = tuple(declared_ops.of(m) for m in dispatch_modes) if self.dispatch_active else ()
        self.dispatch_top_handled = self.dispatch_handled[-1] if self.dispatch_handled else None
        # the top dispatch mode when it declared no ``handled_ops`` (generated lanes call it themselves)
        self.inline_top = self.dispatch_top if self.dispatch_top_handled is None else None
        self.dispatch_reaching = None
        # whether autograd's own ops and gradient formulas take PyTorch's forms (see the autograd
        # layer's ``below_listens``): not for modes that declared only products and convolutions,
        # which no such choice involves (those forms differ in views, sums and pointwise ops only)
        self.dispatch_sees_autograd = self.dispatch_active
        if self.dispatch_handled and all(h is not None for h in self.dispatch_handled):
            packets = frozenset().union(*self.dispatch_handled)
            reaching = self.dispatch_reaching = declared_ops.reaching(packets)
            self.dispatch_sees_autograd = any(str(packet) not in declared_ops.FORM_FREE for packet in packets)
            if self.fast_skip_above is not None:
                self.fast_skip = reaching.fast_skip(self.fast_skip_above, IMPLS)

    def replace(self, **changes) -> _State | None:
        fields = {"modes": self.modes, "subclasses_enabled": self.subclasses_enabled,
                  "modes_enabled": self.modes_enabled, "scopes": self.scopes,
                  "dispatch_modes": self.dispatch_modes, "dispatch_enabled": self.dispatch_enabled,
                  "skip_next": self.skip_next}
        fields.update(changes)
        return make_state(**fields)

    def dispatch_popped(self) -> _State | None:
        """This state with its top dispatch mode popped (cached: a dispatch handler needs it
        per call)."""
        popped = self._dispatch_popped
        if popped is False:
            popped = self._dispatch_popped = self.replace(dispatch_modes=self.dispatch_modes[:-1])
        return popped

    def below(self, index: int) -> _State | None:
        """This state with only the modes under ``modes[index]`` (cached: handlers hit it per call)."""
        below = self._below
        if index not in below:
            below[index] = self.replace(modes=self.modes[:index])
        return below[index]

    def handler_index(self, func) -> int:
        """Index of the top-most mode that handles ``func`` (-1: every mode skips it)."""
        handled = self.handled
        for i in range(len(handled) - 1, -1, -1):
            h = handled[i]
            if h is None or func in h:
                return i
        return -1


def _declared_functions(mode) -> frozenset | None:
    declared = getattr(mode, "handled_functions", None)
    return None if declared is None else frozenset(declared)


def make_state(modes: tuple = (), subclasses_enabled: bool = True, modes_enabled: bool = True,
               scopes: tuple = (), dispatch_modes: tuple = (), dispatch_enabled: bool = True,
               skip_next: bool = False) -> _State | None:
    """Build a state; the idle state is always represented by ``None``."""
    if (not modes and subclasses_enabled and modes_enabled and not scopes and not dispatch_modes and dispatch_enabled
            and not skip_next):
        return None
    return _State(modes, subclasses_enabled, modes_enabled, scopes, dispatch_modes, dispatch_enabled, skip_next)


_STATE = STATE
get_state = _STATE.get
set_state = _STATE.set
# Every temporary change of state is made inside a ``try`` (an exception arriving right
# after the set, a signal handler's, cannot leave it behind), as ``token = set_state(new)``;
# the ``finally`` restores with the token if it was stored, else by value:
#     if token is None: set_state(state) else: reset_state(token)
# written inline (a helper's call would be one more point where a signal handler runs).
# Resetting with the token is cheaper than a second set, which makes a new token.
reset_state = _STATE.reset


def without_subclasses(state: _State | None) -> _State:
    """``state`` with subclass handling disabled (cached: every default
    ``Tensor.__torch_function__`` call needs it)."""
    if state is None:
        return _SUBCLASSES_DISABLED
    cached = state._without_subclasses
    if cached is None:
        cached = state._without_subclasses = state.replace(subclasses_enabled=False)
    return cached


def without_torch_function(state: _State | None) -> _State:
    """``state`` with ``__torch_function__`` modes and subclasses switched off, the dispatch
    level's part kept (cached: a composite's inner calls run in it, see
    ``_api.dispatch_level``)."""
    if state is None:
        return _TORCH_FUNCTION_DISABLED
    cached = state._without_torch_function
    if cached is None:
        cached = state._without_torch_function = state.replace(modes_enabled=False, subclasses_enabled=False)
    return cached


def current_modes(settled: bool = False) -> tuple:
    """The mode stack, bottom first; ``settled``: as the next scope entered here will see it
    (without the ended scopes on top, see ``_unwound``)."""
    state = _unwound(_STATE.get()) if settled else _STATE.get()
    return () if state is None else state.modes


def current_dispatch_modes(settled: bool = False) -> tuple:
    """The dispatch level's mode stack (``TorchDispatchMode``), bottom first; ``settled`` as
    for ``current_modes``."""
    state = _unwound(_STATE.get()) if settled else _STATE.get()
    return () if state is None else state.dispatch_modes


# -- scopes: every scoped change of state ---------------------------------------------
#
# Every ``with`` block that changes the state opens a *scope*: a record, kept in the state
# itself, of the state it replaced. The rules that keep the stack intact:
#
# * Entering installs the new state with one ``ContextVar.set``; the callers wrap it so
#   that an exception arriving anywhere in the enter path (a signal handler raising
#   KeyboardInterrupt between two bytecodes) restores the state read before, by value.
# * Exiting restores, with one ``ContextVar.set``, the state the scope replaced (by value,
#   never by popping), so whatever was pushed or popped inside is undone too. The callers
#   run an exit that was interrupted once more: finding the scope gone, it does nothing.
# * A scope is found by its owner in *this* context's state, so one context manager
#   object may be entered by several threads and tasks, or nested in itself.
# * A ``with`` block in a generator is exited when the generator finishes, is closed or is
#   garbage-collected -- possibly while its caller is inside blocks entered after it, or
#   from another context or thread. Such an exit must not remove modes it did not push,
#   so it only marks its scope *ended*; an ended scope is unwound as soon as it is on
#   top again (when the blocks entered after it exit, or at the next scope change in the
#   context that holds it). A block of ordinary code exited out of order is a bug in the
#   caller: that raises (see ``exit_scope``).

_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_CONTEXT_MANAGER_METHODS = frozenset({"__enter__", "__exit__", "__init__", "__del__", "_release"})
# id(generator frame) -> the live scopes its with blocks entered: an exit running in another
# context (a generator finalized in another thread, an async generator closed by the event
# loop's finalizer in a new task) marks its scope ended through this.
_GENERATOR_SCOPES: dict[int, list] = {}


class Scope:
    """Record of one entered scope: what it replaced and who owns it."""

    __slots__ = ("saved", "owner", "label", "on_exit", "guard", "frame", "ended", "closed")

    def __init__(self, saved, owner, label: str, on_exit=None, guard: bool = False, frame=None) -> None:
        self.saved = saved
        self.owner = owner
        self.label = label
        self.on_exit = on_exit
        # A guard's scope (``_EnableTorchFunction()``) lasts as long as an object does:
        # an enclosing scope may exit before it, silently discarding it.
        self.guard = guard
        # The generator (or coroutine) frame whose with block entered it, else None. Held
        # strongly so that its id, the key of _GENERATOR_SCOPES, cannot be reused meanwhile;
        # a frame object does not keep its generator alive.
        self.frame = frame
        self.ended = False   # its block is over; unwound when it is on top
        self.closed = False  # on_exit has run


def _with_frame():
    """The frame running the ``with`` statement that entered or exits a scope (the first
    frame up the stack outside tensormodes and outside context-manager methods), if it is a
    generator or coroutine frame; else None."""
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_name in _CONTEXT_MANAGER_METHODS
                                 or frame.f_globals.get("__name__", "").startswith("tensormodes.")):
        frame = frame.f_back
    return frame if frame is not None and frame.f_code.co_flags & _GENERATOR_FLAGS else None


def _close(scope: Scope, discarded: bool) -> None:
    """Run ``scope``'s exit callback (``discarded``: an enclosing scope's exit removed it).

    Once it has run to the end: an exit interrupted inside the callback runs it again.
    """
    if scope.closed:
        return
    _forget_generator_scope(scope)
    if scope.on_exit is not None:
        scope.on_exit(discarded)
    scope.closed = True


def _forget_generator_scope(scope: Scope) -> None:
    if scope.frame is not None:
        scopes = _GENERATOR_SCOPES.get(id(scope.frame), [])
        try:
            scopes.remove(scope)
        except ValueError:  # already forgotten (by another thread, or an exit that was rerun)
            return
        if not scopes:
            _GENERATOR_SCOPES.pop(id(scope.frame), None)


def _unwound(state: _State | None) -> _State | None:
    """``state`` without the ended scopes on its top (each restored to what it replaced)."""
    while state is not None and state.scopes and state.scopes[-1].ended:
        scope = state.scopes[-1]
        _close(scope, False)
        state = scope.saved
    return state


def enter_scope(owner, label: str, on_exit=None, guard: bool = False, **changes) -> Scope:
    """Install the current state with ``changes`` applied, inside a new live scope.

    The state changes in one ``ContextVar.set``, the last step. A caller that must leave
    nothing behind when an exception arrives mid-way reads the state first and restores
    it by value in an ``except BaseException`` around this call (see ``TorchFunctionMode.__enter__``).
    """
    saved = _unwound(_STATE.get())
    frame = _with_frame()
    scope = Scope(saved, owner, label, on_exit, guard, frame)
    base = saved if saved is not None else _IDLE
    _STATE.set(base.replace(scopes=base.scopes + (scope,), **changes))
    if frame is not None:
        _GENERATOR_SCOPES.setdefault(id(frame), []).append(scope)
    return scope


def exit_scope(scope: Scope, closing: bool = False) -> None:
    """Restore the state ``scope`` replaced; raise if later scopes were left open.

    ``closing``: the exit comes from a generator being closed (``GeneratorExit``). The
    exit of a generator's block while blocks entered after it are still open marks the
    scope ended instead (see the rules above). A scope that an outer scope already
    discarded exits silently: its state is long gone.
    """
    state = _STATE.get()
    live = () if state is None else state.scopes
    if live and live[-1] is scope:  # the innermost scope: the common case
        _close(scope, False)
        _STATE.set(_unwound(scope.saved))
        return
    position = next((i for i in range(len(live) - 1, -1, -1) if live[i] is scope), None)
    if position is None:
        return
    above = live[position + 1:]
    left_open = [s for s in above if not (s.guard or s.ended)]
    if left_open and (closing or scope.frame is not None):
        scope.ended = True
        return
    # Callbacks first and idempotent, the state last and in one step: an exit interrupted
    # anywhere and run again ends in the same place.
    for closed in reversed(above):
        _close(closed, not closed.ended)
    target = _unwound(scope.saved)
    _close(scope, False)
    _STATE.set(target)
    if left_open:
        names = ", ".join(s.label for s in reversed(left_open))
        raise RuntimeError(
            f"exiting {scope.label} while {names} entered after it "
            f"{'is' if len(left_open) == 1 else 'are'} still active; scopes must be exited in the "
            f"reverse order they were entered. The mode stack was restored to what it was when "
            f"{scope.label} was entered.")


def owned_scope(owner) -> Scope | None:
    """The innermost live scope ``owner`` entered in this context (ended ones aside), if any."""
    state = _STATE.get()
    if state is not None:
        live = state.scopes
        for i in range(len(live) - 1, -1, -1):
            scope = live[i]
            if scope.owner is owner and not scope.ended:
                return scope
    return None


def exit_owned(owner, exc_type, scope: Scope | None) -> bool:
    """Exit ``scope``, the one ``owned_scope(owner)`` found; False if there was none and
    nothing was done.

    With no scope here, a generator's block exited in another context than the one that
    entered it marks its scope ended there (never touching this context's state); when the
    generator is being closed (``exc_type`` is ``GeneratorExit``) a missing scope is not an
    error either.

    A context manager's ``__exit__`` finds the scope first, then exits it, and on any
    exception runs ``exit_owned`` once more with the scope it found (or finds it again if
    the exception came before it had it): exiting a scope that is no longer live does
    nothing, so an exit interrupted anywhere is completed, and never pops a second entry of
    the same owner. Each ``__exit__`` writes these few lines out itself rather than calling a
    shared helper: the helper's own first instruction would be one more place where an
    interrupt escapes before any ``try`` guards it.
    """
    closing = exc_type is GeneratorExit
    if scope is not None:
        exit_scope(scope, closing)
        return True
    frame = _with_frame()
    if frame is not None:
        for other in reversed(_GENERATOR_SCOPES.get(id(frame), ())):
            if other.owner is owner and not other.ended:
                other.ended = True
                _forget_generator_scope(other)
                return True
    return closing


# -- which objects take part ---------------------------------------------------------

def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """Sentinel: a class that sets ``__torch_function__`` to this opts out of the protocol."""
    raise RuntimeError("_disabled_torch_function_impl is a marker and must never be called")


# Exact types that never take part, for a quick first test: common argument types, and the
# plain tensor classes once met (see _participates).
_NEVER_PARTICIPATE: set[type] = {int, float, bool, complex, str, type(None), slice, type(Ellipsis)}


def _participates(cls: type) -> bool:
    known = _PARTICIPATION.get(cls)
    if known is not None:
        return known
    if cls is PLAIN.tensor or cls is PLAIN.meta_tensor:
        _NEVER_PARTICIPATE.add(cls)
        return False
    tf = getattr(cls, "__torch_function__", None)
    answer = tf is not None and tf is not _disabled_torch_function_impl
    # Remembered per class: looking the attribute up binds a classmethod on every call.
    # A class that gains or loses __torch_function__ later must call forget_participation.
    _PARTICIPATION[cls] = answer
    return answer


_PARTICIPATION: dict[type, bool] = {}


def forget_participation(cls: type) -> None:
    """Re-read ``cls.__torch_function__`` next time (after replacing it on the class)."""
    _PARTICIPATION.pop(cls, None)
    _PLAIN_METHOD_TYPES.pop(cls, None)


def run_without_subclasses(func, args: tuple, kwargs: dict):
    """``func(*args, **kwargs)`` with subclass handling disabled (the default
    ``Tensor.__torch_function__``). With no mode active nobody could see the
    call again, so the implementation runs directly."""
    state = _STATE.get()
    if state is None:
        impl = IMPLS.get(func)
        inside = _SUBCLASSES_DISABLED
    else:
        impl = None if state.modes_active else IMPLS.get(func)
        inside = without_subclasses(state)
    token = None
    try:
        token = _STATE.set(inside)  # inside the try: see reset_state
        return impl(*args, **kwargs) if impl is not None else func(*args, **kwargs)
    finally:
        if token is None:
            _STATE.set(state)
        else:
            _STATE.reset(token)


def overloaded_args(relevant_args, state) -> list:
    """The arguments whose ``__torch_function__`` must be tried, in PyTorch's order.

    The first instance of each participating type, left to right, except that a
    subclass goes before its first superclass already in the list.
    """
    if state is not None and not state.subclasses_enabled:
        return []
    found: list = []
    seen: list[type] = []
    for arg in relevant_args:
        cls = type(arg)
        if cls in _NEVER_PARTICIPATE or cls in seen or not _participates(cls):
            continue
        seen.append(cls)
        python_dispatch.add_overloaded(found, arg)
    return found


def has_torch_function(relevant_args) -> bool:
    """True if a mode is active or an element of ``relevant_args`` overrides the API.

    Looks one level into ``relevant_args`` (no recursion), like PyTorch.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import has_torch_function
    >>> has_torch_function((tm.ones(1), 2))
    False
    """
    if type(relevant_args) is not tuple and type(relevant_args) is not list:
        if not hasattr(relevant_args, "__iter__") and not hasattr(relevant_args, "__getitem__"):
            raise TypeError("expected a sequence")
        relevant_args = tuple(relevant_args)
    state = _STATE.get()
    if state is not None:
        if state.skip_next:
            # Consumed here, as by a public call: a function that asks this (and would hand its
            # call to handle_torch_function) runs once without overrides (redispatch_function).
            _STATE.set(state.replace(skip_next=False))
            return False
        if state.modes and state.modes_enabled and relevant_args:
            return True
        if not state.subclasses_enabled:
            return False
    for arg in relevant_args:
        cls = type(arg)
        if cls not in _NEVER_PARTICIPATE and _participates(cls):
            return True
    return False


def has_torch_function_unary(arg) -> bool:
    """``has_torch_function((arg,))``, spelled cheaply."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    """``has_torch_function(args)``, spelled cheaply."""
    return has_torch_function(args)


# -- handling a call ------------------------------------------------------------------

def resolve_public_name(func) -> str:
    name = PUBLIC_NAMES.get(func)
    if name is not None:
        return name
    module = getattr(func, "__module__", None) or ""
    return f"{module}.{getattr(func, '__qualname__', getattr(func, '__name__', repr(func)))}".lstrip(".")


# func -> dotted public name; filled by the layers that create public callables.
PUBLIC_NAMES: dict = {}

_PLAIN_METHOD_TYPES: dict[type, bool] = {}


def _warn_if_plain_method(cls: type) -> None:
    plain = _PLAIN_METHOD_TYPES.get(cls)
    if plain is None:
        attr = getattr_static(cls, "__torch_function__", None)
        plain = _PLAIN_METHOD_TYPES[cls] = not isinstance(attr, (classmethod, staticmethod))
    if plain is True:
        warnings.warn(
            f"Defining __torch_function__ on {cls.__qualname__} as a plain method is deprecated and "
            "will be an error in the future; please define it as a classmethod.",
            DeprecationWarning, stacklevel=4)


def _try_overloaded(func, overloaded, types, args, kwargs):
    for arg in overloaded:
        if _PLAIN_METHOD_TYPES.get(type(arg)) is not False:
            _warn_if_plain_method(type(arg))
        result = arg.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    return NotImplemented


def declined(func, mode) -> TypeError:
    """The error for a mode that returned NotImplemented on plain arguments."""
    return _no_implementation(func, (), mode)


def _no_implementation(func, overloaded, declined_mode) -> TypeError:
    msg = (f"no implementation found for '{resolve_public_name(func)}' on types that implement "
           f"__torch_function__: {[type(a) for a in overloaded]}")
    if declined_mode is not None:
        msg += f" nor in mode {declined_mode!r}"
    return TypeError(msg)


def dispatch(func, args: tuple, kwargs: dict, relevant: tuple, impl, leaf: bool):
    """Slow path of every generated public callable.

    ``relevant`` holds the arguments that may carry overrides; ``impl``
    computes the result when nobody overrides. ``leaf`` says that ``impl``
    makes no public API calls, so modes that skip ``func`` need not be popped
    around it. Every pass-through mode costs one trip through here, so the
    common case (plain arguments, no declared functions) is kept inline.
    """
    state = _STATE.get()
    if state is not None and state.skip_next:
        return _skipping(state, args, kwargs, impl)
    overloaded = ()
    for arg in relevant:
        if type(arg) not in _NEVER_PARTICIPATE:
            overloaded = overloaded_args(relevant, state)
            break
    declined_mode = None
    if not overloaded and (state is None or not state.modes_active):
        return impl(*args, **kwargs)
    if state is not None and state.modes_active:
        index = state.top_handler
        if index is None:
            index = state.handler_index(func)
        if index >= 0:
            mode = state.modes[index]
            below = state._below
            below = below[index] if index in below else state.below(index)
            token = None
            try:
                token = _STATE.set(below)  # inside the try: see reset_state
                result = mode.__torch_function__(func, tuple([type(a) for a in overloaded]), args, kwargs)
            finally:
                if token is None:
                    _STATE.set(state)
                else:
                    _STATE.reset(token)
            if result is not NotImplemented:
                return result
            declined_mode = mode
        elif not leaf:
            # Every mode skips func: behave as if each had passed the call through.
            below = state.below(0)
            token = None
            try:
                token = _STATE.set(below)  # inside the try: see reset_state
                return impl(*args, **kwargs)
            finally:
                if token is None:
                    _STATE.set(state)
                else:
                    _STATE.reset(token)
    if overloaded:
        types = (type(overloaded[0]),) if len(overloaded) == 1 else tuple([type(a) for a in overloaded])
        result = _try_overloaded(func, overloaded, types, args, kwargs)
        if result is not NotImplemented:
            return result
        raise _no_implementation(func, overloaded, declined_mode)
    if declined_mode is not None:
        raise _no_implementation(func, overloaded, declined_mode)
    return impl(*args, **kwargs)


# -- tensor-likes where no tensor goes ----------------------------------------------------
#
# PyTorch's argument parser collects an object whose type defines ``__torch_function__``
# wherever it finds one: as any argument (an int, a dtype, a string ...), as an element of an
# int or float list, inside the sequences of an index tuple. Generated callables test only
# their tensor parameters on the fast path (the hot path stays a few type tests); such an
# object in another parameter makes the kernel fail, and only then are the other arguments
# scanned: the failure becomes a call of the tensor-like's ``__torch_function__``.

_HANDLED_MARK = "_tensormodes_tensor_like_dispatched"


def tensor_likes_in(error: BaseException, values: tuple) -> tuple:
    """The objects overriding the API among ``values`` (the non-tensor arguments of a call whose
    fast path raised ``error``), one level into lists and tuples, in order; () if none, if the
    overrides already ran for ``error`` (a call nested in a composite), or if subclass handling
    is disabled."""
    if getattr(error, _HANDLED_MARK, False):
        return ()
    state = _STATE.get()
    if state is not None and not state.subclasses_enabled:
        return ()
    found = []
    for value in values:
        cls = type(value)
        if cls is list or cls is tuple:
            found.extend(item for item in value if _overrides_as_argument(item))
        elif _overrides_as_argument(value):
            found.append(value)
    return tuple(found)


def _overrides_as_argument(value) -> bool:
    # Tensors are not collected where no tensor goes (PyTorch's parser skips them too).
    cls = type(value)
    return cls not in _NEVER_PARTICIPATE and not isinstance(value, TensorBase) and _participates(cls)


def dispatch_tensor_likes(func, args: tuple, kwargs: dict, found: tuple, impl, leaf: bool):
    """``dispatch`` with the tensor-likes ``tensor_likes_in`` found as the relevant arguments.
    An exception leaving it is marked, so that the calls it is nested in do not run the same
    overrides again."""
    try:
        return dispatch(func, args, kwargs, found, impl, leaf)
    except Exception as error:
        try:
            setattr(error, _HANDLED_MARK, True)
        except AttributeError:  # an exception class with __slots__ (unmarked: at worst retried)
            pass
        raise


def _skipping(state: _State, args: tuple, kwargs: dict, impl):
    """A call that the skip-next flag makes skip its overrides: the flag is consumed, and the
    implementation runs as PyTorch's native function would, making no call anybody sees."""
    state = state.replace(skip_next=False)
    _STATE.set(state)
    token = None
    try:
        token = _STATE.set(without_torch_function(state))
        return impl(*args, **kwargs)
    finally:
        if token is None:
            _STATE.set(state)
        else:
            _STATE.reset(token)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Run the overrides for a call of ``public_api``: the active mode first, then the
    ``__torch_function__`` of each overloaded argument in order.

    Call it when ``has_torch_function(relevant_args)`` is true; it returns the first
    result that is not ``NotImplemented`` and raises ``TypeError`` if all decline.

    >>> import tensormodes as tm
    >>> from tensormodes.overrides import has_torch_function, handle_torch_function
    >>> class Like:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"{func.__name__} handled by {cls.__name__}"
    >>> def double(x):
    ...     if has_torch_function((x,)):
    ...         return handle_torch_function(double, (x,), x)
    ...     return x * 2
    >>> double(Like())
    'double handled by Like'
    """
    # For a third-party function the overrides are the whole story: if a mode
    # skips public_api, calling it again below that mode is its plain path.
    return dispatch(public_api, args, kwargs, tuple(relevant_args), public_api, False)


def _construct_device(cls, args: tuple, kwargs: dict):
    """``device(...)``: active modes see the call (``func is device``), as PyTorch's do."""
    state = _STATE.get()
    if state is None or not state.modes_active:
        return type.__call__(cls, *args, **kwargs)
    return dispatch(cls, args, kwargs, (), _new_device, True)


def _new_device(*args, **kwargs):
    return type.__call__(_device.device, *args, **kwargs)


_device.HOOKS.construct = _construct_device

_IDLE = _State((), True, True, ())
_SUBCLASSES_DISABLED = _State((), False, True, ())
_TORCH_FUNCTION_DISABLED = _State((), False, False, ())
_DISPATCH_DISABLED = _State((), True, True, (), (), False)


def without_dispatch(state: _State | None) -> _State:
    """``state`` with the dispatch level's modes and subclasses switched off (the kernel of
    ``Tensor.__torch_dispatch__``, ``_DisableTorchDispatch``)."""
    return _DISPATCH_DISABLED if state is None else state.replace(dispatch_enabled=False)


python_dispatch.HOOKS.without_dispatch = without_dispatch

# public callable -> its implementation (what runs when nobody overrides); filled
# by the code generator so the default Tensor.__torch_function__ can skip a
# second trip through dispatch when no mode could see the call.
IMPLS: dict = {}

# Getters whose results the default __torch_function__ returns unconverted
# (filled by the Tensor layer): so that ``s.grad is s.grad`` for a subclass.
NO_WRAP: set = set()


# -- the core API that tensormodes._C exposes --------------------------------------------

# Public callables taking part in the protocol: namespace object -> list, and
# func -> the generated function returning its relevant arguments (for explain).
OVERRIDABLE: dict[object, list] = {}
RELEVANT_OF: dict = {}
# Public callables deliberately outside the protocol.
IGNORED: set = set()
# Generated callables none of whose required parameters may carry an override (factories):
# ``get_ignored_functions`` lists them, as PyTorch does, since no tensor-like can be passed
# where one must be; modes still see their calls (filled by the code generator).
NO_REQUIRED_TENSOR: set = set()
# Callbacks that build every lazily generated public callable (see _functions).
BUILD_ALL: list = []


def build_everything() -> None:
    """Make sure every public callable exists (introspection needs all of them)."""
    for build in BUILD_ALL:
        build()


def register_overridable(namespace, func, public_name: str) -> None:
    """Record a public callable of ``namespace`` that takes part in the protocol."""
    OVERRIDABLE.setdefault(namespace, []).append(func)
    PUBLIC_NAMES[func] = public_name


def _peek_should_skip_torch_function() -> bool:
    """True while the next public call is to skip its overrides (see ``redispatch_function``)."""
    state = _STATE.get()
    return state is not None and state.skip_next


def _set_skip_next_torch_function(skip: bool) -> None:
    """Make the next public call skip its overrides (modes and tensor-likes), or cancel that.

    A low-level setter, as PyTorch's: ``redispatch_function`` is the public spelling.
    """
    skip = bool(skip)  # any value, by its truth (PyTorch's)
    state = _STATE.get()
    if (state is not None and state.skip_next) != skip:
        _STATE.set((state or _IDLE).replace(skip_next=skip))


def _skip_one_hop_torch_function(func, types, args: tuple, kwargs: dict | None = None):
    """Call ``func`` with one level of ``__torch_function__`` handling skipped: its own
    overrides do not run (the calls it makes see them again).

    ``func`` must be a public callable or a function that calls ``has_torch_function``: a
    call that never consumed the skip raises ``RuntimeError`` (the flag is cleared either way).
    """
    _set_skip_next_torch_function(True)
    try:
        result = func(*args, **(kwargs or {}))
    except BaseException:
        _set_skip_next_torch_function(False)
        raise
    if _peek_should_skip_torch_function():
        _set_skip_next_torch_function(False)
        raise RuntimeError("skip_one_hop_torch_function called on a function that doesn't use has_torch_function! ")
    return result


def _get_torch_function_mode():
    """The active (top) mode, or None."""
    state = _STATE.get()
    return state.modes[-1] if state is not None and state.modes else None


def set_modes(modes: tuple) -> None:
    """Replace the mode stack without opening a scope (the low-level setter)."""
    base = _STATE.get() or _IDLE
    _STATE.set(base.replace(modes=modes))


def _is_torch_function_enabled() -> bool:
    """False inside ``DisableTorchFunction`` / ``DisableTorchFunctionSubclass``."""
    state = _STATE.get()
    return state is None or state.subclasses_enabled


def _is_torch_function_mode_enabled() -> bool:
    """True if a mode is active and modes are not disabled."""
    state = _STATE.get()
    return state is not None and bool(state.modes) and state.modes_enabled


class _FlagScope:
    """Base of the context managers that switch parts of the protocol off or on.

    One object may be entered again, nested or by other threads and tasks: each exit
    restores what the matching entry in the same context replaced.
    """

    _changes: dict = {}

    def __enter__(self):
        saved = _STATE.get()
        try:
            enter_scope(self, type(self).__name__ + "()", **self._changes)
        except BaseException:
            _STATE.set(saved)  # an exception arriving mid-way leaves nothing behind
            raise
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        scope = None
        try:
            scope = owned_scope(self)
            exit_owned(self, exc_type, scope)
        except BaseException:
            # Finish an exit that was interrupted (a no-op if it was done), see exit_owned.
            exit_owned(self, exc_type, scope if scope is not None else owned_scope(self))
            raise


class DisableTorchFunctionSubclass(_FlagScope):
    """Context manager: subclass and tensor-like overrides are ignored; modes still run.

    >>> import tensormodes as tm
    >>> from tensormodes._C import DisableTorchFunctionSubclass
    >>> class Sub(tm.Tensor): pass
    >>> with DisableTorchFunctionSubclass():
    ...     type(tm.ones(2).as_subclass(Sub) + 1).__name__
    'Tensor'
    """

    _changes = {"subclasses_enabled": False}


class _DisableTorchDispatch(_FlagScope):
    """Context manager: the dispatch level's modes and subclass handlers are skipped (kernels
    run directly); ``__torch_function__`` handling is unaffected."""

    _changes = {"dispatch_enabled": False}


class DisableTorchFunction(_FlagScope):
    """Context manager: both modes and subclass overrides are ignored (the stack is kept)."""

    _changes = {"subclasses_enabled": False, "modes_enabled": False}


def _is_torch_function_all_disabled() -> bool:
    """True inside ``DisableTorchFunction`` (modes and subclass overrides both off)."""
    state = _STATE.get()
    return state is not None and not state.modes_enabled


class _EnableTorchFunction:
    """Guard re-enabling modes and subclass overrides, PyTorch's way: it takes effect when
    constructed and lasts until the object is deleted (or its ``with`` block exits), also
    inside ``DisableTorchFunction`` / ``DisableTorchFunctionSubclass``.

    >>> import tensormodes as tm
    >>> from tensormodes._C import DisableTorchFunctionSubclass, _EnableTorchFunction
    >>> with DisableTorchFunctionSubclass():
    ...     guard = _EnableTorchFunction()
    ...     enabled = tm._C._is_torch_function_enabled()
    ...     del guard
    ...     enabled, tm._C._is_torch_function_enabled()
    (True, False)
    """

    __slots__ = ("_scope",)

    def __init__(self) -> None:
        self._scope = None
        saved = _STATE.get()
        try:
            # The scope's owner must not be the guard: the state would keep it alive forever.
            self._scope = enter_scope(None, "_EnableTorchFunction()", guard=True,
                                      subclasses_enabled=True, modes_enabled=True)
        except BaseException:
            self._scope = None
            _STATE.set(saved)
            raise

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info) -> None:
        self._release()

    def __del__(self) -> None:
        self._release()

    def _release(self) -> None:
        scope = getattr(self, "_scope", None)
        if scope is not None:
            state = _STATE.get()
            # Only the innermost scope is restored: scopes entered after the guard and still
            # open keep theirs, and the enclosing scope's exit discards the guard's.
            if state is not None and state.scopes and state.scopes[-1] is scope:
                exit_scope(scope)
        self._scope = None  # last: a release interrupted before this point can run again
