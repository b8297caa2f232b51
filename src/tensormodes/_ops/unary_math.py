"""Unary math: sign and absolute value, powers, exponentials and logarithms, trigonometric and
hyperbolic functions with their inverses, sigmoid and logit, rounding, ``nan_to_num``.

Math functions are evaluated in float64 and rounded to the result dtype (see ``_pointwise``);
integer inputs give the default float dtype. Each op's gradient formula sits just above it.
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import builtins
import math
from numbers import Number

import numpy as np

from .. import _dtype as dt
from ._pointwise import (
    _as,
    _complex_divide,
    _complex_from_parts,
    _float_unary,
    _half_reciprocal_sqrt,
    _in,
    _is_integral,
    _neg_grad,
    _opmath,
    _wide,
    _zeros_like,
)
from ._samples import (
    BF16,
    BOOL,
    C64,
    F16,
    F64,
    I23,
    I32,
    M23,
    POSITIVE,
    POSITIVE_I,
    ROW,
    SCALAR_F64,
    UNIT,
    UNIT_INTEGERS,
    UNIT_SCALAR,
)
from .common import (
    HALF_TYPES,
    check_same_shape_or_broadcast,
    dtype_of,
    floating,
    no_complex_autograd,
    not_implemented,
    operand_dtype,
    ops,
    quiet,
    squared,
    zero_where,
)
from .common import conjugate as _conj
from .meta_rules import broadcasting, elementwise, metadata
from .registry import Dunder, Sample, Tensor, TensorSpec, alias, op


def _rounding(ufunc, name: str, input: np.ndarray) -> np.ndarray:
    """``floor`` / ``ceil`` / ``trunc`` / ``round``: integers are returned unchanged (as a copy)."""
    d = dtype_of(input)
    if d is dt.bool:
        raise not_implemented(f"{name}_vml_cpu", d)
    if d.is_complex:
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    if _is_integral(d):
        return input.copy()
    return _as(ufunc(input), d)


@op(errors=(Sample((BOOL,)),),
    meta=elementwise, grad=_neg_grad, method=True, inplace=True, inplace_function=True,
    out=True, dunders=(Dunder("__neg__"),),
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((C64,)), Sample((BF16,))),
    tags=("core", "pointwise"))
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


negative = alias("negative", of="neg", method=True, inplace=True, inplace_function=True,
                 samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((C64,)), Sample((F16,))),
                 doc="""Alias for ``neg``.

    >>> import tensormodes as tm
    >>> tm.negative(tm.tensor([1, -2])).tolist()
    [-1, 2]
    """)


def _positive_grad(grad):
    return grad


@op(errors=(Sample((BOOL,)),),
    meta=metadata, grad=_positive_grad, method=True, view=True, dunders=(Dunder("__pos__"),),
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,))),
    tags=("pointwise",))
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


@op(errors=(Sample((BOOL,)),),
    meta=elementwise, grad=_abs_grad, method=True, inplace=True, inplace_function=True,
    out=True, dunders=(Dunder("__abs__"),),
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((C64,)), Sample((F16,))),
    tags=("core", "pointwise"),
    aten={"abs.default": ("inplace-pointwise",)})
def abs(input: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """Computes the absolute value of each element (the magnitude for complex inputs).

    >>> import tensormodes as tm
    >>> tm.abs(tm.tensor([-1, -2, 3])).tolist()
    [1, 2, 3]
    """
    d = dtype_of(input)
    if d is dt.bool:
        raise not_implemented("abs_cpu", d)
    if d.is_complex:  # C's hypot, as PyTorch: NumPy's complex absolute rounds differently
        return np.asarray(np.hypot(input.real, input.imag))
    return np.absolute(input)


def _step_grad(grad):
    """Piecewise-constant ops (floor, ceil, trunc, round, sign) have zero gradient."""
    return _zeros_like(grad)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_step_grad, method=True, inplace=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((BOOL,)), Sample((SCALAR_F64,)), Sample((BF16,))),
    tags=("core", "pointwise"))
def sign(input: Tensor) -> Tensor:
    """The sign of each element: -1, 0 or 1 in ``input``'s dtype (NaN gives 0).

    >>> import tensormodes as tm
    >>> tm.sign(tm.tensor([-2.5, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    d = dtype_of(input)
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


def _square_decomposition(input):
    return ops.pow(input, 2)  # PyTorch's composite: pow.Tensor_Scalar


@op(meta=elementwise, grad=_square_grad, method=True, inplace=True, inplace_function=True,
    out=True, decompose=_square_decomposition,
    samples=(Sample((M23,)), Sample((I23,)), Sample((BOOL,)), Sample((SCALAR_F64,)), Sample((C64,))),
    aten={"square.default": ("inplace+pointwise", "out+pointwise")}, tags=("pointwise",))
def square(input: Tensor) -> Tensor:
    """``input ** 2`` elementwise (bool inputs give int64, as for ``pow(input, 2)``).

    >>> import tensormodes as tm
    >>> tm.square(tm.tensor([-2, 3])).tolist()
    [4, 9]
    """
    base = input.astype(np.int64) if input.dtype.kind == "b" else input
    with quiet():
        if base.dtype.kind == "c":  # PyTorch's pow(input, 2): NumPy's power rounds as it does, its multiply not
            return np.asarray(np.power(base, 2))
        return np.asarray(np.multiply(base, base))


def _exp_grad(grad, result):
    return grad * _conj(result)


@op(meta=elementwise, grad=_exp_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((BF16,)),
             Sample((C64,))), tags=("core", "pointwise"))
def exp(input: Tensor) -> Tensor:
    """The exponential of each element (integers compute in the default float dtype).

    >>> import tensormodes as tm
    >>> tm.exp(tm.tensor([0, 0])).tolist()
    [1.0, 1.0]
    """
    return _float_unary(np.exp, input)


def _exp2_grad(grad, result):
    return grad * _conj(result) * math.log(2.0)  # (PyTorch's order: grad * result * ln 2, each op rounding)


@op(meta=elementwise, grad=_exp2_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((C64,))),
    tags=("pointwise",))
def exp2(input: Tensor) -> Tensor:
    """``2 ** input`` elementwise.

    >>> import tensormodes as tm
    >>> tm.exp2(tm.tensor([0, 3])).tolist()
    [1.0, 8.0]
    """
    if input.dtype.kind == "c":
        # PyTorch computes e ** (ln 2 * z), scaling the parts in their own precision (for
        # complex64 a float32 product, whose rounding matters for large imaginary parts).
        scaled = _complex_from_parts(input.real * input.real.dtype.type(math.log(2.0)),
                                     input.imag * input.real.dtype.type(math.log(2.0)), input.dtype)
        return _float_unary(np.exp, scaled)
    return _float_unary(np.exp2, input)


def _expm1_grad(grad, result):
    return grad * _conj(result + 1)


@op(meta=elementwise, grad=_expm1_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((BF16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def expm1(input: Tensor) -> Tensor:
    """``exp(input) - 1``, accurate for small ``input``.

    >>> import tensormodes as tm
    >>> tm.expm1(tm.tensor([0.])).tolist()
    [0.0]
    """
    return _float_unary(np.expm1, input)


def _log_grad(grad, input):
    return grad / _conj(input)


@op(meta=elementwise, grad=_log_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((SCALAR_F64,)), Sample((F16,)),
             Sample((C64,))), tags=("core", "pointwise"))
def log(input: Tensor) -> Tensor:
    """The natural logarithm of each element (NaN for negative, -inf for zero).

    >>> import tensormodes as tm
    >>> tm.log(tm.tensor([1.])).tolist()
    [0.0]
    """
    return _float_unary(np.log, input)


def _log2_grad(grad, input):
    return grad / _conj(input * math.log(2.0))


@op(meta=elementwise, grad=_log2_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((SCALAR_F64,)), Sample((BF16,)),
             Sample((C64,))), tags=("core", "pointwise"))
def log2(input: Tensor) -> Tensor:
    """The base-2 logarithm of each element.

    >>> import tensormodes as tm
    >>> tm.log2(tm.tensor([1, 8])).tolist()
    [0.0, 3.0]
    """
    return _float_unary(np.log2, input)


def _log10_grad(grad, input):
    return grad / _conj(input * math.log(10.0))


@op(meta=elementwise, grad=_log10_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((SCALAR_F64,)), Sample((F16,)),
             Sample((C64,))), tags=("core", "pointwise"))
def log10(input: Tensor) -> Tensor:
    """The base-10 logarithm of each element.

    >>> import tensormodes as tm
    >>> tm.log10(tm.tensor([1, 100])).tolist()
    [0.0, 2.0]
    """
    return _float_unary(np.log10, input)


def _log1p_grad(grad, input):
    return grad / _conj(input + 1)


@op(meta=elementwise, grad=_log1p_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((SCALAR_F64,)), Sample((BF16,)),
             Sample((C64,))), tags=("core", "pointwise"))
def log1p(input: Tensor) -> Tensor:
    """``log(1 + input)``, accurate for small ``input``.

    >>> import tensormodes as tm
    >>> tm.log1p(tm.tensor([0.])).tolist()
    [0.0]
    """
    result = _float_unary(np.log1p, input)
    if input.dtype.kind == "c":
        # PyTorch's complex log1p is NaN (both parts) wherever a part of the input is NaN; C's
        # (NumPy's) gives inf + nan j at an infinite part beside a NaN one.
        nan = np.isnan(input.real) | np.isnan(input.imag)
        if nan.any():
            result = np.where(nan, result.dtype.type(complex(np.nan, np.nan)), result)
    return result


def _sqrt_grad(grad, result):
    return grad / _conj(2 * result)


@op(meta=elementwise, grad=_sqrt_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((SCALAR_F64,)), Sample((F16,)),
             Sample((BF16,)), Sample((C64,))), tags=("core", "pointwise"))
def sqrt(input: Tensor) -> Tensor:
    """The square root of each element (NaN for negative real inputs).

    >>> import tensormodes as tm
    >>> tm.sqrt(tm.tensor([4, 9])).tolist()
    [2.0, 3.0]
    """
    if input.dtype == np.float32:
        # float32's own square root, correctly rounded like float64's rounded to float32 (53 >=
        # 2 * 24 + 2 bits, so the double rounding changes nothing: checked on all 2**32 bit
        # patterns, NaN payloads included), without the two conversions: the same values
        with quiet():
            return np.asarray(np.sqrt(input))
    return _float_unary(np.sqrt, input)


def _complex_reciprocal(z: np.ndarray) -> np.ndarray:
    """``1 / z`` for complex ``z`` as PyTorch's kernel divides (``1 / 0`` is ``inf + nanj``)."""
    real, imag = _complex_divide(z.real.dtype.type(1), z.real.dtype.type(0), z.real, z.imag)
    return _complex_from_parts(real, imag, z.dtype)


def _reciprocal(x):
    return _complex_reciprocal(x) if x.dtype.kind == "c" else np.reciprocal(x)


def _reciprocal_sqrt(x):
    return _reciprocal(np.sqrt(x))


def _rsqrt_grad(grad, result):
    return -0.5 * grad * _conj(result.pow(3))  # (PyTorch's formula op by op)


@op(meta=elementwise, grad=_rsqrt_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((SCALAR_F64,)), Sample((F16,)),
             Sample((C64,))), tags=("core", "pointwise"))
def rsqrt(input: Tensor) -> Tensor:
    """The reciprocal of the square root of each element.

    >>> import tensormodes as tm
    >>> tm.rsqrt(tm.tensor([4.])).tolist()
    [0.5]
    """
    if input.dtype in HALF_TYPES:
        return _half_reciprocal_sqrt(input)
    result = floating(dtype_of(input))
    if result.is_complex:
        return _float_unary(_reciprocal_sqrt, input)
    with quiet():  # PyTorch's real kernel: the square root, then its reciprocal, each rounded in the dtype
        return _reciprocal_sqrt(_in(input, result))


def _sin_grad(grad, input):
    return grad * _conj(input.cos())


@op(meta=elementwise, grad=_sin_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def sin(input: Tensor) -> Tensor:
    """The sine of each element (in radians).

    >>> import tensormodes as tm
    >>> tm.sin(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.sin, input)


def _cos_grad(grad, input):
    return grad * _conj(-input.sin())


@op(meta=elementwise, grad=_cos_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((BF16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def cos(input: Tensor) -> Tensor:
    """The cosine of each element (in radians).

    >>> import tensormodes as tm
    >>> tm.cos(tm.tensor([0])).tolist()
    [1.0]
    """
    return _float_unary(np.cos, input)


def _tan_grad(grad, result):
    return grad * _conj(1 + squared(result))


@op(meta=elementwise, grad=_tan_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((UNIT,)), Sample((I32,)), Sample((SCALAR_F64,)), Sample((TensorSpec((3,), "float16", -1, 1),)),
             Sample((C64,))), tags=("core", "pointwise"))
def tan(input: Tensor) -> Tensor:
    """The tangent of each element (in radians).

    >>> import tensormodes as tm
    >>> tm.tan(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.tan, input)


def _asin_grad(grad, input):
    # PyTorch's formula, whose rsqrt decides the values at -1, 1 and non-finite complex inputs
    return grad * _conj((-input * input + 1).rsqrt())


@op(meta=elementwise, grad=_asin_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((UNIT,)), Sample((TensorSpec((3,), "int64", -1, 1),)), Sample((SCALAR_F64,)),
             Sample((TensorSpec((3,), "float16", -0.9, 0.9),)), Sample((C64,))), tags=("core", "pointwise"))
def asin(input: Tensor) -> Tensor:
    """The arcsine of each element (NaN outside [-1, 1]).

    >>> import tensormodes as tm
    >>> tm.asin(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.arcsin, input)


def _acos_grad(grad, input):
    return grad * _conj(-((-input * input + 1).rsqrt()))


@op(meta=elementwise, grad=_acos_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((UNIT,)), Sample((TensorSpec((3,), "int64", -1, 1),)), Sample((SCALAR_F64,)),
             Sample((TensorSpec((3,), "bfloat16", -0.9, 0.9),)), Sample((C64,))), tags=("core", "pointwise"))
def acos(input: Tensor) -> Tensor:
    """The arccosine of each element (NaN outside [-1, 1]).

    >>> import tensormodes as tm
    >>> tm.acos(tm.tensor([1])).tolist()
    [0.0]
    """
    return _float_unary(np.arccos, input)


def _atan_grad(grad, input):
    return grad / _conj(1 + input * input)


@op(meta=elementwise, grad=_atan_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def atan(input: Tensor) -> Tensor:
    """The arctangent of each element.

    >>> import tensormodes as tm
    >>> tm.atan(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.arctan, input)


def _sinh_grad(grad, input):
    return grad * _conj(input.cosh())


@op(meta=elementwise, grad=_sinh_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((BF16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def sinh(input: Tensor) -> Tensor:
    """The hyperbolic sine of each element.

    >>> import tensormodes as tm
    >>> tm.sinh(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.sinh, input)


def _cosh_grad(grad, input):
    return grad * _conj(input.sinh())


@op(meta=elementwise, grad=_cosh_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def cosh(input: Tensor) -> Tensor:
    """The hyperbolic cosine of each element.

    >>> import tensormodes as tm
    >>> tm.cosh(tm.tensor([0])).tolist()
    [1.0]
    """
    return _float_unary(np.cosh, input)


def _tanh_grad(grad, result):
    # One backward op (PyTorch's tanh_backward) instead of three arithmetic ops: a chain of small
    # tanh calls spends its backward pass mostly dispatching.
    return ops._tanh_backward(grad, result)


@op(meta=elementwise, grad=_tanh_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((BF16,)), Sample((C64,))),
    tags=("core", "pointwise"))
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
    # exp of -|x| never overflows; the two branches are the same function: 1 / (1 + e) and
    # e / (1 + e), one division of the picked numerator (the same values, fewer passes).
    e = np.exp(-np.absolute(x))
    return np.where(x >= 0, 1.0, e) / (e + 1)


def _sigmoid_grad(grad, result):
    # One backward op (PyTorch's sigmoid_backward), as for tanh.
    return ops._sigmoid_backward(grad, result)


@op(meta=elementwise, grad=_sigmoid_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -20, 20),)), Sample((I23,)), Sample((BOOL,)),
             Sample((SCALAR_F64,)), Sample((F16,)), Sample((C64,))), tags=("core", "pointwise"))
def sigmoid(input: Tensor) -> Tensor:
    """The logistic function ``1 / (1 + exp(-input))`` of each element.

    >>> import tensormodes as tm
    >>> tm.sigmoid(tm.tensor([0])).tolist()
    [0.5]
    """
    return _float_unary(_logistic, input)


def _reciprocal_grad(grad, result):
    return grad * _conj(-(result * result))


@op(meta=elementwise, grad=_reciprocal_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((POSITIVE_I,)), Sample((SCALAR_F64,)), Sample((BF16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def reciprocal(input: Tensor) -> Tensor:
    """``1 / input`` elementwise (integers give the default float dtype).

    >>> import tensormodes as tm
    >>> tm.reciprocal(tm.tensor([2, 4])).tolist()
    [0.5, 0.25]
    """
    if input.dtype.kind == "c":  # in its own dtype: float32 parts overflow where PyTorch's do
        return _complex_reciprocal(input)
    return _float_unary(np.reciprocal, input)


def _relu_grad(grad, result):
    return ops._threshold_backward(grad, result, 0)


@op(errors=(Sample((BOOL,)), Sample((C64,))),
    meta=elementwise, grad=_relu_grad, method=True, inplace=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((BF16,))), tags=("core", "pointwise"))
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


def _threshold_backward_grad(grad, input, threshold, needs_input_grad):
    # Linear in grad_output (a mask) and constant in input but at the threshold (zeros like the
    # gradient, as PyTorch's formula: the engine sums and casts them to the input's).
    return (ops._threshold_backward(grad, input, threshold) if needs_input_grad[0] else None,
            _zeros_like(grad) if needs_input_grad[1] else None)


@op(errors=(Sample((M23, TensorSpec((3, 2)), 0)), Sample((BOOL, BOOL, 0)), Sample((C64, C64, 0))),
    meta=broadcasting("input", "grad_output"), grad=_threshold_backward_grad, samples=(
    Sample((M23, M23, 0)), Sample((F64, ROW, 0.5)), Sample((M23, I23, 1)), Sample((SCALAR_F64, SCALAR_F64, 0)),
    Sample((BF16, BF16, 0)), Sample((F16, TensorSpec((3,)), -0.5))),
    aten="threshold_backward.default",
    schema={"input": "Tensor self"}, tags=("pointwise",))
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
    bits = _SAME_WIDTH_BITS.get(result_type)
    if bits is not None and input.dtype == grad_output.dtype and input.shape == grad_output.shape and input.ndim and \
            input.flags.c_contiguous and grad_output.flags.c_contiguous:
        # Branch-free (np.where's loop is 4-6x slower on a random mask): the gradient's bits, and
        # all-zero bits (+0.0) where input <= threshold, as the np.where below gives.
        # (times the "keep" mask, a bool: an unsigned integer times 1 or 0 is its bits or none)
        keep = np.less_equal(input, threshold)
        return np.multiply(grad_output.view(bits), np.logical_not(keep, out=keep)).view(result_type)
    result = np.where(input <= threshold, 0, grad_output)
    return np.asarray(result if result.dtype == result_type else result.astype(result_type))


# An unsigned integer dtype of each plain float dtype's width, to mask its values bitwise.
_SAME_WIDTH_BITS = {np.dtype(np.float32): np.dtype(np.uint32), np.dtype(np.float64): np.dtype(np.uint64)}


@op(errors=(Sample((BOOL,)), Sample((C64,))),
    meta=elementwise, grad=_step_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,))), tags=("core", "pointwise"))
def floor(input: Tensor) -> Tensor:
    """The largest integer not greater than each element (integer tensors are copied).

    >>> import tensormodes as tm
    >>> tm.floor(tm.tensor([-1.5, 1.5])).tolist()
    [-2.0, 1.0]
    """
    return _rounding(np.floor, "floor", input)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_step_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((BF16,))), tags=("core", "pointwise"))
def ceil(input: Tensor) -> Tensor:
    """The smallest integer not less than each element (integer tensors are copied).

    >>> import tensormodes as tm
    >>> tm.ceil(tm.tensor([-1.5, 1.5])).tolist()
    [-1.0, 2.0]
    """
    return _rounding(np.ceil, "ceil", input)


@op(errors=(Sample((BOOL,)),),
    meta=elementwise, grad=_step_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,))), tags=("core", "pointwise"))
def trunc(input: Tensor) -> Tensor:
    """Each element rounded toward zero (integer tensors are copied).

    >>> import tensormodes as tm
    >>> tm.trunc(tm.tensor([-1.5, 1.5])).tolist()
    [-1.0, 1.0]
    """
    return _rounding(np.trunc, "trunc", input)


@op(errors=(Sample((C64,)), Sample((I23,), {"decimals": 1})),
    meta=elementwise, grad=_step_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -100, 100),)), Sample((I23,)), Sample((SCALAR_F64,)),
             Sample((M23,), {"decimals": 2}), Sample((TensorSpec((4,), "float64", -1e4, 1e4),), {"decimals": -2}),
             Sample((F16,), {"decimals": 1}), Sample((BF16,))),
    aten={"round.default": ("decimals",), "round.decimals": ("decimals: int=", "-core")}, tags=("core", "pointwise"))
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
    d = dtype_of(input)
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


@op(errors=(Sample((I23,)),),
    meta=elementwise, grad=_frac_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -5, 5),)), Sample((SCALAR_F64,)), Sample((F16,))),
    tags=("pointwise",))
def frac(input: Tensor) -> Tensor:
    """The fractional part of each element, ``input - trunc(input)``.

    >>> import tensormodes as tm
    >>> tm.frac(tm.tensor([1.5, -2.25])).tolist()
    [0.5, -0.25]
    """
    d = dtype_of(input)
    if not d.is_floating_point:
        raise not_implemented("frac_cpu", d)
    with quiet():
        return _as(input - np.trunc(input), d)


def _nan_to_num_grad(grad, input):
    return grad * input.isfinite()  # PyTorch's formula (an infinite or NaN gradient stays NaN where masked)


@op(meta=elementwise,
    grad=_nan_to_num_grad, differentiable=no_complex_autograd("nan_to_num"), method=True, inplace=True,
    inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)),
             Sample((M23, 1.0, 2.0, -2.0)), Sample((BF16,), {"posinf": 1.0})),
    schema={"nan": "float?=None"}, tags=("pointwise",))
def nan_to_num(input: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """Replaces NaN with ``nan``, and infinities with ``posinf`` / ``neginf`` (by default the
    largest / lowest finite value of the dtype). Integer tensors are copied.

    >>> import tensormodes as tm
    >>> from math import inf, nan
    >>> tm.nan_to_num(tm.tensor([nan, inf, 1.0]), posinf=9.0).tolist()
    [0.0, 9.0, 1.0]
    """
    d = dtype_of(input)
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


def _asinh_grad(grad, input):
    return grad * _conj((input.pow(2) + 1).rsqrt())


@op(meta=elementwise, grad=_asinh_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((C64,))),
    tags=("core", "pointwise"))
def asinh(input: Tensor) -> Tensor:
    """The inverse hyperbolic sine of each element.

    >>> import tensormodes as tm
    >>> tm.asinh(tm.tensor([0])).tolist()
    [0.0]
    """
    return _float_unary(np.arcsinh, input)


_ABOVE_ONE = TensorSpec((2, 3), "float32", 1.1, 4.0)


def _acosh_grad(grad, input):
    # PyTorch's two forms: sqrt(x * y) = sqrt(x) sqrt(y) holds only for real x, y > 0
    if input.is_complex():
        return grad * ((input + 1).rsqrt() * (input - 1).rsqrt()).conj()
    return grad * (input * input - 1).rsqrt()


@op(meta=elementwise, grad=_acosh_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((_ABOVE_ONE,)), Sample((POSITIVE_I,)), Sample((TensorSpec((), "float64", 1.5, 3.0),)),
             Sample((TensorSpec((3,), "bfloat16", 1.1, 4.0),)), Sample((TensorSpec((3,), "complex64", 1.2, 2.0),))),
    tags=("core", "pointwise"))
def acosh(input: Tensor) -> Tensor:
    """The inverse hyperbolic cosine of each element (NaN below 1 for real inputs).

    >>> import tensormodes as tm
    >>> tm.acosh(tm.tensor([1])).tolist()
    [0.0]
    """
    return _float_unary(np.arccosh, input)


def _atanh_grad(grad, input):
    return grad / _conj(1 - squared(input))


@op(meta=elementwise, grad=_atanh_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((UNIT,)), Sample((UNIT_INTEGERS,)), Sample((UNIT_SCALAR,)),
             Sample((TensorSpec((3,), "float16", -0.9, 0.9),)), Sample((TensorSpec((3,), "complex64", -0.6, 0.6),))),
    tags=("core", "pointwise"))
def atanh(input: Tensor) -> Tensor:
    """The inverse hyperbolic tangent of each element (+-inf at +-1, NaN beyond for real inputs).

    >>> import tensormodes as tm
    >>> tm.atanh(tm.tensor([0, 1])).tolist()
    [0.0, inf]
    """
    return _float_unary(np.arctanh, input)


def _logit_grad(grad, input, eps):
    if not ops.is_grad_enabled():  # one backward op, PyTorch's (it has no derivative: the composite else)
        return ops.ops.aten.logit_backward.default(grad, input, eps)
    local = grad / (input * (1 - input))
    if eps is None or eps < 0:  # outside [0, 1] logit is NaN, and so is its gradient
        return local.where(~((input < 0) | (input > 1)), math.nan)
    # Clamped elements (strictly outside [eps, 1 - eps]) do not move the result.
    return local.where(~((input < eps) | (input > 1 - eps)), 0)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_logit_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", 0.05, 0.95),)), Sample((TensorSpec((2, 3), "int64", 0, 1),)),
             Sample((TensorSpec((), "float64", 0.1, 0.9),)), Sample((TensorSpec((3,), "float16", 0.1, 0.9),)),
             Sample((TensorSpec((4,), "float64", 0.1, 0.9), 0.25)), Sample((BF16,), {"eps": 0.1}),
             Sample((TensorSpec((2, 3), "float64", 0.05, 0.95),), {"eps": -1.0})), tags=("pointwise",))
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(input / (1 - input))`` elementwise; with ``eps`` (>= 0), ``input`` is first
    clamped to ``[eps, 1 - eps]``.

    >>> import tensormodes as tm
    >>> tm.logit(tm.tensor([0.5, 0.0])).tolist()
    [0.0, -inf]
    >>> tm.logit(tm.tensor([0.0]), eps=0.5).tolist()
    [0.0]
    """
    if input.dtype.kind == "c":
        raise not_implemented("logit_cpu", dtype_of(input))
    result = floating(dtype_of(input))
    # As PyTorch's loop: the clamp and the ratio in the result's dtype (float16 rounds after
    # each step), then the logarithm (computed wide: it rounds as PyTorch's does far more often).
    work = result._np
    x = input.astype(work)
    with quiet():
        if eps is not None and eps >= 0:
            low = work.type(eps)
            high = work.type(1) - low
            x = np.where(x < low, low, np.where(x > high, high, x))
        ratio = x / (work.type(1) - x)
        return _as(np.log(ratio.astype(_wide(result)._np)), result)


def _angle_conversion(name: str, factor: float, input: np.ndarray) -> np.ndarray:
    if input.dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    return _float_unary(lambda x: x * factor, input)


def _deg2rad_grad(grad):
    return grad * (math.pi / 180)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_deg2rad_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -360, 360),)), Sample((I23,)), Sample((SCALAR_F64,)),
             Sample((F16,)), Sample((BOOL,))), tags=("pointwise",))
def deg2rad(input: Tensor) -> Tensor:
    """Converts each element from degrees to radians.

    >>> import tensormodes as tm
    >>> tm.deg2rad(tm.tensor([180.0, 0.0])).tolist()
    [3.1415927410125732, 0.0]
    """
    return _angle_conversion("deg2rad", math.pi / 180, input)


def _rad2deg_grad(grad):
    return grad * (180 / math.pi)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_rad2deg_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((BF16,)), Sample((BOOL,))),
    tags=("pointwise",))
def rad2deg(input: Tensor) -> Tensor:
    """Converts each element from radians to degrees.

    >>> import tensormodes as tm
    >>> tm.rad2deg(tm.tensor([0.0, -1.0], dtype=tm.float64)).tolist()
    [0.0, -57.29577951308232]
    """
    return _angle_conversion("rad2deg", 180 / math.pi, input)


def _sinc_grad(grad, input):
    # d/dx sin(pi x) / (pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2), and 0 at x = 0, in
    # PyTorch's steps (which decide the rounding of half types)
    def times_pi(t):  # a half type times a number is a float32 product rounded once, in PyTorch
        return (t.float() * math.pi).to(t.dtype) if t.dtype in (dt.float16, dt.bfloat16) else t * math.pi

    scaled = times_pi(input)
    squared = times_pi(input * input)
    local = (scaled * scaled.cos() - scaled.sin()) / squared
    return zero_where(squared == 0, grad * _conj(local))  # (PyTorch's where)


@op(meta=elementwise, grad=_sinc_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((C64,))),
    tags=("pointwise",))
def sinc(input: Tensor) -> Tensor:
    """The normalized sinc function ``sin(pi x) / (pi x)`` of each element (1 at 0).

    >>> import tensormodes as tm
    >>> tm.sinc(tm.tensor([0.0, 0.5], dtype=tm.float64)).tolist()
    [1.0, 0.6366197723675814]
    """
    return _float_unary(np.sinc, input)
