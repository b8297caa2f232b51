"""``tensormodes.backends.cudnn``: cuDNN's switches with PyTorch's defaults (``enabled`` and
``allow_tf32`` True, ``benchmark`` and ``deterministic`` False). There is no cuDNN here:
``is_available()`` is False and the flags are recorded only.

>>> import tensormodes as tm
>>> tm.backends.cudnn.deterministic = True; tm.backends.cudnn.deterministic
True
>>> tm.backends.cudnn.deterministic = False
>>> tm.backends.cudnn.benchmark = 1
Traceback (most recent call last):
RuntimeError: set_benchmark_cudnn expects a bool, but got int
"""

from __future__ import annotations

import contextlib
import sys

from ._flags import FlagModule

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "deterministic", "allow_tf32",
           "benchmark_limit"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    """False: there is no cuDNN here."""
    return False


def version():
    """None: there is no cuDNN here."""
    return None


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10, deterministic: bool = False,
          allow_tf32: bool = True):
    """Sets the flags for the ``with`` block and restores them after it."""
    module = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {name: getattr(module, name) for name in names}
    try:
        for name, value in zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)):
            setattr(module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


class _CudnnModule(FlagModule):
    FLAGS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
             "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cudnn"}


sys.modules[__name__].__class__ = _CudnnModule
