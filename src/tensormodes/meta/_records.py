"""Call records: what :class:`~tensormodes.meta.RecordingMode` writes and ``validate`` replays.

A record holds the call's public name and its arguments, result and error as *metadata*
encoded in plain JSON values (the schema is in ``docs/meta-records.md``): tensors become
``{"tensor": {"shape": ..., "stride": ..., "dtype": ...}}``, Python scalars stay themselves,
tuples, dtypes, devices, slices and other non-JSON values get a one-key object naming their
kind. Records read from a file and records just made are the same objects.

>>> import tensormodes as tm
>>> from tensormodes.meta._records import encode
>>> encode(tm.zeros(2, 3).t())["tensor"]["stride"]
[1, 3]
>>> encode((1, slice(None, 2), ...))
{'tuple': [1, {'slice': [None, 2, None]}, {'ellipsis': True}]}
"""

from __future__ import annotations

import json
import math
import types
from typing import Any

import numpy as np

from .. import _dtype
from .._api import namespace as tm
from .._api.namespace import package
from .._api.tensor import Size, Tensor
from .._autograd.grad_mode import grad_enabled
from .._autograd.graph import Node
from .._device import device as _device_type
from .._meta_array import MetaArray, contiguous_strides
from .._tensor_base import wrap_array
from ..overrides import resolve_name

__all__ = ["Record", "encode", "decode", "lookup", "exception_name", "RecordFormatError", "meta_tensor"]

_DTYPE_NAMES = {d: str(d).rsplit(".", 1)[-1] for d in _dtype.ALL_DTYPES}
_DTYPES = {name: d for d, name in _DTYPE_NAMES.items()}
_NP_DTYPE_NAMES = {d._np: name for d, name in _DTYPE_NAMES.items()}
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class RecordFormatError(ValueError):
    """A record file or record value that does not follow the schema of docs/meta-records.md."""


class Record:
    """One recorded call.

    ``fn``: the function's public dotted name (``'tensormodes.Tensor.add'``); ``args`` and
    ``kwargs``: its arguments' metadata, taken before the call ran; ``result``: the result's
    metadata (None when the call raised); ``error``: ``(exception type name, message)`` or
    None; ``depth``: 0 for a call the user's code made, 1 for a call made by that call's body,
    and so on; ``context``: the state the call ran under when it was not the default
    (``{"grad_enabled": False}``, ``{"default_dtype": "float64"}``), else None.

    >>> import tensormodes as tm
    >>> from tensormodes.meta import RecordingMode
    >>> with RecordingMode() as rec:
    ...     _ = tm.ones(2, 3).sum(dim=0)
    >>> rec.records[1]
    Record(tensormodes.Tensor.sum(f32[2, 3], dim=0) -> f32[3])
    """

    __slots__ = ("fn", "args", "kwargs", "result", "error", "depth", "context")

    def __init__(self, fn: str, args: list, kwargs: dict, result: Any = None, error: tuple[str, str] | None = None,
                 depth: int = 0, context: dict | None = None) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.result = result
        self.error = error
        self.depth = depth
        self.context = context

    def to_json(self) -> dict:
        """The record as one JSON object (a line of a record file)."""
        line: dict = {"fn": self.fn, "args": self.args, "kwargs": self.kwargs, "depth": self.depth}
        if self.error is None:
            line["result"] = self.result
        else:
            line["error"] = {"type": self.error[0], "message": self.error[1]}
        if self.context:
            line["context"] = self.context
        return line

    @classmethod
    def from_json(cls, line: dict) -> Record:
        """A record from one JSON object of a record file (checked against the schema)."""
        if not isinstance(line, dict) or not isinstance(line.get("fn"), str):
            raise RecordFormatError(f"a record is a JSON object with a string 'fn', got {line!r:.80}")
        args, kwargs = line.get("args", []), line.get("kwargs", {})
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise RecordFormatError(f"{line['fn']}: 'args' must be a list and 'kwargs' an object")
        error = line.get("error")
        if error is not None:
            if not (isinstance(error, dict) and isinstance(error.get("type"), str)
                    and isinstance(error.get("message"), str)):
                raise RecordFormatError(f"{line['fn']}: 'error' must be an object with string 'type' and 'message'")
            error = (error["type"], error["message"])
        depth = line.get("depth", 0)
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
            raise RecordFormatError(f"{line['fn']}: 'depth' must be a non-negative integer, got {depth!r}")
        return cls(line["fn"], args, kwargs, line.get("result"), error, depth, line.get("context"))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None

    def __repr__(self) -> str:
        parts = [describe(a) for a in self.args] + [f"{k}={describe(v)}" for k, v in self.kwargs.items()]
        outcome = (f"raised {self.error[0]}" if self.error is not None else describe(self.result))
        return f"Record({'  ' * self.depth}{self.fn}({', '.join(parts)}) -> {outcome})"


# -- values to metadata -------------------------------------------------------------------

def _tensor_metadata(t: Tensor) -> dict:
    data = t._data
    if type(data) is MetaArray:
        stride, offset, device = data.elem_strides, data.offset, "meta"
    else:
        itemsize = data.itemsize
        stride = tuple(s // itemsize for s in data.strides)
        base = t._view_base
        # The same arithmetic as Tensor.storage_offset, without a public call a mode would see.
        offset = 0 if base is None else (
            (data.__array_interface__["data"][0] - base._data.__array_interface__["data"][0]) // itemsize)
        device = "cpu"
    return {"shape": list(data.shape), "stride": list(stride), "offset": offset,
            "dtype": _NP_DTYPE_NAMES[data.dtype], "device": device, "requires_grad": t._requires_grad,
            "is_leaf": t._grad_fn is None}


def encode(value: Any) -> Any:
    """``value``'s metadata as a JSON value (see ``docs/meta-records.md``); values of other
    types become ``{"opaque": "<type name>"}``, which a replay cannot rebuild."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, Tensor):
        return {"tensor": _tensor_metadata(value)}
    if kind is list:
        return [encode(v) for v in value]
    if kind is Size:
        return {"size": list(value)}
    if isinstance(value, tuple):  # tuples, and named tuples of results (tensormodes.return_types)
        return {"tuple": [encode(v) for v in value]}
    if kind is _dtype.dtype:
        return {"dtype": _DTYPE_NAMES[value]}
    if kind is _device_type:
        return {"device": str(value)}
    if kind is slice:
        return {"slice": [encode(value.start), encode(value.stop), encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if kind is complex:
        return {"complex": [encode(value.real), encode(value.imag)]}
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return encode(value.item())
    return {"opaque": f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")}


def describe(value: Any) -> str:
    """A short text for encoded metadata: ``f32[2, 3]``, ``1``, ``(2, 3)``."""
    if isinstance(value, dict) and len(value) == 1:
        (kind, item), = value.items()
        if kind == "tensor":
            text = f"{_SHORT.get(item['dtype'], item['dtype'])}{item['shape']}"
            return text + ("{meta}" if item.get("device") == "meta" else "")
        if kind in ("tuple", "size"):
            inner = ", ".join(describe(v) for v in item)
            return f"({inner},)" if len(item) == 1 else f"({inner})"
        if kind == "dtype":
            return f"tm.{item}"
        if kind == "slice":
            start, stop, step = (describe(v) if v is not None else "" for v in item)
            return f"{start}:{stop}" + (f":{step}" if step else "")
        if kind == "ellipsis":
            return "..."
        if kind in ("device", "float"):
            return repr(item) if kind == "device" else item
        if kind == "complex":
            return f"complex({item[0]}, {item[1]})"
        if kind == "opaque":
            return f"<{item}>"
    if isinstance(value, list):
        return f"[{', '.join(describe(v) for v in value)}]"
    return repr(value)


_SHORT = {"bool": "b8", "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "complex64": "c64",
          "complex128": "c128"}


def context_now() -> dict | None:
    """The state a call runs under, when it differs from the default (see ``Record.context``)."""
    default = _dtype.get_default_dtype()
    if grad_enabled() and default is _dtype.float32:
        return None
    context = {}
    if not grad_enabled():
        context["grad_enabled"] = False
    if default is not _dtype.float32:
        context["default_dtype"] = _DTYPE_NAMES[default]
    return context


def exception_name(error: BaseException) -> str:
    """``'RuntimeError'`` for builtins, the dotted name of other exception types."""
    kind = type(error)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


# -- metadata to values -------------------------------------------------------------------

class Unreplayable(Exception):
    """A record whose arguments cannot be rebuilt (an opaque value), with the reason."""


def meta_tensor(size, stride=None, *, dtype: _dtype.dtype | None = None, storage_offset: int = 0,
                requires_grad: bool = False) -> Tensor:
    """A meta tensor of ``size`` with the given strides (in elements; contiguous when None)
    and storage offset: what ``validate`` rebuilds a recorded tensor as, and what its repro
    lines call for a view into a storage (a storage offset). Without an offset this is
    ``tm.empty_strided(size, stride, dtype=dtype, device="meta")``.

    >>> import tensormodes as tm
    >>> from tensormodes.meta import meta_tensor
    >>> t = meta_tensor((2, 3), (1, 2), dtype=tm.float64)
    >>> t.shape, t.stride(), t.dtype, t.is_meta
    (tensormodes.Size([2, 3]), (1, 2), tensormodes.float64, True)
    """
    shape = tuple(int(s) for s in size)
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if type(dtype) is not _dtype.dtype:
        raise TypeError(f"meta_tensor(): argument 'dtype' must be tensormodes.dtype, not {type(dtype).__name__}")
    strides = None if stride is None else tuple(int(s) for s in stride)
    if strides is not None and len(strides) != len(shape):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(strides)} strides for {len(shape)} dims")
    if not storage_offset and (strides is None or min(strides, default=0) >= 0):
        # a layout a storage of its own holds: what tm.empty_strided makes
        strides = contiguous_strides(shape) if strides is None else strides
        return tm.empty_strided(shape, strides, dtype=dtype, device="meta", requires_grad=requires_grad)
    t = wrap_array(MetaArray(shape, dtype._np, strides, int(storage_offset)))
    if requires_grad:
        t._requires_grad = True
    return t


def _rebuilt(item: dict) -> Tensor:
    """The meta tensor a recorded tensor's metadata describes, with its autograd state (a
    non-leaf that requires grad gets a grad_fn, so in-place ops treat it as one)."""
    try:
        shape, stride, dtype = item["shape"], item["stride"], _DTYPES[item["dtype"]]
        if len(stride) != len(shape):
            raise ValueError
    except (KeyError, TypeError, ValueError) as error:
        raise RecordFormatError(f"a tensor needs 'shape', 'stride' (one per dim) and a known 'dtype': "
                                f"{item!r:.120}") from error
    requires_grad = bool(item.get("requires_grad"))
    t = meta_tensor(shape, stride, dtype=dtype, storage_offset=item.get("offset", 0), requires_grad=requires_grad)
    if requires_grad and not item.get("is_leaf", True):
        t._grad_fn = _RECORDED_GRAPH
    return t


class _RecordedGraph(Node):
    """Stands for the graph behind a recorded non-leaf: replays need it to be a non-leaf (an
    in-place op on a leaf that requires grad is an error) but never run its backward."""

    def apply(self, grads: tuple) -> tuple:
        raise RuntimeError("a tensor rebuilt from a record has no backward graph: only the call replayed is "
                           "differentiable")


_RECORDED_GRAPH = _RecordedGraph()


def decode(value: Any, on_meta: bool = True) -> Any:
    """The value ``encode`` described, with tensors rebuilt as meta tensors."""
    if isinstance(value, list):
        return [decode(v, on_meta) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise RecordFormatError(f"an encoded value is an object with one key, got {value!r:.120}")
    (kind, item), = value.items()
    if kind == "tensor":
        return _rebuilt(item)
    if kind == "tuple":
        return tuple(decode(v, on_meta) for v in item)
    if kind == "size":
        return Size(item)
    if kind == "dtype":
        if item not in _DTYPES:
            raise RecordFormatError(f"unknown dtype {item!r}")
        return _DTYPES[item]
    if kind == "device":
        return tm.device(item)
    if kind == "slice":
        return slice(*(decode(v, on_meta) for v in item))
    if kind == "ellipsis":
        return Ellipsis
    if kind == "float":
        if item not in _NON_FINITE:
            raise RecordFormatError(f"a 'float' object holds 'nan', 'inf' or '-inf', got {item!r}")
        return _NON_FINITE[item]
    if kind == "complex":
        return complex(*(decode(v, on_meta) for v in item))
    if kind == "opaque":
        raise Unreplayable(f"an argument of type {item} is not recorded")
    raise RecordFormatError(f"unknown kind of encoded value {kind!r}")


# -- names to callables -------------------------------------------------------------------

_LOOKUP: dict[str, Any] = {}


def lookup(name: str):
    """The public tensormodes callable whose dotted name is ``name`` (as ``resolve_name`` gives
    it), or None. Only attribute reads of tensormodes modules and of ``Tensor`` are made, and
    the result must be an overridable callable with exactly this public name: nothing a
    record file says is imported or executed.

    >>> import tensormodes as tm
    >>> lookup("tensormodes.Tensor.add") is tm.Tensor.add, lookup("os.system")
    (True, None)
    """
    if name in _LOOKUP:
        return _LOOKUP[name]
    found = None
    parts = name.split(".")
    if parts[0] == "tensormodes" and len(parts) > 1:
        found = package()
        for part in parts[1:]:
            if not (isinstance(found, types.ModuleType) and found.__name__.startswith("tensormodes")) \
                    and found is not Tensor and not isinstance(found, property):
                found = None
                break
            found = getattr(found, part, None)
            if found is None:
                break
        if found is not None and resolve_name(found) != name:
            found = None
    _LOOKUP[name] = found
    return found


def dumps(record: Record) -> str:
    """One line of a record file."""
    return json.dumps(record.to_json(), separators=(",", ":"), allow_nan=False)
