"""tensormodes.fx's generated code stays valid, harmless and right whatever a graph holds: names
assigned to ``node.name``, placeholder targets, class names, and containers of graph values
(named tuples, ``OrderedDict``, nested dicts / lists / slices)."""

from __future__ import annotations

import ast
import builtins
import collections
import inspect
import operator
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm
from tensormodes import fx
from tensormodes.fx.node import map_aggregate, map_arg

Pair = collections.namedtuple("Pair", "a b")


def _assert_harmless(code: str) -> None:
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            assert node.id.isascii() and node.id.isidentifier()
        assert not isinstance(node, (ast.Import, ast.ImportFrom))


# -- names assigned to node.name --------------------------------------------------------------

_PWN = "__import__('builtins').__dict__.__setitem__('_fx_pwned', True); q"


def test_a_name_assigned_to_node_name_is_sanitised_not_executed():
    g = fx.Graph()
    x = g.placeholder("x")
    dead = g.call_function(operator.neg, (x,))
    g.output(x)
    dead.name = _PWN
    try:
        gm = fx.GraphModule({}, g)
        assert gm(tm.ones(1)).tolist() == [1.0]
        assert not hasattr(builtins, "_fx_pwned")
    finally:
        vars(builtins).pop("_fx_pwned", None)
    sanitised = re.sub("[^0-9a-zA-Z_]+", "_", _PWN)
    assert gm.code == f"\n\n\ndef forward(self, x):\n    {sanitised} = -x;  {sanitised} = None\n    return x\n    "
    assert dead.name == _PWN  # the node keeps the name it was given, as in torch.fx
    _assert_harmless(gm.code)


def test_assigned_names_that_clash_after_sanitising_stay_distinct():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    b = g.call_function(operator.mul, (a, 2))
    c = g.call_function(operator.sub, (b, a))
    g.output(c)
    a.name, b.name, c.name = "a.b", "a-b", "class"
    gm = fx.GraphModule({}, g)
    assert gm.code.strip().splitlines() == [
        "def forward(self, x):",
        "    a_b = x + 1;  x = None",
        "    a_b_1 = a_b * 2",
        "    class_1 = a_b_1 - a_b;  a_b_1 = a_b = None",
        "    return class_1",
    ]
    assert gm(tm.tensor([1.0])).tolist() == [2.0]


def test_a_renamed_placeholder_keeps_its_parameter():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(operator.neg, (x,)))
    x.name = "q; import os"
    gm = fx.GraphModule({}, g)
    assert gm.code.strip().splitlines()[:2] == ["def forward(self, x):", "    q_import_os = x"]
    assert gm(x=tm.tensor([2.0])).tolist() == [-2.0]


def test_a_parameter_named_like_a_builtin_keeps_its_name():
    def f(x, input):
        return x + input

    gm = fx.symbolic_trace(f)
    assert gm.code.strip().splitlines() == [
        "def forward(self, x, input):",
        "    input_1 = input",
        "    add = x + input_1;  x = input_1 = None",
        "    return add",
    ]
    assert gm(x=tm.tensor([1.0]), input=tm.tensor([2.0])).tolist() == [3.0]


def test_a_node_named_like_a_parameter_does_not_take_its_name():
    # torch.fx writes ``x_in = x; x = x_in + 1``; parameters here are reserved first, so no
    # variable ever overwrites one, wherever the placeholder sits in the graph
    g = fx.Graph()
    a = g.create_node("call_function", operator.add, (1, 2), name="x")
    x = g.placeholder("x")
    g.output(g.call_function(operator.add, (x, a)))
    x.name = "x_in"
    gm = fx.GraphModule({}, g)
    assert gm.code.strip().splitlines() == [
        "def forward(self, x):",
        "    x_1 = 1 + 2",
        "    x_in = x",
        "    add = x_in + x_1;  x_in = x_1 = None",
        "    return add",
    ]
    assert gm(tm.tensor([1.0])).tolist() == [4.0]


def test_python_code_refuses_a_root_module_that_is_not_a_name():
    g = fx.Graph()
    g.output(g.placeholder("x"))
    assert g.python_code("mod").src.strip() == "def forward(mod, x):\n    return x"
    with pytest.raises(ValueError, match=r"root_module must be a Python identifier, got 'a\): import os #'"):
        g.python_code("a): import os #")


_TORCH_NAMES = ["class", "print", "a.b", "a-b", "é", "1x", "getattr", "_1x", "add", "None", "a b", "",
                "__name__", "print_1", "x_1", "input", "camelCase", _PWN]


@pytest.mark.torch
@pytest.mark.parametrize("name", _TORCH_NAMES)
def test_assigned_names_give_torch_fx_code(name):
    import torch
    import torch.fx

    codes = []
    for library, graph_type, module_type in ((tm, fx.Graph, fx.GraphModule),
                                             (torch, torch.fx.Graph, torch.fx.GraphModule)):
        g = graph_type()
        x = g.placeholder("x")
        a = g.call_function(operator.add, (x, 1))
        b = g.call_function(operator.add, (a, 2))
        g.output(b)
        a.name = name
        x.name = name + "_in"
        gm = module_type({}, g)
        assert gm(library.tensor([1.0])).tolist() == [4.0]
        codes.append(gm.code.strip())
    assert codes[0] == codes[1]


@settings(max_examples=80, deadline=None)
@given(names=st.lists(st.text(max_size=10), min_size=5, max_size=5), target=st.text(max_size=10),
       key=st.text(max_size=10))
def test_any_assigned_names_give_code_that_compiles_and_runs_right(names, target, key):
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder(target.replace("*", ""))  # a leading * declares *args, as in torch.fx
    a = g.call_function(operator.add, (x, y))
    b = g.call_method("mul", (a, 3))
    c = g.call_function(_plus_keyword, (b,), {key: y})
    g.output({"r": c, "p": Pair(a, [b, slice(None, x)])})
    for node, name in zip((x, y, a, b, c), names):
        node.name = name
    gm = fx.GraphModule({}, g)
    _assert_harmless(gm.code)
    result = gm(tm.tensor([1.0]), tm.tensor([2.0]))
    assert result["r"].tolist() == [11.0]
    assert type(result["p"]) is Pair and result["p"].a.tolist() == [3.0] and result["p"].b[0].tolist() == [9.0]
    assert result["p"].b[1].stop.tolist() == [1.0]
    assert inspect.getsource(gm.forward) == gm.code.lstrip("\n").rstrip(" ")  # linecache holds the source


def _plus_keyword(value, /, **kwargs):
    (other,) = kwargs.values()
    return value + other


# -- class names --------------------------------------------------------------------------------


@pytest.mark.parametrize("class_name, shown", [
    ("class", "class_1"), ("my class", "my_class"), ("1abc", "_1abc"), ("<lambda>", "_lambda_"), ("", "_unnamed"),
    ("x; import os", "x_import_os"), ("None", "None_1"), ("é", "_"), ("Net", "Net"),
])
def test_print_readable_is_valid_python_for_any_class_name(class_name, shown):
    g = fx.Graph()
    g.output(g.placeholder("x"))
    gm = fx.GraphModule({}, g, class_name=class_name)
    assert type(gm).__name__ == class_name  # as torch.fx: the name as given
    text = gm.print_readable(print_output=False)
    assert text.startswith(f"class {shown}(tensormodes.nn.Module):\n")
    _assert_harmless(text)
    assert gm(tm.ones(1)).tolist() == [1.0]
    assert inspect.getsource(gm.forward).startswith("def forward(self, x):")


def test_a_class_name_with_a_null_character_is_refused_as_in_torch_fx():
    g = fx.Graph()
    g.output(g.placeholder("x"))
    with pytest.raises(ValueError, match="type name must not contain null characters"):
        fx.GraphModule({}, g, class_name="a\x00")


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12))
def test_print_readable_parses_whatever_the_class_name(class_name):
    g = fx.Graph()
    g.output(g.placeholder("x"))
    gm = fx.GraphModule({}, g, class_name=class_name)
    tree = ast.parse(gm.print_readable(print_output=False))
    assert isinstance(tree.body[0], ast.ClassDef)


def test_a_class_name_that_is_not_unicode_text_is_refused_as_in_torch_fx():
    # a lone surrogate cannot name a type (PyTorch raises the same UnicodeEncodeError)
    g = fx.Graph()
    g.output(g.placeholder("x"))
    with pytest.raises(UnicodeEncodeError):
        fx.GraphModule({}, g, class_name="\ud800")


@pytest.mark.torch
def test_a_traced_lambda_is_named_as_in_torch_fx():
    import torch.fx

    assert type(fx.symbolic_trace(lambda x: x)).__name__ == type(torch.fx.symbolic_trace(lambda x: x)).__name__
    ast.parse(fx.symbolic_trace(lambda x: x).print_readable(print_output=False))


# -- containers of graph values -----------------------------------------------------------------


def _stack_pair(x, y):
    return tm.stack(Pair(x, y))


def test_tracing_a_named_tuple_argument_records_its_constructor():
    gm = fx.symbolic_trace(_stack_pair)
    assert [(n.op, n.name) for n in gm.graph.nodes] == [
        ("placeholder", "x"), ("placeholder", "y"), ("call_function", "pair"), ("call_function", "stack"),
        ("output", "output")]
    assert next(n for n in gm.graph.nodes if n.name == "pair").target is Pair
    # the class's global is named as torch.fx names it: <module>_<name>
    pair_global = f"{Pair.__module__.replace('.', '_')}_Pair"
    assert gm.code.strip().splitlines()[1:3] == [f"    pair = {pair_global}(x, y);  x = y = None",
                                                 "    stack = tensormodes.stack(pair);  pair = None"]
    assert gm(tm.tensor([1.0]), tm.tensor([2.0])).tolist() == [[1.0], [2.0]]


@pytest.mark.torch
def test_a_named_tuple_argument_traces_to_torch_fx_nodes():
    import torch
    import torch.fx

    ours = fx.symbolic_trace(_stack_pair).graph
    theirs = torch.fx.symbolic_trace(lambda x, y: torch.stack(Pair(x, y))).graph
    assert [(n.op, n.name) for n in ours.nodes] == [(n.op, n.name) for n in theirs.nodes]


def _returns_containers(x, y):
    return (Pair(x + 1, y), collections.OrderedDict([("k", x), ("j y", y * 2)]),
            {"d": [x, (y,)], 3: slice(x, None)}, [tm.return_types.max(x, y)])


def test_returned_named_tuples_and_ordered_dicts_are_rebuilt():
    gm = fx.symbolic_trace(_returns_containers)
    x, y = tm.tensor([1.0]), tm.tensor([2.0])
    pair, ordered, plain, (maximum,) = gm(x, y)
    assert type(pair) is Pair and pair.a.tolist() == [2.0] and pair.b is y
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["k", "j y"]
    assert ordered["k"] is x and ordered["j y"].tolist() == [4.0]
    assert plain["d"][0] is x and plain["d"][1][0] is y and plain[3] == slice(x, None)
    assert type(maximum) is tm.return_types.max and maximum.values is x and maximum.indices is y
    assert "return (pair, OrderedDict({'k': x, 'j y': mul}), {'d': [x, (y,)], 3: slice(x, None, None)}, " \
        "[max_1])" in gm.code
    assert "max_1 = tensormodes.return_types.max(x, y)" in gm.code
    _assert_harmless(gm.print_readable(print_output=False))
    src = gm.graph.python_code("self").src
    assert src == gm.code


def test_containers_built_by_hand_are_rebuilt_and_keep_their_users():
    g = fx.Graph()
    x = g.placeholder("x")
    neg = g.call_function(tm.neg, (x,))
    out = g.output((collections.OrderedDict([("k", x), ("j", neg)]), Pair(x, {"q": neg}), {"n": Pair(1, 2)}))
    assert list(neg.users) == [out] and list(x.users) == [neg, out]
    assert not g.eliminate_dead_code()  # neg is used inside the OrderedDict and the named tuple
    gm = fx.GraphModule({}, g)
    ordered, pair, plain = gm(tm.tensor([1.0]))
    assert type(ordered) is collections.OrderedDict and ordered["j"].tolist() == [-1.0]
    assert type(pair) is Pair and pair.b["q"].tolist() == [-1.0] and plain == {"n": Pair(1, 2)}
    ordered, pair, plain = fx.Interpreter(gm).run(tm.tensor([1.0]))
    assert type(ordered) is collections.OrderedDict and ordered["j"].tolist() == [-1.0]
    assert type(pair) is Pair and pair.b["q"].tolist() == [-1.0]


class _Dict(dict):
    pass


def test_other_container_subclasses_holding_nodes_become_their_base_type():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output((_Dict(k=x), _Dict(c=1)))
    gm = fx.GraphModule({}, g)
    with_node, constant = gm(tm.tensor([1.0]))
    assert type(with_node) is dict and with_node["k"].tolist() == [1.0]
    assert type(constant) is _Dict and constant == {"c": 1}  # no node: the constant itself


def test_map_arg_and_map_aggregate_rebuild_named_tuples_and_ordered_dicts():
    g = fx.Graph()
    x = g.placeholder("x")
    size = tm.Size([2, 3])
    mapped = map_arg((collections.OrderedDict(k=x), Pair(x, [x]), _Dict(k=x), size), lambda n: n.name)
    assert type(mapped[0]) is collections.OrderedDict and mapped[0] == {"k": "x"}
    assert mapped[1] == Pair("x", ["x"]) and type(mapped[1]) is Pair
    assert type(mapped[2]) is dict and mapped[2] == {"k": "x"}
    assert mapped[3] is size  # nothing changed inside: the same object
    assert map_aggregate(Pair(1, collections.OrderedDict(a=2)), lambda v: v * 10) == Pair(10, {"a": 20})


def test_tracer_create_arg_converts_containers():
    tracer = fx.Tracer()
    tracer.graph = fx.Graph()
    x = fx.Proxy(tracer.graph.placeholder("x"), tracer)
    converted = tracer.create_arg(collections.OrderedDict(k=x, p=[Pair(x, 1)]))
    assert type(converted) is collections.OrderedDict and converted["k"] is x.node
    (pair,) = converted["p"]
    assert pair.op == "call_function" and pair.target is Pair and pair.args == (x.node, 1)


# -- names of new nodes --------------------------------------------------------------------------


def _camel(myInput, __x__, ALL_CAPS):
    return myInput + __x__ + ALL_CAPS


def test_new_node_names_are_snake_case_as_in_torch_fx():
    gm = fx.symbolic_trace(_camel)
    assert [n.name for n in gm.graph.nodes] == ["my_input", "x", "all_caps", "add", "add_1", "output"]
    assert gm.code.strip().splitlines()[:4] == ["def forward(self, myInput, __x__, ALL_CAPS):",
                                                "    my_input = myInput", "    x = __x__", "    all_caps = ALL_CAPS"]
    assert gm(ALL_CAPS=tm.tensor([4.0]), myInput=tm.tensor([1.0]), __x__=tm.tensor([2.0])).tolist() == [7.0]
    g = fx.Graph()
    x = g.placeholder("x")
    assert [g.call_method("__add__", (x, 1)).name, g.call_module("encoderBlock.0", (x,)).name] == \
        ["add", "encoder_block_0"]


@pytest.mark.torch
def test_new_node_names_and_code_match_torch_fx():
    import torch.fx

    ours, theirs = fx.symbolic_trace(_camel), torch.fx.symbolic_trace(_camel)
    assert [n.name for n in ours.graph.nodes] == [n.name for n in theirs.graph.nodes]
    assert ours.code == theirs.code
