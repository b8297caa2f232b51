"""Tracing details as torch.fx has them (issue 30, item 6): variadic parameters, concrete_args
guards, traced_func_name, __fx_create_arg__, the mutable-operation check, dict keys, Proxy
without a tracer, and fx.wrap rebinding globals. Literal expectations, and torch.fx itself
where it is installed."""

import warnings

import pytest

import tensormodes as tm
from tensormodes import fx


def _lib(name):
    if name == "torch":
        pytest.importorskip("torch")
        import torch
        import torch.fx

        return torch, torch.fx
    return tm, fx


BOTH = pytest.param("tensormodes"), pytest.param("torch", marks=pytest.mark.torch)


def _code(gm):
    return gm.code.strip().replace("torch.", "tensormodes.")


@pytest.mark.parametrize("lib", BOTH)
def test_star_args_and_kwargs_are_traced_values(lib):
    L, F = _lib(lib)

    def f(x, *args, k=2, **kwargs):
        return x + args[0] * k + kwargs["w"]

    gm = F.symbolic_trace(f)
    assert _code(gm) == """def forward(self, x, k = 2, *args, **kwargs):
    _args = args
    _kwargs = kwargs
    getitem = _args[0];  _args = None
    mul = getitem * k;  getitem = k = None
    add = x + mul;  x = mul = None
    getitem_1 = _kwargs['w'];  _kwargs = None
    add_1 = add + getitem_1;  add = getitem_1 = None
    return add_1"""
    assert gm(L.tensor([1.0]), 3, L.tensor([2.0]), w=L.tensor([10.0])).tolist() == [1 + 2 * 3 + 10.0]


@pytest.mark.parametrize("lib", BOTH)
def test_star_args_alone(lib):
    L, F = _lib(lib)
    gm = F.symbolic_trace(lambda *args: args[0] + args[1])
    assert [n.name for n in gm.graph.nodes] == ["_args", "getitem", "getitem_1", "add", "output"]
    assert gm(L.tensor([1.0]), L.tensor([2.0])).tolist() == [3.0]


def test_star_args_of_a_module_forward():
    class M(tm.nn.Module):
        def forward(self, *inputs):
            return inputs[0] - inputs[1]

    gm = fx.symbolic_trace(M())
    assert gm(tm.tensor([5.0]), tm.tensor([2.0])).tolist() == [3.0]


@pytest.mark.parametrize("lib", BOTH)
def test_concrete_none_is_guarded(lib):
    L, F = _lib(lib)

    def f(x, flag):
        return x + 1 if flag is None else x

    gm = F.symbolic_trace(f, concrete_args={"flag": None})
    assert _code(gm) == """def forward(self, x, flag_1):
    _assert_is_none = tensormodes.fx._symbolic_trace._assert_is_none(flag_1, 'flag has been specialized to have value None but got another value');  flag_1 = _assert_is_none = None
    add = x + 1;  x = None
    return add"""  # noqa: E501
    assert gm(L.ones(1), None).tolist() == [2.0]
    with pytest.raises(AssertionError, match="^flag has been specialized to have value None but got another value$"):
        gm(L.ones(1), 3)


@pytest.mark.parametrize("lib", BOTH)
def test_concrete_number_is_guarded_and_keeps_the_default(lib):
    L, F = _lib(lib)

    def f(x, n=3):
        return x + n

    gm = F.symbolic_trace(f, concrete_args={"n": 3})
    assert [n.name for n in gm.graph.nodes] == ["x", "n_1", "eq", "_assert", "add", "output"]
    assert gm.code.strip().splitlines()[0] == "def forward(self, x, n_1 = 3):"
    assert gm(L.ones(1)).tolist() == [4.0]
    with pytest.raises(AssertionError, match="^n has been specialized to have value 3 but got another value$"):
        gm(L.ones(1), 4)
    gm.graph.eliminate_dead_code()  # the guards are side effects
    assert [n.name for n in gm.graph.nodes] == ["x", "n_1", "eq", "_assert", "add", "output"]


def test_concrete_object_without_guard_warns():
    marker = object()
    with pytest.warns(UserWarning, match="^Was not able to add assertion to guarantee correct input s"):
        gm = fx.symbolic_trace(lambda x, s: x + 1 if s is marker else x, concrete_args={"s": marker})
    assert [n.name for n in gm.graph.nodes] == ["x", "s_1", "add", "output"]


@pytest.mark.parametrize("lib", BOTH)
def test_traced_func_name(lib):
    L, F = _lib(lib)

    class T(F.Tracer):
        traced_func_name = "run"

    class M(L.nn.Module):
        def forward(self, x):
            return x + 1

        def run(self, x):
            return x * 2

    assert [n.name for n in T().trace(M()).nodes] == ["x", "mul", "output"]
    T.traced_func_name = "nope"
    with pytest.raises(AssertionError, match="^traced_func_name=nope doesn't exist in M$"):
        T().trace(M())


class _Box:
    def __init__(self, v):
        self.v = v

    def __fx_create_arg__(self, tracer):
        return tracer.create_node("call_function", _Box, (tracer.create_arg(self.v),), {})


@pytest.mark.parametrize("lib", BOTH)
def test_fx_create_arg(lib):
    _, F = _lib(lib)
    gm = F.symbolic_trace(lambda x: (x, _Box(3)))
    assert [(n.op, n.target, n.args) for n in gm.graph.nodes][1] == ("call_function", _Box, (3,))
    out = gm(5)
    assert out[0] == 5 and isinstance(out[1], _Box) and out[1].v == 3


_MUTABLE_MESSAGE = (r"\. FX only supports functional code, so operations that mutate operands in-place \(e\.g\. via "
                    r"`out` arguments\) are not supported$")


@pytest.mark.parametrize("lib", BOTH)
def test_check_mutable_operations(lib):
    L, F = _lib(lib)

    class Strict(F.Tracer):
        check_mutable_operations = True

    assert [n.op for n in Strict().trace(lambda x: x.add_(1)).nodes][1] == "call_method"  # methods are not checked
    if lib == "torch":
        with pytest.raises(RuntimeError, match=r"^Tried to trace mutable operation aten::relu_.*" + _MUTABLE_MESSAGE):
            Strict().trace(lambda x: L.relu_(x))
        return
    # tensormodes has no in-place functions; out= (which torch.fx's message names) is refused
    with pytest.raises(RuntimeError, match=r"^Tried to trace mutable operation tensormodes\.add" + _MUTABLE_MESSAGE):
        Strict().trace(lambda x, y: L.add(x, 1, out=y))
    with pytest.raises(RuntimeError, match=r"^Tried to trace mutable operation operator\.setitem" + _MUTABLE_MESSAGE):
        Strict().trace(lambda x: x.__setitem__(0, 1))
    assert [n.target for n in F.Tracer().trace(lambda x, y: L.add(x, 1, out=y)).nodes][2] is L.add


@pytest.mark.parametrize("lib", BOTH)
def test_proxy_as_dict_key(lib):
    L, F = _lib(lib)

    def lookup(x):
        d = {x: 1}
        return d[x] + x

    assert F.symbolic_trace(lookup)(L.ones(1)).tolist() == [2.0]
    with pytest.raises(RuntimeError, match="^Keys for dictionaries used as an argument cannot contain a Node. "
                                           "Got key: x$"):
        F.symbolic_trace(lambda x: {x: 1})


@pytest.mark.parametrize("lib", BOTH)
def test_proxy_without_a_tracer_appends_to_the_graph(lib):
    _, F = _lib(lib)
    g = F.Graph()
    x = F.Proxy(g.placeholder("x"))
    y = (x + 1).relu()
    g.output(y.node)
    assert type(x.tracer).__name__ == "GraphAppendingTracer" and x.tracer.graph is g
    assert [n.name for n in g.nodes] == ["x", "add", "relu", "output"]
    assert F.GraphModule({}, g)(-3) if lib == "never" else True


def _later(x):
    return x * 3


@pytest.mark.parametrize("lib", BOTH)
def test_wrap_statement_rebinds_the_global(lib):
    _, F = _lib(lib)
    namespace = {"F": F, "__name__": "fx_wrap_example"}
    exec("def triple(x):\n    return x * 3\nF.wrap(triple)\ndef f(x):\n    return triple(x) + 1\n", namespace)
    gm = F.symbolic_trace(namespace["f"])
    assert [n.name for n in gm.graph.nodes] == ["x", "triple", "add", "output"]
    assert gm(2) == 7


@pytest.mark.parametrize("lib", BOTH)
def test_wrap_name_before_definition(lib):
    _, F = _lib(lib)
    namespace = {"F": F, "__name__": "fx_wrap_example"}
    exec("F.wrap('later')\ndef later(x):\n    return x * 3\ndef f(x):\n    return later(x) + 1\n", namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = F.symbolic_trace(namespace["f"])
    assert [n.name for n in gm.graph.nodes] == ["x", "later", "add", "output"]
    assert gm(2) == 7


# -- item 7 (part): type_expr ----------------------------------------------------------------


@pytest.mark.parametrize("lib", BOTH)
def test_type_expr_is_printed_as_torch_fx_prints_it(lib):
    import typing

    L, F = _lib(lib)

    def f(x: L.Tensor, n: int, values: typing.List[int]) -> L.Tensor:  # noqa: UP006 - typing's repr is the point
        return x + n

    text = str(F.symbolic_trace(f).graph).replace("torch.", "tensormodes.")
    assert text.splitlines()[1:4] == [
        "    %x : tensormodes.Tensor [num_users=1] = placeholder[target=x]",
        "    %n : int [num_users=1] = placeholder[target=n]",
        "    %values : typing.List[int] [num_users=0] = placeholder[target=values]"]
    g = F.Graph()
    a = g.placeholder("a", type_expr=int)
    g.output(g.call_function(abs, (a,), type_expr=float))
    assert str(g).splitlines()[2] == ("    %abs_1 : float [num_users=1] = call_function[target=builtins.abs](args = "
                                      "(%a,), kwargs = {})")
