"""Ready-made parametrizations (``torch.nn.utils.parametrizations``): ``weight_norm`` and
``spectral_norm``, registered with ``parametrize.register_parametrization``.

>>> import tensormodes as tm
>>> from tensormodes.nn.utils.parametrizations import weight_norm
>>> m = weight_norm(tm.nn.Linear(20, 40), name="weight")
>>> m.parametrizations.weight.original0.size(), m.parametrizations.weight.original1.size()
(tensormodes.Size([40, 1]), tensormodes.Size([40, 20]))
>>> type(m).__name__
'ParametrizedLinear'
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except_dim(v, pow: float, dim: int):
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (over all of them for -1), with
    ``v``'s rank: ``torch.norm_except_dim``."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, dim=1).view(v.size(0), *([1] * (v.dim() - 1)))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.size(-1)).norm(pow, dim=0).view(*([1] * (v.dim() - 1)), v.size(-1))
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def normalized_weight(v, g, dim: int):
    """``g * v / ||v||``, the norm over every dimension of ``v`` but ``dim`` (all of them for -1)."""
    return v * (g / _norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    """``g * v / ||v||`` (the norm over every dimension but ``dim``; over all for ``dim=None``)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        """The weight from its magnitude ``weight_g`` and direction ``weight_v``."""
        return normalized_weight(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        """``(g, v)`` for a weight: its norms, and itself."""
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Apply weight normalization to a parameter in the given module: w = g v / ||v||, with the
    magnitude ``g`` in ``parametrizations.<name>.original0`` and the direction ``v`` in
    ``original1``. The norm is per slice along ``dim`` (over the whole tensor with ``dim=None``).
    State dicts of the older ``nn.utils.weight_norm`` (``<name>_g`` / ``<name>_v``) still load.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                      error_msgs) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(load_old_keys)
    return module


class _SpectralNorm(Module):
    """``weight / sigma``, ``sigma`` the largest singular value of the weight seen as a matrix
    (rows along ``dim``), estimated by power iteration on the buffers ``_u`` and ``_v`` (one or
    more steps per call in training mode)."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        with tm.no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(tm.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(tm.mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        """The weight divided by its estimated spectral norm (normalized, for a vector)."""
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = tm.vdot(u, tm.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        """The weight itself (it is stored unnormalized)."""
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Apply spectral normalization to a parameter in the given module: the weight divided by
    its largest singular value, estimated by ``n_power_iterations`` steps of power iteration per
    call in training mode. ``dim`` (default 1 for transposed convolutions, else 0) is the
    dimension of the output rows.

    >>> import tensormodes as tm
    >>> from tensormodes.nn.utils.parametrizations import spectral_norm
    >>> _ = tm.manual_seed(0)
    >>> m = spectral_norm(tm.nn.Linear(4, 3))
    >>> round(tm.linalg.matrix_norm(m.weight, 2).item(), 2), sorted(m.parametrizations.weight[0]._buffers)
    (1.0, ['_u', '_v'])
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, tm.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
