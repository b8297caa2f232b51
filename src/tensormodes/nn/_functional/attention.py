"""``nn.functional.scaled_dot_product_attention`` and ``multi_head_attention_forward`` (the body of
``nn.MultiheadAttention``), with the mask helpers the attention modules share.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _dtype
from ..._ops.common import cpp_type_name
from ..._ops.registry import Tensor
from ..._state import STATE as _STATE
from ..._tensor_base import PLAIN as _PLAIN
from ...backends import cuda as _sdp_switches
from ...ops import aten
from ._common import _builtin, _function, _public
from .convolution import linear
from .dropout import dropout
from .padding import pad

_ND = np.ndarray
_FLASH_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

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
    if attn_mask is None and not enable_gqa and dropout_p == 0.0 and _flash_without_checks(query, key, value):
        return _FLASH(query, key, value, dropout_p, is_causal, scale=scale)[0]
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
    if not (_sdp_switches.math_sdp_enabled() or _sdp_switches.flash_sdp_enabled()):
        # on a CPU PyTorch runs the math or the flash kernel
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    refusal = _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa)
    if refusal is None:  # PyTorch's CPU flash kernel: one op, forward and backward
        if attn_mask is not None and attn_mask.dtype == _dtype.bool:
            # PyTorch's convert_boolean_attn_mask: 0 where attending, -inf elsewhere
            attn_mask = _function("where")(attn_mask, _function("scalar_tensor")(0.0, dtype=query.dtype),
                                           _function("scalar_tensor")(-math.inf, dtype=query.dtype))
        return _FLASH(query, key, value, dropout_p, is_causal, attn_mask=attn_mask, scale=scale)[0]
    if not _sdp_switches.math_sdp_enabled():
        if refusal:  # PyTorch names why its flash kernel was not used, then refuses
            warnings.warn("Flash attention kernel not used because:", stacklevel=3)
            warnings.warn(refusal, stacklevel=3)
        raise RuntimeError("No available kernel.  Aborting execution.")
    if enable_gqa:  # grouped-query attention: each key / value head serves a group of query heads
        heads, key_heads, value_heads = query.size(-3), key.size(-3), value.size(-3)
        if heads % key_heads or heads % value_heads:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        key = key.repeat_interleave(heads // key_heads, -3)
        value = value.repeat_interleave(heads // value_heads, -3)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if query.dtype in (_dtype.float16, _dtype.bfloat16):
        return _half_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = _function("ones")(query.shape[-2], key.shape[-2], dtype=_dtype.bool, device=query.device).tril()
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


_FLASH = aten._scaled_dot_product_flash_attention_for_cpu.default


def _flash_without_checks(query: Tensor, key: Tensor, value: Tensor) -> bool:
    """Whether plain float32 / float64 operands, no mask, no dropout and no mode make every check of
    ``scaled_dot_product_attention`` pass and its ``_flash_refusal`` give None, read off the arrays
    in a few comparisons (a GPT's attention, every call): 4-D, one dtype, one batch size, head count
    and head size, none of them 0, no empty sequence, the last dimension of stride 1. Anything else
    (False) takes the checks in PyTorch's order."""
    plain = _PLAIN.tensor
    if not (type(query) is plain and type(key) is plain and type(value) is plain and _STATE.get() is None
            and _sdp_switches.flash_sdp_enabled()):
        return False
    q, k, v = query._data, key._data, value._data
    if not (type(q) is _ND and type(k) is _ND and type(v) is _ND and q.ndim == k.ndim == v.ndim == 4
            and q.dtype is k.dtype is v.dtype and q.dtype in _FLASH_FLOATS):
        return False
    (batch, heads, length, size), (key_batch, key_heads, source, key_size), (value_batch, value_heads, _, value_size) \
        = q.shape, k.shape, v.shape
    item = q.itemsize
    return (batch == key_batch == value_batch and heads == key_heads == value_heads and size == key_size == value_size
            and q.strides[-1] == k.strides[-1] == v.strides[-1] == item
            and batch > 0 and heads > 0 and size > 0 and length > 0 and source > 0)


def _sizes(*tensors: Tensor) -> tuple[str, ...]:
    return tuple(f"[{', '.join(map(str, t.shape))}]" for t in tensors)


# long: PyTorch's gates of its CPU flash kernel (sdp_utils_cpp), in its order, each with its words
def _flash_refusal(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, dropout_p: float,
                   enable_gqa: bool) -> str | None:
    """None where PyTorch's CPU backend runs its flash kernel for these arguments, else why not
    (the warning PyTorch gives; "" where it gives none). The operands' dtypes are checked already."""
    if not _sdp_switches.flash_sdp_enabled():
        return "Flash attention has been runtime disabled."
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not query.dim() == key.dim() == value.dim() == 4:
        return (f"All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: "
                f"{query.dim()}, Key dim: {key.dim()}, Value dim: {value.dim()} instead.")
    (batch, heads, length, size), (key_batch, key_heads, source, key_size), (value_batch, value_heads, _, value_size) \
        = query.shape, key.shape, value.shape
    if not batch == key_batch == value_batch:
        q_sizes, k_sizes, v_sizes = _sizes(query, key, value)
        return (f"For dense inputs, both fused kernels require query, key and value to have the same batch_size. "
                f"Query.sizes(): {q_sizes}, Key.sizes(): {k_sizes}, Value.sizes(): {v_sizes} instead. To broadcast "
                f"dense inputs, try using unsqueeze and expand_to before passing them into the kernel.")
    if enable_gqa:
        if key_heads != value_heads:
            q_sizes, k_sizes, v_sizes = _sizes(query, key, value)
            return (f"Both fused kernels require key and value to have the same num_heads and batch_size but got: "
                    f"Key sizes: {k_sizes}, Value sizes: {v_sizes}, Query sizes: {q_sizes} instead.")
        if not key_heads or heads % key_heads:
            return (f"FlashAttentionV2 only supports grouped query attention, where the number of heads in "
                    f"key/value must divide number of heads in query.Got input Key sizes(): {key_heads}, Value "
                    f"sizes(): {value_heads}, Query sizes(): {heads} instead.")
    elif not heads == key_heads == value_heads:
        q_sizes, k_sizes, v_sizes = _sizes(query, key, value)
        return (f"For dense input, both fused kernels require query, key and value to have the same num_heads. "
                f"Query.sizes(): {q_sizes}, Key sizes(): {k_sizes}, Value sizes(): {v_sizes} instead. To "
                f"broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel.")
    if attn_mask is not None:
        if attn_mask.requires_grad:
            return ""
        shape = attn_mask.shape
        if not (attn_mask.dim() == 2 or attn_mask.dim() == 4 and shape[0] in (1, batch) and shape[1] in (1, heads)) \
                or shape[-2] not in (length, 1) or shape[-1] not in (source, 1):
            return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); "
                    "4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})")
    if not size == key_size == value_size:
        return (f"Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): "
                f"{size}, Key.size(-1): {key_size}, Value.size(-1): {value_size} instead.")
    if not length or not source:
        return "All fused kernels do not support zero seq_len_q or seq_len_kv."
    strides = (query.stride(-1), key.stride(-1), value.stride(-1))
    mask_stride = 1 if attn_mask is None else attn_mask.stride(-1)
    if strides != (1, 1, 1) or mask_stride != 1:
        return (f"All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): "
                f"{strides[0]}, Key.stride(-1): {strides[1]}, Value.stride(-1): {strides[2]}"
                + ("" if attn_mask is None else f", Attn_mask.stride(-1): {mask_stride}") + " instead.")
    if not (batch and heads and size and key_heads):
        return ""  # PyTorch answers empty operands without a kernel
    return None


def _half_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, dropout_p: float,
                    is_causal: bool, scale: float) -> Tensor:
    """Half-type attention as PyTorch's CPU kernels compute it: in float32, rounded once at the end.
    4-D operands of one head size take its flash kernel, which multiplies the values by the
    unnormalised weights ``exp(scores - max)`` rounded to the half type and divides by their
    float32 sum last; others its math path, which upcasts to float32."""
    dtype = query.dtype
    q, k, v = query.float(), key.float(), value.float()
    scores = q.matmul(k.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = _function("ones")(query.shape[-2], key.shape[-2], dtype=_dtype.bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype == _dtype.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask.float()
    # Rows with every position masked attend to nothing: zeros, not softmax's NaN.
    empty = (scores == -math.inf).all(-1, keepdim=True)
    scores = scores.where(empty.logical_not(), 0.0)
    flash = query.dim() == key.dim() == value.dim() == 4 and query.shape[-1] == key.shape[-1] == value.shape[-1]
    if flash and dropout_p == 0.0:
        exps = (scores - scores.amax(-1, keepdim=True)).exp()
        result = exps.to(dtype).float().matmul(v) / exps.sum(-1, keepdim=True)
    else:
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        result = weights.matmul(v)
    return result.where(empty.logical_not(), 0.0).to(dtype)


# -- multi-head attention ----------------------------------------------------------------------

def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True) -> Tensor | None:
    """``mask`` as an additive float mask of ``target_type``: a boolean mask's True positions (the
    ones *not* to attend to) become -inf, the others 0; a float mask is returned as it is."""
    if mask is None:
        return None
    if mask.dtype != _dtype.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      f"instead.", stacklevel=3)
    if mask.is_floating_point():
        return mask
    return _function("zeros_like")(mask, dtype=target_type).masked_fill(mask, -math.inf)


def _none_or_dtype(input: Tensor | None):
    return None if input is None else input.dtype


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the inputs are batched ((L, N, E) rather than (L, E)); checks the ranks agree."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                                     .replace("tensormodes.", "torch."))
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         f"tensor")


def _size_text(shape) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _check_static(name: str, static: Tensor, heads: int, head_dim: int) -> Tensor:
    if static.size(0) != heads:
        raise AssertionError(f"expecting {name}.size(0) of {heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


@_public
def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
                                 static_v: Tensor | None = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over sequence-first inputs: ``query`` (L, N, E), ``key`` and ``value``
    (S, N, E_k / E_v), or unbatched (L, E). Projects them (packed ``in_proj_weight`` or the separate
    ``q/k/v_proj_weight``), attends per head, projects back with ``out_proj``. Boolean masks mark
    the positions *not* to attend to; float masks are added. Returns the output and, with
    ``need_weights``, the attention weights (averaged over heads unless ``average_attn_weights`` is
    False), else None.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> x, eye = tm.ones(2, 1, 4), tm.eye(4)
    >>> out, weights = F.multi_head_attention_forward(x, x, x, 4, 2, tm.cat([eye] * 3), None, None, None, False,
    ...                                               0.0, eye, None)
    >>> out.shape, weights.tolist()
    (tensormodes.Size([2, 1, 4]), [[[0.5, 0.5], [0.5, 0.5]]])
    """
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, batch, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # scaled_dot_product_attention applies the causal mask itself.
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                             q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        attn_mask = _checked_attn_mask(attn_mask, key, tgt_len, batch, num_heads)
    k, v, attn_mask, key_padding_mask = _add_bias_kv(k, v, bias_k, bias_v, static_k, static_v, batch, attn_mask,
                                                     key_padding_mask)
    heads = batch * num_heads
    q, k, v = _split_heads(q, k, v, tgt_len, heads, head_dim, static_k, static_v)
    if add_zero_attn:
        k, v, attn_mask, key_padding_mask = _add_zero_attn(k, v, heads, head_dim, attn_mask, key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        attn_mask = _merge_key_padding_mask(key_padding_mask, attn_mask, batch, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    if need_weights:
        output, weights_out = _attention_with_weights(q, k, v, attn_mask, dropout_p, batch, num_heads, tgt_len,
                                                      src_len, head_dim, embed_dim, out_proj_weight, out_proj_bias,
                                                      average_attn_weights)
        if not batched:
            return output.squeeze(1), weights_out.squeeze(0)
        return output, weights_out
    output = _fused_attention(q, k, v, attn_mask, dropout_p, is_causal, batch, num_heads, tgt_len, src_len,
                              head_dim, embed_dim, out_proj_weight, out_proj_bias)
    return (output if batched else output.squeeze(1)), None


# The steps of multi_head_attention_forward, in the order it takes them; each reads and calls on
# tensors exactly what the step did inline (modes and tracers see the same calls).

def _in_projection(query: Tensor, key: Tensor, value: Tensor, in_proj_weight: Tensor | None,
                   in_proj_bias: Tensor | None, use_separate_proj_weight: bool, q_proj_weight: Tensor | None,
                   k_proj_weight: Tensor | None, v_proj_weight: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """The projected query, key and value: the packed ``in_proj_weight`` split in three, or the
    separate ``q/k/v_proj_weight``."""
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {_size_text(key.shape[:2])} do not match value's "
                                 f"{_size_text(value.shape[:2])}")
        for name, weight in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if weight is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {_size_text(key.shape)} does not match value shape "
                                 f"{_size_text(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        weights = in_proj_weight.chunk(3)
    biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))
    return q, k, v


def _checked_attn_mask(attn_mask: Tensor, key: Tensor, tgt_len: int, batch: int, num_heads: int) -> Tensor:
    """``attn_mask``'s shape checked; a 2-D mask gets a leading dimension (3-D, one per batch and head)."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
            raise RuntimeError(f"The shape of the 2D attn_mask is {_size_text(attn_mask.shape)}, but should be "
                               f"{(tgt_len, key.shape[0])}.")
        attn_mask = attn_mask.unsqueeze(0)
    elif tuple(attn_mask.shape) != (batch * num_heads, tgt_len, key.shape[0]):
        raise RuntimeError(f"The shape of the 3D attn_mask is {_size_text(attn_mask.shape)}, but should be "
                           f"{(batch * num_heads, tgt_len, key.shape[0])}.")
    return attn_mask


def _add_bias_kv(k: Tensor, v: Tensor, bias_k: Tensor | None, bias_v: Tensor | None, static_k: Tensor | None,
                 static_v: Tensor | None, batch: int, attn_mask: Tensor | None,
                 key_padding_mask: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
    """``bias_k`` and ``bias_v`` appended to the keys and values (the masks padded to match)."""
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        # One more key / value position, shared by every batch element.
        k = _function("cat")([k, bias_k.repeat(1, batch, 1)])
        v = _function("cat")([v, bias_v.repeat(1, batch, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    return k, v, attn_mask, key_padding_mask


def _split_heads(q: Tensor, k: Tensor, v: Tensor, tgt_len: int, heads: int, head_dim: int, static_k: Tensor | None,
                 static_v: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """Heads join the batch: (N * num_heads, length, head_dim); ``static_k`` / ``static_v`` replace
    the keys / values."""
    q = q.reshape(tgt_len, heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], heads, head_dim).transpose(0, 1) if static_k is None else \
        _check_static("static_k", static_k, heads, head_dim)
    v = v.reshape(v.shape[0], heads, head_dim).transpose(0, 1) if static_v is None else \
        _check_static("static_v", static_v, heads, head_dim)
    return q, k, v


def _add_zero_attn(k: Tensor, v: Tensor, heads: int, head_dim: int, attn_mask: Tensor | None,
                   key_padding_mask: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
    """A zero key and value appended to every head (the masks padded to match)."""
    k = _function("cat")([k, k.new_zeros((heads, 1, head_dim))], 1)
    v = _function("cat")([v, v.new_zeros((heads, 1, head_dim))], 1)
    attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
    key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    return k, v, attn_mask, key_padding_mask


def _merge_key_padding_mask(key_padding_mask: Tensor, attn_mask: Tensor | None, batch: int, num_heads: int,
                            src_len: int) -> Tensor:
    """``key_padding_mask`` (checked) spread over the heads and added to ``attn_mask``."""
    if key_padding_mask.shape[0] != batch:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {batch}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    key_padding_mask = key_padding_mask.reshape(batch, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
        .reshape(batch * num_heads, 1, src_len)
    return key_padding_mask if attn_mask is None else attn_mask + key_padding_mask


def _attention_with_weights(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, dropout_p: float,
                            batch: int, num_heads: int, tgt_len: int, src_len: int, head_dim: int, embed_dim: int,
                            out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                            average_attn_weights: bool) -> tuple[Tensor, Tensor]:
    """Attention written out, as PyTorch does when the weights are asked for: the projected output
    (L, N, E) and the weights (N, num_heads, L, S), averaged over the heads if asked."""
    scores = (q * math.sqrt(1.0 / head_dim)).bmm(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights_out = scores.softmax(-1)
    if dropout_p > 0.0:
        weights_out = dropout(weights_out, p=dropout_p)
    output = weights_out.bmm(v).transpose(0, 1).reshape(tgt_len * batch, embed_dim)
    output = linear(output, out_proj_weight, out_proj_bias).reshape(tgt_len, batch, -1)
    weights_out = weights_out.reshape(batch, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights_out = weights_out.mean(dim=1)
    return output, weights_out


def _fused_attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, dropout_p: float, is_causal: bool,
                     batch: int, num_heads: int, tgt_len: int, src_len: int, head_dim: int, embed_dim: int,
                     out_proj_weight: Tensor, out_proj_bias: Tensor | None) -> Tensor:
    """Attention through ``scaled_dot_product_attention`` (no weights asked for): the projected
    output, (L, N, E)."""
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 else \
            attn_mask.reshape(batch, num_heads, -1, src_len)
    q = q.reshape(batch, num_heads, tgt_len, head_dim)
    k = k.reshape(batch, num_heads, src_len, head_dim)
    v = v.reshape(batch, num_heads, src_len, head_dim)
    output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    output = output.permute(2, 0, 1, 3).reshape(batch * tgt_len, embed_dim)
    return linear(output, out_proj_weight, out_proj_bias).reshape(tgt_len, batch, -1)
