"""A protocol-2 pickle writer for the values PyTorch's ``weights_only`` reader rebuilds.

It writes ``None``, bools, ints, floats, complex numbers, str, bytes, bytearray, tuples, lists,
dicts, ``OrderedDict`` (with attributes such as a state dict's ``_metadata``), ``Counter``,
sets, ``Size``, dtypes, devices and tensors (written by the caller, see :class:`Pickler`; a
``Parameter`` subclass as a ``Parameter``, a tensor's own attributes with it, as PyTorch writes
them), as ``pickle.dumps(obj, protocol=2)`` would write PyTorch's objects; anything else is refused with
a ``TypeError`` naming where it sits. Containers and tensors are memoized, so an object met twice
is loaded as one object.
"""

from __future__ import annotations

import collections
import copyreg
import struct

from .. import _dtype as dt
from .._api.meta_tensor import MetaParameter, MetaTensor
from .._api.parameter import Parameter
from .._api.tensor import Size, Tensor
from .._device import device
from .safe_globals import user_classes

__all__ = ["Pickler", "tensor_state", "op_int", "op_str", "op_global", "op_ints", "op_bool", "TORCH_DTYPE_NAMES",
           "MAX_DEPTH"]

MAX_DEPTH = 200  # containers inside one another; deeper objects are refused (the writer recurses)
_BATCH = 1000  # items per APPENDS / SETITEMS, as pickle writes them
TORCH_DTYPE_NAMES = {d: d._name for d in dt.ALL_DTYPES}


def op_int(value: int) -> bytes:
    """The opcode pushing the int ``value``."""
    if 0 <= value < 256:
        return b"K" + bytes((value,))
    if 0 <= value < 65536:
        return b"M" + value.to_bytes(2, "little")
    if -2 ** 31 <= value < 2 ** 31:
        return b"J" + value.to_bytes(4, "little", signed=True)
    raw = value.to_bytes((value.bit_length() >> 3) + 1, "little", signed=True)
    if value < 0 and len(raw) > 1 and raw[-1] == 0xFF and raw[-2] & 0x80:
        raw = raw[:-1]
    if len(raw) < 256:
        return b"\x8a" + bytes((len(raw),)) + raw
    return b"\x8b" + len(raw).to_bytes(4, "little") + raw


def op_bool(value: bool) -> bytes:
    return b"\x88" if value else b"\x89"


def op_str(value: str) -> bytes:
    raw = value.encode("utf-8", "surrogatepass")
    return b"X" + len(raw).to_bytes(4, "little") + raw


def op_global(module: str, name: str) -> bytes:
    return f"c{module}\n{name}\n".encode()


def op_ints(values) -> bytes:
    """A tuple of ints."""
    body = b"".join(op_int(int(v)) for v in values)
    if len(values) == 0:
        return b")"
    if len(values) <= 3:
        return body + (b"\x85", b"\x86", b"\x87")[len(values) - 1]
    return b"(" + body + b"t"


def tensor_state(t: Tensor) -> dict:
    """The attributes a user set on ``t``, which PyTorch saves with it: those of its ``__dict__``
    whose names do not start with an underscore (tensormodes keeps its own state there)."""
    return {key: value for key, value in vars(t).items() if not key.startswith("_")}


def _reduce(module: str, name: str, args: bytes) -> bytes:
    return op_global(module, name) + args + b"R"


class Pickler:
    """Writes ``obj`` as a list of pieces: bytes, and the index (an int) of each tensor met for
    the first time, in order, where the caller puts the bytes that rebuild it (no memo opcodes
    in them), or ``("open", index)`` and ``("close", index)`` around the pickled dict of its
    attributes; ``tensors`` lists those tensors and ``paths`` where each sits."""

    def __init__(self) -> None:
        self.pieces: list = [b"\x80\x02"]
        self.tensors: list[Tensor] = []
        self.paths: list[str] = []
        self._memo: dict[int, int] = {}
        self._keep: list = []  # memoized objects stay alive, so their ids stay theirs
        self._active: set[int] = set()

    def dump(self, obj) -> list:
        self._save(obj, "obj", 0)
        self.pieces.append(b".")
        return self.pieces

    def _put(self, obj) -> None:
        index = self._memo[id(obj)] = len(self._memo)
        self._keep.append(obj)
        self.pieces.append(b"q" + bytes((index,)) if index < 256 else b"r" + index.to_bytes(4, "little"))

    def _save(self, obj, path: str, depth: int) -> None:
        kind = type(obj)
        if kind is str:
            self.pieces.append(op_str(obj))
        elif kind is int:
            self.pieces.append(op_int(obj))
        elif kind is float:
            self.pieces.append(b"G" + struct.pack(">d", obj))
        elif obj is None:
            self.pieces.append(b"N")
        elif kind is bool:
            self.pieces.append(op_bool(obj))
        elif kind is dt.dtype:
            self.pieces.append(op_global("torch", TORCH_DTYPE_NAMES[obj]))
        elif kind is device:
            args = op_str(obj.type) + (b"\x85" if obj.index is None else op_int(obj.index) + b"\x86")
            self.pieces.append(_reduce("torch", "device", args))
        elif kind is complex:
            self.pieces.append(_reduce("__builtin__", "complex", b"G" + struct.pack(">d", obj.real) + b"G"
                                       + struct.pack(">d", obj.imag) + b"\x86"))
        elif kind is bytes:
            self.pieces.append(_reduce("_codecs", "encode", op_str(obj.decode("latin1")) + op_str("latin1") + b"\x86"))
        elif id(obj) in self._memo:
            index = self._memo[id(obj)]
            self.pieces.append(b"h" + bytes((index,)) if index < 256 else b"j" + index.to_bytes(4, "little"))
        elif isinstance(obj, Tensor) and (kind in _TENSOR_KINDS or isinstance(obj, Parameter)):
            # A Parameter subclass is written as a Parameter, as its __reduce_ex__ does in PyTorch.
            self._tensor(obj, path, depth)
        else:
            self._container(obj, kind, path, depth)

    def _tensor(self, t: Tensor, path: str, depth: int) -> None:
        """The tensor's index; with attributes of its own (``t.note = ...``), ``("open", index)``,
        their dict, ``("close", index)``: the caller wraps the dict in PyTorch's rebuild call."""
        index = len(self.tensors)
        self.tensors.append(t)
        self.paths.append(path)
        state = tensor_state(t)
        if not state:
            self.pieces.append(index)
        else:
            if id(t) in self._active:
                raise ValueError(f"tm.save cannot store an object that contains itself (at {path})")
            self._active.add(id(t))
            try:
                self.pieces.append(("open", index))
                self._container(state, dict, f"{path}.__dict__", depth)
                self.pieces.append(("close", index))
            finally:
                self._active.discard(id(t))
        self._put(t)

    def _container(self, obj, kind, path: str, depth: int) -> None:
        if kind not in _CONTAINERS and kind in user_classes().values():
            write = Pickler._user_object
        elif kind in _CONTAINERS:
            write = _CONTAINERS[kind]
        else:
            raise TypeError(f"tm.save cannot store a value of type {kind.__qualname__} at {path}: it stores tensors, "
                            "dicts, OrderedDicts, Counters, lists, tuples, sets, str, bytes, bytearray, int, float, "
                            "complex, bool, None, Size, tensormodes.dtype and tensormodes.device, and instances of "
                            "plain-data classes added with tensormodes.serialization.add_safe_globals")
        if id(obj) in self._active:
            raise ValueError(f"tm.save cannot store an object that contains itself (at {path})")
        if depth >= MAX_DEPTH:
            raise ValueError(f"tm.save cannot store objects nested more than {MAX_DEPTH} levels deep: {path} is a "
                             f"container inside {depth} others")
        self._active.add(id(obj))
        try:
            write(self, obj, path, depth + 1)
        finally:
            self._active.discard(id(obj))

    def _user_object(self, obj, path: str, depth: int) -> None:
        """An instance of a class of the user's allow-list, as pickle writes it (``NEWOBJ``, then
        ``BUILD`` with its state) under the name the allow-list gives it."""
        kind = type(obj)
        name = next(key for key, cls in user_classes().items() if cls is kind)
        module, _, qualname = (kind.__module__, "", kind.__qualname__) if name == f"{kind.__module__}." \
            f"{kind.__qualname__}" else name.rpartition(".")
        reduced = obj.__reduce_ex__(2)
        if reduced[0] is not copyreg.__newobj__ or reduced[1] != (kind,) or any(reduced[3:]):
            raise TypeError(f"tm.save cannot store the {kind.__qualname__} at {path}: it does not pickle as its "
                            "attributes")
        self.pieces.append(op_global(module, qualname) + b")\x81")
        self._put(obj)
        if reduced[2] is not None:
            self._save(reduced[2], f"{path}.__dict__", depth)
            self.pieces.append(b"b")

    def _tuple(self, obj: tuple, path: str, depth: int) -> None:
        if not obj:
            self.pieces.append(b")")
            return
        if len(obj) > 3:
            self.pieces.append(b"(")
        for i, value in enumerate(obj):
            self._save(value, f"{path}[{i}]", depth)
        self.pieces.append((b"\x85", b"\x86", b"\x87")[len(obj) - 1] if len(obj) <= 3 else b"t")
        self._put(obj)

    def _list(self, obj: list, path: str, depth: int) -> None:
        self.pieces.append(b"]")
        self._put(obj)
        for start in range(0, len(obj), _BATCH):
            self.pieces.append(b"(")
            for i in range(start, min(start + _BATCH, len(obj))):
                self._save(obj[i], f"{path}[{i}]", depth)
            self.pieces.append(b"e")

    def _items(self, obj: dict, path: str, depth: int) -> None:
        items = list(obj.items())
        for start in range(0, len(items), _BATCH):
            self.pieces.append(b"(")
            for key, value in items[start:start + _BATCH]:
                self._save(key, f"{path} (a key)", depth)
                self._save(value, f"{path}[{key!r}]", depth)
            self.pieces.append(b"u")

    def _dict(self, obj: dict, path: str, depth: int) -> None:
        self.pieces.append(b"}")
        self._put(obj)
        self._items(obj, path, depth)

    def _ordered_dict(self, obj: collections.OrderedDict, path: str, depth: int) -> None:
        self.pieces.append(_reduce("collections", "OrderedDict", b")"))
        self._put(obj)
        self._items(obj, path, depth)
        attributes = vars(obj)
        if attributes:
            self.pieces.append(b"}(")
            for key, value in attributes.items():
                self.pieces.append(op_str(key))
                self._save(value, f"{path}.{key}", depth)
            self.pieces.append(b"ub")

    def _counter(self, obj: collections.Counter, path: str, depth: int) -> None:
        self.pieces.append(op_global("collections", "Counter") + b"}")
        self._items(obj, path, depth)
        self.pieces.append(b"\x85R")
        self._put(obj)

    def _set(self, obj: set, path: str, depth: int) -> None:
        self.pieces.append(op_global("__builtin__", "set") + b"]")
        for start in range(0, len(obj), _BATCH):
            self.pieces.append(b"(")
            for value in list(obj)[start:start + _BATCH]:
                self._save(value, f"{path} (an element)", depth)
            self.pieces.append(b"e")
        self.pieces.append(b"\x85R")
        self._put(obj)

    def _bytearray(self, obj: bytearray, path: str, depth: int) -> None:
        encoded = _reduce("_codecs", "encode", op_str(bytes(obj).decode("latin1")) + op_str("latin1") + b"\x86")
        self.pieces.append(_reduce("__builtin__", "bytearray", encoded + b"\x85"))
        self._put(obj)

    def _size(self, obj: Size, path: str, depth: int) -> None:
        self.pieces.append(_reduce("torch", "Size", op_ints(obj) + b"\x85"))
        self._put(obj)


_CONTAINERS = {
    tuple: Pickler._tuple, list: Pickler._list, dict: Pickler._dict, collections.OrderedDict: Pickler._ordered_dict,
    collections.Counter: Pickler._counter, set: Pickler._set, bytearray: Pickler._bytearray, Size: Pickler._size,
}
_TENSOR_KINDS = frozenset((Tensor, Parameter, MetaTensor, MetaParameter))
