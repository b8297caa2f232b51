"""Distances and normalisation of vectors in ``nn.functional``: ``cosine_similarity``,
``pairwise_distance``, ``pdist`` and ``normalize``.
"""

from __future__ import annotations

from ..._ops.registry import Tensor
from ._common import _export, _function, _public, _reexport, _top_level

# PyTorch's F.pdist is torch.pdist.
pdist = _reexport("pdist")

# -- distances -------------------------------------------------------------------------------

@_export
@_top_level
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


@_export
@_top_level
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dimension.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.pairwise_distance(tm.tensor([[3.0, 0.0]]), tm.tensor([[0.0, 4.0]]), eps=0.0).tolist()
    [5.0]
    """
    difference = x1 - x2 + eps
    if not difference.dim():
        return difference.norm(p, keepdim=keepdim)
    return _function("_norm_dim")(difference, p, -1, keepdim)  # PyTorch's at::norm(..., dim): NormBackward1


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
