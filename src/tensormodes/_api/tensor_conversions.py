"""The Tensor layer's conversions: ``to``, ``type``, ``cpu``, the dtype shorthands (``float()``,
``long()`` ...) and the ``new_*`` factories — a part of ``Tensor``'s class body kept in its own
file (``Tensor`` inherits it; ``build.install()`` replaces each declared method on ``Tensor``
by its dispatching callable).

>>> import tensormodes as tm
>>> x = tm.tensor([1, 2])
>>> x.float().dtype, x.new_zeros(3).dtype, x.type()
(tensormodes.float32, tensormodes.int64, 'tensormodes.LongTensor')
"""

from __future__ import annotations

import numbers
import operator
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from .._device import check_compute_device
from .._device import device as make_device
from .._memory_format import preserve_format
from .._meta_array import MetaArray, meta_like, no_data_error
from .._ops.common import cpp_type_name, ops, scalar_type_name
from .._tensor_base import TensorBase, set_requires_grad, wrap_array
from .declarations import tensor_api

if TYPE_CHECKING:
    from .tensor import Tensor


class TensorConversions:
    """``Tensor``'s conversion methods (see the module docstring)."""

    __slots__ = ()
    @tensor_api("args", pure=True)
    def to(self, *args, **kwargs):
        """This tensor with another dtype (a copy), or itself when nothing changes.

        Accepts PyTorch's forms: ``to(dtype)``, ``to(device, dtype)``, ``to(other)``,
        with keywords ``dtype``, ``device``, ``non_blocking``, ``copy``, ``memory_format``.

        >>> import tensormodes as tm
        >>> x = tm.tensor([1, 2])
        >>> x.to(tm.float64).dtype, x.to(x) is x, x.to("cpu") is x
        (tensormodes.float64, True, True)
        """
        dtype, copy, device = _parse_to(self, args, kwargs)
        if device is not None and (device.type == "meta") != (type(self._data) is MetaArray):
            return _moved(self, device, dtype)
        return _converted(self, dtype, copy)

    @tensor_api()
    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """With no argument, the tensor type name (``'tensormodes.FloatTensor'``); else ``to(dtype)``.

        >>> import tensormodes as tm
        >>> tm.zeros(1).type(), tm.zeros(1).type(tm.int64).dtype
        ('tensormodes.FloatTensor', tensormodes.int64)
        """
        if dtype is None:
            return f"tensormodes.{_TYPE_NAMES[dt.NP_TO_DTYPE[self._data.dtype]]}"
        if isinstance(dtype, type) and type(getattr(dtype, "dtype", None)) is dt.dtype:
            dtype = dtype.dtype  # a legacy type: x.type(tm.DoubleTensor)
        if isinstance(dtype, str):
            by_name = {f"tensormodes.{v}": k for k, v in _TYPE_NAMES.items()}
            if dtype not in by_name:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = by_name[dtype]
        return _converted(self, dtype, False)

    @tensor_api("other", pure=True)
    def type_as(self, other):
        """This tensor converted to ``other``'s dtype.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 2]).type_as(tm.zeros(1)).dtype
        tensormodes.float32
        """
        if not isinstance(other, TensorBase):
            raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return _converted(self, dt.NP_TO_DTYPE[other._data.dtype], False)

    @tensor_api()
    def cpu(self, memory_format=None):
        """The tensor on the CPU: itself.

        >>> import tensormodes as tm
        >>> x = tm.zeros(1); x.cpu() is x
        True
        """
        if type(self._data) is MetaArray:
            raise no_data_error("Tensor.cpu()")
        return self

    @tensor_api()
    def cuda(self, device=None, non_blocking: bool = False, memory_format=preserve_format):
        """A copy on a CUDA device: raises as PyTorch built without CUDA does (this library
        computes on the CPU).

        >>> import tensormodes as tm
        >>> tm.zeros(1).cuda()
        Traceback (most recent call last):
        AssertionError: Torch not compiled with CUDA enabled
        """
        if isinstance(device, numbers.Integral) and not isinstance(device, bool):
            if device < 0:
                raise RuntimeError("Device index must not be negative")
            raise RuntimeError(NO_ACCELERATOR)
        if device is not None and check_device_type(device) != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        raise AssertionError("Torch not compiled with CUDA enabled")

    @tensor_api(returns_value=True)
    def get_device(self) -> int:
        """The index of the accelerator the tensor lives on; ``-1`` for CPU (and meta) tensors.

        >>> import tensormodes as tm
        >>> tm.zeros(1).get_device()
        -1
        """
        return -1

    @tensor_api(returns_value=True)
    def is_pinned(self, device=None) -> bool:
        """False: no tensor here is in page-locked memory (there is no accelerator to copy to).

        >>> import tensormodes as tm
        >>> tm.zeros(1).is_pinned()
        False
        """
        return False

    @tensor_api()
    def pin_memory(self, device=None):
        """Raises as PyTorch does without an accelerator: pinned memory needs one.

        >>> import tensormodes as tm
        >>> tm.zeros(1).pin_memory()
        Traceback (most recent call last):
        RuntimeError: Cannot access accelerator device when none is available.
        """
        raise RuntimeError(NO_ACCELERATOR)

    @tensor_api()
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False, layout=None,
                   pin_memory: bool = False):
        """A new tensor from ``data``, with this tensor's dtype unless ``dtype`` is given.

        >>> import tensormodes as tm
        >>> tm.zeros(1, dtype=tm.float64).new_tensor([1, 2]).dtype
        tensormodes.float64
        """
        array = _as_array(data, dtype or dt.NP_TO_DTYPE[self._data.dtype]).copy()
        return _new_like(self, array.shape, array.dtype, device, requires_grad, lambda shape, np_dtype: array)

    @tensor_api("args", "kwargs", leaf=False)
    def new(self, *args, **kwargs):
        """PyTorch's legacy constructor, with this tensor's dtype and device: ``x.new()`` (empty),
        ``x.new(2, 3)`` or ``x.new(size=...)`` / ``x.new(Size(...))`` (uninitialized),
        ``x.new([1, 2])`` (data, converted to the dtype), ``x.new(other)`` (``other`` itself as an
        alias, which must have this tensor's dtype and device). ``device=`` may only name this
        tensor's device type. Prefer ``new_empty``, ``new_tensor``.

        >>> import tensormodes as tm
        >>> x = tm.tensor([1, 2], dtype=tm.int32)
        >>> x.new([1.7, 2]), x.new(2, 3).shape, x.new().shape
        (tensor([1, 2], dtype=tensormodes.int32), tensormodes.Size([2, 3]), tensormodes.Size([0]))
        """
        form, value = _legacy_new_form(self, args, kwargs)
        if form == "tensor":
            return ops.ops.aten.alias.default(value)
        if form == "data":
            return ops.tensor(value, dtype=self.dtype, device=self.device)
        return ops.empty(value, dtype=self.dtype, device=self.device)

    @tensor_api(pure=True)
    def float(self, memory_format=None):
        """``self.to(float32)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).float().dtype
        tensormodes.float32
        """
        return _converted(self, dt.float32, False)

    @tensor_api(pure=True)
    def double(self, memory_format=None):
        """``self.to(float64)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).double().dtype
        tensormodes.float64
        """
        return _converted(self, dt.float64, False)

    @tensor_api(pure=True)
    def half(self, memory_format=None):
        """``self.to(float16)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).half().dtype
        tensormodes.float16
        """
        return _converted(self, dt.float16, False)

    @tensor_api(pure=True)
    def bfloat16(self, memory_format=None):
        """``self.to(bfloat16)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).bfloat16().dtype
        tensormodes.bfloat16
        """
        return _converted(self, dt.bfloat16, False)

    @tensor_api(pure=True)
    def int(self, memory_format=None):
        """``self.to(int32)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).int().dtype
        tensormodes.int32
        """
        return _converted(self, dt.int32, False)

    @tensor_api(pure=True)
    def long(self, memory_format=None):
        """``self.to(int64)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).long().dtype
        tensormodes.int64
        """
        return _converted(self, dt.int64, False)

    @tensor_api(pure=True)
    def short(self, memory_format=None):
        """``self.to(int16)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).short().dtype
        tensormodes.int16
        """
        return _converted(self, dt.int16, False)

    @tensor_api(pure=True)
    def bool(self, memory_format=None):
        """``self.to(bool)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).bool().dtype
        tensormodes.bool
        """
        return _converted(self, dt.bool, False)

    @tensor_api(pure=True)
    def byte(self, memory_format=None):
        """``self.to(uint8)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).byte().dtype
        tensormodes.uint8
        """
        return _converted(self, dt.uint8, False)

    @tensor_api(pure=True)
    def char(self, memory_format=None):
        """``self.to(int8)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).char().dtype
        tensormodes.int8
        """
        return _converted(self, dt.int8, False)

    @tensor_api(pure=True)
    def cfloat(self, memory_format=None):
        """``self.to(complex64)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).cfloat().dtype
        tensormodes.complex64
        """
        return _converted(self, dt.complex64, False)

    @tensor_api(pure=True)
    def cdouble(self, memory_format=None):
        """``self.to(complex128)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).cdouble().dtype
        tensormodes.complex128
        """
        return _converted(self, dt.complex128, False)


# PyTorch's words when an accelerator (CUDA, MPS ...) is asked for and none exists.
NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def check_device_type(device) -> str:
    """The type of ``device`` (a ``device`` or a string), with PyTorch's errors for bad strings."""
    return device.type if isinstance(device, make_device) else make_device(device).type


# "tensormodes.FloatTensor" ...: the legacy tensor type names ``Tensor.type()`` uses.
_TYPE_NAMES = {d: f"{scalar_type_name(d)}Tensor" for d in dt.ALL_DTYPES}


def _parse_to(t: Tensor, args: tuple, kwargs: dict):
    """PyTorch's ``to`` overloads -> (target dtype or None, copy)."""
    if not kwargs and len(args) == 1 and type(args[0]) is dt.dtype:
        return args[0], False, None  # x.to(dtype): the common call
    unknown = set(kwargs) - {"dtype", "device", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword "
                        f"{sorted(unknown)[0]!r}")
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    rest = list(args)
    if rest and isinstance(rest[0], TensorBase):
        other = rest.pop(0)
        dtype = dt.NP_TO_DTYPE[other._data.dtype]
    elif rest and not isinstance(rest[0], dt.dtype):
        device = rest.pop(0)
    if rest and isinstance(rest[0], dt.dtype):
        dtype = rest.pop(0)
    if len(rest) > 2 or any(not isinstance(r, bool) for r in rest):
        raise TypeError(f"to() received an invalid combination of arguments - got {args!r}")
    if device is not None:
        device = check_compute_device(device)
    copy = kwargs.get("copy", rest[1] if len(rest) > 1 else False)
    return dtype, copy, device


def _moved(t: Tensor, device, dtype) -> Tensor:
    """``t`` on the other device: to meta keeps only the metadata; from meta there is no data."""
    if device.type != "meta":
        raise no_data_error(f"Tensor.to({device.type!r})")
    return ops._to_copy(t, dtype=dtype, device=device)


def _converted(t: Tensor, dtype, copy: bool) -> Tensor:
    if dtype is not None and type(dtype) is not dt.dtype:
        raise TypeError(f"expected a tensormodes.dtype, got {type(dtype).__name__}")
    if (dtype is None or dtype._np == t._data.dtype) and not copy:
        return t
    return ops._to_copy(t, dtype=dtype)  # an op: autograd records it (ToCopyBackward0)


def _dtype_or(t: Tensor, dtype) -> np.dtype:
    if dtype is None:
        return t._data.dtype
    if type(dtype) is not dt.dtype:
        raise TypeError(f"argument 'dtype' must be tensormodes.dtype, not {type(dtype).__name__}")
    return dtype._np


def _new_like(t: Tensor, shape: tuple, dtype, device, requires_grad: bool, make) -> Tensor:
    """A new tensor of ``shape`` (``make(shape, numpy_dtype)`` gives its data) on ``device``, or on
    ``t``'s device when None: ``new_*`` keep meta tensors meta."""
    np_dtype = dtype if isinstance(dtype, np.dtype) else _dtype_or(t, dtype)
    if device is not None:
        on_meta = check_compute_device(device).type == "meta"
    else:
        on_meta = type(t._data) is MetaArray
    result = wrap_array(meta_like(shape, np_dtype) if on_meta else make(shape, np_dtype))
    if requires_grad:
        set_requires_grad(result, True)
    return result


# -- the legacy constructor ``Tensor.new`` -----------------------------------------------------

_NEW_FORMS = ("new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
              " * (*, tensormodes.device device = None)\n"
              " * (Tensor other)\n"
              " * (tuple of ints size, *, tensormodes.device device = None)\n"
              " * (object data, *, tensormodes.device device = None)\n")


def _python_type_name(value) -> str:
    """A type as PyTorch's argument errors name it: ``float``, ``numpy.float64``, ``Tensor``."""
    cls = type(value)
    if cls.__module__ == "numpy" or (cls.__module__.startswith("tensormodes") and not isinstance(value, TensorBase)):
        return f"{cls.__module__.split('.')[0]}.{cls.__name__}"
    return cls.__name__


def _is_size_item(value) -> bool:
    """An int a size may hold: Python's or NumPy's (not a bool), or an integer tensor of one element."""
    if isinstance(value, bool | np.bool_ | float | complex | str | np.floating):
        return False
    if isinstance(value, TensorBase):
        return value._data.dtype.kind in "iu" and value._data.size == 1
    if isinstance(value, np.ndarray):  # an array is data, unless it is one integer
        return value.ndim == 0 and value.dtype.kind in "iu"
    return hasattr(type(value), "__index__")


def _legacy_new_form(t: Tensor, args: tuple, kwargs: dict) -> tuple[str, object]:
    """Which of PyTorch's forms a ``Tensor.new`` call is — ``("tensor", other)``, ``("data", data)``
    or ``("size", shape)`` — checked with PyTorch's errors."""
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    size_type = type(t.shape)  # ``Size``, defined with ``Tensor`` (a Size is a size, another sequence data)
    got = ", ".join([*map(_python_type_name, args), *(f"{k}={_python_type_name(v)}" for k, v in kwargs.items())])
    got += "" if args else ", "  # PyTorch's spelling: ``(size=int, )``
    if set(kwargs) - {"size", "data", "other"} or len(kwargs) > 1 or (kwargs and args):
        raise TypeError(_NEW_FORMS.format(got=got))
    if device is not None and make_device(device).type != t.device.type:
        raise RuntimeError(f"legacy constructor expects device type: {t.device.type} but device type: "
                           f"{make_device(device).type} was passed")
    if "other" in kwargs or (len(args) == 1 and isinstance(args[0], TensorBase)):
        other = kwargs.get("other", args[0] if args else None)
        if device is not None:
            raise RuntimeError("Legacy tensor new of the form tensor.new(tensor, device=device) is not supported.  "
                               "Use tensormodes.as_tensor(...) instead.")
        if not isinstance(other, TensorBase):
            raise TypeError(_NEW_FORMS.format(got=got))
        if other.dtype != t.dtype or other.device.type != t.device.type:
            raise TypeError(f"expected {_tensor_options(t)} (got {_tensor_options(other)})")
        return "tensor", other
    if "data" in kwargs or (len(args) == 1 and not _is_size_item(args[0]) and not isinstance(args[0], size_type)):
        data = kwargs.get("data", args[0] if args else None)
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(data, dict) or not (hasattr(type(data), "__getitem__") and hasattr(type(data), "__len__")):
            raise TypeError(f"new(): data must be a sequence (got {_python_type_name(data)})")
        return "data", data
    size = kwargs.get("size", args[0] if len(args) == 1 and isinstance(args[0], size_type) else args)
    if not isinstance(size, tuple | list):
        raise TypeError(_NEW_FORMS.format(got=got))
    for position, item in enumerate(size, start=1):
        if not _is_size_item(item):
            if not args or _is_size_item(args[0]):
                raise TypeError(f'new(): argument \'size\' failed to unpack the object at pos {position} with error '
                                f'"type must be tuple of ints,but got {_python_type_name(item)}"')
            raise TypeError(_NEW_FORMS.format(got=got))
    return "size", tuple(operator.index(item) for item in size) if args or size else (0,)


def _tensor_options(t: Tensor) -> str:
    """A tensor's dtype and device as PyTorch's ``TensorOptions`` prints them."""
    return (f"TensorOptions(dtype={cpp_type_name(t.dtype)}, device={t.device}, layout=Strided, requires_grad=false "
            f"(default), pinned_memory=false (default), memory_format=(nullopt))")


# -- Python data as arrays ------------------------------------------------------------------

def _as_array(data, dtype: dt.dtype | None) -> np.ndarray:
    """``data`` (nested sequences, scalars, tensors, arrays) as an ndarray with PyTorch's
    dtype inference: Python floats give the default dtype, ints int64, bools bool."""
    if isinstance(data, TensorBase):
        array = data._data
    elif isinstance(data, np.ndarray):
        array = data
    else:
        array = np.asarray(_unwrap_nested(data))
        if dtype is None:
            dtype = _infer_dtype(array)
    if dtype is not None:
        return dt.half_staged(array, dtype._np).astype(dtype._np, copy=False)
    if array.dtype not in dt.NP_TO_DTYPE:
        dt.from_numpy_dtype(array.dtype)
    return array


def _unwrap_nested(data):
    if isinstance(data, TensorBase):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def _infer_dtype(array: np.ndarray) -> dt.dtype:
    kind = array.dtype.kind
    if kind == "f":
        return dt.get_default_dtype() if array.dtype == np.float64 else dt.NP_TO_DTYPE[array.dtype]
    if kind == "c":
        return dt.default_complex_dtype() if array.dtype == np.complex128 else dt.NP_TO_DTYPE[array.dtype]
    if kind == "b":
        return dt.bool
    if kind in "iu":
        return dt.int64 if array.dtype.itemsize == 8 or kind == "i" else dt.NP_TO_DTYPE.get(array.dtype, dt.int64)
    if kind == "O" and array.size == 0:
        return dt.get_default_dtype()
    raise TypeError(f"Could not infer dtype of {type(array.flat[0]).__name__}")
