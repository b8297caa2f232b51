"""Indexing ops: ``t[index]``, ``t[index] = value`` and the gather/scatter family.

Index semantics follow PyTorch, which for basic and advanced indexing are
NumPy's: basic indexing gives views, advanced indexing copies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._registry import Sample, TensorSpec, op

if TYPE_CHECKING:
    from numbers import Number

    from .._tensor import Tensor
    from ._registry import Index

_M23 = TensorSpec((2, 3))


def _checked(index):
    """PyTorch's IndexError texts for out-of-range and wrongly typed indices."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, np.ndarray) and part.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if isinstance(part, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             "are valid indices (got float)")
    return index


def _index_error(error: IndexError) -> IndexError:
    return IndexError(str(error).replace("for axis", "for dimension"))


@op(function=False, method="__getitem__", view=True, differentiable=True,
    samples=(Sample((_M23, 0)), Sample((_M23, (slice(None), 1))), Sample((_M23, (Ellipsis, None)))))
def getitem(input: Tensor, indices: Index) -> Tensor:
    """``input[indices]``: basic indexing returns a view, advanced indexing a copy.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 2, 3], [4, 5, 6]])
    >>> x[1], x[:, 0], x[x > 4]
    (tensor([4, 5, 6]), tensor([1, 4]), tensor([5, 6]))
    """
    try:
        return np.asarray(input[_checked(indices)]) if input.ndim else input[_checked(indices)]
    except IndexError as error:
        raise _index_error(error) from None


@op(function=False, method="__setitem__", samples=(Sample((_M23, 0, 1.5)),))
def setitem(input: Tensor, indices: Index, value: Tensor | Number) -> None:
    """``input[indices] = value``, writing into ``input`` (values cast to its dtype).

    >>> import tensormodes as tm
    >>> x = tm.zeros(3); x[1] = 5; x
    tensor([0., 5., 0.])
    """
    try:
        input[_checked(indices)] = value
    except IndexError as error:
        raise _index_error(error) from None
    except ValueError as error:
        raise RuntimeError(str(error)) from None
