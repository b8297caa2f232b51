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

from ._annealing import CosineAnnealingLR, CosineAnnealingWarmRestarts, OneCycleLR
from ._base import EPOCH_DEPRECATION_WARNING as EPOCH_DEPRECATION_WARNING  # PyTorch's module attribute
from ._base import LRScheduler
from ._combining import ChainedScheduler, SequentialLR
from ._cyclic import CyclicLR
from ._multiplicative import (
           ConstantLR,
           ExponentialLR,
           LambdaLR,
           LinearLR,
           MultiplicativeLR,
           MultiStepLR,
           PolynomialLR,
           StepLR,
)
from ._plateau import ReduceLROnPlateau

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR"]
