"""Functional neural-network ops, as in ``torch.nn.functional``.

Each is a Python-level composite of public ops that takes part in the
protocol on its own: handlers see ``F.relu`` itself, and the ops it calls run
below the mode that handled it.

>>> import tensormodes as tm
>>> import tensormodes.nn.functional as F
>>> F.relu(tm.tensor([-1., 2.])).tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

from .. import _functions

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["relu", "gelu", "silu", "softmax", "log_softmax", "linear", "dropout", "mse_loss", "nll_loss",
           "cross_entropy"]

_public = _functions.composite(__name__)
# Functions PyTorch implements in C++ hand handlers only the arguments given.
_builtin = _functions.composite(__name__, pass_defaults=False)
_ops = _functions.FUNCTIONS


@_public
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Rectified linear unit, ``max(input, 0)`` elementwise.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.relu(tm.tensor([-2., 0.5])).tolist()
    [0.0, 0.5]
    """
    return input.relu_() if inplace else input.relu()


@_builtin
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.gelu(tm.tensor([1.0])).item(), 4)
    0.8413
    """
    if approximate == "none":
        return input * 0.5 * (1.0 + (input * (1.0 / math.sqrt(2.0))).erf())
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return input * 0.5 * (1.0 + inner.tanh())
    raise RuntimeError("approximate argument must be either none or tanh.")


@_public
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """Sigmoid linear unit, ``x * sigmoid(x)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.silu(tm.tensor([0.0])).tolist()
    [0.0]
    """
    result = input * input.sigmoid()
    return input.copy_(result) if inplace else result


def _softmax_dim(ndim: int) -> int:
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=4)
    return 0 if ndim in (0, 1, 3) else 1


@_public
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed stably.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.softmax(tm.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return input.softmax(dim, dtype=dtype)


@_public
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``log(softmax(x))``, computed stably.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.log_softmax(tm.tensor([0., 0.]), dim=0)[0].item(), 4)
    -0.6931
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return input.log_softmax(dim, dtype=dtype)


# Native in PyTorch (torch._C._nn): single ops of the op table, declared in _ops/nn.py.
linear = _functions.namespace_function(__name__, "linear")
nll_loss = _functions.namespace_function(__name__, "nll_loss")
# cross_entropy's common case, fused (PyTorch's torch._C._nn.cross_entropy_loss): one op, one node.
_cross_entropy_loss = _functions.public_function("_cross_entropy_loss")


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
    else:
        keep = _ops["rand_like"](input) >= p
        result = input * keep * (1.0 / (1.0 - p))
    return input.copy_(result) if inplace else result


def _reduction_from_legacy(size_average, reduce) -> str:
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


@_public
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error between ``input`` and ``target``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.mse_loss(tm.tensor([1., 2.]), tm.tensor([1., 4.])).item()
    2.0
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction_from_legacy(size_average, reduce)
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have "
                      "the same size.", UserWarning, stacklevel=3)
    loss = (input - target) ** 2
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_public
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits ``input`` (classes in dim 1, or dim 0 unbatched) and
    ``target`` class indices or class probabilities.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.cross_entropy(tm.tensor([[0., 0.]]), tm.tensor([1])).item(), 4)
    0.6931
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction_from_legacy(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if label_smoothing == 0 and not target.is_floating_point():
        # Class indices, no smoothing: the common case is one op, log_softmax and nll_loss fused (it
        # checks the target's dtype, as nll_loss does).
        return _cross_entropy_loss(input, target, weight, reduction, ignore_index)
    class_dim = 1 if input.dim() >= 2 else 0
    classes = input.shape[class_dim]
    log_probs = input.log_softmax(class_dim)
    class_weight = None
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = classes
        class_weight = weight.reshape(shape)
    if target.is_floating_point():
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        weighted = log_probs * target if class_weight is None else log_probs * target * class_weight
        loss = -weighted.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // classes) if input.dim() else loss.sum()
        return _reduce(loss, reduction)
    if target.is_complex():
        raise RuntimeError("expected scalar type Long but found " + str(target.dtype))
    keep = target != ignore_index
    safe_target = target.where(keep, 0)
    picked = -log_probs.gather(class_dim, safe_target.unsqueeze(class_dim)).squeeze(class_dim)
    sample_weight = keep.to(input.dtype) if weight is None else weight[safe_target] * keep
    nll = picked * sample_weight
    per_class = log_probs if class_weight is None else log_probs * class_weight
    smooth = -per_class.sum(class_dim) * keep
    if reduction == "mean":
        denominator = sample_weight.sum()
        return ((1 - label_smoothing) * nll.sum() + label_smoothing / classes * smooth.sum()) / denominator
    return _reduce((1 - label_smoothing) * nll + label_smoothing / classes * smooth, reduction)
