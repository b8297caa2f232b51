"""torch.fx's names and methods beyond the core (issue 30, items 4 and 5), each checked
against literal expectations and, where torch is installed, against torch.fx itself."""

import copy
import operator
import pickle

import pytest

import tensormodes as tm
from tensormodes import fx
from tensormodes.fx.immutable_collections import immutable_dict, immutable_list


def _lib(name):
    if name == "torch":
        pytest.importorskip("torch")
        import torch.fx

        return torch, torch.fx
    return tm, fx


BOTH = pytest.param("tensormodes"), pytest.param("torch", marks=pytest.mark.torch)

# -- item 4: missing names ----------------------------------------------------------------


@pytest.mark.parametrize("lib", BOTH)
def test_public_names(lib):
    _, F = _lib(lib)
    for name in ("PH", "CodeGen", "ProxyableClassMeta", "immutable_collections", "has_side_effect",
                 "replace_pattern", "subgraph_rewriter"):
        assert hasattr(F, name), name
    assert repr(F.PH) == "PH"
    assert hasattr(F.subgraph_rewriter, "replace_pattern_with_filters")


@pytest.mark.parametrize("lib", BOTH)
def test_immutable_collections_refuse_mutation(lib):
    _, F = _lib(lib)
    ic = F.immutable_collections
    values, mapping = ic.immutable_list([1, 2]), ic.immutable_dict(a=1)
    messages = []
    for mutate in (lambda: values.append(3), lambda: values.__setitem__(0, 5), lambda: values.sort(),
                   lambda: mapping.__setitem__("b", 2), lambda: mapping.update(b=2), lambda: mapping.pop("a")):
        with pytest.raises(TypeError) as info:
            mutate()
        messages.append(str(info.value).splitlines()[0])
    assert messages[0] == ("'immutable_list' object does not support mutation. If you are attempting to modify "
                           "the kwargs or args of a torch.fx.Node object,")
    assert messages[3].startswith("'immutable_dict' object does not support mutation.")
    assert hash(values) == hash((1, 2)) and hash(mapping) == hash(frozenset({("a", 1)}))
    assert values == [1, 2] and mapping == {"a": 1}
    assert pickle.loads(pickle.dumps(values)) == [1, 2]


def test_immutable_message_literal():
    with pytest.raises(TypeError) as info:
        immutable_dict(a=1).clear()
    assert str(info.value).endswith("    new_args = ...  # copy and mutate args\n    node.args = new_args")
    assert type(pickle.loads(pickle.dumps(immutable_list([1])))) is immutable_list


@pytest.mark.parametrize("lib", BOTH)
def test_ph_keeps_the_argument_an_input(lib):
    L, F = _lib(lib)

    def f(x, y):
        return x + y

    gm = F.symbolic_trace(f, concrete_args={"x": F.PH})
    assert [n.name for n in gm.graph.nodes] == ["x_1", "y", "add", "output"]
    assert gm.code.strip().splitlines()[0] == "def forward(self, x_1, y):"
    assert gm(L.ones(1), L.ones(1)).tolist() == [2.0]


@pytest.mark.parametrize("lib", BOTH)
def test_ph_with_meta_sets_its_key_on_the_node(lib):
    _, F = _lib(lib)
    if lib == "torch":
        from torch.fx._symbolic_trace import PHWithMeta
    else:
        PHWithMeta = fx.PHWithMeta
    gm = F.symbolic_trace(lambda x, y: x + y, concrete_args={"y": PHWithMeta("key")})
    assert [(n.name, getattr(n, "ph_key", None)) for n in gm.graph.nodes if n.op == "placeholder"] == [
        ("x", None), ("y_1", "key")]


def test_ph_inside_a_container_is_refused_clearly():
    with pytest.raises(NotImplementedError, match=r"concrete_args\['t'\]: PH inside a container"):
        fx.symbolic_trace(lambda x, t: x + t[0], concrete_args={"t": (fx.PH, fx.PH)})


class _ListCodeGen:
    """Mixed into each library's CodeGen below."""

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        return f"def forward(self, args_list){maybe_return_annotation}:\n    {', '.join(free_vars)} = args_list"

    def additional_globals(self):
        return [("List", list)]

    def process_inputs(self, *inputs):
        assert len(inputs) == 1
        return inputs[0]


@pytest.mark.parametrize("lib", BOTH)
def test_custom_codegen(lib):
    L, F = _lib(lib)
    codegen = type("ListCodeGen", (_ListCodeGen, F.CodeGen), {})

    def f(a, b):
        return a + b

    gm = F.symbolic_trace(f)
    gm.graph.set_codegen(codegen())
    gm.recompile()
    values = [L.tensor([1.0]), L.tensor([2.0])]
    assert gm(values).tolist() == [3.0]
    assert gm.code.strip().splitlines()[:2] == ["def forward(self, args_list):", "    a, b = args_list"]
    bare = F.GraphModule({}, copy.deepcopy(gm.graph))
    bare.graph.set_codegen(F.CodeGen())
    bare.recompile()
    assert gm.graph.process_outputs(bare(*gm.graph.process_inputs(values))).tolist() == [3.0]
    assert "List" in gm.forward.__globals__


@pytest.mark.parametrize("lib", BOTH)
def test_custom_generate_output(lib):
    L, F = _lib(lib)

    class Doubled(F.CodeGen):
        def generate_output(self, output_args, **kwargs):
            return f"return ({output_args!r}, {output_args!r})"

    gm = F.symbolic_trace(lambda x: x * 2)
    gm.graph.set_codegen(Doubled())
    gm.recompile()
    assert [t.tolist() for t in gm(L.tensor([1.0]))] == [[2.0], [2.0]]
    assert gm.code.strip().splitlines()[-1] == "    return (mul, mul)"


@pytest.mark.parametrize("lib", BOTH)
def test_proxyable_class_meta(lib):
    L, F = _lib(lib)

    class TensorPair(metaclass=F.ProxyableClassMeta):
        def __init__(self, left, right):
            self.left, self.right = left, right

        def add(self, other):
            return TensorPair(self.left + other.left, self.right + other.right)

        def mul(self, other):
            return TensorPair(self.left * other.left, self.right * other.right)

    def use(x: TensorPair, y):
        s = x.add(TensorPair(y, y))
        return s.mul(x)

    gm = F.symbolic_trace(use)
    assert [(n.op, n.name) for n in gm.graph.nodes] == [
        ("placeholder", "x"), ("placeholder", "y"), ("call_function", "tensor_pair"), ("call_method", "add"),
        ("call_method", "mul"), ("output", "output")]
    x = TensorPair(L.tensor([1.0]), L.tensor([2.0]))
    out = gm(x, L.tensor([3.0]))
    assert (out.left.tolist(), out.right.tolist()) == ([4.0], [10.0])


@pytest.mark.parametrize("lib", BOTH)
def test_has_side_effect_keeps_the_node(lib):
    _, F = _lib(lib)
    calls = []

    @F.has_side_effect
    def record(x):
        calls.append(x)

    def plain(x):
        calls.append(x)

    g = F.Graph()
    x = g.placeholder("x")
    g.call_function(record, (x,))
    g.call_function(plain, (x,))
    g.output(x)
    assert g.eliminate_dead_code()
    assert [n.op for n in g.nodes] == ["placeholder", "call_function", "output"]
    assert next(iter(g.nodes)).next.target is record


@pytest.mark.parametrize("lib", BOTH)
def test_replace_pattern_with_filters(lib):
    L, F = _lib(lib)
    replace = F.subgraph_rewriter.replace_pattern_with_filters

    def f(x):
        return (x + 1) * (x + 2)

    def only_one(match, original_graph, pattern_graph):
        assert match.anchors[0].graph is pattern_graph and match.anchors[0].args[1] == 1  # a pattern node
        return match.returning_nodes[0].args[1] == 1

    gm = F.symbolic_trace(f)
    done = replace(gm, lambda a: a + 1, lambda a: a - 1, [only_one], ignore_literals=True)
    assert len(done) == 1
    assert [n.name for n in done[0].replacements] == ["sub"]
    assert done[0].anchor.name == "add" and done[0].anchor.graph is not gm.graph
    assert gm(L.tensor([3.0])).tolist() == [10.0]
    gm = F.symbolic_trace(f)
    done = replace(gm, lambda a: a + 1, lambda a: a - 1)  # without ignore_literals: only x + 1
    assert len(done) == 1 and gm(L.tensor([3.0])).tolist() == [10.0]


@pytest.mark.parametrize("lib", BOTH)
def test_replacement_callback(lib):
    L, F = _lib(lib)
    replace = F.subgraph_rewriter.replace_pattern_with_filters
    seen = []

    def callback(match, original_graph, pattern_graph):
        seen.append(match.placeholder_nodes[0].name)
        return F.symbolic_trace(lambda a: a * 10).graph

    gm = F.symbolic_trace(lambda x: (x + 1).relu())
    done = replace(gm, lambda a: a + 1, None, replacement_callback=callback)
    assert seen == ["x"] and len(done) == 1
    assert gm(L.tensor([2.0])).tolist() == [20.0]


def test_replace_pattern_still_returns_matches():
    gm = fx.symbolic_trace(lambda x: (x + 1).relu())
    (match,) = fx.replace_pattern(gm, lambda a: a + 1, lambda a: a - 1)
    assert type(match).__name__ == "Match" and match.anchor.name == "add"
    with pytest.raises(ValueError, match="give a replacement or a replacement_callback"):
        fx.subgraph_rewriter.replace_pattern_with_filters(gm, lambda a: a - 1)


def test_default_codegen_unchanged():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(operator.neg, (x,)))
    assert g.python_code("self").src == "\n\n\ndef forward(self, x):\n    neg = -x;  x = None\n    return neg\n    "


# -- item 5: missing methods --------------------------------------------------------------


def _submodule_model(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(2, 2)
            self.b = L.nn.Sequential(L.nn.ReLU(), L.nn.Linear(2, 2))
            self.c = L.nn.Linear(2, 2)
            self.d = L.nn.Linear(2, 2)

        def forward(self, x):
            return self.b(self.a(x)) + self.c.weight.sum()

    return M()


@pytest.mark.parametrize("lib", BOTH)
def test_graph_module_submodule_editing(lib):
    L, F = _lib(lib)
    model = _submodule_model(L)
    gm = F.GraphModule(model, F.symbolic_trace(model).graph)
    assert gm.meta == {}
    names = lambda: [n for n, _ in gm.named_modules()]  # noqa: E731
    assert names() == ["", "a", "b", "b.0", "b.1", "c"]  # d is not read by the graph
    relu = L.nn.ReLU()
    assert gm.add_submodule("x.y", relu) and gm.get_submodule("x.y") is relu
    assert not gm.add_submodule("a.weight.z", L.nn.ReLU())  # a parameter on the way
    assert names() == ["", "a", "b", "b.0", "b.1", "c", "x", "x.y"]
    gm.delete_all_unused_submodules()
    assert names() == ["", "a", "b", "b.0", "b.1", "c"]
    assert [gm.delete_submodule(t) for t in ("c", "nope", "a.weight", "b.0", "b.0")] == [
        True, False, False, True, False]
    assert names() == ["", "a", "b", "b.1"]


@pytest.mark.parametrize("lib", BOTH)
def test_node_insert_and_update_arg(lib):
    _, F = _lib(lib)
    g = F.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    node = g.call_function(max, (1,))
    node.insert_arg(0, x)
    node.insert_arg(2, [y, 3])
    assert node.args == (x, 1, [y, 3]) and list(x.users) == [node] and list(y.users) == [node]
    node.update_arg(0, y)
    assert node.args == (y, 1, [y, 3]) and not x.users
    with pytest.raises(AssertionError, match=r"^insert_args index must be between 0 and len\(self.args\), got 4$"):
        node.insert_arg(4, 1)
    with pytest.raises(AssertionError):
        node.insert_arg(-1, 1)


@pytest.mark.parametrize("lib", BOTH)
def test_interpreter_boxed_run(lib):
    L, F = _lib(lib)
    gm = F.symbolic_trace(lambda x, y: x * y)
    inputs = [L.tensor([2.0]), L.tensor([3.0])]
    assert F.Interpreter(gm).boxed_run(inputs).tolist() == [6.0]
    assert inputs == []
    for given, detail in (([L.ones(1)], "missing arguments"), ([L.ones(1)] * 3, "extra arguments")):
        with pytest.raises(RuntimeError) as info:
            F.Interpreter(gm).boxed_run(given)
        assert str(info.value) == (f"Interpreter.boxed_run expected 2 arguments for placeholders but received "
                                   f"{len(given)} ({detail})")


@pytest.mark.parametrize("lib", BOTH)
def test_graph_tracer_cls(lib):
    _, F = _lib(lib)
    assert F.Graph(tracer_cls=F.Tracer)._tracer_cls is F.Tracer
    assert F.Graph()._tracer_cls is None
    assert F.symbolic_trace(lambda x: x).graph._tracer_cls is F.Tracer

    class Local(F.Tracer):
        pass

    graph = Local().trace(lambda x: x)
    assert graph._tracer_cls is Local
    assert F.GraphModule({}, graph)._tracer_cls is None  # a local class cannot be found again by name


@pytest.mark.parametrize("lib", BOTH)
def test_eliminate_dead_code_with_is_impure_node(lib):
    _, F = _lib(lib)
    g = F.Graph()
    x = g.placeholder("x")
    g.call_function(operator.neg, (x,))
    g.call_function(operator.pos, (x,))
    g.output(x)
    assert g.eliminate_dead_code(is_impure_node=lambda n: n.op == "placeholder" or n.target is operator.neg)
    assert [n.name for n in g.nodes] == ["x", "neg"]  # the predicate replaces the default: output too
