"""tensormodes: a NumPy-backed tensor library speaking PyTorch's API, built around
PyTorch's ``__torch_function__`` override protocol and its modes.

>>> import tensormodes as tm
>>> x = tm.tensor([[1., 2.], [3., 4.]])
>>> (x @ x).relu().sum(dim=1, keepdim=True)
tensor([[17.],
        [37.]])
"""

from . import _C, overrides  # noqa: F401 - public namespaces
from ._api import build as _build
from ._api.tensor import Size, Tensor
from ._api.tensor_str import set_printoptions
from ._device import device
from ._dtype import (
    bfloat16,
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
)
from ._ops.random import Generator, default_generator, initial_seed, manual_seed, seed
from ._overrides import dispatch as _dispatch

_build.install()
_dispatch.PUBLIC_NAMES[device] = "tensormodes.device"  # modes see device(...) calls, under this name


def __getattr__(name: str):
    # Public functions of the op table are generated on first use (see _api/build.py).
    func = _build.public_function(name)
    globals()[name] = func
    return func


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_build.function_names()))

from . import autograd, fx, linalg, modes, nn, optim, return_types, special, testing, utils  # noqa: E402 - built on the ops generated above
from ._autograd.grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .serialization import load, save  # noqa: E402
from .utils._device import get_default_device, set_default_device  # noqa: E402
from .utils.dlpack import from_dlpack  # noqa: E402
from .version import __version__  # noqa: E402, F401 - public, not in __all__ (as torch)


def is_tensor(obj) -> bool:
    """True if ``obj`` is a Tensor (or a subclass instance).

    >>> import tensormodes as tm
    >>> tm.is_tensor(tm.ones(1)), tm.is_tensor([1])
    (True, False)
    """
    return isinstance(obj, Tensor)


_dispatch.IGNORED.update({
    is_grad_enabled, is_inference_mode_enabled, no_grad, enable_grad, set_grad_enabled, inference_mode,
    is_tensor, get_default_dtype, set_default_dtype, promote_types, can_cast, manual_seed, seed,
    initial_seed, finfo, iinfo, device, dtype, Size, Generator, set_printoptions, save, load, from_dlpack,
    set_default_device, get_default_device,
})

__all__ = [
    "Tensor", "Size", "device", "dtype", "Generator", "default_generator", "finfo", "iinfo",
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128", "half", "float", "double", "short", "int", "long", "cfloat", "cdouble",
    "get_default_dtype", "set_default_dtype", "get_default_device", "set_default_device",
    "promote_types", "can_cast", "is_tensor",
    "manual_seed", "seed", "initial_seed", "set_printoptions", "overrides", "nn", "optim", "linalg", "autograd",
    "return_types", "modes", "special", "utils", "testing", "fx", "save", "load", "from_dlpack",
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    *(name for name in _build.function_names() if not name.startswith("_")),  # private ops stay unexported
]
