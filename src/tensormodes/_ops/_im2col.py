"""The NumPy kernels of every convolution (``convolution.py``, ``convolution_3d.py``): three
batched matrix products over im2col columns.

``_correlate`` (a plain convolution), ``_spread`` (its transpose: the input's gradient, and a
transposed convolution's forward) and ``_weight_product`` (the weight's gradient). The padded
input lies flat per plane, so that the window of every kernel tap is one strided view of it:
along the last spatial dimension the output is computed at every position of the padded row
(the extra positions are cropped), which turns each tap's rows into one long contiguous run
when the stride is 1, and both the im2col copy and its transpose (col2im, one add per tap)
move long runs instead of short rows.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .common import HALF_TYPES


def _working(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float32) if array.dtype in HALF_TYPES else array


class _Layout:
    """Where a convolution's padded input (N, C, *sizes) lies flat per plane, and where each
    kernel tap's window and each output position fall in it."""

    def __init__(self, sizes, kernel, stride, padding, dilation):
        self.sizes = tuple(sizes)
        self.padding = [tuple(p) for p in padding]  # (before, after) per spatial dimension
        self.padded = [size + before + after for size, (before, after) in zip(sizes, self.padding)]
        self.kernel, self.stride, self.dilation = tuple(kernel), tuple(stride), tuple(dilation)
        # Output sizes; the last one runs across the whole padded row (``extended``).
        self.out = [(p - d * (k - 1) - 1) // s + 1 for p, k, s, d in zip(self.padded, kernel, stride, dilation)]
        self.extended = -(-self.padded[-1] // stride[-1])
        self.grid = (*self.out[:-1], self.extended)
        self.length = math.prod(self.padded)
        # The last window of the last row reads past the plane by the kernel's extent in the last
        # dimension: zeros there.
        self.flat_length = self.length + (kernel[-1] - 1) * dilation[-1]
        row = [math.prod(self.padded[i + 1:]) for i in range(len(self.padded))]
        self.tap_steps = [d * r for d, r in zip(dilation, row)]
        self.out_steps = [s * r for s, r in zip(stride, row)]

    def buffer(self, planes: tuple[int, int], dtype) -> tuple[np.ndarray, np.ndarray]:
        """A zeroed flat buffer (N, C, flat_length) and the padded planes (N, C, *padded) in it."""
        flat = np.zeros((*planes, self.flat_length), dtype)
        return flat, np.reshape(flat[..., :self.length], (*planes, *self.padded), copy=False)

    def inner(self):
        """The index of the unpadded input in the padded planes."""
        return (slice(None), slice(None), *(slice(before, before + size)
                                            for (before, _), size in zip(self.padding, self.sizes)))

    def windows(self, flat: np.ndarray) -> np.ndarray:
        """View (N, C, *kernel, *grid) of ``flat``: each tap's input at each output position."""
        item = flat.itemsize
        return as_strided(flat, (*flat.shape[:2], *self.kernel, *self.grid),
                          (*flat.strides[:2], *(t * item for t in self.tap_steps),
                           *(o * item for o in self.out_steps)), writeable=False)

    def clear_outside(self, array: np.ndarray, extent) -> None:
        """Zero ``array`` (..., *grid) at the grid positions past ``extent`` (the sizes of the
        gradient put on the grid): the cropped positions, which pair no output with an input.
        Their products with the zeros ``extend`` puts there would be NaN for a NaN or an
        infinity on the other side, and must not reach the sums."""
        leading = array.ndim - len(self.grid)
        for axis, (size, end) in enumerate(zip(self.grid, (min(e, o) for e, o in zip(extent, self.out)))):
            if end < size:
                array[(slice(None),) * (leading + axis) + (slice(end, None),)] = 0

    def extend(self, grad: np.ndarray, groups: int) -> np.ndarray:
        """``grad`` (N, O, *out) — or less, the rest zeros — on the grid, as (N, G, O / G, grid)."""
        extended = np.zeros((*grad.shape[:2], *self.grid), grad.dtype)
        extended[(slice(None), slice(None), *(slice(0, min(g, o)) for g, o in zip(grad.shape[2:], self.out)))] = \
            grad[(slice(None), slice(None), *(slice(0, o) for o in self.out))]
        return extended.reshape(grad.shape[0], groups, grad.shape[1] // groups, math.prod(self.grid))


def _columns(input: np.ndarray, layout: _Layout, groups: int, extent=None) -> np.ndarray:
    """im2col: (N, G, C / G * taps, grid) of the padded ``input``; zeros at the grid positions
    past ``extent`` (see ``_Layout.clear_outside``) when it is given."""
    flat, planes = layout.buffer(input.shape[:2], input.dtype)
    planes[layout.inner()] = input
    columns = np.ascontiguousarray(layout.windows(flat))
    if extent is not None:
        if not columns.flags.writeable:  # the windows were contiguous already: a view, not a copy
            columns = columns.copy()
        layout.clear_outside(columns, extent)
    taps = input.shape[1] // groups * math.prod(layout.kernel)
    return columns.reshape(input.shape[0], groups, taps, math.prod(layout.grid))


# The im2col columns of this many bytes at most are made at once: a batch is taken a few images
# at a time, so that each image's columns are multiplied while still in cache, and no
# batch-sized temporary (tens of MB for an MNIST-sized CNN) is made and paged in. Each image's
# product is the same matrix product as over the whole batch (NumPy multiplies image by image),
# and the weight's gradient sums the images' products in the same order.
_CHUNK_BYTES = 1 << 21


def _batches(count: int, image_bytes: int):
    """Slices of a batch of ``count`` images of ``image_bytes`` of columns each, in order."""
    size = max(1, _CHUNK_BYTES // max(image_bytes, 1))
    return [slice(start, min(start + size, count)) for start in range(0, count, size)] or [slice(0, 0)]


def _column_bytes(layout: _Layout, channels: int, itemsize: int) -> int:
    return channels * math.prod(layout.kernel) * math.prod(layout.grid) * itemsize


def _correlate(input: np.ndarray, weight: np.ndarray, stride, padding, dilation, groups: int,
               bias: np.ndarray | None = None) -> np.ndarray:
    """The plain (cross-correlating) convolution of a batched ``input`` (N, C, *S) with ``weight``
    (O, C / groups, *K), plus ``bias`` (of the input's dtype) before the result is rounded to it;
    ``padding`` gives (before, after) per spatial dimension."""
    layout = _Layout(input.shape[2:], weight.shape[2:], stride, padding, dilation)
    kernels = _working(weight).reshape(groups, weight.shape[0] // groups, math.prod(weight.shape[1:]))
    working = _working(input)
    result = np.empty((input.shape[0], weight.shape[0], *layout.out), input.dtype)
    for part in _batches(input.shape[0], _column_bytes(layout, input.shape[1], working.itemsize)):
        product = np.matmul(kernels, _columns(working[part], layout, groups))
        product = product.reshape(-1, weight.shape[0], *layout.grid)[..., :layout.out[-1]]
        if bias is not None:
            product = product + _working(bias).reshape(-1, *(1,) * (weight.ndim - 2))
        result[part] = product
    return result


def _spread(grad: np.ndarray, weight: np.ndarray, sizes, stride, padding, dilation, groups: int,
            extended: np.ndarray | None = None, bias: np.ndarray | None = None,
            rounded: bool = False) -> np.ndarray:
    """The transpose of ``_correlate`` over inputs of spatial ``sizes``, applied to ``grad``
    (N, O, *out): each output's value spread back over its window (col2im). ``extended``:
    ``grad`` already on the layout's grid, when the caller has it; ``bias``: added before the
    result is rounded to ``grad``'s dtype. ``rounded``: float16 / bfloat16 done as PyTorch's slow
    transposed kernel does them, each window's share rounded to the dtype and the shares summed
    in it, tap after tap."""
    layout = _Layout(sizes, weight.shape[2:], stride, padding, dilation)
    kernels = _working(weight).reshape(groups, weight.shape[0] // groups, math.prod(weight.shape[1:]))
    channels = weight.shape[1] * groups
    if extended is None:
        extended = layout.extend(_working(grad), groups)
    result = np.empty((grad.shape[0], channels, *sizes), grad.dtype)
    for part in _batches(grad.shape[0], _column_bytes(layout, channels, extended.itemsize)):
        columns = np.matmul(kernels.swapaxes(1, 2), extended[part])
        columns = columns.reshape(-1, channels, math.prod(layout.kernel), *layout.grid)
        if rounded:
            columns = columns.astype(grad.dtype)
        layout.clear_outside(columns, grad.shape[2:])
        flat, planes = layout.buffer((columns.shape[0], channels), columns.dtype)
        item = flat.itemsize
        shape = (*flat.shape[:2], *layout.grid)
        strides = (*flat.strides[:2], *(o * item for o in layout.out_steps))
        # One add per kernel tap (not per pixel): its share of every window, where the window lies.
        for tap, position in enumerate(np.ndindex(*layout.kernel)):
            offset = sum(p * step for p, step in zip(position, layout.tap_steps))
            target = as_strided(flat[..., offset:], shape, strides)
            target += columns[:, :, tap]
        spread = planes[layout.inner()]
        if bias is not None:
            spread = spread + _working(bias).reshape(-1, *(1,) * (weight.ndim - 2))
        result[part] = spread
    return result


def _weight_product(input: np.ndarray, grad: np.ndarray, weight_shape, stride, padding, dilation,
                    groups: int, extended: np.ndarray | None = None) -> np.ndarray:
    """The weight's gradient of ``_correlate(input, weight)`` for the output gradient ``grad``
    (``extended``: as in ``_spread``)."""
    layout = _Layout(input.shape[2:], weight_shape[2:], stride, padding, dilation)
    working = _working(input)
    if extended is None:
        extended = layout.extend(_working(grad), groups)
    total = None
    for part in _batches(input.shape[0], _column_bytes(layout, input.shape[1], working.itemsize)):
        columns = _columns(working[part], layout, groups, grad.shape[2:])
        products = np.matmul(extended[part], columns.swapaxes(2, 3))
        # the images' products summed one after another, as a reduction over the batch adds them
        for product in products:
            total = product.copy() if total is None else np.add(total, product, out=total)
    if total is None:  # an empty batch
        total = np.zeros((groups, weight_shape[0] // groups, math.prod(weight_shape[1:])), extended.dtype)
    return total.reshape(weight_shape).astype(input.dtype, copy=False)
