"""Special functions: the error functions (``erf``, ``erfc``, ``erfinv``), the gamma family
(``lgamma``, ``digamma``, ``polygamma``), evaluated in float64 and rounded to the result dtype, and
the Bessel functions ``i0`` and ``special.i1``, Cephes' series as PyTorch's CPU kernels evaluate them
(``_cephes``).
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import functools
import math
import numbers
import weakref

import numpy as np

from .._memory_format import strided
from . import _cephes
from ._pointwise import _float_unary, _real_float_unary
from ._random_math import fma32
from ._samples import BF16, C64, F16, I23, POSITIVE, POSITIVE_I, SCALAR_F64, UNIT, UNIT_INTEGERS, UNIT_SCALAR
from ._vector_kernels import sleef_expf
from .common import dtype_of, not_implemented, ops, quiet, squared
from .meta_rules import elementwise
from .registry import Sample, Tensor, TensorSpec, op


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
    """The error function, vectorised (NumPy has none), computed in float64: the series in x**2
    for every element (most of them, in a GELU), the tail's for those beyond 2."""
    inner, tail = _erf_series()
    shape, x = x.shape, x.reshape(-1)
    magnitude = np.absolute(x, dtype=np.float64)
    points = np.multiply(magnitude, magnitude)
    np.minimum(points, 4.0, out=points)  # the series' interval: elements beyond it are replaced below
    points /= 2
    points -= 1
    result = _chebval_in_place(points, inner)
    result *= magnitude
    beyond = magnitude >= 2
    if beyond.any():
        m = magnitude[beyond]
        far = 1 - np.exp(-m * m) * np.polynomial.chebyshev.chebval((m - 4) / 2, tail)
        far[m >= 6] = 1  # erf(x) rounds to 1 for x >= 6
        result[beyond] = far
    return np.copysign(result, x, out=result).reshape(shape)


_HALF_GELU_STEP = 64  # elements per step of PyTorch's float16 vector loop (two 32-lane vectors, AVX512)


def _half_gelu_erf(x: np.ndarray) -> np.ndarray:
    """erf as PyTorch's float16 GELU kernels compute it, ``x`` (contiguous, float32) in memory order:
    its vector steps use ``Vectorized<float>::erf`` (Abramowitz and Stegun's 7.1.26 in fused
    multiply-adds: 1 - t * poly(t) * exp(-x^2), t = 1 / (1 + p|x|), with Sleef's exp), the elements after the last
    whole step ``std::erf``. The approximation's 1e-7 error shows in the far tail, where 1 + erf(x)
    cancels to a few float32 ulps."""
    flat = x.reshape(-1)
    blocked = flat.size - flat.size % _HALF_GELU_STEP
    result = np.empty(flat.shape, np.float32)
    if blocked:
        v = flat[:blocked]
        f32 = np.float32
        size = np.abs(v)
        t = f32(1) / fma32(f32(0.3275911), size, f32(1))
        poly = fma32(f32(1.061405429), t, f32(-1.453152027))
        for coefficient in (1.421413741, -0.284496736, 0.254829592):
            poly = fma32(poly, t, f32(coefficient))
        decay = -sleef_expf(-(v * v))
        result[:blocked] = np.copysign(fma32(decay * t, poly, f32(1)), v)
    if blocked < flat.size:
        result[blocked:] = _erf(flat[blocked:])
    return result.reshape(x.shape)


def half_gelu_exp(x: np.ndarray) -> np.ndarray:
    """exp as PyTorch's float16 GELU backward kernel computes it, ``x`` (contiguous, float32) in
    memory order: Sleef's in its vector steps of 64, the C library's ``expf`` after the last one."""
    flat = x.reshape(-1)
    blocked = flat.size - flat.size % _HALF_GELU_STEP
    result = np.empty(flat.shape, np.float32)
    result[:blocked] = sleef_expf(flat[:blocked])
    result[blocked:] = _cephes.exp_of(flat[blocked:])
    return result.reshape(x.shape)


def _chebval_in_place(x: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """``numpy.polynomial.chebyshev.chebval(x, coefficients)`` written into ``x`` (1-D): the same
    operations in the same order (so the same values), a block of elements at a time, in
    buffers that stay in the cache instead of arrays allocated at every step."""
    for start in range(0, x.size, _BLOCK):
        block = x[start:start + _BLOCK]
        block[...] = _clenshaw(block, coefficients)
    return x


_BLOCK = 8192  # elements per pass of the recurrence (its four float64 buffers: 256 KiB)


def _clenshaw(x: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    doubled = x + x
    previous = np.full_like(x, coefficients[-2])
    current = np.full_like(x, coefficients[-1])
    spare = np.empty_like(x)
    for c in coefficients[-3::-1]:
        # previous, current = c - current, previous + current * doubled (chebval's steps)
        np.multiply(current, doubled, out=spare)
        spare += previous
        np.subtract(c, current, out=previous)
        current, spare = spare, current
    current *= x
    current += previous
    return current


# Terms of the two series that decide float32 values: within ~160 float64 ulps of the whole
# series (measured on a dense grid of [0, 6]); elements within _UNDECIDED (12x that) of a
# float32 rounding midpoint are left to the whole series.
_LEADING_TERMS = (15, 17)
_UNDECIDED = 2 ** 11
# Below 1 (most of a GELU's elements) a polynomial of degree 9 in x**2, fitted to the inner series
# on [0, 1] alone, is as close (within ~160 ulps on every float32 of [0.5, 1)): 10 Horner steps, not 15.
_NEAR_ZERO_DEGREE = 9


@functools.cache
def _erf_leading_terms() -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """Power coefficients, highest first (Horner's order), of ``erf(x) / x`` in ``x**2`` near zero
    (fitted to ``_erf``'s inner series on [0, 1]) and of the first terms of ``_erf``'s two series:
    of ``erf(x) / x`` in ``x**2`` on [0, 4], and of ``erfc(x) * exp(x**2)`` in ``x`` on [2, 6]."""
    def power(polynomial):
        return tuple(float(c) for c in polynomial.convert(kind=np.polynomial.Polynomial).coef[::-1])
    inner, tail = _erf_series()
    chebyshev = np.polynomial.Chebyshev
    nodes = (np.cos(np.pi * (np.arange(200) + 0.5) / 200) + 1) / 2  # Chebyshev nodes of [0, 1]
    near_zero = chebyshev.fit(nodes, np.polynomial.chebyshev.chebval(nodes / 2 - 1, inner), _NEAR_ZERO_DEGREE,
                              domain=[0, 1])
    return (power(near_zero), power(chebyshev(inner[:_LEADING_TERMS[0]], domain=[0, 4])),
            power(chebyshev(tail[:_LEADING_TERMS[1]], domain=[2, 6])))


def _horner(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """The polynomial (coefficients highest first) at ``x``, in a new array, in place."""
    value = x * coefficients[0]
    for c in coefficients[1:-1]:
        value += c
        value *= x
    value += coefficients[-1]
    return value


def _near_midpoint(value: np.ndarray) -> np.ndarray:
    """The indices where ``value`` (float64, consumed) is within ``_UNDECIDED`` ulps of a float32
    rounding midpoint (for normal float32 results)."""
    bits = value.view(np.int64)  # the low 29 bits are those float32 drops; the midpoint is 2**28
    bits -= 2 ** 28 - _UNDECIDED
    bits &= 2 ** 29 - 1
    return (bits < 2 * _UNDECIDED).nonzero()[0]  # (flatnonzero's Python wrapper: ~1 us a call)


def _erf_rounded(x: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """``_erf(x)`` rounded to ``x``'s dtype, bit for bit; written into ``x`` (a contiguous float32
    array) with ``in_place``, where a whole-array result would be one more array the C heap
    gives back and faults in again at every call.

    For float32 (GELU's inputs) several times faster: polynomials by Horner's rule, in
    float64 (below 1 a degree-9 one fitted to the inner series on [0, 1]; up to 2 the inner
    series' leading terms; beyond, the tail's), decide the float32 value of every element
    farther than ``_UNDECIDED`` float64 ulps from a float32 rounding midpoint (their error is
    12x smaller, so ``_erf`` rounds to the same float32 there: ``scripts/check_erf_float32.py``
    compares the two on every float32 of [0, 6], the tests on whole binades); the whole series
    computes the rest (about one element in 100,000), NaN, and elements whose erf would be
    subnormal.
    """
    if x.dtype != np.float32:
        result = _erf(x).astype(x.dtype, copy=False)
    else:
        with quiet():  # the inner series overflows far out, where the tail's replaces it
            into = in_place and x.flags.c_contiguous
            result = _erf_float32(x, x if into else np.empty(x.shape, np.float32))
            if into:
                return x
    if in_place:
        x[...] = result
        return x
    return result


_SQRT_HALF = math.sqrt(0.5)
# A GELU's forward computes erf(x / sqrt(2)), and its backward (``gelu_backward``, on the saved
# input) the same values again: ~60 % of each exact-GELU kernel. The forward (with grad mode on)
# keeps them, with the input's bits, for the first later call on the same array with the same
# bits; an entry goes when its array does, the oldest when they hold more than the budget.
_GELU_ERFS: dict[int, tuple[weakref.ref, np.ndarray, np.ndarray]] = {}
_GELU_ERFS_BUDGET = 64 * 2 ** 20  # bytes of the kept erfs and input bits together


def gelu_erf(x: np.ndarray, *, keep: bool = False) -> np.ndarray:
    """``erf(x * float32(sqrt(1/2)))`` of a float array ``x`` rounded to its dtype (``_erf_rounded``),
    the erf of a GELU; a new array the caller may overwrite, but with ``keep`` (a contiguous float32
    ``x``) kept for a later call on ``x`` with the same bits, which takes it over: read only.

    >>> gelu_erf(np.array([0.0, 1.0], np.float32)).tolist()
    [0.0, 0.6826894879341125]
    """
    key = id(x)
    kept = _GELU_ERFS.pop(key, None) if _GELU_ERFS else None
    if kept is not None:
        reference, bits, erf = kept
        if reference() is x and np.array_equal(bits, x.view(np.uint32)):  # same array, same values
            if keep:
                _GELU_ERFS[key] = kept
            return erf
    erf = _erf_rounded(np.multiply(x, x.dtype.type(_SQRT_HALF), out=np.empty_like(x)), in_place=True)
    if keep and x.dtype == np.float32 and x.flags.c_contiguous and 2 * x.nbytes <= _GELU_ERFS_BUDGET:
        _GELU_ERFS[key] = (weakref.ref(x, functools.partial(_forget_gelu_erf, key)), x.view(np.uint32).copy(), erf)
        # (over a list: a collection could drop an entry meanwhile, through its array's weakref)
        while sum(bits.nbytes * 2 for _, bits, _ in list(_GELU_ERFS.values())) > _GELU_ERFS_BUDGET:
            _GELU_ERFS.pop(next(iter(list(_GELU_ERFS))), None)
    return erf


def _forget_gelu_erf(key: int, reference: weakref.ref) -> None:
    kept = _GELU_ERFS.get(key)
    if kept is not None and kept[0] is reference:
        _GELU_ERFS.pop(key, None)


# Bit patterns of float32 magnitudes: from the smallest whose erf is a normal float32 up to 1,
# the polynomial near zero decides; the others (zero, subnormal results, [1, 2), the tail, NaN)
# are looked at apart.
_NORMAL_ERF_BITS = int(np.float32(2.0 ** -125).view(np.uint32))
_ONE_BITS = int(np.float32(1.0).view(np.uint32))
# elements per pass of Horner's rule: its two float64 buffers (256 KiB) stay in the L2 cache; 8,192 pays
# NumPy's per-call cost twice as often, 32,768 and more fault their pages in at every call (both ~25 % slower)
_ERF_BLOCK = 16384


def _erf_float32(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The float32 erf of ``x`` written into ``out`` (contiguous; ``x`` itself or a new array); every
    temporary a block's, and the elements apart (from 1 on, NaN, subnormal results) gathered block
    by block before it is overwritten, then taken together (their steps' fixed costs once)."""
    x, result = x.reshape(-1), out.reshape(-1)
    near_zero, inner, tail = _erf_leading_terms()
    undecided, undecided_x, apart, apart_x = [], [], [], []
    for start in range(0, x.size, _ERF_BLOCK):  # in blocks, so the temporaries stay in the cache
        values = x[start:start + _ERF_BLOCK]
        magnitude = values.view(np.uint32) & 0x7FFFFFFF
        magnitude -= _NORMAL_ERF_BITS  # unsigned: those below wrap around to the top
        far = (magnitude >= _ONE_BITS - _NORMAL_ERF_BITS).nonzero()[0]
        if far.size:
            apart.append(far + start)
            apart_x.append(values[far])
        wide = values.astype(np.float64)  # signed: the series in x**2 times x is odd, as erf
        value = _horner(np.multiply(wide, wide), near_zero)
        value *= wide
        result[start:start + _ERF_BLOCK] = value
        near = _near_midpoint(value)  # (elements from 1 on are replaced below; a flagged one is only recomputed)
        if near.size:
            undecided.append(near + start)
            undecided_x.append(wide[near])
    if apart:
        apart, apart_x = np.concatenate(apart), np.concatenate(apart_x)
        for positions in _erf_float32_apart(apart, apart_x, result, inner, tail):
            undecided.append(apart[positions])
            undecided_x.append(apart_x[positions].astype(np.float64))
    if undecided:
        result[np.concatenate(undecided)] = _erf_few(np.concatenate(undecided_x))
    return out


_FEW_UNDECIDED = 32  # up to this many, Python's floats replay the series (~3 us an element, ~90 us a NumPy call)


def _erf_few(x: np.ndarray) -> np.ndarray:
    """``_erf(x)`` for the few elements the fast path leaves undecided (about one a GELU call): for
    magnitudes below 2, the same float64 operations in the same order on Python floats (IEEE
    doubles, so the same values) — NumPy's 23-step recurrence costs ~90 us even on one element."""
    magnitudes = np.absolute(x, dtype=np.float64).tolist()
    if len(magnitudes) > _FEW_UNDECIDED or not all(m < 2 for m in magnitudes):  # NaN too
        return _erf(x)
    coefficients = _erf_series()[0].tolist()
    values = []
    for m in magnitudes:
        point = min(m * m, 4.0) / 2 - 1
        doubled = point + point
        previous, current = coefficients[-2], coefficients[-1]
        for c in coefficients[-3::-1]:  # _clenshaw's steps
            previous, current = c - current, current * doubled + previous
        values.append((current * point + previous) * m)
    return np.copysign(np.array(values), x)


def _erf_float32_apart(apart: np.ndarray, values: np.ndarray, result: np.ndarray, inner: tuple[float, ...],
                       tail: tuple[float, ...]) -> list[np.ndarray]:
    """The elements out of the near-zero polynomial's range, ``values`` at ``apart`` (float32):
    those from 1 on written into ``result`` (the inner series' leading terms below 2, the tail's
    beyond); the positions in ``values`` left to the whole series returned, in arrays that are
    not empty (near a midpoint, NaN, subnormal results). Zeros keep the polynomial's signed 0."""
    magnitude = np.absolute(values, dtype=np.float64)
    middle = magnitude >= 1
    other = ~middle  # zeros, subnormal results, NaN
    other &= magnitude != 0
    far = magnitude >= 2
    undecided = [other.nonzero()[0]]
    if far.any():  # (rare in a GELU: each step below costs a few microseconds even on no element)
        middle &= ~far
        beyond = far.nonzero()[0]
        value = _erf_beyond_two(magnitude[beyond], tail)
        result[apart[beyond]] = np.copysign(value, values[beyond])
        undecided.append(beyond[_near_midpoint(value)])
    between = middle.nonzero()[0]
    wide = values[between].astype(np.float64)
    value = _horner(np.multiply(wide, wide), inner)
    value *= wide
    result[apart[between]] = value
    undecided.append(between[_near_midpoint(value)])
    return [positions for positions in undecided if positions.size]


_FEW_BEYOND = 128  # below this many, math.erf is quicker than the tail's series (~0.1 us an element, ~25 us a call)


def _erf_beyond_two(magnitude: np.ndarray, tail: tuple[float, ...]) -> np.ndarray:
    """erf of float32 magnitudes from 2 on (not NaN), in float64, as near to ``_erf`` as the
    leading terms: the tail's series (erf is 1 at 6 and beyond, as in ``_erf``), or for a few
    elements the standard library's erf, within an ulp of erf, so ~10 ulps of ``_erf``."""
    if magnitude.size < _FEW_BEYOND:
        return np.array([math.erf(m) for m in magnitude.tolist()])
    wide = np.minimum(magnitude, 6, dtype=np.float64)
    value = np.exp(-np.multiply(wide, wide))
    value *= _horner(wide, tail)
    return np.subtract(1, value, out=value)


def _erf_grad(grad, input):
    # PyTorch's formula op by op (each op rounds a half type): 2 / sqrt(pi) * exp(-x^2) * grad
    return (2 / math.sqrt(math.pi)) * (-squared(input)).exp() * grad


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_erf_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((I23,)), Sample((SCALAR_F64,)),
             Sample((F16,)), Sample((TensorSpec((4,), "float64", -8, 8),))), tags=("core", "pointwise"))
def erf(input: Tensor) -> Tensor:
    """The error function of each element.

    >>> import tensormodes as tm
    >>> tm.erf(tm.tensor([0.0, 10.0, -10.0])).tolist()
    [0.0, 1.0, -1.0]
    """
    if input.dtype.kind == "c":
        raise not_implemented("erf_vml_cpu", dtype_of(input))
    if input.dtype == np.float32:
        return _erf_rounded(input)
    return _float_unary(_erf, input)


# math.erfc is correctly rounded to within an ulp over the whole range, tail included.
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_ERF = np.frompyfunc(math.erf, 1, 1)


def _erfc(x: np.ndarray) -> np.ndarray:
    return np.asarray(_ERFC(x), dtype=np.float64)


def _erfc_grad(grad, input):
    return (-2 / math.sqrt(math.pi)) * (-squared(input)).exp() * grad  # (PyTorch's order, as erf's)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_erfc_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((I23,)), Sample((SCALAR_F64,)),
             Sample((BF16,)), Sample((TensorSpec((4,), "float64", -3, 9),))), tags=("pointwise",))
def erfc(input: Tensor) -> Tensor:
    """The complementary error function ``1 - erf(input)``, accurate in the tail.

    >>> import tensormodes as tm
    >>> tm.erfc(tm.tensor([0.0, -10.0])).tolist()
    [1.0, 2.0]
    """
    return _real_float_unary(_erfc, "erfc_vml_cpu", input)


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


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_lgamma_grad, method=True, inplace=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((TensorSpec((), "float64", 0.5, 3),)),
             Sample((TensorSpec((3,), "float16", 0.5, 4),)), Sample((TensorSpec((4,), "float64", -2.9, -2.1),)),
             Sample((TensorSpec((3,), "bfloat16", 1, 20),))), tags=("pointwise",))
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
    return grad * ops.polygamma(1, input)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_digamma_grad, method=True, inplace=True, out=True,
    samples=(Sample((POSITIVE,)), Sample((POSITIVE_I,)), Sample((TensorSpec((), "float64", 0.5, 3),)),
             Sample((TensorSpec((3,), "float16", 0.5, 4),)), Sample((TensorSpec((4,), "float64", -2.9, -2.1),)),
             Sample((TensorSpec((3,), "bfloat16", 1, 20),))), tags=("pointwise",))
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
        # an array even for a 0-dim input (whose arithmetic gives NumPy scalars), written below
        result = np.array(scale * _hurwitz_zeta(n + 1, np.where(reflected, 1 - safe, safe)), dtype=np.float64)
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


_POLYGAMMA_SAMPLES = ((1, POSITIVE), (0, POSITIVE), (2, TensorSpec((3,), "float64", 0.5, 6)), (3, POSITIVE_I),
                      (1, TensorSpec((), "float64", 0.5, 3)), (2, TensorSpec((3,), "float16", 0.5, 4)),
                      (1, TensorSpec((4,), "float64", -2.9, -2.1)), (4, TensorSpec((3,), "float64", -1.8, -1.2)))


def _polygamma_grad(grad, n, input):
    return grad * ops.polygamma(n + 1, input)


@op(errors=(Sample((-1, POSITIVE)), Sample((1.5, POSITIVE))),
    meta=elementwise, grad=_polygamma_grad, out=True, samples=tuple(Sample(args) for args in _POLYGAMMA_SAMPLES),
    tags=("pointwise",))
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ``digamma`` (``polygamma(0, x)`` is ``digamma(x)``).

    >>> import tensormodes as tm
    >>> tm.polygamma(1, tm.tensor([1.0, 0.5])).tolist()  # pi**2 / 6, pi**2 / 2
    [1.644934058189392, 4.934802055358887]
    """
    return _polygamma_kernel(n, input)


def _polygamma_method_grad(grad, input, n):
    return grad * ops.polygamma(n + 1, input)


@op(errors=(Sample((POSITIVE, -1)),),
    meta=elementwise,
    grad=_polygamma_method_grad, function=False, method="polygamma", inplace="polygamma_", name="polygamma_method",
    samples=tuple(Sample((spec, n)) for n, spec in _POLYGAMMA_SAMPLES[:4]),
    aten={"polygamma.default": ("inplace=",)},
    schema={"(order)": "n self"}, tags=("pointwise",))
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
    # (PyTorch's formula computes erfinv again from the input; here its kernel costs more than
    # keeping the result does)
    return (0.5 * math.sqrt(math.pi)) * squared(result).exp() * grad  # (PyTorch's order: each op rounds)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_erfinv_grad, method=True, inplace=True, out=True,
    samples=(Sample((UNIT,)), Sample((UNIT_INTEGERS,)), Sample((UNIT_SCALAR,)),
             Sample((TensorSpec((3,), "float16", -0.9, 0.9),)), Sample((TensorSpec((4,), "float64", 0.9, 0.999),)),
             Sample((TensorSpec((3,), "bfloat16", -0.9, 0.9),))), tags=("pointwise",))
def erfinv(input: Tensor) -> Tensor:
    """The inverse error function of each element (+-inf at +-1, NaN outside [-1, 1]).

    >>> import tensormodes as tm
    >>> tm.erfinv(tm.tensor([0.0, 1.0, -1.0])).tolist()
    [0.0, inf, -inf]
    """
    return _real_float_unary(_erfinv, "erfinv_vml_cpu", input)


def _i1_grad(grad, input, result):
    # PyTorch's i1_backward: I0(x) - I1(x) / x, and its limit 0.5 where |x| is within epsilon of 0
    # (its at::full({}, value, options) reaches the dispatch level as scalar_tensor)
    if input.dtype in (ops.float16, ops.bfloat16):
        raise not_implemented("i1_backward", input.dtype)  # PyTorch's CPU kernel has no half types
    eps = float(ops.finfo(input.dtype).eps)
    options = {"dtype": input.dtype, "layout": strided, "device": input.device}
    not_tiny = input.abs() > eps
    safe = ops.where(not_tiny, input, ops.ops.aten.scalar_tensor.default(eps, **options))
    slope = safe.i0() - result * safe.reciprocal()
    return grad * ops.where(not_tiny, slope, ops.ops.aten.scalar_tensor.default(0.5, **options))


@op(name="special_i1", function="i1", namespace="tensormodes.special", errors=(Sample((C64,)),),
    meta=elementwise, grad=_i1_grad, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((I23,)), Sample((SCALAR_F64,)),
             Sample((TensorSpec((4,), "float64", -40, 40),)), Sample((TensorSpec((3,), "float64", -1e-17, 1e-17),))),
    tags=("pointwise",))
def special_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order one, of each element.

    >>> import tensormodes as tm
    >>> tm.special.i1(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [0.0, 0.5651591039924851]
    """
    return _cephes.cephes_unary(_cephes.bessel_i1, "i1_cpu", input)


def _i0_grad(grad, input):
    return grad * ops.special.i1(input)  # PyTorch's formula (a half type's I1 rounds once, from float)


@op(errors=(Sample((C64,)),),
    meta=elementwise, grad=_i0_grad, method=True, inplace=True, inplace_function=True, out=True,
    samples=(Sample((TensorSpec((2, 3), "float32", -4, 4),)), Sample((I23,)), Sample((SCALAR_F64,)),
             Sample((F16,)), Sample((TensorSpec((4,), "float64", -40, 40),)), Sample((BF16,))), tags=("pointwise",))
def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order zero, of each element.

    >>> import tensormodes as tm
    >>> tm.i0(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [1.0, 1.2660658777520082]
    """
    return _cephes.cephes_unary(_cephes.bessel_i0, "i0_vml_cpu", input)
