"""PyTorch's private protocol helpers and guards, with PyTorch's meaning (compared with torch 2.13)."""

from __future__ import annotations

import gc

import pytest

import tensormodes as tm
from tensormodes import _C
from tensormodes.overrides import (
    BaseTorchFunctionMode,
    _enable_torch_function,
    get_testing_overrides,
    is_tensor_method_or_property,
    push_torch_function_mode,
    resolve_name,
)

try:
    import torch
except ImportError:
    torch = None


def _enable_guard_trace(C, Disable):
    """What ``_EnableTorchFunction`` does inside a disabling context, step by step."""
    trace = []
    with Disable():
        trace.append((C._is_torch_function_enabled(), C._is_torch_function_all_disabled()))
        guard = C._EnableTorchFunction()
        trace.append((C._is_torch_function_enabled(), C._is_torch_function_all_disabled()))
        del guard
        gc.collect()
        trace.append((C._is_torch_function_enabled(), C._is_torch_function_all_disabled()))
        with C._EnableTorchFunction() as entered:
            trace.append((entered, C._is_torch_function_enabled()))
        trace.append((C._is_torch_function_enabled(), C._is_torch_function_all_disabled()))
    trace.append((C._is_torch_function_enabled(), C._is_torch_function_all_disabled()))
    return trace


def test_enable_guard_lasts_until_deleted():
    assert _enable_guard_trace(_C, _C.DisableTorchFunctionSubclass) == [
        (False, False), (True, False), (False, False), (None, True), (False, False), (True, False)]
    assert _enable_guard_trace(_C, _C.DisableTorchFunction) == [
        (False, True), (True, False), (False, True), (None, True), (False, True), (True, False)]


@pytest.mark.torch
@pytest.mark.parametrize("disable", ["DisableTorchFunctionSubclass", "DisableTorchFunction"])
def test_enable_guard_matches_torch(disable):
    assert (_enable_guard_trace(_C, getattr(_C, disable))
            == _enable_guard_trace(torch._C, getattr(torch._C, disable)))


def test_enable_guard_reenables_subclasses_and_modes():
    class Sub(tm.Tensor):
        pass

    x = tm.ones(2).as_subclass(Sub)
    seen = []

    class Spy(BaseTorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    with Spy(), _C.DisableTorchFunction():
        assert type(x + 1) is tm.Tensor and seen == []
        guard = _C._EnableTorchFunction()
        assert type(x + 1) is Sub and seen == [tm.Tensor.add]
        del guard
        assert type(x + 1) is tm.Tensor and seen == [tm.Tensor.add]


def test_enable_guard_outliving_its_context_is_discarded_with_it():
    def body():
        with _C.DisableTorchFunctionSubclass():
            guard = _C._EnableTorchFunction()
            assert _C._is_torch_function_enabled()
        # the enclosing scope exited first: the guard's state went with it, silently
        assert _C._is_torch_function_enabled()
        return guard

    guard = body()
    del guard
    assert _C._is_torch_function_enabled()


def test_private_stack_helpers():
    with pytest.raises(RuntimeError, match="^trying to pop from empty mode stack$"):
        _C._pop_torch_function_stack()
    with pytest.raises(RuntimeError, match="^Tried to get stack at idx that's too big$"):
        _C._get_function_stack_at(0)
    a, b = BaseTorchFunctionMode(), BaseTorchFunctionMode()
    _C._push_on_torch_function_stack(a)
    _C._push_on_torch_function_stack(None)  # ignored, as in PyTorch
    _C._push_on_torch_function_stack(b)
    try:
        assert _C._len_torch_function_stack() == 2
        assert _C._get_function_stack_at(0) is a and _C._get_function_stack_at(1) is b
        assert _C._get_torch_function_mode() is b and b.inner is a
        with pytest.raises(RuntimeError, match="too big"):
            _C._get_function_stack_at(2)
        with pytest.raises(RuntimeError, match="negative"):
            _C._get_function_stack_at(-1)
        with pytest.raises(TypeError, match="expects a TorchFunctionMode"):
            _C._push_on_torch_function_stack(3)
        assert _C._len_torch_function_stack() == 2
    finally:
        assert _C._pop_torch_function_stack() is b
        assert _C._pop_torch_function_stack() is a
    assert _C._len_torch_function_stack() == 0


def test_pop_and_push_inside_a_mode_then_exit_keeps_the_stack():
    mode = BaseTorchFunctionMode()
    with mode:
        popped = _C._pop_torch_function_stack()
        assert popped is mode and _C._len_torch_function_stack() == 0
        assert tm.ones(1).tolist() == [1.0]
        _C._push_on_torch_function_stack(popped)
        assert _C._len_torch_function_stack() == 1
    assert _C._len_torch_function_stack() == 0
    with mode:
        _C._pop_torch_function_stack()  # never pushed back: the with block restores its stack anyway
    assert _C._len_torch_function_stack() == 0


def _stack_trace(C, mode_class):
    trace = []
    for call in (C._pop_torch_function_stack, lambda: C._get_function_stack_at(0)):
        try:
            call()
        except RuntimeError as error:
            trace.append(str(error))
    mode = mode_class()
    with mode:
        trace.append(C._len_torch_function_stack())
        trace.append(C._get_function_stack_at(0) is mode)
        popped = C._pop_torch_function_stack()
        trace.append((popped is mode, C._len_torch_function_stack()))
        C._push_on_torch_function_stack(popped)
        trace.append(C._len_torch_function_stack())
    trace.append(C._len_torch_function_stack())
    with C.DisableTorchFunction():
        trace.append(C._is_torch_function_all_disabled())
    trace.append(C._is_torch_function_all_disabled())
    return trace


@pytest.mark.torch
def test_private_stack_helpers_match_torch():
    assert (_stack_trace(_C, BaseTorchFunctionMode)
            == _stack_trace(torch._C, torch.overrides.BaseTorchFunctionMode))


def test_enable_torch_function_context_manager():
    with _C.DisableTorchFunction():
        with _enable_torch_function():
            assert _C._is_torch_function_enabled() and not _C._is_torch_function_all_disabled()
        assert _C._is_torch_function_all_disabled()
    assert _C._is_torch_function_enabled()


def test_push_rejects_an_instance_with_the_pull_requests_wording():
    mode = BaseTorchFunctionMode()
    with pytest.raises(ValueError) as info:
        with push_torch_function_mode(mode):
            pass
    message = str(info.value)
    assert message.startswith("Expected a TorchFunctionMode constructor function, but got an instance of "
                              "TorchFunctionMode BaseTorchFunctionMode()")
    assert "enable_torch_function_mode" in message
    assert _C._len_torch_function_stack() == 0


OPERATORS = ["__add__", "__radd__", "__iadd__", "__rsub__", "__matmul__", "__rmatmul__", "__lt__", "__mod__",
             "__imod__", "__rand__", "__ror__", "__rxor__", "__getitem__", "__setitem__", "__len__", "__repr__",
             "__ifloordiv__", "__pow__", "__rpow__", "__eq__"]


@pytest.mark.parametrize("name", OPERATORS)
def test_operators_have_names_and_are_tensor_methods(name):
    func = getattr(tm.Tensor, name)
    assert resolve_name(func) == f"tensormodes.Tensor.{name}"
    assert is_tensor_method_or_property(func)
    assert eval(resolve_name(func), {"tensormodes": tm}) == func


@pytest.mark.torch
@pytest.mark.parametrize("name", OPERATORS + ["__hash__", "__iter__", "__torch_function__", "__init__"])
def test_operator_names_match_torch(name):
    ours, theirs = getattr(tm.Tensor, name), getattr(torch.Tensor, name)
    expected = torch.overrides.resolve_name(theirs)
    assert resolve_name(ours) == (None if expected is None else expected.replace("torch.", "tensormodes."))
    assert is_tensor_method_or_property(ours) == torch.overrides.is_tensor_method_or_property(theirs)


def test_resolve_name_ignores_foreign_dunders():
    assert resolve_name(object.__sizeof__) is None and resolve_name(int.__add__) is None
    assert not is_tensor_method_or_property(int.__add__)


def test_testing_overrides_are_cached():
    assert get_testing_overrides() is get_testing_overrides()
    assert get_testing_overrides()[tm.add](1, 2) == -1


def test_subclass_results_stay_attached_to_the_autograd_graph():
    # PyTorch's default __torch_function__ converts results with as_subclass, which records
    # AliasBackward0: gradients flow through a subclass's ops.
    class Sub(tm.Tensor):
        pass

    x = tm.ones(2, requires_grad=True)
    s = x.as_subclass(Sub)
    assert type(s) is Sub and s.requires_grad and not s.is_leaf
    assert type(s.grad_fn).__name__ == "AliasBackward0"
    z = s * 3
    assert type(z) is Sub and type(z.grad_fn).__name__ == "AliasBackward0"
    z.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert s._base is x  # a view, as in PyTorch
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used"):
        s.add_(1)
    y = x * 2
    y.as_subclass(Sub).add_(1)  # reaches y's history, as an in-place change of a view does
    assert y._version == 1 and type(y.grad_fn).__name__ == "CopySlices"
    with tm.no_grad():
        assert x.as_subclass(Sub).grad_fn is None
    leaf = tm.Tensor._make_subclass(Sub, x.detach(), True)
    assert leaf.is_leaf and leaf.requires_grad and leaf.grad_fn is None
