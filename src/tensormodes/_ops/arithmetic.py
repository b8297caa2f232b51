"""Arithmetic: ``add``, ``sub``, ``mul``, ``div`` and their relatives, powers and remainders
(binary math, ``atan2`` ... ``lcm``, is in ``binary_math``).

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
    _BF16,
    _F16,
    _ND,
    _as,
    _both_scalars,
    _check_representable,
    _float_remainder,
    _floor_division_in,
    _half_reciprocal_sqrt,
    _half_scaled_sum,
    _half_truncation,
    _in,
    _invalid_arguments,
    _is_integral,
    _opmath,
    _raise_broadcast_error,
    _scaled_by_number,
    _unsupported,
    _wide,
    _zeros_like,
)
from ._samples import BF16, BOOL, C64, F16, I23, I32, M23, POSITIVE, POSITIVE_I, ROW, SCALAR_F64, U8
from .common import (
    PLAIN_FLOATS,
    dispatch_listens,
    floating,
    is_tensor,
    no_derivative,
    operand_dtype,
    ops,
    overload_node,
    quiet,
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
    if type(input) is _ND and type(other) is float and input.dtype in PLAIN_FLOATS and type(alpha) is int \
            and alpha == 1:  # a float array and a number (weak: the array's dtype), as below
        return np.asarray((np.add if sign > 0 else np.subtract)(input, other))
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
            elif not plain and (d is _F16 or d is _BF16):
                return _half_scaled_sum(a, b, _in(alpha, d), np.add if sign > 0 else np.subtract, d, input, other)
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
    aten={"add.Tensor": ("out=out",), "add.Scalar": ("alpha: ~Scalar", "formula", "out+generated", "out-pointwise")})
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
    aten={"sub.Tensor": ("out=out",), "sub.Scalar": ("alpha: ~Scalar", "formula", "out+generated", "out-pointwise")})
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
    meta=broadcasting("other", "input"), grad=_rsub_grad, node=overload_node("rsub#1", "rsub", 1),
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
    # ``other``'s gradient first: the order PyTorch's generated MulBackward0 runs them in
    other_grad = grad * _conj(input) if needs_input_grad[1] else None
    return grad * _conj(other) if needs_input_grad[0] else None, other_grad


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise, grad=_mul_grad, save_only_for={"input": "other", "other": "input"},
    method=True, inplace=True, out=True, ufunc=np.multiply,
    dunders=(Dunder("__mul__"), Dunder("__rmul__"), Dunder("__imul__", inplace=True)),
    samples=(Sample((M23, M23)), Sample((M23, -2)), Sample((I23, ROW)), Sample((BOOL, BOOL)),
             Sample((BOOL, 3)), Sample((U8, 40)), Sample((F16, BF16)), Sample((C64, 2.5)),
             Sample((SCALAR_F64, I32))), tags=("core", "pointwise"),
    aten={"mul.Tensor": ("out=out",), "mul.Scalar": ("formula", "out+generated", "out-pointwise")})
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
    if type(input) is _ND and type(other) is float and input.dtype in PLAIN_FLOATS:
        return np.asarray(np.multiply(input, other))  # a float array by a number (weak: its dtype)
    d = operand_dtype(input, other)
    with quiet():
        try:
            if d is _F16 or d is _BF16:  # computed in float32, a number operand unrounded
                return _as(np.multiply(*_scaled_by_number(input, other, d)), d)
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
    if type(input) is _ND and type(other) is float and input.dtype in PLAIN_FLOATS:
        with quiet():  # a float array by a number (weak: the array's dtype), as below
            return np.asarray(np.true_divide(input, other))
    d = floating(operand_dtype(input, other))
    with quiet():
        try:
            if d is _F16 or d is _BF16:  # computed in float32, a number divisor unrounded
                return _as(np.true_divide(*_scaled_by_number(input, other, d)), d)
            return _as(np.true_divide(_in(input, d), _in(other, d)), d)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


def _integer_or_float_division(input, other, integer_kernel, float_kernel, kernel_name: str,
                               divisor_in_float32: bool = False) -> np.ndarray:
    """Division-like ops keeping the promoted dtype: integers (checked for zero divisors)
    or floats (half types through float32); bool and complex are not implemented.

    ``divisor_in_float32``: a half-type division reads a number (or 0-dim) divisor in float32,
    as PyTorch's rounding divisions do (``remainder`` and ``fmod`` round it to the half type)."""
    d = operand_dtype(input, other)
    if d is dt.bool or d.is_complex:
        raise _unsupported(kernel_name, d, input, other)
    compute = _opmath(d)
    with quiet():
        if divisor_in_float32 and (d is _F16 or d is _BF16) and np.ndim(other) == 0:
            # PyTorch's rounding divisions by a number (or 0-dim tensor) compute in float32
            a, b = _scaled_by_number(input, other, d)
        else:
            a, b = _in(input, d, compute), _in(other, d, compute)
            if divisor_in_float32 and (d is _F16 or d is _BF16):  # their half-type steps, tensor by tensor
                float_kernel = _floor_division_in(d) if float_kernel is np.floor_divide else _half_truncation(d)
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
    return _integer_or_float_division(input, other, np.floor_divide, np.floor_divide, "div_floor_cpu", True)


_DIVISORS = TensorSpec((3,), "float32", 0.5, 3.0)


def _div_grad(grad, input, other, needs_input_grad, rounding_mode=None):
    # ``input`` is saved only for ``other``'s gradient (save_only_for), as by DivBackward0.
    if rounding_mode is not None:  # rounded quotients are piecewise constant
        return (_zeros_like(grad) if needs_input_grad[0] else None,
                _zeros_like(grad) if needs_input_grad[1] else None)
    other_grad = None
    if needs_input_grad[1]:  # first, as PyTorch's DivBackward0; the quotient before -grad, as its C++
        # PyTorch's order, (input / other) / other: it decides the rounding in half types
        # and the value at an infinite divisor (0, not inf / inf)
        quotient = _conj(ops.div(input, other) / other)
        other_grad = -grad * quotient
    return grad / _conj(other) if needs_input_grad[0] else None, other_grad


def _reciprocal_times(self, other):
    # PyTorch's ``Tensor.__rtruediv__`` (Python code): ``2 / x`` is ``x.reciprocal() * 2``, whose
    # rounding differs from ``div(2, x)`` (and whose gradient is recorded by those two ops).
    return self.reciprocal() * other


def _div_node(input, other, rounding_mode=None) -> str:
    # a rounding mode reaches div.Tensor_mode (a number divisor is wrapped into a tensor): DivBackward2
    return "div" if rounding_mode is None else "div#2"


@op(errors=(Sample((M23, M23), {"rounding_mode": "round"}), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_div_grad, node=_div_node, save_only_for={"input": "other"}, method=True, inplace=True,
    out=True,
    dunders=(Dunder("__truediv__"), Dunder("__rtruediv__", OWN, reflected=True, composite=_reciprocal_times),
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
        "div.Scalar": ("rounding_mode", "formula", "out+generated", "out-pointwise"),
        "div.Scalar_mode": ("other: Scalar", "rounding_mode: str?=", "formula", "out+generated",
                            "out-pointwise"),
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
                                          "div_trunc_cpu", True)
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


def _times_minus_grad(grad, quotient):
    # -grad * quotient with the quotient computed first (the caller's argument), as PyTorch's C++ does
    return -grad * quotient


def _remainder_grad(grad, input, other, needs_input_grad):
    # The operands are saved only for ``other``'s gradient (save_only_for), as by RemainderBackward0.
    if needs_input_grad[1] and not is_tensor(input):  # remainder(Scalar, Tensor): PyTorch has no derivative
        raise RuntimeError("derivative for aten::remainder is not implemented")
    return grad, _times_minus_grad(grad, input.div(other, rounding_mode="floor")) if needs_input_grad[1] else None


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_remainder_grad, node=overload_node("remainder", "remainder#1", 1),
    save_only_for={"input": "other", "other": "other"},
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
    return _integer_or_float_division(input, other, np.remainder, _float_remainder, "remainder_cpu")


def _fmod_grad(grad, input, other, needs_input_grad):
    # The operands are saved only for ``other``'s gradient (save_only_for), as by FmodBackward1.
    return grad, _times_minus_grad(grad, input.div(other, rounding_mode="trunc")) if needs_input_grad[1] else None


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise,
    grad=_fmod_grad, node=overload_node("fmod", "fmod#1", 1), save_only_for={"input": "other", "other": "other"},
    method=True, inplace=True, out=True,
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
    # The exponent's gradient first, as PyTorch's generated PowBackward1 runs them.
    input_grad = exponent_grad = None
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
    if is_tensor(input) and needs_input_grad[0]:
        if is_tensor(exponent):
            # d/dx x**0 is 0 everywhere, even where x**-1 is not finite: PyTorch's
            # where(exponent == 0, 0, grad * local), its C++ arguments made right to left
            input_grad = grad * _conj(exponent * input ** (exponent - 1))
            if dispatch_listens(input_grad):
                zero = ops.scalar_tensor(0.0, dtype=input_grad.dtype, device=input_grad.device)
                input_grad = ops.where(exponent == 0.0, zero, input_grad)
            else:
                input_grad = input_grad.where(exponent != 0, 0)
        elif exponent == 0:
            return ops.zeros_like(input), None  # PyTorch's pow_backward (x**-1 may be infinite: no product)
        else:
            # PyTorch's pow_backward reads a number exponent as a double (or complex) first
            exponent = exponent if isinstance(exponent, complex) else float(exponent)
            input_grad = grad * _conj(exponent * input ** (exponent - 1))
    return input_grad, exponent_grad


def pow_node(input, exponent) -> str:
    """The node of the ``pow`` overload a call reaches, PyTorch's: ``Tensor_Scalar`` PowBackward0,
    ``Tensor_Tensor`` PowBackward1, ``Scalar`` (a number base) PowBackward2."""
    if isinstance(input, Number):
        return "pow#2"
    return "pow" if isinstance(exponent, Number) else "pow#1"


@op(errors=(Sample((I23, -1)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_pow_grad, node=pow_node, save_only_for={"result": "exponent"}, method=True, inplace=True,
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
    if d is _BF16 and type(input) is _ND and type(exponent) is not _ND and _in(exponent, d) in (3, -2):
        # PyTorch's bfloat16 kernel multiplies these out in bfloat16, rounding every step
        with quiet():
            square = np.multiply(input, input)  # (ml_dtypes' bfloat16 product: rounded)
            return _as(np.multiply(square, input) if _in(exponent, d) == 3 else np.reciprocal(square), d)
    with quiet():
        if type(exponent) is float and exponent == -0.5 and type(input) is _ND and d.is_floating_point \
                and d is not dt.float16:
            # PyTorch computes x ** -0.5 as rsqrt(x) (not for float16): NaN at -inf, -inf at -0.
            # (NumPy's power gives 0 and inf)
            if d is _BF16:
                return _half_reciprocal_sqrt(_in(input, d))
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
    # NumPy's power of 0 is NaN whatever the exponent; cpow's exp(y * log 0) is 0 or inf+nan j
    integral = integral | np.equal(base, 0)
    if not np.any(integral):
        return np.power(base, exponent)
    cpow = np.where(np.equal(exponent, 0), 1, np.exp(exponent * np.log(base)))
    return np.where(integral, cpow, np.power(base, exponent))
