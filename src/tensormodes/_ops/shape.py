"""Shape ops: views (``view``, ``reshape``, ``transpose``, ``expand`` ...), joins
(``cat``, ``stack`` ...), splits (``split``, ``chunk``, ``unbind``) and reorderings
(``flip``, ``roll``, ``repeat`` ...).

View ops (declared ``view=True``) return NumPy views, so results share memory
with their input exactly as PyTorch views do: writing through the view changes
the base. Broadcasting views (``expand``) are built with ``as_strided`` and
zero strides, because ``np.broadcast_to`` returns read-only arrays while
PyTorch's expanded tensors are writable.

Gradients put ``grad`` back where the input's elements went: views and copies
rearrange it the inverse way (``transpose`` transposes it, ``cat`` narrows it,
``split`` writes the pieces' gradients into zeros); ops that pick elements, possibly
several times (``diagonal``, ``unfold``, advanced indexing), apply themselves to the
input's flat positions (``positions_of``) and add each gradient back there
(``gather_back``). Formulas that need only the input's shape ask for ``input_shape``,
not ``input`` (see ``_registry.op``), so the input may change in place before backward.

Where PyTorch's method takes varargs but its function a tuple (``x.reshape(2, 3)``
versus ``torch.reshape(x, (2, 3))``), two ops share one kernel helper: the
function's op and a method-only op (``function=False``).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _dtype as dt
from ._common import (
    array_of,
    array_type_name,
    check_same_shape_or_broadcast,
    one_sequence_as_items,
    operand_dtype,
    public,
    resolve_dtype,
    scalar_type_name,
    wrap_dim,
    wrap_dims,
)
from ._registry import Sample, TensorSpec, op

if TYPE_CHECKING:
    from collections.abc import Sequence
    from numbers import Number

    from .._tensor import Tensor

_M23 = TensorSpec((2, 3))
_M234 = TensorSpec((2, 3, 4))
_SCALAR = TensorSpec(())
_I23 = TensorSpec((2, 3), "int64", -5, 5)

# PyTorch names tensors by their legacy type in some messages ("torch.FloatTensor").


def legacy_type_name(array: np.ndarray) -> str:
    """``'torch.FloatTensor'`` for a float32 array: the name PyTorch's expand errors use."""
    return f"torch.{array_type_name(array)}Tensor"


# -- argument parsing --------------------------------------------------------------------

def _is_int(value) -> bool:
    # type() first: isinstance against the numbers ABC is slow.
    return type(value) is int or (isinstance(value, numbers.Integral) and not isinstance(value, bool))


def int_tuple(values, op_name: str, param: str, *, allow_int: bool = True) -> tuple[int, ...]:
    """A sequence of ints (or, if ``allow_int``, one int) as a tuple, with PyTorch's
    TypeError for anything else."""
    if type(values) is tuple and all(type(i) is int for i in values):
        return values  # the common case, already as wanted
    if _is_int(values):
        if not allow_int:
            raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, not int")
        return (int(values),)
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, "
                        f"not {type(values).__name__}") from None
    for position, item in enumerate(items):
        if not _is_int(item):
            raise TypeError(f"{op_name}(): argument '{param}' must be tuple of ints, but found element of "
                            f"type {type(item).__name__} at pos {position}")
    return tuple(int(i) for i in items)


def varargs_ints(args: tuple, op_name: str, param: str) -> tuple[int, ...]:
    """Method varargs: ``x.view(2, 3)``, ``x.view((2, 3))`` and ``x.view([2, 3])`` all mean (2, 3)."""
    if len(args) == 1 and not _is_int(args[0]):
        return int_tuple(args[0], op_name, param)
    return int_tuple(args, op_name, param)


def _dim_list(dims, ndim: int, op_name: str, param: str = "dims") -> tuple[int, ...]:
    """Wrapped dims; RuntimeError naming the dim given twice."""
    return wrap_dims(int_tuple(dims, op_name, param), ndim)


def _wrap_dim_of_tensor(dim, ndim: int) -> int:
    """Like ``wrap_dim`` but for ops that need a real dimension (no 0-dim tensors)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def _along(dim: int, index) -> tuple:
    """A NumPy index applying ``index`` to dimension ``dim`` only (basic indexing: a view)."""
    return (slice(None),) * dim + (index, Ellipsis)


# -- gradient helpers: formulas run on Tensors, through public methods (see _registry.op) --
# The engine sums gradients back to broadcast inputs' shapes and casts them to the
# inputs' dtypes, so broadcasting views need no rule of their own (``_same_grad``).

def _same_grad(grad):
    """Gradient of an op that passes its input through (copies, broadcasting views)."""
    return grad


def _reshape_grad(grad, input_shape):
    """Gradient of an op that only changes the shape: ``grad`` in the input's shape."""
    return grad.reshape(input_shape)


def _as_tuple(grad) -> tuple:
    """Output gradients of a multi-output op (a single Tensor when it had one output)."""
    return grad if isinstance(grad, tuple) else (grad,)


def _is_tensor(value) -> bool:
    return value is not None and not isinstance(value, numbers.Number)


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


def _place(grad, shape, index):
    """Gradient of the view ``input[index]`` of an input of ``shape`` (basic indexing: each
    element once): zeros with ``grad`` written at ``index``."""
    out = grad.new_zeros(tuple(shape))
    out[index] = grad
    return out


def _unsplit(grads: tuple, shape, d: int, points: list[int]):
    """Gradient of a split of an input of ``shape`` at ``points`` along ``d`` (Python slice
    rules: clamped, possibly empty pieces): each piece's gradient written back at its slice.
    Unsorted points (``tensor_split``) make pieces overlap; overlapping ones are added."""
    out = grads[0].new_zeros(tuple(shape))
    size, covered = shape[d], 0
    bounds = [None, *points, None]
    for start, stop, grad in zip(bounds[:-1], bounds[1:], grads, strict=True):
        start, stop, _ = slice(start, stop).indices(size)
        index = _along(d, slice(start, stop))
        if start >= covered or start >= stop:
            out[index] = grad
        else:  # overlaps an earlier piece: add (reading ``out`` before writing it would
            # invalidate what the read saved for a higher-order gradient)
            out = out + _place(grad, shape, index)
        covered = max(covered, stop)
    return out


def _unjoin(grad, shapes, d: int, extents: list[int]):
    """Gradient of a join along ``d`` to which the tensor of shape ``shapes[i]`` contributed
    ``extents[i]`` slices: the part of ``grad`` it contributed, in its own shape."""
    grads, start = [], 0
    for shape, extent in zip(shapes, extents, strict=True):
        grads.append(grad.narrow(d, start, extent).reshape(shape))
        start += extent
    return grads


# -- reshaping views ---------------------------------------------------------------------

def infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """Resolve a single -1 in ``shape``; RuntimeError if it cannot hold ``numel`` elements."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for position, d in enumerate(shape):
        if d != -1:
            if d < 0:
                raise RuntimeError(f"invalid shape dimension {d} at index {position} of shape {list(shape)}")
            known *= d
    if -1 in shape:
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                                   "unspecified dimension size -1 can be any value and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if d == -1 else d for d in shape)
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _view_shape(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    try:
        return np.reshape(array, infer_shape(shape, array.size), copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None


def _view_dtype(array: np.ndarray, dtype: dt.dtype) -> np.ndarray:
    """The same bytes read as ``dtype`` (the last dimension rescales when item sizes differ)."""
    old, new = array.dtype.itemsize, dtype.itemsize
    if old != new:
        names = (array_type_name(array), scalar_type_name(dtype))
        if array.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names[0]} as {names[1]} (different element sizes)")
        if array.shape[-1] != 1 and array.strides[-1] != old:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names[0]} as {names[1]} (different element "
                               f"sizes), but got {array.strides[-1] // old}")
        if new > old and (array.shape[-1] * old) % new:
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} to view {names[0]} as "
                               f"{names[1]} (different element sizes), but got {array.shape[-1]}")
    return array.view(dtype._np)


def _view_grad(grad, input_shape):
    return grad.reshape(input_shape)


def _reshapes(input, shape: tuple) -> bool:
    return not (len(shape) == 1 and type(shape[0]) is dt.dtype)  # view(dtype) reinterprets bytes: no gradient


@op(grad=_view_grad, differentiable=_reshapes, method=True, function=False, view=True,
    samples=(Sample((_M23, 3, 2)), Sample((_M23, -1)), Sample((_M23, (1, -1))), Sample((_SCALAR, 1)),
             Sample((_I23, [3, 1, 2])), Sample((TensorSpec((2, 4)), dt.int32)),
             Sample((TensorSpec((2, 4)), dt.float16))))
def view(input: Tensor, *shape: int) -> Tensor:
    """A view with a new shape (no copy; the strides must allow it), or, given a dtype,
    the same bytes reinterpreted as that dtype.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3, 4, 5]).view(2, 3).tolist(), tm.tensor([0, 1, 2, 3, 4, 5]).view(-1, 2).shape
    ([[0, 1, 2], [3, 4, 5]], tensormodes.Size([3, 2]))
    >>> tm.zeros(2, dtype=tm.float32).view(tm.int32).tolist()
    [0, 0]
    """
    if len(shape) == 1 and type(shape[0]) is dt.dtype:
        return _view_dtype(input, shape[0])
    return _view_shape(input, varargs_ints(shape, "view", "size"))


def _view_as_grad(grad, input_shape):
    return grad.reshape(input_shape), None


@op(grad=_view_as_grad, method=True, function=False, view=True,
    samples=(Sample((_M23, TensorSpec((3, 2)))), Sample((_SCALAR, TensorSpec((1, 1))))))
def view_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.view(other.size())``.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3]).view_as(tm.zeros(2, 2)).tolist()
    [[0, 1], [2, 3]]
    """
    return _view_shape(input, other.shape)


def _view_as_real_grad(grad):
    return public("view_as_complex")(grad.contiguous())


@op(grad=_view_as_real_grad, view=True, samples=(
    Sample((TensorSpec((2, 3), "complex64"),)), Sample((TensorSpec((), "complex128"),)),
    Sample((TensorSpec((3, 2), "complex128"),))))
def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's memory seen as real numbers: a view with a last dimension of size 2
    holding each element's real and imaginary parts.

    >>> import tensormodes as tm
    >>> tm.view_as_real(tm.tensor([1 + 2j, 3 - 1j]))
    tensor([[ 1.,  2.],
            [ 3., -1.]])
    """
    if input.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    part = input.real
    return as_strided(part, input.shape + (2,), input.strides + (part.itemsize,))


def _view_as_complex_grad(grad):
    return public("view_as_real")(grad)


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _storage_offset(array: np.ndarray) -> int:
    """Elements between the start of the memory ``array`` views and its first element."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return (array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]) // array.itemsize


@op(grad=_view_as_complex_grad, view=True, samples=(
    Sample((TensorSpec((3, 2)),)), Sample((TensorSpec((2,), "float64"),)), Sample((TensorSpec((2, 2, 2)),))))
def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dimension has size 2 seen as complex numbers (real and
    imaginary parts), as a view without that dimension.

    >>> import tensormodes as tm
    >>> tm.view_as_complex(tm.tensor([[1.0, 2.0], [3.0, -1.0]]))
    tensor([1.+2.j, 3.-1.j])
    """
    if input.dtype not in _COMPLEX_OF:
        if input.dtype == np.float16:
            raise NotImplementedError("view_as_complex(): a float16 tensor would be complex32 (ComplexHalf), "
                                      "which tensormodes does not have")
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a "
                           f"tensor of scalar type: {array_type_name(input)}")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    itemsize = input.itemsize
    if input.strides[-1] != itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(stride % (2 * itemsize) for stride in input.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if _storage_offset(input) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return input.view(_COMPLEX_OF[input.dtype])[..., 0]


def _reshape(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.reshape(array, infer_shape(shape, array.size))


@op(grad=_reshape_grad, view=True,
    samples=(Sample((_M23, (3, 2))), Sample((_M23, (-1,))), Sample((_SCALAR, ())),
             Sample((_I23, [1, 3, -1]))))
def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """The same data with a new shape: a view when the strides allow it, else a copy.
    One dimension may be ``-1`` and is then inferred.

    >>> import tensormodes as tm
    >>> tm.reshape(tm.tensor([[1, 2], [3, 4]]), (-1,)).tolist()
    [1, 2, 3, 4]
    """
    return _reshape(input, int_tuple(shape, "reshape", "shape", allow_int=False))


@op(grad=_reshape_grad, function=False, method="reshape", view=True,
    samples=(Sample((_M23, 3, 2)), Sample((_M23, (-1,))), Sample((_SCALAR, 1, 1)), Sample((_I23, [6]))))
def reshape_method(input: Tensor, *shape: int) -> Tensor:
    """``Tensor.reshape(*shape)``: the sizes as separate arguments or one sequence.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3, 4, 5]).reshape(2, 3).shape, tm.tensor([0, 1, 2, 3, 4, 5]).reshape((3, -1)).shape
    (tensormodes.Size([2, 3]), tensormodes.Size([3, 2]))
    """
    return _reshape(input, varargs_ints(shape, "reshape", "shape"))


@op(grad=_reshape_grad, method=True, view=True,
    samples=(Sample((_M234,)), Sample((_M234, 1)), Sample((_M234, 0, -2)), Sample((_SCALAR,)),
             Sample((_I23,), {"start_dim": -1}), Sample((_M234,), {"start_dim": 1, "end_dim": 2})))
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Flattens dimensions ``start_dim`` to ``end_dim`` into one (a view when possible).

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3, 4).flatten().shape, tm.zeros(2, 3, 4).flatten(1).shape
    (tensormodes.Size([24]), tensormodes.Size([2, 12]))
    """
    start, end = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if input.ndim == 0:
        return np.reshape(input, (1,))
    shape = input.shape
    return np.reshape(input, shape[:start] + (-1,) + shape[end + 1:]) if input.size else \
        np.reshape(input, shape[:start] + (0,) + shape[end + 1:])


@op(grad=_reshape_grad, method=True, view=True,
    samples=(Sample((_M234, 1, (3, 1))), Sample((_M234, -1, (2, -1))), Sample((_I23, 0, [1, 2, 1]))))
def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Expands dimension ``dim`` into the shape ``sizes`` (one entry may be -1).

    >>> import tensormodes as tm
    >>> tm.zeros(2, 6).unflatten(1, (2, 3)).shape
    tensormodes.Size([2, 2, 3])
    """
    d = wrap_dim(dim, input.ndim)
    sizes = int_tuple(sizes, "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input.shape[d] if input.ndim else 1
    try:
        inferred = infer_shape(sizes, size)
    except RuntimeError:
        if sizes.count(-1) > 1:
            raise
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({size}) in the input tensor") from None
    return np.reshape(input, input.shape[:d] + inferred + input.shape[d + 1:])


@op(grad=_reshape_grad, method=True, view=True,
    samples=(Sample((TensorSpec((1, 3, 1)),)), Sample((TensorSpec((1, 3, 1)), 0)), Sample((TensorSpec((1, 3, 1)), -1)),
             Sample((TensorSpec((1, 3, 1)), (0, 1, 2))), Sample((_SCALAR, 0)), Sample((_M23, 1)),
             Sample((TensorSpec((2, 1), "int64"),), {"dim": [1]})))
def squeeze(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Removes dimensions of size 1: all of them, or those among ``dim`` (others are kept).

    >>> import tensormodes as tm
    >>> x = tm.zeros(1, 2, 1)
    >>> x.squeeze().shape, x.squeeze(0).shape, x.squeeze((0, 2)).shape, x.squeeze(1).shape
    (tensormodes.Size([2]), tensormodes.Size([2, 1]), tensormodes.Size([2]), tensormodes.Size([1, 2, 1]))
    """
    if dim is None:
        axes = tuple(i for i, size in enumerate(input.shape) if size == 1)
    else:
        axes = tuple(d for d in _dim_list(dim, input.ndim, "squeeze", "dim") if input.ndim and input.shape[d] == 1)
    return np.squeeze(input, axis=axes)


def _unsqueeze_grad(grad, dim):
    return grad.squeeze(wrap_dim(dim, grad.dim()))


@op(grad=_unsqueeze_grad, method=True, view=True,
    samples=(Sample((_M23, 0)), Sample((_M23, -1)), Sample((_SCALAR, 0)), Sample((_I23, 1))))
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Inserts a dimension of size 1 at position ``dim``.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2]).unsqueeze(0).shape, tm.tensor([1, 2]).unsqueeze(-1).shape
    (tensormodes.Size([1, 2]), tensormodes.Size([2, 1]))
    """
    axis = wrap_dim(dim, input.ndim + 1)
    shape = input.shape
    # A reshape adding a 1 is always a view, like np.expand_dims (a slow Python helper).
    return input.reshape(shape[:axis] + (1,) + shape[axis:])


# -- reordering dimensions ---------------------------------------------------------------

def _permute(array: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    if len(dims) != array.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           "length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{array.ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(wrap_dim(d, array.ndim) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(array, wrapped)


def _permute_grad(grad, dims):
    inverse = [0] * grad.dim()
    for position, d in enumerate(varargs_ints(dims, "permute", "dims")):
        inverse[wrap_dim(d, grad.dim())] = position
    return grad.permute(inverse)


@op(grad=_permute_grad, view=True,
    samples=(Sample((_M234, (2, 0, 1))), Sample((_M234, (-1, -3, 1))), Sample((_SCALAR, ())),
             Sample((_I23, [1, 0]))))
def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    """A view with the dimensions reordered: result dimension ``i`` is input dimension ``dims[i]``.

    >>> import tensormodes as tm
    >>> tm.permute(tm.zeros(2, 3, 4), (2, 0, 1)).shape
    tensormodes.Size([4, 2, 3])
    """
    return _permute(input, int_tuple(dims, "permute", "dims", allow_int=False))


@op(grad=_permute_grad, function=False, method="permute", view=True,
    samples=(Sample((_M234, 2, 0, 1)), Sample((_M234, (-1, -3, 1))), Sample((_I23, [1, 0]))))
def permute_method(input: Tensor, *dims: int) -> Tensor:
    """``Tensor.permute(*dims)``: the dims as separate arguments or one sequence.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3, 4).permute(2, 0, 1).shape, tm.zeros(2, 3).permute((1, 0)).shape
    (tensormodes.Size([4, 2, 3]), tensormodes.Size([3, 2]))
    """
    return _permute(input, varargs_ints(dims, "permute", "dims"))


def _t_grad(grad):
    return grad.t()


@op(grad=_t_grad, method=True, view=True,
    samples=(Sample((_M23,)), Sample((TensorSpec((3,)),)), Sample((_SCALAR,)),
             Sample((_I23,))))
def t(input: Tensor) -> Tensor:
    """Transpose of a matrix (tensors of 0 or 1 dimension are returned as they are).

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2]]).t().tolist()
    [[1], [2]]
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.T


def _swap(array: np.ndarray, first, second) -> np.ndarray:
    first, second = wrap_dim(first, array.ndim), wrap_dim(second, array.ndim)
    if array.ndim == 0:
        return array.view()
    return np.swapaxes(array, first, second)


def _transpose_grad(grad, dim0, dim1):
    return grad.transpose(dim0, dim1)


@op(grad=_transpose_grad, method=True, view=True,
    samples=(Sample((_M23, 0, 1)), Sample((_M234, -1, 0)), Sample((_SCALAR, 0, -1)),
             Sample((_I23, 1, 1))))
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dimensions ``dim0`` and ``dim1`` (a view).

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3, 4).transpose(0, 2).shape
    tensormodes.Size([4, 3, 2])
    """
    return _swap(input, dim0, dim1)


def _swapaxes_grad(grad, axis0, axis1):
    return grad.transpose(axis0, axis1)


@op(grad=_swapaxes_grad, method=True, view=True,
    samples=(Sample((_M234, 0, 2)), Sample((_I23, -1, 0))))
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """Alias of ``transpose`` (NumPy's name).

    >>> import tensormodes as tm
    >>> tm.swapaxes(tm.zeros(2, 3), 0, 1).shape
    tensormodes.Size([3, 2])
    """
    return _swap(input, axis0, axis1)


@op(grad=_transpose_grad, method=True, view=True,
    samples=(Sample((_M234, 0, 2)), Sample((_I23, -1, 0))))
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Alias of ``transpose``.

    >>> import tensormodes as tm
    >>> tm.swapdims(tm.zeros(2, 3), 0, 1).shape
    tensormodes.Size([3, 2])
    """
    return _swap(input, dim0, dim1)


def _movedim(array: np.ndarray, source, destination) -> np.ndarray:
    source = int_tuple(source, "movedim", "source")
    destination = int_tuple(destination, "movedim", "destination")
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
                           f"contain the same number of dims as destination ({list(destination)} dims)")
    wrapped_source = [wrap_dim(d, array.ndim) for d in source]
    wrapped_destination = [wrap_dim(d, array.ndim) for d in destination]
    if len(set(wrapped_source)) != len(wrapped_source):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(wrapped_destination)) != len(wrapped_destination):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if array.ndim == 0:
        return array.view()
    return np.moveaxis(array, wrapped_source, wrapped_destination)


def _movedim_grad(grad, source, destination):
    return grad.movedim(destination, source)


@op(grad=_movedim_grad, method=True, view=True,
    samples=(Sample((_M234, 0, 2)), Sample((_M234, (0, 1), (2, 0))), Sample((_M234, [-1], [0])),
             Sample((_SCALAR, 0, 0)), Sample((_I23, 1, 0))))
def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Moves the dimension(s) at ``source`` to position(s) ``destination``; the others keep their order.

    >>> import tensormodes as tm
    >>> tm.movedim(tm.zeros(2, 3, 4), 0, -1).shape
    tensormodes.Size([3, 4, 2])
    """
    return _movedim(input, source, destination)


@op(grad=_movedim_grad, method=True, view=True,
    samples=(Sample((_M234, 0, 2)), Sample((_M234, (0, 1), (2, 0)))))
def moveaxis(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Alias of ``movedim`` (NumPy's name).

    >>> import tensormodes as tm
    >>> tm.moveaxis(tm.zeros(2, 3, 4), (0, 1), (2, 0)).shape
    tensormodes.Size([3, 4, 2])
    """
    return _movedim(input, source, destination)


# -- broadcasting views ------------------------------------------------------------------

def expand_array(array: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """``array`` broadcast to ``sizes`` (-1 keeps a dimension) as a writable zero-stride view."""
    lead = len(sizes) - array.ndim
    if lead < 0:
        raise RuntimeError(f"expand({legacy_type_name(array)}{{{list(array.shape)}}}, size={list(sizes)}): the "
                           "number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({array.ndim})")
    shape, strides = [], []
    for i, size in enumerate(sizes):
        if i < lead:
            if size < 0:
                raise RuntimeError(f"The expanded size of the tensor ({size}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            shape.append(size)
            strides.append(0)
            continue
        existing, stride = array.shape[i - lead], array.strides[i - lead]
        if size == -1:
            size = existing
        elif size != existing:
            if existing != 1:
                raise RuntimeError(f"The expanded size of the tensor ({size}) must match the existing size "
                                   f"({existing}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                                   f"Tensor sizes: {list(array.shape)}")
            if size < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(sizes)}")
            stride = 0
        shape.append(size)
        strides.append(stride)
    if tuple(shape) == array.shape:
        return array.view()
    return as_strided(array, tuple(shape), tuple(strides), writeable=array.flags.writeable)


@op(grad=_same_grad, method=True, function=False, view=True,
    samples=(Sample((TensorSpec((3, 1)), 3, 4)), Sample((TensorSpec((3, 1)), (2, -1, 4))), Sample((_SCALAR, 2)),
             Sample((TensorSpec((1,), "int64"), [2, 3])), Sample((_M23, -1, -1))))
def expand(input: Tensor, *size: int) -> Tensor:
    """A view with singleton dimensions repeated to ``size`` (no copy; -1 keeps a dimension).
    New dimensions can be added at the front.

    >>> import tensormodes as tm
    >>> tm.tensor([[1], [2]]).expand(2, 3).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    return expand_array(input, varargs_ints(size, "expand", "size"))


def _expand_as_grad(grad):
    return grad, None


@op(grad=_expand_as_grad, method=True, function=False, view=True,
    samples=(Sample((TensorSpec((3, 1)), TensorSpec((2, 3, 4)))), Sample((_SCALAR, _M23))))
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.expand(other.size())``.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2]).expand_as(tm.zeros(3, 2)).shape
    tensormodes.Size([3, 2])
    """
    return expand_array(input, other.shape)


@op(grad=_same_grad, method=True, view=True,
    samples=(Sample((TensorSpec((3, 1)), (3, 4))), Sample((TensorSpec((3, 1)), (2, -1, 4))), Sample((_SCALAR, (2,))),
             Sample((TensorSpec((3,), "bool"), [2, 3]))))
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input`` broadcast to ``size`` (a view, like ``expand``).

    >>> import tensormodes as tm
    >>> tm.broadcast_to(tm.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    return expand_array(input, int_tuple(size, "broadcast_to", "size", allow_int=False))


def _broadcast_tensors_grad(grad):
    return list(_as_tuple(grad))


@op(grad=_broadcast_tensors_grad,
    samples=(Sample((_M23, TensorSpec((3,)))), Sample((TensorSpec((3, 1)), TensorSpec((1, 4), "int64"), _SCALAR)),
             Sample((_SCALAR,))))
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors broadcast to a common shape (each shares memory with its input).

    >>> import tensormodes as tm
    >>> a, b = tm.broadcast_tensors(tm.tensor([[1], [2]]), tm.tensor([10, 20, 30]))
    >>> a.shape, b.tolist()
    (tensormodes.Size([2, 3]), [[10, 20, 30], [10, 20, 30]])
    """
    shape = check_same_shape_or_broadcast(*(t.shape for t in tensors)) if tensors else ()
    return tuple(expand_array(t, shape) for t in tensors)


# -- joining ----------------------------------------------------------------------------

def _legacy_empty(shape) -> bool:
    """PyTorch's joins skip legacy empty tensors of shape (0,), whatever the others' shapes."""
    return len(shape) == 1 and shape[0] == 0


def _cat(arrays: list[np.ndarray], dim: int, op_name: str = "cat") -> np.ndarray:
    if not arrays:
        raise ValueError(f"{op_name}(): expected a non-empty list of Tensors")
    dtype = operand_dtype(*arrays)._np
    for position, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be concatenated")
    kept = [(i, a) for i, a in enumerate(arrays) if not _legacy_empty(a.shape)]
    if not kept:
        d = wrap_dim(dim, 1)
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
    return np.concatenate([a.astype(dtype, copy=False) for _, a in kept], axis=d)


def _cat_grad(grad, tensors_shape, dim):
    d = wrap_dim(dim, grad.dim())
    return _unjoin(grad, tensors_shape, d, [0 if _legacy_empty(s) else s[d] for s in tensors_shape])


@op(grad=_cat_grad, out=True,
    samples=(Sample(([_M23, _M23],)), Sample(([_M23, TensorSpec((1, 3), "int64")],)),
             Sample(([_M23, TensorSpec((2, 1))], -1)), Sample(([_M23, TensorSpec((0,))],), {"dim": 0}),
             Sample(([TensorSpec((2,), "bool"), TensorSpec((3,), "int32")],))))
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenates tensors along an existing dimension ``dim`` (dtypes promote).

    >>> import tensormodes as tm
    >>> tm.cat([tm.tensor([[1, 2]]), tm.tensor([[3, 4]])]).tolist()
    [[1, 2], [3, 4]]
    >>> tm.cat([tm.tensor([[1, 2]]), tm.tensor([[3, 4]])], dim=1).tolist()
    [[1, 2, 3, 4]]
    """
    return _cat(tensors, dim)


@op(grad=_cat_grad, out=True,
    samples=(Sample(([_M23, _M23], 1)),))
def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Alias of ``cat``.

    >>> import tensormodes as tm
    >>> tm.concat([tm.tensor([1]), tm.tensor([2])]).tolist()
    [1, 2]
    """
    return _cat(tensors, dim, "concat")


@op(grad=_cat_grad, out=True,
    samples=(Sample(([_M23, _M23], -1)),))
def concatenate(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Alias of ``cat`` (NumPy's name).

    >>> import tensormodes as tm
    >>> tm.concatenate([tm.tensor([1]), tm.tensor([2])]).tolist()
    [1, 2]
    """
    return _cat(tensors, dim, "concatenate")


def _stack(arrays: list[np.ndarray], dim: int, op_name: str = "stack") -> np.ndarray:
    if not arrays:
        raise RuntimeError(f"{op_name} expects a non-empty TensorList")
    first = arrays[0]
    for position, a in enumerate(arrays[1:], start=1):
        if a.shape != first.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 "
                               f"and {list(a.shape)} at entry {position}")
    dtype = operand_dtype(*arrays)._np
    return np.stack([a.astype(dtype, copy=False) for a in arrays], axis=wrap_dim(dim, first.ndim + 1))


def _stack_grad(grad, dim):
    return grad.unbind(wrap_dim(dim, grad.dim()))


@op(grad=_stack_grad, out=True,
    samples=(Sample(([_M23, _M23],)), Sample(([_M23, _M23], -1)), Sample(([_SCALAR, _SCALAR],)),
             Sample(([TensorSpec((3,), "int32"), TensorSpec((3,), "bool")],), {"dim": 1})))
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Joins tensors of one shape along a new dimension ``dim`` (dtypes promote).

    >>> import tensormodes as tm
    >>> tm.stack([tm.tensor([1, 2]), tm.tensor([3, 4])], dim=1).tolist()
    [[1, 3], [2, 4]]
    """
    return _stack(tensors, dim)


def _at_least_shape(shape: tuple[int, ...], ndim: int) -> tuple[int, ...]:
    """NumPy's ``atleast_1d``/``atleast_2d``/``atleast_3d`` layout, which PyTorch shares:
    ``[n]`` becomes ``[1, n]`` or ``[1, n, 1]``, ``[m, n]`` becomes ``[m, n, 1]``."""
    if len(shape) >= ndim:
        return shape
    if not shape:
        return (1,) * ndim
    if ndim == 2 or len(shape) == 1:
        return (1, *shape, 1)[:ndim]
    return (*shape, 1)


def _at_least(array: np.ndarray, ndim: int) -> np.ndarray:
    return array if array.ndim >= ndim else array.reshape(_at_least_shape(array.shape, ndim))


def _join_at_least_grad(grad, shapes, ndim: int, d: int):
    """Gradient of joining the tensors of ``shapes`` made at least ``ndim``-dimensional along ``d``."""
    extents = [_at_least_shape(tuple(s), ndim) for s in shapes]
    return _unjoin(grad, shapes, d, [0 if _legacy_empty(s) else s[d] for s in extents])


def _hstack_grad(grad, tensors_shape):
    return _join_at_least_grad(grad, tensors_shape, 1, 0 if len(tensors_shape[0]) <= 1 else 1)


def _vstack_grad(grad, tensors_shape):
    return _join_at_least_grad(grad, tensors_shape, 2, 0)


def _dstack_grad(grad, tensors_shape):
    return _join_at_least_grad(grad, tensors_shape, 3, 2)


@op(grad=_hstack_grad, out=True,
    samples=(Sample(([_M23, _M23],)), Sample(([TensorSpec((2,)), TensorSpec((3,), "int64")],)),
             Sample(([_SCALAR, _SCALAR],))))
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors horizontally: along dimension 1, or 0 for 1-dimensional tensors.

    >>> import tensormodes as tm
    >>> tm.hstack([tm.tensor([1, 2]), tm.tensor([3])]).tolist()
    [1, 2, 3]
    """
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    arrays = [_at_least(a, 1) for a in tensors]
    return _cat(arrays, 0 if arrays[0].ndim == 1 else 1, "hstack")


@op(grad=_vstack_grad, out=True,
    samples=(Sample(([_M23, TensorSpec((3,))],)), Sample(([_SCALAR, _SCALAR],))))
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors vertically (along dimension 0, after making them at least 2-dimensional).

    >>> import tensormodes as tm
    >>> tm.vstack([tm.tensor([1, 2]), tm.tensor([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _cat([_at_least(a, 2) for a in tensors], 0, "vstack")


@op(grad=_dstack_grad, out=True,
    samples=(Sample(([_M23, _M23],)), Sample(([TensorSpec((3,)), TensorSpec((3,), "int32")],)),
             Sample(([_SCALAR, _SCALAR],))))
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors depthwise (along dimension 2, after making them at least 3-dimensional).

    >>> import tensormodes as tm
    >>> tm.dstack([tm.tensor([1, 2]), tm.tensor([3, 4])]).shape
    tensormodes.Size([1, 2, 2])
    """
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _cat([_at_least(a, 3) for a in tensors], 2, "dstack")


# -- splitting --------------------------------------------------------------------------

def _split_sizes(array: np.ndarray, split_size_or_sections, d: int) -> list[int]:
    size = array.shape[d]
    if _is_int(split_size_or_sections):
        split_size = int(split_size_or_sections)
        if split_size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
        if split_size == 0:
            if size != 0:
                raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension size of "
                                   f"{size}")
            return [0]
        count = max(-(-size // split_size), 1)
        return [split_size] * (count - 1) + [size - split_size * (count - 1)]
    sizes = list(int_tuple(split_size_or_sections, "split", "split_size"))
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return sizes


def _pieces(array: np.ndarray, sizes: list[int], d: int) -> tuple[np.ndarray, ...]:
    bounds = np.cumsum([0] + sizes).tolist()
    return tuple(array[_along(d, slice(start, stop))] for start, stop in zip(bounds[:-1], bounds[1:], strict=True))


def _split(array: np.ndarray, split_size_or_sections, dim: int) -> tuple[np.ndarray, ...]:
    if array.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, array.ndim)
    return _pieces(array, _split_sizes(array, split_size_or_sections, d), d)


def _split_grad(grad, tensor_shape, dim):
    return _unsplit_consecutive(_as_tuple(grad), tensor_shape, wrap_dim(dim, len(tensor_shape)))


def _split_method_grad(grad, input_shape, dim):
    return _unsplit_consecutive(_as_tuple(grad), input_shape, wrap_dim(dim, len(input_shape)))


def _unsplit_consecutive(grads: tuple, shape, d: int):
    """Gradient of a split into consecutive pieces along ``d`` (their sizes are the gradients')."""
    points = np.cumsum([g.shape[d] for g in grads[:-1]]).tolist()
    return _unsplit(grads, shape, d, points)


@op(grad=_split_grad, view=True,
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((TensorSpec((2, 5)), [1, 4], 1)),
             Sample((_I23, 2), {"dim": -1}), Sample((TensorSpec((0, 2)), 0))))
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Splits the tensor into chunks, each a view: of ``split_size_or_sections`` along ``dim``
    (the last may be smaller), or of the listed sizes.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.split(tm.tensor([0, 1, 2, 3, 4]), 2)]
    [[0, 1], [2, 3], [4]]
    >>> [t.tolist() for t in tm.split(tm.tensor([0, 1, 2, 3, 4]), [1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    return _split(tensor, split_size_or_sections, dim)


@op(grad=_split_method_grad, function=False, method="split", view=True,
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((TensorSpec((2, 5)), [1, 4], 1)),
             Sample((_I23,), {"split_size": 1, "dim": -1})))
def split_method(input: Tensor, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """``Tensor.split(split_size, dim=0)``: see ``tensormodes.split``.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([0, 1, 2, 3]).split(3)]
    [[0, 1, 2], [3]]
    """
    return _split(input, split_size, dim)


@op(grad=_split_method_grad, method=True, view=True,
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((TensorSpec((6, 2)), 4)), Sample((_I23, 3, -1)),
             Sample((TensorSpec((0,)), 2)), Sample((TensorSpec((5, 2)),), {"chunks": 3, "dim": 0})))
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Splits into at most ``chunks`` views of equal size along ``dim`` (the last may be
    smaller, and there may be fewer chunks).

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([0, 1, 2, 3, 4]).chunk(2)]
    [[0, 1, 2], [3, 4]]
    """
    if not _is_int(chunks):
        raise TypeError(f"chunk(): argument 'chunks' (position 2) must be int, not {type(chunks).__name__}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    split_size = -(-size // chunks)
    if split_size == 0 and size == 0:
        return _pieces(input, [0] * chunks, d)
    return _pieces(input, _split_sizes(input, split_size, d), d)


def _unbind_grad(grad, input_shape, dim):
    d, grads = wrap_dim(dim, len(input_shape)), _as_tuple(grad)
    out = grads[0].new_zeros(tuple(input_shape))
    for i, g in enumerate(grads):
        out[_along(d, i)] = g
    return out


@op(grad=_unbind_grad, method=True, view=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_I23, -1))))
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along ``dim``, each a view without that dimension.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([[1, 2], [3, 4]]).unbind(1)]
    [[1, 3], [2, 4]]
    """
    d = _wrap_dim_of_tensor(dim, input.ndim)
    return tuple(input[_along(d, i)] for i in range(input.shape[d]))


def _narrow_grad(grad, input_shape, dim, start, length):
    d = wrap_dim(dim, len(input_shape))
    start = int(start)
    if start < 0:
        start += input_shape[d]
    return _place(grad, input_shape, _along(d, slice(start, start + length))), None


@op(grad=_narrow_grad, method=True, view=True,
    samples=(Sample((_M23, 1, 1, 2)), Sample((_M23, -1, -2, 1)), Sample((_I23, 0, 0, 0)), Sample((_M23, 1, 3, 0))))
def narrow(input: Tensor, dim: int, start: Tensor | Number, length: int) -> Tensor:
    """The view of ``length`` elements of dimension ``dim`` from index ``start``.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3, 4, 5]).narrow(0, 2, 3).tolist()
    [2, 3, 4]
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    if isinstance(start, np.ndarray):
        if start.ndim != 0 or start.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start)
    if not _is_int(start):
        raise TypeError(f"narrow(): argument 'start' must be int, not {type(start).__name__}")
    if not _is_int(length):
        raise TypeError(f"narrow(): argument 'length' must be int, not {type(length).__name__}")
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return input[_along(d, slice(start, start + length))]


def _select_grad(grad, input_shape, dim, index):
    return _place(grad, input_shape, _along(wrap_dim(dim, len(input_shape)), index))


@op(grad=_select_grad, method=True, view=True,
    samples=(Sample((_M23, 0, 1)), Sample((_M23, -1, -1)), Sample((TensorSpec((3,), "int64"), 0, 2))))
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The view of ``input`` at ``index`` along ``dim`` (that dimension removed).

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2], [3, 4]]).select(1, 0).tolist()
    [1, 3]
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    if not _is_int(index):
        raise TypeError(f"select(): argument 'index' (position 2) must be int, not {type(index).__name__}")
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return input[_along(d, int(index))]


# -- reordering elements (copies) --------------------------------------------------------

def _flip_grad(grad, dims):
    return grad.flip(dims)


@op(grad=_flip_grad, method=True,
    samples=(Sample((_M23, (0,))), Sample((_M234, (0, -1))), Sample((_SCALAR, ())),
             Sample((_I23, [1])), Sample((_M23, ()))))
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


def _roll_grad(grad, shifts, dims):
    back = tuple(-s for s in int_tuple(shifts, "roll", "shifts"))
    return grad.roll(back, dims) if dims is not None else grad.roll(back[0])


@op(grad=_roll_grad, method=True,
    samples=(Sample((_M23, 1)), Sample((_M23, (1, -1), (0, 1))), Sample((_M23, 2, -1)),
             Sample((_SCALAR, 3)), Sample((_I23, -4)), Sample((_M23,), {"shifts": [1], "dims": [1]})))
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
    if len(repeats) < array.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = (1,) * (len(repeats) - array.ndim) + array.shape
    target = [size * r for size, r in zip(padded, repeats, strict=True)]
    for size in target:
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {target}")
    return np.tile(array.reshape(padded), repeats)


def _repeat_grad(grad, input_shape, repeats):
    return _untile(grad, input_shape, varargs_ints(repeats, "repeat", "repeats"))


def _untile(grad, shape, repeats: tuple[int, ...]):
    """Gradient of tiling an input of ``shape`` ``repeats`` times: the sum over the copies."""
    shape = tuple(shape)
    padded = (1,) * (len(repeats) - len(shape)) + shape
    split = []
    for r, size in zip(repeats, padded, strict=True):
        split += [r, size]
    return grad.reshape(split).sum(list(range(0, len(split), 2))).reshape(shape) if split else grad


@op(grad=_repeat_grad, method=True, function=False,
    samples=(Sample((_M23, 2, 1)), Sample((_M23, (1, 2, 2))), Sample((_SCALAR, 3)), Sample((_I23, [1, 0]))))
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


@op(grad=_tile_grad, method=True,
    samples=(Sample((_M23, (2, 1))), Sample((_M23, (2,))), Sample((_M23, (2, 1, 3))),
             Sample((_SCALAR, ())), Sample((_I23, [1, 2]))))
def tile(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """Like ``repeat``, but ``dims`` shorter than the tensor's dimensions is padded with ones
    at the front.

    >>> import tensormodes as tm
    >>> tm.tile(tm.tensor([[1, 2]]), (2,)).tolist()
    [[1, 2, 1, 2]]
    """
    dims = int_tuple(dims, "tile", "dims")
    return _repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _triangle_check(array: np.ndarray, op_name: str, diagonal) -> None:
    if array.ndim < 2:
        raise RuntimeError(f"{op_name}: input tensor must have at least 2 dimensions")
    if not _is_int(diagonal):
        raise TypeError(f"{op_name}(): argument 'diagonal' must be int, not {type(diagonal).__name__}")


def _tril_grad(grad, diagonal):
    return grad.tril(diagonal)


@op(grad=_tril_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((3, 4)),)), Sample((TensorSpec((3, 4)), 1)), Sample((_M234,), {"diagonal": -1}),
             Sample((TensorSpec((3, 3), "int64"), -5)), Sample((TensorSpec((3, 3), "bool"),))))
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


@op(grad=_triu_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((3, 4)),)), Sample((TensorSpec((3, 4)), -1)), Sample((_M234,), {"diagonal": 2}),
             Sample((TensorSpec((3, 3), "int64"), 5)), Sample((TensorSpec((3, 3), "bool"),))))
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the (batch of) matrices: elements below diagonal ``diagonal`` are zeroed.

    >>> import tensormodes as tm
    >>> tm.triu(tm.ones(3, 3, dtype=tm.int64), 1).tolist()
    [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    """
    _triangle_check(input, "triu", diagonal)
    return np.triu(input, diagonal)


def _diagonal_dims(ndim: int, dim1, dim2) -> tuple[int, int]:
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal_view(input: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """The writable view of a diagonal (``np.diagonal`` returns a read-only one)."""
    first = input[_along(d2, slice(offset, None))] if offset >= 0 else input[_along(d1, slice(-offset, None))]
    length = max(0, min(first.shape[d1], first.shape[d2]))
    keep = [i for i in range(input.ndim) if i not in (d1, d2)]
    shape = tuple(first.shape[i] for i in keep) + (length,)
    strides = tuple(first.strides[i] for i in keep) + (first.strides[d1] + first.strides[d2],)
    return as_strided(first, shape, strides, writeable=input.flags.writeable)


def _diagonal_grad(grad, input_shape, offset, dim1, dim2):
    return gather_back(grad, input_shape, positions_of(grad, input_shape).diagonal(offset, dim1, dim2))


@op(grad=_diagonal_grad, method=True, view=True,
    samples=(Sample((TensorSpec((3, 4)),)), Sample((TensorSpec((3, 4)), 1)), Sample((TensorSpec((3, 4)), -2)),
             Sample((_M234,), {"offset": 1, "dim1": -1, "dim2": 0}), Sample((TensorSpec((3, 3), "int64"), 5))))
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The view of the diagonal ``offset`` of the matrices spanned by ``dim1`` and ``dim2``
    (the diagonal becomes the last dimension).

    >>> import tensormodes as tm
    >>> x = tm.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8]).view(3, 3)
    >>> x.diagonal().tolist(), x.diagonal(1).tolist(), x.diagonal(-1).tolist()
    ([0, 4, 8], [1, 5], [3, 7])
    """
    d1, d2 = _diagonal_dims(input.ndim, dim1, dim2)
    return diagonal_view(input, offset, d1, d2)


def _diag_embed_grad(grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


@op(grad=_diag_embed_grad, method=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((TensorSpec((3,), "int64"), -1)),
             Sample((_M23,), {"offset": 0, "dim1": 0, "dim2": 2}), Sample((_M23, 2, -1, 0))))
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonals (``offset``, in the planes ``dim1``, ``dim2``) are filled from the
    last dimension of ``input``; the rest is zero.

    >>> import tensormodes as tm
    >>> tm.diag_embed(tm.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    ndim = input.ndim + 1
    d1, d2 = _diagonal_dims(ndim, dim1, dim2)
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    batch = list(input.shape[:-1])
    shape = []
    for i in range(ndim):
        shape.append(n if i in (d1, d2) else batch.pop(0))
    result = np.zeros(shape, input.dtype)
    diagonal_view(result, offset, d1, d2)[...] = input
    return result


# -- more splits, flips and dimension helpers --------------------------------------------

def _tensor_split_points(size: int, indices_or_sections) -> list[int]:
    """Split points of a dimension of ``size`` for ``tensor_split``: ``sections`` nearly
    equal parts, or explicit indices."""
    given = array_of(indices_or_sections)
    if given is not None:  # a tensor: 0-dim means sections, 1-dim means indices
        if given.dtype != np.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{legacy_type_name(given)[len('torch.'):-len('Tensor')]}")
        if given.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {given.ndim} dims")
        indices_or_sections = int(given) if given.ndim == 0 else given.tolist()
    if _is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(size, sections)
        sizes = [small + 1] * extra + [small] * (sections - extra)
        return np.cumsum(sizes)[:-1].tolist()
    return list(int_tuple(indices_or_sections, "tensor_split", "indices"))


def _split_at(array: np.ndarray, points: list[int], d: int) -> tuple[np.ndarray, ...]:
    """Views between consecutive split points (Python slice rules: clamped, possibly empty)."""
    bounds = [None, *points, None]
    return tuple(array[_along(d, slice(start, stop))] for start, stop in zip(bounds[:-1], bounds[1:], strict=True))


def _split_points_grad(grad, shape, indices_or_sections, d: int):
    return _unsplit(_as_tuple(grad), shape, d, _tensor_split_points(shape[d], indices_or_sections))


def _tensor_split_grad(grad, input_shape, indices_or_sections, dim):
    return _split_points_grad(grad, input_shape, indices_or_sections, wrap_dim(dim, len(input_shape)))


def _hsplit_grad(grad, input_shape, indices_or_sections):
    return _split_points_grad(grad, input_shape, indices_or_sections, 1 if len(input_shape) >= 2 else 0)


def _vsplit_grad(grad, input_shape, indices_or_sections):
    return _split_points_grad(grad, input_shape, indices_or_sections, 0)


def _dsplit_grad(grad, input_shape, indices_or_sections):
    return _split_points_grad(grad, input_shape, indices_or_sections, 2)


@op(grad=_tensor_split_grad, method=True, view=True,
    samples=(Sample((TensorSpec((7,)), 3)), Sample((TensorSpec((7,), "int64"), (1, 6))), Sample((_M23, 2, 1)),
             Sample((_M23, [5, 1], -1)), Sample((_M23, 4), {"dim": 0})))
def tensor_split(input: Tensor, indices_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Splits into views: ``sections`` parts as equal as possible (the first ones one larger),
    or at the given indices along ``dim``.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor_split(tm.tensor([0, 1, 2, 3, 4, 5, 6]), 3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    >>> [t.tolist() for t in tm.tensor_split(tm.tensor([0, 1, 2, 3]), (1, 3))]
    [[0], [1, 2], [3]]
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, input.ndim)
    return _split_at(input, _tensor_split_points(input.shape[d], indices_or_sections), d)


def _directional_split(array: np.ndarray, indices_or_sections, op_name: str, min_ndim: int, d: int):
    if array.ndim < min_ndim:
        raise RuntimeError(f"torch.{op_name} requires a tensor with at least {min_ndim} dimension, but got a tensor "
                           f"with {array.ndim} dimensions!")
    if _is_int(indices_or_sections):
        size = array.shape[d]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{op_name} attempted to split along dimension {d}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
    return _split_at(array, _tensor_split_points(array.shape[d], indices_or_sections), d)


@op(grad=_hsplit_grad, method=True, view=True,
    samples=(Sample((_M23, 3)), Sample((TensorSpec((4,)), [1, 3])), Sample((_I23, [2]))))
def hsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dimension 1 (dimension 0 for 1-D tensors); an int must divide the size.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.hsplit(tm.tensor([[1, 2], [3, 4]]), 2)]
    [[[1], [3]], [[2], [4]]]
    """
    return _directional_split(input, indices_or_sections, "hsplit", 1, 1 if input.ndim >= 2 else 0)


@op(grad=_vsplit_grad, method=True, view=True,
    samples=(Sample((TensorSpec((4, 2)), 2)), Sample((_I23, [1]))))
def vsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dimension 0 of a tensor with at least 2 dimensions.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.vsplit(tm.tensor([[1, 2], [3, 4]]), 2)]
    [[[1, 2]], [[3, 4]]]
    """
    return _directional_split(input, indices_or_sections, "vsplit", 2, 0)


@op(grad=_dsplit_grad, method=True, view=True,
    samples=(Sample((TensorSpec((2, 2, 4)), 2)), Sample((_M234, [1, 3]))))
def dsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dimension 2 of a tensor with at least 3 dimensions.

    >>> import tensormodes as tm
    >>> [t.shape for t in tm.dsplit(tm.zeros(1, 2, 4), 2)]
    [tensormodes.Size([1, 2, 2]), tensormodes.Size([1, 2, 2])]
    """
    return _directional_split(input, indices_or_sections, "dsplit", 3, 2)


def _fliplr_grad(grad):
    return grad.fliplr()


@op(grad=_fliplr_grad, method=True,
    samples=(Sample((_M23,)), Sample((_M234,))))
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
    return grad.flipud()


@op(grad=_flipud_grad, method=True,
    samples=(Sample((_M23,)), Sample((TensorSpec((3,), "int64"),))))
def flipud(input: Tensor) -> Tensor:
    """A copy with the order of rows (dimension 0) reversed.

    >>> import tensormodes as tm
    >>> tm.flipud(tm.tensor([[1, 2], [3, 4]])).tolist()
    [[3, 4], [1, 2]]
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return np.flip(input, 0).copy()


def _rot90_grad(grad, k, dims):
    return grad.rot90(-k, dims)


@op(grad=_rot90_grad, method=True,
    samples=(Sample((_M23,)), Sample((_M23, 2)), Sample((_M234, -1, (2, 0))), Sample((_I23, 7, [1, 0]))))
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


def _column_stack_grad(grad, tensors_shape):
    return _unjoin(grad, tensors_shape, 1, [1 if len(s) <= 1 else s[1] for s in tensors_shape])


@op(grad=_column_stack_grad, out=True,
    samples=(Sample(([TensorSpec((2,)), TensorSpec((2, 2))],)), Sample(([_SCALAR, _SCALAR],)),
             Sample(([TensorSpec((3,), "int64"), TensorSpec((3,), "int32")],))))
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors as columns: 0-D and 1-D tensors become columns, then ``hstack``.

    >>> import tensormodes as tm
    >>> tm.column_stack([tm.tensor([1, 2]), tm.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [a.reshape(-1, 1) if a.ndim <= 1 else a for a in tensors]
    return _cat(columns, 1, "column_stack")


def _at_least_each(arrays: list[np.ndarray], ndim: int):
    results = tuple(_at_least(a, ndim) for a in arrays)
    return results[0] if len(results) == 1 else results


def _atleast_leading_grad(grad):
    """``atleast_1d`` / ``atleast_2d`` only add leading dimensions of size 1 (``[n]`` becomes
    ``[1, n]``), which the engine sums away: each output's gradient is its input's."""
    return list(_as_tuple(grad))


def _atleast_grad(grad, tensors_shape):
    # Outputs of integer inputs have no gradient (None).
    return [None if g is None else g.reshape(s) for g, s in zip(_as_tuple(grad), tensors_shape, strict=True)]


@op(grad=_atleast_leading_grad,
    samples=(Sample((_SCALAR,)), Sample((_M23,)), Sample((_SCALAR, TensorSpec((2,), "int64")))))
def atleast_1d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least one dimension (0-D ones become shape ``[1]``); one tensor
    gives a tensor, several a tuple.

    >>> import tensormodes as tm
    >>> tm.atleast_1d(tm.tensor(3)).tolist()
    [3]
    """
    return _at_least_each(tensors, 1)


@op(grad=_atleast_leading_grad,
    samples=(Sample((_SCALAR,)), Sample((TensorSpec((3,)),)), Sample((_SCALAR, _M234))))
def atleast_2d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least two dimensions (1-D ones become a row).

    >>> import tensormodes as tm
    >>> tm.atleast_2d(tm.tensor([1, 2])).tolist()
    [[1, 2]]
    """
    return _at_least_each(tensors, 2)


@op(grad=_atleast_grad,
    samples=(Sample((_SCALAR,)), Sample((TensorSpec((3,)),)), Sample((_M23, TensorSpec((2,), "bool")))))
def atleast_3d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least three dimensions (``[n]`` becomes ``[1, n, 1]``, ``[m, n]``
    becomes ``[m, n, 1]``).

    >>> import tensormodes as tm
    >>> tm.atleast_3d(tm.tensor([1, 2])).shape
    tensormodes.Size([1, 2, 1])
    """
    return _at_least_each(tensors, 3)


def _unfold_grad(grad, input_shape, dimension, size, step):
    return gather_back(grad, input_shape, positions_of(grad, input_shape).unfold(dimension, size, step))


@op(grad=_unfold_grad, method=True, function=False, view=True,
    samples=(Sample((_M23, 1, 2, 1)), Sample((TensorSpec((5, 2)), 0, 2, 2)), Sample((_SCALAR, 0, 1, 1)),
             Sample((_I23, -1, 3, 1))))
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of all slices of length ``size`` along ``dimension``, taken every ``step``
    elements; the slices become a new last dimension.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2, 3, 4]).unfold(0, 2, 1).tolist()
    [[1, 2], [2, 3], [3, 4]]
    """
    d = wrap_dim(dimension, input.ndim)
    length = input.shape[d] if input.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        return input.reshape(1)
    shape = list(input.shape)
    strides = list(input.strides)
    shape[d] = (length - size) // step + 1
    strides[d] *= step
    return as_strided(input, (*shape, size), (*strides, input.strides[d]), writeable=input.flags.writeable)


# -- differences and repeats -------------------------------------------------------------

def _difference_adjoint(grad, d: int):
    """The gradient of one first difference along ``d`` (``x[1:] - x[:-1]``)."""
    shape = list(grad.shape)
    shape[d] = 1
    edge = grad.new_zeros(shape)
    return public("cat")([edge, grad], d) - public("cat")([grad, edge], d)


def _diff_grad(grad, input_shape, n, dim, prepend_shape, append_shape):
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


@op(grad=_diff_grad, method=True, samples=(
    Sample((_M23,)), Sample((TensorSpec((4, 3)), 2, 0)), Sample((TensorSpec((2, 3), "int64", -5, 5),)),
    Sample((TensorSpec((4,), "bool"),)), Sample((TensorSpec((5,), "float16"),)),
    Sample((_M23,), {"prepend": TensorSpec((2, 1)), "append": TensorSpec((2, 2))}),
    Sample((_M23, 1, -1, TensorSpec((2, 2), "int64", 0, 3))), Sample((TensorSpec((3,)), 5)),
    Sample((_M23, 0))))
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
    joined = [a for a in (prepend, input, append) if a is not None]
    values = _cat(joined, d) if len(joined) > 1 else input
    step = np.logical_xor if values.dtype == np.bool_ else np.subtract
    for _ in range(n):
        if values.shape[d] == 0:
            break
        values = step(np.delete(values, 0, d), np.delete(values, -1, d))
    return values if n else values.copy()


def _repeat_interleave_grad(grad, input_shape, dim, positions):
    # ``positions``: where each output slice came from (the kernel hands them over, as PyTorch's
    # composite keeps the index it selects with, not the repeats).
    if dim is None:
        size = int(np.prod(input_shape))
        return grad.new_zeros(size).index_add(0, positions, grad).reshape(input_shape), None
    d = wrap_dim(dim, len(input_shape))
    return grad.new_zeros(tuple(input_shape)).index_add(d, positions, grad), None


@op(grad=_repeat_interleave_grad, method=True, saves=("positions",), samples=(
    Sample((_M23, 2)), Sample((_M23, TensorSpec((2,), "int64", 0, 3), 0)), Sample((_M23, 3, -1)),
    Sample((TensorSpec((3,), "int64", 0, 3),)), Sample((_SCALAR, 3)), Sample((_M23, TensorSpec((), "int64", 1, 2), 1)),
    Sample((TensorSpec((2, 2), "bool"), 2, 0), {"output_size": 4}), Sample((_M23, TensorSpec((1,), "int64", 2, 2), 1))))
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
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        values, axis = np.arange(counts.shape[0]), 0
    else:
        if isinstance(repeats, (bool, float)) or (not isinstance(repeats, np.ndarray) and not _is_int(repeats)):
            raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                            f"{type(repeats).__name__}")
        values = input if dim is not None else input.reshape(-1)
        axis = 0 if dim is None else wrap_dim(dim, max(input.ndim, 1))
        if values.ndim == 0:
            values = values.reshape(1)
        counts = repeats
        if not isinstance(counts, np.ndarray):
            if counts < 0:
                raise RuntimeError("Repeats must be non-negative")
            counts = np.full(values.shape[axis], counts, np.int64)
        elif counts.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        elif counts.size == 1:
            counts = np.full(values.shape[axis], counts.reshape(()), counts.dtype)
        elif counts.shape[0] != values.shape[axis]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.shape[0]} and input.size({axis}) = {values.shape[axis]}")
    if counts.dtype.kind not in "iu":
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{scalar_type_name(dt.NP_TO_DTYPE[counts.dtype])}'")
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(counts.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}")
    positions = np.repeat(np.arange(values.shape[axis]), counts)
    return np.take(values, positions, axis=axis), positions


def _ravel_grad(grad, input_shape):
    return grad.reshape(input_shape)


@op(grad=_ravel_grad, method=True, view=True,
    samples=(Sample((_M23,)), Sample((_SCALAR,)), Sample((TensorSpec((2, 0)),))))
def ravel(input: Tensor) -> Tensor:
    """The elements in one dimension, in row-major order (a view when the layout allows).

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2], [3, 4]]).t().ravel()
    tensor([1, 3, 2, 4])
    """
    return np.reshape(input, (-1,))


def _diagflat_grad(grad, input_shape, offset):
    return grad.diagonal(offset).reshape(input_shape)


@op(grad=_diagflat_grad, method=True, samples=(
    Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2)), 1)), Sample((_SCALAR, -1)),
    Sample((TensorSpec((3,), "int64", -3, 3), -2)), Sample((TensorSpec((0,)),))))
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on diagonal ``offset`` and zeros elsewhere.

    >>> import tensormodes as tm
    >>> tm.diagflat(tm.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    flat = input.reshape(-1)
    size = flat.size + abs(offset)
    result = np.zeros((size, size), input.dtype)
    rows = np.arange(flat.size) + max(-offset, 0)
    result[rows, rows + offset] = flat
    return result


def _block_diag_grad(grad, tensors_shape):
    grads, row, column = [], 0, 0
    for shape in tensors_shape:
        rows, columns = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        grads.append(grad[row:row + rows, column:column + columns].reshape(shape))
        row, column = row + rows, column + columns
    return grads


@op(grad=_block_diag_grad, samples=(
    Sample((TensorSpec((1, 2)), _SCALAR, TensorSpec((2,)))), Sample((TensorSpec((2, 2)), TensorSpec((1, 3)))),
    Sample((TensorSpec((1,), "bool"), TensorSpec((1, 1), "int64"))), Sample((TensorSpec((0, 2)), TensorSpec((1, 1)))),
    Sample(())))
def block_diag(*tensors: Tensor) -> Tensor:
    """A block diagonal matrix of ``tensors`` (0-D and 1-D ones as one row), dtypes promoted.

    >>> import tensormodes as tm
    >>> tm.block_diag(tm.tensor([[1, 2]]), tm.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    for position, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {position} "
                               f"has {t.ndim} dimensions")
    if not tensors:
        return np.zeros((1, 0), dt.get_default_dtype()._np)
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    result = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), operand_dtype(*tensors)._np)
    row = column = 0
    for b in blocks:
        result[row:row + b.shape[0], column:column + b.shape[1]] = b
        row, column = row + b.shape[0], column + b.shape[1]
    return result


def _cartesian_prod_grad(grad, tensors_shape):
    if len(tensors_shape) == 1:
        return [grad]
    sizes = [shape[0] for shape in tensors_shape]
    grads = []
    for i in range(len(sizes)):
        spread = grad[:, i].reshape(sizes)
        others = [d for d in range(len(sizes)) if d != i]
        grads.append(spread.sum(others) if others else spread)
    return grads


@op(grad=_cartesian_prod_grad, samples=(
    Sample((TensorSpec((2,)), TensorSpec((3,)))), Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"),
                                                        TensorSpec((1,), "int64"))),
    Sample((TensorSpec((3,)),)), Sample((TensorSpec((2,)), TensorSpec((0,))))))
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-D tensor, as rows (one column per tensor);
    one tensor is returned as it is.

    >>> import tensormodes as tm
    >>> tm.cartesian_prod(tm.tensor([1, 2]), tm.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0].copy()
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    grids = np.meshgrid(*tensors, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1)


# -- properties (Tensor.is_complex, is_floating_point and numel are defined with the class) ---

_PROPERTY_SAMPLES = (Sample((_M23,)), Sample((TensorSpec((2,), "complex64"),)), Sample((TensorSpec((3,), "int64"),)),
                     Sample((TensorSpec((2,), "uint8"),)), Sample((_SCALAR,)), Sample((TensorSpec((0, 2)),)))


@op(differentiable=False, samples=_PROPERTY_SAMPLES)
def is_complex(input: Tensor) -> bool:
    """True if ``input``'s dtype is complex (also ``Tensor.is_complex()``).

    >>> import tensormodes as tm
    >>> tm.is_complex(tm.tensor([1j]))
    True
    """
    return input.dtype.kind == "c"


@op(differentiable=False, samples=_PROPERTY_SAMPLES)
def is_floating_point(input: Tensor) -> bool:
    """True if ``input``'s dtype is a floating-point one (also ``Tensor.is_floating_point()``).

    >>> import tensormodes as tm
    >>> tm.is_floating_point(tm.tensor([1.0]))
    True
    """
    return input.dtype.kind == "f" or input.dtype == dt.bfloat16._np


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES)
def is_signed(input: Tensor) -> bool:
    """True if ``input``'s dtype holds negative numbers (all but ``bool`` and ``uint8``).

    >>> import tensormodes as tm
    >>> tm.is_signed(tm.tensor([1], dtype=tm.uint8))
    False
    """
    return input.dtype.kind not in "bu"


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES)
def is_conj(input: Tensor) -> bool:
    """False: tensormodes computes conjugates rather than deferring them.

    >>> import tensormodes as tm
    >>> tm.is_conj(tm.tensor([1j]).conj())
    False
    """
    return False


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES)
def is_neg(input: Tensor) -> bool:
    """False: tensormodes computes negations rather than deferring them.

    >>> import tensormodes as tm
    >>> tm.is_neg(tm.tensor([1.0]))
    False
    """
    return False


@op(differentiable=False, samples=_PROPERTY_SAMPLES)
def numel(input: Tensor) -> int:
    """The number of elements (also ``Tensor.numel()``).

    >>> import tensormodes as tm
    >>> tm.numel(tm.zeros(2, 3))
    6
    """
    return int(input.size)


@op(differentiable=False, method=True, samples=(
    Sample((TensorSpec((1,)),)), Sample((TensorSpec((), "int64", 0, 0),)), Sample((TensorSpec((1, 1), "bool"),)),
    Sample((TensorSpec((), "complex64"),))))
def is_nonzero(input: Tensor) -> bool:
    """Whether the single element of ``input`` is nonzero (NaN is); more or fewer elements raise.

    >>> import tensormodes as tm
    >>> tm.is_nonzero(tm.tensor([0.5]))
    True
    """
    if input.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if input.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    return bool(input.reshape(()) != 0)


@op(differentiable=False, method=True, samples=(Sample((_M23, _M23)), Sample((_M23, TensorSpec((3, 2)))),
                                                Sample((_SCALAR, TensorSpec((), "int64")))))
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether ``input`` and ``other`` have the same shape.

    >>> import tensormodes as tm
    >>> tm.is_same_size(tm.zeros(2, 3), tm.zeros(3, 2))
    False
    """
    return input.shape == other.shape


# -- copies and aliases -----------------------------------------------------------------

@op(grad=_same_grad, method=True,
    samples=(Sample((_M23,)), Sample((_SCALAR,)), Sample((_I23,), {"memory_format": None})))
def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own memory (the strides of a dense input are preserved).

    >>> import tensormodes as tm
    >>> x = tm.tensor([1, 2]); y = x.clone(); y[0] = 5
    >>> x.tolist(), y.tolist()
    ([1, 2], [5, 2])
    """
    return input.copy(order="K")


@op(grad=_same_grad, samples=(
    Sample((_M23,), {"dtype": dt.float64}), Sample((_M23,)), Sample((_I23,), {"dtype": dt.float32}),
    Sample((_M23,), {"dtype": dt.int64}), Sample((TensorSpec((2, 3), "float64"),), {"dtype": dt.float16}),
    Sample((_M23,), {"dtype": dt.bfloat16}), Sample((_SCALAR,), {"dtype": dt.float64})))
def _to_copy(input: Tensor, *, dtype: dt.dtype | None = None) -> Tensor:
    """A copy of ``input`` in ``dtype`` (its own dtype when None): what ``Tensor.to(dtype)``,
    ``double()``, ``type()`` ... run, as PyTorch's ``aten::_to_copy``. Differentiable: the
    gradient is the result's, converted back to ``input``'s dtype.

    >>> import tensormodes as tm
    >>> tm._to_copy(tm.tensor([1.5, -2.5]), dtype=tm.int64)
    tensor([ 1, -2])
    """
    target = input.dtype if dtype is None else resolve_dtype(dtype)._np
    return input.astype(target, order="K", copy=True)


# A view when it returns its input's memory, so the two share a version counter (PyTorch
# returns the tensor itself; a separate Tensor over the same memory would hide writes).
@op(grad=_same_grad, method=True, function=False, view=True,
    samples=(Sample((_M23,)), Sample((_SCALAR,))))
def contiguous(input: Tensor, *, memory_format=None) -> Tensor:
    """The data in row-major layout: the same memory when already contiguous, else a copy.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3).t().contiguous().is_contiguous()
    True
    """
    if input.flags.c_contiguous:
        return input
    return np.ascontiguousarray(input)


@op(method=True, differentiable=False, alias=True, samples=(Sample((_M23,)), Sample((_SCALAR,))))
def detach(input: Tensor) -> Tensor:
    """A new tensor sharing memory with ``input`` but outside autograd (never requires grad).

    >>> import tensormodes as tm
    >>> x = tm.zeros(2); y = x.detach(); y[0] = 1; x.tolist()
    [1.0, 0.0]
    """
    return input.view()


_MESHGRID_WARNING = "meshgrid: in an upcoming release, it will be required to pass the indexing argument."


def _meshgrid_grad(grad, indexing):
    # Grid i is input i (1-D, or 0-D: the engine sums the grid's [1] back to []) along one
    # dimension, repeated along the others.
    grads = _as_tuple(grad)
    swap = indexing == "xy" and len(grads) >= 2
    result = []
    for i, g in enumerate(grads):
        if g is None:  # an integer grid
            result.append(None)
            continue
        own = 1 - i if swap and i < 2 else i  # the dimension grid i varies along
        others = [d for d in range(g.dim()) if d != own]
        result.append(g.sum(others) if others else g)
    return result


def _meshgrid_arguments(tensors: tuple, indexing):
    return one_sequence_as_items(tensors), indexing


@op(grad=_meshgrid_grad, normalize=_meshgrid_arguments,
    samples=(Sample(([TensorSpec((2,)), TensorSpec((3,))],), {"indexing": "xy"}),
             Sample((TensorSpec((2,)), TensorSpec((3,))), {"indexing": "ij"}),
             Sample((TensorSpec((2,), "int64"), TensorSpec((3,), "int64"), TensorSpec((4,), "int64")),
             {"indexing": "xy"}),
             Sample((_SCALAR, TensorSpec((3,))), {"indexing": "xy"})))
def meshgrid(*tensors: Tensor, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D (or 0-D) tensors: with ``indexing="ij"`` result ``i`` varies
    along dimension ``i``; ``"xy"`` swaps the first two dimensions (Cartesian layout). The
    grids share memory with the inputs. Omitting ``indexing`` means ``"ij"`` and warns.

    >>> import tensormodes as tm
    >>> x, y = tm.meshgrid(tm.tensor([1, 2]), tm.tensor([3, 4, 5]), indexing="ij")
    >>> x.tolist(), y.tolist()
    ([[1, 1, 1], [2, 2, 2]], [[3, 4, 5], [3, 4, 5]])
    """
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=3)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of shape "
                               f"{list(t.shape)}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    vectors = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(vectors) >= 2
    if swap:
        vectors[0], vectors[1] = vectors[1], vectors[0]
    shape = tuple(v.shape[0] for v in vectors)
    grids = []
    for i, v in enumerate(vectors):
        strides = [0] * len(shape)
        strides[i] = v.strides[0]
        grids.append(as_strided(v, shape, tuple(strides), writeable=v.flags.writeable))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
