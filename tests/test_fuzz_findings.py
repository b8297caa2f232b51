"""Differences from PyTorch that the differential fuzzer (tests/differential.py) found, each pinned
with PyTorch's own values, types and messages (as torch 2.13 gives them), so that these run
without torch installed too."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

NAN, INF = float("nan"), float("inf")


def _same(values, expected):
    assert len(values) == len(expected)
    for v, e in zip(values, expected):
        assert (math.isnan(v) and math.isnan(e)) or v == e, (values, expected)


@pytest.mark.parametrize("function, input_grad, other_grad", [
    (tm.maximum, [1.0, 0.0, 0.5, 1.0, INF], [1.0, 1.0, 0.5, 1.0, INF]),
    (tm.minimum, [1.0, 1.0, 0.5, 1.0, INF], [1.0, 0.0, 0.5, 1.0, INF]),
    (tm.max, [1.0, 0.0, 0.5, 1.0, INF], [1.0, 1.0, 0.5, 1.0, INF]),
    (tm.min, [1.0, 1.0, 0.5, 1.0, INF], [1.0, 0.0, 0.5, 1.0, INF]),
])
def test_elementwise_extremes_pass_the_gradient_to_both_sides_of_a_nan(function, input_grad, other_grad):
    # PyTorch zeroes only the side that lost for sure: a NaN compares false both ways. Masks, not
    # products, so an infinite gradient stays infinite (0 * inf would be NaN).
    a = tm.tensor([1.37, -2.3, 2.0, NAN, INF], dtype=tm.float64, requires_grad=True)
    b = tm.tensor([NAN, 3.6, 2.0, 1.0, INF], dtype=tm.float64, requires_grad=True)
    function(a, b).backward(tm.tensor([1.0, 1, 1, 1, INF], dtype=tm.float64))
    _same(a.grad.tolist(), input_grad)
    _same(b.grad.tolist(), other_grad)


def test_gcd_and_lcm_follow_pytorch_at_the_int64_edges():
    low, high = -2**63, 2**63 - 1
    assert tm.gcd(tm.tensor([low, low, 0, 6, -4]), tm.tensor([0, low, low, low, 6])).tolist() == [low, low, low, -2, 2]
    assert tm.lcm(tm.tensor([low, 3, -5, 2, 127]), tm.tensor([2, high, high, high, 3])).tolist() == \
        [low, high - 2, high - 4, 2, 381]
    assert tm.lcm(tm.tensor([100, -128], dtype=tm.int8), tm.tensor([3, 3], dtype=tm.int8)).tolist() == [44, -128]
    # narrower types multiply in C's int, then wrap: |127 * 2| = 254 is -2 as int8
    assert tm.lcm(tm.tensor([[127], [2]], dtype=tm.int8), tm.tensor([-3, 2, 6], dtype=tm.int8)).tolist() == \
        [[125, -2, -6], [6, 2, 6]]
    assert tm.lcm(tm.tensor([[-4, 0, 6]]), tm.tensor([6, 5, -9])).tolist() == [[12, 0, 18]]


@pytest.mark.parametrize("call, name", [
    (lambda x: tm.floor_divide(x, 2), "floor_divide"),
    (lambda x: x // 2, "floor_divide"),
    (lambda x: tm.remainder(5, x), "remainder"),
    (lambda x: tm.bernoulli(x.detach().clamp(0, 1).requires_grad_(), 0.5), "bernoulli"),
    (lambda x: tm.bincount(tm.tensor([0, 1, 1]), x), "bincount"),
])
def test_ops_without_a_derivative_raise_in_backward_as_pytorch(call, name):
    # The result requires grad (it is not silently a constant); backward says there is no derivative.
    x = tm.tensor([0.25, 0.5, 0.75], requires_grad=True)
    result = call(x)
    assert result.requires_grad
    with pytest.raises(RuntimeError, match=rf"^derivative for aten::{name} is not implemented$"):
        result.sum().backward()


def test_bernoulli_without_p_has_a_zero_gradient_and_remainder_of_tensors_keeps_its_own():
    x = tm.tensor([0.25, 0.5], requires_grad=True)
    tm.bernoulli(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    y = tm.tensor([7.0, -7.0], requires_grad=True)
    z = tm.tensor([2.0, 2.0], requires_grad=True)
    (y % z).sum().backward()
    assert y.grad.tolist() == [1.0, 1.0] and z.grad.tolist() == [-3.0, 4.0]
    (y % z).sum().backward(create_graph=True)  # the formula's floor division is differentiable (zero)


def test_softplus_gradient_is_nan_at_nan():
    x = tm.tensor([NAN, 25.0, 1.0], requires_grad=True)
    F.softplus(x, beta=2, threshold=10).sum().backward()
    _same([round(v, 4) for v in x.grad.tolist()], [NAN, 1.0, 0.8808])


@pytest.mark.parametrize("dtype", [tm.float32, tm.float64, tm.bfloat16])
def test_power_minus_a_half_is_rsqrt(dtype):
    x = tm.tensor([-INF, -0.0, 0.0, INF, -2.0, 4.0], dtype=dtype, requires_grad=True)
    y = x ** -0.5
    _same(y.tolist(), [NAN, -INF, INF, 0.0, NAN, 0.5])
    z = tm.tensor([-INF, -0.0, 0.0, INF], dtype=dtype, requires_grad=True)
    (z ** 0.5).sum().backward()
    _same(z.grad.tolist(), [NAN, -INF, INF, 0.0])
    # float16 keeps NumPy's pow, as PyTorch's half kernel does
    assert tm.tensor([-0.0], dtype=tm.float16).pow(-0.5).tolist() == [INF]


@pytest.mark.parametrize("input_shape, target_shape, message", [
    ((2, 0), (0,), "output with shape [0] doesn't match the broadcast shape [2, 0]"),
    ((2, 3), (2, 0), "The size of tensor a (0) must match the size of tensor b (3) at non-singleton dimension 1"),
    ((2, 3), (3,), "output with shape [3] doesn't match the broadcast shape [2, 3]"),
])
def test_binary_cross_entropy_with_logits_checks_shapes_as_pytorch(input_shape, target_shape, message):
    with pytest.raises(RuntimeError) as caught:
        tm._binary_cross_entropy_with_logits(tm.zeros(input_shape), tm.zeros(target_shape), reduction="none")
    assert str(caught.value) == message
    assert tm._binary_cross_entropy_with_logits(tm.zeros(3), tm.zeros(2, 3), reduction="none").shape == (2, 3)


def test_binary_cross_entropy_with_logits_weights_may_not_grow_the_result():
    x, t = tm.zeros(2, 3), tm.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\)"):
        F.binary_cross_entropy_with_logits(x, t, tm.ones(4))
    with pytest.raises(RuntimeError, match=r"output with shape \[2, 3\] doesn't match the broadcast shape \[2, 2, 3\]"):
        F.binary_cross_entropy_with_logits(x, t, pos_weight=tm.ones(2, 1, 3))
    loss = tm._binary_cross_entropy_with_logits(x, tm.ones(2, 3, dtype=tm.complex64), reduction="none")
    assert loss.dtype is tm.complex64 and round(loss[0, 0].real.item(), 4) == 0.6931


@pytest.mark.parametrize("shape, weight, bias, message", [
    ([], None, None, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
                     "but got normalized_shape = []"),
    ([4], (3,), None, "Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and "
                      "normalized_shape = [4]"),
    ([4], None, (), "Expected bias to be of same shape as normalized_shape, but got bias of shape [] and "
                    "normalized_shape = [4]"),
    ([3], (2,), None, "Expected weight to be of same shape as normalized_shape, but got weight of shape [2] and "
                      "normalized_shape = [3]"),
    ([2], None, None, "Given normalized_shape=[2], expected input with shape [*, 2], but got input of size[2, 3, 4]"),
])
def test_layer_norm_checks_its_parameters_in_pytorchs_order(shape, weight, bias, message):
    for device in ("cpu", "meta"):  # the meta rule checks alike
        w = None if weight is None else tm.ones(weight, device=device)
        b = None if bias is None else tm.ones(bias, device=device)
        x = tm.ones(2, 3, 4, device=device)
        for function, extra in ((F.layer_norm, ()), (tm._native_layer_norm, (1e-5,))):
            with pytest.raises(RuntimeError) as caught:
                function(x, shape, w, b, *extra)
            assert str(caught.value) == message


@pytest.mark.parametrize("input_dtype, weight_dtype, bias_dtype, message", [
    (tm.float32, tm.float32, tm.float64, "expected scalar type Float but found Double"),
    (tm.float32, tm.float64, tm.float32, "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    (tm.bfloat16, tm.float32, tm.bfloat16, "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    (tm.bfloat16, tm.bfloat16, tm.float32, "expected scalar type BFloat16 but found Float"),
    (tm.float64, tm.float32, tm.float32, "mixed dtype (CPU): all inputs must share same datatype."),
    (tm.float32, tm.int64, tm.int64, "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    (tm.bfloat16, tm.float32, tm.float32, None),
])
def test_normalisation_ops_check_parameter_dtypes_as_pytorch(input_dtype, weight_dtype, bias_dtype, message):
    # The ops themselves check (PyTorch's native_* ops do), so the private ops and the meta rules agree.
    x = tm.ones(4, 3, 2, dtype=input_dtype)
    calls = {
        "layer": lambda w, b: tm._native_layer_norm(tm.ones(3, 4, dtype=input_dtype), [4], w, b, 1e-5),
        "group": lambda w, b: tm._native_group_norm(x, w, b, 4, 3, 2, 1, 1e-5),
        "batch": lambda w, b: tm._native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
    }
    for name, call in calls.items():
        size = 4 if name == "layer" else 3
        weight, bias = tm.ones(size, dtype=weight_dtype), tm.ones(size, dtype=bias_dtype)
        if message is None:
            assert call(weight, bias).dtype is input_dtype
            continue
        with pytest.raises(RuntimeError) as caught:
            call(weight, bias)
        assert str(caught.value) == message, name


_BAG_W, _BAG_I, _BAG_O = (5, 3), [1, 2, 0, 2, 2, 4], [0]


@pytest.mark.parametrize("weight, indices, offsets, mode, samples, message", [
    ((2, 4, 2), [], [], 0, None, "weight has to be a 2D Tensor, but got Tensor of dimension 3"),
    (_BAG_W, _BAG_I, 0, 0, None, "offsets has to be a 1D Tensor, but got Tensor of dimension 0"),
    (_BAG_W, _BAG_I, [[0], [0]], 2, None, "offsets has to be a 1D Tensor, but got Tensor of dimension 2"),
    (_BAG_W, [1.0], _BAG_O, 0, None, "Expected tensor for argument #1 'indices' to have one of the following "
     "scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding_bag)"),
    (_BAG_W, _BAG_I, _BAG_O, 3, None, "`mode` must be sum, mean, or max."),
    (_BAG_W, _BAG_I, _BAG_O, 2, (6,), "embedding_bag: per_sample_weights only supported with mode='sum'"),
    (_BAG_W, _BAG_I, _BAG_O, 0, (2, 6), "Expected per_sample_weights.value().dim() == 1 to be true, but got false.  "
     "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"),
    (_BAG_W, _BAG_I, _BAG_O, 0, (5,), "Expected per_sample_weights.value().numel() == indices.numel() to be true, "
     "but got false.  (Could this error message be improved?  If so, please report an enhancement request to "
     "PyTorch.)"),
])
def test_embedding_bag_checks_its_arguments_as_pytorch(weight, indices, offsets, mode, samples, message):
    with pytest.raises(RuntimeError) as caught:
        tm._embedding_bag(tm.ones(weight), tm.tensor(indices, dtype=None if indices else tm.int64),
                          tm.tensor(offsets, dtype=tm.int64), False, mode, False,
                          None if samples is None else tm.ones(samples))
    assert str(caught.value) == message


def test_embedding_bag_takes_two_dimensional_indices_in_order():
    weight = tm.ones(5, 3, requires_grad=True)
    result = tm._embedding_bag(weight, tm.tensor([[1, 2, 0], [2, 2, 4]]), tm.tensor([0]))
    assert result.tolist() == [[6.0, 6.0, 6.0]]
    # PyTorch 2.13's backward refuses them (tests/test_fuzz_sweep4.py)
    with pytest.raises(IndexError, match="^index_select\\(\\): Index is supposed to be a vector$"):
        result.sum().backward()


def test_lerp_promotes_with_a_complex_zero_dim_weight_and_refuses_a_complex_number():
    start, end = tm.ones(3), tm.ones(3) * 3
    for weight in (tm.tensor(0.5 + 1j), tm.tensor(0.5 + 1j, dtype=tm.complex128)):
        result = tm.lerp(start, end, weight)
        assert result.dtype is tm.complex64 and result.tolist() == [2 + 2j] * 3
    assert tm.lerp(start.double(), end.double(), tm.tensor(0.5 + 1j)).dtype is tm.complex128
    for dtype, name in ((tm.float32, "float"), (tm.float16, "float"), (tm.float64, "double")):
        with pytest.raises(RuntimeError, match=f"^value cannot be converted to type {name} without overflow$"):
            tm.lerp(start.to(dtype), end.to(dtype), 0.5 + 1j)


def test_embedding_backward_with_rows_of_width_zero():
    weight = tm.zeros(5, 0, requires_grad=True)
    F.embedding(tm.tensor([[0, 3], [1, 4]]), weight).sum().backward()
    assert weight.grad.shape == (5, 0)


@pytest.mark.parametrize("input_shape, input_dtype, weight_shape, bias, expected", [
    # a 0-dim bias is added in place into the product: any dtype that casts into it
    ((3,), tm.float32, (2, 3), lambda: tm.tensor(-2, dtype=tm.int32), ((2,), tm.float32)),
    ((3,), tm.float32, (2, 3), lambda: tm.tensor(1 + 1j),
     "result type ComplexFloat can't be cast to the desired output type Float"),
    ((3,), tm.float64, (2, 3), None, "expected m1 and m2 to have the same dtype, but got: double != float"),
    ((3,), tm.float64, (3,), None, "dot : expected both vectors to have same dtype, but found Double and Float"),
    ((2, 3), tm.float64, (3,), None, "addmv input tensors must have the same dtype, but got Float, Double, and Float"),
    ((2, 3), tm.float32, (3,), None, ((2,), tm.float32)),
    ((2, 3), tm.float32, (3,), lambda: tm.ones(2), "mat2 must be a matrix, got 1-D tensor"),
    # a bias that is 1-D once squeezed is folded into addmm: expanded to (rows, out_features)
    ((3,), tm.float32, (2, 3), lambda: tm.ones(2, dtype=tm.float64),
     "self and mat2 must have the same dtype, but got Double and Float"),
    ((2, 3), tm.float32, (2, 3), lambda: tm.ones(3), "The expanded size of the tensor (2) must match the existing "
     "size (3) at non-singleton dimension 1.  Target sizes: [2, 2].  Tensor sizes: [3]"),
    ((2, 2, 3), tm.float32, (4, 3), lambda: tm.ones(2, 1), "The expanded size of the tensor (4) must match the "
     "existing size (2) at non-singleton dimension 0.  Target sizes: [4, 4].  Tensor sizes: [2, 1]"),
    ((2, 2, 3), tm.float32, (4, 3), lambda: tm.ones(4, 3)[:2, :1], ((2, 2, 4), tm.float32)),  # not contiguous
    ((2, 2, 2, 3), tm.float32, (4, 3), lambda: tm.ones(2, 4), ((2, 2, 2, 4), tm.float32)),
    ((2, 2, 2, 3), tm.float32, (4, 3), lambda: tm.ones(1, 2, 1), "expand(torch.FloatTensor{[1, 2, 1]}, size=[8, 4]): "
     "the number of sizes provided (2) must be greater or equal to the number of dimensions in the tensor (3)"),
    ((2, 2, 2, 3), tm.float64, (2, 4), None, "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x2)"),
])
def test_linear_checks_as_the_ops_pytorchs_composite_runs(input_shape, input_dtype, weight_shape, bias, expected):
    for device in ("cpu", "meta"):
        x, w = tm.ones(input_shape, dtype=input_dtype, device=device), tm.ones(weight_shape, device=device)
        b = None if bias is None else bias()
        if b is not None and not b.is_contiguous() and device == "meta":
            continue  # .to("meta") makes it contiguous (as in PyTorch)
        b = None if b is None else b.to(device)
        if isinstance(expected, str):
            with pytest.raises(RuntimeError) as caught:
                F.linear(x, w, b)
            assert str(caught.value) == expected
        else:
            result = F.linear(x, w, b)
            assert (tuple(result.shape), result.dtype) == expected


def test_poisson_of_a_zero_dim_tensor():
    result = tm.poisson(tm.tensor(0.0, dtype=tm.float64))
    assert result.shape == () and result.dtype is tm.float64 and result.item() == 0.0


def test_normalisation_inputs_of_the_wrong_rank():
    with pytest.raises(RuntimeError, match="Expected X.numel\\(\\) == N \\* C \\* HxW to be true"):
        tm._native_group_norm(tm.zeros(0, dtype=tm.float64), None, None, 2, 6, 4, 3, 1e-3)
    with pytest.raises(RuntimeError, match="^Expected number of channels in input to be divisible by num_groups, "
                                           "but got input of shape \\[2, 6, 4\\] and num_groups=4$"):
        tm._native_group_norm(tm.ones(2, 6, 4), None, None, 2, 6, 4, 4, 1e-3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        tm._native_batch_norm(tm.ones(3), None, None, None, None, True, 0.1, 1e-3)
    with pytest.raises(RuntimeError, match="batch and a channel dimension, got a 0-dim tensor"):
        tm._native_batch_norm(tm.tensor(1.5), None, None, None, None, True, 0.1, 1e-3)


def test_polygamma_of_a_negative_zero_dim_tensor():
    # the reflection formula wrote into a NumPy scalar for a 0-dim input
    assert round(tm.special.polygamma(1, tm.tensor(-2.27309965668141, dtype=tm.float64)).item(), 6) == 16.888189
    x = tm.tensor(-2.201186994690339, dtype=tm.float64, requires_grad=True)
    tm.digamma(x).backward()
    assert round(x.grad.item(), 5) == round(tm.special.polygamma(1, x.detach()).item(), 5)


@pytest.mark.parametrize("function, values, grad, expected", [
    (tm.max, [1.9, 0.5, NAN, 1.6, NAN], 1.5, [0.0, 0.0, 0.75, 0.0, 0.75]),  # the NaNs share it
    (tm.max, [1.0, 3.0, 3.0, INF], INF, [0.0, 0.0, 0.0, INF]),  # exactly zero elsewhere, even for inf
    (tm.min, [1.0, 3.0, 3.0, 0.0], 1.0, [0.0, 0.0, 0.0, 1.0]),
    (tm.median, [1.0, 3.0, NAN, 2.0], 1.0, [0.0, 0.0, 1.0, 0.0]),
])
def test_full_extremum_gradients_go_to_the_elements_equal_to_the_result(function, values, grad, expected):
    x = tm.tensor(values, dtype=tm.float64, requires_grad=True)
    function(x).backward(tm.tensor(grad, dtype=tm.float64))
    assert x.grad.tolist() == expected


def test_kron_promotes_a_zero_dim_operand_as_a_dimensioned_one():
    # PyTorch's kron reshapes its operands before multiplying
    assert tm.kron(tm.tensor(1 + 1j, dtype=tm.complex128), tm.zeros(2, dtype=tm.complex64)).dtype is tm.complex128
    assert tm.kron(tm.tensor(2.0, dtype=tm.float64), tm.ones(2)).dtype is tm.float64
    assert tm.kron(tm.tensor(2), tm.ones(2, dtype=tm.float16)).dtype is tm.float16


def test_quantile_checks_the_dim_before_q_and_refuses_nan_q():
    x = tm.randn(2, 2, 5, dtype=tm.float64)
    for function, name in ((tm.quantile, "quantile"), (tm.nanquantile, "nanquantile")):
        with pytest.raises(RuntimeError, match=f"^{name}\\(\\) q values must be in the range \\[0, 1\\]$"):
            function(x, tm.tensor(NAN, dtype=tm.float64), 1)
        with pytest.raises(IndexError, match="expected to be in range of \\[-3, 2\\], but got 5"):
            function(x, tm.tensor([0.5, 2.0], dtype=tm.float64), 5)


def test_stack_checks_the_dim_before_the_sizes():
    with pytest.raises(IndexError, match="expected to be in range of \\[-1, 0\\], but got 1"):
        tm.stack([tm.tensor(0, dtype=tm.uint8), tm.tensor([True, False, True])], dim=1)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        tm.stack([tm.ones(2), tm.ones(3)], dim=1)


def test_bernoulli_of_complex_names_pytorchs_kernels():
    with pytest.raises(NotImplementedError, match="\"bernoulli_tensor_cpu_self_\" not implemented for 'ComplexFloat'"):
        tm.bernoulli(tm.ones(2, dtype=tm.complex64))
    with pytest.raises(NotImplementedError, match="\"bernoulli_scalar_cpu_\" not implemented for 'ComplexFloat'"):
        tm.bernoulli(tm.ones(2, dtype=tm.complex64), 0.5)


@pytest.mark.parametrize("function, name", [
    (lambda x: tm.amin(x, -1), "amin"), (lambda x: tm.amax(x, 1), "amax"),
    (lambda x: tm.softmax(x, 1), "_softmax"), (lambda x: tm.log_softmax(x, 1), "_log_softmax"),
])
def test_complex_results_that_pytorch_cannot_differentiate_refuse_autograd(function, name):
    x = tm.zeros(0, 3, dtype=tm.complex128, requires_grad=True)  # empty: the kernels' dtype checks pass
    with pytest.raises(RuntimeError, match=f"^{name} does not support automatic differentiation for outputs with "
                                           "complex dtype.$"):
        function(x)


def test_softmax_of_complex_data_into_a_real_dtype_keeps_autograd():
    x = tm.ones(2, 3, dtype=tm.complex64, requires_grad=True)
    assert tm.softmax(x, 1, dtype=tm.float32).requires_grad  # the result is real: differentiable
    with pytest.raises(NotImplementedError, match="softmax_lastdim_kernel_impl"):
        tm.softmax(x, 1)


@pytest.mark.parametrize("a, b", [((0, 3), (2, 3, 2)), ((2, 3, 0), (0, 4)), ((2, 3, 4), (4, 0)), ((3,), (2, 3, 0))])
def test_matmul_gradients_with_a_zero_size_fold(a, b):
    # The folded batch was reshaped to (-1, 0): ambiguous, so backward raised; PyTorch returns zeros
    x, y = tm.ones(a, requires_grad=True), tm.ones(b, requires_grad=True)
    gx, gy = tm.autograd.grad(tm.matmul(x, y).sum(), [x, y])
    assert (gx.shape, gy.shape) == (x.shape, y.shape)
    assert gx.abs().sum().item() == 0 and gy.abs().sum().item() == 0


@pytest.mark.parametrize("function, shapes, error, message", [
    (tm.baddbmm, [(2, 2, 3, 5), (2, 2, 3, 4), ()], IndexError, "Dimension specified as 2 but tensor has no dimensions"),
    (tm.addbmm, [(2, 3, 5), (), (2, 4, 5)], IndexError, "Dimension specified as 1 but tensor has no dimensions"),
    (tm.baddbmm, [(2, 3, 5), (3,), (5,)], IndexError,
     r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"),
    (tm.baddbmm, [(2, 3, 7), (2, 3, 4), (2, 4, 5, 6)], RuntimeError,
     r"The expanded size of the tensor \(5\) must match the existing size \(7\) at non-singleton dimension 2"),
    (tm.addbmm, [(2, 3, 5), (2, 3, 4, 1), (2, 4, 5)], RuntimeError, r"expand\(torch.FloatTensor\{\[2, 3, 5\]\}"),
    (tm.baddbmm, [(2, 3, 5), (2, 3, 4, 1), (2, 4, 5)], RuntimeError, "batch1 must be a 3D tensor"),
])
def test_batched_products_check_in_pytorchs_order(function, shapes, error, message):
    # PyTorch reads the output's sizes, then expands the input to it, then checks the ranks
    with pytest.raises(error, match=message):
        function(*(tm.ones(s) for s in shapes))


def test_flash_attention_backward_of_an_empty_query_is_zero_in_pytorchs_layout():
    q = tm.zeros((0, 2, 3, 4), dtype=tm.bfloat16, requires_grad=True)
    k = tm.ones((2, 2, 3, 4), dtype=tm.bfloat16, requires_grad=True)
    out, _ = tm.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, k)
    gq, gk = tm.autograd.grad(out.sum(), [q, k])
    assert gq.shape == (0, 2, 3, 4) and gk.shape == (2, 2, 3, 4) and gk.stride() == (24, 4, 8, 1)
    assert gk.abs().sum().item() == 0


def test_nll_loss2d_forward_checks_the_target_dtype_before_the_sizes():
    # ATen's CPU kernel: the ranks, then the target's dtype, then the batch sizes
    with pytest.raises(RuntimeError, match="^expected target dtype to be Long or Byte, but got Bool$"):
        tm.ops.aten.nll_loss2d_forward(tm.zeros(2, 3, 1, 4), tm.zeros((0, 1, 4), dtype=tm.bool), None, 1, -100)
