"""``MultivariateNormal``: the Gaussian of a vector, by its covariance, precision or lower
Cholesky factor.

>>> import tensormodes as tm
>>> d = tm.distributions.MultivariateNormal(tm.zeros(2), covariance_matrix=tm.eye(2) * 4)
>>> d.scale_tril.tolist(), round(d.log_prob(tm.zeros(2)).item(), 4)
([[2.0, 0.0], [0.0, 2.0]], -3.2242)
"""

from __future__ import annotations

import math

from .. import linalg
from .._api import namespace as tm
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _broadcast_shapes(a: tuple, b: tuple):
    """``torch.broadcast_shapes(a, b)``, with its error."""
    if len(a) < len(b):
        a, b = b, a
    b = (1,) * (len(a) - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between "
                               "arg 0 and arg 1.")
        out.append(x if y == 1 else y)
    return tm.Size(out)


def _batch_mv(bmat, bvec):
    return tm.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distance ``x^T (L L^T)^-1 x``, batched (``L`` broadcasts against ``x``).
    PyTorch solves the triangular system; a general solve gives the same values here."""
    return linalg.solve(bL, bx.unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    Lf = linalg.cholesky(tm.flip(P, (-2, -1)))
    L_inv = tm.transpose(tm.flip(Lf, (-2, -1)), -2, -1)
    eye = tm.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve(L_inv, eye)


class MultivariateNormal(Distribution):
    """Creates a multivariate normal distribution parameterized by a mean vector ``loc`` and one
    of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (lower-triangular, with a
    positive diagonal)."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = scale_tril if scale_tril is not None else (
            covariance_matrix if covariance_matrix is not None else precision_matrix)
        name = "scale_tril" if scale_tril is not None else (
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        if given.dim() < 2:
            kind = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{kind} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = _broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, given.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tm.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the covariance."""
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """``L L^T``."""
        return tm.matmul(self._unbroadcasted_scale_tril, self._unbroadcasted_scale_tril.mT).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """The inverse of the covariance."""
        inverse = linalg.inv(self._unbroadcasted_scale_tril)
        return tm.matmul(inverse.mT, inverse).expand(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        """``loc``."""
        return self.loc

    @property
    def mode(self):
        """``loc``."""
        return self.loc

    @property
    def variance(self):
        """The diagonal of the covariance."""
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        """``loc + L eps``, ``eps`` standard normal (PyTorch's random stream)."""
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        """``n/2 (1 + log 2 pi) + log det L``."""
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
