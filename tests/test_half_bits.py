"""Values PyTorch 2.13 computes bit for bit that the differential fuzzer found us apart on:
cumprod's gradient beside zeros and infinities, scans' double accumulator, complex linspace,
logspace and pow at special values (issue 22's open bugs), and reduced-precision accumulation
into positions (scatter in float32, index_add in the half type: issue 27, section 2). Each is
pinned with PyTorch's values so the tests run without torch; the ``torch``-marked sweeps compare
random inputs with PyTorch itself, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm

from .test_fuzz_precision import _same

NAN, INF = float("nan"), float("inf")


# -- cumprod's gradient --------------------------------------------------------------------------


def test_cumprod_gradient_divides_before_the_first_zero_as_pytorch():
    # A zero anywhere makes PyTorch take its masked formula for the whole tensor: before a
    # slice's first zero it divides by the input, so -inf / -inf is NaN there.
    x = tm.tensor([[-INF, -0.0], [0.5, 2.0]], requires_grad=True)
    (grad,) = tm.autograd.grad(tm.cumprod(x, 0).sum(), x)
    _same(grad.flatten().tolist(), [NAN, 3.0, -INF, 0.0])


def test_cumprod_gradient_at_the_first_zero_and_after_it():
    x = tm.tensor([2.0, 0.0, 3.0, 0.0, 5.0], requires_grad=True)
    (grad,) = tm.autograd.grad(tm.cumprod(x, 0), x, tm.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    # before: (1*2 + 0 ...) / 2 = 1; at the first zero: 2 * (2 + 3 * 3) = 22; after it: 0
    _same(grad.tolist(), [1.0, 22.0, 0.0, 0.0, 0.0])


def test_cumprod_gradient_of_a_single_step_is_the_incoming_gradient():
    # PyTorch's shortcut: nothing is multiplied, so a NaN or Inf input stays out of it
    x = tm.tensor([[NAN, INF]], requires_grad=True)
    (grad,) = tm.autograd.grad(tm.cumprod(x, 0), x, tm.tensor([[0.5, 0.25]]))
    _same(grad.flatten().tolist(), [0.5, 0.25])


def test_cumprod_double_backward_with_a_zero_is_still_exact():
    x = tm.tensor([2.0, 0.0, 3.0], dtype=tm.float64, requires_grad=True)
    (grad,) = tm.autograd.grad(tm.cumprod(x, 0).sum(), x, create_graph=True)
    _same(grad.tolist(), [1.0, 8.0, 0.0])
    (second,) = tm.autograd.grad(grad[1], x)
    _same(second.tolist(), [4.0, 0.0, 2.0])  # d/dx of x0 * (1 + x2)


def test_float32_scans_accumulate_in_double():
    # PyTorch's CPU accumulator for float32 is double: 1e8 + 1 survives until -1e8 removes 1e8
    _same(tm.tensor([1e8, 1.0, -1e8]).cumsum(0).tolist(), [1e8, 1e8, 1.0])
    _same(tm.tensor([1e8, 1.0, -1e8], dtype=tm.complex64).cumsum(0).tolist(), [1e8 + 0j, 1e8 + 0j, 1 + 0j])


# -- half-type accumulation into positions ---------------------------------------------------------


def test_half_scatters_accumulate_in_float32_and_index_adds_round_every_step():
    # bfloat16 holds 256 + 1 as 256: PyTorch's scatter kernels add 300 ones in float32 and round
    # once; index_add and index_put(accumulate=True) add in bfloat16, each sum rounded
    ones, index = tm.ones(300, dtype=tm.bfloat16), tm.zeros(300, dtype=tm.int64)
    zeros = tm.zeros(2, dtype=tm.bfloat16)
    assert zeros.scatter_add(0, index, ones).tolist() == [300.0, 0.0]
    assert zeros.scatter_reduce(0, index, ones, "sum", include_self=False).tolist() == [300.0, 0.0]
    assert zeros.scatter(0, index, 1.0, reduce="add").tolist() == [300.0, 0.0]
    assert zeros.index_add(0, index, ones).tolist() == [256.0, 0.0]
    assert zeros.index_put((index,), ones, accumulate=True).tolist() == [256.0, 0.0]


def test_float16_scatter_sums_and_means_round_once():
    x, index = tm.zeros(2, dtype=tm.float16), tm.tensor([0] * 11 + [1])
    tenths = tm.full((12,), 0.1, dtype=tm.float16)
    assert x.scatter_add(0, index, tenths).view(tm.int16).tolist() == [15462, 11878]
    assert x.scatter_reduce(0, index, tenths, "mean").view(tm.int16).tolist() == [11741, 10854]


# -- layer norm --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [tm.float16, tm.bfloat16])
def test_half_layer_norm_saves_its_statistics_in_the_input_dtype(dtype):
    x = tm.tensor([[0.3, -1.2, 2.5, 0.7]], dtype=dtype)
    for weight in (None, tm.ones(4, dtype=dtype)):
        _, mean, rstd = tm.ops.aten.native_layer_norm.default(x, [4], weight, None, 1e-5)
        assert mean.dtype == rstd.dtype == dtype
    _, mean, rstd = tm.ops.aten.native_layer_norm.default(x, [4], tm.ones(4), None, 1e-5)  # mixed types
    assert mean.dtype == rstd.dtype == tm.float32


def test_bfloat16_layer_norm_input_gradient_reads_the_rounded_statistics():
    # PyTorch's backward kernel reads the saved bfloat16 mean and rstd (values from torch 2.13)
    x = tm.tensor([[0.3, -1.2, 2.5, 0.7], [1.1, 0.4, -0.9, 1.9]], dtype=tm.bfloat16, requires_grad=True)
    weight = tm.tensor([0.5, -1.5, 1.25, 2.0], dtype=tm.bfloat16)
    out = tm.nn.functional.layer_norm(x, [4], weight)
    (grad,) = tm.autograd.grad(out, x, tm.tensor([[1.0, 0.5, -0.25, 2.0], [0.75, -1.0, 1.5, 0.5]], dtype=tm.bfloat16))
    assert grad.view(tm.int16).tolist() == [[-16778, -16511, -16497, 16407], [-16615, 15963, 15727, 16040]]


# -- float16 gelu ------------------------------------------------------------------------------------


def test_float16_gelu_vector_steps_use_pytorchs_approximate_erf():
    # a whole 64-element step: PyTorch's Vectorized<float>::erf, whose 1e-7 error shows in the tail
    x = tm.linspace(-4.5, -3, 64, dtype=tm.float16)
    bits = tm.nn.functional.gelu(x).view(tm.int16)
    assert bits[[4, 9, 10]].tolist() == [-32378, -32110, -32041]
    # the same values strided (no vector step in PyTorch either): std::erf
    strided = tm.stack([x, x], 1)[:, 0]
    assert tm.nn.functional.gelu(strided).view(tm.int16)[[4, 9, 10]].tolist() == [-32380, -32112, -32044]


@pytest.mark.torch
@pytest.mark.parametrize("approximate, size", [("none", 1030), ("tanh", 63)])
def test_float16_gelu_matches_torch_bit_for_bit(approximate, size):
    # (tanh: only the scalar path is exact; PyTorch's vector steps take Sleef's tanh, whose last
    # bits differ from a correctly rounded one in the far tail)
    import torch

    rng = np.random.default_rng(5)
    values = np.concatenate([rng.standard_normal(500) * 3, rng.uniform(-12, -3, 530)])[:size]
    theirs = torch.nn.functional.gelu(torch.tensor(values).half(), approximate=approximate)
    ours = tm.nn.functional.gelu(tm.tensor(values).half(), approximate=approximate)
    assert ours.view(tm.int16).tolist() == theirs.view(torch.int16).tolist()


# -- losses with a 0-dim operand of another dtype -------------------------------------------------


def test_functional_losses_broadcast_first_so_a_float32_scalar_input_promotes():
    x, target = tm.tensor(-1.6379905939102173), tm.tensor([-0.744140625, 1.484375], dtype=tm.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the size warning
        mse = tm.nn.functional.mse_loss(x, target, reduction="none")
        l1 = tm.nn.functional.l1_loss(x, target, reduction="none")
    assert mse.dtype == l1.dtype == tm.float32
    _same(mse.tolist(), [0.7989677786827087, 9.749166488647461])
    _same(l1.tolist(), [0.8938499689102173, 3.1223654747009277])


def test_private_losses_compute_in_the_operands_common_half_dtype():
    # called directly (no broadcast), the 0-dim float32 input is converted to float16 first and
    # each loss rounded to float16, then written into the input-like float32 result
    x, target = tm.tensor(-1.6379905939102173), tm.tensor([-0.744140625, 1.484375], dtype=tm.float16)
    huber = tm._huber_loss(x, target, "none")
    assert huber.dtype == tm.float32
    _same(huber.tolist(), [0.399169921875, 2.62109375])
    _same(tm._mse_loss(x, target, "none").tolist(), [0.79833984375, 9.7421875])
    assert tm._mse_loss(x, target, "none").dtype == tm.float16  # (PyTorch resizes a float16 result there)


# -- complex ranges and powers -------------------------------------------------------------------


def test_complex_linspace_spaces_real_and_imaginary_parts_apart():
    _same(tm.linspace(tm.tensor(complex(NAN, 0), dtype=tm.complex64), 4.0, 3).tolist(), [complex(NAN, 0)] * 3)
    _same(tm.linspace(complex(1, INF), 2, 3, dtype=tm.complex64).tolist(),
          [complex(1, NAN), complex(1.5, INF), complex(2, NAN)])


def test_complex_linspace_rounds_each_part_with_a_fused_multiply_add():
    values = tm.linspace(complex(0.1, -0.7), complex(3.3, 9.1), 7, dtype=tm.complex64)
    assert values.view(tm.float32).view(tm.int32).tolist() == [
        1036831949, -1087163597, 1059201571, 1064234735, 1066751318, 1076118596, 1071225240,
        1082549863, 1074720494, 1085975212, 1076957457, 1089400560, 1079194419, 1091672474]


def test_complex_logspace_steps_in_complex_arithmetic():
    # unlike linspace, PyTorch's complex logspace multiplies complex numbers: a NaN spreads
    _same(tm.logspace(tm.tensor(complex(-INF, 0), dtype=tm.complex64), 1, 3).tolist(), [complex(NAN, NAN)] * 3)


def test_a_complex_power_of_zero_is_cpows():
    base = tm.tensor([-0.0, 0.0, 0.0])
    exponent = tm.tensor([complex(-1.1, -0.9), complex(1.1, -0.9), complex(0, -0.9)])
    _same(tm.pow(base, exponent).tolist(), [complex(INF, NAN), 0j, complex(NAN, NAN)])


# -- sweeps against PyTorch ----------------------------------------------------------------------

_EDGES = [0.0, -0.0, 1.5, -2.0, 0.5, INF, -INF, NAN, 3.0, -0.25, 1.1]


def _bits_equal(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """Same values bit for bit, except a NaN's sign and payload (unspecified)."""
    nan = np.isnan(ours)
    return np.array_equal(nan, np.isnan(theirs)) and np.array_equal(
        np.where(nan, 0, ours).view(np.int64), np.where(nan, 0, theirs).view(np.int64))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_cumprod_gradients_match_torch_bit_for_bit(dtype):
    import torch

    rng = np.random.default_rng(7)
    for _ in range(60):
        shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 4))))
        values = rng.choice(_EDGES, size=shape)
        weights = rng.uniform(0.5, 1.5, shape)
        dim = int(rng.integers(0, len(shape)))
        x = torch.tensor(values).to(getattr(torch, dtype)).requires_grad_()
        g = torch.tensor(weights).to(getattr(torch, dtype))
        theirs = torch.autograd.grad(torch.cumprod(x, dim), x, g)[0].double().numpy()
        ours_x = tm.tensor(x.detach().double().numpy()).to(getattr(tm, dtype)).requires_grad_()
        ours_g = tm.tensor(g.double().numpy()).to(getattr(tm, dtype))
        ours = tm.autograd.grad(tm.cumprod(ours_x, dim), ours_x, ours_g)[0].double().numpy()
        assert _bits_equal(ours, theirs), (values.tolist(), dim, ours.tolist(), theirs.tolist())


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_linspace_matches_torch_bit_for_bit(dtype):
    import torch

    rng = np.random.default_rng(3)
    for _ in range(100):
        start, end = complex(*rng.standard_normal(2) * 10), complex(*rng.standard_normal(2) * 10)
        steps = int(rng.integers(2, 40))
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        ours = tm.linspace(start, end, steps, dtype=getattr(tm, dtype)).numpy()
        assert np.array_equal(ours, theirs), (start, end, steps)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_scatter_family_matches_torch_bit_for_bit(dtype):
    import torch

    rng = np.random.default_rng(11)
    calls = [lambda b, i, s: b.scatter_add(0, i, s), lambda b, i, s: b.scatter(0, i, s, reduce="add"),
             lambda b, i, s: b.scatter(0, i, 1.7, reduce="multiply"),
             lambda b, i, s: b.scatter_reduce(0, i, s, "mean", include_self=False),
             lambda b, i, s: b.scatter_reduce(0, i, s / 50 + 1, "prod"),
             lambda b, i, s: b.index_add(0, i[:, 0], s), lambda b, i, s: b.index_add(0, i[:, 0], s, alpha=0.3),
             lambda b, i, s: b[0].index_add(0, i[:, 0], s[:, 0], alpha=0.3),
             lambda b, i, s: b.index_put((i[:, 0],), s, accumulate=True),
             lambda b, i, s: b.index_reduce(0, i[:, 0], s, "mean")]
    for _ in range(10):
        base, src = rng.standard_normal((3, 5)) * 30, rng.standard_normal((int(rng.integers(1, 60)), 5)) * 30
        index = rng.integers(0, 3, src.shape)
        for call in calls:
            outcomes = []
            for library in (torch, tm):
                kind = getattr(library, dtype)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the deprecated scatter(reduce=) and beta index_reduce
                    result = call(library.tensor(base).to(kind), library.tensor(index), library.tensor(src).to(kind))
                outcomes.append(result.view(library.int16).tolist())
            assert outcomes[0] == outcomes[1]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sigmoid", "erf", "erfc", "exp2", "rsqrt", "erfinv", "tanh", "logit", "mish"])
def test_half_unary_gradients_round_at_pytorchs_points(name, dtype):
    # the formulas op by op in PyTorch's order (each op rounds a half type); float16 sigmoid and
    # half logit backward kernels compute in the half type itself, each operation rounded
    import torch

    rng = np.random.default_rng(1)
    values = rng.uniform(0.01, 0.99, 200) if name in ("logit", "erfinv") else rng.uniform(-3, 3, 200)
    if name == "rsqrt":
        values = np.abs(values) + 0.01
    weights = rng.uniform(0.5, 1.5, 200)
    grads = []
    for library in (torch, tm):
        x = library.tensor(values).to(getattr(library, dtype)).requires_grad_()
        call = library.nn.functional.mish if name == "mish" else getattr(library, name)
        (grad,) = library.autograd.grad(call(x), x, library.tensor(weights).to(x.dtype))
        grads.append(grad.view(library.int16).tolist())
    assert grads[0] == grads[1]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_avg_pool_gradients_accumulate_window_by_window_in_the_half_type(dtype):
    import torch

    rng = np.random.default_rng(2)
    values = rng.uniform(-2, 2, (2, 3, 6, 8))
    calls = [lambda L, x: L.nn.functional.avg_pool2d(x, (2, 3), 1, padding=1),
             lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, padding=1, count_include_pad=False),
             lambda L, x: L.nn.functional.avg_pool1d(x[:, :, 0], 3, 1)]
    for call in calls:
        grads = []
        for library in (torch, tm):
            x = library.tensor(values).to(getattr(library, dtype)).requires_grad_()
            out = call(library, x)
            weights = np.random.default_rng(3).uniform(0.5, 1.5, tuple(out.shape))
            (grad,) = library.autograd.grad(out, x, library.tensor(weights).to(x.dtype))
            grads.append(grad.view(library.int16).tolist())
        assert grads[0] == grads[1]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode, padding", [("replicate", (3, 4)), ("replicate", (3, 4, 2, 5)),
                                           ("reflect", (3, 4, 2, 1))])
def test_half_padding_gradients_add_in_one_pass_in_the_half_type(dtype, mode, padding):
    import torch

    values = np.random.default_rng(4).uniform(-2, 2, (2, 3, 8))
    grads = []
    for library in (torch, tm):
        x = library.tensor(values).to(getattr(library, dtype)).requires_grad_()
        out = library.nn.functional.pad(x, padding, mode=mode)
        weights = np.random.default_rng(5).uniform(0.5, 1.5, tuple(out.shape))
        (grad,) = library.autograd.grad(out, x, library.tensor(weights).to(x.dtype))
        grads.append(grad.view(library.int16).tolist())
    assert grads[0] == grads[1]


# -- upsampling gradients ------------------------------------------------------------------------

_UPSAMPLED = np.linspace(-2.3, 3.1, 96).reshape(2, 1, 6, 8)


@pytest.mark.parametrize("dtype, bilinear, bicubic, nearest", [
    ("bfloat16", "c129 c119 c110 c0bf c0a2 c08d bfaf bf16 3e2f 4084 4099 40b6 410b 4114 4124 4155 415c 416d",
     "c0e6 c14a c0c1 c0ce c126 c08f bebe 3ece 3f4b 3fee 4095 4042 4110 4198 4130 410b 418d 411e",
     "c142 c131 c0da c0d4 c0b4 c04b bf97 be22 3eed 4089 40a9 4083 411c 412c 40f8 4173 4182 4136"),
    ("float16", "c945 c8c5 c87f c5f4 c510 c469 bd7c b8b0 3179 4421 44c9 45ac 485b 48a1 4920 4aa6 4adf 4b6b",
     "c733 ca4b c608 c673 c931 c476 b5f3 3671 3a5c 3f72 44a7 420e 487e 4cc0 497d 4858 4c69 48ed",
     "ca0c c989 c6d0 c6a3 c59d c25a bcba b10f 3769 4447 454c 441a 48de 4961 47bd 4b98 4c0e 49b0")])
def test_half_upsampling_gradients_sum_each_channel_in_a_float32_buffer(dtype, bilinear, bicubic, nearest):
    # PyTorch's half-type kernels add every output's taps into a float32 buffer in output order
    # (linear ones as fused multiply-adds) and round once; a sum per dimension in the half type
    # gave other last bits (values from torch 2.13)
    grad = tm.tensor(_UPSAMPLED).to(getattr(tm, dtype))
    aten = tm.ops.aten
    assert _hex(aten.upsample_bilinear2d_backward.default(grad, [6, 8], [2, 1, 3, 3], False)) == bilinear
    assert _hex(aten.upsample_bicubic2d_backward.default(grad, [6, 8], [2, 1, 3, 3], True)) == bicubic
    assert _hex(aten.upsample_nearest2d_backward.default(grad, [6, 8], [2, 1, 3, 3])) == nearest


def _hex(t) -> str:
    """A half-type tensor's elements as 16-bit patterns, in hex."""
    return " ".join(f"{v & 0xffff:04x}" for v in t.view(tm.int16).flatten().tolist())


def test_nearest_upsampling_gradient_takes_pytorchs_shortcuts_in_one_dimension_too():
    # the backward kernel maps equal sizes to themselves and doubled ones to i // 2, whatever the
    # scale factor says (its 1-D forward kernel has no such shortcut)
    aten = tm.ops.aten
    assert aten.upsample_nearest1d_backward.default(tm.ones(1, 1, 4), [4], [1, 1, 4], 1.25).tolist() == \
        [[[1.0, 1.0, 1.0, 1.0]]]
    assert aten.upsample_nearest1d_backward.default(tm.arange(8.0).reshape(1, 1, 8), [8], [1, 1, 4], 0.7).tolist() \
        == [[[1.0, 5.0, 9.0, 13.0]]]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_upsampling_gradients_match_torch_bit_for_bit(dtype):
    import torch

    rng = np.random.default_rng(0)
    for trial in range(100):
        kind = ("nearest1d", "linear1d", "nearest2d", "bilinear2d", "bicubic2d")[trial % 5]
        spatial = 2 if "2d" in kind else 1
        input_size = [int(rng.integers(1, 4)), int(rng.integers(1, 3))] + [int(n) for n in rng.integers(1, 7, spatial)]
        output_size = [int(n) for n in rng.integers(1, 10, spatial)]
        scales = [None if rng.random() < 0.4 else float(rng.choice([1.5, 1.25, 2.0, 0.7, 1.1, 3.3]))
                  for _ in output_size]
        corners = () if "nearest" in kind else (bool(rng.random() < 0.4),)
        values = rng.standard_normal(input_size[:2] + output_size)
        results = []
        for library in (torch, tm):
            grad = library.tensor(values).to(getattr(library, dtype))
            backward = getattr(library.ops.aten, f"upsample_{kind}_backward").default
            results.append(backward(grad, output_size, input_size, *corners, *scales).view(library.int16).tolist())
        assert results[0] == results[1], (kind, input_size, output_size, scales, corners)


# -- layer norm's parameter gradients ------------------------------------------------------------

@pytest.mark.parametrize("dtype, threads, weight, bias", [
    ("bfloat16", 1, "3f3a bf95 bf78 be62 bed6 bf9c bf84 3f2a", "3f94 3ea9 bf4c bf98 befa 3f28 3f9a 3f26"),
    ("bfloat16", 2, "3f3a bf95 bf78 be62 bed6 bf9c bf84 3f2a", "3f94 3eaa bf4c bf98 bef8 3f28 3f9a 3f25"),
    ("float16", 1, "39c8 bcae bbbd b295 b6a9 bcda bc32 3933", "3c9f 3552 ba5f bcc6 b7e0 394a 3cd3 3924"),
    ("float16", 2, "39ca bcae bbbc b294 b6a8 bcda bc31 3934", "3c9e 3552 ba5f bcc6 b7de 394a 3cd3 3925")])
def test_half_layer_norm_parameter_gradients_sum_rows_per_thread_in_the_half_type(dtype, threads, weight, bias):
    # PyTorch's kernel splits the rows among its threads, each adding its rows into a buffer of the
    # half type (every row's sum rounded), then adds the buffers in float32: the thread count
    # shows in the last bits (values from torch 2.13 with torch.set_num_threads(threads))
    d = getattr(tm, dtype)
    x = tm.tensor(np.linspace(-1.7, 2.9, 40).reshape(5, 8) ** 2 - 1).to(d).requires_grad_()
    w = tm.tensor(np.linspace(0.5, 1.6, 8)).to(d).requires_grad_()
    b = tm.tensor(np.linspace(-0.3, 0.4, 8)).to(d).requires_grad_()
    before = tm.get_num_threads()
    tm.set_num_threads(threads)
    try:
        out = tm.nn.functional.layer_norm(x, [8], w, b)
        grad_weight, grad_bias = tm.autograd.grad(out, (w, b), tm.tensor(np.cos(np.arange(40)).reshape(5, 8)).to(d))
    finally:
        tm.set_num_threads(before)
    assert (_hex(grad_weight), _hex(grad_bias)) == (weight, bias)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_layer_norm_parameter_gradients_match_torch_bit_for_bit(dtype):
    # (the input's gradient keeps last-bit differences: listed in tests/half_sweep.py)
    import torch

    rng = np.random.default_rng(4)
    before = (torch.get_num_threads(), tm.get_num_threads())
    try:
        for _ in range(40):
            threads = int(rng.integers(1, 4))
            shape = [int(n) for n in rng.integers(1, 7, int(rng.integers(2, 4)))]
            normalized = shape[-int(rng.integers(1, len(shape))):]
            mixed = bool(rng.random() < 0.3)  # float32 parameters
            values = [rng.standard_normal(shape), rng.standard_normal(normalized), rng.standard_normal(normalized),
                      rng.standard_normal(shape)]
            results = []
            for library in (torch, tm):
                library.set_num_threads(threads)
                d = getattr(library, dtype)
                x = library.tensor(values[0]).to(d).requires_grad_()
                parameters = [library.tensor(v).to(library.float32 if mixed else d).requires_grad_()
                              for v in values[1:3]]
                out = library.nn.functional.layer_norm(x, normalized, *parameters)
                grads = library.autograd.grad(out, parameters, library.tensor(values[3]).to(d))
                results.append([g.float().tolist() for g in grads])
            assert results[0] == results[1], (threads, shape, normalized, mixed)
    finally:
        torch.set_num_threads(before[0])
        tm.set_num_threads(before[1])


_LAYER_NORM_BITS = {
    "bfloat16": "3ab8 3fc5 3f3b 3fed 3f03 3f66 be1b bf37 3f6d beef 3e54 bf4f bf7d bf81 c012 3dff 3d2d 3f8b 3fbf 3f7e "
                "3fd1 bf2e 3e86 3def be5f 3ece bf51 3e3a bfe0 bfdb bf1f bf57 3f82 3f0f 4003 3fa8 bdc8 3df0 3fc3 3f3b "
                "3fea 3ee9 3f66 be54 bf1f 3f76 beee 3e67 bf60 bf7d bf8c c010 3e48 3d39 3f92 3fb9 3f7f 3fc8 bf39 3eab "
                "3dec be17 3eca bf50 3e1a bfed bfd6 bf21 bf48 3f86 3f11 4005 3f9a bdce 3e6c 3fc1 3f3c 3fe5 3ecd 3f66 "
                "be85 bf06 3f7f beeb 3e72 bf71 bf7d bf96 c00e 3e87 3d46 3f99 3fb3 3f7f 3fbf bf44 3ed1 3deb bda0 3ec4 "
                "bf4f 3de2 bffa bfd0 bf23 bf3a 3f8a 3f12 4006 3f8b bdc9",
    "float16": "160a 3e2c 39d1 3f6a 3818 3b2d b0c9 b9b4 3b67 b779 32ae ba76 bbe8 bc0d c08e 3006 2964 3c5a 3dfa 3bf0 "
               "3e8a b97b 342a 2f7b b2f1 3676 ba87 31c9 bf04 bedc b8fe bab5 3c13 3878 4019 3d40 ae2f 2f7b 3e1f 39d6 "
               "3f4d 3746 3b2e b290 b8f5 3bb3 b769 3338 bafc bbe8 bc60 c07f 3245 29c3 3c92 3dcb 3bf2 3e40 b9d7 3554 "
               "2f6b b0b4 3655 ba7f 30cf bf6b beae b90b ba44 3c35 3882 4026 3ccb ae54 336b 3e0c 39db 3f2d 3667 3b30 "
               "b41c b82d 3bf7 b759 339d bb84 bbe8 bcb1 c06b 343a 2a2d 3cc7 3d98 3bf5 3df4 ba24 3682 2f63 acf4 3624 "
               "ba78 2f43 bfce be7d b917 b9cd 3c53 388c 402f 3c56 ae24"}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_layer_norm_output_is_pytorchs_welford_statistics_and_fused_affine(dtype):
    # each row's statistics by PyTorch's vectorised Welford cascade, then (x * rstd - rstd * mean)
    # * weight + bias as two fused multiply-adds (values from torch 2.13)
    d = getattr(tm, dtype)
    x = tm.tensor((np.sin(np.arange(111) * 1.7) * 3 + 1).reshape(3, 37)).to(d)
    weight, bias = tm.tensor(np.cos(np.arange(37) * 0.9) + 0.2).to(d), tm.tensor(np.sin(np.arange(37) * 0.4)).to(d)
    assert _hex(tm.nn.functional.layer_norm(x, [37], weight, bias)) == _LAYER_NORM_BITS[dtype]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_layer_norm_outputs_match_torch(dtype):
    # bfloat16 bit for bit; float16 keeps rare last-bit differences where the variance's float32
    # steps round apart from PyTorch's (its rstd then differs in the last bit: listed in tests/half_sweep.py)
    import torch

    rng = np.random.default_rng(0)
    apart = 0
    for trial in range(100):
        shape = [int(n) for n in rng.integers(1, 100, 2)]
        values = [rng.standard_normal(shape) * 3 + 1, rng.standard_normal(shape[-1:]), rng.standard_normal(shape[-1:])]
        results = []
        for library in (torch, tm):
            d = getattr(library, dtype)
            kind = library.float32 if trial % 2 else d  # mixed types: float32 parameters
            x = library.tensor(values[0]).to(d)
            w, b = library.tensor(values[1]).to(kind), library.tensor(values[2]).to(kind)
            results.append(library.nn.functional.layer_norm(x, shape[-1:], w, b).view(library.int16).tolist())
        apart += results[0] != results[1]
    assert apart <= (0 if dtype == "bfloat16" else 12), apart


def test_half_ldexp_rounds_the_power_of_two_first():
    # PyTorch's composite input * pow(2, other): 2 ** 0.640625 rounds to bfloat16's 1.5625 first
    x = tm.tensor([0.546875, -0.921875, -1.8359375], dtype=tm.bfloat16)
    assert tm.ldexp(x, tm.tensor([0.640625, 1.375, 0.26171875], dtype=tm.bfloat16)).tolist() == \
        [0.85546875, -2.390625, -2.1875]
    assert tm.ldexp(x, tm.tensor([1, -2, 3])).tolist() == [1.09375, -0.23046875, -14.6875]


@pytest.mark.parametrize("dtype, expected", [
    ("bfloat16", "bec4 bf3c bf2c bf1d bf0d be85 bec4 bf3c bf2c bf1d bf0d be85 bf1c bf94 bf84 bf6a bf4b beba be69 bed9 "
                 "beba be9a be74 bdd5"),
    ("float16", "b623 b9e3 b964 b8e4 b865 b425 b623 b9e3 b964 b8e4 b865 b425 b8e5 bca5 bc26 bb4d ba4f b5cf b34d b6ce "
                "b5d0 b4d2 b3a7 aea8")])
def test_half_adaptive_average_pooling_gradient_rounds_each_share_and_sum(dtype, expected):
    # PyTorch's kernel in the half type: grad / kh / kw (each division rounded), added over the
    # window output by output, every sum rounded (values from torch 2.13)
    d = getattr(tm, dtype)
    grad = tm.tensor(np.linspace(-2.3, 3.1, 30).reshape(1, 2, 3, 5)).to(d)
    result = tm.ops.aten._adaptive_avg_pool2d_backward.default(grad, tm.zeros(1, 2, 7, 6, dtype=d))
    assert _hex(result.flatten()[:24]) == expected
    x = tm.zeros(2, 7, dtype=d, requires_grad=True)  # the 1-D pool's gradient reaches the same kernel
    (grad_1d,) = tm.autograd.grad(tm.nn.functional.adaptive_avg_pool1d(x, 5), x, grad[0, :, 0])
    assert grad_1d.tolist() == tm.ops.aten._adaptive_avg_pool2d_backward.default(
        grad[0, :, :1], tm.zeros(2, 1, 7, dtype=d))[:, 0].tolist()


def test_half_max_pooling_gradients_add_in_the_half_type():
    # three windows pick the same element: PyTorch adds 256 + 1 + 1 in bfloat16, each sum rounded
    # to 256 (a float32 sum rounded once would be 258)
    x = tm.tensor([0.0, 1, 5, 1, 0], dtype=tm.bfloat16).reshape(1, 1, 1, 1, 5).requires_grad_()
    out = tm.nn.functional.max_pool3d(x, (1, 1, 3), 1)
    (grad,) = tm.autograd.grad(out, x, tm.tensor([256.0, 1, 1], dtype=tm.bfloat16).reshape(out.shape))
    assert grad.flatten().tolist() == [0.0, 0.0, 256.0, 0.0, 0.0]
    x = tm.tensor([0.0, 5, 5, 0], dtype=tm.bfloat16).reshape(1, 1, 1, 4).requires_grad_()
    out = tm.nn.functional.adaptive_max_pool2d(x, (1, 3))
    (grad,) = tm.autograd.grad(out, x, tm.tensor([256.0, 1, 1], dtype=tm.bfloat16).reshape(out.shape))
    assert grad.flatten().tolist() == [0.0, 256.0, 1.0, 0.0]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_max_pooling_gradients_match_torch_bit_for_bit(dtype):
    import torch

    rng = np.random.default_rng(0)
    for trial in range(30):
        volume = [int(n) for n in rng.integers(3, 8, 3)]
        kernel, stride = int(rng.integers(2, 4)), int(rng.integers(1, 3))
        values, size = rng.standard_normal((2, 2, *volume)), [int(n) for n in rng.integers(1, 6, 2)]
        results = []
        for library in (torch, tm):
            x = library.tensor(values).to(getattr(library, dtype)).requires_grad_()
            outs = [library.nn.functional.max_pool3d(x, kernel, stride),
                    library.nn.functional.adaptive_max_pool2d(x[:, :, 0], size)]
            weights = [np.random.default_rng(trial).standard_normal(tuple(o.shape)) * 3 for o in outs]
            grads = library.autograd.grad(outs, x, [library.tensor(w).to(x.dtype) for w in weights])
            results.append(grads[0].view(library.int16).tolist())
        assert results[0] == results[1], (volume, kernel, stride, size)
