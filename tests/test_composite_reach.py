"""A composite's reach (``_dispatch.composite_reach``): the ops its decomposition and the gradient
formulas of either form may run, read from their code. A dispatch mode declaring ``handled_ops``
leaves a composite undecomposed when that reach holds none of them (``cross_entropy`` under
``FlopCounterMode``), so it costs what it costs with no mode; the reading must never miss an op."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes._dispatch.composite_reach import op_closure
from tensormodes._ops import OPS
from tensormodes.utils._python_dispatch import TorchDispatchMode

from .op_samples import callable_for, materialize, tm_maker

aten = tm.ops.aten
COMPOSITES = sorted({opdef.name for name, opdef in OPS.items() if opdef.decompose is not None and opdef.name == name})


class Seen(TorchDispatchMode):
    """Every op the dispatch level shows, as the table's op names its overload may stand for."""

    def __init__(self, handled_ops=None):
        super().__init__()
        if handled_ops is not None:
            self.handled_ops = handled_ops
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


def _table_names(overload) -> set[str]:
    names = {overload._opdef.name}
    names.update(view._opdef.name for view in overload.__dict__.get("_alternatives", ()))
    return names


def _run(opdef, sample):
    """The sample's call, then the gradient of its first floating output (given, not seeded, and
    by ``autograd.grad``: autograd's own seed and accumulation are not the composite's ops)."""
    args, kwargs = materialize(sample, tm_maker)
    leaves = [a for a in args if isinstance(a, tm.Tensor) and a.dtype in (tm.float32, tm.float64)]
    for leaf in leaves:
        leaf.requires_grad_()
    grad_seed = None
    try:
        out = callable_for(opdef, tm)(*args, **kwargs)
        first = out if isinstance(out, tm.Tensor) else next(iter(out), None) if isinstance(out, tuple) else None
        if isinstance(first, tm.Tensor) and first.requires_grad and leaves:
            with tm.no_grad():
                grad_seed = tm.ones_like(first)
            tm.autograd.grad(first, leaves, grad_seed, allow_unused=True, create_graph=True)
    except (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError):
        pass  # a sample's error (and what ran before it) is checked all the same


@pytest.mark.filterwarnings("ignore::UserWarning")  # deprecated ops (lu, range) warn
@pytest.mark.parametrize("name", COMPOSITES)
def test_a_composites_reach_holds_every_op_its_samples_run(name):
    opdef = OPS[name]
    if not opdef.samples:
        pytest.skip("no samples declared")
    reach = op_closure(name)
    assert reach is not None, f"{name}: the reading could not follow its code"
    for sample in opdef.samples:
        with Seen() as seen:
            _run(opdef, sample)
        missed = {str(op) for op in seen.ops if not _table_names(op) & reach}
        assert not missed - {"aten.ones_like.default"}, f"{name}{sample.args}: {sorted(missed)}"


def test_reach_of_the_mlp_composites():
    products = {"mm", "addmm", "bmm", "baddbmm", "mv", "dot", "convolution", "einsum"}
    assert not op_closure("_cross_entropy_loss") & products
    assert not op_closure("reshape") & products
    assert {"addmm", "mm"} <= op_closure("linear")
    assert "convolution" in op_closure("conv2d")


def _cross_entropy_step(mode=None):
    logits = tm.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    weight = tm.tensor(np.full((4, 4), 0.25, np.float32), requires_grad=True)
    with mode if mode is not None else _Nothing():
        loss = tm.nn.functional.cross_entropy(logits.mm(weight), tm.tensor([0, 3, 1]))
        loss.backward()
    return loss, logits.grad, weight.grad


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_composite_reaching_no_declared_op_records_its_own_node():
    plain = _cross_entropy_step()
    every = Seen()
    everything = _cross_entropy_step(every)
    products = Seen(frozenset({aten.mm, aten.addmm}))
    declared = _cross_entropy_step(products)
    # undecomposed under the declaring mode, as with no mode; PyTorch's ops under a mode seeing all
    assert type(declared[0].grad_fn).__name__ == type(plain[0].grad_fn).__name__
    assert type(everything[0].grad_fn).__name__ == "NllLossBackward0"
    assert "aten._log_softmax.default" in [str(op) for op in every.ops]
    # the declaring mode sees the same calls of its ops; values and gradients bit for bit
    assert [str(op) for op in products.ops] == [str(op) for op in every.ops if op.overloadpacket is aten.mm]
    assert [str(op) for op in products.ops] == ["aten.mm.default"] * 3
    for a, b, c in zip(plain, everything, declared):
        assert np.array_equal(a.detach().numpy(), c.detach().numpy())
        assert np.array_equal(b.detach().numpy(), c.detach().numpy())


def test_a_composite_reaching_a_declared_op_still_decomposes():
    seen = Seen(frozenset({aten._log_softmax}))
    loss, _, _ = _cross_entropy_step(seen)
    assert type(loss.grad_fn).__name__ == "NllLossBackward0"
    assert [str(op) for op in seen.ops] == ["aten._log_softmax.default"]
    backward = Seen(frozenset({aten._log_softmax_backward_data}))
    _cross_entropy_step(backward)  # only the decomposed graph's backward runs it
    assert [str(op) for op in backward.ops] == ["aten._log_softmax_backward_data.default"]


class Products(Seen):
    """Sees only products (``dispatch_sees_autograd`` off: autograd keeps its own forms)."""

    def __init__(self):
        super().__init__(frozenset({aten.mm, aten.addmm, aten.bmm}))


def _calls(ops_and_args):
    return [(str(op), [tuple(a.shape) for a in args if isinstance(a, tm.Tensor)]) for op, args in ops_and_args]


class SeenWithShapes(Seen):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append((func, args))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("input_shape, bias, input_grad", [
    ((5, 3), True, False), ((5, 3), True, True), ((5, 3), False, True), ((2, 5, 3), True, True)])
def test_linear_under_a_products_mode_records_its_own_node_only_where_its_formula_calls_pytorchs_products(
        input_shape, bias, input_grad):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(input_shape).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32),
              rng.standard_normal(4).astype(np.float32)]

    def program(mode):
        x = tm.tensor(arrays[0], requires_grad=input_grad)
        w = tm.tensor(arrays[1], requires_grad=True)
        b = tm.tensor(arrays[2], requires_grad=True) if bias else None
        with mode if mode is not None else _Nothing():
            out = tm.nn.functional.linear(x, w, b)
            node = out.grad_fn
            (out * out).sum().backward()
        return node, [out, w.grad] + ([x.grad] if input_grad else []) + ([b.grad] if bias else [])

    _, plain = program(None)
    every = SeenWithShapes()
    _, everything = program(every)
    products = SeenWithShapes(frozenset({aten.mm, aten.addmm, aten.bmm}))
    node, declared = program(products)
    fused = bias and len(input_shape) == 2  # one addmm: linear's formula calls addmm's mm calls
    # the decomposed graph holds weight.t()'s node; linear's own node takes the weight itself
    has_t = any(type(f).__name__ == "TBackward0" for f, _ in node.next_functions)
    assert has_t is (not fused and len(input_shape) == 2)
    assert type(node).__name__ == type(everything[0].grad_fn).__name__
    seen = _calls(products.ops)
    assert seen == [call for call in _calls(every.ops) if call[0].split(".")[1] in ("mm", "addmm", "bmm")]
    assert seen[0][0] == ("aten.addmm.default" if bias and len(input_shape) in (2, 3) else "aten.mm.default")
    for a, b, c in zip(plain, everything, declared):
        assert np.array_equal(a.detach().numpy(), c.detach().numpy())
        assert np.array_equal(b.detach().numpy(), c.detach().numpy())
