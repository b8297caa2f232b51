"""Autograd behaviours compared with PyTorch 2.13: freed wrapped numbers, custom Function
gradient checks, the non-leaf ``.grad`` warning, and the transpose properties."""

from __future__ import annotations

import warnings

import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode, resolve_name

try:
    import torch
except ImportError:
    torch = None

SECOND_TIME = "Trying to backward through the graph a second time"

# expression -> does a second backward raise (PyTorch 2.13's answer)
SECOND_BACKWARD = {
    "(x * 2).sum()": True, "(2 * x).sum()": True, "(x / 2).sum()": True, "x.mul(2).sum()": True,
    "L.mul(2, x).sum()": True, "x.div(2, rounding_mode='floor').sum()": True, "x.true_divide(2).sum()": True,
    "(x * True).sum()": True, "(x * 1).mul_(2).sum()": True, "(x * 1).div_(2).sum()": True, "(x * 2).mean()": True,
    "(x + 2).sum()": False, "(x - 2).sum()": False, "x.sum()": False, "x.lerp(w, 0.5).sum()": False,
    "(x % 2).sum()": False, "x.fmod(2).sum()": False, "x.add(2, alpha=3).sum()": False, "x.neg().sum()": False,
    "(x * w).sum()": True, "x.pow(2).sum()": True,
}


def _second_backward_raises(L, expression: str) -> bool:
    x = L.ones(3, requires_grad=True)
    w = L.ones(3)
    y = eval(expression, {"L": L, "x": x, "w": w})
    y.backward()
    try:
        y.backward()
    except RuntimeError as error:
        assert SECOND_TIME in str(error)
        return True
    return False


@pytest.mark.parametrize("expression", list(SECOND_BACKWARD))
def test_second_backward_through_freed_wrapped_numbers(expression):
    assert _second_backward_raises(tm, expression) is SECOND_BACKWARD[expression]


@pytest.mark.torch
@pytest.mark.parametrize("expression", list(SECOND_BACKWARD))
def test_second_backward_matches_torch(expression):
    assert _second_backward_raises(tm, expression) is _second_backward_raises(torch, expression)


def test_retain_graph_keeps_wrapped_numbers():
    x = tm.ones(2, requires_grad=True)
    y = (x * 3).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [6.0, 6.0]


def _custom_function_outcome(L, returned):
    class X(L.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return returned(L, grad)

    x = L.ones(2, requires_grad=True)
    try:
        gx, = L.autograd.grad(X.apply(x).sum(), x)
    except RuntimeError as error:
        return "error", str(error).split("  (Could this")[0]
    return "ok", str(gx.dtype).split(".")[1], tuple(gx.shape), gx.tolist()


GRADIENTS = {
    "wrong length": lambda L, g: L.ones(5),
    "wrong rank": lambda L, g: L.ones(2, 1),
    "too small": lambda L, g: L.ones(1),
    "0-d": lambda L, g: L.tensor(3.0),
    "broadcast": lambda L, g: L.ones(1, 2),
    "float64": lambda L, g: L.ones(2, dtype=L.float64),
    "int64": lambda L, g: L.ones(2, dtype=L.int64),
    "float16": lambda L, g: L.ones(2, dtype=L.float16),
    "complex": lambda L, g: L.ones(2, dtype=L.complex64),
    "number": lambda L, g: 3.0,
    "two": lambda L, g: (g, g),
    "extra None": lambda L, g: (g, None),
}


def test_custom_function_gradient_checks():
    assert _custom_function_outcome(tm, GRADIENTS["wrong length"]) == (
        "error", "Function XBackward returned an invalid gradient at index 0 - got [5] but expected shape "
                 "compatible with [2]")
    assert _custom_function_outcome(tm, GRADIENTS["broadcast"]) == ("ok", "float32", (2,), [1.0, 1.0])
    assert _custom_function_outcome(tm, GRADIENTS["float64"]) == ("ok", "float32", (2,), [1.0, 1.0])
    assert _custom_function_outcome(tm, GRADIENTS["number"]) == ("error", "expected Variable or None (got float)")
    assert _custom_function_outcome(tm, GRADIENTS["two"]) == (
        "error", "function XBackward returned an incorrect number of gradients (expected 1, got 2)")
    assert _custom_function_outcome(tm, GRADIENTS["extra None"]) == ("ok", "float32", (2,), [1.0, 1.0])


@pytest.mark.torch
@pytest.mark.parametrize("case", list(GRADIENTS))
def test_custom_function_gradient_checks_match_torch(case):
    assert _custom_function_outcome(tm, GRADIENTS[case]) == _custom_function_outcome(torch, GRADIENTS[case])


def _grad_warnings(L):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = L.ones(2, requires_grad=True)
        y = x * 2
        results = [y.grad, x.grad]  # only the non-leaf warns
        kept = x * 3
        kept.retain_grad()
        results.append(kept.grad)
        results.append((x * 2).detach().grad)
    assert all(r is None for r in results)
    return [(w.category, str(w.message).split(" (Triggered internally")[0], w.filename) for w in caught]


def test_non_leaf_grad_warns_and_points_at_the_caller():
    caught = _grad_warnings(tm)
    assert len(caught) == 1
    category, message, filename = caught[0]
    assert category is UserWarning and filename == __file__
    assert message.startswith("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed.")
    assert "use .retain_grad() on the non-leaf Tensor" in message


@pytest.mark.torch
def test_non_leaf_grad_warning_matches_torch():
    ours = [(c, m) for c, m, _ in _grad_warnings(tm)]
    theirs = [(c, m) for c, m, _ in _grad_warnings(torch)]
    assert ours == theirs


def test_non_leaf_grad_warns_through_the_protocol_too():
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    y = tm.ones(2, requires_grad=True) * 2
    with Spy(), pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None
    assert seen == [tm.Tensor.grad.__get__]


TRANSPOSES = ["L.ones(2, 3).H", "L.ones(()).H", "L.ones(2).H", "L.ones(2, 3, 4).H", "L.ones(2, 3, 4).mH",
              "L.ones(2).mH", "L.ones(()).mH", "L.ones(()).mT", "L.ones(2).mT", "L.ones(2, 3, 4).T", "L.ones(2).T",
              "L.ones(()).T", "L.tensor([[1 + 2j, 3j]]).H", "L.tensor([[[1 + 2j, 3j]]]).mH"]


def _outcome(L, expression):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = eval(expression, {"L": L})
        except RuntimeError as error:
            return "error", str(error)
    # PyTorch gives the warning about x.T on other than 2 dimensions once per process only
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught
                if not str(w.message).startswith("The use of `x.T`")]
    return "ok", tuple(value.shape), value.tolist(), messages


def test_transpose_properties():
    z = tm.tensor([[1 + 2j, 3j]])
    assert z.H.tolist() == [[1 - 2j], [-3j]] and z.mH.shape == (2, 1)
    assert _outcome(tm, "L.ones(2, 3, 4).H") == (
        "error", "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of matrices, "
                 "consider using tensor.mH")
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        assert tm.ones(2, 3, 4).T.shape == (4, 3, 2)
    x = tm.tensor([[1 + 2j, 3j]], requires_grad=True)
    assert x.H.grad_fn.name() == "ConjBackward0" and x.T.grad_fn.name() == "PermuteBackward0"
    assert tm.ones(2, 3, requires_grad=True).H.grad_fn.name() == "TransposeBackward0"


@pytest.mark.torch
@pytest.mark.parametrize("expression", TRANSPOSES)
def test_transpose_properties_match_torch(expression):
    assert _outcome(tm, expression) == _outcome(torch, expression)


def test_transpose_properties_go_through_the_protocol():
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(resolve_name(func))
            return func(*args, **(kwargs or {}))

    x = tm.ones(2, 3)
    with Spy():
        results = [x.H, x.mH, x.T, x.mT]
    assert [r.shape for r in results] == [(3, 2)] * 4
    assert seen[0] == "tensormodes.Tensor.H.__get__"
    assert [n for n in seen if n.endswith("__get__")] == [
        "tensormodes.Tensor.H.__get__", "tensormodes.Tensor.mH.__get__", "tensormodes.Tensor.T.__get__",
        "tensormodes.Tensor.mT.__get__"]
