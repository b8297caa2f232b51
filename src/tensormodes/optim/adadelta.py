"""``Adadelta``: an adaptive learning rate from running averages of squared gradients and updates."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .optimizer import Optimizer, _check_float_lr, _check_single_implementation, _scalar_dtype

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm.

    For each parameter with a gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * param                  (if weight_decay != 0)
        v = rho * v + (1 - rho) * g * g               (square_avg)
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta       (acc_delta)
        param = param - lr * delta

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): coefficient that scale delta before it is applied to the
            parameters (default: 1.0)
        rho (float, optional): coefficient used for computing a running average of
            squared gradients (default: 0.9)
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        foreach, capturable, differentiable: PyTorch's implementation choices; tensormodes
            has one implementation (``capturable`` and ``differentiable`` set to True raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0]))
    >>> opt = tm.optim.Adadelta([w], rho=0.0, eps=1.0)
    >>> w.grad = tm.tensor([3.0])
    >>> opt.step()
    >>> w, opt.state[w]["square_avg"], opt.state[w]["acc_delta"]
    (Parameter containing:
    tensor([0.0513], requires_grad=True), tensor([9.]), tensor([0.9000]))
    """

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_single_implementation("Adadelta", foreach, capturable, differentiable, None)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"foreach": None, "maximize": False, "differentiable": False, "capturable": False})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([2.0]))
        >>> opt = tm.optim.Adadelta([w], lr=2.0, rho=0.0, eps=1.0)
        >>> w.grad = tm.tensor([-1.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([3.4142], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop (what it runs on the CPU), operation for operation.
        lr, rho, eps, weight_decay, maximize = (group["lr"], group["rho"], group["eps"], group["weight_decay"],
                                                group["maximize"])
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            state = self.state[param]
            if not state:
                state["step"] = tm.zeros((), dtype=_scalar_dtype())
                state["square_avg"] = tm.zeros_like(param)
                state["acc_delta"] = tm.zeros_like(param)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            state["step"] += 1
            if maximize:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            is_complex = tm.is_complex(grad)
            if is_complex:
                square_avg, acc_delta, grad = (tm.view_as_real(t) for t in (square_avg, acc_delta, grad))
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            delta.div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            if is_complex:
                delta = tm.view_as_complex(delta)
            param.add_(delta, alpha=-lr)
