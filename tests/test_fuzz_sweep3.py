"""Differences from PyTorch that the differential fuzzer's larger runs (seeds 1-4, 4,000 cases
each) still found, each pinned with PyTorch 2.13's own values, types and messages, so that these
run without torch installed too."""

from __future__ import annotations

import math
import warnings

import pytest

import tensormodes as tm

NAN, INF = float("nan"), float("inf")


def _same(values, expected):
    assert len(values) == len(expected), (values, expected)
    for v, e in zip(values, expected):
        assert (math.isnan(v) and math.isnan(e)) or v == e, (values, expected)


# -- normalisation --------------------------------------------------------------------------------

def test_batch_norm_in_training_refuses_an_empty_batch_after_checking_dtypes():
    with pytest.raises(RuntimeError, match=r"^input tensor must have at least one element, but got "
                                           r"input_sizes = \[0, 2\]$"):
        tm._native_batch_norm(tm.zeros(0, 2, dtype=tm.float16), None, None, None, None, True, 0.1, 1e-5)
    with pytest.raises(NotImplementedError, match="^\"batch_norm\" not implemented for 'Short'$"):
        tm._native_batch_norm(tm.zeros(0, 2, dtype=tm.int16), tm.zeros(2, dtype=tm.bool), None, None, None,
                              True, 0.1, 1e-5)
    # the running statistics need no batch
    out = tm._native_batch_norm(tm.zeros(0, 2), None, None, tm.zeros(2), tm.ones(2), False, 0.1, 1e-5)
    assert out.shape == (0, 2)


def test_batch_norm_of_half_data_normalises_with_half_statistics():
    x = tm.tensor([[-0.6943359375, 1.435546875], [-1.68359375, 1.189453125], [-0.09637451171875, 0.59619140625],
                   [0.8466796875, 1.3701171875]], dtype=tm.float16)
    out = tm._native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    assert out.tolist() == [[-0.3125, 0.87060546875], [-1.388671875, 0.126831054687500], [0.337890625, -1.666015625],
                            [1.3642578125, 0.6728515625]]
    # float32 parameters keep float32 statistics
    out = tm._native_batch_norm(x, tm.ones(2), None, None, None, True, 0.1, 1e-5)
    assert out.tolist()[0] == [-0.31274414062500, 0.869140625]


def test_group_and_batch_norm_scale_and_shift_as_pytorch_at_an_infinite_weight():
    x = tm.tensor([[1., 2, 3, 4], [0, -1, 2, 5], [3, 3, 1, 2]], dtype=tm.float64)
    w = tm.tensor([1.5, -1.2, INF, -1.5], dtype=tm.float64)
    assert all(math.isnan(v) for v in tm._native_group_norm(x, w, None, 3, 4, 1, 1, 1e-5)[:, 2].tolist())
    _same(tm._native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)[:, 2].tolist(), [NAN, NAN, NAN])


def test_group_norm_checks_in_pytorchs_order():
    with pytest.raises(RuntimeError, match=r"^Expected weight to be a vector of size equal to the number of "
                                           r"channels in input, but got weight of shape \[2, 4\] and input of "
                                           r"shape \[2, 4, 3\]$"):
        tm._native_group_norm(tm.zeros(2, 4, 3), tm.zeros(2, 4), tm.zeros(2, 4), 2, 4, 3, 2, 1e-5)
    with pytest.raises(RuntimeError, match=r"^Expected bias to be a vector of size"):
        tm._native_group_norm(tm.zeros(2, 4, 3), tm.zeros(4), tm.zeros(3), 2, 4, 3, 2, 1e-5)
    with pytest.raises(NotImplementedError, match="^\"GroupNormKernelImpl\" not implemented for 'Short'$"):
        tm._native_group_norm(tm.zeros(0, dtype=tm.int16), None, None, 1, 2, 4, 2, 1e-5)
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\): all inputs must share same datatype\.$"):
        tm._native_group_norm(tm.zeros(2, 4, dtype=tm.int16), tm.zeros(4), None, 2, 4, 1, 2, 1e-5)


# -- reductions' gradients at non-finite values ----------------------------------------------------

def _grad(function, values):
    x = tm.tensor(values, requires_grad=True)
    function(x).sum().backward()
    return x.grad


def test_prod_gradient_is_result_over_input_without_zeros_as_pytorch():
    # PyTorch divides the result by each element when no element is 0 (so inf / inf is NaN),
    # and multiplies the other elements' products only when there are zeros
    grad = _grad(lambda x: x.prod(), [[1e30, 0.5, -1e30], [-INF, NAN, -1.5]])
    assert all(math.isnan(v) for v in grad.flatten().tolist())
    _same(_grad(lambda x: x.prod(0), [[0.5, 1.25, 0.75], [1.0, INF, -1.5]]).flatten().tolist(),
          [1.0, INF, -1.5, 0.5, NAN, 0.75])
    _same(_grad(lambda x: x.prod(0), [[0.0, 1.25, 0.75], [1.0, INF, -1.5]]).flatten().tolist(),
          [1.0, INF, -1.5, 0.0, 1.25, 0.75])


def test_variance_gradient_without_degrees_of_freedom_is_nan_at_the_mean_and_infinite_elsewhere():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # var()'s warning that there are no degrees of freedom
        _same([_grad(lambda x: x.var(-1, correction=2.5), -0.75).item()], [NAN])
        _same(_grad(lambda x: x.var(correction=4), [1.0, 2, 3]).tolist(), [INF, NAN, INF])
        _same(_grad(lambda x: x.std(correction=3), [1.0, 2, 3]).tolist(), [NAN, NAN, NAN])


# -- pointwise gradients in PyTorch's steps ----------------------------------------------------------

def _grad_of(function, values, dtype, grad=None):
    x = tm.tensor(values, dtype=dtype, requires_grad=True)
    y = function(x)
    y.backward(tm.ones_like(y) if grad is None else grad)
    return x.grad.tolist()


def _same_complex(values, expected):
    _same([v.real for v in values], [e.real for e in expected])
    _same([v.imag for v in values], [e.imag for e in expected])


NANJ = complex(NAN, NAN)


@pytest.mark.parametrize("function, values, dtype, expected", [
    # rsqrt of 0 is a complex NaN (1 / 0), not an infinity: NaN at the branch points
    (tm.asin, [complex(-1, 0), complex(1, 0), complex(-INF, 0)], tm.complex128, [NANJ, NANJ, NANJ]),
    (tm.acos, [complex(-1, 0), complex(-INF, 0), complex(1e30, 0)], tm.complex64, [NANJ, NANJ, 0j]),
    # complex acosh takes rsqrt(z + 1) * rsqrt(z - 1): no overflow of z * z at 1e30
    (tm.acosh, [complex(-INF, 0), complex(1e30, 0), 0j], tm.complex64, [0j, complex(1.0000000031710769e-30, 0), 1j]),
    (tm.acosh, [1.0, 2.0, 1e30], tm.float32, [INF, 0.5773502588272095, 0.0]),
    (tm.sinc, [1.3251953125, 1.34375, 1.0, 0.0], tm.float16, [-0.239013671875, -0.194580078125, -1.0, 0.0]),
    (tm.i0, [65504.0, -1.576171875], tm.float16, [INF, -1.0595703125]),
    (tm.i0, [1.3251953125, 25.0], tm.bfloat16, [0.8203125, 5670699008.0]),
])
def test_pointwise_gradients_at_special_values_as_pytorch(function, values, dtype, expected):
    result = _grad_of(function, values, dtype)
    if dtype.is_complex:
        _same_complex(result, expected)
    else:
        _same(result, expected)


def test_div_gradient_of_an_infinite_complex_divisor_is_zero():
    # PyTorch's -grad * ((input / other) / other): finite / inf is 0, not inf / inf
    x = tm.tensor([(0.5223069190979004 - 0.6697349548339844j), (0.01410304382443428 - 0.05983765050768852j)],
                  dtype=tm.complex64)
    y = tm.tensor([complex(-INF, 0), (-0.8092633485794067 - 0.351921021938324j)], dtype=tm.complex64,
                  requires_grad=True)
    (x / y).backward(tm.ones(2, dtype=tm.complex64))
    grad = y.grad.tolist()
    _same_complex(grad[:1], [0j])
    assert grad[1] == pytest.approx(0.04385051876306534 - 0.06564372777938843j, rel=1e-6)


def test_complex_vector_norm_takes_cs_hypot_so_its_infinity_norm_gradient_finds_the_maximum():
    x = tm.tensor([[(-1.5725077390670776 - 1.6692638397216797j), (1.3849653005599976 + 1.5552129745483398j),
                    (1.5559509992599487 - 1.5149050951004028j)]], dtype=tm.complex64, requires_grad=True)
    norm = tm.linalg.vector_norm(x, INF, 1)
    assert norm.item() == 2.293299436569214 == x.detach().abs().max().item()
    norm.sum().backward()
    _same_complex(x.grad.flatten().tolist(), [(-0.6856966614723206 - 0.7278873920440674j), 0j, 0j])


# -- scans ----------------------------------------------------------------------------------------

def test_complex_logcumsumexp_scans_from_minus_infinity_with_infectious_nans():
    x = tm.tensor([[complex(NAN, -INF), complex(-1.3180402517318726, -1.257441759109497), complex(0.5, 0)],
                   [0j, complex(1.4365043640136719, -1.7369836568832397), 0j]], dtype=tm.complex64)
    values = tm.logcumsumexp(x, -1).tolist()
    _same_complex(values[0], [NANJ, NANJ, NANJ])
    assert values[1][0] == 0j
    assert values[1][1] == pytest.approx(complex(1.4253137111663818, -1.4975829124450684), rel=1e-6)
    assert values[1][2] == pytest.approx(complex(1.469768762588501, -1.2661601305007935), rel=1e-6)


def test_complex_logcumsumexp_gradient_sums_in_log_space():
    x = tm.tensor([[complex(-INF, 0), complex(-1, 2), complex(NAN, -0.2)], [complex(1e30, 0), complex(2, -1),
                                                                           complex(0, 0.4)]],
                  dtype=tm.complex64, requires_grad=True)
    tm.logcumsumexp(x, 0).backward(tm.full((2, 3), 1 + 1j))
    grad = x.grad.tolist()
    _same_complex([grad[0][0], grad[0][2], grad[1][2]], [NANJ, NANJ, NANJ])
    assert grad[1][0] == pytest.approx(complex(0.7071067690849304, 0.7071067690849304), rel=1e-6)
    assert grad[0][1] == pytest.approx(complex(0.9559862613677979, 0.9404404163360596), rel=1e-6)


# -- quantiles ------------------------------------------------------------------------------------

def test_quantile_picks_without_interpolating_and_lerps_from_the_nearer_end():
    x = tm.tensor([[-INF, 1e+30, -0.7595756155763773], [NAN, -0.6091877301456283, 1.7282993398690731],
                   [-1.2128709897427847, 1e+30, INF]], dtype=tm.float64)
    _same(tm.quantile(x, 0.4, -1, interpolation="lower").tolist(), [-INF, NAN, -1.2128709897427847])
    assert math.isnan(tm.quantile(tm.tensor([1.0, INF]), 0.7).item())  # inf - (inf - 1) * 0.3


def test_float32_quantile_computes_its_ranks_and_weights_in_float32():
    x = tm.tensor([[-1e30, -0.9426428635455374], [0.32608038078942664, -1.1133676524120841]], dtype=tm.float32)
    assert tm.quantile(x, 0.77, 1).tolist() == [-2.3000002612827635e+29, -0.004992712754756212]


def test_quantile_checks_q_dtype_before_the_dim_and_differentiates_no_q():
    with pytest.raises(RuntimeError, match=r"^nanquantile\(\) q tensor must be same dtype as the input tensor$"):
        tm.nanquantile(tm.tensor(1.25, dtype=tm.float64), tm.tensor([0.5, 0.75], dtype=tm.float16), 1)
    x = tm.tensor([0.59, 0.94, -1e30, -1.57, -INF], requires_grad=True)
    q = tm.zeros((0,), requires_grad=True)
    y = tm.nanquantile(x, q)
    grad_x, grad_q = tm.autograd.grad(y, [x, q], tm.ones_like(y))
    assert grad_x.tolist() == [0.0] * 5 and grad_q.shape == (0,)


# -- counts and repeats ---------------------------------------------------------------------------

def test_bincount_of_nothing_is_minlength_zeros_whatever_the_weights():
    for weights in (tm.tensor([2, 1, 0]), tm.tensor([[5.0, 1.0]]), tm.tensor(2.0), None):
        counts = tm.bincount(tm.zeros((0,), dtype=tm.int64), weights, 3)
        assert counts.tolist() == [0, 0, 0] and counts.dtype == tm.int64


@pytest.mark.parametrize("call, error, message", [
    (lambda: tm.repeat_interleave(tm.tensor(False), 2, 0, output_size=4), IndexError,
     r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"),
    (lambda: tm.repeat_interleave(tm.tensor(0.5), 3, -1), IndexError,
     r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"),
    (lambda: tm.repeat_interleave(tm.tensor(3), tm.tensor([2]), -1), IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
    (lambda: tm.repeat_interleave(tm.tensor(3), tm.tensor([2.0]), 5), IndexError,
     "Dimension specified as 5 but tensor has no dimensions"),
    (lambda: tm.repeat_interleave(tm.tensor([[0.5, 1.5]]), tm.tensor([2], dtype=tm.int8), 0), NotImplementedError,
     "\"repeat_interleave_cpu\" not implemented for 'Char'"),
    (lambda: tm.repeat_interleave(tm.tensor([[2, 3]], dtype=tm.uint8)), NotImplementedError,
     "\"repeat_interleave_cpu\" not implemented for 'Byte'"),
    (lambda: tm.repeat_interleave(tm.tensor([3, 4]), tm.tensor([2, 1, 4], dtype=tm.int16), 0), RuntimeError,
     r"repeats must have the same size as input along dim, but got repeats.size\(0\) = 3 and input.size\(0\) = 2"),
    (lambda: tm.repeat_interleave(tm.tensor([3, 4]), tm.tensor([2, 1]), 0, output_size=1), RuntimeError,
     "allocated size does not match required size"),
    (lambda: tm.repeat_interleave(tm.tensor([3, 4]), 2, 0, output_size=3), RuntimeError,
     "repeat_interleave: Invalid output_size, expected 4 but got 3"),
])
def test_repeat_interleave_errors_as_pytorch(call, error, message):
    with pytest.raises(error, match=f"^{message}$"):
        call()


# -- losses ---------------------------------------------------------------------------------------

def test_bce_with_logits_rounds_each_of_pytorchs_steps():
    t = [[0.25, 0.5, 0.75], [1.0, 0.0, 0.125]]
    # the log_sigmoid of float16 logits is a float16, even with a float64 target
    loss = tm._binary_cross_entropy_with_logits(tm.tensor(-6.1328125, dtype=tm.float16), tm.tensor(t, dtype=tm.float64),
                                                None, None, "sum")
    assert loss.item() == 16.1220703125
    # into a bfloat16 copy of the target: each step rounded, a 0-dim log_sigmoid subtracted as a bfloat16
    loss = tm._binary_cross_entropy_with_logits(tm.tensor(2.3456789, dtype=tm.float64), tm.tensor(t, dtype=tm.bfloat16),
                                                None, None, "none")
    assert loss.tolist() == [[1.8515625, 1.265625, 0.67578125], [0.09130859375, 2.4375, 2.140625]]


# -- resampling -----------------------------------------------------------------------------------

def test_linear_upsampling_weights_exactly_as_pytorch_so_infinities_meet_the_same_zeros():
    # the same size: each element times 1 plus itself times 0 (inf * 0 is NaN)
    _same(tm._upsample_linear1d(tm.tensor([[[1.0, 2.0, INF, 4.0]]]), [4], True).flatten().tolist(),
          [1.0, 2.0, NAN, 4.0])
    # the source position's multiply-add is fused (one rounding): a tiny weight, not 0, at the third output
    for dtype in (tm.float32, tm.float64):
        _same(tm._upsample_linear1d(tm.tensor([[[INF]]], dtype=dtype), [5], False).flatten().tolist(),
              [NAN, NAN, INF, INF, INF])
    # and floored as a float32: a source of 0.99999999999999989 is row 1 with weight 0
    values = tm._upsample_bilinear2d(tm.tensor([[[[1.0, 2.0], [-INF, 3.0]]]], dtype=tm.float64), [6, 2], False)
    assert all(math.isnan(v) for v in values[..., 0].flatten().tolist())
    expected = [2.0, 2.0, 2.333333333333333, 2.6666666666666665, 3.0, 3.0]
    assert values[..., 1].flatten().tolist() == pytest.approx(expected)


def test_nearest_upsampling_takes_uint8_as_pytorch():
    x = tm.tensor([[[[1, 2, 3], [4, 5, 6]]]], dtype=tm.uint8)
    out = tm.nn.functional.interpolate(x, size=(3, 7))
    assert out.dtype == tm.uint8
    assert out.tolist() == [[[[1, 1, 1, 2, 2, 3, 3], [1, 1, 1, 2, 2, 3, 3], [4, 4, 4, 5, 5, 6, 6]]]]
    with pytest.raises(NotImplementedError, match="not implemented for 'Byte'"):  # PyTorch's is fixed-point
        tm._upsample_bilinear2d(x, [3, 7], False)


def test_complex_cumprod_starts_from_one_with_plain_complex_products():
    _same_complex(tm.cumprod(tm.tensor([complex(NAN, -INF), 2j], dtype=tm.complex64), 0).tolist(), [NANJ, NANJ])
    _same_complex(tm.cumprod(tm.tensor([complex(INF, 0), 2j], dtype=tm.complex64), 0).tolist(),
                  [complex(INF, NAN), NANJ])


def test_complex_logaddexp_is_pytorchs_helper_in_the_complex_dtype():
    value = tm.logaddexp(tm.tensor(1 + 65504j, dtype=tm.complex64),
                         tm.tensor([(-0.08442278206348419 - 0.2830471396446228j)], dtype=tm.complex64)).tolist()
    assert value == [pytest.approx(0.8808556795120239 + 65503.66015625j, rel=1e-9)]  # 0.8802 widened
    values = tm.logaddexp(tm.tensor([complex(NAN, 1), complex(-INF, 2), complex(INF, 1)], dtype=tm.complex128),
                          tm.tensor([1j, complex(-INF, 3), complex(INF, 0)], dtype=tm.complex128)).tolist()
    _same_complex(values, [NANJ, complex(-INF, 3), complex(INF, 0.7853981633974483)])


@pytest.mark.parametrize("call", [
    lambda x: tm.prod(x, dtype=tm.int32), lambda x: tm.nansum(x, dtype=tm.int32),
    lambda x: tm.cumsum(x, 1, dtype=tm.int32), lambda x: tm.cumprod(x, 1, dtype=tm.int64),
])
def test_reductions_to_an_integer_dtype_refuse_autograd(call):
    x = tm.tensor([[0.625, 0.8203125]], requires_grad=True)
    with pytest.raises(RuntimeError, match="^Autograd not support dtype: (Int|Long)$"):
        call(x)
    with tm.no_grad():
        assert not call(x).requires_grad


def test_normalisation_gradients_at_an_infinite_weight_as_pytorchs_kernels():
    x = tm.tensor([[1.0, 2, 3, 4], [0, -1, 2, 5], [3, 3, 1, 2]], dtype=tm.float64, requires_grad=True)
    w = tm.tensor([1.5, -1.2, INF, -1.5], dtype=tm.float64)
    g = tm.tensor([[0.5, 1, 1.5, 0.7], [1, 1, 1, 1], [0.2, 0.3, 0.4, 0.5]], dtype=tm.float64)
    # layer and group norm fold the weight into the output's gradient first: all NaN
    for function in (lambda: tm._native_group_norm(x, w, None, 3, 4, 1, 1, 1e-5),
                     lambda: tm._native_layer_norm(x, [4], w, None, 1e-5)):
        x.grad = None
        function().backward(g)
        assert all(math.isnan(v) for v in x.grad.flatten().tolist())
    # batch norm multiplies it last: infinities in that channel
    x.grad = None
    tm._native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5).backward(g)
    assert x.grad[:, 2].tolist() == [-INF, INF, -INF]
    assert x.grad[0, 0].item() == pytest.approx(-0.18040011414795648)


def test_trapezoid_gradient_with_sample_points_broadcast_over_leading_dimensions():
    y = tm.tensor([[[-0.5, -1, 0.25], [1.5, -1.75, -1.5]], [[-0.75, 1.75, -1], [-1.5, -1.5, -1.625]]],
                  dtype=tm.float64, requires_grad=True)
    x = tm.tensor([[-2, 1.25, 2], [1.5, -0.75, 0.75]], dtype=tm.float64, requires_grad=True)
    tm.trapezoid(y, x, dim=1).sum().backward()
    assert y.grad.tolist() == [[[1.75, -1.0, -0.625]] * 2] * 2
    assert x.grad.tolist() == [[0.625, 1.25, 1.9375], [-0.625, -1.25, -1.9375]]


def test_det_gradient_of_a_batch_with_singular_and_non_finite_matrices_computes():
    A = tm.tensor([[[-0.375, 0.0], [-1.75, -0.1875]], [[INF, -1.625], [-1.0625, 0.75]], [[-1.0, NAN], [-0.5, -1.5]],
                   [[0.625, -0.25], [0.0, 0.0]]], dtype=tm.float64, requires_grad=True)
    tm.linalg.det(A).sum().backward()  # the singular matrix took the SVD, which a NaN made raise
    grad = A.grad.tolist()
    assert grad[0][0] + grad[0][1] == pytest.approx([-0.1875, 1.75, 0.0, -0.375])
    _same(grad[1][0] + grad[1][1], [NAN, NAN, NAN, INF])  # the inverse's formula, as PyTorch's LU solve
    assert all(math.isnan(v) for v in grad[2][0] + grad[2][1])


@pytest.mark.parametrize("call, shape, dtype", [
    (lambda: tm.linalg.det(tm.zeros((0, 3, 3), dtype=tm.bfloat16)), (0,), tm.bfloat16),
    (lambda: tm.linalg.det(tm.zeros((2, 0, 0), dtype=tm.float16)), (2,), tm.float16),
    (lambda: tm.linalg.eigvalsh(tm.zeros((0, 3, 3), dtype=tm.uint8)), (0, 3), tm.uint8),
    (lambda: tm.linalg.eigh(tm.zeros((0, 0), dtype=tm.bool)).eigenvectors, (0, 0), tm.bool),
    (lambda: tm.linalg.svdvals(tm.zeros((0, 2), dtype=tm.bfloat16)), (0,), tm.bfloat16),
    (lambda: tm.linalg.svd(tm.zeros((0, 2), dtype=tm.float16)).Vh, (2, 2), tm.float16),
])
def test_linalg_of_empty_tensors_dispatches_on_no_dtype(call, shape, dtype):
    result = call()
    assert (tuple(result.shape), result.dtype) == (shape, dtype)
    if result.numel():
        assert result.tolist() in ([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        tm.linalg.det(tm.zeros((2, 2), dtype=tm.float16))


def test_complex_powers_as_pytorchs_kernels():
    # integer exponents are C's cpow, exp(y log x), not multiplied out (NumPy's overflow and 1 / inf are NaN)
    values = tm.pow(tm.tensor([complex(-INF, 0), complex(1e300, 0), complex(1e300, 1e300)], dtype=tm.complex128),
                    tm.tensor([complex(-1, 0), complex(4, 0), complex(8, 0)], dtype=tm.complex128)).tolist()
    _same_complex(values, [0j, complex(INF, 0), complex(INF, -INF)])
    # complex64 squares in complex64; x ** -0.5 is 1 / sqrt(x)
    assert tm.pow(tm.tensor([complex(1e30, 0), complex(3e19, 1)], dtype=tm.complex64), 2).tolist() == \
        [complex(INF, 0), complex(INF, 6.000000208206194e+19)]
    roots = tm.pow(tm.tensor([complex(-INF, 0), 0j], dtype=tm.complex128), -0.5)
    _same_complex(roots.tolist(), [0j, complex(INF, NAN)])
    x = tm.tensor(-INF, dtype=tm.bfloat16, requires_grad=True)
    tm.float_power(x, tm.tensor(1e-40 + 0j, dtype=tm.complex64)).backward(tm.tensor(1 + 0j, dtype=tm.complex128))
    assert x.grad.item() == 0.0


def test_det_gradient_of_no_matrices_needs_no_inverse():
    A = tm.zeros((2, 0, 0), dtype=tm.float16, requires_grad=True)
    tm.linalg.det(A).sum().backward()
    assert A.grad.shape == (2, 0, 0) and A.grad.dtype == tm.float16


# -- found by seeds 7 and 8 -----------------------------------------------------------------------

def test_bfloat16_trapezoid_stays_bfloat16():
    # a 0-dim bfloat16 times a Python float computed (and stayed) in float32 in the shared binary helper
    result = tm.trapezoid(tm.tensor([0.97265625, -0.86328125, -0.421875], dtype=tm.bfloat16))
    assert result.dtype == tm.bfloat16 and result.item() == -0.5859375


@pytest.mark.parametrize("function, name", [(tm.median, "median"), (tm.nanmedian, "nanmedian")])
def test_median_of_an_empty_complex_tensor_refuses_autograd(function, name):
    with pytest.raises(RuntimeError, match=f"^{name} does not support automatic differentiation for outputs with "
                                           f"complex dtype.$"):
        function(tm.zeros((2, 0, 3), dtype=tm.complex128, requires_grad=True))


def test_more_error_orders_and_overflows_as_pytorch():
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], but "
                                         r"got 1\)$"):
        tm.logcumsumexp(tm.tensor(True), 1)
    with pytest.raises(RuntimeError, match="^IntArrayRef contains an int that cannot be represented as a SymInt: "
                                           "-9223372036854775808$"):
        tm.repeat_interleave(tm.tensor([0, 2**63 - 1, 1]))


def test_gradients_that_raised_where_pytorch_computes():
    x, w = tm.tensor([-1.25, 0.0625, 1.5], requires_grad=True), tm.zeros((0, 3), requires_grad=True)
    tm.nn.functional.linear(x, w).sum().backward()  # a weight without rows
    assert x.grad.tolist() == [0.0, 0.0, 0.0] and w.grad.shape == (0, 3)
    x = tm.ones((2, 3), dtype=tm.float16, requires_grad=True)
    tm.index_fill(x, 0, tm.tensor(-1), tm.tensor(-2)).sum().backward()  # an integer value has no gradient
    assert x.grad.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


def test_fixed_open_bugs_of_the_fuzzer_table():
    # std of one complex element: var_backward's NaN at the mean keeps the imaginary part 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = tm.tensor(-0.6 - 0.06j, requires_grad=True)
        grad = tm.autograd.grad(tm.std(x, 0), x)[0].item()
    assert math.isnan(grad.real) and grad.imag == 0
    # complex64 squares in complex64: z * z of (-inf - 1e30j) is nan + inf j
    _same_complex(tm.pow(tm.tensor([complex(-INF, -1e30)], dtype=tm.complex64), 2).tolist(), [complex(NAN, INF)])
