"""Selecting by positions and masks (``diag``, ``take_along_dim``, ``take``, ``masked_select``,
``nonzero``, ``argwhere``) and the whole-tensor writes ``fill_``, ``fill_diagonal_``, ``zero_`` and ``copy_``. The
indexing operator itself (``t[index]``, ``t[index] = value``, ``index_put``) and the index checks
these share are in ``indexing.py``.
"""

from __future__ import annotations

import math
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .._tensor_base import TensorBase
from ._samples import M23, M234, SCALAR
from .common import check_same_shape_or_broadcast, checked_scalar, ops, wrap_dim
from .indexing import _as_nd, _legacy_name, _out_of_bounds, _value_fits
from .meta_rules import data_dependent, metadata, rule
from .registry import Sample, Tensor, TensorSpec, op
from .shape import gather_back, value_dependent

# -- diagonals ----------------------------------------------------------------------------

def _diag_grad(grad, input_shape, diagonal):
    if len(input_shape) == 1:
        return grad.diagonal(diagonal)
    count = grad.shape[0]
    rows = ops.arange(count, device=grad.device) + max(-diagonal, 0)
    columns = ops.arange(count, device=grad.device) + max(diagonal, 0)
    return grad.new_zeros(input_shape).index_put((rows, columns), grad)


@op(grad=_diag_grad, method=True, out=True, meta=metadata, errors=(Sample((M234,)), Sample((SCALAR,))), samples=(
    Sample((TensorSpec((3,)),)), Sample((TensorSpec((3,), "int64"), 1)), Sample((TensorSpec((2,), "complex64"), -2)),
    Sample((TensorSpec((3, 4)),)), Sample((TensorSpec((3, 4), "float64"), 2)), Sample((TensorSpec((4, 3)), -1)),
    Sample((TensorSpec((2, 3)), 5)), Sample((TensorSpec((0,)),))))
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D ``input`` as the ``diagonal``-th diagonal of a square matrix (0 elsewhere), or the
    ``diagonal``-th diagonal of a 2-D ``input`` (a copy).

    >>> import tensormodes as tm
    >>> tm.diag(tm.tensor([1, 2]), 1).tolist(), tm.diag(tm.tensor([[1, 2], [3, 4]])).tolist()
    ([[0, 1, 0], [0, 0, 2], [0, 0, 0]], [1, 4])
    """
    if type(input) is MetaArray and input.ndim in (1, 2):
        if input.ndim == 1:
            size = input.shape[0] + abs(diagonal)
            return MetaArray((size, size), input.dtype)
        rows, columns = input.shape
        length = min(rows, columns - diagonal) if diagonal >= 0 else min(rows + diagonal, columns)
        return MetaArray((max(length, 0),), input.dtype)
    if input.ndim == 1:
        return np.diag(input, diagonal)
    if input.ndim == 2:
        return np.diagonal(input, diagonal).copy()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


# -- selecting along a dimension ---------------------------------------------------------

def _take_along_dim_grad(grad, input_shape, indices, dim):
    if dim is None or not input_shape:
        return _taken_back(grad, input_shape, indices)
    d = wrap_dim(dim, len(input_shape))
    size = input_shape[d]
    if not size:
        return grad.new_zeros(input_shape), None  # empty, but a gradient (PyTorch's too)
    # ``input`` was broadcast against ``indices`` (to ``grad``'s shape off ``d``):
    # scatter into that shape; the engine sums back to the input's.
    shape = list(grad.shape)
    shape[d] = size
    positions = (indices % size).expand(grad.shape)
    return grad.new_zeros(shape).scatter_add(d, positions, grad), None


def _take_along_dim_decomposition(input, indices, dim=None):
    """PyTorch's composite ``take_along_dim``: without ``dim``, ``gather`` of the flat views (``view``
    twice); along ``dim``, both tensors broadcast against each other off ``dim`` (``expand`` twice),
    the indices wrapped (``remainder``), then ``gather``. Arguments the op rejects are left to it."""
    if not isinstance(input, TensorBase) or not isinstance(indices, TensorBase) or input.is_meta:
        return NotImplemented
    aten = ops.ops.aten
    if dim is None:
        if indices.dtype not in (dt.int64, dt.int32) or not (input.is_contiguous() and indices.is_contiguous()):
            return NotImplemented  # (PyTorch's view(-1) of a non-contiguous tensor raises; the op reshapes)
        return aten.gather.default(aten.view.default(input, [-1]), 0, aten.view.default(indices, [-1]))
    if input.dim() != indices.dim() or input.dim() == 0 or indices.dtype != dt.int64:
        return NotImplemented
    try:
        d = wrap_dim(dim, input.dim())
        others = check_same_shape_or_broadcast(
            (*input.shape[:d], 1, *input.shape[d + 1:]), (*indices.shape[:d], 1, *indices.shape[d + 1:]))
    except (RuntimeError, IndexError, TypeError):
        return NotImplemented
    size = input.shape[d]
    if not size:
        return NotImplemented
    indices = aten.expand.default(indices, [*others[:d], indices.shape[d], *others[d + 1:]])
    input = aten.expand.default(input, [*others[:d], size, *others[d + 1:]])
    return aten.gather.default(input, d, aten.remainder.Scalar(indices, size))


@op(grad=_take_along_dim_grad, method=True, out=True, meta=metadata, decompose=_take_along_dim_decomposition,
    errors=(Sample((M23, TensorSpec((2,), "int32", 0, 1), 0)), Sample((M23, TensorSpec((2,), "int64", 0, 1), 0)),
            Sample((M23, TensorSpec((3, 1), "int64", 0, 1), 1))),
    samples=(Sample((M23, TensorSpec((2, 1), "int64", -3, 2), 1)), Sample((M23, TensorSpec((4,), "int64", 0, 5))),
             Sample((M23, TensorSpec((1, 3), "int64", 0, 1), 0)),
             Sample((M23, TensorSpec((1, 2), "int64", 0, 2)), {"dim": -1})))
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Values at ``indices`` along ``dim`` (``gather`` with broadcasting of the other
    dimensions); without ``dim`` both tensors are read flat.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[10, 30, 20], [60, 40, 50]])
    >>> tm.take_along_dim(x, tm.tensor([[1], [0]]), dim=1).tolist()
    [[30], [60]]
    """
    if dim is None:  # PyTorch gathers from the flat tensors, with gather's index rules
        if indices.size and indices.dtype not in (np.int64, np.int32):
            raise RuntimeError("gather(): Expected dtype int32/int64 for index")
        if type(input) is MetaArray:
            return MetaArray((indices.size,), input.dtype)
        source, positions, d = input.reshape(-1), indices.reshape(-1), 0
        if not positions.size:  # an empty index of any dtype reads nothing: PyTorch's gather computes it
            positions = positions.astype(np.int64)
    else:
        if input.ndim != indices.ndim:
            raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of "
                               f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
                               "dimensions for indices")
        if indices.dtype != np.int64:
            raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                               f"{_legacy_name(indices.dtype)}")
        d = wrap_dim(dim, input.ndim)
        if input.ndim == 0:  # PyTorch asks the 0-dim indices for their size along ``d``
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        source, positions = _as_nd(input), _as_nd(indices)
        others = check_same_shape_or_broadcast(
            source.shape[:d] + (1,) + source.shape[d + 1:], positions.shape[:d] + (1,) + positions.shape[d + 1:])
        if type(input) is MetaArray:
            return MetaArray(others[:d] + positions.shape[d:d + 1] + others[d + 1:], input.dtype)
        source = np.broadcast_to(source, others[:d] + source.shape[d:d + 1] + others[d + 1:])
        positions = np.broadcast_to(positions, others[:d] + positions.shape[d:d + 1] + others[d + 1:])
    size = source.shape[d]
    if dim is None:  # PyTorch's gather of the flat tensors: no negative indices
        bad = _out_of_bounds(positions, size, 0)
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    elif positions.size:
        # Along a dim PyTorch takes every index modulo the size (-1 is the last, and so is size - 1 + size).
        if not size:
            raise RuntimeError("ZeroDivisionError")
        if _out_of_bounds(positions, size, 0) is not None:
            positions = positions % size
    return np.take_along_axis(source, positions, axis=d)


# -- masks -------------------------------------------------------------------------------

def _masked_select_grad(grad, input_shape, mask):
    # PyTorch's masked_select_backward: zeros of the broadcast shape with the gradient scattered
    # where the mask holds (summed back to the input's shape by the engine)
    shape = check_same_shape_or_broadcast(tuple(mask.shape), tuple(input_shape))
    return ops.zeros_like(mask.expand(shape), dtype=grad.dtype).masked_scatter(mask, grad), None


@op(grad=_masked_select_grad, method=True, out=True, meta=metadata,
    errors=(Sample((M23, TensorSpec((2, 3), "int64"))), Sample((M23, TensorSpec((3, 2), "bool")))),
    samples=(Sample((M23, TensorSpec((2, 3), "bool"))), Sample((M23, TensorSpec((3,), "bool"))),
             Sample((TensorSpec((3,), "int64"), TensorSpec((2, 3), "bool"))),
             Sample((SCALAR, TensorSpec((), "bool")))), tags=("dynamic_output_shape",))
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """A 1-D copy of the elements of ``input`` where the boolean ``mask`` is True
    (the two broadcast together).

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 2], [3, 4]])
    >>> tm.masked_select(x, x > 1).tolist()
    [2, 3, 4]
    """
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = check_same_shape_or_broadcast(mask.shape, input.shape)
    if type(input) is MetaArray:
        raise value_dependent("masked_select")
    return np.broadcast_to(input, shape)[np.broadcast_to(mask, shape)].reshape(-1)


def _nonzero_decomposition(input, as_tuple=False):
    """PyTorch's ``nonzero(as_tuple=True)``: ``nonzero`` (of a 0-d input unsqueezed), then ``unbind``."""
    if not as_tuple or not isinstance(input, TensorBase):
        return NotImplemented
    return (input if input.dim() else input.unsqueeze(0)).nonzero().unbind(1)


@op(method=True, out=True, differentiable=False, meta=data_dependent, decompose=_nonzero_decomposition,
    samples=(Sample((M23,)), Sample((TensorSpec((2, 3), "int64", -1, 1),)), Sample((TensorSpec((4,), "bool"),)),
             Sample((SCALAR,)), Sample((TensorSpec((2, 3), "int64", 0, 1),), {"as_tuple": True}),
             Sample((TensorSpec((), "int64", 0, 0),), {"as_tuple": True}), Sample((TensorSpec((2, 0)),))),
    aten={"nonzero.default": ("as_tuple",)}, schema={"(returns)": "Tensor"}, tags=("core", "dynamic_output_shape"))
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """Indices of the non-zero elements: an ``(n, input.dim())`` int64 tensor, or with
    ``as_tuple=True`` one 1-D tensor per dimension (ready to index with).

    >>> import tensormodes as tm
    >>> tm.nonzero(tm.tensor([[0, 1], [2, 0]])).tolist()
    [[0, 1], [1, 0]]
    >>> [t.tolist() for t in tm.tensor([0, 3, 4]).nonzero(as_tuple=True)]
    [[1, 2]]
    """
    flags = input if input.dtype.kind in "biufc" else input != 0  # bfloat16 has no truth test of its own
    if as_tuple:
        return tuple(i.astype(np.int64, copy=False) for i in np.nonzero(_as_nd(flags)))
    return np.argwhere(flags).astype(np.int64, copy=False)


def _check_static_size(size, fill_value) -> tuple[int, int]:
    for name, value in (("size", size), ("fill_value", fill_value)):
        if type(value) is bool or not hasattr(value, "__index__"):  # an int tensor is an int, as in PyTorch
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not {type(value).__name__}")
    size = size.__index__()
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return size, fill_value.__index__()


@rule
def _nonzero_static_meta(input, *, size, fill_value=-1):
    # the point of the op: its shape is known without the data (``size`` rows, one per index)
    size, _ = _check_static_size(size, fill_value)
    return MetaArray((size, len(input.shape)), np.dtype(np.int64))


@op(method=True, out=True, differentiable=False, meta=_nonzero_static_meta,
    samples=(Sample((M23,), {"size": 8}), Sample((TensorSpec((2, 3), "int64", -1, 1),), {"size": 2}),
             Sample((TensorSpec((4,), "bool"),), {"size": 3, "fill_value": 7}), Sample((SCALAR,), {"size": 2}),
             Sample((TensorSpec((2, 0)),), {"size": 2}), Sample((M23,), {"size": 0})),
    errors=(Sample((M23,), {"size": -1}), Sample((M23,), {"size": 2.0}), Sample((M23,), {"size": True}),
            Sample((M23,), {"size": 2, "fill_value": 1.5})), schema={"size": "SymInt"})
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` with a fixed number of rows, ``size``: the first ``size`` indices of
    non-zero elements, padded with rows of ``fill_value`` — a shape known without the data.

    >>> import tensormodes as tm
    >>> tm.nonzero_static(tm.tensor([[0, 1], [2, 0]]), size=3).tolist()
    [[0, 1], [1, 0], [-1, -1]]
    """
    size, fill_value = _check_static_size(size, fill_value)
    found = nonzero(input)
    result = np.full((size, input.ndim), fill_value, dtype=np.int64)
    count = min(size, len(found))
    result[:count] = found[:count]
    return result


@op(method=True, differentiable=False, meta=data_dependent,
    samples=(Sample((M23,)), Sample((TensorSpec((2, 3), "int64", -1, 1),)), Sample((TensorSpec((4,), "bool"),)),
             Sample((SCALAR,)), Sample((TensorSpec((2, 0)),))),
    aten="nonzero.default")
def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements (NaN counts), one row each: ``nonzero(input)``.

    >>> import tensormodes as tm
    >>> tm.argwhere(tm.tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return nonzero(input)


def _taken_back(grad, input_shape, index):
    """The gradient of elements read flat at ``index`` (wrapped) from an input of ``input_shape``."""
    numel = math.prod(input_shape)
    if not numel or not index.numel():  # nothing taken: PyTorch's gradient is still a (zero-filled) tensor
        return grad.new_zeros(input_shape), None
    return gather_back(grad, input_shape, index % numel), None


def _take_grad(grad, input, index):
    # PyTorch's take_backward: the gradient put (accumulating) into zeros like the input
    return ops.zeros_like(input).put(index, grad, True), None


@op(grad=_take_grad, method=True, out=True, meta=metadata,
    errors=(Sample((M23, TensorSpec((2,), "int32", 0, 1))),),
    samples=(Sample((M23, TensorSpec((2, 2), "int64", -6, 5))), Sample((SCALAR, TensorSpec((), "int64", 0, 0))),
             Sample((TensorSpec((4,), "bool"), TensorSpec((3,), "int64", 0, 3)))))
def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of ``input``, read as a flat 1-D tensor, at ``index`` (negative entries
    count from the end); the result has ``index``'s shape.

    >>> import tensormodes as tm
    >>> tm.take(tm.tensor([[1, 2], [3, 4]]), tm.tensor([0, -1])).tolist()
    [1, 4]
    """
    if index.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_legacy_name(index.dtype)}")
    if type(input) is MetaArray:
        return MetaArray(index.shape, input.dtype)
    bad = _out_of_bounds(index, input.size, -input.size)
    if bad is not None:
        if not input.size:
            raise IndexError("take(): tried to take from an empty tensor")
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {input.size} elements.")
    return np.asarray(np.take(input.reshape(-1), index))


def _check_put(input, index, source) -> None:
    if index.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_legacy_name(index.dtype)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_legacy_name(input.dtype)} and source.dtype = {_legacy_name(source.dtype)}")
    if index.size != source.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.size}, index.numel() = {index.size}")


def _put_meta(input, index, source, accumulate=False):
    _check_put(input, index, source)
    return MetaArray(input.shape, input.dtype)


def _put_grad(grad, index, source_shape, source_dtype, accumulate, needs_input_grad):
    # PyTorch's formulas: the input's gradient is the output's, less the positions written over
    # (unless added to); the source's, the output's gradient taken at the positions it went to
    grad_input = grad_source = None
    if needs_input_grad[0]:
        grad_input = grad if accumulate else grad.put(
            index, ops.zeros(tuple(source_shape), dtype=source_dtype, device=grad.device), False)
    if needs_input_grad[2]:
        grad_source = grad.take(index).reshape(tuple(source_shape))
    return grad_input, None, grad_source


@op(grad=_put_grad, method=True, inplace=True, meta=rule(_put_meta),
    errors=(Sample((M23, TensorSpec((2,), "int32", 0, 1), TensorSpec((2,)))),
            Sample((M23, TensorSpec((2,), "int64", 0, 5), TensorSpec((2,), "float64"))),
            Sample((M23, TensorSpec((2,), "int64", 0, 5), TensorSpec((3,))))),
    samples=(Sample((M23, TensorSpec((2, 2), "int64", -6, 5), TensorSpec((4,)))),
             Sample((M23, TensorSpec((3,), "int64", 0, 1), TensorSpec((3,)), True)),
             Sample((TensorSpec((4,), "int64", 0, 9), TensorSpec((2,), "int64", 0, 3), TensorSpec((2,), "int64", 0, 9)),
                    {"accumulate": True})),
    schema={"input": "Tensor self"})
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with the elements of ``source`` written at ``index`` into it, read as a flat
    1-D tensor (negative entries count from the end); added to the elements there with ``accumulate``.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 2).put(tm.tensor([0, -1, 0]), tm.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()
    [[4.0, 0.0], [0.0, 2.0]]
    """
    _check_put(input, index, source)
    if type(input) is MetaArray:
        return MetaArray(input.shape, input.dtype)
    bad = _out_of_bounds(index, input.size, -input.size)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {input.size} elements.")
    flat = input.reshape(-1).copy()
    positions, values = index.reshape(-1) % max(input.size, 1), source.reshape(-1)
    if accumulate:
        np.add.at(flat, positions, values)
    else:
        flat[positions] = values
    return flat.reshape(input.shape)


# -- whole-tensor writes: fill_, zero_, copy_ -------------------------------------------------------

def _fill_grad(grad, value_shape, needs_input_grad):
    # value_shape None: ``value`` was a number
    return (grad * 0 if needs_input_grad[0] else None,
            grad.sum() if value_shape is not None and needs_input_grad[1] else None)


@op(grad=_fill_grad, meta=metadata, node=lambda tensor, value: "fill" if isinstance(value, Number) else "fill#1",
    errors=(Sample((M23, M23)),),
    samples=(Sample((M23, 2.5)), Sample((TensorSpec((3,), "int64"), 7.9)), Sample((M23, TensorSpec(())))),
    aten={"fill.Scalar": ("+core",), "fill.Tensor": ()})
def fill(input: Tensor, value: Tensor | Number) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (a number or a 0-dim tensor): ``fill_``
    on a copy.

    >>> import tensormodes as tm
    >>> tm.fill(tm.zeros(2, dtype=tm.int64), 2.7)
    tensor([2, 2])
    """
    return fill_(np.empty_like(input) if type(input) is not MetaArray else MetaArray(input.shape, input.dtype), value)


@op(method=True, mutates=True, grad=_fill_grad, meta=metadata, errors=(Sample((M23, M23)),),
    samples=(Sample((M23, 2.5)), Sample((TensorSpec((3,), "int64"), 7)), Sample((M23, TensorSpec(())))),
    aten={"fill_.Scalar": (), "fill_.Tensor": ()}, tags=("inplace",))
def fill_(input: Tensor, value: Tensor | Number) -> Tensor:
    """Fill the tensor with ``value`` (a number or a 0-dim tensor), in place.

    >>> import tensormodes as tm
    >>> tm.zeros(3).fill_(2).tolist()
    [2.0, 2.0, 2.0]
    """
    tensor_value = isinstance(value, np.ndarray) or type(value) is MetaArray
    if tensor_value and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           "dimensions.")
    if not tensor_value:  # a number is checked as PyTorch converts a Scalar (a tensor is cast)
        value = checked_scalar(value, dt.NP_TO_DTYPE[input.dtype], saturate_half=input.size == 1)
    if type(input) is MetaArray:
        return input
    if tensor_value:
        value = dt.half_staged(value, input.dtype)
    with np.errstate(over="ignore"):
        input[...] = value
    return input


def _diagonal_positions(shape: tuple, wrap: bool) -> np.ndarray:
    """The flat positions of the main diagonal of a tensor of ``shape`` (all sizes equal, or a
    tall matrix: its first square block, and with ``wrap`` every block below it, a row apart)."""
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(size != shape[0] for size in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    step = sum(math.prod(shape[i + 1:]) for i in range(len(shape)))
    count = min(shape)
    if len(shape) == 2 and wrap and shape[0] > shape[1]:
        return np.arange(0, math.prod(shape), shape[1] + 1)
    return np.arange(count) * step


def _fill_diagonal_grad(grad, input_shape, wrap):
    return grad.clone().fill_diagonal_(0, wrap)


def _fill_diagonal_decomposition(input, fill_value, wrap=False):
    """PyTorch's composite ``fill_diagonal_``: ``fill_`` of the diagonal as an ``as_strided`` view
    of ``input``'s storage, and with ``wrap`` of a tall matrix, of the diagonal's continuation
    from row ``width + 1`` on."""
    shape = tuple(input.shape)
    if len(shape) < 2 or (len(shape) > 2 and any(size != shape[0] for size in shape)) \
            or not isinstance(fill_value, (bool, Number)) or not isinstance(wrap, bool):
        return NotImplemented  # the op raises its errors
    if input.requires_grad and (input._base is not None or not input.is_contiguous()):
        # autograd of an in-place write into an as_strided view of a view (or of a non-contiguous
        # tensor) is not PyTorch's yet here: the op and its own formula keep the gradient right
        return NotImplemented
    strides, offset = input.stride(), input.storage_offset()
    step, size = sum(strides), min(shape)
    input.as_strided([size], [step], offset).fill_(fill_value)
    height, width = shape[:2]
    if wrap and len(shape) == 2 and height > width + 1:
        count = (input.numel() + width) // (width + 1) - size
        input.as_strided([count], [step], offset + strides[0] * (width + 1)).fill_(fill_value)
    return input


@op(function=False, method="fill_diagonal_", mutates=True, grad=_fill_diagonal_grad, meta=metadata,
    decompose=_fill_diagonal_decomposition,
    errors=(Sample((TensorSpec((3,)), 1.0)), Sample((TensorSpec((3, 3, 4)), 1.0)),
            Sample((TensorSpec((2, 2), "int8"), 1000))),
    samples=(Sample((TensorSpec((3, 4)), 5.0)), Sample((TensorSpec((7, 3)), 2.5), {"wrap": True}),
             Sample((TensorSpec((7, 3)), 2.5)), Sample((TensorSpec((3, 3, 3), "int64"), 2)),
             Sample((TensorSpec((3, 3), "int64"), 2.7)), Sample((TensorSpec((0, 3)), 1.0)),
             Sample((TensorSpec((2, 5), "bool"), True), {"wrap": True})), tags=("inplace",))
def fill_diagonal_(input: Tensor, fill_value: Number, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (the elements with all indices equal) with ``fill_value``, in place;
    a tall matrix with ``wrap`` restarts the diagonal below each square block, a row apart.

    >>> import tensormodes as tm
    >>> tm.zeros(3, 4).fill_diagonal_(5).tolist()
    [[5.0, 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 0.0], [0.0, 0.0, 5.0, 0.0]]
    """
    positions = _diagonal_positions(input.shape, wrap)
    value = checked_scalar(fill_value, dt.NP_TO_DTYPE[input.dtype])
    if type(input) is MetaArray or not positions.size:
        return input
    flat = input.reshape(-1)
    if not np.shares_memory(flat, input):  # a non-contiguous tensor: write through its own indices
        input[np.unravel_index(positions, input.shape)] = value
    else:
        flat[positions] = value
    return input


def _zero_grad(grad):
    return grad * 0


@op(method=True, mutates=True, grad=_zero_grad, meta=metadata, samples=(Sample((M23,)),),
    tags=("inplace",))
def zero_(input: Tensor) -> Tensor:
    """Fill the tensor with zeros, in place.

    >>> import tensormodes as tm
    >>> tm.ones(2).zero_().tolist()
    [0.0, 0.0]
    """
    if type(input) is not MetaArray:
        input[...] = 0
    return input


def _copy_grad(grad, needs_input_grad):
    # ``src``'s gradient is summed back to its shape by the engine
    return grad * 0 if needs_input_grad[0] else None, grad


@op(function=False, method="copy_", mutates=True, grad=_copy_grad, meta=metadata,
    errors=(Sample((M23, TensorSpec((2,)))), Sample((M23, TensorSpec((1, 2, 3))))),
    samples=(Sample((M23, TensorSpec((2, 3)))), Sample((M23, TensorSpec((3,)))),
             Sample((TensorSpec((2, 3), "int64"), TensorSpec((2, 3))))), tags=("inplace",))
def copy_(input: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast to this tensor's shape, cast to its dtype) into this tensor.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 2).copy_(tm.tensor([1, 2])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    try:
        if type(input) is MetaArray:
            if len(src.shape) > input.ndim or not _value_fits(src.shape, input.shape):
                raise ValueError("src does not broadcast to the tensor's shape")
            return input
        source = np.broadcast_to(src, input.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({input.shape[-1] if input.ndim else 1}) must match the size of "
                           f"tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton dimension "
                           f"{max(input.ndim - 1, 0)}") from None
    if np.may_share_memory(input, source):
        source = source.copy()
    np.copyto(input, dt.half_staged(source, input.dtype), casting="unsafe")
    return input
