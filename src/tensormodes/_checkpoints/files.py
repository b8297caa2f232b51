"""Reading a checkpoint into memory and replacing a file atomically (shared by both formats)."""

from __future__ import annotations

import contextlib
import errno
import io
import mmap as _mmap
import os
import stat

import numpy as np

from . import options

__all__ = ["read_buffer", "replace_file"]


def replace_file(path: str, write) -> None:
    """Writes the file at ``path`` with ``write(file)``: beside its target, then renamed over it.

    A failed save leaves the old file whole, and tensors loaded from it with ``mmap=True``
    keep their pages (truncating the file would not). A symlink is followed, as writing
    through it (``torch.save``) does: its target is replaced and the link stays. The new
    file keeps the old one's permission bits (a file only its owner may read stays so, even
    while being written); a new file gets the usual ones (0o666 less the umask). A file with
    several hard links is detached from the others, which keep the old contents. A read-only
    file is refused (``PermissionError``), as writing it would be. A path that exists but is
    not a regular file (``/dev/null``, a FIFO) is written in place. A process
    killed while writing leaves ``<target>.tm-save.<pid>.<random>.tmp`` beside the target,
    which is safe to delete.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    target = os.fspath(path)
    if mode is not None and stat.S_ISLNK(mode):  # only then resolved: realpath costs a syscall per folder
        target = os.path.realpath(path)
        try:
            mode = os.stat(target).st_mode
        except FileNotFoundError:
            mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "wb") as file:
            write(file)
        return
    if mode is not None and not os.access(target, os.W_OK):
        # Renaming over a read-only file would succeed; writing it, as torch.save does, would not.
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    permissions = 0o666 if mode is None else stat.S_IMODE(mode)
    temporary = f"{target}.tm-save.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        # O_EXCL: a file (or a symlink planted) at the temporary name is never written through.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                             permissions & 0o777)
    except OSError as e:  # named after the path the caller gave, not the temporary one
        raise type(e)(e.errno, e.strerror, path) from None
    try:
        with (_GatheredWrites(descriptor) if hasattr(os, "writev") else open(descriptor, "wb")) as file:
            write(file)
            if mode is not None and hasattr(os, "fchmod"):  # exact: the umask narrowed what os.open set
                file.flush()  # a later write would clear set-user-ID bits again
                os.fchmod(descriptor, permissions)  # no path lookup, unlike chmod
        if mode is not None and not hasattr(os, "fchmod"):
            os.chmod(temporary, permissions)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise


_MAX_PIECES = 1024  # IOV_MAX on Linux and the BSDs: the pieces one writev takes
_MAX_PENDING = 64 << 20  # bytes kept before writing: bounds what temporaries a writer's pieces keep alive


class _GatheredWrites:
    """A binary file on a descriptor of our own (closed on exit) whose writes are kept, as
    views (no copy), and written together by ``os.writev``, ~1,024 pieces a system call: a
    checkpoint's records (header, data, descriptor each) in one or two calls instead of two
    or three each. Each write to a file costs the kernel a lock and a timestamp update: a
    6 MiB, 22-record checkpoint's writes measured ~1.5 ms as separate writes, ~1.0 ms
    gathered. A piece must not change until flushed (a save's bytes do not)."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._pending: list[memoryview] = []
        self._pending_bytes = 0

    def __enter__(self) -> _GatheredWrites:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        try:
            if kind is None:
                self.flush()
        finally:
            os.close(self._descriptor)

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        if view.nbytes:
            self._pending.append(view)
            self._pending_bytes += view.nbytes
            if len(self._pending) >= _MAX_PIECES or self._pending_bytes >= _MAX_PENDING:
                self.flush()
        return view.nbytes

    def flush(self) -> None:
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        first = 0
        while first < len(pending):
            written = os.writev(self._descriptor, pending[first:first + _MAX_PIECES])
            if not written:
                raise OSError(errno.EIO, "writev wrote nothing")
            while first < len(pending) and written >= pending[first].nbytes:  # a short write: go on from there
                written -= pending[first].nbytes
                first += 1
            if written:
                pending[first] = pending[first][written:]

    def fileno(self) -> int:
        return self._descriptor

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self.flush()
        return os.lseek(self._descriptor, offset, whence)

    def tell(self) -> int:
        return self.seek(0, os.SEEK_CUR)


def read_buffer(f, use_mmap: bool) -> np.ndarray:
    """The bytes of a path or a binary file object (from its position), as a flat uint8 array;
    with ``use_mmap`` a copy-on-write mapping of the path (a shared one after
    ``set_default_mmap_options(mmap.MAP_SHARED)``)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            if use_mmap:
                size = os.fstat(file.fileno()).st_size
                if not size:
                    return np.empty(0, np.uint8)
                if options.mmap_shared():  # set_default_mmap_options(MAP_SHARED): writes reach the file
                    with open(f, "r+b") as writable:
                        return np.frombuffer(_mmap.mmap(writable.fileno(), 0, access=_mmap.ACCESS_WRITE), np.uint8)
                return np.frombuffer(_mmap.mmap(file.fileno(), 0, access=_mmap.ACCESS_COPY), np.uint8)
            return _read_file(file)
    if use_mmap:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if not hasattr(f, "read"):
        raise TypeError(f"tm.load: f must be a path or a binary file object, not {type(f).__name__}")
    return _read_file(f)


def _read_file(file):
    if hasattr(file, "readinto") and getattr(file, "seekable", lambda: False)():
        start = file.tell()
        size = file.seek(0, io.SEEK_END) - start
        file.seek(start)
        buffer = np.empty(size, np.uint8)  # not zero-filled, unlike a bytearray: every byte is read over
        got = file.readinto(memoryview(buffer))
        return buffer[:got]
    return np.frombuffer(bytearray(file.read()), np.uint8)
