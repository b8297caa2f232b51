"""``torch.special``'s orthogonal polynomials of ``x`` of degree ``n``: Chebyshev's of the four
kinds (and shifted to [0, 1]), Hermite's (physicists' and probabilists'), Laguerre's and
Legendre's, each as PyTorch's CPU kernel evaluates it.

PyTorch computes in the operands' promoted float type (float32 for integers; no half types),
``n`` truncated to an integer (NaN, the infinities and numbers beyond int64 to its lowest:
degree below 0 gives 0); by the three-term recurrence, its product and subtraction fused as
its build contracts them, or for Chebyshev's within (-1, 1) and high degrees the
trigonometric forms. ``x`` or ``n`` may be a Python number (not both). No gradients: the
results never require grad.

>>> import tensormodes as tm
>>> tm.special.chebyshev_polynomial_t(tm.tensor([0.5, 2.0]), 3).tolist()  # 4x^3 - 3x
[-1.0, 26.0]
"""
# Parameters carry PyTorch's names (x, n).

from __future__ import annotations

from numbers import Number

import numpy as np

from .. import _dtype as dt
from ._pointwise import _both_scalars, _in, _invalid_arguments, _raise_broadcast_error
from ._random_math import fma32, fma64, libm
from ._samples import C64, F16
from .common import floating, not_implemented, operand_dtype, quiet
from .meta_rules import elementwise
from .registry import Sample, Tensor, TensorSpec, op

_SPECIAL = "tensormodes.special"
_INT64_LOWEST = np.iinfo(np.int64).min


def _degrees(n: np.ndarray) -> np.ndarray:
    """``static_cast<int64_t>(n)`` as x86 computes it: truncation, and the lowest int64 for
    NaN, the infinities and values out of range."""
    inside = np.isfinite(n) & (np.absolute(n) < 2.0 ** 63)
    return np.where(inside, np.trunc(np.where(inside, n, 0)), 0).astype(np.int64) + np.where(inside, 0, _INT64_LOWEST)


def _libm(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's ``name`` in ``x``'s type (float's from the double, rounded)."""
    return libm(name, x).astype(x.dtype, copy=False)


def _polynomial(kernel, name: str, x, n) -> np.ndarray:
    """``kernel(x, degrees)`` on the operands in their promoted float type, broadcast."""
    if _both_scalars(x, n):
        raise TypeError(f"{_invalid_arguments(f'special_{name}', x, n)}, but expected one of:\n"
                        " * (Tensor x, Tensor n, *, Tensor out = None)\n * (Number x, Tensor n, *, Tensor out = None)\n"
                        " * (Tensor x, Number n, *, Tensor out = None)\n")
    d = operand_dtype(x, n)
    if d.is_complex or d in (dt.float16, dt.bfloat16):
        raise not_implemented(f"{name}_cpu", d)
    result = floating(d)
    kind = np.float64 if result is dt.float64 else np.float32
    try:
        xs, ns = np.broadcast_arrays(np.asarray(_in(x, result), kind), np.asarray(_in(n, result), kind))
    except ValueError:
        _raise_broadcast_error(x, n)
    with quiet():
        values = kernel(np.array(xs).reshape(-1), _degrees(ns).reshape(-1))  # flat: the recurrence indexes them
    return np.asarray(values.reshape(xs.shape), result._np)


def _recurrence(first: np.ndarray, second: np.ndarray, n: np.ndarray, step, stops_at_nan: bool) -> np.ndarray:
    """The recurrence ``p, q = q, step(k, p, q, index)`` for k = 2 ... n (where ``n >= 2``;
    ``first`` / ``second`` are p and q before it), on the elements still running only; with
    ``stops_at_nan``, an element stops once q is NaN (PyTorch's loop condition)."""
    index = np.flatnonzero(n >= 2)
    p, q = first[index], second[index]
    done = np.empty_like(second)
    k = 2
    while index.size:
        p, q = q, step(k, p, q, index)
        finished = n[index] == k
        if stops_at_nan:
            finished |= np.isnan(q)
        if finished.any():
            done[index[finished]] = q[finished]
            keep = ~finished
            index, p, q = index[keep], p[keep], q[keep]
        k += 1
    return done


def _fused(x: np.ndarray):
    return fma64 if x.dtype == np.float64 else fma32


# -- Chebyshev's polynomials, plain and shifted ------------------------------------------------
# Per kind: (its value at t = 1, at t = -1 before the sign (-1)^n, q's start from t and 2t), each
# a function of (t, n) in the computing type.
def _half_integer(n, kind):
    return n.astype(kind) + kind(0.5)


def _chebyshev(x: np.ndarray, n: np.ndarray, kind: str, shifted: bool) -> np.ndarray:
    real = x.dtype.type
    one = real(1)
    t = (x + x) - one if shifted else x
    twice = t + t
    if shifted:
        at_plus, at_minus = x == one, x == 0
    else:
        at_plus, at_minus = (np.absolute(x) == one) & (x > 0), (np.absolute(x) == one) & ~(x > 0)
    count = n.astype(real)
    odd = (n % 2 == 1) | (n % 2 == -1)
    sign = np.where(odd, -one, one)
    plus_value = {"t": np.ones_like(t), "u": count + one, "v": np.ones_like(t), "w": count + count + one}[kind]
    minus_value = sign * {"t": one, "u": count + one, "v": count + count + one, "w": one}[kind]
    if kind == "t":
        start = t
    else:
        start = {"u": twice, "v": twice - one, "w": twice + one}[kind]
    threshold = {"t": 6, "u": 6 if shifted else 8, "v": 6 if shifted else 8, "w": 4 if shifted else 8}[kind]
    fused = _fused(x)
    trigonometric = (n > threshold) & (np.absolute(t) < one)
    running = np.where(trigonometric | at_plus | at_minus, -1, n)
    result = _recurrence(np.ones_like(t), start, running, lambda k, p, q, i: fused(twice[i], q, -p), True)
    result = np.where(n == 1, start, result)
    result = np.where(n == 0, one, result)
    if trigonometric.any():
        result[trigonometric] = _chebyshev_trigonometric(t[trigonometric], n[trigonometric], kind, shifted,
                                                         x[trigonometric])
    result = np.where(at_minus, minus_value, result)
    result = np.where(at_plus, plus_value, result)
    return np.where(n < 0, real(0), result)


def _chebyshev_trigonometric(t, n, kind, shifted, x):
    """The kinds' closed forms in the angle acos(t), with their limits where the denominator's
    test fails, as PyTorch writes them."""
    real = t.dtype.type
    angle = _libm("acos", t) if t.dtype == np.float64 else np.arccos(t.astype(np.float64)).astype(real)
    count = n.astype(real)
    trig = _trig(t.dtype)
    if kind == "t":
        return trig("cos", count * angle)
    odd = n % 2 == 1
    if kind == "u":
        sine = trig("sin", angle)
        return np.where(sine != 0, trig("sin", (count + 1) * angle) / sine,
                        (count + 1) * trig("cos", (count + 1) * angle) / t)
    half = _half_integer(n, real) * angle
    if kind == "v":
        test = trig("sin", angle / real(2))
        limit = np.where(odd, -(count + count + 1), count + count + 1)
        return np.where(test != 1, trig("cos", half) / trig("cos", angle / real(2)), limit)
    test = trig("cos", angle / real(2))
    limit = np.where(odd, real(-1), real(1))
    if not shifted:
        limit = np.where(x > 0, count + count + 1, limit)
    return np.where(test != 1, trig("sin", half) / trig("sin", angle / real(2)), limit)


def _trig(dtype):
    if dtype == np.float64:
        return _libm
    return lambda name, v: getattr(np, name)(v.astype(np.float64)).astype(np.float32)


# -- Hermite's, Laguerre's and Legendre's ------------------------------------------------------
_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}  # beyond this degree: NaN


def _hermite_h(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    real = x.dtype.type
    twice = x + x
    fused = _fused(x)
    # PyTorch's k = 2, 4 ... 2n - 2 is 2 (m - 1) for the steps m = 2 ... n
    running = np.where(n > _HERMITE_LIMIT[x.dtype], -1, n)
    result = _recurrence(np.ones_like(x), twice, running,
                         lambda m, p, q, i: fused(twice[i], q, -(real(2 * (m - 1)) * p)), False)
    result = np.where(n > _HERMITE_LIMIT[x.dtype], real(np.nan), result)
    result = np.where(n == 1, twice, np.where(n == 0, real(1), result))
    return np.where(n < 0, real(0), result)


def _hermite_he(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    real = x.dtype.type
    fused = _fused(x)
    running = np.where(n > _HERMITE_LIMIT[x.dtype], -1, n)  # PyTorch's k = 1 ... n - 1 is m - 1
    result = _recurrence(np.ones_like(x), x.copy(), running, lambda m, p, q, i: fused(x[i], q, -(real(m - 1) * p)),
                         False)
    result = np.where(n > _HERMITE_LIMIT[x.dtype], real(np.nan), result)
    result = np.where(n == 1, x, np.where(n == 0, real(1), result))
    return np.where(n < 0, real(0), result)


def _laguerre_l(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    real = x.dtype.type
    complement = real(1) - x
    fused = _fused(x)

    def step(m, p, q, i):  # PyTorch's k is m - 1
        k = m - 1
        return fused(real(k + k) + complement[i], q, -(real(k) * p)) / real(k + 1)
    result = _recurrence(np.ones_like(x), complement, np.where(x == 0, -1, n), step, True)
    result = np.where(n == 1, complement, np.where(n == 0, real(1), result))
    result = np.where(np.absolute(x) == 0, real(1), result)
    return np.where(n < 0, real(0), result)


def _legendre_p(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    real = x.dtype.type
    fused = _fused(x)

    def step(m, p, q, i):
        k = m - 1
        return fused(real(k + k + 1) * x[i], q, -(real(k) * p)) / real(k + 1)
    on_edge = np.absolute(x) == 1
    result = _recurrence(np.ones_like(x), x.copy(), np.where(on_edge, -1, n), step, True)
    result = np.where(n == 1, x, np.where(n == 0, real(1), result))
    odd = n % 2 == 1
    result = np.where(on_edge, np.where((x > 0) | ~odd, real(1), real(-1)), result)
    return np.where(n < 0, real(0), result)


# -- the ops -----------------------------------------------------------------------------------
_SAMPLES = (Sample((TensorSpec((2, 3), "float32", -1.5, 1.5), TensorSpec((2, 3), "int64", 0, 12))),
            Sample((TensorSpec((4,), "float64", -0.99, 0.99), 11)),
            Sample((0.5, TensorSpec((3,), "int64", 0, 9))),
            Sample((TensorSpec((3,), "float64", -2, 2), TensorSpec((3,), "float64", 0, 6))),
            Sample((TensorSpec((2, 3), "int64", -2, 2), 3)))
_ERRORS = (Sample((F16, 2)), Sample((C64, 2)))


def _declare(name: str, kernel, doc: str) -> None:
    """Declare ``tensormodes.special.<name>(x, n)``, ATen's ``special_<name>`` with its Tensor,
    ``x_scalar`` and ``n_scalar`` overloads."""
    def polynomial(x: Tensor | Number, n: Tensor | Number) -> Tensor:
        return _polynomial(kernel, name, x, n)
    polynomial.__name__ = polynomial.__qualname__ = f"special_{name}"
    polynomial.__doc__ = doc
    polynomial.__module__ = __name__
    aten = f"special_{name}"
    op(name=f"special_{name}", function=name, namespace=_SPECIAL, errors=_ERRORS, meta=elementwise,
       differentiable=False, out=True, samples=_SAMPLES, tags=("pointwise",),
       aten={f"{aten}.default": (), f"{aten}.x_scalar": ("x: Scalar",), f"{aten}.n_scalar": ("n: Scalar",)})(polynomial)


_ORDINALS = {"t": "first", "u": "second", "v": "third", "w": "fourth"}
for _kind, _ordinal in _ORDINALS.items():
    _declare(f"chebyshev_polynomial_{_kind}", lambda x, n, kind=_kind: _chebyshev(x, n, kind, False),
             f"The Chebyshev polynomial of the {_ordinal} kind ({_kind.upper()}_n) of degree ``n`` at ``x``.")
    _declare(f"shifted_chebyshev_polynomial_{_kind}", lambda x, n, kind=_kind: _chebyshev(x, n, kind, True),
             f"The shifted Chebyshev polynomial of the {_ordinal} kind ({_kind.upper()}*_n: "
             f"{_kind.upper()}_n(2x - 1)) of degree ``n`` at ``x``.")
_declare("hermite_polynomial_h", _hermite_h, "The physicists' Hermite polynomial H_n of degree ``n`` at ``x``.")
_declare("hermite_polynomial_he", _hermite_he, "The probabilists' Hermite polynomial He_n of degree ``n`` at ``x``.")
_declare("laguerre_polynomial_l", _laguerre_l, "The Laguerre polynomial L_n of degree ``n`` at ``x``.")
_declare("legendre_polynomial_p", _legendre_p, "The Legendre polynomial P_n of degree ``n`` at ``x``.")
