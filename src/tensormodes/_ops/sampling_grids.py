"""Sampling grids: ``affine_grid_generator`` (the grid of an affine transform, behind
``nn.functional.affine_grid``) and ``grid_sampler`` (an image sampled at a grid's points, behind
``nn.functional.grid_sample``), with ``_grid_sampler_2d_backward`` for its gradient.

``grid_sampler`` samples 4-D inputs (N, C, H, W) with ``bilinear``, ``nearest`` or ``bicubic``
interpolation, and 5-D (volumetric) inputs with trilinear or nearest, with ``zeros``, ``border`` or
``reflection`` padding, as PyTorch's CPU kernels compute them: every axis contributes its taps
(two linear, one nearest, four cubic) and each corner's weight is the product of its axes'.
A volume's backward node is ``GridSampler3DBackward0``; its aten identity stays
``grid_sampler_2d`` here. Half types compute in float32, rounded once.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

import numpy as np

from .._meta_array import MetaArray
from .common import HALF_TYPES, dtype_of, no_complex_autograd, no_derivative, not_implemented, ops, scalar_type_name
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

# -- affine_grid_generator ----------------------------------------------------------------------------


def _steps(count: int, align_corners: bool, dtype) -> np.ndarray:
    """PyTorch's ``linspace_from_neg_one``: the normalised coordinates of ``count`` pixels."""
    if count <= 1:
        return np.zeros(max(count, 1), dtype)[:count] if count == 0 else np.zeros(1, dtype)
    if np.dtype(dtype).kind in "iu":
        return _integer_steps(count, align_corners, np.dtype(dtype))
    steps = np.linspace(-1, 1, count, dtype=np.float64)
    if not align_corners:
        steps = steps * (count - 1) / count
    return steps.astype(dtype)


def _integer_steps(count: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """``_steps`` in an integer dtype, as PyTorch computes them there: its linspace from -1 (255 in
    uint8) to 1 (each half of the points counted from its own end, truncated), then, without
    align_corners, the product by count - 1 in the dtype (wrapping) truly divided by count and
    truncated back."""
    start, end = int(np.array(-1).astype(dtype)), 1
    step = (end - start) / (count - 1)
    index = np.arange(count)
    values = np.where(index < count // 2, start + step * index, end - step * (count - 1 - index))
    steps = np.trunc(values).astype(np.int64)
    if not align_corners:
        steps = np.trunc((steps * (count - 1)).astype(dtype) / count).astype(np.int64)
    return steps.astype(dtype)


def _base_grid(size: Sequence[int], align_corners: bool, dtype) -> np.ndarray:
    """(*spatial, dims + 1): each output point's normalised (x, y[, z], 1)."""
    spatial = list(size[2:])
    axes = [_steps(n, align_corners, dtype) for n in reversed(spatial)]  # x first
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # in spatial order (z, y, x)
    coordinates = [*reversed(mesh), np.ones(spatial, dtype)]
    return np.stack(coordinates, axis=-1)


def _check_affine(theta, size) -> None:
    """PyTorch's errors, in its order: its kernel is ``base.bmm(theta.transpose(1, 2))`` viewed as
    the grid, so the transpose, the batched product and the view speak."""
    dims = len(size) - 2
    if dims not in (2, 3):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    for count in reversed(size[2:]):  # the base grid, built in theta's dtype, x first, before theta is read
        if count <= 1 and (theta.dtype == np.bool_ or theta.dtype in HALF_TYPES):  # one point: at::tensor
            raise not_implemented("tensor_cpu", dtype_of(theta))
        if count > 1 and theta.dtype == np.bool_:
            raise not_implemented("linspace_cpu", dtype_of(theta))
    if theta.ndim < 3:
        bound = max(theta.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got "
                         f"{bound})")
    if theta.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if theta.shape[0] != size[0] or theta.shape[2] != dims + 1:  # the base grid expanded to the batch size
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {dims + 1}] "
                           f"but got: [{theta.shape[0]}, {theta.shape[-1]}].")
    if theta.shape[1] != dims:
        grid = [size[0], *size[2:], dims]
        raise RuntimeError(f"shape '{grid}' is invalid for input of size {math.prod(grid[:-1]) * theta.shape[1]}")


def _affine_grid_meta(theta, size, align_corners):
    _check_affine(theta, size)
    return MetaArray((size[0], *size[2:], len(size) - 2), theta.dtype)


def _affine_grid_grad(grad, theta_shape, size, align_corners):
    base = ops.tensor(_base_grid(size, align_corners, np.float64), dtype=grad.dtype, device=grad.device)
    points = base.reshape(1, -1, len(size) - 1).expand(size[0], -1, -1)
    return points.transpose(1, 2).bmm(grad.reshape(size[0], -1, len(size) - 2)).transpose(1, 2)


@op(grad=_affine_grid_grad, meta=rule(_affine_grid_meta), differentiable=no_complex_autograd("affine_grid_generator"),
    errors=(Sample((TensorSpec((1, 2, 3)), [2, 1, 2, 3], False)),
            Sample((TensorSpec((2, 2, 2, 3)), [2, 1, 3, 4], False)),
            Sample((TensorSpec((2, 3)), [2, 1, 3, 4], False)), Sample((TensorSpec((2, 3, 3)), [2, 1, 3, 4], False)),
            Sample((TensorSpec((2, 2, 3)), [2, 1, 3], False)), Sample((TensorSpec((2, 2, 4)), [2, 1, 3, 4], False)),
            Sample((TensorSpec((2, 3, 0), "bool"), [2, 1, 2, 3, 2], False))),
    samples=(Sample((TensorSpec((2, 2, 3)), [2, 1, 3, 4], False)),
             Sample((TensorSpec((1, 2, 3), "float64"), [1, 3, 2, 5], True)),
             Sample((TensorSpec((2, 3, 4), "float64"), [2, 1, 2, 3, 2], False)),
             Sample((TensorSpec((1, 2, 3)), [1, 1, 1, 3], False))))
def affine_grid_generator(theta: Tensor, size: list[int], align_corners: bool) -> Tensor:
    """The sampling grid (N, H, W, 2) — or (N, D, H, W, 3) — of the affine transforms ``theta``
    (N, 2, 3) — or (N, 3, 4) — for an output of ``size`` (N, C, H, W[, D]): each output point's
    normalised coordinates, transformed.

    >>> import tensormodes as tm
    >>> tm.affine_grid_generator(tm.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), [1, 1, 1, 2], True)[0, 0]
    tensor([[-1.,  0.],
            [ 1.,  0.]])
    """
    _check_affine(theta, size)
    base = _base_grid(size, align_corners, theta.dtype)
    points = base.reshape(-1, base.shape[-1])
    if theta.dtype in HALF_TYPES:  # (NumPy's einsum has no bfloat16: PyTorch's bmm computes in float32)
        grid = np.einsum("pk,njk->npj", points.astype(np.float32), theta.astype(np.float32))
    elif theta.dtype.kind in "iu":  # an integer bmm wraps: the same residues as int64's, cast back
        grid = np.einsum("pk,njk->npj", points.astype(np.int64), theta.astype(np.int64))
    else:
        grid = np.einsum("pk,njk->npj", points, theta)
    return np.ascontiguousarray(grid.reshape(size[0], *size[2:], len(size) - 2), dtype=theta.dtype)


# -- grid_sampler -------------------------------------------------------------------------------------

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _check_grid_sampler(input, grid, interpolation_mode: int, rank: int | None = None) -> None:
    """PyTorch's checks, for ``grid_sampler`` (either rank) or ``grid_sampler_{rank - 2}d``."""
    if input.ndim == 0 or grid.ndim == 0:  # PyTorch reads both sizes along dim 0 first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    floating = input.dtype.kind == "f" or input.dtype in HALF_TYPES
    # (other inputs: the kernel's dtype error, after the shapes; none when there is nothing to sample)
    if input.dtype != grid.dtype and floating and input.size and grid.size:
        raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(input))} but found "
                           f"{scalar_type_name(dtype_of(grid))}")
    if input.ndim not in ((rank,) if rank else (4, 5)) or grid.ndim != input.ndim:
        expected = f"{rank or input.ndim}D" if rank or input.ndim in (4, 5) else "4D or 5D"
        raise RuntimeError(f"grid_sampler(): expected {expected} input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for dim in range(2, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {dim} being empty")
    if input.ndim == 5 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not floating:
        kernel = "grid_sampler3d_cpu" if input.ndim == 5 else "grid_sampler_2d_cpu_kernel_impl"
        raise not_implemented(kernel, dtype_of(input))


def _clip(coordinate, size: int):
    """Clamped to [0, size - 1] (NaN to 0, as PyTorch's vectorised maximum gives), with its
    derivative (0 where clamped)."""
    derivative = np.where((coordinate <= 0) | (coordinate >= size - 1), 0.0, 1.0)
    return np.minimum(size - 1, np.fmax(coordinate, 0)), derivative


def _reflect(coordinate, twice_low: int, twice_high: int):
    """Reflected into [twice_low / 2, twice_high / 2], with its derivative (+-1)."""
    if twice_low == twice_high:
        return np.zeros_like(coordinate), np.zeros_like(coordinate)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = coordinate - low
    sign = np.where(shifted < 0, -1.0, 1.0)
    distance = np.abs(shifted)
    extra = np.fmod(distance, span)
    even = np.fmod(np.floor(distance / span), 2) == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _source(coordinate, size: int, padding_mode: int, align_corners: bool):
    """A normalised grid coordinate as a pixel coordinate, and its derivative."""
    scale = (size - 1) / 2 if align_corners else size / 2
    pixel = (coordinate + 1) * scale - (0 if align_corners else 0.5)
    derivative = np.full(pixel.shape, scale)
    if padding_mode == 1:
        pixel, clipped = _clip(pixel, size)
        derivative = derivative * clipped
    elif padding_mode == 2:
        pixel, reflected = _reflect(pixel, 0, 2 * (size - 1)) if align_corners else _reflect(pixel, -1, 2 * size - 1)
        pixel, clipped = _clip(pixel, size)
        derivative = derivative * reflected * clipped
    return pixel, derivative


_CUBIC_A = -0.75  # PyTorch's bicubic convolution constant


def _cubic_taps(t):
    """The four cubic-convolution weights of the pixels at offsets -1, 0, 1, 2 from ``floor(x)``
    (``t = x - floor(x)``), and their derivatives by ``t``."""
    a = _CUBIC_A
    near = lambda u: ((a + 2) * u - (a + 3)) * u * u + 1  # noqa: E731 - |u| <= 1
    far = lambda u: ((a * u - 5 * a) * u + 8 * a) * u - 4 * a  # noqa: E731 - 1 < |u| < 2
    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    u0, u1, u2, u3 = -1 - t, -t, 1 - t, 2 - t  # PyTorch's coefficient gradients are these slopes negated
    slopes = [-((-3 * a * u0 - 10 * a) * u0 - 8 * a), -((-3 * (a + 2) * u1 - 2 * (a + 3)) * u1),
              -((3 * (a + 2) * u2 - 2 * (a + 3)) * u2), -((3 * a * u3 - 10 * a) * u3 + 8 * a)]
    return weights, slopes


def _axis_taps(coordinate, size: int, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """The pixels one spatial axis reads for each point: ``(index, weight, d weight / d coordinate)``
    per tap. Bicubic taps get the padding rule on their indices (PyTorch reads each tap bounded);
    the other modes already padded the coordinate."""
    if interpolation_mode == 1:
        index = np.rint(coordinate)
        return [(index, np.ones_like(coordinate), np.zeros_like(coordinate))]
    low = np.floor(coordinate)
    if interpolation_mode == 0:
        return [(low, low + 1 - coordinate, -np.ones_like(coordinate)),
                (low + 1, coordinate - low, np.ones_like(coordinate))]
    weights, slopes = _cubic_taps(coordinate - low)
    taps = []
    for offset, weight, slope in zip((-1, 0, 1, 2), weights, slopes):
        index = low + offset
        if padding_mode == 1:
            index = _clip(index, size)[0]
        elif padding_mode == 2:
            twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
            index = _clip(_reflect(index, *twice)[0], size)[0]
        taps.append((index, weight, slope))
    return taps


def _corners(coordinates, sizes, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """The pixels each point reads, as ``(indices, in bounds, weight, d weight / d coordinate per
    axis)``: every combination of the axes' taps (4 for bilinear, 8 trilinear, 16 bicubic)."""
    axes = [_axis_taps(c, n, interpolation_mode, padding_mode, align_corners) for c, n in zip(coordinates, sizes)]
    corners = []
    for combination in itertools.product(*axes):
        inside = np.ones(coordinates[0].shape, bool)
        weight = 1
        for (index, tap_weight, _), size in zip(reversed(combination), reversed(sizes)):  # x first, as PyTorch
            inside &= (index >= 0) & (index < size)
            weight = weight * tap_weight
        slopes = []
        for axis, (_, _, slope) in enumerate(combination):
            others = [w for k, (_, w, _) in enumerate(combination) if k != axis]
            slopes.append(functools.reduce(np.multiply, others, slope))
        corners.append(([index for index, _, _ in combination], inside, weight, slopes))
    return corners


def _flat_positions(indices, inside, sizes) -> np.ndarray:
    """Each point's pixel as an index into the flattened spatial dimensions (0 where outside)."""
    flat = 0
    for index, size in zip(indices, sizes):
        flat = flat * size + index
    with np.errstate(invalid="ignore"):
        return np.where(inside, flat, 0).astype(np.int64)


def _sampled(input, grid, interpolation_mode, padding_mode, align_corners):
    """The pieces both directions use: working arrays, the spatial sizes, each axis's derivative
    of the pixel coordinate by the grid's, and the corners."""
    work = np.float32 if input.dtype in HALF_TYPES else input.dtype
    values = input.astype(work)
    sizes = input.shape[2:]
    coordinates, derivatives = [], []
    with np.errstate(invalid="ignore", over="ignore"):
        for axis, size in enumerate(sizes):  # the grid's last dimension is (x, y[, z]): reversed axes
            normalised = grid[..., len(sizes) - 1 - axis].astype(work)
            if interpolation_mode == 2:  # bicubic pads each tap, not the coordinate
                scale = (size - 1) / 2 if align_corners else size / 2
                pixel, derivative = (normalised + 1) * scale - (0 if align_corners else 0.5), np.full(
                    normalised.shape, scale)
            else:
                pixel, derivative = _source(normalised, size, padding_mode, align_corners)
            coordinates.append(pixel)
            derivatives.append(derivative)
        corners = _corners(coordinates, sizes, interpolation_mode, padding_mode, align_corners)
    return values, sizes, derivatives, corners


def _grid_sampler_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_grid_sampler(input, grid, interpolation_mode)
    return MetaArray((input.shape[0], input.shape[1], *grid.shape[1:-1]), input.dtype)


def _grid_sampler_grad(grad, input, grid, interpolation_mode, padding_mode, align_corners):
    backward = ops._grid_sampler_3d_backward if input.dim() == 5 else ops._grid_sampler_2d_backward
    return backward(grad, input, grid, interpolation_mode, padding_mode, align_corners)


def _grid_sampler_decomposition(input, grid, interpolation_mode, padding_mode, align_corners):
    """PyTorch's composite ``grid_sampler``: ``grid_sampler_3d`` for volumes (the 2-d op is this one's own)."""
    if input.dim() != 5 or grid.dim() != 5:
        return NotImplemented
    return ops.ops.aten.grid_sampler_3d.default(input, grid, interpolation_mode, padding_mode, align_corners)


def _grid_sampler_node(input, *_) -> str:
    return "grid_sampler_3d" if input.dim() == 5 else "grid_sampler_2d"  # GridSampler3DBackward0 for volumes


@op(grad=_grid_sampler_grad, node=_grid_sampler_node, meta=rule(_grid_sampler_meta),
    decompose=_grid_sampler_decomposition,
    errors=(Sample((TensorSpec((1, 1, 3, 4)), TensorSpec((1, 2, 2, 2), "float64"), 0, 0, False)),
            Sample((TensorSpec((1, 1, 3, 4)), TensorSpec((1, 4, 2)), 0, 0, False)),
            Sample((TensorSpec((2, 1, 3, 4)), TensorSpec((1, 2, 2, 2)), 0, 0, False)),
            Sample((TensorSpec((1, 1, 3, 4)), TensorSpec((1, 2, 2, 1)), 0, 0, False)),
            Sample((TensorSpec((1, 1, 0, 4)), TensorSpec((1, 2, 2, 2)), 0, 0, False)),
            Sample((TensorSpec((1, 1, 3, 4), "int64"), TensorSpec((1, 2, 2, 2), "int64")), {
                "interpolation_mode": 0, "padding_mode": 0, "align_corners": False}),
            Sample((TensorSpec((1, 1, 2, 3, 4)), TensorSpec((1, 2, 2, 2, 3)), 2, 0, False)),
            Sample((TensorSpec((1, 1, 2, 3, 4), "int64"), TensorSpec((1, 2, 2, 2, 3), "int64"), 0, 0, False))),
    samples=tuple(Sample((TensorSpec((2, 2, 3, 4), dtype), TensorSpec((2, 3, 2, 2), dtype, -1.3, 1.3), mode, padding,
                          corners))
                  for dtype, mode, padding, corners in (
                      ("float32", 0, 0, False), ("float64", 0, 1, True), ("float64", 0, 2, False),
                      ("float64", 0, 2, True), ("float32", 1, 0, True), ("float64", 1, 2, False),
                      ("float16", 0, 0, False), ("float64", 2, 0, False), ("float64", 2, 1, True),
                      ("float32", 2, 2, False), ("float64", 2, 2, True))) + tuple(
        Sample((TensorSpec((2, 2, 2, 3, 4), dtype), TensorSpec((2, 2, 3, 2, 3), dtype, -1.3, 1.3), mode, padding,
                corners))
        for dtype, mode, padding, corners in (("float64", 0, 0, False), ("float64", 0, 2, True),
                                              ("float32", 1, 1, False), ("float64", 0, 1, True))),
    aten="grid_sampler_2d.default", schema={"input": "Tensor input"}, tags=("core",))
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``input`` (N, C, H, W) sampled at the normalised points of ``grid`` (N, Ho, Wo, 2), each
    (x, y) in [-1, 1] across the image — or a volume (N, C, D, H, W) at (x, y, z) points
    (N, Do, Ho, Wo, 3): ``interpolation_mode`` 0 bilinear (trilinear), 1 nearest, 2 bicubic (images only);
    ``padding_mode`` 0 zeros, 1 border, 2 reflection for points outside; ``align_corners``
    puts -1 and 1 at the corner pixels' centres instead of their outer edges.

    >>> import tensormodes as tm
    >>> tm.grid_sampler(tm.arange(4.0).reshape(1, 1, 2, 2), tm.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.5000]]]])
    """
    _check_grid_sampler(input, grid, interpolation_mode)
    values, sizes, _, corners = _sampled(input, grid, interpolation_mode, padding_mode, align_corners)
    batch, channels = input.shape[:2]
    planes = values.reshape(batch, channels, math.prod(sizes))
    result = np.zeros((batch, channels, *grid.shape[1:-1]), values.dtype)
    rows = np.arange(batch).reshape(-1, *[1] * (grid.ndim - 2))
    with np.errstate(invalid="ignore", over="ignore"):
        for indices, inside, weight, _ in corners:
            picked = planes[rows, :, _flat_positions(indices, inside, sizes)]  # (N, *out, C)
            picked = np.where(inside[..., None], picked, 0)
            result += np.moveaxis(picked if interpolation_mode == 1 else picked * weight[..., None], -1, 1)
    return result.astype(input.dtype)


def _grid_sampler_3d_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_grid_sampler(input, grid, interpolation_mode, rank=5)
    return MetaArray((input.shape[0], input.shape[1], *grid.shape[1:-1]), input.dtype)


def _grid_sampler_3d_grad(grad, input, grid, interpolation_mode, padding_mode, align_corners):
    return ops._grid_sampler_3d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners)


@op(function=False, grad=_grid_sampler_3d_grad, meta=rule(_grid_sampler_3d_meta), aten="default",
    schema={"input": "Tensor input"},
    errors=(Sample((TensorSpec((1, 1, 3, 4)), TensorSpec((1, 2, 2, 2)), 0, 0, False)),
            Sample((TensorSpec((1, 1, 2, 3, 4)), TensorSpec((1, 2, 2, 2, 3)), 2, 0, False))),
    samples=(Sample((TensorSpec((2, 2, 2, 3, 4), "float64"), TensorSpec((2, 2, 3, 2, 3), "float64", -1.3, 1.3), 0, 2,
                     False)),
             Sample((TensorSpec((1, 2, 3, 2, 2)), TensorSpec((1, 2, 1, 2, 3), "float32", -1.3, 1.3), 1, 0, True))))
def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a volume (N, C, D, H, W) at the (x, y, z) points of ``grid``
    (N, Do, Ho, Wo, 3), trilinear (0) or nearest (1): ATen's op behind ``grid_sampler`` for 5-D
    inputs, reached as ``tensormodes.ops.aten.grid_sampler_3d``.

    >>> import tensormodes as tm
    >>> tm.ops.aten.grid_sampler_3d.default(tm.arange(8.0).reshape(1, 1, 2, 2, 2), tm.zeros(1, 1, 1, 1, 3), 0, 0,
    ...                                     True).item()
    3.5
    """
    _check_grid_sampler(input, grid, interpolation_mode, rank=5)
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def _grid_sampler_backward_meta(grad_output, input, grid, interpolation_mode, padding_mode, align_corners):
    return MetaArray(input.shape, input.dtype), MetaArray(grid.shape, grid.dtype)


@op(grad=no_derivative("grid_sampler_2d_backward"), meta=rule(_grid_sampler_backward_meta),
    samples=(Sample((TensorSpec((1, 2, 2, 2)), TensorSpec((1, 2, 3, 4)), TensorSpec((1, 2, 2, 2), "float32", -1.3, 1.3),
                     0, 0, False)),))
def _grid_sampler_2d_backward(grad_output: Tensor, input: Tensor, grid: Tensor, interpolation_mode: int,
                              padding_mode: int, align_corners: bool) -> Tensor:
    """The gradients of ``grid_sampler``'s input and grid for its output's gradient (PyTorch's
    ``grid_sampler_2d_backward``, which has no derivative of its own).

    >>> import tensormodes as tm
    >>> x, g = tm.ones(1, 1, 2, 2), tm.zeros(1, 1, 1, 2)
    >>> tm._grid_sampler_2d_backward(tm.ones(1, 1, 1, 1), x, g, 0, 0, False)[0]
    tensor([[[[0.2500, 0.2500],
              [0.2500, 0.2500]]]])
    """
    values, sizes, derivatives, corners = _sampled(input, grid, interpolation_mode, padding_mode, align_corners)
    batch, channels = input.shape[:2]
    grad = grad_output.astype(values.dtype)
    grad_input = np.zeros((batch, math.prod(sizes), channels), values.dtype)
    grad_coordinates = [np.zeros(grid.shape[:-1], values.dtype) for _ in sizes]
    rows = np.broadcast_to(np.arange(batch).reshape(-1, *[1] * (grid.ndim - 2)), grid.shape[:-1])
    planes = values.reshape(batch, channels, math.prod(sizes))
    incoming = np.moveaxis(grad, 1, -1)  # (N, *out, C)
    with np.errstate(invalid="ignore", over="ignore"):
        for indices, inside, weight, slopes in corners:
            positions = _flat_positions(indices, inside, sizes)
            share = np.where(inside[..., None], incoming * weight[..., None], 0)
            np.add.at(grad_input, (rows, positions), share)
            # nearest: the grid gets no gradient; nor does it without channels (PyTorch sums the
            # channels' terms, so it gives 0 even where a NaN coordinate makes every slope NaN)
            if interpolation_mode != 1 and channels:
                picked = np.where(inside[..., None], planes[rows, :, positions], 0)
                through = (picked * incoming).sum(axis=-1)
                for total, slope in zip(grad_coordinates, slopes):
                    total += slope * through
        # the grid's last dimension is (x, y[, z]): the axes reversed
        grad_grid = np.stack([total * derivative for total, derivative in zip(grad_coordinates, derivatives)][::-1],
                             axis=-1)
    grad_input = np.moveaxis(grad_input, -1, 1).reshape(input.shape)
    return np.ascontiguousarray(grad_input, dtype=input.dtype), np.ascontiguousarray(grad_grid, dtype=grid.dtype)


@op(grad=no_derivative("grid_sampler_3d_backward"), meta=rule(_grid_sampler_backward_meta),
    samples=(Sample((TensorSpec((1, 2, 2, 2, 2)), TensorSpec((1, 2, 2, 3, 4)),
                     TensorSpec((1, 2, 2, 2, 3), "float32", -1.3, 1.3), 0, 0, False)),))
def _grid_sampler_3d_backward(grad_output: Tensor, input: Tensor, grid: Tensor, interpolation_mode: int,
                              padding_mode: int, align_corners: bool) -> Tensor:
    """The gradients of ``grid_sampler``'s volume (N, C, D, H, W) and grid for its output's
    gradient (PyTorch's ``grid_sampler_3d_backward``, which has no derivative of its own).

    >>> import tensormodes as tm
    >>> x, g = tm.ones(1, 1, 2, 2, 2), tm.zeros(1, 1, 1, 1, 3)
    >>> tm._grid_sampler_3d_backward(tm.ones(1, 1, 1, 1, 1), x, g, 0, 0, False)[0].flatten()
    tensor([0.1250, 0.1250, 0.1250, 0.1250, 0.1250, 0.1250, 0.1250, 0.1250])
    """
    return _grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners)
