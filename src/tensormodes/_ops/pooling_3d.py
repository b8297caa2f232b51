"""Volumetric pooling: ``max_pool3d`` (with ``_max_pool3d_with_indices``, the maxima's flat
positions in their volumes) and ``avg_pool3d`` (``nn.functional``'s, as PyTorch's
``torch._C._nn.avg_pool3d``), over the last three dimensions of an (N, C, D, H, W) or (C, D, H, W)
input.

Each window is one strided view of the padded input. Max pooling reads only the input's own
elements (never the padding) and picks as PyTorch's kernel: the first largest, or the last NaN.
Average pooling divides each window's sum by its size clipped to the padded input (or by the
number of input elements in it without ``count_include_pad``, or by ``divisor_override``); its
gradient is a transposed convolution with a kernel of ones, so it is differentiable again.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import HALF_TYPES, dtype_of, not_implemented, ops
from .meta_rules import rule
from .pooling import _pooled_size, truncating_divide
from .registry import Sample, Tensor, TensorSpec, op

_TRIPLE_ERRORS = {
    ("max_pool3d", "kernel_size"): "kernel_size must either be a single int, or a tuple of three ints",
    ("max_pool3d", "stride"): "stride must either be omitted, a single int, or a tuple of three ints",
    ("max_pool3d", "padding"): "padding must either be a single int, or a tuple of three ints",
    ("max_pool3d", "dilation"): "dilation must be either a single int, or a tuple of three ints",
    ("avg_pool3d", "kernel_size"): "kernel_size must be a single int, or a tuple of three ints",
    ("avg_pool3d", "stride"): "stride must be omitted, a single int, or a tuple of three ints",
    ("avg_pool3d", "padding"): "padding must be a single int, or a tuple of three ints",
}


def _triple(function: str, name: str, value, default=None) -> tuple[int, int, int]:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * 3
    values = [] if value is None else [int(v) for v in value]
    if not values and default is not None:
        return default
    if len(values) == 1:
        return (values[0],) * 3
    if len(values) != 3:
        raise RuntimeError(f"{function}: {_TRIPLE_ERRORS[function, name]}")
    return tuple(values)


def _pool3d_arguments(function: str, input, kernel_size, stride, padding, dilation, ceil_mode: bool):
    """PyTorch's checks of a 3D pooling's arguments, in its order; (kernel, stride, padding,
    dilation, output sizes), each (depth, height, width)."""
    kernel = _triple(function, "kernel_size", kernel_size)
    step = _triple(function, "stride", stride, default=kernel)
    pad = _triple(function, "padding", padding)
    spread = (1, 1, 1) if dilation is None else _triple(function, "dilation", dilation)
    if min(step) == 0:
        raise RuntimeError("stride should not be zero")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kernel[0]} kH: {kernel[1]} "
                           f"kW: {kernel[2]}")
    if min(step) < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {step[0]} dH: {step[1]} dW: {step[2]}")
    if min(spread) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {spread[0]} dilationH: "
                           f"{spread[1]} dilationW: {spread[2]}")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    for dim in range(input.ndim - 4, input.ndim):
        if input.shape[dim] == 0:
            name = "max_pool3d_with_indices_out_cpu_template" if function == "max_pool3d" else "avg_pool3d"
            raise RuntimeError(f"{name}(): Expected input's non-batch dimensions to have positive length, but input "
                               f"has a shape of {list(input.shape)} and non-batch dimension {dim - input.ndim + 4} "
                               "has length zero!")
    sizes = input.shape[-3:]
    if function == "avg_pool3d" and any(s < k for s, k in zip(sizes, kernel)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller than kernel size "
                           f"(kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    if min(pad) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(pad)}")
    for k, p, d in zip(kernel, pad, spread):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    out = [_pooled_size(*args, ceil_mode) for args in zip(sizes, kernel, step, pad, spread)]
    if min(out) < 1:
        channels = input.shape[-4]
        raise RuntimeError(f"Given input size: ({channels}x{sizes[0]}x{sizes[1]}x{sizes[2]}). Calculated output "
                           f"size: ({channels}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")
    return kernel, step, pad, spread, out


def _windows(array: np.ndarray, kernel, step, spread, out) -> np.ndarray:
    """(..., oD, oH, oW, kD * kH * kW): each output position's window of ``array`` (..., D', H', W'),
    which must hold every window (padded, and extended for ``ceil_mode``)."""
    leading = array.strides[:-3]
    strides = array.strides[-3:]
    view = as_strided(array, (*array.shape[:-3], *out, *kernel),
                      (*leading, *(s * t for s, t in zip(step, strides)), *(d * t for d, t in zip(spread, strides))),
                      writeable=False)
    return view.reshape(*array.shape[:-3], *out, math.prod(kernel))


def _padded(array: np.ndarray, kernel, step, pad, spread, out, fill) -> np.ndarray:
    """``array`` padded with ``fill`` before by ``pad`` and after as far as the last window reaches."""
    after = [max((o - 1) * s + d * (k - 1) + 1 - p - size, 0)
             for o, s, d, k, p, size in zip(out, step, spread, kernel, pad, array.shape[-3:])]
    widths = [(0, 0)] * (array.ndim - 3) + [(p, a) for p, a in zip(pad, after)]
    return np.pad(array, widths, constant_values=fill)


# -- max pooling ------------------------------------------------------------------------------------

def _check_max_dtype(input) -> None:
    if input.dtype == np.bool_ or input.dtype.kind == "c":
        raise not_implemented("max_pool3d", dtype_of(input))


def _max_pool3d_meta(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    *_, out = _pool3d_arguments("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode)
    _check_max_dtype(input)
    shape = (*input.shape[:-3], *out)
    return MetaArray(shape, input.dtype), MetaArray(shape, np.dtype(np.int64))


def _max_pool3d(input: np.ndarray, kernel_size, stride, padding, dilation, ceil_mode):
    kernel, step, pad, spread, out = _pool3d_arguments("max_pool3d", input, kernel_size, stride, padding, dilation,
                                                       ceil_mode)
    _check_max_dtype(input)
    volume = math.prod(input.shape[-3:])
    positions = np.arange(volume, dtype=np.int64).reshape(input.shape[-3:])
    where = _windows(_padded(positions, kernel, step, pad, spread, out, -1), kernel, step, spread, out)
    values = _windows(_padded(input, kernel, step, pad, spread, out, 0), kernel, step, spread, out)
    inside = where >= 0
    work = values.astype(np.float32) if values.dtype in HALF_TYPES else values
    if work.dtype.kind == "f":
        nan = np.isnan(work) & inside
        lowest = -np.inf
    else:
        nan = np.zeros(work.shape, bool)
        lowest = np.iinfo(work.dtype).min
    scored = np.where(inside, work, lowest)
    best = scored.max(axis=-1, keepdims=True)
    first_best = np.argmax(inside & (scored == best), axis=-1)
    last_nan = work.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    choice = np.where(nan.any(axis=-1), last_nan, first_best)
    picked = np.take_along_axis(values, choice[..., None], -1)[..., 0]
    indices = np.take_along_axis(np.broadcast_to(where, values.shape), choice[..., None], -1)[..., 0]
    return np.ascontiguousarray(picked), np.ascontiguousarray(indices)


def _max_pool3d_grad(grad, input_shape, indices):
    volume = input_shape[-3] * input_shape[-2] * input_shape[-1]
    leading = tuple(input_shape[:-3])
    outputs = grad.shape[-3] * grad.shape[-2] * grad.shape[-1]
    flat = grad.new_zeros((*leading, volume))
    if grad.dtype in (dt.float16, dt.bfloat16):
        # PyTorch's kernel adds in the half type, output by output, every sum rounded (index_put's
        # accumulation; scatter_add's would sum in float32)
        planes = flat.reshape(-1, volume)
        rows = ops.arange(planes.shape[0]).unsqueeze(-1)
        planes = planes.index_put((rows, indices.reshape(-1, outputs)), grad.reshape(-1, outputs), accumulate=True)
        return planes.reshape(input_shape)
    flat = flat.scatter_add(-1, indices.reshape(*leading, outputs), grad.reshape(*leading, outputs))
    return flat.reshape(input_shape)


def _max_pool3d_with_indices_grad(grad, input_shape, result):
    return _max_pool3d_grad(grad[0], input_shape, result[1])


_VOLUME = TensorSpec((1, 2, 4, 4, 4))
_POOL_ERRORS = (Sample((TensorSpec((2, 3, 3)), 2)), Sample((_VOLUME, 5)), Sample((_VOLUME, 2), {"stride": 0}),
                Sample((_VOLUME, (1, 2))), Sample((_VOLUME, 2), {"padding": 2}),
                Sample((TensorSpec((1, 0, 2, 2, 2)), 2)))
_MAX_SAMPLES = (Sample((_VOLUME, 2)), Sample((TensorSpec((2, 5, 5, 4), "float64"), 3, 2, 1), {"ceil_mode": True}),
                Sample((TensorSpec((1, 1, 5, 6, 4), "float64"), (2, 3, 2), (1, 2, 1), (1, 0, 1), (2, 1, 1))),
                Sample((TensorSpec((1, 1, 4, 4, 4), "int64", -5, 5), 2, 1)),
                Sample((TensorSpec((1, 2, 4, 4, 2), "bfloat16"), [2], [])),
                Sample((TensorSpec((0, 1, 2, 2, 2)), 2)))


def _max_pool3d_values_meta(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    # (the indices are handed to the formula: see saves=)
    return _max_pool3d_meta(input, kernel_size, stride, padding, dilation, ceil_mode)


def _max_pool3d_decomposition(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """PyTorch's composite ``max_pool3d``: ``max_pool3d_with_indices``'s values, the sizes as three
    ints each (those at their defaults passed as the defaults, which handlers see left out)."""
    try:
        for name, value in (("kernel_size", kernel_size), ("padding", padding), ("dilation", dilation)):
            _triple("max_pool3d", name, value)  # PyTorch's errors come from the op itself
        omitted = stride is None or (not isinstance(stride, numbers.Integral) and not len(stride))
        if not omitted:
            _triple("max_pool3d", "stride", stride)
    except (TypeError, ValueError, RuntimeError):
        return NotImplemented
    # As PyTorch's binding passes them: a list as given, a number as three
    kernel, steps, pads, spreads = [list(v) if isinstance(v, (list, tuple)) else [v] * 3
                                    for v in (kernel_size, () if omitted else stride, padding, dilation)]
    pads, spreads = 0 if pads == [0] * 3 else pads, 1 if spreads == [1] * 3 else spreads
    return ops._max_pool3d_with_indices(input, kernel, steps, pads, spreads, ceil_mode)[0]


@op(node="max_pool3d_with_indices", meta=rule(_max_pool3d_values_meta), decompose=_max_pool3d_decomposition,
    grad=_max_pool3d_grad, saves=("indices",), errors=_POOL_ERRORS, samples=_MAX_SAMPLES,
    aten="max_pool3d_with_indices.default", tags=("core",))
def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """The largest element of each ``kernel_size`` window of ``input`` (N, C, D, H, W) or
    (C, D, H, W), the windows ``stride`` apart (by default ``kernel_size``); the padding is never
    chosen. A window's first largest element wins (NaN counts as largest, the last NaN wins).

    >>> import tensormodes as tm
    >>> tm.max_pool3d(tm.arange(8.0).reshape(1, 2, 2, 2), 2).flatten()
    tensor([7.])
    """
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


@op(node="max_pool3d_with_indices", meta=rule(_max_pool3d_meta), grad=_max_pool3d_with_indices_grad,
    errors=_POOL_ERRORS, samples=_MAX_SAMPLES[:3],
    aten="max_pool3d_with_indices.default", schema={"(returns)": "Tensor, Tensor"}, tags=("core",))
def _max_pool3d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                             ceil_mode: bool = False) -> Tensor:
    """``max_pool3d``'s maxima and their flat positions in their volumes: PyTorch's
    ``torch._C._nn.max_pool3d_with_indices``, behind ``F.max_pool3d(..., return_indices=True)``.

    >>> import tensormodes as tm
    >>> tm._max_pool3d_with_indices(tm.arange(8.0).reshape(1, 2, 2, 2), 2)[1].flatten()
    tensor([7])
    """
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


# -- average pooling --------------------------------------------------------------------------------

def _check_avg_dtype(input, divisor_override) -> None:
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dtype == np.bool_ or input.dtype.kind == "c" or input.dtype in HALF_TYPES or (
            input.dtype.kind in "iu" and input.dtype != np.int64):  # PyTorch's kernel: floats and int64 only
        raise not_implemented("avg_pool3d_out_frame", dtype_of(input))


def _avg_pool3d_meta(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                     divisor_override=None):
    *_, out = _pool3d_arguments("avg_pool3d", input, kernel_size, stride, padding, None, ceil_mode)
    _check_avg_dtype(input, divisor_override)
    return MetaArray((*input.shape[:-3], *out), input.dtype)


def _divisors(sizes, kernel, step, pad, out, count_include_pad: bool) -> np.ndarray:
    """Each output window's divisor (oD, oH, oW): PyTorch's window size clipped to the padded
    input, or, without ``count_include_pad``, the number of input elements in it."""
    counts = []
    for size, k, s, p, o in zip(sizes, kernel, step, pad, out):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        counts.append(end - start)
    return counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]


def _avg_pool3d_grad(grad, input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override):
    # The transpose of a window sum: a transposed convolution of the divided gradient with ones.
    kernel = _triple("avg_pool3d", "kernel_size", kernel_size)
    step = _triple("avg_pool3d", "stride", stride, default=kernel)
    pad = _triple("avg_pool3d", "padding", padding)
    sizes = tuple(input_shape[-3:])
    out = tuple(grad.shape[-3:])
    if divisor_override:
        divided = grad / divisor_override
    else:
        divisors = _divisors(sizes, kernel, step, pad, out, count_include_pad)
        divided = grad / ops.tensor(divisors, dtype=grad.dtype, device=grad.device)
    planes = divided.reshape(-1, 1, *out)
    ones = ops.ones((1, 1, *kernel), dtype=grad.dtype, device=grad.device)
    spread = ops.conv_transpose3d(planes, ones, stride=step)
    reach = [(o - 1) * s + k for o, s, k in zip(out, step, kernel)]
    missing = [max(p + size - r, 0) for p, size, r in zip(pad, sizes, reach)]
    if any(missing):
        spread = ops.nn.functional.pad(spread, [side for m in reversed(missing) for side in (0, m)])
    inner = spread[(slice(None), slice(None), *(slice(p, p + size) for p, size in zip(pad, sizes)))]
    return inner.reshape(input_shape)


@op(grad=_avg_pool3d_grad, meta=rule(_avg_pool3d_meta), node="avg_pool3d", namespace="tensormodes.nn.functional",
    errors=_POOL_ERRORS[:5] + (Sample((TensorSpec((1, 1, 2, 2, 2), "float16"), 2)),
                               Sample((_VOLUME, 2), {"divisor_override": 0})),
    samples=(Sample((_VOLUME, 2)), Sample((TensorSpec((2, 5, 5, 4), "float64"), 3, 2, 1), {"ceil_mode": True}),
             Sample((TensorSpec((1, 1, 5, 6, 4), "float64"), (2, 3, 2), (1, 2, 1), (1, 0, 1)),
                    {"count_include_pad": False}),
             Sample((TensorSpec((1, 1, 3, 3, 3), "float64"), 2, 2, 1), {"ceil_mode": True, "divisor_override": 3}),
             Sample((TensorSpec((1, 1, 4, 4, 4), "int64", -9, 9), 2)),
             Sample((TensorSpec((0, 1, 2, 2, 2)), 2))),
    schema={"stride": "int[3]=[]"}, tags=("core",))
def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The average of each ``kernel_size`` window of ``input`` (N, C, D, H, W) or (C, D, H, W),
    the windows ``stride`` apart (by default ``kernel_size``); the zero padding counts in the
    divisor unless ``count_include_pad=False``; ``divisor_override`` replaces the divisor.
    Integer averages round toward zero, as PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.avg_pool3d(tm.arange(8.0).reshape(1, 2, 2, 2), 2).flatten()
    tensor([3.5000])
    """
    kernel, step, pad, _, out = _pool3d_arguments("avg_pool3d", input, kernel_size, stride, padding, None,
                                                  ceil_mode)
    _check_avg_dtype(input, divisor_override)
    spread = (1, 1, 1)
    integer = input.dtype.kind in "iu"
    work = input.astype(np.int64) if integer else input
    sums = _windows(_padded(work, kernel, step, pad, spread, out, 0), kernel, step, spread, out).sum(axis=-1)
    if divisor_override is not None:
        divisors = np.asarray(divisor_override, dtype=np.int64)
    else:
        divisors = _divisors(input.shape[-3:], kernel, step, pad, out, count_include_pad)
    if integer:
        return np.asarray(truncating_divide(sums, divisors)).astype(input.dtype)
    return np.ascontiguousarray(sums / divisors.astype(input.dtype), dtype=input.dtype)
