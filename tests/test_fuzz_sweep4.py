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
