"""Binary math: ``atan2``, ``hypot``, ``logaddexp``, ``lerp``, ``addcmul``, ``addcdiv``,
``xlogy``, ``copysign``, ``float_power``, ``heaviside``, ``gcd``, ``lcm``.

Float16 and bfloat16 compute in float32 and round once at the end, as PyTorch's CPU kernels
do (see ``_pointwise``). Each op's gradient formula sits just above it.
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

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
    _complex_log_add_exp,
    _half_lanes,
    _half_x_log_y,
    _in,
    _integer_operands,
    _invalid_arguments,
    _is_integral,
    _opmath,
    _raise_broadcast_error,
    _unsupported,
    _wide,
)
from ._samples import BF16, BOOL, C64, COLUMN, F16, F64, I23, I32, M23, POSITIVE, POSITIVE_I, ROW, SCALAR_F64, U8
from .arithmetic import _DIVISORS, _pow_grad, _power, pow_node
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
    overload_node,
    quiet,
    scalar_type_name,
)
from .common import conjugate as _conj
from .meta_rules import elementwise
from .registry import Sample, Tensor, TensorSpec, op

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
    # (other's square first: PyTorch's C++ makes the sum's operands right to left)
    other_squared = other * other
    squares = input * input + other_squared
    # Where the squares sum to 0 (at (0, 0), or underflowing) PyTorch's gradient is 0; a subnormal sum's
    # infinite reciprocal stays, as in PyTorch (its mask is on the sum)
    reciprocal = squares.reciprocal().masked_fill(squares == 0, 0)
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
    # Each operand is saved only for its own gradient (save_only_for), as by HypotBackward0,
    # which computes ``other``'s first
    other_grad = grad * other / result if needs_input_grad[1] else None
    return grad * input / result if needs_input_grad[0] else None, other_grad


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
    grad=_lerp_grad, node=overload_node("lerp", "lerp#1", 2), save_only_for={"input": "weight", "end": "weight"},
    method=True, inplace=True, out=True,
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
    if type(weight) is float and input.dtype in PLAIN_FLOATS and type(input) is _ND and type(end) is _ND:
        return _lerp_by_number(input, end, weight, d)
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
        start, stop, w = _in(input, d, compute), _in(end, d, compute), _in(weight, compute)  # (a number in opmath)
        try:
            difference = stop - start
            # PyTorch's formulation: exact at both ends, and monotonic in the weight. A number
            # weight picks one branch for every element (an optimizer's lerp_): only it is computed.
            if tensor_weight:
                result = np.where(np.absolute(w) < 0.5, start + w * difference, stop - difference * (1 - w))
            elif np.absolute(w) < 0.5:
                result = start + w * difference
            else:
                result = stop - difference * (1 - w)
        except ValueError:
            _raise_broadcast_error(input, end, weight)
            raise
        if d is _F16 or d is _BF16:
            # PyTorch's vector steps fuse the multiply-add (the scalar tails do not): exact in float64
            small = np.absolute(w) < 0.5
            coefficient = np.where(small, w, np.subtract(w, 1, dtype=np.float32)).astype(np.float64)
            fused = coefficient * difference.astype(np.float64) + np.where(small, start, stop)
            return _half_lanes(d, lambda: fused.astype(np.float32), lambda: result, result.shape, input, end, weight)
        return _as(result, d)


def _lerp_by_number(input: np.ndarray, end: np.ndarray, weight: float, d: dt.dtype) -> np.ndarray:
    """``lerp``'s steps for float32 or float64 arrays and a Python float weight (an optimizer's
    ``lerp_``) without their conversions, the branch's temporaries written in place: the same
    operations on the same operands, in the same order."""
    _check_representable(weight, d)
    with quiet():
        try:
            difference = np.asarray(np.subtract(end, input))  # an array for 0-dim operands too
        except ValueError:
            _raise_broadcast_error(input, end, weight)
            raise
        if abs(weight) < 0.5:  # start + weight * difference
            np.multiply(weight, difference, out=difference)
            return np.add(input, difference, out=difference)
        np.multiply(difference, 1 - weight, out=difference)  # stop - difference * (1 - weight)
        return np.subtract(end, difference, out=difference)


def _scaled_product(input, tensor1, tensor2, value, divide: bool) -> np.ndarray:
    """``input + value * tensor1 (* or /) tensor2`` in the promoted dtype."""
    d = operand_dtype(input, tensor1, tensor2)
    if type(input) is _ND and type(tensor1) is _ND and type(tensor2) is _ND and input.dtype in PLAIN_FLOATS \
            and input.dtype is tensor1.dtype is tensor2.dtype and (type(value) is float or type(value) is int):
        # One float dtype and a number (an optimizer's addcmul_ / addcdiv_): the steps below
        # without their conversions, which change nothing here.
        _check_representable(value, d)
        with quiet():
            try:
                scaled = np.multiply(value, tensor1)
                if input.shape == tensor1.shape == tensor2.shape and input.ndim:  # same steps, in place
                    (np.true_divide if divide else np.multiply)(scaled, tensor2, out=scaled)
                    return np.add(input, scaled, out=scaled)
                return np.asarray(np.add(input, np.true_divide(scaled, tensor2) if divide else
                                         np.multiply(scaled, tensor2)))
            except ValueError:
                _raise_broadcast_error(input, tensor1, tensor2)
                raise
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
    # ``other``'s gradient first, as PyTorch's XlogyBackward0; its mask's operands made right to left
    input_grad = other_grad = None
    if needs_input_grad[1]:
        other_grad = grad * input / other
    if needs_input_grad[0]:
        input_grad = ops.xlogy(grad, other)
        if is_tensor(other):
            nonpositive = other <= 0.0
            input_grad = input_grad.masked_fill((input == 0.0) & nonpositive, 0.0)  # PyTorch's mask
        elif other <= 0:
            input_grad = input_grad.masked_fill(input == 0.0, 0.0)
    return input_grad, other_grad


def scalar_overload_node(name: str):
    """The backward node of the overload a call of a binary op reaches, as PyTorch numbers them:
    ``<name>`` for two tensors, ``#1`` for a number first (``self_scalar``), ``#2`` for a number
    second (``other_scalar``)."""
    def node(input, other) -> str:
        if isinstance(input, Number):
            return f"{name}#1"
        return f"{name}#2" if isinstance(other, Number) else name
    return node


@op(errors=(Sample((M23, TensorSpec((3, 2)))), Sample((C64, C64))),
    meta=elementwise, grad=_xlogy_grad, node=scalar_overload_node("xlogy"), method=True, inplace=True,
    inplace_function=True, out=True,
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
    d = operand_dtype(input, other)
    if d is _F16 or d is _BF16:
        return _float_binary(_half_x_log_y(d), input, other, "xlogy_cpu")
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
    # other's zeros first, as PyTorch's CopysignBackward0
    wanted = other_shape is not None and needs_input_grad[1]
    other_grad = ops.zeros(other_shape, dtype=grad.dtype, device=grad.device) if wanted else None
    input_grad = None
    if needs_input_grad[0]:
        ratio = result / input
        if dispatch_listens(grad):
            ratio.masked_fill_(input == 0, 0)
        else:  # (the same values, cheaper)
            ratio = ratio.where(input != 0, 0)
        input_grad = grad * ratio
    return input_grad, other_grad


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_copysign_grad, node=overload_node("copysign#1", "copysign", 1), method=True,
    inplace=True, out=True,
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
    meta=elementwise, grad=_float_power_grad, node=pow_node, method=True, inplace=True, out=True,
    written_check=_exact_result_dtype,
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
    meta=elementwise, differentiable=False, method=True, inplace=True, inplace_function=True,
    out=True, samples=_GCD_SAMPLES,
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
    meta=elementwise, differentiable=False, method=True, inplace=True, inplace_function=True,
    out=True, samples=_GCD_SAMPLES,
    tags=("pointwise",),
    aten={"lcm.default": ("inplace-pointwise",)})
def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple of each pair of integers (non-negative; 0 if either is 0).

    >>> import tensormodes as tm
    >>> tm.lcm(tm.tensor([-4, 0, 6]), tm.tensor([6, 5, -9])).tolist()
    [12, 0, 18]
    """
    return _integer_math(_lcm, "lcm", input, other)
