"""Loss functions as modules; each calls its ``nn.functional`` counterpart with the module's settings.

``reduction`` is ``'mean'`` (default), ``'sum'`` or ``'none'``; the deprecated
``size_average`` / ``reduce`` arguments still choose it, with PyTorch's warning.
Class weights are buffers (so they follow ``to(dtype)`` and appear in
``state_dict``).

>>> import tensormodes as tm
>>> tm.nn.MSELoss()(tm.tensor([1., 2.]), tm.tensor([1., 4.])).item()
2.0
>>> round(tm.nn.CrossEntropyLoss(reduction="sum")(tm.zeros(2, 4), tm.tensor([0, 3])).item(), 4)
2.7726
"""

from __future__ import annotations

import warnings

from ..._api import namespace as tm
from ..._ops.nn import legacy_reduction
from .. import functional as F
from .distance import PairwiseDistance
from .module import Module

__all__ = ["L1Loss", "NLLLoss", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss",
           "BCEWithLogitsLoss", "HingeEmbeddingLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
           "CrossEntropyLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss", "MultiMarginLoss",
           "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction: str = legacy_reduction(size_average, reduce, 3)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: tm.Tensor | None = None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Measures the mean absolute error (MAE) between each element in the input and target.

    >>> import tensormodes as tm
    >>> tm.nn.L1Loss(reduction="none")(tm.tensor([1., 2.]), tm.tensor([3., 2.])).tolist()
    [2.0, 0.0]
    """

    __constants__ = ["reduction"]

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.l1_loss(input, target, reduction=reduction)``."""
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Measures the mean squared error (squared L2 norm) between each element in the input and target.

    >>> import tensormodes as tm
    >>> tm.nn.MSELoss(reduction="sum")(tm.tensor([1., 2.]), tm.tensor([3., 2.])).item()
    4.0
    """

    __constants__ = ["reduction"]

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.mse_loss(input, target, reduction=reduction)``."""
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """The negative log likelihood loss, for log-probabilities of C classes.

    >>> import tensormodes as tm
    >>> tm.nn.NLLLoss()(tm.tensor([[-1., -2.]]), tm.tensor([1])).item()
    2.0
    """

    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight: tm.Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.nll_loss`` with the module's weight, ignore_index and reduction."""
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated name of ``NLLLoss`` for images (``NLLLoss`` takes any number of
    spatial dimensions).

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.nn.NLLLoss2d()(tm.tensor([[[[-1.]], [[-2.]]]]), tm.tensor([[[1]]])).item()
    2.0
    """

    def __init__(self, weight: tm.Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and "
                      "see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning,
                      stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Computes the cross entropy loss between input logits and target (class indices or probabilities).

    >>> import tensormodes as tm
    >>> tm.nn.CrossEntropyLoss(label_smoothing=0.1)
    CrossEntropyLoss()
    """

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight: tm.Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.cross_entropy`` with the module's weight, ignore_index, reduction and label_smoothing."""
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class PoissonNLLLoss(_Loss):
    """Negative log likelihood loss with Poisson distribution of target.

    >>> import tensormodes as tm
    >>> tm.nn.PoissonNLLLoss()(tm.zeros(2), tm.zeros(2)).item()
    1.0
    """

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.poisson_nll_loss`` with the module's settings."""
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood loss, for a predicted mean ``input`` and variance ``var``.

    >>> import tensormodes as tm
    >>> tm.nn.GaussianNLLLoss()(tm.zeros(2), tm.zeros(2), tm.ones(2)).item()
    0.0
    """

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: tm.Tensor, target: tm.Tensor, var: tm.Tensor | float) -> tm.Tensor:
        """``F.gaussian_nll_loss`` with the module's settings."""
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence loss, for log-probabilities ``input`` (and ``target`` if ``log_target``).

    >>> import tensormodes as tm
    >>> tm.nn.KLDivLoss(reduction="batchmean")(tm.log(tm.tensor([[0.5, 0.5]])), tm.tensor([[0.5, 0.5]])).item()
    0.0
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.kl_div(input, target, reduction=..., log_target=...)``."""
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class BCELoss(_WeightedLoss):
    """Measures the Binary Cross Entropy between the target and the input probabilities.

    >>> import tensormodes as tm
    >>> round(tm.nn.BCELoss()(tm.tensor([0.5]), tm.tensor([1.])).item(), 4)
    0.6931
    """

    __constants__ = ["reduction"]

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.binary_cross_entropy(input, target, weight=weight, reduction=reduction)``."""
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Combines a Sigmoid layer and the BCELoss in one single, numerically stable, class.

    ``pos_weight`` weighs the positive examples of each class.

    >>> import tensormodes as tm
    >>> m = tm.nn.BCEWithLogitsLoss(pos_weight=tm.ones(3))
    >>> [name for name, _ in m.named_buffers()]
    ['pos_weight']
    """

    def __init__(self, weight: tm.Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight: tm.Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.binary_cross_entropy_with_logits`` with the module's weights and reduction."""
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """Measures the loss given an input tensor x and a labels tensor y (containing 1 or -1).

    >>> import tensormodes as tm
    >>> tm.nn.HingeEmbeddingLoss()(tm.tensor([0.3, 2.0]), tm.tensor([-1., 1.])).item()
    1.350000023841858
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.hinge_embedding_loss(input, target, margin=..., reduction=...)``."""
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared term if the absolute element-wise error falls below ``beta`` and an L1 term otherwise.

    >>> import tensormodes as tm
    >>> tm.nn.SmoothL1Loss(reduction="none")(tm.tensor([0.5, 3.0]), tm.zeros(2)).tolist()
    [0.125, 2.5]
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.smooth_l1_loss(input, target, reduction=..., beta=...)``."""
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared term if the absolute element-wise error falls below ``delta`` and a delta-scaled L1 term otherwise.

    >>> import tensormodes as tm
    >>> tm.nn.HuberLoss(reduction="none", delta=2.0)(tm.tensor([1.0, 3.0]), tm.zeros(2)).tolist()
    [0.5, 4.0]
    """

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.huber_loss(input, target, reduction=..., delta=...)``."""
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    """Two-class classification logistic loss: sum log(1 + exp(-y * x)) / n.

    >>> import tensormodes as tm
    >>> round(tm.nn.SoftMarginLoss()(tm.zeros(2), tm.ones(2)).item(), 4)
    0.6931
    """

    __constants__ = ["reduction"]

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.soft_margin_loss(input, target, reduction=...)``."""
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """Measures whether two inputs are similar (y = 1) or dissimilar (y = -1) by their cosine similarity.

    >>> import tensormodes as tm
    >>> tm.nn.CosineEmbeddingLoss()(tm.ones(1, 2), tm.ones(1, 2), tm.tensor([1])).item()
    0.0
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: tm.Tensor, input2: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.cosine_embedding_loss(input1, input2, target, margin=..., reduction=...)``."""
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """Loss max(0, -y * (x1 - x2) + margin) for a ranking target y of 1 or -1.

    >>> import tensormodes as tm
    >>> tm.nn.MarginRankingLoss()(tm.tensor([1.]), tm.tensor([2.]), tm.tensor([1.])).item()
    1.0
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: tm.Tensor, input2: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.margin_ranking_loss(input1, input2, target, margin=..., reduction=...)``."""
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """Triplet loss max(d(a, p) - d(a, n) + margin, 0) with the p-norm pairwise distance d.

    >>> import tensormodes as tm
    >>> tm.nn.TripletMarginLoss()(tm.zeros(1, 2), tm.zeros(1, 2), tm.ones(1, 2)).item()
    0.0
    """

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: tm.Tensor, positive: tm.Tensor, negative: tm.Tensor) -> tm.Tensor:
        """``F.triplet_margin_loss`` with the module's settings."""
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss (``p`` 1 or 2) between scores and class indices, optionally
    weighted per class.

    >>> import tensormodes as tm
    >>> tm.nn.MultiMarginLoss(p=2, margin=0.5)
    MultiMarginLoss()
    """

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p: int = 1, margin: float = 1.0, weight: tm.Tensor | None = None, size_average=None,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.multi_margin_loss(input, target, p, margin, weight, reduction=reduction)``."""
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss between scores and lists of target classes (each ended by -1).

    >>> import tensormodes as tm
    >>> round(tm.nn.MultiLabelMarginLoss()(tm.tensor([[0.1, 0.2, 0.4, 0.8]]), tm.tensor([[3, 0, -1, 1]])).item(), 4)
    0.85
    """

    __constants__ = ["reduction"]

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.multilabel_margin_loss(input, target, reduction=reduction)``."""
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The one-versus-all logistic loss of multi-label targets (0 or 1 per class).

    >>> import tensormodes as tm
    >>> round(tm.nn.MultiLabelSoftMarginLoss()(tm.zeros(1, 2), tm.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """

    __constants__ = ["reduction"]

    def forward(self, input: tm.Tensor, target: tm.Tensor) -> tm.Tensor:
        """``F.multilabel_soft_margin_loss(input, target, weight, reduction=reduction)``."""
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss with a custom ``distance_function`` (``PairwiseDistance()`` by default).

    >>> import tensormodes as tm
    >>> a, n = tm.tensor([[0.0, 0.0]]), tm.tensor([[3.0, 4.0]])
    >>> round(tm.nn.TripletMarginWithDistanceLoss(margin=6.0)(a, a, n).item(), 4)
    1.0
    """

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: tm.Tensor, positive: tm.Tensor, negative: tm.Tensor) -> tm.Tensor:
        """``F.triplet_margin_with_distance_loss`` with the module's settings."""
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss, between a sequence of log-probabilities
    and a target sequence (see ``F.ctc_loss``).

    >>> import tensormodes as tm
    >>> tm.nn.CTCLoss(reduction="sum")(tm.full((1, 1, 2), 0.5).log(), tm.tensor([[1]]), [1], [1])
    tensor(0.6931)
    """

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: tm.Tensor, targets: tm.Tensor, input_lengths, target_lengths) -> tm.Tensor:
        """``F.ctc_loss`` with the module's settings."""
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
