"""``tensormodes.cuda``: PyTorch's ``torch.cuda`` as a build without CUDA answers it. This
library computes on the CPU, so ``is_available()`` is False, ``device_count()`` is 0, the
seeding functions seed nothing, and the calls that need a device raise PyTorch's errors.

>>> import tensormodes as tm
>>> tm.cuda.is_available(), tm.cuda.device_count(), tm.cuda.manual_seed_all(0)
(False, 0, None)
>>> tm.cuda.get_device_name()
Traceback (most recent call last):
AssertionError: Torch not compiled with CUDA enabled
"""

from __future__ import annotations

from . import amp

__all__ = [
    "amp", "is_available", "device_count", "is_initialized", "init", "manual_seed", "manual_seed_all", "seed",
    "seed_all", "initial_seed", "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
    "is_bf16_supported", "is_tf32_supported", "synchronize", "empty_cache", "ipc_collect", "current_device",
    "set_device", "get_device_name", "get_device_capability", "get_device_properties", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "device",
]

NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _not_compiled():
    raise AssertionError(NOT_COMPILED)


def is_available() -> bool:
    """False: there is no CUDA here.

    >>> import tensormodes as tm
    >>> tm.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """0: there is no CUDA device.

    >>> import tensormodes as tm
    >>> tm.cuda.device_count()
    0
    """
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialised.

    >>> import tensormodes as tm
    >>> tm.cuda.is_initialized()
    False
    """
    return False


def init() -> None:
    """Raises as PyTorch without CUDA does."""
    _not_compiled()


def manual_seed(seed) -> None:
    """Seeds the current CUDA device's generator: nothing to seed here (as PyTorch without
    CUDA, the call is accepted and does nothing; ``seed`` must convert to ``int``).

    >>> import tensormodes as tm
    >>> tm.cuda.manual_seed(0)
    """
    int(seed)


def manual_seed_all(seed) -> None:
    """Seeds every CUDA device's generator: nothing to seed here.

    >>> import tensormodes as tm
    >>> tm.cuda.manual_seed_all(0)
    """
    int(seed)


def seed() -> None:
    """Seeds the CUDA generator randomly: nothing to seed here.

    >>> import tensormodes as tm
    >>> tm.cuda.seed()
    """


def seed_all() -> None:
    """Seeds every CUDA generator randomly: nothing to seed here.

    >>> import tensormodes as tm
    >>> tm.cuda.seed_all()
    """


def initial_seed() -> int:
    """Raises as PyTorch without CUDA does (there is no CUDA generator)."""
    _not_compiled()


def get_rng_state(device="cuda"):
    """Raises as PyTorch without CUDA does."""
    _not_compiled()


def get_rng_state_all() -> list:
    """The states of every CUDA generator: none.

    >>> import tensormodes as tm
    >>> tm.cuda.get_rng_state_all()
    []
    """
    return []


def set_rng_state(new_state, device="cuda") -> None:
    """Sets a CUDA generator's state: nothing to set here (accepted, as PyTorch without CUDA)."""


def set_rng_state_all(new_states) -> None:
    """Sets every CUDA generator's state: nothing to set here."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: no CUDA device to support bfloat16.

    >>> import tensormodes as tm
    >>> tm.cuda.is_bf16_supported()
    False
    """
    return False


def is_tf32_supported() -> bool:
    """False: no CUDA device to support TF32.

    >>> import tensormodes as tm
    >>> tm.cuda.is_tf32_supported()
    False
    """
    return False


def synchronize(device=None) -> None:
    """Raises as PyTorch without CUDA does: there is nothing to wait for."""
    _not_compiled()


def empty_cache() -> None:
    """Releases cached CUDA memory: there is none (accepted, as PyTorch without CUDA).

    >>> import tensormodes as tm
    >>> tm.cuda.empty_cache()
    """


def ipc_collect() -> None:
    """Raises as PyTorch without CUDA does."""
    _not_compiled()


def current_device() -> int:
    """Raises as PyTorch without CUDA does.

    >>> import tensormodes as tm
    >>> tm.cuda.current_device()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _not_compiled()


def set_device(device) -> None:
    """Raises as PyTorch without CUDA does (PyTorch's own error is an AttributeError from its
    C module; this one says why)."""
    _not_compiled()


def get_device_name(device=None) -> str:
    """Raises as PyTorch without CUDA does."""
    _not_compiled()


def get_device_capability(device=None):
    """Raises as PyTorch without CUDA does."""
    _not_compiled()


def get_device_properties(device=None):
    """Raises as PyTorch without CUDA does."""
    _not_compiled()


def memory_allocated(device=None) -> int:
    """0: no CUDA memory is in use.

    >>> import tensormodes as tm
    >>> tm.cuda.memory_allocated(), tm.cuda.max_memory_allocated()
    (0, 0)
    """
    return 0


def max_memory_allocated(device=None) -> int:
    """0: no CUDA memory was ever in use."""
    return 0


def memory_reserved(device=None) -> int:
    """0: no CUDA memory is reserved."""
    return 0


def max_memory_reserved(device=None) -> int:
    """0: no CUDA memory was ever reserved."""
    return 0


def reset_peak_memory_stats(device=None) -> None:
    """Raises: there are no CUDA statistics (PyTorch's own error is an AttributeError from its
    C module; this one says why)."""
    _not_compiled()


class device:  # noqa: N801 - PyTorch's spelling
    """Context manager selecting a CUDA device: entering one with an index raises as PyTorch
    without CUDA does; ``device(None)`` and ``device(-1)`` select nothing.

    >>> import tensormodes as tm
    >>> with tm.cuda.device(None):
    ...     pass
    """

    def __init__(self, device) -> None:
        if device is None:
            self.idx = -1
        elif isinstance(device, int):
            self.idx = device
        else:
            self.idx = getattr(device, "index", None)
            if self.idx is None:
                self.idx = -1

    def __enter__(self):
        if self.idx >= 0:
            raise RuntimeError("PyTorch was compiled without CUDA support")
        return self

    def __exit__(self, *exc) -> bool:
        return False
