"""Unbacked symbolic scalars in make_fx's fake tracing (tm.SymInt, SymFloat, SymBool): a value read
from a fake tensor is a symbol recorded as aten._local_scalar_dense, arithmetic on it is recorded as
graph nodes, factories take it as a size, and Python needing its value raises
GuardOnDataDependentSymNode — checked against PyTorch's make_fx where installed, and literally."""

from __future__ import annotations

import operator

import pytest

import tensormodes as tm
from tensormodes._subclasses.fake_tensor import DataDependentOutputException, FakeTensor, FakeTensorMode
from tensormodes.fx.experimental.proxy_tensor import make_fx
from tensormodes.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv

I64 = "int64"


def _fake(f, *inputs):
    return make_fx(f, tracing_mode="fake")(*inputs)


def _arithmetic(L, x):
    n = x.sum().item()
    return x * (n * 2 + 1), x * (3 - n), x * (n // 2), x * (n % 3), x * (n / 2), x * (-n), x * (2.5 * n), \
        L.full((1,), n > 2), L.full((1,), n == 3)


def _grad_of_scaled(L, x):
    n = x.detach().sum().item()
    return L.autograd.grad((x * n).sum(), [x])[0]


# name -> (function of the library and an input, input maker)
_ORACLE = {
    "item_scales": (lambda L, x: x * x.sum().item(), lambda L: L.ones(3)),
    "arithmetic": (_arithmetic, lambda L: L.ones(3, dtype=L.int64)),
    "unused_arithmetic_erased": (lambda L, x: (x.sum().item() * 5, x)[1] * 2, lambda L: L.ones(3, dtype=L.int64)),
    "zeros_of_item": (lambda L, x: L.zeros(x.sum().item()), lambda L: L.ones(3, dtype=L.int64)),
    "new_zeros_add_sum": (lambda L, x: (x.new_zeros(x.sum().item()) + 1).sum(), lambda L: L.ones(3, dtype=L.int64)),
    "affine_size": (lambda L, x: L.zeros(x.sum().item() * 2 + 1) + x.sum(), lambda L: L.ones(3, dtype=L.int64)),
    "factories_reductions": (lambda L, x: (L.ones(x.sum().item(), 4).sum(1), L.full((x.sum().item(),), 2.5).exp(),
                                           L.zeros(2, x.max().item()).mean(0).float()),
                             lambda L: L.ones(3, dtype=L.int64)),
    "tolist_2d": (lambda L, x: x.tolist(), lambda L: L.ones(2, 2, dtype=L.int64)),
    "tolist_scales": (lambda L, x: x * x.tolist()[0], lambda L: L.ones(2)),
    "returns_the_value": (lambda L, x: x.sum().item(), lambda L: L.ones(3)),
    "several_values": (lambda L, x: x * (x.sum().item() + x.max().item()), lambda L: L.ones(3, dtype=L.int64)),
    "joint_graph": (_grad_of_scaled, lambda L: L.ones(3, requires_grad=True)),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_ORACLE))
def test_fake_tracing_records_pytorchs_graph_and_runs(name):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    fn, inputs = _ORACLE[name]
    ours = _fake(lambda x: fn(tm, x), inputs(tm))
    theirs = torch_make_fx(lambda x: fn(torch, x), tracing_mode="fake")(inputs(torch))
    assert ours.code == theirs.code.replace("torch.", "tensormodes.")  # the same code, letter for letter
    ours_out, theirs_out = ours(inputs(tm) * 3), theirs(inputs(torch) * 3)  # computed anew from other data
    assert str(ours_out).replace("tensormodes", "torch") == str(theirs_out)


@pytest.mark.torch
def test_symbols_print_and_type_as_pytorchs():
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def seen(L):
        values = []

        def f(x):
            n, m, r = x.sum().item(), x.max().item(), x.float().sum().item()
            y = L.zeros(n, 3)
            # (not n % 3: PyTorch prints Mod(u0, 3) once u0 was a size, PythonMod(u0, 3) before; ours always the latter)
            values.extend([n, m, r, n + m, n * 2 + 1, 3 - n, n - 1, -n, n // 2, n / 2, 2.5 * n, n > 2,
                           n == 3, n != 3, (x > 0).all().item(), y.shape, y.size(0), y.numel(), y.stride()])
            return x

        torch_make_fx(f, tracing_mode="fake")(torch.ones(2, dtype=torch.int64)) if L is torch else \
            _fake(f, tm.ones(2, dtype=tm.int64))
        return [(type(v).__name__, str(v).replace("torch.", "").replace("tensormodes.", "")) for v in values]

    assert seen(tm) == seen(torch)


def _guard_cases(L):
    def positive(x):
        if x.sum().item() > 0:
            return x
        return -x

    return {
        "if_compare": (positive, L.ones(2, dtype=L.int64)),
        "int_of_float_symbol": (lambda x: x * int(x.sum().item()), L.ones(2)),
        "int_of_tensor": (lambda x: x * int(x.sum()), L.ones(2, dtype=L.int64)),
        "float_of_float_symbol": (lambda x: x * float(x.sum().item()), L.ones(2)),
        "bool_of_bool_tensor": (lambda x: x if (x > 0).all() else -x, L.ones(2)),
        "bool_of_int_tensor": (lambda x: x if x.sum() else -x, L.ones(2, dtype=L.int64)),
        "bool_of_float_tensor": (lambda x: x if x.sum() else -x, L.ones(2)),
        "if_symint": (lambda x: x if x.sum().item() else -x, L.ones(2, dtype=L.int64)),
        "range": (lambda x: [x for _ in range(x.sum().item())][0], L.ones(2, dtype=L.int64)),
    }


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_guard_cases(tm)))
def test_needing_the_value_raises_pytorchs_guard_error(name):
    import torch
    from torch.fx.experimental import symbolic_shapes
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    f, x = _guard_cases(torch)[name]
    with pytest.raises(symbolic_shapes.GuardOnDataDependentSymNode) as theirs:
        torch_make_fx(f, tracing_mode="fake")(x)
    f, x = _guard_cases(tm)[name]
    with pytest.raises(GuardOnDataDependentSymNode) as ours:
        _fake(f, x)
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]
    assert tm.utils._python_dispatch._get_current_dispatch_mode_stack() == []


@pytest.mark.torch
def test_hash_and_plain_fake_mode_as_pytorch():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def hashed(x):
        hash(x.sum().item())

    with pytest.raises(TypeError) as theirs:
        torch_make_fx(hashed, tracing_mode="fake")(torch.ones(2, dtype=torch.int64))
    with pytest.raises(TypeError) as ours:
        _fake(hashed, tm.ones(2, dtype=tm.int64))
    assert str(ours.value) == str(theirs.value) == "unhashable type: non-nested SymInt"
    # without make_fx (no ShapeEnv) a value stays refused, in both
    with TorchFakeTensorMode(), pytest.raises(Exception) as theirs:
        torch.ones(2).sum().item()
    with FakeTensorMode(), pytest.raises(DataDependentOutputException) as ours:
        tm.ones(2).sum().item()
    assert type(theirs.value).__name__ == type(ours.value).__name__ and str(ours.value) == str(theirs.value)
    assert issubclass(GuardOnDataDependentSymNode, RuntimeError)


# -- literal tests (no PyTorch) ----------------------------------------------------------------

def test_arithmetic_is_recorded_and_the_graph_computes_fs_values():
    def f(x):
        n = x.sum().item()
        assert isinstance(n, tm.SymInt) and str(n) == "u0"
        m = n * 2 + 1
        assert isinstance(m, tm.SymInt) and repr(m) == "2*u0 + 1"
        unused = n - 7  # noqa: F841 - erased from the graph: nothing uses it
        return x * m

    gm = _fake(f, tm.ones(3, dtype=tm.int64))
    assert gm.code.strip() == """def forward(self, x_1):
    sum_1 = tensormodes.ops.aten.sum.default(x_1)
    _local_scalar_dense = tensormodes.ops.aten._local_scalar_dense.default(sum_1);  sum_1 = None
    mul = _local_scalar_dense * 2;  _local_scalar_dense = None
    add = mul + 1;  mul = None
    mul_1 = tensormodes.ops.aten.mul.Tensor(x_1, add);  x_1 = add = None
    return mul_1"""
    sym_nodes = [n for n in gm.graph.nodes if n.target in (operator.mul, operator.add)]
    assert [str(n.meta["val"]) for n in sym_nodes] == ["2*u0", "2*u0 + 1"]
    x = tm.tensor([1, 2, 4])
    assert tm.equal(gm(x), x * (7 * 2 + 1))


def test_factories_take_an_unbacked_size_and_pointwise_ops_and_reductions_follow():
    seen = {}

    def f(x):
        n = x.sum().item()
        y = x.new_zeros(n) + 1
        z = tm.zeros(2, n * 2 + 1)
        seen.update(y=y, z=z, numel=z.numel(), s=y.sum(), m=z.mean(0))
        return y.sum(), z.float().exp().sum(1)

    gm = _fake(f, tm.ones(3, dtype=tm.int64))
    y, z = seen["y"], seen["z"]
    assert isinstance(y, FakeTensor) and repr(y) == "FakeTensor(..., size=(u0,), dtype=tensormodes.int64)"
    assert str(z.shape) == "tensormodes.Size([2, 2*u0 + 1])" and str(z.stride()) == "(2*u0 + 1, 1)"
    assert str(seen["numel"]) == "2*(2*u0 + 1)" and isinstance(seen["numel"], tm.SymInt)
    assert tuple(seen["s"].shape) == () and str(seen["m"].shape) == "tensormodes.Size([2*u0 + 1])"
    total, sums = gm(tm.tensor([2, 3]))
    assert tm.equal(total, tm.tensor(5)) and tm.equal(sums, tm.full((2,), 11.0))
    assert [str(n.target) for n in gm.graph.nodes if n.op == "call_function"][:5] == [
        "aten.sum.default", "aten._local_scalar_dense.default", "aten.new_zeros.default", "aten.add.Tensor",
        "<built-in function mul>"]


def test_an_op_whose_meta_rule_cannot_take_the_size_names_itself():
    def f(x):
        return tm.zeros(x.sum().item()).view(-1)

    with pytest.raises(RuntimeError, match=r"aten\.view\.default: cannot run on an unbacked symbolic size \(an input "
                                           r"of size \(u0,\)\)"):
        _fake(f, tm.ones(3, dtype=tm.int64))
    with pytest.raises(RuntimeError, match=r"aten\.arange\.default: cannot run on an unbacked symbolic size "
                                           r"\(u0 as argument end\)"):
        _fake(lambda x: tm.arange(x.sum().item()), tm.ones(3, dtype=tm.int64))
    with pytest.raises(RuntimeError, match="more than one symbol: u0, u1"):
        _fake(lambda x: tm.zeros(x.sum().item()) + tm.zeros(x.max().item()), tm.ones(3, dtype=tm.int64))
    with pytest.raises(RuntimeError, match=r"aten\.add_\.Tensor: cannot run on an unbacked symbolic size"):
        _fake(lambda x: tm.zeros(x.sum().item()).add_(1), tm.ones(3, dtype=tm.int64))
    assert tm.utils._python_dispatch._get_current_dispatch_mode_stack() == []


def test_guard_errors_and_symbol_numbering():
    env = ShapeEnv()
    n, m, r = env.create_unbacked_symint(), env.create_unbacked_symint(), env.create_unbacked_symfloat()
    assert (str(n), str(m), str(r), str(n + m), str(env.create_unbacked_symbool())) == ("u0", "u1", "zuf0", "u0 + u1",
                                                                                        "Eq(u2, 1)")
    with pytest.raises(GuardOnDataDependentSymNode, match=r"^Could not guard on data-dependent expression u0 > 0 "
                                                          r"\(unhinted: u0 > 0\)"):
        bool(n > 0)
    with pytest.raises(GuardOnDataDependentSymNode, match=r"^Could not extract specialized integer from "
                                                          r"data-dependent expression TruncToInt\(zuf0\)"):
        int(r)
    with pytest.raises(GuardOnDataDependentSymNode, match="Could not extract specialized integer .* u1"):
        [1, 2][m]
    with pytest.raises(TypeError, match="unhashable type: non-nested SymFloat"):
        hash(r)
    assert tm.sym_float(2) == 2.0 and str(tm.sym_float(n)) == "ToFloat(u0)"


def test_plain_fake_mode_and_real_tracing_still_refuse_a_value():
    with FakeTensorMode(), pytest.raises(DataDependentOutputException, match="_local_scalar_dense"):
        tm.ones(2).sum().item()
    with FakeTensorMode(shape_env=ShapeEnv()):
        value = tm.ones(2).sum().item()
    assert isinstance(value, tm.SymFloat) and str(value) == "zuf0"
    with pytest.raises(RuntimeError, match="get value out of a tracing tensor"):
        make_fx(lambda x: x * x.sum().item())(tm.ones(2))
