"""``Fold`` and ``Unfold``: sliding local blocks combined into a tensor, and extracted from one.

>>> import tensormodes as tm
>>> tm.nn.Unfold(2)(tm.zeros(1, 3, 4, 4)).shape
tensormodes.Size([1, 12, 9])
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Combines an array of sliding local blocks into a large containing tensor (the sums of
    overlapping values): ``F.fold`` with the module's settings.

    >>> import tensormodes as tm
    >>> m = tm.nn.Fold((3, 3), 2)
    >>> m, m(tm.ones(1, 4, 4)).tolist()[0][0][1]
    (Fold(output_size=(3, 3), kernel_size=2, dilation=1, padding=0, stride=1), [2.0, 4.0, 2.0])
    """

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.fold(input, output_size, kernel_size, dilation, padding, stride)``."""
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        """The block geometry."""
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding local blocks from a batched input tensor: ``F.unfold`` with the module's
    settings.

    >>> import tensormodes as tm
    >>> tm.nn.Unfold(kernel_size=(2, 3))
    Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1)
    """

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.unfold(input, kernel_size, dilation, padding, stride)``."""
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        """The block geometry."""
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")
