"""make_fx with tracing_mode="fake": the same graphs as real tracing, made without data; real
tensors closed over refused unless _allow_non_fake_inputs=True (PyTorch's error)."""

from __future__ import annotations

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes._decomp import core_aten_decompositions
from tensormodes._subclasses import fake_tensor
from tensormodes.fx.experimental.proxy_tensor import make_fx


def _cnn():
    tm.manual_seed(0)
    return tm.nn.Sequential(tm.nn.Conv2d(1, 4, 3, padding=1), tm.nn.ReLU(), tm.nn.MaxPool2d(2), tm.nn.Flatten(),
                            tm.nn.Linear(4 * 4 * 4, 3))


def _step(model):
    params = list(model.parameters())

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        return loss, tm.autograd.grad(loss, params)

    return step


def test_fake_tracing_records_the_graph_real_tracing_records():
    def f(x, y):
        return (x.sin() * y + tm.tensor([1.0, 2.0]) + tm.zeros(2)).sum()

    real = make_fx(f)(tm.ones(2), tm.ones(2))
    fake = make_fx(f, tracing_mode="fake")(tm.ones(2), tm.ones(2))
    assert fake.code == real.code
    values = [n.meta["val"] for n in fake.graph.nodes if n.op == "call_function"]
    assert values and all(isinstance(v, fake_tensor.FakeTensor) for v in values)
    assert [tuple(v.shape) for v in values] == [(2,)] * 6 + [()]
    assert tm.equal(fake(tm.ones(2), tm.full((2,), 3.0)), f(tm.ones(2), tm.full((2,), 3.0)))


def test_real_parameters_need_allow_non_fake_inputs():
    step = _step(_cnn())
    x, y = tm.randn(2, 1, 8, 8), tm.tensor([0, 2])
    with pytest.raises(AssertionError, match="Please convert all Tensors to FakeTensors first or instantiate "
                                             "FakeTensorMode with 'allow_non_fake_inputs'. Found in aten.convolution"):
        make_fx(step, tracing_mode="fake")(x, y)
    assert tm.utils._python_dispatch._get_current_dispatch_mode_stack() == []
    gm = make_fx(step, tracing_mode="fake", _allow_non_fake_inputs=True)(x, y)
    assert gm.code == make_fx(step)(x, y).code
    loss, grads = gm(x, y)
    expected_loss, expected_grads = step(x, y)
    assert tm.equal(loss.detach(), expected_loss.detach())
    assert all(tm.equal(g.detach(), e) for g, e in zip(grads, expected_grads))


def test_fake_tracing_with_core_decompositions_runs_like_eager():
    step = _step(_cnn())
    x, y = tm.randn(2, 1, 8, 8), tm.tensor([0, 2])
    gm = make_fx(step, decomposition_table=core_aten_decompositions(), tracing_mode="fake",
                 _allow_non_fake_inputs=True)(x, y)
    targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    assert "aten.t.default" not in targets and "aten.permute.default" in targets
    loss, grads = gm(x, y)
    expected_loss, expected_grads = step(x, y)
    tm.testing.assert_close(loss.detach(), expected_loss.detach())
    for g, e in zip(grads, expected_grads):
        tm.testing.assert_close(g.detach(), e)


def test_refusal_message_is_pytorchs_then_names_the_option():
    lin = tm.nn.Linear(3, 2)
    with pytest.raises(AssertionError) as caught:
        make_fx(lambda x: lin(x), tracing_mode="fake")(tm.ones(1, 3))
    assert str(caught.value) == (
        "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. "
        "Found in aten.t.default(Parameter containing:\ntensor([...], size=(2, 3), requires_grad=True)). (make_fx: "
        "pass _allow_non_fake_inputs=True to trace, with tracing_mode='fake', a function that uses real tensors such "
        "as a module's parameters)")
