"""``Normal``: the normal (Gaussian) distribution.

>>> import tensormodes as tm
>>> d = tm.distributions.Normal(tm.tensor([0.0]), tm.tensor([2.0]))
>>> round(d.log_prob(tm.tensor([0.0])).item(), 4), round(d.entropy().item(), 4)
(-1.6121, 2.1121)
"""

from __future__ import annotations

import math
from numbers import Number

from .._api import namespace as tm
from . import constraints
from .distribution import ExponentialFamily
from .utils import _standard_normal, broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """Creates a normal (also called Gaussian) distribution parameterized by ``loc`` (mean) and
    ``scale`` (standard deviation)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if isinstance(loc, Number) and isinstance(scale, Number) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = tm.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``loc``."""
        return self.loc

    @property
    def mode(self):
        """``loc``."""
        return self.loc

    @property
    def stddev(self):
        """``scale``."""
        return self.scale

    @property
    def variance(self):
        """``scale ** 2``."""
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        """Samples drawn with ``normal(loc, scale)``, PyTorch's random stream."""
        shape = self._extended_shape(sample_shape)
        with tm.no_grad():
            return tm.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        """``loc + eps * scale``, ``eps`` standard normal: differentiable in ``loc`` and ``scale``."""
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Number) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + tm.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        """The inverse of ``cdf``."""
        return self.loc + self.scale * tm.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        """``0.5 + 0.5 log(2 pi) + log(scale)``."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + tm.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * tm.log(-math.pi / y)
