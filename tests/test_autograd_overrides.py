"""``autograd.grad`` and ``autograd.backward`` take part in the override protocol as PyTorch's do:
a tensor-like among the outputs or inputs, or an active ``__torch_function__`` mode, receives the
call with PyTorch's normalized arguments (issue 30)."""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode
from tensormodes.utils._debug_mode import _op_name

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None


def _record(library, call):
    """What a tensor-like standing for a leaf receives from ``call(library, leaf, like)``: the
    function's name, the positional arguments' shapes, the keyword arguments' names, the result."""
    seen = []

    class Like:
        def __init__(self, t):
            self.t = t

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func.__module__, func.__name__, cls in types,
                         [type(a).__name__ for a in args], sorted(kwargs)))
            def unwrap(a):
                return [v.t if isinstance(v, cls) else v for v in a] if isinstance(a, tuple) else a

            return func(*map(unwrap, args), **{name: unwrap(value) for name, value in kwargs.items()})

    x = library.ones(2, requires_grad=True)
    result = call(library, x, Like(x))
    return seen, result


def _grad(library, x, like):
    return library.autograd.grad((x * 3).sum(), like)


def _grad_dict(library, x, like):
    return library.autograd.grad([(x * 3).sum()], {"x": like})


def _backward(library, x, like):
    library.autograd.backward((x * 3).sum(), inputs=[like])
    return x.grad


EXPECTED = {
    _grad: [("tensormodes.autograd", "grad", True, ["tuple", "tuple"],
             ["allow_unused", "create_graph", "grad_outputs", "is_grads_batched", "materialize_grads",
              "only_inputs", "retain_graph"])],
    _grad_dict: [("tensormodes.autograd", "grad", True, ["tuple", "tuple"],
                  ["allow_unused", "create_graph", "grad_outputs", "is_grads_batched", "materialize_grads",
                   "only_inputs", "retain_graph"])],
    _backward: [("tensormodes.autograd", "backward", True, ["tuple"],
                 ["create_graph", "grad_tensors", "inputs", "retain_graph"])],
}


@pytest.mark.parametrize("call", list(EXPECTED), ids=["grad", "grad_dict", "backward"])
def test_a_tensor_like_receives_the_call(call):
    seen, result = _record(tm, call)
    assert seen == EXPECTED[call]
    if call is _grad:
        assert type(result) is tuple and result[0].tolist() == [3.0, 3.0]
    elif call is _grad_dict:
        assert list(result) == ["x"] and result["x"].tolist() == [3.0, 3.0]
    else:
        assert result.tolist() == [3.0, 3.0]
    if torch is not None:
        theirs, their_result = _record(torch, call)
        assert [(module.replace("torch", "tensormodes"), *rest) for module, *rest in theirs] == EXPECTED[call]
        assert type(their_result).__name__ == type(result).__name__


def test_a_mode_sees_grad_and_backward():
    class Log(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(_op_name(func))
            return func(*args, **(kwargs or {}))

    x = tm.ones(2, requires_grad=True)
    with Log() as log:
        y = (x * 2).sum()
        (g,) = tm.autograd.grad(y, x, retain_graph=True)
        tm.autograd.backward(y)
    assert log.names[-2:] == ["tensormodes.autograd.grad", "tensormodes.autograd.backward"]
    assert g.tolist() == [2.0, 2.0] and x.grad.tolist() == [2.0, 2.0]


def test_argument_errors_are_pytorchs():
    x = tm.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `grad\(\)` cannot be empty\.$"):
        tm.autograd.grad((x * 2).sum(), [])
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `backward\(\)` cannot be empty\.$"):
        tm.autograd.backward((x * 2).sum(), inputs=[])
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        tm.autograd.grad((x * 2).sum(), x, allow_unused=False, materialize_grads=True)
    with pytest.raises(RuntimeError, match="both passed to `backward\\(\\)`"), pytest.warns(FutureWarning):
        tm.autograd.backward((x * 2).sum(), grad_tensors=tm.ones(()), grad_variables=tm.ones(()))
