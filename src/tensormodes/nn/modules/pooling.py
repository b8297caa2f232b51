"""Max pooling modules: ``MaxPool1d`` and ``MaxPool2d``.

>>> import tensormodes as tm
>>> tm.nn.MaxPool1d(2)(tm.tensor([[[1., 3., 2., 5.]]])).tolist()
[[[3.0, 5.0]]]
"""

from __future__ import annotations

import tensormodes as tm

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """``kernel_size=..., stride=..., padding=..., dilation=..., ceil_mode=...``."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Applies a 1D max pooling over an input signal composed of several input planes.

    ``stride`` defaults to ``kernel_size``; ``return_indices=True`` also
    returns the argmax positions.

    >>> import tensormodes as tm
    >>> tm.nn.MaxPool1d(3, stride=2)
    MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor | tuple[tm.Tensor, tm.Tensor]:
        """``F.max_pool1d`` with the module's settings."""
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """Applies a 2D max pooling over an input signal composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.MaxPool2d(2)(tm.arange(16.).reshape(1, 1, 4, 4)).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor | tuple[tm.Tensor, tm.Tensor]:
        """``F.max_pool2d`` with the module's settings."""
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)
