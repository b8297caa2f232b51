"""Convolution, pooling, padding and activation differences from PyTorch that the differential
fuzzer (tests/differential.py) found, each pinned with PyTorch's own values, types and messages
(as torch 2.13 gives them on CPU), so that these run without torch installed too."""

from __future__ import annotations

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F


def _raises(kind, message, function, *args, **kwargs):
    with pytest.raises(kind) as caught:
        function(*args, **kwargs)
    assert str(caught.value) == message


def _meta(t):
    return t.to("meta")


# -- convolution: which backend PyTorch's CPU dispatch takes decides the checks and dtypes ---------

@pytest.mark.parametrize("call, kind, message", [
    # the slow kernels look at the input's dtype first, then at the weight's
    (lambda: tm.conv2d(tm.ones(1, 2, 4, 4, dtype=tm.bool), tm.ones(3, 2, 2, 2, dtype=tm.float16)),
     NotImplementedError, "\"slow_conv2d_cpu\" not implemented for 'Bool'"),
    (lambda: tm.conv2d(tm.ones(1, 1, 5, 5, dtype=tm.int16), tm.ones(1, 1, 2, 2, dtype=tm.bool), dilation=2),
     NotImplementedError, "\"slow_conv_dilated<>\" not implemented for 'Short'"),
    (lambda: tm.conv1d(tm.ones(1, 2, 5, dtype=tm.int32), tm.ones(2, 2, 2, dtype=tm.int32), dilation=2),
     NotImplementedError, "\"slow_conv_dilated<>\" not implemented for 'Int'"),
    (lambda: tm.conv_transpose2d(tm.ones(1, 1, 3, 3, dtype=tm.int32), tm.ones(1, 2, 2, 2, dtype=tm.int16)),
     NotImplementedError, "\"slow_conv_transpose2d_out_cpu\" not implemented for 'Int'"),
    (lambda: tm.convolution(tm.ones(1, 2, 4, 4, dtype=tm.complex64), tm.ones(3, 2, 2, 2), None, [1], [0], [1],
                            False, [0], 1),
     NotImplementedError, "\"slow_conv2d_cpu\" not implemented for 'ComplexFloat'"),
    (lambda: tm.conv2d(tm.ones(1, 2, 4, 4, dtype=tm.float64), tm.ones(3, 2, 2, 2, dtype=tm.int16)),
     RuntimeError, "expected scalar type Double but found Short"),
    # oneDNN (bfloat16; float32 batches of more than one, big inputs, big kernels, groups)
    (lambda: tm.conv2d(tm.ones(1, 2, 4, 4, dtype=tm.bfloat16), tm.ones(3, 2, 2, 2)),
     RuntimeError, "Input type (CPUBFloat16Type) and weight type (torch.FloatTensor) should be the same or input "
                   "should be a MKLDNN tensor and weight is a dense tensor"),
    (lambda: tm.conv2d(tm.ones(2, 2, 4, 4), tm.ones(3, 2, 2, 2, dtype=tm.float64)),
     RuntimeError, "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same or input "
                   "should be a MKLDNN tensor and weight is a dense tensor"),
    (lambda: tm.conv_transpose2d(tm.ones(2, 2, 4, 4), tm.ones(2, 3, 2, 2), tm.ones(3, dtype=tm.int16)),
     RuntimeError, "Input type (torch.FloatTensor) and bias type (torch.ShortTensor) should be the same or input "
                   "should be a MKLDNN tensor and bias is a dense tensor"),
    (lambda: tm.conv2d(tm.ones(2, 2, 4, 4), tm.ones(3, 2, 2, 2), dilation=0),
     RuntimeError, "non-positive dilation is not supported"),
    (lambda: tm.conv_transpose2d(tm.ones(2, 2, 4, 4), tm.ones(2, 0, 2, 2)),
     RuntimeError, "could not create a primitive descriptor for the deconvolution forward propagation primitive. "
                   "Run workload with environment variable ONEDNN_VERBOSE=all to get additional diagnostic "
                   "information."),
    (lambda: tm.conv_transpose2d(tm.ones(2, 2, 2, 2), tm.ones(2, 3, 2, 2), padding=3),
     RuntimeError, "could not construct a memory descriptor using a format tag"),
    # complex inputs: conv1d / conv2d / the transposed ones check the parts' types first
    (lambda: tm.conv2d(tm.ones(1, 2, 4, 4, dtype=tm.complex64), tm.ones(3, 2, 2, 2, dtype=tm.uint8)),
     RuntimeError, "Input type (CPUComplexFloatType) and weight type (torch.ByteTensor) should be the same"),
    (lambda: tm.conv_transpose2d(tm.ones(1, 2, 4, 4, dtype=tm.complex64), tm.ones(2, 3, 2, 2, dtype=tm.complex64),
                                 tm.ones(3, dtype=tm.int16)),
     RuntimeError, "Input type (CPUComplexFloatType) and bias type (torch.ShortTensor) should be the same"),
    # conv1d / conv2d with int padding check the bias's dtype before anything else
    (lambda: tm.conv1d(tm.ones(4), tm.ones(3, 2, 2), tm.ones(3, dtype=tm.int16)),
     RuntimeError, "Input type (float) and bias type (short int) should be the same"),
    # shapes the slow kernels refuse
    (lambda: tm.conv_transpose2d(tm.ones(1, 2, 4, 4, dtype=tm.float64), tm.ones(2, 0, 1, 3, dtype=tm.float64)),
     RuntimeError, "non-empty 2D or 4D weight tensor expected, but got: [2, 0, 1, 3]"),
    (lambda: tm.conv_transpose1d(tm.ones(1, 2, 4, dtype=tm.float64), tm.ones(2, 3, 0, dtype=tm.float64)),
     RuntimeError, "kernel size should be greater than zero, but got kernel_height: 1 kernel_width: 0"),
    (lambda: tm.conv2d(tm.ones(1, 2, 4, 4, dtype=tm.float64), tm.ones(3, 2, 0, 2, dtype=tm.float64), dilation=2),
     RuntimeError, "kernel size should be greater than zero, but got [0, 2]"),
    (lambda: tm.conv_transpose2d(tm.ones(1, 2, 0, 3), tm.ones(2, 3, 2, 2)),
     RuntimeError, "Only zero batch or zero channel inputs are supported, but got input shape: [1, 2, 0, 3]"),
    (lambda: tm.conv_transpose1d(tm.ones(1, 2, 0), tm.ones(2, 3, 2)),
     RuntimeError, "Only zero batch or zero channel inputs are supported, but got input shape: [1, 2, 1, 0]"),
    (lambda: tm.conv_transpose2d(tm.ones(1, 2, 4, 4, dtype=tm.float64), tm.ones(2, 3, 2, 2, dtype=tm.float64),
                                 dilation=0),
     RuntimeError, "dilation should be greater than zero, but got dilation_height: 0, dilation_width: 0"),
    (lambda: tm.convolution(tm.ones(1, 2, 4, 4), tm.ones(3, 2, 2, 2), None, [1], [0], [1], False, [-1], 1),
     RuntimeError, "negative output_padding is not supported"),
    # the empty path views its product as the output's sizes
    (lambda: tm.conv_transpose2d(tm.ones(0, 2, 2, 2, dtype=tm.float64), tm.ones(2, 3, 2, 2, dtype=tm.float64),
                                 padding=3),
     RuntimeError, "invalid shape dimension -3 at index 2 of shape [0, 3, -3, -3]"),
    (lambda: tm.conv_transpose2d(tm.ones(0, 2, 4, 4), tm.ones(2, 0, 2, 2)),
     IndexError, "select(): index 0 out of range for tensor of size [0] at dimension 0"),
    (lambda: tm.convolution(tm.ones(0, 2, 4, 4, dtype=tm.int64), tm.ones(3, 2, 2, 2, dtype=tm.int64),
                            tm.ones(3), [1], [0], [1], False, [0], 1),
     RuntimeError, "result type Float can't be cast to the desired output type Long"),
    (lambda: tm.conv_transpose2d(tm.ones(1, 2, 4, 4, dtype=tm.int64), tm.ones(2, 3, 2, 2, dtype=tm.int64),
                                 tm.tensor([1.5, 2, 3])),
     RuntimeError, "result type Float can't be cast to the desired output type Long"),
    # ATen's first checks
    (lambda: tm.convolution(tm.tensor(1.0), tm.tensor(2.0), None, [1], [1], [2], True, [1], 1),
     RuntimeError, "weight should have at least three dimensions"),
    (lambda: tm.conv2d(tm.ones(1, 2, 3, 3), tm.tensor(2.0), padding="same"),
     RuntimeError, "weight should have at least three dimensions"),
    (lambda: tm.conv1d(tm.ones(1, 2, 0, dtype=tm.float64), tm.ones(2, 2, 0, dtype=tm.float64), padding="same"),
     RuntimeError, "narrow(): length must be non-negative."),
    (lambda: tm.conv1d(tm.ones(1, 2, 1, dtype=tm.float64), tm.ones(2, 2, 0, dtype=tm.float64), padding="same"),
     RuntimeError, "Only zero batch or zero channel inputs are supported, but got input shape: [1, 2, 1, 0]"),
])
def test_convolution_errors_follow_the_backend_pytorch_picks(call, kind, message):
    _raises(kind, message, call)


def test_convolution_errors_are_the_meta_rules_too():
    # the meta rules run the same checks
    _raises(RuntimeError, "non-empty 2D or 4D weight tensor expected, but got: [2, 0, 1, 3]", tm.conv_transpose2d,
            _meta(tm.ones(1, 2, 4, 4, dtype=tm.float64)), _meta(tm.ones(2, 0, 1, 3, dtype=tm.float64)))
    _raises(NotImplementedError, "\"slow_conv2d_cpu\" not implemented for 'Bool'", tm.conv2d,
            _meta(tm.ones(1, 2, 4, 4, dtype=tm.bool)), _meta(tm.ones(3, 2, 2, 2)))


@pytest.mark.parametrize("call, dtype, shape, values", [
    # the slow kernels copy the bias into the output (cast, a complex one's real part) ...
    (lambda: tm.convolution(tm.ones(1, 2, 4, 4, dtype=tm.float64), tm.ones(3, 2, 2, 2, dtype=tm.float64),
                            tm.tensor([1, 2, 3], dtype=tm.int16), [1], [0], [1], False, [0], 1),
     tm.float64, (1, 3, 3, 3), [9.0, 10.0, 11.0]),
    (lambda: tm.convolution(tm.ones(1, 2, 4, 4, dtype=tm.int64), tm.ones(3, 2, 2, 2, dtype=tm.int64),
                            tm.tensor([1.5, 2, 3]), [1], [0], [2], False, [0], 1),
     tm.int64, (1, 3, 2, 2), [9, 10, 11]),
    (lambda: tm.conv1d(tm.ones(1, 2, 4, dtype=tm.float64), tm.ones(3, 2, 2, dtype=tm.float64),
                       tm.tensor([1 + 5j, 2, 3], dtype=tm.complex64), padding="same"),
     tm.float64, (1, 3, 4), [5.0, 6.0, 7.0]),
    # ... the transposed one adds it, rounding the sum to the output's dtype
    (lambda: tm.conv_transpose2d(tm.ones(1, 2, 4, 4, dtype=tm.float16), tm.ones(2, 3, 2, 2, dtype=tm.float16),
                                 tm.tensor([1.1, 2, 3], dtype=tm.float64)),
     tm.float16, (1, 3, 5, 5), [3.099609375, 4.0, 5.0]),
    (lambda: tm.conv_transpose2d(tm.ones(1, 2, 4, 4, dtype=tm.float32), tm.ones(2, 3, 2, 2, dtype=tm.float32),
                                 tm.tensor([1, 2, 3], dtype=tm.int16)),
     tm.float32, (1, 3, 5, 5), [3.0, 4.0, 5.0]),
    # the empty path multiplies by the weight's first element: its dtype promotes
    (lambda: tm.conv2d(tm.ones(0, 2, 4, 4, dtype=tm.bool), tm.ones(3, 2, 2, 2)), tm.float32, (0, 3, 3, 3), None),
    (lambda: tm.conv2d(tm.ones(0, 2, 4, 4, dtype=tm.int64), tm.ones(3, 2, 2, 2, dtype=tm.float64)),
     tm.float64, (0, 3, 3, 3), None),
    (lambda: tm.conv1d(tm.ones(0, 2, 5, dtype=tm.bool), tm.ones(2, 2, 3), padding="valid", dilation=[2]),
     tm.float32, (0, 2, 1), None),
    (lambda: tm.convolution(tm.ones(0, 2, 4, 4), tm.ones(3, 2, 2, 2), tm.ones(3, dtype=tm.int16), [1], [0], [1],
                            False, [0], 1), tm.float32, (0, 3, 3, 3), None),
    # ... and keeps an input's zero channels
    (lambda: tm.conv2d(tm.ones(1, 0, 4, 4), tm.ones(3, 0, 2, 2)), tm.float32, (1, 0, 3, 3), None),
    (lambda: tm.conv2d(tm.ones(0, 2, 4, 4, dtype=tm.float64), tm.ones(3, 2, 2, 2, dtype=tm.float64), dilation=0),
     tm.float64, (0, 3, 4, 4), None),
    # oneDNN convolves into an empty output
    (lambda: tm.conv_transpose1d(tm.ones(1, 2, 4), tm.ones(2, 1, 3), padding=3, groups=2), tm.float32, (1, 2, 0),
     None),
    (lambda: tm.conv_transpose1d(tm.ones(2, 2, 4), tm.ones(2, 2, 1), dilation=0), tm.float32, (2, 2, 4), None),
])
def test_convolution_results_follow_the_backend_pytorch_picks(call, dtype, shape, values):
    result = call()
    assert result.dtype == dtype and tuple(result.shape) == shape
    if values is not None:
        assert result.flatten()[:: result[0, 0].numel()].tolist() == values


def test_convolution_meta_results_follow_the_backend_pytorch_picks():
    result = tm.conv2d(_meta(tm.ones(0, 2, 4, 4, dtype=tm.int64)), _meta(tm.ones(3, 2, 2, 2, dtype=tm.float64)))
    assert result.dtype == tm.float64 and tuple(result.shape) == (0, 3, 3, 3)
    assert tuple(tm.conv2d(_meta(tm.ones(1, 0, 4, 4)), _meta(tm.ones(3, 0, 2, 2))).shape) == (1, 0, 3, 3)


def test_half_transposed_convolution_rounds_as_the_slow_kernel_does():
    # PyTorch's slow transposed kernel rounds each window's share to float16 and sums the shares
    # in float16; one rounding of the exact sum gives -0.6343 here
    x = tm.tensor([[[[-0.12298583984375, 0.81689453125, -1.943359375], [1.2998046875, 0.791015625, 0.08734130859375],
                     [-1.6201171875, 0.0528564453125, -0.42333984375]]]], dtype=tm.float16)
    w = tm.tensor([[[[-0.90185546875, -0.83154296875], [-1.6962890625, 0.97265625]],
                    [[1.44140625, 1.1416015625], [1.90234375, -0.7919921875]]]], dtype=tm.float16)
    assert tm.conv_transpose2d(x, w).flatten()[:6].tolist() == [0.11090087890625, -0.634765625, 1.07421875,
                                                                1.6162109375, -0.96337890625, -3.298828125]


def test_convolution_autograd_refuses_what_pytorch_refuses():
    weight = tm.ones(3, 2, 2, 2, dtype=tm.complex64)
    _raises(RuntimeError, "convolution does not support automatic differentiation for outputs with complex dtype.",
            tm.conv2d, tm.ones(0, 2, 4, 4, dtype=tm.float64, requires_grad=True), weight)
    _raises(RuntimeError, "Autograd not support dtype: Char", tm.convolution, tm.ones(1, 2, 4, 4, dtype=tm.int8),
            tm.ones(3, 2, 2, 2, dtype=tm.int8), tm.ones(3, requires_grad=True), [1], [0], [1], False, [0], 1)
    # a complex input is convolved as its parts, which autograd records
    assert tm.conv2d(tm.ones(0, 2, 4, 4, dtype=tm.complex64, requires_grad=True), weight).requires_grad


def test_gradients_of_convolutions_of_empty_inputs_are_zeros():
    x = tm.ones(1, 0, 4, 4, dtype=tm.float64, requires_grad=True)
    b = tm.ones(3, dtype=tm.float64, requires_grad=True)
    out = tm.conv2d(x, tm.ones(3, 0, 2, 2, dtype=tm.float64), b)
    grad_x, grad_b = tm.autograd.grad(out, [x, b], tm.ones_like(out))
    assert tuple(grad_x.shape) == (1, 0, 4, 4) and grad_b.tolist() == [0.0, 0.0, 0.0]
    w = tm.ones(3, 2, 2, 2, requires_grad=True)
    out = tm.conv2d(tm.ones(0, 2, 4, 4, dtype=tm.int64), w)
    (grad_w,) = tm.autograd.grad(out, [w], tm.ones_like(out))
    assert grad_w.dtype == tm.float32 and grad_w.abs().sum().item() == 0.0


# -- pooling ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, kind, message", [
    (lambda: F.avg_pool2d(tm.zeros((0, 1, 4, 5), dtype=tm.int8), 2, stride=1, divisor_override=3),
     NotImplementedError, "\"avg_pool2d\" not implemented for 'Char'"),
    (lambda: tm.avg_pool1d(tm.ones(2, 1, 8, dtype=tm.int32), [3], [2], 1), NotImplementedError,
     "\"avg_pool2d\" not implemented for 'Int'"),
    (lambda: tm.adaptive_avg_pool1d(tm.ones(1, 2, 4, dtype=tm.int32), 1), RuntimeError,
     "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Int"),
    (lambda: F.adaptive_avg_pool2d(tm.ones(1, 2, 4, 4, dtype=tm.int64), 1), RuntimeError,
     "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"),
    (lambda: tm._adaptive_avg_pool2d(tm.ones(5, 0, 4), 2), RuntimeError,
     "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[5, 0, 4] with dimension 1 being empty"),
    (lambda: tm._adaptive_max_pool2d(tm.ones(1, 0, 4, 4), 2), RuntimeError,
     "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[1, 0, 4, 4] with dimension 1 being empty"),
    (lambda: tm._adaptive_max_pool2d(tm.ones(0, 5, 4, dtype=tm.int64), 2), NotImplementedError,
     "\"adaptive_max_pool2d\" not implemented for 'Long'"),
    (lambda: tm._max_unpool2d(tm.ones(1, 0, 4, 4), tm.zeros(1, 0, 4, 4, dtype=tm.int64), [8, 8]), RuntimeError,
     "max_unpooling2d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, but got "
     "[1, 0, 4, 4] with dimension 1 being empty."),
    (lambda: tm._max_unpool2d(tm.ones(2, 2), tm.zeros(1, 2, 2, 2, dtype=tm.int32), [3, 3, 3]), RuntimeError,
     "elements in indices should be type int64 but got: Int"),
    (lambda: tm._max_unpool2d(tm.ones(1, 2, 2, 2), tm.zeros(1, 2, 2, 2, dtype=tm.int64), [3, 3, 3]), RuntimeError,
     "There should be exactly two elements (height, width) in output_size, but got 3 elements."),
])
def test_pooling_errors_follow_pytorch(call, kind, message):
    _raises(kind, message, call)


@pytest.mark.parametrize("call, dtype, shape", [
    (lambda: tm.adaptive_avg_pool1d(tm.zeros((1, 0, 5), dtype=tm.float16), 2), tm.float16, (1, 0, 2)),
    (lambda: tm.adaptive_avg_pool1d(tm.ones((0, 2, 4), dtype=tm.bool), 2), tm.bool, (0, 2, 2)),
    (lambda: tm.adaptive_avg_pool1d(tm.ones((2, 4), dtype=tm.int32), 0), tm.int32, (2, 0)),
    (lambda: tm._adaptive_avg_pool2d(tm.zeros((1, 0, 4, 4), dtype=tm.bfloat16), 1), tm.bfloat16, (1, 0, 1, 1)),
    (lambda: tm._adaptive_avg_pool2d(tm.ones((0, 5, 4), dtype=tm.complex64), 2), tm.complex64, (0, 2, 2)),
    (lambda: tm._adaptive_max_pool2d(tm.zeros((0, 5, 4), dtype=tm.float64), [2, 3])[1], tm.int64, (0, 2, 3)),
    (lambda: tm._max_unpool2d(tm.ones(0, 4, 4, dtype=tm.int16), tm.zeros(0, 4, 4, dtype=tm.int64), [8, 8]),
     tm.int16, (0, 8, 8)),
    (lambda: tm._max_unpool2d(tm.ones(1, 2, 2, 2, dtype=tm.int32), tm.zeros(1, 2, 2, 2, dtype=tm.int64), [0, 3]),
     tm.int32, (1, 2, 0, 3)),
])
def test_pooling_of_empty_inputs_and_outputs_computes(call, dtype, shape):
    result = call()
    assert result.dtype == dtype and tuple(result.shape) == shape


def test_adaptive_average_of_one_is_a_mean():
    assert tm.adaptive_avg_pool1d(tm.zeros((1, 2, 0)), 1).isnan().all().item()
    result = tm.adaptive_avg_pool1d(tm.tensor([[1 + 2j, 3 + 0j]]), 1)
    assert result.tolist() == [[2 + 1j]]


def test_pooling_sums_windows_in_pytorch_s_order():
    # row by row: 1e30 + 0.75 - 1e30 loses the 0.75, and the next row's 0.5 stays
    x = tm.tensor([[[1e30, 0.75], [-1e30, 0.5]]], dtype=tm.float64)
    assert F.avg_pool2d(x, 2).item() == 0.125
    assert tm._adaptive_avg_pool2d(x, 1).item() == 0.125
    # int64 sums wrap, then divide towards zero
    x = tm.tensor([[0, -2**63, 7], [1, 2**63 - 1, 8]], dtype=tm.int64)
    assert tm.avg_pool1d(x, 2, 1).tolist() == [[-2**62, -4611686018427387900], [-2**62, -4611686018427387900]]


def test_adaptive_average_pooling_autograd_follows_pytorch():
    _raises(RuntimeError, "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for non-batch "
                          "dimensions, but grad_output has sizes [1, 0, 1, 2] with dimension 1 being empty",
            lambda: tm.adaptive_avg_pool1d(tm.zeros((1, 0, 5), requires_grad=True), 2).sum().backward())
    _raises(RuntimeError, "_adaptive_avg_pool2d does not support automatic differentiation for outputs with complex "
                          "dtype.", tm._adaptive_avg_pool2d, tm.zeros((0, 2, 5, 7), dtype=tm.complex128,
                                                                      requires_grad=True), 3)
    x = tm.zeros((0, 2, 2), dtype=tm.float64, requires_grad=True)
    (grad,) = tm.autograd.grad(tm._max_unpool2d(x, tm.zeros((0, 2, 2), dtype=tm.int64), [4, 4]).sum(), x)
    assert tuple(grad.shape) == (0, 2, 2)


# -- activations, products -------------------------------------------------------------------------

@pytest.mark.parametrize("call, kind, message", [
    (lambda: tm._hardtanh(tm.tensor([[1, 1, 1], [0, 2, 0]], dtype=tm.uint8)), RuntimeError,
     "cannot do hardtanh on an unsigned type with negative limits"),
    (lambda: tm._hardtanh(tm.tensor([True])), RuntimeError, "Bool inputs not supported for hardtanh"),
    (lambda: tm._hardtanh(tm.tensor([1j])), NotImplementedError, "clamp is not supported for complex types"),
    (lambda: tm.bmm(tm.ones(1, 2, 2, dtype=tm.bool), tm.ones(1, 2, 3, dtype=tm.float16)), NotImplementedError,
     "\"bmm\" not implemented for 'Bool'"),
    (lambda: tm.bmm(tm.ones(1, 2, 2), tm.ones(1, 2, 3, dtype=tm.bool)), RuntimeError,
     "expected scalar type Float but found Bool"),
    (lambda: tm.einsum("ij,jk", tm.ones(2, 3, dtype=tm.bool), tm.ones(3, 4)), NotImplementedError,
     "\"bmm\" not implemented for 'Bool'"),
    (lambda: tm.bmm(tm.zeros((0, 2, 3), dtype=tm.float64, requires_grad=True), tm.zeros((0, 3, 1), dtype=tm.int64)),
     RuntimeError, "Autograd not support dtype: Long"),
    (lambda: tm.einsum("ij,jk->ik", tm.ones(2, 3, requires_grad=True), tm.zeros((3, 0), dtype=tm.int8)),
     RuntimeError, "Autograd not support dtype: Char"),
])
def test_activation_and_product_errors_follow_pytorch(call, kind, message):
    _raises(kind, message, call)


def test_hardtanh_of_integers_clamps_to_truncated_limits():
    assert tm._hardtanh(tm.tensor([0, 1, 3], dtype=tm.uint8), 0.5, 2.5).tolist() == [0, 1, 2]


@pytest.mark.parametrize("call, dtype, shape", [
    # a bmm with no result or nothing to add up skips its kernel: the second operand's dtype
    (lambda: tm.bmm(tm.ones(2, 2, 3, dtype=tm.float16), tm.zeros((2, 3, 0))), tm.float32, (2, 2, 0)),
    (lambda: tm.bmm(tm.ones(2, 2, 0, dtype=tm.bool), tm.ones(2, 0, 4, dtype=tm.int32)), tm.int32, (2, 2, 4)),
    (lambda: tm.einsum("ij,jk", tm.ones(0, 3, dtype=tm.float64), tm.ones(3, 4, dtype=tm.bool)), tm.bool, (0, 4)),
    # ... of the pair PyTorch orders so that the product lies in the output's order
    (lambda: tm.einsum(tm.zeros((0, 3), dtype=tm.bool), [0, 1], tm.ones(3, 4, dtype=tm.int16), [1, 2], [2, 0]),
     tm.bool, (4, 0)),
    (lambda: tm.einsum("ij,jk->ik", tm.zeros((2, 0), dtype=tm.bool), tm.ones(0, 4, dtype=tm.int16)), tm.int16,
     (2, 4)),
])
def test_empty_products_take_the_second_operand_s_dtype(call, dtype, shape):
    result = call()
    assert result.dtype == dtype and tuple(result.shape) == shape and not result.any().item()


def test_hardtanh_and_hardswish_pass_the_gradient_at_nan():
    x = tm.tensor([-4.0, -3.0, -1.0, 3.0, 4.0, float("nan")], requires_grad=True)
    F.hardswish(x).sum().backward()
    assert [round(g, 4) for g in x.grad.tolist()] == [0.0, 0.0, 0.1667, 1.0, 1.0, 1.0]
    x = tm.tensor([-2.0, -1.0, 0.0, 1.0, 2.0, float("nan")], requires_grad=True)
    F.hardtanh(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
