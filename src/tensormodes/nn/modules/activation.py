"""Activation functions as modules; each calls its ``nn.functional`` counterpart.

>>> import tensormodes as tm
>>> tm.nn.Hardtanh(-2.0, 2.0)(tm.tensor([-3.0, 0.5, 3.0])).tolist()
[-2.0, 0.5, 2.0]
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from ..parameter import Parameter
from .attention import MultiheadAttention
from .module import Module

__all__ = ["MultiheadAttention", "Threshold", "ReLU", "Hardtanh", "ReLU6", "Sigmoid", "Tanh", "Softmax", "Softmin",
           "LogSoftmax",
           "ELU", "SELU", "CELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softsign",
           "Tanhshrink", "PReLU", "Hardsigmoid", "Hardswish", "SiLU", "Mish", "Softshrink", "RReLU", "Softmax2d"]


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class Threshold(Module):
    """Thresholds each element of the input Tensor: y = x if x > threshold else value.

    >>> import tensormodes as tm
    >>> tm.nn.Threshold(0.1, 20)(tm.tensor([0.0, 0.5])).tolist()
    [20.0, 0.5]
    """

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.threshold(input, threshold, value, inplace)``."""
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """``threshold=..., value=...[, inplace=True]``."""
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class ReLU(Module):
    """Applies the rectified linear unit function element-wise: ReLU(x) = max(0, x).

    >>> import tensormodes as tm
    >>> tm.nn.ReLU(inplace=True)
    ReLU(inplace=True)
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.relu(input, inplace)``."""
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when in place."""
        return "inplace=True" if self.inplace else ""


class Hardtanh(Module):
    """Applies the HardTanh function element-wise: clamps to [min_val, max_val].

    >>> import tensormodes as tm
    >>> tm.nn.Hardtanh()
    Hardtanh(min_val=-1.0, max_val=1.0)
    """

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.hardtanh(input, min_val, max_val, inplace)``."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """``min_val=..., max_val=...[, inplace=True]``."""
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """Applies ReLU6(x) = min(max(0, x), 6) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.ReLU6()(tm.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.relu6(input, inplace)``."""
        return F.relu6(input, self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when in place."""
        return "inplace=True" if self.inplace else ""


class _Elementwise(Module):
    """An activation without arguments: ``forward`` applies ``_function``."""

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """Apply the activation element-wise."""
        return type(self)._function(input)


class Sigmoid(_Elementwise):
    """Applies Sigmoid(x) = 1 / (1 + exp(-x)) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.Sigmoid()(tm.zeros(1)).tolist()
    [0.5]
    """

    _function = staticmethod(F.sigmoid)


class Tanh(_Elementwise):
    """Applies the Hyperbolic Tangent (Tanh) function element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.Tanh()(tm.zeros(1)).tolist()
    [0.0]
    """

    _function = staticmethod(F.tanh)


class LogSigmoid(_Elementwise):
    """Applies LogSigmoid(x) = log(1 / (1 + exp(-x))) element-wise.

    >>> import tensormodes as tm
    >>> round(tm.nn.LogSigmoid()(tm.zeros(1)).item(), 4)
    -0.6931
    """

    _function = staticmethod(F.logsigmoid)


class Softsign(_Elementwise):
    """Applies SoftSign(x) = x / (1 + |x|) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.Softsign()(tm.tensor([1.0])).tolist()
    [0.5]
    """

    _function = staticmethod(F.softsign)


class Tanhshrink(_Elementwise):
    """Applies Tanhshrink(x) = x - tanh(x) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.Tanhshrink()(tm.zeros(1)).tolist()
    [0.0]
    """

    _function = staticmethod(F.tanhshrink)


class _InplaceActivation(Module):
    """An activation with only an ``inplace`` flag, which PyTorch's ``repr`` shows."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """Apply the activation element-wise (in place if ``inplace``)."""
        return type(self)._function(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when in place."""
        return "inplace=True" if self.inplace else ""


class SELU(_InplaceActivation):
    """Applies SELU(x) = scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.SELU()(tm.zeros(1)).tolist()
    [0.0]
    """

    _function = staticmethod(F.selu)


class SiLU(_InplaceActivation):
    """Applies the Sigmoid Linear Unit (SiLU) function, x * sigmoid(x), element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.SiLU()(tm.zeros(1)).tolist()
    [0.0]
    """

    _function = staticmethod(F.silu)


class Mish(_InplaceActivation):
    """Applies Mish(x) = x * tanh(softplus(x)) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.Mish()(tm.zeros(1)).tolist()
    [0.0]
    """

    _function = staticmethod(F.mish)


class Hardswish(Module):
    """Applies the Hardswish function, x * relu6(x + 3) / 6, element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.Hardswish()(tm.tensor([3.0])).tolist()
    [3.0]
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.hardswish(input, inplace)``."""
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """Applies the Hardsigmoid function, relu6(x + 3) / 6, element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.Hardsigmoid()(tm.zeros(1)).tolist()
    [0.5]
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.hardsigmoid(input, inplace)``."""
        return F.hardsigmoid(input, self.inplace)


class Hardshrink(Module):
    """Applies the Hard Shrinkage function: x if |x| > lambd else 0.

    >>> import tensormodes as tm
    >>> tm.nn.Hardshrink()(tm.tensor([0.2, -1.0])).tolist()
    [0.0, -1.0]
    """

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.hardshrink(input, lambd)``: zero where ``|input| <= lambd``."""
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        """The threshold ``lambd``."""
        return f"{self.lambd}"


class ELU(Module):
    """Applies the Exponential Linear Unit (ELU) function element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.ELU(alpha=0.5)
    ELU(alpha=0.5)
    """

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.elu(input, alpha, inplace)``."""
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """``alpha=...[, inplace=True]``."""
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(Module):
    """Applies CELU(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.CELU()
    CELU(alpha=1.0)
    """

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.celu(input, alpha, inplace)``."""
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """``alpha=...[, inplace=True]``."""
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class LeakyReLU(Module):
    """Applies LeakyReLU(x) = max(0, x) + negative_slope * min(0, x) element-wise.

    >>> import tensormodes as tm
    >>> tm.nn.LeakyReLU(0.1)(tm.tensor([-1.0, 1.0])).tolist()
    [-0.10000000149011612, 1.0]
    """

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.leaky_relu(input, negative_slope, inplace)``."""
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """``negative_slope=...[, inplace=True]``."""
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class GELU(Module):
    """Applies the Gaussian Error Linear Units function (``approximate='tanh'`` for the tanh estimate).

    >>> import tensormodes as tm
    >>> tm.nn.GELU("tanh")
    GELU(approximate='tanh')
    """

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.gelu(input, approximate=approximate)``."""
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        """``approximate=...``."""
        return f"approximate={self.approximate!r}"


class GLU(Module):
    """Applies the gated linear unit function a * sigmoid(b), splitting ``dim`` in halves a and b.

    >>> import tensormodes as tm
    >>> tm.nn.GLU()(tm.ones(2, 4)).shape
    tensormodes.Size([2, 2])
    """

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.glu(input, dim)``."""
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        """``dim=...``."""
        return f"dim={self.dim}"


class Softplus(Module):
    """Applies Softplus(x) = 1/beta * log(1 + exp(beta * x)) element-wise (linear above ``threshold``).

    >>> import tensormodes as tm
    >>> tm.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.softplus(input, beta, threshold)``."""
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """``beta=..., threshold=...``."""
        return f"beta={self.beta}, threshold={self.threshold}"


class _DimActivation(Module):
    """Softmax-like activations: one ``dim`` argument, shown in the ``repr``."""

    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        """``dim=...``."""
        return f"dim={self.dim}"


class Softmax(_DimActivation):
    """Applies the Softmax function to an n-dimensional input Tensor along ``dim``.

    >>> import tensormodes as tm
    >>> tm.nn.Softmax(dim=1)(tm.zeros(1, 4)).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.softmax(input, dim)``."""
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmin(_DimActivation):
    """Applies the Softmin function (softmax of ``-input``) along ``dim``.

    >>> import tensormodes as tm
    >>> tm.nn.Softmin(dim=0)(tm.zeros(2)).tolist()
    [0.5, 0.5]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.softmin(input, dim)``."""
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(_DimActivation):
    """Applies log(Softmax(x)) along ``dim``.

    >>> import tensormodes as tm
    >>> tm.nn.LogSoftmax(dim=0)(tm.zeros(1)).tolist()
    [0.0]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.log_softmax(input, dim)``."""
        return F.log_softmax(input, self.dim, _stacklevel=5)


class PReLU(Module):
    """Applies PReLU(x) = max(0, x) + a * min(0, x) with a learnable ``a`` (one, or one per channel).

    >>> import tensormodes as tm
    >>> m = tm.nn.PReLU(3)
    >>> m, m.weight.tolist()
    (PReLU(num_parameters=3), [0.25, 0.25, 0.25])
    """

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(tm.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill ``weight`` with ``init``."""
        with tm.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.prelu(input, weight)``."""
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """``num_parameters=...``."""
        return f"num_parameters={self.num_parameters}"


class Softshrink(Module):
    """Applies the soft shrinkage function element-wise: x - lambd above lambd, x + lambd below
    -lambd, else 0.

    >>> import tensormodes as tm
    >>> tm.nn.Softshrink()(tm.tensor([0.2, -1.0])).tolist()
    [0.0, -0.5]
    """

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.softshrink(input, lambd)``."""
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        """The threshold ``lambd``."""
        return str(self.lambd)


class RReLU(Module):
    """Applies the randomized leaky rectified linear unit element-wise: negative inputs are scaled
    by a slope drawn from ``U(lower, upper)`` in training, by ``(lower + upper) / 2`` in evaluation.

    >>> import tensormodes as tm
    >>> m = tm.nn.RReLU(0.1, 0.3).eval()
    >>> m, m(tm.tensor([-1.0, 2.0])).tolist()
    (RReLU(lower=0.1, upper=0.3), [-0.20000000298023224, 2.0])
    """

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.rrelu(input, lower, upper, training, inplace)``."""
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        """``lower=..., upper=...[, inplace=True]``."""
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Softmax2d(Module):
    """Applies softmax over the channels (dimension -3) of a 3-D or 4-D input.

    >>> import tensormodes as tm
    >>> tm.nn.Softmax2d()(tm.zeros(2, 1, 1)).flatten().tolist()
    [0.5, 0.5]
    """

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.softmax(input, -3)`` (ValueError unless the input is 3-D or 4-D)."""
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
