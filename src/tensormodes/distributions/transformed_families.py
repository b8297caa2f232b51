"""``LogNormal``, ``HalfNormal``, ``HalfCauchy`` and ``Gumbel``: transformed distributions, built
as PyTorch builds them (so their samples are PyTorch's), with closed-form moments and entropies.

>>> import tensormodes as tm
>>> d = tm.distributions.LogNormal(0.0, 1.0)
>>> round(d.mean.item(), 4), round(d.log_prob(tm.tensor(1.0)).item(), 4)
(1.6487, -0.9189)
>>> tm.distributions.HalfNormal(tm.tensor([1.0])).cdf(tm.tensor([0.0])).tolist()
[0.0]
"""

from __future__ import annotations

import math
from numbers import Number

from .._api import namespace as tm
from . import constraints
from .exponential import Cauchy
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel", "HalfCauchy", "HalfNormal", "LogNormal"]


class LogNormal(TransformedDistribution):
    """``exp`` of a ``Normal(loc, scale)`` variable."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogNormal, _instance))

    @property
    def loc(self):
        """The mean of the log."""
        return self.base_dist.loc

    @property
    def scale(self):
        """The standard deviation of the log."""
        return self.base_dist.scale

    @property
    def mean(self):
        """``exp(loc + scale ** 2 / 2)``."""
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        """``exp(loc - scale ** 2)``."""
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        """``expm1(scale ** 2) exp(2 loc + scale ** 2)``."""
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        """The base's entropy plus ``loc``."""
        return self.base_dist.entropy() + self.loc


class _Half(TransformedDistribution):
    """``|X|`` for a ``base`` centred at 0 with ``scale``: the density doubled on ``[0, inf)``."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        """The base's scale."""
        return self.base_dist.scale

    @property
    def mode(self):
        """0."""
        return tm.zeros_like(self.scale)

    def log_prob(self, value):
        """The base's log density plus ``log 2``; ``-inf`` below 0."""
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tm.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        """``2 base.cdf(value) - 1``."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        """``base.icdf((prob + 1) / 2)``."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """The base's entropy minus ``log 2``."""
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Half):
    """``|X|`` for ``X ~ Normal(0, scale)``."""

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its scale expanded to ``batch_shape``."""
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfNormal, _instance))

    @property
    def mean(self):
        """``scale sqrt(2 / pi)``."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        """``scale ** 2 (1 - 2 / pi)``."""
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Half):
    """``|X|`` for ``X ~ Cauchy(0, scale)``."""

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its scale expanded to ``batch_shape``."""
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfCauchy, _instance))

    @property
    def mean(self):
        """Infinite."""
        return tm.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        """Infinite (the base's)."""
        return self.base_dist.variance

    def log_prob(self, value):
        """As ``_Half.log_prob``, with ``value`` made a tensor of the scale's dtype."""
        if self._validate_args:
            self._validate_sample(value)
        value = tm.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tm.where(value >= 0, log_prob, -math.inf)


class Gumbel(TransformedDistribution):
    """Samples from a Gumbel distribution: ``loc - scale log(-log U)`` for ``U`` uniform on
    ``[tiny, 1 - eps)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = tm.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(tm.full_like(self.loc, finfo.tiny), tm.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-tm.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        """``(y - exp(y)) - log(scale)`` with ``y = (loc - value) / scale``."""
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        """``loc + scale * euler_constant``."""
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        """``loc``."""
        return self.loc

    @property
    def stddev(self):
        """``pi / sqrt(6) * scale``."""
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        """``stddev ** 2``."""
        return self.stddev.pow(2)

    def entropy(self):
        """``log(scale) + 1 + euler_constant``."""
        return self.scale.log() + (1 + euler_constant)
