"""The dispatch level (issue 24's core): aten op objects, TorchDispatchMode's stack and
handlers, __torch_dispatch__ subclasses (wrappers and is-a), backward under a dispatch mode."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.overrides import TorchFunctionMode
from tensormodes.utils._python_dispatch import (
    BaseTorchDispatchMode,
    TorchDispatchMode,
    _disable_current_modes,
    _get_current_dispatch_mode,
    _get_current_dispatch_mode_stack,
    _pop_mode_temporarily,
    is_in_torch_dispatch_mode,
    is_traceable_wrapper_subclass,
    return_and_correct_aliasing,
    transform_subclass,
)
from tensormodes.utils._pytree import tree_map

aten = tm.ops.aten


class Log(TorchDispatchMode):
    def __init__(self, name="log", record=None):
        super().__init__()
        self.name = name
        self.ops = [] if record is None else record

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func) if self.name == "log" else (self.name, str(func)))
        return func(*args, **(kwargs or {}))


class Infra(Log):
    @classmethod
    def is_infra_mode(cls):
        return True


# -- ops as objects ------------------------------------------------------------------------

def test_overloads_are_objects_with_schemas_names_and_tags():
    add = aten.add.Tensor
    assert str(add._schema) == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert str(aten.add_.Tensor._schema) == \
        "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    assert str(aten.neg.default._schema) == "aten::neg(Tensor self) -> Tensor"
    assert add.name() == "aten::add.Tensor" and aten.neg.default.name() == "aten::neg"
    assert add.overloadpacket is aten.add and add.namespace == "aten"
    assert repr(add) == "<OpOverload(op='aten.add', overload='Tensor')>" and str(add) == "aten.add.Tensor"
    assert tm.Tag.inplace in aten.add_.Tensor.tags and tm.Tag.nondeterministic_seeded in aten.randn.default.tags
    assert aten.transpose.int._schema.arguments[0].alias_info == "a"


def test_calling_an_overload_computes_and_records_for_autograd():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    y = aten.mul.Tensor(x, 3)
    assert y.tolist() == [3.0, 6.0] and type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_overload_argument_errors_are_runtime_errors_naming_the_argument():
    x = tm.ones(2)
    with pytest.raises(AttributeError):
        aten.no_such_op_here  # noqa: B018
    with pytest.raises(RuntimeError, match="missing value for argument 'other'"):
        aten.add.Tensor._schema and tm._dispatch.python_dispatch.bind(aten.add.Tensor, (x,), {})
    with pytest.raises(RuntimeError, match="Unknown keyword argument 'foo' for operator 'aten::add'"):
        tm._dispatch.python_dispatch.bind(aten.add.Tensor, (x, x), {"foo": 1})
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'other'"):
        tm._dispatch.python_dispatch.bind(aten.add.Tensor, (x, "x"), {})


# -- what a mode sees ----------------------------------------------------------------------

def test_a_mode_sees_forward_and_backward_ops_in_pytorchs_order():
    x = tm.ones(2, requires_grad=True)
    with Log() as log:
        (x * 2).sum().backward()
    # PyTorch 2.13 logs exactly these for the same program.
    assert log.ops == ["aten.mul.Tensor", "aten.sum.default", "aten.ones_like.default", "aten.expand.default",
                       "aten.mul.Tensor", "aten.detach.default"]
    assert x.grad.tolist() == [2.0, 2.0]


def test_methods_operators_and_functions_reach_the_same_overload():
    a, b = tm.ones(2), tm.ones(2)
    with Log() as log:
        tm.add(a, b)
        a.add(b)
        a + b
        a.sum(1 - 1)
    assert log.ops == ["aten.add.Tensor"] * 3 + ["aten.sum.dim_IntList"]


def test_handler_arguments_are_in_schema_form():
    seen = []

    class Args(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), [type(a).__name__ if isinstance(a, tm.Tensor) else a for a in args], kwargs))
            return func(*args, **(kwargs or {}))

    x = tm.ones(2, 3)
    with Args():
        x.sum(1)
        tm.add(x, x, alpha=2)
        x.view(3, 2)
    assert seen == [("aten.sum.dim_IntList", ["Tensor", [1]], {}),
                    ("aten.add.Tensor", ["Tensor", "Tensor"], {"alpha": 2}),
                    ("aten.view.default", ["Tensor", [3, 2]], {})]


def test_metadata_queries_and_printing_dispatch_nothing():
    x = tm.ones(2, 3)
    with Log() as log:
        repr(x), x.shape, x.dtype, x.dim(), x.size(0), x.numel(), x.is_floating_point(), x.is_complex()
    assert log.ops == []


def test_handler_runs_with_its_own_mode_popped_and_modes_nest():
    record = []
    inside = []

    class Probe(Log):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            inside.append(_get_current_dispatch_mode())
            return super().__torch_dispatch__(func, types, args, kwargs)

    outer = Log("outer", record)
    with outer, Probe("inner", record) as inner:
        tm.neg(tm.ones(1))
        assert _get_current_dispatch_mode_stack() == [outer, inner]
        assert is_in_torch_dispatch_mode()
    # inner sees each op first, then hands it to outer
    assert record == [("inner", "aten.ones.default"), ("outer", "aten.ones.default"),
                      ("inner", "aten.neg.default"), ("outer", "aten.neg.default")]
    assert inside == [outer, outer]
    assert _get_current_dispatch_mode_stack() == [] and not is_in_torch_dispatch_mode()


def test_infra_modes_run_after_user_modes_whatever_the_push_order():
    record = []
    with Log("user", record), Infra("infra", record):
        tm.neg(tm.zeros(()))
        stack = _get_current_dispatch_mode_stack()
        assert is_in_torch_dispatch_mode(include_infra_modes=False)
    assert [m.name for m in stack] == ["infra", "user"]
    assert record[:2] == [("user", "aten.zeros.default"), ("infra", "aten.zeros.default")]


def test_reentering_the_mode_in_its_handler_sees_the_inner_calls():
    record = []

    class Reenter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            record.append(str(func))
            if func is aten.neg.default:
                with self:
                    return aten.mul.Tensor(args[0], -1)
            return func(*args, **(kwargs or {}))

    x = tm.ones(2)
    with Reenter():
        y = tm.neg(x)
    assert record == ["aten.neg.default", "aten.mul.Tensor"] and y.tolist() == [-1.0, -1.0]


def test_torch_function_modes_run_first_and_disable_torch_function_keeps_dispatch_modes():
    record = []

    class Public(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            record.append(("public", func.__name__))
            return func(*args, **(kwargs or {}))

    x = tm.ones(2)
    with Log("aten", record), Public():
        tm.add(x, x)
        with tm._C.DisableTorchFunction():
            tm.mul(x, x)
    assert record == [("public", "add"), ("aten", "aten.add.Tensor"), ("aten", "aten.mul.Tensor")]


def test_mode_without_handler_and_declining_mode_raise():
    class Empty(TorchDispatchMode):
        pass

    with pytest.raises(NotImplementedError, match="Empty does not override __torch_dispatch__"), Empty():
        tm.ones(1)

    class Declines(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError, match="Multiple dispatch failed for 'aten.ones.default'"), Declines():
        tm.ones(1)
    assert _get_current_dispatch_mode_stack() == []


def test_stack_survives_exceptions_threads_tasks_and_low_level_pops():
    mode = BaseTorchDispatchMode()
    with pytest.raises(ValueError), mode:
        raise ValueError("boom")
    assert _get_current_dispatch_mode_stack() == []
    seen = []
    with mode:
        thread = threading.Thread(target=lambda: seen.append(_get_current_dispatch_mode_stack()))
        thread.start()
        thread.join()

        async def task():
            with Log():
                return len(_get_current_dispatch_mode_stack())

        assert asyncio.run(task()) == 2
        assert _get_current_dispatch_mode_stack() == [mode]
        with _pop_mode_temporarily() as popped:
            assert popped is mode and _get_current_dispatch_mode() is None
        with _disable_current_modes() as modes:
            assert modes == [mode] and not is_in_torch_dispatch_mode()
        assert _get_current_dispatch_mode() is mode
    assert seen == [[]]


def test_pass_through_mode_gives_bit_identical_training_step():
    def step(mode):
        tm.manual_seed(0)
        model = tm.nn.Sequential(tm.nn.Linear(4, 8), tm.nn.ReLU(), tm.nn.Linear(8, 3))
        x, y = tm.randn(5, 4), tm.tensor([0, 1, 2, 0, 1])
        with mode:
            loss = tm.nn.functional.cross_entropy(model(x), y)
            loss.backward()
        return loss.item(), [p.grad.numpy().copy() for p in model.parameters()]

    loss, grads = step(BaseTorchDispatchMode())
    eager_loss, eager_grads = step(tm._C.DisableTorchFunctionSubclass())
    assert loss == eager_loss
    for g, e in zip(grads, eager_grads):
        np.testing.assert_array_equal(g, e)


# -- subclasses ------------------------------------------------------------------------------

class LoggingTensor(tm.Tensor):
    """A wrapper ("has-a") subclass in PyTorch's style."""

    __torch_function__ = tm._C._disabled_torch_function_impl
    log: list = []

    @staticmethod
    def __new__(cls, elem):
        r = tm.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                             device=elem.device, requires_grad=elem.requires_grad)
        r.elem = elem
        return r

    def __repr__(self):
        return f"LoggingTensor({self.elem!r})"

    def __tensor_flatten__(self):
        return ["elem"], None

    @staticmethod
    def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
        return LoggingTensor(inner["elem"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.log.append((str(func), types))

        def unwrap(e):
            return e.elem if isinstance(e, LoggingTensor) else e

        def wrap(e):
            return LoggingTensor(e) if isinstance(e, tm.Tensor) else e

        return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))


def test_wrapper_subclass_holds_metadata_and_gets_gradients_of_its_type():
    LoggingTensor.log = []
    x = LoggingTensor(tm.ones(2, 3).requires_grad_())
    assert x.shape == (2, 3) and x.dtype == tm.float32 and x.requires_grad and x.device == tm.device("cpu")
    assert repr(x).startswith("LoggingTensor(tensor(")
    y = (x * 2).sum()
    assert type(y) is LoggingTensor and y.elem.item() == 12.0
    y.backward()
    assert type(x.grad) is LoggingTensor and x.grad.elem.tolist() == [[2.0] * 3] * 2
    assert [name for name, _ in LoggingTensor.log] == [
        "aten.mul.Tensor", "aten.sum.default", "aten.ones_like.default", "aten.expand.default", "aten.mul.Tensor",
        "aten.detach.default"]
    assert LoggingTensor.log[0][1] == (LoggingTensor,)


def test_wrapper_aliasing_is_correct_by_default():
    x = LoggingTensor(tm.zeros(2, 3))
    v = x.view(3, 2)
    assert type(v) is LoggingTensor and v._base is x and v._version == x._version
    result = x.add_(1)
    assert result is x and x.elem.tolist() == [[1.0] * 3] * 2
    assert v._version == x._version == 1


def test_all_handlers_declining_names_the_op_also_through_operators():
    class Declines(tm.Tensor):
        __torch_function__ = tm._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            return tm.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    d = Declines(tm.ones(2))
    with pytest.raises(TypeError, match=r"Multiple dispatch failed for 'aten.mul.Tensor'; all __torch_dispatch__ "
                                        r"handlers returned NotImplemented"):
        d * d


def test_modes_run_before_subclasses_and_a_declining_mode_falls_to_them():
    order = []

    class Declines(TorchDispatchMode):
        """Declines ops on subclasses it does not know (as FakeTensorMode does)."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            order.append(("mode", types))
            return NotImplemented if types else func(*args, **(kwargs or {}))

    LoggingTensor.log = []
    x = LoggingTensor(tm.ones(2))
    with Declines():
        y = x + 1
    assert order == [("mode", (LoggingTensor,)), ("mode", ())] and type(y) is LoggingTensor
    assert LoggingTensor.log == [("aten.add.Tensor", (LoggingTensor,))]


def test_is_a_subclass_with_make_subclass_and_the_default_handler():
    calls = []

    class Sub(tm.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            calls.append(str(func))
            out = super().__torch_dispatch__(func, types, args, kwargs)
            return tree_map(lambda t: tm.Tensor._make_subclass(cls, t) if type(t) is tm.Tensor else t, out)

        __torch_function__ = tm._C._disabled_torch_function_impl

    s = tm.Tensor._make_subclass(Sub, tm.tensor([1.0, 2.0]))
    r = s * 3
    assert type(r) is Sub and calls == ["aten.mul.Tensor"]
    assert r.as_subclass(tm.Tensor).tolist() == [3.0, 6.0]  # (PyTorch's tolist refuses the subclass)


def test_traceable_wrapper_helpers():
    x = LoggingTensor(tm.ones(2))
    assert is_traceable_wrapper_subclass(x) and not is_traceable_wrapper_subclass(tm.ones(2))
    doubled = transform_subclass(x, lambda name, t: t * 2)
    assert type(doubled) is LoggingTensor and doubled.elem.tolist() == [2.0, 2.0]
    fresh = LoggingTensor(tm.ones(2))
    assert return_and_correct_aliasing(aten.add_.Tensor, (x, fresh), {}, fresh) is x


def test_no_dispatch_runs_kernels_directly():
    with Log() as log, tm._C._DisableTorchDispatch():
        tm.ones(1) + 1
    assert log.ops == []


@pytest.mark.torch
def test_forward_and_backward_sequences_match_pytorch():
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    class TorchLog(TorchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    def program(lib, mode):
        x = lib.ones(3, 2, requires_grad=True)
        with mode:
            y = (x * 2 + 1).sum(0)
            z = (y * y - y).sum()
            z.backward()
        return mode.ops

    assert program(tm, Log()) == program(torch, TorchLog())


@pytest.mark.parametrize(("shape", "with_bias", "expected"), [
    ((4, 2), True, ["aten.t.default", "aten.addmm.default"]),
    ((4, 2), False, ["aten.t.default", "aten.mm.default"]),
    ((5, 4, 2), True, ["aten.view.default", "aten.t.default", "aten.addmm.default", "aten.view.default"]),
])
def test_linear_reaches_the_dispatch_level_as_pytorchs_composite(shape, with_bias, expected):
    weight, bias = tm.ones(3, 2), tm.ones(3)
    x = tm.ones(*shape)
    with Log() as log:
        result = tm.nn.functional.linear(x, weight, bias if with_bias else None)
    assert log.ops == expected
    eager = tm.nn.functional.linear(x, weight, bias if with_bias else None)
    np.testing.assert_array_equal(result.numpy(), eager.numpy())


def test_two_dimensional_matmul_is_mm():
    with Log() as log:
        tm.ones(2, 3) @ tm.ones(3, 2)
    assert log.ops == ["aten.ones.default", "aten.ones.default", "aten.mm.default"]


def test_stack_guarantees_out_of_order_exit_and_abandoned_generators():
    first, second = BaseTorchDispatchMode(), BaseTorchDispatchMode()
    first.__enter__()
    second.__enter__()
    with pytest.raises(RuntimeError, match="still active"):
        first.__exit__(None, None, None)
    assert _get_current_dispatch_mode_stack() == []  # restored to before `first`

    def generator():
        with BaseTorchDispatchMode():
            yield 1
            yield 2

    gen = generator()
    next(gen)
    assert len(_get_current_dispatch_mode_stack()) == 1
    with Log() as log:
        del gen  # abandoned inside another mode's block: its exit must not pop `log`
        tm.ones(1)
        assert _get_current_dispatch_mode() is log
    assert _get_current_dispatch_mode_stack() == []


def test_handler_and_kernel_errors_propagate_unchanged():
    class Boom(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise KeyError("from the handler")

    with pytest.raises(KeyError, match="from the handler"), Boom():
        tm.ones(1)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"), Log():
        tm.ones(2, 3).mm(tm.ones(2, 3))
    assert _get_current_dispatch_mode_stack() == []


def test_wrapper_without_disabling_torch_function_still_dispatches():
    class Plainly(LoggingTensor):
        __torch_function__ = classmethod(tm.Tensor.__torch_function__.__func__)  # the default's

    LoggingTensor.log = []
    x = Plainly(tm.ones(2))
    y = x * 3  # the default __torch_function__ converts the handler's result to the class
    assert type(y) is Plainly and y.shape == (2,)
    assert [name for name, _ in LoggingTensor.log] == ["aten.mul.Tensor"]


def _flat(result) -> list:
    if isinstance(result, (tuple, list)):
        return [item for part in result for item in _flat(part)]
    return [result]


def test_every_sampled_op_gives_eager_results_under_a_pass_through_dispatch_mode():
    """The dispatch level's arguments reach the kernel unchanged: for every op's samples, a
    pass-through mode gives eager's results bit for bit (decompositions included)."""
    from tensormodes._ops import OPS
    from tests.op_samples import callable_for, materialize, tm_maker

    wrong = []
    for name, opdef in sorted(OPS.items()):
        if opdef.random:
            continue
        function = callable_for(opdef, tm)
        for number, sample in enumerate(opdef.samples):
            eager_args, eager_kwargs = materialize(sample, tm_maker)
            try:
                eager = _flat(function(*eager_args, **eager_kwargs))
            except Exception:  # noqa: BLE001 - a sample the eager op refuses is not compared
                continue
            args, kwargs = materialize(sample, tm_maker)
            try:
                with BaseTorchDispatchMode():
                    seen = _flat(function(*args, **kwargs))
            except Exception as error:  # noqa: BLE001 - reported below
                wrong.append((name, number, repr(error)[:120]))
                continue
            for a, b in zip(eager, seen, strict=False):
                if isinstance(a, tm.Tensor):
                    same = (isinstance(b, tm.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                            and np.array_equal(a.numpy(), b.numpy(), equal_nan=True))
                else:
                    same = a == b or (a != a and b != b)
                if not same or len(eager) != len(seen):
                    wrong.append((name, number, "result"))
                    break
    assert wrong == []


def test_generated_schema_forms_and_lanes_equal_the_interpreted_form():
    # What handlers see is computed by straight-line code generated per overload
    # (python_dispatch._form_code) and, for most ops, by a generated lane per op that embeds it
    # (dispatch_level._lane); their definition is below_autograd with the form table read one
    # argument at a time (_schema_form_interpreted). Defaults left out, int lists, floats, a loss's
    # reduction enum, keyword-only arguments, a given device, several out= tensors, views, lists.
    from tensormodes._api import codegen, dispatch_level
    from tensormodes._dispatch import aten as aten_table
    from tensormodes._dispatch import python_dispatch

    def same(a, b):
        if type(a) is not type(b):
            return False
        if isinstance(a, (tuple, list)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, tm.Tensor):
            return a.shape == b.shape and a.dtype == b.dtype
        return a == b

    x, i = tm.randn(2, 3), tm.tensor([0, 2])
    w = tm.randn(4, 3, requires_grad=True)

    def program():
        gamma = tm.ones(3, requires_grad=True)
        made = tm.ones_like(x, requires_grad=True)
        normed = tm.nn.functional.layer_norm(x * made, (3,), gamma)  # saves=: mean and rstd
        loss = tm.nn.functional.cross_entropy(normed, tm.tensor([0, 2]))  # composites
        (loss * 2 + normed.reshape(6).sum() / 3).backward()  # formulas' Scalar overloads
        results.append((made.requires_grad, normed.requires_grad, loss.item(), gamma.grad.tolist(),
                        made.grad.tolist()))
        tm.add(x, x, alpha=2)
        x + 1
        x.sum(1, keepdim=True)
        x.sum()
        tm.nn.functional.mse_loss(x, x, reduction="sum")
        tm.nn.functional.leaky_relu(x, 1)
        tm.zeros(2, 3, device="cpu")
        tm.sort(x, 1, out=(tm.empty(2, 3), tm.empty(2, 3, dtype=tm.int64)))
        x.view(3, 2)
        x.expand(2, 2, 3)
        tm.cat([x, x], 1)
        tm.nn.functional.max_pool2d(tm.randn(1, 1, 4, 4), 2)
        x.index_select(1, i)
        tm.clamp(x, min=0)
        x.transpose(0, 1)
        tm.nn.functional.linear(x, w).relu().sum().backward()

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls.append((str(func), args, kwargs))
            return func(*args, **(kwargs or {}))

    results = []

    def run():
        with Seen() as seen:
            program()
        return seen.calls

    entries = [names["_ENTRY"] for _, names in list(codegen._IMPLS.values()) if "_ENTRY" in names]
    overloads = [o for packet in list(aten_table._PACKETS.values()) for o in packet._overloads.values()]
    run()
    generated = run()  # the lanes are made at an op's first call under a mode
    lanes = (dispatch_level.by_position, dispatch_level._without_lane)
    assert any(entry[4] not in lanes for entry in entries)
    generic, interpreted = dispatch_level.schema_form, python_dispatch._schema_form_interpreted
    try:
        dispatch_level.schema_form = interpreted
        for entry in entries:
            entry[4] = dispatch_level._without_lane
        for overload in overloads:
            overload.__dict__.pop("_form_code", None)
        reference = run()
    finally:
        dispatch_level.schema_form = generic
        for entry in [names["_ENTRY"] for _, names in list(codegen._IMPLS.values()) if "_ENTRY" in names]:
            entry[4] = dispatch_level.by_position
    assert len(generated) == len(reference) > 30
    assert results[1] == results[2]
    for got, expected in zip(generated, reference):
        assert got[0] == expected[0] and same(got[1:], expected[1:]), (got, expected)


# -- grad mode as a handler sees it ---------------------------------------------------------------

def _grad_modes_seen(lib, dispatch_mode_class):
    """(op, is_grad_enabled()) for each op a handler sees in a small program of ``lib``."""
    seen = []

    class GradLog(dispatch_mode_class):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), lib.is_grad_enabled()))
            if str(func) == "aten.div.Tensor":  # inside a handler: what enable_grad / no_grad report
                with lib.enable_grad():
                    seen.append(("enable_grad", lib.is_grad_enabled()))
                with lib.no_grad():
                    seen.append(("no_grad", lib.is_grad_enabled()))
            return func(*args, **(kwargs or {}))

    x = lib.ones(2, requires_grad=True)
    with GradLog():
        (x * 2).sum().backward()
        lib.autograd.grad((x * x).sum(), x, create_graph=True)
        with lib.no_grad():
            x - 1
        x / 3
    return seen


# PyTorch 2.13's: grad mode inside a handler is what it is outside (the handler runs below autograd,
# not under no_grad): on for the forward and the backward's seed, off for the formulas unless
# create_graph. (enable_grad inside a handler records here, not in PyTorch: the inner-autograd example uses it.)
GRAD_MODES_SEEN = [
    ("aten.mul.Tensor", True), ("aten.sum.default", True), ("aten.ones_like.default", True),
    ("aten.expand.default", False), ("aten.mul.Tensor", False), ("aten.detach.default", False),
    ("aten.mul.Tensor", True), ("aten.sum.default", True), ("aten.ones_like.default", True),
    ("aten.expand.default", True), ("aten.mul.Tensor", True), ("aten.mul.Tensor", True), ("aten.add.Tensor", True),
    ("aten.sub.Tensor", False), ("aten.div.Tensor", True), ("enable_grad", True), ("no_grad", False)]


def test_handlers_see_grad_mode_as_it_is_outside():
    assert _grad_modes_seen(tm, TorchDispatchMode) == GRAD_MODES_SEEN
    assert tm.is_grad_enabled()


@pytest.mark.torch
def test_handlers_see_grad_mode_as_pytorch():
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    assert _grad_modes_seen(torch, TorchMode) == GRAD_MODES_SEEN


# -- a mode declaring the ops it handles (beyond PyTorch) ---------------------------------------------

def _mlp_program():
    x = tm.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
    w = tm.tensor(np.ones((2, 4), np.float32) / 4, requires_grad=True)
    b = tm.zeros(2, requires_grad=True)
    loss = tm.nn.functional.cross_entropy(tm.nn.functional.linear(x, w, b).relu(), tm.tensor([0, 1, 1]))
    loss.backward()
    return loss, w.grad, b.grad


class Products(Log):
    handled_ops = frozenset({aten.mm, aten.addmm.default})  # an overload stands for its packet


def test_a_mode_declaring_its_ops_sees_only_those_and_the_same_calls_of_them():
    every = Log()
    with every:
        expected = _mlp_program()
    products = Products()
    with products:
        got = _mlp_program()
    assert products.ops == [op for op in every.ops if op.split(".")[1] in ("mm", "addmm")] == [
        "aten.addmm.default", "aten.mm.default"]
    for a, b in zip(got, expected):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert every.ops.count("aten.t.default") == 4  # what the declaring mode was spared: linear's t, backward's


def test_declared_ops_skip_only_the_mode_declaring_them():
    record = []
    with Log("all", record), Products("products", record):
        tm.ones(2, 2).mm(tm.ones(2, 2)).relu()
    # the top mode sees only mm; the mode below it every op, mm through the top mode's call
    assert record == [("all", "aten.ones.default"), ("all", "aten.ones.default"), ("products", "aten.mm.default"),
                      ("all", "aten.mm.default"), ("all", "aten.relu.default")]
    record.clear()
    with Products("products", record), Log("all", record):
        tm.ones(2, 2).mm(tm.ones(2, 2)).relu()
    assert record == [("all", "aten.ones.default"), ("all", "aten.ones.default"), ("all", "aten.mm.default"),
                      ("products", "aten.mm.default"), ("all", "aten.relu.default")]


def test_declared_ops_reach_a_composites_inner_calls_and_direct_overload_calls():
    products = Products()
    x = tm.ones(2, 3)
    with products:
        tm.nn.functional.linear(x, tm.ones(4, 3), tm.ones(4))  # a composite: its addmm is seen
        aten.mm.default(x, tm.ones(3, 2))
        aten.add.Tensor(x, x)
        x @ tm.ones(3, 2)  # matmul's mm
    assert products.ops == ["aten.addmm.default", "aten.mm.default", "aten.mm.default"]


def test_flop_counter_sees_only_what_it_counts_unless_told():
    from tensormodes.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        tm.ones(2, 3).mm(tm.ones(3, 2)).relu()
    assert counter.get_total_flops() == 24
    with pytest.raises(RuntimeError, match=r"FlopCounterMode\(track_uncounted=True\)"):
        counter.not_counted  # noqa: B018
    with FlopCounterMode(display=False, track_uncounted=True) as counter:
        tm.ones(2, 3).mm(tm.ones(3, 2)).relu()
    assert counter.not_counted == {"aten.ones": 2, "aten.relu": 1}
