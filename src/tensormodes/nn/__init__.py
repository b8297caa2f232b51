"""Neural-network building blocks: ``Parameter`` and the ``functional`` namespace.

>>> import tensormodes as tm
>>> p = tm.nn.Parameter(tm.ones(2))
>>> type(p * 2).__name__, p.requires_grad
('Tensor', True)
"""

from . import functional
from .parameter import Parameter

__all__ = ["Parameter", "functional"]
