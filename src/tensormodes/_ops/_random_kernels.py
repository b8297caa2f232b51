"""PyTorch's CPU sampling kernels over an ``MTStream``, vectorised: each function returns
the values PyTorch writes, in the order its serial kernel writes them (C order of a fresh
contiguous tensor).

Which draws each kernel makes (the facts the functions follow; PyTorch 2.13, CPU):

* uniform reals: float32 takes the low 24 bits of one 32-bit word, double 53 bits of one
  64-bit draw (two words, the first the high half); then ``x * (to - from) + from`` in
  float (double for double), fused. float16 and bfloat16 round the float32 value (one
  that rounds up to ``to`` becomes ``from``).
* ``normal_``: 16 or more contiguous elements: every element gets a uniform of its own
  type first, then blocks of 16 turn into Box–Muller pairs (j with j + 8); a tail of less
  than 16 redoes the last 16 with fresh uniforms. float32 runs the AVX2 kernel
  (``_random_math.fill_normal16_words``); float16 and bfloat16 run it too, in float,
  but draw uniforms for the whole blocks only before the fresh 16 of the tail. Fewer
  elements (or a strided tensor): scalar Box–Muller in double with the second value cached in the generator.
* integers: ``draw % range + from`` with a 32-bit draw, or a 64-bit one when the range is
  2**28 or more, whatever the dtype (the released builds' branch of ``uniform_int_from_to_distribution``;
  its other branch, 2**32 and a few dtypes, is Meta's internal build's).
* ``bernoulli_(p)`` with a number and dropout: a double uniform below ``p`` (PyTorch on
  Intel CPUs with MKL uses MKL's own stream for this one instead).
* exponential ``-log1p(-u) / lambda``, geometric ``ceil(log(u) / log(1 - p))``, Cauchy
  ``median + sigma * tan(pi * (u - 0.5))``, log-normal ``exp`` of a scalar normal: all in
  double from 53-bit uniforms.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from ._random_math import box_muller_doubles, fill_normal16_words, fma32, fma64, libm, uniform53, uniform_low_bits

__all__ = ["uniform", "uniform53", "normal", "integers_from_to", "integers_as", "integers_default", "bernoulli_scalar",
           "bernoulli_tensor",
           "exponential", "geometric", "cauchy", "log_normal", "randperm"]

def _size(shape) -> int:
    return math.prod(shape)


def uniform(stream, shape, dtype: dt.dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """``uniform_(low, high)`` of a tensor of ``shape`` and ``dtype`` (complex: both parts)."""
    if dtype._category == dt._COMPLEX:
        real = uniform(stream, (*shape, 2), dtype.to_real(), low, high)
        return real.view(dtype._np).reshape(shape)
    n = _size(shape)
    if dtype is dt.float64:
        x = uniform53(stream, n)
        if low != 0.0 or high != 1.0:
            x = fma64(x, high - low, low)
        return x.reshape(shape)
    x = uniform_low_bits(stream, n, 24)  # float16 and bfloat16 too: sampled in float, then rounded
    if low != 0.0 or high != 1.0:
        low32, high32 = np.float32(low), np.float32(high)
        x = fma32(x, np.float32(high32 - low32), low32)
    if dtype is dt.float32:
        return x.reshape(shape)
    out = x.astype(dtype._np)
    top = np.asarray(high).astype(dtype._np)
    out[out == top] = np.asarray(low).astype(dtype._np)  # rounding reached ``to``: PyTorch gives ``from``
    return out.reshape(shape)


def normal(stream, shape, dtype: dt.dtype, mean: float = 0.0, std: float = 1.0,
           contiguous: bool = True) -> np.ndarray:
    """``normal_(mean, std)`` of a tensor of ``shape`` and ``dtype``; ``contiguous`` is False
    for a strided tensor (PyTorch then samples element by element)."""
    if dtype._category == dt._COMPLEX:  # the real view, with the variance split between the parts
        real = normal(stream, (*shape, 2), dtype.to_real(), mean, std / math.sqrt(2), contiguous)
        return real.view(dtype._np).reshape(shape)
    n = _size(shape)
    if n < 16 or not contiguous:  # doubles, rounded through float for the half types
        values = box_muller_doubles(stream, n, mean, std)
        return (values if dtype is dt.float64 else values.astype(np.float32)).astype(dtype._np).reshape(shape)
    wide = dtype is dt.float64
    whole = n - n % 16
    if wide:
        uniforms = uniform53(stream, n)
        if whole != n:  # PyTorch then redoes the last 16 with fresh uniforms: one pass does both
            uniforms = np.concatenate([uniforms[:whole], uniform53(stream, 16)])
        values = _fill_float64(uniforms, mean, std)
    else:  # float uniforms k / 2**24: the kernel takes the words (k, their low 24 bits)
        if dtype is dt.float16 or dtype is dt.bfloat16:
            # PyTorch draws float uniforms for the whole blocks only, then 16 fresh ones for the
            # last 16 elements: n - n % 16 + 16 words in all (float32 draws n + 16)
            words = stream.words(whole + (16 if whole != n else 0))
        else:
            words = stream.words(n)
            if whole != n:
                words = np.concatenate([words[:whole], stream.words(16)])
        values = fill_normal16_words(words, mean, std, over_words=True)  # the words are this call's own
    out = values[:n]
    if whole != n:
        out[n - 16:] = values[whole:].copy()
    # float16 / bfloat16 are computed in float, then rounded once
    return out.astype(dtype._np, copy=False).reshape(shape)


def _fill_float64(uniforms: np.ndarray, mean: float, std: float) -> np.ndarray:
    blocks = uniforms.reshape(-1, 16)
    radius = np.sqrt(-2.0 * libm("log", 1.0 - blocks[:, :8]))
    theta = 2.0 * math.pi * blocks[:, 8:]
    out = np.empty_like(blocks)
    out[:, :8] = radius * libm("cos", theta)
    out[:, 8:] = radius * libm("sin", theta)
    if std != 1.0 or mean != 0.0:
        out = fma64(out, std, mean)
    return out.reshape(-1)


def integers_from_to(stream, shape, dtype: dt.dtype, low: int, high: int) -> np.ndarray:
    """``random_(low, high)``: ``draw % (high - low) + low``."""
    n, span = _size(shape), high - low
    draws = stream.words64(n) if span >= 1 << 28 else stream.words(n).astype(np.uint64)
    values = (draws % np.uint64(span)).astype(np.int64) + np.int64(low) if span < 1 << 63 else \
        ((draws % np.uint64(span)) + np.uint64(low & 0xFFFF_FFFF_FFFF_FFFF)).view(np.int64)
    return integers_as(values, dtype).reshape(shape)


def integers_as(values: np.ndarray, dtype: dt.dtype) -> np.ndarray:
    """int64 ``values`` stored as ``dtype`` as C++'s ``static_cast`` does: the half types through
    float (for bfloat16 beyond 2**24 two roundings, which can differ from one).

    >>> integers_as(np.array([2 ** 24 + 2 ** 16 + 1]), dt.bfloat16).astype(float)  # to 2**24 + 2**16, then a tie
    array([16777216.])
    """
    if dtype is dt.bfloat16 or dtype is dt.float16:
        return values.astype(np.float32).astype(dtype._np)
    return values.astype(dtype._np)


def integers_default(stream, shape, dtype: dt.dtype) -> np.ndarray:
    """``random_()``: ``[0, 2**digits]`` for floating types, ``[0, max]`` for integers."""
    n = _size(shape)
    if dtype is dt.bool:
        return (stream.words(n) & np.uint32(1)).astype(np.bool_).reshape(shape)
    wide = dtype in (dt.int64, dt.float64)
    draws = stream.words64(n) if wide else stream.words(n).astype(np.uint64)
    if dtype._category == dt._FLOAT:
        modulus = (1 << {dt.float64: 53, dt.float32: 24, dt.float16: 11, dt.bfloat16: 8}[dtype]) + 1
    else:
        modulus = int(np.iinfo(dtype._np).max) + 1
    return (draws % np.uint64(modulus)).astype(dtype._np).reshape(shape)


def bernoulli_scalar(stream, shape, dtype: dt.dtype, p: float) -> np.ndarray:
    """``bernoulli_(p)`` with a number: a double uniform below ``p``."""
    return (uniform53(stream, _size(shape)) < p).astype(dtype._np).reshape(shape)


def bernoulli_tensor(stream, shape, dtype: dt.dtype, p: np.ndarray) -> np.ndarray:
    """``bernoulli_(p)`` with a tensor (broadcast to ``shape``): a double uniform for a double
    ``p``, else a float uniform (24 bits) compared in float."""
    p = np.broadcast_to(p, shape)
    n = _size(shape)
    if p.dtype == np.float64:
        draws = uniform53(stream, n)
    else:
        draws = uniform_low_bits(stream, n, 24)
        p = p.astype(np.float32)
    return (draws.reshape(shape) < p).astype(dtype._np)


def exponential(stream, shape, dtype: dt.dtype, lambd: float) -> np.ndarray:
    """``exponential_(lambd)``: ``-1 / lambd * log1p(-u)`` in double."""
    u = uniform53(stream, _size(shape))
    logs = np.array([math.log1p(-v) for v in u.tolist()], np.float64)
    return ((-1.0 / lambd) * logs).astype(dtype._np).reshape(shape)


def geometric(stream, shape, dtype: dt.dtype, p: float) -> np.ndarray:
    """``geometric_(p)``: ``ceil(log(u) / log(1 - p))`` in double."""
    u = uniform53(stream, _size(shape))
    with np.errstate(divide="ignore"):
        values = np.ceil(libm("log", u) / math.log(1.0 - p))
    return values.astype(dtype._np).reshape(shape)


def cauchy(stream, shape, dtype: dt.dtype, median: float, sigma: float) -> np.ndarray:
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 0.5))`` in double."""
    u = uniform53(stream, _size(shape))
    return (median + sigma * libm("tan", math.pi * (u - 0.5))).astype(dtype._np).reshape(shape)


def log_normal(stream, shape, dtype: dt.dtype, mean: float, std: float) -> np.ndarray:
    """``log_normal_(mean, std)``: ``exp`` of scalar normals (the cache included)."""
    return libm("exp", box_muller_doubles(stream, _size(shape), mean, std)).astype(dtype._np).reshape(shape)


def randperm(stream, n: int) -> np.ndarray:
    """``randperm(n)`` as int64: Fisher–Yates swapping ``i`` with ``i + draw % (n - i)`` (a 32-bit
    draw); from ``2**32 // 20`` elements PyTorch's inside-out variant (``_inside_out``)."""
    if n < 2:
        return np.arange(n, dtype=np.int64)
    if n >= _INSIDE_OUT_FROM:
        return _inside_out(stream, n)
    words = stream.words(n - 1)  # a uint32 remainder (four times faster than an int64 one), int32 targets
    words %= np.arange(n, 1, -1, dtype=np.uint32)
    targets = words.view(np.int32)
    targets += np.arange(n - 1, dtype=np.int32)
    if n < _SWAPS_IN_PYTHON:
        order = list(range(n))
        for i, j in enumerate(targets.tolist()):  # each swap depends on the ones before
            order[i], order[j] = order[j], order[i]
        return np.array(order, np.int64)
    return _apply_swaps(targets, n)


# PyTorch's CPU randperm keeps its 32-bit Fisher–Yates below ``UINT32_MAX / 20`` elements (integer division)
_INSIDE_OUT_FROM = 0xFFFF_FFFF // 20


def _inside_out(stream, n: int) -> np.ndarray:
    """PyTorch's randperm of ``n >= 2**32 // 20`` elements: for i = 0, 1 ... n - 1, ``z = random64() %
    (i + 1)``, ``r[i] = r[z]``, ``r[z] = i`` (``r[i]`` starting as ``i``): the swaps ``(i, z)`` in order.

    Mirrored (position and value p as n - 1 - p) they are Fisher–Yates swaps ``(k, t)``, t >= k, taken in
    decreasing k; swaps taken in reverse order give the inverse permutation. So the result is the mirror
    of the inverse of ``_apply_swaps`` on the mirrored targets (i = 0's swap is a self-swap)."""
    z = stream.words64(n)
    z %= np.arange(1, n + 1, dtype=np.uint64)
    targets = z[:0:-1].astype(np.int64)  # step k = n - 1 - i targets n - 1 - z[i], k = 0 ... n - 2
    del z  # (in place from here: n is at least 2**32 // 20, 1.6 GiB an int64 array)
    np.subtract(n - 1, targets, out=targets)
    forward = _apply_swaps(targets, n)
    del targets
    inverse = np.empty(n, np.int64)
    inverse[forward] = np.arange(n, dtype=np.int64)
    return (n - 1) - inverse[::-1]


# Below this size a Python loop of swaps is faster than the vectorised replay.
_SWAPS_IN_PYTHON = 512  # measured: 512 elements take about as long either way, 1,024 1.4x longer in Python


def _apply_swaps(targets: np.ndarray, n: int) -> np.ndarray:
    """The permutation the swaps ``(k, targets[k])``, k = 0, 1 ..., leave in ``arange(n)``,
    where ``targets[k] >= k``; vectorised.

    Position k is final after step k (later steps touch only later positions). Let ``held[c]``
    be the value at c just before step c: the value the last earlier step targeting c moved
    there (``held`` of that step; a self-swap moves nothing), or c itself. Step k's output is
    then what the previous step with the same target moved there, ``held`` of that step (for a
    self-swap too: that step is the last before k targeting k), else ``targets[k]`` itself
    (never moved). ``held`` is a chain of earlier steps, followed by pointer doubling.
    """
    m = n - 1
    index = targets.dtype  # int32 when it holds n: half the memory traffic
    order = _stable_order(targets, n)  # steps grouped by target, in step order inside a group
    target = targets[order]
    same = target[1:] == target[:-1]
    before = np.empty(m, index)  # in grouped order: the previous step with the same target, or -1
    before[0] = -1
    np.copyto(before[1:], np.where(same, order[:-1], -1))
    # the last earlier step targeting each position c: the last step of c's group, or the one
    # before it when that last one is c's own (self) swap
    ends = np.append(np.flatnonzero(~same), m - 1)
    end_target, end_step = target[ends], order[ends]
    last_moved = np.where(end_step == end_target, before[ends], end_step)
    moved = last_moved >= 0
    held = np.arange(n, dtype=index)
    held[end_target[moved]] = last_moved[moved]
    # follow the chains to their ends: pointer doubling, after one full round only on the positions whose
    # pointer is not yet a chain's end (about an eighth then; measured 0.8 -> 0.5 ms at n = 10**5)
    held = held[held]
    active = np.flatnonzero(held[held] != held)
    while active.size:
        held[active] = held[held[active]]
        active = active[held[held[active]] != held[active]]
    out = np.empty(n, np.int64)
    out[order] = np.where(before >= 0, held[before], target)  # held[-1]: masked out
    out[m] = held[m]
    return out


def _stable_order(keys: np.ndarray, n: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for keys in ``[0, n)``, as a radix sort of 16-bit
    digits (NumPy's stable sort of uint16 is a counting sort: several times faster); a last
    digit of one bit is a stable partition (cheaper than another counting sort)."""
    order = np.argsort(keys.astype(np.uint16), kind="stable")  # the low 16 bits
    shift = 16
    while (n - 1) >> shift:
        digit = keys[order] >> shift
        if (n - 1) >> (shift + 1):
            order = order[np.argsort((digit & 0xFFFF).astype(np.uint16), kind="stable")]
        else:
            high = digit.astype(bool)
            order = np.concatenate([order[~high], order[high]])
        shift += 16
    return order
