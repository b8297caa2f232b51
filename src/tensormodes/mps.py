"""``tensormodes.mps``: PyTorch's ``torch.mps`` as a build without MPS answers it (this
library computes on the CPU): ``is_available()`` False, ``device_count()`` 0, and the calls
that need the device raise PyTorch's errors.

>>> import tensormodes as tm
>>> tm.mps.is_available(), tm.mps.device_count()
(False, 0)
>>> tm.mps.synchronize()
Traceback (most recent call last):
RuntimeError: Cannot execute deviceSynchronize() without MPS backend.
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "seed", "get_rng_state", "set_rng_state", "synchronize",
           "empty_cache", "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory"]


def _missing(what: str):
    raise RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available() -> bool:
    """False: there is no MPS device here."""
    return False


def device_count() -> int:
    """0: there is no MPS device here."""
    return 0


def manual_seed(seed) -> None:
    """Seeds the MPS generator: nothing to seed here (accepted, as PyTorch without MPS).

    >>> import tensormodes as tm
    >>> tm.mps.manual_seed(0)
    """
    int(seed)


def seed() -> None:
    """Raises as PyTorch without MPS does."""
    _missing("getDefaultGenerator")


def get_rng_state(device="mps"):
    """Raises as PyTorch without MPS does."""
    _missing("getDefaultGenerator")


def set_rng_state(new_state, device="mps") -> None:
    """Raises as PyTorch without MPS does."""
    _missing("getDefaultGenerator")


def synchronize() -> None:
    """Raises as PyTorch without MPS does."""
    _missing("deviceSynchronize")


def empty_cache() -> None:
    """Raises as PyTorch without MPS does."""
    _missing("emptyCache")


def current_allocated_memory() -> int:
    """Raises as PyTorch without MPS does."""
    _missing("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    """Raises as PyTorch without MPS does."""
    _missing("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    """Raises as PyTorch without MPS does."""
    _missing("getRecommendedMaxMemory")
