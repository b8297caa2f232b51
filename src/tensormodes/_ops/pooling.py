"""Pooling: max pooling (with or without the positions of the maxima) and its inverse
``max_unpool2d``, average pooling, and adaptive average and max pooling (1D and 2D), as PyTorch
declares them (``torch.max_pool2d``, ``torch.nn.functional.avg_pool2d`` ...). ``nn.functional``'s
Python-level functions (``F.max_pool2d(return_indices=True)``, ``F.adaptive_max_pool2d`` ...)
are composites over these ops, in ``nn/_functional/pooling.py``.

Kernels work on strided views of the (padded) input, never looping over pixels: max pooling
compares one view per kernel tap, average pooling adds one view per kernel tap (in the order
PyTorch sums a window), adaptive pooling gathers its uneven windows at the largest one's size,
and a gradient that spreads values back over windows adds one strided view per kernel tap.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import HALF_TYPES, not_implemented, ops, scalar_type_name
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

# -- arguments ------------------------------------------------------------------------------------

def _pair(function: str, name: str, value, default=None) -> tuple[int, int]:
    """A 2D pooling's kernel_size / stride / padding / dilation as (height, width)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value), int(value)
    values = [] if value is None else [int(v) for v in value]
    if not values and default is not None:
        return default
    if len(values) == 1:
        return values[0], values[0]
    if len(values) != 2:
        raise RuntimeError(f"{function}: {_PAIR_ERRORS[name]}")
    return values[0], values[1]


_PAIR_ERRORS = {
    "kernel_size": "kernel_size must either be a single int, or a tuple of two ints",
    "stride": "stride must either be omitted, a single int, or a tuple of two ints",
    "padding": "padding must either be a single int, or a tuple of two ints",
    "dilation": "dilation must be either a single int, or a tuple of two ints",
}


def _pool2d_arguments(function: str, input: np.ndarray, kernel_size, stride, padding, dilation, ceil_mode: bool):
    """PyTorch's checks of a 2D pooling's arguments, in its order: (kernel, stride, padding,
    dilation, output size), each (height, width)."""
    kernel = _pair(function, "kernel_size", kernel_size)
    step = _pair(function, "stride", stride, default=kernel)
    pad = _pair(function, "padding", padding)
    spread = _pair(function, "dilation", dilation)
    if min(step) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if min(pad) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(pad)}")
    for k, p, d in zip(kernel, pad, spread):
        if d > 0 and p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    if min(spread) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {spread[0]} "
                           f"dilationW: {spread[1]}")
    if input.ndim not in (3, 4):
        if function == "avg_pool2d" and input.ndim < 3:  # PyTorch's avg_pool2d reads input.size(-3) first
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.ndim, 1)}, "
                             f"{max(input.ndim, 1) - 1}], but got -3)")
        if function == "max_pool2d":
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(input.shape)}")
    sizes = input.shape[-2:]
    out = [_pooled_size(*args, ceil_mode) for args in zip(sizes, kernel, step, pad, spread)]
    if min(out) < 1:
        channels = input.shape[-3]
        raise RuntimeError(f"Given input size: ({channels}x{sizes[0]}x{sizes[1]}). Calculated output size: "
                           f"({channels}x{out[0]}x{out[1]}). Output size is too small")
    return kernel, step, pad, spread, out


# -- meta rules: the kernels' checks (they read only shapes and dtypes), then the output sizes -------

def _planes(input: MetaArray) -> MetaArray:
    """``input[..., None, :]`` of a meta array: a 1D pooling's input as planes of height 1."""
    return MetaArray((*input.shape[:-1], 1, input.shape[-1]), input.dtype)


def _with_indices(shape, dtype) -> tuple[MetaArray, MetaArray]:
    return MetaArray(shape, dtype), MetaArray(shape, np.dtype(np.int64))


def _max_pool2d_meta(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    *_, out = _pool2d_arguments("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    if input.dtype == np.bool_ or input.dtype.kind == "c":
        raise not_implemented("max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    return _with_indices((*input.shape[:-2], *out), input.dtype)


def _max_pool1d_meta(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    *_, size = _max_pool1d_arguments(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _with_indices((*input.shape[:-1], size), input.dtype)


def _max_pool1d_with_indices_meta(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    kernel = _single("max_pool1d", "kernel_size", kernel_size)
    step = _single("max_pool1d", "stride", stride, default=kernel)
    pad = _single("max_pool1d", "padding", padding)
    spread = _single("max_pool1d", "dilation", dilation)
    _check_1d_input("max_pool1d", input)
    *_, out = _pool2d_arguments("max_pool2d", _planes(input), (1, kernel), (1, step), (0, pad), (1, spread),
                                ceil_mode)
    if input.dtype == np.bool_ or input.dtype.kind == "c":
        raise not_implemented("max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    return _with_indices((*input.shape[:-1], out[1]), input.dtype)


def _avg_pool2d_meta(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                     divisor_override=None):
    *_, out = _pool2d_arguments("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    _check_avg_pool_dtype("avg_pool2d", input, divisor_override)
    return MetaArray((*input.shape[:-2], *out), input.dtype)


def _avg_pool2d_backward_meta(grad_output, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override):
    shape = tuple(input.shape)
    *_, out = _pool2d_arguments("avg_pool2d", MetaArray(shape, np.dtype(np.bool_)), kernel_size, stride, padding, 1,
                                ceil_mode)
    if grad_output.shape != (*shape[:-2], *out):
        raise RuntimeError(f"avg_pool2d_backward: expected grad_output of size {[*shape[:-2], *out]}, but got "
                           f"{list(grad_output.shape)}")
    return MetaArray(shape, grad_output.dtype)


def _avg_pool1d_meta(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    kernel = _single("avg_pool1d", "kernel_size", kernel_size)
    step = _single("avg_pool1d", "stride", stride, default=kernel)
    pad = _single("avg_pool1d", "padding", padding)
    _check_1d_input("avg_pool1d", input)
    *_, out = _pool2d_arguments("avg_pool2d", _planes(input), (1, kernel), (1, step), (0, pad), 1, ceil_mode)
    _check_avg_pool_dtype("avg_pool2d", input, None)
    return MetaArray((*input.shape[:-1], out[1]), input.dtype)


def _check_averaged_dtype(input, sizes) -> None:
    """``_averaged``'s dtype check (its kernel runs only for an output with elements)."""
    if math.prod((*input.shape[:-len(sizes)], *sizes)) and input.dtype.kind not in "f" and \
            input.dtype not in HALF_TYPES:
        raise not_implemented("adaptive_avg_pool2d", dt.NP_TO_DTYPE[input.dtype])


def _check_unpool_arguments(input, indices, output_size) -> tuple[int, int]:
    """``max_unpool2d``'s checks, in PyTorch's order, and the output's (height, width)."""
    if indices.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[indices.dtype])}")
    sizes = [int(s) for s in output_size]
    if len(sizes) != 2:
        raise RuntimeError(f"There should be exactly two elements (height, width) in output_size, but got "
                           f"{len(sizes)} elements.")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                           f"{input.ndim} dimensions.")
    check_unpool_operands(input, indices, 2)
    return sizes[0], sizes[1]


def check_unpool_operands(input, indices, dims: int) -> None:
    """PyTorch's ``max_unpooling{dims}d`` checks of the operands: ``indices`` shaped as ``input``,
    and no empty non-batch dimension."""
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    for dim in range(1, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"max_unpooling{dims}d_forward_out_cpu(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but got {list(input.shape)} with dimension {dim} being empty.")


def _check_unpool_dtype(input, output_shape) -> None:
    # the kernel (and its dtype dispatch) runs only for an output with elements
    if math.prod(output_shape) and input.dtype.kind not in "f" and input.dtype not in HALF_TYPES:
        raise not_implemented("max_unpool2d", dt.NP_TO_DTYPE[input.dtype])


# -- max pooling ----------------------------------------------------------------------------------

def _pooled_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size: windows that start in the input or its left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    count = span // stride + 1
    if ceil_mode and (count - 1) * stride >= size + padding:
        count -= 1
    return count


def _spread_maxima(grad, input_shape, indices, overlapping: bool = True):
    """Each output's gradient given to the input element it took (PyTorch's saved indices); a
    plain scatter, cheaper than adding, where no two windows share an element."""
    outputs = grad.shape[-2] * grad.shape[-1]  # not -1 in reshape: an empty batch leaves it ambiguous
    planes = grad.reshape(*input_shape[:-2], outputs)
    elements = input_shape[-2] * input_shape[-1]
    # One slot more: a window holding no input element (a dilation wider than the input) points
    # there, and its gradient goes nowhere.
    flat = grad.new_zeros((*input_shape[:-2], elements + 1))
    positions = indices.reshape(*input_shape[:-2], outputs)
    flat = flat.scatter_add(-1, positions, planes) if overlapping else flat.scatter(-1, positions, planes)
    return flat[..., :elements].reshape(input_shape)


def _overlapping(kernel, step, spread) -> bool:
    return any(s < d * (k - 1) + 1 for k, s, d in zip(kernel, step, spread))


def _max_pool2d_grad(grad, input, indices, kernel_size, stride, padding, dilation, ceil_mode):
    # One backward op, PyTorch's (its arguments as the forward's were given, a number as the
    # int[2] PyTorch's forward received: [0, 0])
    kernel_size, stride, padding, dilation = ([v, v] if isinstance(v, int) else v
                                              for v in (kernel_size, stride, padding, dilation))
    return ops.ops.aten.max_pool2d_with_indices_backward.default(grad, input, kernel_size, stride, padding,
                                                                  dilation, ceil_mode, indices)


def _max_pool2d_backward_grad(grad, indices, needs_input_grad):
    # Linear in grad_output: each output reads the gradient at the element its index names (the
    # extra slot past the plane, where an index may point, reads 0); none for input's values.
    planes = grad.flatten(-2)
    padded = ops.cat([planes, planes.new_zeros((*planes.shape[:-1], 1))], -1)
    grad_grad_output = padded.gather(-1, indices.flatten(-2)).reshape(tuple(indices.shape))
    return grad_grad_output if needs_input_grad[0] else None, ops.zeros_like(grad), None


def _max_pool2d_backward_meta(grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices):
    *_, out = _pool2d_arguments("max_pool2d_with_indices_backward", input, kernel_size, stride, padding, dilation,
                                ceil_mode)
    _check_pooled_gradient(grad_output, indices, (*input.shape[:-2], *out))
    return MetaArray(tuple(input.shape), grad_output.dtype)


def _check_pooled_gradient(grad_output, indices, expected: tuple) -> None:
    if grad_output.dtype == np.bool_ or grad_output.dtype.kind in "biuc":
        raise not_implemented("max_pool2d_backward", dt.NP_TO_DTYPE[grad_output.dtype])
    for name, value in (("gradOutput", grad_output), ("indices", indices)):
        if tuple(value.shape) != expected:
            raise RuntimeError(f"Expected {name} to have shape {list(expected)} but got {list(value.shape)}")


@op(function=False, grad=_max_pool2d_backward_grad, meta=rule(_max_pool2d_backward_meta),
    schema={"input": "Tensor self", "kernel_size": "int[2]", "stride": "int[2]", "padding": "int[2]",
            "dilation": "int[2]"},
    errors=(Sample((TensorSpec((1, 2, 3, 3)), TensorSpec((1, 2, 4, 4)), [2, 2], [2, 2], [0, 0], [1, 1], False,
                    TensorSpec((1, 2, 2, 2), "int64", 0, 3))),),
    samples=(
    Sample((TensorSpec((1, 2, 2, 2)), TensorSpec((1, 2, 4, 4)), [2, 2], [2, 2], [0, 0], [1, 1], False,
            TensorSpec((1, 2, 2, 2), "int64", 0, 15))),
    Sample((TensorSpec((2, 3, 3), "float64"), TensorSpec((2, 5, 5), "float64"), [3, 3], [2, 2], [1, 1], [1, 1],
            True, TensorSpec((2, 3, 3), "int64", 0, 24))),
    Sample((TensorSpec((1, 1, 3, 3)), TensorSpec((1, 1, 4, 4)), [2, 2], [1, 1], [0, 0], [1, 1], False,
            TensorSpec((1, 1, 3, 3), "int64", 0, 5))),
    Sample((TensorSpec((1, 2, 2, 2), "bfloat16"), TensorSpec((1, 2, 4, 4), "bfloat16"), [2, 2], [], [0, 0],
            [1, 1], False, TensorSpec((1, 2, 2, 2), "int64", 0, 15))),
    Sample((TensorSpec((0, 2, 2, 2)), TensorSpec((0, 2, 4, 4)), [2, 2], [2, 2], [0, 0], [1, 1], False,
            TensorSpec((0, 2, 2, 2), "int64", 0, 15)))),
    aten="default", tags=("core",))
def max_pool2d_with_indices_backward(grad_output: Tensor, input: Tensor, kernel_size, stride, padding, dilation,
                                     ceil_mode: bool, indices: Tensor) -> Tensor:
    """The gradient of ``max_pool2d_with_indices`` for its input: zeros like ``input`` with each
    output's gradient added at the element its index names (PyTorch's
    ``aten::max_pool2d_with_indices_backward``; repeated indices of overlapping windows add up,
    in the windows' order).

    >>> import tensormodes as tm
    >>> tm.ops.aten.max_pool2d_with_indices_backward.default(
    ...     tm.ones(1, 1, 1, 2), tm.zeros(1, 1, 2, 2), [2, 1], [2, 1], [0, 0], [1, 1], False,
    ...     tm.tensor([[[[2, 1]]]])).tolist()
    [[[[0.0, 1.0], [1.0, 0.0]]]]
    """
    kernel, step, _, spread, out = _pool2d_arguments("max_pool2d_with_indices_backward", input, kernel_size, stride,
                                                     padding, dilation, ceil_mode)
    _check_pooled_gradient(grad_output, indices, (*input.shape[:-2], *out))
    leading, elements = input.shape[:-2], input.shape[-2] * input.shape[-1]
    # One slot past each plane: a window holding no input element points there (see _max_pool_planes).
    flat = np.zeros((math.prod(leading), elements + 1), grad_output.dtype)
    outputs = out[0] * out[1]  # (not -1 in reshape: an empty batch leaves it ambiguous)
    positions = indices.reshape(flat.shape[0], outputs)
    values = grad_output.reshape(flat.shape[0], outputs)
    if _overlapping(kernel, step, spread):
        np.add.at(flat, (np.arange(flat.shape[0])[:, None], positions), values)
    else:
        np.put_along_axis(flat, positions, values, -1)
    return np.ascontiguousarray(flat[:, :elements]).reshape(input.shape)


def _max_pool2d_decomposition(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """PyTorch's composite ``max_pool2d``: ``max_pool2d_with_indices``'s values, the sizes as two
    ints each (those at their defaults passed as the defaults, which handlers see left out)."""
    try:
        for name, value in (("kernel_size", kernel_size), ("padding", padding), ("dilation", dilation)):
            _pair("max_pool2d", name, value)  # PyTorch's errors come from the op itself
        omitted = stride is None or (not isinstance(stride, numbers.Integral) and not len(stride))
        if not omitted:
            _pair("max_pool2d", "stride", stride)
    except (TypeError, ValueError, RuntimeError):
        return NotImplemented
    # As PyTorch's binding passes them: a list as given, a number as two
    kernel, steps, pads, spreads = [list(v) if isinstance(v, (list, tuple)) else [v, v]
                                    for v in (kernel_size, () if omitted else stride, padding, dilation)]
    pads, spreads = 0 if pads == [0, 0] else pads, 1 if spreads == [1, 1] else spreads
    return ops._max_pool2d_with_indices(input, kernel, steps, pads, spreads, ceil_mode)[0]


@op(node="max_pool2d_with_indices", meta=rule(_max_pool2d_meta), decompose=_max_pool2d_decomposition,
    errors=(Sample((TensorSpec((1, 2, 4, 4)), 5)), Sample((TensorSpec((1, 2, 4, 4)), 2), {"stride": 0}),
            Sample((TensorSpec((4, 4)), 2))),
    grad=_max_pool2d_grad, saves=("indices",), samples=(
    Sample((TensorSpec((1, 2, 4, 4)), 2)),
    Sample((TensorSpec((2, 5, 5), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((1, 1, 5, 6), "float64"), (2, 3), (1, 2), (1, 0), (2, 1))),
    Sample((TensorSpec((1, 2, 5, 5)), 2), {"stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True}),
    Sample((TensorSpec((1, 1, 4, 4), "int64", -5, 5), 2, 1)),
    Sample((TensorSpec((1, 2, 4, 4), "bfloat16"), [2], [])),
    Sample((TensorSpec((2, 3, 16, 16)), 3, 2, 1))),
    aten="max_pool2d_with_indices.default", tags=("core",))
def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """The largest element of each ``kernel_size`` window of ``input`` (N, C, H, W) or (C, H, W),
    the windows ``stride`` apart (by default ``kernel_size``); padding counts as ``-inf``. A
    window's first largest element wins (NaN counts as largest, and the last NaN wins).

    >>> import tensormodes as tm
    >>> tm.max_pool2d(tm.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    kernel, step, pad, spread, out = _pool2d_arguments("max_pool2d", input, kernel_size, stride, padding, dilation,
                                                       ceil_mode)
    if input.dtype == np.bool_ or input.dtype.kind == "c":
        raise not_implemented("max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    return _max_pool_planes(input, kernel, step, pad, spread, out)


def _max_pool_planes(input: np.ndarray, kernel, step, pad, spread, out) -> tuple[np.ndarray, np.ndarray]:
    """The maxima of ``input``'s windows over its last two dimensions, and where they are (flat
    positions in each plane), chosen as PyTorch's kernel chooses: the window's in-bounds elements
    are scanned in order and one replaces the best so far if it is larger or NaN, starting from
    ``-inf`` at the first in-bounds element. So ties keep the first, NaN the last, and a window of
    ``-inf`` only points at its first in-bounds element. A window holding no input element at all
    (possible with a dilation larger than the input) points one past the plane: its gradient goes
    nowhere (PyTorch's index there aliases another element's)."""
    sizes = input.shape[-2:]
    # Compared as float32 (exact for the narrow floats); padded with the lowest value, which
    # never replaces the best so far (the comparison is strict).
    work = input.astype(np.float32) if input.dtype in HALF_TYPES else input
    floating = work.dtype.kind == "f"
    lowest = -np.inf if floating else np.iinfo(work.dtype).min
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, spread)]
    after = [max((o - 1) * s + e - size - p, 0) for o, s, e, size, p in zip(out, step, extent, sizes, pad)]
    padded = work
    if any(pad) or any(after):
        padded = np.pad(work, [(0, 0)] * (input.ndim - 2) + [(pad[0], after[0]), (pad[1], after[1])],
                        constant_values=lowest)
    # Each window's first element (in the padded frame's coordinates, relative to the input),
    # and its first in-bounds tap along each dimension: the start of the scan.
    first_rows = np.arange(out[0]) * step[0] - pad[0]
    first_columns = np.arange(out[1]) * step[1] - pad[1]
    start_rows = np.minimum(np.maximum(-(first_rows // spread[0]), 0), kernel[0] - 1)
    start_columns = np.minimum(np.maximum(-(first_columns // spread[1]), 0), kernel[1] - 1)
    shape = (*input.shape[:-2], *out)
    # The smallest integer type that numbers the taps: cheaper masked writes.
    chosen = np.empty(shape, np.min_scalar_type(kernel[0] * kernel[1]))
    chosen[...] = start_rows[:, None] * kernel[1] + start_columns
    # One pass per kernel tap (never per pixel), over that tap's element of every window. No
    # copy of the windows, unlike an argmax over them.
    best = None
    for tap, (i, j) in enumerate(np.ndindex(*kernel)):
        rows, columns = (slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip((i, j), spread, out, step))
        candidate = padded[..., rows, columns]
        if best is None:
            # The first tap is padding (-inf / the lowest, as the scan starts) or the first
            # in-bounds element (which the scan takes unless it equals that start): no pass.
            best = candidate.copy()
            continue
        better = candidate > best
        if floating:
            better |= np.isnan(candidate)
        # chosen = tap where better: a better element is in bounds, so its tap comes after the
        # start and every tap before it, and the larger of the two is the tap (branch-free,
        # unlike putmask on a random mask).
        np.maximum(chosen, better.view(np.uint8) * chosen.dtype.type(tap), out=chosen)
        np.maximum(best, candidate, out=best)  # the same values as taking the better ones (NaN propagates)
    result = best.astype(input.dtype, copy=False)
    # Flat position = the window's first element's + the chosen tap's offset (a table lookup).
    tap_rows, tap_columns = np.divmod(np.arange(kernel[0] * kernel[1]), kernel[1])
    indices = (first_rows[:, None] * sizes[1] + first_columns) + \
        np.take(tap_rows * spread[0] * sizes[1] + tap_columns * spread[1], chosen)
    if padded is not work:  # only a window without input elements can point outside
        rows = first_rows[:, None] + np.take(tap_rows * spread[0], chosen)
        columns = first_columns + np.take(tap_columns * spread[1], chosen)
        inside = (rows >= 0) & (rows < sizes[0]) & (columns >= 0) & (columns < sizes[1])
        indices = np.where(inside, indices, sizes[0] * sizes[1])
    return result, indices


def _one(name: str, value, default=None, *, none_allowed: bool = False) -> int:
    """max_pool1d's kernel_size / stride / padding / dilation as one int."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if value is None and default is not None:
        return default
    values = [int(v) for v in value]
    if not values and default is not None:
        return default
    if len(values) != 1:
        kinds = "None, an int, list of ints, or tuple of ints" if none_allowed else \
            "an int, list of ints, or tuple of ints" if name == "padding" else "an int, list of ints or tuple of ints"
        raise RuntimeError(f"max_pool1d() {name} must be {kinds} of size 1 but got size {len(values)}")
    return values[0]


def _max_pool1d_grad(grad, input_shape, indices, kernel_size, stride, dilation):
    kernel = _one("kernel_size", kernel_size)
    step = _one("stride", stride, default=kernel, none_allowed=True)
    planes = (*input_shape[:-1], 1, input_shape[-1])
    return _spread_maxima(grad.unsqueeze(-2), planes, indices.unsqueeze(-2),
                          _overlapping((kernel,), (step,), (_one("dilation", dilation),))).squeeze(-2)


def _max_pool1d_decomposition(function: str):
    """PyTorch's composite ``max_pool1d`` / ``max_pool1d_with_indices``: ``max_pool2d_with_indices``
    over planes of height 1, both results squeezed; arguments it refuses are left to the op."""
    def decomposition(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        meta = _max_pool1d_meta if function == "max_pool1d" else _max_pool1d_with_indices_meta
        try:
            meta(MetaArray(tuple(input.shape), input.dtype._np), kernel_size, stride, padding, dilation, ceil_mode)
            kernel = _one("kernel_size", kernel_size)
            step = _one("stride", stride, default=kernel, none_allowed=True)
            pad, spread = _one("padding", padding), _one("dilation", dilation)
        except (TypeError, ValueError, RuntimeError, NotImplementedError):
            return NotImplemented
        values, indices = ops._max_pool2d_with_indices(input.unsqueeze(-2), [1, kernel], [1, step], [0, pad],
                                                       [1, spread], ceil_mode)
        values, indices = values.squeeze(-2), indices.squeeze(-2)
        return values if function == "max_pool1d" else (values, indices)

    decomposition.__name__ = f"_{function}_decomposition"
    return decomposition


@op(node="squeeze#1", meta=rule(_max_pool1d_meta), decompose=_max_pool1d_decomposition("max_pool1d"),
    errors=(Sample((TensorSpec((2, 4)), 5)), Sample((TensorSpec((2, 4)), 2), {"padding": 2}),
            Sample((TensorSpec((2, 4), "int64"), 2))),
    grad=_max_pool1d_grad, saves=("indices",), samples=(
    Sample((TensorSpec((1, 2, 6)), 2)),
    Sample((TensorSpec((2, 7), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((2, 1, 8), "float64"), [2], [], 1, 3)),
    Sample((TensorSpec((1, 2, 5), "bfloat16"), 2, 1))),
    schema={"padding": "int[1]=[0]", "dilation": "int[1]=[1]", "(returns)": "Tensor"})
def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """The largest element of each ``kernel_size`` window of ``input`` (N, C, L) or (C, L), the
    windows ``stride`` apart (by default ``kernel_size``); padding counts as ``-inf``. A window's
    first largest element wins (NaN counts as largest, and the last NaN wins).

    >>> import tensormodes as tm
    >>> tm.max_pool1d(tm.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[3.0, 2.0]]
    """
    kernel, step, pad, spread, size = _max_pool1d_arguments(input, kernel_size, stride, padding, dilation, ceil_mode)
    result, indices = _max_pool_planes(input[..., None, :], (1, kernel), (1, step), (0, pad), (1, spread), (1, size))
    return result[..., 0, :], indices[..., 0, :]


def _max_pool1d_arguments(input, kernel_size, stride, padding, dilation, ceil_mode: bool) -> tuple:
    """``max_pool1d``'s checks, in PyTorch's order: (kernel, stride, padding, dilation, output size)."""
    kernel = _one("kernel_size", kernel_size)
    step = _one("stride", stride, default=kernel, none_allowed=True)
    pad = _one("padding", padding)
    spread = _one("dilation", dilation)
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    if kernel <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {kernel}")
    if step <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {step}")
    if pad < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {pad}")
    if pad > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={pad} and "
                           f"kernel_size={kernel}")
    if spread <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {spread}")
    size = _pooled_size(input.shape[-1], kernel, step, pad, spread, ceil_mode)
    if size < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    if input.dtype.kind not in "f" and input.dtype not in HALF_TYPES:
        raise not_implemented("max_pool1d_impl", dt.NP_TO_DTYPE[input.dtype])
    return kernel, step, pad, spread, size


def _with_indices_grad(grad, input, result1, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool2d_grad(grad[0], input, result1, kernel_size, stride, padding, dilation, ceil_mode)


@op(meta=rule(_max_pool2d_meta),
    errors=(Sample((TensorSpec((1, 2, 4, 4)), 2), {"padding": 2}), Sample((TensorSpec((1, 2, 4, 4), "bool"), 2))),
    name="_max_pool2d_with_indices", grad=_with_indices_grad, samples=(
    Sample((TensorSpec((1, 2, 4, 4)), 2)),
    Sample((TensorSpec((2, 5, 5), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((1, 1, 5, 6), "float64"), (2, 3), (1, 2), (1, 0), (2, 1))),
    Sample((TensorSpec((1, 2, 4, 4), "bfloat16"), [2], []))),
    aten="max_pool2d_with_indices.default", schema={"(returns)": "Tensor, Tensor"}, tags=("core",))
def _max_pool2d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                             ceil_mode: bool = False) -> tuple:
    """``max_pool2d`` and where each maximum is: its flat position in the input's plane
    (PyTorch's ``torch._C._nn.max_pool2d_with_indices``, behind
    ``F.max_pool2d(..., return_indices=True)``).

    >>> import tensormodes as tm
    >>> values, indices = tm._max_pool2d_with_indices(tm.tensor([[[1., 3.], [4., 2.]]]), 2)
    >>> values.tolist(), indices.tolist()
    ([[[4.0]]], [[[2]]])
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def _with_indices_1d_grad(grad, input_shape, result1, kernel_size, stride, dilation):
    return _max_pool1d_grad(grad[0], input_shape, result1, kernel_size, stride, dilation)


@op(node="squeeze#1", meta=rule(_max_pool1d_with_indices_meta),
    decompose=_max_pool1d_decomposition("max_pool1d_with_indices"),
    errors=(Sample((TensorSpec((2, 4)), 5)), Sample((TensorSpec((4,)), 2))),
    grad=_with_indices_1d_grad, samples=(
    Sample((TensorSpec((1, 2, 6)), 2)),
    Sample((TensorSpec((2, 7), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((2, 1, 8), "float64"), [2], [], 1, 3))),
    schema={"padding": "int[1]=[0]", "dilation": "int[1]=[1]", "(returns)": "Tensor, Tensor"})
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple:
    """``max_pool1d`` and where each maximum is (its position along the last dimension).

    >>> import tensormodes as tm
    >>> values, indices = tm.max_pool1d_with_indices(tm.tensor([[1., 3., 2., 0.]]), 2)
    >>> values.tolist(), indices.tolist()
    ([[3.0, 2.0]], [[1, 2]])
    """
    kernel = _single("max_pool1d", "kernel_size", kernel_size)
    step = _single("max_pool1d", "stride", stride, default=kernel)
    pad = _single("max_pool1d", "padding", padding)
    spread = _single("max_pool1d", "dilation", dilation)
    _check_1d_input("max_pool1d", input)
    planes = input[..., None, :]
    arguments = _pool2d_arguments("max_pool2d", planes, (1, kernel), (1, step), (0, pad), (1, spread), ceil_mode)
    if input.dtype == np.bool_ or input.dtype.kind == "c":
        raise not_implemented("max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    values, indices = _max_pool_planes(planes, *arguments)
    return values[..., 0, :], indices[..., 0, :]


# -- average pooling ------------------------------------------------------------------------------

def _window_counts(size: int, kernel: int, stride: int, padding: int, out: int, count_include_pad: bool):
    """How many elements each window along one dimension averages: those in the input and its
    padding, or in the input alone."""
    start = np.arange(out) * stride - padding
    end = np.minimum(start + kernel, size + padding)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _divisors(sizes, kernel, step, pad, out, count_include_pad, divisor_override) -> np.ndarray | int:
    if divisor_override is not None:
        return divisor_override
    rows, columns = (_window_counts(*args, count_include_pad) for args in zip(sizes, kernel, step, pad, out))
    return rows[:, None] * columns[None, :]


def _padded_extent(sizes, kernel, step, pad, out) -> list[int]:
    """How much padding after each dimension the last window needs (ceil_mode's can overhang)."""
    return [max((o - 1) * s + k - size - p, 0) for o, s, k, size, p in zip(out, step, kernel, sizes, pad)]


def _avg_pool_planes(input: np.ndarray, kernel, step, pad, out, count_include_pad, divisor_override):
    sizes = input.shape[-2:]
    work = input.astype(np.float32) if input.dtype in HALF_TYPES else input
    after = _padded_extent(sizes, kernel, step, pad, out)
    padded = np.pad(work, [(0, 0)] * (input.ndim - 2) + [(pad[0], after[0]), (pad[1], after[1])])
    # One add per kernel tap, in the order PyTorch's kernel sums a window (row by row, from zero),
    # so that sums which cancel or overflow round as PyTorch's do.
    total = np.zeros((*input.shape[:-2], *out), work.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            total += padded[..., i:i + (out[0] - 1) * step[0] + 1:step[0], j:j + (out[1] - 1) * step[1] + 1:step[1]]
    divisor = _divisors(sizes, kernel, step, pad, out, count_include_pad, divisor_override)
    if work.dtype.kind in "iu":
        return truncating_divide(total, divisor).astype(input.dtype)
    return (total / divisor).astype(input.dtype)


def truncating_divide(total: np.ndarray, divisor) -> np.ndarray:
    """C++'s integer division, truncating towards zero, of window sums that may have wrapped
    (``abs`` would overflow at the smallest int64)."""
    with np.errstate(over="ignore"):
        quotient, remainder = np.divmod(total, divisor)
        return np.where((remainder != 0) & ((total < 0) != (np.asarray(divisor) < 0)), quotient + 1, quotient)


def _check_avg_pool_dtype(function: str, input: np.ndarray, divisor_override) -> None:
    # PyTorch's CPU kernel: floating types and int64 only
    if input.dtype.kind in "bc" or (input.dtype.kind in "iu" and input.dtype != np.int64):
        raise not_implemented(function, dt.NP_TO_DTYPE[input.dtype])
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")


def _avg_pool2d_grad(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    # One backward op, PyTorch's (its int[2] arguments as its binding gives them: an int as two)
    def listed(value):
        return [] if value is None else [value, value] if isinstance(value, numbers.Integral) else list(value)
    return ops.ops.aten.avg_pool2d_backward.default(grad, input, listed(kernel_size), listed(stride), listed(padding),
                                                    ceil_mode, count_include_pad, divisor_override)


@op(meta=rule(_avg_pool2d_meta),
    errors=(Sample((TensorSpec((1, 2, 4, 4)), 5)), Sample((TensorSpec((1, 2, 4, 4)), 2), {"divisor_override": 0}),
            Sample((TensorSpec((1, 2, 4, 4)), (2, 2, 2)))),
    namespace="tensormodes.nn.functional", grad=_avg_pool2d_grad, samples=(
    Sample((TensorSpec((1, 2, 4, 4)), 2)),
    Sample((TensorSpec((2, 5, 5), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((1, 1, 5, 6), "float64"), (2, 3), (1, 2), (1, 0)), {"count_include_pad": False}),
    Sample((TensorSpec((1, 2, 5, 5), "float64"), 3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
    Sample((TensorSpec((1, 1, 4, 5), "float64"), 2), {"stride": 1, "divisor_override": 3}),
    Sample((TensorSpec((1, 2, 4, 4), "int64", -9, 9), 2, 1)),
    Sample((TensorSpec((1, 2, 4, 4), "bfloat16"), [2], [])),
    Sample((TensorSpec((2, 3, 16, 16)), 3, 2, 1))),
    schema={"stride": "int[2]=[]"}, tags=("core",))
def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Applies 2D average-pooling operation in kH x kW regions by step size sH x sW steps, over
    ``input`` (N, C, H, W) or (C, H, W); ``stride`` defaults to ``kernel_size``. Each window is
    divided by its size including the zero padding (``count_include_pad``), or by
    ``divisor_override``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.avg_pool2d(tm.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[2.5, 4.5], [10.5, 12.5]]]
    """
    kernel, step, pad, _, out = _pool2d_arguments("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    _check_avg_pool_dtype("avg_pool2d", input, divisor_override)
    return _avg_pool_planes(input, kernel, step, pad, out, count_include_pad, divisor_override)


def zeros_as(t):
    """PyTorch's ``zeros_like(self)`` in a backward op's own formula, which its dispatch level sees
    as ``zeros`` (its ``zeros_like`` of a dense tensor calls ``zeros``)."""
    return zeros_shaped(t.shape, t.dtype, t.device)


def zeros_shaped(shape, dtype, device):
    """``zeros_as`` from a tensor's saved sizes and dtype (a formula asking ``<param>_shape`` and
    ``<param>_dtype`` keeps no tensor, so an in-place change of it does not void the graph)."""
    return ops.zeros(tuple(shape), dtype=dtype, device=device)


def _avg_pool2d_backward_grad(grad, input_shape, input_dtype, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override, needs_input_grad):
    # The backward is linear in grad_output: its own gradient is the average pooling again; zeros
    # for the input, whose values it never reads (as PyTorch's).
    return (ops.nn.functional.avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override) if needs_input_grad[0] else None,
            zeros_shaped(input_shape, input_dtype, grad.device) if needs_input_grad[1] else None)


@op(function=False, meta=rule(_avg_pool2d_backward_meta),
    errors=(Sample((TensorSpec((1, 2, 3, 3)), TensorSpec((1, 2, 4, 4)), 2, [], 0, False, True, None)),
            Sample((TensorSpec((1, 2, 2, 2)), TensorSpec((1, 2, 4, 4)), 5, [], 0, False, True, None))),
    grad=_avg_pool2d_backward_grad, samples=(
    Sample((TensorSpec((1, 2, 2, 2)), TensorSpec((1, 2, 4, 4)), [2, 2], [], [0, 0], False, True, None)),
    Sample((TensorSpec((2, 3, 3), "float64"), TensorSpec((2, 5, 5), "float64"), [3, 3], [2, 2], [1, 1], True, True,
            None)),
    Sample((TensorSpec((1, 1, 6, 2), "float64"), TensorSpec((1, 1, 5, 6), "float64"), [2, 3], [1, 2], [1, 0], False,
            False, None)),
    Sample((TensorSpec((1, 1, 3, 4), "float64"), TensorSpec((1, 1, 4, 5), "float64"), [2, 2], [1, 1], [0, 0], False,
            True, 3))),
    schema={"input": "Tensor self", "stride": "int[2]", "padding": "int[2]"}, aten="default", tags=("core",))
def avg_pool2d_backward(grad_output: Tensor, input: Tensor, kernel_size, stride, padding, ceil_mode: bool,
                        count_include_pad: bool, divisor_override: int | None) -> Tensor:
    """The gradient of ``avg_pool2d`` for the output gradient ``grad_output`` (PyTorch's
    ``aten::avg_pool2d_backward``, which reads only the input's shape): each output's share spread
    evenly back over its window.

    >>> import tensormodes as tm
    >>> tm.ops.aten.avg_pool2d_backward.default(tm.tensor([[[4.0]]]), tm.zeros(1, 2, 2), [2, 2], [], [0, 0], False,
    ...                                         True, None).tolist()
    [[[1.0, 1.0], [1.0, 1.0]]]
    """
    shape = input.shape
    kernel, step, pad, _, out = _pool2d_arguments("avg_pool2d", np.empty(shape, np.bool_), kernel_size, stride,
                                                  padding, 1, ceil_mode)
    sizes = shape[-2:]
    if grad_output.shape != (*shape[:-2], *out):
        raise RuntimeError(f"avg_pool2d_backward: expected grad_output of size {[*shape[:-2], *out]}, but got "
                           f"{list(grad_output.shape)}")
    divisor = _divisors(sizes, kernel, step, pad, out, count_include_pad, divisor_override)
    half = grad_output.dtype in HALF_TYPES
    work = grad_output.astype(np.float32) if half else grad_output
    shares = work / divisor
    after = _padded_extent(sizes, kernel, step, pad, out)
    padded = np.zeros((*shape[:-2], sizes[0] + pad[0] + after[0], sizes[1] + pad[1] + after[1]), shares.dtype)
    rows, columns = (slice(0, (o - 1) * s + 1, s) for o, s in zip(out, step))
    if half:
        # PyTorch's kernel works in the half type: each share rounded, then added window by window
        # (outputs in row-major order, so the taps backwards), every sum rounded
        shares = shares.astype(grad_output.dtype).astype(np.float32)
        for i in reversed(range(kernel[0])):
            for j in reversed(range(kernel[1])):
                window = padded[..., i:, j:][..., rows, columns]
                window += shares
                window[...] = window.astype(grad_output.dtype)
    else:
        # One add per kernel tap: its share of every window, where the window lies.
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                padded[..., i:, j:][..., rows, columns] += shares
    return np.ascontiguousarray(padded[..., pad[0]:pad[0] + sizes[0], pad[1]:pad[1] + sizes[1]],
                                dtype=grad_output.dtype)


def _check_1d_input(function: str, input: np.ndarray) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {function})")


def _single(function: str, name: str, value, default=None) -> int:
    """A 1D pooling's int argument (an int or a list of one)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    values = [] if value is None else [int(v) for v in value]
    if not values and default is not None:
        return default
    if len(values) != 1:
        raise RuntimeError(f"{function}() argument '{name}' should contain one int (got {len(values)})")
    return values[0]


def _avg_pool1d_grad(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad):
    # PyTorch's composite's backward: avg_pool2d's over planes of height 1
    kernel = _single("avg_pool1d", "kernel_size", kernel_size)
    step = _single("avg_pool1d", "stride", stride, default=kernel)
    return ops.ops.aten.avg_pool2d_backward.default(
        grad.unsqueeze(-2), input.unsqueeze(-2), [1, kernel], [1, step], [0, _single("avg_pool1d", "padding", padding)],
        ceil_mode, count_include_pad, None).squeeze(-2)


def _avg_pool1d_decomposition(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """PyTorch's composite ``avg_pool1d``: ``avg_pool2d`` over planes of height 1 (``unsqueeze``,
    ``avg_pool2d``, ``squeeze``); arguments it refuses are left to the op (its errors)."""
    try:
        _avg_pool1d_meta(MetaArray(tuple(input.shape), input.dtype._np), kernel_size, stride, padding, ceil_mode,
                         count_include_pad)
    except (TypeError, ValueError, RuntimeError, NotImplementedError):
        return NotImplemented
    kernel = _single("avg_pool1d", "kernel_size", kernel_size)
    step = _single("avg_pool1d", "stride", stride, default=kernel)
    return ops.nn.functional.avg_pool2d(input.unsqueeze(-2), [1, kernel], [1, step],
                                        [0, _single("avg_pool1d", "padding", padding)], ceil_mode,
                                        count_include_pad).squeeze(-2)


@op(node="squeeze#1", meta=rule(_avg_pool1d_meta), decompose=_avg_pool1d_decomposition,
    errors=(Sample((TensorSpec((2, 4)), 5)), Sample((TensorSpec((2, 4), "complex64"), 2))),
    grad=_avg_pool1d_grad, samples=(
    Sample((TensorSpec((1, 2, 6)), 2)),
    Sample((TensorSpec((2, 7), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((2, 1, 8), "float64"), [3], [2], 1, False, False)),
    Sample((TensorSpec((2, 5), "int64", -9, 9), 2, 1))),
    schema={"stride": "int[1]=[]", "padding": "int[1]=[0]"}, tags=("core",))
def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Applies a 1D average pooling over an input signal composed of several input planes:
    ``input`` (N, C, L) or (C, L); ``stride`` defaults to ``kernel_size``.

    >>> import tensormodes as tm
    >>> tm.avg_pool1d(tm.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[2.0, 1.0]]
    """
    kernel = _single("avg_pool1d", "kernel_size", kernel_size)
    step = _single("avg_pool1d", "stride", stride, default=kernel)
    pad = _single("avg_pool1d", "padding", padding)
    _check_1d_input("avg_pool1d", input)
    planes = input[..., None, :]
    kernel2, step2, pad2, _, out = _pool2d_arguments("avg_pool2d", planes, (1, kernel), (1, step), (0, pad), 1,
                                                     ceil_mode)
    _check_avg_pool_dtype("avg_pool2d", input, None)
    return _avg_pool_planes(planes, kernel2, step2, pad2, out, count_include_pad, None)[..., 0, :]
