"""Convolutions: ``convolution`` (ATen's general op, plain or transposed), and ``conv1d`` /
``conv2d``, which PyTorch exposes both as ``torch.conv2d`` and as ``torch.nn.functional.conv2d``
(one builtin: ``F.conv2d is torch.conv2d``).

The kernels gather each output position's window with ``sliding_window_view`` and contract it
with the weight by ``tensordot`` (im2col without the copy loop). A transposed convolution is
the plain one run on the input spread out by the stride, with the weight flipped.

Every gradient is written with ``convolution`` itself, so it is differentiable again: the
input's gradient of a convolution is the transposed convolution of ``grad`` with the same
weight (and the other way round), and the weight's gradient is a convolution of the input
with ``grad`` as its kernel (batch and channels swapped, stride and dilation swapped).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import _dtype as dt
from ._common import array_type_name, cpp_type_name, not_implemented, public
from ._common import conjugate as _conj
from ._registry import Sample, TensorSpec, op
from .activation import _HALF_TYPES

if TYPE_CHECKING:
    from .._tensor import Tensor

# float16 and bfloat16 are computed in float32 and cast back: NumPy's contractions of them are
# slow or missing.


# -- argument checks -----------------------------------------------------------------------------

def _expand(name: str, value, spatial: int) -> tuple[int, ...]:
    """An int or a list of ints (one, or one per spatial dimension) as one int per dimension."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * spatial
    values = [int(v) for v in value]
    if len(values) == 1:
        return tuple(values) * spatial
    if len(values) != spatial:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {spatial} values to match "
                           f"the convolution dimensions, but got {name}={values}")
    return tuple(values)


def _check_arguments(input: np.ndarray, weight: np.ndarray, bias, stride, padding, dilation, groups: int,
                     transposed: bool = False, output_padding=(0,), allow_complex: bool = True) -> tuple:
    """PyTorch's checks of a batched convolution's arguments, in its order; the stride, padding,
    dilation and output padding as one int per spatial dimension."""
    spatial = weight.ndim - 2
    stride = _expand("stride", stride, spatial)
    padding = _expand("padding", padding, spatial)
    dilation = _expand("dilation", dilation, spatial)
    output_padding = _expand("output_padding", output_padding, spatial)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    if transposed:
        if input.shape[1] != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                               f"{list(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
                               f"channels instead")
        if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
            # PyTorch runs a 1D convolution as a 2D one of height 1, and names each dimension.
            lists = ((0, *output_padding), (1, *stride), (1, *dilation)) if spatial == 1 else \
                (output_padding, stride, dilation)
            names = ("depth", "height", "width")[-len(lists[0]):]
            described = " ".join(f"{kind}_{dim}: {value}" for kind, values in
                                 zip(("output_padding", "stride", "dilation"), lists)
                                 for dim, value in zip(names, values))
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {described}")
        out_channels = weight.shape[1] * groups
        sizes = [(size - 1) * s - 2 * p + d * (k - 1) + 1 + o for size, s, p, d, k, o in
                 zip(input.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)]
        if any(size < 1 for size in sizes):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). "
                               f"Calculated output size per channel: ({' x '.join(map(str, sizes))}). Output size "
                               f"is too small")
    else:
        if input.shape[1] != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                               f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                               f"{input.shape[1]} channels instead")
        padded = [size + 2 * p for size, p in zip(input.shape[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
        if any(k > size for k, size in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
                               f"input size")
        out_channels = weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        given = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{given} of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {array_type_name(input)} but found {array_type_name(weight)}")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({cpp_type_name(dt.NP_TO_DTYPE[input.dtype])}) and bias type "
                           f"({cpp_type_name(dt.NP_TO_DTYPE[bias.dtype])}) should be the same")
    if input.dtype == np.bool_ or (not allow_complex and input.dtype.kind == "c"):
        raise not_implemented("slow_conv_transpose2d_out_cpu" if transposed else "slow_conv2d_cpu",
                              dt.NP_TO_DTYPE[input.dtype])
    return stride, padding, dilation, output_padding


# -- kernels --------------------------------------------------------------------------------------

def _correlate(input: np.ndarray, weight: np.ndarray, stride, padding, dilation, groups: int) -> np.ndarray:
    """The plain (cross-correlating) convolution of a batched ``input`` (N, C, *S) with ``weight``
    (O, C / groups, *K). ``padding`` gives (before, after) per spatial dimension; a negative
    amount crops instead."""
    spatial = weight.ndim - 2
    work = input.astype(np.float32) if input.dtype in _HALF_TYPES else input
    kernel = weight.astype(np.float32) if weight.dtype in _HALF_TYPES else weight
    crop = tuple(slice(max(-before, 0), work.shape[2 + i] - max(-after, 0))
                 for i, (before, after) in enumerate(padding))
    work = work[(slice(None), slice(None), *crop)]
    pads = [(0, 0), (0, 0), *((max(before, 0), max(after, 0)) for before, after in padding)]
    if any(p != (0, 0) for p in pads):
        work = np.pad(work, pads)
    extent = tuple(d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation))
    axes = tuple(range(2, 2 + spatial))
    windows = sliding_window_view(work, extent, axis=axes)
    windows = windows[(slice(None), slice(None), *(slice(None, None, s) for s in stride),
                       *(slice(None, None, d) for d in dilation))]
    batch, channels = input.shape[:2]
    out_sizes = windows.shape[2:2 + spatial]
    if groups == 1:
        # (N, C, *out, *K) . (O, C, *K) -> (N, *out, O)
        product = np.tensordot(windows, kernel, axes=([1, *range(2 + spatial, 2 + 2 * spatial)],
                                                      [1, *range(2, 2 + spatial)]))
        result = np.moveaxis(product, -1, 1)
    else:
        grouped = windows.reshape(batch, groups, channels // groups, *out_sizes, *weight.shape[2:])
        kernels = kernel.reshape(groups, weight.shape[0] // groups, *kernel.shape[1:])
        letters = "hijklm"[:spatial]
        taps = "pqrstu"[:spatial]
        result = np.einsum(f"ngc{letters}{taps},goc{taps}->ngo{letters}", grouped, kernels, optimize=True)
        result = result.reshape(batch, weight.shape[0], *out_sizes)
    return np.ascontiguousarray(result, dtype=input.dtype)


def _transposed(input: np.ndarray, weight: np.ndarray, stride, padding, dilation, output_padding,
                groups: int) -> np.ndarray:
    """The transposed convolution of a batched ``input`` (N, C, *S) with ``weight``
    (C, O / groups, *K): the input spread out by the stride, correlated with the flipped weight."""
    spatial = weight.ndim - 2
    spread = np.zeros((*input.shape[:2], *((size - 1) * s + 1 if size else 0
                                           for size, s in zip(input.shape[2:], stride))), input.dtype)
    spread[(slice(None), slice(None), *(slice(None, None, s) for s in stride))] = input
    channels, per_group = weight.shape[:2]
    flipped = weight.reshape(groups, channels // groups, per_group, *weight.shape[2:]).swapaxes(1, 2)
    flipped = flipped.reshape(groups * per_group, channels // groups, *weight.shape[2:])
    flipped = flipped[(slice(None), slice(None), *(slice(None, None, -1),) * spatial)]
    pads = [(d * (k - 1) - p, d * (k - 1) - p + o)
            for k, d, p, o in zip(weight.shape[2:], dilation, padding, output_padding)]
    return _correlate(spread, flipped, (1,) * spatial, pads, dilation, groups)


def _run(input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0,
         allow_complex=True):
    """A checked convolution of a batched input (``padding`` symmetric) plus ``bias``."""
    stride, padding, dilation, output_padding = _check_arguments(input, weight, bias, stride, padding, dilation,
                                                                 groups, transposed, output_padding, allow_complex)
    if transposed:
        result = _transposed(input, weight, stride, padding, dilation, output_padding, groups)
    else:
        result = _correlate(input, weight, stride, [(p, p) for p in padding], dilation, groups)
    if bias is not None:
        result += bias.reshape(-1, *(1,) * (weight.ndim - 2))
    return result


# -- gradients ------------------------------------------------------------------------------------

def _convolve(input, weight, *arguments):
    """``convolution(input, weight, None, *arguments)``; complex operands (which it refuses, as
    PyTorch's does) as four real convolutions, as PyTorch's conv2d splits them."""
    convolution = public("convolution")
    if not (input.is_complex() or weight.is_complex()):
        return convolution(input, weight, None, *arguments)
    a, b, c, d = input.real, input.imag, weight.real, weight.imag
    return public("complex")(convolution(a, c, None, *arguments) - convolution(b, d, None, *arguments),
                             convolution(a, d, None, *arguments) + convolution(b, c, None, *arguments))


def _trim_unreached(images, padding: list, out_sizes, kernel_sizes, stride, dilation):
    """``images`` without the padded positions at the end that no forward window reached (a
    stride that does not tile the input leaves some), padded explicitly where that makes the
    padding uneven (``padding`` is updated). Else the weight-gradient convolution computes
    extra rows that are cropped away: wasted work, and FLOPs that PyTorch does not count."""
    for dim, (size, pad, out, k, s, d) in enumerate(zip(images.shape[2:], list(padding), out_sizes, kernel_sizes,
                                                         stride, dilation)):
        unreached = size + 2 * pad - (s * (out - 1) + d * (k - 1) + 1)
        if unreached < d:  # no extra row
            continue
        axis = 2 + dim
        kept = size - max(unreached - pad, 0)
        if kept < size:
            images = images.narrow(axis, 0, kept)
        right = max(pad - unreached, 0)
        parts = [images]
        for width, at_end in ((pad, False), (right, True)):
            if width:
                zeros = images.new_zeros((*images.shape[:axis], width, *images.shape[axis + 1:]))
                parts = parts + [zeros] if at_end else [zeros] + parts
        images = public("cat")(parts, axis) if len(parts) > 1 else images
        padding[dim] = 0
    return images


def _weight_gradient(input, grad_output, weight_shape, stride, padding, dilation, groups):
    """d <convolution(input, w), grad_output> / d w, as a convolution of ``input`` (channels as
    the batch) with ``grad_output`` (batch as the channels)."""
    spatial = len(weight_shape) - 2
    batch, channels = input.shape[:2]
    per_group, out_channels = channels // groups, weight_shape[0]
    sizes, out_sizes = tuple(input.shape[2:]), tuple(grad_output.shape[2:])
    moved = range(3, 3 + spatial)
    images = input.reshape(batch, groups, per_group, *sizes).permute(2, 1, 0, *moved)
    images = images.reshape(per_group, groups * batch, *sizes)
    kernels = grad_output.reshape(batch, groups, out_channels // groups, *out_sizes).permute(1, 2, 0, *moved)
    kernels = kernels.reshape(out_channels, batch, *out_sizes)
    padding = list(padding)
    images = _trim_unreached(images, padding, out_sizes, weight_shape[2:], stride, dilation)
    result = _convolve(images, kernels, list(dilation), padding, list(stride), False,
                         [0] * spatial, groups)
    result = result[(slice(None), slice(None), *(slice(0, k) for k in weight_shape[2:]))]
    return result.permute(1, 0, *range(2, 2 + spatial))


def _gradients(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
               needs_input_grad):
    """The gradients of a batched convolution (symmetric ``padding``, one int per dimension)."""
    spatial = weight.dim() - 2
    sizes = tuple(input.shape[2:])
    if grad.is_complex():  # complex operands' gradients use their conjugates
        input, weight = _conj(input), _conj(weight)
    grad_input = grad_weight = grad_bias = None
    if not transposed:
        if needs_input_grad[0]:
            extra = [(size + 2 * p - d * (k - 1) - 1) % s
                     for size, p, d, k, s in zip(sizes, padding, dilation, weight.shape[2:], stride)]
            grad_input = _convolve(grad, weight, list(stride), list(padding), list(dilation), True, extra,
                                     groups)
        if needs_input_grad[1]:
            grad_weight = _weight_gradient(input, grad, tuple(weight.shape), stride, padding, dilation, groups)
    else:
        if needs_input_grad[0]:
            grad_input = _convolve(grad, weight, list(stride), list(padding), list(dilation), False,
                                     [0] * spatial, groups)
            grad_input = grad_input[(slice(None), slice(None), *(slice(0, size) for size in sizes))]
        if needs_input_grad[1]:
            grad_weight = _weight_gradient(grad, input, tuple(weight.shape), stride, padding, dilation, groups)
    if len(needs_input_grad) > 2 and needs_input_grad[2]:
        grad_bias = grad.sum([0, *range(2, 2 + spatial)])
    return grad_input, grad_weight, grad_bias


def _convolution_grad(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                      needs_input_grad):
    spatial = weight.dim() - 2
    return _gradients(grad, input, weight, _expand("stride", stride, spatial), _expand("padding", padding, spatial),
                      _expand("dilation", dilation, spatial), transposed,
                      _expand("output_padding", output_padding, spatial), groups, needs_input_grad)


@op(grad=_convolution_grad, samples=(
    Sample((TensorSpec((1, 2, 4, 4)), TensorSpec((3, 2, 2, 2)), TensorSpec((3,)), [1, 1], [0, 0], [1, 1], False,
            [0, 0], 1)),
    Sample((TensorSpec((2, 2, 5), "float64"), TensorSpec((2, 1, 3), "float64"), None, [2], [1], [1], False, [0],
            2)),
    Sample((TensorSpec((1, 2, 3, 3), "float64"), TensorSpec((2, 2, 2, 2), "float64"), TensorSpec((4,), "float64"),
            [2, 2], [1, 0], [1, 1], True, [1, 0], 2)),
    Sample((TensorSpec((1, 2, 4)), TensorSpec((2, 3, 2)), None, [1], [1], [2], True, [1], 1)),
    Sample((TensorSpec((1, 2, 4, 4), "int64", -3, 3), TensorSpec((1, 2, 2, 2), "int64", -3, 3), None, [1, 1], [1, 1],
            [1, 1], False, [0, 0], 1))))
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int], padding: list[int],
                dilation: list[int], transposed: bool, output_padding: list[int], groups: int) -> Tensor:
    """The convolution of a batched ``input`` (N, C, *spatial) with ``weight`` — (O, C / groups,
    *kernel), or (C, O / groups, *kernel) when ``transposed`` — plus ``bias``: ATen's general
    op behind ``conv1d``, ``conv2d`` and the transposed convolutions.

    >>> import tensormodes as tm
    >>> tm.convolution(tm.ones(1, 1, 3), tm.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1).tolist()
    [[[2.0, 2.0]]]
    """
    # PyTorch's general op has no complex kernel (conv1d and conv2d split complex operands).
    return _run(input, weight, bias, stride, padding, dilation, groups, transposed, output_padding,
                allow_complex=False)


# -- conv1d / conv2d ------------------------------------------------------------------------------

def _as_list(value, spatial: int):
    """An int argument of conv1d / conv2d as one per dimension of the function (a list is left
    for ``convolution``'s check against the weight, as PyTorch's argument parser does)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)] * spatial
    return list(value)


def _resolve_padding(padding, weight_shape, stride, dilation) -> list[tuple[int, int]]:
    """``padding`` (ints or 'valid' / 'same') as (before, after) per spatial dimension. PyTorch's
    'same' pads ``dilation * (kernel - 1)`` in all, the odd one after."""
    spatial = len(weight_shape) - 2
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * spatial
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in _expand("stride", stride, spatial)):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(weight_shape[2:], _expand("dilation", dilation, spatial))]
        return [(total // 2, total - total // 2) for total in totals]
    return [(p, p) for p in _expand("padding", padding, spatial)]


def _conv_nd(name: str, spatial: int, input, weight, bias, stride, padding, dilation, groups) -> np.ndarray:
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, but "
                           f"got input of size: {list(input.shape)}")
    unbatched = input.ndim == spatial + 1
    batched = input[None] if unbatched else input
    stride, dilation = _as_list(stride, spatial), _as_list(dilation, spatial)
    if not isinstance(padding, str):
        result = _run(batched, weight, bias, stride, _as_list(padding, spatial), dilation, groups)
        return result[0] if unbatched else result
    sides = _resolve_padding(padding, weight.shape, stride, dilation)
    before = [b for b, _ in sides]
    # The odd extra padding of 'same' is added to the input; the rest is the convolution's own.
    extra = [(0, 0), (0, 0), *((0, a - b) for b, a in sides)]
    result = _run(np.pad(batched, extra) if any(a != b for b, a in sides) else batched, weight, bias, stride,
                  before, dilation, groups)
    return result[0] if unbatched else result


def _conv_nd_grad(grad, input, weight, stride, padding, dilation, groups, needs_input_grad):
    spatial = weight.dim() - 2
    unbatched = input.dim() == spatial + 1
    if unbatched:
        grad, input = grad.unsqueeze(0), input.unsqueeze(0)
    sides = _resolve_padding(padding, tuple(weight.shape), stride, dilation)
    before = [b for b, _ in sides]
    sizes = tuple(input.shape[2:])
    if any(a != b for b, a in sides):
        # The odd extra padding of 'same', as zeros after the input (cropped off its gradient).
        for dim, (b, a) in enumerate(sides):
            if a > b:
                zeros = input.new_zeros((*input.shape[:2 + dim], a - b, *input.shape[3 + dim:]))
                input = public("cat")([input, zeros], 2 + dim)
    grad_input, grad_weight, grad_bias = _gradients(
        grad, input, weight, _expand("stride", stride, spatial), before, _expand("dilation", dilation, spatial),
        False, [0] * spatial, groups, needs_input_grad)
    if grad_input is not None:
        grad_input = grad_input[(slice(None), slice(None), *(slice(0, size) for size in sizes))]
        if unbatched:
            grad_input = grad_input.squeeze(0)
    return grad_input, grad_weight, grad_bias


@op(grad=_conv_nd_grad, samples=(
    Sample((TensorSpec((2, 2, 5)), TensorSpec((3, 2, 3)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 6), "float64"), TensorSpec((2, 2, 2), "float64")), {"stride": 2, "padding": 1}),
    Sample((TensorSpec((1, 4, 6), "float64"), TensorSpec((4, 2, 3), "float64"), TensorSpec((4,), "float64")),
           {"padding": "same", "dilation": 2, "groups": 2}),
    Sample((TensorSpec((1, 2, 5)), TensorSpec((2, 2, 3))), {"padding": "same"}),
    Sample((TensorSpec((1, 2, 5)), TensorSpec((2, 2, 3))), {"padding": "valid", "dilation": [2]}),
    Sample((TensorSpec((2, 1, 6), "int32", -3, 3), TensorSpec((2, 1, 2), "int32", -3, 3)), {"stride": [3]})))
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """Applies a 1D convolution over an input signal composed of several input planes:
    ``input`` (N, C, L) or unbatched (C, L), ``weight`` (O, C / groups, K); ``padding`` is
    ints or ``'valid'`` / ``'same'``.

    >>> import tensormodes as tm
    >>> tm.conv1d(tm.tensor([[[1.0, 2.0, 3.0]]]), tm.tensor([[[1.0, -1.0]]])).tolist()
    [[[-1.0, -1.0]]]
    """
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@op(grad=_conv_nd_grad, samples=(
    Sample((TensorSpec((1, 2, 4, 4)), TensorSpec((3, 2, 2, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 3, 3), "float64"), TensorSpec((2, 2, 2, 2), "float64")), {"padding": (1, 0)}),
    Sample((TensorSpec((1, 4, 4, 3), "float64"), TensorSpec((2, 2, 2, 2), "float64"), TensorSpec((2,), "float64")),
           {"stride": (2, 1), "padding": 1, "groups": 2}),
    Sample((TensorSpec((1, 1, 4, 4), "float64"), TensorSpec((2, 1, 3, 3), "float64")),
           {"padding": "same", "dilation": (1, 2)}),
    Sample((TensorSpec((1, 1, 5, 5)), TensorSpec((1, 1, 2, 2))), {"dilation": 2, "stride": 2}),
    Sample((TensorSpec((1, 2, 4, 4), "float16"), TensorSpec((1, 2, 2, 2), "float16")), {"padding": "valid"}),
    Sample((TensorSpec((2, 3, 8, 8)), TensorSpec((4, 3, 3, 3)), TensorSpec((4,)))),
    Sample((TensorSpec((1, 2, 4, 4), "int64", -3, 3), TensorSpec((1, 2, 2, 2), "int64", -3, 3)))))
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """Applies a 2D convolution over an input image composed of several input planes:
    ``input`` (N, C, H, W) or unbatched (C, H, W), ``weight`` (O, C / groups, kH, kW);
    ``padding`` is ints or ``'valid'`` / ``'same'``.

    >>> import tensormodes as tm
    >>> tm.conv2d(tm.ones(1, 1, 3, 3), tm.ones(1, 1, 2, 2), tm.tensor([0.5])).tolist()
    [[[[4.5, 4.5], [4.5, 4.5]]]]
    """
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(name: str, spatial: int, input, weight, bias, stride, padding, output_padding, groups,
                       dilation) -> np.ndarray:
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, but "
                           f"got input of size: {list(input.shape)}")
    unbatched = input.ndim == spatial + 1
    result = _run(input[None] if unbatched else input, weight, bias, _as_list(stride, spatial),
                  _as_list(padding, spatial), _as_list(dilation, spatial), groups, True,
                  _as_list(output_padding, spatial))
    return result[0] if unbatched else result


def _conv_transpose_nd_grad(grad, input, weight, stride, padding, output_padding, groups, dilation,
                            needs_input_grad):
    spatial = weight.dim() - 2
    unbatched = input.dim() == spatial + 1
    if unbatched:
        grad, input = grad.unsqueeze(0), input.unsqueeze(0)
    grad_input, grad_weight, grad_bias = _gradients(
        grad, input, weight, _expand("stride", stride, spatial), _expand("padding", padding, spatial),
        _expand("dilation", dilation, spatial), True, _expand("output_padding", output_padding, spatial), groups,
        needs_input_grad)
    if grad_input is not None and unbatched:
        grad_input = grad_input.squeeze(0)
    return grad_input, grad_weight, grad_bias


@op(grad=_conv_transpose_nd_grad, samples=(
    Sample((TensorSpec((2, 2, 4)), TensorSpec((2, 3, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 3), "float64"), TensorSpec((2, 2, 3), "float64")),
           {"stride": 2, "padding": 1, "output_padding": 1}),
    Sample((TensorSpec((1, 4, 3), "float64"), TensorSpec((4, 1, 2), "float64"), TensorSpec((2,), "float64"), 1, 0, 1,
            2, 2)),
    Sample((TensorSpec((1, 2, 3), "int64", -3, 3), TensorSpec((2, 1, 2), "int64", -3, 3)), {"stride": [3]})))
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Applies a 1D transposed convolution operator over an input signal composed of several input
    planes (the gradient of ``conv1d`` with respect to its input): ``input`` (N, C, L) or (C, L),
    ``weight`` (C, O / groups, K).

    >>> import tensormodes as tm
    >>> tm.conv_transpose1d(tm.tensor([[[1.0, 2.0]]]), tm.tensor([[[1.0, 10.0]]])).tolist()
    [[[1.0, 12.0, 20.0]]]
    """
    return _conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@op(grad=_conv_transpose_nd_grad, samples=(
    Sample((TensorSpec((1, 2, 3, 3)), TensorSpec((2, 3, 2, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 2, 3), "float64"), TensorSpec((2, 1, 2, 2), "float64")),
           {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0)}),
    Sample((TensorSpec((1, 4, 2, 3), "float64"), TensorSpec((4, 1, 2, 2), "float64"), TensorSpec((2,), "float64"),
            1, 1, 0, 2, (2, 1))),
    Sample((TensorSpec((2, 3, 8, 8)), TensorSpec((3, 4, 3, 3))), {"stride": 2, "padding": 1, "output_padding": 1}),
    Sample((TensorSpec((1, 1, 3, 3), "float16"), TensorSpec((1, 2, 2, 2), "float16")))))
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Applies a 2D transposed convolution operator over an input image composed of several input
    planes (the gradient of ``conv2d`` with respect to its input): ``input`` (N, C, H, W) or
    (C, H, W), ``weight`` (C, O / groups, kH, kW).

    >>> import tensormodes as tm
    >>> tm.conv_transpose2d(tm.ones(1, 1, 2, 2), tm.ones(1, 1, 2, 2)).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    return _conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


# -- pooling --------------------------------------------------------------------------------------

def _pair(name: str, value, default=None) -> tuple[int, int]:
    """max_pool2d's kernel_size / stride / padding / dilation as (height, width)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value), int(value)
    values = [int(v) for v in value]
    if not values and default is not None:
        return default
    if len(values) == 1:
        return values[0], values[0]
    if len(values) != 2:
        raise RuntimeError(_PAIR_ERRORS[name])
    return values[0], values[1]


_PAIR_ERRORS = {
    "kernel_size": "max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
    "stride": "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
    "padding": "max_pool2d: padding must either be a single int, or a tuple of two ints",
    "dilation": "max_pool2d: dilation must be either a single int, or a tuple of two ints",
}


def _pooled_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size: windows that start in the input or its left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    count = span // stride + 1
    if ceil_mode and (count - 1) * stride >= size + padding:
        count -= 1
    return count


def _max_pool2d_grad(grad, input_shape, indices):
    # Each output's gradient goes to the input element it took (PyTorch's saved indices).
    outputs = grad.shape[-2] * grad.shape[-1]  # not -1 in reshape: an empty batch leaves it ambiguous
    planes = grad.reshape(*input_shape[:-2], outputs)
    elements = input_shape[-2] * input_shape[-1]
    # One slot more: a window of padding alone (its maximum is -inf) points there, as in PyTorch
    # its gradient goes nowhere.
    flat = grad.new_zeros((*input_shape[:-2], elements + 1))
    flat = flat.scatter_add(-1, indices.reshape(*input_shape[:-2], outputs), planes)
    return flat[..., :elements].reshape(input_shape)


@op(grad=_max_pool2d_grad, saves=("indices",), samples=(
    Sample((TensorSpec((1, 2, 4, 4)), 2)),
    Sample((TensorSpec((2, 5, 5), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((1, 1, 5, 6), "float64"), (2, 3), (1, 2), (1, 0), (2, 1))),
    Sample((TensorSpec((1, 2, 5, 5)), 2), {"stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True}),
    Sample((TensorSpec((1, 1, 4, 4), "int64", -5, 5), 2, 1)),
    Sample((TensorSpec((1, 2, 4, 4), "bfloat16"), [2], [])),
    Sample((TensorSpec((2, 3, 16, 16)), 3, 2, 1))))
def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """The largest element of each ``kernel_size`` window of ``input`` (N, C, H, W) or (C, H, W),
    the windows ``stride`` apart (by default ``kernel_size``); padding counts as ``-inf``. A
    window's first largest element wins (NaN counts as largest).

    >>> import tensormodes as tm
    >>> tm.max_pool2d(tm.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    kernel = _pair("kernel_size", kernel_size)
    step = _pair("stride", stride, default=kernel)
    pad = _pair("padding", padding)
    spread = _pair("dilation", dilation)
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
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if 0 in input.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(input.shape)}")
    if input.dtype == np.bool_ or input.dtype.kind == "c":
        raise not_implemented("max_pool2d", dt.NP_TO_DTYPE[input.dtype])
    sizes = input.shape[-2:]
    out = [_pooled_size(*args, ceil_mode) for args in zip(sizes, kernel, step, pad, spread)]
    if min(out) < 1:
        channels = input.shape[-3]
        raise RuntimeError(f"Given input size: ({channels}x{sizes[0]}x{sizes[1]}). Calculated output size: "
                           f"({channels}x{out[0]}x{out[1]}). Output size is too small")
    return _max_pool_planes(input, kernel, step, pad, spread, out)


def _max_pool_planes(input: np.ndarray, kernel, step, pad, spread, out) -> tuple[np.ndarray, np.ndarray]:
    """The maxima of ``input``'s windows over its last two dimensions, and where they are (flat
    positions in each plane; one past the plane for a window of padding alone)."""
    sizes = input.shape[-2:]
    # Compared as float32 (exact for the narrow floats); padded with the lowest value, which
    # never wins: every window holds at least one input element.
    work = input.astype(np.float32) if input.dtype in _HALF_TYPES else input
    lowest = -np.inf if work.dtype.kind == "f" else np.iinfo(work.dtype).min
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, spread)]
    after = [max((o - 1) * s + e - size - p, 0) for o, s, e, size, p in zip(out, step, extent, sizes, pad)]
    padded = np.pad(work, [(0, 0)] * (input.ndim - 2) + [(pad[0], after[0]), (pad[1], after[1])],
                    constant_values=lowest)
    windows = sliding_window_view(padded, extent, axis=(-2, -1))
    windows = windows[..., :(out[0] - 1) * step[0] + 1:step[0], :(out[1] - 1) * step[1] + 1:step[1],
                      ::spread[0], ::spread[1]]
    flat = windows.reshape(*windows.shape[:-2], kernel[0] * kernel[1])
    chosen = np.argmax(flat, axis=-1)
    result = np.take_along_axis(flat, chosen[..., None], axis=-1)[..., 0].astype(input.dtype)
    rows = np.arange(out[0])[:, None] * step[0] + (chosen // kernel[1]) * spread[0] - pad[0]
    columns = np.arange(out[1]) * step[1] + (chosen % kernel[1]) * spread[1] - pad[1]
    inside = (rows >= 0) & (rows < sizes[0]) & (columns >= 0) & (columns < sizes[1])
    return result, np.where(inside, rows * sizes[1] + columns, sizes[0] * sizes[1]).astype(np.int64)


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


def _max_pool1d_grad(grad, input_shape, indices):
    planes = (*input_shape[:-1], 1, input_shape[-1])
    return _max_pool2d_grad(grad.unsqueeze(-2), planes, indices.unsqueeze(-2)).squeeze(-2)


@op(grad=_max_pool1d_grad, saves=("indices",), samples=(
    Sample((TensorSpec((1, 2, 6)), 2)),
    Sample((TensorSpec((2, 7), "float64"), 3, 2, 1), {"ceil_mode": True}),
    Sample((TensorSpec((2, 1, 8), "float64"), [2], [], 1, 3)),
    Sample((TensorSpec((1, 2, 5), "bfloat16"), 2, 1))))
def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """The largest element of each ``kernel_size`` window of ``input`` (N, C, L) or (C, L), the
    windows ``stride`` apart (by default ``kernel_size``); padding counts as ``-inf``. A window's
    first largest element wins (NaN counts as largest).

    >>> import tensormodes as tm
    >>> tm.max_pool1d(tm.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
    [[3.0, 2.0]]
    """
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
    if input.dtype.kind not in "f" and input.dtype not in _HALF_TYPES:
        raise not_implemented("max_pool1d_impl", dt.NP_TO_DTYPE[input.dtype])
    result, indices = _max_pool_planes(input[..., None, :], (1, kernel), (1, step), (0, pad), (1, spread), (1, size))
    return result[..., 0, :], indices[..., 0, :]
