"""``nn.functional.cross_entropy``'s common case (class-index targets, no label smoothing) as one
fused op, ``_cross_entropy_loss``, whose gradient is one call to ``_cross_entropy_loss_backward``:
PyTorch's values and gradients (first, second and third order), the previous
``log_softmax`` + ``nll_loss`` path's results bit for bit and its errors word for word, one
autograd node, and modes that still see only ``cross_entropy``."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes._autograd.engine import run_backward

from .recording import Recorder

OPTIONS = [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 1},
           {"reduction": "none", "ignore_index": 0}, {"reduction": "sum", "ignore_index": 2}, {"weight": True},
           {"weight": True, "ignore_index": 2}, {"weight": True, "reduction": "sum"},
           {"weight": True, "reduction": "none", "ignore_index": 1}]
# (input shape, target shape): batched, unbatched, (N, C, d1), (N, C, d1, d2), an empty batch.
SHAPES = [((5, 3), (5,)), ((3,), ()), ((2, 3, 4), (2, 4)), ((2, 3, 2, 2), (2, 2, 2)), ((0, 3), (0,))]


def _case(shape, target_shape, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) * scale, rng.integers(0, 3, target_shape), rng.random(3) + 0.5


def _split(options):
    options = dict(options)
    return options.pop("weight", False), options


def _old_path(x, target, weight=None, ignore_index=-100, reduction="mean"):
    """What cross_entropy computed before the fused op: two ops, two nodes."""
    return F.nll_loss(x.log_softmax(1 if x.dim() >= 2 else 0), target, weight, ignore_index=ignore_index,
                      reduction=reduction)


def _same_bits(a: tm.Tensor, b: tm.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.numpy().tobytes() == b.numpy().tobytes()


# -- against PyTorch ---------------------------------------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("shape, target_shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_and_gradients_match_torch(options, shape, target_shape, dtype):
    import torch

    x, target, weight = _case(shape, target_shape)
    use_weight, options = _split(options)
    results = []
    for library in (tm, torch):
        inputs = library.tensor(x, dtype=getattr(library, dtype), requires_grad=True)
        w = library.tensor(weight, dtype=getattr(library, dtype)) if use_weight else None
        loss = library.nn.functional.cross_entropy(inputs, library.tensor(target), w, **options)
        seed = library.tensor(np.random.default_rng(1).standard_normal(tuple(loss.shape)), dtype=loss.dtype)
        loss.backward(seed)
        results.append((loss.detach().numpy(), inputs.grad.numpy()))
    tolerance = {"rtol": 1e-12, "atol": 1e-14} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-6}
    for ours, theirs in zip(*results):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, equal_nan=True, **tolerance)


@pytest.mark.torch
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("shape, target_shape", SHAPES[:4])
def test_second_and_third_order_gradients_match_torch(options, shape, target_shape):
    import torch

    x, target, weight = _case(shape, target_shape, seed=5)  # the weighted means keep a target: no NaN
    use_weight, options = _split(options)
    results = []
    for library in (tm, torch):
        inputs = library.tensor(x, requires_grad=True)
        w = library.tensor(weight) if use_weight else None
        loss = library.nn.functional.cross_entropy(inputs, library.tensor(target), w, **options)
        seed = library.tensor(np.random.default_rng(2).standard_normal(tuple(loss.shape)))
        (grad,) = library.autograd.grad((loss * seed).sum(), inputs, create_graph=True)
        (second,) = library.autograd.grad((grad * grad * grad).sum(), inputs, create_graph=True)
        second.sin().sum().backward()
        results.append([t.detach().numpy() for t in (grad, second, inputs.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_backward_op_is_torchs_gradient_and_differentiable_in_grad_output(reduction):
    # d/d grad_output of <G, _cross_entropy_loss_backward(grad_output, log_probs, ...)>: torch differentiates
    # its own gradient graph (create_graph) with respect to the seed it was given; the logits' gradient
    # comes through the log-probabilities (log_softmax with history).
    import torch

    x, target, weight = _case((4, 3), (4,), seed=7)
    rng = np.random.default_rng(8)
    g0 = rng.standard_normal((4,) if reduction == "none" else ())
    seed = rng.standard_normal((4, 3))
    results = []
    for library in (tm, torch):
        inputs, w = library.tensor(x, requires_grad=True), library.tensor(weight)
        grad_output = library.tensor(g0, requires_grad=True)
        if library is tm:
            grad = tm._cross_entropy_loss_backward(grad_output, inputs.log_softmax(1), tm.tensor(target), w,
                                                   reduction, 2)
        else:
            loss = torch.nn.functional.cross_entropy(inputs, torch.tensor(target), w, ignore_index=2,
                                                     reduction=reduction)
            (grad,) = torch.autograd.grad(loss, inputs, grad_output, create_graph=True)
        (grad * library.tensor(seed)).sum().backward()
        results.append([t.detach().numpy() for t in (grad, grad_output.grad, inputs.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)


@pytest.mark.torch
@pytest.mark.parametrize("case", [
    # a class masked with -inf (not the target): finite gradients
    ([[0.5, -np.inf, 1.0], [-np.inf, 0.2, 0.1]], [0, 2], {}),
    # logits far apart: nothing overflows
    ([[1e4, -1e4, 0.0], [-3e3, 2e3, 2e3]], [1, 0], {"reduction": "sum"}),
    # every target ignored: the mean is NaN and there is no gradient at all
    ([[0.1, 0.2, 0.3], [0.3, 0.1, 0.2]], [1, 1], {"ignore_index": 1}),
    # an infinite logit in an ignored row: that row's gradient is NaN (softmax * 0), as in PyTorch
    ([[np.inf, 0.2, 0.3], [0.3, 0.1, 0.2]], [0, 2], {"ignore_index": 0}),
])
def test_edge_values_match_torch(case):
    import torch

    x, target, options = case
    results = []
    for library in (tm, torch):
        inputs = library.tensor(x, dtype=library.float64, requires_grad=True)
        loss = library.nn.functional.cross_entropy(inputs, library.tensor(target), **options)
        loss.sum().backward()
        results.append((loss.detach().numpy(), inputs.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-300, equal_nan=True)


# -- against the two-op path it replaces -------------------------------------------------------------

@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("shape, target_shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("scale", [3.0, 200.0])
def test_bit_identical_to_log_softmax_then_nll_loss(options, shape, target_shape, dtype, scale):
    x, target, weight = _case(shape, target_shape, scale=scale)
    use_weight, options = _split(options)
    d = getattr(tm, dtype)
    inputs, t = tm.tensor(x, dtype=d), tm.tensor(target)
    w = tm.tensor(weight, dtype=d) if use_weight else None
    old = _old_path(inputs, t, w, **options)
    assert _same_bits(F.cross_entropy(inputs, t, w, **options), old)
    assert _same_bits(tm._cross_entropy_loss(inputs, t, w, options.get("reduction", "mean"),
                                             options.get("ignore_index", -100)), old)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("shape, target_shape", SHAPES[:4])
def test_gradients_agree_with_log_softmax_then_nll_loss(options, shape, target_shape):
    # Not bit for bit (the fused backward folds nll_loss's and log_softmax's backward into one kernel), but
    # to rounding; a weight that requires grad (beyond PyTorch) gets the same gradient, first and second order.
    x, target, weight = _case(shape, target_shape, seed=3)
    use_weight, options = _split(options)
    results = []
    for loss_function in (F.cross_entropy, _old_path):
        leaves = [tm.tensor(x, requires_grad=True)] + ([tm.tensor(weight, requires_grad=True)] if use_weight else [])
        loss = loss_function(leaves[0], tm.tensor(target), *leaves[1:], **options)
        first = tm.autograd.grad(loss.sum(), leaves, create_graph=True)
        second = tm.autograd.grad(sum((g * g).sum() for g in first), leaves)
        results.append([g.detach().numpy() for g in first + second])
    for ours, old in zip(*results):
        np.testing.assert_allclose(ours, old, rtol=1e-12, atol=1e-14)


def test_weight_gradient_alone():
    # Only the weight requires grad: it still gets nll_loss's weight gradient.
    x, target, weight = _case((5, 3), (5,), seed=4)
    grads = []
    for loss_function in (F.cross_entropy, _old_path):
        w = tm.tensor(weight, requires_grad=True)
        loss_function(tm.tensor(x), tm.tensor(target), w, ignore_index=1).backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12)


def _outcome(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
        return type(error), str(error)
    return None


@pytest.mark.parametrize("inputs, target, options", [
    ("tm.zeros(4, 3)", "tm.tensor([0, 1, 2, 1], dtype=tm.int32)", {}),  # target dtype
    ("tm.zeros(4, 3)", "tm.tensor([0, 1, 2, 1], dtype=tm.int32)", {"weight": "tm.ones(2)"}),
    ("tm.zeros(4, 3)", "tm.tensor([0, 5, 1, 1])", {}),  # out of bounds
    ("tm.zeros(4, 3)", "tm.tensor([0, -1, 1, 1])", {}),
    ("tm.zeros(4, 3)", "tm.tensor([0, 3, 1, 1])", {"ignore_index": 3}),  # ignored: fine
    ("tm.zeros(4, 3)", "tm.tensor([0, 1, 1])", {}),  # batch sizes
    ("tm.zeros(4, 3, 2)", "tm.zeros(4, 3, dtype=tm.int64)", {}),  # target shape
    ("tm.zeros(3)", "tm.tensor([0, 1])", {}),
    ("tm.zeros(4, 3)", "tm.tensor([0, 1, 2, 1])", {"weight": "tm.ones(2)"}),  # weight shape
    ("tm.zeros(4, 3)", "tm.tensor([0, 1, 2, 1])", {"weight": "tm.ones(1, 3)"}),
    ("tm.zeros(4, 3, dtype=tm.int64)", "tm.tensor([0, 1, 2, 1])", {}),  # integer input
    ("tm.zeros(4, 3, dtype=tm.int64)", "tm.tensor([0, 1, 2], dtype=tm.int32)", {}),  # input checked first
    ("tm.zeros(4, 3, dtype=tm.bool)", "tm.tensor([0, 1, 2, 1])", {}),
    ("tm.zeros(4, 3, dtype=tm.complex64)", "tm.tensor([0, 1, 2, 1])", {}),
    ("tm.zeros(4, 3)", "tm.tensor([0, 1, 2, 1])", {"reduction": "avg"}),
])
def test_errors_unchanged(inputs, target, options):
    # (A 0-dim input is not among them: PyTorch's fused op raises its own errors there, unlike the
    # two-op path; tests/test_fuzz_indexloss.py pins them.)
    options = {k: eval(v) if k == "weight" else v for k, v in options.items()}
    x, t = eval(inputs), eval(target)
    old = _outcome(lambda: _old_path(x, t, **options))
    assert _outcome(lambda: F.cross_entropy(x, t, **options)) == old
    fused = dict(options)
    fused = (fused.pop("weight", None), fused.pop("reduction", "mean"), fused.pop("ignore_index", -100))
    assert _outcome(lambda: tm._cross_entropy_loss(x, t, *fused)) == old
    if "ignore_index" not in options:
        assert old is not None


def test_backward_op_errors():
    x, t = tm.zeros(4, 3).log_softmax(1), tm.tensor([0, 1, 2, 1])
    with pytest.raises(RuntimeError, match=r"Expected a single element grad_output tensor, but got: \[4\]"):
        tm._cross_entropy_loss_backward(tm.ones(4), x, t)
    with pytest.raises(RuntimeError, match=r"expected grad_output of shape \[4\], got \[3\]"):
        tm._cross_entropy_loss_backward(tm.ones(3), x, t, reduction="none")
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        tm._cross_entropy_loss_backward(tm.tensor(1.0), x, t, reduction="avg")
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        tm._cross_entropy_loss_backward(tm.tensor(1.0), x, tm.tensor([0, 5, 1, 1]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        tm._cross_entropy_loss_backward(tm.tensor(1.0), x, t.int())
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes"):
        tm._cross_entropy_loss_backward(tm.tensor(1.0), x, t, tm.ones(2))
    # Integer log-probabilities: PyTorch's composite fails in _log_softmax_backward_data (see below).
    with pytest.raises(NotImplementedError,
                       match="\"log_softmax_backward_lastdim_kernel_impl\" not implemented for 'Long'"):
        tm._cross_entropy_loss_backward(tm.tensor(1.0), x.long(), t)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("shape, dim", [((4, 3), 1), ((2, 3, 4), 1), ((3,), 0)])
def test_backward_op_refuses_what_log_softmax_backward_refuses(dtype, shape, dim):
    # PyTorch's composite computes this gradient with _log_softmax_backward_data(N, log_probs, ...), whose
    # gradient N has log_probs' dtype: its error for that dtype is the one to give.
    import torch

    target = tm.zeros(shape[:dim] + shape[dim + 1:], dtype=tm.int64)
    ours = _outcome(lambda: tm._cross_entropy_loss_backward(tm.tensor(1.0), tm.zeros(shape, dtype=getattr(tm, dtype)),
                                                            target))
    z = torch.zeros(shape, dtype=getattr(torch, dtype))
    theirs = _outcome(lambda: torch._log_softmax_backward_data(z, z, dim, z.dtype))
    assert theirs is not None and ours == theirs


def test_backward_op_result_has_the_log_probs_dtype():
    x, target = tm.tensor(_case((4, 3), (4,))[0], dtype=tm.float32).log_softmax(1), tm.tensor([0, 1, 2, 1])
    expected = tm._cross_entropy_loss_backward(tm.tensor(1.0), x, target).numpy()
    for grad_output in (tm.tensor(1.0, dtype=tm.float64), tm.tensor(1.0, dtype=tm.bfloat16)):
        grad = tm._cross_entropy_loss_backward(grad_output, x, target)
        assert grad.dtype is tm.float32
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6, atol=1e-7)


# -- the graph and the protocol ----------------------------------------------------------------------

def test_one_node_whose_next_function_is_the_inputs():
    # One node, named as PyTorch's last node of its composite (nll_loss's).
    x, w = tm.randn(4, 5), tm.randn(3, 5, requires_grad=True)
    logits = F.linear(x, w)
    loss = F.cross_entropy(logits, tm.tensor([0, 1, 2, 1]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0] == (logits.grad_fn, 0)
    assert all(node is None for node, _ in loss.grad_fn.next_functions[1:])
    leaf = tm.randn(4, 3, requires_grad=True)
    node = F.cross_entropy(leaf, tm.tensor([0, 1, 2, 1]), reduction="none").grad_fn
    assert node.name() == "NllLossBackward0"
    assert node.next_functions[0][0].variable is leaf


def test_other_cases_keep_the_composite():
    x = tm.randn(4, 3, requires_grad=True)
    assert F.cross_entropy(x, tm.tensor([0, 1, 2, 1]), label_smoothing=0.1).grad_fn.name() != \
        "CrossEntropyLossBackward0"
    assert F.cross_entropy(x, tm.randn(4, 3).softmax(1)).grad_fn.name() != "CrossEntropyLossBackward0"


def test_modes_see_cross_entropy_and_one_backward_call():
    x, target = tm.randn(4, 3, requires_grad=True), tm.tensor([0, 1, 2, 1])
    with Recorder() as log:
        loss = F.cross_entropy(x, target)
    assert log.names == ["tensormodes.nn.functional.cross_entropy"]
    with Recorder() as log:
        tm.autograd.grad(loss, x, retain_graph=True)
    assert log.names == [None]  # autograd.grad, one call to a mode as in PyTorch (resolve_name gives None there too)
    seed = tm.ones(())
    with Recorder() as log:  # the engine below it: one formula call
        run_backward([loss], [seed], retain_graph=False, create_graph=False, inputs=[x], accumulate=False)
    assert log.names == ["tensormodes._cross_entropy_loss_backward"]
