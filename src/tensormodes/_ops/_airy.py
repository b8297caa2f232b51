"""The Airy function Ai as PyTorch's ``airy_ai_forward`` (Cephes') evaluates it: asymptotic
rational forms beyond -2.09 and 2.09, the power series between, by Horner's rule with fused steps.

>>> import numpy as np
>>> round(float(airy_ai(np.array(0.0))), 12)
0.355028053888
"""

from __future__ import annotations

import math

import numpy as np

from ._bessel_jy import trig
from ._cephes import exp_of, fused_of, polevl
from .common import quiet

__all__ = ["airy_ai"]

# Cephes' coefficients, highest order first: AN / AD beyond 2.09 in 1 / zeta, AFN / AFD and AGN / AGD
# (amplitude and phase) below -2.09 in z**2
_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
    1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01, 1.40264691163389668864e+01,
    9.99999999999999995305e-01)
_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
    1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01, 1.40959135607834029598e+01,
    1.00000000000000000470e+00)
_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
    -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
    -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
    9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01, 4.40291641615211203805e-03,
    7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02, 5.85804113048388458567e-03,
    2.82851600836737019778e-04, 6.98793669997260967291e-06, 8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
    5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02, 4.12656523824222607191e-03,
    1.01259085116509135510e-04, 1.17166733214413521882e-06, 4.91834570062930015649e-09)
_INVERSE_SQRT_PI = 5.64189583547756286948e-01
_AI_0, _AI_PRIME_0 = 0.355028053887817239260, 0.258819403792806798405  # Ai(0), -Ai'(0)


def _negative(x: np.ndarray) -> np.ndarray:
    kind = x.dtype.type
    root = np.sqrt(-x)
    zeta = kind(-2.0) * x * root / kind(3.0)
    z = kind(1.0) / zeta
    square = z * z
    amplitude = kind(1.0) + square * polevl(square, _AFN) / polevl(square, _AFD)
    phase = z * polevl(square, _AGN) / polevl(square, _AGD)
    t = zeta + kind(0.25 * math.pi)
    value = fused_of(x)(trig("sin", t), amplitude, -(trig("cos", t) * phase))
    return kind(_INVERSE_SQRT_PI) / np.sqrt(root) * value


def _positive(x: np.ndarray) -> np.ndarray:
    kind = x.dtype.type
    zeta = kind(2.0) * x * np.sqrt(x) / kind(3.0)
    inverse = kind(1.0) / zeta
    ratio = polevl(inverse, _AN) / polevl(inverse, _AD)
    return kind(_INVERSE_SQRT_PI) * ratio / (kind(2.0) * np.sqrt(np.sqrt(x)) * exp_of(zeta))


def _series(x: np.ndarray) -> np.ndarray:
    """Ai(0) f(x) + Ai'(0) g(x), f and g the power series summed until a term of f is below the
    type's epsilon of it (each element for itself)."""
    kind = x.dtype.type
    eps = np.finfo(kind).eps
    one = kind(1)
    f, g, k, m, n = np.ones_like(x), x.copy(), np.ones_like(x), np.ones_like(x), x.copy()
    cube = x * x * x
    running = np.ones(x.shape, bool)
    while running.any():
        i = np.flatnonzero(running)
        mi, ni, ki = m[i] * cube[i], n[i] * cube[i], k[i] + one
        mi = mi / ki
        ki = ki + one
        ni = ni / ki
        mi = mi / ki
        f[i] = f[i] + mi
        ki = ki + one
        ni = ni / ki
        g[i] = g[i] + ni
        m[i], n[i], k[i] = mi, ni, ki
        running[i] = np.absolute(mi / f[i]) > eps
    return fused_of(x)(np.full_like(x, kind(_AI_0)), f, -(kind(_AI_PRIME_0) * g))


def airy_ai(x: np.ndarray) -> np.ndarray:
    """Ai(x): NaN at the infinities, 0 beyond 103.892."""
    shape, x = x.shape, x.reshape(-1)
    result = np.zeros_like(x)
    with quiet():
        for part, kernel in ((x < -2.09, _negative), (x >= 2.09, _positive),
                             (~((x < -2.09) | (x >= 2.09)), _series)):
            part &= ~np.isinf(x) & ~(x > 103.892)
            if part.any():
                result[part] = kernel(x[part])
    result[np.isinf(x)] = np.nan
    return result.reshape(shape)
