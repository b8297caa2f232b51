"""tm.save / tm.load on PyTorch's checkpoint files: the zip and legacy formats, read by the
restricted pickle interpreter (no code runs), written so torch.load(weights_only=True) reads them."""

from __future__ import annotations

import collections
import dataclasses
import gc
import io
import mmap
import os
import pathlib
import pickle
import weakref
import zipfile

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.serialization import FormatError, UnsafeFileError

DATA = pathlib.Path(__file__).parent / "data"


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    tm.save(obj, buffer)
    return buffer.getvalue()


def _zip(pickle_bytes: bytes, records: dict | None = None) -> bytes:
    """A checkpoint holding ``pickle_bytes`` as data.pkl (crafted with the standard zipfile)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickle_bytes)
        for name, data in (records or {}).items():
            archive.writestr(f"archive/{name}", data)
    return buffer.getvalue()


# -- committed files written by torch 2.13 (no torch needed) ---------------------------------------

def test_committed_zip_checkpoint_loads_with_exact_values():
    obj = tm.load(DATA / "torch_small.pt")
    state = obj["state"]
    assert type(state) is collections.OrderedDict and list(state) == ["fc.weight", "fc.bias"]
    assert state._metadata == {"": {"version": 1}, "fc": {"version": 1}}
    assert state["fc.weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert obj["row"].tolist() == [3.0, 4.0, 5.0] and obj["row"].storage_offset() == 3
    assert obj["xt"].stride() == (1, 3)
    state["fc.weight"][1, 1] = -7.0  # one storage: views see the change
    assert obj["row"][1].item() == -7.0 and obj["xt"][1, 1].item() == -7.0
    assert type(obj["p"]) is tm.nn.Parameter and obj["p"].requires_grad and obj["p"].tolist() == [1.0, 2.0]
    assert obj["h"].dtype == tm.float16 and obj["h"].tolist() == [1.5, -2.0]
    assert obj["i"].dtype == tm.int64 and obj["i"].tolist() == [[1, -2]]
    assert obj["b"].tolist() == [True, False] and obj["z"].tolist() == [1 + 2j]
    assert (obj["step"], obj["lr"], obj["betas"], obj["name"]) == (3, 0.5, (0.9, 0.999), "ckpt")
    assert obj["size"] == tm.Size([2, 3]) and type(obj["size"]) is tm.Size and obj["dtype"] is tm.bfloat16


def test_committed_legacy_checkpoint_loads():
    obj = tm.load(DATA / "torch_small_legacy.pt")
    assert obj["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and obj["w_row"].tolist() == [3.0, 4.0, 5.0]
    obj["w"][1, 0] = 9.0
    assert obj["w_row"][0].item() == 9.0
    assert obj["h"].dtype == tm.float16 and type(obj["p"]) is tm.nn.Parameter
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        tm.load(DATA / "torch_small_legacy.pt", mmap=True)


def _from_big_endian_machine(content: bytes) -> bytes:
    """A legacy checkpoint as PyTorch writes it on a big-endian machine: only the system
    information differs (``little_endian`` False); counts and storages stay little-endian."""
    at = content.index(b"\x88", content.index(b"little_endian"))  # NEWTRUE, after the key's memo opcode
    assert at - content.index(b"little_endian") <= len(b"little_endian") + 2
    return content[:at] + b"\x89" + content[at + 1:]  # NEWFALSE


def test_legacy_checkpoint_from_a_big_endian_machine_loads_the_same_values():
    content = (DATA / "torch_small_legacy.pt").read_bytes()
    ours = tm.load(io.BytesIO(_from_big_endian_machine(content)))
    assert ours["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and ours["h"].dtype == tm.float16
    assert {k: v.tolist() for k, v in ours.items()} == {k: v.tolist() for k, v in tm.load(io.BytesIO(content)).items()}


@pytest.mark.torch
def test_torch_reads_a_big_endian_machines_legacy_checkpoint_as_we_do(tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.5, -2.0, 2.0 ** 40])
    torch.save({"x": x, "i": torch.tensor([1, -2 ** 40]), "h": x.half()}, tmp_path / "l.pt",
               _use_new_zipfile_serialization=False)
    (tmp_path / "big.pt").write_bytes(_from_big_endian_machine((tmp_path / "l.pt").read_bytes()))
    theirs = torch.load(tmp_path / "big.pt", weights_only=True)
    ours = tm.load(tmp_path / "big.pt")
    assert {k: v.tolist() for k, v in theirs.items()} == {k: v.tolist() for k, v in ours.items()}
    assert ours["x"].tolist() == [1.5, -2.0, 2.0 ** 40]


@pytest.mark.parametrize("name", ["torch_small.pt", "torch_small_legacy.pt"])
def test_map_location_callables_get_storages(name):
    path = DATA / name
    storages = []

    def record(storage, location):
        storages.append(storage)
        assert storage.device.type == "cpu" and storage.element_size() == 1 and len(storage) == storage.size()
        assert not storage.is_cuda and storage.cpu() is storage and storage.to(device="cpu") is storage
        return None

    assert tm.load(path, map_location=record)["w" if "legacy" in name else "row"].device.type == "cpu"
    assert storages and all(type(s).__name__ == "UntypedStorage" for s in storages)
    first = storages[0]
    assert first.tolist()[:4] == [first[i] for i in range(4)]
    assert repr(first) == f"tensormodes.UntypedStorage(device=cpu) of size {first.nbytes()}"
    moved = tm.load(path, map_location=lambda storage, loc: storage.to(device="meta"))
    assert all(t.device.type == "meta" for t in moved.values() if isinstance(t, tm.Tensor))
    assert tm.load(path, map_location=lambda storage, loc: storage.cpu())["h"].tolist() == tm.load(path)["h"].tolist()
    with pytest.raises(RuntimeError, match="Torch not compiled with CUDA enabled"):
        tm.load(path, map_location=lambda storage, loc: storage.cuda())
    with pytest.raises(TypeError, match="map_location returned Tensor; it must return a storage"):
        tm.load(path, map_location=lambda storage, loc: tm.ones(3))
    with pytest.raises(TypeError, match="map_location returned str"):
        tm.load(path, map_location=lambda storage, loc: "cpu")


@pytest.mark.torch
def test_torch_passes_map_location_the_same_storages(tmp_path):
    torch = pytest.importorskip("torch")
    obj = {"x": torch.arange(6.).reshape(2, 3), "h": torch.ones(5, dtype=torch.float16), "i": torch.tensor([7])}
    for legacy in (False, True):
        torch.save(obj, tmp_path / "m.pt", _use_new_zipfile_serialization=not legacy)
        seen = {"torch": [], "tm": []}
        for name, library in (("torch", torch), ("tm", tm)):
            def note(storage, location, seen=seen[name], legacy=legacy):
                # the bytes: torch reads a legacy file's storages only after the callable returns
                seen.append((type(storage).__name__, storage.nbytes(), storage.device.type, location,
                             None if legacy else storage.tolist()))
                return storage
            back = library.load(tmp_path / "m.pt", map_location=note)
            assert back["x"].tolist() == obj["x"].tolist()
        assert sorted(seen["torch"]) == sorted(seen["tm"])


@pytest.mark.parametrize("name", ["torch_attributes.pt", "torch_attributes_legacy.pt"])
def test_committed_checkpoints_with_tensor_attributes(name):
    obj = tm.load(DATA / name)  # written by tests/data/make_torch_attributes.py with torch 2.13
    assert obj["noted"].note == "kept" and obj["noted"].tolist() == [0.0, 1.0, 2.0]
    assert type(obj["p"]) is tm.nn.Parameter and obj["p"].lr_scale == 0.5 and obj["p"].requires_grad
    assert type(obj["r"]) is tm.Tensor and obj["r"].requires_grad and obj["r"].is_leaf
    assert obj["meta"].device.type == "meta" and obj["meta"].shape == (2, 3)
    assert obj["empty"].shape == (0, 3) and obj["scalar"].shape == () and obj["scalar"].item() == 3.5


def test_map_location_and_mmap(tmp_path):
    path = DATA / "torch_small.pt"
    for location in ("cpu", tm.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage, lambda s, loc: None):
        assert tm.load(path, map_location=location)["row"].tolist() == [3.0, 4.0, 5.0]
    meta = tm.load(path, map_location="meta")
    assert meta["row"].device.type == "meta" and meta["row"].shape == (3,) and meta["row"].storage_offset() == 3
    assert tm.load(path, map_location={"cpu": "meta"})["p"].device.type == "meta"
    seen = []  # as torch.load: an untyped storage (bytes) and the location string
    tm.load(path, map_location=lambda storage, loc: seen.append((type(storage).__name__, storage.nbytes(), loc)))
    assert ("UntypedStorage", 24, "cpu") in seen
    mapped = tm.load(path, mmap=True)
    mapped["row"][0] = 42.0  # copy-on-write: the file is untouched
    assert tm.load(path)["row"][0].item() == 3.0
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        tm.load(path, map_location={"cpu": "cuda:0"})
    with pytest.raises(TypeError, match="map_location must be None, a string, a device, a dict or a callable"):
        tm.load(path, map_location=3)


# -- writing ----------------------------------------------------------------------------------------

def test_layout_of_a_written_checkpoint(tmp_path):
    x = tm.arange(6.).reshape(2, 3)
    tm.save({"x": x, "xt": x.t(), "b": tm.ones(2, dtype=tm.float64)}, tmp_path / "model.pt")
    with zipfile.ZipFile(tmp_path / "model.pt") as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == [
            "model/data.pkl", "model/.format_version", "model/.storage_alignment", "model/byteorder", "model/data/0",
            "model/data/1", "model/version", "model/.data/serialization_id"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos) and archive.testzip() is None
        assert {i.flag_bits for i in infos} == {0x808}  # UTF-8 names, CRC and sizes after the data (as PyTorch)
        assert archive.read("model/byteorder") == b"little" and archive.read("model/version") == b"3\n"
        assert archive.read("model/data/0") == np.arange(6, dtype=np.float32).tobytes()
        assert archive.read("model/data.pkl")[:2] == b"\x80\x02"
    raw = (tmp_path / "model.pt").read_bytes()
    for info in infos:
        start = info.header_offset + 30 + len(info.filename) + int.from_bytes(raw[info.header_offset + 28:
                                                                                  info.header_offset + 30], "little")
        assert start % 64 == 0
    for info in infos:  # each record's data descriptor: signature, CRC-32, sizes
        start = raw.index(info.filename.encode(), info.header_offset) + len(info.filename)
        start += int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
        descriptor = raw[start + info.file_size:start + info.file_size + 16]
        assert descriptor == b"PK\x07\x08" + info.CRC.to_bytes(4, "little") + info.file_size.to_bytes(4, "little") * 2
    back = tm.load(tmp_path / "model.pt")
    assert back["xt"].stride() == (1, 3) and back["b"].dtype == tm.float64


def test_a_loaded_checkpoint_is_freed_without_a_garbage_collection():
    # A reference cycle through the loader kept every loaded buffer alive until the next collection.
    gc.disable()
    try:
        for path in (DATA / "torch_small.pt", DATA / "torch_small_legacy.pt"):
            obj = tm.load(path)
            ref = weakref.ref(obj["p"])
            del obj
            assert ref() is None
    finally:
        gc.enable()


def test_round_trip_of_every_value_kind():
    state = collections.OrderedDict([("w", tm.ones(2)), ("b", tm.zeros(1))])
    state._metadata = {"": {"version": 1}}
    x = tm.arange(12.).reshape(3, 4)
    obj = {"state": state, "view": x[1:, 2:], "x": x, "p": tm.nn.Parameter(tm.ones(3), requires_grad=False),
           "ints": [0, 255, 65536, -1, 2 ** 31, -(2 ** 70)], "floats": [float("inf"), -0.0, 1e-310],
           "set": {1, 2}, "c": collections.Counter("aab"), "bytes": (b"", b"\xff\x00", bytearray(b"x")),
           "misc": (None, True, 1 + 2j, tm.Size([2]), tm.int8, tm.device("cpu"), "é"), 5: "int key"}
    obj["same"] = obj["state"]
    back = tm.load(io.BytesIO(_saved(obj)))
    assert back["same"] is back["state"] and back["state"]._metadata == {"": {"version": 1}}
    assert back["view"].storage_offset() == 6 and back["view"].tolist() == [[6.0, 7.0], [10.0, 11.0]]
    assert type(back["p"]) is tm.nn.Parameter and not back["p"].requires_grad
    assert back["ints"] == obj["ints"] and back["set"] == {1, 2} and back["c"] == collections.Counter("aab")
    assert back["bytes"] == (b"", b"\xff\x00", bytearray(b"x")) and back["misc"] == obj["misc"]
    assert str(back["floats"]) == str(obj["floats"]) and back[5] == "int key"


def test_what_cannot_be_written():
    with pytest.raises(TypeError, match=r"cannot store a value of type function at obj\['f'\]"):
        tm.save({"f": lambda: 0}, io.BytesIO())
    x = tm.arange(4.)
    with pytest.raises(RuntimeError, match="view the same data as different types: obj\\['a'\\], obj\\['b'\\]"):
        tm.save({"a": x, "b": x.view(tm.int32)}, io.BytesIO())
    loop: list = []
    loop.append(loop)  # a list holding itself is written as pickle writes it, and loads the same
    back = tm.load(io.BytesIO(_saved(loop)))
    assert back[0] is back
    cycle = ([],)
    cycle[0].append(cycle)  # a tuple cannot be memoized before its items: refused
    with pytest.raises(ValueError, match=r"contains itself \(at obj\[0\]\[0\]\)"):
        tm.save(cycle, io.BytesIO())


def test_safetensors_names_keep_the_safetensors_format(tmp_path):
    tm.save({"w": tm.ones(2)}, tmp_path / "w.safetensors")
    assert (tmp_path / "w.safetensors").read_bytes()[8:9] == b"{"
    assert tm.load(tmp_path / "w.safetensors")["w"].tolist() == [1.0, 1.0]
    assert _saved(tm.ones(1))[:4] == b"PK\x03\x04"


# -- refusals ---------------------------------------------------------------------------------------

class _System:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class _Eval:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return eval, (f"open({self.marker!r}, 'w').close()",)


@pytest.mark.parametrize("make", [_System, _Eval])
@pytest.mark.parametrize("weights_only", [None, True, False])
def test_malicious_pickles_are_refused_and_nothing_runs(tmp_path, make, weights_only):
    marker = tmp_path / "marker"
    payload = pickle.dumps({"w": [1, make(str(marker))]}, protocol=2)
    name = f"{os.system.__module__}.system" if make is _System else "builtins.eval"
    offset = payload.index(b"c" + name.replace(".", " ").replace("builtins", "__builtin__").encode()
                           .replace(b" ", b"\n", 1))
    for content in (_zip(payload), b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19." + payload):
        (tmp_path / "evil.pt").write_bytes(content)
        with pytest.raises(UnsafeFileError) as error:
            tm.load(tmp_path / "evil.pt", weights_only=weights_only)
        assert isinstance(error.value, pickle.UnpicklingError) and isinstance(error.value, ValueError)
    assert f'"{name}" at data.pkl offset {offset} is not allowed' in str(_load_error(_zip(payload)))
    assert not marker.exists()


class _Reduce:
    """Pickles as ``function(*args)``, whatever the function (the attack a pickle allows)."""

    def __init__(self, function, *args) -> None:
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


def _text(value: str) -> bytes:
    raw = value.encode()
    return b"X" + len(raw).to_bytes(4, "little") + raw


def _attacks(marker: str) -> dict:
    """Payloads that would create ``marker`` if any of their code ran, by name: objects (pickled
    with each protocol) or pickles written opcode by opcode."""
    import builtins
    import importlib
    import subprocess
    touch = f"touch {marker}"
    return {
        "exec": _Reduce(builtins.exec, f"open({marker!r}, 'w').close()"),
        "subprocess.Popen": _Reduce(subprocess.Popen, ["touch", marker]),
        "importlib.import_module": _Reduce(importlib.import_module, "antigravity"),
        "open": _Reduce(open, marker, "w"),
        # getattr(__import__("os"), "system")("touch marker")
        "getattr(os, 'system')": b"\x80\x02cbuiltins\ngetattr\n(cbuiltins\n__import__\n(" + _text("os")
        + b"tR" + _text("system") + b"tR(" + _text(touch) + b"tR.",
        # an allowed rebuild function given os.system to call
        "os.system in a tensor's rebuild": b"\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n(cposix\nsystem\n"
        b"ctorch\nTensor\n(" + _text(touch) + b"t}tR.",
        # a storage's persistent id naming os.system
        "os.system as a storage type": b"\x80\x02(" + _text("storage") + b"cos\nsystem\n" + _text(touch)
        + _text("cpu") + b"K\x01tQ.",
        # BUILD setting __class__ on an allowed OrderedDict
        "BUILD __class__": b"\x80\x02ccollections\nOrderedDict\n)R}" + _text("__class__")
        + b"ccollections\nCounter\nsb.",
        "BUILD __reduce__": b"\x80\x02ccollections\nOrderedDict\n)R}" + _text("__reduce__") + b"K\x01sb.",
    }


_OBJECT_ATTACKS = ["exec", "subprocess.Popen", "importlib.import_module", "open"]
_OPCODE_ATTACKS = ["getattr(os, 'system')", "os.system in a tensor's rebuild", "os.system as a storage type",
                   "BUILD __class__", "BUILD __reduce__"]


@pytest.mark.parametrize(("attack", "protocol"), [(a, p) for a in _OBJECT_ATTACKS for p in (0, 1, 2, 4, 5)]
                         + [(a, 2) for a in _OPCODE_ATTACKS])
def test_more_malicious_pickles_are_refused_and_nothing_runs(tmp_path, protocol, attack):
    marker = tmp_path / "marker"
    made = _attacks(str(marker))[attack]
    # fix_imports=False: protocols 0-2 would spell some names as Python 2 did ("commands.Popen")
    payload = made if type(made) is bytes else pickle.dumps(made, protocol=protocol, fix_imports=False)
    expected = {"exec": '"builtins.exec"', "subprocess.Popen": '"subprocess.Popen"', "open": '"io.open"',
                "importlib.import_module": '"importlib.import_module"', "getattr(os, 'system')": '"builtins.getattr"',
                "os.system in a tensor's rebuild": f'"{os.system.__module__}.system"',
                "os.system as a storage type": '"os.system"', "BUILD __class__": "attribute '__class__'",
                "BUILD __reduce__": "attribute '__reduce__'"}[attack]
    for content in (_zip(payload), b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19." + payload):
        for weights_only in (None, False):
            with pytest.raises(FormatError) as error:  # UnsafeFileError for the names
                tm.load(io.BytesIO(content), weights_only=weights_only)
            assert expected in str(error.value) and "is not allowed" in str(error.value)
            assert isinstance(error.value, UnsafeFileError) == expected.startswith('"')
    assert not marker.exists()


def test_loading_allowed_classes_runs_none_of_their_methods(tmp_path):
    marker = tmp_path / "marker"

    @dataclasses.dataclass
    class Hooked:
        path: str

        def __post_init__(self):
            open(self.path, "w").close()

        def __setstate__(self, state):
            open(self.path, "w").close()

    Hooked.__module__, Hooked.__qualname__ = __name__, "Hooked"
    payload = pickle.dumps(_Plain(str(marker)), protocol=2).replace(b"_Plain", b"Hooked")
    marker.unlink()
    with tm.serialization.safe_globals([Hooked]):
        back = tm.load(io.BytesIO(_zip(payload)))
    assert type(back) is Hooked and back.path == str(marker) and not marker.exists()


class _Plain:
    def __init__(self, path: str) -> None:
        self.path = path
        open(path, "w").close()


def _load_error(content: bytes) -> Exception:
    with pytest.raises(Exception) as error:
        tm.load(io.BytesIO(content))
    return error.value


def test_refusals_name_what_and_where():
    assert str(_load_error(_zip(b"\x80\x02(i__main__\nX\n."))) == (
        "opcode INST (b'i') at data.pkl offset 3 is not interpreted: tm.load reads the opcodes PyTorch's "
        "checkpoints use (protocols 2 to 5, no code)")
    good = _saved({"w": tm.ones(4)})
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        pkl = archive.read("archive/data.pkl")
    assert "storage '0' has no record 'archive/data/0'" in str(_load_error(_zip(pkl)))
    short = _zip(pkl, {"data/0": b"\x00" * 8})
    assert "storage '0' holds 4 elements of float32 (16 bytes) but record 'archive/data/0' holds 8" \
        in str(_load_error(short))
    big = _zip(pkl.replace(b"K\x04\x85", b"K\x09\x85", 1), {"data/0": b"\x00" * 16})  # size 9 > 4 elements
    assert "a tensor of size [9], stride [1] and offset 0 needs 9 elements, but storage '0' holds 4" \
        in str(_load_error(big))
    assert "the file is truncated" in str(_load_error(good[:len(good) // 2])) or \
        "no end of central directory" in str(_load_error(good[:len(good) // 2]))
    flipped = bytearray(good)
    flipped[good.index(b"\x00\x00\x80?")] ^= 1
    assert "fails its CRC-32 check" in str(_load_error(bytes(flipped)))


# The file fuzzer is tests/test_checkpoint_fuzz.py.


# -- the user's allow-list --------------------------------------------------------------------------

@dataclasses.dataclass
class Config:
    lr: float
    layers: list


def test_safe_globals_rebuild_plain_data_classes():
    payload = pickle.dumps({"config": Config(0.1, [1, 2])}, protocol=2)
    content = _zip(payload)
    with pytest.raises(UnsafeFileError, match=f'"{__name__}.Config" at data.pkl offset'):
        tm.load(io.BytesIO(content))
    with tm.serialization.safe_globals([Config]):
        assert tm.load(io.BytesIO(content)) == {"config": Config(0.1, [1, 2])}
        assert tm.serialization.get_safe_globals() == [Config]
    assert tm.serialization.get_safe_globals() == []
    crafted = payload.replace(b"lr", b"zz")
    with tm.serialization.safe_globals([Config]), pytest.raises(FormatError, match="attribute 'zz' on Config"):
        tm.load(io.BytesIO(_zip(crafted)))
    with pytest.raises(TypeError, match="plain-data classes only"):
        tm.serialization.add_safe_globals([os.system])
    with pytest.raises(TypeError, match="defines or inherits its own __new__"):
        tm.serialization.add_safe_globals([collections.namedtuple("P", "a")])


@dataclasses.dataclass(frozen=True)
class FrozenConfig:
    lr: float


@dataclasses.dataclass(slots=True)
class SlottedConfig:
    lr: float
    sizes: list


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenSlottedConfig:
    lr: float
    name: str


@dataclasses.dataclass
class Nested:
    inner: FrozenConfig
    table: dict = dataclasses.field(default_factory=dict)


@pytest.mark.parametrize("protocol", [2, 4])
def test_dataclass_kinds_are_rebuilt_field_by_field(protocol):
    classes = [FrozenConfig, SlottedConfig, FrozenSlottedConfig, Nested]
    obj = [FrozenConfig(0.1), SlottedConfig(0.2, [1]), FrozenSlottedConfig(0.3, "x"),
           Nested(FrozenConfig(0.4), {"k": (1, 2)})]
    content = _zip(pickle.dumps(obj, protocol=protocol))
    with tm.serialization.safe_globals(classes):
        assert tm.load(io.BytesIO(content)) == obj
    short = pickle.dumps(FrozenSlottedConfig(0.3, "x"), protocol=2)
    short = short.replace(b"X\x01\x00\x00\x00xq", b"q", 1)  # the second field's value taken out
    with tm.serialization.safe_globals(classes), pytest.raises(FormatError, match="with 1 values for 2 fields"):
        tm.load(io.BytesIO(_zip(short)))


def test_allowed_classes_are_written_too():
    obj = [FrozenConfig(0.1), SlottedConfig(0.2, [1]), FrozenSlottedConfig(0.3, "x"),
           Nested(FrozenConfig(0.4), {"k": (1, tm.ones(1))})]
    obj.append(obj[0])
    with pytest.raises(TypeError, match=r"cannot store a value of type FrozenConfig at obj\[0\]: .* and instances "
                                        "of plain-data classes added with tensormodes.serialization.add_safe_globals"):
        tm.save(obj, io.BytesIO())
    with tm.serialization.safe_globals([FrozenConfig, SlottedConfig, FrozenSlottedConfig, Nested]):
        back = tm.load(io.BytesIO(_saved(obj)))
    assert back[:4] == obj[:4] and back[4] is back[0] and back[3].table["k"][1].tolist() == [1.0]


@pytest.mark.torch
def test_allowed_classes_against_torch():
    torch = pytest.importorskip("torch")
    classes = [FrozenConfig, SlottedConfig, FrozenSlottedConfig, Nested]
    obj = [FrozenConfig(0.1), SlottedConfig(0.2, [1]), FrozenSlottedConfig(0.3, "x"), Nested(FrozenConfig(0.4))]
    with tm.serialization.safe_globals(classes):
        content = _saved(obj)
    with torch.serialization.safe_globals(classes):
        assert torch.load(io.BytesIO(content), weights_only=True) == obj
        buffer = io.BytesIO()
        torch.save(obj, buffer)
    with tm.serialization.safe_globals(classes):
        assert tm.load(io.BytesIO(buffer.getvalue())) == obj


# -- against PyTorch --------------------------------------------------------------------------------

@pytest.mark.torch
def test_torch_reads_what_tm_writes(tmp_path):
    torch = pytest.importorskip("torch")
    model = tm.nn.Sequential(tm.nn.Linear(3, 4), tm.nn.ReLU(), tm.nn.Linear(4, 2))
    state = model.state_dict()
    x = tm.arange(24.).reshape(4, 6)
    obj = {"state": state, "x": x, "views": [x.t(), x[1:3, 2:5], x.diagonal(), x[:, ::2]], "tied": [x, x],
           "p": tm.nn.Parameter(tm.ones(2)), "half": tm.ones(2, dtype=tm.bfloat16),
           "meta": tm.empty(2, 3, device="meta"),
           "misc": (1 + 2j, {1, 2}, b"ab", tm.Size([3]), tm.float16, tm.device("cpu"))}
    tm.save(obj, tmp_path / "c.pt")
    back = torch.load(tmp_path / "c.pt", weights_only=True)
    assert type(back["state"]) is collections.OrderedDict and back["state"]._metadata == state._metadata
    for key, value in state.items():
        assert back["state"][key].tolist() == value.tolist()
    ptr = back["x"].untyped_storage().data_ptr()
    for ours, theirs in zip(obj["views"], back["views"]):
        assert theirs.untyped_storage().data_ptr() == ptr
        assert (theirs.stride(), theirs.storage_offset(), theirs.tolist()) == \
            (ours.stride(), ours.storage_offset(), ours.tolist())
    assert back["tied"][0] is back["tied"][1]
    assert type(back["p"]) is torch.nn.Parameter and back["p"].requires_grad
    assert back["half"].dtype == torch.bfloat16 and back["meta"].is_meta and back["meta"].shape == (2, 3)
    assert back["misc"] == (1 + 2j, {1, 2}, b"ab", torch.Size([3]), torch.float16, torch.device("cpu"))


@pytest.mark.torch
@pytest.mark.parametrize("legacy", [False, True])
def test_tm_reads_what_torch_writes(tmp_path, legacy):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(5, 3)).sum().backward()
    optimizer.step()
    x = torch.arange(24.).reshape(4, 6)
    obj = {"model": model.state_dict(), "optim": optimizer.state_dict(), "x": x, "v": x[1:, ::2],
           "p": torch.nn.Parameter(torch.ones(2)), "dtypes": [torch.ones(2, dtype=d) for d in (
               torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
               torch.bfloat16, torch.float64, torch.complex64, torch.complex128)]}
    noted = torch.arange(3.)
    noted.note = "n"
    obj.update(noted=noted, r=torch.ones(2, requires_grad=True), empty=torch.empty(0, 3), scalar=torch.tensor(3.5),
               meta=torch.empty(2, 3, device="meta"))
    torch.save(obj, tmp_path / "t.pt", _use_new_zipfile_serialization=not legacy)
    back = tm.load(tmp_path / "t.pt")
    assert back["noted"].note == "n" and back["r"].requires_grad and back["empty"].shape == (0, 3)
    assert back["scalar"].shape == () and back["scalar"].item() == 3.5
    assert back["meta"].device.type == "meta" and back["meta"].shape == (2, 3)
    for key, value in obj["model"].items():
        assert back["model"][key].tolist() == value.tolist() and str(back["model"][key].dtype)[12:] == \
            str(value.dtype)[6:]
    assert back["model"]._metadata == obj["model"]._metadata
    assert back["optim"]["param_groups"] == obj["optim"]["param_groups"]
    assert back["optim"]["state"][0]["exp_avg"].tolist() == obj["optim"]["state"][0]["exp_avg"].tolist()
    assert (back["v"].stride(), back["v"].storage_offset()) == (obj["v"].stride(), obj["v"].storage_offset())
    assert [t.tolist() for t in back["dtypes"]] == [t.tolist() for t in obj["dtypes"]]
    assert type(back["p"]) is tm.nn.Parameter


# -- tensor attributes, Parameter subclasses, the static scan ------------------------------------

class _Tagged(tm.nn.Parameter):
    pass


def test_tensor_attributes_and_parameter_subclasses_round_trip():
    t = tm.arange(3.)
    t.note, t.scale = "kept", [1, tm.ones(1)]
    p = _Tagged(tm.ones(2))
    p.lr_scale = 0.5
    r = tm.ones(2, requires_grad=True)
    back = tm.load(io.BytesIO(_saved({"t": t, "p": p, "r": r, "meta": tm.empty(1, device="meta")})))
    assert back["t"].note == "kept" and back["t"].scale[1].tolist() == [1.0] and back["t"].tolist() == [0.0, 1.0, 2.0]
    assert type(back["p"]) is tm.nn.Parameter and back["p"].lr_scale == 0.5 and back["p"].requires_grad
    assert back["r"].requires_grad and type(back["r"]) is tm.Tensor and not hasattr(back["r"], "note")
    with zipfile.ZipFile(io.BytesIO(_saved({"t": t, "p": p}))) as archive:
        pkl = archive.read("archive/data.pkl")
    assert b"torch._tensor\n_rebuild_from_type_v2\n" in pkl and b"torch._utils\n_rebuild_parameter_with_state\n" in pkl
    loop = tm.ones(1)
    loop.me = loop
    with pytest.raises(ValueError, match=r"contains itself \(at obj.__dict__\['me'\]\)"):
        tm.save(loop, io.BytesIO())


@pytest.mark.parametrize("name", [b"_data", b"grad", b"add", b"__class__"])
def test_a_file_cannot_set_internal_attributes_or_methods_on_a_tensor(name):
    t = tm.ones(1)
    t.aaaa = 1
    with zipfile.ZipFile(io.BytesIO(_saved(t))) as archive:
        records = {n.split("/", 1)[1]: archive.read(n) for n in archive.namelist()}
    pkl = records.pop("data.pkl").replace(b"X\x04\x00\x00\x00aaaa", b"X" + len(name).to_bytes(4, "little") + name)
    with pytest.raises(FormatError, match=f"tensor attribute '{name.decode()}' is not allowed"):
        tm.load(io.BytesIO(_zip(pkl, records)))


def test_get_unsafe_globals_in_checkpoint():
    payload = pickle.dumps({"a": _System("x"), "b": collections.OrderedDict(), "c": [print, Config(1.0, [])]},
                           protocol=2)
    found = tm.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_zip(payload)))
    assert found == [f"{os.system.__module__}.system", "builtins.print", f"{__name__}.Config"]
    protocol4 = pickle.dumps([print, collections.Counter()], protocol=4)  # names by STACK_GLOBAL
    assert tm.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_zip(protocol4))) == ["builtins.print"]
    with tm.serialization.safe_globals([Config]):
        assert f"{__name__}.Config" not in tm.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_zip(payload)))
    assert tm.serialization.get_unsafe_globals_in_checkpoint(DATA / "torch_small.pt") == []
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        tm.serialization.get_unsafe_globals_in_checkpoint(DATA / "torch_small_legacy.pt")


@pytest.mark.torch
def test_tensor_attributes_against_torch(tmp_path):
    torch = pytest.importorskip("torch")
    t = torch.arange(3.)
    t.note = "kept"
    p = torch.nn.Parameter(torch.ones(2))
    p.lr_scale = 0.5
    torch.save({"t": t, "p": p, "r": torch.ones(2, requires_grad=True)}, tmp_path / "t.pt")
    back = tm.load(tmp_path / "t.pt")
    assert back["t"].note == "kept" and back["p"].lr_scale == 0.5 and back["r"].requires_grad
    ours = tm.arange(3.)
    ours.note = "kept"
    mine = _Tagged(tm.ones(2))
    mine.lr_scale = 0.5
    tm.save({"t": ours, "p": mine, "r": tm.ones(2, requires_grad=True)}, tmp_path / "m.pt")
    theirs = torch.load(tmp_path / "m.pt", weights_only=True)
    assert theirs["t"].note == "kept" and theirs["t"].tolist() == [0.0, 1.0, 2.0]
    assert type(theirs["p"]) is torch.nn.Parameter and theirs["p"].lr_scale == 0.5 and theirs["r"].requires_grad
    payload = pickle.dumps({"a": _System("x"), "c": print}, protocol=2)
    crafted = _zip(payload, {"version": b"3\n"})
    assert sorted(tm.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(crafted))) == \
        sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(crafted)))


def _base_object(array: np.ndarray):
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array.obj if isinstance(array, memoryview) else array


def test_mmap_tensors_are_views_of_the_file_mapping():
    obj = tm.load(DATA / "torch_small.pt", mmap=True)
    row, weight = obj["row"].numpy(), obj["state"]["fc.weight"].numpy()
    assert isinstance(_base_object(row), mmap.mmap) and np.shares_memory(row, weight)
    assert row.__array_interface__["data"][0] == weight.__array_interface__["data"][0] + 12
    assert not isinstance(_base_object(tm.load(DATA / "torch_small.pt")["row"].numpy()), mmap.mmap)


def _big_endian(content: bytes) -> bytes:
    """The checkpoint ``content`` as a big-endian machine writes it: ``byteorder`` says "big" and
    every storage's elements are byteswapped (their dtypes read from data.pkl)."""
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        records = {n.split("/", 1)[1]: archive.read(n) for n in archive.namelist()}
    kinds = {b"FloatStorage": np.float32, b"HalfStorage": np.float16, b"LongStorage": np.int64}
    pkl = records["data.pkl"]
    for name, kind in kinds.items():
        at = pkl.find(b"torch\n" + name)
        while at >= 0:
            start = at + len(name) + 7  # the key follows as BINUNICODE: 'X', a 4-byte length, the text
            key = pkl[start + 5:start + 5 + int.from_bytes(pkl[start + 1:start + 5], "little")]
            records[f"data/{key.decode()}"] = np.frombuffer(records[f"data/{key.decode()}"], kind).byteswap().tobytes()
            at = pkl.find(b"torch\n" + name, at + 1)
    records["byteorder"] = b"big"
    return _zip(records.pop("data.pkl"), records)


def test_big_endian_checkpoints_are_byteswapped():
    content = _big_endian(_saved({"w": tm.arange(4.), "h": tm.tensor([1.5, -2.0], dtype=tm.float16),
                                  "i": tm.tensor([1, -2 ** 40]), "b": tm.tensor([True, False])}))
    back = tm.load(io.BytesIO(content))
    assert back["w"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["h"].tolist() == [1.5, -2.0]
    assert back["i"].tolist() == [1, -2 ** 40] and back["b"].tolist() == [True, False]
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        records = {n.split("/", 1)[1]: archive.read(n) for n in archive.namelist()}
    records["byteorder"] = b"middle"
    with pytest.raises(FormatError, match="says 'middle', not 'little' or 'big'"):
        tm.load(io.BytesIO(_zip(records.pop("data.pkl"), records)))


@pytest.mark.torch
def test_big_endian_and_skip_data_files_against_torch(tmp_path):
    torch = pytest.importorskip("torch")
    content = _big_endian(_saved({"w": tm.arange(4.), "h": tm.tensor([1.5, -2.0], dtype=tm.float16),
                                  "i": tm.tensor([1, -2 ** 40])}))
    (tmp_path / "big.pt").write_bytes(content)
    theirs = torch.load(tmp_path / "big.pt", weights_only=True)
    ours = tm.load(tmp_path / "big.pt")
    assert {k: v.tolist() for k, v in theirs.items()} == {k: v.tolist() for k, v in ours.items()}
    with torch.serialization.skip_data():
        torch.save({"w": torch.arange(4.)}, tmp_path / "skipped.pt")
    assert tm.load(tmp_path / "skipped.pt")["w"].tolist() == [0.0] * 4  # the records' CRC-32 is 0: not checked


# -- PyTorch's serialization settings ---------------------------------------------------------------

def test_crc32_options(tmp_path):
    assert tm.serialization.get_crc32_options() is True
    tm.serialization.set_crc32_options(False)
    try:
        assert tm.serialization.get_crc32_options() is False
        tm.save({"w": tm.arange(4.)}, tmp_path / "c.pt")
    finally:
        tm.serialization.set_crc32_options(True)
    with zipfile.ZipFile(tmp_path / "c.pt") as archive:
        assert {info.CRC for info in archive.infolist()} == {0}
        assert archive.testzip() == "c/data.pkl"  # zip tools see the CRC-32s as wrong, as with torch's files
    assert tm.load(tmp_path / "c.pt")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    tm.save({"w": tm.arange(4.)}, tmp_path / "d.pt")
    with zipfile.ZipFile(tmp_path / "d.pt") as archive:
        assert 0 not in {info.CRC for info in archive.infolist()} and archive.testzip() is None


def test_default_mmap_options(tmp_path):
    path = tmp_path / "m.pt"
    tm.save({"w": tm.arange(4.)}, path)
    assert tm.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE
    tm.load(path, mmap=True)["w"][0] = 7.0  # private: the file keeps its bytes
    assert tm.load(path)["w"][0].item() == 0.0
    with tm.serialization.set_default_mmap_options(mmap.MAP_SHARED):
        assert tm.serialization.get_default_mmap_options() == mmap.MAP_SHARED
        loaded = tm.load(path, mmap=True)
        loaded["w"][1] = 9.0  # shared: the file changes
        del loaded
    assert tm.load(path, mmap=True)["w"].tolist() == [0.0, 9.0, 2.0, 3.0]
    with pytest.raises(FormatError, match="record 'm/data/0' fails its CRC-32 check"):
        tm.load(path)  # the record's CRC-32 is the saved data's
    assert tm.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE
    tm.serialization.set_default_mmap_options(mmap.MAP_SHARED)  # as a call, it stays
    assert tm.serialization.get_default_mmap_options() == mmap.MAP_SHARED
    tm.serialization.set_default_mmap_options(mmap.MAP_PRIVATE)
    with pytest.raises(ValueError, match="expected mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got 4"):
        tm.serialization.set_default_mmap_options(4)


def test_default_load_endianness_for_files_without_a_byteorder_record():
    content = _big_endian(_saved({"w": tm.arange(3.)}))
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        records = {n.split("/", 1)[1]: archive.read(n) for n in archive.namelist() if not n.endswith("byteorder")}
    unmarked = _zip(records.pop("data.pkl"), records)
    assert tm.serialization.get_default_load_endianness() is None
    assert tm.load(io.BytesIO(unmarked))["w"].tolist() != [0.0, 1.0, 2.0]  # read as little-endian
    tm.serialization.set_default_load_endianness(tm.serialization.LoadEndianness.BIG)
    try:
        assert tm.load(io.BytesIO(unmarked))["w"].tolist() == [0.0, 1.0, 2.0]
        assert tm.load(io.BytesIO(_saved({"w": tm.arange(3.)})))["w"].tolist() == [0.0, 1.0, 2.0]  # marked: kept
    finally:
        tm.serialization.set_default_load_endianness(None)
    with pytest.raises(TypeError, match="Invalid argument type in function set_default_load_endianness"):
        tm.serialization.set_default_load_endianness("big")


def test_skip_data(tmp_path):
    with tm.serialization.skip_data():
        tm.save({"w": tm.arange(4.), "b": tm.ones(2, dtype=tm.int64)}, tmp_path / "s.pt")
        tm.save({"w": tm.arange(4.)}, io.BytesIO())  # a file object too
    raw = (tmp_path / "s.pt").read_bytes()
    with zipfile.ZipFile(tmp_path / "s.pt") as archive:  # zipfile would refuse the record's CRC-32 of 0
        info = archive.getinfo("s/data/0")
        start = info.header_offset + 30 + len(info.filename) + int.from_bytes(
            raw[info.header_offset + 28:info.header_offset + 30], "little")
        assert raw[start:start + 16] == bytes(16) and info.file_size == 16 and info.CRC == 0
        assert archive.getinfo("s/data.pkl").CRC != 0
    back = tm.load(tmp_path / "s.pt")
    assert back["w"].tolist() == [0.0] * 4 and back["b"].dtype == tm.int64 and back["b"].tolist() == [0, 0]
    tm.save({"w": tm.arange(4.)}, tmp_path / "full.pt")
    with tm.serialization.skip_data():
        assert tm.load(tmp_path / "full.pt")["w"].tolist() == [0.0] * 4  # nothing read
        assert tm.load(DATA / "torch_small_legacy.pt")["w"].shape == (2, 3)
    assert tm.load(tmp_path / "full.pt")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.torch
def test_serialization_settings_against_torch(tmp_path):
    torch = pytest.importorskip("torch")
    with tm.serialization.skip_data():
        tm.save({"w": tm.arange(4.)}, tmp_path / "s.pt")
    assert torch.load(tmp_path / "s.pt", weights_only=True)["w"].tolist() == [0.0] * 4
    tm.serialization.set_crc32_options(False)
    try:
        tm.save({"w": tm.arange(4.)}, tmp_path / "c.pt")
    finally:
        tm.serialization.set_crc32_options(True)
    assert torch.load(tmp_path / "c.pt", weights_only=True)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert [e.name for e in tm.serialization.LoadEndianness] == [e.name for e in torch.serialization.LoadEndianness]
    assert [e.value for e in tm.serialization.LoadEndianness] == [e.value for e in torch.serialization.LoadEndianness]
