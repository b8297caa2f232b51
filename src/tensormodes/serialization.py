"""``save`` and ``load``: checkpoints as safetensors files or as PyTorch's files. Nothing is ever unpickled.

A path ending in ``.safetensors`` (or a file object whose ``name`` does) gets the safetensors
format below. Any other path or file object gets PyTorch's zip format (``torch.save``'s, read
by ``torch.load(..., weights_only=True)``; see ``_checkpoints/pytorch_format.py``). :func:`load`
recognises the format by content: a zip, a legacy (non-zip) PyTorch checkpoint, or a
safetensors file. PyTorch's pickles are read by a restricted interpreter of our own
(``_checkpoints/unpickler.py``) that builds only allow-listed objects and imports or calls
nothing else; Python's ``pickle`` module never sees file data.

A safetensors file written by :func:`save` is a real safetensors file: an 8-byte little-endian header
length, a JSON header (padded with spaces to a multiple of 8 bytes) mapping names to
``{"dtype", "shape", "data_offsets"}``, then the raw little-endian bytes. Any safetensors
reader sees the tensors; :func:`load` also rebuilds the rest of the object from two
``__metadata__`` entries:

* ``"tensormodes"``: a JSON document (format version 1)::

      {"version": 1,
       "storages": {name: {"dtype": "float32", "sum64": [12345678901234567890, ...]}},
       "tensors": [{"storage": name, "dtype": "float32", "shape": [2, 3], "stride": [3, 1],
                    "offset": 0, "requires_grad": false, "parameter": false}],
       "object": NODE}

  A *storage* is one safetensors entry: a block of memory that one or more saved tensors
  use. Tensors sharing memory (tied weights, views of one another) share a storage, so their
  bytes are written once and they come back sharing memory, as views of one base, with their
  strides and their byte ``offset`` within the storage. An entry is named after the path of
  its first tensor in the object (``"model.fc.weight"``, ``"state.0.exp_avg"``; ``"tensor"``
  for a lone tensor; ``#1``, ``#2`` ... added to repeated names). It has the dtype and shape
  of a saved tensor spanning the whole storage (one that is not a view preferred) if there
  is one, else it is 1-D, of its first tensor's dtype (``U8`` when the size is not a
  multiple of that). ``sum64`` lists, for each MiB of the storage's bytes in turn, the sum
  modulo 2**64 of its 64-bit little-endian words (the storage's last word padded with zero
  bytes): one NumPy reduction, at memory speed (files written before this checksum hold
  ``crc32`` instead, the CRC-32 of each MiB, and still load). It detects every change
  confined to one 8-byte word (every flipped bit, every changed byte) and a change of
  several words unless their changes cancel modulo 2**64: the same bit flipped both ways in
  two words of one MiB, or words swapped within it, pass. CRC-32 caught those too, but
  checking it made loading five times slower than reading the file. NODE is the object as
  JSON: ``null``, booleans, integers, strings and finite floats as themselves, lists as
  arrays, and one-key tagged objects for the rest: ``{"tensor": i}`` (an index into
  ``tensors``: one tensor object saved twice comes back as one object), ``{"tuple":
  [...]}``, ``{"Size": [...]}``, ``{"dict": {...}}`` (string keys) or ``{"dict": [[key,
  value], ...]}`` (other keys, such as an optimizer state's integer keys), ``{"OrderedDict":
  ...}`` (the same two forms, plus ``"attributes": {name: NODE}`` for attributes set on it,
  such as a state dict's ``_metadata``), ``{"float": "inf" | "-inf" | "nan"}``,
  ``{"complex": [re, im]}``, ``{"dtype": "float32"}`` and ``{"device": "cpu"}``. Containers
  met twice are stored twice.
* ``"tensormodes.crc32"``: the CRC-32 of the header written without this entry, as compact
  JSON, in decimal, so a changed byte anywhere in the header is detected.

safetensors has no complex128 type: a complex128 storage is written as ``F64`` with one
more trailing dimension of 2 (the real and imaginary parts, which is how the bytes are laid
out anyway) and its ``dtype`` in ``storages`` says ``complex128``. Data is written widest
elements first, as safetensors' own writer does, so every block stays aligned.

A malformed, truncated or corrupted file raises :class:`FormatError` (a ``ValueError``)
naming the tensor or the header field at fault. Besides what the format above allows, a
file may not hold: a key twice in one JSON object (anywhere; safetensors refuses duplicate
fields too), ``NaN`` or ``Infinity``, a shape of more than 64 sizes (NumPy's limit) or a size,
stride or offset outside int64, an integer of more than 4,300 digits (Python's default limit
for converting text to int), arrays and objects nested more than 316 levels deep in its JSON,
or an object whose containers (lists, tuples, dicts, OrderedDicts; a tuple used as a key
counts too) nest more than 100 deep. :func:`save` refuses such integers and objects, so
whatever it writes, :func:`load` reads. Shapes are checked before any arithmetic, and deep
JSON is refused before it can exhaust the stack: neither costs time or crashes.

Files without the ``"tensormodes"`` entry (written by ``safetensors.torch.save_file`` or
any other tool) load as a flat ``dict`` of tensors, in the header's order.

>>> import io
>>> import tensormodes as tm
>>> buffer = io.BytesIO()
>>> w = tm.arange(6.).reshape(2, 3)
>>> tm.save({"w": w, "w_t": w.t(), "lr": 0.1, "betas": (0.9, 0.999)}, buffer)
>>> state = tm.load(io.BytesIO(buffer.getvalue()))
>>> state["w_t"].stride(), state["w_t"]._base is state["w"], state["betas"]
((1, 3), True, (0.9, 0.999))
"""

from __future__ import annotations

import collections
import json
import math
import os
import reprlib
import sys
import zlib
from typing import IO, Any

import numpy as np

from . import _dtype as dt
from ._api.parameter import Parameter
from ._api.tensor import Size, Tensor
from ._autograd.graph import share_version
from ._checkpoints import files, pytorch_format
from ._checkpoints.errors import FormatError, UnsafeFileError
from ._checkpoints.options import (
    LoadEndianness,
    get_crc32_options,
    get_default_load_endianness,
    get_default_mmap_options,
    set_crc32_options,
    set_default_load_endianness,
    set_default_mmap_options,
    skip_data,
)
from ._checkpoints.safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._checkpoints.ziparchive import ZIP_MAGIC
from ._device import device, parse_device
from ._meta_array import MetaArray
from ._tensor_base import wrap_array

__all__ = ["save", "load", "FormatError", "UnsafeFileError", "add_safe_globals", "safe_globals",
           "get_safe_globals", "clear_safe_globals", "get_unsafe_globals_in_checkpoint", "get_crc32_options",
           "set_crc32_options", "get_default_mmap_options", "set_default_mmap_options", "LoadEndianness",
           "get_default_load_endianness", "set_default_load_endianness", "skip_data"]

FORMAT_VERSION = 1
_DOC_KEY = "tensormodes"
_HEADER_CRC_KEY = "tensormodes.crc32"
_MAX_HEADER = 100_000_000  # safetensors readers refuse larger headers
_MAX_DEPTH = 100  # containers nested in one another in a saved object; save refuses, load rejects deeper
# JSON nesting a valid file may reach: each container level takes at most 3 JSON levels ({"dict":
# [[key, value]]}), plus the document and a leaf ({"complex": [{"float": "nan"}, 0.0]}).
_MAX_JSON_DEPTH = 3 * _MAX_DEPTH + 16
_MAX_DIMS = 64  # NumPy's limit on an array's dimensions
_MAX_INT64 = 2 ** 63 - 1
_MAX_INT_DIGITS = 4300  # Python's default limit for converting decimal strings to int
_INT_BOUND = 10 ** _MAX_INT_DIGITS  # saved integers are smaller in magnitude, so they load anywhere
_CHUNK = 1 << 20  # bytes per checksum
_CHUNK_WORDS = _CHUNK // 8
_MASK64 = (1 << 64) - 1

_CODES = {
    dt.bool: "BOOL", dt.uint8: "U8", dt.int8: "I8", dt.int16: "I16", dt.int32: "I32", dt.int64: "I64",
    dt.float16: "F16", dt.bfloat16: "BF16", dt.float32: "F32", dt.float64: "F64", dt.complex64: "C64",
}
_FROM_CODE = {code: d for d, code in _CODES.items()}
_BY_NAME = {d._name: d for d in dt.ALL_DTYPES}
_SCALARS = (type(None), bool, int, str)


# -- saving ------------------------------------------------------------------------------------------

class _Bytes:
    """A flat uint8 window ``[lo, hi)`` onto memory owned by ``owner`` (kept alive)."""

    def __init__(self, lo: int, hi: int, owner: np.ndarray) -> None:
        self.__array_interface__ = {"data": (lo, True), "shape": (hi - lo,), "typestr": "|u1", "version": 3}
        self._owner = owner


class _Encoder:
    """Turns an object into a JSON tree, collecting its tensors."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.names: list[str] = []
        self._index: dict[int, int] = {}
        self._active: set[int] = set()

    def encode(self, value, path: str, name: tuple):
        kind = type(value)
        if kind in _SCALARS:
            if kind is int and not -_INT_BOUND < value < _INT_BOUND:
                raise ValueError(f"tm.save cannot store the integer at {path}: it has more than {_MAX_INT_DIGITS} "
                                 "digits, more than tm.load (and Python by default) converts from text")
            return value
        if kind is float:
            if math.isfinite(value):
                return value
            return {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
        if isinstance(value, Tensor):
            return {"tensor": self._tensor(value, path, name)}
        if kind is dt.dtype:
            return {"dtype": value._name}
        if kind is device:
            return {"device": str(value)}
        if kind is complex:
            return {"complex": [self.encode(value.real, path, name), self.encode(value.imag, path, name)]}
        if kind is Size:
            return {"Size": list(value)}
        if kind in (list, tuple, dict, collections.OrderedDict):
            if id(value) in self._active:
                raise ValueError(f"tm.save cannot store an object that contains itself (at {path})")
            # The containers being encoded are exactly those around this one.
            _check_depth(len(self._active), path)
            self._active.add(id(value))
            try:
                return self._container(value, kind, path, name)
            finally:
                self._active.discard(id(value))
        raise TypeError(f"tm.save cannot store a value of type {kind.__qualname__} at {path}: it stores tensors, "
                        "dicts, OrderedDicts, lists, tuples, str, int, float, complex, bool, None, "
                        "tensormodes.dtype and tensormodes.device")

    def _container(self, value, kind, path: str, name: tuple):
        if kind is list:
            return [self.encode(v, f"{path}[{i}]", (*name, str(i))) for i, v in enumerate(value)]
        if kind is tuple:
            return {"tuple": [self.encode(v, f"{path}[{i}]", (*name, str(i))) for i, v in enumerate(value)]}
        if all(type(k) is str for k in value):
            items = {k: self.encode(v, f"{path}[{k!r}]", (*name, k)) for k, v in value.items()}
        else:
            items = [[self._key(k, path, len(self._active)), self.encode(v, f"{path}[{k!r}]", (*name, str(k)))]
                     for k, v in value.items()]
        if kind is dict:
            return {"dict": items}
        node: dict[str, Any] = {"OrderedDict": items}
        attributes = vars(value)
        if attributes:
            node["attributes"] = {k: self.encode(v, f"{path}.{k}", (*name, k)) for k, v in attributes.items()}
        return node

    def _key(self, key, path: str, depth: int):
        kind = type(key)
        if kind is tuple:
            _check_depth(depth, f"{path} (a key)")
            return {"tuple": [self._key(k, path, depth + 1) for k in key]}
        if kind in _SCALARS or kind in (float, complex, dt.dtype, device):
            return self.encode(key, path, ())
        raise TypeError(f"tm.save cannot store a dict key of type {kind.__qualname__} in {path}: keys may be str, "
                        "int, float, complex, bool, None, dtypes, devices and tuples of them")

    def _tensor(self, t: Tensor, path: str, name: tuple) -> int:
        index = self._index.get(id(t))
        if index is None:
            if type(t._data) is MetaArray:
                raise NotImplementedError(f"tm.save cannot store the meta tensor at {path}: a meta tensor has no "
                                          "data to save; materialize it first (e.g. module.to_empty(device='cpu') "
                                          "and initialize or load its values)")
            if type(t) not in (Tensor, Parameter):
                raise TypeError(f"tm.save cannot store a tensor of subclass {type(t).__qualname__} at {path}: "
                                "convert it with .as_subclass(tensormodes.Tensor) first")
            index = self._index[id(t)] = len(self.tensors)
            self.tensors.append(t)
            self.names.append(".".join(name) or "tensor")
        return index


def _check_depth(depth: int, path: str) -> None:
    """Refuses a container with ``depth`` containers around it when that is the limit."""
    if depth >= _MAX_DEPTH:
        raise ValueError(f"tm.save cannot store objects nested more than {_MAX_DEPTH} levels deep: {path} is a "
                         f"container inside {depth} others")


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _bounds(array: np.ndarray, address: int) -> tuple[int, int]:
    """The bytes ``[lo, hi)`` that ``array`` (starting at ``address``) spans."""
    if array.flags.c_contiguous:
        return address, address + array.nbytes
    lo = hi = address
    if array.size:
        for n, s in zip(array.shape, array.strides):
            if s >= 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        hi += array.itemsize
    return lo, hi


class _Storage:
    """Saved tensors sharing one block of memory ``[lo, hi)``."""

    def __init__(self, members: list[int], lo: int, hi: int) -> None:
        self.members, self.lo, self.hi = members, lo, hi


def _storages(arrays: list[np.ndarray], bounds: list[tuple[int, int]]) -> list[_Storage]:
    """Groups tensors whose memory overlaps; each group becomes one storage.

    Distinct allocations never overlap in the address space, so overlapping byte ranges
    are exactly the tensors sharing memory (a base and its views, tied weights).
    """
    spans = sorted((lo, hi, i) for i, (lo, hi) in enumerate(bounds))
    groups: list[_Storage] = []
    current = None
    for lo, hi, i in spans:
        if lo == hi or any(s % arrays[i].itemsize for s in arrays[i].strides):
            groups.append(_Storage([i], lo, hi))  # empty, or oddly strided: a storage of its own
        elif current is not None and lo < current.hi:
            current.members.append(i)
            current.hi = max(current.hi, hi)
        else:
            current = _Storage([i], lo, hi)
            groups.append(current)
    for g in groups:
        g.members.sort()
    groups.sort(key=lambda g: g.members[0])
    return groups


def _plan(tensors: list[Tensor], names: list[str]):
    """The header entries, the metadata's storages and tensors, and the buffers to write."""
    arrays = [t._data for t in tensors]
    addresses = [_address(a) for a in arrays]
    bounds = [_bounds(a, address) for a, address in zip(arrays, addresses)]
    entries: dict[str, dict] = {}
    storages: dict[str, dict] = {}
    descriptions: list[dict] = [{} for _ in tensors]
    blocks = []
    for group in _storages(arrays, bounds):
        members = {i: arrays[i] for i in group.members}
        first = members[group.members[0]]
        lo, hi = group.lo, group.hi
        if lo == hi or any(s % first.itemsize for s in first.strides):
            # Empty or oddly strided (a NumPy view PyTorch could not make): written contiguous.
            first = members[group.members[0]] = np.ascontiguousarray(first)
            addresses[group.members[0]] = _address(first)
            lo, hi = bounds[group.members[0]] = _bounds(first, addresses[group.members[0]])
        # The entry takes the dtype and shape of a tensor spanning the whole storage (a base saved
        # with its views) when there is one, so safetensors readers see that tensor.
        spanning = [i for i, a in members.items() if a.flags.c_contiguous and bounds[i] == (lo, hi)]
        # Prefer a tensor that is not itself a view: it comes back as the base of the others.
        spanning.sort(key=lambda i: tensors[i]._view_base is not None)
        whole = members[spanning[0]] if spanning else None
        if whole is not None:
            storage_dtype = dt.NP_TO_DTYPE[whole.dtype]
            shape, raw = list(whole.shape), whole.reshape(-1).view(np.uint8)
        else:
            storage_dtype = dt.NP_TO_DTYPE[first.dtype] if (hi - lo) % first.itemsize == 0 else dt.uint8
            shape, raw = [(hi - lo) // storage_dtype.itemsize], np.asarray(_Bytes(lo, hi, first))
        code = _CODES.get(storage_dtype, "F64")
        if storage_dtype is dt.complex128:  # safetensors has no C128: its bytes as pairs of F64
            shape = [*shape, 2]
        name = base = names[group.members[0]]
        suffix = 1
        while name in entries or name == "__metadata__":
            name, suffix = f"{base}#{suffix}", suffix + 1
        entries[name] = {"dtype": code, "shape": shape}
        storages[name] = {"dtype": storage_dtype._name}
        blocks.append((storage_dtype.itemsize, name, raw))
        for i, a in members.items():
            t = tensors[i]
            descriptions[i] = {
                "storage": name, "dtype": dt.NP_TO_DTYPE[a.dtype]._name, "shape": list(a.shape),
                "stride": [s // a.itemsize for s in a.strides],
                "offset": addresses[i] - lo if a.size else 0,
                "requires_grad": bool(t._requires_grad), "parameter": type(t) is Parameter}
    blocks.sort(key=lambda b: -b[0])  # widest elements first: every block stays aligned
    offset = 0
    for _, name, raw in blocks:
        entries[name]["data_offsets"] = [offset, offset + raw.nbytes]
        offset += raw.nbytes
    return entries, storages, descriptions, {name: raw for _, name, raw in blocks}


def _dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def save(obj: object, f: str | os.PathLike | IO[bytes], pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Saves an object to a disk file: PyTorch's zip format, or safetensors for a ``.safetensors`` name.

    ``obj`` may nest dicts (also ``OrderedDict`` and integer keys), lists, tuples,
    tensors (and ``nn.Parameter``), numbers, strings, bools, None, dtypes and devices;
    PyTorch's format also takes sets, ``Counter``, bytes, bytearray, ``Size``, meta tensors and
    instances of the plain-data classes given to :func:`add_safe_globals` (written as pickle
    writes them, so ``torch.load`` reads them under its own ``safe_globals``).
    Anything else raises ``TypeError`` naming where it sits in ``obj``. Containers nested too
    deep (100 levels in safetensors, 200 in PyTorch's format) raise ``ValueError``; in safetensors
    so do integers of more than 4,300 digits and meta tensors (``NotImplementedError``). Tensors
    sharing memory are written once and load sharing memory. ``f`` is a path or a binary file
    object. A path is replaced atomically: a failed save leaves the old file; a symlink is
    written through (its target replaced); the file keeps its permission bits; a hard-linked
    file is detached from its other names, which keep the old contents. ``pickle_module``
    must stay None (nothing is pickled by Python); ``pickle_protocol`` is ignored (PyTorch's
    format is written with protocol 2) and ``_use_new_zipfile_serialization`` must stay True.

    >>> import io
    >>> import tensormodes as tm
    >>> buffer = io.BytesIO()
    >>> tm.save({"step": 3, "weight": tm.ones(2, 2)}, buffer)
    >>> data = buffer.getvalue()
    >>> data[:4], tm.load(io.BytesIO(data))["step"]
    (b'PK\\x03\\x04', 3)
    """
    if pickle_module is not None:
        raise ValueError("tm.save never pickles: pickle_module must be None")
    if _use_new_zipfile_serialization is not True:
        raise ValueError("tm.save writes PyTorch's zip format only: _use_new_zipfile_serialization must be True")
    _check_byteorder()
    is_path = isinstance(f, (str, os.PathLike))
    if not is_path and not hasattr(f, "write"):
        raise TypeError(f"tm.save: f must be a path or a binary file object, not {type(f).__name__}")
    name = os.fspath(f) if is_path else getattr(f, "name", None)
    name = name if isinstance(name, str) else ""
    if name.endswith(".safetensors"):
        encoder = _Encoder()
        tree = encoder.encode(obj, "obj", ())
        entries, storages, descriptions, blocks = _plan(encoder.tensors, encoder.names)
        document = {"version": FORMAT_VERSION, "storages": storages, "tensors": descriptions, "object": tree}

        def write(file) -> None:
            _write(file, entries, document, blocks)
    else:
        stem = os.path.splitext(os.path.basename(name))[0] if is_path else "archive"
        write = pytorch_format.write_checkpoint(obj, stem)
    if is_path:
        files.replace_file(os.fspath(f), write)
    else:
        write(f)


def _header(entries: dict, document: dict) -> bytes:
    """The header: compact JSON, with the checksum of the rest after the document, padded with
    spaces to a multiple of 8 bytes."""
    document_text = _dumps(_dumps(document))
    text = _dumps({"__metadata__": {_DOC_KEY: "@"}, **entries})  # "@": where the document goes
    head, tail = text.split('"@"', 1)
    checksum = zlib.crc32(f"{head}{document_text}{tail}".encode())
    text = f'{head}{document_text},"{_HEADER_CRC_KEY}":"{checksum}"{tail}'.encode()
    return text + b" " * (-len(text) % 8)


def _write(file, entries: dict, document: dict, blocks: dict[str, np.ndarray]) -> None:
    storages = document["storages"]
    for name, raw in blocks.items():
        storages[name]["sum64"] = _sum64(raw)
    header = _header(entries, document)
    file.write(len(header).to_bytes(8, "little"))
    file.write(header)
    for raw in blocks.values():
        file.write(raw)


def _sum64(block: np.ndarray) -> list[int]:
    """The sum modulo 2**64 of each MiB of ``block``'s 64-bit little-endian words (see the module docstring)."""
    size = len(block)
    if size <= _CHUNK and size % 8 == 0:  # the common case: one reduction of whole words
        return [int(np.add.reduce(block.view(np.uint64)))]
    whole = size - size % 8
    words = block[:whole].view(np.uint64)
    last = int.from_bytes(bytes(block[whole:]), "little") if whole < size else 0  # trailing bytes, zero-padded
    if size <= _CHUNK:  # a MiB or less: one reduction, no reshaping
        return [(int(np.add.reduce(words)) + last) & _MASK64]
    full = len(words) - len(words) % _CHUNK_WORDS
    sums = np.add.reduce(words[:full].reshape(-1, _CHUNK_WORDS), axis=1).tolist()
    if full < len(words) or whole < size:
        sums.append((int(np.add.reduce(words[full:])) + last) & _MASK64)
    return sums


def _crc32(block: np.ndarray) -> list[int]:
    """The CRC-32 of each MiB of ``block`` (the checksum of files written before ``sum64``)."""
    return [zlib.crc32(block[start:start + _CHUNK]) for start in range(0, max(len(block), 1), _CHUNK)]


def _check_byteorder() -> None:
    if sys.byteorder != "little":
        raise NotImplementedError("tm.save and tm.load support little-endian machines only")


# -- loading -----------------------------------------------------------------------------------------

class _LongInt(str):
    """An integer in a file with more digits than a valid file holds there, kept as its text:
    converting it could take seconds (or fail), and the field holding it is reported instead."""

    def __repr__(self) -> str:
        return f"<integer of {len(self.lstrip('-'))} digits>"


class _JSONRefused(Exception):
    """Raised inside the JSON parser by its hooks; :func:`_parse_json` names the document."""


def _unique_keys(pairs: list) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _JSONRefused(f"holds the key {reprlib.repr(key)} twice in one object: duplicate keys are "
                                   "not allowed (safetensors refuses them too)")
            seen.add(key)
    return result


def _refuse_constant(name: str):
    raise _JSONRefused(f"holds {name}, which is not JSON")


def _header_int(text: str):
    # Sizes and byte offsets fit in 64 bits, 20 digits: a longer integer is invalid, and is not converted.
    return int(text) if len(text) <= 20 else _LongInt(text)


def _document_int(text: str):
    if len(text) <= _MAX_INT_DIGITS + 1:  # + 1: the sign
        try:
            return int(text)
        except ValueError:  # over this process's own limit (sys.set_int_max_str_digits)
            pass
    return _LongInt(text)


_HEADER_JSON = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_int=_header_int,
                                parse_constant=_refuse_constant)
# The document may hold many integers: parsed by json's own fast conversion, and again with
# _document_int only when one is too long to convert (a crafted file), so that its field is named.
_DOCUMENT_JSON = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_refuse_constant)
_DOCUMENT_JSON_LONG_INTS = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_int=_document_int,
                                            parse_constant=_refuse_constant)
# json's parser recurses in C once per level of nesting and stops with RecursionError at the
# recursion limit; C stacks take the default limit (1000) with ease, but under a limit raised
# past this a deep file could exhaust the stack first, so its depth is measured before parsing.
_SAFE_RECURSION_LIMIT = 5000
_BRACKET_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 opens, -1 (as int8) closes
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _too_deep(text: str, limit: int) -> bool:
    """Whether the JSON ``text`` nests arrays and objects more than ``limit`` levels deep,
    found without parsing it (no recursion). Brackets inside strings do not count; up to the
    first syntax error (where a parser stops) the count is exact."""
    raw = text.encode("utf-8", "surrogatepass")
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    if b"\\" in raw:  # escapes: an escaped backslash, then an escaped quote, neither delimit strings
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    steps = np.frombuffer(b"".join(raw.split(b'"')[::2]).translate(_BRACKET_STEPS, _NOT_BRACKETS), np.int8)
    depth = 0
    for start in range(0, len(steps), _CHUNK):  # in chunks: a 100 MB header needs no 800 MB of sums
        levels = np.cumsum(steps[start:start + _CHUNK], dtype=np.int64)
        if depth + int(levels.max()) > limit:
            return True
        depth += int(levels[-1])
    return False


def _parse_json(text: str, decoder: json.JSONDecoder, what: str, hint: str = "",
                long_ints: json.JSONDecoder | None = None):
    """``text`` parsed by ``decoder`` (or by ``long_ints`` when it holds an integer too long
    to convert); anything wrong is a :class:`FormatError` naming ``what`` was parsed."""
    too_deep = FormatError(f"{what} nests arrays and objects more than {_MAX_JSON_DEPTH} levels deep{hint}")
    if sys.getrecursionlimit() > _SAFE_RECURSION_LIMIT and _too_deep(text, _MAX_JSON_DEPTH):
        raise too_deep
    try:
        try:
            return decoder.decode(text)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer over the digits limit: the only other ValueError json raises
            if long_ints is None:
                raise
            return long_ints.decode(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"{what} is not valid JSON ({e}){hint}") from None
    except _JSONRefused as e:
        raise FormatError(f"{what} {e}") from None
    except RecursionError:
        if not _too_deep(text, _MAX_JSON_DEPTH):
            raise  # the caller's own stack was deep: not the file's fault
        raise too_deep from None


def _parse_header(buffer) -> tuple[dict, str, int]:
    """The header as a dict, its text, and where the data starts."""
    size = len(buffer)
    if size < 8:
        raise FormatError(f"not a safetensors file: {size} bytes, too short for the 8-byte header length")
    n = int.from_bytes(bytes(buffer[:8]), "little")
    if n > size - 8:
        raise FormatError(f"header length field says {n} bytes but the file holds {size - 8} after it: "
                          "wrong header length or truncated file")
    if n > _MAX_HEADER:
        raise FormatError(f"header length field says {n} bytes, more than the {_MAX_HEADER} that safetensors "
                          "headers may take")
    try:
        text = bytes(buffer[8:8 + n]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"header is not valid JSON ({e}): corrupted header or wrong header length") from None
    header = _parse_json(text, _HEADER_JSON, "header", ": corrupted header or wrong header length")
    if not isinstance(header, dict):
        raise FormatError(f"header must be a JSON object, not {type(header).__name__}")
    return header, text, 8 + n


_ENTRY_KEYS = frozenset(("dtype", "shape", "data_offsets"))


def _entries(header: dict, data_size: int) -> dict[str, tuple[dt.dtype, list[int], int, int]]:
    """Each tensor's checked header entry: its dtype, shape and byte range in the data."""
    entries = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if type(entry) is not dict or entry.keys() != _ENTRY_KEYS:
            raise FormatError(f"header entry of tensor {name!r} must have exactly the keys dtype, shape and "
                              f"data_offsets, got {reprlib.repr(entry)}")
        code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        dtype = _FROM_CODE.get(code) if type(code) is str else None
        if dtype is None:
            raise FormatError(f"tensor {name!r} has dtype {code!r}, which tensormodes does not support "
                              f"(supported: {', '.join(_FROM_CODE)})")
        # The structure is checked before any arithmetic: the sizes' product below has at most 64
        # factors under 2**63 (a crafted shape of 100,000 huge sizes would take minutes).
        if not _valid_sizes(shape):
            raise FormatError(f"tensor {name!r} has an invalid shape {reprlib.repr(shape)}: a shape is a list of "
                              f"at most {_MAX_DIMS} sizes from 0 to 2**63 - 1")
        if type(offsets) is not list or len(offsets) != 2 or type(offsets[0]) is not int \
                or type(offsets[1]) is not int or not 0 <= offsets[0] <= offsets[1]:
            raise FormatError(f"tensor {name!r} has invalid data_offsets {reprlib.repr(offsets)}: they are two "
                              "byte offsets, the first not after the second")
        begin, stop = offsets
        needed = math.prod(shape) * dtype.itemsize
        if stop - begin != needed:
            raise FormatError(f"tensor {name!r}: data_offsets {offsets} hold {stop - begin} bytes but "
                              f"dtype {code} and shape {shape} need {needed}")
        if stop > data_size:
            raise FormatError(f"tensor {name!r}: data_offsets {offsets} run past the end of the data "
                              f"({data_size} bytes): the file is truncated")
        if not needed and math.prod(s or 1 for s in shape) * dtype.itemsize > _MAX_INT64:
            raise FormatError(f"tensor {name!r} has shape {shape}: even empty, an array's other sizes times its "
                              "element size must stay under 2**63 bytes")
        entries[name] = (dtype, shape, begin, stop)
    end = 0
    for name, (_, _, begin, stop) in sorted(entries.items(), key=_by_offsets):
        if begin != end:
            raise FormatError(f"tensor {name!r}: data_offsets start at {begin}, but the previous tensor ends at "
                              f"{end}: the tensors must cover the data without gaps or overlaps")
        end = stop
    if end != data_size:
        raise FormatError(f"the tensors cover {end} bytes of data but the file holds {data_size}: "
                          "wrong header or trailing bytes")
    return entries


def _valid_sizes(shape) -> bool:
    """Whether ``shape`` is a list of at most ``_MAX_DIMS`` integers from 0 to 2**63 - 1."""
    return type(shape) is list and len(shape) <= _MAX_DIMS and all(
        type(s) is int and 0 <= s <= _MAX_INT64 for s in shape)


def _by_offsets(item: tuple[str, tuple]) -> tuple[int, int]:
    return item[1][2], item[1][3]


def _target_device(map_location) -> None:
    if map_location is None:
        return
    if isinstance(map_location, dict):
        for source, target in map_location.items():
            _target_device(source)
            _target_device(target)
        return
    if callable(map_location) and not isinstance(map_location, (str, device)):
        raise TypeError("tm.load: map_location as a function is not supported; pass a device, a string or a dict")
    parsed = parse_device(map_location)
    if parsed.type != "cpu":
        raise RuntimeError(f"tm.load: cannot load tensors onto device {parsed}: tensormodes loads onto the cpu")


def get_unsafe_globals_in_checkpoint(f: str | os.PathLike | IO[bytes]) -> list[str]:
    """The ``module.name`` strings of the globals in a zip checkpoint's pickle that :func:`load`
    refuses (not PyTorch's ``weights_only`` values, not added with :func:`add_safe_globals`), read
    statically as PyTorch does: nothing is built. A file that is not a zip checkpoint raises
    ``ValueError``.

    >>> import io, pickle, zipfile
    >>> import tensormodes as tm
    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w") as archive:
    ...     archive.writestr("archive/data.pkl", pickle.dumps(print, protocol=2))
    >>> tm.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buffer.getvalue()))
    ['builtins.print']
    """
    return pytorch_format.unsafe_globals(files.read_buffer(f, False))


def load(f: str | os.PathLike | IO[bytes], map_location=None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args) -> Any:
    """Loads an object saved with :func:`save` or ``torch.save``, or the tensors of any safetensors file.

    The format is recognised by content: PyTorch's zip checkpoints (``torch.save`` since 1.6),
    its legacy non-zip ones (``_use_new_zipfile_serialization=False``), and safetensors files.
    Loading never executes code from the file, whatever ``weights_only`` says (``True``,
    ``False`` or None are accepted for PyTorch's signature and change nothing): PyTorch's
    pickles are read by a restricted interpreter that builds only PyTorch's ``weights_only``
    values (containers, tensors and storages, dtypes, ``Size``, ``device``, ``Parameter``, sets,
    complex numbers, bytes) and the plain-data classes given to
    :func:`add_safe_globals`; any other global raises :class:`UnsafeFileError` (a
    ``pickle.UnpicklingError``) naming it and its offset, before anything is built from it.
    A malformed, truncated or corrupted file raises :class:`FormatError` (a ``ValueError``):
    safetensors files are checked against their checksums, PyTorch's zip records against their
    CRC-32 (the storages' only without ``mmap``). ``map_location`` may be None, a string, a
    device, a dict of location strings, or (PyTorch's files) a callable
    ``(storage, location)`` given, as ``torch.load`` gives it, the storage as an untyped storage
    (bytes: ``nbytes()``, ``device``, ``cpu()``, ``to(device=...)``) and returning it, a moved
    storage, or None (then ``location`` decides); tensors load onto the cpu or,
    for PyTorch's files, the meta device. ``mmap=True`` maps the file (``f`` must then be a
    path) instead of reading it; tensors are copy-on-write views of the mapping.

    >>> import io
    >>> import tensormodes as tm
    >>> buffer = io.BytesIO()
    >>> tm.save([tm.tensor([1, 2]), {"lr": float("inf")}], buffer)
    >>> _ = buffer.seek(0)
    >>> tm.load(buffer, weights_only=True)
    [tensor([1, 2]), {'lr': inf}]
    """
    if pickle_module is not None or pickle_load_args:
        raise ValueError("tm.load never unpickles: pickle_module and pickle load arguments are not supported")
    if weights_only not in (None, True, False):
        raise TypeError(f"tm.load: weights_only must be a bool or None, not {weights_only!r}")
    _check_byteorder()
    buffer = files.read_buffer(f, bool(mmap))
    head = bytes(buffer[:16])
    if head.startswith(ZIP_MAGIC) or pytorch_format.is_legacy(head):
        return pytorch_format.load_checkpoint(buffer, map_location, bool(mmap), not head.startswith(ZIP_MAGIC))
    _target_device(map_location)
    header, text, data_start = _parse_header(buffer)
    entries = _entries(header, len(buffer) - data_start)
    metadata = header.get("__metadata__")
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise FormatError("header field '__metadata__' must map strings to strings")
    data = buffer[data_start:]
    if not metadata or (_DOC_KEY not in metadata and _HEADER_CRC_KEY not in metadata):
        return {name: wrap_array(data[begin:stop].view(dtype._np).reshape(shape))
                for name, (dtype, shape, begin, stop) in entries.items()}
    _check_header(header, text, metadata)
    document = _parse_json(metadata[_DOC_KEY], _DOCUMENT_JSON, f"header field '__metadata__.{_DOC_KEY}'",
                           long_ints=_DOCUMENT_JSON_LONG_INTS)
    if not isinstance(document, dict) or not {"version", "storages", "tensors", "object"} <= set(document):
        raise FormatError(f"header field '__metadata__.{_DOC_KEY}' must be an object with version, storages, "
                          "tensors and object")
    version = document["version"]
    if version != FORMAT_VERSION:
        raise FormatError(f"header field '__metadata__.{_DOC_KEY}.version' is {reprlib.repr(version)}; this "
                          f"tensormodes reads format version {FORMAT_VERSION}")
    storages = _load_storages(data, entries, document["storages"])
    tensors = _load_tensors(storages, document["tensors"])
    return _Decoder(tensors).decode(document["object"], "obj")


def _check_header(header: dict, text: str, metadata: dict) -> None:
    for key in (_DOC_KEY, _HEADER_CRC_KEY):
        if key not in metadata:
            raise FormatError(f"header field '__metadata__.{key}' is missing: corrupted header")
    expected = metadata[_HEADER_CRC_KEY]
    # The header as save() wrote it is the compact JSON the checksum covers plus this one entry,
    # so the checksum is verified on the file's own bytes; any other spelling of the same header
    # (rewritten by another JSON writer) is checked by encoding it again.
    entry = f',"{_HEADER_CRC_KEY}":"{expected}"'
    text = text.rstrip(" ")
    at = text.find(entry)
    if at >= 0 and str(zlib.crc32(f"{text[:at]}{text[at + len(entry):]}".encode())) == expected:
        return
    del metadata[_HEADER_CRC_KEY]
    actual = zlib.crc32(_dumps(header).encode())
    metadata[_HEADER_CRC_KEY] = expected
    if expected != str(actual):
        raise FormatError(f"header checksum mismatch (header field '__metadata__.{_HEADER_CRC_KEY}' is {expected}, "
                          f"the header's CRC-32 is {actual}): the header was modified or corrupted")


def _load_storages(data: np.ndarray, entries: dict, storages) -> dict[str, tuple[np.ndarray, dt.dtype]]:
    """Each storage's bytes and dtype, after checking its checksums."""
    if type(storages) is not dict or storages.keys() != entries.keys():
        raise FormatError("header field '__metadata__.tensormodes.storages' does not list the file's tensors")
    in_file_order = sorted(entries.items(), key=_by_offsets)  # the first bad storage in the file is reported
    checks = []
    for name, (_, _, begin, stop) in in_file_order:
        info = storages[name]
        kind = _checksum_kind(info)
        if kind is None:
            raise FormatError(f"header field '__metadata__.tensormodes.storages' has an invalid entry for tensor "
                              f"{name!r}: {reprlib.repr(info)}")
        checks.append((name, data[begin:stop], _sum64 if kind == "sum64" else _crc32, info[kind]))
    result = {}
    for name, block, checksum, expected in checks:
        if checksum(block) != expected:
            raise FormatError(f"checksum mismatch in tensor {name!r}: its {len(block)} bytes are corrupted")
        result[name] = (block, _BY_NAME[storages[name]["dtype"]])
    return result


def _checksum_kind(info) -> str | None:
    """Which checksum a storage's entry holds, ``"sum64"`` or (older files) ``"crc32"``; None when
    the entry is not ``{"dtype": name, kind: [int, ...]}``."""
    if type(info) is not dict or len(info) != 2 or type(info.get("dtype")) is not str or info["dtype"] not in _BY_NAME:
        return None
    kind = "sum64" if "sum64" in info else "crc32"
    sums = info.get(kind)
    return kind if type(sums) is list and all(type(c) is int for c in sums) else None


_DESCRIPTION_KEYS = frozenset(("storage", "dtype", "shape", "stride", "offset", "requires_grad", "parameter"))


def _load_tensors(storages: dict[str, tuple[np.ndarray, dt.dtype]], descriptions) -> list[Tensor]:
    if type(descriptions) is not list:
        raise FormatError("header field '__metadata__.tensormodes.tensors' must be a list")
    tensors = []
    for i, d in enumerate(descriptions):
        if type(d) is not dict or d.keys() != _DESCRIPTION_KEYS or type(d["storage"]) is not str \
                or d["storage"] not in storages or type(d["dtype"]) is not str or d["dtype"] not in _BY_NAME \
                or type(d["requires_grad"]) is not bool or type(d["parameter"]) is not bool \
                or (d["requires_grad"] and _BY_NAME[d["dtype"]]._category < dt._FLOAT):
            raise FormatError(f"header field '__metadata__.tensormodes.tensors[{i}]' is invalid: {reprlib.repr(d)}")
        shape, stride, offset = d["shape"], d["stride"], d["offset"]
        raw = storages[d["storage"]][0]
        np_dtype = _BY_NAME[d["dtype"]]._np
        try:
            # Only the types are checked first (NumPy checks the values, and would take True for 1);
            # what is wrong with a rejected description is worked out after.
            if type(shape) is not list or type(stride) is not list or type(offset) is not int \
                    or len(stride) != len(shape) or not _INT_ONLY.issuperset(map(type, shape + stride)):
                raise TypeError("not lists of integers")
            array = np.ndarray(tuple(shape), np_dtype, buffer=raw, offset=offset,
                               strides=tuple(s * np_dtype.itemsize for s in stride))
        except (TypeError, ValueError, OverflowError) as e:
            raise FormatError(_invalid_view(f"header field '__metadata__.tensormodes.tensors[{i}]", d, e)) from None
        t = wrap_array(array)
        if d["parameter"]:
            t = Parameter(t, requires_grad=d["requires_grad"])
        elif d["requires_grad"]:
            t.requires_grad_(True)
        tensors.append(t)
    if len({d["storage"] for d in descriptions}) < len(descriptions):
        _share_storages(storages, descriptions, tensors)
    return tensors


_INT_ONLY = frozenset((int,))


def _invalid_view(field: str, d: dict, error: Exception) -> str:
    """Why the tensor description ``d`` (at header field ``field``) was rejected by NumPy with ``error``."""
    shape, stride, offset = d["shape"], d["stride"], d["offset"]
    if not _valid_sizes(shape):
        return (f"{field}.shape' must be a list of at most {_MAX_DIMS} sizes from 0 to 2**63 - 1, "
                f"not {reprlib.repr(shape)}")
    if type(stride) is not list or len(stride) != len(shape) \
            or not all(type(s) is int and -_MAX_INT64 <= s <= _MAX_INT64 for s in stride):
        return (f"{field}.stride' must be a list of {len(shape)} integers from -(2**63 - 1) to 2**63 - 1, "
                f"not {reprlib.repr(stride)}")
    if type(offset) is not int or not 0 <= offset <= _MAX_INT64:
        return f"{field}.offset' must be an integer from 0 to 2**63 - 1, not {reprlib.repr(offset)}"
    return f"{field}' describes a tensor that does not fit in tensor {d['storage']!r}: {error}"


def _share_storages(storages: dict[str, tuple[np.ndarray, dt.dtype]], descriptions: list[dict],
                    tensors: list[Tensor]) -> None:
    """Makes tensors saved from one storage views of one root: the first that spans the whole
    storage (the base they were views of), else a new tensor over the whole storage."""
    users = collections.Counter(d["storage"] for d in descriptions)
    roots: dict[str, Tensor] = {}
    for d, t in sorted(zip(descriptions, tensors), key=lambda p: p[0]["dtype"] != storages[p[0]["storage"]][1]._name):
        raw, _ = storages[d["storage"]]
        if d["storage"] not in roots and d["offset"] == 0 and t._data.nbytes == raw.nbytes \
                and t._data.flags.c_contiguous:
            roots[d["storage"]] = t
    for d, t in zip(descriptions, tensors):
        root = roots.get(d["storage"])
        if root is t or users[d["storage"]] == 1:
            continue
        if root is None:
            raw, storage_dtype = storages[d["storage"]]
            root = roots[d["storage"]] = wrap_array(raw.view(storage_dtype._np))
        t._view_base = root
        root._has_views = True
        share_version(t, root)


class _Decoder:
    """Rebuilds an object from its JSON tree; values are checked, never evaluated.

    ``depth`` counts the containers around a node, as the encoder counts them: a file nesting
    them more than ``_MAX_DEPTH`` deep is refused, so decoding recurses a bounded number of times.
    """

    def __init__(self, tensors: list[Tensor]) -> None:
        self.tensors = tensors

    def decode(self, node, path: str, depth: int = 0):
        kind = type(node)
        if kind in _SCALARS or kind is float:
            return node
        if kind is list:
            self._enter(depth, path)
            return [self.decode(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(node)]
        if kind is dict and len(node) >= 1:
            tag = next(iter(node))
            payload = node[tag]
            if len(node) == 1 or (tag == "OrderedDict" and set(node) == {"OrderedDict", "attributes"}):
                decoded = self._tagged(tag, payload, node, path, depth)
                if decoded is not _INVALID:
                    return decoded
        raise FormatError(f"header field '__metadata__.tensormodes.object' holds an invalid value at {path}: "
                          f"{reprlib.repr(node)}")

    @staticmethod
    def _enter(depth: int, path: str) -> None:
        if depth >= _MAX_DEPTH:
            raise FormatError(f"header field '__metadata__.tensormodes.object' nests containers more than "
                              f"{_MAX_DEPTH} levels deep (at {path}); tm.save writes at most {_MAX_DEPTH}")

    def _tagged(self, tag: str, payload, node: dict, path: str, depth: int):
        if tag == "tensor":
            if type(payload) is int and 0 <= payload < len(self.tensors):
                return self.tensors[payload]
        elif tag == "tuple" and type(payload) is list:
            self._enter(depth, path)
            return tuple(self.decode(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(payload))
        elif tag in ("dict", "OrderedDict"):
            self._enter(depth, path)
            result = self._mapping(dict if tag == "dict" else collections.OrderedDict, payload, path, depth + 1)
            if result is not _INVALID and "attributes" in node:
                attributes = node["attributes"]
                # Plain attribute names only: a crafted file must not reach __class__ or __dict__.
                if type(attributes) is not dict or not all(k.isidentifier() and not k.startswith("__")
                                                           for k in attributes):
                    return _INVALID
                for k, v in attributes.items():
                    setattr(result, k, self.decode(v, f"{path}.{k}", depth + 1))
            return result
        elif tag == "float" and payload in ("inf", "-inf", "nan"):
            return float(payload)
        elif tag == "complex" and type(payload) is list and len(payload) == 2:
            real, imag = (_float(v) for v in payload)  # not decode(): a complex holds no containers
            if type(real) is float and type(imag) is float:
                return complex(real, imag)
        elif tag == "Size" and type(payload) is list and all(type(s) is int for s in payload):
            return Size(payload)
        elif tag == "dtype" and payload in _BY_NAME:
            return _BY_NAME[payload]
        elif tag == "device" and type(payload) is str:
            try:
                return device(payload)
            except RuntimeError:
                return _INVALID
        return _INVALID

    def _mapping(self, kind: type, payload, path: str, depth: int):
        if type(payload) is dict:
            return kind((k, self.decode(v, f"{path}[{k!r}]", depth)) for k, v in payload.items())
        if type(payload) is not list or not all(type(item) is list and len(item) == 2 for item in payload):
            return _INVALID
        result = kind()
        for key_node, value_node in payload:
            key = self.decode(key_node, path, depth)
            try:
                hash(key)
            except TypeError:
                return _INVALID
            result[key] = self.decode(value_node, f"{path}[{key!r}]", depth)
        return result


def _float(node):
    """A float node (a finite float or ``{"float": "inf" | "-inf" | "nan"}``) as a float, else None."""
    if type(node) is float:
        return node
    if type(node) is dict and len(node) == 1 and node.get("float") in ("inf", "-inf", "nan"):
        return float(node["float"])
    return None


_INVALID = object()
