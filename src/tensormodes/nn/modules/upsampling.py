"""Upsampling modules over ``F.interpolate``: ``Upsample``, ``UpsamplingNearest2d`` and
``UpsamplingBilinear2d``.

>>> import tensormodes as tm
>>> tm.nn.Upsample(scale_factor=2)(tm.tensor([[[1., 2.]]])).tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Upsamples a given multi-channel 1D (temporal), 2D (spatial) or 3D (volumetric) data.

    Give either ``size`` or ``scale_factor`` (kept as floats); ``mode`` is one of
    ``F.interpolate``'s ('nearest', 'linear', 'bilinear', 'bicubic', 'trilinear', ...).

    >>> import tensormodes as tm
    >>> tm.nn.Upsample(size=(3, 4), mode='bilinear', align_corners=True)
    Upsample(size=(3, 4), mode='bilinear')
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.interpolate`` with the module's settings."""
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        """``scale_factor=...`` (or ``size=...``) and ``mode=...``."""
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Applies a 2D nearest neighbor upsampling to an input signal composed of several input channels.

    >>> import tensormodes as tm
    >>> tm.nn.UpsamplingNearest2d(scale_factor=2)(tm.tensor([[[[1., 2.]]]])).tolist()
    [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]]
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Applies a 2D bilinear upsampling to an input signal composed of several input channels
    (``align_corners=True``).

    >>> import tensormodes as tm
    >>> tm.nn.UpsamplingBilinear2d(size=(1, 3))(tm.tensor([[[[0., 2.]]]])).tolist()
    [[[[0.0, 1.0, 2.0]]]]
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
