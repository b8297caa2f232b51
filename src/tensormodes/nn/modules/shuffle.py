"""Layers that rearrange channels and pixels: ``PixelShuffle``, ``PixelUnshuffle`` and
``ChannelShuffle`` (each calls its ``nn.functional`` counterpart).

>>> import tensormodes as tm
>>> tm.nn.PixelShuffle(3)(tm.zeros(1, 9, 4, 4)).shape
tensormodes.Size([1, 1, 12, 12])
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """Rearranges a tensor of shape ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``, ``r``
    the ``upscale_factor``.

    >>> import tensormodes as tm
    >>> tm.nn.PixelShuffle(2)
    PixelShuffle(upscale_factor=2)
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.pixel_shuffle(input, upscale_factor)``."""
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """``upscale_factor=...``."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Reverses ``PixelShuffle``: ``(*, C, H * r, W * r)`` becomes ``(*, C * r**2, H, W)``, ``r``
    the ``downscale_factor``.

    >>> import tensormodes as tm
    >>> tm.nn.PixelUnshuffle(2)(tm.zeros(1, 1, 4, 4)).shape
    tensormodes.Size([1, 4, 2, 2])
    """

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.pixel_unshuffle(input, downscale_factor)``."""
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """``downscale_factor=...``."""
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Divides the channels of a ``(N, C, *)`` tensor into ``groups`` groups and interleaves them.

    >>> import tensormodes as tm
    >>> tm.nn.ChannelShuffle(2)(tm.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.channel_shuffle(input, groups)``."""
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        """``groups=...``."""
        return f"groups={self.groups}"
