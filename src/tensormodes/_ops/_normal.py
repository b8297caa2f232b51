"""The normal distribution's special functions as PyTorch's CPU kernels evaluate them: ``ndtri``
(Cephes' rational approximations), ``erfcx`` (Steven G. Johnson's pieces, ``_erfcx_pieces``) and
``log_ndtr`` (SciPy's split at -1), their polynomials by Horner's rule with fused steps.

>>> import numpy as np
>>> float(ndtri(np.array(0.5)))
0.0
"""

from __future__ import annotations

import math

import numpy as np

from ._cephes import fused_of, log_of, polevl
from ._erfcx_pieces import ERFCX_PIECES
from ._random_math import libm
from .common import quiet

__all__ = ["erfcx", "incomplete_gamma", "log_ndtr", "ndtri"]

_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
    1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.00000000000000000000E0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
    -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1, 1.59056225126211695515E1,
    -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1, 4.40805073893200834700E1,
    1.46849561928858024014E1, 2.18663306850790267539E0, -1.40256079171354495875E-1, -3.50424626827848203418E-2,
    -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.00000000000000000000E0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
    1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1, -3.80806407691578277194E-2,
    -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0, 1.33303460815807542389E0,
    2.01485389549179081538E-1, 1.23716634817820021358E-2, 3.01581553508235416007E-4, 2.65806974686737550832E-6,
    6.23974539184983293730E-9)
_NDTRI_Q2 = (1.00000000000000000000E0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
    2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4, 2.89247864745380683936E-6,
    6.79019408009981274425E-9)
_EXP_MINUS_2 = 0.13533528323661269189
_SQRT_2PI = 2.50662827463100050242E0


def ndtri(y0: np.ndarray) -> np.ndarray:
    """The inverse of the normal distribution function, as PyTorch's ``calc_ndtri``."""
    kind = y0.dtype.type
    one = kind(1)
    upper = y0 > one - kind(_EXP_MINUS_2)
    y = np.where(upper, one - y0, y0)
    result = np.full_like(y0, np.nan)
    with quiet():
        central = (y > kind(_EXP_MINUS_2)) & (y0 > 0) & (y0 < 1)
        if central.any():
            c = y[central] - kind(0.5)
            square = c * c
            ratio = square * polevl(square, _NDTRI_P0) / polevl(square, _NDTRI_Q0)
            result[central] = fused_of(c)(c, ratio, c) * kind(_SQRT_2PI)
        tail = ~central & (y0 > 0) & (y0 < 1)
        if tail.any():
            t = y[tail]  # (::log and ::sqrt are C's double functions, float's results rounded once)
            x = np.sqrt(-2.0 * libm("log", t.astype(np.float64))).astype(kind)
            start = (x - libm("log", x.astype(np.float64)) / x).astype(kind)
            z = one / x
            near = x < kind(8)
            correction = np.where(near, z * polevl(z, _NDTRI_P1) / polevl(z, _NDTRI_Q1),
                                  z * polevl(z, _NDTRI_P2) / polevl(z, _NDTRI_Q2))
            value = start - correction
            result[tail] = np.where(upper[tail], value, -value)
    result[y0 == 0] = -np.inf
    result[y0 == 1] = np.inf
    return result


_INVERSE_SQRT_PI = 0.56418958354775628694807945156


def _erfcx_pieces(y100: np.ndarray) -> np.ndarray:
    """``erfcx_y100``: piece int(y100)'s polynomial in double (its literals are doubles: a float
    ``t`` is widened), 1 beyond the last piece."""
    piece = np.minimum(y100.astype(np.int64), 100)
    t = (y100 * y100.dtype.type(2) - (2 * piece + 1).astype(y100.dtype)).astype(np.float64)
    table = np.array(ERFCX_PIECES + ((1.0,) + (0.0,) * 6,))[piece]
    value = table[:, 6].copy()
    for k in range(5, -1, -1):  # (not fused: PyTorch's build leaves this function's steps apart)
        value = value * t + table[:, k]
    return np.where(piece == 100, 1.0, value)


def erfcx(x: np.ndarray) -> np.ndarray:
    """``exp(x**2) erfc(x)`` as PyTorch's ``calc_erfcx`` (float kernels: the pieces and the far
    continued fraction in double, as its double literals make them)."""
    kind = x.dtype.type
    shape, x = x.shape, x.reshape(-1)
    result = np.empty(x.shape, np.float64)
    with quiet():
        near = (x >= 0) & (x <= 50)
        if near.any():
            result[near] = _erfcx_pieces(kind(400) / (kind(4) + x[near]))
        far = x > 50
        if far.any():
            m = x[far]
            square = (m * m).astype(np.float64)  # (in the type; the double literals widen what follows)
            numerator = square * (square + 4.5) + 2.0
            denominator = m.astype(np.float64) * (square * (square + 5) + 3.75)
            value = float(kind(_INVERSE_SQRT_PI)) * numerator / denominator
            result[far] = np.where(m > 5e7, (kind(_INVERSE_SQRT_PI) / m).astype(np.float64), value)
        negative = x < 0
        if negative.any():
            m = x[negative]
            doubled = 2 * libm("exp", (m * m).astype(np.float64))  # (C's exp: a double, float's x * x widened)
            inner = m >= -6.1
            value = doubled.copy()
            if inner.any():
                value[inner] = doubled[inner] - _erfcx_pieces(kind(400) / (kind(4) - m[inner]))
            result[negative] = np.where(m < -26.7, np.inf, value)
    result[np.isnan(x)] = np.nan
    return result.astype(kind).reshape(shape)


_ERFC = np.frompyfunc(math.erfc, 1, 1)


def log_ndtr(x: np.ndarray) -> np.ndarray:
    """``log(ndtr(x))`` as PyTorch's ``calc_log_ndtr``: below -1 ``log(erfcx(-t) / 2) - t**2``,
    elsewhere ``log1p(-erfc(t) / 2)``, with t = x / sqrt(2)."""
    kind = x.dtype.type
    t = x * kind(math.sqrt(0.5))
    with quiet():
        low = log_of(erfcx(-t) / kind(2)) - t * t
        complement = np.asarray(_ERFC(t.astype(np.float64)), np.float64).astype(kind)
        high = libm("log1p", (-complement / kind(2)).astype(np.float64)).astype(kind)
    return np.where(x < kind(-1), low, high)


_LGAMMA = np.frompyfunc(lambda a: math.lgamma(a) if a > 0 else math.inf, 1, 1)
_EPS = 2.0 ** -53
_TINY = 1e-300
_MOST_STEPS = 100000


def _gamma_prefactor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x**a exp(-x) / Gamma(a), in logarithms."""
    return np.exp(a * np.log(x) - x - np.asarray(_LGAMMA(a), np.float64))


def _lower_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = x**a e**-x / Gamma(a + 1) (1 + x / (a + 1) + x**2 / ((a + 1)(a + 2)) ...), for x < a + 1."""
    term = 1 / a
    total = term.copy()
    running = np.ones(a.shape, bool)
    n = 1
    while running.any() and n < _MOST_STEPS:
        term = np.where(running, term * x / (a + n), term)
        total = np.where(running, total + term, total)
        running &= np.absolute(term) > np.absolute(total) * _EPS
        n += 1
    return total * _gamma_prefactor(a, x)


def _upper_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) by Legendre's continued fraction (modified Lentz), for x >= a + 1."""
    b = x + 1 - a
    c = np.full_like(a, 1 / _TINY)
    d = 1 / b
    h = d.copy()
    running = np.ones(a.shape, bool)
    i = 1
    while running.any() and i < _MOST_STEPS:
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = np.where(np.absolute(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.absolute(c) < _TINY, _TINY, c)
        d = 1 / d
        delta = d * c
        h = np.where(running, h * delta, h)
        running &= np.absolute(delta - 1) > _EPS
        i += 1
    return h * _gamma_prefactor(a, x)


_TEMME_FROM = 1e6  # from here on Temme's first terms (error ~a**-1.5) beat the sums, whose logarithms lose ~a ulps


def _upper_temme(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) for very large a: Temme's uniform expansion, erfc(eta sqrt(a / 2)) / 2 plus its first
    correction exp(-a eta**2 / 2) / sqrt(2 pi a) (1 / (lambda - 1) - 1 / eta), lambda = x / a, eta the
    signed sqrt(2 (lambda - 1 - log(lambda))) (its series -1/3 + eta / 12 near lambda = 1)."""
    ratio = x / a
    excess = ratio - 1
    eta = np.sign(excess) * np.sqrt(2 * (excess - np.log1p(excess)))
    near = np.absolute(eta) < 1e-3
    safe_eta = np.where(near, 1.0, eta)
    safe_excess = np.where(near, 1.0, excess)
    correction = np.where(near, -1 / 3 + eta / 12, 1 / safe_excess - 1 / safe_eta)
    leading = 0.5 * np.asarray(_ERFC(eta * np.sqrt(a / 2)), np.float64)
    return leading + np.exp(-a * eta * eta / 2) / np.sqrt(2 * math.pi * a) * correction


def incomplete_gamma(a, x, upper: bool) -> np.ndarray:
    """The regularized lower (P) or upper (Q = 1 - P) incomplete gamma function, in double, with
    PyTorch's values at its edges (NaN below 0; a = 0, x = 0 and the infinities)."""
    a, x = (np.array(v, np.float64) for v in np.broadcast_arrays(a, x))
    shape, a, x = a.shape, a.reshape(-1), x.reshape(-1)
    result = np.full(a.shape, np.nan)
    with quiet():
        regular = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
        huge = regular & (a >= _TEMME_FROM)
        if huge.any():
            q = _upper_temme(a[huge], x[huge])
            result[huge] = q if upper else 1 - q
        regular &= ~huge
        series = regular & (x < a + 1)
        if series.any():
            p = _lower_series(a[series], x[series])
            result[series] = 1 - p if upper else p
        fraction = regular & ~series
        if fraction.any():
            q = _upper_fraction(a[fraction], x[fraction])
            result[fraction] = q if upper else 1 - q
        low, high = (1.0, 0.0) if upper else (0.0, 1.0)  # the values at x = 0 and at x = inf
        # PyTorch's tests in its order (a NaN fails the comparisons): x or a below 0, a = 0, x = 0, a
        # infinite, x infinite; each only where the earlier ones did not decide
        undecided = ~regular & ~huge & ~((x < 0) | (a < 0))
        for test, value in ((a == 0, np.where(x > 0, high, np.nan)), (x == 0, low),
                            (np.isinf(a), np.where(np.isinf(x), np.nan, low)), (np.isinf(x), high)):
            decided = undecided & test
            result[decided] = np.broadcast_to(value, a.shape)[decided]
            undecided &= ~test
    return result.reshape(shape)
