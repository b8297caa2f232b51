"""The distributions beyond the first nine (Exponential, Laplace, Cauchy, Geometric, Poisson ...):
values, random streams, gradients and errors, against PyTorch and literals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensormodes as tm
from tensormodes import distributions as D

# name -> (builder of the distribution in library L, a value in its support, probabilities for icdf)
_CASES = {
    "exponential": (lambda L: L.distributions.Exponential(L.tensor([0.5, 3.0, 1e-3])), [0.3, 2.0, 0.0],
                    [0.1, 0.5, 0.99]),
    "exponential_scalar": (lambda L: L.distributions.Exponential(2.0), 1.5, 0.25),
    "laplace": (lambda L: L.distributions.Laplace(L.tensor([0.5, -1.0]), L.tensor([1.5, 0.3])), [0.3, -2.0],
                [0.1, 0.75]),
    "laplace_scalar": (lambda L: L.distributions.Laplace(1.0, 2.0), 0.0, 0.5),
    "cauchy": (lambda L: L.distributions.Cauchy(L.tensor([[0.5], [-1.0]]), L.tensor([1.5, 0.3])),
               [[0.3, 2.0], [-1.0, 5.0]], [[0.2, 0.6], [0.5, 0.9]]),
    "geometric": (lambda L: L.distributions.Geometric(L.tensor([0.2, 0.9, 1.0])), [0.0, 3.0, 0.0], None),
    "geometric_logits": (lambda L: L.distributions.Geometric(logits=L.tensor([0.2, -3.0])), [1.0, 4.0], None),
    "poisson": (lambda L: L.distributions.Poisson(L.tensor([0.5, 4.0, 30.0, 0.0])), [0.0, 3.0, 25.0, 0.0], None),
    "exponential_f64": (lambda L: L.distributions.Exponential(L.tensor([0.5, 3.0], dtype=L.float64)), [0.3, 2.0],
                        [0.1, 0.5]),
    "lognormal": (lambda L: L.distributions.LogNormal(L.tensor([0.5, -1.0]), L.tensor([1.5, 0.3])), [0.3, 2.0],
                  [0.1, 0.75]),
    "lognormal_scalar": (lambda L: L.distributions.LogNormal(0.0, 1.0), 1.0, 0.5),
    "halfnormal": (lambda L: L.distributions.HalfNormal(L.tensor([1.5, 0.3])), [0.3, 0.0], [0.1, 0.75]),
    "halfcauchy": (lambda L: L.distributions.HalfCauchy(L.tensor([[1.5], [0.3]])), [[0.3, 2.0]], [[0.1, 0.75]]),
    "gumbel": (lambda L: L.distributions.Gumbel(L.tensor([0.5, -1.0]), L.tensor([1.5, 0.3])), [0.3, 2.0], None),
    "gumbel_scalar": (lambda L: L.distributions.Gumbel(1.0, 2.0), -3.0, None),
    "transformed_sigmoid": (lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(L.tensor([0.5, -1.0]), L.tensor([1.5, 0.3])),
        [L.distributions.transforms.AffineTransform(1.0, L.tensor([2.0, -0.5])),
         L.distributions.transforms.SigmoidTransform()]), [0.3, 0.9], [0.2, 0.6]),
    "transformed_tanh": (lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(L.zeros(3), 1.0), L.distributions.transforms.TanhTransform()), [0.3, -0.99, 0.0],
        [0.2, 0.6, 0.5]),
    "transformed_vector": (lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(L.zeros(2, 3), 1.0),
        [L.distributions.transforms.AffineTransform(L.tensor([1.0, 2.0, 3.0]), 2.0, event_dim=1),
         L.distributions.transforms.ExpTransform()]), [[1.0, 2.0, 3.0], [0.5, 0.5, 9.0]], None),
    "onehot": (lambda L: L.distributions.OneHotCategorical(L.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])),
               [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], None),
    "onehot_logits": (lambda L: L.distributions.OneHotCategorical(logits=L.tensor([0.1, 2.0, -1.0])),
                      [0.0, 1.0, 0.0], None),
    "onehot_straight_through": (lambda L: L.distributions.OneHotCategoricalStraightThrough(
        L.tensor([0.1, 0.2, 0.7])), [0.0, 1.0, 0.0], None),
    "chi2": (lambda L: L.distributions.Chi2(L.tensor([0.5, 3.0, 10.0])), [0.3, 2.0, 12.0], None),
    "chi2_scalar": (lambda L: L.distributions.Chi2(4.0), 2.5, None),
    "studentt": (lambda L: L.distributions.StudentT(L.tensor([0.5, 1.5, 3.0, 30.0]), L.tensor([0.5, -1.0, 0.0, 2.0]),
                                                    L.tensor([1.5, 0.3, 1.0, 2.0])), [0.3, 2.0, -4.0, 2.0], None),
    "studentt_scalar": (lambda L: L.distributions.StudentT(4.0), 0.5, None),
    "binomial": (lambda L: L.distributions.Binomial(L.tensor([5.0, 20.0, 100.0, 3.0]), L.tensor([0.3, 0.6, 0.5, 1.0])),
                 [2.0, 12.0, 50.0, 3.0], None),
    "binomial_logits": (lambda L: L.distributions.Binomial(10, logits=L.tensor([[0.2], [-3.0]])),
                        [[4.0, 0.0], [10.0, 1.0]], None),
    "multinomial": (lambda L: L.distributions.Multinomial(6, L.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])),
                    [[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]], None),
    "multinomial_logits": (lambda L: L.distributions.Multinomial(3, logits=L.tensor([0.1, 2.0, -1.0])),
                           [0.0, 3.0, 0.0], None),
}


def _compare(ours, theirs, name="", atol=1e-7):
    import torch

    if isinstance(theirs, torch.Tensor):
        assert str(ours.dtype).replace("tensormodes", "torch") == str(theirs.dtype), name
        ours, theirs = ours.detach().numpy(), theirs.detach().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=atol, err_msg=name)


def _try(call, *args):
    try:
        return call(*args)
    except NotImplementedError:
        return NotImplementedError


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_CASES))
def test_same_as_pytorch(name):
    import torch

    build, value, probabilities = _CASES[name]
    ours, theirs = build(tm), build(torch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert repr(ours).replace("tensormodes", "torch") == repr(theirs)
    assert ours.has_rsample == theirs.has_rsample
    assert repr(type(ours).support) == repr(type(theirs).support) or repr(ours.support) == repr(theirs.support)
    assert {k: repr(v) for k, v in ours.arg_constraints.items()} == \
        {k: repr(v) for k, v in theirs.arg_constraints.items()}
    for attribute in ("mean", "mode", "variance", "stddev"):
        expected = _try(getattr, theirs, attribute)
        if expected is NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(ours, attribute)
        else:
            _compare(getattr(ours, attribute), expected, f"{name}.{attribute}")
    calls = [("entropy", lambda d, L: d.entropy()), ("log_prob", lambda d, L: d.log_prob(L.tensor(value))),
             ("cdf", lambda d, L: d.cdf(L.tensor(value)))]
    if probabilities is not None:
        calls.append(("icdf", lambda d, L: d.icdf(L.tensor(probabilities))))
    for label, call in calls:
        expected = _try(call, theirs, torch)
        if expected is NotImplementedError:
            with pytest.raises(NotImplementedError):
                call(ours, tm)
        else:
            _compare(call(ours, tm), expected, f"{name}.{label}")
    for seed in (7, 8):
        tm.manual_seed(seed)
        torch.manual_seed(seed)
        _compare(ours.sample((3,)), theirs.sample((3,)), f"{name}.sample")
    if ours.has_rsample:
        tm.manual_seed(9)
        torch.manual_seed(9)
        _compare(ours.rsample((2, 1)), theirs.rsample((2, 1)), f"{name}.rsample")
    expanded, texpanded = ours.expand((3, *ours.batch_shape)), theirs.expand((3, *theirs.batch_shape))
    assert tuple(expanded.batch_shape) == tuple(texpanded.batch_shape) and type(expanded) is type(ours)
    _compare(expanded.log_prob(tm.tensor(value)), texpanded.log_prob(torch.tensor(value)), f"{name}.expand")


@pytest.mark.torch
def test_validation_messages_as_pytorch():
    import torch

    for make in (lambda L: L.distributions.Exponential(L.tensor([1.0, 0.0])),
                 lambda L: L.distributions.Laplace(0.0, L.tensor([-1.0])),
                 lambda L: L.distributions.Cauchy(L.tensor([math.nan]), 1.0),
                 lambda L: L.distributions.Exponential(1.0).log_prob(L.tensor([-1.0])),
                 lambda L: L.distributions.Geometric(L.tensor([0.5, 0.0])),
                 lambda L: L.distributions.Geometric(L.tensor([1.5])),
                 lambda L: L.distributions.Geometric(probs=0.5, logits=0.0),
                 lambda L: L.distributions.Poisson(L.tensor([-0.5])),
                 lambda L: L.distributions.Poisson(2.0).log_prob(L.tensor([0.5])),
                 lambda L: L.distributions.LogNormal(L.tensor([0.0]), L.tensor([0.0])),
                 lambda L: L.distributions.LogNormal(0.0, 1.0).log_prob(L.tensor([-1.0])),
                 lambda L: L.distributions.HalfNormal(L.tensor([-1.0])),
                 lambda L: L.distributions.HalfCauchy(1.0).log_prob(L.tensor(-1.0)),
                 lambda L: L.distributions.Gumbel(0.0, L.tensor([0.0])),
                 lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0), [1]),
                 lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0), (1,)),
                 lambda L: L.distributions.TransformedDistribution(
                     L.distributions.Normal(0.0, 1.0),
                     L.distributions.transforms.AffineTransform(0.0, 1.0, event_dim=1)),
                 lambda L: L.distributions.transforms.ExpTransform(cache_size=2),
                 lambda L: L.distributions.StudentT(L.tensor([0.0])),
                 lambda L: L.distributions.Binomial(L.tensor([2.5]), L.tensor([0.5])),
                 lambda L: L.distributions.Binomial(3, L.tensor([1.5])),
                 lambda L: L.distributions.Binomial(3, L.tensor([0.5])).log_prob(L.tensor([4.0])),
                 lambda L: L.distributions.Multinomial(3, L.tensor([0.5, 0.5])).log_prob(L.tensor([4.0, 0.0])),
                 lambda L: L.distributions.StudentT(2.0, 0.0, L.tensor([-1.0])),
                 lambda L: L.distributions.Chi2(L.tensor([-1.0])),
                 lambda L: L.distributions.OneHotCategorical(L.tensor([0.5, -0.5])),
                 lambda L: L.distributions.OneHotCategorical(L.tensor([0.5, 0.5])).log_prob(L.tensor([1.0, 1.0]))):
        with pytest.raises(ValueError) as ours:
            make(tm)
        with pytest.raises(ValueError) as theirs:
            make(torch)
        assert str(ours.value).replace("tensormodes", "torch") == str(theirs.value)


def test_literal_values():
    e = D.Exponential(tm.tensor([2.0]))
    assert e.mean.tolist() == [0.5] and e.variance.tolist() == [0.25] and e.mode.tolist() == [0.0]
    assert e.log_prob(tm.tensor([0.0])).tolist() == [0.6931471824645996]  # log 2 in float32
    assert e.icdf(tm.tensor([0.0])).tolist() == [0.0]
    lap = D.Laplace(1.0, 2.0)
    assert lap.cdf(tm.tensor(1.0)).item() == 0.5 and lap.icdf(tm.tensor(0.5)).item() == 1.0
    assert lap.variance.item() == 8.0
    c = D.Cauchy(0.0, 1.0)
    assert math.isnan(c.mean.item()) and c.variance.item() == math.inf and c.cdf(tm.tensor(0.0)).item() == 0.5
    g = D.Geometric(tm.tensor([1.0]))
    assert g.log_prob(tm.tensor([0.0])).tolist() == [0.0] and g.mean.tolist() == [0.0]
    p = D.Poisson(tm.tensor([0.0, 2.0]))
    assert p.log_prob(tm.tensor([0.0, 0.0])).tolist() == [0.0, -2.0] and p.mode.tolist() == [0.0, 2.0]
    with pytest.raises(NotImplementedError):
        p.entropy()  # PyTorch defines no entropy for Poisson either
    tm.manual_seed(0)
    draws = D.Poisson(tm.tensor([3.0])).sample((5,))
    assert draws.dtype == tm.float32 and draws.flatten().tolist() == [6.0, 3.0, 2.0, 3.0, 4.0]
    tm.manual_seed(0)
    assert D.Exponential(1.0).sample((2,)).tolist() == [3.508326292037964, 1.2303847074508667]


def test_rsample_and_log_prob_gradients():
    rate = tm.tensor([2.0], requires_grad=True)
    tm.manual_seed(1)
    D.Exponential(rate).rsample((3,)).sum().backward()
    tm.manual_seed(1)
    draws = tm.empty(3, 1).exponential_()
    np.testing.assert_allclose(rate.grad.numpy(), [-(draws / 4.0).sum().item()], rtol=1e-6)  # d(x/r)/dr = -x/r^2
    loc, scale = tm.tensor(0.5, requires_grad=True), tm.tensor(2.0, requires_grad=True)
    D.Laplace(loc, scale).log_prob(tm.tensor(1.5)).backward()
    assert loc.grad.item() == 0.5 and scale.grad.item() == -0.25  # -1/s + |x-l|/s^2
    loc, scale = tm.tensor(0.0, requires_grad=True), tm.tensor(1.0, requires_grad=True)
    D.Cauchy(loc, scale).rsample().backward()
    tm.manual_seed(2)
    assert loc.grad.item() == 1.0
    probs = tm.tensor(0.5, requires_grad=True)
    D.Geometric(probs).log_prob(tm.tensor(2.0)).backward()
    np.testing.assert_allclose(probs.grad.item(), -2 / 0.5 + 1 / 0.5, rtol=1e-6)  # -k/(1-p) + 1/p


def _transforms(L):
    T = L.distributions.transforms
    return [T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform(), T.AbsTransform(),
            T.AffineTransform(1.0, -2.0), T.AffineTransform(L.tensor([1.0, 2.0]), L.tensor([0.5, 3.0]), event_dim=1),
            T.ComposeTransform([T.AffineTransform(0.5, 3.0), T.TanhTransform()]), T.identity_transform,
            T.ExpTransform().inv, T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]).inv]


@pytest.mark.torch
@pytest.mark.parametrize("index", range(10))
def test_transforms_as_pytorch(index):
    import torch

    ours, theirs = _transforms(tm)[index], _transforms(torch)[index]
    assert repr(ours).replace("tensormodes", "torch") == repr(theirs)
    assert repr(ours.domain) == repr(theirs.domain) and repr(ours.codomain) == repr(theirs.codomain)
    assert ours.bijective == theirs.bijective
    sign = _try(getattr, theirs, "sign")
    if sign is NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.sign  # noqa: B018 - the attribute raises
    elif isinstance(sign, torch.Tensor):
        _compare(ours.sign, sign, "sign")
    else:
        assert ours.sign == sign
    x = [[0.3, -1.2], [2.0, 0.0]]
    y, ty = ours(tm.tensor(x)), theirs(torch.tensor(x))
    _compare(y, ty, "call")
    _compare(ours.inv(y), theirs.inv(ty), "inv")
    jacobian = _try(theirs.log_abs_det_jacobian, torch.tensor(x), ty)
    if jacobian is NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(tm.tensor(x), y)
    else:
        _compare(ours.log_abs_det_jacobian(tm.tensor(x), y), jacobian, "log_abs_det_jacobian")
    assert tuple(ours.forward_shape((3, 2))) == tuple(theirs.forward_shape((3, 2)))
    assert (ours == _transforms(tm)[index]) == (theirs == _transforms(torch)[index])
    with pytest.raises(TypeError):
        hash(ours)  # unhashable, as PyTorch's (they define __eq__)


def test_transform_caching_and_literals():
    T = D.transforms
    exp = T.ExpTransform(cache_size=1)
    x = tm.tensor([0.0, 1.0])
    y = exp(x)
    assert exp.inv(y) is x and exp(x) is y  # the cache gives back the very tensors
    assert T.ExpTransform().inv(T.ExpTransform()(x)) is not x
    assert T.ExpTransform().with_cache(1)._cache_size == 1 and exp.inv.with_cache(0)._cache_size == 0
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform().inv == T.ExpTransform().inv
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.identity_transform(x) is x and T.identity_transform.log_abs_det_jacobian(x, x).tolist() == [0.0, 0.0]
    assert T.AffineTransform(0.0, -2.0).sign == -1
    assert T.SigmoidTransform()(tm.tensor([-200.0])).item() == tm.finfo(tm.float32).tiny  # clipped, as PyTorch
    with pytest.raises(ValueError, match="^cache_size must be 0 or 1$"):
        T.ExpTransform(cache_size=2)
    with pytest.raises(ValueError, match=r"^Please use either \.domain\.event_dim or \.codomain\.event_dim$"):
        _EventDimMismatch().event_dim  # noqa: B018 - the attribute raises
    d = D.LogNormal(tm.tensor([0.0]), tm.tensor([1.0]))
    assert d.support is D.constraints.positive
    assert round(d.cdf(tm.tensor([1.0])).item(), 6) == 0.5 and round(d.icdf(tm.tensor([0.5])).item(), 6) == 1.0


class _EventDimMismatch(D.transforms.Transform):
    """A transform whose domain and codomain disagree on event dims (as a reshape does)."""

    domain = D.constraints.real
    codomain = D.constraints.real_vector


def test_gradients_through_transformed_distributions():
    loc, scale = tm.tensor([0.5], requires_grad=True), tm.tensor([2.0], requires_grad=True)
    tm.manual_seed(4)
    sample = D.LogNormal(loc, scale).rsample((3,))
    sample.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [sample.sum().item()], rtol=1e-6)  # d exp(l + s e)/dl = itself
    scale = tm.tensor(1.5, requires_grad=True)
    D.HalfNormal(scale).log_prob(tm.tensor(3.0)).backward()
    np.testing.assert_allclose(scale.grad.item(), -1 / 1.5 + 9.0 / 1.5 ** 3, rtol=1e-6)  # -1/s + x^2/s^3
    loc = tm.tensor(0.0, requires_grad=True)
    D.Gumbel(loc, 1.0).log_prob(tm.tensor(0.0)).backward()
    assert loc.grad.item() == 0.0  # 1/s - exp(0)/s


def test_one_hot_and_student_t_literals_and_gradients():
    d = D.OneHotCategorical(tm.tensor([0.25, 0.75]))
    assert d.enumerate_support().tolist() == [[1.0, 0.0], [0.0, 1.0]] and d.variance.tolist() == [0.1875, 0.1875]
    probs = tm.tensor([0.25, 0.75], requires_grad=True)
    tm.manual_seed(0)
    sample = D.OneHotCategoricalStraightThrough(probs).rsample()
    (sample * tm.tensor([1.0, 2.0])).sum().backward()
    assert probs.grad.tolist() == [-0.75, 0.25] and sample.sum().item() == 1.0  # through the normalization
    t = D.StudentT(tm.tensor([1.0, 2.0, 5.0]), 1.0, 2.0)
    assert math.isnan(t.mean[0].item()) and t.mean[1:].tolist() == [1.0, 1.0]
    assert math.isnan(t.variance[0].item()) and t.variance[1:].tolist() == [math.inf, 6.666666507720947]  # 20/3 float
    assert D.Chi2(tm.tensor([2.0])).df.tolist() == [2.0] and D.Chi2(4.0).variance.item() == 8.0
    loc, scale = tm.tensor(0.0, requires_grad=True), tm.tensor(1.0, requires_grad=True)
    tm.manual_seed(5)
    sample = D.StudentT(3.0, loc, scale).rsample()
    sample.backward()
    assert loc.grad.item() == 1.0 and scale.grad.item() == sample.item()


def _kl_members(L):
    t, DL = L.tensor, L.distributions
    return {
        "normal": DL.Normal(t([0.5, -1.0]), t([1.5, 0.3])), "laplace": DL.Laplace(t([0.2, 1.0]), t([0.7, 2.0])),
        "cauchy": DL.Cauchy(t([0.2, 1.0]), t([0.7, 2.0])), "exponential": DL.Exponential(t([0.5, 3.0])),
        "gamma": DL.Gamma(t([0.5, 3.0]), t([2.0, 0.5])), "chi2": DL.Chi2(t([1.5, 4.0])),
        "beta": DL.Beta(t([0.5, 3.0]), t([2.0, 1.5])), "uniform": DL.Uniform(t([0.2, 0.1]), t([0.7, 0.9])),
        "uniform_wide": DL.Uniform(t([-1.0, 0.0]), t([2.0, 3.0])), "gumbel": DL.Gumbel(t([0.3, -1.0]), t([1.0, 2.5])),
        "halfnormal": DL.HalfNormal(t([0.4, 2.0])), "lognormal": DL.LogNormal(t([0.1, 0.5]), t([1.0, 0.5])),
        "geometric": DL.Geometric(t([0.3, 0.8])), "poisson": DL.Poisson(t([0.5, 4.0])),
        "bernoulli": DL.Bernoulli(t([0.3, 0.8])), "onehot": DL.OneHotCategorical(t([[0.2, 0.8], [0.5, 0.5]])),
        "categorical": DL.Categorical(t([[0.2, 0.8], [0.5, 0.5]])),
        "halfcauchy": DL.HalfCauchy(t([0.4, 2.0])), "studentt": DL.StudentT(t([3.0, 5.0])),
        "binomial": DL.Binomial(t([5.0, 8.0]), t([0.3, 0.6])),
        "binomial_fewer": DL.Binomial(t([5.0, 4.0]), t([0.5, 0.2])),
        "multinomial": DL.Multinomial(4, t([[0.2, 0.8], [0.5, 0.5]])),
    }


@pytest.mark.torch
@pytest.mark.parametrize("first", sorted(_kl_members(tm)))
def test_kl_divergences_as_pytorch(first):
    """Every pair among these families: PyTorch's value, or its NotImplementedError."""
    import torch

    ours, theirs = _kl_members(tm), _kl_members(torch)
    for second in sorted(ours):
        try:
            expected = torch.distributions.kl_divergence(theirs[first], theirs[second])
        except NotImplementedError as error:
            with pytest.raises(NotImplementedError) as raised:
                D.kl_divergence(ours[first], ours[second])
            assert str(raised.value) == str(error), (first, second)
            continue
        # float32 cancellations: an ulp of the terms, as the older KL tests allow
        _compare(D.kl_divergence(ours[first], ours[second]), expected, f"kl({first}, {second})", atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_draws_as_pytorch(dtype):
    """Both of PyTorch's samplers (inversion, BTRS) on both sides of 1/2, and the stream after."""
    import torch

    counts = [5.0, 20.0, 100.0, 3.0, 1000.0, 7.0, 50.0, 0.0, 12.5, 40.0, 40.0]
    probs = [0.3, 0.6, 0.5, 1.0, 0.02, 0.9, 0.95, 0.5, 0.5, 0.1, 0.99]
    for seed in (0, 1):
        tm.manual_seed(seed)
        torch.manual_seed(seed)
        ours = tm.binomial(tm.tensor(counts, dtype=getattr(tm, dtype)), tm.tensor(probs, dtype=getattr(tm, dtype)))
        theirs = torch.binomial(torch.tensor(counts, dtype=getattr(torch, dtype)),
                                torch.tensor(probs, dtype=getattr(torch, dtype)))
        assert ours.tolist() == theirs.tolist() and tm.rand(2).tolist() == torch.rand(2).tolist()


def test_binomial_errors_and_literals():
    tm.manual_seed(0)
    assert tm.binomial(tm.tensor([5.0, 20.0, 100.0, 3.0]), tm.tensor([0.3, 0.6, 0.5, 1.0])).tolist() == \
        [3.0, 12.0, 52.0, 3.0]
    with pytest.raises(ValueError, match="^binomial only supports floating-point dtypes for count, got: Long$"):
        tm.binomial(tm.tensor([5]), tm.tensor([0.5]))
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        tm.binomial(tm.tensor([5.0]), tm.tensor([0.5], dtype=tm.float64))
    count = tm.tensor([5.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^derivative for aten::binomial is not implemented$"):
        tm.binomial(count, tm.tensor([0.5])).sum().backward()


def test_binomial_and_multinomial_literals_and_gradients():
    b = D.Binomial(tm.tensor([4.0, 4.0]), tm.tensor([0.5, 1.0]))
    assert b.enumerate_support(False).flatten().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert b.mode.tolist() == [2.0, 4.0] and b.variance.tolist() == [1.0, 0.0]
    assert b.log_prob(tm.tensor([4.0, 4.0])).exp().tolist()[1] == 1.0
    with pytest.raises(NotImplementedError, match="^Inhomogeneous total count not supported by `entropy`.$"):
        D.Binomial(tm.tensor([2.0, 3.0]), tm.tensor([0.5, 0.5])).entropy()
    with pytest.raises(NotImplementedError, match="^inhomogeneous total_count is not supported$"):
        D.Multinomial(tm.tensor(3), tm.tensor([0.5, 0.5]))
    probs = tm.tensor(0.25, requires_grad=True)
    D.Binomial(4, probs).log_prob(tm.tensor(1.0)).backward()
    np.testing.assert_allclose(probs.grad.item(), 1 / 0.25 - 3 / 0.75, rtol=1e-5)  # k/p - (n-k)/(1-p)
    tm.manual_seed(0)
    counts = D.Multinomial(10, tm.tensor([0.2, 0.3, 0.5])).sample((4,))
    assert counts.shape == (4, 3) and counts.sum(-1).tolist() == [10.0] * 4
