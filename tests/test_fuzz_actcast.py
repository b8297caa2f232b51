"""Conversions to half, activations, upsampling, products and take where the differential fuzzer
(tests/differential.py) found us apart from PyTorch, each pinned with the values, types and
messages torch 2.13 gives (so these run without torch too)."""

from __future__ import annotations

import math

import pytest

import tensormodes as tm

NAN, INF = float("nan"), float("inf")
# A double whose nearest half (1.5908203125) differs from the half of its nearest float
# (1.58984375): PyTorch converts double to half through float.
V = 1.5903320794306839
HALF_OF_FLOAT = 1.58984375


def _same(values, expected):
    """Equal lists of floats, NaN matching NaN (and signed zeros told apart)."""
    assert len(values) == len(expected), (values, expected)
    for v, e in zip(values, expected):
        assert (math.isnan(v) and math.isnan(e)) or (v == e and math.copysign(1, v) == math.copysign(1, e)), \
            (values, expected)


# -- float64 -> float16 rounds through float32 ----------------------------------------------------


@pytest.mark.parametrize("convert", [
    lambda x: x.half(), lambda x: x.to(tm.float16), lambda x: tm._to_copy(x, dtype=tm.float16),
    lambda x: x.type(tm.float16), lambda x: tm.tensor(x, dtype=tm.float16),
    lambda x: tm.as_tensor(x, dtype=tm.float16), lambda x: tm.asarray(x, dtype=tm.float16),
    lambda x: tm.tensor(x.numpy(), dtype=tm.float16), lambda x: tm.tensor(x.tolist(), dtype=tm.float16),
    lambda x: tm.full((1,), x.item(), dtype=tm.float16), lambda x: tm.zeros(2, dtype=tm.float16).fill_(x.item()),
    lambda x: tm.zeros(1, dtype=tm.float16).fill_(x.item()), lambda x: tm.zeros(1, dtype=tm.float16).fill_(x[0]),
    lambda x: tm.empty(1, dtype=tm.float16).copy_(x), lambda x: tm.zeros(1, dtype=tm.float16).add_(x),
    lambda x: tm.add(x, 0, out=tm.zeros(1, dtype=tm.float16)), lambda x: tm.scalar_tensor(x.item(), dtype=tm.float16),
    lambda x: x.to(tm.complex128).to(tm.float16), lambda x: tm.full_like(tm.zeros(1, dtype=tm.float16), x.item()),
])
def test_double_to_half_rounds_through_float(convert):
    x = tm.tensor([V], dtype=tm.float64)
    result = convert(x)
    assert result.dtype == tm.float16
    assert result.reshape(-1)[0].item() == HALF_OF_FLOAT


def test_double_to_half_setitem_rounds_through_float():
    a = tm.zeros(2, dtype=tm.float16)
    a[0] = V
    a[1:] = tm.tensor([V], dtype=tm.float64)
    assert a.tolist() == [HALF_OF_FLOAT, HALF_OF_FLOAT]


def test_float_to_half_and_bfloat16_unchanged():
    assert tm.tensor([V], dtype=tm.float32).half().item() == HALF_OF_FLOAT
    assert tm.tensor([V], dtype=tm.float64).bfloat16().item() == 1.59375
    assert tm.tensor([2**30 + 2**22 + 1]).bfloat16().item() == 2.0**30  # int64 -> float -> bfloat16


# -- threshold, gelu at extremes, half-type gradients ---------------------------------------------

F = tm.nn.functional


def test_threshold_keeps_nan_and_replaces_where_at_most_threshold():
    x = tm.tensor([NAN, 1.0, -1.0, 0.5, INF, -INF])
    _same(F.threshold(x, 0.5, 2.0).tolist(), [NAN, 1.0, 2.0, 2.0, INF, 2.0])
    _same(F.threshold(x, NAN, 3.0).tolist(), [NAN, 1.0, -1.0, 0.5, INF, -INF])
    _same(F.threshold(x, INF, 1.0).tolist(), [NAN, 1.0, 1.0, 1.0, 1.0, 1.0])


def test_threshold_converts_its_numbers_as_pytorch():
    # into an integer dtype the threshold truncates (-2.5 -> -2, so -2 is replaced)
    assert F.threshold(tm.tensor([1, 5, -3, -2]), -2.5, 9).tolist() == [1, 5, 9, 9]
    assert F.threshold(tm.tensor([1, 5, 3], dtype=tm.uint8), -1, 7).tolist() == [7, 7, 7]  # -1 wraps to 255
    # half types compare in float: a threshold beyond half's range is no overflow
    assert F.threshold(tm.tensor([1.0, 5, -3, 70000], dtype=tm.float16), 1e6, 9).tolist() == [9.0, 9.0, 9.0, INF]
    for x, threshold, value, name in [
            (tm.tensor([1, 5], dtype=tm.int8), 300, 9, "int8_t"), (tm.tensor([1, 5], dtype=tm.int8), 3, 300, "int8_t"),
            (tm.tensor([1, 5]), INF, 9, "int64_t"), (tm.tensor([1, 5]), 1, NAN, "int64_t"),
            (tm.tensor([1.0, 5.0]), 1e300, 1, "float"), (tm.tensor([1.0, 5.0]), 3, 1e300, "float"),
            (tm.tensor([1.0], dtype=tm.bfloat16), 1e300, 1, "float"),
            (tm.tensor([1.0], dtype=tm.bfloat16), 1, 1e300, "c10::BFloat16"),
            (tm.tensor([1.0], dtype=tm.float16), 3, 1e6, "c10::Half")]:
        with pytest.raises(RuntimeError, match=f"^value cannot be converted to type {name} without overflow$"):
            F.threshold(x, threshold, value)
    _same(F.threshold(tm.tensor([1.0, 5.0], dtype=tm.float16), 1, NAN).tolist(), [NAN, 5.0])


def test_threshold_gradient_at_nan():
    x = tm.tensor([NAN, 1.0, -1.0, 0.5], requires_grad=True)
    F.threshold(x, 0.5, 2.0).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", [tm.float32, tm.bfloat16])
def test_gelu_vectorized_kernel_extremes(dtype):
    # PyTorch's vectorized kernel (contiguous, two or more elements) gives NaN at +inf and inf
    # from 2**127 up; a single element or a strided input takes the scalar kernel
    x = tm.tensor([INF, 3e38, 1e38, -INF, -3e38], dtype=dtype)
    _same(F.gelu(x).tolist(), [NAN, INF, tm.tensor(1e38, dtype=dtype).item(), NAN, -0.0])
    _same(F.gelu(x[:1]).tolist(), [INF])
    _same(F.gelu(tm.full((4, 2), INF, dtype=dtype)[:, 0]).tolist(), [INF] * 4)
    _same(F.gelu(x, approximate="tanh").tolist()[:2], [INF, tm.tensor(3e38, dtype=dtype).item()])


def test_gelu_other_dtypes_keep_inf():
    _same(F.gelu(tm.tensor([INF, -INF, 1.7e308], dtype=tm.float64)).tolist(), [INF, NAN, 1.7e308])
    _same(F.gelu(tm.tensor([INF, -INF, 60000.0], dtype=tm.float16)).tolist(), [INF, NAN, 60000.0])


_X = [0.1, -0.7, 1.3, 2.9, -3.3, 0.01, 5.5, -9.0]
_G = [0.3, -1.7, 2.1, 0.9, 1.1, -0.2, 0.77, 1.9]
# torch 2.13's gradients: the backward kernels compute half types in float, rounding once
_HALF_GRADS = {
    ("gelu", "float16"): [0.173828125, -0.03961181640625, 2.36328125, 0.91357421875, -0.005706787109375,
                          -0.1015625, 0.77001953125, -0.0],
    ("gelu_tanh", "float16"): [0.173828125, -0.0400390625, 2.36328125, 0.91357421875, -0.00521087646484375,
                               -0.1015625, 0.77001953125, 0.0],
    ("gelu", "bfloat16"): [0.1748046875, -0.04052734375, 2.359375, 0.91015625, -0.005767822265625, -0.1015625,
                           0.76953125],
    ("softplus", "bfloat16"): [0.158203125, -0.56640625, 1.640625, 0.8515625, 0.039306640625, -0.1005859375,
                               0.765625, 0.0002346038818359375],
    ("glu", "float16"): [0.0106658935546875, -0.8544921875, 2.091796875, 0.00011104345321655273,
                         0.0010290145874023438, 0.297607421875, 0.0106201171875, 0.00032210350036621094],
    ("glu", "bfloat16"): [0.0107421875, -0.859375, 2.078125, 0.000110626220703125, 0.00103759765625, 0.296875,
                          0.01055908203125, 0.0003204345703125],
}
_FUNCTIONS = {"gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "softplus": F.softplus,
              "glu": F.glu}


@pytest.mark.parametrize("key", sorted(_HALF_GRADS))
def test_half_activation_gradients_round_once(key):
    name, dtype = key
    x = tm.tensor(_X, dtype=getattr(tm, dtype), requires_grad=True)
    y = _FUNCTIONS[name](x)
    y.backward(tm.tensor(_G[:y.numel()], dtype=x.dtype))
    expected = _HALF_GRADS[key]
    _same(x.grad.tolist()[:len(expected)], expected)


# -- prelu's broadcast error, take's empty gradient ------------------------------------------------


def test_prelu_kernel_bad_shapes_raise_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1$"):
        tm._prelu_kernel(tm.zeros(2, 3), tm.zeros(4))


def test_take_of_an_empty_tensor_has_a_zero_size_gradient():
    x = tm.zeros((2, 0), requires_grad=True)
    tm.take(x, tm.zeros((2, 0), dtype=tm.int64)).sum().backward()
    assert x.grad is not None and x.grad.shape == (2, 0) and x.grad.dtype == tm.float32


def test_nearest_upsampling_takes_bfloat16():
    x = tm.tensor([[[1.0, 2.5, 3.0]]], dtype=tm.bfloat16)
    y = tm._upsample_nearest1d(x, [6])
    assert y.dtype == tm.bfloat16 and y.tolist() == [[[1.0, 1.0, 2.5, 2.5, 3.0, 3.0]]]
    y = F.interpolate(x[None], size=(2, 4), mode="nearest")
    assert y.dtype == tm.bfloat16 and y.tolist() == [[[[1.0, 1.0, 2.5, 3.0]] * 2]]
