"""Helpers shared by the pointwise families (``unary_math``, ``arithmetic``, ``comparison``,
``complex``, ``special``): PyTorch's computation dtypes for NumPy operands, integer wrapping,
PyTorch's errors for unsupported dtypes and arguments, and helpers of gradient formulas.

Binary kernels accept an array or a Python scalar in either position (the reflected operators
pass the scalar first) and compute in PyTorch's promoted dtype (``common.operand_dtype``).
Arithmetic on float16 and bfloat16 computes in float32 and rounds once at the end, as PyTorch's
CPU kernels do; math functions (exp, sin, pow, atan2 ...) are evaluated in float64 and rounded to
the result dtype. Kernels that can meet overflow, division by zero or NaN silence NumPy's
floating-point warnings: PyTorch returns inf / NaN without a word.
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtype as dt
from .common import (
    FLOAT_MAX,
    HALF_TYPES,
    check_python_int,
    check_same_shape_or_broadcast,
    dtype_of,
    floating,
    not_implemented,
    operand_dtype,
    ops,
    overflow_type_name,
    quiet,
)

_ND = np.ndarray


# -- helpers ---------------------------------------------------------------------------------


def _is_integral(d: dt.dtype) -> bool:
    """True for bool and the integer dtypes."""
    return not (d.is_floating_point or d.is_complex)


def _opmath(d: dt.dtype) -> dt.dtype:
    """The dtype PyTorch computes ``d`` in: float32 for float16 and bfloat16."""
    return dt.float32 if d._np in HALF_TYPES else d


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


def _in(x, d: dt.dtype, compute: dt.dtype | None = None):
    """An operand in the promoted dtype ``d``, widened to ``compute`` where the op computes
    in a wider dtype. Arrays are cast (through ``d``, so an int64 operand of a float16
    result overflows as in PyTorch); Python scalars stay weak, and Python ints wrap into
    an integer ``d`` as PyTorch's conversion does. Into float16 and bfloat16 a Python number
    is rounded to ``d`` (``_half_number``): the ops that keep it in float32 (``mul``,
    ``div`` ...) pass it on themselves."""
    if type(x) is _ND:
        if x.dtype != d._np:
            x = x.astype(d._np)
        if compute is not None and compute is not d:
            x = x.astype(compute._np)
        return x
    if type(x) is int:
        bounds = _INT_RANGES.get(d)
        if bounds is not None and not bounds[0] <= x <= bounds[1]:
            check_python_int(x)  # beyond int64 and uint64 PyTorch refuses, rather than wrap
            return (x - bounds[0]) % bounds[2] + bounds[0]
    if d is _F16 or d is _BF16:  # (identity tests: free for the other dtypes)
        return _half_number(x, d)
    return x


_F16, _BF16 = dt.float16, dt.bfloat16


def _half_number(x, d: dt.dtype):
    """A Python real number operand of a float16 / bfloat16 computation, rounded to ``d`` (a
    Python float holding the rounded value, so NumPy still treats it as weak).

    PyTorch wraps a Python number into a 0-dim tensor, which its TensorIterator casts to the
    common dtype like any other operand: ``x + 0.7`` adds the half-type value nearest 0.7 (through
    float32, as c10's ``Half`` and ``BFloat16`` are built from a float), then computes in float32
    and rounds once. Too large a number becomes an infinity. Only ``mul`` and ``div`` by a number
    (and ``lerp``'s weight, ``addcmul``'s value ...) read it in float32 instead.
    """
    if type(x) is float or type(x) is int:
        with quiet():
            return float(d._np.type(np.float32(x)))
    return x  # bool and complex numbers keep their own rules


def _scaled_by_number(input, other, d: dt.dtype):
    """The operands of a float16 / bfloat16 ``mul`` or ``div`` (``d``), in float32.

    PyTorch's kernels for these read a second operand that is a number, or any 0-dim tensor,
    straight in float32 (``x * 0.7`` multiplies by float32's 0.7, not by float16's); the first
    operand is cast to ``d`` like any other (``tm.mul(0.7, x)`` rounds 0.7).
    """
    a = _in(input, d, dt.float32)
    if type(other) is not _ND:
        return a, (other if type(other) is not bool else float(other))  # weak: NumPy reads it in float32
    return a, other.astype(np.float32) if other.ndim == 0 else _in(other, d, dt.float32)


# PyTorch's CPU loops run a float16 / bfloat16 kernel 32 elements at a time in float32 vector
# registers (two vectors of 16), rounding once; the elements left over at the end of each
# innermost run go through the kernel's scalar code, whose c10::Half / c10::BFloat16 arithmetic
# rounds after every operation. Kernels of several operations (``add`` with ``alpha``, ``rsqrt``)
# therefore round those elements differently.
_HALF_VECTOR_STEP = 32


def _half_scalar_tail(shape: tuple, *operands) -> np.ndarray | None:
    """Where (a bool mask of the result's ``shape``) PyTorch's scalar loop computes a half-type
    kernel's elements, or None where its vector loop computes them all.

    The innermost run is the trailing dimensions PyTorch's TensorIterator merges: adjacent
    dimensions merge where every operand (contiguous, as PyTorch's would be) broadcasts along
    both or along neither of them. Results beyond 32768 elements are split among threads, whose
    runs end early as well: the machine's thread count decides those, which is not modelled.
    """
    if not shape:
        return np.ones((), bool)  # one element: the scalar loop
    padded = [(1,) * (len(shape) - np.ndim(x)) + np.shape(x) for x in operands]
    dims = [i for i, n in enumerate(shape) if n != 1]
    if not dims:
        return np.ones(shape, bool)
    inner, last = shape[dims[-1]], dims[-1]
    for i in reversed(dims[:-1]):
        if any((p[i] == 1) != (p[last] == 1) for p in padded):
            break
        inner, last = inner * shape[i], i
    vectorised = inner - inner % _HALF_VECTOR_STEP
    if vectorised == inner:
        return None
    size = int(np.prod(shape))
    return (np.arange(size) % inner >= vectorised).reshape(shape)


def _half_lanes(d: dt.dtype, vectorised, scalar, shape: tuple, *operands) -> np.ndarray:
    """A half-type kernel's result as PyTorch's loops compute it (see ``_half_scalar_tail``):
    ``vectorised()`` (float32 values rounded once) where its vector loop runs, ``scalar()``
    (rounded after every step) in the runs' tails; both give arrays of ``shape``."""
    tail = _half_scalar_tail(shape, *operands)
    if tail is None:
        return _as(vectorised(), d)
    if tail.all():
        return _as(scalar(), d)
    return _as(np.where(tail, _as(scalar(), d), _as(vectorised(), d)), d)


def _half_reciprocal_sqrt(input: np.ndarray) -> np.ndarray:
    """``rsqrt`` of a float16 / bfloat16 array as PyTorch's kernel computes it: float32's square
    root and division, rounded once in its vector loop; its scalar tails round the square root
    to the half type first (c10's half-type ``sqrt``)."""
    x = input.astype(np.float32)
    with quiet():
        return _half_lanes(dtype_of(input), lambda: 1 / np.sqrt(x),
                           lambda: 1 / np.sqrt(x).astype(input.dtype).astype(np.float32), input.shape)


def _wide(d: dt.dtype) -> dt.dtype:
    """float64 (complex128 for complex ``d``): where math functions are evaluated.

    NumPy's float32 loops for transcendental functions are often an ulp or two
    off (``log10(100) != 2``); the float64 result rounded to float32 is almost
    always the correctly rounded value, and agrees with PyTorch's far more often.
    """
    return dt.complex128 if d.is_complex else dt.float64


def _float_unary(ufunc, input: np.ndarray) -> np.ndarray:
    """``ufunc(input)`` for math functions: integers and bool give the default float dtype."""
    result = floating(dtype_of(input))
    with quiet():
        return _as(ufunc(_in(input, result, _wide(result))), result)


BLOCK = 8192  # elements per block of `blockwise`: float64 temporaries of 64 KiB


def blockwise(kernel, *arrays: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """``kernel(*arrays)`` for an elementwise ``kernel`` of same-shape arrays, computed ``block``
    elements at a time into one result: the same values, but the kernel's temporaries stay in
    the cache and small enough for malloc to reuse (below its 128 KiB mmap threshold), where
    whole-array ones (a few hundred KiB each) make the C heap grow past its trim threshold,
    give the pages back on free and fault them in again at the next call (~2.7 us a 4 KiB
    page on this VM).

    >>> blockwise(lambda x: x * 2, np.arange(3.0)).tolist()
    [0.0, 2.0, 4.0]
    """
    shape, size = arrays[0].shape, arrays[0].size
    if size <= block or any(a.shape != shape for a in arrays[1:]):
        return kernel(*arrays)
    flat = tuple(a.reshape(-1) for a in arrays)
    result = None
    for start in range(0, size, block):
        part = kernel(*(a[start:start + block] for a in flat))
        if result is None:
            result = np.empty(size, part.dtype)
        result[start:start + block] = part
    return result.reshape(shape)


def _complex_divide(a, b, c, d):
    """``(a + bi) / (c + di)`` on arrays of real and imaginary parts, step by step as C++
    ``c10::complex`` divides (Smith's method; a zero divisor gives ``a / 0``, ``b / 0`` part by
    part): the (real, imaginary) parts of the quotient. PyTorch's scalar complex kernels
    divide so, and their infinities and NaNs differ from NumPy's complex division."""
    with quiet():
        abs_c, abs_d = np.abs(c), np.abs(d)
        wide = abs_c >= abs_d  # False where c or d is NaN: the second branch, as in C++
        zero = wide & (abs_c == 0) & (abs_d == 0)
        ratio = np.where(wide, d / c, c / d)
        # Each ``x * y + z`` is one fused multiply-add in PyTorch's compiled kernels: rounded once
        scale = 1 / np.where(wide, _fused_multiply_add(d, ratio, c), _fused_multiply_add(c, ratio, d))
        real = np.where(wide, _fused_multiply_add(b, ratio, a), _fused_multiply_add(a, ratio, b)) * scale
        imag = np.where(wide, _fused_multiply_add(-a, ratio, b), _fused_multiply_add(b, ratio, -a)) * scale
        if zero.any():
            real = np.where(zero, a / abs_c, real)
            imag = np.where(zero, b / abs_d, imag)
    return real, imag


def _fused_multiply_add(x, y, z):
    """``x * y + z`` rounded once (a fused multiply-add, which the C++ compiler makes of it in
    PyTorch's kernels): computed in a wider float (long double for float64), then rounded."""
    dtype = np.result_type(x, y, z)
    wide = np.float64 if dtype == np.float32 else np.longdouble
    return (np.asarray(x, wide) * np.asarray(y, wide) + np.asarray(z, wide)).astype(dtype)


def _complex_from_parts(real, imag, np_dtype) -> np.ndarray:
    out = np.empty(np.shape(real), np_dtype)
    out.real, out.imag = real, imag
    return out


def _both_scalars(a, b) -> bool:
    return type(a) is not _ND and type(b) is not _ND


def _check_representable(value, d: dt.dtype) -> None:
    """PyTorch refuses a Python number that overflows the dtype it is converted to (the
    ``alpha`` of add, the bounds of clamp ...), where plain arithmetic operands wrap."""
    if type(value) is _ND or type(value) is bool:
        return
    if type(value) is int:
        check_python_int(value)
    if d is dt.bool:
        return
    bounds = _INT_RANGES.get(d)
    if bounds is not None:
        # c10 lets negative numbers wrap into unsigned types (-255 converts to uint8).
        fits = (-bounds[1] if bounds[0] == 0 else bounds[0]) <= value <= bounds[1]
    elif type(value) is complex:
        fits = all(not math.isfinite(p) or builtins.abs(p) <= FLOAT_MAX[d] for p in (value.real, value.imag))
    else:
        fits = not math.isfinite(value) or builtins.abs(value) <= FLOAT_MAX[d]
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {overflow_type_name(d)} without overflow")


# -- half-type kernels of several steps, as PyTorch's loops round them ---------------------------

def _half_scaled_sum(a, b, alpha: float, combine, d: dt.dtype, *operands) -> np.ndarray:
    """``combine(a, alpha * b)`` of float32 operands for a half-type result ``d``, with ``alpha``
    rounded to ``d``: once in float32 in PyTorch's vector loop, the product rounded to ``d`` first
    in its scalar tails (``_half_lanes``)."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    return _half_lanes(d, lambda: combine(a, b * np.float32(alpha)),
                       lambda: combine(a, _as(b * np.float32(alpha), d).astype(np.float32)), shape, *operands)


def _float_remainder(a, b):
    """Python's ``%`` of float operands as PyTorch computes it: NumPy's remainder, except that a
    zero keeps the dividend's sign (``-24 % 3`` is -0.0; PyTorch takes fmod's zero, NumPy gives
    the divisor's sign)."""
    result = np.remainder(a, b)
    zero = np.equal(result, 0)
    if zero.any():
        result = np.where(zero, np.copysign(result, a), result)
    return result


def _floor_division_in(d: dt.dtype):
    """Floor division of float32 operands for a half-type result ``d``, as PyTorch's loops compute
    it (``_half_lanes``): in float32 in the vector steps; in the scalar tails c10's
    ``div_floor_floating`` on half-type values, rounding after every step."""
    def rounded(values):
        return _as(values, d).astype(np.float32)

    def steps(a, b):
        mod = rounded(np.fmod(a, b))
        quotient = rounded(rounded(a - mod) / b)
        quotient = np.where((mod != 0) & ((b < 0) != (mod < 0)), rounded(quotient - 1), quotient)
        floor = np.floor(quotient)
        floor = np.where(rounded(quotient - floor) > 0.5, rounded(floor + 1), floor)
        floor = np.where(quotient != 0, floor, np.copysign(0, rounded(a / b)))
        return np.where(b == 0, a / b, floor)

    def floor_divide(a, b):
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        return _half_lanes(d, lambda: np.floor_divide(a, b), lambda: steps(a, b), shape, a, b)
    return floor_divide


def _half_truncation(d: dt.dtype):
    """Truncating division of float32 operands for a half-type result ``d``: PyTorch's kernel
    rounds the quotient to ``d`` before truncating it."""
    def truncate(a, b):
        return np.trunc(np.true_divide(a, b).astype(d._np)).astype(np.float32)
    return truncate


def _half_x_log_y(d: dt.dtype):
    """``_x_log_y`` as PyTorch's float16 / bfloat16 kernel computes it: ``log(y)`` rounded to
    ``d`` first, then the product in float32 (rounded once by the caller)."""
    def x_log_y(x, y):
        log = np.log(y).astype(np.float32).astype(d._np).astype(np.float32)  # (float32 log, as PyTorch)
        return np.where((x == 0) & ~np.isnan(y), 0.0, np.asarray(x, np.float32) * log)
    return x_log_y


# -- gradient helpers: formulas run on Tensors, through public methods and operators ----------


def _zeros_like(x):
    # ``zeros_like``, as PyTorch's formulas write it (the dispatch level sees it; new_zeros it does not)
    return ops.zeros_like(x)


# -- unary ops -------------------------------------------------------------------------------

def _neg_grad(grad):
    return -grad


# -- selection -------------------------------------------------------------------------------

# float32 and float64: dtypes whose fast paths need no promotion or half-precision care.


def _integer_operands(input, other, kernel_name: str, name: str, allow_bool: bool = True):
    """Both operands in their promoted integer (or bool) dtype, for bitwise ops."""
    if _both_scalars(input, other):
        raise _invalid_arguments(name, input, other)
    d = operand_dtype(input, other)
    if not _is_integral(d) or d is dt.bool and not allow_bool:
        raise _unsupported(kernel_name, d, input, other)
    return _in(input, d), _in(other, d), d


# -- more elementwise math: inverse hyperbolics, angles, float-only binaries -------------------

def _real_float_unary(ufunc, kernel_name: str, input: np.ndarray) -> np.ndarray:
    """``_float_unary`` for functions PyTorch has no complex kernel for."""
    if input.dtype.kind == "c":
        raise not_implemented(kernel_name, dtype_of(input))
    return _float_unary(ufunc, input)


def _complex_log1p(z: np.ndarray) -> np.ndarray:
    """``log(1 + z)`` as c10's complex log1p: the modulus' logarithm through log1p near 0."""
    x, y = z.real, z.imag
    theta = np.arctan2(y, x + 1)
    r = x * (2 + x) + y * y
    small = np.hypot(x, y) < 0.5
    modulus = np.where(small, np.where(r == 0, x, 0.5 * np.log1p(r)), np.log(np.hypot(x + 1, y)))
    return modulus + 1j * theta


def _complex_log_add_exp(x: np.ndarray, total: np.ndarray) -> np.ndarray:
    """PyTorch's complex ``_log_add_exp_helper`` (logaddexp, and each step of logcumsumexp with the
    running ``total``): NaN in either part of either is a complex NaN, the larger real part is
    factored out, and two equal infinite real parts are handled apart."""
    x_smaller = x.real < total.real
    low, high = np.where(x_smaller, x, total), np.where(x_smaller, total, x)
    general = _complex_log1p(np.exp(low - high)) + high
    infinite = ~np.isfinite(low.real) & (low.real == high.real)
    result = np.where(infinite, np.where(low.real < 0, low, np.log(np.exp(low) + np.exp(high))), general)
    nan = np.isnan(x.real) | np.isnan(x.imag) | np.isnan(total.real) | np.isnan(total.imag)
    return np.where(nan, complex(np.nan, np.nan), result)
