"""Floating-point numbers by their parts: ``frexp`` (mantissa in [0.5, 1) and a power of two)
and ``ldexp`` (``input * 2 ** other``, its inverse).

>>> import tensormodes as tm
>>> m, e = tm.frexp(tm.tensor([12.0]))
>>> m.tolist(), e.tolist(), tm.ldexp(m, e).tolist()
([0.75], [4], [12.0])
"""

from __future__ import annotations

import math

import numpy as np

from .._meta_array import MetaArray
from ._samples import BF16, F16, F64, I23, M23, ROW, SCALAR_F64
from .binary_math import _float_binary
from .common import HALF_TYPES, dtype_of, not_implemented, quiet
from .meta_rules import elementwise, rule
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op


def _check_frexp(input) -> None:
    if input.dtype.kind != "f" and input.dtype not in HALF_TYPES:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")


def _frexp_meta(input):
    _check_frexp(input)
    return RETURN_TYPES["frexp"](MetaArray(input.shape, input.dtype), MetaArray(input.shape, np.dtype(np.int32)))


def _frexp_grad(grad, result1):
    # FrexpBackward0: the mantissa is input / 2 ** exponent, the exponent piecewise constant
    return grad[0] / result1.to(grad[0].dtype).exp2()


@op(meta=rule(_frexp_meta), grad=_frexp_grad, returns=("mantissa", "exponent"), method=True, out=True,
    samples=(Sample((M23,)), Sample((F64,)), Sample((F16,)), Sample((BF16,)), Sample((SCALAR_F64,)),
             Sample((TensorSpec((4,), "float32", -1e30, 1e30),))),
    errors=(Sample((I23,)), Sample((TensorSpec((3,), "complex64"),))),
    aten={"frexp.Tensor": ("out=Tensor_out",)}, tags=("pointwise",))
def frexp(input: Tensor) -> Tensor:
    """``input`` as ``mantissa * 2 ** exponent``, the mantissa's magnitude in [0.5, 1) (0, inf
    and NaN are their own mantissa, with exponent 0), the exponent int32; a named tuple.

    >>> import tensormodes as tm
    >>> tm.frexp(tm.tensor([8.0, -0.375]))
    tensormodes.return_types.frexp(
    mantissa=tensor([ 0.5000, -0.7500]),
    exponent=tensor([ 4, -1], dtype=tensormodes.int32))
    """
    _check_frexp(input)
    work = input.astype(np.float32) if input.dtype in HALF_TYPES and input.dtype != np.float16 else input
    with quiet():
        mantissa, exponent = np.frexp(work)
    # NumPy leaves the exponent of inf and NaN unspecified; C's frexp (PyTorch's) gives 0
    exponent = np.where(np.isfinite(work), exponent, 0)
    return RETURN_TYPES["frexp"](np.asarray(mantissa).astype(input.dtype), np.asarray(exponent).astype(np.int32))


def _ldexp_grad(grad, input, other, needs_input_grad):
    # LdexpBackward0: d/dinput = 2 ** other, d/dother = input * ln 2 * 2 ** other
    scale = (other if other.is_floating_point() or other.is_complex() else other.to(grad.dtype)).exp2()
    if needs_input_grad[1] and not (input.is_complex() or scale.is_complex()):
        # PyTorch's order, grad * self * exp2(other) * log(2): a half input times log(2) first would round
        other_grad = grad * input * scale * math.log(2.0)
    else:
        other_grad = grad * (input * math.log(2.0) * scale).conj() if needs_input_grad[1] else None
    return grad * scale.conj() if needs_input_grad[0] else None, other_grad


@op(meta=elementwise, grad=_ldexp_grad, save_only_for={"input": "other"}, method=True, inplace=True,
    inplace_function=True, out=True,
    # integer exponents from 0: PyTorch's gradient takes 2 ** other in other's integer dtype (0 for a
    # negative exponent); ours is the derivative
    samples=(Sample((M23, TensorSpec((2, 3), "int64", 0, 4))), Sample((F64, TensorSpec((3,), "float64", -3, 3))),
             Sample((I23, TensorSpec((2, 3), "int64", 0, 4))), Sample((F16, TensorSpec((3,), "int64", 0, 2))),
             Sample((ROW, TensorSpec((3,), "float32", -1, 1)))),
    errors=(Sample((M23, TensorSpec((3, 2), "int64"))),), aten={"ldexp.Tensor": ("out=out",)}, tags=("pointwise",))
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other`` elementwise, in the promoted floating dtype.

    >>> import tensormodes as tm
    >>> tm.ldexp(tm.tensor([1.0, 3.0]), tm.tensor([3, -1])).tolist()
    [8.0, 1.5]
    """
    if type(other) is not MetaArray and (other.dtype.kind == "f" or other.dtype in HALF_TYPES):
        # PyTorch's input * pow(2, other): the power is rounded to other's dtype first (a half
        # type's computed in float32)
        with quiet():
            power = np.exp2(other.astype(np.float64))
            if other.dtype in HALF_TYPES:
                power = power.astype(np.float32)
            other = np.asarray(power).astype(other.dtype)  # (a 0-dim power stays an array: a tensor's promotion)
        return _float_binary(np.multiply, input, other, "ldexp", complex_ok=True)
    floating_input = input.dtype.kind == "f" or input.dtype in HALF_TYPES
    if floating_input and other.dtype == np.bool_:  # the floating input's kernel takes integer exponents only
        raise not_implemented("ldexp_cpu_exp", dtype_of(other))
    if type(other) is not MetaArray and other.dtype == np.int64 and floating_input:
        # PyTorch's kernel for a floating input passes the exponent as a C int: it wraps (an integer
        # input goes through pow(2., other) in float instead)
        other = other.astype(np.int32)
    result = _float_binary(lambda x, y: x * np.exp2(y), input, other, "ldexp", complex_ok=True)
    if result.dtype in HALF_TYPES and type(result) is not MetaArray:
        # an integer exponent's power is a float32 (PyTorch's composite), the product rounded once
        with quiet():
            power = np.exp2(np.asarray(other).astype(np.float64)).astype(np.float32)
            result = (np.asarray(input).astype(np.float32) * power).astype(result.dtype)
    return result
