"""The backward ops that gradient formulas call (``_softmax_backward_data``,
``_log_softmax_backward_data``, ``_nll_loss_backward``, ``_cross_entropy_loss_backward``,
``_threshold_backward``): PyTorch's values, dtypes and errors, their own gradients (double
backward), and one call per gradient; and nll_loss's forward, which shares the backward op's
handling of ignored targets."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

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

def test_training_step_gradients_are_one_call_each():
    logits = tm.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(F.relu(logits), tm.tensor([0, 1, 2, 1]))
    with Recorder() as log:
        tm.autograd.grad(loss, logits)
    assert log.names == ["tensormodes._cross_entropy_loss_backward", "tensormodes._threshold_backward"]
    x, seed = tm.randn(4, 3, requires_grad=True), tm.ones(4, 3)
    probabilities = x.softmax(1)
    with Recorder() as log:
        tm.autograd.grad(probabilities, x, seed)
    assert log.names == ["tensormodes._softmax_backward_data"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(3, 8192 + 5), (7,), ()])
def test_gelu_kernels_in_blocks_keep_the_whole_array_formulas(dtype, shape):
    # gelu and gelu_backward compute a block of elements at a time, in place: bit for bit the
    # whole-array expressions they replaced (across block edges, at infinities and NaN).
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
    # the tanh form's backward, block by block against its kernel on the whole arrays
    from tensormodes._ops.backward_ops import _tanh_gelu_backward

    with np.errstate(all="ignore"):
        expected = np.asarray(_tanh_gelu_backward(dys, xs)).astype(target)
    got = tm.ops.aten.gelu_backward.default(dy, x, approximate="tanh").numpy()
    np.testing.assert_array_equal(raw(got), raw(expected))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_kernels_in_place_keep_their_formulas(dtype, affine):
    # native_layer_norm and its backward work in place and take the mean in NumPy's own steps:
    # bit for bit the expressions they replaced (np.mean, new arrays at every step).
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
    gy = gs if ws is None else gs * ws
    ds, db = np.add.reduce(gy * xs, axis=axes, keepdims=True), np.add.reduce(gy, axis=axes, keepdims=True)
    scale = 1 / 96
    bb = (db * m - ds) * r * r * r * scale
    c = -bb * m - db * r * scale
    expected_grads = [r * gy + bb * xs + c]
    if affine:
        expected_grads += [np.add.reduce(gs * ((xs - m) * r), axis=0), np.add.reduce(gs, axis=0)]
    target = x.numpy().dtype
    for got, want in [(out, expected), (mean, m), (rstd, r), *zip(grads, expected_grads)]:
        want = np.asarray(want).astype(target if got.dtype == x.dtype else work)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy().reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))
