"""``nn.functional``'s pooling, unpooling, resampling (``interpolate``, ``unfold``, ``fold``),
channel dropout and ``embedding_bag``.

The functions PyTorch implements in C++ are ops of the table (``_ops/pooling.py``), bound here
by name; the Python-level ones are composites over table ops, so their gradients come from the
ops they call and handlers see ``F.max_pool2d`` itself.

>>> import tensormodes as tm, tensormodes.nn.functional as F
>>> values, indices = F.max_pool2d(tm.tensor([[[1., 3.], [4., 2.]]]), 2, return_indices=True)
>>> values.tolist(), indices.tolist()
([[[4.0]]], [[[2]]])
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ... import _dtype
from ..._ops.common import scalar_type_name
from ..._ops.registry import Tensor
from ._common import _function, _native, _public, _reexport
from .activation import relu
from .embedding import _renormalise_rows, _rows_to_renormalise

# Native in PyTorch: F.avg_pool1d is torch.avg_pool1d, F.avg_pool2d is torch._C._nn.avg_pool2d.
avg_pool1d = _reexport("avg_pool1d")
adaptive_avg_pool1d = _reexport("adaptive_avg_pool1d")
avg_pool2d = _native("avg_pool2d")
avg_pool3d = _native("avg_pool3d")


def _pair(value) -> list[int]:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)] * 2
    return [int(v) for v in value]


# -- max pooling ------------------------------------------------------------------------------------

@_public
def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """Applies a 1D max pooling over an input signal composed of several input planes: the
    maximum of each window of ``kernel_size`` along the last dimension (``stride`` defaults to
    the kernel size), with the positions of the maxima when ``return_indices``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_pool1d(tm.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[3.0, 2.0]]
    """
    stride = () if stride is None else stride
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _function("max_pool1d")(input, kernel_size, stride, padding, dilation, ceil_mode)


@_public
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                              return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` with the maxima's positions (whatever ``return_indices`` says),
    as PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> [t.shape for t in F.max_pool1d_with_indices(tm.zeros((1,) + (2,) * 1), 2)]
    [tensormodes.Size([1, 1]), tensormodes.Size([1, 1])]
    """
    stride = () if stride is None else stride
    return _function("max_pool1d_with_indices")(input, kernel_size, stride, padding, dilation, ceil_mode)


@_public
def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """Applies a 2D max pooling over an input signal composed of several input planes: the
    maximum of each ``kernel_size`` window over the last two dimensions (``stride`` defaults to
    the kernel size), with the maxima's flat positions in their planes when ``return_indices``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_pool2d(tm.tensor([[[1., 3.], [2., 0.]]]), 2).tolist()
    [[[3.0]]]
    """
    stride = () if stride is None else stride
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _function("max_pool2d")(input, kernel_size, stride, padding, dilation, ceil_mode)


@_public
def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                              return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` with the maxima's flat positions in their planes (whatever ``return_indices`` says),
    as PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> [t.shape for t in F.max_pool2d_with_indices(tm.zeros((1,) + (2,) * 2), 2)]
    [tensormodes.Size([1, 1, 1]), tensormodes.Size([1, 1, 1])]
    """
    stride = () if stride is None else stride
    return _function("_max_pool2d_with_indices")(input, kernel_size, stride, padding, dilation, ceil_mode)


@_public
def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """Applies a 3D max pooling over an input signal composed of several input planes: the
    maximum of each ``kernel_size`` window over the last three dimensions (``stride`` defaults to
    the kernel size), with the maxima's flat positions in their volumes when ``return_indices``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_pool3d(tm.arange(8.0).reshape(1, 2, 2, 2), 2).flatten().tolist()
    [7.0]
    """
    stride = () if stride is None else stride
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _function("max_pool3d")(input, kernel_size, stride, padding, dilation, ceil_mode)


@_public
def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                              return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` with the maxima's flat positions in their volumes (whatever ``return_indices`` says),
    as PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> [t.shape for t in F.max_pool3d_with_indices(tm.zeros((1,) + (2,) * 3), 2)]
    [tensormodes.Size([1, 1, 1, 1]), tensormodes.Size([1, 1, 1, 1])]
    """
    stride = () if stride is None else stride
    return _function("_max_pool3d_with_indices")(input, kernel_size, stride, padding, dilation, ceil_mode)


@_public
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Computes a partial inverse of ``max_pool2d``: each value of ``input`` placed at its
    ``indices`` (``max_pool2d(..., return_indices=True)``'s) in a zero plane of the size the
    pooling came from (or ``output_size``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_unpool2d(tm.tensor([[[4.0]]]), tm.tensor([[[2]]]), 2).tolist()
    [[[0.0, 0.0], [4.0, 0.0]]]
    """
    kernel = _pair(kernel_size)
    step = kernel if stride is None else _pair(stride)
    size = _unpool_output_size(input, kernel, step, _pair(padding), output_size)
    return _function("_max_unpool2d")(input, indices, size)


def _unpool_output_size(input: Tensor, kernel, step, pad, output_size) -> list[int]:
    """PyTorch's ``_unpool_output_size``: the size the pooling came from, or ``output_size`` (its
    last ``len(kernel)`` entries) checked to be within a stride of it."""
    count = len(kernel)
    default = [(input.shape[-count + d] - 1) * step[d] + kernel[d] - 2 * pad[d] for d in range(count)]
    if output_size is None:
        return default
    size = output_size[2:] if len(output_size) == count + 2 else output_size
    if len(size) != count:
        raise ValueError(f"output_size should be a sequence containing {count} or {count + 2} elements, but it has a "
                         f"length of '{len(size)}'")
    for d in range(count):
        low, high = default[d] - step[d], default[d] + step[d]
        if not low < size[d] < high:
            raise ValueError(f'invalid output_size "{size}" (dim {d} must be between {low} and {high})')
    return [int(s) for s in size]


@_public
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Computes a partial inverse of ``max_pool1d``: each value of ``input`` placed at its
    ``indices`` in a zero signal of the length the pooling came from (or ``output_size``);
    PyTorch's composite, ``max_unpool2d`` over a trailing dimension of 1.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_unpool1d(tm.tensor([[[4.0, 5.0]]]), tm.tensor([[[1, 2]]]), 2).tolist()
    [[[0.0, 4.0, 5.0, 0.0]]]
    """
    kernel = _single_list(kernel_size)
    step = kernel if stride is None else _single_list(stride)
    size = _unpool_output_size(input, kernel, step, _single_list(padding), output_size)
    return _function("_max_unpool2d")(input.unsqueeze(-1), indices.unsqueeze(-1), [int(size[0]), 1]).squeeze(-1)


def _single_list(value) -> list[int]:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)]
    return [int(v) for v in value]


def _triple_list(value) -> list[int]:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)] * 3
    return [int(v) for v in value]


@_public
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Computes a partial inverse of ``max_pool3d``: each value of ``input`` placed at its
    ``indices`` (``max_pool3d(..., return_indices=True)``'s) in a zero volume of the size the
    pooling came from (or ``output_size``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_unpool3d(tm.tensor([[[[4.0]]]]), tm.tensor([[[[3]]]]), (1, 2, 2)).tolist()
    [[[[0.0, 0.0], [0.0, 4.0]]]]
    """
    kernel = _triple_list(kernel_size)
    step = kernel if stride is None else _triple_list(stride)
    pad = _triple_list(padding)
    size = _unpool_output_size(input, kernel, step, pad, output_size)
    return _function("_max_unpool3d")(input, indices, size, step, pad)


# -- power-average pooling: PyTorch's composites ----------------------------------------------------

def _lp_pool(dims: int, input: Tensor, norm_type, kernel_size, stride, ceil_mode: bool) -> Tensor:
    """``(sum over each window of x ** p) ** (1 / p)`` as PyTorch computes it: an average pool of
    ``x ** p`` times the window's size (its sign kept, negative averages clamped to 0 by ``relu``),
    or a max pool of ``|x|`` for an infinite ``p``."""
    maximum = (max_pool1d, max_pool2d, max_pool3d)[dims - 1]
    if isinstance(norm_type, int | float) and math.isinf(norm_type):
        if norm_type > 0:
            return maximum(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -maximum(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    average = (avg_pool1d, avg_pool2d, avg_pool3d)[dims - 1]
    if stride is not None:
        out = average(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = average(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    window = math.prod([kernel_size] * dims if isinstance(kernel_size, numbers.Integral) else kernel_size)
    return (_function("sign")(out) * relu(_function("abs")(out))).mul(window).pow(1.0 / norm_type)


@_public
def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over windows of a signal: ``(sum of x ** norm_type) ** (1 / norm_type)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.lp_pool1d(tm.tensor([[[3.0, 4.0]]]), 2, 2).tolist()
    [[[5.0]]]
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


@_public
def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over windows of an image: ``(sum of x ** norm_type) ** (1 / norm_type)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.lp_pool2d(tm.tensor([[[[1.0, 2.0], [2.0, 4.0]]]]), 2, 2).tolist()
    [[[[5.0]]]]
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


@_public
def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over windows of a volume: ``(sum of x ** norm_type) ** (1 / norm_type)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.lp_pool3d(tm.ones(1, 1, 2, 2, 2), 1, 2).tolist()
    [[[[[8.0]]]]]
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# -- adaptive pooling -------------------------------------------------------------------------------

def _adaptive_sizes(function: str, input: Tensor, output_size, count: int = 2) -> list[int] | int:
    """``output_size`` with each None replaced by the input's own size there."""
    if isinstance(output_size, numbers.Integral) and not isinstance(output_size, bool):
        return output_size
    sizes = list(output_size)
    if len(sizes) != count:
        raise RuntimeError(f"{function}: output_size must be {count}")
    return [input.shape[-count + i] if s is None else s for i, s in enumerate(sizes)]


@_public
def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Applies a 2D adaptive average pooling over an input signal composed of several input
    planes: an ``output_size`` grid (None keeps that dimension's size) of averages over windows
    spread evenly across the last two dimensions.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.adaptive_avg_pool2d(tm.arange(16.).reshape(1, 4, 4), (1, None)).tolist()
    [[[6.0, 7.0, 8.0, 9.0]]]
    """
    sizes = _adaptive_sizes("adaptive_avg_pool2d", input, output_size)
    if sizes == 1 or sizes == [1, 1]:  # ATen's adaptive_avg_pool2d takes the mean for a 1 x 1 output
        return input.mean((-1, -2), keepdim=True)
    return _function("_adaptive_avg_pool2d")(input, sizes)


@_public
def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """Applies a 1D adaptive max pooling over an input signal composed of several input
    planes: the maximum of each of ``output_size`` windows spread evenly across the last
    dimension, with the maxima's positions when ``return_indices``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.adaptive_max_pool1d(tm.tensor([[1., 5., 2., 0., 4.]]), 2).tolist()
    [[5.0, 4.0]]
    """
    result = adaptive_max_pool1d_with_indices(input, output_size)
    return result if return_indices else result[0]


@_public
def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` with the maxima's positions (whatever ``return_indices`` says), as
    PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> [t.tolist() for t in F.adaptive_max_pool1d_with_indices(tm.tensor([[1., 5., 2., 0., 4.]]), 2)]
    [[[5.0, 4.0]], [[1, 4]]]
    """
    return _function("adaptive_max_pool1d")(input, output_size)


@_public
def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """Applies a 2D adaptive max pooling over an input signal composed of several input
    planes: the maximum of each window of an ``output_size`` grid spread evenly across the last
    two dimensions, with the maxima's flat positions when ``return_indices``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.adaptive_max_pool2d(tm.tensor([[[1., 5., 2.], [0., 3., 4.]]]), (1, 2)).tolist()
    [[[5.0, 5.0]]]
    """
    result = adaptive_max_pool2d_with_indices(input, output_size)
    return result if return_indices else result[0]


@_public
def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` with the maxima's flat positions (whatever ``return_indices``
    says), as PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> [t.tolist() for t in F.adaptive_max_pool2d_with_indices(tm.tensor([[[1., 5., 2.], [0., 3., 4.]]]), (1, 2))]
    [[[[5.0, 5.0]]], [[[1, 1]]]]
    """
    return _function("_adaptive_max_pool2d")(input, _adaptive_sizes("adaptive_max_pool2d", input, output_size))


@_public
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Applies a 3D adaptive average pooling over an input signal composed of several input
    planes: an ``output_size`` grid (None keeps that dimension's size) of averages over windows
    spread evenly across the last three dimensions.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.adaptive_avg_pool3d(tm.arange(8.).reshape(1, 2, 2, 2), (1, None, 1)).flatten().tolist()
    [2.5, 4.5]
    """
    sizes = _adaptive_sizes("adaptive_avg_pool3d", input, output_size, 3)
    listed = [sizes] * 3 if isinstance(sizes, numbers.Integral) else [int(s) for s in sizes]
    if min(listed) < 0:  # (checked by ATen's adaptive_avg_pool3d before it takes a mean)
        raise RuntimeError(f"adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{listed[0]}, {listed[1]},{listed[2]}}}")
    if listed == [1, 1, 1]:  # ATen's adaptive_avg_pool3d takes the mean for a 1 x 1 x 1 output
        return input.mean((-1, -2, -3), keepdim=True)
    return _function("_adaptive_avg_pool3d")(input, sizes)


@_public
def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """Applies a 3D adaptive max pooling over an input signal composed of several input
    planes: the maximum of each window of an ``output_size`` grid spread evenly across the last
    three dimensions, with the maxima's flat positions in their volumes when ``return_indices``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.adaptive_max_pool3d(tm.arange(8.).reshape(1, 2, 2, 2), (1, 2, 1)).flatten().tolist()
    [5.0, 7.0]
    """
    result = adaptive_max_pool3d_with_indices(input, output_size)
    return result if return_indices else result[0]


@_public
def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` with the maxima's flat positions (whatever ``return_indices``
    says), as PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> [t.flatten().tolist() for t in F.adaptive_max_pool3d_with_indices(tm.arange(8.).reshape(1, 2, 2, 2), 1)]
    [[7.0], [7]]
    """
    return _function("_adaptive_max_pool3d")(input, _adaptive_sizes("adaptive_max_pool3d", input, output_size, 3))


# -- interpolate ------------------------------------------------------------------------------------

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
# PyTorch names the mismatch for these modes; bicubic on other than 4D input gets its generic error.
_SPATIAL = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _interpolation_sizes(input: Tensor, size, scale_factor, recompute_scale_factor):
    """Output sizes, and the scale factors the kernels use (None: input / output size)."""
    spatial = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * spatial
        if len(sizes) != spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                             f"...,oK) format.")
        return [int(s) for s in sizes], [None] * spatial
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    factors = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * spatial
    if len(factors) != spatial:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                         f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                         f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                         f"scale_factor in (s1, s2, ...,sK) format.")
    sizes = [math.floor(float(n) * float(f)) for n, f in zip(input.shape[2:], factors)]
    return sizes, [None] * spatial if recompute_scale_factor else [float(f) for f in factors]


@_public
def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Down/up samples the input to either the given ``size`` or the given ``scale_factor``:
    ``'nearest'`` (3D or 4D input), ``'linear'`` (3D), ``'bilinear'`` or ``'bicubic'`` (4D)
    interpolation over the spatial dimensions, the corners' pixels aligned when ``align_corners``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.interpolate(tm.tensor([[[1., 2.]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> F.interpolate(tm.tensor([[[1., 2.]]]), size=3, mode="linear", align_corners=True).tolist()
    [[[1.0, 1.5, 2.0]]]
    """
    if mode not in _MODES:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    sizes, factors = _interpolation_sizes(input, size, scale_factor, recompute_scale_factor)
    spatial = input.dim() - 2
    if mode in _SPATIAL and spatial != _SPATIAL[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_SPATIAL[mode] + 2}D input")
    if input.dim() not in (3, 4, 5) or (mode == "bicubic" and input.dim() != 4):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode not in ("nearest", "linear", "bilinear", "bicubic") or input.dim() == 5 or antialias:
        raise NotImplementedError(f"interpolate: mode={mode!r} on {input.dim()}D input"
                                  f"{' with antialias' if antialias else ''} is not implemented in tensormodes "
                                  f"(supported: 'nearest' for 3D and 4D input, 'linear', 'bilinear', 'bicubic', "
                                  f"without antialias)")
    if min(sizes) <= 0:
        names = ("H", "W")[-spatial:]
        shown = ", ".join(f"{name}: {size}" for name, size in zip(names, input.shape[2:]))
        wanted = ", ".join(f"{name}: {size}" for name, size in zip(names, sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({shown}) output "
                           f"({wanted})")
    # uint8 images are resampled by nearest as PyTorch does; its other integer kernels are absent
    if not input.is_floating_point() and not (mode == "nearest" and input.dtype == _dtype.uint8):
        kernel = {("nearest", 1): "compute_indices_weights_nearest", ("linear", 1): "compute_indices_weights_linear",
                  ("nearest", 2): "upsample_nearest2d_channels_last",
                  ("bilinear", 2): "upsample_bilinear2d_channels_last",
                  ("bicubic", 2): "compute_indices_weights_cubic"}[mode, spatial]
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(input.dtype)}\'')
    if mode == "nearest":
        if spatial == 1:
            return _function("_upsample_nearest1d")(input, sizes, factors[0])
        return _function("_upsample_nearest2d")(input, sizes, *factors)
    if mode == "linear":
        return _function("_upsample_linear1d")(input, sizes, align_corners, factors[0])
    if mode == "bicubic":
        return _function("_upsample_bicubic2d")(input, sizes, align_corners, *factors)
    return _function("_upsample_bilinear2d")(input, sizes, align_corners, *factors)


@_public
def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode, align_corners)``, with PyTorch's warning.

    >>> import warnings, tensormodes as tm, tensormodes.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(tm.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=3)
    return interpolate(input, size, scale_factor, mode, align_corners)


@_public
def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")``, with PyTorch's warning.

    >>> import warnings, tensormodes as tm, tensormodes.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(tm.tensor([[[1.0, 2.0]]]), size=3).tolist()
    [[[1.0, 1.0, 2.0]]]
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=3)
    return interpolate(input, size, scale_factor, mode="nearest")


@_public
def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)``,
    with PyTorch's warning.

    >>> import warnings, tensormodes as tm, tensormodes.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(tm.tensor([[[[0.0, 2.0]]]]), size=(1, 3)).tolist()
    [[[[0.0, 1.0, 2.0]]]]
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=3)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- unfold / fold ----------------------------------------------------------------------------------

def _taps(channels: int, kernel: list[int], like: Tensor) -> Tensor:
    """(channels * taps, 1, kH, kW): one one-hot kernel per channel and tap (im2col as a grouped
    convolution)."""
    taps = kernel[0] * kernel[1]
    eye = np.tile(np.eye(taps).reshape(taps, 1, *kernel), (channels, 1, 1, 1))
    return _function("tensor")(eye, dtype=like.dtype, device=like.device)


_FOLD_NAMES = {"kernel_size": ("kernel size", "kernel"), "dilation": ("dilation", "dilation"),
               "padding": ("padding", "pad"), "stride": ("stride", "stride")}


def _check_fold_argument(name: str, values: list[int]) -> None:
    if len(values) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")
    if name == "output_size":
        return
    text, short = _FOLD_NAMES[name]
    if name == "padding" and min(values) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {values[0]} pad_width: {values[1]}")
    if name != "padding" and min(values) <= 0:
        raise RuntimeError(f"{text} should be greater than zero, but got {short}_height: {values[0]} {short}_width: "
                           f"{values[1]}")


def _check_fold_dtype(kernel: str, input: Tensor) -> None:
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(input.dtype)}\'')


@_public
def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extracts sliding local blocks from a batched input tensor (im2col): ``input`` (N, C, H, W)
    or (C, H, W) becomes (N, C * kH * kW, L), one column per block.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.unfold(tm.arange(6.).reshape(1, 1, 2, 3), 2).tolist()
    [[[0.0, 1.0], [1.0, 2.0], [3.0, 4.0], [4.0, 5.0]]]
    """
    kernel, spread, pad, step = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    for name, values in (("kernel_size", kernel), ("dilation", spread), ("padding", pad), ("stride", step)):
        _check_fold_argument(name, values)
    if input.dim() < 3:  # PyTorch reads the input's size(2) first
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got {input.dim()})")
    if input.dim() > 4 or 0 in input.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    _check_fold_dtype("im2col_out_cpu", input)
    batched = input if input.dim() == 4 else input.unsqueeze(0)
    channels = batched.shape[1]
    blocks = [(size + 2 * p - d * (k - 1) - 1) // s + 1
              for size, k, d, p, s in zip(batched.shape[2:], kernel, spread, pad, step)]
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({batched.shape[2]}, {batched.shape[3]}), "
                           f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({spread[0]}, {spread[1]}), "
                           f"padding=({pad[0]}, {pad[1]}), calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), but its components must be at least one.")
    columns = _function("conv2d")(batched, _taps(channels, kernel, batched), None, step, pad, spread, channels)
    columns = columns.reshape(batched.shape[0], channels * kernel[0] * kernel[1], blocks[0] * blocks[1])
    return columns if input.dim() == 4 else columns.squeeze(0)


@_public
def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combines an array of sliding local blocks into a large containing tensor (col2im, the
    adjoint of ``unfold``): overlapping values are summed.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.fold(tm.ones(1, 4, 2), (2, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]]]
    """
    size, kernel, spread = _pair(output_size), _pair(kernel_size), _pair(dilation)
    pad, step = _pair(padding), _pair(stride)
    for name, values in (("output_size", size), ("kernel_size", kernel), ("dilation", spread), ("padding", pad),
                         ("stride", step)):
        _check_fold_argument(name, values)
    if input.dim() not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    batched = input if input.dim() == 3 else input.unsqueeze(0)
    taps = kernel[0] * kernel[1]
    if batched.shape[1] % taps:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={batched.shape[1]} and kernel_size=({kernel[0]}, {kernel[1]}).")
    blocks = [(o + 2 * p - d * (k - 1) - 1) // s + 1 for o, k, d, p, s in zip(size, kernel, spread, pad, step)]
    if blocks[0] * blocks[1] != batched.shape[2]:
        raise RuntimeError(f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kernel[0]}, {kernel[1]}), "
                           f"dilation=({spread[0]}, {spread[1]}), padding=({pad[0]}, {pad[1]}), stride=({step[0]}, "
                           f"{step[1]}), expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={batched.shape[2]}.")
    _check_fold_dtype("col2im_out_cpu", input)
    channels = batched.shape[1] // taps
    planes = batched.reshape(batched.shape[0], batched.shape[1], *blocks)
    # The transposed convolution's output may stop short of output_size: the rest is padding.
    short = [o + 2 * p - ((b - 1) * s + d * (k - 1) + 1)
             for o, p, b, s, d, k in zip(size, pad, blocks, step, spread, kernel)]
    result = _function("conv_transpose2d")(planes, _taps(channels, kernel, batched), None, step, pad, short,
                                           channels, spread)
    return result if input.dim() == 3 else result.squeeze(0)


# -- channel dropout --------------------------------------------------------------------------------

def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """Zero whole channels (dim 1 of a batched input) with probability ``p``, scaling the rest by
    ``1 / (1 - p)``."""
    if not training or p == 0.0:
        return input
    if p == 1.0:
        result = input * 0.0
        return input.copy_(result) if inplace else result
    # PyTorch's steps (one noise value per channel, ``bernoulli_(1 - p)`` then ``div_(1 - p)``),
    # so the same seed drops the same channels
    shape = (*input.shape[:2], *(1,) * (input.dim() - 2))
    noise = _function("empty")(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def _check_probability(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@_public
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Randomly zero out entire channels (a channel is a 1D feature map) of ``input`` (N, C, L)
    or (C, L), each with probability ``p``, scaling the others by ``1 / (1 - p)`` (training only).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.dropout1d(tm.ones(2, 3), training=False).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    _check_probability(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           f"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           f"channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 3:
        return _feature_dropout(input, p, training, inplace)
    result = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    return input.copy_(result) if inplace and training and p != 0.0 else result


@_public
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Randomly zero out entire channels (a channel is a 2D feature map) of ``input`` (N, C, H, W),
    each with probability ``p``, scaling the others by ``1 / (1 - p)`` (training only). A 3D
    input is taken as (N, C, L), with PyTorch's warning.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.dropout2d(tm.ones(1, 2, 1, 1), training=False).tolist()
    [[[[1.0]], [[1.0]]]]
    """
    _check_probability(p)
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and will result "
                      f"in an error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      f"inputs).", stacklevel=3)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This "
                      "behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=3)
    return _feature_dropout(input, p, training, inplace)


@_public
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Randomly zero out entire channels (a channel is a 3D feature map) of ``input`` (N, C, D, H, W)
    or (C, D, H, W), each with probability ``p``, scaling the others by ``1 / (1 - p)`` (training only).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.dropout3d(tm.ones(2, 1, 1, 1), training=False).shape
    tensormodes.Size([2, 1, 1, 1])
    """
    _check_probability(p)
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and will result "
                      f"in an error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      f"inputs).", stacklevel=3)
    if input.dim() == 5:
        return _feature_dropout(input, p, training, inplace)
    result = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    if inplace:  # PyTorch writes into the input itself (through unsqueeze_ and squeeze_)
        return input if not training or p == 0.0 else input.copy_(result)
    return result


# -- embedding_bag ----------------------------------------------------------------------------------

@_public
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Compute sums, means or maxes of ``bags`` of embeddings, without instantiating the
    intermediate embeddings: ``input`` (B, L) is B bags of L indices, or a 1D ``input`` is cut
    into bags at ``offsets``. ``per_sample_weights`` scales each row (mode 'sum'); indices equal
    to ``padding_idx`` are left out of their bag.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.embedding_bag(tm.tensor([[0, 2]]), tm.tensor([[1., 1.], [2., 2.], [3., 5.]])).tolist()
    [[2.0, 3.0]]
    """
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights)}) is not None, then it "
                         f"must have the same shape as the input ({_size(input)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}"
                             .replace("tensormodes._tensor", "torch"))
        offsets = _function("arange")(0, input.numel(), max(input.shape[1], 1), dtype=input.dtype,
                                      device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse=True (sparse gradients) is not supported")
    used = _rows_to_renormalise(weight, input) if max_norm is not None else None
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-rows} through {rows - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= rows
    for tensor in (input, offsets):
        if tensor.dtype not in (_dtype.int64, _dtype.int32):
            raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar "
                               f"types: Long, Int; but got torch.{scalar_type_name(tensor.dtype)}Tensor instead "
                               f"(while checking arguments for embedding_bag)")
    indices, starts = input.long(), offsets.long()
    if indices.numel():
        wrong = ((indices < 0) | (indices >= rows)).nonzero()
        if wrong.numel():
            position = wrong[0, 0].item()
            if mode == "max":  # PyTorch's max kernel checks as it goes
                raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                                   f"{indices.reshape(-1)[position].item()}")
            raise RuntimeError(f"Index {position} of input takes value {indices[position].item()} which is not in the "
                               f"valid range [0, {rows})")
    if starts.numel() and (starts[0].item() != 0):
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0].item()}")
    if used is not None:  # after every check, so that an error leaves the weight as it was
        _renormalise_rows(weight, used, max_norm, norm_type)
    # PyTorch's embedding_bag op: one node (EmbeddingBagBackward0), the bags' layout read by the kernel
    return _function("_embedding_bag")(weight, indices, starts, scale_grad_by_freq, _BAG_MODES.index(mode), False,
                                       per_sample_weights, include_last_offset, padding_idx)


_BAG_MODES = ("sum", "mean", "max")


def _size(t: Tensor) -> str:
    return f"torch.Size([{', '.join(map(str, t.shape))}])"
