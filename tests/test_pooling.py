"""Pooling, unpooling, interpolate, unfold / fold, channel dropout and embedding_bag: values,
dtypes, shapes, errors and gradients compared with PyTorch, and exact values where they are
easy to state."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm
import tensormodes.nn.functional as F

from .torch_oracle import assert_same_outcome

_X = "L.arange(50.).reshape(1, 2, 5, 5)"
_R = "L.tensor([[[[1., 3., 3., 0.], [3., float('nan'), 2., 2.], [0., 5., 5., 1.], [5., 1., 0., 5.]]]])"
_S = "L.tensor([[1., 3., 3., 0., 5., 4., 2., 2.], [0., 5., 5., 1., 5., 1., 0., 5.]])"
_N = "L.nn.functional"

CASES = [
    # avg_pool2d
    f"{_N}.avg_pool2d({_X}, 2)", f"{_N}.avg_pool2d({_X}, 3, 2, 1)", f"{_N}.avg_pool2d({_X}, 3, 2, 1, True)",
    f"{_N}.avg_pool2d({_X}, 3, 2, 1, True, False)", f"{_N}.avg_pool2d({_X}, (2, 3), (1, 2), (1, 0))",
    f"{_N}.avg_pool2d({_X}, 2, divisor_override=3)", f"{_N}.avg_pool2d({_X}[0], [2], [])",
    f"{_N}.avg_pool2d({_X}.long() - 20, 2, 1)", f"{_N}.avg_pool2d({_X}.half(), 2)",
    f"{_N}.avg_pool2d({_X}.bfloat16(), 3, 1, 1)", f"{_N}.avg_pool2d({_X}.double(), 2, ceil_mode=True)",
    f"{_N}.avg_pool2d(L.zeros(0, 2, 4, 4), 2)", f"{_N}.avg_pool2d({_R}, 2, 1)",
    f"{_N}.avg_pool2d({_X}, 3, padding=2)", f"{_N}.avg_pool2d({_X}, 0)", f"{_N}.avg_pool2d({_X}, 2, 0)",
    f"{_N}.avg_pool2d({_X}, 2, padding=-1)", f"{_N}.avg_pool2d({_X}, (2, 2, 2))",
    f"{_N}.avg_pool2d({_X}, 2, (1, 1, 1))", f"{_N}.avg_pool2d({_X}, 2, padding=(1, 1, 1))",
    f"{_N}.avg_pool2d({_X}, 6)", f"{_N}.avg_pool2d({_X}[0, 0], 2)", f"{_N}.avg_pool2d({_X}.cfloat(), 2)",
    f"{_N}.avg_pool2d({_X}.bool(), 2)", f"{_N}.avg_pool2d({_X}, 2, divisor_override=0)",
    f"{_N}.avg_pool2d(L.zeros(1, 0, 4, 4), 2)", f"{_N}.avg_pool2d({_X}[None], 2)",
    # avg_pool1d
    f"{_N}.avg_pool1d({_S}[None], 2)", f"L.avg_pool1d({_S}, 3, 2, 1, True)",
    f"L.avg_pool1d({_S}, 3, 2, 1, True, False)",
    f"L.avg_pool1d({_S}.long(), 3, 1)", f"L.avg_pool1d({_S}, [2], [])",
    f"L.avg_pool1d({_S}, (2, 2))", f"L.avg_pool1d({_S}, 2, padding=2)", f"L.avg_pool1d({_S}, 9)",
    f"L.avg_pool1d({_S}[0], 2)", f"L.avg_pool1d({_S}.cfloat(), 2)",
    # adaptive average
    f"L.adaptive_avg_pool1d({_S}, 3)", f"{_N}.adaptive_avg_pool1d({_S}[None], [5])", f"L.adaptive_avg_pool1d({_S}, 0)",
    f"L.adaptive_avg_pool1d({_S}, 11)", f"L.adaptive_avg_pool1d({_S}.half(), 3)",
    f"L.adaptive_avg_pool1d({_S}, (2, 2))", f"L.adaptive_avg_pool1d({_S}.long(), 2)",
    f"L.adaptive_avg_pool1d({_S}[0], 2)",
    f"{_N}.adaptive_avg_pool2d({_X}, 3)", f"{_N}.adaptive_avg_pool2d({_X}, (2, 4))",
    f"{_N}.adaptive_avg_pool2d({_X}, (None, 3))", f"{_N}.adaptive_avg_pool2d({_X}[0], 7)",
    f"{_N}.adaptive_avg_pool2d({_X}.double(), 1)", f"{_N}.adaptive_avg_pool2d({_X}.bfloat16(), 2)",
    f"{_N}.adaptive_avg_pool2d({_X}, 0)", f"{_N}.adaptive_avg_pool2d({_R}, 3)",
    f"{_N}.adaptive_avg_pool2d({_X}, (2, 2, 2))", f"{_N}.adaptive_avg_pool2d({_X}[0, 0], 2)",
    f"{_N}.adaptive_avg_pool2d({_X}.long(), 2)", f"{_N}.adaptive_avg_pool2d({_X}, -1)",
    # adaptive max
    f"{_N}.adaptive_max_pool2d({_X}, 3)", f"{_N}.adaptive_max_pool2d({_X}, (2, 4), True)",
    f"{_N}.adaptive_max_pool2d({_X}, 7, return_indices=True)", f"{_N}.adaptive_max_pool2d({_X}, (None, 2))",
    f"{_N}.adaptive_max_pool2d({_R}, 3, True)", f"{_N}.adaptive_max_pool2d({_X}[0].half(), 2, True)",
    f"{_N}.adaptive_max_pool2d({_X}, 0)", f"{_N}.adaptive_max_pool2d({_X}.long(), 2)",
    f"{_N}.adaptive_max_pool2d({_X}[0, 0], 2)",
    # max pooling with indices
    f"{_N}.max_pool2d({_X}, 2, return_indices=True)", f"{_N}.max_pool2d({_X}, 3, 2, 1, 1, True, True)",
    f"{_N}.max_pool2d({_R}, 2, 1, return_indices=True)", f"{_N}.max_pool2d({_X}[0].long(), 2, return_indices=True)",
    f"{_N}.max_pool2d({_X}, (2, 3), (1, 2), (1, 0), (2, 1), return_indices=True)",
    f"{_N}.max_pool2d({_X}, 6, return_indices=True)", f"{_N}.max_pool2d({_X}.bool(), 2, return_indices=True)",
    f"{_N}.max_pool1d({_S}, 2, return_indices=True)", f"{_N}.max_pool1d({_S}[None], 3, 2, 1, 2, True, True)",
    f"L.max_pool1d_with_indices({_S}, 3, 1, 1)", f"L.max_pool1d_with_indices({_S}, 9)",
    # max_unpool2d
    f"{_N}.max_unpool2d(*{_N}.max_pool2d({_X}, 2, return_indices=True), 2)",
    f"{_N}.max_unpool2d(*{_N}.max_pool2d({_X}, 2, return_indices=True), 2, output_size=(5, 5))",
    f"{_N}.max_unpool2d(*{_N}.max_pool2d({_X}, 3, 2, 1, return_indices=True), 3, 2, 1)",
    f"{_N}.max_unpool2d(*{_N}.max_pool2d({_X}[0], 2, return_indices=True), 2, output_size=[1, 2, 5, 4])",
    f"{_N}.max_unpool2d({_X}, {_X}.long(), 2)", f"{_N}.max_unpool2d({_X}, L.full((1, 2, 5, 5), 200), 2)",
    f"{_N}.max_unpool2d({_X}, L.zeros(1, 2, 5, 5, dtype=L.long), 2, output_size=(3, 3))",
    f"{_N}.max_unpool2d({_X}, L.zeros(1, 2, 5, 5, dtype=L.long), 2, output_size=(3, 3, 3))",
    f"{_N}.max_unpool2d({_X}[0, 0], L.zeros(5, 5, dtype=L.long), 2)",
    f"{_N}.max_unpool2d({_X}.long(), L.zeros(1, 2, 5, 5, dtype=L.long), 2)",
    # interpolate
    f"{_N}.interpolate({_X}, scale_factor=2)", f"{_N}.interpolate({_X}, size=(3, 7))",
    f"{_N}.interpolate({_X}, scale_factor=0.5)", f"{_N}.interpolate({_X}, scale_factor=1.7)",
    f"{_N}.interpolate({_X}, scale_factor=1.7, recompute_scale_factor=True)",
    f"{_N}.interpolate({_X}, scale_factor=(2, 0.6))", f"{_N}.interpolate({_X}.long(), size=8)",
    f"{_N}.interpolate({_X}, scale_factor=2, mode='bilinear')",
    f"{_N}.interpolate({_X}, size=(3, 8), mode='bilinear')",
    f"{_N}.interpolate({_X}, size=(3, 8), mode='bilinear', align_corners=True)",
    f"{_N}.interpolate({_X}, scale_factor=1.3, mode='bilinear')",
    f"{_N}.interpolate({_X}.double(), scale_factor=(0.5, 2.5), mode='bilinear', align_corners=True)",
    f"{_N}.interpolate({_X}, size=1, mode='bilinear', align_corners=True)",
    f"{_N}.interpolate({_S}[None], scale_factor=2, mode='linear')",
    f"{_N}.interpolate({_S}[None], size=5, mode='linear', align_corners=True)",
    f"{_N}.interpolate({_S}[None], size=13)", f"{_N}.interpolate({_S}[None], scale_factor=0.4)",
    f"{_N}.interpolate({_X}, scale_factor=2, mode='bilinear', antialias=False).dtype",
    f"{_N}.interpolate({_X}, size=3, scale_factor=2)", f"{_N}.interpolate({_X})",
    f"{_N}.interpolate({_X}, scale_factor=2, align_corners=True)",
    f"{_N}.interpolate({_X}, scale_factor=2, mode='linear')",
    f"{_N}.interpolate({_S}[None], scale_factor=2, mode='bilinear')",
    f"{_N}.interpolate({_X}, size=(3, 4, 5))", f"{_N}.interpolate({_X}, scale_factor=(2, 2, 2))",
    f"{_N}.interpolate({_X}, size=(4, 4), recompute_scale_factor=True)",
    f"{_N}.interpolate({_S}, scale_factor=2)",
    # unfold / fold
    f"{_N}.unfold({_X}, 2)", f"{_N}.unfold({_X}, (2, 3), 1, 1, 2)", f"{_N}.unfold({_X}, 2, dilation=2, padding=1)",
    f"{_N}.unfold({_X}[0], 3)", f"{_N}.unfold({_X}.long(), 2, stride=(1, 2))",
    f"{_N}.unfold({_X}, 6)", f"{_N}.unfold({_X}, 0)", f"{_N}.unfold({_X}, 2, padding=-1)",
    f"{_N}.unfold({_X}, (2, 2, 2))", f"{_N}.unfold({_X}[0, 0], 2)",
    f"{_N}.fold(L.arange(48.).reshape(2, 8, 3), (4, 3), 2)",
    f"{_N}.fold(L.arange(36.).reshape(1, 4, 9), (5, 5), 2, padding=1, stride=2)",
    f"{_N}.fold(L.arange(16.).reshape(4, 4), (4, 4), 2, dilation=2)",
    f"{_N}.fold({_N}.unfold({_X}, (2, 3), 1, 1, 2), (5, 5), (2, 3), 1, 1, 2)",
    f"{_N}.fold(L.ones(1, 5, 4), (3, 3), 2)", f"{_N}.fold(L.ones(1, 4, 5), (3, 3), 2)",
    f"{_N}.fold(L.ones(1, 4), (3, 3), 2)", f"{_N}.fold(L.ones(1, 4, 4), (3, 3), 0)",
    # embedding_bag
    f"{_N}.embedding_bag(L.tensor([[0, 2], [1, 1]]), {_X}.reshape(10, 5))",
    f"{_N}.embedding_bag(L.tensor([[0, 2], [1, 1]]), {_X}.reshape(10, 5), mode='sum')",
    f"{_N}.embedding_bag(L.tensor([[0, 2], [1, 9]]), {_X}.reshape(10, 5), mode='max')",
    f"{_N}.embedding_bag(L.tensor([3, 0, 2, 1, 1]), {_X}.reshape(10, 5), L.tensor([0, 2, 2]))",
    f"{_N}.embedding_bag(L.tensor([3, 0, 2, 1, 1]), {_X}.reshape(10, 5), L.tensor([0, 2, 2]), mode='max')",
    f"{_N}.embedding_bag(L.tensor([3, 0, 2, 1, 1]), {_X}.reshape(10, 5), L.tensor([0, 2, 4, 5]), mode='sum', "
    f"include_last_offset=True)",
    f"{_N}.embedding_bag(L.tensor([3, 0, 2, 1, 1]), {_X}.reshape(10, 5), L.tensor([0, 1]), mode='sum', "
    f"per_sample_weights=L.tensor([1., 2., 3., 0.5, -1.]))",
    f"{_N}.embedding_bag(L.tensor([3, 0, 2, 1, 1]), {_X}.reshape(10, 5), L.tensor([0, 3]), padding_idx=1)",
    f"{_N}.embedding_bag(L.tensor([1, 1, 2, 1]), {_X}.reshape(10, 5), L.tensor([0, 2]), mode='max', padding_idx=1)",
    f"{_N}.embedding_bag(L.tensor([[3, 0], [2, 1]]), {_X}.reshape(10, 5).double(), mode='sum', padding_idx=-10)",
    f"{_N}.embedding_bag(L.tensor([[0, 2]]), {_X}.reshape(10, 5), L.tensor([0]))",
    f"{_N}.embedding_bag(L.tensor([0, 2]), {_X}.reshape(10, 5))",
    f"{_N}.embedding_bag(L.tensor([0, 2]), {_X}.reshape(10, 5), L.tensor([[0]]))",
    f"{_N}.embedding_bag(L.tensor([[[0]]]), {_X}.reshape(10, 5))",
    f"{_N}.embedding_bag(L.tensor([[0, 2]]), {_X}.reshape(10, 5), mode='min')",
    f"{_N}.embedding_bag(L.tensor([[0, 2]]), {_X}.reshape(10, 5), mode='max', scale_grad_by_freq=True)",
    f"{_N}.embedding_bag(L.tensor([[0, 2]]), {_X}.reshape(10, 5), per_sample_weights=L.ones(2, 1))",
    f"{_N}.embedding_bag(L.tensor([[0, 2]]), {_X}.reshape(10, 5), per_sample_weights=L.ones(1, 2))",
    f"{_N}.embedding_bag(L.tensor([[0, 2]]), {_X})",
    f"{_N}.embedding_bag(L.tensor([[0., 1.]]), {_X}.reshape(10, 5))",
    f"{_N}.embedding_bag(L.tensor([0, 1]), {_X}.reshape(10, 5), L.tensor([0.]))",
    f"{_N}.embedding_bag(L.tensor([0, 12, 3]), {_X}.reshape(10, 5), L.tensor([0]))",
    f"{_N}.embedding_bag(L.tensor([[0, 1]]), {_X}.reshape(10, 5), padding_idx=10)",
    f"{_N}.embedding_bag(L.tensor([0, 1]), {_X}.reshape(10, 5), L.tensor([0, 1], dtype=L.int32), mode='sum')",
    # dropout, deterministic cases
    f"{_N}.dropout2d({_X}, training=False)", f"{_N}.dropout2d({_X}, 1.0)", f"{_N}.dropout2d({_X}, 0.0)",
    f"{_N}.dropout1d({_X}[0], 1.0)", f"{_N}.dropout1d({_X}[0, 0], training=False)",
    f"{_N}.dropout2d({_X}, 1.5)", f"{_N}.dropout1d({_X}, 0.5)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    tolerance = 2e-2 if any(name in expression for name in ("half", "bfloat16")) else 1e-5
    assert_same_outcome(expression, rtol=tolerance, atol=tolerance)


# -- gradients against PyTorch, first and second order ----------------------------------------------

_GRADIENT_CASES = [
    ("F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)", (2, 2, 5, 6)),
    ("F.avg_pool2d(x, (2, 3), divisor_override=4)", (1, 2, 4, 6)),
    ("F.avg_pool1d(x, 3, 2, 1, True)", (2, 3, 7)),
    ("F.adaptive_avg_pool1d(x, 4)", (2, 3, 7)),
    ("F.adaptive_avg_pool2d(x, (3, None))", (2, 2, 5, 4)),
    ("F.adaptive_max_pool2d(x, (2, 3))", (2, 2, 5, 7)),
    ("F.max_pool2d(x, 3, 2, 1, return_indices=True)[0]", (2, 2, 6, 5)),
    ("F.max_pool1d(x, 2, return_indices=True)[0]", (2, 3, 6)),
    ("F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)", (1, 2, 4, 6)),
    ("F.interpolate(x, scale_factor=2)", (1, 2, 3, 4)),
    ("F.interpolate(x, size=(5, 3))", (1, 2, 3, 4)),
    ("F.interpolate(x, scale_factor=1.5, mode='bilinear')", (1, 2, 3, 4)),
    ("F.interpolate(x, size=(2, 7), mode='bilinear', align_corners=True)", (1, 2, 3, 4)),
    ("F.interpolate(x, size=7, mode='linear')", (2, 2, 4)),
    ("F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=2)", (2, 2, 5, 6)),
    ("F.fold(x, (4, 5), 2, padding=1, stride=(1, 2))", (2, 8, 15)),
    ("F.embedding_bag(L.tensor([[0, 2, 2], [1, 3, 0]]), x)", (4, 3)),
    ("F.embedding_bag(L.tensor([3, 0, 2, 1, 1, 2]), x, L.tensor([0, 2, 2, 5]), mode='max')", (4, 3)),
    ("F.embedding_bag(L.tensor([3, 0, 2, 1, 1]), x, L.tensor([0, 2]), mode='sum', per_sample_weights=L.tensor("
     "[1., 2., 3., 0.5, -1.], dtype=L.float64))", (4, 3)),
    ("F.embedding_bag(L.tensor([3, 0, 2, 1, 1]), x, L.tensor([0, 1, 5]), padding_idx=1, include_last_offset=True)",
     (4, 3)),
    ("F.embedding_bag(L.tensor([3, 3, 2, 3]), x, L.tensor([0, 3]), scale_grad_by_freq=True, mode='sum')", (4, 3)),
]


def _gradients(library, expression, shape, create_graph):
    functional = library.nn.functional
    x = library.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    out = eval(expression, {"L": library, "F": functional, "x": x})
    cotangent = library.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
    (grad,) = library.autograd.grad(out, x, cotangent, create_graph=create_graph)
    if create_graph:  # a second-order quantity: d/dx of <grad, grad * x>
        (grad,) = library.autograd.grad((grad * grad * x).sum(), x)
    return out.detach().numpy(), grad.detach().numpy()


@pytest.mark.torch
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("expression, shape", _GRADIENT_CASES)
def test_gradients_match_torch(expression, shape, create_graph):
    import torch

    ours = _gradients(tm, expression, shape, create_graph)
    theirs = _gradients(torch, expression, shape, create_graph)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)


# -- exact values -----------------------------------------------------------------------------------

def test_avg_pool2d_divisors():
    x = tm.ones(1, 3, 3, dtype=tm.float64)
    # With padding 1, the corner window holds 4 of the input's elements among its 9.
    assert F.avg_pool2d(x, 3, 2, 1).tolist() == [[[4 / 9, 4 / 9], [4 / 9, 4 / 9]]]
    assert F.avg_pool2d(x, 3, 2, 1, count_include_pad=False).tolist() == [[[1.0, 1.0], [1.0, 1.0]]]
    assert F.avg_pool2d(x, 3, 2, 1, divisor_override=2).tolist() == [[[2.0, 2.0], [2.0, 2.0]]]
    assert F.avg_pool2d(tm.tensor([[[-7, 1], [0, 1]]]), 2).tolist() == [[[-1]]]  # C++ division truncates


def test_adaptive_pools_exact_values():
    x = tm.tensor([[[1.0, 5.0, 2.0, 8.0, 0.0]]])
    # Windows [0, 2), [1, 4), [3, 5): the middle one overlaps both others.
    assert F.adaptive_avg_pool1d(x, 3).tolist() == [[[3.0, 5.0, 4.0]]]
    values, indices = F.adaptive_max_pool2d(x, (1, 3), return_indices=True)
    assert values.tolist() == [[[5.0, 8.0, 8.0]]] and indices.tolist() == [[[1, 3, 3]]]


def test_max_unpool2d_puts_each_maximum_back():
    x = tm.tensor([[[[1.0, 6.0, 2.0, 0.0], [3.0, 4.0, 9.0, 5.0]]]], requires_grad=True)
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert indices.tolist() == [[[[1, 6]]]] and indices.dtype is tm.int64 and not indices.requires_grad
    restored = F.max_unpool2d(values, indices, 2)
    assert restored.tolist() == [[[[0.0, 6.0, 0.0, 0.0], [0.0, 0.0, 9.0, 0.0]]]]
    restored.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]]]


def test_interpolate_exact_values():
    x = tm.tensor([[[0.0, 10.0]]])
    assert F.interpolate(x, size=4, mode="linear").tolist() == [[[0.0, 2.5, 7.5, 10.0]]]
    assert F.interpolate(x, size=3, mode="linear", align_corners=True).tolist() == [[[0.0, 5.0, 10.0]]]
    assert F.interpolate(x[None], scale_factor=(1, 1.5)).tolist() == [[[[0.0, 0.0, 10.0]]]]


def test_fold_sums_what_unfold_copies():
    x = tm.arange(12.0).reshape(1, 1, 3, 4)
    blocks = F.unfold(x, 2)
    assert blocks.shape == (1, 4, 6)
    assert blocks[0, :, 0].tolist() == [0.0, 1.0, 4.0, 5.0]
    # Each element comes back once per block that holds it.
    counts = F.fold(F.unfold(tm.ones(1, 1, 3, 4), 2), (3, 4), 2)
    assert counts.tolist() == [[[[1.0, 2.0, 2.0, 1.0], [2.0, 4.0, 4.0, 2.0], [1.0, 2.0, 2.0, 1.0]]]]
    assert F.fold(blocks, (3, 4), 2).tolist() == (x * counts).tolist()


def test_embedding_bag_exact_values():
    weight = tm.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]], requires_grad=True)
    bags = F.embedding_bag(tm.tensor([0, 2, 1, 1]), weight, tm.tensor([0, 2, 2]), mode="max")
    assert bags.tolist() == [[5.0, 2.0], [0.0, 0.0], [3.0, 4.0]]  # the empty bag is zeros
    bags.sum().backward()
    # Each maximum's gradient goes to one row that holds it (ties: the first).
    assert weight.grad.tolist() == [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]
    mean = F.embedding_bag(tm.tensor([[0, 1], [2, 2]]), weight, padding_idx=2)
    assert mean.tolist() == [[2.0, 3.0], [0.0, 0.0]]


def test_channel_dropout_zeroes_whole_channels():
    tm.manual_seed(0)
    x = tm.ones(8, 16, 3, 3)
    out = F.dropout2d(x, 0.5)
    per_channel = out.reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all().item()
    assert 0 < (per_channel == 0).all(-1).sum().item() < 128
    out1 = F.dropout1d(tm.ones(4, 6, 5), 0.5)
    assert ((out1 == 0).all(-1) | (out1 == 2).all(-1)).all().item()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.dropout2d(tm.ones(2, 3, 4), 0.5)
    assert "assuming that channel-wise 1D dropout behavior is desired" in str(caught[0].message)
    y = tm.ones(2, 3, 1, 1)
    assert F.dropout2d(y, 1.0, inplace=True) is y and y.tolist() == [[[[0.0]]] * 3] * 2


def test_functionals_are_overridable_and_seen_by_modes():
    from tensormodes.overrides import TorchFunctionMode, get_overridable_functions

    overridable = get_overridable_functions()[F]
    for name in ("avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_pool2d", "max_unpool2d",
                 "interpolate", "unfold", "fold", "dropout1d", "dropout2d", "embedding_bag"):
        assert getattr(F, name) in overridable, name

    seen = []

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = tm.ones(1, 1, 2, 2)
    with Recorder():
        F.interpolate(x, scale_factor=2, mode="bilinear")
        F.max_pool2d(x, 2, return_indices=True)
        F.avg_pool2d(x, 2)
    assert seen == ["interpolate", "max_pool2d", "avg_pool2d"]


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(batch=st.integers(0, 2), size=st.tuples(st.integers(1, 7), st.integers(1, 7)),
       kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)), stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       padding=st.tuples(st.integers(0, 1), st.integers(0, 1)), ceil_mode=st.booleans(),
       count_include_pad=st.booleans(), divisor_override=st.sampled_from([None, None, 3]), seed=st.integers(0, 2**16))
def test_random_avg_pools_match_torch(batch, size, kernel, stride, padding, ceil_mode, count_include_pad,
                                      divisor_override, seed):
    import torch

    x = np.random.default_rng(seed).standard_normal((batch, 2, *size))
    options = {"kernel_size": kernel, "stride": stride, "padding": padding, "ceil_mode": ceil_mode,
               "count_include_pad": count_include_pad, "divisor_override": divisor_override}
    outcomes = []
    for library in (tm, torch):
        leaf = library.tensor(x, requires_grad=True)
        try:
            out = library.nn.functional.avg_pool2d(leaf, **options)
        except RuntimeError as error:
            outcomes.append(str(error))
            continue
        out.backward(library.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))))
        outcomes.append((out.detach().numpy(), leaf.grad.numpy()))
    ours, theirs = outcomes
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs
        return
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(size=st.tuples(st.integers(1, 9), st.integers(1, 9)), out=st.tuples(st.integers(1, 9), st.integers(1, 9)),
       ties=st.booleans(), seed=st.integers(0, 2**16))
def test_random_adaptive_pools_match_torch(size, out, ties, seed):
    import torch

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (2, 2, *size)).astype(np.float64) if ties else rng.standard_normal((2, 2, *size))
    results = []
    for library in (tm, torch):
        functional = library.nn.functional
        leaf = library.tensor(x, requires_grad=True)
        averages = functional.adaptive_avg_pool2d(leaf, out)
        maxima, indices = functional.adaptive_max_pool2d(leaf, out, return_indices=True)
        cotangent = library.tensor(np.linspace(-1, 1, averages.numel()).reshape(tuple(averages.shape)))
        (grad,) = library.autograd.grad((averages * cotangent).sum() + (maxima * cotangent * 2).sum(), leaf)
        results.append([averages.detach().numpy(), maxima.detach().numpy(), indices.numpy(), grad.numpy()])
    for o, t in zip(*results):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(size=st.tuples(st.integers(1, 6), st.integers(1, 6)), mode=st.sampled_from(["nearest", "bilinear", "linear"]),
       by_scale=st.booleans(), scale=st.tuples(st.floats(0.3, 3.1), st.floats(0.3, 3.1)),
       out=st.tuples(st.integers(1, 9), st.integers(1, 9)), align_corners=st.booleans(),
       recompute=st.sampled_from([None, True]), seed=st.integers(0, 2**16))
def test_random_interpolations_match_torch(size, mode, by_scale, scale, out, align_corners, recompute, seed):
    import torch

    spatial = 1 if mode == "linear" else 2
    x = np.random.default_rng(seed).standard_normal((1, 2, *size[:spatial]))
    options = {"mode": mode, "recompute_scale_factor": recompute if by_scale else None}
    if by_scale:
        options["scale_factor"] = scale[:spatial]
    else:
        options["size"] = out[:spatial]
    if mode != "nearest":
        options["align_corners"] = align_corners
    outcomes = []
    for library in (tm, torch):
        leaf = library.tensor(x, requires_grad=True)
        try:
            result = library.nn.functional.interpolate(leaf, **options)
        except RuntimeError as error:
            outcomes.append(type(error).__name__)
            continue
        cotangent = library.tensor(np.linspace(-1, 1, result.numel()).reshape(tuple(result.shape)))
        (grad,) = library.autograd.grad(result, leaf, cotangent)
        outcomes.append((result.detach().numpy(), grad.numpy()))
    ours, theirs = outcomes
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs
        return
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6)


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(size=st.tuples(st.integers(1, 6), st.integers(1, 6)), kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       padding=st.tuples(st.integers(0, 2), st.integers(0, 2)), stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       seed=st.integers(0, 2**16))
def test_random_unfold_and_fold_match_torch(size, kernel, dilation, padding, stride, seed):
    import torch

    x = np.random.default_rng(seed).standard_normal((2, 2, *size))
    options = {"kernel_size": kernel, "dilation": dilation, "padding": padding, "stride": stride}
    outcomes = []
    for library in (tm, torch):
        functional = library.nn.functional
        leaf = library.tensor(x, requires_grad=True)
        try:
            blocks = functional.unfold(leaf, **options)
        except RuntimeError as error:
            outcomes.append(str(error))
            continue
        folded = functional.fold(blocks * 2, size, **options)
        cotangent = library.tensor(np.linspace(-1, 1, folded.numel()).reshape(tuple(folded.shape)))
        (grad,) = library.autograd.grad(folded, leaf, cotangent)
        outcomes.append((blocks.detach().numpy(), folded.detach().numpy(), grad.numpy()))
    ours, theirs = outcomes
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs
        return
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(0, 4), min_size=1, max_size=4), mode=st.sampled_from(["sum", "mean", "max"]),
       padding_idx=st.sampled_from([None, 0, -1]), weighted=st.booleans(), last=st.booleans(), ties=st.booleans(),
       seed=st.integers(0, 2**16))
def test_random_embedding_bags_match_torch(lengths, mode, padding_idx, weighted, last, ties, seed):
    import torch

    rng = np.random.default_rng(seed)
    rows = rng.integers(-2, 3, (5, 3)).astype(np.float64) if ties else rng.standard_normal((5, 3))
    indices = rng.integers(0, 5, sum(lengths))
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]] + ([[sum(lengths)]] if last else []))
    samples = rng.standard_normal(indices.shape)
    results = []
    for library in (tm, torch):
        weight = library.tensor(rows, requires_grad=True)
        per_sample = library.tensor(samples, requires_grad=True) if weighted and mode == "sum" else None
        bags = library.nn.functional.embedding_bag(
            library.tensor(indices), weight, library.tensor(offsets), mode=mode, per_sample_weights=per_sample,
            include_last_offset=last, padding_idx=padding_idx)
        cotangent = library.tensor(np.linspace(-1, 1, bags.numel()).reshape(tuple(bags.shape)))
        leaves = (weight,) if per_sample is None else (weight, per_sample)
        grads = library.autograd.grad(bags, leaves, cotangent)
        results.append([bags.detach().numpy(), *(g.numpy() for g in grads)])
    for o, t in zip(*results):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "F.avg_pool2d(x, 2)", "F.adaptive_avg_pool2d(x, 3)", "F.adaptive_max_pool2d(x, 3)",
    "F.max_pool2d(x, 2, return_indices=True)[0]", "F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)",
    "L.log1p(x)"])
def test_grad_fn_names_match_torch(expression):
    import torch

    names = []
    for library in (tm, torch):
        x = library.rand(1, 2, 4, 4, requires_grad=True)
        names.append(eval(expression, {"L": library, "F": library.nn.functional, "x": x}).grad_fn.name())
    assert names[0] == names[1]
