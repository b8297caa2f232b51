"""FlopCounterMode: exact FLOPs per function, forward and backward, and PyTorch's totals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.modes import LoggingMode
from tensormodes.utils import flop_counter
from tensormodes.utils.flop_counter import FlopCounterMode, einsum_flop, register_flop_formula

aten = tm.ops.aten

try:
    import torch
    from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode
except ImportError:  # the cross-reference oracle is optional
    torch = None


def count(fn, *shapes, grad=False, library=tm, counter=FlopCounterMode):
    """Total FLOPs of ``fn`` on random tensors of ``shapes`` (plus backward of the sum if ``grad``)."""
    rng = np.random.default_rng(0)
    tensors = [library.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=grad) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with counter(display=False) as flops:
            out = fn(*tensors)
            if grad:
                out.sum().backward()
    return flops.get_total_flops()


# (expression over L and F, input shapes, forward FLOPs by hand)
CASES = [
    ("lambda a, b: L.mm(a, b)", [(2, 3), (3, 4)], 2 * 2 * 3 * 4),
    ("lambda a, b: a.mm(b)", [(2, 3), (3, 4)], 2 * 2 * 3 * 4),
    ("lambda a, b: a @ b", [(2, 3), (3, 4)], 2 * 2 * 3 * 4),
    ("lambda a, b: L.matmul(a, b)", [(3,), (3, 4)], 2 * 3 * 4),
    ("lambda a, b: L.matmul(a, b)", [(5, 2, 3), (3, 4)], 2 * 5 * 2 * 3 * 4),
    ("lambda a, b: L.matmul(a, b)", [(2, 3), (5, 3, 4)], 2 * 5 * 2 * 3 * 4),
    ("lambda a, b: L.matmul(a, b)", [(5, 2, 3), (5, 3, 4)], 2 * 5 * 2 * 3 * 4),
    ("lambda a, b: L.matmul(a, b)", [(5, 1, 2, 3), (6, 3, 4)], 2 * 30 * 2 * 3 * 4),
    ("lambda a, b: L.bmm(a, b)", [(5, 2, 3), (5, 3, 4)], 2 * 5 * 2 * 3 * 4),
    ("lambda c, a, b: L.addmm(c, a, b)", [(4,), (2, 3), (3, 4)], 2 * 2 * 3 * 4),
    ("lambda x, w, b: F.linear(x, w, b)", [(8, 4), (3, 4), (3,)], 2 * 8 * 4 * 3),
    ("lambda x, w: F.linear(x, w)", [(2, 8, 4), (3, 4)], 2 * 16 * 4 * 3),
    ("lambda x, w, b: F.linear(x, w, b)", [(4,), (3, 4), (3,)], 2 * 4 * 3),
    ("lambda x, w: F.conv2d(x, w)", [(2, 3, 8, 8), (4, 3, 3, 3)], 2 * 2 * 4 * 3 * 9 * 36),
    ("lambda x, w: F.conv2d(x, w, stride=2, padding=1)", [(2, 3, 8, 8), (4, 3, 3, 3)], 2 * 2 * 4 * 3 * 9 * 16),
    ("lambda x, w, b: F.conv1d(x, w, b)", [(2, 3, 8), (4, 3, 3), (4,)], 2 * 2 * 4 * 3 * 3 * 6),
    ("lambda x, w: F.conv_transpose2d(x, w)", [(2, 3, 5, 5), (3, 4, 3, 3)], 2 * 2 * 3 * 4 * 9 * 25),
    ("lambda x, w: F.conv_transpose1d(x, w, stride=2)", [(2, 3, 5), (3, 4, 3)], 2 * 2 * 3 * 4 * 3 * 5),
    ("lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)", [(1, 2, 4, 5), (2, 3, 3, 3)],
     2 * 1 * 2 * 3 * 9 * 20),
    ("lambda x, w: F.conv2d(x, w, stride=3, padding=2, dilation=2)", [(1, 2, 9, 10), (3, 2, 3, 2)],
     2 * 1 * 3 * 2 * 6 * 3 * 4),
    ("lambda x, w: F.conv1d(x, w, padding='same')", [(1, 2, 6), (3, 2, 4)], 2 * 3 * 2 * 4 * 6),
    ("lambda x, w: L.conv2d(x, w, stride=2)", [(3, 7, 7), (4, 3, 2, 2)], 2 * 4 * 3 * 4 * 9),
    ("lambda q, k, v: F.scaled_dot_product_attention(q, k, v)", [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)],
     2 * 6 * 4 * 6 * 5 + 2 * 6 * 4 * 6 * 7),
    ("lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)", [(3, 4, 5), (3, 4, 5), (3, 4, 7)],
     2 * 3 * 4 * 4 * 5 + 2 * 3 * 4 * 4 * 7),
    ("lambda a, b: L.einsum('ij,jk->ik', a, b)", [(2, 3), (3, 4)], 2 * 2 * 3 * 4),
    ("lambda a, b: L.einsum('bhqd,bhkd->bhqk', a, b)", [(2, 3, 4, 5), (2, 3, 6, 5)], 2 * 6 * 4 * 5 * 6),
    ("lambda a, b, c: L.einsum('ij,jk,kl->il', a, b, c)", [(2, 3), (3, 4), (4, 5)], 2 * 2 * 3 * 4 + 2 * 2 * 4 * 5),
    ("lambda a, b: L.einsum('ij,ij->', a, b)", [(2, 3), (2, 3)], 2 * 6),
    ("lambda a, b: L.einsum('ij,jk->', a, b)", [(2, 3), (3, 4)], 2 * 3),
    ("lambda a, b: L.einsum('...ij,...jk->...ik', a, b)", [(5, 2, 3), (5, 3, 4)], 2 * 5 * 2 * 3 * 4),
    ("lambda a, b: L.einsum('ij,jk', a, b)", [(2, 3), (3, 4)], 2 * 2 * 3 * 4),
    ("lambda a, b: L.einsum('ij,ij->ij', a, b)", [(2, 3), (2, 3)], 0),
    ("lambda a, b: L.einsum('i,j->ij', a, b)", [(2,), (3,)], 0),
    ("lambda a: L.einsum('ii->', a)", [(3, 3)], 0),
    ("lambda a, b: (a * b).relu().sum()", [(2, 3), (2, 3)], 0),
]


def _function(expression: str, library):
    functional = library.nn.functional
    return eval(expression, {"L": library, "F": functional})


@pytest.mark.parametrize("expression, shapes, expected", CASES, ids=[f"{c[0][10:]}-{c[1]}" for c in CASES])
def test_forward_flops_by_hand(expression, shapes, expected):
    assert count(_function(expression, tm), *shapes) == expected


@pytest.mark.torch
@pytest.mark.parametrize("grad", [False, True], ids=["forward", "forward+backward"])
@pytest.mark.parametrize("expression, shapes, expected", CASES, ids=[f"{c[0][10:]}-{c[1]}" for c in CASES])
def test_totals_match_torch(expression, shapes, expected, grad):
    ours = count(_function(expression, tm), *shapes, grad=grad)
    theirs = count(_function(expression, torch), *shapes, grad=grad, library=torch, counter=TorchFlopCounterMode)
    assert ours == theirs


# Matrix-vector and vector-vector products: PyTorch's registry has no formula for aten.mv and
# aten.dot, so its counter reports 0 for them (a matmul with a vector operand becomes mv or dot);
# counting at the dispatch level by PyTorch's table, so does this one.
VECTOR_CASES = [
    ("lambda a, b: L.matmul(a, b)", [(2, 3), (3,)], 0),
    ("lambda a, b: L.matmul(a, b)", [(3,), (3,)], 0),
    ("lambda a, b: L.matmul(a, b)", [(5, 2, 3), (3,)], 0),
    ("lambda a, b: L.mv(a, b)", [(2, 3), (3,)], 0),
    ("lambda a, b: a.dot(b)", [(3,), (3,)], 0),
]


@pytest.mark.parametrize("expression, shapes, expected", VECTOR_CASES,
                         ids=[f"{c[0][10:]}-{c[1]}" for c in VECTOR_CASES])
def test_vector_products_count_nothing_as_in_pytorch(expression, shapes, expected):
    assert count(_function(expression, tm), *shapes) == expected


@pytest.mark.torch
@pytest.mark.parametrize("expression, shapes, expected", VECTOR_CASES,
                         ids=[f"{c[0][10:]}-{c[1]}" for c in VECTOR_CASES])
def test_vector_products_match_torch(expression, shapes, expected):
    assert count(_function(expression, torch), *shapes, library=torch, counter=TorchFlopCounterMode) == expected


def test_backward_is_twice_the_forward_for_a_linear_layer():
    x, w, b = tm.randn(8, 4), tm.randn(3, 4, requires_grad=True), tm.randn(3, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        F.linear(x, w, b).sum().backward()
    counts = counter.get_flop_counts()["Global"]
    # The forward is F.linear's addmm; the weight's gradient grad.t() @ x an mm in the backward
    # (PyTorch 2.13's counts, keyed by aten packets)
    assert counts == {aten.addmm: 2 * 8 * 4 * 3, aten.mm: 2 * 8 * 4 * 3}
    assert [str(key) for key in counts] == ["aten.addmm", "aten.mm"]
    x.requires_grad_(True)
    with FlopCounterMode(display=False) as counter:
        F.linear(x, w, b).sum().backward()
    assert counter.get_total_flops() == 3 * 2 * 8 * 4 * 3


def test_a_conv_backward_is_counted_as_its_two_gradient_convolutions():
    x, w = tm.randn(2, 3, 8, 8, requires_grad=True), tm.randn(4, 3, 3, 3, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        F.conv2d(x, w).sum().backward()
    forward = 2 * 2 * 4 * 3 * 9 * 36
    # the backward is one op, ATen's convolution_backward, counted as PyTorch counts it
    assert counter.get_flop_counts()["Global"] == {aten.convolution: forward, aten.convolution_backward: 2 * forward}


def mlp_step(library, grad_inputs=False):
    rng = np.random.default_rng(0)
    x = library.tensor(rng.standard_normal((32, 64)).astype(np.float32), requires_grad=grad_inputs)
    y = library.tensor(rng.integers(0, 10, 32))
    params = [library.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in ((64, 64), (64,), (10, 64), (10,))]
    functional = library.nn.functional

    def step():
        w1, b1, w2, b2 = params
        loss = functional.cross_entropy(functional.linear(functional.relu(functional.linear(x, w1, b1)), w2, b2), y)
        loss.backward()

    return step


def test_mlp_training_step_flops():
    with FlopCounterMode(display=False) as counter:
        mlp_step(tm)()
    forward = 2 * 32 * 64 * 64 + 2 * 32 * 64 * 10
    # backward: both gradients of the second layer, only the weight's of the first (x needs none)
    assert counter.get_total_flops() == forward + 2 * (2 * 32 * 64 * 10) + 2 * 32 * 64 * 64


@pytest.mark.torch
@pytest.mark.parametrize("grad_inputs", [False, True])
def test_mlp_training_step_matches_torch(grad_inputs):
    with FlopCounterMode(display=False) as ours:
        mlp_step(tm, grad_inputs)()
    with TorchFlopCounterMode(display=False) as theirs:
        mlp_step(torch, grad_inputs)()
    assert ours.get_total_flops() == theirs.get_total_flops()


def test_table_is_pytorchs_and_not_counted_names_the_ops_without_a_formula():
    a = tm.randn(2, 3)
    with FlopCounterMode(display=False, track_uncounted=True) as counter:
        F.relu(a @ a.t() + 1)
    assert counter.get_table() == (
        "Module      FLOP  % Total\n"
        "----------  ----  -------\n"
        "Global        24  100.00%\n"
        " - aten.mm    24  100.00%")
    assert counter.not_counted == {"aten.t": 1, "aten.add": 1, "aten.relu": 1}


def test_table_suffixes_and_display(capsys):
    a, b = tm.ones(100, 100), tm.ones(100, 100)
    with FlopCounterMode() as counter:
        tm.mm(a, b)
        a.mm(b)
    assert counter.get_total_flops() == 4_000_000
    printed = capsys.readouterr().out
    assert printed == counter.get_table() + "\n"
    # PyTorch's suffix rule: 4000000 has 7 digits, so K (1.01B would be 1010M)
    assert printed == ("Module           FLOP  % Total\n"
                       "----------  ---------  -------\n"
                       "Global      4000.000K  100.00%\n"
                       " - aten.mm  4000.000K  100.00%\n")


def test_empty_table():
    with FlopCounterMode(display=False) as counter:
        pass
    assert counter.get_flop_counts() == {}
    assert counter.get_table() == "Module  FLOP  % Total\n------  ----  -------\nGlobal     0       0%"
    assert counter.get_total_flops() == 0


def test_counts_restart_on_each_entry_and_mods_warns():
    counter = FlopCounterMode(display=False)
    a = tm.ones(2, 2)
    with counter:
        a @ a
    with counter:
        a @ a
    assert counter.get_total_flops() == 16
    with pytest.warns(UserWarning, match="mods argument is not needed anymore") as caught:
        FlopCounterMode(mods=[], display=False)
    assert caught[0].filename == __file__


def test_custom_mapping_and_register_flop_formula():
    def relu_flop(x_shape, *args, out_shape=None, **kwargs):
        assert out_shape == x_shape == (2, 3)
        return 6

    with FlopCounterMode(display=False, custom_mapping={aten.relu: relu_flop}, track_uncounted=True) as counter:
        F.relu(tm.ones(2, 3))
    assert counter.get_flop_counts() == {"Global": {aten.relu: 6}}
    assert counter.not_counted == {"aten.ones": 1}

    calls = []

    @register_flop_formula(aten.tanh, get_raw=True)
    def tanh_flop(a, out_val=None):
        calls.append((type(a), type(out_val)))
        return 1

    try:
        with FlopCounterMode(display=False) as counter:
            tm.ones(2).tanh()
        assert counter.get_flop_counts() == {"Global": {aten.tanh: 1}} and calls == [(tm.Tensor, tm.Tensor)]
        with pytest.raises(RuntimeError, match="^duplicate registrations for aten.tanh$"):
            register_flop_formula(aten.tanh)(tanh_flop)
    finally:
        del flop_counter.flop_registry[aten.tanh]
    # PyTorch's error for a target that is not an op packet (a public function, an overload)
    for target in (tm.kron, aten.kron.default):
        with pytest.raises(ValueError, match="expected each target to be OpOverloadPacket"):
            register_flop_formula(target)(tanh_flop)


def test_composes_with_a_logging_mode_on_either_side():
    a = tm.ones(2, 3)
    lines = []
    with LoggingMode(lines), FlopCounterMode(display=False) as counter:
        F.scaled_dot_product_attention(a, a, a)
    assert counter.get_total_flops() == 2 * 2 * 2 * 3 * 2
    with FlopCounterMode(display=False) as outer, LoggingMode(lines):
        F.scaled_dot_product_attention(a, a, a)
    # The logger re-enters itself for the composite's inner calls; they stay below the counter.
    assert outer.get_total_flops() == 2 * 2 * 2 * 3 * 2


def test_einsum_flop_formula():
    assert einsum_flop("ij,jk->ik", [(2, 3), (3, 4)]) == 48
    assert einsum_flop("b i j , b j k -> b i k", (5, 2, 3), (5, 3, 4)) == 240
    assert einsum_flop("ij->ji", (2, 3)) == 0


def test_backward_outside_the_scope_is_not_counted():
    a = tm.randn(2, 3, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        y = tm.einsum("ij,kj->ik", a, a)
    y.sum().backward()
    assert counter.get_total_flops() == 2 * 2 * 3 * 2


@pytest.mark.torch
@pytest.mark.parametrize("size, kernel, stride, padding, dilation", [
    (9, 2, 3, 0, 1),      # one unreached input position: cropped
    (10, 3, 4, 1, 1),     # the unreached position is padding: the right padding goes
    (11, 2, 4, 1, 1),     # unreached padding and input
    (13, 3, 3, 2, 2),     # dilated: unreached positions must make a whole row
    (8, 3, 2, 1, 1),
])
def test_strided_grouped_conv_gradients_and_flops_match_torch(size, kernel, stride, padding, dilation):
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((2, 4, size, size - 1))
    w_np = rng.standard_normal((6, 2, kernel, kernel))
    grads = []
    for library in (tm, torch):
        x, w = library.tensor(x_np, requires_grad=True), library.tensor(w_np, requires_grad=True)
        out = library.nn.functional.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=2)
        (out * out).sum().backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-10)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-10)
    counts = []
    for library, counter_type in ((tm, FlopCounterMode), (torch, TorchFlopCounterMode)):
        x, w = library.tensor(x_np, requires_grad=True), library.tensor(w_np, requires_grad=True)
        out = library.nn.functional.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=2)
        with counter_type(display=False) as counter:
            out.backward(library.ones_like(out))
        counts.append(counter.get_total_flops())
    # the input's gradient costs the forward's FLOPs; PyTorch's formula counts the weight's `groups`
    # times that (it ignores groups), and so does this counter, to give the same numbers
    forward = 2 * 2 * 6 * 2 * kernel * kernel * out.shape[2] * out.shape[3]
    assert counts == [3 * forward, 3 * forward]


class _Handle:
    def __init__(self, hooks, hook):
        self.hooks, self.hook = hooks, hook

    def remove(self):
        self.hooks.remove(self.hook)


class _FakeModuleAPI:
    """Stands for nn.Module's global hook registrars (PyTorch's signatures), which
    tensormodes.nn.modules.module provides when nn.Module is built."""

    def __init__(self):
        self.forward_pre, self.forward, self.backward_pre, self.backward = [], [], [], []
        self.always_call = []

    def register_module_forward_pre_hook(self, hook):
        self.forward_pre.append(hook)
        return _Handle(self.forward_pre, hook)

    def register_module_forward_hook(self, hook, *, with_kwargs=False, always_call=False):
        self.forward.append(hook)
        self.always_call.append(always_call)
        return _Handle(self.forward, hook)

    def register_module_full_backward_pre_hook(self, hook):
        self.backward_pre.append(hook)
        return _Handle(self.backward_pre, hook)

    def register_module_full_backward_hook(self, hook):
        self.backward.append(hook)
        return _Handle(self.backward, hook)


class _FakeModule:
    def __init__(self, api, body=None, **children):
        self.api, self.body, self.children = api, body, children

    def named_children(self):
        return iter(self.children.items())

    def __call__(self, x):
        for hook in list(self.api.forward_pre):
            hook(self, (x,))
        out = self.body(self, x)
        for hook in list(self.api.forward):
            hook(self, (x,), out)
        return out

    def run_backward(self, work):
        for hook in list(self.api.backward_pre):
            hook(self, (None,))
        work()
        for hook in list(self.api.backward):
            hook(self, (None,), (None,))


def test_per_module_attribution_through_the_global_hooks(monkeypatch):
    api = _FakeModuleAPI()
    monkeypatch.setattr(flop_counter, "_module_api", api)
    w1, w2 = tm.ones(4, 3), tm.ones(2, 4)
    fc1 = _FakeModule(api, lambda m, x: F.linear(x, w1))
    fc2 = _FakeModule(api, lambda m, x: F.linear(x, w2))
    inner = _FakeModule(api, lambda m, x: m.children["fc2"](x), fc2=fc2)
    net = _FakeModule(api, lambda m, x: m.children["block"](m.children["fc1"](x)), fc1=fc1, block=inner)
    with FlopCounterMode(display=False, depth=2) as counter:
        assert len(api.forward_pre) == len(api.backward) == 1 and api.always_call == [True]
        out = net(tm.ones(5, 3))
        tm.mm(out, tm.ones(2, 1))                    # outside every module
        fc1.run_backward(lambda: tm.mm(tm.ones(5, 4).t(), tm.ones(5, 3)))
    assert api.forward_pre == api.forward == api.backward_pre == api.backward == []   # removed on exit
    first, second = 2 * 5 * 3 * 4, 2 * 5 * 4 * 2
    # F.linear without a bias is t and mm at the dispatch level: every product here is an mm
    assert counter.get_flop_counts() == {
        "Global": {aten.mm: first + second + 2 * 5 * 2 * 1 + 2 * 4 * 5 * 3},
        "_FakeModule": {aten.mm: first + second},
        "_FakeModule.fc1": {aten.mm: first + 2 * 4 * 5 * 3},
        "_FakeModule.block": {aten.mm: second},
        "_FakeModule.block.fc2": {aten.mm: second}}
    assert counter.get_table() == """\
Module               FLOP  % Total
-------------------  ----  -------
Global                340  100.00%
 - aten.mm            340  100.00%
 _FakeModule          200   58.82%
  - aten.mm           200   58.82%
  _FakeModule.block    80   23.53%
   - aten.mm           80   23.53%
  _FakeModule.fc1     240   70.59%
   - aten.mm          240   70.59%"""


class _MLP(tm.nn.Module):
    def __init__(self, library=tm):
        super().__init__()
        self.fc1, self.act, self.fc2 = library.nn.Linear(64, 128), library.nn.ReLU(), library.nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def _per_module_totals(counter) -> dict[str, int]:
    return {module: sum(counts.values()) for module, counts in counter.get_flop_counts().items()}


def test_flops_are_attributed_to_modules_forward_and_backward():
    model = _MLP()
    with FlopCounterMode(display=False) as counter:
        model(tm.randn(32, 64)).sum().backward()
    fc1, fc2 = 2 * 32 * 64 * 128, 2 * 32 * 128 * 10
    # fc1's input (the data) needs no gradient: its backward computes the weight's only
    assert _per_module_totals(counter) == {"Global": 2 * fc1 + 3 * fc2, "_MLP": 2 * fc1 + 3 * fc2,
                                           "_MLP.fc1": 2 * fc1, "_MLP.fc2": 3 * fc2}
    assert counter.get_flop_counts()["_MLP.fc2"] == {aten.addmm: fc2, aten.mm: 2 * fc2}
    assert counter.get_flop_counts()["_MLP.fc1"] == {aten.addmm: fc1, aten.mm: fc1}
    table = counter.get_table(depth=1)
    assert "_MLP " in table and "_MLP.fc1" not in table
    assert "_MLP.fc1" in counter.get_table(depth=2)


def test_module_hooks_are_removed_on_exit_also_when_forward_raises():
    from tensormodes.nn.modules import _hooks as module_hooks

    registries = (module_hooks._global_forward_pre_hooks, module_hooks._global_forward_hooks,
                  module_hooks._global_backward_pre_hooks, module_hooks._global_backward_hooks)
    before = [len(r) for r in registries]
    with pytest.raises(RuntimeError), FlopCounterMode(display=False):
        assert [len(r) for r in registries] == [n + 1 for n in before]
        _MLP()(tm.randn(2, 3))  # wrong width: fc1 raises
    assert [len(r) for r in registries] == before


@pytest.mark.torch
def test_per_module_flops_match_torch():
    class TorchMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act, self.fc2 = torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    totals = []
    for model, x, counter_type in ((_MLP(), tm.randn(32, 64), FlopCounterMode),
                                   (TorchMLP(), torch.randn(32, 64), TorchFlopCounterMode)):
        with counter_type(display=False) as counter:
            model(x).sum().backward()
        totals.append({k.split(".", 1)[-1] if "." in k else ("MLP" if "MLP" in k else k): v
                       for k, v in _per_module_totals(counter).items()})
    assert totals[0] == totals[1]


def test_flops_of_a_huge_batch_on_the_meta_device_without_computing():
    with tm.device("meta"):
        model = tm.nn.Sequential(tm.nn.Linear(64, 128), tm.nn.ReLU(), tm.nn.Linear(128, 10))
    x = tm.empty(1_000_000, 64, device="meta")
    with FlopCounterMode(display=False) as counter:
        model(x).sum().backward()
    forward = 2 * 1_000_000 * (64 * 128 + 128 * 10)
    # backward: the second layer's input and weight gradients, the first layer's weight gradient
    # only (the input does not require grad)
    backward = 2 * 1_000_000 * (128 * 10 * 2 + 64 * 128)
    assert counter.get_total_flops() == forward + backward == 40_448_000_000
    assert model[0].weight.grad.is_meta and model[0].weight.grad.shape == (128, 64)


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_meta_flops_equal_pytorchs_meta_flops():
    torch_model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to("meta")
    with TorchFlopCounterMode(display=False) as theirs:
        torch_model(torch.empty(100_000, 64, device="meta", requires_grad=True)).sum().backward()
    model = tm.nn.Sequential(tm.nn.Linear(64, 128), tm.nn.ReLU(), tm.nn.Linear(128, 10)).to("meta")
    with FlopCounterMode(display=False) as ours:
        model(tm.empty(100_000, 64, device="meta", requires_grad=True)).sum().backward()
    assert ours.get_total_flops() == theirs.get_total_flops()


@pytest.mark.parametrize(("name", "call", "flops"), [
    ("mm", lambda a, w: (a @ w).sum().backward(), 240),
    ("mm, wanted operand left", lambda a, w: (w.t() @ a.t()).sum().backward(), 240),
    ("addmm", lambda a, w: tm.addmm(tm.zeros(5), a, w).sum().backward(), 240),
    ("bmm", lambda a, w: tm.bmm(a.expand(2, 4, 3), w.expand(2, 3, 5)).sum().backward(), 480),
    ("linear", lambda a, w: F.linear(a, w.t()).sum().backward(), 240),
], ids=lambda v: v if isinstance(v, str) else "")
def test_backward_counts_only_the_gradients_that_are_wanted(name, call, flops):
    """A product's backward computes (and counts) the gradient of an operand that requires none
    no more than PyTorch's: 4x3 @ 3x5 forward is 120 FLOPs, the one wanted gradient 120 more
    (PyTorch 2.13's FlopCounterMode gives these totals)."""
    a, w = tm.randn(4, 3), tm.randn(3, 5, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        call(a, w)
    assert counter.get_total_flops() == flops


# -- the same models under both counters: totals, per op, per module (PyTorch's keys) -------------

def _models(library):
    nn = library.nn
    library.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 4, 3, stride=2),
                        nn.Flatten(), nn.Linear(4 * 1 * 1, 5))
    # (dropout > 0: PyTorch's module tracker loses track of a dropout that returns its input itself)
    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.1, batch_first=True)
    return {"mlp": (mlp, (6, 16)), "cnn": (cnn, (2, 3, 8, 8)), "transformer": (layer, (2, 5, 16))}


def _counts_by_name(library, counter_type, name, grad_input, attention=None):
    model, shape = _models(library)[name]
    x = library.randn(*shape, requires_grad=grad_input)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with attention if attention is not None else _nothing(), counter_type(display=False) as counter:
            model(x).square().sum().backward()
    return {module: {str(op): n for op, n in per_op.items()} for module, per_op in counter.get_flop_counts().items()}


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None


MODEL_FLOPS = {  # PyTorch 2.13's counts (the math attention path for the transformer layer)
    # forward 2*6*16*32 and 2*6*32*4; backward: both gradients of the second layer, the first
    # layer's weight gradient only (the input needs none)
    ("mlp", False): {"Global": {"aten.addmm": 7_680, "aten.mm": 9_216},
                     "Sequential": {"aten.addmm": 7_680, "aten.mm": 9_216},
                     "Sequential.0": {"aten.addmm": 6_144, "aten.mm": 6_144},
                     "Sequential.2": {"aten.addmm": 1_536, "aten.mm": 3_072}},
}


@pytest.mark.torch
@pytest.mark.parametrize("grad_input", [False, True], ids=["params only", "input too"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_model_flops_per_op_and_module_match_torch(name, grad_input):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ours = _counts_by_name(tm, FlopCounterMode, name, grad_input)
    theirs = _counts_by_name(torch, TorchFlopCounterMode, name, grad_input, sdpa_kernel(SDPBackend.MATH))
    assert ours == theirs
    if (name, grad_input) in MODEL_FLOPS:
        assert ours == MODEL_FLOPS[name, grad_input]


def test_mlp_flops_per_op_and_module():
    assert _counts_by_name(tm, FlopCounterMode, "mlp", False) == MODEL_FLOPS["mlp", False]
