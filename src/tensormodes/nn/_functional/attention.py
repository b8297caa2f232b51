"""``nn.functional.scaled_dot_product_attention``.
"""

from __future__ import annotations

import math

from ... import _dtype
from ..._ops._common import cpp_type_name
from ..._ops._registry import Tensor
from ._common import _builtin, _function
from .dropout import dropout

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
