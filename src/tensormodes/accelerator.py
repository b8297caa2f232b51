"""``tensormodes.accelerator``: PyTorch 2.13's device-generic accelerator API, answered for a
library without an accelerator: ``is_available()`` False, ``current_accelerator()`` None,
``device_count()`` 0, and the calls that need a device raise PyTorch's error.

>>> import tensormodes as tm
>>> tm.accelerator.is_available(), tm.accelerator.current_accelerator(), tm.accelerator.device_count()
(False, None, 0)
>>> tm.accelerator.synchronize()
Traceback (most recent call last):
RuntimeError: Cannot access accelerator device when none is available.
"""

from __future__ import annotations

import warnings

__all__ = [
    "is_available", "device_count", "current_accelerator", "current_device_index", "current_device_idx",
    "set_device_index", "set_device_idx", "current_stream", "set_stream", "synchronize", "empty_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
    "reset_peak_memory_stats", "get_device_capability", "device_index",
]

_NONE = "Cannot access accelerator device when none is available."


def _none(*args, **kwargs):
    raise RuntimeError(_NONE)


def is_available() -> bool:
    """False: no accelerator here."""
    return False


def device_count() -> int:
    """0: no accelerator here."""
    return 0


def current_accelerator(check_available: bool = False):
    """None: no accelerator here."""
    return None


def current_device_index() -> int:
    """Raises: no accelerator here."""
    _none()


def current_device_idx() -> int:
    """Deprecated spelling of ``current_device_index``."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    _none()


def set_device_index(device) -> None:
    """Raises: no accelerator here."""
    _none()


def set_device_idx(device) -> None:
    """Deprecated spelling of ``set_device_index``."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    _none()


def current_stream(device=None):
    """Raises: no accelerator here."""
    _none()


def set_stream(stream) -> None:
    """Raises: no accelerator here."""
    _none()


def synchronize(device=None) -> None:
    """Raises: no accelerator here."""
    _none()


def empty_cache() -> None:
    """Raises: no accelerator here."""
    _none()


def memory_allocated(device_index=None) -> int:
    """Raises: no accelerator here."""
    _none()


def max_memory_allocated(device_index=None) -> int:
    """Raises: no accelerator here."""
    _none()


def memory_reserved(device_index=None) -> int:
    """Raises: no accelerator here."""
    _none()


def max_memory_reserved(device_index=None) -> int:
    """Raises: no accelerator here."""
    _none()


def memory_stats(device_index=None) -> dict:
    """Raises: no accelerator here."""
    _none()


def reset_peak_memory_stats(device_index=None) -> None:
    """Raises: no accelerator here."""
    _none()


def get_device_capability(device=None) -> dict:
    """Raises: no accelerator here."""
    _none()


class device_index:  # noqa: N801 - PyTorch's spelling
    """Context manager selecting an accelerator by index: entering with an index raises (no
    accelerator here); ``device_index(None)`` selects nothing."""

    def __init__(self, device, /) -> None:
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            _none()
        return self

    def __exit__(self, *exc) -> bool:
        return False
