"""dtypes and PyTorch's promotion rules (not NumPy's)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm

DTYPES = [tm.bool, tm.uint8, tm.int8, tm.int16, tm.int32, tm.int64, tm.float16, tm.bfloat16, tm.float32,
          tm.float64, tm.complex64, tm.complex128]
NAMES = {d: repr(d).split(".")[1] for d in DTYPES}


@pytest.mark.parametrize("a, b, expected", [
    (tm.uint8, tm.int8, tm.int16), (tm.int64, tm.float16, tm.float16), (tm.float16, tm.bfloat16, tm.float32),
    (tm.bool, tm.uint8, tm.uint8), (tm.float64, tm.complex64, tm.complex128), (tm.int8, tm.complex64, tm.complex64),
    (tm.int32, tm.int64, tm.int64), (tm.bool, tm.bool, tm.bool),
])
def test_promote_types_known_pairs(a, b, expected):
    assert tm.promote_types(a, b) is expected
    assert tm.promote_types(b, a) is expected


def test_promote_types_is_symmetric_and_idempotent():
    for a, b in itertools.product(DTYPES, DTYPES):
        assert tm.promote_types(a, b) is tm.promote_types(b, a)
    for a in DTYPES:
        assert tm.promote_types(a, a) is a


@pytest.mark.torch
def test_promote_types_matches_torch_for_every_pair():
    import torch

    for a, b in itertools.product(DTYPES, DTYPES):
        expected = torch.promote_types(getattr(torch, NAMES[a]), getattr(torch, NAMES[b]))
        assert NAMES[tm.promote_types(a, b)] == str(expected).split(".")[1], (a, b)


@pytest.mark.torch
def test_can_cast_matches_torch_for_every_pair():
    import torch

    for a, b in itertools.product(DTYPES, DTYPES):
        assert tm.can_cast(a, b) == torch.can_cast(getattr(torch, NAMES[a]), getattr(torch, NAMES[b])), (a, b)


def test_scalars_do_not_widen_within_a_category():
    i32 = tm.tensor([1, 2], dtype=tm.int32)
    assert (i32 + 2).dtype is tm.int32
    assert (i32 + 2.5).dtype is tm.float32, "an int tensor and a float scalar give the default dtype"
    assert (tm.tensor([1.0], dtype=tm.float16) + 2.5).dtype is tm.float16
    assert (i32 + tm.tensor(5)).dtype is tm.int32, "a 0-dim tensor does not widen a dimensioned one"
    assert (i32 + tm.tensor(5.0, dtype=tm.float64)).dtype is tm.float64, "a higher category does promote"
    assert (tm.tensor([1, 2]) / 2).dtype is tm.float32, "integer true division gives the default float"
    assert tm.result_type(i32, 2.5) is tm.float32


def test_default_dtype_scopes_float_results():
    tm.set_default_dtype(tm.float64)
    try:
        assert tm.tensor([1.0]).dtype is tm.float64
        assert (tm.tensor([1, 2], dtype=tm.int32) + 2.5).dtype is tm.float64
        assert tm.tensor([1j]).dtype is tm.complex128
    finally:
        tm.set_default_dtype(tm.float32)
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        tm.set_default_dtype(tm.int64)


def test_finfo_iinfo_and_properties():
    assert tm.finfo(tm.float16).max == 65504.0 and tm.finfo(tm.bfloat16).bits == 16
    assert tm.finfo().dtype == "float32"
    assert (tm.iinfo(tm.int8).min, tm.iinfo(tm.uint8).max) == (-128, 255)
    assert tm.float32.is_floating_point and not tm.int64.is_floating_point and tm.complex64.is_complex
    assert tm.bfloat16.itemsize == 2 and not tm.uint8.is_signed
    with pytest.raises(TypeError):
        tm.iinfo(tm.float32)


_SCALARS = st.one_of(st.booleans(), st.integers(-100, 100), st.floats(-10, 10, allow_nan=False),
                     st.complex_numbers(max_magnitude=5, allow_nan=False, allow_infinity=False))


@pytest.mark.torch
@settings(max_examples=200, deadline=None)
@given(st.sampled_from([d for d in DTYPES if d not in (tm.bfloat16,)]), st.sampled_from(DTYPES),
       st.booleans(), _SCALARS)
def test_result_type_matches_torch(a, b, b_zero_dim, scalar):
    import torch

    if b is tm.float16 and isinstance(scalar, complex) or a is tm.float16 and isinstance(scalar, complex):
        return  # PyTorch gives complex32, a dtype tensormodes does not have
    x = tm.tensor(np.ones(2), dtype=a)
    y = tm.tensor(np.ones(()) if b_zero_dim else np.ones(2), dtype=b)
    tx, ty = torch.ones(2, dtype=getattr(torch, NAMES[a])), (
        torch.ones((), dtype=getattr(torch, NAMES[b])) if b_zero_dim else torch.ones(2, dtype=getattr(torch, NAMES[b])))
    expected = torch.result_type(tx, ty)
    if expected != torch.complex32:  # PyTorch's ComplexHalf: tensormodes has no such dtype
        assert NAMES[tm.result_type(x, y)] == str(expected).split(".")[1]
    ours, theirs = tm.result_type(x, scalar), torch.result_type(tx, scalar)
    if theirs == torch.complex32:
        return
    assert NAMES[ours] == str(theirs).split(".")[1]
