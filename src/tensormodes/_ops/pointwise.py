"""Pointwise ops: unary math, binary arithmetic, comparisons, logical and bitwise ops.

Binary kernels accept an array or a Python scalar in either position (the
reflected operators pass the scalar first) and compute in PyTorch's promoted
dtype through ``_common.binary``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._common import binary, unary
from ._registry import OWN, Dunder, Sample, TensorSpec, op

if TYPE_CHECKING:
    from numbers import Number

    from .._tensor import Tensor

_M23 = TensorSpec((2, 3))


@op(method=True, inplace=True, out=True, ufunc=np.add,
    dunders=(Dunder("__add__"), Dunder("__radd__"), Dunder("__iadd__", inplace=True)),
    samples=(Sample((_M23, _M23)), Sample((_M23, 2.5), {"alpha": 2})))
def add(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """Adds ``other``, scaled by ``alpha``, to ``input``.

    >>> import tensormodes as tm
    >>> tm.add(tm.tensor([1, 2]), 10)
    tensor([11, 12])
    >>> tm.tensor([1., 2.]) + tm.tensor([0.5, 0.5])
    tensor([1.5000, 2.5000])
    """
    if alpha != 1:
        other = binary(np.multiply, other, alpha)
    return binary(np.add, input, other)


@op(method=True, inplace=True, out=True, ufunc=np.subtract,
    dunders=(Dunder("__sub__"), Dunder("__rsub__", OWN, reflected=True), Dunder("__isub__", inplace=True)),
    samples=(Sample((_M23, _M23)), Sample((_M23, 1), {"alpha": 3})))
def sub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """Subtracts ``other``, scaled by ``alpha``, from ``input``.

    >>> import tensormodes as tm
    >>> tm.sub(tm.tensor([5, 6]), 1, alpha=2)
    tensor([3, 4])
    """
    if alpha != 1:
        other = binary(np.multiply, other, alpha)
    return binary(np.subtract, input, other)


@op(method=True, inplace=True, out=True, ufunc=np.multiply,
    dunders=(Dunder("__mul__"), Dunder("__rmul__"), Dunder("__imul__", inplace=True)),
    samples=(Sample((_M23, _M23)), Sample((_M23, -2))))
def mul(input: Tensor, other: Tensor | Number) -> Tensor:
    """Multiplies ``input`` by ``other`` elementwise.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2]) * 3
    tensor([3, 6])
    """
    return binary(np.multiply, input, other)


@op(method=True, inplace=True, out=True, samples=(Sample((_M23,)),),
    dunders=(Dunder("__neg__"),))
def neg(input: Tensor) -> Tensor:
    """``-input``.

    >>> import tensormodes as tm
    >>> -tm.tensor([1, -2])
    tensor([-1,  2])
    """
    if input.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return np.negative(input)


@op(method=True, inplace=True, out=True, samples=(Sample((_M23,)),))
def exp(input: Tensor) -> Tensor:
    """The exponential of each element (integers compute in the default float dtype).

    >>> import tensormodes as tm
    >>> tm.exp(tm.tensor([0, 1]))
    tensor([1.0000, 2.7183])
    """
    return unary(np.exp, input, to_float=True)


@op(method=True, inplace=True, samples=(Sample((_M23,)),))
def relu(input: Tensor) -> Tensor:
    """``max(input, 0)`` elementwise.

    >>> import tensormodes as tm
    >>> tm.relu(tm.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    if input.dtype.kind == "b":
        raise RuntimeError('"clamp_min_scalar_cpu" not implemented for \'Bool\'')
    return np.maximum(input, input.dtype.type(0))
