"""``tensormodes.autograd.Variable``: PyTorch's legacy name for a tensor. ``Variable(t)`` returns
a tensor sharing ``t``'s data, without its history; every tensor is an instance of ``Variable``.

>>> import tensormodes as tm
>>> v = Variable(tm.ones(2), requires_grad=True)
>>> type(v).__name__, v.requires_grad, isinstance(tm.zeros(1), Variable)
('Tensor', True, True)
"""

from __future__ import annotations

import warnings

from .._api.tensor import Tensor
from .._tensor_base import TensorBase

__all__ = ["VariableMeta", "Variable"]


class VariableMeta(type):
    """Makes ``isinstance(t, Variable)`` true for every tensor."""

    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, TensorBase)


class Variable(metaclass=VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: ``data`` detached (an empty
    tensor when not given), requiring grad if asked."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            data = Tensor()
        elif not isinstance(data, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
