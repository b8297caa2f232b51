"""``Adamax``: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .nadam import _check_lr_eps_betas_decay
from .optimizer import Optimizer, _check_single_implementation, _scalar_dtype

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Implements the Adamax algorithm (a variant of Adam based on the infinity norm).

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * param                  (if weight_decay != 0)
        m = lerp(m, g, 1 - beta1)
        u = maximum(beta2 * u, |g| + eps)             (exp_inf)
        param = param - lr / (1 - beta1**t) * m / u

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 2e-3)
        betas (tuple[float, float], optional): coefficients used for computing running
            averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        foreach, differentiable, capturable: PyTorch's implementation choices; tensormodes
            has one implementation (``differentiable`` and ``capturable`` set to True raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0, -1.0]))
    >>> opt = tm.optim.Adamax([w], lr=0.1)
    >>> w.grad = tm.tensor([0.5, -2.0])
    >>> opt.step()
    >>> w, opt.state[w]["exp_inf"]
    (Parameter containing:
    tensor([ 0.9000, -0.9000], requires_grad=True), tensor([0.5000, 2.0000]))
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr_eps_betas_decay(lr, eps, betas, weight_decay)
        _check_single_implementation("Adamax", foreach, capturable, differentiable, None)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"foreach": None, "maximize": False, "differentiable": False, "capturable": False})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([2.0]))
        >>> opt = tm.optim.Adamax([w], lr=0.5)
        >>> w.grad = tm.tensor([4.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([1.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop (what it runs on the CPU), operation for operation.
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay, maximize = group["lr"], group["eps"], group["weight_decay"], group["maximize"]
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            state = self.state[param]
            if not state:
                state["step"] = tm.tensor(0.0, dtype=_scalar_dtype())
                state["exp_avg"] = tm.zeros_like(param)
                state["exp_inf"] = tm.zeros_like(param)
            if maximize:
                grad = -grad
            exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
            step_t += 1
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            if tm.is_complex(grad):
                param, grad, exp_avg, exp_inf = (tm.view_as_real(t) for t in (param, grad, exp_avg, exp_inf))
            exp_avg.lerp_(grad, 1 - beta1)
            tm.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
            clr = lr / (1 - beta1 ** step_t.item())
            param.addcdiv_(exp_avg, exp_inf, value=-clr)
