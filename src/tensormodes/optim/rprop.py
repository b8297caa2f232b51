"""``Rprop``: resilient backpropagation — each element's step size grows while its gradient keeps
its sign and shrinks when it flips; only the gradient's sign moves the parameter."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .._memory_format import preserve_format
from .optimizer import Optimizer, _check_float_lr, _check_single_implementation, _scalar_dtype

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Implements the resilient backpropagation algorithm.

    For each parameter with a gradient ``g`` (negated when ``maximize``) and the previous step's
    gradient ``prev``::

        f = etaplus where g * prev > 0, etaminus where < 0, 1 where 0
        step_size = clamp(step_size * f, *step_sizes)       (starting at lr)
        g = 0 where f == etaminus                            (no move after a sign flip)
        param = param - sign(g) * step_size;   prev = g

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or of dicts
            defining parameter groups.
        lr (float, optional): learning rate, the first step size (default: 1e-2)
        etas (Tuple[float, float], optional): ``(etaminus, etaplus)``, the factors that shrink
            and grow a step size (default: (0.5, 1.2))
        step_sizes (Tuple[float, float], optional): the smallest and largest step sizes
            (default: (1e-6, 50))
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        capturable, foreach, differentiable: PyTorch's implementation choices; tensormodes has
            one implementation (``capturable`` and ``differentiable`` set to True raise).

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.0, 1.0]))
    >>> opt = tm.optim.Rprop([w], lr=0.1)
    >>> for g in ([1.0, 1.0], [1.0, -1.0]):
    ...     w.grad = tm.tensor(g)
    ...     opt.step()
    >>> w
    Parameter containing:
    tensor([0.7800, 0.9000], requires_grad=True)
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _check_single_implementation("Rprop", foreach, capturable, differentiable, None)
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_groups({"foreach": None, "maximize": False, "differentiable": False, "capturable": False})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns
        the loss (it runs with grad mode on).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([1.0]))
        >>> opt = tm.optim.Rprop([w], lr=0.5)
        >>> w.grad = tm.tensor([-3.0])
        >>> opt.step(); w
        Parameter containing:
        tensor([1.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any]) -> None:
        # PyTorch's single-tensor loop, operation for operation
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        lr, maximize = group["lr"], group["maximize"]
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            state = self.state[param]
            if not state:
                state["step"] = tm.zeros((), dtype=_scalar_dtype())
                state["prev"] = tm.zeros_like(param, memory_format=preserve_format)
                # a complex number's parts are two independent reals: both start at lr
                state["step_size"] = tm.full_like(grad, complex(lr, lr) if param.dtype.is_complex else lr)
            grad = -grad if maximize else grad
            prev, step_size = state["prev"], state["step_size"]
            state["step"] += 1
            if tm.is_complex(param):
                grad, prev = tm.view_as_real(grad), tm.view_as_real(prev)
                param, step_size = tm.view_as_real(param), tm.view_as_real(step_size)
            sign = grad.mul(prev).sign()
            sign[sign.gt(0)] = etaplus
            sign[sign.lt(0)] = etaminus
            sign[sign.eq(0)] = 1
            step_size.mul_(sign).clamp_(step_size_min, step_size_max)
            grad = grad.clone(memory_format=preserve_format)
            grad[sign.eq(etaminus)] = 0
            param.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)
