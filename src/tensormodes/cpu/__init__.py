"""``tensormodes.cpu``: PyTorch's ``torch.cpu`` device module (one CPU device, always
available; nothing to synchronise) and its ``amp`` spelling of autocast.

>>> import tensormodes as tm
>>> tm.cpu.is_available(), tm.cpu.device_count(), tm.cpu.current_device()
(True, 1, 'cpu')
"""

from __future__ import annotations

from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize", "is_initialized", "set_device"]


def is_available() -> bool:
    """True: the CPU is always available.

    >>> import tensormodes as tm
    >>> tm.cpu.is_available()
    True
    """
    return True


def device_count() -> int:
    """1: the CPU counts as one device.

    >>> import tensormodes as tm
    >>> tm.cpu.device_count()
    1
    """
    return 1


def current_device() -> str:
    """``'cpu'``.

    >>> import tensormodes as tm
    >>> tm.cpu.current_device()
    'cpu'
    """
    return "cpu"


def synchronize(device=None) -> None:
    """Waits for CPU work to finish: it is always finished (every call here is synchronous).

    >>> import tensormodes as tm
    >>> tm.cpu.synchronize()
    """


def is_initialized() -> bool:
    """True: the CPU needs no initialisation.

    >>> import tensormodes as tm
    >>> tm.cpu.is_initialized()
    True
    """
    return True


def set_device(device) -> None:
    """Accepted and ignored, as PyTorch's: there is one CPU device."""
