"""Distances as layers: ``PairwiseDistance`` and ``CosineSimilarity`` (each calls its
``nn.functional`` counterpart).

>>> import tensormodes as tm
>>> tm.nn.CosineSimilarity(dim=0)(tm.tensor([1.0, 0.0]), tm.tensor([0.0, 1.0])).item()
0.0
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The ``p``-norm distance between the rows of ``x1`` and ``x2`` (``eps`` added to the
    difference), along the last dimension.

    >>> import tensormodes as tm
    >>> tm.nn.PairwiseDistance(eps=0.0)(tm.tensor([[3.0, 0.0]]), tm.tensor([[0.0, 4.0]])).tolist()
    [5.0]
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: tm.Tensor, x2: tm.Tensor) -> tm.Tensor:
        """``F.pairwise_distance(x1, x2, p, eps, keepdim)``."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine similarity between ``x1`` and ``x2`` along ``dim`` (each norm at least ``eps``).

    >>> import tensormodes as tm
    >>> tm.nn.CosineSimilarity()(tm.tensor([[1.0, 1.0]]), tm.tensor([[2.0, 2.0]])).tolist()  # as PyTorch's float32
    [0.9999999403953552]
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: tm.Tensor, x2: tm.Tensor) -> tm.Tensor:
        """``F.cosine_similarity(x1, x2, dim, eps)``."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
