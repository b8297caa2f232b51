"""Choosing the kernel of ``scaled_dot_product_attention`` (``torch.nn.attention``).

``sdpa_kernel`` enables only the given backends within its block, through the same switches
as ``tensormodes.backends.cuda.enable_*_sdp``, and restores them on exit. The computation here
is always the math path; what the switches change is only whether a call may run at all: on a
CPU, PyTorch runs attention with the math or the flash kernel and raises when both are off, and
so does ``scaled_dot_product_attention`` here.

>>> import tensormodes as tm
>>> from tensormodes.nn.attention import SDPBackend, sdpa_kernel
>>> q = tm.ones(1, 2, 4)
>>> with sdpa_kernel(SDPBackend.MATH):
...     tm.nn.functional.scaled_dot_product_attention(q, q, q).shape
tensormodes.Size([1, 2, 4])
>>> with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):  # doctest: +ELLIPSIS
...     tm.nn.functional.scaled_dot_product_attention(q, q, q)
Traceback (most recent call last):
    ...
RuntimeError: No viable backend for scaled_dot_product_attention was found. ...
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

from ..backends import cuda as _cuda_backend

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# PyTorch's switch: warn when a fused kernel cannot be used (nothing is fused here)
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """An enum-like class that contains the different backends for scaled dot product attention.

    >>> from tensormodes.nn.attention import SDPBackend
    >>> SDPBackend.MATH, int(SDPBackend.FLASH_ATTENTION), str(SDPBackend.ERROR)
    (<SDPBackend.MATH: 0>, 1, 'SDPBackend.ERROR')
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


# backend -> (is it enabled?, enable it or not); OVERRIDEABLE's switch is kept here (no device uses it)
_OVERRIDEABLE = {"enabled": True}
_SWITCHES = {
    SDPBackend.CUDNN_ATTENTION: (_cuda_backend.cudnn_sdp_enabled, _cuda_backend.enable_cudnn_sdp),
    SDPBackend.FLASH_ATTENTION: (_cuda_backend.flash_sdp_enabled, _cuda_backend.enable_flash_sdp),
    SDPBackend.EFFICIENT_ATTENTION: (_cuda_backend.mem_efficient_sdp_enabled, _cuda_backend.enable_mem_efficient_sdp),
    SDPBackend.MATH: (_cuda_backend.math_sdp_enabled, _cuda_backend.enable_math_sdp),
    SDPBackend.OVERRIDEABLE: (lambda: _OVERRIDEABLE["enabled"], lambda on: _OVERRIDEABLE.__setitem__("enabled", on)),
}


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list[SDPBackend]:
    """The backends enabled now."""
    return [backend for backend, (enabled, _) in _SWITCHES.items() if enabled()]


def _sdpa_kernel(backends: list[SDPBackend], set_priority: bool = False) -> None:
    """Enable exactly ``backends`` (the priority order is accepted: the math path always runs)."""
    for backend, (_, enable) in _SWITCHES.items():
        enable(backend in backends)


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False) -> Iterator[dict]:
    """Context manager to select which backend to use for scaled dot product attention.

    Within the block only ``backends`` are enabled; on exit the previous switches come back,
    also after an exception. ``set_priority`` is accepted (the order has no effect here).

    >>> import tensormodes as tm
    >>> from tensormodes.nn.attention import SDPBackend, sdpa_kernel
    >>> with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
    ...     tm.backends.cuda.mem_efficient_sdp_enabled(), tm.backends.cuda.flash_sdp_enabled()
    (False, True)
    >>> tm.backends.cuda.mem_efficient_sdp_enabled()
    True
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
