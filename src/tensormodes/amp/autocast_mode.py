"""``autocast``: PyTorch's automatic mixed precision on the CPU, written as a
``TorchFunctionMode``.

Inside ``autocast("cpu")`` (bfloat16 unless ``dtype=`` says float16), the calls in PyTorch's
CPU autocast lists cast their floating-point tensor arguments before running:

* the lower-precision list (matrix products, convolutions, ``linear``, ``bmm``, ``baddbmm``,
  ``addmm``, ``addbmm``, ``einsum``, ``prelu``, ``scaled_dot_product_attention`` ...) to the
  autocast dtype;
* the float32 list (losses, ``prod``, ``cdist``, ``trace``, linear-algebra decompositions and
  inverses, ``quantile``, 3-d pooling, reflection and replication padding, ``grid_sample``)
  to float32.

float64 tensors are never cast (PyTorch's rule), nor are the arguments of ``out=`` calls.
Other calls run as they are; the calls a composite makes (``nn.MultiheadAttention``'s
``linear``) are seen and cast too, as PyTorch's dispatcher-level autocast sees them. Casts
are ``Tensor.to`` calls, so gradients flow back in the original dtypes.

Differences from PyTorch: a ``TorchFunctionMode`` entered below autocast sees the cast
arguments and the ``to`` calls (PyTorch's autocast runs below every such mode); casts of
weights are not cached between calls.

>>> import tensormodes as tm
>>> with tm.autocast("cpu"):
...     y = tm.ones(1, 2) @ tm.ones(2, 3)
...     loss = tm.nn.functional.mse_loss(y, tm.zeros(1, 3))
>>> y.dtype, loss.dtype
(tensormodes.bfloat16, tensormodes.float32)
"""

from __future__ import annotations

import functools
import warnings
from contextvars import ContextVar

from .._api import namespace as tm
from .._overrides.composite import calls_public_api, run_composite
from ..modes.observing import public_name
from ..overrides import TorchFunctionMode

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "is_autocast_available"]

# PyTorch's CPU autocast lists, by the short public name (``Tensor.`` and ``nn.functional.``
# dropped; ``linalg.`` kept), checked against PyTorch 2.13's behaviour in tests/test_runtime_amp.py.
LOWER_PRECISION = frozenset({
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
    "bmm", "mm", "linalg.vecdot", "baddbmm", "addmm", "addbmm", "linear", "matmul", "einsum", "prelu",
    "scaled_dot_product_attention",
})
FLOAT32 = frozenset({
    "prod", "cdist", "trace", "inverse", "polar", "quantile", "nanquantile", "stft", "view_as_complex",
    "cholesky", "cholesky_inverse", "cholesky_solve", "pinverse", "lu_solve", "orgqr", "ormqr", "geqrf", "qr",
    "svd", "triangular_solve", "linalg.inv", "linalg.inv_ex", "linalg.svd", "linalg.svdvals", "linalg.qr",
    "linalg.eigh", "linalg.eigvalsh", "linalg.eig", "linalg.eigvals", "linalg.cholesky", "linalg.cholesky_ex",
    "linalg.solve", "linalg.lstsq", "linalg.pinv",
    "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool2d", "max_unpool3d",
    "fractional_max_pool2d", "fractional_max_pool3d", "grid_sample",
    "_reflection_pad1d", "_reflection_pad2d", "_replication_pad1d", "_replication_pad2d", "_replication_pad3d",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "poisson_nll_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "multi_margin_loss", "multilabel_margin_loss", "ctc_loss",
})
# Calls PyTorch computes natively without autocasting the products inside them: run whole.
NATIVE = frozenset({"mv", "dot", "outer", "addmv", "addr", "tensordot", "bilinear", "inner", "kron"})

_DEFAULT_DTYPES = {"cpu": tm.bfloat16, "hpu": tm.bfloat16, "xla": tm.bfloat16}

# device type -> (enabled, dtype) for the autocast regions in force (a new dict per change).
# None outside every region.
_STATE: ContextVar = ContextVar("tensormodes_autocast", default=None)
_NO_REGION: dict = {}


def _checked_device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"is_autocast_enabled(): argument 'device_type' (position 1) must be str, "
                        f"not {type(device_type).__name__}")
    kind = tm.device(device_type).type
    if kind == "meta":
        raise RuntimeError("unsupported scalarType")
    return kind


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """True inside an enabled ``autocast(device_type)`` region (``"cuda"`` when not given,
    as PyTorch's; never on here).

    >>> import tensormodes as tm
    >>> with tm.autocast("cpu"):
    ...     tm.is_autocast_enabled("cpu"), tm.is_autocast_enabled()
    (True, False)
    """
    kind = "cuda" if device_type is None else _checked_device_type(device_type)
    return (_STATE.get() or _NO_REGION).get(kind, (False, None))[0]


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts to on ``device_type`` (bfloat16 on the CPU unless set).

    >>> import tensormodes as tm
    >>> tm.get_autocast_dtype("cpu")
    tensormodes.bfloat16
    """
    kind = _checked_device_type(device_type)
    entry = (_STATE.get() or _NO_REGION).get(kind)
    return entry[1] if entry is not None else _DEFAULT_DTYPES.get(kind, tm.float16)


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast(device_type)`` is supported (all device types but ``"meta"``).

    >>> import tensormodes as tm
    >>> tm.amp.is_autocast_available("cpu"), tm.amp.is_autocast_available("meta")
    (True, False)
    """
    return tm.device(device_type).type != "meta"


class autocast:  # noqa: N801 - PyTorch's spelling
    """Context manager (and decorator) running its region in mixed precision; see the module
    docstring for what is cast. ``autocast("cuda")`` is disabled with PyTorch's warning (there
    is no CUDA here); on the CPU, dtypes other than bfloat16 and float16 disable it with
    PyTorch's warning. ``enabled=False`` turns autocast off inside an enabled region.

    >>> import tensormodes as tm
    >>> with tm.autocast("cpu", dtype=tm.float16):
    ...     with tm.autocast("cpu", enabled=False):
    ...         inner = (tm.ones(1, 1) @ tm.ones(1, 1)).dtype
    ...     outer = (tm.ones(1, 1) @ tm.ones(1, 1)).dtype
    >>> inner, outer
    (tensormodes.float32, tensormodes.float16)
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _checked_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled and self.device == "cuda":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=2)
            enabled = False
        if enabled and self.device == "cpu" and self.fast_dtype not in (tm.bfloat16, tm.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of tensormodes.bfloat16, tensormodes.float16 currently.",
                          UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled
        self._entered: list = []

    def __enter__(self):
        state = dict(_STATE.get() or _NO_REGION)
        state[self.device] = (self._enabled, self.fast_dtype)
        mode = AutocastMode(state)
        mode.__enter__()
        self._entered.append(mode)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self._entered.pop().__exit__(exc_type, exc_value, traceback)

    def __call__(self, func):
        """Use as a decorator: ``func`` runs inside this autocast region."""
        @functools.wraps(func)
        def autocast_region(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return autocast_region


def _short_name(func) -> str:
    name = _SHORT_NAMES.get(func)
    if name is None:
        name = public_name(func).removeprefix("tensormodes.")
        name = name.removeprefix("Tensor.").removeprefix("nn.functional.")
        name = _SHORT_NAMES[func] = _DUNDERS.get(name, name)
    return name


_SHORT_NAMES: dict = {}
_DUNDERS = {"__matmul__": "matmul", "__rmatmul__": "matmul"}


def _cast(value, dtype):
    """``value`` with its eligible tensors (floating point, not float64, on the CPU) cast to ``dtype``."""
    if isinstance(value, tm.Tensor):
        if value.dtype is not dtype and value.is_floating_point() and value.dtype is not tm.float64 \
                and not value.is_meta:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)) and not isinstance(value, tm.Size):
        return type(value)(_cast(v, dtype) for v in value)
    return value


class AutocastMode(TorchFunctionMode):
    """The mode one ``autocast`` region pushes: it holds the region's autocast state while it is
    entered, and casts the inputs of the listed calls while the CPU state is enabled."""

    def __init__(self, state: dict) -> None:
        self.state = state

    def _scoped_context_vars(self) -> tuple:
        return ((_STATE, self.state),)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Cast the arguments of a listed call and run it; let composites' inner calls come back."""
        kwargs = kwargs or {}
        enabled, dtype = (_STATE.get() or _NO_REGION).get("cpu", (False, None))
        if not enabled or kwargs.get("out") is not None:
            return func(*args, **kwargs)
        name = _short_name(func)
        if name in LOWER_PRECISION:
            return func(*_cast(args, dtype), **{k: _cast(v, dtype) for k, v in kwargs.items()})
        if name in FLOAT32:
            return func(*_cast(args, tm.float32), **{k: _cast(v, tm.float32) for k, v in kwargs.items()})
        if name not in NATIVE and calls_public_api(func):
            return run_composite(self, func, args, kwargs, True)
        return func(*args, **kwargs)
