"""nll_loss's and cross entropy's half-type arithmetic as PyTorch's CPU kernels do it: sums of the
counted targets' losses and weights cascaded in the half type, and cross entropy's gradient
through the log_softmax backward kernel's exp and fused multiply-add (``nn.py`` declares the ops).
"""

from __future__ import annotations

import numpy as np

from ._random_math import fma32
from ._reduction import _half_cascade, _half_cascade_skipping
from .activation import _half_kernel_exponentials

__all__ = ["_half_nll_total", "half_softmax_less_one_hot", "half_weight_total"]


def _counted_half_sum(values: np.ndarray, positions, target: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The sum of the counted targets' ``values`` (float32) in the half type ``dtype`` as PyTorch's
    nll_loss kernels add them (``_half_cascade``; with ``positions`` (see ``_counted``), the
    cascade that skips the ignored ones, in the flattened (batch, spatial) order of its loop)."""
    if positions is None:
        return _half_cascade(values.reshape(-1), dtype)
    counted = np.ravel_multi_index(positions, target.shape or (1,))
    return _half_cascade_skipping(values.reshape(-1), counted, dtype)


def half_weight_total(per_target: np.ndarray, positions, target: np.ndarray) -> np.ndarray:
    """nll_loss's total weight of the counted targets (their weights ``per_target``, a half type),
    summed as its kernel sums it (``_counted_half_sum``)."""
    return _counted_half_sum(per_target.astype(np.float32), positions, target, per_target.dtype)


def _half_nll_total(picked, per_target, positions, target, mode) -> np.ndarray:
    """nll_loss's 'sum' or 'mean' of half-type entries as PyTorch's kernel computes them: the
    (weighted) negated entries and the weights summed in the half type (``_half_cascade``), the
    mean their quotient, rounded."""
    dtype = picked.dtype
    losses = -picked.astype(np.float32)
    if per_target is not None:
        losses = (losses * per_target.astype(np.float32)).astype(dtype).astype(np.float32)
    total = _counted_half_sum(losses, positions, target, dtype)
    weights = None if per_target is None else half_weight_total(per_target, positions, target)
    if mode == "sum":
        return np.asarray(total, dtype=dtype)
    count = np.float32(np.float32(picked.size).astype(dtype)) if weights is None else weights
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / count, dtype=dtype)


def half_softmax_less_one_hot(log_probs, index, positions, target, scales, dim: int) -> np.ndarray:
    """``nn._softmax_less_one_hot`` (cross entropy's gradient) of half-type log-probabilities as
    PyTorch's composite computes it: nll_loss's gradient N (``-scale`` at each counted target, in
    the half type), then the log_softmax backward kernel's ``N - exp(log_probs) * N.sum(dim)`` in
    float32 with its exp (``_half_kernel_exponentials``) and one fused multiply-add, rounded once.
    Each row of N holds one value at most, so its sum is that value exactly."""
    exponentials = _half_kernel_exponentials(log_probs, dim)
    batched = exponentials if dim else exponentials[None]
    row_scales = np.zeros(target.shape if dim else (1,), np.float32)
    if positions is not None:
        row_scales[positions] = scales
    else:
        row_scales[...] = scales
    less_one_hot = np.zeros(batched.shape, np.float32)
    less_one_hot[index] = -np.asarray(scales, np.float32)
    result = fma32(batched, np.broadcast_to(np.expand_dims(row_scales, 1), batched.shape), less_one_hot)
    return np.asarray(result.reshape(log_probs.shape).astype(log_probs.dtype))
