"""Scalars out of tensors at the dispatch level: ``.item()``, ``bool(t)``, ``int(t)``, ``float(t)``,
``t.__index__()`` ... reach ``aten._local_scalar_dense.default`` when a dispatch mode or a wrapper
subclass listens (PyTorch 2.13's behaviour), FakeTensorMode refuses it, make_fx refuses it
on traced tensors and reads it on constants. Literals below; PyTorch compared where installed."""

from __future__ import annotations

import pytest

import tensormodes as tm
from tensormodes._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode
from tensormodes.fx.experimental.proxy_tensor import make_fx
from tensormodes.utils._debug_mode import DebugMode
from tensormodes.utils._pytree import tree_map
from tensormodes.utils.flop_counter import FlopCounterMode

from .recording import aten_op_log

LSD = "aten._local_scalar_dense.default"


def _cases(lib):
    """name -> (a function of the library's tensors, the ops PyTorch's dispatch mode sees)."""
    return {
        "item": (lambda: lib.tensor([2.5]).item(), ["aten.lift_fresh.default", LSD]),
        "bool": (lambda: bool(lib.tensor([2.5])), ["aten.lift_fresh.default", LSD]),
        "if": (lambda: 1 if lib.ones(()) else 0, ["aten.ones.default", LSD]),
        "int": (lambda: int(lib.tensor(2.7)), ["aten.lift_fresh.default", LSD]),
        "float": (lambda: float(lib.ones(1)), ["aten.ones.default", LSD]),
        "complex": (lambda: complex(lib.ones(1)), ["aten.ones.default", LSD]),
        "index": (lambda: [1, 2, 3][lib.ones((), dtype=lib.int64)], ["aten.ones.default", LSD]),
        "eq as bool": (lambda: bool(lib.ones(1) == lib.ones(1)),
                       ["aten.ones.default", "aten.ones.default", "aten.eq.Tensor", LSD]),
        "equal": (lambda: lib.equal(lib.ones(1), lib.ones(1)),
                  ["aten.ones.default", "aten.ones.default", "aten.equal.default"]),
        "is_nonzero": (lambda: lib.ones(1).is_nonzero(), ["aten.ones.default", LSD]),
        "format 0-d": (lambda: f"{lib.ones(()):.2f}", ["aten.ones.default", "aten.detach.default", LSD]),
        "tolist": (lambda: lib.ones(2).tolist(), ["aten.ones.default"]),
        "item of 2": (lambda: lib.ones(2).item(), ["aten.ones.default"]),
        "bool of 0": (lambda: bool(lib.ones(0)), ["aten.ones.default"]),
        "requires grad": (lambda: lib.ones(1, requires_grad=True).item(), ["aten.ones.default", LSD]),
    }


def _run_logged(lib, fn):
    log = aten_op_log(lib)
    with log:
        try:
            result = fn()
        except Exception as error:  # noqa: BLE001 - the error is part of what is compared
            result = (type(error).__name__, str(error))
    return result, log.ops


@pytest.mark.parametrize("name", list(_cases(tm)))
def test_a_dispatch_mode_sees_local_scalar_dense_where_pytorch_does(name):
    fn, expected = _cases(tm)[name]
    _, seen = _run_logged(tm, fn)
    assert seen == expected


@pytest.mark.torch
@pytest.mark.parametrize("name", list(_cases(tm)))
def test_the_ops_seen_and_results_equal_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, seen = _run_logged(tm, _cases(tm)[name][0])
    theirs, torch_seen = _run_logged(torch, _cases(torch)[name][0])
    assert seen == torch_seen == _cases(tm)[name][1]
    assert ours == theirs


def test_schema_and_tags():
    op = tm.ops.aten._local_scalar_dense.default
    assert str(op._schema) == "aten::_local_scalar_dense(Tensor self) -> Scalar"
    assert op.tags == [tm.Tag.core, tm.Tag.data_dependent_output, tm.Tag.pt2_compliant_tag]
    assert op(tm.tensor([2.5, 1.0])) == 2.5 and op(tm.tensor(True)) is True
    with pytest.raises(RuntimeError, match="^_local_scalar_dense: Empty tensor not supported$"):
        op(tm.ones(0))
    assert not hasattr(tm, "_local_scalar_dense") and not hasattr(tm.Tensor, "_local_scalar_dense")


@pytest.mark.torch
def test_schema_and_tags_equal_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = tm.ops.aten._local_scalar_dense.default, torch.ops.aten._local_scalar_dense.default
    assert str(ours._schema) == str(theirs._schema)
    assert [t.name for t in ours.tags] == [t.name for t in theirs.tags]


class _Wrapper(tm.Tensor):
    __torch_function__ = tm._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, elem):
        wrapper = tm.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
        wrapper.elem = elem
        return wrapper

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(str(func))
        out = func(*tree_map(lambda t: t.elem if isinstance(t, _Wrapper) else t, args), **(kwargs or {}))
        return tree_map(lambda t: _Wrapper(t) if type(t) is tm.Tensor else t, out)


def test_a_wrapper_subclass_item_goes_to_its_torch_dispatch():
    _Wrapper.seen = []
    w = _Wrapper(tm.tensor([4.0]))
    assert (w.item(), bool(w), float(w), int(w), [0, 1, 2][_Wrapper(tm.tensor(2))]) == (4.0, True, 4.0, 4, 2)
    assert _Wrapper.seen == [LSD] * 5
    with pytest.raises(RuntimeError, match="^a Tensor with 2 elements cannot be converted to Scalar$"):
        _Wrapper(tm.ones(2)).item()
    assert _Wrapper.seen == [LSD] * 5  # checked before dispatching, as PyTorch's item()


def test_a_wrapper_subclass_refuses_tolist_and_numpy_as_pytorch():
    _Wrapper.seen = []
    w = _Wrapper(tm.tensor([4.0, 5.0]))
    with pytest.raises(RuntimeError, match="^.tolist\\(\\) is not supported for tensor subclasses, got _Wrapper$"):
        w.tolist()
    with pytest.raises(RuntimeError, match="^.numpy\\(\\) is not supported for tensor subclasses.$"):
        w.numpy()
    assert _Wrapper.seen == []


def test_fake_tensors_refuse_through_the_op_and_keep_constants():
    op = tm.ops.aten._local_scalar_dense.default
    with FakeTensorMode():
        x = tm.ones(2)
        c = tm.tensor(3)
        for read in (lambda: x[0].item(), lambda: bool(x[0]), lambda: int(x[0]), lambda: float(x[0]),
                     lambda: x.tolist(), lambda: [1, 2][x.long()[0]]):
            with pytest.raises(DataDependentOutputException) as caught:
                read()
            assert caught.value.args == (op,) and str(caught.value) == LSD
        assert (c.item(), (c + 1).item(), bool(c)) == (3, 4, True)
    fake = FakeTensorMode()
    with fake:
        y = tm.ones(1)
    log = aten_op_log(tm)
    with fake, log, pytest.raises(DataDependentOutputException):
        y.item()
    assert log.ops == [LSD]  # a user mode runs before the infra mode


def test_meta_tensors_keep_their_error():
    with pytest.raises(RuntimeError, match=r"^Tensor.item\(\) cannot be called on meta tensors$"):
        tm.ones(1, device="meta").item()


W = tm.tensor([2.0])
MAKE_FX = {
    "closure": lambda x: x * W.item(),
    "literal": lambda x: x * tm.tensor(3).item(),
    "literal+1": lambda x: x * (tm.tensor(3) + 1).item(),
    "literal of 2": lambda x: x * tm.tensor([1, 2]).sum().item(),
    "equal": lambda x: x * tm.equal(x, x),
    "bool": lambda x: x * bool(x.sum() > 0),
    "closure op": lambda x: x * (W * 2).item(),
}
MAKE_FX_REFUSED = {"literal of 2": LSD, "equal": "aten.equal.default", "bool": LSD, "closure op": LSD}


@pytest.mark.parametrize("name", list(MAKE_FX))
def test_make_fx_reads_constants_and_refuses_traced_values(name):
    if name in MAKE_FX_REFUSED:
        with pytest.raises(RuntimeError, match="^It appears that you're trying to get value out of a tracing tensor "
                                               f"with {MAKE_FX_REFUSED[name]} - erroring out!"):
            make_fx(MAKE_FX[name])(tm.ones(1))
        return
    gm = make_fx(MAKE_FX[name])(tm.ones(1))
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert LSD not in targets and targets[-1] == "aten.mul.Tensor"
    assert tm.equal(gm(tm.ones(1)), MAKE_FX[name](tm.ones(1)))


@pytest.mark.torch
@pytest.mark.parametrize("name", list(MAKE_FX))
def test_make_fx_of_values_equals_pytorch(name):
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    theirs = _torch_version(name, torch)
    try:
        code = torch_make_fx(theirs)(torch.ones(1)).code
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as caught:
            make_fx(MAKE_FX[name])(tm.ones(1))
        assert str(caught.value) == str(error)
        return
    ours = make_fx(MAKE_FX[name])(tm.ones(1)).code
    assert ours.replace("tensormodes.ops", "torch.ops") == code


def _torch_version(name, torch):
    w = torch.tensor([2.0])
    return {
        "closure": lambda x: x * w.item(),
        "literal": lambda x: x * torch.tensor(3).item(),
        "literal+1": lambda x: x * (torch.tensor(3) + 1).item(),
        "literal of 2": lambda x: x * torch.tensor([1, 2]).sum().item(),
        "equal": lambda x: x * torch.equal(x, x),
        "bool": lambda x: x * bool(x.sum() > 0),
        "closure op": lambda x: x * (w * 2).item(),
    }[name]


def test_make_fx_fake_reads_constants():
    gm = make_fx(lambda x: x * (tm.tensor(3) + 1).item(), tracing_mode="fake")(tm.ones(1))
    assert tm.equal(gm(tm.ones(1)), tm.full((1,), 4.0))
    # a computed value is an unbacked symbol there (tests/test_symbolic.py), as in PyTorch
    gm = make_fx(lambda x: x * x.sum().item(), tracing_mode="fake")(tm.ones(1))
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [
        tm.ops.aten.sum.default, tm.ops.aten._local_scalar_dense.default, tm.ops.aten.mul.Tensor]


def test_debug_mode_logs_it_and_flop_counter_ignores_it():
    x = tm.tensor([2.5])
    with DebugMode() as dm:
        x.item()
    assert "aten::_local_scalar_dense(t: f32[1])  ->  2.5" in dm.debug_string()
    with FlopCounterMode(display=False) as counter:
        assert float(tm.ones(2, 2).mm(tm.ones(2, 2)).sum()) == 8.0
    assert counter.get_total_flops() == 16
