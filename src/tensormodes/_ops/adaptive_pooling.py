"""Adaptive pooling (``adaptive_avg_pool1d/2d``, ``adaptive_max_pool1d/2d``) and max unpooling:
windows computed from the output size, PyTorch's bounds; each op's gradient formula above it.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import HALF_TYPES, no_complex_autograd, not_implemented, ops, scalar_type_name
from .meta_rules import rule
from .pooling import (
    _check_1d_input,
    _check_averaged_dtype,
    _check_unpool_arguments,
    _check_unpool_dtype,
    _planes,
    _spread_maxima,
    _with_indices,
)
from .registry import Sample, Tensor, TensorSpec, op

# -- meta rules

def _adaptive_avg_pool1d_meta(input, output_size):
    sizes = _output_sizes("adaptive_avg_pool1d", output_size, 1)
    _check_1d_input("adaptive_avg_pool1d", input)
    if _takes_mean(sizes):
        return _mean_of_rows(input)
    _adaptive_input("adaptive_avg_pool2d", _planes(input), 2, [1, *sizes], first=input.ndim - 1)
    _check_averaged_dtype(input, sizes)
    return MetaArray((*input.shape[:-1], *sizes), input.dtype)


def _adaptive_avg_pool2d_meta(input, output_size):
    sizes = _output_sizes("adaptive_avg_pool2d", output_size, 2)
    _adaptive_input("adaptive_avg_pool2d", input, 2, sizes, first=input.ndim - 2)
    _check_averaged_dtype(input, sizes)
    return MetaArray((*input.shape[:-2], *sizes), input.dtype)


def _adaptive_max_pool2d_meta(input, output_size):
    sizes = _output_sizes("adaptive_max_pool2d", output_size, 2)
    _adaptive_input("adaptive_max_pool2d", input, 2, sizes, colon=True, first=1)
    if input.dtype.kind not in "f" and input.dtype not in HALF_TYPES:
        raise not_implemented("adaptive_max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    return _with_indices((*input.shape[:-2], *sizes), input.dtype)


def _adaptive_max_pool1d_meta(input, output_size):
    size = _adaptive_max_pool1d_arguments(input, output_size)
    return _with_indices((*input.shape[:-1], size), input.dtype)


def _max_unpool2d_meta(input, indices, output_size):
    # The kernel's checks but the one of the indices' values (out of range), which needs data.
    height, width = _check_unpool_arguments(input, indices, output_size)
    shape = (*input.shape[:-2], height, width)
    _check_unpool_dtype(input, shape)
    return MetaArray(shape, input.dtype)


# -- adaptive pooling -----------------------------------------------------------------------------

def _adaptive_bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive windows along one dimension: [floor(o * size / out), ceil((o + 1) * size / out))."""
    positions = np.arange(out)
    return positions * size // out, ((positions + 1) * size + out - 1) // out


def _averaging_matrix(size: int, out: int, dtype) -> np.ndarray:
    """(out, size): row o averages output o's window."""
    start, end = _adaptive_bounds(size, out)
    inside = (np.arange(size) >= start[:, None]) & (np.arange(size) < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _output_sizes(function: str, output_size, count: int) -> list[int]:
    if isinstance(output_size, numbers.Integral) and not isinstance(output_size, bool):
        return [int(output_size)] * count
    sizes = [int(s) for s in output_size]
    if len(sizes) != count:
        if count == 1:
            raise RuntimeError(f"{function}() argument 'output_size' should contain one int (got {len(sizes)})")
        raise RuntimeError(f"{function}: output_size must be {count}")
    return sizes


def _adaptive_input(function: str, input: np.ndarray, spatial: int, sizes, *, colon: bool = False,
                    first: int | None = None) -> None:
    """An adaptive pooling's input checks; ``first``: the first dimension that may not be empty
    (default: the one after the batch's, or the first of an unbatched input)."""
    if input.ndim not in (spatial + 1, spatial + 2):
        shown = list(input.shape)
        raise RuntimeError(f"{function}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got"
                           f"{':' if colon else ''} {shown}")
    for dim in range(input.ndim - spatial - 1 if first is None else first, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{function}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes {list(input.shape)} with dimension {dim} being empty")
    if min(sizes) < 0:
        raise RuntimeError(f"{function}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, sizes))}}}")


def _window_gather(size: int, out: int):
    """Adaptive windows along one dimension as (positions, inside): every window at the largest
    one's length, the positions past a shorter window's end clipped and marked outside."""
    start, end = _adaptive_bounds(size, out)
    positions = start[:, None] + np.arange(int((end - start).max()) if out else 0)
    return np.minimum(positions, size - 1), positions < end[:, None]


def _averaged(input: np.ndarray, sizes, *, rounded: bool = False) -> np.ndarray:
    """``input`` averaged over adaptive windows of its last ``len(sizes)`` (1, 2 or 3) dimensions;
    ``rounded``: as PyTorch's 3-D kernel, every sum and division rounded to the input's dtype."""
    _check_averaged_dtype(input, sizes)
    shape = (*input.shape[:-len(sizes)], *sizes)
    if math.prod(shape) == 0:
        return np.zeros(shape, input.dtype)
    work = input.astype(np.float32) if input.dtype in HALF_TYPES else input
    if len(sizes) == 1:
        work, sizes = work[..., None, :], [1, *sizes]
    windows = _window_grid(work.shape[-len(sizes):], sizes)
    # One add per position of the largest window, in the order PyTorch's kernel sums a window (row
    # by row, from zero): sums that cancel or overflow round as PyTorch's do, and a NaN or an
    # infinity stays in the windows that hold it.
    total = np.zeros((*work.shape[:-len(sizes)], *sizes), work.dtype)
    for taps in itertools.product(*(range(positions.shape[-1]) for positions, _ in windows)):
        index = tuple(positions[..., tap] for (positions, _), tap in zip(windows, taps))
        inside = functools.reduce(np.logical_and, (inside[..., tap] for (_, inside), tap in zip(windows, taps)))
        total += np.where(inside, work[(..., *index)], 0)
        if rounded and work.dtype != input.dtype:
            total = total.astype(input.dtype).astype(work.dtype)
    result = total
    for _, inside in windows:  # divided by the window's length along each dimension in turn
        result = result / (inside.sum(-1).astype(work.dtype) if rounded else inside.sum(-1))
        if rounded and work.dtype != input.dtype:
            result = result.astype(input.dtype).astype(work.dtype)
    return np.ascontiguousarray(result.reshape(shape), dtype=input.dtype)


def _window_grid(spatial, sizes) -> list[tuple[np.ndarray, np.ndarray]]:
    """``_window_gather`` of each of the last ``len(sizes)`` dimensions, shaped to broadcast over
    the output grid: dimension d's (positions, inside) have shape (1, .., out_d, .., 1, kernel_d)."""
    grid = []
    for dim, (size, out) in enumerate(zip(spatial, sizes)):
        positions, inside = _window_gather(size, out)
        shape = [1] * len(sizes) + [positions.shape[1]]
        shape[dim] = out
        grid.append((positions.reshape(shape), inside.reshape(shape)))
    return grid


def _averaging_tensor(size: int, out: int, like):
    matrix = _averaging_matrix(size, out, np.float64)
    if like.is_meta:  # only its shape matters
        return ops.empty(matrix.shape, dtype=like.dtype, device="meta")
    return ops.tensor(matrix, dtype=like.dtype)


def _check_adaptive_avg_grad(shape) -> None:
    """ATen's ``adaptive_avg_pool2d_backward``'s check of the output gradient's (4D or 3D) shape."""
    for dim in range(1, len(shape)):
        if shape[dim] == 0:
            raise RuntimeError(f"adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {list(shape)} with dimension {dim} "
                               f"being empty")


def _adaptive_avg_differentiable(input, output_size) -> bool:
    """ATen's adaptive average pooling has no complex gradient (its mean for a 1 x 1 output has)."""
    if input.is_complex() and _output_sizes("adaptive_avg_pool1d", output_size, 1) != [1]:
        raise RuntimeError("_adaptive_avg_pool2d does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return True


def _adaptive_avg_pool1d_grad(grad, input_shape):
    if grad.shape[-1] != 1:  # (the mean's gradient, for an output of one, checks nothing)
        _check_adaptive_avg_grad((*grad.shape[:-1], 1, grad.shape[-1]))
        if grad.dtype in (dt.float16, dt.bfloat16) and not grad.is_meta:
            # PyTorch's composite reaches the 2D backward kernel, whose half-type steps round
            shape = (*input_shape[:-1], 1, input_shape[-1])
            return ops.ops.aten._adaptive_avg_pool2d_backward.default(
                grad.unsqueeze(-2), ops.zeros(shape, dtype=grad.dtype)).squeeze(-2)
    return grad @ _averaging_tensor(input_shape[-1], grad.shape[-1], grad)


def _adaptive_avg_pool1d_decomposition(input, output_size):
    """PyTorch's composite ``adaptive_avg_pool1d``: ``_adaptive_avg_pool2d`` over planes of height 1
    (``unsqueeze``, ``_adaptive_avg_pool2d``, ``squeeze``). Arguments it refuses, and an output of
    one (PyTorch's ``mean``, which rounds differently), are left to the op."""
    try:
        _adaptive_avg_pool1d_meta(MetaArray(tuple(input.shape), input.dtype._np), output_size)
        sizes = _output_sizes("adaptive_avg_pool1d", output_size, 1)
    except (TypeError, ValueError, RuntimeError, NotImplementedError):
        return NotImplemented
    if sizes == [1]:
        return NotImplemented
    return ops._adaptive_avg_pool2d(input.unsqueeze(-2), [1, *sizes]).squeeze(-2)


@op(node="squeeze#1", meta=rule(_adaptive_avg_pool1d_meta), differentiable=_adaptive_avg_differentiable,
    decompose=_adaptive_avg_pool1d_decomposition,
    errors=(Sample((TensorSpec((2, 4)), -1)), Sample((TensorSpec((2, 0)), 2)),
            Sample((TensorSpec((2, 4), "int64"), 2))),
    grad=_adaptive_avg_pool1d_grad, samples=(
    Sample((TensorSpec((1, 2, 7)), 3)),
    Sample((TensorSpec((2, 5), "float64"), [4])),
    Sample((TensorSpec((2, 1, 6), "float64"), 6)),
    Sample((TensorSpec((1, 3, 5), "float16"), 2))), tags=("core",))
def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Applies a 1D adaptive average pooling over an input signal composed of several input
    planes: ``output_size`` averages of windows spread evenly over the last dimension.

    >>> import tensormodes as tm
    >>> tm.adaptive_avg_pool1d(tm.tensor([[1., 3., 2., 0., 4.]]), 2).tolist()
    [[2.0, 2.0]]
    """
    sizes = _output_sizes("adaptive_avg_pool1d", output_size, 1)
    _check_1d_input("adaptive_avg_pool1d", input)
    planes = input[..., None, :]
    if _takes_mean(sizes):
        return _mean_of_rows(input)
    _adaptive_input("adaptive_avg_pool2d", planes, 2, [1, *sizes], first=planes.ndim - 2)
    return _averaged(input, sizes)


def _takes_mean(sizes) -> bool:
    """Whether ATen's ``adaptive_avg_pool2d`` (behind the 1D one) takes the mean of each plane:
    for a 1 x 1 output."""
    if min(sizes) < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{1, {sizes[0]}}}")
    return sizes == [1]


def _mean_of_rows(input):
    """``input.mean(-1, keepdim=True)`` (meta arrays too), with ``mean``'s dtype check."""
    if input.dtype.kind not in "fc" and input.dtype not in HALF_TYPES:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {scalar_type_name(dt.NP_TO_DTYPE[input.dtype])}")
    if type(input) is MetaArray:
        return MetaArray((*input.shape[:-1], 1), input.dtype)
    work = input.astype(np.float32) if input.dtype in HALF_TYPES else input
    with np.errstate(invalid="ignore"):  # an empty row's mean is NaN
        return np.asarray(work.sum(-1, keepdims=True) / input.shape[-1], dtype=input.dtype)


def _adaptive_avg_pool2d_grad(grad, input):
    # One backward op, PyTorch's (rows.mT @ grad @ columns with the averaging matrices)
    return ops.ops.aten._adaptive_avg_pool2d_backward.default(grad, input)


@op(meta=rule(_adaptive_avg_pool2d_meta), differentiable=no_complex_autograd("_adaptive_avg_pool2d"),
    errors=(Sample((TensorSpec((1, 2, 4, 4)), (2, 2, 2))), Sample((TensorSpec((4, 4)), 2))),
    grad=_adaptive_avg_pool2d_grad, samples=(
    Sample((TensorSpec((1, 2, 5, 7)), 3)),
    Sample((TensorSpec((2, 5, 4), "float64"), [2, 3])),
    Sample((TensorSpec((1, 1, 3, 6), "float64"), (4, 4))),
    Sample((TensorSpec((1, 3, 4, 4), "bfloat16"), 1))), schema={"output_size": "SymInt[2]"}, tags=("core",))
def _adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """2D adaptive average pooling (ATen's op behind ``F.adaptive_avg_pool2d``): an
    ``output_size`` grid of averages of windows spread evenly over the last two dimensions.

    >>> import tensormodes as tm
    >>> tm._adaptive_avg_pool2d(tm.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[2.5, 4.5], [10.5, 12.5]]]
    """
    sizes = _output_sizes("adaptive_avg_pool2d", output_size, 2)
    _adaptive_input("adaptive_avg_pool2d", input, 2, sizes, first=input.ndim - 2)
    return _averaged(input, sizes)


def _adaptive_max_pool2d_grad(grad, input, result1):
    # One backward op, PyTorch's (the maxima's gradients spread to their indices)
    return ops.ops.aten.adaptive_max_pool2d_backward.default(grad[0], input, result1)


@op(meta=rule(_adaptive_max_pool2d_meta),
    errors=(Sample((TensorSpec((4, 4)), 2)), Sample((TensorSpec((1, 2, 4, 4), "int64"), 2))),
    name="_adaptive_max_pool2d", grad=_adaptive_max_pool2d_grad, samples=(
    Sample((TensorSpec((1, 2, 5, 7)), 3)),
    Sample((TensorSpec((2, 5, 4), "float64"), [2, 3])),
    Sample((TensorSpec((1, 1, 3, 6), "float64"), (4, 4))),
    Sample((TensorSpec((1, 3, 4, 4), "bfloat16"), 1))),
    aten="adaptive_max_pool2d.default", schema={"(returns)": "Tensor, Tensor"})
def _adaptive_max_pool2d(input: Tensor, output_size) -> tuple:
    """2D adaptive max pooling (``torch._C._nn.adaptive_max_pool2d``, behind
    ``F.adaptive_max_pool2d``): the largest element of each window of an ``output_size`` grid
    spread evenly over the last two dimensions, and its flat position in the plane.

    >>> import tensormodes as tm
    >>> values, indices = tm._adaptive_max_pool2d(tm.tensor([[[1., 5., 2.], [0., 3., 4.]]]), (1, 2))
    >>> values.tolist(), indices.tolist()
    ([[[5.0, 5.0]]], [[[1, 1]]])
    """
    sizes = _output_sizes("adaptive_max_pool2d", output_size, 2)
    _adaptive_input("adaptive_max_pool2d", input, 2, sizes, colon=True, first=1)
    if input.dtype.kind not in "f" and input.dtype not in HALF_TYPES:
        raise not_implemented("adaptive_max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    return _adaptive_maxima(input, sizes)


def _adaptive_maxima(input: np.ndarray, sizes) -> tuple[np.ndarray, np.ndarray]:
    """The maxima of an ``sizes`` grid of adaptive windows over the last ``len(sizes)`` (2 or 3)
    dimensions, and their flat positions in the plane or volume (the first one of a window's
    ties, or its last NaN, as PyTorch's scan finds them)."""
    count = len(sizes)
    spatial = input.shape[-count:]
    if 0 in sizes:
        shape = (*input.shape[:-count], *sizes)
        return np.zeros(shape, input.dtype), np.zeros(shape, np.int64)
    work = input.astype(np.float32) if input.dtype in HALF_TYPES else input
    # Every window gathered at the largest window's size, the window offsets on axes of their
    # own: (..., O1, k1, O2, k2 ...); the positions past a smaller window's end hold -inf, which
    # never wins (each window has at least one element).
    gathered = [_window_gather(size, out) for size, out in zip(spatial, sizes)]
    index, valid = [], np.ones((1,) * 2 * count, bool)
    for dim, (positions, inside) in enumerate(gathered):
        shape = [1] * 2 * count
        shape[2 * dim:2 * dim + 2] = positions.shape
        index.append(positions.reshape(shape))
        valid = valid & inside.reshape(shape)
    windows = np.where(valid, work[(..., *index)], -np.inf)
    lead = windows.ndim - 2 * count
    windows = windows.transpose(*range(lead), *range(lead, windows.ndim, 2), *range(lead + 1, windows.ndim, 2))
    kernel = windows.shape[lead + count:]
    flat = windows.reshape(*windows.shape[:lead + count], math.prod(kernel))  # not -1: empty batches
    # As PyTorch's scan: the first of the largest, or the last NaN.
    chosen = np.argmax(flat, axis=-1)
    if work.dtype.kind == "f":
        nan = np.isnan(flat)
        last_nan = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        chosen = np.where(nan.any(axis=-1), last_nan, chosen)
    values = np.take_along_axis(flat, chosen[..., None], axis=-1)[..., 0]
    position = 0
    for dim, ((positions, _), tap) in enumerate(zip(gathered, np.unravel_index(chosen, kernel))):
        outputs = np.arange(sizes[dim]).reshape([-1 if d == dim else 1 for d in range(count)])
        position = position * spatial[dim] + positions[outputs, tap]
    return values.astype(input.dtype), np.asarray(position, np.int64)


def _adaptive_max_pool1d_arguments(input, output_size) -> int:
    """``adaptive_max_pool1d``'s checks, in PyTorch's order; the output size."""
    _check_1d_input("adaptive_max_pool1d", input)
    size = _output_sizes("adaptive_max_pool1d", output_size, 1)[0]
    for dim in range(1, input.ndim):  # PyTorch allows an empty first dimension, batched or not
        if input.shape[dim] == 0:
            raise RuntimeError(f"adaptive_max_pool1d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {dim} being empty")
    if size < 0:  # PyTorch's kernel runs on planes of height 1, and sizes its output so
        planes = [*input.shape[:-1], 1, size]
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {planes}")
    if input.dtype.kind not in "f" and input.dtype not in HALF_TYPES:
        raise not_implemented("adaptive_max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    return size


def _adaptive_max_pool1d_grad(grad, input_shape, result1):
    values, indices = grad[0].unsqueeze(-2), result1.unsqueeze(-2)
    out = values.shape[-1]
    planes = (*input_shape[:-1], 1, input_shape[-1])
    return _spread_maxima(values, planes, indices, bool(out == 0 or input_shape[-1] % out)).squeeze(-2)


def _adaptive_max_pool1d_decomposition(input, output_size):
    """PyTorch's composite ``adaptive_max_pool1d``: ``adaptive_max_pool2d`` over planes of height 1,
    both results squeezed; arguments it refuses are left to the op."""
    try:
        size = _adaptive_max_pool1d_arguments(MetaArray(tuple(input.shape), input.dtype._np), output_size)
    except (TypeError, ValueError, RuntimeError, NotImplementedError):
        return NotImplemented
    values, indices = ops._adaptive_max_pool2d(input.unsqueeze(-2), [1, size])
    return values.squeeze(-2), indices.squeeze(-2)


# PyTorch runs adaptive_max_pool2d on planes of height 1 and squeezes the result (its node).
@op(node="squeeze#1", meta=rule(_adaptive_max_pool1d_meta), decompose=_adaptive_max_pool1d_decomposition,
    errors=(Sample((TensorSpec((4,)), 2)), Sample((TensorSpec((2, 4)), (2, 2))), Sample((TensorSpec((2, 0)), 2)),
            Sample((TensorSpec((2, 4)), -1)), Sample((TensorSpec((2, 4), "int64"), 2))),
    grad=_adaptive_max_pool1d_grad, samples=(
    Sample((TensorSpec((1, 2, 7)), 3)),
    Sample((TensorSpec((2, 5), "float64"), [4])),
    Sample((TensorSpec((2, 1, 6), "float64"), 6)),
    Sample((TensorSpec((2, 3, 4), "float64"), 8)),
    Sample((TensorSpec((0, 5)), 2)),
    Sample((TensorSpec((1, 3, 5), "bfloat16"), 2))), schema={"(returns)": "Tensor, Tensor"})
def adaptive_max_pool1d(input: Tensor, output_size) -> tuple:
    """Applies a 1D adaptive max pooling over an input signal composed of several input
    planes: the maxima of ``output_size`` windows spread evenly over the last dimension of
    ``input`` (N, C, L) or (C, L), and their positions along it.

    >>> import tensormodes as tm
    >>> values, indices = tm.adaptive_max_pool1d(tm.tensor([[1., 5., 2., 0., 4.]]), 2)
    >>> values.tolist(), indices.tolist()
    ([[5.0, 4.0]], [[1, 4]])
    """
    size = _adaptive_max_pool1d_arguments(input, output_size)
    values, indices = _adaptive_maxima(input[..., None, :], [1, size])
    return values[..., 0, :], indices[..., 0, :]


# -- unpooling ------------------------------------------------------------------------------------

def _unpool_gradient(grad, indices, input_shape, count: int):
    """An unpooling's gradient (PyTorch's ``max_pool_double_backward``): each input element reads
    the output gradient at its index, in the last ``count`` dimensions flattened."""
    outputs = math.prod(grad.shape[-count:])
    inputs = math.prod(input_shape[-count:])  # (not -1: a plane may be empty)
    leading = tuple(input_shape[:-count])
    taken = grad.reshape(*grad.shape[:-count], outputs).gather(-1, indices.reshape(*leading, inputs))
    return taken.reshape(input_shape)


def _max_unpool2d_grad(grad, indices, input_shape):
    return _unpool_gradient(grad, indices, input_shape, 2)


def _unpooled(input: np.ndarray, indices: np.ndarray, sizes) -> np.ndarray:
    """A zero plane or volume of ``sizes`` (the last ``len(sizes)`` dimensions) per leading index,
    each input value put at its flat index there; PyTorch's error for an index out of range."""
    count = len(sizes)
    shape = (*input.shape[:-count], *sizes)
    if input.size == 0 or math.prod(sizes) == 0:
        return np.zeros(shape, input.dtype)
    planes = input.reshape(*input.shape[:-count], -1)
    positions = indices.reshape(planes.shape)
    elements = math.prod(sizes)
    if positions.size and (positions.min() < 0 or positions.max() >= elements):
        wrong = positions.max() if positions.max() >= elements else positions.min()
        raise RuntimeError(f"Found an invalid max index: {wrong} (output volumes are of size "
                           f"{'x'.join(map(str, sizes))})")
    result = np.zeros((*planes.shape[:-1], elements), input.dtype)
    np.put_along_axis(result, positions, planes, axis=-1)
    return result.reshape(shape)


# One element per plane: random indices cannot collide (where they do, which value lands is
# PyTorch's implementation's choice, and the finite-difference check of the gradient fails).
@op(meta=rule(_max_unpool2d_meta),
    errors=(Sample((TensorSpec((1, 1, 2, 2)), TensorSpec((1, 1, 2, 2), "int32", 0, 3), (4, 4))),
            Sample((TensorSpec((1, 1, 2, 2)), TensorSpec((1, 1, 2, 1), "int64", 0, 3), (4, 4))),
            Sample((TensorSpec((2, 2)), TensorSpec((2, 2), "int64", 0, 3), (4, 4)))),
    name="_max_unpool2d", grad=_max_unpool2d_grad, samples=(
    Sample((TensorSpec((1, 2, 1, 1)), TensorSpec((1, 2, 1, 1), "int64", 0, 3), (2, 2))),
    Sample((TensorSpec((3, 1, 1), "float64"), TensorSpec((3, 1, 1), "int64", 0, 15), [4, 4])),
    Sample((TensorSpec((2, 4, 1, 1), "float64"), TensorSpec((2, 4, 1, 1), "int64", 0, 14), [3, 5]))),
    aten="max_unpool2d.default",
    schema={"output_size": "SymInt[2]"})
def _max_unpool2d(input: Tensor, indices: Tensor, output_size) -> Tensor:
    """The inverse of ``max_pool2d`` for its ``indices`` (``torch._C._nn.max_unpool2d``, behind
    ``F.max_unpool2d``): a zero plane of ``output_size`` with each input value at its index.

    >>> import tensormodes as tm
    >>> tm._max_unpool2d(tm.tensor([[[5.0]]]), tm.tensor([[[2]]]), [2, 2]).tolist()
    [[[0.0, 0.0], [5.0, 0.0]]]
    """
    height, width = _check_unpool_arguments(input, indices, output_size)
    _check_unpool_dtype(input, (*input.shape[:-2], height, width))
    return _unpooled(input, indices, (height, width))
