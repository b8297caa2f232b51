"""tensormodes.meta: RecordingMode, validate, CrossRefMode, the command line, and the default
device (``with tm.device(...)``, ``set_default_device``).

The tests of the tools themselves use ops whose meta rules are part of the first meta
commit (``clone``, ``_to_copy``, ``contiguous``, ``detach``, ``numel``, ``is_same_size``,
``is_nonzero`` ...). The ``test_mlp_*`` tests at the end run a model end to end on the meta
device and need the rules of every op an MLP uses (factories, ``nn.init``'s random fills,
``linear``, ``relu``, ``sum``, the gradient formulas' ops).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tensormodes as tm
import tensormodes.nn as nn
from tensormodes._ops.meta_rules import same_metadata
from tensormodes.meta import (
    CrossRefMode,
    DataDependentOutputError,
    MetaMismatchError,
    Record,
    RecordFormatError,
    RecordingMode,
    encode,
    meta_tensor,
    validate,
)
from tensormodes.meta._records import lookup
from tensormodes.meta.validate import judge
from tensormodes.overrides import TorchFunctionMode

SRC = Path(__file__).resolve().parents[1] / "src"


def tensor_meta(shape, stride, dtype="float32", offset=0, device="cpu", requires_grad=False, is_leaf=True):
    return {"tensor": {"shape": list(shape), "stride": list(stride), "offset": offset, "dtype": dtype,
                       "device": device, "requires_grad": requires_grad, "is_leaf": is_leaf}}


# -- RecordingMode ------------------------------------------------------------------------

def test_recording_describes_arguments_and_results():
    x = tm.ones(4, 6)[1:, ::2].t()
    with RecordingMode() as rec:
        y = x.clone()
    (record,) = rec.records
    assert record.fn == "tensormodes.Tensor.clone" and record.depth == 0 and record.error is None
    assert record.args == [tensor_meta((3, 3), (2, 6), offset=6)]
    assert record.kwargs == {}
    assert record.result == tensor_meta((3, 3), (1, 3))
    assert y.stride() == (1, 3)  # the computation is the real one


def test_recording_encodes_python_values():
    assert encode(None) is None and encode(True) is True and encode(3) == 3 and encode("mean") == "mean"
    assert encode(2.5) == 2.5 and encode(float("nan")) == {"float": "nan"} and encode(-float("inf")) == {
        "float": "-inf"}
    assert encode([1, (2, 3)]) == [1, {"tuple": [2, 3]}]
    assert encode(tm.Size([2, 3])) == {"size": [2, 3]}
    assert encode(tm.float64) == {"dtype": "float64"} and encode(tm.device("meta")) == {"device": "meta"}
    assert encode(slice(1, None, 2)) == {"slice": [1, None, 2]} and encode(...) == {"ellipsis": True}
    assert encode(1 + 2j) == {"complex": [1.0, 2.0]}
    assert encode(lambda: 0) == {"opaque": "function"}
    t = tm.ones(2, requires_grad=True)
    assert encode(t)["tensor"]["requires_grad"] is True and encode(t * 2)["tensor"]["is_leaf"] is False


def test_recording_keeps_kwargs_errors_context_and_depth():
    x = tm.ones(2, 3)
    with RecordingMode() as rec:
        tm._to_copy(x, dtype=tm.float64)
        with pytest.raises(TypeError) as raised:
            x.is_same_size(3)
        with tm.no_grad():
            x.detach()
        tm.nn.functional.softmax(x, dim=-1)
    first, second, third, softmax, inner = rec.records
    assert first.kwargs == {"dtype": {"dtype": "float64"}} and first.result["tensor"]["dtype"] == "float64"
    assert second.error == ("TypeError", str(raised.value)) and second.result is None
    assert third.context == {"grad_enabled": False} and first.context is None
    assert (softmax.fn, softmax.depth, inner.fn, inner.depth) == (
        "tensormodes.nn.functional.softmax", 0, "tensormodes.Tensor.softmax", 1)


def test_recording_takes_arguments_before_an_in_place_call():
    x = tm.zeros(2, 3)
    with RecordingMode() as rec:
        x.requires_grad_()
    assert rec.records[0].args[0]["tensor"]["requires_grad"] is False
    assert rec.records[0].result["tensor"]["requires_grad"] is True


def test_recording_mode_is_invisible_to_modes_below():
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = tm.ones(2, 3).t()
    with Spy(), RecordingMode():
        x.clone()
    assert seen == ["clone"]


def test_save_and_load_round_trip(tmp_path):
    x = tm.ones(3, 2)
    with RecordingMode() as rec:
        x.clone().detach()
        x.numel()
        x[..., 1:]
    path = tmp_path / "calls.jsonl"
    rec.save(path)
    lines = path.read_text().splitlines()
    assert len(lines) == len(rec.records) == 4
    assert json.loads(lines[0]) == {"fn": "tensormodes.Tensor.clone", "args": [tensor_meta((3, 2), (2, 1))],
                                    "kwargs": {}, "depth": 0, "result": tensor_meta((3, 2), (2, 1))}
    assert json.loads(lines[3])["args"][1] == {"tuple": [{"ellipsis": True}, {"slice": [1, None, None]}]}
    assert RecordingMode.load(path) == rec.records


def test_load_reports_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"fn": "tensormodes.numel", "args": [], "kwargs": {}, "depth": 0, "result": 1}\n'
                    '{"fn": 3}\n')
    with pytest.raises(RecordFormatError, match=r"bad.jsonl:2: a record is a JSON object with a string 'fn'"):
        RecordingMode.load(path)
    path.write_text("not json\n")
    with pytest.raises(RecordFormatError, match=r"bad.jsonl:1: Expecting value"):
        RecordingMode.load(path)


def test_lookup_finds_only_public_callables():
    assert lookup("tensormodes.Tensor.clone") is tm.Tensor.clone
    assert lookup("tensormodes.nn.functional.softmax") is tm.nn.functional.softmax
    assert lookup("tensormodes.Tensor.shape.__get__") == tm.Tensor.shape.__get__
    for name in ("os.system", "tensormodes._generated.define", "tensormodes.nn.Linear", "tensormodes.np.ones",
                 "tensormodes.Tensor.__class__.__subclasses__", "tensormodes"):
        assert lookup(name) is None, name


# -- validate -----------------------------------------------------------------------------

def recorded(function, *args, **kwargs) -> list[Record]:
    with RecordingMode() as rec:
        try:
            function(*args, **kwargs)
        except Exception:  # noqa: BLE001 - recorded errors are part of the test data
            pass
    return rec.records


def test_validate_accepts_real_records():
    x = tm.ones(4, 6)[1:, ::2].t()
    records = (recorded(lambda: x.clone().contiguous().detach()) + recorded(lambda: tm._to_copy(x, dtype=tm.int64))
               + recorded(lambda: x.is_same_size(3)) + recorded(lambda: x.numel()))
    report = validate(records)
    assert report.ok and report.mismatches == []
    assert report.total("match") == len(records) == 6
    assert report.counts["tensormodes.Tensor.is_same_size"] == {
        "match": 1, "mismatch": 0, "data-dependent": 0, "no rule": 0, "skipped": 0}


def test_validate_reports_shape_dtype_stride_and_error_mismatches():
    x = tm.ones(2, 3)
    real = recorded(lambda: x.clone())[0]
    records = [
        Record(real.fn, real.args, {}, result=tensor_meta((3, 2), (2, 1))),
        Record(real.fn, real.args, {}, result=tensor_meta((2, 3), (3, 1), dtype="float64")),
        Record(real.fn, real.args, {}, result=tensor_meta((2, 3), (1, 2))),
        Record(real.fn, real.args, {}, error=("RuntimeError", "nope")),
        Record("tensormodes.Tensor.is_same_size", [real.args[0], 3], {}, error=("TypeError", "other words")),
    ]
    report = validate(records)
    assert not report.ok
    assert [(m.index, m.what, m.real, m.meta) for m in report.mismatches] == [
        (0, "shape", "(3, 2)", "(2, 3)"),
        (1, "dtype", "float64", "float32"),
        (2, "stride", "(1, 2)", "(3, 1)"),
        (3, "error", "RuntimeError: nope", "no error"),
        (4, "error", "TypeError: other words",
         "TypeError: is_same_size(): argument 'other' (position 2) must be Tensor, not int"),
    ]
    assert report.mismatches[0].repro == "tm.Tensor.clone(tm.empty((2, 3), dtype=tm.float32, device='meta'))"
    assert report.mismatches[4].repro == (
        "tm.Tensor.is_same_size(tm.empty((2, 3), dtype=tm.float32, device='meta'), 3)")


def test_repro_lines_run_and_rebuild_strided_inputs():
    x = tm.ones(4, 6)[1:, ::2].t().requires_grad_(False)
    real = recorded(lambda: x.clone())[0]
    wrong = Record(real.fn, real.args, {}, result=tensor_meta((9,), (1,)), context={"grad_enabled": False})
    (mismatch,) = validate([wrong]).mismatches
    assert mismatch.repro == ("with tm.no_grad(): tm.Tensor.clone(tm.meta.meta_tensor((3, 3), (2, 6), "
                              "dtype=tm.float32, storage_offset=6))")
    namespace = {"tm": tm}
    exec(mismatch.repro.replace("with tm.no_grad(): ", "result = "), namespace)  # noqa: S102 - our own line
    assert namespace["result"].shape == (3, 3) and namespace["result"].is_meta


def test_validate_outcomes_other_than_match():
    x, one = tm.ones(2, 3), tm.ones(1)
    records = (recorded(lambda: one.is_nonzero())  # DataDependentOutputError on meta
               + recorded(lambda: tm.ones(1).item())  # the tm.ones call, then item: needs values
               + recorded(lambda: x.register_hook(lambda g: g))  # a function argument is not recorded
               + recorded(lambda: tm.device("cpu")))  # no tensor, no device parameter
    records.append(Record("os.system", ["echo hi"], {}, result=0))
    report = validate(records)
    assert report.ok
    assert report.counts["tensormodes.Tensor.is_nonzero"]["data-dependent"] == 1
    assert report.counts["tensormodes.Tensor.item"]["data-dependent"] == 1
    assert report.skipped == {"an argument of type function is not recorded": 1, "no tensor argument": 1,
                              "not a public tensormodes callable": 1}


def test_validate_skips_what_depends_on_autograd_state():
    w = tm.ones(2, requires_grad=True)
    (w * 2).sum().backward()
    report = validate(recorded(lambda: w.grad))
    assert report.skipped == {"depends on autograd or storage state": 1}


def test_judge_classifies_missing_rules_and_needed_values():
    no_rule = NotImplementedError("t(): no meta rule yet; it cannot run on meta tensors")
    assert judge("tensormodes.Tensor.t", None, None, no_rule, None) == ("no rule", None)
    dependent = DataDependentOutputError("nonzero(): the output shape depends on the input's values")
    assert judge("tensormodes.nonzero", None, None, dependent, None) == ("data-dependent", None)
    assert judge("tensormodes.Tensor.__repr__", None, "tensor([1.])", None, "tensor(...)") == (
        "data-dependent", None)


def test_report_table():
    x, one = tm.ones(2, 3), tm.ones(1)
    records = recorded(lambda: x.clone()) * 3 + recorded(lambda: one.is_nonzero())
    wrong = Record("tensormodes.Tensor.numel", records[0].args, {}, result=5)
    report = validate([*records, wrong, wrong])
    assert str(report) == """\
function                       match  mismatch  data-dependent  no rule  skipped
-----------------------------  -----  --------  --------------  -------  -------
tensormodes.Tensor.clone           3         0               0        0        0
tensormodes.Tensor.is_nonzero      0         0               1        0        0
tensormodes.Tensor.numel           0         2               0        0        0
total                              3         2               1        0        0
2 mismatches (repro lines: import tensormodes as tm, tensormodes.meta):
tensormodes.Tensor.numel: value differs: real 5, meta 6  (x2)
    tm.Tensor.numel(tm.empty((2, 3), dtype=tm.float32, device='meta'))"""
    assert repr(report) == "ValidationReport(records=6, match=3, mismatches=2)"


def test_validate_rejects_what_is_not_a_record():
    with pytest.raises(TypeError, match="validate\\(\\) expects Record objects, got dict at position 0"):
        validate([{"fn": "tensormodes.numel"}])
    bad = Record("tensormodes.Tensor.clone", [{"tensor": {"shape": [2]}}], {})
    with pytest.raises(RecordFormatError, match="record 0 \\(tensormodes.Tensor.clone\\): a tensor needs"):
        validate([bad])


def test_meta_tensor():
    t = meta_tensor((2, 3), (1, 2), dtype=tm.float64, storage_offset=4, requires_grad=True)
    assert (t.shape, t.stride(), t.storage_offset(), t.dtype, t.requires_grad, t.is_meta) == (
        (2, 3), (1, 2), 4, tm.float64, True, True)
    assert meta_tensor([4]).stride() == (1,) and meta_tensor([4]).dtype is tm.float32
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        meta_tensor((2, 3), (1,))
    with pytest.raises(TypeError, match="argument 'dtype' must be tensormodes.dtype, not str"):
        meta_tensor((2,), dtype="float32")


# -- CrossRefMode -------------------------------------------------------------------------

def test_cross_ref_passes_real_results_through():
    x = tm.ones(4, 6)[1:, ::2].t()
    with CrossRefMode() as check:
        y = x.contiguous().clone()
        n = y.numel()
        with pytest.raises(TypeError, match="must be Tensor, not int"):
            x.is_same_size(3)
    assert (y.stride(), n, check.checked) == ((3, 1), 9, 4)
    assert not y.is_meta


def test_cross_ref_counts_calls_it_cannot_check():
    x = tm.ones(1)
    with CrossRefMode() as check:
        assert x.is_nonzero() is True
        assert x.item() == 1.0
    assert check.checked == 0
    assert check.unchecked == {"tensormodes.Tensor.is_nonzero": 1, "tensormodes.Tensor.item": 1}


def test_cross_ref_raises_at_the_users_line(monkeypatch):
    def transposed(opdef, args, kwargs):
        source = args[0]
        return type(source)(source.shape[::-1], source.dtype)

    monkeypatch.setattr(same_metadata, "compute", transposed)
    x = tm.ones(2, 3)
    with pytest.raises(MetaMismatchError) as raised, CrossRefMode():
        x.clone()  # the line the error names
    error = raised.value
    assert (error.op, error.what, error.real, error.meta) == ("tensormodes.Tensor.clone", "shape", "(2, 3)", "(3, 2)")
    assert error.filename == __file__
    assert str(error) == (f"tensormodes.Tensor.clone: the meta result differs in shape: real (2, 3), meta (3, 2) "
                          f"at {__file__}:{error.lineno}: x.clone()  # the line the error names")


def test_cross_ref_meta_runs_record_no_autograd_and_restore_grad_mode(monkeypatch):
    grad_modes = []
    compute = same_metadata.compute

    def watched(opdef, args, kwargs):
        grad_modes.append(tm.is_grad_enabled())
        return compute(opdef, args, kwargs)

    monkeypatch.setattr(same_metadata, "compute", watched)
    x = tm.ones(2, 3, requires_grad=True)
    with CrossRefMode() as check:
        y = x.clone()
        assert tm.is_grad_enabled()
        with tm.no_grad():
            z = x.clone()
            assert not tm.is_grad_enabled()
    assert grad_modes == [False, False]  # only the meta runs reach the meta rule
    assert y.requires_grad and not z.requires_grad and check.checked == 2


def test_cross_ref_meta_runs_are_invisible_to_modes_below():
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = tm.ones(2, 3)
    with Spy(), CrossRefMode():
        x.clone().detach()
    assert seen == ["clone", "detach"]


# -- the command line ---------------------------------------------------------------------

def run_cli(*arguments):
    return subprocess.run([sys.executable, "-m", "tensormodes.meta", *arguments], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": ""}, timeout=120)


def test_cli_validates_a_record_file(tmp_path):
    x = tm.ones(3, 2)
    with RecordingMode() as rec:
        x.clone().detach()
    good = tmp_path / "good.jsonl"
    rec.save(good)
    done = run_cli("validate", str(good))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2].split() == ["tensormodes.Tensor.clone", "1", "0", "0", "0", "0"]
    assert done.stdout.rstrip().endswith("no mismatches")

    bad = tmp_path / "bad.jsonl"
    wrong = Record("tensormodes.Tensor.clone", rec.records[0].args, {}, result=tensor_meta((2, 3), (3, 1)))
    bad.write_text(json.dumps(wrong.to_json()) + "\n")
    done = run_cli("validate", str(good), str(bad))
    assert done.returncode == 1
    assert done.stdout.rstrip().endswith(
        "tensormodes.Tensor.clone: shape differs: real (2, 3), meta (3, 2)\n"
        "    tm.Tensor.clone(tm.empty((3, 2), dtype=tm.float32, device='meta'))")


def test_cli_errors(tmp_path):
    done = run_cli("validate", str(tmp_path / "missing.jsonl"))
    assert done.returncode == 2
    assert done.stderr == f"tensormodes.meta: cannot read {tmp_path / 'missing.jsonl'}: No such file or directory\n"
    broken = tmp_path / "broken.jsonl"
    broken.write_text("[1, 2]\n")
    done = run_cli("validate", str(broken))
    assert done.returncode == 2 and "broken.jsonl:1: a record is a JSON object" in done.stderr
    done = run_cli()
    assert done.returncode == 2 and "usage: python -m tensormodes.meta" in done.stderr


# -- the default device -------------------------------------------------------------------

class _Factories(TorchFunctionMode):
    """Below a DeviceContext: records the device each factory call gets, without running it."""

    def __init__(self):
        self.devices = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (tm.zeros, tm.empty, tm.tensor, tm.zeros_like):
            self.devices.append((func.__name__, kwargs.get("device")))
            return None
        return func(*args, **kwargs)


def test_device_context_fills_in_factories_device():
    x = tm.ones(2)
    with _Factories() as spy:
        with tm.device("meta") as entered:
            tm.zeros(2, 3)
            tm.empty(2, device=None)
            tm.tensor([1.0], device="cpu")
            tm.zeros_like(x)  # *_like keep their input's device, as PyTorch's
    assert entered == tm.device("meta")
    assert spy.devices == [("zeros", tm.device("meta")), ("empty", tm.device("meta")), ("tensor", "cpu"),
                           ("zeros_like", None)]


def test_device_context_nests_and_restores():
    from tensormodes.overrides import _get_current_function_mode_stack as stack

    assert tm.get_default_device() == tm.device("cpu") and stack() == []
    with tm.device("meta"):
        assert tm.get_default_device() == tm.device("meta")
        with tm.device("cpu"):
            assert tm.get_default_device() == tm.device("cpu")
            assert tm.zeros(2).device == tm.device("cpu")
        assert [type(m).__name__ for m in stack()] == ["DeviceContext"]
    assert stack() == [] and tm.get_default_device() == tm.device("cpu")


def test_set_default_device():
    from tensormodes.overrides import _get_current_function_mode_stack as stack

    tm.set_default_device("meta")
    try:
        assert tm.get_default_device() == tm.device("meta")
        with tm.device("cpu"):
            assert tm.get_default_device() == tm.device("cpu")
        tm.set_default_device("cpu")  # replaces the previous default
        assert [repr(m) for m in stack()] == ["DeviceContext('cpu')"]
    finally:
        tm.set_default_device(None)
    assert stack() == [] and tm.get_default_device() == tm.device("cpu")


def test_module_to_meta_and_to_empty():
    layer = nn.Linear(3, 2)
    weight = layer.weight
    layer.to("meta")
    assert layer.weight is weight and weight.is_meta and weight.requires_grad and weight.shape == (2, 3)
    cpu = nn.Linear(3, 2).to_empty(device="cpu")
    assert cpu.weight.device == tm.device("cpu") and cpu.bias.shape == (2,)


def test_rebuilt_tensors_keep_their_autograd_state():
    from tensormodes.meta._records import decode

    leaf = decode(tensor_meta((2,), (1,), requires_grad=True))
    inner = decode(tensor_meta((2,), (1,), requires_grad=True, is_leaf=False))
    plain = decode(tensor_meta((2,), (1,)))
    assert (leaf.is_leaf, leaf.requires_grad, inner.is_leaf, inner.requires_grad, plain.is_leaf) == (
        True, True, False, True, True)


# -- end to end: these need the meta rules of every op an MLP uses -------------------------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(tm.relu(self.fc1(x)))


def test_mlp_on_the_meta_device():
    x = tm.empty(1_000_000, 64, device="meta")
    with tm.device("meta"):
        model = MLP()
    assert all(p.is_meta for p in model.parameters())
    y = model(x)
    assert (y.shape, y.dtype, y.stride(), y.is_meta) == ((1_000_000, 10), tm.float32, (10, 1), True)
    y.sum().backward()
    assert model.fc1.weight.grad.shape == (128, 64) and model.fc1.weight.grad.is_meta
    model.to_empty(device="cpu")
    assert model.fc1.weight.device == tm.device("cpu")


def test_mlp_training_records_validate(tmp_path):
    tm.manual_seed(0)
    model = MLP()
    optimizer = tm.optim.SGD(model.parameters(), lr=0.1)
    with RecordingMode() as rec:
        for _ in range(2):
            x = tm.randn(8, 64)
            loss = tm.nn.functional.cross_entropy(model(x), tm.randint(0, 10, (8,)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    rec.save(tmp_path / "calls.jsonl")
    report = validate(RecordingMode.load(tmp_path / "calls.jsonl"))
    assert report.ok, str(report)
    assert report.total("no rule") == 0, str(report)
    assert report.total("match") > 40


def test_mlp_forward_under_cross_ref():
    model = MLP()
    x = tm.randn(64, 64)
    with CrossRefMode() as check:
        y = model(x)
    assert y.shape == (64, 10)
    assert check.unchecked == {} and check.checked == 3

