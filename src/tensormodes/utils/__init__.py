"""Utilities, at PyTorch's paths: ``tensormodes.utils.flop_counter.FlopCounterMode``.

>>> import tensormodes as tm
>>> from tensormodes.utils.flop_counter import FlopCounterMode
>>> with FlopCounterMode(display=False) as counter:
...     _ = tm.ones(2, 3) @ tm.ones(3, 4)
>>> counter.get_total_flops()
48
"""

from . import flop_counter

__all__ = ["flop_counter"]
