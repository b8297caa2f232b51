"""Elementwise activations PyTorch computes natively (``torch._C._nn.gelu`` and friends): ``_gelu``,
``_silu``, ``_mish``, ``_elu``, ``_celu`` (public as ``celu``), ``_leaky_relu``, ``_hardtanh``, ``_softplus``,
``_log_sigmoid``, ``_glu``, ``_hardswish``, ``_hardsigmoid``, ``_threshold`` (public as ``threshold``),
``_prelu_kernel``,
``hardshrink`` and ``softshrink``; and
``embedding`` and ``_embedding_bag``.

``nn.functional``'s functions check their arguments and call these, as PyTorch's do. Each is one
op, so an activation records one node named as PyTorch's (``GeluBackward0`` ... through
``node=``) instead of the several a composition records, and its gradient is one short formula.
Half types compute in float32, rounded once at the end.
"""

from __future__ import annotations

import functools
import math
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._pointwise import _half_scalar_tail
from ._random_math import fma32
from ._vector_kernels import half_loop_exp
from .common import (
    HALF_TYPES,
    array_type_name,
    check_same_shape_or_broadcast,
    checked_scalar,
    dtype_of,
    no_complex_autograd,
    not_implemented,
    ops,
    quiet,
    wrap_dim,
)
from .indexing import _out_of_bounds
from .meta_rules import elementwise, rule
from .registry import Sample, Tensor, TensorSpec, op
from .scatter_gather import _index_select_out_of_range
from .special import _erf_rounded, _half_gelu_erf, gelu_erf

_VECTOR_GELU = frozenset({np.dtype(np.float32), dt.bfloat16._np})
_FLOATING = frozenset({np.dtype(np.float32), np.dtype(np.float64)}) | HALF_TYPES


def _floating(input: np.ndarray, kernel: str) -> np.ndarray:
    """``input`` to compute with (float32 for the half types), or PyTorch's error for other dtypes."""
    if input.dtype not in _FLOATING:
        raise not_implemented(kernel, dtype_of(input))
    return input.astype(np.float32) if input.dtype in HALF_TYPES else input


def _rounded(result: np.ndarray, input: np.ndarray) -> np.ndarray:
    return np.asarray(result, dtype=input.dtype)


_X = TensorSpec((2, 3), "float32", -4, 4)
_SAMPLES = (Sample((_X,)), Sample((TensorSpec((3, 2), "float64", -6, 6),)), Sample((TensorSpec((), "float32", -2, 2),)),
            Sample((TensorSpec((4,), "float16", -3, 3),)), Sample((TensorSpec((4,), "bfloat16", -3, 3),)))


# -- gelu, silu, mish --------------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_KAPPA = 0.044715


def _in_float(grad_fn):
    """``grad_fn`` computed in float32 for half-type tensors and rounded once at the end, as
    PyTorch's backward kernels do (a formula run in half would round every step)."""
    @functools.wraps(grad_fn)
    def wrapper(grad, input, *args):
        half = grad.dtype in _HALF_DTYPES
        if half:
            dtype, grad, input = grad.dtype, grad.float(), input.float()
        result = grad_fn(grad, input, *args)
        return result.to(dtype) if half else result
    return wrapper


_HALF_DTYPES = (dt.float16, dt.bfloat16)


def _gelu_grad(grad, input, approximate):
    # One backward op, PyTorch's (half types computed in float32 there); its default
    # ``approximate`` left out, as PyTorch's dispatcher hands the call on
    if approximate == "none":
        return ops.ops.aten.gelu_backward.default(grad, input)
    return ops.ops.aten.gelu_backward.default(grad, input, approximate=approximate)


@op(grad=_gelu_grad, node="gelu", meta=elementwise,
    samples=_SAMPLES + (
    Sample((_X,), {"approximate": "tanh"}), Sample((TensorSpec((3,), "float64", -5, 5),), {"approximate": "tanh"})),
    aten="gelu.default", tags=("core", "pointwise"))
def _gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, ``x * Phi(x)``, or its tanh approximation: PyTorch's
    ``torch._C._nn.gelu``, which ``nn.functional.gelu`` runs (node ``GeluBackward0``).

    >>> import tensormodes as tm
    >>> tm._gelu(tm.tensor([1.0]))
    tensor([0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = _floating(input, "GeluKernelImpl")
    if approximate == "tanh" and input.dtype in (np.float16, dt.bfloat16._np):
        # PyTorch's half-type kernel in float32: x + kappa x^3 fused, a correctly rounded tanh, which
        # its vector steps (Sleef's tanhf) round to +-1 beyond 8.664339742 (the far negative tail)
        f32 = np.float32
        inner = f32(_SQRT_2_OVER_PI) * fma32(f32(_KAPPA), x * x * x, x)
        with quiet():
            tanh = np.tanh(inner.astype(np.float64)).astype(f32)
            saturated = np.abs(inner) > f32(8.664339742)
            tail = _half_scalar_tail(input.shape, input)
            if tail is not None:
                saturated &= ~tail
            tanh[saturated] = np.sign(inner[saturated])
            result = f32(0.5) * x * (f32(1) + tanh)
    elif approximate == "tanh":
        result = 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _KAPPA * x * x * x)))
    elif input.dtype in _VECTOR_GELU and input.size > 1 and input.flags.c_contiguous:
        # PyTorch's vectorized float kernel (a contiguous float32 or bfloat16 input of two or more
        # elements) halves last, so x >= 2**127 overflows to inf, and its erf is NaN at +inf.
        # x * (1 + erf(x / sqrt(2))) * 0.5, operands in that order, in place in the result: no
        # whole-array temporary, which the C heap would give back and fault in again at every call
        result = _vector_gelu(x, keep=x is input and ops.is_grad_enabled())
    elif input.dtype == np.float16 and input.flags.c_contiguous:
        # PyTorch's float16 kernel: its vector steps' own erf, then 0.5 * x * (1 + erf)
        result = np.float32(0.5) * x * (np.float32(1) + _half_gelu_erf(x * np.float32(1 / math.sqrt(2))))
    else:
        result = 0.5 * x * (1 + _erf_rounded(x * (1 / math.sqrt(2))))
    return _rounded(result, input)


def _vector_gelu(x: np.ndarray, keep: bool) -> np.ndarray:
    # erf of the whole array in one call: its fast path's fixed costs (~40 us: the elements apart,
    # from 1 on) once, not once a block; with ``keep`` (a float32 input, grad mode on) also kept
    # for the backward, which needs the same erf
    erf = gelu_erf(x, keep=keep)
    result = np.add(1, erf, out=np.empty_like(x) if keep else erf)
    np.multiply(x, result, out=result)
    result *= 0.5
    np.copyto(result, np.float32("nan"), where=x == np.inf)
    return result


def _silu_grad(grad, input):
    if ops.is_grad_enabled():  # PyTorch's differentiable composite (silu_backward has no derivative)
        sigmoid = input.sigmoid()
        return grad * sigmoid * (input * (1 - sigmoid) + 1)
    return ops.ops.aten.silu_backward.default(grad, input)


@op(grad=_silu_grad, node="silu", meta=elementwise, differentiable=no_complex_autograd("silu"), samples=_SAMPLES,
    aten="silu.default", tags=("pointwise",))
def _silu(input: Tensor) -> Tensor:
    """``x * sigmoid(x)``: PyTorch's ``torch._C._nn.silu`` (node ``SiluBackward0``).

    >>> import tensormodes as tm
    >>> tm._silu(tm.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """
    x = input if input.dtype.kind == "c" else _floating(input, "silu_cpu")
    with quiet():  # exp(-x) overflows to inf for very negative x: the result is then -0.0
        if input.dtype in HALF_TYPES:  # PyTorch's half kernel: float32, its loop's exp, rounded once
            return _rounded(x / (1 + half_loop_exp(-input, _half_scalar_tail(input.shape, input))), input)
        return _rounded(x / (1 + np.exp(-x)), input)


def mish_backward_composite(grad_output, input):
    """``mish_backward``'s values with public ops: PyTorch's formula with grad mode on."""
    softplus_tanh = ops._softplus(input).tanh()
    return grad_output * (softplus_tanh + input * input.sigmoid() * (1 - softplus_tanh * softplus_tanh))


def _mish_grad(grad, input):
    if ops.is_grad_enabled():  # PyTorch's differentiable composite (mish_backward has no derivative)
        return mish_backward_composite(grad, input)
    return ops.ops.aten.mish_backward.default(grad, input)


@op(grad=_mish_grad, node="mish", meta=elementwise, samples=_SAMPLES, aten="mish.default", tags=("pointwise",))
def _mish(input: Tensor) -> Tensor:
    """``x * tanh(softplus(x))``: PyTorch's ``torch._C._nn.mish`` (node ``MishBackward0``).

    >>> import tensormodes as tm
    >>> tm._mish(tm.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """
    x = _floating(input, "mish_cpu")
    return _rounded(x * np.tanh(np.logaddexp(0, x)), input)


# -- exponential and leaky linear units ------------------------------------------------------------

def _elu_grad(grad, input, alpha, scale, input_scale):
    # One backward op, PyTorch's, given the input (not the result)
    return ops.ops.aten.elu_backward.default(grad, alpha, scale, input_scale, False, input)


_ELU_SAMPLES = _SAMPLES + (Sample((_X, 0.5, 2.0, 1.5)), Sample((_X,), {"alpha": 2.0, "input_scale": 0.5}))


@op(grad=_elu_grad, node="elu", meta=elementwise, samples=_ELU_SAMPLES,
    aten="elu.default",
    schema={"alpha": "Scalar=1", "scale": "Scalar=1", "input_scale": "Scalar=1"}, tags=("core", "pointwise"))
def _elu(input: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    """``scale * x`` where positive, ``scale * alpha * (exp(x * input_scale) - 1)`` elsewhere:
    PyTorch's ``torch._C._nn.elu`` (node ``EluBackward0``), behind ``elu`` and ``selu``.

    >>> import tensormodes as tm
    >>> tm._elu(tm.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    x = _floating(input, "elu_cpu")
    negative = np.minimum(x, 0)
    return _rounded(np.where(x > 0, x * scale, np.expm1(negative * input_scale) * (alpha * scale)), input)


def _celu_grad(grad, input, alpha):
    return ops.ops.aten.elu_backward.default(grad, alpha, 1.0, 1.0 / alpha, False, input)


@op(grad=_celu_grad, node="celu", meta=elementwise, function="celu",
    samples=_SAMPLES + (Sample((_X, 0.5)),), aten="celu.default", schema={"alpha": "Scalar=1."}, tags=("pointwise",))
def _celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x / alpha) - 1)`` elsewhere: ``tensormodes.celu``, as
    PyTorch's ``torch.celu`` (node ``CeluBackward0``).

    >>> import tensormodes as tm
    >>> tm.celu(tm.tensor([-1.0, 2.0]), 2.0)
    tensor([-0.7869,  2.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu(input, alpha, 1.0, 1.0 / alpha)


def _leaky_relu_grad(grad, input, negative_slope):
    return ops.ops.aten.leaky_relu_backward.default(grad, input, negative_slope, False)


@op(grad=_leaky_relu_grad, node="leaky_relu", meta=elementwise,
    samples=_SAMPLES + (Sample((_X, 0.2)),),
    aten="leaky_relu.default",
    schema={"negative_slope": "Scalar"}, tags=("core", "pointwise"))
def _leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere: PyTorch's ``torch._C._nn.leaky_relu``
    (node ``LeakyReluBackward0``).

    >>> import tensormodes as tm
    >>> tm._leaky_relu(tm.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    """
    x = _floating(input, "leaky_relu_cpu")
    return _rounded(np.where(x > 0, x, x * negative_slope), input)


def _hardtanh_grad(grad, input, min_val, max_val):
    # zero at and beyond the bounds (PyTorch's hardtanh_backward): a NaN passes the gradient
    return ops.ops.aten.hardtanh_backward.default(grad, input, min_val, max_val)


@op(grad=_hardtanh_grad, node="hardtanh", meta=elementwise,
    errors=(Sample((TensorSpec((2,), "uint8", 0, 3),)), Sample((TensorSpec((2,), "bool"),)),
            Sample((TensorSpec((2,), "complex64"),))),
    samples=_SAMPLES + (Sample((_X, 0.0, 6.0)), Sample((_X,), {"max_val": 2.0}),
                                                            Sample((TensorSpec((2, 3), "int64", -3, 3),))),
    aten="hardtanh.default",
    schema={"min_val": "Scalar=-1", "max_val": "Scalar=1"}, tags=("core", "pointwise"))
def _hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``, whose gradient is zero at and beyond the
    bounds: PyTorch's ``torch._C._nn.hardtanh`` (node ``HardtanhBackward0``), behind ``hardtanh``
    and ``relu6``. Integer inputs keep their dtype.

    >>> import tensormodes as tm
    >>> tm._hardtanh(tm.tensor([-3.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if input.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype == np.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if input.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    return np.asarray(np.clip(input, min_val, max_val).astype(input.dtype, copy=False))


def _hardswish_grad(grad, input):
    return ops.ops.aten.hardswish_backward.default(grad, input)


@op(grad=_hardswish_grad, node="hardswish", meta=elementwise,
    samples=_SAMPLES + (Sample((TensorSpec((2, 3), "float64", -6, 6),)),),
    errors=(Sample((TensorSpec((2,), "int64"),)),), aten="hardswish.default")
def _hardswish(input: Tensor) -> Tensor:
    """``x * relu6(x + 3) / 6``: PyTorch's ``torch._C._nn.hardswish`` (node ``HardswishBackward0``).

    >>> import tensormodes as tm
    >>> tm._hardswish(tm.tensor([-4.0, 0.0, 3.0, 4.0])).tolist()
    [-0.0, 0.0, 3.0, 4.0]
    """
    x = _floating(input, "hardswish_cpu")
    return _rounded(x * np.clip(x + 3, 0, 6) / 6, input)


def _hardsigmoid_grad(grad, input):
    return ops.ops.aten.hardsigmoid_backward.default(grad, input)


@op(grad=_hardsigmoid_grad, node="hardsigmoid", meta=elementwise,
    samples=_SAMPLES + (Sample((TensorSpec((2, 3), "float64", -6, 6),)),),
    errors=(Sample((TensorSpec((2,), "int64"),)),), aten="hardsigmoid.default", tags=("pointwise",))
def _hardsigmoid(input: Tensor) -> Tensor:
    """``relu6(x + 3) / 6``: PyTorch's ``torch._C._nn.hardsigmoid`` (node
    ``HardsigmoidBackward0``); the gradient is 1/6 strictly between -3 and 3, else 0.

    >>> import tensormodes as tm
    >>> tm._hardsigmoid(tm.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    x = _floating(input, "hardsigmoid_cpu")
    return _rounded(np.clip(x + 3, 0, 6) / 6, input)


def _threshold_grad(grad, input, threshold):
    return ops._threshold_backward(grad, input, threshold)


@op(grad=_threshold_grad, node="threshold", meta=elementwise, function="threshold",
    samples=(Sample((_X, 0.5, -2.0)), Sample((TensorSpec((3, 2), "float64", -6, 6), 1.0, 7.5)),
             Sample((TensorSpec((4,), "int64", -3, 3), 0, 9)), Sample((TensorSpec((), "float32", -2, 2), 0.0, 1.0))),
    aten="threshold.default", tags=("pointwise",))
def _threshold(input: Tensor, threshold: Number, value: Number) -> Tensor:
    """``value`` where ``x <= threshold``, ``x`` elsewhere (so NaN stays NaN), in ``input``'s
    dtype: ``tensormodes.threshold``, as PyTorch's ``torch.threshold`` (node ``ThresholdBackward0``), behind
    ``nn.functional.threshold``. ``value`` is converted to ``input``'s dtype and ``threshold``
    to the dtype compared in (float for the half types), each with PyTorch's overflow check.

    >>> import tensormodes as tm
    >>> tm.threshold(tm.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    if input.dtype == np.bool_ or input.dtype.kind == "c":
        raise not_implemented("threshold_cpu", dtype_of(input))
    kind = dtype_of(input)
    compared = dt.float32 if input.dtype in HALF_TYPES else kind
    limit = checked_scalar(threshold, compared)
    replacement = checked_scalar(value, kind)
    x = input.astype(np.float32) if compared is not kind else input
    with quiet():  # negative numbers into unsigned types wrap, as PyTorch's cast does
        limit = np.asarray(limit).astype(compared._np)
        replacement = np.asarray(replacement).astype(input.dtype)
        return np.asarray(np.where(x <= limit, replacement, input))


def prelu_kernel_backward_composite(grad_output, input, weight):
    """``_prelu_kernel_backward``'s values with public ops (its double backward's form)."""
    positive = input > 0
    return grad_output.where(positive, grad_output * weight), (input * grad_output).where(~positive, 0.0)


def _prelu_kernel_grad(grad, input, weight):
    # PyTorch's backward op, both gradients at once (the weight's in the input's shape, summed by autograd)
    return ops.ops.aten._prelu_kernel_backward.default(grad, input, weight)


@op(grad=_prelu_kernel_grad, meta=elementwise, samples=(
    Sample((_X, TensorSpec((1,), "float32"))), Sample((TensorSpec((2, 3, 2), "float64", -3, 3),
                                                      TensorSpec((3, 1), "float64"))),
    Sample((TensorSpec((4,), "float32", -3, 3), TensorSpec((), "float32")))),
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((1,), "float64"))), Sample((TensorSpec((2,), "int64"),
                                                                                TensorSpec((1,), "int64")))))
def _prelu_kernel(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere, ``weight`` broadcasting against ``input``:
    PyTorch's ``torch._prelu_kernel`` (node ``PreluKernelBackward0``), which ``prelu`` runs
    after shaping its weight.

    >>> import tensormodes as tm
    >>> tm._prelu_kernel(tm.tensor([-2.0, 3.0]), tm.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Found dtype {array_type_name(weight)} but expected {array_type_name(input)}")
    x = _floating(input, "prelu_cpu")
    try:
        return _rounded(np.where(x > 0, x, x * weight), input)
    except ValueError:
        check_same_shape_or_broadcast(input.shape, weight.shape)  # PyTorch's RuntimeError
        raise


# -- softplus, log_sigmoid, glu --------------------------------------------------------------------

def _softplus_grad(grad, input, beta, threshold):
    return ops.ops.aten.softplus_backward.default(grad, input, beta, threshold)


@op(grad=_softplus_grad, node="softplus", meta=elementwise,
    samples=_SAMPLES + (Sample((_X, 2.0, 3.0)), Sample((_X,), {"beta": 0.5})),
    aten="softplus.default",
    schema={"beta": "Scalar=1", "threshold": "Scalar=20"}, tags=("pointwise",))
def _softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``:
    PyTorch's ``torch._C._nn.softplus`` (node ``SoftplusBackward0``).

    >>> import tensormodes as tm
    >>> tm._softplus(tm.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    x = _floating(input, "softplus_cpu")
    scaled = x * beta
    with quiet():  # the branch not taken may overflow
        return _rounded(np.where(scaled > threshold, x, np.log1p(np.exp(scaled)) / beta), input)


def _log_sigmoid_grad(grad, input, buffer):
    # One backward op, PyTorch's, with the forward's buffer exp(-|x|) (no gradient flows through it)
    return ops.ops.aten.log_sigmoid_backward.default(grad, input, buffer)


@op(grad=_log_sigmoid_grad, node="log_sigmoid", meta=elementwise, saves=("buffer",),
    samples=_SAMPLES + (Sample((TensorSpec((4,), "float64", -40, 40),)),),
    aten="log_sigmoid_forward.default", schema={"(returns)": "Tensor output, Tensor buffer"})
def _log_sigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, without overflow: PyTorch's ``torch._C._nn.log_sigmoid`` (node
    ``LogSigmoidBackward0``).

    >>> import tensormodes as tm
    >>> tm._log_sigmoid(tm.tensor([0.0]))
    tensor([-0.6931])
    """
    x = _floating(input, "log_sigmoid_cpu")
    with quiet():
        buffer = np.exp(-np.absolute(x))
    return _rounded(-np.logaddexp(0, -x), input), _rounded(buffer, input)


def glu_backward_composite(grad_output, input, dim):
    """``glu_backward``'s values with public ops (its double backward's form): PyTorch rounds the
    gate to the input's dtype, then computes a half type's gradient in float and rounds once."""
    first, second = input.chunk(2, dim)
    gate = second.sigmoid()
    if grad_output.dtype in _HALF_DTYPES:
        dtype, grad, first, gate = grad_output.dtype, grad_output.float(), first.float(), gate.float()
        return ops.cat([grad * gate, grad * first * gate * (1 - gate)], dim).to(dtype)
    return ops.cat([grad_output * gate, grad_output * first * gate * (1 - gate)], dim)


def _glu_grad(grad, input, dim):
    return ops.ops.aten.glu_backward.default(grad, input, dim)


def _halved_axis(input, dim: int) -> int:
    """The dimension glu halves, with PyTorch's errors (reads only the shape)."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = wrap_dim(dim, input.ndim)
    if input.shape[axis] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {input.shape[axis]}")
    return axis


def _glu_meta(input, dim=-1):
    axis = _halved_axis(input, dim)
    probe = np.ones(tuple(2 if i == axis else min(s, 1) for i, s in enumerate(input.shape)), input.dtype)
    shape = tuple(s // 2 if i == axis else s for i, s in enumerate(input.shape))
    return MetaArray(shape, _glu(probe, axis).dtype)


@op(grad=_glu_grad, node="glu", meta=rule(_glu_meta), errors=(
    Sample((TensorSpec((2, 3)),)), Sample((TensorSpec(()),)), Sample((TensorSpec((2, 4), "int64"),))), samples=(
    Sample((TensorSpec((2, 4)),)), Sample((TensorSpec((4, 3), "float64"), 0)), Sample((TensorSpec((2, 2, 2)), 1)),
    Sample((TensorSpec((6,), "float16"),)), Sample((TensorSpec((2,)),), {"dim": -1})), aten="glu.default")
def _glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``input`` along ``dim`` times the sigmoid of the
    second: PyTorch's ``torch._C._nn.glu`` (node ``GluBackward0``).

    >>> import tensormodes as tm
    >>> tm._glu(tm.tensor([2.0, 0.0]))
    tensor([1.])
    """
    axis = _halved_axis(input, dim)
    x = _floating(input, "glu_cpu")
    first, second = np.split(x, 2, axis)
    with quiet():
        return _rounded(first / (1 + np.exp(-second)), input)


# -- shrinkage -----------------------------------------------------------------------------------------

def _shrink_zone_grad(grad, input, lambd):
    # PyTorch's shrink backward: zero where -lambd <= x <= lambd (NaN passes the gradient through).
    return grad.masked_fill((input >= -lambd) & (input <= lambd), 0)


_SHRINK_SAMPLES = _SAMPLES + (Sample((_X, 1.5)), Sample((TensorSpec((3,), "float64", -2, 2),), {"lambd": 0.0}),
                              Sample((TensorSpec((0, 2), "float32"),)))


@op(grad=_shrink_zone_grad, meta=elementwise, method=True, out=True,
    samples=_SHRINK_SAMPLES + (Sample((_X, -1.0)),),
    errors=(Sample((TensorSpec((2,), "int64"),)), Sample((TensorSpec((2,), "float16"), 1e5))),
    aten={"hardshrink.default": ("out-pointwise",)}, tags=("pointwise",))
def hardshrink(input: Tensor, lambd: Number = 0.5) -> Tensor:
    """Applies the hard shrinkage function elementwise: ``x`` where ``|x| > lambd``, else 0
    (NaN stays NaN; ``lambd`` is compared in ``input``'s dtype).

    >>> import tensormodes as tm
    >>> tm.hardshrink(tm.tensor([-1.0, 0.2, 0.7]))
    tensor([-1.0000,  0.0000,  0.7000])
    """
    if input.dtype not in _FLOATING:
        raise not_implemented("hardshrink_cpu", dtype_of(input))
    limit = np.asarray(checked_scalar(lambd, dtype_of(input)), dtype=np.float64).astype(input.dtype)
    return np.asarray(np.where((input >= -limit) & (input <= limit), np.zeros((), input.dtype), input))


def _check_softshrink(input, lambd) -> None:
    if input.dtype not in _FLOATING:
        raise not_implemented("softshrink_check", dtype_of(input))
    kind = dtype_of(input)
    largest = float(dt.finfo(kind).max)
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype {array_type_name(input)}, "
                           f"but found {lambd:g}")


def _softshrink_meta(input, lambd=0.5):
    _check_softshrink(input, lambd)
    return MetaArray(input.shape, input.dtype)


@op(grad=_shrink_zone_grad, meta=rule(_softshrink_meta), namespace="tensormodes.nn.functional", out=True,
    samples=_SHRINK_SAMPLES,
    errors=(Sample((TensorSpec((2,), "int64"),)), Sample((_X, -1.0)), Sample((TensorSpec((2,), "float16"), 7e4))),
    aten={"softshrink.default": ("out-pointwise",)}, tags=("pointwise",))
def softshrink(input: Tensor, lambd: Number = 0.5) -> Tensor:
    """Applies the soft shrinkage function elementwise: ``x - lambd`` above ``lambd``,
    ``x + lambd`` below ``-lambd``, else 0 (``x * 0``: NaN stays NaN); ``lambd`` must be
    non-negative. Half types compute in float32.

    >>> import tensormodes.nn.functional as F, tensormodes as tm
    >>> F.softshrink(tm.tensor([-1.0, 0.2, 0.7]))
    tensor([-0.5000,  0.0000,  0.2000])
    """
    _check_softshrink(input, lambd)
    x = _floating(input, "softshrink_check")
    limit = x.dtype.type(lambd)
    with quiet():  # inf * 0 is NaN, as PyTorch's kernel gives
        result = np.where(x > limit, x - limit, np.where(x < -limit, x + limit, x * 0))
    return _rounded(result, input)


# -- embedding ---------------------------------------------------------------------------------------

_WEIGHT = TensorSpec((5, 3), "float32")
_INDICES = TensorSpec((2, 4), "int64", 0, 4)
_INDICES_BACKWARD = TensorSpec((2, 4), "int64", 0, 4)

def _embedding_grad(grad, weight_shape, indices, padding_idx, scale_grad_by_freq):
    # One backward op, PyTorch's
    return ops.ops.aten.embedding_dense_backward.default(grad, indices, weight_shape[0], padding_idx,
                                                         scale_grad_by_freq), None


def _embedding_dense_backward_grad(grad, indices, padding_idx, scale_grad_by_freq, needs_input_grad):
    # Linear in grad_output: each lookup reads its row's gradient, scaled as the op scales it.
    flat = indices.reshape(-1).long()
    rows = grad.index_select(0, flat)
    if scale_grad_by_freq:
        rows = rows / ops.bincount(flat, minlength=grad.shape[0])[flat].unsqueeze(1).to(rows.dtype)
    if padding_idx >= 0:
        rows = rows.masked_fill((flat == padding_idx).unsqueeze(1), 0)
    return rows.reshape(*indices.shape, grad.shape[1]) if needs_input_grad[0] else None, None


def _embedding_dense_backward_meta(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    _check_embedding_indices(indices, "embedding_backward")
    return MetaArray((num_weights, grad_output.shape[-1] if grad_output.ndim else 1), grad_output.dtype)


@op(function=False, grad=_embedding_dense_backward_grad, meta=rule(_embedding_dense_backward_meta),
    differentiable=no_complex_autograd("embedding_dense_backward"),
    schema={"num_weights": "SymInt", "padding_idx": "SymInt"},
    errors=(Sample((TensorSpec((2, 4, 3)), TensorSpec((2, 4), "float32"), 5, -1, False)),),
    samples=(Sample((TensorSpec((2, 4, 3)), _INDICES_BACKWARD, 5, -1, False)),
             Sample((TensorSpec((2, 4, 3), "float64"), _INDICES_BACKWARD, 5, 2, True)),
             Sample((TensorSpec((3, 2)), TensorSpec((3,), "int32", 0, 3), 4, 0, False)),
             Sample((TensorSpec((2, 4, 3), "bfloat16"), _INDICES_BACKWARD, 5, -1, False)),
             Sample((TensorSpec((0, 3)), TensorSpec((0,), "int64"), 4, -1, True))),
    aten="default", tags=("core",))
def embedding_dense_backward(grad_output: Tensor, indices: Tensor, num_weights: int, padding_idx: int,
                             scale_grad_by_freq: bool) -> Tensor:
    """The gradient of ``embedding`` for its weight (PyTorch's ``aten::embedding_dense_backward``):
    each of the ``num_weights`` rows sums the gradients of its lookups, in order; row
    ``padding_idx`` (if not negative) gets none, and with ``scale_grad_by_freq`` each lookup's
    gradient is scaled by 1 / (how often its row is looked up).

    >>> import tensormodes as tm
    >>> tm.ops.aten.embedding_dense_backward.default(tm.ones(3, 2), tm.tensor([0, 2, 0]), 3, -1, False).tolist()
    [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    """
    _check_embedding_indices(indices, "embedding_backward")
    flat = indices.reshape(-1).astype(np.int64, copy=False)
    width = grad_output.shape[-1] if grad_output.ndim else 1
    rows = grad_output.reshape(flat.size, width)
    scales = None
    if scale_grad_by_freq:  # 1 / count in the gradient's type
        dtype = grad_output.dtype
        scales = np.ones((), dtype) / np.bincount(flat, minlength=num_weights)[flat].astype(dtype)
    if padding_idx >= 0:
        kept = flat != padding_idx
        flat, rows = flat[kept], rows[kept]
        scales = None if scales is None else scales[kept]
    result = np.zeros((num_weights, width), grad_output.dtype)
    if scales is None:
        _add_rows_in_order(result, flat, rows)
    elif result.dtype in HALF_TYPES:  # the products rounded, then added
        np.add.at(result, flat, rows * scales[:, None])
    else:
        _add_scaled_rows(result, flat, rows, scales)
    return result


def _add_scaled_rows(result: np.ndarray, flat: np.ndarray, rows: np.ndarray, scales: np.ndarray) -> None:
    """``result[flat[i]] += scales[i] * rows[i]`` in order, each update one multiply-add rounded
    once (PyTorch's ``add_`` with ``alpha``, a fused multiply-add): repeated rows are updated in
    rounds, the i-th lookup of every row in round i; float32 is computed in float64 and rounded."""
    wide = np.float64
    for targets, chosen in _rounds(flat):
        updated = result[targets].astype(wide) + scales[chosen].astype(wide)[:, None] * rows[chosen].astype(wide)
        result[targets] = updated.astype(result.dtype)


def _add_rows_in_order(result: np.ndarray, flat: np.ndarray, rows: np.ndarray) -> None:
    """``result[flat[i]] += rows[i]`` in order into zeros (np.add.at's sums, several times faster).
    The lookups, sorted by row (stably), are laid out as one array of (rows looked up, most lookups
    of a row, width), each row's lookups in order and zeros after them; the k-th lookups of every
    row are then added into zeros at once, k = 0, 1, ...: each row's sum in its lookups' order.
    The padding's +0 changes no sum, as one that starts from +0 is never -0. Rows looked up once
    at most take one indexed update; when the padding would outweigh the lookups (a few rows
    looked up far more often than the rest), the rounds of ``_rounds`` add them without it."""
    if not flat.size:
        return
    order = np.argsort(flat, kind="stable")
    sorted_rows = flat[order]
    rank = np.arange(order.size)
    rank -= np.searchsorted(sorted_rows, sorted_rows, side="left")  # which lookup of its row each one is
    most = int(rank.max()) + 1
    if most == 1:  # every row looked up once at most
        result[flat] += rows
        return
    first = rank == 0
    looked_up = int(np.count_nonzero(first))
    if looked_up * most > 4 * flat.size:
        for targets, chosen in _rounds(flat):
            result[targets] += rows[chosen]
        return
    laid_out = np.zeros((looked_up, most, rows.shape[1]), rows.dtype)
    laid_out[np.cumsum(first) - 1, rank] = rows[order]
    sums = np.zeros((looked_up, rows.shape[1]), rows.dtype)
    for k in range(most):
        sums += laid_out[:, k]
    result[sorted_rows[first]] = sums


def _rounds(flat: np.ndarray):
    """The lookups ``flat`` in rounds: round i holds the i-th lookup of every row looked up i + 1
    times or more, as (its rows, a mask of its lookups). Rows are unique within a round, so one
    indexed update per round adds every row's lookups in their order."""
    order = np.argsort(flat, kind="stable")
    sorted_rows = flat[order]
    starts = np.searchsorted(sorted_rows, sorted_rows, side="left")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size) - starts  # which lookup of its row each one is
    for round_ in range(int(rank.max(initial=-1)) + 1):
        chosen = rank == round_
        yield flat[chosen], chosen


def _check_embedding_indices(indices, function: str) -> None:
    if indices.dtype != np.int64 and indices.dtype != np.int32:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{array_type_name(indices)}Tensor instead (while checking "
                           f"arguments for {function})")




def _check_embedding(weight, indices, sparse: bool) -> None:
    """embedding's argument checks (metadata only: the index range needs values)."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_embedding_indices(indices, "embedding")


def _embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    _check_embedding(weight, indices, sparse)
    return MetaArray(tuple(indices.shape) + (weight.shape[1],), weight.dtype)


@op(grad=_embedding_grad, differentiable=no_complex_autograd("embedding"), meta=rule(_embedding_meta), errors=(
    Sample((TensorSpec((5,)), _INDICES)), Sample((_WEIGHT, TensorSpec((2,), "float32"))),
    Sample((_WEIGHT, _INDICES, -1, False, True))), samples=(
    # padding_idx and scale_grad_by_freq change the gradient away from the derivative, which the
    # every-op finite-difference checks compare with: tests/test_grad_fn_names.py checks them with torch.
    Sample((_WEIGHT, _INDICES)), Sample((TensorSpec((4, 2), "float64"), TensorSpec((3,), "int32", 0, 3))),
    Sample((_WEIGHT, _INDICES, -1, False, False)), Sample((_WEIGHT, TensorSpec((), "int64", 0, 4)))),
    tags=("core",))
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """The rows of ``weight`` that the integer ``indices`` pick, ``weight[indices]``; row
    ``padding_idx`` (if not negative) gets no gradient, and with ``scale_grad_by_freq`` each
    row's gradient is divided by how often it is picked. What ``nn.functional.embedding`` runs.

    >>> import tensormodes as tm
    >>> tm.embedding(tm.tensor([[1., 1.], [2., 2.], [3., 3.]]), tm.tensor([2, 0]))
    tensor([[3., 3.],
            [1., 1.]])
    """
    _check_embedding(weight, indices, sparse)
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        # PyTorch's embedding is index_select of the rows: its errors
        _index_select_out_of_range(weight, 0, _out_of_bounds(indices, weight.shape[0], 0))
    return np.asarray(weight[indices])


# -- embedding_bag ----------------------------------------------------------------------------------

_BAG_MODES = ("sum", "mean", "max")


def _bag_layout(indices: np.ndarray, offsets: np.ndarray, include_last_offset: bool, padding_idx):
    """The bag of each index, the number of bags, and which indices count (not ``padding_idx``)."""
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    positions = np.arange(indices.shape[0])
    bag_of = np.searchsorted(offsets[:bags], positions, side="right") - 1
    kept = np.ones(indices.shape, bool) if padding_idx is None or padding_idx < 0 else indices != padding_idx
    if include_last_offset and offsets.shape[0]:
        kept &= positions < offsets[-1]  # past the last offset: in no bag
    return bag_of, max(bags, 0), kept & (bag_of >= 0)


def _check_bag_arguments(weight, indices, offsets, mode, per_sample_weights, include_last_offset=False,
                         padding_idx=None) -> np.dtype:
    """embedding_bag's checks, in PyTorch's order and words; the indices and offsets in their
    promoted integer dtype, as PyTorch's kernel reads them. The offsets' values are checked for
    real arrays only (the meta rule runs the rest)."""
    if padding_idx is not None:
        if weight.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{rows} through {rows - 1}, "
                               f"but got {padding_idx}")
    if indices.ndim not in (1, 2):
        raise RuntimeError(f"input has to be a 1D or 2D Tensor, but got Tensor of dimension {indices.ndim}")
    if indices.ndim == 1 and offsets.ndim != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.ndim}")
    if weight.ndim != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    common = dt.promote_types(dtype_of(offsets), dtype_of(indices))._np  # both are read in it
    if common != np.int64 and common != np.int32:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{array_type_name(np.empty(0, common))}Tensor instead (while "
                           f"checking arguments for embedding_bag)")
    if weight.dtype not in _FLOATING:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           f"Half, BFloat16, Float, Double; but got torch.{array_type_name(weight)}Tensor instead "
                           f"(while checking arguments for embedding_bag)")
    if offsets.ndim == 0:  # (beside 2-D indices) PyTorch asks for its length
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if type(offsets) is np.ndarray and offsets.shape[0]:
        # (PyTorch reads both from the data: of 2-D offsets, flat elements 0 and len - 1)
        first, last = offsets.reshape(-1)[0], offsets.reshape(-1)[offsets.shape[0] - 1]
        if first != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {first}\n[ torch.{array_type_name(np.empty(0, common))}"
                               "Tensor{} ]")
        if last > indices.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got "
                               f"offsets[-1] of {last}")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                               f"#1 'per_sample_weights'; but type torch.{array_type_name(weight)}Tensor does not "
                               f"equal torch.{array_type_name(per_sample_weights)}Tensor (while checking arguments for "
                               f"embedding_bag)")
        for condition in ("per_sample_weights.value().dim() == 1",
                          "per_sample_weights.value().numel() == indices.numel()"):
            if not (per_sample_weights.ndim == 1 if "dim()" in condition else per_sample_weights.size == indices.size):
                raise RuntimeError(f"Expected {condition} to be true, but got false.  (Could this error message be "
                                   f"improved?  If so, please report an enhancement request to PyTorch.)")
    if include_last_offset and not offsets.shape[0]:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if offsets.ndim > 1:  # (beside 2-D indices) PyTorch's kernel fails on them: where depends on its path
        if mode != 0 or weight.dtype == np.float64 or padding_idx is not None and padding_idx >= 0:
            rows = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
            raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {offsets.ndim} with type: "
                             f"{array_type_name(np.empty(0, common))} and size: {[rows, *offsets.shape[1:]]}")
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.ndim}")
    return common


def _embedding_bag_meta(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                        per_sample_weights=None, include_last_offset=False, padding_idx=None):
    _check_bag_arguments(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    width = weight.shape[1]
    winners = (max(bags, 0), width) if mode == 2 else (0,)
    long = np.dtype(np.int64)
    return (MetaArray((max(bags, 0), width), weight.dtype), MetaArray((indices.size,), long),
            MetaArray((max(bags, 0),), long), MetaArray(winners, long))


def _embedding_bag_grad(grad, weight, weight_shape, indices, offsets, scale_grad_by_freq, mode, sparse,
                        per_sample_weights, include_last_offset, padding_idx, offset2bag, bag_size, max_indices,
                        needs_input_grad):
    # PyTorch's EmbeddingBagBackward0: each index's row gets its bag's gradient (divided by the
    # bag's size for 'mean', by the index's count with scale_grad_by_freq, times its sample
    # weight); for 'max' each bag's gradient goes to the rows that gave the maxima.
    rows, width = weight_shape
    if indices.dim() != 1:  # the forward reads 2-D indices in order; PyTorch's backward refuses them
        raise IndexError("index_select(): Index is supposed to be a vector")
    if indices.dtype is not dt.int64 and indices.dtype is not dt.int32:  # read as promoted with the offsets
        indices = indices.long()
    if offsets.dim() != 1:
        offsets = offsets.reshape(-1)
    if not ops.is_grad_enabled():
        # PyTorch's formula: its backward ops, over the layout the forward kernel returned (the saved
        # layout has no history: with create_graph the public-op form below runs instead)
        aten = ops.ops.aten
        padding = () if padding_idx is None or padding_idx == -1 else (padding_idx,)  # (-1: the default, left out)
        return (aten._embedding_bag_backward.default(
            grad, indices, offsets, offset2bag, bag_size, max_indices, rows, scale_grad_by_freq, mode, sparse,
            per_sample_weights, *padding) if needs_input_grad[0] else None, None, None,
            aten._embedding_bag_per_sample_weights_backward.default(
                grad, weight, indices, offsets, offset2bag, mode, *padding)
            if per_sample_weights is not None and needs_input_grad[3] else None)
    if mode == 2:
        won = max_indices >= 0
        columns = ops.arange(width, device=grad.device).expand(max_indices.shape)
        positions = (max_indices * width + columns)[won]
        return grad.new_zeros(rows * width).index_add(0, positions, grad[won]).view(rows, width), None, None, None
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    positions = ops.arange(indices.shape[0], device=grad.device)
    bag_of = ops.searchsorted(offsets[:bags].contiguous(), positions, right=True) - 1
    kept = bag_of >= 0
    if include_last_offset and offsets.shape[0]:
        kept = kept & (positions < offsets[-1])
    if padding_idx is not None and padding_idx >= 0:
        kept = kept & (indices != padding_idx)
    bag_of = bag_of.clamp(min=0)
    spread = grad.index_select(0, bag_of) * kept.unsqueeze(1).to(grad.dtype)
    if mode == 1:
        counts = ops.bincount(bag_of[kept], minlength=bags)[:bags].clamp(min=1)
        spread = spread / counts.index_select(0, bag_of).unsqueeze(1).to(grad.dtype)
    grad_samples = None
    if per_sample_weights is not None and needs_input_grad[3]:
        grad_samples = (spread * weight.index_select(0, indices)).sum(1)
    if per_sample_weights is not None:
        spread = spread * per_sample_weights.unsqueeze(1)
    if scale_grad_by_freq:
        counted = ops.bincount(indices[kept], minlength=rows).clamp(min=1)
        spread = spread / counted.index_select(0, indices).unsqueeze(1).to(grad.dtype)
    grad_weight = grad.new_zeros(weight_shape).index_add(0, indices, spread) if needs_input_grad[0] else None
    return grad_weight, None, None, grad_samples


_BAG_WEIGHT = TensorSpec((5, 3), "float32")
_BAG_INDICES = TensorSpec((6,), "int64", 0, 4)


@op(node="embedding_bag", grad=_embedding_bag_grad, saves=("offset2bag", "bag_size", "max_indices"),
    meta=rule(_embedding_bag_meta),
    save_only_for={"weight": "per_sample_weights"}, differentiable=no_complex_autograd("embedding_bag"), samples=(
    Sample((_BAG_WEIGHT, _BAG_INDICES, TensorSpec((1,), "int64", 0, 0))),
    Sample((_BAG_WEIGHT, _BAG_INDICES, TensorSpec((2,), "int64", 0, 0), False, 1)),
    Sample((TensorSpec((4, 2), "float64"), TensorSpec((5,), "int64", 0, 3), TensorSpec((1,), "int64", 0, 0)),
           {"mode": 2}),
    Sample((_BAG_WEIGHT, _BAG_INDICES, TensorSpec((1,), "int64", 0, 0), False, 0, False,
            TensorSpec((6,), "float32"))),
    # (offsets that are not all 0, and include_last_offset: tests/test_grad_fn_names.py, against torch)
    Sample((_BAG_WEIGHT, _BAG_INDICES, TensorSpec((2,), "int64", 0, 0)), {"mode": 1, "padding_idx": 2})),
    tags=("core",))
def _embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                   mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
                   include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """The sums (``mode`` 0), means (1) or maxima (2) of bags of ``weight``'s rows: the 1-D
    ``indices`` are cut into bags at ``offsets``; ``padding_idx`` rows are left out, and
    ``per_sample_weights`` scale the rows (sums only). The output of PyTorch's
    ``torch.embedding_bag``, which ``nn.functional.embedding_bag`` runs (node
    ``EmbeddingBagBackward0``).

    >>> import tensormodes as tm
    >>> tm._embedding_bag(tm.tensor([[1., 1.], [2., 2.], [3., 5.]]), tm.tensor([0, 2, 1]), tm.tensor([0, 2]))
    tensor([[4., 6.],
            [2., 2.]])
    """
    common = _check_bag_arguments(weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                                  padding_idx)
    # PyTorch takes the indices (and offsets) of a 2-D tensor in order, in their promoted dtype
    indices, offsets = indices.reshape(-1).astype(common, copy=False), offsets.reshape(-1).astype(common, copy=False)
    bag_of, bags, kept = _bag_layout(indices, offsets, include_last_offset, padding_idx)
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        position = int(np.flatnonzero((indices < 0) | (indices >= weight.shape[0]))[0])
        raise RuntimeError(f"Index {position} of input takes value {int(indices[position])} which is not in the "
                           f"valid range [0, {weight.shape[0]})")
    values = _floating(weight, "embedding_bag")[indices[kept]]
    # the layout PyTorch's backward reads: each index's bag, each bag's count of rows taken
    layout = (bag_of.clip(0).astype(np.int64), np.bincount(bag_of[kept], minlength=bags)[:bags].astype(np.int64))
    if per_sample_weights is not None:
        values = values * per_sample_weights[kept][:, None]
    rows = bag_of[kept]
    width = weight.shape[1]
    if mode == 2:
        result = np.full((bags, width), -np.inf, values.dtype)
        np.maximum.at(result, rows, values)
        empty = np.bincount(rows, minlength=bags)[:bags] == 0
        result[empty] = 0
        # the first row of each bag holding its maximum wins, as PyTorch's kernel scans forward
        winners = np.full((bags, width), -1, np.int64)
        hit_rows, hit_columns = np.nonzero(values == result[rows])
        winners[rows[hit_rows[::-1]], hit_columns[::-1]] = indices[kept][hit_rows[::-1]]
        return _rounded(result, weight), layout[0], layout[1], winners
    result = np.zeros((bags, width), values.dtype)
    np.add.at(result, rows, values)
    # (fbgemm runs the bags without a padding_idx)
    fbgemm = weight.dtype == _BFLOAT16 and padding_idx is None
    rounded = _bfloat16_ties_away if fbgemm else functools.partial(_rounded, input=weight)
    if mode == 1:
        if weight.dtype in HALF_TYPES:  # PyTorch divides the bag's sum rounded to the half type
            result = rounded(result).astype(values.dtype)
        result /= np.maximum(np.bincount(rows, minlength=bags)[:bags], 1)[:, None].astype(values.dtype)
    return rounded(result), layout[0], layout[1], np.zeros(0, np.int64)


_BFLOAT16 = np.dtype(dt.bfloat16._np)


def _bfloat16_ties_away(values: np.ndarray) -> np.ndarray:
    """float32 ``values`` rounded to bfloat16 with ties away from zero (the bits plus 0x8000,
    truncated), as the fbgemm kernels behind PyTorch's bfloat16 embedding bags round; NaN stays
    NaN."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x8000)) & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(values), values, rounded).astype(_BFLOAT16)
