"""Shape ops: views (``view``, ``reshape``, ``transpose`` ...), joins and splits.

View ops (declared ``view=True``) return NumPy views, so results share memory
with their input exactly as PyTorch views do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._common import wrap_dim
from ._registry import Sample, TensorSpec, op

if TYPE_CHECKING:
    from .._tensor import Tensor

_M23 = TensorSpec((2, 3))


def infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """Resolve a single -1 in ``shape``; RuntimeError if it cannot hold ``numel`` elements."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for d in shape:
        if d != -1:
            if d < 0:
                raise RuntimeError(f"invalid shape dimension {d}")
            known *= d
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if d == -1 else d for d in shape)
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _flat(shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        return tuple(shape[0])
    return tuple(shape)


@op(method=True, function=False, view=True, samples=(Sample((_M23, 3, 2)), Sample((_M23, -1))))
def view(input: Tensor, *shape: int) -> Tensor:
    """A view with a new shape (no copy; the strides must allow it).

    >>> import tensormodes as tm
    >>> tm.arange(6).view(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    new_shape = infer_shape(_flat(shape), input.size)
    try:
        result = input.view()
        result.shape = new_shape
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return result


@op(method=True, view=True, samples=(Sample((_M23, (3, 2))), Sample((_M23, (-1,)))))
def reshape(input: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The same data with a new shape: a view when possible, else a copy.

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2], [3, 4]]).reshape(-1)
    tensor([1, 2, 3, 4])
    """
    return np.reshape(input, infer_shape(tuple(shape), input.size))


@op(method=True, view=True, samples=(Sample((_M23,)),))
def t(input: Tensor) -> Tensor:
    """Transpose of a matrix (tensors of 0 or 1 dimension are returned as they are).

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2]]).t().shape
    tensormodes.Size([2, 1])
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.T


@op(method=True, view=True, samples=(Sample((_M23, 0, 1)),))
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dimensions ``dim0`` and ``dim1``.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3, 4).transpose(0, 2).shape
    tensormodes.Size([4, 3, 2])
    """
    return np.swapaxes(input, wrap_dim(dim0, input.ndim), wrap_dim(dim1, input.ndim))
