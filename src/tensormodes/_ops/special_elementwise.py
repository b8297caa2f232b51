"""``torch.special``'s elementwise functions of information and probability: ``entr``,
``xlog1py``, the normal distribution's ``ndtr``, and the gamma family's ``mvlgamma`` (``special``'s
``multigammaln``).

``entr`` and ``xlog1py`` evaluate PyTorch's kernels' expressions (float32 through float's
logarithms, which round as glibc's within an ulp; half types step by step); ``ndtr`` is
PyTorch's composite ``(1 + erf(x / sqrt(2))) / 2`` op by op, recorded as its last step.
"""
# Parameters carry PyTorch's names (input, other), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import math
from numbers import Number

import numpy as np

from . import _cephes
from ._pointwise import _both_scalars, _invalid_arguments
from ._random_math import libm
from ._samples import BF16, C64, F16, I23, M23, POSITIVE, SCALAR_F64
from .binary_math import _float_binary
from .common import HALF_TYPES, dtype_of, floating, not_implemented, operand_dtype, ops
from .meta_rules import elementwise
from .registry import Sample, Tensor, TensorSpec, op
from .special import _erf_rounded, _lgamma

_SPECIAL = "tensormodes.special"


def _entr(x: np.ndarray) -> np.ndarray:
    """PyTorch's ``entr_cpu``: NaN stays, -x log(x) above 0 (in the type: half types round
    the logarithm, then the product), 0 at 0, -inf below."""
    half = x.dtype if x.dtype in HALF_TYPES else None
    wide = x.astype(np.float32) if half else x
    logarithm = _cephes.log_of(np.where(wide > 0, wide, 1))
    if half:
        logarithm = logarithm.astype(half).astype(np.float32)
    value = -wide * logarithm
    value = np.where(wide == 0, 0, np.where(wide < 0, -np.inf, value))
    return np.where(np.isnan(wide), wide, value).astype(x.dtype)


def _entr_grad(grad, input):
    return grad * (-(1 + input.log()))  # PyTorch's formula


@op(name="special_entr", function="entr", namespace=_SPECIAL, errors=(Sample((C64,)),), meta=elementwise,
    grad=_entr_grad, out=True, samples=(Sample((POSITIVE,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)),
                                        Sample((BF16,)), Sample((TensorSpec((4,), "float64", -1, 3),))),
    tags=("pointwise",))
def special_entr(input: Tensor) -> Tensor:
    """The elementwise entropy ``-x * log(x)`` (0 at 0, -inf below 0).

    >>> import tensormodes as tm
    >>> tm.special.entr(tm.tensor([0.0, 0.5, -1.0], dtype=tm.float64)).tolist()
    [0.0, 0.34657359027997264, -inf]
    """
    if input.dtype.kind == "c":
        raise not_implemented("entr_cpu", dtype_of(input))
    if input.dtype.kind in "biu":
        return _entr(input.astype(floating(dtype_of(input))._np))
    return _entr(input)


_SQRT1_2 = math.sqrt(0.5)  # C's M_SQRT1_2


def _ndtr_grad(grad, input):
    # the composite's chain, op by op: mul(0.5), erf's gradient, mul(M_SQRT1_2)
    scaled = input * _SQRT1_2
    return (grad * 0.5 * ((2 / math.sqrt(math.pi)) * (-(scaled * scaled)).exp())) * _SQRT1_2


def _ndtr_decomposition(input):
    return (1 + (input * _SQRT1_2).erf()) * 0.5


@op(name="special_ndtr", function="ndtr", namespace=_SPECIAL, errors=(Sample((C64,)),), meta=elementwise,
    grad=_ndtr_grad, node="mul#1", decompose=_ndtr_decomposition, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)),
             Sample((TensorSpec((4,), "float64", -12, 9),))), tags=("pointwise",))
def special_ndtr(input: Tensor) -> Tensor:
    """The standard normal distribution's cumulative distribution function,
    ``(1 + erf(x / sqrt(2))) / 2`` (PyTorch's composite, op by op).

    >>> import tensormodes as tm
    >>> tm.special.ndtr(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [0.5, 0.841344746068543]
    """
    if input.dtype.kind == "c":
        raise not_implemented("erf_vml_cpu", dtype_of(input))
    result = floating(dtype_of(input))._np
    scaled = (input.astype(result) * result.type(_SQRT1_2)).astype(result)
    return ((1 + _erf_rounded(scaled)).astype(result) * result.type(0.5)).astype(result)


def _x_log1p_y(x, y):
    """``x * log1p(y)``, 0 where x is 0, NaN where y is (PyTorch's ``xlog1py_cpu``), in float64."""
    with np.errstate(all="ignore"):
        logarithm = libm("log1p", np.asarray(y, np.float64)) if np.ndim(y) else math.log1p(y) if y > -1 else (
            -math.inf if y == -1 else math.nan)
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * logarithm))


def _half_x_log1p_y(d):
    def x_log1p_y(x, y):
        logarithm = np.log1p(np.asarray(y, np.float64)).astype(np.float32).astype(d._np).astype(np.float32)
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, np.asarray(x, np.float32) * logarithm))
    return x_log1p_y


def _xlog1py_grad(grad, input, other, needs_input_grad):
    input_grad = other_grad = None
    if needs_input_grad[0]:
        input_grad = ops.special.xlog1py(grad, other).masked_fill((input == 0.0) & (other <= -1.0), 0.0)
    if needs_input_grad[1]:
        other_grad = grad * input / (other + 1)
    return input_grad, other_grad


@op(name="special_xlog1py", function="xlog1py", namespace=_SPECIAL, errors=(Sample((M23, TensorSpec((3, 2)))),
                                                                             Sample((C64, C64))),
    meta=elementwise, grad=_xlog1py_grad, out=True,
    samples=(Sample((M23, POSITIVE)), Sample((M23, TensorSpec((3,), "float64", -0.9, 3))), Sample((I23, I23)),
             Sample((F16, TensorSpec((3,), "float16", -0.5, 2))), Sample((M23, 2.5)), Sample((3, POSITIVE)),
             Sample((SCALAR_F64, TensorSpec((), "float64", -0.5, 2))),
             Sample((TensorSpec((3,), "int64", 0, 0), TensorSpec((3,), "float32", -2, 1)))),
    aten={"special_xlog1py.default": (), "special_xlog1py.self_scalar": ("input: Scalar",),
          "special_xlog1py.other_scalar": ("other: Scalar",)},
    tags=("pointwise",))
def special_xlog1py(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input * log1p(other)`` elementwise, 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> import tensormodes as tm
    >>> tm.special.xlog1py(tm.tensor([0.0, 2.0]), tm.tensor([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    if _both_scalars(input, other):
        raise TypeError(f"{_invalid_arguments('special_xlog1py', input, other)}, but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Number self, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = operand_dtype(input, other)
    if d in (ops.float16, ops.bfloat16):
        return _float_binary(_half_x_log1p_y(d), input, other, "xlog1py_cpu")
    return _float_binary(_x_log1p_y, input, other, "xlog1py_cpu")


def _mvlgamma_offsets(p: int, dtype) -> np.ndarray:
    """``arange(-p / 2 + 0.5, 0.5, 0.5)``: the p half-integer offsets, lowest first."""
    return np.arange(-p * 0.5 + 0.5, 0.5, 0.5).astype(dtype)


def _mvlgamma_grad(grad, input, p):
    # PyTorch's mvlgamma_backward: grad * sum of digamma(x + offset)
    offsets = ops.arange(-p / 2.0 + 0.5, 0.5, 0.5, dtype=input.dtype)
    return grad * (offsets + input.unsqueeze(-1)).digamma().sum(-1)


@op(errors=(Sample((TensorSpec((3,), "bool"), 2)), Sample((POSITIVE, 0))),
    meta=elementwise, grad=_mvlgamma_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", 1.5, 6), 2)), Sample((TensorSpec((3,), "float64", 2, 9), 4)),
             Sample((TensorSpec((2, 2), "int64", 2, 6), 1)), Sample((TensorSpec((), "float64", 1.2, 4), 3)),
             Sample((TensorSpec((3,), "float16", 1.5, 4), 2))),
    tags=("pointwise",))
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``: ``p (p - 1) / 4 log(pi)`` plus the sum
    of ``lgamma(x - i / 2)`` for i < p (PyTorch's composite, op by op).

    >>> import tensormodes as tm
    >>> tm.mvlgamma(tm.tensor([2.5], dtype=tm.float64), 2).tolist()
    [0.8570478133976197]
    """
    if input.dtype == np.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    result = floating(dtype_of(input))._np
    arguments = (_mvlgamma_offsets(p, result) + input.astype(result)[..., None]).astype(result)
    values = _lgamma(arguments).astype(result)
    total = values.sum(-1, dtype=np.float32 if result in HALF_TYPES else result).astype(result)
    return np.asarray(total + result.type(p * (p - 1) * math.log(math.pi) * 0.25), result)
