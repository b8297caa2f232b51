"""Flat indices and coordinates: ``unravel_index``, the coordinates in a tensor of ``shape`` of
each flat (row-major) index, as PyTorch's ``torch.unravel_index`` computes them (floor division
by the strides, then the remainder by each size: out-of-range and negative indices wrap).

>>> import tensormodes as tm
>>> rows, columns = tm.unravel_index(tm.tensor([4, 1]), (2, 3))
>>> rows.tolist(), columns.tolist()
([1, 0], [1, 1])
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence

import numpy as np

from .._meta_array import MetaArray
from .common import HALF_TYPES, dtype_of
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op


def _checked_shape(indices, shape) -> tuple[int, ...]:
    """PyTorch's checks, in its order; the shape as a tuple."""
    if indices.dtype.kind in "fcb" or indices.dtype in HALF_TYPES:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {dtype_of(indices)}")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    elif isinstance(shape, Sequence):  # a str too: its characters are not ints, as PyTorch says
        for size in shape:
            if not isinstance(size, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(size)}")
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = tuple(shape)
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    return shape


def _unravel_index_meta(indices, shape):
    shape = _checked_shape(indices, shape)
    return tuple(MetaArray(indices.shape, np.dtype(np.int64)) for _ in shape)


@op(differentiable=False, meta=rule(_unravel_index_meta),
    samples=(Sample((TensorSpec((2,), "int64", 0, 6), (2, 3))), Sample((TensorSpec((), "int64", -6, 6), [2, 3])),
             Sample((TensorSpec((2, 2), "int32", -8, 8), (2, 2, 2))), Sample((TensorSpec((3,), "int64", 0, 5), 5)),
             Sample((TensorSpec((0,), "int64"), (2, 3))), Sample((TensorSpec((1,), "int64", 0, 1), ()))),
    errors=(Sample((TensorSpec((1,)), (2, 3))), Sample((TensorSpec((1,), "int64", 0, 1), (2, -3))),
            Sample((TensorSpec((1,), "int64", 0, 1), (2.0, 3))), Sample((TensorSpec((1,), "bool"), (2,)))))
def unravel_index(indices: Tensor, shape) -> tuple[Tensor, ...]:
    """The coordinates (a tuple of int64 tensors shaped as ``indices``, one per dimension of
    ``shape``) of the flat row-major ``indices`` in a tensor of ``shape``.

    >>> import tensormodes as tm
    >>> tm.unravel_index(tm.tensor(5), (2, 3))
    (tensor(1), tensor(2))
    """
    shape = _checked_shape(indices, shape)
    strides = list(itertools.accumulate(reversed((*shape[1:], 1)), operator.mul))[::-1]
    flat = indices.astype(np.int64)
    with np.errstate(divide="ignore"):  # a size 0: PyTorch's remainder by 0 too
        return tuple(np.asarray(np.floor_divide(flat, stride) % size if size else np.zeros_like(flat))
                     .astype(np.int64) for stride, size in zip(strides, shape))
