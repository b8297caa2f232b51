"""Schedulers that scale the learning rate by a factor of the epoch: ``LambdaLR``,
``MultiplicativeLR``, ``StepLR``, ``MultiStepLR``, ``ConstantLR``, ``LinearLR``,
``ExponentialLR`` and ``PolynomialLR``.
"""

from __future__ import annotations

import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..optimizer import Optimizer
from ._base import LRScheduler, _group_values, _warn_get_lr_called_within_step


class LambdaLR(LRScheduler):
    """Sets each group's learning rate to its initial lr times ``lr_lambda(epoch)``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (function or list): a function which computes a multiplicative factor
            given an integer parameter epoch, or a list of such functions, one for each
            group in ``optimizer.param_groups``.
        last_epoch (int): the index of last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> opt.step(); scheduler.step(); opt.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.3333333333333333]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; a lambda is saved only if it is a callable object (its
        ``__dict__``), not a plain function.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))])
        >>> tm.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0).state_dict()["lr_lambdas"]
        [None]
        """
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the state, updating callable-object lambdas from their saved ``__dict__``.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))])
        >>> scheduler = tm.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0)
        >>> scheduler.load_state_dict({**scheduler.state_dict(), "last_epoch": 4}); scheduler.last_epoch
        4
        """
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas  # leave the caller's dict as it was
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self) -> list[float]:
        """``base_lr * lr_lambda(last_epoch)`` for each group.

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 * epoch)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.5], 1)
        """
        _warn_get_lr_called_within_step(self)
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class StepLR(LRScheduler):
    """Decays the learning rate of each parameter group by gamma every step_size epochs.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        step_size (int): period of learning rate decay.
        gamma (float): multiplicative factor of learning rate decay. Default: 0.1.
        last_epoch (int): the index of last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    >>> opt.step(); scheduler.step(); scheduler.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs, times ``gamma`` when ``last_epoch`` is a non-zero multiple of ``step_size``.

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.25], 1)
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Decays the learning rate of each parameter group by gamma once the number of epoch
    reaches one of the milestones (by ``gamma ** n`` for a milestone listed ``n`` times).

    Args:
        optimizer (Optimizer): wrapped optimizer.
        milestones (list): list of epoch indices. Must be increasing.
        gamma (float): multiplicative factor of learning rate decay. Default: 0.1.
        last_epoch (int): the index of last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs, times ``gamma ** n`` at a milestone listed ``n`` times.

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 1], gamma=0.5)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.0625], 1)
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch] for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiplies the learning rate of each parameter group by a constant ``factor`` until
    the number of epochs reaches ``total_iters``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        factor (float): the number we multiply learning rate until the milestone.
            Default: 1./3.
        total_iters (int): the number of steps that the scheduler multiplies the learning
            rate by the factor. Default: 5.
        last_epoch (int): the index of the last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The lrs times ``factor`` at epoch 0, divided by it again at ``total_iters``.

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([2.0], 1)
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Changes the learning rate of each parameter group linearly, by a factor going from
    ``start_factor`` to ``end_factor`` over ``total_iters`` epochs.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        start_factor (float): the number we multiply learning rate in the first epoch.
            Default: 1./3.
        end_factor (float): the number we multiply learning rate at the end of linear
            changing process. Default: 1.0.
        total_iters (int): the number of iterations that multiplicative factor reaches to 1.
            Default: 5.
        last_epoch (int): the index of the last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The lrs moved one step along the line from ``start_factor`` to ``end_factor``.

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=4)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.78125], 1)
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        return [group["lr"] * (1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span))
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Decays the learning rate of each parameter group by gamma every epoch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        gamma (float): multiplicative factor of learning rate decay.
        last_epoch (int): the index of last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); scheduler.step(); opt.step(); scheduler.step(); scheduler.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs times ``gamma`` (unchanged by the constructor's step).

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.25], 1)
        """
        _warn_get_lr_called_within_step(self)
        # A scheduler resumed from a checkpoint must not decay once more while constructed.
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class MultiplicativeLR(LRScheduler):
    """Multiplies the learning rate of each parameter group by the factor given in the
    specified function, every epoch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (function or list): a function which computes a multiplicative factor
            given an integer parameter epoch, or a list of such functions, one for each
            group in ``optimizer.param_groups``.
        last_epoch (int): the index of last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    # Saved and loaded as LambdaLR's: a lambda only if it is a callable object (its ``__dict__``).
    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self) -> list[float]:
        """The current lrs times ``lr_lambda(last_epoch)`` (unchanged by the constructor's step).

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
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
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


class PolynomialLR(LRScheduler):
    """Decays the learning rate of each parameter group using a polynomial function in the
    given total_iters: ``base_lr * (1 - epoch / total_iters) ** power``, reached
    recursively as PyTorch does; constant after ``total_iters``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        total_iters (int): the number of steps that the scheduler decays the learning rate.
            Default: 5.
        power (float): the power of the polynomial. Default: 1.0.
        last_epoch (int): the index of the last epoch. Default: -1.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(5):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs times the ratio of consecutive polynomial factors.

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.PolynomialLR(opt, total_iters=2)
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.25], 1)
        """
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        decay_factor = ((1.0 - self.last_epoch / self.total_iters)
                        / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]
