"""Pooling, unpooling, interpolate, unfold / fold, channel dropout and embedding_bag: values,
dtypes, shapes, errors and gradients compared with PyTorch, and exact values where they are
easy to state."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

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
    f"{_N}.avg_pool1d({_S}[None], 2)", f"L.avg_pool1d({_S}, 3, 2, 1, True)", f"L.avg_pool1d({_S}, 3, 2, 1, True, False)",
    f"L.avg_pool1d({_S}.long(), 3, 1)", f"L.avg_pool1d({_S}, [2], [])",
    f"L.avg_pool1d({_S}, (2, 2))", f"L.avg_pool1d({_S}, 2, padding=2)", f"L.avg_pool1d({_S}, 9)",
    f"L.avg_pool1d({_S}[0], 2)", f"L.avg_pool1d({_S}.cfloat(), 2)",
    # adaptive average
    f"L.adaptive_avg_pool1d({_S}, 3)", f"{_N}.adaptive_avg_pool1d({_S}[None], [5])", f"L.adaptive_avg_pool1d({_S}, 0)",
    f"L.adaptive_avg_pool1d({_S}, 11)", f"L.adaptive_avg_pool1d({_S}.half(), 3)",
    f"L.adaptive_avg_pool1d({_S}, (2, 2))", f"L.adaptive_avg_pool1d({_S}.long(), 2)", f"L.adaptive_avg_pool1d({_S}[0], 2)",
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
    f"{_N}.interpolate({_X}, scale_factor=2, mode='linear')", f"{_N}.interpolate({_S}[None], scale_factor=2, mode='bilinear')",
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
