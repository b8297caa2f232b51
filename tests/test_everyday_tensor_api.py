"""The Tensor API everyday scripts use (issue 26 item 5): ``isin``, ``combinations``,
``broadcast_shapes``, ``baddbmm`` / ``addbmm``, ``masked_scatter``, ``scatter_reduce``,
``index_reduce``, ``fill_diagonal_``, ``pdist``, the ``histc`` / ``bincount`` methods and the
linear algebra (``pinv``, ``lstsq``, ``matrix_rank``, ``matrix_exp``, ``cond``, ``multi_dot``, ``eig``,
``svd``) — exact values,
and PyTorch's results, errors and gradients on edge inputs (empty, 0-dim, NaN/Inf, half types,
Python scalars)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm
from tests.torch_oracle import assert_same_outcome

# -- exact values (no oracle) ------------------------------------------------------------------------


def test_isin_values_promotion_and_nan():
    assert tm.isin(tm.tensor([[1, 2], [3, 4]]), tm.tensor([2, 3])).tolist() == [[False, True], [True, False]]
    assert tm.isin(tm.tensor([1, 2]), 2.5).tolist() == [False, False]  # compared as floats
    assert tm.isin(2, tm.tensor([1, 2])).shape == ()
    assert tm.isin(tm.tensor([math.nan, 1.0]), tm.tensor([math.nan])).tolist() == [False, False]
    assert tm.isin(tm.tensor([1, 5]), tm.tensor([1]), invert=True).tolist() == [False, True]
    with pytest.raises(RuntimeError, match=r"Unsupported input type encountered for isin\(\): ComplexFloat"):
        tm.isin(tm.tensor([1]), tm.tensor([1j]))
    with pytest.raises(TypeError, match="isin\\(\\) received an invalid combination of arguments - got \\(int, int\\)"):
        tm.isin(1, 2)
    assert tm.isin(tm.tensor([1, 2]), tm.tensor([2])).requires_grad is False


def test_combinations_values_and_gradient():
    x = tm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    pairs = tm.combinations(x)
    assert pairs.tolist() == [[1.0, 2.0], [1.0, 3.0], [2.0, 3.0]] and pairs.grad_fn.name() == "StackBackward0"
    pairs.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert tm.combinations(x, 2, with_replacement=True).shape == (6, 2)
    assert tm.combinations(x, 4).shape == (0, 4)
    empty = tm.combinations(x, 0)
    assert empty.shape == (0,) and not empty.requires_grad
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[\]"):
        tm.combinations(tm.tensor(1.0))


def test_broadcast_shapes():
    assert tm.broadcast_shapes((2, 1), (3,), 1) == tm.Size([2, 3])
    assert tm.broadcast_shapes() == tm.Size([])
    assert type(tm.broadcast_shapes((1,))) is tm.Size
    with pytest.raises(RuntimeError, match="Attempting to broadcast a dimension of length 3 at -1!"):
        tm.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError, match="Attempting to broadcast a dimension with negative length!"):
        tm.broadcast_shapes((-1,))


def test_batched_products_values():
    assert tm.baddbmm(tm.ones(3), tm.ones(2, 1, 4), tm.ones(2, 4, 3), beta=2, alpha=0.5).tolist() == \
        [[[4.0, 4.0, 4.0]], [[4.0, 4.0, 4.0]]]
    assert tm.addbmm(tm.ones(1, 2), tm.ones(3, 1, 4), tm.ones(3, 4, 2)).tolist() == [[13.0, 13.0]]
    nan = tm.full((2,), math.nan)
    assert tm.addbmm(nan, tm.ones(1, 2, 1), tm.ones(1, 1, 2), beta=0).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    x = tm.zeros(1, 2)
    assert x.addbmm_(tm.ones(2, 1, 1), tm.ones(2, 1, 2)) is x and x.tolist() == [[2.0, 2.0]]


def test_masked_scatter_values_and_gradient():
    x = tm.zeros(2, 3, requires_grad=True)
    source = tm.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    mask = tm.tensor([[True, False, True], [False, True, False]])
    y = x.masked_scatter(mask, source)
    assert y.tolist() == [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]] and y.grad_fn.name() == "MaskedScatterBackward0"
    y.backward(tm.arange(6.0).reshape(2, 3))
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [3.0, 0.0, 5.0]]
    assert source.grad.tolist() == [[0.0, 2.0, 4.0], [0.0, 0.0, 0.0]]
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        tm.zeros(3).masked_scatter(tm.ones(3, dtype=tm.bool), tm.ones(2))


def test_scatter_reduce_values_and_gradients():
    x = tm.tensor([1.0, 2.0, 0.0, 4.0], requires_grad=True)
    src = tm.tensor([1.0, 0.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    index = tm.tensor([0, 1, 0, 1, 2, 1])
    y = x.scatter_reduce(0, index, src, "prod")
    assert y.tolist() == [3.0, 0.0, 0.0, 4.0] and y.grad_fn.name() == "ScatterReduceBackward0"
    x_grad, src_grad = tm.autograd.grad(y, [x, src], tm.arange(1.0, 5.0))
    assert x_grad.tolist() == [3.0, 0.0, 15.0, 4.0]  # the product of the others where an element is 0
    assert src_grad.tolist() == [3.0, 96.0, 1.0, 0.0, 0.0, 0.0]
    ints = tm.tensor([1, 2, 3, 4])
    assert ints.scatter_reduce(0, index[:4], tm.tensor([1, 2, 3, 4]), "mean").tolist() == [1, 2, 3, 4]
    assert (-ints).scatter_reduce(0, index, -tm.arange(1, 7), "mean").tolist() == [-2, -4, -4, -4]  # floor
    assert x.scatter_reduce(0, index, src, "amax", include_self=False).tolist() == [3.0, 6.0, 5.0, 4.0]
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got max"):
        x.scatter_reduce(0, index, src, "max")
    # a src larger than index: its other entries are unused (PyTorch's own backward fails here)
    w = tm.ones(2, 3, requires_grad=True)
    tm.zeros(2, 2).scatter_reduce(1, tm.tensor([[0, 0], [1, 1]]), w, "amax").sum().backward()
    assert w.grad.tolist() == [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]


def test_index_reduce_and_fill_diagonal():
    source = tm.tensor([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])
    assert tm.ones(3, 2).index_reduce(0, tm.tensor([0, 2, 0]), source, "prod").tolist() == \
        [[12.0, 21.0], [1.0, 1.0], [4.0, 5.0]]
    assert tm.ones(3, 2).index_reduce(0, tm.tensor([0, 2, 0]), source, "mean", include_self=False).tolist() == \
        [[4.0, 5.0], [1.0, 1.0], [4.0, 5.0]]
    x = tm.zeros(7, 3)
    assert x.fill_diagonal_(5, wrap=True) is x
    assert [row.index(5.0) if 5.0 in row else None for row in x.tolist()] == [0, 1, 2, None, 0, 1, 2]
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        tm.zeros(3, 3, 4).fill_diagonal_(1)
    leaf = tm.ones(2, 2, requires_grad=True)
    y = leaf.clone().fill_diagonal_(3)
    y.sum().backward()
    assert leaf.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_histc_and_bincount_methods():
    assert tm.tensor([1.0, 2.0, 1.0]).histc(bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 0.0]
    assert tm.tensor([0, 1, 1, 3]).bincount(minlength=5).tolist() == [1, 2, 0, 1, 0]


# -- against PyTorch ---------------------------------------------------------------------------------

EXPRESSIONS = [
    "L.isin(L.tensor([1, 2, 3]), L.tensor([2, 5]))",
    "L.isin(L.tensor([1, 2, 3]), 2)",
    "L.isin(2, L.tensor([1, 2]))",
    "L.isin(2, 3)",
    "L.isin(L.tensor([1.5, 2.0, nan, inf]), L.tensor([2, 1]))",
    "L.isin(L.tensor([1.5, 2.0, nan, -inf]), L.tensor([nan, 2.0, -inf]))",
    "L.isin(L.tensor([[1, 2], [3, 4]]), L.tensor([[2], [3]]), invert=True)",
    "L.isin(L.tensor([1, 2]), L.tensor([1.0 + 1j]))",
    "L.isin(L.tensor([True, False]), L.tensor([True]))",
    "L.isin(L.tensor([1, 2]), 2.5)",
    "L.isin(L.tensor(1), L.empty(0))",
    "L.isin(L.empty(0, 3), L.tensor([1.0]))",
    "L.isin(L.tensor([1, 2], dtype=L.uint8), L.tensor([-1, 2], dtype=L.int8))",
    "L.isin(L.tensor([1.0, 2.0], dtype=L.float16), L.tensor([1.0], dtype=L.bfloat16))",
    "L.isin(L.tensor([0.1, 2.0], dtype=L.float16), L.tensor([0.1]))",
    "L.isin(L.tensor([1, 2]), L.tensor([1]), out=L.empty(2, dtype=L.bool))",
    "L.isin(elements=L.tensor([1]), test_elements=L.tensor([1]), assume_unique=True)",
    "L.combinations(L.tensor([1.0, 2.0, 3.0, 4.0]), 3)",
    "L.combinations(L.tensor([1, 2, 3]), 2, with_replacement=True)",
    "L.combinations(L.tensor([1, 2, 3]), 0)",
    "L.combinations(L.tensor([1, 2, 3]), 4)",
    "L.combinations(L.tensor([1, 2, 3]), -1)",
    "L.combinations(L.ones(2, 2))",
    "L.combinations(L.empty(0))",
    "L.combinations(L.empty(0), 1)",
    "L.combinations(L.tensor([True, False]))",
    "L.combinations(L.tensor([1, 2], dtype=L.bfloat16), with_replacement=True)",
    "L.broadcast_shapes((2, 1), (3,))",
    "L.broadcast_shapes(2, (3, 1))",
    "L.broadcast_shapes()",
    "L.broadcast_shapes((2,), (3,))",
    "L.broadcast_shapes(L.Size([2, 1]), [1, 4])",
    "L.broadcast_shapes((-1,))",
    "L.broadcast_shapes((0, 1), (3,))",
    "L.broadcast_shapes((2.0,))",
    "L.broadcast_shapes((2,), (1, -1))",
    "L.broadcast_shapes((True,), (3,))",
    "L.broadcast_shapes(None, (2,))",
    "L.baddbmm(L.ones(2, 3, 5), L.ones(2, 3, 4), L.ones(2, 4, 5), beta=0.5, alpha=2)",
    "L.baddbmm(L.ones(1), L.ones(2, 3, 4), L.ones(2, 4, 5))",
    "L.baddbmm(L.ones(2, 1, 1, 1), L.ones(2, 3, 4), L.ones(2, 4, 5))",
    "L.baddbmm(L.ones(4), L.ones(2, 3, 4), L.ones(2, 4, 5))",
    "L.baddbmm(L.ones(5), L.ones(2, 3, 4), L.ones(3, 4, 5))",
    "L.baddbmm(L.ones(5), L.ones(2, 3, 4), L.ones(2, 3, 5))",
    "L.baddbmm(L.ones(5), L.ones(3, 4), L.ones(2, 4, 5))",
    "L.baddbmm(L.ones(5), L.ones(2, 3, 4), L.ones(4, 5))",
    "L.baddbmm(L.ones(5, dtype=L.float64), L.ones(2, 3, 4), L.ones(2, 4, 5))",
    "L.baddbmm(L.ones(5, dtype=L.long), L.ones(2, 3, 4, dtype=L.long), L.ones(2, 4, 5, dtype=L.long), alpha=2.5)",
    "L.baddbmm(L.ones(5), L.ones(2, 3, 4), L.ones(2, 4, 5), alpha=1j)",
    "L.baddbmm(L.full((5,), nan), L.ones(2, 3, 4), L.ones(2, 4, 5), beta=0)",
    "L.baddbmm(L.ones(5), L.ones(0, 3, 4), L.ones(0, 4, 5))",
    "L.baddbmm(L.ones(5), L.ones(2, 3, 0), L.ones(2, 0, 5), beta=2)",
    "L.baddbmm(L.ones(5, dtype=L.bool), L.ones(2, 3, 4, dtype=L.bool), L.ones(2, 4, 5, dtype=L.bool))",
    "L.baddbmm(L.ones(5, dtype=L.float16), L.ones(2, 3, 4, dtype=L.float16), L.ones(2, 4, 5, dtype=L.float16))",
    "L.ones(2, 3, 5).baddbmm_(L.ones(2, 3, 4), L.ones(2, 4, 5), beta=2)",
    "L.baddbmm(L.tensor(2.0), L.ones(2, 3, 4), L.ones(2, 4, 5), out=L.empty(2, 3, 5))",
    "L.addbmm(L.ones(3, 5), L.ones(2, 3, 4), L.ones(2, 4, 5), beta=0.5, alpha=2)",
    "L.addbmm(L.ones(5), L.ones(2, 3, 4), L.ones(3, 4, 5))",
    "L.addbmm(L.ones(5), L.ones(2, 3, 4), L.ones(2, 3, 5))",
    "L.addbmm(L.ones(5), L.ones(3, 4), L.ones(2, 4, 5))",
    "L.addbmm(L.ones(5), L.ones(2, 3, 4), L.ones(4, 5))",
    "L.addbmm(L.ones(4), L.ones(2, 3, 4), L.ones(2, 4, 5))",
    "L.addbmm(L.ones(5, dtype=L.float64), L.ones(2, 3, 4), L.ones(2, 4, 5))",
    "L.addbmm(L.ones(5), L.ones(2, 3, 4, dtype=L.float64), L.ones(2, 4, 5))",
    "L.addbmm(L.ones(5, dtype=L.long), L.ones(2, 3, 4, dtype=L.long), L.ones(2, 4, 5, dtype=L.long), beta=2, alpha=3)",
    "L.addbmm(L.full((5,), nan), L.ones(2, 3, 4), L.ones(2, 4, 5), beta=0)",
    "L.addbmm(L.ones(5), L.ones(0, 3, 4), L.ones(0, 4, 5))",
    "L.addbmm(L.ones(5, dtype=L.bool), L.ones(2, 3, 4, dtype=L.bool), L.ones(2, 4, 5, dtype=L.bool))",
    "L.addbmm(L.ones(5, dtype=L.float16), L.ones(2, 3, 4, dtype=L.float16), L.ones(2, 4, 5, dtype=L.float16))",
    "L.ones(3, 5).addbmm_(L.ones(2, 3, 4), L.ones(2, 4, 5), alpha=0.5)",
    "L.zeros(2, 3).masked_scatter(L.tensor([True, False, True]), L.arange(1.0, 7.0))",
    "L.masked_scatter(L.zeros(3), L.ones(2, 3, dtype=L.bool), L.arange(6.0).reshape(2, 3))",
    "L.zeros(2, 3).masked_scatter(L.tensor([[True, False, True], [False, True, False]]), L.ones(2))",
    "L.zeros(2, 3).masked_scatter(L.ones(2, 3, dtype=L.bool), L.ones(6, dtype=L.float64))",
    "L.zeros(2, 3).masked_scatter(L.ones(2, 3, dtype=L.long), L.ones(6))",
    "L.zeros(2, 3).masked_scatter(L.ones(2, 2, dtype=L.bool), L.ones(6))",
    "L.zeros(()).masked_scatter(L.tensor(True), L.tensor([5.0]))",
    "L.zeros(0).masked_scatter(L.ones(0, dtype=L.bool), L.ones(0))",
    "L.zeros(2, dtype=L.int8).masked_scatter(L.tensor([False, True]), L.tensor([7, 8], dtype=L.int8))",
    "L.zeros(3, dtype=L.bfloat16).masked_scatter_(L.tensor([True, False, True]), L.tensor([nan, inf], "
    "dtype=L.bfloat16))",
    "L.tensor([1.0, 2.0, 3.0, 4.0]).scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), "
    "L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 'sum')",
    "L.tensor([1.0, 2.0, 3.0, 4.0]).scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), "
    "L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 'prod', include_self=False)",
    "L.tensor([1.0, 2.0, 3.0, 4.0]).scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), "
    "L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 'mean')",
    "L.tensor([1.0, 2.0, 3.0, 4.0]).scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), "
    "L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 'mean', include_self=False)",
    "L.tensor([1.0, 2.0, 3.0, 4.0]).scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), "
    "L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 'amin', include_self=False)",
    "L.tensor([1, 2, 3, 4]).scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), L.tensor([1, 2, 3, 4, 5, 6]), 'mean')",
    "L.tensor([1, 2], dtype=L.int8).scatter_reduce(0, L.tensor([0, 0]), L.tensor([100, 100], dtype=L.int8), 'mean')",
    "L.tensor([1.0, nan]).scatter_reduce(0, L.tensor([0, 1]), L.tensor([nan, 1.0]), 'amax')",
    "L.tensor([1.0, -inf]).scatter_reduce(0, L.tensor([0, 1]), L.tensor([inf, 1.0]), 'amin', include_self=False)",
    "L.tensor([True, False]).scatter_reduce(0, L.tensor([0, 1, 1]), L.tensor([False, True, False]), 'sum')",
    "L.tensor([True, False]).scatter_reduce(0, L.tensor([0, 1, 1]), L.tensor([False, True, False]), 'amin', "
    "include_self=False)",
    "L.tensor([True, False]).scatter_reduce(0, L.tensor([0, 1]), L.tensor([True, True]), 'mean')",
    "L.tensor([1, 2], dtype=L.float16).scatter_reduce(0, L.tensor([0, 0]), L.tensor([3, 4], dtype=L.float16), "
    "'mean')",
    "L.tensor([1j, 2]).scatter_reduce(0, L.tensor([0, 0]), L.tensor([3, 4j]), 'sum')",
    "L.tensor([1j, 2]).scatter_reduce(0, L.tensor([0, 0]), L.tensor([3, 4j]), 'amax')",
    "L.tensor([1.0, 2.0]).scatter_reduce(0, L.tensor([0, 0]), L.tensor([1.0, 2.0]), 'foo')",
    "L.tensor([1.0, 2.0]).scatter_reduce(0, L.tensor([0, 0]), L.tensor([1.0, 2.0], dtype=L.float64), 'sum')",
    "L.tensor([1.0, 2.0]).scatter_reduce(0, L.tensor([0.0, 0.0]), L.tensor([1.0, 2.0]), 'sum')",
    "L.tensor([1.0, 2.0]).scatter_reduce(0, L.tensor([5]), L.tensor([1.0]), 'sum')",
    "L.tensor([1.0, 2.0]).scatter_reduce(0, L.tensor([[0]]), L.tensor([5.0]), 'sum')",
    "L.tensor([1.0, 2.0]).scatter_reduce(0, L.tensor([0, 0, 0]), L.tensor([5.0]), 'sum')",
    "L.tensor([1.0, 2.0]).scatter_reduce(0, L.empty(0, dtype=L.long), L.tensor([5.0]), 'mean')",
    "L.tensor(1.0).scatter_reduce(0, L.tensor(0), L.tensor(5.0), 'mean')",
    "L.scatter_reduce(L.zeros(2, 3), 1, L.tensor([[2, 2], [0, 1]]), L.ones(2, 2), 'sum')",
    "L.zeros(3).scatter_reduce_(0, L.tensor([0, 0]), L.tensor([2.0, 3.0]), 'amax', include_self=False)",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 2, 0, 1]), L.arange(8.0).reshape(4, 2), 'prod')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 2, 0, 1]), L.arange(8.0).reshape(4, 2), 'mean', include_self=False)",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 2, 0, 1]), L.arange(8.0).reshape(4, 2), 'amax')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 2, 0, 1]), L.arange(8.0).reshape(4, 2), 'amin', include_self=False)",
    "L.ones(3, 2).index_reduce(1, L.tensor([1, 1, 0]), L.arange(6.0).reshape(2, 3), 'amax')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 2, 0, 1]), L.arange(8.0).reshape(4, 2), 'sum')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 2, 0]), L.arange(8.0).reshape(4, 2), 'prod')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 2, 0, 1]), L.ones(4, 2, dtype=L.float64), 'prod')",
    "L.ones(3, 2).index_reduce(0, L.tensor([[0]]), L.ones(1, 2), 'prod')",
    "L.ones(3, 2).index_reduce(0, L.tensor([3]), L.ones(1, 2), 'prod')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 1], dtype=L.int32), L.ones(2, 2), 'prod')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0.0]), L.ones(1, 2), 'prod')",
    "L.ones(3, 2).index_reduce(0, L.tensor([0, 1]), L.ones(2, 3), 'amax')",
    "L.ones(3, dtype=L.long).index_reduce(0, L.tensor([0, 0]), L.tensor([3, 4]), 'mean')",
    "L.tensor(2.0).index_reduce(0, L.tensor(0), L.tensor(3.0), 'prod')",
    "L.ones(2, dtype=L.bool).index_reduce(0, L.tensor([0]), L.tensor([False]), 'prod')",
    "L.ones(3, 2, dtype=L.bool).index_reduce(0, L.tensor([0, 1]), L.zeros(2, 2, dtype=L.bool), 'amax')",
    "L.ones(3, 2, dtype=L.bool).index_reduce(0, L.tensor([0, 1]), L.zeros(2, 2, dtype=L.bool), 'mean')",
    "L.ones(3, 2, dtype=L.complex64).index_reduce(0, L.tensor([0, 1]), L.ones(2, 2, dtype=L.complex64) * 2j, 'mean')",
    "L.ones(3, 2, dtype=L.complex64).index_reduce(0, L.tensor([0, 1]), L.ones(2, 2, dtype=L.complex64), 'amax')",
    "L.ones(3, 2, dtype=L.complex64).index_reduce(0, L.tensor([0, 1]), L.ones(2, 2, dtype=L.complex64), 'prod', "
    "include_self=False)",
    "L.ones(3, 2, dtype=L.int8).index_reduce(0, L.tensor([0, 1]), L.ones(2, 2, dtype=L.int8), 'amin', "
    "include_self=False)",
    "L.index_reduce(L.ones(3, 2), 0, L.tensor([0, 0]), L.full((2, 2), 3.0), 'prod')",
    "L.ones(3, 2).index_reduce_(0, L.tensor([0, 0]), L.full((2, 2), 3.0), 'mean')",
    "L.zeros(3, 4).fill_diagonal_(5)",
    "L.zeros(7, 3).fill_diagonal_(5, wrap=True)",
    "L.zeros(7, 3).fill_diagonal_(5)",
    "L.zeros(3, 7).fill_diagonal_(5, wrap=True)",
    "L.zeros(3, 3, 3).fill_diagonal_(2)",
    "L.zeros(3, 3, 4).fill_diagonal_(2)",
    "L.zeros(3).fill_diagonal_(2)",
    "L.zeros(3, 3, dtype=L.long).fill_diagonal_(2.7)",
    "L.zeros(3, 3, dtype=L.int8).fill_diagonal_(1000)",
    "L.zeros(0, 3).fill_diagonal_(1)",
    "L.zeros(3, 3).t().fill_diagonal_(nan)",
    "L.zeros(4, 4)[::2, ::2].fill_diagonal_(inf)",
    "L.zeros(2, 2, dtype=L.float16).fill_diagonal_(1e5)",
    "L.pdist(L.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]))",
    "L.nn.functional.pdist(L.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]), 0)",
    "L.pdist(L.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, nan]]), inf)",
    "L.pdist(L.tensor([[0.0, inf], [3.0, 4.0]], dtype=L.float64), 1.5)",
    "L.pdist(L.ones(3, 2), -1)", "L.pdist(L.ones(3))", "L.pdist(L.ones(3, 2, dtype=L.long))",
    "L.pdist(L.ones(3, 2, dtype=L.float16))", "L.pdist(L.ones(1, 2))", "L.pdist(L.ones(3, 0))",
    "L.tensor([1.0, 2.0, 1.0]).histc(bins=4, min=0, max=3)",
    "L.tensor([0, 1, 1, 3]).bincount(L.tensor([0.5, 1.0, 2.0, 1.0]))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_matches_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-6, atol=1e-6)


GRADIENT_CASES = [
    # (expression over L and the leaves x, y; x, y)
    ("L.combinations(x, 3)", "L.tensor([1.0, 2.0, 3.0, 4.0])", None),
    ("L.pdist(x, 0.5)", "L.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]])", None),
    ("L.pdist(x, 1.5)", "L.tensor([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]], dtype=L.float64)", None),
    ("L.pdist(x, inf)", "L.tensor([[0.0, 0.0], [3.0, -4.0], [1.0, 1.0]])", None),
    ("L.combinations(x, 2, with_replacement=True)", "L.tensor([1.0, 2.0, 3.0], dtype=L.float64)", None),
    ("L.baddbmm(L.ones(5), x, y, beta=0.5, alpha=2)", "L.linspace(-1, 1, 24).reshape(2, 3, 4)",
     "L.linspace(-2, 1, 40).reshape(2, 4, 5)"),
    ("L.addbmm(L.ones(3, 5), x, y, alpha=-1.5)", "L.linspace(-1, 1, 24).reshape(2, 3, 4)",
     "L.linspace(-2, 1, 40).reshape(2, 4, 5)"),
    ("x.masked_scatter(L.tensor([True, False, True]), y)", "L.zeros(2, 3)", "L.arange(1.0, 8.0)"),
    ("x.scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), y, 'prod')", "L.tensor([1.0, 2.0, 0.0, 4.0])",
     "L.tensor([1.0, 0.0, 3.0, 4.0, 5.0, 6.0])"),
    ("x.scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), y, 'prod', include_self=False)",
     "L.tensor([1.0, 2.0, 0.0, 4.0])", "L.tensor([1.0, 0.0, 3.0, 0.0, 5.0, 6.0])"),
    ("x.scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), y, 'mean', include_self=False)",
     "L.tensor([1.0, 2.0, 0.0, 4.0])", "L.tensor([1.0, 0.0, 3.0, 4.0, 5.0, 6.0])"),
    ("x.scatter_reduce(0, L.tensor([0, 1, 0, 1, 2, 1]), y, 'amin')", "L.tensor([1.0, 2.0, 0.0, 4.0])",
     "L.tensor([1.0, 0.0, 3.0, 4.0, 5.0, 6.0])"),
    ("x.scatter_reduce(1, L.tensor([[0, 0], [1, 1]]), y, 'amax')", "L.zeros(2, 2)", "L.ones(2, 2)"),
    ("x.index_reduce(0, L.tensor([0, 2, 0, 1]), y, 'prod')", "L.tensor([[1.0, 0.0], [2.0, 3.0], [1.0, -1.0]])",
     "L.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 0.0], [6.0, 7.0]])"),
    ("x.index_reduce(0, L.tensor([0, 2, 0, 1]), y, 'amax', include_self=False)", "L.ones(3, 2)",
     "L.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 1.0], [6.0, 7.0]])"),
    ("x.clone().fill_diagonal_(3.0, wrap=True)", "L.linspace(-1, 1, 15).reshape(5, 3)", None),
]


@pytest.mark.torch
@pytest.mark.parametrize("expression, x, y", GRADIENT_CASES)
def test_gradients_match_torch(expression, x, y):
    """Outputs, the node's name and the leaves' gradients through a weighted sum of the output."""
    torch = pytest.importorskip("torch")
    results = []
    for library in (tm, torch):
        namespace = {"L": library, "nan": math.nan, "inf": math.inf}
        leaves = [eval(text, namespace).requires_grad_() for text in (x, y) if text is not None]
        out = eval(expression, {**namespace, "x": leaves[0], "y": leaves[-1]})
        weights = library.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)
        grads = library.autograd.grad((out * weights).sum(), leaves)
        results.append((out.detach().double().numpy(), [g.double().numpy() for g in grads],
                        type(out.grad_fn).__name__))
    (out, grads, node), (their_out, their_grads, their_node) = results
    # composites record their last step's node, which differs where the steps do (cond:
    # SqueezeBackward1 in PyTorch), as does fill_diagonal_'s (CopySlices: PyTorch writes a view)
    assert node == their_node or (node, their_node) in (("FillDiagonalBackward0", "CopySlices"),
                                                        ("DivBackward0", "SqueezeBackward1"))
    np.testing.assert_allclose(out, their_out, rtol=1e-6, atol=1e-7, err_msg=expression)
    for ours, theirs in zip(grads, their_grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=expression)


# -- linear algebra ----------------------------------------------------------------------------------

def test_linalg_values():
    assert tm.linalg.matrix_exp(tm.tensor([[0.0, 1.0], [0.0, 0.0]])).tolist() == [[1.0, 1.0], [0.0, 1.0]]
    assert tm.linalg.pinv(tm.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist() == [[0.5, 0.0], [0.0, 0.0]]
    assert tm.linalg.matrix_rank(tm.ones(2, 3, 3)).tolist() == [1, 1]
    assert tm.linalg.cond(tm.tensor([[2.0, 0.0], [0.0, 0.5]]), "fro").item() == pytest.approx(4.25)
    assert tm.linalg.cond(tm.zeros(2, 2), 1).item() == math.inf  # singular
    result = tm.linalg.lstsq(tm.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), tm.tensor([1.0, 2.0, 3.0]),
                             driver="gelsd")
    assert type(result).__name__ == "linalg_lstsq" and result.rank.item() == 2
    assert result.residuals.shape == (1,) and result.residuals.item() == pytest.approx(0.0, abs=1e-10)
    assert not result.singular_values.requires_grad
    assert tm.linalg.multi_dot([tm.ones(2, 3), tm.ones(3, 4), tm.ones(4)]).tolist() == [12.0, 12.0]
    assert tm.linalg.matrix_power(tm.tensor([[1, 1], [0, 1]]), 3).tolist() == [[1, 3], [0, 1]]


LINALG_EXPRESSIONS = [
    "L.linalg.matrix_exp(L.tensor([[0.0, 1.0], [-1.0, 0.0]]))",
    "L.linalg.matrix_exp(L.tensor([[1.0, nan], [0.0, 0.0]]))",
    "L.linalg.matrix_exp(L.tensor([[1.0, inf], [0.0, 0.0]]))",
    "L.linalg.matrix_exp(L.ones(2, 2, dtype=L.long))",
    "L.linalg.matrix_exp(L.ones(2, 3))",
    "L.linalg.matrix_exp(L.ones(3))",
    "L.linalg.matrix_exp(L.empty(2, 0, 0))",
    "L.linalg.matrix_exp(L.tensor([[5.0]]))",
    "L.linalg.matrix_exp(L.tensor([[100.0]]))",
    "L.linalg.matrix_exp(L.tensor([[3.0, -2.0, 0.5], [1.0, 0.0, 7.0], [-4.0, 2.0, 1.0]], dtype=L.float64))",
    "L.linalg.matrix_exp(L.tensor([[1j, 0], [0, 1]]))",
    "L.matrix_exp(L.tensor([[1.0, 2.0], [3.0, 4.0]]))",
    "L.tensor([[1.0]]).matrix_exp()",
    "L.linalg.matrix_power(L.ones(2, 3), 2)",
    "L.linalg.matrix_power(L.tensor([[2.0, 1.0], [1.0, 3.0]]), -2)",
    "L.linalg.pinv(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))",
    "L.linalg.pinv(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), atol=1.0)",
    "L.linalg.pinv(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), rtol=0.5)",
    "L.linalg.pinv(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), atol=0.1, rtol=0.5)",
    "L.linalg.pinv(L.ones(3))",
    "L.linalg.pinv(L.ones(2, 2, dtype=L.long))",
    "L.linalg.pinv(L.ones(2, 2, dtype=L.float16))",
    "L.linalg.pinv(L.empty(0, 3))",
    "L.linalg.pinv(L.tensor([[1.0, nan], [0.0, 1.0]]))",
    "L.linalg.pinv(L.tensor([[2.0, 1.0], [1.0, 2.0]]), hermitian=True)",
    "L.linalg.pinv(L.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=L.complex64))",
    "L.linalg.pinv(L.zeros(2, 2))",
    "L.pinverse(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), rcond=0.5)",
    "L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64).pinverse()",
    "L.linalg.lstsq(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([[1.0], [2.0], [4.0]]))",
    "L.linalg.lstsq(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([[1.0], [2.0], [4.0]]), driver='gelsd')",
    "L.linalg.lstsq(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([[1.0], [2.0], [4.0]]), driver='gelss')",
    "L.linalg.lstsq(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([[1.0], [2.0], [4.0]]), driver='gels')",
    "L.linalg.lstsq(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([1.0, 2.0, 4.0]), driver='gelsd')",
    "L.linalg.lstsq(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([[1.0], [2.0], [4.0]]), driver='foo')",
    "L.linalg.lstsq(L.ones(3, 2), L.ones(2, 1))",
    "L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1, dtype=L.float64))",
    "L.linalg.lstsq(L.ones(3, 2, dtype=L.long), L.ones(3, 1, dtype=L.long))",
    "L.linalg.lstsq(L.ones(3, 2), L.ones(1, 1, 3, 1))",
    "L.linalg.lstsq(L.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]), L.tensor([[1.0], [2.0]]), driver='gelsd')",
    "L.linalg.lstsq(L.ones(3, 2), L.tensor([[1.0], [2.0], [4.0]]), driver='gelsd')",
    "L.linalg.lstsq(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([[1.0], [2.0], [4.0]]), 0.5, "
    "driver='gelsd')",
    "L.linalg.lstsq(L.eye(3, dtype=L.complex128), L.ones(2, 3, 2, dtype=L.complex128))",
    "L.linalg.matrix_rank(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))",
    "L.linalg.matrix_rank(L.ones(3, 3))",
    "L.linalg.matrix_rank(L.ones(2, 3, 3), atol=0.5)",
    "L.linalg.matrix_rank(L.ones(3, 3), hermitian=True)",
    "L.linalg.matrix_rank(L.ones(3, 3), 0.5)",
    "L.linalg.matrix_rank(L.ones(3, 3), tol=0.5)",
    "L.linalg.matrix_rank(L.diag(L.tensor([3.0, 1.0, 1e-3])), rtol=0.01)",
    "L.linalg.matrix_rank(L.diag(L.tensor([3.0, 1.0, 1e-3])), atol=0.5, rtol=0.0)",
    "L.linalg.matrix_rank(L.ones(3))",
    "L.linalg.matrix_rank(L.ones(3, 3, dtype=L.long))",
    "L.linalg.matrix_rank(L.empty(0, 3))",
    "L.linalg.matrix_rank(L.empty(2, 0, 3))",
    "L.linalg.cond(L.tensor([[1.0, 2.0], [3.0, 4.0]]))",
    *[f"L.linalg.cond(L.tensor([[1.0, 2.0], [3.0, 4.0]]), {p})"
      for p in ("2", "-2", "'fro'", "'nuc'", "inf", "-inf", "1", "-1", "3", "'foo'")],
    "L.linalg.cond(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))",
    "L.linalg.cond(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), 'fro')",
    "L.linalg.cond(L.zeros(2, 2))",
    "L.linalg.cond(L.zeros(2, 2), 'fro')",
    "L.linalg.cond(L.stack([L.zeros(2, 2), L.eye(2)]), 1)",
    "L.linalg.cond(L.ones(2, 2, dtype=L.complex64) + L.eye(2))",
    "L.linalg.cond(L.ones(2, 2, dtype=L.long))",
    "L.linalg.cond(L.ones(3))",
    "L.linalg.cond(L.empty(0, 0))",
    "L.linalg.cond(L.empty(0, 0), 'fro')",
    "L.linalg.householder_product(L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), L.tensor([0.5, -1.5]))",
    "L.linalg.householder_product(L.tensor([[1.0, 2.0], [3.0, nan], [5.0, 6.0]]), L.tensor([0.5]))",
    "L.linalg.householder_product(L.ones(2, 4, 3, dtype=L.float64), L.ones(2, 3, dtype=L.float64))",
    "L.linalg.householder_product(L.ones(3, 2, dtype=L.complex64) * 1j, L.tensor([1.0 + 1j, 0.5], dtype=L.complex64))",
    "L.linalg.householder_product(L.ones(3), L.ones(2))",
    "L.linalg.householder_product(L.ones(2, 3), L.ones(2))",
    "L.linalg.householder_product(L.ones(4, 3), L.ones(4))",
    "L.linalg.householder_product(L.ones(4, 3), L.ones(1, 2))",
    "L.linalg.householder_product(L.ones(2, 4, 3), L.ones(3, 2))",
    "L.linalg.householder_product(L.ones(4, 3), L.ones(2, dtype=L.float64))",
    "L.linalg.householder_product(L.ones(4, 3, dtype=L.long), L.ones(2, dtype=L.long))",
    "L.linalg.householder_product(L.ones(4, 3, dtype=L.float16), L.ones(2, dtype=L.float16))",
    "L.linalg.householder_product(L.empty(0, 0), L.empty(0))",
    "L.linalg.householder_product(L.empty(3, 0), L.empty(0))",
    "L.linalg.multi_dot([L.ones(3)])",
    "L.linalg.multi_dot([])",
    "L.linalg.multi_dot([L.ones(3), L.ones(3)])",
    "L.linalg.multi_dot([L.arange(3.0), L.ones(3, 2), L.ones(2)])",
    "L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 2)])",
    "L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 2, dtype=L.float64)])",
    "L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 2, 2)])",
    "L.linalg.multi_dot([L.ones(2, 2, 3), L.ones(3, 2)])",
    "L.linalg.multi_dot([L.ones(2, 3), L.ones(3), L.ones(2)])",
    "L.linalg.multi_dot([L.ones(2, 3, dtype=L.long), L.ones(3, 2, dtype=L.long)])",
    "L.linalg.multi_dot([L.arange(6.0).reshape(2, 3), L.arange(12.0).reshape(3, 4), L.arange(8.0).reshape(4, 2), "
    "L.arange(10.0).reshape(2, 5)])",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", LINALG_EXPRESSIONS)
def test_linalg_matches_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-5, atol=1e-5)


LINALG_GRADIENTS = [
    ("L.linalg.matrix_exp(x)", "L.tensor([[0.1, 0.2, -0.3], [0.3, 0.4, 0.0], [-1.0, 0.5, 0.2]])", None),
    ("L.linalg.pinv(x)", "L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]], dtype=L.float64)", None),
    ("L.linalg.pinv(x)", "L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], dtype=L.float64)", None),
    ("L.pinverse(x)", "L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64)", None),
    ("L.linalg.lstsq(x, y).solution", "L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]], dtype=L.float64)",
     "L.tensor([[1.0, 0.0], [2.0, 1.0], [4.0, -1.0]], dtype=L.float64)"),
    ("L.linalg.lstsq(x, y, driver='gelsd').residuals", "L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]], "
     "dtype=L.float64)", "L.tensor([[1.0, 0.0], [2.0, 1.0], [4.0, -1.0]], dtype=L.float64)"),
    ("L.linalg.lstsq(x, y, driver='gels').residuals", "L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]], "
     "dtype=L.float64)", "L.tensor([1.0, 2.0, 4.0], dtype=L.float64)"),
    ("L.linalg.cond(x)", "L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64)", None),
    ("L.linalg.multi_dot([x, y, L.ones(2, 2)])", "L.linspace(-1, 1, 6).reshape(2, 3)",
     "L.linspace(-2, 1, 6).reshape(3, 2)"),
    ("L.linalg.multi_dot([x, y])", "L.linspace(-1, 1, 3)", "L.linspace(-2, 1, 6).reshape(3, 2)"),
    ("L.linalg.householder_product(x, y)", "L.linspace(-1, 1, 12, dtype=L.float64).reshape(4, 3)",
     "L.tensor([0.5, -1.5, 0.3], dtype=L.float64)"),
    ("L.linalg.householder_product(x, y)", "L.linspace(-1, 1, 8).reshape(4, 2)", "L.tensor([1.2])"),
]


@pytest.mark.parametrize("p", ["fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond_gradient_matches_finite_differences(p):
    # (PyTorch's own backward through cond for these norms fails: it writes into a saved inverse)
    x = tm.tensor([[1.0, 2.0], [3.0, 4.5]], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(lambda a: tm.linalg.cond(a, p), (x,))


@pytest.mark.torch
@pytest.mark.parametrize("expression, x, y", LINALG_GRADIENTS)
def test_linalg_gradients_match_torch(expression, x, y):
    test_gradients_match_torch(expression, x, y)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    # torch.svd's singular vectors are unique up to sign: compared through products that are not
    "[x.shape for x in L.svd(L.ones(3, 2))]", "[x.shape for x in L.svd(L.ones(3, 2), some=False)]",
    "[x.shape for x in L.svd(L.ones(2, 4, 3), compute_uv=False)]", "L.svd(L.ones(2, 3), compute_uv=False)[0]",
    "L.svd(L.ones(2, 3), compute_uv=False)[2]", "L.svd(L.tensor([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]])).S",
    "(lambda r: r.U @ r.S.diag_embed() @ r.V.mT)(L.svd(L.tensor([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]])))",
    "(lambda r: r.U @ r.S.diag_embed().to(r.U.dtype) @ r.V.mH)(L.svd(L.tensor([[1.0 + 1j, 2.0], [0.5j, 1.0]])))",
    "L.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=L.float64).svd().S",
    "type(L.svd(L.ones(2, 2))).__name__",
    "L.svd(L.ones(3))", "L.svd(L.ones(2, 2, dtype=L.long))",
    "[x.shape for x in L.svd(L.empty(0, 3))]",
])
def test_legacy_svd_matches_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-5, atol=1e-5)


def test_legacy_svd_gradient_of_singular_values():
    x = tm.tensor([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(lambda a: tm.svd(a, compute_uv=False).S, (x,))
    assert tm.autograd.gradcheck(lambda a: (lambda r: r.U @ r.S.diag_embed() @ r.V.mT)(tm.svd(a)), (x,))


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.linalg.eigvals(L.tensor([[0.0, -1.0], [1.0, 0.0]]))",
    "L.linalg.eigvals(L.tensor([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, -1.0]], dtype=L.float64))",
    "L.linalg.eig(L.tensor([[2.0, 0.0], [0.0, 3.0]])).eigenvalues",
    "(lambda r: r.eigenvectors @ r.eigenvalues.diag_embed() @ L.linalg.inv(r.eigenvectors))("
    "L.linalg.eig(L.tensor([[2.0, 1.0], [0.5, -1.0]], dtype=L.float64)))",
    "(lambda r: r.eigenvectors.abs())(L.linalg.eig(L.tensor([[2.0, 1.0], [0.5, -1.0]], dtype=L.float64)))",
    "L.linalg.eig(L.ones(2, 3))", "L.linalg.eig(L.ones(3))", "L.linalg.eig(L.ones(2, 2, dtype=L.long))",
    "L.linalg.eig(L.ones(2, 2, dtype=L.float16))", "L.linalg.eig(L.tensor([[1.0, nan], [0.0, 1.0]]))",
    "L.linalg.eigvals(L.ones(2, 3))", "L.linalg.eig(L.empty(2, 0, 0))",
    "L.linalg.eig(L.tensor([[1.0 + 1j, 2.0], [0.0, 3.0j]])).eigenvalues",
])
def test_eig_matches_torch(expression):
    pytest.importorskip("torch")
    assert_same_outcome(expression, rtol=1e-5, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("loss", [
    "lambda r: r.eigenvalues.real.sum() + (r.eigenvalues ** 2).imag.sum()",
    "lambda r: (r.eigenvectors.abs() ** 2 * L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64)).sum()",
    "lambda r: r.eigenvalues.abs().sum() + r.eigenvectors[0].abs().sum()",
])
def test_eig_gradients_of_phase_invariant_losses_match_torch(loss):
    torch = pytest.importorskip("torch")
    grads = []
    for library in (tm, torch):
        a = library.tensor([[2.0, 1.0], [0.5, -1.0]], dtype=library.float64, requires_grad=True)
        value = eval(loss, {"L": library})(library.linalg.eig(a))
        grads.append(library.autograd.grad(value, [a])[0].numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-9)
    x = tm.tensor([[2.0, 1.0], [0.5, -1.0]], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(lambda a: tm.linalg.eigvals(a).real, (x,))


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.randn(2, 3, 4, 5).permute(0, 2, 1, 3).clone(memory_format=L.contiguous_format).stride()",
    "L.randn(2, 3, 4, 5).permute(0, 2, 1, 3).clone(memory_format=L.channels_last).stride()",
    "L.randn(2, 3, 4, 5).permute(0, 2, 1, 3).clone(memory_format=L.preserve_format).stride()",
    "L.randn(2, 3, 4, 5).clone(memory_format=L.channels_last).stride()",
    "L.randn(2, 3, 4, 5, 6).clone(memory_format=L.channels_last_3d).stride()",
    "L.randn(2, 3, 4, 5).to('meta').permute(0, 2, 1, 3).clone(memory_format=L.channels_last).stride()",
    "L.randn(3, 4).t().clone(memory_format=L.contiguous_format).is_contiguous()",
    "L.randn(3, 4).t().contiguous().stride()",
    "L.randn(2, 3).clone(memory_format=L.channels_last)",
])
def test_clone_lays_the_copy_out_as_the_memory_format_says(expression):
    # (it used to keep the input's strides whatever the format: contiguous() at the dispatch level
    # is clone(memory_format=contiguous_format), as in PyTorch)
    assert_same_outcome(expression)
