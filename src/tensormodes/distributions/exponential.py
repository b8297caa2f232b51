"""``Exponential``, ``Laplace`` and ``Cauchy``: PyTorch's densities, moments and entropies, and its
samplers (``exponential_``, ``uniform_``, ``cauchy_`` on a new tensor), so a seed gives PyTorch's
samples.

>>> import tensormodes as tm
>>> e = tm.distributions.Exponential(tm.tensor([2.0]))
>>> e.mean.tolist(), e.variance.tolist(), e.cdf(tm.tensor([0.0])).tolist()
([0.5], [0.25], [0.0])
>>> tm.distributions.Laplace(0.0, 1.0).entropy().item()
1.6931471824645996
"""

from __future__ import annotations

import math
from numbers import Number

from .._api import namespace as tm
from . import constraints
from .distribution import Distribution, ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential", "Laplace", "Cauchy"]


def _batch_shape_of(parameters, tensor):
    """``()`` when every parameter was given as a number, else the broadcast shape (as PyTorch)."""
    return () if all(isinstance(p, Number) for p in parameters) else tensor.size()


class Exponential(ExponentialFamily):
    """Creates an Exponential distribution parameterized by ``rate`` (``1 / scale``)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape_of([rate], self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its rate expanded to ``batch_shape``."""
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = tm.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``1 / rate``."""
        return self.rate.reciprocal()

    @property
    def mode(self):
        """0."""
        return tm.zeros_like(self.rate)

    @property
    def stddev(self):
        """``1 / rate``."""
        return self.rate.reciprocal()

    @property
    def variance(self):
        """``rate ** -2``."""
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        """``exponential_()`` draws divided by ``rate`` (PyTorch's random stream)."""
        shape = self._extended_shape(sample_shape)
        return self.rate.new(shape).exponential_() / self.rate

    def log_prob(self, value):
        """``log(rate) - rate * value``."""
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        """``1 - exp(-rate * value)``."""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - tm.exp(-self.rate * value)

    def icdf(self, value):
        """``-log1p(-value) / rate``."""
        return -tm.log1p(-value) / self.rate

    def entropy(self):
        """``1 - log(rate)``."""
        return 1.0 - tm.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -tm.log(-x)


class _LocScale(Distribution):
    """The constructor and ``expand`` shared by the ``loc``/``scale`` families here."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of([loc, scale], self.loc), validate_args=validate_args)

    def _expand_loc_scale(self, family, batch_shape, _instance):
        new = self._get_checked_instance(family, _instance)
        batch_shape = tm.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mode(self):
        """``loc``."""
        return self.loc


class Laplace(_LocScale):
    """Creates a Laplace distribution parameterized by ``loc`` and ``scale``."""

    def expand(self, batch_shape, _instance=None):
        """The distribution with ``loc`` and ``scale`` expanded to ``batch_shape``."""
        return self._expand_loc_scale(Laplace, batch_shape, _instance)

    @property
    def mean(self):
        """``loc``."""
        return self.loc

    @property
    def variance(self):
        """``2 * scale ** 2``."""
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        """``sqrt(2) * scale``."""
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        """By inversion of ``uniform_(eps - 1, 1)`` draws (PyTorch's random stream)."""
        shape = self._extended_shape(sample_shape)
        u = self.loc.new(shape).uniform_(tm.finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * tm.log1p(-u.abs())

    def log_prob(self, value):
        """``-log(2 scale) - |value - loc| / scale``."""
        if self._validate_args:
            self._validate_sample(value)
        return -tm.log(2 * self.scale) - tm.abs(value - self.loc) / self.scale

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * tm.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        """The inverse of ``cdf``."""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * tm.log1p(-2 * term.abs())

    def entropy(self):
        """``1 + log(2 scale)``."""
        return 1 + tm.log(2 * self.scale)


class Cauchy(_LocScale):
    """Samples from a Cauchy (Lorentz) distribution: ``loc`` its median, ``scale`` its half width
    at half maximum."""

    def expand(self, batch_shape, _instance=None):
        """The distribution with ``loc`` and ``scale`` expanded to ``batch_shape``."""
        return self._expand_loc_scale(Cauchy, batch_shape, _instance)

    @property
    def mean(self):
        """NaN: undefined."""
        return tm.full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self):
        """Infinite."""
        return tm.full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=()):
        """``loc + scale * eps``, ``eps`` from ``cauchy_()`` (PyTorch's random stream)."""
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        """``atan((value - loc) / scale) / pi + 1/2``."""
        if self._validate_args:
            self._validate_sample(value)
        return tm.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        """The inverse of ``cdf``."""
        return tm.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        """``log(4 pi) + log(scale)``."""
        return math.log(4 * math.pi) + self.scale.log()
