"""``RAdam``: Adam with a rectified (variance-corrected) adaptive learning rate."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .nadam import _check_lr_eps_betas_decay
from .optimizer import Optimizer, _check_single_implementation, _scalar_dtype

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""Implements the RAdam algorithm.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * param          (or param *= 1 - lr * weight_decay if decoupled)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        if rho_t > 5:
            r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
            param -= m / (1 - beta1**t) * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r
        else:
            param -= m / (1 - beta1**t) * lr

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients used for computing running
            averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        decoupled_weight_decay (bool, optional): whether to decouple the weight decay as
            in AdamW to obtain RAdamW (default: False)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        foreach, capturable, differentiable: PyTorch's implementation choices; tensormodes
            has one implementation (``capturable`` and ``differentiable`` set to True raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0, -1.0]))
    >>> opt = tm.optim.RAdam([w], lr=0.1)
    >>> w.grad = tm.tensor([0.5, -2.0])
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.9500, -0.8000], requires_grad=True)
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr_eps_betas_decay(lr, eps, betas, weight_decay)
        _check_single_implementation("RAdam", foreach, capturable, differentiable, None)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"foreach": None, "maximize": False, "differentiable": False,
                              "decoupled_weight_decay": False, "capturable": False})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([2.0]))
        >>> opt = tm.optim.RAdam([w], lr=0.5)
        >>> w.grad = tm.tensor([4.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([0.], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop (what it runs on the CPU), operation for operation.
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            state = self.state[param]
            if not state:
                state["step"] = tm.tensor(0.0, dtype=_scalar_dtype())
                state["exp_avg"] = tm.zeros_like(param)
                state["exp_avg_sq"] = tm.zeros_like(param)
            if maximize:
                grad = -grad
            exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
            if tm.is_complex(grad):
                param, grad, exp_avg, exp_avg_sq = (tm.view_as_real(t) for t in (param, grad, exp_avg, exp_avg_sq))
            step_t += 1
            step = step_t.item()
            if weight_decay != 0:
                if decoupled:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            bias_corrected_exp_avg = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
            else:
                param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
