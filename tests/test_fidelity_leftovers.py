"""Fidelity leftovers of issues 24, 25 and 30, each checked against PyTorch 2.13 when it is
installed and against literals otherwise: what a ``TorchFunctionMode`` receives for builtins whose
optional tensors are passed positionally and for ``Tensor.backward``."""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None


def _describe(value):
    """A value as a library-independent string (tensors by shape only)."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"T{list(value.shape)}"
    return repr(value)


def calls_seen(library, mode_base, program) -> list[tuple]:
    """``(function name, args, kwargs)`` of each call a logging mode receives while ``program``
    runs (values described by ``_describe``)."""
    seen = []

    class Log(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            seen.append((func.__name__, tuple(map(_describe, args)),
                         tuple((k, _describe(v)) for k, v in kwargs.items())))
            return func(*args, **kwargs)

    library.manual_seed(0)
    x = library.randn(3, 4, requires_grad=True)
    w = library.randn(2, 4)
    b = library.randn(2)
    with Log():
        program(library, x, w, b)
    return seen


def _linear_calls(library, x, w, b):
    F = library.nn.functional
    F.linear(x, w, b)
    F.linear(x, w)
    F.linear(x, w, bias=b)
    F.linear(input=x, weight=w)


def _backward_calls(library, x, w, b):
    library.nn.functional.linear(x, w).sum().backward()
    (x * 2).sum().backward(retain_graph=True)


def _other_optional_tensor_calls(library, x, w, b):
    index = library.tensor([0, 1, 1])
    library.bincount(index, b[:1].expand(3))
    library.bincount(index)
    library.trapezoid(b, b)
    library.nn.functional.rms_norm(x, (4,), w[0])


LINEAR_CALLS = [
    ("linear", ("T[3, 4]", "T[2, 4]", "T[2]"), ()),
    ("linear", ("T[3, 4]", "T[2, 4]"), ()),
    ("linear", ("T[3, 4]", "T[2, 4]", "T[2]"), ()),  # PyTorch keeps the keyword (README: Differences)
    ("linear", ("T[3, 4]", "T[2, 4]"), ()),
]

BACKWARD_CALLS = [
    ("linear", ("T[3, 4]", "T[2, 4]"), ()),
    ("sum", ("T[3, 2]",), ()),
    ("backward", ("T[]",), (("gradient", "None"), ("retain_graph", "None"), ("create_graph", "False"),
                            ("inputs", "None"))),
    ("mul", ("T[3, 4]", "2"), ()),
    ("sum", ("T[3, 4]",), ()),
    ("backward", ("T[]",), (("gradient", "None"), ("retain_graph", "True"), ("create_graph", "False"),
                            ("inputs", "None"))),
]


def test_an_optional_tensor_given_positionally_reaches_handlers_positionally():
    assert calls_seen(tm, TorchFunctionMode, _linear_calls) == LINEAR_CALLS


def test_tensor_backward_hands_every_keyword_to_handlers():
    assert calls_seen(tm, TorchFunctionMode, _backward_calls) == BACKWARD_CALLS


@pytest.mark.torch
def test_handler_arguments_equal_pytorchs():
    from torch.overrides import TorchFunctionMode as TorchMode

    theirs = calls_seen(torch, TorchMode, _linear_calls)
    # the one call style the generated signature cannot tell apart: a keyword given for a
    # positional parameter (PyTorch hands its builtins' arguments on as written)
    assert theirs[2] == ("linear", ("T[3, 4]", "T[2, 4]"), (("bias", "T[2]"),))
    assert theirs[3] == ("linear", (), (("input", "T[3, 4]"), ("weight", "T[2, 4]")))
    assert [theirs[0], theirs[1]] == LINEAR_CALLS[:2]
    assert calls_seen(torch, TorchMode, _backward_calls) == BACKWARD_CALLS
    ours = calls_seen(tm, TorchFunctionMode, _other_optional_tensor_calls)
    theirs = calls_seen(torch, TorchMode, _other_optional_tensor_calls)
    assert ours == theirs
