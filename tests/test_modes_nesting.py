"""Ready-made modes and meta tensors (issue 30, items 10 and 11): ``LoggingMode`` and
``TimingMode`` nest by module calls (through nn.Module's global hooks, as ``FlopCounterMode``);
``tolist()`` / ``item()`` and the other data reads of a meta tensor raise PyTorch's errors and
name the operation."""

import time

import pytest

import tensormodes as tm
from tensormodes.modes import LoggingMode, TimingMode
from tensormodes.nn.modules import _hooks


class MLP(tm.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = tm.nn.Linear(3, 4)
        self.fc2 = tm.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def _no_global_module_hooks():
    return not (_hooks._global_forward_pre_hooks or _hooks._global_forward_hooks)


# -- item 10: module calls as nesting levels ----------------------------------------------------


def test_logging_nests_calls_under_module_calls():
    model, x = MLP(), tm.ones(2, 3)
    with LoggingMode() as log:
        model(x).sum()
    assert log.lines == [
        "MLP(f32[2, 3]) -> f32[2, 2]{grad}",
        "  MLP.fc1(f32[2, 3]) -> f32[2, 4]{grad}",
        "    tensormodes.nn.functional.linear(f32[2, 3], Parameter:f32[4, 3]{grad}, Parameter:f32[4]{grad})"
        " -> f32[2, 4]{grad}",
        "  tensormodes.Tensor.relu(f32[2, 4]{grad}) -> f32[2, 4]{grad}",
        "  MLP.fc2(f32[2, 4]{grad}) -> f32[2, 2]{grad}",
        "    tensormodes.nn.functional.linear(f32[2, 4]{grad}, Parameter:f32[2, 4]{grad}, Parameter:f32[2]{grad})"
        " -> f32[2, 2]{grad}",
        "tensormodes.Tensor.sum(f32[2, 2]{grad}) -> f32[]{grad}"]
    assert _no_global_module_hooks()


def test_logging_a_module_call_that_raises():
    model = MLP()
    with LoggingMode() as log:
        with pytest.raises(RuntimeError):
            model(tm.ones(2, 5))
    assert [line.split("(")[0] + " -> " + line.rsplit("-> ", 1)[1] for line in log.lines] == [
        "tensormodes.ones -> f32[2, 5]", "MLP -> raised RuntimeError", "  MLP.fc1 -> raised RuntimeError",
        "    tensormodes.nn.functional.linear -> raised RuntimeError"]


def test_logging_module_calls_made_in_an_except_clause_are_not_errors():
    model = tm.nn.Identity()
    with LoggingMode() as log:
        try:
            raise KeyError("around")
        except KeyError:
            model(tm.zeros(1))
    assert log.lines == ["tensormodes.zeros(1) -> f32[1]", "Identity(f32[1]) -> f32[1]"]


def test_logging_dedupe_groups_module_calls_per_line():
    model, x, lines = tm.nn.ReLU(), tm.ones(2), []
    with LoggingMode(lines, dedupe=True):
        for _ in range(3):
            model(x)
    assert lines == ["ReLU(f32[2]) -> f32[2]  x3", "  tensormodes.nn.functional.relu(f32[2]) -> f32[2]",
                     "    tensormodes.Tensor.relu(f32[2]) -> f32[2]"]


def test_logging_entered_twice_registers_its_hooks_once():
    model, mode = tm.nn.ReLU(), LoggingMode()
    with mode, mode:
        model(tm.ones(1))
        assert len(_hooks._global_forward_pre_hooks) == 1
    # the mode is on the stack twice, so each op is handled twice (nested); the module call once
    assert [line for line in mode.lines if "ReLU" in line] == ["ReLU(f32[1]) -> f32[1]"]
    assert _no_global_module_hooks()


def test_modules_called_outside_the_mode_are_not_logged():
    model = tm.nn.ReLU()
    with LoggingMode() as log:
        pass
    model(tm.ones(1))
    assert log.lines == [] and _no_global_module_hooks()


class Slow(tm.nn.Module):
    def forward(self, x):
        time.sleep(0.002)  # time of the module's own, outside any op
        return x.relu()


def test_timing_counts_module_calls_inclusive_of_their_ops():
    model = tm.nn.Sequential(Slow(), tm.nn.Linear(2, 2))
    with TimingMode() as timer:
        model(tm.ones(1, 2))
    stats = timer.stats
    assert set(stats) == {"tensormodes.ones", "Sequential", "Sequential.0", "Sequential.1", "tensormodes.Tensor.relu",
                          "tensormodes.nn.functional.linear"}
    assert all(s.calls == 1 for s in stats.values())
    outer, slow, linear = stats["Sequential"], stats["Sequential.0"], stats["Sequential.1"]
    assert outer.inclusive_ns >= slow.inclusive_ns + linear.inclusive_ns
    assert outer.exclusive_ns == outer.inclusive_ns - slow.inclusive_ns - linear.inclusive_ns
    assert slow.exclusive_ns == slow.inclusive_ns - stats["tensormodes.Tensor.relu"].inclusive_ns
    assert slow.exclusive_ns >= 2_000_000  # the sleep is the module's own time
    assert linear.exclusive_ns == linear.inclusive_ns - stats["tensormodes.nn.functional.linear"].inclusive_ns
    assert _no_global_module_hooks()


def test_timing_a_module_call_that_raises_and_spans():
    model = MLP()
    with TimingMode() as timer, timer.span("step"):
        with pytest.raises(RuntimeError):
            model(tm.ones(2, 5))
    assert timer.stats["MLP"].calls == 1 and timer.stats["MLP.fc1"].calls == 1 and "MLP.fc2" not in timer.stats
    assert timer.stats["step"].inclusive_ns >= timer.stats["MLP"].inclusive_ns
    assert timer._children == [] and _no_global_module_hooks()


# -- item 11: data of meta tensors ----------------------------------------------------------------


def _outcome(L, expression):
    x = L.ones(2, device="meta")
    try:
        expression(L, x)
    except Exception as error:
        return type(error).__name__, str(error)
    return "ok", None


META_READS = {
    "tolist": lambda L, x: x.tolist(),
    "tolist of a scalar": lambda L, x: x[0].tolist(),
    "item": lambda L, x: x[0].item(),
    "item of two elements": lambda L, x: x.item(),
    "float": lambda L, x: float(x[0]),
    "bool": lambda L, x: bool(x[0]),
    "cpu": lambda L, x: x.cpu(),
    "to": lambda L, x: x.to("cpu"),
    "to with a dtype": lambda L, x: x.to("cpu", L.float64),
    "numpy": lambda L, x: x.numpy(),
    "tensor of meta scalars": lambda L, x: L.tensor([x[0], x[1]]),
    "format": lambda L, x: format(x[0], ".2f"),
}

EXPECTED = {
    "tolist": ("NotImplementedError", "Cannot copy out of meta tensor; no data!"),
    "tolist of a scalar": ("NotImplementedError", "Cannot copy out of meta tensor; no data!"),
    "item": ("RuntimeError", "Tensor.item() cannot be called on meta tensors"),
    "item of two elements": ("RuntimeError", "a Tensor with 2 elements cannot be converted to Scalar"),
    "float": ("RuntimeError", "Tensor.item() cannot be called on meta tensors"),
    "bool": ("RuntimeError", "Tensor.item() cannot be called on meta tensors"),
    "cpu": ("NotImplementedError", "Cannot copy out of meta tensor; no data!"),
    "to": ("NotImplementedError", "Cannot copy out of meta tensor; no data!"),
    "to with a dtype": ("NotImplementedError", "Cannot copy out of meta tensor; no data!"),
    "numpy": ("TypeError", "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                           "to host memory first."),
    "tensor of meta scalars": ("RuntimeError", "Tensor.item() cannot be called on meta tensors"),
    "format": ("TypeError", "unsupported format string passed to Tensor.__format__"),
}


@pytest.mark.parametrize("name", list(META_READS))
def test_meta_data_reads_raise_pytorchs_errors(name):
    assert _outcome(tm, META_READS[name]) == EXPECTED[name]


@pytest.mark.torch
@pytest.mark.parametrize("name", list(META_READS))
def test_meta_data_reads_match_torch(name):
    torch = pytest.importorskip("torch")
    assert _outcome(tm, META_READS[name]) == _outcome(torch, META_READS[name])


@pytest.mark.parametrize("expression, operation", [
    (lambda x: x.tolist(), "Tensor.tolist()"), (lambda x: x.cpu(), "Tensor.cpu()"),
    (lambda x: x.to("cpu"), "Tensor.to('cpu')")])
def test_copying_out_of_a_meta_tensor_names_the_operation(expression, operation):
    with pytest.raises(NotImplementedError) as info:
        expression(tm.ones(2, device="meta"))
    assert str(info.value) == "Cannot copy out of meta tensor; no data!"  # PyTorch's message, as it is
    assert info.value.__notes__ == [
        f"{operation} needs the tensor's values; a meta tensor has only its shape, dtype and strides"]
