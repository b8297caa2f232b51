"""docs/adding-ops.md's main example is complete and correct: its code block, declared in a
scratch op table, gives an op whose kernel agrees with the library's ``add``, whose meta rule
agrees with its kernel (also on the error samples), and whose gradient formula agrees with the
kernel's numeric derivative."""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import tensormodes as tm
from tensormodes._meta_array import MetaArray
from tensormodes._ops import OPS
from tensormodes._ops.registry import scratch_table

from .op_samples import materialize

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-ops.md"


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` code blocks of a markdown text."""
    return re.findall(r"^```python\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)


def declare_example() -> tuple[dict, dict]:
    """(scratch op table, module namespace) after running the doc's ``@op`` example as a module
    of ``tensormodes._ops`` (its relative imports are the family files' own)."""
    blocks = [block for block in python_blocks(DOC.read_text()) if "@op(" in block]
    assert blocks, f"{DOC.name} has no @op example"
    namespace = {"__name__": "tensormodes._ops._adding_ops_example", "__package__": "tensormodes._ops"}
    with scratch_table() as table:
        exec(compile(blocks[0], str(DOC), "exec"), namespace)
    return table, namespace


REAL_ADD = OPS["add"]
TABLE, NAMESPACE = declare_example()
EXAMPLE = TABLE.get("add")


def arrays(sample, seed: int = 0):
    return materialize(sample, lambda array: array, seed)


def test_the_example_declares_add_in_the_scratch_table_only():
    assert list(TABLE) == ["add"]
    assert OPS["add"] is REAL_ADD  # the library's table is untouched
    assert EXAMPLE.meta is not None and EXAMPLE.grad is not None and EXAMPLE.samples and EXAMPLE.errors
    # The public face it asks for is the library's add's.
    for flag in ("function", "method", "inplace", "out", "dunders", "ufunc", "meta"):
        assert getattr(EXAMPLE, flag) == getattr(REAL_ADD, flag), flag
    assert list(EXAMPLE.signature.parameters) == list(REAL_ADD.signature.parameters)


def test_the_example_docstring_runs():
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(NAMESPACE["add"], "add", globs={"tm": tm}):
        assert runner.run(test).failed == 0


def test_the_example_kernel_agrees_with_the_library():
    assert EXAMPLE.kernel(np.array([1, 2]), 10).tolist() == [11, 12]
    for sample in EXAMPLE.samples:
        args, kwargs = arrays(sample)
        ours, real = EXAMPLE.kernel(*args, **kwargs), REAL_ADD.kernel(*args, **kwargs)
        assert ours.dtype == real.dtype and ours.shape == real.shape, sample
        np.testing.assert_array_equal(ours, real)


def _meta(value):
    if isinstance(value, np.ndarray):
        return MetaArray(value.shape, value.dtype, tuple(s // value.itemsize for s in value.strides))
    return value


def test_the_example_meta_rule_agrees_with_its_kernel():
    for sample in EXAMPLE.samples:
        args, kwargs = arrays(sample)
        real = EXAMPLE.kernel(*args, **kwargs)
        meta = EXAMPLE.meta(EXAMPLE, tuple(_meta(a) for a in args), {k: _meta(v) for k, v in kwargs.items()})
        assert type(meta) is MetaArray and (meta.shape, meta.dtype) == (real.shape, real.dtype), sample
    for sample in EXAMPLE.errors:
        args, kwargs = arrays(sample)
        with pytest.raises(Exception) as real:
            EXAMPLE.kernel(*args, **kwargs)
        with pytest.raises(type(real.value)) as meta:
            EXAMPLE.meta(EXAMPLE, tuple(_meta(a) for a in args), kwargs)
        assert str(meta.value) == str(real.value)


def _numeric_vjp(kernel, args: list, kwargs: dict, position: int, grad: np.ndarray, step: float = 1e-6):
    """grad · d kernel / d args[position], by central differences (float64 arrays)."""
    flat = args[position].reshape(-1)
    result = np.empty(flat.shape)
    for i in range(flat.size):
        saved = flat[i]
        flat[i] = saved + step
        above = kernel(*args, **kwargs)
        flat[i] = saved - step
        below = kernel(*args, **kwargs)
        flat[i] = saved
        result[i] = np.sum(grad * (above - below)) / (2 * step)
    return result.reshape(args[position].shape)


def test_the_example_gradient_formula_agrees_with_its_kernel():
    rng = np.random.default_rng(0)
    x, y, alpha = rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), 3
    grad = rng.standard_normal((2, 3))
    available = {"grad": tm.tensor(grad), "input": tm.tensor(x), "other": tm.tensor(y), "alpha": alpha,
                 "needs_input_grad": (True, True), "result": tm.tensor(EXAMPLE.kernel(x, y, alpha=alpha)),
                 "input_shape": x.shape, "other_shape": y.shape, "input_dtype": tm.float64,
                 "other_dtype": tm.float64}
    wanted = inspect.signature(EXAMPLE.grad).parameters
    assert set(wanted) <= set(available), f"the formula asks for {set(wanted) - set(available)}"
    gradients = EXAMPLE.grad(**{name: available[name] for name in wanted})
    assert len(gradients) == len(EXAMPLE.tensor_params)
    for position, gradient in enumerate(gradients):
        expected = _numeric_vjp(EXAMPLE.kernel, [x, y], {"alpha": alpha}, position, grad)
        np.testing.assert_allclose(gradient.numpy(), expected, rtol=1e-6, atol=1e-8)
