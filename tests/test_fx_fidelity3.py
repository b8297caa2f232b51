"""torch.fx fidelity (issue 30, items 7 to 9): node metadata, code generation and graph
details, a GraphModule's module state. Each test runs the same body on tensormodes and, where
torch is installed, on torch.fx (``BOTH``), or pins literal values where the two differ on
purpose."""

import copy
import dataclasses
import math
import operator
import os
from typing import NamedTuple

import pytest

import tensormodes as tm
from tensormodes import fx
from tensormodes.fx.passes.shape_prop import ShapeProp


def _lib(name):
    if name == "torch":
        pytest.importorskip("torch")
        import torch.fx

        return torch, torch.fx
    return tm, fx


BOTH = pytest.param("tensormodes"), pytest.param("torch", marks=pytest.mark.torch)


def _shape_prop(lib):
    if lib == "torch":
        from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

        return TorchShapeProp
    return ShapeProp


def _ours(text: str) -> str:
    return text.replace("torch.", "tensormodes.").replace("torch_", "tensormodes_")


def _nested_model(L):
    class Inner(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x).relu()

    class Outer(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.seq = L.nn.Sequential(L.nn.ReLU(), Inner())

        def forward(self, x):
            y = self.inner(x)
            y = self.inner(y)
            return self.seq(y) + 1

    return Outer()


# -- item 7: node metadata --------------------------------------------------------------------


@pytest.mark.parametrize("lib", BOTH)
def test_nn_module_stack_as_torch_fx_records_it(lib):
    L, F = _lib(lib)
    gm = F.symbolic_trace(_nested_model(L))
    stacks = {n.name: [(key, path, kind.__name__) for key, (path, kind) in n.meta["nn_module_stack"].items()]
              for n in gm.graph.nodes if "nn_module_stack" in n.meta}
    assert stacks == {
        "inner_lin": [("inner", "inner", "Inner"), ("inner.lin", "inner.lin", "Linear")],
        "relu": [("inner", "inner", "Inner")],
        "inner_lin_1": [("inner@1", "inner", "Inner"), ("inner.lin@1", "inner.lin", "Linear")],
        "relu_1": [("inner@1", "inner", "Inner")],
        "seq_0": [("seq", "seq", "Sequential"), ("seq.0", "seq.0", "ReLU")],
        "seq_1_lin": [("seq", "seq", "Sequential"), ("seq.1", "seq.1", "Inner"),
                      ("seq.1.lin", "seq.1.lin", "Linear")],
        "relu_2": [("seq", "seq", "Sequential"), ("seq.1", "seq.1", "Inner")],
    }
    # placeholders, the output and nodes of the top level carry none
    assert [n.name for n in gm.graph.nodes if "nn_module_stack" not in n.meta] == ["x", "add", "output"]


@pytest.mark.parametrize("lib", BOTH)
def test_tracer_scope_and_call_counts(lib):
    L, F = _lib(lib)
    tracer = F.Tracer()
    tracer.trace(_nested_model(L))
    scopes = {name: (path, kind.__name__ if kind else None) for name, (path, kind) in tracer.node_name_to_scope.items()}
    assert scopes == {"x": ("", None), "inner_lin": ("inner.lin", "Linear"), "relu": ("inner", "Inner"),
                      "inner_lin_1": ("inner.lin", "Linear"), "relu_1": ("inner", "Inner"),
                      "seq_0": ("seq.0", "ReLU"), "seq_1_lin": ("seq.1.lin", "Linear"), "relu_2": ("seq.1", "Inner"),
                      "add": ("", None), "output": ("", None)}
    assert tracer.num_calls == {"inner": 2, "inner.lin": 2, "seq": 1, "seq.0": 1, "seq.1": 1, "seq.1.lin": 1}
    assert (tracer.scope.module_path, tracer.scope.module_type) == ("", None)
    assert len(tracer.module_stack) == 0


@pytest.mark.parametrize("lib", BOTH)
def test_stack_traces_only_when_asked(lib):
    L, F = _lib(lib)
    assert all(n.stack_trace is None for n in F.symbolic_trace(_nested_model(L)).graph.nodes)
    tracer = F.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(_nested_model(L))
    here = os.path.basename(__file__)
    traces = {}
    for node in graph.nodes:
        if node.stack_trace is None:
            continue
        node.stack_trace = "\n".join(node.stack_trace.splitlines())  # the property writes meta
        assert node.meta["stack_trace"] == node.stack_trace
        # the user's frames (this file's), outermost first; torch.fx keeps its own frames too
        lines = node.stack_trace.splitlines()
        traces[node.name] = [lines[i + 1].strip() for i, line in enumerate(lines) if here in line]
    assert traces == {
        "inner_lin": ["y = self.inner(x)", "return self.lin(x).relu()"],
        "relu": ["y = self.inner(x)", "return self.lin(x).relu()"],
        "inner_lin_1": ["y = self.inner(y)", "return self.lin(x).relu()"],
        "relu_1": ["y = self.inner(y)", "return self.lin(x).relu()"],
        "seq_0": ["return self.seq(y) + 1"],
        "seq_1_lin": ["return self.seq(y) + 1", "return self.lin(x).relu()"],
        "relu_2": ["return self.seq(y) + 1", "return self.lin(x).relu()"],
        "add": ["return self.seq(y) + 1"],
    }
    assert [n.name for n in graph.nodes if n.stack_trace is None] == ["x", "output"]


@pytest.mark.parametrize("lib", BOTH)
def test_transformer_keeps_node_metadata(lib):
    L, F = _lib(lib)

    class Sub(L.nn.Module):
        def forward(self, a):
            return a.relu()

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()

        def forward(self, a, b):
            return self.sub(a + b)

    tracer = F.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(M())
    gm = F.GraphModule(tracer.root, graph)
    add = next(n for n in gm.graph.nodes if n.name == "add")
    add.meta["custom"] = {"tag": 1}
    add.meta["not_copied"] = 2
    new = F.Transformer(gm).transform()
    kept = {n.name: (n.stack_trace is not None, n.meta.get("custom"),
                     [key for key in n.meta.get("nn_module_stack", {})], "not_copied" in n.meta)
            for n in new.graph.nodes}
    assert kept == {"a": (False, None, [], False), "b": (False, None, [], False), "add": (True, {"tag": 1}, [], False),
                    "relu": (True, None, ["sub"], False), "output": (False, None, [], False)}


def test_stack_trace_holds_only_user_frames():
    tracer = fx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(_nested_model(tm))
    relu = next(n for n in graph.nodes if n.name == "relu")
    lines = relu.stack_trace.splitlines()
    assert len(lines) == 4 and lines[-1] == "    return self.lin(x).relu()"
    assert lines[0].startswith(f'File "{__file__}", line ') and lines[0].endswith(", in forward")


def _stack_traced_graph_module(F):
    def f(x, y):
        a = x + y
        b = a.relu()
        return b * 2

    gm = F.symbolic_trace(f)
    add, relu = list(gm.graph.nodes)[2:4]
    add.stack_trace = 'File "/a/b.py", line 3, in f\n    a = x + y'
    relu.stack_trace = 'File "/a/b.py", line 4, in f\n    b = a.relu()'
    gm.recompile()
    return gm


READABLE = '''class f(tensormodes.nn.Module):
    def forward(self, x, y):
        # File: /a/b.py:3 in f, code: a = x + y
        add = x + y;  x = y = None

        # File: /a/b.py:4 in f, code: b = a.relu()
        relu = add.relu();  add = None

        # No stacktrace found for following nodes
        mul = relu * 2;  relu = None
        return mul
'''


@pytest.mark.parametrize("lib", BOTH)
def test_print_readable_names_each_nodes_source_line(lib):
    _, F = _lib(lib)
    gm = _stack_traced_graph_module(F)
    assert _ours(gm.print_readable(print_output=False)) == READABLE
    # the generated code itself has no comments
    assert "#" not in gm.code


@pytest.mark.parametrize("lib", BOTH)
def test_print_readable_shows_the_shapes_shape_prop_saw(lib):
    L, F = _lib(lib)
    gm = _stack_traced_graph_module(F)
    _shape_prop(lib)(gm).propagate(L.ones(2), L.ones(2, dtype=L.float64))
    lines = gm.print_readable(print_output=False).splitlines()
    assert lines[1] == '    def forward(self, x: "f32[2]", y: "f64[2]"):'
    assert lines[3] == '        add: "f64[2]" = x + y;  x = y = None'


@pytest.mark.parametrize("lib", BOTH)
def test_print_readable_nests_graph_module_children(lib):
    L, F = _lib(lib)

    class KeepGraphModules(F.Tracer):
        def is_leaf_module(self, m, name):
            return isinstance(m, F.GraphModule) or super().is_leaf_module(m, name)

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = F.symbolic_trace(lambda x: x.relu())

        def forward(self, x):
            return self.sub(x) + 1

    model = M()
    gm = F.GraphModule(model, KeepGraphModules().trace(model))
    assert _ours(gm.print_readable(print_output=False)).splitlines() == [
        "class GraphModule(tensormodes.nn.Module):", "    def forward(self, x):",
        "        # No stacktrace found for following nodes", "        sub = self.sub(x);  x = None",
        "        add = sub + 1;  sub = None", "        return add", "",
        "    class sub(tensormodes.nn.Module):", "        def forward(self, x):",
        "            # No stacktrace found for following nodes", "            relu = x.relu();  x = None",
        "            return relu"]


# -- item 8: code generation and graph details -------------------------------------------------


@pytest.mark.parametrize("lib", BOTH)
def test_snake_case_node_names(lib):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.activations = L.nn.ModuleDict([["snake_case", L.nn.ReLU()], ["PascalCase", L.nn.LeakyReLU()],
                                                ["ALL_CAPS", L.nn.PReLU()]])

        def forward(self, x):
            return (self.activations["snake_case"](x), self.activations["PascalCase"](x),
                    self.activations["ALL_CAPS"](x))

    gm = F.symbolic_trace(M())
    assert [(n.name, n.target) for n in gm.graph.nodes if n.op == "call_module"] == [
        ("activations_snake_case", "activations.snake_case"), ("activations_pascal_case", "activations.PascalCase"),
        ("activations_all_caps", "activations.ALL_CAPS")]


@pytest.mark.parametrize("lib", BOTH)
def test_inplace_operators_are_statements(lib):
    _, F = _lib(lib)
    graph = F.Graph()
    a, b = graph.placeholder("a"), graph.placeholder("b")
    graph.call_function(operator.imul, (a, b), {})
    graph.call_function(operator.isub, (a, 1), {})
    graph.output(a)
    gm = F.GraphModule({}, graph)
    assert gm.code.strip().splitlines()[1:3] == ["    a *= b;  imul = a;  b = imul = None",
                                                 "    a -= 1;  isub = a;  isub = None"]
    assert gm(2, 3) == 5


def test_inplace_operator_on_a_constant_stays_a_call():
    graph = fx.Graph()
    b = graph.placeholder("b")
    graph.output(graph.call_function(operator.iadd, (2, b)))
    gm = fx.GraphModule({}, graph)
    assert gm.code.strip().splitlines()[1] == "    iadd = _operator_iadd(2, b);  b = None"
    assert gm(3) == 5


@pytest.mark.parametrize("lib", BOTH)
def test_generated_code_names_the_traced_file(lib):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def forward(self, a):
            return a * 2

    gm = F.symbolic_trace(M())
    filename = gm.forward.__code__.co_filename
    assert os.path.basename(__file__) in filename
    line = M.forward.__code__.co_firstlineno
    assert f" from {__file__}:{line} in forward" in filename


@pytest.mark.parametrize("lib", BOTH)
def test_error_on_a_generated_line_prints_its_context(lib, capsys):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.W = L.nn.Parameter(L.ones(5))

        def forward(self, x):
            return L.dot(self.W, x)

    traced = F.symbolic_trace(M())
    out = next(n for n in traced.graph.nodes if n.op == "output")
    with traced.graph.inserting_before(out):
        relu = traced.graph.call_method(method_name="relu", args=(out.args[0],))
    out.args = (relu,)
    traced.recompile()
    with pytest.raises(TypeError):
        traced(5)
    err = capsys.readouterr().err
    assert "Call using an FX-traced Module, line 6 of the traced Module's generated forward function:" in err
    marked = [line for line in err[err.index("generated forward function:"):].splitlines() if line]
    assert marked[2].strip().startswith("dot = ") and marked[3].endswith("~~~ <--- HERE")
    assert len(marked[3]) - len(" <--- HERE") == len(marked[2].strip()) + 3


@pytest.mark.parametrize("lib", BOTH)
def test_error_inside_a_submodule_prints_no_context(lib, capsys):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = L.nn.Linear(3, 4)

        def forward(self, x):
            return self.linear(x)

    traced = F.symbolic_trace(M())
    with pytest.raises(RuntimeError):
        traced(L.rand(5, 5))
    assert "Call using an FX-traced Module" not in capsys.readouterr().err


@pytest.mark.parametrize("lib", BOTH)
def test_node_copy_with_and_without_a_value_map(lib):
    _, F = _lib(lib)
    gm = F.symbolic_trace(lambda x, y: (x * y).relu())
    remapped, env = F.Graph(), {}
    for node in gm.graph.nodes:
        env[node] = remapped.node_copy(node, lambda n: env[n])
    remapped.lint()
    assert [(n.name, tuple(a.name for a in n.all_input_nodes)) for n in remapped.nodes] == [
        ("x", ()), ("y", ()), ("mul", ("x", "y")), ("relu", ("mul",)), ("output", ("relu",))]
    unmapped = F.Graph()
    for node in gm.graph.nodes:
        unmapped.node_copy(node)  # accepted: lint finds the nodes of another graph
    with pytest.raises(RuntimeError) as info:
        unmapped.lint()
    assert str(info.value).splitlines()[0] == (
        "Argument 'x' of Node 'mul' does not belong to this Graph, but was used as an argument! If you are "
        "copying nodes from another graph, make sure to use ``arg_transform`` on node_copy() to remap values")


@pytest.mark.parametrize("lib", BOTH)
def test_prepend_self_is_a_no_op(lib):
    L, F = _lib(lib)
    graph = F.Graph()
    x = graph.create_node("placeholder", "x")
    b = graph.create_node("call_function", target=L.relu, args=(x,))
    graph.output(b)
    b.prepend(b)
    x.append(b)
    assert [n.name for n in graph.nodes] == ["x", "relu", "output"]


@pytest.mark.parametrize("lib", BOTH)
def test_deepcopy_of_a_graph_module_with_nested_modules(lib):
    L, F = _lib(lib)

    class Sub(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x)

    class Top(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()
            self.register_buffer("b", L.ones(2))

        def forward(self, x):
            return self.sub(x) + self.b

    gm = F.symbolic_trace(Top())
    gm.meta["note"] = [1]
    copied = copy.deepcopy(gm)
    assert type(copied).__name__ == "GraphModule" and type(gm).__name__ == "Top"
    assert list(copied.state_dict()) == ["b", "sub.lin.weight", "sub.lin.bias"]
    assert copied.code == gm.code and copied.meta == {"note": [1]} and copied.meta["note"] is not gm.meta["note"]
    assert copied.sub.lin.weight is not gm.sub.lin.weight
    assert copied.graph.owning_module is copied
    assert copied(L.ones(2)).tolist() == gm(L.ones(2)).tolist()


class _Pair(NamedTuple):
    a: object
    b: object


@dataclasses.dataclass
class _Fields:
    a: object
    b: object


def _as_pair(x):
    pair = _Pair(x, x + 1)
    return pair.a + pair.b, pair


def _as_fields(x):
    return _Fields(x, x * 2)


def _from_fields(d):
    return d.a + d.b


@pytest.mark.parametrize("lib", BOTH)
def test_named_tuples_and_dataclasses_flow_through_graphs(lib):
    L, F = _lib(lib)
    pair_gm, fields_gm, reader_gm = F.symbolic_trace(_as_pair), F.symbolic_trace(_as_fields), \
        F.symbolic_trace(_from_fields)
    module = __name__.replace(".", "_")
    assert pair_gm.code.strip().splitlines()[3] == f"    _pair = {module}__Pair(x, add);  x = add = None"
    assert fields_gm.code.strip().splitlines()[1:3] == [
        "    mul = x * 2", f"    _fields = {module}__Fields(a = x, b = mul);  x = mul = None"]
    total, pair = pair_gm(L.ones(1))
    assert type(pair) is _Pair and total.tolist() == [3.0] and pair.b.tolist() == [2.0]
    made = fields_gm(L.ones(1))
    assert type(made) is _Fields and made.b.tolist() == [2.0]
    assert reader_gm(_Fields(L.ones(1), L.ones(1))).tolist() == [2.0]


def test_dataclass_argument_of_a_call_is_traced():
    def total(fields):
        return fields.a + fields.b

    leaf = fx.wrap(total)
    gm = fx.symbolic_trace(lambda x: leaf(_Fields(x, x * 2)) + 1)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "call_function", "call_function",
                                              "call_function", "output"]
    assert next(n for n in gm.graph.nodes if n.name == "_fields").kwargs["b"].name == "mul"
    assert gm(tm.ones(1)).tolist() == [4.0]


@pytest.mark.parametrize("lib", BOTH)
def test_create_proxy_takes_a_proxy_factory(lib):
    _, F = _lib(lib)
    made = []

    class Tagged(F.Proxy):
        pass

    class Tracer(F.Tracer):
        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
            if kind == "call_method":
                proxy_factory_fn = lambda node: made.append(node.name) or Tagged(node, self)  # noqa: E731
            return super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)

    Tracer().trace(lambda x: x.relu().neg() + 1)
    assert made == ["relu", "neg"]


@pytest.mark.parametrize("lib", BOTH)
def test_replacement_reading_module_attributes(lib):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def forward(self, x):
            return x.sigmoid() + 1

    class Pattern(L.nn.Module):
        def forward(self, x):
            return x.sigmoid()

    class Replacement(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = L.nn.Parameter(L.full((2,), 3.0))

        def forward(self, x):
            return x * self.w

    gm = F.symbolic_trace(M())
    assert len(F.replace_pattern(gm, Pattern(), Replacement())) == 1
    assert gm.code.strip().splitlines()[1:3] == ["    w = self.w", "    mul = x * w;  x = w = None"]
    assert list(gm.state_dict()) == ["w"] and isinstance(gm.w, L.nn.Parameter)
    assert gm(L.ones(2)).tolist() == [4.0, 4.0]


class _Marker:
    pass


@pytest.mark.parametrize("lib", BOTH)
def test_types_are_annotations_in_generated_code(lib):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def forward(self, x: L.Tensor) -> L.Tensor:
            return x.relu()

    assert _ours(F.symbolic_trace(M()).code.strip().splitlines()[0]) == \
        "def forward(self, x : tensormodes.Tensor) -> tensormodes.Tensor:"
    graph = F.Graph()
    x = graph.placeholder("x", type_expr=int)
    graph.output(graph.call_function(operator.add, (x, 1), type_expr=int), type_expr=int)
    assert F.GraphModule({}, graph).code.strip().splitlines()[:2] == [
        "def forward(self, x : int) -> int:", "    add : int = x + 1;  x = None"]


def test_typing_forms_as_annotations():
    import typing

    def f(x: typing.List[int], y: typing.Optional[tm.Tensor], z: dict[str, _Marker], v: int = 3) -> tuple[int, ...]:  # noqa: UP006, UP045 - the typing forms themselves
        return x, y, z, v

    gm = fx.symbolic_trace(f)
    module = __name__.replace(".", "_")
    assert gm.code.strip().splitlines()[0] == (
        f"def forward(self, x : typing_List[int], y : typing_Union[tensormodes.Tensor,NoneType], "
        f"z : dict[str,{module}__Marker], v : int = 3) -> tuple[int,...]:")
    assert gm([1], None, {}) == ([1], None, {}, 3)


@pytest.mark.parametrize("lib", BOTH)
def test_attribute_names_that_are_not_identifiers(lib):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = L.nn.Sequential(L.nn.ReLU())

        def forward(self, x):
            return self.seq(x)

    assert F.symbolic_trace(M()).code.strip().splitlines()[1] == \
        '    seq_0 = getattr(self.seq, "0")(x);  x = None'


def _leaf(a, b):
    return a + b


@pytest.mark.parametrize("lib", BOTH)
def test_globals_named_as_torch_fx_names_them(lib):
    _, F = _lib(lib)
    graph = F.Graph()
    x = graph.placeholder("x")
    leaf = graph.call_function(_leaf, (x, x))
    graph.output(graph.call_function(len, (leaf,)))
    code = F.GraphModule({}, graph).code.strip().splitlines()
    assert code[1:3] == [f"    _leaf = {__name__.replace('.', '_')}__leaf(x, x);  x = None",
                         "    len_1 = len(_leaf);  _leaf = None"]


# -- item 9: module state, hooks, lint, names ----------------------------------------------------


@pytest.mark.parametrize("lib", BOTH)
def test_state_dict_keys_as_torch_fx(lib):
    L, F = _lib(lib)

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(2, 2)
            self.bn = L.nn.BatchNorm1d(2)
            self.register_buffer("persistent", L.ones(2))
            self.register_buffer("transient", L.ones(2), persistent=False)
            self.p = L.nn.Parameter(L.ones(2))
            self.unused = L.nn.Linear(3, 3)

        def forward(self, x):
            return self.bn(self.lin(x)) + self.persistent + self.transient + self.p

    gm = F.symbolic_trace(M())
    # torch.fx registers every tensor the graph reads as a (persistent) buffer
    assert list(gm.state_dict()) == ["p", "persistent", "transient", "lin.weight", "lin.bias", "bn.weight",
                                     "bn.bias", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [name for name, _ in gm.named_buffers()] == ["persistent", "transient", "bn.running_mean",
                                                        "bn.running_var", "bn.num_batches_tracked"]
    assert list(gm.bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


@pytest.mark.parametrize("lib", BOTH)
def test_state_dict_keys_follow_the_graph_order(lib):
    L, F = _lib(lib)

    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
            self.head = L.nn.Linear(2, 1)

        def forward(self, x):
            return self.head(self.features(x))

    model = Net()
    traced = F.symbolic_trace(model)
    assert list(traced.state_dict()) == list(model.state_dict())
    assert list(F.Transformer(traced).transform().state_dict()) == list(model.state_dict())
    # from a dict, shallower paths are installed first, as torch.fx does
    graph_module = F.GraphModule({name: traced.get_submodule(name) for name in ("features.0", "features.1", "head")},
                                 traced.graph)
    assert list(graph_module.state_dict())[:2] == ["head.weight", "head.bias"]


@pytest.mark.parametrize("lib", BOTH)
def test_captured_tensors_are_buffers(lib):
    L, F = _lib(lib)
    captured = L.ones(2)
    gm = F.symbolic_trace(lambda x: x + captured)
    assert list(gm.state_dict()) == ["_tensor_constant0"]
    assert [name for name, _ in gm.named_buffers()] == ["_tensor_constant0"]


@pytest.mark.parametrize("lib", BOTH)
def test_create_proxy_sees_every_kind_of_node(lib):
    L, F = _lib(lib)
    seen = []

    class Watching(F.Tracer):
        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *rest, **more):
            seen.append(kind)
            return super().create_proxy(kind, target, args, kwargs, name, type_expr, *rest, **more)

    class N(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = L.nn.Parameter(L.ones(2))
            self.lin = L.nn.Linear(2, 2)

        def forward(self, x):
            return L.relu(self.lin(x).neg() + self.w)

    Watching().trace(N())
    assert seen == ["placeholder", "call_module", "call_method", "get_attr", "call_function", "call_function"]


@pytest.mark.parametrize("lib", BOTH)
def test_lint_rejects_a_node_of_another_graph(lib):
    _, F = _lib(lib)
    other = F.Graph()
    a = other.placeholder("a")
    graph = F.Graph()
    b = graph.placeholder("b")
    graph.output(graph.call_function(operator.add, (a, b)))
    with pytest.raises(RuntimeError) as info:
        graph.lint()
    assert str(info.value).splitlines()[0].startswith("Argument 'a' of Node 'add' does not belong to this Graph")
    assert str(info.value).splitlines()[1:] == str(graph).splitlines()  # the graph follows, as torch.fx


@pytest.mark.parametrize("lib", BOTH)
def test_lint_checks_the_owning_modules_targets(lib):
    L, F = _lib(lib)
    gm = F.symbolic_trace(L.nn.Sequential(L.nn.ReLU()))
    node = next(n for n in gm.graph.nodes if n.op == "call_module")
    node.target = "missing"
    with pytest.raises(RuntimeError) as info:
        gm.graph.lint()
    assert str(info.value) == "Node _0 target missing references nonexistent attribute missing of "


@pytest.mark.parametrize("lib", BOTH)
def test_call_function_with_a_name(lib):
    _, F = _lib(lib)
    graph = F.Graph()
    x = graph.placeholder("x")
    node = graph.call_function(operator.add, (x, 1), name="foo")
    again = graph.call_function(operator.add, (node, 1), None, None, "foo")
    assert (node.name, again.name) == ("foo", "foo_1")


def test_a_node_named_self_never_shadows_the_module():
    graph = fx.Graph()
    x = graph.placeholder("x")
    node = graph.call_function(operator.add, (x, 1))
    node.name = "self"  # torch.fx writes `self = x + 1`, shadowing the module
    graph.output(node)
    assert fx.GraphModule({}, graph).code.strip().splitlines()[1:] == [
        "    self_1 = x + 1;  x = None", "    return self_1"]
    graph = fx.Graph()
    graph.output(graph.placeholder("self"))  # torch.fx writes `def forward(self):`
    gm = fx.GraphModule({}, graph)
    assert gm.code.strip().splitlines()[0] == "def forward(self, self_1):" and gm(3) == 3


# -- autowrap: math's functions given a traced value are recorded (issue 30, item 6) -----------------

def _body_with_math(x):
    return x / math.sqrt(x.size(-1)) + math.sqrt(4) + math.floor(x.size(0) / 2)


@pytest.mark.parametrize("lib", BOTH)
def test_math_functions_on_traced_values_are_recorded_and_constants_fold(lib):
    torch, tfx = _lib(lib)
    gm = tfx.symbolic_trace(_body_with_math)
    calls = [(n.name, getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes if n.op == "call_function"]
    assert [c for c in calls if c[1] in ("sqrt", "floor")] == [("sqrt", "sqrt"), ("floor", "floor")]
    assert "sqrt = math_sqrt(size)" in gm.code and "+ 2.0" in gm.code
    assert gm(torch.ones(2, 4)).tolist() == [[3.5] * 4] * 2
    assert math.sqrt(4) == 2.0 and getattr(math.sqrt, "__fx_leaf__", None) is None  # restored after the trace


def test_autowrap_follows_the_tracers_arguments():
    with pytest.raises(fx.TraceError, match="cannot be converted to a Python number"):
        fx.Tracer(autowrap_modules=()).trace(_body_with_math)

    def scaled(x):
        return x * len_of(x.shape)

    graph = fx.Tracer(autowrap_functions=(len_of,)).trace(scaled)
    assert [n.target for n in graph.nodes if n.op == "call_function"][1].__fx_leaf__ is len_of
    assert globals()["len_of"] is _len_of_original


def len_of(shape):
    return len(shape)


_len_of_original = len_of
