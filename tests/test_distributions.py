"""tensormodes.distributions: values, random streams, gradients and errors, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes import distributions as D


def test_literal_values():
    n = D.Normal(tm.tensor([0.0, 1.0]), tm.tensor([1.0, 2.0]))
    assert n.mean.tolist() == [0.0, 1.0] and n.variance.tolist() == [1.0, 4.0] and n.stddev.tolist() == [1.0, 2.0]
    np.testing.assert_allclose(n.log_prob(tm.tensor([0.0, 1.0])).numpy(), [-0.9189385, -1.6120857], rtol=1e-6)
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 0.5
    b = D.Bernoulli(logits=tm.tensor([0.0]))
    assert b.probs.tolist() == [0.5] and b.enumerate_support().tolist() == [[0.0], [1.0]]
    c = D.Categorical(logits=tm.log(tm.tensor([1.0, 1.0, 2.0])))
    np.testing.assert_allclose(c.probs.numpy(), [0.25, 0.25, 0.5], rtol=1e-6)
    assert c.mode.item() == 2 and c.batch_shape == () and c.event_shape == ()
    assert D.Uniform(0.0, 2.0, validate_args=False).log_prob(tm.tensor(3.0)).item() == float("-inf")


def test_validation_errors():
    with pytest.raises(ValueError) as error:
        D.Normal(tm.zeros(2), tm.tensor([1.0, 0.0]))
    assert str(error.value) == (
        "Expected parameter scale (Tensor of shape (2,)) of distribution Normal(loc: tensormodes.Size([2]), scale: "
        "tensormodes.Size([2])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:\n"
        "tensor([1., 0.])")
    with pytest.raises(ValueError, match="^Either `probs` or `logits` must be specified, but not both.$"):
        D.Bernoulli()
    with pytest.raises(ValueError, match=r"^Expected value argument \(Tensor of shape \(1,\)\) to be within the "
                                         r"support \(Boolean\(\)\) of the distribution Bernoulli\(probs: 0.5\)"):
        D.Bernoulli(0.5).log_prob(tm.tensor([0.5]))
    with pytest.raises(ValueError, match="^The value argument to log_prob must be a Tensor$"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match=r"^The right-most size of value must match event_shape: "):
        D.MultivariateNormal(tm.zeros(2), tm.eye(2)).log_prob(tm.zeros(3))
    with pytest.raises(ValueError, match="^Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                         "specified.$"):
        D.MultivariateNormal(tm.zeros(2))
    with pytest.raises(NotImplementedError, match="^No KL\\(p \\|\\| q\\) is implemented for p type Normal and q "
                                                  "type Categorical$"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(tm.tensor([0.5, 0.5])))
    with pytest.raises(NotImplementedError, match="^The cross KL-divergence between different exponential families "):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))  # both exponential families, as in PyTorch
    with pytest.raises(NotImplementedError, match="gradient of gamma samples with respect to the concentration"):
        D.Gamma(tm.tensor([2.0], requires_grad=True), tm.tensor([1.0])).rsample()


def test_rsample_gradients_and_gamma_moments():
    loc, scale = tm.tensor([1.0], requires_grad=True), tm.tensor([2.0], requires_grad=True)
    tm.manual_seed(3)
    x = D.Normal(loc, scale).rsample((4,))
    x.sum().backward()
    assert loc.grad.tolist() == [4.0]
    tm.manual_seed(3)
    eps = tm.randn(4, 1)
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-6)
    tm.manual_seed(0)
    draws = D.Gamma(tm.tensor([0.5, 3.0]), tm.tensor([1.0, 2.0])).sample((20000,))
    np.testing.assert_allclose(draws.mean(0).numpy(), [0.5, 1.5], rtol=0.05)
    np.testing.assert_allclose(draws.var(0).numpy(), [0.5, 0.75], rtol=0.1)
    tm.manual_seed(0)
    beta = D.Beta(tm.tensor([2.0]), tm.tensor([6.0])).sample((20000,))
    np.testing.assert_allclose(beta.mean().item(), 0.25, rtol=0.05)


def _pairs(L):
    """(name, distribution) for the same parameters in library L."""
    t = L.tensor
    return [
        ("normal", L.distributions.Normal(t([0.5, -1.0]), t([1.5, 0.3]))),
        ("uniform", L.distributions.Uniform(t([0.0, -2.0]), t([1.0, 3.0]))),
        ("bernoulli", L.distributions.Bernoulli(probs=t([0.2, 0.9]))),
        ("bernoulli_logits", L.distributions.Bernoulli(logits=t([0.2, -3.0]))),
        ("categorical", L.distributions.Categorical(probs=t([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))),
        ("categorical_logits", L.distributions.Categorical(logits=t([[0.1, 2.0, -1.0]]))),
        ("mvn", L.distributions.MultivariateNormal(t([1.0, -1.0]), covariance_matrix=t([[2.0, 0.5], [0.5, 1.0]]))),
        ("mvn_tril", L.distributions.MultivariateNormal(t([[0.0, 1.0]]), scale_tril=t([[1.0, 0.0], [0.3, 0.5]]))),
        ("mvn_precision", L.distributions.MultivariateNormal(t([0.0, 0.0]),
                                                             precision_matrix=t([[2.0, 0.3], [0.3, 1.0]]))),
        ("gamma", L.distributions.Gamma(t([0.5, 3.0]), t([2.0, 0.5]))),
        ("beta", L.distributions.Beta(t([0.5, 3.0]), t([2.0, 1.5]))),
        ("independent", L.distributions.Independent(L.distributions.Normal(t([[0.5, -1.0]]), t([[1.5, 0.3]])), 1)),
    ]


_VALUES = {"normal": [0.3, 2.0], "uniform": [0.5, 2.9], "bernoulli": [1.0, 0.0], "bernoulli_logits": [0.0, 1.0],
           "categorical": [2, 0], "categorical_logits": [1], "mvn": [0.5, 0.0], "mvn_tril": [[1.0, 0.5]],
           "mvn_precision": [0.2, -0.4], "gamma": [0.3, 4.0], "beta": [0.2, 0.7],
           "independent": [[0.3, 2.0]]}


@pytest.mark.torch
@pytest.mark.parametrize("index", range(12))
def test_same_as_pytorch(index):
    import torch

    (name, ours), (_, theirs) = _pairs(tm)[index], _pairs(torch)[index]
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert repr(ours).replace("tensormodes", "torch") == repr(theirs)
    value = _VALUES[name]
    for attribute in ("mean", "variance", "entropy", "log_prob", "mode", "stddev"):
        try:
            expected = getattr(theirs, attribute)
            if attribute == "log_prob":
                expected = expected(torch.tensor(value))
            elif attribute == "entropy":
                expected = expected()
        except NotImplementedError:
            continue
        got = getattr(ours, attribute)
        got = got(tm.tensor(value)) if attribute == "log_prob" else got() if attribute == "entropy" else got
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=2e-5, atol=1e-6,
                                   err_msg=f"{name}.{attribute}")
    if name not in ("gamma", "beta"):  # PyTorch's gamma sampler is its own (see gamma.py)
        tm.manual_seed(7)
        torch.manual_seed(7)
        ours_sample, theirs_sample = ours.sample((3,)), theirs.sample((3,))
        assert ours_sample.dtype.is_floating_point == theirs_sample.dtype.is_floating_point
        np.testing.assert_allclose(ours_sample.numpy(), theirs_sample.numpy(), rtol=1e-5, atol=1e-6)
        if ours.has_rsample:
            tm.manual_seed(8)
            torch.manual_seed(8)
            np.testing.assert_allclose(ours.rsample((2,)).detach().numpy(), theirs.rsample((2,)).detach().numpy(),
                                       rtol=1e-5, atol=1e-6)
    expanded, texpanded = ours.expand((3, *ours.batch_shape)), theirs.expand((3, *theirs.batch_shape))
    assert tuple(expanded.batch_shape) == tuple(texpanded.batch_shape)
    np.testing.assert_allclose(expanded.log_prob(tm.tensor(value)).detach().numpy(),
                               texpanded.log_prob(torch.tensor(value)).detach().numpy(), rtol=2e-5, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("first, second", [(0, 0), (1, 1), (2, 2), (4, 4), (6, 8), (9, 9), (10, 10), (1, 0), (0, 1),
                                           (11, 11)])
def test_kl_as_pytorch(first, second):
    import torch

    ours = D.kl_divergence(_pairs(tm)[first][1], _pairs(tm)[second][1].expand(_pairs(tm)[first][1].batch_shape))
    theirs = torch.distributions.kl_divergence(_pairs(torch)[first][1],
                                               _pairs(torch)[second][1].expand(_pairs(torch)[first][1].batch_shape))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-5, atol=1e-6)


@pytest.mark.torch
def test_validation_messages_as_pytorch():
    import torch

    for make in (lambda L: L.distributions.Normal(L.zeros(2), L.tensor([1.0, 0.0])),
                 lambda L: L.distributions.Categorical(probs=L.tensor([0.5, -0.5])),
                 lambda L: L.distributions.Uniform(L.tensor([1.0]), L.tensor([0.0])),
                 lambda L: L.distributions.Bernoulli(0.5).log_prob(L.tensor([2.0])),
                 lambda L: L.distributions.Normal(L.zeros(2), 1.0).log_prob(L.zeros(3)),
                 lambda L: L.distributions.Gamma(L.tensor([1.0]), L.tensor([-1.0]))):
        with pytest.raises(ValueError) as ours:
            make(tm)
        with pytest.raises(ValueError) as theirs:
            make(torch)
        assert str(ours.value).replace("tensormodes", "torch") == str(theirs.value)
