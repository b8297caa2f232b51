"""PyTorch 2.13's skip-next state (``redispatch_function``, ``_C._skip_one_hop_torch_function``
...) and the smaller protocol details of issue 30: ``has_torch_function``'s argument check,
``Tensor._is_view``, ``F.bilinear``, ``gradcheck`` on tensor-likes, ``device(device=, index=)``."""

from __future__ import annotations

import gc

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.overrides import (
    TorchFunctionMode,
    get_overridable_functions,
    get_testing_overrides,
    has_torch_function,
    has_torch_function_unary,
    redispatch_function,
    resolve_name,
)

try:
    import torch
except ImportError:
    torch = None


def _trace(lib):
    """What a mode and a subclass see around the skip-next flag, step by step."""
    C, overrides = lib._C, lib.overrides
    seen = []

    def name(func):
        return (overrides.resolve_name(func) or func.__name__).split(".", 1)[1]

    class Log(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(("mode", name(func)))
            return func(*args, **(kwargs or {}))

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(("sub", name(func) if func is not scaled_mul else "scaled_mul"))
            return overrides.redispatch_function(func, types, args, kwargs)

    def scaled_mul(a, b):
        if overrides.has_torch_function((a, b)):
            return overrides.handle_torch_function(scaled_mul, (a, b), a, b)
        return a * b + 1

    x = lib.ones(2)
    s = x.as_subclass(Sub)
    seen.append(C._peek_should_skip_torch_function())
    C._set_skip_next_torch_function(True)
    seen.append(C._peek_should_skip_torch_function())
    lib.add(x, 1)  # consumes the flag, no override involved
    seen.append(C._peek_should_skip_torch_function())
    with Log():
        C._set_skip_next_torch_function(True)
        lib.add(x, 1)  # skipped by the mode
        lib.add(x, 1)  # seen again
        C._skip_one_hop_torch_function(lib.add, (), (s, 1), {})  # neither the mode nor Sub
        C._skip_one_hop_torch_function(lib.Tensor.add, (), (x,), {"other": 1})
    seen.append(type(lib.add(s, 1)).__name__)  # redispatched: a plain result
    seen.append(type(scaled_mul(s, s)).__name__)
    C._set_skip_next_torch_function(True)
    seen.append(overrides.has_torch_function((s,)))  # consumes the flag ...
    seen.append(C._peek_should_skip_torch_function())
    C._set_skip_next_torch_function(True)
    seen.append(overrides.has_torch_function_unary(s))  # ... and so does this one
    seen.append(C._peek_should_skip_torch_function())
    C._set_skip_next_torch_function(None)
    seen.append(C._peek_should_skip_torch_function())
    with pytest.raises(RuntimeError) as info:
        C._skip_one_hop_torch_function(lambda *a: a, (), (1,), None)
    seen.append((str(info.value), C._peek_should_skip_torch_function()))
    with pytest.raises(ZeroDivisionError):
        C._skip_one_hop_torch_function(lambda: 1 / 0, (), (), {})
    seen.append(C._peek_should_skip_torch_function())
    return seen


EXPECTED = [
    False, True, False,
    ("mode", "add"), ("sub", "add"), "Tensor", ("sub", "scaled_mul"), ("sub", "Tensor.mul"), "Tensor",
    False, False, False, False, False,
    ("skip_one_hop_torch_function called on a function that doesn't use has_torch_function! ", False),
    False,
]


def test_skip_next_flag_and_redispatch():
    assert _trace(tm) == EXPECTED


@pytest.mark.torch
def test_skip_next_flag_and_redispatch_match_torch():
    assert _trace(tm) == _trace(torch)


def test_redispatch_in_a_mode_with_self_reentered():
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(resolve_name(func))
            with self:
                return redispatch_function(func, types, args, kwargs)

    with Log():
        y = tm.mul(tm.ones(2), 3) + 1
    assert y.tolist() == [4.0, 4.0]
    assert seen == ["tensormodes.ones", "tensormodes.mul", "tensormodes.Tensor.add"]
    assert not tm._C._peek_should_skip_torch_function()


def test_skip_flag_is_per_thread():
    import threading

    tm._C._set_skip_next_torch_function(True)
    try:
        seen = []
        thread = threading.Thread(target=lambda: seen.append(tm._C._peek_should_skip_torch_function()))
        thread.start()
        thread.join()
        assert seen == [False]
    finally:
        tm._C._set_skip_next_torch_function(False)


def test_has_torch_function_wants_a_sequence():
    for value in (1, None, 2.5):
        with pytest.raises(TypeError, match="^expected a sequence$"):
            has_torch_function(value)
    x = tm.ones(2)
    assert has_torch_function("ab") is False and has_torch_function(range(3)) is False
    assert has_torch_function(iter([x])) is False and has_torch_function(x) is False
    assert has_torch_function_unary(1) is False


@pytest.mark.torch
def test_has_torch_function_wants_a_sequence_like_torch():
    for value in (1, None):
        with pytest.raises(TypeError) as ours:
            has_torch_function(value)
        with pytest.raises(TypeError) as theirs:
            torch.overrides.has_torch_function(value)
        assert str(ours.value) == str(theirs.value)


def _view_facts(lib):
    x = lib.ones(2, 3, requires_grad=True)
    y = x * 1
    return [x._is_view(), y._is_view(), y.view(6)._is_view(), x.detach()._is_view(), y[0]._is_view(),
            y.t()._is_view(), y.reshape(6)._is_view(), y.contiguous()._is_view(), y.t().contiguous()._is_view(),
            y.view(6).detach()._is_view(), y[0].clone()._is_view(), y.unsqueeze(0)._is_view(),
            y.expand(2, 2, 3)._is_view(), y.split(1)[0]._is_view(), y.unbind()[0]._is_view(),
            y.view(6).view(2, 3)._is_view(), y.narrow(0, 0, 1)._is_view(), y.diagonal()._is_view(),
            y.t().reshape(6)._is_view(), y.movedim(0, 1)._is_view(), y.data._is_view(), y.squeeze()._is_view(),
            y.squeeze(0)._is_view()]


def test_is_view():
    assert _view_facts(tm) == [False, False, True, False, True, True, True, False, False, False, False, True,
                               True, True, True, True, True, True, False, True, False, True, True]
    assert tm.Tensor._is_view in get_overridable_functions()[tm.Tensor]


@pytest.mark.torch
def test_is_view_matches_torch():
    assert _view_facts(tm) == _view_facts(torch)


def test_bilinear_is_overridable_and_computes():
    assert F.bilinear in get_overridable_functions()[F] and F.bilinear in get_testing_overrides()
    x1 = tm.tensor([[1.0, 2.0]])
    x2 = tm.tensor([[3.0, 4.0, 5.0]])
    weight = tm.arange(12.0).reshape(2, 2, 3)
    assert F.bilinear(x1, x2, weight, tm.tensor([1.0, -1.0])).tolist() == [[115.0, 329.0]]
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(resolve_name(func))
            return func(*args, **(kwargs or {}))

    layer = tm.nn.Bilinear(2, 3, 2)
    with Log():
        layer(x1, x2)
    # F.bilinear is the builtin tm.bilinear, as in PyTorch (resolve_name gives torch.bilinear there)
    assert "tensormodes.bilinear" in seen and "tensormodes.einsum" not in seen


BILINEAR_CALLS = [
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.arange(6.).reshape(2, 3), L.ones(2, 4), L.arange(60.).reshape(5, 3, 4), L.arange(5.))",
    "F.bilinear(L.ones(7, 2, 3), L.ones(7, 2, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(3), L.ones(4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(0, 3), L.ones(0, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(2, 3, dtype=L.int64), L.ones(2, 4, dtype=L.int64), L.ones(5, 3, 4, dtype=L.int64))",
    "F.bilinear(L.ones(2, 3), L.ones(3, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 2, 4))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 3))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4), L.ones(4))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4, 1), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(2, 3, dtype=L.float64), L.ones(2, 4), L.ones(5, 3, 4))",
    "F.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4), L.ones(5, dtype=L.float64))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", BILINEAR_CALLS)
def test_bilinear_matches_torch(expression):
    from .torch_oracle import assert_same_outcome

    assert_same_outcome(expression.replace("F.", "L.nn.functional."))


def test_bilinear_errors():
    with pytest.raises(RuntimeError,
                       match="^bilinear\\(\\): input batch dimensions do not match at dim 0: got 2 and 3$"):
        F.bilinear(tm.ones(2, 3), tm.ones(3, 4), tm.ones(5, 3, 4))
    with pytest.raises(RuntimeError, match="^All tensors must have the same dtype, got input1: double, input2: float, "
                                           "weight: float$"):
        F.bilinear(tm.ones(2, 3, dtype=tm.float64), tm.ones(2, 4), tm.ones(5, 3, 4))


def _gradcheck_outcomes(lib):
    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    outcomes = []
    for inputs in [(lib.ones(2, dtype=lib.float64),), (1.0,), (Like(),),
                   (lib.ones(2, dtype=lib.float64, requires_grad=True),)]:
        for check in (lib.autograd.gradcheck, lib.autograd.gradgradcheck):
            try:
                outcomes.append(check(lambda a: a * 2, inputs))
            except Exception as error:
                outcomes.append((type(error).__name__, str(error)))
    return outcomes


def test_gradcheck_wants_an_input_requiring_grad():
    none = ("ValueError", "gradcheck expects at least one input tensor to require gradient, but none of them have "
                          "requires_grad=True.")
    like = ("AttributeError", "'Like' object has no attribute 'requires_grad'")
    number = ("AttributeError", "'float' object has no attribute 'requires_grad'")
    declined = ("TypeError", "unsupported operand type(s) for *: 'Like' and 'int'")
    # gradgradcheck runs the function first, as PyTorch's does
    assert _gradcheck_outcomes(tm) == [none, none, none, number, like, declined, True, True]


@pytest.mark.torch
def test_gradcheck_wants_an_input_requiring_grad_like_torch():
    assert _gradcheck_outcomes(tm) == _gradcheck_outcomes(torch)


def test_device_keyword_with_an_index():
    with pytest.raises(TypeError, match='^device\\(\\) missing 1 required positional arguments: "type"$'):
        tm.device(device="cpu", index=0)
    assert tm.device(device="cpu") == tm.device("cpu") and tm.device(device=tm.device("meta")).type == "meta"


def test_no_flag_leaks():
    gc.collect()
    assert not tm._C._peek_should_skip_torch_function()
