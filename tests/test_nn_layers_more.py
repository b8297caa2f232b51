"""Average and adaptive pooling, channel dropout, upsampling and ``EmbeddingBag`` against PyTorch's,
with the same weights: outputs, input and parameter gradients, state dicts and ``repr``; and
``F.adaptive_max_pool1d`` and ``F.interpolate(mode="bicubic")`` against PyTorch's values, indices,
gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tests.torch_oracle import assert_raises_like_torch, assert_same_outcome

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
    ("L.nn.AdaptiveMaxPool1d(3)", [_floats(2, 3, 8)]),
    ("L.nn.AdaptiveMaxPool1d(4, return_indices=True)", [_floats(3, 10)]),
    ("L.nn.AdaptiveMaxPool1d([5])", [_floats(2, 2, 5)]),
    ("L.nn.AdaptiveMaxPool1d(7)", [_floats(2, 3)]),
    ("L.nn.Upsample(scale_factor=2)", [_floats(1, 2, 3, 4)]),
    ("L.nn.Upsample(size=5, mode='linear')", [_floats(2, 3, 4)]),
    ("L.nn.Upsample(scale_factor=(2, 1.5), mode='bilinear')", [_floats(1, 2, 3, 4)]),
    ("L.nn.Upsample(size=(4, 6), mode='bilinear', align_corners=True)", [_floats(1, 2, 3, 4)]),
    ("L.nn.Upsample(scale_factor=1.7, mode='nearest', recompute_scale_factor=True)", [_floats(1, 1, 5, 5)]),
    ("L.nn.Upsample(scale_factor=2, mode='bicubic')", [_floats(2, 3, 4, 5)]),
    ("L.nn.Upsample(size=(7, 3), mode='bicubic', align_corners=True)", [_floats(1, 2, 4, 5)]),
    ("L.nn.Upsample(scale_factor=(0.6, 1.7), mode='bicubic')", [_floats(1, 2, 6, 5)]),
    ("L.nn.Upsample(scale_factor=1.5, mode='bicubic', recompute_scale_factor=True)", [_floats(1, 1, 5, 5)]),
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
    "L.nn.AdaptiveMaxPool1d(3)", "L.nn.AdaptiveMaxPool1d((2,), return_indices=True)",
    "L.nn.Upsample(size=(4, 5), mode='bicubic', align_corners=True)",
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


# -- F.adaptive_max_pool1d and F.interpolate(mode="bicubic") against PyTorch -------------------------

_SIGNAL = "L.tensor([[1., 3., 3., 0., 5., 4., 2., 2.], [0., 5., 5., 1., 5., 1., 0., 5.]])"
_NAN = "L.tensor([[1., nan, 3., 3., 2., nan], [2., 2., -inf, 0., -inf, -inf]])"
_IMAGE = "L.tensor(np.random.default_rng(5).standard_normal((2, 3, 5, 7)), dtype=L.float32)"
_F = "L.nn.functional"


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    f"L.adaptive_max_pool1d({_SIGNAL}, 3)", f"L.adaptive_max_pool1d({_SIGNAL}[None], [5])",
    f"L.adaptive_max_pool1d({_SIGNAL}, 8)", f"L.adaptive_max_pool1d({_SIGNAL}, 11)",
    f"L.adaptive_max_pool1d({_SIGNAL}, 0)", f"L.adaptive_max_pool1d({_SIGNAL}, 1)",
    f"L.adaptive_max_pool1d({_NAN}, 4)", f"L.adaptive_max_pool1d({_NAN}, 2)",
    f"L.adaptive_max_pool1d({_SIGNAL}.half(), 3)", f"L.adaptive_max_pool1d({_SIGNAL}.bfloat16(), 5)",
    f"L.adaptive_max_pool1d({_SIGNAL}.double(), 3)", "L.adaptive_max_pool1d(L.zeros(0, 4), 2)",
    "L.adaptive_max_pool1d(L.zeros(0, 3, 4), 2)",
    f"{_F}.adaptive_max_pool1d({_SIGNAL}, 3)", f"{_F}.adaptive_max_pool1d({_SIGNAL}, 3, True)",
    f"{_F}.adaptive_max_pool1d({_SIGNAL}[None], 6, return_indices=True)",
    f"L.nn.AdaptiveMaxPool1d(3, True)({_SIGNAL})",
    # errors, in PyTorch's order
    "L.adaptive_max_pool1d(L.ones(4), 2)", "L.adaptive_max_pool1d(L.ones(2, 3, 4, 5), 2)",
    "L.adaptive_max_pool1d(L.ones(4), (2, 2))", "L.adaptive_max_pool1d(L.ones(2, 4), (2, 2))",
    "L.adaptive_max_pool1d(L.ones(2, 0), 2)", "L.adaptive_max_pool1d(L.ones(2, 0, 4), 2)",
    "L.adaptive_max_pool1d(L.ones(2, 0), -1)", "L.adaptive_max_pool1d(L.ones(2, 4), -1)",
    "L.adaptive_max_pool1d(L.ones(2, 3, 4), -2)", "L.adaptive_max_pool1d(L.ones(2, 4).long(), -1)",
    "L.adaptive_max_pool1d(L.ones(2, 4).long(), 2)", "L.adaptive_max_pool1d(L.ones(2, 4).bool(), 2)",
    "L.adaptive_max_pool1d(L.ones(2, 4).cfloat(), 2)", f"{_F}.adaptive_max_pool1d(L.ones(5), 2, True)",
])
def test_adaptive_max_pool1d_matches_torch(expression):
    assert_same_outcome(expression)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    f"{_F}.interpolate({_IMAGE}, scale_factor=2, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, scale_factor=2, mode='bicubic', align_corners=True)",
    f"{_F}.interpolate({_IMAGE}, size=(9, 4), mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, size=(9, 4), mode='bicubic', align_corners=True)",
    f"{_F}.interpolate({_IMAGE}, size=3, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, size=(1, 1), mode='bicubic', align_corners=True)",
    f"{_F}.interpolate({_IMAGE}, size=(1, 2), mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, scale_factor=(0.45, 2.3), mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, scale_factor=1.3, mode='bicubic', recompute_scale_factor=True)",
    f"{_F}.interpolate({_IMAGE}, scale_factor=1.1, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, scale_factor=0.2, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, scale_factor=2, mode='bicubic', antialias=False)",
    f"{_F}.interpolate({_IMAGE}[:, :, :1, :1], size=(3, 4), mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}[0, :1] * 1e30, scale_factor=3, mode='bicubic')",
    f"{_F}.interpolate(L.zeros(0, 2, 3, 3), size=4, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}.half(), scale_factor=2, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}.bfloat16(), size=(4, 9), mode='bicubic', align_corners=True)",
    f"L.nn.Upsample(scale_factor=(2, 3), mode='bicubic')({_IMAGE})",
    # errors
    f"{_F}.interpolate({_IMAGE}[0], scale_factor=2, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}[None], scale_factor=2, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, scale_factor=0.1, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, size=(0, 3), mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}.long(), scale_factor=2, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, size=(2, 2, 2), mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, size=3, scale_factor=2, mode='bicubic')",
    f"{_F}.interpolate({_IMAGE}, size=3, mode='bicubic', recompute_scale_factor=True)",
    f"{_F}.interpolate({_IMAGE}[0], scale_factor=2, mode='bicubic', antialias=True)",
    f"{_F}.interpolate({_IMAGE}, scale_factor=2, mode='nearest', antialias=True)",
    f"{_F}.interpolate(L.zeros(1, 0, 3, 3), size=4, mode='bicubic')",
])
def test_bicubic_interpolate_matches_torch(expression):
    tolerance = 2e-2 if any(name in expression for name in ("half", "bfloat16")) else 1e-5
    if "1e30" in expression:
        assert_same_outcome(expression, rtol=1e-5, atol=0.0)
    else:
        assert_same_outcome(expression, rtol=tolerance, atol=tolerance)


@pytest.mark.torch
@pytest.mark.parametrize("arguments", [
    "L.ones(1, 1, 2, 2), [0, 3], False", "L.ones(1, 1, 2), [3, 3], False", "L.ones(1, 1, 2, 2), [3], False",
    "L.ones(1, 1, 2, 2).bool(), [3, 3], False", "L.ones(1, 1, 0, 2), [3, 3], True",
    "L.ones(1, 1, 2, 2, dtype=L.complex64), [3, 3], False", "L.ones(2, 0, 2, 2), [3, 3], False",
])
def test_bicubic_op_errors_match_torch(arguments):
    """The op itself (PyTorch's ``torch._C._nn.upsample_bicubic2d``), called without ``interpolate``'s checks."""
    outcomes = []
    for library, function in ((tm, "L._upsample_bicubic2d"), (torch, "L._C._nn.upsample_bicubic2d")):
        with pytest.raises(Exception) as caught:
            eval(f"{function}({arguments})", {"L": library})
        outcomes.append((type(caught.value).__name__, str(caught.value)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.functional.interpolate(x, scale_factor=2, mode='bicubic')",
    "L.nn.functional.interpolate(x, size=(3, 11), mode='bicubic', align_corners=True)",
    "L.nn.functional.interpolate(x, scale_factor=(0.7, 1.6), mode='bicubic')",
    "L.nn.functional.interpolate(x, size=(2, 1), mode='bicubic')",
])
def test_bicubic_float64_values_and_gradients_match_torch(expression):
    """float64 values and gradients within 1e-12, second-order gradients too (create_graph)."""
    data = np.random.default_rng(11).standard_normal((2, 2, 5, 6))
    results = []
    for library in (tm, torch):
        x = library.tensor(data, requires_grad=True)
        out = eval(expression, {"L": library, "x": x})
        cotangent = library.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        (grad,) = library.autograd.grad(out, x, cotangent, create_graph=True)
        (second,) = library.autograd.grad((grad * grad * x).sum(), x)
        results.append([out.detach().numpy(), grad.detach().numpy(), second.detach().numpy(),
                        type(out.grad_fn).__name__])
    ours, theirs = results
    assert ours[3] == theirs[3] == "UpsampleBicubic2DBackward0"
    for mine, reference in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
def test_bicubic_gradient_copies_when_sizes_agree_like_torch():
    """At scale 1.1 a 5x5 image stays 5x5 but is resampled; PyTorch's backward then copies the
    gradient as it would for the identity, and ours does the same."""
    data = np.random.default_rng(3).standard_normal((1, 1, 5, 5)).astype(np.float32)
    grads = []
    for library in (tm, torch):
        x = library.tensor(data, requires_grad=True)
        out = library.nn.functional.interpolate(x, scale_factor=1.1, mode="bicubic")
        out.backward(library.ones_like(out))
        grads.append(x.grad.numpy())
    assert grads[0].tolist() == grads[1].tolist() == np.ones((1, 1, 5, 5)).tolist()


@pytest.mark.torch
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("expression, shape", [
    ("L.adaptive_max_pool1d(x, 3)[0]", (2, 3, 8)),  # overlapping windows: gradients add up
    ("L.nn.functional.adaptive_max_pool1d(x, 4)", (2, 3, 8)),
    ("L.nn.functional.adaptive_max_pool1d(x, 5, return_indices=True)[0]", (3, 7)),
    ("L.nn.AdaptiveMaxPool1d(9)(x)", (2, 4)),
])
def test_adaptive_max_pool1d_gradients_match_torch(expression, shape, create_graph):
    data = np.random.default_rng(1).standard_normal(shape)
    results = []
    for library in (tm, torch):
        x = library.tensor(data, requires_grad=True)
        out = eval(expression, {"L": library, "x": x})
        cotangent = library.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        (grad,) = library.autograd.grad(out, x, cotangent, create_graph=create_graph)
        if create_graph:
            (grad,) = library.autograd.grad((grad * grad * x).sum(), x)
        results.append((out.detach().numpy(), grad.detach().numpy(), type(out.grad_fn).__name__))
    assert results[0][2] == results[1][2] == "SqueezeBackward1"
    for mine, reference in zip(results[0][:2], results[1][:2]):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=0)


def test_adaptive_max_pool1d_exact_values():
    x = tm.tensor([[[1.0, 5.0, 2.0, 8.0, 0.0]]], requires_grad=True)
    # Windows [0, 2), [1, 4), [3, 5): the middle one overlaps both others and shares their maxima.
    values, indices = tm.nn.functional.adaptive_max_pool1d(x, 3, return_indices=True)
    assert values.tolist() == [[[5.0, 8.0, 8.0]]] and indices.tolist() == [[[1, 3, 3]]]
    assert indices.dtype is tm.int64 and not indices.requires_grad
    values.sum().backward()
    assert x.grad.tolist() == [[[0.0, 1.0, 0.0, 2.0, 0.0]]]


def test_bicubic_reproduces_linear_ramps_away_from_the_borders():
    """Cubic convolution with A = -0.75 is exact on linear functions where all four taps lie
    inside the image; at the borders the repeated edge samples bend the ramp, as in PyTorch."""
    ramp = tm.arange(8.0, dtype=tm.float64).reshape(1, 1, 1, 8).expand(1, 1, 2, 8)
    out = tm.nn.functional.interpolate(ramp, size=(2, 15), mode="bicubic", align_corners=True)[0, 0, 0]
    np.testing.assert_allclose(out[2:13].numpy(), np.arange(2, 13) / 2, rtol=0, atol=1e-12)
    assert out[0].item() == 0.0 and out[-1].item() == 7.0 and abs(out[1].item() - 0.5) > 1e-3


def test_bicubic_antialias_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="mode='bicubic' on 4D input with antialias is not implemented"):
        tm.nn.functional.interpolate(tm.ones(1, 1, 4, 4), scale_factor=0.5, mode="bicubic", antialias=True)
