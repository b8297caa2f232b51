"""The ready-made modes of tensormodes.modes: logging, op counts, NaN checks, timing, default dtype,
and the shared table renderer."""

from __future__ import annotations

import contextvars
import io
import logging
import math
import sys
import threading
import warnings

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.modes import DefaultDtypeMode, LoggingMode, NanCheckMode, OpCounterMode, OpTime, TimingMode
from tensormodes.modes import timing as timing_module
from tensormodes.modes.observing import render_table, rich_table, summarize
from tensormodes.overrides import TorchFunctionMode, _get_current_function_mode_stack, explain
from tensormodes.utils._python_dispatch import BaseTorchDispatchMode
from tensormodes.utils.flop_counter import FlopCounterMode

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None

HERE = __file__


def mlp_pieces():
    x, y = tm.randn(4, 3), tm.tensor([0, 1, 2, 0])
    w, b = tm.randn(5, 3, requires_grad=True), tm.zeros(5, requires_grad=True)
    return x, y, w, b


def mlp_step(x, y, w, b):
    loss = F.cross_entropy(F.relu(F.linear(x, w, b)), y)
    loss.backward()
    return loss


class Recorder(TorchFunctionMode):
    """A user mode: records the names of the calls it sees."""

    def __init__(self, seen):
        self.seen = seen

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(func.__name__)
        return func(*args, **(kwargs or {}))


# -- LoggingMode -------------------------------------------------------------------------------

MLP_LOG = """\
tensormodes.nn.functional.linear(f32[4, 3], f32[5, 3]{grad}, f32[5]{grad}) -> f32[4, 5]{grad}
tensormodes.nn.functional.relu(f32[4, 5]{grad}) -> f32[4, 5]{grad}
  tensormodes.Tensor.relu(f32[4, 5]{grad}) -> f32[4, 5]{grad}
tensormodes.nn.functional.cross_entropy(f32[4, 5]{grad}, i64[4]) -> f32[]{grad}
  tensormodes._cross_entropy_loss(f32[4, 5]{grad}, i64[4]) -> f32[]{grad}
tensormodes.Tensor.backward(f32[]{grad}) -> None
  tensormodes._cross_entropy_loss_backward(f32[], f32[4, 5], i64[4]) -> f32[4, 5]
  tensormodes._threshold_backward(f32[4, 5], f32[4, 5], 0) -> f32[4, 5]
  tensormodes.Tensor.is_complex(f32[4, 5]) -> False
  tensormodes.Tensor.t(f32[4, 5]) -> f32[5, 4]
  tensormodes.Tensor.matmul(f32[5, 4], f32[4, 3]) -> f32[5, 3]
  tensormodes.Tensor.sum(f32[4, 5], dim=0) -> f32[5]"""


def test_logging_an_mlp_step_forward_and_backward():
    pieces = mlp_pieces()
    with LoggingMode() as log:
        mlp_step(*pieces)
    assert "\n".join(log.lines) == MLP_LOG


def test_logging_argument_summaries():
    with LoggingMode() as log:
        a = tm.ones(2, 3, dtype=tm.float64)
        a[0, 1:] = 2.5
        a.max(dim=1)
        _ = a.shape
        tm.cat([a, a.to(tm.int32)], 0)
        tm.arange(3)[None, ..., ::2]
        with pytest.raises(RuntimeError):
            a @ a
    assert "\n".join(log.lines) == """\
tensormodes.ones(2, 3, dtype=float64) -> f64[2, 3]
tensormodes.Tensor.__setitem__(f64[2, 3], (0, 1:), 2.5) -> None
tensormodes.Tensor.max(f64[2, 3], dim=1) -> max(values=f64[2], indices=i64[2])
tensormodes.Tensor.shape.__get__(f64[2, 3]) -> (2, 3)
tensormodes.Tensor.to(f64[2, 3], int32) -> i32[2, 3]
tensormodes.cat([f64[2, 3], i32[2, 3]]) -> f64[4, 3]
tensormodes.arange(start=3) -> i64[3]
tensormodes.Tensor.__getitem__(i64[3], (None, ..., ::2)) -> i64[1, 2]
tensormodes.Tensor.matmul(f64[2, 3], f64[2, 3]) -> raised RuntimeError"""


def test_summaries():
    class Sub(tm.Tensor):
        pass

    assert summarize(tm.ones(2, dtype=tm.bfloat16, requires_grad=True)) == "bf16[2]{grad}"
    assert summarize(tm.ones((), dtype=tm.complex64)) == "c64[]"
    assert summarize(tm.ones(1, dtype=tm.bool).as_subclass(Sub)) == "Sub:b8[1]"
    assert summarize((tm.ones(1),)) == "(f32[1],)"
    assert summarize([1, 2.5, None, "x", tm.float16]) == "[1, 2.5, None, 'x', float16]"
    assert summarize(slice(None, 3)) == ":3" and summarize(object()) == "object"
    # The device is read without a property call; off the cpu it is named.
    assert summarize(tm.ones(2, 3, device="meta")).endswith("f32[2, 3]{meta}")
    assert summarize(tm.ones(2, device="meta", requires_grad=True)).endswith("f32[2]{meta,grad}")
    assert summarize(tm.ones(2, 3)) == "f32[2, 3]"


def test_logging_targets(tmp_path, caplog):
    path = tmp_path / "calls.log"
    mode = LoggingMode(path)
    with mode:
        tm.ones(1)
    assert path.read_text() == "tensormodes.ones(1) -> f32[1]\n"
    assert mode._file is None                       # closed on exit
    with mode:                                       # written afresh on the next entry
        tm.zeros(2)
    assert path.read_text() == "tensormodes.zeros(2) -> f32[2]\n"

    stream, lines = io.StringIO(), ["earlier"]
    with LoggingMode(stream), LoggingMode(lines):
        tm.ones(1)
    assert stream.getvalue() == "tensormodes.ones(1) -> f32[1]\n"
    assert lines == ["earlier", "tensormodes.ones(1) -> f32[1]"]

    logger = logging.getLogger("tensormodes-test-calls")
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        with LoggingMode(logger, level=logging.DEBUG):
            tm.ones(1) + 1
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "tensormodes.ones(1) -> f32[1]"),
        (logging.DEBUG, "tensormodes.Tensor.add(f32[1], 1) -> f32[1]")]

    with pytest.raises(TypeError, match="LoggingMode: cannot write to int; expected None, a list, a logging.Logger"):
        with LoggingMode(3):
            tm.ones(1)


def test_logging_dedupe_groups_identical_calls_per_source_line():
    lines = []
    x = tm.ones(3)
    with LoggingMode(lines, dedupe=True):
        for _ in range(12):
            y = x * 2
            F.relu(y)
        for _ in range(2):
            F.relu(y)
        F.relu(x[:2])
        assert lines == []                           # grouped calls are written on exit
    assert "\n".join(lines) == """\
tensormodes.Tensor.mul(f32[3], 2) -> f32[3]  x12
tensormodes.nn.functional.relu(f32[3]) -> f32[3]  x12
  tensormodes.Tensor.relu(f32[3]) -> f32[3]
tensormodes.nn.functional.relu(f32[3]) -> f32[3]  x2
  tensormodes.Tensor.relu(f32[3]) -> f32[3]
tensormodes.Tensor.__getitem__(f32[3], :2) -> f32[2]
tensormodes.nn.functional.relu(f32[2]) -> f32[2]
  tensormodes.Tensor.relu(f32[2]) -> f32[2]"""


def test_logging_composes_with_user_modes_on_both_sides():
    above, below, lines = [], [], []
    with Recorder(below), LoggingMode(lines), Recorder(above):
        F.softmax(tm.ones(2), dim=0)
    assert above == ["ones", "softmax"]
    # The mode below may override softmax: it receives the call, and runs its body itself.
    assert below == ["ones", "softmax"]
    assert lines == ["tensormodes.ones(2) -> f32[2]",
                     "tensormodes.nn.functional.softmax(f32[2], dim=0) -> f32[2]"]
    lines.clear()
    with LoggingMode(lines), Recorder(above):
        F.softmax(tm.ones(2), dim=0)
    assert lines[2:] == ["  tensormodes.Tensor.softmax(f32[2], 0) -> f32[2]"]
    assert _get_current_function_mode_stack() == []


def test_logging_an_exception_inside_a_composite_keeps_the_stack():
    lines, a, b = [], tm.ones(2, 3), tm.ones(2, 2)
    with pytest.raises(RuntimeError):
        with LoggingMode(lines):
            F.linear(a, b)
    assert lines == ["tensormodes.nn.functional.linear(f32[2, 3], f32[2, 2]) -> raised RuntimeError"]


# -- OpCounterMode -----------------------------------------------------------------------------

def test_op_counter_counts_forward_and_backward_calls():
    pieces = mlp_pieces()
    with OpCounterMode() as counter:
        mlp_step(*pieces)
        mlp_step(*pieces)
    assert dict(counter.counts) == {
        "tensormodes.nn.functional.linear": 2, "tensormodes.nn.functional.relu": 2,
        "tensormodes.nn.functional.cross_entropy": 2, "tensormodes.Tensor.backward": 2,
        "tensormodes._cross_entropy_loss_backward": 2, "tensormodes._threshold_backward": 2,
        "tensormodes.Tensor.is_complex": 2, "tensormodes.Tensor.t": 2, "tensormodes.Tensor.matmul": 2,
        "tensormodes.Tensor.sum": 2}
    assert str(counter) == counter.table() == """\
function                                  calls
----------------------------------------  -----
tensormodes.nn.functional.linear              2
tensormodes.nn.functional.relu                2
tensormodes.nn.functional.cross_entropy       2
tensormodes.Tensor.backward                   2
tensormodes._cross_entropy_loss_backward      2
tensormodes._threshold_backward               2
tensormodes.Tensor.is_complex                 2
tensormodes.Tensor.t                          2
tensormodes.Tensor.matmul                     2
tensormodes.Tensor.sum                        2"""


def test_op_counter_nested_counts_composites_inner_calls():
    with OpCounterMode(nested=True) as counter:
        F.softmax(tm.ones(2), dim=0)
        F.softmax(tm.ones(2), dim=0)
    assert counter.counts == {"tensormodes.ones": 2, "tensormodes.nn.functional.softmax": 2,
                              "tensormodes.Tensor.softmax": 2}
    assert counter.rows()[0] == ["tensormodes.ones", 2] and repr(counter) == "OpCounterMode(6 calls)"


# -- NanCheckMode ------------------------------------------------------------------------------

def test_nan_check_raises_at_the_first_non_finite_result_naming_the_user_line():
    x = tm.tensor([1.0, 0.0])
    with pytest.raises(FloatingPointError) as caught:
        with NanCheckMode():
            y = x + 1
            z = x.log()  # the line named
            z * 2
    line = caught.traceback[0].lineno  # 0-based: the `with` statement's frame position
    message = str(caught.value)
    assert message.startswith("tensormodes.Tensor.log produced Inf in its result at ")
    assert message.endswith(f"{HERE}:{_line_of('z = x.log()  # the line named')}: z = x.log()  # the line named")
    assert y.tolist() == [2.0, 1.0] and line > 0


def _line_of(text: str) -> int:
    with open(HERE, encoding="utf-8") as source:
        return next(i for i, line in enumerate(source, 1) if text in line and "_line_of" not in line)


def test_nan_check_in_backward_names_the_backward_line():
    x = tm.zeros(2, requires_grad=True)
    loss = x.sqrt().sum()
    with NanCheckMode():
        with pytest.raises(FloatingPointError) as caught:
            loss.backward()  # backward line
    message = str(caught.value)
    assert " produced Inf in its result during backward at " in message
    assert message.endswith(f"{HERE}:{_line_of('loss.backward()  # backward line')}: loss.backward()  # backward line")


def test_nan_check_names_the_output():
    t = tm.tensor([[2.0, 3.0], [1.0, math.nan]])
    with NanCheckMode(action="warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tm.max(t, dim=0)
        t.chunk(2)                                    # views make no new values: not checked
        t.sort(dim=0)
        tm.tensor([complex(math.inf, math.nan)])
        tm.tensor([1, 2]) * 2                         # integers: never checked
    messages = [str(w.message).split(" at ")[0] for w in caught]
    assert messages == ["tensormodes.max produced NaN in output 'values'",
                        "tensormodes.Tensor.sort produced NaN in output 'values'",
                        "tensormodes.tensor produced NaN and Inf in its result"]
    assert all(w.category is RuntimeWarning and w.filename == HERE for w in caught)
    assert caught[0].lineno == _line_of("tm.max(t, dim=0)")


def test_nan_check_bfloat16_and_clean_runs():
    with NanCheckMode():
        mlp_step(*mlp_pieces())
        with pytest.raises(FloatingPointError, match="tensormodes.Tensor.div produced Inf"):
            tm.ones(1, dtype=tm.bfloat16) / 0
    with pytest.raises(ValueError, match="NanCheckMode: action must be 'raise' or 'warn', got 'ignore'"):
        NanCheckMode(action="ignore")


# -- TimingMode --------------------------------------------------------------------------------

def test_timing_inclusive_and_exclusive_with_a_fake_clock(monkeypatch):
    ticks = iter(range(0, 10_000_000, 1000))
    monkeypatch.setattr(timing_module, "perf_counter_ns", lambda: next(ticks))
    x = tm.ones(3)
    with TimingMode() as timer:
        F.softmax(x, dim=0)   # start 0, inner softmax 1000-2000, end 3000
        x + 1                 # 4000-5000
        x + 1                 # 6000-7000
    assert timer.stats == {"tensormodes.Tensor.softmax": OpTime(1, 1000, 1000),
                           "tensormodes.nn.functional.softmax": OpTime(1, 3000, 2000),
                           "tensormodes.Tensor.add": OpTime(2, 2000, 2000)}
    assert str(timer) == timer.table() == """\
function                           calls  exclusive  inclusive  exclusive/call
---------------------------------  -----  ---------  ---------  --------------
tensormodes.nn.functional.softmax      1    2.00 us    3.00 us         2.00 us
tensormodes.Tensor.add                 2    2.00 us    2.00 us         1.00 us
tensormodes.Tensor.softmax             1    1.00 us    1.00 us         1.00 us"""


def test_timing_real_clock_covers_backward():
    with TimingMode() as timer:
        mlp_step(*mlp_pieces())
    backward = timer.stats["tensormodes.Tensor.backward"]
    inner = sum(timer.stats[name].inclusive_ns for name in (
        "tensormodes._cross_entropy_loss_backward", "tensormodes._threshold_backward", "tensormodes.Tensor.t",
        "tensormodes.Tensor.matmul", "tensormodes.Tensor.sum", "tensormodes.Tensor.is_complex"))
    assert backward.calls == 1 and backward.exclusive_ns == backward.inclusive_ns - inner > 0


# -- DefaultDtypeMode --------------------------------------------------------------------------

def test_default_dtype_scope_restores_exactly():
    mode = DefaultDtypeMode(tm.float64)
    with mode:
        assert tm.get_default_dtype() is tm.float64 and tm.tensor([1.0]).dtype is tm.float64
        assert _get_current_function_mode_stack() == [mode]
        with DefaultDtypeMode(tm.float16):
            tm.set_default_dtype(tm.bfloat16)
            assert tm.ones(1).dtype is tm.bfloat16
        assert tm.get_default_dtype() is tm.float64
        with mode:                                   # the same instance, nested
            pass
        assert tm.get_default_dtype() is tm.float64
    assert tm.get_default_dtype() is tm.float32
    with pytest.raises(KeyError):
        with DefaultDtypeMode(tm.float64):
            raise KeyError("inside")
    assert tm.get_default_dtype() is tm.float32 and _get_current_function_mode_stack() == []


def test_default_dtype_is_per_thread_and_costs_no_dispatch():
    seen = []
    with DefaultDtypeMode(tm.float64) as mode:
        worker = threading.Thread(target=lambda: seen.append(tm.get_default_dtype()))
        worker.start()
        worker.join()
        assert "DefaultDtypeMode(tensormodes.float64): skips this function" in explain(tm.add, tm.ones(1), 1)
    assert seen == [tm.float32] and mode.handled_functions == frozenset()


@pytest.mark.parametrize("argument, message", [
    (tm.int64, "only floating-point types are supported as the default type"),
    (tm.complex64, "only floating-point types are supported as the default type"),
    ("float64", "DefaultDtypeMode(): argument 'dtype' must be a tensormodes.dtype, not str"),
])
def test_default_dtype_rejects_non_floating_types(argument, message):
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        DefaultDtypeMode(argument)


@pytest.mark.torch
def test_default_dtype_error_matches_torch():
    with pytest.raises(TypeError) as theirs:
        torch.set_default_dtype(torch.int64)
    with pytest.raises(TypeError) as ours:
        DefaultDtypeMode(tm.int64)
    assert str(ours.value) == str(theirs.value).replace("torch.", "tensormodes.")


# -- all together, and the table renderer ------------------------------------------------------

def test_every_mode_at_once_on_a_training_step():
    pieces = mlp_pieces()
    with FlopCounterMode(display=False) as alone:
        mlp_step(*pieces)
    # FlopCounterMode listens at the dispatch level, where composites decompose as PyTorch's (a
    # different set of public calls in the backward): the op counter and the logger alone are
    # compared under one too. (It declares the ops it counts, so autograd keeps its own forms: no
    # public ones_like seed, unlike under a pass-through dispatch mode.)
    logged_alone = []
    with OpCounterMode() as counted_alone, LoggingMode(logged_alone), FlopCounterMode(display=False):
        mlp_step(*pieces)
    # backward's seed is made below __torch_function__, as PyTorch's engine makes it: only dispatch modes see it
    assert logged_alone[:6] == MLP_LOG.splitlines()[:6] and not any("ones_like" in line for line in logged_alone)
    passing = []
    with LoggingMode(passing), BaseTorchDispatchMode():
        mlp_step(*pieces)
    assert passing[:6] == MLP_LOG.splitlines()[:6] and not any("ones_like" in line for line in passing)
    lines, user = [], []
    with (OpCounterMode() as counter, NanCheckMode(), TimingMode() as timer, FlopCounterMode(display=False) as flops,
          LoggingMode(lines), DefaultDtypeMode(tm.float64), Recorder(user)):
        mlp_step(*pieces)
    # Each observer sees what it sees alone: the composite calls, then their inner calls.
    assert flops.get_total_flops() == alone.get_total_flops() == 2 * 4 * 3 * 5 * 2
    assert counter.counts == counted_alone.counts
    assert lines == logged_alone
    assert timer.stats["tensormodes.nn.functional.relu"].calls == timer.stats["tensormodes.Tensor.relu"].calls == 1
    assert user == ["linear", "relu", "cross_entropy", "backward"]
    assert _get_current_function_mode_stack() == []


def test_a_user_mode_below_the_observers_still_receives_composite_calls():
    """A mode below that may override a composite gets the call itself, so the observers above
    see the call but not the calls inside it."""
    class DoubleRelu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            return result * 2 if func is F.relu else result

    lines, x = [], tm.ones(2)
    with DoubleRelu(), LoggingMode(lines):
        y = F.relu(x)
    assert y.tolist() == [2.0, 2.0]
    assert lines == ["tensormodes.nn.functional.relu(f32[2]) -> f32[2]"]


def test_render_table():
    assert render_table(["a", "bb"], [["x", 1.5], ["long name", "12"]]) == (
        "a           bb\n---------  ---\nx          1.5\nlong name   12")
    assert render_table(["a", "b"], [["x", "y"]], align="rl") == "a  b\n-  -\nx  y"


def test_rich_tables_need_rich_and_say_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "rich", None)
    monkeypatch.setitem(sys.modules, "rich.table", None)
    with pytest.raises(ImportError, match="needs the optional 'rich' package"):
        rich_table(["function"], [["tensormodes.add"]])


def test_rich_tables():
    pytest.importorskip("rich")
    table = rich_table(["function", "calls"], [["tensormodes.add", 2]], title="t")
    assert [c.header for c in table.columns] == ["function", "calls"] and table.row_count == 1
    with OpCounterMode() as counter:
        tm.ones(1)
    assert counter.rich_table().row_count == 1 and TimingMode().rich_table().row_count == 0
    assert FlopCounterMode(display=False).rich_table().row_count == 1


def test_backward_is_seen_even_above_a_catch_all_user_mode():
    x, w = tm.ones(8, 4), tm.ones(3, 4, requires_grad=True)
    seen = []
    with Recorder(seen), FlopCounterMode(display=False) as counter:
        F.linear(x, w).sum().backward()
    assert counter.get_total_flops() == 2 * (2 * 8 * 4 * 3)
    # The counter listens below autograd (a dispatch mode), so the user mode sees the calls it sees
    # without it, backward included, as with PyTorch's counter.
    assert seen == ["linear", "sum", "backward"]


def test_logging_indents_each_level_of_nesting():
    a = tm.ones(2, 3)
    with LoggingMode() as log:
        F.triplet_margin_loss(a, a, a)
    # F.triplet_margin_loss calls the builtin tm.triplet_margin_loss (aten-style arguments, the
    # reduction as an enum), whose body calls the builtin pairwise_distance, as PyTorch's do
    distance = ["    tensormodes.pairwise_distance(f32[2, 3], f32[2, 3], p=2) -> f32[2]",
                "      tensormodes.Tensor.sub(f32[2, 3], f32[2, 3]) -> f32[2, 3]",
                "      tensormodes.Tensor.add(f32[2, 3], 1e-06) -> f32[2, 3]",
                "      tensormodes.Tensor.dim(f32[2, 3]) -> 2",
                "      tensormodes._norm_dim(f32[2, 3], p=2, dim=-1) -> f32[2]"]  # ATen's norm overload: NormBackward1
    assert log.lines == [
        "tensormodes.nn.functional.triplet_margin_loss(f32[2, 3], f32[2, 3], f32[2, 3]) -> f32[]",
        "  tensormodes.triplet_margin_loss(f32[2, 3], f32[2, 3], f32[2, 3], p=2, reduction=1) -> f32[]",
        *["    tensormodes.Tensor.dim(f32[2, 3]) -> 2"] * 3, *distance, *distance,
        "    tensormodes.Tensor.add(f32[2], 1.0) -> f32[2]",
        "    tensormodes.Tensor.sub(f32[2], f32[2]) -> f32[2]",
        "    tensormodes.Tensor.clamp(f32[2], min=0) -> f32[2]",
        "    tensormodes.Tensor.mean(f32[2]) -> f32[]"]


def test_nan_check_ignores_uninitialized_memory():
    class NanMemory(TorchFunctionMode):  # below the check: "uninitialized" memory that holds NaNs
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            if func in (tm.empty, tm.empty_like, tm.Tensor.new_empty):
                result.fill_(float("nan"))
            return result

    with NanMemory(), NanCheckMode():
        assert tm.nn.Linear(2, 3).weight.isfinite().all()  # its weight is empty() until initialized
        assert tm.empty(2).isnan().all() and tm.empty(2, 2).t().detach().isnan().all()
        assert tm.empty_like(tm.ones(3)).isnan().all() and tm.ones(1).new_empty(2).isnan().all()
        with pytest.raises(FloatingPointError, match="tensormodes.Tensor.add produced NaN"):
            tm.empty(2) + 1


def test_a_composite_running_in_one_thread_hides_no_call_of_another(request):
    """Counters keep their composite depth per thread: a traced script's threads share one mode."""
    from tensormodes._api.build import composite
    from tensormodes._ops.registry import Tensor
    from tensormodes._overrides.dispatch import OVERRIDABLE, PUBLIC_NAMES

    inside, go_on = threading.Event(), threading.Event()

    def waiting(x: Tensor):
        inside.set()
        go_on.wait(10)
        return x + 1

    waiting.__module__ = __name__
    waiting = composite(__name__)(waiting)

    def unregister():  # the overridable-function lists must not keep this test's function
        registered = OVERRIDABLE[sys.modules[__name__]]
        registered.remove(waiting)
        if not registered:
            del OVERRIDABLE[sys.modules[__name__]]
        del PUBLIC_NAMES[waiting]

    request.addfinalizer(unregister)
    x = tm.ones(2)
    with OpCounterMode() as counter:
        worker = threading.Thread(target=contextvars.copy_context().run, args=(waiting, x))
        worker.start()
        assert inside.wait(10)
        for _ in range(3):
            x + 1
        go_on.set()
        worker.join()
    assert counter.counts["tensormodes.Tensor.add"] == 3  # the composite's own add is not counted
    assert counter.counts[f"{__name__}.waiting"] == 1
