"""``Gamma``, ``Beta`` and ``Dirichlet``: their densities, moments and entropies as PyTorch's; sampling with
PyTorch's samplers (``tm._standard_gamma``, ``tm._sample_dirichlet``: Marsaglia and Tsang's
method on PyTorch's scalar draws), so a seed gives PyTorch's samples.

``rsample`` is differentiable in ``rate`` (Gamma); the gradient with respect to a
concentration (PyTorch's ``_standard_gamma_grad``) is not implemented and raises.

>>> import tensormodes as tm
>>> g = tm.distributions.Gamma(tm.tensor([2.0]), tm.tensor([4.0]))
>>> g.mean.tolist(), g.variance.tolist(), round(g.log_prob(tm.tensor([0.5])).item(), 4)
([0.5], [0.125], 0.0794)
>>> b = tm.distributions.Beta(tm.tensor([2.0]), tm.tensor([2.0]))
>>> b.mean.tolist(), round(b.log_prob(tm.tensor([0.5])).item(), 4)
([0.5], 0.4055)
"""

from __future__ import annotations

from numbers import Number

from .. import special
from .._api import namespace as tm
from ..nn import functional as F
from . import constraints
from .distribution import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma", "Beta", "Dirichlet"]


def _check_no_concentration_grad(*concentrations) -> None:
    if tm.is_grad_enabled() and any(c.requires_grad for c in concentrations):
        raise NotImplementedError("rsample: the gradient of gamma samples with respect to the concentration "
                                  "(PyTorch's _standard_gamma_grad) is not implemented in tensormodes; detach the "
                                  "concentration or use sample()")


class Gamma(ExponentialFamily):
    """Creates a Gamma distribution parameterized by shape ``concentration`` and ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = () if isinstance(concentration, Number) and isinstance(rate, Number) else \
            self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = tm.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``concentration / rate``."""
        return self.concentration / self.rate

    @property
    def mode(self):
        """``(concentration - 1) / rate``, at least 0."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        """``concentration / rate ** 2``."""
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        """Samples, differentiable in ``rate`` (see the module's note on the concentration)."""
        _check_no_concentration_grad(self.concentration)
        shape = self._extended_shape(sample_shape)
        value = tm._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=tm.finfo(value.dtype).tiny)  # not recorded, as in PyTorch
        return value

    def log_prob(self, value):
        """The log density at ``value``."""
        value = tm.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (tm.xlogy(self.concentration, self.rate) + tm.xlogy(self.concentration - 1, value)
                - self.rate * value - tm.lgamma(self.concentration))

    def cdf(self, value):
        """The regularized lower incomplete gamma function of ``rate * value``."""
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        """The entropy."""
        return (self.concentration - tm.log(self.rate) + tm.lgamma(self.concentration)
                + (1.0 - self.concentration) * tm.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return tm.lgamma(x + 1) + (x + 1) * tm.log(-y.reciprocal())


class Beta(ExponentialFamily):
    """Beta distribution parameterized by ``concentration1`` and ``concentration0``."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = tm.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = tm.stack([concentration1, concentration0], -1)
        self._concentrations = both  # as PyTorch's Dirichlet over (concentration1, concentration0)
        super().__init__(both.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = tm.Size(batch_shape)
        new._concentrations = self._concentrations.expand(batch_shape + (2,))
        super(Beta, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        """The first concentration (alpha)."""
        return self._concentrations[..., 0]

    @property
    def concentration0(self):
        """The second concentration (beta)."""
        return self._concentrations[..., 1]

    @property
    def mean(self):
        """``concentration1 / (concentration1 + concentration0)``."""
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        """The mode of the Dirichlet over both outcomes, first component."""
        c = (self._concentrations - 1).clamp(min=0.0)
        mode = c / c.sum(-1, True)
        mask = (self._concentrations < 1).all(dim=-1)
        mode[mask] = F.one_hot(mode[mask].argmax(dim=-1), 2).to(mode)
        return mode[..., 0]

    @property
    def variance(self):
        """``c1 c0 / ((c1 + c0) ** 2 (c1 + c0 + 1))``."""
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        """The first component of a Dirichlet sample over (concentration1, concentration0)."""
        _check_no_concentration_grad(self._concentrations)
        shape = self._extended_shape(sample_shape) + (2,)
        return tm._sample_dirichlet(self._concentrations.expand(shape)).select(-1, 0)

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = tm.stack([value, 1.0 - value], -1)
        c = self._concentrations
        return tm.xlogy(c - 1.0, heads_tails).sum(-1) + tm.lgamma(c.sum(-1)) - tm.lgamma(c).sum(-1)

    def entropy(self):
        """The entropy (of the Dirichlet over both outcomes)."""
        c = self._concentrations
        a0 = c.sum(-1)
        return (tm.lgamma(c).sum(-1) - tm.lgamma(a0) - (2 - a0) * tm.digamma(a0)
                - ((c - 1.0) * tm.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return tm.lgamma(x) + tm.lgamma(y) - tm.lgamma(x + y)


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution parameterized by ``concentration`` (its last dimension: the
    categories; at least one-dimensional).

    >>> import tensormodes as tm
    >>> d = tm.distributions.Dirichlet(tm.tensor([1.0, 2.0, 1.0]))
    >>> d.mean.tolist(), d.sample((2,)).shape
    ([0.25, 0.5, 0.25], tensormodes.Size([2, 3]))
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its concentration expanded to ``batch_shape``."""
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tm.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        """PyTorch's samples (``tm._sample_dirichlet``); see the module's note on gradients."""
        _check_no_concentration_grad(self.concentration)
        shape = self._extended_shape(sample_shape)
        return tm._sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return tm.xlogy(c - 1.0, value).sum(-1) + tm.lgamma(c.sum(-1)) - tm.lgamma(c).sum(-1)

    @property
    def mean(self):
        """``concentration / concentration.sum(-1)``."""
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """``(concentration - 1)`` normalised; a one-hot vertex where every concentration is below 1."""
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = F.one_hot(mode[mask].argmax(dim=-1), shifted.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        """``c (c0 - c) / (c0 ** 2 (c0 + 1))`` with ``c0`` the total concentration."""
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        """The entropy."""
        c = self.concentration
        k = c.size(-1)
        total = c.sum(-1)
        return (tm.lgamma(c).sum(-1) - tm.lgamma(total) - (k - total) * tm.digamma(total)
                - ((c - 1.0) * tm.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - tm.lgamma(x.sum(-1))
