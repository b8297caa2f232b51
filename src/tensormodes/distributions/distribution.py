"""``Distribution``, the base class of the distributions, and ``ExponentialFamily``.

>>> import tensormodes as tm
>>> d = tm.distributions.Normal(tm.zeros(2), 1.0)
>>> d.batch_shape, d.event_shape, d.sample((3,)).shape
(tensormodes.Size([2]), tensormodes.Size([]), tensormodes.Size([3, 2]))
"""

from __future__ import annotations

import warnings

from .._api import namespace as tm
from ..autograd import grad
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """Distribution is the abstract base class for probability distributions.

    With argument validation on (``validate_args=True``, or the default set by
    ``set_default_validate_args``: on, as PyTorch's under ``__debug__``), parameters outside
    ``arg_constraints`` and ``log_prob`` values outside ``support`` raise ``ValueError``.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Sets whether validation is enabled or disabled by default."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None) -> None:
        self._batch_shape = tm.Size(batch_shape)
        self._event_shape = tm.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with `validate_args=False` "
                              "to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                if not constraint.check(value).all().item():
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution instance with batch dimensions expanded to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """The constraints each parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint object representing this distribution's support."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with tm.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        """``n`` samples (deprecated: use ``sample((n,))``)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(tm.Size((n,)))

    def log_prob(self, value):
        """The log of the probability density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        """The values of a discrete distribution's support."""
        raise NotImplementedError

    def entropy(self):
        """The entropy of the distribution, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """The perplexity of the distribution, batched over ``batch_shape``."""
        return tm.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        return tm.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value) -> None:
        if not isinstance(value, tm.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please initialize "
                          "the distribution with `validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not support.check(value).all().item():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return self.__class__.__name__ + "(" + args + ")"


class ExponentialFamily(Distribution):
    """Distributions of the exponential family, whose entropy follows from the log-normalizer
    of their natural parameters (by the Bregman divergence)."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self):
        """The entropy, from the log-normalizer's gradient."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = grad(log_normalizer.sum(), params, create_graph=True)
        result += log_normalizer
        for param, g in zip(params, gradients):
            result -= (param * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
