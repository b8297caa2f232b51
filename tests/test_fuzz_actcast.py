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
