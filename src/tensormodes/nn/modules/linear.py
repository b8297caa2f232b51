"""Linear layers: ``Identity``, ``Linear`` and ``Bilinear``.

>>> import tensormodes as tm
>>> layer = tm.nn.Linear(20, 30)
>>> layer(tm.randn(128, 20)).shape
tensormodes.Size([128, 30])
"""

from __future__ import annotations

import math
from typing import Any

from ..._api import namespace as tm
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """A placeholder identity operator that is argument-insensitive.

    >>> import tensormodes as tm
    >>> tm.nn.Identity(54, unused="argument")(tm.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """Return ``input`` itself."""
        return input


class Linear(Module):
    """Applies an affine linear transformation to the incoming data: y = x A^T + b.

    ``weight`` has shape (out_features, in_features) and ``bias``
    (out_features,), both initialised from U(-sqrt(k), sqrt(k)) with
    k = 1 / in_features (``kaiming_uniform_`` with ``a=sqrt(5)``, as PyTorch).

    >>> import tensormodes as tm
    >>> tm.nn.Linear(2, 3, bias=False)
    Linear(in_features=2, out_features=3, bias=False)
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(tm.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tm.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``kaiming_uniform_(weight, a=sqrt(5))``; bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.linear(input, weight, bias)``."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """``in_features=..., out_features=..., bias=...``."""
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """Applies a bilinear transformation to the incoming data: y = x1^T A x2 + b.

    ``weight`` has shape (out_features, in1_features, in2_features); weight and
    bias are initialised from U(-sqrt(k), sqrt(k)) with k = 1 / in1_features.

    >>> import tensormodes as tm
    >>> m = tm.nn.Bilinear(20, 30, 40)
    >>> m(tm.randn(128, 20), tm.randn(128, 30)).shape
    tensormodes.Size([128, 40])
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(tm.empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tm.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Initialise weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: tm.Tensor, input2: tm.Tensor) -> tm.Tensor:
        """``x1^T A x2 + b`` over the last dimension of both inputs (``F.bilinear``)."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """``in1_features=..., in2_features=..., out_features=..., bias=...``."""
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name PyTorch gives ``MultiheadAttention.out_proj`` (a marker for its
    quantisation tools; here it only keeps the ``repr`` the same).

    >>> import tensormodes as tm
    >>> tm.nn.MultiheadAttention(4, 2).out_proj
    NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """
