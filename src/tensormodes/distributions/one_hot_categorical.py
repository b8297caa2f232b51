"""``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``: a ``Categorical`` whose samples
are one-hot vectors (PyTorch's: the same draws as ``Categorical``).

>>> import tensormodes as tm
>>> d = tm.distributions.OneHotCategorical(tm.tensor([0.25, 0.25, 0.5]))
>>> d.mode.tolist(), d.log_prob(tm.tensor([0.0, 0.0, 1.0])).exp().item(), d.event_shape
([0.0, 0.0, 1.0], 0.5, tensormodes.Size([3]))
"""

from __future__ import annotations

from .._api import namespace as tm
from ..nn import functional as F
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """Creates a one-hot categorical distribution parameterized by ``probs`` or ``logits``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = tm.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """The probabilities of the categories."""
        return self._categorical.probs

    @property
    def logits(self):
        """The normalized log-probabilities of the categories."""
        return self._categorical.logits

    @property
    def mean(self):
        """``probs``."""
        return self._categorical.probs

    @property
    def mode(self):
        """The one-hot vector of the most probable category."""
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        """``probs * (1 - probs)``."""
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        """One-hot vectors of ``Categorical`` samples (PyTorch's random stream)."""
        indices = self._categorical.sample(tm.Size(sample_shape))
        return F.one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value):
        """The categorical log probability of the hot index."""
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        """The categorical entropy."""
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        """The ``n`` one-hot vectors, shaped to broadcast over the batch."""
        n = self.event_shape[0]
        values = tm.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` whose ``rsample`` passes gradients straight through to ``probs``."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        """The one-hot sample plus ``probs - probs.detach()``."""
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
