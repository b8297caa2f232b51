"""tensormodes.device: PyTorch's device strings, errors, and modes seeing device(...) calls."""

from __future__ import annotations

import pickle

import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode, get_ignored_functions, resolve_name
from tests.torch_oracle import assert_same_outcome

KNOWN = ["cpu", "cuda", "cuda:1", "mps", "xla", "xpu", "hpu", "meta", "meta:0", "cpu:0", "mtia", "privateuseone"]
BAD = ["foo", "CPU", "", "cuda:-1", "cuda:x", "cuda1", "cuda:1:2", "cuda:01"]


class Recorder(TorchFunctionMode):
    def __init__(self):
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, types, args))
        if func is tm.device and args == ("mine",):
            return "my device"
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("text", KNOWN)
def test_known_device_strings_make_devices(text):
    d = tm.device(text)
    kind, _, index = text.partition(":")
    assert (d.type, d.index) == (kind, int(index) if index else None)
    assert str(d) == text


def test_device_type_and_index_arguments():
    assert repr(tm.device("cuda", 1)) == "device(type='cuda', index=1)"
    assert repr(tm.device(type="xla", index=2)) == "device(type='xla', index=2)"
    assert tm.device(tm.device("cuda:3")) == tm.device("cuda", 3)
    assert pickle.loads(pickle.dumps(tm.device("cuda:1"))) == tm.device("cuda:1")
    with pytest.raises(RuntimeError, match="^Device index must not be negative$"):
        tm.device("cuda", -1)
    with pytest.raises(RuntimeError, match="must not include an index because index was passed explicitly"):
        tm.device("cuda:1", 0)
    with pytest.raises(TypeError, match="argument 'index' \\(position 2\\) must be int, not float"):
        tm.device("cpu", 1.0)


@pytest.mark.parametrize("text", BAD)
def test_bad_device_strings_raise_like_torch_messages(text):
    with pytest.raises(RuntimeError) as info:
        tm.device(text)
    message = str(info.value)
    if text in ("foo", "CPU"):
        assert message.startswith("Expected one of cpu, cuda, ipu, xpu, mkldnn,")
        assert message.endswith(f"device type at start of device string: {text}")
    elif text == "":
        assert message == "Device string must not be empty"
    else:
        assert message == f"Invalid device string: '{text}'"


@pytest.mark.torch
@pytest.mark.parametrize("text", KNOWN + BAD)
def test_device_strings_match_torch(text):
    assert_same_outcome(f"str(L.device({text!r}))")


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.device('cuda', -1)", "L.device('cuda:1', 0)", "str(L.device('cuda', 2))", "L.device('cpu', 1.0)",
    "L.device(0)",
])
def test_device_errors_match_torch(expression):
    assert_same_outcome(expression)


def test_tensors_cannot_be_created_on_other_devices():
    message = "tensormodes computes on cpu and meta only: tensors on device 'cuda:1' are not supported yet"
    with pytest.raises(NotImplementedError, match=f"^{message}$"):
        tm.ones(2, device="cuda:1")
    with pytest.raises(NotImplementedError, match="tensors on device 'mps'"):
        tm.tensor([1.0], device=tm.device("mps"))
    with pytest.raises(NotImplementedError, match="tensors on device 'xla'"):
        tm.ones(2).to("xla")
    with pytest.raises(NotImplementedError, match="tensors on device 'cuda'"):
        tm.zeros_like(tm.ones(2), device="cuda")
    assert tm.ones(2, device="cpu:0").tolist() == [1.0, 1.0]


def test_modes_see_device_construction():
    with Recorder() as mode:
        d = tm.device("cuda:1")
        mine = tm.device("mine")
        tm.ones(1, device="cpu")
    assert d == tm.device("cuda", 1) and mine == "my device"
    assert mode.calls[0] == (tm.device, (), ("cuda:1",))
    assert mode.calls[1] == (tm.device, (), ("mine",))
    # a factory's device= argument is parsed without a device(...) call, as in PyTorch
    assert [c[0] for c in mode.calls[2:]] == [tm.ones]


def test_device_calls_skip_disabled_modes():
    with Recorder() as mode, tm._C.DisableTorchFunction():
        assert tm.device("cpu") == "cpu"
    assert mode.calls == []


@pytest.mark.torch
def test_modes_see_device_construction_like_torch():
    import torch

    class TorchRecorder(torch.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append((func is torch.device, types, args))
            return func(*args, **(kwargs or {}))

    with TorchRecorder() as theirs:
        torch.device("cuda:1")
    with Recorder() as ours:
        tm.device("cuda:1")
    assert theirs.funcs == [(f is tm.device, t, a) for f, t, a in ours.calls]


@pytest.mark.torch
def test_device_is_ignored_and_named_like_torch():
    import torch

    assert (tm.device in get_ignored_functions()) == (torch.device in torch.overrides.get_ignored_functions())
    assert resolve_name(tm.device) == torch.overrides.resolve_name(torch.device).replace("torch", "tensormodes")


def test_the_keyword_overload_device_equals():
    """PyTorch's second overload, ``device(device=...)`` (scripts write ``torch.device(device=d)``),
    and its errors for both forms at once and for no argument."""
    assert tm.device(device="xla:0") == tm.device("xla", 0)
    assert tm.device(device=tm.device("cuda:1")) == tm.device("cuda", 1)
    with pytest.raises(TypeError, match=r"^device\(\) got an unexpected keyword argument 'device'$"):
        tm.device("cpu", device="cpu")
    with pytest.raises(TypeError, match=r"invalid combination of arguments - got \(\)"):
        tm.device()
    # with only an index beside it, PyTorch tries the (type, index) overload and misses its type
    with pytest.raises(TypeError, match=r'^device\(\) missing 1 required positional arguments: "type"$'):
        tm.device(device="cpu", index=0)
