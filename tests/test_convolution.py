"""Convolutions (``convolution``, ``conv1d``, ``conv2d``): exact values, PyTorch's errors, dtypes
and gradients (including 'same' padding with its odd extra pad, which the op table's in-place
tests cannot cover), and random shapes against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tensormodes as tm

from .torch_oracle import assert_same_outcome

_X2 = "L.arange(50.).reshape(1, 2, 5, 5)"
_W2 = "L.arange(54.).reshape(3, 2, 3, 3) / 10"
_X1 = "L.arange(10.).reshape(1, 2, 5)"
_W1 = "L.arange(18.).reshape(3, 2, 3) / 10"


def test_conv2d_exact_values():
    image = tm.tensor([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]])
    kernel = tm.tensor([[[[1.0, 0.0], [0.0, -1.0]]]])
    assert tm.conv2d(image, kernel).tolist() == [[[[-4.0, -4.0], [-4.0, -4.0]]]]
    assert tm.conv2d(image, kernel, padding=1, stride=2).tolist() == [[[[-1.0, -3.0], [-7.0, -4.0]]]]
    assert tm.conv2d(image[0], kernel, tm.tensor([1.0])).tolist() == [[[-3.0, -3.0], [-3.0, -3.0]]]


def test_conv1d_exact_values():
    signal = tm.tensor([[[1.0, 2.0, 4.0, 8.0]]])
    assert tm.conv1d(signal, tm.tensor([[[1.0, 1.0]]]), dilation=2).tolist() == [[[5.0, 10.0]]]
    assert tm.conv1d(signal, tm.tensor([[[1.0, 1.0]]]), padding="same").tolist() == [[[3.0, 6.0, 12.0, 8.0]]]


def test_functional_function_is_the_torch_level_one():
    # As in PyTorch (F.conv2d is torch.conv2d), once nn.functional binds it.
    from tensormodes._api import build as _functions

    functional = _functions.namespace_function
    with pytest.raises(AttributeError):
        functional("tensormodes.nn.functional", "conv2d")
    assert tm.conv2d.__name__ == "conv2d"


CASES = [
    f"L.conv2d({_X2}, {_W2})", f"L.conv2d({_X2}, {_W2}, L.tensor([1., 2., 3.]), 2, 1)",
    f"L.conv2d({_X2}, {_W2}, padding='same')", f"L.conv2d({_X2}, {_W2}, padding='valid', stride=(2, 1))",
    f"L.conv2d({_X2}, {_W2}, padding=(1,), dilation=(2, 1))",
    f"L.conv2d({_X2}[0], {_W2})", f"L.conv2d({_X2}.double(), {_W2}.double(), padding=(0, 2))",
    f"L.conv2d({_X2}.long(), ({_W2} * 10).long())", f"L.conv2d({_X2}.int(), ({_W2} * 10).int(), stride=2)",
    f"L.conv2d(L.zeros(0, 2, 5, 5), {_W2})",
    f"L.conv2d({_X2}, L.arange(18.).reshape(6, 1, 3, 1), groups=2)",
    f"L.conv2d({_X2}, L.ones(4, 1, 2, 2), padding='same', groups=2, dilation=(2, 3))",
    f"L.conv1d({_X1}, {_W1})", f"L.conv1d({_X1}[0], {_W1}, L.tensor([1., 0., -1.]), padding='same')",
    f"L.conv1d({_X1}, L.ones(3, 2, 2), padding='same', dilation=3)",
    f"L.conv1d({_X1}, {_W1}, stride=[2], padding=[2])",
    "L.convolution(L.ones(1, 2, 3, 3), L.ones(2, 3, 2, 2), None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1)",
    "L.convolution(L.ones(1, 4, 3), L.ones(4, 1, 3), L.ones(2), [3], [2], [2], True, [2], 2)",
    # errors
    f"L.conv2d({_X2}, {_W2}, stride=2, padding='same')", f"L.conv2d({_X2}, {_W2}, padding='foo')",
    f"L.conv2d(L.ones(2, 5, 5, 5, 5), {_W2})", f"L.conv2d(L.ones(5), {_W2})",
    f"L.conv2d({_X2}, L.ones(3, 2, 3))", f"L.conv2d({_X2}, L.ones(3, 4, 3, 3))",
    f"L.conv2d({_X2}, L.ones(3, 1, 3, 3), groups=2)", f"L.conv2d({_X2}, {_W2}, groups=0)",
    f"L.conv2d({_X2}, {_W2}, stride=0)", f"L.conv2d({_X2}, {_W2}, padding=-1)",
    f"L.conv2d({_X2}, {_W2}, dilation=0)", f"L.conv2d({_X2}, L.ones(3, 2, 6, 6))",
    f"L.conv2d({_X2}, {_W2}, L.ones(2))", f"L.conv2d({_X2}, {_W2}.double())",
    f"L.conv2d({_X2}.double(), {_W2})", f"L.conv2d({_X2}, {_W2}, L.ones(3).double())",
    f"L.conv2d({_X2}.long(), {_W2})", f"L.conv2d({_X2}.half(), {_W2}.half(), L.ones(3))",
    f"L.conv2d({_X2}.bool(), {_W2}.bool())", f"L.conv2d({_X2}, {_W2}, stride=(1, 1, 1))",
    f"L.conv2d({_X2}, {_W2}, padding=(1, 2, 3))", f"L.conv2d({_X2}, {_W2}, dilation=(1, 2, 3))",
    f"L.conv2d({_X2}, L.ones(0, 2, 3, 3))", f"L.conv1d({_X1}, {_W1}, L.ones(3, 1))",
    f"L.conv1d({_X1}.bool(), {_W1}.bool())",
    f"L.convolution({_X2}[0], {_W2}, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)",
    f"L.convolution({_X2}, {_W2}, None, [1, 1], [0, 0], [1, 1], True, [0, 0], 1)",
    "L.convolution(L.ones(1, 3, 3, 3), L.ones(3, 2, 2, 2), None, [2, 2], [1, 1], [1, 1], True, [2, 2], 1)",
    f"L.convolution({_X2}.cfloat(), {_W2}.cfloat(), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)",
    # transposed
    f"L.conv_transpose2d({_X2}, {_W2}.transpose(0, 1))", f"L.conv_transpose2d({_X2}[0], {_W2}.transpose(0, 1))",
    f"L.conv_transpose2d({_X2}, {_W2}.transpose(0, 1), L.ones(3), 2, 1, 1)",
    f"L.conv_transpose2d({_X2}, L.ones(2, 2, 3, 2), None, (2, 3), (0, 1), (1, 2), 2, (2, 1))",
    f"L.conv_transpose2d({_X2}.cfloat(), {_W2}.transpose(0, 1).cfloat())",
    f"L.conv_transpose2d({_X2}.long(), {_W2}.transpose(0, 1).long())",
    f"L.conv_transpose1d({_X1}, {_W1}.transpose(0, 1), stride=[3], padding=1, output_padding=2)",
    f"L.conv_transpose1d({_X1}[0], {_W1}.transpose(0, 1), dilation=2)",
    f"L.conv_transpose2d({_X2}[0, 0], {_W2})", f"L.conv_transpose1d({_X2}, {_W1})",
    f"L.conv_transpose2d({_X2}, {_W2}.transpose(0, 1), stride=2, output_padding=2)",
    f"L.conv_transpose2d({_X2}, {_W2})", f"L.conv_transpose2d({_X2}, {_W2}.transpose(0, 1), padding=4)",
    f"L.conv_transpose2d({_X2}, {_W2}.transpose(0, 1), L.ones(2))",
    f"L.conv_transpose1d({_X1}, {_W1}.transpose(0, 1), stride=1, output_padding=1)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_outcome(expression, rtol=1e-5, atol=1e-5)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    f"L.conv2d({_X2}.half() / 50, {_W2}.half())", f"L.conv2d({_X2}.bfloat16() / 50, {_W2}.bfloat16(), stride=2)",
    f"L.conv2d({_X2}.cfloat(), ({_W2} * 1j).cfloat())"])
def test_narrow_and_complex_dtypes_match_torch(expression):
    assert_same_outcome(expression, rtol=2e-2, atol=2e-2)


def _gradients(library, x, w, b, create_graph=False, transposed=False, **options):
    import torch

    make = torch.tensor if library is torch else tm.tensor
    leaves = [make(a, requires_grad=True) for a in (x, w, b)]
    name = f"conv_transpose{x.ndim - 2}d" if transposed else f"conv{x.ndim - 2}d"
    out = getattr(library, name)(*leaves, **options)
    cotangent = make(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
    grads = library.autograd.grad(out, leaves, cotangent, create_graph=create_graph)
    if create_graph:  # a second-order quantity: d/d leaves of <grads, grads>
        total = sum((g * g).sum() for g in grads)
        grads = library.autograd.grad(total, leaves, allow_unused=True)
    return [None if g is None else g.detach().numpy() for g in grads]


@pytest.mark.torch
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("shapes, options", [
    (((2, 2, 5), (3, 2, 2)), {"padding": "same"}),
    (((1, 2, 5), (2, 2, 2)), {"padding": "same", "dilation": 3}),
    (((1, 4, 4, 5), (2, 2, 2, 3)), {"padding": "same", "groups": 2, "dilation": (1, 2)}),
    (((2, 2, 6, 5), (4, 1, 3, 2)), {"stride": (2, 3), "padding": (1, 0), "groups": 2}),
    (((1, 1, 7, 7), (2, 1, 2, 2)), {"stride": 3, "dilation": 2, "padding": 2}),
])
def test_gradients_match_torch(shapes, options, create_graph):
    import torch

    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal(shape) for shape in shapes)
    b = rng.standard_normal(shapes[1][0])
    ours = _gradients(tm, x, w, b, create_graph, **options)
    theirs = _gradients(torch, x, w, b, create_graph, **options)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-10)


@pytest.mark.torch
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("shapes, options", [
    (((2, 2, 5), (2, 3, 2)), {"stride": 2, "output_padding": 1}),
    (((1, 4, 3, 4), (4, 1, 2, 3)), {"groups": 2, "dilation": (1, 2), "padding": (0, 1)}),
    (((2, 2, 3, 3), (2, 2, 3, 2)), {"stride": (3, 2), "padding": 1, "output_padding": (2, 0)}),
    # output_padding at least the stride (allowed below the dilation): the plain convolution behind
    # the gradients has more outputs than the transposed one has inputs
    (((2, 4, 3, 4), (4, 3, 2, 3)), {"padding": (1, 0), "output_padding": (1, 1), "groups": 2, "dilation": (2, 3)}),
])
def test_transposed_gradients_match_torch(shapes, options, create_graph):
    import torch

    rng = np.random.default_rng(1)
    x, w = (rng.standard_normal(shape) for shape in shapes)
    b = rng.standard_normal(shapes[1][1] * options.get("groups", 1))
    ours = _gradients(tm, x, w, b, create_graph, transposed=True, **options)
    theirs = _gradients(torch, x, w, b, create_graph, transposed=True, **options)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-10)


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(spatial=st.sampled_from([1, 2]), batch=st.integers(1, 2), groups=st.integers(1, 2),
       channels=st.integers(1, 2), out_per_group=st.integers(1, 2), size=st.integers(1, 7),
       kernel=st.integers(1, 3), stride=st.integers(1, 3), padding=st.integers(0, 2), dilation=st.integers(1, 2),
       seed=st.integers(0, 2**16))
def test_random_convolutions_match_torch(spatial, batch, groups, channels, out_per_group, size, kernel, stride,
                                         padding, dilation, seed):
    import torch

    assume(dilation * (kernel - 1) + 1 <= size + 2 * padding)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, groups * channels, *(size,) * spatial))
    w = rng.standard_normal((groups * out_per_group, channels, *(kernel,) * spatial))
    options = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    name = f"conv{spatial}d"
    ours = getattr(tm, name)(tm.tensor(x), tm.tensor(w), **options).numpy()
    theirs = getattr(torch, name)(torch.tensor(x), torch.tensor(w), **options).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    b = rng.standard_normal(w.shape[0])
    for o, t in zip(_gradients(tm, x, w, b, **options), _gradients(torch, x, w, b, **options)):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-10)


# -- max_pool2d -----------------------------------------------------------------------------------

def test_max_pool2d_window_of_padding_alone_is_minus_infinity_without_gradient():
    x = tm.tensor([[[[0.5]], [[0.25]]]], requires_grad=True)
    out = tm.max_pool2d(x, 2, 1, 1, (1, 2))
    assert out.tolist() == [[[[-np.inf], [-np.inf]], [[-np.inf], [-np.inf]]]]
    out.sum().backward()
    assert x.grad.tolist() == [[[[0.0]], [[0.0]]]]


def test_max_pool2d_exact_values_and_first_maximum_on_ties():
    x = tm.tensor([[[1.0, 3.0, 3.0], [3.0, 0.0, 2.0], [1.0, 1.0, 1.0]]], requires_grad=True)
    out = tm.max_pool2d(x, 2, 1)
    assert out.tolist() == [[[3.0, 3.0], [3.0, 2.0]]]
    out.sum().backward()
    # every tie goes to the window's first 3 (row-major): (0, 1) twice, then (1, 0)
    assert x.grad.tolist() == [[[0.0, 2.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]]


_P = "L.arange(50.).reshape(1, 2, 5, 5)"
_R = "L.tensor([[[[1., 3., 3., 0.], [3., float('nan'), 2., 2.], [0., 5., 5., 1.], [5., 1., 0., 5.]]]])"

POOL_CASES = [
    f"L.max_pool2d({_P}, 2)", f"L.max_pool2d({_P}, 2, ceil_mode=True)", f"L.max_pool2d({_P}, 3, 2, 1, ceil_mode=True)",
    f"L.max_pool2d({_P}, (2, 3), (1, 2), (1, 0), (2, 1))", f"L.max_pool2d({_P}, 2, 2, 1, 2)",
    f"L.max_pool2d({_P}[0], [2], [])", f"L.max_pool2d({_P}.long(), 2)", f"L.max_pool2d({_P}.to(L.uint8), 2, 1)",
    f"L.max_pool2d({_P}.half(), 2)", f"L.max_pool2d({_P}.bfloat16(), 3, 1, 1)", f"L.max_pool2d(-{_P}.int(), 2, 1, 1)",
    f"L.max_pool2d({_R}, 2, 1)", "L.max_pool2d(L.zeros(0, 2, 5, 5), 2)",
    # errors
    f"L.max_pool2d({_P}, 3, padding=2)", f"L.max_pool2d({_P}, 0)", f"L.max_pool2d({_P}, 0, 1)",
    f"L.max_pool2d({_P}, (0, 3), 1)", f"L.max_pool2d({_P}, 2, 0)", f"L.max_pool2d({_P}, (3, 3), stride=(0, 1))",
    f"L.max_pool2d({_P}, 2, dilation=0)", f"L.max_pool2d({_P}, (3, 3), dilation=(1, 0))",
    f"L.max_pool2d({_P}, 2, padding=-1)", f"L.max_pool2d({_P}, (2, 2, 2))", f"L.max_pool2d({_P}, 2, (1, 1, 1))",
    f"L.max_pool2d({_P}, 2, padding=(1, 1, 1))", f"L.max_pool2d({_P}, 6)", f"L.max_pool2d({_P}, 3, 1, 0, 3)",
    f"L.max_pool2d({_P}, (3, 1), padding=(1, 1))", f"L.max_pool2d({_P}, (1, 3), padding=(1, 1))",
    f"L.max_pool2d({_P}[0, 0], 2)", f"L.max_pool2d({_P}[None], 2)", f"L.max_pool2d({_P}.bool(), 2)",
    f"L.max_pool2d({_P}.cfloat(), 2)", "L.max_pool2d(L.zeros(1, 0, 5, 5), 2)", "L.max_pool2d(L.zeros(1, 2, 0, 5), 2)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", POOL_CASES)
def test_max_pool2d_matches_torch(expression):
    assert_same_outcome(expression)


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(batch=st.integers(0, 2), size=st.tuples(st.integers(1, 7), st.integers(1, 7)),
       kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       padding=st.tuples(st.integers(0, 1), st.integers(0, 1)),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       ceil_mode=st.booleans(), ties=st.booleans(), seed=st.integers(0, 2**16))
def test_random_max_pools_match_torch(batch, size, kernel, stride, padding, dilation, ceil_mode, ties, seed):
    import torch

    assume(all(p <= (d * (k - 1) + 1) // 2 for k, p, d in zip(kernel, padding, dilation)))
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (batch, 2, *size)).astype(np.float64) if ties else rng.standard_normal((batch, 2, *size))
    options = {"kernel_size": kernel, "stride": stride, "padding": padding, "dilation": dilation,
               "ceil_mode": ceil_mode}
    outcomes = []
    for library in (tm, torch):
        leaf = library.tensor(x, requires_grad=True)
        try:
            out = library.max_pool2d(leaf, **options)
        except RuntimeError as error:
            outcomes.append(str(error))
            continue
        if np.isneginf(out.detach().numpy()).any():
            # A window of padding alone (maximum -inf) has no input element: PyTorch's index then
            # points past its plane, and its backward writes there (past the last plane, out of
            # its buffer: it may abort the process). Ours goes nowhere; values compared only.
            outcomes.append((out.detach().numpy(), None))
            continue
        out.backward(library.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))))
        outcomes.append((out.detach().numpy(), leaf.grad.numpy()))
    ours, theirs = outcomes
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs
        return
    np.testing.assert_array_equal(ours[0], theirs[0])
    if theirs[1] is not None:
        np.testing.assert_array_equal(ours[1], theirs[1])


_Q = "L.tensor([[1., 3., 3., 0., 5., float('nan'), 2., 2.], [0., 5., 5., 1., 5., 1., 0., 5.]])"

POOL1D_CASES = [
    f"L.max_pool1d({_Q}, 2)", f"L.max_pool1d({_Q}, 3, 2, 1, ceil_mode=True)", f"L.max_pool1d({_Q}[None], 2, 1, 1, 2)",
    f"L.max_pool1d({_Q}, [2], [])", f"L.max_pool1d({_Q}, 2, None)", f"L.max_pool1d({_Q}.double(), 3, 1, 1, 3)",
    f"L.max_pool1d({_Q}.half(), 2, 1)", f"L.max_pool1d({_Q}.bfloat16(), 2, 1)", "L.max_pool1d(L.zeros(0, 2, 5), 2)",
    # errors
    f"L.max_pool1d({_Q}, (2, 2))", f"L.max_pool1d({_Q}, 2, (1, 1))", f"L.max_pool1d({_Q}, 2, 1, (1, 1))",
    f"L.max_pool1d({_Q}, 2, 1, 0, (1, 1))", f"L.max_pool1d({_Q}, 0, 0)", f"L.max_pool1d({_Q}, 2, 0, -1)",
    f"L.max_pool1d({_Q}.bool(), 0)", f"L.max_pool1d({_Q}[0, 0], 2)", f"L.max_pool1d({_Q}, 3, 1, 1, 0)",
    f"L.max_pool1d({_Q}, 3, 1, 2, 2)", f"L.max_pool1d({_Q}, 9)", f"L.max_pool1d({_Q}.long(), 2)",
    f"L.max_pool1d({_Q}.cfloat(), 2)", f"L.max_pool1d({_Q}.bool(), 2)", f"L.max_pool1d({_Q}[None, None], 2)",
    "L.max_pool1d(L.zeros(2, 0), 2)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", POOL1D_CASES)
def test_max_pool1d_matches_torch(expression):
    assert_same_outcome(expression)


def test_functional_names():
    import tensormodes.nn.functional as F

    assert F.conv2d is tm.conv2d and F.conv1d is tm.conv1d and F.conv_transpose2d is tm.conv_transpose2d
    x = tm.tensor([[[1.0, 3.0, 2.0, 0.0], [4.0, 1.0, 0.0, 5.0]]])
    assert F.max_pool2d(x, 2).tolist() == [[[4.0, 5.0]]]
    assert F.max_pool1d(x, 2, stride=1).tolist() == [[[3.0, 3.0, 2.0], [4.0, 1.0, 5.0]]]
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert values.tolist() == [[[4.0, 5.0]]] and indices.tolist() == [[[4, 7]]]


@pytest.mark.torch
@pytest.mark.parametrize("case", ["F.max_pool2d(L.arange(16.).reshape(1, 4, 4), 2)",
                                  "F.max_pool2d(L.arange(16.).reshape(1, 4, 4), 3, stride=1, padding=1)",
                                  "F.max_pool2d(L.arange(25.).reshape(1, 5, 5), 2, ceil_mode=True)",
                                  "F.max_pool1d(L.arange(8.).reshape(1, 8), 3, 2)"])
def test_functional_max_pool_matches_torch(case):
    import torch

    import tensormodes.nn.functional as F

    ours = eval(case, {"L": tm, "F": F})
    theirs = eval(case, {"L": torch, "F": torch.nn.functional})
    assert ours.tolist() == theirs.tolist()


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(spatial=st.sampled_from([1, 2]), batch=st.integers(1, 2), groups=st.integers(1, 2),
       channels=st.integers(1, 2), out_per_group=st.integers(1, 2), size=st.integers(1, 5),
       kernel=st.integers(1, 3), stride=st.integers(1, 3), padding=st.integers(0, 2), dilation=st.integers(1, 2),
       output_padding=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_random_transposed_convolutions_match_torch(spatial, batch, groups, channels, out_per_group, size, kernel,
                                                    stride, padding, dilation, output_padding, seed):
    import torch

    assume(output_padding < max(stride, dilation))
    assume((size - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 + output_padding >= 1)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, groups * channels, *(size,) * spatial))
    w = rng.standard_normal((groups * channels, out_per_group, *(kernel,) * spatial))
    b = rng.standard_normal(groups * out_per_group)
    options = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
               "output_padding": output_padding}
    ours = _gradients(tm, x, w, b, transposed=True, **options)
    theirs = _gradients(torch, x, w, b, transposed=True, **options)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-10)
    name = f"conv_transpose{spatial}d"
    ours_out = getattr(tm, name)(tm.tensor(x), tm.tensor(w), tm.tensor(b), **options).numpy()
    theirs_out = getattr(torch, name)(torch.tensor(x), torch.tensor(w), torch.tensor(b), **options).numpy()
    np.testing.assert_allclose(ours_out, theirs_out, rtol=1e-10, atol=1e-10)
