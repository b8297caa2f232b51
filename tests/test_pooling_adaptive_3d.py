"""Volumetric adaptive pooling and unpooling: ``F.adaptive_avg_pool3d``, ``F.adaptive_max_pool3d``
(``return_indices``), ``F.max_unpool3d`` and their modules — exact values without an oracle, and
against PyTorch's values (bit for bit), gradients, node names, errors and dispatch-level calls on
edge inputs (empty, NaN/Inf, half types, None sizes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tests.torch_oracle import assert_same_outcome

# -- exact values (no oracle) ------------------------------------------------------------------------


def test_adaptive_avg_pool3d_uneven_windows_exact_values():
    x = tm.arange(24.0).reshape(1, 2, 3, 4)
    out = F.adaptive_avg_pool3d(x, (1, 2, 3))
    # depth averaged whole; rows [0, 2), [1, 3); columns [0, 2), [1, 3), [2, 4)
    assert out.tolist() == [[[[8.5, 9.5, 10.5], [12.5, 13.5, 14.5]]]]
    assert F.adaptive_avg_pool3d(x, (None, 1, None)).shape == (1, 2, 1, 4)
    assert F.adaptive_avg_pool3d(x, 1).grad_fn is None and F.adaptive_avg_pool3d(x, 1).item() == 11.5


def test_adaptive_max_pool3d_indices_ties_and_nan():
    x = tm.tensor([1.0, 7.0, 7.0, 0.0, math.nan, 2.0, math.nan, 3.0]).reshape(1, 2, 2, 2)
    values, indices = F.adaptive_max_pool3d(x, (2, 1, 1), return_indices=True)
    assert values[0, 0].flatten().tolist() == [7.0] and indices.flatten().tolist() == [1, 6]  # first 7, last NaN
    assert math.isnan(values[0, 1].item())
    assert tm.nn.AdaptiveMaxPool3d((1, 2, None))(x).shape == (1, 1, 2, 2)


def test_adaptive_pool3d_gradients_exact():
    x = tm.arange(8.0).reshape(1, 2, 2, 2).requires_grad_()
    F.adaptive_avg_pool3d(x, (1, 1, 2)).sum().backward()
    assert x.grad.flatten().tolist() == [0.25] * 8
    x.grad = None
    values = F.adaptive_max_pool3d(x, (1, 2, 1))
    assert values.grad_fn.name() == "AdaptiveMaxPool3DBackward0"
    values.sum().backward()
    assert x.grad.flatten().tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]


def test_max_unpool3d_round_trip_gradient_and_errors():
    x = tm.arange(16.0).reshape(1, 1, 2, 2, 4)
    pooled, indices = F.max_pool3d(x, 2, return_indices=True)
    restored = tm.nn.MaxUnpool3d(2)(pooled, indices)
    assert restored.shape == (1, 1, 2, 2, 4)
    assert restored.flatten().tolist() == [0.0] * 13 + [13.0, 0.0, 15.0]
    leaf = pooled.clone().requires_grad_()
    out = F.max_unpool3d(leaf, indices, 2, output_size=(2, 3, 4))
    assert out.shape == (1, 1, 2, 3, 4) and out.grad_fn.name() == "MaxUnpool3DBackward0"
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 8 \(output volumes are of size 2x2x2\)"):
        F.max_unpool3d(tm.ones(1, 1, 1, 1), tm.tensor([[[[8]]]]), 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool3d(tm.ones(1, 1, 1, 1), tm.tensor([[[[1]]]]), 2, output_size=[5, 5, 5])
    assert repr(tm.nn.MaxUnpool3d(2, 1)) == "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=(0, 0, 0))"


def test_meta_tensors_take_the_shapes():
    x = tm.empty(2, 3, 5, 6, 7, device="meta")
    assert F.adaptive_avg_pool3d(x, (2, 3, 4)).shape == (2, 3, 2, 3, 4)
    values, indices = F.adaptive_max_pool3d(x, 2, return_indices=True)
    assert values.shape == indices.shape == (2, 3, 2, 2, 2) and indices.dtype == tm.int64
    assert F.max_unpool3d(values, indices, 2).shape == (2, 3, 4, 4, 4)


# -- against PyTorch ----------------------------------------------------------------------------------

_X = "L.linspace(-3, 3, 210).reshape(1, 2, 5, 7, 3)"
EDGE_EXPRESSIONS = [
    f"L.nn.functional.adaptive_avg_pool3d({_X}, (3, 4, 2))",
    f"L.nn.functional.adaptive_avg_pool3d({_X}.double().sin(), (4, 3, 2))",
    f"L.nn.functional.adaptive_avg_pool3d({_X}.half(), (3, 4, 2))",
    f"L.nn.functional.adaptive_avg_pool3d({_X}.bfloat16().exp(), (2, 5, 3))",
    f"L.nn.functional.adaptive_avg_pool3d({_X}[0], (None, 2, None))",
    f"L.nn.functional.adaptive_avg_pool3d({_X}, 1)",
    f"L.nn.functional.adaptive_avg_pool3d({_X}, (0, 2, 2))",
    "L.nn.functional.adaptive_avg_pool3d(L.tensor([1.0, nan, inf, 0.0, 1.0, 2.0, -inf, 4.0]).reshape(1, 2, 2, 2), "
    "(1, 2, 1))",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(0, 2, 3, 3, 3), 2)",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(0, 2, 3, 3), 2)",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(1, 0, 3, 3, 3), 2)",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(3, 3, 3), 2)",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(1, 3, 3, 3), (2, 2))",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(1, 3, 3, 3), (2, -1, 2))",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(1, 3, 3, 3, dtype=L.int64), 2)",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(1, 3, 3, 3, dtype=L.int64), 1)",
    "L.nn.functional.adaptive_avg_pool3d(L.ones(1, 3, 3, 3, dtype=L.complex64), 2)",
    "L.nn.AdaptiveAvgPool3d((2, None, 1))(L.arange(24.0).reshape(1, 2, 3, 4))",
    f"L.nn.functional.adaptive_max_pool3d({_X}.cos(), (3, 4, 2), return_indices=True)",
    f"L.nn.functional.adaptive_max_pool3d({_X}.half().cos(), (2, 4, 2), return_indices=True)",
    f"L.nn.functional.adaptive_max_pool3d({_X}.bfloat16().cos(), (5, 7, 3), return_indices=True)",
    f"L.nn.functional.adaptive_max_pool3d({_X}[0].double(), (None, 3, 1))",
    f"L.nn.functional.adaptive_max_pool3d_with_indices({_X}, 2)",
    f"L.nn.functional.adaptive_max_pool3d({_X}, (2, 0, 1), return_indices=True)",
    "L.nn.functional.adaptive_max_pool3d(L.tensor([1.0, nan, 3.0, nan, -inf, 0.0, 3.0, 0.0]).reshape(1, 2, 2, 2), "
    "(1, 1, 2), return_indices=True)",
    "L.nn.functional.adaptive_max_pool3d(L.ones(0, 2, 3, 3), 2, return_indices=True)",
    "L.nn.functional.adaptive_max_pool3d(L.ones(1, 0, 3, 3, 3), 2)",
    "L.nn.functional.adaptive_max_pool3d(L.ones(3, 3, 3), 2)",
    "L.nn.functional.adaptive_max_pool3d(L.ones(2, 2, 3, 4), (2, -1, 2))",
    "L.nn.functional.adaptive_max_pool3d(L.ones(1, 3, 3, 3, dtype=L.int64), 2)",
    "L.nn.AdaptiveMaxPool3d(2, return_indices=True)(L.arange(54.0).reshape(2, 3, 3, 3))",
    "L.nn.functional.max_unpool3d(*L.nn.functional.max_pool3d(L.linspace(-1, 1, 128).reshape(2, 1, 4, 4, 4).cos(), "
    "2, return_indices=True), 2)",
    "L.nn.functional.max_unpool3d(*L.nn.functional.max_pool3d(L.linspace(-1, 1, 64).reshape(1, 4, 4, 4).half(), "
    "2, return_indices=True), 2, output_size=(5, 5, 5))",
    "L.nn.functional.max_unpool3d(*L.nn.functional.max_pool3d(L.linspace(-1, 1, 64).reshape(1, 4, 4, 4).bfloat16(), "
    "2, return_indices=True), (2, 2, 2), (2, 2, 2), 0, [1, 1, 5, 4, 4])",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[1]]]]), 2, output_size=[5, 5])",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[1]]]]), 2, output_size=[5, 5, 5])",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[8]]]]), 2)",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[-1]]]]), 2)",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[1]]]], dtype=L.int32), 2)",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1), L.tensor([[[1]]]), 2)",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[1, 2]]]]), 2)",
    "L.nn.functional.max_unpool3d(L.ones(1, 0, 1, 1), L.zeros(1, 0, 1, 1, dtype=L.int64), 2)",
    "L.nn.functional.max_unpool3d(L.ones(0, 1, 1, 1, 1), L.zeros(0, 1, 1, 1, 1, dtype=L.int64), 2)",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1, dtype=L.int64), L.tensor([[[[1]]]]), 2)",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[1]]]]), 2, stride=(0, 2, 2))",
    "L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1), L.tensor([[[[1]]]]), 2, padding=-1)",
    "L.nn.MaxUnpool3d((1, 2, 2))(L.tensor([[[[4.0]]]]), L.tensor([[[[3]]]]))",
    "L.ops.aten._adaptive_avg_pool3d_backward(L.linspace(-1, 1, 24).reshape(1, 2, 3, 4).half(), "
    "L.zeros(1, 5, 7, 6, dtype=L.float16))",
    "L.ops.aten._adaptive_avg_pool3d_backward(L.ones(1, 0, 2, 2), L.ones(1, 0, 3, 3))",
    "L.ops.aten.adaptive_max_pool3d_backward(L.ones(1, 2, 2, 2), L.ones(1, 3, 3, 3), L.zeros(1, 2, 2, 1, "
    "dtype=L.int64))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", EDGE_EXPRESSIONS)
def test_edge_cases_match_torch(expression):
    pytest.importorskip("torch")
    # (a 1 x 1 x 1 output is PyTorch's mean, whose float32 sums round differently here)
    mean = expression.endswith(", 1)")
    assert_same_outcome(expression, rtol=1e-6 if mean else 0.0)


GRADIENT_CASES = [
    ("L.nn.functional.adaptive_avg_pool3d(x, (3, 4, 2))", "L.linspace(-3, 3, 210).reshape(1, 2, 5, 7, 3)"),
    ("L.nn.functional.adaptive_avg_pool3d(x, (2, None, 3))", "L.linspace(-3, 3, 105, dtype=L.float64)"
     ".reshape(1, 5, 7, 3)"),
    ("L.nn.functional.adaptive_avg_pool3d(x, (2, 3, 2))",
     "L.linspace(-3, 3, 60, dtype=L.bfloat16).reshape(1, 3, 4, 5)"),
    ("L.nn.functional.adaptive_avg_pool3d(x, 1)", "L.arange(60.0).reshape(1, 3, 4, 5)"),
    ("L.nn.functional.adaptive_max_pool3d(x, (3, 4, 2))", "L.linspace(-3, 3, 210).reshape(1, 2, 5, 7, 3).cos()"),
    ("L.nn.functional.adaptive_max_pool3d(x, (4, 3, 2), return_indices=True)[0]",
     "L.linspace(-3, 3, 60, dtype=L.float16).reshape(1, 3, 4, 5).cos()"),
    ("L.nn.functional.max_unpool3d(x, L.tensor([[[[[0, 3], [5, 14]]]]]), 2)",
     "L.tensor([[[[[1.0, 2.0], [3.0, 4.0]]]]])"),
]


@pytest.mark.torch
@pytest.mark.parametrize("expression, leaf", GRADIENT_CASES)
def test_gradients_match_torch(expression, leaf):
    """The output and the leaf's gradient through a weighted sum of the output (bit for bit), the
    node's name, and the aten calls a dispatch mode sees forward and backward."""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from tensormodes.utils._python_dispatch import TorchDispatchMode as OurMode

    results = []
    for library, base in ((tm, OurMode), (torch, TorchMode)):
        class Recorder(base):
            calls: list[str] = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.calls.append(str(func).removeprefix("aten."))
                return func(*args, **(kwargs or {}))

        namespace = {"L": library, "nan": math.nan, "inf": math.inf}
        x = eval(leaf, namespace).requires_grad_()
        with Recorder() as recorder:
            out = eval(expression, {**namespace, "x": x})
            weights = library.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)
            (out * weights).sum().backward()
        results.append((out.detach().double().numpy(), x.grad.double().numpy(), type(out.grad_fn).__name__,
                        recorder.calls))
    (out, grad, node, calls), (their_out, their_grad, their_node, their_calls) = results
    assert node == their_node
    np.testing.assert_array_equal(out, their_out, err_msg=expression)
    np.testing.assert_array_equal(grad, their_grad, err_msg=expression)
    pooling = [c for c in their_calls if "pool" in c or "gather" in c]
    assert [c for c in calls if "pool" in c or "gather" in c] == pooling, calls


@pytest.mark.torch
@pytest.mark.parametrize("expression", ["L.nn.AdaptiveAvgPool3d((2, None, 3))", "L.nn.AdaptiveMaxPool3d(2, True)",
                                        "L.nn.MaxUnpool3d((1, 2, 3), 1, (0, 1, 0))"])
def test_repr_matches_torch(expression):
    torch = pytest.importorskip("torch")
    assert repr(eval(expression, {"L": tm})) == repr(eval(expression, {"L": torch}))
