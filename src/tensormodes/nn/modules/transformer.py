"""``TransformerEncoderLayer`` (self-attention and a feed-forward block, each with a residual
connection and a layer norm) and ``TransformerEncoder``, a stack of copies of one.

>>> import tensormodes as tm
>>> layer = tm.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
>>> encoder = tm.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
>>> encoder(tm.randn(3, 5, 8)).shape
tensormodes.Size([3, 5, 8])
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

import tensormodes as tm

from .. import functional as F
from .._functional.attention import _canonical_mask, _none_or_dtype
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]


def _activation(name: str) -> Callable[[tm.Tensor], tm.Tensor]:
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {name}")


def _square_subsequent_mask(size: int, dtype) -> tm.Tensor:
    """The causal mask: -inf above the diagonal, 0 elsewhere."""
    return tm.full((size, size), float("-inf"), dtype=dtype).triu(diagonal=1)


def _detect_is_causal_mask(mask: tm.Tensor | None, is_causal: bool | None, size: int | None) -> bool:
    """``is_causal`` if given; otherwise whether ``mask`` is the causal mask of ``size``."""
    if is_causal is not None or mask is None:
        return is_causal is True
    size = size if size is not None else mask.size(-2)
    causal = _square_subsequent_mask(size, mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())


class TransformerEncoderLayer(Module):
    """TransformerEncoderLayer is made up of self-attn and feedforward network.

    ``x = norm1(x + self_attn(x)); x = norm2(x + linear2(dropout(activation(linear1(x)))))``, or
    with ``norm_first`` the norms are applied to each block's input instead. ``activation`` is
    'relu', 'gelu' or a unary callable. The fused inference path of PyTorch gives the same values
    and is not reproduced.

    >>> import tensormodes as tm
    >>> layer = tm.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, activation="gelu")
    >>> layer(tm.randn(5, 3, 8)).shape
    tensormodes.Size([5, 3, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[tm.Tensor], tm.Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            device=device, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _activation(activation)
        # PyTorch's marker for its fused path (1 relu, 2 gelu, 0 other), read by TransformerEncoder.
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src: tm.Tensor, src_mask: tm.Tensor | None = None,
                src_key_padding_mask: tm.Tensor | None = None, is_causal: bool = False) -> tm.Tensor:
        """Pass the input through the encoder layer; the masks as ``MultiheadAttention``'s
        ``attn_mask`` and ``key_padding_mask``."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: tm.Tensor, attn_mask: tm.Tensor | None, key_padding_mask: tm.Tensor | None,
                  is_causal: bool = False) -> tm.Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: tm.Tensor) -> tm.Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """TransformerEncoder is a stack of N encoder layers.

    ``num_layers`` deep copies of ``encoder_layer`` (each with its own weights) in ``layers``,
    then the optional ``norm``. ``enable_nested_tensor`` and ``mask_check`` are accepted for
    PyTorch's fused path, which is not reproduced (the warning about it is).

    >>> import tensormodes as tm
    >>> layer = tm.nn.TransformerEncoderLayer(8, 2, 16)
    >>> encoder = tm.nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    >>> len(encoder.layers), encoder.layers[0].linear1.weight is encoder.layers[1].linear1.weight
    (3, False)
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        reason = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and reason:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {reason}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: tm.Tensor, mask: tm.Tensor | None = None, src_key_padding_mask: tm.Tensor | None = None,
                is_causal: bool | None = None) -> tm.Tensor:
        """Pass the input through the encoder layers in turn, then ``norm``. ``is_causal=None``
        detects whether ``mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = src.size(0) if src.dim() == 2 else src.size(1 if batch_first else 0)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _why_not_sparsity_fast_path(layer: Module) -> str:
    """PyTorch's reason, if any, why ``layer`` cannot take its nested-tensor path (for its warning)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""
