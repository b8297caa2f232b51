"""`tensormodes trace` end to end, through subprocess: exit codes, the script's argv and
sys.path, its exceptions (its own traceback, tensormodes' frames trimmed), reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def trace(tmp_path: Path, script: str, *argv: str, name: str = "script.py") -> subprocess.CompletedProcess:
    path = tmp_path / name
    path.write_text(textwrap.dedent(script))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "tensormodes", "trace", str(path), *argv], capture_output=True,
                          text=True, timeout=300, env=env, cwd=tmp_path)


PROGRAM = """\
    import sys
    import tensormodes as tm
    x = tm.ones(2, 3, requires_grad=True)
    w = tm.ones(3, 4)
    y = (x @ w).relu().sum()
    y.backward()
    print("argv", sys.argv[1:], "result", y.item())
"""


def test_no_flags_runs_the_script_plainly(tmp_path):
    result = trace(tmp_path, PROGRAM, "--", "--epochs", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "argv ['--epochs', '2'] result 24.0\n"
    assert result.stderr == ""


def test_the_script_runs_as_main_with_its_folder_first_on_sys_path(tmp_path):
    (tmp_path / "helper_module.py").write_text("VALUE = 7\n")
    script = """\
        import sys, helper_module
        print(__name__, helper_module.VALUE, sys.argv[0].endswith("script.py"))
    """
    result = trace(tmp_path, script)
    assert result.stdout == "__main__ 7 True\n", result.stderr


@pytest.mark.parametrize(("code", "expected"), [("sys.exit(3)", 3), ("sys.exit(0)", 0), ("sys.exit()", 0),
                                                ("sys.exit('bye')", 1)])
def test_exit_codes_are_the_scripts(tmp_path, code, expected):
    result = trace(tmp_path, f"import sys\n{code}\n", "--count")
    assert result.returncode == expected
    if expected == 1:
        assert "bye" in result.stderr


def test_an_exception_prints_the_scripts_traceback_without_tensormodes_frames_and_still_reports(tmp_path):
    script = """\
        import tensormodes as tm

        def step():
            return tm.ones(2) + tm.ones(3)

        step()
    """
    result = trace(tmp_path, script, "--count")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert 'script.py", line 6, in <module>' in lines[1]
    assert 'script.py", line 4, in step' in lines[3]
    error = next(line for line in lines if line.startswith("RuntimeError"))
    assert error.startswith("RuntimeError: The size of tensor a (2) must match the size of tensor b (3)")
    assert [line for line in lines if line.startswith("  File ")] == [lines[1], lines[3]]
    assert "tensormodes/" not in result.stderr.split("== ")[0] and "runpy" not in result.stderr
    assert "tensormodes.ones" in result.stderr  # the partial op counts follow


def test_a_missing_script_is_an_error(tmp_path):
    result = subprocess.run([sys.executable, "-m", "tensormodes", "trace", str(tmp_path / "nope.py")],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert result.returncode == 2
    assert "can't open file" in result.stderr and "nope.py" in result.stderr


def test_help_explains_each_flag(tmp_path):
    result = subprocess.run([sys.executable, "-m", "tensormodes", "trace", "--help"], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert result.returncode == 0
    for flag in ("--log", "--dispatch", "--flops", "--count", "--nan", "--time", "--report", "--quiet", "examples:"):
        assert flag in result.stdout


def test_count_and_flops_tables(tmp_path):
    result = trace(tmp_path, PROGRAM, "--count", "--flops")
    assert result.returncode == 0, result.stderr
    assert "== calls per function" in result.stderr
    assert "tensormodes.Tensor.relu" in result.stderr
    assert "== FLOPs" in result.stderr
    # (2x3) @ (3x4): 2*2*3*4 = 48 forward; backward computes only x's gradient (w does not require grad): 48
    assert "96" in result.stderr


def test_nan_stops_at_the_users_line(tmp_path):
    script = """\
        import tensormodes as tm
        x = tm.tensor([1.0, -1.0])
        y = x.sqrt()
        print("not reached")
    """
    result = trace(tmp_path, script, "--nan")
    assert result.returncode == 1
    assert "not reached" not in result.stdout
    assert "FloatingPointError: tensormodes.Tensor.sqrt produced NaN" in result.stderr
    assert "script.py:3: y = x.sqrt()" in result.stderr


def test_log_to_a_file_and_json_report(tmp_path):
    result = trace(tmp_path, PROGRAM, "--log=calls.txt", "--count", "--time", "--report", "run.json", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    log = (tmp_path / "calls.txt").read_text()
    assert "tensormodes.ones(2, 3, requires_grad=True) -> f32[2, 3]{grad}" in log
    report = json.loads((tmp_path / "run.json").read_text())
    assert report["schema"] == "tensormodes.trace/1"
    assert report["status"] == "finished" and report["exit_code"] == 0
    assert report["argv"] == []
    assert report["modes"]["count"]["tensormodes.ones"] == 2
    assert report["modes"]["time"]["tensormodes.ones"]["calls"] == 2
    assert report["modes"]["log"] == {"file": "calls.txt"}


DISPATCH_LOG = """\
== aten calls below autograd, under the line that ran them (backward: the forward line)
# script.py:3 in <module>: x = tm.ones(2, 3, requires_grad=True)
aten::ones([2, 3], device=cpu, pin_memory=False)  ->  t: f32[2, 3]
# script.py:4 in <module>: w = tm.ones(3, 4)
aten::ones([3, 4], device=cpu, pin_memory=False)  ->  t: f32[3, 4]
# script.py:5 in <module>: y = (x @ w).relu().sum()
aten::mm(t: f32[2, 3], t: f32[3, 4])  ->  t: f32[2, 4]
aten::relu(t: f32[2, 4])  ->  t: f32[2, 4]
aten::sum(t: f32[2, 4])  ->  t: f32[]
# script.py:6 in <module>: y.backward()
aten::ones_like(t: f32[], pin_memory=False, memory_format=tensormodes.preserve_format)  ->  t: f32[]
# backward of script.py:5 in <module>: y = (x @ w).relu().sum()
aten::expand(t: f32[], [2, 4])  ->  t: f32[2, 4]
aten::threshold_backward(t: f32[2, 4], t: f32[2, 4], 0)  ->  t: f32[2, 4]
aten::t(t: f32[3, 4])  ->  t: f32[4, 3]
aten::mm(t: f32[2, 4], t: f32[4, 3])  ->  t: f32[2, 3]
aten::detach(t: f32[2, 3])  ->  t: f32[2, 3]
# script.py:7 in <module>: print("argv", sys.argv[1:], "result", y.item())
aten::_local_scalar_dense(t: f32[])  ->  24.0
"""


def test_dispatch_log_shows_aten_calls_under_the_users_line_and_backward_under_the_forward_line(tmp_path):
    result = trace(tmp_path, PROGRAM, "--dispatch")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "argv [] result 24.0\n"
    assert result.stderr == "\n" + DISPATCH_LOG


MODULE_PROGRAM = """\
    import tensormodes as tm

    class Net(tm.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = tm.nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x).tanh()

    net = Net()
    x = tm.ones(4, 3)
    net(x).sum().backward()
"""


def test_dispatch_log_to_a_file_nests_module_calls_and_goes_to_the_report(tmp_path):
    result = trace(tmp_path, MODULE_PROGRAM, "--dispatch=aten.txt", "--report", "run.json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "\n== aten call log written to aten.txt\n"
    lines = (tmp_path / "aten.txt").read_text().splitlines()
    start = lines.index("# script.py:13 in <module>: net(x).sum().backward()")
    assert lines[start:start + 9] == [
        "# script.py:13 in <module>: net(x).sum().backward()",
        "[nn.Mod] Net",
        "  # script.py:9 in forward: return self.fc(x).tanh()",
        "  [nn.Mod] Net.fc",
        "    aten::t(t: f32[2, 3])  ->  t: f32[3, 2]",
        "    aten::addmm(t: f32[2], t: f32[4, 3], t: f32[3, 2])  ->  t: f32[4, 2]",
        "  aten::tanh(t: f32[4, 2])  ->  t: f32[4, 2]",
        "# script.py:13 in <module>: net(x).sum().backward()",
        "aten::sum(t: f32[4, 2])  ->  t: f32[]"]
    # tanh's gradient under the line of the forward that made its node; the layer's under fc's
    assert lines[start + 12:start + 14] == ["# backward of script.py:9 in forward: return self.fc(x).tanh()",
                                            "aten::tanh_backward(t: f32[4, 2], t: f32[4, 2])  ->  t: f32[4, 2]"]
    report = json.loads((tmp_path / "run.json").read_text())
    assert report["modes"]["dispatch"] == {"file": "aten.txt"}
    quiet = trace(tmp_path, PROGRAM, "--dispatch", "--report", "run.json", "--quiet")
    assert quiet.stderr == ""
    assert json.loads((tmp_path / "run.json").read_text())["modes"]["dispatch"] == {
        "lines": DISPATCH_LOG.splitlines()[1:]}


def test_ctrl_c_exits_130_with_partial_reports(tmp_path):
    script = """\
        import tensormodes as tm
        tm.ones(1)
        raise KeyboardInterrupt
    """
    result = trace(tmp_path, script, "--count")
    assert result.returncode == 130
    assert "interrupted" in result.stderr and "tensormodes.ones" in result.stderr


def test_flops_report_by_module_path_and_public_name(tmp_path):
    result = trace(tmp_path, PROGRAM, "--flops", "--report", "run.json", "--quiet")
    assert result.returncode == 0, result.stderr
    flops = json.loads((tmp_path / "run.json").read_text())["modes"]["flops"]
    assert flops == {"total": 96, "by_module": {"Global": {"aten.mm": 96}}}


def test_graph_traces_the_first_model_and_draws_it_with_shapes(tmp_path):
    script = """\
        import tensormodes as tm
        from tensormodes import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        for _ in range(2):
            model(tm.randn(3, 4)).sum().backward()
    """
    result = trace(tmp_path, script, "--graph", "model.dot", "--report", "run.json")
    assert result.returncode == 0, result.stderr
    assert "== graph of Sequential (5 nodes) written to model.dot" in result.stderr
    dot = (tmp_path / "model.dot").read_text()
    assert "call_module" in dot and "[3, 8] tensormodes.float32" in dot and "[3, 2] tensormodes.float32" in dot
    assert json.loads((tmp_path / "run.json").read_text())["modes"]["graph"] == {
        "path": "model.dot", "model": "Sequential", "error": None}


def test_graph_without_a_model_says_so(tmp_path):
    result = trace(tmp_path, "import tensormodes as tm\ntm.ones(1)\n", "--graph", "g.dot")
    assert result.returncode == 0
    assert "graph: the script called no nn.Module" in result.stderr
    assert not (tmp_path / "g.dot").exists()


def test_shapes_lists_the_models_layers_computed_on_the_meta_device(tmp_path):
    script = """\
        import tensormodes as tm
        from tensormodes import nn
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(8 * 4 * 4, 10))
        for _ in range(2):
            model(tm.randn(64, 1, 8, 8)).sum().backward()
        print(next(model.parameters()).device)
    """
    result = trace(tmp_path, script, "--shapes", "--report", "run.json")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "cpu\n"  # the script's own model is left as it was
    assert """\
== shapes of Sequential for inputs [64, 1, 8, 8] (computed on the meta device)
module   type        output shape   parameters
-------  ----------  -------------  ----------
(model)  Sequential  [64, 10]            1,370
0        Conv2d      [64, 8, 8, 8]          80
1        ReLU        [64, 8, 8, 8]           0
2        MaxPool2d   [64, 8, 4, 4]           0
3        Flatten     [64, 128]               0
4        Linear      [64, 10]            1,290""" in result.stderr
    rows = json.loads((tmp_path / "run.json").read_text())["modes"]["shapes"]["rows"]
    assert rows[1] == {"module": "0", "type": "Conv2d", "output_shapes": [[64, 8, 8, 8]], "parameters": 80}


def test_shapes_says_why_a_model_cannot_run_on_meta(tmp_path):
    script = """\
        import tensormodes as tm
        from tensormodes import nn
        class Picky(nn.Module):
            def forward(self, x):
                return x[x > 0]  # a boolean mask: the output shape depends on values
        Picky()(tm.randn(5))
    """
    result = trace(tmp_path, script, "--shapes")
    assert result.returncode == 0, result.stderr
    assert "== shapes: Picky could not run on the meta device (DataDependentOutputError: getitem(): " in result.stderr
