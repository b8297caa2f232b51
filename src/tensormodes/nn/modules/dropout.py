"""Dropout layers: ``Dropout`` zeroes elements, ``Dropout1d`` / ``Dropout2d`` whole channels, with
probability ``p`` during training; ``AlphaDropout`` / ``FeatureAlphaDropout`` do the same for SELU
networks, keeping a standard input's mean and variance.

>>> import tensormodes as tm
>>> tm.nn.Dropout(p=0.2).eval()(tm.ones(3)).tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        """``p=..., inplace=...``."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """During training, randomly zeroes some of the elements of the input tensor with probability ``p``.

    The outputs are scaled by 1 / (1 - p) during training; in evaluation mode
    the module computes an identity function.

    >>> import tensormodes as tm
    >>> tm.nn.Dropout()
    Dropout(p=0.5, inplace=False)
    >>> y = tm.nn.Dropout(0.5)(tm.ones(1000))
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.dropout(input, p, training, inplace)``."""
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Randomly zero out entire channels (a channel is a 1D feature map) during training.

    Input (N, C, L) or (C, L); kept channels are scaled by 1 / (1 - p).

    >>> import tensormodes as tm
    >>> y = tm.nn.Dropout1d(0.5)(tm.ones(1, 200, 3))
    >>> bool((y == y[:, :, :1]).all()), sorted(set(y.flatten().tolist()))
    (True, [0.0, 2.0])
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.dropout1d(input, p, training, inplace)``."""
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Randomly zero out entire channels (a channel is a 2D feature map) during training.

    Input (N, C, H, W); kept channels are scaled by 1 / (1 - p). A 3D input is taken as
    (N, C, L), with PyTorch's warning.

    >>> import tensormodes as tm
    >>> tm.nn.Dropout2d(0.2)
    Dropout2d(p=0.2, inplace=False)
    >>> tm.nn.Dropout2d().eval()(tm.ones(1, 2, 1, 1)).tolist()
    [[[[1.0]], [[1.0]]]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.dropout2d(input, p, training, inplace)``."""
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Randomly zero out entire channels (a channel is a 3D feature map) during training.

    Input (N, C, D, H, W) or (C, D, H, W); kept channels are scaled by 1 / (1 - p).

    >>> import tensormodes as tm
    >>> tm.nn.Dropout3d(0.2)
    Dropout3d(p=0.2, inplace=False)
    >>> tm.nn.Dropout3d().eval()(tm.ones(1, 2, 1, 1, 1)).shape
    tensormodes.Size([1, 2, 1, 1, 1])
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.dropout3d(input, p, training, inplace)``."""
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (for SELU networks): during training each element is set, with probability
    ``p``, to SELU's negative saturation value, and all are scaled and shifted so that an input
    of zero mean and unit variance keeps them; in evaluation mode the identity.

    >>> import tensormodes as tm
    >>> tm.nn.AlphaDropout(0.2)
    AlphaDropout(p=0.2, inplace=False)
    >>> tm.nn.AlphaDropout().eval()(tm.ones(2)).tolist()
    [1.0, 1.0]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.alpha_dropout(input, p, training)`` (PyTorch's layer ignores ``inplace``)."""
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (dim 1 of an input such as (N, C, D, H, W)) during training.

    >>> import tensormodes as tm
    >>> y = tm.nn.FeatureAlphaDropout(0.5)(tm.ones(1, 40, 2))
    >>> bool((y == y[:, :, :1]).all())
    True
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.feature_alpha_dropout(input, p, training)`` (PyTorch's layer ignores ``inplace``)."""
        return F.feature_alpha_dropout(input, self.p, self.training)
