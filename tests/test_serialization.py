"""tm.save / tm.load: safetensors files, every value kind and dtype, shared memory, corruption, interop."""

from __future__ import annotations

import collections
import io
import json
import math
import pathlib
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm
from tensormodes import serialization
from tensormodes.serialization import FormatError

ALL_DTYPES = [tm.bool, tm.uint8, tm.int8, tm.int16, tm.int32, tm.int64, tm.float16, tm.bfloat16, tm.float32,
              tm.float64, tm.complex64, tm.complex128]


class SafetensorsBuffer(io.BytesIO):
    """An in-memory file named like a ``.safetensors`` file, so tm.save writes safetensors to it
    (any other name gets PyTorch's zip format, tested in test_serialization_pt.py)."""

    name = "buffer.safetensors"


def _bytes_of(obj) -> bytes:
    buffer = SafetensorsBuffer()
    tm.save(obj, buffer)
    return buffer.getvalue()


def _round_trip(obj):
    return tm.load(io.BytesIO(_bytes_of(obj)))


def _header(data: bytes) -> dict:
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n])


def _sample(dtype, shape=(2, 3)):
    values = tm.arange(math.prod(shape)).reshape(shape) % 5 - 2
    if dtype.is_complex:
        return values.to(dtype) * (1 + 2j)
    return values.to(dtype)


def _same(a: tm.Tensor, b: tm.Tensor) -> None:
    assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
    assert a.tolist() == b.tolist()


# -- the file is a safetensors file ---------------------------------------------------------------------------

def test_layout_is_safetensors():
    data = _bytes_of({"w": tm.ones(2, 3), "b": tm.zeros(3, dtype=tm.float64)})
    n = int.from_bytes(data[:8], "little")
    assert n % 8 == 0 and data[8:9] == b"{"
    header = _header(data)
    assert header["w"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [24, 48]}
    assert header["b"] == {"dtype": "F64", "shape": [3], "data_offsets": [0, 24]}  # widest first: aligned
    assert len(data) == 8 + n + 48
    assert np.frombuffer(data[8 + n + 24:], np.float32).tolist() == [1.0] * 6
    document = json.loads(header["__metadata__"]["tensormodes"])
    assert document["version"] == 1 and set(document) == {"version", "storages", "tensors", "object"}
    assert document["object"] == {"dict": {"w": {"tensor": 0}, "b": {"tensor": 1}}}
    assert document["storages"]["w"] == {"dtype": "float32", "sum64": [_sum64_of(np.ones(6, np.float32).tobytes())]}
    assert document["tensors"][0] == {"storage": "w", "dtype": "float32", "shape": [2, 3], "stride": [3, 1],
                                      "offset": 0, "requires_grad": False, "parameter": False}
    back = tm.load(io.BytesIO(data))
    assert back["w"].tolist() == [[1.0] * 3] * 2 and back["b"].tolist() == [0.0] * 3
    header_crc = header["__metadata__"].pop("tensormodes.crc32")
    assert header_crc == str(zlib.crc32(json.dumps(header, separators=(",", ":")).encode()))


def test_nested_tensor_names_are_paths():
    header = _header(_bytes_of({"model": {"fc.weight": tm.ones(1)}, "opt": [tm.ones(1), (tm.ones(1),)],
                                "x": tm.ones(1), "x#1": tm.zeros(1)}))
    assert sorted(k for k in header if k != "__metadata__") == ["model.fc.weight", "opt.0", "opt.1.0", "x", "x#1"]
    assert _header(_bytes_of(tm.ones(2)))["tensor"]["shape"] == [2]


# -- round trips ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_round_trips(dtype):
    for shape in [(2, 3), (), (0, 4), (5,)]:
        t = _sample(dtype, shape)
        back = _round_trip(t)
        _same(back, t)
        assert back.stride() == t.stride()
    strided = _sample(dtype, (4, 6))[1:, ::2].t()
    back = _round_trip(strided)
    _same(back, strided)
    assert back.stride() == strided.stride() == (2, 6)


def test_complex128_is_stored_as_pairs_of_f64():
    data = _bytes_of({"z": tm.tensor([1 + 2j, 3 - 4j], dtype=tm.complex128)})
    assert _header(data)["z"]["dtype"] == "F64" and _header(data)["z"]["shape"] == [2, 2]
    assert json.loads(_header(data)["__metadata__"]["tensormodes"])["storages"]["z"]["dtype"] == "complex128"


def test_every_value_kind_round_trips_with_its_type():
    state = collections.OrderedDict([("fc.weight", tm.ones(2)), ("fc.bias", tm.zeros(2))])
    state._metadata = {"": {"version": 1}, "fc": {"version": 1}}
    obj = {
        "state": state,
        "opt": {"state": {0: {"step": tm.tensor(3.), "exp_avg": tm.ones(2)}, 1: {}},
                "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1], "amsgrad": False,
                                  "foreach": None, "name": "groupé \"q\""}]},
        "floats": [float("inf"), float("-inf"), -0.0, 1e-310, 0.1, 1e300, 2.0],
        "ints": [0, -1, 2 ** 70, -(2 ** 64), True, False],
        "complex": [1 + 2j, complex(float("inf"), -1)],
        "keys": {(1, "a"): 1, 2.5: "f", None: 0, True: "t", "s": 1},
        "dtypes": list(ALL_DTYPES),
        "devices": [tm.device("cpu"), tm.device("cpu", 0)],
        "size": tm.Size([2, 3]),
        "empty": [[], (), {}, collections.OrderedDict(), ""],
    }
    back = _round_trip(obj)
    assert repr(back["floats"]) == repr(obj["floats"]) and all(type(v) is float for v in back["floats"])
    assert back["ints"] == obj["ints"] and [type(v) for v in back["ints"]] == [int] * 4 + [bool] * 2
    assert back["complex"] == obj["complex"]
    assert back["keys"] == obj["keys"] and list(back["keys"]) == list(obj["keys"])
    assert back["dtypes"] == obj["dtypes"] and all(a is b for a, b in zip(back["dtypes"], obj["dtypes"]))
    assert back["devices"] == obj["devices"] and type(back["devices"][0]) is tm.device
    assert type(back["size"]) is tm.Size and back["size"] == (2, 3)
    assert back["empty"] == [[], (), {}, collections.OrderedDict(), ""]
    assert [type(v) for v in back["empty"]] == [list, tuple, dict, collections.OrderedDict, str]
    assert type(back["state"]) is collections.OrderedDict and list(back["state"]) == ["fc.weight", "fc.bias"]
    assert back["state"]._metadata == state._metadata
    opt = back["opt"]
    assert list(opt["state"]) == [0, 1] and opt["state"][0]["step"].item() == 3.0
    assert opt["param_groups"] == [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1], "amsgrad": False,
                                    "foreach": None, "name": "groupé \"q\""}]
    nan = _round_trip({"nan": float("nan")})["nan"]
    assert type(nan) is float and math.isnan(nan)


_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)


@settings(max_examples=60, deadline=None)
@given(st.recursive(_leaves, lambda children: st.lists(children, max_size=3)
                    | st.tuples(children, children)
                    | st.dictionaries(st.text(max_size=3) | st.integers(), children, max_size=3), max_leaves=12))
def test_json_like_objects_round_trip_exactly(obj):
    back = _round_trip(obj)
    assert repr(back) == repr(obj)


def test_requires_grad_and_parameters_are_preserved():
    p = tm.nn.Parameter(tm.randn(2, 2))
    frozen = tm.nn.Parameter(tm.ones(2), requires_grad=False)
    x = tm.ones(3, requires_grad=True)
    y = x * 2
    back = _round_trip({"p": p, "frozen": frozen, "x": x, "y": y, "plain": tm.ones(1)})
    assert type(back["p"]) is tm.nn.Parameter and back["p"].requires_grad and back["p"].is_leaf
    assert type(back["frozen"]) is tm.nn.Parameter and not back["frozen"].requires_grad
    assert type(back["x"]) is tm.Tensor and back["x"].requires_grad and back["x"].is_leaf
    # A non-leaf comes back as a leaf that requires grad, as in PyTorch.
    assert back["y"].requires_grad and back["y"].is_leaf and back["y"].grad_fn is None
    assert not back["plain"].requires_grad
    back["p"].sum().backward()
    assert back["p"].grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


# -- shared memory -------------------------------------------------------------------------------------------

def test_the_same_tensor_twice_comes_back_as_one_object():
    w = tm.nn.Parameter(tm.randn(3, 3))
    data = _bytes_of({"encoder.weight": w, "decoder.weight": w})
    back = tm.load(io.BytesIO(data))
    assert back["encoder.weight"] is back["decoder.weight"]
    assert [k for k in _header(data) if k != "__metadata__"] == ["encoder.weight"]  # stored once


def test_views_come_back_as_views_with_their_offsets_and_strides():
    x = tm.arange(24.).reshape(4, 6)
    views = {"x": x, "t": x.t(), "row": x[2], "block": x[1:3, 2:5], "diag": x.diagonal(), "flat": x.view(-1)[5:11],
             "expand": x[0, :2].unsqueeze(0).expand(3, 2), "step": x[:, ::2]}
    data = _bytes_of(views)
    back = tm.load(io.BytesIO(data))
    assert [k for k in _header(data) if k != "__metadata__"] == ["x"]
    for name, v in views.items():
        _same(back[name], v)
        assert back[name].stride() == v.stride() and back[name].storage_offset() == v.storage_offset(), name
        if name != "x":
            assert back[name]._base is back["x"], name
    back["x"][2, 3] = -1.0
    assert back["row"][3].item() == -1.0 and back["block"][1, 1].item() == -1.0 and back["t"][3, 2].item() == -1.0
    assert back["x"]._version == back["row"]._version  # views share their base's version counter


@pytest.mark.torch
def test_view_offsets_and_strides_match_torch():
    torch = pytest.importorskip("torch")
    expressions = ["x.t()", "x[2]", "x[1:3, 2:5]", "x.diagonal()", "x.view(-1)[5:11]", "x[:, ::2]", "x[1:, 1:]"]
    for lib in (tm, torch):
        x = lib.arange(24.).reshape(4, 6)
        obj = {"x": x, **{e: eval(e, {"x": x}) for e in expressions}}
        if lib is tm:
            back = _round_trip(obj)
            ours = {e: (back[e].stride(), back[e].storage_offset(), back[e].tolist()) for e in expressions}
        else:
            buffer = io.BytesIO()
            torch.save(obj, buffer)
            buffer.seek(0)
            back = torch.load(buffer)
            theirs = {e: (back[e].stride(), back[e].storage_offset(), back[e].tolist()) for e in expressions}
    assert ours == theirs


def test_overlapping_slices_of_an_unsaved_base_share_one_storage():
    a = tm.arange(10.)
    data = _bytes_of([a[1:5], a[3:8]])
    header = _header(data)
    assert [k for k in header if k != "__metadata__"] == ["0"] and header["0"]["shape"] == [7]
    left, right = tm.load(io.BytesIO(data))
    left[3] = -1.0
    assert right.tolist() == [3.0, -1.0, 5.0, 6.0, 7.0]
    assert (left.storage_offset(), right.storage_offset()) == (0, 2)


def test_views_of_another_dtype_share_memory():
    x = tm.arange(4.)
    back = _round_trip({"x": x, "bits": x.view(tm.int32)})
    back["x"][1] = 100.0
    assert back["bits"][1].item() == np.float32(100.0).view(np.int32)


def test_tensors_not_sharing_memory_come_back_independent():
    back = _round_trip({"a": tm.zeros(3), "b": tm.zeros(3)})
    back["a"][0] = 1.0
    assert back["b"].tolist() == [0.0, 0.0, 0.0]
    again = _round_trip(back)  # tensors loaded from one file are still separate storages
    assert len([k for k in _header(_bytes_of(back)) if k != "__metadata__"]) == 2
    _same(again["a"], back["a"])


# -- files ---------------------------------------------------------------------------------------------------

def test_paths_file_objects_and_mmap(tmp_path):
    obj = {"w": tm.arange(6.).reshape(2, 3), "n": 1}
    for target in (str(tmp_path / "a.st"), tmp_path / "b.st"):
        tm.save(obj, target)
        for kwargs in ({}, {"mmap": True}, {"map_location": "cpu"}, {"map_location": tm.device("cpu")},
                       {"map_location": {"cpu": "cpu"}}, {"weights_only": False}):
            back = tm.load(target, **kwargs)
            _same(back["w"], obj["w"])
            assert back["n"] == 1
    mapped = tm.load(tmp_path / "b.st", mmap=True)
    mapped["w"][0, 0] = 42.0  # copy-on-write: the file is untouched
    assert tm.load(tmp_path / "b.st")["w"][0, 0].item() == 0.0
    mapped["w"][1, 1] = 7.0
    tm.save(mapped, tmp_path / "b.st")  # over the file it is mapped from
    assert tm.load(tmp_path / "b.st")["w"].tolist() == [[42.0, 1.0, 2.0], [3.0, 7.0, 5.0]]
    assert mapped["w"].tolist() == [[42.0, 1.0, 2.0], [3.0, 7.0, 5.0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.st", "b.st"]  # no temporary file left
    with open(tmp_path / "c.st", "wb") as f:
        f.write(b"prefix")
        tm.save(obj, f)
    with open(tmp_path / "c.st", "rb") as f:
        assert f.read(6) == b"prefix"
        _same(tm.load(f)["w"], obj["w"])


@pytest.mark.torch
def test_mmap_of_a_file_object_is_refused_like_torch():
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(torch.ones(1), buffer)
    with pytest.raises(ValueError) as theirs:
        torch.load(io.BytesIO(buffer.getvalue()), mmap=True)
    with pytest.raises(ValueError) as ours:
        tm.load(io.BytesIO(_bytes_of(tm.ones(1))), mmap=True)
    assert str(ours.value) == str(theirs.value) == "f must be a file path in order to use the mmap argument"


def test_a_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    tm.save({"a": 1}, tmp_path / "f.safetensors")
    with pytest.raises(TypeError):
        tm.save({"a": 2, "b": object()}, tmp_path / "f.safetensors")

    def full_disk(file, entries, document, blocks):
        file.write(b"{}")
        raise OSError("No space left on device")

    monkeypatch.setattr(serialization, "_write", full_disk)
    with pytest.raises(OSError, match="No space left"):
        tm.save({"a": 3}, tmp_path / "f.safetensors")
    assert tm.load(tmp_path / "f.safetensors") == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["f.safetensors"]


def test_bad_arguments():
    data = _bytes_of(tm.ones(1))
    with pytest.raises(RuntimeError, match="cannot load tensors onto device meta"):
        tm.load(io.BytesIO(data), map_location="meta")
    with pytest.raises(TypeError, match="map_location as a function is not supported"):
        tm.load(io.BytesIO(data), map_location=lambda storage, location: storage)
    with pytest.raises(ValueError, match="never unpickles"):
        tm.load(io.BytesIO(data), pickle_module=object())
    with pytest.raises(ValueError, match="never pickles"):
        tm.save(tm.ones(1), io.BytesIO(), pickle_module=object())
    with pytest.raises(TypeError, match="f must be a path or a binary file object, not int"):
        tm.save(tm.ones(1), 3)
    with pytest.raises(TypeError, match="f must be a path or a binary file object, not int"):
        tm.load(3)


# -- unsupported values --------------------------------------------------------------------------------------

def _nothing():
    pass


@pytest.mark.parametrize(("obj", "message"), [
    ({"opt": {"param_groups": [{"lr": 0.1, "fn": _nothing}]}},
     "tm.save cannot store a value of type function at obj['opt']['param_groups'][0]['fn']: it stores tensors, "
     "dicts, OrderedDicts, lists, tuples, str, int, float, complex, bool, None, tensormodes.dtype and "
     "tensormodes.device"),
    ([1, {2, 3}], "tm.save cannot store a value of type set at obj[1]:"),
    ((np.float32(1.0),), "tm.save cannot store a value of type float32 at obj[0]:"),
    ({"b": b"raw"}, "tm.save cannot store a value of type bytes at obj['b']:"),
    ({"s": collections.namedtuple("P", "x")(1)}, "tm.save cannot store a value of type P at obj['s']:"),
    ({"d": collections.defaultdict(int)}, "tm.save cannot store a value of type defaultdict at obj['d']:"),
    ({frozenset(): 1}, "tm.save cannot store a dict key of type frozenset in obj: keys may be str, int, float, "
                       "complex, bool, None, dtypes, devices and tuples of them"),
    ({"k": {(1, tm.ones(1)): 0}}, "tm.save cannot store a dict key of type Tensor in obj['k']:"),
    ({"t": tm.ones(1).as_subclass(type("MyTensor", (tm.Tensor,), {}))},
     "tm.save cannot store a tensor of subclass MyTensor at obj['t']: convert it with "
     ".as_subclass(tensormodes.Tensor) first"),
])
def test_unsupported_values_raise_type_error_naming_the_path(obj, message):
    with pytest.raises(TypeError) as info:
        _bytes_of(obj)
    assert str(info.value).startswith(message)


def test_an_object_containing_itself_is_refused():
    loop: list = [1]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match=r"^tm.save cannot store an object that contains itself "
                                         r"\(at obj\[1\]\['again'\]\)$"):
        _bytes_of(loop)
    shared = [1]
    assert _round_trip([shared, shared]) == [[1], [1]]  # shared, not recursive: stored twice


# -- corruption ----------------------------------------------------------------------------------------------

def _small_file() -> bytes:
    return _bytes_of({"w": tm.arange(6.).reshape(2, 3), "step": 3, "lr": 0.5})


def _load_bytes(data: bytes):
    return tm.load(io.BytesIO(data))


def _data_start(data: bytes) -> int:
    return 8 + int.from_bytes(data[:8], "little")


def _flip(data: bytes, position: int, mask: int = 0x01) -> bytes:
    return data[:position] + bytes([data[position] ^ mask]) + data[position + 1:]


def test_flipped_byte_in_data_names_the_tensor():
    data = _small_file()
    with pytest.raises(FormatError, match=r"^checksum mismatch in tensor 'w': its 24 bytes are corrupted$"):
        _load_bytes(_flip(data, _data_start(data) + 5))


def test_flipped_byte_in_a_header_field_names_the_tensor():
    data = _small_file()
    position = data.index(b'"shape":[2,3]') + len(b'"shape":[')
    with pytest.raises(FormatError, match=r"^tensor 'w': data_offsets \[0, 24\] hold 24 bytes but dtype F32 and "
                                          r"shape \[3, 3\] need 36$"):
        _load_bytes(data[:position] + b"3" + data[position + 1:])
    position = data.index(b'"data_offsets":[0,24]') + len(b'"data_offsets":[0,')
    with pytest.raises(FormatError, match=r"^tensor 'w': data_offsets \[0, 44\] hold 44 bytes but dtype F32"):
        _load_bytes(data[:position] + b"4" + data[position + 1:])
    position = data.index(b'"F32"') + 1
    with pytest.raises(FormatError, match=r"^tensor 'w' has dtype 'G32', which tensormodes does not support"):
        _load_bytes(data[:position] + b"G" + data[position + 1:])


def test_flipped_byte_in_the_metadata_fails_the_header_checksum():
    data = _small_file()
    position = data.index(b'\\"lr\\":0.5') + len(b'\\"lr\\":0.')
    with pytest.raises(FormatError, match=r"^header checksum mismatch \(header field "
                                          r"'__metadata__.tensormodes.crc32' is \d+, the header's CRC-32 is \d+\): "
                                          r"the header was modified or corrupted$"):
        _load_bytes(data[:position] + b"7" + data[position + 1:])


def _respelled(data: bytes, change=lambda header: None) -> bytes:
    """The file with its header rewritten by another JSON writer (spaces after separators)."""
    header = _header(data)
    change(header)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data[_data_start(data):]


def test_a_header_respelled_by_another_writer_still_passes_its_checksum():
    # The checksum is checked on the file's own bytes first; a header whose bytes changed but
    # whose JSON did not (here: spaces after separators) is checked on its compact encoding.
    respelled = _respelled(_small_file())
    assert b'"shape": [2, 3]' in respelled
    assert _load_bytes(respelled)["step"] == 3

    def change_lr(header):
        metadata = header["__metadata__"]
        metadata["tensormodes"] = metadata["tensormodes"].replace('"lr":0.5', '"lr":0.7')

    with pytest.raises(FormatError, match=r"^header checksum mismatch"):
        _load_bytes(_respelled(_small_file(), change_lr))


def test_truncated_files():
    data = _small_file()
    with pytest.raises(FormatError, match=r"^tensor 'w': data_offsets \[0, 24\] run past the end of the data "
                                          r"\(23 bytes\): the file is truncated$"):
        _load_bytes(data[:-1])
    with pytest.raises(FormatError, match=r"^header length field says \d+ bytes but the file holds 92 after it: "
                                          r"wrong header length or truncated file$"):
        _load_bytes(data[:100])
    with pytest.raises(FormatError, match=r"^not a safetensors file: 5 bytes, too short for the 8-byte header "
                                          r"length$"):
        _load_bytes(data[:5])
    with pytest.raises(FormatError, match=r"^the tensors cover 24 bytes of data but the file holds 25: wrong "
                                          r"header or trailing bytes$"):
        _load_bytes(data + b"\x00")


def test_wrong_header_length():
    data = _small_file()
    n = int.from_bytes(data[:8], "little")
    with pytest.raises(FormatError, match=r"^header is not valid JSON \(.*\): corrupted header or wrong header "
                                          r"length$"):
        _load_bytes((n - 8).to_bytes(8, "little") + data[8:])
    with pytest.raises(FormatError, match=r"^header is not valid JSON \('utf-8' codec can't decode byte 0x80"):
        _load_bytes((n + 8).to_bytes(8, "little") + data[8:])
    with pytest.raises(FormatError, match=r"^header length field says 72057594037927936 bytes but the file holds"):
        _load_bytes((2 ** 56).to_bytes(8, "little") + data[8:])


def _sum64_of(raw: bytes) -> int:
    """The sum modulo 2**64 of ``raw``'s little-endian 64-bit words, the last one zero-padded."""
    return sum(int.from_bytes(raw[i:i + 8], "little") for i in range(0, len(raw), 8)) % 2 ** 64


def test_large_storages_have_one_checksum_per_mib():
    big = {"a": tm.arange(300_000, dtype=tm.float64), "b": tm.ones(5)}
    data = _bytes_of(big)
    document = json.loads(_header(data)["__metadata__"]["tensormodes"])
    assert [len(document["storages"][k]["sum64"]) for k in ("a", "b")] == [3, 1]
    assert document["storages"]["a"]["sum64"][2] == _sum64_of(big["a"]._data[2 * 2 ** 17:].tobytes())
    assert document["storages"]["b"]["sum64"] == [_sum64_of(big["b"]._data.tobytes())]  # 20 bytes: a padded word
    _same(_load_bytes(data)["a"], big["a"])
    with pytest.raises(FormatError, match=r"^checksum mismatch in tensor 'a': its 2400000 bytes are corrupted$"):
        _load_bytes(_flip(data, _data_start(data) + 2 ** 20 + 7))
    with pytest.raises(FormatError, match=r"^checksum mismatch in tensor 'b': its 20 bytes are corrupted$"):
        _load_bytes(_flip(data, len(data) - 3))


def test_corrupted_words_are_detected_wherever_they_are():
    # Any change within one 8-byte word changes its MiB's sum; several words changed at once too,
    # unless their changes cancel modulo 2**64.
    data = _bytes_of({"a": tm.arange(300_000, dtype=tm.float64)})
    start = _data_start(data)
    for position, mask in ((start, 0x80), (start + 2 ** 20 - 1, 0xFF), (len(data) - 1, 0x01)):
        with pytest.raises(FormatError, match="checksum mismatch in tensor 'a'"):
            _load_bytes(_flip(data, position, mask))
    swapped = bytearray(data)
    swapped[start:start + 8], swapped[start + 8:start + 16] = data[start + 8:start + 16], data[start:start + 8]
    # a known blind spot: words swapped within one MiB keep its sum
    assert _load_bytes(bytes(swapped))["a"][:3].tolist() == [1.0, 0.0, 2.0]
    zeroed = data[:start + 4096] + bytes(4096) + data[start + 8192:]
    with pytest.raises(FormatError, match="checksum mismatch in tensor 'a'"):
        _load_bytes(zeroed)


def test_files_with_crc32_checksums_still_load():
    # Files written before the sum64 checksum carry the CRC-32 of each MiB.
    data = _small_file()
    header = _header(data)
    document = json.loads(header["__metadata__"]["tensormodes"])
    raw = data[_data_start(data):]
    for info in document["storages"].values():
        del info["sum64"]
        info["crc32"] = [zlib.crc32(raw)]
    rewritten = _rewrite_document(data, lambda d: d.update(storages=document["storages"]))
    assert _load_bytes(rewritten)["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(FormatError, match=r"^checksum mismatch in tensor 'w': its 24 bytes are corrupted$"):
        _load_bytes(_flip(rewritten, _data_start(rewritten) + 5))


def test_every_single_byte_corruption_is_detected():
    data = _small_file()
    for position in range(len(data)):
        for mask in (0x01, 0x80):
            with pytest.raises(FormatError):
                _load_bytes(_flip(data, position, mask))


def _rewrite_document(data: bytes, change) -> bytes:
    """The file with its metadata document changed and its header checksum recomputed (a crafted file)."""
    header = _header(data)
    document = json.loads(header["__metadata__"]["tensormodes"])
    change(document)
    header["__metadata__"]["tensormodes"] = json.dumps(document, separators=(",", ":"))
    del header["__metadata__"]["tensormodes.crc32"]
    header["__metadata__"]["tensormodes.crc32"] = str(zlib.crc32(json.dumps(header, separators=(",", ":")).encode()))
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data[_data_start(data):]


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(version=2), r"header field '__metadata__.tensormodes.version' is 2; this tensormodes reads "
                                    r"format version 1"),
    (lambda d: d["tensors"][0].update(offset=4), r"header field '__metadata__.tensormodes.tensors\[0\]' describes "
                                                 r"a tensor that does not fit in tensor 'w'"),
    (lambda d: d["tensors"][0].update(shape=[-1]), r"^header field '__metadata__.tensormodes.tensors\[0\].shape' "
                                                   r"must be a list of at most 64 sizes from 0 to 2\*\*63 - 1, not "
                                                   r"\[-1\]$"),
    (lambda d: d["tensors"][0].update(dtype="object"), r"header field '__metadata__.tensormodes.tensors\[0\]' is "
                                                       r"invalid"),
    (lambda d: d.update(object={"eval": "print(1)"}), r"header field '__metadata__.tensormodes.object' holds an "
                                                      r"invalid value at obj: {'eval': 'print\(1\)'}"),
    (lambda d: d.update(object={"dict": {"a": {"tensor": 5}}}), r"holds an invalid value at obj\['a'\]"),
    (lambda d: d.update(object={"dict": [[[1], 2]]}), r"holds an invalid value at obj"),
    (lambda d: d["tensors"][0].update(requires_grad=1), r"header field '__metadata__.tensormodes.tensors\[0\]' is "
                                                       r"invalid"),
    (lambda d: d.update(object={"OrderedDict": {}, "attributes": {"__class__": 1}}),
     r"holds an invalid value at obj: {'OrderedDict': {}, 'attributes': {'__class__': 1}}"),
    (lambda d: d["storages"].clear(), r"header field '__metadata__.tensormodes.storages' does not list the file's "
                                      r"tensors"),
])
def test_crafted_metadata_is_rejected_clearly(change, message):
    with pytest.raises(FormatError, match=message):
        _load_bytes(_rewrite_document(_small_file(), change))


# -- other safetensors tools --------------------------------------------------------------------------------

def test_safetensors_numpy_reads_our_files(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    x = tm.arange(12.).reshape(3, 4)
    obj = {f"t_{d!r}".replace("tensormodes.", ""): _sample(d) for d in ALL_DTYPES if d is not tm.bfloat16}
    obj.update({"view": x.t(), "x": x, "lr": 0.1})
    tm.save(obj, tmp_path / "f.safetensors")
    arrays = safetensors_numpy.load_file(tmp_path / "f.safetensors")
    assert set(arrays) == {k for k in obj if k not in ("lr", "x")}  # x is stored with its view, under its name
    for name, t in obj.items():
        if name in arrays and name != "view" and name != "t_complex128":
            assert arrays[name].dtype == t._data.dtype and arrays[name].tolist() == t.tolist(), name
    assert arrays["view"].tolist() == x.tolist()  # the storage, under the name of its first tensor
    assert arrays["t_complex128"].tolist() == np.stack([obj["t_complex128"]._data.real,
                                                        obj["t_complex128"]._data.imag], -1).tolist()


@pytest.mark.torch
def test_files_written_by_safetensors_torch_load_as_flat_dicts(tmp_path):
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    tensors = {"weight": torch.randn(3, 4), "half": torch.ones(2, dtype=torch.float16),
               "bf16": torch.tensor([1.5, -2.25], dtype=torch.bfloat16), "mask": torch.tensor([True, False]),
               "z": torch.tensor([1 + 2j], dtype=torch.complex64), "idx": torch.arange(5), "empty": torch.ones(0, 2),
               "scalar": torch.tensor(7, dtype=torch.int16)}
    safetensors_torch.save_file(tensors, tmp_path / "t.safetensors", metadata={"format": "pt"})
    back = tm.load(tmp_path / "t.safetensors")
    assert type(back) is dict and set(back) == set(tensors)
    for name, t in tensors.items():
        assert str(back[name].dtype).replace("tensormodes.", "") == str(t.dtype).replace("torch.", ""), name
        assert back[name].shape == tuple(t.shape) and back[name].tolist() == t.tolist(), name


@pytest.mark.torch
def test_safetensors_torch_reads_our_files(tmp_path):
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    obj = {"bf16": tm.tensor([1.5, -2.25], dtype=tm.bfloat16), "w": tm.randn(2, 3), "c": tm.tensor([1j])}
    tm.save(obj, tmp_path / "o.safetensors")
    back = safetensors_torch.load_file(tmp_path / "o.safetensors")
    assert back["bf16"].dtype == torch.bfloat16 and back["bf16"].tolist() == [1.5, -2.25]
    assert back["w"].tolist() == obj["w"].tolist() and back["c"].tolist() == [1j]


def test_unsupported_dtype_in_a_foreign_file():
    header = json.dumps({"u": {"dtype": "U16", "shape": [1], "data_offsets": [0, 2]}}).encode()
    header += b" " * (-len(header) % 8)
    data = len(header).to_bytes(8, "little") + header + b"\x01\x00"
    with pytest.raises(FormatError, match=r"^tensor 'u' has dtype 'U16', which tensormodes does not support "
                                          r"\(supported: BOOL, U8, I8, I16, I32, I64, F16, BF16, F32, F64, C64\)$"):
        _load_bytes(data)


def test_version_and_namespace():
    assert tm.__version__ == "0.1.0"
    text = (pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert f'version = "{tm.__version__}"' in text
    assert {"save", "load", "utils"} <= set(tm.__all__) and "__version__" not in tm.__all__  # as torch
    assert tm.save in tm.overrides.get_ignored_functions() and tm.load in tm.overrides.get_ignored_functions()
