"""``Adafactor``: Adam-like steps whose second-moment estimate of a matrix is kept factored, as a
row vector and a column vector, so its memory grows with rows + columns rather than their product."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .._memory_format import preserve_format
from .optimizer import Optimizer, _check_float_lr, _scalar_dtype

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    r"""Implements the Adafactor algorithm (PyTorch's version: no first moment).

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        beta2_t = t ** beta2_decay;   rho = min(lr, 1 / sqrt(t))
        alpha = max(eps2, ||param|| / sqrt(numel)) * rho
        param = param * (1 - lr * weight_decay)
        matrices: row_var, col_var = lerp towards the mean squares of g's rows and columns;
                  v = row_var @ col_var / clamp(mean(row_var), eps1)
        vectors:  v = lerp(v, g * g, beta2_t)
        update = g / sqrt(clamp(v, eps1 ** 2));   param -= alpha / max(1, rms(update) / d) * update

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of dicts
            defining parameter groups.
        lr (float, optional): the largest relative step (default: 1e-2)
        beta2_decay (float, optional): the decay rate of the second moment's average (default: -0.8)
        eps (Tuple[float | None, float], optional): ``eps1`` added to the second moment (None: the
            parameter dtype's ``eps``) and ``eps2``, the smallest relative step (default: (None, 1e-3))
        d (float, optional): the clipping threshold of the update's root mean square (default: 1.0)
        weight_decay (float, optional): decoupled weight decay (default: 0.0)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach: accepted; tensormodes has one implementation (PyTorch's per-tensor loop).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.ones(2, 2))
    >>> opt = tm.optim.Adafactor([w], lr=0.1)
    >>> w.grad = tm.tensor([[1.0, -1.0], [2.0, 0.5]])
    >>> opt.step(); sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"foreach": None})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns
        the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([1.0, 1.0]))
        >>> opt = tm.optim.Adafactor([w], lr=0.5)
        >>> w.grad = tm.tensor([2.0, -2.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([0.5000, 1.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop, operation for operation (its scalars are Python floats;
        # an eps1 of None becomes the first parameter's dtype eps for the rest of the group, as there)
        lr, beta2_decay, d, weight_decay = group["lr"], group["beta2_decay"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            if tm.is_complex(param):
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self.state[param]
            if not state:
                state["step"] = tm.tensor(0.0, dtype=_scalar_dtype())
                if grad.dim() > 1:
                    state["row_var"] = grad.new_zeros([*grad.shape[:-1], 1])
                    state["col_var"] = grad.new_zeros([*grad.shape[:-2], 1, grad.shape[-1]])
                else:
                    state["variance"] = tm.zeros_like(grad, memory_format=preserve_format)
            grad = -grad if group["maximize"] else grad
            if eps1 is None:
                eps1 = tm.finfo(param.dtype).eps
            step_t = state["step"]
            step_t += 1
            step = step_t.item()
            one_minus_beta2_t = step ** beta2_decay
            rho_t = min(lr, 1 / (step ** 0.5))
            alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
            if weight_decay != 0:
                param.mul_(1 - lr * weight_decay)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_mean = tm.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
                row_var.lerp_(row_mean, one_minus_beta2_t)
                col_mean = tm.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
                col_var.lerp_(col_mean, one_minus_beta2_t)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                variance = state["variance"]
                variance.lerp_(grad * grad, one_minus_beta2_t)
                var_estimate = variance.clone()
            update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
            update.mul_(grad)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            param.add_(update, alpha=-alpha / denom)
