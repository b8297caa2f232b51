"""``Adam``: adaptive moment estimation (with optional AMSGrad and decoupled weight decay)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .._api.tensor import Tensor
from ._array_steps import adam_step, idle
from .optimizer import Optimizer, _check_float_lr, _check_single_implementation, _scalar_dtype

__all__ = ["Adam"]


def _check_adam_arguments(name: str, lr, betas, eps, weight_decay) -> None:
    """PyTorch's argument checks for Adam and AdamW, in its order and words."""
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
    if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    if isinstance(betas[0], Tensor):
        raise NotImplementedError(f"{name}: Tensor betas are not supported by tensormodes yet; pass floats")


class Adam(Optimizer):
    r"""Implements the Adam algorithm.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * param          (or param *= 1 - lr * weight_decay if decoupled)
        m = lerp(m, g, 1 - beta1)             (first moment)
        v = beta2 * v + (1 - beta2) * g * g   (second moment)
        v_max = max(v_max, v)                 (amsgrad; used in place of v below)
        param = param - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients used for computing running
            averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        amsgrad (bool, optional): whether to use the AMSGrad variant of this algorithm
            from the paper `On the Convergence of Adam and Beyond` (default: False)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        decoupled_weight_decay (bool, optional): if True, this optimizer is equivalent to
            AdamW and the algorithm will not accumulate weight decay in the momentum nor
            variance. (default: False)
        foreach, capturable, differentiable, fused: PyTorch's implementation choices;
            tensormodes has one implementation (``capturable``, ``differentiable`` and
            ``fused`` set to True raise).

    The per-parameter state holds ``step`` (a float32 0-dim tensor, float64 under a
    float64 default dtype), ``exp_avg``, ``exp_avg_sq`` and, with amsgrad, ``max_exp_avg_sq``.

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0, -1.0]))
    >>> opt = tm.optim.Adam([w], lr=0.1)
    >>> w.grad = tm.tensor([0.5, -2.0])
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([ 0.9000, -0.9000], requires_grad=True)
    >>> sorted(opt.state[w]), opt.state[w]["step"]
    (['exp_avg', 'exp_avg_sq', 'step'], tensor(1.))
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        _check_adam_arguments(type(self).__name__, lr, betas, eps, weight_decay)
        _check_single_implementation(type(self).__name__, foreach, capturable, differentiable, fused)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                              "differentiable": False, "decoupled_weight_decay": False, "fused": None})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([2.0]))
        >>> opt = tm.optim.Adam([w], lr=0.5)
        >>> w.grad = tm.tensor([4.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([1.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop (what it runs on the CPU), operation for operation,
        # so that results agree to rounding step after step. One pass per parameter.
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        amsgrad, maximize, decoupled = group["amsgrad"], group["maximize"], group["decoupled_weight_decay"]
        state = self.state
        on_arrays = idle() and not amsgrad and not maximize  # nothing sees the ops: see _array_steps
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            param_state = state[param]
            if not param_state:
                param_state["step"] = tm.tensor(0.0, dtype=_scalar_dtype())
                param_state["exp_avg"] = tm.zeros_like(param)
                param_state["exp_avg_sq"] = tm.zeros_like(param)
                if amsgrad:
                    param_state["max_exp_avg_sq"] = tm.zeros_like(param)
            exp_avg, exp_avg_sq, step_t = param_state["exp_avg"], param_state["exp_avg_sq"], param_state["step"]
            if on_arrays and adam_step(param, grad, exp_avg, exp_avg_sq, step_t, lr, beta1, beta2, eps, weight_decay,
                                       decoupled):
                continue
            if maximize:
                grad = -grad
            step_t += 1
            if weight_decay != 0:
                if decoupled:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            max_exp_avg_sq = param_state["max_exp_avg_sq"] if amsgrad else None
            # Asked of the gradient (same dtype): a Parameter argument would leave the fast path.
            if tm.is_complex(grad):
                param, grad, exp_avg, exp_avg_sq = (tm.view_as_real(t) for t in (param, grad, exp_avg, exp_avg_sq))
                if amsgrad:
                    max_exp_avg_sq = tm.view_as_real(max_exp_avg_sq)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = step_t.item()
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2 ** 0.5
            if amsgrad:
                tm.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
                denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-step_size)

