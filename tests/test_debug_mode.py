"""DebugMode: PyTorch 2.13's call log at the dispatch level (its exact text), tensor ids that stay
the same across autograd's saved tensors, and output hashes to diff two runs."""

from __future__ import annotations

import runpy

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.utils import _debug_mode
from tensormodes.utils._debug_mode import DebugMode, diff, get_active_debug_mode, hash_tensor_data
from tensormodes.utils._python_dispatch import _get_current_dispatch_mode_stack

try:
    import torch
    from torch.utils._debug_mode import DebugMode as TorchDebugMode
except ImportError:  # the cross-reference oracle is optional
    torch = None


def mlp_step(library, debug_mode, steps: int = 1, scale: float = 1.0, **options):
    """A small MLP's forward and backward (an explicit output gradient: PyTorch's ``ones_like`` seed
    passes arguments this library's does not), logged by ``debug_mode(**options)``."""
    rng = np.random.default_rng(0)
    library.manual_seed(0)
    nn = library.nn
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    x = library.tensor(rng.standard_normal((5, 4)).astype(np.float32) * scale)
    target = library.tensor(rng.standard_normal((5, 2)).astype(np.float32))
    seed = library.ones(())
    with debug_mode(**options) as dm:
        for _ in range(steps):
            (model(x) * target).sum().backward(seed)
    return dm


MLP_LOG = """\
    aten::t(t: f32[3, 4])  ->  t: f32[4, 3]
    aten::addmm(t: f32[3], t: f32[5, 4], t: f32[4, 3])  ->  t: f32[5, 3]
    aten::relu(t: f32[5, 3])  ->  t: f32[5, 3]
    aten::t(t: f32[2, 3])  ->  t: f32[3, 2]
    aten::addmm(t: f32[2], t: f32[5, 3], t: f32[3, 2])  ->  t: f32[5, 2]
    aten::mul.Tensor(t: f32[5, 2], t: f32[5, 2])  ->  t: f32[5, 2]
    aten::sum(t: f32[5, 2])  ->  t: f32[]
    aten::expand(t: f32[], [5, 2])  ->  t: f32[5, 2]
    aten::mul.Tensor(t: f32[5, 2], t: f32[5, 2])  ->  t: f32[5, 2]
    aten::t(t: f32[3, 2])  ->  t: f32[2, 3]
    aten::mm(t: f32[5, 2], t: f32[2, 3])  ->  t: f32[5, 3]
    aten::t(t: f32[5, 2])  ->  t: f32[2, 5]
    aten::mm(t: f32[2, 5], t: f32[5, 3])  ->  t: f32[2, 3]
    aten::t(t: f32[2, 3])  ->  t: f32[3, 2]
    aten::sum.dim_IntList(t: f32[5, 2], [0], True)  ->  t: f32[1, 2]
    aten::view(t: f32[1, 2], [2])  ->  t: f32[2]
    aten::detach(t: f32[2])  ->  t: f32[2]
    aten::t(t: f32[3, 2])  ->  t: f32[2, 3]
    aten::detach(t: f32[2, 3])  ->  t: f32[2, 3]
    aten::threshold_backward(t: f32[5, 3], t: f32[5, 3], 0)  ->  t: f32[5, 3]
    aten::t(t: f32[5, 3])  ->  t: f32[3, 5]
    aten::mm(t: f32[3, 5], t: f32[5, 4])  ->  t: f32[3, 4]
    aten::t(t: f32[3, 4])  ->  t: f32[4, 3]
    aten::sum.dim_IntList(t: f32[5, 3], [0], True)  ->  t: f32[1, 3]
    aten::view(t: f32[1, 3], [3])  ->  t: f32[3]
    aten::detach(t: f32[3])  ->  t: f32[3]
    aten::t(t: f32[4, 3])  ->  t: f32[3, 4]
    aten::detach(t: f32[3, 4])  ->  t: f32[3, 4]"""


def test_debug_string_of_an_mlp_step_forward_and_backward():
    assert mlp_step(tm, DebugMode).debug_string() == MLP_LOG


# relu's output t$5 is saved for threshold_backward: it keeps its id there (PyTorch: a new one)
MLP_LOG_IDS = """\
    aten::t(t$0: f32[3, 4])  ->  t$1: f32[4, 3]
    aten::addmm(t$2: f32[3], t$3: f32[5, 4], t$1: f32[4, 3])  ->  t$4: f32[5, 3]
    aten::relu(t$4: f32[5, 3])  ->  t$5: f32[5, 3]
    aten::t(t$6: f32[2, 3])  ->  t$7: f32[3, 2]
    aten::addmm(t$8: f32[2], t$5: f32[5, 3], t$7: f32[3, 2])  ->  t$9: f32[5, 2]
    aten::mul.Tensor(t$9: f32[5, 2], t$10: f32[5, 2])  ->  t$11: f32[5, 2]
    aten::sum(t$11: f32[5, 2])  ->  t$12: f32[]
    aten::expand(t$13: f32[], [5, 2])  ->  t$14: f32[5, 2]
    aten::mul.Tensor(t$14: f32[5, 2], t$10: f32[5, 2])  ->  t$15: f32[5, 2]
    aten::t(t$7: f32[3, 2])  ->  t$16: f32[2, 3]
    aten::mm(t$15: f32[5, 2], t$16: f32[2, 3])  ->  t$17: f32[5, 3]
    aten::t(t$15: f32[5, 2])  ->  t$18: f32[2, 5]
    aten::mm(t$18: f32[2, 5], t$5: f32[5, 3])  ->  t$19: f32[2, 3]
    aten::t(t$19: f32[2, 3])  ->  t$20: f32[3, 2]
    aten::sum.dim_IntList(t$15: f32[5, 2], [0], True)  ->  t$21: f32[1, 2]
    aten::view(t$21: f32[1, 2], [2])  ->  t$22: f32[2]
    aten::detach(t$22: f32[2])  ->  t$23: f32[2]
    aten::t(t$20: f32[3, 2])  ->  t$24: f32[2, 3]
    aten::detach(t$24: f32[2, 3])  ->  t$25: f32[2, 3]
    aten::threshold_backward(t$17: f32[5, 3], t$5: f32[5, 3], 0)  ->  t$26: f32[5, 3]
    aten::t(t$26: f32[5, 3])  ->  t$27: f32[3, 5]
    aten::mm(t$27: f32[3, 5], t$3: f32[5, 4])  ->  t$28: f32[3, 4]
    aten::t(t$28: f32[3, 4])  ->  t$29: f32[4, 3]
    aten::sum.dim_IntList(t$26: f32[5, 3], [0], True)  ->  t$30: f32[1, 3]
    aten::view(t$30: f32[1, 3], [3])  ->  t$31: f32[3]
    aten::detach(t$31: f32[3])  ->  t$32: f32[3]
    aten::t(t$29: f32[4, 3])  ->  t$33: f32[3, 4]
    aten::detach(t$33: f32[3, 4])  ->  t$34: f32[3, 4]"""


def test_record_ids_keep_a_saved_tensor_s_id_in_backward():
    assert mlp_step(tm, DebugMode, record_ids=True).debug_string() == MLP_LOG_IDS


def test_a_saved_output_of_a_single_op_keeps_its_id():
    x, seed = tm.tensor([1.0, 2.0], requires_grad=True), tm.ones(2)
    with DebugMode(record_ids=True) as dm:
        y = x.tanh()
        y.backward(seed)
    lines = dm.debug_string().splitlines()
    assert lines[0] == "    aten::tanh(t$0: f32[2])  ->  t$1: f32[2]"
    assert lines[1] == "    aten::tanh_backward(t$2: f32[2], t$1: f32[2])  ->  t$3: f32[2]"
    assert len(lines) == 3  # (and the accumulation's detach); the saved alias is not logged


MLP_LOG_MODULES_HEAD = """\
    [nn.Mod] Sequential
      [nn.Mod] Sequential.0
        aten::t(t: f32[3, 4])  ->  t: f32[4, 3]
        aten::addmm(t: f32[3], t: f32[5, 4], t: f32[4, 3])  ->  t: f32[5, 3]
      [nn.Mod] Sequential.1
        aten::relu(t: f32[5, 3])  ->  t: f32[5, 3]
      [nn.Mod] Sequential.2
        aten::t(t: f32[2, 3])  ->  t: f32[3, 2]
        aten::addmm(t: f32[2], t: f32[5, 3], t: f32[3, 2])  ->  t: f32[5, 2]
    aten::mul.Tensor(t: f32[5, 2], t: f32[5, 2])  ->  t: f32[5, 2]
"""


def test_record_nn_module_nests_ops_under_module_lines():
    text = mlp_step(tm, DebugMode, record_nn_module=True).debug_string()
    assert text.startswith(MLP_LOG_MODULES_HEAD)
    assert text[len(MLP_LOG_MODULES_HEAD):] == "\n".join(MLP_LOG.splitlines()[6:])
    dm = mlp_step(tm, DebugMode, record_nn_module=True)
    assert [type(call).__name__ for call in dm.operators[:3]] == ["_AnnotateCall", "_AnnotateCall", "_OpCall"]
    assert tuple(dm.operators[1]) == ("[nn.Mod] Sequential.0", (), {}, 2)
    assert tuple(dm.operators[2]) == (tm.ops.aten.t.default, "t: f32[3, 4]", "", 3)


def test_record_torchfunction_puts_the_public_calls_above_their_aten_calls():
    a, w = tm.ones(2, 3), tm.ones(4, 3)
    with DebugMode(record_torchfunction=True) as dm:
        tm.nn.functional.linear(a, w).relu()
    assert dm.debug_string() == """\
  tensormodes._C._nn.linear(t: f32[2, 3], t: f32[4, 3])  ->  t: f32[2, 4]
      aten::t(t: f32[4, 3])  ->  t: f32[3, 4]
      aten::mm(t: f32[2, 3], t: f32[3, 4])  ->  t: f32[2, 4]
  <method 'relu' of 'tensormodes._C.TensorBase' objects>(t: f32[2, 4])  ->  t: f32[2, 4]
      aten::relu(t: f32[2, 4])  ->  t: f32[2, 4]"""


def test_outputs_factories_and_options():
    with DebugMode() as dm:
        x = tm.ones(2)
        x.max(0)
    assert dm.debug_string() == """\
    aten::ones([2], device=cpu, pin_memory=False)  ->  t: f32[2]
    aten::max.dim(t: f32[2], 0)  ->  ('t: f32[]', 't: i64[]')"""
    with DebugMode(record_output=False, record_tensor_attributes=["requires_grad"]) as dm:
        tm.ones(2, requires_grad=True).sum()
    assert dm.debug_string().splitlines()[-1] == "    aten::sum(t: f32[2]{requires_grad=True})"
    with DebugMode(store_original_args=True) as dm:
        x.exp()
    assert dm.operators[0].args[0] is x and dm.logs[0].render([]) == "aten::exp(t: f32[2])  ->  t: f32[2]"


def test_mode_stack_is_restored_and_the_active_mode_found():
    assert get_active_debug_mode() is None
    with pytest.raises(RuntimeError), DebugMode(record_torchfunction=True, record_nn_module=True) as dm:
        assert get_active_debug_mode() is dm
        tm.ones(2, 3) @ tm.ones(2, 3)
    assert _get_current_dispatch_mode_stack() == [] and get_active_debug_mode() is None
    assert "  <method 'matmul' of 'tensormodes._C.TensorBase' objects>(t: f32[2, 3], t: f32[2, 3])" in \
        dm.debug_string().splitlines()
    with DebugMode() as dm:
        DebugMode._annotate("step 1")
        tm.ones(1)
    assert dm.debug_string().splitlines()[0] == "  [annotate] step 1"


def test_dispatch_hooks_and_norm_hashes():
    with DebugMode() as dm, DebugMode.log_tensor_hashes(hash_inputs=True):
        tm.tensor([1.0, -2.0]).neg()
    assert dm.debug_string().splitlines()[-1] == (
        "    aten::neg(t: f32[2])  ->  t: f32[2]  # {'input_hash': ((3.0,), {}), 'hash': 3.0}")
    with DebugMode() as dm, DebugMode.dispatch_hooks(record_hook=lambda f, t, a, k, r: {"name": str(f)}):
        tm.ones(1)
    assert dm.operators[0].record == {"name": "aten.ones.default"} and dm.operators[0].log is None
    with pytest.raises(AssertionError, match="hash_type must be 'norm'"):
        with DebugMode.log_tensor_hashes("sha"):
            pass
    assert _debug_mode._LOG_HOOKS == _debug_mode._PRE_LOG_HOOKS == _debug_mode._RECORD_HOOKS == []


# -- stack traces: the user's line, and for backward ops the forward line ----------------------

STACK_PROGRAM = """\
import numpy as np
from {module} import DebugMode
x = L.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
seed = L.ones(())
with DebugMode(record_stack_trace=True) as dm:
    y = (x * 2).relu()
    z = y.sum()
    z.backward(seed)
"""


def _stack_log(tmp_path, library, module: str) -> str:
    path = tmp_path / "prog.py"
    path.write_text(STACK_PROGRAM.format(module=module))
    return runpy.run_path(str(path), init_globals={"L": library})["dm"].debug_string()


def test_stack_traces_show_the_forward_line_of_backward_ops(tmp_path):
    text = _stack_log(tmp_path, tm, "tensormodes.utils._debug_mode").replace(str(tmp_path), "DIR")
    # the backward ops under the forward line that made their node (the accumulation into x.grad:
    # the line where x was first used), as PyTorch's
    assert text == """\
    # File: DIR/prog.py:6 in <module>, code: y = (x * 2).relu()
    aten::mul.Tensor(t: f32[2, 3], 2)  ->  t: f32[2, 3]
    aten::relu(t: f32[2, 3])  ->  t: f32[2, 3]

    # File: DIR/prog.py:7 in <module>, code: z = y.sum()
    aten::sum(t: f32[2, 3])  ->  t: f32[]
    aten::expand(t: f32[], [2, 3])  ->  t: f32[2, 3]

    # File: DIR/prog.py:6 in <module>, code: y = (x * 2).relu()
    aten::threshold_backward(t: f32[2, 3], t: f32[2, 3], 0)  ->  t: f32[2, 3]
    aten::mul.Tensor(t: f32[2, 3], 2)  ->  t: f32[2, 3]
    aten::detach(t: f32[2, 3])  ->  t: f32[2, 3]"""


# -- PyTorch as the oracle ----------------------------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("options", [{}, {"record_nn_module": True}, {"record_output": False}],
                         ids=["default", "nn_module", "no_output"])
def test_debug_string_equals_pytorchs(options):
    ours = mlp_step(tm, DebugMode, **options).debug_string()
    theirs = mlp_step(torch, TorchDebugMode, **options).debug_string()
    assert ours == theirs


@pytest.mark.torch
def test_torchfunction_level_lines_are_where_pytorch_puts_them():
    ours = mlp_step(tm, DebugMode, record_torchfunction=True).debug_string().splitlines()
    theirs = mlp_step(torch, TorchDebugMode, record_torchfunction=True).debug_string().splitlines()
    # the aten lines and every line's nesting are PyTorch's; the public functions are named as
    # PyTorch names its own, ``torch`` read ``tensormodes``
    assert [line for line in ours if "aten::" in line] == [line for line in theirs if "aten::" in line]
    assert [len(line) - len(line.lstrip()) for line in ours] == [len(line) - len(line.lstrip()) for line in theirs]
    names = [line.split("(t: ")[0] for line in ours if "aten::" not in line]
    assert names == [line.split("(t: ")[0].replace("torch", "tensormodes") for line in theirs if "aten::" not in line]
    assert names == ["  tensormodes._C._nn.linear", "  tensormodes.nn.functional.relu", "  tensormodes._C._nn.linear",
                     "  <method 'mul' of 'tensormodes._C.TensorBase' objects>",
                     "  <method 'sum' of 'tensormodes._C.TensorBase' objects>", "  tensormodes._tensor.backward"]
    # and so are the arguments handlers receive: line for line PyTorch's text
    assert [line.replace("tensormodes", "torch") for line in ours] == theirs
    assert ours[0] == "  tensormodes._C._nn.linear(t: f32[5, 4], t: f32[3, 4], t: f32[3])  ->  t: f32[5, 3]"


CALL_NAMES = {  # public callables as PyTorch's DebugMode names them (``torch`` read ``tensormodes``)
    "add": "tensormodes.add", "nn.functional.softmax": "tensormodes.nn.functional.softmax",
    "linalg.vector_norm": "tensormodes._C._linalg.linalg_vector_norm",
    "special.erf": "tensormodes._C._special.special_erf", "fft.fft": "tensormodes._C._fft.fft_fft",
    "Tensor.add_": "<method 'add_' of 'tensormodes._C.TensorBase' objects>",
    "Tensor.__add__": "<method '__add__' of 'tensormodes._C.TensorBase' objects>",
    "Tensor.__getitem__": "<slot wrapper '__getitem__' of 'tensormodes._C.TensorBase' objects>",
    "Tensor.size": "<method 'size' of 'tensormodes._C.TensorBase' objects>",
    "nn.functional.gelu": "tensormodes._C._nn.gelu", "nn.functional.logsigmoid": "tensormodes._C._nn.log_sigmoid",
    "nn.functional.leaky_relu_": "tensormodes._C._nn.leaky_relu_", "nn.functional.prelu": "tensormodes.prelu",
    "nn.functional.pairwise_distance": "tensormodes.pairwise_distance",
}


def _callable(library, path: str):
    for part in path.split("."):
        library = getattr(library, part)
    return library


def test_public_calls_are_named_where_pytorch_keeps_them():
    assert {path: _debug_mode._op_name(_callable(tm, path)) for path in CALL_NAMES} == CALL_NAMES
    if torch is not None:
        from torch.utils._debug_mode._utils import _get_op_name

        assert {path: _get_op_name(_callable(torch, path)).replace("torch", "tensormodes")
                for path in CALL_NAMES} == CALL_NAMES


@pytest.mark.torch
def test_every_functional_is_named_as_pytorch_names_it():
    from torch.utils._debug_mode._utils import _get_op_name

    differing = {}
    for name in dir(torch.nn.functional):
        theirs, ours = getattr(torch.nn.functional, name), getattr(tm.nn.functional, name, None)
        if name.startswith("_") or not callable(theirs) or ours is None or isinstance(theirs, type):
            continue
        expected = _get_op_name(theirs).replace("torch", "tensormodes")
        if _debug_mode._op_name(ours) != expected:
            differing[name] = (_debug_mode._op_name(ours), expected)
    assert differing == {}


@pytest.mark.torch
def test_ids_equal_pytorchs_but_for_the_saved_output():
    ours = mlp_step(tm, DebugMode, record_ids=True).debug_string().splitlines()
    theirs = mlp_step(torch, TorchDebugMode, record_ids=True).debug_string().splitlines()
    assert ours[:19] == theirs[:19]
    # PyTorch gives relu's saved output a new id in backward, t$26, and numbers on from there
    assert theirs[19] == "    aten::threshold_backward(t$17: f32[5, 3], t$26: f32[5, 3], 0)  ->  t$27: f32[5, 3]"
    assert ours[19] == "    aten::threshold_backward(t$17: f32[5, 3], t$5: f32[5, 3], 0)  ->  t$26: f32[5, 3]"


@pytest.mark.torch
def test_stack_trace_groups_equal_pytorchs(tmp_path):
    ours = _stack_log(tmp_path, tm, "tensormodes.utils._debug_mode")
    theirs = _stack_log(tmp_path, torch, "torch.utils._debug_mode")
    assert ours == theirs


@pytest.mark.torch
def test_tuple_outputs_and_factories_print_as_pytorchs():
    logs = []
    for library, mode in ((tm, DebugMode), (torch, TorchDebugMode)):
        with mode() as dm:
            x = library.zeros(3, 2)
            x.max(1)
            x.sort(0)
        logs.append(dm.debug_string())
    assert logs[0] == logs[1]


# -- hashes and diff ----------------------------------------------------------------------------

def test_output_hashes_are_stable_values():
    assert hash_tensor_data(tm.ones(3)) == "de52363476b964b1"  # blake2b of "float32(3,)" and the bytes
    assert hash_tensor_data(tm.ones(3, dtype=tm.float64)) != hash_tensor_data(tm.ones(3))
    assert hash_tensor_data(tm.empty(3, device="meta")) is None
    with DebugMode(record_hash=True) as dm:
        tm.ones(3).max(0)
    assert dm.operators[1].log == {"hash": ("4415305ac0a01025", "af7dab17550b4944")}


def test_diff_is_none_for_identical_runs():
    assert diff(mlp_step(tm, DebugMode, record_hash=True), mlp_step(tm, DebugMode, record_hash=True)) is None


def test_diff_names_the_first_op_whose_output_data_differs():
    a = mlp_step(tm, DebugMode, record_hash=True)
    b = mlp_step(tm, DebugMode, record_hash=True, scale=1.5)  # another input: addmm differs first
    found = diff(a, b)
    assert (found.index, found.op, found.output, found.reason) == (1, "aten::addmm", "", "different output data")
    assert found.a == a.operators[1].log["hash"] and found.b == b.operators[1].log["hash"]
    assert str(found).startswith("logs diverge at entry 1, aten::addmm: different output data (output: '")


def test_diff_names_which_output_and_a_different_op():
    def run(values, op):
        x = tm.tensor(values)
        with DebugMode(record_hash=True) as dm:
            getattr(x, op)(0)
            x.exp()
        return dm

    found = diff(run([3.0, 1.0, 2.0], "sort"), run([3.0, 1.0, 4.0], "sort"))
    assert (found.index, found.op, found.output) == (0, "aten::sort", "[0]")  # values differ, indices not
    found = diff(run([3.0, 1.0, 2.0], "sort"), run([3.0, 1.0, 2.0], "max"))
    assert (found.index, found.reason, found.a, found.b) == (0, "a different op", "aten::sort", "aten::max.dim")
    assert diff(run([1.0], "sort").operators, run([1.0], "sort").operators[:1]) == (
        _debug_mode.Divergence(1, "aten::exp", None, "the second log ends", 2, 1))


def test_diff_of_two_training_runs_finds_the_step_that_diverged():
    a = mlp_step(tm, DebugMode, steps=2, record_hash=True)
    b = mlp_step(tm, DebugMode, steps=2, record_hash=True)
    assert diff(a, b) is None
    # the same program with one kernel's result altered: the diff names that op
    ops = a.operators
    position = next(i for i, call in enumerate(ops) if call.op is tm.ops.aten.threshold_backward.default)
    ops[position].log = {"hash": "0" * 16}
    found = diff(a, b)
    assert (found.index, found.op, found.output) == (position, "aten::threshold_backward", "")


def _linear_on_a_leaf(library, mode):
    library.manual_seed(0)
    x = library.randn(3, 4, requires_grad=True)
    lin = library.nn.Sequential(library.nn.Linear(4, 2), library.nn.Identity())
    with mode(record_nn_module=True) as dm:
        lin(x).sum()
    return dm.debug_string()


def test_module_inputs_requiring_grad_are_viewed_as_pytorchs_module_tracker_does():
    # PyTorch's tracker finds a leaf input's gradient accumulator through view_as (aten::view);
    # (once per module it enters); outputs with history need none
    assert _linear_on_a_leaf(tm, DebugMode) == """\
    [nn.Mod] Sequential
      aten::view(t: f32[3, 4], [3, 4])  ->  t: f32[3, 4]
      [nn.Mod] Sequential.0
        aten::view(t: f32[3, 4], [3, 4])  ->  t: f32[3, 4]
        aten::t(t: f32[2, 4])  ->  t: f32[4, 2]
        aten::addmm(t: f32[2], t: f32[3, 4], t: f32[4, 2])  ->  t: f32[3, 2]
      [nn.Mod] Sequential.1
    aten::sum(t: f32[3, 2])  ->  t: f32[]"""


@pytest.mark.torch
def test_module_tracker_views_equal_pytorchs():
    assert _linear_on_a_leaf(tm, DebugMode) == _linear_on_a_leaf(torch, TorchDebugMode)
