"""Samplers that loop until they accept a draw: ``poisson``, ``binomial``, ``_standard_gamma`` (behind
``distributions.Gamma``) and ``_sample_dirichlet`` (behind ``Dirichlet`` and ``Beta``).

Each element takes as many draws as its rejection loop needs, so they are sampled one after
another, as PyTorch's serial CPU kernels do, from PyTorch's scalar draws: 53-bit double
uniforms and its scalar Box–Muller normals (with the second value cached in the generator).
The algorithms are PyTorch's (its ``sample_poisson``: Hörmann's transformed rejection for
rates of 10 or more, multiplication of uniforms below; its ``sample_gamma``: Marsaglia and
Tsang's method, boosted below a concentration of 1), with its float and double roundings, so
a seed gives PyTorch's numbers (its ``sample_binomial``: inversion by geometric waiting times below
a mean of 10, Hörmann's BTRS above). Rejection tests compare C library values (``log``, ``exp``,
``pow``); ``lgamma`` is Python's own, which may differ in the last bit (a test it decides
would have to fall within that bit).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._mt19937 import MTStream
from ._random_math import uniform53
from .common import check_same_shape_or_broadcast, no_derivative, not_implemented, ops, scalar_type_name
from .meta_rules import MetaRule
from .random import Generator, _run_tiny, _same_shape_random_meta, rng
from .registry import Sample, Tensor, TensorSpec, op

_INT64_MIN = -(2 ** 63)
_THIRD32 = float(np.float32(1.0) / np.float32(3.0))  # the kernel's ``1.0f / 3.0f``
_SQUEEZE32 = float(np.float32(0.0331))  # its ``0.0331f``


class ScalarDraws:
    """PyTorch's scalar draws from ``stream``, one at a time: ``uniform()`` (a 53-bit double)
    and ``normal()`` (``at::normal_distribution<double>``). They are read ahead from a copy of
    the stream; ``finish()`` then moves the stream past exactly the words used and leaves the
    cached normal where PyTorch leaves it."""

    __slots__ = ("_stream", "_ahead", "_buffer", "_next", "_used", "cached")

    def __init__(self, stream: MTStream) -> None:
        self._stream = stream
        self._ahead = stream.copy()
        self._buffer: list[float] = []
        self._next = 0
        self._used = 0
        self.cached = stream.normal_double

    def uniform(self) -> float:
        """The next double uniform in [0, 1)."""
        if self._next == len(self._buffer):
            self._buffer = uniform53(self._ahead, min(64 + 2 * self._used, 1 << 16)).tolist()
            self._next = 0
        value = self._buffer[self._next]
        self._next += 1
        self._used += 1
        return value

    def normal(self) -> float:
        """The next standard normal: the cached one, else a Box–Muller pair whose sine is cached."""
        if self.cached is not None:
            value, self.cached = self.cached, None
            return value
        u1 = self.uniform()
        u2 = self.uniform()
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.cached = radius * math.sin(theta)
        return radius * math.cos(theta)

    def finish(self) -> None:
        """Advance the stream past the draws used (two words each) and store the cache."""
        if self._used:
            self._stream.words(2 * self._used)
        self._stream.normal_double = self.cached


# -- C's functions on doubles: NaN and infinities instead of Python's exceptions ------------------------

def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else math.nan


def _log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(x), np.float64(y)))


def _to_int64(x: float) -> int:
    """C's ``(int64_t)`` of a double as x86 computes it: out of range (or NaN) gives INT64_MIN."""
    return int(x) if -2.0 ** 63 <= x < 2.0 ** 63 else _INT64_MIN


# -- the samplers ---------------------------------------------------------------------------------------

def poisson_one(rate: float, draws: ScalarDraws) -> int:
    """PyTorch's ``sample_poisson`` of one (non-negative) rate."""
    if rate >= 10:  # transformed rejection (Hörmann 1993)
        root, log_rate = math.sqrt(rate), math.log(rate)
        b = 0.931 + 2.53 * root
        a = -0.059 + 0.02483 * b
        inverse_alpha = 1.1239 + 1.1328 / (b - 3.4)
        v_r = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = draws.uniform() - 0.5
            v = draws.uniform()
            us = 0.5 - abs(u)
            with np.errstate(all="ignore"):  # an infinite rate makes NaN, as in C
                k = _to_int64(float(np.floor(np.float64(2 * a / us + b) * u + rate + 0.43)))
            if us >= 0.07 and v <= v_r:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (_log(v) + math.log(inverse_alpha) - _log(a / (us * us) + b)) <= \
                    (-rate + k * log_rate - math.lgamma(k + 1.0)):
                return k
    if rate == 0:
        return 0
    limit = math.exp(-rate)  # multiplication of uniforms
    count, product = 0, 1.0
    while True:
        product *= draws.uniform()
        if product > limit:
            count += 1
        else:
            return count


# log(k!) - (log(sqrt(2 pi)) + (k + 1/2) log(k + 1) - (k + 1)) for k < 10: Stirling's error, tabled
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count: float, prob: float, draws: ScalarDraws) -> float:
    """The number of geometric waiting times that fit in ``count`` trials."""
    geom_sum, num_geom = 0.0, 0.0
    log_q = math.log1p(-prob)
    while True:
        geom_sum += math.ceil(_log(draws.uniform()) / log_q)
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _binomial_btrs(count: float, prob: float, draws: ScalarDraws) -> float:
    """Hörmann's transformed rejection with squeeze (BTRS), for ``count * prob >= 10``."""
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    while True:
        u = draws.uniform() - 0.5
        v = draws.uniform()
        us = 0.5 - abs(u)
        k = float(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upper:
            return k


def binomial_one(count: float, prob: float, draws: ScalarDraws) -> float:
    """PyTorch's ``sample_binomial`` of one (count, prob): by the smaller of ``prob`` and ``1 - prob``."""
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        return _binomial_btrs(count, prob, draws) if count * prob >= 10.0 else _binomial_inversion(count, prob, draws)
    if prob > 0.5:
        qprob = 1.0 - prob
        if count * qprob >= 10.0:
            return count - _binomial_btrs(count, qprob, draws)
        return count - _binomial_inversion(count, qprob, draws)
    return math.nan


def gamma_one(alpha: float, draws: ScalarDraws, single: bool) -> float:
    """PyTorch's ``sample_gamma`` of one concentration (Marsaglia and Tsang): ``alpha`` holds a
    value of the tensor's type, float when ``single`` (its own steps then round to float), the
    rest is double."""
    scale = 1.0
    if alpha < 1.0:  # boost: Gamma(a) = Gamma(a + 1) * U ** (1 / a)
        if alpha == 0.0:
            return 0.0
        exponent = 1.0 / alpha
        scale *= _pow(1 - draws.uniform(), float(np.float32(exponent)) if single else exponent)
        alpha = float(np.float32(alpha + 1.0)) if single else alpha + 1.0
    d = float(np.float32(alpha - _THIRD32)) if single else alpha - _THIRD32
    c = 1.0 / _sqrt(9.0 * d)
    while True:
        while True:
            x = draws.normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1 - draws.uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE32 * xx * xx:
            return scale * d * v
        if _log(u) < 0.5 * xx + d * (1.0 - v + _log(v)):
            return scale * d * v


def _tiny_floor(values: np.ndarray, dtype) -> np.ndarray:
    """``std::max(numeric_limits::min(), x)`` element by element (NaN becomes the minimum, as there)."""
    tiny = np.finfo(dtype).tiny
    return np.where(values > tiny, values, tiny).astype(dtype)  # NaN fails the test: tiny, as C++'s max


# -- ops ------------------------------------------------------------------------------------------------

def _poisson_grad(grad):
    # PyTorch records the draw (PoissonBackward0) but passes back no gradient: zeros (its formula's
    # at::zeros, which its dispatch level sees).
    return ops.zeros(tuple(grad.shape), dtype=grad.dtype, device=grad.device)


@op(meta=MetaRule(_same_shape_random_meta, "poisson"),
    errors=(Sample((TensorSpec((2,), "int64"),)),),
    grad=_poisson_grad, samples=(Sample((TensorSpec((2, 3), "float32", 0, 0),)),
                                   Sample((TensorSpec((3,), "float64", 0, 0),))))
def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Returns a tensor of samples from Poisson distributions with the rates in ``input``.

    >>> import tensormodes as tm
    >>> tm.poisson(tm.tensor([0., 0.]))
    tensor([0., 0.])
    >>> _ = tm.manual_seed(0); tm.poisson(tm.tensor([1., 20.]))
    tensor([ 2., 28.])
    """
    d = dt.NP_TO_DTYPE[input.dtype]
    if d._category != dt._FLOAT:
        raise not_implemented("poisson_cpu", d)
    if input.size and not (input >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = ScalarDraws(rng(generator))
    samples = [float(poisson_one(rate, draws)) for rate in input.astype(np.float64).reshape(-1).tolist()]
    draws.finish()
    return np.array(samples, np.float64).astype(input.dtype).reshape(input.shape)


def _binomial_meta(opdef, args, kwargs):
    bound, result = _run_tiny(opdef, args, kwargs)
    count, prob = bound.arguments["count"], bound.arguments["prob"]
    return MetaArray(check_same_shape_or_broadcast(np.shape(count), np.shape(prob)), result.dtype)


@op(meta=MetaRule(_binomial_meta, "binomial"), grad=no_derivative("binomial"), random=True,
    errors=(Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "float32", 0, 1))),
            Sample((TensorSpec((2,), "float32", 0, 9), TensorSpec((2,), "float64", 0, 1)))),
    samples=(Sample((TensorSpec((2, 3), "float32", 0, 30), TensorSpec((3,), "float32", 0, 1))),
             Sample((TensorSpec((4,), "float64", 0, 40), TensorSpec((4,), "float64", 0, 1)))))
def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples of Binomial distributions: ``count`` trials of success probability ``prob``
    (broadcast together; PyTorch's sampler, its numbers for a seed).

    >>> import tensormodes as tm
    >>> _ = tm.manual_seed(0); tm.binomial(tm.tensor([5.0, 20.0, 100.0, 3.0]), tm.tensor([0.3, 0.6, 0.5, 1.0]))
    tensor([ 3., 12., 52.,  3.])
    """
    if count.dtype.kind != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{scalar_type_name(dt.NP_TO_DTYPE[count.dtype])}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(dt.NP_TO_DTYPE[prob.dtype])} but expected "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[count.dtype])}")
    shape = check_same_shape_or_broadcast(count.shape, prob.shape)
    counts = np.broadcast_to(count, shape).astype(np.float64).reshape(-1).tolist()
    probs = np.broadcast_to(prob, shape).astype(np.float64).reshape(-1).tolist()
    draws = ScalarDraws(rng(generator))
    samples = [binomial_one(n, p, draws) for n, p in zip(counts, probs)]
    draws.finish()
    return np.array(samples, np.float64).astype(count.dtype).reshape(shape)


def _check_gamma_dtype(input, name: str) -> None:
    if input.dtype not in (np.float32, np.float64):
        raise not_implemented(name, dt.NP_TO_DTYPE[input.dtype])


@op(meta=MetaRule(_same_shape_random_meta, "_standard_gamma"), differentiable=False, random=True,
    errors=(Sample((TensorSpec((2,), "int64"),)), Sample((TensorSpec((2,), "float16"),))),
    samples=(Sample((TensorSpec((2, 3), "float32", 0.5, 3),)), Sample((TensorSpec((3,), "float64", 0.1, 0.9),))))
def _standard_gamma(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples of Gamma(concentration, 1) for the concentrations in ``input`` (PyTorch's sampler,
    its numbers for a seed; at least the dtype's smallest normal number).

    >>> import tensormodes as tm
    >>> _ = tm.manual_seed(0); tm._standard_gamma(tm.tensor([0.5, 2.0, 9.0]))
    tensor([7.8936e-04, 6.3154e-01, 9.1474e+00])
    """
    _check_gamma_dtype(input, "gamma_cpu")
    single = input.dtype == np.float32
    draws = ScalarDraws(rng(generator))
    samples = [gamma_one(alpha, draws, single) for alpha in input.reshape(-1).tolist()]
    draws.finish()
    return _tiny_floor(np.array(samples, np.float64).astype(input.dtype), input.dtype).reshape(input.shape)


@op(meta=MetaRule(_same_shape_random_meta, "_sample_dirichlet"), differentiable=False, random=True,
    errors=(Sample((TensorSpec((2,), "int64"),)),),
    samples=(Sample((TensorSpec((2, 3), "float32", 0.5, 3),)), Sample((TensorSpec((4,), "float64", 0.5, 2),))))
def _sample_dirichlet(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples of Dirichlet distributions whose concentrations are the last dimension of
    ``input``: gamma draws (in double) divided by their sum, kept in (0, 1).

    >>> import tensormodes as tm
    >>> x = tm._sample_dirichlet(tm.tensor([[1.0, 2.0, 3.0]]))
    >>> round(x.sum().item(), 5), x.shape
    (1.0, tensormodes.Size([1, 3]))
    """
    _check_gamma_dtype(input, "dirichlet")
    draws = ScalarDraws(rng(generator))
    gammas = [gamma_one(alpha, draws, False) for alpha in input.astype(np.float64).reshape(-1).tolist()]
    draws.finish()
    gamma = _tiny_floor(np.array(gammas, np.float64), np.float64).reshape(input.shape)
    total = np.add.reduce(gamma, axis=-1, keepdims=True) if gamma.ndim else gamma
    share = _tiny_floor((gamma / total).astype(input.dtype), input.dtype)
    below_one = np.nextafter(np.ones((), input.dtype), np.zeros((), input.dtype))
    return np.minimum(share, below_one).astype(input.dtype)
