"""``SGD``: stochastic gradient descent, optionally with momentum (PyTorch's formulation)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer, _check_float_lr, _check_single_implementation

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum).

    For each parameter with a gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * param                   (if weight_decay != 0)
        buf = g  on the first step, else  momentum * buf + (1 - dampening) * g
        g = g + momentum * buf  if nesterov, else  buf  (if momentum != 0)
        param = param - lr * g

    As in PyTorch, the momentum buffer starts as the first gradient (not zeros), so
    dampening applies from the second step on.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3)
        momentum (float, optional): momentum factor (default: 0)
        dampening (float, optional): dampening for momentum (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        nesterov (bool, optional): enables Nesterov momentum. Only applicable when momentum
            is non-zero. (default: False)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
        foreach, differentiable, fused: PyTorch's implementation choices; tensormodes has
            one implementation (``differentiable=True`` and ``fused=True`` raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0, 2.0]))
    >>> opt = tm.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    Parameter containing:
    tensor([0.4600, 0.9200], requires_grad=True)
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_float_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_single_implementation("SGD", foreach, False, differentiable, fused)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
                              "fused": False}, step_as_tensor=False)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and
        returns the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([3.0]))
        >>> opt = tm.optim.SGD([w], lr=0.25)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure), w
        (tensor(9., grad_fn=<SumBackward0>), Parameter containing:
        tensor([1.5000], requires_grad=True))
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop, operation for operation, so results agree to rounding.
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        state = self.state
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            if maximize:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            if momentum != 0:
                param_state = state[param]
                buf = param_state.get("momentum_buffer")
                if buf is None:
                    buf = param_state["momentum_buffer"] = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if nesterov else buf
            param.add_(grad, alpha=-lr)
