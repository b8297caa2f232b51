"""Neural-network building blocks: ``Module`` and its layers, ``Parameter``, ``Buffer``, ``functional``,
``init``, ``utils`` and ``attention``, as in ``torch.nn``.

>>> import tensormodes as tm
>>> p = tm.nn.Parameter(tm.ones(2))
>>> type(p * 2).__name__, p.requires_grad
('Tensor', True)
>>> model = tm.nn.Sequential(tm.nn.Linear(3, 4), tm.nn.ReLU(), tm.nn.Linear(4, 1))
>>> model(tm.ones(2, 3)).shape, sum(p.numel() for p in model.parameters())
(tensormodes.Size([2, 1]), 21)
"""

from . import attention, functional, init, parallel, utils
from .modules import *  # noqa: F403 - the layers are nn's namespace, as in torch.nn
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "DataParallel", "attention",
           "functional", "init", "parallel", "utils", *_modules_all]
