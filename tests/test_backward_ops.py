"""The backward ops that gradient formulas call (``_softmax_backward_data``,
``_log_softmax_backward_data``, ``_nll_loss_backward``, ``_cross_entropy_loss_backward``,
``_threshold_backward``): PyTorch's values, dtypes and errors, their own gradients (double
backward), and one call per gradient; and nll_loss's forward, which shares the backward op's
handling of ignored targets."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes._autograd.engine import run_backward

from .recording import Recorder
from .torch_oracle import _as_numpy, assert_same_outcome, run

_G = "L.tensor([[0.5, -1., 2.], [1., 0.25, -0.5]])"
_O = "L.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])"

SOFTMAX_CASES = [
    f"L.{{op}}({_G}, {_O}, 1, L.float32)", f"L.{{op}}({_G}, {_O}, 0, L.float32)",
    f"L.{{op}}({_G}, {_O}, -1, L.float64)", f"L.{{op}}({_G}.double(), {_O}.double(), 1, L.float32)",
    f"L.{{op}}({_G}.half(), {_O}.half(), 1, L.float16)", f"L.{{op}}({_G}.bfloat16(), {_O}.bfloat16(), 0, L.bfloat16)",
    f"L.{{op}}({_G}.half(), {_O}.half(), 1, L.float32)", f"L.{{op}}({_G}, {_O}, 1, L.int64)",
    f"L.{{op}}({_G}, {_O}, 1, L.bfloat16)", "L.{op}(L.tensor(2.), L.tensor(0.5), 0, L.float32)",
    "L.{op}(L.tensor(2.), L.tensor(0.5), -1, L.float32)", "L.{op}(L.ones(0, 3), L.ones(0, 3), 1, L.float32)",
    f"L.{{op}}(grad_output={_G}, output={_O}, dim=1, input_dtype=L.float32)",
    # errors
    f"L.{{op}}({_G}, {_O}, 1, L.float16)", f"L.{{op}}({_G}, {_O}.double(), 1, L.float16)",
    f"L.{{op}}({_G}.double(), {_O}, 1, L.float32)", f"L.{{op}}({_G}, {_O}.double(), 1, L.float32)",
    f"L.{{op}}({_G}.long(), {_O}.long(), 1, L.float32)", f"L.{{op}}({_G}.long(), {_O}.long(), 0, L.float32)",
    f"L.{{op}}({_G}.long(), {_O}, 1, L.float32)", f"L.{{op}}({_G}, {_O}.long(), 1, L.float32)",
    f"L.{{op}}({_G}.to(L.complex64), {_O}.to(L.complex64), 1, L.complex64)",
    f"L.{{op}}({_G}, {_O}, 2, L.float32)", f"L.{{op}}({_G}, {_O}, -3, L.float32)",
    "L.{op}(L.tensor(2.), L.tensor(0.5), 1, L.float32)", f"L.{{op}}({_G}, {_O}, 1.0, L.float32)",
    f"L.{{op}}({_G}, {_O}, 1, None)",
]


@pytest.mark.torch
@pytest.mark.parametrize("op", ["_softmax_backward_data", "_log_softmax_backward_data"])
@pytest.mark.parametrize("case", SOFTMAX_CASES)
def test_softmax_backward_ops_match_torch(op, case):
    tolerance = 1e-2 if "half" in case or "bfloat16()" in case else 1e-6
    assert_same_outcome(case.format(op=op), rtol=tolerance, atol=tolerance)


@pytest.mark.torch
@pytest.mark.parametrize("case", [f"L._softmax_backward_data({_G}, {_O}[:, :2], 1, L.float32)",
                                  f"L._softmax_backward_data({_G}, {_O}.t(), 1, L.float32)",
                                  f"L._softmax_backward_data({_G}[0], {_O}, 0, L.float32)"])
def test_softmax_backward_shape_mismatch_matches_torch(case):
    assert_same_outcome(case)


def test_log_softmax_backward_refuses_mismatched_shapes():
    # PyTorch's CPU kernel does not check (and reads past the smaller tensor): this one does.
    with pytest.raises(RuntimeError, match=r"but \[2, 3\] does not equal \[2, 2\] \(while checking arguments "
                                           r"for log_softmax_backward\)"):
        tm._log_softmax_backward_data(tm.ones(2, 3), tm.ones(2, 2), 1, tm.float32)


@pytest.mark.torch
@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype, cast", [("float16", "float32"), ("bfloat16", "float32"), ("float64", "float32"),
                                         ("int64", "float64"), ("float16", None)])
def test_gradient_through_a_dtype_cast_matches_torch(function, dtype, cast):
    import torch

    values = np.random.default_rng(0).standard_normal((3, 4)) * 3
    seed = np.random.default_rng(1).standard_normal((3, 4))
    grads = []
    for library in (tm, torch):
        x = library.tensor(values).to(getattr(library, dtype))
        if dtype != "int64":
            x.requires_grad_()
        result = getattr(library, function)(x, 1, dtype=None if cast is None else getattr(library, cast))
        if dtype == "int64":
            grads.append((str(result.dtype), result.requires_grad))
            continue
        result.backward(library.tensor(seed).to(result.dtype))
        grads.append((str(x.grad.dtype).split(".")[1], x.grad.float().numpy()))
    if dtype == "int64":
        assert grads[0][1] is grads[1][1] is False
        return
    assert grads[0][0] == grads[1][0]
    tolerance = 1e-6 if dtype == "float64" or (cast and dtype != "bfloat16") else 2e-2
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=tolerance, atol=tolerance)


# -- nll_loss ---------------------------------------------------------------------------------

NLL_OPTIONS = [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 1},
               {"reduction": "none", "ignore_index": 0}, {"weight": True}, {"weight": True, "ignore_index": 2},
               {"weight": True, "reduction": "sum"}, {"weight": True, "reduction": "none", "ignore_index": 1}]
NLL_SHAPES = [((5, 3), (5,)), ((3,), ()), ((2, 3, 4), (2, 4)), ((2, 3, 2, 2), (2, 2, 2)), ((0, 3), (0,))]


def _nll_case(shape, target_shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.integers(0, 3, target_shape), rng.random(3) + 0.5


@pytest.mark.torch
@pytest.mark.parametrize("options", NLL_OPTIONS)
@pytest.mark.parametrize("shape, target_shape", NLL_SHAPES)
def test_nll_loss_backward_matches_torch(options, shape, target_shape):
    import torch

    x, target, weight = _nll_case(shape, target_shape)
    options = dict(options)
    use_weight = options.pop("weight", False)
    loss_shape = target_shape if options.get("reduction") == "none" else ()
    grad_output = np.random.default_rng(3).standard_normal(loss_shape)
    results = []
    for library in (tm, torch):
        w = library.tensor(weight) if use_weight else None
        inputs = library.tensor(x, requires_grad=True)
        loss = library.nn.functional.nll_loss(inputs, library.tensor(target), w, **options)
        loss.backward(library.tensor(grad_output))
        results.append(inputs.grad.numpy())
    ours = tm._nll_loss_backward(tm.tensor(grad_output), tm.tensor(x), tm.tensor(target),
                                 tm.tensor(weight) if use_weight else None, **options)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours.numpy(), results[1], rtol=1e-12, atol=1e-15)
    assert ours.dtype is tm.float64 and ours.shape == shape


@pytest.mark.torch
@pytest.mark.parametrize("case", [
    # every target ignored: no gradient at all (not NaN, though the mean loss is NaN)
    ({"ignore_index": 1}, [1, 1], None),
    # the counted targets weigh nothing: NaN at their classes, as in PyTorch
    ({}, [1, 2], [1.0, 0.0, 0.0]),
    # an ignored target's row gets nothing, even with a non-finite input there
    ({"ignore_index": 0}, [0, 2], None),
])
def test_nll_loss_gradient_edge_cases_match_torch(case):
    import torch

    options, target, weight = case
    x = np.array([[np.inf, 0.2, 0.3], [0.3, 0.1, 0.2]])
    grads = []
    for library in (tm, torch):
        inputs = library.tensor(x, requires_grad=True)
        w = None if weight is None else library.tensor(weight, dtype=library.float64)
        library.nn.functional.nll_loss(inputs, library.tensor(target), w, **options).backward()
        grads.append(inputs.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape, target", [((2, 3), [0, 2]), ((3,), 0), ((1, 3, 2), [[0, 2]])])
def test_nll_loss_skips_ignored_targets_entirely(reduction, shape, target):
    # Even a non-finite entry at an ignored target's class adds nothing (not inf * 0 = NaN).
    import torch

    x = np.full(shape, 0.5)
    x.reshape(-1)[0] = -np.inf
    results = [library.nn.functional.nll_loss(library.tensor(x), library.tensor(target), ignore_index=0,
                                              reduction=reduction).numpy() for library in (tm, torch)]
    np.testing.assert_array_equal(*results)


def test_nll_loss_backward_errors():
    x, t = tm.zeros(4, 3), tm.tensor([0, 1, 2, 1])
    with pytest.raises(RuntimeError, match=r"Expected a single element grad_output tensor, but got: \[4\]"):
        tm._nll_loss_backward(tm.ones(4), x, t)
    with pytest.raises(RuntimeError, match=r"expected grad_output of shape \[4\], got \[3\]"):
        tm._nll_loss_backward(tm.ones(3), x, t, reduction="none")
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        tm._nll_loss_backward(tm.tensor(1.0), x, t, reduction="avg")
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        tm._nll_loss_backward(tm.tensor(1.0), x, tm.tensor([0, 5, 1, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        tm._nll_loss_backward(tm.tensor(1.0), x, tm.tensor([0, -1, 1, 1]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        tm._nll_loss_backward(tm.tensor(1.0), x, t.int())
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        tm._nll_loss_backward(tm.tensor(1.0), tm.zeros(2, 3, 2), tm.zeros(2, 2, dtype=tm.int32))
    with pytest.raises(NotImplementedError, match="\"nll_loss_backward_out_frame\" not implemented for 'Long'"):
        tm._nll_loss_backward(tm.tensor(1.0), x.long(), t)
    with pytest.raises(NotImplementedError, match="\"nll_loss2d_backward_out_frame\" not implemented for 'Bool'"):
        tm._nll_loss_backward(tm.tensor(1.0), tm.zeros(2, 3, 2, dtype=tm.bool), tm.zeros(2, 2, dtype=tm.long))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes"):
        tm._nll_loss_backward(tm.tensor(1.0), x, t, tm.ones(2))


# nll_loss's argument checks, in PyTorch's order: each case breaks one rule, some two (the
# earlier check must win).
NLL_ARGUMENT_ERRORS = [
    ("L.zeros(()), L.zeros((), dtype=L.long)", ValueError, "Expected 1 or more dimensions (got 0)"),
    ("L.zeros(4, 3), L.zeros((), dtype=L.long)", ValueError,
     "Expected input batch_size (4) to match target batch_size (0)."),
    ("L.zeros(4, 3, dtype=L.complex64), L.zeros(3, dtype=L.long)", ValueError,
     "Expected input batch_size (4) to match target batch_size (3)."),
    ("L.zeros(4, 3), L.zeros(4)", RuntimeError, "expected target dtype to be Long or Byte, but got Float"),
    ("L.zeros(4, 3, dtype=L.complex64), L.zeros(4, dtype=L.int32)", RuntimeError,
     "expected target dtype to be Long or Byte, but got Int"),
    ("L.zeros(2, 3, 4), L.zeros(2, 4)", RuntimeError, "expected target dtype to be Long or Byte, but got Float"),
    ("L.zeros(4, 3), L.zeros(4, 3, dtype=L.long)", RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    ("L.zeros(3), L.zeros(2, dtype=L.long)", ValueError,
     "For 1D input, 1D target must have size 1, but got target size: 2"),
    ("L.zeros(2, 3, 4), L.zeros(2, 5, dtype=L.long)", RuntimeError, "Expected target size [2, 4], got [2, 5]"),
    ("L.zeros(2, 3, 4, 5), L.zeros(2, 4, dtype=L.long)", RuntimeError,
     "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"),
    ("L.zeros(2, 3, 4, 5), L.zeros(2, 4, 6, dtype=L.long)", RuntimeError,
     "size mismatch (got input: [2, 3, 4, 5] , target: [2, 4, 6]"),
    ("L.zeros(4, 3, dtype=L.complex64), L.tensor([0, 1, 2, 5])", NotImplementedError,
     "\"nll_loss_out_frame\" not implemented for 'ComplexFloat'"),
    ("L.zeros(4, 3, dtype=L.long), L.zeros(4, dtype=L.long)", NotImplementedError,
     "\"nll_loss_out_frame\" not implemented for 'Long'"),
    ("L.zeros(2, 3, 4, dtype=L.bool), L.zeros(2, 4, dtype=L.long)", NotImplementedError,
     "\"nll_loss2d_forward_out_frame\" not implemented for 'Bool'"),
    ("L.zeros(2, 3, 4), L.zeros(2, 4, dtype=L.uint8)", RuntimeError, "expected scalar type Long but found Byte"),
    ("L.zeros(4, 3), L.tensor([0, 1, 2, 200], dtype=L.uint8)", IndexError, "Target 200 is out of bounds."),
]


@pytest.mark.parametrize("arguments, error, message", NLL_ARGUMENT_ERRORS)
def test_nll_loss_argument_errors(arguments, error, message):
    with pytest.raises(error) as raised:
        eval(f"F.nll_loss({arguments})", {"L": tm, "F": F})
    assert str(raised.value) == message


@pytest.mark.torch
@pytest.mark.parametrize("arguments", [case[0] for case in NLL_ARGUMENT_ERRORS])
def test_nll_loss_argument_errors_match_torch(arguments):
    assert_same_outcome(f"L.nn.functional.nll_loss({arguments})")


@pytest.mark.parametrize("shape, target", [((4, 3), [0, 2, 1, 2]), ((3,), 2)])
@pytest.mark.parametrize("options", [{}, {"reduction": "none"}, {"ignore_index": 1}, {"weight": [0.5, 1, 2]}])
def test_nll_loss_takes_byte_targets_as_long_ones(shape, target, options):
    # PyTorch accepts uint8 class indices for 1-D and 2-D inputs (not for spatial ones).
    # A class weight that requires grad is tensormodes' extension: its gradient takes them too.
    results = []
    for dtype in (tm.int64, tm.uint8):
        leaves = [tm.arange(float(np.prod(shape))).reshape(shape).requires_grad_()]
        kwargs = dict(options)
        if "weight" in kwargs:
            kwargs["weight"] = tm.tensor(kwargs["weight"], requires_grad=True)
            leaves.append(kwargs["weight"])
        loss = F.nll_loss(leaves[0], tm.tensor(target, dtype=dtype), **kwargs)
        loss.sum().backward()
        results.append((loss.tolist(), [leaf.grad.tolist() for leaf in leaves]))
    assert results[0] == results[1]


def test_threshold_backward_refuses_complex_and_bool_results():
    with pytest.raises(NotImplementedError, match="\"threshold_cpu\" not implemented for 'ComplexFloat'"):
        tm._threshold_backward(tm.ones(2), tm.ones(2, dtype=tm.complex64), 0)
    with pytest.raises(NotImplementedError, match="\"threshold_cpu\" not implemented for 'Bool'"):
        tm._threshold_backward(tm.ones(2, dtype=tm.bool), tm.ones(2, dtype=tm.bool), 0)
    assert tm._threshold_backward(tm.ones(2, dtype=tm.bool), tm.tensor([-1, 1]), 0).tolist() == [0, 1]


@pytest.mark.parametrize("options", NLL_OPTIONS)
@pytest.mark.parametrize("shape, target_shape", NLL_SHAPES[:3])
def test_nll_loss_double_backward(options, shape, target_shape):
    x, target, weight = _nll_case(shape, target_shape, seed=5)  # the weighted means keep a target: no NaN
    options = dict(options)
    leaves = [tm.tensor(x, requires_grad=True)]
    if options.pop("weight", False):
        leaves.append(tm.tensor(weight, requires_grad=True))

    def loss(inputs, *w):
        return F.nll_loss(inputs, tm.tensor(target), *w, **options)

    assert tm.autograd.gradgradcheck(loss, tuple(leaves))


# -- cross_entropy: double backward against PyTorch ---------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("options", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 1},
                                     {"weight": True}, {"weight": True, "ignore_index": 0, "reduction": "none"}])
@pytest.mark.parametrize("shape, target_shape", [((4, 3), (4,)), ((3,), ()), ((2, 3, 4), (2, 4))])
def test_cross_entropy_double_backward_matches_torch(options, shape, target_shape):
    import torch

    x, target, weight = _nll_case(shape, target_shape, seed=5)
    options = dict(options)
    use_weight = options.pop("weight", False)
    results = []
    for library in (tm, torch):
        inputs = library.tensor(x, requires_grad=True)
        w = library.tensor(weight) if use_weight else None
        loss = library.nn.functional.cross_entropy(inputs, library.tensor(target), w, **options).sum()
        (grad,) = library.autograd.grad(loss, inputs, create_graph=True)
        (grad * grad).sum().backward()
        results.append((grad.detach().numpy(), inputs.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("options", NLL_OPTIONS)
@pytest.mark.parametrize("shape, target_shape", NLL_SHAPES[:3])
def test_cross_entropy_loss_backward_double_backward(options, shape, target_shape):
    # The backward op's own formula, to second order, in grad_output, the log-probabilities (from which
    # it works: cross_entropy's third order goes through here) and a weight that requires grad.
    x, target, weight = _nll_case(shape, target_shape, seed=5)
    options = dict(options)
    rng = np.random.default_rng(6)
    grad_output = rng.standard_normal(target_shape if options.get("reduction") == "none" else ())
    log_probs = tm.tensor(x).log_softmax(1 if len(shape) >= 2 else 0)
    leaves = [tm.tensor(grad_output, requires_grad=True), log_probs.requires_grad_()]
    if options.pop("weight", False):
        leaves.append(tm.tensor(weight, requires_grad=True))

    def backward_op(g, lp, *w):
        return tm._cross_entropy_loss_backward(g, lp, tm.tensor(target), *(w or (None,)), **options)

    assert tm.autograd.gradgradcheck(backward_op, tuple(leaves))


@pytest.mark.torch
@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
def test_softmax_triple_backward_matches_torch(function):
    import torch

    x0 = np.random.default_rng(6).standard_normal((3, 4))
    seed = np.random.default_rng(7).standard_normal((3, 4))
    results = []
    for library in (tm, torch):
        x = library.tensor(x0, requires_grad=True)
        y = getattr(library, function)(x, 1)
        (g,) = library.autograd.grad((y * library.tensor(seed)).sum(), x, create_graph=True)
        (gg,) = library.autograd.grad((g * g * g).sum(), x, create_graph=True)
        (ggg,) = library.autograd.grad(gg.sin().sum(), x)
        results.append([t.detach().numpy() for t in (g, gg, ggg)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("op", ["_softmax_backward_data", "_log_softmax_backward_data"])
@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((3, 4), 0), ((2, 3, 2), -2), ((), 0)])
def test_softmax_backward_ops_gradgradcheck(op, shape, dim):
    rng = np.random.default_rng(8)
    grad_output = tm.tensor(rng.standard_normal(shape), requires_grad=True)
    output = tm.tensor(rng.uniform(-2, 0, shape), requires_grad=True)
    assert tm.autograd.gradgradcheck(lambda g, o: getattr(tm, op)(g, o, dim, tm.float64), (grad_output, output))


# -- relu / threshold_backward --------------------------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("arguments", [
    "L.tensor([1., 2, 3]), L.tensor([-1., 0, 4]), 0", "L.tensor([1., 2, 3]), L.tensor([-1., 0, 4]), 0.5",
    "L.tensor([nan, inf, 3]), L.tensor([-1., 0, nan]), 0", "L.tensor([1., 2, 3]).half(), L.tensor([-1., 0, 4]), 0",
    "L.tensor([1., 2, 3]), L.tensor([-1., 0, 4]).double(), 0", "L.tensor([1, 2, 3]), L.tensor([-1, 0, 4]), 0",
    "L.tensor([1., 2, 3]), L.tensor([True, False, True]), 0", "L.tensor([[1., 2, 3]]), L.tensor([[-1.], [4]]), 0",
    "L.tensor([1., 2, 3]), L.tensor(1.), 0", "L.tensor([1., 2, 3]), L.ones(2), 0",
])
def test_threshold_backward_matches_torch(arguments):
    import torch

    ours = run(tm, f"L._threshold_backward({arguments})")
    theirs = run(torch, f"L.ops.aten.threshold_backward({arguments})")  # not in torch's Python namespace
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "error":
        assert type(ours[1]) is type(theirs[1]) and str(ours[1]) == str(theirs[1])
        return
    ours_values, ours_dtype = _as_numpy(ours[1])
    theirs_values, theirs_dtype = _as_numpy(theirs[1])
    assert ours_dtype == theirs_dtype
    np.testing.assert_array_equal(ours_values, theirs_values)


@pytest.mark.torch
def test_relu_gradient_at_nan_and_zero_matches_torch():
    import torch

    values = [float("nan"), 0.0, -1.0, 2.0, float("inf")]
    grads = []
    for library in (tm, torch):
        x = library.tensor(values, requires_grad=True)
        x.relu().backward(library.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


# -- one public call per gradient --------------------------------------------------------------------

def _formula_calls(output, seed, input):
    # A mode sees autograd.grad as one call, as PyTorch's; the engine below it runs the formulas
    with Recorder() as log:
        run_backward([output], [seed], retain_graph=False, create_graph=False, inputs=[input], accumulate=False)
    return log.names


def test_training_step_gradients_are_one_call_each():
    logits = tm.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(F.relu(logits), tm.tensor([0, 1, 2, 1]))
    with Recorder() as log:
        tm.autograd.grad(loss, logits, retain_graph=True)
    assert log.names == [None]  # resolve_name(autograd.grad) is None in PyTorch too
    assert _formula_calls(loss, tm.ones(()), logits) == ["tensormodes._cross_entropy_loss_backward",
                                                         "tensormodes._threshold_backward"]
    x, seed = tm.randn(4, 3, requires_grad=True), tm.ones(4, 3)
    assert _formula_calls(x.softmax(1), seed, x) == ["tensormodes._softmax_backward_data"]


# -- backward ops that replaced compositions (_ops/backward_ops_nn.py) ---------------------------------

def _former_formulas():
    """Each new backward op's call, and the composition of public ops its formula ran before (kept as
    its double backward's form): ``(name, op arguments, composite, composite arguments)`` builders."""
    from tensormodes._ops.backward_ops_nn import binary_cross_entropy_backward_composite as bce
    from tensormodes._ops.losses import huber_loss_backward_composite as huber
    from tensormodes._ops.losses import smooth_l1_loss_backward_composite as smooth_l1
    from tensormodes._ops.normalization import native_group_norm_backward_composite as group_norm
    from tensormodes._ops.pointwise_activation import glu_backward_composite as glu
    from tensormodes._ops.pointwise_activation import mish_backward_composite as mish
    from tensormodes._ops.pointwise_activation import prelu_kernel_backward_composite as prelu

    def cases(dtype):
        rng = np.random.default_rng(7)

        def t(*shape, low=-4.0, high=4.0):
            return tm.tensor(rng.uniform(low, high, shape), dtype=dtype)

        x = t(3, 4)
        x[0, :3] = tm.tensor([0.0, 30.0, -30.0], dtype=dtype)  # zero, saturated softplus, sigmoid
        g, p, y = t(3, 4), t(3, 4, low=0.01, high=0.99), t(3, 4, low=0.0, high=1.0)
        p[0, :2] = tm.tensor([0.0, 1.0], dtype=dtype)  # probabilities 0 and 1: the clamped denominator
        w, target = t(4, low=0.5, high=2.0), x + t(3, 4, low=-1.5, high=1.5)
        loss_grads = {0: g, 1: t(), 2: t()}
        yield "mish_backward", (g, x), mish, (g, x)
        mean, rstd, masks = t(2, 2), t(2, 2, low=0.5, high=2.0), ([True, True, True], [True, False, True])
        images, image_grad = t(2, 4, 3), t(2, 4, 3)
        for weight, mask in ((t(4), masks[0]), (None, masks[1])):
            yield "native_group_norm_backward", (image_grad, images, mean, rstd, weight, 2, 4, 3, 2, mask), (
                group_norm), (image_grad, images, weight, 2, 2, mask, mean, rstd)
        yield "glu_backward", (g[:, :2], x, 1), glu, (g[:, :2], x, 1)
        yield "glu_backward", (g[:1], x[:2], 0), glu, (g[:1], x[:2], 0)
        yield "_prelu_kernel_backward", (g, x, w), prelu, (g, x, w)
        for reduction, grad in loss_grads.items():
            for beta in (1.0, 0.5):
                yield "smooth_l1_loss_backward", (grad, x, target, reduction, beta), smooth_l1, (
                    grad, x, target, reduction, beta)
                yield "huber_loss_backward", (grad, x, target, reduction, beta), huber, (
                    grad, x, target, reduction, beta)
            yield "binary_cross_entropy_backward", (grad, p, y, None, reduction), bce, (grad, p, y, None, reduction)
            yield "binary_cross_entropy_backward", (grad, p, y, w, reduction), bce, (grad, p, y, w, reduction)

    return cases


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_new_backward_ops_compute_the_former_formulas_bit_for_bit(dtype):
    # The gradients keep their values: each kernel runs the composition's steps in its dtypes.
    for name, arguments, composite, composite_arguments in _former_formulas()(getattr(tm, dtype)):
        ours = getattr(tm.ops.aten, name).default(*arguments)
        before = composite(*composite_arguments)
        for new, old in zip(ours if isinstance(ours, tuple) else (ours,),
                            before if isinstance(before, tuple) else (before,), strict=True):
            if new is None or old is None:
                assert new is old, name
                continue
            assert new.dtype == old.dtype and new.shape == old.shape, name
            assert new.numpy().tobytes() == old.numpy().tobytes(), name


def _logging_mode():
    """A dispatch mode logging the aten ops it sees in ``.ops`` while ``.on``."""
    from tensormodes.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.calls, self.on = [], [], True

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if self.on:
                self.ops.append(str(func))
                if str(func) == "aten._fft_c2c.default":
                    self.calls.append((str(func), args))
            return func(*args, **(kwargs or {}))

    return Log()


def _backward_aten_ops(function, *shapes, create_graph=False):
    from tensormodes.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.on = [], False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if self.on:
                self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    rng = np.random.default_rng(0)
    leaves = [tm.tensor(rng.uniform(0.1, 0.9, s).astype(np.float32), requires_grad=True) for s in shapes]
    log = Log()
    with log:  # the forward too: composites decompose at the dispatch level as PyTorch's
        out = function(*leaves)
    seed = tm.ones(tuple(out.shape))
    log.on = True
    with log:
        tm.autograd.grad(out, leaves, seed, create_graph=create_graph)
    return log.ops


@pytest.mark.parametrize("program, shapes, expected", [
    (F.mish, [(2, 3)], ["aten.mish_backward.default"]),
    (lambda x: x.narrow(1, 1, 2), [(2, 4)], ["aten.slice_backward.default"]),
    (lambda x: x.diagonal(1), [(3, 4)], ["aten.diagonal_backward.default"]),
    (lambda x: x.unfold(1, 2, 1), [(2, 4)], ["aten.unfold_backward.default"]),
    (lambda x: F.avg_pool2d(x, 2), [(1, 2, 4, 4)], ["aten.avg_pool2d_backward.default"]),
    (lambda x: F.adaptive_avg_pool2d(x, 3), [(1, 2, 5, 5)], ["aten._adaptive_avg_pool2d_backward.default"]),
    (lambda x: F.pad(x, [1, 2], mode="reflect"), [(1, 2, 5)], ["aten.reflection_pad1d_backward.default"]),
    (lambda x: F.pad(x, [1, 2, 0, 1], mode="replicate"), [(1, 2, 3, 5)], ["aten.replication_pad2d_backward.default"]),
    (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), [(1, 2, 3, 3)],
     ["aten.upsample_bilinear2d_backward.default"]),
    (lambda x: F.interpolate(x, size=5), [(1, 2, 3)], ["aten.upsample_nearest1d_backward.default"]),
    (lambda x: F.adaptive_max_pool2d(x, 3), [(1, 2, 5, 5)], ["aten.adaptive_max_pool2d_backward.default"]),
    (lambda x: F.adaptive_max_pool1d(x, 3), [(1, 2, 5)], ["aten.unsqueeze.default",
                                                          "aten.adaptive_max_pool2d_backward.default",
                                                          "aten.squeeze.dim"]),
    (lambda x: F.max_pool1d(x, 2), [(1, 2, 6)], ["aten.unsqueeze.default",
                                                 "aten.max_pool2d_with_indices_backward.default",
                                                 "aten.squeeze.dim"]),
    (lambda x: F.avg_pool1d(x, 2), [(1, 2, 4)], ["aten.unsqueeze.default", "aten.avg_pool2d_backward.default",
                                                 "aten.squeeze.dim"]),
    (lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)], ["aten.native_group_norm_backward.default"]),
    (F.glu, [(2, 4)], ["aten.glu_backward.default"]),
    # (then the weight's gradient summed to its shape: sum.dim_IntList and views, as autograd reduces it)
    (lambda x, w: F.prelu(x, w), [(2, 3), (3,)], ["aten._prelu_kernel_backward.default", "aten.sum.dim_IntList"]),
    (lambda x, y: F.smooth_l1_loss(x, y), [(2, 3), (2, 3)], ["aten.smooth_l1_loss_backward.default"] * 2),
    (lambda x, y: F.huber_loss(x, y, reduction="sum"), [(2, 3), (2, 3)], ["aten.huber_loss_backward.default"] * 2),
    (lambda x: F.binary_cross_entropy(x, tm.full((2, 3), 0.25)), [(2, 3)],
     ["aten.binary_cross_entropy_backward.default"]),
])
def test_formulas_send_pytorchs_backward_ops(program, shapes, expected):
    # PyTorch 2.13's backward ops for the same programs (logged with its TorchDispatchMode)
    ops = _backward_aten_ops(program, *shapes)
    assert [op for op in ops if op != "aten.view.default"] == expected


def test_mish_with_create_graph_differentiates_pytorchs_composite():
    # mish_backward has no derivative in PyTorch: with grad mode on its formula is the composition
    ops = _backward_aten_ops(F.mish, (3,), create_graph=True)
    assert "aten.mish_backward.default" not in ops and "aten.softplus.default" in ops


@pytest.mark.parametrize("name, arguments", [
    ("glu_backward", lambda: (tm.randn(2, 2, dtype=tm.float64), tm.randn(2, 4, dtype=tm.float64), 1)),
    ("_prelu_kernel_backward", lambda: (tm.randn(2, 3, dtype=tm.float64), tm.randn(2, 3, dtype=tm.float64),
                                        tm.rand(1, dtype=tm.float64))),
    ("smooth_l1_loss_backward", lambda: (tm.randn((), dtype=tm.float64), tm.randn(5, dtype=tm.float64),
                                         tm.randn(5, dtype=tm.float64), 1, 0.7)),
    ("huber_loss_backward", lambda: (tm.randn(5, dtype=tm.float64), tm.randn(5, dtype=tm.float64),
                                     tm.randn(5, dtype=tm.float64), 0, 0.7)),
    ("binary_cross_entropy_backward", lambda: (tm.randn((), dtype=tm.float64), tm.rand(4, dtype=tm.float64) * 0.8 + 0.1,
                                               tm.rand(4, dtype=tm.float64), tm.rand(4, dtype=tm.float64) + 0.5, 1)),
])
def test_new_backward_ops_have_second_and_third_derivatives(name, arguments):
    # their own gradient differentiates the composition, with history when create_graph is set
    tm.manual_seed(0)
    args = [a.requires_grad_() if isinstance(a, tm.Tensor) else a for a in arguments()]
    leaves = [a for a in args if isinstance(a, tm.Tensor)]
    function = getattr(tm.ops.aten, name).default

    def first(*tensors):
        values = iter(tensors)
        result = function(*[next(values) if isinstance(a, tm.Tensor) else a for a in args])
        return result if isinstance(result, tuple) else (result,)

    assert tm.autograd.gradcheck(first, tuple(leaves))
    assert tm.autograd.gradgradcheck(first, tuple(leaves))


def test_new_backward_ops_refuse_what_pytorchs_kernels_refuse():
    ints, complexes = tm.tensor([1, 2]), tm.tensor([1j, 2j])
    with pytest.raises(NotImplementedError, match="\"mish_backward_cpu\" not implemented for 'Long'"):
        tm.ops.aten.mish_backward.default(ints, ints)
    with pytest.raises(NotImplementedError, match="\"prelu_backward_cpu\" not implemented for 'ComplexFloat'"):
        tm.ops.aten._prelu_kernel_backward.default(complexes, complexes, complexes)
    with pytest.raises(NotImplementedError, match="\"smooth_l1_backward_cpu_out\" not implemented for 'ComplexFloat'"):
        tm.ops.aten.smooth_l1_loss_backward.default(complexes, complexes, complexes, 1, 1.0)
    with pytest.raises(NotImplementedError, match="\"binary_cross_entropy_backward\" not implemented for 'Long'"):
        tm.ops.aten.binary_cross_entropy_backward.default(ints, ints, ints)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("input_shape, output_size", [((2, 3, 7, 5), (3, 2)), ((3, 8, 8), (4, 4)), ((1, 5, 4), (5, 3))])
def test_adaptive_pooling_backward_ops_compute_the_former_formulas_bit_for_bit(dtype, input_shape, output_size):
    from tensormodes._ops.adaptive_pooling import _averaging_tensor
    from tensormodes._ops.pooling import _spread_maxima

    rng = np.random.default_rng(3)
    x = tm.tensor(rng.standard_normal(input_shape), dtype=getattr(tm, dtype))
    grad = tm.tensor(rng.standard_normal((*input_shape[:-2], *output_size)), dtype=getattr(tm, dtype))
    ours = tm.ops.aten._adaptive_avg_pool2d_backward.default(grad, x)
    rows = _averaging_tensor(input_shape[-2], output_size[0], grad)
    before = rows.mT @ grad @ _averaging_tensor(input_shape[-1], output_size[1], grad)
    assert ours.dtype == before.dtype and ours.numpy().tobytes() == before.numpy().tobytes()
    _, indices = tm._adaptive_max_pool2d(x, list(output_size))
    ours = tm.ops.aten.adaptive_max_pool2d_backward.default(grad, x, indices)
    overlapping = input_shape[-2] % output_size[0] or input_shape[-1] % output_size[1]
    before = _spread_maxima(grad, input_shape, indices, bool(overlapping))
    assert ours.dtype == before.dtype and ours.numpy().tobytes() == before.numpy().tobytes()


def _former_scatter_back(grad, input_shape, plan):
    """The formula the padding and upsampling ops' gradients ran before their backward ops (public
    ops: new_zeros and index_add), kept here as the values those ops must keep."""
    shapes = [tuple(input_shape)]
    for dim, low, _, _ in plan[:-1]:
        shape = list(shapes[-1])
        shape[dim] = len(low)
        shapes.append(tuple(shape))
    for (dim, low, high, weight), shape in zip(reversed(plan), reversed(shapes), strict=True):
        zeros = grad.new_zeros(shape)
        view = [1] * grad.dim()
        view[dim] = len(low)
        if low.ndim == 2:
            for k in range(low.shape[1]):
                w = tm.tensor(weight[:, k].reshape(view), dtype=grad.dtype)
                zeros = zeros.index_add(dim, tm.tensor(low[:, k]), grad * w)
            grad = zeros
        elif high is None:
            grad = zeros.index_add(dim, tm.tensor(low), grad)
        else:
            w = tm.tensor(weight.reshape(view), dtype=grad.dtype)
            grad = zeros.index_add(dim, tm.tensor(low), grad * (1 - w)).index_add(dim, tm.tensor(high), grad * w)
    return grad


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", [
    ("reflection_pad1d", (2, 3, 5), [2, 1]), ("reflection_pad2d", (2, 3, 4, 5), [1, 2, -1, 3]),
    ("reflection_pad3d", (1, 2, 3, 4, 5), [1, 2, 0, 1, 2, -1]), ("replication_pad1d", (2, 3, 5), [3, -1]),
    ("replication_pad2d", (3, 4, 5), [1, 2, 3, 1]), ("replication_pad3d", (1, 2, 3, 4, 5), [2, 1, 1, 0, 0, 2]),
    ("upsample_nearest1d", (2, 3, 5), [8], None, [None]),
    ("upsample_nearest2d", (1, 2, 3, 5), [7, 4], None, [1.5, None]),
    ("upsample_linear1d", (2, 3, 5), [9], False, [None]), ("upsample_linear1d", (2, 3, 5), [3], True, [None]),
    ("upsample_bilinear2d", (1, 2, 3, 5), [7, 4], False, [None, None]),
    ("upsample_bilinear2d", (1, 2, 3, 5), [4, 11], True, [2.0, None]),
    ("upsample_bicubic2d", (1, 2, 3, 5), [7, 4], False, [None, None]),
    ("upsample_bicubic2d", (1, 2, 4, 4), [5, 9], True, [None, None])])
def test_resampling_backward_ops_compute_the_former_formula_bit_for_bit(case, dtype):
    from tensormodes._ops.resampling import _pad_plan, _probe, _upsample_plan

    name, shape, sizes, *upsampling = case
    if name.startswith("upsample") and dtype in ("float16", "bfloat16"):
        pytest.skip("half-type upsampling gradients follow PyTorch's float32-buffer kernels now (test_half_bits.py)")
    rng = np.random.default_rng(5)
    x = tm.tensor(rng.standard_normal(shape)).to(getattr(tm, dtype))
    if name.startswith("upsample"):
        align_corners, scales = upsampling
        forward = getattr(tm, f"_{name}")
        output = forward(x, sizes, *([] if align_corners is None else [align_corners]), *scales)
        grad = tm.tensor(rng.standard_normal(tuple(output.shape))).to(x.dtype)
        ours = getattr(tm.ops.aten, f"{name}_backward").default(
            grad, sizes, list(shape), *([] if align_corners is None else [align_corners]), *scales)
        plan = _upsample_plan(name, _probe(shape, x.dtype), sizes, len(scales), scales, align_corners,
                              cubic="cubic" in name)
        if "cubic" in name and tuple(grad.shape) == shape:
            pytest.skip("the gradient itself")
    else:
        output = getattr(tm, f"_{name}")(x, sizes)
        grad = tm.tensor(rng.standard_normal(tuple(output.shape))).to(x.dtype)
        ours = getattr(tm.ops.aten, f"{name}_backward").default(grad, x, sizes)
        plan = _pad_plan(name, x.numpy(), sizes, len(sizes) // 2, name.startswith("reflection"))
    if dtype in ("float16", "bfloat16") and all(high is None and low.ndim == 1 for _, low, high, _ in plan):
        # one tap per output: the half types add in one pass in output order, each sum rounded (PyTorch's
        # kernel, pinned against it in test_half_bits.py), no longer dimension by dimension
        flat = np.zeros(int(np.prod(shape)), grad.numpy().dtype)
        axes = [dict((d, low) for d, low, _, _ in plan).get(d, np.arange(n)) for d, n in enumerate(grad.shape)]
        np.add.at(flat, np.ravel_multi_index(np.meshgrid(*axes, indexing="ij"), shape).reshape(-1),
                  grad.numpy().reshape(-1))
        assert ours.numpy().tobytes() == flat.tobytes()
        return
    before = _former_scatter_back(grad, shape, plan)
    assert ours.dtype == before.dtype and ours.shape == before.shape
    assert ours.numpy().tobytes() == before.numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("view, arguments", [("diagonal", (0, 0, 1)), ("diagonal", (1, -1, 0)),
                                             ("diagonal", (-2, 2, 0)), ("unfold", (2, 3, 1)), ("unfold", (0, 2, 1)),
                                             ("unfold", (1, 3, 2))])
def test_view_backward_ops_compute_the_former_formula_bit_for_bit(view, arguments, dtype):
    # the former formula: each gradient added back at the flat position its element came from
    from tensormodes._ops.shape import gather_back, positions_of

    rng = np.random.default_rng(2)
    shape = (3, 4, 5)
    picked = getattr(tm.zeros(shape), view)(*arguments)
    grad = tm.tensor(rng.standard_normal(tuple(picked.shape)), dtype=getattr(tm, dtype))
    ours = getattr(tm.ops.aten, f"{view}_backward").default(grad, list(shape), *arguments)
    before = gather_back(grad, shape, getattr(positions_of(grad, shape), view)(*arguments))
    assert ours.dtype == before.dtype and ours.numpy().tobytes() == before.numpy().tobytes()


@pytest.mark.parametrize("shape, mask_shape", [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3))])
def test_masked_select_gradient_is_pytorchs_masked_scatter_with_the_former_values(shape, mask_shape):
    rng = np.random.default_rng(4)
    x = tm.tensor(rng.standard_normal(shape), requires_grad=True)
    mask = tm.tensor(rng.uniform(size=mask_shape) > 0.4)
    out = x.masked_select(mask)
    seed = tm.tensor(rng.standard_normal(tuple(out.shape)))
    with _logging_mode() as log:
        gx, = tm.autograd.grad(out, x, seed)
    assert "aten.masked_scatter.default" in log.ops and "aten.zeros_like.default" in log.ops
    broadcast = tuple(np.broadcast_shapes(shape, mask_shape))
    before = tm.zeros(broadcast, dtype=tm.float64)
    before[mask.expand(broadcast)] = seed  # the former formula
    before = before.sum(0) if len(broadcast) > len(shape) else before
    assert gx.numpy().tobytes() == before.numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(5, 8192 + 5), (7,), ()])  # 40,985 elements: blocks of 16,384 and 32,768 and a part
def test_gelu_kernels_in_blocks_keep_the_whole_array_formulas(dtype, shape):
    # gelu and gelu_backward compute a block of elements at a time, in place: bit for bit the
    # whole-array expressions they replaced (across block edges, at infinities and NaN). (float16
    # takes PyTorch's own float16 steps, pinned against PyTorch in test_half_bits.py.)
    import math

    from tensormodes._ops.special import _erf

    def erf_as(x):
        return _erf(x).astype(x.dtype)

    def raw(a):
        return a.reshape(-1).view(np.uint8)

    def wide_exp(x):
        return np.exp(x.astype(np.float64)).astype(np.float32) if x.dtype == np.float32 else np.exp(x)

    rng = np.random.default_rng(7)
    work = np.float64 if dtype == "float64" else np.float32
    values = (rng.standard_normal(shape) * 3).astype(work)
    grads = rng.standard_normal(shape).astype(work)
    if values.size > 4:
        values.flat[:4] = [np.inf, -np.inf, np.nan, 0.0]
    x, dy = (tm.tensor(v).to(getattr(tm, dtype)) for v in (values, grads))
    xs, dys = (t.to(tm.float64 if dtype == "float64" else tm.float32).numpy() for t in (x, dy))
    w = xs.dtype.type
    with np.errstate(all="ignore"):
        if dtype in ("float32", "bfloat16") and xs.size > 1:
            forward = xs * (1 + erf_as(xs * (1 / math.sqrt(2))))
            forward *= 0.5
            forward[np.isposinf(xs)] = np.nan
        else:
            forward = 0.5 * xs * (1 + erf_as(xs * (1 / math.sqrt(2))))
        cdf = w(0.5) * (w(1) + erf_as(xs * w(math.sqrt(0.5))))
        pdf = w(2 / math.sqrt(math.pi) * math.sqrt(0.5) * 0.5) * wide_exp(xs * xs * w(-0.5))
        backward = dys * (cdf + xs * pdf)
    target = getattr(tm, dtype)._np
    for got, expected in ((F.gelu(x), forward), (tm.ops.aten.gelu_backward.default(dy, x), backward)):
        assert got.dtype == getattr(tm, dtype) and got.shape == shape
        np.testing.assert_array_equal(raw(got.numpy()), raw(np.asarray(expected).astype(target)))
    # the tanh form's backward, block by block against its formula on the whole arrays (half types
    # take Sleef's saturated tanh where PyTorch's vector steps do: tests/test_half_training_ops.py)
    if dtype == "bfloat16":
        return
    with np.errstate(all="ignore"):
        expected = np.asarray(_tanh_gelu_backward_formula(dys, xs)).astype(target)
    got = tm.ops.aten.gelu_backward.default(dy, x, approximate="tanh").numpy()
    np.testing.assert_array_equal(raw(got), raw(expected))


def test_gelu_backward_takes_the_forwards_erf_only_for_the_same_input_values():
    # A float32 GELU's forward (grad mode on) keeps erf(x / sqrt(2)) for the backward on the same
    # array: the same bits as computing it again; not after the input changed in place; not under
    # no_grad; and not kept once the input is gone.
    import gc

    from tensormodes._ops import special

    rng = np.random.default_rng(28)
    values = (rng.standard_normal((3, 8192 + 5)) * 2).astype(np.float32)
    values.flat[:4] = [np.inf, -np.inf, np.nan, 0.0]
    dy = tm.tensor(rng.standard_normal(values.shape).astype(np.float32))

    def fresh(x):  # the backward op on a new array of the same values: nothing kept for it
        return tm.ops.aten.gelu_backward.default(dy, tm.tensor(x.detach().numpy().copy())).numpy()

    x = tm.tensor(values, requires_grad=True)
    F.gelu(x).backward(dy)
    assert x.grad.numpy().tobytes() == fresh(x).tobytes()
    y = tm.tensor(values)
    F.gelu(y)
    with tm.no_grad():
        y.mul_(-3)
    assert tm.ops.aten.gelu_backward.default(dy, y).numpy().tobytes() == fresh(y).tobytes()
    with tm.no_grad():
        F.gelu(y)
    assert not special._GELU_ERFS
    F.gelu(y)
    assert len(special._GELU_ERFS) == 1
    del y
    gc.collect()
    assert not special._GELU_ERFS


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_kernels_in_place_keep_their_formulas(dtype, affine):
    # native_layer_norm and its backward work in place and take the mean in NumPy's own steps:
    # bit for bit the expressions they replaced (np.mean, new arrays at every step). (Half types
    # follow PyTorch's Welford statistics and per-thread sums now: test_half_bits.py.)
    rng = np.random.default_rng(8)
    shape, normalized = (4, 6, 16), [6, 16]
    x, g = (tm.tensor(rng.standard_normal(shape).astype(np.float32) * 3).to(getattr(tm, dtype)) for _ in range(2))
    w, b = ((tm.tensor(rng.standard_normal(normalized).astype(np.float32)).to(getattr(tm, dtype)) if affine else None)
            for _ in range(2))
    out, mean, rstd = tm.ops.aten.native_layer_norm.default(x, normalized, w, b, 1e-5)
    grads = tm.ops.aten.native_layer_norm_backward.default(g, x, normalized, mean, rstd, w, b, [True, affine, affine])
    work = np.float64 if dtype == "float64" else np.float32
    xs, gs = x.numpy().astype(work), g.numpy().astype(work)
    ws, bs = (None, None) if not affine else (w.numpy(), b.numpy())
    axes = (1, 2)
    m = xs.mean(axis=axes, keepdims=True)
    centred = xs - m
    r = 1 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + 1e-5)
    expected = (xs - m) * r
    if affine:
        expected = expected * ws + bs
    # the backward reads the statistics as saved (rounded to a half input's dtype, as PyTorch's)
    mb, rb = mean.numpy().astype(work), rstd.numpy().astype(work)
    gy = gs if ws is None else gs * ws
    ds, db = np.add.reduce(gy * xs, axis=axes, keepdims=True), np.add.reduce(gy, axis=axes, keepdims=True)
    scale = 1 / 96
    bb = (db * mb - ds) * rb * rb * rb * scale
    c = -bb * mb - db * rb * scale
    expected_grads = [(rb * gs if ws is None else rb * gs * ws) + bb * xs + c]  # PyTorch's order: a * dy * gamma
    if affine:
        expected_grads += [np.add.reduce(gs * ((xs - mb) * rb), axis=0), np.add.reduce(gs, axis=0)]
    target = x.numpy().dtype
    for got, want in [(out, expected), (mean, m), (rstd, r), *zip(grads, expected_grads)]:
        want = np.asarray(want).astype(target if got.dtype == x.dtype else work)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy().reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("call, forward, backward", [
    (lambda x: tm.fft.fft(x), ("[1]", 0, True), ("[1]", 0, False)),
    (lambda x: tm.fft.ifft(x, norm="ortho"), ("[1]", 1, False), ("[1]", 1, True)),
    (lambda x: tm.fft.fftn(x, norm="forward"), ("[0, 1]", 2, True), ("[0, 1]", 2, False)),
    (lambda x: tm.fft.ifft2(x), ("[0, 1]", 2, False), ("[0, 1]", 2, True)),
])
def test_complex_ffts_reach_pytorchs_fft_c2c_with_eagers_values(call, forward, backward):
    # PyTorch 2.13: a complex input's fft, ifft and N-D forms at their own sizes are one _fft_c2c each
    # way (normalization 0 none, 1 by 1/sqrt(n), 2 by 1/n)
    rng = np.random.default_rng(6)
    x = tm.tensor(rng.standard_normal((2, 8)) + 1j * rng.standard_normal((2, 8)), dtype=tm.complex64,
                  requires_grad=True)
    eager = call(x)
    eager_grad, = tm.autograd.grad(eager, x, tm.ones_like(eager))
    log = _logging_mode()
    with log:
        out = call(x)
        seed = tm.ones_like(out)
        grad, = tm.autograd.grad(out, x, seed)
    calls = [(op, str(args[1]), args[2], args[3]) for op, args in log.calls]
    assert calls == [("aten._fft_c2c.default", *forward), ("aten._fft_c2c.default", *backward)]
    assert out.detach().numpy().tobytes() == eager.detach().numpy().tobytes()
    assert grad.numpy().tobytes() == eager_grad.numpy().tobytes()


def _tanh_gelu_backward_formula(dy, x):
    # The tanh GELU's slope times dy as PyTorch's kernel computes it, written out: a float32's
    # multiply-adds rounded once (the products exact in float64), its tanh in float64, rounded.
    w = x.dtype.type
    wide = np.float64 if x.dtype == np.float32 else x.dtype

    def fma(a, b, c):
        return (np.asarray(a, wide) * b + c).astype(x.dtype)

    beta, kappa = w(math.sqrt(2) * 2 / math.sqrt(math.pi) * 0.5), w(0.044715)  # sqrt(2 / pi), as PyTorch spells it
    square = x * x
    t = np.tanh((beta * fma(kappa, square * x, x)).astype(wide)).astype(x.dtype)
    return dy * (w(0.5) * (w(1) + t) + w(0.5) * x * fma(-t, t, w(1)) * (beta * fma(w(3) * kappa, square, w(1))))


def test_tanh_gelu_backward_work_arrays_are_each_threads_own():
    # The kernel keeps its work arrays from call to call, one set per thread: threads computing
    # at the same time on different values each get their own values' result.
    import threading

    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((3, 40_000)).astype(np.float32) * scale for scale in (1, 3, 10, 30)]
    expected = [_tanh_gelu_backward_formula(np.ones_like(x), x) for x in inputs]
    results = [[] for _ in inputs]
    start = threading.Barrier(len(inputs))

    def run(index):
        start.wait()
        for _ in range(5):
            got = tm.ops.aten.gelu_backward.default(tm.ones(3, 40_000), tm.tensor(inputs[index]), approximate="tanh")
            results[index].append(got.numpy().tobytes())

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for got, want in zip(results, expected, strict=True):
        assert got == [want.tobytes()] * 5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tanh_gelu_backward_steps_in_place_keep_the_formula(dtype):
    # The kernel runs the formula's steps in place (float64 steps through copies into float64
    # arrays): bit for bit the formula, on random bit patterns (NaN, inf, subnormal, every
    # binade), special values and a 0-dim operand.
    from tensormodes._ops.backward_ops import _tanh_gelu_backward

    rng = np.random.default_rng(28)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    x = np.concatenate([rng.integers(0, 2**32, 300_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        rng.standard_normal(100_000).astype(np.float32) * 4,
                        np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38, -3.4e38, 9, -9], np.float32)])
    x = x.astype(dtype) if dtype == np.float32 else \
        np.concatenate([x.astype(dtype), rng.integers(0, 2**63, 300_000, dtype=np.uint64).view(dtype)])
    dy = rng.standard_normal(x.shape).astype(dtype)
    with np.errstate(all="ignore"):
        for a, b in ((dy, x), (dy[:1].reshape(()), x[3:4].reshape(()))):
            got, expected = _tanh_gelu_backward(a, b), _tanh_gelu_backward_formula(a, b)
            assert got.dtype == dtype and got.shape == b.shape
            np.testing.assert_array_equal(np.asarray(got).view(bits), np.asarray(expected).view(bits))
    # a value worked out by hand: the slope at 1 is 1.0829640 (float32)
    assert float(tm.ops.aten.gelu_backward.default(tm.tensor([1.0]), tm.tensor([1.0]), approximate="tanh")) == \
        pytest.approx(1.0829640, abs=1e-6)
