"""Tensor-likes where no tensor goes: in int and float lists, as dtypes, ints, strings, and
inside the sequences of an index tuple, they are overloaded arguments, as PyTorch's argument
parser collects them (compared with torch 2.13)."""

from __future__ import annotations

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.overrides import TorchFunctionMode, resolve_name

try:
    import torch
    import torch.nn.functional as torch_F
except ImportError:
    torch = torch_F = None


class Like:
    """A tensor-like that is nothing else (no ``__index__``, no ``__float__``)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func.__name__, [t.__name__ for t in types])


class Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


# expression over L (the library) and F (its nn.functional), x a (2, 3, 4) tensor
CALLS = {
    "int list, first": "F.pad(x, [Like(), 1])",
    "int list, second": "F.pad(x, (1, Like()))",
    "size as *args": "x.view(6, Like())",
    "size as a list": "x.view([6, Like()])",
    "reshape": "L.reshape(x, (Like(), 4))",
    "dims": "x.sum(dim=[0, Like()])",
    "permute": "x.permute(Like(), 1, 2)",
    "flip": "L.flip(x, [Like()])",
    "roll": "L.roll(x, [Like()], [0])",
    "split sizes": "L.split(x, [Like(), 1])",
    "repeat": "x.repeat(Like(), 1, 1)",
    "an int": "L.transpose(x, Like(), 1)",
    "unsqueeze": "L.unsqueeze(x, Like())",
    "a dtype": "x.sum(dtype=L.float64 if False else Like())",
    "to(dtype=)": "x.to(dtype=Like())",
    "a factory's dtype": "L.zeros(2, dtype=Like())",
    "fill value": "L.full((2,), Like())",
    "alpha": "L.add(x, x, alpha=Like())",
    "a string": "F.gelu(x, approximate=Like())",
    "a generator": "L.rand(2, generator=Like())",
    "a float": "F.leaky_relu(x, Like())",
    "a pooling window": "F.max_pool1d(L.ones(1, 1, 5), [2], stride=[Like()])",
    "index: tuple in a tuple": "x[((0, Like()),)]",
    "index: list in a tuple": "x[(0, [0, Like()])]",
    "index: list": "x[[0, Like()]]",
}


def _run(library, functional, expression):
    namespace = {"L": library, "F": functional, "x": library.ones(2, 3, 4), "Like": Like}
    try:
        result = eval(expression, namespace)
    except Exception as error:
        return type(error).__name__
    return result if isinstance(result, tuple) and result[:1] == ("handled",) else "not handled"


@pytest.mark.parametrize("expression", list(CALLS.values()), ids=list(CALLS))
def test_tensor_likes_in_other_arguments_are_overloaded(expression):
    result = _run(tm, F, expression)
    assert result[0] == "handled" and result[2] == ["Like"], result


# torch.split is Python code whose native call is split_with_sizes: its handler sees that.
ORACLE = {name: expression for name, expression in CALLS.items() if name != "split sizes"}


@pytest.mark.torch
@pytest.mark.parametrize("expression", list(ORACLE.values()), ids=list(ORACLE))
def test_tensor_likes_in_other_arguments_match_torch(expression):
    assert _run(tm, F, expression) == _run(torch, torch_F, expression)


def test_the_handler_receives_the_call_as_made():
    x = tm.ones(2, 3, 4)
    seen = []

    class Record:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((resolve_name(func), types, args, kwargs))
            return -1

    record = Record()
    assert F.pad(x, [record, 1]) == -1
    assert x.view(6, record) == -1
    assert seen == [("tensormodes.nn.functional.pad", (Record,), (x, [record, 1]), {"mode": "constant", "value": None}),
                    ("tensormodes.Tensor.view", (Record,), (x, 6, record), {})]


def test_a_declining_tensor_like_raises_no_implementation():
    with pytest.raises(TypeError) as info:
        F.pad(tm.ones(2, 3, 4), [Declines(), 1])
    assert str(info.value).startswith(
        "no implementation found for 'tensormodes.nn.functional.pad' on types that implement "
        "__torch_function__: [<class ")


def test_deeper_nesting_is_not_scanned_and_the_error_stays():
    # PyTorch looks one level into an int list (two into an index tuple), no further.
    with pytest.raises(TypeError, match="must be tuple of ints, but found element of type list at pos 0"):
        F.pad(tm.ones(2, 3, 4), [[Like()], 1])
    with pytest.raises(IndexError):
        tm.ones(2, 3, 4)[(0, [[0, Like()]])]


def test_errors_without_tensor_likes_are_unchanged():
    with pytest.raises(TypeError, match=r"pad\(\): argument 'pad' \(position 2\) must be tuple of ints, "
                                        "but found element of type str at pos 0"):
        F.pad(tm.ones(2, 3, 4), ["a", 1])


def test_disabled_subclass_handling_ignores_tensor_likes():
    with tm._C.DisableTorchFunctionSubclass(), pytest.raises(TypeError, match="found element of type Like"):
        F.pad(tm.ones(2, 3, 4), [Like(), 1])


def test_a_pass_through_mode_reaches_the_tensor_like():
    class PassThrough(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with PassThrough():
        assert F.pad(tm.ones(2, 3, 4), [Like(), 1])[:2] == ("handled", "pad")


def test_a_handler_failing_inside_a_composite_runs_once():
    calls = []

    class Fails:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            raise ValueError("from the handler")

    # F.max_pool2d and F.softmax pass the argument on to a public op, which fails first.
    with pytest.raises(ValueError, match="from the handler"):
        F.max_pool2d(tm.ones(1, 1, 4, 4), Fails())
    with pytest.raises(ValueError, match="from the handler"):
        F.softmax(tm.ones(2), dim=Fails())
    assert calls == ["max_pool2d", "softmax"]
