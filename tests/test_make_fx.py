"""make_fx: dispatch-level graphs (code pinned as text), joint forward-backward graphs that
reproduce eager bit for bit, constants, decomposition tables, errors; PyTorch as the oracle
for op sequences where installed."""

from __future__ import annotations

import functools
import inspect
import operator

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes._decomp import core_aten_decompositions, decomposition_table, get_decompositions
from tensormodes.fx.experimental.proxy_tensor import make_fx
from tensormodes.utils._python_dispatch import TorchDispatchMode

aten = tm.ops.aten


def code(gm) -> str:
    return gm.code.strip()


def test_factories_literals_and_inputs_as_pytorch_writes_them():
    def f(x, y):
        a = tm.randn(3)
        b = tm.zeros(3, 3)
        c = tm.arange(3)
        d = tm.full((3,), 2.0)
        t = tm.tensor([1., 2., 3.])
        return x.sin() + y * 2 + a + b + c + d + t

    gm = make_fx(f)(tm.randn(3), tm.randn(3))
    assert code(gm) == """\
def forward(self, x_1, y_1):
    randn = tensormodes.ops.aten.randn.default([3], device = device(type='cpu'), pin_memory = False)
    zeros = tensormodes.ops.aten.zeros.default([3, 3], device = device(type='cpu'), pin_memory = False)
    arange = tensormodes.ops.aten.arange.default(3, device = device(type='cpu'), pin_memory = False)
    full = tensormodes.ops.aten.full.default([3], 2.0, device = device(type='cpu'), pin_memory = False)
    _tensor_constant0 = self._tensor_constant0
    lift_fresh_copy = tensormodes.ops.aten.lift_fresh_copy.default(_tensor_constant0);  _tensor_constant0 = None
    sin = tensormodes.ops.aten.sin.default(x_1);  x_1 = None
    mul = tensormodes.ops.aten.mul.Tensor(y_1, 2);  y_1 = None
    add = tensormodes.ops.aten.add.Tensor(sin, mul);  sin = mul = None
    add_1 = tensormodes.ops.aten.add.Tensor(add, randn);  add = randn = None
    add_2 = tensormodes.ops.aten.add.Tensor(add_1, zeros);  add_1 = zeros = None
    add_3 = tensormodes.ops.aten.add.Tensor(add_2, arange);  add_2 = arange = None
    add_4 = tensormodes.ops.aten.add.Tensor(add_3, full);  add_3 = full = None
    add_5 = tensormodes.ops.aten.add.Tensor(add_4, lift_fresh_copy);  add_4 = lift_fresh_copy = None
    return add_5"""
    assert gm._tensor_constant0.tolist() == [1., 2., 3.]
    x, y = tm.ones(3), tm.ones(3)
    tm.manual_seed(3)
    expected = f(x, y)
    tm.manual_seed(3)
    assert tm.equal(gm(x, y), expected)
    assert type(gm).__name__ == "f"
    assert "lift_fresh_copy = tensormodes.ops.aten" in inspect.getsource(type(gm).forward)


def test_parameters_become_constants_and_autograd_grad_a_joint_graph():
    tm.manual_seed(0)
    lin = tm.nn.Linear(3, 2)

    def h(x):
        loss = lin(x).sum()
        return tm.autograd.grad(loss, [lin.weight, lin.bias])

    gm = make_fx(h)(tm.randn(4, 3))
    assert code(gm) == """\
def forward(self, x_1):
    _param_constant0 = self._param_constant0
    t = tensormodes.ops.aten.t.default(_param_constant0);  _param_constant0 = None
    _param_constant1 = self._param_constant1
    addmm = tensormodes.ops.aten.addmm.default(_param_constant1, x_1, t);  _param_constant1 = t = None
    sum_1 = tensormodes.ops.aten.sum.default(addmm);  addmm = None
    ones_like = tensormodes.ops.aten.ones_like.default(sum_1, pin_memory = False, memory_format = tensormodes.preserve_format);  sum_1 = None
    expand = tensormodes.ops.aten.expand.default(ones_like, [4, 2]);  ones_like = None
    t_1 = tensormodes.ops.aten.t.default(expand)
    mm = tensormodes.ops.aten.mm.default(t_1, x_1);  t_1 = x_1 = None
    t_2 = tensormodes.ops.aten.t.default(mm);  mm = None
    sum_2 = tensormodes.ops.aten.sum.dim_IntList(expand, [0], True);  expand = None
    view = tensormodes.ops.aten.view.default(sum_2, [2]);  sum_2 = None
    t_3 = tensormodes.ops.aten.t.default(t_2);  t_2 = None
    return (t_3, view)"""  # noqa: E501
    assert gm._param_constant0 is lin.weight and dict(gm.named_parameters()).keys() == {
        "_param_constant0", "_param_constant1"}
    x = tm.randn(4, 3)
    assert all(tm.equal(a, b) for a, b in zip(gm(x), h(x)))


def test_inputs_names_nested_varargs_and_python_values():
    gm = make_fx(lambda xs, y: xs[0] + xs[1] + y)([tm.ones(2), tm.ones(2)], tm.ones(2))
    assert code(gm) == """\
def forward(self, xs, y):
    xs_1, xs_2, y_1, = tree_leaves([xs, y])
    add = tensormodes.ops.aten.add.Tensor(xs_1, xs_2);  xs_1 = xs_2 = None
    add_1 = tensormodes.ops.aten.add.Tensor(add, y_1);  add = y_1 = None
    return add_1"""
    assert gm([tm.ones(2), tm.full((2,), 2.0)], tm.ones(2)).tolist() == [4.0, 4.0]
    gm = make_fx(lambda *a: a[0] + a[1])(tm.ones(2), tm.ones(2))
    assert code(gm).splitlines()[0] == "def forward(self, arg0_1, arg1_1):"
    gm = make_fx(lambda x, n: x * n)(tm.ones(2), 3)
    assert code(gm) == """\
def forward(self, x_1, n_1):
    mul = tensormodes.ops.aten.mul.Tensor(x_1, 3);  x_1 = None
    return mul"""

    def clash(x_1, x):
        return x_1 + x

    assert code(make_fx(clash)(tm.ones(1), tm.ones(1))).splitlines()[0] == "def forward(self, x_1_1, x_1):"
    gm = make_fx(lambda x: (x, x.shape, {"a": x + 1}))(tm.ones(2))
    assert code(gm).splitlines()[-1] == "    return (x_1, (2,), {'a': add})"


def test_inplace_ops_and_constants_used_twice():
    def k(x):
        x.add_(1)
        return x.view(2).clone()

    assert code(make_fx(k)(tm.ones(2))) == """\
def forward(self, x_1):
    add_ = tensormodes.ops.aten.add_.Tensor(x_1, 1);  x_1 = None
    view = tensormodes.ops.aten.view.default(add_, [2]);  add_ = None
    clone = tensormodes.ops.aten.clone.default(view);  view = None
    return clone"""
    w = tm.ones(3)
    assert code(make_fx(lambda x: x + w + w)(tm.ones(3))) == """\
def forward(self, x_1):
    _tensor_constant0 = self._tensor_constant0
    add = tensormodes.ops.aten.add.Tensor(x_1, _tensor_constant0);  x_1 = _tensor_constant0 = None
    _tensor_constant0_1 = self._tensor_constant0
    add_1 = tensormodes.ops.aten.add.Tensor(add, _tensor_constant0_1);  add = _tensor_constant0_1 = None
    return add_1"""


def test_tuple_results_get_a_getitem_per_tensor():
    gm = make_fx(lambda x: F.layer_norm(x, (3,)))(tm.ones(2, 3))
    assert code(gm) == """\
def forward(self, x_1):
    native_layer_norm = tensormodes.ops.aten.native_layer_norm.default(x_1, [3], None, None, 1e-05);  x_1 = None
    getitem = native_layer_norm[0]
    getitem_1 = native_layer_norm[1];  getitem_1 = None
    getitem_2 = native_layer_norm[2];  native_layer_norm = getitem_2 = None
    return getitem"""


def _mlp():
    tm.manual_seed(0)
    return tm.nn.Sequential(tm.nn.Linear(8, 16), tm.nn.ReLU(), tm.nn.Linear(16, 16), tm.nn.ReLU(),
                            tm.nn.Linear(16, 4))


def _step(mlp):
    params = list(mlp.parameters())

    def step(x, y):
        loss = F.cross_entropy(mlp(x), y)
        return loss, tm.autograd.grad(loss, params)

    return step


def _backward_step(mlp):
    def step(x, y):
        for p in mlp.parameters():
            p.grad = None
        loss = F.cross_entropy(mlp(x), y)
        loss.backward()
        return loss, [p.grad for p in mlp.parameters()]

    return step


@pytest.mark.parametrize("make_step", [_step, _backward_step])
def test_joint_graph_reproduces_eager_loss_and_gradients_bitwise(make_step):
    step = make_step(_mlp())
    x, y = tm.randn(5, 8), tm.tensor([0, 3, 1, 2, 3])
    gm = make_fx(step)(x, y)
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert "aten.threshold_backward.default" in targets and "aten._log_softmax_backward_data.default" in targets
    x2 = tm.randn(5, 8)
    for inputs in ((x, y), (x2, y)):
        expected_loss, expected_grads = step(*inputs)
        loss, grads = gm(*inputs)
        assert tm.equal(loss.detach(), expected_loss.detach())
        assert len(grads) == 6 and all(tm.equal(g.detach(), e) for g, e in zip(grads, expected_grads))


def test_user_dispatch_modes_inside_f_run_above_the_tracer():
    seen = []

    class Doubler(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            out = func(*args, **(kwargs or {}))
            return aten.mul.Tensor(out, 2) if func is aten.sin.default else out

    def f(x):
        with Doubler():
            return x.sin()

    gm = make_fx(f)(tm.zeros(1))
    assert seen == ["aten.sin.default"]  # its own mul runs below it, where the tracer records it
    assert [str(n.target) for n in gm.graph.nodes if n.op == "call_function"] == [
        "aten.sin.default", "aten.mul.Tensor"]


def test_errors():
    with pytest.raises(NotImplementedError, match="tracing_mode='symbolic'"):
        make_fx(lambda x: x, tracing_mode="symbolic")(tm.ones(1))
    with pytest.raises(AssertionError, match="^tracing_mode must be real/fake/symbolic, got fast$"):  # PyTorch 2.13
        make_fx(lambda x: x, tracing_mode="fast")
    with pytest.raises(NotImplementedError, match="pre_dispatch"):
        make_fx(lambda x: x, pre_dispatch=True)
    with pytest.raises(TypeError, match="expected an OpOverload or OpOverloadPacket"):
        get_decompositions(["addmm"])
    with pytest.raises(ValueError, match="boom"):
        make_fx(lambda x: (_ for _ in ()).throw(ValueError("boom")))(tm.ones(1))
    assert tm.utils._python_dispatch._get_current_dispatch_mode_stack() == []


# -- decompositions ----------------------------------------------------------------------------

def test_decomposition_table_lookups():
    table = get_decompositions([aten.addmm, aten._softmax.default, aten.sum, aten.relu])
    assert {str(k) for k in table} == {"aten.addmm.default", "aten._softmax.default", "aten.sum.default",
                                       "aten.addmm.out", "aten.sum.out"}  # out= overloads too, as PyTorch's
    core = core_aten_decompositions()
    assert aten.t.default in core and aten.addmm.default not in core and aten.addmm.default in decomposition_table
    assert core is not core_aten_decompositions()


def test_make_fx_runs_decompositions_recursively():
    def f(x):
        return aten.tanh_backward.default(x, x.t())

    table = get_decompositions([aten.t, aten.transpose, aten.tanh_backward, aten.rsub])
    gm = make_fx(f, decomposition_table=table)(tm.ones(2, 2))  # t -> transpose -> permute, as PyTorch's
    assert code(gm) == """\
def forward(self, x_1):
    permute = tensormodes.ops.aten.permute.default(x_1, [1, 0])
    mul = tensormodes.ops.aten.mul.Tensor(permute, permute);  permute = None
    sub = tensormodes.ops.aten.sub.Tensor(1, mul);  mul = None
    mul_1 = tensormodes.ops.aten.mul.Tensor(x_1, sub);  x_1 = sub = None
    return mul_1"""


def _f(*shape, low=-2.0, high=2.0, dtype=tm.float64, seed=0):
    generator = tm.Generator().manual_seed(seed + len(shape))
    return tm.rand(shape, generator=generator, dtype=dtype) * (high - low) + low


_I = tm.tensor([0, 2, 1, 2])
# Per decomposed overload: a few calls (args, kwargs) in schema form.
SAMPLES = {
    "aten.t.default": [((_f(2, 3),), {}), ((_f(3),), {})],
    "aten.transpose.int": [((_f(2, 3, 4), 0, 2), {}), ((_f(2, 3), -1, 0), {})],
    "aten.detach.default": [((_f(2, 3),), {})],
    "aten.squeeze.default": [((_f(1, 3, 1),), {})],
    "aten.squeeze.dim": [((_f(1, 3, 1), 2), {}), ((_f(2, 3), 0), {})],
    "aten._unsafe_view.default": [((_f(2, 3), [3, 2]), {})],
    "aten.ones.default": [(([2, 3],), {"dtype": tm.float64})],
    "aten.zeros.default": [(([2],), {})],
    "aten.ones_like.default": [((_f(2, 3),), {"dtype": tm.int64})],
    "aten.zeros_like.default": [((_f(2, 3),), {})],
    "aten.arange.default": [((5,), {}), ((2.5,), {"dtype": tm.float64})],
    "aten.arange.start": [((1, 7), {})],
    "aten.silu.default": [((_f(2, 3),), {})],
    "aten.hardsigmoid.default": [((_f(7, high=5, low=-5),), {})],
    "aten.hardswish.default": [((_f(7, high=5, low=-5),), {})],
    "aten.hardtanh.default": [((_f(5),), {}), ((_f(5), -0.5, 0.5), {})],
    "aten.leaky_relu.default": [((_f(5),), {}), ((_f(5), 0.2), {})],
    "aten.elu.default": [((_f(5),), {}), ((_f(5), 0.5, 2.0, 1.5), {})],
    "aten.celu.default": [((_f(5),), {}), ((_f(5), 0.5), {})],
    "aten.softplus.default": [((_f(5),), {}), ((_f(5, high=30), 2, 10), {})],
    "aten.mish.default": [((_f(5),), {})],
    "aten.gelu.default": [((_f(5),), {}), ((_f(5),), {"approximate": "tanh"})],
    "aten.square.default": [((_f(5),), {})],
    "aten.rsub.Tensor": [((_f(3), _f(3, seed=1)), {}), ((_f(3), _f(3, seed=1)), {"alpha": 2})],
    "aten.rsub.Scalar": [((_f(3), 2.0), {}), ((_f(3), 2.0, 3), {})],
    "aten.addcmul.default": [((_f(3), _f(3, seed=1), _f(3, seed=2)), {"value": 0.5})],
    "aten.addcdiv.default": [((_f(3), _f(3, seed=1), _f(3, low=1, high=2)), {}),
                             ((_f(3), _f(3, seed=1), _f(3, low=1, high=2)), {"value": 2})],
    "aten.lerp.Scalar": [((_f(3), _f(3, seed=1), 0.25), {}), ((_f(3), _f(3, seed=1), 0.75), {})],
    "aten.lerp.Tensor": [((_f(4), _f(4, seed=1), _f(4, low=0, high=1)), {})],
    "aten.frac.default": [((_f(5, low=-9, high=9),), {})],
    "aten.deg2rad.default": [((_f(5),), {})],
    "aten.rad2deg.default": [((_f(5),), {})],
    "aten.logaddexp.default": [((_f(5), _f(5, seed=1)), {})],
    "aten.sgn.default": [((_f(5),), {}), ((tm.tensor([1 + 1j, 0j]),), {})],
    "aten.clamp_min.default": [((_f(5), 0.5), {})],
    "aten.clamp_max.default": [((_f(5), 0.5), {})],
    "aten.isneginf.default": [((tm.tensor([1.0, -float("inf"), float("inf"), float("nan")]),), {})],
    "aten.isposinf.default": [((tm.tensor([1.0, -float("inf"), float("inf"), float("nan")]),), {})],
    "aten.sum.default": [((_f(2, 3),), {}), ((_f(2, 3),), {"dtype": tm.float32})],
    "aten.logsumexp.default": [((_f(2, 3), [1]), {}), ((_f(2, 3), [0, 1], True), {}),
                               ((tm.tensor([-float("inf"), -float("inf")]), [0]), {})],
    "aten.trace.default": [((_f(3, 3),), {})],
    "aten.outer.default": [((_f(3), _f(2, seed=1)), {})],
    "aten.dot.default": [((_f(3), _f(3, seed=1)), {})],
    "aten.mv.default": [((_f(2, 3), _f(3, seed=1)), {})],
    "aten.addmm.default": [((_f(3), _f(2, 4), _f(4, 3)), {}), ((_f(2, 3), _f(2, 4), _f(4, 3)), {"beta": 0.5,
                                                                                                 "alpha": 2})],
    "aten._softmax.default": [((_f(2, 3), 1, False), {}), ((_f(2, 3), 0, False), {})],
    "aten._log_softmax.default": [((_f(2, 3), 1, False), {}), ((_f(2, 3), 0, False), {})],
    "aten._softmax_backward_data.default": [((_f(2, 3), _f(2, 3, low=0, high=1), 1, tm.float64), {})],
    "aten._log_softmax_backward_data.default": [((_f(2, 3), _f(2, 3, low=-3, high=0), 1, tm.float64), {})],
    "aten.native_layer_norm.default": [((_f(2, 3), [3], _f(3, seed=1), _f(3, seed=2), 1e-5), {}),
                                       ((_f(2, 3, 4), [3, 4], None, None, 1e-5), {})],
    "aten.threshold_backward.default": [((_f(5), _f(5, seed=1), 0), {}), ((_f(5), _f(5, seed=1), 0.5), {})],
    "aten.tanh_backward.default": [((_f(5), _f(5, seed=1, low=-1, high=1)), {})],
    "aten.mse_loss.default": [((_f(2, 3), _f(2, 3, seed=1)), {}), ((_f(2, 3), _f(2, 3, seed=1), 0), {}),
                              ((_f(2, 3), _f(2, 3, seed=1), 2), {})],
    "aten.huber_loss.default": [((_f(2, 3), _f(2, 3, seed=1)), {}), ((_f(6), _f(6, seed=1), 0, 0.5), {})],
    "aten.smooth_l1_loss.default": [((_f(2, 3), _f(2, 3, seed=1)), {}), ((_f(6), _f(6, seed=1), 2, 0.5), {})],
    "aten.soft_margin_loss.default": [((_f(2, 3), _f(2, 3, seed=1).sign()), {})],
    "aten.nll_loss_forward.default": [
        ((_f(4, 3, low=-3, high=0), _I, None, 1, -100), {}),
        ((_f(4, 3, low=-3, high=0), tm.tensor([0, 2, -100, 2]), _f(3, low=0.5, high=2), 1, -100), {}),
        ((_f(4, 3, low=-3, high=0), _I, _f(3, low=0.5, high=2), 2, 1), {}),
        ((_f(4, 3, low=-3, high=0), _I, None, 0, -100), {}),
        ((_f(3, low=-3, high=0), tm.tensor(1), None, 1, -100), {})],
    "aten.glu.default": [((_f(2, 4),), {}), ((_f(4, 3), 0), {})],
    "aten.hardshrink.default": [((_f(6),), {}), ((_f(6), 1.0), {})],
    "aten.softshrink.default": [((_f(6),), {}), ((_f(6), 1.0), {})],
    "aten.threshold.default": [((_f(6), 0.1, 20.0), {})],
    "aten.logit.default": [((_f(5, low=0.05, high=0.95),), {}), ((_f(5, low=0, high=1), 0.1), {})],
    "aten._prelu_kernel.default": [((_f(2, 3, 4), _f(3, 1, seed=1)), {})],
    "aten.sinc.default": [((tm.tensor([0.0, 0.5, -1.25, 3.0], dtype=tm.float64),), {})],
    "aten.logaddexp2.default": [((_f(5), _f(5, seed=1)), {})],
    "aten.heaviside.default": [((tm.tensor([-1.0, 0.0, 2.0]), tm.tensor([0.5, 0.25, 0.75])), {})],
    "aten.nan_to_num.default": [((tm.tensor([1.0, float("nan"), float("inf"), -float("inf")]),), {}),
                                ((tm.tensor([1.0, float("nan"), float("inf"), -float("inf")]), 0.5, 9.0, -9.0), {}),
                                ((tm.tensor([1, 2]),), {})],
    "aten.clamp_min.Tensor": [((_f(5), _f(5, seed=1)), {})],
    "aten.clamp_max.Tensor": [((_f(5), _f(5, seed=1)), {})],
    "aten.floor_divide.default": [((_f(5, low=-9, high=9), _f(5, low=1, high=3)), {})],
    "aten.xlogy.Tensor": [((tm.tensor([0.0, 1.0, 2.0, 0.0]), tm.tensor([0.0, 2.0, float("nan"), 3.0])),
                           {"values only": True}),  # gradients at 0 * log(0): the op's formula picks a side
                          ((_f(4), _f(4, low=0.5, high=2)), {})],
    "aten.masked_fill.Scalar": [((_f(2, 3), _f(2, 3, seed=1) > 0, 1.5), {})],
    "aten.masked_fill.Tensor": [((_f(2, 3), _f(2, 3, seed=1) > 0, tm.tensor(2.5, dtype=tm.float64)), {})],
    "aten.tril.default": [((_f(3, 4),), {}), ((_f(2, 3, 3), 1), {}), ((_f(3, 4), -1), {})],
    "aten.triu.default": [((_f(3, 4),), {}), ((_f(2, 3, 3), 1), {}), ((_f(3, 4), -1), {})],
    "aten.fliplr.default": [((_f(2, 3),), {})],
    "aten.flipud.default": [((_f(2, 3),), {})],
    "aten.stack.default": [(([_f(2, 3), _f(2, 3, seed=1)],), {}), (([_f(2, 3), _f(2, 3, seed=1)], -1), {})],
    "aten.unbind.int": [((_f(2, 3),), {}), ((_f(2, 3), 1), {})],
    "aten.split.Tensor": [((_f(5, 2), 2), {}), ((_f(2, 6), 3, 1), {})],
    "aten.vdot.default": [((_f(3), _f(3, seed=1)), {})],
    "aten.inner.default": [((_f(2, 3), _f(4, 3, seed=1)), {}), ((_f(3), _f(3, seed=1)), {})],
    "aten.baddbmm.default": [((_f(2, 3, 3), _f(2, 3, 4), _f(2, 4, 3)), {}),
                             ((_f(3), _f(2, 3, 4), _f(2, 4, 3)), {"beta": 0.5, "alpha": 2})],
    "aten.empty_like.default": [],  # uninitialised values: shape and dtype checked apart
    "aten.eye.default": [((3,), {}), ((2,), {"dtype": tm.int64})],
    "aten.eye.m": [((2, 3), {})],
    "aten.count_nonzero.default": [((tm.tensor([[0.0, 1.0], [2.0, 0.0]]),), {}),
                                   ((tm.tensor([[0.0, 1.0], [2.0, 3.0]]), 1), {})],
    "aten.nansum.default": [((tm.tensor([[1.0, float("nan")], [2.0, 3.0]]),), {}),
                            ((tm.tensor([[1.0, float("nan")], [2.0, 3.0]]), [1], True), {})],
    "aten.binary_cross_entropy.default": [((_f(2, 3, low=0.05, high=0.95), _f(2, 3, low=0, high=1, seed=1)), {}),
                                          ((_f(3, low=0.05, high=0.95), _f(3, low=0, high=1, seed=1),
                                            _f(3, low=0.5, high=2), 2), {})],
    "aten.binary_cross_entropy_with_logits.default": [
        ((_f(2, 3), _f(2, 3, low=0, high=1, seed=1)), {}),
        ((_f(3), _f(3, low=0, high=1, seed=1), _f(3, low=0.5, high=2), _f(3, low=0.5, high=2, seed=2), 0), {})],
    "aten.rms_norm.default": [((_f(2, 3), [3]), {}), ((_f(2, 3, 4), [3, 4], _f(3, 4, seed=1), 1e-5), {})],
}


def test_empty_like_decomposition_has_the_ops_shape_and_dtype():
    x = _f(2, 3)
    made = decomposition_table[aten.empty_like.default](x, dtype=tm.int32)
    assert made.shape == (2, 3) and made.dtype == tm.int32


# ops without a derivative (PyTorch's neither): their decompositions are checked for values only
_NOT_DIFFERENTIABLE = {"aten.floor_divide.default", "aten.heaviside.default"}


def test_every_decomposition_has_samples():
    # (out= overloads' decompositions are derived: tests/test_decomp_out_variants.py)
    assert sorted(SAMPLES) == sorted(str(op) for op in decomposition_table if op._kind != "out")


def _is_float(a) -> bool:
    return isinstance(a, tm.Tensor) and a.dtype.is_floating_point


def _float_leaves(args):
    """The floating-point tensors of ``args``, those in a list (``stack``'s) too."""
    return [t for a in args for t in (a if isinstance(a, list) else [a]) if _is_float(t)]


def _with_leaves(args, leaves):
    """``args`` with its floating-point tensors replaced, in order, by ``leaves``."""
    it = iter(leaves)
    return tuple([next(it) if _is_float(t) else t for t in a] if isinstance(a, list) else next(it) if _is_float(a)
                 else a for a in args)


def test_every_differentiable_decomposition_has_a_sample_with_a_gradient():
    # factories, comparisons, detach and the ops without a derivative compare values only
    values_only = {"aten.arange.default", "aten.arange.start", "aten.count_nonzero.default", "aten.detach.default",
                   "aten.empty_like.default", "aten.eye.default", "aten.eye.m", "aten.isneginf.default",
                   "aten.isposinf.default", "aten.ones.default", "aten.ones_like.default", "aten.zeros.default",
                   "aten.zeros_like.default"}
    for name, samples in SAMPLES.items():
        if name in _NOT_DIFFERENTIABLE:  # gradients not implemented, in PyTorch neither
            continue
        overload = next(op for op in decomposition_table if str(op) == name)
        differentiable = False
        for args, kwargs in samples:
            kwargs = {k: v for k, v in kwargs.items() if k != "values only"}
            inputs = [a.detach().requires_grad_() for a in _float_leaves(args)]
            out = overload(*_with_leaves(args, inputs), **kwargs)
            differentiable |= (out[0] if isinstance(out, (tuple, list)) else out).requires_grad
        assert differentiable == (name not in values_only), name


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_decomposition_matches_its_op_in_values_and_gradients(name):
    overload = next(op for op in decomposition_table if str(op) == name)
    decomposition = decomposition_table[overload]
    for args, kwargs in SAMPLES[name]:
        kwargs = dict(kwargs)
        values_only = kwargs.pop("values only", False)
        expected = overload(*args, **kwargs)
        got = decomposition(*args, **kwargs)
        if got is NotImplemented:  # arguments the decomposition leaves to the op
            continue
        expected_all = expected if isinstance(expected, (tuple, list)) else (expected,)
        got_all = got if isinstance(got, (tuple, list)) else (got,)
        for e, g in zip(expected_all, got_all, strict=True):
            tm.testing.assert_close(g, e, equal_nan=True)
        inputs = [a.detach().requires_grad_() for a in _float_leaves(args)]
        if not inputs or values_only or name in _NOT_DIFFERENTIABLE:
            continue
        args = _with_leaves(args, inputs)
        outputs = [o for o in ((overload(*args, **kwargs),) if not isinstance(expected, (tuple, list))
                               else overload(*args, **kwargs)[:1])]
        if not outputs[0].requires_grad:
            continue
        weight = _f(*outputs[0].shape, seed=7)
        expected_grads = tm.autograd.grad((outputs[0] * weight).sum(), inputs, allow_unused=True)
        got_out = decomposition(*args, **kwargs)
        got_out = got_out[0] if isinstance(got_out, (tuple, list)) else got_out
        got_grads = tm.autograd.grad((got_out * weight).sum(), inputs, allow_unused=True)
        for e, g in zip(expected_grads, got_grads):
            if e is None or g is None:  # not reached (or through a comparison only): zero
                assert (e if g is None else g) is None or not (e if g is None else g).abs().sum()
            else:
                tm.testing.assert_close(g, e, equal_nan=True)


# -- PyTorch as the oracle ---------------------------------------------------------------------

def _targets(gm):
    """The call_function targets of a graph (ours or PyTorch's) as text, getitem as "getitem"."""
    return ["getitem" if n.target is operator.getitem else str(n.target)
            for n in gm.graph.nodes if n.op == "call_function"]


@pytest.mark.torch
def test_joint_mlp_graph_has_pytorchs_ops_in_pytorchs_order():
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    mlp = _mlp()
    torch_mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                                    torch.nn.ReLU(), torch.nn.Linear(16, 4))
    torch_params = list(torch_mlp.parameters())

    def torch_step(x, y):
        loss = torch.nn.functional.cross_entropy(torch_mlp(x), y)
        return loss, torch.autograd.grad(loss, torch_params)

    ours = make_fx(_step(mlp))(tm.randn(5, 8), tm.tensor([0, 3, 1, 2, 3]))
    theirs = torch_make_fx(torch_step)(torch.randn(5, 8), torch.tensor([0, 3, 1, 2, 3]))
    assert _targets(ours) == _targets(theirs)
    assert [n.op for n in ours.graph.nodes] == [n.op for n in theirs.graph.nodes]
    assert [n.name for n in ours.graph.nodes if n.op != "call_function" or "backward" not in str(n.target)] == \
        [n.name for n in theirs.graph.nodes if n.op != "call_function" or "backward" not in str(n.target)]


_ORACLE_FUNCTIONS = {
    "factories": lambda L, x: x + L.randn(3) + L.zeros(3) + L.arange(3) + L.full((3,), 2.0) + L.tensor([1., 2., 3.]),
    "softmax": lambda L, x: L.nn.functional.softmax(x, -1) * L.nn.functional.log_softmax(x, 0),
    "reductions": lambda L, x: x.sum(0, keepdim=True) + x.mean() + x.amax(1, keepdim=True),
    "views": lambda L, x: x.t().reshape(9).unsqueeze(0).expand(2, 9)[:, 1:].clone(),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (3,)).relu(),
    "casts": lambda L, x: x.to(L.float64).sum(dim=0, keepdim=True),
    "indexing": lambda L, x: x[L.tensor([0, 2])][:, 1],
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_ORACLE_FUNCTIONS))
def test_graphs_and_code_match_pytorch(name):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    fn = _ORACLE_FUNCTIONS[name]
    ours = make_fx(lambda x: fn(tm, x))(tm.ones(3, 3))
    theirs = torch_make_fx(lambda x: fn(torch, x))(torch.ones(3, 3))
    assert _targets(ours) == _targets(theirs)
    assert ours.code == theirs.code.replace("torch.", "tensormodes.")  # the same code, letter for letter


@pytest.mark.torch
def test_core_decomposition_keys_are_pytorchs():
    from torch._decomp import core_aten_decompositions as torch_core
    from torch._decomp import decomposition_table as torch_table

    theirs = {str(k) for k in torch_core()}
    ours = {str(k) for k in core_aten_decompositions()}
    assert ours <= theirs
    # every decomposition not marked core is in PyTorch's full table, but not its core set
    assert {str(k) for k in decomposition_table} - ours <= {str(k) for k in torch_table} - theirs


def _models(L):
    nn = L.nn
    return {
        "cnn": (lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                      nn.Linear(64, 3)),
                lambda: (L.randn(2, 1, 8, 8), L.tensor([0, 2])), "cross_entropy"),
        "embedding_layer_norm_gelu": (lambda: nn.Sequential(nn.Embedding(10, 8), nn.LayerNorm(8), nn.GELU(),
                                                            nn.Linear(8, 3)),
                                      lambda: (L.tensor([[1, 2], [3, 4]]), L.randn(2, 2, 3)), "mse_loss"),
        "sigmoid_tanh_silu_softmax": (lambda: nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.Linear(4, 4), nn.Tanh(),
                                                            nn.Linear(4, 4), nn.SiLU(), nn.Softmax(-1),
                                                            nn.Linear(4, 2)),
                                      lambda: (L.randn(3, 4), L.randn(3, 2)), "mse_loss"),
    }


def _grad_step(library, model, loss_fn):
    params = list(model.parameters())

    def step(x, y):
        loss = loss_fn(model(x), y)
        return loss, library.autograd.grad(loss, params)

    return step


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_models(tm)))
def test_joint_graphs_match_pytorch(name):
    """The whole joint graph — forward, the loss's seed, backward — is PyTorch's op for op, and its
    code letter for letter (the CNN's backward too: convolution_backward with the bias's sizes and a
    getitem per result, max_pool2d_with_indices_backward with int[2] lists)."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    graphs = []
    for library, tracer in ((tm, make_fx), (torch, torch_make_fx)):
        make_model, make_data, loss_name = _models(library)[name]
        library.manual_seed(0)
        model = make_model()
        loss_fn = getattr(library.nn.functional, loss_name)
        graphs.append(tracer(_grad_step(library, model, loss_fn))(*make_data()))
    ours, theirs = graphs
    assert _targets(ours) == _targets(theirs)
    assert ours.code == theirs.code.replace("torch.", "tensormodes.")


def test_public_paths_and_module_stack():
    assert tm.fx.experimental.proxy_tensor.make_fx is make_fx
    assert tm._decomp.get_decompositions is get_decompositions
    model = tm.nn.Sequential(tm.nn.Linear(3, 2), tm.nn.Sequential(tm.nn.ReLU()))
    gm = make_fx(model, record_module_stack=True)(tm.ones(1, 3))
    seq, lin, relu = ("tensormodes.nn.modules." + name for name in (
        "container.Sequential", "linear.Linear", "activation.ReLU"))
    linear_stack = {"": ("", seq), "0": ("0", lin)}
    relu_stack = {"": ("", seq), "1": ("1", seq), "1.0": ("1.0", relu)}
    # PyTorch's format: path -> (path, "module.Class"), the root's path ''; get_attr nodes too
    assert {n.name: n.meta.get("nn_module_stack") for n in gm.graph.nodes} == {
        "arg0_1": None, "_param_constant0": linear_stack, "t": linear_stack, "_param_constant1": linear_stack,
        "addmm": linear_stack, "relu": relu_stack, "detach": relu_stack, "output": None}
    assert code(gm).splitlines()[0] == "def forward(self, arg0_1):"  # a module has no signature to name
    assert "nn_module_stack" not in next(iter(make_fx(model)(tm.ones(1, 3)).graph.nodes)).meta

    def f(x):
        return F.layer_norm(model(x), (2,))

    # a function: no stacks (PyTorch's rule) unless it names its module as _orig_mod; ops outside
    # the module calls get an empty stack
    traced = make_fx(f, record_module_stack=True)(tm.ones(1, 3))
    assert all("nn_module_stack" not in n.meta for n in traced.graph.nodes)
    f._orig_mod = model
    traced = make_fx(f, record_module_stack=True)(tm.ones(1, 3))
    stacks = {n.name: n.meta.get("nn_module_stack") for n in traced.graph.nodes}
    assert stacks["relu"] == relu_stack and stacks["native_layer_norm"] == stacks["getitem_2"] == {}


@pytest.mark.torch
def test_module_stacks_are_pytorchs():
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def program(library):
        model = library.nn.Sequential(library.nn.Linear(3, 2), library.nn.Sequential(library.nn.ReLU()))

        def f(x):
            return library.nn.functional.layer_norm(model(x), (2,))

        f._orig_mod = model
        return f

    graphs = []
    for library, tracer in ((tm, make_fx), (torch, torch_make_fx)):
        f = program(library)
        gm = tracer(f, record_module_stack=True)(library.ones(1, 3))
        graphs.append([(n.op, n.name, {k: (p, c.replace("tensormodes.", "torch.")) for k, (p, c) in
                                       n.meta["nn_module_stack"].items()} if "nn_module_stack" in n.meta else None)
                       for n in gm.graph.nodes])
    assert graphs[0] == graphs[1]


def test_isolated_graph_inside_a_trace():
    from tensormodes.fx.experimental.proxy_tensor import get_isolated_graphmodule

    inner = []

    def f(x):
        inner.append(get_isolated_graphmodule(lambda t, scale: t * scale, (x,), {"scale": 3}))
        return x + 1

    outer = make_fx(f)(tm.ones(2))
    assert [str(n.target) for n in outer.graph.nodes if n.op == "call_function"] == ["aten.add.Tensor"]
    assert [str(n.target) for n in inner[0].graph.nodes if n.op == "call_function"] == ["aten.mul.Tensor"]


def test_tuple_results_named_or_holding_none_get_a_getitem_per_item():
    # PyTorch's make_fx makes a getitem for every item of a tuple result: a named tuple's
    # (max.dim), a None's (convolution_backward without the input's gradient)
    gm = make_fx(lambda x: x.max(0).values)(tm.tensor([[1.0, 5.0], [3.0, 2.0]]))
    assert code(gm) == """\
def forward(self, x_1):
    max_1 = tensormodes.ops.aten.max.dim(x_1, 0);  x_1 = None
    getitem = max_1[0]
    getitem_1 = max_1[1];  max_1 = getitem_1 = None
    return getitem"""
    assert gm(tm.tensor([[0.0, 7.0], [4.0, 1.0]])).tolist() == [4.0, 7.0]

    def conv_grads(go, x, w):
        return aten.convolution_backward.default(go, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                                 [False, True, True])

    gm = make_fx(conv_grads)(tm.randn(2, 4, 8, 8), tm.randn(2, 1, 8, 8), tm.randn(4, 1, 3, 3))
    assert code(gm).splitlines()[2:] == [
        "    getitem = convolution_backward[0];  getitem = None",
        "    getitem_1 = convolution_backward[1]",
        "    getitem_2 = convolution_backward[2];  convolution_backward = None",
        "    return (None, getitem_1, getitem_2)"]


def test_autograd_grad_computes_only_the_gradients_asked_for():
    # the engine narrows a node's needs_input_grad to the edges leading to the inputs, as PyTorch's
    # engine masks the outputs not needed: no sum and view for the bias
    lin = tm.nn.Linear(4, 4)

    def f(x):
        return tm.autograd.grad(lin(x).sum(), [lin.weight])

    # PyTorch 2.13's make_fx of the same function
    assert _targets(make_fx(f)(tm.randn(2, 4))) == [
        "aten.t.default", "aten.addmm.default", "aten.sum.default", "aten.ones_like.default", "aten.expand.default",
        "aten.t.default", "aten.mm.default", "aten.t.default", "aten.t.default"]


def test_pow_backward_reads_a_number_exponent_as_a_double():
    def f(x):
        return tm.autograd.grad((x ** 2).sum(), x)

    # PyTorch 2.13's make_fx of the same function, letter for letter
    assert code(make_fx(f)(tm.ones(3, requires_grad=True))) == """\
def forward(self, x_1):
    pow_1 = tensormodes.ops.aten.pow.Tensor_Scalar(x_1, 2)
    sum_1 = tensormodes.ops.aten.sum.default(pow_1);  pow_1 = None
    ones_like = tensormodes.ops.aten.ones_like.default(sum_1, pin_memory = False, memory_format = tensormodes.preserve_format);  sum_1 = None
    expand = tensormodes.ops.aten.expand.default(ones_like, [3]);  ones_like = None
    pow_2 = tensormodes.ops.aten.pow.Tensor_Scalar(x_1, 1.0);  x_1 = None
    mul = tensormodes.ops.aten.mul.Scalar(pow_2, 2.0);  pow_2 = None
    mul_1 = tensormodes.ops.aten.mul.Tensor(expand, mul);  expand = mul = None
    return (mul_1,)"""  # noqa: E501


def test_saved_outputs_are_the_forward_nodes_not_constants():
    # layer norm's backward reads the mean and rstd its forward returned: nodes of the graph (they
    # were baked in as constants of the traced input, so another input got stale statistics)
    tm.manual_seed(0)
    norm = tm.nn.LayerNorm(4)
    params = list(norm.parameters())

    def step(x):
        return tm.autograd.grad(norm(x).pow(2).sum(), [x, *params])

    gm = make_fx(step)(tm.randn(3, 4, requires_grad=True))
    assert not [n.target for n in gm.graph.nodes if n.op == "get_attr" and "tensor_constant" in n.target]
    backward = next(n for n in gm.graph.nodes if n.target is aten.native_layer_norm_backward.default)
    assert [a.name for a in backward.args[3:5]] == ["getitem_1", "getitem_2"]
    x = (tm.randn(3, 4) * 5 + 2).requires_grad_()
    assert all(tm.equal(a, b) for a, b in zip(gm(x), step(x)))


# Decompositions whose ops differ from PyTorch's decomposition of the same op, each for a reason:
# trace reaches diagonal_copy, which this library has no aten form of (its diagonal is the view);
# PyTorch's sinc divides sin(0) by 0 and masks the NaN, so its gradient at 0 is NaN (the op's is 0).
DECOMPOSITIONS_DIFFERING_FROM_PYTORCH = {"aten.sinc.default"}  # (PyTorch's gradient at 0 is NaN)


@pytest.mark.torch
def test_decompositions_record_pytorchs_ops():
    """Each decomposition, traced alone on its samples, records the ops PyTorch's decomposition of
    the op records (in order), except the listed ones; a fixed one must leave the list."""
    import numpy as np
    import torch
    from torch._decomp import decomposition_table as torch_table
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def to_torch(value):
        if isinstance(value, tm.Tensor):
            return torch.from_numpy(np.array(value.numpy()))
        if isinstance(value, tm.dtype):
            return getattr(torch, str(value).removeprefix("tensormodes."))
        if isinstance(value, (list, tuple)):
            return type(value)(to_torch(v) for v in value)
        if isinstance(value, dict):
            return {k: to_torch(v) for k, v in value.items()}
        return value

    differing = set()
    for overload, ours in decomposition_table.items():
        name = str(overload)
        if overload._kind == "out":
            continue  # derived from the functional one (tests/test_decomp_out_variants.py)
        theirs_op = getattr(getattr(torch.ops.aten, overload.overloadpacket.__name__), overload._overloadname)
        theirs = torch_table.get(theirs_op)
        if theirs is None:
            continue  # PyTorch decomposes it as a composite (fliplr, inner, square ...), not in its table
        for args, kwargs in SAMPLES[name][:2]:
            kwargs = {k: v for k, v in kwargs.items() if k != "values only"}
            torch_args, torch_kwargs = to_torch(args), to_torch(kwargs)
            graphs = [make_fx(functools.partial(ours, *args, **kwargs), decomposition_table={overload: ours})(),
                      torch_make_fx(functools.partial(theirs, *torch_args, **torch_kwargs),
                                    decomposition_table={theirs_op: theirs})()]
            if _targets(graphs[0]) != [t for t in _targets(graphs[1]) if not t.startswith("<class")]:
                differing.add(name)
    assert sorted(differing) == sorted(DECOMPOSITIONS_DIFFERING_FROM_PYTORCH)


def test_decompositions_record_pytorchs_sequences_literally():
    # PyTorch 2.13's make_fx of its decomposition of each op, on the same arguments
    x, y = _f(2, 3), _f(2, 3, seed=1)
    cases = {
        aten.addmm.default: ((_f(3), _f(2, 4), _f(4, 3)), ["aten.mm.default", "aten.mul.Tensor", "aten.mul.Tensor",
                                                         "aten.add.Tensor"]),
        aten.lerp.Scalar: ((x, y, 0.75), ["aten.new_full.default", "aten.abs.default", "aten.ge.Scalar",
                                          "aten.sub.Tensor", "aten.where.self", "aten.where.self", "aten.sub.Tensor",
                                          "aten.mul.Tensor", "aten.add.Tensor"]),
        aten.stack.default: (([x, y], 1), ["aten.cat.default", "aten.view.default"]),
        aten.split.Tensor: ((_f(5, 2), 2), ["aten.split_with_sizes.default", "getitem", "getitem", "getitem"]),
        aten.unbind.int: ((x,), ["aten.slice.Tensor", "aten.slice.Tensor", "aten.squeeze.dim", "aten.squeeze.dim"]),
        aten.native_layer_norm.default: ((x, [3], None, None, 1e-5), [
            "aten.var_mean.correction", "getitem", "getitem", "aten.add.Tensor", "aten.rsqrt.default",
            "aten.sub.Tensor", "aten.mul.Tensor"]),
        aten.vdot.default: ((_f(3), _f(3, seed=1)), ["aten.dot.default"]),
        aten.trace.default: ((_f(3, 4),), ["aten.diagonal_copy.default", "aten.sum.default"]),
    }
    for op, (args, expected) in cases.items():
        gm = make_fx(functools.partial(decomposition_table[op], *args))()
        assert _targets(gm) == expected, op
    # the split's sizes and the stack's view as PyTorch passes them
    gm = make_fx(lambda t: decomposition_table[aten.split.Tensor](t, 2))(_f(5, 2))
    assert "split_with_sizes.default(t_1, [2, 2, 1])" in gm.code
    assert tm.equal(decomposition_table[aten.stack.default]([x, y], 1), tm.stack([x, y], 1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_decompositions_compute_in_float32_as_pytorchs(dtype):
    # PyTorch's pw_cast_for_opmath: each half input converted to float32, the result converted back
    dtype = getattr(tm, dtype)
    m = _f(2, 2).to(dtype)
    gm = make_fx(lambda a: decomposition_table[aten.addmm.default](a, a, a))(m)
    assert _targets(gm) == ["aten._to_copy.default"] * 3 + ["aten.mm.default", "aten.mul.Tensor", "aten.mul.Tensor",
                                                            "aten.add.Tensor", "aten._to_copy.default"]
    out = decomposition_table[aten.addmm.default](m, m, m)
    assert out.dtype == dtype
    tm.testing.assert_close(out, aten.addmm.default(m, m, m))
    norm = decomposition_table[aten.native_layer_norm.default](m, [2], None, None, 1e-5)
    assert [t.dtype for t in norm] == [dtype] * 3
    for got, expected in zip(norm, aten.native_layer_norm.default(m, [2], None, None, 1e-5)):
        tm.testing.assert_close(got, expected)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["aten.addmm.default", "aten.native_layer_norm.default",
                                  "aten.smooth_l1_loss.default", "aten.binary_cross_entropy.default"])
def test_half_decompositions_record_pytorchs_ops(name):
    import numpy as np
    import torch
    from torch._decomp import decomposition_table as torch_table
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    overload = next(op for op in decomposition_table if str(op) == name)
    theirs_op = getattr(getattr(torch.ops.aten, overload.overloadpacket.__name__), overload._overloadname)
    args, kwargs = SAMPLES[name][0]
    ours_args = tuple(a.to(tm.float16) if isinstance(a, tm.Tensor) else a for a in args)
    theirs_args = tuple(torch.from_numpy(np.array(a.numpy())).to(torch.float16) if isinstance(a, tm.Tensor) else a
                        for a in args)
    ours = make_fx(functools.partial(decomposition_table[overload], *ours_args, **kwargs))()
    theirs = torch_make_fx(functools.partial(torch_table[theirs_op], *theirs_args, **kwargs))()
    assert _targets(ours) == [t for t in _targets(theirs) if not t.startswith("<class")]
