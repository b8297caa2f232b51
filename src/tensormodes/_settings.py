"""The process-wide runtime settings (``SETTINGS``), at the bottom so that kernels can read them:
``_runtime.py`` sets and reports them with PyTorch's names; a kernel whose PyTorch counterpart
splits its work among the intra-op threads reads ``num_threads`` to split it the same way (its
half-type sums depend on the split).

>>> SETTINGS.num_threads >= 1
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["SETTINGS", "Settings"]


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


@dataclass
class Settings:
    """The process-wide settings (PyTorch keeps them process-wide too)."""

    num_threads: int = field(default_factory=_cores)
    num_interop_threads: int = field(default_factory=_cores)
    interop_threads_set: bool = False
    deterministic: bool = False
    deterministic_warn_only: bool = False
    float32_matmul_precision: str = "highest"
    warn_always: bool = False
    blas_limits: object = None  # threadpoolctl's limiter while set_num_threads is in force


SETTINGS = Settings()
