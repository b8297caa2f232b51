"""``NAdam``: Adam with Nesterov momentum (and an optional momentum-decay schedule)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .optimizer import Optimizer, _check_float_lr, _check_single_implementation, _scalar_dtype

__all__ = ["NAdam"]


def _check_lr_eps_betas_decay(lr, eps, betas, weight_decay) -> None:
    """The checks NAdam, RAdam and Adamax share, in PyTorch's order and words."""
    _check_float_lr(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class NAdam(Optimizer):
    r"""Implements the NAdam algorithm.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * param          (or param *= 1 - lr * weight_decay if decoupled)
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_product = mu_product * mu_t        (a float32 tensor, as PyTorch keeps it)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        param -= lr * (1 - mu_t) / (1 - mu_product) * g / denom
        param -= lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 2e-3)
        betas (tuple[float, float], optional): coefficients used for computing running
            averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum_decay (float, optional): momentum momentum_decay (default: 4e-3)
        decoupled_weight_decay (bool, optional): whether to decouple the weight decay as
            in AdamW to obtain NAdamW (default: False)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        foreach, capturable, differentiable: PyTorch's implementation choices; tensormodes
            has one implementation (``capturable`` and ``differentiable`` set to True raise).

    The per-parameter state holds ``step`` and ``mu_product`` (0-dim float32 tensors,
    float64 under a float64 default dtype), ``exp_avg`` and ``exp_avg_sq``.

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0, -1.0]))
    >>> opt = tm.optim.NAdam([w], lr=0.1)
    >>> w.grad = tm.tensor([0.5, -2.0])
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.8944, -0.8944], requires_grad=True)
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_lr_eps_betas_decay(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _check_single_implementation("NAdam", foreach, capturable, differentiable, None)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                              "decoupled_weight_decay": False})
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and not isinstance(p_state["mu_product"], tm.Tensor):
                    p_state["mu_product"] = tm.tensor(p_state["mu_product"], dtype=_scalar_dtype())

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([2.0]))
        >>> opt = tm.optim.NAdam([w], lr=0.5)
        >>> w.grad = tm.tensor([4.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([1.4718], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop (what it runs on the CPU), operation for operation.
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        momentum_decay, maximize = group["momentum_decay"], group["maximize"]
        decoupled = group["decoupled_weight_decay"]
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            state = self.state[param]
            if not state:
                state["step"] = tm.tensor(0.0, dtype=_scalar_dtype())
                state["mu_product"] = tm.tensor(1.0, dtype=_scalar_dtype())
                state["exp_avg"] = tm.zeros_like(param)
                state["exp_avg_sq"] = tm.zeros_like(param)
            if maximize:
                grad = -grad
            exp_avg, exp_avg_sq, mu_product, step_t = (state["exp_avg"], state["exp_avg_sq"], state["mu_product"],
                                                       state["step"])
            if tm.is_complex(grad):
                param, grad, exp_avg, exp_avg_sq = (tm.view_as_real(t) for t in (param, grad, exp_avg, exp_avg_sq))
            step_t += 1
            step = step_t.item()
            bias_correction2 = 1 - beta2 ** step
            if weight_decay != 0:
                if decoupled:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            # Read twice, as PyTorch does (a mode sees both ``item`` calls).
            mu_product_next = mu_product.item() * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product.item()))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
