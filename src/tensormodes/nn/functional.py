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
           "cross_entropy", "leaky_relu", "elu", "hardtanh", "relu6", "softplus", "logsigmoid", "softsign",
           "tanhshrink", "glu", "layer_norm", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity", "pairwise_distance", "normalize",
           "one_hot"]

_public = _functions.composite(__name__)
# Functions PyTorch implements in C++ hand handlers only the arguments given.
_builtin = _functions.composite(__name__, pass_defaults=False)
_function = _functions.public_function


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
binary_cross_entropy = _functions.namespace_function(__name__, "binary_cross_entropy")
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


def _reduction_from_legacy(size_average, reduce, reduction: str) -> str:
    """``reduction``, or what the deprecated ``size_average`` / ``reduce`` say when either is
    given (with PyTorch's warning)."""
    if size_average is None and reduce is None:
        return reduction
    mode = "none" if reduce is False else "sum" if size_average is False else "mean"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{mode}' instead.",
                  UserWarning, stacklevel=4)
    return mode


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
    result = input.where(input > 0, input * negative_slope)
    return input.copy_(result) if inplace else result


@_public
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.elu(tm.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    result = input.where(input > 0, (input.exp() - 1) * alpha)
    return input.copy_(result) if inplace else result


@_public
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``; the gradient is zero at and beyond the bounds.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardtanh(tm.tensor([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    inside = (input > min_val) & (input < max_val)
    result = input.where(inside, input.detach().clamp(min_val, max_val))
    return input.copy_(result) if inplace else result


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
    return input.where(scaled > threshold, scaled.exp().log1p() / beta)


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
    dims = list(range(input.dim() - len(shape), input.dim()))
    mean = input.mean(dims, keepdim=True)
    centred = input - mean
    result = centred * ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
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
