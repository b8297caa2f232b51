"""Schedulers that anneal the learning rate between bounds: ``CosineAnnealingLR``,
``CosineAnnealingWarmRestarts`` and ``OneCycleLR`` (which cycles the momentum too).
"""

from __future__ import annotations

import math

from ..optimizer import Optimizer
from ._base import LRScheduler, _check_optimizer, _format_param, _group_values, _warn_get_lr_called_within_step


class CosineAnnealingLR(LRScheduler):
    r"""Sets the learning rate of each parameter group using a cosine annealing schedule,
    updated recursively as PyTorch does::

        lr_{t+1} = eta_min + (lr_t - eta_min) * (1 + cos((t + 1) pi / T_max)) / (1 + cos(t pi / T_max))

    which approximates ``eta_min + (base_lr - eta_min) * (1 + cos(t pi / T_max)) / 2``
    (the closed form ``step(epoch)`` uses). There are no restarts.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        T_max (int): maximum number of iterations.
        eta_min (float): minimum learning rate. Default: 0.
        last_epoch (int): the index of the last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> lrs = []
    >>> for _ in range(2):
    ...     opt.step(); scheduler.step(); lrs.append(round(scheduler.get_last_lr()[0], 6))
    >>> lrs
    [0.5, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The next lrs along the cosine (PyTorch's recursive form).

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.25], 1)
        """
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups, strict=True)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class OneCycleLR(LRScheduler):
    """Sets the learning rate of each parameter group according to the 1cycle policy: from
    ``max_lr / div_factor`` up to ``max_lr`` over ``pct_start`` of the cycle, then down to
    ``initial_lr / final_div_factor``; momentum (or Adam's beta1) cycles inversely between
    ``max_momentum`` and ``base_momentum``. Step it after every batch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        max_lr (float or list): upper learning rate boundaries in the cycle for each
            parameter group.
        total_steps (int): the total number of steps in the cycle (or give ``epochs`` and
            ``steps_per_epoch``).
        epochs (int): the number of epochs to train for. Default: None
        steps_per_epoch (int): the number of steps per epoch to train for. Default: None
        pct_start (float): the percentage of the cycle spent increasing the learning rate.
            Default: 0.3
        anneal_strategy (str): {'cos', 'linear'}. Default: 'cos'
        cycle_momentum (bool): if ``True``, momentum is cycled inversely to learning rate.
            Default: True
        base_momentum (float or list): lower momentum boundaries. Default: 0.85
        max_momentum (float or list): upper momentum boundaries. Default: 0.95
        div_factor (float): initial_lr = max_lr/div_factor. Default: 25
        final_div_factor (float): min_lr = initial_lr/final_div_factor. Default: 1e4
        three_phase (bool): if ``True``, use a third phase of the schedule to annihilate
            the learning rate according to 'final_div_factor'.
        last_epoch (int): the index of the last batch. Default: -1

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1, momentum=0.9)
    >>> scheduler = tm.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4, anneal_strategy="linear")
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); scheduler.step(); lrs.append(round(scheduler.get_last_lr()[0], 6))
    >>> lrs
    [0.04, 0.714287, 0.357145, 4e-06]
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85, max_momentum: float | list[float] = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        rise_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                {"end_step": rise_end, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": float(2 * pct_start * self.total_steps) - 2, "start_lr": "max_lr",
                 "end_lr": "initial_lr", "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"},
            ]
        else:
            self._schedule_phases = [
                {"end_step": rise_end, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for index, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[index] / div_factor
                group["max_lr"] = max_lrs[index]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            if "momentum" not in self.optimizer.defaults and "betas" not in self.optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in self.optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups,
                                                         strict=True):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        """The lrs at the current step of the cycle (and, with ``cycle_momentum``, sets the
        groups' momentum or beta1).

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3, cycle_momentum=False)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.46263710266697505], 1)
        """
        _warn_get_lr_called_within_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        last_phase = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last_phase:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Sets the learning rate of each parameter group using a cosine annealing schedule
    with warm restarts::

        lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

    where ``T_cur`` counts the epochs since the last restart and ``T_i`` (first ``T_0``,
    then multiplied by ``T_mult`` at each restart) is the length of the current cycle.
    ``step(epoch)`` accepts a fractional epoch (to step within an epoch, per batch).

    Args:
        optimizer (Optimizer): wrapped optimizer.
        T_0 (int): number of iterations until the first restart.
        T_mult (int, optional): a factor by which ``T_i`` increases after a restart.
            Default: 1.
        eta_min (float, optional): minimum learning rate. Default: 0.
        last_epoch (int, optional): the index of the last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(6):
    ...     opt.step(); scheduler.step(); lrs.append(round(scheduler.get_last_lr()[0], 4))
    >>> lrs
    [1.0, 0.5, 1.0, 0.8536, 0.5, 0.1464, 1.0]
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The lrs at ``T_cur`` epochs into the current cycle.

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.5], 1)
        """
        _warn_get_lr_called_within_step(self)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance by one epoch, or go to ``epoch`` (which may be fractional, and does not
        warn here: it is this scheduler's way of stepping per batch).

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4)
        >>> opt.step(); scheduler.step(2.0); scheduler.get_last_lr(), scheduler.last_epoch
        ([0.5], 2)
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = _group_values(self.optimizer, "lr")
