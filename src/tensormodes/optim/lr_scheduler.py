"""Learning-rate schedulers: they set each parameter group's ``lr`` as training goes on.

Call ``scheduler.step()`` once per epoch (or per batch, for ``OneCycleLR``), after
``optimizer.step()``. Values are PyTorch's: most schedulers update the current ``lr``
recursively (``lr * gamma``) as PyTorch does, so results agree to the last bit, and
``step(epoch)`` (deprecated) uses the closed form where one exists.

>>> import tensormodes as tm
>>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
>>> scheduler = tm.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for epoch in range(5):
...     opt.step()
...     lrs.append(scheduler.get_last_lr()[0])
...     scheduler.step()
>>> lrs
[1.0, 1.0, 0.5, 0.5, 0.25]
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, SupportsFloat
from weakref import ref

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ReduceLROnPlateau", "OneCycleLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _group_values(optimizer: Optimizer, key: str) -> list:
    return [group[key] for group in optimizer.param_groups]


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per parameter group: ``param`` repeated, or a list checked for length."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


def _warn_get_lr_called_within_step(scheduler: LRScheduler) -> None:
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=2)


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _track_optimizer_step(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` (once) so that it records having run: a scheduler stepped
    before its optimizer warns, as PyTorch's does."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    optimizer_ref = ref(optimizer)
    func = optimizer.step.__func__

    @wraps(func)
    def wrapper(*args, **kwargs):
        opt = optimizer_ref()
        opt._opt_called = True
        return func.__get__(opt, opt.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class LRScheduler:
    """Base class for all learning rate schedulers: subclasses implement ``get_lr``.

    Args:
        optimizer (Optimizer): the optimizer whose ``param_group["lr"]`` values are set.
        last_epoch (int): index of the last epoch seen; ``-1`` (default) starts afresh and
            records each group's ``initial_lr``. Other values resume from a checkpoint.

    Constructing a scheduler takes its first step: the groups' ``lr`` become the
    schedule's value at epoch 0.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
    >>> class Halving(tm.optim.lr_scheduler.LRScheduler):
    ...     def get_lr(self):
    ...         return [base / 2 ** self.last_epoch for base in self.base_lrs]
    >>> scheduler = Halving(opt)
    >>> opt.step(); scheduler.step()
    >>> scheduler.last_epoch, scheduler.get_last_lr()
    (1, [0.05])
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                        "last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume training from a "
                        "checkpoint but haven't properly loaded the optimizer state\n2. You're using last_epoch >= 0 "
                        "for a fresh training run (not recommended)")
        self.base_lrs: list[float] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """Reset the step count and take the constructor's step."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: every attribute except the optimizer.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> sd = tm.optim.lr_scheduler.StepLR(opt, step_size=3).state_dict()
        >>> sd["step_size"], sd["last_epoch"], sd["base_lrs"]
        (3, 0, [0.1])
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the scheduler's state from a dict returned by ``state_dict``.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> scheduler = tm.optim.lr_scheduler.StepLR(opt, step_size=3)
        >>> scheduler.load_state_dict({**scheduler.state_dict(), "last_epoch": 7})
        >>> scheduler.last_epoch
        7
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The learning rates this scheduler set last, one per parameter group.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.5)
        >>> tm.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9).get_last_lr()
        [0.5]
        """
        return self._last_lr

    def get_lr(self) -> list[float]:
        """Compute the next learning rate of each parameter group (implemented by each
        scheduler; call ``get_last_lr`` to read the current ones).

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> tm.optim.lr_scheduler.LRScheduler(opt)
        Traceback (most recent call last):
          ...
        NotImplementedError
        """
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch and set the groups' ``lr``. Call it after
        ``optimizer.step()``.

        ``epoch`` (deprecated, warns) sets ``last_epoch`` to it and uses the closed form
        where the scheduler has one.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> opt.step(); scheduler.step()
        >>> opt.param_groups[0]["lr"]
        0.5
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                    "initialization. Please, make sure to call `optimizer.step()` before "
                    "`lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr: list[float] = _group_values(self.optimizer, "lr")


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


class ReduceLROnPlateau(LRScheduler):
    """Reduces the learning rate when a metric has stopped improving: after more than
    ``patience`` epochs without improvement, each group's lr becomes
    ``max(lr * factor, min_lr)`` (unless that changes it by less than ``eps``).

    Args:
        optimizer (Optimizer): wrapped optimizer.
        mode (str): one of ``min``, ``max``: whether the monitored quantity should
            decrease or increase. Default: 'min'.
        factor (float): factor by which the learning rate will be reduced. Default: 0.1.
        patience (int): the number of allowed epochs with no improvement after which the
            learning rate will be reduced. Default: 10.
        threshold (float): threshold for measuring the new optimum, to only focus on
            significant changes. Default: 1e-4.
        threshold_mode (str): one of ``rel`` (best * (1 -/+ threshold)), ``abs``
            (best -/+ threshold). Default: 'rel'.
        cooldown (int): number of epochs to wait before resuming normal operation after lr
            has been reduced. Default: 0.
        min_lr (float or list): a lower bound on the learning rate of all param groups or
            each group respectively. Default: 0.
        eps (float): minimal decay applied to lr. Default: 1e-8.

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [3.0, 2.0, 2.0, 2.0]:
    ...     scheduler.step(loss)
    >>> scheduler.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: list[float] | float = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:
        """Record this epoch's ``metrics`` (a number or a one-element tensor) and reduce the
        learning rates if it has not improved for more than ``patience`` epochs.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
        >>> scheduler.step(tm.tensor(2.0)); scheduler.step(2.5)
        >>> scheduler.get_last_lr(), scheduler.best
        ([0.1], 2.0)
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(self.optimizer.param_groups)}) differs from "
                    f"when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                    "`optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self) -> bool:
        """True while the cooldown after a reduction lasts.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, cooldown=2)
        >>> scheduler.step(1.0); scheduler.step(2.0); scheduler.in_cooldown
        True
        """
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the scheduler's state (its comparison is rebuilt from the loaded mode).

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.lr_scheduler.ReduceLROnPlateau(opt)
        >>> scheduler.load_state_dict({**scheduler.state_dict(), "mode": "max"}); scheduler.mode_worse
        -inf
        """
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


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

