"""A file fuzzer for tm.load on PyTorch's checkpoints: mutated ``.pt`` files must give clean errors.

Each case mutates one of four starting files — a zip checkpoint written by ``tm.save`` (views,
a Parameter, an OrderedDict with ``_metadata``, a tensor attribute, a meta tensor), one holding
instances of allowed dataclasses (loaded under ``safe_globals``), the committed zip file written
by torch (``tests/data/torch_small.pt``) and the committed legacy file — in one
of three ways: the whole file's bytes (the zip reader, the CRC checks); the ``data.pkl`` pickle
alone, zipped again with a valid CRC-32 so the restricted interpreter reads the mutated opcodes;
or the legacy file's bytes (no checksums there: every mutation reaches the interpreter).

A load must then return an object or raise :class:`FormatError` (its subclass ``UnsafeFileError``
included), or ``RuntimeError`` for a storage whose location names a device tensormodes does not
load onto (as PyTorch raises it). Nothing else: no other exception, no hang (a case that runs
for 20 s fails, by an alarm), no allocation above 64 times the file's size plus 4 MiB (measured
by ``tracemalloc``, which NumPy reports its buffers to).

The budget is small by default (numbered cases from fixed seeds: the same every run); set
``TENSORMODES_CHECKPOINT_FUZZ`` for a larger run (e.g. 20000).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import os
import pathlib
import random
import signal
import tracemalloc
import zipfile

import pytest

import tensormodes as tm
from tensormodes.serialization import FormatError

DATA = pathlib.Path(__file__).parent / "data"
CASES = int(os.environ.get("TENSORMODES_CHECKPOINT_FUZZ", "600"))
_LOCATION_ERRORS = ("cannot load tensors onto device", "Attempting to deserialize object on a CUDA device",
                    "Expected one of", "Invalid device string", "device")


def _written_by_tm() -> bytes:
    state = collections.OrderedDict(w=tm.arange(6.).reshape(2, 3), b=tm.ones(2))
    state._metadata = {"": {"version": 1}}
    noted = tm.arange(3)
    noted.note = "n"
    obj = {"state": state, "view": state["w"].t(), "p": tm.nn.Parameter(tm.ones(2)), "step": 1,
           "x": (tm.arange(4)[1:], [0.5, "s", b"b", {1, 2}]), "noted": noted, "m": tm.empty(2, device="meta"),
           "h": tm.ones(2, dtype=tm.float16), "misc": (tm.Size([2]), tm.int8, tm.device("cpu"), 1 + 2j)}
    buffer = io.BytesIO()
    tm.save(obj, buffer)
    return buffer.getvalue()


@dataclasses.dataclass
class _Config:
    lr: float
    sizes: list


@dataclasses.dataclass(frozen=True, slots=True)
class _Frozen:
    name: str
    step: int


_CLASSES = [_Config, _Frozen]


def _written_with_classes() -> bytes:
    buffer = io.BytesIO()
    with tm.serialization.safe_globals(_CLASSES):
        tm.save({"config": _Config(0.1, [1, 2]), "frozen": _Frozen("f", 3), "w": tm.ones(2)}, buffer)
    return buffer.getvalue()


def _records(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _zipped(records: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in records.items():
            archive.writestr(name, data)
    return buffer.getvalue()


_INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80",
                b"\xff" * 8, b"\x00" * 8, b"(", b")", b"t", b"R", b"Q", b"b", b"\x93", b"\x94", b"h\x00", b"."]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data)) if data else 0
        choice = rng.random()
        if choice < 0.4:
            data[at:at + 1] = bytes((rng.randrange(256),))
        elif choice < 0.6:
            value = rng.choice(_INTERESTING)
            data[at:at + len(value)] = value
        elif choice < 0.75:
            del data[at:at + rng.randint(1, 16)]
        elif choice < 0.9:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif choice < 0.95:
            del data[at:]
        else:
            start = rng.randrange(len(data)) if data else 0
            data[at:at] = data[start:start + rng.randint(1, 64)]
    return bytes(data)


@contextlib.contextmanager
def _alarm(seconds: int):
    """Fails a case that runs too long (a hang), where the platform has SIGALRM."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def fail(signum, frame):
        raise AssertionError(f"a load ran for {seconds} s: the reader hangs")
    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _case(content: bytes, label: str) -> None:
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    try:
        with _alarm(20):
            tm.load(io.BytesIO(content))
    except FormatError:
        pass
    except RuntimeError as e:
        assert any(text in str(e) for text in _LOCATION_ERRORS), f"{label}: {type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - every other class is the failure this test looks for
        raise AssertionError(f"{label}: {type(e).__name__}: {e}") from e
    peak = tracemalloc.get_traced_memory()[1] - before
    assert peak <= 64 * len(content) + (4 << 20), f"{label}: {peak} bytes allocated for a {len(content)}-byte file"


@pytest.mark.parametrize("source", ["tm", "torch", "legacy", "classes"])
def test_mutated_checkpoints_give_clean_errors_only(source):
    content = {"tm": _written_by_tm, "torch": lambda: (DATA / "torch_small.pt").read_bytes(),
               "legacy": lambda: (DATA / "torch_small_legacy.pt").read_bytes(),
               "classes": _written_with_classes}[source]()
    allowed = tm.serialization.safe_globals(_CLASSES if source == "classes" else [])
    with allowed:
        _fuzz(source, content)


def _fuzz(source: str, content: bytes) -> None:
    tm.load(io.BytesIO(content))  # the starting file loads
    records = None if source == "legacy" else _records(content)
    pickle_name = None if records is None else next(n for n in records if n.endswith("/data.pkl"))
    rng = random.Random(f"checkpoint fuzz {source}")
    tracemalloc.start()
    try:
        for i in range(CASES // 4 + 1):
            if records is not None and rng.random() < 0.6:  # the pickle itself, under a valid CRC-32
                mutated = _zipped({**records, pickle_name: _mutate(records[pickle_name], rng)})
            else:
                mutated = _mutate(content, rng)
            _case(mutated, f"{source} case {i}")
    finally:
        tracemalloc.stop()
