"""Average and adaptive pooling, channel dropout, upsampling and ``EmbeddingBag`` against PyTorch's,
with the same weights: outputs, input and parameter gradients, state dicts and ``repr``."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tests.torch_oracle import assert_raises_like_torch

from .nn_oracle import check_layer

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(2024)


def _floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = [
    ("L.nn.AvgPool1d(2)", [_floats(2, 3, 8)]),
    ("L.nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)", [_floats(2, 3, 8)]),
    ("L.nn.AvgPool1d(3, 1, 1)", [_floats(3, 7)]),
    ("L.nn.AvgPool2d(2)", [_floats(2, 3, 6, 6)]),
    ("L.nn.AvgPool2d((3, 2), stride=(2, 1), padding=1, count_include_pad=False)", [_floats(1, 2, 7, 5)]),
    ("L.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, divisor_override=4)", [_floats(1, 2, 6, 6)]),
    ("L.nn.AdaptiveAvgPool1d(3)", [_floats(2, 3, 8)]),
    ("L.nn.AdaptiveAvgPool1d(4)", [_floats(3, 10)]),
    ("L.nn.AdaptiveAvgPool2d((2, 3))", [_floats(2, 3, 5, 7)]),
    ("L.nn.AdaptiveAvgPool2d((None, 2))", [_floats(1, 2, 4, 5)]),
    ("L.nn.AdaptiveAvgPool2d(1)", [_floats(2, 4, 3, 3)]),
    ("L.nn.AdaptiveMaxPool2d((2, 3))", [_floats(2, 3, 5, 7)]),
    ("L.nn.AdaptiveMaxPool2d(2, return_indices=True)", [_floats(2, 3, 5, 5)]),
    ("L.nn.AdaptiveMaxPool2d((None, 1))", [_floats(3, 4, 6)]),
    ("L.nn.Upsample(scale_factor=2)", [_floats(1, 2, 3, 4)]),
    ("L.nn.Upsample(size=5, mode='linear')", [_floats(2, 3, 4)]),
    ("L.nn.Upsample(scale_factor=(2, 1.5), mode='bilinear')", [_floats(1, 2, 3, 4)]),
    ("L.nn.Upsample(size=(4, 6), mode='bilinear', align_corners=True)", [_floats(1, 2, 3, 4)]),
    ("L.nn.Upsample(scale_factor=1.7, mode='nearest', recompute_scale_factor=True)", [_floats(1, 1, 5, 5)]),
    ("L.nn.UpsamplingNearest2d(scale_factor=3)", [_floats(1, 2, 2, 3)]),
    ("L.nn.UpsamplingBilinear2d(size=(5, 5))", [_floats(1, 2, 2, 3)]),
    ("L.nn.Dropout2d(0.5)", [_floats(2, 3, 4, 4)]),
    ("L.nn.Dropout1d(0.3)", [_floats(2, 3, 4)]),
    ("L.nn.EmbeddingBag(10, 3)", [RNG.integers(0, 10, (4, 5))]),
    ("L.nn.EmbeddingBag(10, 3, mode='sum')", [RNG.integers(0, 10, 9), np.array([0, 2, 2, 7])]),
    ("L.nn.EmbeddingBag(10, 3, mode='max')", [RNG.integers(0, 10, 9), np.array([0, 4, 4])]),
    ("L.nn.EmbeddingBag(10, 3, mode='sum', include_last_offset=True)",
     [RNG.integers(0, 10, 8), np.array([0, 3, 5, 8])]),
    ("L.nn.EmbeddingBag(10, 3, mode='mean', padding_idx=2)", [np.array([[2, 1, 2, 9], [2, 2, 2, 2]])]),
    # Every index equally frequent: PyTorch's CPU kernel scales some rows by another index's count
    # when the frequencies differ (rows 3 and 9 of [1, 1, 9, 3, 1] get a third), which we do not copy.
    ("L.nn.EmbeddingBag(10, 3, scale_grad_by_freq=True, padding_idx=-1)", [np.array([1, 3, 9, 3, 1, 9]),
                                                                           np.array([0, 3])]),
]


@pytest.mark.torch
@pytest.mark.parametrize("expression, inputs", CASES, ids=[c[0].removeprefix("L.nn.") for c in CASES])
def test_layer_matches_torch(expression, inputs):
    """Evaluation mode (dropout is the identity; its training behaviour is tested below)."""
    check_layer(torch, expression, inputs)


@pytest.mark.torch
def test_embedding_bag_per_sample_weights_match_torch():
    indices, offsets = RNG.integers(0, 8, 7), np.array([0, 3, 3])
    weights = RNG.uniform(0.1, 2.0, 7).astype(np.float32)
    check_layer(torch, "L.nn.EmbeddingBag(8, 4, mode='sum')", [indices, offsets, weights])
    check_layer(torch, "L.nn.EmbeddingBag(8, 4, mode='sum', padding_idx=3)",
                [np.array([[3, 1], [2, 3]]), None, RNG.uniform(0.1, 2.0, (2, 2)).astype(np.float32)])


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.AvgPool1d(3, 2, 1, True, False)",
    "L.nn.AvgPool2d((3, 2), (1, 2), 1, True, False, divisor_override=2)",
    "L.nn.AdaptiveAvgPool1d(3)", "L.nn.AdaptiveAvgPool2d((3, None))", "L.nn.AdaptiveMaxPool2d(3, True)",
    "L.nn.Upsample(scale_factor=2)", "L.nn.Upsample(size=(3, 4), mode='bilinear', align_corners=True)",
    "L.nn.Upsample(scale_factor=(2, 3), mode='bicubic')", "L.nn.Upsample()",
    "L.nn.UpsamplingNearest2d(size=4)", "L.nn.UpsamplingBilinear2d(scale_factor=2)",
    "L.nn.Dropout2d()", "L.nn.Dropout2d(0.1, inplace=True)", "L.nn.Dropout1d(0.2)",
    "L.nn.EmbeddingBag(10, 3)",
    "L.nn.EmbeddingBag(10, 3, mode='sum', padding_idx=-2, max_norm=1.0, norm_type=1.0, include_last_offset=True, "
    "scale_grad_by_freq=True)",
])
def test_repr_matches_torch(expression):
    assert repr(eval(expression, {"L": tm})).replace("tensormodes.", "torch.") == \
        repr(eval(expression, {"L": torch}))


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.EmbeddingBag(3, 2, padding_idx=3)",
    "L.nn.EmbeddingBag(3, 2, padding_idx=-4)",
    "L.nn.EmbeddingBag(3, 2, _weight=L.ones(2, 2))",
    "L.nn.EmbeddingBag.from_pretrained(L.ones(3))",
    "L.nn.EmbeddingBag(5, 2, mode='median')(L.tensor([[1, 2]]))",
    "L.nn.EmbeddingBag(5, 2, mode='mean')(L.tensor([1, 2]), L.tensor([0]), L.ones(2))",
    "L.nn.EmbeddingBag(5, 2)(L.tensor([[1, 2]]), L.tensor([0]))",
    "L.nn.Dropout2d(1.5)",
    "L.nn.Dropout1d(0.5)(L.ones(2, 3, 4, 5))",
    "L.nn.AvgPool2d(2)(L.ones(4))",
])
def test_construction_and_call_errors_match_torch(expression):
    assert_raises_like_torch(expression)


def test_dropout2d_zeroes_whole_channels_in_training():
    tm.manual_seed(0)
    layer = tm.nn.Dropout2d(0.5)
    out = layer(tm.ones(4, 50, 3, 3))
    per_channel = out.reshape(4, 50, 9)
    # Each channel is all zeros or all 2.0; with 200 channels at p=0.5 both kinds occur.
    assert bool((per_channel == per_channel[:, :, :1]).all())
    assert sorted(set(per_channel[:, :, 0].flatten().tolist())) == [0.0, 2.0]
    layer.eval()
    assert layer(tm.ones(2, 3, 2, 2)).tolist() == tm.ones(2, 3, 2, 2).tolist()


def test_dropout2d_warns_on_3d_input_like_torch():
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        tm.nn.Dropout2d()(tm.ones(2, 3, 4))


def test_embedding_bag_padding_row_is_zero_and_from_pretrained_freezes():
    bag = tm.nn.EmbeddingBag(6, 4, padding_idx=5)
    assert bag.weight[5].tolist() == [0.0] * 4 and bag.weight.requires_grad
    frozen = tm.nn.EmbeddingBag.from_pretrained(tm.ones(3, 2), mode="sum")
    assert not frozen.weight.requires_grad and frozen(tm.tensor([[0, 1, 2]])).tolist() == [[3.0, 3.0]]
    trainable = tm.nn.EmbeddingBag.from_pretrained(tm.ones(3, 2), freeze=False)
    assert trainable.weight.requires_grad


def test_embedding_bag_initialisation_is_standard_normal():
    """N(0, 1): over 20,000 seeded values |mean| < 0.03 and the std is within 3% of 1 (about 4 sigma)."""
    tm.manual_seed(0)
    values = tm.nn.EmbeddingBag(1000, 20).weight.detach().numpy()
    assert abs(values.mean()) < 0.03 and abs(values.std() - 1) < 0.03
