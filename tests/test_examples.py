"""The bundled examples run from a shell and do what their docstrings say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = str(ROOT / "src")


def run_example(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": SOURCE, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)


def accuracies(output: str) -> dict[str, float]:
    line = re.search(r"^test accuracy: (.*)$", output, re.M).group(1)
    return {name: float(value) for name, value in re.findall(r"(\w+) ([\d.]+)%", line)}


def test_quickstart_runs():
    result = run_example("examples/quickstart.py")
    assert result.returncode == 0, result.stderr
    assert "== tensors, PyTorch style" in result.stdout


def test_train_digits_trains_saves_and_reloads_quickly():
    pytest.importorskip("sklearn")
    result = run_example("examples/train_digits.py", "--epochs", "2", "--model", "mlp")
    assert result.returncode == 0, result.stderr
    assert "epoch  2/2 [####################]" in result.stdout
    assert "reloaded model agrees: True" in result.stdout
    assert accuracies(result.stdout)["MLP"] > 80


@pytest.mark.slow
def test_train_digits_reaches_its_accuracies():
    pytest.importorskip("sklearn")
    result = run_example("examples/train_digits.py")
    assert result.returncode == 0, result.stderr
    reached = accuracies(result.stdout)
    assert reached["MLP"] >= 96 and reached["CNN"] >= 97, reached


def test_trace_digits_traces_the_model_and_writes_its_graph(tmp_path):
    result = run_example("examples/trace_digits.py", str(tmp_path / "cnn.dot"))
    assert result.returncode == 0, result.stderr
    assert "call_module  _1       1       (_0,)" in result.stdout
    assert "traced model gives the model's outputs: True" in result.stdout
    dot = (tmp_path / "cnn.dot").read_text()
    assert dot.startswith("digraph") and "[1, 16, 8, 8] tensormodes.float32" in dot


def test_int8_weight_subclass_trains_close_to_float32():
    result = run_example("examples/int8_weight_subclass.py", timeout=300)
    assert result.returncode == 0, result.stderr
    difference = float(result.stdout.split("relative difference ")[1].split("%")[0])
    assert difference < 2.0
    assert "1 byte per element, dtype tensormodes.float32" in result.stdout


def test_inner_autograd_subclass_forces_a_rows_only_gradient():
    result = run_example("examples/inner_autograd_subclass.py", timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("rows touched: [1, 3, 7]; untouched rows all zero: True; "
                                     "equals plain autograd: True")


def test_make_fx_cnn_traces_a_core_aten_training_step_without_data():
    result = run_example("examples/make_fx_cnn.py", timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "def forward(self, images_1, labels_1):" in out
    assert "tensormodes.ops.aten.convolution_backward.default(" in out and "aten.t.default" not in out
    assert "graph gives the eager step's loss and updated parameters: True" in out
