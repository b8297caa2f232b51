"""Differences from PyTorch found by the differential fuzzer (issue 22, fifth sweep), each pinned
with PyTorch 2.13's own values, types and messages, so that these run without torch installed
too."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm

aten = tm.ops.aten


# -- aten.index: every tensor is an advanced index ------------------------------------------------

def test_index_reads_a_0dim_integer_as_an_advanced_index():
    # non-adjacent advanced indices put their broadcast dimensions first; a 0-dim one is one of
    # them (Python indexing would read it as a number and select first: shape (3, 2))
    x = tm.arange(24.).reshape(2, 3, 4)
    result = aten.index.Tensor(x, [tm.tensor(-2), None, tm.tensor([3, 2])])
    assert result.shape == (2, 3)
    assert result.tolist() == [[3.0, 7.0, 11.0], [2.0, 6.0, 10.0]]
    # alone (or beside other 0-dim ones) it removes its dimension
    assert aten.index.Tensor(x, [tm.tensor(1), None, tm.tensor(1)]).tolist() == [13.0, 17.0, 21.0]
    assert aten.index.Tensor(x, [None, tm.tensor(-1)]).shape == (2, 4)
    # with a mask: the mask's positions broadcast against it
    mask = aten.index.Tensor(x, [tm.tensor(1), None, tm.tensor([True, False, True, True])])
    assert mask.shape == (3, 3) and mask[0].tolist() == [12.0, 16.0, 20.0]


def test_index_drops_a_0dim_mask_beside_other_indices():
    # ATen indexes with a mask's nonzero positions: a 0-dim mask has none and takes no dimension,
    # True or False alike
    x = tm.arange(24.).reshape(2, 3, 4)
    for flag in (True, False):
        assert aten.index.Tensor(x, [tm.tensor(1), None, tm.tensor(flag)]).tolist() == x[1].tolist()
    assert aten.index.Tensor(x, [None, tm.tensor(True), tm.tensor(1)]).tolist() == x[:, 1].tolist()


def test_index_gradient_follows_the_aten_meaning():
    x = tm.arange(24.).reshape(2, 3, 4).requires_grad_()
    aten.index.Tensor(x, [tm.tensor(-2), None, tm.tensor([3, 2])]).sum().backward()
    expected = tm.zeros(2, 3, 4)
    expected[0, :, 2:] = 1
    assert x.grad.tolist() == expected.tolist()


def test_index_with_more_indices_than_dimensions_raises():
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 0 \(got 1\)$"):
        aten.index.Tensor(tm.tensor(1.5), [tm.tensor(True)])
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 1 \(got 2\)$"):
        aten.index.Tensor(tm.zeros(2), [tm.tensor(0), None])


def test_index_meta_shapes_with_0dim_integers():
    m = tm.zeros(2, 3, 4, device="meta")
    assert aten.index.Tensor(m, [tm.tensor(0, device="meta"), None, tm.tensor(1, device="meta")]).shape == (3,)
    assert aten.index.Tensor(m, [tm.tensor(0, device="meta"), None,
                                 tm.tensor([1, 2], device="meta")]).shape == (2, 3)
    assert aten.index.Tensor(tm.zeros(0, 3, device="meta"), [tm.tensor(0, device="meta")]).shape == (3,)


# -- writes into a view's copy under autograd -----------------------------------------------------

@pytest.mark.parametrize("dtype, name", [(tm.int32, "Int"), (tm.bool, "Bool")])
def test_view_scatters_into_an_integer_input_refuse_autograd(dtype, name):
    src = tm.ones(3, 2, requires_grad=True)
    calls = (lambda x: tm.slice_scatter(x, src, 1, 0, 4, 2), lambda x: tm.select_scatter(x, src[:, 0], 1, 0),
             lambda x: tm.diagonal_scatter(x, src[:, 0], 0))
    for call in calls:
        with pytest.raises(RuntimeError, match=f"^Autograd not support dtype: {name}$"):
            call(tm.zeros(3, 4, dtype=dtype))
    # without a src that requires grad they compute, in the input's dtype
    assert tm.slice_scatter(tm.zeros(3, 4, dtype=dtype), tm.ones(3, 2), 1, 0, 4, 2).dtype == dtype
    assert tm.diagonal_scatter(tm.zeros(3, 4, dtype=tm.complex64), src[:, 0], 0).requires_grad


# -- least squares ----------------------------------------------------------------------------------

def test_lstsq_residuals_of_a_matrix_without_columns():
    # LAPACK returns at once: gels zeroes B first (residuals 0), gelsd and gelss leave it (|B|^2)
    A, B = tm.zeros(4, 0, dtype=tm.float64), tm.arange(8.0, dtype=tm.float64).reshape(4, 2)
    assert tm.linalg.lstsq(A, B, driver="gels").residuals.tolist() == [0.0, 0.0]
    for driver in ("gelsd", "gelss"):
        assert tm.linalg.lstsq(A, B, driver=driver).residuals.tolist() == [56.0, 84.0]
    assert tm.linalg.lstsq(A, B[:, 0], driver="gels").residuals.tolist() == [0.0]
    assert tm.linalg.lstsq(A, B).residuals.shape == (0,)  # gelsy computes none
    # an empty batch: empty residuals of the batch's shape
    empty = tm.linalg.lstsq(tm.zeros(0, 4, 2, dtype=tm.float64), tm.zeros(0, 4, 3, dtype=tm.float64), driver="gelsd")
    assert empty.residuals.shape == (0, 3)


def test_lstsq_reads_b_as_vectors_only_in_a_shape_without_columns():
    A = tm.ones(2, 4, 2, dtype=tm.float64)
    with pytest.raises(RuntimeError, match=r"^torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)$"):
        tm.linalg.lstsq(A, tm.ones(1, 4, dtype=tm.float64))
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(2\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 0$"):
        tm.linalg.lstsq(A, tm.ones(4, 3, dtype=tm.float64))
    assert tm.linalg.lstsq(A, tm.ones(2, 4, dtype=tm.float64)).solution.shape == (2, 2)


# -- grid_sampler ---------------------------------------------------------------------------------

def test_grid_sampler_without_channels_gives_the_grid_a_zero_gradient():
    # the grid's gradient sums the channels' terms: none, so 0 even at a NaN coordinate
    x = tm.zeros(1, 0, 3, 4, dtype=tm.float64, requires_grad=True)
    grid = tm.tensor([[[[0.2, 0.1], [0.5, float("nan")], [-1e30, 0.3]]]], dtype=tm.float64, requires_grad=True)
    for mode in (0, 2):
        out = tm.grid_sampler(x, grid, mode, 1, True)
        _, grad = tm.autograd.grad(out, (x, grid), tm.ones_like(out))
        assert grad.tolist() == [[[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]]]


# -- LU pivoting beside NaN -----------------------------------------------------------------------

def test_inverse_pivots_past_a_nan_as_lapack_does():
    # BLAS's pivot search never takes a NaN as larger: column 1's pivot is -0., so U[2, 2] is zero
    # and PyTorch's LAPACK reports the matrix singular (NumPy's build pivots on the NaN row)
    nan, inf = float("nan"), float("inf")
    A = tm.tensor([[inf, 1.32, 0.5], [0.41, -0.0, -0.29], [nan, -inf, -0.97]])
    with pytest.raises(tm.linalg.LinAlgError, match="^linalg.inv: The diagonal element 2 is zero, the inversion "
                                                   "could not be completed because the input matrix is singular.$"):
        tm.linalg.inv(A)
    with pytest.raises(tm.linalg.LinAlgError, match="The solver failed because the input matrix is singular"):
        tm.linalg.solve(A, tm.ones(3))
    # NumPy's build refuses [[inf, 1], [-inf, -0.]], whose BLAS factorisation has a NaN pivot: NaN
    assert all(math.isnan(v) for row in tm.linalg.inv(tm.tensor([[inf, 1.04], [-inf, -0.0]])).tolist() for v in row)
    assert tm.linalg.inv(tm.tensor([[inf, 1.0], [1.0, 2.0]])).tolist() == [[0.0, -0.0], [0.0, 0.5]]


def test_rms_norm_complex_weight_gradient_is_complex_at_a_nan():
    # PyTorch's product is complex, so its gradient reaches the weight as complex: NaN in both parts
    x = tm.tensor([[1.0, float("inf")]], dtype=tm.float16, requires_grad=True)
    w = tm.tensor([1 + 1j, 2 - 1j], dtype=tm.complex64, requires_grad=True)
    out = tm.rms_norm(x, [2], w)
    _, grad = tm.autograd.grad(out, (x, w), tm.ones_like(out))
    assert grad[0].item() == 0j
    assert math.isnan(grad[1].item().real) and math.isnan(grad[1].item().imag)


# -- sixth batch: seeds 1 and 2 -----------------------------------------------------------------------

def test_index_drops_only_0dim_masks_for_an_empty_input():
    assert aten.index.Tensor(tm.zeros(0, 3), [tm.tensor(True)]).shape == (0, 3)


def test_empty_inputs_skip_the_checks_of_what_is_never_read():
    # nothing to sample: no grid dtype check; nothing to fill: no index bounds check
    grid = tm.zeros(2, 3, 2, 2, dtype=tm.int32)
    assert tm.grid_sampler(tm.zeros(2, 0, 3, 4, dtype=tm.float64), grid, 0, 2, True).shape == (2, 0, 3, 2)
    with pytest.raises(RuntimeError, match="^expected scalar type Double but found Int$"):
        tm.grid_sampler(tm.zeros(2, 1, 3, 4, dtype=tm.float64), grid, 0, 2, True)
    assert tm.index_fill(tm.zeros(0, 3), 1, tm.tensor([5, -9]), 1.0).shape == (0, 3)


def test_ldexp_rounds_the_power_to_the_exponent_dtype():
    assert tm.ldexp(tm.tensor([1.0], dtype=tm.float64), tm.tensor([0.3], dtype=tm.float16)).item() == 1.2314453125
    assert tm.ldexp(tm.tensor([1.0], dtype=tm.float16), tm.tensor([0.3], dtype=tm.bfloat16)).item() == 1.234375
    assert tm.ldexp(tm.tensor([1.0], dtype=tm.float64), tm.tensor([200])).item() == 2.0 ** 200


def test_cdist_p0_gradient_is_zero_at_an_infinite_coordinate():
    x1 = tm.tensor([[1.0, 2.0]], requires_grad=True)
    x2 = tm.tensor([[float("inf"), 0.5]], requires_grad=True)
    g1, g2 = tm.autograd.grad(tm.cdist(x1, x2, 0.0).sum(), (x1, x2))
    assert g1.tolist() == [[0.0, 0.0]] and g2.tolist() == [[0.0, 0.0]]


def test_soft_margin_loss_of_nothing_has_an_empty_gradient():
    x = tm.zeros(0, dtype=tm.float16, requires_grad=True)
    loss = tm.nn.functional.soft_margin_loss(x, tm.zeros(0, dtype=tm.float16))
    assert tm.autograd.grad(loss, x)[0].shape == (0,)


@pytest.mark.parametrize("call", [lambda x: aten._softmax.default(x, 0, False), tm.bernoulli])
def test_empty_complex_softmax_and_bernoulli_refuse_autograd(call):
    x = tm.zeros(0, 3, dtype=tm.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match="does not support automatic differentiation for outputs with complex"):
        call(x)


def test_trapezoid_gradient_with_a_0dim_x():
    # a 0-dim x is one point along dim: no spacings, the result sums nothing, the gradients are 0
    y = tm.arange(12.0, dtype=tm.float64).reshape(2, 2, 3).requires_grad_()
    x = tm.tensor(-1.5, dtype=tm.float64, requires_grad=True)
    result = tm.trapezoid(y, x, dim=1)
    assert result.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    grad_y, grad_x = tm.autograd.grad(result.sum(), (y, x))
    assert grad_y.tolist() == tm.zeros(2, 2, 3).tolist() and grad_x.item() == 0.0


def test_baddbmm_names_dtypes_as_cpp_types():
    with pytest.raises(RuntimeError, match="^Input dtypes must be the same, got: input c10::Half, batch1: float, "
                                           "batch2: float$"):
        tm.baddbmm(tm.ones(2, 3, 5, dtype=tm.float16), tm.ones(2, 3, 2), tm.ones(2, 2, 5))


def test_ldexp_wraps_an_int64_exponent_to_a_c_int():
    # PyTorch's kernel hands the exponent to ldexp as a C int
    x = tm.tensor([1.0])
    assert tm.ldexp(x, tm.tensor([2**32 + 3])).item() == 8.0
    assert tm.ldexp(x, tm.tensor([2**63 - 1])).item() == 0.5
    assert tm.ldexp(x, tm.tensor([2**31])).item() == 0.0


def test_nll_loss_forward_of_a_single_input():
    forward = aten.nll_loss_forward.default
    x, w = tm.tensor([0.5, -1.0, 2.0]), tm.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="^For 1D input, 1D target must have size 1, but got target size: 2$"):
        forward(x, tm.tensor([1, 1]), None, 1, -100)
    output, total = forward(x, tm.tensor([1]), w, 0, -100)
    assert output.item() == 2.0 and total.item() == 2.0  # a single input's kernel counts its target
    assert forward(tm.zeros(2, 3), tm.tensor([1, 2]), w, 0, -100)[1].item() == 0.0


def test_ldexp_of_an_integer_input_takes_the_power_in_float():
    # an integer input goes through pow(2., other): no C-int wrap of the exponent
    assert tm.ldexp(tm.tensor([3]), tm.tensor([-2**63])).item() == 0.0
    assert tm.ldexp(tm.tensor([3]), tm.tensor([2**32 + 3])).item() == math.inf


@pytest.mark.filterwarnings("ignore:index_reduce")
def test_index_reduce_with_a_0dim_source_beside_a_vector():
    with pytest.raises(RuntimeError, match=r"^source tensor shape must match self tensor shape, excluding the "
                                           r"specified dimension. Got self.shape = \[2\] source.shape = \[\]$"):
        tm.index_reduce(tm.ones(2), 0, tm.tensor([0]), tm.tensor(-0.0), "prod")
    assert tm.index_reduce(tm.ones(()), 0, tm.tensor([0]), tm.tensor(2.0), "prod").item() == 2.0


def test_ldexp_of_a_floating_input_refuses_bool_exponents():
    for input in (tm.ones(3), tm.zeros(0, 3, dtype=tm.float64)):
        with pytest.raises(NotImplementedError, match="^\"ldexp_cpu_exp\" not implemented for 'Bool'$"):
            tm.ldexp(input, tm.tensor([True, False, True]))
    assert tm.ldexp(tm.ones(3, dtype=tm.int64), tm.tensor([True, False, True])).tolist() == [2.0, 1.0, 2.0]


@pytest.mark.parametrize("dtype, name", [(tm.float32, "torch.FloatTensor"), (tm.int16, "torch.ShortTensor"),
                                         (tm.bool, "CPUBoolType"), (tm.bfloat16, "CPUBFloat16Type")])
def test_ctc_loss_refuses_targets_of_other_than_int_types(dtype, name):
    log_probs = tm.full((2, 2, 4), -1.0, dtype=tm.float64)
    with pytest.raises(RuntimeError, match=f"^Expected tensor for argument #2 'targets' to have scalar type Int; but "
                                           f"got {name} instead \\(while checking arguments for "
                                           f"ctc_loss_allocate_outputs\\)$"):
        tm._ctc_loss(log_probs, tm.ones(2, 3, dtype=dtype), [2, 2], [2, 2])


def test_affine_grid_generator_half_types():
    with pytest.raises(NotImplementedError, match="^\"tensor_cpu\" not implemented for 'Half'$"):
        tm.affine_grid_generator(tm.ones(1, 2, 3, dtype=tm.float16), [1, 1, 1, 3], False)  # a one-point axis
    grid = tm.affine_grid_generator(tm.ones(1, 2, 3, dtype=tm.bfloat16), [1, 1, 2, 3], False)
    assert grid.dtype == tm.bfloat16 and grid.shape == (1, 2, 3, 2)


def test_one_sided_fft_checks_axes_and_points_before_the_dtype():
    half = tm.tensor(0.5, dtype=tm.bfloat16)
    with pytest.raises(IndexError, match="^Dimension specified as -2 but tensor has no dimensions$"):
        tm.fft.hfft2(half)
    with pytest.raises(RuntimeError, match="^hfftn must transform at least one axis$"):
        tm.fft.hfftn(tm.tensor(0.5 + 1j))
    with pytest.raises(RuntimeError, match=r"^Invalid number of data points \(0\) specified$"):
        tm.fft.irfftn(tm.tensor([0.5], dtype=tm.bfloat16))
    with pytest.raises(RuntimeError, match="^Unsupported dtype BFloat16$"):
        tm.fft.hfft2(tm.ones(2, 2, dtype=tm.bfloat16))


def test_nll_loss2d_forward_checks_the_sizes_as_aten():
    forward = aten.nll_loss2d_forward.default
    with pytest.raises(RuntimeError, match=r"^size mismatch \(got input: \[0, 3, 4, 5\] , target: \[2, 4, 0\]$"):
        forward(tm.zeros(0, 3, 4, 5), tm.zeros(2, 4, 0, dtype=tm.int64), None, 1, -100)
    with pytest.raises(RuntimeError, match="^weight tensor should be defined either for all or no classes$"):
        forward(tm.zeros(2, 3, 4, 5), tm.zeros(1, 4, 5, dtype=tm.int64), tm.ones(2), 1, -100)


def test_addbmm_half_accumulates_batch_by_batch_in_the_half_type():
    # PyTorch's loop: beta * input + alpha * b1[0] @ b2[0], then += alpha * b1[i] @ b2[i], each step
    # computed in float32 and rounded to float16
    b1 = tm.tensor([[[0.3, -0.7, 1.1]], [[0.9, 0.2, -1.3]], [[-0.4, 1.7, 0.6]]], dtype=tm.float16)
    b2 = tm.tensor([[[1.1], [0.5], [-0.3]], [[-0.8], [1.9], [0.7]], [[0.6], [-1.2], [1.4]]], dtype=tm.float16)
    result = tm.addbmm(tm.tensor([[0.1]], dtype=tm.float16), b1, b2, beta=0.5, alpha=1.5)
    assert result.dtype == tm.float16 and result.item() == -4.51171875
    row = tm.tensor([[[0.0, -0.75244140625, -1.2138671875, 0.388671875]], [[-0.0, -0.0, -0.0765380859375, 0.0]]],
                    dtype=tm.float16)
    column = tm.tensor([[[1.41015625], [0.157958984375], [-1.998046875], [-1.048828125]],
                        [[-1.4658203125], [-1.404296875], [1.31640625], [-1.427734375]]], dtype=tm.float16)
    assert tm.addbmm(tm.tensor(-0.97314453125, dtype=tm.float16), row, column).item() == 0.8251953125
