"""``tensormodes.gradient`` (``torch.gradient``): exact values without an oracle, and PyTorch's
values, dtypes, errors, autograd gradients and dispatch-level calls (its composite's ``slice`` /
``sub`` / ``div.Scalar`` / ``cat`` ... in ATen's order) on edge inputs (empty, 0-dim, NaN/Inf,
half types, integers, Python scalars, coordinates)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm
from tests.torch_oracle import assert_same_outcome

# -- exact values (no oracle) ------------------------------------------------------------------------


def test_gradient_central_and_edge_differences():
    x = tm.tensor([1.0, 2.0, 4.0, 8.0, 16.0])
    (first,) = tm.gradient(x)
    assert first.tolist() == [1.0, 1.5, 3.0, 6.0, 8.0]
    (second,) = tm.gradient(x, edge_order=2)
    assert second.tolist() == [0.5, 1.5, 3.0, 6.0, 10.0]  # (-1.5 * 1 + 2 * 2 - 0.5 * 4, ...)
    (spaced,) = tm.gradient(x, spacing=2)
    assert spaced.tolist() == [0.5, 0.75, 1.5, 3.0, 4.0]
    (uneven,) = tm.gradient(x, spacing=[tm.tensor([0.0, 1.0, 3.0, 4.0, 8.0], dtype=tm.float64)])
    assert uneven.tolist() == pytest.approx([1.0, 1.0, 3.0, 3.6, 2.0])  # (2 - 1) / 1 and (16 - 8) / 4 at the edges


def test_gradient_dims_results_and_errors():
    x = tm.arange(12.0).reshape(3, 4)
    rows, columns = tm.gradient(x)
    assert rows.tolist() == [[4.0] * 4] * 3 and columns.tolist() == [[1.0] * 4] * 3
    assert isinstance(tm.gradient(x, dim=1), tuple) and len(tm.gradient(x, dim=[1, 0])) == 2
    assert tm.gradient(tm.tensor(1.0)) == ()
    with pytest.raises(RuntimeError, match="torch.gradient only supports edge_order=1 and edge_order=2."):
        tm.gradient(x, edge_order=3)
    with pytest.raises(RuntimeError, match="expected each dimension size to be at least edge_order\\+1"):
        tm.gradient(tm.ones(2, 4), edge_order=2)
    with pytest.raises(RuntimeError, match="does not support uint8 input"):
        tm.gradient(tm.ones(3, dtype=tm.uint8))


def test_gradient_is_differentiable_through_its_ops():
    x = tm.tensor([1.0, 2.0, 4.0, 8.0], requires_grad=True)
    (out,) = tm.gradient(x, edge_order=2)
    assert out.grad_fn.name() == "CatBackward0"
    out.sum().backward()
    assert x.grad.tolist() == [-2.0, 2.0, -2.0, 2.0]


# -- against PyTorch ----------------------------------------------------------------------------------

_X = "L.tensor([[1.0, 2.0, 4.0, 8.0, 7.0], [10.0, -20.0, 40.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0, 9.0]])"
_C = "L.tensor([0.0, 1.0, 3.0, 3.5, 6.0])"
# (the sampled values, the other arguments): floating inputs, also differentiated
CASES = [
    (_X, ""),
    (_X, ", dim=1"),
    (_X, ", dim=-2, edge_order=2"),
    (_X, ", dim=[1, 0], edge_order=2"),
    (_X, ", spacing=2"),
    (_X, ", spacing=0.3, dim=1"),
    (_X, ", spacing=[2, 0.5]"),
    (_X, ", spacing=(0.25, 3), dim=[1, 0], edge_order=2"),
    (_X, ", spacing=L.tensor(2.0)"),
    (_X, f", spacing=[{_C}], dim=1"),
    (_X, f", spacing=[{_C}], dim=1, edge_order=2"),
    (_X, f", spacing=[L.tensor([0.0, 2.0, 3.0]), {_C}], edge_order=2"),
    (f"{_X}.double().pow(3)", ", spacing=[L.tensor([0.0, 0.1, 0.3], dtype=L.float64)], dim=0"),
    (_X, ", spacing=[L.tensor([0, 1, 3, 4, 9])], dim=1"),
    (f"{_X}.bfloat16()", ", edge_order=2"),
]
EXPRESSIONS = [f"L.gradient({values}{arguments})" for values, arguments in CASES] + [
    f"L.gradient({_X}.half(), dim=1)",
    f"L.gradient({_X}.long())",
    f"L.gradient({_X}.long(), spacing=2, dim=1)",
    f"L.gradient({_X}, spacing=1j, dim=1)",
    f"L.gradient({_X} * L.tensor([1.0, nan, inf, -inf, 1.0]), dim=1)",
    "L.gradient(L.tensor(3.0))",
    "L.gradient(L.ones(0, 3), dim=1)",
    "L.gradient(L.tensor([1.0, 2.0]))",
    "L.gradient(L.tensor([1, 2, 4], dtype=L.uint8))",
    "L.gradient(L.tensor([True, False, True]))",
    f"L.gradient({_X}, dim=5)",
    f"L.gradient({_X}, dim=[0, 0])",
    f"L.gradient({_X}, dim=[0, -2])",
    f"L.gradient({_X}, spacing=[1.0, 2.0, 3.0])",
    f"L.gradient({_X}, spacing=[1.0], dim=[0, 1])",
    f"L.gradient({_X}, edge_order=3)",
    "L.gradient(L.ones(2, 3), edge_order=2)",
    "L.gradient(L.ones(1, 3))",
    f"L.gradient({_X}, spacing=(L.ones(2, 2),), dim=0)",
    f"L.gradient({_X}, spacing=(L.ones(3),))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_matches_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression)


@pytest.mark.torch
@pytest.mark.parametrize("values, arguments", CASES)
def test_dispatch_calls_and_gradients_match_torch(values, arguments):
    """The aten calls a dispatch mode sees forward (with the input requiring grad) and the input's
    gradient. (Backward, the formulas of the Scalar overloads still reach ``div.Tensor`` /
    ``mul.Tensor`` where PyTorch's reach ``div.Scalar`` / ``mul.Scalar``: not compared.)"""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from tensormodes.utils._python_dispatch import TorchDispatchMode as OurMode

    seen = []
    for library, base in ((tm, OurMode), (torch, TorchMode)):
        class Recorder(base):
            calls: list[str] = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.calls.append(f"{func} {[a for a in args if not hasattr(a, 'shape') and not isinstance(a, list)]}")
                return func(*args, **(kwargs or {}))

        namespace = {"L": library, "nan": math.nan, "inf": math.inf}
        x = eval(values, namespace).requires_grad_()
        with Recorder() as recorder:
            results = eval(f"L.gradient(x{arguments})", {**namespace, "x": x})
        sum(result.sum() for result in results).backward()
        calls = [c for c in recorder.calls if "lift_fresh" not in c and "_local_scalar_dense" not in c]
        seen.append((calls, x.grad.double().numpy()))
    (ours, our_grad), (theirs, their_grad) = seen
    assert ours == theirs
    np.testing.assert_array_equal(our_grad, their_grad)
