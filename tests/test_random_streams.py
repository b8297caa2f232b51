"""Same seed, same numbers: tensormodes' random functions return PyTorch 2.13's CPU values.

The literals were produced by PyTorch 2.13 (CPU) with the same calls; the ``torch``-marked
tests compare against PyTorch directly over many seeds, shapes and dtypes.
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.utils.data import DataLoader, RandomSampler, TensorDataset, random_split


def _seeded(seed: int = 0):
    tm.manual_seed(seed)
    return tm


# -- exact literals (no torch needed) ----------------------------------------------------------------

def test_randn_below_16_is_scalar_box_muller_with_the_cache():
    assert _seeded(0).randn(3).tolist() == [1.5409960746765137, -0.293428897857666, -2.1787893772125244]
    _seeded(0)
    assert tm.randn(5, dtype=tm.float64).tolist() == [1.5409961082440433, -0.2934289057609464, -2.1787893820745574,
                                                      0.5684312772806678, -1.084522342424021]
    # the second value of the last pair was cached: the next call starts with it
    assert tm.randn(3, dtype=tm.float64).tolist() == [-1.3985953953708767, 0.4033468476292993, 0.8380263329976598]


def test_randn_of_16_or_more_is_the_blockwise_kernel():
    assert _seeded(0).randn(20).tolist() == [
        -1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383, 0.5988394618034363,
        -1.5550950765609741, -0.3413603901863098, 1.85300612449646, 0.46809640526771545, -0.1577124446630478,
        1.4436601400375366, 0.26604941487312317, 1.3893661499023438, 1.586334228515625, 0.946298360824585,
        -0.843676745891571, 0.9318265914916992, 1.2590092420578003, 2.0049805641174316, 0.05373690277338028]
    assert _seeded(0).randn(17, dtype=tm.float64)[-3:].tolist() == [-0.4484158047114511, -0.8910030351707375,
                                                                     0.6748575435940039]


def test_rand_float32_float64_and_half_types():
    assert _seeded(0).rand(4).tolist() == [0.49625658988952637, 0.7682217955589294, 0.08847743272781372,
                                          0.13203048706054688]
    assert _seeded(0).rand(4, dtype=tm.float64).tolist() == [0.9700530018065531, 0.707819864399788,
                                                             0.45938294312745087, 0.9207476841219603]
    assert _seeded(0).rand(3, dtype=tm.float16).tolist() == [0.496337890625, 0.76806640625, 0.0885009765625]
    assert tm.randn(3, dtype=tm.bfloat16).tolist() == [0.365234375, 0.134765625, 0.1640625]
    assert _seeded(0).randn(2, dtype=tm.complex64).tolist() == [
        complex(1.0896488428115845, -0.20748557150363922), complex(-1.5406367778778076, 0.40194159746170044)]


def test_integers_permutations_and_bernoulli():
    _seeded(42)
    assert tm.randint(-5, 100, (8,)).tolist() == [52, -3, 41, 14, 76, 75, 35, 84]
    assert tm.randint(0, 2 ** 40, (2,)).tolist() == [440001501305, 902372521174]  # 64-bit draws
    assert _seeded(42).randperm(10).tolist() == [2, 6, 1, 8, 4, 5, 0, 9, 3, 7]
    assert _seeded(1).empty(12).bernoulli_(0.3).tolist() == [1.0] * 4 + [0.0, 1.0] + [0.0] * 6
    assert F.dropout(_seeded(1).ones(8), 0.5).tolist() == [2.0, 2.0, 2.0, 2.0, 0.0, 2.0, 2.0, 0.0]
    _seeded(1)
    probabilities = tm.tensor([0.1, 0.2, 0.3, 0.4])
    assert tm.multinomial(probabilities, 2).tolist() == [3, 0]
    assert tm.multinomial(probabilities, 6, True).tolist() == [2, 1, 2, 3, 2, 2]


def test_other_distributions():
    _seeded(1)
    assert tm.empty(3).exponential_(2.0).tolist() == [0.031498268246650696, 0.12715879082679749,
                                                      0.1334514021873474]
    assert tm.empty(3).geometric_(0.3).tolist() == [5.0, 2.0, 7.0]
    assert tm.empty(2).cauchy_().tolist() == [-0.1234167292714119, 0.7674864530563354]
    assert tm.empty(2).log_normal_().tolist() == [0.34811681509017944, 0.8815217614173889]


def test_layer_initialisation_is_pytorchs():
    tm.manual_seed(7)
    assert tm.nn.Linear(4, 3).weight[0].tolist() == [0.03492254018783569, -0.301196813583374, 0.15921169519424438,
                                                     0.15689027309417725]


def test_seeds_wrap_and_the_default_seed_of_a_new_generator():
    g = tm.Generator()
    assert g.initial_seed() == 67280421310721
    assert tm.rand(2, generator=g).tolist() == [0.267295241355896, 0.8725283145904541]
    tm.manual_seed(-1)
    assert tm.initial_seed() == 2 ** 64 - 1 and tm.rand(1).tolist() == [0.9937993884086609]
    tm.manual_seed(2 ** 32 + 5)  # the engine takes the low 32 bits; initial_seed keeps all 64
    assert tm.initial_seed() == 2 ** 32 + 5 and tm.rand(1).tolist() == [0.8302518725395203]
    assert _seeded(5).rand(1).tolist() == [0.8302518725395203]


def test_get_rng_state_is_pytorchs_byte_layout():
    tm.manual_seed(3)
    tm.randn(3)
    state = tm.get_rng_state()
    assert state.dtype == tm.uint8 and tuple(state.shape) == (5056,)
    data = bytes(state.tolist())
    # PyTorch 2.13's bytes after the same calls
    assert hashlib.sha256(data).hexdigest() == "60c5d6f721840f26b3be3904dee80304f9b810d2c5e11ab1a1364c9e105d6fe1"
    assert list(data[:24]) == [3, 0, 0, 0, 0, 0, 0, 0, 105, 2, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0]
    # the cached Box–Muller value sits in the legacy normal_y slot, flagged by normal_is_valid
    normal_y, valid = struct.unpack_from("<d", data, 5024)[0], struct.unpack_from("<i", data, 5040)[0]
    assert valid == 1 and normal_y == -0.6137180077293578


def test_set_rng_state_from_crafted_bytes_uses_the_cache_slot():
    tm.manual_seed(0)
    data = bytearray(bytes(tm.get_rng_state().tolist()))
    struct.pack_into("<d", data, 5024, 0.25)
    struct.pack_into("<i", data, 5040, 1)
    tm.set_rng_state(tm.tensor(list(data), dtype=tm.uint8))
    assert tm.randn(1, dtype=tm.float64).tolist() == [0.25]  # the cache comes first
    assert tm.randn(1).tolist() == [1.5409960746765137]  # then seed 0's stream, untouched
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG "
                                           "state size to be 10"):
        tm.set_rng_state(tm.zeros(10, dtype=tm.uint8))
    with pytest.raises(TypeError, match="RNG state must be a tensormodes.ByteTensor"):
        tm.set_rng_state(tm.zeros(5056))
    broken = bytearray(data)
    struct.pack_into("<i", broken, 12, 0)  # not seeded
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        tm.set_rng_state(tm.tensor(list(broken), dtype=tm.uint8))


def test_generator_state_round_trip_and_independence():
    g = tm.Generator().manual_seed(9)
    tm.randn(5, generator=g)  # leaves a cached value
    state = g.get_state()
    a = tm.randn(7, generator=g)
    other = tm.Generator().set_state(state)
    assert tm.randn(7, generator=other).tolist() == a.tolist()
    assert g.get_state().tolist() == other.get_state().tolist()
    assert tm.manual_seed(9) is tm.default_generator


def test_manual_seed_clears_the_cached_normal():
    tm.manual_seed(0)
    tm.randn(1)
    tm.manual_seed(0)
    assert tm.randn(3).tolist() == [1.5409960746765137, -0.293428897857666, -2.1787893772125244]


def test_meta_tensors_draw_nothing():
    tm.manual_seed(0)
    tm.randn(100, device="meta")
    tm.empty(30, device="meta").uniform_()
    F.dropout(tm.ones(8, device="meta"), 0.5)
    assert tm.rand(4).tolist() == [0.49625658988952637, 0.7682217955589294, 0.08847743272781372,
                                   0.13203048706054688]


def test_modes_see_random_calls():
    from tensormodes.modes import OpCounterMode

    with OpCounterMode() as counter:
        tm.randn(20)
        tm.empty(3).uniform_()
    assert counter.counts["tensormodes.randn"] == 1 and counter.counts["tensormodes.Tensor.uniform_"] == 1


def test_data_orders():
    ds = TensorDataset(tm.arange(5))
    loader = DataLoader(ds, batch_size=2, shuffle=True, generator=tm.Generator().manual_seed(0))
    assert [b[0].tolist() for b in loader] == [[3, 1], [0, 4], [2]]
    assert [b[0].tolist() for b in loader] == [[1, 4], [3, 2], [0]]
    tm.manual_seed(2)
    assert list(RandomSampler(range(7), replacement=True, num_samples=5)) == [3, 2, 2, 5, 3]
    parts = random_split(range(10), [0.3, 0.7], generator=tm.Generator().manual_seed(3))
    assert [list(p) for p in parts] == [[6, 0, 3], [7, 8, 5, 1, 9, 2, 4]]


def test_large_randn_has_the_standard_moments():
    x = _seeded(0).randn(100_000).numpy()
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01 and np.isfinite(x).all()


# -- cross-checks against PyTorch --------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


def _same(expression: str, seeds=(0, 1, 7, 123, 2 ** 32 + 1, 2 ** 63 + 11)):
    """``expression`` (over ``L``) after ``L.manual_seed(seed)`` gives the same bits in both libraries,
    and leaves the generator in the same state."""
    torch = _torch()
    for seed in seeds:
        torch.manual_seed(seed)
        expected = eval(expression, {"L": torch})
        torch_state = torch.get_rng_state().tolist()
        tm.manual_seed(seed)
        got = eval(expression, {"L": tm})
        if isinstance(expected, torch.Tensor):
            expected, got = [expected], [got]
        for e, g in zip(expected, got, strict=True):
            e = e.detach()
            e_np = (e.float() if e.dtype == torch.bfloat16 else e).numpy()
            g_np = g.detach().float().numpy() if g.dtype == tm.bfloat16 else g.detach().numpy()
            assert e_np.dtype == g_np.dtype and e_np.shape == g_np.shape, expression
            e_np, g_np = np.ascontiguousarray(e_np), np.ascontiguousarray(g_np)
            assert np.array_equal(e_np.view(np.uint8), g_np.view(np.uint8)), (expression, seed)
        assert tm.get_rng_state().tolist() == torch_state, (expression, seed)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [0, 1, 5, 15, 16, 17, 31, 32, 100, 1001])
def test_torch_rand_randn(dtype, size):
    _same(f"[L.rand({size}, dtype=L.{dtype}), L.randn({size}, dtype=L.{dtype}), L.randn(3, dtype=L.{dtype})]")


@pytest.mark.torch
def test_torch_randn_large_blocks_exactly():
    _same("L.randn(200_003)", seeds=(5,))


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.rand(3, 4, dtype=L.float16)", "L.randn(7, dtype=L.bfloat16)", "L.rand(40, dtype=L.bfloat16)",
    "L.randn(2, 3, dtype=L.complex64)", "L.rand(5, dtype=L.complex128)", "L.randn(32, dtype=L.float16)",
    "L.rand_like(L.zeros(3, 3))", "L.randn_like(L.zeros(20, dtype=L.float64))", "L.randint_like(L.zeros(9), 2, 7)",
    "L.empty(33).uniform_(-2.5, 0.75)", "L.empty(9, dtype=L.float64).uniform_(1, 3)",
    "L.empty(40).normal_(0.5, 2.0)", "L.empty(7).normal_(-1, 0.1)", "L.empty(20, dtype=L.float64).normal_(3, 4)",
    "L.empty(4, 6).t().normal_()", "L.empty(5, 7).t().uniform_()", "L.normal(2.0, 3.0, size=(19,))",
    "L.normal(L.arange(20.), L.arange(20.) / 10)", "L.normal(L.arange(5.), 2.0)", "L.normal(1.0, L.arange(17.))",
    "L.randint(0, 10, (50,))", "L.randint(-3, 3, (4, 5), dtype=L.int8)", "L.randint(5, (6,), dtype=L.float32)",
    "L.randint(-2**40, 2**40, (9,))", "L.randint(0, 2**33, (4,), dtype=L.float64)",
    "L.randperm(1)", "L.randperm(2)", "L.randperm(100)", "L.randperm(5000)", "L.randperm(9, dtype=L.float32)",
    "L.empty(30, dtype=L.int64).random_()", "L.empty(30, dtype=L.int32).random_()",
    "L.empty(30, dtype=L.uint8).random_()", "L.empty(30, dtype=L.bool).random_()",
    "L.empty(30).random_()", "L.empty(30, dtype=L.float64).random_()", "L.empty(30, dtype=L.int16).random_(7)",
    "L.empty(30, dtype=L.int64).random_(-9, 9)",
    "L.empty(40).bernoulli_(0.25)", "L.empty(3, 4, dtype=L.int64).bernoulli_(0.5)",
    "L.bernoulli(L.rand(30))", "L.bernoulli(L.rand(30, dtype=L.float64))", "L.bernoulli(L.zeros(9), 0.7)",
    "L.empty(4, 5).bernoulli_(L.rand(5))",
    "L.empty(30).exponential_(0.5)", "L.empty(30, dtype=L.float64).exponential_()",
    "L.empty(30).geometric_(0.2)", "L.empty(30, dtype=L.int64).geometric_(0.6)",
    "L.empty(30).cauchy_(1.0, 0.5)", "L.empty(31, dtype=L.float64).log_normal_(0.2, 0.7)",
    "L.multinomial(L.rand(3, 8), 5)", "L.multinomial(L.rand(8, dtype=L.float64), 8)",
    "L.multinomial(L.rand(2, 6), 20, True)", "L.multinomial(L.rand(6), 1, True)",
    "L.nn.functional.dropout(L.ones(6, 7), 0.3)", "L.nn.functional.dropout2d(L.ones(3, 5, 2, 2), 0.4)",
    "L.nn.functional.dropout1d(L.ones(2, 6, 3), 0.5)", "L.nn.Dropout(0.2)(L.ones(50))",
])
def test_torch_random_functions(expression):
    _same(expression)


@pytest.mark.torch
@pytest.mark.parametrize("layer", [
    "L.nn.Linear(5, 3)", "L.nn.Conv2d(3, 4, 3)", "L.nn.Conv1d(2, 3, 5, bias=False)", "L.nn.Embedding(7, 3)",
    "L.nn.LSTM(4, 6, num_layers=2)", "L.nn.GRU(3, 5)", "L.nn.MultiheadAttention(8, 2)",
    "L.nn.TransformerEncoderLayer(8, 2, 16)", "L.nn.BatchNorm1d(4)", "L.nn.LayerNorm(5)",
])
def test_torch_default_initialisation(layer):
    _same(f"list({layer}.parameters())", seeds=(0, 3))


@pytest.mark.torch
@pytest.mark.parametrize("init", [
    "uniform_(w, -0.3, 0.2)", "normal_(w, 0.1, 0.02)", "xavier_uniform_(w)", "xavier_normal_(w, gain=2.0)",
    "kaiming_uniform_(w, a=0.1)", "kaiming_normal_(w, mode='fan_out')", "trunc_normal_(w, std=0.02)",
    "trunc_normal_(w, a=-0.1, b=0.3)", "trunc_normal_(w, mean=1, std=0.5, a=0, b=0.2)",
])
def test_torch_nn_init(init):
    _same(f"(lambda w: L.nn.init.{init})(L.empty(12, 9))", seeds=(0, 4))


@pytest.mark.torch
def test_torch_state_restores_here_and_back():
    torch = _torch()
    torch.manual_seed(17)
    torch.randn(3)  # a cached normal in the state
    torch.rand(700)  # past one engine refill
    state = torch.get_rng_state()
    tm.set_rng_state(tm.tensor(state.tolist(), dtype=tm.uint8))
    assert tm.randn(9).tolist() == torch.randn(9).tolist()
    assert tm.get_rng_state().tolist() == torch.get_rng_state().tolist()
    g = torch.Generator().manual_seed(5)
    ours = tm.Generator().set_state(tm.tensor(g.get_state().tolist(), dtype=tm.uint8))
    assert tm.rand(4, generator=ours).tolist() == torch.rand(4, generator=g).tolist()
    back = torch.Generator().set_state(torch.tensor(ours.get_state().tolist(), dtype=torch.uint8))
    assert torch.rand(3, generator=back).tolist() == tm.rand(3, generator=ours).tolist()


@pytest.mark.torch
def test_torch_fresh_generator_state_bytes():
    torch = _torch()
    for seed in (0, 1, 2 ** 64 - 1):
        assert tm.Generator().manual_seed(seed).get_state().tolist() == \
            torch.Generator().manual_seed(seed).get_state().tolist()


@pytest.mark.torch
def test_torch_data_orders():
    torch = _torch()

    def orders(L):
        out = []
        ds = L.utils.data.TensorDataset(L.arange(10))
        for options in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": 5}):
            L.manual_seed(1)
            loader = L.utils.data.DataLoader(ds, shuffle=True, **options)
            g = L.Generator().manual_seed(4)
            seeded = L.utils.data.DataLoader(ds, shuffle=True, generator=g, **options)
            for _ in range(2):
                out += [[b[0].tolist() for b in loader], L.rand(2).tolist()]
                out += [[b[0].tolist() for b in seeded], L.rand(2, generator=g).tolist()]
        L.manual_seed(2)
        out.append(list(L.utils.data.RandomSampler(range(7), replacement=True, num_samples=70)))
        out.append(list(L.utils.data.RandomSampler(range(7), num_samples=17)) + L.rand(1).tolist())
        g = L.Generator().manual_seed(3)
        out.append([list(p) for p in L.utils.data.random_split(range(11), [0.3, 0.3, 0.4], generator=g)])
        out.append(list(L.utils.data.WeightedRandomSampler([0.1, 0.5, 0.4], 12, generator=g)))
        out.append(list(L.utils.data.SubsetRandomSampler([5, 6, 7, 8], generator=g)))
        return out

    assert orders(tm) == orders(torch)


def test_fork_rng_restores_the_state_and_the_cache():
    tm.manual_seed(4)
    tm.randn(1)  # leaves a cached normal
    expected_state = tm.get_rng_state().tolist()
    with tm.random.fork_rng():
        tm.randn(50)
        tm.manual_seed(99)
    assert tm.get_rng_state().tolist() == expected_state
    with tm.random.fork_rng(enabled=False):
        tm.rand(1)
    assert tm.get_rng_state().tolist() != expected_state
    with pytest.raises(ValueError), tm.random.fork_rng():
        tm.rand(3)
        raise ValueError
    assert tm.random.initial_seed() == 4 and tm.random.manual_seed(4) is tm.default_generator


@pytest.mark.torch
def test_torch_fork_rng():
    _same("[L.randn(3), (lambda f: (f.__enter__(), L.randn(40), f.__exit__(None, None, None)))(L.random.fork_rng())[1],"
          " L.randn(3)]")


def test_clone_state_copies_the_stream():
    g = tm.Generator().manual_seed(6)
    tm.randn(3, generator=g)
    clone = g.clone_state()
    assert tm.randn(5, generator=clone).tolist() == tm.randn(5, generator=g).tolist()
