"""What a ``TorchDispatchMode`` sees during the backward of a binary op with BOTH operands wanting a
gradient (issue 24 §3): PyTorch's generated nodes compute ``other``'s gradient before ``input``'s,
and its C++ formulas make an expression's operands right to left (``-grad * (a / b)``: the quotient
first). ``tests/test_dispatch_backward.py`` checks one leaf at a time; here the order matters.

The lists are PyTorch 2.13's, logged for ``autograd.grad(f(x, y).sum(), [x, y])`` with x of shape
(2, 3) and y of shape (3,) (so y's gradient is reduced: ``sum.dim_IntList``, ``view``). With torch
installed the data flow (which tensor each op reads) and the gradients' bits are compared too.
"""

import math
import weakref

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.utils._python_dispatch import TorchDispatchMode

_SEED = ["aten.ones_like.default", "aten.expand.default"]
_REDUCE = ["aten.sum.dim_IntList", "aten.view.default"]
_EXTREMUM = ["aten.div.Scalar", "aten.eq.Tensor", "aten.where.self", "{}", "aten.masked_fill_.Scalar"]
_CHOSEN = ["{}", "aten.isnan.default", "aten.logical_or_.default"]
_DIV_OTHER = ["aten.div.Tensor", "aten.div.Tensor", "aten.neg.default", "aten.mul.Tensor"]

PAIR_BACKWARD_OPS = {
    "x * y": ["aten.mul.Tensor", "aten.mul.Tensor"],
    "x / y": [*_DIV_OTHER, "aten.div.Tensor"],
    "y / x": [*_DIV_OTHER, "aten.div.Tensor"],
    "x ** y": [
        "aten.detach.default", "aten.ge.Scalar", "aten.eq.Scalar", "aten.logical_and.default", "aten.log.default",
        "aten.mul.Tensor", "aten.scalar_tensor.default", "aten.where.self", "aten.mul.Tensor",
        "aten.sub.Scalar", "aten.pow.Tensor_Tensor", "aten.mul.Tensor", "aten.mul.Tensor",
        "aten.scalar_tensor.default", "aten.eq.Scalar", "aten.where.self"],
    "L.maximum(x, y)": [op.format("aten.gt.Tensor") for op in _EXTREMUM]
                       + [op.format("aten.lt.Tensor") for op in _EXTREMUM],
    "L.minimum(x, y)": [op.format("aten.lt.Tensor") for op in _EXTREMUM]
                       + [op.format("aten.gt.Tensor") for op in _EXTREMUM],
    "L.fmax(x, y)": [op.format("aten.ge.Tensor") for op in _CHOSEN] + ["aten.masked_fill.Scalar"]
                    + [op.format("aten.ge.Tensor") for op in _CHOSEN]
                    + ["aten.logical_not_.default", "aten.masked_fill.Scalar"],
    "L.fmin(x, y)": [op.format("aten.le.Tensor") for op in _CHOSEN] + ["aten.masked_fill.Scalar"]
                    + [op.format("aten.le.Tensor") for op in _CHOSEN]
                    + ["aten.logical_not_.default", "aten.masked_fill.Scalar"],
    "L.hypot(x, y)": ["aten.detach.default", "aten.mul.Tensor", "aten.div.Tensor", "aten.mul.Tensor",
                      "aten.div.Tensor"],
    "L.xlogy(x, y)": ["aten.mul.Tensor", "aten.div.Tensor", "aten.xlogy.Tensor", "aten.le.Scalar",
                      "aten.eq.Scalar", "aten.bitwise_and.Tensor", "aten.masked_fill.Scalar"],
    "L.fmod(x, y)": ["aten.div.Tensor_mode", "aten.neg.default", "aten.mul.Tensor"],
    "L.remainder(x, y)": ["aten.div.Tensor_mode", "aten.neg.default", "aten.mul.Tensor"],
    "L.atan2(x, y)": ["aten.mul.Tensor", "aten.mul.Tensor", "aten.add.Tensor", "aten.reciprocal.default",
                      "aten.eq.Scalar", "aten.masked_fill.Scalar", "aten.mul.Tensor", "aten.mul.Tensor",
                      "aten.neg.default", "aten.mul.Tensor", "aten.mul.Tensor"],
}
# copysign: other's gradient is zeros of its own shape (nothing to reduce), made first
EXPECTED = {expression: _SEED + ops + _REDUCE for expression, ops in PAIR_BACKWARD_OPS.items()}
EXPECTED["L.copysign(x, y)"] = _SEED + ["aten.detach.default", "aten.zeros.default", "aten.div.Tensor",
                                        "aten.eq.Scalar", "aten.masked_fill_.Scalar", "aten.mul.Tensor"]


def _backward_log(library, mode_class, expression: str):
    """``(names, flow, gradients)``: the ops a logging dispatch mode of ``library`` sees during
    ``autograd.grad`` (not the forward) of ``expression``'s sum over x (2, 3) and y (3,); ``flow`` names each op's
    tensor arguments (x, y, %i for op i's output) and numbers as floats."""
    labels = {}

    def describe(a):
        if isinstance(a, library.Tensor):
            ref, label = labels.get(id(a), (None, None))
            return label if ref is not None and ref() is a else f"T{tuple(a.shape)}"
        if isinstance(a, (list, tuple)):
            return "[" + ",".join(map(describe, a)) + "]"
        if isinstance(a, (int, float)) and not isinstance(a, bool):
            return repr(float(a))
        return repr(a)

    class Log(mode_class):
        def __init__(self):
            super().__init__()
            self.names, self.flow, self.on = [], [], False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if not self.on:
                return out
            self.flow.append(f"{func}({', '.join(map(describe, args))})")
            self.names.append(str(func))
            if isinstance(out, library.Tensor):
                # (a weak reference: keeping the output alive would change what PyTorch's engine does)
                labels[id(out)] = weakref.ref(out), f"%{len(self.names) - 1}"
            return out

    x = library.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) * 0.37 % 1 + 0.2, requires_grad=True)
    y = library.tensor(np.arange(3, dtype=np.float32) * 0.37 % 1 + 0.2, requires_grad=True)
    labels.update({id(x): (weakref.ref(x), "x"), id(y): (weakref.ref(y), "y")})
    with Log() as log:  # the forward under the mode too (saved outputs are saved as a listener sees them)
        out = eval(expression, {"L": library, "x": x, "y": y}).sum()
        log.on = True
        grads = library.autograd.grad(out, [x, y])
    return log.names, log.flow, [g.numpy() for g in grads]


@pytest.mark.parametrize("expression", list(EXPECTED))
def test_both_operands_gradients_send_pytorchs_ops_in_its_order(expression):
    names, flow, grads = _backward_log(tm, TorchDispatchMode, expression)
    assert names == EXPECTED[expression]
    x = tm.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) * 0.37 % 1 + 0.2, requires_grad=True)
    y = tm.tensor(np.arange(3, dtype=np.float32) * 0.37 % 1 + 0.2, requires_grad=True)
    plain = tm.autograd.grad(eval(expression, {"L": tm, "x": x, "y": y}).sum(), [x, y])
    assert [g.numpy().tobytes() for g in plain] == [g.tobytes() for g in grads]  # a mode changes no bit
    try:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
    except ImportError:
        return
    theirs = _backward_log(torch, TorchMode, expression)
    assert theirs[0] == EXPECTED[expression] and flow == theirs[1]
    assert [g.tobytes() for g in grads] == [g.tobytes() for g in theirs[2]]


def test_div_reads_its_operands_as_pytorchs_formula():
    # other's gradient -grad * ((x / y) / y), its quotient first; then input's grad / y
    _, flow, _ = _backward_log(tm, TorchDispatchMode, "x / y")
    assert flow[2:7] == ["aten.div.Tensor(x, y)", "aten.div.Tensor(%2, y)", "aten.neg.default(%1)",
                         "aten.mul.Tensor(%4, %3)", "aten.div.Tensor(%1, y)"]


def test_mul_multiplies_the_gradient_by_the_other_operand():
    _, flow, _ = _backward_log(tm, TorchDispatchMode, "x * y")
    assert flow[2:4] == ["aten.mul.Tensor(%1, x)", "aten.mul.Tensor(%1, y)"]


def test_pow_gradient_is_zero_at_a_zero_exponent_even_for_an_infinite_output_gradient():
    # PyTorch's where(exponent == 0, 0, grad * ...): the mask applies after the product (was NaN: inf * 0)
    x = tm.tensor([2.0, 0.0], requires_grad=True)
    e = tm.tensor([0.0, 0.0], requires_grad=True)
    gx, ge = tm.autograd.grad(x ** e, [x, e], tm.tensor([math.inf, math.inf]))
    assert gx.tolist() == [0.0, 0.0]
    assert ge[0].item() == math.inf and math.isnan(ge[1].item())


def test_atan2_masks_only_a_zero_sum_of_squares():
    # PyTorch masks the reciprocal where x**2 + y**2 == 0: a subnormal sum's infinite reciprocal stays
    a = tm.tensor([1e-20, 0.0, 1e-30], requires_grad=True)
    b = tm.tensor([1e-20, 0.0, 0.0], requires_grad=True)
    tm.atan2(a, b).sum().backward()
    assert a.grad.tolist() == [math.inf, 0.0, 0.0] and b.grad.tolist() == [-math.inf, 0.0, 0.0]
    assert np.signbit(b.grad.numpy()).tolist() == [True, True, True]
