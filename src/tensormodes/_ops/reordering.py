"""Reordering copies: flips and rotations, ``roll``, ``repeat`` and ``tile``, triangles
(``tril``, ``triu``), diagonal matrices (``diag_embed``, ``diagflat``), ``diff`` and
``repeat_interleave``.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._memory_format import strided
from .._meta_array import MetaArray, dense_strides
from .._tensor_base import TensorBase
from ._samples import I23, M23, M234, SCALAR
from .common import is_int, ops, quiet, scalar_type_name, wrap_dim
from .meta_rules import metadata, probe, rule, same_shape
from .registry import Sample, Tensor, TensorSpec, op
from .shape import _cat, _diagonal_dims, _dim_list, _wrap_dim_of_tensor, int_tuple, value_dependent, varargs_ints
from .views import diagonal_view

# -- reordering elements (copies) --------------------------------------------------------

def _flip_grad(grad, dims):
    return grad.flip(dims)


@op(grad=_flip_grad, method=True, meta=same_shape, errors=(Sample((M23, (0, 0))), Sample((M23, (2,)))),
    samples=(Sample((M23, (0,))), Sample((M234, (0, -1))), Sample((SCALAR, ())),
             Sample((I23, [1])), Sample((M23, ()))), tags=("core",))
def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """A copy with the order of elements reversed along each of ``dims``.

    >>> import tensormodes as tm
    >>> tm.flip(tm.tensor([[1, 2], [3, 4]]), (1,)).tolist()
    [[2, 1], [4, 3]]
    """
    axes = _dim_list(dims, input.ndim, "flip")
    if input.ndim == 0:
        return input.copy()
    return np.flip(input, axes).copy()


def _roll_meta(input, shifts, dims=None):
    roll(probe(input), shifts, dims)  # the argument checks, on a probe
    if dims is None:  # rolled flat and reshaped: a new contiguous array
        return MetaArray(input.shape, input.dtype)
    return MetaArray(input.shape, input.dtype, dense_strides(input.shape, input.elem_strides))  # np.roll: order K


def _roll_grad(grad, shifts, dims):
    back = tuple(-s for s in int_tuple(shifts, "roll", "shifts"))
    return grad.roll(back, dims) if dims is not None else grad.roll(back[0])


@op(grad=_roll_grad, method=True, meta=rule(_roll_meta),
    errors=(Sample((M23, (1, 2))), Sample((M23, (1, 2), 0)), Sample((M23, 1, 2)), Sample((M23, (), ()))),
    samples=(Sample((M23, 1)), Sample((M23, (1, -1), (0, 1))), Sample((M23, 2, -1)),
             Sample((SCALAR, 3)), Sample((I23, -4)), Sample((M23,), {"shifts": [1], "dims": [1]})),
    schema={"shifts": "SymInt[1]", "dims": "int[1]=[]"})
def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
    """Rolls elements along ``dims`` by ``shifts`` (elements shifted past the end wrap around).
    Without ``dims`` the flattened tensor is rolled and the shape restored.

    >>> import tensormodes as tm
    >>> tm.roll(tm.tensor([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    >>> tm.roll(tm.tensor([[1, 2], [3, 4]]), 1, 0).tolist()
    [[3, 4], [1, 2]]
    """
    shifts = int_tuple(shifts, "roll", "shifts")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return np.roll(input.reshape(-1), shifts[0]).reshape(input.shape)
    dims = int_tuple(dims, "roll", "dims")
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    axes = tuple(_wrap_dim_of_tensor(d, input.ndim) for d in dims)
    return np.roll(input, shifts, axes)


def _repeat(array: np.ndarray, repeats: tuple[int, ...]) -> np.ndarray:
    padded = _repeated_shape(array, repeats)
    if type(array) is MetaArray:
        return MetaArray(tuple(size * r for size, r in zip(padded, repeats, strict=True)), array.dtype)
    return np.tile(array.reshape(padded), repeats)


def _repeated_shape(array: np.ndarray, repeats: tuple[int, ...]) -> tuple[int, ...]:
    """``array``'s shape padded with leading 1s to ``len(repeats)`` dimensions, after PyTorch's checks."""
    if len(repeats) < array.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = (1,) * (len(repeats) - array.ndim) + array.shape
    target = [size * r for size, r in zip(padded, repeats, strict=True)]
    for size in target:
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {target}")
    return padded


def _untile(grad, shape, repeats: tuple[int, ...]):
    """Gradient of tiling an input of ``shape`` ``repeats`` times: the sum over the copies, as
    PyTorch's ``repeat_backward`` writes it (the added leading dimensions summed one by one, then
    one reshape splitting each repeated dimension and one sum over the copies; nothing for
    repeats of 1)."""
    shape = tuple(shape)
    if 0 in repeats:  # an empty result: zeros
        return ops.ops.aten.zeros.default(list(shape), dtype=grad.dtype, layout=strided, device=grad.device)
    for _ in range(len(repeats) - len(shape)):
        grad = grad.sum(0)
    sizes, dims = [], []
    for r, size in zip(repeats[len(repeats) - len(shape):], shape, strict=True):
        if r != 1:
            sizes.append(r)
            dims.append(len(sizes) - 1)
        sizes.append(size)
    return grad.reshape(sizes).sum(dims) if dims else grad


def _repeat_grad(grad, input_shape, repeats):
    return _untile(grad, input_shape, varargs_ints(repeats, "repeat", "repeats"))


@op(grad=_repeat_grad, method=True, function=False, meta=metadata,
    errors=(Sample((M23, 2)), Sample((M23, 2, -1))),
    samples=(Sample((M23, 2, 1)), Sample((M23, (1, 2, 2))), Sample((SCALAR, 3)), Sample((I23, [1, 0]))),
    tags=("core",))
def repeat(input: Tensor, *repeats: int) -> Tensor:
    """A copy with the data repeated ``repeats[i]`` times along dimension ``i``
    (extra leading repeats add dimensions).

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    return _repeat(input, varargs_ints(repeats, "repeat", "repeats"))


def _tile_grad(grad, input_shape, dims):
    dims = int_tuple(dims, "tile", "dims")
    return _untile(grad, input_shape, (1,) * (len(input_shape) - len(dims)) + dims)


def _tile_decomposition(input, dims):
    """PyTorch's composite ``tile``: ``repeat`` with ``dims`` padded with ones at the front to the
    tensor's dimensions. Arguments the op rejects are left to it."""
    try:
        dims = int_tuple(dims, "tile", "dims")
    except TypeError:
        return NotImplemented
    if not isinstance(input, TensorBase) or any(d < 0 for d in dims):
        return NotImplemented
    return ops.ops.aten.repeat.default(input, [1] * (input.dim() - len(dims)) + list(dims))


@op(grad=_tile_grad, meta=metadata, decompose=_tile_decomposition,
    errors=(Sample((M23, (2, -2))), Sample((M23, 2.0))),
    samples=(Sample((M23, (2, 1))), Sample((M23, (2,))), Sample((M23, (2, 1, 3))),
             Sample((SCALAR, ())), Sample((I23, [1, 2]))),
    schema={"dims": "SymInt[]"})
def tile(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """Like ``repeat``, but ``dims`` shorter than the tensor's dimensions is padded with ones
    at the front.

    >>> import tensormodes as tm
    >>> tm.tile(tm.tensor([[1, 2]]), (2,)).tolist()
    [[1, 2, 1, 2]]
    """
    dims = int_tuple(dims, "tile", "dims")
    return _repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _tile_method_grad(grad, input_shape, dims):
    return _tile_grad(grad, input_shape, varargs_ints(dims, "tile", "dims"))


_NO_TILE_DIMS = 'tile() missing 1 required positional arguments: "dims"'


def _tile_method_decomposition(input, dims):  # dims: the call's tuple of varargs
    if not dims:  # PyTorch's argument parser refuses it before any dispatch
        raise TypeError(_NO_TILE_DIMS)
    try:
        dims = varargs_ints(dims, "tile", "dims")
    except TypeError:
        return NotImplemented
    return _tile_decomposition(input, dims)


@op(grad=_tile_method_grad, function=False, method="tile", meta=metadata, decompose=_tile_method_decomposition,
    errors=(Sample((M23, 2, -2)), Sample((M23, 2.0)), Sample((M23,))),
    samples=(Sample((M23, 2, 1)), Sample((M23, (2,))), Sample((M23, 2, 1, 3)), Sample((SCALAR, ())),
             Sample((I23, [1, 2]))),
    aten="tile.default")
def tile_method(input: Tensor, *dims: int) -> Tensor:
    """``Tensor.tile(*dims)``: the repeats as separate arguments or one sequence.

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2]]).tile(2, 1).tolist(), tm.tensor([[1, 2]]).tile((2,)).tolist()
    ([[1, 2], [1, 2]], [[1, 2, 1, 2]])
    """
    if not dims:
        raise TypeError(_NO_TILE_DIMS)
    dims = varargs_ints(dims, "tile", "dims")
    return _repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _triangle_check(array: np.ndarray, op_name: str, diagonal) -> None:
    if array.ndim < 2:
        raise RuntimeError(f"{op_name}: input tensor must have at least 2 dimensions")
    if not is_int(diagonal):
        raise TypeError(f"{op_name}(): argument 'diagonal' must be int, not {type(diagonal).__name__}")


def _tril_grad(grad, diagonal):
    return grad.tril(diagonal)


@op(grad=_tril_grad, method=True, inplace=True, out=True, meta=same_shape,
    errors=(Sample((TensorSpec((3,)),)), Sample((M23, 1.0))),
    samples=(Sample((TensorSpec((3, 4)),)), Sample((TensorSpec((3, 4)), 1)), Sample((M234,), {"diagonal": -1}),
             Sample((TensorSpec((3, 3), "int64"), -5)), Sample((TensorSpec((3, 3), "bool"),))),
    schema={"diagonal": "SymInt"})
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the (batch of) matrices: elements above diagonal ``diagonal`` are zeroed.

    >>> import tensormodes as tm
    >>> tm.tril(tm.ones(3, 3, dtype=tm.int64)).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    _triangle_check(input, "tril", diagonal)
    return np.tril(input, diagonal)


def _triu_grad(grad, diagonal):
    return grad.triu(diagonal)


@op(grad=_triu_grad, method=True, inplace=True, out=True, meta=same_shape,
    errors=(Sample((SCALAR,)), Sample((M23, "1"))),
    samples=(Sample((TensorSpec((3, 4)),)), Sample((TensorSpec((3, 4)), -1)), Sample((M234,), {"diagonal": 2}),
             Sample((TensorSpec((3, 3), "int64"), 5)), Sample((TensorSpec((3, 3), "bool"),))),
    schema={"diagonal": "SymInt"})
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the (batch of) matrices: elements below diagonal ``diagonal`` are zeroed.

    >>> import tensormodes as tm
    >>> tm.triu(tm.ones(3, 3, dtype=tm.int64), 1).tolist()
    [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    """
    _triangle_check(input, "triu", diagonal)
    return np.triu(input, diagonal)


def _diag_embed_shape(input, offset: int, dim1: int, dim2: int) -> tuple[tuple[int, ...], int, int]:
    ndim = input.ndim + 1
    d1, d2 = _diagonal_dims(ndim, dim1, dim2)
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    batch = list(input.shape[:-1])
    shape = []
    for i in range(ndim):
        shape.append(n if i in (d1, d2) else batch.pop(0))
    return tuple(shape), d1, d2


def _diag_embed_grad(grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


@op(grad=_diag_embed_grad, method=True, meta=metadata,
    errors=(Sample((M23, 0, 1, 1)), Sample((M23, 0, 0, 3))),
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((TensorSpec((3,), "int64"), -1)),
             Sample((M23,), {"offset": 0, "dim1": 0, "dim2": 2}), Sample((M23, 2, -1, 0))))
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonals (``offset``, in the planes ``dim1``, ``dim2``) are filled from the
    last dimension of ``input``; the rest is zero.

    >>> import tensormodes as tm
    >>> tm.diag_embed(tm.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    shape, d1, d2 = _diag_embed_shape(input, offset, dim1, dim2)
    if type(input) is MetaArray:
        return MetaArray(shape, input.dtype)
    result = np.zeros(shape, input.dtype)
    diagonal_view(result, offset, d1, d2)[...] = input
    return result


def _fliplr_grad(grad):
    return grad.flip(1)  # PyTorch's fliplr is a flip


@op(grad=_fliplr_grad, method=True, meta=same_shape, errors=(Sample((TensorSpec((3,)),)),),
    samples=(Sample((M23,)), Sample((M234,))))
def fliplr(input: Tensor) -> Tensor:
    """A copy with the order of columns (dimension 1) reversed.

    >>> import tensormodes as tm
    >>> tm.fliplr(tm.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 1], [4, 3]]
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return np.flip(input, 1).copy()


def _flipud_grad(grad):
    return grad.flip(0)  # PyTorch's flipud is a flip


@op(grad=_flipud_grad, method=True, meta=same_shape, errors=(Sample((SCALAR,)),),
    samples=(Sample((M23,)), Sample((TensorSpec((3,), "int64"),))))
def flipud(input: Tensor) -> Tensor:
    """A copy with the order of rows (dimension 0) reversed.

    >>> import tensormodes as tm
    >>> tm.flipud(tm.tensor([[1, 2], [3, 4]])).tolist()
    [[3, 4], [1, 2]]
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return np.flip(input, 0).copy()


def _rot90_meta(input, k=1, dims=(0, 1)):
    rot90(probe(input), k, dims)  # the argument checks, on a probe
    dims = int_tuple(dims, "rot90", "dims")
    first, second = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    shape = list(input.shape)
    if k % 2:
        shape[first], shape[second] = shape[second], shape[first]
    return MetaArray(tuple(shape), input.dtype)


def _rot90_grad(grad, k, dims):
    return grad.rot90(-k, dims)


@op(grad=_rot90_grad, method=True, meta=rule(_rot90_meta),
    errors=(Sample((M23, 1, (0,))), Sample((TensorSpec((3,)),)), Sample((M23, 1, (1, -1))), Sample((M23, 1, (0, 2)))),
    samples=(Sample((M23,)), Sample((M23, 2)), Sample((M234, -1, (2, 0))), Sample((I23, 7, [1, 0]))))
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotates by 90 degrees ``k`` times in the plane of ``dims``, from the first dimension
    towards the second.

    >>> import tensormodes as tm
    >>> tm.rot90(tm.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    dims = int_tuple(dims, "rot90", "dims")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    first, second = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if first == second:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {first} and dim1 = {second}")
    return np.rot90(input, k, (first, second)).copy()


# -- differences and repeats -------------------------------------------------------------

def _difference_adjoint(grad, d: int):
    """The gradient of one first difference along ``d`` (``x[1:] - x[:-1]``)."""
    shape = list(grad.shape)
    shape[d] = 1
    edge = grad.new_zeros(shape)
    return ops.cat([edge, grad], d) - ops.cat([grad, edge], d)


def _diff_meta(input, n=1, dim=-1, prepend=None, append=None):
    d = _check_diff(input, n, dim, prepend, append)
    dtype = diff(*probe((input, n, dim, prepend, append))).dtype  # the kernel's dtype, on probes
    shape = list(input.shape)
    if n:  # (no differences: the input's copy, prepend and append ignored, as PyTorch)
        shape[d] = max(sum(a.shape[d] for a in (prepend, input, append) if a is not None) - n, 0)
    return MetaArray(tuple(shape), dtype)


def _diff_grad(grad, input_shape, n, dim, prepend_shape, append_shape):
    if n == 0:
        return grad, None, None
    d = wrap_dim(dim, len(input_shape))
    lengths = [0 if s is None else s[d] for s in (prepend_shape, input_shape, append_shape)]
    joined = sum(lengths)
    for _ in range(min(n, joined)):
        grad = _difference_adjoint(grad, d)
    if n > joined:  # the differences ran out of elements: nothing depends on the input
        shape = list(input_shape)
        shape[d] = joined
        grad = grad.new_zeros(shape)
    parts = grad.split(lengths, d)
    return parts[1], parts[0] if prepend_shape is not None else None, parts[2] if append_shape is not None else None


def _diff_decomposition(input, n=1, dim=-1, prepend=None, append=None):
    """PyTorch's composite ``diff``: ``prepend`` and ``append`` joined (``cat``), then each
    difference as ``slice.Tensor``s of the last result subtracted (``logical_xor`` for bool); no
    difference is a copy (``zeros_like``, ``copy_``). Arguments the op rejects are left to it."""
    extras = (prepend, append)
    if not isinstance(input, TensorBase) or not is_int(n) or not is_int(dim) or any(
            e is not None and not isinstance(e, TensorBase) for e in extras):
        return NotImplemented
    try:
        d = _check_diff(input, n, dim, prepend, append)
    except (RuntimeError, IndexError):
        return NotImplemented
    if n == 0:
        result = ops.ops.aten.zeros_like.default(input)
        return result.copy_(input)
    values = input
    if prepend is not None or append is not None:
        values = ops.ops.aten.cat.default([t for t in (prepend, input, append) if t is not None], d)
    slice_op, length = ops.ops.aten.slice.Tensor, values.shape[d] - 1
    for _ in range(min(n, values.shape[d])):
        later, earlier = slice_op(values, d, 1, 1 + length), slice_op(values, d, 0, length)
        values = ops.logical_xor(later, earlier) if values.dtype == dt.bool else later - earlier
        length -= 1
    return values


@op(grad=_diff_grad, method=True, meta=rule(_diff_meta), decompose=_diff_decomposition, errors=(
    Sample((SCALAR,)), Sample((M23, -1)), Sample((M23, 1, 2)), Sample((M23,), {"prepend": TensorSpec((3, 1))}),
    Sample((M23,), {"append": TensorSpec((2,))})), samples=(
    Sample((M23,)), Sample((TensorSpec((4, 3)), 2, 0)), Sample((TensorSpec((2, 3), "int64", -5, 5),)),
    Sample((TensorSpec((4,), "bool"),)), Sample((TensorSpec((5,), "float16"),)),
    Sample((M23,), {"prepend": TensorSpec((2, 1)), "append": TensorSpec((2, 2))}),
    Sample((M23, 1, -1, TensorSpec((2, 2), "int64", 0, 3))), Sample((TensorSpec((3,)), 5)),
    Sample((M23, 0))))
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``x[1:] - x[:-1]``, applied ``n``
    times; exclusive or for bool), after joining ``prepend`` and ``append`` on either side.

    >>> import tensormodes as tm
    >>> tm.diff(tm.tensor([1, 4, 9, 16]))
    tensor([3, 5, 7])
    >>> tm.diff(tm.tensor([1, 4, 9, 16]), n=2)
    tensor([2, 2])
    """
    d = _check_diff(input, n, dim, prepend, append)
    if n == 0:  # PyTorch's copy of the input alone (prepend and append are not joined)
        return input.copy()
    joined = [a for a in (prepend, input, append) if a is not None]
    values = _cat(joined, d) if len(joined) > 1 else input
    step = np.logical_xor if values.dtype == np.bool_ else np.subtract
    if values.dtype.kind == "c":
        one = values.dtype.type(1)

        def step(later, earlier):
            # PyTorch's complex sub multiplies the subtrahend by alpha = 1 + 0j: a NaN part spreads
            with quiet():
                return np.subtract(later, np.multiply(earlier, one))
    for _ in range(n):
        if values.shape[d] == 0:
            break
        values = step(np.delete(values, 0, d), np.delete(values, -1, d))
    return values


def _check_diff(input, n, dim, prepend, append) -> int:
    """The wrapped ``dim`` of ``diff``, after its checks."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    for extra in (prepend, append):
        if extra is None:
            continue
        if extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for axis, (size, got) in enumerate(zip(input.shape, extra.shape)):
            if axis != d and size != got:
                raise RuntimeError(f"diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({axis}) = {size}, but got "
                                   f"tensor.size({axis}) = {got}")
    return d


def _check_repeat_counts(input, repeats, dim) -> None:
    """PyTorch's first checks of a tensor of counts: its dimensions, then a dim of a 0-dim input
    (which has no size to match the counts with)."""
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if dim is not None and input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _check_count_dtype(counts) -> None:
    """The counts kernel takes int32 and int64 only (checked after the sizes, before the values)."""
    if counts.dtype not in (np.int32, np.int64):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{scalar_type_name(dt.NP_TO_DTYPE[counts.dtype])}'")


def _check_repeated_scalar(input, dim) -> None:
    """An int count along a dim of a 0-dim input: PyTorch unsqueezes the input at dim + 1, out of range."""
    if dim is not None and input.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim if dim not in (-1, 0) else 1})")


def _repeat_interleave_meta(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None or type(repeats) is MetaArray:  # the counts are values
        if repeats is None:
            _check_count_dtype(input)
            if input.ndim != 1:
                raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        else:
            _check_repeat_counts(input, repeats, dim)
            if dim is not None:
                wrap_dim(dim, input.ndim)
            _check_count_dtype(repeats)
        raise value_dependent("repeat_interleave")
    if isinstance(repeats, (bool, float)) or not is_int(repeats):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                        f"{type(repeats).__name__}")
    axis = 0 if dim is None else wrap_dim(dim, max(input.ndim, 1))
    shape = list(input.shape) if dim is not None and input.ndim else [input.size]
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    _check_repeated_scalar(input, dim)
    total = shape[axis] * repeats
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}")
    shape[axis] = total
    return MetaArray(tuple(shape), input.dtype), MetaArray((total,), np.dtype(np.int64))


def _repeat_interleave_grad(grad, input_shape, repeats_shape, dim, positions):
    # ``positions``: where each output slice came from (the kernel hands them over, as PyTorch's
    # composite keeps the index it selects with, not the repeats: a repeats tensor is not saved,
    # so changing it in place later does not break backward).
    if repeats_shape is None:  # a number of repeats: PyTorch's composite's gradient, the copies summed
        d = 0 if dim is None or not input_shape else wrap_dim(dim, len(input_shape))
        shape = list(input_shape) if dim is not None and input_shape else [int(np.prod(input_shape))]
        repeats = grad.shape[d] // shape[d] if shape[d] else 0
        copies = grad.view([*shape[:d + 1], repeats, *shape[d + 1:]]).sum(d + 1)
        return copies.view(tuple(input_shape)) if dim is None else copies, None
    if dim is None:
        size = int(np.prod(input_shape))
        return grad.new_zeros(size).index_add(0, positions, grad).reshape(input_shape), None
    d = wrap_dim(dim, len(input_shape))
    return grad.new_zeros(tuple(input_shape)).index_add(d, positions, grad), None


def _repeat_interleave_decomposition(input, repeats=None, dim=None, output_size=None):  # (all by position)
    """PyTorch's composite ``repeat_interleave`` with a number of repeats: the input (flattened
    without ``dim``) unsqueezed after ``dim``, expanded there to ``repeats`` copies, cloned and
    flattened back (``unsqueeze``, ``expand``, ``clone``, ``view``). Repeats given as a tensor, and
    arguments the op rejects, are left to the op."""
    if not isinstance(input, TensorBase) or isinstance(repeats, bool) or not is_int(repeats) or repeats < 0:
        return NotImplemented
    try:
        _repeat_interleave_meta(MetaArray(tuple(input.shape), input._data.dtype), repeats, dim,
                                output_size=output_size)
    except (RuntimeError, IndexError, TypeError):
        return NotImplemented
    if dim is None:
        input, d = input.flatten(), 0
    else:
        d = wrap_dim(dim, input.dim())
    aten = ops.ops.aten
    input = aten.unsqueeze.default(input, d + 1)
    shape = list(input.shape)
    shape[d + 1] = repeats
    copies = aten.clone.default(aten.expand.default(input, shape), memory_format=ops.contiguous_format)
    return copies.flatten(d, d + 1)


@op(grad=_repeat_interleave_grad, method=True, saves=("positions",), decompose=_repeat_interleave_decomposition,
    meta=rule(_repeat_interleave_meta), errors=(
    Sample((M23, -1)), Sample((M23, 2.0)), Sample((M23, 2, 2)), Sample((M23, 2, 0), {"output_size": 3})), samples=(
    Sample((M23, 2)), Sample((M23, TensorSpec((2,), "int64", 0, 3), 0)), Sample((M23, 3, -1)),
    Sample((TensorSpec((3,), "int64", 0, 3),)), Sample((SCALAR, 3)), Sample((M23, TensorSpec((), "int64", 1, 2), 1)),
    Sample((TensorSpec((2, 2), "bool"), 2, 0), {"output_size": 4}), Sample((M23, TensorSpec((1,), "int64", 2, 2), 1))),
    aten={"repeat_interleave.Tensor": ("repeats", "dim", "input: Tensor repeats", "+dynamic_output_shape"),
        "repeat_interleave.self_Tensor": ("repeats: Tensor=",), "repeat_interleave.self_int": ("repeats: SymInt=",)},
    schema={"output_size": "SymInt?", "(returns)": "Tensor"})
def repeat_interleave(input: Tensor, repeats: Tensor | Number | None = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (or each slice along ``dim``) repeated ``repeats`` times in place (an int,
    or one count per slice); the input is flattened without ``dim``. Given only a tensor of
    counts, the indices repeated that many times.

    >>> import tensormodes as tm
    >>> tm.repeat_interleave(tm.tensor([1, 2]), 2)
    tensor([1, 1, 2, 2])
    >>> tm.repeat_interleave(tm.tensor([2, 0, 1]))
    tensor([0, 0, 2])
    """
    if repeats is None:  # repeat_interleave(repeats): the indices, repeated
        counts = input
        _check_count_dtype(counts)
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        values, axis = np.arange(counts.shape[0]), 0
    else:
        if isinstance(repeats, (bool, float)) or (not isinstance(repeats, np.ndarray) and not is_int(repeats)):
            raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                            f"{type(repeats).__name__}")
        values = input if dim is not None else input.reshape(-1)
        if isinstance(repeats, np.ndarray):
            _check_repeat_counts(input, repeats, dim)
        axis = 0 if dim is None else wrap_dim(dim, max(input.ndim, 1))
        if values.ndim == 0:
            values = values.reshape(1)
        counts = repeats
        if not isinstance(counts, np.ndarray):
            if counts < 0:
                raise RuntimeError("Repeats must be non-negative")
            _check_repeated_scalar(input, dim)
            counts = np.full(values.shape[axis], counts, np.int64)
        elif counts.size == 1:
            counts = np.full(values.shape[axis], counts.reshape(()), counts.dtype)
        elif counts.shape[0] != values.shape[axis]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.shape[0]} and input.size({axis}) = {values.shape[axis]}")
    _check_count_dtype(counts)
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(counts.sum(dtype=np.int64))
    if total < 0:  # the int64 sum of non-negative counts wrapped, as PyTorch's, whose size check then fails
        raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {total}")
    if output_size is not None and output_size != total:
        if isinstance(repeats, np.ndarray) or repeats is None:  # the counts kernel's own check
            raise RuntimeError("allocated size does not match required size")
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}")
    if total > np.iinfo(np.int64).max // 8:  # PyTorch's int64 index tensor of that length
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{total}]")
    try:
        positions = np.repeat(np.arange(values.shape[axis]), counts)
    except MemoryError:
        raise RuntimeError(f"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           f"memory: you tried to allocate {total * 8} bytes. Error code 12 (Cannot allocate "
                           f"memory)") from None
    return np.take(values, positions, axis=axis), positions


def _diagflat_grad(grad, input_shape, offset):
    return grad.diagonal(offset).reshape(input_shape)


@op(grad=_diagflat_grad, method=True, meta=metadata, samples=(
    Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2)), 1)), Sample((SCALAR, -1)),
    Sample((TensorSpec((3,), "int64", -3, 3), -2)), Sample((TensorSpec((0,)),))))
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on diagonal ``offset`` and zeros elsewhere.

    >>> import tensormodes as tm
    >>> tm.diagflat(tm.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    size = input.size + abs(offset)
    if type(input) is MetaArray:
        return MetaArray((size, size), input.dtype)
    flat = input.reshape(-1)
    result = np.zeros((size, size), input.dtype)
    rows = np.arange(flat.size) + max(-offset, 0)
    result[rows, rows + offset] = flat
    return result
