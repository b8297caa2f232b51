"""The legacy tensor types: ``tensormodes.FloatTensor``, ``LongTensor`` ... (PyTorch's
``torch.FloatTensor``), each a constructor of CPU tensors of one dtype, and a type that
``isinstance`` answers for by dtype, as PyTorch's ``tensortype`` does.

>>> import tensormodes as tm
>>> tm.FloatTensor([1, 2]), tm.LongTensor(2, 3).shape
(tensor([1., 2.]), tensormodes.Size([2, 3]))
>>> isinstance(tm.ones(1), tm.FloatTensor), isinstance(tm.ones(1), tm.LongTensor)
(True, False)
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .. import _dtype as dt
from .._checkpoints.storage import UntypedStorage
from .._device import device as make_device
from . import namespace as tm

__all__ = ["tensortype", "LEGACY_TYPES", "typename", "is_storage"]

# The C++ names PyTorch's TensorOptions mismatch message spells dtypes with.
_CPP_NAMES = {
    dt.float32: "float", dt.float64: "double", dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16",
    dt.int64: "long int", dt.int32: "int", dt.int16: "short int", dt.int8: "signed char",
    dt.uint8: "unsigned char", dt.bool: "bool",
}

_OVERLOADS = ("but expected one of:\n * (*, tensormodes.device device = None)\n * (tensormodes.Storage storage)\n"
              " * (Tensor other)\n * (tuple of ints size, *, tensormodes.device device = None)\n"
              " * (object data, *, tensormodes.device device = None)\n")


def _options(dtype) -> str:
    return (f"TensorOptions(dtype={_CPP_NAMES[dtype]}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def _argument_types(args: tuple, kwargs: dict) -> str:
    names = [type(a).__name__ for a in args]
    names += [f"{k}={'tensormodes.' if type(v).__module__.startswith('tensormodes') else ''}{type(v).__name__}"
              for k, v in kwargs.items()]
    return ", ".join(names)


class tensortype(type):  # noqa: N801 - PyTorch's spelling
    """The class of the legacy tensor types: calling one makes a CPU tensor of its dtype
    (``FloatTensor([1, 2])`` from data, ``FloatTensor(2, 3)`` uninitialised of a size), and
    ``isinstance(t, FloatTensor)`` is True for every CPU tensor of that dtype."""

    dtype: dt.dtype
    is_cuda = False
    is_sparse = False

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, tm.Tensor) and instance.dtype is cls.dtype and not instance.is_meta

    def __call__(cls, *args, **kwargs):
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({_argument_types(args, kwargs)}), {_OVERLOADS}")
        if device is not None:
            kind = device.type if isinstance(device, make_device) else make_device(device).type
            if kind != "cpu":
                raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {kind} was passed")
        return _construct(cls.dtype, args)


tensortype.__module__ = "tensormodes"


def _construct(dtype: dt.dtype, args: tuple):
    if not args:
        return tm.empty(0, dtype=dtype)
    first = args[0]
    if len(args) == 1 and isinstance(first, tm.Tensor):
        if first.dtype is not dtype:
            raise TypeError(f"expected {_options(dtype)} (got {_options(first.dtype)})")
        return first.view_as(first)  # an alias of the same storage, as PyTorch's
    if len(args) == 1 and isinstance(first, tm.Size):
        return tm.empty(first, dtype=dtype)
    if isinstance(first, Integral) and not isinstance(first, bool):
        for position, arg in enumerate(args[1:], start=2):
            if not isinstance(arg, Integral) or isinstance(arg, bool):
                raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {position} with error "
                                f"\"type must be tuple of ints,but got {type(arg).__name__}\"")
        return tm.empty(*args, dtype=dtype)
    if len(args) == 1:
        if isinstance(first, str):
            raise TypeError(f"new(): invalid data type '{type(first).__name__}'")
        if isinstance(first, (list, tuple, np.ndarray)):
            return tm.tensor(first, dtype=dtype)
        raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
    raise TypeError(f"new() received an invalid combination of arguments - got ({_argument_types(args, {})}), "
                    f"{_OVERLOADS}")


def _make_type(dtype: dt.dtype, name: str) -> tensortype:
    return tensortype(name, (), {"__module__": "tensormodes", "__qualname__": name, "dtype": dtype,
                                 "__doc__": f"CPU tensors of dtype {dtype!r} (PyTorch's legacy ``torch.{name}``)."})


# name -> type, in PyTorch's set of legacy CPU tensor types.
LEGACY_TYPES = {
    name: _make_type(dtype, name) for name, dtype in (
        ("FloatTensor", dt.float32), ("DoubleTensor", dt.float64), ("HalfTensor", dt.float16),
        ("BFloat16Tensor", dt.bfloat16), ("ByteTensor", dt.uint8), ("CharTensor", dt.int8),
        ("ShortTensor", dt.int16), ("IntTensor", dt.int32), ("LongTensor", dt.int64), ("BoolTensor", dt.bool))
}


def typename(obj) -> str:
    """The name of ``obj``'s type as PyTorch spells it: a tensor's legacy type name
    (``obj.type()``), else ``module.qualname`` of ``obj`` (a class or function) or of its class.

    >>> import tensormodes as tm
    >>> tm.typename(tm.zeros(1)), tm.typename(1), tm.typename(tm.nn.Linear)
    ('tensormodes.FloatTensor', 'int', 'tensormodes.nn.modules.linear.Linear')
    """
    if isinstance(obj, tm.Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj) -> bool:
    """True if ``obj`` is a storage object (here: the ``UntypedStorage`` a ``load``'s
    ``map_location`` callable receives); a tensor is not one.

    >>> import tensormodes as tm
    >>> tm.is_storage(tm.zeros(1))
    False
    """
    return type(obj) is UntypedStorage
