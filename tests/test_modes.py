"""__torch_function__ modes: the pull request's design, and what later experience added."""

from __future__ import annotations

import asyncio
import functools
import gc
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm
from tensormodes import _C
from tensormodes._overrides import dispatch as _dispatch
from tensormodes.overrides import (
    BaseTorchFunctionMode,
    TorchFunctionMode,
    _get_current_function_mode,
    _get_current_function_mode_stack,
    _len_torch_function_stack,
    capture_torch_function_modes,
    enable_torch_function_mode,
    explain,
    push_torch_function_mode,
    resolve_name,
)


class Logger(TorchFunctionMode):
    def __init__(self, name, log):
        self.name = name
        self.log = log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, resolve_name(func)))
        return func(*args, **(kwargs or {}))

    def __repr__(self):
        return f"Logger({self.name!r})"


def stack():
    return _get_current_function_mode_stack()


# -- the pull request's scenarios ---------------------------------------------------------


def test_basic_interception_of_a_factory_with_empty_types():
    seen = []

    class Intercept(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func, types, args, kwargs))
            return "intercepted"

    with Intercept.push():
        assert tm.zeros(3) == "intercepted"
        assert tm.tensor([1]) == "intercepted"
    assert seen == [(tm.zeros, (), (3,), {}), (tm.tensor, (), ([1],), {})]
    assert type(tm.zeros(3)) is tm.Tensor


def test_push_builds_the_inner_chain_and_nested_modes_run_inner_first():
    log = []
    with Logger.push("outer", log) as outer:
        with push_torch_function_mode(functools.partial(Logger, "inner", log)) as inner:
            assert inner.inner is outer and outer.inner is None
            tm.zeros(3)
    assert log == [("inner", "tensormodes.zeros"), ("outer", "tensormodes.zeros")]
    assert stack() == []


def test_handler_runs_with_the_modes_below_active():
    observed = []

    class Probe(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            observed.append((_get_current_function_mode(), _len_torch_function_stack()))
            return func(*args, **(kwargs or {}))

    with Probe.push() as outer, Probe.push():
        tm.ones(1)
    assert observed == [(outer, 1), (None, 0)]


def test_modes_are_handled_before_subclasses():
    order = []

    class Sub(tm.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append(("Sub", types))
            return super().__torch_function__(func, types, args, kwargs)

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            order.append(("mode", types))
            return func(*args, **(kwargs or {}))

    s = tm.ones(2).as_subclass(Sub)
    with Mode():
        result = s + 1
    assert order == [("mode", (Sub,)), ("Sub", (Sub,))]
    assert type(result) is Sub


def test_mode_returning_not_implemented_falls_back_to_subclasses_and_sees_the_rerun():
    order = []

    class Sub(tm.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append(("Sub", types))
            return super().__torch_function__(func, types, args, kwargs)

    class OnlyPlain(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            order.append(("mode", types))
            if types:
                return NotImplemented
            return func(*args, **(kwargs or {}))

    s = tm.ones(2).as_subclass(Sub)
    with OnlyPlain():
        result = s.sum()
    assert order == [("mode", (Sub,)), ("Sub", (Sub,)), ("mode", ())]
    assert type(result) is Sub and result.item() == 2


def test_mode_declining_everything_raises_naming_the_mode():
    class Decline(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

        def __repr__(self):
            return "Decline()"

    with Decline():
        with pytest.raises(TypeError, match=r"no implementation found for 'tensormodes.zeros' on types that "
                                            r"implement __torch_function__: \[\] nor in mode Decline\(\)"):
            tm.zeros(1)


def test_push_rejects_a_constructor_not_returning_a_mode():
    with pytest.raises(ValueError, match="must return a TorchFunctionMode"):
        with push_torch_function_mode(lambda inner: object()):
            pass
    assert stack() == []


def test_push_rejects_a_mode_instance_and_points_to_enable():
    with pytest.raises(ValueError, match="enable_torch_function_mode"):
        with push_torch_function_mode(BaseTorchFunctionMode()):
            pass


def test_enable_same_mode_twice_is_a_no_op():
    mode = BaseTorchFunctionMode()
    with enable_torch_function_mode(mode):
        with enable_torch_function_mode(mode):
            assert stack() == [mode]
        assert stack() == [mode]
    assert stack() == []


def test_enable_while_another_mode_is_active_raises_unless_replace_or_ignore():
    first, second = BaseTorchFunctionMode(), BaseTorchFunctionMode()
    with enable_torch_function_mode(first):
        with pytest.raises(ValueError, match="there is already an active mode.*push_torch_function_mode"):
            with enable_torch_function_mode(second):
                pass
        assert stack() == [first]
        with enable_torch_function_mode(second, replace=first):
            assert _get_current_function_mode() is second
        with enable_torch_function_mode(second, ignore_preexisting=True):
            assert stack() == [second]
        with enable_torch_function_mode(None, replace=first):
            assert stack() == []
            assert type(tm.zeros(1)) is tm.Tensor
        assert stack() == [first]


def test_enable_a_tensor_subclass_handles_every_call():
    calls = []

    class MySub(tm.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(resolve_name(func))
            return super().__torch_function__(func, types, args, kwargs)

    a, b = tm.ones(2, 2), tm.ones(2, 2)
    with enable_torch_function_mode(MySub):
        result = tm.mm(a, b)
        created = tm.zeros(2)
    assert type(result) is MySub and type(created) is MySub
    assert calls == ["tensormodes.mm", "tensormodes.zeros"]


def test_enable_a_class_over_an_active_mode_points_to_ignore_preexisting():
    class MySub(tm.Tensor):
        pass

    with BaseTorchFunctionMode():
        with pytest.raises(ValueError, match="ignore_preexisting=True"):
            with enable_torch_function_mode(MySub):
                pass


@pytest.mark.parametrize("bad", [1, "mode", TorchFunctionMode, BaseTorchFunctionMode])
def test_enable_rejects_other_arguments(bad):
    with pytest.raises(ValueError, match="expected to get TorchFunctionMode, Tensor-like class, or None"):
        with enable_torch_function_mode(bad):
            pass


def test_enable_rejects_a_class_without_torch_function():
    class NotTensorLike:
        pass

    with pytest.raises(ValueError, match="must define __torch_function__"):
        with enable_torch_function_mode(NotTensorLike):
            pass


def test_reentrant_idiom_makes_api_calls_reenter_the_mode():
    log = []

    class Reentrant(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(resolve_name(func))
            if func is tm.ones:
                with enable_torch_function_mode(self, replace=self.inner):
                    assert _get_current_function_mode() is self
                    return tm.zeros(*args) + 1
            return func(*args, **(kwargs or {}))

    with Reentrant.push():
        result = tm.ones(2)
    assert result.tolist() == [1.0, 1.0]
    assert log == ["tensormodes.ones", "tensormodes.zeros", "tensormodes.Tensor.add"]


def test_a_handler_calling_the_api_does_not_recurse_into_itself():
    class Doubler(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            return result * 2 if func is tm.ones else result

    with Doubler():
        assert tm.ones(1).item() == 2.0


def test_inner_keyword_is_set_before_init_runs():
    seen = []

    class Mode(TorchFunctionMode):
        def __init__(self, value):
            seen.append(self.inner)
            self.value = value

        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    outer = Mode(1)
    inner = Mode(2, inner=outer)
    assert seen == [None, outer] and inner.value == 2 and inner.inner is outer


# -- what later experience added -------------------------------------------------------------


def test_modes_as_context_managers_stack_and_return_themselves():
    log = []
    with Logger("a", log) as a, Logger("b", log) as b:
        assert stack() == [a, b] and b.inner is a
        tm.randn(2) + 1
    assert [n for n, _ in log] == ["b", "a", "b", "a"]
    assert stack() == [] and b.inner is None


def test_same_instance_entered_twice_is_handled_twice():
    log = []
    mode = Logger("m", log)
    with mode:
        with mode:
            assert stack() == [mode, mode]
            tm.zeros(1)
        assert stack() == [mode]
    assert log == [("m", "tensormodes.zeros"), ("m", "tensormodes.zeros")]
    assert stack() == []


def test_with_self_inside_a_handler_reenters():
    log = []

    class SelfEntering(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(resolve_name(func))
            if func is tm.ones:
                with self:
                    return tm.zeros(*args)
            return func(*args, **(kwargs or {}))

    with SelfEntering():
        tm.ones(1)
    assert log == ["tensormodes.ones", "tensormodes.zeros"]


def test_stack_introspection_bottom_first():
    a, b = BaseTorchFunctionMode(), BaseTorchFunctionMode()
    assert _len_torch_function_stack() == 0 and _get_current_function_mode() is None
    with a, b:
        assert _get_current_function_mode_stack() == [a, b]
        assert _len_torch_function_stack() == 2
        assert _get_current_function_mode() is b
        assert _C._get_torch_function_mode() is b


def test_set_torch_function_mode_installs_the_inner_chain():
    log = []
    outer = Logger("outer", log)
    inner = Logger("inner", log, inner=outer)
    try:
        _C._set_torch_function_mode(inner)
        assert stack() == [outer, inner]
        tm.zeros(1)
    finally:
        _C._set_torch_function_mode(None)
    assert log == [("inner", "tensormodes.zeros"), ("outer", "tensormodes.zeros")]
    assert stack() == []


def test_classmethod_torch_function_on_a_mode_is_rejected():
    class Bad(TorchFunctionMode):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pytest.raises(RuntimeError, match="classmethod is not supported, please make it a plain method"):
        with Bad():
            pass
    with pytest.raises(RuntimeError, match="classmethod is not supported"):
        with Bad.push():
            pass
    assert stack() == []


def test_mode_without_handler_raises_not_implemented_on_first_call():
    class Lazy(TorchFunctionMode):
        pass

    with Lazy():
        with pytest.raises(NotImplementedError, match="Lazy does not override __torch_function__"):
            tm.zeros(1)


def test_disable_subclass_keeps_modes_running_with_empty_types():
    seen = []

    class Sub(tm.Tensor):
        pass

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(types)
            return func(*args, **(kwargs or {}))

    s = tm.ones(1).as_subclass(Sub)
    with Mode():
        with _C.DisableTorchFunctionSubclass():
            result = s + 1
        with _C.DisableTorchFunction():
            tm.zeros(1)
            assert _len_torch_function_stack() == 1, "the stack itself is kept"
            assert not _C._is_torch_function_mode_enabled()
    assert seen == [()]
    assert type(result) is tm.Tensor


def test_handlers_always_receive_kwargs_as_a_dict():
    received = []

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            received.append(kwargs)
            return func(*args, **kwargs)

    x = tm.ones(2, 2)
    with Mode():
        x.sum()
        x.sum(dim=1)
        _ = x.shape
    assert received == [{}, {"dim": 1}, {}]


# -- isolation ---------------------------------------------------------------------------------


def test_new_threads_start_with_no_mode():
    seen = []
    with BaseTorchFunctionMode():
        worker = threading.Thread(target=lambda: seen.append(_len_torch_function_stack()))
        worker.start()
        worker.join()
    assert seen == [0]


def test_captured_modes_can_be_reinstalled_in_a_thread():
    log = []
    seen = []
    with Logger("m", log) as mode:
        captured = capture_torch_function_modes()

    def work():
        with captured:
            seen.append(stack())
            tm.zeros(1)
        seen.append(stack())

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert seen == [[mode], []]
    assert log == [("m", "tensormodes.zeros")]
    assert captured.modes == [mode]
    assert captured.run(lambda: _len_torch_function_stack()) == 1


def test_captured_modes_with_an_executor():
    from concurrent.futures import ThreadPoolExecutor

    with BaseTorchFunctionMode() as mode:
        task = capture_torch_function_modes().wrap(lambda: _get_current_function_mode())
        with ThreadPoolExecutor(max_workers=1) as pool:
            assert pool.submit(task).result() is mode


def test_asyncio_tasks_inherit_and_do_not_leak():
    async def child(mode, results):
        results.append(("child sees", stack() == [mode]))
        with BaseTorchFunctionMode():
            await asyncio.sleep(0)
            results.append(("child pushed", len(stack())))

    async def sibling(mode, results):
        await asyncio.sleep(0)
        results.append(("sibling", stack() == [mode]))

    async def main():
        results = []
        with BaseTorchFunctionMode() as mode:
            await asyncio.gather(child(mode, results), sibling(mode, results))
            results.append(("parent", stack() == [mode]))
        return results

    results = asyncio.run(main())
    assert ("child sees", True) in results and ("child pushed", 2) in results
    assert ("sibling", True) in results and ("parent", True) in results


# -- robustness ---------------------------------------------------------------------------------


def test_stack_restored_when_the_handler_raises():
    class Boom(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise KeyError("from handler")

    with pytest.raises(KeyError, match="from handler"):
        with Boom():
            tm.zeros(1)
    assert stack() == [] and _dispatch.get_state() is None


def test_stack_restored_after_a_recursion_error():
    class Loop(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            with enable_torch_function_mode(self, replace=self.inner):
                return func(*args, **(kwargs or {}))

    with pytest.raises(RecursionError):
        with Loop():
            tm.zeros(1)
    assert stack() == [] and _dispatch.get_state() is None


def test_a_mode_entered_inside_a_block_and_never_exited():
    outer, leaked = BaseTorchFunctionMode(), BaseTorchFunctionMode()
    with pytest.raises(RuntimeError, match="still active"):
        with outer:
            leaked.__enter__()
    assert stack() == []
    leaked.__exit__(None, None, None)  # already discarded: nothing left to undo
    assert stack() == []


def test_abandoned_generator_holding_a_mode():
    def generator():
        with BaseTorchFunctionMode():
            yield 1
            yield 2

    with BaseTorchFunctionMode() as outer:
        gen = generator()
        next(gen)
        assert len(stack()) == 2
        del gen
        gc.collect()
        assert stack() == [outer]
    assert stack() == []


def test_exiting_a_mode_that_is_not_on_top_raises_instead_of_popping_another():
    a, b = BaseTorchFunctionMode(), BaseTorchFunctionMode()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match=r"exiting mode .* while mode .* entered after it is still active"):
        a.__exit__(None, None, None)
    assert stack() == []
    b.__exit__(None, None, None)
    assert stack() == []


def test_exiting_a_mode_never_entered_raises():
    with pytest.raises(RuntimeError, match="not active in this context"):
        BaseTorchFunctionMode().__exit__(None, None, None)


def test_a_handlers_own_exception_propagates_unchanged():
    error = ValueError("mine")

    class Raise(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise error

    with Raise():
        with pytest.raises(ValueError) as info:
            tm.ones(1) + 1
    assert info.value is error


# -- beyond PyTorch: declared functions and explain --------------------------------------------


def test_declared_functions_skip_the_mode_for_everything_else():
    log = []

    class AddsOnly(TorchFunctionMode):
        handled_functions = {tm.add, tm.Tensor.add}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(resolve_name(func))
            return func(*args, **(kwargs or {}))

    with AddsOnly():
        x = tm.ones(2)
        y = x + 1
        tm.add(x, y)
        x.sum()
        tm.zeros(1)
    assert log == ["tensormodes.Tensor.add", "tensormodes.add"]


def test_a_skipped_mode_lets_the_mode_below_handle():
    log = []

    class AddsOnly(Logger):
        handled_functions = {tm.add}

    with Logger("below", log), AddsOnly("top", log):
        tm.add(tm.ones(1), 1)
        tm.sum(tm.ones(1))
    assert log == [("below", "tensormodes.ones"), ("top", "tensormodes.add"), ("below", "tensormodes.add"),
                   ("below", "tensormodes.ones"), ("below", "tensormodes.sum")]


def test_skipped_modes_do_not_see_calls_inside_composites():
    log = []

    class ReluOnly(Logger):
        handled_functions = {tm.relu}

    import tensormodes.nn.functional as F

    x = tm.ones(1)
    with ReluOnly("m", log):
        F.relu(x)
    assert log == [], "F.relu is skipped, so the relu inside runs as if passed through"


def test_explain_reports_stack_overloads_and_handler():
    class Sub(tm.Tensor):
        pass

    class AddsOnly(TorchFunctionMode):
        handled_functions = {tm.mul}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

        def __repr__(self):
            return "AddsOnly()"

    s = tm.ones(1).as_subclass(Sub)
    with Logger("outer", []), AddsOnly():
        text = explain(tm.add, tm.ones(1), s)
    assert text == (
        "tensormodes.add(Tensor, Sub)\n"
        "  modes, top first:\n"
        "    AddsOnly(): skips this function (not in its handled_functions)\n"
        "    Logger('outer'): handles it first (the modes below it stay active during its handler)\n"
        "  overloaded arguments, in the order they are tried: Sub\n"
        "  1. Logger('outer').__torch_function__ is called with the 0 mode(s) below it active; if it returns "
        "NotImplemented:\n"
        "  2. Sub.__torch_function__ is tried\n"
        "  -> if every handler returns NotImplemented: TypeError (no implementation found)")
    assert explain(tm.add, tm.ones(1), 1).endswith("-> the built-in implementation runs (fast path)")


# -- the stack invariant, under random sequences ------------------------------------------------

ACTIONS = st.lists(st.sampled_from(["push", "with", "enable_none", "enable_same", "raise", "call", "capture"]),
                   max_size=6)


def _run_actions(actions):
    """Run nested actions; return True if the stack after each block equals the one before."""
    if not actions:
        tm.zeros(1) + 1
        return True
    action, rest = actions[0], actions[1:]
    before = stack()
    ok = True
    try:
        if action == "push":
            with BaseTorchFunctionMode.push():
                ok = _run_actions(rest)
        elif action == "with":
            with BaseTorchFunctionMode():
                ok = _run_actions(rest)
        elif action == "enable_none":
            with enable_torch_function_mode(None, ignore_preexisting=True):
                ok = _run_actions(rest)
        elif action == "enable_same":
            with enable_torch_function_mode(_get_current_function_mode()):
                ok = _run_actions(rest)
        elif action == "capture":
            with capture_torch_function_modes():
                ok = _run_actions(rest)
        elif action == "call":
            tm.ones(1).sum()
            ok = _run_actions(rest)
        else:
            with BaseTorchFunctionMode():
                raise LookupError("planned")
    except LookupError:
        pass
    return ok and stack() == before


@settings(max_examples=60, deadline=None)
@given(ACTIONS, ACTIONS)
def test_stack_invariant_across_threads(main_actions, thread_actions):
    results = []
    worker = threading.Thread(target=lambda: results.append(_run_actions(thread_actions) and stack() == []))
    with BaseTorchFunctionMode():
        worker.start()
        results.append(_run_actions(main_actions))
        worker.join()
    assert results == [True, True] or results == [True, True][::-1]
    assert stack() == []


@settings(max_examples=40, deadline=None)
@given(st.lists(ACTIONS, min_size=1, max_size=4))
def test_stack_invariant_across_asyncio_tasks(task_actions):
    async def task(actions):
        await asyncio.sleep(0)
        ok = _run_actions(actions)
        await asyncio.sleep(0)
        return ok and stack() == []

    async def main():
        return await asyncio.gather(*(task(a) for a in task_actions))

    assert all(asyncio.run(main()))
    assert stack() == []


# -- cross-reference with PyTorch ---------------------------------------------------------------


def _modern_scenarios(lib, mode_base, name_of):
    log = []

    class L(mode_base):
        def __init__(self, tag):
            self.tag = tag

        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((self.tag, name_of(func), len(args), sorted((kwargs or {}).keys())))
            return func(*args, **(kwargs or {}))

    with L("a"), L("b"):
        x = lib.ones(2, 2)
        y = (x + 1).sum(dim=0)
        x[0] = y
        _ = x.shape
        lib.nn.functional.relu(x)
    mode = L("c")
    with mode:
        with mode:
            lib.zeros(1)
    return log


@pytest.mark.torch
def test_modern_scenarios_log_the_same_calls_as_torch():
    import torch
    from torch.overrides import TorchFunctionMode as TorchMode
    from torch.overrides import resolve_name as torch_resolve_name

    ours = _modern_scenarios(tm, TorchFunctionMode, lambda f: resolve_name(f).replace("tensormodes.", ""))
    theirs = _modern_scenarios(torch, TorchMode, lambda f: torch_resolve_name(f).replace("torch.", ""))
    assert ours == theirs
