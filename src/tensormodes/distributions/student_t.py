"""``Chi2`` (a ``Gamma`` of half the degrees of freedom and rate 1/2) and ``StudentT``: PyTorch's
densities, moments and samplers (a standard normal over the root of a ``Chi2`` draw, so a seed
gives PyTorch's samples; as for ``Gamma``, no gradient with respect to ``df``).

>>> import tensormodes as tm
>>> tm.distributions.Chi2(tm.tensor([4.0])).mean.tolist()
[4.0]
>>> d = tm.distributions.StudentT(tm.tensor([3.0]))
>>> d.variance.tolist(), round(d.log_prob(tm.tensor([0.0])).item(), 4)
([3.0], -1.0009)
"""

from __future__ import annotations

import math

from .._api import namespace as tm
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _standard_normal, broadcast_all

__all__ = ["Chi2", "StudentT"]


class Chi2(Gamma):
    """Creates a Chi-squared distribution parameterized by the degrees of freedom ``df``
    (``Gamma(0.5 * df, 0.5)``)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with ``df`` expanded to ``batch_shape``."""
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        """The degrees of freedom."""
        return self.concentration * 2


class StudentT(Distribution):
    """Creates a Student's t-distribution parameterized by degrees of freedom ``df``, mean ``loc``
    and scale ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        # Broadcasting makes every output require grad when loc or scale does; the chi-squared
        # draws then see a df they cannot differentiate in (see gamma.py) although no gradient
        # reaches df: sample them from a detached df unless the df given requires grad itself.
        df_requires_grad = isinstance(df, tm.Tensor) and df.requires_grad
        self._chi2 = Chi2(self.df if df_requires_grad else self.df.detach())
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = tm.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``loc`` (NaN where ``df <= 1``)."""
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self):
        """``loc``."""
        return self.loc

    @property
    def variance(self):
        """``scale ** 2 df / (df - 2)`` (infinite for ``1 < df <= 2``, NaN for ``df <= 1``)."""
        m = self.df.clone()
        above_two = self.df > 2
        m[above_two] = self.scale[above_two].pow(2) * self.df[above_two] / (self.df[above_two] - 2)
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def rsample(self, sample_shape=()):
        """``loc + scale * X / sqrt(Z / df)``: ``X`` standard normal, then ``Z`` from ``Chi2(df)``."""
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * tm.rsqrt(z / self.df))

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        normalizer = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                      + tm.lgamma(0.5 * self.df) - tm.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * tm.log1p(y ** 2.0 / self.df) - normalizer

    def entropy(self):
        """The entropy."""
        lbeta = tm.lgamma(0.5 * self.df) + math.lgamma(0.5) - tm.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (tm.digamma(0.5 * (self.df + 1)) - tm.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
