"""``functional_call`` and ``stack_module_state``: modules as functions of their parameters and
buffers, for ``grad`` over a model's parameters and ``vmap`` over an ensemble.

>>> import tensormodes as tm
>>> models = [tm.nn.Linear(2, 1) for _ in range(3)]
>>> params, buffers = stack_module_state(models)
>>> params["weight"].shape
tensormodes.Size([3, 1, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._api import namespace as tm
from ..nn import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ..nn.modules.module import Module
from ..nn.utils.stateless import call_with_tensors

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]


def functional_call(module: Module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Performs a functional call on the module by replacing the module parameters and buffers
    with the provided ones (a dict, or a sequence of dicts with distinct keys). The module's own
    tensors are back afterwards, also when the call raises. With ``tie_weights``, a value given
    for one of several names of the same tensor is used for all of them; with ``strict``, the
    names must be exactly the module's.

    >>> import tensormodes as tm
    >>> lin = tm.nn.Linear(2, 1)
    >>> functional_call(lin, {"weight": tm.ones(1, 2), "bias": tm.zeros(1)}, (tm.tensor([1.0, 2.0]),)).tolist()
    [3.0]
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict[str, int] = {}
        for key in (key for d in parameter_and_buffer_dicts for key in d):
            counts[key] = counts.get(key, 0) + 1
        repeated = [key for key, count in counts.items() if count > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return call_with_tensors(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors: tuple, name: str):
    requiring = [t.requires_grad for t in tensors]
    if any(requiring) and not all(requiring):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    stacked = tm.stack(tensors)
    return stacked.detach().requires_grad_() if all(requiring) else stacked


def stack_module_state(models) -> tuple[dict[str, Any], dict[str, Any]]:
    """Prepares a list of ``nn.Module``s of one class for ensembling with ``vmap``: two dicts
    (parameters, buffers) of their tensors stacked along a new first dimension, by name. The
    stacked parameters are new leaves (an optimizer may take them).

    >>> import tensormodes as tm
    >>> from tensormodes.func import functional_call, vmap
    >>> models = [tm.nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = stack_module_state(models)
    >>> run = lambda p, b, x: functional_call(models[0], (p, b), (x,))
    >>> vmap(run, in_dims=(0, 0, None))(params, buffers, tm.ones(5, 3)).shape
    tensormodes.Size([4, 5, 2])
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(model.named_parameters()) for model in models]
    params = {name: _stacked_leaf(tuple(p[name] for p in all_params), name) for name in all_params[0]}
    all_buffers = [dict(model.named_buffers()) for model in models]
    buffers = {name: _stacked_leaf(tuple(b[name] for b in all_buffers), name) for name in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """In place updates ``root`` by setting the ``running_mean`` and ``running_var`` to be None and
    setting ``track_running_stats`` to be False for any ``nn.BatchNorm`` module in ``root``.

    >>> import tensormodes as tm
    >>> net = replace_all_batch_norm_modules_(tm.nn.Sequential(tm.nn.BatchNorm1d(2)))
    >>> net[0].running_mean is None, net[0].track_running_stats
    (True, False)
    """
    for module in root.modules():
        if isinstance(module, (BatchNorm1d, BatchNorm2d, BatchNorm3d)) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
