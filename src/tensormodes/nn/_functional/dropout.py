"""``nn.functional.dropout``.
"""

from __future__ import annotations

from ..._ops.registry import Tensor
from ._common import _function, _public


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
    noise = _function("empty_like")(input).bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise
