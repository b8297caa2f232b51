"""Padding layers: ``ReflectionPad{1,2,3}d``, ``ReplicationPad{1,2,3}d``, ``CircularPad{1,2,3}d``,
``ConstantPad{1,2,3}d`` and ``ZeroPad{1,2,3}d``; each calls ``F.pad`` with its mode.

``padding`` is an int (the same size on every side) or a sequence of ``2 * d`` sizes ordered
(left, right, top, bottom, front, back), kept as given, as PyTorch keeps it.

>>> import tensormodes as tm
>>> tm.nn.ZeroPad1d(1)(tm.tensor([[1.0, 2.0]])).tolist()
[[0.0, 1.0, 2.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._api import namespace as tm
from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _sizes(padding, dims: int) -> tuple:
    """``padding`` as a tuple: an iterable as given, a single size repeated on the ``2 * dims`` sides."""
    if isinstance(padding, Iterable):
        return tuple(padding)
    return (padding,) * (2 * dims)


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = ""
    _dims = 0

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sizes(padding, self._dims)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.pad(input, padding, mode)``."""
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        """The padding sizes."""
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dimension with the reflection of the input's boundary (the edge not repeated).

    >>> import tensormodes as tm
    >>> tm.nn.ReflectionPad1d(2)(tm.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dimensions with the reflection of the input's boundary.

    >>> import tensormodes as tm
    >>> tm.nn.ReflectionPad2d((1, 0, 0, 1))(tm.tensor([[[1.0, 2.0], [3.0, 4.0]]])).tolist()
    [[[2.0, 1.0, 2.0], [4.0, 3.0, 4.0], [2.0, 1.0, 2.0]]]
    """

    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last three dimensions with the reflection of the input's boundary.

    >>> import tensormodes as tm
    >>> tm.nn.ReflectionPad3d(1)(tm.zeros(1, 2, 2, 2)).shape
    tensormodes.Size([1, 4, 4, 4])
    """

    _dims = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dimension by repeating the input's boundary values.

    >>> import tensormodes as tm
    >>> tm.nn.ReplicationPad1d((1, 2))(tm.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 2.0, 2.0, 2.0]]
    """

    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dimensions by repeating the input's boundary values.

    >>> import tensormodes as tm
    >>> tm.nn.ReplicationPad2d(1)(tm.tensor([[[5.0]]])).tolist()
    [[[5.0, 5.0, 5.0], [5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]]
    """

    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last three dimensions by repeating the input's boundary values.

    >>> import tensormodes as tm
    >>> tm.nn.ReplicationPad3d(1)(tm.ones(1, 1, 1, 1)).sum().item()
    27.0
    """

    _dims = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.pad(input, padding, "circular")``, for a ``d + 1``- or ``d + 2``-dimensional input
        (ValueError otherwise)."""
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dimension with a circular (wrapped-around) copy of the input.

    >>> import tensormodes as tm
    >>> tm.nn.CircularPad1d(1)(tm.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last two dimensions with a circular (wrapped-around) copy of the input.

    >>> import tensormodes as tm
    >>> tm.nn.CircularPad2d((1, 0, 1, 0))(tm.tensor([[[1.0, 2.0], [3.0, 4.0]]])).tolist()
    [[[4.0, 3.0, 4.0], [2.0, 1.0, 2.0], [4.0, 3.0, 4.0]]]
    """

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last three dimensions with a circular (wrapped-around) copy of the input.

    >>> import tensormodes as tm
    >>> tm.nn.CircularPad3d(1)(tm.zeros(1, 1, 2, 2, 2)).shape
    tensormodes.Size([1, 1, 4, 4, 4])
    """

    _dims = 3


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]
    _mode = "constant"

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.pad(input, padding, "constant", value)``."""
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """``padding=..., value=...``."""
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with ``value`` (negative sizes crop).

    >>> import tensormodes as tm
    >>> tm.nn.ConstantPad1d((1, 0), 3.5)(tm.tensor([[1.0]])).tolist()
    [[3.5, 1.0]]
    """

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dimensions with ``value`` (negative sizes crop).

    >>> import tensormodes as tm
    >>> tm.nn.ConstantPad2d(1, -1.0)(tm.tensor([[2.0]])).tolist()
    [[-1.0, -1.0, -1.0], [-1.0, 2.0, -1.0], [-1.0, -1.0, -1.0]]
    """

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dimensions with ``value`` (negative sizes crop).

    >>> import tensormodes as tm
    >>> tm.nn.ConstantPad3d(1, 2.0)(tm.zeros(1, 1, 1)).sum().item()
    52.0
    """

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding sizes."""
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pads the last dimension with zeros (negative sizes crop).

    >>> import tensormodes as tm
    >>> tm.nn.ZeroPad1d((0, 2))
    ZeroPad1d((0, 2))
    """

    _dims = 1


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pads the last two dimensions with zeros (negative sizes crop).

    >>> import tensormodes as tm
    >>> tm.nn.ZeroPad2d(1)(tm.ones(1, 1, 1)).tolist()
    [[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]
    """

    _dims = 2


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pads the last three dimensions with zeros (negative sizes crop).

    >>> import tensormodes as tm
    >>> tm.nn.ZeroPad3d(1)(tm.ones(1, 1, 1, 1)).shape
    tensormodes.Size([1, 3, 3, 3])
    """

    _dims = 3
