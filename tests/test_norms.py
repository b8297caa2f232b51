"""tensormodes.linalg.vector_norm, matrix_norm and norm: values, errors and gradients against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm

from .torch_oracle import assert_same_outcome

A = "L.tensor([[1.,-2,3],[4,5,-6]])"
CASES = [
    f"L.linalg.matrix_norm({A}, 3)", f"L.linalg.matrix_norm({A}, 'abc')", f"L.linalg.matrix_norm({A}, 1)",
    f"L.linalg.matrix_norm({A}, -1)", f"L.linalg.matrix_norm({A}, float('inf'))", f"L.linalg.matrix_norm({A}, 2)",
    f"L.linalg.matrix_norm({A}, -2)", f"L.linalg.matrix_norm({A}, -float('inf'), keepdim=True)",
    "L.linalg.matrix_norm(L.ones(3))", "L.linalg.matrix_norm(L.ones(2,2,dtype=L.long))",
    "L.linalg.matrix_norm(L.ones(2,3), 1, dim=(1,1))", "L.linalg.matrix_norm(L.ones(2,3,dtype=L.float16), 2)",
    "L.linalg.matrix_norm(L.ones(2,3,dtype=L.float16), 1)", "L.linalg.matrix_norm(L.ones(0,3), 1)",
    "L.linalg.matrix_norm(L.ones(2,3,4), 1, dim=(2,0))", "L.linalg.matrix_norm(L.ones(2,3), dim=(0,))",
    "L.linalg.norm(L.ones(2,2,2), 2)", "L.linalg.norm(L.ones(2,2,2))", f"L.linalg.norm({A}, 'fro', dim=0)",
    "L.linalg.norm(L.ones(3), 'fro')", f"L.linalg.norm({A}, 2, dim=(0,1,1))", f"L.linalg.norm({A}, dim=(0,1,1))",
    f"L.linalg.norm({A}, 2)", f"L.linalg.norm({A})", "L.linalg.norm(L.ones(3), 2)", f"L.linalg.norm({A}, 1, dim=0)",
    f"L.linalg.norm({A}, 'nuc', dim=1)", f"L.linalg.norm({A}, dtype=L.float64)", f"L.linalg.norm({A}, -1, (1, 0))",
    f"L.linalg.vector_norm({A}, 'fro')", "L.linalg.vector_norm(L.ones(2,dtype=L.long))",
    f"L.linalg.vector_norm({A}, 0)",
    f"L.linalg.vector_norm({A}, 3, dim=1, keepdim=True)", f"L.linalg.vector_norm({A}, dtype=L.int32)",
    "L.linalg.vector_norm(L.ones(0), float('inf'))", f"L.linalg.vector_norm({A}, 1+2j)",
    f"L.linalg.vector_norm({A}, out=L.empty(0))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_norms_match_torch(expression):
    assert_same_outcome(expression, rtol=None, atol=None)


GRADIENT_ORDERS = [("matrix_norm", o) for o in ("fro", "nuc", 1, -1, float("inf"), -float("inf"), 2, -2)] + [
    ("vector_norm", o) for o in (2, 1, 3, -1.5, float("inf"), -float("inf"))] + [
    ("norm", o) for o in (None, 1, 2, "fro", float("inf"))]


@pytest.mark.torch
@pytest.mark.parametrize("function, order", GRADIENT_ORDERS)
def test_norm_gradients_match_torch(function, order):
    import numpy as np
    import torch

    data = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.5]]
    ours = tm.tensor(data, dtype=tm.float64, requires_grad=True)
    theirs = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    getattr(tm.linalg, function)(ours, order).backward()
    getattr(torch.linalg, function)(theirs, order).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_norms_exact_values_and_nodes():
    A = tm.tensor([[1., -2., 3.], [4., 5., -6.]], requires_grad=True)
    assert tm.linalg.matrix_norm(A, 1).item() == 9.0 and tm.linalg.matrix_norm(A, float("inf")).item() == 15.0
    assert tm.linalg.vector_norm(A, 1).item() == 21.0 and tm.linalg.norm(A, 1, dim=0).tolist() == [5.0, 7.0, 9.0]
    assert tm.linalg.vector_norm(A).grad_fn.name() == "LinalgVectorNormBackward0"
    assert tm.linalg.norm(A).grad_fn.name() == "LinalgNormBackward0"
    with pytest.raises(RuntimeError, match="^linalg.matrix_norm: Order 3 not supported.$"):
        tm.linalg.matrix_norm(A, 3)
    with pytest.raises(RuntimeError, match="If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."):
        tm.linalg.norm(tm.ones(2, 2, 2), 2)
    assert {tm.linalg.vector_norm, tm.linalg.matrix_norm, tm.linalg.norm} <= set(
        tm.overrides.get_overridable_functions()[tm.linalg])


@pytest.mark.torch
@pytest.mark.parametrize("normalized, affine", [([4], True), ([3, 4], False), ([4], False)])
def test_native_layer_norm_backward_op_and_its_gradient_match_torch(normalized, affine):
    # The backward op (what the plain backward runs and the dispatch level sees), and its own
    # gradient (double backward with the statistics as functions of the input), against PyTorch.
    import torch

    rng = np.random.default_rng(0)
    x, go, w, b = (rng.standard_normal(s) for s in ((2, 3, 4), (2, 3, 4), normalized, normalized))
    upstream = [rng.standard_normal(s) for s in ((2, 3, 4), normalized, normalized)]
    results = []
    for L in (tm, torch):
        X, GO = L.tensor(x, requires_grad=True), L.tensor(go, requires_grad=True)
        W = L.tensor(w, requires_grad=True) if affine else None
        B = L.tensor(b) if affine else None
        _, mean, rstd = L.ops.aten.native_layer_norm.default(X.detach(), normalized, W, B, 1e-5)
        mask = [True, affine, affine]
        outs = L.ops.aten.native_layer_norm_backward.default(GO, X, normalized, mean, rstd, W, B, mask)
        pairs = [(o, L.tensor(u)) for o, u, on in zip(outs, upstream, mask) if on]
        leaves = [GO, X] + ([W] if affine else [])
        grads = L.autograd.grad([o for o, _ in pairs], leaves, [u for _, u in pairs])
        assert not any(g.requires_grad for g in grads)  # create_graph=False: plain gradients
        results.append([o.detach().numpy() for o, _ in pairs] + [g.numpy() for g in grads])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
