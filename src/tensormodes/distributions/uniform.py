"""``Uniform``: the continuous uniform distribution on ``[low, high)``.

>>> import tensormodes as tm
>>> d = tm.distributions.Uniform(0.0, 4.0)
>>> d.mean.item(), d.variance.item(), d.entropy().item()
(2.0, 1.3333333730697632, 1.3862943649291992)
"""

from __future__ import annotations

from math import nan
from numbers import Number

from .._api import namespace as tm
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Generates uniformly distributed random samples from the half-open interval ``[low, high)``."""

    has_rsample = True

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        batch_shape = () if isinstance(low, Number) and isinstance(high, Number) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict:
        """``low < high``."""
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = tm.Size(batch_shape)
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """``interval(low, high)``."""
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        """``(low + high) / 2``."""
        return (self.high + self.low) / 2

    @property
    def mode(self):
        """NaN: every point is a mode."""
        return nan * self.high

    @property
    def stddev(self):
        """``(high - low) / sqrt(12)``."""
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        """``(high - low) ** 2 / 12``."""
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        """``low + u * (high - low)``, ``u`` from ``rand`` (PyTorch's random stream)."""
        shape = self._extended_shape(sample_shape)
        rand = tm.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        """``-log(high - low)`` inside the interval, ``-inf`` outside."""
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return tm.log(lb.mul(ub)) - tm.log(self.high - self.low)

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        """The inverse of ``cdf``."""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        """``log(high - low)``."""
        return tm.log(self.high - self.low)
