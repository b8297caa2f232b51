"""The Bessel functions of the first and second kinds of orders 0 and 1 (``bessel_j0``, ``j1``,
``y0``, ``y1``) as PyTorch's CPU kernels evaluate them: Cephes' rational approximations (below 5)
and Hankel's asymptotic forms (beyond), by Horner's rule in the tensor's type with fused steps.

>>> import numpy as np
>>> float(bessel_j0(np.array(0.0)))
1.0
"""

from __future__ import annotations

import numpy as np

from ._cephes import fused_of, log_of, polevl
from ._random_math import libm
from .common import quiet

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "trig"]

# Cephes' coefficients, highest order first: R (J, below 5) and Y (Y, below 5) in x**2, P and Q
# (the asymptotic forms' amplitude and phase, shared by J and Y of an order) in 25 / x**2
_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
    5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00, 9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
    5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00, 1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
    -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
    -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
    7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03, 2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
    9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
    1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14, 3.18121955943204943306e+16,
    1.71086294081043136091e+18)
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
    5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00, 1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
    5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00, 9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
    3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02, 2.11688757100572135698e+02,
    2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
    9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03, 3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
    3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
    2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14, 8.95222336184627338078e+16,
    5.32278620332680085395e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
    -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15, 4.42733268572569800351e+16,
    -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
    8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15, 2.50596256172653059228e+17)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
    -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
    1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14, 6.87141087355300489866e+16,
    3.97270608116560655612e+18)

# J0's first two zeros squared, J1's; pi / 4, 3 pi / 4; sqrt(2 / pi); 2 / pi
_J0_ZEROS = (5.78318596294678452118e+00, 3.04712623436620863991e+01)
_J1_ZEROS = (1.46819706421238932572e+01, 4.92184563216946036703e+01)
_QUARTER_PI = 0.785398163397448309615660845819875721
_THREE_QUARTERS_PI = 2.356194490192344928846982537459627163
_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448


def trig(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's sin / cos (float's from the double, rounded: glibc's sinf and cosf round
    correctly nearly always)."""
    if x.dtype == np.float64:
        return libm(name, x)
    return libm(name, x.astype(np.float64)).astype(np.float32)


def _split_at_five(x: np.ndarray, near, far) -> np.ndarray:
    result = np.empty_like(x)
    with quiet():
        inside = x <= 5
        if inside.any():
            result[inside] = near(x[inside])
        if (~inside).any():
            result[~inside] = far(x[~inside])
    return result


def _hankel(x: np.ndarray, order: int, second_kind: bool) -> np.ndarray:
    """Beyond 5: sqrt(2 / (pi x)) (P cos(x - phase) - 5 / x Q sin(x - phase)) for J (sin and cos
    swapped, and +, for Y), P and Q rational in (5 / x)**2."""
    kind = x.dtype.type
    if order == 0:
        z = kind(25) / (x * x)
        tables, phase = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ), _QUARTER_PI
    else:
        z = kind(5) / x * (kind(5) / x)
        tables, phase = (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ), _THREE_QUARTERS_PI
    pp, pq, qp, qq = (polevl(z, t) for t in tables)
    shifted = x - kind(phase)
    first, second = trig("sin" if second_kind else "cos", shifted), trig("cos" if second_kind else "sin", shifted)
    correction = kind(5) / x * (qp / qq) * second
    value = fused_of(x)(pp / pq, first, correction if second_kind else -correction)
    return value * kind(_SQRT_2_OVER_PI) / np.sqrt(x)


def bessel_j0(x: np.ndarray) -> np.ndarray:
    """``J0(x)`` as PyTorch's ``bessel_j0_forward`` (even: of |x|)."""
    kind = x.dtype.type
    x = np.absolute(x)

    def near(m):
        square = m * m
        value = (square - kind(_J0_ZEROS[0])) * (square - kind(_J0_ZEROS[1])) * polevl(square, _J0_RP)
        value = value / polevl(square, _J0_RQ)
        return np.where(m < kind(0.00001), kind(1) - square / kind(4), value)
    return _split_at_five(x, near, lambda m: _hankel(m, 0, False))


def bessel_j1(x: np.ndarray) -> np.ndarray:
    """``J1(x)`` as PyTorch's ``bessel_j1_forward`` (odd: -J1(-x) below 0)."""
    kind = x.dtype.type
    magnitude = np.absolute(x)

    def near(m):
        square = m * m
        value = polevl(square, _J1_RP) / polevl(square, _J1_RQ) * m
        return value * (square - kind(_J1_ZEROS[0])) * (square - kind(_J1_ZEROS[1]))
    value = _split_at_five(magnitude, near, lambda m: _hankel(m, 1, False))
    return np.where(x < 0, -value, np.where(x == 0, x, value))  # (-0 stays -0: PyTorch's product with x)


def bessel_y0(x: np.ndarray) -> np.ndarray:
    """``Y0(x)`` as PyTorch's ``bessel_y0_forward``: -inf at 0, NaN below."""
    kind = x.dtype.type

    def near(m):
        square = m * m
        positive = np.where(m > 0, m, kind(1))
        value = fused_of(m)(kind(_TWO_OVER_PI) * log_of(positive), bessel_j0(positive),
                            polevl(square, _Y0_YP) / polevl(square, _Y0_YQ))
        return np.where(m == 0, -np.inf, np.where(m < 0, np.nan, value))
    return _split_at_five(x, near, lambda m: _hankel(m, 0, True))


def bessel_y1(x: np.ndarray) -> np.ndarray:
    """``Y1(x)`` as PyTorch's ``bessel_y1_forward``: -inf at 0, NaN below."""
    kind = x.dtype.type

    def near(m):
        square = m * m
        positive = np.where(m > 0, m, kind(1))
        fused = fused_of(m)
        inner = fused(bessel_j1(positive), log_of(positive), -(kind(1) / positive))
        value = fused(positive, polevl(square, _Y1_YP) / polevl(square, _Y1_YQ), kind(_TWO_OVER_PI) * inner)
        return np.where(m == 0, -np.inf, np.where(m < 0, np.nan, value))
    return _split_at_five(x, near, lambda m: _hankel(m, 1, True))
