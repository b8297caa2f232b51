"""Activations that normalise along a dimension: ``softmax`` and ``log_softmax``.

Both subtract the maximum along ``dim`` before exponentiating, so large inputs
do not overflow. Exponentials and sums are computed in float64; PyTorch's
vectorised CPU kernels round differently in the last bit, so results agree
with PyTorch's to within an ulp or two, not bit for bit.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from ._common import resolve_dtype, wrap_dim
from ._registry import Sample, TensorSpec, op
from .creation import not_implemented

if TYPE_CHECKING:
    from .._tensor import Tensor

_HALF_TYPES = (dt.float16._np, dt.bfloat16._np)


def _shifted(input: np.ndarray, dim, dtype, kernel: str) -> tuple[np.ndarray, int, dt.dtype]:
    """(``input`` minus its maximum along ``dim``; the axis; the result dtype).

    ``dtype`` casts the input first (PyTorch's way of avoiding overflow in low
    precision). The difference is in the result dtype (float32 for half types).
    """
    if type(dim) is not int and (isinstance(dim, bool) or not isinstance(dim, numbers.Integral)):
        raise TypeError(f"{kernel}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")
    axis = wrap_dim(dim, input.ndim)
    target = dt.NP_TO_DTYPE[input.dtype] if dtype is None else resolve_dtype(dtype)
    if target._category != dt._FLOAT:
        last = axis == max(input.ndim, 1) - 1
        raise not_implemented(f"{kernel}_lastdim_kernel_impl" if last else f"{kernel}_kernel_impl", target)
    # No copy when the dtype is kept: the subtraction below makes the new array.
    x = input.astype(np.float32 if target._np in _HALF_TYPES else target._np, copy=False)
    if x.ndim == 0:
        return x - x, 0, target
    if x.size == 0:
        return x.copy(), axis, target
    return x - x.max(axis=axis, keepdims=True), axis, target


def _softmax_grad(grad, result, dim):
    # d softmax_i / d x_j = s_i (delta_ij - s_j): the gradient is s * (g - sum(g * s)).
    return result * (grad - (grad * result).sum(dim, keepdim=True))


def _log_softmax_grad(grad, result, dim):
    # d log_softmax_i / d x_j = delta_ij - softmax_j.
    return grad - result.exp() * grad.sum(dim, keepdim=True)


_M23 = TensorSpec((2, 3), "float32", -5, 5)
_SAMPLES = (
    Sample((_M23, 1)), Sample((_M23, 0)), Sample((_M23, -1), {"dtype": dt.float64}),
    Sample((TensorSpec((2, 3, 4), "float64", -50, 50), 1)), Sample((TensorSpec((), "float32"), 0)),
    Sample((TensorSpec((4,), "int64"), 0, dt.float32)), Sample((TensorSpec((3, 2), "float16"), 0)),
    Sample((TensorSpec((2, 3), "bfloat16"), -1)),
    Sample((TensorSpec((2, 3), "float64"), 1), {"dtype": dt.float32}))


@op(grad=_softmax_grad, method=True, out=True, samples=_SAMPLES)
def softmax(input: Tensor, dim: int, dtype: dt.dtype | None = None) -> Tensor:
    """Applies the softmax function along ``dim``: ``exp(x) / exp(x).sum(dim)``, so that the
    values along ``dim`` are in [0, 1] and sum to 1.

    Integer inputs need ``dtype`` (a floating dtype the input is cast to first).

    >>> import tensormodes as tm
    >>> tm.softmax(tm.tensor([[0., 0.], [1., 1.]]), dim=1)
    tensor([[0.5000, 0.5000],
            [0.5000, 0.5000]])
    >>> tm.tensor([1, 2]).softmax(0, dtype=tm.float64).dtype
    tensormodes.float64
    """
    shifted, axis, result = _shifted(input, dim, dtype, "softmax")
    exponentials = np.exp(shifted.astype(np.float64))
    if shifted.size:
        exponentials *= 1.0 / exponentials.sum(axis=axis, keepdims=True)
    return exponentials.astype(result._np, copy=False)  # a new array already


@op(grad=_log_softmax_grad, method=True, out=True, samples=_SAMPLES)
def log_softmax(input: Tensor, dim: int, dtype: dt.dtype | None = None) -> Tensor:
    """Applies ``log(softmax(x))`` along ``dim``, computed as ``x - max - log(sum(exp(x - max)))``
    so that it stays accurate where ``softmax`` underflows.

    >>> import tensormodes as tm
    >>> tm.log_softmax(tm.tensor([0., 0.]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    shifted, axis, result = _shifted(input, dim, dtype, "log_softmax")
    if shifted.size:
        # The log-sum in double, rounded to the working dtype before the subtraction, as PyTorch rounds it.
        log_sum = np.log(np.exp(shifted.astype(np.float64)).sum(axis=axis, keepdims=True))
        shifted = shifted - log_sum.astype(shifted.dtype)
    return shifted.astype(result._np, copy=False)  # shifted is a new array
