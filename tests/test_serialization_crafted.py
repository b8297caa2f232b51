"""tm.save / tm.load against crafted files (each written to disk for real) and awkward targets:
duplicate keys, huge shapes and integers, deep nesting, out-of-range offsets, symlinks, file
modes, hard links, interrupted saves and meta tensors."""

from __future__ import annotations

import collections
import io
import json
import os
import stat
import subprocess
import sys
import zlib

import pytest

import tensormodes as tm
from tensormodes import serialization
from tensormodes.serialization import FormatError

SMALL = {"w": tm.arange(6.).reshape(2, 3), "step": 3, "lr": 0.5}


class SafetensorsBuffer(io.BytesIO):
    """An in-memory file named like a ``.safetensors`` file, so tm.save writes safetensors to it
    (any other name gets PyTorch's zip format, tested in test_serialization_pt.py)."""

    name = "buffer.safetensors"


def _padded(text: str) -> bytes:
    raw = text.encode()
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw


def _parts() -> tuple[str, str, bytes]:
    """The document text of a saved file (of ``SMALL``), its tensor entries as compact JSON, and its data."""
    buffer = SafetensorsBuffer()
    tm.save(SMALL, buffer)
    data = buffer.getvalue()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    document = header.pop("__metadata__")["tensormodes"]
    return document, json.dumps(header, separators=(",", ":")), data[8 + n:]


def _with_document(document: str, entries: str, data: bytes) -> bytes:
    """A file holding ``document`` as its metadata document, with a valid header checksum,
    written the way tm.save writes it (so any JSON text can be planted in the document)."""
    head = '{"__metadata__":{"tensormodes":' + json.dumps(document)
    tail = "}," + entries[1:]
    checksum = zlib.crc32(f"{head}{tail}".encode())
    return _padded(f'{head},"tensormodes.crc32":"{checksum}"{tail}') + data


def _load(tmp_path, content: bytes):
    path = tmp_path / "crafted.safetensors"
    path.write_bytes(content)
    return tm.load(path)


def _foreign(entries: str, data: bytes = b"\x01") -> bytes:
    """A file as another safetensors writer would make it: a header of entries, then data."""
    return _padded(entries) + data


# -- 1. duplicate keys -------------------------------------------------------------------------------------

def test_a_second_metadata_key_is_refused(tmp_path):
    # A header with a second "__metadata__" used to load as a flat dict of tensors, no checksum checked.
    document, entries, data = _parts()
    good = _with_document(document, entries, data)
    n = int.from_bytes(good[:8], "little")
    text = good[8:8 + n].decode().rstrip(" ")
    crafted = _padded(text[:-1] + ',"__metadata__":{"format":"pt"}}') + data
    with pytest.raises(FormatError, match=r"^header holds the key '__metadata__' twice in one object: duplicate "
                                          r"keys are not allowed \(safetensors refuses them too\)$"):
        _load(tmp_path, crafted)
    assert _load(tmp_path, good)["step"] == 3
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    with pytest.raises(Exception, match="duplicate field `__metadata__`"):  # safetensors agrees
        safetensors_numpy.load(crafted)


@pytest.mark.parametrize(("entries", "key"), [
    ('{"a":{"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]}}', "dtype"),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
     "a"),
    ('{"__metadata__":{"x":"1","x":"2"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', "x"),
])
def test_duplicate_keys_anywhere_in_the_header_are_refused(tmp_path, entries, key):
    with pytest.raises(FormatError, match=rf"^header holds the key '{key}' twice in one object"):
        _load(tmp_path, _foreign(entries))


def test_duplicate_keys_inside_the_document_are_refused(tmp_path):
    document, entries, data = _parts()
    assert '"offset":0,' in document
    crafted = document.replace('"offset":0,', '"offset":0,"offset":8,', 1)
    with pytest.raises(FormatError, match=r"^header field '__metadata__.tensormodes' holds the key 'offset' twice "
                                          r"in one object"):
        _load(tmp_path, _with_document(crafted, entries, data))
    tagged = document.replace('{"tensor":0}', '{"tensor":0,"tensor":0}')
    with pytest.raises(FormatError, match=r"holds the key 'tensor' twice"):
        _load(tmp_path, _with_document(tagged, entries, data))


def test_nan_and_infinity_are_not_json(tmp_path):
    with pytest.raises(FormatError, match=r"^header holds NaN, which is not JSON$"):
        _load(tmp_path, _foreign('{"a":{"dtype":"U8","shape":[NaN],"data_offsets":[0,1]}}'))
    document, entries, data = _parts()
    with pytest.raises(FormatError, match=r"^header field '__metadata__.tensormodes' holds -Infinity, which is not "
                                          r"JSON$"):
        _load(tmp_path, _with_document(document.replace('"lr":0.5', '"lr":-Infinity'), entries, data))


# -- 2. huge shapes ----------------------------------------------------------------------------------------

def test_a_shape_of_100000_dimensions_fails_at_once(tmp_path):
    # It used to spend ~30 s multiplying the sizes, then fail on converting the product to text.
    shape = ",".join(["9" * 19] * 100_000)  # a 2 MB header
    with pytest.raises(FormatError, match=r"^tensor 'a' has an invalid shape \[9999999999999999999, "
                                          r"9999999999999999999, .*\]: a shape is a list of at most 64 sizes from "
                                          r"0 to 2\*\*63 - 1$"):
        _load(tmp_path, _foreign(f'{{"a":{{"dtype":"U8","shape":[{shape}],"data_offsets":[0,1]}}}}'))


def test_a_shape_of_huge_integers_fails_without_converting_them(tmp_path):
    shape = ",".join(["7" * 1000] * 4000)  # 4 MB of sizes, each of 1000 digits
    with pytest.raises(FormatError, match=r"^tensor 'a' has an invalid shape \[<integer of 1000 digits>, "):
        _load(tmp_path, _foreign(f'{{"a":{{"dtype":"U8","shape":[{shape}],"data_offsets":[0,1]}}}}'))


@pytest.mark.parametrize("shape", [[1] * 65, [2 ** 63], [-1], [True], [1.0], "1"])
def test_invalid_shapes(tmp_path, shape):
    entries = json.dumps({"a": {"dtype": "U8", "shape": shape, "data_offsets": [0, 1]}})
    with pytest.raises(FormatError, match=r"^tensor 'a' has an invalid shape .*: a shape is a list of at most 64 "):
        _load(tmp_path, _foreign(entries))


def test_64_dimensions_load_and_oversized_empty_shapes_are_refused(tmp_path):
    entries = json.dumps({"a": {"dtype": "U8", "shape": [1] * 64, "data_offsets": [0, 1]}})
    assert _load(tmp_path, _foreign(entries))["a"].shape == (1,) * 64
    entries = json.dumps({"a": {"dtype": "F32", "shape": [0, 2 ** 62, 2 ** 62], "data_offsets": [0, 0]}})
    with pytest.raises(FormatError, match=r"^tensor 'a' has shape \[0, 4611686018427387904, 4611686018427387904\]: "
                                          r"even empty, an array's other sizes times its element size must stay "
                                          r"under 2\*\*63 bytes$"):
        _load(tmp_path, _foreign(entries, b""))
    entries = json.dumps({"a": {"dtype": "U8", "shape": [0, 2 ** 62], "data_offsets": [0, 0]}})
    assert _load(tmp_path, _foreign(entries, b""))["a"].shape == (0, 2 ** 62)


def test_a_header_over_the_size_limit_is_refused_by_its_length(monkeypatch):
    monkeypatch.setattr(serialization, "_MAX_HEADER", 16)  # standing in for safetensors' 100 MB
    data = (24).to_bytes(8, "little") + b"{" + b" " * 23
    with pytest.raises(FormatError, match=r"^header length field says 24 bytes, more than the 16 that safetensors "
                                          r"headers may take$"):
        tm.load(io.BytesIO(data))


# -- 3. deep nesting ---------------------------------------------------------------------------------------

def _nested_list(depth: int, leaf=0):
    obj = leaf
    for _ in range(depth):
        obj = [obj]
    return obj


def test_save_refuses_objects_nested_deeper_than_100(tmp_path):
    path = tmp_path / "deep.safetensors"
    with pytest.raises(ValueError, match=r"^tm.save cannot store objects nested more than 100 levels deep: "
                                         r"obj(\[0\]){100} is a container inside 100 others$"):
        tm.save(_nested_list(101), path)
    assert not path.exists()
    deep_key: object = 1
    for _ in range(100):
        deep_key = (deep_key,)
    with pytest.raises(ValueError, match=r"nested more than 100 levels deep: obj \(a key\) is a container inside "
                                         r"100 others$"):
        tm.save({deep_key: 1}, path)


def test_whatever_save_writes_at_the_depth_limit_loads(tmp_path):
    # The deepest encoding: dicts with integer keys ({"dict": [[key, value]]}), an OrderedDict's
    # attributes, a complex NaN and a tuple key at the bottom.
    leaf = {(1, 2): complex(float("nan"), float("inf"))}
    obj = leaf
    for level in range(97):
        obj = {level: obj}
    top = collections.OrderedDict(a=1)
    top.extra = obj
    path = tmp_path / "deep.safetensors"
    tm.save(top, path)
    back = tm.load(path)
    node = back.extra
    for level in reversed(range(97)):
        node = node[level]
    value = node[(1, 2)]
    assert type(value) is complex and value.imag == float("inf")
    tm.save(_nested_list(100), path)
    assert tm.load(path) == _nested_list(100)


def test_a_crafted_object_nested_too_deep_is_refused(tmp_path):
    document, entries, data = _parts()
    deep = json.dumps(_nested_list(101), separators=(",", ":"))
    crafted = document.replace('"lr":0.5', '"lr":' + deep)
    with pytest.raises(FormatError, match=r"^header field '__metadata__.tensormodes.object' nests containers more "
                                          r"than 100 levels deep \(at obj\['lr'\](\[0\]){99}\); tm.save writes at "
                                          r"most 100$"):
        _load(tmp_path, _with_document(crafted, entries, data))


@pytest.mark.parametrize("where", ["header", "document"])
def test_deep_json_is_a_format_error(tmp_path, where):
    deep = "[" * 50_000 + "]" * 50_000
    if where == "header":
        content = _foreign('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":' + deep + "}")
        message = r"^header nests arrays and objects more than 316 levels deep: corrupted header"
    else:
        document, entries, data = _parts()
        content = _with_document(document.replace('"lr":0.5', '"lr":' + deep), entries, data)
        message = r"^header field '__metadata__.tensormodes' nests arrays and objects more than 316 levels deep$"
    with pytest.raises(FormatError, match=message):
        _load(tmp_path, content)


def test_deep_json_is_measured_before_parsing_under_a_raised_recursion_limit(tmp_path):
    # json's parser recurses in C; with the recursion limit raised a deep enough file would
    # overflow the stack, so the depth is measured first (here: 20,000 levels, which parse).
    deep = "[" * 20_000 + "]" * 20_000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000_000)
    try:
        with pytest.raises(FormatError, match=r"^header nests arrays and objects more than 316 levels deep"):
            _load(tmp_path, _foreign('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":' + deep + "}"))
        # Brackets and escaped quotes inside strings do not count.
        obj = {"s": '[{\\"[' * 2000, "t": "\\" * 3 + '"' + "[" * 2000}
        tm.save(obj, tmp_path / "strings.safetensors")
        assert tm.load(tmp_path / "strings.safetensors") == obj
    finally:
        sys.setrecursionlimit(limit)


def test_the_depth_measure_is_exact_outside_strings():
    too_deep = serialization._too_deep
    assert not too_deep("[" * 5 + "]" * 5, 5) and too_deep("[" * 6 + "]" * 6, 5)
    assert not too_deep('["[[[[[[", {"a": "\\"[[[[[[[\\\\"}]', 2)
    assert too_deep('["\\\\", [[[]]]]', 3)  # an escaped backslash does not escape the closing quote
    assert too_deep("{" * 4 + "[" * 4, 7)


# -- 4. out-of-range integers ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "shown"), [
    (str(2 ** 63), "9223372036854775808"),
    ("-1", "-1"),
    ("1" + "0" * 5000, "<integer of 5001 digits>"),  # more digits than Python converts by default
    ('"0"', "'0'"),
], ids=["2**63", "negative", "5001 digits", "string"])
def test_offsets_out_of_range_name_the_field(tmp_path, text, shown):
    document, entries, data = _parts()
    crafted = document.replace('"offset":0', f'"offset":{text}', 1)
    with pytest.raises(FormatError, match=rf"^header field '__metadata__.tensormodes.tensors\[0\].offset' must be "
                                          rf"an integer from 0 to 2\*\*63 - 1, not {shown}$"):
        _load(tmp_path, _with_document(crafted, entries, data))


def test_strides_and_shapes_out_of_range_name_the_field(tmp_path):
    document, entries, data = _parts()
    crafted = document.replace('"stride":[3,1]', f'"stride":[{2 ** 63},1]', 1)
    with pytest.raises(FormatError, match=r"^header field '__metadata__.tensormodes.tensors\[0\].stride' must be a "
                                          r"list of 2 integers from -\(2\*\*63 - 1\) to 2\*\*63 - 1, not "
                                          r"\[9223372036854775808, 1\]$"):
        _load(tmp_path, _with_document(crafted, entries, data))
    crafted = document.replace('"shape":[2,3]', '"shape":[' + "1," * 70 + "6]", 1)
    with pytest.raises(FormatError, match=r"^header field '__metadata__.tensormodes.tensors\[0\].shape' must be a "
                                          r"list of at most 64 sizes"):
        _load(tmp_path, _with_document(crafted, entries, data))
    crafted = document.replace('"shape":[2,3]', '"shape":[true,6]', 1).replace('"stride":[3,1]', '"stride":[6,1]')
    with pytest.raises(FormatError, match=r"tensors\[0\].shape' must be a list of at most 64 sizes from 0 to "
                                          r"2\*\*63 - 1, not \[True, 6\]$"):
        _load(tmp_path, _with_document(crafted, entries, data))


def test_huge_data_offsets_name_the_field(tmp_path):
    big = "9" * 5000
    with pytest.raises(FormatError, match=r"^tensor 'a' has invalid data_offsets \[0, <integer of 5000 digits>\]: "):
        _load(tmp_path, _foreign(f'{{"a":{{"dtype":"U8","shape":[1],"data_offsets":[0,{big}]}}}}'))
    entries = json.dumps({"a": {"dtype": "U8", "shape": [1], "data_offsets": [2 ** 64, 2 ** 64 + 1]}})
    with pytest.raises(FormatError, match=r"^tensor 'a': data_offsets \[18446744073709551616, 18446744073709551617\] "
                                          r"run past the end of the data \(1 bytes\): the file is truncated$"):
        _load(tmp_path, _foreign(entries))


def test_huge_integers_in_the_object(tmp_path):
    path = tmp_path / "ints.safetensors"
    big = 10 ** 4300 - 1  # 4300 digits: what Python converts by default
    tm.save({"big": big, "neg": -big}, path)
    assert tm.load(path) == {"big": big, "neg": -big}
    with pytest.raises(ValueError, match=r"^tm.save cannot store the integer at obj\['big'\]: it has more than 4300 "
                                         r"digits"):
        tm.save({"big": big + 1}, path)
    document, entries, data = _parts()
    crafted = document.replace('"step":3', '"step":' + "3" * 5000)
    with pytest.raises(FormatError, match=r"^header field '__metadata__.tensormodes.object' holds an invalid value "
                                          r"at obj\['step'\]: <integer of 5000 digits>$"):
        _load(tmp_path, _with_document(crafted, entries, data))


# -- 5. saving over existing files -------------------------------------------------------------------------

def test_a_symlink_is_written_through(tmp_path):
    target = tmp_path / "real.safetensors"
    tm.save({"v": 1}, target)
    link = tmp_path / "link.safetensors"
    link.symlink_to("real.safetensors")  # relative, as users make them
    tm.save({"v": 2}, link)
    assert link.is_symlink() and os.readlink(link) == "real.safetensors"
    assert tm.load(target) == {"v": 2}
    dangling = tmp_path / "dangling.safetensors"
    dangling.symlink_to(tmp_path / "new.safetensors")
    tm.save({"v": 3}, dangling)
    assert dangling.is_symlink() and tm.load(tmp_path / "new.safetensors") == {"v": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.safetensors", "link.safetensors",
                                                          "new.safetensors", "real.safetensors"]



@pytest.mark.skipif(not hasattr(os, "writev"), reason="gathered writes need os.writev")
@pytest.mark.parametrize("suffix", [".pt", ".safetensors"])
def test_a_save_to_a_path_is_one_gathered_write_and_short_writes_go_on(tmp_path, monkeypatch, suffix):
    state = {f"layer{i}": tm.arange(1000.) + i for i in range(5)}
    real_writev, calls = os.writev, []

    def counted(descriptor, pieces):
        calls.append(len(pieces))
        return real_writev(descriptor, pieces)

    monkeypatch.setattr(os, "writev", counted)
    tm.save(state, tmp_path / f"whole{suffix}")
    assert len(calls) == 1 and calls[0] >= (15 if suffix == ".pt" else 7)  # every header, storage and descriptor

    def short(descriptor, pieces):  # at most 999 bytes a call, as a signal or a nearly full disk may leave it
        calls.append(len(pieces))
        return real_writev(descriptor, [memoryview(pieces[0]).cast("B")[:999]])

    calls.clear()
    monkeypatch.setattr(os, "writev", short)
    tm.save(state, tmp_path / f"short{suffix}")
    assert len(calls) > 20
    assert (tmp_path / f"short{suffix}").stat().st_size == (tmp_path / f"whole{suffix}").stat().st_size
    back = tm.load(tmp_path / f"short{suffix}")
    assert all(back[k].tolist() == v.tolist() for k, v in state.items())


def test_symlinked_folders_and_chains_of_links(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to("real")  # a linked folder: the file is written in the real one
    tm.save({"v": 1}, tmp_path / "alias" / "m.pt")
    tm.save({"v": 2}, tmp_path / "alias" / "m.pt")
    assert tm.load(real / "m.pt") == {"v": 2} and sorted(p.name for p in real.iterdir()) == ["m.pt"]
    (tmp_path / "second").symlink_to(real / "m.pt")
    (tmp_path / "first").symlink_to("second")  # a link to a link: the final file is replaced
    os.chmod(real / "m.pt", 0o640)
    tm.save({"v": 3}, tmp_path / "first")
    assert (tmp_path / "first").is_symlink() and (tmp_path / "second").is_symlink()
    assert tm.load(real / "m.pt") == {"v": 3} and stat.S_IMODE(os.stat(real / "m.pt").st_mode) == 0o640
    assert sorted(p.name for p in real.iterdir()) == ["m.pt"]

def test_the_file_mode_is_kept_and_new_files_follow_the_umask(tmp_path):
    private = tmp_path / "private.safetensors"
    tm.save({"v": 1}, private)
    os.chmod(private, 0o600)
    tm.save({"v": 2}, private)
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600 and tm.load(private) == {"v": 2}
    shared = tmp_path / "shared.safetensors"
    tm.save({"v": 1}, shared)
    os.chmod(shared, 0o664)
    previous = os.umask(0o077)  # the umask narrows new files only
    try:
        tm.save({"v": 2}, shared)
        tm.save({"v": 1}, tmp_path / "new.safetensors")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o664
    assert stat.S_IMODE(os.stat(tmp_path / "new.safetensors").st_mode) == 0o600
    previous = os.umask(0o022)
    try:
        tm.save({"v": 1}, tmp_path / "usual.safetensors")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "usual.safetensors").st_mode) == 0o644


def test_the_temporary_file_is_private_while_written(tmp_path, monkeypatch):
    private = tmp_path / "private.safetensors"
    tm.save({"v": 1}, private)
    os.chmod(private, 0o600)
    seen = []
    write = serialization._write

    def spying_write(file, *args):
        seen.append(stat.S_IMODE(os.fstat(file.fileno()).st_mode))
        write(file, *args)

    monkeypatch.setattr(serialization, "_write", spying_write)
    tm.save({"v": 2}, private)
    assert seen == [0o600]


def test_a_hard_linked_file_is_detached(tmp_path):
    # Documented choice: the save stays atomic; the other names keep the old contents.
    path = tmp_path / "a.safetensors"
    tm.save({"v": 1}, path)
    os.link(path, tmp_path / "b.safetensors")
    tm.save({"v": 2}, path)
    assert tm.load(path) == {"v": 2} and tm.load(tmp_path / "b.safetensors") == {"v": 1}
    assert os.stat(path).st_nlink == 1


def test_a_read_only_file_is_refused_like_writing_it(tmp_path, monkeypatch):
    path = tmp_path / "frozen.safetensors"
    tm.save({"v": 1}, path)
    os.chmod(path, 0o444)
    if os.geteuid() == 0:  # root may write anything: pretend to be another user
        monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    with pytest.raises(PermissionError) as error:
        tm.save({"v": 2}, path)
    assert error.value.filename == str(path)
    os.chmod(path, 0o644)
    assert tm.load(path) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["frozen.safetensors"]


def test_a_missing_folder_names_the_path(tmp_path):
    path = tmp_path / "no" / "such.safetensors"
    with pytest.raises(FileNotFoundError) as error:
        tm.save({"v": 1}, path)
    assert error.value.filename == str(path)


def test_a_device_file_is_written_in_place(tmp_path):
    if not os.path.exists(os.devnull) or os.name != "posix":
        pytest.skip("needs /dev/null")
    link = tmp_path / "null.safetensors"
    link.symlink_to(os.devnull)
    tm.save({"v": 1}, link)  # as torch.save does; renaming over /dev/null would be a disaster
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["null.safetensors"]


def test_a_killed_save_leaves_the_old_file_and_a_recognisable_temporary(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    tm.save({"v": 1}, path)
    script = (
        "import os, sys\n"
        "import tensormodes as tm\n"
        "from tensormodes import serialization\n"
        "def killed(file, *args):\n"
        "    file.write(b'partial')\n"
        "    file.flush()\n"
        "    os._exit(9)\n"
        "serialization._write = killed\n"
        "tm.save({'v': 2}, sys.argv[1])\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tm.__file__)))
    process = subprocess.run([sys.executable, "-c", script, str(path)], env=env, capture_output=True)
    assert process.returncode == 9, process.stderr
    assert tm.load(path) == {"v": 1}
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and names[0] == "ckpt.safetensors"
    assert names[1].startswith("ckpt.safetensors.tm-save.") and names[1].endswith(".tmp")
    tm.save({"v": 3}, path)  # a later save is not disturbed by it
    assert tm.load(path) == {"v": 3}


# -- 6. meta tensors ---------------------------------------------------------------------------------------

def test_meta_tensors_are_refused_clearly(tmp_path):
    path = tmp_path / "meta.safetensors"
    with pytest.raises(NotImplementedError, match=r"^tm.save cannot store the meta tensor at obj\['w'\]: a meta "
                                                  r"tensor has no data to save; materialize it first"):
        tm.save({"w": tm.empty(2, device="meta")}, path)
    layer = tm.nn.Linear(2, 3, device="meta")
    with pytest.raises(NotImplementedError, match=r"meta tensor at obj\['weight'\]"):
        tm.save(layer.state_dict(), path)
    assert not path.exists()
