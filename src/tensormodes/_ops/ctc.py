"""The connectionist temporal classification loss: ``_ctc_loss`` (PyTorch's ``torch._ctc_loss``, node
``CtcLossBackward0``), behind ``nn.functional.ctc_loss`` and ``nn.CTCLoss``, and its gradient
``_ctc_loss_backward``.

The forward variables (log alpha) and the backward ones (log beta) run over the target with a
blank between and around its labels, in log space; the loss is minus the log-likelihood of the
target. As PyTorch's kernel, the gradient is taken as if ``log_probs`` came out of a
``log_softmax`` (``exp(log_probs) - posterior``), the positions past an input's length get none,
and ``zero_infinity`` zeroes the gradient of infinite losses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._meta_array import MetaArray
from .common import dtype_of, no_derivative, not_implemented, ops, quiet
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op
from .shape import legacy_type_name

_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def _check_ctc(log_probs, targets, input_lengths, target_lengths, blank: int) -> int:
    """PyTorch's checks; the longest target."""
    if log_probs.dtype not in _FLOATS:
        raise not_implemented("ctc_loss_cpu", dtype_of(log_probs))
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to have 3 dimensions, but got {log_probs.ndim}")
    if targets.dtype not in (np.int64, np.int32):  # the int32 kernel's check (int64 has its own kernel)
        legacy = legacy_type_name(targets)  # (the types without a legacy tensor class: CPU<Name>Type)
        name = legacy if targets.dtype.kind in "iuf" and targets.dtype.itemsize > 1 or targets.dtype == np.uint8 \
            or targets.dtype == np.int8 else f"CPU{legacy[len('torch.'):-len('Tensor')]}Type"
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have scalar type Int; but got {name} "
                           "instead (while checking arguments for ctc_loss_allocate_outputs)")
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    longest = max(target_lengths, default=0)
    if targets.ndim == 1 and targets.shape[0] != sum(target_lengths):  # concatenated targets: all of them
        raise RuntimeError(f"Expected tensor to have size {sum(target_lengths)} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets' (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    if targets.ndim != 1:
        if targets.shape[0] != batch if targets.ndim else True:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size "
                               f"{targets.shape[0] if targets.ndim else 0} for argument #2 'targets' (while checking "
                               "arguments for ctc_loss_allocate_outputs)")
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
    for length in input_lengths:
        if length > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {length} (while "
                               "checking arguments for ctc_loss_allocate_outputs)")
    return longest


def _labels(targets: np.ndarray, target_lengths: Sequence[int], n: int) -> np.ndarray:
    """Sample ``n``'s target labels."""
    if targets.ndim == 1:
        start = sum(target_lengths[:n])
        return targets[start:start + target_lengths[n]].astype(np.int64)
    return targets[n, :target_lengths[n]].astype(np.int64)


def _extended(labels: np.ndarray, blank: int) -> tuple[np.ndarray, np.ndarray]:
    """The labels with blanks between and around them, and where a state may skip the one before."""
    states = np.full(2 * len(labels) + 1, blank, np.int64)
    states[1::2] = labels
    skip = np.zeros(len(states), bool)
    skip[2:] = (states[2:] != blank) & (states[2:] != states[:-2])
    return states, skip


def _log_add(*terms: np.ndarray) -> np.ndarray:
    stacked = np.stack(terms)
    top = stacked.max(axis=0)
    finite = np.where(np.isfinite(top), top, 0)
    with quiet():
        return np.where(np.isneginf(top), -np.inf, finite + np.log(np.exp(stacked - finite).sum(axis=0)))


def _alphas(lp: np.ndarray, states, skip, length: int) -> np.ndarray:
    """log alpha (T, S): the log-probability of the states at each step, having read the input so far."""
    alpha = np.full((lp.shape[0], len(states)), -np.inf, lp.dtype)
    if length == 0:
        return alpha
    alpha[0, 0] = lp[0, states[0]]
    if len(states) > 1:
        alpha[0, 1] = lp[0, states[1]]
    for t in range(1, length):
        previous = alpha[t - 1]
        one_back = np.concatenate([[-np.inf], previous[:-1]])
        two_back = np.where(skip, np.concatenate([[-np.inf, -np.inf], previous[:-2]])[:len(previous)], -np.inf)
        alpha[t] = _log_add(previous, one_back, two_back) + lp[t, states]
    return alpha


def _betas(lp: np.ndarray, states, skip, length: int) -> np.ndarray:
    """log beta (T, S): the log-probability of reading the rest of the input from each state."""
    beta = np.full((lp.shape[0], len(states)), -np.inf, lp.dtype)
    if length == 0:
        return beta
    last = length - 1
    beta[last, -1] = lp[last, states[-1]]
    if len(states) > 1:
        beta[last, -2] = lp[last, states[-2]]
    skip_ahead = np.concatenate([skip[2:], [False, False]])[:len(states)]  # state s may jump to s + 2
    for t in range(last - 1, -1, -1):
        following = beta[t + 1]
        one_ahead = np.concatenate([following[1:], [-np.inf]])
        two_ahead = np.where(skip_ahead, np.concatenate([following[2:], [-np.inf, -np.inf]])[:len(following)], -np.inf)
        beta[t] = _log_add(following, one_ahead, two_ahead) + lp[t, states]
    return beta


def _ctc_loss_meta(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    longest = _check_ctc(log_probs, targets, input_lengths, target_lengths, blank)
    steps, batch, _ = log_probs.shape
    return MetaArray((batch,), log_probs.dtype), MetaArray((batch, steps, 2 * longest + 1), log_probs.dtype)


def _ctc_loss_grad(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result, log_alpha):
    return ops._ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, result, log_alpha, blank,
                                  zero_infinity), None


_LOG_PROBS = TensorSpec((6, 2, 4), "float32", -3, 0)
_TARGETS = TensorSpec((2, 3), "int64", 1, 3)


@op(grad=_ctc_loss_grad, saves=("log_alpha",), meta=rule(_ctc_loss_meta),
    errors=(Sample((_LOG_PROBS, _TARGETS, [6, 5], [3, 2], 4)), Sample((_LOG_PROBS, _TARGETS, [7, 5], [3, 2])),
            Sample((_LOG_PROBS, _TARGETS, [6], [3, 2])), Sample((_LOG_PROBS, _TARGETS, [6, 5], [3])),
            Sample((_LOG_PROBS, _TARGETS, [6, 5], [4, 2])),
            Sample((TensorSpec((6, 2, 4), "float16"), _TARGETS, [6, 5], [3, 2]))),
    samples=(Sample((_LOG_PROBS, _TARGETS, [6, 5], [3, 2])),
             Sample((TensorSpec((5, 3, 5), "float64", -4, 0), TensorSpec((3, 4), "int64", 1, 4), [5, 3, 4], [2, 4, 0]),
                    {"blank": 0}),
             Sample((TensorSpec((6, 2, 4), "float64", -3, 0), TensorSpec((5,), "int64", 0, 2), [6, 6], [3, 2], 3)),
             Sample((TensorSpec((2, 2, 4), "float64", -3, 0), _TARGETS, [2, 2], [3, 2]), {"zero_infinity": True}),
             Sample((TensorSpec((2, 2, 4), "float64", -3, 0), _TARGETS, [2, 2], [3, 2]))),
    tags=("dynamic_output_shape",))
def _ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: list[int], target_lengths: list[int], blank: int = 0,
              zero_infinity: bool = False) -> Tensor:
    """Minus the log-likelihood of each sample's target (N,) under the CTC model, from
    ``log_probs`` (T, N, C) read up to each sample's input length; ``targets`` padded (N, S) or
    concatenated (sum of the target lengths). A target the input cannot spell has an infinite
    loss. PyTorch's ``torch._ctc_loss`` (its first output; node ``CtcLossBackward0``).

    >>> import tensormodes as tm
    >>> lp = tm.full((1, 1, 2), 0.5).log()
    >>> tm._ctc_loss(lp, tm.tensor([[1]]), [1], [1])
    tensor([0.6931])
    """
    _check_ctc(log_probs, targets, input_lengths, target_lengths, blank)
    steps, batch, _ = log_probs.shape
    longest = max(target_lengths, default=0)
    losses = np.zeros(batch, log_probs.dtype)
    log_alpha = np.full((batch, steps, 2 * longest + 1), -np.inf, log_probs.dtype)
    for n in range(batch):
        states, skip = _extended(_labels(targets, target_lengths, n), blank)
        alpha = _alphas(log_probs[:, n], states, skip, input_lengths[n])
        log_alpha[n, :, :len(states)] = alpha
        if input_lengths[n] == 0:
            losses[n] = 0.0 if len(states) == 1 else np.inf
            continue
        last = alpha[input_lengths[n] - 1]
        losses[n] = -_log_add(last[-1], last[-2] if len(states) > 1 else np.array(-np.inf))
    return losses, log_alpha


def _ctc_loss_backward_meta(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
                            blank, zero_infinity):
    return MetaArray(log_probs.shape, log_probs.dtype)


@op(grad=no_derivative("_ctc_loss_backward"), meta=rule(_ctc_loss_backward_meta),
    samples=(Sample((TensorSpec((2,)), _LOG_PROBS, _TARGETS, [6, 5], [3, 2], TensorSpec((2,), "float32", 1, 3),
                     TensorSpec((2, 6, 7), "float32", -4, -1), 0, False)),))
def _ctc_loss_backward(grad: Tensor, log_probs: Tensor, targets: Tensor, input_lengths: list[int],
                       target_lengths: list[int], neg_log_likelihood: Tensor, log_alpha: Tensor, blank: int,
                       zero_infinity: bool = False) -> Tensor:
    """The gradient of ``_ctc_loss`` with respect to ``log_probs`` for the losses' gradient
    ``grad``: ``exp(log_probs) - exp(log_posterior)`` per step and class, as PyTorch's
    ``ctc_loss_backward`` (which has no derivative of its own).

    >>> import tensormodes as tm
    >>> lp = tm.full((1, 1, 2), 0.5).log()
    >>> loss = tm._ctc_loss(lp, tm.tensor([[1]]), [1], [1])
    >>> alpha = tm.tensor([[[-0.6931, -0.6931, -float("inf")]]])
    >>> tm._ctc_loss_backward(tm.ones(1), lp, tm.tensor([[1]]), [1], [1], loss, alpha, 0, False)
    tensor([[[ 0.5000, -0.5000]]])
    """
    steps, batch, classes = log_probs.shape
    result = np.zeros(log_probs.shape, log_probs.dtype)
    with quiet():
        for n in range(batch):
            length = input_lengths[n]
            nll = neg_log_likelihood[n]
            if length == 0 or (zero_infinity and np.isinf(nll)):
                continue
            lp = log_probs[:, n]
            states, skip = _extended(_labels(targets, target_lengths, n), blank)
            alpha = log_alpha[n, :, :len(states)]  # the forward's (PyTorch's backward reads them too)
            beta = _betas(lp, states, skip, length)
            joint = alpha[:length] + beta[:length]  # (t, s)
            posterior = np.full((length, classes), -np.inf, lp.dtype)
            for c in np.unique(states):
                posterior[:, c] = _log_add(*joint[:, states == c].T) if (states == c).sum() > 1 else \
                    joint[:, states == c][:, 0]
            result[:length, n] = (np.exp(lp[:length]) - np.exp(posterior + nll - lp[:length])) * grad[n]
    return result
