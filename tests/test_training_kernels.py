"""Kernels a training step spends its time in, made faster for issue 28 without changing a bit:
their results pinned exactly (special values, signed zeros, NaN payloads), against the formulas
they replaced."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes._ops.common import operand_dtype
from tensormodes._ops.pooling import _max_pool_planes
from tensormodes._ops.unary_math import _logistic, _threshold_backward

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, -1e-300, 710.0, -710.0, 88.0, -104.0, 3.5, -2.25]


def _bits(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_sigmoid_kernel_divides_once_with_the_same_bits(dtype):
    x = np.concatenate([SPECIAL, np.random.default_rng(0).standard_normal(1000) * 20]).astype(dtype)
    with np.errstate(all="ignore"):
        e = np.exp(-np.absolute(x))
        reference = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
        ours = _logistic(x)
    assert ours.dtype == reference.dtype and _bits(ours) == _bits(reference)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", [0, 0.5, -1, float("nan")])
def test_threshold_backward_masks_bits_as_where_did(dtype, threshold):
    rng = np.random.default_rng(1)
    grad, input = (rng.standard_normal((4, 3, 8)).astype(dtype) for _ in range(2))
    grad.flat[:len(SPECIAL)] = SPECIAL
    input.flat[:len(SPECIAL)] = SPECIAL[::-1]
    grad.view(np.uint8 if dtype is np.float32 else np.uint16)[-1] ^= 1  # a NaN payload kept as it is
    ours = _threshold_backward(grad, input, threshold)
    reference = np.where(input <= threshold, 0, grad)
    assert ours.dtype == reference.dtype and ours.flags.c_contiguous and _bits(ours) == _bits(reference)


def test_threshold_backward_of_mixed_or_strided_operands_takes_where():
    grad = np.arange(6, dtype=np.float32).reshape(2, 3).T  # not C-contiguous
    input = np.array([[1, -1], [0, 2], [3, -3]], np.float32)
    assert _threshold_backward(grad, input, 0).tolist() == [[0.0, 0.0], [0.0, 4.0], [2.0, 0.0]]
    assert _threshold_backward(np.ones(3, np.float16), np.array([1, 0, 2], np.float32), 0).dtype == np.float32


def test_max_pool_picks_the_first_largest_and_the_last_nan():
    x = np.array([[[[1, 3, 3, 0], [3, 2, np.nan, np.nan], [-np.inf, -np.inf, 5, 5], [-np.inf, -np.inf, 5, 6]]]],
                 np.float32)
    values, indices = _max_pool_planes(x, (2, 2), (2, 2), (0, 0), (1, 1), (2, 2))
    assert np.array_equal(values, [[[[3, np.nan], [-np.inf, 6]]]], equal_nan=True)
    assert indices.tolist() == [[[[1, 7], [8, 15]]]]
    # padded windows: the scan starts at the first element in bounds
    values, indices = _max_pool_planes(x[..., :3, :3], (2, 2), (2, 2), (1, 1), (1, 1), (2, 2))
    assert indices.tolist() == [[[[0, 1], [3, 5]]]]


def test_lerp_with_a_number_weight_takes_one_branch():
    start, end = tm.tensor([0.0, 1e30, -3.0, float("inf")]), tm.tensor([1.0, -1e30, float("nan"), 2.0])
    for weight in (0.25, 0.5, 0.75, -2.0, float("nan")):
        with np.errstate(all="ignore"):
            s, e = start._data, end._data
            difference = e - s
            reference = np.where(np.absolute(weight) < 0.5, s + weight * difference, e - difference * (1 - weight))
        assert _bits(tm.lerp(start, end, weight)._data) == _bits(reference.astype(np.float32))


def test_operand_dtype_of_one_float_dtype_and_numbers():
    f32, f64 = np.ones(2, np.float32), np.ones((), np.float64)
    assert operand_dtype(f32, 0.5, 2, True, None) is tm.float32
    assert operand_dtype(f64, 1) is tm.float64
    assert operand_dtype(f32, f64) is tm.float32  # a 0-dim operand does not widen a dimensioned one
    assert operand_dtype(f32, 1j) is tm.complex64
    assert operand_dtype(np.ones(2, np.int32), 0.5) is tm.float32


def test_in_place_write_of_the_same_dtype_keeps_storage_and_bumps_the_version():
    x = tm.ones(3)
    data, version = x._data, x._version
    assert x.mul_(2) is x and x._data is data and x._version == version + 1 and x.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tm.ones(2, dtype=tm.int64).mul_(0.5)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        x.add_(tm.ones(2, 3))


@pytest.mark.parametrize("dtype", [tm.float32, tm.float64])
def test_arithmetic_of_a_float_tensor_and_a_number_keeps_the_tensors_dtype_and_values(dtype):
    x = tm.tensor([0.0, -0.0, float("inf"), float("nan"), 3e38, -2.5], dtype=dtype)
    for number in (0.5, -0.0, float("inf"), 1e300, 1e-45):
        a, n = x._data, np.asarray(number, x._data.dtype) if number != 1e300 else number
        with np.errstate(all="ignore"):
            expected = {"mul": a * n, "add": a + n, "sub": a - n, "div": a / n}
        for name, result in (("mul", x * number), ("add", x + number), ("sub", x - number), ("div", x / number)):
            assert result.dtype is dtype and _bits(result._data) == _bits(expected[name].astype(a.dtype)), name


def test_linear_of_a_few_rows_is_contiguous_with_the_same_bits():
    from tensormodes._ops.nn import linear

    rng = np.random.default_rng(3)
    for rows, features, outputs in ((1, 5, 7), (8, 128, 384), (16, 33, 100), (3, 1, 1)):
        x = rng.standard_normal((rows, features)).astype(np.float32)
        weight, bias = rng.standard_normal((outputs, features)).astype(np.float32), rng.standard_normal(outputs)
        result = linear(x, weight, bias.astype(np.float32))
        expected = np.matmul(x, weight.T)
        expected += bias.astype(np.float32)
        assert result.flags.c_contiguous and _bits(result) == _bits(expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_multiplies_a_contiguous_batch_as_the_rows_of_one_matrix(dtype):
    # PyTorch's linear folds a contiguous batch into one addmm (with a bias) or matmul's mm, and
    # so does our decomposition (what a dispatch mode sees): the kernel multiplies those rows as
    # one matrix too, so both paths give the same bits. NumPy's batched matmul (one BLAS call per
    # matrix) gives other bits where a matrix's rows end inside one of OpenBLAS's blocks (7 x 23
    # rows here); the matmul op itself keeps it without modes (its ufunc, np.matmul).
    from tensormodes.utils._python_dispatch import TorchDispatchMode

    class Through(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    rng = np.random.default_rng(7)
    x = rng.standard_normal((7, 23, 89)).astype(dtype)
    w = rng.standard_normal((46, 89)).astype(dtype)
    b = rng.standard_normal(46).astype(dtype)
    rows, batched = np.matmul(x.reshape(161, 89), w.T), np.matmul(x, w.T)
    assert _bits(rows) != _bits(batched)  # the case this test is about
    X, W, B = tm.tensor(x), tm.tensor(w), tm.tensor(b)
    plain = tm.nn.functional.linear(X, W, B)
    assert plain.shape == (7, 23, 46) and _bits(plain.numpy()) == _bits(rows + b)
    assert _bits(tm.nn.functional.linear(X, W).numpy()) == _bits(rows)
    with Through():
        assert _bits(tm.nn.functional.linear(X, W, B).numpy()) == _bits(plain.numpy())
        assert _bits(tm.nn.functional.linear(X, W).numpy()) == _bits(rows)
    assert _bits(tm.matmul(X, W.t()).numpy()) == _bits(batched)
    # a batch that is not contiguous keeps NumPy's batched product
    strided = tm.tensor(x.transpose(1, 0, 2).copy()).transpose(0, 1)
    assert _bits(tm.nn.functional.linear(strided, W).numpy()) == _bits(np.matmul(x, w.T))


@pytest.mark.parametrize("shape", [(8, 2, 32, 32), (512, 8), (3, 40, 48), (64, 49), (5, 4), (0, 5)])
def test_last_axis_maximum_of_short_rows_is_numpys_row_maximum(shape):
    # many short rows go through a transposed copy: the same maxima (NaN rows stay NaN, -inf rows
    # -inf) and shape as the last axis' reduction; other shapes take the reduction itself
    from tensormodes._ops.common import last_axis_maximum

    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    if x.ndim == 4:
        x[0, 0, 0] = np.nan
        x[0, 0, 1] = -np.inf
        x[0, 0, 2, :5] = np.inf
    got = last_axis_maximum(x)
    expected = np.maximum.reduce(x, -1, keepdims=True)
    assert got.shape == expected.shape and got.dtype == x.dtype and _bits(got) == _bits(expected)
    if x.ndim == 4:
        assert np.isnan(got[0, 0, 0, 0]) and got[0, 0, 1, 0] == -np.inf and got[0, 0, 2, 0] == np.inf
    assert last_axis_maximum(np.array([[1.0, 3.0], [4.0, -1.0]] * 40)).ravel().tolist() == [3.0, 4.0] * 40


def test_softmax_of_short_rows_keeps_its_values():
    # softmax along a short last axis takes the transposed maximum: values pinned (as before it)
    x = tm.tensor([[0.0, 1.0, 2.0]] * 40)
    assert tm.softmax(x, -1)[0].tolist() == [0.09003057330846786, 0.2447284460067749, 0.6652409434318542]
    assert tm.softmax(tm.tensor([[float("-inf"), 0.0]] * 40), -1)[7].tolist() == [0.0, 1.0]
