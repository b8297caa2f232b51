"""PyTorch's serialization settings (``torch.serialization``'s names and semantics): whether saving
computes CRC-32s, the mmap flags of ``load(mmap=True)``, the byte order of files without a
``byteorder`` record, and ``skip_data`` (storages neither written nor read)."""

from __future__ import annotations

import enum
import mmap
import threading

__all__ = ["get_crc32_options", "set_crc32_options", "get_default_mmap_options", "set_default_mmap_options",
           "LoadEndianness", "get_default_load_endianness", "set_default_load_endianness", "skip_data",
           "skipping_data"]

_MAP_PRIVATE = getattr(mmap, "MAP_PRIVATE", 2)  # the values of Linux (Windows has no such flags)
_MAP_SHARED = getattr(mmap, "MAP_SHARED", 1)


class _Config:
    compute_crc32 = True
    mmap_flags: int = _MAP_PRIVATE
    endianness = None


_TLS = threading.local()  # skip_data, per thread as in PyTorch


def get_crc32_options() -> bool:
    """Whether :func:`tensormodes.save` computes and writes the CRC-32 of each record (default True).

    >>> import tensormodes as tm
    >>> tm.serialization.get_crc32_options()
    True
    """
    return _Config.compute_crc32


def set_crc32_options(compute_crc32: bool) -> None:
    """Sets whether :func:`tensormodes.save` computes the CRC-32 of each record of PyTorch's
    format. Without it each record's CRC-32 is written as 0 (zip tools then report the records
    as corrupted; ``tm.load`` and ``torch.load`` read them, unchecked), and saving skips a pass
    over the data.

    >>> import tensormodes as tm
    >>> tm.serialization.set_crc32_options(False)
    >>> tm.serialization.get_crc32_options()
    False
    >>> tm.serialization.set_crc32_options(True)
    """
    _Config.compute_crc32 = compute_crc32


def get_default_mmap_options() -> int:
    """The mmap flags of ``load(..., mmap=True)``: ``mmap.MAP_PRIVATE`` (the default: tensors are
    copy-on-write views of the file) or ``mmap.MAP_SHARED`` (writes to them change the file).

    >>> import mmap
    >>> import tensormodes as tm
    >>> tm.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE
    True
    """
    return _Config.mmap_flags


class set_default_mmap_options:
    """Sets the mmap flags of ``load(..., mmap=True)``, as a call or for a ``with`` block (the old
    flags come back at its end): ``mmap.MAP_PRIVATE`` or ``mmap.MAP_SHARED``. A file changed
    through a shared mapping keeps its records' old CRC-32s: ``load`` without ``mmap`` then
    refuses the changed records as corrupted (``torch.load`` checks no CRC-32).

    >>> import mmap
    >>> import tensormodes as tm
    >>> with tm.serialization.set_default_mmap_options(mmap.MAP_SHARED):
    ...     tm.serialization.get_default_mmap_options() == mmap.MAP_SHARED
    True
    >>> tm.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE
    True
    """

    def __init__(self, flags: int) -> None:
        if flags != _MAP_PRIVATE and flags != _MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected mmap.MAP_PRIVATE or "
                             f"mmap.MAP_SHARED, but got {flags}")
        self.prev = _Config.mmap_flags
        _Config.mmap_flags = flags

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info) -> None:
        _Config.mmap_flags = self.prev


def mmap_shared() -> bool:
    """Whether ``mmap=True`` maps files shared (writes reach the file)."""
    return _Config.mmap_flags == _MAP_SHARED


class LoadEndianness(enum.Enum):
    """The byte order assumed for checkpoints without a ``byteorder`` record (PyTorch before 1.13)."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


def get_default_load_endianness() -> LoadEndianness | None:
    """The byte order assumed for files without a ``byteorder`` record; None (the default) is
    the machine's, little-endian.

    >>> import tensormodes as tm
    >>> tm.serialization.get_default_load_endianness() is None
    True
    """
    return _Config.endianness


def set_default_load_endianness(endianness) -> None:
    """Sets the byte order assumed for files without a ``byteorder`` record: a
    :class:`LoadEndianness` or None (the machine's).

    >>> import tensormodes as tm
    >>> tm.serialization.set_default_load_endianness(tm.serialization.LoadEndianness.BIG)
    >>> tm.serialization.get_default_load_endianness()
    <LoadEndianness.BIG: 3>
    >>> tm.serialization.set_default_load_endianness(None)
    """
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _Config.endianness = endianness


def fallback_byteorder() -> str:
    """``"big"`` or ``"little"``: the byte order of a file without a ``byteorder`` record."""
    return "big" if _Config.endianness is LoadEndianness.BIG else "little"


class skip_data:
    """Inside the block (in this thread), :func:`tensormodes.save` writes PyTorch's format without
    the storages' bytes (their records keep their sizes and read as zeros, CRC-32 0) and
    :func:`tensormodes.load` reads no storage: tensors come back with their sizes and zeros.
    ``materialize_fake_tensors`` is accepted for PyTorch's signature (tensormodes saves no fake
    tensors). The safetensors format ignores it.

    >>> import io
    >>> import tensormodes as tm
    >>> buffer = io.BytesIO()
    >>> with tm.serialization.skip_data():
    ...     tm.save(tm.ones(3), buffer)
    >>> tm.load(io.BytesIO(buffer.getvalue()))
    tensor([0., 0., 0.])
    """

    def __init__(self, materialize_fake_tensors: bool = False) -> None:
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self) -> None:
        self._old = getattr(_TLS, "skip_data", False)
        _TLS.skip_data = True

    def __exit__(self, *exc_info) -> None:
        _TLS.skip_data = self._old


def skipping_data() -> bool:
    """Whether this thread is inside :class:`skip_data`."""
    return getattr(_TLS, "skip_data", False)
