"""Differences from PyTorch found by the differential fuzzer (issue 22, fourth sweep), each pinned
with PyTorch 2.13's own values, types and messages, so that these run without torch installed
too."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm

NAN, INF = float("nan"), float("inf")


def _same(values, expected):
    assert len(values) == len(expected), (values, expected)
    for v, e in zip(values, expected):
        assert (math.isnan(v) and math.isnan(e)) or v == e, (values, expected)


# -- reductions -----------------------------------------------------------------------------------

def test_sum_into_an_integer_dtype_refuses_autograd():
    x = tm.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Autograd not support dtype: Long$"):
        x.sum(dtype=tm.int64)
    with pytest.raises(RuntimeError, match="^Autograd not support dtype: Int$"):
        tm.sum(x, 0, dtype=tm.int32)
    assert x.sum(dtype=tm.float64).grad_fn is not None
    with tm.no_grad():
        assert x.sum(dtype=tm.int64).item() == 3


# -- products -------------------------------------------------------------------------------------

def test_tensordot_checks_the_dtypes_before_the_dims():
    a, b = tm.zeros(2, 3), tm.zeros(4, 5, dtype=tm.float64)
    for dims in (1, ([0], [5]), ([0, 0], [0, 1])):
        with pytest.raises(RuntimeError, match="^both inputs should have same dtype$"):
            tm.tensordot(a, b, dims)
    with pytest.raises(RuntimeError, match="^both dimension lists should have same length$"):
        tm.tensordot(a, b, ([0], [0, 1]))
    with pytest.raises(RuntimeError, match=r"^tensordot expects dims < ndim_a or ndim_b, but got dims=3$"):
        tm.tensordot(a, b, 3)


def test_cdist_of_half_inputs_as_pytorch():
    for dtype, name in ((tm.float16, "Half"), (tm.bfloat16, "BFloat16")):
        with pytest.raises(NotImplementedError, match=f"^\"cdist\" not implemented for '{name}'$"):
            tm.cdist(tm.ones(2, 3, dtype=dtype), tm.ones(4, 3, dtype=dtype))
        # x1's kernel is chosen before x2's dtype is compared
        with pytest.raises(NotImplementedError, match=f"^\"cdist\" not implemented for '{name}'$"):
            tm.cdist(tm.ones(2, 3, dtype=dtype), tm.ones(4, 3))
        # no rows, no columns: no kernel runs
        for s1, s2, values in (((0, 3), (4, 3), []), ((2, 3), (0, 3), [[], []]), ((2, 0), (3, 0), [[0.0] * 3] * 2)):
            out = tm.cdist(tm.ones(s1, dtype=dtype), tm.ones(s2, dtype=tm.float32))
            assert out.dtype == dtype and out.tolist() == values
        assert tm.cdist(tm.ones(3, 0, 3, dtype=dtype), tm.ones(4, 3)).shape == (3, 0, 4)
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Half$"):
        tm.cdist(tm.ones(2, 3), tm.ones(4, 3, dtype=tm.float16))
    assert tm.cdist(tm.ones(2, 0), tm.ones(4, 0, dtype=tm.float64)).dtype == tm.float32
    with pytest.raises(ValueError, match="^x is not a valid value for compute_mode$"):
        tm.cdist(tm.ones(2, 3), tm.ones(4, 3), compute_mode="x")


def test_cdist_through_a_matrix_product_as_pytorch():
    a = tm.tensor([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], dtype=tm.float16)
    b = tm.tensor([[1.0, 2.0, -0.5], [0.0, 0.5, 1.0], [2.5, -1.0, 0.0]], dtype=tm.float16)
    assert tm.cdist(a, b, compute_mode="use_mm_for_euclid_dist").tolist() == [
        [4.12890625, 2.076171875, 2.83984375], [1.8369140625, 2.318359375, 1.767578125]]
    assert tm.cdist(a.bfloat16(), b.bfloat16(), compute_mode="use_mm_for_euclid_dist").tolist() == [
        [4.125, 2.078125, 2.84375], [1.8359375, 2.3125, 1.765625]]
    # more than 25 rows take that route by default
    assert tm.cdist(tm.ones(30, 3, dtype=tm.float16), tm.zeros(2, 3, dtype=tm.float16))[0].tolist() == [
        1.732421875, 1.732421875]
    with pytest.raises(RuntimeError, match=r"^expected m1 and m2 to have the same dtype, but got: float != double$"):
        tm.cdist(tm.ones(30, 3), tm.ones(4, 3, dtype=tm.float64))
    with pytest.raises(RuntimeError, match="^expected scalar type Double but found Float$"):
        tm.cdist(tm.ones(2, 30, 3), tm.ones(2, 4, 3, dtype=tm.float64))


def test_matrix_power_follows_pytorchs_chain_of_products():
    x = tm.tensor([[1.0, INF], [0.5, 2.0]], requires_grad=True)
    y = tm.matrix_power(x, 3)
    assert y.tolist() == [[INF, INF], [INF, INF]]
    y.sum().backward()
    assert x.grad.tolist() == [[INF, INF], [INF, INF]]  # no identity matrix (0 * inf) in the chain
    x = tm.tensor([[1e30, 2.0], [3.0, 1e-30]], requires_grad=True)
    tm.matrix_power(x, 3).sum().backward()
    assert x.grad.tolist() == [[INF, INF], [INF, 5.0000002263530586e+30]]
    x = tm.tensor([[1.1, 2.3], [0.7, -1.9]], requires_grad=True)
    y = tm.matrix_power(x, 3)
    assert y.tolist() == [[1.814000129699707, 9.981999397277832], [3.0379998683929443, -11.205999374389648]]
    y.sum().backward()
    assert x.grad.tolist() == [[9.360000610351562, 4.760000228881836], [5.720000267028809, 7.559999942779541]]


def test_matrix_power_of_a_singular_batch_names_the_element():
    batch = tm.tensor([[[1.0, 2], [3, 4]], [[1, 2], [2, 4]]])
    with pytest.raises(tm.linalg.LinAlgError, match=r"^linalg\.inv: \(Batch element 1\): The diagonal element 2 is "
                                                   r"zero, the inversion could not be completed because the input "
                                                   r"matrix is singular\.$"):
        tm.matrix_power(batch, -2)
    with pytest.raises(tm.linalg.LinAlgError, match=r"^linalg\.inv: The diagonal element 2 is zero"):
        tm.matrix_power(batch[1], -1)


def test_vander_columns_are_pytorchs_cumprod():
    out = tm.vander(tm.tensor([complex(INF, 1), complex(0, INF), complex(NAN, -INF), 2j]), 4)
    got = [(z.real, z.imag) for z in out.flatten().tolist()]
    expected = [(NAN, NAN), (NAN, NAN), (INF, NAN), (1, 0), (NAN, NAN), (NAN, NAN), (NAN, INF), (1, 0),
                (NAN, NAN), (NAN, NAN), (NAN, NAN), (1, 0), (-0.0, -8), (-4, 0), (0, 2), (1, 0)]
    _same([v for pair in got for v in pair], [v for pair in expected for v in pair])
    # half types accumulate in float32, rounding each column
    x = tm.tensor([1.1, 2.3, -3.7, 7.77])
    assert tm.vander(x.half(), 6)[:2].tolist() == [
        [1.607421875, 1.4619140625, 1.3291015625, 1.208984375, 1.099609375, 1.0],
        [64.5, 28.015625, 12.1796875, 5.29296875, 2.30078125, 1.0]]
    assert tm.vander(x.bfloat16(), 6)[:, 0].tolist() == [1.625, 64.0, -696.0, 28544.0]
    assert tm.vander(x.bfloat16(), 6)[2, 2].item() == -50.75


def test_trace_and_cross_refuse_bool_first():
    for shape in ((3,), (2, 2, 2), (0, 0)):
        with pytest.raises(NotImplementedError, match="^\"trace\" not implemented for 'Bool'$"):
            tm.trace(tm.ones(shape, dtype=tm.bool))
    for shape, dim in (((3,), 0), ((0, 3), 1)):
        with pytest.raises(NotImplementedError, match="^\"cross\" not implemented for 'Bool'$"):
            tm.cross(tm.ones(shape, dtype=tm.bool), tm.ones(shape), dim=dim)
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Bool$"):
        tm.cross(tm.ones(3), tm.ones(3, dtype=tm.bool), dim=0)
    with pytest.raises(RuntimeError, match="^The size of tensor a \\(2\\) must match the size of tensor b \\(4\\) at "
                                           "non-singleton dimension 0$"):
        tm.cross(tm.ones(2, 3), tm.ones(4, 3, dtype=tm.int32), dim=1)


# -- random ---------------------------------------------------------------------------------------

def test_poisson_is_recorded_with_a_zero_gradient():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    y = tm.poisson(x)
    assert y.requires_grad and type(y.grad_fn).__name__ == "PoissonBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    with tm.no_grad():
        assert not tm.poisson(x).requires_grad


def test_poisson_past_int64_gives_int64s_smallest_value():
    smallest = -9.223372036854776e+18
    out = tm.poisson(tm.tensor([1e19, INF, 1e30, 0.0]))
    assert out.tolist() == [smallest, smallest, smallest, 0.0]
    assert tm.poisson(tm.tensor([1e19, INF], dtype=tm.float64)).tolist() == [smallest, smallest]
    assert tm.poisson(tm.tensor([INF], dtype=tm.float16)).tolist() == [-INF]
    assert tm.poisson(tm.tensor(1e19)).item() == smallest
    with pytest.raises(RuntimeError, match="^invalid Poisson rate, expected rate to be non-negative$"):
        tm.poisson(tm.tensor([NAN]))


def test_bernoulli_checks_dtypes_only_when_there_is_data():
    assert tm.bernoulli(tm.zeros(0, 2, dtype=tm.complex64), 0.5).shape == (0, 2)
    assert tm.bernoulli(tm.zeros(0, dtype=tm.complex64)).dtype == tm.complex64
    assert tm.bernoulli(tm.zeros(0, dtype=tm.int64)).dtype == tm.int64
    assert tm.zeros(0, dtype=tm.int64).bernoulli_(tm.zeros(0, dtype=tm.int64)).shape == (0,)
    with pytest.raises(NotImplementedError, match="^\"bernoulli_scalar_cpu_\" not implemented for 'ComplexFloat'$"):
        tm.bernoulli(tm.zeros(2, dtype=tm.complex64), 0.5)
    with pytest.raises(NotImplementedError,
                       match="^\"bernoulli_tensor_cpu_self_\" not implemented for 'ComplexFloat'$"):
        tm.zeros(2, dtype=tm.complex64).bernoulli_(tm.zeros(2))
    with pytest.raises(RuntimeError, match=r"^bernoulli_ expects p to be in \[0, 1\], but got p=1.5$"):
        tm.bernoulli(tm.zeros(0, dtype=tm.complex64), 1.5)


# -- nn -------------------------------------------------------------------------------------------

def test_linear_of_half_types_keeps_the_dtype_and_pytorchs_rounding():
    import tensormodes.nn.functional as F

    x = tm.tensor([[1.5, -2.25, 3.1], [0.3, 0.7, -1.1]])
    w = tm.tensor([[0.11, 2.2, -0.7], [1.3, -0.45, 0.9]])
    b = tm.tensor([100.3, -0.05])
    bf = [t.to(tm.bfloat16) for t in (x, w, b)]
    out = F.linear(bf[0], bf[1])
    assert out.dtype is tm.bfloat16 and out.tolist() == [[-6.96875, 5.75], [2.34375, -0.9140625]]
    assert F.linear(*bf).tolist() == [[93.5, 5.6875], [103.0, -0.96484375]]
    h = [t.half() for t in (x, w, b)]
    assert F.linear(h[0], h[1]).tolist() == [[-6.953125, 5.75], [2.34375, -0.91455078125]]
    # the fused addmm rounds once; a non-contiguous batch's matmul, then add_, rounds twice
    assert F.linear(*h).tolist() == [[93.375, 5.703125], [102.625, -0.96435546875]]
    batch = h[0].expand(2, 2, 3).transpose(0, 1)
    assert F.linear(batch, h[1], h[2])[0].tolist() == [[93.375, 5.69921875], [93.375, 5.69921875]]


def test_matmul_folds_a_batch_only_as_pytorch_does():
    # 2-D by 3-D is never folded into an mm: bmm makes an empty result of the second operand's dtype
    out = tm.matmul(tm.zeros(2, 3, dtype=tm.int64), tm.zeros(0, 3, 2))
    assert out.dtype == tm.float32 and out.shape == (0, 2, 2)
    out = tm.matmul(tm.zeros(2, 2, 3, dtype=tm.int64), tm.zeros(2, 3, 0))
    assert out.dtype == tm.float32 and out.shape == (2, 2, 0)
    out = tm.matmul(tm.zeros(2, 2, 0, dtype=tm.bool), tm.zeros(2, 0, 2, dtype=tm.bool))
    assert out.dtype == tm.bool and out.tolist() == [[[False, False]] * 2] * 2
    # a vector by an empty batch is folded (into an mv of the transposed batch)
    with pytest.raises(RuntimeError, match="^addmv input tensors must have the same dtype, but got Long, Float, "
                                           "and Long$"):
        tm.matmul(tm.zeros(3, dtype=tm.int64), tm.zeros(0, 3, 2))
    # an empty batch by a matrix is folded into an mm
    with pytest.raises(RuntimeError, match="^expected m1 and m2 to have the same dtype, but got: long int != float$"):
        tm.matmul(tm.zeros(2, 0, 3, dtype=tm.int64), tm.zeros(3, 1))
    # a batch whose dimensions are not laid out as one is not folded: bmm's words
    batch = tm.zeros(3, 2, 4).transpose(0, 1)
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Long$"):
        tm.matmul(batch, tm.zeros(4, 2, dtype=tm.int64))
    with pytest.raises(RuntimeError, match=r"^Expected size for first two dimensions of batch2 tensor to be: "
                                           r"\[2, 4\] but got: \[2, 5\]\.$"):
        tm.matmul(batch, tm.zeros(5, 2))


# -- complex log1p --------------------------------------------------------------------------------

def test_complex_log1p_is_nan_wherever_a_part_is_nan():
    x = tm.tensor([complex(NAN, -INF), complex(INF, NAN), complex(2, NAN), 0.1573658287525177 + 0.0009754309430718422j],
                  dtype=tm.complex64)
    for out in (tm.log1p(x), tm.special.log1p(x)):
        parts = [v for z in out.tolist() for v in (z.real, z.imag)]
        _same(parts[:6], [NAN] * 6)
        assert parts[6:] == pytest.approx([0.1461469531059265, 0.0008428024593740702], rel=1e-6)


def test_complex_soft_margin_loss_rounds_the_product_before_exp():
    import tensormodes.nn.functional as F

    x = tm.tensor([[complex(INF, 0), 0.5 + 65504j]], dtype=tm.complex64)
    y = tm.tensor([[-1e30, 1.7105904965501284]], dtype=tm.float64)
    out = F.soft_margin_loss(x, y, reduction="none").flatten().tolist()
    _same([out[0].real, out[0].imag], [NAN, NAN])
    assert out[1].real == pytest.approx(-0.33674705028533936, rel=1e-6)
    assert out[1].imag == pytest.approx(-0.3745535612106323, rel=1e-6)


# -- resampling -----------------------------------------------------------------------------------

def test_linear_upsampling_of_half_types_rounds_as_pytorch():
    # 1-D: the weights are stored in the dtype (the near one as 1 minus the rounded far one)
    x = tm.tensor([[[1000.0, 0.0]]], dtype=tm.float16)
    assert tm._upsample_linear1d(x, [7], False).tolist() == [[[1000.0, 1000.0, 785.5, 500.0, 214.375, 0.0, 0.0]]]
    assert tm._upsample_linear1d(x.bfloat16(), [7], False).tolist() == [[[1000.0, 1000.0, 784.0, 500.0, 215.0, 0.0,
                                                                          0.0]]]
    # 2-D: float32 weights, one rounding at the end
    x = tm.tensor([[[[0.0, 1000.0], [1000.0, 0.0]]]], dtype=tm.float16)
    assert tm._upsample_bilinear2d(x, [3, 5], False).flatten().tolist() == [
        0.0, 100.0, 500.0, 900.0, 1000.0, 500.0, 500.0, 500.0, 500.0, 500.0, 1000.0, 900.0, 500.0, 100.0, 0.0]
    assert tm._upsample_bilinear2d(x.bfloat16(), [3, 5], True).flatten().tolist() == [
        0.0, 250.0, 500.0, 752.0, 1000.0, 500.0, 500.0, 500.0, 500.0, 500.0, 1000.0, 752.0, 500.0, 250.0, 0.0]
    x = tm.tensor([[[[-1.922, -0.6143, 65504.0, -0.3076], [0.3738, 0.396, 1.435, 1.285],
                     [1.883, 0.4653, 0.6426, -1.878]]]], dtype=tm.float16)
    assert tm._upsample_bilinear2d(x, [6, 8], False)[0, 0, 2].tolist() == [
        -0.2001953125, -0.1142578125, 0.05755615234375, 4094.0, 12280.0, 12280.0, 4094.0, 0.88671875]


# -- losses ---------------------------------------------------------------------------------------

def test_logits_loss_input_gradient_rounds_each_step_as_pytorchs_in_place_backward():
    import tensormodes.nn.functional as F

    x = tm.tensor([12.245514728311095, -15.33399018788509, 2.508593080354673, -3.406617636767579,
                   -2.715895752662675, -1.2935829785385953]).to(tm.bfloat16).requires_grad_()
    t = tm.tensor([0.0014900835088361708, 0.9734602747664127, 0.29840122301687566, 0.3139860020343368,
                   0.8917110704451572, 0.5851629398909081], dtype=tm.float64)
    g = tm.tensor([-11.680338898591787, 1.9351203166469975, 4.9038141974457305, -3.1133721897794886,
                   -7.534840880705653, 0.18287383473823537], dtype=tm.float64)
    F.binary_cross_entropy_with_logits(x, t, reduction="none").backward(g)
    # sigmoid(x) - t is rounded to bfloat16 before the product (0.8789... in one rounding)
    assert x.grad.tolist() == [-11.6875, -1.8828125, 3.078125, 0.875, 6.25, -0.06787109375]


# -- exception classes ----------------------------------------------------------------------------

def test_multinomial_without_categories():
    with pytest.raises(RuntimeError, match=r"^invalid multinomial distribution \(sum of probabilities <= 0\)$"):
        tm.multinomial(tm.zeros(3, 0, dtype=tm.float64), 4, True)
    with pytest.raises(RuntimeError, match=r"^aminmax\(\): cannot compute aminmax over an empty dimension"):
        tm.multinomial(tm.zeros(0, dtype=tm.float64), 1, True)
    with pytest.raises(RuntimeError, match="^cannot sample n_sample > prob_dist.size"):
        tm.multinomial(tm.zeros(3, 0), 4, False)
    assert tm.multinomial(tm.zeros(0, 3), 2, True).shape == (0, 2)


def test_nansum_and_nanmean_check_the_dims_before_refusing_complex():
    z = tm.tensor(1 + 2j, dtype=tm.complex128)
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], "
                                         r"but got 1\)$"):
        tm.nanmean(z, 1, dtype=tm.float64)
    with pytest.raises(IndexError, match="^Dimension out of range"):
        tm.nansum(z, 1)
    with pytest.raises(RuntimeError, match="^nansum on CPU does not support complex inputs$"):
        tm.nanmean(z.reshape(1), 0)


def test_repeat_interleave_past_int64_storage():
    with pytest.raises(RuntimeError, match=r"^Storage size calculation overflowed with sizes=\[9223372036854775807\]$"):
        tm.repeat_interleave(tm.ones(2, 3), tm.tensor([9223372036854775807, 0]), 0)
    with pytest.raises(RuntimeError, match=r"^Storage size calculation overflowed with sizes=\[1152921504606846976\]$"):
        tm.repeat_interleave(tm.tensor([2 ** 60, 0]))


def test_quantile_gradients_where_a_slice_gives_nan():
    x = tm.tensor([[1.0, NAN, 3.0], [2.0, -INF, 5.0]], requires_grad=True)
    q = tm.tensor([0.3, 0.6], requires_grad=True)
    grad_x, grad_q = tm.autograd.grad(tm.quantile(x, q, 1), [x, q], tm.ones(2, 2))
    assert grad_q.tolist() == [INF, 6.0]  # the NaN slice's ranks are masked: no NaN for q
    assert grad_x.tolist() == [[0.0, 2.0, 0.0], [1.399999976158142, 0.3999999761581421, 0.20000004768371582]]
    # nanquantile of nothing but NaN: PyTorch's rank 0 (the first element)
    x = tm.tensor([[1.0, 2.0], [NAN, NAN]], requires_grad=True)
    q = tm.tensor([0.2], requires_grad=True)
    grad_x, grad_q = tm.autograd.grad(tm.nanquantile(x, q, 1), [x, q], tm.ones(1, 2))
    assert grad_x.tolist() == [[0.800000011920929, 0.20000000298023224], [1.0, 0.0]] and grad_q.tolist() == [1.0]


def test_embedding_bag_backward_refuses_2d_indices():
    weight = tm.ones(5, 3, requires_grad=True)
    out = tm._embedding_bag(weight, tm.tensor([[0, 1, 2], [1, 1, 2]]), tm.tensor([0]))
    assert out.tolist() == [[6.0, 6.0, 6.0]]
    with pytest.raises(IndexError, match="^index_select\\(\\): Index is supposed to be a vector$"):
        out.sum().backward()


def test_angle_gradient_in_pytorchs_order():
    x = tm.tensor([0j, 1e-40 + 0j, 1e-40j, 1 + 1j, 65504 + 0j], dtype=tm.complex64, requires_grad=True)
    grad = tm.autograd.grad(tm.angle(x), x, tm.full((5,), 2.0))[0].tolist()
    parts = [v for z in grad for v in (z.real, z.imag)]
    # |z|^2 underflows to 0 at 1e-40: grad * z / 0 is (inf, nan), times 1j NaN in both parts
    _same(parts, [0.0, 0.0, NAN, NAN, NAN, NAN, -1.0000001192092896, 1.0000001192092896, 0.0, 3.053248656215146e-05])


def test_complex_diff_subtracts_as_pytorchs_sub():
    x = tm.tensor([[complex(NAN, 0), -1.4 - 1.2j, 0.85 + 1.2j, complex(INF, 0), 1j]], dtype=tm.complex64)
    parts = [v for z in tm.diff(x).flatten().tolist() for v in (z.real, z.imag)]
    _same(parts, [NAN, NAN, 2.25, 2.4000000953674316, INF, -1.2000000476837158, -INF, NAN])


def test_complex_cumprod_of_an_empty_dim():
    assert tm.cumprod(tm.zeros(0, 3, dtype=tm.complex128), 0).shape == (0, 3)


def test_index_add_refuses_a_dim_the_source_lacks():
    x = tm.tensor([[1.0, 2, 3], [4, 5, 6]])
    with pytest.raises(RuntimeError, match="^index_add_\\(\\): Indexing dim 1 is out of bounds of the source tensor "
                                           "with dim 0$"):
        tm.index_add(x, 1, tm.tensor([2, 0], dtype=tm.int32), tm.tensor(0.175), alpha=2)
    with pytest.raises(RuntimeError, match="with dim 1$"):
        tm.index_add(x, -1, tm.tensor([0]), tm.ones(3))
    with pytest.raises(IndexError, match="^Dimension specified as 0 but tensor has no dimensions$"):
        tm.index_add(tm.tensor(1.0), 0, tm.tensor([0, 0]), tm.tensor(0.175))


def test_logical_ops_refuse_what_would_be_complex32():
    half = tm.tensor([1.2, 0.4], dtype=tm.float16)
    for op, name in ((tm.logical_or, "logical_or"), (tm.logical_and, "logical_and"), (tm.logical_xor, "logical_xor")):
        with pytest.raises(NotImplementedError, match=f"^\"{name}_cpu\" not implemented for 'ComplexHalf'$"):
            op(tm.tensor(0.3 - 0.5j), half)
    assert tm.logical_or(tm.tensor([0.3 - 0.5j]), half).tolist() == [True, True]
    assert tm.logical_or(tm.tensor(1.0, dtype=tm.float16), tm.tensor(1j)).item() is True


def test_qr_backward_through_a_nan_matrix_gives_nan_not_an_error():
    x = tm.tensor([[[1.0, -0.92, 1e-40, 65504.0], [0.0, -0.0, -1.95, -1.23]],
                   [[1.48, -0.0, -1.99, 1.6], [NAN, -1.7, 1.93, -0.95]]], requires_grad=True)
    q, r = tm.linalg.qr(x)
    grad = tm.autograd.grad([q, r], [x], [tm.ones_like(q), tm.ones_like(r)])[0]
    _same(grad.flatten().tolist(), [NAN, NAN, 1.0, 1.0, NAN, NAN, 1.0, 1.0] + [NAN] * 8)


def test_vector_norm_of_one_element_is_its_absolute_value():
    x = tm.tensor([[-1e30], [3.0], [0.0]])
    for order in (2, 3, -1, 0.5, -INF):
        assert tm.linalg.vector_norm(x, ord=order, dim=1).tolist() == [1.0000000150474662e+30, 3.0, 0.0]
    assert tm.linalg.vector_norm(x, ord=0, dim=1).tolist() == [1.0, 1.0, 0.0]
    assert tm.linalg.vector_norm(tm.tensor(-1e30)).item() == 1.0000000150474662e+30
    assert tm.linalg.vector_norm(tm.tensor([3e30, 4e30])).item() == INF  # two elements: the square overflows
    y = tm.tensor([-1e30], requires_grad=True)
    tm.norm(y).backward()
    assert y.grad.tolist() == [-1.0]


def test_sort_checks_the_dim_before_refusing_complex():
    for op in (tm.sort, tm.argsort):
        with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], "
                                             r"but got 1\)$"):
            op(tm.tensor(1 + 2j), 1)
    with pytest.raises(RuntimeError, match="^ Sort does not support complex dtypes on CPU$"):
        tm.sort(tm.tensor([1 + 2j]), 0)


def test_pow_exponent_gradient_logs_the_base_in_the_result_dtype():
    exponent = tm.tensor([1e-40 + 0j, -1.3 - 1.49j], dtype=tm.complex64, requires_grad=True)
    grad = tm.autograd.grad(tm.pow(tm.tensor(-4), exponent), exponent, tm.ones(2, dtype=tm.complex64))[0]
    assert [(z.real, z.imag) for z in grad.tolist()] == [(1.3862943649291992, -3.1415927410125732),
                                                         (17.00417137145996, -58.683921813964844)]
    # 0 ** e: no gradient in e only where e is real and >= 0
    base, exponent = tm.tensor([0.0, 0.0]), tm.tensor([1j, 0j], requires_grad=True)
    grad = tm.autograd.grad(tm.pow(base, exponent), exponent, tm.ones(2, dtype=tm.complex64))[0].tolist()
    _same([grad[0].real, grad[0].imag, grad[1].real, grad[1].imag], [NAN, NAN, 0.0, 0.0])


def test_soft_margin_loss_gradient_in_pytorchs_steps():
    import tensormodes.nn.functional as F

    x = tm.tensor([[1.4607259035110474, 1.1065714359283447, 0.46579709649086], [0.3704730272293091, NAN, INF]],
                  requires_grad=True)
    t = tm.tensor([[1, 1, 2], [-1, 0, -1]], dtype=tm.int8)
    grad = tm.autograd.grad(F.soft_margin_loss(x, t, reduction="sum"), x)[0].flatten().tolist()
    # exp(inf) / (1 + exp(inf)) is NaN in PyTorch's backward
    _same(grad[4:], [NAN, NAN])


def test_pow_exponent_gradient_with_a_bfloat16_base():
    # (fixes the fuzzer's OPEN_BUGS ("pow", "gradient values") example: the base is logged in float32)
    exponent = tm.tensor([1.8564502000808716], requires_grad=True)
    grad = tm.autograd.grad(tm.pow(tm.tensor([3.046875], dtype=tm.bfloat16), exponent).sum(), exponent)[0]
    assert grad.tolist() == [8.814193725585938]


def test_cdist_inf_norm_gradient_gives_every_tie_the_whole_gradient():
    """PyTorch's cdist kernel (p=inf): each coordinate at the maximum gets the whole gradient with its
    sign (norm's gradient shares it instead); an infinite coordinate's gap is NaN."""
    a = tm.tensor([[float("inf"), 0.0], [1.0, 2.0], [3.0, 1.0]], requires_grad=True)
    b = tm.tensor([[0.0, 1.0]], requires_grad=True)
    tm.cdist(a, b, p=float("inf")).sum().backward()
    assert str(a.grad.tolist()) == "[[nan, 0.0], [1.0, 1.0], [1.0, 0.0]]"
    assert str(b.grad.tolist()) == "[[nan, -1.0]]"


def test_as_tensor_of_a_tensor_that_requires_grad_converts_with_history():
    """PyTorch's as_tensor converts a tensor of another dtype with ``to``: ToCopyBackward0 in grad
    mode, nothing recorded without it, the tensor itself when the dtype already matches."""
    t = tm.tensor([1.5], requires_grad=True)
    converted = tm.as_tensor(t, dtype=tm.float64)
    assert converted.grad_fn.name() == "ToCopyBackward0" and converted.dtype == tm.float64
    converted.sum().backward()
    assert t.grad.tolist() == [1.0]
    assert tm.as_tensor(t) is t and not tm.as_tensor(t, dtype=tm.int64).requires_grad
    with tm.no_grad():
        assert not tm.as_tensor(t, dtype=tm.float64).requires_grad
