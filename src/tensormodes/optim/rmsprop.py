"""``RMSprop``: divides the gradient by a running root mean square of recent gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .optimizer import Optimizer, _check_float_lr, _check_single_implementation, _scalar_dtype

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""Implements the RMSprop algorithm.

    For each parameter with a gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * param                  (if weight_decay != 0)
        v = alpha * v + (1 - alpha) * g * g           (square_avg)
        avg = sqrt(v - g_avg * g_avg) + eps   with g_avg = lerp(g_avg, g, 1 - alpha) if centered,
        avg = sqrt(v) + eps                   otherwise
        buf = momentum * buf + g / avg;  param = param - lr * buf    (if momentum > 0)
        param = param - lr * g / avg                                 (otherwise)

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-2)
        alpha (float, optional): smoothing constant (default: 0.99)
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum (float, optional): momentum factor (default: 0)
        centered (bool, optional): if ``True``, compute the centered RMSProp, the gradient
            is normalized by an estimation of its variance (default: False)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        capturable, foreach, differentiable: PyTorch's implementation choices; tensormodes
            has one implementation (``capturable`` and ``differentiable`` set to True raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0]))
    >>> opt = tm.optim.RMSprop([w], lr=0.01, alpha=0.75)
    >>> w.grad = tm.tensor([2.0])
    >>> opt.step()
    >>> w, opt.state[w]["square_avg"]
    (Parameter containing:
    tensor([0.9800], requires_grad=True), tensor([1.]))
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _check_single_implementation("RMSprop", foreach, capturable, differentiable, None)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                              "differentiable": False, "capturable": False})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([1.0]))
        >>> opt = tm.optim.RMSprop([w], lr=0.1, alpha=0.0)
        >>> w.grad = tm.tensor([-3.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([1.1000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop, operation for operation, so results agree to rounding.
        lr, alpha, eps, weight_decay = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
        momentum, centered, maximize = group["momentum"], group["centered"], group["maximize"]
        state = self.state
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            param_state = state[param]
            if not param_state:
                param_state["step"] = tm.zeros((), dtype=_scalar_dtype())
                param_state["square_avg"] = tm.zeros_like(param)
                if momentum > 0:
                    param_state["momentum_buffer"] = tm.zeros_like(param)
                if centered:
                    param_state["grad_avg"] = tm.zeros_like(param)
            if maximize:
                grad = -grad
            square_avg = param_state["square_avg"]
            param_state["step"] += 1
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            # Asked of the gradient (same dtype): a Parameter argument would leave the fast path.
            is_complex = tm.is_complex(grad)
            if is_complex:
                param, grad, square_avg = tm.view_as_real(param), tm.view_as_real(grad), tm.view_as_real(square_avg)
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if centered:
                grad_avg = param_state["grad_avg"]
                if is_complex:
                    grad_avg = tm.view_as_real(grad_avg)
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add_(eps)
            if momentum > 0:
                buf = param_state["momentum_buffer"]
                if is_complex:
                    buf = tm.view_as_real(buf)
                buf.mul_(momentum).addcdiv_(grad, avg)
                param.add_(buf, alpha=-lr)
            else:
                param.addcdiv_(grad, avg, value=-lr)
