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
from contextvars import ContextVar

from .. import _generated
from .._device import device
from .._state import STATE
from .._tensor_base import PLAIN, TensorBase

__all__ = ["HOOKS", "FORMULA_CALLS", "MultipleDispatchFailed", "add_overloaded", "call_overload", "bind", "normalized",
           "check_positional", "as_dispatched", "at_schema_default",
           "schema_form", "form_source", "run_chain", "after_modes", "skip_top_mode",
           "subclass_types", "public_call", "is_dispatch_class", "dispatch_classes", "active_modes",
           "disabled_torch_dispatch_impl"]


class _Hooks:
    """What the layers above give this one: ``impl_of(opdef, kind)`` — the implementation of
    an op's public form (``kind``: "functional", "inplace", "out"), which ends in its kernel;
    ``chain_end(opdef, kind)`` — the same as the end of an overload's chain, where nothing
    listens below autograd any more (no dispatch-level test, no override);
    ``decompose(opdef, args, kwargs)`` — run an op's composite definition."""

    impl_of: Callable
    chain_end: Callable
    call: Callable  # (overload, args, kwargs): a call of an OpOverload object, autograd included
    # (overload, args, kwargs): a call below autograd of an op autograd itself makes (its seed, a
    # gradient's sum to shape, an accumulation), on plain tensors where nothing records; as the
    # op's public call would reach the dispatch level, without the public form and lane
    below: Callable
    decompose: Callable
    without_dispatch: Callable  # state -> the state with the dispatch level switched off
    enabled: Callable  # () -> grad mode's flag (from the autograd layer)


HOOKS = _Hooks()

FORMULA_CALLS: ContextVar[tuple | None] = ContextVar("tensormodes_formula_calls", default=None)
"""While autograd runs a gradient formula with the dispatch level listening: the numbers the
forward call took as tensors (else None). The formula's calls are PyTorch's C++ calls, whose
numbers are Scalars (``grad.div(n)`` reaches ``div.Scalar``, see ``aten.formula_overload``) but
for those, which PyTorch's formula has as tensors. A handler's own calls are user calls again
(``call_overload``)."""


def disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """``Tensor.__torch_dispatch__``: a class with it takes no part in the dispatch level;
    called by a subclass's handler (``super().__torch_dispatch__(...)``), it runs the kernel on
    the arguments' data with the dispatch level off. PyTorch's ``_disabled_torch_dispatch_impl``."""
    state = STATE.get()
    token = None
    try:
        token = STATE.set(HOOKS.without_dispatch(state))
        return _kernel_end(func, args, kwargs or {})
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
            add_overloaded(found, item)
    return found


def add_overloaded(found: list, arg) -> None:
    """Put ``arg`` among the overloaded arguments ``found``, in PyTorch's order (of handlers
    at either level): last, except before the first one whose class its own subclasses."""
    cls = type(arg)
    for i, previous in enumerate(found):
        if issubclass(cls, type(previous)):
            found.insert(i, arg)
            return
    found.append(arg)


def active_modes() -> tuple:
    """The dispatch modes of this context, bottom first (empty while dispatch is disabled)."""
    state = STATE.get()
    if state is None or not state.dispatch_enabled:
        return ()
    return state.dispatch_modes


# -- arguments ----------------------------------------------------------------------------

def bind(overload, args: tuple, kwargs: dict) -> dict:
    """Check ``args`` and ``kwargs`` against ``overload``'s schema; PyTorch's RuntimeErrors for
    a missing value, an unknown keyword, too many arguments, a non-tensor where a tensor goes
    or a tensor where a number goes. Returns schema name -> value for what was given."""
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
        if key in bound:
            raise RuntimeError(f"{schema.name}() got multiple values for argument '{key}'. Declaration: {schema}")
        bound[key] = value
    for position, argument in enumerate(arguments):
        if argument.name not in bound:
            if not argument.has_default_value and not argument.type.endswith("?"):
                raise RuntimeError(f"{schema.name}() is missing value for argument '{argument.name}'. "
                                   f"Declaration: {schema}")
            continue
        value = bound[argument.name]
        if argument.type == "Tensor" and not isinstance(value, (TensorBase, int, float, complex, bool)):
            raise RuntimeError(
                f"{schema.name}() Expected a value of type 'Tensor' for argument '{argument.name}' but instead "
                f"found type '{type(value).__name__}'.\nPosition: {position}\nValue: {value!r}\n"
                f"Declaration: {schema}")
        number = argument.type.rstrip("?")
        if number in ("Scalar", "float", "int", "SymInt") and isinstance(value, TensorBase):
            expected = "number" if number == "Scalar" else number
            raise RuntimeError(
                f"{schema.name}() Expected a value of type '{expected}' for argument '{argument.name}' but "
                f"instead found type 'Tensor'.\nPosition: {position}\nValue: {value!r}\nDeclaration: {schema}\n"
                f"Cast error details: Cannot cast {value!r} to {expected}")
    return bound


def normalized(overload, bound: dict) -> tuple[tuple, dict]:
    """An overload's arguments as ``bind`` found them (schema name -> value) in the form handlers
    see, as PyTorch's calling convention gives them: positional arguments as positional, up to the
    last one not at its default (defaults before it filled in), keyword-only ones when given and
    not at their defaults."""
    args, kwargs, pending = [], {}, []
    for argument in overload._schema.arguments:
        given = argument.name in bound
        value = bound[argument.name] if given else getattr(argument.default_value, "value", argument.default_value)
        at_default = not given or (argument.has_default_value and
                                   at_schema_default(value, argument.default_value, argument.type))
        if type(value) is int and argument.type in ("float", "float?"):
            value = float(value)  # as PyTorch's binding holds it
        if argument.kwarg_only:
            if not at_default:
                kwargs[argument.name] = value
        elif at_default:
            pending.append(None if value is inspect.Parameter.empty else value)
        else:
            args.extend(pending)
            pending.clear()
            args.append(value)
    return tuple(args), kwargs


def at_schema_default(value, default, schema_type: str) -> bool:
    """Whether a given ``value`` equals its argument's schema ``default`` as PyTorch's dispatcher
    compares them (the value made the schema's type first, then compared as ATen's values): a
    ``float`` takes an int (``nan_to_num(x, 0)`` is at ``0.``), a ``Scalar`` keeps its type
    (``alpha=1.0`` is not ``alpha=1``), an ``int[2]`` takes one int for both (``padding=0`` is
    ``[0, 0]``, but ``[0]`` is not)."""
    default = getattr(default, "value", default)
    if value is default:
        return True
    kind = type(value)
    base = schema_type.rstrip("?")
    if base == "float":
        return kind in _NUMBERS and type(default) in _NUMBERS and value == default
    if "[" in base and (kind in _SEQUENCES or kind is int):
        size = base.partition("[")[2].partition("]")[0]
        count = int(size) if size.isdigit() else 1
        values = list(value) if kind in _SEQUENCES else [value] * count
        defaults = list(default) if type(default) in _SEQUENCES else [default] * count
        return len(values) == len(defaults) and all(
            type(v) is type(d) and v == d for v, d in zip(values, defaults))
    return kind in _EQUAL_BY_VALUE and kind is type(default) and value == default


_EQUAL_BY_VALUE = frozenset({int, float, bool, str, complex})


def as_dispatched(overload, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A direct call's arguments (``func(*args, **kwargs)`` in a handler, user code's
    ``aten.cat.default([x, y], 0)``) as PyTorch's dispatcher hands them on, whatever grad mode:
    trailing positional arguments at their schema defaults left out, keyword-only ones at theirs
    too (``at_schema_default``). Arguments the schema refuses are left for the kernel to refuse."""
    plan = overload.__dict__.get("_dispatched_plan")
    if plan is None:
        arguments = overload._schema.arguments
        positional = tuple((a.default_value, a.type) for a in arguments if not a.kwarg_only)
        keywords = {a.name: (a.default_value, a.type) for a in arguments if a.kwarg_only and a.has_default_value}
        keyword_only = frozenset(a.name for a in arguments if a.kwarg_only)
        required = overload._required_positional = sum(
            1 for a in arguments if not a.kwarg_only and not a.has_default_value)
        floats = tuple(i for i, a in enumerate(arguments) if not a.kwarg_only and a.type in ("float", "float?"))
        plan = overload._dispatched_plan = (required, positional, keywords, keyword_only, floats)
    required, positional, keywords, keyword_only, floats = plan
    if kwargs and not keyword_only.issuperset(kwargs):  # a positional one by name: PyTorch's binding places it
        return normalized(overload, bind(overload, args, kwargs))
    for index in floats:  # a float argument given an int holds it as a float (``nan_to_num(x, 0)``: ``0.``)
        if index < len(args) and type(args[index]) is int:
            args = (*args[:index], float(args[index]), *args[index + 1:])
    count = len(args)
    if count <= len(positional):
        while count > required:
            default, schema_type = positional[count - 1]
            if default is _NO_SCHEMA_DEFAULT or not at_schema_default(args[count - 1], default, schema_type):
                break
            count -= 1
        if count < len(args):
            args = args[:count]
    if kwargs:
        for name, value in kwargs.items():
            known = keywords.get(name)
            if known is not None and at_schema_default(value, *known):
                kwargs = {k: v for k, v in kwargs.items()
                          if k not in keywords or not at_schema_default(v, *keywords[k])}
                break
    return args, kwargs


_NO_SCHEMA_DEFAULT = inspect.Parameter.empty


# A loss's ``reduction``: a string in Python, an int enum in ATen's schemas.
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
_REDUCTION_NAMES = {number: name for name, number in REDUCTIONS.items()}


def schema_form(overload, arguments: dict) -> tuple[tuple, dict]:
    """A public call's arguments (its parameter name -> value, all of them in order) in the form
    handlers see, as PyTorch's: positional up to the last one not at its default (an argument
    without a default in the schema always counts), keyword-only ones only when not at their
    defaults, int lists as lists (PyTorch's ``sum(x, 1)`` is ``sum.dim_IntList(x, [1])``, an
    ``int[2]`` gets an int twice), floats where the schema says float, a default left before
    a given argument as the schema's default. An alias's call (another op's overload, its
    parameters renamed) is read by position."""
    alternatives = overload.__dict__.get("_alternatives")
    if alternatives:
        overload = _view_of(overload, alternatives, arguments)
    compiled = overload.__dict__.get("_form_code")
    if compiled is None:
        compiled = overload._form_code = _form_code(overload)
    return compiled(arguments)


def _schema_form_interpreted(overload, arguments: dict) -> tuple[tuple, dict]:
    """``schema_form`` read from the overload's form table, one argument at a time: the
    definition the generated ``_form_code`` follows (tests compare the two)."""
    alternatives = overload.__dict__.get("_alternatives")
    if alternatives:
        overload = _view_of(overload, alternatives, arguments)
    form = overload.__dict__.get("_form")
    if form is None:
        form = overload._form = _form(overload)
    values = None
    args, kwargs, pending = [], {}, []
    for name, public, index, default, always, kwarg_only, int_list, fill, given, strict, by_value in form:
        if public in arguments:
            value = arguments[public]
            if index < -1:  # one of several out= tensors: ``sort(x, out=(values, indices))``
                value = value[-2 - index]
        elif index >= 0:
            if values is None:
                values = list(arguments.values())
            value = values[index] if index < len(values) else default
        else:
            value = default
        if value is None and given is not _MISSING:
            value = given
        if strict:  # a Scalar given: at its schema default only as the same type (alpha=1.0 is not alpha=1)
            at_default = not always and (value is default or _same_scalar(value, fill))
        else:
            at_default = not always and (value is default or (_same(value, default) if by_value else value is fill)
                                         or _same(value, fill))
        if at_default:
            value = fill
        elif int_list:
            if value is not None:
                value = _int_list(value, int_list)
        elif int_list is None and type(value) is int:
            value = float(value)
        elif type(value) is str and type(fill) is int and value in REDUCTIONS:
            value = REDUCTIONS[value]  # a loss's reduction: ATen's enum
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


def _form_code(overload) -> Callable:
    """``schema_form`` for one overload as a generated straight-line function of the call's
    ``arguments``: ``_schema_form_interpreted``'s loop unrolled over the overload's form table,
    the tests its constants decide (an argument always given, a default of None, no int list)
    left out. Generated through ``tensormodes._generated`` (its source is inspectable)."""
    lines, names = form_source(overload)
    source = "def schema_form(arguments):\n" + "".join(f"    {line}\n" for line in lines) + "    return args, kwargs\n"
    label = f"{overload.namespace}.{overload._packet_name}.{overload._overloadname}.schema_form"
    return _generated.define(source, "schema_form", names, qualname=f"{overload}.schema_form", label=label)


def form_source(overload, read: dict | None = None) -> tuple[list[str], dict]:
    """The lines of ``_form_code``'s body that set ``args`` and ``kwargs`` from ``arguments``,
    and the names they use (for other generated code to embed them, ``_api.dispatch_level``);
    ``read``: public name -> the expression holding its value there (instead of ``arguments``)."""
    read = read or {}
    form = overload.__dict__.get("_form")
    if form is None:
        form = overload._form = _form(overload)
    names = {"_MISSING": _MISSING, "_same": _same, "_same_scalar": _same_scalar, "_int_list": _int_list,
             "_REDUCTIONS": REDUCTIONS, "_positional": _positional}
    lines, positional, keywords = [], [], []
    for i, (name, public, index, default, always, kwarg_only, int_list, fill, given, strict, by_value) in \
            enumerate(form):
        v, d = f"v{i}", f"d{i}"
        names[f"_D{i}"], names[f"_F{i}"], names[f"_G{i}"] = default, fill, given
        if public is not None and public in read:
            item = "" if index >= -1 else f"[{-2 - index}]"
            lines.append(f"{v} = {read[public]}{item}")
            # given, and without a default it could equal: never at its default
            always = always or (default is _MISSING and (fill is None or fill is _MISSING))
        elif public is None:
            lines.append(f"{v} = _D{i}")
        else:
            lines.append(f"if {public!r} in arguments:")
            lines.append(f"    {v} = arguments[{public!r}]")
            if index < -1:
                lines.append(f"    {v} = {v}[{-2 - index}]")
            lines.append("else:")
            lines.append(f"    {v} = _positional(arguments, {index}, _D{i})" if index >= 0 else f"    {v} = _D{i}")
        if given is not _MISSING:
            lines.append(f"if {v} is None:")
            lines.append(f"    {v} = _G{i}")
        conversion = []
        if int_list:
            conversion = [f"if {v} is not None:", f"    {v} = _int_list({v}, {int_list})"]
        elif int_list is None:
            conversion = [f"if type({v}) is int:", f"    {v} = float({v})"]
        elif type(fill) is int:
            conversion = [f"if type({v}) is str and {v} in _REDUCTIONS:", f"    {v} = _REDUCTIONS[{v}]"]
        if always:
            lines.extend(conversion)
        else:
            lines.append(f"{d} = {' or '.join(_default_terms(i, default, fill, strict, by_value))}")
            lines.append(f"if {d}:")
            lines.append(f"    {v} = _F{i}")
            if conversion:
                lines.append("else:")
                lines.extend("    " + line for line in conversion)
        (keywords if kwarg_only else positional).append((name, v, d, always))
    # Positional arguments up to the last one not at its default (an always-given one counts).
    last_always = max((k for k, (_, _, _, always) in enumerate(positional) if always), default=-1)

    def args_of(count: int) -> str:
        return "(" + "".join(f"{v}, " for _, v, _, _ in positional[:count]) + ")"

    branches = [(positional[k][2], args_of(k + 1)) for k in range(len(positional) - 1, last_always, -1)]
    if branches:
        for number, (d, value) in enumerate(branches):
            lines.append(f"{'if' if number == 0 else 'elif'} not {d}:")
            lines.append(f"    args = {value}")
        lines.append("else:")
        lines.append(f"    args = {args_of(last_always + 1)}")
    else:
        lines.append(f"args = {args_of(last_always + 1)}")
    lines.append("kwargs = {}")
    for name, v, d, always in keywords:
        if always:
            lines.append(f"kwargs[{name!r}] = {v}")
        else:
            lines.append(f"if not {d}:")
            lines.append(f"    kwargs[{name!r}] = {v}")
    return lines, names


def _positional(arguments: dict, index: int, default):
    """An alias's call is read by position: its ``index``-th argument, else ``default``."""
    values = list(arguments.values())
    return values[index] if index < len(values) else default


def _view_of(overload, alternatives: list, arguments: dict):
    """The view of ``overload`` a call's arguments came through: the one of the calling op (its
    parameter names) that fits them (``scatter(x, 0, i, 2.5)`` and ``scatter(x, 0, i, value=2.5)``
    both reach ``scatter.value``, from different parameters)."""
    names = [name for name in arguments if name != "out"]
    fallback = None
    for view in (overload, *alternatives):
        if list(view._opdef.signature.parameters) == names:
            fits = view._fits(arguments)
            if fits == 2:
                return view
            if fits and fallback is None:
                fallback = view
    return fallback or overload


def _same(value, default) -> bool:
    """Whether ``value`` equals a default as PyTorch's binding compares them: by value for
    numbers, strings and lists (``1.0`` is the default ``1``, ``[]`` the default ``()``)."""
    kind, other = type(value), type(default)
    if kind in _NUMBERS:
        return other in _NUMBERS and value == default
    if kind in _SEQUENCES:
        return other in _SEQUENCES and list(value) == list(default)
    return kind in _SIMPLE and kind is other and value == default


def _same_scalar(value, default) -> bool:
    """Whether a ``Scalar`` argument equals its schema default as PyTorch's dispatcher compares
    them: the same number of the same type (``alpha=1.0`` is kept where the default is ``1``)."""
    return type(value) is type(default) and value == default


def _int_list(value, size: int) -> list:
    """An int list argument as PyTorch's binding makes it: ``2`` for ``int[2]`` is ``[2, 2]``,
    ``x.permute((0, 1))`` (a list given as the one ``*dims`` argument) is ``[0, 1]``; ``size``
    -1: a tensor list, a tuple made a list and nothing more."""
    if size < 0:
        return list(value) if type(value) is tuple else value
    if type(value) is int:
        return [value] * size
    if type(value) is not list and type(value) is not tuple:
        return value  # not an int list after all: the implementation says what is wrong
    if len(value) == 1 and isinstance(value[0], (list, tuple)):
        value = value[0]
    return list(value)


_SIMPLE = frozenset({int, float, bool, str, list, tuple})
_NUMBERS = frozenset({int, float})
_SEQUENCES = frozenset({list, tuple})


def _default_terms(i: int, default, fill, strict: bool, by_value: bool) -> list[str]:
    """``form_source``'s tests of whether argument ``i``'s value ``v{i}`` is at its default, as
    ``_schema_form_interpreted`` makes them (``_same`` is never true against None or _MISSING:
    those tests are left out)."""
    v = f"v{i}"
    terms = [f"{v} is _D{i}"]
    if strict:  # a Scalar given: at its schema default only as the same type
        return [*terms, f"_same_scalar({v}, _F{i})"]
    if not by_value:  # the public default is not the schema's: given, only the schema's counts
        terms.append(f"{v} is _F{i}")
    elif default is not None and default is not _MISSING:
        terms.append(f"_same({v}, _D{i})")
    if fill is not None and fill is not _MISSING and fill is not default:
        terms.append(f"_same({v}, _F{i})")
    return terms


def _form(overload) -> list[tuple]:
    """Per schema argument: (its name, its public parameter or None, that parameter's position,
    the default that leaves it out, whether it is always given, keyword-only, how it is an int
    list (its length, 1 for any; 0 not one, None a float), what a handler sees when it is left
    at its default, what it sees for a None that is always given, whether it is a ``Scalar``
    compared with its schema default by type too, whether a value equal to the public default
    is at the default — ``_means_schema_default``)."""
    parameters = list(overload._opdef.signature.parameters.values())
    position = {p.name: i for i, p in enumerate(parameters)}
    form = []
    outs = [a for a in overload._schema.arguments if a.public == "out"]
    for argument in overload._schema.arguments:
        public = argument.public
        parameter = parameters[position[public]] if public in position else None
        if parameter is not None and parameter.default is not inspect.Parameter.empty:
            default = parameter.default
        elif parameter is None and argument.has_default_value:
            default = argument.default_value
        else:
            default = _MISSING
        fill = argument.default_value if argument.has_default_value else default
        fill = getattr(fill, "value", fill)  # a default spelled in the declaration
        if isinstance(fill, tuple):
            fill = list(fill)
        int_list = 0
        # every list type (``Tensor?[] indices``, ``bool[3] output_mask`` too) reaches handlers
        # as a list, whatever sequence the call gave (PyTorch's binding makes a list)
        if argument.type.startswith(("int[", "SymInt[", "Tensor[", "Tensor?[", "bool[", "float[")) or (
                parameter is not None and parameter.kind is parameter.VAR_POSITIONAL):
            size = argument.type.partition("[")[2].partition("]")[0]
            int_list = int(size) if size.isdigit() else 1
            if argument.type.startswith(("Tensor[", "Tensor?[")) and (
                    parameter is None or parameter.kind is not parameter.VAR_POSITIONAL):
                int_list = -1  # a list of tensors: only made a list, never unwrapped or repeated
        elif argument.type in ("float", "float?"):
            int_list = None
        if int_list and fill is not None and fill is not _MISSING:
            fill = _int_list(fill, int_list)
        given = _MISSING
        if argument.given is not inspect.Parameter.empty:
            given = argument.given
            if argument.name == "device":
                given = device(given)
        always = (not argument.has_default_value and default is not _MISSING and public != "out") or \
            given is not _MISSING
        index = position.get(public, -1) if len(outs) < 2 or public != "out" else -2 - outs.index(argument)
        strict = argument.type == "Scalar" and type(fill) in (int, float, bool, complex)
        form.append((argument.name, public, index, default, always, argument.kwarg_only, int_list, fill, given,
                     strict, _means_schema_default(default, fill, int_list)))
    return form


def _means_schema_default(default, fill, int_list) -> bool:
    """Whether a public default, made the schema's type as a given value is, is the schema's
    default (``padding=0`` is ``int[2] padding=[0, 0]``, ``reduction="mean"`` is ``1``). Where
    it is not (``nan_to_num``'s ``nan=0.0``, schema ``float? nan=None``), PyTorch's binding has
    the schema's default and keeps a given value equal to the public one (``nan_to_num(x, 0.0)``
    reaches handlers with its ``0.0``): only the default itself (not given) is left out."""
    value = getattr(default, "value", default)  # (a schema's own spelled default: no public one)
    if default is _MISSING or value is None or value is fill:
        return True
    if int_list:
        value = _int_list(value, int_list)
    elif int_list is None and type(value) is int:
        value = float(value)
    elif type(value) is str and type(fill) is int and value in REDUCTIONS:
        value = REDUCTIONS[value]
    return _same(value, fill)


_MISSING = object()


def _public_form(overload, args: tuple, kwargs: dict, checked: bool = False) -> tuple[tuple, dict]:
    """Arguments in schema form -> the public implementation's (positional, keywords): schema
    names become the public ones (``self`` -> ``input``), a ``SymInt[] size`` becomes ``*size``,
    arguments the public signature lacks (a factory's ``layout``) are left out. ``checked``: the
    caller has checked them against the schema already (``bind`` or ``check_positional``)."""
    plan = overload.__dict__.get("_plan")
    if plan is None:
        plan = overload._plan = _plan(overload)
    names, publics, leading, checks, same = plan
    if not checked and (len(args) > len(names) or not _valid(args, kwargs, checks)):
        bind(overload, args, kwargs)  # raises PyTorch's error for what is wrong
    if same is not None and same.isdisjoint(kwargs):
        return args, kwargs  # the schema's positions and keywords are the implementation's
    if not kwargs and len(args) == len(leading):
        spreads = overload.__dict__.get("_spreads", False)
        if spreads is False:
            spreads = overload._spreads = _spreads(names, leading)
        if spreads is not None:  # each argument is the leading parameter at its position
            positional = []
            for value, spread in zip(args, spreads):
                if spread is None:
                    positional.append(value)
                elif spread:
                    positional.extend(value)
                else:
                    positional.append(tuple(value))
            return tuple(positional), {}
    given = dict(zip(names, args))
    if kwargs:
        given.update(kwargs)
    positional, keywords = [], {}
    for parameter, schema_name, default, tensors in leading:
        value = given.pop(schema_name, default) if schema_name is not None else default
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            if value is _MISSING:
                continue
            if tensors:  # ``block_diag(*tensors)``
                positional.extend(value)
            else:  # as one sequence, which ``*size`` takes too (``rand(())``)
                positional.append(tuple(value))
        elif value is not _MISSING:
            positional.append(value)
    outs = []
    for schema_name, value in given.items():
        public = publics.get(schema_name)
        if public == "out":
            outs.append(value)
        elif public is not None:
            keywords[public] = value
    if outs:
        keywords["out"] = outs[0] if len(outs) == 1 else tuple(outs)
    return tuple(positional), keywords


def _spreads(names: list, leading: list) -> list | None:
    """For ``_public_form``'s calls whose positional arguments are exactly the leading public
    parameters, in order: per parameter None (passed as it is), True (a ``*tensors`` list,
    spread) or False (a ``*size`` list, as one tuple); None where the schema's order is not the
    parameters' (the general conversion then)."""
    spreads = []
    for k, (parameter, schema_name, _default, tensors) in enumerate(leading):
        if k >= len(names) or schema_name != names[k]:
            return None
        spreads.append(tensors if parameter.kind is inspect.Parameter.VAR_POSITIONAL else None)
    return spreads


def public_call(overload, args: tuple, kwargs: dict, checked: bool = False) -> tuple[tuple, dict]:
    """Arguments in schema form -> the public implementation's (positional, keywords), see
    ``_public_form``; a loss's reduction enum back as its string."""
    args, kwargs = _public_form(overload, args, kwargs, checked)
    if overload.__dict__.get("_string_reduction", None) is not False and _takes_string_reduction(overload):
        return _string_reduction(overload, args, kwargs)
    return args, kwargs


def _string_reduction(overload, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A loss's ATen reduction enum given back as the Python loss's string."""
    if type(kwargs.get("reduction")) is int:
        return args, {**kwargs, "reduction": _REDUCTION_NAMES.get(kwargs["reduction"], kwargs["reduction"])}
    position = list(overload._opdef.signature.parameters).index("reduction")
    if position < len(args) and type(args[position]) is int:
        args = (*args[:position], _REDUCTION_NAMES.get(args[position], args[position]), *args[position + 1:])
    return args, kwargs


def _takes_string_reduction(overload) -> bool:
    """Whether the op's public ``reduction`` is a string ('mean'), as the Python losses' (cached)."""
    parameter = overload._opdef.signature.parameters.get("reduction")
    overload._string_reduction = parameter is not None and isinstance(parameter.default, str)
    return overload._string_reduction


def _plan(overload) -> tuple:
    """(the schema's argument names in order, schema name -> public name, the public parameters
    given positionally — those before and at a ``*args`` — with their schema names)."""
    arguments = overload._schema.arguments
    names = [a.name for a in arguments if not a.kwarg_only]
    publics = {a.name: a.public for a in arguments if a.public is not None}
    schema_of = {a.public: a.name for a in arguments if a.public is not None}
    types = {a.public: a.type for a in arguments if a.public is not None}
    parameters = list(overload._opdef.signature.parameters.values())
    variadic = [i for i, p in enumerate(parameters) if p.kind is inspect.Parameter.VAR_POSITIONAL]
    # the first one always positionally: an in-place method's is ``self`` (``Tensor.add_(self, other)``)
    last = variadic[0] if variadic else max(
        [i for i, p in enumerate(parameters) if p.kind is inspect.Parameter.POSITIONAL_ONLY],
        default=0 if parameters and parameters[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD else -1)
    leading = []
    for parameter in parameters[:last + 1]:
        default = parameter.default if parameter.default is not inspect.Parameter.empty else _MISSING
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            default = ()
        leading.append((parameter, schema_of.get(parameter.name), default, types.get(parameter.name, "")
                        .startswith("Tensor")))
    known = frozenset(a.name for a in arguments)
    required = tuple((i, a.name) for i, a in enumerate(arguments)
                     if not a.has_default_value and not a.type.endswith("?") and a.public != "out")
    typed = tuple((i if not a.kwarg_only else -1, a.name, a.type == "Tensor") for i, a in enumerate(arguments)
                  if a.type == "Tensor" or a.type.rstrip("?") in ("Scalar", "float", "int", "SymInt"))
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    same = sum(a.public == "out" for a in arguments) <= 1 and all(
        a.public is not None and (a.name == a.public if a.kwarg_only else
                                  i < len(positional) and positional[i].name == a.public)
        for i, a in enumerate(arguments))
    renamed = frozenset(a.name for a in arguments if a.public is not None and a.name != a.public)
    return names, publics, leading, (known, required, typed), renamed if same else None


def check_positional(overload, args: tuple) -> None:
    """``bind``'s checks of a call given positional arguments only, through the overload's cached
    plan (``_valid``); ``bind`` itself (PyTorch's error) when they fail or for an ``out=`` overload."""
    plan = overload.__dict__.get("_plan")
    if plan is None:
        plan = overload._plan = _plan(overload)
    if overload._kind == "out" or len(args) > len(plan[0]) or not _valid(args, _NO_KWARGS, plan[3]):
        bind(overload, args, {})


_NO_KWARGS: dict = {}


def _valid(args: tuple, kwargs: dict, checks: tuple) -> bool:
    """A quick look at a direct call's arguments (``aten.add.Tensor(x)``): known keywords, the
    required ones given, a tensor or a number where a Tensor goes (PyTorch wraps a number) and none
    where a number goes. False sends the call to ``bind`` for PyTorch's error."""
    known, required, typed = checks
    for key in kwargs:
        if key not in known:
            return False
    count = len(args)
    for position, name in required:
        if position >= count and name not in kwargs:
            return False
    for position, name, takes_tensor in typed:
        if 0 <= position < count:
            value = args[position]
        elif name in kwargs:
            value = kwargs[name]
        else:
            continue
        if takes_tensor:
            if not isinstance(value, (TensorBase, int, float, complex, bool)):
                return False
        elif isinstance(value, TensorBase):
            return False
    return True


# -- the chain -----------------------------------------------------------------------------

def call_overload(overload, args: tuple, kwargs: dict):
    """Run ``overload`` on schema-form arguments below autograd: modes, subclasses, kernel."""
    if FORMULA_CALLS.get() is not None:  # below the formula's call: handlers' own calls are user calls
        token = FORMULA_CALLS.set(None)
        try:
            return run_chain(overload, args, kwargs)
        finally:
            FORMULA_CALLS.reset(token)
    return run_chain(overload, args, kwargs)


def run_chain(overload, args: tuple, kwargs: dict):
    """``call_overload`` where ``FORMULA_CALLS`` is known to be clear."""
    state = STATE.get()
    if state is not None and state.dispatch_active:
        mode = state.dispatch_modes[-1]
        handled = state.dispatch_top_handled
        if handled is not None and overload.overloadpacket not in handled:  # it declared other ops
            return skip_top_mode(overload, args, kwargs, state)
        types = subclass_types(args, kwargs)
        token = None
        try:
            token = STATE.set(state.dispatch_popped())
            result = mode.__torch_dispatch__(overload, types, args, kwargs)
        finally:
            if token is None:
                STATE.set(state)
            else:
                STATE.reset(token)
        if result is not NotImplemented:
            return result
        return after_modes(overload, args, kwargs, state, mode)
    if state is None or state.dispatch_enabled:
        plain = PLAIN.tensor
        for value in args:  # plain tensors and numbers: no subclass to ask (the common case, inline)
            cls = type(value)
            if cls is list or cls is tuple:
                for item in value:
                    if type(item) is not plain and isinstance(item, TensorBase):
                        return after_modes(overload, args, kwargs, state, None)
            elif cls is not plain and isinstance(value, TensorBase):
                return after_modes(overload, args, kwargs, state, None)
        for value in kwargs.values():  # options (``memory_format=``, ``dtype=``) ask no subclass either
            cls = type(value)
            if cls is list or cls is tuple or (cls is not plain and isinstance(value, TensorBase)):
                return after_modes(overload, args, kwargs, state, None)
    # _kernel_end, inline: a frame less on every op a mode passes through
    kernel = overload.__dict__.get("_kernel")
    if kernel is None:
        kernel = _kernel_of(overload)
    try:
        if kwargs or overload._converts:
            public_args, public_kwargs = public_call(overload, args, kwargs)
            return kernel(*public_args, **public_kwargs)
        return kernel(*args)
    except TypeError:
        bind(overload, args, kwargs)  # arguments the schema refuses: PyTorch's RuntimeError (free when right)
        raise


def skip_top_mode(overload, args: tuple, kwargs: dict, state):
    """``run_chain`` for an op the top mode declared it does not handle (``handled_ops``): the
    chain below that mode, as if it were not there."""
    token = None
    try:
        token = STATE.set(state.dispatch_popped())
        return run_chain(overload, args, kwargs)
    finally:
        if token is None:
            STATE.set(state)
        else:
            STATE.reset(token)


def after_modes(overload, args: tuple, kwargs: dict, state, declined):
    """The chain below the modes (``declined``: the mode that returned NotImplemented, else None):
    the subclasses' handlers, then the kernel."""
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
    return _kernel_end(overload, args, kwargs)


def _kernel_end(overload, args: tuple, kwargs: dict):
    """The chain's end, nobody left to ask (also ``Tensor.__torch_dispatch__``'s): the op's
    implementation on schema-form arguments."""
    kernel = overload.__dict__.get("_kernel")
    if kernel is None:
        kernel = _kernel_of(overload)
    try:
        if kwargs or overload._converts:
            public_args, public_kwargs = public_call(overload, args, kwargs)
            return kernel(*public_args, **public_kwargs)
        return kernel(*args)
    except TypeError:
        bind(overload, args, kwargs)  # arguments the schema refuses: PyTorch's RuntimeError (free when right)
        raise


def subclass_types(args: tuple, kwargs: dict) -> tuple:
    """The ``types`` a mode's handler is given: the classes of the ``__torch_dispatch__``
    subclasses among the arguments, in dispatch order (() for plain ones)."""
    plain = PLAIN.tensor
    for value in args:
        cls = type(value)
        if cls is list or cls is tuple:
            for item in value:
                if type(item) is not plain and isinstance(item, TensorBase):
                    return tuple([type(a) for a in dispatch_classes((*args, *kwargs.values()))])
        elif cls is not plain and isinstance(value, TensorBase):
            return tuple([type(a) for a in dispatch_classes((*args, *kwargs.values()))])
    return tuple([type(a) for a in dispatch_classes(kwargs.values())]) if kwargs else ()


def _subclass_args(args: tuple, kwargs: dict) -> list:
    for value in args:
        cls = type(value)
        if cls is not PLAIN.tensor and (cls is list or cls is tuple or isinstance(value, TensorBase)):
            return dispatch_classes((*args, *kwargs.values()))
    return dispatch_classes(kwargs.values()) if kwargs else []


def _kernel_of(overload) -> Callable:
    """The end of ``overload``'s chain: the op's implementation below the dispatch level (which
    takes the public form of the arguments; cached on the overload). ``_converts``: whether
    positional schema-form arguments need ``public_call`` (they do not when they are the
    leading public parameters, in order)."""
    positional = [a.public for a in overload._schema.arguments if not a.kwarg_only]
    parameters = list(overload._opdef.signature.parameters.values())[:len(positional)]
    overload._converts = [p.name for p in parameters] != positional or any(
        p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY) for p in parameters) or \
        _takes_string_reduction(overload)
    kernel = overload._kernel = HOOKS.chain_end(overload._opdef, overload._kind)
    if not overload._converts:
        overload._plain_kernel = kernel  # (``OpOverload.__call__`` calls it itself)
    elif _tensor_then_size(overload, parameters, positional):
        overload._plain_kernel = _size_as_tuple(overload, kernel)
    return kernel


def _tensor_then_size(overload, parameters: list, positional: list) -> bool:
    """Whether ``overload`` is ``op(Tensor self, SymInt[] size)`` over a public ``op(input, *size)``
    (``view``, ``expand``, ``permute``...): its only conversion is the list given as one tuple."""
    arguments = [a for a in overload._schema.arguments if not a.kwarg_only]
    return len(arguments) == 2 == len(parameters) and arguments[0].type == "Tensor" and \
        arguments[1].type.startswith(("SymInt[", "int[")) and [p.name for p in parameters] == positional and \
        parameters[0].kind is parameters[0].POSITIONAL_OR_KEYWORD and \
        parameters[1].kind is parameters[1].VAR_POSITIONAL and not _takes_string_reduction(overload)


def _size_as_tuple(overload, kernel: Callable) -> Callable:
    """``OpOverload.__call__``'s kernel end for a ``_tensor_then_size`` overload: a plain tensor and
    a list as ``public_call`` would pass them (the list as one tuple); anything else the chain's way."""
    plain = PLAIN.tensor

    def size_as_tuple(*args):
        if len(args) == 2 and type(args[0]) is plain and (type(args[1]) is list or type(args[1]) is tuple):
            return kernel(args[0], tuple(args[1]))
        return run_chain(overload, args, {})

    return size_as_tuple


