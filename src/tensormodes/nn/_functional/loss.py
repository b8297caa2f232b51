"""Loss functions of ``nn.functional``: regression losses, ``cross_entropy`` (its common case one
fused op), ``nll_loss`` and ``binary_cross_entropy`` (table ops), ``kl_div``, margin, ranking and
likelihood losses, with the deprecated ``size_average`` / ``reduce`` arguments.
"""

from __future__ import annotations

import math
import warnings
from numbers import Number

from ..._api import build
from ..._api import namespace as tm
from ..._ops.nn import legacy_reduction
from ..._ops.registry import Tensor
from ._common import _function, _public, _top_level
from .distance import pairwise_distance

# cross_entropy's common case, fused (PyTorch's torch._C._nn.cross_entropy_loss): one op, one node.
_cross_entropy_loss = build.public_function("_cross_entropy_loss")
# The pointwise losses PyTorch computes natively (torch._C._nn.mse_loss ...): one op, one node each.
_mse_loss = build.public_function("_mse_loss")
_smooth_l1_loss = build.public_function("_smooth_l1_loss")
_huber_loss = build.public_function("_huber_loss")
_broadcast_tensors = build.public_function("broadcast_tensors")
_soft_margin_loss = build.public_function("_soft_margin_loss")
_binary_cross_entropy_with_logits = build.public_function("_binary_cross_entropy_with_logits")


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


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's elementwise losses broadcast both operands first, so a 0-dim one then takes part
    in type promotion as a full tensor (a float32 scalar input with a float16 target: float32)."""
    if input.shape == target.shape:
        return input, target
    return _broadcast_tensors(input, target)


def _weighted(loss: Tensor, weight: Tensor | None) -> Tensor:
    return loss if weight is None else loss * weight


def _check_weight(input: Tensor, weight: Tensor | None) -> None:
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


# PyTorch's reduction enum (``_Reduction.get_enum``), which its ``torch.<loss>`` functions take. Their
# schemas' default is 1 (mean), but PyTorch 2.13's Python binding reads that default
# (``at::Reduction::Mean``) as 0: ``torch.kl_div(a, b)`` is unreduced, and so is ours.
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _enum(reduction: str) -> int:
    """The enum of a reduction ``_checked_reduction`` has checked."""
    return _REDUCTIONS[reduction]


def _reduce_enum(loss: Tensor, reduction: int) -> Tensor:
    """PyTorch's ``apply_loss_reduction``: 1 the mean, 2 the sum, anything else the loss itself."""
    if reduction == 1:
        return loss.mean()
    return loss.sum() if reduction == 2 else loss


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
    _warn_on_broadcast(input, target)
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return _mse_loss(input, target, _checked_reduction(None, None, reduction))
    _check_weight(input, weight)
    weighted = (input - target) ** 2 * weight
    if reduction == "mean":  # PyTorch's weighted mean: divided by the weights' total
        return weighted.sum() / weight.sum()
    return _reduce(weighted, reduction)


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
    if label_smoothing == 0:
        # No smoothing: one op, as PyTorch's cross_entropy_loss (log_softmax and nll_loss fused for
        # class indices; class probabilities for a target of the input's shape), with its checks.
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
    # PyTorch's composite (cross_entropy_loss_label_smoothing), op for op: each step rounds in a half type
    nll = build.namespace_function("tensormodes.nn.functional", "nll_loss")(
        log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    ignored = target == ignore_index
    smooth = -(log_probs if class_weight is None else log_probs * class_weight).sum(class_dim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        counted = ignored.logical_not()
        total = (weight.gather(0, target.masked_select(counted).flatten()).sum() if weight is not None
                 else counted.sum())
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)


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
    input, target = _broadcast_pair(input, target)
    return _reduce(_weighted((input - target).abs(), weight), reduction)


@_public
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta`` (``d = input - target``), ``|d| - 0.5 * beta`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.smooth_l1_loss(tm.tensor([0.0, 3.0]), tm.tensor([0.5, 0.0]), reduction="sum").item()
    2.625
    """
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _warn_on_broadcast(input, target)
    reduction = _reduction_from_legacy(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    if beta == 0:  # PyTorch runs l1_loss
        return _reduce((input - target).abs(), reduction)
    return _smooth_l1_loss(input, target, _checked_reduction(None, None, reduction), beta)


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
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return _huber_loss(input, target, _checked_reduction(None, None, reduction), delta)
    _check_weight(input, weight)
    return _reduce(_huber_loss(input, target, "none", delta) * weight, reduction)


def _binary_cross_entropy_with_logits_function(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                               pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    """``tensormodes.binary_cross_entropy_with_logits``: the reduction as PyTorch's enum (0 none, 1
    mean, 2 sum), no size check, as ``torch.binary_cross_entropy_with_logits``.

    >>> import tensormodes as tm
    >>> round(tm.binary_cross_entropy_with_logits(tm.tensor([0.0]), tm.tensor([1.0]), None, None, 2).item(), 4)
    0.6931
    """
    names = {0: "none", 1: "mean", 2: "sum"}
    return _binary_cross_entropy_with_logits(input, target, weight, pos_weight, names.get(reduction, "none"))


_top_level(_binary_cross_entropy_with_logits_function, name="binary_cross_entropy_with_logits")


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
    reduction = _checked_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def _kl_div_function(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:
    """``tensormodes.kl_div``: ``nn.functional.kl_div``'s divergence with the reduction as PyTorch's
    enum (0 none, 1 mean, 2 sum), as ``torch.kl_div``.

    >>> import tensormodes as tm
    >>> tm.kl_div(tm.tensor([0.5, 0.5]).log(), tm.tensor([0.5, 0.5]), 2).item()
    0.0
    """
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        loss = (target * target.where(positive, 1).log()).where(positive, 0) - target * input
    return _reduce_enum(loss, reduction)


_torch_kl_div = _top_level(_kl_div_function, name="kl_div")


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
    if reduction == "batchmean":
        reduced = _torch_kl_div(input, target, 2, log_target=log_target)
        return reduced / input.shape[0] if input.dim() else reduced
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _torch_kl_div(input, target, _enum(reduction), log_target=log_target)


# -- margin, ranking and likelihood losses ---------------------------------------------------

def _margin_ranking_loss_function(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                                  reduction: int = 0) -> Tensor:
    """``tensormodes.margin_ranking_loss``: the reduction as PyTorch's enum, no dimension check, as
    ``torch.margin_ranking_loss``.

    >>> import tensormodes as tm
    >>> tm.margin_ranking_loss(tm.tensor([1.0, 1.0]), tm.tensor([0.0, 0.0]), tm.tensor([1.0, -1.0]), 0.0, 0)
    tensor([0., 1.])
    """
    return _reduce_enum((-target * (input1 - input2) + margin).clamp(min=0), reduction)


_torch_margin_ranking_loss = _top_level(_margin_ranking_loss_function, name="margin_ranking_loss")


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
    return _torch_margin_ranking_loss(input1, input2, target, margin, _enum(reduction))


def _hinge_embedding_loss_function(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    """``tensormodes.hinge_embedding_loss``: the reduction as PyTorch's enum, as
    ``torch.hinge_embedding_loss``.

    >>> import tensormodes as tm
    >>> tm.hinge_embedding_loss(tm.tensor([0.25, 0.25]), tm.tensor([1.0, -1.0]), 1.0, 0).tolist()
    [0.25, 0.75]
    """
    below_margin = (margin - input).clamp(min=0).where(target != 1, 0.0)
    return _reduce_enum(below_margin + input.where(target != -1, 0.0), reduction)


_torch_hinge_embedding_loss = _top_level(_hinge_embedding_loss_function, name="hinge_embedding_loss")


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
    return _torch_hinge_embedding_loss(input, target, margin, _enum(reduction))


@_public
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))`` for targets 1 or -1.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.soft_margin_loss(tm.tensor([0.0]), tm.tensor([1.0])).item(), 4)
    0.6931
    """
    return _soft_margin_loss(input, target, _checked_reduction(size_average, reduce, reduction))


def _cosine_embedding_loss_function(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                                    reduction: int = 0) -> Tensor:
    """``tensormodes.cosine_embedding_loss``: the reduction as PyTorch's enum, as
    ``torch.cosine_embedding_loss``.

    >>> import tensormodes as tm
    >>> tm.cosine_embedding_loss(tm.tensor([[1.0, 0.0]]), tm.tensor([[0.0, 1.0]]), tm.tensor([1.0]), 0.0, 1).item()
    1.0
    """
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
    return _reduce_enum(similar + dissimilar, reduction)


_torch_cosine_embedding_loss = _top_level(_cosine_embedding_loss_function, name="cosine_embedding_loss")


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
    return _torch_cosine_embedding_loss(input1, input2, target, margin, _enum(reduction))


def _poisson_nll_loss_function(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                               reduction: int) -> Tensor:
    """``tensormodes.poisson_nll_loss``: every argument given, the reduction as PyTorch's enum, as
    ``torch.poisson_nll_loss``.

    >>> import tensormodes as tm
    >>> tm.poisson_nll_loss(tm.tensor([0.0]), tm.tensor([2.0]), True, False, 1e-8, 1).item()
    1.0
    """
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        counted = target > 1
        safe_target = target.where(counted, 2.0)  # the masked positions' branch must stay finite
        stirling = safe_target * safe_target.log() - safe_target + 0.5 * (2 * math.pi * safe_target).log()
        loss = loss + stirling.where(counted, 0.0)
    return _reduce_enum(loss, reduction)


_torch_poisson_nll_loss = _top_level(_poisson_nll_loss_function, name="poisson_nll_loss")


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
    return _torch_poisson_nll_loss(input, target, log_input, full, eps, _enum(reduction))


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


def _triplet_margin_loss_function(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                                  p: float = 2.0, eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    """``tensormodes.triplet_margin_loss``: the reduction as PyTorch's enum, any margin, as
    ``torch.triplet_margin_loss``.

    >>> import tensormodes as tm
    >>> a, n = tm.tensor([[0.0, 0.0]]), tm.tensor([[3.0, 4.0]])
    >>> tm.triplet_margin_loss(a, a, n, 6.0, 2.0, 0.0).item()
    1.0
    """
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")
    positive_distance = pairwise_distance(anchor, positive, p, eps)
    negative_distance = pairwise_distance(anchor, negative, p, eps)
    if swap:
        negative_distance = negative_distance.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce_enum((margin + positive_distance - negative_distance).clamp(min=0), reduction)


_torch_triplet_margin_loss = _top_level(_triplet_margin_loss_function, name="triplet_margin_loss")


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
    return _torch_triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, _enum(reduction))


@_public
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``max(0, d(anchor, positive) - d(anchor, negative) + margin)`` with ``d`` the given
    ``distance_function`` (``pairwise_distance`` by default); with ``swap`` the negative distance is
    the smaller of ``d(anchor, negative)`` and ``d(positive, negative)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> a, n = tm.tensor([[0.0, 0.0]]), tm.tensor([[3.0, 4.0]])
    >>> F.triplet_margin_with_distance_loss(a, a, n, distance_function=lambda x, y: (x - y).abs().sum(-1)).item()
    0.0
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    positive_distance = distance(anchor, positive)
    negative_distance = distance(anchor, negative)
    if swap:
        negative_distance = _function("minimum")(negative_distance, distance(positive, negative))
    loss = _function("clamp_min")(margin + positive_distance - negative_distance, 0)
    if reduction == "sum":
        return _function("sum")(loss)
    if reduction == "mean":
        return _function("mean")(loss)
    return loss


@_public
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """The one-versus-all logistic loss of multi-label targets (0 or 1 per class): the mean over
    the classes of ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))``, times ``weight``; reduced.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.multilabel_soft_margin_loss(tm.tensor([[0.0, 0.0]]), tm.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction_from_legacy(size_average, reduce, reduction)
    logsigmoid = _function("_log_sigmoid")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


@_public
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss: for each sample, the mean over the classes ``j`` other than its
    target ``y`` of ``max(0, margin - x[y] + x[j]) ** p`` (``p`` 1 or 2), times ``weight[y]``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.multi_margin_loss(tm.tensor([[0.1, 0.2, 0.4, 0.8]]), tm.tensor([3]))
    tensor(0.3250)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None:
        if weight.dim() != 1:
            raise ValueError("weight must be one-dimensional")
        if weight.requires_grad and tm.is_grad_enabled():
            raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                               "'weight'. This input cannot have requires_grad True.")
    return _function("_multi_margin_loss")(input, target, p, margin, weight, reduction)


@_public
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss: ``target`` lists each sample's classes, ended by the first
    ``-1``; the loss sums ``max(0, 1 - (x[c] - x[i]))`` over listed classes ``c`` and the others
    ``i``, divided by the number of classes.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.multilabel_margin_loss(tm.tensor([[0.1, 0.2, 0.4, 0.8]]), tm.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    return _function("_multilabel_margin_loss")(input, target, reduction)


def _ctc_loss_enum(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
                   reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """``tensormodes.ctc_loss``: ``nn.functional.ctc_loss`` with ``reduction`` as ATen's int
    (0 none, 1 mean, 2 sum; any other int reduces nothing, as PyTorch's). Left out, it is 0, as
    PyTorch's binding computes (its schema says mean; its Python signature's default is 0).

    >>> import tensormodes as tm
    >>> tm.ctc_loss(tm.full((1, 1, 2), 0.5).log(), tm.tensor([[1]]), [1], [1], 0, 2)
    tensor(0.6931)
    """
    if isinstance(input_lengths, tm.Tensor) != isinstance(target_lengths, tm.Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be tensors or both sequences of ints "
                        f"(got {type(input_lengths).__name__} and {type(target_lengths).__name__})")
    lengths = [int(n) for n in (input_lengths.tolist() if isinstance(input_lengths, tm.Tensor) else input_lengths)]
    targets_lengths = [int(n) for n in (target_lengths.tolist() if isinstance(target_lengths, tm.Tensor)
                                        else target_lengths)]
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    losses = _function("_ctc_loss")(log_probs, targets, lengths, targets_lengths, blank, zero_infinity)
    if zero_infinity:
        losses = _function("where")(losses == float("inf"), _function("zeros")((), dtype=losses.dtype), losses)
    if reduction == 1:
        divisors = _function("tensor")(targets_lengths, dtype=losses.dtype).clamp_min(1)
        result = (losses / divisors).mean()
    elif reduction == 2:
        result = losses.sum()
    else:
        result = losses
    return result.squeeze(0) if unbatched and reduction not in (1, 2) else result


_torch_ctc_loss = _top_level(_ctc_loss_enum, name="ctc_loss")


@_public
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss of ``log_probs`` (T, N, C) — or unbatched
    (T, C) — for the ``targets`` (N, S padded, or concatenated), each sample read for its input
    length; ``'mean'`` divides each loss by its target length before averaging. ``zero_infinity``
    replaces the infinite losses of targets an input cannot spell (and their gradients) by zero.
    It calls ``tensormodes.ctc_loss`` with the reduction as an int, as PyTorch's does.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.ctc_loss(tm.full((1, 1, 2), 0.5).log(), tm.tensor([[1]]), [1], [1], reduction="sum")
    tensor(0.6931)
    """
    enum = {"none": 0, "mean": 1, "sum": 2}[_checked_reduction(None, None, reduction)]
    return _torch_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, enum, zero_infinity)
