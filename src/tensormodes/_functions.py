"""Builds the public API from the op table: functions, Tensor methods, in-place
variants, ``out=`` and operators.

For each op declared in ``_ops`` this module generates (through ``_codegen``)
the dispatching public callables and an implementation that unwraps tensors,
runs the NumPy kernel and wraps the result. Nothing here is written per op.
"""

from __future__ import annotations

import functools
import inspect
import sys
import textwrap
import warnings

import numpy as np

from . import _codegen, _dispatch, _generated
from . import _dtype as dt
from ._autograd.grad_mode import grad_enabled
from ._autograd.graph import bump_version, make_recorder, needs_grad, record, record_inplace, share_version
from ._ops import OPS, OpDef
from ._ops._common import array_type_name
from ._ops._registry import METHOD, _tensor_kind
from ._tensor import BUILD_LOCK, Tensor, has_tensor_attribute, lazy_tensor_attribute, wrap_array

__all__ = ["FUNCTIONS", "build", "build_all", "composite", "public_function", "function_names",
           "namespace_function"]

_new = object.__new__
_ND = np.ndarray

# name -> public function, for tensormodes' namespace.
FUNCTIONS: dict[str, object] = {}


# -- runtime helpers used by the generated code ------------------------------------------

def _wrap(result):
    """Kernel output -> tensors: arrays become Tensors, (named) tuples are mapped."""
    if type(result) is _ND:
        t = _new(Tensor)
        t._data = result
        t._requires_grad = False
        return t
    if isinstance(result, np.generic):
        return wrap_array(np.asarray(result))
    if isinstance(result, tuple):
        items = [_wrap(r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, list):
        return [_wrap(r) for r in result]
    return result


def _wrap_view(result, base: Tensor):
    """Like ``_wrap`` for view ops: results remember the tensor they alias and share
    its version counter. A kernel returning its input unchanged gives back the input
    tensor itself, as PyTorch does (``contiguous()`` of a contiguous tensor)."""
    if result is base._data:
        return base
    if type(result) is _ND:  # the common case, without _wrap's dispatch on the result's type
        t = _new(Tensor)
        t._data = result
        t._requires_grad = False
        owner = result.base  # NumPy points a view at the array owning the memory
        if owner is not None and (owner is base._data or owner is base._data.base
                                  or np.may_share_memory(result, base._data)):
            root = base._view_base
            if root is None:
                root = base
            t._view_base = root
            root._has_views = True
            share_version(t, base)
        return t
    wrapped = _wrap(result)
    root = base if base._view_base is None else base._view_base
    for t in (wrapped if isinstance(wrapped, (tuple, list)) else (wrapped,)):
        # Ops like indexing return views only for some arguments.
        if isinstance(t, Tensor) and np.may_share_memory(t._data, base._data):
            t._view_base = root
            root._has_views = True
            share_version(t, base)
    return wrapped


def _wrap_written(result, target: Tensor):
    """What a kernel that wrote into ``target`` returns: ``target`` itself if it returned
    the array it wrote into (``fill_``), else the wrapped result (None for ``t[i] = v``)."""
    return target if result is target._data else _wrap(result)


def _wrap_alias(result, source: Tensor) -> Tensor:
    """A result sharing ``source``'s storage and version counter but not a view of it."""
    t = _wrap(result)
    share_version(t, source)
    return t


def _check_castable(result: np.ndarray, target: np.ndarray) -> None:
    if not dt.can_cast(dt.NP_TO_DTYPE[result.dtype], dt.NP_TO_DTYPE[target.dtype]):
        raise RuntimeError(f"result type {array_type_name(result)} can't be cast to the desired output type "
                           f"{array_type_name(target)}")


def _write_inplace(self: Tensor, result, op_name: str, check=None) -> Tensor:
    result = np.asarray(result)
    data = self._data
    if result.shape != data.shape:
        shape = np.broadcast_shapes(result.shape, data.shape) if _broadcastable(result, data) else result.shape
        raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast shape {list(shape)}")
    if check is not None:  # the op's own rule (see _registry.op's written_check)
        check(result, data, True)
    _check_castable(result, data)
    np.copyto(data, result, casting="unsafe")
    bump_version(self)
    return self


def _broadcastable(a, b) -> bool:
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def _write_out(out, result, check=None):
    """Copy ``result`` into the ``out=`` tensor(s), resizing like PyTorch (``check``: the op's
    own rule, see _registry.op's written_check)."""
    if isinstance(out, (tuple, list)):
        if not isinstance(result, tuple) or len(out) != len(result):
            raise TypeError("out= expects a tuple of tensors matching the op's outputs")
        for o, r in zip(out, result):
            _write_out(o, r)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    result = np.asarray(result)
    if check is not None:
        check(result, out._data, False)
    _check_castable(result, out._data)
    if out._data.shape != result.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out._data.shape)}, "
                f"which does not match the required output shape {list(result.shape)}. This behavior is "
                "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=4)
        out._data = np.empty(result.shape, out._data.dtype)
    np.copyto(out._data, result, casting="unsafe")
    bump_version(out)
    return out


def _with_requires_grad(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        if t._data.dtype.kind not in "fc" and t._data.dtype != dt.bfloat16._np:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _tensor_arg(value, op_name: str, param: str, position: int):
    if isinstance(value, Tensor):
        return value._data
    raise TypeError(f"{op_name}(): argument '{param}' (position {position}) must be Tensor, "
                    f"not {type(value).__name__}")


def _optional_tensor_arg(value, op_name: str, param: str, position: int):
    if value is None:
        return None
    return _tensor_arg(value, op_name, param, position)


def _tensor_or_scalar_arg(value, op_name: str, param: str, position: int):
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{op_name}(): argument '{param}' (position {position}) must be Tensor or Number, "
                    f"not {type(value).__name__}")


def _optional_tensor_or_scalar_arg(value, op_name: str, param: str, position: int):
    if value is None:
        return None
    return _tensor_or_scalar_arg(value, op_name, param, position)


def _tensor_list_arg(values, op_name: str, param: str, position: int):
    if isinstance(values, Tensor) or not isinstance(values, (list, tuple)):
        raise TypeError(f"{op_name}(): argument '{param}' (position {position}) must be tuple of Tensors, "
                        f"not {type(values).__name__}")
    arrays = []
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"{op_name}(): argument '{param}' (position {position}) must be tuple of "
                            f"Tensors, not {type(v).__name__} (element {i})")
        arrays.append(v._data)
    return arrays


def _index_arg(index, op_name: str, param: str, position: int):
    if isinstance(index, Tensor):
        return index._data
    if type(index) is tuple:
        return tuple(i._data if isinstance(i, Tensor) else _index_part(i) for i in index)
    return _index_part(index)


def _index_part(part):
    if isinstance(part, list):
        return [p._data if isinstance(p, Tensor) else _index_part(p) for p in part]
    return part


_UNWRAP = {
    _codegen.INDEX: "_index_arg",
    _codegen.TENSOR: "_tensor_arg",
    _codegen.OPTIONAL_TENSOR: "_optional_tensor_arg",
    _codegen.TENSOR_OR_SCALAR: "_tensor_or_scalar_arg",
    _codegen.OPTIONAL_TENSOR_OR_SCALAR: "_optional_tensor_or_scalar_arg",
    _codegen.TENSOR_LIST: "_tensor_list_arg",
}

_RUNTIME = {
    "_needs_grad": needs_grad, "_grad_enabled": grad_enabled,
    "_any_requires_grad": lambda values: any(v._requires_grad for v in values),
    "_record_inplace": record_inplace, "_bump_version": bump_version,
    "_wrap": _wrap, "_wrap_view": _wrap_view, "_wrap_alias": _wrap_alias, "_wrap_written": _wrap_written,
    "_write_inplace": _write_inplace,
    "_write_out": _write_out, "_tensor_arg": _tensor_arg, "_optional_tensor_arg": _optional_tensor_arg,
    "_tensor_or_scalar_arg": _tensor_or_scalar_arg, "_tensor_list_arg": _tensor_list_arg, "_index_arg": _index_arg,
    "_optional_tensor_or_scalar_arg": _optional_tensor_or_scalar_arg,
    "_new": _new, "_ND": _ND, "_Tensor": Tensor, "_with_requires_grad": _with_requires_grad,
}


# -- building ----------------------------------------------------------------------------

def _with_out(signature: inspect.Signature) -> inspect.Signature:
    params = list(signature.parameters.values())
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return signature.replace(parameters=params, return_annotation=inspect.Signature.empty)


def _as_method(signature: inspect.Signature) -> inspect.Signature:
    params = list(signature.parameters.values())
    params[0] = params[0].replace(name="self", kind=inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  default=inspect.Parameter.empty)
    return signature.replace(parameters=params, return_annotation=inspect.Signature.empty)


def _relevant(signature: inspect.Signature, kinds: dict[str, str]) -> list[_codegen.Relevant]:
    """The parameters that may carry overrides, in signature order."""
    return [_codegen.Relevant(name, kinds[name]) for name in signature.parameters if name in kinds]


def _kernel_call(opdef: OpDef, signature: inspect.Signature, fast: bool, keywords: bool = True) -> str:
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
                _codegen.TENSOR: f"{name}._data",
                _codegen.OPTIONAL_TENSOR: f"(None if {name} is None else {name}._data)",
                _codegen.TENSOR_OR_SCALAR: f"({name}._data if type({name}) is _T else {name})",
                _codegen.OPTIONAL_TENSOR_OR_SCALAR: f"({name}._data if type({name}) is _T else {name})",
                _codegen.TENSOR_LIST: f"[_v._data for _v in {name}]",
                _codegen.INDEX: f"_index_arg({name}, None, None, None)",
            }[kind]
        elif kind in (_codegen.TENSOR, _codegen.TENSOR_OR_SCALAR):
            # Inline for the common case (a Tensor, maybe a subclass); the helper
            # validates everything else and raises PyTorch's TypeError.
            value = (f"({name}._data if isinstance({name}, _Tensor) else "
                     f"{_UNWRAP[kind]}({name}, {opdef.name!r}, {p.name!r}, {position}))")
        else:
            value = f"{_UNWRAP[kind]}({name}, {opdef.name!r}, {p.name!r}, {position})"
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{value}")
        elif p.kind is p.KEYWORD_ONLY:
            if keywords:
                parts.append(f"{p.name}={value}")
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{value}")
        else:
            parts.append(value)
    return f"_kernel({', '.join(parts)})"


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
    return f"_a = {a}._data\n" + _block('if _a.dtype.kind == "f":', "result = _ufunc(_a)\n" + wrap([a]))


def _same_dtype_ufunc(a: str, b: str, wrap) -> str:
    """The ufunc on ``_a`` and ``_b``, the arrays of plain tensors ``a`` and ``b``.

    One floating dtype: the ufunc hint promises the exact result (see _registry.op); other
    dtypes go to the kernel, which knows which ops PyTorch refuses for them (bool matmul ...).
    """
    return _block('if _a.dtype is _b.dtype and _a.dtype.kind == "f":',
                  _block("try:", "result = _ufunc(_a, _b)") + "\n"
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
             + _block(f"if type({b}) is _T:", f"_b = {b}._data\n" + _same_dtype_ufunc(a, b, wrap)) + "\n"
             + _block(f'elif _a.dtype.kind == "f" and (type({b}) is float or type({b}) is int):',
                      f"result = _ufunc(_a, {b})\n" + wrap([a])))
    # A number in the first position (tm.add(2, t)) is left to the kernel.
    return _block(f"if type({a}) is _T:", block) if _kinds_for(opdef, signature)[a] != _codegen.TENSOR else block


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
    names = {"_kernel": opdef.kernel, "_ufunc": opdef.ufunc, "_OP": opdef.name, "_GRAD": opdef.grad,
             "_WRITTEN_CHECK": opdef.written_check,
             "_TENSOR_PARAMS": tuple(opdef.tensor_params), "_SAVE_ONLY_FOR": opdef.save_only_for, **_RUNTIME}
    if opdef.differentiable and not opdef.factory and opdef.tensor_params and not (inplace or opdef.mutates):
        # In-place forms record through _record_inplace: only out-of-place ones need a recorder.
        names["_rec"] = make_recorder(opdef.name, opdef.grad, opdef.tensor_params,
                                      tuple(opdef.signature.parameters), opdef.saves, opdef.save_only_for, opdef.view,
                                      None if opdef.differentiable is True else opdef.differentiable)
    params, _ = _codegen.parameter_list(signature, names)
    names_in_order = list(signature.parameters)
    first = names_in_order[0]
    tensors = ", ".join(n for n, p in zip(names_in_order, opdef.signature.parameters) if p in opdef.tensor_params)
    arguments = "{" + ", ".join(f"{p!r}: {n}" for n, p in zip(names_in_order, opdef.signature.parameters)) + "}"
    positional = ", ".join(n for n, _ in zip(names_in_order, opdef.signature.parameters))
    call = _kernel_call(opdef, signature, fast=False)
    defaults = _keyword_defaults(opdef)
    records = opdef.differentiable and not opdef.factory
    grad_check = f"_needs_grad(({tensors},))" if records and tensors else "False"
    if records and tensors and all(kind in (_codegen.TENSOR, _codegen.TENSOR_OR_SCALAR)
                                   for kind in opdef.tensor_params.values()):
        # Inline: the subclass path runs this for every call.
        terms = [f"getattr({n}, '_requires_grad', False)" for n, p in zip(names_in_order, opdef.signature.parameters)
                 if p in opdef.tensor_params]
        grad_check = f"({' or '.join(terms)}) and _grad_enabled()"
    lines = []
    if opdef.mutates:
        lines += [f"if {grad_check}:",
                  "    box = []",
                  f"    _record_inplace(_OP, _GRAD, _TENSOR_PARAMS, {arguments}, {first},",
                  f"                    lambda: (box.append({call}), _bump_version({first})), _SAVE_ONLY_FOR)",
                  f"    return _wrap_written(box[0], {first})",
                  f"result = {call}",
                  f"_bump_version({first})",
                  f"return _wrap_written(result, {first})"]
    elif inplace:
        lines += [f"result = {call}",
                  f"if {grad_check}:",
                  f"    return _record_inplace(_OP, _GRAD, _TENSOR_PARAMS, {arguments}, {first},",
                  f"                           lambda: _write_inplace({first}, result, _OP, _WRITTEN_CHECK),",
                  "                           _SAVE_ONLY_FOR)",
                  f"return _write_inplace({first}, result, _OP, _WRITTEN_CHECK)"]
    else:
        if defaults:
            # Keyword arguments are slow to pass: leave them out when they hold their defaults.
            lines += [f"if {defaults}:", f"    result = {_kernel_call(opdef, signature, False, False)}",
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
    return _generated.define(source, name, dict(names), label=f"{opdef.namespace}.{name}"), names


def records_on_fast_path(opdef: OpDef, inplace: bool) -> bool:
    """Out-of-place differentiable ops (views included) record tensors that require grad
    without leaving the fast path; in-place ops leave it for autograd's checks."""
    return (opdef.differentiable and not opdef.factory and not inplace and not opdef.mutates
            and bool(opdef.tensor_params))


def _requires_grad_expression(opdef: OpDef, signature: inspect.Signature) -> str:
    terms = []
    for name, p in zip(signature.parameters, opdef.signature.parameters):
        kind = opdef.tensor_params.get(p)
        if kind == _codegen.TENSOR:
            terms.append(f"{name}._requires_grad")
        elif kind in (_codegen.TENSOR_OR_SCALAR, _codegen.OPTIONAL_TENSOR, _codegen.OPTIONAL_TENSOR_OR_SCALAR):
            terms.append(f"(type({name}) is _T and {name}._requires_grad)")
        elif kind == _codegen.TENSOR_LIST:
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
        parts.append(_block(f"if {defaults}:", f"result = {_kernel_call(opdef, signature, True, False)}"))
        parts.append(_block("else:", f"result = {_kernel_call(opdef, signature, True)}"))
    else:
        parts.append(f"result = {_kernel_call(opdef, signature, True)}")
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
        kinds["self"] = _codegen.TENSOR  # a method is always called on a tensor
    if "out" in signature.parameters and opdef.out:
        kinds["out"] = _codegen.OPTIONAL_TENSOR
    return kinds


def _public(opdef: OpDef, name: str, signature: inspect.Signature, *, inplace: bool, qualname: str,
            operator: bool = False):
    impl, names = _shared_impl(opdef, inplace)
    prologue = ""
    if opdef.normalize is not None:
        own = ", ".join(name for name, _ in zip(signature.parameters, opdef.signature.parameters))
        names["_normalize"] = opdef.normalize
        prologue = f"{own}, = _normalize({own})"
    return _codegen.make_callable(
        name, signature, _relevant(signature, _kinds_for(opdef, signature)), impl, leaf=True, prologue=prologue,
        fast_body=_fast_body(opdef, signature, inplace=inplace), fast_names=names,
        hot_path=None if inplace else _hot_path(opdef, signature, _wrap_known_for(opdef, signature, inplace)),
        qualname=qualname, doc=opdef.doc, module="tensormodes", not_implemented_on_type_error=operator,
        records_grad=opdef.differentiable and not opdef.factory and not records_on_fast_path(opdef, inplace))


_IMPLS: dict[tuple[str, bool], tuple] = {}


def _shared_impl(opdef: OpDef, inplace: bool):
    """One implementation per op (and one for its in-place form), shared by the function,
    the method and the operators: they only differ in how the first parameter is named."""
    key = (opdef.name, inplace)
    if key not in _IMPLS:
        signature = _as_method(opdef.signature) if inplace else _function_signature(opdef)
        _IMPLS[key] = _make_impl(opdef, signature, inplace=inplace, name=f"_impl_{opdef.name}")
    return _IMPLS[key]


def _function_signature(opdef: OpDef) -> inspect.Signature:
    signature = opdef.signature.replace(return_annotation=inspect.Signature.empty)
    return _with_out(signature) if opdef.out else signature


def _reflected_impl(opdef: OpDef):
    """``other <op> self`` for a reflected operator (``2 - x``): the op with its operands swapped."""
    kernel, name, formula = opdef.kernel, opdef.name, opdef.grad
    first, second = list(opdef.signature.parameters)[:2]
    params = tuple(opdef.tensor_params)
    defaults = {p.name: p.default for p in opdef.signature.parameters.values()
                if p.default is not inspect.Parameter.empty}

    def reflected(self, other):
        result = _wrap(kernel(_tensor_or_scalar_arg(other, name, "other", 2), _tensor_arg(self, name, "self", 1)))
        if opdef.differentiable and needs_grad((self, other)):
            return record(name, formula, params, {**defaults, first: other, second: self}, result,
                          opdef.save_only_for)
        return result

    return reflected


def _make_dunder(opdef: OpDef, dunder):
    """An operator: the method's code under the operator's name, except reflected ones."""
    with BUILD_LOCK:
        return _make_dunder_locked(opdef, dunder)


def _make_dunder_locked(opdef: OpDef, dunder):
    existing = Tensor.__dict__.get(dunder.name)
    if existing is not None and not getattr(existing, "is_stub", False):
        return existing
    signature = _as_method(opdef.signature)
    binary = sum(1 for p in signature.parameters.values() if p.default is inspect.Parameter.empty) >= 2
    qualname = f"Tensor.{dunder.name}"
    if dunder.reflected:
        P = inspect.Parameter
        signature = inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD), P("other", P.POSITIONAL_OR_KEYWORD)])
        relevant = [_codegen.Relevant("self", _codegen.TENSOR),
                    _codegen.Relevant("other", _codegen.TENSOR_OR_SCALAR)]
        func = _codegen.make_callable(dunder.name, signature, relevant, _reflected_impl(opdef), leaf=True,
                                      qualname=qualname, not_implemented_on_type_error=True)
    else:
        func = _public(opdef, dunder.name, signature, inplace=dunder.inplace, qualname=qualname, operator=binary)
    func.__doc__ = f"``{dunder.name}``: see ``{opdef.name}``."
    setattr(Tensor, dunder.name, func)
    if dunder.api == METHOD:
        _codegen.set_api(func, _tensor_method(opdef, inplace=dunder.inplace))
    else:
        _dispatch.register_overridable(Tensor, func, f"tensormodes.Tensor.{dunder.name}")
    return func


# -- building lazily -------------------------------------------------------------------
# Generating and compiling a callable costs a fraction of a millisecond; doing it
# for every op at import would make ``import tensormodes`` take most of a second.
# So operators (which must exist on the class for Python to find them) are
# built at import, and everything else on first access: ``tm.add`` through the
# package's ``__getattr__``, ``Tensor.add`` through the Tensor layer's lazy
# attributes. Either way the object is built once and then is a plain attribute.

# The ops declaring a public function, by (namespace, name), and the functions built so far.
_FUNCTION_OPS: dict[tuple[str, str], OpDef] = {}
_NAMESPACED: dict[tuple[str, str], object] = {}


def _build_function(opdef: OpDef) -> object:
    name = opdef.function
    key = (opdef.namespace, name)
    with BUILD_LOCK:
        if key not in _NAMESPACED:
            func = _public(opdef, name, _function_signature(opdef), inplace=False, qualname=name)
            func.__module__ = opdef.namespace
            _NAMESPACED[key] = func
            if opdef.namespace == "tensormodes":
                FUNCTIONS[name] = func
            _dispatch.register_overridable(sys.modules[opdef.namespace], func, f"{opdef.namespace}.{name}")
    return _NAMESPACED[key]


def namespace_function(namespace: str, name: str):
    """The public function ``name`` of ``namespace`` (for modules such as nn.functional)."""
    opdef = _FUNCTION_OPS.get((namespace, name))
    if opdef is None:
        raise AttributeError(f"no op declares the function {name!r} of {namespace}")
    return _build_function(opdef)


def _tensor_method(opdef: OpDef, *, inplace: bool) -> object:
    name = opdef.inplace if inplace else opdef.method
    with BUILD_LOCK:
        if not has_tensor_attribute(name):
            func = _public(opdef, name, _as_method(opdef.signature), inplace=inplace, qualname=f"Tensor.{name}")
            setattr(Tensor, name, func)
            _dispatch.register_overridable(Tensor, func, f"tensormodes.Tensor.{name}")
    return Tensor.__dict__[name]


def public_function(name: str):
    """The public function ``tensormodes.<name>``, built on first use (AttributeError if none)."""
    opdef = _FUNCTION_OPS.get(("tensormodes", name))
    if opdef is None:
        raise AttributeError(f"module 'tensormodes' has no attribute '{name}'")
    return _build_function(opdef)


def function_names() -> list[str]:
    """Names of every public function of the op table, built or not."""
    return [name for namespace, name in _FUNCTION_OPS if namespace == "tensormodes"]


def build_all() -> None:
    """Build every public function now (for introspection: overridable lists, docs); methods
    are built by their placeholders' own entries in ``BUILD_ALL``."""
    for opdef in OPS.values():
        if opdef.function and opdef.namespace in sys.modules:
            _build_function(opdef)


def build() -> None:
    """Index the op table: operators now, functions and methods when first used."""
    for opdef in OPS.values():
        if opdef.function:
            _FUNCTION_OPS[opdef.namespace, opdef.function] = opdef
        for name, inplace in ((opdef.method, False), (opdef.inplace, True)):
            if name and name.startswith("__"):
                # Python finds protocol methods (t[i]) on the type itself, never lazily.
                _tensor_method(opdef, inplace=inplace)
            elif name:
                lazy_tensor_attribute(name, functools.partial(_tensor_method, opdef, inplace=inplace))
        for dunder in opdef.dunders:
            if dunder.api == METHOD:
                _install_dunder_stub(opdef, dunder)
            else:
                _make_dunder(opdef, dunder)
    _dispatch.BUILD_ALL.append(build_all)


def _install_dunder_stub(opdef: OpDef, dunder) -> None:
    """An operator presented to handlers as a method (``a + b`` -> ``Tensor.add``) is not
    a public callable itself, so it can start as a stub that builds the real
    operator, puts it on the class, and calls it."""

    def stub(self, *args):
        return _make_dunder(opdef, dunder)(self, *args)

    stub.__name__ = stub.__qualname__ = dunder.name
    stub.is_stub = True
    setattr(Tensor, dunder.name, stub)
    _dispatch.BUILD_ALL.append(functools.partial(_make_dunder, opdef, dunder))


def composite(module_name: str, *, pass_defaults: bool = True):
    """Make a Python-level function a public callable of ``module_name`` that takes
    part in the protocol on its own (``F.relu`` is what handlers see).

    Parameters annotated as in the op table mark what may carry overrides. The
    function's own calls run below the mode that handled it, so a pass-through
    mode sees ``F.relu`` and not the ``relu`` inside it. Handlers receive every
    optional argument as a keyword, as from PyTorch's Python-level functions,
    unless ``pass_defaults=False`` (for functions PyTorch implements in C++).
    """

    def decorate(impl):
        signature = inspect.signature(impl)
        kinds = {}
        for p in signature.parameters.values():
            kind = _tensor_kind(p.annotation)
            if kind is not None:
                kinds[p.name] = "tensor_list" if kind == "tensor" and p.kind is p.VAR_POSITIONAL else kind
        func = _codegen.make_callable(
            impl.__name__, signature, _relevant(signature, kinds), impl, leaf=False,
            qualname=impl.__qualname__, doc=impl.__doc__, module=module_name, pass_defaults=pass_defaults)
        _dispatch.register_overridable(sys.modules[module_name], func, f"{module_name}.{impl.__name__}")
        return func

    return decorate
