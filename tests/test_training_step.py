"""The fast paths a training step takes (linear, relu, cross-entropy, backward) give
PyTorch's gradients, and the general paths still give PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

torch = pytest.importorskip("torch")


def _mlp_grads(lib, functional, x, y, weights, **loss_options):
    params = [lib.tensor(w, requires_grad=True) for w in weights]
    w1, b1, w2, b2 = params
    inputs = lib.tensor(x)
    hidden = functional.relu(functional.linear(inputs, w1, b1))
    loss = functional.cross_entropy(functional.linear(hidden, w2, b2), lib.tensor(y), **loss_options)
    loss.sum().backward()
    return inputs.grad, [p.grad.detach().numpy() if lib is torch else p.grad.numpy() for p in params]


@pytest.mark.parametrize("options", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 2},
                                     {"reduction": "none", "ignore_index": 1}])
def test_mlp_step_matches_pytorch(options):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    weights = [rng.standard_normal(s).astype(np.float32) for s in ((4, 5), (4,), (3, 4), (3,))]
    ours_input_grad, ours = _mlp_grads(tm, F, x, y, weights, **options)
    _, theirs = _mlp_grads(torch, torch.nn.functional, x, y, weights, **options)
    assert ours_input_grad is None  # the data needs no gradient, and none is computed
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_linear_with_batch_dimensions_matches_pytorch():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (5, 4), (5,))]
    ours = [tm.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    F.linear(*ours).sum().backward()
    torch.nn.functional.linear(*theirs).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_where_with_a_number_keeps_its_checks():
    x = tm.tensor([1.0, -2.0])
    assert x.where(x > 0, 0).tolist() == [1.0, 0.0]
    with pytest.raises(OverflowError, match="int too big to convert"):  # PyTorch reads an int as int64 / uint64
        x.where(x > 0, 2**100)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        x.where(x > 0, 1e300)
    with pytest.raises(RuntimeError):
        x.where(tm.tensor([True, False, True]), 0)


def test_integer_comparison_with_a_large_number():
    t = tm.tensor([1, 2])
    assert (t != -100).tolist() == [True, True]
    assert (t < 2**40).tolist() == [True, True] and (t >= -(2**63)).tolist() == [True, True]


def test_bias_gradient_summed_over_leading_dimensions():
    x = tm.ones(2, 3, requires_grad=True)
    b = tm.ones(3, requires_grad=True)
    (x + b).sum().backward()
    assert b.grad.tolist() == [2.0, 2.0, 2.0] and b.grad.shape == (3,)
    c = tm.ones(1, 3, requires_grad=True)
    (tm.ones(4, 2, 3) * c).sum().backward()
    assert c.grad.tolist() == [[8.0, 8.0, 8.0]]
