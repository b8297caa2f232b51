"""Linear algebra: products, einsum, tensordot, trace, matrix_power — values, dtypes,
PyTorch's errors, gradients."""

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
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_outcome(expression, rtol=1e-6)


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


@pytest.mark.xfail(strict=True, reason="the generated wrapper does not unwrap a single list for *operands yet")
def test_einsum_accepts_a_list_of_operands():
    assert tm.einsum("i,i->", [tm.ones(3), tm.ones(3)]).item() == 3.0


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
