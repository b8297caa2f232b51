"""Generates the dispatching wrappers that every public callable is made of.

Every public function, method, operator and property is a small generated
function with this shape (here for ``add``)::

    def add(input, other, *, alpha=1, out=None):
        state = _get_state()
        if (state is None or <no mode handles add>) and type(input) is _T and <other plain>:
            ...                                  # kernel on the ndarrays, wrap, return
        _kwargs = {}                             # optional arguments that were given
        if alpha is not _default_alpha:
            _kwargs["alpha"] = alpha
        ...
        return _dispatch(_api, (input, other), _kwargs, (input, other), _impl, _leaf)

The real signature lets Python bind the arguments (fast, and the right
TypeError for a bad call). Code generation, rather than one generic closure,
keeps the hot path free of ``inspect``, ``*args`` packing, dict building and
loops.
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass

from . import _dispatch, _generated

__all__ = ["Relevant", "make_callable", "make_accessor", "set_api", "parameter_list"]


# What a parameter may hold, as far as dispatch is concerned.
TENSOR, OPTIONAL_TENSOR, TENSOR_OR_SCALAR, OPTIONAL_TENSOR_OR_SCALAR, TENSOR_LIST, INDEX, ANY, ANY_LIST = (
    "tensor", "optional_tensor", "tensor_or_scalar", "optional_tensor_or_scalar", "tensor_list", "index", "any",
    "any_list")

# Python numbers the fast path accepts where a scalar may stand in for a tensor.
SCALAR_TYPES = frozenset({int, float, bool, complex})


@dataclass(frozen=True)
class Relevant:
    """A parameter that may carry a ``__torch_function__`` override."""

    name: str
    kind: str


def parameter_list(signature: inspect.Signature, defaults: dict) -> tuple[str, str]:
    """Source text for a ``def`` of ``signature`` and for a call passing every parameter on.

    Default values are bound through names put in ``defaults`` (they need not
    have a valid ``repr``).
    """
    params, call = [], []
    star_done = False
    for p in signature.parameters.values():
        text = p.name
        if p.default is not inspect.Parameter.empty:
            key = f"_default_{p.name}"
            defaults[key] = p.default
            text += f"={key}"
        if p.kind is p.VAR_POSITIONAL:
            text = f"*{p.name}"
            star_done = True
            call.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
            call.append(f"**{p.name}")
        elif p.kind is p.KEYWORD_ONLY:
            if not star_done:
                params.append("*")
                star_done = True
            call.append(f"{p.name}={p.name}")
        elif p.kind is p.POSITIONAL_ONLY:
            call.append(p.name)
        else:
            call.append(p.name)
        params.append(text)
        if p.kind is p.POSITIONAL_ONLY and _last_positional_only(signature, p):
            params.append("/")
    return ", ".join(params), ", ".join(call)


def _last_positional_only(signature, param) -> bool:
    kinds = [p.kind for p in signature.parameters.values()]
    names = list(signature.parameters)
    i = names.index(param.name)
    return i + 1 == len(kinds) or kinds[i + 1] is not inspect.Parameter.POSITIONAL_ONLY


def fast_condition(relevant: list[Relevant], no_grad: bool = False) -> str:
    """A Python expression true when every relevant argument is a plain Tensor (or scalar).

    ``no_grad`` also requires that no tensor requires grad (ops that record for
    autograd take the slow path then).
    """
    plain = "(type({n}) is _T and not {n}._requires_grad)" if no_grad else "type({n}) is _T"
    terms = []
    for r in relevant:
        n = r.name
        tensor = plain.format(n=n)
        if r.kind == TENSOR:
            terms.append(tensor)
        elif r.kind == OPTIONAL_TENSOR:
            terms.append(f"({n} is None or {tensor})")
        elif r.kind == TENSOR_OR_SCALAR:
            terms.append(f"({tensor} or type({n}) in _SCALARS)")
        elif r.kind == OPTIONAL_TENSOR_OR_SCALAR:
            terms.append(f"({n} is None or {tensor} or type({n}) in _SCALARS)")
        elif r.kind == TENSOR_LIST:
            terms.append(f"_all_plain_no_grad({n})" if no_grad else f"_all_plain({n})")
        elif r.kind == INDEX:
            terms.append(f"_plain_index({n})")
        elif r.kind == ANY_LIST:
            terms.append(f"_all_plain_values({n})")
        else:
            terms.append(f"type({n}) in _PLAIN_VALUES")
    return " and ".join(terms) or "True"


def relevant_expression(relevant: list[Relevant]) -> str:
    parts = []
    for r in relevant:
        if r.kind in (TENSOR_LIST, ANY_LIST):
            parts.append(f"*_as_tuple({r.name})")
        elif r.kind == INDEX:
            parts.append(f"*_index_items({r.name})")
        else:
            parts.append(r.name)
    return "(" + "".join(p + ", " for p in parts) + ")"


def _all_plain(values) -> bool:
    # A tensor is not a list of tensors (tm.cat(x) is an error, as in PyTorch).
    if type(values) is not list and type(values) is not tuple:
        return False
    tensor = _NAMESPACE["_T"]
    return all(type(v) is tensor for v in values)


def _all_plain_values(values) -> bool:
    tensor, plain = _NAMESPACE["_T"], _NAMESPACE["_PLAIN_VALUES"]
    return all(type(v) is tensor or type(v) in plain for v in values)


def _all_plain_no_grad(values) -> bool:
    if type(values) is not list and type(values) is not tuple:
        return False
    tensor = _NAMESPACE["_T"]
    return all(type(v) is tensor and not v._requires_grad for v in values)


def _as_tuple(values) -> tuple:
    try:
        return tuple(values)
    except TypeError:
        return (values,)


_PLAIN_INDEX_TYPES = frozenset({int, slice, type(None), type(Ellipsis), bool})


def _plain_index(index) -> bool:
    """True if an index holds nothing that could override (ints, slices, plain tensors)."""
    tensor = _NAMESPACE["_T"]
    if type(index) is tuple:
        return all(type(i) in _PLAIN_INDEX_TYPES or type(i) is tensor for i in index)
    return type(index) in _PLAIN_INDEX_TYPES or type(index) is tensor


def _index_items(index) -> tuple:
    """The parts of an index that may carry overrides (one level into tuples and lists)."""
    items = index if isinstance(index, (tuple, list)) else (index,)
    return tuple(i for i in items if type(i) not in _PLAIN_INDEX_TYPES)


# Names every generated function can use; "_T" is the Tensor class, bound by
# the Tensor layer once the class exists (the generator never imports upward).
_NAMESPACE: dict = {
    "_get_state": _dispatch.get_state,
    "_set_state": _dispatch.set_state,
    "_reset_state": _dispatch.reset_state,
    "_declined": _dispatch.declined,
    "_dispatch": _dispatch.dispatch,
    "_SCALARS": SCALAR_TYPES,
    "_all_plain": _all_plain,
    "_as_tuple": _as_tuple,
    "_all_plain_values": _all_plain_values,
    "_all_plain_no_grad": _all_plain_no_grad,
    "_plain_index": _plain_index,
    "_index_items": _index_items,
}


def bind_tensor_type(tensor_type: type, plain_values: frozenset) -> None:
    """Called once by the Tensor layer: the class the fast path checks for, and the
    argument types that never carry overrides."""
    _NAMESPACE["_T"] = tensor_type
    _NAMESPACE["_PLAIN_VALUES"] = plain_values
    _dispatch.add_plain_type(tensor_type)


def _exec(source: str, names: dict, name: str, qualname: str, label: str):
    namespace = dict(_NAMESPACE)
    namespace.update(names)
    func = _generated.define(source, name, namespace, qualname=qualname, label=label)
    return func, namespace


def _slow_call_arguments(signature: inspect.Signature, pass_defaults: bool = False) -> tuple[str, str]:
    """Source building the ``args`` tuple and ``kwargs`` dict handed to overrides.

    Required parameters travel positionally, optional ones as keywords and only
    when they differ from their defaults - PyTorch's handlers see the same
    for calls written in the usual style (``x.sum(dim=1)`` -> ``(x,), {'dim': 1}``).
    ``pass_defaults`` passes every optional parameter, as PyTorch's Python-level
    functions (``F.relu`` -> ``{'inplace': False}``) do.
    """
    positional, keyword_lines = [], []
    star = None
    for p in signature.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            star = p.name
        elif p.kind is p.VAR_KEYWORD:
            keyword_lines.append(f"_kwargs.update({p.name})")
        elif p.default is inspect.Parameter.empty:
            positional.append(p.name)
        elif pass_defaults:
            keyword_lines.append(f"_kwargs[{p.name!r}] = {p.name}")
        else:
            keyword_lines.append(f"if {p.name} is not _default_{p.name}:\n    _kwargs[{p.name!r}] = {p.name}")
    args = "(" + "".join(f"{n}, " for n in positional) + ")"
    if star:
        args = f"{args} + tuple({star})"
    return args, "\n".join(["_kwargs = {}", *keyword_lines])


def _slow_path(args: str, relevant: list[Relevant], leaf: str) -> str:
    """Source of the slow path: one pass-through mode on plain arguments is handled
    inline (every nested mode pays for this path), anything else by ``_dispatch``."""
    return f"""\
if state is not None and state.handler is not None and {fast_condition(relevant)}:
    _token = _set_state(state.handler_below)
    try:
        result = state.handler.__torch_function__(_api, (), {args}, _kwargs)
    finally:
        _reset_state(_token)
    if result is not NotImplemented:
        return result
    raise _declined(_api, state.handler)
return _dispatch(_api, {args}, _kwargs, {relevant_expression(relevant)}, _impl, {leaf})"""


def make_callable(name: str, signature: inspect.Signature, relevant: list[Relevant], impl, *,
                  leaf: bool, fast_body: str | None = None, fast_names: dict | None = None,
                  qualname: str | None = None, doc: str | None = None, module: str = "tensormodes",
                  not_implemented_on_type_error: bool = False, pass_defaults: bool = False,
                  records_grad: bool = False, hot_path: tuple[str, str] | None = None, prologue: str = ""):
    """A public callable with ``signature``, dispatching through the override layer.

    ``fast_body`` (unindented source) runs when every relevant argument is plain
    (default: return ``impl`` called with every parameter); it returns the
    result, or falls through to the slow path. Operators pass
    ``not_implemented_on_type_error`` so that Python can try the reflected
    operator, as PyTorch does. ``pass_defaults``: see ``_slow_call_arguments``.
    ``records_grad``: the callable records autograd history, so tensors that
    require grad leave the fast path. ``hot_path``: ``(condition, body)`` tried
    before the fast path when no mode is active (body falls through if it cannot help).
    ``prologue``: a source line rebinding parameters first (an op's ``normalize``).
    """
    names = dict(fast_names or {})
    names["_impl"] = impl
    names["_leaf"] = leaf
    params, call = parameter_list(signature, names)
    body = textwrap.indent(fast_body if fast_body is not None else f"return _impl({call})", " " * 8)
    args, kwargs = _slow_call_arguments(signature, pass_defaults)
    slow = _slow_path(args, relevant, "_leaf")
    hot = ""
    if hot_path is not None:
        condition, hot_body = hot_path
        hot = textwrap.indent(f"if state is None and {condition}:\n" + textwrap.indent(hot_body, "    "), "    ") + "\n"
    if not_implemented_on_type_error:
        slow = f"try:\n{textwrap.indent(slow, '    ')}\nexcept TypeError:\n    return NotImplemented"
    prologue = f"    {prologue}\n" if prologue else ""
    source = f"""
def _relevant({params}):
{prologue}    return {relevant_expression(relevant)}

def {name}({params}):
{prologue}    state = _get_state()
{hot}    if (state is None or (state.fast_skip is not None and _api not in state.fast_skip)) and \\
            {fast_condition(relevant, records_grad)}:
{body}
{textwrap.indent(kwargs, "    ")}
{textwrap.indent(slow, "    ")}
"""
    qualname = qualname or name
    func, namespace = _exec(source, names, name, qualname, f"{module}.{qualname}")
    namespace["_api"] = func
    _dispatch.RELEVANT_OF[func] = namespace["_relevant"]
    _dispatch.IMPLS[func] = impl
    func.__module__ = module
    func.__doc__ = doc
    return func


def set_api(func, api) -> None:
    """Make ``func`` present itself to handlers as ``api`` (``Tensor.add`` for ``__add__``)."""
    func.__globals__["_api"] = api
    _dispatch.RELEVANT_OF.setdefault(api, func.__globals__["_relevant"])
    _dispatch.IMPLS.setdefault(api, func.__globals__["_impl"])


def make_accessor(name: str, qualname: str, params: str, relevant: list[Relevant], impl, fast_body: str,
                  names: dict):
    """A property getter or setter: fixed parameters, no keywords, no defaults.

    Its public identity (``Tensor.shape.__get__``) exists only once the property
    does, so the caller binds it afterwards with ``set_api``.
    """
    source = f"""
def _relevant({params}):
    return {relevant_expression(relevant)}

def {name}({params}):
    state = _get_state()
    if (state is None or (state.fast_skip is not None and _api not in state.fast_skip)) and {fast_condition(relevant)}:
        {fast_body}
    _kwargs = {{}}
{textwrap.indent(_slow_path(f"({params},)", relevant, "True"), "    ")}
"""
    func, _ = _exec(source, {**names, "_impl": impl, "_api": None}, name, qualname, f"tensormodes.{qualname}")
    return func
