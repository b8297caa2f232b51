"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d``.

Weights have shape (out_channels, in_channels / groups, *kernel_size)
(transposed: (in_channels, out_channels / groups, *kernel_size)) and are
initialised as PyTorch does: ``kaiming_uniform_(a=sqrt(5))``, bias from
U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

>>> import tensormodes as tm
>>> conv = tm.nn.Conv2d(3, 8, 3, padding="same", padding_mode="reflect")
>>> conv(tm.randn(1, 3, 5, 5)).shape
tensormodes.Size([1, 8, 5, 5])
"""

from __future__ import annotations

import math

from ..._api import namespace as tm
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    _dims = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple, padding,
                 dilation: tuple, transposed: bool, output_padding: tuple, groups: int, bias: bool,
                 padding_mode: str, device=None, dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's (before, after) pairs, last dimension first, for the non-zero padding modes.
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(tm.empty((*shape, *kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tm.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``kaiming_uniform_(weight, a=sqrt(5))``; bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        """``in, out, kernel_size=..., stride=...`` and the options that differ from their defaults."""
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            text += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class _Conv(_ConvNd):
    """Conv1d / Conv2d / Conv3d: ``_function`` is the functional convolution of that many dimensions."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        n = self._dims
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
                         padding if isinstance(padding, str) else _ntuple(padding, n), _ntuple(dilation, n),
                         False, _ntuple(0, n), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: tm.Tensor, weight: tm.Tensor, bias: tm.Tensor | None) -> tm.Tensor:
        function = type(self)._function
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return function(padded, weight, bias, self.stride, _ntuple(0, self._dims), self.dilation, self.groups)
        return function(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """Convolve ``input`` with ``weight`` (padding it first for a non-zero ``padding_mode``)."""
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """Applies a 1D convolution over an input signal composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.Conv1d(16, 33, 3, stride=2)
    Conv1d(16, 33, kernel_size=(3,), stride=(2,))
    """

    _dims = 1
    _function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """Applies a 2D convolution over an input signal composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    Conv2d(16, 33, kernel_size=(3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    """

    _dims = 2
    _function = staticmethod(F.conv2d)


class _ConvTranspose(_ConvNd):
    """ConvTranspose1d / 2d / 3d: ``forward`` accepts ``output_size`` to pick among the valid output sizes."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._dims
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
                         _ntuple(padding, n), _ntuple(dilation, n), True, _ntuple(output_padding, n), groups, bias,
                         padding_mode, device, dtype)

    def _output_padding(self, input: tm.Tensor, output_size) -> list[int]:
        n = self._dims
        if output_size is None:
            return list(self.output_padding)
        batch_dims = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == batch_dims + n:
            output_size = output_size[batch_dims:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{batch_dims + n} elements (got {len(output_size)})")
        min_sizes = [(input.size(d + batch_dims) - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [low + self.stride[d] - 1 for d, low in enumerate(min_sizes)]
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return [size - low for size, low in zip(output_size, min_sizes)]

    def forward(self, input: tm.Tensor, output_size: list[int] | None = None) -> tm.Tensor:
        """The transposed convolution; ``output_size`` chooses the output padding."""
        output_padding = self._output_padding(input, output_size)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                    self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """Applies a 1D transposed convolution operator over an input image composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.ConvTranspose1d(2, 4, 3, stride=2)(tm.ones(1, 2, 5), output_size=[12]).shape
    tensormodes.Size([1, 4, 12])
    """

    _dims = 1
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """Applies a 2D transposed convolution operator over an input image composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.ConvTranspose2d(16, 33, 3, stride=2)
    ConvTranspose2d(16, 33, kernel_size=(3, 3), stride=(2, 2))
    """

    _dims = 2
    _function = staticmethod(F.conv_transpose2d)


class Conv3d(_Conv):
    """Applies a 3D convolution over an input signal composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.Conv3d(16, 33, (3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0))
    Conv3d(16, 33, kernel_size=(3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0))
    """

    _dims = 3
    _function = staticmethod(F.conv3d)


class ConvTranspose3d(_ConvTranspose):
    """Applies a 3D transposed convolution operator over an input image composed of several input planes.

    >>> import tensormodes as tm
    >>> tm.nn.ConvTranspose3d(16, 33, 3, stride=2)
    ConvTranspose3d(16, 33, kernel_size=(3, 3, 3), stride=(2, 2, 2))
    """

    _dims = 3
    _function = staticmethod(F.conv_transpose3d)
