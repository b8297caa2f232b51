"""``swa_utils``: stochastic weight averaging and exponential moving averages of a model
(``AveragedModel`` with the ``get_*_avg_fn`` helpers), the ``SWALR`` scheduler and
``update_bn`` (recompute batch-norm statistics for the averaged weights).

>>> import tensormodes as tm
>>> model = tm.nn.Linear(1, 1, bias=False)
>>> swa = tm.optim.swa_utils.AveragedModel(model)
>>> for value in (1.0, 2.0, 6.0):
...     with tm.no_grad():
...         _ = model.weight.fill_(value)
...     swa.update_parameters(model)
>>> swa.module.weight.item(), int(swa.n_averaged)
(3.0, 3)
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .. import nn
from .._api import namespace as tm
from .lr_scheduler._base import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """The exponential-moving-average update over lists of tensors (for ``AveragedModel``'s
    ``multi_avg_fn``): ``ema = lerp(ema, current, 1 - decay)`` in place.

    PyTorch calls its ``_foreach_lerp_`` here; tensormodes calls ``lerp_`` per tensor (the
    same values).

    >>> import tensormodes as tm
    >>> ema, current = [tm.tensor([0.0])], [tm.tensor([1.0])]
    >>> tm.optim.swa_utils.get_ema_multi_avg_fn(0.75)(ema, current, None); ema
    [tensor([0.2500])]
    """
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with tm.no_grad():
            if tm.is_floating_point(ema_param_list[0]) or tm.is_complex(ema_param_list[0]):
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The running-mean update over lists of tensors (for ``AveragedModel``'s
    ``multi_avg_fn``): ``avg = lerp(avg, current, 1 / (n + 1))`` in place.

    >>> import tensormodes as tm
    >>> avg, current = [tm.tensor([1.0])], [tm.tensor([4.0])]
    >>> tm.optim.swa_utils.get_swa_multi_avg_fn()(avg, current, tm.tensor(2)); avg
    [tensor([2.])]
    """

    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with tm.no_grad():
            if tm.is_floating_point(averaged_param_list[0]) or tm.is_complex(averaged_param_list[0]):
                # a 0-dim tensor weight is taken as a number, as PyTorch's Scalar argument takes it
                weight = 1 / (num_averaged + 1)
                weight = weight.item() if isinstance(weight, tm.Tensor) else weight
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.lerp_(p_model, weight)
            else:
                diffs = [p_model - p_avg for p_avg, p_model in zip(averaged_param_list, current_param_list,
                                                                   strict=True)]
                for p_avg, diff in zip(averaged_param_list, diffs, strict=True):
                    if isinstance(num_averaged, tm.Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The exponential-moving-average update of one tensor (for ``AveragedModel``'s
    ``avg_fn``): returns ``decay * ema + (1 - decay) * current``.

    >>> import tensormodes as tm
    >>> tm.optim.swa_utils.get_ema_avg_fn(0.5)(tm.tensor([0.0]), tm.tensor([1.0]), 3)
    tensor([0.5000])
    """
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        with tm.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The running-mean update of one tensor (for ``AveragedModel``'s ``avg_fn``): returns
    ``averaged + (current - averaged) / (num_averaged + 1)``.

    >>> import tensormodes as tm
    >>> tm.optim.swa_utils.get_swa_avg_fn()(tm.tensor([1.0]), tm.tensor([4.0]), 2)
    tensor([2.])
    """

    def swa_update(averaged_param, current_param, num_averaged):
        with tm.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(nn.Module):
    """Keeps a copy of ``model`` (``self.module``) whose parameters are an average of the
    model's parameters over the ``update_parameters`` calls: the running mean by default
    (SWA), or what ``avg_fn`` (one tensor at a time) or ``multi_avg_fn`` (lists of tensors)
    computes, e.g. an exponential moving average.

    Args:
        model (Module): model to use with SWA/EMA.
        device (device, optional): if provided, the averaged model will be stored on it.
        avg_fn (function, optional): the averaging function used to update parameters;
            ``avg_fn(averaged_param, model_param, num_averaged)`` returns the new value.
        multi_avg_fn (function, optional): the averaging function used to update
            parameters in place, on lists of tensors.
        use_buffers (bool): if ``True``, buffers are averaged too (else copied from the
            model at each update). Default: False.

    >>> import tensormodes as tm
    >>> model = tm.nn.Linear(1, 1, bias=False)
    >>> ema = tm.optim.swa_utils.AveragedModel(model, multi_avg_fn=tm.optim.swa_utils.get_ema_multi_avg_fn(0.5))
    >>> for value in (2.0, 4.0):
    ...     with tm.no_grad():
    ...         _ = model.weight.fill_(value)
    ...     ema.update_parameters(model)
    >>> ema.module.weight.item()
    3.0
    """

    def __init__(self, model: nn.Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tm.tensor(0, dtype=tm.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: nn.Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average; the first call copies them.

        >>> import tensormodes as tm
        >>> model = tm.nn.Linear(1, 1, bias=False)
        >>> swa = tm.optim.swa_utils.AveragedModel(model, avg_fn=tm.optim.swa_utils.get_ema_avg_fn(0.5))
        >>> with tm.no_grad():
        ...     _ = model.weight.fill_(4.0)
        >>> swa.update_parameters(model); swa.update_parameters(model); swa.module.weight.item()
        4.0
        """
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        self_detached, model_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_detached.append(p_averaged.detach())
            model_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            self._average(self_detached, model_detached)
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average(self, self_detached: list, model_detached: list) -> None:
        if self.multi_avg_fn is None and self.avg_fn is not None:
            for p_averaged, p_model in zip(self_detached, model_detached, strict=True):
                n_averaged = self.n_averaged.to(p_averaged.device)
                p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
            return
        # Grouped by device and dtype, as PyTorch's lists for its foreach kernels are; on
        # the CPU PyTorch's default is the one-tensor running mean, so is ours.
        groups: dict[tuple, tuple[list, list]] = {}
        for p_averaged, p_model in zip(self_detached, model_detached, strict=True):
            mine, theirs = groups.setdefault((str(p_averaged.device), p_averaged.dtype), ([], []))
            mine.append(p_averaged)
            theirs.append(p_model)
        for self_params, model_params in groups.values():
            n_averaged = self.n_averaged.to(self_params[0].device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(self_params, model_params, n_averaged)
            else:
                avg_fn = get_swa_avg_fn()
                for p_averaged, p_model in zip(self_params, model_params, strict=True):
                    p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))


def _batch_norm_types() -> tuple[type, ...]:
    """The batch-norm layers ``update_bn`` resets: tensormodes' public batch-norm classes
    (and their subclasses) — PyTorch tests for its private ``_BatchNorm`` base instead."""
    names = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
             "LazyBatchNorm3d")
    return tuple(getattr(nn, name) for name in names if hasattr(nn, name))


def update_bn(loader: Iterable[Any], model: nn.Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s batch-norm layers with one pass over
    ``loader`` (a cumulative average: momentum ``None`` during the pass), e.g. after SWA.
    A batch that is a list or tuple contributes its first element.

    Args:
        loader (iterable): dataset loader to compute the activation statistics on.
        model (Module): model for which we seek to update BatchNorm statistics.
        device (device, optional): if set, data will be transferred to it before being
            passed into the model.

    >>> import tensormodes as tm
    >>> model = tm.nn.BatchNorm1d(1)
    >>> tm.optim.swa_utils.update_bn([tm.tensor([[1.0], [3.0]]), (tm.tensor([[5.0], [7.0]]), None)], model)
    >>> model.running_mean, model.momentum, model.training
    (tensor([4.]), 0.1, True)
    """
    with tm.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _batch_norm_types()):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module in momenta:
            module.momentum = momenta[module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals the learning rate of each parameter group to a fixed ``swa_lr`` over
    ``anneal_epochs`` epochs (cosine or linear), then keeps it there.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        swa_lr (float or list): the learning rate value for all param groups together or
            separately for each group.
        anneal_epochs (int): number of epochs in the annealing phase (default: 10)
        anneal_strategy (str): "cos" or "linear"; specifies the annealing strategy:
            "cos" for cosine annealing, "linear" for linear annealing (default: "cos")
        last_epoch (int): the index of the last epoch (default: -1)

    >>> import tensormodes as tm
    >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
    >>> scheduler = tm.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 0.75, 0.5, 0.5]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list[float]:
        """The lrs one annealing step further towards ``swa_lr`` (recovering the starting lr
        from the current one, as PyTorch does).

        >>> import tensormodes as tm, warnings
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.swa_utils.SWALR(opt, swa_lr=0.0, anneal_epochs=4, anneal_strategy="linear")
        >>> opt.step(); scheduler.step()
        >>> with warnings.catch_warnings(record=True) as caught:  # outside step it warns (use get_last_lr)
        ...     warnings.simplefilter("always")
        ...     lrs = scheduler.get_lr()
        >>> lrs, len(caught)
        ([0.5625], 1)
        """
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """The state: every attribute except the optimizer and the annealing function.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> state = tm.optim.swa_utils.SWALR(opt, swa_lr=0.1).state_dict()
        >>> state["_anneal_strategy"], state["anneal_epochs"], "anneal_func" in state
        ('cos', 10, False)
        """
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the state and set the annealing function it names.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=1.0)
        >>> scheduler = tm.optim.swa_utils.SWALR(opt, swa_lr=0.1)
        >>> scheduler.load_state_dict({**scheduler.state_dict(), "_anneal_strategy": "linear"})
        >>> scheduler.anneal_func(0.25)
        0.25
        """
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
