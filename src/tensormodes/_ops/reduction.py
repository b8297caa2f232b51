"""Reductions: sums, means, extrema, norms, statistics, sorts and scans."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from ._common import resolve_dtype, wrap_dims
from ._registry import Sample, TensorSpec, op

if TYPE_CHECKING:
    from .._tensor import Tensor

_M23 = TensorSpec((2, 3))


def axes(dim, ndim: int):
    """``dim`` (None, an int, or a sequence) as a NumPy ``axis`` argument."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        return None
    return wrap_dims(dim, ndim)


@op(method=True, out=True, samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, (0, 1), True))))
def sum(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,  # noqa: A001
        dtype: dt.dtype | None = None) -> Tensor:
    """Sum of the elements, over all of them or over ``dim``. Integer and bool inputs sum to int64.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 2], [3, 4]])
    >>> x.sum(), x.sum(dim=1, keepdim=True)
    (tensor(10), tensor([[3],
            [7]]))
    """
    target = resolve_dtype(dtype)
    if target is None and input.dtype.kind in "biu":
        target = dt.int64
    result = np.sum(input, axis=axes(dim, input.ndim), keepdims=keepdim,
                    dtype=None if target is None else target._np)
    return np.asarray(result)
