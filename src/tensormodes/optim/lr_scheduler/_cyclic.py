"""``CyclicLR``: the learning rate (and momentum) cycling between two bounds."""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial
from typing import Any

from ..optimizer import Optimizer
from ._base import LRScheduler, _check_optimizer, _format_param, _warn_get_lr_called_within_step


class CyclicLR(LRScheduler):
    """Sets the learning rate of each parameter group according to the cyclical learning
    rate policy: it goes from ``base_lr`` up to ``max_lr`` in ``step_size_up`` steps and
    back down in ``step_size_down``, the amplitude scaled per cycle (``triangular``: 1,
    ``triangular2``: halved each cycle) or per iteration (``exp_range``: ``gamma**iteration``),
    or by ``scale_fn``. With ``cycle_momentum``, momentum (or Adam's beta1) cycles inversely
    between ``max_momentum`` and ``base_momentum``. Step it after every batch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        base_lr (float or list): initial learning rate which is the lower boundary in the
            cycle for each parameter group.
        max_lr (float or list): upper learning rate boundaries in the cycle for each
            parameter group.
        step_size_up (int): number of training iterations in the increasing half of a
            cycle. Default: 2000
        step_size_down (int): number of training iterations in the decreasing half of a
            cycle. If step_size_down is None, it is set to step_size_up. Default: None
        mode (str): one of {triangular, triangular2, exp_range}. Default: 'triangular'
        gamma (float): constant in 'exp_range' scaling function: gamma**(cycle iterations).
            Default: 1.0
        scale_fn (function): custom scaling policy defined by a single argument lambda
            function, where 0 <= scale_fn(x) <= 1 for all x >= 0. If specified, then
            'mode' is ignored. Default: None
        scale_mode (str): {'cycle', 'iterations'}. Defines whether scale_fn is evaluated on
            cycle number or cycle iterations. Default: 'cycle'
        cycle_momentum (bool): if ``True``, momentum is cycled inversely to learning rate
            between 'base_momentum' and 'max_momentum'. Default: True
        base_momentum (float or list): lower momentum boundaries in the cycle for each
            parameter group. Default: 0.8
        max_momentum (float or list): upper momentum boundaries in the cycle for each
            parameter group. Default: 0.9
        last_epoch (int): the index of the last batch. Default: -1

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1, momentum=0.9)
    >>> scheduler = tm.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(5):
    ...     opt.step(); scheduler.step(); lrs.append(round(scheduler.get_last_lr()[0], 6))
    >>> lrs, round(opt.param_groups[0]["momentum"], 6)
    ([0.1, 0.3, 0.5, 0.3, 0.1, 0.3], 0.85)
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float], max_lr: float | list[float],
                 step_size_up: int = 2000, step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float = 0.8, max_momentum: float = 0.9,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in self.optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(self.max_momentums, self.base_momentums,
                                                         optimizer.param_groups, strict=True):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``: ``scale_fn``'s if one was
        given, else the mode's.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> S = tm.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="triangular2", cycle_momentum=False)
        >>> S.scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma ** x

    def get_lr(self) -> list[float]:
        """The lrs at the current iteration of the cycle (and, with ``cycle_momentum``, sets
        the groups' momentum or beta1).

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> S = tm.optim.lr_scheduler.CyclicLR(opt, 0.0, 1.0, step_size_up=4, cycle_momentum=False)
        >>> opt.step(); S.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = S.get_lr()
        >>> lrs, len(caught)
        ([0.25], 1)
        """
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            momentums = [max_momentum - (max_momentum - base_momentum) * scale_factor * self.scale_fn(at)
                         for base_momentum, max_momentum in zip(self.base_momentums, self.max_momentums, strict=True)]
            for group, momentum in zip(self.optimizer.param_groups, momentums, strict=True):
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The state; ``scale_fn`` is saved only if it is a callable object (its ``__dict__``).

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> S = tm.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, scale_fn=lambda x: 1.0, cycle_momentum=False)
        >>> S.state_dict()["_scale_fn_custom"] is None
        True
        """
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the state, updating a callable-object ``scale_fn`` from its saved ``__dict__``.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> S = tm.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="exp_range", gamma=0.5, cycle_momentum=False)
        >>> S.load_state_dict({**S.state_dict(), "last_epoch": 3}); S.last_epoch, S.scale_fn(2)
        (3, 0.25)
        """
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()
