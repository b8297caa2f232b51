"""Pointwise ops: unary math, binary arithmetic, comparisons, logical and bitwise ops.

Binary kernels accept an array or a Python scalar in either position (the
reflected operators pass the scalar first) and compute in PyTorch's promoted
dtype (``_common.operand_dtype``). Arithmetic on float16 and bfloat16 computes
in float32 and rounds once at the end, as PyTorch's CPU kernels do; math
functions (exp, sin, pow, atan2 ...) are evaluated in float64 and rounded to
the result dtype. Kernels that can meet overflow, division by zero or NaN
silence NumPy's floating-point warnings: PyTorch returns inf / NaN without a
word.

Each op's gradient formula sits just above it; ops with boolean or integer
results (comparisons, logical and bitwise ops) are ``differentiable=False``.
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import builtins
import cmath
import functools
import math
import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from ._common import (
    check_same_shape_or_broadcast,
    cpp_type_name,
    floating,
    no_complex_autograd,
    not_implemented,
    operand_dtype,
    overflow_type_name,
    public,
    quiet,
    scalar_type_name,
)
from ._common import (
    conjugate as _conj,
)
from ._registry import OWN, Dunder, Sample, TensorSpec, op

if TYPE_CHECKING:
    from numbers import Number

    from .._tensor import Tensor

_ND = np.ndarray

# Sample tensors for the table-driven tests.
_M23 = TensorSpec((2, 3))
_ROW = TensorSpec((3,))
_COLUMN = TensorSpec((2, 1))
_F64 = TensorSpec((2, 3), "float64")
_F16 = TensorSpec((3,), "float16")
_BF16 = TensorSpec((3,), "bfloat16")
_SCALAR = TensorSpec((), "float64")
_C64 = TensorSpec((3,), "complex64", -1.0, 1.0)
_I64 = TensorSpec((2, 3), "int64", -5, 5)
_I32 = TensorSpec((3,), "int32", -5, 5)
_U8 = TensorSpec((2, 3), "uint8", 0, 9)
_BOOL = TensorSpec((2, 3), "bool")
_POSITIVE = TensorSpec((2, 3), "float32", 0.1, 4.0)
_POSITIVE_I = TensorSpec((2, 3), "int64", 1, 9)
_UNIT = TensorSpec((2, 3), "float32", -0.9, 0.9)

# PyTorch's ScalarType names, used in its "not implemented for 'Long'" errors.
_HALF_TYPES = (dt.float16, dt.bfloat16)


# -- helpers ---------------------------------------------------------------------------------

def _dtype_of(array: np.ndarray) -> dt.dtype:
    return dt.NP_TO_DTYPE[array.dtype]


def _is_integral(d: dt.dtype) -> bool:
    """True for bool and the integer dtypes."""
    return not (d.is_floating_point or d.is_complex)


def _opmath(d: dt.dtype) -> dt.dtype:
    """The dtype PyTorch computes ``d`` in: float32 for float16 and bfloat16."""
    return dt.float32 if d in _HALF_TYPES else d


def _unsupported(kernel: str, d: dt.dtype, *operands) -> NotImplementedError:
    """``not_implemented`` for an op on ``operands``, after PyTorch's earlier shape check."""
    _raise_broadcast_error(*operands)
    return not_implemented(kernel, d)


def _invalid_arguments(name: str, *arguments) -> TypeError:
    got = ", ".join(type(a).__name__ if type(a) is not _ND else "Tensor" for a in arguments)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got})")


def _raise_broadcast_error(*operands) -> None:
    """Re-raise NumPy's broadcasting ValueError as PyTorch's RuntimeError (pairwise, left to right)."""
    shape = np.shape(operands[0])
    for other in operands[1:]:
        shape = check_same_shape_or_broadcast(shape, np.shape(other))


def _as(values, d: dt.dtype) -> np.ndarray:
    """``values`` (an array, NumPy scalar or Python scalar) as an ndarray of dtype ``d``."""
    return np.asarray(values, dtype=d._np)


# (lowest, highest, 2**bits) of each integer dtype, for wrapping Python ints cheaply.
_INT_RANGES = {d: (int(np.iinfo(d._np).min), int(np.iinfo(d._np).max), 2 ** (8 * d.itemsize))
               for d in (dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64)}
_FLOAT_MAX = {d: dt.finfo(d).max for d in (dt.float16, dt.bfloat16, dt.float32, dt.float64)}
_FLOAT_MAX[dt.complex64], _FLOAT_MAX[dt.complex128] = _FLOAT_MAX[dt.float32], _FLOAT_MAX[dt.float64]


def _in(x, d: dt.dtype, compute: dt.dtype | None = None):
    """An operand in the promoted dtype ``d``, widened to ``compute`` where the op computes
    in a wider dtype. Arrays are cast (through ``d``, so an int64 operand of a float16
    result overflows as in PyTorch); Python scalars stay weak, and Python ints wrap into
    an integer ``d`` as PyTorch's conversion does."""
    if type(x) is _ND:
        if x.dtype != d._np:
            x = x.astype(d._np)
        if compute is not None and compute is not d:
            x = x.astype(compute._np)
        return x
    if type(x) is int:
        bounds = _INT_RANGES.get(d)
        if bounds is not None and not bounds[0] <= x <= bounds[1]:
            return (x - bounds[0]) % bounds[2] + bounds[0]
    return x


def _wide(d: dt.dtype) -> dt.dtype:
    """float64 (complex128 for complex ``d``): where math functions are evaluated.

    NumPy's float32 loops for transcendental functions are often an ulp or two
    off (``log10(100) != 2``); the float64 result rounded to float32 is almost
    always the correctly rounded value, and agrees with PyTorch's far more often.
    """
    return dt.complex128 if d.is_complex else dt.float64


def _float_unary(ufunc, input: np.ndarray) -> np.ndarray:
    """``ufunc(input)`` for math functions: integers and bool give the default float dtype."""
    result = floating(_dtype_of(input))
    with quiet():
        return _as(ufunc(_in(input, result, _wide(result))), result)


def _rounding(ufunc, name: str, input: np.ndarray) -> np.ndarray:
    """``floor`` / ``ceil`` / ``trunc`` / ``round``: integers are returned unchanged (as a copy)."""
    d = _dtype_of(input)
    if d is dt.bool:
        raise not_implemented(f"{name}_vml_cpu", d)
    if d.is_complex:
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    if _is_integral(d):
        return input.copy()
    return _as(ufunc(input), d)


def _int_divisor_check(divisor) -> None:
    """Integer division by zero is an error in PyTorch (floats give inf / NaN)."""
    zero = divisor == 0
    if zero.any() if type(zero) is _ND else zero:
        raise RuntimeError("ZeroDivisionError")


def _both_scalars(a, b) -> bool:
    return type(a) is not _ND and type(b) is not _ND




def _check_representable(value, d: dt.dtype) -> None:
    """PyTorch refuses a Python number that overflows the dtype it is converted to (the
    ``alpha`` of add, the bounds of clamp ...), where plain arithmetic operands wrap."""
    if type(value) is _ND or type(value) is bool or d is dt.bool:
        return
    bounds = _INT_RANGES.get(d)
    if bounds is not None:
        # c10 lets negative numbers wrap into unsigned types (-255 converts to uint8).
        fits = (-bounds[1] if bounds[0] == 0 else bounds[0]) <= value <= bounds[1]
    elif type(value) is complex:
        fits = all(not math.isfinite(p) or builtins.abs(p) <= _FLOAT_MAX[d] for p in (value.real, value.imag))
    else:
        fits = not math.isfinite(value) or builtins.abs(value) <= _FLOAT_MAX[d]
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {overflow_type_name(d)} without overflow")


# -- gradient helpers: formulas run on Tensors, through public methods and operators ----------

def _is_tensor(x) -> bool:
    return x is not None and not isinstance(x, numbers.Number)


def _zeros_like(x):
    return x.new_zeros(tuple(x.shape))


def _step_grad(grad):
    """Piecewise-constant ops (floor, ceil, trunc, round, sign) have zero gradient."""
    return _zeros_like(grad)


def _log_of_number(x):
    """``log`` of a Python number base, NaN (or complex) for negative numbers as for tensors."""
    if isinstance(x, complex):
        return cmath.log(x)
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


# -- unary ops -------------------------------------------------------------------------------

def _neg_grad(grad):
    return -grad


@op(grad=_neg_grad, method=True, inplace=True, out=True, dunders=(Dunder("__neg__"),),
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_C64,)), Sample((_BF16,))))
def neg(input: Tensor) -> Tensor:
    """Returns a new tensor with the negative of the elements of ``input``.

    >>> import tensormodes as tm
    >>> (-tm.tensor([1, -2])).tolist()
    [-1, 2]
    """
    if input.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return np.negative(input)


def _positive_grad(grad):
    return grad


@op(grad=_positive_grad, method=True, view=True, dunders=(Dunder("__pos__"),),
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,))))
def positive(input: Tensor) -> Tensor:
    """Returns ``input`` (sharing its data); an error for bool tensors.

    >>> import tensormodes as tm
    >>> (+tm.tensor([1, -2])).tolist()
    [1, -2]
    """
    if input.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _abs_grad(grad, input):
    return grad * input.sgn()  # the sign; z / |z| for complex z


@op(grad=_abs_grad, method=True, inplace=True, out=True, dunders=(Dunder("__abs__"),),
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_C64,)), Sample((_F16,))))
def abs(input: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """Computes the absolute value of each element (the magnitude for complex inputs).

    >>> import tensormodes as tm
    >>> tm.abs(tm.tensor([-1, -2, 3])).tolist()
    [1, 2, 3]
    """
    d = _dtype_of(input)
    if d is dt.bool:
        raise not_implemented("abs_cpu", d)
    return np.absolute(input)


@op(grad=_step_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_BOOL,)), Sample((_SCALAR,)), Sample((_BF16,))))
def sign(input: Tensor) -> Tensor:
    """The sign of each element: -1, 0 or 1 in ``input``'s dtype (NaN gives 0).

    >>> import tensormodes as tm
    >>> tm.sign(tm.tensor([-2.5, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    d = _dtype_of(input)
    if d.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                                  "Please use torch.sgn instead.")
    if d is dt.bool:
        return input.copy()
    # (x > 0) - (x < 0) rather than np.sign: PyTorch maps NaN to 0.
    with quiet():
        return _as((input > 0).astype(d._np) - (input < 0).astype(d._np), d)


def _square_grad(grad, input):
    return grad * _conj(2 * input)


@op(grad=_square_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_BOOL,)), Sample((_SCALAR,)), Sample((_C64,))))
def square(input: Tensor) -> Tensor:
    """``input ** 2`` elementwise (bool inputs give int64, as for ``pow(input, 2)``).

    >>> import tensormodes as tm
    >>> tm.square(tm.tensor([-2, 3])).tolist()
    [4, 9]
    """
    base = input.astype(np.int64) if input.dtype.kind == "b" else input
    with quiet():
        return np.asarray(np.multiply(base, base))


def _exp_grad(grad, result):
    return grad * _conj(result)


@op(grad=_exp_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_BF16,)),
             Sample((_C64,))))
def exp(input: Tensor) -> Tensor:
    """The exponential of each element (integers compute in the default float dtype).

    >>> import tensormodes as tm
    >>> tm.exp(tm.tensor([0, 0])).tolist()
    [1.0, 1.0]
    """
    return _float_unary(np.exp, input)


def _exp2_grad(grad, result):
    return grad * _conj(result * math.log(2.0))


@op(grad=_exp2_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_C64,))))
def exp2(input: Tensor) -> Tensor:
    """``2 ** input`` elementwise.

    >>> import tensormodes as tm
    >>> tm.exp2(tm.tensor([0, 3])).tolist()
    [1.0, 8.0]
    """
    return _float_unary(np.exp2, input)


def _expm1_grad(grad, result):
    return grad * _conj(result + 1)


@op(grad=_expm1_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_BF16,)), Sample((_C64,))))
def expm1(input: Tensor) -> Tensor:
    """``exp(input) - 1``, accurate for small ``input``.

    >>> import tensormodes as tm
    >>> tm.expm1(tm.tensor([0.])).tolist()
    [0.0]
    """
    return _float_unary(np.expm1, input)


def _log_grad(grad, input):
    return grad / _conj(input)


@op(grad=_log_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((_SCALAR,)), Sample((_F16,)),
             Sample((_C64,))))
def log(input: Tensor) -> Tensor:
    """The natural logarithm of each element (NaN for negative, -inf for zero).

    >>> import tensormodes as tm
    >>> tm.log(tm.tensor([1.])).tolist()
    [0.0]
    """
    return _float_unary(np.log, input)


def _log2_grad(grad, input):
    return grad / _conj(input * math.log(2.0))


@op(grad=_log2_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((_SCALAR,)), Sample((_BF16,)),
             Sample((_C64,))))
def log2(input: Tensor) -> Tensor:
    """The base-2 logarithm of each element.

    >>> import tensormodes as tm
    >>> tm.log2(tm.tensor([1, 8])).tolist()
    [0.0, 3.0]
    """
    return _float_unary(np.log2, input)


def _log10_grad(grad, input):
    return grad / _conj(input * math.log(10.0))


@op(grad=_log10_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((_SCALAR,)), Sample((_F16,)),
             Sample((_C64,))))
def log10(input: Tensor) -> Tensor:
    """The base-10 logarithm of each element.

    >>> import tensormodes as tm
    >>> tm.log10(tm.tensor([1, 100])).tolist()
    [0.0, 2.0]
    """
    return _float_unary(np.log10, input)


def _log1p_grad(grad, input):
    return grad / _conj(input + 1)


@op(grad=_log1p_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((_SCALAR,)), Sample((_BF16,)),
             Sample((_C64,))))
def log1p(input: Tensor) -> Tensor:
    """``log(1 + input)``, accurate for small ``input``.

    >>> import tensormodes as tm
    >>> tm.log1p(tm.tensor([0.])).tolist()
    [0.0]
    """
    return _float_unary(np.log1p, input)


def _sqrt_grad(grad, result):
    return grad / _conj(2 * result)


@op(grad=_sqrt_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((_SCALAR,)), Sample((_F16,)),
             Sample((_BF16,)), Sample((_C64,))))
def sqrt(input: Tensor) -> Tensor:
    """The square root of each element (NaN for negative real inputs).

    >>> import tensormodes as tm
    >>> tm.sqrt(tm.tensor([4, 9])).tolist()
    [2.0, 3.0]
    """
    return _float_unary(np.sqrt, input)


def _reciprocal_sqrt(x):
    return np.reciprocal(np.sqrt(x))


def _rsqrt_grad(grad, result):
    return grad * _conj(-0.5 * result * result * result)


@op(grad=_rsqrt_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((_SCALAR,)), Sample((_F16,)),
             Sample((_C64,))))
def rsqrt(input: Tensor) -> Tensor:
    """The reciprocal of the square root of each element.

    >>> import tensormodes as tm
    >>> tm.rsqrt(tm.tensor([4.])).tolist()
    [0.5]
    """
    return _float_unary(_reciprocal_sqrt, input)


def _sin_grad(grad, input):
    return grad * _conj(input.cos())


@op(grad=_sin_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_C64,))))
def sin(input: Tensor) -> Tensor:
    """The sine of each element (in radians).

    >>> import tensormodes as tm
    >>> tm.sin(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.sin, input)


def _cos_grad(grad, input):
    return grad * _conj(-input.sin())


@op(grad=_cos_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_BF16,)), Sample((_C64,))))
def cos(input: Tensor) -> Tensor:
    """The cosine of each element (in radians).

    >>> import tensormodes as tm
    >>> tm.cos(tm.tensor([0])).tolist()
    [1.0]
    """
    return _float_unary(np.cos, input)


def _tan_grad(grad, result):
    return grad * _conj(1 + result * result)


@op(grad=_tan_grad, method=True, inplace=True, out=True,
    samples=(Sample((_UNIT,)), Sample((_I32,)), Sample((_SCALAR,)), Sample((TensorSpec((3,), "float16", -1, 1),)),
             Sample((_C64,))))
def tan(input: Tensor) -> Tensor:
    """The tangent of each element (in radians).

    >>> import tensormodes as tm
    >>> tm.tan(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.tan, input)


def _asin_grad(grad, input):
    return grad / _conj((1 - input * input).sqrt())


@op(grad=_asin_grad, method=True, inplace=True, out=True,
    samples=(Sample((_UNIT,)), Sample((TensorSpec((3,), "int64", -1, 1),)), Sample((_SCALAR,)),
             Sample((TensorSpec((3,), "float16", -0.9, 0.9),)), Sample((_C64,))))
def asin(input: Tensor) -> Tensor:
    """The arcsine of each element (NaN outside [-1, 1]).

    >>> import tensormodes as tm
    >>> tm.asin(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.arcsin, input)


def _acos_grad(grad, input):
    return -grad / _conj((1 - input * input).sqrt())


@op(grad=_acos_grad, method=True, inplace=True, out=True,
    samples=(Sample((_UNIT,)), Sample((TensorSpec((3,), "int64", -1, 1),)), Sample((_SCALAR,)),
             Sample((TensorSpec((3,), "bfloat16", -0.9, 0.9),)), Sample((_C64,))))
def acos(input: Tensor) -> Tensor:
    """The arccosine of each element (NaN outside [-1, 1]).

    >>> import tensormodes as tm
    >>> tm.acos(tm.tensor([1])).tolist()
    [0.0]
    """
    return _float_unary(np.arccos, input)


def _atan_grad(grad, input):
    return grad / _conj(1 + input * input)


@op(grad=_atan_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_C64,))))
def atan(input: Tensor) -> Tensor:
    """The arctangent of each element.

    >>> import tensormodes as tm
    >>> tm.atan(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.arctan, input)


def _sinh_grad(grad, input):
    return grad * _conj(input.cosh())


@op(grad=_sinh_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_BF16,)), Sample((_C64,))))
def sinh(input: Tensor) -> Tensor:
    """The hyperbolic sine of each element.

    >>> import tensormodes as tm
    >>> tm.sinh(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.sinh, input)


def _cosh_grad(grad, input):
    return grad * _conj(input.sinh())


@op(grad=_cosh_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_C64,))))
def cosh(input: Tensor) -> Tensor:
    """The hyperbolic cosine of each element.

    >>> import tensormodes as tm
    >>> tm.cosh(tm.tensor([0])).tolist()
    [1.0]
    """
    return _float_unary(np.cosh, input)


def _tanh_grad(grad, result):
    return grad * _conj(1 - result * result)


@op(grad=_tanh_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_BF16,)), Sample((_C64,))))
def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent of each element.

    >>> import tensormodes as tm
    >>> tm.tanh(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.tanh, input)


def _logistic(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        return np.reciprocal(1 + np.exp(-x))
    # exp of -|x| never overflows; the two branches are the same function.
    e = np.exp(-np.absolute(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _sigmoid_grad(grad, result):
    return grad * _conj(result * (1 - result))


@op(grad=_sigmoid_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -20, 20),)), Sample((_I64,)), Sample((_BOOL,)),
             Sample((_SCALAR,)), Sample((_F16,)), Sample((_C64,))))
def sigmoid(input: Tensor) -> Tensor:
    """The logistic function ``1 / (1 + exp(-input))`` of each element.

    >>> import tensormodes as tm
    >>> tm.sigmoid(tm.tensor([0])).tolist()
    [0.5]
    """
    return _float_unary(_logistic, input)


@functools.cache
def _erf_series() -> tuple[np.ndarray, np.ndarray]:
    """Chebyshev coefficients of ``erf(x) / x`` in ``x**2`` on [0, 4], and of the scaled
    complementary function ``erfc(x) * exp(x**2)`` on [2, 6].

    Fitted once, on first use, to the standard library's erf at 200 Chebyshev
    nodes; the fits are good to about 10 ulp in float64.
    """
    nodes = np.cos(np.pi * (np.arange(200) + 0.5) / 200)
    roots = np.sqrt(2 * (nodes + 1))
    inner = np.array([math.erf(r) for r in roots]) / roots
    tail_x = 4 + 2 * nodes
    tail = np.array([math.erfc(x) * math.exp(x * x) for x in tail_x])
    chebyshev = np.polynomial.chebyshev
    return chebyshev.chebfit(nodes, inner, 22), chebyshev.chebfit(nodes, tail, 36)


def _erf(x: np.ndarray) -> np.ndarray:
    """The error function, vectorised (NumPy has none), computed in float64."""
    inner, tail = _erf_series()
    chebval = np.polynomial.chebyshev.chebval
    magnitude = np.absolute(x.astype(np.float64))
    result = np.ones_like(magnitude)  # erf(x) rounds to 1 for x >= 6
    near = magnitude < 2
    s = magnitude[near] ** 2
    result[near] = magnitude[near] * chebval(s / 2 - 1, inner)
    middle = (magnitude >= 2) & (magnitude < 6)
    m = magnitude[middle]
    result[middle] = 1 - np.exp(-m * m) * chebval((m - 4) / 2, tail)
    result[np.isnan(magnitude)] = np.nan
    return np.copysign(result, x)


def _erf_grad(grad, input):
    return grad * (2 / math.sqrt(math.pi)) * (-(input * input)).exp()


@op(grad=_erf_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((_I64,)), Sample((_SCALAR,)),
             Sample((_F16,)), Sample((TensorSpec((4,), "float64", -8, 8),))))
def erf(input: Tensor) -> Tensor:
    """The error function of each element.

    >>> import tensormodes as tm
    >>> tm.erf(tm.tensor([0.0, 10.0, -10.0])).tolist()
    [0.0, 1.0, -1.0]
    """
    if input.dtype.kind == "c":
        raise not_implemented("erf_vml_cpu", _dtype_of(input))
    return _float_unary(_erf, input)


def _reciprocal_grad(grad, result):
    return grad * _conj(-(result * result))


@op(grad=_reciprocal_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_POSITIVE_I,)), Sample((_SCALAR,)), Sample((_BF16,)), Sample((_C64,))))
def reciprocal(input: Tensor) -> Tensor:
    """``1 / input`` elementwise (integers give the default float dtype).

    >>> import tensormodes as tm
    >>> tm.reciprocal(tm.tensor([2, 4])).tolist()
    [0.5, 0.25]
    """
    return _float_unary(np.reciprocal, input)


def _relu_grad(grad, result):
    return public("_threshold_backward")(grad, result, 0)


@op(grad=_relu_grad, method=True, inplace=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_BF16,))))
def relu(input: Tensor) -> Tensor:
    """``max(input, 0)`` elementwise.

    >>> import tensormodes as tm
    >>> tm.relu(tm.tensor([-1, 2])).tolist()
    [0, 2]
    """
    kind = input.dtype.kind
    if kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    return np.asarray(np.maximum(input, input.dtype.type(0)))


def _threshold_backward_grad(grad, input, threshold):
    # Linear in grad_output (a mask) and constant in input but at the threshold.
    return public("_threshold_backward")(grad, input, threshold), _zeros_like(input)


@op(grad=_threshold_backward_grad, samples=(
    Sample((_M23, _M23, 0)), Sample((_F64, _ROW, 0.5)), Sample((_M23, _I64, 1)), Sample((_SCALAR, _SCALAR, 0)),
    Sample((_BF16, _BF16, 0)), Sample((_F16, TensorSpec((3,)), -0.5))))
def _threshold_backward(grad_output: Tensor, input: Tensor, threshold: Number) -> Tensor:
    """``grad_output`` where ``input > threshold``, else 0 (also where ``input`` is NaN): the
    gradient of ``relu`` (given its result) and of ``threshold`` (PyTorch's
    ``aten::threshold_backward``). Broadcasts; the result has the operands' promoted dtype.

    >>> import tensormodes as tm
    >>> tm._threshold_backward(tm.tensor([1., 2., 3.]), tm.tensor([-1., 0., 4.]), 0)
    tensor([0., 0., 3.])
    """
    if grad_output.shape != input.shape:
        check_same_shape_or_broadcast(input.shape, grad_output.shape)  # PyTorch names input "a"
    result_type = grad_output.dtype if grad_output.dtype == input.dtype else operand_dtype(grad_output, input)._np
    if result_type.kind in "bc":
        raise not_implemented("threshold_cpu", dt.NP_TO_DTYPE[result_type])
    result = np.where(input <= threshold, 0, grad_output)
    return np.asarray(result if result.dtype == result_type else result.astype(result_type))


@op(grad=_step_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,))))
def floor(input: Tensor) -> Tensor:
    """The largest integer not greater than each element (integer tensors are copied).

    >>> import tensormodes as tm
    >>> tm.floor(tm.tensor([-1.5, 1.5])).tolist()
    [-2.0, 1.0]
    """
    return _rounding(np.floor, "floor", input)


@op(grad=_step_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_BF16,))))
def ceil(input: Tensor) -> Tensor:
    """The smallest integer not less than each element (integer tensors are copied).

    >>> import tensormodes as tm
    >>> tm.ceil(tm.tensor([-1.5, 1.5])).tolist()
    [-1.0, 2.0]
    """
    return _rounding(np.ceil, "ceil", input)


@op(grad=_step_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,))))
def trunc(input: Tensor) -> Tensor:
    """Each element rounded toward zero (integer tensors are copied).

    >>> import tensormodes as tm
    >>> tm.trunc(tm.tensor([-1.5, 1.5])).tolist()
    [-1.0, 1.0]
    """
    return _rounding(np.trunc, "trunc", input)


@op(grad=_step_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -100, 100),)), Sample((_I64,)), Sample((_SCALAR,)),
             Sample((_M23,), {"decimals": 2}), Sample((TensorSpec((4,), "float64", -1e4, 1e4),), {"decimals": -2}),
             Sample((_F16,), {"decimals": 1}), Sample((_BF16,))))
def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Rounds each element to ``decimals`` decimal places, halves to even.

    >>> import tensormodes as tm
    >>> tm.round(tm.tensor([0.5, 1.5, 2.5])).tolist()
    [0.0, 2.0, 2.0]
    >>> tm.round(tm.tensor([1234.0]), decimals=-2).tolist()
    [1200.0]
    """
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    d = _dtype_of(input)
    if decimals == 0:
        if d.is_complex:
            raise not_implemented("round_vml_cpu", d)
        return _rounding(np.rint, "round", input)
    if _is_integral(d) or d.is_complex:
        raise not_implemented("round_cpu", d)
    compute = _opmath(d)._np
    x = input.astype(compute, copy=False)
    scale = compute.type(10.0 ** builtins.abs(decimals))
    with quiet():
        if decimals > 0:
            return _as(np.rint(x * scale) / scale, d)
        return _as(np.rint(x / scale) * scale, d)


def _frac_grad(grad):
    return grad


@op(grad=_frac_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -5, 5),)), Sample((_SCALAR,)), Sample((_F16,))))
def frac(input: Tensor) -> Tensor:
    """The fractional part of each element, ``input - trunc(input)``.

    >>> import tensormodes as tm
    >>> tm.frac(tm.tensor([1.5, -2.25])).tolist()
    [0.5, -0.25]
    """
    d = _dtype_of(input)
    if not d.is_floating_point:
        raise not_implemented("frac_cpu", d)
    with quiet():
        return _as(input - np.trunc(input), d)


def _nan_to_num_grad(grad, input):
    return grad.where(input.isfinite(), 0)


@op(grad=_nan_to_num_grad, differentiable=no_complex_autograd("nan_to_num"), method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)),
             Sample((_M23, 1.0, 2.0, -2.0)), Sample((_BF16,), {"posinf": 1.0})))
def nan_to_num(input: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """Replaces NaN with ``nan``, and infinities with ``posinf`` / ``neginf`` (by default the
    largest / lowest finite value of the dtype). Integer tensors are copied.

    >>> import tensormodes as tm
    >>> from math import inf, nan
    >>> tm.nan_to_num(tm.tensor([nan, inf, 1.0]), posinf=9.0).tolist()
    [0.0, 9.0, 1.0]
    """
    d = _dtype_of(input)
    if _is_integral(d):
        return input.copy()
    if d.is_complex:
        result = np.empty_like(input)
        result.real = nan_to_num(input.real, nan, posinf, neginf)
        result.imag = nan_to_num(input.imag, nan, posinf, neginf)
        return result
    largest = dt.finfo(d).max
    result = input.copy()
    with quiet():
        result[np.isnan(input)] = 0.0 if nan is None else nan
        result[input == np.inf] = largest if posinf is None else posinf
        result[input == -np.inf] = -largest if neginf is None else neginf
    return result


def _no_special_values(input: np.ndarray, fill: bool) -> np.ndarray | None:
    """For integer and bool tensors (which hold no NaN or inf): a constant mask."""
    if input.dtype.kind in "biu":
        return np.full(input.shape, fill)
    return None


@op(differentiable=False, method=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_C64,)), Sample((_BF16,))))
def isnan(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is NaN.

    >>> import tensormodes as tm
    >>> from math import nan
    >>> tm.isnan(tm.tensor([1.0, nan])).tolist()
    [False, True]
    """
    mask = _no_special_values(input, False)
    return np.asarray(np.isnan(input)) if mask is None else mask


@op(differentiable=False, method=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_C64,)), Sample((_F16,))))
def isinf(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is positive or negative infinity.

    >>> import tensormodes as tm
    >>> from math import inf
    >>> tm.isinf(tm.tensor([1.0, -inf])).tolist()
    [False, True]
    """
    mask = _no_special_values(input, False)
    return np.asarray(np.isinf(input)) if mask is None else mask


@op(differentiable=False, method=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_C64,)), Sample((_BOOL,))))
def isfinite(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is neither infinite nor NaN.

    >>> import tensormodes as tm
    >>> from math import inf, nan
    >>> tm.isfinite(tm.tensor([1.0, inf, nan])).tolist()
    [True, False, False]
    """
    mask = _no_special_values(input, True)
    return np.asarray(np.isfinite(input)) if mask is None else mask


def _truth(x):
    """``x != 0`` as a bool array (or Python bool): the truth value logical ops use."""
    if type(x) is _ND:
        return x if x.dtype.kind == "b" else x != 0
    return bool(x)


@op(differentiable=False, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_BOOL,)), Sample((_SCALAR,)), Sample((_C64,))))
def logical_not(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is zero.

    >>> import tensormodes as tm
    >>> tm.logical_not(tm.tensor([0, 3])).tolist()
    [True, False]
    """
    return np.asarray(np.logical_not(_truth(input)))


@op(differentiable=False, method=True, inplace=True, out=True, dunders=(Dunder("__invert__", OWN),),
    samples=(Sample((_I64,)), Sample((_BOOL,)), Sample((_U8,)), Sample((TensorSpec((), "int32"),))))
def bitwise_not(input: Tensor) -> Tensor:
    """The bitwise NOT of an integer or bool tensor (logical NOT for bool).

    >>> import tensormodes as tm
    >>> (~tm.tensor([0, 5])).tolist(), (~tm.tensor([True, False])).tolist()
    ([-1, -6], [False, True])
    """
    d = _dtype_of(input)
    if not _is_integral(d):
        raise not_implemented("bitwise_not_cpu", d)
    return np.invert(input)


# -- complex numbers -------------------------------------------------------------------------
# tensormodes has no lazy conjugate or negative bits: conj() of a complex tensor is a copy.

_C128 = TensorSpec((2, 3), "complex128", -1.0, 1.0)


def _identity_grad(grad):
    return grad  # for real(): a real gradient, which the engine casts to the complex input's dtype


@op(grad=_identity_grad, method=False, view=True,
    samples=(Sample((_C64,)), Sample((_C128,)), Sample((_M23,)), Sample((_I64,))))
def real(input: Tensor) -> Tensor:
    """The real part of a complex tensor, as a view (``input`` itself if it is real); also
    the property ``x.real``.

    >>> import tensormodes as tm
    >>> tm.real(tm.tensor([1 + 2j, 3 - 1j]))
    tensor([1., 3.])
    """
    return input.real if input.dtype.kind == "c" else input


def _imag_grad(grad):
    return grad * 1j


@op(grad=_imag_grad, method=False, view=True, samples=(Sample((_C64,)), Sample((_C128,))))
def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, as a view; also the property ``x.imag``.

    >>> import tensormodes as tm
    >>> tm.imag(tm.tensor([1 + 2j, 3 - 1j]))
    tensor([ 2., -1.])
    """
    if input.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return input.imag


def _conj_grad(grad):
    return grad.conj()


@op(grad=_conj_grad, method=True, view=True, samples=(Sample((_C64,)), Sample((_C128,)), Sample((_M23,))))
def conj(input: Tensor) -> Tensor:
    """The complex conjugate: ``input`` itself for real tensors, a new tensor for complex ones
    (PyTorch returns a lazily conjugated view; tensormodes copies, so writes to the result do
    not reach ``input``, and ``is_conj()`` is always False).

    >>> import tensormodes as tm
    >>> tm.conj(tm.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return np.conjugate(input) if input.dtype.kind == "c" else input


def _conj_physical_grad(grad):
    return grad.conj_physical()


@op(grad=_conj_physical_grad, method=True, view=True,
    samples=(Sample((_C64,)), Sample((_C128,)), Sample((_M23,)), Sample((_BOOL,))))
def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (a new tensor; ``input`` itself for real tensors).

    >>> import tensormodes as tm
    >>> tm.conj_physical(tm.tensor([1 - 1j]))
    tensor([1.+1.j])
    """
    return np.conjugate(input) if input.dtype.kind == "c" else input


@op(grad=_identity_grad, method=True, view=True, samples=(Sample((_C64,)), Sample((_M23,))))
def resolve_conj(input: Tensor) -> Tensor:
    """``input`` itself: tensormodes never defers a conjugation (see ``conj``).

    >>> import tensormodes as tm
    >>> x = tm.tensor([1j]); x.resolve_conj() is x
    True
    """
    return input


@op(grad=_identity_grad, method=True, view=True, samples=(Sample((_C64,)), Sample((_M23,))))
def resolve_neg(input: Tensor) -> Tensor:
    """``input`` itself: tensormodes never defers a negation.

    >>> import tensormodes as tm
    >>> x = tm.tensor([1.0]); x.resolve_neg() is x
    True
    """
    return input


def _angle_grad(grad, input):
    if not input.dtype.is_complex:
        return _zeros_like(grad)
    # d angle = (x dy - y dx) / |z|^2, so the gradient is grad * 1j * z / |z|^2 (0 at 0, as in PyTorch).
    return (grad * input * 1j / (input * input.conj()).real).where(input != 0, 0)


@op(grad=_angle_grad, method=True, out=True,
    samples=(Sample((_C64,)), Sample((_C128,)), Sample((_M23,)), Sample((_I64,)), Sample((_F16,)),
             Sample((_BOOL,))))
def angle(input: Tensor) -> Tensor:
    """The argument (phase) of each element, in radians: ``atan2(imag, real)`` for complex
    tensors (a real result), pi for negative real numbers and 0 otherwise (NaN stays NaN).
    Integers give the default float dtype.

    >>> import tensormodes as tm
    >>> tm.angle(tm.tensor([1j, -1.0 + 0j]))
    tensor([1.5708, 3.1416])
    """
    d = _dtype_of(input)
    if d.is_complex:
        return np.angle(input)
    result_type = floating(d)._np
    result = np.where(input < 0, np.pi, 0.0).astype(result_type, copy=False)
    if d.is_floating_point:
        result[np.isnan(input)] = np.nan
    return result


def _sgn_grad(grad, input, result):
    if not input.dtype.is_complex:
        return _zeros_like(grad)
    # Only the direction moves: the component of grad along the result itself is dropped.
    magnitude = input.abs()
    return ((grad - result * (grad * result.conj()).real) / magnitude).where(magnitude != 0, 0)


@op(grad=_sgn_grad, method=True, inplace=True, out=True,
    samples=(Sample((_C64,)), Sample((_C128,)), Sample((_M23,)), Sample((_I64,)), Sample((_BOOL,))))
def sgn(input: Tensor) -> Tensor:
    """``input / abs(input)`` for complex tensors (0 at 0), the sign (``sign``) for real ones.

    >>> import tensormodes as tm
    >>> tm.sgn(tm.tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    d = _dtype_of(input)
    if not d.is_complex:
        return input.copy() if d is dt.bool else np.asarray((input > 0).astype(d._np) - (input < 0).astype(d._np))
    magnitude = np.absolute(input)
    with quiet():
        return np.where(magnitude == 0, 0, input / magnitude).astype(input.dtype, copy=False)


def _complex_parts_type(name: str, first: np.ndarray, second: np.ndarray) -> np.dtype:
    """The complex dtype ``complex`` / ``polar`` make from float parts of one dtype (PyTorch's checks)."""
    if first.dtype.kind != "f" or second.dtype.kind != "f" or dt.bfloat16._np in (first.dtype, second.dtype):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(_dtype_of(first))} and {scalar_type_name(_dtype_of(second))}")
    if first.dtype != second.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(_dtype_of(first))} but got scalar "
                           f"type {scalar_type_name(_dtype_of(second))} for second argument")
    if first.dtype == np.float16:
        raise NotImplementedError(f"{name}(): float16 parts make a complex32 (ComplexHalf) tensor, which "
                                  "tensormodes does not have")
    return np.result_type(first.dtype, np.complex64)


def _complex_grad(grad):
    # The real part's gradient is grad's real part, the imaginary part's its imaginary part
    # (the engine keeps the real part of grad and of -1j * grad).
    return grad, grad * -1j


@op(name="complex", grad=_complex_grad, out=True, samples=(
    Sample((_M23, _M23)), Sample((_F64, TensorSpec((3,), "float64"))), Sample((_SCALAR, _SCALAR))))
def _complex(real: Tensor, imag: Tensor) -> Tensor:  # the op "complex": a def would hide the builtin here
    """The complex tensor ``real + 1j * imag`` (float32 parts give complex64, float64 parts
    complex128; the parts broadcast).

    >>> import tensormodes as tm
    >>> tm.complex(tm.tensor([1.0]), tm.tensor([2.0]))
    tensor([1.+2.j])
    """
    result_type = _complex_parts_type("complex", real, imag)
    result = np.empty(np.broadcast_shapes(real.shape, imag.shape), result_type)
    result.real, result.imag = real, imag
    return result


def _polar_grad(grad, result):
    # d result / d abs = exp(1j * angle) = sgn(result) and d result / d angle = 1j * result: the real
    # inputs' gradients are the real parts of grad times their conjugates (kept by the engine). As in
    # PyTorch, only the result is saved (so abs's gradient is 0 where abs is 0).
    return grad * result.sgn().conj(), grad * (result * 1j).conj()


@op(grad=_polar_grad, out=True, samples=(
    Sample((_POSITIVE, _M23)), Sample((TensorSpec((3,), "float64", 0.1, 3), TensorSpec((2, 3), "float64"))),
    Sample((TensorSpec((), "float64", 0.5, 2), _SCALAR))))
def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - PyTorch's parameter names
    """The complex tensor with magnitudes ``abs`` and phases ``angle``: ``abs * (cos(angle) +
    1j * sin(angle))`` (float32 parts give complex64, float64 parts complex128).

    >>> import tensormodes as tm
    >>> tm.polar(tm.tensor([2.0]), tm.tensor([0.0]))
    tensor([2.+0.j])
    """
    result_type = _complex_parts_type("polar", abs, angle)
    result = np.empty(np.broadcast_shapes(abs.shape, angle.shape), result_type)
    result.real, result.imag = abs * np.cos(angle), abs * np.sin(angle)
    return result


# -- clamping --------------------------------------------------------------------------------

def _clamp(name: str, input: np.ndarray, low, high) -> np.ndarray:
    """``min(max(input, low), high)``; the bounds are both tensors-or-None or both
    numbers-or-None, as PyTorch's two overloads require."""
    if low is None and high is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (low, high) if b is not None]
    tensors = [type(b) is _ND for b in bounds]
    if any(tensors) and not all(tensors):
        raise _invalid_arguments(name, input, *bounds)
    d = operand_dtype(input, *bounds)
    if input.dtype.kind == "c" and (name == "clamp" or not any(tensors)):
        raise NotImplementedError("clamp is not supported for complex types")
    if any(tensors) and (d.is_complex or d is dt.bool and len(bounds) == 2):
        raise _unsupported("clamp_cpu" if len(bounds) == 2 else "maximum_cpu" if high is None else "minimum_cpu",
                           d, input, *bounds)
    if d.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if not any(tensors):
        if d is dt.bool:
            kernel = "clamp_scalar_cpu" if len(bounds) == 2 else "clamp_min_scalar_cpu" if high is None \
                else "clamp_max_scalar_cpu"
            raise not_implemented(kernel, d)
        for bound in bounds:
            _check_representable(bound, d)
    with quiet():
        result = _in(input, d)
        try:
            if low is not None:
                result = np.maximum(result, _in(low, d))
            if high is not None:
                result = np.minimum(result, _in(high, d))
        except ValueError:
            _raise_broadcast_error(input, *bounds)
            raise
        return _as(result, d)


_CLAMP_SAMPLES = (
    Sample((_M23, -0.5, 0.5)), Sample((_M23,), {"min": 0.0}), Sample((_M23,), {"max": 0.5}),
    Sample((_I64, 0.5)), Sample((_I64, -2, 2)), Sample((_M23, _ROW, _COLUMN)),
    Sample((_M23,), {"max": _ROW}), Sample((_SCALAR, 0.0, 1.0)), Sample((_F16, -1.0, 1.0)),
    Sample((_BOOL, _BOOL)), Sample((_BOOL, 0, 1)),
)


def _clamp_grad(grad, input, min, max):  # noqa: A002 - the op's parameter names
    """Gradient flows to whichever of ``input``, ``min`` and ``max`` the result came from
    (to ``max`` where ``min > max``, as the result does)."""
    at_least_min = None if min is None else input >= min
    at_most_max = None if max is None else input <= max
    if at_least_min is None:
        inside = at_most_max
    elif at_most_max is None:
        inside = at_least_min
    else:
        inside = at_least_min & at_most_max
    input_grad = grad.where(inside, 0)
    if not _is_tensor(min) and not _is_tensor(max):
        return input_grad, None, None
    min_grad = max_grad = None
    if min is not None:
        below = input < min
        min_grad = grad.where(below if max is None else below & (min < max), 0)
    if max is not None:
        above = input > max
        max_grad = grad.where(above if min is None else above | (max < min), 0)
    return input_grad, min_grad, max_grad


@op(grad=_clamp_grad, method=True, inplace=True, out=True, samples=_CLAMP_SAMPLES)
def clamp(input: Tensor, min: Tensor | Number | None = None,  # noqa: A002 - PyTorch's names
          max: Tensor | Number | None = None) -> Tensor:  # noqa: A002
    """Clamps each element into ``[min, max]`` (either bound may be omitted; bounds are
    both numbers or both tensors, which broadcast). Where ``min > max`` the result is ``max``.

    >>> import tensormodes as tm
    >>> tm.clamp(tm.tensor([-2, 0, 2]), min=-1, max=1).tolist()
    [-1, 0, 1]
    >>> tm.tensor([0.5, 3.0]).clamp(max=1).tolist()
    [0.5, 1.0]
    """
    return _clamp("clamp", input, min, max)


@op(grad=_clamp_grad, method=True, inplace=True, out=True, samples=_CLAMP_SAMPLES[:6])
def clip(input: Tensor, min: Tensor | Number | None = None,  # noqa: A002 - PyTorch's names
         max: Tensor | Number | None = None) -> Tensor:  # noqa: A002
    """Alias for ``clamp``.

    >>> import tensormodes as tm
    >>> tm.clip(tm.tensor([-2, 0, 2]), -1, 1).tolist()
    [-1, 0, 1]
    """
    return _clamp("clamp", input, min, max)


def _clamp_min_grad(grad, input, min):  # noqa: A002 - the op's parameter name
    return _clamp_grad(grad, input, min, None)[:2]


@op(grad=_clamp_min_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23, 0.0)), Sample((_I64, 0.5)), Sample((_M23, _ROW)), Sample((_SCALAR, 0))))
def clamp_min(input: Tensor, min: Tensor | Number) -> Tensor:  # noqa: A002 - PyTorch's name
    """``max(input, min)`` elementwise.

    >>> import tensormodes as tm
    >>> tm.clamp_min(tm.tensor([-2, 2]), 0).tolist()
    [0, 2]
    """
    return _clamp("clamp_min", input, min, None)


def _clamp_max_grad(grad, input, max):  # noqa: A002 - the op's parameter name
    input_grad, _, max_grad = _clamp_grad(grad, input, None, max)
    return input_grad, max_grad


@op(grad=_clamp_max_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23, 0.0)), Sample((_I64, 0.5)), Sample((_M23, _ROW)), Sample((_SCALAR, 0))))
def clamp_max(input: Tensor, max: Tensor | Number) -> Tensor:  # noqa: A002 - PyTorch's name
    """``min(input, max)`` elementwise.

    >>> import tensormodes as tm
    >>> tm.clamp_max(tm.tensor([-2, 2]), 0).tolist()
    [-2, 0]
    """
    return _clamp("clamp_max", input, None, max)


# -- arithmetic ------------------------------------------------------------------------------

def _check_alpha(alpha, d: dt.dtype, name: str = "alpha") -> None:
    """PyTorch's rules for the ``alpha`` multiplier of add / sub."""
    if type(alpha) is bool and d is not dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and _is_integral(d):
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    if isinstance(alpha, complex) and not d.is_complex:
        raise RuntimeError(f"For non-complex input tensors, argument {name} must not be a complex number.")


# Arrays of one of these dtypes add, subtract and multiply exactly as PyTorch does
# with NumPy's own ufunc: no promotion, no opmath detour, no warnings to silence
# that PyTorch would not give. The subclass and autograd paths run kernels, so
# this shortcut keeps them cheap.
_DIRECT = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int64, np.int32, np.int16, np.int8, np.uint8))


def _add_scaled(input, other, alpha, sign: int) -> np.ndarray:
    """``input + sign * alpha * other`` in the promoted dtype (half types through float32)."""
    if type(other) is _ND and type(input) is _ND and input.dtype is other.dtype and input.dtype in _DIRECT \
            and type(alpha) is int and alpha == 1:
        try:
            return (np.add if sign > 0 else np.subtract)(input, other)
        except ValueError:
            pass  # the general path below raises PyTorch's broadcast error
    d = operand_dtype(input, other)
    plain = type(alpha) is int and alpha == 1
    if not plain:
        _check_alpha(alpha, d)
        _check_representable(alpha, d)
    compute = _opmath(d) if not plain else d
    with quiet():
        a, b = _in(input, d, compute), _in(other, d, compute)
        try:
            if not plain:
                b = np.multiply(b, _in(alpha, compute) if compute is not dt.bool else bool(alpha))
                if compute is dt.bool:
                    b = b.astype(np.bool_)
            result = np.add(a, b) if sign > 0 else np.subtract(a, b)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise
        return _as(result, d)


def _check_subtraction(input, other) -> None:
    def is_bool(x):
        return x.dtype.kind == "b" if type(x) is _ND else type(x) is bool

    if is_bool(input) and is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if is_bool(input) or is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _add_grad(grad, alpha):
    return grad, grad * _conj(alpha)


@op(grad=_add_grad, method=True, inplace=True, out=True, ufunc=np.add,
    dunders=(Dunder("__add__"), Dunder("__radd__"), Dunder("__iadd__", inplace=True)),
    samples=(Sample((_M23, _M23)), Sample((_M23, 2.5), {"alpha": 2}), Sample((_I64, _ROW)),
             Sample((_I64, _I32), {"alpha": -3}), Sample((_BOOL, _BOOL)), Sample((_U8, 300)),
             Sample((_F16, _SCALAR)), Sample((_BF16, _F16), {"alpha": 0.5}), Sample((_C64, 1j)),
             Sample((_SCALAR, 3))))
def add(input: Tensor | Number, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """Adds ``other``, scaled by ``alpha``, to ``input``.

    >>> import tensormodes as tm
    >>> tm.add(tm.tensor([1, 2]), 10).tolist()
    [11, 12]
    >>> (tm.tensor([1., 2.]) + tm.tensor([0.5, 0.5])).tolist()
    [1.5, 2.5]
    >>> tm.add(tm.tensor([1, 2]), tm.tensor([1, 1]), alpha=10).tolist()
    [11, 12]
    """
    return _add_scaled(input, other, alpha, 1)


def _sub_grad(grad, alpha):
    return grad, -grad * _conj(alpha)


@op(grad=_sub_grad, method=True, inplace=True, out=True, ufunc=np.subtract,
    dunders=(Dunder("__sub__"), Dunder("__rsub__", OWN, reflected=True), Dunder("__isub__", inplace=True)),
    samples=(Sample((_M23, _M23)), Sample((_M23, 1), {"alpha": 3}), Sample((_I64, _ROW)),
             Sample((_U8, _U8)), Sample((_F16, 0.25), {"alpha": 2}), Sample((_SCALAR, _M23)), Sample((_C64, _ROW))))
def sub(input: Tensor | Number, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """Subtracts ``other``, scaled by ``alpha``, from ``input``.

    >>> import tensormodes as tm
    >>> tm.sub(tm.tensor([5, 6]), 1, alpha=2).tolist()
    [3, 4]
    >>> (10 - tm.tensor([1, 2])).tolist()
    [9, 8]
    """
    _check_subtraction(input, other)
    return _add_scaled(input, other, alpha, -1)


def _rsub_grad(grad, alpha):
    return -grad * _conj(alpha), grad


@op(grad=_rsub_grad,
    samples=(Sample((_M23, _M23)), Sample((_M23, 2)), Sample((_I64, 5), {"alpha": 2}), Sample((_SCALAR, _ROW))))
def rsub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """``other - alpha * input``: subtraction with the operands reversed.

    >>> import tensormodes as tm
    >>> tm.rsub(tm.tensor([1, 2]), 10).tolist()
    [9, 8]
    """
    _check_subtraction(input, other)
    return _add_scaled(other, input, alpha, -1)


def _mul_grad(grad, input, other, needs_input_grad):
    # Each operand is saved only for the other's gradient (save_only_for), as by MulBackward0.
    return (grad * _conj(other) if needs_input_grad[0] else None,
            grad * _conj(input) if needs_input_grad[1] else None)


@op(grad=_mul_grad, save_only_for={"input": "other", "other": "input"},
    method=True, inplace=True, out=True, ufunc=np.multiply,
    dunders=(Dunder("__mul__"), Dunder("__rmul__"), Dunder("__imul__", inplace=True)),
    samples=(Sample((_M23, _M23)), Sample((_M23, -2)), Sample((_I64, _ROW)), Sample((_BOOL, _BOOL)),
             Sample((_BOOL, 3)), Sample((_U8, 40)), Sample((_F16, _BF16)), Sample((_C64, 2.5)),
             Sample((_SCALAR, _I32))))
def mul(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Multiplies ``input`` by ``other`` elementwise.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2]) * 3).tolist()
    [3, 6]
    """
    if type(other) is _ND and type(input) is _ND and input.dtype is other.dtype and input.dtype in _DIRECT:
        try:
            return np.multiply(input, other)
        except ValueError:
            pass  # the general path below raises PyTorch's broadcast error
    d = operand_dtype(input, other)
    with quiet():
        try:
            return _as(np.multiply(_in(input, d), _in(other, d)), d)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


def _true_divide(input, other) -> np.ndarray:
    if type(input) is _ND and type(other) is _ND and input.dtype == other.dtype and input.dtype in _PLAIN_FLOATS:
        # Two float32 (or float64) arrays: the result dtype needs no working out.
        with quiet():
            try:
                return np.asarray(np.true_divide(input, other))
            except ValueError:
                _raise_broadcast_error(input, other)
                raise
    d = floating(operand_dtype(input, other))
    with quiet():
        try:
            return _as(np.true_divide(_in(input, d), _in(other, d)), d)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


def _integer_or_float_division(input, other, integer_kernel, float_kernel, kernel_name: str) -> np.ndarray:
    """Division-like ops keeping the promoted dtype: integers (checked for zero divisors)
    or floats (half types through float32); bool and complex are not implemented."""
    d = operand_dtype(input, other)
    if d is dt.bool or d.is_complex:
        raise _unsupported(kernel_name, d, input, other)
    compute = _opmath(d)
    with quiet():
        a, b = _in(input, d, compute), _in(other, d, compute)
        try:
            result = np.asarray((float_kernel if d.is_floating_point else integer_kernel)(a, b))
        except ValueError:
            _raise_broadcast_error(input, other)
            raise
    if not d.is_floating_point and result.size:
        _int_divisor_check(b)  # after the kernel has checked the shapes; only divisors in use count
    return _as(result, d)


def _truncating_division(a, b):
    # a - fmod(a, b) is an exact multiple of b, so the floor division is exact.
    return np.floor_divide(np.subtract(a, np.fmod(a, b)), b)


def _float_truncating_division(a, b):
    return np.trunc(np.true_divide(a, b))


def _floor_division(input, other) -> np.ndarray:
    return _integer_or_float_division(input, other, np.floor_divide, np.floor_divide, "div_floor_cpu")


_DIVISORS = TensorSpec((3,), "float32", 0.5, 3.0)


def _div_grad(grad, input, other, needs_input_grad, rounding_mode=None):
    # ``input`` is saved only for ``other``'s gradient (save_only_for), as by DivBackward0.
    if rounding_mode is not None:  # rounded quotients are piecewise constant
        return (_zeros_like(grad) if needs_input_grad[0] else None,
                _zeros_like(grad) if needs_input_grad[1] else None)
    return (grad / _conj(other) if needs_input_grad[0] else None,
            -grad * _conj(input / (other * other)) if needs_input_grad[1] else None)


@op(grad=_div_grad, save_only_for={"input": "other"}, method=True, inplace=True, out=True,
    dunders=(Dunder("__truediv__"), Dunder("__rtruediv__", OWN, reflected=True),
             Dunder("__itruediv__", inplace=True)),
    samples=(Sample((_M23, _DIVISORS)), Sample((_I64, _POSITIVE_I)), Sample((_I64, 2)), Sample((_M23, 0.5)),
             Sample((_BOOL, _POSITIVE_I)), Sample((_F16, _DIVISORS)), Sample((_C64, _C64)),
             Sample((_M23, _DIVISORS), {"rounding_mode": "trunc"}),
             Sample((_M23, _DIVISORS), {"rounding_mode": "floor"}),
             Sample((_I64, _POSITIVE_I), {"rounding_mode": "trunc"}),
             Sample((_I64, TensorSpec((3,), "int64", -3, -1)), {"rounding_mode": "floor"}),
             Sample((_BF16, 0.3), {"rounding_mode": "floor"}), Sample((3, _DIVISORS))))
def div(input: Tensor | Number, other: Tensor | Number, *, rounding_mode: str | None = None) -> Tensor:
    """Divides ``input`` by ``other``. ``rounding_mode=None`` is true division (integers give
    the default float dtype); ``'trunc'`` rounds toward zero and ``'floor'`` down, keeping
    the promoted dtype (integer division by zero raises).

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 3]) / 2).tolist()
    [0.5, 1.5]
    >>> tm.div(tm.tensor([-7, 7]), 2, rounding_mode="trunc").tolist()
    [-3, 3]
    >>> tm.div(tm.tensor([-7, 7]), 2, rounding_mode="floor").tolist()
    [-4, 3]
    """
    if rounding_mode is None:
        return _true_divide(input, other)
    if rounding_mode == "trunc":
        return _integer_or_float_division(input, other, _truncating_division, _float_truncating_division,
                                          "div_trunc_cpu")
    if rounding_mode == "floor":
        return _floor_division(input, other)
    if not isinstance(rounding_mode, str):
        raise TypeError(f"div(): argument 'rounding_mode' must be str, not {type(rounding_mode).__name__}")
    raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


def _true_divide_grad(grad, input, other, needs_input_grad):
    return _div_grad(grad, input, other, needs_input_grad)


@op(grad=_true_divide_grad, save_only_for={"input": "other"}, method=True, inplace=True, out=True,
    samples=(Sample((_M23, _DIVISORS)), Sample((_I64, _POSITIVE_I)), Sample((_I64, 4)), Sample((_SCALAR, _F16))))
def true_divide(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Alias for ``div`` with ``rounding_mode=None``.

    >>> import tensormodes as tm
    >>> tm.true_divide(tm.tensor([1, 3]), 2).tolist()
    [0.5, 1.5]
    """
    return _true_divide(input, other)


@op(differentiable=False, method=True, inplace=True, out=True,
    dunders=(Dunder("__floordiv__", OWN), Dunder("__rfloordiv__", OWN, reflected=True),
             Dunder("__ifloordiv__", inplace=True)),
    samples=(Sample((_M23, _DIVISORS)), Sample((_I64, _POSITIVE_I)), Sample((_I64, -3)), Sample((_U8, 4)),
             Sample((_F16, 0.75)), Sample((_SCALAR, _M23)), Sample((7, _POSITIVE_I))))
def floor_divide(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Divides and rounds down (``//``), keeping the promoted dtype.

    >>> import tensormodes as tm
    >>> (tm.tensor([-7, 7]) // 2).tolist()
    [-4, 3]
    """
    return _floor_division(input, other)


def _remainder_grad(grad, input, other, needs_input_grad):
    # The operands are saved only for ``other``'s gradient (save_only_for), as by RemainderBackward0.
    return grad, -grad * (input // other) if needs_input_grad[1] else None


@op(grad=_remainder_grad, save_only_for={"input": "other", "other": "other"},
    method=True, inplace=True, out=True,
    dunders=(Dunder("__mod__"), Dunder("__rmod__", OWN, reflected=True), Dunder("__imod__", inplace=True)),
    samples=(Sample((_M23, _DIVISORS)), Sample((_I64, TensorSpec((3,), "int64", -4, -1))), Sample((_I64, 3)),
             Sample((_M23, -1.5)), Sample((_F16, 0.7)), Sample((_SCALAR, _DIVISORS)), Sample((5, _POSITIVE_I)),
             Sample((_U8, 7))))
def remainder(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The remainder of ``input / other`` with the sign of ``other`` (Python's ``%``).

    >>> import tensormodes as tm
    >>> (tm.tensor([-3, 3]) % 2).tolist(), (tm.tensor([-3, 3]) % -2).tolist()
    ([1, 1], [-1, -1])
    """
    if _both_scalars(input, other):
        raise _invalid_arguments("remainder", input, other)
    return _integer_or_float_division(input, other, np.remainder, np.remainder, "remainder_cpu")


def _fmod_grad(grad, input, other, needs_input_grad):
    # The operands are saved only for ``other``'s gradient (save_only_for), as by FmodBackward1.
    return grad, -grad * input.div(other, rounding_mode="trunc") if needs_input_grad[1] else None


@op(grad=_fmod_grad, save_only_for={"input": "other", "other": "other"}, method=True, inplace=True, out=True,
    samples=(Sample((_M23, _DIVISORS)), Sample((_I64, TensorSpec((3,), "int64", -4, -1))), Sample((_I64, 3)),
             Sample((_M23, -1.5)), Sample((_BF16, 0.7)), Sample((_SCALAR, _DIVISORS))))
def fmod(input: Tensor, other: Tensor | Number) -> Tensor:
    """The remainder of ``input / other`` with the sign of ``input`` (C's ``fmod``).

    >>> import tensormodes as tm
    >>> tm.fmod(tm.tensor([-3, 3]), 2).tolist()
    [-1, 1]
    """
    return _integer_or_float_division(input, other, np.fmod, np.fmod, "fmod_cpu")


def _integer_power(base, exponent, d: dt.dtype) -> np.ndarray:
    """Integer ``base ** exponent`` with PyTorch's answers for negative exponents
    (1 for base 1, +-1 for base -1, else 0), where NumPy refuses."""
    negative = np.less(exponent, 0)
    if not negative.any():
        return _as(np.power(base, exponent), d)
    safe = np.power(base, np.where(negative, 0, exponent))
    parity = np.where(np.remainder(exponent, 2) == 0, 1, -1)
    inverse = np.where(np.equal(base, 1), 1, np.where(np.equal(base, -1), parity, 0))
    return _as(np.where(negative, inverse, safe), d)


def _pow_grad(grad, result, input, exponent):
    input_grad = exponent_grad = None
    if _is_tensor(input):
        local = exponent * input ** (exponent - 1)
        # d/dx x**0 is 0 everywhere, even where x**-1 is not finite.
        local = local.where(exponent != 0, 0) if _is_tensor(exponent) else local * (exponent != 0)
        input_grad = grad * _conj(local)
    if _is_tensor(exponent):
        if _is_tensor(input):
            # 0 ** e has zero gradient in e where e >= 0 (log(0) would give NaN).
            negative = (exponent.real if exponent.dtype.is_complex else exponent) < 0
            local = (result * input.log()).where((input != 0) | negative, 0)
        else:
            local = result * _log_of_number(input) if input != 0 else _zeros_like(result)
        exponent_grad = grad * _conj(local)
    return input_grad, exponent_grad


@op(grad=_pow_grad, method=True, inplace=True, out=True,
    dunders=(Dunder("__pow__", OWN), Dunder("__rpow__", OWN, reflected=True), Dunder("__ipow__", OWN, inplace=True)),
    samples=(Sample((_POSITIVE, _M23)), Sample((_M23, 2)), Sample((_M23, 0.5)), Sample((_I64, 3)),
             Sample((_I64, TensorSpec((2, 3), "int64", -2, 3))), Sample((2, _I32)), Sample((2.5, _I64)),
             Sample((_I64, -1.0)), Sample((_BOOL, 2)), Sample((_F16, 2)), Sample((_BF16, _BF16)),
             Sample((_C64, 2)), Sample((_SCALAR, _POSITIVE)), Sample((_U8, 3))))
def pow(input: Tensor | Number, exponent: Tensor | Number) -> Tensor:  # noqa: A001 - PyTorch's name
    """``input ** exponent`` elementwise; either may be a number. Integer tensors raised to
    a negative integer number are an error.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) ** 2).tolist()
    [1, 4, 9]
    >>> (2 ** tm.tensor([0, 1, 2])).tolist()
    [1, 2, 4]
    >>> tm.tensor([4.0]).pow(0.5).tolist()
    [2.0]
    """
    if _both_scalars(input, exponent):
        raise _invalid_arguments("pow", input, exponent)
    d = operand_dtype(input, exponent)
    if d is dt.bool:
        # Only bool ** Python bool is implemented: x ** True is x, x ** False is all True.
        if type(input) is _ND and type(exponent) is bool:
            return np.ones(input.shape, np.bool_) if not exponent else input.copy()
        raise _unsupported("pow", d, input, exponent)
    if not (d.is_floating_point or d.is_complex):
        if type(exponent) is int and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    _check_representable(exponent, d)  # a number base is not checked (PyTorch's asymmetry)
    if not (d.is_floating_point or d.is_complex):
        try:
            return _integer_power(_in(input, d), _in(exponent, d), d)
        except ValueError:
            _raise_broadcast_error(input, exponent)
            raise
    compute = _wide(d)
    with quiet():
        try:
            return _as(np.power(_in(input, d, compute), _in(exponent, d, compute)), d)
        except ValueError:
            _raise_broadcast_error(input, exponent)
            raise


# -- binary math -----------------------------------------------------------------------------

def _float_binary(ufunc, input, other, kernel_name: str, *, integers: bool = True,
                  complex_ok: bool = False) -> np.ndarray:
    """``ufunc`` of two operands in their promoted floating dtype (evaluated in float64).

    ``integers=False``: integer results are not implemented (PyTorch's hypot, logaddexp).
    """
    d = operand_dtype(input, other)
    if d.is_complex and not complex_ok or not integers and _is_integral(d):
        raise _unsupported(kernel_name, d, input, other)
    result = floating(d)
    compute = _wide(result)
    with quiet():
        try:
            return _as(ufunc(_in(input, result, compute), _in(other, result, compute)), result)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


def _atan2_grad(grad, input, other):
    denominator = input * input + other * other
    return grad * other / denominator, grad * -input / denominator


@op(grad=_atan2_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23, _M23)), Sample((_M23, _ROW)), Sample((_I64, _I32)), Sample((_F16, _F16)),
             Sample((_SCALAR, _BF16))))
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The arctangent of ``input / other`` in the right quadrant (integers give the default float dtype).

    >>> import tensormodes as tm
    >>> tm.atan2(tm.tensor([0.0]), tm.tensor([1.0])).tolist()
    [0.0]
    """
    return _float_binary(np.arctan2, input, other, "atan2_cpu")


def _extremum(ufunc, name: str, input, other) -> np.ndarray:
    d = operand_dtype(input, other)
    if d.is_complex:
        _raise_broadcast_error(input, other)
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    with quiet():  # bfloat16 NaNs raise NumPy's invalid flag
        try:
            return _as(ufunc(_in(input, d), _in(other, d)), d)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


_EXTREMUM_SAMPLES = (Sample((_M23, _M23)), Sample((_M23, _ROW)), Sample((_I64, _I32)), Sample((_BOOL, _BOOL)),
                     Sample((_F16, _BF16)), Sample((_SCALAR, _I64)), Sample((_U8, _I64)))


def _maximum_grad(grad, input, other):
    shared = (grad / 2).where(input == other, grad)  # ties split the gradient
    return shared.where(input >= other, 0), shared.where(other >= input, 0)


@op(grad=_maximum_grad, method=True, out=True, ufunc=np.maximum, samples=_EXTREMUM_SAMPLES)
def maximum(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise maximum of ``input`` and ``other`` (NaN if either is NaN).

    >>> import tensormodes as tm
    >>> tm.maximum(tm.tensor([1, 5]), tm.tensor([3, 2])).tolist()
    [3, 5]
    """
    return _extremum(np.maximum, "maximum", input, other)


def _minimum_grad(grad, input, other):
    shared = (grad / 2).where(input == other, grad)  # ties split the gradient
    return shared.where(input <= other, 0), shared.where(other <= input, 0)


@op(grad=_minimum_grad, method=True, out=True, ufunc=np.minimum, samples=_EXTREMUM_SAMPLES)
def minimum(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum of ``input`` and ``other`` (NaN if either is NaN).

    >>> import tensormodes as tm
    >>> tm.minimum(tm.tensor([1, 5]), tm.tensor([3, 2])).tolist()
    [1, 2]
    """
    return _extremum(np.minimum, "minimum", input, other)


def _hypot_grad(grad, result, input, other, needs_input_grad):
    # Each operand is saved only for its own gradient (save_only_for), as by HypotBackward0.
    return (grad * input / result if needs_input_grad[0] else None,
            grad * other / result if needs_input_grad[1] else None)


@op(grad=_hypot_grad, save_only_for={"input": "input", "other": "other"}, method=True, inplace=True, out=True,
    samples=(Sample((_M23, _M23)), Sample((_M23, _ROW)), Sample((_F16, _F16)), Sample((_F64, _I64)),
             Sample((_SCALAR, _BF16))))
def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` elementwise, without intermediate overflow (floating dtypes only).

    >>> import tensormodes as tm
    >>> tm.hypot(tm.tensor([3.0]), tm.tensor([4.0])).tolist()
    [5.0]
    """
    return _float_binary(np.hypot, input, other, "hypot_cpu", integers=False)


def _log_add_exp(a, b):
    if np.result_type(a, b).kind != "c":
        return np.logaddexp(a, b)
    # NumPy's logaddexp is real-only: factor out the operand with the larger real part.
    larger = np.where(np.real(a) >= np.real(b), a, b)
    smaller = np.where(np.real(a) >= np.real(b), b, a)
    return larger + np.log1p(np.exp(smaller - larger))


def _logaddexp_grad(grad, input, other):
    return grad / _conj(1 + (other - input).exp()), grad / _conj(1 + (input - other).exp())


@op(grad=_logaddexp_grad, method=True, out=True,
    samples=(Sample((_M23, _M23)), Sample((_M23, _ROW)), Sample((_F16, _F16)), Sample((_F64, _I64)),
             Sample((_SCALAR, _BF16)), Sample((_C64, _C64))))
def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` elementwise, without overflow (floating dtypes only).

    >>> import tensormodes as tm
    >>> tm.logaddexp(tm.tensor([-100.0, 5.0]), tm.tensor([1000.0, -1000.0])).tolist()
    [1000.0, 5.0]
    """
    return _float_binary(_log_add_exp, input, other, "logaddexp_cpu", integers=False, complex_ok=True)


def _lerp_grad(grad, input, end, weight, needs_input_grad):
    # ``input`` and ``end`` are saved only for a tensor ``weight``'s gradient (save_only_for), as by
    # LerpBackward1; LerpBackward0 (a number ``weight``) saves no tensor.
    return (grad * _conj(1 - weight) if needs_input_grad[0] else None,
            grad * _conj(weight) if needs_input_grad[1] else None,
            grad * _conj(end - input) if needs_input_grad[2] else None)


@op(grad=_lerp_grad, save_only_for={"input": "weight", "end": "weight"}, method=True, inplace=True, out=True,
    samples=(Sample((_M23, _M23, 0.3)), Sample((_M23, _M23, 0.8)), Sample((_M23, _ROW, _COLUMN)),
             Sample((_F16, _F16, 0.25)), Sample((_M23, _M23, TensorSpec((), "float64", 0, 1))),
             Sample((_C64, _C64, 0.5)), Sample((_SCALAR, _SCALAR, _SCALAR))))
def lerp(input: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)``; ``input`` and ``end`` (and a
    tensor ``weight``) must share one floating dtype.

    >>> import tensormodes as tm
    >>> tm.lerp(tm.tensor([0.0, 10.0]), tm.tensor([10.0, 20.0]), 0.5).tolist()
    [5.0, 15.0]
    """
    d = _dtype_of(input)
    # A 0-dim tensor weight binds to PyTorch's Scalar overload.
    if type(weight) is _ND and weight.ndim == 0:
        weight = weight.item()
    if end.dtype != input.dtype:
        raise RuntimeError(f"expected dtype {cpp_type_name(d)} for `end` but got dtype "
                           f"{cpp_type_name(_dtype_of(end))}")
    tensor_weight = type(weight) is _ND
    if tensor_weight and weight.dtype != input.dtype:
        raise RuntimeError(f"expected dtype {cpp_type_name(d)} for `weight` but got dtype "
                           f"{cpp_type_name(_dtype_of(weight))}")
    if _is_integral(d):
        raise _unsupported("lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar", d, input, end, weight)
    compute = _opmath(d)
    _check_representable(weight, compute)
    with quiet():
        start, stop, w = _in(input, d, compute), _in(end, d, compute), _in(weight, d, compute)
        try:
            difference = stop - start
            # PyTorch's formulation: exact at both ends, and monotonic in the weight.
            result = np.where(np.absolute(w) < 0.5, start + w * difference, stop - difference * (1 - w))
        except ValueError:
            _raise_broadcast_error(input, end, weight)
            raise
        return _as(result, d)


def _scaled_product(input, tensor1, tensor2, value, divide: bool) -> np.ndarray:
    """``input + value * tensor1 (* or /) tensor2`` in the promoted dtype."""
    d = operand_dtype(input, tensor1, tensor2)
    compute = _opmath(d)
    _check_representable(value, compute)
    if _is_integral(d) and isinstance(value, float):
        value = int(value)  # PyTorch converts value to the result dtype
    with quiet():
        a, b, c = _in(input, d, compute), _in(tensor1, d, compute), _in(tensor2, d, compute)
        try:
            scaled = np.multiply(_in(value, compute), b)
            product = np.true_divide(scaled, c) if divide else np.multiply(scaled, c)
            return _as(np.add(a, product), d)
        except ValueError:
            _raise_broadcast_error(input, tensor1, tensor2)
            raise


_ADDC_SAMPLES = (Sample((_M23, _M23, _M23)), Sample((_M23, _ROW, _COLUMN), {"value": 0.5}),
                 Sample((_F16, _F16, TensorSpec((3,), "float16", 0.5, 3.0)), {"value": 2}),
                 Sample((_SCALAR, _M23, _DIVISORS)), Sample((_BF16, _BF16, _BF16), {"value": -1}))


def _addcmul_grad(grad, tensor1, tensor2, value, needs_input_grad):
    # Each factor is saved only for the other's gradient (save_only_for), as by AddcmulBackward0.
    return (grad, grad * _conj(tensor2 * value) if needs_input_grad[1] else None,
            grad * _conj(tensor1 * value) if needs_input_grad[2] else None)


@op(grad=_addcmul_grad, save_only_for={"tensor1": "tensor2", "tensor2": "tensor1"},
    method=True, inplace=True, out=True,
    samples=(*_ADDC_SAMPLES, Sample((_I64, _I64, _I32), {"value": 2}), Sample((_I64, _I64, _M23))))
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """``input + value * tensor1 * tensor2`` elementwise.

    >>> import tensormodes as tm
    >>> tm.addcmul(tm.tensor([1, 1]), tm.tensor([2, 3]), tm.tensor([4, 5]), value=2).tolist()
    [17, 31]
    """
    d = operand_dtype(input, tensor1, tensor2)
    if d is dt.bool:
        raise _unsupported("addcmul_cpu_out", d, input, tensor1, tensor2)
    return _scaled_product(input, tensor1, tensor2, value, divide=False)


def _addcdiv_grad(grad, tensor1, tensor2, value, needs_input_grad):
    # ``tensor1`` is saved only for ``tensor2``'s gradient (save_only_for), as by AddcdivBackward0.
    return (grad, grad * _conj(value / tensor2) if needs_input_grad[1] else None,
            -grad * _conj(tensor1 * value / (tensor2 * tensor2)) if needs_input_grad[2] else None)


@op(grad=_addcdiv_grad, save_only_for={"tensor1": "tensor2"}, method=True, inplace=True, out=True,
    samples=(*_ADDC_SAMPLES, Sample((_I64, _C64, _POSITIVE_I))))
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """``input + value * tensor1 / tensor2`` elementwise (``tensor1`` and ``tensor2`` may not
    both be integer tensors).

    >>> import tensormodes as tm
    >>> tm.addcdiv(tm.tensor([1.0, 1.0]), tm.tensor([2.0, 3.0]), tm.tensor([4.0, 2.0]), value=2).tolist()
    [2.0, 4.0]
    """
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
            "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented "
            "as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
            "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return _scaled_product(input, tensor1, tensor2, value, divide=True)


# -- selection -------------------------------------------------------------------------------

# float32 and float64: dtypes whose fast paths need no promotion or half-precision care.
_PLAIN_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _where(condition: np.ndarray, input, other) -> np.ndarray:
    if (type(input) is _ND and input.dtype in _PLAIN_FLOATS and (type(other) is float or type(other) is int)
            and condition.dtype.kind == "b"):
        # The common ``grad.where(mask, 0)`` of gradient formulas: the number takes the
        # array's dtype, and casting it cannot overflow once it is representable.
        _check_representable(other, _dtype_of(input))
        try:
            return np.where(condition, input, np.asarray(other, dtype=input.dtype))
        except ValueError:
            _raise_broadcast_error(condition, input, other)
            raise
    if condition.dtype.kind != "b":
        if condition.dtype != np.uint8:
            raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{scalar_type_name(_dtype_of(condition))}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed "
                      "in a future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=4)
        condition = condition.astype(np.bool_)
    d = operand_dtype(input, other)
    if d not in _HALF_TYPES:  # PyTorch converts where's numbers to half types unchecked
        _check_representable(input, d)
        _check_representable(other, d)
    with quiet():
        try:
            return _as(np.where(condition, _as(_in(input, d), d), _as(_in(other, d), d)), d)
        except ValueError:
            _raise_broadcast_error(condition, input, other)
            raise


def _where_grad(grad, condition):
    # Gradients for Python-number operands are dropped by the engine.
    keep = condition if condition.dtype is dt.bool else condition != 0  # uint8 conditions
    return None, grad.where(keep, 0), grad.where(keep.logical_not(), 0)


def _where_method_grad(grad, condition):
    _, input_grad, other_grad = _where_grad(grad, condition)
    return input_grad, None, other_grad


@op(grad=_where_grad, out=True,
    samples=(Sample((_BOOL, _M23, _M23)), Sample((_BOOL, _ROW, 0.0)), Sample((_BOOL, 1, 2.5)), Sample((_BOOL, 1, 2)),
             Sample((_BOOL, _I64, _F16)), Sample((TensorSpec((), "bool"), _I32, _SCALAR)),
             Sample((_BOOL,), {"input": _COLUMN, "other": _ROW}), Sample((_BOOL,)),
             Sample((TensorSpec((), "bool"),))))
def where(condition: Tensor, input: Tensor | Number | None = None, other: Tensor | Number | None = None) -> Tensor:
    """Elements of ``input`` where ``condition`` holds, else of ``other`` (numbers allowed;
    the result broadcasts and takes their promoted dtype). ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``.

    >>> import tensormodes as tm
    >>> c = tm.tensor([True, False, True])
    >>> tm.where(c, tm.tensor([1, 2, 3]), 0).tolist()
    [1, 0, 3]
    >>> [t.tolist() for t in tm.where(c)]
    [[0, 2]]
    """
    if input is None and other is None:
        return tuple(np.asarray(i, dtype=np.int64) for i in np.nonzero(np.atleast_1d(condition)))
    if input is None or other is None:
        raise _invalid_arguments("where", condition, *(x for x in (input, other) if x is not None))
    return _where(condition, input, other)


@op(grad=_where_method_grad, function=False, method="where", name="where_method",
    samples=(Sample((_M23, _BOOL, _M23)), Sample((_I64, _BOOL, 2.5)), Sample((_ROW, _BOOL, _COLUMN))))
def where_method(input: Tensor, condition: Tensor, other: Tensor | Number) -> Tensor:
    """``tensormodes.where(condition, self, other)`` (the method form puts ``self`` in the middle).

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2, 3]).where(tm.tensor([True, False, True]), 0).tolist()
    [1, 0, 3]
    """
    return _where(condition, input, other)


# -- comparisons -----------------------------------------------------------------------------

def _compare(ufunc, name: str, input, other, ordered: bool) -> np.ndarray:
    if type(input) is _ND and input.dtype == np.int64 and type(other) is int and _INT64_MIN <= other <= _INT64_MAX:
        # Class targets against an index (``target != ignore_index``): exact in NumPy, no promotion to work out.
        return np.asarray(ufunc(input, other))
    d = operand_dtype(input, other)
    if ordered and d.is_complex:
        raise _unsupported(f"{name}_cpu", d, input, other)
    with quiet():  # bfloat16 NaNs raise NumPy's invalid flag
        try:
            return np.asarray(ufunc(_in(input, d), _in(other, d)))
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


def _comparison_samples(ordered: bool) -> tuple[Sample, ...]:
    samples = (Sample((_M23, _M23)), Sample((_M23, 0.0)), Sample((_I64, _ROW)), Sample((_I64, 2)),
               Sample((_I64, 1.5)), Sample((_BOOL, _BOOL)), Sample((_F16, _BF16)), Sample((_SCALAR, _I32)),
               Sample((_U8, -1)))
    return samples if ordered else (*samples, Sample((_C64, _C64)))


@op(differentiable=False, method=True, inplace=True, out=True, ufunc=np.equal, dunders=(Dunder("__eq__", OWN),),
    samples=(*_comparison_samples(False), Sample((_I64, TensorSpec((2, 3), "int64", -5, 5)))))
def eq(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input == other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) == 2).tolist()
    [False, True, False]
    """
    return _compare(np.equal, "eq", input, other, False)


@op(differentiable=False, method=True, inplace=True, out=True, ufunc=np.not_equal, dunders=(Dunder("__ne__"),),
    samples=_comparison_samples(False))
def ne(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input != other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) != 2).tolist()
    [True, False, True]
    """
    return _compare(np.not_equal, "ne", input, other, False)


@op(differentiable=False, method=True, inplace=True, out=True, ufunc=np.less, dunders=(Dunder("__lt__"),),
    samples=_comparison_samples(True))
def lt(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input < other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) < 2).tolist()
    [True, False, False]
    """
    return _compare(np.less, "lt", input, other, True)


@op(differentiable=False, method=True, inplace=True, out=True, ufunc=np.less_equal, dunders=(Dunder("__le__"),),
    samples=_comparison_samples(True))
def le(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input <= other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) <= 2).tolist()
    [True, True, False]
    """
    return _compare(np.less_equal, "le", input, other, True)


@op(differentiable=False, method=True, inplace=True, out=True, ufunc=np.greater, dunders=(Dunder("__gt__"),),
    samples=_comparison_samples(True))
def gt(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input > other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) > 2).tolist()
    [False, False, True]
    """
    return _compare(np.greater, "gt", input, other, True)


@op(differentiable=False, method=True, inplace=True, out=True, ufunc=np.greater_equal, dunders=(Dunder("__ge__"),),
    samples=_comparison_samples(True))
def ge(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input >= other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) >= 2).tolist()
    [False, True, True]
    """
    return _compare(np.greater_equal, "ge", input, other, True)


# -- logical and bitwise ---------------------------------------------------------------------

def _logical(ufunc, input, other) -> np.ndarray:
    with quiet():
        try:
            return np.asarray(ufunc(_truth(input), _truth(other)))
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


_LOGICAL_SAMPLES = (Sample((_BOOL, _BOOL)), Sample((_M23, _I64)), Sample((_I64, _ROW)), Sample((_SCALAR, _BOOL)),
                    Sample((_C64, _BF16)), Sample((TensorSpec((2, 3), "int64", 0, 1), _BOOL)))


@op(differentiable=False, method=True, inplace=True, out=True, samples=_LOGICAL_SAMPLES)
def logical_and(input: Tensor, other: Tensor) -> Tensor:
    """A bool tensor: True where both ``input`` and ``other`` are nonzero.

    >>> import tensormodes as tm
    >>> tm.logical_and(tm.tensor([0, 1, 2]), tm.tensor([1, 1, 0])).tolist()
    [False, True, False]
    """
    return _logical(np.logical_and, input, other)


@op(differentiable=False, method=True, inplace=True, out=True, samples=_LOGICAL_SAMPLES)
def logical_or(input: Tensor, other: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` or ``other`` is nonzero.

    >>> import tensormodes as tm
    >>> tm.logical_or(tm.tensor([0, 1, 0]), tm.tensor([0, 0, 3])).tolist()
    [False, True, True]
    """
    return _logical(np.logical_or, input, other)


@op(differentiable=False, method=True, inplace=True, out=True, samples=_LOGICAL_SAMPLES)
def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    """A bool tensor: True where exactly one of ``input`` and ``other`` is nonzero.

    >>> import tensormodes as tm
    >>> tm.logical_xor(tm.tensor([0, 1, 2]), tm.tensor([1, 1, 0])).tolist()
    [True, False, True]
    """
    return _logical(np.logical_xor, input, other)


def _integer_operands(input, other, kernel_name: str, name: str, allow_bool: bool = True):
    """Both operands in their promoted integer (or bool) dtype, for bitwise ops."""
    if _both_scalars(input, other):
        raise _invalid_arguments(name, input, other)
    d = operand_dtype(input, other)
    if not _is_integral(d) or d is dt.bool and not allow_bool:
        raise _unsupported(kernel_name, d, input, other)
    return _in(input, d), _in(other, d), d


def _bitwise(ufunc, kernel_name: str, name: str, input, other) -> np.ndarray:
    a, b, d = _integer_operands(input, other, kernel_name, name)
    try:
        return _as(ufunc(a, b), d)
    except ValueError:
        _raise_broadcast_error(input, other)
        raise


_BITWISE_SAMPLES = (Sample((_I64, _I64)), Sample((_BOOL, _BOOL)), Sample((_U8, _I32)), Sample((_I64, 6)),
                    Sample((_BOOL, 1)), Sample((5, _I32)), Sample((_BOOL, True)),
                    Sample((TensorSpec((), "int64"), _U8)))


@op(differentiable=False, method=True, inplace=True, out=True, samples=_BITWISE_SAMPLES,
    dunders=(Dunder("__and__", OWN), Dunder("__rand__"), Dunder("__iand__", OWN, inplace=True)))
def bitwise_and(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The bitwise AND of integer or bool operands (logical AND for bool).

    >>> import tensormodes as tm
    >>> (tm.tensor([12, 10]) & 6).tolist()
    [4, 2]
    """
    return _bitwise(np.bitwise_and, "bitwise_and_cpu", "bitwise_and", input, other)


@op(differentiable=False, method=True, inplace=True, out=True, samples=_BITWISE_SAMPLES,
    dunders=(Dunder("__or__", OWN), Dunder("__ror__"), Dunder("__ior__", OWN, inplace=True)))
def bitwise_or(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The bitwise OR of integer or bool operands (logical OR for bool).

    >>> import tensormodes as tm
    >>> (tm.tensor([12, 10]) | 1).tolist()
    [13, 11]
    """
    return _bitwise(np.bitwise_or, "bitwise_or_cpu", "bitwise_or", input, other)


@op(differentiable=False, method=True, inplace=True, out=True, samples=_BITWISE_SAMPLES,
    dunders=(Dunder("__xor__", OWN), Dunder("__rxor__"), Dunder("__ixor__", OWN, inplace=True)))
def bitwise_xor(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The bitwise XOR of integer or bool operands (logical XOR for bool).

    >>> import tensormodes as tm
    >>> (tm.tensor([12, 10]) ^ 6).tolist()
    [10, 12]
    """
    return _bitwise(np.bitwise_xor, "bitwise_xor_cpu", "bitwise_xor", input, other)


def _shift(left: bool, input, other) -> np.ndarray:
    """Shifts with PyTorch's answers for shift counts outside ``[0, bits)``: 0 for left
    shifts, the sign fill (0 or -1) for right shifts."""
    name = "bitwise_left_shift" if left else "bitwise_right_shift"
    a, b, d = _integer_operands(input, other, "lshift_cpu" if left else "rshift_cpu", name, allow_bool=False)
    bits = d.itemsize * 8
    try:
        in_range = np.logical_and(np.greater_equal(b, 0), np.less(b, bits))
        count = np.where(in_range, b, 0).astype(d._np)
        if left:
            result = np.where(in_range, np.left_shift(a, count), 0)
        else:
            result = np.where(in_range, np.right_shift(a, count), np.where(np.less(a, 0), -1, 0))
        return _as(result, d)
    except ValueError:
        _raise_broadcast_error(input, other)
        raise


_SHIFT_SAMPLES = (Sample((_I64, TensorSpec((2, 3), "int64", -2, 70))), Sample((_I64, 3)),
                  Sample((_U8, TensorSpec((3,), "uint8", 0, 9))), Sample((TensorSpec((4,), "int8", -100, 100), 7)),
                  Sample((1, _I32)), Sample((_I32, _I64)))


@op(differentiable=False, method=True, inplace=True, out=True, samples=_SHIFT_SAMPLES,
    dunders=(Dunder("__lshift__", OWN), Dunder("__rlshift__", OWN, reflected=True),
             Dunder("__ilshift__", OWN, inplace=True)))
def bitwise_left_shift(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input << other`` for integer operands (shifting by the bit width or more, or by a
    negative count, gives 0).

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 3]) << 2).tolist(), (1 << tm.tensor([0, 4])).tolist()
    ([4, 12], [1, 16])
    """
    return _shift(True, input, other)


@op(differentiable=False, method=True, inplace=True, out=True, samples=_SHIFT_SAMPLES,
    dunders=(Dunder("__rshift__", OWN), Dunder("__rrshift__", OWN, reflected=True),
             Dunder("__irshift__", OWN, inplace=True)))
def bitwise_right_shift(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input >> other`` for integer operands, arithmetic for signed dtypes (shifting by
    the bit width or more, or by a negative count, leaves only the sign: 0 or -1).

    >>> import tensormodes as tm
    >>> (tm.tensor([16, -16]) >> 2).tolist()
    [4, -4]
    """
    return _shift(False, input, other)


# -- closeness and equality ------------------------------------------------------------------

def _close(input: np.ndarray, other: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """PyTorch's isclose: equal, or (when finite) ``|input - other| <= atol + |rtol * other|``."""
    d = _dtype_of(input)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{scalar_type_name(d)} did not match {scalar_type_name(_dtype_of(other))}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    with quiet():
        try:
            close = np.equal(input, other)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise
        if equal_nan and not _is_integral(d):
            close |= np.isnan(input) & np.isnan(other)
        if rtol == 0 and atol == 0:
            return np.asarray(close)
        a, b = input, other
        if _is_integral(d):
            d = dt.get_default_dtype()
            a, b = a.astype(d._np), b.astype(d._np)
        # Each step rounds to its dtype, as PyTorch's tensor expressions do (integers
        # compare in the default float dtype, so differences cannot wrap around).
        real = d.to_real()
        tolerance = np.absolute(_as(np.multiply(b.astype(_opmath(d)._np, copy=False), rtol), d))
        allowed = _as(np.add(tolerance.astype(_opmath(real)._np, copy=False), atol), real)
        error = np.absolute(_as(np.subtract(a, b), d))
        close |= np.isfinite(error) & (error <= allowed)
    return np.asarray(close)


@op(differentiable=False, method=True,
    samples=(Sample((_M23, _M23)), Sample((_M23, _ROW), {"rtol": 2.0, "atol": 0.5}), Sample((_I64, _I64)),
             Sample((_BOOL, _BOOL)), Sample((_F16, _F16), {"atol": 1.0}), Sample((_SCALAR, _SCALAR)),
             Sample((_C64, _C64), {"equal_nan": True}), Sample((_I64, _I64), {"atol": 2, "rtol": 0})))
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """A bool tensor: True where ``|input - other| <= atol + rtol * |other|`` (or both are
    equal, infinities included; NaNs only with ``equal_nan``). The dtypes must match.

    >>> import tensormodes as tm
    >>> tm.isclose(tm.tensor([1.0, 2.0]), tm.tensor([1.0 + 1e-9, 2.1])).tolist()
    [True, False]
    >>> from math import nan
    >>> tm.isclose(tm.tensor([nan]), tm.tensor([nan]), equal_nan=True).tolist()
    [True]
    """
    return _close(input, other, rtol, atol, equal_nan)


@op(differentiable=False, method=True,
    samples=(Sample((_M23, _M23)), Sample((_M23, _ROW), {"rtol": 10.0, "atol": 5.0}), Sample((_I64, _I64)),
             Sample((_F64, _F64), {"equal_nan": True}), Sample((_SCALAR, _SCALAR))))
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True if ``isclose(input, other, rtol, atol, equal_nan)`` holds everywhere.

    >>> import tensormodes as tm
    >>> tm.allclose(tm.tensor([1.0, 2.0]), tm.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    return bool(_close(input, other, rtol, atol, equal_nan).all())


@op(differentiable=False, method=True,
    samples=(Sample((_M23, _M23)), Sample((_I64, _I64)), Sample((_M23, _ROW)), Sample((_SCALAR, _SCALAR)),
             Sample((_BOOL, TensorSpec((2, 3), "int64", 0, 1)))))
def equal(input: Tensor, other: Tensor) -> bool:
    """True if ``input`` and ``other`` have the same shape and elements (NaN is not equal to itself).

    >>> import tensormodes as tm
    >>> tm.equal(tm.tensor([1, 2]), tm.tensor([1.0, 2.0])), tm.equal(tm.tensor([1]), tm.tensor([1, 1]))
    (True, False)
    """
    if input.shape != other.shape:
        return False
    d = operand_dtype(input, other)
    with quiet():
        return bool(np.array_equal(_in(input, d), _in(other, d)))


@op(differentiable=False, samples=(Sample((_M23, _I64)), Sample((_I64, 2.5)), Sample((_I32, _SCALAR)), Sample((2, 3.0)),
             Sample((True, _U8)), Sample((_M23, 1j)), Sample((_BOOL, _BOOL))))
def result_type(tensor: Tensor | Number, other: Tensor | Number) -> dt.dtype:
    """The dtype an arithmetic op on ``tensor`` and ``other`` would produce (PyTorch's promotion).

    >>> import tensormodes as tm
    >>> tm.result_type(tm.tensor([1, 2], dtype=tm.int32), 2.5)
    tensormodes.float32
    >>> tm.result_type(tm.tensor([1], dtype=tm.uint8), tm.tensor(1, dtype=tm.int64))
    tensormodes.uint8
    """
    return operand_dtype(tensor, other)


# -- more elementwise math: inverse hyperbolics, angles, float-only binaries -------------------

def _real_float_unary(ufunc, kernel_name: str, input: np.ndarray) -> np.ndarray:
    """``_float_unary`` for functions PyTorch has no complex kernel for."""
    if input.dtype.kind == "c":
        raise not_implemented(kernel_name, _dtype_of(input))
    return _float_unary(ufunc, input)


def _asinh_grad(grad, input):
    return grad / _conj((input * input + 1).sqrt())


@op(grad=_asinh_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_C64,))))
def asinh(input: Tensor) -> Tensor:
    """The inverse hyperbolic sine of each element.

    >>> import tensormodes as tm
    >>> tm.asinh(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.arcsinh, input)


def _acosh_grad(grad, input):
    return grad / _conj((input * input - 1).sqrt())


_ABOVE_ONE = TensorSpec((2, 3), "float32", 1.1, 4.0)


@op(grad=_acosh_grad, method=True, inplace=True, out=True,
    samples=(Sample((_ABOVE_ONE,)), Sample((_POSITIVE_I,)), Sample((TensorSpec((), "float64", 1.5, 3.0),)),
             Sample((TensorSpec((3,), "bfloat16", 1.1, 4.0),)), Sample((TensorSpec((3,), "complex64", 1.2, 2.0),))))
def acosh(input: Tensor) -> Tensor:
    """The inverse hyperbolic cosine of each element (NaN below 1 for real inputs).

    >>> import tensormodes as tm
    >>> tm.acosh(tm.tensor([1])).tolist()
    [0.0]
    """
    return _float_unary(np.arccosh, input)


_UNIT_INTEGERS = TensorSpec((3,), "int64", -1, 1)
_UNIT_SCALAR = TensorSpec((), "float64", -0.9, 0.9)


def _atanh_grad(grad, input):
    return grad / _conj(1 - input * input)


@op(grad=_atanh_grad, method=True, inplace=True, out=True,
    samples=(Sample((_UNIT,)), Sample((_UNIT_INTEGERS,)), Sample((_UNIT_SCALAR,)),
             Sample((TensorSpec((3,), "float16", -0.9, 0.9),)), Sample((TensorSpec((3,), "complex64", -0.6, 0.6),))))
def atanh(input: Tensor) -> Tensor:
    """The inverse hyperbolic tangent of each element (+-inf at +-1, NaN beyond for real inputs).

    >>> import tensormodes as tm
    >>> tm.atanh(tm.tensor([0, 1])).tolist()
    [0.0, inf]
    """
    return _float_unary(np.arctanh, input)


# math.erfc is correctly rounded to within an ulp over the whole range, tail included.
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_ERF = np.frompyfunc(math.erf, 1, 1)


def _erfc(x: np.ndarray) -> np.ndarray:
    return np.asarray(_ERFC(x), dtype=np.float64)


def _erfc_grad(grad, input):
    return grad * (-2 / math.sqrt(math.pi)) * (-(input * input)).exp()


@op(grad=_erfc_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((_I64,)), Sample((_SCALAR,)),
             Sample((_BF16,)), Sample((TensorSpec((4,), "float64", -3, 9),))))
def erfc(input: Tensor) -> Tensor:
    """The complementary error function ``1 - erf(input)``, accurate in the tail.

    >>> import tensormodes as tm
    >>> tm.erfc(tm.tensor([0.0, -10.0])).tolist()
    [1.0, 2.0]
    """
    return _real_float_unary(_erfc, "erfc_vml_cpu", input)


def _logit_grad(grad, input, eps):
    local = grad / (input * (1 - input))
    if eps is None or eps < 0:  # outside [0, 1] logit is NaN, and so is its gradient
        return local.where(~((input < 0) | (input > 1)), math.nan)
    # Clamped elements (strictly outside [eps, 1 - eps]) do not move the result.
    return local.where(~((input < eps) | (input > 1 - eps)), 0)


@op(grad=_logit_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", 0.05, 0.95),)), Sample((TensorSpec((2, 3), "int64", 0, 1),)),
             Sample((TensorSpec((), "float64", 0.1, 0.9),)), Sample((TensorSpec((3,), "float16", 0.1, 0.9),)),
             Sample((TensorSpec((4,), "float64", 0.1, 0.9), 0.25)), Sample((_BF16,), {"eps": 0.1}),
             Sample((TensorSpec((2, 3), "float64", 0.05, 0.95),), {"eps": -1.0})))
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(input / (1 - input))`` elementwise; with ``eps`` (>= 0), ``input`` is first
    clamped to ``[eps, 1 - eps]``.

    >>> import tensormodes as tm
    >>> tm.logit(tm.tensor([0.5, 0.0])).tolist()
    [0.0, -inf]
    >>> tm.logit(tm.tensor([0.0]), eps=0.5).tolist()
    [0.0]
    """
    def kernel(x):
        if eps is not None and eps >= 0:
            low, high = eps, 1 - eps
            x = np.where(x < low, low, np.where(x > high, high, x))
        return np.log(x / (1 - x))

    return _real_float_unary(kernel, "logit_cpu", input)


def _x_log_y(x, y):
    # 0 * log(y) is 0, even for y = 0 or y < 0; a NaN y stays NaN.
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


def _xlogy_grad(grad, input, other, needs_input_grad):
    input_grad = other_grad = None
    if needs_input_grad[0]:
        input_grad = public("xlogy")(grad, other)
        if _is_tensor(other):
            input_grad = input_grad.where(~((input == 0) & (other <= 0)), 0)
        elif other <= 0:
            input_grad = input_grad.where(input != 0, 0)
    if needs_input_grad[1]:
        other_grad = grad * input / other
    return input_grad, other_grad


@op(grad=_xlogy_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23, _POSITIVE)), Sample((_M23, TensorSpec((3,), "float64", 0.5, 3))),
             Sample((_I64, _POSITIVE_I)), Sample((_F16, TensorSpec((3,), "float16", 0.5, 2))), Sample((_M23, 2.5)),
             Sample((3, _POSITIVE)), Sample((_SCALAR, TensorSpec((), "float64", 0.5, 2))),
             Sample((TensorSpec((3,), "int64", 0, 0), TensorSpec((3,), "float32", -1, 1)))))
def xlogy(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input * log(other)`` elementwise, 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> import tensormodes as tm
    >>> tm.xlogy(tm.tensor([0.0, 2.0]), tm.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    if _both_scalars(input, other):
        raise _invalid_arguments("xlogy", input, other)
    return _float_binary(_x_log_y, input, other, "xlogy_cpu")


def _angle_conversion(name: str, factor: float, input: np.ndarray) -> np.ndarray:
    if input.dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    return _float_unary(lambda x: x * factor, input)


def _deg2rad_grad(grad):
    return grad * (math.pi / 180)


@op(grad=_deg2rad_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -360, 360),)), Sample((_I64,)), Sample((_SCALAR,)),
             Sample((_F16,)), Sample((_BOOL,))))
def deg2rad(input: Tensor) -> Tensor:
    """Converts each element from degrees to radians.

    >>> import tensormodes as tm
    >>> tm.deg2rad(tm.tensor([180.0, 0.0])).tolist()
    [3.1415927410125732, 0.0]
    """
    return _angle_conversion("deg2rad", math.pi / 180, input)


def _rad2deg_grad(grad):
    return grad * (180 / math.pi)


@op(grad=_rad2deg_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_BF16,)), Sample((_BOOL,))))
def rad2deg(input: Tensor) -> Tensor:
    """Converts each element from radians to degrees.

    >>> import tensormodes as tm
    >>> tm.rad2deg(tm.tensor([0.0, -1.0], dtype=tm.float64)).tolist()
    [0.0, -57.29577951308232]
    """
    return _angle_conversion("rad2deg", 180 / math.pi, input)


def _sinc_grad(grad, input):
    # d/dx sin(pi x) / (pi x) = (cos(pi x) - sinc(x)) / x, and 0 at x = 0.
    local = ((input * math.pi).cos() - input.sinc()) / input
    return grad * _conj(local.where(input != 0, 0))


@op(grad=_sinc_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_C64,))))
def sinc(input: Tensor) -> Tensor:
    """The normalized sinc function ``sin(pi x) / (pi x)`` of each element (1 at 0).

    >>> import tensormodes as tm
    >>> tm.sinc(tm.tensor([0.0, 0.5], dtype=tm.float64)).tolist()
    [1.0, 0.6366197723675814]
    """
    return _float_unary(np.sinc, input)


def _logaddexp2_grad(grad, input, other):
    return grad / (1 + (other - input).exp2()), grad / (1 + (input - other).exp2())


@op(grad=_logaddexp2_grad, method=True, out=True,
    samples=(Sample((_M23, _M23)), Sample((_M23, _ROW)), Sample((_F16, _F16)), Sample((_F64, _I64)),
             Sample((_SCALAR, _BF16))))
def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` elementwise, without overflow (real floating dtypes only).

    >>> import tensormodes as tm
    >>> tm.logaddexp2(tm.tensor([1.0, 2000.0]), tm.tensor([1.0, 0.0])).tolist()
    [2.0, 2000.0]
    """
    return _float_binary(np.logaddexp2, input, other, "logaddexp2_cpu", integers=False)


def _copysign_grad(grad, input, other_shape, result):
    # |input| with the sign of ``other``: the ratio result / input is +-1 (0 where input is 0).
    ratio = (result / input).where(input != 0, 0)
    return grad * ratio, None if other_shape is None else _zeros_like(grad)


@op(grad=_copysign_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23, _M23)), Sample((_M23, _ROW)), Sample((_I64, _I32)), Sample((_F16, _F16)),
             Sample((_M23, -2.0)), Sample((_SCALAR, _BF16)), Sample((_F64, _BOOL))))
def copysign(input: Tensor, other: Tensor | Number) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other`` (-0.0 and NaN's sign bit count);
    integers give the default float dtype.

    >>> import tensormodes as tm
    >>> tm.copysign(tm.tensor([1.0, 2.0]), tm.tensor([-0.0, 3.0])).tolist()
    [-1.0, 2.0]
    """
    return _float_binary(np.copysign, input, other, "copysign_cpu")


def _float_power_grad(grad, result, input, exponent):
    wide = result.dtype  # float64 or complex128: both operands take part at that precision
    return _pow_grad(grad, result, input.to(wide) if _is_tensor(input) else input,
                     exponent.to(wide) if _is_tensor(exponent) else exponent)


def _exact_result_dtype(result: np.ndarray, target: np.ndarray, inplace: bool) -> None:
    """float_power writes only into its result's own dtype (float64 or complex128)."""
    if target.dtype != result.dtype:
        which = "base given to float_power_" if inplace else "output given to float_power"
        raise RuntimeError(f"the {which} has dtype {scalar_type_name(_dtype_of(target))} but the operation's "
                           f"result requires dtype {scalar_type_name(_dtype_of(result))}")


@op(grad=_float_power_grad, method=True, inplace=True, out=True, written_check=_exact_result_dtype,
    samples=(Sample((_POSITIVE, _M23)), Sample((_M23, 2)), Sample((_POSITIVE, 0.5)), Sample((_I64, 3)),
             Sample((2, _I32)), Sample((2.5, _M23)), Sample((_F16, _BF16)), Sample((_C64, 2)),
             Sample((_SCALAR, _POSITIVE)), Sample((_POSITIVE_I, TensorSpec((3,), "int64", -2, 2)))))
def float_power(input: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    """``input ** exponent`` computed in double precision: the result is float64, or
    complex128 if either operand is complex.

    >>> import tensormodes as tm
    >>> tm.float_power(tm.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=tensormodes.float64)
    """
    if _both_scalars(input, exponent):
        raise _invalid_arguments("float_power", input, exponent)
    d = dt.complex128 if operand_dtype(input, exponent).is_complex else dt.float64
    if type(input) is not _ND and input == 1:  # 1 ** anything is 1 for a number base, NaN included
        return np.ones(np.shape(exponent), d._np)
    base, power = _in(input, d), _in(exponent, d)
    with quiet():
        try:
            return _as(np.power(base, power), d)
        except ValueError:
            _raise_broadcast_error(input, exponent)
            raise


@op(grad=_neg_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_C64,)), Sample((_F16,))))
def negative(input: Tensor) -> Tensor:
    """Alias for ``neg``.

    >>> import tensormodes as tm
    >>> tm.negative(tm.tensor([1, -2])).tolist()
    [-1, 2]
    """
    return neg(input)


def _fmax_grad(grad, input, other):
    # The chosen operand takes the whole gradient: ``input`` on ties, ``other`` where input is NaN.
    chosen = (input >= other) | other.isnan()
    return grad.where(chosen, 0), grad.where(~chosen, 0)


@op(grad=_fmax_grad, method=True, out=True, ufunc=np.fmax, samples=_EXTREMUM_SAMPLES)
def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise maximum, ignoring NaN: NaN only where both elements are NaN.

    >>> import tensormodes as tm
    >>> from math import nan
    >>> tm.fmax(tm.tensor([nan, 1.0]), tm.tensor([2.0, nan])).tolist()
    [2.0, 1.0]
    """
    return _extremum(np.fmax, "fmax", input, other)


def _fmin_grad(grad, input, other):
    chosen = (input <= other) | other.isnan()
    return grad.where(chosen, 0), grad.where(~chosen, 0)


@op(grad=_fmin_grad, method=True, out=True, ufunc=np.fmin, samples=_EXTREMUM_SAMPLES)
def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum, ignoring NaN: NaN only where both elements are NaN.

    >>> import tensormodes as tm
    >>> from math import nan
    >>> tm.fmin(tm.tensor([nan, 1.0]), tm.tensor([2.0, nan])).tolist()
    [2.0, 1.0]
    """
    return _extremum(np.fmin, "fmin", input, other)


def _heaviside_grad(grad):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


# Integer and bool samples only: PyTorch records heaviside but has no derivative for it.
@op(grad=_heaviside_grad, method=True, inplace=True, out=True,
    samples=(Sample((_I64, TensorSpec((3,), "int64", 2, 5))), Sample((_BOOL, _BOOL)),
             Sample((TensorSpec((2, 3), "int32", -1, 1), TensorSpec((), "int32", 7, 7)))))
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The Heaviside step function: 0 where ``input < 0``, ``values`` where ``input == 0``
    and 1 where ``input > 0`` (0 for NaN). Both tensors must have one dtype.

    >>> import tensormodes as tm
    >>> tm.heaviside(tm.tensor([-1.5, 0.0, 2.0]), tm.tensor([0.5])).tolist()
    [0.0, 0.5, 1.0]
    """
    if input.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    with quiet():
        try:
            return np.asarray(np.where(input == 0, values, input > 0).astype(input.dtype, copy=False))
        except ValueError:
            _raise_broadcast_error(input, values)
            raise


def _integer_math(ufunc, name: str, input, other) -> np.ndarray:
    """``gcd`` / ``lcm``: integer dtypes only (not bool)."""
    a, b, d = _integer_operands(input, other, f"{name}_cpu", name, allow_bool=False)
    try:
        return _as(ufunc(a, b), d)
    except ValueError:
        _raise_broadcast_error(input, other)
        raise


_GCD_SAMPLES = (Sample((_I64, TensorSpec((2, 3), "int64", -30, 30))), Sample((_U8, _I32)),
                Sample((TensorSpec((3,), "int16", -12, 12), TensorSpec((), "int64", 6, 6))),
                Sample((TensorSpec((2, 1), "int8", 0, 9), TensorSpec((3,), "int8", -9, 9))))


@op(differentiable=False, method=True, inplace=True, out=True, samples=_GCD_SAMPLES)
def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor of each pair of integers (non-negative; gcd(0, 0) = 0).

    >>> import tensormodes as tm
    >>> tm.gcd(tm.tensor([-4, 0, 6]), tm.tensor([6, 0, -9])).tolist()
    [2, 0, 3]
    """
    return _integer_math(np.gcd, "gcd", input, other)


@op(differentiable=False, method=True, inplace=True, out=True, samples=_GCD_SAMPLES)
def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple of each pair of integers (non-negative; 0 if either is 0).

    >>> import tensormodes as tm
    >>> tm.lcm(tm.tensor([-4, 0, 6]), tm.tensor([6, 5, -9])).tolist()
    [12, 0, 18]
    """
    return _integer_math(np.lcm, "lcm", input, other)


_PREDICATE_SAMPLES = (Sample((_M23,)), Sample((_I64,)), Sample((_SCALAR,)), Sample((_F16,)), Sample((_BOOL,)),
                      Sample((_U8,)))


def _bool_output(name: str):
    """A written_check: these predicates write only into bool tensors."""

    def check(result: np.ndarray, target: np.ndarray, inplace: bool) -> None:
        if target.dtype != np.bool_:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")

    return check


@op(differentiable=False, method=True, out=True, written_check=_bool_output("signbit"), samples=_PREDICATE_SAMPLES)
def signbit(input: Tensor) -> Tensor:
    """A bool tensor: True where the sign bit is set (negative numbers, -0.0, and NaN with the bit).

    >>> import tensormodes as tm
    >>> tm.signbit(tm.tensor([-1.0, -0.0, 0.0, 2.0])).tolist()
    [True, True, False, False]
    """
    kind = input.dtype.kind
    if kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if kind in "bu":
        return np.zeros(input.shape, np.bool_)
    if kind == "i":
        return np.asarray(input < 0)
    return np.asarray(np.signbit(input))


def _infinity_test(name: str, input: np.ndarray, infinity: float) -> np.ndarray:
    if input.dtype.kind == "c":
        raise RuntimeError(f"{name} does not support complex inputs.")
    mask = _no_special_values(input, False)
    return np.asarray(input == infinity) if mask is None else mask


@op(differentiable=False, method=True, out=True, written_check=_bool_output("isposinf"),
    samples=_PREDICATE_SAMPLES)
def isposinf(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is positive infinity.

    >>> import tensormodes as tm
    >>> from math import inf
    >>> tm.isposinf(tm.tensor([inf, -inf, 1.0])).tolist()
    [True, False, False]
    """
    return _infinity_test("isposinf", input, np.inf)


@op(differentiable=False, method=True, out=True, written_check=_bool_output("isneginf"),
    samples=_PREDICATE_SAMPLES)
def isneginf(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is negative infinity.

    >>> import tensormodes as tm
    >>> from math import inf
    >>> tm.isneginf(tm.tensor([inf, -inf, 1.0])).tolist()
    [False, True, False]
    """
    return _infinity_test("isneginf", input, -np.inf)


@op(differentiable=False, method=True, samples=_PREDICATE_SAMPLES + (Sample((_C64,)),))
def isreal(input: Tensor) -> Tensor:
    """A bool tensor: True where the imaginary part is zero (everywhere for real tensors).

    >>> import tensormodes as tm
    >>> tm.isreal(tm.tensor([1 + 0j, 1j])).tolist()
    [True, False]
    """
    if input.dtype.kind != "c":
        return np.ones(input.shape, np.bool_)
    return np.asarray(input.imag == 0)


# -- special functions: gamma family, erfinv, i0 ------------------------------------------------
# NumPy has none of these. Each is computed in float64 (and rounded to the result dtype) from the
# standard library where it has the function, else from recurrences and asymptotic series.

def _offset_from_integer(x: np.ndarray) -> np.ndarray:
    """``x`` minus the nearest integer, in [-0.5, 0.5] and exact: sin(pi x)^2 and tan(pi x), which
    have period 1 in x, are then evaluated where pi's rounding does not matter."""
    return x - np.rint(x)


def _cot_pi(r: np.ndarray) -> np.ndarray:
    """cot(pi r) for r in [-0.5, 0.5]. Near +-0.5 the cosine comes from sin(pi (0.5 - |r|)), with
    0.5 - |r| exact: cos(pi r) of the rounded pi r would lose its relative accuracy there."""
    magnitude = np.absolute(r)
    cosine = np.where(magnitude > 0.25, np.sin(math.pi * (0.5 - magnitude)), np.cos(math.pi * magnitude))
    return np.copysign(cosine / np.sin(math.pi * magnitude), r)


def _lgamma_of(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # the poles 0, -1, -2 ... and huge arguments
        return math.inf


_LGAMMA = np.frompyfunc(_lgamma_of, 1, 1)


_EULER_GAMMA = 0.5772156649015329


@functools.cache
def _lgamma_series() -> tuple[np.ndarray, np.ndarray]:
    """Taylor coefficients of lgamma(1 + z) and lgamma(2 + z) in z, from zeta(k) (and
    zeta(k) - 1 = zeta(k, 2)): accurate relative to the small values around the roots 1
    and 2, where the standard library's lgamma is only accurate in absolute terms."""
    k = np.arange(2, 60)
    signs = np.where(k % 2 == 0, 1.0, -1.0)
    zeta = np.array([_hurwitz_zeta(int(s), np.ones(1))[0] for s in k])
    zeta_minus_one = np.array([_hurwitz_zeta(int(s), np.full(1, 2.0))[0] for s in k])
    near_one = np.concatenate(([0.0, -_EULER_GAMMA], signs * zeta / k))
    near_two = np.concatenate(([0.0, 1 - _EULER_GAMMA], signs * zeta_minus_one / k))
    return near_one, near_two


def _lgamma(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    result = np.asarray(_LGAMMA(x), dtype=np.float64)
    near_one, near_two = _lgamma_series()
    polyval = np.polynomial.polynomial.polyval
    for center, coefficients in ((1.0, near_one), (2.0, near_two)):
        near = (x >= center - 0.5) & (x < center + 0.5)
        if near.any():
            result[near] = polyval(x[near] - center, coefficients)
    # Below 0 (poles aside), reflect: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x).
    negative = (x < 0) & (np.modf(x)[0] != 0) & np.isfinite(x)
    if negative.any():
        y = x[negative]
        sine = np.absolute(np.sin(math.pi * _offset_from_integer(y)))
        result[negative] = (math.log(math.pi) - np.log(sine)) - _lgamma(1 - y)
    return result


def _lgamma_grad(grad, input):
    return grad * input.digamma()


@op(grad=_lgamma_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((TensorSpec((), "float64", 0.5, 3),)),
             Sample((TensorSpec((3,), "float16", 0.5, 4),)), Sample((TensorSpec((4,), "float64", -2.9, -2.1),)),
             Sample((TensorSpec((3,), "bfloat16", 1, 20),))))
def lgamma(input: Tensor) -> Tensor:
    """The natural logarithm of the absolute value of the gamma function (inf at the poles
    0, -1, -2, ...).

    >>> import tensormodes as tm
    >>> tm.lgamma(tm.tensor([1.0, 3.0, 0.0])).tolist()
    [0.0, 0.6931471824645996, inf]
    """
    return _real_float_unary(_lgamma, "lgamma_vml_cpu", input)


# B_2k / 2k for the asymptotic series psi(x) ~ log(x) - 1/(2x) - sum B_2k / (2k x^2k).
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


# digamma's positive root, as a sum of two doubles (high + low).
_DIGAMMA_ROOT = (1.4616321449683622, 9.549995429965697e-17)


@functools.cache
def _digamma_root_series() -> np.ndarray:
    """Taylor coefficients of psi about its root x0: psi^(k)(x0) / k! = (-1)^(k+1) zeta(k+1, x0)."""
    root = np.full(1, _DIGAMMA_ROOT[0])
    return np.array([0.0] + [(-1) ** (k + 1) * _hurwitz_zeta(k + 1, root)[0] for k in range(1, 48)])


def _digamma_near_root(x: np.ndarray) -> np.ndarray:
    """psi on [1, 2], accurate relative to its small values around the root: x - x0 is formed
    exactly (Sterbenz) from the high part, and the series converges like (|x - x0| / x0)^k."""
    offset = (x - _DIGAMMA_ROOT[0]) - _DIGAMMA_ROOT[1]
    return np.polynomial.polynomial.polyval(offset, _digamma_root_series())


def _digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx log(gamma(x)), float64: reflection below 0; on (0, 3) the series about
    psi's root (shifted by one step of psi(x + 1) = psi(x) + 1/x); elsewhere the recurrence up
    to 10, then the asymptotic series."""
    x = np.asarray(x, dtype=np.float64)
    with quiet():
        result = _digamma_far(x)
        low = (x > 0) & (x < 3)
        if low.any():
            y = x[low]
            step = np.where(y < 1, 1.0, np.where(y > 2, -1.0, 0.0))
            # psi(y) = psi(y + 1) - 1/y below 1, psi(y - 1) + 1/(y - 1) above 2.
            correction = np.where(y < 1, -1 / y, np.where(y > 2, 1 / (y - 1), 0.0))
            result[low] = _digamma_near_root(y + step) + correction
    return result


def _digamma_far(x: np.ndarray) -> np.ndarray:
    with quiet():
        negative = x < 0
        fraction = np.modf(x)[0]
        # psi(x) = psi(1 - x) - pi / tan(pi x).
        result = np.where(negative, -math.pi * _cot_pi(_offset_from_integer(x)), 0.0)
        y = np.where(negative, 1 - x, x)
        for _ in range(10):
            small = y < 10
            if not small.any():
                break
            result = result - np.where(small, 1 / y, 0.0)
            y = np.where(small, y + 1, y)
        inverse_square = 1 / (y * y)
        series = np.zeros_like(y)
        for coefficient in reversed(_DIGAMMA_SERIES):
            series = (series + coefficient) * inverse_square
        result = result + (np.log(y) - 0.5 / y - series)
        # Poles: 0 gives -inf (+inf for -0.0); negative integers and -inf are NaN.
        result = np.where(x == 0, np.copysign(np.inf, -x), result)
        result = np.where(negative & (fraction == 0), np.nan, result)
    return result


def _digamma_grad(grad, input):
    return grad * public("polygamma")(1, input)


@op(grad=_digamma_grad, method=True, inplace=True, out=True,
    samples=(Sample((_POSITIVE,)), Sample((_POSITIVE_I,)), Sample((TensorSpec((), "float64", 0.5, 3),)),
             Sample((TensorSpec((3,), "float16", 0.5, 4),)), Sample((TensorSpec((4,), "float64", -2.9, -2.1),)),
             Sample((TensorSpec((3,), "bfloat16", 1, 20),))))
def digamma(input: Tensor) -> Tensor:
    """The digamma function, the derivative of ``lgamma`` (-inf at 0, NaN at negative integers).

    >>> import tensormodes as tm
    >>> tm.digamma(tm.tensor([1.0])).tolist()  # minus the Euler-Mascheroni constant
    [-0.5772156715393066]
    """
    return _real_float_unary(_digamma, "digamma", input)


# B_2k / (2k)! for the Euler-Maclaurin tail of the Hurwitz zeta function.
_ZETA_TAIL = tuple(float(b) / math.factorial(2 * k) for k, b in enumerate(
    (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330,
     854513 / 138, -236364091 / 2730), start=1))


def _hurwitz_zeta(s: int, q: np.ndarray) -> np.ndarray:
    """zeta(s, q) = sum over k >= 0 of (q + k) ** -s, for an integer s >= 2 and float64 q (not a
    pole): terms summed until q + k reaches ``start``, then the Euler-Maclaurin formula."""
    start = 12.0 + s
    total = np.zeros_like(q)
    a = q.copy()
    while True:
        below = a < start
        if not below.any():
            break
        total = total + np.where(below, a ** -s, 0.0)
        a = np.where(below, a + 1, a)
    tail = a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    rising = float(s)  # s (s + 1) ... (s + 2k - 2)
    power = a ** (-s - 1)
    inverse_square = 1 / (a * a)
    for k, coefficient in enumerate(_ZETA_TAIL, start=1):
        tail = tail + coefficient * rising * power
        rising *= (s + 2 * k - 1) * (s + 2 * k)
        power = power * inverse_square
    return total + tail


# Above this order the coefficients of _cot_derivative (about n!) lose accuracy to overflow.
_MAX_REFLECTED_ORDER = 40


@functools.cache
def _cot_derivative(n: int) -> np.ndarray:
    """Coefficients of P_n with d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)): P_0(c) = c and
    P_(k+1)(c) = -(1 + c^2) P_k'(c) (the coefficients of each P_n share one sign)."""
    polynomial = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        polynomial = -(np.polynomial.Polynomial([1.0, 0.0, 1.0]) * polynomial.deriv())
    return polynomial.coef


def _polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma, float64: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1."""
    x = np.asarray(x, dtype=np.float64)
    if n == 0:
        return _digamma(x)
    sign = 1.0 if n % 2 else -1.0
    with quiet():
        scale = sign * (float(math.factorial(n)) if n <= 170 else math.inf)  # n! overflows past 170
        finite = np.isfinite(x)
        pole = (x <= 0) & (np.modf(x)[0] == 0)
        safe = np.where(finite & ~pole, x, 0.5)
        reflected = (safe < 0) & (n <= _MAX_REFLECTED_ORDER)
        result = scale * _hurwitz_zeta(n + 1, np.where(reflected, 1 - safe, safe))
        if reflected.any():
            # Reflection: psi_n(x) = (-1)^n psi_n(1 - x) - pi d^n/dx^n cot(pi x). Summing the series
            # from x < 0 would take |x| terms, which cancel where psi_n is small.
            cotangent = _cot_pi(_offset_from_integer(safe[reflected]))
            derivative = math.pi ** (n + 1) * np.polynomial.polynomial.polyval(cotangent, _cot_derivative(n))
            result[reflected] = (-1) ** n * result[reflected] - derivative
        result = np.where(pole, sign * np.inf, result)
        # At the infinities PyTorch gives 0 (n = 1) or NaN (n >= 2) at +inf, and NaN (n = 1)
        # or the pole's infinity (n >= 2) at -inf.
        at_plus = (0.0 if n == 1 else np.nan)
        at_minus = (np.nan if n == 1 else sign * np.inf)
        result = np.where(x == np.inf, at_plus, np.where(x == -np.inf, at_minus, result))
        return np.where(np.isnan(x), np.nan, result)


def _polygamma_kernel(n, input: np.ndarray) -> np.ndarray:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    # PyTorch dispatches n = 0 and n = 1 to its digamma and trigamma kernels, named in its errors.
    kernel_name = ("digamma", "trigamma")[n] if n < 2 else "polygamma"
    return _real_float_unary(functools.partial(_polygamma, int(n)), kernel_name, input)


def _polygamma_grad(grad, n, input):
    return grad * public("polygamma")(n + 1, input)


_POLYGAMMA_SAMPLES = ((1, _POSITIVE), (0, _POSITIVE), (2, TensorSpec((3,), "float64", 0.5, 6)), (3, _POSITIVE_I),
                      (1, TensorSpec((), "float64", 0.5, 3)), (2, TensorSpec((3,), "float16", 0.5, 4)),
                      (1, TensorSpec((4,), "float64", -2.9, -2.1)), (4, TensorSpec((3,), "float64", -1.8, -1.2)))


@op(grad=_polygamma_grad, out=True, samples=tuple(Sample(args) for args in _POLYGAMMA_SAMPLES))
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ``digamma`` (``polygamma(0, x)`` is ``digamma(x)``).

    >>> import tensormodes as tm
    >>> tm.polygamma(1, tm.tensor([1.0, 0.5])).tolist()  # pi**2 / 6, pi**2 / 2
    [1.644934058189392, 4.934802055358887]
    """
    return _polygamma_kernel(n, input)


def _polygamma_method_grad(grad, input, n):
    return grad * public("polygamma")(n + 1, input)


@op(grad=_polygamma_method_grad, function=False, method="polygamma", inplace="polygamma_", name="polygamma_method",
    samples=tuple(Sample((spec, n)) for n, spec in _POLYGAMMA_SAMPLES[:4]))
def polygamma_method(input: Tensor, n: int) -> Tensor:
    """``tensormodes.polygamma(n, self)`` (the method takes ``n`` after ``self``).

    >>> import tensormodes as tm
    >>> tm.tensor([1.0]).polygamma(0).tolist()
    [-0.5772156715393066]
    """
    return _polygamma_kernel(n, input)


def _erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse error function, float64: Newton's method on erf(x) = |y| for |y| <= 0.5,
    and on log(erfc(x)) = log(1 - |y|) in the tail, where erf(x) is too close to 1 to invert."""
    y = np.asarray(y, dtype=np.float64)
    a = np.absolute(y)
    with quiet():
        central = a <= 0.5
        tail = (a > 0.5) & (a < 1)
        x = np.zeros_like(a)
        if central.any():
            c = a[central]
            guess = c * (math.sqrt(math.pi) / 2) * (1 + (math.pi / 12) * c * c)
            for _ in range(4):
                slope = (2 / math.sqrt(math.pi)) * np.exp(-guess * guess)
                guess = guess - (np.asarray(_ERF(guess), np.float64) - c) / slope
            x[central] = guess
        if tail.any():
            complement = 1 - a[tail]  # exact (Sterbenz) for a in [0.5, 1]
            target = np.log(complement)
            guess = np.sqrt(-target)
            for _ in range(8):
                e = np.asarray(_ERFC(guess), np.float64)
                slope = -(2 / math.sqrt(math.pi)) * np.exp(-guess * guess) / e  # d log(erfc) / dx
                guess = guess - (np.log(e) - target) / slope
            x[tail] = guess
        x = np.where(a == 1, np.inf, np.where((a > 1) | np.isnan(a), np.nan, x))
    return np.copysign(x, y)


def _erfinv_grad(grad, result):
    return grad * (math.sqrt(math.pi) / 2) * (result * result).exp()


@op(grad=_erfinv_grad, method=True, inplace=True, out=True,
    samples=(Sample((_UNIT,)), Sample((_UNIT_INTEGERS,)), Sample((_UNIT_SCALAR,)),
             Sample((TensorSpec((3,), "float16", -0.9, 0.9),)), Sample((TensorSpec((4,), "float64", 0.9, 0.999),)),
             Sample((TensorSpec((3,), "bfloat16", -0.9, 0.9),))))
def erfinv(input: Tensor) -> Tensor:
    """The inverse error function of each element (+-inf at +-1, NaN outside [-1, 1]).

    >>> import tensormodes as tm
    >>> tm.erfinv(tm.tensor([0.0, 1.0, -1.0])).tolist()
    [0.0, inf, -inf]
    """
    return _real_float_unary(_erfinv, "erfinv_vml_cpu", input)


def _i0(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind of order 0, float64: its power series
    sum (x^2/4)^k / k!^2 (all terms positive) up to |x| = 20, the asymptotic series
    e^x / sqrt(2 pi x) * sum ((2k-1)!!)^2 / (k! (8x)^k) beyond (its terms are below 1e-17 by
    the 30th). Like PyTorch, overflows to inf where e^|x| does (|x| > 709.78)."""
    magnitude = np.absolute(np.asarray(x, dtype=np.float64))
    with quiet():
        near = magnitude <= 20
        quarter_square = np.where(near, magnitude, 0.0) ** 2 / 4
        term = np.ones_like(magnitude)
        power_series = np.ones_like(magnitude)
        for k in range(1, 46):
            term = term * quarter_square / (k * k)
            power_series = power_series + term
        far = np.where(near, 21.0, magnitude)
        term = np.ones_like(magnitude)
        asymptotic = np.ones_like(magnitude)
        for k in range(1, 31):
            term = term * (2 * k - 1) ** 2 / (8 * k * far)
            asymptotic = asymptotic + term
        asymptotic = np.exp(far) / np.sqrt(2 * math.pi * far) * asymptotic
        return np.where(near, power_series, asymptotic)


def _i1(x):
    """The modified Bessel function I1 (i0's derivative), written with public ops so that it is
    differentiable again: the power series sum (x/2)^(2k+1) / (k! (k+1)!) up to |x| = 20, the
    asymptotic series sign(x) e^|x| / sqrt(2 pi |x|) * sum_k prod_j ((2j-1)^2 - 4) / (8 j |x|)
    beyond, as ``_i0`` splits its own range."""
    magnitude = x.abs()
    near = magnitude <= 20
    half = x.where(near, 0) / 2  # each branch sees only arguments it can take
    quarter_square = half * half
    term = power_series = half
    for k in range(1, 46):
        term = term * quarter_square / (k * (k + 1))
        power_series = power_series + term
    far = magnitude.where(~near, 21.0)
    term = asymptotic = far.new_ones(tuple(far.shape))
    for k in range(1, 31):
        term = term * (((2 * k - 1) ** 2 - 4) / (8 * k)) / far
        asymptotic = asymptotic + term
    asymptotic = x.sgn() * far.exp() / (far * (2 * math.pi)).sqrt() * asymptotic
    return power_series.where(near, asymptotic)


def _i0_grad(grad, input):
    return grad * _i1(input)


@op(grad=_i0_grad, method=True, inplace=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((_I64,)), Sample((_SCALAR,)),
             Sample((_F16,)), Sample((TensorSpec((4,), "float64", -40, 40),)), Sample((_BF16,))))
def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order zero, of each element.

    >>> import tensormodes as tm
    >>> tm.i0(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [1.0, 1.2660658777520082]
    """
    return _real_float_unary(_i0, "i0_vml_cpu", input)
