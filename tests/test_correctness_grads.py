"""Gradients a differential fuzzer found wrong against PyTorch: ``std`` and p-norms where they
divide by zero, max pooling's indices for windows of ``-inf`` and NaN, NaN leaking across
convolution gradients, ``prod`` over an empty dimension, ``cumprod`` with zeros, and
``padding='same'`` with a kernel longer than the input.

Exact expected values run without PyTorch; the tests marked ``torch`` compare with it."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.autograd import gradcheck, gradgradcheck

INF, NAN = float("inf"), float("nan")


def _grads(library, function, *arrays, grad_output=None):
    """``function(library, *leaves)``'s value and the leaves' gradients (NumPy arrays; None
    for a leaf without one) for the output gradient ``grad_output`` (ones by default)."""
    leaves = [library.tensor(a, requires_grad=True) for a in arrays]
    out = function(library, *leaves)
    seed = library.ones(out.shape, dtype=out.dtype) if grad_output is None else library.tensor(grad_output)
    out.backward(seed)
    return [out.detach().numpy()] + [None if x.grad is None else x.grad.numpy() for x in leaves]


def _assert_same_grads(function, *arrays, grad_output=None, rtol=1e-6, atol=1e-9):
    import torch

    ours = _grads(tm, function, *arrays, grad_output=grad_output)
    theirs = _grads(torch, function, *arrays, grad_output=grad_output)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            assert o.shape == t.shape and o.dtype == t.dtype
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True)


# -- std: 0 gradient where the deviation is 0 ---------------------------------------------------

_CONSTANT_ROW = [[1.0, 1, 1], [1, 2, 3]]


def test_std_gradient_is_zero_for_a_constant_slice():
    x = tm.tensor(_CONSTANT_ROW, requires_grad=True)
    x.std(1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [-0.5, 0.0, 0.5]]


def test_std_gradient_of_a_constant_tensor_is_zero():
    for reduce in (lambda t: t.std(), lambda t: t.std((0, 1)), lambda t: tm.std_mean(t)[0],
                   lambda t: t.std(1, keepdim=True).sum(), lambda t: t.std(0, correction=0).sum()):
        x = tm.full((2, 3), 4.0, requires_grad=True)
        reduce(x).backward()
        assert x.grad.tolist() == [[0.0] * 3] * 2


def test_std_mean_gradient_keeps_the_mean_part_on_a_constant_slice():
    x = tm.tensor(_CONSTANT_ROW, requires_grad=True)
    std, mean = tm.std_mean(x, 1)
    (2 * std + mean).sum().backward()
    third = 1 / 3
    np.testing.assert_allclose(x.grad.numpy(), [[third] * 3, [-1 + third, third, 1 + third]], rtol=1e-6)


def test_std_second_derivative_is_finite_on_a_constant_slice():
    x = tm.tensor(_CONSTANT_ROW, dtype=tm.float64, requires_grad=True)
    (first,) = tm.autograd.grad(x.std(1).sum(), x, create_graph=True)
    (second,) = tm.autograd.grad((first * tm.arange(6.0, dtype=tm.float64).reshape(2, 3)).sum(), x)
    assert np.isfinite(second.numpy()).all()
    assert second[0].tolist() == [0.0, 0.0, 0.0]


def test_std_gradcheck_away_from_zero():
    x = tm.tensor([[1.0, 2.5, -1.0], [0.5, 2.0, 3.0]], dtype=tm.float64, requires_grad=True)
    for reduce in (lambda t: t.std(1), lambda t: t.std(1, correction=0), lambda t: tm.std_mean(t, 0)[0]):
        assert gradcheck(reduce, (x,))
        assert gradgradcheck(reduce, (x,))


_STD_CASES = [
    lambda L, x: x.std(1), lambda L, x: x.std(), lambda L, x: x.std(1, keepdim=True),
    lambda L, x: x.std(1, unbiased=False), lambda L, x: x.std(1, correction=0), lambda L, x: x.std(1, correction=2),
    lambda L, x: x.std(1, correction=3), lambda L, x: x.std((0, 1)), lambda L, x: x.double().std(0),
    lambda L, x: L.std_mean(x, 1)[0] * 2 + L.std_mean(x, 1)[1], lambda L, x: L.std_mean(x[0])[0],
    lambda L, x: L.var_mean(x, 1)[0] + L.var_mean(x, 1)[1], lambda L, x: (x * (1 + 1j)).std(1),
    lambda L, x: L.nn.functional.layer_norm(x, (3,)) * L.arange(3.0),
]


@pytest.mark.torch
@pytest.mark.parametrize("case", range(len(_STD_CASES)))
@pytest.mark.parametrize("data", [_CONSTANT_ROW, [[0.0, 0, 0], [0, 0, 0]], [[5.0, 5, 5], [2, 2, 2]]])
def test_std_gradients_match_torch(case, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # correction=3: degrees of freedom <= 0
        _assert_same_grads(_STD_CASES[case], data, rtol=1e-5, atol=1e-6)


# -- p-norms: PyTorch's subgradients at zero ----------------------------------------------------

def test_vector_norm_gradient_at_zero_vector_is_zero():
    for order in (2, 3, 1.5, 0.5, -1, INF):
        x = tm.zeros(3, requires_grad=True)
        tm.linalg.vector_norm(x, order).backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0], order


def test_fractional_norm_gradient_skips_zero_elements():
    # d/dx ||x||_p = sgn(x) |x|^(p-1) ||x||^(1-p), taken as 0 where x == 0 (p < 1)
    x = tm.tensor([[0.0, 0, 0], [0, 1, -2]], requires_grad=True)
    tm.linalg.vector_norm(x, 0.5, dim=1).sum().backward()
    root = 1 + math.sqrt(2)  # ||(0, 1, -2)||_0.5 ** 0.5
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0], [0, root, -root / math.sqrt(2)]], rtol=1e-6)


def test_negative_order_norm_gradient_with_a_zero_element_is_zero():
    # A zero element makes a negative-order norm 0, flat in every other element.
    x = tm.tensor([[0.0, 2, 1], [3, -4, 0]], requires_grad=True)
    x.norm(-1, dim=1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_cdist_fractional_order_gradient_with_zero_differences():
    x = tm.tensor([[0.0, 0.0]], requires_grad=True)
    y = tm.tensor([[0.0, 0.0], [1.0, 0.0]], requires_grad=True)
    tm.cdist(x, y, 0.5).sum().backward()
    assert x.grad.tolist() == [[-1.0, 0.0]] and y.grad.tolist() == [[0.0, 0.0], [1.0, 0.0]]


def test_inf_norm_gradient_is_shared_among_ties():
    x = tm.tensor([3.0, -3.0, 1.0], requires_grad=True)
    tm.linalg.vector_norm(x, INF).backward()
    assert x.grad.tolist() == [0.5, -0.5, 0.0]
    x = tm.tensor([2.0, -1.0, 1.0], requires_grad=True)
    tm.linalg.vector_norm(x, -INF).backward()
    assert x.grad.tolist() == [0.0, -0.5, 0.5]


def test_matrix_two_norm_shares_gradient_among_tied_singular_values():
    for A, expected in ((tm.eye(2), [[0.5, 0.0], [0.0, 0.5]]), (tm.zeros(2, 2), [[0.5, 0.0], [0.0, 0.5]])):
        for order in (2, -2):
            a = A.clone().requires_grad_()
            tm.linalg.matrix_norm(a, order).backward()
            assert a.grad.tolist() == expected


def test_norm_gradients_gradcheck():
    x = tm.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], dtype=tm.float64, requires_grad=True)
    for order in (1, 2, 3, 1.5, 0.5, -1, -2.5, INF, -INF):
        assert gradcheck(lambda t, order=order: tm.linalg.vector_norm(t, order, dim=1), (x,)), order
        assert gradgradcheck(lambda t, order=order: tm.linalg.vector_norm(t, order, dim=1), (x,)), order


def test_norm_second_derivative_is_finite_at_zero():
    # The formulas mask their divisors, not only their quotients, so a second derivative is
    # finite where the norm is 0 (PyTorch's is NaN there for orders 2 and -1: 0 / 0 in its
    # backward's backward). Orders in (1, 2) have an infinite one, |x|^(p-2) at 0.
    for order in (2, 3, -1):
        x = tm.tensor([[0.0, 0, 0], [0, 1, -2]], dtype=tm.float64, requires_grad=True)
        (first,) = tm.autograd.grad(tm.linalg.vector_norm(x, order, dim=1).sum(), x, create_graph=True)
        (second,) = tm.autograd.grad(first.sum(), x)
        assert not np.isnan(second.numpy()).any(), order


_NORM_DATA = [[[0.0, 0, 0], [0, 1, -2]], [[0.0, 0, 1], [3, -4, 0]], [[NAN, 1, 0], [INF, 1, 0]],
              [[-INF, 1, 2], [INF, 0, 0]], [[1e-30, 0, 0], [1, 1, 1]]]
_NORM_CASES = [
    lambda L, x, p: L.linalg.vector_norm(x, p, dim=1), lambda L, x, p: L.linalg.vector_norm(x, p),
    lambda L, x, p: x.norm(p, dim=1), lambda L, x, p: L.norm(x, p, dim=1, keepdim=True),
    lambda L, x, p: L.linalg.norm(x, p, dim=1), lambda L, x, p: L.linalg.vector_norm(x * (1 - 1j), p, dim=1),
    lambda L, x, p: L.linalg.vector_norm(x, p, dim=-1, dtype=L.float64),
]


@pytest.mark.torch
@pytest.mark.parametrize("order", [2, 1, 3, 1.5, 2.5, 0.5, -1, -0.5, INF, -INF, 0])
@pytest.mark.parametrize("data", range(len(_NORM_DATA)))
def test_norm_gradients_match_torch(order, data):
    for case in _NORM_CASES:
        _assert_same_grads(lambda L, x, case=case: case(L, x, order), _NORM_DATA[data], rtol=1e-5, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("order", [0.5, 1, 1.5, 2, 3, INF, 0])
def test_cdist_gradients_with_zero_differences_match_torch(order):
    _assert_same_grads(lambda L, x, y: L.cdist(x, y, order), [[0.0, 0], [1, 2], [1, 0]], [[0.0, 0], [1, 2.5], [1, 3]],
                       rtol=1e-5, atol=1e-6)


@pytest.mark.torch
def test_matrix_two_norm_gradients_match_torch():
    for data in ([[1.0, 0], [0, 1]], [[0.0, 0], [0, 0]], [[3.0, 1], [2, 5]], [[[1.0, 0, 0], [0, 1, 0]]]):
        for order in (2, -2):
            _assert_same_grads(lambda L, x, order=order: L.linalg.matrix_norm(x, order), data, rtol=1e-5, atol=1e-6)


# -- max pooling: PyTorch's indices ---------------------------------------------------------------

def test_max_pool2d_window_of_minus_inf_points_at_its_first_input_element():
    x = tm.tensor([[[[-INF, -INF, 1.0, 2.0]]]], requires_grad=True)
    values, indices = F.max_pool2d(x, (1, 2), (1, 2), (0, 1), return_indices=True)
    assert values.tolist() == [[[[-INF, 1.0, 2.0]]]]
    assert indices.tolist() == [[[[0, 2, 3]]]]
    values.sum().backward()
    assert x.grad.tolist() == [[[[1.0, 0.0, 1.0, 1.0]]]]


def test_max_pool2d_all_minus_inf_with_padding_and_dilation():
    x = tm.full((1, 1, 3, 3), -INF, requires_grad=True)
    values, indices = F.max_pool2d(x, 3, 2, 1, 2, return_indices=True)
    assert indices.tolist() == [[[[4]]]]  # the only element the dilated window reads
    values.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]]
    x = tm.full((1, 1, 2, 2), -INF, requires_grad=True)
    values, indices = F.max_pool2d(x, 2, 1, 1, return_indices=True)
    assert indices.tolist() == [[[[0, 0, 1], [0, 0, 1], [2, 2, 3]]]]
    values.sum().backward()
    assert x.grad.tolist() == [[[[4.0, 2.0], [2.0, 1.0]]]]


def test_max_pool1d_window_of_minus_inf_and_ceil_mode():
    x = tm.full((1, 5), -INF, requires_grad=True)
    values, indices = F.max_pool1d(x, 2, 2, 1, ceil_mode=True, return_indices=True)
    assert indices.tolist() == [[0, 1, 3]]
    values.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0, 0.0, 1.0, 0.0]]
    values, indices = tm.max_pool1d_with_indices(tm.tensor([[-INF, -INF, 3.0]]), 2, 2, 1)
    assert indices.tolist() == [[0, 2]]


def test_max_pool_last_nan_wins():
    x = tm.tensor([[[[NAN, 1.0, NAN, 2.0]]]], requires_grad=True)
    values, indices = F.max_pool2d(x, (1, 4), return_indices=True)
    assert indices.tolist() == [[[[2]]]]
    values.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 0.0, 1.0, 0.0]]]]
    _, indices = F.max_pool1d(tm.tensor([[1.0, NAN, 3.0, NAN, 5.0]]), 3, 1, 1, return_indices=True)
    assert indices.tolist() == [[1, 1, 3, 3, 3]]


def test_adaptive_max_pool_last_nan_wins():
    x = tm.tensor([[[NAN, 1.0, NAN, 2.0, 3.0]]])
    assert F.adaptive_max_pool1d(x, 2, return_indices=True)[1].tolist() == [[[2, 2]]]
    assert F.adaptive_max_pool2d(x[None], (1, 2), return_indices=True)[1].tolist() == [[[[2, 2]]]]
    assert F.adaptive_max_pool1d(tm.full((1, 1, 3), -INF), 2, return_indices=True)[1].tolist() == [[[0, 1]]]


def test_max_unpool_takes_indices_of_minus_inf_windows():
    x = tm.tensor([[[[-INF, -INF, 1.0, 2.0]]]])
    values, indices = F.max_pool2d(x, (1, 2), (1, 2), (0, 1), return_indices=True)
    restored = F.max_unpool2d(values, indices, (1, 2), (1, 2), (0, 1), output_size=(1, 4))
    assert restored.tolist() == [[[[-INF, 0.0, 1.0, 2.0]]]]


def test_max_pool_gradcheck_with_padding():
    x = tm.tensor(np.random.default_rng(0).permutation(30).reshape(1, 1, 5, 6) / 7.0, dtype=tm.float64,
                  requires_grad=True)
    assert gradcheck(lambda t: F.max_pool2d(t, 3, 2, 1), (x,))
    assert gradgradcheck(lambda t: F.max_pool2d(t, 3, 2, 1), (x,))
    assert gradcheck(lambda t: F.max_pool1d(t[0, 0], 2, 2, 1, ceil_mode=True), (x,))


def _has_empty_window(size, kernel, stride, padding, dilation, ceil_mode) -> bool:
    """Whether a window reads no input element (possible with dilation; PyTorch's index for it
    aliases another element, a case left out of the comparison)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    count = span // stride + 1
    if ceil_mode and (count - 1) * stride >= size + padding:
        count -= 1
    return any(not any(0 <= o * stride - padding + t * dilation < size for t in range(kernel)) for o in range(count))


def _pool(name, *arguments):
    """A pooling function of ``nn.functional`` with its indices, for ``functools.partial``:
    ``(library, input)`` as its last two arguments."""
    *arguments, library, input = arguments
    return getattr(library.nn.functional, name)(input, *arguments, return_indices=True)


@pytest.mark.torch
def test_max_pooling_indices_and_gradients_match_torch():
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 80:
        kind = ("1d", "2d", "adaptive1d", "adaptive2d")[checked % 4]
        ceil_mode = bool(rng.random() < 0.5)
        if kind == "2d":
            kernel, stride, dilation = ([int(v) for v in rng.integers(1, 4, 2)] for _ in range(3))
            padding = [int(rng.integers(0, k // 2 + 1)) for k in kernel]
            shape = (1, 2, int(rng.integers(1, 7)), int(rng.integers(1, 7)))
            if any(_has_empty_window(shape[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                   or (shape[2 + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) < 0 for i in range(2)):
                continue
            pool = functools.partial(_pool, "max_pool2d", kernel, stride, padding, dilation, ceil_mode)
        elif kind == "1d":
            kernel, stride, dilation = (int(v) for v in rng.integers(1, 4, 3))
            padding = int(rng.integers(0, kernel // 2 + 1))
            shape = (2, int(rng.integers(1, 9)))
            if _has_empty_window(shape[1], kernel, stride, padding, dilation, ceil_mode) or \
                    shape[1] + 2 * padding - dilation * (kernel - 1) - 1 < 0:
                continue
            pool = functools.partial(_pool, "max_pool1d", kernel, stride, padding, dilation, ceil_mode)
        elif kind == "adaptive1d":
            shape, size = (2, int(rng.integers(1, 9))), int(rng.integers(1, 9))
            pool = functools.partial(_pool, "adaptive_max_pool1d", size)
        else:
            shape, size = (1, int(rng.integers(1, 6)), int(rng.integers(1, 6))), [int(v) for v in rng.integers(1, 6, 2)]
            pool = functools.partial(_pool, "adaptive_max_pool2d", size)
        data = rng.integers(-3, 3, size=shape).astype(np.float64)
        draw = rng.random(shape)
        data[draw < 0.25] = -np.inf
        data[(draw > 0.25) & (draw < 0.35)] = np.nan
        if rng.random() < 0.3:
            data[...] = -np.inf
        _assert_same_grads(lambda L, x, pool=pool: pool(L, x)[0], data)
        import torch

        ours, theirs = pool(tm, tm.tensor(data))[1], pool(torch, torch.tensor(data))[1]
        assert ours.tolist() == theirs.tolist(), (kind, shape, data.tolist())
        checked += 1


# -- convolution: NaN stays where the weight reaches ----------------------------------------------

def test_conv2d_nan_weight_reaches_only_the_inputs_it_touches():
    x = tm.ones(1, 1, 5, 5, requires_grad=True)
    w = tm.ones(1, 1, 3, 3)
    w[0, 0, 0, 0] = NAN
    F.conv2d(x, w).sum().backward()
    grad = x.grad[0, 0].numpy()
    expected_nan = np.zeros((5, 5), bool)
    expected_nan[:3, :3] = True
    assert (np.isnan(grad) == expected_nan).all()
    assert grad[:3, 3:].tolist() == [[2.0, 1.0], [4.0, 2.0], [6.0, 3.0]]
    assert grad[3:].tolist() == [[2.0, 4.0, 6.0, 4.0, 2.0], [1.0, 2.0, 3.0, 2.0, 1.0]]


def test_conv1d_nan_input_reaches_only_the_weight_taps_that_read_it():
    x = tm.tensor([[[1.0, 1.0, 1.0, 1.0, NAN]]])
    w = tm.ones(1, 1, 3, requires_grad=True)
    F.conv1d(x, w).sum().backward()
    grad = w.grad.numpy().ravel()
    assert grad[:2].tolist() == [3.0, 3.0] and np.isnan(grad[2])


def test_conv_transpose1d_nan_weight_leaves_output_padding_alone():
    # The output_padding position is reached by no input: bias only, never 0 * NaN.
    out = F.conv_transpose1d(tm.ones(1, 1, 2), tm.tensor([[[NAN, 1.0]]]), tm.tensor([0.5]), stride=2,
                             output_padding=1)
    assert np.isnan(out[0, 0, [0, 2]].numpy()).all() and out[0, 0, [1, 3, 4]].tolist() == [1.5, 1.5, 0.5]


def _convolution(library, x, w, b, arguments):
    return library.convolution(x, w, b, *arguments)


@pytest.mark.torch
@pytest.mark.parametrize("seed", range(3))
def test_convolution_gradients_with_nan_and_inf_match_torch(seed):
    rng = np.random.default_rng(seed)
    checked = 0
    while checked < 60:
        spatial, transposed, groups = int(rng.integers(1, 4)), bool(rng.random() < 0.4), int(rng.choice([1, 2]))
        channels_in, channels_out = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
        kernel, stride, dilation = ([int(v) for v in rng.integers(1, 4 if i == 0 else 3, spatial)] for i in range(3))
        padding = [int(rng.integers(0, 3)) for _ in range(spatial)]
        output_padding = [int(rng.integers(0, max(s, d))) for s, d in zip(stride, dilation)] if transposed \
            else [0] * spatial
        sizes = [int(v) for v in rng.integers(1, 6 if spatial < 3 else 4, spatial)]
        x = rng.standard_normal((int(rng.integers(1, 3)), channels_in, *sizes))
        w = rng.standard_normal((channels_in, channels_out // groups, *kernel) if transposed
                                else (channels_out, channels_in // groups, *kernel))
        b = rng.standard_normal(channels_out)
        target = (x, w, None)[checked % 3]
        if target is not None:
            for _ in range(2):
                target.reshape(-1)[rng.integers(target.size)] = rng.choice([np.nan, np.inf, -np.inf])

        run = functools.partial(_convolution, arguments=(stride, padding, dilation, transposed, output_padding, groups))
        try:
            shape = run(tm, tm.tensor(x), tm.tensor(w), tm.tensor(b)).shape
        except RuntimeError:  # arguments PyTorch rejects too (test_convolution compares the errors)
            continue
        grad_output = rng.standard_normal(tuple(shape))
        if target is None and grad_output.size:
            grad_output.reshape(-1)[rng.integers(grad_output.size)] = np.nan
        _assert_same_grads(run, x, w, b, grad_output=grad_output, rtol=1e-6, atol=1e-8)
        checked += 1


# -- prod over an empty dimension -----------------------------------------------------------------

def test_prod_gradient_over_an_empty_dimension():
    for reduce in (lambda t: t.prod(1).sum(), lambda t: t.prod(1, keepdim=True).sum(), lambda t: t.prod(),
                   lambda t: t.prod(0).sum()):
        x = tm.zeros(3, 0, requires_grad=True)
        reduce(x).backward()
        assert x.grad.shape == (3, 0) and x.grad.dtype is tm.float32
    x = tm.zeros(2, 0, requires_grad=True)
    (grad,) = tm.autograd.grad(x.prod(1).sum(), x, create_graph=True)
    assert grad.shape == (2, 0)


# -- cumprod with zeros ---------------------------------------------------------------------------

def test_cumprod_gradient_with_a_zero():
    x = tm.tensor([1.0, 0.0, 2.0, 3.0], requires_grad=True)
    x.cumprod(0).sum().backward()
    assert x.grad.tolist() == [1.0, 9.0, 0.0, 0.0]


def test_cumprod_gradient_with_several_zeros_along_any_dim():
    x = tm.tensor([2.0, 0.0, 3.0, 0.0, 5.0], dtype=tm.float64, requires_grad=True)
    x.cumprod(0).sum().backward()
    assert x.grad.tolist() == [1.0, 8.0, 0.0, 0.0, 0.0]
    x = tm.tensor([[2.0, 1.0], [0.0, 4.0], [3.0, 0.0]], requires_grad=True)
    x.cumprod(0).backward(tm.tensor([[1.0, 1.0], [1.0, 2.0], [1.0, 1.0]]))
    # column 0: (2, 0, 3): [1, 2 + 6, 0]; column 1: (1, 4, 0) with weights (1, 2, 1): [1 + 8, 2, 4]
    assert x.grad.tolist() == [[1.0, 9.0], [8.0, 2.0], [0.0, 4.0]]
    x = tm.tensor([[0.0, 0.0], [3.0, 0.0]], requires_grad=True)
    x.cumprod(-1).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [1.0, 3.0]]


def test_cumprod_gradient_with_zeros_is_exact_to_second_order():
    for data in ([1.0, 0.0, 2.0, 3.0], [[0.0, 2, 0, 4], [1, 0, 0, 5]], [[0.0, 0], [3, 0]], [0.0]):
        for dim in range(np.ndim(data)):
            x = tm.tensor(data, dtype=tm.float64, requires_grad=True)
            def scan(t, dim=dim):
                return t.cumprod(dim)
            assert gradcheck(scan, (x,))
            assert gradgradcheck(scan, (x,))
            z = (tm.tensor(data, dtype=tm.complex128) * (1 + 0.5j)).requires_grad_()
            assert gradcheck(scan, (z,))
            assert gradgradcheck(scan, (z,))


@pytest.mark.torch
def test_cumprod_gradients_with_zeros_match_torch():
    import torch

    rng = np.random.default_rng(3)
    for trial in range(60):
        shape = tuple(int(v) for v in rng.integers(1, 6, int(rng.integers(1, 4))))
        dim = int(rng.integers(-len(shape), len(shape)))
        data = rng.integers(-2, 3, shape) * rng.random(shape)
        data[rng.random(shape) < 0.3] = 0
        grad_output = rng.standard_normal(shape)
        if trial % 3 == 0:
            data = data + 1j * rng.integers(-1, 2, shape) * (data != 0)
            grad_output = grad_output + 1j * rng.standard_normal(shape)
        _assert_same_grads(lambda L, x, dim=dim: x.cumprod(dim), data, grad_output=grad_output)
        # second order: the gradient of <v, d cumprod> with respect to the input and the grad
        v = rng.standard_normal(shape)
        results = []
        for library in (tm, torch):
            x = library.tensor(data, requires_grad=True)
            g = library.tensor(grad_output, requires_grad=True)
            (first,) = library.autograd.grad(x.cumprod(dim), x, g, create_graph=True)
            pairing = (first * library.tensor(v)).sum()
            pairing = pairing.real if pairing.is_complex() else pairing
            # A dimension of size 1 leaves the first derivative independent of the input.
            seconds = library.autograd.grad(pairing, (x, g), allow_unused=True)
            results.append([np.zeros(shape) if t is None else t.detach().resolve_conj().numpy() for t in seconds])
        for ours, theirs in zip(*results):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)


# -- padding='same' with a kernel longer than the input -------------------------------------------

def test_conv1d_same_padding_with_an_even_kernel_longer_than_the_input():
    x = tm.tensor([[[3.0]]], requires_grad=True)
    w = tm.tensor([[[2.0, 5.0]]], requires_grad=True)
    out = F.conv1d(x, w, padding="same")  # padded (0 before, 1 after): [3, 0]
    assert out.tolist() == [[[6.0]]]
    out.sum().backward()
    assert x.grad.tolist() == [[[2.0]]] and w.grad.tolist() == [[[3.0, 0.0]]]
    assert F.conv1d(tm.ones(1, 1, 1, device="meta"), tm.ones(1, 1, 4, device="meta"), padding="same",
                    dilation=3).shape == (1, 1, 1)


def test_conv2d_same_padding_with_an_even_kernel_longer_than_the_input():
    x = tm.tensor([[[[3.0]]]], requires_grad=True)
    w = tm.tensor([[[[1.0, 2.0], [4.0, 8.0]]]], requires_grad=True)
    out = F.conv2d(x, w, padding="same")
    assert out.tolist() == [[[[3.0]]]]
    out.sum().backward()
    assert x.grad.tolist() == [[[[1.0]]]] and w.grad.tolist() == [[[[3.0, 0.0], [0.0, 0.0]]]]


@pytest.mark.torch
@pytest.mark.parametrize("spatial", [1, 2])
def test_same_padding_matches_torch(spatial):
    rng = np.random.default_rng(spatial)
    for n in range(1, 4):
        for kernel in range(1, n + 3):
            for dilation in (1, 2, 3):
                x, w = rng.standard_normal((1, 2, *[n] * spatial)), rng.standard_normal((3, 2, *[kernel] * spatial))
                b = rng.standard_normal(3)

                def run(L, x, w, b, dilation=dilation):
                    conv = L.nn.functional.conv1d if spatial == 1 else L.nn.functional.conv2d
                    with warnings.catch_warnings():  # PyTorch's note about a zero-padded copy
                        warnings.simplefilter("ignore")
                        return conv(x, w, b, padding="same", dilation=dilation)
                _assert_same_grads(run, x, w, b, rtol=1e-6, atol=1e-9)
