"""``Geometric`` and ``Poisson``: count distributions with PyTorch's probabilities, moments and
samplers (``uniform_`` by inversion, ``tm.poisson``), so a seed gives PyTorch's samples.

>>> import tensormodes as tm
>>> g = tm.distributions.Geometric(tm.tensor([0.25]))
>>> g.mean.tolist(), g.variance.tolist(), g.log_prob(tm.tensor([0.0])).exp().tolist()
([3.0], [12.0], [0.25])
>>> p = tm.distributions.Poisson(tm.tensor([2.0]))
>>> round(p.log_prob(tm.tensor([1.0])).item(), 4)
-1.3069
"""

from __future__ import annotations

from numbers import Number

from .._api import namespace as tm
from ..nn import functional as F
from . import constraints
from .distribution import Distribution, ExponentialFamily
from .utils import BinaryProbabilities, broadcast_all, expand_probabilities

__all__ = ["Geometric", "Poisson"]


class Geometric(BinaryProbabilities, Distribution):
    """Creates a Geometric distribution parameterized by ``probs`` (or ``logits``), the probability
    of success of Bernoulli trials: the number of failures before the first success, in
    ``{0, 1, ...}``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        super().__init__(() if isinstance(given, Number) else given.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs  # beyond unit_interval: a success must be possible
            valid = value > 0
            if not valid.all():
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to be positive but found invalid values:\n"
                                 f"{value.data[~valid]}")

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape``."""
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = tm.Size(batch_shape)
        expand_probabilities(self, new, batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``1 / probs - 1``."""
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        """0."""
        return tm.zeros_like(self.probs)

    @property
    def variance(self):
        """``(1 / probs - 1) / probs``."""
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        """``floor(log(u) / log1p(-probs))``, ``u`` from ``uniform_(tiny, 1)`` (PyTorch's stream)."""
        shape = self._extended_shape(sample_shape)
        with tm.no_grad():
            u = self.probs.new(shape).uniform_(tm.finfo(self.probs.dtype).tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        """``value * log1p(-probs) + log(probs)`` (0 for ``probs == 1`` at ``value == 0``)."""
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        """``binary_cross_entropy_with_logits(logits, probs) / probs``."""
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class Poisson(ExponentialFamily):
    """Creates a Poisson distribution parameterized by ``rate``; samples are nonnegative integers."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its rate expanded to ``batch_shape``."""
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = tm.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Poisson, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``rate``."""
        return self.rate

    @property
    def mode(self):
        """``floor(rate)``."""
        return self.rate.floor()

    @property
    def variance(self):
        """``rate``."""
        return self.rate

    def sample(self, sample_shape=()):
        """``tm.poisson(rate)`` draws (PyTorch's random stream)."""
        shape = self._extended_shape(sample_shape)
        with tm.no_grad():
            return tm.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        """``value log(rate) - rate - lgamma(value + 1)``."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (tm.log(self.rate),)

    def _log_normalizer(self, x):
        return tm.exp(x)
