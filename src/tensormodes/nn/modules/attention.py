"""``MultiheadAttention``: attention from several representation subspaces at once, over
``F.multi_head_attention_forward``.

>>> import tensormodes as tm
>>> attention = tm.nn.MultiheadAttention(8, 2, batch_first=True)
>>> x = tm.randn(3, 5, 8)
>>> output, weights = attention(x, x, x)
>>> output.shape, weights.shape
(tensormodes.Size([3, 5, 8]), tensormodes.Size([3, 5, 5]))
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from .. import init
from .._functional.attention import _canonical_mask, _none_or_dtype
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Allows the model to jointly attend to information from different representation subspaces.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O with head_i = Attention(Q W_i^Q, K W_i^K,
    V W_i^V). The input projections are packed in ``in_proj_weight`` (3 * embed_dim, embed_dim),
    or, when ``kdim`` or ``vdim`` differ from ``embed_dim``, held in ``q_proj_weight``,
    ``k_proj_weight`` and ``v_proj_weight``; all are Xavier-uniform, ``in_proj_bias`` and
    ``out_proj.bias`` start at zero. ``add_bias_kv`` adds learned ``bias_k`` / ``bias_v`` (Xavier
    normal) as one more key and value position; ``add_zero_attn`` a zero one. Inputs are
    (L, N, E), (N, L, E) with ``batch_first``, or unbatched (L, E).

    >>> import tensormodes as tm
    >>> attention = tm.nn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    >>> [name for name, _ in attention.named_parameters()]
    ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(tm.empty((embed_dim, embed_dim), device=device, dtype=dtype))
            self.k_proj_weight = Parameter(tm.empty((embed_dim, self.kdim), device=device, dtype=dtype))
            self.v_proj_weight = Parameter(tm.empty((embed_dim, self.vdim), device=device, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(tm.empty((3 * embed_dim, embed_dim), device=device, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(tm.empty(3 * embed_dim, device=device, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(tm.empty((1, 1, embed_dim), device=device, dtype=dtype))
            self.bias_v = Parameter(tm.empty((1, 1, embed_dim), device=device, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: tm.Tensor, key: tm.Tensor, value: tm.Tensor, key_padding_mask: tm.Tensor | None = None,
                need_weights: bool = True, attn_mask: tm.Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[tm.Tensor, tm.Tensor | None]:
        """``(attn_output, attn_output_weights)``; the weights are None unless ``need_weights``.

        ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N * num_heads, L, S): True (or a
        float added to the scores) marks what not to attend to. ``is_causal`` is a hint that
        ``attn_mask`` is the causal mask. ``batch_first`` is ignored for unbatched inputs.
        """
        batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and batched:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = {"use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
                        "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        output, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and batched:
            return output.transpose(1, 0), weights
        return output, weights
