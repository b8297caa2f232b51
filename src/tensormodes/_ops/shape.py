"""Helpers shared by the shape families (``views``, ``joining``, ``reordering``, ``properties``):
parsing of sizes and dims, the helpers of their gradient formulas, and the layouts (shape,
strides, storage offset) of views of meta tensors, which follow PyTorch's exactly.

Gradients put ``grad`` back where the input's elements went: views and copies
rearrange it the inverse way (``transpose`` transposes it, ``cat`` narrows it,
``split`` writes the pieces' gradients into zeros); ops that pick elements, possibly
several times (``diagonal``, ``unfold``, advanced indexing), apply themselves to the
input's flat positions (``positions_of``) and add each gradient back there
(``gather_back``). Formulas that need only the input's shape ask for ``input_shape``,
not ``input`` (see ``registry.op``), so the input may change in place before backward.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._meta_array import DataDependentOutputError, MetaArray, contiguous_strides, view_of
from .common import array_type_name, is_int, operand_dtype, wrap_dim, wrap_dims
from .meta_rules import probe

# PyTorch names tensors by their legacy type in some messages ("torch.FloatTensor").


def legacy_type_name(array: np.ndarray) -> str:
    """``'torch.FloatTensor'`` for a float32 array: the name PyTorch's expand errors use."""
    return f"torch.{array_type_name(array)}Tensor"


# -- argument parsing --------------------------------------------------------------------


def int_tuple(values, op_name: str, param: str, *, allow_int: bool = True) -> tuple[int, ...]:
    """A sequence of ints (or, if ``allow_int``, one int) as a tuple, with PyTorch's
    TypeError for anything else."""
    if type(values) is tuple and all(type(i) is int for i in values):
        return values  # the common case, already as wanted
    if is_int(values):
        if not allow_int:
            raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, not int")
        return (int(values),)
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, "
                        f"not {type(values).__name__}") from None
    for position, item in enumerate(items):
        if not is_int(item):
            raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, but found element of "
                            f"type {type(item).__name__} at pos {position}")
    return tuple(int(i) for i in items)


def strided_geometry(size, stride, op_name: str, offset: int | None = None) -> tuple[tuple[int, ...],
                                                                                   tuple[int, ...]]:
    """``as_strided`` / ``empty_strided``'s sizes and strides as int tuples, checked in PyTorch's
    order with its errors (lengths, negative sizes and strides, and ``as_strided``'s ``offset``)."""
    first = 1 if op_name == "empty_strided" else 2
    try:
        shape, strides = int_tuple(size, op_name, "size", allow_int=False), int_tuple(stride, op_name, "stride",
                                                                                       allow_int=False)
    except TypeError as error:  # PyTorch's parser names the argument's position
        message = str(error).replace("'size'", f"'size' (position {first})").replace(
            "'stride'", f"'stride' (position {first + 1})")
        raise TypeError(message) from None
    if op_name == "empty_strided":
        if any(n < 0 for n in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
        if len(shape) != len(strides):
            raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
                               f"({len(strides)})")
    else:
        if len(shape) != len(strides):
            raise RuntimeError("mismatch in length of strides and shape")
        if any(s < 0 for s in strides):
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                               f"{list(strides)}")
        if offset is not None and offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in shape) or any(s < 0 for s in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(strides)}")
    return shape, strides


def storage_span(shape, strides) -> int:
    """Elements a tensor of ``shape`` and (non-negative) ``strides`` reaches from its first one,
    itself included: 0 when it has no elements.

    >>> storage_span((2, 3), (1, 2)), storage_span((0, 3), (3, 1))
    (6, 0)
    """
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))


def check_storage_bounds(shape, strides, offset: int, itemsize: int, storage_bytes: int) -> None:
    """PyTorch's ``setStorage`` check: a view of ``shape`` / ``strides`` at element ``offset``
    must fit in a storage of ``storage_bytes``."""
    span = storage_span(shape, strides)
    if span and (offset + span) * itemsize > storage_bytes:
        raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {(offset + span) * itemsize} are out of "
                           f"bounds for storage of size {storage_bytes}")


def overlaps(shape, strides) -> bool:
    """Whether two positions of a layout share one element (a stride 0, or windows overlapping):
    decided from the layout alone, largest strides last."""
    extent = 1
    for n, s in sorted(((n, s) for n, s in zip(shape, strides, strict=True) if n != 1), key=lambda d: d[1]):
        if n == 0:
            return False
        if s < extent:
            return True
        extent = s * (n - 1) + extent
    return False


def varargs_ints(args: tuple, op_name: str, param: str) -> tuple[int, ...]:
    """Method varargs: ``x.view(2, 3)``, ``x.view((2, 3))`` and ``x.view([2, 3])`` all mean (2, 3)."""
    if len(args) == 1 and not is_int(args[0]):
        return int_tuple(args[0], op_name, param)
    return int_tuple(args, op_name, param)


def known_size(size) -> int:
    """The product of ``size`` when it is a tuple of plain non-negative ints (nothing to parse or
    infer), else -1.

    >>> known_size((2, 3)), known_size((2, -1)), known_size(([2, 3],))
    (6, -1, -1)
    """
    count = 1
    for d in size:
        if type(d) is not int or d < 0:
            return -1
        count *= d
    return count


def _dim_list(dims, ndim: int, op_name: str, param: str = "dims") -> tuple[int, ...]:
    """Wrapped dims; RuntimeError naming the dim given twice."""
    return wrap_dims(int_tuple(dims, op_name, param), ndim)


def _wrap_dim_of_tensor(dim, ndim: int) -> int:
    """Like ``wrap_dim`` but for ops that need a real dimension (no 0-dim tensors)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


# -- gradient helpers: formulas run on Tensors, through public methods (see registry.op) --
# The engine sums gradients back to broadcast inputs' shapes and casts them to the
# inputs' dtypes, so broadcasting views need no rule of their own (``_same_grad``).

def _same_grad(grad):
    """Gradient of an op that passes its input through (copies, broadcasting views)."""
    return grad


def _as_tuple(grad) -> tuple:
    """Output gradients of a multi-output op (a single Tensor when it had one output)."""
    return grad if isinstance(grad, tuple) else (grad,)


def positions_of(grad, shape):
    """Each element's flat position in an input of ``shape`` (an int64 tensor of that
    shape, made from ``grad``): an op that picks elements, applied to it, tells where
    each picked element came from."""
    shape = tuple(shape)
    return (grad.new_ones(math.prod(shape), dtype=dt.int64).cumsum(0) - 1).reshape(shape)


def gather_back(grad, shape, positions):
    """Gradient of an op that picked the elements of an input of ``shape`` at flat
    ``positions`` (one per element of ``grad``): each gradient added back where its element
    came from, so elements picked several times (repeats, overlapping windows) accumulate."""
    shape = tuple(shape)
    flat = grad.new_zeros(math.prod(shape)).index_add(0, positions.reshape(-1), grad.reshape(-1))
    return flat.reshape(shape)


# -- joining ----------------------------------------------------------------------------

def _legacy_empty(shape) -> bool:
    """PyTorch's joins skip legacy empty tensors of shape (0,), whatever the others' shapes."""
    return len(shape) == 1 and shape[0] == 0


def _cat(arrays: list[np.ndarray], dim: int, op_name: str = "cat") -> np.ndarray:
    """``arrays`` (ndarrays, or MetaArrays: then the result's MetaArray) joined along ``dim``."""
    if not arrays:
        raise ValueError(f"{op_name}(): expected a non-empty list of Tensors")
    meta = type(arrays[0]) is MetaArray  # devices agree (the meta runner checked), so the first tells
    dtype = operand_dtype(*(probe(arrays) if meta else arrays))._np
    for position, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be concatenated")
    kept = [(i, a) for i, a in enumerate(arrays) if not _legacy_empty(a.shape)]
    if not kept:
        d = wrap_dim(dim, 1)
        if meta:
            return MetaArray((0,), dtype)
        return np.concatenate([a.astype(dtype, copy=False) for a in arrays], axis=d)
    reference = kept[0][1]
    d = wrap_dim(dim, reference.ndim)
    for position, a in kept[1:]:
        if a.ndim != reference.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {reference.ndim} and {a.ndim}")
        for axis, (expected, got) in enumerate(zip(reference.shape, a.shape, strict=True)):
            if axis != d and expected != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {expected} "
                                   f"but got size {got} for tensor number {position} in the list.")
    if meta:
        shape = list(reference.shape)
        shape[d] = sum(a.shape[d] for _, a in kept)
        return MetaArray(tuple(shape), dtype)
    return np.concatenate([a.astype(dtype, copy=False) for _, a in kept], axis=d)


def _diagonal_dims(ndim: int, dim1, dim2) -> tuple[int, int]:
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


# -- meta layouts: the shapes, strides and storage offsets views of meta tensors get ---------
# Strides and offsets are in elements. A view of a MetaArray is ``view_of`` it (so the result
# shares its version counter); a copy is a new MetaArray.

def value_dependent(op_name: str) -> DataDependentOutputError:
    """The error meta execution raises where ``op_name``'s result depends on tensor values."""
    return DataDependentOutputError(
        f"{op_name}(): the output shape depends on the input's values, which meta tensors do not have")


def view_strides(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]):
    """The strides of ``new_shape`` viewing memory laid out as ``shape``/``strides`` without a copy,
    or None where no view can (PyTorch's ``computeStride``: each run of dimensions that are
    contiguous with one another may be re-split, nothing more)."""
    if not shape:
        return (1,) * len(new_shape)
    numel = math.prod(shape)
    if numel == 0:
        return tuple(strides) if tuple(shape) == tuple(new_shape) else contiguous_strides(new_shape)
    result = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                result[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base, tensor_numel, view_numel = strides[tensor_d - 1], 1, 1
    return tuple(result) if view_d == -1 else None


def meta_reshaped(source: MetaArray, new_shape: tuple[int, ...], *, copy: bool = True) -> MetaArray | None:
    """``source`` as ``new_shape``: a view where the strides allow one, else a contiguous copy
    (None instead if not ``copy``)."""
    new_shape = tuple(new_shape)
    strides = view_strides(source.shape, source.elem_strides, new_shape)
    if strides is None:
        return MetaArray(new_shape, source.dtype) if copy else None
    return view_of(source, new_shape, strides)


def meta_permuted(source: MetaArray, order) -> MetaArray:
    """The view of ``source`` whose dimension ``i`` is its dimension ``order[i]``."""
    return view_of(source, tuple(source.shape[d] for d in order), tuple(source.elem_strides[d] for d in order))


def meta_indexed(source: MetaArray, items: tuple) -> MetaArray:
    """The view ``source[items]`` for a basic NumPy index already checked by the caller: in-range
    ints, slices with positive steps, None and at most one Ellipsis."""
    shape, strides = [], []
    offset = d = 0
    explicit = sum(1 for item in items if item is not None and item is not Ellipsis)
    for item in items:
        if item is Ellipsis:
            rest = source.ndim - explicit
            shape.extend(source.shape[d:d + rest])
            strides.extend(source.elem_strides[d:d + rest])
            d += rest
        elif item is None:
            # PyTorch unsqueezes before it slices what follows: the stride is the extent of the
            # next dimension of the source (1 at the end)
            shape.append(1)
            strides.append(source.shape[d] * source.elem_strides[d] if d < source.ndim else 1)
        elif type(item) is slice:
            size, stride = source.shape[d], source.elem_strides[d]
            start, stop, step = item.indices(size)
            shape.append(max(0, -(-(stop - start) // step)))
            strides.append(stride * step)
            offset += start * stride
            d += 1
        else:
            offset += (item % source.shape[d]) * source.elem_strides[d]
            d += 1
    shape.extend(source.shape[d:])
    strides.extend(source.elem_strides[d:])
    return view_of(source, tuple(shape), tuple(strides), offset)


def sliced(array, d: int, start, stop):
    """``array[start:stop]`` along dimension ``d``: a view, of an ndarray or a MetaArray."""
    if type(array) is MetaArray:
        return meta_indexed(array, (slice(None),) * d + (slice(start, stop),))
    return array[(slice(None),) * d + (slice(start, stop), Ellipsis)]


def selected(array, d: int, index: int):
    """``array[index]`` along dimension ``d`` (that dimension removed): a view."""
    if type(array) is MetaArray:
        return meta_indexed(array, (slice(None),) * d + (index,))
    return array[(slice(None),) * d + (index, Ellipsis)]


def reshaped(array, shape: tuple[int, ...]):
    """``array.reshape(shape)`` (every size given) of an ndarray or a MetaArray."""
    if type(array) is MetaArray:
        return meta_reshaped(array, shape)
    return array.reshape(shape)
