"""Probability distributions (``torch.distributions``): ``Normal``, ``Uniform``, ``Bernoulli``,
``Categorical``, ``MultivariateNormal``, ``Gamma``, ``Beta``, ``Dirichlet``, ``Independent``,
``Exponential``, ``Laplace``, ``Cauchy``, ``Geometric``, ``Poisson``, ``TransformedDistribution``
(with ``transforms``), ``LogNormal``, ``HalfNormal``, ``HalfCauchy``, ``Gumbel``,
``OneHotCategorical``, ``Chi2``, ``StudentT``, ``Binomial`` and ``Multinomial``,
with ``sample`` / ``rsample``, ``log_prob``, ``entropy``, ``mean`` / ``variance``, PyTorch's
argument validation, and
``kl_divergence`` for the pairs PyTorch registers among them.

>>> import tensormodes as tm
>>> d = tm.distributions.Normal(tm.zeros(3), tm.ones(3))
>>> d.sample((2,)).shape, d.log_prob(tm.zeros(3)).shape
(tensormodes.Size([2, 3]), tensormodes.Size([3]))
>>> tm.distributions.Normal(0.0, -1.0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: Expected parameter scale (Tensor of shape ()) of distribution Normal(loc: 0.0, scale: -1.0) to ...
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .binomial import Binomial, Multinomial
from .categorical import Categorical
from .counts import Geometric, Poisson
from .distribution import Distribution, ExponentialFamily
from .exponential import Cauchy, Exponential, Laplace
from .gamma import Beta, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .student_t import Chi2, StudentT
from .transformed_distribution import TransformedDistribution
from .transformed_families import Gumbel, HalfCauchy, HalfNormal, LogNormal
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson", "StudentT", "TransformedDistribution", "Uniform",
           "constraints", "kl_divergence", "register_kl", "transforms"]
