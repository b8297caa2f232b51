"""The backward node a loss or composite of ``nn.functional`` records is named as PyTorch 2.13's
(``F.mse_loss(x, y).grad_fn`` is ``MseLossBackward0``): the native losses and activations are
ops of their own (``_ops/losses.py``, ``_ops/pointwise_activation.py``), named through ``node=``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

# (expression with L = the library, F = its nn.functional; x, y = (4, 3) leaves requiring grad,
# p = probabilities requiring grad, t = targets in [0, 1], s = signs, c = class indices, i and v =
# x reshaped as a (1, 3, 2, 2) image and a (2, 2, 3) signal)
CASES = [
    # losses PyTorch computes natively: a node of their own
    "F.mse_loss(x, t)", "F.mse_loss(x, t, reduction='none')", "F.mse_loss(x, t, reduction='sum')",
    "F.mse_loss(x, t[0])", "F.mse_loss(x, y)", "F.mse_loss(x, t, size_average=False)",
    "F.smooth_l1_loss(x, t)", "F.smooth_l1_loss(x, t, reduction='none', beta=0.5)", "F.smooth_l1_loss(x, y)",
    "F.huber_loss(x, t)", "F.huber_loss(x, t, reduction='none', delta=0.5)",
    "F.soft_margin_loss(x, s)", "F.soft_margin_loss(x, s, reduction='none')",
    "F.binary_cross_entropy_with_logits(x, t)", "F.binary_cross_entropy_with_logits(x, t, reduction='none')",
    "F.binary_cross_entropy_with_logits(x, t, weight=t[0], pos_weight=t[1] + 1)",
    "F.binary_cross_entropy(p, t)", "F.binary_cross_entropy(p, t, reduction='none')",
    "F.nll_loss(x, c)", "F.nll_loss(x, c, reduction='none')",
    "F.cross_entropy(x, c)", "F.cross_entropy(x, c, reduction='none')", "F.cross_entropy(x, c, weight=t[0])",
    # losses PyTorch composes (their last node is a reduction or arithmetic)
    "F.l1_loss(x, t)", "F.l1_loss(x, t, reduction='none')", "F.smooth_l1_loss(x, t, beta=0.0)",
    "F.kl_div(x, t, reduction='batchmean')", "F.kl_div(x, t, reduction='sum', log_target=True)",
    "F.poisson_nll_loss(x, t)", "F.gaussian_nll_loss(x, t, L.ones(4, 3))",
    "F.margin_ranking_loss(x[:, 0], x[:, 1], s[:, 0])",
    "F.hinge_embedding_loss(x, s)", "F.cosine_embedding_loss(x, y, s[:, 0])", "F.triplet_margin_loss(x, y, y + 1)",
    "F.mse_loss(x, t, weight=p)", "F.huber_loss(x, t, weight=p)",
    # activations
    "F.gelu(x)", "F.gelu(x, approximate='tanh')", "F.silu(x)", "F.mish(x)", "F.elu(x)", "F.elu(x, 0.5)",
    "F.selu(x)", "F.celu(x, 2.0)", "F.leaky_relu(x, 0.2)", "F.hardtanh(x)", "F.relu6(x * 4)",
    "F.softplus(x, beta=2.0)", "F.logsigmoid(x)", "F.glu(x.reshape(3, 4))", "F.glu(x, 0)",
    "F.relu(x)", "F.softmax(x, 1)", "F.log_softmax(x, 1)", "F.softmin(x, 1)", "F.sigmoid(x)", "F.tanh(x)",
    "F.softsign(x)", "F.tanhshrink(x)",
    "F.hardswish(x * 4)", "F.hardsigmoid(x * 4)", "F.threshold(x, 0.1, 2.0)",
    "F.prelu(x.reshape(2, 3, 2), y[0])", "F.prelu(x, y[0, :1])",
    # padding, resampling, convolution, pooling (i = x as a (1, 3, 2, 2) image, v = x as (2, 2, 3))
    "F.pad(x, (1, 2))", "F.pad(x, (1, -1, 0, 2), value=3.0)", "F.pad(v, (1, 2), mode='reflect')",
    "F.pad(i, (1, 1, 1, 0), mode='reflect')", "F.pad(v, (2, 1), mode='replicate')",
    "F.pad(i, (1, 1, 1, 0), mode='replicate')",
    "F.interpolate(v, scale_factor=2)", "F.interpolate(i, scale_factor=2)", "F.interpolate(v, size=5, mode='linear')",
    "F.interpolate(i, size=(3, 5), mode='bilinear', align_corners=True)",
    "F.conv1d(v, y.reshape(6, 2, 1))", "F.conv2d(i, y.reshape(4, 3, 1, 1), y[0, :1].expand(4))",
    "F.conv_transpose1d(v, y.reshape(2, 3, 2))", "F.conv_transpose2d(i, y.reshape(3, 2, 2, 1))",
    "F.max_pool2d(i, 2)", "F.max_pool2d(i, 2, return_indices=True)[0]", "F.avg_pool2d(i, 2)",
    "F.max_pool1d(v, 2)", "F.max_pool1d(v, 2, return_indices=True)[0]", "F.avg_pool1d(v, 2)",
    "F.adaptive_avg_pool1d(v, 2)",
    # linear: named as the last step of PyTorch's composite for the arguments
    "F.linear(x, y)", "F.linear(x, y, x[:, 0])", "F.linear(x, y[:2], t[:, :2])", "F.linear(v, y)",
    "F.linear(v, y, x[:, 0])", "F.linear(v.transpose(0, 1), y, x[:, 0])", "F.linear(v, y, t[:2, :1])",
    "F.linear(x[0], y)", "F.linear(x[0], y, x[:, 0])",
    "F.linear(x[0], y[0])", "F.linear(x[0], y[0], y[1, 0])", "F.linear(v, y, L.ones(1))",
    "F.linear(v, y, (x[:, 0] * 1).contiguous())",
    # reductions named by overload; distances
    "x.sum()", "x.sum(1)", "x.sum((0, 1))", "x.mean()", "x.mean(0, keepdim=True)",
    "F.pairwise_distance(x, y)", "F.pairwise_distance(x, y, p=1.0, keepdim=True)", "F.cosine_similarity(x, y)",
    "F.cosine_similarity(x, y, dim=0)",
    "x.norm()", "x.norm(dim=1)", "x.norm(p=1, dim=0)", "L.norm(x, dim=1, keepdim=True)", "x.norm(p='nuc')",
    "x.norm(p=float('inf'))",
    # normalisation
    "F.layer_norm(v, (3,))", "F.layer_norm(v, (2, 3), x[:2], y[:2])", "F.group_norm(i, 3, y[0], y[1])",
    "F.group_norm(i, 1)", "F.batch_norm(i, None, None, y[0], y[1], training=True)",
    "F.batch_norm(i, t[0], t[1] + 1, y[0], training=False)", "F.batch_norm(x, None, None, training=True)",
    "F.instance_norm(i)", "F.instance_norm(v, weight=y[0, :2], bias=y[1, :2])",
    "F.embedding_bag(c, y, L.tensor([0, 1]))", "F.embedding_bag(c.reshape(2, 2), y, mode='max')",
    "F.embedding_bag(c, y, L.tensor([0, 2, 4]), mode='sum', include_last_offset=True)",
    # embedding, dropout
    "F.embedding(c, y)", "F.embedding(c, y, padding_idx=1)", "F.embedding(c.reshape(2, 2), y, scale_grad_by_freq=True)",
    "F.dropout(x, 0.5)", "F.dropout(x, 0.5, training=False)",
    # binary ops with a number: PyTorch's Scalar overloads have nodes of their own, under every name
    "L.xlogy(x, 2)", "L.xlogy(2.5, y)", "L.xlogy(x, y)", "x.xlogy(2)", "L.special.xlogy(x, 2.0)",
    "L.special.xlogy(3, y)", "L.special.xlog1py(2.0, y)", "L.special.zeta(x + 2, 3.0)", "L.special.expm1(x)",
]


def _leaves(library):
    rng = np.random.default_rng(0)
    values = {"x": rng.standard_normal((4, 3)), "y": rng.standard_normal((4, 3)),
              "p": rng.uniform(0.05, 0.95, (4, 3)), "t": rng.uniform(0, 1, (4, 3))}
    names = {name: library.tensor(value, dtype=library.float32, requires_grad=name in "xyp")
             for name, value in values.items()}
    names["s"] = library.tensor(np.where(rng.uniform(size=(4, 3)) > 0.5, 1.0, -1.0), dtype=library.float32)
    names["c"] = library.tensor([0, 2, 1, 1])
    names["i"], names["v"] = names["x"].reshape(1, 3, 2, 2), names["x"].reshape(2, 2, 3)
    return names


def _run(library, functional, expression):
    library.manual_seed(0)
    names = _leaves(library)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = eval(expression, {"L": library, "F": functional, **names})  # noqa: S307 - the test's own cases
    return result, names


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_grad_fn_name_matches_torch(expression):
    import torch
    import torch.nn.functional as torch_functional

    ours, _ = _run(tm, F, expression)
    theirs, _ = _run(torch, torch_functional, expression)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__  # NoneType for F.dropout in eval
    if theirs.grad_fn is not None:
        assert ours.grad_fn.name() == theirs.grad_fn.name()


# Gradients through the new nodes equal PyTorch's (including the arguments the every-op tables
# cannot sample: a gradient that is not the derivative, as embedding's padding row).
GRADIENT_CASES = [
    "F.embedding(c, y, padding_idx=1)", "F.embedding(c.reshape(2, 2), y, scale_grad_by_freq=True)",
    "F.embedding(L.tensor([1, 1, 3, 1]), y, padding_idx=-1, scale_grad_by_freq=True)",
    "F.mse_loss(x, y[0])", "F.mse_loss(x, t, weight=p)", "F.smooth_l1_loss(y[:, :1], x, beta=0.5)",
    "F.huber_loss(x, y, delta=0.5, reduction='sum')", "F.soft_margin_loss(x, s)",
    "F.binary_cross_entropy_with_logits(x * 10, t, pos_weight=t[1] + 1)", "F.gelu(x * 3, approximate='tanh')",
    "F.celu(x * 3, 0.5)", "F.selu(x * 2)", "F.softplus(x * 30, beta=0.5, threshold=5)", "F.glu(x, 0)",
    "F.hardswish(x * 4)", "F.hardsigmoid(x * 4)", "F.threshold(x, 0.1, 2.0)", "F.prelu(x.reshape(2, 3, 2), y[0])",
    "F.pad(x, (1, -1, 0, 2), value=3.0)", "F.pad(i, (1, 1, 1, 0), mode='reflect')",
    "F.pad(v, (2, -1), mode='replicate')", "F.interpolate(i, scale_factor=1.5)",
    "F.interpolate(i, size=(3, 5), mode='bilinear', align_corners=True)", "F.interpolate(v, size=5, mode='linear')",
    "F.layer_norm(v * 3, (2, 3), x[:2], y[:2])", "F.group_norm(i * 2, 3, y[0], y[1])", "F.group_norm(x, 1, eps=0.1)",
    "F.batch_norm(i, None, None, y[0], y[1], training=True)", "F.batch_norm(i, t[0], t[1] + 1, y[0], y[1])",
    "F.batch_norm(x, None, None, training=True, eps=0.5)",
    "F.instance_norm(v, L.zeros(2), L.ones(2), weight=y[0, :2], bias=y[1, :2], use_input_stats=False)",
    "F.instance_norm(v, weight=y[0, :2], bias=y[1, :2])",
    "F.linear(v, y, x[:, 0])", "F.linear(v.transpose(0, 1), y)", "F.linear(x[0], y)", "F.linear(x[0], y[0], y[1, 0])",
    "F.pairwise_distance(x, y, p=3.0)",
    "F.embedding_bag(c, y, L.tensor([0, 1]))", "F.embedding_bag(c, y, L.tensor([0, 1, 1]), padding_idx=2)",
    "F.embedding_bag(L.tensor([1, 3, 3, 0, 1]), y, L.tensor([0, 2, 2]), scale_grad_by_freq=True)",
    "F.embedding_bag(L.tensor([1, 1, 3, 0, 1]), y, L.tensor([0, 2, 3]), mode='sum',"
    " per_sample_weights=x[:, 0][[0, 1, 2, 3, 0]])",
    "F.embedding_bag(L.tensor([1, 1, 3, 0, 1]), y, L.tensor([0, 2, 3]), mode='max')",
    "F.embedding_bag(L.tensor([1, 2, 3, 0, 1]), y, L.tensor([0, 2, 5]), mode='sum', include_last_offset=True)",
    "F.embedding_bag(c.reshape(2, 2), y, mode='max')",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", GRADIENT_CASES)
def test_gradients_through_the_named_nodes_match_torch(expression):
    import torch
    import torch.nn.functional as torch_functional

    outcomes = []
    for library, functional in ((tm, F), (torch, torch_functional)):
        result, names = _run(library, functional, expression)
        leaves = [names[n] for n in "xyp"]
        grads = library.autograd.grad(result.sum(), leaves, allow_unused=True)
        outcomes.append((result.detach().numpy(), [None if g is None else g.numpy() for g in grads]))
    (ours, our_grads), (theirs, their_grads) = outcomes
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    for o, t in zip(our_grads, their_grads, strict=True):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_weighted_mse_mean_divides_by_the_total_weight():
    # PyTorch's F.mse_loss with weight: sum(w * d ** 2) / sum(w), not the plain mean
    loss = F.mse_loss(tm.tensor([1.0, 3.0]), tm.tensor([0.0, 0.0]), weight=tm.tensor([1.0, 3.0]))
    assert loss.item() == 7.0
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        F.mse_loss(tm.ones(2), tm.ones(2), weight=tm.ones(3))


def test_cross_entropy_records_one_nll_loss_node():
    x = tm.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, tm.tensor([0, 1, 2, 0]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].variable is x
    # nll_loss's own node (the same name, another formula) still computes nll_loss's gradient
    (grad,) = tm.autograd.grad(F.nll_loss(x, tm.tensor([0, 1, 2, 0])), [x])
    assert grad.tolist()[0] == [-0.25, 0.0, 0.0]


def test_pointwise_losses_refuse_integer_inputs_as_torch_does():
    with pytest.raises(NotImplementedError, match="\"mse_cpu\" not implemented for 'Long'"):
        F.mse_loss(tm.ones(2, dtype=tm.int64), tm.ones(2, dtype=tm.int64))
    with pytest.raises(NotImplementedError, match="\"huber_cpu\" not implemented for 'Long'"):
        F.huber_loss(tm.ones(2, dtype=tm.int64), tm.ones(2, dtype=tm.int64))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        F.soft_margin_loss(tm.ones(2, dtype=tm.int64), tm.ones(2, dtype=tm.int64))
    with pytest.raises(NotImplementedError, match="\"GeluKernelImpl\" not implemented for 'Long'"):
        F.gelu(tm.ones(2, dtype=tm.int64))


def test_native_losses_keep_pytorchs_result_dtypes():
    x32, x64 = tm.ones(2, 3), tm.ones(2, 3, dtype=tm.float64)
    assert F.mse_loss(x32, x64).dtype is tm.float64
    assert F.huber_loss(x32, x64).dtype is tm.float32  # written into an input-like result
    assert F.soft_margin_loss(x32, x64).dtype is tm.float32
    assert F.binary_cross_entropy_with_logits(x64, x32).dtype is tm.float32  # the target's dtype


@pytest.mark.torch
@pytest.mark.parametrize("expression", ["F.layer_norm(v * 3, (3,), x[0], y[0])", "F.group_norm(i, 3, y[0])",
                                        "F.batch_norm(i, None, None, y[0], training=True)",
                                        "F.batch_norm(i, t[0], t[1] + 1, y[0], y[1])", "F.instance_norm(v)",
                                        "F.pad(i * i, (1, 1, 1, 0), mode='reflect') * y[0, 0]",
                                        "F.interpolate(i * i, size=(3, 5), mode='bilinear') * y[0, 0]"])
def test_second_order_gradients_through_the_fused_nodes_match_torch(expression):
    import torch
    import torch.nn.functional as torch_functional

    outcomes = []
    for library, functional in ((tm, F), (torch, torch_functional)):
        result, names = _run(library, functional, expression)
        leaves = [names[n] for n in "xy"]
        (first,) = library.autograd.grad((result * result.detach().sin()).sum(), [names["x"]], create_graph=True)
        second = library.autograd.grad((first * first).sum(), leaves, allow_unused=True)
        outcomes.append([None if g is None else g.detach().numpy() for g in second])
    for o, t in zip(*outcomes, strict=True):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-5)


@pytest.mark.torch
@pytest.mark.parametrize("function", ["batch_norm", "instance_norm"])
def test_running_statistics_are_updated_as_torch_does(function):
    import torch

    stats = []
    for library in (tm, torch):
        functional = F if library is tm else torch.nn.functional
        x = library.tensor(np.random.default_rng(3).standard_normal((4, 3, 5)), dtype=library.float32)
        mean, var = library.zeros(3), library.ones(3)
        if function == "batch_norm":
            functional.batch_norm(x, mean, var, training=True, momentum=0.3)
        else:
            functional.instance_norm(x, mean, var, use_input_stats=True, momentum=0.3)
        stats.append((mean.numpy(), var.numpy()))
    np.testing.assert_allclose(stats[0][0], stats[1][0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(stats[0][1], stats[1][1], rtol=1e-5, atol=1e-7)


def test_embedding_bag_scales_each_index_by_its_own_count():
    # PyTorch 2.13 divides index 2's gradient here by 2 (another index's count); each index's own
    # count is the rule its documentation states, and what this library does
    weight = tm.ones(5, 1, requires_grad=True)
    bags = F.embedding_bag(tm.tensor([1, 2, 3, 0, 1]), weight, tm.tensor([0, 5]), mode="sum", scale_grad_by_freq=True)
    (grad,) = tm.autograd.grad(bags.sum(), [weight])
    assert grad.flatten().tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]


# PyTorch 2.13's node for each overload a call reaches (derivatives.yaml numbers an op's overloads)
OVERLOAD_NODES = {
    "L.xlogy(x, y)": "XlogyBackward0", "L.xlogy(2, y)": "XlogyBackward1", "L.xlogy(x, 2.0)": "XlogyBackward2",
    "x.clone().xlogy_(2)": "XlogyBackward2", "L.special.xlogy(x, 2.0)": "XlogyBackward2",
    "x.pow(2)": "PowBackward0", "x.pow(y)": "PowBackward1", "x ** y": "PowBackward1", "2.0 ** x": "PowBackward2",
    "L.pow(2.0, x)": "PowBackward2", "x.clone().pow_(y)": "PowBackward1", "L.float_power(x, y)": "PowBackward1",
    "L.float_power(2, y)": "PowBackward2", "L.float_power(x, 2)": "PowBackward0",
    "2 - x": "RsubBackward1", "L.rsub(x, 2.0)": "RsubBackward1", "L.rsub(x, y)": "RsubBackward0",
    "x - 2": "SubBackward0", "L.sub(x, y)": "SubBackward0",
    "x % y": "RemainderBackward1", "x % 2": "RemainderBackward0", "x.fmod(y)": "FmodBackward1",
    "x.fmod(2)": "FmodBackward0", "L.copysign(x, 2.0)": "CopysignBackward1", "L.copysign(x, y)": "CopysignBackward0",
    "L.lerp(x, y, 0.5)": "LerpBackward0", "L.lerp(x, y, y)": "LerpBackward1",
    "x.masked_fill(x > 0, 2.0)": "MaskedFillBackward0", "x.masked_fill(x > 0, L.tensor(2.0))": "MaskedFillBackward1",
    "x.index_fill(0, L.tensor([0]), 2.0)": "IndexFillBackward0",
    "x.index_fill(0, L.tensor([0]), L.tensor(2.0))": "IndexFillBackward1",
    "L.div(x, 2, rounding_mode='floor')": "DivBackward2", "L.div(x, y, rounding_mode='trunc')": "DivBackward2",
    "x / y": "DivBackward0", "x.true_divide(2)": "DivBackward0",
    "L.max(x, y)": "MaximumBackward0", "x.max()": "MaxBackward1", "x.max(0)[0]": "MaxBackward0",
    "L.min(x, y)": "MinimumBackward0", "x.min()": "MinBackward1",
    "x.clamp(0.0, 1.0)": "ClampBackward1", "x.clamp(y)": "ClampBackward0", "L.clip(x, 0.0, 1.0)": "ClampBackward1",
    "L.clamp_min(x, y)": "ClampMinBackward1", "L.clamp_max(x, 2.0)": "ClampMaxBackward0",
}


@pytest.mark.parametrize("expression", OVERLOAD_NODES)
def test_the_node_names_the_overload_a_call_reaches(expression):
    x, y = tm.full((3,), 1.5, requires_grad=True), tm.full((3,), 2.5, requires_grad=True)
    result = eval(expression, {"L": tm, "x": x, "y": y})  # noqa: S307 - the test's own cases
    assert type(result.grad_fn).__name__ == OVERLOAD_NODES[expression]


@pytest.mark.torch
def test_the_overload_node_table_is_pytorchs():
    import torch

    x, y = torch.full((3,), 1.5, requires_grad=True), torch.full((3,), 2.5, requires_grad=True)
    found = {e: type(eval(e, {"L": torch, "x": x, "y": y}).grad_fn).__name__  # noqa: S307 - the test's own cases
             for e in OVERLOAD_NODES}
    assert found == OVERLOAD_NODES
