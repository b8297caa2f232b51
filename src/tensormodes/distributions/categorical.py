"""``Categorical``: one of ``K`` categories, with probabilities ``probs`` (or ``logits``).

>>> import tensormodes as tm
>>> d = tm.distributions.Categorical(probs=tm.tensor([0.25, 0.25, 0.5]))
>>> d.log_prob(tm.tensor(2)).exp().item(), d.sample((4,)).shape
(0.5, tensormodes.Size([4]))
"""

from __future__ import annotations

from math import nan

from .._api import namespace as tm
from . import constraints
from .distribution import Distribution
from .utils import expand_probabilities, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Creates a categorical distribution parameterized by either ``probs`` or ``logits`` (but
    not both): the last dimension indexes the categories, the others are the batch."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)  # normalize
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = tm.Size(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        new._param = expand_probabilities(self, new, param_shape)
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """``integer_interval(0, K - 1)``."""
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """The normalized log-probabilities."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """The normalized probabilities."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._param.size()

    @property
    def mean(self):
        """NaN (categories have no mean)."""
        return tm.full(self._extended_shape(), nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        """The most probable category."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """NaN (categories have no variance)."""
        return tm.full(self._extended_shape(), nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=()):
        """Category indices drawn with ``multinomial`` (PyTorch's random stream)."""
        sample_shape = tm.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = tm.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        """The log-probability of category ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = tm.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        """``-sum(p log p)``."""
        min_real = tm.finfo(self.logits.dtype).min
        logits = tm.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        """``0 .. K - 1``, shaped to broadcast over the batch."""
        values = tm.arange(self._num_events, dtype=tm.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
