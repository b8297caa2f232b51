"""tensormodes.testing.assert_close: PyTorch's tolerances, checks and messages."""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes.testing import assert_close

CASES = [
    "T.assert_close(L.tensor([1.,2,3]), L.tensor([1.,2,4]))",
    "T.assert_close(L.tensor([1.,2,3]), L.tensor([1.,2.5,4]))",
    "T.assert_close(L.tensor(1.), L.tensor(2.))",
    "T.assert_close(L.tensor(1), L.tensor(2))",
    "T.assert_close(L.tensor([1,2,3]), L.tensor([1,2,4]))",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2,3]))",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2], dtype=L.float64))",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2], dtype=L.float64), check_dtype=False)",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1,3]), check_dtype=False)",
    "T.assert_close(L.tensor([1.,float('nan')]), L.tensor([1.,float('nan')]))",
    "T.assert_close(L.tensor([1.,float('nan')]), L.tensor([1.,float('nan')]), equal_nan=True)",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2.0001]), rtol=1e-3, atol=0)",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2.0001]), rtol=1e-3)",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2.0001]), atol=1e-3)",
    "T.assert_close(1.0, 1.0 + 1e-9)", "T.assert_close(1.0, 1.5)", "T.assert_close(2, 3)", "T.assert_close(1, 1.0)",
    "T.assert_close(L.tensor([[1.,2],[3,4]]), L.tensor([[1.,2],[3,5]]))",
    "T.assert_close(L.tensor([[1.,2],[3,4]]), L.tensor([[1.,2],[3,5]]), msg='custom')",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,3]), msg=lambda m: m.upper()[:12])",
    "T.assert_close([L.tensor(1.), L.tensor(2.)], [L.tensor(1.), L.tensor(3.)])",
    "T.assert_close({'a': L.tensor(1.)}, {'a': L.tensor(3.)})", "T.assert_close((1, 2), (1, 2, 3))",
    "T.assert_close(L.tensor([1.,2]), [1., 2.])", "T.assert_close(L.tensor([2]), 2)",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2]).requires_grad_())",
    "T.assert_close(L.tensor([True, False]), L.tensor([True, True]))",
    "T.assert_close(L.tensor([1+1j]), L.tensor([1+2j]))",
    "T.assert_close(L.tensor([float('inf')]), L.tensor([float('inf')]))",
    "T.assert_close(L.tensor([float('inf')]), L.tensor([-float('inf')]))",
    "T.assert_close(L.tensor([1., 2, 3, 4]), L.tensor([1.5, 2, 3, 5]))",
    "T.assert_close(L.tensor([1.], dtype=L.float16), L.tensor([1.001], dtype=L.float16))",
    "T.assert_close(L.tensor([1.], dtype=L.bfloat16), L.tensor([2.], dtype=L.bfloat16))",
    "T.assert_close(L.tensor([0.]), L.tensor([1e-6]))", "T.assert_close(L.ones(0), L.ones(0))",
    "T.assert_close(None, None)",
    "T.assert_close(L.tensor([1.,2]), L.tensor([1.,2]), check_device=False, check_layout=False, check_stride=True)",
]


def _outcome(library, expression: str):
    namespace = {"L": library, "T": library.testing}
    try:
        eval(expression, namespace)
    except Exception as error:
        return type(error).__name__, str(error).replace("torch.", "tensormodes.").replace("tensormodes.Tensor",
                                                                                            "tensormodes._tensor.Tensor")
    return "ok", None


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_assert_close_matches_torch(expression):
    import torch

    assert _outcome(tm, expression) == _outcome(torch, expression)


def test_assert_close_messages():
    with pytest.raises(AssertionError) as info:
        assert_close(tm.tensor([[1., 2.], [3., 4.]]), tm.tensor([[1., 2.], [3., 5.]]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 1.0 at index (1, 1) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1, 1) (up to 1.3e-06 allowed)")
    with pytest.raises(AssertionError, match="^Scalars are not equal!\n\nExpected 3 but got 2.\n"):
        assert_close(2, 3)
    with pytest.raises(AssertionError, match="The failure occurred for item \\['a'\\]$"):
        assert_close({"a": tm.tensor(1.)}, {"a": tm.tensor(3.)})
    with pytest.raises(AssertionError, match="^The values for attribute 'dtype' do not match: tensormodes.float32 != "
                                             "tensormodes.float64.$"):
        assert_close(tm.ones(1), tm.ones(1, dtype=tm.float64))
    with pytest.raises(ValueError, match="but got no atol"):
        assert_close(tm.ones(1), tm.ones(1), rtol=0.1)


def test_assert_close_default_tolerances_per_dtype():
    assert_close(tm.tensor([1.0], dtype=tm.float16), tm.tensor([1.0009765625], dtype=tm.float16))
    with pytest.raises(AssertionError):
        assert_close(tm.tensor([1.0], dtype=tm.float64), tm.tensor([1.000001], dtype=tm.float64))
    assert_close(tm.tensor([1.0]), tm.tensor([1.000001]))
    with pytest.raises(AssertionError, match="not equal"):
        assert_close(tm.tensor([1]), tm.tensor([2]))
    assert_close(tm.tensor([float("nan")]), tm.tensor([float("nan")]), equal_nan=True)
