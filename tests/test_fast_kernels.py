"""Kernels' fast paths keep the general paths' results, errors and silence: the
in-place bias of ``linear``, the one-reduction bounds checks of ``nll_loss`` and
``scatter``, ``nll_loss``'s weight gradient without a saved result, and NumPy's
floating-point warnings kept off."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("bias_shape", [(4,), (1,), ()])
def test_linear_bias_matches_pytorch(bias_shape):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(bias_shape).astype(np.float32)
    ours = F.linear(tm.tensor(x), tm.tensor(w), tm.tensor(b)).numpy()
    theirs = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("target", [[0, -1, 1], [0, 3, 1], [-100, 5, 0]])
def test_nll_loss_out_of_bounds_target(target):
    with pytest.raises(IndexError) as ours:
        F.nll_loss(tm.zeros(3, 3), tm.tensor(target))
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.nll_loss(torch.zeros(3, 3), torch.tensor(target))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("bad", [-1, 3])
def test_scatter_out_of_bounds_index(dtype, bad):
    index = [[0], [bad]]
    with pytest.raises(RuntimeError) as ours:
        tm.zeros(2, 3).scatter(1, tm.tensor(index, dtype=getattr(tm, dtype)), 1.0)
    with pytest.raises(RuntimeError) as theirs:
        torch.zeros(2, 3).scatter(1, torch.tensor(index, dtype=getattr(torch, dtype)), 1.0)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss_weight_gradient_is_numerical(reduction, ignore_index):
    rng = np.random.default_rng(2)
    x, target, w = rng.standard_normal((5, 3)), np.array([0, 2, 1, 1, 0]), rng.random(3) + 0.5

    def loss(weight):
        return F.nll_loss(tm.tensor(x), tm.tensor(target), tm.tensor(weight), reduction=reduction,
                          ignore_index=ignore_index).sum().item()

    weight = tm.tensor(w, requires_grad=True)
    F.nll_loss(tm.tensor(x), tm.tensor(target), weight, reduction=reduction,
               ignore_index=ignore_index).sum().backward()
    eps = 1e-6
    numerical = [(loss(w + eps * e) - loss(w - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(weight.grad.numpy(), numerical, atol=1e-6)


def test_nll_loss_result_may_change_in_place_before_backward():
    # As in PyTorch, the loss itself is not saved for backward.
    x = tm.randn(4, 3, requires_grad=True)
    loss = F.nll_loss(x, tm.tensor([0, 1, 2, 1]))
    loss.mul_(1)
    loss.backward()
    assert x.grad is not None


def test_float_kernels_stay_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = tm.tensor([1e30, 0.0, -1.0])
        assert tm.exp(big).tolist()[0] == float("inf")
        assert tm.div(big, tm.zeros(3)).isnan().tolist() == [False, True, False]
        assert tm.log(big).isnan().tolist() == [False, False, True]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weight", [0.1, 0.5, 0.9, -0.3, 1.7, float("nan")])
def test_lerp_by_a_number_keeps_the_general_steps(dtype, weight):
    # lerp with a Python float weight on float32/float64 arrays (an optimizer's lerp_) computes
    # its branch in place: bit for bit the general path (a 0-dim tensor weight takes it).
    rng = np.random.default_rng(4)
    x = tm.tensor((rng.standard_normal((6, 5)) * 10).astype(dtype))
    y = tm.tensor((rng.standard_normal((1, 5)) * 10).astype(dtype))
    x[0, :3] = tm.tensor([float("inf"), float("nan"), -0.0], dtype=getattr(tm, dtype))
    general = tm.lerp(x, y, tm.tensor(weight, dtype=tm.float64)).numpy()
    fast = tm.lerp(x, y, weight).numpy()
    np.testing.assert_array_equal(fast.view(np.uint8), general.view(np.uint8))
    in_place = x.clone()
    in_place.lerp_(y, weight)
    np.testing.assert_array_equal(in_place.numpy().view(np.uint8), general.view(np.uint8))
    assert tm.lerp(tm.tensor([0.0, 10.0]), tm.tensor([10.0, 20.0]), 0.75).tolist() == [7.5, 17.5]
    assert tm.lerp(tm.tensor(1.0), tm.tensor(3.0), 0.25).shape == ()
    with pytest.raises(RuntimeError, match="must match the size"):
        tm.lerp(tm.ones(3), tm.ones(4), 0.5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [1, -0.001, 2.5])
def test_addcmul_addcdiv_of_same_shapes_in_place_keep_their_steps(dtype, value):
    # addcmul / addcdiv of three same-shape arrays of one float dtype and a number (Adam's
    # addcmul_ and addcdiv_) write their temporaries in place: the same steps, bit for bit.
    rng = np.random.default_rng(6)
    a, b, c = ((rng.standard_normal((4, 5)) * 3).astype(dtype) for _ in range(3))
    b.flat[:3] = [np.inf, np.nan, -0.0]
    x, y, z = tm.tensor(a), tm.tensor(b), tm.tensor(c)
    with np.errstate(all="ignore"):
        product, quotient = a + value * b * c, a + np.true_divide(value * b, c)
    for got, expected in ((tm.addcmul(x, y, z, value=value), product), (tm.addcdiv(x, y, z, value=value), quotient)):
        assert got.dtype == getattr(tm, dtype)
        np.testing.assert_array_equal(got.numpy().view(np.uint8), expected.view(np.uint8))
    x.addcdiv_(y, z, value=value)
    np.testing.assert_array_equal(x.numpy().view(np.uint8), quotient.view(np.uint8))
