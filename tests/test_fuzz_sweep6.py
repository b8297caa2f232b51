"""Differences from PyTorch found by the differential fuzzer (issue 22, sixth sweep), each pinned
with PyTorch 2.13's own values, types and messages, so that these run without torch installed
too."""

from __future__ import annotations

import pytest

import tensormodes as tm

aten = tm.ops.aten


# -- conv_transpose3d: the slow 3-D kernel reads the bias as the input's type ---------------------

@pytest.mark.parametrize("bias_dtype, name", [(tm.float64, "Double"), (tm.float16, "Half"), (tm.int64, "Long")])
def test_conv_transpose3d_refuses_a_bias_of_another_dtype(bias_dtype, name):
    x, w = tm.ones(1, 2, 3, 3, 3), tm.ones(2, 2, 2, 2, 2)
    with pytest.raises(RuntimeError, match=f"^expected scalar type Float but found {name}$"):
        tm.conv_transpose3d(x, w, tm.ones(2, dtype=bias_dtype))
    with pytest.raises(RuntimeError, match=f"^expected scalar type Float but found {name}$"):
        tm.convolution(x, w, tm.ones(2, dtype=bias_dtype), [1] * 3, [0] * 3, [1] * 3, True, [0] * 3, 1)
    # the 1-D and 2-D transposed kernels add it cast, as PyTorch's; an empty batch never reads it
    planar = tm.conv_transpose2d(tm.ones(1, 2, 3, 3), tm.ones(2, 2, 2, 2), tm.ones(2, dtype=bias_dtype))
    assert planar.dtype == tm.float32
    assert tm.conv_transpose3d(tm.ones(0, 2, 3, 3, 3), w, tm.ones(2, dtype=bias_dtype)).shape == (0, 2, 4, 4, 4)
    assert tm.conv_transpose3d(x, w, tm.ones(2))[0, 0, 0, 0].tolist() == [3.0, 5.0, 5.0, 3.0]


# -- ldexp: a 0-dim floating exponent keeps its dtype in the promotion ----------------------------

def test_ldexp_with_a_0dim_floating_exponent_promotes_as_a_tensor():
    result = tm.ldexp(tm.tensor([1, 2]), tm.tensor(3.0, dtype=tm.bfloat16))
    assert result.dtype == tm.bfloat16 and result.tolist() == [8.0, 16.0]
    assert tm.ldexp(tm.tensor([1, 2]), tm.tensor(3.0, dtype=tm.float64)).dtype == tm.float64
    assert tm.ldexp(tm.tensor(2), tm.tensor(3.0, dtype=tm.float16)).dtype == tm.float16
    # a dimensioned floating input keeps its dtype (the 0-dim exponent is of the same category)
    assert tm.ldexp(tm.tensor([1.0], dtype=tm.float16), tm.tensor(3.0, dtype=tm.float64)).dtype == tm.float16


# -- _embedding_bag: 2-D offsets beside 2-D indices -----------------------------------------------

def test_embedding_bag_refuses_2d_offsets():
    weight, indices, offsets = tm.ones(5, 3), tm.tensor([[0, 1], [2, 3]]), tm.tensor([[0, 2]])
    bag = aten._embedding_bag.default
    # PyTorch's sums of float32/half rows take its fast path, which fails on them later (a RuntimeError)
    with pytest.raises(RuntimeError, match="^offsets has to be a 1D Tensor, but got Tensor of dimension 2$"):
        bag(weight, indices, offsets)
    # means and maxima (and float64 sums) index_add_ with them first
    message = r"^index_add_\(\): Index is supposed to be a vector, but got dim: 2 with type: Long and size: \[1, 2\]$"
    for mode in (1, 2):
        with pytest.raises(IndexError, match=message):
            bag(weight, indices, offsets, mode=mode)
    with pytest.raises(IndexError, match=message):
        bag(weight.double(), indices, offsets)
    # 1-D offsets beside 2-D indices still cut the flattened indices into bags
    assert bag(weight, indices, tm.tensor([0, 2]))[0].tolist() == [[2.0] * 3, [2.0] * 3]


# -- _multilabel_margin_loss: the target's range is checked first, in any dtype -------------------

def test_multilabel_margin_loss_checks_the_target_range_before_its_dtype():
    loss = tm.nn.functional.multilabel_margin_loss
    with pytest.raises(NotImplementedError, match="^\"min_all\" not implemented for 'ComplexFloat'$"):
        loss(tm.ones(2, 3), tm.zeros(2, 3, dtype=tm.complex64))
    with pytest.raises(NotImplementedError, match="^\"min_all\" not implemented for 'ComplexFloat'$"):
        loss(tm.ones(2, 3, dtype=tm.int32), tm.zeros(2, 3, dtype=tm.complex64))  # before the input's dtype
    with pytest.raises(RuntimeError, match="^argument #2 'target' is out of range$"):
        loss(tm.ones(2, 3), tm.full((2, 3), 5, dtype=tm.int32))
    with pytest.raises(RuntimeError, match="^argument #2 'target' is out of range$"):
        loss(tm.ones(2, 3), tm.full((2, 3), -2.0))
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int64_t without overflow$"):
        loss(tm.ones(2, 3), tm.full((2, 3), float("nan")))
    # in range once truncated: the dtype speaks
    with pytest.raises(RuntimeError, match="^expected scalar type Long but found Float$"):
        loss(tm.ones(2, 3), tm.full((2, 3), 2.9))
    assert loss(tm.tensor([[0.1, 0.2, 0.4, 0.8]]), tm.tensor([[3, 0, -1, 1]])).item() == pytest.approx(0.85)


# -- aten.index: only 0-dim integers, and an empty result --------------------------------------------

def test_index_with_0dim_integers_checks_no_bounds_for_an_empty_result():
    result = aten.index.Tensor(tm.zeros(2, 0), [tm.tensor(2147483647, dtype=tm.int32)])
    assert result.shape == (0,) and result.dtype == tm.float32
    with pytest.raises(IndexError, match="^index is out of bounds for dimension with size 0$"):
        aten.index.Tensor(tm.zeros(2, 0), [None, tm.tensor(5)])
    with pytest.raises(IndexError, match="^index is out of bounds for dimension with size 0$"):
        aten.index.Tensor(tm.zeros(2, 0), [tm.tensor(5), tm.tensor(5)])
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 1 with size 3$"):
        aten.index.Tensor(tm.zeros(2, 3), [tm.tensor(1), tm.tensor(3)])
    assert aten.index.Tensor(tm.arange(6.).reshape(2, 3), [tm.tensor(1), tm.tensor(2)]).item() == 5.0
    m = tm.zeros(2, 0, device="meta")
    assert aten.index.Tensor(m, [tm.tensor(9, device="meta")]).shape == (0,)


# -- cross_entropy: a complex input that requires grad ---------------------------------------------

def test_cross_entropy_of_an_empty_complex_input_refuses_autograd():
    x = tm.zeros(0, dtype=tm.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match="^_log_softmax does not support automatic differentiation for outputs "
                                           "with complex dtype.$"):
        tm.nn.functional.cross_entropy(x, tm.zeros(0, dtype=tm.float64), reduction="sum")
    # without grad it computes; with elements the kernel refuses complex first
    assert tm.nn.functional.cross_entropy(x.detach(), tm.zeros(0, dtype=tm.float64), reduction="sum").item() == 0
    with pytest.raises(NotImplementedError, match="log_softmax_lastdim_kernel_impl"):
        tm.nn.functional.cross_entropy(tm.zeros(2, 3, dtype=tm.complex128, requires_grad=True), tm.zeros(2).long())


# -- affine_grid_generator: the base grid in theta's dtype -------------------------------------------

def test_affine_grid_generator_builds_an_integer_base_grid_as_pytorch():
    # uint8: linspace from 255 (-1) to 1; without align_corners the product by count - 1 wraps
    identity = tm.tensor([[[1, 0, 0], [0, 1, 0]]], dtype=tm.uint8)
    assert tm.affine_grid_generator(identity, [1, 1, 1, 7], True)[0, 0, :, 0].tolist() == [255, 212, 170, 128, 85,
                                                                                             43, 1]
    assert tm.affine_grid_generator(identity, [1, 1, 1, 7], False)[0, 0, :, 0].tolist() == [35, 35, 36, 0, 36, 0, 0]
    theta = tm.tensor([[[2, 1, 2], [0, 1, 1]]], dtype=tm.uint8)
    assert tm.affine_grid_generator(theta, [1, 1, 1, 3], False).tolist() == [[[[170, 1], [2, 1], [2, 1]]]]
    signed = tm.tensor([[[1, 0, 0], [0, 1, 0]]], dtype=tm.int8)
    assert tm.affine_grid_generator(signed, [1, 1, 1, 4], True)[0, 0, :, 0].tolist() == [-1, 0, 0, 1]


def test_affine_grid_generator_base_grid_errors_come_before_theta_checks():
    # a one-point axis is at::tensor(0) (no half or bool kernel); x is built first
    with pytest.raises(NotImplementedError, match="^\"tensor_cpu\" not implemented for 'BFloat16'$"):
        tm.affine_grid_generator(tm.tensor(1.375, dtype=tm.bfloat16), [1, 1, 1, 3], False)
    with pytest.raises(NotImplementedError, match="^\"tensor_cpu\" not implemented for 'Bool'$"):
        tm.affine_grid_generator(tm.ones(1, 2, 3, dtype=tm.bool), [1, 1, 2, 1], False)
    with pytest.raises(NotImplementedError, match="^\"linspace_cpu\" not implemented for 'Bool'$"):
        tm.affine_grid_generator(tm.ones((), dtype=tm.bool), [1, 1, 2, 2], False)
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], but "
                                         r"got 1\)$"):
        tm.affine_grid_generator(tm.ones((), dtype=tm.float16), [1, 1, 2, 2], False)


# -- addbmm / baddbmm: nothing to multiply returns before the dtype checks ---------------------------

def test_addbmm_without_batches_is_beta_times_input_in_its_dtype():
    result = tm.addbmm(tm.full((3, 5), 3.0), tm.zeros(0, 3, 4), tm.zeros(0, 4, 5, dtype=tm.float16), beta=2)
    assert result.dtype == tm.float32 and result.shape == (3, 5) and result.unique().tolist() == [6.0]
    assert tm.addbmm(tm.full((5,), 3, dtype=tm.int64), tm.zeros(0, 3, 4), tm.zeros(0, 4, 5), beta=0).tolist() \
        == [[0] * 5] * 3
    # the scaling is an in-place multiplication: beta may not lift the input's category
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        tm.addbmm(tm.ones(5, dtype=tm.int64), tm.zeros(0, 3, 4, dtype=tm.int64), tm.zeros(0, 4, 5, dtype=tm.int64),
                  beta=0.5)
    with pytest.raises(RuntimeError, match="^result type Long can't be cast to the desired output type Bool$"):
        tm.addbmm(tm.ones(5, dtype=tm.bool), tm.zeros(0, 3, 4), tm.zeros(0, 4, 5), beta=2)
    assert tm.addbmm(tm.ones(5, dtype=tm.bool), tm.zeros(0, 3, 4), tm.zeros(0, 4, 5), beta=True).all()
    # an empty inner dimension: each batch's addmm_ scales (beta, then 1), after its dtype checks
    with pytest.raises(RuntimeError, match="^result type Long can't be cast to the desired output type Bool$"):
        tm.addbmm(tm.ones(5, dtype=tm.bool), tm.ones(2, 3, 0, dtype=tm.bool), tm.ones(2, 0, 5, dtype=tm.bool), beta=0)
    assert not tm.addbmm(tm.ones(5, dtype=tm.bool), tm.ones(1, 3, 0, dtype=tm.bool), tm.ones(1, 0, 5, dtype=tm.bool),
                         beta=0).any()
    with pytest.raises(RuntimeError, match="^self and mat2 must have the same dtype, but got Float and Half$"):
        tm.addbmm(tm.ones(5), tm.ones(2, 3, 0), tm.ones(2, 0, 5, dtype=tm.float16))


def test_baddbmm_with_nothing_to_multiply_returns_batch2s_dtype():
    # input and batch1 are checked first; an empty output or inner dimension returns before batch2's dtype
    assert tm.baddbmm(tm.ones(5), tm.zeros(2, 0, 4), tm.zeros(2, 4, 5, dtype=tm.float16)).dtype == tm.float16
    result = tm.baddbmm(tm.full((5,), 3.0), tm.zeros(2, 3, 0), tm.zeros(2, 0, 5, dtype=tm.int64), beta=2)
    assert result.dtype == tm.int64 and result.shape == (2, 3, 5) and result.unique().tolist() == [6]
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        tm.baddbmm(tm.ones(5), tm.zeros(2, 3, 0), tm.zeros(2, 0, 5, dtype=tm.int64), beta=0.5)
    with pytest.raises(RuntimeError, match="^Input dtypes must be the same, got: input double, batch1: float, "
                                           "batch2: float$"):
        tm.baddbmm(tm.ones(5, dtype=tm.float64), tm.zeros(0, 3, 4), tm.zeros(0, 4, 5))
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Half$"):
        tm.baddbmm(tm.ones(5), tm.ones(2, 3, 4), tm.ones(2, 4, 5, dtype=tm.float16))
    assert tm.baddbmm(tm.ones(5, dtype=tm.bool), tm.ones(2, 3, 0, dtype=tm.bool), tm.ones(2, 0, 5, dtype=tm.bool),
                      beta=0).shape == (2, 3, 5)


def test_integer_alpha_and_beta_are_checked_against_the_dtype():
    ones = (tm.ones(3, 4, dtype=tm.int8), tm.ones(4, 5, dtype=tm.int8))
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int8_t without overflow$"):
        tm.addmm(tm.ones(5, dtype=tm.int8), *ones, beta=300)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int8_t without overflow$"):
        tm.addmm(tm.ones(5, dtype=tm.int8), *ones, alpha=1j)
    assert tm.addmm(tm.ones(5, dtype=tm.int8), *ones, alpha=2 + 0j)[0, 0].item() == 9
    assert tm.addmm(tm.ones(5, dtype=tm.int8), *ones, beta=-2.5)[0, 0].item() == 2
    with pytest.raises(RuntimeError, match="^value cannot be converted to type float without overflow$"):
        tm.addmm(tm.ones(5, dtype=tm.float16), tm.ones(3, 4, dtype=tm.float16), tm.ones(4, 5, dtype=tm.float16),
                 alpha=1j)


# -- n-dim FFTs: the dims are wrapped and checked unique before they are compared with s ------------

def test_fft_dims_are_checked_before_their_count_against_s():
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], but "
                                         r"got -2\)$"):
        tm.fft.fft2(tm.ones(4), s=(3,))  # the default dims (-2, -1) do not fit a vector
    with pytest.raises(IndexError, match="^Dimension specified as -2 but tensor has no dimensions$"):
        tm.fft.rfft2(tm.ones(()), s=(3,))
    with pytest.raises(RuntimeError, match="^FFT dims must be unique$"):
        tm.fft.fftn(tm.ones(4), s=(3,), dim=(0, 0))
    with pytest.raises(RuntimeError, match="^When given, dim and shape arguments must have the same length$"):
        tm.fft.irfft2(tm.ones(3, 4, dtype=tm.complex64), s=(3,))
    assert tm.fft.fft2(tm.ones(3, 4), s=(2, 2)).shape == (2, 2)


# -- addbmm / baddbmm under autograd: an integer result is refused ---------------------------------

def test_batched_products_with_an_integer_result_refuse_autograd():
    batch = tm.zeros(0, 3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Autograd not support dtype: Int$"):
        tm.addbmm(tm.ones(5, dtype=tm.int32), batch, tm.zeros(0, 4, 5), beta=2)
    with pytest.raises(RuntimeError, match="^Autograd not support dtype: Int$"):
        tm.baddbmm(tm.ones(5), tm.zeros(2, 3, 0, requires_grad=True), tm.zeros(2, 0, 5, dtype=tm.int32))
    assert tm.addbmm(tm.ones(5), batch, tm.zeros(0, 4, 5)).requires_grad


# -- bernoulli: a fixed p records PyTorch's not-implemented node, complex or not ---------------------

def test_bernoulli_with_a_fixed_p_records_for_complex_input():
    x = tm.zeros(0, 2, dtype=tm.complex64, requires_grad=True)
    assert tm.bernoulli(x, 0.5).requires_grad
    with pytest.raises(RuntimeError, match="^bernoulli does not support automatic differentiation for outputs "
                                           "with complex dtype.$"):
        tm.bernoulli(x)
    with pytest.raises(RuntimeError, match="^derivative for aten::bernoulli is not implemented$"):
        tm.bernoulli(tm.ones(3, requires_grad=True), 0.5).sum().backward()


# -- aten.index: every index tensor's dtype is checked, a 0-dim one too ------------------------------

def test_index_refuses_index_tensors_of_other_dtypes():
    with pytest.raises(IndexError, match="^tensors used as indices must be long, int, byte or bool tensors$"):
        aten.index.Tensor(tm.ones(2, 3), [tm.tensor(1, dtype=tm.int8)])
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 2 \(got 3\)$"):
        aten.index.Tensor(tm.ones(2, 3), [tm.tensor(1, dtype=tm.int8)] * 3)
    assert aten.index.Tensor(tm.ones(2, 3), [tm.tensor(1, dtype=tm.int32)]).shape == (3,)
    assert tm.ones(2, 3)[tm.tensor(1, dtype=tm.int8)].shape == (3,)  # Python indexing reads it as a number


# -- seeds 9-12 -------------------------------------------------------------------------------------

def test_log_softmax_of_an_empty_complex_input_refuses_autograd():
    x = tm.zeros(3, 0, dtype=tm.complex64, requires_grad=True)
    with pytest.raises(RuntimeError, match="^_log_softmax does not support automatic differentiation for outputs "
                                           "with complex dtype.$"):
        aten._log_softmax.default(x, 0, False)


def test_ctc_loss_checks_the_concatenated_targets_length():
    log_probs = tm.full((6, 2, 4), 0.25).log()
    with pytest.raises(RuntimeError, match=r"^Expected tensor to have size 5 at dimension 0, but got size 0 for "
                                           r"argument #2 'targets' \(while checking arguments for "
                                           r"ctc_loss_allocate_outputs\)$"):
        tm._ctc_loss(log_probs, tm.zeros(0, dtype=tm.int64), [6, 6], [3, 2], 0)


def test_logdet_of_a_singular_complex_matrix():
    result = tm.logdet(tm.stack([tm.zeros(2, 2, dtype=tm.complex128), tm.eye(2, dtype=tm.complex128) * (1 + 1j)]))
    assert result[0].real.item() == float("-inf") and result[0].imag.isnan().item()
    assert result[1].imag.item() == pytest.approx(1.5707963267948966)


def test_embedding_bag_reads_2d_offsets_bounds_from_the_data():
    # offsets[0] and offsets[-1] are flat elements 0 and len - 1 of the data
    bag = aten._embedding_bag.default
    with pytest.raises(RuntimeError, match="^offsets.-1. can not be greater than input's length 2 but got "
                                           "offsets.-1. of 9$"):
        bag(tm.ones(5, 3), tm.tensor([[0, 1], [2, 3]]), tm.tensor([[0, 9], [0, 0]]), mode=1)
    with pytest.raises(IndexError, match=r"^index_add_\(\): Index is supposed to be a vector"):
        bag(tm.ones(5, 3), tm.tensor([[0, 1], [2, 3]]), tm.tensor([[0, 0], [9, 0]]), mode=1)


def test_histc_of_a_range_too_large_to_widen_counts_in_the_middle_bin():
    # min == max: PyTorch widens by 1, which 1e30 absorbs; its kernel counts the values in bin bins // 2
    assert tm.histc(tm.tensor([1e30, 1e30]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]
    assert tm.histc(tm.tensor([1e17], dtype=tm.float64), bins=3).tolist() == [0.0, 1.0, 0.0]
    assert tm.histc(tm.tensor([3.0]), bins=4).tolist() == [0.0, 0.0, 1.0, 0.0]


def test_nanmean_gradient_is_nan_where_every_element_is_nan():
    nan = float("nan")
    x = tm.tensor([[nan, 1.0], [nan, nan]], requires_grad=True)
    tm.nanmean(x, dim=1).sum().backward()
    assert x.grad[0].tolist() == [0.0, 1.0] and x.grad[1].isnan().all()


def test_bce_with_logits_refuses_complex_weights_for_real_logits():
    # PyTorch multiplies the pos_weight term into the logits' dtype, the weight into the target's copy, in place
    bce = tm.nn.functional.binary_cross_entropy_with_logits
    x, t = tm.ones(2, 3), tm.full((2, 3), 0.5)
    with pytest.raises(RuntimeError, match="^result type ComplexFloat can't be cast to the desired output type "
                                           "Float$"):
        bce(x, t, pos_weight=tm.ones(3, dtype=tm.complex64))
    with pytest.raises(RuntimeError, match="^result type ComplexDouble can't be cast to the desired output type "
                                           "Float$"):
        bce(x, t.double(), pos_weight=tm.ones(3, dtype=tm.complex64))
    with pytest.raises(RuntimeError, match="^result type ComplexFloat can't be cast to the desired output type "
                                           "Float$"):
        bce(x, t, weight=tm.ones(3, dtype=tm.complex64))
    assert bce(x, t.to(tm.complex64), weight=tm.ones(3, dtype=tm.complex64)).dtype == tm.complex64
    assert bce(x, t, pos_weight=tm.ones(3, dtype=tm.float64)).item() == pytest.approx(0.8132616877555847)
