"""Vision functions of ``nn.functional``: the rearrangements ``pixel_shuffle``, ``pixel_unshuffle``,
``channel_shuffle`` and ``native_channel_shuffle`` — ``tensormodes``' own functions (declared in
``_ops/shuffling.py``), as PyTorch's ``F.pixel_shuffle`` is ``torch.pixel_shuffle`` — and the
spatial transformer's ``affine_grid`` and ``grid_sample`` (over ``_ops/sampling_grids.py``).
"""

from __future__ import annotations

import warnings

from ..._ops.registry import Tensor
from ._common import _function, _public, _reexport

pixel_shuffle = _reexport("pixel_shuffle")
pixel_unshuffle = _reexport("pixel_unshuffle")
channel_shuffle = _reexport("channel_shuffle")
native_channel_shuffle = _reexport("native_channel_shuffle")


_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                          "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                          "documentation of grid_sample for details.")


@_public
def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine transforms ``theta`` (N, 2, 3) for an output of
    ``size`` (N, C, H, W) — or (N, 3, 4) and (N, C, D, H, W) — for ``grid_sample``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.affine_grid(tm.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), [1, 1, 1, 2], align_corners=True).tolist()
    [[[[-1.0, 0.0], [1.0, 0.0]]]]
    """
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=3)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=3)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _function("affine_grid_generator")(theta, size, align_corners)


@_public
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """``input`` (N, C, H, W) sampled at the normalised (x, y) points of ``grid`` (N, Ho, Wo, 2),
    or (N, C, D, H, W) at (x, y, z) points (N, Do, Ho, Wo, 3): ``mode`` ``'bilinear'`` (trilinear
    for volumes), ``'nearest'`` or ``'bicubic'`` (images only), ``padding_mode`` ``'zeros'``,
    ``'border'`` or ``'reflection'`` for points outside.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.grid_sample(tm.arange(4.0).reshape(1, 1, 2, 2), tm.zeros(1, 1, 1, 2), align_corners=False).item()
    1.5
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=3)
        align_corners = False
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    paddings = {"zeros": 0, "border": 1, "reflection": 2}
    return _function("grid_sampler")(input, grid, modes[mode], paddings[padding_mode], align_corners)
