"""Activation functions of ``nn.functional`` (``relu``, ``gelu``, ``softmax``, ``elu``, ``glu``, ``prelu`` ...).
"""

from __future__ import annotations

import warnings

from ..._ops.common import not_implemented, scalar_type_name
from ..._ops.registry import Tensor
from ..._overrides import dispatch as _dispatch
from ._common import _builtin, _export, _function, _native, _plain, _public, _reexport, _top_level

# The activations PyTorch computes natively (torch._C._nn.gelu ...): one op, one node each.
_gelu = _function("_gelu")
_silu = _function("_silu")
_mish = _function("_mish")
_elu = _function("_elu")
_celu = _function("celu")
_leaky_relu = _function("_leaky_relu")
_hardtanh = _function("_hardtanh")
_softplus = _function("_softplus")
_log_sigmoid = _function("_log_sigmoid")
_glu = _function("_glu")
_hardswish = _function("_hardswish")
_hardsigmoid = _function("_hardsigmoid")
_threshold = _function("threshold")
_prelu_kernel = _function("_prelu_kernel")


def _apply(function, input: Tensor, inplace: bool) -> Tensor:
    """``function(input)``, or written into ``input`` when ``inplace`` (computed from a copy, so
    the values its gradient needs are not overwritten)."""
    if not inplace:
        return function(input)
    return input.copy_(function(input.clone()))


@_public
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Rectified linear unit, ``max(input, 0)`` elementwise.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.relu(tm.tensor([-2., 0.5])).tolist()
    [0.0, 0.5]
    """
    return input.relu_() if inplace else input.relu()


@_export
@_top_level
def relu_(input: Tensor) -> Tensor:
    """In-place version of ``relu`` (``tensormodes.relu_``, which ``nn.functional`` exports too).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> x = tm.tensor([-2., 0.5])
    >>> F.relu_(x) is x, x.tolist()
    (True, [0.0, 0.5])
    """
    return input.relu_()


@_builtin
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.gelu(tm.tensor([1.0])).item(), 4)
    0.8413
    """
    return _gelu(input, approximate=approximate)


@_public
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """Sigmoid linear unit, ``x * sigmoid(x)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.silu(tm.tensor([0.0])).tolist()
    [0.0]
    """
    return _apply(_silu, input, inplace)


def _softmax_dim(ndim: int, name: str = "softmax") -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=4)
    return 0 if ndim in (0, 1, 3) else 1


@_public
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed stably.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.softmax(tm.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return input.softmax(dim, dtype=dtype)


@_public
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``log(softmax(x))``, computed stably.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.log_softmax(tm.tensor([0., 0.]), dim=0)[0].item(), 4)
    -0.6931
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return input.log_softmax(dim, dtype=dtype)


# -- more activations ------------------------------------------------------------------------

@_public
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.leaky_relu(tm.tensor([-2.0, 3.0]), 0.5).tolist()
    [-1.0, 3.0]
    """
    return _apply(lambda x: _leaky_relu(x, negative_slope), input, inplace)


@_builtin
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place version of ``leaky_relu``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.leaky_relu_(tm.tensor([-2.0, 3.0]), 0.5).tolist()
    [-1.0, 3.0]
    """
    return _apply(lambda x: _leaky_relu(x, negative_slope), input, True)


@_public
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.elu(tm.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _apply(lambda x: _elu(x, alpha), input, inplace)


@_builtin
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place version of ``elu``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.elu_(tm.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _apply(lambda x: _elu(x, alpha), input, True)


@_public
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``; the gradient is zero at and beyond the bounds.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardtanh(tm.tensor([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(lambda x: _hardtanh(x, min_val, max_val), input, inplace)


@_builtin
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place version of ``hardtanh``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardtanh_(tm.tensor([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    return _apply(lambda x: _hardtanh(x, min_val, max_val), input, True)


@_public
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(input, 0, 6)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.relu6(tm.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """
    return hardtanh(input, 0, 6, inplace)  # PyTorch's relu6 passes the bounds as ints


@_builtin
def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.softplus(tm.tensor([0.0])).item(), 4)
    0.6931
    """
    return _softplus(input, beta, threshold)


@_builtin
def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed without overflow.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.logsigmoid(tm.tensor([0.0])).item(), 4)
    -0.6931
    """
    return _log_sigmoid(input)


@_public
def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.softsign(tm.tensor([1.0, -3.0])).tolist()
    [0.5, -0.75]
    """
    return input / (input.abs() + 1)


@_public
def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.tanhshrink(tm.tensor([0.0])).tolist()
    [0.0]
    """
    return input - input.tanh()


# PyTorch's F.hardshrink is torch.hardshrink; F.softshrink is torch._C._nn.softshrink.
hardshrink = _reexport("hardshrink")
softshrink = _native("softshrink")
_rrelu = _function("rrelu")


@_public
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``x`` where positive, else ``a * x``, with ``a`` drawn from
    ``U(lower, upper)`` per element in training and ``(lower + upper) / 2`` otherwise.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.rrelu(tm.tensor([-2.0, 3.0]), 0.25, 0.75).tolist()
    [-1.0, 3.0]
    """
    return _apply(lambda x: _rrelu(x, lower, upper, training), input, inplace)


@_export
@_top_level
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    """In-place version of ``rrelu``: writes the result into ``input`` and returns it
    (``tensormodes.rrelu_``, which ``nn.functional`` exports too).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> x = tm.tensor([-2.0, 3.0])
    >>> F.rrelu_(x, 0.5, 0.5) is x, x.tolist(), F.rrelu_ is tm.rrelu_
    (True, [-1.0, 3.0], True)
    """
    return _apply(lambda x: _rrelu(x, lower, upper, training, generator), input, True)


@_public
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Samples from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with ``g``
    standard Gumbel noise; ``hard`` returns one-hot vectors whose gradient is the soft sample's
    (straight-through). ``eps`` is deprecated and has no effect.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.gumbel_softmax(tm.zeros(2, 3), hard=True).sum(-1).tolist()
    [1.0, 1.0]
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=3)
    gumbels = -_function("empty_like")(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _function("zeros_like")(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


@_public
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``input`` along ``dim`` times the sigmoid of the second.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.glu(tm.tensor([2.0, 0.0])).tolist()
    [1.0]
    """
    return _glu(input, dim)


# -- activations, continued ------------------------------------------------------------------

@_plain
def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` elementwise: ``input.sigmoid()``. Like PyTorch's, this function is
    outside the protocol (handlers see ``Tensor.sigmoid``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.sigmoid(tm.tensor([0.0])).tolist()
    [0.5]
    """
    return input.sigmoid()


@_plain
def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent elementwise: ``input.tanh()``. Like PyTorch's, this function is
    outside the protocol (handlers see ``Tensor.tanh``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.tanh(tm.tensor([0.0])).tolist()
    [0.0]
    """
    return input.tanh()


# PyTorch's F.sigmoid and F.tanh call the Tensor methods without dispatching themselves.
_dispatch.IGNORED.update({sigmoid, tanh})


@_public
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.softmin(tm.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim(input.dim(), "softmin")
    return (-input).softmax(dim, dtype=dtype)


def _require_floating(input: Tensor, kernel: str) -> None:
    if not input.is_floating_point():
        raise not_implemented(kernel, input.dtype)


@_public
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere (in ``input``'s dtype).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.threshold(tm.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    return _apply(lambda x: _threshold(x, threshold, value), input, inplace)


@_export
@_top_level
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place version of ``threshold`` (``tensormodes.threshold_``, which ``nn.functional`` exports too).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.threshold_(tm.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    return _apply(lambda x: _threshold(x, threshold, value), input, True)


@_public
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``: 0 up to -3, ``x`` from 3.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardswish(tm.tensor([0.0, 3.0, 4.0])).tolist()
    [0.0, 3.0, 4.0]
    """
    return _apply(_hardswish, input, inplace)


@_public
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; the gradient is 1/6 strictly between -3 and 3, else 0.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.hardsigmoid(tm.tensor([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    return _apply(_hardsigmoid, input, inplace)


@_public
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.mish(tm.tensor([0.0])).tolist()
    [0.0]
    """
    return _apply(_mish, input, inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu_values(input: Tensor) -> Tensor:
    return _elu(input, _SELU_ALPHA, _SELU_SCALE)


def _selu_function(input: Tensor) -> Tensor:
    """``tensormodes.selu``: ``selu`` without the ``inplace`` flag, as PyTorch's ``torch.selu``.

    >>> import tensormodes as tm
    >>> tm.selu(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [0.0, 1.0507009873554805]
    """
    return _selu_values(input)


_top_level(_selu_function, name="selu")


@_public
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants
    ``alpha = 1.6732632...`` and ``scale = 1.0507009...``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.selu(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [0.0, 1.0507009873554805]
    """
    return _apply(_selu_values, input, inplace)


@_export
@_top_level
def selu_(input: Tensor) -> Tensor:
    """In-place version of ``selu`` (``tensormodes.selu_``, which ``nn.functional`` exports too).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.selu_(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [0.0, 1.0507009873554805]
    """
    return _apply(_selu_values, input, True)


@_public
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x / alpha) - 1)`` elsewhere.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.celu(tm.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _apply(lambda x: _celu(x, alpha), input, inplace)


@_export
@_top_level
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place version of ``celu`` (``tensormodes.celu_``, which ``nn.functional`` exports too).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.celu_(tm.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _apply(lambda x: _celu(x, alpha), input, True)


@_export
@_top_level
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; a 1-D ``weight`` holds one slope per
    channel (dimension 1), or a single slope for all. ``tensormodes.prelu``, which
    ``nn.functional`` exports too (and ``Tensor.prelu``), as PyTorch's.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.prelu(tm.tensor([[-2.0, 3.0]]), tm.tensor([0.25])).tolist()
    [[-0.5, 3.0]]
    """
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if weight.numel() != 1 and input.dim() == 0:  # (a 0-dim input with a single slope is fine)
        raise RuntimeError("Not allow zero-dim input tensor.")
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_type_name(input.dtype)} and "
                           f"{scalar_type_name(weight.dtype)}")
    _require_floating(input, "prelu_cpu")
    if weight.numel() == 1:
        slope = weight.view(())
    else:
        slope = weight.view([channels] + [1] * (input.dim() - 2))
    return _prelu_kernel(input, slope)
