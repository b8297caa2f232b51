"""What generated code calls at run time: wrapping kernel results into tensors, writing
in place and into ``out=``, unwrapping and checking arguments, and the type tests of the
plain-tensor fast path.

Every generated function's globals start as a copy of ``GENERATED_NAMES``; the
generator (``codegen``) writes the calls, this module holds what they call.

>>> import numpy as np
>>> wrap(np.arange(3, dtype=np.float32))
tensor([0., 1., 2.])
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import _dtype as dt
from .._autograd.grad_mode import grad_enabled
from .._autograd.graph import (
    bump_version,
    inplace_view_node,
    needs_grad,
    record_inplace,
    record_inplace_view,
    share_version,
)
from .._device import device
from .._meta_array import MetaArray
from .._ops.common import array_type_name
from .._overrides import dispatch as _dispatch
from .._tensor_base import wrap_array
from .meta_tensor import MetaTensor
from .parameter import Parameter
from .tensor import Tensor

__all__ = ["GENERATED_NAMES", "PLAIN_VALUES", "SCALAR_TYPES", "wrap", "tensor_arg", "tensor_or_scalar_arg"]

_new = object.__new__
_ND = np.ndarray

# Python numbers the fast path accepts where a scalar may stand in for a tensor.
SCALAR_TYPES = frozenset({int, float, bool, complex})

# Argument types that never carry overrides.
PLAIN_VALUES = frozenset({type(None), type(Ellipsis), slice, builtins.bool, builtins.int, builtins.float,
                          builtins.complex, str, dt.dtype, device})


# -- results -------------------------------------------------------------------------------

def wrap(result):
    """Kernel output -> tensors: arrays become Tensors, (named) tuples are mapped."""
    if type(result) is _ND:
        t = _new(Tensor)
        t._data = result
        t._requires_grad = False
        return t
    if type(result) is MetaArray:
        t = _new(MetaTensor)
        t._data = result
        t._requires_grad = False
        return t
    if isinstance(result, np.generic):
        return wrap_array(np.asarray(result))
    if isinstance(result, tuple):
        items = [wrap(r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, list):
        return [wrap(r) for r in result]
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
            counter = base.__dict__.get("_version_counter")  # share_version(t, base), inline: a call per view
            if counter is None:
                counter = base._version_counter = [0]
            t._version_counter = counter
        return t
    wrapped = wrap(result)
    root = base if base._view_base is None else base._view_base
    meta = type(base._data) is MetaArray
    for t in (wrapped if isinstance(wrapped, (tuple, list)) else (wrapped,)):
        # Ops like indexing return views only for some arguments (a meta rule returns a new
        # MetaArray only for a copy, and a view of the base's otherwise: see _meta.view_of).
        if isinstance(t, Tensor) and (_meta_view(t._data, base._data) if meta else
                                      type(t._data) is _ND and np.may_share_memory(t._data, base._data)):
            t._view_base = root
            root._has_views = True
            share_version(t, base)
    return wrapped


def _meta_view(result, base) -> bool:
    return type(result) is MetaArray and result.base is not None and (result.base is base or result.base is base.base)


def _wrap_written(result, target: Tensor):
    """What a kernel that wrote into ``target`` returns: ``target`` itself if it returned
    the array it wrote into (``fill_``), else the wrapped result (None for ``t[i] = v``)."""
    return target if result is target._data else wrap(result)


def _wrap_alias(result, source: Tensor) -> Tensor:
    """A result sharing ``source``'s storage and version counter but not a view of it."""
    if type(result) is _ND:  # ``wrap`` and ``share_version`` inline (``detach``: autograd's own, many a pass)
        t = _new(Tensor)
        t._data = result
        t._requires_grad = False
    else:
        t = wrap(result)
    counter = source.__dict__.get("_version_counter")
    if counter is None:
        counter = source._version_counter = [0]
    t._version_counter = counter
    return t


def _check_castable(result: np.ndarray, target: np.ndarray) -> None:
    if not dt.can_cast(dt.NP_TO_DTYPE[result.dtype], dt.NP_TO_DTYPE[target.dtype]):
        raise RuntimeError(f"result type {array_type_name(result)} can't be cast to the desired output type "
                           f"{array_type_name(target)}")


def _write_inplace(self: Tensor, result, op_name: str, check=None) -> Tensor:
    data = self._data
    if type(result) is np.ndarray and check is None and result.dtype is data.dtype and result.shape == data.shape \
            and type(data) is np.ndarray:
        # The common case (an optimizer's ``mul_``, ``add_`` ...): same dtype and shape, nothing to
        # check or cast — a dtype always casts to itself.
        np.copyto(data, result)
        bump_version(self)
        return self
    if type(data) is MetaArray or type(result) is MetaArray:
        return _write_meta(self, result, check, inplace=True)
    result = np.asarray(result)
    if check is not None:  # the op's own rule (see registry.op's written_check), PyTorch's first
        check(result, data, True)
    if result.shape != data.shape:
        shape = np.broadcast_shapes(result.shape, data.shape) if _broadcastable(result, data) else result.shape
        raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast shape {list(shape)}")
    _check_castable(result, data)
    if result.dtype != data.dtype:
        result = dt.half_staged(result, data.dtype)
    np.copyto(data, result, casting="unsafe")
    bump_version(self)
    return self


def _view_inplace(self: Tensor, result) -> Tensor:
    """An in-place view op's end (``squeeze_``, ``t_`` ...): the tensor takes the kernel's view of
    its own array as its array — new shape and strides, the same storage — and, as in PyTorch,
    its version counter moves on."""
    self._data = result
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
    own rule, see registry.op's written_check)."""
    if isinstance(out, (tuple, list)):
        if not isinstance(result, tuple) or len(out) != len(result):
            raise TypeError("out= expects a tuple of tensors matching the op's outputs")
        for o, r in zip(out, result):
            _write_out(o, r)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if type(out._data) is MetaArray or type(result) is MetaArray:
        return _write_meta(out, result, check, inplace=False)
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
    if result.dtype != out._data.dtype:
        result = dt.half_staged(result, out._data.dtype)
    np.copyto(out._data, result, casting="unsafe")
    bump_version(out)
    return out


def _write_meta(target: Tensor, result, check, inplace: bool) -> Tensor:
    """Writing into a meta tensor (or a meta result into ``out=``): the same checks as for data,
    nothing to copy."""
    data = target._data
    if type(data) is not type(result) and not (type(result) is not MetaArray and np.ndim(result) == 0):
        raise RuntimeError(f"Tensor on device {'meta' if type(result) is MetaArray else 'cpu'} is not on the "
                           f"expected device {'meta' if type(data) is MetaArray else 'cpu'}!")
    if type(result) is not MetaArray:
        result = MetaArray(np.shape(result), np.asarray(result).dtype)
    if check is not None:
        check(result, data, inplace)
    if inplace and result.shape != data.shape:
        try:
            shape = np.broadcast_shapes(result.shape, data.shape)
        except ValueError:
            shape = result.shape
        raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast shape {list(shape)}")
    _check_castable(result, data)
    if not inplace and data.shape != result.shape:
        target._data = MetaArray(result.shape, data.dtype)
    bump_version(target)
    return target


def _with_requires_grad(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        if t._data.dtype.kind not in "fc" and t._data.dtype != dt.bfloat16._np:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def tensor_arg(value, op_name: str, param: str, position: int):
    if isinstance(value, Tensor):
        return value._data
    raise TypeError(f"{op_name}(): argument '{param}' (position {position}) must be Tensor, "
                    f"not {type(value).__name__}")


def _optional_tensor_arg(value, op_name: str, param: str, position: int):
    if value is None:
        return None
    return tensor_arg(value, op_name, param, position)


def tensor_or_scalar_arg(value, op_name: str, param: str, position: int):
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
    return tensor_or_scalar_arg(value, op_name, param, position)


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



# -- the fast path's type tests ----------------------------------------------------------

def _all_plain(values) -> bool:
    # A tensor is not a list of tensors (tm.cat(x) is an error, as in PyTorch).
    if type(values) is not list and type(values) is not tuple:
        return False
    return all(type(v) is Tensor or type(v) is Parameter for v in values)


def _all_plain_values(values) -> bool:
    return all(type(v) is Tensor or type(v) is Parameter or type(v) in PLAIN_VALUES for v in values)


def _all_plain_no_grad(values) -> bool:
    if type(values) is not list and type(values) is not tuple:
        return False
    return all((type(v) is Tensor or type(v) is Parameter) and not v._requires_grad for v in values)


def _as_tuple(values) -> tuple:
    try:
        return tuple(values)
    except TypeError:
        return (values,)


_PLAIN_INDEX_TYPES = frozenset({int, slice, type(None), type(Ellipsis), bool})


def _plain_index(index) -> bool:
    """True if an index holds nothing that could override (ints, slices, plain tensors)."""
    if type(index) is tuple:
        return all(type(i) in _PLAIN_INDEX_TYPES or type(i) is Tensor for i in index)
    return type(index) in _PLAIN_INDEX_TYPES or type(index) is Tensor


def _index_items(index) -> tuple:
    """The parts of an index that may carry overrides, where PyTorch's indexing looks: the
    elements of a list, of a tuple, and of the lists and tuples inside a tuple."""
    if type(index) is tuple:
        items = []
        for item in index:
            if type(item) is tuple or type(item) is list:
                items.extend(item)
            else:
                items.append(item)
    else:
        items = index if isinstance(index, (tuple, list)) else (index,)
    return tuple(i for i in items if type(i) not in _PLAIN_INDEX_TYPES)




# -- the names generated code sees ------------------------------------------------------

GENERATED_NAMES: dict = {
    # the override layer
    "_get_state": _dispatch.get_state, "_set_state": _dispatch.set_state, "_reset_state": _dispatch.reset_state,
    "_declined": _dispatch.declined, "_dispatch": _dispatch.dispatch,
    # the fast path's type tests (and float16's, which a ufunc with a number does not compute as PyTorch)
    "_F16": np.dtype(np.float16),
    # a Parameter is as plain as a Tensor: it opts out of __torch_function__
    "_T": Tensor, "_P": Parameter, "_SCALARS": SCALAR_TYPES, "_PLAIN_VALUES": PLAIN_VALUES, "_all_plain": _all_plain,
    "_as_tuple": _as_tuple, "_all_plain_values": _all_plain_values, "_all_plain_no_grad": _all_plain_no_grad,
    "_plain_index": _plain_index, "_index_items": _index_items,
    "_tensor_likes_in": _dispatch.tensor_likes_in, "_dispatch_tensor_likes": _dispatch.dispatch_tensor_likes,
    # autograd
    "_needs_grad": needs_grad, "_grad_enabled": grad_enabled,
    "_any_requires_grad": lambda values: any(v._requires_grad for v in values),
    "_record_inplace": record_inplace, "_bump_version": bump_version,
    "_record_inplace_view": record_inplace_view, "_inplace_view_node": inplace_view_node,
    # arguments and results
    "_wrap": wrap, "_wrap_view": _wrap_view, "_wrap_alias": _wrap_alias, "_wrap_written": _wrap_written,
    "_write_inplace": _write_inplace, "_view_inplace": _view_inplace, "_write_out": _write_out,
    "_with_requires_grad": _with_requires_grad,
    "_tensor_arg": tensor_arg, "_optional_tensor_arg": _optional_tensor_arg,
    "_tensor_or_scalar_arg": tensor_or_scalar_arg, "_optional_tensor_or_scalar_arg": _optional_tensor_or_scalar_arg,
    "_tensor_list_arg": _tensor_list_arg, "_index_arg": _index_arg,
    "_new": _new, "_ND": _ND, "_Tensor": Tensor,
    # the kernel-call site's meta check

}
