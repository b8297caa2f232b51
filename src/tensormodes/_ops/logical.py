"""Logical and bitwise ops: ``logical_and`` ... ``logical_not``, ``bitwise_and`` ... shifts.

Each op's gradient formula (where it has one) sits just above it.
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

from numbers import Number

import numpy as np

from ._pointwise import (
    _ND,
    _as,
    _integer_operands,
    _raise_broadcast_error,
)
from ._samples import BF16, BOOL, C64, I23, I32, M23, ROW, SCALAR_F64, U8
from .common import (
    quiet,
)
from .comparison import _truth
from .meta_rules import (
    elementwise,
)
from .registry import OWN, Dunder, Sample, Tensor, TensorSpec, op

# -- logical and bitwise ---------------------------------------------------------------------

def _logical(ufunc, input, other) -> np.ndarray:
    for a, b in ((input, other), (other, input)):
        # a float16 tensor with a 0-dim complex one promotes to complex32 (ComplexHalf), for which
        # PyTorch's logical kernels have no version (tensormodes has no complex32: see README)
        if type(a) is _ND and type(b) is _ND and a.dtype == np.float16 and a.ndim and b.dtype.kind == "c" \
                and not b.ndim:
            raise NotImplementedError(f'"{ufunc.__name__}_cpu" not implemented for \'ComplexHalf\'')
    with quiet():
        try:
            return np.asarray(ufunc(_truth(input), _truth(other)))
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


_LOGICAL_SAMPLES = (Sample((BOOL, BOOL)), Sample((M23, I23)), Sample((I23, ROW)), Sample((SCALAR_F64, BOOL)),
                    Sample((C64, BF16)), Sample((TensorSpec((2, 3), "int64", 0, 1), BOOL)))


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_LOGICAL_SAMPLES,
    tags=("core", "pointwise"))
def logical_and(input: Tensor, other: Tensor) -> Tensor:
    """A bool tensor: True where both ``input`` and ``other`` are nonzero.

    >>> import tensormodes as tm
    >>> tm.logical_and(tm.tensor([0, 1, 2]), tm.tensor([1, 1, 0])).tolist()
    [False, True, False]
    """
    return _logical(np.logical_and, input, other)


@op(errors=(Sample((BOOL, TensorSpec((3, 2), "bool"))),),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_LOGICAL_SAMPLES,
    tags=("core", "pointwise"))
def logical_or(input: Tensor, other: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` or ``other`` is nonzero.

    >>> import tensormodes as tm
    >>> tm.logical_or(tm.tensor([0, 1, 0]), tm.tensor([0, 0, 3])).tolist()
    [False, True, True]
    """
    return _logical(np.logical_or, input, other)


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_LOGICAL_SAMPLES,
    tags=("core", "pointwise"))
def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    """A bool tensor: True where exactly one of ``input`` and ``other`` is nonzero.

    >>> import tensormodes as tm
    >>> tm.logical_xor(tm.tensor([0, 1, 2]), tm.tensor([1, 1, 0])).tolist()
    [True, False, True]
    """
    return _logical(np.logical_xor, input, other)


def _bitwise(ufunc, kernel_name: str, name: str, input, other) -> np.ndarray:
    a, b, d = _integer_operands(input, other, kernel_name, name)
    try:
        return _as(ufunc(a, b), d)
    except ValueError:
        _raise_broadcast_error(input, other)
        raise


_BITWISE_SAMPLES = (Sample((I23, I23)), Sample((BOOL, BOOL)), Sample((U8, I32)), Sample((I23, 6)),
                    Sample((BOOL, 1)), Sample((5, I32)), Sample((BOOL, True)),
                    Sample((TensorSpec((), "int64"), U8)))


@op(errors=(Sample((M23, M23)), Sample((I23, TensorSpec((3, 2), "int64")))),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_BITWISE_SAMPLES,
    dunders=(Dunder("__and__", OWN), Dunder("__rand__"), Dunder("__iand__", OWN, inplace=True)),
    aten={
        "bitwise_and.Tensor": (),
        "bitwise_and.Scalar": (),
        "bitwise_and.Scalar_Tensor": ("-core", "inplace=", "out+generated", "out-pointwise"),
    },
    tags=("core", "pointwise"))
def bitwise_and(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The bitwise AND of integer or bool operands (logical AND for bool).

    >>> import tensormodes as tm
    >>> (tm.tensor([12, 10]) & 6).tolist()
    [4, 2]
    """
    return _bitwise(np.bitwise_and, "bitwise_and_cpu", "bitwise_and", input, other)


@op(errors=(Sample((M23, 1)), Sample((I23, TensorSpec((3, 2), "int64")))),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_BITWISE_SAMPLES,
    dunders=(Dunder("__or__", OWN), Dunder("__ror__"), Dunder("__ior__", OWN, inplace=True)),
    aten={
        "bitwise_or.Tensor": (),
        "bitwise_or.Scalar": (),
        "bitwise_or.Scalar_Tensor": ("-core", "inplace=", "out+generated", "out-pointwise"),
    },
    tags=("core", "pointwise"))
def bitwise_or(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The bitwise OR of integer or bool operands (logical OR for bool).

    >>> import tensormodes as tm
    >>> (tm.tensor([12, 10]) | 1).tolist()
    [13, 11]
    """
    return _bitwise(np.bitwise_or, "bitwise_or_cpu", "bitwise_or", input, other)


@op(errors=(Sample((I23, 1.5)),),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_BITWISE_SAMPLES,
    dunders=(Dunder("__xor__", OWN), Dunder("__rxor__"), Dunder("__ixor__", OWN, inplace=True)),
    aten={
        "bitwise_xor.Tensor": (),
        "bitwise_xor.Scalar": (),
        "bitwise_xor.Scalar_Tensor": ("-core", "inplace=", "out+generated", "out-pointwise"),
    },
    tags=("core", "pointwise"))
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


_SHIFT_SAMPLES = (Sample((I23, TensorSpec((2, 3), "int64", -2, 70))), Sample((I23, 3)),
                  Sample((U8, TensorSpec((3,), "uint8", 0, 9))), Sample((TensorSpec((4,), "int8", -100, 100), 7)),
                  Sample((1, I32)), Sample((I32, I23)))


@op(errors=(Sample((M23, 1)), Sample((BOOL, BOOL))),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_SHIFT_SAMPLES,
    dunders=(Dunder("__lshift__", OWN), Dunder("__rlshift__", OWN, reflected=True),
             Dunder("__ilshift__", OWN, inplace=True)),
    aten={
        "bitwise_left_shift.Tensor": (),
        "bitwise_left_shift.Tensor_Scalar": (),
        "bitwise_left_shift.Scalar_Tensor": ("inplace=", "out+generated", "out-pointwise"),
    },
    tags=("pointwise",))
def bitwise_left_shift(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input << other`` for integer operands (shifting by the bit width or more, or by a
    negative count, gives 0).

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 3]) << 2).tolist(), (1 << tm.tensor([0, 4])).tolist()
    ([4, 12], [1, 16])
    """
    return _shift(True, input, other)


@op(errors=(Sample((I23, M23)), Sample((I23, TensorSpec((3, 2), "int64")))),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, samples=_SHIFT_SAMPLES,
    dunders=(Dunder("__rshift__", OWN), Dunder("__rrshift__", OWN, reflected=True),
             Dunder("__irshift__", OWN, inplace=True)),
    aten={
        "bitwise_right_shift.Tensor": (),
        "bitwise_right_shift.Tensor_Scalar": (),
        "bitwise_right_shift.Scalar_Tensor": ("inplace=", "out+generated", "out-pointwise"),
    },
    tags=("pointwise",))
def bitwise_right_shift(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input >> other`` for integer operands, arithmetic for signed dtypes (shifting by
    the bit width or more, or by a negative count, leaves only the sign: 0 or -1).

    >>> import tensormodes as tm
    >>> (tm.tensor([16, -16]) >> 2).tolist()
    [4, -4]
    """
    return _shift(False, input, other)
