"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_``.

>>> import tensormodes as tm
>>> w = tm.nn.Parameter(tm.zeros(2)); w.grad = tm.tensor([3., 4.])
>>> tm.nn.utils.clip_grad_norm_([w], max_norm=1.0).item(), w.grad.tolist()
(5.0, [0.5999999046325684, 0.7999998331069946])
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

from ..._api import namespace as tm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _as_list(parameters: tm.Tensor | Iterable[tm.Tensor]) -> list[tm.Tensor]:
    if isinstance(parameters, tm.Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    # A list, so that a generator is not exhausted by the first pass.
    parameters = list(parameters)
    if is_generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    return parameters


def get_total_norm(tensors: tm.Tensor | Iterable[tm.Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> tm.Tensor:
    """The norm of ``tensors`` viewed as one vector: the ``norm_type`` norm of their norms
    (``inf`` allowed). ``foreach`` is accepted for compatibility and ignored.

    >>> import tensormodes as tm
    >>> tm.nn.utils.get_total_norm([tm.tensor([3.0]), tm.tensor([4.0])]).item()
    5.0
    """
    tensors = [tensors] if isinstance(tensors, tm.Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tm.tensor(0.0)
    with tm.no_grad():
        norms = [tm.norm(t.flatten(), norm_type) for t in tensors]
        total_norm = tm.norm(tm.stack(norms), norm_type)
    if error_if_nonfinite and bool(tm.logical_or(total_norm.isnan(), total_norm.isinf())):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. To disable this error and scale the gradients by the "
                           "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters: tm.Tensor | Iterable[tm.Tensor], max_norm: float, total_norm: tm.Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the parameters' gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``, for a
    ``total_norm`` computed beforehand (``get_total_norm``). ``foreach`` is accepted and ignored.

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.zeros(2)); w.grad = tm.tensor([3., 4.])
    >>> tm.nn.utils.clip_grads_with_norm_([w], 1.0, tm.tensor(10.0)); w.grad.tolist()
    [0.29999998211860657, 0.3999999761581421]
    """
    parameters = [parameters] if isinstance(parameters, tm.Tensor) else parameters
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    with tm.no_grad():
        clip_coef = tm.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for grad in grads:
            grad.mul_(clip_coef)


def clip_grad_norm_(parameters: tm.Tensor | Iterable[tm.Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> tm.Tensor:
    """Clip the gradient norm of an iterable of parameters.

    The norm is computed over the norms of the individual gradients of all
    parameters, as if the norms of the individual gradients were concatenated
    into a single vector (``get_total_norm``). Gradients are modified in-place, scaled by
    min(max_norm / (total_norm + 1e-6), 1) (``clip_grads_with_norm_``). ``norm_type`` may be ``inf``.
    ``foreach`` is accepted for compatibility and ignored. Returns the total
    norm of the gradients (viewed as a single vector).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.zeros(2)); w.grad = tm.tensor([3., -4.])
    >>> tm.nn.utils.clip_grad_norm_(w, 10.0, norm_type=float("inf")).item(), w.grad.tolist()
    (4.0, [3.0, -4.0])
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters: tm.Tensor | Iterable[tm.Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> tm.Tensor:
    """PyTorch's deprecated name of ``clip_grad_norm_`` (a ``FutureWarning``, then the same).

    >>> import tensormodes as tm, warnings
    >>> w = tm.nn.Parameter(tm.zeros(2)); w.grad = tm.tensor([3., 4.])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.nn.utils.clip_grad_norm([w], 1.0).item()
    5.0
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: tm.Tensor | Iterable[tm.Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clip the gradients of an iterable of parameters at specified value, in place, to [-clip_value, clip_value].

    ``foreach`` is accepted for compatibility and ignored.

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.zeros(3)); w.grad = tm.tensor([-2., 0.5, 9.])
    >>> tm.nn.utils.clip_grad_value_(w, 1.0); w.grad.tolist()
    [-1.0, 0.5, 1.0]
    """
    parameters = _as_list(parameters)
    clip_value = float(clip_value)
    with tm.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
