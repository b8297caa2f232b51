"""``Muon``: momentum SGD for 2-D parameters whose update is orthogonalized — the momentum matrix
replaced by the nearest semi-orthogonal matrix, estimated by a Newton-Schulz iteration in bfloat16."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .._memory_format import preserve_format
from .optimizer import Optimizer, _check_float_lr

__all__ = ["Muon"]

# PyTorch's defaults: the quintic iteration's coefficients, its steps, the norm's floor
_NS_COEFFICIENTS = (3.4445, -4.775, 2.0315)
_NS_STEPS = 5
_EPS = 1e-7


def _zeropower_via_newtonschulz(grad, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float):
    """The orthogonalized ``grad`` (a matrix): ``ns_steps`` quintic Newton-Schulz steps in bfloat16,
    on the wide orientation, after scaling to a norm of at most 1."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    ortho = grad.bfloat16()
    if tall:
        ortho = ortho.T
    ortho.div_(ortho.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = ortho @ ortho.T
        gram_update = tm.addmm(gram, gram, gram, beta=b, alpha=c)
        ortho = tm.addmm(ortho, gram_update, ortho, beta=a)
    return ortho.T if tall else ortho


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    rows, columns = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / columns))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, columns))
    return lr


class Muon(Optimizer):
    r"""Implements Muon (for 2-D parameters; PyTorch 2.13's).

    For each parameter with a gradient ``g``::

        buf = lerp(buf, g, 1 - momentum)
        u = lerp(g, buf, momentum) if nesterov else buf
        u = newton_schulz(u)            (bfloat16; ns_steps steps with ns_coefficients)
        param = param * (1 - lr * weight_decay) - adjusted_lr * u

    ``adjusted_lr`` is ``lr * sqrt(max(1, rows / columns))`` (``adjust_lr_fn`` None or
    ``"original"``) or ``lr * 0.2 * sqrt(max(rows, columns))`` (``"match_rms_adamw"``).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.zeros(2, 2))
    >>> opt = tm.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> w.grad = tm.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> opt.step(); [round(v, 2) for v in w.flatten().tolist()]
    [-0.11, 0.0, 0.0, -0.11]
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = _NS_COEFFICIENTS,
                 eps: float = _EPS, ns_steps: int = _NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns
        the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.zeros(1, 2))
        >>> opt = tm.optim.Muon([w], lr=1.0, weight_decay=0.0, nesterov=False, momentum=0.0)
        >>> w.grad = tm.tensor([[3.0, 4.0]])
        >>> opt.step(); w
        Parameter containing:
        tensor([[-0.4102, -0.5469]], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop, operation for operation
        lr, weight_decay, momentum = group["lr"], group["weight_decay"], group["momentum"]
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            if tm.is_complex(param):
                raise RuntimeError("Muon does not support complex parameters")
            state = self.state[param]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = tm.zeros_like(grad, memory_format=preserve_format)
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = state["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            param.mul_(1 - lr * weight_decay)
            param.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], param.shape))
