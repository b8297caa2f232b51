"""Factory ops: tensors from data, filled tensors, ranges and ``*_like`` variants.

Factories take no tensor (except the ``*_like`` ones), so only modes see them;
they are how a tracing mode records constants instead of folding them in.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from .._device import parse_device
from ._common import nested_to_array, resolve_dtype
from ._registry import Sample, op

if TYPE_CHECKING:
    from .._tensor import Tensor


def parse_size(size, name: str = "size") -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean shape ``(2, 3)``."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = size[0]
    try:
        dims = tuple(size)
    except TypeError:
        raise TypeError(f"{name} must be a tuple of ints, not {type(size).__name__}") from None
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"{name} must be a tuple of ints, but got an element of type {type(d).__name__}")
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(dims)}")
    return tuple(int(d) for d in dims)


def check_device(device) -> None:
    """Factories accept ``device`` like PyTorch; only the CPU holds data so far."""
    if parse_device(device).type != "cpu":
        raise NotImplementedError(f"tensors on device {device!r} are not supported yet")


def infer_dtype(array: np.ndarray, from_python: bool) -> dt.dtype:
    """PyTorch's dtype for data: Python floats give the default dtype."""
    if from_python:
        if array.dtype.kind == "f":
            return dt.get_default_dtype()
        if array.dtype.kind == "c":
            return dt.default_complex_dtype()
        if array.dtype.kind in "iu":
            return dt.int64
    return dt.from_numpy_dtype(array.dtype)


@op(factory=True, samples=(Sample(([[1.0, 2.0], [3.0, 4.0]],)), Sample(([1, 2],), {"dtype": dt.float64})))
def tensor(data, *, dtype: dt.dtype | None = None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays, tensors).

    Python floats give the default dtype, ints ``int64``, bools ``bool``.

    >>> import tensormodes as tm
    >>> tm.tensor([[1., 2.], [3., 4.]]).dtype, tm.tensor([1, 2]).dtype
    (tensormodes.float32, tensormodes.int64)
    """
    check_device(device)
    array, from_python = nested_to_array(data)
    target = resolve_dtype(dtype) or infer_dtype(array, from_python)
    return np.array(array, dtype=target._np, copy=True)


@op(factory=True, out=True, samples=(Sample((2, 3)), Sample(((4,),), {"dtype": dt.int32})))
def zeros(*size: int, dtype: dt.dtype | None = None, layout=None, device=None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of the given shape.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3).shape, tm.zeros((2,), dtype=tm.int64)
    (tensormodes.Size([2, 3]), tensor([0, 0]))
    """
    check_device(device)
    return np.zeros(parse_size(size), (resolve_dtype(dtype) or dt.get_default_dtype())._np)


@op(factory=True, out=True, samples=(Sample((2, 3)),))
def ones(*size: int, dtype: dt.dtype | None = None, layout=None, device=None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of the given shape.

    >>> import tensormodes as tm
    >>> tm.ones(2)
    tensor([1., 1.])
    """
    check_device(device)
    return np.ones(parse_size(size), (resolve_dtype(dtype) or dt.get_default_dtype())._np)
