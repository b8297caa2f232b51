"""``Binomial`` and ``Multinomial``: counts of successes in ``total_count`` trials (of each
category), with PyTorch's probabilities, moments and samplers (``tm.binomial``; ``Categorical``
draws counted), so a seed gives PyTorch's samples.

>>> import tensormodes as tm
>>> b = tm.distributions.Binomial(4, tm.tensor([0.5]))
>>> b.mean.tolist(), b.log_prob(tm.tensor([2.0])).exp().tolist()
([2.0], [0.375])
>>> m = tm.distributions.Multinomial(2, tm.tensor([0.5, 0.5]))
>>> m.log_prob(tm.tensor([1.0, 1.0])).exp().item()
0.5
"""

from __future__ import annotations

from .._api import namespace as tm
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import BinaryProbabilities, broadcast_all, expand_probabilities

__all__ = ["Binomial", "Multinomial"]


def _clamp_by_zero(x):
    # clamp(x, min=0) whose gradient at 0 is 1/2, as PyTorch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryProbabilities, Distribution):
    """Creates a Binomial distribution parameterized by ``total_count`` and either ``probs`` or
    ``logits`` (but not both); ``total_count`` broadcasts with them."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = tm.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        new._param = expand_probabilities(self, new, batch_shape)
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers from 0 to ``total_count``."""
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        """``total_count * probs``."""
        return self.total_count * self.probs

    @property
    def mode(self):
        """``floor((total_count + 1) probs)``, at most ``total_count``."""
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        """``total_count probs (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._param.size()

    def sample(self, sample_shape=()):
        """``tm.binomial`` draws (PyTorch's random stream)."""
        shape = self._extended_shape(sample_shape)
        with tm.no_grad():
            return tm.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        """The log probability of ``value`` successes, from the logits (stable at 0 and 1)."""
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = tm.lgamma(self.total_count + 1)
        log_factorial_k = tm.lgamma(value + 1)
        log_factorial_nmk = tm.lgamma(self.total_count - value + 1)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * tm.log1p(tm.exp(-tm.abs(self.logits))) - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        """The entropy, summed over the support (one ``total_count`` only)."""
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(tm.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        """``0 .. total_count``, shaped to broadcast over the batch (one ``total_count`` only)."""
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = tm.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Multinomial(Distribution):
    """Creates a Multinomial distribution parameterized by an integer ``total_count`` and either
    ``probs`` or ``logits`` over the categories (the last dimension)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = tm.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        """Count vectors summing to at most ``total_count``."""
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        """``probs * total_count``."""
        return self.probs * self.total_count

    @property
    def variance(self):
        """``total_count probs (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        """The normalized log-probabilities of the categories."""
        return self._categorical.logits

    @property
    def probs(self):
        """The probabilities of the categories."""
        return self._categorical.probs

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        """``total_count`` Categorical draws (PyTorch's random stream), counted per category."""
        sample_shape = tm.Size(sample_shape)
        samples = self._categorical.sample(tm.Size((self.total_count,)) + sample_shape)
        order = list(range(1, samples.dim())) + [0]  # the draws last
        samples = samples.permute(*order)
        counts = samples.new(self._extended_shape(sample_shape)).zero_()
        counts.scatter_add_(-1, samples, tm.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        """The entropy (through the marginal binomials)."""
        n = tm.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - tm.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = tm.exp(self._binomial.log_prob(support))
        weights = tm.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value):
        """The log probability of the count vector ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = tm.lgamma(value.sum(-1) + 1)
        log_factorial_xs = tm.lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -float("inf"))] = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
