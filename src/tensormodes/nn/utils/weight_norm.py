"""The older, hook-based ``torch.nn.utils.weight_norm`` (deprecated in PyTorch for
``parametrizations.weight_norm``, and still everywhere in audio and GAN code): the weight becomes
the parameters ``<name>_g`` (magnitude) and ``<name>_v`` (direction), and a forward pre-hook
recomputes ``<name> = g * v / ||v||`` before each call.

>>> import tensormodes as tm, warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     m = tm.nn.utils.weight_norm(tm.nn.Linear(20, 40))
>>> m.weight_g.size(), m.weight_v.size()
(tensormodes.Size([40, 1]), tensormodes.Size([40, 20]))
"""

from __future__ import annotations

import warnings

from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from .parametrizations import _norm_except_dim, normalized_weight

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of ``weight_norm``: sets ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module):
        """``g * v / ||v||`` from the module's ``<name>_g`` and ``<name>_v``."""
        return normalized_weight(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and register the hook."""
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        hook = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to "
                             "run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, hook.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, hook.compute_weight(module))
        module.register_forward_pre_hook(hook)
        return hook

    def remove(self, module: Module) -> None:
        """Make ``module.<name>`` a parameter again (its current value) and drop ``g`` and ``v``."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalization of ``module.<name>`` through parameters ``<name>_g`` and ``<name>_v``
    (the norm per slice along ``dim``, of the whole tensor for ``dim=None``); returns the module.
    Deprecated in PyTorch (a ``FutureWarning``) for ``parametrizations.weight_norm``.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = tm.nn.utils.weight_norm(tm.nn.Linear(3, 2), dim=None)
    >>> m.weight_g.shape
    tensormodes.Size([])
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``module.<name>`` is a parameter again, holding the normalized weight.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = tm.nn.utils.remove_weight_norm(tm.nn.utils.weight_norm(tm.nn.Linear(3, 2)))
    >>> sorted(name for name, _ in m.named_parameters())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
