"""Random sampling: seeding and generators, distributions, in-place samplers, and
PyTorch's dtypes, shapes and errors (random values themselves differ from PyTorch's)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensormodes as tm

from .torch_oracle import assert_same_outcome

N = 20_000  # samples for the statistical checks: loose 5-sigma bounds, fast

# -- seeding and generators ------------------------------------------------------------------------

SAMPLERS = {
    "rand": lambda g: tm.rand(3, 2, generator=g),
    "randn": lambda g: tm.randn(4, generator=g),
    "randint": lambda g: tm.randint(0, 100, (5,), generator=g),
    "randperm": lambda g: tm.randperm(10, generator=g),
    "normal": lambda g: tm.normal(tm.zeros(3), tm.ones(3), generator=g),
    "normal_size": lambda g: tm.normal(1.0, 2.0, (3,), generator=g),
    "rand_like": lambda g: tm.rand_like(tm.zeros(3), generator=g),
    "randn_like": lambda g: tm.randn_like(tm.zeros(3), generator=g),
    "randint_like": lambda g: tm.randint_like(tm.zeros(3), 10, generator=g),
    "bernoulli": lambda g: tm.bernoulli(tm.full((8,), 0.5), generator=g),
    "multinomial": lambda g: tm.multinomial(tm.ones(6), 3, generator=g),
    "poisson": lambda g: tm.poisson(tm.full((4,), 3.0), g),
    "binomial": lambda g: tm.binomial(tm.full((4,), 20.0), tm.full((4,), 0.3), g),
    "uniform_": lambda g: tm.zeros(4).uniform_(generator=g),
    "normal_": lambda g: tm.zeros(4).normal_(generator=g),
    "random_": lambda g: tm.zeros(4, dtype=tm.int32).random_(generator=g),
    "bernoulli_": lambda g: tm.zeros(8).bernoulli_(0.5, generator=g),
    "exponential_": lambda g: tm.zeros(4).exponential_(generator=g),
    "geometric_": lambda g: tm.zeros(4).geometric_(0.3, generator=g),
    "cauchy_": lambda g: tm.zeros(4).cauchy_(generator=g),
    "log_normal_": lambda g: tm.zeros(4).log_normal_(generator=g),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_manual_seed_reproduces_the_default_stream(name):
    tm.manual_seed(123)
    first = SAMPLERS[name](None).tolist()
    tm.manual_seed(123)
    assert SAMPLERS[name](None).tolist() == first


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_generators_are_independent_of_the_default_one(name):
    g = tm.Generator().manual_seed(7)
    first = SAMPLERS[name](g).tolist()
    tm.manual_seed(0)
    tm.rand(10)  # moving the default stream must not matter
    g.manual_seed(7)
    assert SAMPLERS[name](g).tolist() == first


def test_seeded_streams_advance():
    tm.manual_seed(0)
    assert tm.rand(5).tolist() != tm.rand(5).tolist()


def test_get_state_and_set_state_replay_a_stream():
    g = tm.Generator().manual_seed(3)
    tm.randn(3, generator=g)
    state = g.get_state()
    a = tm.randn(4, generator=g)
    g.set_state(state)
    assert tm.randn(4, generator=g).tolist() == a.tolist()
    default_state = tm.default_generator.get_state()
    b = tm.rand(3)
    tm.default_generator.set_state(default_state)
    assert tm.rand(3).tolist() == b.tolist()
    with pytest.raises(TypeError, match="expected a tensormodes.ByteTensor, but got int"):
        g.set_state(3)


def test_seeds():
    assert tm.manual_seed(5) is tm.default_generator
    assert tm.initial_seed() == 5
    assert tm.Generator().initial_seed() == 67280421310721
    assert tm.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1
    new_seed = tm.seed()
    assert isinstance(new_seed, int) and 0 <= new_seed < 2 ** 64 and tm.initial_seed() == new_seed
    g = tm.Generator()
    assert g.seed() == g.initial_seed()
    assert tm.Generator("cpu").device == tm.device("cpu")
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        tm.Generator().manual_seed(1.5)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        tm.manual_seed(2 ** 64)
    with pytest.raises(TypeError, match="argument 'generator' must be tensormodes.Generator, not int"):
        tm.rand(2, generator=3)
    tm.manual_seed(0)


# -- distributions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [tm.float16, tm.bfloat16, tm.float32, tm.float64])
def test_rand_is_in_the_half_open_unit_interval(dtype):
    x = tm.rand(N, dtype=dtype)._data.astype(np.float64)
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 5 * (1 / 12) ** 0.5 / N ** 0.5 + 4e-3


def test_complex_samples_have_independent_parts():
    x = tm.rand(N, dtype=tm.complex64)._data
    assert 0 <= x.real.min() and x.real.max() < 1 and 0 <= x.imag.min() and x.imag.max() < 1
    z = tm.randn(N, dtype=tm.complex128)._data
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.05  # unit complex variance
    assert abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.05


@pytest.mark.parametrize("dtype", [tm.float16, tm.float32, tm.float64])
def test_randn_moments(dtype):
    x = tm.randn(N, dtype=dtype)._data.astype(np.float64)
    assert abs(x.mean()) < 5 / N ** 0.5 and abs(x.std() - 1) < 0.03


def test_randint_covers_the_half_open_range():
    x = tm.randint(-3, 4, (N,))
    assert x.dtype is tm.int64 and set(x.tolist()) == set(range(-3, 4))
    assert set(tm.randint(2, (100,), dtype=tm.bool).tolist()) == {False, True}
    assert tm.randint(5, (2, 3)).shape == (2, 3)
    assert tm.randint(low=1, high=2, size=(3,)).tolist() == [1, 1, 1]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 200))
def test_randperm_is_a_permutation(n):
    assert sorted(tm.randperm(n).tolist()) == list(range(n))


def test_normal_broadcasts_mean_and_std():
    mean = tm.tensor([[0.0], [100.0]])
    x = tm.normal(mean, tm.full((N // 2,), 2.0))
    assert x.shape == (2, N // 2)
    assert abs(x[1].mean().item() - 100) < 0.2 and abs(x[0].std().item() - 2) < 0.1
    assert tm.normal(tm.tensor([1.0, 2.0]), 0.0).tolist() == [1.0, 2.0]
    assert tm.normal(3.0, tm.zeros(2)).tolist() == [3.0, 3.0]
    assert tm.normal(2.0, 3.0, (4, 5), dtype=tm.float64).dtype is tm.float64
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        tm.normal(tm.zeros(2), -1.0)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        tm.normal(tm.zeros(2), -tm.ones(2))


def test_bernoulli_frequencies():
    p = tm.tensor([0.0, 0.25, 1.0]).expand(N, 3)
    x = tm.bernoulli(p)
    frequencies = x.mean(0).tolist()
    assert frequencies[0] == 0 and frequencies[2] == 1 and abs(frequencies[1] - 0.25) < 0.02
    assert tm.bernoulli(tm.zeros(3, dtype=tm.int64), 1.0).tolist() == [1, 1, 1]
    assert tm.tensor([0.0, 1.0]).bernoulli().tolist() == [0.0, 1.0]


def test_multinomial_without_replacement_draws_distinct_indices():
    weights = tm.tensor([[1.0, 0.0, 3.0, 0.0], [0.0, 2.0, 0.0, 0.0]])
    for _ in range(20):
        draws = tm.multinomial(weights, 4).tolist()
        assert sorted(draws[0]) == [0, 1, 2, 3] and set(draws[0][:2]) == {0, 2}
        assert draws[1][0] == 1
    counts = np.bincount(tm.multinomial(tm.tensor([1.0, 3.0]), 1, replacement=False).tolist()
                         + [tm.multinomial(tm.tensor([1.0, 3.0]), 1).item() for _ in range(2000)], minlength=2)
    assert 0.70 < counts[1] / counts.sum() < 0.80


def test_multinomial_with_replacement_follows_the_weights():
    x = tm.multinomial(tm.tensor([0.0, 1.0, 3.0, 0.0]), N, replacement=True)
    counts = np.bincount(x.tolist(), minlength=4)
    assert counts[0] == 0 and counts[3] == 0 and abs(counts[2] / N - 0.75) < 0.02
    assert x.dtype is tm.int64 and tm.multinomial(tm.ones(3, 2), 5, True).shape == (3, 5)


def test_poisson_mean():
    x = tm.poisson(tm.full((N,), 4.0))
    assert x.dtype is tm.float32 and abs(x.mean().item() - 4) < 0.15
    assert (x == x.round()).all()


# -- in-place samplers -----------------------------------------------------------------------------

@pytest.mark.parametrize("call", ["uniform_()", "normal_()", "random_()", "bernoulli_()", "exponential_()",
                                  "cauchy_()", "log_normal_()", "geometric_(0.5)"])
def test_in_place_samplers_write_into_the_tensor(call):
    x = tm.zeros(50)
    version = x._version
    result = eval(f"x.{call}")
    assert x.any() and x._version > version
    assert np.shares_memory(result.numpy(), x.numpy()) and result.tolist() == x.tolist()
    # PyTorch returns the tensor object itself; here a tensor sharing its memory.


def test_in_place_samplers_refuse_broadcast_views():
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tm.zeros(3).expand(2, 3).uniform_()


def test_in_place_sampler_ranges():
    x = tm.empty(N).uniform_(-2, 3)
    assert x.min().item() >= -2 and x.max().item() < 3
    assert tm.empty(3).uniform_(1.5, 1.5).tolist() == [1.5] * 3
    assert tm.empty(2).normal_(5, 0).tolist() == [5.0, 5.0]
    assert abs(tm.empty(N).exponential_(4.0).mean().item() - 0.25) < 0.01
    g = tm.empty(N, dtype=tm.int64).geometric_(0.25)
    assert g.min().item() >= 1 and abs(g.float().mean().item() - 4) < 0.15
    assert tm.empty(N).log_normal_(0, 0.5).min().item() > 0
    r = tm.empty(N, dtype=tm.int8).random_(-5, 5)
    assert set(r.tolist()) == set(range(-5, 5))
    assert set(tm.empty(100, dtype=tm.bool).random_().tolist()) == {False, True}
    assert tm.empty(N, dtype=tm.uint8).random_().max().item() > 200
    assert set(tm.empty(N).random_(3).tolist()) == {0.0, 1.0, 2.0}
    assert tm.empty(N, dtype=tm.float16).random_().max().item() <= 2048
    assert tm.zeros(2, 2).bernoulli_(tm.tensor([1.0, 0.0])).tolist() == [[1.0, 0.0], [1.0, 0.0]]


def test_in_place_samplers_keep_dtype_and_complex_parts():
    x = tm.zeros(3, dtype=tm.float64).uniform_()
    assert x.dtype is tm.float64
    z = tm.zeros(2, dtype=tm.complex64).uniform_(1, 1)
    assert z.tolist() == [1 + 1j, 1 + 1j]
    assert tm.zeros(2, dtype=tm.complex64).normal_(2, 0).tolist() == [2 + 2j, 2 + 2j]


# -- PyTorch's dtypes, shapes and errors -----------------------------------------------------------------

CASES = [
    "L.rand(2, dtype=L.int64)", "L.randn(2, dtype=L.int64)", "L.rand(2, dtype=L.bool)", "L.rand(-1)",
    "L.randn(2, -1)", "L.rand(2, 2.5)", "L.randn([])", "L.rand(2, dtype=L.complex128)", "L.randn(2, dtype=L.float16)",
    "L.randint(5, (3,))", "L.randint(2, 5, (3,))", "L.randint(5, 2, (3,))", "L.randint(5, (3,), dtype=L.float32)",
    "L.randint(5, (3,), dtype=L.bool)", "L.randint(300, (3,), dtype=L.uint8)",
    "L.randint(-1, 300, (3,), dtype=L.uint8)",
    "L.randint(5, 3)", "L.randint(5.5, (2,))", "L.randint(0, 2, (2,), dtype=L.bool)",
    "L.randint(0, 3, (2,), dtype=L.bool)",
    "L.randint(high=5, size=(2,))", "L.randint(low=1, high=5, size=(2,))", "L.randint(2, 5, size=(2,))",
    "L.randint(0, 2**20, (2,), dtype=L.int16)", "L.randint(0, 2**30, (2,), dtype=L.float16)", "L.randint(3, ())",
    "L.randint(3, (2, 2.5))", "L.randint(3, (-1,))",
    "L.randperm(5)", "L.randperm(5, dtype=L.float32)", "L.randperm(300, dtype=L.uint8)", "L.randperm(5, dtype=L.bool)",
    "L.randperm(-1)", "L.randperm(0)", "L.randperm(128, dtype=L.int8)", "L.randperm(129, dtype=L.int8)",
    "L.randperm(2049, dtype=L.float16)", "L.randperm(2050, dtype=L.float16)", "L.randperm(2**24+2, dtype=L.float32)",
    "L.rand_like(L.ones(2, dtype=L.int32))", "L.randn_like(L.ones(2, dtype=L.int32))", "L.randint_like(L.ones(2), 5)",
    "L.randint_like(L.ones(2, dtype=L.int32), 5)", "L.randint_like(L.ones(2), 2, 5, dtype=L.int32)",
    "L.randint_like(L.ones(2, dtype=L.uint8), 300)", "L.randint_like(L.ones(2), low=1, high=3)",
    "L.randint_like(L.ones(2), high=3)", "L.randint_like(L.ones(2), L.tensor(5))",
    "L.rand_like(L.ones(2), dtype=L.float64)",
    "L.normal(L.zeros(2, 3), L.ones(6))", "L.normal(L.zeros(2, 3), L.ones(3))", "L.normal(L.zeros(3), L.ones(2, 3))",
    "L.normal(0, L.ones(2))", "L.normal(L.zeros(2), 2)", "L.normal(0, 1, (2, 3))", "L.normal(L.zeros(2), -1.)",
    "L.normal(L.zeros(2), -L.ones(2))", "L.normal(L.zeros(2, dtype=L.int64), 1.)",
    "L.normal(L.zeros(2), L.ones(2, dtype=L.float64))", "L.normal(L.zeros(2, dtype=L.float64), L.ones(2))",
    "L.normal(0., 1., (2,), dtype=L.int64)", "L.normal(0, L.ones(2, dtype=L.int64))",
    "L.normal(L.zeros(2, dtype=L.complex64), 1.)", "L.normal(0., 1., (2,), dtype=L.complex64)",
    "L.normal(0., -1., (2,))", "L.normal(L.zeros(2, dtype=L.float16), 1.)",
    "L.bernoulli(L.tensor([0, 1]))", "L.bernoulli(L.tensor([0., 2.]))", "L.bernoulli(L.tensor([0., 1.]), p=2.0)",
    "L.bernoulli(L.tensor([True, False]))", "L.bernoulli(L.tensor([nan]))", "L.bernoulli(L.tensor([3, 4]), 0.0)",
    "L.tensor([5, 5]).bernoulli_(0.0)", "L.tensor([5., 5]).bernoulli_(L.tensor([1, 0]))",
    "L.tensor([5., 5]).bernoulli_(L.tensor([1., 0, 1]))", "L.tensor([5., 5]).bernoulli_(1.5)",
    "L.tensor([True, False]).bernoulli_(1.0)", "L.ones(2).bernoulli_(L.tensor([[1., 0.]]))",
    "L.multinomial(L.tensor([1, 1]), 1)", "L.multinomial(L.tensor([-1., 1.]), 1)",
    "L.multinomial(L.tensor([0., 0.]), 1)",
    "L.multinomial(L.tensor([0., 1.]), 0)", "L.multinomial(L.tensor([0., 1.]), 3)", "L.multinomial(L.tensor(1.), 1)",
    "L.multinomial(L.ones(2, 2, 2), 1)", "L.multinomial(L.tensor([inf, 1.]), 1)",
    "L.multinomial(L.tensor([nan, 1.]), 1)",
    "L.multinomial(L.tensor([1., 1.], dtype=L.float16), 2)", "L.multinomial(L.ones(0, 2), 1)",
    "L.multinomial(L.ones(2, 0), 1)", "L.multinomial(L.tensor([0., 1.]), -1)",
    "L.poisson(L.tensor([0, 0]))", "L.poisson(L.tensor([-1.]))", "L.poisson(L.tensor([nan]))",
    "L.ones(2).uniform_(2, 1)", "L.ones(2, dtype=L.int64).uniform_()", "L.ones(2).uniform_(0, inf)",
    "L.ones(2).uniform_(-3e38, 3e38)", "L.ones(2).normal_(0, -1)", "L.ones(2, dtype=L.int64).normal_()",
    "L.ones(2).exponential_(0)", "L.ones(2).exponential_(-1)", "L.ones(2).exponential_(inf)",
    "L.ones(2, dtype=L.int64).exponential_()", "L.ones(2).geometric_(0)", "L.ones(2).geometric_(1)",
    "L.ones(2).geometric_(1.5)", "L.ones(2).cauchy_(0, 0)", "L.ones(2).cauchy_(0, -1)",
    "L.ones(2, dtype=L.int64).cauchy_()", "L.ones(2).log_normal_(0, 0)", "L.ones(2).log_normal_(0, -1)",
    "L.ones(2, dtype=L.int64).log_normal_()", "L.ones(3).random_(2, 2)", "L.ones(3, dtype=L.float16).random_(0, 2**40)",
    "L.ones(3, dtype=L.int32).random_(0, 2**40)", "L.ones(3, dtype=L.uint8).random_(-1, 2)",
    "L.ones(3, dtype=L.int8).random_(0, 2**40)", "L.ones(3, dtype=L.bool).random_(5)",
    "L.ones(3, dtype=L.bool).random_(-1, 2)", "L.ones(3, dtype=L.int16).random_(0, 2**20)",
    "L.ones(3, dtype=L.float16).random_(-70000, 0)", "L.ones(3, dtype=L.complex64).random_()",
    "L.manual_seed(1.5).initial_seed()", "L.manual_seed(-1).initial_seed()", "L.manual_seed(2**64)",
    "L.manual_seed(-2**63-1)", "L.Generator().manual_seed(True)", "L.Generator().manual_seed(1.5)",
    "L.Generator().manual_seed(2**64)", "L.Generator().initial_seed()",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_dtypes_shapes_and_errors_match_torch(expression):
    assert_same_outcome(expression, values=False)
    tm.manual_seed(0)
