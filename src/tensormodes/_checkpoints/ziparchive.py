"""The zip archives PyTorch's checkpoints are: uncompressed records, data 64-byte aligned.

Reading parses the central directory (zip64 included) of a file already in memory (read or
mapped) and hands out each record as a window onto that memory, its CRC-32 checked on request;
nothing is decompressed (a compressed or encrypted record is refused). Writing streams stored
records, each one's data padded to a 64-byte boundary with an extra field in its local header
and followed by a data descriptor (as PyTorch's writer does), then the central directory,
with zip64 records when sizes or offsets need them.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from .errors import FormatError

__all__ = ["Archive", "ZipWriter", "ZIP_MAGIC"]

ZIP_MAGIC = b"PK\x03\x04"
_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # signature ... name length, extra length: 30 bytes
_CENTRAL_ENTRY = struct.Struct("<4sHHHHHHIIIHHHHHII")  # 46 bytes
_MAX32 = 0xFFFFFFFF
_ALIGNMENT = 64
_DESCRIPTOR = b"PK\x07\x08"
_FLAGS = 0x808  # UTF-8 names, sizes and CRC-32 in a data descriptor after the data (as PyTorch writes)


class Archive:
    """The records of a zip file held in ``buffer`` (a flat uint8 NumPy array)."""

    def __init__(self, buffer: np.ndarray) -> None:
        self.buffer = buffer
        self.records: dict[str, tuple[int, int, int]] = {}  # name -> (data start, size, CRC-32)
        self._read_directory()

    def _fail(self, message: str) -> FormatError:
        return FormatError(f"not a valid zip archive ({len(self.buffer)} bytes): {message}")

    def _end_record(self) -> tuple[int, int, int]:
        """The central directory's entry count, size and offset."""
        data = self.buffer
        size = len(data)
        tail_start = max(0, size - 22 - 0xFFFF)
        tail = bytes(data[tail_start:])
        at = tail.rfind(_EOCD)
        if at < 0 or at + 22 > len(tail):
            raise self._fail("no end of central directory record (the file is truncated or not a zip)")
        _, _, _, _, count, directory_size, directory_offset = struct.unpack_from("<4sHHHHII", tail, at)
        at += tail_start
        if _MAX32 in (directory_size, directory_offset) or count == 0xFFFF:
            locator = at - 20
            if locator < 0 or bytes(data[locator:locator + 4]) != _ZIP64_LOCATOR:
                raise self._fail("the end record asks for zip64 records but the zip64 locator is missing")
            (end64,) = struct.unpack_from("<Q", bytes(data[locator + 8:locator + 16]))
            if end64 + 56 > size or bytes(data[end64:end64 + 4]) != _ZIP64_EOCD:
                raise self._fail(f"the zip64 end record at offset {end64} is missing or truncated")
            count, directory_size, directory_offset = struct.unpack_from("<QQQ", bytes(data[end64 + 32:end64 + 56]))
        if directory_offset + directory_size > at or count * 46 > directory_size:
            raise self._fail(f"the central directory (offset {directory_offset}, {directory_size} bytes, {count} "
                             f"entries) does not fit before the end record at offset {at}")
        return count, directory_size, directory_offset

    def _read_directory(self) -> None:
        count, directory_size, offset = self._end_record()
        directory = bytes(self.buffer[offset:offset + directory_size])
        at = 0
        for _ in range(count):
            if at + 46 > len(directory) or directory[at:at + 4] != _CENTRAL:
                raise self._fail(f"central directory entry at offset {offset + at} is damaged")
            fields = _CENTRAL_ENTRY.unpack_from(directory, at)
            flags, method, crc, packed, size = fields[3], fields[4], fields[7], fields[8], fields[9]
            name_length, extra_length, comment_length, local = fields[10], fields[11], fields[12], fields[16]
            end = at + 46 + name_length + extra_length + comment_length
            if end > len(directory):
                raise self._fail(f"central directory entry at offset {offset + at} runs past the directory")
            raw_name = directory[at + 46:at + 46 + name_length]
            extra = directory[at + 46 + name_length:at + 46 + name_length + extra_length]
            try:
                name = raw_name.decode("utf-8")
            except UnicodeDecodeError:
                raise self._fail(f"record name {raw_name!r} is not UTF-8") from None
            size, packed, local = _zip64_fields(extra, size, packed, local)
            if flags & 1 or method != 0 or packed != size:
                raise FormatError(f"record {name!r} is {'encrypted' if flags & 1 else 'compressed'} (method "
                                  f"{method}): PyTorch's checkpoints store their records uncompressed")
            self.records[name] = (self._data_start(name, local, size), size, crc)
            at = end

    def _data_start(self, name: str, local: int, size: int) -> int:
        header = bytes(self.buffer[local:local + 30])
        if len(header) < 30 or header[:4] != ZIP_MAGIC:
            raise self._fail(f"record {name!r}: no local header at offset {local}")
        fields = _LOCAL.unpack(header)
        start = local + 30 + fields[9] + fields[10]
        if start + size > len(self.buffer):
            raise FormatError(f"record {name!r} ({size} bytes at offset {start}) runs past the end of the file "
                              f"({len(self.buffer)} bytes): the file is truncated")
        return start

    def read(self, name: str, check: bool = True) -> np.ndarray:
        """The data of record ``name``, a window onto the buffer; its CRC-32 checked unless
        ``check`` is false (a stored CRC of 0 is "not computed", as PyTorch writes with
        ``set_crc32_options(False)``)."""
        try:
            start, size, crc = self.records[name]
        except KeyError:
            raise FormatError(f"the archive has no record {name!r}") from None
        data = self.buffer[start:start + size]
        if check and crc and zlib.crc32(data) != crc:
            raise FormatError(f"record {name!r} fails its CRC-32 check: its {size} bytes are corrupted")
        return data


def _skip(file, size: int) -> None:
    """Leaves ``size`` zero bytes in ``file``: sought over where it can seek (a sparse hole), else
    written."""
    if getattr(file, "seekable", lambda: False)():
        file.seek(size - 1, 1)
        file.write(b"\0")  # a seek alone past the end would not lengthen the file
        return
    zeros = bytes(min(size, 1 << 20))
    while size:
        chunk = zeros[:size]
        written = file.write(chunk)
        size -= len(chunk) if written is None else written  # a writer may return None: all was taken


def _zip64_fields(extra: bytes, size: int, packed: int, local: int) -> tuple[int, int, int]:
    """The sizes and offset, taken from the zip64 extra field where the entry says 0xFFFFFFFF."""
    if _MAX32 not in (size, packed, local):
        return size, packed, local
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, at)
        if tag == 1 and at + 4 + length <= len(extra):
            values = iter(struct.unpack_from(f"<{length // 8}Q", extra, at + 4))
            try:
                size = next(values) if size == _MAX32 else size
                packed = next(values) if packed == _MAX32 else packed
                local = next(values) if local == _MAX32 else local
            except StopIteration:
                break
            return size, packed, local
        at += 4 + length
    raise FormatError("a central directory entry needs zip64 sizes but has no complete zip64 extra field")


class ZipWriter:
    """Writes stored records to ``file`` (which must be at its start or anywhere: offsets are
    counted from where writing began)."""

    def __init__(self, file) -> None:
        self.file = file
        self.offset = 0
        self.entries: list[tuple[bytes, int, int, int]] = []  # name, CRC-32, size, local header offset

    def write(self, name: str, data, compute_crc: bool = True, skip: bool = False) -> None:
        """Appends record ``name`` holding ``data`` (bytes or a NumPy uint8 array), 64-byte aligned;
        its CRC-32 written as 0 unless ``compute_crc``; with ``skip``, zeros in place of the data
        (a hole where the file can seek), CRC-32 0.

        As PyTorch's writer does, the local header leaves the CRC-32 and sizes at zero (flag bit
        3) and a data descriptor after the data holds them. (Computing the CRC-32 of each chunk
        just before writing it, while in cache, measured no faster than the whole record at once.)"""
        raw_name = name.encode("utf-8")
        size = len(data) if isinstance(data, bytes) else data.nbytes
        wide = size >= _MAX32 or self.offset >= _MAX32
        extra = struct.pack("<HHQQ", 1, 16, 0, 0) if wide else b""
        padding = -(self.offset + 30 + len(raw_name) + len(extra) + 4) % _ALIGNMENT
        extra += struct.pack("<HH", 0x4246, padding) + b"Z" * padding  # "FB": PyTorch's padding field
        shown = _MAX32 if wide else 0
        header = _LOCAL.pack(ZIP_MAGIC, 45 if wide else 20, _FLAGS, 0, 0, 0x21, 0, shown, shown,
                             len(raw_name), len(extra))
        self.file.write(header + raw_name + extra)
        crc = zlib.crc32(data) if compute_crc and not skip else 0
        if not skip:
            self.file.write(data)
        elif size:
            _skip(self.file, size)
        descriptor = struct.pack("<4sIQQ" if wide else "<4sIII", _DESCRIPTOR, crc, size, size)
        self.file.write(descriptor)
        self.entries.append((raw_name, crc, size, self.offset))
        self.offset += len(header) + len(raw_name) + len(extra) + size + len(descriptor)

    def close(self) -> None:
        """Writes the central directory and the end records."""
        start = self.offset
        parts = []
        for raw_name, crc, size, local in self.entries:
            wide = size >= _MAX32 or local >= _MAX32
            extra = struct.pack("<HHQQQ", 1, 24, size, size, local) if wide else b""
            shown, at = (_MAX32, _MAX32) if wide else (size, local)
            parts.append(_CENTRAL_ENTRY.pack(_CENTRAL, 45 if wide else 20, 45 if wide else 20, _FLAGS, 0, 0, 0x21,
                                             crc, shown, shown, len(raw_name), len(extra), 0, 0, 0, 0, at))
            parts.append(raw_name + extra)
        directory = b"".join(parts)
        count, size = len(self.entries), len(directory)
        tail = b""
        if start + size >= _MAX32 or count >= 0xFFFF:
            end64 = start + size
            tail = struct.pack("<4sQHHIIQQQQ", _ZIP64_EOCD, 44, 45, 45, 0, 0, count, count, size, start)
            tail += struct.pack("<4sIQI", _ZIP64_LOCATOR, 0, end64, 1)
            tail += struct.pack("<4sHHHHIIH", _EOCD, 0, 0, 0xFFFF, 0xFFFF, _MAX32, _MAX32, 0)
        else:
            tail = struct.pack("<4sHHHHIIH", _EOCD, 0, 0, count, count, size, start, 0)
        self.file.write(directory + tail)
        self.offset += size + len(tail)
