"""``tensormodes.amp``: automatic mixed precision, as ``torch.amp``: ``autocast`` (a
``TorchFunctionMode`` casting the inputs of PyTorch's CPU autocast op lists) and
``GradScaler`` (loss scaling, as PyTorch runs it on the CPU).

>>> import tensormodes as tm
>>> with tm.amp.autocast("cpu"):
...     (tm.ones(2, 2) @ tm.ones(2, 2)).dtype
tensormodes.bfloat16
"""

from __future__ import annotations

from .autocast_mode import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "GradScaler", "OptState", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype"]
