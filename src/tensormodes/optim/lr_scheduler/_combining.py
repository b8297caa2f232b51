"""Schedulers made of schedulers: ``SequentialLR`` (taking turns, each from its milestone on) and
``ChainedScheduler`` (all stepped together, their effects composed)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ..optimizer import Optimizer
from ._base import LRScheduler
from ._plateau import ReduceLROnPlateau


class SequentialLR(LRScheduler):
    """Runs a list of schedulers one after the other, switching at the ``milestones``
    epochs.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        schedulers (list): list of chained schedulers.
        milestones (list): list of integers that reflects milestone points.
        last_epoch (int): the index of last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> warmup = tm.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = tm.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> scheduler = tm.optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for index, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {index} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                    f"specified when calling `step`, but got one at index {index} in the given schedulers sequence.")
            if optimizer != scheduler.optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                    f"{scheduler.__class__.__name__} at index {index} has {scheduler.optimizer}, which is different "
                    f"from {optimizer.__class__.__name__}.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                f"milestone points, but got number of schedulers {len(schedulers)} and the number of milestones to "
                f"be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()  # the schedulers' constructors already stepped once each
        index = bisect_right(self._milestones, 0)
        self._schedulers[index]._initial_step()
        self._last_lr = schedulers[index].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Undo the step each wrapped scheduler's constructor took (recursively into nested
        sequences); the constructor calls it.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> S = tm.optim.lr_scheduler
        >>> phases = [S.ConstantLR(opt, factor=0.5, total_iters=5), S.ExponentialLR(opt, gamma=0.5)]
        >>> scheduler = S.SequentialLR(opt, phases, milestones=[1])
        >>> scheduler.recursive_undo(); [s.last_epoch for s in scheduler._schedulers]
        [-1, -2]
        """
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        """Step the scheduler of the current phase (a new phase starts from its epoch 0).

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> S = tm.optim.lr_scheduler
        >>> phases = [S.ConstantLR(opt, factor=0.5, total_iters=5), S.ExponentialLR(opt, gamma=0.5)]
        >>> scheduler = S.SequentialLR(opt, phases, milestones=[1])
        >>> opt.step(); scheduler.step(); scheduler.get_last_lr()
        [1.0]
        >>> opt.step(); scheduler.step(); scheduler.get_last_lr()
        [0.5]
        """
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The state, with each wrapped scheduler's ``state_dict`` under ``_schedulers``.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> S = tm.optim.lr_scheduler
        >>> phases = [S.ConstantLR(opt, factor=0.5, total_iters=5), S.ExponentialLR(opt, gamma=0.5)]
        >>> scheduler = S.SequentialLR(opt, phases, milestones=[1])
        >>> [s["last_epoch"] for s in scheduler.state_dict()["_schedulers"]]
        [0, -1]
        """
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the state, and each wrapped scheduler's.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> S = tm.optim.lr_scheduler
        >>> phases = [S.ConstantLR(opt, factor=0.5, total_iters=5), S.ExponentialLR(opt, gamma=0.5)]
        >>> scheduler = S.SequentialLR(opt, phases, milestones=[1])
        >>> saved = scheduler.state_dict()
        >>> saved["_schedulers"][1]["gamma"] = 0.25
        >>> scheduler.load_state_dict(saved); scheduler._schedulers[1].gamma
        0.25
        """
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers  # leave the caller's dict as it was
        for scheduler, saved in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(saved)


class ChainedScheduler(LRScheduler):
    """Chains a list of learning rate schedulers: every ``step`` steps each of them, in
    order, so their effects on the lr compose.

    Args:
        schedulers (sequence): sequence of chained schedulers.
        optimizer (Optimizer, optional): wrapped optimizer. Default: None (the first
            scheduler's).

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> S = tm.optim.lr_scheduler
    >>> scheduler = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2),
    ...                                 S.ExponentialLR(opt, gamma=0.5)])
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [0.5, 0.25, 0.25, 0.125]
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for index, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {index} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                    f"specified when calling `step`, but got one at index {index} in the given schedulers sequence.")
            if optimizer != scheduler.optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                    f"{scheduler.__class__.__name__} at index {index} has {scheduler.optimizer}, which is different "
                    f"from {optimizer.__class__.__name__}.")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def step(self) -> None:
        """Step every chained scheduler, in order.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> S = tm.optim.lr_scheduler
        >>> scheduler = S.ChainedScheduler([S.ExponentialLR(opt, gamma=0.5), S.ExponentialLR(opt, gamma=0.5)])
        >>> opt.step(); scheduler.step(); scheduler.get_last_lr()
        [0.25]
        """
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The state, with each chained scheduler's ``state_dict`` under ``_schedulers``.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> S = tm.optim.lr_scheduler
        >>> scheduler = S.ChainedScheduler([S.ExponentialLR(opt, gamma=0.5), S.StepLR(opt, step_size=2)])
        >>> [s["last_epoch"] for s in scheduler.state_dict()["_schedulers"]]
        [0, 0]
        """
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the state, and each chained scheduler's.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> S = tm.optim.lr_scheduler
        >>> scheduler = S.ChainedScheduler([S.ExponentialLR(opt, gamma=0.5)])
        >>> saved = scheduler.state_dict()
        >>> saved["_schedulers"][0]["gamma"] = 0.25
        >>> scheduler.load_state_dict(saved); scheduler._schedulers[0].gamma
        0.25
        """
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers  # leave the caller's dict as it was
        for scheduler, saved in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(saved)
