"""Arithmetic: ``add``, ``sub``, ``mul``, ``div`` and their relatives, powers, remainders, and
binary math (``atan2``, ``hypot``, ``logaddexp``, ``lerp``, ``addcmul``, ``xlogy``, ``gcd`` ...).

Float16 and bfloat16 arithmetic computes in float32 and rounds once at the end, as PyTorch's
CPU kernels do (see ``_pointwise``). Each op's gradient formula sits just above it.
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import cmath
import math
from numbers import Number

import numpy as np

from .. import _dtype as dt
from ._pointwise import (
    _ND,
    _as,
    _both_scalars,
    _check_representable,
    _complex_log_add_exp,
    _in,
    _integer_operands,
    _invalid_arguments,
    _is_integral,
    _opmath,
    _raise_broadcast_error,
    _unsupported,
    _wide,
    _zeros_like,
)
from ._samples import BF16, BOOL, C64, COLUMN, F16, F64, I23, I32, M23, POSITIVE, POSITIVE_I, ROW, SCALAR_F64, U8
from .common import (
    PLAIN_FLOATS,
    check_same_shape_or_broadcast,
    cpp_type_name,
    dispatch_listens,
    dtype_of,
    floating,
    is_tensor,
    no_derivative,
    operand_dtype,
    ops,
    quiet,
    scalar_type_name,
    zero_where,
)
from .common import conjugate as _conj
from .meta_rules import broadcasting, elementwise
from .registry import OWN, Dunder, Sample, Tensor, TensorSpec, alias, op


def _int_divisor_check(divisor) -> None:
    """Integer division by zero is an error in PyTorch (floats give inf / NaN)."""
    zero = divisor == 0
    if zero.any() if type(zero) is _ND else zero:
        raise RuntimeError("ZeroDivisionError")


def _log_of_number(x):
    """``log`` of a Python number base, NaN (or complex) for negative numbers as for tensors."""
    if isinstance(x, complex):
        return cmath.log(x)
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


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
            if d.is_complex:
                # PyTorch multiplies by alpha even when it is 1, as complex numbers: an infinite
                # part of ``other`` times alpha's zero imaginary part makes the other part NaN.
                b = np.multiply(b, compute._np.type(alpha))
            elif not plain:
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


def _add_grad(grad, alpha, needs_input_grad):
    # No multiply for a number operand (``y + 0.1``), whose gradient nobody wants, nor for alpha 1:
    # the engine copies a gradient it is handed twice before a leaf keeps it.
    if not needs_input_grad[1]:
        return grad, None
    return grad, grad if alpha == 1 else grad * _conj(alpha)


@op(errors=(Sample((M23, TensorSpec((3, 2)))), Sample((I23, I23), {"alpha": 1.5})),
    meta=elementwise, grad=_add_grad, method=True, inplace=True, out=True, ufunc=np.add,
    dunders=(Dunder("__add__"), Dunder("__radd__"), Dunder("__iadd__", inplace=True)),
    samples=(Sample((M23, M23)), Sample((M23, 2.5), {"alpha": 2}), Sample((I23, ROW)),
             Sample((I23, I32), {"alpha": -3}), Sample((BOOL, BOOL)), Sample((U8, 300)),
             Sample((F16, SCALAR_F64)), Sample((BF16, F16), {"alpha": 0.5}), Sample((C64, 1j)),
             Sample((SCALAR_F64, 3))), tags=("core", "pointwise"),
    aten={"add.Tensor": ("out=out",)})
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


def _sub_grad(grad, alpha, needs_input_grad):
    # No multiply for alpha 1, as PyTorch's formula (its dispatch level sees just the neg); nothing
    # for a number operand, whose gradient nobody wants.
    if not needs_input_grad[1]:
        return grad, None
    return grad, -grad if alpha == 1 else -grad * _conj(alpha)


@op(errors=(Sample((BOOL, BOOL)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_sub_grad, method=True, inplace=True, out=True, ufunc=np.subtract,
    dunders=(Dunder("__sub__"), Dunder("__rsub__", OWN, reflected=True), Dunder("__isub__", inplace=True)),
    samples=(Sample((M23, M23)), Sample((M23, 1), {"alpha": 3}), Sample((I23, ROW)),
             Sample((U8, U8)), Sample((F16, 0.25), {"alpha": 2}), Sample((SCALAR_F64, M23)), Sample((C64, ROW))),
    tags=("core", "pointwise"),
    aten={"sub.Tensor": ("out=out",)})
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


def _rsub_grad(grad, alpha, needs_input_grad):
    if not needs_input_grad[0]:
        return None, grad
    return -grad if alpha == 1 else -grad * _conj(alpha), grad


@op(errors=(Sample((BOOL, BOOL)), Sample((M23, TensorSpec((3, 2))))),
    meta=broadcasting("other", "input"), grad=_rsub_grad,
    samples=(Sample((M23, M23)), Sample((M23, 2)), Sample((I23, 5), {"alpha": 2}), Sample((SCALAR_F64, ROW))),
    aten={"rsub.Tensor": (), "rsub.Scalar": ("alpha: ~Scalar", "+pointwise")})
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


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise, grad=_mul_grad, save_only_for={"input": "other", "other": "input"},
    method=True, inplace=True, out=True, ufunc=np.multiply,
    dunders=(Dunder("__mul__"), Dunder("__rmul__"), Dunder("__imul__", inplace=True)),
    samples=(Sample((M23, M23)), Sample((M23, -2)), Sample((I23, ROW)), Sample((BOOL, BOOL)),
             Sample((BOOL, 3)), Sample((U8, 40)), Sample((F16, BF16)), Sample((C64, 2.5)),
             Sample((SCALAR_F64, I32))), tags=("core", "pointwise"),
    aten={"mul.Tensor": ("out=out",)})
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
    if type(input) is _ND and type(other) is _ND and input.dtype == other.dtype and input.dtype in PLAIN_FLOATS:
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
            # PyTorch's order, (input / other) / other: it decides the rounding in half types
            # and the value at an infinite divisor (0, not inf / inf)
            -grad * _conj((input / other) / other) if needs_input_grad[1] else None)


@op(errors=(Sample((M23, M23), {"rounding_mode": "round"}), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_div_grad, save_only_for={"input": "other"}, method=True, inplace=True, out=True,
    dunders=(Dunder("__truediv__"), Dunder("__rtruediv__", OWN, reflected=True),
             Dunder("__itruediv__", inplace=True)),
    samples=(Sample((M23, _DIVISORS)), Sample((I23, POSITIVE_I)), Sample((I23, 2)), Sample((M23, 0.5)),
             Sample((BOOL, POSITIVE_I)), Sample((F16, _DIVISORS)), Sample((C64, C64)),
             Sample((M23, _DIVISORS), {"rounding_mode": "trunc"}),
             Sample((M23, _DIVISORS), {"rounding_mode": "floor"}),
             Sample((I23, POSITIVE_I), {"rounding_mode": "trunc"}),
             Sample((I23, TensorSpec((3,), "int64", -3, -1)), {"rounding_mode": "floor"}),
             Sample((BF16, 0.3), {"rounding_mode": "floor"}), Sample((3, _DIVISORS))),
    aten={
        "div.Tensor": ("rounding_mode", "out=out"),
        "div.Tensor_mode": ("rounding_mode: str?=", "out=out_mode"),
    },
    tags=("core", "pointwise"))
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


true_divide = alias("true_divide", of="div", method=True, inplace=True, drops=("rounding_mode",),
                    samples=(Sample((M23, _DIVISORS)), Sample((I23, POSITIVE_I)), Sample((I23, 4)),
                             Sample((SCALAR_F64, F16))),
                    doc="""Alias for ``div`` with ``rounding_mode=None``.

    >>> import tensormodes as tm
    >>> tm.true_divide(tm.tensor([1, 3]), 2).tolist()
    [0.5, 1.5]
    """)


@op(errors=(Sample((M23, TensorSpec((3, 2)))), Sample((C64, C64))),
    meta=elementwise, grad=no_derivative("floor_divide"), method=True, inplace=True, out=True,
    dunders=(Dunder("__floordiv__", OWN), Dunder("__rfloordiv__", OWN, reflected=True),
             Dunder("__ifloordiv__", inplace=True)),
    samples=(Sample((M23, _DIVISORS)), Sample((I23, POSITIVE_I)), Sample((I23, -3)), Sample((U8, 4)),
             Sample((F16, 0.75)), Sample((SCALAR_F64, M23)), Sample((7, POSITIVE_I))),
    aten={"floor_divide.default": ("inplace=Tensor",)})
def floor_divide(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Divides and rounds down (``//``), keeping the promoted dtype.

    >>> import tensormodes as tm
    >>> (tm.tensor([-7, 7]) // 2).tolist()
    [-4, 3]
    """
    return _floor_division(input, other)


def _remainder_grad(grad, input, other, needs_input_grad):
    # The operands are saved only for ``other``'s gradient (save_only_for), as by RemainderBackward0.
    if needs_input_grad[1] and not is_tensor(input):  # remainder(Scalar, Tensor): PyTorch has no derivative
        raise RuntimeError("derivative for aten::remainder is not implemented")
    return grad, -grad * input.div(other, rounding_mode="floor") if needs_input_grad[1] else None


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_remainder_grad, save_only_for={"input": "other", "other": "other"},
    method=True, inplace=True, out=True,
    dunders=(Dunder("__mod__"), Dunder("__rmod__", OWN, reflected=True), Dunder("__imod__", inplace=True)),
    samples=(Sample((M23, _DIVISORS)), Sample((I23, TensorSpec((3,), "int64", -4, -1))), Sample((I23, 3)),
             Sample((M23, -1.5)), Sample((F16, 0.7)), Sample((SCALAR_F64, _DIVISORS)), Sample((5, POSITIVE_I)),
             Sample((U8, 7))),
    aten={
        "remainder.Tensor": (),
        "remainder.Scalar": (),
        "remainder.Scalar_Tensor": ("-core", "inplace=", "out+generated", "out-pointwise"),
    },
    tags=("core", "pointwise"))
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


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise,
    grad=_fmod_grad, save_only_for={"input": "other", "other": "other"}, method=True, inplace=True, out=True,
    samples=(Sample((M23, _DIVISORS)), Sample((I23, TensorSpec((3,), "int64", -4, -1))), Sample((I23, 3)),
             Sample((M23, -1.5)), Sample((BF16, 0.7)), Sample((SCALAR_F64, _DIVISORS))),
    aten={"fmod.Tensor": (), "fmod.Scalar": ()}, tags=("core", "pointwise"))
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


def _pow_grad(grad, result, input, exponent, needs_input_grad):
    # ``result`` is saved only for the exponent's gradient (save_only_for): None otherwise.
    input_grad = exponent_grad = None
    if is_tensor(input) and needs_input_grad[0]:
        if is_tensor(exponent):
            # d/dx x**0 is 0 everywhere, even where x**-1 is not finite.
            local = zero_where(exponent == 0, exponent * input ** (exponent - 1))
        elif exponent == 0:
            return ops.zeros_like(input), None  # PyTorch's pow_backward (x**-1 may be infinite: no product)
        else:
            local = exponent * input ** (exponent - 1)
        input_grad = grad * _conj(local)
    if is_tensor(exponent) and needs_input_grad[1]:
        if is_tensor(input):
            # 0 ** e has zero gradient in e where e is real and >= 0 (log(0) would give NaN); the
            # base is logged in the result's dtype, as PyTorch (a negative int base in a complex power)
            # (PyTorch's masks, op for op)
            if exponent.dtype.is_complex:
                real_exponent = (exponent.imag == 0).logical_and(exponent.real >= 0)
            else:
                real_exponent = exponent >= 0
            base = input if input.dtype == result.dtype else input.to(result.dtype)
            local = zero_where((input == 0).logical_and(real_exponent), result * base.log())
        else:
            local = result * _log_of_number(input) if input != 0 else _zeros_like(result)
        exponent_grad = grad * _conj(local)
    return input_grad, exponent_grad


@op(errors=(Sample((I23, -1)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_pow_grad, save_only_for={"result": "exponent"}, method=True, inplace=True,
    out=True,
    dunders=(Dunder("__pow__", OWN), Dunder("__rpow__", OWN, reflected=True), Dunder("__ipow__", OWN, inplace=True)),
    samples=(Sample((POSITIVE, M23)), Sample((M23, 2)), Sample((M23, 0.5)), Sample((I23, 3)),
             Sample((I23, TensorSpec((2, 3), "int64", -2, 3))), Sample((2, I32)), Sample((2.5, I23)),
             Sample((I23, -1.0)), Sample((BOOL, 2)), Sample((F16, 2)), Sample((BF16, BF16)),
             Sample((C64, 2)), Sample((SCALAR_F64, POSITIVE)), Sample((U8, 3))),
    aten={
        "pow.Tensor_Tensor": ("inplace=Tensor",),
        "pow.Tensor_Scalar": ("inplace=Scalar",),
        "pow.Scalar": ("input: Scalar", "exponent: Tensor", "inplace="),
    },
    tags=("core", "pointwise"))
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
        if type(exponent) is float and exponent == -0.5 and type(input) is _ND and d.is_floating_point \
                and d is not dt.float16:
            # PyTorch computes x ** -0.5 as rsqrt(x) (not for float16): NaN at -inf, -inf at -0.
            # (NumPy's power gives 0 and inf)
            return _as(1 / np.sqrt(_in(input, d, compute)), d)
        try:
            if d is dt.complex64:  # PyTorch computes complex64 powers in complex64 (its overflow included)
                compute = d
            return _as(_power(_in(input, d, compute), _in(exponent, d, compute), exponent), d)
        except ValueError:
            _raise_broadcast_error(input, exponent)
            raise


# Number exponents PyTorch's complex kernel computes apart: 2 and 3 by multiplications (as NumPy's
# power), the others as below.
_COMPLEX_EXPONENT_KERNELS = {
    1: lambda z: np.array(z, copy=True),  # the base itself, NaN parts kept (PyTorch copies)
    0.5: np.sqrt,
    -0.5: lambda z: 1 / np.sqrt(z),
    -1: lambda z: 1 / z,
    -2: lambda z: 1 / (z * z),
}


def _power(base, exponent, given):
    """``base ** exponent`` as PyTorch computes it (``given``: the exponent as passed): NumPy's
    power for real operands. For complex ones PyTorch runs C's cpow, exp(exponent * log(base)),
    apart from the number exponents above: so does NumPy's power, except at integer exponents,
    which it multiplies out (its overflow and 1 / inf give NaN where PyTorch gives inf or 0)."""
    if np.result_type(base, exponent).kind != "c":
        return np.power(base, exponent)
    if type(given) is not _ND:
        if given in (2, 3):
            return np.power(base, exponent)
        for value, kernel in _COMPLEX_EXPONENT_KERNELS.items():
            if given == value:
                return kernel(base)
    real = np.real(exponent)
    integral = (np.imag(exponent) == 0) & np.isfinite(real) & (real == np.round(real))
    if not np.any(integral):
        return np.power(base, exponent)
    cpow = np.where(np.equal(exponent, 0), 1, np.exp(exponent * np.log(base)))
    return np.where(integral, cpow, np.power(base, exponent))


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


def _atan2_grad(grad, input, other, needs_input_grad):
    # PyTorch's steps (a reciprocal, then products), which decide the rounding of half types
    reciprocal = (input * input + other * other).reciprocal()
    # At (0, 0) (or where the squares underflow) the reciprocal is infinite: PyTorch's gradient is 0 there
    reciprocal = reciprocal.masked_fill(reciprocal == math.inf, 0)
    return (grad * other * reciprocal if needs_input_grad[0] else None,
            grad * -input * reciprocal if needs_input_grad[1] else None)


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_atan2_grad, method=True, inplace=True, out=True,
    samples=(Sample((M23, M23)), Sample((M23, ROW)), Sample((I23, I32)), Sample((F16, F16)),
             Sample((SCALAR_F64, BF16))), tags=("core", "pointwise"),
    aten={"atan2.default": ("out+core",)})
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The arctangent of ``input / other`` in the right quadrant (integers give the default float dtype).

    >>> import tensormodes as tm
    >>> tm.atan2(tm.tensor([0.0]), tm.tensor([1.0])).tolist()
    [0.0]
    """
    return _float_binary(np.arctan2, input, other, "atan2_cpu")


def _hypot_grad(grad, result, input, other, needs_input_grad):
    # Each operand is saved only for its own gradient (save_only_for), as by HypotBackward0.
    return (grad * input / result if needs_input_grad[0] else None,
            grad * other / result if needs_input_grad[1] else None)


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise,
    grad=_hypot_grad, save_only_for={"input": "input", "other": "other"}, method=True, inplace=True, out=True,
    samples=(Sample((M23, M23)), Sample((M23, ROW)), Sample((F16, F16)), Sample((F64, I23)),
             Sample((SCALAR_F64, BF16))), tags=("pointwise",))
def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` elementwise, without intermediate overflow (floating dtypes only).

    >>> import tensormodes as tm
    >>> tm.hypot(tm.tensor([3.0]), tm.tensor([4.0])).tolist()
    [5.0]
    """
    return _float_binary(np.hypot, input, other, "hypot_cpu", integers=False)


def _log_add_exp(a, b):
    return np.logaddexp(a, b)


def _logaddexp_grad(grad, input, other, needs_input_grad):
    return (grad / _conj(1 + (other - input).exp()) if needs_input_grad[0] else None,
            grad / _conj(1 + (input - other).exp()) if needs_input_grad[1] else None)


@op(errors=(Sample((M23, TensorSpec((3, 2)))), Sample((I23, I23))),
    meta=elementwise, grad=_logaddexp_grad, method=True, out=True,
    samples=(Sample((M23, M23)), Sample((M23, ROW)), Sample((F16, F16)), Sample((F64, I23)),
             Sample((SCALAR_F64, BF16)), Sample((C64, C64))), tags=("pointwise",))
def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` elementwise, without overflow (floating dtypes only).

    >>> import tensormodes as tm
    >>> tm.logaddexp(tm.tensor([-100.0, 5.0]), tm.tensor([1000.0, -1000.0])).tolist()
    [1000.0, 5.0]
    """
    d = operand_dtype(input, other)
    if d.is_complex:
        # NumPy's logaddexp is real-only; PyTorch's complex one is its logcumsumexp's helper, in the
        # complex dtype itself (not widened: the angle of a large imaginary part depends on it)
        check_same_shape_or_broadcast(np.shape(input), np.shape(other))
        with quiet():
            return _as(_complex_log_add_exp(_in(input, d, d), _in(other, d, d)), d)
    return _float_binary(_log_add_exp, input, other, "logaddexp_cpu", integers=False)


def _lerp_grad(grad, input, end, weight, needs_input_grad):
    # ``input`` and ``end`` are saved only for a tensor ``weight``'s gradient (save_only_for), as by
    # LerpBackward1; LerpBackward0 (a number ``weight``) saves no tensor.
    return (grad * _conj(1 - weight) if needs_input_grad[0] else None,
            grad * _conj(weight) if needs_input_grad[1] else None,
            grad * _conj(end - input) if needs_input_grad[2] else None)


@op(errors=(Sample((M23, F64, 0.5)), Sample((M23, TensorSpec((3, 2)), 0.5)), Sample((I23, I23, 0.5))),
    meta=elementwise,
    grad=_lerp_grad, save_only_for={"input": "weight", "end": "weight"}, method=True, inplace=True, out=True,
    samples=(Sample((M23, M23, 0.3)), Sample((M23, M23, 0.8)), Sample((M23, ROW, COLUMN)),
             Sample((F16, F16, 0.25)), Sample((M23, M23, TensorSpec((), "float64", 0, 1))),
             Sample((C64, C64, 0.5)), Sample((SCALAR_F64, SCALAR_F64, SCALAR_F64))),
    aten={"lerp.Scalar": (), "lerp.Tensor": ()}, tags=("pointwise",))
def lerp(input: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)``; ``input`` and ``end`` (and a
    tensor ``weight``) must share one floating dtype.

    >>> import tensormodes as tm
    >>> tm.lerp(tm.tensor([0.0, 10.0]), tm.tensor([10.0, 20.0]), 0.5).tolist()
    [5.0, 15.0]
    """
    d = dtype_of(input)
    if end.dtype != input.dtype:
        raise RuntimeError(f"expected dtype {cpp_type_name(d)} for `end` but got dtype "
                           f"{cpp_type_name(dtype_of(end))}")
    if type(weight) is _ND and weight.ndim == 0:
        # A 0-dim tensor weight takes part in type promotion as a 0-dim operand: a complex one
        # makes the result complex.
        if weight.dtype.kind == "c" and not d.is_complex:
            d = dt.complex128 if d is dt.float64 else dt.complex64
            input, end = input.astype(d._np), end.astype(d._np)
        weight = weight.item()
    elif isinstance(weight, complex) and not d.is_complex:
        raise RuntimeError(f"value cannot be converted to type {cpp_type_name(_opmath(d))} without overflow")
    tensor_weight = type(weight) is _ND
    if tensor_weight and weight.dtype != input.dtype:
        raise RuntimeError(f"expected dtype {cpp_type_name(d)} for `weight` but got dtype "
                           f"{cpp_type_name(dtype_of(weight))}")
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


_ADDC_SAMPLES = (Sample((M23, M23, M23)), Sample((M23, ROW, COLUMN), {"value": 0.5}),
                 Sample((F16, F16, TensorSpec((3,), "float16", 0.5, 3.0)), {"value": 2}),
                 Sample((SCALAR_F64, M23, _DIVISORS)), Sample((BF16, BF16, BF16), {"value": -1}))


def _addcmul_grad(grad, tensor1, tensor2, value, needs_input_grad):
    # Each factor is saved only for the other's gradient (save_only_for), as by AddcmulBackward0.
    return (grad, grad * _conj(tensor2 * value) if needs_input_grad[1] else None,
            grad * _conj(tensor1 * value) if needs_input_grad[2] else None)


@op(errors=(Sample((M23, M23, TensorSpec((3, 2)))),),
    meta=elementwise, grad=_addcmul_grad, save_only_for={"tensor1": "tensor2", "tensor2": "tensor1"},
    method=True, inplace=True, out=True,
    samples=(*_ADDC_SAMPLES, Sample((I23, I23, I32), {"value": 2}), Sample((I23, I23, M23))), tags=("pointwise",))
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


@op(errors=(Sample((I23, I23, POSITIVE_I)), Sample((M23, M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_addcdiv_grad, save_only_for={"tensor1": "tensor2"}, method=True, inplace=True, out=True,
    samples=(*_ADDC_SAMPLES, Sample((I23, C64, POSITIVE_I))), tags=("pointwise",))
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


def _x_log_y(x, y):
    # 0 * log(y) is 0, even for y = 0 or y < 0; a NaN y stays NaN.
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


def _xlogy_grad(grad, input, other, needs_input_grad):
    input_grad = other_grad = None
    if needs_input_grad[0]:
        input_grad = ops.xlogy(grad, other)
        if is_tensor(other):
            input_grad = input_grad.masked_fill((input == 0) & (other <= 0), 0)  # PyTorch's mask
        elif other <= 0:
            input_grad = input_grad.masked_fill(input == 0, 0)
    if needs_input_grad[1]:
        other_grad = grad * input / other
    return input_grad, other_grad


@op(errors=(Sample((M23, TensorSpec((3, 2)))), Sample((C64, C64))),
    meta=elementwise, grad=_xlogy_grad, method=True, inplace=True, out=True,
    samples=(Sample((M23, POSITIVE)), Sample((M23, TensorSpec((3,), "float64", 0.5, 3))),
             Sample((I23, POSITIVE_I)), Sample((F16, TensorSpec((3,), "float16", 0.5, 2))), Sample((M23, 2.5)),
             Sample((3, POSITIVE)), Sample((SCALAR_F64, TensorSpec((), "float64", 0.5, 2))),
             Sample((TensorSpec((3,), "int64", 0, 0), TensorSpec((3,), "float32", -1, 1)))),
    aten={
        "xlogy.Tensor": ("out=OutTensor",),
        "xlogy.Scalar_Other": ("other: Scalar", "out=OutScalar_Other", "inplace-pointwise"),
        "xlogy.Scalar_Self": ("input: Scalar", "out=OutScalar_Self", "inplace="),
    },
    tags=("pointwise",))
def xlogy(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input * log(other)`` elementwise, 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> import tensormodes as tm
    >>> tm.xlogy(tm.tensor([0.0, 2.0]), tm.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    if _both_scalars(input, other):
        raise _invalid_arguments("xlogy", input, other)
    return _float_binary(_x_log_y, input, other, "xlogy_cpu")


def _logaddexp2_grad(grad, input, other):
    return grad / (1 + (other - input).exp2()), grad / (1 + (input - other).exp2())


@op(errors=(Sample((M23, TensorSpec((3, 2)))), Sample((C64, C64))),
    meta=elementwise, grad=_logaddexp2_grad, method=True, out=True,
    samples=(Sample((M23, M23)), Sample((M23, ROW)), Sample((F16, F16)), Sample((F64, I23)),
             Sample((SCALAR_F64, BF16))), tags=("pointwise",))
def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` elementwise, without overflow (real floating dtypes only).

    >>> import tensormodes as tm
    >>> tm.logaddexp2(tm.tensor([1.0, 2000.0]), tm.tensor([1.0, 0.0])).tolist()
    [2.0, 2000.0]
    """
    return _float_binary(np.logaddexp2, input, other, "logaddexp2_cpu", integers=False)


def _copysign_grad(grad, input, other_shape, result, needs_input_grad):
    # |input| with the sign of ``other``: the ratio result / input is +-1 (0 where input is 0);
    # other's gradient zeros of its shape. PyTorch's steps, each only when wanted.
    input_grad = None
    if needs_input_grad[0]:
        ratio = result / input
        if dispatch_listens(grad):
            ratio.masked_fill_(input == 0, 0)
        else:  # (the same values, cheaper)
            ratio = ratio.where(input != 0, 0)
        input_grad = grad * ratio
    wanted = other_shape is not None and needs_input_grad[1]
    return input_grad, ops.zeros(other_shape, dtype=grad.dtype, device=grad.device) if wanted else None


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_copysign_grad, method=True, inplace=True, out=True,
    samples=(Sample((M23, M23)), Sample((M23, ROW)), Sample((I23, I32)), Sample((F16, F16)),
             Sample((M23, -2.0)), Sample((SCALAR_F64, BF16)), Sample((F64, BOOL))),
    aten={
        "copysign.Tensor": ("out=out", "inplace-pointwise"),
        "copysign.Scalar": ("inplace-pointwise",),
    },
    tags=("pointwise",))
def copysign(input: Tensor, other: Tensor | Number) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other`` (-0.0 and NaN's sign bit count);
    integers give the default float dtype.

    >>> import tensormodes as tm
    >>> tm.copysign(tm.tensor([1.0, 2.0]), tm.tensor([-0.0, 3.0])).tolist()
    [-1.0, 2.0]
    """
    return _float_binary(np.copysign, input, other, "copysign_cpu")


def _exact_result_dtype(result: np.ndarray, target: np.ndarray, inplace: bool) -> None:
    """float_power writes only into its result's own dtype (float64 or complex128)."""
    if target.dtype != result.dtype:
        which = "base given to float_power_" if inplace else "output given to float_power"
        raise RuntimeError(f"the {which} has dtype {scalar_type_name(dtype_of(target))} but the operation's "
                           f"result requires dtype {scalar_type_name(dtype_of(result))}")


def _float_power_grad(grad, result, input, exponent, needs_input_grad):
    wide = result.dtype  # float64 or complex128: both operands take part at that precision
    return _pow_grad(grad, result, input.to(wide) if is_tensor(input) else input,
                     exponent.to(wide) if is_tensor(exponent) else exponent, needs_input_grad)


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise, grad=_float_power_grad, method=True, inplace=True, out=True, written_check=_exact_result_dtype,
    samples=(Sample((POSITIVE, M23)), Sample((M23, 2)), Sample((POSITIVE, 0.5)), Sample((I23, 3)),
             Sample((2, I32)), Sample((2.5, M23)), Sample((F16, BF16)), Sample((C64, 2)),
             Sample((SCALAR_F64, POSITIVE)), Sample((POSITIVE_I, TensorSpec((3,), "int64", -2, 2)))),
    aten={"float_power.Tensor_Tensor": ("inplace=Tensor",)}, tags=("pointwise",))
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
            return _as(_power(base, power, exponent), d)
        except ValueError:
            _raise_broadcast_error(input, exponent)
            raise


# Integer and bool samples only: PyTorch records heaviside but has no derivative for it.
@op(errors=(Sample((M23, F64)), Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=no_derivative("heaviside"), method=True, inplace=True, out=True,
    samples=(Sample((I23, TensorSpec((3,), "int64", 2, 5))), Sample((BOOL, BOOL)),
             Sample((TensorSpec((2, 3), "int32", -1, 1), TensorSpec((), "int32", 7, 7)))), tags=("pointwise",),
    aten={"heaviside.default": ("inplace-pointwise",)})
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


def _euclid(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's gcd: Euclid's algorithm on ``|a|`` and ``|b|`` in the operands' dtype, with C's
    remainder, so that the one value without an absolute value (the most negative) gives what
    PyTorch gives (NumPy's ``gcd`` answers otherwise for it)."""
    a, b = np.abs(a), np.abs(b)
    while True:
        going = a != 0
        if not going.any():
            return b
        a, b = np.where(going, np.fmod(b, np.where(going, a, 1)), 0), np.where(going, a, b)


def _lcm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's lcm: ``|a / gcd * b|``, wrapping around on overflow as PyTorch's does: in the
    operands' dtype, or in C's ``int`` for the narrower ones (then cast back)."""
    g = _euclid(a, b)
    if a.dtype.itemsize < 4:
        a, b, g = a.astype(np.int32), b.astype(np.int32), g.astype(np.int32)
    divisor = np.where(g == 0, 1, g)
    quotient = (a - np.fmod(a, divisor)) // divisor  # C's truncating division (exact here)
    return np.where(g == 0, 0, np.abs(quotient * b))


def _integer_math(function, name: str, input, other) -> np.ndarray:
    """``gcd`` / ``lcm``: integer dtypes only (not bool)."""
    a, b, d = _integer_operands(input, other, f"{name}_cpu", name, allow_bool=False)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        _raise_broadcast_error(input, other)
        raise
    with quiet():  # integer overflow wraps around, as in PyTorch
        return _as(function(a, b), d)


_GCD_SAMPLES = (Sample((I23, TensorSpec((2, 3), "int64", -30, 30))), Sample((U8, I32)),
                Sample((TensorSpec((3,), "int16", -12, 12), TensorSpec((), "int64", 6, 6))),
                Sample((TensorSpec((2, 1), "int8", 0, 9), TensorSpec((3,), "int8", -9, 9))))


@op(errors=(Sample((M23, M23)), Sample((I23, TensorSpec((3, 2), "int64")))),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_GCD_SAMPLES,
    tags=("pointwise",),
    aten={"gcd.default": ("inplace-pointwise",)})
def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor of each pair of integers (non-negative; gcd(0, 0) = 0).

    >>> import tensormodes as tm
    >>> tm.gcd(tm.tensor([-4, 0, 6]), tm.tensor([6, 0, -9])).tolist()
    [2, 0, 3]
    """
    return _integer_math(_euclid, "gcd", input, other)


@op(errors=(Sample((M23, M23)), Sample((BOOL, BOOL))),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_GCD_SAMPLES,
    tags=("pointwise",),
    aten={"lcm.default": ("inplace-pointwise",)})
def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple of each pair of integers (non-negative; 0 if either is 0).

    >>> import tensormodes as tm
    >>> tm.lcm(tm.tensor([-4, 0, 6]), tm.tensor([6, 5, -9])).tolist()
    [12, 0, 18]
    """
    return _integer_math(_lcm, "lcm", input, other)
