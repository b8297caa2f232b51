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

from .. import _dispatch, _dtype, _functions
from .._ops._common import cpp_type_name, not_implemented, scalar_type_name
from .._ops.nn import legacy_reduction
from ._functional import pooling as _pooling
from ._functional.pooling import (  # noqa: F401 - re-exported
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    dropout1d,
    dropout2d,
    embedding_bag,
    fold,
    interpolate,
    max_pool1d,
    max_pool2d,
    max_unpool2d,
    unfold,
)

if TYPE_CHECKING:
    from numbers import Number

    from .._tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", *_pooling.__all__,
           "relu", "gelu", "silu", "softmax", "log_softmax", "linear", "dropout", "mse_loss", "nll_loss",
           "cross_entropy", "leaky_relu", "elu", "hardtanh", "relu6", "softplus", "logsigmoid", "softsign",
           "tanhshrink", "glu", "layer_norm", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity", "pairwise_distance", "normalize",
           "one_hot", "sigmoid", "tanh", "softmin", "threshold", "hardswish", "hardsigmoid", "mish", "selu", "celu",
           "prelu", "pad", "embedding", "batch_norm", "group_norm", "instance_norm", "scaled_dot_product_attention",
           "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss",
           "poisson_nll_loss", "gaussian_nll_loss", "triplet_margin_loss"]

_public = _functions.composite(__name__)
# Functions PyTorch implements in C++ hand handlers only the arguments given.
_builtin = _functions.composite(__name__, pass_defaults=False)
_function = _functions.public_function


def _apply(function, input: Tensor, inplace: bool) -> Tensor:
    """``function(input)``, or written into ``input`` when ``inplace`` (computed from a copy, so
    the values its gradient needs are not overwritten)."""
    if not inplace:
        return function(input)
    return input.copy_(function(input.clone()))


def _exponential_linear(x: Tensor, alpha: float, input_scale: float) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x * input_scale) - 1)`` elsewhere; the exponential
    sees only non-positive inputs, so a large ``x`` cannot make its (unused) gradient NaN."""
    negative = x.clamp(max=0)
    return x.where(x > 0, ((negative * input_scale).exp() - 1) * alpha)


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
    return _apply(lambda x: x * x.sigmoid(), input, inplace)


def _softmax_dim(ndim: int, name: str = "softmax") -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
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
binary_cross_entropy = _functions.namespace_function(__name__, "binary_cross_entropy")
# PyTorch's F.conv2d is torch.conv2d itself: the same functions here.
conv1d = _function("conv1d")
conv2d = _function("conv2d")
conv_transpose1d = _function("conv_transpose1d")
conv_transpose2d = _function("conv_transpose2d")


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
        keep = _function("rand_like")(input) >= p
        result = input * keep * (1.0 / (1.0 - p))
    return input.copy_(result) if inplace else result


def _reduction_from_legacy(size_average, reduce, reduction: str, stacklevel: int = 4) -> str:
    """``reduction``, or what the deprecated ``size_average`` / ``reduce`` say when either is
    given (with PyTorch's warning)."""
    if size_average is None and reduce is None:
        return reduction
    return legacy_reduction(size_average, reduce, stacklevel)


def _checked_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction of a loss PyTorch computes natively, read and checked up front as its
    ``_Reduction.get_enum`` does (``'elementwise_mean'`` is a deprecated ``'mean'``)."""
    if size_average is not None or reduce is not None:
        return _reduction_from_legacy(size_average, reduce, reduction, stacklevel=5)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      UserWarning, stacklevel=5)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _warn_on_broadcast(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have "
                      "the same size.", UserWarning, stacklevel=4)


def _weighted(loss: Tensor, weight: Tensor | None) -> Tensor:
    return loss if weight is None else loss * weight


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
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    _warn_on_broadcast(input, target)
    return _reduce(_weighted((input - target) ** 2, weight), reduction)


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
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
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


# -- more activations ------------------------------------------------------------------------

@_public
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.leaky_relu(tm.tensor([-2.0, 3.0]), 0.5).tolist()
    [-1.0, 3.0]
    """
    return _apply(lambda x: x.where(x > 0, x * negative_slope), input, inplace)


@_public
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.elu(tm.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _apply(lambda x: _exponential_linear(x, alpha, 1.0), input, inplace)


@_public
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``; the gradient is zero at and beyond the bounds.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardtanh(tm.tensor([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    # where() rather than clamp: PyTorch's gradient is zero at the bounds too.
    return _apply(lambda x: x.where((x > min_val) & (x < max_val), x.detach().clamp(min_val, max_val)), input,
                  inplace)


@_public
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(input, 0, 6)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.relu6(tm.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """
    return hardtanh(input, 0.0, 6.0, inplace)


@_builtin
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.softplus(tm.tensor([0.0])).item(), 4)
    0.6931
    """
    scaled = input * beta
    # The logarithm's branch sees at most the threshold: beyond it exp would overflow, and its
    # (unused) gradient turn the result's into NaN.
    return input.where(scaled > threshold, scaled.clamp(max=threshold).exp().log1p() / beta)


def _softplus_of_negative(x: Tensor) -> Tensor:
    """``log(1 + exp(-x))`` without overflow, each branch smooth (so the gradient at 0 is -1/2):
    ``-x + log(1 + exp(x))`` for negative ``x``, else ``log(1 + exp(-x))``. Each branch gets
    the inputs it is meant for, so the other's overflow cannot turn its zero gradient into NaN."""
    negative, positive = x.clamp(max=0), x.clamp(min=0)
    return (negative.exp().log1p() - negative).where(x < 0, (-positive).exp().log1p())


@_builtin
def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed without overflow.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.logsigmoid(tm.tensor([0.0])).item(), 4)
    -0.6931
    """
    return -_softplus_of_negative(input)


@_public
def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.softsign(tm.tensor([1.0, -3.0])).tolist()
    [0.5, -0.75]
    """
    return input / (input.abs() + 1)


@_public
def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.tanhshrink(tm.tensor([0.0])).tolist()
    [0.0]
    """
    return input - input.tanh()


@_public
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``input`` along ``dim`` times the sigmoid of the second.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.glu(tm.tensor([2.0, 0.0])).tolist()
    [1.0]
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {size}")
    first, second = input.chunk(2, dim)
    return first * second.sigmoid()


@_public
def layer_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dimensions (mean 0, biased variance 1),
    then scale by ``weight`` and shift by ``bias``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.layer_norm(tm.tensor([[1.0, 3.0]]), [2], eps=0.0).tolist()
    [[-1.0, 1.0]]
    """
    if isinstance(normalized_shape, int):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    shape = list(normalized_shape)
    if list(input.shape[input.dim() - len(shape):]) != shape or len(shape) > input.dim():
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    result, _, _ = _standardised(input, list(range(input.dim() - len(shape), input.dim())), eps)
    if weight is not None:
        result = result * weight
    if bias is not None:
        result = result + bias
    return result


# -- more losses -----------------------------------------------------------------------------

@_public
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error between ``input`` and ``target``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.l1_loss(tm.tensor([1.0, 2.0]), tm.tensor([1.0, 4.0])).item()
    1.0
    """
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    _warn_on_broadcast(input, target)
    return _reduce(_weighted((input - target).abs(), weight), reduction)


@_public
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta`` (``d = input - target``), ``|d| - 0.5 * beta`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.smooth_l1_loss(tm.tensor([0.0, 3.0]), tm.tensor([0.5, 0.0]), reduction="sum").item()
    2.625
    """
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _warn_on_broadcast(input, target)
    size = (input - target).abs()
    if beta == 0:
        return _reduce(size, reduction)
    return _reduce(size.where(size >= beta, size * size * (0.5 / beta)) - (size >= beta) * (0.5 * beta), reduction)


@_public
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta`` (``d = input - target``), ``delta * (|d| - 0.5 * delta)`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.huber_loss(tm.tensor([0.0, 3.0]), tm.tensor([0.5, 0.0]), reduction="sum").item()
    2.625
    """
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _warn_on_broadcast(input, target)
    size = (input - target).abs()
    loss = (size * size * 0.5).where(size < delta, (size - 0.5 * delta) * delta)
    return _reduce(_weighted(loss, weight), reduction)


@_public
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy between ``sigmoid(input)`` and ``target``, computed from the logits
    without overflow; ``pos_weight`` scales the positive term.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.binary_cross_entropy_with_logits(tm.tensor([0.0]), tm.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    softplus_negative = _softplus_of_negative(input)
    if pos_weight is None:
        loss = (1 - target) * input + softplus_negative
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_negative
    return _reduce(_weighted(loss, weight), reduction)


@_public
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence of ``target`` from log-probabilities ``input``:
    ``target * (log(target) - input)`` (0 where target is 0), or with ``log_target=True``
    ``exp(target) * (target - input)``. ``reduction='batchmean'`` divides the sum by the batch size.
    Where ``target`` is 0 its gradient is 0 (PyTorch's is NaN there).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.kl_div(tm.tensor([0.5, 0.5]).log(), tm.tensor([0.5, 0.5]), reduction="sum").item()
    0.0
    """
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=3)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        loss = (target * target.where(positive, 1).log()).where(positive, 0) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


# -- distances -------------------------------------------------------------------------------

@_builtin
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (they broadcast); each
    norm is at least ``eps``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.cosine_similarity(tm.tensor([[1.0, 0.0]]), tm.tensor([[2.0, 0.0]])).tolist()
    [1.0]
    """
    common = _function("result_type")(x1, x2)
    if not (common.is_floating_point or common.is_complex):
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{str(common).split('.')[-1].capitalize().replace('Int64', 'Long')}")
    x1, x2 = _function("broadcast_tensors")(x1, x2)
    norm1 = x1.norm(dim=dim, keepdim=True).clamp(min=eps)
    norm2 = x2.norm(dim=dim, keepdim=True).clamp(min=eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


@_builtin
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dimension.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.pairwise_distance(tm.tensor([[3.0, 0.0]]), tm.tensor([[0.0, 4.0]]), eps=0.0).tolist()
    [5.0]
    """
    difference = x1 - x2 + eps
    dim = -1 if difference.dim() else None
    return difference.norm(p, dim=dim, keepdim=keepdim)


@_public
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.normalize(tm.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    denominator = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    if out is None:
        return input / denominator
    return _function("div")(input, denominator, out=out)


@_builtin
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encodings of class indices: a new last dimension of ``num_classes``
    (by default one more than the largest index).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.one_hot(tm.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if str(tensor.dtype) != "tensormodes.int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    if tensor.numel():
        if tensor.min().item() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if tensor.max().item() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == _function("arange")(num_classes)).long()


# -- activations, continued ------------------------------------------------------------------

def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` elementwise: ``input.sigmoid()``. Like PyTorch's, this function is
    outside the protocol (handlers see ``Tensor.sigmoid``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.sigmoid(tm.tensor([0.0])).tolist()
    [0.5]
    """
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent elementwise: ``input.tanh()``. Like PyTorch's, this function is
    outside the protocol (handlers see ``Tensor.tanh``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.tanh(tm.tensor([0.0])).tolist()
    [0.0]
    """
    return input.tanh()


# PyTorch's F.sigmoid and F.tanh call the Tensor methods without dispatching themselves.
_dispatch.IGNORED.update({sigmoid, tanh})


@_public
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.softmin(tm.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim(input.dim(), "softmin")
    return (-input).softmax(dim, dtype=dtype)


def _require_floating(input: Tensor, kernel: str) -> None:
    if not input.is_floating_point():
        raise not_implemented(kernel, input.dtype)


@_public
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere (in ``input``'s dtype).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.threshold(tm.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    def apply(x: Tensor) -> Tensor:
        result = x.where(x > threshold, value)
        # An integer input keeps its dtype, as PyTorch's kernel casts value.
        return result if result.dtype == x.dtype else result.to(x.dtype)

    return _apply(apply, input, inplace)


@_public
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``: 0 up to -3, ``x`` from 3.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardswish(tm.tensor([0.0, 3.0, 4.0])).tolist()
    [0.0, 3.0, 4.0]
    """
    _require_floating(input, "hardswish_cpu")
    def apply(x: Tensor) -> Tensor:
        # PyTorch computes x * clamp(x + 3, 0, 6) / 6 everywhere (so x * 6 / 6 from 3 on, -0.0 below -3);
        # each piece is written out so the gradient is x / 3 + 1/2 strictly inside, 0 at -3 and 1 at 3.
        outside = (x * 6 / 6).where(x >= 3, x * 0.0 / 6)
        return (x * (x + 3) / 6).where((x > -3) & (x < 3), outside)

    return _apply(apply, input, inplace)


_ONE_SIXTH_AS_FLOAT32 = 0.16666667163372040


@_public
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; the gradient is 1/6 strictly between -3 and 3, else 0.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardsigmoid(tm.tensor([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    _require_floating(input, "hardsigmoid_cpu")
    def apply(x: Tensor) -> Tensor:
        inside = (x > -3) & (x < 3)
        value = (x.detach() + 3).clamp(0, 6) / 6
        # PyTorch's gradient uses 1/6 rounded to float32 even for float64 input: add an exact zero
        # that carries that slope.
        return value + (x - x.detach()).where(inside, 0.0) * _ONE_SIXTH_AS_FLOAT32

    return _apply(apply, input, inplace)


@_public
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.mish(tm.tensor([0.0])).tolist()
    [0.0]
    """
    _require_floating(input, "mish_cpu")
    return _apply(lambda x: x * _softplus_of_negative(-x).tanh(), input, inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_public
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants
    ``alpha = 1.6732632...`` and ``scale = 1.0507009...``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.selu(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [0.0, 1.0507009873554805]
    """
    _require_floating(input, "elu_cpu")
    return _apply(lambda x: _exponential_linear(x, _SELU_ALPHA, 1.0) * _SELU_SCALE, input, inplace)


@_public
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x / alpha) - 1)`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.celu(tm.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _require_floating(input, "elu_cpu")
    return _apply(lambda x: _exponential_linear(x, alpha, 1.0 / alpha), input, inplace)


@_builtin
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; a 1-D ``weight`` holds one slope per
    channel (dimension 1), or a single slope for all.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.prelu(tm.tensor([[-2.0, 3.0]]), tm.tensor([0.25])).tolist()
    [[-0.5, 3.0]]
    """
    if input.dim() == 0:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_type_name(input.dtype)} and "
                           f"{scalar_type_name(weight.dtype)}")
    _require_floating(input, "prelu_cpu")
    if weight.numel() == 1:
        slope = weight.reshape(())
    else:
        slope = weight.reshape([channels] + [1] * (input.dim() - 2))
    return input.where(input > 0, input * slope)


# -- padding ---------------------------------------------------------------------------------

_NON_CONSTANT_PADDING = ("Supported combinations for non-constant padding:\n"
                         "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                         "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                         "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _padding_sizes(pad) -> list[int]:
    if not isinstance(pad, (list, tuple)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for position, size in enumerate(pad):
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(size).__name__} at pos {position}")
    return list(pad)


def _pad_constant(input: Tensor, sizes: list[int], value) -> Tensor:
    result = input
    for pair in range(len(sizes) // 2):
        dim = input.dim() - 1 - pair
        before, after = sizes[2 * pair], sizes[2 * pair + 1]
        # Negative sizes crop first; then the constant blocks go on either side.
        length = result.shape[dim] + min(before, 0) + min(after, 0)
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        result = result.narrow(dim, max(-before, 0), length)
        parts = []
        for size in (before, after):
            shape = list(result.shape)
            shape[dim] = max(size, 0)
            parts.append(result.new_full(shape, value))
        result = _function("cat")([parts[0], result, parts[1]], dim)
    return result


def _source_index(position: int, size: int, mode: str) -> int:
    """The input index that output position ``position`` (counted from the input's start,
    so negative before it) copies in the non-constant modes."""
    if mode == "replicate":
        return min(max(position, 0), size - 1)
    if mode == "circular":
        return position % size
    position = abs(position)  # reflect: the edge itself is not repeated
    return 2 * (size - 1) - position if position > size - 1 else position


def _check_non_constant_padding(input: Tensor, sizes: list[int], mode: str) -> None:
    pairs = len(sizes) // 2
    if pairs not in (1, 2, 3) or input.dim() not in (pairs + 1, pairs + 2):
        raise NotImplementedError(f"Padding size {len(sizes)} is not supported for {input.dim()}D input tensor.\n"
                                  + _NON_CONSTANT_PADDING)
    shape = list(input.shape)
    if mode in ("reflect", "replicate"):
        batched = input.dim() == pairs + 2
        if any(size == 0 for size in shape[1 if batched else 0:]):
            raise RuntimeError(f"Expected {pairs + 1}D or {pairs + 2}D (batch mode) tensor with possibly 0 batch "
                               f"size and other non-zero dimensions for input, but got: {shape}")
    for pair in range(pairs):
        dim = input.dim() - 1 - pair
        before, after = sizes[2 * pair], sizes[2 * pair + 1]
        if mode == "reflect" and not (before < shape[dim] and after < shape[dim]):
            raise RuntimeError(f"Argument #{2 * pairs + 2}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input {shape}")
        if mode == "circular":
            if before > shape[dim] or after > shape[dim]:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            cropped = shape[dim] + min(before, 0) + min(after, 0)
            if cropped < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
            if max(before, after) > cropped:
                # PyTorch reads out of bounds here (garbage or an aliasing error).
                raise RuntimeError("Padding value causes wrapping around more than once.")


@_public
def pad(input: Tensor, pad: list[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions of ``input``: ``pad`` lists (before, after)
    sizes starting from the last dimension. ``mode`` is ``'constant'`` (filled with ``value``,
    default 0; negative sizes crop), ``'reflect'``, ``'replicate'`` or ``'circular'``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.pad(tm.tensor([[1, 2]]), (1, 2)).tolist()
    [[0, 1, 2, 0, 0]]
    >>> F.pad(tm.tensor([[1., 2., 3.]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    sizes = _padding_sizes(pad)
    if len(sizes) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(sizes) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(sizes)} and input of dimension {input.dim()}")
    if mode == "constant":
        return _pad_constant(input, sizes, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    _check_non_constant_padding(input, sizes, mode)
    result = input
    for pair in range(len(sizes) // 2):
        dim = input.dim() - 1 - pair
        before, after = sizes[2 * pair], sizes[2 * pair + 1]
        if mode == "circular":  # negative sizes crop first, then the rest wraps around what is left
            result = result.narrow(dim, max(-before, 0), result.shape[dim] + min(before, 0) + min(after, 0))
            before, after = max(before, 0), max(after, 0)
        size = result.shape[dim]
        index = [_source_index(position, size, mode) for position in range(-before, size + after)]
        # index_select's gradient adds up the copies, so each source gets every use's gradient.
        result = result.index_select(dim, _function("tensor")(index, dtype=_dtype.int64))
    return result


# -- embedding -------------------------------------------------------------------------------

def _renormalise_rows(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale in place each row of ``weight`` that ``input`` uses whose ``norm_type``-norm exceeds
    ``max_norm`` down to ``max_norm`` (PyTorch's ``embedding_renorm_``; not recorded by autograd)."""
    rows = weight.detach()
    for index in _function("unique")(input).tolist():
        norm = rows[index].norm(norm_type).item()
        if norm > max_norm:
            rows[index] = rows[index] * (max_norm / (norm + 1e-7))


@_public
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer indices ``input``: ``weight[input]``. The row
    ``padding_idx`` gets no gradient; with ``max_norm`` the rows used are first renormalised in
    place; with ``scale_grad_by_freq`` each row's gradient is divided by how often it is used.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.embedding(tm.tensor([2, 0]), tm.tensor([[1., 1.], [2., 2.], [3., 3.]])).tolist()
    [[3.0, 3.0], [1.0, 1.0]]
    """
    rows = weight.shape[0] if weight.dim() else 0
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= rows or padding_idx < 0 and padding_idx < -rows:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= max(rows, 1)
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{scalar_type_name(input.dtype)}Tensor instead (while checking "
                           f"arguments for embedding)")
    if input.numel() and (input.min().item() < 0 or input.max().item() >= rows):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renormalise_rows(weight, input, max_norm, norm_type)
    index = input.long()
    result = weight[index]
    if scale_grad_by_freq and input.numel():
        # Same value (the difference is exactly zero), gradient divided by each index's count.
        counts = _function("bincount")(index.reshape(-1), minlength=rows)[index].unsqueeze(-1)
        result = result.detach() + (result - result.detach()) / counts
    if padding_idx is not None:
        result = result.where(index.unsqueeze(-1) != padding_idx, result.detach())
    return result


# -- normalisation ---------------------------------------------------------------------------

def _channel_shaped(parameter: Tensor | None, ndim: int) -> Tensor | None:
    """A per-channel vector shaped to broadcast against a ``(N, C, *)`` input."""
    return None if parameter is None else parameter.reshape([-1] + [1] * (ndim - 2))


def _standardised(x: Tensor, dims: list[int], eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``x`` less its mean over ``dims``, over the square root of its biased variance plus
    ``eps``; with that mean and variance (kept dimensions)."""
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    variance = (centred * centred).mean(dims, keepdim=True)
    return centred * (variance + eps).rsqrt(), mean, variance


def _working_copy(input: Tensor) -> Tensor:
    """The input to normalise: float16 / bfloat16 ones in float32, as PyTorch's CPU kernels
    compute their statistics."""
    return input.float() if input.dtype in (_dtype.float16, _dtype.bfloat16) else input


def _affine(result: Tensor, weight: Tensor | None, bias: Tensor | None, dtype) -> Tensor:
    """Scale and shift per channel, then return to the input's ``dtype``."""
    ndim = result.dim()
    if weight is not None:
        result = result * _channel_shaped(weight, ndim)
    if bias is not None:
        result = result + _channel_shaped(bias, ndim)
    return result if result.dtype == dtype else result.to(dtype)


def _check_normalisation_arguments(channels: int, copies: int, training: bool, running_mean: Tensor | None,
                                   running_var: Tensor | None, weight: Tensor | None, bias: Tensor | None) -> None:
    """PyTorch's batch_norm checks, in its order; instance_norm's per-channel tensors count
    ``copies`` times (one per sample), as PyTorch repeats them."""
    given = (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias))
    for name, tensor in given:
        if tensor is None:
            if not training and name.startswith("running"):
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        elif tensor.numel() * copies != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {tensor.numel() * copies}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")


def _check_parameter_dtypes(input: Tensor, *parameters: Tensor | None) -> None:
    """PyTorch's CPU rule for normalisation parameters of another dtype than the input: only
    float32 parameters, and only for a float16 / bfloat16 input."""
    given = [parameter for parameter in parameters if parameter is not None]
    if all(parameter.dtype == input.dtype for parameter in given):
        return
    if any(parameter.dtype != _dtype.float32 for parameter in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _update_running(running: Tensor | None, statistic: Tensor, momentum: float) -> None:
    if running is not None:
        running.copy_(statistic.detach() * momentum + running.detach() * (1 - momentum))


@_public
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dimension 1) over the batch and spatial dimensions. In training
    the batch's statistics are used and the running ones updated in place (the running variance
    with the unbiased estimate); otherwise the running statistics are used.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> mean, var = tm.zeros(1), tm.ones(1)
    >>> F.batch_norm(tm.tensor([[1.0], [3.0]]), mean, var, training=True, eps=0.0).tolist()
    [[-1.0], [1.0]]
    >>> mean.tolist(), var.tolist()
    ([0.20000000298023224], [1.100000023841858])
    """
    size = list(input.shape)
    if training:
        values_per_channel = size[0] * math.prod(size[2:])
        if values_per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    channels = input.size(1)
    _check_normalisation_arguments(channels, 1, training, running_mean, running_var, weight, bias)
    _check_parameter_dtypes(input, weight, bias, running_mean, running_var)
    x = _working_copy(input)
    if training:
        result, mean, variance = _standardised(x, [0] + list(range(2, x.dim())), eps)
        count = x.numel() // channels
        _update_running(running_mean, mean.reshape(-1), momentum)
        _update_running(running_var, variance.reshape(-1) * (count / (count - 1)), momentum)
    else:
        result = (x - _channel_shaped(running_mean, x.dim())) * (_channel_shaped(running_var, x.dim()) + eps).rsqrt()
    return _affine(result, weight, bias, input.dtype)


@_public
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Split the channels (dimension 1) into ``num_groups`` groups and normalise each group of
    each sample; then scale and shift per channel.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.group_norm(tm.tensor([[1.0, 3.0]]), 1, eps=0.0).tolist()
    [[-1.0, 1.0]]
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    size = list(input.shape)
    sizes = [size[0] * size[1] // num_groups, num_groups] + size[2:]
    if math.prod(sizes[:1] + sizes[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {sizes}")
    if size[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {size} and num_groups={num_groups}")
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and (parameter.dim() != 1 or parameter.numel() != size[1]):
            # PyTorch's message names the weight's shape ([0] when absent) for a wrong bias too.
            shown = [0] if weight is None else list(weight.shape)
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {shown} and input of shape {size}")
    _check_parameter_dtypes(input, weight, bias)
    grouped = _working_copy(input).reshape(size[0], num_groups, -1)
    result = _standardised(grouped, [-1], eps)[0].reshape(size)
    return _affine(result, weight, bias, input.dtype)


@_public
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dimensions. With
    ``use_input_stats`` the given running statistics are updated in place with the batch's
    average; otherwise they are used instead.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.instance_norm(tm.tensor([[[1.0, 3.0]]]), eps=0.0).tolist()
    [[[-1.0, 1.0]]]
    """
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    _check_normalisation_arguments(input.size(0) * input.size(1), input.size(0), use_input_stats, running_mean,
                                   running_var, weight, bias)
    _check_parameter_dtypes(input, weight, bias, running_mean, running_var)
    x = _working_copy(input)
    if use_input_stats:
        result, mean, variance = _standardised(x, list(range(2, x.dim())), eps)
        count = math.prod(x.shape[2:])
        _update_running(running_mean, mean.reshape(x.shape[0], -1).mean(0), momentum)
        _update_running(running_var, (variance * (count / (count - 1))).reshape(x.shape[0], -1).mean(0), momentum)
    else:
        result = batch_norm(x, running_mean, running_var, training=False, eps=eps)
    return _affine(result, weight, bias, input.dtype)


# -- attention -------------------------------------------------------------------------------

@_builtin
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key.mT * scale + mask) @ value``, with ``scale`` by default
    ``1 / sqrt(query.size(-1))``. A boolean ``attn_mask`` keeps the positions that are True, a
    float one is added; ``is_causal`` keeps the lower triangle. A row with nothing to attend to
    gives zeros.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> q = tm.ones(1, 2, 2)
    >>> F.scaled_dot_product_attention(q, q, tm.tensor([[[1., 2.], [3., 4.]]])).tolist()
    [[[2.0, 3.0], [2.0, 3.0]]]
    """
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{cpp_type_name(query.dtype)} key.dtype: {cpp_type_name(key.dtype)} and value.dtype: "
                           f"{cpp_type_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dtype.bool, _dtype.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {cpp_type_name(attn_mask.dtype)} and  query.dtype: "
                           f"{cpp_type_name(query.dtype)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if not query.is_floating_point():
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: float != {cpp_type_name(query.dtype)}")
    if enable_gqa:  # grouped-query attention: each key / value head serves a group of query heads
        heads, key_heads, value_heads = query.size(-3), key.size(-3), value.size(-3)
        if heads % key_heads or heads % value_heads:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        key = key.repeat_interleave(heads // key_heads, -3)
        value = value.repeat_interleave(heads // value_heads, -3)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = _function("ones")(query.shape[-2], key.shape[-2], dtype=_dtype.bool).tril()
    if attn_mask is not None:
        if attn_mask.dtype == _dtype.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    # Rows with every position masked attend to nothing: zeros, not softmax's NaN.
    empty = (scores == -math.inf).all(-1, keepdim=True)
    weights = scores.where(empty.logical_not(), 0.0).softmax(-1).where(empty.logical_not(), 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights.matmul(value)


# -- margin, ranking and likelihood losses ---------------------------------------------------

@_public
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` 1 says ``input1`` should
    rank higher, -1 that ``input2`` should.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.margin_ranking_loss(tm.tensor([1.0, 1.0]), tm.tensor([0.0, 0.0]), tm.tensor([1.0, -1.0])).item()
    0.5
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


@_public
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (other
    targets count both).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hinge_embedding_loss(tm.tensor([0.25, 0.25]), tm.tensor([1.0, -1.0]), reduction="none").tolist()
    [0.25, 0.75]
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    below_margin = (margin - input).clamp(min=0).where(target != 1, 0.0)
    return _reduce(below_margin + input.where(target != -1, 0.0), reduction)


@_public
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))`` for targets 1 or -1.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.soft_margin_loss(tm.tensor([0.0]), tm.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    return _reduce((-input * target).exp().log1p(), reduction)


@_public
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(input1, input2)`` where ``target`` is 1, ``max(0, cos(input1, input2) - margin)``
    where it is -1; the cosine is taken along dimension 1 (0 for unbatched inputs).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.cosine_embedding_loss(tm.tensor([[1.0, 0.0]]), tm.tensor([[0.0, 1.0]]), tm.tensor([1.0])).item()
    1.0
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    expected = target.dim() + 1
    if input1.dim() != expected or input2.dim() != expected:
        raise RuntimeError(f"{target.dim()}D target tensor expects {expected}D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = target.dim()
    squared_norms = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cosine = (input1 * input2).sum(dim) / squared_norms.sqrt()
    similar = (1 - cosine).where(target == 1, 0.0)
    dissimilar = (cosine - margin).clamp(min=0).where(target == -1, 0.0)
    return _reduce(similar + dissimilar, reduction)


@_public
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under a Poisson distribution of rate ``exp(input)``
    (``log_input=True``) or ``input``: ``exp(input) - target * input``, or
    ``input - target * log(input + eps)``. ``full`` adds Stirling's approximation of
    ``log(target!)`` where ``target > 1`` (its gradient is zero elsewhere; PyTorch's is NaN at 0).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.poisson_nll_loss(tm.tensor([0.0]), tm.tensor([2.0])).item()
    1.0
    """
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        counted = target > 1
        safe_target = target.where(counted, 2.0)  # the masked positions' branch must stay finite
        stirling = safe_target * safe_target.log() - safe_target + 0.5 * (2 * math.pi * safe_target).log()
        loss = loss + stirling.where(counted, 0.0)
    return _reduce(loss, reduction)


@_public
def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | Number, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under Gaussians of mean ``input`` and variance
    ``var`` (at least ``eps``; the clamp does not stop its gradient):
    ``0.5 * (log(var) + (input - target)**2 / var)``, plus ``0.5 * log(2 * pi)`` with ``full``.
    ``var`` may have one dimension fewer than ``input``, or size 1 in one dimension.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.gaussian_nll_loss(tm.tensor([1.0]), tm.tensor([3.0]), tm.tensor([1.0])).item()
    2.0
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _function("ones_like")(input)
    elif (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim()
                  and sum(size for input_size, size in zip(input.shape, var.shape) if input_size != size) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    # PyTorch clamps a copy of var in place without recording it: the value is clamped, the
    # gradient passes as if it were not.
    var = var.detach().clamp(min=eps) + (var - var.detach())
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@_public
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``max(0, d(anchor, positive) - d(anchor, negative) + margin)`` with ``d`` the
    ``pairwise_distance``; with ``swap`` the negative distance is the smaller of
    ``d(anchor, negative)`` and ``d(positive, negative)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> a, n = tm.tensor([[0.0, 0.0]]), tm.tensor([[3.0, 4.0]])
    >>> F.triplet_margin_loss(a, a, n, margin=6.0, eps=0.0).item()
    1.0
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")
    positive_distance = pairwise_distance(anchor, positive, p, eps)
    negative_distance = pairwise_distance(anchor, negative, p, eps)
    if swap:
        negative_distance = negative_distance.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + positive_distance - negative_distance).clamp(min=0), reduction)
