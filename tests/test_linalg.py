"""Linear algebra: products, einsum, tensordot, trace, matrix_power and torch.linalg's
functions (det, slogdet, inv, solve, svd, cholesky, qr, eigh) — values, dtypes, PyTorch's
errors, gradients."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm

from .torch_oracle import assert_same_outcome

CASES = [
    # matmul: each combination of dimensions has PyTorch's own errors
    "L.matmul(L.ones(2,3), L.ones(3,4,dtype=L.float64))", "L.matmul(L.ones(2,3), L.ones(4,5))",
    "L.matmul(L.ones(3), L.ones(4))", "L.matmul(L.ones(2,3), L.ones(4))", "L.matmul(L.ones(3), L.ones(4,5))",
    "L.matmul(L.ones(2,2,3), L.ones(3,4,5))", "L.matmul(L.ones(()), L.ones(3))",
    "L.matmul(L.ones(2,3,dtype=L.int32), L.ones(3,4,dtype=L.int64))", "L.matmul(L.ones(3,2,2), L.ones(4,2,2))",
    "L.matmul(L.ones(4,3,dtype=L.int64).T, L.ones(4,3,dtype=L.int64))",
    "L.matmul(L.ones(2,3,dtype=L.bool), L.ones(3,2,dtype=L.bool))",
    "L.matmul(L.ones(2,3,dtype=L.float16), L.ones(3,2,dtype=L.float16))",
    "L.matmul(L.ones(2,3,dtype=L.int8), L.ones(3,2,dtype=L.int8))",
    "L.matmul(L.ones(3), L.ones(3,dtype=L.float64))", "L.matmul(L.ones(3,2), L.ones(2,dtype=L.float64))",
    "L.matmul(L.ones(3,3,2), L.ones(2,dtype=L.float64))", "L.matmul(L.ones(2), L.ones(3,2,2,dtype=L.float64))",
    "L.matmul(L.ones(2,2,3), L.ones(2,4,5))", "L.matmul(L.ones(2,2,3), L.ones(4,5))",
    "L.matmul(L.ones(2,3), L.ones(2,4,5))", "L.matmul(L.ones(2,2,3), L.ones(4))", "L.matmul(L.ones(3), L.ones(2,4,5))",
    "L.matmul(L.ones(2,1,2,3), L.ones(3,3,2))", "L.matmul(L.ones(2,2,3), L.ones(2,3,4,dtype=L.float64))",
    "L.matmul(L.ones(2,3), L.ones(2,3,4,dtype=L.float64))", "L.matmul(L.ones(2,2,3), L.ones(3,4,dtype=L.float64))",
    "L.matmul(L.ones(2,2,3,dtype=L.bool), L.ones(2,3,4,dtype=L.bool))",
    "L.matmul(L.ones(3,dtype=L.bool), L.ones(3,dtype=L.bool))",
    "L.matmul(L.ones(2,3,dtype=L.bool), L.ones(3,dtype=L.bool))", "L.matmul(L.ones(0,3), L.ones(3,0))",
    "L.matmul(L.ones(3,0), L.ones(0,3))", "L.matmul(L.ones(3,0,dtype=L.bool), L.ones(0,3,dtype=L.bool))",
    "L.matmul(L.arange(6.).reshape(2,3), L.arange(3.))", "L.matmul(L.arange(24).reshape(2,3,4), L.arange(4))",
    "L.ones(2,3) @ L.ones(3)", "L.arange(4.) @ L.arange(8.).reshape(2,4,1)",
    # mm, bmm, mv, dot, vdot
    "L.mm(L.ones(2,3), L.ones(4,5,dtype=L.float64))", "L.mm(L.ones(2,3), L.ones(3,4,dtype=L.float64))",
    "L.mm(L.ones(3), L.ones(3,2))", "L.mm(L.ones(2,3), L.ones(3))", "L.mm(L.ones(2,3), L.ones(3,2,dtype=L.int64))",
    "L.mm(L.ones(2,2), L.ones(2,2,dtype=L.uint8))", "L.mm(L.ones(2,2), L.ones(2,2,dtype=L.int16))",
    "L.mm(L.ones(2,2), L.ones(2,2,dtype=L.bfloat16))", "L.mm(L.ones(2,2), L.ones(2,2,dtype=L.complex128))",
    "L.mm(L.ones(0,3,dtype=L.bool), L.ones(3,2,dtype=L.bool))",
    "L.mm(L.arange(6).reshape(2,3), L.arange(6).reshape(3,2))",
    "L.bmm(L.ones(2,2,3), L.ones(2,3,4))", "L.bmm(L.ones(2,3), L.ones(2,3,4))", "L.bmm(L.ones(2,2,3), L.ones(3,3,4))",
    "L.bmm(L.ones(2,2,3), L.ones(2,4,4))", "L.bmm(L.ones(2,2,3), L.ones(2,3,4, dtype=L.float64))",
    "L.bmm(L.ones(2,2,3), L.ones(2,3))", "L.bmm(L.ones(2,2,3,dtype=L.bool), L.ones(2,3,4,dtype=L.bool))",
    "L.mv(L.ones(2,3), L.ones(4))", "L.mv(L.ones(3), L.ones(3))", "L.mv(L.ones(2,3), L.ones(3,1))",
    "L.mv(L.ones(2,3), L.ones(3, dtype=L.float64))", "L.mv(L.ones(2,3,dtype=L.float64), L.ones(3))",
    "L.mv(L.ones(2,3,dtype=L.bool), L.ones(3,dtype=L.bool))", "L.mv(L.arange(6).reshape(2,3), L.arange(3))",
    "L.dot(L.ones(3), L.ones(4))", "L.dot(L.ones(3), L.ones(3,dtype=L.float64))", "L.dot(L.ones(3,1), L.ones(3))",
    "L.dot(L.tensor([1,2]), L.tensor([3,4]))", "L.dot(L.tensor([True]), L.tensor([True]))",
    "L.dot(L.tensor([1j]), L.tensor([1j]))", "L.dot(L.ones(3,1), L.ones(3,dtype=L.float64))",
    "L.dot(L.ones(0,dtype=L.bool), L.ones(0,dtype=L.bool))", "L.dot(L.ones(2), L.ones(2,dtype=L.float16))",
    "L.vdot(L.tensor([1j, 2]), L.tensor([1j, 1]))", "L.vdot(L.ones(3), L.ones(4))", "L.vdot(L.ones(3,1), L.ones(3))",
    "L.vdot(L.tensor([1,2]), L.tensor([3,4]))", "L.vdot(L.ones(2,dtype=L.bool), L.ones(2,dtype=L.bool))",
    # outer, ger, inner
    "L.outer(L.ones(2), L.ones(3,dtype=L.float64))", "L.outer(L.ones(2,2), L.ones(3))",
    "L.outer(L.tensor([1,2]), L.tensor([True]))", "L.outer(L.tensor(2), L.ones(3))", "L.outer(L.ones(2), L.ones(3,3))",
    "L.outer(L.ones(2,dtype=L.bool), L.ones(2,dtype=L.bool))", "L.ger(L.ones(2), L.ones(3))",
    "L.ger(L.ones(2,2), L.ones(3))",
    "L.inner(L.ones(2,3), L.ones(4,3,dtype=L.float64))", "L.inner(L.ones(2,3), L.ones(4))",
    "L.inner(L.tensor(2), L.ones(3))",
    "L.inner(L.tensor([1,2]), L.tensor([3.,4]))", "L.inner(L.ones(2,dtype=L.bool), L.ones(2,dtype=L.bool))",
    "L.inner(L.ones(2,3,dtype=L.bool), L.ones(2,3,dtype=L.bool))",
    "L.inner(L.ones(3,dtype=L.int32), L.ones(3, dtype=L.int32))",
    "L.inner(L.arange(6.).reshape(2,3), L.arange(12.).reshape(2,2,3))",
    # einsum
    "L.einsum('ij,jk->ik', L.ones(2,3), L.ones(3,4))", "L.einsum('ij,jk', L.ones(2,3), L.ones(3,4))",
    "L.einsum('ij,jk->ik', L.ones(2,3), L.ones(3,4,dtype=L.float64))",
    "L.einsum('ij,jk->ik', L.ones(2,3,dtype=L.int32), L.ones(3,4,dtype=L.int64))",
    "L.einsum('ij,jk->ik', L.ones(2,3,dtype=L.bool), L.ones(3,4,dtype=L.bool))",
    "L.einsum('ii', L.arange(9.).view(3,3))",
    "L.einsum('ii->i', L.arange(9.).view(3,3))", "L.einsum('...ij->...ji', L.ones(2,3,4))",
    "L.einsum('i,i', L.ones(3,dtype=L.int32), L.ones(3,dtype=L.int32))", "L.einsum('i', L.ones(3,dtype=L.int32))",
    "L.einsum('i->', L.ones(3,dtype=L.int32))", "L.einsum('i->', L.ones(3,dtype=L.bool))",
    "L.einsum('ij,jk->ik', L.ones(2,3), L.ones(4,4))", "L.einsum('ij,jk->ik', L.ones(2,3))",
    "L.einsum('ij->ik', L.ones(2,3))",
    "L.einsum('ijk->ij', L.ones(2,3))", "L.einsum('i j , j k -> i k', L.ones(2,3), L.ones(3,4))",
    "L.einsum('ij,jk->ii', L.ones(2,3), L.ones(3,4))", "L.einsum('ij,jk->ik')",
    "L.einsum('A,A->', L.ones(2), L.ones(2))",
    "L.einsum('1,1->', L.ones(2), L.ones(2))", "L.einsum('ba', L.ones(2,3))", "L.einsum('Ba', L.ones(2,3))",
    "L.einsum('ij,ij->ij', L.ones(2,3), L.ones(1,3))",
    "L.einsum('ij,j->', L.ones(2,3,dtype=L.int32), L.ones(3,dtype=L.int32))",
    "L.einsum('ij,k->i', L.ones(2,3,dtype=L.int32), L.ones(4,dtype=L.int32))",
    "L.einsum('ii', L.ones(3,3,dtype=L.int32))",
    "L.einsum('ij->j', L.ones(3,3,dtype=L.bool))", "L.einsum('i,i,i->', *[L.ones(3,dtype=L.int32)] * 3)",
    "L.einsum('i,j->ij', L.ones(3,dtype=L.bool), L.ones(3,dtype=L.bool))",
    "L.einsum('i,i->', L.ones(3,dtype=L.int32), L.ones(3,dtype=L.int64))",
    "L.einsum('i,j->ij', L.ones(3,dtype=L.int32), L.ones(3,dtype=L.int64))", "L.einsum('ii->i', L.ones(2,3))",
    "L.einsum('ij...,jk...->ik...', L.ones(2,3,5), L.ones(3,4,5))", "L.einsum('...,...->...', L.ones(2,3), L.ones(3))",
    "L.einsum('i...i', L.ones(2,4,2))", "L.einsum('ij.k', L.ones(2,3,4))",
    "L.einsum('ij,jk->ik', L.ones(2,3), L.ones(3,4), L.ones(2))",
    "L.einsum('bn,anm,bm->ba', L.arange(6.).reshape(2,3), L.arange(24.).reshape(2,3,4), L.arange(8.).reshape(2,4))",
    # tensordot
    "L.tensordot(L.ones(2,3,4), L.ones(3,4,5))", "L.tensordot(L.ones(2,3,4), L.ones(3,4,5), dims=([1,2],[0,1]))",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=(2,0))", "L.tensordot(L.ones(2,3), L.ones(4,5), dims=0)",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=-1)", "L.tensordot(L.ones(2,3,4), L.ones(5,5), dims=1)",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5,dtype=L.float64), dims=1)",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=([2],[0,1]))",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=3)", "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=L.tensor(1))",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=([-1],[-2]))",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=([5],[0]))",
    "L.tensordot(L.ones(2,3,4), L.ones(4,5), dims=L.tensor([[2],[0]]))",
    "L.tensordot(L.ones(2,3), L.ones(3,2), dims=[1, 0])",
    "L.tensordot(L.ones(2,3,4,dtype=L.bool), L.ones(4,5,dtype=L.bool), dims=1)",
    "L.tensordot(L.ones(2,3), L.ones(3,2), dims=([1, 1],[0, 0]))", "L.tensordot(L.ones(2,3), L.ones(3,2), dims=2)",
    "L.tensordot(L.ones(2,3), L.ones(3,2), dims=1.5)",
    "L.tensordot(L.arange(6.).reshape(2,3), L.arange(6.).reshape(3,2), dims=([0,1],[1,0]))",
    # addmm
    "L.addmm(L.ones(2), L.ones(2,3), L.ones(3,2))", "L.addmm(L.ones(3), L.ones(2,3), L.ones(3,2))",
    "L.addmm(L.ones(2,2,dtype=L.float64), L.ones(2,3), L.ones(3,2))",
    "L.addmm(L.full((2,2), nan), L.ones(2,3), L.ones(3,2), beta=0)",
    "L.addmm(L.ones(2,2), L.ones(2,3), L.ones(3,2), beta=0.5, alpha=2)",
    "L.addmm(L.ones(2,2,dtype=L.int64), L.ones(2,3,dtype=L.int64), L.ones(3,2,dtype=L.int64), beta=0.5, alpha=2)",
    "L.addmm(L.ones(2,2,dtype=L.int64), L.ones(2,3,dtype=L.int64), L.ones(3,2,dtype=L.int64), alpha=True)",
    "L.addmm(L.ones(()), L.ones(2,3), L.ones(3,2))", "L.addmm(L.ones(2,2), L.ones(2,3), L.ones(4,2))",
    "L.addmm(L.ones(2,2), L.ones(3), L.ones(3,2))",
    "L.addmm(L.ones(2,2,dtype=L.bool), L.ones(2,3,dtype=L.bool), L.ones(3,2,dtype=L.bool))",
    "L.ones(2,2).addmm_(L.ones(2,3), L.ones(3,2), alpha=2)",
    "L.addmm(L.ones(2,2,dtype=L.complex64), L.ones(2,3,dtype=L.complex64), L.ones(3,2,dtype=L.complex64), alpha=1j)",
    "L.addmm(L.ones(2,2), L.ones(2,3), L.ones(3,2), alpha=1j)",
    "L.addmm(L.ones(2,2,dtype=L.float32), L.ones(2,3), L.ones(3,2,dtype=L.float64))",
    "L.addmm(L.ones(2,2,dtype=L.float16), L.ones(2,3,dtype=L.float16), L.ones(3,2,dtype=L.float16), alpha=0.5)",
    # trace, matrix_power
    "L.trace(L.arange(9).view(3,3))", "L.trace(L.arange(9, dtype=L.int32).view(3,3))",
    "L.trace(L.ones(2,3,dtype=L.bool))",
    "L.trace(L.ones(3))", "L.trace(L.ones(2,3,dtype=L.float16))", "L.trace(L.ones(2,3,dtype=L.uint8))",
    "L.trace(L.ones(0,3))",
    "L.trace(L.tensor([[1j,2],[3,4]]))", "L.matrix_power(L.tensor([[1.,1],[0,1]]), 3)",
    "L.matrix_power(L.tensor([[1.,1],[0,1]]), 0)", "L.matrix_power(L.tensor([[2.,0],[0,4]]), -1)",
    "L.matrix_power(L.tensor([[1,1],[0,1]]), -1)", "L.matrix_power(L.ones(2,3), 2)", "L.matrix_power(L.ones(3), 2)",
    "L.matrix_power(L.ones(2,2,2), 2)", "L.matrix_power(L.ones(2,2,dtype=L.bool), 2)",
    "L.matrix_power(L.ones(2,2,dtype=L.bool), 1)",
    "L.matrix_power(L.ones(2,2,dtype=L.bool), 0)", "L.matrix_power(L.ones(2,2), 2.0)",
    "L.matrix_power(L.ones(3,2,2,dtype=L.int32), 0)",
    "L.matrix_power(L.tensor([[1,2],[3,4]]), 7)", "L.ones(2,2).matrix_power(3)", "L.ones(2,3).mm(L.ones(3,2))",
    # svd, svdvals: checks in PyTorch's order, empty matrices, non-finite matrices in a batch
    "L.linalg.svd(L.ones(3))", "L.linalg.svd(L.ones(3,3,dtype=L.int64))", "L.linalg.svd(L.ones(3,dtype=L.int64))",
    "L.linalg.svd(L.ones(2,2,dtype=L.float16))", "L.linalg.svd(L.ones(2,2,dtype=L.bfloat16))",
    "L.linalg.svd(L.ones(2,2), driver='gesvd')", "L.linalg.svd(L.ones(2,2), full_matrices=None)",
    "L.linalg.svd(L.ones(0,3))", "L.linalg.svd(L.ones(0,3), False)", "L.linalg.svd(L.ones(2,0,3), False)",
    "L.linalg.svd(L.ones(0,2,2))", "L.linalg.svd(L.tensor([[1j,2,0],[3,4,1]])).S",
    "L.linalg.svd(L.tensor([[3.,0],[0,-4]]))", "L.linalg.svd(L.tensor([[0.,2,0],[1,0,0]], dtype=L.float64))",
    "L.linalg.svd(L.tensor([[[1.,2],[3,4]],[[1,inf],[0,1]]])).S",
    "L.linalg.svdvals(L.ones(3))", "L.linalg.svdvals(L.ones(2,2,dtype=L.int32))",
    "L.linalg.svdvals(L.ones(2,2,dtype=L.float16))", "L.linalg.svdvals(L.ones(2,2), driver='gesvd')",
    "L.linalg.svdvals(L.tensor([[3.,0],[0,-4]]))", "L.linalg.svdvals(L.ones(2,0,3))",
    "L.linalg.svdvals(L.tensor([[[0.,0],[0,1]],[[1.,2],[3,nan]]]))", "L.linalg.svd(L.tensor([[1.,nan],[0,1]]))",
    "L.linalg.svd(L.full((2,3,2,2), nan)[1:], False)", "L.linalg.svd(L.tensor([[1.,inf],[0,1]]))",
    "L.linalg.svdvals(L.tensor([[[1.,inf],[0,1]],[[1.,2],[3,4]]]))",
    "L.linalg.svdvals(L.tensor([[1j,2],[3,4]]))",
    # einsum's other calling forms
    "L.einsum('ij,jk', [L.ones(2,3), L.ones(3,4)])", "L.einsum(L.ones(2,3), [0,1], L.ones(3,4), [1,2], [2,0])",
    "L.einsum(L.ones(2,3), [0,1], L.ones(3,4), [1,3])",
    "L.einsum(L.ones(2,3), [0,60])", "L.einsum('i', [])", "L.einsum(L.ones(2,3), [Ellipsis,0], L.ones(3), [0])",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_outcome(expression, rtol=None, atol=None)  # LAPACK results: assert_close tolerances


def test_singular_inverse_in_matrix_power_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="the input matrix is singular"):
        tm.matrix_power(tm.zeros(2, 2), -1)


def test_matmul_operators_and_methods():
    a, b = tm.tensor([[1, 2], [3, 4]]), tm.tensor([[1], [1]])
    assert (a @ b).tolist() == [[3], [7]] and a.matmul(b).tolist() == [[3], [7]]
    assert tm.Tensor.__rmatmul__(a, b.t()).tolist() == [[4, 6]]  # b.t() @ a, from the right operand
    out = tm.empty(0, dtype=tm.int64)
    assert tm.matmul(a, b, out=out) is out and out.tolist() == [[3], [7]]


@settings(max_examples=60, deadline=None)
@given(batch_a=st.lists(st.integers(1, 3), max_size=2), batch_b=st.lists(st.integers(1, 3), max_size=2),
       n=st.integers(0, 3), k=st.integers(0, 3), m=st.integers(0, 3), vector_a=st.booleans(),
       vector_b=st.booleans(), data=st.data())
def test_integer_matmul_equals_numpy(batch_a, batch_b, n, k, m, vector_a, vector_b, data):
    shape_a = (k,) if vector_a else (*batch_a, n, k)
    shape_b = (k,) if vector_b else (*batch_b, k, m)
    a = np.arange(int(np.prod(shape_a)), dtype=np.int64).reshape(shape_a) - 3
    b = np.arange(int(np.prod(shape_b)), dtype=np.int64).reshape(shape_b) % 5
    try:
        expected = np.matmul(a, b)
    except ValueError:
        with pytest.raises(RuntimeError):
            tm.matmul(tm.tensor(a), tm.tensor(b))
        return
    result = tm.matmul(tm.tensor(a), tm.tensor(b))
    assert result.dtype is tm.int64 and result.shape == np.shape(expected)
    assert np.array_equal(result.numpy(), expected)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("i,i->", [(4,), (4,)]),
    ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 1)]),
    ("i,j,k->ijk", [(2,), (3,), (1,)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]), ("ba,ab", [(2, 3), (3, 2)]),
])
def test_einsum_equals_numpy(equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    result = tm.einsum(equation, *[tm.tensor(a) for a in arrays])
    np.testing.assert_allclose(result.numpy(), np.einsum(equation, *arrays), rtol=1e-12)


def test_einsum_accepts_a_list_of_operands_and_the_sublist_format():
    a, b = tm.arange(6.).reshape(2, 3), tm.arange(12.).reshape(3, 4)
    expected = (a @ b).tolist()
    assert tm.einsum("ij,jk", [a, b]).tolist() == tm.einsum("ij,jk", (a, b)).tolist() == expected
    assert tm.einsum(a, [0, 1], b, [1, 2], [0, 2]).tolist() == tm.einsum(a, [0, 1], b, [1, 2]).tolist() == expected
    assert tm.einsum(a, [..., 1], b, [1, 2]).tolist() == expected
    with pytest.raises(ValueError, match=r"subscript in subscript list is not within the valid range \[0, 52\)"):
        tm.einsum(a, [0, 52])
    with pytest.raises(TypeError, match="must be tuple of Tensors, not list"):
        tm.einsum("i", [a], a)


def test_handlers_see_einsums_arguments_in_one_form():
    seen = []

    class Watch(tm.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is tm.einsum:
                seen.append(tuple(type(a).__name__ if not isinstance(a, str) else a for a in args))
            return func(*args, **(kwargs or {}))

    a, b = tm.ones(2, 3), tm.ones(3, 4)
    with Watch():
        tm.einsum("ij,jk", [a, b])
        tm.einsum(a, [0, 1], b, [1, 2], [0, 2])
    assert seen == [("ij,jk", "Tensor", "Tensor"), ("AB,BC->AC", "Tensor", "Tensor")]


@settings(max_examples=40, deadline=None)
@given(shape_a=st.lists(st.integers(1, 3), min_size=1, max_size=3), extra=st.lists(st.integers(1, 3), max_size=2),
       dims=st.integers(0, 3))
def test_tensordot_equals_numpy(shape_a, extra, dims):
    dims = min(dims, len(shape_a))
    shape_b = shape_a[len(shape_a) - dims:] + extra
    a = np.arange(int(np.prod(shape_a)), dtype=np.float64).reshape(shape_a)
    b = np.arange(int(np.prod(shape_b)), dtype=np.float64).reshape(shape_b) / 7
    result = tm.tensordot(tm.tensor(a), tm.tensor(b), dims=dims)
    np.testing.assert_allclose(result.numpy(), np.tensordot(a, b, axes=dims), rtol=1e-12)


def test_addmm_in_place_and_scalars():
    x = tm.ones(2, 2)
    assert x.addmm_(tm.ones(2, 3), tm.ones(3, 2), beta=0.5, alpha=2) is x
    assert x.tolist() == [[6.5, 6.5], [6.5, 6.5]]
    assert tm.addmm(tm.full((2, 2), float("nan")), tm.ones(2, 1), tm.ones(1, 2), beta=0).tolist() == [[1.0] * 2] * 2


def test_mm_out_dtype_is_cuda_only_like_torch():
    with pytest.raises(NotImplementedError, match="aten::mm.dtype"):
        tm.mm(tm.ones(2, 2), tm.ones(2, 2), tm.float64)


# -- gradients -------------------------------------------------------------------------------------

GRADIENT_CASES = [
    ("L.matmul", [(3,), (3,)]), ("L.matmul", [(2, 3), (3,)]), ("L.matmul", [(3,), (3, 4)]),
    ("L.matmul", [(2, 1, 2, 3), (3, 3, 2)]), ("L.matmul", [(3,), (2, 3, 4)]), ("L.matmul", [(2, 2, 3), (3,)]),
    ("L.mm", [(2, 3), (3, 4)]), ("L.bmm", [(2, 2, 3), (2, 3, 1)]), ("L.mv", [(2, 3), (3,)]), ("L.dot", [(4,), (4,)]),
    ("L.vdot", [(4,), (4,)]), ("L.outer", [(2,), (3,)]), ("L.inner", [(2, 3), (4, 3)]), ("L.inner", [(), (3,)]),
    ("lambda a, b: L.tensordot(a, b, dims=([0, 2], [2, 0]))", [(2, 3, 4), (4, 5, 2)]),
    ("lambda a, b, c: L.addmm(a, b, c, beta=0.5, alpha=-2)", [(3,), (2, 4), (4, 3)]),
    ("L.trace", [(3, 5)]), ("L.trace", [(4, 2)]),
    ("lambda a: L.matrix_power(a, 3)", [(2, 3, 3)]),
    ("lambda a: L.matrix_power(a + 3 * L.eye(3, dtype=L.float64), -2)", [(3, 3)]),
    ("lambda a: L.matrix_power(a, 0)", [(2, 2)]),
]


def _gradients(library, function: str, shapes, seed: int = 0):
    rng = np.random.default_rng(seed)
    inputs = [library.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    result = eval(function, {"L": library})(*inputs)
    weights = library.tensor(np.random.default_rng(1).standard_normal(tuple(result.shape)))
    (result * weights).sum().backward()
    return result.detach().numpy(), [x.grad.numpy() for x in inputs]


@pytest.mark.torch
@pytest.mark.parametrize("function, shapes", GRADIENT_CASES)
def test_gradients_match_torch(function, shapes):
    import torch

    ours, ours_grads = _gradients(tm, function, shapes)
    theirs, theirs_grads = _gradients(torch, function, shapes)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for o, t in zip(ours_grads, theirs_grads, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("function, shapes", GRADIENT_CASES)
def test_gradients_match_finite_differences(function, shapes):
    rng = np.random.default_rng(0)
    inputs = tuple(tm.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes)
    function = eval(function, {"L": tm})
    assert function(*inputs).requires_grad  # gradcheck skips outputs that do not require grad
    assert tm.autograd.gradcheck(function, inputs)


EINSUM_GRADIENT_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii,i->i", [(3, 3), (3,)]), ("ii", [(3, 3)]), ("i,i->i", [(3,), (1,)]),
    ("...ij,jk->...ik", [(2, 2, 3), (3, 2)]), ("ij,k->i", [(2, 3), (4,)]),
    ("bn,anm,bm->ba", [(2, 3), (2, 3, 4), (2, 4)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_GRADIENT_CASES)
def test_einsum_gradients(equation, shapes):
    rng = np.random.default_rng(0)
    inputs = tuple(tm.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes)
    assert tm.einsum(equation, *inputs).requires_grad  # gradcheck skips outputs that do not require grad
    assert tm.autograd.gradcheck(lambda *xs: tm.einsum(equation, *xs), inputs)


# -- the singular value decomposition ------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 5), n=st.integers(1, 5),
       full_matrices=st.booleans(), complex_input=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_svd_factors_rebuild_the_input_and_have_canonical_signs(batch, m, n, full_matrices, complex_input, seed):
    rng = np.random.default_rng(seed)
    array = rng.standard_normal((*batch, m, n))
    if complex_input:
        array = array + 1j * rng.standard_normal((*batch, m, n))
    U, S, Vh = tm.linalg.svd(tm.tensor(array), full_matrices)
    k = min(m, n)
    u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
    assert u.shape == (*batch, m, m if full_matrices else k) and vh.shape == (*batch, n if full_matrices else k, n)
    assert s.dtype == np.float64 and s.shape == (*batch, k) and np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], array, atol=1e-12)
    for rows in (np.swapaxes(u, -2, -1), vh):  # orthonormal
        identity = np.broadcast_to(np.eye(rows.shape[-2]), (*batch, rows.shape[-2], rows.shape[-2]))
        np.testing.assert_allclose(rows @ np.swapaxes(rows, -2, -1).conj(), identity, atol=1e-12)
    # Every column of U has its largest entry real and positive; so have Vh's rows past k.
    for vectors in (u, np.swapaxes(vh[..., k:, :], -2, -1)):
        largest = np.take_along_axis(vectors, np.abs(vectors).argmax(axis=-2)[..., None, :], axis=-2)
        assert np.all(largest.real > 0) and np.allclose(largest.imag, 0, atol=1e-12)
    np.testing.assert_allclose(tm.linalg.svdvals(tm.tensor(array)).numpy(), s, rtol=1e-12, atol=1e-12)


def test_svd_returns_a_named_tuple_with_one_node_for_its_three_outputs():
    x = tm.tensor([[3., 0.], [0., -4.]], requires_grad=True)
    result = tm.linalg.svd(x)
    assert type(result) is tm.return_types.linalg_svd and result._fields == ("U", "S", "Vh")
    assert result.S.tolist() == [4.0, 3.0]
    # Columns of U with their largest entry positive; Vh's rows follow (A = U diag(S) Vh).
    assert result.U.tolist() == [[0.0, 1.0], [1.0, 0.0]] and result.Vh.tolist() == [[0.0, -1.0], [1.0, 0.0]]
    assert result.U.grad_fn is result.S.grad_fn is result.Vh.grad_fn
    assert result.U.grad_fn.name() == "LinalgSvdBackward0"
    assert tm.linalg.svdvals(x).grad_fn.name() == "LinalgSvdvalsBackward0"
    assert tm.linalg.svd.__module__ == "tensormodes.linalg" and tm.linalg.svd.__name__ == "svd"


def test_nan_raises_a_linalg_error_and_an_infinity_gives_nan_factors():
    message = "The algorithm failed to converge because the input matrix contained non-finite values."
    for func in (tm.linalg.svd, tm.linalg.svdvals):
        with pytest.raises(tm.linalg.LinAlgError, match=f"^linalg.svd: {message}$"):
            func(tm.tensor([[1., float("nan")], [0., 1.]]))
        batch = tm.zeros(2, 2, 2, 2)
        batch[1, 0, 0, 0] = float("nan")
        with pytest.raises(tm.linalg.LinAlgError, match=rf"^linalg.svd: \(Batch element 2\): {message}$"):
            func(batch)
    assert issubclass(tm.linalg.LinAlgError, RuntimeError)
    U, S, Vh = tm.linalg.svd(tm.tensor([[[2., 0.], [0., 1.]], [[float("inf"), 0.], [0., 1.]]]))
    assert S.tolist()[0] == [2.0, 1.0] and np.isnan(S.numpy()[1]).all()
    assert np.isnan(U.numpy()[1]).all() and np.isnan(Vh.numpy()[1]).all() and not np.isnan(U.numpy()[0]).any()


@pytest.mark.torch
def test_non_finite_message_matches_torch():
    import torch

    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        torch.linalg.svd(torch.tensor([[1., float("nan")], [0., 1.]]))
    with pytest.raises(tm.linalg.LinAlgError) as ours:
        tm.linalg.svd(tm.tensor([[1., float("nan")], [0., 1.]]))
    assert str(ours.value) == str(theirs.value)


SVD_GRADIENT_CASES = [
    ("lambda a: L.linalg.svd(a)", (3, 3)), ("lambda a: L.linalg.svd(a, full_matrices=False)", (4, 2)),
    ("lambda a: L.linalg.svd(a, full_matrices=False)", (2, 2, 4)), ("lambda a: L.linalg.svd(a).S", (3, 2)),
    ("lambda a: L.linalg.svd(a).U", (2, 3)), ("lambda a: L.linalg.svd(a, False).Vh", (4, 3)),
    ("lambda a: L.linalg.svdvals(a)", (2, 3, 2)), ("lambda a: L.norm(a, 'nuc')", (3, 4)),
    ("lambda a: L.norm(a, 'nuc', dim=(2, 0), keepdim=True)", (2, 3, 4)),
    ("lambda a: a.norm('nuc', (-1, 1))", (2, 3, 2)),
]


@pytest.mark.parametrize("function, shape", SVD_GRADIENT_CASES)
def test_svd_gradients_and_second_gradients_match_finite_differences(function, shape):
    x = tm.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    function = eval(function, {"L": tm})
    assert tm.autograd.gradcheck(function, (x,))
    assert tm.autograd.gradgradcheck(function, (x,))


@pytest.mark.torch
@pytest.mark.parametrize("function, shape", SVD_GRADIENT_CASES)
def test_svd_gradients_match_torch(function, shape):
    import torch

    from .op_samples import _torch_svd

    def gradient(library, svd):
        x = library.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
        outputs = eval(function, {"L": library})(x)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        seeds = [library.tensor(np.random.default_rng(i).standard_normal(tuple(o.shape))) for i, o in
                 enumerate(outputs)]
        grad, = library.autograd.grad(outputs, x, seeds)
        return grad.numpy()

    # torch's singular vectors with tensormodes' signs (op_samples._torch_svd), for the factors' gradients
    signed = type("linalg", (), {"svd": staticmethod(_torch_svd(torch)), "svdvals": torch.linalg.svdvals})
    torch_like = type("torch_like", (), {"tensor": torch.tensor, "linalg": signed, "norm": torch.norm,
                                         "autograd": torch.autograd})
    np.testing.assert_allclose(gradient(tm, None), gradient(torch_like, None), rtol=1e-9, atol=1e-12)


# Functions of a complex SVD that do not depend on the singular vectors' phases.
COMPLEX_SVD_GRADIENT_CASES = [
    ("lambda a: (lambda r: r.U @ r.S.to(r.U.dtype).diag_embed() @ r.Vh)(L.linalg.svd(a, full_matrices=False))",
     (3, 2)),
    ("lambda a: L.linalg.svd(a).U.abs()", (2, 3)), ("lambda a: L.linalg.svd(a, False).Vh.abs()", (3, 4)),
    ("lambda a: (lambda r: r.U[..., :1] @ r.Vh[..., :1, :])(L.linalg.svd(a))", (2, 3, 3)),
    ("lambda a: L.linalg.svdvals(a)", (2, 3, 2)), ("lambda a: L.norm(a, 'nuc')", (3, 4)),
]


def _complex_matrix(library, shape):
    rng = np.random.default_rng(0)
    return library.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("function, shape", COMPLEX_SVD_GRADIENT_CASES)
def test_complex_svd_gradients_match_finite_differences(function, shape):
    x = _complex_matrix(tm, shape)
    function = eval(function, {"L": tm})
    assert tm.autograd.gradcheck(function, (x,))
    assert tm.autograd.gradgradcheck(function, (x,))


@pytest.mark.torch
@pytest.mark.parametrize("function, shape", COMPLEX_SVD_GRADIENT_CASES)
def test_complex_svd_gradients_match_torch(function, shape):
    import torch

    def gradient(library):
        x = _complex_matrix(library, shape)
        output = eval(function, {"L": library})(x)
        seed = np.random.default_rng(1).standard_normal(tuple(output.shape))
        grad, = library.autograd.grad(output, x, library.tensor(seed + 1j * seed if output.is_complex() else seed))
        return grad.numpy(force=True)

    np.testing.assert_allclose(gradient(tm), gradient(torch), rtol=1e-9, atol=1e-12)


def test_complex_svd_gradient_that_depends_on_the_phases_raises():
    x = _complex_matrix(tm, (3, 3))
    with pytest.raises(RuntimeError, match=r"svd_backward: The singular vectors in the complex case are specified up "
                                           r"to multiplication by e\^\{i phi\}"):
        tm.linalg.svd(x).U.real.sum().backward()
    assert x.grad is None


def test_nuclear_norm_gradient_with_repeated_singular_values():
    # The identity's singular values are all 1: only S's gradient is used, so no 0 / 0.
    x = tm.eye(3, dtype=tm.float64, requires_grad=True)
    x.norm("nuc").backward()
    assert x.grad.tolist() == np.eye(3).tolist()


# -- determinants, inverses, linear systems, Cholesky, QR, eigh ---------------------------------------

DECOMPOSITION_CASES = [
    # det, slogdet: PyTorch's checks in its order, singular and empty inputs
    "L.linalg.det(L.ones(2,3))", "L.linalg.det(L.ones(3))", "L.linalg.det(L.tensor(1.))",
    "L.linalg.det(L.ones(2,2,dtype=L.int32))", "L.linalg.det(L.ones(2,3,dtype=L.int32))",
    "L.linalg.det(L.ones(2,2,dtype=L.bool))", "L.linalg.det(L.ones(2,2,dtype=L.float16))",
    "L.linalg.det(L.ones(2,2,dtype=L.bfloat16))", "L.linalg.det(L.zeros(2,2))", "L.linalg.det(L.ones(0,0))",
    "L.linalg.det(L.ones(0,2,2))", "L.linalg.det(L.tensor([[2.,3],[4,5]], dtype=L.float64))",
    "L.linalg.det(L.tensor([[1j,2],[3,4]]))", "L.linalg.det(L.arange(18.).reshape(2,3,3) % 5)",
    "L.linalg.det(L.tensor([[1.,nan],[0,1]]))", "L.linalg.det(L.ones(2,2,dtype=L.complex128)).dtype",
    "L.linalg.slogdet(L.ones(2,3))", "L.linalg.slogdet(L.ones(3))", "L.linalg.slogdet(L.ones(2,2,dtype=L.int32))",
    "L.linalg.slogdet(L.ones(2,2,dtype=L.float16))", "L.linalg.slogdet(L.ones(2,2,dtype=L.bfloat16))",
    "L.linalg.slogdet(L.ones(2,3,dtype=L.float16))", "L.linalg.slogdet(L.tensor([[0.,2],[1,0]]))",
    "L.linalg.slogdet(L.zeros(2,2)).sign", "L.linalg.slogdet(L.zeros(2,2)).logabsdet",
    "L.linalg.slogdet(L.tensor([[1j,0],[0,2]])).sign", "L.linalg.slogdet(L.tensor([[1j,0],[0,2]])).logabsdet",
    "L.linalg.slogdet(L.ones(0,0)).sign", "L.linalg.slogdet(L.ones(0,2,2)).logabsdet",
    "L.linalg.slogdet(L.arange(18.).reshape(2,3,3) % 5 - 2).logabsdet",
    # inv
    "L.linalg.inv(L.ones(2,3))", "L.linalg.inv(L.ones(3))", "L.linalg.inv(L.ones(2,2,dtype=L.int32))",
    "L.linalg.inv(L.ones(2,2,dtype=L.float16))", "L.linalg.inv(L.ones(2,2,dtype=L.bfloat16))",
    "L.linalg.inv(L.ones(2,3,dtype=L.float16))", "L.linalg.inv(L.zeros(2,2))", "L.linalg.inv(L.zeros(3,2,2))",
    "L.linalg.inv(L.tensor([[[1.,0],[0,1]],[[1.,1],[1,1]]]))", "L.linalg.inv(L.tensor([[1.,2,3],[2,4,6],[1,0,1]]))",
    "L.linalg.inv(L.ones(0,0))", "L.linalg.inv(L.ones(2,0,0))", "L.linalg.inv(L.tensor([[2.,1],[1,1]]))",
    "L.linalg.inv(L.tensor([[1j,2],[3,4]], dtype=L.complex128))", "L.linalg.inv(L.tensor([[1.,nan],[0,1]]))",
    # solve: vectors, batches of vectors, broadcasting, left=False and each error
    "L.linalg.solve(L.ones(2,3), L.ones(2))", "L.linalg.solve(L.ones(3), L.ones(3))",
    "L.linalg.solve(L.eye(2), L.ones(3))", "L.linalg.solve(L.eye(2), L.ones(2,3))",
    "L.linalg.solve(L.eye(2), L.ones(3,2), left=False)", "L.linalg.solve(L.eye(2), L.ones(2), left=False)",
    "L.linalg.solve(L.eye(2), L.ones(3,3))", "L.linalg.solve(L.eye(2), L.ones(2,dtype=L.float64))",
    "L.linalg.solve(L.eye(2,dtype=L.int32), L.ones(2,dtype=L.int32))",
    "L.linalg.solve(L.ones(2,2), L.ones(2,dtype=L.int32))", "L.linalg.solve(L.ones(2,3,dtype=L.int32), L.ones(2))",
    "L.linalg.solve(L.zeros(2,2), L.ones(2))", "L.linalg.solve(L.zeros(3,2,2), L.ones(3,2))",
    "L.linalg.solve(L.eye(2).expand(3,2,2), L.ones(3,2))", "L.linalg.solve(L.eye(2).expand(3,2,2), L.ones(4,2))",
    "L.linalg.solve(L.eye(2).expand(3,2,2), L.ones(2,2))", "L.linalg.solve(L.eye(2).expand(3,2,2), L.ones(4,2,2))",
    "L.linalg.solve(L.eye(2), L.ones(()))", "L.linalg.solve(L.eye(2,dtype=L.float16), L.ones(2,dtype=L.float16))",
    "L.linalg.solve(L.eye(2,dtype=L.bfloat16), L.ones(2,dtype=L.bfloat16))",
    "L.linalg.solve(L.eye(2), L.ones(2,dtype=L.complex64))", "L.linalg.solve(L.eye(2), L.ones(2,2), left=None)",
    "L.linalg.solve(L.eye(2).expand(4,3,2,2), L.ones(3,2))", "L.linalg.solve(L.eye(2).expand(2,2,2), L.ones(1,2,2))",
    "L.linalg.solve(L.eye(2).expand(2,2,2), L.ones(2,2), left=False)", "L.linalg.solve(L.eye(2), L.ones(2,0))",
    "L.linalg.solve(L.ones(0,0), L.ones(0))", "L.linalg.solve(L.ones(0,2,2), L.ones(2))",
    "L.linalg.solve(L.tensor([[2.,1],[1,3]]), L.tensor([[1.,2],[3,4],[5,6]]), left=False)",
    "L.linalg.solve(L.tensor([[2.,1j],[1,3]]), L.tensor([1.,1j]))",
    "L.linalg.solve(L.tensor([[[2.,1],[1,3]],[[1,2],[0,1]]]), L.tensor([[1.,2],[3,4]]))",
    # cholesky
    "L.linalg.cholesky(L.ones(2,3))", "L.linalg.cholesky(L.ones(3))", "L.linalg.cholesky(L.ones(2,2,dtype=L.int32))",
    "L.linalg.cholesky(L.ones(2,2,dtype=L.float16))", "L.linalg.cholesky(L.ones(2,2,dtype=L.bfloat16))",
    "L.linalg.cholesky(L.tensor([[1.,2],[2,1]]))", "L.linalg.cholesky(L.tensor([[[1.,0],[0,1]],[[1.,2],[2,1]]]))",
    "L.linalg.cholesky(L.tensor([[-1.,2],[2,1]]))", "L.linalg.cholesky(L.tensor([[4.,9],[2,5]]), upper=True)",
    "L.linalg.cholesky(L.tensor([[4.,9],[2,5]]))", "L.linalg.cholesky(L.tensor([[4.,2],[9,5]]), upper=True)",
    "L.linalg.cholesky(L.tensor([[4.,2j],[-2j,5]]))", "L.linalg.cholesky(L.tensor([[4.,2j],[-2j,5]]), upper=True)",
    "L.linalg.cholesky(L.ones(0,0))", "L.linalg.cholesky(L.tensor([[1.,nan],[0,1]]))",
    "L.linalg.cholesky(L.tensor([[nan,0],[0,1]]))", "L.linalg.cholesky(L.tensor([[[1.,0],[0,1]],[[1.,0],[nan,1]]]))",
    "L.linalg.inv(L.tensor([[1.,inf],[0,1]]))", "L.linalg.solve(L.tensor([[1.,nan],[0,1]]), L.ones(2))",
    "L.linalg.inv(L.tensor([[0.,0,1],[0,0,0],[1,0,0]]))", "L.linalg.det(L.arange(9.).reshape(3,3))",
    "L.linalg.cholesky(L.ones(2,2), upper=None)",
    "L.linalg.cholesky(L.tensor([[4.,2,0],[2,5,1],[0,1,3]], dtype=L.float64))",
    # qr
    "L.linalg.qr(L.ones(3))", "L.linalg.qr(L.ones(2,2,dtype=L.int32))", "L.linalg.qr(L.ones(2,2,dtype=L.float16))",
    "L.linalg.qr(L.ones(2,2,dtype=L.bfloat16))", "L.linalg.qr(L.ones(2,2), mode='foo')",
    "L.linalg.qr(L.ones(2,2,dtype=L.int32), mode='foo')", "L.linalg.qr(L.ones(2,2,dtype=L.float16), mode='foo')",
    "L.linalg.qr(L.ones(2,2), mode=None)", "L.linalg.qr(L.ones(2,3), mode='r')",
    "L.linalg.qr(L.ones(0,3))", "L.linalg.qr(L.ones(3,0))", "L.linalg.qr(L.ones(3,0), mode='complete')",
    "L.linalg.qr(L.ones(2,0,3), mode='complete')",
    "L.linalg.qr(L.tensor([[3.,1],[4,2],[0,1]])).Q", "L.linalg.qr(L.tensor([[3.,1],[4,2],[0,1]])).R",
    "L.linalg.qr(L.tensor([[3.,1],[4,2],[0,1]]), 'complete').Q",
    "L.linalg.qr(L.tensor([[3.,1],[4,2],[0,1]]), 'complete').R", "L.linalg.qr(L.tensor([[3.,1,2],[4,2,0]])).R",
    "L.linalg.qr(L.tensor([[1j,1],[2,1j],[0,1]])).Q", "L.linalg.qr(L.tensor([[1j,1],[2,1j],[0,1]])).R",
    # eigh, eigvalsh
    "L.linalg.eigh(L.ones(3))", "L.linalg.eigh(L.ones(2,3))", "L.linalg.eigh(L.ones(2,3), UPLO='X')",
    "L.linalg.eigh(L.ones(2,2,dtype=L.int32))", "L.linalg.eigh(L.ones(2,2,dtype=L.bool))",
    "L.linalg.eigh(L.ones(2,2,dtype=L.float16))", "L.linalg.eigh(L.ones(2,2,dtype=L.bfloat16))",
    "L.linalg.eigh(L.ones(2,2), UPLO='X')", "L.linalg.eigh(L.ones(2,2), UPLO='UL')",
    "L.linalg.eigh(L.ones(2,2,dtype=L.int32), UPLO='X')", "L.linalg.eigh(L.ones(2,2), UPLO=None)",
    "L.linalg.eigh(L.tensor([[1.,5],[0,1]]), UPLO='U').eigenvalues",
    "L.linalg.eigh(L.tensor([[1.,5],[0,1]]), UPLO='u').eigenvalues",
    "L.linalg.eigh(L.tensor([[1.,5],[0,1]])).eigenvalues", "L.linalg.eigh(L.ones(0,0)).eigenvectors",
    "L.linalg.eigh(L.ones(2,0,0)).eigenvalues", "L.linalg.eigvalsh(L.ones(2,3))", "L.linalg.eigvalsh(L.ones(3))",
    "L.linalg.eigvalsh(L.ones(2,2,dtype=L.int32))", "L.linalg.eigvalsh(L.ones(2,2), UPLO='X')",
    "L.linalg.eigvalsh(L.tensor([[2.,1j],[-1j,2]]))", "L.linalg.eigvalsh(L.tensor([[2.,1],[7,2]]), 'U')",
    "L.inverse(L.tensor([[2.,1],[1,3]]))", "L.tensor([[2.,1],[1,3]]).inverse()", "L.inverse(L.ones(2,3))",
    "L.inverse(L.zeros(2,2))", "L.inverse(L.ones(2,2,dtype=L.float16))",
    "L.logdet(L.tensor([[2.,1],[1,3]]))", "L.logdet(L.tensor([[0.,1],[1,0]]))", "L.logdet(L.ones(2,2))",
    "L.logdet(L.tensor([[1j,0],[0,1]]))", "L.logdet(L.ones(2,3))", "L.logdet(L.ones(3))",
    "L.logdet(L.ones(2,2,dtype=L.long))", "L.logdet(L.ones(2,2,dtype=L.float16))",
    "L.tensor([[[2.,1],[1,3]],[[0,1],[1,0]]]).logdet()",
    "L.det(L.tensor([[2.,1],[1,3]]))", "L.tensor([[2.,1],[1,3]]).det()", "L.det(L.ones(2,3))",
    "L.det(L.ones(2,2,dtype=L.long))", "L.slogdet(L.tensor([[0.,2],[1,0]]))", "L.tensor([[0.,2],[1,0]]).slogdet()",
    "L.slogdet(L.ones(3))",
    "L.kron(L.tensor([[1,2],[3,4]]), L.tensor([[0,1],[1,0]]))", "L.kron(L.tensor([1,2]), L.tensor([[1.],[2.]]))",
    "L.kron(L.tensor(2), L.tensor([1,2]))", "L.kron(L.tensor([1,2]), L.tensor([1.,2.],dtype=L.float16))",
    "L.kron(L.tensor([True]), L.tensor([True,False]))", "L.kron(L.ones(2,1,2), L.ones(3,1)).shape",
    "L.cross(L.tensor([[1.,0,0]]), L.tensor([[0.,1,0]]), dim=1)", "L.cross(L.ones(2,2), L.ones(2,2), dim=1)",
    "L.cross(L.ones(3,3), L.ones(3,3), dim=2)", "L.cross(L.ones(2,2), L.ones(2,2))",
    "L.linalg.cross(L.ones(2,2), L.ones(2,2))", "L.linalg.cross(L.ones(3,2), L.ones(3,2), dim=0)",
    "L.linalg.cross(L.ones(2,3), L.ones(3))", "L.linalg.cross(L.tensor([1,0,0]), L.tensor([0,1,0]))",
    "L.linalg.cross(L.tensor([1,0,0]), L.tensor([0.,1,0]))", "L.linalg.cross(L.ones(2,3), L.ones(1,3)).shape",
    "L.linalg.cross(L.tensor(1.), L.tensor(1.))",
    "L.linalg.cross(L.tensor([True,False,True]), L.tensor([True,False,True]))",
    "L.tensor([[1.,2,3]]).cross(L.tensor([[3.,2,1]]), 1)",
    "L.cdist(L.tensor([[0.,0],[1,1]]), L.tensor([[1.,0]]))",
    "L.cdist(L.tensor([[0.,0],[1,1]]), L.tensor([[1.,0]]), p=1)",
    "L.cdist(L.tensor([[0.,0],[1,3]]), L.tensor([[1.,0]]), p=float('inf'))", "L.cdist(L.ones(2,3), L.ones(2,4))",
    "L.cdist(L.ones(3), L.ones(3))", "L.cdist(L.ones(2,3,dtype=L.long), L.ones(2,3,dtype=L.long))",
    "L.cdist(L.ones(2,3), L.ones(2,3), p=-1)", "L.cdist(L.ones(2,3,4), L.ones(5,4)).shape",
    "L.cdist(L.ones(2,1,3,4), L.ones(3,5,4)).shape", "L.cdist(L.ones(2,3), L.ones(2,3,dtype=L.float64))",
    "L.cdist(L.ones(0,3), L.ones(2,3))", "L.cdist(L.tensor([[0.,1],[1,1]]), L.tensor([[1.,1]]), p=0)",
    "L.vander(L.tensor([1,2,3]))", "L.vander(L.tensor([1.,2,3]), N=2, increasing=True)", "L.vander(L.ones(2,2))",
    "L.vander(L.tensor([1.5,2]))", "L.vander(L.tensor([1,2]), N=0)", "L.vander(L.tensor([1,2]), N=-1)",
    "L.vander(L.tensor([True,False]))", "L.vander(L.tensor([1j,2]))", "L.vander(L.tensor([3],dtype=L.uint8))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", DECOMPOSITION_CASES)
def test_decompositions_match_torch(expression):
    assert_same_outcome(expression, rtol=None, atol=None)  # LAPACK results: assert_close tolerances


def test_det_slogdet_inv_solve_exact_values():
    a = tm.tensor([[2., 1.], [4., 3.]], dtype=tm.float64)
    assert tm.linalg.det(a).item() == pytest.approx(2.0)
    sign, logabsdet = tm.linalg.slogdet(-a)
    assert sign.item() == 1.0 and logabsdet.item() == pytest.approx(np.log(2.0))
    np.testing.assert_allclose(tm.linalg.inv(a).numpy(), [[1.5, -0.5], [-2.0, 1.0]], rtol=1e-15)
    np.testing.assert_allclose(tm.linalg.solve(a, tm.tensor([3., 7.], dtype=tm.float64)).numpy(), [1., 1.])
    np.testing.assert_allclose(tm.linalg.solve(a, tm.eye(2, dtype=tm.float64), left=False).numpy(),
                               tm.linalg.inv(a).numpy(), rtol=1e-15)
    assert tm.linalg.det(tm.tensor([[1., 2.], [2., 4.]])).item() == 0.0
    assert tm.linalg.det(tm.ones(0, 0)).item() == 1.0 and tm.linalg.det(tm.ones(0, 3, 3)).shape == (0,)


def test_slogdet_is_a_named_tuple_with_one_node():
    x = tm.tensor([[0., 2.], [1., 0.]], requires_grad=True)
    result = tm.linalg.slogdet(x)
    assert type(result) is tm.return_types.linalg_slogdet and result._fields == ("sign", "logabsdet")
    assert result.sign.item() == -1.0 and result.sign.grad_fn is result.logabsdet.grad_fn
    assert result.sign.grad_fn.name() == "LinalgSlogdetBackward0"
    assert tm.linalg.det(x).grad_fn.name() == "LinalgDetBackward0"
    assert tm.linalg.solve(x, x).grad_fn.name() == "LinalgSolveBackward0"
    complex_sign = tm.linalg.slogdet(tm.tensor([[1j, 0], [0, 2]])).sign
    assert complex_sign.dtype is tm.complex64 and complex_sign.item() == 1j


def test_singular_inputs_raise_linalg_errors():
    message = ("The diagonal element 2 is zero, the inversion could not be completed because the input matrix is "
               "singular.")
    with pytest.raises(tm.linalg.LinAlgError, match=f"^linalg.inv: {message}$"):
        tm.linalg.inv(tm.tensor([[1., 1.], [1., 1.]]))
    with pytest.raises(tm.linalg.LinAlgError, match=rf"^linalg.inv: \(Batch element 1\): {message}$"):
        tm.linalg.inv(tm.tensor([[[1., 0.], [0., 1.]], [[1., 1.], [1., 1.]]]))
    with pytest.raises(tm.linalg.LinAlgError, match=r"^tensormodes.linalg.solve: \(Batch element 2\): The solver "
                                                    r"failed because the input matrix is singular.$"):
        tm.linalg.solve(tm.eye(2) * tm.tensor([1., 1., 0.]).reshape(3, 1, 1), tm.ones(2))
    with pytest.raises(tm.linalg.LinAlgError, match=r"the leading minor of order 2 is not positive-definite"):
        tm.linalg.cholesky(tm.tensor([[1., 2.], [2., 1.]]))
    assert tm.linalg.slogdet(tm.zeros(3, 3)).logabsdet.item() == -np.inf


def test_solve_broadcasts_and_treats_batches_of_vectors_as_torch():
    a = tm.tensor(np.random.default_rng(0).standard_normal((3, 2, 2)) + 3 * np.eye(2), dtype=tm.float32)
    assert tm.linalg.solve(a, tm.ones(3, 2)).shape == (3, 2)  # B shaped as A without its last dim: vectors
    assert tm.linalg.solve(a, tm.ones(2, 2)).shape == (3, 2, 2)  # otherwise a matrix, broadcast
    assert tm.linalg.solve(a, tm.ones(4, 1, 2, 5)).shape == (4, 3, 2, 5)
    x = tm.linalg.solve(a, tm.ones(3, 2))
    np.testing.assert_allclose((a @ x.unsqueeze(-1)).squeeze(-1).numpy(), np.ones((3, 2)), rtol=1e-5)


def test_cholesky_qr_eigh_factors_rebuild_their_input():
    rng = np.random.default_rng(0)
    for dtype, noise in ((np.float64, 0), (np.complex128, 1j)):
        m = rng.standard_normal((2, 3, 3)) + noise * rng.standard_normal((2, 3, 3))
        hermitian = m @ np.swapaxes(m, -2, -1).conj() + np.eye(3)
        lower = tm.linalg.cholesky(tm.tensor(hermitian)).numpy()
        np.testing.assert_allclose(lower @ np.swapaxes(lower, -2, -1).conj(), hermitian, rtol=1e-12)
        assert np.all(np.triu(lower, 1) == 0) and lower.dtype == dtype
        upper = tm.linalg.cholesky(tm.tensor(hermitian), upper=True).numpy()
        np.testing.assert_allclose(upper, np.swapaxes(lower, -2, -1).conj(), rtol=1e-12)
        q, r = (t.numpy() for t in tm.linalg.qr(tm.tensor(m[..., :2])))
        np.testing.assert_allclose(q @ r, m[..., :2], atol=1e-12)
        values, vectors = (t.numpy() for t in tm.linalg.eigh(tm.tensor(hermitian)))
        np.testing.assert_allclose((vectors * values[..., None, :]) @ np.swapaxes(vectors, -2, -1).conj(), hermitian,
                                   atol=1e-12)
        largest = np.take_along_axis(vectors, np.abs(vectors).argmax(-2)[..., None, :], -2)
        assert np.all(largest.real > 0) and np.allclose(largest.imag, 0, atol=1e-12)
    result = tm.linalg.qr(tm.ones(2, 3), mode="r")
    assert type(result) is tm.return_types.linalg_qr and result.Q.shape == (0,) and result.R.shape == (2, 3)
    result = tm.linalg.eigh(tm.tensor([[2., 0.], [0., 1.]]))
    assert type(result) is tm.return_types.linalg_eigh and result._fields == ("eigenvalues", "eigenvectors")


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cholesky_and_eigh_of_larger_hermitian_matrices_match_torch(dtype):
    import torch

    from .op_samples import _torch_eigh

    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 5, 5)) + (1j * rng.standard_normal((3, 5, 5)) if dtype == "complex128" else 0)
    hermitian = m @ np.swapaxes(m, -2, -1).conj() + np.eye(5)
    for upper in (False, True):
        np.testing.assert_allclose(tm.linalg.cholesky(tm.tensor(hermitian), upper=upper).numpy(),
                                   torch.linalg.cholesky(torch.tensor(hermitian), upper=upper).numpy(), rtol=1e-10)
    ours, theirs = tm.linalg.eigh(tm.tensor(hermitian)), _torch_eigh(torch)(torch.tensor(hermitian))
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-9, atol=1e-12)


# Gradients of functions well defined on the inputs (cholesky and eigh read one triangle, so
# they are given Hermitian inputs; eigenvectors enter through sign-invariant functions).
DECOMPOSITION_GRADIENT_CASES = [
    ("L.linalg.det", (3, 3)), ("L.linalg.det", (2, 4, 4)), ("lambda a: L.linalg.slogdet(a).logabsdet", (2, 3, 3)),
    ("L.linalg.inv", (2, 3, 3)), ("L.linalg.solve", (2, 3, 3), (3,)), ("L.linalg.solve", (3, 3), (2, 1, 3, 2)),
    ("lambda a, b: L.linalg.solve(a, b, left=False)", (2, 3, 3), (4, 3)),
    ("lambda a: L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=a.dtype))", (2, 3, 3)),
    ("lambda a: L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=a.dtype), upper=True)", (3, 3)),
    ("lambda a: L.linalg.qr(a)", (4, 3)), ("lambda a: L.linalg.qr(a)", (2, 2, 4)),
    ("lambda a: L.linalg.qr(a, 'complete')", (3, 5)), ("lambda a: L.linalg.qr(a).R", (3, 3)),
    ("lambda a: L.linalg.eigh(a + a.mT).eigenvalues", (2, 3, 3)),
    ("lambda a: L.linalg.eigh(a + a.mT).eigenvectors ** 2", (4, 4)),
    ("lambda a: L.linalg.eigh(a + a.mT, 'U').eigenvectors ** 2", (3, 3)),
    ("lambda a: L.linalg.eigvalsh(a + a.mT)", (2, 3, 3)),
]


def _decomposition_gradients(library, function, shapes, complex_input=False):
    rng = np.random.default_rng(0)
    inputs = []
    for shape in shapes:
        value = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if complex_input else 0)
        inputs.append(library.tensor(value, requires_grad=True))
    outputs = eval(function, {"L": library})(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    seeds = np.random.default_rng(1)
    cotangents = [library.tensor(seeds.standard_normal(tuple(o.shape)), dtype=o.dtype) for o in outputs]
    return [g.numpy(force=True) for g in library.autograd.grad(outputs, inputs, cotangents)]


@pytest.mark.parametrize("case", DECOMPOSITION_GRADIENT_CASES, ids=str)
def test_decomposition_gradients_and_second_gradients_match_finite_differences(case):
    function, *shapes = case
    rng = np.random.default_rng(0)
    inputs = tuple(tm.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes)
    function = eval(function, {"L": tm})
    assert tm.autograd.gradcheck(function, inputs)
    assert tm.autograd.gradgradcheck(function, inputs)


@pytest.mark.torch
@pytest.mark.parametrize("case", DECOMPOSITION_GRADIENT_CASES, ids=str)
def test_decomposition_gradients_match_torch(case):
    import torch

    function, *shapes = case
    for o, t in zip(_decomposition_gradients(tm, function, shapes), _decomposition_gradients(torch, function, shapes),
                    strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-8, atol=1e-10)


# Complex inputs: functions that do not depend on the eigenvectors' phases.
COMPLEX_DECOMPOSITION_GRADIENT_CASES = [
    ("L.linalg.det", (3, 3)), ("lambda a: L.linalg.slogdet(a).sign", (2, 3, 3)),
    ("lambda a: L.linalg.slogdet(a).logabsdet", (3, 3)), ("L.linalg.inv", (3, 3)),
    ("L.linalg.solve", (2, 3, 3), (3, 2)), ("lambda a, b: L.linalg.solve(a, b, left=False)", (3, 3), (2, 3)),
    ("lambda a: L.linalg.cholesky(a @ a.mT.conj() + L.eye(3, dtype=a.dtype))", (3, 3)),
    ("lambda a: L.linalg.qr(a)", (4, 3)), ("lambda a: L.linalg.qr(a)", (2, 4)),
    ("lambda a: L.linalg.eigh(a + a.mT.conj()).eigenvectors.abs()", (3, 3)),
    ("lambda a: (lambda r: r.eigenvectors @ r.eigenvalues.to(a.dtype).diag_embed() @ r.eigenvectors.mT.conj())("
     "L.linalg.eigh(a + a.mT.conj(), 'U'))", (3, 3)),
    ("lambda a: L.linalg.eigvalsh(a + a.mT.conj())", (2, 3, 3)),
]


@pytest.mark.parametrize("case", COMPLEX_DECOMPOSITION_GRADIENT_CASES, ids=str)
def test_complex_decomposition_gradients_match_finite_differences(case):
    function, *shapes = case
    rng = np.random.default_rng(0)
    inputs = tuple(tm.tensor(rng.standard_normal(s) + 1j * rng.standard_normal(s), requires_grad=True) for s in shapes)
    function = eval(function, {"L": tm})
    assert tm.autograd.gradcheck(function, inputs)
    assert tm.autograd.gradgradcheck(function, inputs)


@pytest.mark.torch
@pytest.mark.parametrize("case", COMPLEX_DECOMPOSITION_GRADIENT_CASES, ids=str)
def test_complex_decomposition_gradients_match_torch(case):
    import torch

    function, *shapes = case
    ours = _decomposition_gradients(tm, function, shapes, complex_input=True)
    theirs = _decomposition_gradients(torch, function, shapes, complex_input=True)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-8, atol=1e-10)


def test_det_gradient_of_singular_matrices_is_the_conjugate_cofactor_matrix():
    # Rank n - 1: the cofactor matrix is not zero (PyTorch gives it with create_graph=True).
    x = tm.tensor([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]], dtype=tm.float64, requires_grad=True)
    tm.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4., 4., -4.], [-2., -2., 2.], [0., 0., 0.]], atol=1e-12)
    z = tm.zeros(2, 3, 3, dtype=tm.complex128, requires_grad=True)
    tm.linalg.det(z).real.sum().backward()
    assert not np.any(z.grad.numpy())
    y = tm.tensor([[1., 0.], [0., 0.]], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(tm.linalg.det, (y,)) and tm.autograd.gradgradcheck(tm.linalg.det, (y,))
    mixed = tm.tensor([[[1., 2.], [2., 4.]], [[2., 1.], [0., 3.]]], dtype=tm.float64, requires_grad=True)
    assert tm.autograd.gradcheck(tm.linalg.det, (mixed,))  # one singular matrix, one not
    z = tm.tensor([[1j, 2.], [1j, 2.]], dtype=tm.complex128, requires_grad=True)
    assert tm.autograd.gradcheck(tm.linalg.det, (z,))


@pytest.mark.torch
def test_det_gradient_of_a_singular_matrix_matches_torchs_create_graph_gradient():
    import torch

    values = [[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]]
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    theirs, = torch.autograd.grad(torch.linalg.det(x), x, create_graph=True)
    y = tm.tensor(values, dtype=tm.float64, requires_grad=True)
    ours, = tm.autograd.grad(tm.linalg.det(y), y)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), atol=1e-12)


def test_qr_and_eigh_gradients_that_pytorch_refuses_raise():
    x = tm.tensor(np.random.default_rng(0).standard_normal((3, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        tm.linalg.qr(x, mode="r").R.sum().backward()
    tall = tm.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        tm.linalg.qr(tall, mode="complete").Q.sum().backward()
    z = tm.tensor(np.random.default_rng(0).standard_normal((3, 3)) * (1 + 1j), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^linalg_eigh_backward: The eigenvectors in the complex case"):
        tm.linalg.eigh(z).eigenvectors.real.sum().backward()
    assert x.grad is None and tall.grad is None and z.grad is None


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(batch_a=st.lists(st.integers(1, 3), max_size=2), batch_b=st.lists(st.integers(1, 3), max_size=2),
       n=st.integers(1, 3), k=st.integers(1, 3), vector=st.booleans(), batched_vector=st.booleans(),
       left=st.booleans())
def test_solve_shapes_and_errors_match_torch(batch_a, batch_b, n, k, vector, batched_vector, left):
    shape_b = (*batch_a, n) if batched_vector else (n,) if vector else (*batch_b, n if left else k, k if left else n)
    a = np.random.default_rng(0).standard_normal((*batch_a, n, n)) + 3 * np.eye(n)
    b = np.arange(int(np.prod(shape_b)), dtype=np.float64).reshape(shape_b)
    assert_same_outcome(f"L.linalg.solve(L.tensor(np.array({a.tolist()})), L.tensor(np.array({b.tolist()})), "
                        f"left={left})", rtol=1e-10, atol=1e-12)


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(batch=st.lists(st.integers(0, 2), max_size=2), m=st.integers(0, 3), n=st.integers(0, 3),
       mode=st.sampled_from(["reduced", "complete", "r"]), complex_input=st.booleans())
def test_qr_and_square_matrix_functions_on_any_shape_match_torch(batch, m, n, mode, complex_input):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((*batch, m, n)) + (1j * rng.standard_normal((*batch, m, n)) if complex_input else 0)
    tensor = f"L.tensor(np.array({a.tolist()}, dtype=np.{a.dtype}).reshape({a.shape}))"
    for field in ("Q", "R"):
        assert_same_outcome(f"L.linalg.qr({tensor}, mode={mode!r}).{field}", rtol=1e-10, atol=1e-12)
    square = a[..., :min(m, n), :min(m, n)]
    hermitian = square @ np.swapaxes(square, -2, -1).conj() + np.eye(square.shape[-1])
    tensor = f"L.tensor(np.array({square.tolist()}, dtype=np.{a.dtype}).reshape({square.shape}))"
    hermitian_tensor = f"L.tensor(np.array({hermitian.tolist()}, dtype=np.{a.dtype}).reshape({hermitian.shape}))"
    for expression in (f"L.linalg.det({tensor})", f"L.linalg.slogdet({tensor}).logabsdet", f"L.linalg.inv({tensor})",
                       f"L.linalg.cholesky({hermitian_tensor})", f"L.linalg.eigvalsh({hermitian_tensor})",
                       f"L.linalg.eigh({hermitian_tensor}).eigenvalues", f"L.linalg.eigh({tensor}).eigenvectors.shape"):
        assert_same_outcome(expression, rtol=1e-9, atol=1e-12)
