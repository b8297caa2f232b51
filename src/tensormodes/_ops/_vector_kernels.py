"""The arithmetic of PyTorch's AVX-512 vector kernels for float16 and bfloat16, reproduced in
NumPy: its reduced-float reductions convert 32 half values at a time into two 16-lane float32
vectors, so the order of a row's float32 sum is set by those lanes (``row_sums``); its vector
``exp`` is Sleef's ``expf`` (1 ulp, ``sleef_expf``), while the scalar tails after the last whole
vector call the C library's ``expf``.

The machine's PyTorch reports ``torch.backends.cpu.get_cpu_capability() == "AVX512"``; an AVX2
build adds in 8 lanes and would round some sums differently (not modelled).

>>> import numpy as np
>>> row_sums(np.array([[1.0, 2.0**-24, 2.0**-24]], np.float32)).tolist()  # left to right: 1 + tiny + tiny
[1.0]
"""

from __future__ import annotations

import functools

import numpy as np

from ._cephes import exp_of
from ._random_math import _fma, _round32

__all__ = ["FLOAT_LANES", "HALF_VECTOR_LANES", "float_row_sums", "half_loop_exp", "row_sums", "sleef_expf"]

FLOAT_LANES = _FLOAT_LANES = 16  # float32 lanes of one AVX-512 vector
HALF_VECTOR_LANES = 2 * _FLOAT_LANES  # half values loaded per step (widened to two float32 vectors)


def row_sums(values: np.ndarray) -> np.ndarray:
    """The float32 sums of the rows of ``values`` (float32, shape ``(rows, n)``, n >= 1) in the order
    ATen's reduced-float ``vec::reduce_all`` (and ``map_reduce_all``, ``map2_reduce_all``) adds them.

    Rows of fewer than 32: the second 16 lanes are added to the first, then the (up to 16) lanes
    are added left to right. Longer rows: two 16-lane accumulators take each whole step of 32, a
    partial last step adds into the lanes it fills; the accumulators are added, then the lanes
    halve in a tree (lane i with i + 8, then + 4, + 2, + 1).
    """
    n = values.shape[1]
    if n < HALF_VECTOR_LANES:
        if n > _FLOAT_LANES:
            lanes = values[:, :_FLOAT_LANES].copy()
            lanes[:, :n - _FLOAT_LANES] += values[:, _FLOAT_LANES:]
        else:
            lanes = values
        total = lanes[:, 0].copy()
        for i in range(1, lanes.shape[1]):  # (vec_reduce_all's slow path: lane by lane)
            total += lanes[:, i]
        return total
    first = values[:, :_FLOAT_LANES].copy()
    second = values[:, _FLOAT_LANES:HALF_VECTOR_LANES].copy()
    whole = n - n % HALF_VECTOR_LANES
    for start in range(HALF_VECTOR_LANES, whole, HALF_VECTOR_LANES):
        first += values[:, start:start + _FLOAT_LANES]
        second += values[:, start + _FLOAT_LANES:start + HALF_VECTOR_LANES]
    rest = n - whole
    if rest > _FLOAT_LANES:
        first += values[:, whole:whole + _FLOAT_LANES]
        second[:, :rest - _FLOAT_LANES] += values[:, whole + _FLOAT_LANES:]
    elif rest:
        first[:, :rest] += values[:, whole:]
    first += second
    return _across_lanes(first)


def _across_lanes(lanes: np.ndarray) -> np.ndarray:
    """``vec_reduce_all``'s AVX-512 horizontal sum of 16-lane rows: lane i plus lane i + 8, then
    + 4, + 2, + 1 (its shuffles); lane 0 holds the sum."""
    lane = np.arange(_FLOAT_LANES)
    for distance in (8, 4, 2, 1):
        lanes = lanes + lanes[:, lane ^ distance]
    return lanes[:, 0]


def float_row_sums(values: np.ndarray) -> np.ndarray:
    """The float32 sums of the rows of ``values`` (float32, ``(rows, n)``) as a kernel's own loop over
    16-lane float vectors adds them (the half-type softmax's): one accumulator takes each whole
    vector, its lanes are summed (``_across_lanes``), then the elements after the last whole
    vector are added one at a time."""
    whole = values.shape[1] - values.shape[1] % _FLOAT_LANES
    total = np.zeros(values.shape[0], np.float32)
    if whole:
        lanes = values[:, :_FLOAT_LANES].copy()
        for start in range(_FLOAT_LANES, whole, _FLOAT_LANES):
            lanes += values[:, start:start + _FLOAT_LANES]
        total = _across_lanes(lanes)
    for column in range(whole, values.shape[1]):
        total += values[:, column]
    return total


_LOG2_E = np.float32(1.442695040888963407359924681001892137426645954152985934135449406931)
_LN2_HIGH = np.float32(-0.693145751953125)  # -log(2) in two parts (Cody and Waite)
_LN2_LOW = np.float32(-1.428606765330187045e-06)
_EXP_POLYNOMIAL = tuple(np.float32(c) for c in (
    0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
    0.0416664853692054748535156, 0.166666671633720397949219, 0.5))


def sleef_expf(x: np.ndarray) -> np.ndarray:
    """``exp`` of float32 ``x`` as ``Vectorized<float>::exp`` computes it (Sleef's ``expf_u10``, in
    fused multiply-adds): x = q log(2) + s, a degree-7 polynomial in s, scaled by 2**q in two steps.
    (Evaluated in float64 holding float32 values, each fused step rounded once: ``_fma``.)

    >>> sleef_expf(np.array([0.0, 1.0, -200.0], np.float32)).tolist()
    [1.0, 2.7182817459106445, 0.0]
    """
    shape = np.shape(x)
    x = np.asarray(x, np.float32).reshape(-1)  # (a 0-d array's arithmetic gives NumPy scalars)
    if x.size <= _EXP_BLOCK:
        return _sleef_expf_flat(x).reshape(shape)
    result = np.empty(x.shape, np.float32)
    for start in range(0, x.size, _EXP_BLOCK):
        result[start:start + _EXP_BLOCK] = _sleef_expf_flat(x[start:start + _EXP_BLOCK])
    return result.reshape(shape)


_EXP_BLOCK = 65536  # elements per pass: its float64 temporaries stay in the cache (measured: 1.6x faster at 2**19)


def _sleef_expf_flat(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        q = np.rint(x * _LOG2_E).astype(np.float64)
        q[~np.isfinite(q)] = 0  # inf and NaN: replaced below
        s = _fma(q, _LN2_HIGH, x.astype(np.float64))
        s = _fma(q, _LN2_LOW, s)
        u = _fma(s, _EXP_POLYNOMIAL[0], _EXP_POLYNOMIAL[1])
        for coefficient in _EXP_POLYNOMIAL[2:]:
            u = _fma(u, s, coefficient)
        u = _fma(_round32(s * s), u, s)
        u += 1.0
        steps = q.astype(np.int32)
        half = steps >> 1
        u = np.ldexp(np.ldexp(u.astype(np.float32), half), steps - half).astype(np.float32)
    u[x < -104] = 0
    u[x > 100] = np.inf
    nan = np.isnan(x)
    u[nan] = x[nan]
    return u


_HALF_VALUES = 1 << 16


@functools.cache
def _half_exp_tables(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``sleef_expf`` and the C library's ``expf`` of every value of the half type ``dtype``, by bits."""
    values = np.arange(_HALF_VALUES, dtype=np.uint16).view(dtype).astype(np.float32)
    return sleef_expf(values), exp_of(values)


def half_loop_exp(x: np.ndarray, tail: np.ndarray | None) -> np.ndarray:
    """``exp`` of ``x`` (float32 or, read from tables, a half type) as a half-type kernel computes
    it: Sleef's in its vector steps, the C library's ``expf`` where ``tail`` marks its scalar
    loop's elements (None: none). A float32 array.

    >>> half_loop_exp(np.array([0.5, 0.5], np.float16), np.array([False, True])).tolist()
    [1.6487212181091309, 1.6487212181091309]
    """
    if x.dtype.itemsize == 2:
        vector, scalar = _half_exp_tables(x.dtype)
        bits = x.view(np.uint16)
        return vector[bits] if tail is None else np.where(tail, scalar[bits], vector[bits])
    result = sleef_expf(x)
    if tail is not None:
        tail = np.broadcast_to(tail, x.shape)
        result[tail] = exp_of(x[tail])  # (only where needed: the C library's expf costs as much)
    return result
