"""``Adagrad``: scales each coordinate's step by its accumulated squared gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .optimizer import Optimizer, _check_float_lr, _check_single_implementation, _scalar_dtype

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * param                  (if weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        sum = sum + g * g
        param = param - clr * g / (sqrt(sum) + eps)

    The state (``step`` and ``sum``, filled with ``initial_accumulator_value``) is created
    for every parameter when the optimizer is.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-2)
        lr_decay (float, optional): learning rate decay (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of the sum of squares of
            gradients (default: 0)
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-10)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        foreach, differentiable, fused: PyTorch's implementation choices; tensormodes has
            one implementation (``differentiable=True`` and ``fused=True`` raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0]))
    >>> opt = tm.optim.Adagrad([w], lr=0.5, initial_accumulator_value=5.0)
    >>> w.grad = tm.tensor([2.0])
    >>> opt.step()
    >>> w, opt.state[w]["sum"]
    (Parameter containing:
    tensor([0.6667], requires_grad=True), tensor([9.]))
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_single_implementation("Adagrad", foreach, False, differentiable, fused)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, param) -> None:
        value = self.defaults["initial_accumulator_value"]
        param_state = self.state[param]
        param_state["step"] = tm.tensor(0.0, dtype=_scalar_dtype())
        param_state["sum"] = tm.full_like(param, complex(value, value) if tm.is_complex(param) else value)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"foreach": None, "maximize": False, "differentiable": False, "fused": None})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([1.0]))
        >>> opt = tm.optim.Adagrad([w], lr=0.1)
        >>> w.grad = tm.tensor([4.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop, operation for operation, so results agree to rounding.
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        weight_decay, maximize = group["weight_decay"], group["maximize"]
        state = self.state
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            param_state = state[param]
            if not param_state:  # a parameter added by add_param_group after construction
                self._init_state(param)
            state_sum, step_t = param_state["sum"], param_state["step"]
            step_t += 1
            step = step_t.item()
            if maximize:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            clr = lr / (1 + (step - 1) * lr_decay)
            # Asked of the gradient (same dtype): a Parameter argument would leave the fast path.
            if tm.is_complex(grad):
                param, grad, state_sum = tm.view_as_real(param), tm.view_as_real(grad), tm.view_as_real(state_sum)
            state_sum.addcmul_(grad, grad, value=1)
            std = state_sum.sqrt().add_(eps)
            param.addcdiv_(grad, std, value=-clr)
