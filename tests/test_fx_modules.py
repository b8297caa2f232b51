"""Tracing modules: the tracer sees module calls through ``nn.modules.module.intercept_module_calls``
(nothing is patched); leaf modules become call_module nodes, parameters and buffers get_attr nodes,
and a GraphModule is an ``nn.Module`` owning what its graph reads."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes import fx, nn
from tensormodes.nn import Parameter


class Linear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = Parameter(tm.randn(n_out, n_in))
        self.bias = Parameter(tm.zeros(n_out))

    def forward(self, x):
        return x @ self.weight.t() + self.bias


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = Linear(3, 3)
        self.register_buffer("scale", tm.tensor([2.0]))

    def forward(self, x):
        return self.lin(x).relu() * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = Linear(3, 2)
        self.gain = Parameter(tm.ones(1))

    def forward(self, x):
        return self.head(self.block(x)) * self.gain + tm.randn(2)


class LinearIsLeaf(fx.Tracer):
    def is_leaf_module(self, m, module_qualified_name):
        return isinstance(m, Linear)


def _same_outputs(net, gm):
    x = tm.randn(4, 3)
    tm.manual_seed(5)
    expected = net(x)
    tm.manual_seed(5)
    np.testing.assert_array_equal(gm(x).detach().numpy(), expected.detach().numpy())


def test_leaf_modules_are_call_module_nodes_and_parameters_get_attr_nodes():
    tm.manual_seed(0)
    net = Net()
    graph = LinearIsLeaf().trace(net)
    assert str(graph) == """\
graph():
    %x : [num_users=1] = placeholder[target=x]
    %block_lin : [num_users=1] = call_module[target=block.lin](args = (%x,), kwargs = {})
    %relu : [num_users=1] = call_method[target=relu](args = (%block_lin,), kwargs = {})
    %block_scale : [num_users=1] = get_attr[target=block.scale]
    %mul : [num_users=1] = call_function[target=operator.mul](args = (%relu, %block_scale), kwargs = {})
    %head : [num_users=1] = call_module[target=head](args = (%mul,), kwargs = {})
    %gain : [num_users=1] = get_attr[target=gain]
    %mul_1 : [num_users=1] = call_function[target=operator.mul](args = (%head, %gain), kwargs = {})
    %randn : [num_users=1] = call_function[target=tensormodes.randn](args = (2,), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%mul_1, %randn), kwargs = {})
    return add"""
    gm = fx.GraphModule(net, graph, "Net")
    assert gm.block.lin is net.block.lin and gm.head is net.head  # owns the referenced submodules
    assert gm.block.scale is net.block.scale and gm.gain is net.gain
    assert type(gm.block) is nn.Module  # a holder of what the graph references, not a copy of Block
    _same_outputs(net, gm)


def test_tracing_through_non_leaf_modules():
    tm.manual_seed(0)
    net = Net()
    gm = fx.symbolic_trace(net)
    assert type(gm).__name__ == "Net"
    assert not [n for n in gm.graph.nodes if n.op == "call_module"]
    targets = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert targets == ["block.lin.weight", "block.lin.bias", "block.scale", "head.weight", "head.bias", "gain"]
    assert [n.target for n in gm.graph.nodes if n.op == "call_method"] == ["t", "relu", "t"]
    _same_outputs(net, gm)


def test_getattr_hook_is_called_once_per_parameter():
    seen = []

    class Recording(fx.Tracer):
        def getattr(self, attr, attr_val, parameter_proxy_cache):
            seen.append(attr)
            return super().getattr(attr, attr_val, parameter_proxy_cache)

    class UsesTwice(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(tm.ones(2))

        def forward(self, x):
            return x * self.w + self.w

    graph = Recording().trace(UsesTwice())
    assert [n.op for n in graph.nodes] == ["placeholder", "get_attr", "call_function", "call_function", "output"]
    assert seen == ["w", "w"]


def test_module_outside_the_root_cannot_be_called():
    stray = Linear(3, 3)

    class CallsStray(nn.Module):
        def forward(self, x):
            return stray(x)

    with pytest.raises(NameError, match="module is not installed as a submodule"):
        LinearIsLeaf().trace(CallsStray())


def test_returning_a_parameter_reads_it_through_get_attr():
    class ReturnsWeight(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(tm.ones(2))

        def forward(self, x):
            return self.w, self.w.shape

    gm = fx.symbolic_trace(ReturnsWeight())
    assert [(n.op, n.target) for n in gm.graph.nodes][1:3] == [("get_attr", "w"), ("call_function", getattr)]
    weight, shape = gm(tm.zeros(1))
    assert weight is gm.w and shape == (2,)
