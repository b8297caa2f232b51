"""``Bernoulli``: a 0/1 outcome with probability ``probs`` (or ``logits``) of 1.

>>> import tensormodes as tm
>>> d = tm.distributions.Bernoulli(probs=tm.tensor([0.25]))
>>> d.mean.tolist(), d.variance.tolist(), d.log_prob(tm.tensor([1.0])).exp().tolist()
([0.25], [0.1875], [0.25])
"""

from __future__ import annotations

from math import nan
from numbers import Number

from .._api import namespace as tm
from ..nn import functional as F
from . import constraints
from .distribution import ExponentialFamily
from .utils import BinaryProbabilities, broadcast_all, expand_probabilities

__all__ = ["Bernoulli"]


class Bernoulli(BinaryProbabilities, ExponentialFamily):
    """Creates a Bernoulli distribution parameterized by ``probs`` or ``logits`` (but not both)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = tm.Size(batch_shape)
        new._param = expand_probabilities(self, new, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        """``probs``."""
        return self.probs

    @property
    def mode(self):
        """1 where ``probs > 0.5``, 0 below, NaN at 0.5."""
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = nan
        return mode

    @property
    def variance(self):
        """``probs * (1 - probs)``."""
        return self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._param.size()

    def sample(self, sample_shape=()):
        """Samples drawn with ``bernoulli(probs)``, PyTorch's random stream."""
        shape = self._extended_shape(sample_shape)
        with tm.no_grad():
            return tm.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        """``-binary_cross_entropy_with_logits(logits, value)``."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        """``binary_cross_entropy_with_logits(logits, probs)``."""
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        """``[0, 1]``, shaped to broadcast over the batch."""
        values = tm.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self):
        return (tm.logit(self.probs),)

    def _log_normalizer(self, x):
        return tm.log1p(tm.exp(x))
