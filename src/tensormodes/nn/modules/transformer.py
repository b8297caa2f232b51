"""``TransformerEncoderLayer`` (self-attention and a feed-forward block, each with a residual
connection and a layer norm) and ``TransformerEncoder``, a stack of copies of one;
``TransformerDecoderLayer`` (self-attention, attention over the encoder's output ``memory``, then
the feed-forward block) and ``TransformerDecoder``; ``Transformer``, an encoder and a decoder.

>>> import tensormodes as tm
>>> layer = tm.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
>>> encoder = tm.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
>>> memory = encoder(tm.randn(3, 5, 8))
>>> memory.shape
tensormodes.Size([3, 5, 8])
>>> decoder_layer = tm.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
>>> decoder = tm.nn.TransformerDecoder(decoder_layer, num_layers=2)
>>> decoder(tm.randn(3, 4, 8), memory).shape
tensormodes.Size([3, 4, 8])
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

from ..._api import namespace as tm
from .. import functional as F
from .. import init
from .._functional.attention import _canonical_mask, _none_or_dtype
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder",
           "Transformer"]


def _activation(name: str) -> Callable[[tm.Tensor], tm.Tensor]:
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {name}")


def _square_subsequent_mask(size: int, dtype, device=None) -> tm.Tensor:
    """The causal mask: -inf above the diagonal, 0 elsewhere."""
    return tm.full((size, size), float("-inf"), dtype=dtype, device=device).triu(diagonal=1)


def _detect_is_causal_mask(mask: tm.Tensor | None, is_causal: bool | None, size: int | None) -> bool:
    """``is_causal`` if given; otherwise whether ``mask`` is the causal mask of ``size``."""
    if is_causal is not None or mask is None:
        return is_causal is True
    size = size if size is not None else mask.size(-2)
    causal = _square_subsequent_mask(size, mask.dtype, mask.device)
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
        is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, self.layers[0].self_attn.batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(Module):
    """TransformerDecoderLayer is made up of self-attn, multi-head-attn and feedforward network.

    ``x = norm1(x + self_attn(x)); x = norm2(x + multihead_attn(x, memory));
    x = norm3(x + linear2(dropout(activation(linear1(x)))))``, or with ``norm_first`` the norms are
    applied to each block's input instead. ``activation`` is 'relu', 'gelu' or a unary callable.

    >>> import tensormodes as tm
    >>> layer = tm.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> memory, tgt = tm.randn(6, 3, 8), tm.randn(5, 3, 8)
    >>> layer(tgt, memory).shape
    tensormodes.Size([5, 3, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[tm.Tensor], tm.Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            device=device, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, device=device, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation) if isinstance(activation, str) else activation

    def forward(self, tgt: tm.Tensor, memory: tm.Tensor, tgt_mask: tm.Tensor | None = None,
                memory_mask: tm.Tensor | None = None, tgt_key_padding_mask: tm.Tensor | None = None,
                memory_key_padding_mask: tm.Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> tm.Tensor:
        """Pass the target and the encoder's output ``memory`` through the decoder layer; the masks
        as ``MultiheadAttention``'s ``attn_mask`` and ``key_padding_mask`` (``tgt_*`` for the
        self-attention, ``memory_*`` for the attention over ``memory``)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    _sa_block = TransformerEncoderLayer._sa_block  # the same self-attention block: self_attn, dropout1

    def _mha_block(self, x: tm.Tensor, memory: tm.Tensor, attn_mask: tm.Tensor | None,
                   key_padding_mask: tm.Tensor | None, is_causal: bool = False) -> tm.Tensor:
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: tm.Tensor) -> tm.Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    """TransformerDecoder is a stack of N decoder layers.

    ``num_layers`` deep copies of ``decoder_layer`` (each with its own weights) in ``layers``, then
    the optional ``norm``.

    >>> import tensormodes as tm
    >>> decoder = tm.nn.TransformerDecoder(tm.nn.TransformerDecoderLayer(8, 2, 16), 2, norm=tm.nn.LayerNorm(8))
    >>> decoder(tm.randn(5, 8), tm.randn(7, 8)).shape
    tensormodes.Size([5, 8])
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: tm.Tensor, memory: tm.Tensor, tgt_mask: tm.Tensor | None = None,
                memory_mask: tm.Tensor | None = None, tgt_key_padding_mask: tm.Tensor | None = None,
                memory_key_padding_mask: tm.Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> tm.Tensor:
        """Pass the target and ``memory`` through the decoder layers in turn, then ``norm``.
        ``tgt_is_causal=None`` detects whether ``tgt_mask`` is the causal mask."""
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal,
                                               _seq_len(tgt, self.layers[0].self_attn.batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                           memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """A basic transformer layer: the encoder-decoder architecture of "Attention Is All You Need".

    ``encoder`` (``num_encoder_layers`` encoder layers and a final ``LayerNorm``) maps ``src`` to
    a memory that ``decoder`` (``num_decoder_layers`` decoder layers and a final ``LayerNorm``)
    attends to while processing ``tgt``; ``custom_encoder`` / ``custom_decoder`` replace either.
    Every parameter with more than one dimension is re-initialised with ``xavier_uniform_``.

    >>> import tensormodes as tm
    >>> model = tm.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
    ...                           dim_feedforward=16, batch_first=True)
    >>> src, tgt = tm.randn(3, 6, 8), tm.randn(3, 5, 8)
    >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(5)).shape
    tensormodes.Size([3, 5, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[tm.Tensor], tm.Tensor] = F.relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: tm.Tensor, tgt: tm.Tensor, src_mask: tm.Tensor | None = None,
                tgt_mask: tm.Tensor | None = None, memory_mask: tm.Tensor | None = None,
                src_key_padding_mask: tm.Tensor | None = None, tgt_key_padding_mask: tm.Tensor | None = None,
                memory_key_padding_mask: tm.Tensor | None = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> tm.Tensor:
        """Take in and process masked source/target sequences: ``src`` through the encoder, then
        ``tgt`` and the encoder's output through the decoder. ``src`` is (S, E) unbatched, (S, N, E)
        or with ``batch_first`` (N, S, E); ``tgt`` likewise with its own length T; the output has
        ``tgt``'s shape."""
        if src.dim() == 3 and src.size(0 if self.batch_first else 1) != tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype: tm.dtype | None = None) -> tm.Tensor:
        """Generate a square causal mask for the sequence: ``-inf`` above the diagonal (the masked
        positions), ``0.0`` elsewhere.

        >>> import tensormodes as tm
        >>> tm.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
        """
        return _square_subsequent_mask(sz, dtype, device)

    def _reset_parameters(self) -> None:
        """PyTorch's initialisation of the whole model: Xavier-uniform for every matrix."""
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


def _seq_len(x: tm.Tensor, batch_first: bool) -> int:
    """The sequence length of ``x``: (S, E) unbatched, else (N, S, E) or (S, N, E)."""
    return x.size(0) if x.dim() == 2 else x.size(1 if batch_first else 0)


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
