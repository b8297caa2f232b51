"""tensormodes: a NumPy-backed tensor library speaking PyTorch's API, built around
PyTorch's ``__torch_function__`` override protocol and its modes.

>>> import tensormodes as tm
>>> x = tm.tensor([[1., 2.], [3., 4.]])
>>> (x @ x).relu().sum(dim=1, keepdim=True)
tensor([[17.],
        [37.]])
"""

from __future__ import annotations

import builtins

from . import _C, _codegen, _dispatch, _functions, overrides  # noqa: F401 - _C, overrides: public namespaces
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
from ._ops._common import ARRAY_SOURCES as _ARRAY_SOURCES
from ._ops.random import Generator, default_generator, initial_seed, manual_seed, seed
from ._tensor import Size, Tensor, finalize_tensor_class
from ._tensor_str import set_printoptions

_codegen.bind_tensor_type(Tensor, frozenset({
    type(None), type(Ellipsis), slice, builtins.bool, builtins.int, builtins.float, builtins.complex, str, dtype,
    device}))
_ARRAY_SOURCES[Tensor] = lambda t: t._data
finalize_tensor_class(Tensor)
_dispatch.NO_WRAP.update({Tensor.grad.__get__, Tensor._base.__get__})
_dispatch.PUBLIC_NAMES[device] = "tensormodes.device"  # modes see device(...) calls, under this name
_functions.build()


def __getattr__(name: str):
    # Public functions of the op table are generated on first use (see _functions).
    func = _functions.public_function(name)
    globals()[name] = func
    return func


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_functions.function_names()))

from . import autograd, linalg, nn, return_types, testing, utils  # noqa: E402 - built on the ops generated above
from ._autograd.grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .utils.dlpack import from_dlpack  # noqa: E402


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
    initial_seed, finfo, iinfo, device, dtype, Size, Generator, set_printoptions, from_dlpack,
})

__all__ = [
    "Tensor", "Size", "device", "dtype", "Generator", "default_generator", "finfo", "iinfo",
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128", "half", "float", "double", "short", "int", "long", "cfloat", "cdouble",
    "get_default_dtype", "set_default_dtype", "promote_types", "can_cast", "is_tensor",
    "manual_seed", "seed", "initial_seed", "set_printoptions", "overrides", "nn", "linalg", "autograd", "return_types",
    "utils", "testing", "from_dlpack",
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    *(name for name in _functions.function_names() if not name.startswith("_")),  # private ops stay unexported
]
