"""tensormodes: a NumPy-backed tensor library speaking PyTorch's API, built around
PyTorch's ``__torch_function__`` override protocol and its modes.

This face imports its layers' public parts in order: the core namespace (``_api/namespace.py``:
the op functions, ``Tensor``, dtypes, grad mode ...), then the subpackages built on it.

>>> import tensormodes as tm
>>> x = tm.tensor([[1., 2.], [3., 4.]])
>>> (x @ x).relu().sum(dim=1, keepdim=True)
tensor([[17.],
        [37.]])
"""

from types import ModuleType as _ModuleType

from . import (  # noqa: F401 - public namespaces (and einops' backend, defined when einops is installed)
    _C,
    _decomp,
    _einops,
    accelerator,
    amp,
    autograd,
    backends,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    fx,
    jit,
    library,
    linalg,
    modes,
    mps,
    nn,
    onnx,
    ops,
    optim,
    overrides,
    profiler,
    random,
    return_types,
    special,
    testing,
    utils,
)
from ._api import build as _build
from ._api import namespace as _namespace
from ._api.namespace import (  # noqa: F401 - re-exported: in __all__ through the namespace's own
    Generator,
    Size,
    Tensor,
    bfloat16,
    bool,
    broadcast_shapes,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    default_generator,
    detach_,
    device,
    double,
    dtype,
    enable_grad,
    finfo,
    float,
    float16,
    float32,
    float64,
    frombuffer,
    get_default_dtype,
    get_rng_state,
    half,
    iinfo,
    inference_mode,
    initial_seed,
    int,
    int8,
    int16,
    int32,
    int64,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_tensor,
    long,
    manual_seed,
    no_grad,
    promote_types,
    resize_as_,
    seed,
    set_default_dtype,
    set_grad_enabled,
    set_printoptions,
    set_rng_state,
    short,
    uint8,
)
from ._api.tensor_types import LEGACY_TYPES as _LEGACY_TYPES
from ._api.tensor_types import is_storage, tensortype, typename
from ._autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from ._correlation import COMPOSITES as _CORRELATION
from ._dispatch.aten import Tag  # noqa: F401 - PyTorch's torch.Tag
from ._finite_differences import COMPOSITES as _FINITE_DIFFERENCES
from ._histograms import COMPOSITES as _HISTOGRAMS
from ._integration import COMPOSITES as _INTEGRATION
from ._linalg_legacy import COMPOSITES as _LINALG_LEGACY
from ._linalg_legacy import REMOVED as _LINALG_REMOVED
from ._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from ._overrides import dispatch as _dispatch
from ._runtime import (
    are_deterministic_algorithms_enabled,
    compile,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from ._symbolic import SymBool, SymFloat, SymInt, sym_float
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .func import vmap
from .nn._functional._common import TOP_LEVEL as _TOP_LEVEL
from .serialization import load, save
from .utils._device import get_default_device, set_default_device
from .utils.dlpack import from_dlpack
from .version import __version__  # noqa: F401 - public, not in __all__ (as torch)

# FloatTensor, LongTensor ...: PyTorch's legacy tensor types.
globals().update(_LEGACY_TYPES)
# ctc_loss, relu_, rrelu_ ...: functions of this namespace defined beside nn.functional's, which serve
# or share them (PyTorch's F.relu_ is torch.relu_).
globals().update(_TOP_LEVEL)
# cov, corrcoef: PyTorch's composites, over public ops.
globals().update(_CORRELATION)
# adjoint, qr, chain_matmul ...: PyTorch's older linear-algebra composites; symeig, eig ...: its stubs that raise.
globals().update(_LINALG_LEGACY)
globals().update(_LINALG_REMOVED)
# cumulative_trapezoid: PyTorch's composite, over public ops.
globals().update(_INTEGRATION)
globals().update(_HISTOGRAMS)
globals().update(_FINITE_DIFFERENCES)


def __getattr__(name: str):
    # Public functions of the op table are generated on first use (see _api/build.py).
    func = _namespace.__getattr__(name)
    globals()[name] = func
    return func


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_build.function_names()))


__all__ = [
    *_namespace.__all__,  # the core namespace's names (imported above)
    "get_default_device", "set_default_device", "overrides", "nn", "random", "optim", "linalg", "autograd",
    "return_types", "modes", "special", "fft", "distributions", "distributed", "onnx", "utils", "testing", "fx",
    "func", "vmap",
    "save", "load", "from_dlpack", "ops", "Tag",
    "SymInt", "SymFloat", "SymBool", "sym_float",  # unbacked symbolic scalars (make_fx's fake tracing)
    # runtime and devices (CPU-only answers)
    "cuda", "cpu", "mps", "accelerator", "backends", "amp", "jit", "profiler",
    "set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "compile", "set_warn_always",
    "is_warn_always_enabled",
    "autocast", "is_autocast_enabled", "get_autocast_dtype",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    "memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "layout", "strided",
    "tensortype", "typename", "is_storage", *_LEGACY_TYPES, *_TOP_LEVEL, *_CORRELATION, *_INTEGRATION, *_HISTOGRAMS,
    *_FINITE_DIFFERENCES,
    *_LINALG_LEGACY, *_LINALG_REMOVED,
    *(name for name in _build.function_names() if not name.startswith("_")),  # private ops stay unexported
]

# (sym_float stays in the ignored list: PyTorch's is overridable, ours takes no part in __torch_function__)
_SYMBOLIC = ("SymInt", "SymFloat", "SymBool")

# PyTorch's get_ignored_functions(): the face's callables that are neither classes of
# tensors nor generated op functions (those take part in the protocol).
_dispatch.IGNORED.update(
    value for name, value in globals().items()
    if name in __all__ and callable(value) and not isinstance(value, _ModuleType) and value is not Tensor
    and name not in set(_build.function_names()) and name not in _TOP_LEVEL and name not in _CORRELATION
    and name not in _LINALG_LEGACY and name not in _SYMBOLIC  # (PyTorch ignores none of these either)
    and (isinstance(value, type) or value not in _dispatch.PUBLIC_NAMES))  # (composites: detach_ ...; device stays)
