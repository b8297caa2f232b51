"""How an observing mode sees a composite call and then the calls its body makes.

A *composite* is a public callable whose body makes further public calls (``F.softmax``
calls ``Tensor.softmax``, ``Tensor.backward`` runs the gradient formulas); a *leaf*
(``tm.add``) makes none. A mode's handler runs below the mode, so by default it never
sees a composite's inner calls. ``run_composite`` is the re-entrant idiom that lets it:

>>> import tensormodes as tm
>>> from tensormodes.overrides import TorchFunctionMode
>>> from tensormodes._overrides.composite import Observer, calls_public_api, run_composite
>>> class Names(Observer, TorchFunctionMode):
...     def __init__(self):
...         self.names = []
...     def __torch_function__(self, func, types, args=(), kwargs=None):
...         self.names.append(func.__name__)
...         if calls_public_api(func):  # a composite: see its body's calls too
...             return run_composite(self, func, args, kwargs or {}, see_inner=True)
...         return func(*args, **(kwargs or {}))
>>> with Names() as seen:
...     _ = tm.nn.functional.softmax(tm.ones(3), dim=0)
>>> seen.names
['ones', 'softmax', 'softmax']

The first ``softmax`` is ``F.softmax``, the second the ``Tensor.softmax`` call its body
makes. The ready-made modes (``tensormodes.modes``, ``RecordingMode``) are built this way
(``FlopCounterMode`` and ``DebugMode`` listen at the dispatch level instead).

This module belongs to the override layer: it imports ``dispatch`` (same folder) and
nothing above it.
"""

from __future__ import annotations

from contextvars import ContextVar

from .dispatch import IMPLS, PUBLIC_NAMES, get_state, make_state, set_state

__all__ = ["Observer", "calls_public_api", "implementation", "run_composite"]


class Observer:
    """Marks modes that only watch calls (they never change what a call does), so that a
    composite call may pass through them while its body runs where they all see it (see
    ``run_composite``)."""

    _observer = True


# -- which calls make further public calls ---------------------------------------------------

_COMPOSITE: dict = {}


def calls_public_api(func) -> bool:
    """True for public callables whose body makes public API calls (``F.softmax``,
    ``Tensor.backward``): a mode re-entered around them with ``run_composite`` sees those
    inner calls. False for leaves (``tm.add``) and for callables this library did not
    generate.

    >>> import tensormodes as tm
    >>> from tensormodes._overrides.composite import calls_public_api
    >>> calls_public_api(tm.nn.functional.softmax), calls_public_api(tm.add)
    (True, False)
    """
    known = _COMPOSITE.get(func)
    if known is None:
        namespace = getattr(func, "__globals__", None)
        # The code generator (_api/codegen.py) keeps each generated callable's ``leaf`` flag
        # (the one it hands ``dispatch``) in the callable's own globals, as ``_leaf``.
        known = IMPLS.get(func) is not None and namespace is not None and namespace.get("_leaf") is False
        _COMPOSITE[func] = known
    return known


def implementation(func):
    """What runs for the generated public callable ``func`` when nobody overrides it, or
    None for other callables. Calling it skips every mode and ``__torch_function__``: a
    handler reads a tensor's property or attaches a hook that way without the modes below
    it seeing the call.

    >>> import tensormodes as tm
    >>> from tensormodes._overrides.composite import implementation
    >>> implementation(tm.Tensor.device.__get__)(tm.ones(1))
    device(type='cpu')
    """
    return IMPLS.get(func)


# -- running a composite ---------------------------------------------------------------------

# The state a composite's body runs under when an observer above asked to see its inner calls:
# the stack as that observer saw it, itself included. Set while the call travels down.
_BODY_STATE: ContextVar = ContextVar("tensormodes_modes_body_state", default=None)

# Composites whose body runs under the observers even when a mode below could override them:
# the backward pass (the gradient formulas' calls) is never unseen. Known by public name, as
# the class that defines it lives above this layer.
_BODY_ALWAYS_SEEN = frozenset({"tensormodes.Tensor.backward"})


def _reentered_state(mode, below):
    """The state ``below`` with ``mode`` pushed on top (cached: built once per state below)."""
    cache = mode.__dict__.setdefault("_reentered_states", {})
    entry = cache.get(id(below))
    if entry is None or entry[0] is not below:
        if below is None:
            state = make_state((mode,))
        else:
            state = below.replace(modes=below.modes + (mode,))
        if len(cache) > 64:  # each `with` of the modes below makes new states: keep the recent ones
            cache.clear()
        # Keep ``below`` alive with its entry, so its id cannot be reused by another state.
        entry = cache[id(below)] = (below, state)
    return entry[1]


def _only_observers_handle(state, func) -> bool:
    for mode, handled in zip(state.modes, state.handled):
        if (handled is None or func in handled) and not getattr(mode, "_observer", False):
            return False
    return True


def run_composite(mode, func, args: tuple, kwargs: dict, see_inner: bool):
    """Pass a call of a composite function (one whose body makes public calls) on from
    ``mode``'s handler so that, if ``see_inner``, the calls its body makes come back to
    ``mode`` (the re-entrant idiom), nested under it.

    Modes below that handle ``func`` still receive the call: if they are all observers, the
    lowest one runs the body, under the stack of the top-most observer that wanted the inner
    calls, so that every observer sees the call and then its inner calls. A mode below that
    is not an observer (it may override ``func``) gets the call as usual, and its body runs
    as that mode decides: the observers above then do not see the inner calls. Except for
    ``Tensor.backward``, whose body runs here (that mode then sees the gradient formulas'
    calls rather than the ``backward`` call), so that the backward pass is never unseen.
    """
    below = get_state()
    body = outer_body = _BODY_STATE.get()
    if body is None and see_inner:
        body = _reentered_state(mode, below)
    if body is None:
        return func(*args, **kwargs)
    if below is not None and below.modes_active and below.handler_index(func) >= 0:
        observers = _only_observers_handle(below, func)
        if observers or PUBLIC_NAMES.get(func) not in _BODY_ALWAYS_SEEN:
            # Each change is made inside its try and restored by value: an exception arriving
            # right after a set (a signal handler's) cannot leave it behind.
            try:
                _BODY_STATE.set(body if observers else None)
                return func(*args, **kwargs)
            finally:
                _BODY_STATE.set(outer_body)
    impl = IMPLS.get(func)
    if impl is None:
        return func(*args, **kwargs)
    try:
        set_state(body)
        _BODY_STATE.set(None)
        return impl(*args, **kwargs)
    finally:
        _BODY_STATE.set(outer_body)
        set_state(below)
