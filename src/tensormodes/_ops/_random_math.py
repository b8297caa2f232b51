"""The arithmetic of PyTorch's CPU samplers, reproduced bit for bit in NumPy.

Two kinds of functions need care beyond IEEE ``+ - * / sqrt`` (which NumPy rounds
exactly as C does):

* PyTorch's float32 ``normal_`` of 16 or more contiguous elements runs its AVX2 kernel
  (also on AVX-512 machines: that kernel is not built for AVX-512), whose ``log`` and
  ``sincos`` are Cephes polynomials in float32, compiled with fused multiply-adds.
  ``log256`` and ``sincos256`` evaluate the same polynomials with the same fusions for any
  input; ``_fma`` is a correctly rounded float32 fused multiply-add. The kernel itself
  (``fill_normal16_words``) runs ``_radius_of`` and ``_sincos_of``: the same values on the
  2**24 inputs the kernel can meet each, in a fraction of the time.
* Scalar samplers call the C library's double ``log``, ``log1p``, ``exp``, ``tan``, ``sin``
  and ``cos``. NumPy's own versions differ from glibc's in the last bit now and then, so
  ``libm`` takes a value from an extended-precision evaluation when that rounds
  unambiguously and asks Python's ``math`` (the C library) for the rest.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["fill_normal16_float32", "fill_normal16_words", "libm", "box_muller_doubles", "fma64", "fma32", "uniform53",
           "uniform_low_bits"]

_F32 = np.float32
_F64 = np.float64
_TIE_BITS = np.uint64((1 << 29) - 1)  # the float64 bits below float32 precision
_TIE = np.uint64(1 << 28)  # ... holding exactly half a float32 ulp


def _fma(a: np.ndarray, b, c) -> np.ndarray:
    """float32 ``a * b + c`` with one rounding, on float64 arrays holding float32 values.

    The product is exact in float64; the sum rounds once in float64 and again to float32,
    which is correct unless the float64 sum sits exactly halfway between two float32s:
    then the call is redone exactly (round to odd, then to float32).
    """
    s = a * b
    s += c
    tie = (s.view(np.uint64) & _TIE_BITS) == _TIE
    out = _round32(s)
    if tie.any():
        at = np.flatnonzero(tie)
        out.flat[at] = _fma_exact(*(np.broadcast_to(v, s.shape).flat[at].astype(_F64) for v in (a, b, c)))
    return out


def fma32(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` with one rounding, as a float32 array."""
    a, b, c = (np.asarray(v, _F32).astype(_F64) for v in (a, b, c))
    return _fma(a, b, c).astype(_F32)


def _add_exact_product(x: np.ndarray, y: np.ndarray, factor: float) -> np.ndarray:
    """float32 ``x + y * factor`` fused, where the float64 sum is exact (short ``factor``)."""
    s = y * factor
    s += x
    return _round32(s)


def _fma_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    p = a * b  # exact: two 24-bit significands
    s = p + c
    virtual = s - c
    err = (p - virtual) + (c - (s - virtual))  # s + err == p + c exactly (TwoSum)
    inexact_even = (err != 0) & ((s.view(np.int64) & 1) == 0)
    s = np.where(inexact_even, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)  # round to odd
    return s.astype(_F32).astype(_F64)


def _round32(x: np.ndarray) -> np.ndarray:
    return x.astype(_F32).astype(_F64)


_LOG_P = tuple(float(_F32(v)) for v in (
    7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
    -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1))
_LOG_Q1, _LOG_Q2 = float(_F32(-2.12194440e-4)), float(_F32(0.693359375))
_SQRTHF = float(_F32(0.707106781186547524))
_MIN_NORMAL = float(np.array(0x00800000, np.int32).view(_F32))


def log256(x32: np.ndarray) -> np.ndarray:
    """PyTorch's AVX2 ``log256_ps`` of positive float32 values, as float64 holding float32 values."""
    x32 = np.maximum(x32, _F32(_MIN_NORMAL))
    bits = x32.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F64) + 1.0
    x = ((bits & ~0x7F800000) | 0x3F000000).view(_F32).astype(_F64)  # the mantissa in [0.5, 1)
    small = x < _SQRTHF
    x -= 1.0
    x += np.where(small, x + 1.0, 0.0)  # x + x - 1 below sqrt(1/2), else x - 1 (exact)
    e -= small
    z = _round32(x * x)
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma(y, x, p)
    y = _round32(y * x)
    y = _fma(y, z, _round32(e * _LOG_Q1))
    y = _fma(z, -0.5, y)
    x = _round32(x + y)
    return _fma(e, _LOG_Q2, x)


_FOPI = float(_F32(1.27323954473516))
_DP = tuple(float(_F32(v)) for v in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8))
_COS_P = tuple(float(_F32(v)) for v in (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002))
_SIN_P = tuple(float(_F32(v)) for v in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1))


def _rounding_shift(low: float, high: float) -> float:
    """The double ``C`` with ``(s + C) - C`` = ``s`` rounded to float32 for every ``s`` whose
    magnitude lies in ``[low, high]``, one binade (checked)."""
    exponent = math.floor(math.log2(low))
    assert 2.0 ** exponent <= low <= high <= 2.0 ** (exponent + 1)
    return 1.5 * 2.0 ** (exponent + 29)  # its ulp, 2**(exponent - 23), is the binade's float32 ulp


def _quadratic_coefficients(c: tuple, z_max: float) -> tuple:
    """``(c0, c1 + C, C, c2)`` for ``_fused_quadratic``: ``c0 z + c1`` over ``0 <= z <= z_max``."""
    ends = sorted(abs(v) for v in (c[1], c[0] * z_max + c[1]))
    shift = _rounding_shift(*ends)
    assert c[1] + shift - shift == c[1]  # c1 sits on the grid: the shifted constant is exact
    return (c[0], c[1] + shift, shift, c[2])


_Z_MAX = 0.62  # z = x**2 of the reduced angle, |x| <= pi/4 (0.6169) and a rounding
_COS_Q, _SIN_Q = (_quadratic_coefficients(c, _Z_MAX) for c in (_COS_P, _SIN_P))


def sincos256(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's AVX2 ``sincos256_ps`` of non-negative float32 values (held in float64)."""
    j = (_round32(x * _FOPI)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F64)
    for dp in _DP:  # short constants: each product and sum is exact in float64
        x = _add_exact_product(x, y, dp)
    sin_negative = (j & 4) != 0
    cos_negative = ((j - 2) & 4) == 0
    use_sin_poly = (j & 2) == 0
    z = _round32(x * x)
    yc = _fma(np.full_like(x, _COS_P[0]), z, _COS_P[1])
    yc = _fma(yc, z, _COS_P[2])
    yc = _round32(yc * z)
    yc = _fma(yc, z, -_round32(z * 0.5))
    yc = _round32(yc + 1.0)
    ys = _fma(np.full_like(x, _SIN_P[0]), z, _SIN_P[1])
    ys = _fma(ys, z, _SIN_P[2])
    ys = _round32(ys * z)
    ys = _fma(ys, x, x)
    sin = np.where(use_sin_poly, ys, yc)
    cos = np.where(use_sin_poly, yc, ys)
    np.negative(sin, out=sin, where=sin_negative)
    np.negative(cos, out=cos, where=cos_negative)
    return sin, cos


_TWO_PI_32 = float(_F32(2.0 * math.pi))
_ROWS = 1 << 12  # blocks of 16 per pass: keeps the temporaries of a pass in cache (2 MiB L2: measured
# 2**11 to 2**13 rows, this the fastest)


# -- the float32 kernel, fast: the same values on the inputs it can meet ------------------------------
#
# ``fill_normal16_float32`` meets only 24-bit uniforms ``k / 2**24``: ``log256`` sees
# ``1 - k / 2**24`` and ``sincos256`` sees ``float32(2 pi) * (k / 2**24)``, 2**24 inputs each.
# ``_radius_of`` and ``_sincos_of`` compute the same values from ``k`` with far fewer passes:
# float32 NumPy arithmetic wherever the kernel's step is an IEEE float operation (a fused step
# whose product is exact in float32 is one too), a fused multiply-add as a float64 product and sum
# rounded once to float32, and the three-step angle reduction as one float64 sum (each of its
# float32 steps is exact there). No rounding midpoint is met on these inputs:
# ``tests/test_random_streams_more.py`` compares both with ``log256`` / ``sincos256`` on all
# 2**24 inputs of each.

_U = "unsafe"
_LOG_P64 = _LOG_P  # the float32 coefficients, as Python floats
_Q1_32, _Q2_32, _SQRTHF_32 = _F32(_LOG_Q1), _F32(_LOG_Q2), _F32(_SQRTHF)
_FOPI_32 = _F32(_FOPI)
# theta = float32(2 pi) * (k / 2**24), rounded once: the same as k times this (a power-of-two scaling)
_ANGLE_STEP = _F32(_TWO_PI_32 * 2.0 ** -24)
# the reduction x + y DP1, + y DP2, fma(y, DP3, x): its first two float32 sums are exact on these
# inputs and the whole sum fits a double, so it is x + y (DP1 + DP2 + DP3) rounded once
_DP_SUM = _DP[0] + _DP[1] + _DP[2]
_TWO24 = float(1 << 24)
_LOW24 = np.uint32((1 << 24) - 1)
_SQRTHF_BITS = np.int32(_SQRTHF_32.view(np.int32))
_SQRTHF_OFFSET = np.int32(0x3F800000 - int(_SQRTHF_BITS))
_TWO24_U32 = np.uint32(1 << 24)
_I23 = np.int32(23)
_EXPONENT_BIAS = np.int32(127 + 24)
_MANTISSA_FIELD = np.int32(0x7FFFFF)
_SIGN_BIT = np.int32(-(1 << 31))


class _Work:
    """The temporaries of one pass (``n`` elements a side), allocated once per fill, with the
    views the kernels take of them (taken here once: a ``view`` call costs about a microsecond,
    some forty a pass otherwise)."""

    __slots__ = ("f32", "f32_bits", "f64", "f64_bits", "i32", "i32_unsigned", "words", "word_halves",
                 "normal_halves")

    def __init__(self, n: int) -> None:
        self._keep(tuple(np.empty(n, _F32) for _ in range(8)), tuple(np.empty(n, _F64) for _ in range(3)),
                   tuple(np.empty(n, np.int32) for _ in range(2)), tuple(np.empty(n, np.uint32) for _ in range(2)))

    def _keep(self, f32: tuple, f64: tuple, i32: tuple, words: tuple) -> None:
        self.f32, self.f64, self.i32, self.words = f32, f64, i32, words
        self.f32_bits = tuple(a.view(np.int32) for a in f32)
        self.f64_bits = tuple(a.view(np.int64) for a in f64)
        self.i32_unsigned = tuple(a.view(np.uint32) for a in i32)
        self.word_halves = tuple(a.view("V32") for a in words)  # 8 words an item: half a block of 16
        self.normal_halves = tuple(a.view("V32") for a in f32[6:])  # the fill's two results, as items

    def cut(self, n: int) -> None:
        """Shorten every buffer to ``n`` elements (the last, shorter pass)."""
        self._keep(*(tuple(a[:n] for a in group) for group in (self.f32, self.f64, self.i32, self.words)))


def _fused_quadratic(coefficients: tuple, z64: np.ndarray, z: np.ndarray, y64: np.ndarray, out: np.ndarray) -> None:
    """``out = fma(fma(c0, z, c1), z, c2) * z`` in float32, each fused multiply-add done exactly in
    double (``y64`` its buffer) and rounded once, as the reference sincos's ``_fma`` steps.

    ``coefficients`` is ``(c0, c1 + C, C, c2)``: the inner fma's values all lie in one binade (for
    every z the kernel meets), so adding ``C`` (1.5 times the power of two whose double ulp is
    that binade's float32 ulp) rounds the exact ``c0 z + c1`` to float32 in the one addition and
    subtracting it is exact: a pass instead of a round trip through float32."""
    c0, c1_shifted, shift, c2 = coefficients
    np.multiply(z64, c0, out=y64)
    y64 += c1_shifted
    y64 -= shift
    y64 *= z64
    y64 += c2
    out[...] = y64  # slice assignment casts as ``copyto`` does, with less overhead per call
    out *= z


# Rounding a double to float32 precision on its bits, in place: add half a float32 ulp to the
# magnitude and clear the 29 bits below float32's significand. Two integer passes instead of the
# round trip through a float32 buffer (no faster alone, but the float32 buffer is spared and the
# integer passes are cheaper on this machine: ~13.6-15 against ~16.6 µs a Horner step of 32,768). It
# rounds halfway cases away from zero where the cast rounds them to even: no double the kernel's
# log chain meets is halfway (``tests/test_random_streams_more.py`` checks all 2**24 inputs).
_HALF_ULP32_BITS = np.int64(1 << 28)
_ABOVE_ULP32_BITS = np.int64(-(1 << 29))


def _radius_of(k: np.ndarray, work: _Work, out: np.ndarray) -> np.ndarray:
    """``sqrt(-2 log256(1 - k / 2**24))`` into ``out`` (float32) for 0 <= k < 2**24; uses the
    first five float32 buffers of ``work``."""
    v, x, e, z, y = work.f32[:5]
    v_bits = work.f32_bits[0]
    x64, y64, z64 = work.f64
    y64_bits = work.f64_bits[1]
    ix = work.i32[0]
    np.subtract(_TWO24_U32, k, out=work.i32_unsigned[0])  # u1 * 2**24, an integer in [1, 2**24]
    v[...] = ix  # exact
    # frexp, then the kernel's "mantissa below sqrt(1/2): double it, one less on the exponent", as
    # integer steps on the bits: adding this offset carries into the exponent field exactly where
    # the mantissa field reaches sqrt(1/2)'s, so the exponent field is the kernel's exponent and the
    # mantissa field plus sqrt(1/2)'s bits is its mantissa (in [sqrt(1/2), sqrt(2)))
    v_bits += _SQRTHF_OFFSET
    np.right_shift(v_bits, _I23, out=ix)
    ix -= _EXPONENT_BIAS  # the float's bias and the 24 of u1 = v / 2**24
    e[...] = ix
    v_bits &= _MANTISSA_FIELD
    v_bits += _SQRTHF_BITS
    np.subtract(v, _F32(1), out=x)  # exact
    np.multiply(x, x, out=z)
    x64[...] = x
    np.multiply(x64, _LOG_P64[0], out=y64)
    y64 += _LOG_P64[1]
    for p in _LOG_P64[2:]:
        y64_bits += _HALF_ULP32_BITS  # the previous fused step, rounded to float32
        y64_bits &= _ABOVE_ULP32_BITS
        y64 *= x64
        y64 += p
    y[...] = y64
    y *= x
    y64[...] = y
    z64[...] = z
    y64 *= z64
    np.multiply(e, _Q1_32, out=v)  # v is free again
    x64[...] = v  # and x64
    y64 += x64
    y[...] = y64
    z *= _F32(0.5)  # fma(z, -0.5, y): the product is exact
    y -= z
    y += x
    e *= _Q2_32  # fma(e, Q2, x): e Q2 is exact (a small integer times 9 bits)
    e += y
    e *= _F32(-2)
    return np.sqrt(e, out=out)


def _sincos_of(k: np.ndarray, work: _Work, sin: np.ndarray, cos: np.ndarray) -> None:
    """``sincos256(float32(2 pi) * (k / 2**24))`` into ``sin``, ``cos`` for 0 <= k < 2**24; uses
    the first six float32 buffers of ``work``."""
    theta, x, z, yc, ys, q = work.f32[:6]
    ys_bits, yc_bits = work.f32_bits[4], work.f32_bits[3]
    x64, y64, z64 = work.f64
    j, t = work.i32
    theta[...] = k  # exact: k < 2**24
    theta *= _ANGLE_STEP
    np.multiply(theta, _FOPI_32, out=q)
    j[...] = q  # truncation, as _mm256_cvttps_epi32
    j += 1
    j &= ~1
    x64[...] = j
    x64 *= _DP_SUM
    y64[...] = theta
    x64 += y64
    x[...] = x64  # rounded to float32, and back
    x64[...] = x
    np.multiply(x, x, out=z)
    z64[...] = z
    _fused_quadratic(_COS_Q, z64, z, y64, yc)
    y64[...] = yc
    y64 -= 0.5  # fma(yc, z, -z / 2) = (yc - 1/2) z: exact in double, rounded once
    y64 *= z64
    yc[...] = y64
    yc += _F32(1)
    _fused_quadratic(_SIN_Q, z64, z, y64, ys)
    y64[...] = ys
    y64 += 1.0  # fma(ys, x, x) = (ys + 1) x: exact in double, rounded once
    y64 *= x64
    ys[...] = y64
    # the polynomials trade places where bit 1 of j is set: both exchange the bits they differ in
    # (select by bit masks: ``copyto(where=)`` is ten times slower); the signs: the sine's is bit 2
    # of j, the cosine's bit 1 xor bit 2 (j is 2 or 4)
    sin_bits, cos_bits = sin.view(np.int32), cos.view(np.int32)
    np.bitwise_xor(ys_bits, yc_bits, out=sin_bits)
    np.left_shift(j, 30, out=t)  # bit 1 of j in the sign bit
    np.right_shift(t, 31, out=cos_bits)  # -1 where it is set, else 0
    sin_bits &= cos_bits
    np.bitwise_xor(yc_bits, sin_bits, out=cos_bits)
    sin_bits ^= ys_bits
    j <<= 29  # bit 2 of j in the sign bit, bit 1 below it
    t ^= j
    j &= _SIGN_BIT
    t &= _SIGN_BIT
    sin_bits ^= j
    cos_bits ^= t


def fill_normal16_words(k: np.ndarray, mean: float, std: float, *, over_words: bool = False) -> np.ndarray:
    """PyTorch's ``normal_fill_16_AVX2`` over the float uniforms ``k / 2**24``, ``k`` the low
    24 bits of each 32-bit word (a multiple of 16 of them): in each block of 16, element j (< 8)
    and j + 8 become a Box–Muller pair; float32. ``over_words``: write the normals over ``k``
    (a contiguous uint32 array the caller gives up), which spares a fresh output's page faults.

    >>> out = fill_normal16_words(np.full(16, 1 << 23, np.uint32), 0.0, 1.0)  # u = 1/2: r cos(pi), r sin(pi)
    >>> out[[0, 8]]
    array([-1.17741001e+00, -1.02932454e-07], dtype=float32)
    """
    if over_words:
        out = k.reshape(-1).view(_F32)  # each block's words are copied out before its normals go in
    else:
        k = np.ascontiguousarray(k, np.uint32)
        out = np.empty(k.size, _F32)
    halves = k.reshape(-1, 16).view("V32")  # (blocks, 2): 8 words each
    out_halves = out.reshape(-1, 16).view("V32")
    mean32, std32 = float(_F32(mean)), float(_F32(std))
    blocks = halves.shape[0]
    rows = min(_ROWS, blocks)
    work = _Work(8 * rows)
    for start in range(0, blocks, _ROWS):
        r = min(_ROWS, blocks - start)
        if r != rows:
            rows = r
            work.cut(8 * r)
        k1, k2 = work.words
        radius, n1, n2 = work.f32[5:8]  # the radius: a buffer _radius_of does not use
        # slice assignment of 32-byte items: faster than ``copyto`` (a different copy loop)
        work.word_halves[0][...] = halves[start:start + r, 0]
        work.word_halves[1][...] = halves[start:start + r, 1]
        k1 &= _LOW24  # the float uniforms' bits, here where the words are in cache
        k2 &= _LOW24
        _sincos_of(k2, work, n2, n1)  # n2 holds the sines, n1 the cosines
        _radius_of(k1, work, radius)
        n1 *= radius
        n2 *= radius
        if std32 != 1.0 or mean32 != 0.0:
            n1[...] = _fma(n1.astype(_F64), std32, mean32)
            n2[...] = _fma(n2.astype(_F64), std32, mean32)
        elif not k1.min():  # the kernel's fused n * 1 + 0 turns -0 into +0; a product is -0 only where
            # the radius is 0, k1 = 0 (the angle's sine and cosine are never -0): one reduction, not two passes
            n1 += _F32(0)
            n2 += _F32(0)
        out_halves[start:start + r, 0] = work.normal_halves[0]
        out_halves[start:start + r, 1] = work.normal_halves[1]
    return out


def fill_normal16_float32(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``fill_normal16_words`` over float32 uniforms ``k / 2**24`` (a multiple of 16 of them)."""
    k = np.empty(u.size, np.uint32)
    np.multiply(u.reshape(-1), _F32(2.0 ** 24), out=k, casting=_U)
    return fill_normal16_words(k, mean, std)


# -- the C library's double functions ----------------------------------------------------------------

_EXTENDED = np.finfo(np.longdouble).nmant >= 63
# glibc's double log/exp/sin/cos/tan are within 0.52 ulp (0.56 for tan): a value whose exact
# result is further than this from a rounding midpoint rounds as the exact value does.
_SAFE_FRACTION = {"log": 0.45, "exp": 0.45, "sin": 0.45, "cos": 0.45, "tan": 0.40}
_VECTOR_MIN = 64


def libm(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's double ``name`` of each element (``math.<name>``), vectorised where safe."""
    x = np.asarray(x, _F64)
    scalar = getattr(math, name)
    if x.size < _VECTOR_MIN or not _EXTENDED or name not in _SAFE_FRACTION:
        return _elementwise(scalar, x)
    with np.errstate(all="ignore"):
        exact = getattr(np, name)(x.astype(np.longdouble))
        rounded = exact.astype(_F64)
        gap = np.abs(exact - rounded.astype(np.longdouble)) / np.spacing(np.abs(rounded)).astype(np.longdouble)
    doubtful = np.flatnonzero(~(gap < _SAFE_FRACTION[name]) | ~np.isfinite(rounded) | (rounded == 0))
    if doubtful.size:
        rounded.flat[doubtful] = _elementwise(scalar, x.flat[doubtful])
    return rounded


def _elementwise(function, x: np.ndarray) -> np.ndarray:
    def safe(v):
        try:
            return function(v)
        except (ValueError, OverflowError):
            return np.log(v) if function is math.log else (math.inf if function is math.exp else math.nan)
    return np.array([safe(float(v)) for v in x.reshape(-1)], _F64).reshape(x.shape)


_SCALAR_PAIRS = 16
_MASK53 = (1 << 53) - 1


def box_muller_doubles(stream, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` samples of PyTorch's scalar ``normal_distribution<double>``: the cached second
    value of the last pair first, then pairs ``r cos(theta)``, ``r sin(theta)`` from two
    53-bit uniforms each (``u1`` gives the angle, ``u2`` the radius); an unused last
    ``sin`` is cached for the next call."""
    out = np.empty(n, _F64)
    start = 0
    if n and stream.normal_double is not None:
        out[0] = stream.normal_double
        stream.normal_double = None
        start = 1
    pairs = (n - start + 1) // 2
    if 0 < pairs <= _SCALAR_PAIRS:  # a few values: plain floats are faster than arrays
        words = stream.words(4 * pairs).tolist()
        values = []
        for i in range(0, 4 * pairs, 4):
            u1 = (((words[i] << 32) | words[i + 1]) & _MASK53) * 2.0 ** -53
            u2 = (((words[i + 2] << 32) | words[i + 3]) & _MASK53) * 2.0 ** -53
            radius = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            values += (radius * math.cos(theta), radius * math.sin(theta))
        out[start:] = values[:n - start]
        if (n - start) % 2:
            stream.normal_double = values[-1]
    elif pairs:
        u = uniform53(stream, 2 * pairs)
        u1, u2 = u[0::2], u[1::2]
        radius = np.sqrt(-2.0 * _elementwise(math.log1p, -u2))
        theta = 2.0 * math.pi * u1
        values = np.empty(2 * pairs, _F64)
        values[0::2] = radius * libm("cos", theta)
        values[1::2] = radius * libm("sin", theta)
        out[start:] = values[:n - start]
        if (n - start) % 2:
            stream.normal_double = float(values[-1])
    if std != 1.0 or mean != 0.0:
        out = fma64(out, std, mean)
    return out


def uniform53(stream, n: int) -> np.ndarray:
    """``n`` double uniforms in [0, 1): 53 low bits of a 64-bit draw, times 2**-53."""
    return (stream.words64(n) & np.uint64((1 << 53) - 1)).astype(_F64) * 2.0 ** -53


def uniform_low_bits(stream, n: int, digits: int) -> np.ndarray:
    """``n`` float32 uniforms in [0, 1) from the low ``digits`` bits of one 32-bit word each
    (float32: 24, float16: 11, bfloat16: 8)."""
    words = stream.words(n)
    words &= np.uint32((1 << digits) - 1)  # in place: the words are this call's own
    out = words.astype(_F32)
    out *= _F32(2.0 ** -digits)
    return out


# -- fused multiply-add in double ----------------------------------------------------------------------

_SPLITTER = float(2 ** 27 + 1)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLITTER * a
    high = c - (c - a)
    return high, a - high


def fma64(a, b, c) -> np.ndarray:
    """double ``a * b + c`` with one rounding (what PyTorch's compiled ``x * std + mean``
    becomes). Error-free transformations give ``a * b + c`` as ``s + t + e`` exactly; when
    ``t + e`` is itself exact, rounding ``s + (t + e)`` is the one rounding. The rest
    (rare) are computed with fractions."""
    a, b, c = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64))
    with np.errstate(all="ignore"):
        p = a * b
        a_high, a_low = _split(a)
        b_high, b_low = _split(b)
        e = ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low
        s = p + c
        virtual = s - c
        t = (p - virtual) + (c - (s - virtual))
        v = t + e
        v_virtual = v - e
        w = (t - v_virtual) + (e - (v - v_virtual))
        out = s + v
    hard = np.flatnonzero((w != 0) | ~np.isfinite(out) | ~np.isfinite(e))
    if hard.size:
        out.flat[hard] = [_fma_fraction(float(x), float(y), float(z))
                          for x, y, z in zip(a.flat[hard], b.flat[hard], c.flat[hard], strict=True)]
    return out


def _fma_fraction(a: float, b: float, c: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    try:
        return float(Fraction(a) * Fraction(b) + Fraction(c))
    except OverflowError:
        return math.copysign(math.inf, a * b + c)
