"""``AdamW``: Adam with decoupled weight decay (PyTorch's ``Adam(decoupled_weight_decay=True)``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Implements the AdamW algorithm, where weight decay does not accumulate in the
    momentum nor variance: each step first scales the parameter by
    ``1 - lr * weight_decay``, then takes Adam's step.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients used for computing running
            averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-8)
        weight_decay (float, optional): weight decay coefficient (default: 1e-2)
        amsgrad (bool, optional): whether to use the AMSGrad variant of this algorithm
            (default: False)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        foreach, capturable, differentiable, fused: as for ``Adam``.

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0, -1.0]))
    >>> opt = tm.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = tm.tensor([0.5, -2.0])
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.8500, -0.8500], requires_grad=True)
    >>> opt.param_groups[0]["decoupled_weight_decay"]
    True
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
