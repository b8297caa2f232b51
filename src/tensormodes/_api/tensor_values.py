"""Reading a tensor's one value as a Python number (``item``, ``bool``, ``int``, ``float``,
``complex``, ``__index__``, ``format``): the fast path's bodies for a plain tensor, and the read
through ``aten._local_scalar_dense`` when the dispatch level listens, as PyTorch reads it.

>>> import tensormodes as tm
>>> tm.tensor([2.5]).item(), int(tm.tensor(3))
(2.5, 3)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from .._autograd.graph import aten_overload, below_listens
from .._dispatch.python_dispatch import HOOKS
from .._meta_array import MetaArray

if TYPE_CHECKING:
    from .tensor import Tensor


# The bodies of the value reads on the fast path (a plain tensor, nothing listening below
# autograd); the declared methods read through ``aten._local_scalar_dense`` otherwise.

def _plain_item(self):
    if self._data.size != 1:
        _raise_not_one_scalar(self)
    return _python_scalar(self._data)


def _plain_format(self, format_spec: str) -> str:
    if self._data.ndim == 0 and type(self._data) is not MetaArray:  # a meta tensor has no value to format
        return format(_python_scalar(self._data), format_spec)
    return object.__format__(self, format_spec)


def _plain_bool(self) -> bool:
    if self._data.size != 1:
        _raise_ambiguous(self)
    return bool(_python_scalar(self._data))


def _plain_float(self) -> float:
    return float(_one_value(self))


def _plain_int(self) -> int:
    return int(_one_value(self))


def _plain_complex(self) -> complex:
    return complex(_one_value(self))


def _plain_index(self) -> int:
    if self._data.dtype.kind not in "iub" or self._data.size != 1:
        _raise_not_index(self)
    return int(_python_scalar(self._data))


def _python_scalar(array: np.ndarray):
    if type(array) is MetaArray:
        return array.item()  # raises: no values
    value = array.reshape(()).item() if array.dtype != dt.bfloat16._np else float(array.reshape(()))
    return value


def _one_value(t: Tensor):
    if t._data.size != 1:
        _raise_not_one_value(t)
    return _python_scalar(t._data)


def _one_value_below(t: Tensor):
    """``_one_value`` for ``int(t)``, ``float(t)``, ``complex(t)`` off the fast path: read through
    ``aten._local_scalar_dense`` when the dispatch level listens, as PyTorch reads it."""
    if not below_listens(t):
        return _one_value(t)
    if t._data.size != 1:
        _raise_not_one_value(t)
    return _local_scalar_dense(t)


def _raise_not_one_scalar(t: Tensor):
    raise RuntimeError(f"a Tensor with {t._data.size} elements cannot be converted to Scalar")


def _raise_ambiguous(t: Tensor):
    raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                       if t._data.size else "Boolean value of Tensor with no values is ambiguous")


def _raise_not_one_value(t: Tensor):
    raise ValueError("only one element tensors can be converted to Python scalars")


def _raise_not_index(t: Tensor):
    raise TypeError("only integer tensors of a single element can be converted to an index")


def _local_scalar_dense(t: Tensor):
    """``aten._local_scalar_dense.default(t)`` below autograd (the op records nothing): through the
    dispatch level's modes and subclasses to the kernel."""
    return HOOKS.below(aten_overload("_local_scalar_dense", "default"), (t,), {})
