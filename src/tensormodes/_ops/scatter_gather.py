"""Gather / scatter ops: reading and writing along one dimension at given positions
(``index_select``, ``gather``, ``scatter``, ``scatter_add``, ``index_add``, ``index_fill``,
``index_copy``), ``masked_fill`` and ``masked_scatter``.

They share the index checks and the scalar conversions of ``indexing.py``, which holds
``t[index]``, ``t[index] = value`` and ``index_put`` (the other indexing ops are in
``indexing_selection.py``).
"""

from __future__ import annotations

import functools
import warnings
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._samples import I23, M23, M234, SCALAR
from .arithmetic import _add_scaled
from .common import (
    check_same_shape_or_broadcast,
    cpp_type_name,
    dispatch_listens,
    ops,
    overload_node,
    scalar_type_name,
    wrap_dim,
    writes_into_input,
)
from .indexing import _as_nd, _fill_value, _legacy_name, _out_of_bounds, scalar_as
from .meta_rules import metadata
from .registry import Sample, Tensor, TensorSpec, op
from .shape import reshaped

# Float samples of ops that write at indices (``index_copy``, ``scatter``) use indices
# without repeats: with repeats the result depends on the write order and gradients are
# not defined. ``scatter`` with ``reduce`` has no gradient (nor in PyTorch): its samples
# are integer.


def _check_index_dtype(index: np.ndarray, message: str) -> None:
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(message)


def _index_select_grad(grad, input_shape, dim, index):
    if not input_shape:
        return grad, None
    flat = index if index.dim() == 1 else index.reshape(-1)  # (no reshape of a 1-D index: PyTorch makes none)
    if dispatch_listens(grad):  # ``grad.options()`` as PyTorch's formula passes them (dtype, layout, device)
        zeros = grad.new_zeros(tuple(input_shape), dtype=grad.dtype, device=grad.device)
    else:
        zeros = grad.new_zeros(tuple(input_shape))
    return zeros.index_add(dim, flat, grad), None


@op(grad=_index_select_grad, method=True, out=True, meta=metadata,
    errors=(Sample((M23, 0, TensorSpec((2,), "float32"))), Sample((M23, 0, TensorSpec((2, 1), "int64", 0, 1))),
            Sample((M23, 2, TensorSpec((2,), "int64", 0, 1))), Sample((SCALAR, 0, TensorSpec((2,), "int64", 0, 0)))),
    samples=(Sample((M23, 1, TensorSpec((4,), "int64", 0, 2))), Sample((M23, -2, TensorSpec((2,), "int32", 0, 1))),
             Sample((SCALAR, 0, TensorSpec((1,), "int64", 0, 0))), Sample((M23, 0, TensorSpec((), "int64", 0, 1))),
             Sample((TensorSpec((3, 2), "bool"), 0, TensorSpec((0,), "int64"))),
             Sample((M234,), {"dim": 2, "index": TensorSpec((3,), "int64", 0, 3)})), tags=("core",))
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries of ``input`` at positions ``index`` (a 1-D integer tensor) along ``dim``.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    >>> tm.index_select(x, 1, tm.tensor([2, 0])).tolist()
    [[3, 1], [6, 4]]
    """
    d = wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _check_index_dtype(index, "index_select(): Expected dtype int32 or int64 for index")
    flat = reshaped(index, (index.size,))
    if input.ndim == 0:
        if flat.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {flat.size} value(s)")
        if type(input) is MetaArray:
            return MetaArray((), input.dtype)
        if flat[0] != 0:
            raise IndexError("index out of range in self")
        return input.copy()
    if type(input) is MetaArray:
        return MetaArray((*input.shape[:d], flat.size, *input.shape[d + 1:]), input.dtype)
    size = input.shape[d]
    bad = _out_of_bounds(flat, size, 0)
    if bad is not None:
        _index_select_out_of_range(input, d, bad)
    return np.take(input, flat, axis=d)


def _index_select_out_of_range(input: np.ndarray, d: int, bad: int) -> None:
    """PyTorch's error for index ``bad`` along ``d``, which depends on the path its CPU kernel
    takes: the loop over slices of an empty tensor, and the one for dim 1, word it their way."""
    if input.ndim > 1 and input.size == 0 and input.shape[d] == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if input.ndim > 1 and (input.size == 0 or d == 1):
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={input.shape[d]}")
    raise IndexError("index out of range in self")


def _gather_grad(grad, input_shape, dim, index):
    return grad.new_zeros(tuple(input_shape)).scatter_add(dim, index, grad), None


@op(grad=_gather_grad, method=True, out=True, meta=metadata,
    errors=(Sample((M23, 0, TensorSpec((2,), "int64", 0, 1))), Sample((M23, 0, TensorSpec((1, 4), "int64", 0, 1))),
            Sample((M23, 2, TensorSpec((2, 3), "int64", 0, 1))), Sample((M23, 0, TensorSpec((2, 3), "int16", 0, 1)))),
    samples=(Sample((M23, 1, TensorSpec((2, 4), "int64", 0, 2))), Sample((M23, 0, TensorSpec((1, 2), "int32", 0, 1))),
             Sample((M23, -1, TensorSpec((2, 3), "int64", 0, 2)), {"sparse_grad": False}),
             Sample((SCALAR, 0, TensorSpec((), "int64", 0, 0))), Sample((SCALAR, 0, TensorSpec((3,), "int64", 0, 0))),
             Sample((TensorSpec((3, 3), "int64"), 0, TensorSpec((0, 2), "int64")))), tags=("core",))
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Values along ``dim`` at the positions in ``index``:
    ``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (the result has ``index``'s shape).

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 2], [3, 4]])
    >>> tm.gather(x, 1, tm.tensor([[0, 0], [1, 0]])).tolist()
    [[1, 1], [4, 3]]
    """
    d = wrap_dim(dim, input.ndim)
    source, positions = _as_nd(input), _as_nd(index)
    if not positions.size:  # an empty index of any dtype gathers nothing
        return MetaArray(index.shape, input.dtype) if type(input) is MetaArray else np.empty(index.shape, input.dtype)
    _check_index_dtype(index, "gather(): Expected dtype int32/int64 for index")
    if positions.ndim != source.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for i, (got, limit) in enumerate(zip(positions.shape, source.shape, strict=True)):
        if i != d and got > limit:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {d}")
    if type(input) is MetaArray:
        return MetaArray(index.shape, input.dtype)
    size = source.shape[d]
    bad = _out_of_bounds(positions, size, 0)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    cropped = source[tuple(slice(None) if i == d else slice(0, n) for i, n in enumerate(positions.shape))]
    return np.take_along_axis(cropped, positions, axis=d).reshape(index.shape)


_SCATTER_REDUCTIONS = {"add": np.add, "multiply": np.multiply}


@functools.lru_cache(maxsize=256)
def _counting(n: int, axis: int, ndim: int) -> np.ndarray:
    """``arange(n)`` laid along ``axis`` of ``ndim`` dimensions: the coordinates scatter pairs
    with its index. Cached (read-only): gradient formulas scatter into the same shapes every step."""
    counting = np.arange(n).reshape((1,) * axis + (n,) + (1,) * (ndim - axis - 1))
    counting.flags.writeable = False
    return counting


def _scatter(array: np.ndarray, d: int, index: np.ndarray, source, accumulate=None) -> np.ndarray:
    """A copy of ``array`` with ``source`` written (or accumulated) at ``index`` along dimension
    ``d`` (wrapped), after the checks of ``_check_scatter``.

    ``source`` is an array of ``array``'s dtype (a 0-dim one stands for one element), or a
    number converted for ``array``'s dtype.
    """
    if type(array) is MetaArray:
        return MetaArray(array.shape, array.dtype)
    result = array.copy()
    target, positions = _as_nd(result), _as_nd(index)
    if not positions.size:
        return result
    from_tensor = isinstance(source, np.ndarray) and source.ndim > 0
    values = _as_nd(source) if from_tensor else source
    size = target.shape[d]
    bad = _out_of_bounds(positions, size, 0)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    ndim = target.ndim
    coordinates = tuple(positions if i == d else _counting(n, i, ndim) for i, n in enumerate(positions.shape))
    if from_tensor and values.shape != positions.shape:
        values = values[tuple(slice(0, n) for n in positions.shape)]
    if accumulate is None:
        target[coordinates] = values
    elif target.dtype in (np.float16, dt.bfloat16._np):
        # PyTorch's scatter kernels accumulate half types in float32, rounding once at the end
        wide = target.astype(np.float32)
        accumulate.at(wide, coordinates, values.astype(np.float32) if from_tensor else values)
        target[...] = wide
    else:
        accumulate.at(target, coordinates, values)
    return result


def _nonempty_size(shape: tuple[int, ...], i: int) -> int:
    """PyTorch's ``ensure_nonempty_size``: a 0-dim tensor has size 1; past the last dimension,
    the IndexError of ``Tensor.size(i)``."""
    return shape[wrap_dim(i, len(shape))] if shape else 1


def _check_scatter(name: str, array, d: int, index, source) -> None:
    """PyTorch's checks of a scatter into ``array`` along ``d`` (wrapped), in its order: the index
    dtype, ``source``'s dtype (a tensor source), then the shapes (none for an empty ``index``)."""
    if index.size:
        _check_index_dtype(index, f"{name}(): Expected dtype int32/int64 for index")
    from_tensor = isinstance(source, np.ndarray) or type(source) is MetaArray
    if from_tensor and source.dtype != array.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if not index.size:
        return
    target, positions = array.shape, index.shape
    ndim = max(len(target), 1)
    if ndim != max(len(positions), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = any(i != d and _nonempty_size(positions, i) > _nonempty_size(target, i) for i in range(ndim))
    if from_tensor:
        if not wrong:
            for i in range(ndim):
                if _nonempty_size(positions, i) > _nonempty_size(source.shape, i):
                    wrong = True
                    break
        if max(source.ndim, 1) != max(len(positions), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        message = (f"Expected index {list(positions)} to be no larger than self {list(target)} apart "
                   f"from dimension {d}")
        if from_tensor:
            message += f" and to be no larger size than src {list(source.shape)}"
        raise RuntimeError(message)


def _gathered(grad, dim, index, src_shape):
    """Gradient of the ``src`` (of shape ``src_shape``) of a scatter: ``grad`` at the positions
    each entry went to; entries of a ``src`` larger than ``index`` were not used."""
    src_shape = tuple(src_shape)
    picked = grad.gather(dim, index)
    if picked.dim() != len(src_shape) or tuple(picked.shape) == src_shape:
        return picked  # a 0-dim src is one value: summed back by the engine
    out = picked.new_zeros(src_shape)
    out[tuple(slice(0, n) for n in picked.shape)] = picked
    return out


def _scatter_grad(grad, dim, index, src_shape, reduce, needs_input_grad):
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")  # nor in PyTorch
    # (by keyword: scatter.value, as PyTorch's formula)
    grad_input = grad.scatter(dim, index, value=0) if needs_input_grad[0] else None
    # ``src_shape`` is None when ``src`` was a number (or not given: ``value=``).
    wanted = src_shape is not None and needs_input_grad[2]
    return grad_input, None, _gathered(grad, dim, index, src_shape) if wanted else None


@op(grad=_scatter_grad, method=True, inplace=True, out=True, meta=metadata,
    errors=(Sample((M23, 0, TensorSpec((1, 3), "int64", 0, 1))),
            Sample((M23, 0, TensorSpec((3,), "int64", 0, 1), 1.0)),
            Sample((M23, 0, TensorSpec((1, 3), "int64", 0, 1), TensorSpec((1, 2)))),
            Sample((M23, 0, TensorSpec((1, 3), "int64", 0, 1), TensorSpec((1, 3), "float64"))),
            Sample((M23, 0, TensorSpec((1, 3), "int64", 0, 1), 1.0), {"reduce": "max"})),
    samples=(Sample((M23, 0, TensorSpec((1, 3), "int64", 0, 1), TensorSpec((1, 3)))),
             Sample((M23, 1, TensorSpec((2, 2), "int64", 0, 2), 7.5)),
             Sample((M23, -1, TensorSpec((2, 2), "int32", 0, 2)), {"value": 2}),
             Sample((I23, 0, TensorSpec((2, 3), "int64", 0, 1), 2), {"reduce": "add"}),
             Sample((I23, 0, TensorSpec((2, 3), "int64", 0, 1), -3), {"reduce": "multiply"}),
             Sample((TensorSpec((4,), "int64"), 0, TensorSpec((2,), "int64", 0, 3)),
                    {"src": TensorSpec((3,), "int64")}),
             Sample((SCALAR, 0, TensorSpec((), "int64", 0, 0), 3)),
             Sample((TensorSpec((2, 3), "bool"), 1, TensorSpec((2, 1), "int64", 0, 2), True))),
    aten={
        "scatter.src": ("value", "reduce", "src: Tensor="),
        "scatter.value": ("value", "reduce", "src: ~Scalar value="),
        "scatter.value@keyword": ("src", "reduce", "value: ~Scalar="),
        "scatter.value_reduce": ("value", "src: ~Scalar value=", "reduce: str=", "-core"),
    },
    tags=("core",))
def scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | Number | None = None, *,
            value: Number | None = None, reduce: str | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or the number ``value``) written at the
    positions ``index`` along ``dim``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``.
    ``reduce="add"`` or ``"multiply"`` combines with the existing values instead.

    >>> import tensormodes as tm
    >>> x = tm.zeros(2, 3, dtype=tm.int64)
    >>> tm.scatter(x, 0, tm.tensor([[1, 0, 1]]), tm.tensor([[7, 8, 9]])).tolist()
    [[0, 8, 0], [7, 0, 9]]
    >>> x.scatter(1, tm.tensor([[2], [0]]), value=5).tolist()
    [[0, 0, 5], [5, 0, 0]]
    """
    if (src is None) == (value is None):
        raise TypeError("scatter() expects exactly one of 'src' (a tensor or a number) and 'value'")
    source = src if src is not None else value
    d = wrap_dim(dim, input.ndim)
    _check_scatter("scatter", input, d, index, source)
    if reduce is not None and reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(source, np.ndarray) or type(source) is MetaArray:
        if reduce is not None:
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed "
                          "in a future PyTorch release. Use torch.scatter_reduce instead for more reduction "
                          "options.", UserWarning, stacklevel=3)
    elif index.size:  # PyTorch's kernel converts the number, when it writes any
        source = scalar_as(source, input.dtype)
    return _scatter(input, d, index, source, _SCATTER_REDUCTIONS.get(reduce))


def _scatter_add_grad(grad, dim, index, src_shape, needs_input_grad):
    return grad, None, _gathered(grad, dim, index, src_shape) if needs_input_grad[2] else None


@op(grad=_scatter_add_grad, method=True, inplace=True, out=True, meta=metadata,
    errors=(Sample((M23, 0, TensorSpec((2, 4), "int64", 0, 1), TensorSpec((2, 4)))),
            Sample((M23, 0, TensorSpec((2, 3), "int64", 0, 1), TensorSpec((2, 3), "float64")))),
    samples=(Sample((M23, 0, TensorSpec((2, 3), "int64", 0, 1), M23)),
             Sample((TensorSpec((3, 2), "int64"), -1, TensorSpec((3, 4), "int64", 0, 1), TensorSpec((3, 5), "int64"))),
             Sample((TensorSpec((5,), "float64"), 0, TensorSpec((4,), "int32", 0, 4), TensorSpec((4,), "float64")))),
    tags=("core",))
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with the values of ``src`` added at the positions ``index`` along
    ``dim`` (repeated positions accumulate).

    >>> import tensormodes as tm
    >>> tm.scatter_add(tm.zeros(3, dtype=tm.int64), 0, tm.tensor([0, 0, 2]), tm.tensor([1, 2, 3])).tolist()
    [3, 0, 3]
    """
    d = wrap_dim(dim, input.ndim)
    _check_scatter("scatter", input, d, index, src)
    return _scatter(input, d, index, src, np.add)


def _index_add_grad(grad, dim, index, source_shape, alpha, needs_input_grad):
    if not needs_input_grad[2]:
        return grad, None, None
    grad_source = _expanded_as(grad.index_select(dim, index), source_shape)
    if alpha != 1:
        grad_source = grad_source * (alpha.conjugate() if isinstance(alpha, complex) else alpha)
    return grad, None, grad_source


@op(grad=_index_add_grad, method=True, inplace=True, out=True, meta=metadata,
    errors=(Sample((M23, 0, TensorSpec((3,), "int64", 0, 1), TensorSpec((2, 3)))),
            Sample((M23, 0, TensorSpec((2,), "int64", 0, 1), TensorSpec((2, 2)))),
            Sample((M23, 0, TensorSpec((2,), "float32"), M23)), Sample((M23, 0, TensorSpec((2,), "int64", 0, 1), I23))),
    samples=(Sample((M23, 0, TensorSpec((3,), "int64", 0, 1), TensorSpec((3, 3)))),
             Sample((M23, 1, TensorSpec((2,), "int32", 0, 2), TensorSpec((2, 2))), {"alpha": 2}),
             Sample((TensorSpec((4,), "int64"), -1, TensorSpec((3,), "int64", 0, 3), TensorSpec((3,), "int64"))),
             Sample((SCALAR, 0, TensorSpec((1,), "int64", 0, 0), SCALAR))))
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Number = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at positions ``index`` along ``dim``
    (``source``'s slice ``i`` goes to position ``index[i]``; repeats accumulate).

    >>> import tensormodes as tm
    >>> tm.index_add(tm.zeros(3, dtype=tm.int64), 0, tm.tensor([0, 2, 0]), tm.tensor([1, 2, 3])).tolist()
    [4, 0, 2]
    """
    d = wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_legacy_name(index.dtype)} and size: {list(index.shape)}")
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {_legacy_name(index.dtype)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_add_(): self ({_legacy_name(input.dtype)}) and source "
                           f"({_legacy_name(source.dtype)}) must have the same scalar type")
    if d and d >= source.ndim:  # a source with fewer dimensions (a 0-dim one counts as one)
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{source.ndim}")
    positions = reshaped(index, (index.size,))
    if positions.size != (1 if source.ndim == 0 else source.shape[wrap_dim(d, source.ndim)]):
        if source.ndim == 0:  # PyTorch's message asks the 0-dim source for its size
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        raise RuntimeError(f"index_add_(): Number of indices ({positions.size}) should be equal to "
                           f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    # the shapes without dimension ``d``, unless one is 0-dim
    target_rest, source_rest = input.shape, source.shape
    if input.ndim and source.ndim:
        target_rest, source_rest = target_rest[:d] + target_rest[d + 1:], source_rest[:d] + source_rest[d + 1:]
    if target_rest != source_rest:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    target_shape = _as_nd(input).shape
    if type(input) is MetaArray:
        if alpha != 1:
            scalar_as(alpha, input.dtype)
        return MetaArray(input.shape, input.dtype)
    size = target_shape[d]
    if input.ndim > 1 and input.size == 0:
        return input.copy()  # PyTorch's kernel leaves before it reads an index
    bad = _out_of_bounds(positions, size, 0)
    if bad is not None:
        # PyTorch's CPU kernel words it by path: its loop over slices (1-D, inner dimensions, any
        # int32 index) or the one along the first or last dimension.
        if _slice_by_slice(input.ndim, d, index.dtype):
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    result = input.copy()
    values = _as_nd(source)
    half = result.dtype in (np.float16, dt.bfloat16._np)
    if half and alpha != 1 and input.ndim > 1:  # (a vector's kernel multiplies and adds in its dtype)
        return _half_index_add_scaled(result, d, positions, values, alpha)
    if alpha != 1:
        values = values * scalar_as(alpha, input.dtype)
    where = (slice(None),) * d + (positions,)
    if half and not _slice_by_slice(input.ndim, d, index.dtype):
        # PyTorch's kernel along the first or last dimension accumulates half types in float32
        wide = result.astype(np.float32)
        np.add.at(_as_nd(wide), where, values.astype(np.float32))
        result[...] = wide
    else:
        np.add.at(_as_nd(result), where, values)
    return result


def _half_index_add_scaled(result: np.ndarray, d: int, positions: np.ndarray, values: np.ndarray, alpha):
    """A half-type index_add with ``alpha``: PyTorch adds slice by slice, each an ``add_`` with
    ``alpha`` (computed in float32, rounded once per slice as its add kernel does)."""
    target = _as_nd(result)
    for i, position in enumerate(positions.tolist()):
        where = (slice(None),) * d + (position,)
        target[where] = _add_scaled(target[where], values[(slice(None),) * d + (i,)], alpha, 1)
    return result


def _slice_by_slice(ndim: int, d: int, index_dtype) -> bool:
    """Whether PyTorch's CPU index_add loops over slices (each added in the tensor's dtype): for
    vectors, inner dimensions and any int32 index; else its kernel along the first or last dimension."""
    return ndim <= 1 or 0 < d < ndim - 1 or index_dtype == np.int32


def _index_positions(array: np.ndarray, dim: int, index: np.ndarray) -> tuple[int, np.ndarray]:
    return wrap_dim(dim, array.ndim), reshaped(index, (index.size,))


def _index_fill_grad(grad, dim, index, value_shape, needs_input_grad):
    grad_input = grad.index_fill(dim, index, 0) if needs_input_grad[0] else None  # PyTorch's formula
    grad_value = None
    # Only when wanted (an integer value tensor has none); value_shape None: a number. PyTorch's
    # formula: the filled slices, each once; as it selects them with index_select, a negative
    # position (which the forward took) raises there.
    if value_shape is not None and needs_input_grad[2]:
        grad_value = grad.index_select(dim, index.reshape(-1).unique()).sum()
    return grad_input, None, grad_value


@op(grad=_index_fill_grad, node=overload_node("index_fill", "index_fill#1", 3), differentiable=writes_into_input,
    method=True, inplace=True, meta=metadata,
    errors=(Sample((M23, 1, TensorSpec((2,), "int32", 0, 1), 1.0)),
            Sample((M23, 1, TensorSpec((2, 1), "int64", 0, 1), 1.0)),
            Sample((M23, 2, TensorSpec((2,), "int64", 0, 1), 1.0)),
            Sample((M23, 1, TensorSpec((2,), "int64", 0, 1), M23))),
    samples=(Sample((M23, 1, TensorSpec((2,), "int64", -3, 2), -1.5)),
             Sample((TensorSpec((3, 2), "int32"), 0, TensorSpec((), "int64", 0, 2), TensorSpec((), "int64"))),
             Sample((M23, 0, TensorSpec((2,), "int64", 0, 1), TensorSpec((), "float32"))),
             Sample((SCALAR, 0, TensorSpec((), "int64", 0, 0), 4)), Sample((M234, -1, TensorSpec((0,), "int64"), 2))),
    aten={"index_fill.int_Scalar": ("value: Scalar",), "index_fill.int_Tensor": ()})
def index_fill(input: Tensor, dim: int, index: Tensor, value: Tensor | Number) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-dim tensor) written at positions
    ``index`` along ``dim``.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3, dtype=tm.int64).index_fill(1, tm.tensor([0, 2]), 7).tolist()
    [[7, 0, 7], [7, 0, 7]]
    """
    tensor_value = isinstance(value, np.ndarray) or type(value) is MetaArray
    if tensor_value and value.ndim != 0:
        _fill_value(value, input.dtype, "index_fill_")  # PyTorch's error for a value tensor with dimensions
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    complex_value = value.dtype.kind == "c" if tensor_value else type(value) is complex
    if complex_value and input.dtype.kind != "c":
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    d, positions = _index_positions(input, dim, index)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    fill = _fill_value(value, input.dtype, "index_fill_")
    if type(input) is MetaArray:
        return MetaArray(input.shape, input.dtype)
    result = input.copy()
    target = _as_nd(result)
    size = target.shape[d]
    if not result.size and size:  # nothing to fill: PyTorch's kernel reads no index
        return result
    bad = _out_of_bounds(positions, size, -size)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    target[(slice(None),) * d + (positions,)] = fill
    return result


def _index_copy_grad(grad, dim, index, source_shape, needs_input_grad):
    return (grad.index_fill(dim, index, 0) if needs_input_grad[0] else None, None,
            _expanded_as(grad.index_select(dim, index), source_shape) if needs_input_grad[2] else None)


def _expanded_as(selected, source_shape):
    """PyTorch's ``expand_as(source)`` of a gradient selected for ``source``, when the dispatch level
    listens (it has the same shape but for a 0-D source, whose one-element selection the engine fits
    back)."""
    if selected.dim() == len(source_shape) and dispatch_listens(selected):
        return selected.expand(source_shape)
    return selected


@op(grad=_index_copy_grad, method=True, inplace=True, meta=metadata,
    errors=(Sample((M23, 1, TensorSpec((2,), "int64", 0, 1), TensorSpec((2, 3)))),
            Sample((M23, 1, TensorSpec((2,), "int64", 0, 1), TensorSpec((2, 2), "float64"))),
            Sample((M23, 1, TensorSpec((3,), "int64", 0, 1), TensorSpec((2, 2)))),
            Sample((M23, 1, TensorSpec((2, 1), "int64", 0, 1), TensorSpec((2, 2))))),
    samples=(Sample((M23, 1, TensorSpec((1,), "int64", 0, 2), TensorSpec((2, 1)))),
             Sample((TensorSpec((4, 2), "int64"), 0, TensorSpec((), "int64", 0, 3), TensorSpec((1, 2), "int64"))),
             Sample((SCALAR, 0, TensorSpec((), "int64", 0, 0), SCALAR))))
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` written at positions ``index`` along
    ``dim`` (slice ``i`` goes to position ``index[i]``).

    >>> import tensormodes as tm
    >>> tm.zeros(3, dtype=tm.int64).index_copy(0, tm.tensor([2, 0]), tm.tensor([5, 6])).tolist()
    [6, 0, 5]
    """
    d, positions = _index_positions(input, dim, index)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if source.ndim == 0 and positions.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {positions.size})")
    if input.ndim and source.ndim and input.ndim != source.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    if index.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_legacy_name(index.dtype)}")
    if source.dtype != input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_legacy_name(input.dtype)} and (source) {_legacy_name(source.dtype)}")
    # PyTorch compares the shapes without dimension ``d`` (which a 0-dim shape does not have)
    target_slice = input.shape[:d] + input.shape[d + 1:]
    source_slice = source.shape[:d] + source.shape[d + 1:]
    if target_slice != source_slice:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                           f"slice shape: {' '.join(map(str, target_slice))} at dimension {d} and source slice "
                           f"shape: {' '.join(map(str, source_slice))} at dimension 0.")
    target_shape, source_shape = _as_nd(input).shape, _as_nd(source).shape
    count = source_shape[d] if d < len(source_shape) else 1
    if source.ndim and positions.size != count:
        raise IndexError(f"index_copy_(): Number of indices ({positions.size}) should be equal to source.size(dim) "
                         f"({count})")
    if type(input) is MetaArray:
        return MetaArray(input.shape, input.dtype)
    size = target_shape[d]
    bad = _out_of_bounds(positions, size, 0)
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {size}")
    result = input.copy()
    _as_nd(result)[(slice(None),) * d + (positions,)] = _as_nd(source)
    return result


# -- masks -------------------------------------------------------------------------------

def _masked_fill_grad(grad, mask, value_shape, needs_input_grad):
    # value_shape None: a number
    grad_value = grad.where(mask, 0).sum() if value_shape is not None and needs_input_grad[2] else None
    return grad.masked_fill(mask, 0) if needs_input_grad[0] else None, None, grad_value


@op(grad=_masked_fill_grad, node=overload_node("masked_fill", "masked_fill#1", 2), differentiable=writes_into_input,
    method=True, inplace=True, meta=metadata,
    errors=(Sample((M23, TensorSpec((2, 3), "int64"), 1.0)), Sample((M23, TensorSpec((3, 2), "bool"), 1.0)),
            Sample((M23, TensorSpec((2, 3), "bool"), TensorSpec((3,)))),
            Sample((TensorSpec((2,), "int8"), TensorSpec((2,), "bool"), 1000))),
    samples=(Sample((M23, TensorSpec((2, 3), "bool"), 1.5)), Sample((M23, TensorSpec((3,), "bool"), -2)),
             Sample((TensorSpec((2, 3), "int64"), TensorSpec((2, 3), "bool"), 2.7)),
             Sample((M23, TensorSpec((2, 3), "bool"), TensorSpec((), "float64"))),
             Sample((TensorSpec((2, 3), "int32"), TensorSpec((2, 2, 3), "bool"), TensorSpec((), "int64"))),
             Sample((SCALAR, TensorSpec((), "bool"), 3)),
             Sample((TensorSpec((4,), "bool"), TensorSpec((4,), "bool"), False))),
    aten={"masked_fill.Scalar": ("inplace-pointwise",), "masked_fill.Tensor": ("-pointwise",)}, tags=("pointwise",))
def masked_fill(input: Tensor, mask: Tensor, value: Tensor | Number) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-dim tensor, cast to ``input``'s
    dtype) where the boolean ``mask`` (broadcast against ``input``) is True.

    >>> import tensormodes as tm
    >>> x = tm.tensor([1, 2, 3])
    >>> x.masked_fill(x > 1, 0).tolist()
    [1, 0, 0]
    """
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{cpp_type_name(dt.NP_TO_DTYPE[mask.dtype])}")
    fill = _fill_value(value, input.dtype, "masked_fill_")
    if mask.shape != input.shape:  # np.broadcast_shapes is a slow Python helper
        shape = check_same_shape_or_broadcast(mask.shape, input.shape)
    else:
        shape = input.shape
    if type(input) is MetaArray:
        return MetaArray(tuple(shape), input.dtype)
    # a copy with the value written where the mask is set: np.where's values (``fill`` is a 0-dim
    # array of the input's dtype), faster for a broadcast mask (attention's causal one: 11 -> 6.5 us)
    result = (input if shape == input.shape else np.broadcast_to(input, shape)).copy()
    np.copyto(result, fill, where=mask)
    return result


def _masked_scatter_grad(grad, mask, source_shape):
    # The source's elements went, in order, to the mask's True positions; the rest are unused.
    selected = grad.masked_select(mask)
    count = 1
    for size in source_shape:
        count *= size
    unused = selected.new_zeros(count - selected.numel())
    return grad.masked_fill(mask, 0), None, ops.cat([selected, unused]).reshape(source_shape)


@op(grad=_masked_scatter_grad, method=True, inplace=True, meta=metadata,
    errors=(Sample((M23, TensorSpec((2, 3), "int64"), M23)), Sample((M23, TensorSpec((2, 2), "bool"), M23)),
            Sample((M23, TensorSpec((2, 3), "bool"), TensorSpec((6,), "float64")))),
    samples=(Sample((M23, TensorSpec((2, 3), "bool"), M23)), Sample((M23, TensorSpec((3,), "bool"), TensorSpec((7,)))),
             Sample((TensorSpec((3,)), TensorSpec((2, 3), "bool"), TensorSpec((2, 4)))),
             Sample((TensorSpec((2, 2), "int64"), TensorSpec((2, 2), "bool"), TensorSpec((4,), "int64"))),
             Sample((SCALAR, TensorSpec((), "bool", 1, 1), TensorSpec((1,)))),
             Sample((TensorSpec((0,)), TensorSpec((0,), "bool"), TensorSpec((0,)))),
             Sample((TensorSpec((3,), "bool"), TensorSpec((3,), "bool"), TensorSpec((3,), "bool")))),
    tags=("core",))
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` (broadcast with the boolean ``mask``) whose elements where ``mask`` is
    True are the first elements of ``source``, in order.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3).masked_scatter(tm.tensor([True, False, True]), tm.arange(1.0, 7.0)).tolist()
    [[1.0, 0.0, 2.0], [3.0, 0.0, 4.0]]
    """
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_legacy_name(mask.dtype)}")
    shape = tuple(check_same_shape_or_broadcast(mask.shape, input.shape))
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{scalar_type_name(dt.NP_TO_DTYPE[input.dtype])} and "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[source.dtype])}")
    if type(input) is MetaArray:
        return MetaArray(shape, input.dtype)
    where = np.broadcast_to(mask, shape)
    count = int(np.count_nonzero(where))
    if count > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    result = np.array(np.broadcast_to(input, shape), order="C")
    result[where] = source.reshape(-1)[:count]
    return result
