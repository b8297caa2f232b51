"""More of nn.functional: activations, padding, embedding, normalisation and attention,
against PyTorch (values, dtypes, gradients, errors, warnings), finite differences and
exact values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

from .test_functional import assert_same_errors_and_warnings, assert_same_results

_X = [[-2.5, -0.5, 0.125], [0.25, 0.75, 30.0]]
_K = [[-3.0, 0.0, 3.0], [-1000.0, 1000.0, 1.5]]  # kinks and overflow
_V = (2 * np.cos(np.arange(24) * 1.3)).reshape(2, 3, 4).tolist()  # (N, C, L)
_W = [0.5, -1.5, 2.0]

# (expression with L = the library, F = its nn.functional; leaves requiring grad: x, k (2, 3),
# v (2, 3, 4), w (3,))
CASES = [
    "F.sigmoid(x)", "F.tanh(x)", "F.softmin(x, 1)", "F.softmin(x, dim=0, dtype=L.float32)", "F.softmin(v)",
    "F.threshold(x, 0.2, -4.0)", "F.threshold(k, 0.0, 7.0)", "F.threshold(L.tensor([1, 3]), 2, 5.5)",
    "F.hardswish(x)", "F.hardswish(k)", "F.hardsigmoid(x)", "F.hardsigmoid(k)", "F.mish(x)", "F.mish(k)",
    "F.selu(x)", "F.selu(k)", "F.celu(x)", "F.celu(k, alpha=0.5)", "F.celu(x, 2.0)",
    "F.prelu(x, w)", "F.prelu(k, w)", "F.prelu(v, w)", "F.prelu(x, w[:1])", "F.prelu(x[0], w[:1])",
    "F.prelu(v, w[0])",
    "F.pad(x, (1, 2))", "F.pad(x, [1, 0, 0, 2], value=-1.5)", "F.pad(v, (-1, 2, 0, 0, 1, 1))", "F.pad(x, (-3, 1))",
    "F.pad(x, (0, -3))", "F.pad(L.tensor([[1, 2]]), (1, 1), value=2.5)", "F.pad(x, (2, 2), mode='reflect')",
    "F.pad(v, (3, 1, 1, 2), mode='reflect')", "F.pad(v, (-1, 2), mode='reflect')",
    "F.pad(v[None], (1, 1, 1, 0, 0, 1), mode='reflect')", "F.pad(x, (1, 0), mode='reflect', value=0.0)",
    "F.pad(x, (4, 2), mode='replicate')", "F.pad(v, (1, 2, 2, 0), mode='replicate')",
    "F.pad(v, (-1, -1), mode='replicate')", "F.pad(v[None], (1, 1, 1, 1, 1, 1), mode='replicate')",
    "F.pad(x, (3, 2), mode='circular')", "F.pad(v, (1, 2, 3, 0), mode='circular')",
    "F.pad(v, (-1, 2), mode='circular')", "F.pad(v, (2, -1), mode='circular')",
    "F.pad(v, (-1, -2), mode='circular')", "F.pad(v, (-4, 0), mode='circular')",
    "F.pad(v[None], (0, 1, 1, 1, 2, 0), mode='circular')",
    "F.pad(L.zeros(0, 2, 3, dtype=L.float64), (1, 1), mode='reflect')",
    "F.embedding(L.tensor([[0, 2], [2, 1]]), v[0])", "F.embedding(L.tensor([1, 0, 1]), v[0], padding_idx=1)",
    "F.embedding(L.tensor([1, 0, 1]), v[0], padding_idx=-3)", "F.embedding(L.tensor([1, 2, 1], dtype=L.int32), x.T)",
    "F.embedding(L.tensor([[2, 1, 2, 2]]), v[0], scale_grad_by_freq=True)",
    "F.embedding(L.tensor([2, 0, 2]), v[0], padding_idx=0, scale_grad_by_freq=True)",
    "F.embedding(L.tensor([], dtype=L.int64), v[0])",
    "F.batch_norm(v, None, None, training=True)", "F.batch_norm(v, None, None, w, w * 2, True, eps=0.1)",
    "F.batch_norm(x, None, None, training=True)",
    "F.batch_norm(v, (w * 0.5).detach(), (w * w).detach(), w, None)",
    "F.batch_norm(v, (w * 0.5).detach(), (w * w).detach(), bias=w, eps=0.5)",
    "F.group_norm(v, 3)", "F.group_norm(v, 1, w, w + 1)", "F.group_norm(v.reshape(2, 6, 2), 2, eps=0.1)",
    "F.group_norm(x, 3)",
    "F.instance_norm(v)", "F.instance_norm(v, weight=w, bias=w * 3, eps=0.2)",
    "F.instance_norm(v, (w * 0.5).detach(), (w * w).detach(), use_input_stats=False)",
    "F.scaled_dot_product_attention(v, v, v)", "F.scaled_dot_product_attention(v, v.flip(1), v * 2)",
    "F.scaled_dot_product_attention(v, v, v, is_causal=True)",
    "F.scaled_dot_product_attention(v, v[:, :2], v[:, :2], is_causal=True)",
    "F.scaled_dot_product_attention(v[:, :2], v, v, is_causal=True)",
    "F.scaled_dot_product_attention(v, v, v, scale=0.3)",
    "F.scaled_dot_product_attention(v, v, v, L.tensor([[True, False, True], [False, False, False], [True] * 3]))",
    "F.scaled_dot_product_attention(v, v, v, attn_mask=x.T @ x)",
    "F.scaled_dot_product_attention(v, v, v, attn_mask=L.tensor([[0.0, -float('inf'), 1.0]] * 3, dtype=L.float64))",
    "F.scaled_dot_product_attention(v.reshape(1, 2, 3, 4), v[:1, None], v[:1, None], enable_gqa=True)",
    "F.scaled_dot_product_attention(v.reshape(1, 2, 3, 4).expand(2, 2, 3, 4), v.reshape(2, 1, 3, 4), "
    "v.reshape(2, 1, 3, 4), enable_gqa=True)",
    "F.scaled_dot_product_attention(x, x, x)", "F.scaled_dot_product_attention(v, v, v, L.zeros(3, 3))",
    "F.scaled_dot_product_attention(v.reshape(1, 2, 3, 4).repeat(1, 2, 1, 1), v.reshape(1, 2, 3, 4), v[:1, None], "
    "enable_gqa=True)",
    "F.margin_ranking_loss(x, k, S)", "F.margin_ranking_loss(x[0], w, S[0], margin=0.5, reduction='sum')",
    "F.margin_ranking_loss(x, x + 0.5, S, margin=0.5, reduction='none')",
    "F.margin_ranking_loss(x, k, S, size_average=False)",
    "F.hinge_embedding_loss(x, S)", "F.hinge_embedding_loss(x, S * 0.5, margin=2.0, reduction='none')",
    "F.hinge_embedding_loss(k, S, margin=1.0, reduction='sum')",
    "F.hinge_embedding_loss(x, L.tensor([1.0, -1.0, 1.0]))",
    "F.soft_margin_loss(x, S)", "F.soft_margin_loss(x * 20, S, reduction='none')", "F.soft_margin_loss(x, S[0])",
    "F.cosine_embedding_loss(x, v[0, :2, :3], S[:, 0])",
    "F.cosine_embedding_loss(x, k, S[:, 1], 0.25, reduction='none')",
    "F.cosine_embedding_loss(x[0], w, L.tensor(-1.0))", "F.cosine_embedding_loss(x * 0, w[None], S[:1, 0])",
    "F.cosine_embedding_loss(x, v[1, 1:, 1:], S[:, 0], reduction='elementwise_mean')",
    "F.poisson_nll_loss(x * 0.1, v[0, :2, :3].abs())",
    "F.poisson_nll_loss(x.abs(), w, log_input=False, reduction='sum')",
    "F.poisson_nll_loss(x, L.tensor([[0.0, 1.0, 2.0], [3.0, 0.5, 7.0]]), full=True, reduction='none')",
    "F.poisson_nll_loss(x, v[0, :2, :3].abs() * 3, full=True, log_input=False, eps=0.5)",
    "F.poisson_nll_loss(x * 0.1, w.abs(), reduce=False)",
    "F.gaussian_nll_loss(x, k, v[0, :2, :3].abs())", "F.gaussian_nll_loss(x, k, x[:, :1].abs(), full=True)",
    "F.gaussian_nll_loss(x, k, v[0, :2, :3] ** 2 * 1e-7, eps=1e-6, reduction='none')",
    "F.gaussian_nll_loss(x, k, 0.5)", "F.gaussian_nll_loss(v, v * 0, v[:, :1].abs())",
    "F.gaussian_nll_loss(v, v * 0, v[:, :, 0].abs(), reduction='sum')",
    "F.triplet_margin_loss(x, k * 0.001, v[0, :2, :3])", "F.triplet_margin_loss(x, k * 0.001, v[0, :2, :3], swap=True)",
    "F.triplet_margin_loss(x, x * 2, v[0, :2, :3], margin=0.5, p=1, eps=0.0, swap=True, reduction='none')",
    "F.triplet_margin_loss(x[0], w, x[1], reduce=False)", "F.triplet_margin_loss(x, x, x + 1, margin=2.0)",
]

ERROR_CASES = [
    "F.celu(x, alpha=0.0)", "F.hardswish(L.tensor([1, 2]))", "F.hardsigmoid(L.tensor([1, 2]))",
    "F.mish(L.tensor([1, 2]))", "F.selu(L.tensor([1, 2]))", "F.celu(L.tensor([True]))",
    "F.prelu(v, w[:2])", "F.prelu(x, w.reshape(3, 1))", "F.prelu(L.tensor(1.0, dtype=L.float64), w)",
    "F.prelu(x[0], w)", "F.prelu(x, w.float())", "F.prelu(x.float(), w)", "F.prelu(x.long(), w.long())",
    "F.softmin(x.long(), 0)",
    "F.pad(x, (1,))", "F.pad(x, (1, 1, 1, 1, 1, 1))", "F.pad(x, 1)", "F.pad(x, [1.5, 1])", "F.pad(x, (-2, -2))",
    "F.pad(x, (-4, 2))", "F.pad(x, (1, 1), mode='wrap')", "F.pad(x, (1, 1), mode='reflect', value=2.0)",
    "F.pad(x, (3, 3), mode='reflect')", "F.pad(v, (1, 1, 3, 3), mode='reflect')",
    "F.pad(v[None], (1, 1, 1, 1, 1, 1), mode='reflect')", "F.pad(v, (1, 1, 1, 1, 1, 1), mode='reflect')",
    "F.pad(x[0], (1, 1), mode='replicate')", "F.pad(v[None, None], (1, 1), mode='circular')",
    "F.pad(v, (5, 1), mode='circular')", "F.pad(v, (1, 1, 1, 4), mode='circular')",
    "F.pad(v, (-5, 0), mode='circular')", "F.group_norm(v, 3, w, w[:2])",
    "F.pad(L.zeros(2, 0, 3), (1, 1), mode='reflect')", "F.pad(L.zeros(2, 3, 0, 2), (1, 1, 0, 0), mode='replicate')",
    "F.embedding(L.tensor([1.0]), v[0])", "F.embedding(L.tensor([1], dtype=L.int16), v[0])",
    "F.embedding(L.tensor([3]), v[0])", "F.embedding(L.tensor([-1]), v[0])",
    "F.embedding(L.tensor([1]), v[0], padding_idx=3)", "F.embedding(L.tensor([1]), v[0], padding_idx=-4)",
    "F.embedding(L.tensor([1]), w)",
    "F.batch_norm(v[:1, :, :1], None, None, training=True)", "F.batch_norm(v, L.zeros(4), L.ones(3))",
    "F.batch_norm(v, L.zeros(3), L.ones(4))", "F.batch_norm(v, None, None)", "F.batch_norm(v, L.zeros(3), None)",
    "F.batch_norm(v, L.zeros(3), None, training=True)", "F.batch_norm(v, None, L.ones(3), training=True)",
    "F.group_norm(v, 2)", "F.group_norm(x[:1], 3)", "F.group_norm(v, 3, w[:2])", "F.group_norm(v, 3, None, w[:2])",
    "F.group_norm(x[0], 1)", "F.instance_norm(v[:, :, :1])", "F.instance_norm(v[0])",
    "F.instance_norm(v, use_input_stats=False)", "F.instance_norm(v, L.zeros(3), None, use_input_stats=False)",
    "F.instance_norm(v, L.zeros(2), L.ones(2))",
    "F.instance_norm(v, weight=w[:2])", "F.instance_norm(v, bias=w[:2])",
    "F.batch_norm(v, None, None, w[:2], training=True)",
    "F.batch_norm(v, None, None, bias=w[:1], training=True)", "F.batch_norm(v[0, 0], None, None, training=True)",
    "F.batch_norm(v, L.zeros(2), None, training=True)", "F.instance_norm(v.float(), L.zeros(3), None)",
    "F.batch_norm(v, m.float(), m.float(), training=True)", "F.batch_norm(v.float(), m, m, training=True)",
    "F.batch_norm(v, None, None, w.float(), training=True)", "F.batch_norm(v.float(), None, None, None, w)",
    "F.instance_norm(v, None, None, w.float())", "F.instance_norm(v.float(), None, None, w)",
    "F.group_norm(v, 3, w.float())", "F.group_norm(v.float(), 3, None, w)",
    "F.scaled_dot_product_attention(v, v, v, L.ones(3, 3, dtype=L.bool), is_causal=True)",
    "F.scaled_dot_product_attention(v, v, v.float())", "F.scaled_dot_product_attention(x[0], x[0], x[0])",
    "F.scaled_dot_product_attention(v, v, v, L.zeros(3, 3, dtype=L.int64))",
    "F.scaled_dot_product_attention(v.float(), v.float(), v.float(), L.zeros(3, 3, dtype=L.float64))",
    "F.scaled_dot_product_attention(v[:1, None].expand(1, 3, 3, 4), v[:1, None], v[:1, None].expand(1, 2, 3, 4), "
    "enable_gqa=True)",
    "F.scaled_dot_product_attention(x, x, x, enable_gqa=True)",
    "F.scaled_dot_product_attention(*[L.ones(2, 3, dtype=L.int64)] * 3)",
    "F.margin_ranking_loss(x, k, S[0])", "F.margin_ranking_loss(x, k, S, reduction='x')",
    "F.hinge_embedding_loss(x, S[:, 0])", "F.hinge_embedding_loss(x, S, reduction='avg')",
    "F.soft_margin_loss(x, S[:, 0])",
    "F.cosine_embedding_loss(x, k, S)", "F.cosine_embedding_loss(x, w, S[:, 0])", "F.cosine_embedding_loss(w, w, S[0])",
    "F.cosine_embedding_loss(x, k, L.tensor(1.0))", "F.cosine_embedding_loss(v, v, S[:, 0])",
    "F.cosine_embedding_loss(x, x, S[:, 0], reduction='x')", "F.poisson_nll_loss(x, k, reduction='x')",
    "F.gaussian_nll_loss(x, k, -w)", "F.gaussian_nll_loss(x, k, w.abs())", "F.gaussian_nll_loss(x, k, -1.0)",
    "F.gaussian_nll_loss(x, k, x[:, :2].abs())",
    "F.gaussian_nll_loss(x, k, w.abs(), reduction='x')", "F.gaussian_nll_loss(v, v, v[:1, :1].abs())",
    "F.triplet_margin_loss(x, w, x)", "F.triplet_margin_loss(x, x, x, margin=0)",
    "F.triplet_margin_loss(x, x, x, reduction='x', margin=0)",
]

WARNING_CASES = ["F.softmin(x)", "F.softmin(v, dtype=L.float32)",
                 "F.hinge_embedding_loss(x, S, reduction='elementwise_mean')",
                 "F.soft_margin_loss(x, S, size_average=True, reduce=False)",
                 "F.poisson_nll_loss(x, k, size_average=False)"]


_SIGNS = [[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]]


def _leaves(library):
    return [library.tensor(values, dtype=library.float64, requires_grad=True) for values in (_X, _K, _V, _W)]


def _run(library, functional, expression):
    x, k, v, w = leaves = _leaves(library)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = eval(expression, {"L": library, "F": functional, "x": x, "k": k, "v": v, "w": w,
                                   "S": library.tensor(_SIGNS, dtype=library.float64), "m": w.detach()})
    gradients = []
    if result.requires_grad:
        seed = library.tensor(np.linspace(-1.0, 2.0, result.numel()).reshape(tuple(result.shape)), dtype=result.dtype)
        gradients = library.autograd.grad(result, leaves, seed, allow_unused=True)
    return result, gradients, [str(w.message) for w in caught]


def _same(ours, theirs, rtol):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_results(_run, expression)


@pytest.mark.torch
@pytest.mark.parametrize("expression", ERROR_CASES + WARNING_CASES)
def test_errors_and_warnings_match_torch(expression):
    assert_same_errors_and_warnings(_run, expression)


STATEFUL_CASES = [  # (expression, names of the leaves or buffers changed in place)
    "F.batch_norm(v, m, s, w, w, training=True)", "F.batch_norm(v, m, s, training=True, momentum=0.3)",
    "F.batch_norm(v.float(), m.float(), s.float(), training=True)", "F.batch_norm(x, m, s, training=True)",
    "F.batch_norm(v, m, s, momentum=0.5)", "F.instance_norm(v, m, s, momentum=0.5)",
    "F.embedding(L.tensor([[0, 2], [2, 2]]), e, max_norm=1.0)",
    "F.embedding(L.tensor([1, 0]), e, max_norm=0.5, norm_type=1.0)",
    "F.embedding(L.tensor([1, 0]), e.float(), max_norm=0.5, norm_type=1.0)",
    "F.embedding(L.tensor([2, 1, 2]), e, padding_idx=2, max_norm=1.5)",
    "F.threshold(x * 1, 0.2, -4.0, inplace=True)", "F.hardswish(k * 1, inplace=True)",
    "F.hardsigmoid(k * 1, True)", "F.mish(x * 1, inplace=True)", "F.selu(k * 1, inplace=True)",
    "F.celu(k * 1, 0.5, True)",
]


def _run_stateful(library, functional, expression):
    x, k, v, w = leaves = _leaves(library)
    buffers = {"m": library.tensor([0.5, -1.0, 2.0], dtype=library.float64),
               "s": library.tensor([1.0, 0.25, 3.0], dtype=library.float64)}
    e = library.tensor(_V[1], dtype=library.float64, requires_grad=True)
    names = {"L": library, "F": functional, "x": x, "k": k, "v": v, "w": w, "e": e, **buffers}
    result = eval(expression, names)
    seed = library.tensor(np.linspace(-1.0, 2.0, result.numel()).reshape(tuple(result.shape)), dtype=result.dtype)
    gradients = library.autograd.grad(result, [*leaves, e], seed, allow_unused=True)
    return [result, *buffers.values(), e.detach()], gradients


@pytest.mark.torch
@pytest.mark.parametrize("expression", STATEFUL_CASES)
def test_in_place_updates_match_torch(expression):
    import torch
    import torch.nn.functional as torch_functional

    ours, our_grads = _run_stateful(tm, F, expression)
    theirs, their_grads = _run_stateful(torch, torch_functional, expression)
    rtol = 1e-6 if "float()" in expression else 1e-9
    for mine, reference in zip(ours, theirs):  # the result, the running statistics, the embedding weight
        assert str(mine.dtype).split(".")[-1] == str(reference.dtype).split(".")[-1]
        _same(mine, reference, rtol)
    for mine, reference in zip(our_grads, their_grads):
        if reference is None:
            assert mine is None or not np.any(mine.numpy())
        else:
            _same(mine, reference, rtol)


# Finite differences in float64, away from kinks (hardswish's and hardsigmoid's bounds, threshold).
# (Nor the embedding's padding row and frequency scaling, whose gradients are by design not derivatives.)
_NOT_FOR_FINITE_DIFFERENCES = ("(k", ", k", "L.zeros", "float32", "detach", "padding_idx", "scale_grad_by_freq",
                               "L.tensor([1, 3])", "L.tensor([[1, 2]])")
GRADCHECK_CASES = [c for c in CASES if not any(part in c for part in _NOT_FOR_FINITE_DIFFERENCES)]


@pytest.mark.parametrize("expression", GRADCHECK_CASES)
def test_gradients_match_finite_differences(expression):
    def function(*values):
        x, k, v, w = values
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(expression, {"L": tm, "F": F, "x": x, "k": k, "v": v, "w": w,
                                     "S": tm.tensor(_SIGNS, dtype=tm.float64)})

    assert tm.autograd.gradcheck(function, tuple(_leaves(tm)), eps=1e-7, atol=1e-5)


def _gradient(function, values):
    x = tm.tensor(values, dtype=tm.float64, requires_grad=True)
    function(x).sum().backward()
    return x.grad.tolist()


def test_values_and_gradients_at_kinks():
    assert F.hardswish(tm.tensor([-4.0, -3.0, 0.0, 3.0, 4.0])).tolist() == [0.0, 0.0, 0.0, 3.0, 4.0]
    assert _gradient(F.hardswish, [-3.0, 0.0, 3.0]) == [0.0, 0.5, 1.0]
    assert _gradient(F.hardsigmoid, [-3.0, 0.0, 3.0]) == [0.0, 0.16666667163372040, 0.0]
    assert _gradient(lambda x: F.threshold(x, 1.0, 5.0), [1.0, 1.5]) == [0.0, 1.0]
    assert _gradient(lambda x: F.prelu(x, tm.tensor([0.25], dtype=tm.float64)), [-1.0, 0.0, 2.0]) == [0.25, 0.25, 1.0]
    # No overflow in an unused branch: finite values and gradients far out.
    assert F.mish(tm.tensor([1000.0, -1000.0])).tolist() == [1000.0, -0.0]
    assert _gradient(F.mish, [1000.0, -1000.0]) == [1.0, 0.0]
    assert _gradient(F.selu, [1000.0])[0] == pytest.approx(1.0507009873554805)
    assert _gradient(lambda x: F.celu(x, 0.1), [1000.0, 0.0]) == [1.0, 1.0]
    assert F.threshold(tm.tensor([1, 3]), 2, 5.5).tolist() == [5, 3]  # keeps int64


def test_padding_values():
    row = tm.tensor([[1.0, 2.0, 3.0]])
    assert F.pad(row, (2, 2), mode="reflect").tolist() == [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    assert F.pad(row, (2, 1), mode="replicate").tolist() == [[1.0, 1.0, 1.0, 2.0, 3.0, 3.0]]
    assert F.pad(row, (2, 1), mode="circular").tolist() == [[2.0, 3.0, 1.0, 2.0, 3.0, 1.0]]
    assert F.pad(row, (-1, 1), value=9.0).tolist() == [[2.0, 3.0, 9.0]]
    assert F.pad(tm.ones(2, 3), (1, 1, 1, 0)).shape == (3, 5)
    x = tm.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    F.pad(x, (2, 2), mode="reflect").sum().backward()  # each source gets every copy's gradient
    assert x.grad.tolist() == [[2.0, 3.0, 2.0]]


def test_embedding_padding_row_and_renormalisation():
    weight = tm.tensor([[3.0, 4.0], [0.3, 0.4], [1.0, 0.0]], requires_grad=True)
    result = F.embedding(tm.tensor([0, 1, 1, 2]), weight, padding_idx=2, max_norm=1.0)
    np.testing.assert_allclose(weight.detach().numpy()[0], [0.6, 0.8], rtol=1e-6)  # renormalised in place
    assert weight.detach().tolist()[1:] == [[0.30000001192092896, 0.4000000059604645], [1.0, 0.0]]
    result.sum().backward()
    assert weight.grad.tolist() == [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]


def test_batch_norm_updates_running_statistics_in_place():
    mean, var = tm.zeros(2, dtype=tm.float64), tm.ones(2, dtype=tm.float64)
    batch = tm.tensor([[1.0, 0.0], [3.0, 0.0]], dtype=tm.float64)
    F.batch_norm(batch, mean, var, training=True, momentum=0.5)
    assert mean.tolist() == [1.0, 0.0] and var.tolist() == [1.5, 0.5]  # unbiased variance 2 and 0
    assert F.batch_norm(batch, mean, var, eps=0.0).tolist()[0][0] == 0.0


def test_attention_with_nothing_to_attend_to_gives_zeros():
    q = tm.ones(1, 2, 2, requires_grad=True)
    mask = tm.tensor([[True, True], [False, False]])
    result = F.scaled_dot_product_attention(q, q, q, mask)
    assert result.tolist() == [[[1.0, 1.0], [0.0, 0.0]]]
    result.sum().backward()
    assert not q.grad.isnan().any()


def test_sigmoid_and_tanh_are_outside_the_protocol():
    import doctest

    from tensormodes.overrides import TorchFunctionMode, get_ignored_functions

    seen = []

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = tm.zeros(1)
    with Recorder():
        F.sigmoid(x)
        F.tanh(x)
        F.softmin(x, 0)
    assert seen == ["sigmoid", "tanh", "softmin"]
    assert {F.sigmoid, F.tanh} <= get_ignored_functions()
    for function in (F.sigmoid, F.tanh):  # test_docs runs only overridable callables' examples
        runner = doctest.DocTestRunner()
        for test in doctest.DocTestFinder(recurse=False).find(function, function.__name__, globs={"tm": tm}):
            assert runner.run(test).failed == 0


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "F.batch_norm(L.tensor(v).bfloat16(), None, None, L.tensor(w).float(), training=True)",
    "F.batch_norm(L.tensor(v).bfloat16(), L.tensor(w).float(), L.tensor(w).float().abs())",
    "F.group_norm(L.tensor(v).bfloat16(), 3, L.tensor(w).float())",
    "F.instance_norm(L.tensor(v).half(), None, None, L.tensor(w).float())",
])
def test_half_precision_normalisation_matches_torch(expression):
    """Statistics of float16 / bfloat16 inputs are computed in float32, as PyTorch's CPU kernels do."""
    import torch
    import torch.nn.functional as torch_functional

    ours = eval(expression, {"F": F, "L": tm, "v": _V, "w": _W})
    theirs = eval(expression, {"F": torch_functional, "L": torch, "v": _V, "w": _W})
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.float().tolist() == theirs.float().tolist()


def test_attention_dropout():
    q = tm.ones(2, 3, 4, dtype=tm.float64)
    assert not F.scaled_dot_product_attention(q, q, q, dropout_p=1.0).any()
    kept = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)  # kept weights are scaled by 2
    assert set(np.unique(kept.numpy()).tolist()) <= {0.0, 2 / 3, 4 / 3, 2.0}


def test_unsupported_arguments_are_named():
    with pytest.raises(NotImplementedError, match="sparse=True"):
        F.embedding(tm.tensor([1]), tm.ones(3, 2), sparse=True)


def test_a_pass_through_mode_sees_each_function_once():
    from tensormodes.overrides import TorchFunctionMode, resolve_name

    seen = []

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((resolve_name(func), sorted(kwargs or {})))
            return func(*args, **(kwargs or {}))

    x, mean, var = tm.ones(2, 3, 4), tm.zeros(3), tm.ones(3)
    with Recorder():
        F.pad(x, (1, 1), mode="reflect")
        F.batch_norm(x, mean, var, training=True)
        F.scaled_dot_product_attention(x, x, x, scale=0.5)
    assert seen == [  # Python-level functions pass their optional arguments as keywords, native ones only those given
        ("tensormodes.nn.functional.pad", ["mode", "value"]),
        ("tensormodes.nn.functional.batch_norm", ["bias", "eps", "momentum", "training", "weight"]),
        ("tensormodes.nn.functional.scaled_dot_product_attention", ["scale"]),
    ]
