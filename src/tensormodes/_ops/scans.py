"""Scans: running sums and products (``cumsum``, ``cumprod``), running extremes with where
each was attained (``cummax``, ``cummin``, named tuples as in ``torch.return_types``) and
``logcumsumexp``.

Integer and bool inputs of ``cumsum`` and ``cumprod`` give int64 unless ``dtype`` is given;
float16 and bfloat16 accumulate in float32, each partial result rounded on output, as
PyTorch's CPU kernels do.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from ._pointwise import _complex_log_add_exp
from ._reduction import (
    _accumulation_dtype,
    _cat,
    _int_dim,
    _is_floating_or_complex,
    _not_implemented,
    _quietly,
    _recordable_dtype,
    _sum_dtype,
)
from ._samples import M23, SCALAR
from .common import conjugate as _conj
from .common import dtype_of, no_complex_autograd, ops, wrap_dim
from .meta_rules import same_shape
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op

_SCAN_ACCUMULATOR = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128)}


def _scan(ufunc, name: str, array: np.ndarray, dim, dtype) -> np.ndarray:
    target = _sum_dtype(array, dtype)
    if target is dt.bool:
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
    axis = _int_dim(dim, array.ndim, name)
    work = array if array.dtype == target._np else array.astype(target._np)
    if array.ndim == 0:
        return work.copy()
    if ufunc is np.multiply and work.dtype.kind == "c":
        return _complex_cumprod(work, axis)
    # Each partial result is rounded on output from PyTorch's CPU accumulator: float32 for the
    # half types, double for float32 and complex64 (its acc_type on CPU).
    accumulate = _SCAN_ACCUMULATOR.get(work.dtype, _accumulation_dtype(target._np))
    result = ufunc.accumulate(work, axis=axis, dtype=accumulate)
    return result if accumulate is target._np else result.astype(target._np)


def _complex_cumprod(work: np.ndarray, axis: int) -> np.ndarray:
    """PyTorch's complex cumprod: a complex128 running product from 1, each step a plain complex
    product (so 1 * (nan - inf j) is already nan + nan j, and inf * 2j is nan + nan j after it)."""
    if work.shape[axis] == 0:  # nothing to multiply
        return work.copy()
    wide = work.astype(np.complex128)
    first = np.moveaxis(wide, axis, 0)
    first[0] = np.multiply(np.complex128(1), first[0])  # NumPy's complex product is the plain one
    return np.multiply.accumulate(wide, axis=axis).astype(work.dtype)


def _cumsum_grad(grad, input_shape, dim):
    if not input_shape:
        return grad
    d = wrap_dim(dim, len(input_shape))
    return grad.flip(d).cumsum(d).flip(d)


@op(meta=same_shape, differentiable=_recordable_dtype,
    errors=(Sample((M23, 2)), Sample((M23, -3))), grad=_cumsum_grad, method=True, inplace=True, out=True,
    samples=(Sample((M23, 0)), Sample((M23, -1)), Sample((TensorSpec((2, 3), "int32"), 1)),
             Sample((TensorSpec((5,), "bool"), 0)), Sample((TensorSpec((2, 3), "float16"), 1)),
             Sample((SCALAR, 0)), Sample((M23, 1), {"dtype": dt.float64}),
             Sample((TensorSpec((2, 3), "complex64"), 0))), tags=("core",))
@_quietly
def cumsum(input: Tensor, dim: int, *, dtype: dt.dtype | None = None) -> Tensor:
    """Cumulative sums along ``dim``; integer and bool inputs give int64 unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.cumsum(tm.tensor([1, 2, 3, 4]), dim=0)
    tensor([ 1,  3,  6, 10])
    """
    return _scan(np.add, "cumsum", input, dim, dtype)


def _cumprod_grad(grad, input, result, dim):
    if input.dim() == 0:
        return grad
    d = wrap_dim(dim, input.dim())
    if input.numel() <= 1 or input.shape[d] == 1:  # PyTorch's shortcut: the gradient as it is (NaN, Inf stay out)
        return grad
    if not input.is_meta and (input == 0).any().item():  # a meta input's gradient has the general shape
        if ops.is_grad_enabled():  # double backward: a formula whose own derivative is exact
            return _cumprod_grad_with_zeros(grad, input, result, d)
        return _cumprod_grad_first_zero(grad, input, result, d)
    # sum_{j >= k} grad_j * result_j / input_k, as PyTorch computes it where no input is 0
    return (grad * _conj(result)).flip(d).cumsum(d).flip(d) / _conj(input)


def _cumprod_grad_with_zeros(grad, input, result, d: int):
    """cumprod's gradient without dividing by the input: for each position k,
    ``conj(prod_{i<k} x_i) * S_k`` with ``S_k = sum_{j>=k} grad_j * conj(prod_{k<i<=j} x_i)``.

    ``S`` solves ``S_k = grad_k + conj(x_{k+1}) * S_{k+1}`` backwards. A doubling scan solves
    it in log2(n) rounds of products and sums (``b``: the sum over a block of positions
    starting at k, ``a``: the product of the block's factors), so the formula is a polynomial
    in the input and the gradient, and its own derivatives (double backward) are exact, zeros
    or not.
    """
    n = input.shape[d]
    sums = grad
    factors = _conj(input).narrow(d, 1, n - 1)  # a_k = conj(x_{k+1}), k < n - 1
    block = 1
    while block < n:
        # Positions k < n - block add the next block's sum; the last ones are complete already.
        head = n - block
        sums = _cat([sums.narrow(d, 0, head) + factors.narrow(d, 0, head) * sums.narrow(d, block, head),
                     sums.narrow(d, head, block)], d)
        if 2 * block < n:
            kept = factors.shape[d] - block
            factors = factors.narrow(d, 0, kept) * factors.narrow(d, block, kept)
        block *= 2
    ones = result.narrow(d, 0, 1).new_ones(result.narrow(d, 0, 1).shape)
    before = _cat([ones, _conj(result).narrow(d, 0, n - 1)], d)  # prod_{i<k} x_i
    return before * sums


def _cumprod_grad_first_zero(grad, input, result, d: int):
    """PyTorch's first-order formula where some input is 0 (its values at infinities and NaN
    included): before a slice's first zero, the running sum of ``grad * result`` divided by the
    input; at the first zero, the product before it times the sum of ``grad`` weighted by the
    running products up to the second zero; after it, 0."""
    x, y = _conj(input), _conj(result)
    is_zero = input == 0
    zeros_seen = is_zero.cumsum(d)
    before = zeros_seen == 0
    head = (y * grad).masked_fill(~before, 0).flip(d).cumsum(d).flip(d).div(x)
    gradient = head.masked_fill(~before, 0)
    first_zero = is_zero.logical_and(zeros_seen == 1)
    between = (zeros_seen == 1).logical_and(~is_zero)
    # y at the position before the first zero (1 when the zero comes first)
    position = before.sum(d, keepdim=True)
    previous = y.gather(d, (position - 1).clamp(min=0)).masked_fill(position == 0, 1)
    at_zero = (x.masked_fill(~between, 1).cumprod(d) * grad.masked_fill(zeros_seen != 1, 0)).sum(d, keepdim=True)
    return gradient.where(~first_zero, at_zero * previous)


@op(meta=same_shape, grad=_cumprod_grad, method=True, inplace=True, out=True, differentiable=_recordable_dtype,
    samples=(Sample((M23, 0)), Sample((M23, -1)), Sample((TensorSpec((2, 3), "int32", -3, 3), 1)),
             Sample((TensorSpec((5,), "bool"), 0)), Sample((TensorSpec((2, 3), "float16"), 1)),
             Sample((SCALAR, -1)), Sample((TensorSpec((2, 3), "int64", -3, 3), 1), {"dtype": dt.float64})))
@_quietly
def cumprod(input: Tensor, dim: int, *, dtype: dt.dtype | None = None) -> Tensor:
    """Cumulative products along ``dim``; integer and bool inputs give int64 unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2, 3, 4]).cumprod(0)
    tensor([ 1,  2,  6, 24])
    """
    return _scan(np.multiply, "cumprod", input, dim, dtype)


def _running_extreme(accumulate, name: str, input: np.ndarray, dim):
    """cummax / cummin: running extremes along ``dim`` and where each was attained (the
    latest position on ties; a NaN stays, and each new NaN takes over, as in PyTorch)."""
    axis = _int_dim(dim, input.ndim, name, position=2)
    if input.dtype.kind == "c" and input.size and input.ndim:
        raise _not_implemented(f"{name}_cpu", input)
    if input.ndim == 0:
        return RETURN_TYPES[name](input.copy(), np.zeros((), np.int64))
    values = accumulate(input, axis=axis)
    attained = values == input
    if input.dtype.kind == "f" or input.dtype == dt.bfloat16._np:
        attained |= np.isnan(input)
    shape = [1] * input.ndim
    shape[axis] = input.shape[axis]
    positions = np.where(attained, np.arange(input.shape[axis]).reshape(shape), 0)
    return RETURN_TYPES[name](values, np.maximum.accumulate(positions, axis=axis))


_RUNNING_SAMPLES = (Sample((M23, 1)), Sample((TensorSpec((4, 3), "int64", -2, 2), 0)), Sample((SCALAR, 0)),
                    Sample((TensorSpec((5,), "bool"), -1)), Sample((TensorSpec((3, 2), "float16"), 0)),
                    Sample((TensorSpec((0, 3)), 1)))


def _running_extreme_grad(grad, input_shape, result1, dim):
    # Each output took its value from input[indices]: the gradient goes back there (summed).
    if 0 in input_shape:
        return grad[0]  # nothing to scatter (PyTorch's formula returns the empty input)
    d = wrap_dim(dim, max(len(input_shape), 1))
    # (zeros as PyTorch's formula makes them: the dispatch level sees them)
    return ops.zeros(tuple(input_shape), dtype=grad[0].dtype, device=grad[0].device).scatter_add(d, result1, grad[0])


@op(meta=same_shape, returns=("values", "indices"),
    grad=_running_extreme_grad, differentiable=no_complex_autograd("cummax"), method=True, out=True,
    samples=_RUNNING_SAMPLES)
def cummax(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """The running maximum along ``dim``, and the index where each was attained (the
    latest one on ties; NaN propagates).

    >>> import tensormodes as tm
    >>> tm.cummax(tm.tensor([1, 3, 2, 3]), dim=0)
    tensormodes.return_types.cummax(
    values=tensor([1, 3, 3, 3]),
    indices=tensor([0, 1, 1, 3]))
    """
    return _running_extreme(np.maximum.accumulate, "cummax", input, dim)


@op(meta=same_shape, returns=("values", "indices"),
    grad=_running_extreme_grad, differentiable=no_complex_autograd("cummin"), method=True, out=True,
    samples=_RUNNING_SAMPLES)
def cummin(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """The running minimum along ``dim``, and the index where each was attained (the
    latest one on ties; NaN propagates).

    >>> import tensormodes as tm
    >>> tm.cummin(tm.tensor([3, 1, 2, 1]), dim=0).indices
    tensor([0, 1, 1, 3])
    """
    return _running_extreme(np.minimum.accumulate, "cummin", input, dim)


def _reverse_logcumsumexp(x, d: int):
    return x.flip(d).logcumsumexp(d).flip(d)


def _logcumsumexp_grad(grad, input, result, dim):
    if input.dim() == 0:
        return grad
    d = wrap_dim(dim, input.dim())
    if input.is_complex():
        # d result_i / d input_j = exp(input_j - result_i) for j <= i, conjugated; summed in log
        # space as PyTorch does (which decides the values at huge and non-finite elements)
        return (_reverse_logcumsumexp(grad.conj().log() - result, d) + input).exp().conj()
    # grad_j = sum over i >= j of grad_i * exp(input_j - result_i), in log space for range: the
    # positive and negative parts of grad separately (the logarithm of a lowest number
    # stands for that of 0).
    lowest = dt.finfo(grad.dtype).min
    magnitude = grad.abs().log()
    positive = magnitude.where(grad > 0, lowest)
    negative = magnitude.where(grad < 0, lowest)
    return (_reverse_logcumsumexp(positive - result, d) + input).exp() - \
        (_reverse_logcumsumexp(negative - result, d) + input).exp()


@op(meta=same_shape, grad=_logcumsumexp_grad, method=True, out=True, samples=(
    Sample((M23, 1)), Sample((TensorSpec((3, 2), "float64", -50, 50), 0)), Sample((SCALAR, 0)),
    Sample((TensorSpec((4,), "float16"), 0)), Sample((TensorSpec((2, 3), "complex64"), -1)),
    Sample((TensorSpec((0, 2)), 0))))
@_quietly
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed without overflow.

    >>> import tensormodes as tm
    >>> tm.logcumsumexp(tm.tensor([0.0, 0.0, 0.0]), 0)
    tensor([0.0000, 0.6931, 1.0986])
    """
    d = dtype_of(input)
    axis = _int_dim(dim, input.ndim, "logcumsumexp", position=2)  # the dim first, as PyTorch
    if not _is_floating_or_complex(d):
        raise _not_implemented("logcumsumexp_out_cpu", input)
    if input.ndim == 0 or not input.size:
        return input.copy()
    if d.is_complex:
        # PyTorch's scan from -inf, its running total kept in complex128
        moved = np.moveaxis(input, axis, 0).astype(np.complex128)
        result = np.empty_like(input)
        written = np.moveaxis(result, axis, 0)
        total = np.full(moved.shape[1:], complex(-np.inf, 0))
        for i in range(moved.shape[0]):
            total = _complex_log_add_exp(moved[i], total)
            written[i] = total
        return result
    work = input.astype(_accumulation_dtype(input.dtype), copy=False)
    return np.logaddexp.accumulate(work, axis=axis).astype(input.dtype, copy=False)
