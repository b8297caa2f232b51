"""``Gamma`` and ``Beta``: their densities, moments and entropies as PyTorch's; sampling by
Marsaglia and Tsang's method on the library's generator.

PyTorch samples with its own C++ gamma sampler (``torch._standard_gamma``), whose draws this
library does not reproduce: ``sample`` here has the same distribution, not the same numbers for
a seed. ``rsample`` is differentiable in ``rate`` (Gamma); the gradient with respect to a
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

from .._api import namespace as tm
from ..nn import functional as F
from . import constraints
from .distribution import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma", "Beta"]


def _standard_gamma(concentration):
    """Gamma(concentration, 1) draws (Marsaglia and Tsang), computed without a graph."""
    with tm.no_grad():
        alpha = concentration.detach()
        boost = alpha < 1  # Gamma(a) = Gamma(a + 1) * U ** (1 / a) for a < 1
        a = tm.where(boost, alpha + 1, alpha)
        d = a - 1.0 / 3.0
        c = 1.0 / (9.0 * d).sqrt()
        result = tm.zeros_like(a)
        pending = tm.ones_like(a, dtype=tm.bool)
        while bool(pending.any()):
            x = tm.randn(a.shape, dtype=a.dtype)
            v = (1 + c * x) ** 3
            u = tm.rand(a.shape, dtype=a.dtype)
            accept = pending & (v > 0) & (u.log() < 0.5 * x * x + d - d * v + d * v.clamp(min=1e-30).log())
            result = tm.where(accept, d * v, result)
            pending = pending & ~accept
        u = tm.rand(a.shape, dtype=a.dtype)
        result = tm.where(boost, result * u.pow(1.0 / alpha), result)
        return result.clamp(min=tm.finfo(result.dtype).tiny)


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
        return _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        """The log density at ``value``."""
        value = tm.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (tm.xlogy(self.concentration, self.rate) + tm.xlogy(self.concentration - 1, value)
                - self.rate * value - tm.lgamma(self.concentration))

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
        """``X / (X + Y)`` for gamma draws ``X``, ``Y`` (see the module's note)."""
        _check_no_concentration_grad(self._concentrations)
        shape = self._extended_shape(sample_shape) + (2,)
        draws = _standard_gamma(self._concentrations.expand(shape))
        return (draws / draws.sum(-1, True)).select(-1, 0)

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
