"""softmax and log_softmax: values, stability, dtypes, PyTorch's errors, gradients."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensormodes as tm

from .torch_oracle import assert_same_outcome

pytestmark = pytest.mark.skipif(not hasattr(tm, "softmax"),
                                reason="tensormodes._ops.activation is not imported by _ops/__init__ yet")

CASES = [
    "L.softmax(L.tensor([[1.,2,3],[4,5,6]]), 1)", "L.softmax(L.tensor([[1.,2,3],[4,5,6]]), -1, L.float64)",
    "L.softmax(L.tensor([[1.,2,3],[4,5,6]]), dim=0, dtype=L.float64)", "L.softmax(L.tensor([1,2]), 0, dtype=L.float32)",
    "L.softmax(L.tensor(2.), 0)", "L.softmax(L.tensor(2.), -1)",
    "L.softmax(L.tensor([[1.,2,3],[4,5,6]], dtype=L.float64), 0, dtype=L.float32)",
    "L.softmax(L.tensor([-inf, -inf]), 0)", "L.softmax(L.tensor([inf, 1]), 0)", "L.softmax(L.tensor([nan, 1]), 0)",
    "L.log_softmax(L.tensor([-inf, -inf]), 0)", "L.log_softmax(L.tensor([inf, 1]), 0)", "L.softmax(L.ones(0, 3), 0)",
    "L.softmax(L.ones(0, 3), 1)", "L.log_softmax(L.ones(0, 3), 1)", "L.tensor([[1.,2,3],[4,5,6]]).softmax(1)",
    "L.tensor([[1.,2,3],[4,5,6]]).log_softmax(1, L.float64)",
    "L.tensor([[1.,2,3],[4,5,6]]).softmax(dim=1, dtype=L.float64)",
    "L.log_softmax(L.tensor([1e30, 0.]), 0)", "L.softmax(L.tensor([1e30, 0.]), 0)",
    "L.log_softmax(L.arange(24.).reshape(2,3,4) / 7, 1)", "L.softmax(L.arange(24.).reshape(2,3,4) / 7, -2)",
    "L.softmax(L.tensor([1., 2.]), 0, L.float16)",
    # errors
    "L.softmax(L.tensor([[1.,2,3],[4,5,6]]), 2)", "L.softmax(L.tensor(2.), 1)", "L.softmax(L.tensor([1,2]), 0)",
    "L.softmax(L.tensor([[1,2],[3,4]]), 0)", "L.log_softmax(L.tensor([1,2]), 0)",
    "L.softmax(L.tensor([[1.,2,3],[4,5,6]]), 0, dtype=L.int64)", "L.softmax(L.tensor([1., 2.], dtype=L.complex64), 0)",
    "L.log_softmax(L.tensor([1., 2.], dtype=L.complex64), 0)", "L.softmax(L.tensor([True]), 0)",
    "L.softmax(L.tensor([1., 2.]), 0, dtype=L.bool)", "L.softmax([1., 2.], 0)",
    "L.softmax(L.tensor([[1.,2,3],[4,5,6]]), None)", "L.softmax(L.tensor([[1.,2,3],[4,5,6]]), 1.0)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_outcome(expression, rtol=1e-6, atol=1e-7)


@pytest.mark.torch
@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype, tolerance",
                         [("float16", 2e-3), ("bfloat16", 2e-2), ("float32", 1e-6), ("float64", 1e-13)])
def test_low_precision_matches_torch(function, dtype, tolerance):
    data = "(L.arange(60.).reshape(3, 4, 5) - 30) / 4"
    for dim in (0, 1, -1):
        assert_same_outcome(f"L.{function}(({data}).to(L.{dtype}), {dim})", rtol=tolerance, atol=tolerance)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-1e4, 1e4)), st.data())
def test_softmax_is_a_distribution_and_log_softmax_its_log(values, data):
    dim = data.draw(st.integers(-values.ndim, values.ndim - 1))
    x = tm.tensor(values)
    probabilities = tm.softmax(x, dim)
    assert np.all(probabilities.numpy() >= 0) and np.allclose(probabilities.sum(dim).numpy(), 1.0)
    logs = tm.log_softmax(x, dim).numpy()
    assert np.all(np.isfinite(logs))  # no overflow, even for large inputs
    np.testing.assert_allclose(np.exp(logs), probabilities.numpy(), rtol=1e-9, atol=1e-300)


def test_large_inputs_do_not_overflow():
    assert tm.softmax(tm.tensor([1000.0, 0.0]), 0).tolist() == [1.0, 0.0]
    assert tm.log_softmax(tm.tensor([1000.0, 0.0]), 0).tolist() == [0.0, -1000.0]


def test_dtype_argument_casts_first():
    x = tm.tensor([1, 2, 3])
    assert tm.softmax(x, 0, dtype=tm.float64).dtype is tm.float64
    assert x.log_softmax(0, dtype=tm.float32).dtype is tm.float32
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        x.softmax(0)


def test_functional_forms_use_the_op():
    import tensormodes.nn.functional as F

    x = tm.tensor([[0.0, 1.0], [2.0, 2.0]])
    assert F.softmax(x, dim=1).tolist() == tm.softmax(x, 1).tolist()
    assert F.log_softmax(x, dim=0).tolist() == x.log_softmax(0).tolist()


@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 2), -2), ((), 0)])
def test_gradients_match_finite_differences(function, shape, dim):
    x = tm.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    op = getattr(tm, function)
    assert op(x, dim).requires_grad
    assert tm.autograd.gradcheck(lambda t: op(t, dim), (x,))


@pytest.mark.torch
@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
def test_gradients_match_torch(function):
    import torch

    values = np.random.default_rng(0).standard_normal((3, 4))
    weights = np.random.default_rng(1).standard_normal((3, 4))
    grads = []
    for library in (tm, torch):
        x = library.tensor(values, requires_grad=True)
        (getattr(library, function)(x, 1) * library.tensor(weights)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
