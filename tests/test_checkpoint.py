"""tensormodes.utils.checkpoint: recomputation in backward, with the results of running without it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential


def _model():
    tm.manual_seed(0)
    return tm.nn.Sequential(tm.nn.Linear(3, 4), tm.nn.Tanh(), tm.nn.Dropout(0.5), tm.nn.Linear(4, 2))


def _grads(mode):
    """Loss and gradients of the model on a fixed input, run plainly or checkpointed."""
    model = _model()
    x = tm.arange(6.0).reshape(2, 3).requires_grad_()
    tm.manual_seed(7)  # the dropout mask
    if mode == "plain":
        out = model(x)
    else:
        out = checkpoint(model, x, use_reentrant=(mode == "reentrant"))
    loss = (out ** 2).sum()
    loss.backward()
    after = tm.rand(1).item()  # the random stream after backward: recomputation must not move it
    return loss.item(), x.grad.tolist(), [p.grad.tolist() for p in model.parameters()], after


@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant"])
def test_same_loss_and_gradients_as_without_checkpoint(mode):
    assert _grads(mode) == _grads("plain")


def test_function_runs_again_in_backward():
    calls = []

    def f(a):
        calls.append(a.requires_grad)
        return a.exp().sum()

    x = tm.tensor([0.0, 1.0], requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    assert len(calls) == 1
    y.backward()
    assert len(calls) == 2 and calls == [True, True]
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


def test_kwargs_nested_outputs_and_non_tensor_values():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    out = checkpoint(lambda a, *, k: (a * k, 3, {"d": a.detach(), "s": a.sum()}), x, k=2.0, use_reentrant=False)
    assert out[1] == 3 and out[0].requires_grad and not out[2]["d"].requires_grad
    assert out[2]["d"].tolist() == [1.0, 2.0]
    (out[0].sum() + out[2]["s"] * 10).backward()
    assert x.grad.tolist() == [12.0, 12.0]


def test_parameters_get_gradients_when_the_input_does_not_require_grad():
    layer = tm.nn.Linear(2, 1)
    with tm.no_grad():
        layer.weight.copy_(tm.tensor([[1.0, -2.0]]))
        layer.bias.fill_(0.5)
    out = checkpoint(layer, tm.tensor([[3.0, 4.0]]), use_reentrant=False)
    assert out.requires_grad
    (w_grad, b_grad) = tm.autograd.grad(out.sum(), [layer.weight, layer.bias])
    assert w_grad.tolist() == [[3.0, 4.0]] and b_grad.tolist() == [1.0]
    assert layer.weight.grad is None  # autograd.grad returns, does not accumulate

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = checkpoint(layer, tm.tensor([[3.0, 4.0]]), use_reentrant=True)
    assert [str(w.message) for w in caught] == ["None of the inputs have requires_grad=True. Gradients will be None"]
    assert not out.requires_grad


def test_outside_tensors_receive_gradients_and_their_hooks_run_once():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    captured = x * 3  # a non-leaf from outside the region
    w = tm.tensor([2.0, 5.0], requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.tolist()))
    y = checkpoint(lambda a: (a * captured * w).sum(), x, use_reentrant=False)
    y.backward()
    assert seen == [[3.0, 12.0]]
    # d/dx of sum(x * 3x * w) = 6 x w
    assert x.grad.tolist() == [12.0, 60.0] and w.grad.tolist() == [3.0, 12.0]


def test_double_backward_through_non_reentrant_checkpoint():
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda a: (a ** 3).sum(), x, use_reentrant=False)
    g, = tm.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.requires_grad
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_no_grad_and_output_not_requiring_grad():
    x = tm.tensor([1.0], requires_grad=True)
    with tm.no_grad():
        out = checkpoint(lambda a: a * 2, x, use_reentrant=False)
    assert not out.requires_grad and out.grad_fn is None
    out = checkpoint(lambda a: (a * 2, a.detach() + 1), x, use_reentrant=False)
    assert out[0].requires_grad and not out[1].requires_grad


def test_errors_and_warnings():
    x = tm.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda a: a * 2, x)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: k,j$"):
        checkpoint(lambda a, k, j: a, x, k=1, j=2, use_reentrant=True)
    with pytest.raises(ValueError, match=r"^determinism_check should be one of \['default', 'none'\], but got x$"):
        checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="x")
    with pytest.raises(ValueError, match="^Passing `context_fn` or `debug` is only supported when "
                                         "use_reentrant=False.$"):
        checkpoint(lambda a: a, x, use_reentrant=True, debug=True)

    # what is compared here is the outputs' metadata (PyTorch compares the saved tensors')
    shapes = iter([(1,), (2,)])
    y = checkpoint(lambda a: a.expand(*next(shapes)), x, use_reentrant=False)
    with pytest.raises(CheckpointError, match=r"^torch.utils.checkpoint: Recomputed values for the following tensors "
                                              r"have different metadata than during the forward pass.\ntensor at "
                                              r"position 0:\nsaved metadata: \{'shape': tensormodes.Size\(\[1\]\)"):
        y.sum().backward()
    scales = iter([1.0, 2.0])
    y = checkpoint(lambda a: a * next(scales), x, use_reentrant=False, determinism_check="none")
    y.sum().backward()  # the recomputation's graph is what backward differentiates
    assert x.grad.tolist() == [2.0]


def test_context_fn_runs_forward_and_recomputation_in_its_contexts():
    import contextlib
    entered = []

    def context_fn():
        return (contextlib.nullcontext(entered.append("forward")),
                contextlib.nullcontext(entered.append("recompute")))

    x = tm.tensor([1.0], requires_grad=True)
    checkpoint(lambda a: a * 2, x, use_reentrant=False, context_fn=context_fn).backward()
    assert x.grad.tolist() == [2.0] and entered.count("forward") == 2


def test_checkpoint_sequential_matches_plain_run():
    model = _model().eval()
    x = tm.arange(6.0).reshape(2, 3).requires_grad_()
    plain = model(x).sum()
    plain.backward()
    expected = [p.grad.clone() for p in model.parameters()], x.grad.clone()
    model.zero_grad()
    x.grad = None
    out = checkpoint_sequential(model, 2, x, use_reentrant=False).sum()
    out.backward()
    assert out.item() == plain.item()
    assert all(tm.equal(p.grad, e) for p, e in zip(model.parameters(), expected[0]))
    assert tm.equal(x.grad, expected[1])


@pytest.mark.torch
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_same_gradients_as_pytorch(use_reentrant):
    import torch
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    ours = tm.nn.Sequential(tm.nn.Linear(3, 4), tm.nn.GELU(), tm.nn.LayerNorm(4), tm.nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.GELU(), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    data = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    x, tx = tm.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    checkpoint(ours, x, use_reentrant=use_reentrant).pow(2).sum().backward()
    torch_checkpoint(theirs, tx, use_reentrant=use_reentrant).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_module_backward_hooks_and_flop_counter_inside_a_checkpoint():
    from tensormodes.utils.flop_counter import FlopCounterMode

    layer = tm.nn.Linear(4, 4)
    with tm.no_grad():
        layer.weight.copy_(tm.arange(16.0).reshape(4, 4) / 10)
    seen = []
    layer.register_full_backward_hook(lambda module, grad_in, grad_out: seen.append(grad_in[0].shape))
    x = tm.ones(2, 4, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        checkpoint(layer, x, use_reentrant=False).sum().backward()
    # the whole function is recomputed (PyTorch stops once the saved tensors are back: 192 here)
    assert counter.get_total_flops() == 256
    np.testing.assert_allclose(x.grad.numpy(), [[2.4, 2.8, 3.2, 3.6]] * 2, rtol=1e-6)
    assert layer.weight.grad.tolist() == [[2.0] * 4] * 4 and seen == [(2, 4)]
