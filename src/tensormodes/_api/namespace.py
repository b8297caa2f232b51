"""The core of the ``tensormodes`` namespace: every public function of the op table
(generated on first access), ``Tensor``, dtypes, devices, grad mode, seeds and printing.

The package face (``tensormodes/__init__.py``) re-exports it beside the subpackages. Modules
of the public API that the face itself imports (``nn``, ``optim``, ``fx``, ``utils`` ...)
use this module as ``tm`` (``tm.zeros(...)`` at call time) instead of the package, so that
imports go one way and never back up to the face.

>>> from tensormodes._api import namespace as tm
>>> tm.zeros(2).add(1), tm.float32
(tensor([1., 1.]), tensormodes.float32)
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Sequence

from .._autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .._device import device
from .._dtype import (
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
from .._ops.memory_factories import buffer_array
from .._ops.random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .._overrides import dispatch as _dispatch
from .._tensor_base import wrap_array
from . import build as _build
from .tensor import Size, Tensor
from .tensor_str import set_printoptions

__all__ = [
    "Tensor", "Size", "device", "dtype", "Generator", "default_generator", "get_rng_state", "set_rng_state",
    "finfo", "iinfo",
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128", "half", "float", "double", "short", "int", "long", "cfloat", "cdouble",
    "get_default_dtype", "set_default_dtype", "promote_types", "can_cast", "is_tensor",
    "manual_seed", "seed", "initial_seed", "set_printoptions", "broadcast_shapes",
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    "detach_", "resize_as_", "frombuffer",
]  # and every public function of the op table, generated on first access

_dispatch.PUBLIC_NAMES[device] = "tensormodes.device"  # modes see device(...) calls, under this name


def is_tensor(obj) -> builtins.bool:
    """True if ``obj`` is a Tensor (or a subclass instance).

    >>> import tensormodes as tm
    >>> tm.is_tensor(tm.ones(1)), tm.is_tensor([1])
    (True, False)
    """
    return isinstance(obj, Tensor)


def broadcast_shapes(*shapes) -> Size:
    """The shape tensors of the given ``shapes`` broadcast to (ints stand for 1-D shapes), without
    making any tensor; PyTorch's Python function, which modes do not see either.

    >>> import tensormodes as tm
    >>> tm.broadcast_shapes((2, 1), (3,), 1)
    tensormodes.Size([2, 3])
    """
    given = tuple((shape,) if isinstance(shape, builtins.int) else shape for shape in shapes if shape is not None)
    if not given:
        return Size([])
    for shape in given:
        if not isinstance(shape, Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * builtins.max(builtins.len(shape) for shape in given)
    for position, shape in builtins.enumerate(given):
        for index in builtins.range(-1, -1 - builtins.len(shape), -1):
            if shape[index] == common[index]:
                continue
            if common[index] == 1:
                if shape[index] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[index] = shape[index]
            if shape[index] != 1 and common[index] != shape[index]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[index]} at {index}! "
                                   f"Mismatching argument at index {position} had {shape}; but expected shape "
                                   f"should be broadcastable to {common}")
    for position, size in builtins.enumerate(common):
        if not isinstance(size, builtins.int):
            raise TypeError(f"tensormodes.Size() takes an iterable of 'int' (item {position} is "
                            f"'{type(size).__name__}')")
    return Size(common)


def frombuffer(buffer, *, dtype: dtype, count: builtins.int = -1, offset: builtins.int = 0,
               requires_grad: builtins.bool = False) -> Tensor:
    """A 1-D tensor over the memory of ``buffer`` (any object of the buffer protocol), from byte
    ``offset``, of ``count`` elements of ``dtype`` (-1: to the end). The tensor shares the memory:
    writes to either side show on the other. A read-only buffer (``bytes``) is copied, with
    PyTorch's warning. Like PyTorch's, no mode sees the call.

    >>> import tensormodes as tm
    >>> tm.frombuffer(bytearray(b"abcd"), dtype=tm.int8, offset=1, count=2)
    tensor([98, 99], dtype=tensormodes.int8)
    """
    result = wrap_array(buffer_array(buffer, dtype, count, offset))
    return result.requires_grad_(True) if requires_grad else result


_composite = _build.composite("tensormodes", pass_defaults=False)


@_composite
def detach_(input: Tensor) -> Tensor:
    """``input.detach_()``: ``input`` detached from the graph in place, a leaf.

    >>> import tensormodes as tm
    >>> y = tm.ones(2, requires_grad=True) * 2
    >>> tm.detach_(y).requires_grad
    False
    """
    return input.detach_()


@_composite
def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """``input.resize_as_(the_template)``: ``input`` given ``the_template``'s shape in place.

    >>> import tensormodes as tm
    >>> tm.resize_as_(tm.arange(4), tm.zeros(2, 2)).shape
    tensormodes.Size([2, 2])
    """
    return input.resize_as_(the_template, memory_format=memory_format)


def package():
    """The ``tensormodes`` package itself, read at call time: for tools that name any public
    callable by its full path (``tensormodes.nn.functional.relu``) — fx's generated code, meta
    records. The package imports those tools, so they read it here instead of importing it.

    >>> import tensormodes
    >>> package() is tensormodes
    True
    """
    return sys.modules[__name__.partition(".")[0]]


def __getattr__(name: str):
    # Public functions of the op table are generated on first use (see build.py).
    func = _build.public_function(name)
    globals()[name] = func
    return func


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_build.function_names()))
