"""tm.diag and Tensor.index_put_/index_put: values, errors and gradients against PyTorch."""

from __future__ import annotations

import pytest

import tensormodes as tm

from .torch_oracle import assert_same_outcome

CASES = [
    "L.index_put(L.zeros(3), (L.tensor([0,2]),), L.tensor(5.))",
    "L.zeros(3).index_put((L.tensor([0,0]),), L.tensor([1.,2]), accumulate=True)",
    "L.zeros(2,3).index_put((L.tensor([0,1]), L.tensor([2,0])), L.tensor([1.,2]))",
    "L.zeros(3).index_put((L.tensor([True,False,True]),), L.tensor(1.))",
    "L.zeros(3).index_put([L.tensor([0])], L.tensor(1.))", "L.zeros(3).index_put((L.tensor([5]),), L.tensor(1.))",
    "L.zeros(3).index_put((L.tensor([0.]),), L.tensor(1.))",
    "L.zeros(3).index_put((L.tensor([0]),), L.tensor(1, dtype=L.float64))",
    "L.zeros(3, dtype=L.long).index_put((L.tensor([0]),), L.tensor(1.5))",
    "L.zeros(2,3).index_put((L.tensor([0]),L.tensor([0]),L.tensor([0])), L.tensor(1.))",
    "L.zeros(2,3).index_put((L.tensor([1]),), L.tensor([1.,2,3]))",
    "L.zeros(2,3).index_put((L.tensor([1]),), L.tensor([1.,2]))",
    "L.zeros(2,3,dtype=L.int32).index_put((L.tensor([1,1]), L.tensor([0,0])), L.tensor([4,5],dtype=L.int32), True)",
    "L.diag(L.tensor([1,2]))", "L.diag(L.tensor([1,2]), 1)", "L.diag(L.arange(9).reshape(3,3), -1)",
    "L.diag(L.ones(2,2,2))", "L.diag(L.tensor(1.))", "L.diag(L.arange(6).reshape(2,3), 5)",
    "L.diag(L.ones(3), out=L.empty(0))", "L.tensor([1.,2]).diag(-1)",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_outcome(expression)


def test_index_put_in_place_and_gradients():
    x = tm.zeros(3)
    assert x.index_put_((tm.tensor([0, 0]),), tm.tensor([1., 2.]), accumulate=True) is x
    assert x.tolist() == [3.0, 0.0, 0.0]
    values = tm.tensor([5., 6.], requires_grad=True)
    base = tm.ones(3, requires_grad=True)
    out = base.index_put((tm.tensor([2, 0]),), values)
    assert out.grad_fn.name() == "IndexPutBackward0"
    (out * tm.tensor([1., 2., 3.])).sum().backward()
    assert base.grad.tolist() == [0.0, 2.0, 0.0] and values.grad.tolist() == [3.0, 1.0]
    m = tm.arange(6.).reshape(2, 3).requires_grad_()
    tm.diag(m, 1).sum().backward()
    assert m.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    with pytest.raises(RuntimeError, match="^diag\\(\\): Supports 1D or 2D tensors. Got 3D$"):
        tm.diag(tm.ones(2, 2, 2))
