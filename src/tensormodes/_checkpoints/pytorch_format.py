"""PyTorch's checkpoint files: the zip format of ``torch.save`` (1.6 and later) and its legacy
non-zip format (``_use_new_zipfile_serialization=False``), read and written without Python's pickle.

A zip checkpoint is an uncompressed zip whose records sit in one folder (the file's stem):
``data.pkl`` (the object, a protocol-2 pickle whose tensors are ``_rebuild_tensor_v2`` calls on
storages named by persistent ids ``('storage', torch.FloatStorage, key, 'cpu', numel)``),
``.format_version``, ``.storage_alignment``, ``byteorder``, ``data/<key>`` (each storage's
bytes, 64-byte aligned), ``version`` and ``.data/serialization_id``. A legacy checkpoint is
five pickles in a row (a magic number, the protocol version 1001, system information, the
object, the storage keys), then each storage as an 8-byte element count and its bytes.

Reading goes through :mod:`.unpickler`, whose allow-list is built here per load: the builders
below make tensormodes objects and check every size, stride and offset against the storage
they view, so a crafted file raises :class:`FormatError` instead of reading out of bounds.
"""

from __future__ import annotations

import collections
import secrets

import numpy as np

from .. import _dtype as dt
from .._api.parameter import Parameter
from .._api.tensor import Size, Tensor
from .._autograd.graph import share_version
from .._device import device, parse_device
from .._meta_array import MetaArray
from .._tensor_base import wrap_array
from . import options
from .errors import CallerError, FormatError
from .pickler import TORCH_DTYPE_NAMES, Pickler, op_bool, op_global, op_int, op_ints, op_str
from .safe_globals import user_classes
from .storage import UntypedStorage
from .unpickler import Builder, Refused, Unpickler, globals_in
from .ziparchive import Archive, ZipWriter

__all__ = ["write_checkpoint", "load_checkpoint", "is_legacy", "unsafe_globals"]

_STORAGE_NAMES = {
    dt.bool: "BoolStorage", dt.uint8: "ByteStorage", dt.int8: "CharStorage", dt.int16: "ShortStorage",
    dt.int32: "IntStorage", dt.int64: "LongStorage", dt.float16: "HalfStorage", dt.bfloat16: "BFloat16Storage",
    dt.float32: "FloatStorage", dt.float64: "DoubleStorage", dt.complex64: "ComplexFloatStorage",
    dt.complex128: "ComplexDoubleStorage",
}
_LEGACY_TENSOR_NAMES = {d: n.replace("Storage", "Tensor") for d, n in _STORAGE_NAMES.items()}
_UNSUPPORTED_DTYPES = ("uint16", "uint32", "uint64", "complex32", "float8_e4m3fn", "float8_e5m2",
                       "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8",
                       "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
                       "int1", "int2", "int3", "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3", "uint4",
                       "uint5", "uint6", "uint7")
_UNSUPPORTED_REBUILDS = {
    "_rebuild_qtensor": "quantized", "_rebuild_sparse_tensor": "sparse", "_rebuild_nested_tensor": "nested",
    "_rebuild_wrapper_subclass": "wrapper-subclass", "_rebuild_device_tensor_from_numpy": "device",
    "_rebuild_device_tensor_from_cpu_tensor": "device",
}
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001
_MAX_DIMS = 64
_MAX_INT64 = 2 ** 63 - 1
LEGACY_PREFIXES = (b"\x80\x02\x8a\x0a", b"\x80\x03\x8a\x0a", b"\x80\x04\x95", b"\x80\x05\x95")


def is_legacy(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a legacy (non-zip) PyTorch checkpoint."""
    return head.startswith(LEGACY_PREFIXES) and head[8:9] != b"{"  # "{": a safetensors header


# -- writing -----------------------------------------------------------------------------------------

class _Bytes:
    """A flat uint8 window ``[lo, hi)`` onto memory owned by ``owner`` (kept alive)."""

    def __init__(self, lo: int, hi: int, owner: np.ndarray) -> None:
        self.__array_interface__ = {"data": (lo, True), "shape": (hi - lo,), "typestr": "|u1", "version": 3}
        self._owner = owner


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _span(array: np.ndarray) -> tuple[int, int]:
    lo = hi = _address(array)
    for n, s in zip(array.shape, array.strides):
        hi += (n - 1) * s
    return lo, hi + array.itemsize


def _plain(array: np.ndarray) -> bool:
    """Whether PyTorch can describe ``array`` as a view (non-negative strides in whole elements)."""
    return array.size > 0 and all(s >= 0 and s % array.itemsize == 0 for s in array.strides)


class _Saved:
    """Where a saved tensor's data is: its storage key, the storage's element count, its offset."""

    def __init__(self, key: str, numel: int, offset: int, array: np.ndarray) -> None:
        self.key, self.numel, self.offset, self.array = key, numel, offset, array


def _plan(tensors: list[Tensor], paths: list[str]) -> tuple[list, dict[str, np.ndarray]]:
    """Groups the tensors into storages (tensors sharing memory share one, as their base's
    storage in PyTorch), and the bytes of each storage by key."""
    arrays = []
    spans = []
    starts = {}  # each array's address, read once (``__array_interface__`` builds a dict per call)
    for i, t in enumerate(tensors):
        array = t._data
        if type(array) is MetaArray:
            arrays.append(None)
            continue
        if not _plain(array):
            array = np.ascontiguousarray(array)
        arrays.append(array)
        if array.size == 0:
            continue
        lo, hi = _span(array)
        starts[i] = lo
        base = t._view_base
        if base is not None and type(base._data) is np.ndarray and _plain(base._data) \
                and base._data.dtype == array.dtype:
            base_lo, base_hi = _span(base._data)
            lo, hi = min(lo, base_lo), max(hi, base_hi)
        spans.append((lo, hi, i))
    groups: list[list] = []
    for lo, hi, i in sorted(spans):
        if groups and lo < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], hi)
            groups[-1][2].append(i)
        else:
            groups.append([lo, hi, [i]])
    groups.sort(key=lambda g: min(g[2]))
    saved: list = [None] * len(tensors)
    blocks: dict[str, np.ndarray] = {}
    for lo, hi, members in groups:
        dtypes = {arrays[i].dtype for i in members}
        if len(dtypes) > 1:
            names = ", ".join(paths[i] for i in sorted(members))
            raise RuntimeError(f"Cannot save multiple tensors or storages that view the same data as different "
                               f"types: {names} (save them as .safetensors, which can)")
        itemsize = arrays[members[0]].itemsize
        if (hi - lo) % itemsize or any((starts[i] - lo) % itemsize for i in members):
            for i in members:  # bytes shared at odd offsets: PyTorch cannot express it, so copied apart
                arrays[i] = np.ascontiguousarray(arrays[i]).copy()
                key = str(len(blocks))
                blocks[key] = arrays[i].reshape(-1).view(np.uint8)
                saved[i] = _Saved(key, arrays[i].size, 0, arrays[i])
            continue
        key = str(len(blocks))
        blocks[key] = np.asarray(_Bytes(lo, hi, arrays[members[0]]))
        for i in members:
            saved[i] = _Saved(key, (hi - lo) // itemsize, (starts[i] - lo) // itemsize, arrays[i])
    for i, array in enumerate(arrays):
        if array is not None and saved[i] is None:  # empty tensors: a storage of their own
            key = str(len(blocks))
            blocks[key] = np.empty(0, np.uint8)
            saved[i] = _Saved(key, 0, 0, array)
    return saved, blocks


def _tensor_bytes(t: Tensor, where: _Saved | None, part: str = "") -> bytes:
    """The opcodes rebuilding ``t`` as PyTorch's ``Tensor.__reduce_ex__`` writes them; with
    ``part`` ``"open"`` or ``"close"``, those before and after the pickled dict of its attributes
    (``_rebuild_from_type_v2``, or ``_rebuild_parameter_with_state`` for a Parameter)."""
    requires_grad = bool(t._requires_grad)
    is_parameter = isinstance(t, Parameter)
    array = t._data
    dtype = dt.NP_TO_DTYPE[array.dtype]
    if where is None:  # a meta tensor: no storage
        function = op_global("torch._utils", "_rebuild_meta_tensor_no_storage")
        args = (op_global("torch", TORCH_DTYPE_NAMES[dtype]) + op_ints(array.shape) + op_ints(t.stride())
                + op_bool(requires_grad and not is_parameter))
    else:
        storage = (b"(" + op_str("storage") + op_global("torch", _STORAGE_NAMES[dtype]) + op_str(where.key)
                   + op_str("cpu") + op_int(where.numel) + b"tQ")
        strides = [s // array.itemsize for s in where.array.strides] if array.size else \
            [s // array.itemsize for s in np.empty(array.shape, array.dtype).strides]
        function = op_global("torch._utils", "_rebuild_tensor_v2")
        args = (storage + op_int(where.offset) + op_ints(array.shape) + op_ints(strides)
                + op_bool(requires_grad and not is_parameter) + op_global("collections", "OrderedDict") + b")R")
    hooks = op_global("collections", "OrderedDict") + b")R"
    if is_parameter:
        body = function + b"(" + args + b"tR"
        if part == "open":
            return op_global("torch._utils", "_rebuild_parameter_with_state") + b"(" + body + op_bool(requires_grad) \
                + hooks
        if part == "close":
            return b"tR"
        return op_global("torch._utils", "_rebuild_parameter") + body + op_bool(requires_grad) + hooks + b"\x87R"
    if part == "open":
        return (op_global("torch._tensor", "_rebuild_from_type_v2") + b"(" + function + op_global("torch", "Tensor")
                + b"(" + args + b"t")
    if part == "close":
        return b"tR"
    return function + b"(" + args + b"tR"


def write_checkpoint(obj, archive_name: str):
    """Pickles ``obj`` now (refusing what cannot be saved) and returns ``write(file)``, which writes
    the checkpoint to a binary file."""
    pickler = Pickler()
    pieces = pickler.dump(obj)
    saved, blocks = _plan(pickler.tensors, pickler.paths)
    data = b"".join(p if type(p) is bytes else _tensor_bytes(pickler.tensors[p], saved[p]) if type(p) is int
                    else _tensor_bytes(pickler.tensors[p[1]], saved[p[1]], p[0]) for p in pieces)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in archive_name) or "archive"
    serialization_id = f"{secrets.randbelow(10 ** 40):040d}"  # 40 decimal digits, as PyTorch writes

    crc, skip = options.get_crc32_options(), options.skipping_data()  # as set when save is called

    def write(file) -> None:
        writer = ZipWriter(file)
        for record, value in ((f"{name}/data.pkl", data), (f"{name}/.format_version", b"1"),
                              (f"{name}/.storage_alignment", b"64"), (f"{name}/byteorder", b"little")):
            writer.write(record, value, crc)
        for key, block in blocks.items():
            writer.write(f"{name}/data/{key}", block, crc, skip)
        writer.write(f"{name}/version", b"3\n", crc)
        writer.write(f"{name}/.data/serialization_id", serialization_id.encode(), crc)
        writer.close()
    return write


# -- reading -----------------------------------------------------------------------------------------

class _StorageType:
    """A storage class named by a file (``torch.FloatStorage``): the dtype of its elements."""

    def __init__(self, name: str, dtype: dt.dtype) -> None:
        self.name, self.dtype = name, dtype


class _Storage:
    """A loaded storage: its key, dtype, element count, bytes (None on the meta device) and the
    tensors made from it."""

    def __init__(self, key: str, dtype: dt.dtype, numel: int, raw: np.ndarray | None) -> None:
        self.key, self.dtype, self.numel, self.raw = key, dtype, numel, raw
        self.tensors: list[Tensor] = []


_CUDA_MESSAGE = ("Attempting to deserialize object on a CUDA device but tensormodes.cuda.is_available() is False. "
                 "If you are running on a CPU-only machine, please use tm.load with "
                 "map_location=tensormodes.device('cpu') to map your storages to the CPU.")


def check_map_location(map_location) -> None:
    """Refuses a ``map_location`` of the wrong type, or naming a device tensors cannot load onto."""
    if map_location is None or callable(map_location) and not isinstance(map_location, (str, device)):
        return
    if isinstance(map_location, dict):
        for source, target in map_location.items():
            if not isinstance(source, str) or not isinstance(target, (str, device)):
                raise TypeError("tm.load: a map_location dict maps location strings to devices or strings")
        return
    if not isinstance(map_location, (str, device)):
        raise TypeError(f"tm.load: map_location must be None, a string, a device, a dict or a callable, not "
                        f"{type(map_location).__name__}")
    _device_type(str(parse_device(map_location)))


def _device_type(location: str) -> str:
    """``"cpu"`` or ``"meta"``, where a storage at ``location`` is loaded; other devices raise."""
    kind = location.split(":")[0]
    if kind in ("cpu", "meta"):
        return kind
    if kind == "cuda":
        raise RuntimeError(_CUDA_MESSAGE)
    raise RuntimeError(f"tm.load: cannot load tensors onto device {location!r}: tensormodes loads onto the cpu "
                       "and meta devices (pass map_location='cpu')")


class _Loader:
    """One load: the storages met so far, where they are placed, and the allow-list's builders."""

    def __init__(self, source, map_location, where: str) -> None:
        self.source, self.map_location, self.where = source, map_location, where
        self.storages: dict[str, _Storage] = {}
        self.owner: dict[int, _Storage] = {}

    # persistent ids: storages

    def persistent_load(self, pid) -> _Storage:
        if type(pid) is not tuple or len(pid) not in (5, 6) or pid[0] not in ("storage", b"storage"):
            raise Refused(f"persistent id {_short(pid)} is not a storage ('storage', type, key, location, numel)")
        storage_type, key, location, numel = pid[1:5]
        if len(pid) == 6 and pid[5] is not None:
            raise Refused(f"storage {key!r} is a view of another storage (PyTorch before 1.0); not supported")
        if type(storage_type) is not _StorageType or type(key) is not str or type(location) is not str \
                or type(numel) is not int or not 0 <= numel <= _MAX_INT64:
            raise Refused(f"persistent id {_short(pid)} is not a valid storage id")
        known = self.storages.get(key)
        if known is not None:
            return known
        dtype = storage_type.dtype
        place = self._place(location, dtype, numel, key)
        storage = self.storages[key] = _Storage(key, dtype, numel, place)
        return storage

    def _place(self, location: str, dtype: dt.dtype, numel: int, key: str):
        """The storage's bytes on the cpu, or None on the meta device."""
        target = self.map_location
        if callable(target) and not isinstance(target, (str, device)):
            # as torch.load: the callable gets the storage (untyped bytes) and the location string
            raw = self.source(key, dtype, numel)
            try:
                result = target(UntypedStorage(raw, numel * dtype.itemsize), location)
            except Exception as e:
                raise CallerError(e) from None
            if result is None:
                return raw if _device_type(location) == "cpu" else None
            if type(result) is not UntypedStorage:
                raise CallerError(TypeError(
                    f"tm.load: map_location returned {type(result).__name__}; it must return a storage (the one "
                    "it was given, or that storage moved with .cpu() or .to(device=...)) or None"))
            if result.nbytes() != numel * dtype.itemsize:
                raise CallerError(RuntimeError(f"tm.load: map_location returned a storage of {result.nbytes()} bytes "
                                               f"for storage {key!r} of {numel * dtype.itemsize} bytes"))
            return result._raw
        if isinstance(target, dict):
            target = target.get(location, location)
        place = _device_type(location if target is None else str(parse_device(target)))
        return self.source(key, dtype, numel) if place == "cpu" else None

    # tensors

    def tensor(self, storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
        """``_rebuild_tensor_v2``: a view of ``storage``, every number checked against it."""
        if type(storage) is not _Storage:
            raise Refused(f"_rebuild_tensor_v2 needs a storage, got {type(storage).__name__}")
        if metadata:
            raise Refused(f"tensor metadata {_short(metadata)} is not supported")
        if hooks is not None and (type(hooks) not in (dict, collections.OrderedDict) or hooks):
            raise Refused("a tensor's backward hooks must be an empty OrderedDict")
        shape, strides = _sizes(size, "size"), _sizes(stride, "stride")
        if type(offset) is not int or not 0 <= offset <= _MAX_INT64 or len(strides) != len(shape) \
                or type(requires_grad) is not bool:
            raise Refused(f"invalid tensor: offset {_short(offset)}, size {_short(size)}, stride "
                          f"{_short(stride)}, requires_grad {_short(requires_grad)}")
        np_dtype = storage.dtype._np
        if all(shape):
            needed = offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1
            if needed > storage.numel:
                raise Refused(f"a tensor of size {list(shape)}, stride {list(strides)} and offset {offset} needs "
                              f"{needed} elements, but storage {storage.key!r} holds {storage.numel}")
        if storage.raw is None:
            t = wrap_array(MetaArray(shape, np_dtype, strides, offset))
        elif not all(shape):
            t = wrap_array(np.empty(shape, np_dtype))
        else:
            t = wrap_array(np.ndarray(shape, np_dtype, buffer=storage.raw, offset=offset * np_dtype.itemsize,
                                      strides=tuple(s * np_dtype.itemsize for s in strides)))
        if requires_grad:
            try:
                t.requires_grad_(True)
            except RuntimeError as e:
                raise Refused(str(e)) from None
        storage.tensors.append(t)
        self.owner[id(t)] = storage
        return t

    def tensor_v1(self, storage, offset, size, stride):
        return self.tensor(storage, offset, size, stride)

    def tensor_v3(self, storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None):
        if type(storage) is _Storage and dtype is not storage.dtype:
            raise Refused(f"_rebuild_tensor_v3 with dtype {_short(dtype)} on a {storage.dtype._name} storage is "
                          "not supported")
        return self.tensor(storage, offset, size, stride, requires_grad, hooks, metadata)

    def meta_tensor(self, dtype, size, stride, requires_grad=False):
        if type(dtype) is not dt.dtype or type(requires_grad) is not bool:
            raise Refused("invalid _rebuild_meta_tensor_no_storage arguments")
        shape, strides = _sizes(size, "size"), _sizes(stride, "stride")
        if len(strides) != len(shape):
            raise Refused(f"size {list(shape)} and stride {list(strides)} differ in length")
        t = wrap_array(MetaArray(shape, dtype._np, strides, 0))
        return t.requires_grad_(True) if requires_grad else t

    def parameter(self, data, requires_grad=True, hooks=None, state=None):
        """``_rebuild_parameter`` (and ``_with_state``): ``data`` as a Parameter."""
        if not isinstance(data, Tensor) or type(requires_grad) is not bool:
            raise Refused(f"_rebuild_parameter needs a tensor and a bool, got {type(data).__name__} and "
                          f"{type(requires_grad).__name__}")
        try:
            param = Parameter(data, requires_grad=requires_grad)
        except RuntimeError as e:
            raise Refused(str(e)) from None
        storage = self.owner.get(id(data))
        if storage is not None:  # the Parameter, not its data, is what shares the storage
            storage.tensors[:] = [param if t is data else t for t in storage.tensors]
            self.owner[id(param)] = storage
        if state:
            _set_tensor_state(param, state)
        return param

    def from_type(self, func, new_type, args, state=None):
        """``_rebuild_from_type_v2``: a tensor rebuilt by ``func``, of class Tensor or Parameter."""
        if type(func) is not Builder or func.call is None or type(args) is not tuple \
                or type(new_type) is not Builder or new_type.name not in (_TENSOR, _PARAMETER):
            raise Refused(f"_rebuild_from_type_v2 of {_short(new_type)} is not supported (Tensor and Parameter "
                          "only)")
        result = func.call(*args)
        if not isinstance(result, Tensor):
            raise Refused("_rebuild_from_type_v2 did not rebuild a tensor")
        if new_type.name == _PARAMETER and type(result) is not Parameter:
            result = self.parameter(result, result.requires_grad)
        if state:
            _set_tensor_state(result, state)
        return result

    def share(self) -> None:
        """Makes tensors of one storage views of one root, as the safetensors reader does: the first
        tensor spanning the whole storage, else a new tensor over it."""
        for storage in self.storages.values():
            tensors = storage.tensors
            if storage.raw is None or not tensors:
                continue
            nbytes = storage.numel * storage.dtype.itemsize
            spanning = [t for t in tensors if t._data.flags.c_contiguous and t._data.nbytes == nbytes
                        and t._data.dtype == storage.dtype._np and _address(t._data) == _address(storage.raw)]
            if len(tensors) == 1 and spanning:
                continue
            root = spanning[0] if spanning else wrap_array(storage.raw[:nbytes].view(storage.dtype._np))
            for t in tensors:
                if t is not root and t._data.size:
                    t._view_base = root
                    root._has_views = True
                    share_version(t, root)


def _set_tensor_state(t: Tensor, state) -> None:
    """Sets the attributes PyTorch saved with a tensor (a dict, or a pair of dicts: its ``__dict__``
    and its slots). Names starting with an underscore are refused (tensormodes keeps its own
    state under such names, and a file must not set it), and so are the names of the class's
    methods and properties (``data``, ``grad``, ``add``): a file adds attributes, it does not
    replace what tensors do."""
    parts = state if type(state) is tuple and len(state) == 2 else (state,)
    for part in parts:
        if part is None:
            continue
        if type(part) is not dict:
            raise Refused(f"tensor state {_short(state)} is not a dict of attribute names")
        for key in part:
            if type(key) is not str or not key.isidentifier() or key.startswith("_") or hasattr(type(t), key):
                raise Refused(f"tensor attribute {_short(key)} is not allowed: tm.load sets attributes whose names "
                              "are identifiers not starting with an underscore and not naming a method or property "
                              "of the tensor")
    for part in parts:
        for key, value in (part or {}).items():
            setattr(t, key, value)


def _sizes(values, what: str) -> tuple[int, ...]:
    if type(values) not in (tuple, list, Size) or len(values) > _MAX_DIMS \
            or not all(type(v) is int and 0 <= v <= _MAX_INT64 for v in values):
        raise Refused(f"a tensor's {what} must be a tuple of at most {_MAX_DIMS} integers from 0 to 2**63 - 1, "
                      f"not {_short(values)}")
    return tuple(values)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _ordered_dict(items=()):
    if type(items) not in (list, tuple, dict, collections.OrderedDict):
        raise Refused(f"OrderedDict of a {type(items).__name__}")
    return collections.OrderedDict(items)


def _counter(items=None):
    if items is not None and type(items) is not dict:
        raise Refused(f"Counter of a {type(items).__name__}")
    return collections.Counter(items or {})


def _set(items=()):
    if type(items) not in (list, tuple):
        raise Refused(f"set of a {type(items).__name__}")
    return set(items)


def _complex(real=0.0, imag=0.0):
    if type(real) not in (int, float) or type(imag) not in (int, float):
        raise Refused("complex() of values that are not numbers")
    return complex(real, imag)


def _bytearray(data=b""):
    if type(data) is not bytes:
        raise Refused(f"bytearray of a {type(data).__name__}")
    return bytearray(data)


def _encode(text, encoding="utf-8"):
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise Refused("_codecs.encode is allowed on a str with encoding 'latin1' only")
    return text.encode("latin1")


def _size(values=()):
    if type(values) not in (tuple, list) or not all(type(v) is int for v in values):
        raise Refused(f"torch.Size of {_short(values)}")
    return Size(values)


def _device(kind, index=None):
    if type(kind) is not str or (index is not None and type(index) is not int):
        raise Refused(f"torch.device({_short(kind)}, {_short(index)})")
    try:
        return device(kind) if index is None else device(kind, index)
    except (RuntimeError, ValueError, TypeError) as e:
        raise Refused(f"torch.device: {e}") from None


def _new_parameter(loader: _Loader):
    def new(data=None, requires_grad=True):
        return loader.parameter(wrap_array(np.empty(0, np.float32)) if data is None else data, requires_grad)
    return new


_TENSOR, _PARAMETER = "torch.Tensor", "torch.nn.parameter.Parameter"


def _builders(loader: _Loader) -> dict:
    """The allow-list: PyTorch's ``weights_only`` globals, each as what tensormodes makes of it.

    The loader does not keep the table (its builders hold the loader's methods): a loaded
    object is freed by reference counting, its buffer with it, without waiting for a
    garbage collection."""
    table = dict(_static_builders())
    for name, method in (("_rebuild_tensor", loader.tensor_v1), ("_rebuild_tensor_v2", loader.tensor),
                         ("_rebuild_tensor_v3", loader.tensor_v3), ("_rebuild_parameter", loader.parameter),
                         ("_rebuild_parameter_with_state", loader.parameter),
                         ("_rebuild_meta_tensor_no_storage", loader.meta_tensor)):
        table[f"torch._utils.{name}"] = Builder(f"torch._utils.{name}", method)
    table["torch._tensor._rebuild_from_type_v2"] = Builder("torch._tensor._rebuild_from_type_v2", loader.from_type)
    table[_PARAMETER] = Builder(_PARAMETER, new=_new_parameter(loader))
    return table


_STATIC: dict = {}


def _static_builders() -> dict:
    """The part of the allow-list that is the same for every load (built at the first)."""
    if _STATIC:
        return _STATIC
    table: dict = {
        "collections.OrderedDict": Builder("collections.OrderedDict", _ordered_dict, _ordered_dict),
        "collections.Counter": Builder("collections.Counter", _counter, _counter),
        "builtins.set": Builder("builtins.set", _set),
        "builtins.complex": Builder("builtins.complex", _complex),
        "builtins.bytearray": Builder("builtins.bytearray", _bytearray),
        "_codecs.encode": Builder("_codecs.encode", _encode),
        "torch.Size": Builder("torch.Size", _size),
        "torch.device": Builder("torch.device", _device),
        _TENSOR: Builder(_TENSOR),
    }
    for dtype, name in TORCH_DTYPE_NAMES.items():
        table[f"torch.{name}"] = dtype
    for name in _UNSUPPORTED_DTYPES:
        table[f"torch.{name}"] = Builder(f"torch.{name}", unsupported=f"dtype torch.{name} has no tensormodes "
                                                                      "equivalent")
    for dtype, name in _STORAGE_NAMES.items():
        table[f"torch.{name}"] = _StorageType(f"torch.{name}", dtype)
        table[f"torch.{_LEGACY_TENSOR_NAMES[dtype]}"] = Builder(
            f"torch.{_LEGACY_TENSOR_NAMES[dtype]}", unsupported="legacy tensor classes (checkpoints of PyTorch "
                                                                "before 0.4) are not supported")
    table["torch.UntypedStorage"] = _StorageType("torch.UntypedStorage", dt.uint8)
    for name, kind in _UNSUPPORTED_REBUILDS.items():
        table[f"torch._utils.{name}"] = Builder(f"torch._utils.{name}",
                                                unsupported=f"tensormodes has no {kind} tensors")
    table["torch.serialization._get_layout"] = Builder("torch.serialization._get_layout",
                                                       unsupported="tensormodes has no sparse tensors")
    _STATIC.update(table)
    return _STATIC


def _unpickle(data, where: str, loader: _Loader, start: int = 0) -> tuple[object, int]:
    unpickler = Unpickler(data, where, _builders(loader), loader.persistent_load, start)
    return unpickler.load(), unpickler.position


def _swapped(raw: np.ndarray, dtype: dt.dtype) -> np.ndarray:
    return raw.view(dtype._np).byteswap().view(np.uint8)


def _load_zip(buffer: np.ndarray, map_location, mmap: bool):
    archive = Archive(buffer)
    if not archive.records:
        raise FormatError("the zip archive is empty: not a PyTorch checkpoint")
    prefix = next(iter(archive.records)).split("/")[0]
    if f"{prefix}/data.pkl" not in archive.records:
        raise FormatError(f"the zip archive has no record {prefix + '/data.pkl'!r}: not a PyTorch checkpoint")
    byteorder = options.fallback_byteorder()
    skip = options.skipping_data()
    if f"{prefix}/byteorder" in archive.records:
        byteorder = bytes(archive.read(f"{prefix}/byteorder")).decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise FormatError(f"record {prefix + '/byteorder'!r} says {byteorder!r}, not 'little' or 'big'")

    def source(key: str, dtype: dt.dtype, numel: int) -> np.ndarray:
        name = f"{prefix}/data/{key}"
        if name not in archive.records:
            raise Refused(f"storage {key!r} has no record {name!r} in the archive")
        # torch.load checks no record's CRC-32; neither do we for storages (half a load's time: a
        # changed byte there changes values only, as in torch); data.pkl's is checked, as it is cheap
        raw = archive.read(name, check=False)
        if len(raw) != numel * dtype.itemsize:
            raise Refused(f"storage {key!r} holds {numel} elements of {dtype._name} ({numel * dtype.itemsize} bytes) "
                          f"but record {name!r} holds {len(raw)} bytes")
        if skip:  # skip_data: the sizes of the file, none of its bytes
            return np.zeros(len(raw), np.uint8)
        return _swapped(raw, dtype) if byteorder == "big" and dtype.itemsize > 1 else raw

    loader = _Loader(source, map_location, "data.pkl")
    obj, _ = _unpickle(bytes(archive.read(f"{prefix}/data.pkl")), "data.pkl", loader)
    loader.share()
    return obj


def _legacy_header(data, loader: _Loader) -> int:
    """Checks the magic number, protocol version and system information; where the object starts."""
    magic, at = _unpickle(data, "the legacy checkpoint", loader)
    if magic != _LEGACY_MAGIC:
        raise FormatError(f"not a PyTorch checkpoint: the file starts with a pickle of {_short(magic)}, not "
                          "PyTorch's magic number")
    version, at = _unpickle(data, "the legacy checkpoint", loader, at)
    if version != _LEGACY_PROTOCOL:
        raise FormatError(f"legacy checkpoint protocol version {_short(version)} is not supported (1001 is)")
    # The system information (byte order, C type sizes) is read past, as torch.load does: a
    # legacy file's element counts and storages are little-endian whatever machine wrote it
    # (PyTorch converts them when it writes on a big-endian machine), so nothing depends on it.
    _, at = _unpickle(data, "the legacy checkpoint", loader, at)
    return at


def _load_legacy(buffer: np.ndarray, map_location, mmap: bool):
    if mmap:
        raise RuntimeError("mmap can only be used with files saved with `torch.save(_use_new_zipfile_serialization="
                           "True)`, please torch.save your checkpoint with this option in order to use mmap.")
    data = memoryview(buffer)
    # First pass, nothing placed: where the object ends, and each storage's dtype and size.
    survey = _Loader(lambda key, dtype, numel: None, "meta", "the legacy checkpoint")
    start = _legacy_header(data, survey)
    _, at = _unpickle(data, "the legacy checkpoint", survey, start)
    keys, at = _unpickle(data, "the legacy checkpoint", survey, at)
    if type(keys) is not list or set(keys) != set(survey.storages) or len(keys) != len(survey.storages):
        raise FormatError(f"the legacy checkpoint's storage list {_short(keys)} does not match the storages its "
                          f"object uses {_short(sorted(survey.storages))}")
    blocks = {}
    for key in keys:
        storage = survey.storages[key]
        if at + 8 > len(buffer):
            raise FormatError(f"storage {key!r} at offset {at}: the legacy checkpoint is truncated")
        count = int.from_bytes(bytes(buffer[at:at + 8]), "little")
        nbytes = storage.numel * storage.dtype.itemsize
        if count != storage.numel or at + 8 + nbytes > len(buffer):
            raise FormatError(f"storage {key!r} at offset {at}: it says {count} elements, its pickle says "
                              f"{storage.numel}, and {len(buffer) - at - 8} bytes are left")
        blocks[key] = np.zeros(nbytes, np.uint8) if options.skipping_data() else buffer[at + 8:at + 8 + nbytes]
        at += 8 + nbytes
    loader = _Loader(lambda key, dtype, numel: blocks[key], map_location, "the legacy checkpoint")
    obj, _ = _unpickle(data, "the legacy checkpoint", loader, start)
    loader.share()
    return obj


def unsafe_globals(buffer: np.ndarray) -> list[str]:
    """The globals named in the zip checkpoint's ``data.pkl`` that ``load`` would refuse as not
    allowed, in order of first appearance."""
    if bytes(buffer[:4]) != b"PK\x03\x04":
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    archive = Archive(buffer)
    names = [name for name in archive.records if name.endswith("/data.pkl") and name.count("/") == 1]
    if not names:
        raise FormatError("the zip archive has no record '<folder>/data.pkl': not a PyTorch checkpoint")
    allowed = _builders(_Loader(None, None, "data.pkl")).keys() | user_classes().keys()
    return [name for name in globals_in(archive.read(names[0]), "data.pkl") if name not in allowed]


def load_checkpoint(buffer: np.ndarray, map_location, mmap: bool, legacy: bool):
    """The object of the PyTorch checkpoint in ``buffer`` (zip, or legacy when ``legacy``)."""
    check_map_location(map_location)
    return (_load_legacy if legacy else _load_zip)(buffer, map_location, mmap)
