"""``tensormodes.optim``: PyTorch's optimizers and learning-rate schedulers.

Optimizers update parameters in place under ``no_grad`` with the same sequence of
tensor operations as PyTorch's per-tensor CPU loop, so a mode sees the same calls and
results agree with PyTorch's to rounding, step after step.

>>> import tensormodes as tm
>>> w = tm.nn.Parameter(tm.tensor([2.0, -1.0]))
>>> opt = tm.optim.AdamW([w], lr=0.1)
>>> scheduler = tm.optim.lr_scheduler.StepLR(opt, step_size=10)
>>> for _ in range(3):
...     opt.zero_grad()
...     loss = (w * w).sum()
...     loss.backward()
...     opt.step()
...     scheduler.step()
>>> w
Parameter containing:
tensor([ 1.6949, -0.6989], requires_grad=True)
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer, register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "SparseAdam", "Rprop", "ASGD", "Adafactor", "Muon", "lr_scheduler", "swa_utils",
           "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]
