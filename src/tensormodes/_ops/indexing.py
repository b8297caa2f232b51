"""The indexing operator: ``t[index]``, ``t[index] = value`` and ``index_put``, with the index
checks the other indexing families share (selection by positions and masks, and whole-tensor
writes, are in ``indexing_selection.py``; the gather/scatter family in ``scatter_gather.py``).

PyTorch applies an index in two steps, and so do we: integers, slices, ``None``
and ``...`` first select a *view*; index tensors, lists and boolean masks then
index what is left as one advanced index, which copies. Doing it in that order
(rather than handing the whole index to NumPy) gives PyTorch's results where the
two libraries differ: an integer next to an index tensor (``x[0, :, [0, 1]]``),
0-dim integer tensors (which act as integers, so ``x[torch.tensor(1)]`` is a
view), lists holding slices (read as tuples), negative slice steps (rejected).
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings
from collections.abc import Sequence
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import DataDependentOutputError, MetaArray, contiguous_strides, dense_strides
from .._tensor_base import TensorBase
from ._samples import M23, M234, SCALAR
from .common import FLOAT_MAX, checked_scalar, is_tensor, ops, wrap_dim, writes_into_input
from .meta_rules import metadata, rule
from .registry import Index, Sample, Tensor, TensorSpec, op
from .shape import gather_back, legacy_type_name, meta_indexed, positions_of, reshaped, value_dependent
from .views import expand_array

# Float samples of ops that write at indices (``setitem``) use indices
# without repeats: with repeats the result depends on the write order and gradients are
# not defined.

# Largest finite value of each floating type, for PyTorch's scalar overflow check.
_FLOAT32, _INT64 = np.dtype(np.float32), np.dtype(np.int64)
_FLOAT32_MAX = FLOAT_MAX[dt.float32]


def _dtype_name(dtype: np.dtype) -> str:
    return repr(dt.NP_TO_DTYPE[dtype]).rsplit(".", 1)[-1]


def _legacy_name(dtype: np.dtype) -> str:
    """``'Float'`` for float32: the names PyTorch's index errors use."""
    return legacy_type_name(np.empty(0, dtype))[len("torch."):-len("Tensor")]


def scalar_as(value, dtype: np.dtype, *, half_saturates: bool = False) -> np.ndarray:
    """A Python number as a 0-dim array of ``dtype``, with PyTorch's overflow check.

    Integers wrap like C casts only within the type's magnitude (-1 becomes 255 in
    uint8, 300 is an error); floats truncate into integer types; NaN, infinities
    and out-of-range values raise RuntimeError. ``half_saturates``: float16 and
    bfloat16 targets take out-of-range values as infinities (``t[i] = 1e10``).
    """
    t = type(value)
    # Hot paths (``x[i] = 1.5`` on float32, ``x[i] = 3`` on int64) skip the general checks.
    if dtype is _FLOAT32 and (t is float or t is int and -2**63 <= value < 2**63) and not abs(value) > _FLOAT32_MAX:
        return np.asarray(value, _FLOAT32)
    if dtype is _INT64 and t is int and -2**63 <= value < 2**63:
        return np.asarray(value, _INT64)
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"value must be a Number, not {type(value).__name__}")
    if half_saturates and type(value) is int and not -2**63 <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")  # PyTorch's t[i] = v reads an int64
    converted = checked_scalar(value, dt.NP_TO_DTYPE[dtype], saturate_half=half_saturates)
    with np.errstate(over="ignore"):
        return dt.half_staged(np.asarray(converted), dtype).astype(dtype)


def _fill_value(value, dtype: np.dtype, op_name: str):
    """A number or 0-dim array ``value`` converted for filling a ``dtype`` tensor."""
    if isinstance(value, np.ndarray) or type(value) is MetaArray:
        if value.ndim != 0:
            raise RuntimeError(f"{op_name} only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        if type(value) is MetaArray:
            return _cast_array(value, dtype)
        value = value.item()  # PyTorch reads a tensor value as a Scalar, checked as a number
    return scalar_as(value, dtype)


def _cast_array(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``value`` converted to ``dtype`` as PyTorch's copy does (complex to real warns)."""
    if value.dtype == dtype:
        return value
    if value.dtype.kind == "c" and dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)
        if type(value) is MetaArray:
            return MetaArray(value.shape, dtype)
        value = value.real
    if type(value) is MetaArray:
        return MetaArray(value.shape, dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return dt.half_staged(value, dtype).astype(dtype)


# -- parsing an index ----------------------------------------------------------------------

_INT, _SLICE, _NONE, _ELLIPSIS, _BOOL, _ARRAY, _MASK = range(7)
_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result")
_UINT8_WARNING = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."
_INDEX_TYPES_ERROR = "tensors used as indices must be long, int, byte or bool tensors"


def _as_index_tuple(indices) -> tuple:
    if type(indices) is tuple:
        return indices
    # PyTorch's legacy rule: a short list holding a slice, None, ..., a tensor or a
    # sequence is read as a tuple of indices.
    if type(indices) is list and len(indices) < 32 and any(
            isinstance(i, (np.ndarray, list, tuple, slice)) or i is None or i is Ellipsis for i in indices):
        warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=5)
        return tuple(indices)
    return (indices,)


def _check_slice(item: slice) -> None:
    if item.step is not None:
        step = operator.index(item.step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step < 0:
            raise ValueError("step must be greater than zero")


def _array_item(array: np.ndarray) -> tuple[int, object]:
    """An index array classified: a 0-dim integer is an integer, a bool array a mask."""
    kind = array.dtype.kind
    if array.dtype == np.uint8:
        if array.ndim:  # (a 0-dim one is read as a scalar bool, without PyTorch's warning)
            warnings.warn(_UINT8_WARNING, UserWarning, stacklevel=5)
        array, kind = array.astype(bool), "b"
    if kind == "b":
        return (_BOOL, bool(array)) if array.ndim == 0 else (_MASK, array)
    if array.ndim == 0 and kind == "i":  # any 0-dim integer tensor is read as a number (its __index__)
        return _INT, int(array)
    if array.dtype not in (np.int64, np.int32):
        raise IndexError(_INDEX_TYPES_ERROR)
    return _ARRAY, array


def _meta_item(array: MetaArray) -> tuple[int, object]:
    """A meta index tensor classified; a 0-dim one stands for a number meta tensors do not have."""
    kind = array.dtype.kind
    if array.dtype == np.uint8:
        if array.ndim:
            warnings.warn(_UINT8_WARNING, UserWarning, stacklevel=6)
        kind = "b"
    if kind != "b" and array.dtype not in (np.int64, np.int32) and not (array.ndim == 0 and kind == "i"):
        raise IndexError(_INDEX_TYPES_ERROR)
    if array.ndim == 0:
        raise value_dependent("getitem")
    return (_MASK, MetaArray(array.shape, np.dtype(np.bool_))) if kind == "b" else (_ARRAY, array)


def _sequence_item(sequence) -> tuple[int, object]:
    try:
        array = np.asarray(sequence)
    except ValueError:
        raise ValueError("expected a sequence of integers or booleans of one shape as an index") from None
    if array.size == 0 and array.dtype.kind == "f":
        array = array.astype(np.int64)  # [] indexes nothing, as an empty long tensor
    if array.dtype.kind in "iu" and array.dtype != np.int32:
        array = array.astype(np.int64)
    if array.dtype.kind not in "biu":
        raise IndexError(_INDEX_TYPES_ERROR)
    return _array_item(array) if array.ndim else (_ARRAY, array.reshape(1))


def _classify(item) -> tuple[int, object]:
    t = type(item)
    if t is int:
        return _INT, item
    if t is slice:
        _check_slice(item)
        return _SLICE, item
    if item is None:
        return _NONE, None
    if item is Ellipsis:
        return _ELLIPSIS, None
    if t is bool or t is np.bool_:
        return _BOOL, bool(item)
    if isinstance(item, np.ndarray):
        return _array_item(item)
    if type(item) is MetaArray:
        return _meta_item(item)
    if isinstance(item, (list, tuple)):
        return _sequence_item(item)
    if isinstance(item, numbers.Integral):
        return _INT, int(item)
    if isinstance(item, (float, np.floating)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                         "valid indices (got float)")
    try:
        return _INT, operator.index(item)
    except TypeError:
        raise TypeError(f"only integers, slices (`:`), ellipsis (`...`), None, booleans and integer or boolean "
                        f"tensors are valid indices (got {type(item).__name__})") from None


def _parse(array: np.ndarray, indices) -> tuple[tuple, list]:
    """Split an index into a basic NumPy index (a view) and the advanced parts applied after it.

    Advanced parts are ``(dim, array)`` pairs: ``dim`` counts dimensions of the basic
    view; ``array`` is an integer index or a boolean mask (spanning ``mask.ndim`` dims).
    """
    items = [_classify(item) for item in _as_index_tuple(indices)]
    ndim = array.ndim
    consumed = 0
    for kind, value in items:
        if kind is _INT or kind is _SLICE or kind is _ARRAY:
            consumed += 1
        elif kind is _MASK:
            consumed += value.ndim
    if ndim == 0 and any(kind is _INT for kind, _ in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                         "in C++ to convert a 0-dim tensor to a number")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic, advanced = [], []
    in_dim = out_dim = 0
    expanded_ellipsis = False
    for kind, value in items:
        if kind is _INT:
            size = array.shape[in_dim]
            if not -size <= value < size:
                raise IndexError(f"index {value} is out of bounds for dimension {in_dim} with size {size}")
            basic.append(value)
            in_dim += 1
        elif kind is _SLICE:
            basic.append(value)
            in_dim += 1
            out_dim += 1
        elif kind is _NONE:
            basic.append(None)
            out_dim += 1
        elif kind is _ELLIPSIS:
            if not expanded_ellipsis:  # later ones stand for no dimensions, as in PyTorch
                rest = ndim - consumed
                basic.extend([slice(None)] * rest)
                in_dim += rest
                out_dim += rest
                expanded_ellipsis = True
        elif kind is _BOOL:
            # A scalar bool adds a dimension of size 1 (True) or 0 (False).
            basic.append(None)
            advanced.append((out_dim, np.zeros(1 if value else 0, np.int64)))
            out_dim += 1
        else:
            span = value.ndim if kind is _MASK else 1
            basic.extend([slice(None)] * span)
            advanced.append((out_dim, value))
            in_dim += span
            out_dim += span
    basic.append(Ellipsis)  # keeps results arrays (views), never NumPy scalars
    return tuple(basic), advanced


def _plain_basic(shape: tuple[int, ...], items: tuple) -> bool:
    """True for a tuple of in-range integers and step-less slices: NumPy's meaning is PyTorch's."""
    if len(items) > len(shape):
        return False
    for size, item in zip(shape, items, strict=False):
        t = type(item)
        if t is int:
            if not -size <= item < size:
                return False
        elif t is not slice or item.step is not None:
            return False
    return True


def _advanced_key(view: np.ndarray, advanced: list) -> tuple:
    """The NumPy index applying the advanced parts to ``view``, after PyTorch's checks."""
    parts, cursor = [], 0
    for dim, array in advanced:
        parts.extend([slice(None)] * (dim - cursor))
        parts.append(array)
        cursor = dim + (array.ndim if array.dtype == np.bool_ else 1)
    broadcast = _advanced_shape(view.shape, advanced, _count_true)
    integer = [(dim, array) for dim, array in advanced if array.dtype != np.bool_]
    if 0 not in broadcast and any(view.shape[dim] == 0 for dim, _ in integer):
        raise IndexError("index is out of bounds for dimension with size 0")
    if not _selects_any(view.shape, advanced, broadcast):
        # PyTorch reads no position for an empty result, so checks none: any valid one will do
        return tuple(np.zeros_like(p) if isinstance(p, np.ndarray) and p.dtype != np.bool_ else p
                     for p in parts) + (Ellipsis,)
    position = 0
    for dim, array in advanced:
        if array.dtype == np.bool_:
            position += array.ndim
            continue
        size = view.shape[dim]
        if array.size:
            bad = (array < -size) | (array >= size)
            if bad.any():
                raise IndexError(f"index {array[bad][0]} is out of bounds for dimension {position} with size {size}")
        position += 1
    return tuple(parts) + (Ellipsis,)


def _selects_any(shape: tuple[int, ...], advanced: list, broadcast: tuple[int, ...]) -> bool:
    """Whether indexing ``shape`` with the advanced parts (of ``broadcast`` shape) selects any element."""
    if not math.prod(broadcast):
        return False
    indexed = set()
    for dim, array in advanced:
        indexed.update(range(dim, dim + (array.ndim if array.dtype == np.bool_ else 1)))
    return all(size for i, size in enumerate(shape) if i not in indexed)


def _count_true(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def _unknown_count(mask) -> int:
    raise value_dependent("getitem")


def _advanced_shape(view_shape: tuple[int, ...], advanced: list, count) -> tuple[int, ...]:
    """The broadcast shape of the advanced parts (a mask counts as ``count(mask)`` positions in
    each of its dimensions), after PyTorch's checks of the masks' and index tensors' shapes."""
    shapes = []
    for dim, array in advanced:
        if array.dtype == np.bool_:
            indexed = view_shape[dim:dim + array.ndim]
            for j, (got, expected) in enumerate(zip(array.shape, indexed, strict=False)):
                if got != expected:
                    raise IndexError(f"The shape of the mask {list(array.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(view_shape)} at index {dim + j}")
            shapes.extend([(count(array),)] * array.ndim)
        else:
            shapes.append(array.shape)
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in shapes)) from None


def _meta_advanced(view: MetaArray, advanced: list, count=_unknown_count) -> MetaArray:
    """What NumPy's advanced indexing of ``view`` allocates (every part an integer index): the
    broadcast index dimensions outermost, the other dimensions inside them in ``view``'s memory
    order; the index dimensions stand where the first part was if the parts are adjacent, else
    in front."""
    broadcast = _advanced_shape(view.shape, advanced, count)
    if 0 not in broadcast and any(view.shape[dim] == 0 for dim, array in advanced if array.dtype != np.bool_):
        raise IndexError("index is out of bounds for dimension with size 0")
    selects = _selects_any(view.shape, advanced, broadcast)
    for dim, array in advanced if selects else ():  # the bounds of index lists (tensors' values are unknown)
        size = view.shape[dim]
        if isinstance(array, np.ndarray) and array.size:
            bad = (array < -size) | (array >= size)
            if bad.any():
                raise IndexError(f"index {array[bad][0]} is out of bounds for dimension {dim} with size {size}")
    indexed = [dim for dim, _ in advanced]
    rest = [i for i in range(view.ndim) if i not in indexed]
    rest_shape = tuple(view.shape[i] for i in rest)
    rest_strides = dense_strides(rest_shape, [view.elem_strides[i] for i in rest])
    inner = math.prod(max(size, 1) for size in rest_shape)
    outer = tuple(s * inner for s in contiguous_strides(broadcast))
    first = indexed[0]
    if indexed == list(range(first, first + len(indexed))):
        split = sum(1 for i in rest if i < first)
    else:
        split = 0
    return MetaArray(rest_shape[:split] + tuple(broadcast) + rest_shape[split:], view.dtype,
                     rest_strides[:split] + outer + rest_strides[split:])


# -- gradient helpers: formulas run on Tensors, through public methods (see _registry.op) --

def _index_as_given(indices):
    """A saved index as the op read it: a short list holding tensors, slices, ``None``
    or ``...`` is a tuple of indices (PyTorch's legacy rule; saving turns a tuple of
    tensors into a list), given back as a tuple so the formula does not warn again."""
    if type(indices) is list and len(indices) < 32 and any(not isinstance(i, numbers.Number) for i in indices):
        return tuple(indices)
    return indices


def _no_index_grads(indices):
    """No gradient for an index; one None per item of a tuple or list index (each
    item counts as an input)."""
    return [None] * len(indices) if isinstance(indices, (list, tuple)) else None


def _picks_each_once(indices) -> bool:
    """True if every element the index selects is selected once: no integer index
    tensors or lists (which may repeat a position)."""
    for item in (indices if type(indices) is tuple else (indices,)):
        if item is None or item is Ellipsis or isinstance(item, (numbers.Integral, slice)):
            continue
        if isinstance(item, (list, tuple)) or item.dtype is not dt.bool and item.dim() != 0:
            return False  # integer positions (a 0-dim tensor is one integer)
    return True


def _getitem_grad(grad, input_shape, indices):
    index = _index_as_given(indices)
    if _picks_each_once(index):
        grad_input = grad.new_zeros(tuple(input_shape))
        grad_input[index] = grad
    else:  # positions picked several times accumulate
        grad_input = gather_back(grad, input_shape, positions_of(grad, input_shape)[index])
    return grad_input, _no_index_grads(indices)


def _getitem_meta(input, indices):
    basic, advanced = _parse(input, indices)
    view = meta_indexed(input, basic)
    return _meta_advanced(view, advanced) if advanced else view


# -- indexing as PyTorch's composite: what the dispatch level sees -----------------------------

OPEN_END = 9223372036854775807  # INT64_MAX: the end PyTorch gives a slice without one
_BYTE_OR_BOOL = (dt.bool, dt.uint8)


def _index_tensor_kind(item) -> str:
    """How PyTorch's indexing (``applySlicing``) uses a tensor in an index: "int" (a 0-dim integer
    tensor of any width: its value), "bool" (a 0-dim bool or uint8: a scalar bool), "mask" (bool or
    uint8), else "positions" (``index.Tensor`` takes them, and refuses other dtypes itself)."""
    if item.dtype in _BYTE_OR_BOOL:
        return "bool" if item.dim() == 0 else "mask"
    if item.dim() == 0 and item.dtype.is_signed and not item.dtype.is_floating_point and not item.dtype.is_complex:
        return "int"
    return "positions"


def _specified_dims(items: tuple) -> int | None:
    """How many dimensions of the input the items of an index use (PyTorch's count: a mask its
    dimensions, None, ... and bools none); None if an item is not one the decomposition reproduces
    PyTorch's steps for (the op then raises PyTorch's errors), or there are several Ellipses."""
    specified = ellipses = 0
    for item in items:
        t = type(item)
        if item is None or t is bool:
            continue
        if item is Ellipsis:
            ellipses += 1
        elif t is int:
            specified += 1
        elif t is slice:
            if not all(v is None or type(v) is int for v in (item.start, item.stop, item.step)) or \
                    (item.step is not None and item.step <= 0):
                return None
            specified += 1
        elif isinstance(item, TensorBase):
            kind = _index_tensor_kind(item)
            specified += item.dim() if kind in ("mask", "bool") else 1
        elif t is list and item and all(type(v) is int or type(v) is bool for v in item):
            specified += 1
        else:
            return None
    return specified if ellipses <= 1 else None


def _selected(result, dim: int, index: int, position: int):
    """``select``, after PyTorch's bounds check (whose message names the item's ``position`` in the
    index as the dimension)."""
    size = result.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {position} with size {size}")
    return result.select(dim, index)


def _scalar_bool_index(value: bool, device):
    """The index tensor PyTorch makes for a scalar bool in an index: [0] for True, empty for False."""
    positions = ops.empty(1 if value else 0, dtype=ops.int64, device=device)
    if value:
        positions.fill_(0)
    return positions


def _getitem_decomposition(input, indices):
    """PyTorch's indexing (``applySlicing``), op for op: integers ``select``, slices ``slice``
    (a whole-dimension one in a tuple is skipped), None ``unsqueeze``, then the index tensors,
    lists (made by ``tensor``: ``lift_fresh``), masks and scalar bools one ``index`` call."""
    walked = _walk_indices(input, indices, False)
    if walked is NotImplemented:
        return NotImplemented
    result, positions = walked
    if positions:
        return ops.ops.aten.index.Tensor(result, positions)
    return ops.ops.aten.alias.default(input) if result is input else result


def _setitem_decomposition(input, indices, value):
    """PyTorch's ``x[indices] = value`` (``set_item``), op for op: a number becomes a tensor of
    ``x``'s dtype (``lift_fresh``) first; the indices are walked as for reading (a lone slice or
    ``...`` over the whole tensor reads nothing); then ``index_put_`` with the index tensors, or
    PyTorch's ``copy_to``: ``copy_`` of equal sizes, ``fill_`` of a 0-dim value, else ``view``
    (leading 1s dropped), ``expand`` and ``copy_``."""
    if not (isinstance(value, (bool, int, float, complex)) or is_tensor(value)) or _left_to_the_op(indices):
        return NotImplemented  # (x[:, [0, 2]] = v, x[True] = v): the op itself
    if not is_tensor(value):
        value = ops.tensor(value, dtype=input.dtype, device=input.device)
    walked = _walk_indices(input, indices, True)
    if walked is NotImplemented:
        return NotImplemented
    target, positions = walked
    aten = ops.ops.aten
    if positions:
        aten.index_put_.default(target, positions, value)
    elif tuple(target.shape) == tuple(value.shape):
        aten.copy_.default(target, value)
    elif value.dim() == 0:
        aten.fill_.Tensor(target, value)
    else:
        sizes = list(value.shape)
        while sizes and sizes[0] == 1:
            sizes.pop(0)
        value = aten.view.default(value, sizes)
        if tuple(value.shape) != tuple(target.shape):
            value = aten.expand.default(value, list(target.shape))
        aten.copy_.default(target, value)
    return None


def _left_to_the_op(indices) -> bool:
    """Indices the decomposition leaves to the op: an index tensor or list after a kept dimension
    (a slice, None, ...), which would leave a None in ``index_put_``'s list, and Python bools."""
    kept = False
    for item in indices if type(indices) is tuple else (indices,):
        if type(item) is bool:
            return True
        if type(item) is slice or item is None or item is Ellipsis:
            kept = True
        elif type(item) is not int and kept:
            return True
    return False


# long: PyTorch's applySlicing, one index kind after the other.
def _walk_indices(input, indices, writing: bool):
    """``input`` indexed by the basic items of ``indices`` (``select``, ``slice``, ``unsqueeze``) and
    the index tensors left for ``index`` / ``index_put_`` (a list, possibly empty); NotImplemented
    for what the op itself must refuse. ``writing``: a lone slice or ``...`` is read as in a tuple."""
    if writing and (type(indices) is slice or indices is Ellipsis):
        indices = (indices,)
    if type(indices) is tuple:
        items = indices
    elif type(indices) is list and any(not (type(v) is int or type(v) is bool) for v in indices):
        return NotImplemented  # a list read as a tuple (deprecated, it warns) or holding tensors
    else:
        items = (indices,)
    ndim, specified = input.dim(), _specified_dims(items)
    if specified is None or (specified > ndim and (type(indices) is int or type(indices) is slice)):
        return NotImplemented  # the op raises PyTorch's error (for a 0-dim input: its own)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if type(indices) is not tuple:  # a single index: no skipped slices, ... is an alias
        if indices is Ellipsis:
            return ops.ops.aten.alias.default(input), []
        if type(indices) is slice:
            start, stop, step = indices.start, indices.stop, indices.step
            stop = OPEN_END if stop is None else stop
            extra = () if step is None or step == 1 else (step,)
            return ops.ops.aten.slice.Tensor(input, 0, 0 if start is None else start, stop, *extra), []
    result, dim, positions, spanned = input, 0, [], 0

    def record(tensor) -> None:
        # The index tensor of dimension ``dim``: in index.Tensor's list, a mask's entry stands for
        # all the dimensions it spans (``spanned``: those beyond the first, of the masks before).
        slot = dim - spanned
        positions.extend([None] * (slot + 1 - len(positions)))
        positions[slot] = tensor

    for position, item in enumerate(items):
        t = type(item)
        if t is int:
            result = _selected(result, dim, item, position)
        elif t is slice:
            start = 0 if item.start is None else item.start
            stop = OPEN_END if item.stop is None else item.stop
            step = 1 if item.step is None else item.step
            if not (start == 0 and step == 1 and stop >= result.shape[dim]):
                extra = () if step == 1 else (step,)
                result = ops.ops.aten.slice.Tensor(result, dim, start, stop, *extra)
            dim += 1
        elif item is None:
            result = result.unsqueeze(dim)
            dim += 1
        elif item is Ellipsis:
            dim += ndim - specified
        elif t is bool:
            result = result.unsqueeze(dim)
            record(_scalar_bool_index(item, input.device))
            dim += 1
        else:
            if t is list:
                item = ops.tensor(item)
            kind = _index_tensor_kind(item)
            if kind == "int":
                result = _selected(result, dim, int(item.item()), position)
            elif kind == "bool":
                result = result.unsqueeze(dim)
                record(_scalar_bool_index(bool(item.item()), input.device))
                dim += 1
            else:
                record(item)
                if kind == "mask":
                    dim += item.dim()
                    spanned += item.dim() - 1
                else:
                    dim += 1
    return result, positions


@op(grad=_getitem_grad, function=False, method="__getitem__", view=True, meta=rule(_getitem_meta),
    decompose=_getitem_decomposition,
    errors=(Sample((M23, 2)), Sample((M23, (0, 0, 0))), Sample((M23, 1.5)), Sample((M23, slice(None, None, -1))),
            Sample((M23, TensorSpec((3,), "bool"))), Sample((M23, TensorSpec((2,), "float32"))),
            Sample((M234, (TensorSpec((2,), "int64", 0, 1), TensorSpec((3,), "int64", 0, 1)))),
            Sample((M23, ([0, 5],))), Sample((SCALAR, 0))),
    samples=(Sample((M23, 0)), Sample((M23, -1)), Sample((M23, (slice(None), 1))), Sample((M23, (Ellipsis, None))),
             Sample((M234, (0, slice(None), [0, 2]))), Sample((M234, ([1, 0], slice(None), [0, 2]))),
             Sample((M23, TensorSpec((2, 3), "bool"))), Sample((M23, TensorSpec((2,), "int64", -2, 1))),
             Sample((M234, (slice(None), TensorSpec((2, 2), "int64", 0, 2)))),
             Sample((M23, TensorSpec((), "int64", 0, 1))),
             Sample((SCALAR, None)), Sample((SCALAR, Ellipsis)), Sample((M23, (None, slice(1, None, 2), None))),
             Sample((TensorSpec((3, 4), "int32"), (TensorSpec((3,), "bool"), slice(None, None, 3)))),
             Sample((M23, True)), Sample((M234, (Ellipsis, [0, 1], None))), Sample((M23, [1, 0])),
             Sample((M234, (1, TensorSpec((3, 4), "bool"))))))
def getitem(input: Tensor, indices: Index) -> Tensor:
    """``input[indices]``: integers, slices, ``None`` and ``...`` give a view; index tensors,
    lists and boolean masks then select a copy.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    >>> x[1].tolist(), x[:, 0].tolist(), x[x > 4].tolist(), x[0, [2, 0]].tolist()
    ([4, 5, 6], [1, 4], [5, 6], [3, 1])
    """
    # Hot path: a single in-range integer, or a plain slice, on a tensor with dimensions.
    if type(indices) is int and input.ndim and -input.shape[0] <= indices < input.shape[0]:
        return input[indices, ...]
    if type(indices) is slice and indices.step is None and input.ndim:
        return input[indices]
    if type(indices) is tuple and _plain_basic(input.shape, indices):
        return input[indices + (Ellipsis,)]
    basic, advanced = _parse(input, indices)
    view = input[basic]
    if not advanced:
        return view
    return view[_advanced_key(view, advanced)]


def _value_for(array: np.ndarray, value) -> np.ndarray:
    if isinstance(value, np.ndarray) or type(value) is MetaArray:
        return _cast_array(value, array.dtype)
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return scalar_as(value, array.dtype, half_saturates=True)
    raise TypeError(f"can't assign a {type(value).__name__} to a {legacy_type_name(array)}")


def _is_single_mask(indices) -> bool:
    if type(indices) is tuple and len(indices) == 1:
        indices = indices[0]
    return (isinstance(indices, np.ndarray) or type(indices) is MetaArray) and indices.dtype in (np.bool_, np.uint8)


def _assign_basic(view: np.ndarray, value: np.ndarray) -> None:
    """``view[...] = value`` with PyTorch's expand rules and errors (leading 1s may be dropped)."""
    try:
        view[...] = value
    except ValueError:
        shape = value.shape
        while len(shape) > view.ndim and shape[0] == 1:
            shape = shape[1:]
        expand_array(value.reshape(shape) if len(shape) <= view.ndim else value, view.shape)
        raise


def _value_fits(value_shape: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether NumPy assigns a value of ``value_shape`` to ``shape`` (leading 1s may be dropped)."""
    while len(value_shape) > len(shape) and value_shape[0] == 1:
        value_shape = value_shape[1:]
    return len(value_shape) <= len(shape) and all(
        v == 1 or v == t for v, t in zip(reversed(value_shape), reversed(shape), strict=False))


def _setitem_meta(input, indices, value):
    if (type(indices) is int or type(indices) is slice and indices.step is None) and input.ndim:
        indices = (indices,)
    try:
        basic, advanced = _parse(input, indices)
    except DataDependentOutputError:
        raise value_dependent("setitem") from None
    if advanced and type(value) is MetaArray and value.dtype != input.dtype and not (
            value.ndim == 0 and _is_single_mask(indices)):
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_legacy_name(input.dtype)} for the destination and {_legacy_name(value.dtype)} "
                           "for the source.")
    value = _value_for(input, value)
    view = meta_indexed(input, basic)
    if not advanced:
        if not _value_fits(value.shape, view.shape):
            _assign_basic_error(view, value)
        return None
    masked = any(array.dtype == np.bool_ for _, array in advanced)
    if masked and all(v == 1 for v in value.shape):
        # Fits any number of True positions: only the shapes of the index are checked.
        _advanced_shape(view.shape, advanced, lambda mask: 1)
        return None
    try:
        shape = _meta_advanced(view, advanced).shape
    except DataDependentOutputError:
        raise value_dependent("setitem") from None
    if not _value_fits(value.shape, shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    return None


def _assign_basic_error(view, value) -> None:
    """Raise what ``_assign_basic`` raises when ``value`` does not fit ``view``."""
    shape = value.shape
    while len(shape) > view.ndim and shape[0] == 1:
        shape = shape[1:]
    expand_array(reshaped(value, shape) if len(shape) <= view.ndim else value, view.shape)
    raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {view.shape}")


def _setitem_grad(grad, indices, value_shape):
    index = _index_as_given(indices)
    grad_input = grad.clone()
    grad_input[index] = 0  # overwritten positions do not reach the old value
    grad_value = None
    if value_shape is not None:  # None: ``value`` was a number
        grad_value = grad[index]  # summed back to ``value``'s shape by the engine
        missing = len(value_shape) - grad_value.dim()
        if missing > 0:  # ``value`` may have leading 1s that the indexed shape lacks
            grad_value = grad_value.reshape((1,) * missing + tuple(grad_value.shape))
    return grad_input, _no_index_grads(indices), grad_value


@op(grad=_setitem_grad, mutates=True, function=False, method="__setitem__", meta=rule(_setitem_meta),
    decompose=_setitem_decomposition,
    errors=(Sample((M23, 0, TensorSpec((2,)))), Sample((M23, [0, 1], TensorSpec((3,), "float64"))),
            Sample((M23, (slice(None), [0, 1]), TensorSpec((3,)))), Sample((M23, 3, 1.0)),
            Sample((TensorSpec((2,), "int8"), 0, 300))),
    samples=(Sample((M23, 0, 1.5)), Sample((M23, (slice(None), 1), TensorSpec((2,)))),
             Sample((M23, TensorSpec((2, 3), "bool"), -1)), Sample((TensorSpec((2, 3), "int64"), 0, 2.7)),
             Sample((M234, (0, slice(None), [0, 2]), TensorSpec((3, 2)))), Sample((SCALAR, Ellipsis, 4)),
             Sample((M23, (Ellipsis, TensorSpec((1,), "int64", 0, 2)), TensorSpec((1,)))),
             Sample((M23, TensorSpec((2, 3), "bool"), TensorSpec((), "int64"))),
             Sample((M23, (0, slice(None)), TensorSpec((3,), "float64"))),
             Sample((TensorSpec((3,), "bool"), [0, 2], 1)),
             Sample((TensorSpec((2, 3), "int32"), 1, TensorSpec((1, 3))))))
def setitem(input: Tensor, indices: Index, value: Tensor | Number) -> None:
    """``input[indices] = value``, writing into ``input``: ``value`` (a number or a tensor
    broadcastable to the indexed shape) is cast to ``input``'s dtype.

    >>> import tensormodes as tm
    >>> x = tm.zeros(2, 3, dtype=tm.int64)
    >>> x[0] = 5; x[:, 2] = tm.tensor([7, 8]); x[x == 0] = -1
    >>> x.tolist()
    [[5, 5, 7], [-1, -1, 8]]
    """
    if (type(indices) is int or type(indices) is slice and indices.step is None) and input.ndim:
        indices = (indices,)
    if type(indices) is tuple and _plain_basic(input.shape, indices):  # hot path: NumPy's meaning is PyTorch's
        _assign_basic(input[indices + (Ellipsis,)], _value_for(input, value))
        return
    basic, advanced = _parse(input, indices)
    if advanced and isinstance(value, np.ndarray) and value.dtype != input.dtype and not (
            value.ndim == 0 and _is_single_mask(indices)):
        # Only PyTorch's masked_fill path (one mask, one 0-dim value) casts tensor values.
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_legacy_name(input.dtype)} for the destination and {_legacy_name(value.dtype)} "
                           "for the source.")
    value = _value_for(input, value)
    view = input[basic]
    if not advanced:
        _assign_basic(view, value)
        return
    key = _advanced_key(view, advanced)
    try:
        view[key] = value
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(view[key].shape)}") from None


def _index_put_grad(grad, indices, accumulate, values_shape, needs_input_grad):
    index = tuple(indices)
    grad_input = None
    if needs_input_grad[0]:
        # (PyTorch's formula writes zeros({}, grad.options()): its dispatch level sees aten.zeros)
        grad_input = grad if accumulate else grad.index_put(index, ops.zeros((), dtype=grad.dtype, device=grad.device))
    if not needs_input_grad[2]:
        return grad_input, [None] * len(index), None
    grad_values = grad[index]  # summed back to ``values``' shape by the engine
    missing = len(values_shape) - grad_values.dim()
    if missing > 0:
        grad_values = grad_values.reshape((1,) * missing + tuple(grad_values.shape))
    return grad_input, [None] * len(index), grad_values


_LONG_INDEX = TensorSpec((2,), "int64", 0, 2)
_MASK_DTYPES = (np.dtype(np.bool_), np.dtype(np.uint8))
_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32), *_MASK_DTYPES)


def _mask_dims_checked(input, mask, first: int) -> None:
    """PyTorch's check that ``mask`` covers dimensions ``first...`` of ``input`` with their sizes."""
    for j, got in enumerate(mask.shape):
        size = input.shape[wrap_dim(first + j, input.ndim)]
        if got != size:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape of "
                             f"the indexed tensor {list(input.shape)} at index {first + j}")


def _fill_mask(input, indices, values, accumulate):
    """The mask of PyTorch's shortcut for ``index_put`` (``masked_fill`` with ``values.item()``):
    taken when the index is one mask (after nothing but masks) and ``values`` one element;
    None otherwise."""
    if accumulate or values.size != 1:
        return None
    mask, first = None, 0
    for index in indices:
        if index.dtype not in _MASK_DTYPES or mask is not None:
            return None
        _mask_dims_checked(input, index, first)
        mask, first = index, first + index.ndim
    return mask


def _put_key(input, indices) -> tuple[tuple, tuple[int, ...]]:
    """``indices`` as a NumPy index of ``input`` (masks as their positions, 0-dim masks left out,
    as PyTorch expands them into nothing) and the shape it selects, after PyTorch's checks in its
    order: index dtypes, mask shapes, broadcasting of the index shapes, sizes."""
    for index in indices:
        if index.dtype not in _INDEX_DTYPES:
            raise IndexError(_INDEX_TYPES_ERROR)
    parts, shapes, dim = [], [], 0
    for index in indices:
        if index.dtype in _MASK_DTYPES:
            if index.dtype == np.uint8:
                warnings.warn(_UINT8_WARNING, UserWarning, stacklevel=4)
            _mask_dims_checked(input, index, dim)
            if index.ndim == 0:
                continue
            if type(index) is MetaArray:
                raise value_dependent("index_put")
            positions = np.nonzero(index)
            parts.extend(positions)
            shapes.extend(p.shape for p in positions)
            dim += index.ndim
        else:
            parts.append(index)
            shapes.append(index.shape)
            dim += 1
    try:
        broadcast = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in shapes)) from None
    if dim > input.ndim:  # masks reaching past the end: PyTorch asks for the size of dimension ``ndim``
        wrap_dim(input.ndim, input.ndim)
    if 0 in input.shape[:dim] and 0 not in broadcast:
        raise IndexError("index is out of bounds for dimension with size 0")
    return tuple(parts), tuple(broadcast) + input.shape[dim:]


def _check_put_bounds(input, key: tuple) -> None:
    """PyTorch's kernel check of the positions, reporting the first bad one in index order."""
    bad = [(position, part, (part < -input.shape[position]) | (part >= input.shape[position]))
           for position, part in enumerate(key) if part.size]
    if not any(b.any() for _, _, b in bad):
        return
    shape = np.broadcast_shapes(*(part.shape for part in key))
    first = min(int(np.flatnonzero(np.broadcast_to(b, shape))[0]) for _, _, b in bad if b.any())
    for position, part, b in bad:
        element = np.unravel_index(first, shape)
        if np.broadcast_to(b, shape)[element]:
            raise IndexError(f"index {np.broadcast_to(part, shape)[element]} is out of bounds for dimension "
                             f"{position} with size {input.shape[position]}")


@op(grad=_index_put_grad, differentiable=writes_into_input, method=True, inplace=True, inplace_function=True,
    meta=metadata,
    errors=(
    Sample((M23, [TensorSpec((1,), "float32")], TensorSpec((1,)))),
    Sample((M23, [_LONG_INDEX, _LONG_INDEX, _LONG_INDEX], TensorSpec((1,)))),
    Sample((M23, [_LONG_INDEX], TensorSpec((1,), "float64"))),
    Sample((M23, [TensorSpec((1,), "int16", 0, 0)], TensorSpec((3,), "int16"))),
    Sample((M23, [TensorSpec((3,), "bool")], TensorSpec((), "float64"))),
    Sample((M23, [TensorSpec((2,), "uint8")], TensorSpec((1, 1)))),
    Sample((TensorSpec((0, 3)), [TensorSpec((), "int64"), _LONG_INDEX], TensorSpec((), "float64"))),
    Sample((M23, [_LONG_INDEX], TensorSpec((1, 2, 3)))),
    Sample((M23, [_LONG_INDEX], TensorSpec((3, 3))))), samples=(
    Sample((M23, [TensorSpec((1,), "int64", 1, 1), TensorSpec((1,), "int64", 2, 2)], TensorSpec((1,)))),
    Sample((M23, [TensorSpec((1,), "int64", 1, 1)], TensorSpec((3,)))),
    Sample((M23, [_LONG_INDEX, _LONG_INDEX], TensorSpec(())), {"accumulate": True}),
    Sample((TensorSpec((3,), "int64"), [TensorSpec((3,), "bool")], TensorSpec((), "int64"))),
    Sample((TensorSpec((3,), "int64"), [TensorSpec((3,), "bool")], TensorSpec((1,), "bool"))),
    Sample((M23, [TensorSpec((2,), "bool")], TensorSpec((1, 1), "float64"))),
    Sample((M234, [TensorSpec((1,), "int64", 0, 1)], TensorSpec((3, 4), "float32")), {"accumulate": True}),
    Sample((TensorSpec((4,), "float64"), [TensorSpec((1,), "int32", 3, 3)], TensorSpec((1,), "float64")))),
    schema={"indices": "Tensor?[]"}, tags=("core",))
def index_put(input: Tensor, indices: Sequence[Tensor], values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` put at ``indices`` (a tuple of index tensors, as
    ``input[indices] = values``); with ``accumulate=True`` they are added instead, repeated
    indices adding several times. ``values`` must have ``input``'s dtype, except that one
    value put at one boolean mask is converted, as ``masked_fill`` converts a number.
    ``Tensor.index_put_`` writes into the tensor.

    >>> import tensormodes as tm
    >>> tm.zeros(3).index_put_((tm.tensor([0, 0]),), tm.tensor([1., 2.]), accumulate=True)
    tensor([3., 0., 0.])
    """
    if len(indices) > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {len(indices)})")
    mask = _fill_mask(input, indices, values, accumulate)
    if mask is not None:
        if mask.dtype != np.bool_:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        if type(input) is MetaArray or type(values) is MetaArray:
            return MetaArray(input.shape, input.dtype)
        value = _fill_value(values.reshape(()), input.dtype, "index_put")
        result = input.copy()
        np.copyto(result, value, where=mask.reshape(mask.shape + (1,) * (input.ndim - mask.ndim)))
        return result
    key, shape = _put_key(input, indices)
    # Unlike ``t[i] = v``, the values may not have more dimensions than the result, even 1s.
    if not (values.ndim <= len(shape) and _value_fits(values.shape, shape)):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_legacy_name(input.dtype)} for the destination and {_legacy_name(values.dtype)} "
                           "for the source.")
    if type(input) is MetaArray:  # the positions' values are unknown: no bounds check
        return MetaArray(input.shape, input.dtype)
    result = input.copy()
    if not math.prod(shape):  # PyTorch reads no position for an empty selection, so checks none
        return result
    _check_put_bounds(input, key)
    key = key + (Ellipsis,)
    if accumulate:
        np.add.at(result, key, np.broadcast_to(values, shape))
    else:
        result[key] = values
    return result


# -- index checks (the gather/scatter family uses them too) -------------------------------

# Index dtypes viewed as unsigned: negative indices become huge, so one maximum checks both bounds.
_UNSIGNED = {np.dtype(np.int64): np.uint64, np.dtype(np.int32): np.uint32}


def _out_of_bounds(index: np.ndarray, size: int, low: int) -> int | None:
    """The first entry of ``index`` outside ``[low, size)``, or None."""
    if not index.size:
        return None
    # Reductions straight from the ufuncs: cheaper than building the mask when all is well.
    unsigned = _UNSIGNED.get(index.dtype) if low == 0 else None
    if unsigned is not None:
        if np.maximum.reduce(index.view(unsigned), axis=None) < size:
            return None
    elif np.minimum.reduce(index, axis=None) >= low and np.maximum.reduce(index, axis=None) < size:
        return None
    bad = (index < low) | (index >= size)
    return int(index[bad][0]) if bad.any() else None


def _as_nd(array: np.ndarray) -> np.ndarray:
    """0-dim arrays as 1-element vectors: gather/scatter treat them so."""
    return reshaped(array, (1,)) if array.ndim == 0 else array
