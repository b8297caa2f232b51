"""The layers, functionals and losses everyday scripts use (issue 26 item 4): padding modules,
``RMSNorm``, ``PixelShuffle`` / ``PixelUnshuffle`` / ``ChannelShuffle``, the shrink activations,
``RReLU``, ``Softmax2d``, ``Fold`` / ``Unfold``, ``CosineSimilarity`` / ``PairwiseDistance`` and the
multi-class margin losses — against PyTorch's outputs, gradients, ``repr`` and errors, on edge
inputs (empty, 0-dim, NaN/Inf, half types), and exact values where no oracle is needed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tests.torch_oracle import assert_raises_like_torch, assert_same_outcome

from .nn_oracle import check_layer

RNG = np.random.default_rng(26)


def _floats(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _labels(high, *shape):
    return RNG.integers(0, high, shape)


# -- exact values (no oracle) ------------------------------------------------------------------------

def test_shrinks_exact_values_nan_inf_and_signed_zero():
    x = tm.tensor([-1.0, -0.5, 0.0, 0.3, 0.5, 0.7, math.nan, math.inf])
    assert F.hardshrink(x).tolist()[:6] == [-1.0, 0.0, 0.0, 0.0, 0.0, 0.699999988079071]
    soft = F.softshrink(x)
    assert soft.tolist()[:6] == [-0.5, -0.0, 0.0, 0.0, 0.0, pytest.approx(0.2)]
    assert math.copysign(1, soft[1].item()) == -1  # x * 0 for x in [-lambd, lambd]: -0.0 at -0.5
    assert math.isnan(soft[6].item()) and soft[7].item() == math.inf
    assert F.hardshrink(x, -1.0)[:6].tolist() == x[:6].tolist()  # a negative lambd zeroes nothing


def test_shrink_errors_and_gradient():
    with pytest.raises(NotImplementedError, match="\"hardshrink_cpu\" not implemented for 'Long'"):
        tm.hardshrink(tm.tensor([1]))
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but "
                                           "found -1"):
        F.softshrink(tm.tensor([1.0]), -1.0)
    x = tm.tensor([-1.0, -0.5, 0.0, 0.5, 0.7], requires_grad=True)
    F.softshrink(x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert F.softshrink(x).grad_fn.name() == "SoftshrinkBackward0"
    assert tm.Tensor.hardshrink(x, 0.6).grad_fn.name() == "HardshrinkBackward0"


def test_pixel_shuffle_round_trip_and_values():
    x = tm.arange(32.0).reshape(2, 8, 1, 2)
    y = F.pixel_shuffle(x, 2)
    assert y.shape == (2, 2, 2, 4) and y.is_contiguous()
    assert y[0, 0].tolist() == [[0.0, 2.0, 1.0, 3.0], [4.0, 6.0, 5.0, 7.0]]
    assert tm.equal(F.pixel_unshuffle(y, 2), x)
    assert F.channel_shuffle(tm.arange(6.0).reshape(1, 6, 1), 3).flatten().tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    # PyTorch's CPU kernel returns an empty input's copy from pixel_unshuffle, unshuffled
    assert F.pixel_unshuffle(tm.zeros(0, 1, 2, 2), 2).shape == (0, 1, 2, 2)


def test_native_channel_shuffle_has_no_derivative():
    x = tm.ones(1, 4, 2, requires_grad=True)
    y = tm.native_channel_shuffle(x, 2)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is not implemented"):
        y.sum().backward()


def test_rms_norm_values_dtypes_and_nodes():
    x = tm.tensor([[3.0, 4.0], [0.0, 0.0]])
    assert F.rms_norm(x, [2], eps=0.0)[0].tolist() == pytest.approx([0.8485281, 1.1313708])
    assert math.isnan(F.rms_norm(x, [2], eps=0.0)[1, 0].item())  # 0 / 0
    assert F.rms_norm(x, [2])[1].tolist() == [0.0, 0.0]  # the default eps is float32's epsilon
    half = tm.ones(2, 3, dtype=tm.float16, requires_grad=True)
    assert F.rms_norm(half, [3]).dtype is tm.float16
    assert F.rms_norm(half, [3]).grad_fn.name() == "ToCopyBackward0"
    weighted = F.rms_norm(x.requires_grad_(), [2], tm.ones(2, dtype=tm.float64))
    assert weighted.dtype is tm.float32 and weighted.grad_fn.name() == "ToCopyBackward0"
    assert F.rms_norm(x, [2], tm.ones(2, requires_grad=True)).grad_fn.name() == "MulBackward0"
    m = tm.nn.RMSNorm([2, 3], eps=1e-5, elementwise_affine=False)
    assert repr(m) == "RMSNorm((2, 3), eps=1e-05, elementwise_affine=False)" and m.weight is None
    assert not hasattr(tm.nn.RMSNorm(3), "bias") and list(tm.nn.RMSNorm(3).state_dict()) == ["weight"]


def test_rrelu_training_draws_pytorchs_numbers_and_eval_uses_the_mean_slope():
    tm.manual_seed(0)
    x = tm.tensor([-1.0, 2.0, -3.0, 0.0, math.nan, -math.inf], requires_grad=True)
    y = F.rrelu(x, training=True)
    assert y.grad_fn.name() == "RreluWithNoiseBackward0"
    # PyTorch 2.13, seed 0: one 53-bit double uniform per non-positive element, in order
    assert y.tolist()[:4] == [-0.3270943760871887, 2.0, -0.8173874616622925, 0.0]
    y.sum().backward()
    assert x.grad.tolist() == [0.3270943760871887, 1.0, 0.27246248722076416, 0.22070477902889252, 1.0,
                               0.31682243943214417]
    assert F.rrelu(tm.tensor([-2.0, 3.0]), 0.25, 0.75).tolist() == [-1.0, 3.0]
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(tm.ones(2), 0.5, 0.1)
    z = tm.tensor([-4.0, 1.0])
    assert F.rrelu_(z, 0.5, 0.5) is z and z.tolist() == [-2.0, 1.0]


def test_margin_losses_exact_values():
    x = tm.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.1, 0.5]], requires_grad=True)
    assert F.multi_margin_loss(x, tm.tensor([3, 0]), reduction="none").tolist() == pytest.approx([0.325, 0.625])
    loss = F.multilabel_margin_loss(x, tm.tensor([[3, 0, -1, 1], [1, 1, 2, -1]]))
    assert loss.item() == pytest.approx(1.55) and loss.grad_fn.name() == "MultilabelMarginLossBackward0"
    loss.backward()
    assert x.grad.tolist() == [[-0.25, 0.25, 0.25, -0.25], [0.375, -0.5, -0.25, 0.375]]
    # the mean over no sample is NaN (PyTorch returns an uninitialised value)
    assert math.isnan(F.multi_margin_loss(tm.empty(0, 3), tm.empty(0, dtype=tm.int64)).item())


def test_grid_sample_of_an_identity_affine_grid_is_the_image_and_warns_without_align_corners():
    image = tm.arange(12.0).reshape(1, 1, 3, 4)
    theta = tm.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        grid = F.affine_grid(theta, [1, 1, 3, 4])
    assert tm.allclose(F.grid_sample(image, grid, align_corners=False), image)
    # bicubic reproduces the pixels at their centres too (implemented since; see test_everyday_gaps.py)
    assert tm.allclose(F.grid_sample(image, grid, mode="bicubic", align_corners=False), image, atol=1e-5)
    x = image.clone().requires_grad_()
    out = F.grid_sample(x, grid, align_corners=False)
    assert out.grad_fn.name() == "GridSampler2DBackward0"
    (grad_x,) = tm.autograd.grad(out.sum(), [x], create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for aten::grid_sampler_2d_backward is not implemented"):
        grad_x.sum().backward()


def test_ctc_loss_lengths_are_both_tensors_or_both_sequences():
    with pytest.raises(TypeError, match="ctc_loss"):
        F.ctc_loss(tm.zeros(4, 1, 3).log_softmax(2), tm.tensor([[1]]), tm.tensor([4]), [1])


def test_padding_modules_values_and_repr():
    x = tm.tensor([[1.0, 2.0, 3.0]])
    assert tm.nn.ReflectionPad1d((2, 1))(x).tolist() == [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    assert tm.nn.ReplicationPad1d(1)(x).tolist() == [[1.0, 1.0, 2.0, 3.0, 3.0]]
    assert tm.nn.CircularPad1d(1)(x).tolist() == [[3.0, 1.0, 2.0, 3.0, 1.0]]
    assert tm.nn.ConstantPad1d((0, -1), 9.0)(x).tolist() == [[1.0, 2.0]]
    assert repr(tm.nn.ZeroPad2d(2)) == "ZeroPad2d((2, 2, 2, 2))"
    assert repr(tm.nn.ConstantPad3d(1, 0.5)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0.5)"
    assert isinstance(tm.nn.ZeroPad1d(1), tm.nn.ConstantPad1d)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 1D input\)"):
        tm.nn.CircularPad1d(1)(tm.ones(3))


# -- against PyTorch ---------------------------------------------------------------------------------

LAYER_CASES = [
    ("L.nn.ReflectionPad1d(2)", [_floats(2, 3, 5)]),
    ("L.nn.ReflectionPad2d((1, 0, 2, 1))", [_floats(1, 2, 4, 5)]),
    ("L.nn.ReflectionPad3d(1)", [_floats(1, 2, 3, 3, 3)]),
    ("L.nn.ReplicationPad1d((0, 3))", [_floats(3, 4)]),
    ("L.nn.ReplicationPad2d(2)", [_floats(2, 3, 3)]),
    ("L.nn.ReplicationPad3d((1, 2, 0, 1, 2, 0))", [_floats(1, 1, 2, 3, 2)]),
    ("L.nn.CircularPad1d(1)", [_floats(2, 3, 4)]),
    ("L.nn.CircularPad2d((1, 2, 0, 1))", [_floats(1, 2, 3, 4)]),
    ("L.nn.CircularPad3d(1)", [_floats(1, 1, 2, 3, 2)]),
    ("L.nn.ConstantPad1d((2, -1), 3.5)", [_floats(2, 4)]),
    ("L.nn.ConstantPad2d(1, -2.0)", [_floats(1, 2, 3)]),
    ("L.nn.ConstantPad3d((1, 0, 0, 1, 1, 1), 0.25)", [_floats(1, 2, 2, 2)]),
    ("L.nn.ZeroPad1d(2)", [_floats(3, 2)]),
    ("L.nn.ZeroPad2d((1, 1, 2, 0))", [_floats(1, 1, 2, 2)]),
    ("L.nn.ZeroPad3d(1)", [_floats(1, 1, 1, 2, 2)]),
    ("L.nn.RMSNorm(4)", [_floats(2, 3, 4)]),
    ("L.nn.RMSNorm([3, 4], eps=1e-3)", [_floats(2, 3, 4)]),
    ("L.nn.RMSNorm(4, elementwise_affine=False)", [_floats(5, 4)]),
    ("L.nn.RMSNorm(4, dtype=L.float64)", [_floats(2, 4, dtype=np.float64)]),
    ("L.nn.InstanceNorm1d(3)", [_floats(2, 3, 5)]),
    ("L.nn.InstanceNorm1d(3, affine=True)", [_floats(3, 5)]),
    ("L.nn.InstanceNorm1d(3, track_running_stats=True)", [_floats(2, 3, 5)]),
    ("L.nn.InstanceNorm3d(2, affine=True)", [_floats(2, 2, 3, 2, 4)]),
    ("L.nn.InstanceNorm3d(2)", [_floats(2, 3, 2, 4)]),
    ("L.nn.BatchNorm3d(2)", [_floats(3, 2, 2, 3, 2)]),
    ("L.nn.BatchNorm3d(2, affine=False, track_running_stats=False)", [_floats(3, 2, 2, 3, 2)]),
    ("L.nn.Conv3d(2, 3, 2)", [_floats(2, 2, 3, 4, 3)]),
    ("L.nn.Conv3d(4, 2, (2, 1, 3), stride=(1, 2, 1), padding=(1, 0, 2), dilation=(1, 1, 2), groups=2, bias=False)",
     [_floats(1, 4, 3, 4, 5)]),
    ("L.nn.Conv3d(2, 2, 3, padding='same', padding_mode='circular')", [_floats(1, 2, 3, 3, 4)]),
    ("L.nn.Conv3d(2, 2, 2, padding=1, padding_mode='reflect')", [_floats(2, 3, 3, 3)]),
    ("L.nn.ConvTranspose3d(2, 3, 2, stride=2)", [_floats(1, 2, 2, 3, 2)]),
    ("L.nn.ConvTranspose3d(4, 2, (3, 1, 2), stride=(2, 1, 1), padding=(1, 0, 0), output_padding=(1, 0, 0), "
     "groups=2)", [_floats(1, 4, 2, 2, 3)]),
    ("L.nn.MaxPool3d(2)", [_floats(2, 2, 4, 4, 4)]),
    ("L.nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True)", [_floats(1, 2, 5, 5, 4)]),
    ("L.nn.MaxPool3d((2, 1, 2), stride=(1, 2, 1), dilation=(1, 1, 2))", [_floats(2, 3, 4, 5)]),
    ("L.nn.MaxPool3d(2, return_indices=True)", [_floats(1, 1, 4, 4, 2)]),
    ("L.nn.AvgPool3d(2)", [_floats(2, 2, 4, 4, 4)]),
    ("L.nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True)", [_floats(1, 2, 5, 5, 4)]),
    ("L.nn.AvgPool3d((2, 3, 2), stride=(1, 2, 1), padding=(1, 1, 0), count_include_pad=False)", [_floats(2, 4, 5, 3)]),
    ("L.nn.AvgPool3d(2, stride=2, padding=1, ceil_mode=True, divisor_override=3)", [_floats(1, 1, 3, 3, 3)]),
    ("L.nn.PixelShuffle(2)", [_floats(2, 8, 3, 2)]),
    ("L.nn.PixelShuffle(3)", [_floats(9, 2, 2)]),
    ("L.nn.PixelUnshuffle(2)", [_floats(2, 2, 4, 6)]),
    ("L.nn.ChannelShuffle(2)", [_floats(2, 6, 3)]),
    ("L.nn.ChannelShuffle(3)", [_floats(1, 6, 2, 2)]),
    ("L.nn.Softshrink()", [_floats(3, 4)]),
    ("L.nn.Softshrink(1.2)", [_floats(3, 4, dtype=np.float64)]),
    ("L.nn.Hardshrink(0.3)", [_floats(3, 4)]),
    ("L.nn.RReLU()", [_floats(3, 4)]),
    ("L.nn.Softmax2d()", [_floats(2, 3, 4, 4)]),
    ("L.nn.Softmax2d()", [_floats(3, 2, 2)]),
    ("L.nn.Fold((4, 5), 2)", [_floats(2, 12, 12)]),
    ("L.nn.Fold(output_size=(3, 3), kernel_size=(2, 2), dilation=1, padding=1, stride=2)", [_floats(1, 4, 4)]),
    ("L.nn.Unfold(2)", [_floats(2, 3, 4, 4)]),
    ("L.nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))", [_floats(1, 2, 5, 6)]),
    ("L.nn.CosineSimilarity()", [_floats(3, 4), _floats(3, 4)]),
    ("L.nn.CosineSimilarity(dim=0, eps=1e-3)", [_floats(4, 2), _floats(4, 1)]),
    ("L.nn.PairwiseDistance()", [_floats(3, 4), _floats(3, 4)]),
    ("L.nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True)", [_floats(3, 4), _floats(1, 4)]),
    ("L.nn.MultiMarginLoss()", [_floats(4, 5), _labels(5, 4)]),
    ("L.nn.MultiMarginLoss(p=2, margin=0.5, reduction='sum')", [_floats(4, 5), _labels(5, 4)]),
    ("L.nn.MultiMarginLoss(weight=L.tensor([1.0, 2.0, 0.5]), reduction='none')", [_floats(3, 3), _labels(3, 3)]),
    ("L.nn.MultiMarginLoss()", [_floats(5), _labels(5)]),
    ("L.nn.MultiLabelMarginLoss()", [_floats(3, 4), RNG.integers(-1, 4, (3, 4))]),
    ("L.nn.MultiLabelMarginLoss(reduction='none')", [_floats(3, 5), RNG.integers(-1, 5, (3, 5))]),
    ("L.nn.MultiLabelMarginLoss(reduction='sum')", [_floats(4), np.array([2, 2, 0, -1])]),
    ("L.nn.MultiLabelSoftMarginLoss()", [_floats(3, 4), RNG.integers(0, 2, (3, 4)).astype(np.float32)]),
    ("L.nn.MultiLabelSoftMarginLoss(weight=L.tensor([1.0, 2.0, 3.0]), reduction='none')",
     [_floats(2, 3), RNG.integers(0, 2, (2, 3)).astype(np.float32)]),
    ("L.nn.TripletMarginWithDistanceLoss()", [_floats(3, 4), _floats(3, 4), _floats(3, 4)]),
    ("L.nn.TripletMarginWithDistanceLoss(distance_function=L.nn.CosineSimilarity(), margin=0.5, swap=True, "
     "reduction='none')", [_floats(3, 4), _floats(3, 4), _floats(3, 4)]),
]


@pytest.mark.torch
@pytest.mark.parametrize("expression, inputs", LAYER_CASES, ids=[c[0].removeprefix("L.nn.") for c in LAYER_CASES])
def test_layer_matches_torch(expression, inputs):
    """Outputs, input and parameter gradients, ``repr`` and state dicts, in evaluation mode."""
    torch = pytest.importorskip("torch")
    check_layer(torch, expression, inputs)


EDGE_EXPRESSIONS = [
    # empty, 0-dim, NaN / Inf, half types, Python scalars
    "L.nn.functional.hardshrink(L.tensor([-1.0, -0.5, 0.0, 0.5, nan, inf, -inf]))",
    "L.nn.functional.hardshrink(L.tensor(0.7), 0.5)",
    "L.nn.functional.hardshrink(L.empty(0, 3))",
    "L.nn.functional.hardshrink(L.tensor([0.1, 0.6, -0.09998], dtype=L.float16), 0.1)",
    "L.nn.functional.hardshrink(L.tensor([0.1, 0.6, -2.5], dtype=L.bfloat16), 0.1)",
    "L.nn.functional.hardshrink(L.tensor([1.0, 2.0]), 1e40)",
    "L.hardshrink(L.tensor([1.0, 0.2]), out=L.empty(2))",
    "L.tensor([0.6, -0.1]).hardshrink(0.5)",
    "L.nn.functional.softshrink(L.tensor([-1.0, -0.5, 0.0, 0.5, nan, inf, -inf]))",
    "L.nn.functional.softshrink(L.tensor(-0.7))",
    "L.nn.functional.softshrink(L.empty(2, 0), 2.0)",
    "L.nn.functional.softshrink(L.tensor([0.10004, 0.6, -3.0], dtype=L.float16), 0.1)",
    "L.nn.functional.softshrink(L.tensor([0.1, 0.6, -3.0], dtype=L.bfloat16), 0.1)",
    "L.nn.functional.softshrink(L.tensor([0.1, 0.6], dtype=L.float64), 0.3)",
    "L.nn.functional.softshrink(L.tensor([1.0]), -0.5)",
    "L.nn.functional.softshrink(L.tensor([1.0], dtype=L.float16), 7e4)",
    "L.nn.functional.softshrink(L.tensor([1], dtype=L.int32))",
    "L.nn.functional.hardshrink(L.tensor([True]))",
    "L.nn.functional.hardshrink(L.tensor([1j]))",
    "L.nn.functional.rrelu(L.tensor([-2.0, 3.0, 0.0, nan, -inf]))",
    "L.nn.functional.rrelu(L.tensor(-2.0, dtype=L.float64), 0.2, 0.4)",
    "L.nn.functional.rrelu(L.tensor([-2.0, 3.0], dtype=L.bfloat16))",
    "L.nn.functional.rrelu(L.empty(0))",
    "L.nn.functional.rrelu(L.tensor([-1.0, 2.0], dtype=L.float16))",
    "L.nn.functional.rrelu(L.ones(2, dtype=L.float16), training=True)",
    "L.nn.functional.rrelu(L.ones(2, dtype=L.int64), training=True)",
    "L.nn.functional.rrelu(L.ones(2, dtype=L.int32))",
    "L.nn.functional.rrelu(L.ones(2, dtype=L.complex64))",
    "L.nn.functional.rrelu(L.ones(2, requires_grad=True), inplace=True)",
    "L.nn.functional.hardshrink(L.ones(2, dtype=L.float16), 1e5)",
    "L.nn.functional.hardshrink(L.ones(2), inf)",
    "L.nn.functional.hardshrink(L.ones(2), nan)",
    "L.nn.functional.softshrink(L.ones(2, dtype=L.float16), nan)",
    "L.nn.functional.rms_norm(L.ones(2, 3), [2, 2])",
    "L.nn.functional.rrelu(L.ones(2), 0.5, 0.1, training=True)",
    "(L.manual_seed(3), L.nn.functional.rrelu(L.linspace(-3, 3, 13), training=True))[1]",
    "(L.manual_seed(4), L.nn.functional.rrelu(L.linspace(-3, 3, 7, dtype=L.float64), 0.0, 1.0, True))[1]",
    "(L.manual_seed(5), L.nn.functional.rrelu(L.linspace(-3, 3, 5, dtype=L.bfloat16), training=True))[1]",
    "(L.manual_seed(6), L.rrelu(L.tensor([[-1.0, -2.0], [3.0, -4.0]]).t(), training=True))[1]",
    "L.nn.functional.pixel_shuffle(L.arange(16).reshape(1, 4, 2, 2), 2)",
    "L.nn.functional.pixel_shuffle(L.zeros(0, 4, 2, 2, dtype=L.float16), 2)",
    "L.nn.functional.pixel_shuffle(L.zeros(1, 0, 2, 2), 2)",
    "L.nn.functional.pixel_shuffle(L.zeros(1, 4, 2, 2, dtype=L.bfloat16), 1)",
    "L.nn.functional.pixel_shuffle(L.zeros(3, 2, 2), 2)",
    "L.nn.functional.pixel_shuffle(L.zeros(4, 2), 2)",
    "L.nn.functional.pixel_shuffle(L.zeros(1, 4, 2, 2), 0)",
    "L.nn.functional.pixel_shuffle(L.zeros(1, 4, 2, 2), -1)",
    "L.nn.functional.pixel_unshuffle(L.arange(16.0).reshape(1, 1, 4, 4), 2)",
    "L.nn.functional.pixel_unshuffle(L.zeros(0, 1, 2, 2), 2)",
    "L.nn.functional.pixel_unshuffle(L.zeros(1, 1, 3, 2), 2)",
    "L.nn.functional.pixel_unshuffle(L.zeros(1, 1, 4, 3), 2)",
    "L.nn.functional.pixel_unshuffle(L.zeros(4, 3), 2)",
    "L.nn.functional.pixel_unshuffle(L.zeros(1, 1, 4, 4), 0)",
    "L.nn.functional.channel_shuffle(L.arange(12).reshape(1, 6, 2), 3)",
    "L.nn.functional.channel_shuffle(L.zeros(0, 4, 3), 2)",
    "L.nn.functional.channel_shuffle(L.zeros(1, 0, 3), 2)",
    "L.nn.functional.channel_shuffle(L.zeros(1, 4, 3, 5, 2, 1), 2)",
    "L.nn.functional.channel_shuffle(L.zeros(1, 4), 2)",
    "L.nn.functional.channel_shuffle(L.zeros(4), 2)",
    "L.nn.functional.channel_shuffle(L.zeros(1, 4, 2), 3)",
    "L.nn.functional.channel_shuffle(L.zeros(1, 4, 2), 0)",
    "L.nn.functional.channel_shuffle(L.zeros(1, 4, 2), -2)",
    "L.nn.functional.native_channel_shuffle(L.arange(8.0).reshape(1, 4, 2), 2)",
    "L.nn.functional.native_channel_shuffle(L.zeros(1, 4), 2)",
    "L.nn.functional.rms_norm(L.tensor([[3.0, 4.0], [0.0, 0.0], [nan, 1.0], [inf, 1.0]]), [2])",
    "L.nn.functional.rms_norm(L.tensor([[0.0, 0.0]]), [2], eps=0.0)",
    "L.nn.functional.rms_norm(L.tensor([[1.0, 2.0]], dtype=L.float16), [2])",
    "L.nn.functional.rms_norm(L.tensor([[1.0, 2.0]], dtype=L.bfloat16), [2], L.tensor([2.0, 3.0]))",
    "L.nn.functional.rms_norm(L.tensor([[1.0, 2.0]]), (2,), L.tensor([2.0, 3.0], dtype=L.float64))",
    "L.nn.functional.rms_norm(L.tensor([[1.0, 2.0]], dtype=L.float64), [2])",
    "L.nn.functional.rms_norm(L.ones(2, dtype=L.complex64) * (1 + 1j), [2])",
    "L.nn.functional.rms_norm(L.tensor([[1.0, 2.0]]), [2], L.tensor([1, 2]))",
    "L.nn.functional.rms_norm(L.empty(0, 3), [3])",
    "L.nn.functional.rms_norm(L.empty(2, 0), [0])",
    "L.nn.functional.rms_norm(L.ones(2, 3), [4])",
    "L.nn.functional.rms_norm(L.ones(2, 3), [3], L.ones(4))",
    "L.nn.functional.rms_norm(L.ones(3, dtype=L.long), [3])",
    "L.nn.functional.rms_norm(L.ones(2, 3), [])",
    "L.nn.functional.rms_norm(L.ones(2, 3), [2, 3])",
    "L.rms_norm(L.ones(2, 3), [3], eps=0.5)",
    "L.nn.functional.multi_margin_loss(L.tensor([[1.0, nan, inf]]), L.tensor([0]), reduction='none')",
    "L.nn.functional.multi_margin_loss(L.tensor([[1.0, nan, inf]]), L.tensor([2]), reduction='none')",
    "L.nn.functional.multi_margin_loss(L.tensor(0.5), L.tensor(0))",
    "L.nn.functional.multi_margin_loss(L.tensor(0.5), L.tensor([0]), reduction='none')",
    "L.nn.functional.multi_margin_loss(L.tensor([0.1, 0.2]), L.tensor(1), reduction='none')",
    "L.nn.functional.multi_margin_loss(L.empty(0, 4), L.empty(0, dtype=L.long), reduction='none')",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3, dtype=L.float64), L.tensor([0, 2]), 2, 0.3)",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 3]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([-1, 0]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([[0, 1]]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0.0, 1.0]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1], dtype=L.int32))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3, dtype=L.long), L.tensor([0, 1]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3, dtype=L.float16), L.tensor([0, 1]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), p=3)",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(1, 3))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(2))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(3, dtype=L.float64))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(3, requires_grad=True))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), reduction='foo')",
    "L.nn.functional.multi_margin_loss(L.ones(2, 0), L.tensor([0, 1]))",
    "L.nn.functional.multi_margin_loss(L.ones(2, 3, 4), L.tensor([0, 1]))",
    "L.nn.functional.multilabel_margin_loss(L.tensor([[1.0, nan, inf, -inf]]), L.tensor([[0, 3, -1, 2]]))",
    "L.nn.functional.multilabel_margin_loss(L.tensor(0.3), L.tensor(0), reduction='none')",
    "L.nn.functional.multilabel_margin_loss(L.tensor(0.3), L.tensor(-1))",
    "L.nn.functional.multilabel_margin_loss(L.tensor([0.3, 0.1], dtype=L.float64), L.tensor([1, -1]))",
    "L.nn.functional.multilabel_margin_loss(L.empty(0, 4), L.empty(0, 4, dtype=L.long), reduction='none')",
    "L.nn.functional.multilabel_margin_loss(L.ones(2, 4), L.ones(2, 3, dtype=L.long))",
    "L.nn.functional.multilabel_margin_loss(L.ones(2, 4), L.ones(2, 4))",
    "L.nn.functional.multilabel_margin_loss(L.ones(2, 4, dtype=L.long), L.ones(2, 4, dtype=L.long))",
    "L.nn.functional.multilabel_margin_loss(L.ones(2, 4, dtype=L.bfloat16), L.ones(2, 4, dtype=L.long))",
    "L.nn.functional.multilabel_margin_loss(L.ones(2, 4), L.tensor([[4, -1, 0, 0], [0, -1, 0, 0]]))",
    "L.nn.functional.multilabel_margin_loss(L.ones(2, 4), L.tensor([[-2, -1, 0, 0], [0, -1, 0, 0]]))",
    "L.nn.functional.multilabel_margin_loss(L.ones(2, 0), L.ones(2, 0, dtype=L.long))",
    "L.nn.functional.multilabel_margin_loss(L.ones(0), L.ones(0, dtype=L.long))",
    "L.nn.functional.multilabel_soft_margin_loss(L.tensor([[0.0, nan, inf]]), L.tensor([[1.0, 0.0, 1.0]]))",
    "L.nn.functional.multilabel_soft_margin_loss(L.ones(2, 3), L.ones(2, 3), reduction='bad')",
    "L.nn.functional.multilabel_soft_margin_loss(L.ones(2, 3), L.ones(2, 3), size_average=False)",
    "L.nn.functional.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.zeros(2, 3), margin=0.0)",
    "L.nn.functional.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.zeros(3), reduction='sum')",
    "L.nn.functional.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.zeros(2, 3), reduction='x')",
    "L.nn.functional.triplet_margin_with_distance_loss(L.ones(3), L.zeros(3), L.ones(3), swap=True)",
    "(L.manual_seed(7), L.nn.functional.gumbel_softmax(L.linspace(-2, 2, 12).reshape(3, 4), tau=0.5))[1]",
    "(L.manual_seed(8), L.nn.functional.gumbel_softmax(L.linspace(-2, 2, 12).reshape(3, 4), hard=True, dim=0))[1]",
    "(L.manual_seed(9), L.nn.functional.gumbel_softmax(L.zeros(2, 3, dtype=L.float64), eps=0.1))[1]",
    "L.nn.functional.max_pool3d(L.tensor([1.0, nan, 3.0, nan, 0.0, 0.0, 0.0, 0.0]).reshape(1, 1, 2, 2, 2), 2, "
    "return_indices=True)",
    "L.nn.functional.max_pool3d(L.full((1, 1, 2, 2, 2), -inf), 2, padding=1, return_indices=True)",
    "L.nn.functional.max_pool3d(L.tensor([[[[3, -5], [7, 7]]]]), (1, 2, 2), return_indices=True)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 3, 3, 3), 2, ceil_mode=True, stride=2, dilation=2, return_indices=True)",
    "L.nn.functional.max_pool3d(L.ones(0, 1, 2, 2, 2), 2)",
    "L.nn.functional.max_pool3d(L.ones(1, 0, 2, 2, 2), 2)",
    "L.nn.functional.max_pool3d(L.ones(2, 3, 3), 2)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 3, 3), 3)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 3, 3), (1, 2))",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 3, 3), 2, padding=2)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 3, 3), 2, padding=-1)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 3, 3), 2, stride=0)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 2, 2), 0)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 2, 2), 1, dilation=0)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.bool), 2)",
    "L.nn.functional.max_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.complex64), 2)",
    "L.nn.functional.max_pool3d(L.arange(8, dtype=L.float16).reshape(1, 1, 2, 2, 2), 2)",
    "L.max_pool3d(L.arange(27.0).reshape(1, 3, 3, 3), 2, 1)",
    "L.nn.functional.avg_pool3d(L.arange(1, 9).reshape(1, 1, 2, 2, 2), 2)",
    "L.nn.functional.avg_pool3d(-L.arange(1, 9).reshape(1, 1, 2, 2, 2), 2)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.bool), 2)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.float16), 2)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.bfloat16), 2)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2), 2, divisor_override=0)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 3, 3), 3)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2), (1, 2))",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2), 2, stride=(1, 2))",
    "L.nn.functional.avg_pool3d(L.ones(1, 0, 2, 2, 2), 2)",
    "L.nn.functional.avg_pool3d(L.ones(0, 1, 2, 3, 3), 2)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 3, 3, 3), 2, stride=2, padding=1, ceil_mode=True)",
    "L.nn.functional.avg_pool3d(L.ones(1, 1, 3, 3, 3), 2, stride=2, padding=1, ceil_mode=True, "
    "count_include_pad=False)",
    "L.nn.functional.avg_pool3d(L.tensor([1.0, nan, inf, 0.0, 1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 2, 2, 2), (1, 2, 1))",
    *[f"L.nn.functional.grid_sample(L.arange(12.0).reshape(1, 1, 3, 4), L.tensor([[[[-1.0, -1.0], [0.0, 0.0], "
      f"[1.0, 1.0], [1.2, -0.7], [-3.1, 2.5]]]]), '{mode}', '{padding}', {corners})"
      for mode in ("bilinear", "nearest") for padding in ("zeros", "border", "reflection")
      for corners in (False, True)],
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4), L.tensor([[[[nan, 0.0], [inf, 0.0], [0.0, -inf]]]]), "
    "align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4), L.tensor([[[[nan, 0.0], [inf, 0.0]]]]), 'nearest', "
    "align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4), L.tensor([[[[nan, 0.0], [0.3, inf]]]]), 'bilinear', 'border', "
    "align_corners=True)",
    "L.nn.functional.grid_sample(L.arange(12.0).reshape(1, 1, 3, 4), L.zeros(1, 1, 4, 2, dtype=L.float64), "
    "align_corners=False)",
    "L.nn.functional.grid_sample(L.arange(12.0).reshape(1, 1, 3, 4), L.zeros(1, 4, 2), align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(2, 1, 3, 4), L.zeros(1, 1, 4, 2), align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4), L.zeros(1, 1, 4, 1), align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 0, 4), L.zeros(1, 1, 4, 2), align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(0, 1, 3, 4), L.zeros(0, 1, 4, 2), align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4, dtype=L.long), L.zeros(1, 1, 4, 2, dtype=L.long), "
    "align_corners=False)",
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4), L.zeros(1, 1, 4, 2), 'foo')",
    "L.nn.functional.grid_sample(L.ones(1, 1, 3, 4), L.zeros(1, 1, 4, 2), padding_mode='foo')",
    "L.nn.functional.grid_sample(L.ones(1, 1, 1, 1), L.tensor([[[[0.5, -0.5]]]]), 'bilinear', 'reflection', True)",
    "L.nn.functional.affine_grid(L.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), [1, 1, 2, 3], align_corners=False)",
    "L.nn.functional.affine_grid(L.tensor([[[0.5, -1.0, 0.2], [1.0, 0.3, 0.0]]]), [1, 3, 4, 3], align_corners=True)",
    "L.nn.functional.affine_grid(L.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), [2, 1, 2, 3], align_corners=True)",
    "L.nn.functional.affine_grid(L.tensor([[[1, 0, 0], [0, 1, 0]]]), [1, 1, 2, 3], align_corners=True)",
    "L.nn.functional.affine_grid(L.eye(3, 4)[None], [1, 1, 2, 3, 2], align_corners=False)",
    "L.nn.functional.affine_grid(L.eye(3, 4)[None], [1, 1, 2, 3], align_corners=False)",
    "L.nn.functional.affine_grid(L.eye(2, 3)[None], [1, 1, 3], align_corners=False)",
    "L.nn.functional.affine_grid(L.eye(2, 3)[None], [1, 1, 0, 3], align_corners=False)",
    "L.nn.functional.affine_grid(L.eye(2, 3)[None], [1, 1, 1, 3], align_corners=True)",
    "L.nn.functional.affine_grid(L.eye(2, 3, dtype=L.float64)[None], [1, 1, 2, 2])",
    "L.affine_grid_generator(L.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), [2, 1, 2, 3], False)",
    *[f"L.nn.functional.ctc_loss(L.tensor(np.random.default_rng(3).standard_normal((6, 2, 4))).float()"
      f".log_softmax(2), L.tensor([[1, 2, 2], [3, 1, 0]]), {lengths}, reduction='{reduction}'{extra})"
      for lengths in ("[6, 5], [3, 2]", "L.tensor([6, 4]), L.tensor([3, 2])", "(2, 5), (3, 2)")
      for reduction in ("none", "sum", "mean")
      for extra in ("", ", zero_infinity=True")],
    "L.nn.functional.ctc_loss(L.zeros(4, 1, 3).log_softmax(2), L.tensor([1, 1]), [4], [2], blank=2, reduction='none')",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3, dtype=L.float64).log_softmax(2), L.tensor([1, 2, 2]), [4, 3], [1, 2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 3).log_softmax(1), L.tensor([1, 2]), [4], [2], reduction='none')",
    "L.nn.functional.ctc_loss(L.zeros(4, 3).log_softmax(1), L.tensor([1, 2]), [4], [2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3).log_softmax(2), L.tensor([[1, 2], [1, 1]]), [0, 4], [0, 2], "
    "reduction='none')",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3).log_softmax(2), L.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2], blank=3)",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3).log_softmax(2), L.tensor([[1, 2], [1, 1]]), [5, 4], [2, 2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3).log_softmax(2), L.tensor([[1, 2], [1, 1]]), [4], [2, 2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3).log_softmax(2), L.tensor([[1, 2], [1, 1]]), [4, 4], [2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3).log_softmax(2), L.tensor([[1, 2], [1, 1]]), [4, 4], [3, 2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3, dtype=L.float16), L.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2])",
    "L.nn.functional.ctc_loss(L.zeros(4, 2, 3).log_softmax(2), L.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2], "
    "reduction='foo')",
    "L.nn.CTCLoss(blank=1, zero_infinity=True)(L.zeros(2, 2, 3).log_softmax(2), L.tensor([[2, 2], [0, 0]]), [2, 2], "
    "[2, 1])",
    "L.nn.Softmax2d()(L.ones(2, 3))",
    "L.nn.InstanceNorm1d(3)(L.ones(3))",
    "L.nn.InstanceNorm3d(3, affine=True)(L.ones(1, 2, 2, 2, 2))",
    "L.nn.BatchNorm3d(3)(L.ones(2, 3, 2, 2))",
    "L.nn.Softmax2d()(L.ones(1, 2, 3, 4, 5))",
    "L.nn.MultiMarginLoss(p=3)",
    "L.nn.MultiMarginLoss(weight=L.ones(2, 2))",
    "L.nn.TripletMarginWithDistanceLoss(margin=-1.0)",
    "L.nn.CircularPad2d(1)(L.ones(2, 3, 4, 5, 6))",
    "L.nn.ReflectionPad1d(3)(L.ones(1, 2, 3))",
    "L.nn.ZeroPad2d((1, 2))(L.ones(1, 2, 3))",
    "L.nn.ConstantPad1d(2, 1)(L.tensor([[1, 2]]))",
]


@pytest.mark.torch
def test_grid_sample_in_half_precision_is_close_to_torch():
    # (half types compute in float32 here, rounded once; PyTorch's kernel rounds along the way)
    pytest.importorskip("torch")
    assert_same_outcome("L.nn.functional.grid_sample(L.arange(12.0, dtype=L.float16).reshape(1, 1, 3, 4), "
                        "L.tensor([[[[0.3, -0.2], [0.9, 0.1]]]], dtype=L.float16), align_corners=False)",
                        rtol=2e-3, atol=0)


@pytest.mark.torch
@pytest.mark.parametrize("expression", EDGE_EXPRESSIONS)
def test_functional_edge_cases_match_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-6, atol=1e-7)


GRADIENT_CASES = [
    # (expression over L and the leaf x, x)
    ("L.nn.functional.softshrink(x, 0.3)", "L.tensor([1.0, 0.2, -0.6, 0.3, nan], dtype=L.float64)"),
    ("L.nn.functional.hardshrink(x)", "L.tensor([1.0, 0.5, -0.6, -0.5, nan])"),
    ("L.nn.functional.hardshrink(x, 0.1)", "L.tensor([1.0, 0.1, -0.6], dtype=L.bfloat16)"),
    ("L.nn.functional.rrelu(x)", "L.tensor([1.0, -0.5, 0.0, nan])"),
    ("L.nn.functional.rrelu(x, 0.2, 0.2, training=True)", "L.tensor([1.0, -0.5, 0.0, nan])"),
    ("(L.manual_seed(1), L.nn.functional.gumbel_softmax(x, 0.7, hard=True))[1]", "L.linspace(-1, 1, 8).reshape(2, 4)"),
    ("L.nn.functional.max_pool3d(x, 2, 1, 1)", "L.linspace(-3, 3, 54).reshape(2, 3, 3, 3)"),
    ("L.nn.functional.max_pool3d(x, 2, return_indices=True)[0]", "L.tensor([1.0, 1.0, 0.5, 3.0, 3.0, 2.0, 2.0, 0.0])"
     ".reshape(1, 2, 2, 2)"),
    ("L.nn.functional.avg_pool3d(x, 3, 2, 1, ceil_mode=True)", "L.linspace(-3, 3, 100).reshape(1, 4, 5, 5)"),
    ("L.nn.functional.avg_pool3d(x, (2, 1, 2), 1, (1, 0, 1), count_include_pad=False)",
     "L.linspace(-3, 3, 36).reshape(1, 3, 4, 3)"),
    ("L.nn.functional.grid_sample(L.arange(24.0, dtype=L.float64).reshape(1, 2, 3, 4), x, 'bilinear', 'reflection', "
     "False)",
     "L.tensor([[[[-1.3, 0.2], [0.4, 0.9], [1.1, -0.35]]]], dtype=L.float64)"),
    ("L.nn.functional.grid_sample(L.arange(24.0, dtype=L.float64).reshape(1, 2, 3, 4), x, 'bilinear', 'border', True)",
     "L.tensor([[[[-1.3, 0.2], [0.4, 0.9], [1.1, -0.35]]]], dtype=L.float64)"),
    ("L.nn.functional.grid_sample(x, L.tensor([[[[-1.3, 0.2], [0.4, 0.9]]]]), 'nearest', 'zeros', False)",
     "L.arange(12.0).reshape(1, 1, 3, 4)"),
    ("L.nn.functional.affine_grid(x, [2, 1, 3, 4], align_corners=False)", "L.linspace(-1, 1, 12).reshape(2, 2, 3)"),
    ("L.nn.functional.affine_grid(x, [1, 1, 2, 3, 2], align_corners=True)", "L.linspace(-1, 1, 12).reshape(1, 3, 4)"),
    ("L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2])",
     "L.linspace(-2, 2, 48).reshape(6, 2, 4)"),
    ("L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor([1, 2, 2, 1]), [2, 6], [3, 1], reduction='sum', "
     "zero_infinity=True)", "L.linspace(-2, 2, 48, dtype=L.float64).reshape(6, 2, 4)"),
    ("L.nn.functional.ctc_loss(x, L.tensor([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2], reduction='none')",
     "L.linspace(-2, 2, 48).reshape(6, 2, 4).log_softmax(2)"),
    ("L.nn.functional.pixel_shuffle(x, 2)", "L.arange(32.0).reshape(2, 4, 2, 2)"),
    ("L.nn.functional.pixel_unshuffle(x, 2)", "L.arange(32.0).reshape(2, 1, 4, 4)"),
    ("L.nn.functional.channel_shuffle(x, 2)", "L.arange(8.0, dtype=L.float64).reshape(1, 4, 2)"),
    ("L.nn.functional.rms_norm(x, [3], L.tensor([0.5, 1.0, 2.0]))", "L.tensor([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0]])"),
    ("L.nn.functional.rms_norm(x, [2, 3], eps=0.1)", "L.tensor([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0]])"),
    ("L.nn.functional.rms_norm(x, [3])", "L.tensor([[1.0, 2.0, 0.0]], dtype=L.float16)"),
    ("L.nn.functional.rms_norm(x, [2])", "L.tensor([[1.0 + 1j, 2.0 - 1j], [0.5j, 3.0]])"),
    ("L.nn.functional.multi_margin_loss(x, L.tensor([2, 0]), p=2, weight=L.tensor([0.5, 1.0, 2.0]))",
     "L.tensor([[0.1, 0.2, 0.4], [1.0, -1.0, 0.5]])"),
    ("L.nn.functional.multi_margin_loss(x, L.tensor(1), margin=0.3, reduction='none')", "L.tensor([0.1, 0.2, 0.4])"),
    ("L.nn.functional.multilabel_margin_loss(x, L.tensor([[2, 2, -1], [0, 1, 2]]), reduction='sum')",
     "L.tensor([[0.1, 0.2, 0.4], [1.0, -1.0, 0.5]])"),
    ("L.nn.functional.multilabel_margin_loss(x, L.tensor([[1, -1, 0], [0, -1, 2]]), reduction='none')",
     "L.tensor([[0.1, 0.2, 0.4], [1.0, -1.0, 0.5]], dtype=L.float64)"),
]


@pytest.mark.torch
@pytest.mark.parametrize("expression, leaf", GRADIENT_CASES)
def test_gradients_match_torch(expression, leaf):
    """The output and the leaf's gradient through a weighted sum of the output, and the node's name."""
    torch = pytest.importorskip("torch")
    results = []
    for library in (tm, torch):
        namespace = {"L": library, "nan": math.nan, "inf": math.inf}
        x = eval(leaf, namespace).requires_grad_()
        out = eval(expression, {**namespace, "x": x})
        real = out.real.dtype if out.is_complex() else out.dtype
        weights = library.linspace(-1, 1, out.numel(), dtype=real).reshape(out.shape)
        loss = (out * weights).sum()
        (loss.real if out.is_complex() else loss).backward()
        wide = library.complex128 if x.is_complex() else library.float64
        results.append((out.detach().to(wide).numpy(), x.grad.to(wide).numpy(), type(out.grad_fn).__name__))
    (out, grad, node), (their_out, their_grad, their_node) = results
    assert node == their_node
    np.testing.assert_allclose(out, their_out, rtol=1e-3, atol=1e-6, err_msg=expression)
    np.testing.assert_allclose(grad, their_grad, rtol=1e-3, atol=1e-6, err_msg=expression)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.ReflectionPad2d(1)", "L.nn.ReplicationPad3d((1, 2, 3, 4, 5, 6))", "L.nn.CircularPad1d([1, 2])",
    "L.nn.ConstantPad2d((1, 2, 3, 4), 3.5)", "L.nn.ZeroPad3d(2)", "L.nn.ZeroPad1d((1, 2))",
    "L.nn.RMSNorm(3)", "L.nn.RMSNorm([2, 3], eps=1e-5, elementwise_affine=False)", "L.nn.PixelShuffle(2)",
    "L.nn.PixelUnshuffle(3)", "L.nn.ChannelShuffle(4)", "L.nn.Softshrink(0.25)", "L.nn.Hardshrink()",
    "L.nn.RReLU()", "L.nn.RReLU(0.1, 0.2, inplace=True)", "L.nn.Softmax2d()", "L.nn.Fold((4, 5), 2)",
    "L.nn.Unfold(kernel_size=(2, 3), stride=2)", "L.nn.CosineSimilarity(dim=0)", "L.nn.PairwiseDistance(p=1.0)",
    "L.nn.MultiMarginLoss(p=2, margin=0.5)", "L.nn.InstanceNorm1d(4, affine=True)", "L.nn.InstanceNorm3d(2)",
    "L.nn.Conv3d(4, 6, (1, 2, 3), stride=2, padding='valid', groups=2, bias=False, padding_mode='replicate')",
    "L.nn.ConvTranspose3d(4, 6, 3, output_padding=1, stride=2, dilation=(1, 2, 1))",
    "L.nn.BatchNorm3d(5, momentum=None)", "L.nn.MaxPool3d(3, 2, 1, 2, True, True)", "L.nn.AvgPool3d((1, 2, 3))",
    "L.nn.AvgPool3d(2, 1, 1, True, False, 2)", "L.nn.MultiLabelMarginLoss()", "L.nn.MultiLabelSoftMarginLoss()",
    "L.nn.TripletMarginWithDistanceLoss(margin=2.0, swap=True)",
])
def test_repr_matches_torch(expression):
    torch = pytest.importorskip("torch")
    assert repr(eval(expression, {"L": tm})).replace("tensormodes.", "torch.") == \
        repr(eval(expression, {"L": torch}))


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.functional.softshrink(L.ones(2), -1.0)",
    "L.nn.Conv3d(2, 3, 2)(L.ones(1, 2, 4, 4))",
    "L.nn.Conv3d(2, 3, 2)(L.ones(1, 3, 4, 4, 4))",
    "L.nn.functional.conv3d(L.ones(1, 2, 1, 1, 1), L.ones(3, 2, 2, 2, 2))",
    "L.nn.functional.conv3d(L.ones(1, 2, 3, 3, 3), L.ones(3, 2, 2, 2, 2), padding='same', stride=2)",
    "L.nn.ConvTranspose3d(2, 3, 2, padding_mode='reflect')",
    "L.nn.MultiMarginLoss()(L.ones(2, 3), L.tensor([3, 0]))",
    "L.nn.PixelShuffle(2)(L.ones(1, 3, 2, 2))",
    "L.nn.ChannelShuffle(4)(L.ones(1, 6, 2))",
    "L.nn.RMSNorm(4)(L.ones(2, 3))",
])
def test_call_errors_match_torch(expression):
    pytest.importorskip("torch")
    assert_raises_like_torch(expression)


# -- lazy modules ------------------------------------------------------------------------------------

def test_lazy_linear_materialises_on_first_call_and_becomes_linear():
    layer = tm.nn.LazyLinear(3)
    assert repr(layer) == "LazyLinear(in_features=0, out_features=3, bias=True)" and layer.has_uninitialized_params()
    assert isinstance(layer.weight, tm.nn.UninitializedParameter) and layer.weight.requires_grad
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        _ = layer.weight.shape
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        _ = layer.weight + 1
    assert [repr(v) for v in layer.state_dict().values()] == ["<UninitializedParameter>"] * 2
    out = layer(tm.ones(2, 4))
    assert out.shape == (2, 3) and type(layer) is tm.nn.Linear and type(layer.weight) is tm.nn.Parameter
    assert layer.weight.shape == (3, 4) and not layer._forward_pre_hooks
    model = tm.nn.Sequential(tm.nn.LazyLinear(4), tm.nn.ReLU(), tm.nn.LazyConv1d(2, 1))
    model(tm.ones(3, 7, 5)).sum().backward()
    assert [tuple(p.grad.shape) for p in model.parameters()] == [(4, 5), (4,), (2, 7, 1), (2,)]


@pytest.mark.torch
@pytest.mark.parametrize("expression, shape", [
    ("L.nn.LazyLinear(3)", (2, 4)), ("L.nn.LazyLinear(2, bias=False, dtype=L.float64)", (5,)),
    ("L.nn.LazyConv2d(4, 3, padding=1)", (1, 2, 5, 5)), ("L.nn.LazyConv2d(4, (2, 3), groups=2)", (4, 5, 6)),
    ("L.nn.LazyConv1d(3, 2, stride=2)", (2, 3, 7)), ("L.nn.LazyConv3d(2, 2, bias=False)", (1, 3, 3, 3, 3)),
])
def test_lazy_layers_draw_and_compute_as_torch(expression, shape):
    """Same seed, same weights (drawn at the first call), same outputs, and the same final class."""
    torch = pytest.importorskip("torch")
    outputs = []
    for library in (tm, torch):
        library.manual_seed(7)
        layer = eval(expression, {"L": library})
        before = repr(layer)
        dtype = library.float64 if "float64" in expression else library.float32
        out = layer(library.ones(shape, dtype=dtype))
        outputs.append((before.replace("torch.", "tensormodes."), repr(layer), out.detach().numpy()))
    assert outputs[0][:2] == outputs[1][:2]
    np.testing.assert_allclose(outputs[0][2], outputs[1][2], rtol=1e-5, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.LazyConv2d(4, 3, groups=2)(L.ones(1, 3, 5, 5))",
    "L.nn.LazyConv2d(4, 3)(L.ones(5, 5))",
    "L.nn.UninitializedParameter().shape",
])
def test_lazy_errors_match_torch(expression):
    pytest.importorskip("torch")
    assert_raises_like_torch(expression)


def test_integer_average_pooling_truncates_wrapped_sums_at_the_smallest_int64():
    # PyTorch 2.13: a window summing (with wraparound) to -2**63 gives -2**63 // 8, truncated toward zero
    low, high = -(2 ** 63), 2 ** 63 - 1
    x = tm.tensor([low, high, high, 1, 1, 0, low, low], dtype=tm.int64).reshape(1, 1, 2, 2, 2)
    assert x.sum().item() == -(2 ** 63)
    assert tm.nn.functional.avg_pool3d(x, 2).flatten().tolist() == [-(2 ** 60)]
    assert tm.nn.functional.avg_pool2d(x[0], 2).flatten().tolist() == [2 ** 61 - 1, 0]
