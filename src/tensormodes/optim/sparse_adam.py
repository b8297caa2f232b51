"""``SparseAdam``: PyTorch's lazy Adam for sparse gradients.

tensormodes has no sparse tensors, so every gradient is dense and ``step`` raises what
PyTorch raises for a dense gradient. The class exists so that code naming it constructs
and validates as in PyTorch, and fails at the first step with PyTorch's message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .optimizer import Optimizer, _check_float_lr

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam implements a masked version of the Adam algorithm suitable for sparse
    gradients (PyTorch's). tensormodes has no sparse gradients: ``step`` raises
    ``RuntimeError`` for the first parameter that has a (dense) gradient, as PyTorch does.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients used for computing running
            averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical
            stability (default: 1e-8)
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.ones(2))
    >>> opt = tm.optim.SparseAdam([w])
    >>> w.grad = tm.ones(2)
    >>> opt.step()
    Traceback (most recent call last):
      ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        _check_float_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_params = [[index, d_index] for index, group in enumerate(self.param_groups)
                          for d_index, param in enumerate(group["params"]) if param.is_complex()]
        # (PyTorch first rejects sparse parameters; tensormodes has none.)
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Run ``closure`` (with grad mode on), then raise for the first parameter with a
        gradient: every gradient is dense here. With no gradient at all, nothing happens.

        >>> import tensormodes as tm
        >>> tm.optim.SparseAdam([tm.nn.Parameter(tm.ones(1))]).step() is None
        True
        """
        loss = None
        if closure is not None:
            with tm.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
