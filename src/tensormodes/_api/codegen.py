"""The one author of every generated public callable.

Every public function, method, operator and property is a small generated
function; this module writes each one's whole source, and nothing else does.
Its path reads top to bottom through the layers of ``docs/layout.md`` (here
for ``add``)::

    def add(input, other, *, alpha=_default_alpha, out=_default_out):
        state = _get_state()                          # the override layer: one ContextVar read
        if state is None and type(input) is _T ...:   # plain tensors, no mode: the fast path
            ...
            result = _ufunc(_a, _b)                   # the kernel-call site
            if input._requires_grad ...:              # autograd records the call
                return _rec(input, other, alpha, _wrap(result))
            ...                                       # wrap the array and return
        _kwargs = {}                                  # anything else: modes and subclasses
        ...
        return _dispatch(_api, (input, other), _kwargs, (input, other, out), _impl, _leaf)

and ``_impl`` (one per op, shared by its function, method and operators) runs the
same three steps for the calls the override layer lets through: unwrap (with
PyTorch's argument errors), the kernel-call site, autograd recording.

**The kernel-call site.** Every call of an op's kernel in generated code is
written by :func:`kernel_call`, which unwraps the arguments and calls the expression
the dispatch level gives (``_dispatch/kernel_site.py``: what runs below autograd,
written once — the meta rule or the NumPy kernel today; the seam where dispatch-level
modes and tracers plug in), with the names it binds.

The real signature lets Python bind the arguments (fast, and the right
TypeError for a bad call). Code generation, rather than one generic closure,
keeps the hot path free of ``inspect``, ``*args`` packing, dict building and
loops. Every function is defined through ``tensormodes._generated``, so
``inspect.getsource(tm.add)`` shows it.
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass

from .. import _generated
from .._autograd.graph import make_recorder
from .._dispatch import kernel_site, python_dispatch
from .._ops import OpDef
from .._ops.meta_rules import metadata
from .._ops.registry import TensorKind
from .._overrides import dispatch as _dispatch
from . import dispatch_level
from .runtime import GENERATED_NAMES

__all__ = ["Relevant", "make_callable", "make_accessor", "op_callable", "set_api", "parameter_list",
           "function_signature", "as_method", "relevant_parameters"]


@dataclass(frozen=True)
class Relevant:
    """A parameter that may carry a ``__torch_function__`` override."""

    name: str
    kind: TensorKind


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


# A plain tensor, as the fast path sees it: a Tensor or a Parameter (exact types; a subclass
# may override). One test for the common case, a second only when the first fails.
_PLAIN = "(type({n}) is _T or type({n}) is _P)"


def _plain(name: str) -> str:
    return _PLAIN.format(n=name)


def fast_condition(relevant: list[Relevant], no_grad: bool = False) -> str:
    """A Python expression true when every relevant argument is a plain Tensor (or scalar).

    ``no_grad`` also requires that no tensor requires grad (ops that record for
    autograd take the slow path then).
    """
    plain = f"({_PLAIN} and not {{n}}._requires_grad)" if no_grad else _PLAIN
    terms = []
    for r in relevant:
        n = r.name
        tensor = plain.format(n=n)
        if r.kind == TensorKind.TENSOR:
            terms.append(tensor)
        elif r.kind == TensorKind.OPTIONAL_TENSOR:
            terms.append(f"({n} is None or {tensor})")
        elif r.kind == TensorKind.TENSOR_OR_SCALAR:
            terms.append(f"({tensor} or type({n}) in _SCALARS)")
        elif r.kind == TensorKind.OPTIONAL_TENSOR_OR_SCALAR:
            terms.append(f"({n} is None or {tensor} or type({n}) in _SCALARS)")
        elif r.kind == TensorKind.TENSOR_LIST:
            terms.append(f"_all_plain_no_grad({n})" if no_grad else f"_all_plain({n})")
        elif r.kind == TensorKind.INDEX:
            terms.append(f"_plain_index({n})")
        elif r.kind == TensorKind.ANY_LIST:
            terms.append(f"_all_plain_values({n})")
        else:
            terms.append(f"type({n}) in _PLAIN_VALUES")
    return " and ".join(terms) or "True"


def relevant_expression(relevant: list[Relevant]) -> str:
    parts = []
    for r in relevant:
        if r.kind in (TensorKind.TENSOR_LIST, TensorKind.ANY_LIST):
            parts.append(f"*_as_tuple({r.name})")
        elif r.kind == TensorKind.INDEX:
            parts.append(f"*_index_items({r.name})")
        else:
            parts.append(r.name)
    return "(" + "".join(p + ", " for p in parts) + ")"


def _exec(source: str, names: dict, name: str, qualname: str, label: str):
    namespace = dict(GENERATED_NAMES)
    namespace.update(names)
    func = _generated.define(source, name, namespace, qualname=qualname, label=label)
    return func, namespace


def _slow_call_arguments(signature: inspect.Signature, pass_defaults: bool = False,
                         relevant: list[Relevant] | None = None) -> tuple[str, str]:
    """Source building the ``args`` tuple and ``kwargs`` dict handed to overrides.

    Required parameters travel positionally, optional ones as keywords and only
    when they differ from their defaults - PyTorch's handlers see the same
    for calls written in the usual style (``x.sum(dim=1)`` -> ``(x,), {'dim': 1}``).
    Optional tensors right after the required parameters (``F.linear``'s ``bias``, ``conv2d``'s)
    are in the usual style passed positionally, so they travel positionally when given
    (``F.linear(x, w, b)`` -> ``(x, w, b), {}``, as PyTorch hands on its builtins' arguments).
    ``pass_defaults`` passes every optional parameter as a keyword, as PyTorch's Python-level
    functions (``F.relu`` -> ``{'inplace': False}``) do.
    """
    tensors = {r.name for r in relevant or () if r.kind == "optional_tensor"}
    positional, keyword_lines, trailing = [], [], []
    star = None
    for p in signature.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            star = p.name
        elif p.kind is p.VAR_KEYWORD:
            keyword_lines.append(f"_kwargs.update({p.name})")
        elif p.default is inspect.Parameter.empty and p.kind is p.KEYWORD_ONLY:
            keyword_lines.append(f"_kwargs[{p.name!r}] = {p.name}")  # required, keyword-only (``size=``)
        elif p.default is inspect.Parameter.empty:
            positional.append(p.name)
        elif pass_defaults:
            keyword_lines.append(f"_kwargs[{p.name!r}] = {p.name}")
        elif (p.name in tensors and p.kind is p.POSITIONAL_OR_KEYWORD and not star
              and len(trailing) == len(keyword_lines)):
            trailing.append(p.name)  # still in the run of positional optional tensors
            keyword_lines.append("")
        else:
            keyword_lines.append(f"if {p.name} is not _default_{p.name}:\n    _kwargs[{p.name!r}] = {p.name}")
    args = "(" + "".join(f"{n}, " for n in positional) + ")"
    if star:
        args = f"{args} + tuple({star})"
    lines = ["_kwargs = {}", *filter(None, keyword_lines)]
    if trailing:
        # each given one extends the positional run; after a left-out one, given ones are keywords
        lines += [f"_args = {args}", "_run = True"]
        lines += [f"if {n} is _default_{n}:\n    _run = False\nelif _run:\n    _args += ({n},)\n"
                  f"else:\n    _kwargs[{n!r}] = {n}" for n in trailing]
        args = "_args"
    return args, "\n".join(lines)


def _dispatch_lane(relevant: list[Relevant], call: str, operator: bool) -> str:
    """Source of the lane an op's form takes when a dispatch mode listens and nothing at the
    ``__torch_function__`` level does (``state.dispatch_lane``) and its arguments are plain: the
    implementation directly, as ``_dispatch`` would call it (before the slow path builds the
    handlers' ``kwargs``). An operator's TypeError is NotImplemented, as on the slow path."""
    lane = f"if state is not None and state.dispatch_lane and {fast_condition(relevant)}:\n    return {call}"
    if operator:
        lane = (f"try:\n{textwrap.indent(lane, '    ')}\nexcept _DispatchFailed:\n    raise\n"
                "except TypeError:\n    return NotImplemented")
    return lane + "\n"


def _slow_path(args: str, relevant: list[Relevant], leaf: str) -> str:
    """Source of the slow path: one pass-through mode on plain arguments is handled
    inline (every nested mode pays for this path), anything else by ``_dispatch``.

    The state is set inside the ``try``, so that an exception arriving right after the set
    (a signal handler's) cannot leave the mode popped: the token is then still None and
    the state is restored by value (else by the token, cheaper than a second set). The
    restore is inline: a helper's call would be one more point where a signal handler runs."""
    return f"""\
if state is not None and state.handler is not None and {fast_condition(relevant)}:
    _token = None
    try:
        _token = _set_state(state.handler_below)
        result = state.handler.__torch_function__(_api, (), {args}, _kwargs)
    finally:
        if _token is None:
            _set_state(state)
        else:
            _reset_state(_token)
    if result is not NotImplemented:
        return result
    raise _declined(_api, state.handler)
return _dispatch(_api, {args}, _kwargs, {relevant_expression(relevant)}, _impl, {leaf})"""


def make_callable(name: str, signature: inspect.Signature, relevant: list[Relevant], impl, *,
                  leaf: bool, fast_body: str | None = None, fast_names: dict | None = None,
                  qualname: str | None = None, doc: str | None = None, module: str = "tensormodes",
                  not_implemented_on_type_error: bool = False, pass_defaults: bool = False,
                  records_grad: bool = False, hot_path: tuple[str, str] | None = None, prologue: str = "",
                  runs_kernel: bool = False, dispatch_call: str | None = None):
    """A public callable with ``signature``, dispatching through the override layer.

    ``fast_body`` (unindented source) runs when every relevant argument is plain
    (default: return ``impl`` called with every parameter); it returns the
    result, or falls through to the slow path. Operators pass
    ``not_implemented_on_type_error`` so that Python can try the reflected
    operator, as PyTorch does. ``pass_defaults``: see ``_slow_call_arguments``.
    ``records_grad``: the callable records autograd history, so tensors that
    require grad leave the fast path. ``hot_path``: ``(condition, body)`` tried
    before the fast path when no mode is active (body falls through if it cannot help).
    ``runs_kernel``: the fast path calls a kernel itself (an op's forms), so it is closed while a
    dispatch-level mode listens; other callables (properties, the Tensor's own methods) keep it. Its
    body repeats the fast path's first case on purpose: under one combined condition the
    commonest call (plain tensors, no mode, defaults) pays one test instead of the fast path's
    nested ones.
    ``prologue``: a source line rebinding parameters first (an op's ``normalize``).
    ``dispatch_call``: what the dispatch lane (``_dispatch_lane``) calls, the implementation by
    default.
    """
    names = dict(fast_names or {})
    names["_impl"] = impl
    names["_leaf"] = leaf
    params, call = parameter_list(signature, names)
    body = textwrap.indent(fast_body if fast_body is not None else f"return _impl({call})", " " * 8)
    args, kwargs = _slow_call_arguments(signature, pass_defaults, relevant)
    slow = _slow_path(args, relevant, "_leaf")
    lane = _dispatch_lane(relevant, dispatch_call or f"_impl({call})", not_implemented_on_type_error) \
        if runs_kernel else ""
    hot = ""
    if hot_path is not None:
        condition, hot_body = hot_path
        hot = textwrap.indent(f"if state is None and {condition}:\n" + textwrap.indent(hot_body, "    "), "    ") + "\n"
    if not_implemented_on_type_error:
        names["_DispatchFailed"] = python_dispatch.MultipleDispatchFailed
        slow = (f"try:\n{textwrap.indent(slow, '    ')}\nexcept _DispatchFailed:\n    raise\n"
                "except TypeError:\n    return NotImplemented")
    prologue = f"    {prologue}\n" if prologue else ""
    skip = "fast_skip" if runs_kernel else "fast_skip_above"
    fast = f"""\
{hot}    if (state is None or (state.{skip} is not None and _api not in state.{skip})) and \\
            {fast_condition(relevant, records_grad)}:
{body}"""
    # A private op (``_gelu``) is what a public function runs: its failure goes up to that
    # function, whose handler PyTorch calls (``F.gelu``).
    others = "" if name.startswith("_") and not name.startswith("__") else _other_values(signature, relevant)
    if others:
        fast = _retried_for_tensor_likes(fast, others, args, kwargs)
    source = f"""\
def _relevant({params}):
{prologue}    return {relevant_expression(relevant)}

def {name}({params}):
{prologue}    state = _get_state()
{fast}
{textwrap.indent(lane, "    ")}{textwrap.indent(kwargs, "    ")}
{textwrap.indent(slow, "    ")}
"""
    qualname = qualname or name
    func, namespace = _exec(source, names, name, qualname, f"{module}.{qualname}")
    namespace["_api"] = func
    _dispatch.RELEVANT_OF[func] = namespace["_relevant"]
    _dispatch.IMPLS[func] = impl
    if not any(_required(signature.parameters[r.name]) for r in relevant):
        # Nothing a caller must pass can carry an override (factories: ``zeros(2)``); such a
        # callable is among PyTorch's ignored functions, though modes and ``out=`` still see it.
        _dispatch.NO_REQUIRED_TENSOR.add(func)
    func.__module__ = module
    func.__doc__ = doc
    return func


def _retried_for_tensor_likes(fast: str, others: str, args: str, kwargs: str) -> str:
    """``fast`` (the hot and fast paths' source) in a try: a tensor-like where no tensor goes
    makes it fail (see the override layer's ``tensor_likes_in``), and the call is dispatched
    to it. The try costs nothing until something raises."""
    return f"""\
    try:
{textwrap.indent(fast, "    ")}
    except Exception as _error:
        _found = _tensor_likes_in(_error, {others})
        if not _found:
            raise
{textwrap.indent(kwargs, "        ")}
        return _dispatch_tensor_likes(_api, {args}, _kwargs, _found, _impl, _leaf)"""


def _other_values(signature: inspect.Signature, relevant: list[Relevant]) -> str:
    """Source of a tuple of the arguments no tensor goes in (each ``*args`` item one of them),
    or "" if every parameter is a tensor parameter."""
    tensors = {r.name for r in relevant}
    parts = []
    for p in signature.parameters.values():
        if p.name in tensors:
            continue
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"*{p.name}.values()")
        else:
            parts.append(p.name)
    return "(" + "".join(f"{part}, " for part in parts) + ")" if parts else ""


def _required(parameter: inspect.Parameter) -> bool:
    return parameter.kind is parameter.VAR_POSITIONAL or (
        parameter.default is inspect.Parameter.empty and parameter.kind is not parameter.VAR_KEYWORD)


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
    source = f"""\
def _relevant({params}):
    return {relevant_expression(relevant)}

def {name}({params}):
    state = _get_state()
    if (state is None or (state.fast_skip_above is not None and _api not in state.fast_skip_above)) and \\
            {fast_condition(relevant)}:
        {fast_body}
    _kwargs = {{}}
{textwrap.indent(_slow_path(f"({params},)", relevant, "True"), "    ")}
"""
    func, _ = _exec(source, {**names, "_impl": impl, "_api": None}, name, qualname, f"tensormodes.{qualname}")
    return func


# -- ops: the source behind each form of an op ------------------------------------------

UNWRAP = {
    TensorKind.INDEX: "_index_arg",
    TensorKind.TENSOR: "_tensor_arg",
    TensorKind.OPTIONAL_TENSOR: "_optional_tensor_arg",
    TensorKind.TENSOR_OR_SCALAR: "_tensor_or_scalar_arg",
    TensorKind.OPTIONAL_TENSOR_OR_SCALAR: "_optional_tensor_or_scalar_arg",
    TensorKind.TENSOR_LIST: "_tensor_list_arg",
}


def _with_out(signature: inspect.Signature) -> inspect.Signature:
    params = list(signature.parameters.values())
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return signature.replace(parameters=params, return_annotation=inspect.Signature.empty)


def as_method(signature: inspect.Signature) -> inspect.Signature:
    """``signature`` with its first parameter as a method's ``self``."""
    params = list(signature.parameters.values())
    params[0] = params[0].replace(name="self", kind=inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  default=inspect.Parameter.empty)
    return signature.replace(parameters=params, return_annotation=inspect.Signature.empty)


def relevant_parameters(signature: inspect.Signature, kinds: dict[str, str]) -> list[Relevant]:
    """The parameters that may carry overrides, in signature order."""
    return [Relevant(name, kinds[name]) for name in signature.parameters if name in kinds]


def kernel_call(opdef: OpDef, signature: inspect.Signature, fast: bool, keywords: bool = True) -> str:
    """Source of the kernel call, unwrapping each tensor parameter.

    ``keywords=False`` leaves out the keyword-only parameters (the caller has
    checked they hold their defaults): keyword passing is slow in CPython.
    """
    parts = []
    kernel_params = list(opdef.signature.parameters.values())
    names = list(signature.parameters)
    for position, (p, name) in enumerate(zip(kernel_params, names), start=1):
        kind = opdef.tensor_params.get(p.name)
        if kind is None:
            value = name
        elif fast:
            value = {
                TensorKind.TENSOR: f"{name}._data",
                TensorKind.OPTIONAL_TENSOR: f"(None if {name} is None else {name}._data)",
                TensorKind.TENSOR_OR_SCALAR: f"({name}._data if {_plain(name)} else {name})",
                TensorKind.OPTIONAL_TENSOR_OR_SCALAR: f"({name}._data if {_plain(name)} else {name})",
                TensorKind.TENSOR_LIST: f"[_v._data for _v in {name}]",
                TensorKind.INDEX: f"_index_arg({name}, None, None, None)",
            }[kind]
        elif kind in (TensorKind.TENSOR, TensorKind.TENSOR_OR_SCALAR):
            # Inline for the common case (a Tensor, maybe a subclass); the helper
            # validates everything else and raises PyTorch's TypeError.
            value = (f"({name}._data if isinstance({name}, _Tensor) else "
                     f"{UNWRAP[kind]}({name}, {opdef.name!r}, {p.name!r}, {position}))")
        else:
            value = f"{UNWRAP[kind]}({name}, {opdef.name!r}, {p.name!r}, {position})"
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{value}")
        elif p.kind is p.KEYWORD_ONLY:
            if keywords or p.default is inspect.Parameter.empty:  # a required one is always passed
                parts.append(f"{p.name}={value}")
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{value}")
        else:
            parts.append(value)
    return f"{kernel_site.callee(opdef, signature, fast)}({', '.join(parts)})"


def _keyword_defaults(opdef: OpDef) -> str:
    """Condition: every keyword-only parameter of the kernel holds its default."""
    terms = [f"{p.name} is _default_{p.name}" for p in opdef.signature.parameters.values()
             if p.kind is p.KEYWORD_ONLY and p.default is not inspect.Parameter.empty]
    return " and ".join(terms)


_WRAP_RESULT = """\
if type(result) is _ND:
    t = _new(_Tensor)
    t._data = result
    t._requires_grad = False
    return t
return _wrap(result)"""

# The same, for ops that record for autograd on the fast path: plain tensors that
# require grad are recorded right here instead of taking the slow path.
_WRAP_AND_RECORD = """\
if ({requires_grad}) and _grad_enabled():
    return _rec({arguments}, _wrap(result){saved})
""" + _WRAP_RESULT


_WRAP_VIEW_AND_RECORD = """\
t = {wrapped}
if ({requires_grad}) and _grad_enabled():
    return _rec({arguments}, t)
return t"""


# Ops declared with ``saves=``: the kernel returns intermediates for the gradient formula after its result.
_SPLIT_SAVED = "result, _saved = result[0], result[1:]"


def _saved_argument(opdef: OpDef) -> str:
    return ", _saved" if opdef.saves else ""


def _block(header: str, body: str) -> str:
    return f"{header}\n{textwrap.indent(body, '    ')}"


def _ufunc_operands(opdef: OpDef, signature: inspect.Signature) -> list[str]:
    """The names (under ``signature``) of the operands a ufunc-hinted op applies its ufunc to."""
    return [n for n, p in zip(signature.parameters, opdef.signature.parameters) if p in opdef.tensor_params]


def _unary_ufunc(a: str, wrap) -> str:
    """The ufunc on a tensor ``a`` known to be plain, when its dtype is floating."""
    call = kernel_site.ufunc_call("_a")
    return f"_a = {a}._data\n" + _block('if _a.dtype.kind == "f":', f"result = {call}\n" + wrap([a]))


def _same_dtype_ufunc(a: str, b: str, wrap) -> str:
    """The ufunc on ``_a`` and ``_b``, the arrays of plain tensors ``a`` and ``b``.

    One floating dtype: the ufunc hint promises the exact result (see registry.op); other
    dtypes go to the kernel, which knows which ops PyTorch refuses for them (bool matmul ...).
    """
    return _block('if _a.dtype is _b.dtype and _a.dtype.kind == "f":',
                  _block("try:", f"result = {kernel_site.ufunc_call('_a', '_b')}") + "\n"
                  + _block("except (ValueError, TypeError):", "pass  # the kernel raises PyTorch's error")
                  + "\n" + _block("else:", wrap([a, b])))


def _ufunc_block(opdef: OpDef, signature: inspect.Signature, wrap) -> str:
    """Fast path for float operands of one dtype, where the op is exactly ``opdef.ufunc``.

    ``wrap(tensor_names)`` is the code returning the result, told which operands
    are known to be tensors here.
    """
    tensors = _ufunc_operands(opdef, signature)
    if len(tensors) == 1:
        return _unary_ufunc(tensors[0], wrap)
    a, b = tensors
    block = (f"_a = {a}._data\n"
             + _block(f"if {_plain(b)}:", f"_b = {b}._data\n" + _same_dtype_ufunc(a, b, wrap)) + "\n"
             # float16 keeps a number in float32 for some ops (PyTorch's opmath): left to the kernel
             + _block(f'elif _a.dtype.kind == "f" and _a.dtype is not _F16 and '
                      f'(type({b}) is float or type({b}) is int):',
                      f"result = {kernel_site.ufunc_call('_a', b)}\n" + wrap([a])))
    # A number in the first position (tm.add(2, t)) is left to the kernel.
    return _block(f"if {_plain(a)}:", block) if _kinds_for(opdef, signature)[a] != TensorKind.TENSOR else block


def _hot_path(opdef: OpDef, signature: inspect.Signature, wrap) -> tuple[str, str] | None:
    """``(condition, body)`` tried first when no mode is active, for ops with a ufunc hint:
    plain tensor operands, optional arguments at their defaults. One test for the commonest
    call (``x + y`` on float tensors) instead of the general fast path's case analysis; the
    body falls through (to that path) for other dtypes."""
    if opdef.ufunc is None:
        return None
    tensors = _ufunc_operands(opdef, signature)
    terms = [f"type({n}) is _T" for n in tensors]
    defaults = _keyword_defaults(opdef)
    if defaults:
        terms.append(defaults)
    if "out" in signature.parameters and opdef.out:
        terms.append("out is None")
    if len(tensors) == 1:
        body = _unary_ufunc(tensors[0], wrap)
    else:
        a, b = tensors
        body = f"_a = {a}._data\n_b = {b}._data\n" + _same_dtype_ufunc(a, b, wrap)
    return " and ".join(terms), body


def _finish(opdef: OpDef, first: str, inplace: bool) -> str:
    """Source turning ``result`` into the callable's return value."""
    if inplace and opdef.view:
        return f"return _view_inplace({first}, result)"  # squeeze_, t_: the tensor takes the view's geometry
    if inplace:
        check = ", _WRITTEN_CHECK" if opdef.written_check else ""
        return f"return _write_inplace({first}, result, {opdef.name!r}{check})"
    if opdef.view:
        return f"return _wrap_view(result, {first})"
    if opdef.alias:
        return f"return _wrap_alias(result, {first})"
    if "requires_grad" in opdef.signature.parameters:
        return "return _with_requires_grad(_wrap(result), requires_grad)"
    return "return _wrap(result)"


def _make_impl(opdef: OpDef, signature: inspect.Signature, *, inplace: bool, name: str):
    """The implementation behind every public form of an op: unwrap, run the kernel,
    write in place or to ``out=``, wrap, and record for autograd when needed."""
    names = {**kernel_site.kernel_names(opdef), "_OP": opdef.name, "_GRAD": opdef.grad,
             "_WRITTEN_CHECK": opdef.written_check,
             "_TENSOR_PARAMS": tuple(opdef.tensor_params), "_SAVE_ONLY_FOR": opdef.save_only_for, }
    if opdef.differentiable and not opdef.factory and opdef.tensor_params and not (inplace or opdef.mutates):
        # In-place forms record through _record_inplace: only out-of-place ones need a recorder.
        per_call = callable(opdef.node)  # a node named per call (linear)
        names["_rec"] = make_recorder(opdef.name if per_call else opdef.node or opdef.name, opdef.grad,
                                      opdef.tensor_params, tuple(opdef.signature.parameters), opdef.saves,
                                      opdef.save_only_for, opdef.view,
                                      None if opdef.differentiable is True else opdef.differentiable,
                                      opdef.node if per_call else None)
    params, _ = parameter_list(signature, names)
    names_in_order = list(signature.parameters)
    first = names_in_order[0]
    tensors = ", ".join(n for n, p in zip(names_in_order, opdef.signature.parameters) if p in opdef.tensor_params)
    arguments = "{" + ", ".join(f"{p!r}: {n}" for n, p in zip(names_in_order, opdef.signature.parameters)) + "}"
    positional = ", ".join(n for n, _ in zip(names_in_order, opdef.signature.parameters))
    call = kernel_call(opdef, signature, fast=False)
    defaults = _keyword_defaults(opdef)
    records = opdef.differentiable and not opdef.factory
    grad_check = f"_needs_grad(({tensors},))" if records and tensors else "False"
    if records and tensors and all(kind in (TensorKind.TENSOR, TensorKind.TENSOR_OR_SCALAR)
                                   for kind in opdef.tensor_params.values()):
        # Inline: the subclass path runs this for every call.
        terms = [f"getattr({n}, '_requires_grad', False)" for n, p in zip(names_in_order, opdef.signature.parameters)
                 if p in opdef.tensor_params]
        grad_check = f"({' or '.join(terms)}) and _grad_enabled()"
    lines = _dispatch_level_prologue(opdef, signature, inplace, names, arguments)
    # the node an in-place call records is named as the out-of-place op's (``arccos_``: AcosBackward0)
    node = "_OP"
    if callable(opdef.node):
        names["_NODE_OF"] = opdef.node
        node = f"_NODE_OF({positional})"
    elif opdef.node:
        names["_NODE"] = opdef.node
        node = "_NODE"
    if opdef.mutates:
        lines += [f"if {grad_check}:",
                  "    box = []",
                  f"    _record_inplace({node}, _GRAD, _TENSOR_PARAMS, {arguments}, {first},",
                  f"                    lambda: (box.append({call}), _bump_version({first})), _SAVE_ONLY_FOR)",
                  f"    return _wrap_written(box[0], {first})",
                  f"result = {call}",
                  f"_bump_version({first})",
                  f"return _wrap_written(result, {first})"]
    elif inplace:
        lines += _inplace_lines(opdef, first, call, grad_check, node, arguments, names)
    else:
        if defaults:
            # Keyword arguments are slow to pass: leave them out when they hold their defaults.
            lines += [f"if {defaults}:", f"    result = {kernel_call(opdef, signature, False, False)}",
                      "else:", f"    result = {call}"]
        else:
            lines.append(f"result = {call}")
        if opdef.saves:
            lines.append(_SPLIT_SAVED)
        if "out" in signature.parameters and opdef.out:
            lines += ["if out is not None:"]
            if records and tensors:
                lines += [f"    if {grad_check}:",
                          "        raise RuntimeError(f\"{_OP}(): functions with out=... arguments don't support "
                          "automatic differentiation, but one of the arguments requires grad.\")"]
            lines += ["    return _write_out(out, result, _WRITTEN_CHECK)"]
        finish = _finish(opdef, first, inplace=False)
        if records and tensors:
            lines += [f"if {grad_check}:",
                      f"    return _rec({positional}, {finish.removeprefix('return ')}{_saved_argument(opdef)})"]
        lines.append(finish)
    source = f"def {name}({params}):\n" + textwrap.indent("\n".join(lines), "    ") + "\n"
    namespace = {**GENERATED_NAMES, **names}
    return _generated.define(source, name, namespace, label=f"{opdef.namespace}.{name}"), names


def _inplace_lines(opdef: OpDef, first: str, call: str, grad_check: str, node: str, arguments: str,
                   names: dict) -> list[str]:
    """An in-place form's end: the kernel's result written into ``first`` — or, for an in-place view
    (``squeeze_``, ``t_``), its geometry taken by ``first`` — recorded through autograd when needed."""
    if opdef.view:
        names["_OPDEF"] = opdef
        return [f"result = {call}",
                f"if {grad_check}:",
                f"    return _record_inplace_view(_inplace_view_node(_OPDEF, {node}), _GRAD, _TENSOR_PARAMS, "
                f"{arguments}, {first},",
                f"                                lambda: _view_inplace({first}, result))",
                f"return _view_inplace({first}, result)"]
    return [f"result = {call}",
            f"if {grad_check}:",
            f"    return _record_inplace({node}, _GRAD, _TENSOR_PARAMS, {arguments}, {first},",
            f"                           lambda: _write_inplace({first}, result, _OP, _WRITTEN_CHECK),",
            "                           _SAVE_ONLY_FOR)",
            f"return _write_inplace({first}, result, _OP, _WRITTEN_CHECK)"]


def _dispatch_level_prologue(opdef: OpDef, signature: inspect.Signature, inplace: bool, names: dict,
                             arguments: str) -> list[str]:
    """First lines of an implementation: hand the call to the dispatch level
    (``dispatch_level.below_autograd``) when a dispatch mode is active or a tensor argument's
    class has a ``__torch_dispatch__``; plain tensors cost a type test each."""
    if opdef.meta is metadata and not opdef.tensor_params.keys() - {"input", "self"} and \
            opdef.signature.return_annotation in ("bool", "int"):
        return []  # metadata queries (``is_complex``, ``numel``) dispatch nothing, as in PyTorch
    names["_ENTRY"] = [opdef, "inplace" if inplace else "functional", names.get("_rec"), None,
                       dispatch_level.by_position]
    names["_listens"] = dispatch_level.listens
    terms = []
    for name, p in zip(signature.parameters, opdef.signature.parameters):
        kind = opdef.tensor_params.get(p)
        if kind == TensorKind.TENSOR:
            terms.append(f"(type({name}) is not _T and _listens({name}))")
        elif kind is not None:
            terms.append(f"(type({name}) is not _T and {name} is not None and _listens({name}))")
    # a mode listens — unless each declared the ops it handles and this one reaches none of them
    condition = "_st is not None and _st.dispatch_active and (_st.dispatch_reaching is None or " \
        f"_st.dispatch_reaching[{opdef.name!r}])"
    if terms:
        condition += f" or (_st is None or _st.dispatch_enabled) and ({' or '.join(terms)})"
    out = "out" if "out" in signature.parameters and opdef.out else "None"
    values = "".join(f"{n}, " for n, _ in zip(signature.parameters, opdef.signature.parameters))
    return ["_st = _get_state()", f"if {condition}:", f"    return _ENTRY[4](_ENTRY, {values}{out})"]


def records_on_fast_path(opdef: OpDef, inplace: bool) -> bool:
    """Out-of-place differentiable ops (views included) record tensors that require grad
    without leaving the fast path; in-place ops leave it for autograd's checks."""
    return (opdef.differentiable and not opdef.factory and not inplace and not opdef.mutates
            and bool(opdef.tensor_params))


def _requires_grad_expression(opdef: OpDef, signature: inspect.Signature) -> str:
    terms = []
    for name, p in zip(signature.parameters, opdef.signature.parameters):
        kind = opdef.tensor_params.get(p)
        if kind == TensorKind.TENSOR:
            terms.append(f"{name}._requires_grad")
        elif kind in (TensorKind.TENSOR_OR_SCALAR, TensorKind.OPTIONAL_TENSOR, TensorKind.OPTIONAL_TENSOR_OR_SCALAR):
            terms.append(f"({_plain(name)} and {name}._requires_grad)")
        elif kind == TensorKind.TENSOR_LIST:
            terms.append(f"_any_requires_grad({name})")
    return " or ".join(terms) or "False"


def _wrap_known_for(opdef: OpDef, signature: inspect.Signature, inplace: bool):
    """``wrap(tensor_names)``: the code wrapping (and recording) ``result`` where the named
    operands are known to be plain tensors, so the requires-grad test is shorter."""
    if not records_on_fast_path(opdef, inplace):
        return lambda tensors: _WRAP_RESULT
    arguments = ", ".join(n for n, _ in zip(signature.parameters, opdef.signature.parameters))
    return lambda tensors: _WRAP_AND_RECORD.format(
        requires_grad=" or ".join(f"{n}._requires_grad" for n in tensors), arguments=arguments, saved="")


def _fast_body(opdef: OpDef, signature: inspect.Signature, *, inplace: bool) -> str:
    """Code run when every relevant argument is plain; falling off its end means the slow path."""
    first = next(iter(signature.parameters))
    wrap_known = _wrap_known_for(opdef, signature, inplace)
    if records_on_fast_path(opdef, inplace):
        arguments = ", ".join(n for n, _ in zip(signature.parameters, opdef.signature.parameters))
        wrap = _WRAP_AND_RECORD.format(requires_grad=_requires_grad_expression(opdef, signature), arguments=arguments,
                                       saved=_saved_argument(opdef))
    else:
        wrap = _WRAP_RESULT
    parts = []
    defaults = _keyword_defaults(opdef)
    if opdef.ufunc is not None and not inplace:
        block = _ufunc_block(opdef, signature, wrap_known)
        parts.append(_block(f"if {defaults}:", block) if defaults else block)
    if defaults:
        parts.append(_block(f"if {defaults}:", f"result = {kernel_call(opdef, signature, True, False)}"))
        parts.append(_block("else:", f"result = {kernel_call(opdef, signature, True)}"))
    else:
        parts.append(f"result = {kernel_call(opdef, signature, True)}")
    if opdef.saves:
        parts.append(_SPLIT_SAVED)
    if opdef.mutates:
        parts.append(f"_bump_version({first})")
        parts.append(f"return _wrap_written(result, {first})")
    elif "requires_grad" in opdef.signature.parameters and not (inplace or opdef.view or opdef.alias):
        # Factories: the common requires_grad=False is wrapped inline.
        parts.append(_block("if requires_grad is False:", _WRAP_RESULT))
        parts.append(_finish(opdef, first, inplace))
    elif (opdef.view or opdef.alias) and records_on_fast_path(opdef, inplace):
        wrapped = _finish(opdef, first, inplace).removeprefix("return ")
        parts.append(_WRAP_VIEW_AND_RECORD.format(wrapped=wrapped, requires_grad=_requires_grad_expression(
            opdef, signature), arguments=arguments))
    elif inplace or opdef.view or opdef.alias:
        parts.append(_finish(opdef, first, inplace))
    else:
        parts.append(wrap)
    body = "\n".join(parts)
    if "out" in signature.parameters and opdef.out:
        body = _block("if out is None:", body)
    return body


def _kinds_for(opdef: OpDef, signature: inspect.Signature) -> dict[str, str]:
    """Tensor parameter kinds under the names ``signature`` uses (``self`` for methods)."""
    kinds = {}
    for name, p in zip(signature.parameters, opdef.signature.parameters):
        if p in opdef.tensor_params:
            kinds[name] = opdef.tensor_params[p]
    if "self" in kinds:
        kinds["self"] = TensorKind.TENSOR  # a method is always called on a tensor
    if "out" in signature.parameters and opdef.out:
        kinds["out"] = TensorKind.OPTIONAL_TENSOR
    return kinds


def op_callable(opdef: OpDef, name: str, signature: inspect.Signature, *, inplace: bool, qualname: str,
                operator: bool = False):
    """A public form of ``opdef`` (its function, method, in-place method or operator) under
    ``name`` and ``signature``; ``operator``: return NotImplemented on a TypeError, so Python
    tries the reflected operator."""
    impl, names = _shared_impl(opdef, inplace)
    prologue = ""
    if opdef.normalize is not None:
        own = ", ".join(name for name, _ in zip(signature.parameters, opdef.signature.parameters))
        names["_normalize"] = opdef.normalize
        prologue = f"{own}, = _normalize({own})"
    return make_callable(
        name, signature, relevant_parameters(signature, _kinds_for(opdef, signature)), impl, leaf=True,
        prologue=prologue, dispatch_call=_below_call(opdef, signature, inplace, names),
        fast_body=_fast_body(opdef, signature, inplace=inplace), fast_names=names,
        hot_path=None if inplace else _hot_path(opdef, signature, _wrap_known_for(opdef, signature, inplace)),
        qualname=qualname, doc=opdef.doc, module="tensormodes", not_implemented_on_type_error=operator,
        runs_kernel=True,
        records_grad=opdef.differentiable and not opdef.factory and not records_on_fast_path(opdef, inplace))


def _below_call(opdef: OpDef, signature: inspect.Signature, inplace: bool, names: dict) -> str | None:
    """The implementation's hand-off to the dispatch level (``_dispatch_level_prologue``) as a
    public form can make it itself, skipping the implementation's frame: when the form's
    parameters are the implementation's (names, kinds, order; the first may be named ``self``,
    ``out=`` may be left out).
    None otherwise (the form calls the implementation)."""
    if "_ENTRY" not in names:
        return None
    own = list(signature.parameters.values())
    implementation = as_method(opdef.signature) if inplace else function_signature(opdef)
    theirs = list(implementation.parameters.values())
    if theirs and theirs[-1].name == "out" and (not own or own[-1].name != "out"):
        theirs.pop()  # a method without ``out=``: the implementation's default, None
    if len(own) != len(theirs) or any(
            a.kind is not b.kind or (i and a.name != b.name) or a.kind in (a.VAR_POSITIONAL, a.VAR_KEYWORD)
            for i, (a, b) in enumerate(zip(own, theirs))):
        return None
    values = "".join(f"{n}, " for n, _ in zip(signature.parameters, opdef.signature.parameters))
    out = "out" if "out" in signature.parameters and opdef.out else "None"
    return f"_ENTRY[4](_ENTRY, {values}{out})"


_IMPLS: dict[tuple[str, bool], tuple] = {}


def _kernel_end(opdef: OpDef, kind: str, end: bool = False):
    """The implementation of the op's public form, as an ``OpOverload`` called where autograd
    records runs it — or, ``end``, the kernel end of an overload's chain at the dispatch level
    (``_chain_end``); for an op with ``saves=`` its kernel with every output
    (``native_layer_norm`` returns mean and rstd); ``kind="recording"``: the functional form's
    implementation even then (it returns the op's public result)."""
    if opdef.saves and kind == "functional":
        return dispatch_level.saving_impl(opdef)
    impl = _chain_end(opdef, kind == "inplace") if end else _shared_impl(opdef, kind == "inplace")[0]
    if kind != "inplace":
        return impl
    first = next(iter(opdef.signature.parameters))  # the in-place form names it ``self``

    def inplace(*args, **kwargs):
        if first in kwargs:
            args = (kwargs.pop(first), *args)
        return impl(*args, **kwargs)

    return inplace


python_dispatch.HOOKS.impl_of = _kernel_end
python_dispatch.HOOKS.chain_end = lambda opdef, kind: _kernel_end(opdef, kind, end=True)

_CHAIN_ENDS: dict[tuple[str, bool], object] = {}


def _chain_end(opdef: OpDef, inplace: bool):
    """The implementation as the end of the dispatch level's chain calls it (``_end_add``): the
    public form's hot and fast paths (the kernel-call site, wrapping, recording) without the
    override layer's state test, then the implementation for anything else. At the chain's end
    nothing listens any more (the modes are popped, the subclasses have declined or are off),
    so the implementation's own dispatch-level test would only be paid again; and the public
    callable itself cannot be called there: a ``__torch_function__`` override among the
    arguments would see an aten-level call."""
    key = (opdef.name, inplace)
    end = _CHAIN_ENDS.get(key)
    if end is not None:
        return end
    impl, names = _shared_impl(opdef, inplace)
    if opdef.normalize is not None:
        _CHAIN_ENDS[key] = impl
        return impl
    signature = as_method(opdef.signature) if inplace else function_signature(opdef)
    names = {**names, "_impl": impl}
    params, call = parameter_list(signature, names)
    relevant = relevant_parameters(signature, _kinds_for(opdef, signature))
    records_grad = opdef.differentiable and not opdef.factory and not records_on_fast_path(opdef, inplace)
    parts = []
    hot = None if inplace else _hot_path(opdef, signature, _wrap_known_for(opdef, signature, inplace))
    if hot is not None:
        parts.append(_block(f"if {hot[0]}:", hot[1]))
    parts.append(_block(f"if {fast_condition(relevant, records_grad)}:",
                        _fast_body(opdef, signature, inplace=inplace)))
    parts.append(f"return _impl({call})")
    name = f"_end_{opdef.name}_" if inplace else f"_end_{opdef.name}"
    source = f"def {name}({params}):\n" + textwrap.indent("\n".join(parts), "    ") + "\n"
    end = _CHAIN_ENDS[key] = _generated.define(source, name, {**GENERATED_NAMES, **names},
                                               label=f"{opdef.namespace}.{name}")
    return end


def shared_impl(opdef: OpDef, inplace: bool):
    """The implementation of ``opdef``'s function (or in-place method, ``inplace``): what runs
    below the override layer, autograd and the dispatch level included."""
    return _shared_impl(opdef, inplace)[0]


def _shared_impl(opdef: OpDef, inplace: bool):
    """One implementation per op (and one for its in-place form), shared by the function,
    the method and the operators: they only differ in how the first parameter is named."""
    key = (opdef.name, inplace)
    if key not in _IMPLS:
        signature = as_method(opdef.signature) if inplace else function_signature(opdef)
        name = f"_impl_{opdef.name}_" if inplace else f"_impl_{opdef.name}"
        _IMPLS[key] = _make_impl(opdef, signature, inplace=inplace, name=name)
    return _IMPLS[key]


def function_signature(opdef: OpDef) -> inspect.Signature:
    """The signature of ``opdef``'s public function (with ``out=`` when it takes one)."""
    signature = opdef.signature.replace(return_annotation=inspect.Signature.empty)
    return _with_out(signature) if opdef.out else signature
