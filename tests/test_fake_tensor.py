"""FakeTensorMode: programs run on metadata alone, as PyTorch's fake tensors."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import tensormodes as tm
import tensormodes.nn as nn
import tensormodes.nn.functional as F
from tensormodes._meta_array import DataDependentOutputError
from tensormodes._ops import OPS
from tensormodes._subclasses import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorMode,
    UnsupportedFakeTensorException,
    missing_ops,
)
from tensormodes._subclasses.fake_tensor import DispatchCacheInfo
from tensormodes.utils._python_dispatch import (
    TorchDispatchMode,
    _get_current_dispatch_mode_stack,
    is_in_torch_dispatch_mode,
)

from .op_samples import callable_for, materialize, tm_maker

aten = tm.ops.aten
ROOT = Path(__file__).resolve().parents[1]


# -- fake tensors --------------------------------------------------------------------------

def test_factories_make_fake_tensors_that_report_cpu():
    with FakeTensorMode() as mode:
        x = tm.ones(2, 3)
        made = [tm.randn(4, 5).t(), tm.arange(5), tm.full((2,), 7), tm.empty(3, dtype=tm.float64), tm.zeros(2, 2)]
    assert type(x) is FakeTensor and type(x).__name__ == "FakeTensor" and x.fake_mode is mode
    assert (str(x.device), x.is_meta, x.is_cpu, x.fake_device) == ("cpu", False, True, tm.device("cpu"))
    assert repr(x) == "FakeTensor(..., size=(2, 3))"
    assert [repr(t) for t in made] == [
        "FakeTensor(..., size=(5, 4))", "FakeTensor(..., size=(5,), dtype=tensormodes.int64)",
        "FakeTensor(..., size=(2,), dtype=tensormodes.int64)", "FakeTensor(..., size=(3,), dtype=tensormodes.float64)",
        "FakeTensor(..., size=(2, 2))"]
    assert made[0].stride() == (1, 5) and x.stride() == (3, 1)


def test_a_trillion_elements_allocate_nothing():
    tracemalloc.start()
    try:
        with FakeTensorMode():
            x = tm.empty(10**6, 10**6)
            y = (x @ x.t() + 1).softmax(-1).sum(0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert repr(y) == "FakeTensor(..., size=(1000000,))"
    assert x.numel() == 10**12 and peak < 2**20


def test_ops_propagate_shapes_dtypes_and_strides():
    with FakeTensorMode():
        x = tm.ones(4, 6, dtype=tm.float64)
        i = tm.ones(4, 6, dtype=tm.int32)
        cases = [(x + i, (4, 6), tm.float64, (6, 1)), (i / 2, (4, 6), tm.float32, (6, 1)),
                 (x.t() * 2, (6, 4), tm.float64, (1, 6)), (x[:, 1::2], (4, 3), tm.float64, (6, 2)),
                 (x.sum(1, keepdim=True), (4, 1), tm.float64, (1, 1)), (i.max(0).indices, (6,), tm.int64, (1,)),
                 (tm.cat([x, x]), (8, 6), tm.float64, (6, 1)), (x.reshape(2, 12), (2, 12), tm.float64, (12, 1))]
    for t, shape, dtype, strides in cases:
        assert type(t) is FakeTensor and (t.shape, t.dtype, t.stride()) == (shape, dtype, strides)


def _sample_cases():
    cases = []
    for name, opdef in sorted(OPS.items()):
        if opdef.samples and (opdef.tensor_params or opdef.factory):
            cases.append((name, opdef, opdef.samples[0]))
    return cases


def _metadata(value):
    if isinstance(value, tm.Tensor):
        strides = tuple(s for size, s in zip(value.shape, value.stride()) if size != 1)
        return ("tensor", tuple(value.shape), value.dtype, strides if value.numel() > 1 else ())
    if isinstance(value, (tuple, list)):
        return tuple(_metadata(v) for v in value)
    return value


def test_the_op_tables_first_samples_under_the_mode_match_real_runs():
    """Each op's first sample runs for real and under FakeTensorMode (its tensors converted with
    ``from_tensor``): same shapes, dtypes and strides — or an exception saying the op needs data."""
    checked = needs_data = 0
    for name, opdef, sample in _sample_cases():
        function = callable_for(opdef, tm)
        args, kwargs = materialize(sample, tm_maker)
        try:
            real = function(*args, **kwargs)
        except Exception:  # noqa: BLE001 - an op refusing its first sample is test_meta_rules' business
            continue
        if real is None:  # ``__setitem__``: a statement's result (the dispatch level returns the tensor written)
            continue
        mode = FakeTensorMode()
        fake_args, fake_kwargs = _fake(mode, args), {k: _fake(mode, [v])[0] for k, v in kwargs.items()}
        with mode:
            try:
                fake = function(*fake_args, **fake_kwargs)
            except (DataDependentOutputException, DynamicOutputShapeException, DataDependentOutputError):
                needs_data += 1
                continue
        assert _metadata(fake) == _metadata(real), name
        for t in (fake if isinstance(fake, (tuple, list)) else (fake,)):
            assert not isinstance(t, tm.Tensor) or type(t) is FakeTensor, name
        checked += 1
    assert checked > 400 and needs_data < 40, (checked, needs_data)


def _fake(mode, values):
    return [mode.from_tensor(v) if isinstance(v, tm.Tensor) else
            type(v)(_fake(mode, v)) if isinstance(v, (list, tuple)) else v for v in values]


# -- data-dependent ops ----------------------------------------------------------------------

DATA_DEPENDENT = [
    ("x.sum().item()", DataDependentOutputException, "aten._local_scalar_dense.default"),
    ("x.tolist()", DataDependentOutputException, "aten._local_scalar_dense.default"),
    ("bool(x.sum())", DataDependentOutputException, "aten._local_scalar_dense.default"),
    ("float(x.sum())", DataDependentOutputException, "aten._local_scalar_dense.default"),
    ("L.equal(x, x)", DataDependentOutputException, "aten.equal.default"),
    ("L.allclose(x, x)", DataDependentOutputException, "aten.allclose.default"),
    ("x.nonzero()", DynamicOutputShapeException, "aten.nonzero.default"),
    ("x[x > 0]", DynamicOutputShapeException, "aten.nonzero.default"),
    ("L.masked_select(x, x > 0)", DynamicOutputShapeException, "aten.masked_select.default"),
    ("L.unique(x)", DynamicOutputShapeException, "aten._unique2.default"),
    ("L.unique_consecutive(x)", DynamicOutputShapeException, "aten.unique_consecutive.default"),
    ("L.where(x > 0)", DynamicOutputShapeException, "aten.nonzero.default"),
    ("L.argwhere(x)", DynamicOutputShapeException, "aten.nonzero.default"),
    ("L.repeat_interleave(L.tensor([1, 2]))", DynamicOutputShapeException, "aten.repeat_interleave.Tensor"),
    ("L.bincount(L.ones(3, dtype=L.int64))", DynamicOutputShapeException, "aten.bincount.default"),
    ("int(x[0, 0])", DataDependentOutputException, "aten._local_scalar_dense.default"),
]


@pytest.mark.parametrize("expression, exception, message", DATA_DEPENDENT)
def test_data_dependent_ops_raise_naming_the_op(expression, exception, message):
    with FakeTensorMode() as mode:
        x = tm.ones(2, 3)
        with pytest.raises(exception) as caught:
            eval(expression, {"L": tm, "x": x})
        assert _get_current_dispatch_mode_stack() == [mode]  # the stack is intact after the exception
    assert str(caught.value) == message and isinstance(caught.value, RuntimeError)
    assert str(caught.value.func) == message
    assert not is_in_torch_dispatch_mode()


@pytest.mark.torch
@pytest.mark.parametrize("expression, exception, message", DATA_DEPENDENT)
def test_data_dependent_exceptions_are_pytorchs(expression, exception, message):
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode

    with TorchFakeTensorMode():
        x = torch.ones(2, 3)
        with pytest.raises(RuntimeError) as caught:
            eval(expression, {"L": torch, "x": x})
    assert (type(caught.value).__name__, str(caught.value)) == (exception.__name__, message)


def test_tags_on_the_overloads_say_which_ops_need_data():
    assert tm.Tag.data_dependent_output in aten.equal.default.tags
    assert tm.Tag.dynamic_output_shape in aten.nonzero.default.tags
    assert tm.Tag.dynamic_output_shape in aten.index.Tensor.tags


def test_integer_indexing_and_python_data_need_no_data():
    with FakeTensorMode():
        x = tm.ones(4, 5)
        assert repr(x[tm.tensor([0, 2])]) == "FakeTensor(..., size=(2, 5))"
        step = tm.tensor(0.0)  # made from Python data: keeps its value (PyTorch's constants)
        step += 1
        assert step.item() == 1.0 and type(step) is FakeTensor
        assert (step * 3).item() == 3.0
        step.add_(x.sum())  # written from a tensor without a value: the value is gone
        with pytest.raises(DataDependentOutputException):
            step.item()


# -- real tensors ---------------------------------------------------------------------------

def test_from_tensor_converts_and_memoizes():
    mode = FakeTensorMode()
    real = tm.ones(2, 3).t()
    weight = nn.Parameter(tm.ones(4, 2))
    weight.grad = tm.ones(4, 2)
    fake, fake_weight = mode.from_tensor(real), mode.from_tensor(weight)
    assert mode.from_tensor(real) is fake and mode.from_tensor(fake) is fake
    assert (type(fake), fake.shape, fake.stride()) == (FakeTensor, (3, 2), (1, 3))
    assert isinstance(fake_weight, nn.Parameter) and type(fake_weight).__name__ == "FakeTensor"
    assert fake_weight.requires_grad and fake_weight.is_leaf
    assert repr(fake_weight) == "Parameter(FakeTensor(..., size=(4, 2), requires_grad=True))"
    assert repr(fake_weight.grad) == "FakeTensor(..., size=(4, 2))"
    with pytest.raises(AssertionError, match="Mixing fake modes NYI"):
        FakeTensorMode().from_tensor(fake)


def _history_of_converted(library, mode_class):
    """What ``from_tensor`` keeps of a non-leaf and of views (the same program for both libraries)."""
    mode = mode_class()
    leaf = library.ones(3, 4, requires_grad=True)
    nonleaf = leaf * 2
    fake = mode.from_tensor(nonleaf)
    view = mode.from_tensor(nonleaf[1])
    base = library.zeros(4, 6)
    sliced = mode.from_tensor(base[1:3, ::2])
    fake_base = mode.from_tensor(base)
    leaf_view = mode.from_tensor(leaf[:2])
    with pytest.raises(RuntimeError) as caught:
        fake.sum().backward()
    with mode:
        (grad,) = library.autograd.grad((fake * 3).sum(), fake)
    sliced.add_(1)
    return {
        "nonleaf": (fake.requires_grad, fake.is_leaf, type(fake.grad_fn).__name__, fake.grad_fn.name(), fake._base,
                    repr(fake), type(fake.grad_fn.next_functions[0][0]).__name__),
        "backward": str(caught.value), "grad": (type(grad).__name__, tuple(grad.shape)),
        "view of nonleaf": (view.requires_grad, view.is_leaf, type(view.grad_fn).__name__, view._base is fake,
                            view.grad_fn.next_functions[0][0] is fake.grad_fn, view.storage_offset()),
        "view": (sliced._base is fake_base, sliced.stride(), sliced.storage_offset(), sliced.is_leaf,
                 sliced.grad_fn, mode.from_tensor(base[1:3, ::2]) is not sliced, fake_base._version),
        "view of leaf": (leaf_view.requires_grad, leaf_view.is_leaf, type(leaf_view.grad_fn).__name__,
                         leaf_view._base is mode.from_tensor(leaf)),
    }


EXPECTED_HISTORY = {
    "nonleaf": (True, False, "Error", "torch::autograd::Error", None, "FakeTensor(..., size=(3, 4), grad_fn=<Error>)",
                "AccumulateGrad"),
    "backward": "Internal error: Tried to backward() through example input", "grad": ("FakeTensor", (3, 4)),
    "view of nonleaf": (True, False, "AsStridedBackward0", True, True, 4),
    "view": (True, (6, 2), 6, True, None, True, 1),
    "view of leaf": (True, False, "AsStridedBackward0", True),
}


def test_from_tensor_keeps_history_and_views():
    """A non-leaf converts to a fake tensor whose history refuses backward (PyTorch's ``Error``
    node) but lets ``autograd.grad`` stop at it; a view converts to the same view of its fake
    base, sharing its storage and version counter, with ``AsStridedBackward0`` when it has history."""
    assert _history_of_converted(tm, FakeTensorMode) == EXPECTED_HISTORY
    mode = FakeTensorMode()
    base = tm.zeros(4, 6)
    view = base[1:3]
    fake_view = mode.from_tensor(view)
    assert mode.from_tensor(view) is fake_view and mode.from_tensor(base) is fake_view._base
    assert fake_view._data.base is mode.from_tensor(base)._data


def test_from_tensor_history_matches_pytorch():
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode

    assert _history_of_converted(torch, TorchFakeTensorMode) == EXPECTED_HISTORY


def test_a_real_tensor_meeting_a_fake_one_raises_naming_the_option():
    mode = FakeTensorMode()
    real = tm.ones(2, 3)
    fake = mode.from_tensor(tm.zeros(2, 3))
    with mode:
        with pytest.raises(AssertionError) as caught:
            fake + real
    assert str(caught.value) == (
        "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with "
        "'allow_non_fake_inputs'. Found in aten.add.Tensor(FakeTensor(..., size=(2, 3)), tensor([...], size=(2, 3)))")
    with FakeTensorMode(allow_non_fake_inputs=True):
        result = tm.ones(2, 3) + real
    assert repr(result) == "FakeTensor(..., size=(2, 3))"


def test_a_fake_tensor_used_outside_its_mode_stays_fake():
    mode = FakeTensorMode()
    fake = mode.from_tensor(tm.ones(2, 3))
    out = fake @ fake.t()
    assert type(out) is FakeTensor and out.fake_mode is mode and repr(out) == "FakeTensor(..., size=(2, 2))"
    assert _get_current_dispatch_mode_stack() == []
    with pytest.raises(AssertionError, match="allow_non_fake_inputs"):
        fake + tm.ones(2, 3)
    with pytest.raises(RuntimeError, match="not supported for tensor subclasses"):
        fake.numpy()


def test_unsupported_arguments():
    with pytest.raises(TypeError, match="expected a ShapeEnv"):  # a ShapeEnv gives unbacked symbols (test_symbolic)
        FakeTensorMode(shape_env=object())

    class Wrapper(tm.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return tm.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(UnsupportedFakeTensorException):
        FakeTensorMode().from_tensor(Wrapper(tm.ones(2)))


# -- models ---------------------------------------------------------------------------------

@pytest.mark.parametrize("optimizer", [lambda p: tm.optim.SGD(p, lr=0.1, momentum=0.9),
                                       lambda p: tm.optim.Adam(p, lr=1e-3)], ids=["SGD", "Adam"])
def test_an_mlp_trains_a_step_without_data(optimizer):
    with FakeTensorMode():
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        opt = optimizer(model.parameters())
        loss = F.cross_entropy(model(tm.randn(5, 8)), tm.randint(0, 4, (5,)))
        loss.backward()
        opt.step()
        opt.zero_grad()
    assert repr(loss) == "FakeTensor(..., size=(), grad_fn=<NllLossBackward0>)"
    weight = model[0].weight
    assert repr(weight) == "Parameter(FakeTensor(..., size=(16, 8), requires_grad=True))"
    assert isinstance(weight, nn.Parameter) and type(weight).__name__ == "FakeTensor"
    assert all(type(v) is FakeTensor for state in opt.state.values() for v in state.values()
               if isinstance(v, tm.Tensor))


def test_a_cnn_built_outside_runs_forward_backward_and_a_step_on_converted_parameters():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 4 * 4, 10))
    mode = FakeTensorMode()
    for module in model.modules():
        for name, parameter in list(module._parameters.items()):
            if parameter is not None:
                setattr(module, name, mode.from_tensor(parameter))
    opt = tm.optim.Adam(model.parameters())
    with mode:
        out = model(tm.randn(2, 3, 8, 8))
        F.cross_entropy(out, tm.tensor([1, 2])).backward()
        opt.step()
    assert repr(out) == "FakeTensor(..., size=(2, 10), grad_fn=<AddmmBackward0>)"
    assert [tuple(p.grad.shape) for p in model.parameters()] == [(8, 3, 3, 3), (8,), (10, 128), (10,)]
    assert all(type(p.grad) is FakeTensor for p in model.parameters())


# -- the mode stack ---------------------------------------------------------------------------

class _Seen(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.seen.append((str(func), [type(a).__name__ for a in args if isinstance(a, tm.Tensor)],
                          type(out).__name__))
        return out


@pytest.mark.parametrize("user_first", [True, False])
def test_an_infra_mode_user_modes_run_first_and_see_fake_tensors(user_first):
    user, fake = _Seen(), FakeTensorMode()
    outer, inner = (user, fake) if user_first else (fake, user)
    with outer, inner:
        assert _get_current_dispatch_mode_stack() == [fake, user]
        x = tm.ones(2) * 2
    assert user.seen == [("aten.ones.default", [], "FakeTensor"), ("aten.mul.Tensor", ["FakeTensor"], "FakeTensor")]
    assert type(x) is FakeTensor and FakeTensorMode.is_infra_mode()


# -- the cache --------------------------------------------------------------------------------

def test_the_cache_counts_hits_misses_and_bypasses():
    FakeTensorMode.cache_clear()
    with FakeTensorMode():
        x = tm.ones(4, 5)          # miss (ones)
        _ = x + x                  # miss
        _ = x + x                  # hit
        _ = x + 1                  # miss: another argument
        _ = x + 1.0                # miss: 1 and 1.0 differ
        _ = x.t()                  # bypass: a view
        x.add_(1)                  # bypass: in-place
        _ = tm.randn(3)            # bypass: random
        _ = tm.ones(4, 5)          # hit
        _ = tm.tensor([1.0])       # bypass: lift (a tensor from Python data)
        with pytest.raises(DynamicOutputShapeException):
            x.nonzero()            # bypass
    info = FakeTensorMode.cache_info()
    assert info == DispatchCacheInfo(hits=2, misses=4, bypasses={
        "view": 1, "inplace": 1, "random": 1, "lift": 1, "dynamic output shape": 1}, size=4)
    FakeTensorMode.cache_clear()
    assert FakeTensorMode.cache_info() == DispatchCacheInfo(0, 0, {}, 0)


def test_a_cache_hit_gives_a_new_tensor_with_the_same_metadata():
    FakeTensorMode.cache_clear()
    with FakeTensorMode():
        x = tm.ones(3, 4).t()
        a, b = x * 2, x * 2
    assert a is not b and a._data is not b._data
    assert (a.shape, a.stride(), b.shape, b.stride()) == ((4, 3), (1, 4), (4, 3), (1, 4))
    assert FakeTensorMode.cache_info().hits == 1


def test_default_dtype_is_part_of_the_key():
    FakeTensorMode.cache_clear()
    with FakeTensorMode():
        x = tm.ones(2, dtype=tm.int64)
        first = x + 1.5
        tm.set_default_dtype(tm.float64)
        try:
            second = x + 1.5
        finally:
            tm.set_default_dtype(tm.float32)
    assert (first.dtype, second.dtype) == (tm.float32, tm.float64)


# -- missing_ops ----------------------------------------------------------------------------------

class _MatmulsOnly(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (aten.mm.default, aten.t.default, aten.addmm.default):
            return func(*args, **(kwargs or {}))
        if func is aten.relu.default:
            raise NotImplementedError("relu")
        return NotImplemented


def test_missing_ops_of_a_mode_forward_and_backward():
    assert tm.utils._python_dispatch.missing_ops is missing_ops  # issue 25's path

    def step(x):
        model = nn.Linear(3, 2)  # made inside: its parameters are fake too
        model(x).relu().sum().backward()

    assert [str(op) for op in missing_ops(_MatmulsOnly, step, tm.ones(10**5, 3))] == [
        "aten.detach.default", "aten.empty.memory_format", "aten.expand.default", "aten.ones_like.default",
        "aten.relu.default", "aten.sum.default", "aten.sum.dim_IntList", "aten.threshold_backward.default",
        "aten.uniform_.default", "aten.view.default"]  # relu raised NotImplementedError; the rest: NotImplemented


class _Scaled(tm.Tensor):
    """A wrapper holding ``inner * scale``; handles a few ops only."""

    @staticmethod
    def __new__(cls, inner, scale):
        return tm.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

    def __init__(self, inner, scale):
        self.inner, self.scale = inner, scale

    def __tensor_flatten__(self):
        return ["inner"], self.scale

    @staticmethod
    def __tensor_unflatten__(inner, scale, outer_size, outer_stride):
        return _Scaled(inner["inner"], scale)

    __torch_function__ = tm._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if func is aten.mul.Tensor and isinstance(args[0], _Scaled) and not isinstance(args[1], tm.Tensor):
            return _Scaled(args[0].inner, args[0].scale * args[1])
        if func is aten.t.default:
            return _Scaled(args[0].inner.t(), args[0].scale)
        return NotImplemented


def test_missing_ops_of_a_wrapper_subclass():
    w = _Scaled(tm.ones(4, 3), 2.0)
    found = missing_ops(_Scaled, lambda x, w: (x @ (w * 3).t()).exp(), tm.ones(5, 3), w)
    assert [str(op) for op in found] == ["aten.mm.default"]  # exp runs on mm's plain result


# -- the example ----------------------------------------------------------------------------------

def test_the_memory_tracker_example_measures_a_gpt_without_data():
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "examples/fake_memory_tracker.py"], capture_output=True, text=True,
                            timeout=300, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "163,037,184 parameters" in result.stdout
    assert "peak memory of forward + backward: " in result.stdout


# -- against PyTorch -------------------------------------------------------------------------------

TORCH_CASES = ["x.sum().item()", "x.tolist()", "L.equal(x, x)", "x.nonzero()", "x[x > 0]", "L.unique(x)",
               "L.masked_select(x, x > 0)", "x[L.tensor([0, 1])]", "x.t() @ x", "x.sum(0)"]


@pytest.mark.torch
@pytest.mark.parametrize("expression", TORCH_CASES)
def test_outcomes_match_pytorchs_fake_tensors(expression):
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode

    outcomes = []
    for library, mode in ((tm, FakeTensorMode), (torch, TorchFakeTensorMode)):
        with mode():
            x = library.ones(2, 3)
            try:
                out = eval(expression, {"L": library, "x": x})
                outcomes.append(("ok", type(out).__name__, tuple(out.shape), out.stride()))
            except Exception as error:  # noqa: BLE001 - the outcome compared
                outcomes.append(("error", type(error).__name__, str(error)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.torch
def test_the_non_fake_input_error_matches_pytorchs():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode

    messages = []
    for library, mode in ((tm, FakeTensorMode()), (torch, TorchFakeTensorMode())):
        fake, real = mode.from_tensor(library.zeros(2, 3)), library.ones(2, 3)
        with mode, pytest.raises(AssertionError) as caught:
            fake + real
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
