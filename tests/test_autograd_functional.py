"""tensormodes.autograd.functional: values (literal and against PyTorch), structure and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.autograd import functional as AF


def test_literal_values():
    x = tm.tensor([1.0, 2.0])
    assert AF.jacobian(lambda a: a ** 2, x).tolist() == [[2.0, 0.0], [0.0, 4.0]]
    assert AF.hessian(lambda a: (a ** 3).sum(), x).tolist() == [[6.0, 0.0], [0.0, 12.0]]
    out, g = AF.vjp(lambda a: (a * a).sum(), x)
    assert out.item() == 5.0 and g.tolist() == [2.0, 4.0]
    out, g = AF.jvp(lambda a: a * 3, x, tm.tensor([1.0, -1.0]))
    assert out.tolist() == [3.0, 6.0] and g.tolist() == [3.0, -3.0]
    out, g = AF.hvp(lambda a: (a ** 3).sum(), x, tm.tensor([0.0, 1.0]))
    assert g.tolist() == [0.0, 12.0]
    out, g = AF.vhp(lambda a: (a ** 3).sum(), x, tm.tensor([0.0, 1.0]))
    assert g.tolist() == [0.0, 12.0]
    # the results carry no history and the inputs are left alone
    assert not g.requires_grad and not out.requires_grad and not x.requires_grad


def test_structure_of_tuples():
    x, y = tm.tensor([1.0, 2.0]), tm.tensor([3.0])
    jac = AF.jacobian(lambda a, b: (a * b, b.sum()), (x, y))
    assert [[tuple(j.shape) for j in row] for row in jac] == [[(2, 2), (2, 1)], [(2,), (1,)]]
    assert jac[0][1].tolist() == [[1.0], [2.0]]
    # one input given as a tuple keeps the tuple
    assert isinstance(AF.jacobian(lambda a: a * 2, (x,)), tuple)
    h = AF.hessian(lambda a, b: (a * a).sum() * b.sum(), (x, y))
    assert h[0][1].tolist() == [[2.0], [4.0]] and h[1][1].tolist() == [[0.0]]
    # an input nothing depends on gets zeros (strict=False)
    assert AF.jacobian(lambda a, b: a * 2, (x, y))[1].tolist() == [[0.0], [0.0]]


def test_create_graph_keeps_history():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    jac = AF.jacobian(lambda a: a ** 3, x, create_graph=True)
    assert jac.requires_grad
    jac.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_errors():
    x = tm.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^The inputs given to jacobian must be either a Tensor or a tuple of Tensors "
                                        r"but the value at index 1 has type <class 'int'>\.$"):
        AF.jacobian(lambda a, b: a, (x, 3))
    with pytest.raises(RuntimeError, match="^The vector v can only be None if the user-provided function returns a "
                                           "single Tensor with a single element.$"):
        AF.vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be tensormodes.Size\(\[2\]\) but got "
                                           r"tensormodes.Size\(\[3\]\)\.$"):
        AF.jvp(lambda a: a * 2, x, tm.ones(3))
    with pytest.raises(RuntimeError, match="^The function given to hessian should return a single Tensor$"):
        AF.hessian(lambda a: (a.sum(), a.sum()), x)
    with pytest.raises(RuntimeError, match="^The Tensor returned by the function given to hvp should contain a "
                                           "single element$"):
        AF.hvp(lambda a: a * 2, x, x)
    with pytest.raises(RuntimeError, match="^Output 0 of the user-provided function is independent of input 0. This "
                                           "is not allowed in strict mode.$"):
        AF.jacobian(lambda a: tm.ones(2, requires_grad=True) * 2, x, strict=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(lambda a: a, x, strategy="forward-mode")
    assert AF.jacobian(lambda a: a * 2, x, vectorize=True, strategy="forward-mode").tolist() == [[2.0, 0.0], [0.0, 2.0]]


def _functions(L):
    return {
        "jacobian": lambda x, y: L.autograd.functional.jacobian(lambda a, b: (a.sin() * b, (a @ a.T).exp()), (x, y)),
        "hessian": lambda x, y: L.autograd.functional.hessian(lambda a, b: (a.tanh() * b).sum(), (x, y)),
        "vjp": lambda x, y: L.autograd.functional.vjp(lambda a, b: a.exp() * b, (x, y), (x * 0 + 1) * 0.5),
        "jvp": lambda x, y: L.autograd.functional.jvp(lambda a, b: (a * b).sigmoid(), (x, y), (x, y)),
        "hvp": lambda x, y: L.autograd.functional.hvp(lambda a, b: (a ** 3 * b).sum(), (x, y), (y, x)),
        "vhp": lambda x, y: L.autograd.functional.vhp(lambda a, b: (a ** 3 * b.cos()).sum(), (x, y), (y, x)),
    }


@pytest.mark.torch
@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_same_as_pytorch(name):
    import torch
    import torch.autograd.functional  # noqa: F401 - torch.autograd.functional

    data_x = np.linspace(-1, 1, 6).reshape(2, 3)
    data_y = np.linspace(0.5, 2, 6).reshape(2, 3)
    ours = _functions(tm)[name](tm.tensor(data_x), tm.tensor(data_y))
    theirs = _functions(torch)[name](torch.tensor(data_x), torch.tensor(data_y))

    def flat(value):
        if isinstance(value, tuple):
            return [item for v in value for item in flat(v)]
        return [value]

    ours, theirs = flat(ours), flat(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
