"""``Independent``: reinterprets batch dims of a distribution as event dims (a diagonal
Gaussian over vectors from a batch of ``Normal`` s).

>>> import tensormodes as tm
>>> d = tm.distributions.Independent(tm.distributions.Normal(tm.zeros(3), tm.ones(3)), 1)
>>> d.batch_shape, d.event_shape, d.log_prob(tm.zeros(3)).shape
(tensormodes.Size([]), tensormodes.Size([3]), tensormodes.Size([]))
"""

from __future__ import annotations

from .._api import namespace as tm
from . import constraints
from .distribution import Distribution
from .utils import _sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """Reinterprets some of the batch dims of a distribution as event dims: ``log_prob`` and
    ``entropy`` sum over the ``reinterpreted_batch_ndims`` rightmost batch dims."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its base expanded to ``batch_shape`` (and the reinterpreted dims)."""
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = tm.Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape + self.event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        super(Independent, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:
        """Whether the base distribution has ``rsample``."""
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        """Whether the support can be enumerated (not over reinterpreted dims)."""
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        """The base's support, independent over the reinterpreted dims."""
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        """The base's mean."""
        return self.base_dist.mean

    @property
    def mode(self):
        """The base's mode."""
        return self.base_dist.mode

    @property
    def variance(self):
        """The base's variance."""
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        """The base's samples."""
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        """The base's reparameterized samples."""
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        """The base's log-probabilities, summed over the reinterpreted dims."""
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        """The base's entropies, summed over the reinterpreted dims."""
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True):
        """The base's support (not over reinterpreted dims)."""
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return self.__class__.__name__ + f"({self.base_dist}, {self.reinterpreted_batch_ndims})"
