"""``nn.parallel``: ``DataParallel`` and ``DistributedDataParallel``, as they behave in PyTorch on a
machine without GPUs and without a process group.

``DataParallel`` wraps a module and calls it (with no devices to scatter to, PyTorch calls the
module directly); its state-dict keys get the ``module.`` prefix. ``DistributedDataParallel``
raises PyTorch's error for a process group that was never initialized (see
``tensormodes.distributed``).

>>> import tensormodes as tm
>>> model = tm.nn.DataParallel(tm.nn.Linear(2, 1))
>>> model(tm.ones(3, 2)).shape, list(model.state_dict())
(tensormodes.Size([3, 1]), ['module.weight', 'module.bias'])
"""

from __future__ import annotations

from .. import distributed
from .modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Implements data parallelism at the module level: with no GPUs (always, here) the wrapped
    ``module`` is called directly, as PyTorch does."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        """The wrapped module's output."""
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Distributed data parallelism: needs a process group, which this library never has."""

    def __init__(self, module: Module, *args, **kwargs) -> None:
        super().__init__()
        distributed.get_rank()  # raises PyTorch's "Default process group has not been initialized" error
