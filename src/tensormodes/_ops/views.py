"""Views: reshaping (``view``, ``reshape``, ``flatten``, ``squeeze`` ...), reordering dimensions
(``permute``, ``transpose``, ``movedim``), broadcasting (``expand``, ``broadcast_to``),
``diagonal``, ``unfold``, ``ravel``, and ``as_strided`` (any layout over the input's storage).

View ops (declared ``view=True``) return NumPy views, so results share memory
with their input exactly as PyTorch views do: writing through the view changes
the base. Broadcasting views (``expand``) are built with ``as_strided`` and
zero strides, because ``np.broadcast_to`` returns read-only arrays while
PyTorch's expanded tensors are writable.

Where PyTorch's method takes varargs but its function a tuple (``x.reshape(2, 3)``
versus ``torch.reshape(x, (2, 3))``), two ops share one kernel helper: the
function's op and a method-only op (``function=False``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided as _np_as_strided

from .. import _dtype as dt
from .._meta_array import MetaArray, view_of
from ._samples import I23, M23, M234, SCALAR
from .common import along, array_type_name, check_same_shape_or_broadcast, is_int, ops, scalar_type_name, wrap_dim
from .meta_rules import metadata, rule
from .registry import Sample, Tensor, TensorSpec, alias, op
from .shape import (
    _as_tuple,
    _diagonal_dims,
    _dim_list,
    _same_grad,
    check_storage_bounds,
    int_tuple,
    known_size,
    legacy_type_name,
    meta_indexed,
    meta_permuted,
    meta_reshaped,
    overlaps,
    storage_span,
    strided_geometry,
    varargs_ints,
    view_strides,
)
from .view_composites import movedim_decomposition, unflatten_decomposition

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


_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension spans "
               "across two contiguous subspaces). Use .reshape(...) instead.")


def _view_shape(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if type(array) is MetaArray:
        view = meta_reshaped(array, infer_shape(shape, array.size), copy=False)
        if view is None:
            raise RuntimeError(_VIEW_ERROR)
        return view
    try:
        return np.reshape(array, infer_shape(shape, array.size), copy=False)
    except ValueError:
        raise RuntimeError(_VIEW_ERROR) from None


def _view_dtype(array: np.ndarray, dtype: dt.dtype) -> np.ndarray:
    """The same bytes read as ``dtype`` (the last dimension rescales when item sizes differ)."""
    _check_view_dtype(array, dtype)
    if type(array) is MetaArray:
        return _meta_view_dtype(array, dtype)
    return array.view(dtype._np)


def _meta_view_dtype(array: MetaArray, dtype: dt.dtype) -> MetaArray:
    old, new = array.dtype.itemsize, dtype.itemsize
    if old == new:
        return view_of(array, array.shape, array.elem_strides, dtype=dtype._np)
    # Byte strides stay; element strides and the offset are counted in the new item size.
    shape = (*array.shape[:-1], array.shape[-1] * old // new)
    strides = (*(s * old // new for s in array.elem_strides[:-1]), 1)
    view = view_of(array, shape, strides, dtype=dtype._np)
    view.offset = view.offset * old // new
    return view


def _check_view_dtype(array: np.ndarray, dtype: dt.dtype) -> None:
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


def _reshapes(input, shape: tuple) -> bool:
    return not (len(shape) == 1 and type(shape[0]) is dt.dtype)  # view(dtype) reinterprets bytes: no gradient


def _view_grad(grad, input_shape):
    return grad.reshape(input_shape)


def _view_decomposition(input, shape):  # ``*shape`` arrives as one tuple
    # ``view(dtype)`` is an overload of its own in ATen (``view.dtype``); a shape is ``view`` itself
    if len(shape) == 1 and type(shape[0]) is dt.dtype:
        return ops.ops.aten.view.dtype(input, shape[0])
    return NotImplemented


@op(grad=_view_grad, differentiable=_reshapes, method=True, function=False, view=True, meta=metadata,
    decompose=_view_decomposition,
    errors=(Sample((M23, 4, 2)), Sample((M23, -1, -1)), Sample((TensorSpec((2, 3)), dt.float64)),
            Sample((SCALAR, dt.int16))),
    samples=(Sample((M23, 3, 2)), Sample((M23, -1)), Sample((M23, (1, -1))), Sample((SCALAR, 1)),
             Sample((I23, [3, 1, 2])), Sample((TensorSpec((2, 4)), dt.int32)),
             Sample((TensorSpec((2, 4)), dt.float16))), schema={"shape": "SymInt[] size"}, tags=("core",))
def view(input: Tensor, *shape: int) -> Tensor:
    """A view with a new shape (no copy; the strides must allow it), or, given a dtype,
    the same bytes reinterpreted as that dtype.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3, 4, 5]).view(2, 3).tolist(), tm.tensor([0, 1, 2, 3, 4, 5]).view(-1, 2).shape
    ([[0, 1, 2], [3, 4, 5]], tensormodes.Size([3, 2]))
    >>> tm.zeros(2, dtype=tm.float32).view(tm.int32).tolist()
    [0, 0]
    """
    # one tuple or list of sizes (``x.view([2, 3])`` as ``x.view((2, 3))``)
    size = shape[0] if len(shape) == 1 and (type(shape[0]) is tuple or type(shape[0]) is list) else shape
    if type(input) is np.ndarray and known_size(size) == input.size:  # (the backward's ``sum_to``)
        try:
            return input.reshape(size, copy=False)
        except ValueError:
            raise RuntimeError(_VIEW_ERROR) from None
    if len(shape) == 1 and type(shape[0]) is dt.dtype:
        return _view_dtype(input, shape[0])
    return _view_shape(input, varargs_ints(shape, "view", "size"))


def _view_as_grad(grad, input_shape):
    return grad.reshape(input_shape), None


def _view_as_decomposition(input, other):
    """PyTorch's composite: ``view(input, other.size())``."""
    return input.view(tuple(other.shape))


@op(grad=_view_as_grad, method=True, function=False, view=True, meta=metadata, decompose=_view_as_decomposition,
    errors=(Sample((M23, TensorSpec((4,)))),),
    samples=(Sample((M23, TensorSpec((3, 2)))), Sample((SCALAR, TensorSpec((1, 1))))))
def view_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.view(other.size())``.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3]).view_as(tm.zeros(2, 2)).tolist()
    [[0, 1], [2, 3]]
    """
    return _view_shape(input, other.shape)


def _reshape(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if type(array) is MetaArray:
        return meta_reshaped(array, infer_shape(shape, array.size))
    return np.reshape(array, infer_shape(shape, array.size))


def _reshape_grad(grad, input_shape):
    """Gradient of an op that only changes the shape: ``grad`` in the input's shape."""
    return grad.reshape(input_shape)


def _reshape_as_pytorch(input, given: tuple, size: tuple[int, ...] | None = None):
    """PyTorch's composite ``reshape`` (what the dispatch level sees): ``view`` when the strides
    allow one, else ``clone`` then ``_unsafe_view`` (to ``size``: ``given`` with -1 resolved)."""
    if size is None:
        try:
            size = infer_shape(given, input.numel())
        except RuntimeError:
            return NotImplemented  # the op raises PyTorch's error
    if view_strides(tuple(input.shape), input.stride(), size) is not None:
        return input.view(*given)
    return ops.ops.aten._unsafe_view.default(input.clone(memory_format=ops.contiguous_format), list(size))


def _reshape_decomposition(input, shape):
    try:
        given = int_tuple(shape, "reshape", "shape", allow_int=False)
    except TypeError:
        return NotImplemented
    return _reshape_as_pytorch(input, given)


def _reshape_method_decomposition(input, shape):
    try:
        given = varargs_ints(shape, "reshape", "shape")
    except TypeError:
        return NotImplemented
    return _reshape_as_pytorch(input, given)


def _flatten_decomposition(input, start_dim=0, end_dim=-1):
    """PyTorch's composite ``flatten``: the input itself when nothing is flattened, else
    ``reshape`` to the flattened sizes."""
    if type(start_dim) is not int or type(end_dim) is not int:
        return NotImplemented
    ndim = input.dim()
    if ndim == 0:
        return _reshape_as_pytorch(input, (1,), (1,))
    if not (-ndim <= start_dim < ndim and -ndim <= end_dim < ndim):
        return NotImplemented
    start, end = start_dim % ndim, end_dim % ndim
    if start > end:
        return NotImplemented
    if start == end:
        return input
    shape = tuple(input.shape)
    shape = shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:]
    return _reshape_as_pytorch(input, shape, shape)


@op(grad=_reshape_grad, view=True, meta=metadata, decompose=_reshape_decomposition,
    errors=(Sample((M23, (4, -1))), Sample((M23, (2, 3.0))), Sample((TensorSpec((0, 2)), (-1, 0)))),
    samples=(Sample((M23, (3, 2))), Sample((M23, (-1,))), Sample((SCALAR, ())),
             Sample((I23, [1, 3, -1]))))
def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """The same data with a new shape: a view when the strides allow it, else a copy.
    One dimension may be ``-1`` and is then inferred.

    >>> import tensormodes as tm
    >>> tm.reshape(tm.tensor([[1, 2], [3, 4]]), (-1,)).tolist()
    [1, 2, 3, 4]
    """
    return _reshape(input, int_tuple(shape, "reshape", "shape", allow_int=False))


@op(grad=_reshape_grad, function=False, method="reshape", view=True, meta=metadata,
    decompose=_reshape_method_decomposition,
    errors=(Sample((M23, 5)), Sample((M23, -2, 3))),
    samples=(Sample((M23, 3, 2)), Sample((M23, (-1,))), Sample((SCALAR, 1, 1)), Sample((I23, [6]))),
    aten="reshape.default")
def reshape_method(input: Tensor, *shape: int) -> Tensor:
    """``Tensor.reshape(*shape)``: the sizes as separate arguments or one sequence.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3, 4, 5]).reshape(2, 3).shape, tm.tensor([0, 1, 2, 3, 4, 5]).reshape((3, -1)).shape
    (tensormodes.Size([2, 3]), tensormodes.Size([3, 2]))
    """
    return _reshape(input, varargs_ints(shape, "reshape", "shape"))


def _reshape_as_grad(grad, input_shape):
    return grad.reshape(input_shape), None


def _reshape_as_node(input, other) -> str:
    """The node PyTorch's composite ends in: ``view``'s, or ``_unsafe_view``'s after a copy."""
    return "view" if view_strides(tuple(input.shape), input.stride(), tuple(other.shape)) is not None \
        else "_unsafe_view"


@op(grad=_reshape_as_grad, method=True, function=False, view=True, meta=metadata, node=_reshape_as_node,
    decompose=lambda tensor, other: _reshape_as_pytorch(tensor, tuple(other.shape), tuple(other.shape)),
    errors=(Sample((M23, TensorSpec((4,)))),),
    samples=(Sample((M23, TensorSpec((3, 2)))), Sample((SCALAR, TensorSpec((1, 1)))),
             Sample((M23, TensorSpec((6,), "int64")))))
def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.reshape(other.size())``: a view when the strides allow it, else a copy.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3]).reshape_as(tm.zeros(2, 2)).tolist()
    [[0, 1], [2, 3]]
    """
    return _reshape(input, other.shape)


@op(grad=_reshape_grad, method=True, view=True, meta=metadata, decompose=_flatten_decomposition,
    errors=(Sample((M234, 2, 1)), Sample((M23, 3))),
    samples=(Sample((M234,)), Sample((M234, 1)), Sample((M234, 0, -2)), Sample((SCALAR,)),
             Sample((I23,), {"start_dim": -1}), Sample((M234,), {"start_dim": 1, "end_dim": 2})), aten="using_ints")
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
        return _reshape(input, (1,))
    shape = input.shape
    # The flattened size is spelled out (not -1): with a size-0 dimension elsewhere, -1 is ambiguous.
    shape = shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:]
    if type(input) is MetaArray:
        return meta_reshaped(input, shape)
    return np.reshape(input, shape)


@op(grad=_reshape_grad, method=True, view=True, meta=metadata, decompose=unflatten_decomposition,
    errors=(Sample((M234, 1, (2, 2))), Sample((M234, 1, ())), Sample((M234, 1, (-1, -1)))),
    samples=(Sample((M234, 1, (3, 1))), Sample((M234, -1, (2, -1))), Sample((I23, 0, [1, 2, 1]))),
    aten="int",
    schema={"sizes": "SymInt[]"})
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
    if not input.ndim:  # PyTorch wraps the dim as a scalar's, then fails to read its size
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {d} but tensor has no "
                           "dimensions")
    size = input.shape[d]
    try:
        inferred = infer_shape(sizes, size)
    except RuntimeError as error:
        # PyTorch rewords only the "does not fit" error; the others it passes on, prefixed
        if "is invalid for input of size" not in str(error):
            raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({size}) in the input tensor") from None
    return _reshape(input, input.shape[:d] + inferred + input.shape[d + 1:])


def _squeeze_node(input, dim=None) -> str:
    """PyTorch's node of each squeeze overload: SqueezeBackward0 (all), 1 (one dim), 2 (dims)."""
    return "squeeze" if dim is None else "squeeze#1" if is_int(dim) else "squeeze#2"


def _squeeze_grad(grad, input_shape, dim):
    # PyTorch's unsqueeze_to: an unsqueeze per dimension the squeeze removed, lowest first
    ndim = len(input_shape)
    dims = range(ndim) if dim is None else sorted(_dim_list(dim, ndim, "squeeze", "dim")) if ndim else ()
    for d in dims:
        if input_shape[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


@op(grad=_squeeze_grad, method=True, inplace=True, view=True, meta=metadata, node=_squeeze_node,
    errors=(Sample((M23, 2)), Sample((M23, (0, 0)))),
    samples=(Sample((TensorSpec((1, 3, 1)),)), Sample((TensorSpec((1, 3, 1)), 0)), Sample((TensorSpec((1, 3, 1)), -1)),
             Sample((TensorSpec((1, 3, 1)), (0, 1, 2))), Sample((SCALAR, 0)), Sample((M23, 1)),
             Sample((TensorSpec((2, 1), "int64"),), {"dim": [1]})),
    aten={
        "squeeze.default": ("dim",),
        "squeeze.dim": ("dim: int=", "+core"),
        "squeeze.dims": ("dim: int[]=", "+core"),
    })
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
    if type(input) is MetaArray:
        kept = [d for d in range(input.ndim) if d not in axes]
        return view_of(input, tuple(input.shape[d] for d in kept), tuple(input.elem_strides[d] for d in kept))
    # a view also when nothing is removed (NumPy returns the array itself; PyTorch a new view)
    return np.squeeze(input, axis=axes) if axes else input.view()


def _unsqueeze_grad(grad, dim):
    return grad.squeeze(wrap_dim(dim, grad.dim()))


@op(grad=_unsqueeze_grad, method=True, inplace=True, view=True, meta=metadata,
    errors=(Sample((M23, 3)), Sample((M23, 1.0))),
    samples=(Sample((M23, 0)), Sample((M23, -1)), Sample((SCALAR, 0)), Sample((I23, 1))), tags=("core",))
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Inserts a dimension of size 1 at position ``dim``.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2]).unsqueeze(0).shape, tm.tensor([1, 2]).unsqueeze(-1).shape
    (tensormodes.Size([1, 2]), tensormodes.Size([2, 1]))
    """
    axis = wrap_dim(dim, input.ndim + 1)
    if type(input) is MetaArray:
        return meta_indexed(input, (slice(None),) * axis + (None,))
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
    if type(array) is MetaArray:
        return meta_permuted(array, wrapped)
    return np.transpose(array, wrapped)


def _permute_grad(grad, dims):
    inverse = [0] * grad.dim()
    for position, d in enumerate(varargs_ints(dims, "permute", "dims")):
        inverse[wrap_dim(d, grad.dim())] = position
    return grad.permute(inverse)


@op(grad=_permute_grad, view=True, meta=metadata,
    errors=(Sample((M234, (0, 1))), Sample((M234, (0, 1, 1))), Sample((M23, (0, 2)))),
    samples=(Sample((M234, (2, 0, 1))), Sample((M234, (-1, -3, 1))), Sample((SCALAR, ())),
             Sample((I23, [1, 0]))), tags=("core",))
def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    """A view with the dimensions reordered: result dimension ``i`` is input dimension ``dims[i]``.

    >>> import tensormodes as tm
    >>> tm.permute(tm.zeros(2, 3, 4), (2, 0, 1)).shape
    tensormodes.Size([4, 2, 3])
    """
    return _permute(input, int_tuple(dims, "permute", "dims", allow_int=False))


@op(grad=_permute_grad, function=False, method="permute", view=True, meta=metadata,
    errors=(Sample((M234, 0, 1)), Sample((M23, 1, -1))),
    samples=(Sample((M234, 2, 0, 1)), Sample((M234, (-1, -3, 1))), Sample((I23, [1, 0]))),
    aten="permute.default",
    schema={"dims": "int[]"}, tags=("core",))
def permute_method(input: Tensor, *dims: int) -> Tensor:
    """``Tensor.permute(*dims)``: the dims as separate arguments or one sequence.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3, 4).permute(2, 0, 1).shape, tm.zeros(2, 3).permute((1, 0)).shape
    (tensormodes.Size([4, 2, 3]), tensormodes.Size([3, 2]))
    """
    return _permute(input, varargs_ints(dims, "permute", "dims"))


def _t_grad(grad):
    return grad.t()


@op(grad=_t_grad, method=True, inplace=True, view=True, meta=metadata, errors=(Sample((M234,)),),
    samples=(Sample((M23,)), Sample((TensorSpec((3,)),)), Sample((SCALAR,)),
             Sample((I23,))))
def t(input: Tensor) -> Tensor:
    """Transpose of a matrix (tensors of 0 or 1 dimension are returned as they are).

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2]]).t().tolist()
    [[1], [2]]
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    if type(input) is MetaArray:
        return meta_permuted(input, range(input.ndim)[::-1])
    return input.T


def _swap(array: np.ndarray, first, second) -> np.ndarray:
    first, second = wrap_dim(first, array.ndim), wrap_dim(second, array.ndim)
    if type(array) is MetaArray:
        order = list(range(array.ndim))
        if array.ndim:
            order[first], order[second] = second, first
        return meta_permuted(array, order)
    if array.ndim == 0:
        return array.view()
    return np.swapaxes(array, first, second)


def _transpose_grad(grad, dim0, dim1):
    return grad.transpose(dim0, dim1)


@op(grad=_transpose_grad, method=True, inplace=True, view=True, meta=metadata,
    errors=(Sample((M23, 0, 2)), Sample((SCALAR, 1, 0))),
    samples=(Sample((M23, 0, 1)), Sample((M234, -1, 0)), Sample((SCALAR, 0, -1)),
             Sample((I23, 1, 1))), aten={"transpose.int": ("inplace=default",)})
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dimensions ``dim0`` and ``dim1`` (a view).

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3, 4).transpose(0, 2).shape
    tensormodes.Size([4, 3, 2])
    """
    return _swap(input, dim0, dim1)


swapaxes = alias("swapaxes", of="transpose", method=True, inplace=True, renames={"dim0": "axis0", "dim1": "axis1"},
                 samples=(Sample((M234, 0, 2)), Sample((I23, -1, 0))),
                 doc="""Alias of ``transpose`` (NumPy's name).

    >>> import tensormodes as tm
    >>> tm.swapaxes(tm.zeros(2, 3), 0, 1).shape
    tensormodes.Size([3, 2])
    """)
swapdims = alias("swapdims", of="transpose", method=True, inplace=True,
                 samples=(Sample((M234, 0, 2)), Sample((I23, -1, 0))),
                 doc="""Alias of ``transpose``.

    >>> import tensormodes as tm
    >>> tm.swapdims(tm.zeros(2, 3), 0, 1).shape
    tensormodes.Size([3, 2])
    """)


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
    if type(array) is MetaArray:
        if array.ndim == 0:
            return view_of(array, (), ())
        order = [d for d in range(array.ndim) if d not in wrapped_source]
        for target, d in sorted(zip(wrapped_destination, wrapped_source, strict=True)):
            order.insert(target, d)
        return meta_permuted(array, order)
    if array.ndim == 0:
        return array.view()
    return np.moveaxis(array, wrapped_source, wrapped_destination)


def _movedim_grad(grad, source, destination):
    # PyTorch's movedim is a permute (nothing for a 0-dimensional tensor): permute's gradient, the
    # inverse permutation
    ndim = grad.dim()
    if ndim == 0:
        return grad
    source = [wrap_dim(d, ndim) for d in int_tuple(source, "movedim", "source")]
    destination = [wrap_dim(d, ndim) for d in int_tuple(destination, "movedim", "destination")]
    order = [d for d in range(ndim) if d not in source]  # the forward's: output dim i is input dim order[i]
    for target, d in sorted(zip(destination, source, strict=True)):
        order.insert(target, d)
    inverse = [0] * ndim
    for position, d in enumerate(order):
        inverse[d] = position
    return grad.permute(inverse)


@op(grad=_movedim_grad, method=True, view=True, meta=metadata, decompose=movedim_decomposition,
    errors=(Sample((M234, (0, 1), (1,))), Sample((M234, (0, 0), (1, 2))), Sample((M234, (0, 1), (2, 2))),
            Sample((M23, 2, 0))),
    samples=(Sample((M234, 0, 2)), Sample((M234, (0, 1), (2, 0))), Sample((M234, [-1], [0])),
             Sample((SCALAR, 0, 0)), Sample((I23, 1, 0))),
    aten={"movedim.int": ("source: int", "destination: int"),
        "movedim.intlist": ("source: int[]", "destination: int[]")})
def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Moves the dimension(s) at ``source`` to position(s) ``destination``; the others keep their order.

    >>> import tensormodes as tm
    >>> tm.movedim(tm.zeros(2, 3, 4), 0, -1).shape
    tensormodes.Size([3, 4, 2])
    """
    return _movedim(input, source, destination)


moveaxis = alias("moveaxis", of="movedim", method=True,
                 samples=(Sample((M234, 0, 2)), Sample((M234, (0, 1), (2, 0)))),
                 doc="""Alias of ``movedim`` (NumPy's name).

    >>> import tensormodes as tm
    >>> tm.moveaxis(tm.zeros(2, 3, 4), (0, 1), (2, 0)).shape
    tensormodes.Size([3, 4, 2])
    """)


# -- broadcasting views ------------------------------------------------------------------

def expand_array(array: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """``array`` broadcast to ``sizes`` (-1 keeps a dimension) as a writable zero-stride view."""
    meta = type(array) is MetaArray
    strides_of = array.elem_strides if meta else array.strides
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
        existing, stride = array.shape[i - lead], strides_of[i - lead]
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
    if meta:
        return view_of(array, tuple(shape), tuple(strides))
    if tuple(shape) == array.shape:
        return array.view()
    return _np_as_strided(array, tuple(shape), tuple(strides), writeable=array.flags.writeable)


@op(grad=_same_grad, method=True, function=False, view=True, meta=metadata,
    errors=(Sample((M23, 3)), Sample((M23, 3, 3)), Sample((TensorSpec((3, 1)), -1, -2)), Sample((M23, -1, 2, 3))),
    samples=(Sample((TensorSpec((3, 1)), 3, 4)), Sample((TensorSpec((3, 1)), (2, -1, 4))), Sample((SCALAR, 2)),
             Sample((TensorSpec((1,), "int64"), [2, 3])), Sample((M23, -1, -1))),
    schema={"implicit": "*bool=False"}, tags=("core",))
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


@op(grad=_expand_as_grad, method=True, function=False, view=True, meta=metadata,
    errors=(Sample((M23, TensorSpec((3, 2)))),),
    samples=(Sample((TensorSpec((3, 1)), TensorSpec((2, 3, 4)))), Sample((SCALAR, M23))))
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.expand(other.size())``.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2]).expand_as(tm.zeros(3, 2)).shape
    tensormodes.Size([3, 2])
    """
    return expand_array(input, other.shape)


@op(grad=_same_grad, method=True, view=True, meta=metadata,
    errors=(Sample((M23, (2, 4))), Sample((M23, 3))),
    samples=(Sample((TensorSpec((3, 1)), (3, 4))), Sample((TensorSpec((3, 1)), (2, -1, 4))), Sample((SCALAR, (2,))),
             Sample((TensorSpec((3,), "bool"), [2, 3]))),
    aten="expand.default",
    schema={"implicit": "*bool=False"}, tags=("core",))
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input`` broadcast to ``size`` (a view, like ``expand``).

    >>> import tensormodes as tm
    >>> tm.broadcast_to(tm.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    return expand_array(input, int_tuple(size, "broadcast_to", "size", allow_int=False))


def _broadcast_tensors_grad(grad):
    return list(_as_tuple(grad))


@op(grad=_broadcast_tensors_grad, meta=metadata,
    errors=(Sample((M23, TensorSpec((2,)))),),
    samples=(Sample((M23, TensorSpec((3,)))), Sample((TensorSpec((3, 1)), TensorSpec((1, 4), "int64"), SCALAR)),
             Sample((SCALAR,))))
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors broadcast to a common shape (each shares memory with its input).

    >>> import tensormodes as tm
    >>> a, b = tm.broadcast_tensors(tm.tensor([[1], [2]]), tm.tensor([10, 20, 30]))
    >>> a.shape, b.tolist()
    (tensormodes.Size([2, 3]), [[10, 20, 30], [10, 20, 30]])
    """
    shape = check_same_shape_or_broadcast(*(t.shape for t in tensors)) if tensors else ()
    return tuple(expand_array(t, shape) for t in tensors)


def diagonal_view(input: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """The writable view of a diagonal (``np.diagonal`` returns a read-only one)."""
    if type(input) is MetaArray:
        return _meta_diagonal(input, offset, d1, d2)
    first = input[along(d2, slice(offset, None))] if offset >= 0 else input[along(d1, slice(-offset, None))]
    length = max(0, min(first.shape[d1], first.shape[d2]))
    keep = [i for i in range(input.ndim) if i not in (d1, d2)]
    shape = tuple(first.shape[i] for i in keep) + (length,)
    strides = tuple(first.strides[i] for i in keep) + (first.strides[d1] + first.strides[d2],)
    return _np_as_strided(first, shape, strides, writeable=input.flags.writeable)


def _meta_diagonal(input: MetaArray, offset: int, d1: int, d2: int) -> MetaArray:
    shape, strides = input.shape, input.elem_strides
    if offset >= 0:
        length = max(0, min(shape[d1], shape[d2] - offset))
        start = offset * strides[d2] if length else 0
    else:
        length = max(0, min(shape[d1] + offset, shape[d2]))
        start = -offset * strides[d1] if length else 0
    keep = [i for i in range(input.ndim) if i not in (d1, d2)]
    return view_of(input, tuple(shape[i] for i in keep) + (length,),
                   tuple(strides[i] for i in keep) + (strides[d1] + strides[d2],), start)


def _diagonal_grad(grad, input_shape, offset, dim1, dim2):
    # One backward op, PyTorch's (zeros with the gradient on the diagonal)
    return ops.ops.aten.diagonal_backward.default(grad, list(input_shape), offset, dim1, dim2)


@op(grad=_diagonal_grad, method=True, view=True, meta=metadata,
    errors=(Sample((M23, 0, 1, 1)), Sample((TensorSpec((3,)),)), Sample((M23, 0, 0, 2))),
    samples=(Sample((TensorSpec((3, 4)),)), Sample((TensorSpec((3, 4)), 1)), Sample((TensorSpec((3, 4)), -2)),
             Sample((M234,), {"offset": 1, "dim1": -1, "dim2": 0}), Sample((TensorSpec((3, 3), "int64"), 5))),
    tags=("core",))
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


def _unfold_grad(grad, input_shape, dimension, size, step):
    # One backward op, PyTorch's (each window's gradient added back where it was taken)
    return ops.ops.aten.unfold_backward.default(grad, list(input_shape), dimension, size, step)


@op(grad=_unfold_grad, method=True, function=False, view=True, meta=metadata,
    errors=(Sample((M23, 1, 4, 1)), Sample((M23, 1, 2, 0)), Sample((M23, 1, -1, 1)), Sample((M23, 2, 1, 1)),
            Sample((M23, 1, 2.0, 1)), Sample((SCALAR, 0, 2, 1))),
    samples=(Sample((M23, 1, 2, 1)), Sample((TensorSpec((5, 2)), 0, 2, 2)), Sample((SCALAR, 0, 1, 1)),
             Sample((SCALAR, 0, 0, 2)), Sample((TensorSpec((5,)), 0, 0, 3)), Sample((I23, -1, 3, 1))))
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of all slices of length ``size`` along ``dimension``, taken every ``step``
    elements; the slices become a new last dimension.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2, 3, 4]).unfold(0, 2, 1).tolist()
    [[1, 2], [2, 3], [3, 4]]
    """
    for position, (name, value) in enumerate((("dimension", dimension), ("size", size), ("step", step)), 1):
        if not is_int(value):
            raise TypeError(f"unfold(): argument '{name}' (position {position}) must be int, not "
                            f"{type(value).__name__}")
    d = wrap_dim(dimension, input.ndim)
    length = input.shape[d] if input.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    meta = type(input) is MetaArray
    if input.ndim == 0:  # the one element as a window of length ``size`` (0 or 1)
        if meta:
            return view_of(input, (size,), (1,))
        return _np_as_strided(input, (size,), (input.itemsize,), writeable=input.flags.writeable)
    shape = list(input.shape)
    strides = list(input.elem_strides if meta else input.strides)
    last = strides[d]
    shape[d] = (length - size) // step + 1
    strides[d] *= step
    if meta:
        return view_of(input, (*shape, size), (*strides, last))
    return _np_as_strided(input, (*shape, size), (*strides, input.strides[d]), writeable=input.flags.writeable)


def _ravel_grad(grad, input_shape):
    return grad.reshape(input_shape)


@op(grad=_ravel_grad, method=True, view=True, meta=metadata,
    samples=(Sample((M23,)), Sample((SCALAR,)), Sample((TensorSpec((2, 0)),))))
def ravel(input: Tensor) -> Tensor:
    """The elements in one dimension, in row-major order (a view when the layout allows).

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2], [3, 4]]).t().ravel()
    tensor([1, 3, 2, 4])
    """
    return _reshape(input, (-1,))


# -- as_strided ------------------------------------------------------------------------------------

def _storage_root(array: np.ndarray) -> np.ndarray:
    """The array whose memory ``array`` views: the end of its ``base`` chain, also through the
    stand-ins NumPy's ``as_strided`` puts there."""
    owner = array
    while True:
        base = owner.base
        if isinstance(base, np.ndarray):
            owner = base
        elif base is not None and isinstance(getattr(base, "base", None), np.ndarray):
            owner = base.base
        else:
            return owner


def _checked_offset(storage_offset, default: int) -> int:
    if storage_offset is None:
        return default
    if not is_int(storage_offset):
        raise TypeError(f"as_strided(): argument 'storage_offset' must be int, not {type(storage_offset).__name__}")
    return int(storage_offset)


def _as_strided_meta(input, size, stride, storage_offset=None):
    offset = _checked_offset(storage_offset, input.offset)
    shape, strides = strided_geometry(size, stride, "as_strided", offset)
    root = input if input.base is None else input.base
    storage = (root.offset + storage_span(root.shape, root.elem_strides)) * root.itemsize
    check_storage_bounds(shape, strides, offset, input.itemsize, storage)
    return view_of(input, shape, strides, offset - input.offset)


def _positions(shape, strides, offset: int, device):
    """The storage position of each element of a layout, as an int64 tensor of ``shape``."""
    positions = ops.full((), offset, dtype=dt.int64, device=device)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        steps = ops.arange(n, device=device) * s
        positions = positions.unsqueeze(-1) + steps.view((1,) * d + (n,))
    return positions


def _as_strided_grad(grad, input_geometry, size, stride, storage_offset):
    # PyTorch's AsStridedBackward0: add the gradient into a zero storage at the positions the
    # result reads, and read the input's elements back out of it (an element the input itself
    # holds at several positions gets each of their shares).
    in_shape, in_strides, in_offset = input_geometry
    offset = in_offset if storage_offset is None else storage_offset
    shape, strides = tuple(size), tuple(stride)
    length = max(offset + storage_span(shape, strides), in_offset + storage_span(in_shape, in_strides))
    read = _positions(shape, strides, offset, grad.device).reshape(-1)
    storage = grad.new_zeros(length).index_add(0, read, grad.reshape(-1))
    held = _positions(in_shape, in_strides, in_offset, grad.device)
    if overlaps(in_shape, in_strides):
        counts = grad.new_zeros(length).index_add(0, held.reshape(-1), grad.new_ones(held.numel()))
        storage = storage / counts.clamp(min=1)
    return storage.take(held)


@op(grad=_as_strided_grad, method=True, inplace=True, inplace_function=True, view=True, meta=rule(_as_strided_meta),
    errors=(Sample((M23, (2, 4), (1, 2))), Sample((M23, (2, 2), (-1, 2))), Sample((M23, (2, 2), (1,))),
            Sample((M23, (2, 2), (1, 1), -1)), Sample((M23, (2, -2), (1, 1))), Sample((M23, (), (), 6)),
            Sample((M23, [2.5], [1])), Sample((M23, 2, 1))),
    samples=(Sample((M23, (2, 2), (1, 2))), Sample((M23, (3, 2), (1, 1), 1)), Sample((M23, (2, 3), (0, 1))),
             Sample((TensorSpec((4, 3), "float64"), [2, 2, 2], [3, 1, 3]), {"storage_offset": 2}),
             Sample((I23, (3,), (2,))), Sample((M23, (), (), 5)), Sample((M23, (0, 2), (1, 1), 10)),
             Sample((TensorSpec((2, 2), "complex64"), (2,), (3,)))),
    schema={"stride": "SymInt[]", "storage_offset": "SymInt?"}, tags=("core",))
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes, strides (in elements, non-negative) and
    storage offset (by default ``input``'s own): elements may repeat (a stride of 0, overlapping
    windows), and the layout may reach storage outside ``input`` but not past the storage's end.

    >>> import tensormodes as tm
    >>> tm.as_strided(tm.arange(6), (2, 3), (1, 2))
    tensor([[0, 2, 4],
            [1, 3, 5]])
    >>> tm.arange(6)[4:].as_strided((2,), (1,), 1)
    tensor([1, 2])
    """
    root = _storage_root(input)
    low, high = np.lib.array_utils.byte_bounds(root)
    start = input.__array_interface__["data"][0]
    offset = _checked_offset(storage_offset, (start - low) // input.itemsize)
    shape, strides = strided_geometry(size, stride, "as_strided", offset)
    check_storage_bounds(shape, strides, offset, input.itemsize, high - low)
    item = input.itemsize
    byte_strides = tuple(s * item for s in strides)
    if root.flags.c_contiguous and 0 not in shape:
        # a view of the root itself (``base`` is the root), so it counts as a view of ``input``
        # even where it does not overlap it
        return np.ndarray(shape, input.dtype, buffer=root, offset=offset * item, strides=byte_strides)
    # Two rows: the input's first element, and the one ``offset`` points at (possibly before it).
    both = _np_as_strided(input, (2, *shape), (low + offset * item - start, *byte_strides),
                          writeable=input.flags.writeable)
    return both[1]
