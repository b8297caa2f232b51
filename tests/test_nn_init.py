"""``nn.init``: deterministic initialisers exactly, random ones by their distribution, errors as PyTorch.

Random schemes are checked over large tensors (seeded, so every run sees the
same numbers) against the distribution PyTorch documents, and where torch is
installed against statistics of PyTorch's own draw of the same shape. Each
tolerance is stated next to its check.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensormodes as tm

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None

init = tm.nn.init


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01 ** 2))
    assert init.calculate_gain("leaky_relu", 1) == 1.0
    assert init.calculate_gain("selu") == 0.75


def test_deterministic_initialisers():
    assert init.constant_(tm.empty(2, 2), 3.0).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert init.ones_(tm.empty(3)).tolist() == [1.0, 1.0, 1.0]
    assert init.zeros_(tm.ones(2)).tolist() == [0.0, 0.0]
    assert init.eye_(tm.empty(3, 2)).tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    dirac = init.dirac_(tm.empty(4, 2, 3), groups=2)
    expected = np.zeros((4, 2, 3), dtype=np.float32)
    expected[0, 0, 1] = expected[1, 1, 1] = expected[2, 0, 1] = expected[3, 1, 1] = 1
    np.testing.assert_array_equal(dirac.numpy(), expected)
    conv = tm.nn.Conv2d(3, 3, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    x = tm.randn(1, 3, 4, 4)
    np.testing.assert_allclose(conv(x).detach().numpy(), x.numpy(), rtol=1e-6)


def test_initialisers_work_in_place_without_recording_gradients():
    p = tm.nn.Parameter(tm.empty(3, 4))
    for fill in (lambda t: init.uniform_(t), lambda t: init.normal_(t), lambda t: init.xavier_uniform_(t),
                 lambda t: init.kaiming_normal_(t), lambda t: init.trunc_normal_(t), lambda t: init.orthogonal_(t),
                 lambda t: init.constant_(t, 1.0), lambda t: init.eye_(t)):
        assert fill(p) is p
        assert p.grad_fn is None and p.is_leaf and p.requires_grad


@pytest.mark.parametrize("call, message", [
    (lambda: init.eye_(tm.empty(2, 2, 2)), "Only tensors with 2 dimensions are supported"),
    (lambda: init.dirac_(tm.empty(2, 2)), "Only tensors with 3, 4, or 5 dimensions are supported"),
    (lambda: init.dirac_(tm.empty(3, 2, 2), groups=2), "dim 0 must be divisible by groups"),
    (lambda: init.orthogonal_(tm.empty(3)), "Only tensors with 2 or more dimensions are supported"),
    (lambda: init.kaiming_uniform_(tm.empty(3)),
     "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"),
    (lambda: init.kaiming_uniform_(tm.empty(3, 3), mode="fan"),
     "Mode fan not supported, please use one of ['fan_in', 'fan_out']"),
    (lambda: init.calculate_gain("foo"), "Unsupported nonlinearity foo"),
    (lambda: init.calculate_gain("leaky_relu", True), "negative_slope True not a valid number"),
    (lambda: init.xavier_normal_(tm.empty(3)),
     "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"),
])
def test_errors(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


def test_zero_element_tensors_warn_and_stay():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(tm.empty(0, 3)).shape == (0, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_normal_(tm.empty(3, 0))


def test_trunc_normal_warns_when_mean_is_far_from_the_interval():
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\] in nn.init.trunc_normal_"):
        init.trunc_normal_(tm.empty(10), mean=10.0)


# Statistics over N = 200,000 seeded values. For a uniform U(-b, b) the std is b / sqrt(3): the mean's standard
# error is b / sqrt(3N) ~ 0.0013 b, the std's relative standard error ~ sqrt(0.8 / (4N)) ~ 0.001; for a normal,
# the mean's standard error is 0.0022 std and the std's relative error 0.0016. Tolerances are ~5 standard errors.
N_ROWS, N_COLS = 400, 500


def _stats(tensor):
    values = tensor.numpy().astype(np.float64)
    return values.mean(), values.std(), values.min(), values.max()


def _uniform_check(tensor, bound):
    mean, std, low, high = _stats(tensor)
    assert -bound <= low and high <= bound
    assert low < -0.999 * bound and high > 0.999 * bound  # 200,000 draws reach within 0.1% of each end
    assert abs(mean) < 0.007 * bound
    assert abs(std / (bound / math.sqrt(3)) - 1) < 0.005


def _normal_check(tensor, mean_expected, std_expected):
    mean, std, _, _ = _stats(tensor)
    assert abs(mean - mean_expected) < 0.011 * std_expected
    assert abs(std / std_expected - 1) < 0.008


@pytest.fixture
def seeded():
    tm.manual_seed(1234)
    yield tm.empty(N_ROWS, N_COLS)


def test_uniform_and_normal(seeded):
    _uniform_check(init.uniform_(seeded, -0.3, 0.3), 0.3)
    _normal_check(init.normal_(seeded, 2.0, 0.5), 2.0, 0.5)


def test_xavier(seeded):
    # fan_in = 500, fan_out = 400
    bound = 2.0 * math.sqrt(6.0 / 900)
    _uniform_check(init.xavier_uniform_(seeded, gain=2.0), bound)
    _normal_check(init.xavier_normal_(seeded), 0.0, math.sqrt(2.0 / 900))


def test_kaiming(seeded):
    gain = math.sqrt(2.0 / (1 + 5))  # leaky_relu with a = sqrt(5): Linear's default
    _uniform_check(init.kaiming_uniform_(seeded, a=math.sqrt(5)), gain * math.sqrt(3.0 / 500))
    _uniform_check(init.kaiming_uniform_(seeded, mode="fan_out", nonlinearity="relu"), math.sqrt(2.0) *
                   math.sqrt(3.0 / 400))
    _normal_check(init.kaiming_normal_(seeded, nonlinearity="tanh"), 0.0, (5.0 / 3) / math.sqrt(500))


def test_trunc_normal(seeded):
    init.trunc_normal_(seeded, mean=0.5, std=2.0, a=-1.0, b=3.0)
    mean, std, low, high = _stats(seeded)
    assert -1.0 <= low and high <= 3.0
    # Moments of N(0.5, 2^2) truncated to [-1, 3] (alpha = -0.75, beta = 1.25).
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    alpha, beta = -0.75, 1.25
    z = cdf(beta) - cdf(alpha)
    expected_mean = 0.5 + 2.0 * (phi(alpha) - phi(beta)) / z
    expected_var = 4.0 * (1 + (alpha * phi(alpha) - beta * phi(beta)) / z - ((phi(alpha) - phi(beta)) / z) ** 2)
    assert abs(mean - expected_mean) < 0.01
    assert abs(std / math.sqrt(expected_var) - 1) < 0.005


def test_orthogonal():
    tm.manual_seed(0)
    for shape in ((6, 4), (4, 6), (3, 2, 2)):
        w = init.orthogonal_(tm.empty(*shape), gain=2.0)
        flat = w.reshape(shape[0], -1).numpy().astype(np.float64)
        gram = flat @ flat.T if shape[0] <= flat.shape[1] else flat.T @ flat
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)


def test_generator_makes_draws_reproducible():
    for fill in (lambda t, g: init.uniform_(t, generator=g), lambda t, g: init.normal_(t, generator=g),
                 lambda t, g: init.xavier_uniform_(t, generator=g), lambda t, g: init.kaiming_normal_(t, generator=g),
                 lambda t, g: init.trunc_normal_(t, generator=g), lambda t, g: init.orthogonal_(t, generator=g)):
        a = fill(tm.empty(5, 4), tm.Generator().manual_seed(7))
        b = fill(tm.empty(5, 4), tm.Generator().manual_seed(7))
        c = fill(tm.empty(5, 4), tm.Generator().manual_seed(8))
        assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


@pytest.mark.torch
@pytest.mark.parametrize("expression, bounded", [
    ("I.uniform_(L.empty(400, 500), -2.0, 1.0)", True),
    ("I.normal_(L.empty(400, 500), 1.0, 3.0)", False),
    ("I.xavier_uniform_(L.empty(400, 50, 10))", True),
    ("I.xavier_normal_(L.empty(400, 500), gain=0.5)", False),
    ("I.kaiming_uniform_(L.empty(400, 500), a=0.2, mode='fan_out')", True),
    ("I.kaiming_normal_(L.empty(40, 50, 3, 3), nonlinearity='relu')", False),
    ("I.trunc_normal_(L.empty(400, 500), std=0.02)", False),
    ("I.trunc_normal_(L.empty(400, 500), mean=1.0, a=0.0, b=1.5)", True),
])
def test_distribution_matches_torch(expression, bounded):
    """Our draw and PyTorch's (each n = 200,000 values, seeded) agree: means within 5 standard errors of their
    difference (sqrt(2 / n) std); stds within 5 sqrt(2 / n) relatively, about 7 standard errors of the
    difference of two normal samples' stds (1 / sqrt(n)). For bounded distributions, whose extremes 200,000 draws
    reach within 0.1%, the minimum and maximum agree within 1% of the range."""
    tm.manual_seed(0)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = eval(expression, {"L": tm, "I": tm.nn.init}).numpy().astype(np.float64)
        theirs = eval(expression, {"L": torch, "I": torch.nn.init}).numpy().astype(np.float64)
    n = ours.size
    spread = theirs.std()
    assert abs(ours.mean() - theirs.mean()) < 5 * math.sqrt(2 / n) * spread
    assert abs(ours.std() / spread - 1) < 5 * math.sqrt(2) * math.sqrt(1 / n)
    if bounded:
        width = theirs.max() - theirs.min()
        assert abs(ours.min() - theirs.min()) < 0.01 * width
        assert abs(ours.max() - theirs.max()) < 0.01 * width


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "I.eye_(L.empty(3, 5))", "I.dirac_(L.empty(6, 4, 3, 3), groups=2)", "I.dirac_(L.empty(2, 3, 1, 2, 3))",
    "I.constant_(L.empty(2, 3), -1.5)", "I.calculate_gain('leaky_relu', 0.3)", "I.calculate_gain('conv_transpose1d')",
])
def test_deterministic_results_match_torch(expression):
    ours = eval(expression, {"L": tm, "I": tm.nn.init})
    theirs = eval(expression, {"L": torch, "I": torch.nn.init})
    if isinstance(theirs, float | int):
        assert ours == theirs
    else:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _init_calls(library, mode_base):
    seen = []

    class Record(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if getattr(func, "__module__", "").endswith("nn.init"):
                seen.append((name, len(args), sorted(kwargs or {})))
            return func(*args, **(kwargs or {}))

    with Record():
        library.nn.Linear(2, 2)
        library.nn.init.normal_(library.empty(2))
        library.nn.init.constant_(library.empty(2), 1.0)
    return seen


def test_dispatching_initialisers_are_seen_by_modes():
    assert _init_calls(tm, tm.overrides.TorchFunctionMode) == [
        ("kaiming_uniform_", 0, ["a", "generator", "mode", "nonlinearity", "tensor"]),
        ("uniform_", 0, ["a", "b", "generator", "tensor"]),
        ("normal_", 0, ["generator", "mean", "std", "tensor"]),
        ("constant_", 0, ["tensor", "val"])]
    assert tm.nn.init.uniform_ not in sum(tm.overrides.get_overridable_functions().values(), [])


@pytest.mark.torch
def test_dispatching_initialisers_match_torch():
    assert _init_calls(tm, tm.overrides.TorchFunctionMode) == _init_calls(torch, torch.overrides.TorchFunctionMode)
