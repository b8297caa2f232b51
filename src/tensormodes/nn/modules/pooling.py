"""Pooling modules: max (``MaxPool1d``, ``MaxPool2d``), average (``AvgPool1d``, ``AvgPool2d``) and
adaptive (``AdaptiveAvgPool1d`` ... ``AdaptiveAvgPool3d``, ``AdaptiveMaxPool1d`` ... ``AdaptiveMaxPool3d``).

>>> import tensormodes as tm
>>> tm.nn.MaxPool1d(2)(tm.tensor([[[1., 3., 2., 5.]]])).tolist()
[[[3.0, 5.0]]]
"""

from __future__ import annotations

import numbers

from ..._api import namespace as tm
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


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


class MaxPool3d(_MaxPoolNd):
    """Applies a 3D max pooling over an input signal composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.MaxPool3d(2)(tm.arange(8.).reshape(1, 1, 2, 2, 2)).flatten().tolist()
    [7.0]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor | tuple[tm.Tensor, tm.Tensor]:
        """``F.max_pool3d`` with the module's settings."""
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


def _single(value) -> tuple:
    """``value`` as a 1-tuple, as PyTorch's ``_single`` stores 1D pooling settings."""
    if isinstance(value, numbers.Integral) or not hasattr(value, "__iter__"):
        return (value,)
    return tuple(value)


class _MaxUnpoolNd(Module):
    """What the max-unpooling layers share: their settings and how they print."""

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """A partial inverse of ``MaxPool1d``: the maxima put back at their indices, zeros elsewhere.

    >>> import tensormodes as tm
    >>> pool, unpool = tm.nn.MaxPool1d(2, return_indices=True), tm.nn.MaxUnpool1d(2)
    >>> unpool(*pool(tm.tensor([[[1.0, 3.0, 2.0, 0.0]]]))).tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)

    def forward(self, input: tm.Tensor, indices: tm.Tensor, output_size=None) -> tm.Tensor:
        """``F.max_unpool1d`` with the module's settings."""
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """A partial inverse of ``MaxPool2d``: the maxima put back at their indices, zeros elsewhere.

    >>> import tensormodes as tm
    >>> tm.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    >>> tm.nn.MaxUnpool2d(2)(tm.tensor([[[[4.0]]]]), tm.tensor([[[[3]]]])).tolist()
    [[[[0.0, 0.0], [0.0, 4.0]]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride if stride is not None else kernel_size)
        self.padding = _pair(padding)

    def forward(self, input: tm.Tensor, indices: tm.Tensor, output_size=None) -> tm.Tensor:
        """``F.max_unpool2d`` with the module's settings."""
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """A partial inverse of ``MaxPool3d``: the maxima put back at their indices, zeros elsewhere.

    >>> import tensormodes as tm
    >>> tm.nn.MaxUnpool3d(2)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    >>> tm.nn.MaxUnpool3d((1, 2, 2))(tm.tensor([[[[4.0]]]]), tm.tensor([[[[3]]]])).tolist()
    [[[[0.0, 0.0], [0.0, 4.0]]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _triple(kernel_size)
        self.stride = _triple(stride if stride is not None else kernel_size)
        self.padding = _triple(padding)

    def forward(self, input: tm.Tensor, indices: tm.Tensor, output_size=None) -> tm.Tensor:
        """``F.max_unpool3d`` with the module's settings."""
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


def _triple(value) -> tuple:
    """``value`` as a 3-tuple, as PyTorch's ``_triple`` stores 3D settings."""
    if isinstance(value, numbers.Integral) or not hasattr(value, "__iter__"):
        return (value,) * 3
    return tuple(value)


def _pair(value) -> tuple:
    """``value`` as a 2-tuple, as PyTorch's ``_pair`` stores 2D settings."""
    if isinstance(value, numbers.Integral) or not hasattr(value, "__iter__"):
        return (value, value)
    return tuple(value)


class _LPPoolNd(Module):
    """What the power-average pooling layers share: their settings, kept as given, and how they print."""

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling over a signal (``F.lp_pool1d``).

    >>> import tensormodes as tm
    >>> tm.nn.LPPool1d(2, 2)(tm.tensor([[[3.0, 4.0]]])).tolist()
    [[[5.0]]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.lp_pool1d`` with the module's settings."""
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over an image (``F.lp_pool2d``).

    >>> import tensormodes as tm
    >>> tm.nn.LPPool2d(2, 3, stride=2)
    LPPool2d(norm_type=2, kernel_size=3, stride=2, ceil_mode=False)
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.lp_pool2d`` with the module's settings."""
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over a volume (``F.lp_pool3d``).

    >>> import tensormodes as tm
    >>> tm.nn.LPPool3d(1, 2)(tm.ones(1, 1, 2, 2, 2)).tolist()
    [[[[[8.0]]]]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.lp_pool3d`` with the module's settings."""
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        """``kernel_size=..., stride=..., padding=...``."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Applies a 1D average pooling over an input signal composed of several input planes.

    The settings are kept as 1-tuples; ``stride`` defaults to ``kernel_size``.

    >>> import tensormodes as tm
    >>> pool = tm.nn.AvgPool1d(2)
    >>> pool, pool(tm.tensor([[[1., 3., 2., 6.]]])).tolist()
    (AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,)), [[[2.0, 4.0]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.avg_pool1d`` with the module's settings."""
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolWithDivisor(_AvgPoolNd):
    """AvgPool2d / AvgPool3d: settings kept as given, with ``divisor_override``."""

    __constants__ = [*_AvgPoolNd.__constants__, "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPoolWithDivisor):
    """Applies a 2D average pooling over an input signal composed of several input planes.

    ``stride`` defaults to ``kernel_size``; ``divisor_override`` replaces the window size as
    the divisor.

    >>> import tensormodes as tm
    >>> tm.nn.AvgPool2d(2)(tm.arange(16.).reshape(1, 1, 4, 4)).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.avg_pool2d`` with the module's settings."""
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolWithDivisor):
    """Applies a 3D average pooling over an input signal composed of several input planes.

    ``stride`` defaults to ``kernel_size``; ``divisor_override`` replaces the window size as
    the divisor.

    >>> import tensormodes as tm
    >>> tm.nn.AvgPool3d(2)(tm.arange(8.).reshape(1, 1, 2, 2, 2)).flatten().tolist()
    [3.5]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.avg_pool3d`` with the module's settings."""
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        """``output_size=...``."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Applies a 1D adaptive average pooling over an input signal composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.AdaptiveAvgPool1d(2)(tm.tensor([[1., 3., 2., 6.]])).tolist()
    [[2.0, 4.0]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.adaptive_avg_pool1d(input, output_size)``."""
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Applies a 2D adaptive average pooling over an input signal composed of several input planes.

    ``output_size`` is an int or a pair whose None entries keep the input's size.

    >>> import tensormodes as tm
    >>> tm.nn.AdaptiveAvgPool2d((1, None))(tm.arange(4.).reshape(1, 2, 2)).tolist()
    [[[1.0, 2.0]]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.adaptive_avg_pool2d(input, output_size)``."""
        return F.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        """``output_size=...``."""
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Applies a 1D adaptive max pooling over an input signal composed of several input planes.

    ``return_indices=True`` also returns the maxima's positions along the last dimension.

    >>> import tensormodes as tm
    >>> values, indices = tm.nn.AdaptiveMaxPool1d(2, return_indices=True)(tm.tensor([[1., 5., 2., 0., 4.]]))
    >>> values.tolist(), indices.tolist()
    ([[5.0, 4.0]], [[1, 4]])
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor | tuple[tm.Tensor, tm.Tensor]:
        """``F.adaptive_max_pool1d(input, output_size, return_indices)``."""
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Applies a 2D adaptive max pooling over an input signal composed of several input planes.

    ``return_indices=True`` also returns the maxima's flat positions in their planes.

    >>> import tensormodes as tm
    >>> values, indices = tm.nn.AdaptiveMaxPool2d(1, return_indices=True)(tm.tensor([[[1., 5.], [0., 3.]]]))
    >>> values.tolist(), indices.tolist()
    ([[[5.0]]], [[[1]]])
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor | tuple[tm.Tensor, tm.Tensor]:
        """``F.adaptive_max_pool2d(input, output_size, return_indices)``."""
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Applies a 3D adaptive average pooling over an input signal composed of several input planes.

    ``output_size`` is an int or a triple whose None entries keep the input's size.

    >>> import tensormodes as tm
    >>> tm.nn.AdaptiveAvgPool3d((1, None, 1))(tm.arange(8.).reshape(1, 2, 2, 2)).flatten().tolist()
    [2.5, 4.5]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.adaptive_avg_pool3d(input, output_size)``."""
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Applies a 3D adaptive max pooling over an input signal composed of several input planes.

    ``return_indices=True`` also returns the maxima's flat positions in their volumes.

    >>> import tensormodes as tm
    >>> values, indices = tm.nn.AdaptiveMaxPool3d(1, return_indices=True)(tm.arange(8.).reshape(1, 2, 2, 2))
    >>> values.flatten().tolist(), indices.flatten().tolist()
    ([7.0], [7])
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor | tuple[tm.Tensor, tm.Tensor]:
        """``F.adaptive_max_pool3d(input, output_size, return_indices)``."""
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)
