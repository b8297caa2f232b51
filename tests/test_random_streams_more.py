"""Same seed, same numbers, continued: the reduced-precision normals, alpha dropout, sparse
initialisation, ``gumbel_softmax``, ``poisson``, the gamma family and the transformer's draws.

The literals were produced by PyTorch 2.13 (CPU) with the same calls; the ``torch``-marked
tests compare against PyTorch directly (values bit for bit and the generator's state after).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm

from .test_random_streams import _same as _same_bits


def _seeded(seed: int = 0):
    tm.manual_seed(seed)
    return tm


def _same(expression: str, seeds=(0, 1, 7, 123)):
    """``expression`` (over ``L``) gives the same bits in both libraries after ``manual_seed``,
    and leaves the generator in the same state."""
    _same_bits(expression, seeds)


# -- reduced-precision normals -------------------------------------------------------------------------

def test_half_normals_draw_whole_blocks_then_a_fresh_tail():
    # 37 float16 normals: uniforms for the two whole blocks, then 16 fresh ones for the last 16
    assert _seeded(0).randn(37, dtype=tm.float16)[-4:].tolist() == [0.52294921875, 2.302734375, -1.46875,
                                                                     -1.5869140625]
    assert _seeded(0).randn(21, dtype=tm.bfloat16)[-6:].tolist() == [-0.173828125, 0.18359375, 1.390625,
                                                                      1.5859375, 0.9453125, -0.84375]


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.randn(17, dtype=L.float16)", "L.randn(37, dtype=L.float16)", "L.randn(1001, dtype=L.bfloat16)",
    "L.randn(3, 7, dtype=L.bfloat16)", "L.empty(37, dtype=L.float16).normal_(0.5, 2.0)",
    "L.empty(50, dtype=L.bfloat16).normal_(-1, 0.3)", "[L.randn(19, dtype=L.float16), L.rand(3)]",
])
def test_torch_reduced_precision_normals(expression):
    _same(expression)


# -- alpha dropout ---------------------------------------------------------------------------------------

def test_alpha_dropout_literals_and_identity_cases():
    F = tm.nn.functional
    low, high = -0.7791939377784729, 1.6655988693237305  # p = 0.5: dropped, kept (an input of ones)
    assert F.alpha_dropout(_seeded(0).ones(4), 0.5, True).tolist() == [low, low, high, low]
    assert F.alpha_dropout(_seeded(0).ones(6), 0.3, True).tolist() == [
        -1.059548258781433, -1.059548258781433, 1.315044641494751, -1.059548258781433, 1.315044641494751,
        -1.059548258781433]
    assert F.feature_alpha_dropout(_seeded(1).ones(2, 3, 2), 0.5, True).tolist() == [
        [[high, high]] * 3, [[high, high], [low, low], [high, high]]]
    x = tm.ones(3)
    assert F.alpha_dropout(x, 0.5) is x and F.alpha_dropout(x, 0.0, True) is x  # training defaults to False
    assert F.alpha_dropout(x, 1.0, True).tolist() == [0.0, 0.0, 0.0]
    y = tm.ones(4)
    assert F.alpha_dropout(y, 0.5, True, inplace=True) is y and sorted(set(y.tolist())) <= [low, high]
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.alpha_dropout(x, 1.5, True)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        F.feature_alpha_dropout(x, 0.5, True)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        F.alpha_dropout(tm.ones(3, dtype=tm.int64), 0.5, True)


def test_alpha_dropout_layers():
    layer = tm.nn.AlphaDropout(0.2)
    assert repr(layer) == "AlphaDropout(p=0.2, inplace=False)"
    assert repr(tm.nn.FeatureAlphaDropout()) == "FeatureAlphaDropout(p=0.5, inplace=False)"
    assert layer(_seeded(0).ones(4)).tolist() == tm.nn.functional.alpha_dropout(_seeded(0).ones(4), 0.2, True).tolist()
    assert layer.eval()(tm.ones(2)).tolist() == [1.0, 1.0]
    x = tm.randn(5, requires_grad=True)
    tm.nn.functional.alpha_dropout(x, 0.3, True).sum().backward()
    assert x.grad is not None and len(set(x.grad.tolist())) <= 2  # a (kept) or 0 (dropped)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        tm.nn.FeatureAlphaDropout(-0.1)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.functional.alpha_dropout(L.ones(20), 0.3, True)",
    "L.nn.functional.alpha_dropout(L.randn(4, 20, dtype=L.float64), 0.7, True)",
    "L.nn.functional.alpha_dropout(L.randn(40), 0.3, True, True)",
    "L.nn.functional.alpha_dropout(L.randn(40, dtype=L.bfloat16), 0.3, True)",
    "L.nn.functional.feature_alpha_dropout(L.randn(3, 4, 5), 0.4, True)",
    "L.nn.functional.feature_alpha_dropout(L.randn(2, 3, 2, 2, 2), 0.5, True)",
    "L.nn.AlphaDropout(0.1)(L.randn(30))", "L.nn.FeatureAlphaDropout(0.6)(L.randn(2, 8, 3))",
])
def test_torch_alpha_dropout(expression):
    _same(expression)


# -- randperm: the vectorised replay of the swaps --------------------------------------------------------

def _swapped(targets, n):
    order = list(range(n))
    for i, j in enumerate(targets):
        order[i], order[j] = order[j], order[i]
    return order


def test_vectorised_swaps_equal_the_sequential_ones():
    from tensormodes._ops._random_kernels import _apply_swaps

    generator = np.random.default_rng(5)
    for n in (2, 3, 4, 5, 8, 33, 1000, 65_537, 70_000, 140_000):  # 16-bit radix digits: one, one and a bit, two
        for _ in range(200 if n < 100 else 2):
            targets = np.arange(n - 1) + generator.integers(0, 2 ** 32, n - 1) % np.arange(n, 1, -1)
            assert _apply_swaps(targets, n).tolist() == _swapped(targets.tolist(), n), n
    # every step a self-swap, and every step swapping with the last position
    assert _apply_swaps(np.arange(9), 10).tolist() == list(range(10))
    assert _apply_swaps(np.full(9, 9), 10).tolist() == _swapped([9] * 9, 10)


def test_inside_out_randperm_equals_pytorchs_loop(monkeypatch):
    # PyTorch's randperm of 2**32 // 20 elements or more: r[i] = r[z], r[z] = i with z = random64() % (i + 1)
    from tensormodes._ops import _random_kernels as K
    from tensormodes._ops._mt19937 import MTStream

    def loop(stream, n):
        draws = stream.words64(n).tolist()
        r = list(range(n))
        for i in range(n):
            z = draws[i] % (i + 1)
            r[i], r[z] = r[z], i
        return r

    assert K._INSIDE_OUT_FROM == 214_748_364  # UINT32_MAX / 20 in C++
    for n in (2, 3, 7, 600, 70_000):
        for seed in (0, 5):
            ours, theirs = MTStream(seed), MTStream(seed)
            assert K._inside_out(ours, n).tolist() == loop(theirs, n), (n, seed)
            assert ours.words(2).tolist() == theirs.words(2).tolist()  # as many draws
    monkeypatch.setattr(K, "_INSIDE_OUT_FROM", 100)  # randperm switches at the threshold
    assert _seeded(3).randperm(100).tolist() == loop(MTStream(3), 100)
    assert _seeded(3).randperm(99).tolist() != loop(MTStream(3), 99)
    assert _seeded(3).randperm(4).tolist() == [2, 3, 1, 0]  # below it: Fisher–Yates (PyTorch gives these)


def test_large_randperm_literal():
    import hashlib

    p = _seeded(0).randperm(100_000)
    assert p[:5].tolist() == [36044, 73702, 76369, 2549, 52523] and p[-3:].tolist() == [47534, 99934, 84786]
    assert hashlib.sha256(p.numpy().tobytes()).hexdigest() == \
        "27df463fc2ed34f1872ba6e45cebe8746252c008e368e9eed203473cc8646f09"


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.randperm(1023)", "L.randperm(1024)", "L.randperm(65537)", "L.randperm(200_000)",
    "L.randperm(3000, dtype=L.float32)", "[L.randperm(5000), L.randperm(7)]",
])
def test_torch_large_randperm(expression):
    _same(expression, seeds=(0, 9))


# -- nn.init.sparse_ -------------------------------------------------------------------------------------

def test_sparse_init_literal_and_errors():
    w = tm.nn.init.sparse_(_seeded(0).empty(4, 3), 0.5, std=1.0)
    assert w.tolist() == [[0.0, 0.0, 0.0], [0.5684312582015991, 0.0, 0.0],
                          [0.40334683656692505, 0.8380263447761536, -0.7192575931549072],
                          [0.0, -0.5966353416442871, 0.18203648924827576]]
    # PyTorch draws the rows from the default generator even with ``generator=``
    g = tm.Generator().manual_seed(3)
    a = tm.nn.init.sparse_(_seeded(1).empty(6, 4), 0.5, generator=g)
    b = tm.nn.init.sparse_(_seeded(1).empty(6, 4), 0.5, generator=tm.Generator().manual_seed(3))
    assert a.tolist() == b.tolist() and (a == 0).sum(0).tolist() == [3, 3, 3, 3]
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        tm.nn.init.sparse_(tm.empty(3), 0.1)
    assert tm.nn.init.sparse_(tm.empty(0, 3), 0.2).shape == (0, 3)
    assert tm.nn.init.sparse_(tm.empty(4, 2, device="meta"), 0.2).is_meta


def test_in_place_samplers_fill_empty_tensors():
    for name in ("uniform_", "normal_", "exponential_", "bernoulli_", "cauchy_"):
        assert getattr(tm.empty(0, 3), name)().shape == (0, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tm.zeros(1).expand(3).normal_()


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.init.sparse_(L.empty(10, 4), 0.3)", "L.nn.init.sparse_(L.empty(40, 7), 0.5, std=2.0)",
    "L.nn.init.sparse_(L.empty(5, 3, dtype=L.float64), 0.0)",
    "L.nn.init.sparse_(L.empty(6, 3), 0.2, generator=L.Generator().manual_seed(3))",
    "L.nn.init.sparse_(L.empty(3, 0), 0.2)",
])
def test_torch_sparse_init(expression):
    _same(expression)


# -- strided inputs: drawn in memory order, as PyTorch's serial kernels --------------------------------

def test_like_functions_and_dropout_follow_the_inputs_memory_order():
    # rand_like of a transposed (3, 2): PyTorch's empty_like keeps the layout, filled in memory order
    assert _seeded(0).rand_like(tm.empty(3, 2).t()).tolist() == [
        [0.49625658988952637, 0.08847743272781372, 0.30742281675338745],
        [0.7682217955589294, 0.13203048706054688, 0.6340786814689636]]
    assert tm.nn.functional.dropout(_seeded(0).ones(4, 2).t(), 0.5).tolist() == [[0.0, 2.0, 0.0, 2.0],
                                                                                  [0.0, 0.0, 0.0, 2.0]]
    assert _seeded(0).empty(4, 2).t().bernoulli_(0.5).tolist() == [[0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]


def test_memory_axes_of_empty_like():
    from tensormodes._ops.random import strides_memory_axes

    assert strides_memory_axes((3, 4), (4, 1)) is None
    assert strides_memory_axes((4, 3), (1, 4)) == [1, 0]
    assert strides_memory_axes((2, 3, 4), (4, 8, 1)) == [1, 0, 2]
    # broadcast dimensions (stride 0) keep their place, as PyTorch's insertion sort leaves them
    assert strides_memory_axes((6, 5, 4, 3, 2), (6, 0, 120, 0, 1)) == [2, 1, 0, 3, 4]


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.rand_like(L.empty(3, 4).t())", "L.randn_like(L.empty(3, 40).t())", "L.randint_like(L.empty(3, 4).t(), 10)",
    "L.rand_like(L.empty(3, 8)[:, ::2].t())", "L.randn_like(L.empty(2, 4, 20)[:, ::2].permute(2, 0, 1))",
    "L.randint_like(L.zeros(4, 1, 5).expand(4, 3, 5).transpose(0, 2), 9)",
    "L.rand_like(L.empty(3, 4).t(), memory_format=L.contiguous_format)",
    "L.randn_like(L.empty(2, 3, 4, 5), memory_format=L.channels_last)",
    "L.empty(3, 4).t().bernoulli_(0.3)", "L.empty(2, 3, 4).permute(2, 0, 1).bernoulli_(0.3)",
    "L.nn.functional.dropout(L.randn(3, 2, 8).transpose(0, 1), 0.3)",
    "L.nn.functional.dropout(L.randn(3, 2, 8).transpose(0, 1), 0.3, True, True)",
    "L.nn.functional.alpha_dropout(L.randn(3, 2, 8).transpose(0, 1), 0.3, True)",
    "L.multinomial(L.rand(6, 3).t(), 2)", "L.multinomial(L.rand(6, 3).t(), 4, True)",
])
def test_torch_strided_draws(expression):
    _same(expression)


# -- transformer layers in training: the same dropout masks ----------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "(lambda m: (m.train(), m(L.randn(3, 2, 8)))[1])(L.nn.TransformerEncoderLayer(8, 2, 16))",
    "(lambda m: (m.train(), m(L.randn(2, 3, 8)))[1])(L.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, "
    "norm_first=True, dropout=0.5))",
    "(lambda m: (m.train(), m(L.randn(2, 3, 8), src_key_padding_mask=L.tensor([[False, False, True], "
    "[False, True, True]])))[1])(L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, "
    "enable_nested_tensor=False))",
    "(lambda m: (m.train(), m(L.randn(2, 3, 8), L.randn(2, 4, 8)))[1])(L.nn.Transformer(8, 2, 2, 2, 16, "
    "batch_first=True))",
])
def test_torch_transformer_training_forward(expression):
    """The draws are PyTorch's (the generator ends in PyTorch's state and a different mask would
    change values by O(1)); the values agree to float32 rounding (matmul and softmax round
    differently in their last bits, which is not a matter of the random stream)."""
    torch = pytest.importorskip("torch")
    for seed in (0, 5):
        torch.manual_seed(seed)
        expected = eval(expression, {"L": torch}).detach().numpy()
        torch_state = torch.get_rng_state().tolist()
        tm.manual_seed(seed)
        got = eval(expression, {"L": tm}).detach().numpy()
        assert tm.get_rng_state().tolist() == torch_state
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# -- rejection samplers: poisson, gamma, Dirichlet ------------------------------------------------------

def test_rejection_sampler_literals():
    assert _seeded(2).poisson(tm.tensor([0.5, 4.0, 15.0, 300.0])).tolist() == [1.0, 5.0, 17.0, 271.0]
    assert _seeded(0)._standard_gamma(tm.tensor([0.5, 2.0, 9.0])).tolist() == [
        0.0007893581641837955, 0.6315405964851379, 9.147442817687988]
    assert _seeded(1)._sample_dirichlet(tm.tensor([[1.0, 2.0, 3.0]], dtype=tm.float64)).tolist() == [
        [0.253080149942608, 0.37724730900639375, 0.3696725410509982]]
    # a zero rate draws nothing; a zero concentration gives 0, clamped to the smallest normal
    tm.manual_seed(3)
    state = tm.get_rng_state().tolist()
    assert tm.poisson(tm.zeros(4)).tolist() == [0.0] * 4 and tm.get_rng_state().tolist() == state
    tiny = tm.finfo(tm.float32).tiny
    assert tm._standard_gamma(tm.tensor([0.0, -1.0, float("nan")])).tolist() == [tiny] * 3


def test_rejection_sampler_errors():
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        tm.poisson(tm.tensor([1.0, -1.0]))
    with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Half'"):
        tm._standard_gamma(tm.ones(2, dtype=tm.float16))
    with pytest.raises(NotImplementedError, match="\"dirichlet\" not implemented for 'Long'"):
        tm._sample_dirichlet(tm.ones(2, dtype=tm.int64))
    assert tm._standard_gamma(tm.ones(3, 2, device="meta")).shape == (3, 2)


def test_gamma_and_beta_sample_pytorchs_numbers():
    g = tm.distributions.Gamma(tm.tensor([0.5, 2.0]), tm.tensor([1.0, 4.0]))
    tm.manual_seed(0)
    expected = tm._standard_gamma(tm.tensor([[0.5, 2.0]] * 3)) / tm.tensor([1.0, 4.0])
    assert _seeded(0) and g.sample((3,)).tolist() == expected.tolist()
    b = tm.distributions.Beta(tm.tensor([0.5]), tm.tensor([2.0]))
    tm.manual_seed(1)
    expected = tm._sample_dirichlet(tm.tensor([[[0.5, 2.0]]] * 2))[..., 0]
    tm.manual_seed(1)
    assert b.sample((2,)).tolist() == expected.tolist()


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.poisson(L.rand(50) * 20)", "L.poisson(L.rand(50) * 5)", "L.poisson(L.rand(3, 50, dtype=L.float64) * 100)",
    "L.poisson(L.tensor([0., 1e6, 3.5]))", "L.poisson(L.rand(20, dtype=L.float16) * 30)",
    "L.poisson(L.rand(6, 5).t() * 12)",
    "L._standard_gamma(L.rand(100) * 3)", "L._standard_gamma(L.rand(100, dtype=L.float64) * 3)",
    "L._standard_gamma(L.tensor([0., -1., float('nan'), float('inf'), 1e-3, 1e5]))",
    "[L.randn(1), L._standard_gamma(L.tensor([3.0, 4.0])), L.randn(3)]",
    "L._sample_dirichlet(L.rand(4, 3) * 3)", "L._sample_dirichlet(L.rand(4, 2, dtype=L.float64) * 3)",
    "L._sample_dirichlet(L.rand(4, 20) + 0.1)",
    "L.distributions.Gamma(L.tensor([0.5, 2.0, 9.0]), L.tensor([1.0, 1.0, 3.0])).sample((4,))",
    "L.distributions.Gamma(2.0, 3.0).rsample((5,))",
    "L.distributions.Beta(L.tensor([0.5, 2.0]), L.tensor([1.0, 3.0])).sample((4,))",
    "L.distributions.Beta(0.5, 2.0).sample((3,))",
])
def test_torch_rejection_samplers(expression):
    _same(expression)


def test_dirichlet_distribution():
    D = tm.distributions
    d = D.Dirichlet(tm.tensor([1.0, 2.0, 0.5]))
    assert _seeded(4) and d.sample((2,)).tolist() == [
        [0.18749156594276428, 0.8027921319007874, 0.009716309607028961],
        [0.10888375341892242, 0.720323383808136, 0.1707928329706192]]
    assert d.batch_shape == () and d.event_shape == (3,) and d.mean.tolist() == pytest.approx([2 / 7, 4 / 7, 1 / 7])
    assert D.Dirichlet(tm.tensor([1.0, 2.0])).expand((3,)).sample().shape == (3, 2)
    with pytest.raises(ValueError, match="`concentration` parameter must be at least one-dimensional."):
        D.Dirichlet(tm.tensor(1.0))
    with pytest.raises(ValueError, match="to satisfy the constraint IndependentConstraint"):
        D.Dirichlet(tm.tensor([1.0, -1.0]))
    with pytest.raises(NotImplementedError, match="_standard_gamma_grad"):
        D.Dirichlet(tm.tensor([1.0, 2.0], requires_grad=True)).rsample()


@pytest.mark.torch
def test_torch_dirichlet_moments_and_kl():
    torch = pytest.importorskip("torch")
    values = [[1.0, 2.0, 0.5], [0.3, 0.2, 0.9]]

    def moments(L):
        d = L.distributions.Dirichlet(L.tensor(values))
        q = L.distributions.Dirichlet(L.tensor(values[::-1]))
        return [d.mean, d.variance, d.mode, d.entropy(), d.log_prob(L.tensor([0.2, 0.3, 0.5])),
                L.distributions.kl_divergence(d, q)]

    for ours, theirs in zip(moments(tm), moments(torch), strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)
    _same("L.distributions.Dirichlet(L.rand(2, 3) + 0.5).rsample((2,))")


# -- the fast float32 normal kernel equals the reference polynomials on every input it can meet ---------

@pytest.mark.slow
def test_fast_log_and_sincos_equal_the_reference_on_all_their_inputs():
    from tensormodes._ops import _random_math as M

    f32 = np.float32
    mismatches = 0
    step = 1 << 20
    work = M._Work(step)
    radius, sin, cos = (np.empty(step, f32) for _ in range(3))
    for start in range(0, 1 << 24, step):
        k = np.arange(start, start + step, dtype=np.uint32)
        u = k.astype(f32) * f32(2.0 ** -24)
        M._radius_of(k, work, radius)
        reference = np.sqrt(M.log256(f32(1) - u).astype(f32) * f32(-2))
        mismatches += np.count_nonzero(reference.view(np.int32) != radius.view(np.int32))
        reference_sin, reference_cos = M.sincos256((f32(M._TWO_PI_32) * u).astype(np.float64))
        M._sincos_of(k, work, sin, cos)
        mismatches += np.count_nonzero(reference_sin.astype(f32).view(np.int32) != sin.view(np.int32))
        mismatches += np.count_nonzero(reference_cos.astype(f32).view(np.int32) != cos.view(np.int32))
    assert mismatches == 0


@pytest.mark.torch
@pytest.mark.parametrize("hard", [False, True])
def test_torch_gumbel_softmax_draws(hard):
    """PyTorch's draws (``exponential_`` of an empty tensor like the logits) and its generator state;
    the soft values agree to float32 rounding (its ``log`` and ``softmax`` round their last bits
    their own way), the hard one-hot vectors exactly."""
    torch = pytest.importorskip("torch")
    for seed in (0, 3):
        torch.manual_seed(seed)
        expected = torch.nn.functional.gumbel_softmax(torch.arange(12.0).reshape(3, 4), tau=0.5, hard=hard)
        torch_state = torch.get_rng_state().tolist()
        tm.manual_seed(seed)
        got = tm.nn.functional.gumbel_softmax(tm.arange(12.0).reshape(3, 4), tau=0.5, hard=hard)
        assert tm.get_rng_state().tolist() == torch_state
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)


def test_float32_normal_kernel_gives_positive_zero_where_the_radius_is_zero():
    from tensormodes._ops import _random_math as M

    # words whose low 24 bits are 0 give u = 0, so a radius of -0 (sqrt(-2 * +0)); angles of 0.2 pi and 1.2 pi
    # have a positive and a negative sine and cosine, so products of -0 and +0, and the kernel's fused
    # n * 1 + 0 turns the -0 into +0
    radius_words = np.full(8, 3 << 24, np.uint32)  # the high byte is not part of the uniform
    angle_words = np.repeat(np.array([0.1, 0.6]) * 2 ** 24, 4).astype(np.uint32)
    other = np.arange(1, 17, dtype=np.uint32) << 12  # a block with no zero radius before it
    out = M.fill_normal16_words(np.concatenate([other, radius_words, angle_words]), 0.0, 1.0)
    assert out[16:].tolist() == [0.0] * 16 and not np.signbit(out[16:]).any()
    assert np.all(out[:16] != 0)


def test_randint_draws_64_bits_from_a_range_of_2_to_the_28():
    # PyTorch's released builds draw random64() for a range of 2**28 or more, whatever the dtype (its other
    # branch, 2**32 and int64/float/double/bfloat16 only, is compiled into Meta's internal builds)
    assert _seeded(1).randint(0, (1 << 28) - 1, (3,)).tolist() == [180483115, 256344314, 140980119]
    assert _seeded(1).randint(0, 1 << 28, (3,)).tolist() == [256344299, 247206984, 13419401]
    assert _seeded(1).randint(0, 1 << 29, (3,), dtype=tm.int32).tolist() == [524779755, 247206984, 13419401]
    assert _seeded(1).empty(3, dtype=tm.int64).random_(0, 1 << 30).tolist() == [1061650667, 784077896, 550290313]


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.randint(0, 2**28 - 1, (40,))", "L.randint(0, 2**28, (40,))", "L.randint(-2**27, 2**27, (9,))",
    "L.randint(0, 2**31 - 1, (9,), dtype=L.int32)", "L.randint(0, 2**30, (9,), dtype=L.float64)",
    "L.empty(9, dtype=L.int64).random_(-2**40, 2**40)", "L.empty(9, dtype=L.int32).random_(-2**31, 2**31 - 1)",
])
def test_torch_randint_wide_ranges(expression):
    _same(expression, seeds=(0, 9))


# -- floating randint beyond the exact integers: PyTorch moves a bound that rounds outward -----------------

@pytest.mark.filterwarnings("ignore:.*is out of bounds")
def test_floating_randint_bounds_move_inward_where_they_round_outward():
    # bfloat16 rounds 299 (to - 1) up to 300, so PyTorch samples [0, 298): draw % 298 (values from torch 2.13)
    assert _seeded(0).randint(0, 300, (4,), dtype=tm.bfloat16).tolist() == [148.0, 53.0, 69.0, 258.0]
    # float32 rounds 2**25 + 6 up to 2**25 + 8: [0, 2**25 + 4)
    assert _seeded(0).randint(0, 2 ** 25 + 7, (3,), dtype=tm.float32).tolist() == [8325524.0, 29665540.0,
                                                                                   18261256.0]
    assert _seeded(0).empty(2, dtype=tm.float16).random_(0, 65504).tolist() == [13104.0, 42144.0]
    # from + 1 = 2**25 + 2 rounds down to 2**25: from moves up to 2**25 + 4, past to
    with pytest.raises(RuntimeError, match=r"^random_ expects 'from' casted to dtype to be less than 'to' casted to "
                                           r"dtype, but got from=33554436 >= to=33554435$"):
        tm.empty(3).random_(2 ** 25 + 1, 2 ** 25 + 3)


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:.*is out of bounds")
@pytest.mark.parametrize("expression", [
    "L.randint(0, 300, (40,), dtype=L.bfloat16)", "L.randint(3, 1000, (40,), dtype=L.bfloat16)",
    "L.randint(-2**26, 2**26, (40,), dtype=L.bfloat16)", "L.randint(0, 2**30, (40,), dtype=L.float32)",
    "L.randint(-(2**25 + 7), 2**25 + 7, (40,), dtype=L.float32)", "L.randint(0, 65504, (40,), dtype=L.float16)",
    "L.randint(2**25 + 1, 2**25 + 9, (9,), dtype=L.float32)", "L.randint_like(L.zeros(9, dtype=L.bfloat16), 3, 999)",
    "L.empty(40, dtype=L.bfloat16).random_(-(2**30) - 5, 2**31 + 3)", "L.empty(9, dtype=L.float64).random_(0, 2**60)",
])
def test_torch_floating_randint_beyond_the_exact_integers(expression):
    _same(expression, seeds=(0, 9))
