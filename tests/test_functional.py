"""nn.functional's activations, losses and distances: exact values, gradients, PyTorch's
errors and warnings, with PyTorch as the oracle for values and gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

_X = [[-2.5, -0.5, 0.125], [0.25, 0.75, 30.0]]  # no kinks: 0, the clamps' bounds
_P = [[0.2, 0.7, 0.95], [0.05, 0.5, 0.9]]
_T = [[0.125, 1.0, 1.0], [0.5, 0.25, 1.0]]

# (expression with L = the library, F = its nn.functional, x, p, t = leaves requiring grad)
CASES = [
    "F.leaky_relu(x)", "F.leaky_relu(x, 0.2)", "F.elu(x)", "F.elu(x, alpha=0.5)", "F.hardtanh(x)",
    "F.hardtanh(x, -0.4, 0.3)", "F.relu6(x * 3)", "F.softplus(x)", "F.softplus(x, beta=2, threshold=5)",
    "F.logsigmoid(x)", "F.logsigmoid(-x * 40)", "F.softsign(x)", "F.tanhshrink(x)", "F.glu(x.reshape(3, 2))",
    "F.glu(x, 0)", "F.layer_norm(x, [3])", "F.layer_norm(x, (2, 3), p * 2, t)", "F.layer_norm(x, [3], eps=0.1)",
    "F.l1_loss(x, t)", "F.l1_loss(x, t, reduction='sum')", "F.l1_loss(x, t, reduction='none', weight=p)",
    "F.l1_loss(x, t, size_average=False)", "F.smooth_l1_loss(x, t)", "F.smooth_l1_loss(x, t, beta=2.0)",
    "F.smooth_l1_loss(x, t, beta=0.0)", "F.smooth_l1_loss(x, t, reduction='none', beta=0.5)",
    "F.huber_loss(x, t)", "F.huber_loss(x, t, delta=2.0, reduction='sum')", "F.huber_loss(x, t, weight=p)",
    "F.binary_cross_entropy(p, t)", "F.binary_cross_entropy(p, t, weight=(t + 1).detach(), reduction='sum')",
    "F.binary_cross_entropy(p, t, reduction='none')", "F.binary_cross_entropy_with_logits(x, t)",
    "F.binary_cross_entropy_with_logits(x * 20, t, pos_weight=L.tensor([1.0, 2.0, 3.0], dtype=L.float64))",
    "F.binary_cross_entropy_with_logits(x, t, weight=p.detach(), reduction='none')",
    "F.kl_div(p.clamp(min=0.1).log(), t)", "F.kl_div(p.clamp(min=0.1).log(), t, reduction='batchmean')",
    "F.kl_div(p.clamp(min=0.1).log(), (t + 0.5).log(), log_target=True, reduction='sum')",
    "F.kl_div(x, t, reduction='none')", "F.cosine_similarity(x, p)", "F.cosine_similarity(x, p, dim=0)",
    "F.cosine_similarity(x, p[0])", "F.cosine_similarity(x[0], p[0], 0)", "F.cosine_similarity(x * 0, p)",
    "F.pairwise_distance(x, p)", "F.pairwise_distance(x, p, p=1.0, keepdim=True)", "F.pairwise_distance(x[0], p[0])",
    "F.normalize(x)", "F.normalize(x, p=1.0, dim=0)", "F.normalize(x * 0)",
    "F.one_hot(L.tensor([0, 2]))", "F.one_hot(L.tensor([[1], [0]]), 4)",
    "F.one_hot(L.tensor([], dtype=L.int64), 3)",
]

ERROR_CASES = [
    "F.binary_cross_entropy(p, t[0])", "F.binary_cross_entropy(p * 2, t)", "F.binary_cross_entropy(p, t.long())",
    "F.binary_cross_entropy_with_logits(x, t[0])", "F.smooth_l1_loss(x, t, beta=-1.0)",
    "F.huber_loss(x, t, delta=0.0)", "F.l1_loss(x, t, reduction='avg')", "F.glu(x)", "F.glu(L.tensor(1.0))",
    "F.layer_norm(x, [2])", "F.cosine_similarity(x, L.ones(2, 4, dtype=L.float64))",
    "F.cosine_similarity(L.ones(2, 3, dtype=L.long), L.ones(2, 3, dtype=L.long))", "F.one_hot(L.tensor([0.0]))",
    "F.one_hot(L.tensor([0, -2]))", "F.one_hot(L.tensor([0, 3]), 3)", "F.one_hot(L.tensor([], dtype=L.int64))",
    "F.hardtanh(x, 1.0, 0.0)", "F.layer_norm(x, 3)",
]

WARNING_CASES = ["F.kl_div(p.clamp(min=0.1).log(), t)", "F.l1_loss(x, t[0])", "F.huber_loss(x, t[0])",
                 "F.smooth_l1_loss(x, t[0])"]


def _leaves(library):
    return [library.tensor(v, dtype=library.float64, requires_grad=True) for v in (_X, _P, _T)]


def _run(library, functional, expression):
    x, p, t = _leaves(library)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = eval(expression, {"L": library, "F": functional, "x": x, "p": p, "t": t})
    gradients = []
    if result.requires_grad:
        seed = library.tensor(np.linspace(-1.0, 2.0, result.numel()).reshape(tuple(result.shape)), dtype=result.dtype)
        gradients = library.autograd.grad(result, [x, p, t], seed, allow_unused=True)
    return result, gradients, [str(w.message) for w in caught]


def test_values():
    assert F.leaky_relu(tm.tensor([-2.0, 0.0, 3.0]), 0.5).tolist() == [-1.0, 0.0, 3.0]
    assert F.hardtanh(tm.tensor([-3.0, -1.0, 0.5, 3.0])).tolist() == [-1.0, -1.0, 0.5, 1.0]
    assert F.one_hot(tm.tensor([[1], [0]]), 3).tolist() == [[[0, 1, 0]], [[1, 0, 0]]]
    assert F.binary_cross_entropy(tm.tensor([0.0]), tm.tensor([1.0])).item() == 100.0  # log clamped at -100
    assert F.binary_cross_entropy_with_logits(tm.tensor([-1000.0]), tm.tensor([1.0])).item() == 1000.0
    assert F.kl_div(tm.tensor([0.0]), tm.tensor([0.0]), reduction="sum").item() == 0.0  # 0 * log 0 = 0
    assert F.logsigmoid(tm.tensor([-1000.0])).item() == -1000.0
    np.testing.assert_allclose(F.cosine_similarity(tm.tensor([[1.0, 0.0]]), tm.tensor([[1.0, 1.0]])).numpy(),
                               [2 ** -0.5], rtol=1e-6)
    x = tm.tensor([-1.0, 0.0, 0.5, 1.0], requires_grad=True)
    F.hardtanh(x).sum().backward()  # zero at the bounds, as PyTorch's hardtanh_backward
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_errors_and_warnings():
    x, p, t = _leaves(tm)
    with pytest.raises(ValueError, match=r"^Target size \(tensormodes.Size\(\[3\]\)\) must be the same as input size "
                                         r"\(tensormodes.Size\(\[2, 3\]\)\)$"):
        F.binary_cross_entropy_with_logits(x, t[0])
    with pytest.raises(RuntimeError, match="^all elements of input should be between 0 and 1$"):
        F.binary_cross_entropy(p * 2, t)
    with pytest.raises(RuntimeError, match="^Class values must be smaller than num_classes.$"):
        F.one_hot(tm.tensor([0, 3]), 3)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(p, t)


def assert_same_results(run, expression: str) -> None:
    """``run(library, functional, expression)`` (returning ``(result, gradients, warnings)``)
    gives tensormodes and torch the same result dtype, shape and values, the same gradients
    and the same warnings (float32 values to 1e-6, as the libraries may round differently)."""
    import torch
    import torch.nn.functional as torch_functional

    ours, our_grads, our_warnings = run(tm, F, expression)
    theirs, their_grads, their_warnings = run(torch, torch_functional, expression)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] and tuple(ours.shape) == theirs.shape
    rtol = 1e-6 if ours.dtype == tm.float32 else 1e-9

    def same(mine, reference):
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=rtol, atol=1e-12)

    same(ours, theirs)
    assert len(our_grads) == len(their_grads)
    for mine, reference in zip(our_grads, their_grads):
        if reference is None:
            assert mine is None or not np.any(mine.numpy())
        else:
            assert mine is not None
            same(mine, reference)
    assert our_warnings == [w.replace("torch.", "tensormodes.") for w in their_warnings]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_results(_run, expression)


def assert_same_errors_and_warnings(run, expression: str) -> None:
    """``run(library, functional, expression)`` (returning ``(result, gradients, warnings)``)
    raises the same error, or gives the same warnings, in tensormodes and torch."""
    import torch
    import torch.nn.functional as torch_functional

    outcomes = []
    for library, functional in ((tm, F), (torch, torch_functional)):
        try:
            outcomes.append(("ok", run(library, functional, expression)[2]))
        except Exception as error:  # noqa: BLE001 - compared below
            outcomes.append((type(error).__name__, str(error).replace("torch.", "tensormodes.")))
    ours, theirs = outcomes
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1] == [w.replace("torch.", "tensormodes.") for w in theirs[1]]
    else:
        assert ours[1] == theirs[1]


@pytest.mark.torch
@pytest.mark.parametrize("expression", ERROR_CASES + WARNING_CASES)
def test_errors_and_warnings_match_torch(expression):
    assert_same_errors_and_warnings(_run, expression)


# (detached weights are constants for autograd, not for finite differences)
@pytest.mark.parametrize("expression", [c for c in CASES if "one_hot" not in c and "detach" not in c])
def test_gradients_match_finite_differences(expression):
    leaves = _leaves(tm)

    def function(*values):
        x, p, t = values
        if "binary_cross_entropy(" in expression:
            t = t * 0.98 + 0.01  # a step of t at 1 would leave [0, 1], which binary_cross_entropy refuses
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(expression, {"L": tm, "F": F, "x": x, "p": p, "t": t})

    # Away from the kinks (x = 0 for leaky_relu, the clamps' bounds) finite differences apply.
    assert tm.autograd.gradcheck(function, tuple(leaves), eps=1e-7, atol=1e-5)


@pytest.mark.parametrize("name", ["silu", "leaky_relu", "elu", "hardtanh", "relu6"])
def test_in_place_activations_on_intermediates_keep_their_gradient(name):
    # The result is computed from a copy before it overwrites the input, so the values the
    # gradient needs survive (as PyTorch's in-place kernels keep them).
    x = tm.tensor([-2.0, -0.5, 0.25, 3.0], dtype=tm.float64, requires_grad=True)
    expected, = tm.autograd.grad(getattr(F, name)(x * 1).sum(), x)
    hidden = x * 1
    assert getattr(F, name)(hidden, inplace=True) is hidden
    got, = tm.autograd.grad(hidden.sum(), x)
    assert got.tolist() == expected.tolist()


def test_elu_gradient_stays_finite_for_large_inputs():
    x = tm.tensor([1000.0, -1000.0], dtype=tm.float64, requires_grad=True)
    F.elu(x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0]


def test_softplus_gradient_stays_finite_beyond_the_threshold():
    x = tm.tensor([1000.0, -1000.0, 20.0], dtype=tm.float64, requires_grad=True)
    F.softplus(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0, 1 / (1 + np.exp(-20.0))], rtol=1e-12)
