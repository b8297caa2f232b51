"""The older, hook-based ``torch.nn.utils.spectral_norm`` (kept by PyTorch beside
``parametrizations.spectral_norm``, and used by many GAN discriminators): the parameter becomes
``<name>_orig`` with the power-iteration vectors in the buffers ``<name>_u`` and ``<name>_v``, and a
forward pre-hook sets ``<name> = <name>_orig / sigma`` before each call (one power-iteration step per
call in training mode).

>>> import tensormodes as tm
>>> m = tm.nn.utils.spectral_norm(tm.nn.Linear(20, 40))
>>> m.weight_u.shape, m.weight_v.shape, m.weight_orig.shape
(tensormodes.Size([40]), tensormodes.Size([20]), tensormodes.Size([40, 20]))
"""

from __future__ import annotations

from ... import linalg
from ..._api import namespace as tm
from ..._memory_format import contiguous_format
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook", "spectral_norm",
           "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm``: sets ``module.<name>`` from ``<name>_orig``, ``_u``, ``_v``."""

    _version = 1  # state dicts record it (metadata "spectral_norm"); older ones are converted on load

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight):
        """The weight as a matrix whose rows run along ``dim``."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        """``<name>_orig / sigma``, sigma estimated from ``u`` and ``v`` (updated in place first when
        ``do_power_iteration``, then cloned so that the backward sees the values it used)."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with tm.no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(tm.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(tm.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone(memory_format=contiguous_format)
                v = v.clone(memory_format=contiguous_format)
        return weight / tm.dot(u, tm.mv(weight_mat, v))

    def remove(self, module: Module) -> None:
        """Make ``module.<name>`` a parameter again (its normalized value) and drop the rest."""
        with tm.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # the v of a version-0 state dict, which stored the normalized weight instead: solved so that
        # u^T W v equals the sigma the saved weights imply
        v = linalg.multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(), u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / tm.dot(u, tm.mv(weight_mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        """Move ``module.<name>`` to ``<name>_orig``, draw ``u`` and ``v``, register the hooks."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized parameters. Make sure to "
                             "run the dummy forward before applying spectral normalization")
        with tm.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module.register_state_dict_post_hook(SpectralNormStateDictHook(fn))
        module.register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a state dict saved before version 1 (``<name>`` normalized, no ``<name>_v``)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and all(key + s in state_dict for s in ("_orig", "_u", "_v")) and key not in state_dict:
            return  # a version-1 state dict without metadata
        missing = [key + suffix for suffix in ("_orig", "", "_u") if key + suffix not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with tm.no_grad():
            weight_orig = state_dict[key + "_orig"]
            sigma = (weight_orig / state_dict.pop(key)).mean()
            state_dict[key + "_v"] = fn._solve_v_and_rescale(fn.reshape_weight_to_matrix(weight_orig),
                                                             state_dict[key + "_u"], sigma)


class SpectralNormStateDictHook:
    """Records the spectral-norm version in the state dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Spectral normalization of ``module.<name>`` through hooks; returns the module. ``dim`` (the
    weight's output dimension) defaults to 1 for transposed convolutions, else 0.

    >>> import tensormodes as tm
    >>> m = tm.nn.utils.spectral_norm(tm.nn.ConvTranspose1d(2, 3, 2))
    >>> m.weight_u.shape
    tensormodes.Size([3])
    """
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``spectral_norm``: ``module.<name>`` is a parameter again, holding the normalized weight.

    >>> import tensormodes as tm
    >>> m = tm.nn.utils.remove_spectral_norm(tm.nn.utils.spectral_norm(tm.nn.Linear(3, 2)))
    >>> sorted(m.state_dict())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in hooks.items():
            hook = getattr(hook, "func", hook)  # (load pre-hooks are kept with their module bound)
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[key]
                break
    return module
