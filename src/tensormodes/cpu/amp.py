"""``tensormodes.cpu.amp``: PyTorch's deprecated CPU spellings of ``autocast`` and ``GradScaler``.

>>> import warnings, tensormodes as tm
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     with tm.cpu.amp.autocast():
...         (tm.ones(1, 1) @ tm.ones(1, 1)).dtype
tensormodes.bfloat16
"""

from __future__ import annotations

import warnings

from .. import _dtype as dt
from .. import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):  # noqa: N801 - PyTorch's spelling
    """``amp.autocast("cpu", ...)`` (bfloat16 by default), deprecated as in PyTorch."""

    def __init__(self, enabled: bool = True, dtype=dt.bfloat16, cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``amp.GradScaler("cpu", ...)``, deprecated as in PyTorch."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
