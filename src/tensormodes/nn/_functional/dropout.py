"""``nn.functional.dropout``, ``alpha_dropout`` and ``feature_alpha_dropout``; and the functions of
``tensormodes`` they are in PyTorch (``tensormodes.dropout``, ``dropout_``, ``feature_dropout`` ...).
"""

from __future__ import annotations

import math

from ..._ops.random import strides_memory_axes
from ..._ops.registry import Tensor
from ._common import _function, _public, _top_level
from .pooling import _feature_dropout


def _empty_like(input: Tensor) -> Tensor:
    """An empty tensor laid out as PyTorch's ``empty_like(input)`` (the order of the input's
    strides), so that samplers filling it in memory order draw PyTorch's values where it has them."""
    if input.dim() < 2 or input.is_contiguous() or input.numel() == 0:
        return _function("empty_like")(input)
    axes = strides_memory_axes(tuple(input.shape), tuple(input.stride()))
    if axes is None:
        return _function("empty_like")(input)
    inverse = sorted(range(len(axes)), key=axes.__getitem__)
    return input.new_empty(tuple(input.shape[axis] for axis in axes)).permute(inverse)


@_public
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (training only).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.dropout(tm.ones(3), p=0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        result = input * 0.0
        return input.copy_(result) if inplace else result
    # PyTorch's CPU steps, so the same seed drops the same elements: a noise tensor of 0s
    # and 1s (``bernoulli_(1 - p)``: kept where a double uniform is below 1 - p), divided by
    # 1 - p, times the input.
    noise = _empty_like(input).bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


# SELU's negative saturation, -scale * alpha: where alpha dropout sends a dropped element.
_SELU_SATURATION = 1.7580993408473766


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """PyTorch's steps for (feature) alpha dropout, so the same seed drops the same elements: a
    noise tensor of 0s and 1s from ``bernoulli_(1 - p)`` (one per channel for ``feature``), then
    ``input * noise * a + (noise - 1) * alpha * a + alpha * a * p``, which keeps a standard
    input's mean and variance."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if p == 1.0:
        zero = _function("zeros")((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (*input.shape[:2], *(1,) * (input.dim() - 2))
        noise = input.new_empty(shape)
    else:
        noise = _empty_like(input)
    noise.bernoulli_(1 - p)
    a = 1.0 / math.sqrt((_SELU_SATURATION * _SELU_SATURATION * p + 1) * (1 - p))
    shift = noise.add(-1).mul_(_SELU_SATURATION * a).add_(_SELU_SATURATION * a * p)
    noise.mul_(a)
    return input.mul_(noise).add_(shift) if inplace else (input * noise).add_(shift)


@_public
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout (for SELU networks): each element is set, with probability ``p``, to SELU's
    negative saturation value, then all are scaled and shifted so that an input of zero mean and
    unit variance keeps them (training only).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> _ = tm.manual_seed(0)
    >>> F.alpha_dropout(tm.ones(4), 0.5, training=True)
    tensor([-0.7792, -0.7792,  1.6656, -0.7792])
    """
    return _alpha_dropout(input, p, training, inplace, feature=False)


@_public
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dim 1 of an input of at least 2 dimensions): a dropped
    channel is set to SELU's negative saturation value, then all are scaled and shifted as in
    ``alpha_dropout`` (training only).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> y = F.feature_alpha_dropout(tm.ones(1, 50, 3), 0.5, training=True)
    >>> bool((y == y[:, :, :1]).all()), len(set(y.flatten().tolist()))
    (True, 2)
    """
    return _alpha_dropout(input, p, training, inplace, feature=True)


# -- tensormodes.dropout ...: the functions nn.functional's dropouts run in PyTorch ------------------
# (``torch.dropout(input, p, train)`` and the in-place ``torch.dropout_``: every argument required,
# a RuntimeError for a bad probability, as ATen's)

def _checked(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _needs_features(input: Tensor, p: float, train: bool) -> None:
    # checked where ATen draws the channels' noise: after its early returns
    if train and p not in (0.0, 1.0) and input.numel() and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")


def _dropout_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.dropout``: ``nn.functional.dropout(input, p, train)``.

    >>> import tensormodes as tm
    >>> tm.dropout(tm.ones(3), 0.5, False).tolist()
    [1.0, 1.0, 1.0]
    """
    _checked(p)
    return dropout(input, p, train)


def _dropout_inplace_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.dropout_``: ``nn.functional.dropout(input, p, train, inplace=True)``.

    >>> import tensormodes as tm
    >>> x = tm.ones(3)
    >>> tm.dropout_(x, 1.0, True) is x, x.tolist()
    (True, [0.0, 0.0, 0.0])
    """
    _checked(p)
    return dropout(input, p, train, inplace=True)


def _feature_dropout_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.feature_dropout``: whole channels (dim 1) dropped, as ``dropout2d``.

    >>> import tensormodes as tm
    >>> tm.feature_dropout(tm.ones(1, 2, 3), 0.5, False).shape
    tensormodes.Size([1, 2, 3])
    """
    _checked(p)
    _needs_features(input, p, train)
    return _feature_dropout(input, p, train, False)


def _feature_dropout_inplace_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.feature_dropout_``: ``feature_dropout`` written into ``input``.

    >>> import tensormodes as tm
    >>> x = tm.ones(1, 2, 3)
    >>> tm.feature_dropout_(x, 1.0, True) is x, x.sum().item()
    (True, 0.0)
    """
    _checked(p)
    _needs_features(input, p, train)
    return _feature_dropout(input, p, train, True)


def _alpha_dropout_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.alpha_dropout``: ``nn.functional.alpha_dropout(input, p, train)``.

    >>> import tensormodes as tm
    >>> tm.alpha_dropout(tm.ones(2), 0.5, False).tolist()
    [1.0, 1.0]
    """
    _checked(p)
    return _alpha_dropout(input, p, train, False, feature=False)


def _alpha_dropout_inplace_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.alpha_dropout_``: ``alpha_dropout`` written into ``input``.

    >>> import tensormodes as tm
    >>> x = tm.ones(2)
    >>> tm.alpha_dropout_(x, 0.5, False) is x
    True
    """
    _checked(p)
    return _alpha_dropout(input, p, train, True, feature=False)


def _feature_alpha_dropout_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.feature_alpha_dropout``: ``nn.functional.feature_alpha_dropout(input, p, train)``.

    >>> import tensormodes as tm
    >>> tm.feature_alpha_dropout(tm.ones(1, 2), 0.5, False).tolist()
    [[1.0, 1.0]]
    """
    _checked(p)
    return _alpha_dropout(input, p, train, False, feature=True)


def _feature_alpha_dropout_inplace_function(input: Tensor, p: float, train: bool) -> Tensor:
    """``tensormodes.feature_alpha_dropout_``: ``feature_alpha_dropout`` written into ``input``.

    >>> import tensormodes as tm
    >>> x = tm.ones(1, 2)
    >>> tm.feature_alpha_dropout_(x, 0.5, False) is x
    True
    """
    _checked(p)
    return _alpha_dropout(input, p, train, True, feature=True)


for _name, _impl in (("dropout", _dropout_function), ("dropout_", _dropout_inplace_function),
                     ("feature_dropout", _feature_dropout_function),
                     ("feature_dropout_", _feature_dropout_inplace_function),
                     ("alpha_dropout", _alpha_dropout_function), ("alpha_dropout_", _alpha_dropout_inplace_function),
                     ("feature_alpha_dropout", _feature_alpha_dropout_function),
                     ("feature_alpha_dropout_", _feature_alpha_dropout_inplace_function)):
    _top_level(_impl, name=_name)
