"""Rearrangements of channels and pixels: ``pixel_shuffle``, ``pixel_unshuffle``,
``channel_shuffle`` and ``native_channel_shuffle`` (``nn.functional`` re-exports them, as PyTorch's
``F.pixel_shuffle`` is ``torch.pixel_shuffle``).

Each returns a new contiguous tensor (not a view), as PyTorch's kernels do, and its gradient
is the inverse rearrangement of the output's gradient.
"""

from __future__ import annotations

import math

import numpy as np

from .._meta_array import MetaArray
from .common import no_derivative, ops
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op


def _pixel_shuffle_shape(input, upscale_factor: int) -> tuple[int, ...]:
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if upscale_factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {upscale_factor}")
    *batch, channels, height, width = input.shape
    square = upscale_factor * upscale_factor
    if channels % square:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={channels} is not divisible by {square}")
    return (*batch, channels // square, height * upscale_factor, width * upscale_factor)


def _pixel_unshuffle_shape(input, downscale_factor: int) -> tuple[int, ...]:
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if downscale_factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {downscale_factor}")
    *batch, channels, height, width = input.shape
    if height % downscale_factor:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                           f"{height} is not divisible by {downscale_factor}")
    if width % downscale_factor:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                           f"{width} is not divisible by {downscale_factor}")
    if not math.prod(input.shape):
        return tuple(input.shape)  # PyTorch's CPU kernel returns an empty input's copy, unshuffled
    return (*batch, channels * downscale_factor * downscale_factor, height // downscale_factor,
            width // downscale_factor)


def _pixel_shuffle_grad(grad, upscale_factor):
    return ops.pixel_unshuffle(grad, upscale_factor)


_IMAGES = TensorSpec((2, 8, 3, 2), "float32")
_SHUFFLE_ERRORS = (Sample((TensorSpec((4, 2)), 2)), Sample((TensorSpec((1, 3, 2, 2)), 2)),
                   Sample((TensorSpec((1, 4, 2, 2)), 0)))


def _pixel_shuffle_meta(input, upscale_factor):
    return MetaArray(_pixel_shuffle_shape(input, upscale_factor), input.dtype)


def _pixel_unshuffle_meta(input, downscale_factor):
    return MetaArray(_pixel_unshuffle_shape(input, downscale_factor), input.dtype)


@op(grad=_pixel_shuffle_grad, meta=rule(_pixel_shuffle_meta),
    samples=(Sample((_IMAGES, 2)), Sample((TensorSpec((4, 3, 2), "float64"), 1)),
             Sample((TensorSpec((2, 1, 9, 1, 2), "int64"), 3)), Sample((TensorSpec((0, 4, 2, 2), "float16"), 2)),
             Sample((TensorSpec((1, 4, 2, 1), "bfloat16"), 2))),
    errors=_SHUFFLE_ERRORS)
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearranges a tensor of shape ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``, ``r``
    the ``upscale_factor``.

    >>> import tensormodes as tm
    >>> tm.pixel_shuffle(tm.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    shape = _pixel_shuffle_shape(input, upscale_factor)
    *batch, channels, height, width = input.shape
    r = upscale_factor
    split = input.reshape(*batch, channels // (r * r), r, r, height, width)
    n = len(batch)
    order = (*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(split.transpose(order)).reshape(shape)


def _pixel_unshuffle_grad(grad, downscale_factor):
    return ops.pixel_shuffle(grad, downscale_factor)


@op(grad=_pixel_unshuffle_grad, meta=rule(_pixel_unshuffle_meta),
    samples=(Sample((TensorSpec((2, 2, 4, 6), "float32"), 2)), Sample((TensorSpec((4, 3, 2), "float64"), 1)),
             Sample((TensorSpec((2, 1, 1, 6, 3), "int64"), 3)), Sample((TensorSpec((0, 1, 2, 2), "float16"), 2))),
    errors=(Sample((TensorSpec((4, 2)), 2)), Sample((TensorSpec((1, 1, 3, 2)), 2)),
            Sample((TensorSpec((1, 1, 4, 3)), 2)), Sample((TensorSpec((1, 1, 4, 4)), 0))))
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Reverses ``pixel_shuffle``: a tensor of shape ``(*, C, H * r, W * r)`` becomes
    ``(*, C * r**2, H, W)``, ``r`` the ``downscale_factor``.

    >>> import tensormodes as tm
    >>> tm.pixel_unshuffle(tm.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    shape = _pixel_unshuffle_shape(input, downscale_factor)
    if not input.size:
        return input.copy()
    *batch, channels, height, width = input.shape
    r = downscale_factor
    split = input.reshape(*batch, channels, height // r, r, width // r, r)
    n = len(batch)
    order = (*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(split.transpose(order)).reshape(shape)


def _check_channel_shuffle(input, groups: int) -> None:
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")


def _channel_shuffled(input: np.ndarray, groups: int) -> np.ndarray:
    _check_channel_shuffle(input, groups)
    batch, channels, *rest = input.shape
    split = input.reshape(batch, groups, channels // groups, *rest)
    return np.ascontiguousarray(split.swapaxes(1, 2)).reshape(input.shape)


def _channel_shuffle_meta(input, groups):
    _check_channel_shuffle(input, groups)
    return MetaArray(input.shape, input.dtype)


def _channel_shuffle_grad(grad, input_shape, groups):
    # The inverse permutation is a shuffle into channels / groups groups.
    return ops.channel_shuffle(grad, input_shape[1] // groups if groups else groups)


_CHANNEL_SAMPLES = (Sample((TensorSpec((2, 6, 3), "float32"), 2)), Sample((TensorSpec((1, 6, 2, 2), "float64"), 3)),
                    Sample((TensorSpec((2, 4, 1, 2, 1), "int64"), 4)), Sample((TensorSpec((0, 4, 2), "float16"), 2)),
                    Sample((TensorSpec((1, 4, 2), "bfloat16"), 1)))
_CHANNEL_ERRORS = (Sample((TensorSpec((1, 4)), 2)), Sample((TensorSpec((1, 4, 2)), 3)),
                   Sample((TensorSpec((1, 4, 2)), 0)))


@op(grad=_channel_shuffle_grad, meta=rule(_channel_shuffle_meta), samples=_CHANNEL_SAMPLES, errors=_CHANNEL_ERRORS)
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Divides the channels (dimension 1) of ``input`` into ``groups`` groups and interleaves them:
    ``(N, g * k, *)`` read as ``(N, g, k, *)`` and rearranged as ``(N, k, g, *)``.

    >>> import tensormodes as tm
    >>> tm.channel_shuffle(tm.arange(6.0).reshape(1, 6, 1), 2).flatten()
    tensor([0., 3., 1., 4., 2., 5.])
    """
    return _channel_shuffled(input, groups)


@op(grad=no_derivative("native_channel_shuffle"), meta=rule(_channel_shuffle_meta),
    samples=_CHANNEL_SAMPLES[:2], errors=_CHANNEL_ERRORS)
def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The native kernel of ``channel_shuffle`` (PyTorch's ``torch.native_channel_shuffle``), which
    PyTorch records without a derivative: a backward through it raises.

    >>> import tensormodes as tm
    >>> tm.native_channel_shuffle(tm.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    return _channel_shuffled(input, groups)
