"""Generated code reads like hand-written code: real source for inspect, pdb and tracebacks,
real names for profilers; and the source behind representative callables is pinned."""

from __future__ import annotations

import cProfile
import inspect
import linecache
import pstats
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

import tensormodes as tm
from tensormodes._generated import define, registered_files, sources
from tensormodes.overrides import get_testing_overrides

EXPECTED = Path(__file__).parent / "expected_source"

# One representative of each kind of generated callable: file name -> callable.
PINNED = {
    "add": lambda: tm.add,                                  # a binary op with a ufunc fast path and alpha=
    "sum": lambda: tm.sum,                                  # a reduction
    "Tensor.view": lambda: tm.Tensor.view,                  # a view
    "cat": lambda: tm.cat,                                  # an op taking a list of tensors
    "Tensor.add_": lambda: tm.Tensor.add_,                  # an in-place method
    "Tensor.shape.__get__": lambda: tm.Tensor.shape.fget,   # a property getter
}


def _build_everything_behind(name: str):
    """Run the callable once with history so that its recorder and backward exist too."""
    x = tm.ones(2, 3, requires_grad=True)
    if name == "add":
        tm.add(x, x)
    elif name == "sum":
        tm.sum(x)
    elif name == "Tensor.view":
        x.view(3, 2)
    elif name == "cat":
        tm.cat([x, x])
    elif name == "Tensor.add_":
        tm.ones(2).add_(1)


def _unnumbered(text: str) -> str:
    return re.sub(r" #\d+>", ">", text)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_generated_source_is_pinned(name):
    _build_everything_behind(name)
    expected = (EXPECTED / f"{name}.txt").read_text()
    # a label's " #2" (a second function generated under one name, e.g. by tests that ran first)
    # is not part of the code
    assert _unnumbered(sources(PINNED[name]())) == _unnumbered(expected), (
        f"the code generated behind {name} changed; if on purpose, run "
        f"`python tests/test_generated_source.py --update` and review the diff")


def test_getsource_shows_the_wrapper():
    source = inspect.getsource(tm.add)
    assert source.startswith("def add(input, other, *, alpha=_default_alpha, out=_default_out):\n")
    assert "    state = _get_state()\n" in source
    assert inspect.getsourcefile(tm.add) == "<tensormodes generated tensormodes.add>"


def test_every_generated_function_has_its_own_file_and_real_names():
    assert tm.add.__code__.co_filename != tm.mul.__code__.co_filename
    assert (tm.add.__code__.co_name, tm.Tensor.add.__code__.co_name) == ("add", "add")
    assert (tm.add.__qualname__, tm.Tensor.add.__qualname__, tm.Tensor.__add__.__qualname__) == (
        "add", "Tensor.add", "Tensor.__add__")
    if sys.version_info >= (3, 11):
        assert tm.Tensor.add.__code__.co_qualname == "Tensor.add"
    y = tm.ones(2, requires_grad=True) * 3
    assert type(y.grad_fn).apply.__qualname__ == "MulBackward0.apply"
    assert inspect.getsource(type(y.grad_fn).apply).startswith("def apply(self, grads):\n")
    files = registered_files()
    assert all(name.startswith("<tensormodes generated ") for name in files)


def test_profilers_give_each_op_its_own_row():
    x, y = tm.ones(3), tm.ones(3)
    tm.add(x, y), tm.mul(x, y), tm.sub(x, y)  # built before profiling
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(1000):
        tm.add(x, y)
        tm.mul(x, y)
        tm.sub(x, y)
    profile.disable()
    rows = {(file, name): stat[0] for (file, _, name), stat in pstats.Stats(profile).stats.items()
            if file.startswith("<tensormodes generated tensormodes.")}
    assert rows == {("<tensormodes generated tensormodes.add>", "add"): 1000,
                    ("<tensormodes generated tensormodes.mul>", "mul"): 1000,
                    ("<tensormodes generated tensormodes.sub>", "sub"): 1000}


def test_tracebacks_show_the_generated_lines():
    with pytest.raises(RuntimeError) as info:
        tm.add(tm.ones(2), tm.ones(3))
    frames = traceback.extract_tb(info.tb)
    generated = [f for f in frames if f.filename == "<tensormodes generated tensormodes.add>"]
    assert generated and generated[0].name == "add"
    assert generated[0].line == linecache.getline(generated[0].filename, generated[0].lineno).strip()
    assert generated[0].line.startswith("result = _kernel(")


def test_pdb_lists_generated_lines():
    script = "import pdb, tensormodes as tm\nneg, x = tm.neg, tm.ones(1)\npdb.run('neg(x)')\n"
    result = subprocess.run([sys.executable, "-c", script], input="s\ns\nl\nc\n", capture_output=True, text=True,
                            timeout=120)
    assert "<tensormodes generated tensormodes.neg>" in result.stdout
    assert "state = _get_state()" in result.stdout, result.stdout


def test_testing_overrides_have_source():
    dummy = get_testing_overrides()[tm.add]
    assert inspect.getsource(dummy) == (
        "def add(input, other, *, alpha=_default_alpha, out=_default_out):\n    return -1\n")


def test_define_numbers_a_label_defined_again_with_other_source():
    first = define("def f():\n    return 1\n", "f", {}, label="test.renumbered")
    second = define("def f():\n    return 2\n", "f", {}, label="test.renumbered")
    assert (first(), second()) == (1, 2)
    assert first.__code__.co_filename == "<tensormodes generated test.renumbered>"
    assert second.__code__.co_filename == "<tensormodes generated test.renumbered #2>"
    assert inspect.getsource(second) == "def f():\n    return 2\n"


def _update() -> None:
    EXPECTED.mkdir(exist_ok=True)
    for name, get in PINNED.items():
        _build_everything_behind(name)
        (EXPECTED / f"{name}.txt").write_text(sources(get()))
        print("wrote", EXPECTED / f"{name}.txt")


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    _update()
