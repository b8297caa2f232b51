"""``ASGD``: averaged stochastic gradient descent — SGD with a decaying rate ``eta`` and a
running average ``ax`` of the parameters (kept in the state, where the averaged model is read)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .._memory_format import preserve_format
from .optimizer import Optimizer, _check_float_lr, _check_single_implementation, _scalar_dtype

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Implements averaged stochastic gradient descent.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * param                           (if weight_decay != 0)
        param = param * (1 - lambd * eta) - eta * g
        ax = ax + mu * (param - ax)          (ax = param while mu is 1)
        eta = lr / (1 + lambd * lr * t) ** alpha;   mu = 1 / max(1, t - t0)

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of dicts
            defining parameter groups.
        lr (float, optional): learning rate (default: 1e-2)
        lambd (float, optional): decay term (default: 1e-4)
        alpha (float, optional): power for the eta update (default: 0.75)
        t0 (float, optional): the step at which averaging starts (default: 1e6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, differentiable, capturable: PyTorch's implementation choices; tensormodes has one
            implementation (``capturable`` and ``differentiable`` set to True raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0]))
    >>> opt = tm.optim.ASGD([w], lr=0.1, t0=0)
    >>> w.grad = tm.tensor([2.0])
    >>> opt.step(); w, opt.state[w]["ax"]
    (Parameter containing:
    tensor([0.8000], requires_grad=True), tensor([0.8000]))
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_single_implementation("ASGD", foreach, capturable, differentiable, None)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"foreach": None, "maximize": False, "differentiable": False, "capturable": False})
        for group in self.param_groups:  # (older pickles hold numbers)
            for p in group["params"]:
                p_state = self.state.get(p)
                for key in ("eta", "mu"):
                    if p_state and not isinstance(p_state[key], tm.Tensor):
                        p_state[key] = tm.tensor(p_state[key], dtype=_scalar_dtype())

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns
        the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([1.0]))
        >>> opt = tm.optim.ASGD([w], lr=0.5, lambd=0.0)
        >>> w.grad = tm.tensor([-2.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([2.], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop, operation for operation (its rates are Python floats)
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        weight_decay, maximize = group["weight_decay"], group["maximize"]
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            state = self.state[param]
            if not state:
                state["step"] = tm.zeros((), dtype=_scalar_dtype())
                state["eta"] = tm.as_tensor(lr, dtype=_scalar_dtype()).clone().detach()
                state["mu"] = tm.ones((), dtype=_scalar_dtype())
                state["ax"] = tm.zeros_like(param, memory_format=preserve_format)
            grad = -grad if maximize else grad
            mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
            if tm.is_complex(param):
                grad, param, ax = tm.view_as_real(grad), tm.view_as_real(param), tm.view_as_real(ax)
            step_t += 1
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            eta_value = eta.item()
            param.mul_(1 - lambd * eta_value)
            param.add_(grad, alpha=-eta_value)
            if mu.item() != 1:
                ax.add_(param.sub(ax).mul_(mu))
            else:
                ax.copy_(param)
            step = step_t.item()
            eta.copy_(tm.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(tm.as_tensor(1 / max(1, step - t0)))
