"""``tensormodes.cuda.amp``: PyTorch's deprecated CUDA spellings of ``autocast`` and
``GradScaler``; both warn as PyTorch does and are disabled (there is no CUDA here).

>>> import warnings, tensormodes as tm
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     tm.cuda.amp.GradScaler().is_enabled()
False
"""

from __future__ import annotations

import warnings

from .. import _dtype as dt
from .. import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):  # noqa: N801 - PyTorch's spelling
    """``amp.autocast("cuda", ...)``, deprecated: disabled with a warning (no CUDA here)."""

    def __init__(self, enabled: bool = True, dtype=dt.float16, cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``amp.GradScaler("cuda", ...)``, deprecated: disabled with a warning (no CUDA here)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
