"""tensormodes.fx graph editing, Interpreter / Transformer, passes, replace_pattern and pictures."""

from __future__ import annotations

import operator
import shutil
import sys

import numpy as np
import pytest

import tensormodes as tm
from tensormodes import fx, nn
from tensormodes.fx import passes


def _chain(n: int):
    def f(x):
        for _ in range(n):
            x = x + 1
        return x
    return f


# -- editing ---------------------------------------------------------------------------------


def test_nodes_is_a_live_doubly_linked_list():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    b = g.call_method("neg", (a,))
    out = g.output(b)
    assert (x.next, a.prev, out.prev, out.next.next) == (a, x, b, x)
    nodes = g.nodes
    c = g.call_method("sigmoid", (x,))  # appended after the output, visible through the same view
    assert list(nodes)[-1] is c and len(nodes) == 5
    out.prepend(c)
    assert [n.name for n in g.nodes] == ["x", "add", "neg", "sigmoid", "output"]
    b.append(a)  # moving a node
    assert [n.name for n in g.nodes] == ["x", "neg", "add", "sigmoid", "output"]
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    assert [n.name for n in reversed(g.nodes)] == ["output", "sigmoid", "add", "neg", "x"]


def test_users_follow_every_change_of_arguments():
    g = fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    a = g.call_function(operator.add, (x, [x, {"k": y}]))
    assert list(x.users) == [a] and list(y.users) == [a] and a.all_input_nodes == [x, y]
    a.args = (y, 2)
    assert not x.users and list(y.users) == [a]
    a.kwargs = {"alpha": x}
    assert list(x.users) == [a]
    a.replace_input_with(x, y)
    assert not x.users and a.kwargs == {"alpha": y}
    a.update_arg(1, x)
    assert a.args == (y, x)


def test_replace_all_uses_with_and_erase():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_method("relu", (x,))
    b = g.call_method("neg", (x,))
    out = g.output((a, a))
    assert a.replace_all_uses_with(b) == [out]
    assert out.args == ((b, b),) and not a.users
    with pytest.raises(RuntimeError, match=r"Tried to erase Node b|Tried to erase Node neg but it still had 1 users"):
        g.erase_node(b)
    g.erase_node(a)
    with pytest.raises(RuntimeError, match="already erased"):
        g.erase_node(a)
    with pytest.raises(ValueError, match="which was erased from the graph"):
        g.call_method("sigmoid", (a,))
    g.lint()
    assert g.call_method("relu", (x,)).name == "relu"  # the erased node's name is free again


def test_inserting_before_and_after():
    g = fx.Graph()
    x = g.placeholder("x")
    out = g.output(x)
    with g.inserting_before(out):
        a = g.call_method("neg", (x,))
        b = g.call_method("sigmoid", (a,))
    with g.inserting_after(x):
        c = g.call_method("exp", (x,))
        d = g.call_method("log", (c,))
    assert [n.name for n in g.nodes] == ["x", "exp", "log", "neg", "sigmoid", "output"]
    assert (b.prev, d.prev) == (a, c)
    g.create_node("call_method", "relu", (x,))  # the insertion point is restored: at the end
    assert list(g.nodes)[-1].name == "relu"


def test_node_validation_errors():
    g = fx.Graph()
    with pytest.raises(ValueError, match="Node op must be one of"):
        g.create_node("call_everything", "x")
    with pytest.raises(ValueError, match="but a Callable is expected"):
        g.call_function("not callable")
    with pytest.raises(ValueError, match="but a str is expected"):
        g.call_method(len)
    other = fx.Graph().placeholder("z")
    g.call_method("neg", (other,))  # accepted, as torch.fx; lint rejects it
    with pytest.raises(RuntimeError, match="Argument 'z' of Node 'neg' does not belong to this Graph"):
        g.lint()


def test_graph_copy_and_node_copy():
    gm = fx.symbolic_trace(lambda x, y: (x * y).sum())
    g = fx.Graph()
    a = g.placeholder("a")
    b = g.placeholder("b")
    old = [n for n in gm.graph.nodes if n.op == "placeholder"]
    result = g.graph_copy(gm.graph, {old[0]: a, old[1]: b})
    g.output(result)
    g.lint()
    assert fx.GraphModule({}, g)(tm.tensor([2.0]), tm.tensor([3.0])).item() == 6.0


def test_eliminate_dead_code_keeps_random_and_inplace_nodes():
    def f(x):
        unused = x * 2  # noqa: F841
        tm.randn(3)  # advances the generator: kept
        x.add_(1)  # writes: kept
        return x.exp()

    gm = fx.symbolic_trace(f)
    assert passes.dead_code_elimination(gm)
    assert [n.name for n in gm.graph.nodes] == ["x", "randn", "add_", "exp", "output"]
    assert not passes.dead_code_elimination(gm)


def test_long_graphs_need_no_recursion():
    n = 10_000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(500)
    try:
        gm = fx.symbolic_trace(_chain(n))
        gm.graph.lint()
        assert fx.Interpreter(gm).run(tm.zeros(1)).item() == n
        assert gm(tm.zeros(1)).item() == n
        assert not passes.common_subexpression_elimination(gm)
        assert passes.fold_constants(gm) is False
        assert gm.graph.eliminate_dead_code() is False
        assert len(gm.graph.to_dot()) > n
    finally:
        sys.setrecursionlimit(limit)
    names = [node.name for node in gm.graph.nodes]
    assert names[1:4] == ["add", "add_1", "add_2"] and names[-2] == f"add_{n - 1}"


# -- Interpreter and Transformer ------------------------------------------------------------


def test_interpreter_hooks_see_every_node():
    seen = []

    class Recording(fx.Interpreter):
        def run_node(self, n):
            seen.append((n.op, n.name))
            return super().run_node(n)

    gm = fx.symbolic_trace(lambda x: tm.ones(2) + x.relu())
    result = Recording(gm).run(tm.tensor([-1.0, 2.0]))
    assert result.tolist() == [1.0, 3.0]
    assert seen == [("placeholder", "x"), ("call_function", "ones"), ("call_method", "relu"),
                    ("call_function", "add"), ("output", "output")]


def test_interpreter_garbage_collects_and_uses_initial_env():
    gm = fx.symbolic_trace(lambda x: (x + 1) * 2)
    interpreter = fx.Interpreter(gm)
    interpreter.run(tm.ones(1))
    assert [n.name for n in interpreter.env] == ["output"]
    add = [n for n in gm.graph.nodes if n.name == "add"][0]
    assert fx.Interpreter(gm).run(tm.ones(1), initial_env={add: tm.tensor([10.0])}).tolist() == [20.0]


def test_interpreter_errors_name_the_node():
    gm = fx.symbolic_trace(lambda x, w: x @ w)
    with pytest.raises(RuntimeError) as info:
        fx.Interpreter(gm).run(tm.ones(2, 3), tm.ones(2, 3))
    assert "While executing %matmul" in "\n".join(getattr(info.value, "__notes__", []))
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter w"):
        fx.Interpreter(gm).run(tm.ones(2, 3))


def test_transformer_rewrites_targets():
    class ReluToSigmoid(fx.Transformer):
        def call_method(self, target, args, kwargs):
            return super().call_method("sigmoid" if target == "relu" else target, args, kwargs)

    gm = fx.symbolic_trace(lambda x: x.relu() * tm.ones(2))
    new = ReluToSigmoid(gm).transform()
    x = tm.tensor([0.0, 1.0])
    np.testing.assert_allclose(new(x).numpy(), x.sigmoid().numpy())
    assert "sigmoid = x.sigmoid()" in new.code and "ones = tensormodes.ones(2)" in new.code


def test_transformer_keeps_attributes():
    weight = tm.tensor([2.0, 3.0])
    gm = fx.symbolic_trace(lambda x: x * weight)
    new = fx.Transformer(gm).transform()
    assert new(tm.ones(2)).tolist() == [2.0, 3.0]
    assert new._tensor_constant0 is weight


# -- passes -----------------------------------------------------------------------------------


def test_cse_merges_pure_ops_only():
    def f(x):
        a = x.exp() + x.exp()
        b = tm.randn(2) + tm.randn(2)
        c = tm.ones(2) + tm.ones(2)
        return a, b, c

    gm = fx.symbolic_trace(f)
    assert passes.common_subexpression_elimination(gm)
    names = [n.name for n in gm.graph.nodes]
    assert "exp_1" not in names and "ones_1" not in names
    assert "randn" in names and "randn_1" in names
    tm.manual_seed(0)
    expected = f(tm.ones(2))
    tm.manual_seed(0)
    for e, a in zip(expected, gm(tm.ones(2))):
        assert e.tolist() == a.tolist()


def test_cse_never_merges_across_writes():
    def f(x):
        a = tm.zeros(2)
        b = tm.zeros(2)
        a.add_(1)
        c = x + 1
        x.mul_(2)
        d = x + 1
        return a, b, c, d

    gm = fx.symbolic_trace(f)
    passes.common_subexpression_elimination(gm)
    a, b, c, d = gm(tm.ones(2))
    assert a.tolist() == [1.0, 1.0] and b.tolist() == [0.0, 0.0]
    assert c.tolist() == [2.0, 2.0] and d.tolist() == [3.0, 3.0]


def test_constant_folding():
    gm = fx.symbolic_trace(lambda x: x * tm.arange(3.0).exp().sum() + tm.randn(3) + tm.ones(3).shape[0])
    assert passes.fold_constants(gm)
    ops = [(n.op, n.name) for n in gm.graph.nodes]
    assert ("get_attr", "_folded_constant0") in ops and ("call_function", "randn") in ops
    assert "getattr_1" not in gm.code and "+ 3" in gm.code  # a Python scalar is folded inline
    tm.manual_seed(0)
    expected = tm.ones(3) * tm.arange(3.0).exp().sum() + tm.randn(3) + 3
    tm.manual_seed(0)
    np.testing.assert_array_equal(gm(tm.ones(3)).numpy(), expected.numpy())


def test_constant_folding_leaves_written_values_alone():
    def f(x):
        buffer = tm.zeros(2)
        buffer.add_(x)
        return buffer * 2

    gm = fx.symbolic_trace(f)
    assert not passes.fold_constants(gm)
    assert gm(tm.ones(2)).tolist() == [2.0, 2.0]
    assert gm(tm.ones(2)).tolist() == [2.0, 2.0]  # a fresh buffer each run


def test_shape_prop_records_shapes_and_dtypes():
    gm = fx.symbolic_trace(lambda x, i: (x.sum(1), x[i].double(), tm.max(x, 0)))
    passes.ShapeProp(gm).propagate(tm.ones(2, 3), tm.tensor([1]))
    meta = {n.name: n.meta.get("tensor_meta") for n in gm.graph.nodes}
    assert tuple(meta["sum_1"].shape) == (2,) and meta["sum_1"].dtype is tm.float32
    assert tuple(meta["double"].shape) == (1, 3) and meta["double"].dtype is tm.float64
    assert meta["i"].dtype is tm.int64 and meta["i"].stride == (1,)
    values, indices = meta["max_1"]
    assert (tuple(values.shape), indices.dtype) == ((3,), tm.int64)


# -- replace_pattern --------------------------------------------------------------------------


def test_replace_pattern_replaces_every_match():
    def f(x, y):
        a = (x + y).relu()
        b = (a + 1).relu()
        return a * b

    def pattern(p, q):
        return (p + q).relu()

    def replacement(p, q):
        return tm.clamp(p + q, min=0)

    gm = fx.symbolic_trace(f)
    x, y = tm.tensor([-3.0, 1.0]), tm.tensor([1.0, 1.0])
    expected = f(x, y)
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert all(m.anchor.target == "relu" for m in matches)
    assert [n.target for n in gm.graph.nodes if n.op == "call_method"] == []
    assert gm(x, y).tolist() == expected.tolist()
    gm.graph.lint()


def test_replace_pattern_skips_matches_whose_inside_is_used_elsewhere():
    def f(x):
        s = x + 1
        return s.relu(), s

    gm = fx.symbolic_trace(f)
    assert fx.replace_pattern(gm, lambda p: (p + 1).relu(), lambda p: (p + 1).clamp(min=0)) == []


def test_replace_pattern_checks_its_inputs():
    gm = fx.symbolic_trace(lambda x: x.relu())
    with pytest.raises(ValueError, match="the pattern takes 1 inputs but the replacement takes 2"):
        fx.replace_pattern(gm, lambda p: p.relu(), lambda p, q: p)
    with pytest.raises(ValueError, match="^replace_pattern: the pattern must return a value computed from its inputs"):
        fx.replace_pattern(gm, lambda p: (p, p), lambda p: p)
    message = "^replace_pattern: the pattern returns 2 values but the replacement returns 1$"
    with pytest.raises(ValueError, match=message):
        fx.replace_pattern(gm, lambda p: (p.relu(), p.sigmoid()), lambda p: p.tanh())


def test_replace_pattern_with_several_results_rewires_each_of_them():
    def f(x):
        a = x + 1
        b = x * 2
        return a.relu() + b.sigmoid()

    gm = fx.symbolic_trace(f)
    matches = fx.replace_pattern(gm, lambda p: (p + 1, p * 2), lambda p: (p - 1, p / 2))
    assert len(matches) == 1 and matches[0].anchor.target is operator.add
    assert [(n.op, n.target) for n in gm.graph.nodes][1:3] == [("call_function", operator.sub),
                                                               ("call_function", operator.truediv)]
    x = tm.tensor([3.0, -1.0])
    assert tm.equal(gm(x), (x - 1).relu() + (x / 2).sigmoid())


def test_replace_pattern_with_several_results_skips_a_match_it_cannot_place():
    def f(x, y):
        a = x + 1
        used_between = a * 3  # uses the first result before the second result's input exists
        z = y.exp()
        return used_between + z * 2

    gm = fx.symbolic_trace(f)
    assert fx.replace_pattern(gm, lambda p, q: (p + 1, q * 2), lambda p, q: (p - 1, q / 2)) == []


# -- pictures ---------------------------------------------------------------------------------


def test_render_dot_shows_op_target_and_shapes(tmp_path):
    gm = fx.symbolic_trace(lambda x: tm.relu(x) + tm.ones(2, 1))
    passes.ShapeProp(gm).propagate(tm.ones(3))
    path = gm.graph.render(str(tmp_path / "graph.dot"))
    text = (tmp_path / "graph.dot").read_text()
    assert path.endswith("graph.dot")
    assert text.startswith('digraph "graph" {')
    assert 'n1 [label="relu\\lop: call_function\\ltarget: tensormodes.relu\\l[3] tensormodes.float32\\l"' in text
    assert "n1 -> n3;" in text and "n2 -> n3;" in text
    assert "[2, 3] tensormodes.float32" in text


def test_dot_labels_escape_quotes_and_backslashes():
    g = fx.Graph()
    x = g.placeholder('a"b\\c')
    g.output(g.call_method('m"\\', (x,)))
    text = g.to_dot()
    assert 'target: a\\"b\\\\c' in text and 'target: m\\"\\\\' in text


def test_render_rejects_unknown_suffixes(tmp_path):
    g = fx.Graph()
    g.output(g.placeholder("x"))
    with pytest.raises(ValueError, match="unsupported file type 'gif'"):
        g.render(str(tmp_path / "graph.gif"))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot executable is not installed")
@pytest.mark.parametrize("suffix, magic", [("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_render_pictures_through_graphviz(tmp_path, suffix, magic):
    gm = fx.symbolic_trace(lambda x: x.relu() * 2)
    path = tmp_path / f"graph.{suffix}"
    gm.graph.render(str(path))
    assert path.read_bytes().startswith(magic)


def test_graph_module_refuses_attributes_that_hide_its_own():
    for target in ("graph", "code.weight", "recompile"):
        g = fx.Graph()
        g.output(g.get_attr(target))
        with pytest.raises(ValueError, match=f"the attribute '{target}' the graph reads would hide GraphModule"):
            fx.GraphModule({target: tm.ones(1)}, g)


def test_graph_module_nests_attributes_under_one_holder():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.get_attr("block.scale")
    m = g.call_module("block.inner", (x,))
    g.output((a, m))
    gm = fx.GraphModule({"block.scale": tm.tensor([2.0]), "block.inner": lambda v: v + 1}, g)
    scale, result = gm(tm.ones(1))
    assert scale is gm.block.scale and result.tolist() == [2.0]
    with pytest.raises(AttributeError, match="the attributes given have no 'block.scale'"):
        fx.GraphModule({}, g)


def test_shape_prop_on_meta_inputs_runs_the_module_on_meta_copies():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    gm = fx.symbolic_trace(model)
    result = passes.ShapeProp(gm).propagate(tm.empty(1_000_000, 4, device="meta"))
    assert result.is_meta and result.shape == (1_000_000, 8)
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes if "tensor_meta" in n.meta}
    assert list(shapes.values()) == [(1_000_000, 4), (1_000_000, 8), (1_000_000, 8), (1_000_000, 8)]
    assert not any(p.is_meta for p in gm.parameters())  # the module itself keeps its data


def test_replace_pattern_by_an_input_removes_the_pattern():
    gm = fx.symbolic_trace(lambda x: x.relu().relu() * 2)
    assert len(fx.replace_pattern(gm, lambda p: p.relu(), lambda p: p)) == 2
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "output"]
    assert gm(tm.tensor([-1.0])).tolist() == [-2.0]
