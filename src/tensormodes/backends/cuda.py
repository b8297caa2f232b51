"""``tensormodes.backends.cuda``: CUDA's switches (``matmul.allow_tf32`` ...), recorded with
PyTorch's defaults and validation; there is no CUDA here (``is_built()`` is False).
``matmul.allow_tf32`` is ``tensormodes.get_float32_matmul_precision() != "highest"``, and
setting it sets that precision, as in PyTorch.

>>> import tensormodes as tm
>>> tm.backends.cuda.matmul.allow_tf32
False
>>> tm.backends.cuda.matmul.allow_tf32 = True; tm.get_float32_matmul_precision()
'high'
>>> tm.backends.cuda.matmul.allow_tf32 = False
"""

from __future__ import annotations

from .._runtime import SETTINGS

__all__ = ["matmul", "is_built", "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled",
           "enable_cudnn_sdp"]


def is_built() -> bool:
    """False: this library is not built with CUDA."""
    return False


class cuBLASModule:  # noqa: N801 - PyTorch's spelling
    """``backends.cuda.matmul``: cuBLAS's switches. Unknown attributes raise PyTorch's error."""

    _SETTERS = {"allow_tf32": "set_allow_tf32_cublas",
                "allow_fp16_reduced_precision_reduction": "set_allow_fp16_reduction_cublas",
                "allow_bf16_reduced_precision_reduction": "set_allow_bf16_reduction_cublas"}

    def __init__(self) -> None:
        object.__setattr__(self, "_reductions", {"allow_fp16_reduced_precision_reduction": True,
                                                  "allow_bf16_reduced_precision_reduction": True})

    def __getattr__(self, name: str):
        if name == "allow_tf32":
            return SETTINGS.float32_matmul_precision != "highest"
        if name in self._reductions:
            return self._reductions[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        setter = self._SETTERS.get(name)
        if setter is None:
            raise AttributeError(f"Unknown attribute {name}")
        if type(value) is not bool:
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        if name == "allow_tf32":
            SETTINGS.float32_matmul_precision = "high" if value else "highest"
        else:
            self._reductions[name] = value


matmul = cuBLASModule()

# Which scaled_dot_product_attention kernels PyTorch may pick; on a CPU the flash kernel and the math path run.
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be used (on a CPU, where its conditions hold)."""
    return _SDP["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allows or forbids the flash attention kernel."""
    _SDP["flash"] = enabled


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be used (recorded only)."""
    return _SDP["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allows or forbids the memory-efficient attention kernel (recorded only)."""
    _SDP["mem_efficient"] = enabled


def math_sdp_enabled() -> bool:
    """Whether the math attention path may be used (where the flash kernel may not)."""
    return _SDP["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Allows or forbids the math attention path."""
    _SDP["math"] = enabled


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be used (recorded only)."""
    return _SDP["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allows or forbids the cuDNN attention kernel (recorded only)."""
    _SDP["cudnn"] = enabled
