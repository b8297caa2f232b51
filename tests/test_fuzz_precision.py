"""Reductions, statistics, sorting and selection, complex special values and reduced-precision
results where the differential fuzzer (tests/differential.py) found us apart from PyTorch, each
pinned with the values, types and messages torch 2.13 gives (so these run without torch too)."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm

NAN, INF = float("nan"), float("inf")


def _same(values, expected):
    """Equal lists of floats, NaN matching NaN (and signed zeros told apart)."""
    assert len(values) == len(expected), (values, expected)
    for v, e in zip(values, expected):
        if isinstance(e, complex) or isinstance(v, complex):
            _same([complex(v).real, complex(v).imag], [complex(e).real, complex(e).imag])
            continue
        assert (math.isnan(v) and math.isnan(e)) or (v == e and math.copysign(1, v) == math.copysign(1, e)), \
            (values, expected)


# -- reduced precision: sums, products, scans ---------------------------------------------------


def test_half_product_rounds_every_partial_product():
    # 300 * 300 overflows float16 before the 0.001 comes: PyTorch's product is inf (ours was 90.06).
    x = tm.tensor([300.0, 300.0, 0.001], dtype=tm.float16)
    assert x.prod().item() == INF
    assert x.prod(0).item() == INF
    # cumprod accumulates in float32 and rounds each output on its own
    _same(x.cumprod(0).tolist(), [300.0, INF, 90.0625])
    assert tm.tensor([0.9375, 0.875, -2.5, -2.25], dtype=tm.bfloat16).prod().item() == 4.59375  # not 4.625


def test_half_product_of_a_long_row_follows_pytorchs_vector_lanes():
    x = tm.linspace(0.99, 1.02, 70).to(tm.float16)
    assert x.prod().item() == 1.4072265625  # float32 product rounded once: 1.412109375
    assert x.reshape(7, 10).prod(0).tolist() == [
        1.0205078125, 1.0234375, 1.0263671875, 1.029296875, 1.0322265625, 1.0361328125, 1.0390625,
        1.04296875, 1.046875, 1.0498046875]


def test_bfloat16_logsumexp_rounds_each_step_as_pytorchs_composite():
    assert tm.logsumexp(tm.tensor([1.25, 1.25, -1.125], dtype=tm.bfloat16), 0).item() == 1.984375
    assert tm.logsumexp(tm.tensor([[1.5, 2.25, -0.75], [3.0, 3.0, 3.0]], dtype=tm.bfloat16), 1).tolist() == \
        [2.671875, 4.09375]


# -- statistics --------------------------------------------------------------------------------


def test_float32_variance_accumulates_in_float64():
    t = tm.tensor([[65504.0, 1e30, 65504.0], [-1.6323362588882446, 0.40040209889411926, 1e30]])
    assert tm.std(t, -1, correction=2.5).tolist() == [1.1547005853437709e30, 1.1547005853437709e30]
    std, mean = tm.std_mean(t, correction=0)
    assert (std.item(), mean.item()) == (pytest.approx(4.7140e29, rel=1e-4), pytest.approx(3.3333e29, rel=1e-4))
    assert std.dtype == tm.float32 and math.isfinite(std.item())
    assert tm.std(tm.tensor([3e38, -3e38, 0.5], dtype=tm.bfloat16)).item() == pytest.approx(3.0041e38, rel=1e-3)


def test_var_mean_follows_welfords_running_mean_through_infinities():
    var, mean = tm.var_mean(tm.tensor([[-INF, -0.5], [-0.25, -1.125]]), 0)
    _same(var.tolist(), [NAN, 0.1953125])
    _same(mean.tolist(), [NAN, -0.8125])  # -inf then a finite value: NaN (ours was -inf)
    var, mean = tm.var_mean(tm.tensor([1.0, 2.0, -INF]))  # the infinity last: it stays
    _same([var.item(), mean.item()], [NAN, -INF])
    var, mean = tm.var_mean(tm.tensor([[1e308, -1e308]], dtype=tm.float64), 1)
    assert (var.item(), mean.item()) == (-INF, -INF)
    assert tm.var(tm.tensor([[1e308, -1e308]], dtype=tm.float64), 1).item() == INF


def test_complex_std_mean_averages_real_and_imaginary_parts_apart():
    std, mean = tm.std_mean(tm.tensor([complex(NAN, 0), 1 + 0.25j, 2 - 0.75j]))
    assert math.isnan(std.item())
    _same([mean.item()], [complex(NAN, -0.1666666716337204)])
    assert mean.dtype == tm.complex64


# -- sorting and selection ---------------------------------------------------------------------


def test_mode_with_nan_follows_pytorchs_sort():
    # PyTorch sorts each slice with std::sort and ``<``, under which NaN is unordered: runs of
    # NaN never form, and where the NaNs end up decides the mode (ours was 1, index 3).
    result = tm.mode(tm.tensor([NAN, 1.0, NAN, 1.0]))
    _same([result.values.item()], [NAN])
    assert result.indices.item() == 0
    result = tm.mode(tm.tensor([[NAN, 2.0, 2.0, NAN, NAN], [1.0, NAN, 3.0, 3.0, 1.0]]), 1)
    assert result.values.tolist() == [2.0, 3.0] and result.indices.tolist() == [2, 3]
    assert tm.mode(tm.tensor([2.0, NAN, 2.0, NAN])).indices.item() == 0


def test_mode_index_of_a_long_slice_is_the_one_pytorch_reports():
    # Past 16 elements std::sort is not stable: the index is not the last occurrence.
    x = tm.tensor([3, 1, 4, 1, 0, 2, 2, 3, 0, 1, 2, 0, 3, 4, 0, 0, 2, 4, 0, 4])
    result = tm.mode(x)
    assert (result.values.item(), result.indices.item()) == (0, 11)  # zeros at 4, 8, 11, 14, 15, 18


def test_mode_rejects_an_empty_slice_before_complex_dtypes():
    with pytest.raises(IndexError, match=r"^mode\(\): Expected reduction dim 1 to have non-zero size\.$"):
        tm.mode(tm.zeros((2, 0, 3), dtype=tm.complex128), 1)


@pytest.mark.parametrize("dtype, expected", [
    (tm.int64, -2**63), (tm.int32, -2**31), (tm.int16, 0), (tm.int8, 0), (tm.uint8, 0), (tm.bool, True),
])
def test_median_of_nothing_is_nan_converted_as_cpp_converts_it(dtype, expected):
    for function in (tm.median, tm.nanmedian):
        result = function(tm.zeros((0,), dtype=dtype))
        assert result.dtype == dtype and result.shape == () and result.item() == expected
    _same([tm.median(tm.zeros((0, 2), dtype=tm.complex64)).item()], [complex(NAN, 0)])


def test_median_checks_empty_slices_before_the_dtype_and_names_median():
    with pytest.raises(IndexError, match=r"^median\(\): Expected reduction dim 1 to have non-zero size\.$"):
        tm.median(tm.zeros((2, 0), dtype=tm.bool), 1)
    with pytest.raises(IndexError, match=r"^median\(\): Expected reduction dim 1 to have non-zero size\.$"):
        tm.nanmedian(tm.zeros((3, 0), dtype=tm.float64), 1)
    with pytest.raises(IndexError, match=r"^median\(\): Expected reduction dim 1 to have non-zero size\.$"):
        tm.median(tm.zeros((2, 0, 3), dtype=tm.complex128), 1)
    with pytest.raises(NotImplementedError, match="\"median_out\" not implemented for 'Bool'"):
        tm.median(tm.zeros((2, 0), dtype=tm.bool), 0)


def test_kthvalue_reports_the_copy_pytorchs_quickselect_finds():
    result = tm.kthvalue(tm.tensor([[-1, 2], [-1, -2], [0, -1]], dtype=tm.int16), 1, 0)
    assert result.values.tolist() == [-1, -2] and result.indices.tolist() == [1, 1]  # ours was [0, 1]
    assert tm.kthvalue(tm.tensor([3, 1, 3, 1, 3, 1]), 3).indices.item() == 1
    assert tm.kthvalue(tm.tensor([3, 1, 3, 1, 3, 1]), 5).indices.item() == 4
    result = tm.kthvalue(tm.tensor([NAN, 1.0, NAN, 2.0]), 3)
    _same([result.values.item()], [NAN])
    assert result.indices.item() == 2
    assert tm.kthvalue(tm.tensor([NAN, 1.0, NAN, 2.0]), 4).indices.item() == 0


@pytest.mark.parametrize("dtype", [tm.float32, tm.complex64, tm.bool])
def test_kthvalue_of_an_empty_slice_raises_index_error_first(dtype):
    for k in (0, 1, 5):
        with pytest.raises(IndexError, match=r"^kthvalue\(\): Expected reduction dim 1 to have non-zero size\.$"):
            tm.kthvalue(tm.zeros((2, 0, 3), dtype=dtype), k, 1)
    assert tm.kthvalue(tm.zeros((0, 3)), 1, 1).values.shape == (0,)
    with pytest.raises(RuntimeError, match=r"^kthvalue\(\): selected number k out of range for dimension 1$"):
        tm.kthvalue(tm.zeros((0, 3)), 4, 1)


def test_extrema_of_empty_complex_tensors_raise_the_empty_dim_error_first():
    z = tm.zeros((2, 0, 3), dtype=tm.complex128)
    for name in ("amin", "amax"):
        with pytest.raises(IndexError, match=rf"^{name}\(\): Expected reduction dim 1 to have non-zero size\.$"):
            getattr(tm, name)(z, 1)
        # nothing to compute: PyTorch returns the empty result without reaching its kernel
        assert getattr(tm, name)(z, 0).shape == (0, 3)
        with pytest.raises(RuntimeError, match=r"Expected reduction dim to be specified for input\.numel\(\) == 0"):
            getattr(tm, name)(z)
    with pytest.raises(NotImplementedError, match="\"max_values_cpu\" not implemented for 'ComplexDouble'"):
        tm.amax(tm.zeros((2, 3), dtype=tm.complex128), 0)
    with pytest.raises(IndexError, match=r"^max\(\): Expected reduction dim 1 to have non-zero size\.$"):
        tm.max(z, 1)
    with pytest.raises(RuntimeError, match=r"^max\(\): does not support complex input$"):
        tm.max(z, 0)
    with pytest.raises(RuntimeError, match=r"^max\(\): Expected reduction dim to be specified"):
        tm.max(tm.zeros((0,), dtype=tm.complex64))
    with pytest.raises(IndexError, match=r"^aminmax: Expected reduction dim 1 to have non-zero size\.$"):
        tm.aminmax(z, dim=1)


# -- softmax in reduced precision ---------------------------------------------------------------


def test_half_log_softmax_keeps_the_sum_and_its_log_in_the_half_dtype():
    # PyTorch rounds the sum 1.000335 to bfloat16 (1.0) before its log: the result is exactly 0.
    assert tm.log_softmax(tm.tensor([0.0, -8.0], dtype=tm.bfloat16), 0).tolist() == [0.0, -8.0]
    x = tm.tensor([[1.5, -2.25, 0.75, 3.0]], dtype=tm.float16)
    assert tm.log_softmax(x, 1).tolist() == [[-1.7880859375, -5.5390625, -2.5390625, -0.2880859375]]


def test_half_softmax_along_an_inner_dim_rounds_the_exponentials_first():
    t = tm.tensor([[1.5], [-2.25], [0.75], [3.0]], dtype=tm.float16)
    assert tm.softmax(t, 0).tolist() == [[0.1673583984375], [0.003936767578125], [0.07904052734375],
                                         [0.74951171875]]


# -- complex special values ---------------------------------------------------------------------


def test_complex_add_and_sub_multiply_other_by_alpha_even_when_it_is_one():
    # (-inf + 0j) * (1 + 0j) has a NaN imaginary part (inf * 0): PyTorch's sum shows it.
    result = tm.add(tm.tensor([[-1.661211609840393 - 1.4179751873016357j, 65504 + 0j]]),
                    tm.tensor([[complex(-INF, 0), 0j]]))
    _same(result.tolist()[0], [complex(-INF, NAN), complex(65504, 0)])
    _same(tm.sub(tm.tensor([-0.8455877304077148, 0.5]), tm.tensor([complex(NAN, 1), 1j])).tolist(),
          [complex(NAN, NAN), complex(0.5, -1)])
    _same((tm.tensor([1 + 1j]) + INF).tolist(), [complex(INF, NAN)])
    _same((tm.tensor([INF]) + tm.tensor([1 + 1j])).tolist(), [complex(INF, 1)])  # input is not scaled


def test_complex_reciprocal_divides_as_cpp_complex():
    result = tm.reciprocal(tm.tensor([complex(-INF, -1e30), complex(1e-40, 0), 0j], dtype=tm.complex64))
    _same(result.tolist(), [complex(-0.0, -0.0), complex(INF, NAN), complex(INF, NAN)])
    _same(tm.rsqrt(tm.tensor([0j])).tolist(), [complex(INF, NAN)])


def test_complex_sgn_and_abs_follow_pytorchs_kernels():
    small = tm.tensor([complex(0, INF), 3 + 4j, 0j, complex(NAN, 0)])
    _same(tm.sgn(small).tolist(), [complex(NAN, NAN), complex(0.6000000238418579, 0.800000011920929), 0j,
                                   complex(NAN, NAN)])
    # 16 complex64 elements fill PyTorch's vector steps, which divide each part by |z|
    _same([tm.sgn(tm.full((16,), complex(0, INF))).tolist()[0]], [complex(0, NAN)])
    assert tm.abs(tm.tensor([0.1 + 0.7j, 1e-20 + 3e-21j])).tolist() == [0.7071067690849304, 1.0440306145571355e-20]


def test_complex64_exp2_scales_by_ln2_in_float32():
    _same(tm.exp2(tm.tensor([65504j])).tolist(), [complex(-0.046220019459724426, 0.9989312887191772)])


# -- trapezoid, unique ---------------------------------------------------------------------------


def test_trapezoid_with_a_constant_spacing_is_pytorchs_sum_formula():
    # (sum(y) - (y[0] + y[-1]) / 2) * dx: the int64 sum wraps around as PyTorch's does
    result = tm.trapezoid(tm.tensor([2, -9223372036854775808, -2, -1], dtype=tm.int64))
    assert result.dtype == tm.float32 and result.item() == 9.223372036854775808e18
    assert tm.trapezoid(tm.tensor([1, 2, 4], dtype=tm.int8)).dtype == tm.float32
    half = tm.trapezoid(tm.tensor([1.0, 2.0], dtype=tm.float16), dx=3)
    assert half.dtype == tm.float16 and half.item() == 4.5
    # int8 sums of pairs wrap in int8 before the spacing multiplies them
    assert tm.trapezoid(tm.tensor([100, 100, 100], dtype=tm.int8), tm.tensor([1, 2, 3], dtype=tm.int8)).item() == -56.0


def test_trapezoid_of_no_samples_is_zeros_of_ys_dtype_without_history():
    result = tm.trapezoid(tm.zeros((0, 2), requires_grad=True), dx=0.5, dim=0)
    assert result.tolist() == [0.0, 0.0] and not result.requires_grad
    assert tm.trapezoid(tm.zeros((1, 2), requires_grad=True), dx=0.5, dim=0).requires_grad
    assert tm.trapezoid(tm.zeros(0, dtype=tm.int64)).dtype == tm.int64
    assert tm.trapezoid(tm.zeros((0, 2), dtype=tm.bool), dim=0).tolist() == [False, False]


def test_trapezoid_sample_points_broadcast_as_pytorch():
    y = tm.tensor([[0.5478467492858172, -0.9208531449445188, -1.8361059042552212],
                   [-1.9338894578858836, 1.2530809568010897, 1.6510223091108869]], dtype=tm.float64)
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(2\) must match the size of tensor b \(0\) at "
                                           r"non-singleton dimension 1$"):
        tm.trapezoid(y, tm.tensor(0, dtype=tm.int8), dim=1)
    with pytest.raises(RuntimeError, match="There must be one `x` value for each sample point"):
        tm.trapezoid(tm.zeros(2, 3), tm.zeros(4), dim=1)
    assert tm.trapezoid(tm.zeros(2, 3), tm.zeros(1, 2), dim=1).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match=r"received a bool input for `x` or `y`"):
        tm.trapezoid(tm.zeros(3), tm.zeros(3, dtype=tm.bool))
    with pytest.raises(RuntimeError, match="we only support dx as a real number"):
        tm.trapezoid(tm.zeros(3), dx=1j)


@pytest.mark.parametrize("call, name, node", [
    (lambda x: tm.unique(x), "_unique2", "Unique2Backward0"),
    (lambda x: tm.unique(x, return_inverse=True)[0], "_unique2", "Unique2Backward0"),
    (lambda x: tm.unique(x, dim=0), "unique_dim", "UniqueDimBackward0"),
    (lambda x: tm.unique_consecutive(x), "unique_consecutive", "UniqueConsecutiveBackward0"),
])
def test_unique_is_recorded_and_its_backward_is_not_implemented(call, name, node):
    x = tm.tensor([1.46875, 1.296875, 1.46875], dtype=tm.bfloat16, requires_grad=True)
    result = call(x)
    assert result.requires_grad and type(result.grad_fn).__name__ == node
    with pytest.raises(NotImplementedError, match=rf"^the derivative for '{name}' is not implemented\.$"):
        result.sum().backward()
    assert not tm.unique(x, return_inverse=True)[1].requires_grad


def test_bincount_of_the_largest_int64_raises_before_numpy_overflows():
    # NumPy's bincount would compute a negative length from it and corrupt the heap
    for weights in (None, tm.tensor([1.0, 2.0])):
        with pytest.raises(RuntimeError, match="^maximum value of input overflowed, it should be < "
                                               "9223372036854775807 but got 9223372036854775807$"):
            tm.bincount(tm.tensor([2**63 - 1, 3]), weights)
    with pytest.raises(RuntimeError, match=r"^Storage size calculation overflowed with sizes=\[4611686018427387905\]$"):
        tm.bincount(tm.tensor([2**62]))


@pytest.mark.parametrize("dtype, name", [(tm.int8, "Char"), (tm.uint8, "Byte"), (tm.int32, "Int")])
def test_avg_pool3d_takes_no_integers_but_int64(dtype, name):
    with pytest.raises(NotImplementedError, match=f"^\"avg_pool3d_out_frame\" not implemented for '{name}'$"):
        tm.nn.functional.avg_pool3d(tm.ones(1, 1, 2, 2, 2, dtype=dtype), 2, divisor_override=3)
    assert tm.nn.functional.avg_pool3d(tm.ones(1, 1, 2, 2, 2, dtype=tm.int64), 2).tolist() == [[[[[1]]]]]


def test_grid_sampler_refuses_an_integer_input_before_comparing_dtypes():
    grid = tm.zeros(1, 2, 2, 2, dtype=tm.float64)
    with pytest.raises(NotImplementedError, match="^\"grid_sampler_2d_cpu_kernel_impl\" not implemented for 'Byte'$"):
        tm.grid_sampler(tm.ones(1, 1, 2, 2, dtype=tm.uint8), grid, 0, 0, False)
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Double$"):
        tm.grid_sampler(tm.ones(1, 1, 2, 2), grid, 0, 0, False)


def test_index_reduce_checks_in_pytorchs_order():
    x = tm.zeros(2, 3)
    with pytest.raises(RuntimeError, match="^index_reduce_\\(\\): Expected dtype int32/int64 for index but got: Byte$"):
        x.index_reduce(1, tm.tensor([0, 1], dtype=tm.uint8), tm.tensor(1.0), "amin")
    with pytest.raises(RuntimeError, match="^index_reduce_\\(\\): Indexing dim 1 is out of bounds of the source "
                                           "tensor with dim 0$"):
        x.index_reduce(1, tm.tensor([0, 1]), tm.tensor(1.0), "amin")
    with pytest.raises(IndexError, match="^Dimension specified as 0 but tensor has no dimensions$"):
        x.index_reduce(0, tm.tensor([0, 1]), tm.tensor(1.0), "amin")


def test_cholesky_of_an_empty_half_matrix_is_empty():
    assert tm.linalg.cholesky(tm.zeros(0, 2, 2, dtype=tm.bfloat16)).shape == (0, 2, 2)
    with pytest.raises(NotImplementedError, match="^\"cholesky_cpu\" not implemented for 'BFloat16'$"):
        tm.linalg.cholesky(tm.eye(2, dtype=tm.bfloat16))


def test_zero_dim_operands_raise_pytorchs_size_errors_first():
    def raises(error, message, call):
        with pytest.raises(error, match=message):
            call()

    no_dims = "^Dimension specified as {} but tensor has no dimensions$"
    raises(IndexError, no_dims.format(2), lambda: tm.addbmm(tm.tensor(1.0), tm.zeros(2, 2, 3, 4), tm.tensor(1.0)))
    raises(IndexError, no_dims.format(1), lambda: tm.addbmm(tm.tensor(1.0), tm.tensor(2.0), tm.zeros(2, 3, 4)))
    raises(IndexError, no_dims.format(0), lambda: tm.baddbmm(tm.tensor(1.0), tm.tensor(2.0), tm.zeros(2, 3, 4)))
    raises(IndexError, r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)$",
           lambda: tm.baddbmm(tm.tensor(1.0), tm.zeros(3), tm.zeros(2, 4)))
    raises(RuntimeError, "^batch1 must be a 3D tensor$",
           lambda: tm.addbmm(tm.tensor(1.0), tm.zeros(2, 2, 3, 4), tm.zeros(2, 4, 4)))
    raises(IndexError, no_dims.format(-1), lambda: tm.linalg.householder_product(tm.zeros(3, 2), tm.tensor(1.0)))
    raises(IndexError, no_dims.format(0),
           lambda: tm.ops.aten.nll_loss_forward.default(tm.zeros(4, 3), tm.tensor(1), None, 1, -100))
    raises(ValueError, "^Input tensor must have at least 1 dimensions, but got 0$",
           lambda: tm.rms_norm(tm.tensor(0.3), [3]))


# -- the half-type sweep (tests/half_sweep.py) -------------------------------------------------------


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_every_op_sample_in_half_types_matches_torch_bit_for_bit_or_is_listed(dtype):
    import warnings

    from .half_sweep import REMAINING, unlisted

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # edge values cast to the half type
        found, listed = unlisted(dtype)
    assert not found, "\n".join(f"{name} / {kind}: {mismatch.detail[:160]} ({case.case_id})"
                                for (name, kind), (case, mismatch) in sorted(found.items()))
    assert listed <= set(REMAINING)


def test_the_half_sweeps_listed_classes_name_real_ops():
    from tensormodes._ops import OPS

    from .half_sweep import REMAINING

    assert all(name in OPS for name, _ in REMAINING)
    assert all(entry.reason for entry in REMAINING.values())
