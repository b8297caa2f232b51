"""The dispatch level's runtime: who handles an aten call, in PyTorch's order.

A call reaches here below autograd, as an ``OpOverload`` with schema-ordered arguments
(``_api/dispatch_level.py`` makes it from a public call; a handler's ``func(*args)`` makes
it directly). Then, like PyTorch:

1. the top ``TorchDispatchMode`` (user modes above infra modes), run with itself popped, so
   that its ``func(...)`` reaches the next mode down and finally the kernel;
2. if no mode is left, or the mode returned ``NotImplemented``: the ``__torch_dispatch__`` of
   each subclass among the arguments, in argument order (a subclass before its base);
3. the kernel: the op's implementation with the dispatch level done (NumPy or meta rule).

The mode stack is part of the one state ``ContextVar`` (``tensormodes._state``): a thread or
an asyncio task has its own, and the override layer's scopes restore it (``TorchDispatchMode``
in ``tensormodes.utils._python_dispatch`` enters and exits them).

>>> from tensormodes._dispatch.python_dispatch import dispatch_classes
>>> import tensormodes as tm
>>> dispatch_classes((tm.ones(1), 2))
[]
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from .._state import STATE
from .._tensor_base import PLAIN, TensorBase

__all__ = ["HOOKS", "MultipleDispatchFailed", "call_overload", "bind", "schema_form", "public_call",
           "is_dispatch_class", "dispatch_classes", "active_modes", "disabled_torch_dispatch_impl"]


class _Hooks:
    """What the layers above give this one: ``impl_of(opdef, kind)`` — the implementation of
    an op's public form (``kind``: "functional", "inplace", "out"), which ends in its kernel;
    ``decompose(opdef, args, kwargs)`` — run an op's composite definition."""

    impl_of: Callable
    call: Callable  # (overload, args, kwargs): a call of an OpOverload object, autograd included
    decompose: Callable
    without_dispatch: Callable  # state -> the state with the dispatch level switched off
    enabled: Callable  # () -> grad mode's flag (from the autograd layer)


HOOKS = _Hooks()


def disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """``Tensor.__torch_dispatch__``: a class with it takes no part in the dispatch level;
    called by a subclass's handler (``super().__torch_dispatch__(...)``), it runs the kernel on
    the arguments' data with the dispatch level off. PyTorch's ``_disabled_torch_dispatch_impl``."""
    state = STATE.get()
    token = None
    try:
        token = STATE.set(HOOKS.without_dispatch(state))
        return _run_kernel(func, args, kwargs or {})
    finally:
        if token is None:
            STATE.set(state)
        else:
            STATE.reset(token)


class MultipleDispatchFailed(TypeError):
    """Every handler of the dispatch level declined an op (a TypeError, as in PyTorch; its own
    class so that Python operators report it instead of trying the reflected operator)."""


# -- which arguments take part -------------------------------------------------------------

_IS_DISPATCH_CLASS: dict[type, bool] = {}


def is_dispatch_class(cls: type) -> bool:
    """True for a Tensor subclass whose ``__torch_dispatch__`` is its own (not the default)."""
    known = _IS_DISPATCH_CLASS.get(cls)
    if known is None:
        handler = getattr(cls, "__torch_dispatch__", None)
        function = getattr(handler, "__func__", handler)
        known = _IS_DISPATCH_CLASS[cls] = (
            issubclass(cls, TensorBase) and handler is not None and function is not disabled_torch_dispatch_impl)
    return known


def dispatch_classes(values) -> list:
    """The arguments among ``values`` (tensors, lists of tensors) whose class has a
    ``__torch_dispatch__``: the first of each class, in order, a subclass before its base."""
    found: list = []
    seen: list[type] = []
    for value in values:
        items = value if type(value) is list or type(value) is tuple else (value,)
        for item in items:
            cls = type(item)
            if cls is PLAIN.tensor or cls in seen or not isinstance(item, TensorBase) or not is_dispatch_class(cls):
                continue
            seen.append(cls)
            index = len(found)
            for i, previous in enumerate(found):
                if issubclass(cls, type(previous)):
                    index = i
                    break
            found.insert(index, item)
    return found


def active_modes() -> tuple:
    """The dispatch modes of this context, bottom first (empty while dispatch is disabled)."""
    state = STATE.get()
    if state is None or not state.dispatch_enabled:
        return ()
    return state.dispatch_modes


# -- arguments ----------------------------------------------------------------------------

def bind(overload, args: tuple, kwargs: dict) -> dict:
    """Check ``args`` and ``kwargs`` against ``overload``'s schema; PyTorch's RuntimeErrors for
    a missing value, an unknown keyword, too many arguments or a non-tensor where a tensor goes.
    Returns schema name -> value for what was given."""
    schema = overload._schema
    arguments = schema.arguments
    positional = [a for a in arguments if not a.kwarg_only]
    if len(args) > len(positional):
        raise RuntimeError(f"{schema.name}() expected at most {len(positional)} argument(s) but received "
                           f"{len(args)} argument(s). Declaration: {schema}")
    bound = {}
    for argument, value in zip(positional, args):
        bound[argument.name] = value
    names = {a.name for a in arguments}
    for key, value in kwargs.items():
        if key not in names:
            raise RuntimeError(f"Unknown keyword argument '{key}' for operator '{schema.name}'. Schema: {schema}")
        bound[key] = value
    for position, argument in enumerate(arguments):
        if argument.name not in bound:
            if not argument.has_default_value and not argument.type.endswith("?"):
                raise RuntimeError(f"{schema.name}() is missing value for argument '{argument.name}'. "
                                   f"Declaration: {schema}")
            continue
        value = bound[argument.name]
        if argument.type == "Tensor" and not isinstance(value, TensorBase) and \
                not (isinstance(value, (int, float, complex, bool)) and position > 0):
            raise RuntimeError(
                f"{schema.name}() Expected a value of type 'Tensor' for argument '{argument.name}' but instead "
                f"found type '{type(value).__name__}'.\nPosition: {position}\nValue: {value!r}\n"
                f"Declaration: {schema}")
    return bound


def schema_form(overload, arguments: dict) -> tuple[tuple, dict]:
    """A public call's arguments (public parameter name -> value) in the form handlers see:
    positional up to the last one not at its default, keyword-only ones only when not at their
    defaults, int lists as lists (PyTorch's ``sum(x, 1)`` is ``sum.dim_IntList(x, [1])``)."""
    form = overload.__dict__.get("_form")
    if form is None:
        form = overload._form = _form(overload)
    leading, rest = form
    args = [arguments[name] for name in leading]
    if not rest:
        return tuple(args), {}
    kwargs, pending = {}, []
    for name, public, default, kwarg_only, int_list in rest:
        value = arguments.get(public, default)
        if int_list and value is not None:
            value = [value] if type(value) is int else list(value)
        at_default = value is default or (type(value) in _SIMPLE and type(value) is type(default) and value == default)
        if kwarg_only:
            if not at_default:
                kwargs[name] = value
        elif at_default:
            pending.append(value)
        else:
            if pending:
                args.extend(pending)
                pending.clear()
            args.append(value)
    return tuple(args), kwargs


_SIMPLE = frozenset({int, float, bool, str, list})


def _form(overload) -> tuple[tuple, list]:
    """(the public names of the leading required positional arguments, taken as they are; the
    rest: (schema name, public name, default, keyword-only, int list) each)."""
    public = [p for p in overload._opdef.signature.parameters.values()
              if p.name not in overload._dropped and p.name != "requires_grad"]
    leading, rest = [], []
    for argument, parameter in zip(overload._schema.arguments, public):
        default = parameter.default if parameter.default is not inspect.Parameter.empty else _MISSING
        if isinstance(default, tuple):
            default = list(default)
        int_list = argument.type.startswith(("int[", "SymInt[")) or parameter.kind is parameter.VAR_POSITIONAL
        if not rest and default is _MISSING and not argument.kwarg_only and not int_list:
            leading.append(parameter.name)
        else:
            rest.append((argument.name, parameter.name, default, argument.kwarg_only, int_list))
    if overload._kind == "out":
        rest.append(("out", "out", _MISSING, True, False))
    return tuple(leading), rest


_MISSING = object()


def public_call(overload, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Arguments in schema form -> the public implementation's (positional, keywords): schema
    names become the public ones (``self`` -> ``input``), a ``SymInt[] size`` becomes ``*size``."""
    plan = overload.__dict__.get("_plan")
    if plan is None:
        plan = overload._plan = _plan(overload)
    renames, variadic = plan
    if variadic is not None:
        position, name = variadic
        if name in kwargs:
            kwargs = dict(kwargs)
            args = (*args, kwargs.pop(name))
        if len(args) > position:
            args = (*args[:position], *args[position], *args[position + 1:])
    if kwargs and renames:
        kwargs = {renames.get(key, key): value for key, value in kwargs.items()}
    return args, kwargs


def _plan(overload) -> tuple[dict, tuple | None]:
    """(schema name -> public name where they differ, (position, schema name) of a variadic)."""
    public = [p for p in overload._opdef.signature.parameters.values()
              if p.name not in overload._dropped and p.name != "requires_grad"]
    renames, variadic = {}, None
    for position, (argument, parameter) in enumerate(zip(overload._schema.arguments, public)):
        if argument.name != parameter.name:
            renames[argument.name] = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            variadic = (position, argument.name)
    return renames, variadic


# -- the chain -----------------------------------------------------------------------------

def call_overload(overload, args: tuple, kwargs: dict):
    """Run ``overload`` on schema-form arguments below autograd: modes, subclasses, kernel."""
    state = STATE.get()
    declined = None
    if state is not None and state.dispatch_active:
        mode = state.dispatch_modes[-1]
        overloaded = _subclass_args(args, kwargs)
        token = None
        try:
            token = STATE.set(state.dispatch_popped())
            result = mode.__torch_dispatch__(overload, tuple([type(a) for a in overloaded]) if overloaded else (),
                                             args, kwargs)
        finally:
            if token is None:
                STATE.set(state)
            else:
                STATE.reset(token)
        if result is not NotImplemented:
            return result
        declined = mode
    if state is None or state.dispatch_enabled:
        overloaded = _subclass_args(args, kwargs)
        if overloaded:
            types = tuple([type(a) for a in overloaded])
            for arg in overloaded:
                result = type(arg).__torch_dispatch__(overload, types, args, kwargs)
                if result is not NotImplemented:
                    return result
            raise MultipleDispatchFailed(
                f"Multiple dispatch failed for '{overload}'; all __torch_dispatch__ handlers returned "
                "NotImplemented:\n\n" + "".join(f"  - tensor subclass {t}\n" for t in types)
                + "\nFor more information, try re-running with TORCH_LOGS=not_implemented")
    if declined is not None:
        raise MultipleDispatchFailed(
            f"Multiple dispatch failed for '{overload}'; all __torch_dispatch__ handlers returned "
            f"NotImplemented:\n\n  - mode object {declined!r}\n\n"
            "For more information, try re-running with TORCH_LOGS=not_implemented")
    kernel = overload.__dict__.get("_kernel")
    if kernel is None:
        kernel = _kernel_of(overload)
    if kwargs or overload._variadic:
        args, kwargs = public_call(overload, args, kwargs)
        return kernel(*args, **kwargs)
    return kernel(*args)


def _subclass_args(args: tuple, kwargs: dict) -> list:
    for value in args:
        cls = type(value)
        if cls is not PLAIN.tensor and (cls is list or cls is tuple or isinstance(value, TensorBase)):
            return dispatch_classes((*args, *kwargs.values()))
    return dispatch_classes(kwargs.values()) if kwargs else []


def _kernel_of(overload) -> Callable:
    """The end of ``overload``'s chain: the op's implementation below the dispatch level (which
    takes the public form of the arguments; cached on the overload)."""
    overload._variadic = _plan(overload)[1] is not None
    kernel = overload._kernel = HOOKS.impl_of(overload._opdef, overload._kind)
    return kernel


def _run_kernel(overload, args: tuple, kwargs: dict):
    """The end of the chain, for ``Tensor.__torch_dispatch__``."""
    kernel = overload.__dict__.get("_kernel") or _kernel_of(overload)
    args, kwargs = public_call(overload, args, kwargs)
    return kernel(*args, **kwargs)
