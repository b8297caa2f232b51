"""Sampling grids: ``affine_grid_generator`` (the grid of an affine transform, behind
``nn.functional.affine_grid``) and ``grid_sampler`` (an image sampled at a grid's points, behind
``nn.functional.grid_sample``), with ``_grid_sampler_2d_backward`` for its gradient.

``grid_sampler`` samples 4-D inputs (N, C, H, W) with ``bilinear`` or ``nearest`` interpolation
and ``zeros``, ``border`` or ``reflection`` padding, as PyTorch's CPU kernel computes them;
bicubic interpolation and 5-D (volumetric) inputs are not implemented here. Half types compute
in float32, rounded once.
"""

from __future__ import annotations

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
    steps = np.linspace(-1, 1, count, dtype=np.float64)
    if not align_corners:
        steps = steps * (count - 1) / count
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
    if theta.dtype == np.bool_:  # the base grid is a linspace in theta's dtype
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
    grid = np.einsum("pk,njk->npj", points, theta)
    return np.ascontiguousarray(grid.reshape(size[0], *size[2:], len(size) - 2), dtype=theta.dtype)


# -- grid_sampler -------------------------------------------------------------------------------------

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _check_grid_sampler(input, grid, interpolation_mode: int) -> None:
    if input.ndim == 0 or grid.ndim == 0:  # PyTorch reads both sizes along dim 0 first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    floating = input.dtype.kind == "f" or input.dtype in HALF_TYPES
    if input.dtype != grid.dtype and floating:  # (other inputs: the kernel's dtype error, after the shapes)
        raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(input))} but found "
                           f"{scalar_type_name(dtype_of(grid))}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        expected = f"{input.ndim}D" if input.ndim in (4, 5) else "4D or 5D"
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
    if input.ndim == 5 or interpolation_mode == 2:
        raise NotImplementedError("tensormodes: grid_sample of 5-D inputs and mode='bicubic' are not implemented")
    if not floating:
        raise not_implemented("grid_sampler_2d_cpu_kernel_impl", dtype_of(input))


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


def _corners(x, y, width: int, height: int, interpolation_mode: int):
    """The pixels each point reads: (column, row, in bounds, weight, d weight / dx, d weight / dy)."""
    if interpolation_mode == 1:
        column, row = np.rint(x), np.rint(y)
        inside = (column >= 0) & (column < width) & (row >= 0) & (row < height)
        one = np.ones_like(x)
        return [(column, row, inside, one, 0 * one, 0 * one)]
    x0, y0 = np.floor(x), np.floor(y)
    x1, y1 = x0 + 1, y0 + 1
    parts = [(x0, y0, (x1 - x) * (y1 - y), -(y1 - y), -(x1 - x)), (x1, y0, (x - x0) * (y1 - y), y1 - y, -(x - x0)),
             (x0, y1, (x1 - x) * (y - y0), -(y - y0), x1 - x), (x1, y1, (x - x0) * (y - y0), y - y0, x - x0)]
    corners = []
    for column, row, weight, dx, dy in parts:
        inside = (column >= 0) & (column < width) & (row >= 0) & (row < height)
        corners.append((column, row, inside, weight, dx, dy))
    return corners


def _flat_positions(column, row, inside, width: int) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(inside, row * width + column, 0).astype(np.int64)


def _sampled(input, grid, interpolation_mode, padding_mode, align_corners):
    """The pieces both directions use: working arrays, the pixel coordinates and their derivatives."""
    work = np.float32 if input.dtype in HALF_TYPES else input.dtype
    values = input.astype(work)
    height, width = input.shape[-2:]
    with np.errstate(invalid="ignore", over="ignore"):
        x, dx = _source(grid[..., 0].astype(work), width, padding_mode, align_corners)
        y, dy = _source(grid[..., 1].astype(work), height, padding_mode, align_corners)
    return values, x, y, dx, dy, _corners(x, y, width, height, interpolation_mode)


def _grid_sampler_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_grid_sampler(input, grid, interpolation_mode)
    return MetaArray((input.shape[0], input.shape[1], *grid.shape[1:-1]), input.dtype)


def _grid_sampler_grad(grad, input, grid, interpolation_mode, padding_mode, align_corners):
    return ops._grid_sampler_2d_backward(grad, input, grid, interpolation_mode, padding_mode, align_corners)


@op(grad=_grid_sampler_grad, node="grid_sampler_2d", meta=rule(_grid_sampler_meta),
    errors=(Sample((TensorSpec((1, 1, 3, 4)), TensorSpec((1, 2, 2, 2), "float64"), 0, 0, False)),
            Sample((TensorSpec((1, 1, 3, 4)), TensorSpec((1, 4, 2)), 0, 0, False)),
            Sample((TensorSpec((2, 1, 3, 4)), TensorSpec((1, 2, 2, 2)), 0, 0, False)),
            Sample((TensorSpec((1, 1, 3, 4)), TensorSpec((1, 2, 2, 1)), 0, 0, False)),
            Sample((TensorSpec((1, 1, 0, 4)), TensorSpec((1, 2, 2, 2)), 0, 0, False)),
            Sample((TensorSpec((1, 1, 3, 4), "int64"), TensorSpec((1, 2, 2, 2), "int64")), {
                "interpolation_mode": 0, "padding_mode": 0, "align_corners": False})),
    samples=tuple(Sample((TensorSpec((2, 2, 3, 4), dtype), TensorSpec((2, 3, 2, 2), dtype, -1.3, 1.3), mode, padding,
                          corners))
                  for dtype, mode, padding, corners in (
                      ("float32", 0, 0, False), ("float64", 0, 1, True), ("float64", 0, 2, False),
                      ("float64", 0, 2, True), ("float32", 1, 0, True), ("float64", 1, 2, False),
                      ("float16", 0, 0, False))),
    aten="grid_sampler_2d.default", schema={"input": "Tensor input"}, tags=("core",))
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``input`` (N, C, H, W) sampled at the normalised points of ``grid`` (N, Ho, Wo, 2), each
    (x, y) in [-1, 1] across the image: ``interpolation_mode`` 0 bilinear, 1 nearest;
    ``padding_mode`` 0 zeros, 1 border, 2 reflection for points outside; ``align_corners``
    puts -1 and 1 at the corner pixels' centres instead of their outer edges.

    >>> import tensormodes as tm
    >>> tm.grid_sampler(tm.arange(4.0).reshape(1, 1, 2, 2), tm.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.5000]]]])
    """
    _check_grid_sampler(input, grid, interpolation_mode)
    values, *_, corners = _sampled(input, grid, interpolation_mode, padding_mode, align_corners)
    batch, channels, height, width = input.shape
    planes = values.reshape(batch, channels, height * width)
    result = np.zeros((batch, channels, *grid.shape[1:-1]), values.dtype)
    rows = np.arange(batch)[:, None, None]
    with np.errstate(invalid="ignore", over="ignore"):
        for column, row, inside, weight, _, _ in corners:
            picked = planes[rows, :, _flat_positions(column, row, inside, width)]  # (N, Ho, Wo, C)
            picked = np.where(inside[..., None], picked, 0)
            if interpolation_mode == 1:
                result += np.moveaxis(picked, -1, 1)
            else:
                result += np.moveaxis(picked * weight[..., None], -1, 1)
    return result.astype(input.dtype)


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
    values, x, y, dx, dy, corners = _sampled(input, grid, interpolation_mode, padding_mode, align_corners)
    batch, channels, height, width = input.shape
    grad = grad_output.astype(values.dtype)
    grad_input = np.zeros((batch, height * width, channels), values.dtype)
    grad_x = np.zeros(x.shape, values.dtype)
    grad_y = np.zeros(y.shape, values.dtype)
    rows = np.broadcast_to(np.arange(batch)[:, None, None], x.shape)
    planes = values.reshape(batch, channels, height * width)
    incoming = np.moveaxis(grad, 1, -1)  # (N, Ho, Wo, C)
    with np.errstate(invalid="ignore", over="ignore"):
        for column, row, inside, weight, d_weight_dx, d_weight_dy in corners:
            positions = _flat_positions(column, row, inside, width)
            share = np.where(inside[..., None], incoming * weight[..., None], 0)
            np.add.at(grad_input, (rows, positions), share)
            if interpolation_mode == 0:
                picked = np.where(inside[..., None], planes[np.arange(batch)[:, None, None], :, positions], 0)
                through = (picked * incoming).sum(axis=-1)
                grad_x += d_weight_dx * through
                grad_y += d_weight_dy * through
    grad_grid = np.stack([grad_x * dx, grad_y * dy], axis=-1)
    grad_input = np.moveaxis(grad_input, -1, 1).reshape(input.shape)
    return np.ascontiguousarray(grad_input, dtype=input.dtype), np.ascontiguousarray(grad_grid, dtype=grid.dtype)
