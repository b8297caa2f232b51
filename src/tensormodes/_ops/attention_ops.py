"""ATen's CPU flash-attention ops: ``_scaled_dot_product_flash_attention_for_cpu`` (returning the
output and the rows' log-sum-exp) and its backward op. ``nn.functional.scaled_dot_product_attention``
reaches them where PyTorch's CPU backend picks its flash kernel (4-D operands, no dropout, a mask
of a shape the kernel takes ...), so dispatch-level modes, ``make_fx`` graphs and FLOP counters
see PyTorch's ops; elsewhere it runs its math composition.

The kernels compute what PyTorch's flash kernel computes, step for step: the scores in the
accumulation type (float32 for the half types), scaled, masked, then a softmax over blocks of
512 keys kept online (running maximum and sum), the values weighted by the unnormalised
exponentials (rounded to the half type first, as PyTorch feeds its second product) and
multiplied by the reciprocal of the sum last; a row with nothing to attend to gives zeros and a
log-sum-exp of 0. Matrix products are NumPy's, so float32 results agree with PyTorch's to
float32 rounding (about 1e-7 relative), not bit for bit.

>>> import tensormodes as tm
>>> q = tm.ones(1, 1, 2, 2)
>>> out, lse = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, q * 3)
>>> out.tolist(), lse.shape
([[[[3.0, 3.0], [3.0, 3.0]]]], tensormodes.Size([1, 1, 2]))
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray, dense_strides
from .common import last_axis_maximum, no_derivative, ops, output_differentiability, scalar_type_name
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

_KV_BLOCK = 512  # PyTorch's kv_split_size: keys are taken 512 at a time, with an online softmax
_FLOATS = (np.float32, np.float64, dt.bfloat16._np, dt.float16._np)
_REDUCED = (dt.bfloat16._np, dt.float16._np)
_PREFIX = "scaled_dot_product_attention_flash_attention"


def _accumulation(dtype: np.dtype):
    """PyTorch's opmath type: float64 for float64, else float32."""
    return np.float64 if dtype == np.float64 else np.float32


def _scale_factor(query_shape, scale, accumulation):
    """``sdp::calculate_scale``: ``scale``, by default ``1 / sqrt(head size)``, in the accumulation type."""
    with np.errstate(divide="ignore"):
        value = (1.0 / math.sqrt(query_shape[-1]) if query_shape[-1] else math.inf) if scale is None else scale
    return accumulation(value)


def _check_forward(query, key, value, dropout_p, attn_mask) -> None:
    """ATen's checks of the forward op, in its order (it reads the query's sizes first)."""
    if query.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if query.dtype not in _FLOATS:
        raise RuntimeError(f"{_PREFIX}: Expected data type in FP32, FP64, BF16, FP16, but got "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[query.dtype])} instead.")
    if not (query.ndim == key.ndim == value.ndim == 4):
        raise RuntimeError(f"{_PREFIX}: Accept only 4 dims inputs shape of {{B, H, T, K}}")
    if dropout_p != 0.0:
        raise RuntimeError(f"{_PREFIX}: Currently do not support dropout > 0")
    if not (query.shape[3] == value.shape[3] and key.shape[3] == value.shape[3]):
        raise RuntimeError(f"{_PREFIX}: Q/K/V should have the same head size")
    if attn_mask is not None:
        if attn_mask.dtype != np.float32 and attn_mask.dtype != query.dtype:
            raise RuntimeError(f"{_PREFIX}: Attention mask is the same data type as query")
        if attn_mask.ndim not in (2, 4):
            raise RuntimeError(f"{_PREFIX}: Attention mask dim in {{2, 4}}")
    _check_operands(query, key, value, attn_mask)


def _check_operands(query, key, value, attn_mask, *others) -> None:
    """What PyTorch's kernel reads without checking, checked: one dtype (its typed data
    pointers), one batch size, heads of key and value that divide the query's, a mask that
    broadcasts to (batch, heads, L, S). PyTorch reads out of bounds for the last three."""
    for tensor in (key, value, *others):
        if tensor.dtype != query.dtype:
            raise RuntimeError(f"expected scalar type {scalar_type_name(dt.NP_TO_DTYPE[query.dtype])} but found "
                               f"{scalar_type_name(dt.NP_TO_DTYPE[tensor.dtype])}")
    batch, heads, length, _ = query.shape
    if not ((key.shape[0] == value.shape[0] == batch or not batch) and key.shape[1] == value.shape[1]
            and key.shape[2] == value.shape[2]) or (key.shape[1] and heads % key.shape[1]) \
            or (not key.shape[1] and heads):
        raise RuntimeError(f"{_PREFIX}: query {list(query.shape)}, key {list(key.shape)} and value "
                           f"{list(value.shape)} do not fit: one batch size and sequence length of key and "
                           f"value, and key/value heads dividing the query's heads are expected")
    if attn_mask is not None:
        target = (batch, heads, length, key.shape[2])[4 - attn_mask.ndim:]
        if any(m not in (1, t) for m, t in zip(attn_mask.shape, target)):
            raise RuntimeError(f"{_PREFIX}: attn_mask of shape {list(attn_mask.shape)} does not broadcast to "
                               f"{list(target)}")


def _grouped(tensor: np.ndarray, heads: int) -> np.ndarray:
    """Key or value heads repeated for grouped-query attention (each serves ``heads // own`` query heads)."""
    own = tensor.shape[1]
    return tensor if own == heads else np.repeat(tensor, heads // own, axis=1)


@functools.lru_cache(maxsize=64)
def _above_diagonal(length: int, source: int) -> np.ndarray:
    """The positions a causal mask hides: key index above query index (top-left aligned)."""
    mask = np.triu(np.ones((length, source), dtype=bool), 1)
    mask.flags.writeable = False
    return mask


def _scores(query, key, attn_mask, is_causal, factor, accumulation):
    """``query @ key.mT`` in the accumulation type, causal positions -inf, then scaled (and the mask
    added), in PyTorch's order: the causal fill precedes the scaling."""
    scores = np.matmul(query.astype(accumulation, copy=False), key.astype(accumulation, copy=False).swapaxes(-1, -2))
    if is_causal:
        np.copyto(scores, -np.inf, where=_above_diagonal(*scores.shape[-2:]))
    scores *= factor
    if attn_mask is not None:
        scores += attn_mask.astype(accumulation, copy=False)
    return scores


def _weighted(weights, values, dtype, accumulation):
    """``weights @ values``, the weights rounded to the half type first where PyTorch's product takes them so."""
    if dtype in _REDUCED:
        weights = weights.astype(dtype).astype(accumulation)
    return np.matmul(weights, values)


def _flash_output(query, key, value, is_causal, attn_mask, scale):
    """(output in the accumulation type, log-sum-exp), both (B, H, L, ...)."""
    dtype, accumulation = query.dtype, _accumulation(query.dtype)
    heads = query.shape[1]
    key, value = _grouped(key, heads), _grouped(value, heads)
    factor = _scale_factor(query.shape, scale, accumulation)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        scores = _scores(query, key, attn_mask, is_causal, factor, accumulation)
        values = value.astype(accumulation, copy=False)
        source = scores.shape[-1]
        if source <= _KV_BLOCK:  # one block of keys: no rescaling
            row_max = last_axis_maximum(scores) if source else np.full(scores.shape[:-1] + (1,), -np.inf, scores.dtype)
            dead = row_max == -np.inf
            if dead.any():  # a row with nothing to attend to: exp(-inf - 0) = 0, not exp(-inf + inf)
                row_max[dead] = 0
            scores -= row_max
            weights = np.exp(scores, out=scores)
            row_sum = np.add.reduce(weights, -1, keepdims=True)
            total = _weighted(weights, values, dtype, accumulation)
        else:
            row_max, row_sum, total = _online_softmax(scores, values, dtype, accumulation)
            dead = row_max == -np.inf
            row_max[dead] = 0
        row_sum[row_sum == 0] = 1
        total *= accumulation(1) / row_sum
        lse = np.log(row_sum, out=row_sum)
        lse += row_max
    return total, lse[..., 0]


def _online_softmax(scores, values, dtype, accumulation):
    """PyTorch's softmax over blocks of 512 keys: a running maximum and sum per row, the weighted
    values rescaled whenever the maximum grows. Returns (maximum, sum, weighted values)."""
    shape = scores.shape[:-1] + (1,)
    row_max = np.full(shape, -np.inf, accumulation)
    row_sum = np.zeros(shape, accumulation)
    total = None
    for start in range(0, scores.shape[-1], _KV_BLOCK):
        block = scores[..., start:start + _KV_BLOCK]
        new_max = np.maximum(row_max, np.maximum.reduce(block, -1, keepdims=True))
        # A row whose every score so far is -inf keeps zeros (exp(-inf - 0)), not exp(-inf + inf).
        safe_max = np.where(new_max == -np.inf, accumulation(0), new_max)
        weights = np.exp(block - safe_max)
        rescale = np.exp(row_max - safe_max)
        row_sum = np.add.reduce(weights, -1, keepdims=True) + rescale * row_sum
        row_max = new_max
        product = _weighted(weights, values[..., start:start + _KV_BLOCK, :], dtype, accumulation)
        total = product if total is None else total * rescale + product
    return row_max, row_sum, total


def _forward_meta(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    _check_forward(query, key, value, dropout_p, attn_mask)
    batch, heads, length, _ = query.shape
    lse_strides = (length * heads, 1, heads)  # allocated (B, L, H), seen transposed
    return (MetaArray(query.shape, query.dtype, dense_strides(query.shape, query.elem_strides)),
            MetaArray((batch, heads, length), np.dtype(_accumulation(query.dtype)), lse_strides))


@output_differentiability(True, False)  # the log-sum-exp has no history, as in PyTorch
def _flash_grad(grad, query, key, value, dropout_p, is_causal, attn_mask, scale, result0, result1):
    backward = ops.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    grad_query, grad_key, grad_value = backward(grad[0], query, key, value, result0, result1, dropout_p, is_causal,
                                                attn_mask=attn_mask, scale=scale)
    return grad_query, grad_key, grad_value, None


def _flash_differentiable(query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None) -> bool:
    """PyTorch records no gradient for the mask: a mask requiring grad is refused (sdpa then takes
    the math path)."""
    if attn_mask is not None and attn_mask.requires_grad:
        raise RuntimeError("The function '_scaled_dot_product_flash_attention_for_cpu' is not differentiable with "
                           "respect to argument 'attn_mask'. This input cannot have requires_grad True.")
    return True


_Q = TensorSpec((2, 2, 3, 4))
_KV = TensorSpec((2, 2, 5, 4))
_SMALL = TensorSpec((1, 2, 2, 3))  # small enough for the finite-difference checks
_FORWARD_SAMPLES = (
    Sample((_Q, _KV, _KV)),
    Sample((TensorSpec((0, 2, 3, 4)), TensorSpec((2, 2, 3, 4)), TensorSpec((2, 2, 3, 4)))),
    Sample((_SMALL, _SMALL, _SMALL)),
    Sample((_SMALL, _SMALL, _SMALL, 0.0, True)),
    Sample((_Q, _Q, _Q, 0.0, True), {"scale": 0.3}),
    Sample((_Q, _KV, _KV, 0.0, True)),  # causal with more keys than queries: top-left aligned
    Sample((_Q, _KV, _KV), {"attn_mask": TensorSpec((3, 5), "float32", -3, 3)}),
    Sample((_Q, _KV, _KV), {"attn_mask": TensorSpec((1, 2, 1, 5), "float32", -3, 3), "scale": -0.5}),
    Sample((TensorSpec((2, 4, 3, 4)), _KV, _KV)),  # grouped-query attention: 4 query heads, 2 key heads
    Sample((TensorSpec((2, 2, 3, 4), "float64"), TensorSpec((2, 2, 5, 4), "float64"),
            TensorSpec((2, 2, 5, 4), "float64")), {"is_causal": True}),
    Sample((TensorSpec((2, 2, 3, 4), "bfloat16"),) * 3),
    Sample((TensorSpec((2, 2, 3, 4), "bfloat16"),) * 3, {"attn_mask": TensorSpec((3, 3), "float32", -3, 3)}),
    Sample((TensorSpec((2, 2, 3, 4), "float16"),) * 3, {"is_causal": True}),
    Sample((TensorSpec((0, 2, 3, 4)),) * 3),  # an empty batch
    Sample((TensorSpec((1, 1, 520, 2), "float32", -4, 4), TensorSpec((1, 1, 600, 2), "float32", -4, 4),
            TensorSpec((1, 1, 600, 2)))),  # two blocks of keys: the online softmax rescales
)
_FORWARD_ERRORS = (
    Sample((TensorSpec((2, 3, 4)),) * 3),
    Sample((TensorSpec(()), TensorSpec(()), TensorSpec((1, 2, 3, 4)))),
    Sample((TensorSpec((2, 2, 3, 4), "int64"),) * 3),
    Sample((_Q, _KV, _KV, 0.5)),
    Sample((_Q, _KV, TensorSpec((2, 2, 5, 6)))),
    Sample((_Q, _KV, _KV), {"attn_mask": TensorSpec((3, 5), "float64")}),
    Sample((_Q, _KV, _KV), {"attn_mask": TensorSpec((2, 3, 5))}),
    Sample((TensorSpec((2, 2, 3, 4), "float64"), _KV, _KV)),
)


@op(name="_scaled_dot_product_flash_attention_for_cpu", function=False, aten="default",
    tags=("nondeterministic_seeded", "pt2_compliant_tag"), grad=_flash_grad, differentiable=_flash_differentiable,
    meta=rule(_forward_meta), errors=_FORWARD_ERRORS, samples=_FORWARD_SAMPLES,
    schema={"(returns)": "Tensor output, Tensor logsumexp"})
def _scaled_dot_product_flash_attention_for_cpu(query: Tensor, key: Tensor, value: Tensor, dropout_p: float = 0.0,
                                                is_causal: bool = False, *, attn_mask: Tensor | None = None,
                                                scale: float | None = None) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention of (batch, heads, L, E) ``query`` over (batch, heads', S, E)
    ``key`` and ``value`` (``heads'`` dividing ``heads``: grouped-query attention), as PyTorch's
    CPU flash kernel computes it: ``(output, logsumexp)``, the log-sum-exp of each query row's
    scaled, masked scores (float32 for the half types), which the backward op reuses.
    ``attn_mask`` is a float mask (float32 or the query's dtype) added to the scores; ``is_causal``
    keeps the lower triangle; ``dropout_p`` must be 0. What ``scaled_dot_product_attention``
    reaches at the dispatch level where PyTorch runs its flash kernel.

    >>> import tensormodes as tm
    >>> q = tm.zeros(1, 1, 2, 2)
    >>> v = tm.tensor([[[[1., 2.], [3., 4.]]]])
    >>> out, lse = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, v, is_causal=True)
    >>> out.tolist(), [round(x, 4) for x in lse.flatten().tolist()]
    ([[[[1.0, 2.0], [2.0, 3.0]]]], [0.0, 0.6931])
    """
    _check_forward(query, key, value, dropout_p, attn_mask)
    batch, heads, length, _ = query.shape
    if not batch:  # no query rows: nothing read from key and value (whatever their batch)
        return (np.empty_like(query, order="K"),
                np.empty((0, length, heads), _accumulation(query.dtype)).transpose(0, 2, 1))
    output, lse = _flash_output(query, key, value, is_causal, attn_mask, scale)
    result = output.astype(query.dtype, copy=False)
    if not result.flags.c_contiguous or not query.flags.c_contiguous:
        # PyTorch's output is empty_like(query): the query's memory format
        laid_out = np.empty_like(query, order="K")
        laid_out[...] = result
        result = laid_out
    logsumexp = np.empty((batch, length, heads), lse.dtype).transpose(0, 2, 1)
    logsumexp[...] = lse
    return result, logsumexp


# -- backward ----------------------------------------------------------------------------------

def _check_backward(grad_out, query, key, value, out, logsumexp, attn_mask) -> None:
    if query.dtype not in _FLOATS:
        raise RuntimeError(f'"flash_attention_backward" not implemented for '
                           f"'{scalar_type_name(dt.NP_TO_DTYPE[query.dtype])}'")
    if not all(t.ndim == 4 for t in (grad_out, query, key, value, out)):
        raise RuntimeError(f"{_PREFIX}_backward: Accept only 4 dims inputs shape of {{B, H, T, K}}")
    if not (query.shape[3] == value.shape[3] and key.shape[3] == value.shape[3]):
        raise RuntimeError(f"{_PREFIX}_backward: Q/K/V should have the same head size")
    if grad_out.shape != query.shape or out.shape != query.shape:
        raise RuntimeError(f"{_PREFIX}_backward: grad_out {list(grad_out.shape)} and out {list(out.shape)} must "
                           f"have the query's shape {list(query.shape)}")
    if logsumexp.shape != query.shape[:3] or logsumexp.dtype != _accumulation(query.dtype):
        raise RuntimeError(f"{_PREFIX}_backward: logsumexp must be of shape {list(query.shape[:3])} and dtype "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[np.dtype(_accumulation(query.dtype))])}")
    if attn_mask is not None and attn_mask.ndim not in (2, 4):
        raise RuntimeError(f"{_PREFIX}_backward: Attention mask dim in {{2, 4}}")
    _check_operands(query, key, value, attn_mask, grad_out, out)


def _backward_layout(shape) -> tuple[int, ...]:
    """PyTorch's gradients are allocated (B, L, H, E) and returned transposed to (B, H, L, E)."""
    batch, heads, length, size = shape
    return (length * heads * size, size, heads * size, 1)


def _laid_out(shape, dtype) -> np.ndarray:
    """An empty gradient of ``shape`` in PyTorch's layout: (B, L, H, E) memory seen as (B, H, L, E)."""
    batch, heads, length, size = shape
    return np.empty((batch, length, heads, size), dtype).transpose(0, 2, 1, 3)


def _store(gradient: np.ndarray, dtype, own_heads: int) -> np.ndarray:
    """``gradient`` in PyTorch's layout and dtype; for repeated key / value heads summed back over each group."""
    batch, heads, length, size = gradient.shape
    if own_heads != heads:
        gradient = gradient.reshape(batch, own_heads, heads // own_heads, length, size).sum(2)
    result = _laid_out(gradient.shape, dtype)
    np.copyto(result, gradient, casting="unsafe")
    return result


def _flash_backward(grad_out, query, key, value, logsumexp, is_causal, attn_mask, scale, out):
    dtype, accumulation = query.dtype, _accumulation(query.dtype)
    if query.size == 0:  # PyTorch's kernel loops over the query's rows: none, so zero gradients
        return tuple(_store(np.zeros(t.shape, dtype), dtype, t.shape[1]) for t in (query, key, value))
    heads, key_heads = query.shape[1], key.shape[1]
    factor = _scale_factor(query.shape, scale, accumulation)
    q = query.astype(accumulation, copy=False)
    k = _grouped(key, heads).astype(accumulation, copy=False)
    v = _grouped(value, heads).astype(accumulation, copy=False)
    g = grad_out.astype(accumulation, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        row_dot = np.add.reduce(g * out.astype(accumulation, copy=False), -1, keepdims=True)
        # The weights restored from the log-sum-exp: PyTorch scales inside the product, adds the
        # mask, subtracts the log-sum-exp, and zeroes the causal positions after the exp.
        weights = np.matmul(q, k.swapaxes(-1, -2))
        weights *= factor
        if attn_mask is not None:
            weights += attn_mask.astype(accumulation, copy=False)
        weights -= logsumexp[..., None]
        np.exp(weights, out=weights)
        if is_causal:
            np.copyto(weights, 0, where=_above_diagonal(*weights.shape[-2:]))
        reduced = dtype in _REDUCED  # PyTorch's products take the weights rounded to the half type
        fed = weights.astype(dtype).astype(accumulation) if reduced else weights
        grad_value = np.matmul(fed.swapaxes(-1, -2), g)
        grad_weights = np.matmul(g, v.swapaxes(-1, -2))
        grad_weights -= row_dot
        grad_weights *= weights
        if reduced:
            grad_weights = grad_weights.astype(dtype).astype(accumulation)
        grad_query = np.matmul(grad_weights, k)
        grad_query *= factor
        grad_key = np.matmul(grad_weights.swapaxes(-1, -2), q)
        grad_key *= factor
    return _store(grad_query, dtype, heads), _store(grad_key, dtype, key_heads), _store(grad_value, dtype, key_heads)


def _backward_meta(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, *, attn_mask=None,
                   scale=None):
    _check_backward(grad_out, query, key, value, out, logsumexp, attn_mask)
    return tuple(MetaArray(t.shape, query.dtype, _backward_layout(t.shape)) for t in (query, key, value))


_LSE = TensorSpec((2, 2, 3), "float32", 0, 3)
_BACKWARD_SAMPLES = (
    Sample((_Q, _Q, _KV, _KV, _Q, _LSE, 0.0, False)),
    Sample((_Q, _Q, _KV, _KV, _Q, _LSE, 0.0, True), {"scale": 0.7}),
    Sample((_Q, _Q, _KV, _KV, _Q, _LSE, 0.0, False), {"attn_mask": TensorSpec((3, 5), "float32", -3, 3)}),
    Sample((TensorSpec((2, 4, 3, 4)), TensorSpec((2, 4, 3, 4)), _KV, _KV, TensorSpec((2, 4, 3, 4)),
            TensorSpec((2, 4, 3), "float32", 0, 3), 0.0, False)),
    Sample((TensorSpec((1, 2, 3, 4), "float64"),) * 5 + (TensorSpec((1, 2, 3), "float64", 0, 3), 0.0, True)),
    Sample((TensorSpec((1, 2, 3, 4), "bfloat16"),) * 5 + (TensorSpec((1, 2, 3), "float32", 0, 3), 0.0, False)),
)


@op(name="_scaled_dot_product_flash_attention_for_cpu_backward", function=False, aten="default",
    tags=("pt2_compliant_tag",), grad=no_derivative("_scaled_dot_product_flash_attention_for_cpu_backward"),
    meta=rule(_backward_meta), samples=_BACKWARD_SAMPLES,
    errors=(Sample((_Q, _Q, _KV, _KV, _Q, TensorSpec((2, 2, 3), "float64"), 0.0, False)),
            Sample((_Q, _Q, _KV, TensorSpec((2, 2, 5, 3)), _Q, _LSE, 0.0, False))),
    schema={"(returns)": "Tensor grad_query, Tensor grad_key, Tensor grad_value"})
def _scaled_dot_product_flash_attention_for_cpu_backward(
        grad_out: Tensor, query: Tensor, key: Tensor, value: Tensor, out: Tensor, logsumexp: Tensor,
        dropout_p: float, is_causal: bool, *, attn_mask: Tensor | None = None,
        scale: float | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """The gradients of ``_scaled_dot_product_flash_attention_for_cpu`` with respect to ``query``,
    ``key`` and ``value``, given the output's gradient ``grad_out`` and the forward's ``out`` and
    ``logsumexp``, as PyTorch's CPU flash kernel computes them (the attention weights restored from
    the log-sum-exp). PyTorch has no derivative of it (no double backward).

    >>> import tensormodes as tm
    >>> q, v = tm.zeros(1, 1, 2, 2), tm.tensor([[[[1., 2.], [3., 4.]]]])
    >>> aten = tm.ops.aten
    >>> out, lse = aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, v)
    >>> grads = aten._scaled_dot_product_flash_attention_for_cpu_backward.default(tm.ones_like(out), q, q, v, out,
    ...                                                                           lse, 0.0, False)
    >>> grads[2].tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    _check_backward(grad_out, query, key, value, out, logsumexp, attn_mask)
    return _flash_backward(grad_out, query, key, value, logsumexp, is_causal, attn_mask, scale, out)
