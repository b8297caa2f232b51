"""Meta execution of factories, random ops, nn layers, convolutions and pooling beyond what the
op samples show: huge shapes allocate nothing, random ops draw nothing, shapes follow PyTorch."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes import nn
from tensormodes._ops.ranges import _tril_size

HUGE = (1_000_000, 64)


def _peak_bytes(function) -> int:
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make", [
    lambda: tm.zeros(*HUGE, device="meta"), lambda: tm.ones(HUGE, device="meta", dtype=tm.float64),
    lambda: tm.empty(*HUGE, device="meta"), lambda: tm.full(HUGE, 2.5, device="meta"),
    lambda: tm.arange(10 ** 12, device="meta"), lambda: tm.linspace(0, 1, 10 ** 9, device="meta"),
    lambda: tm.logspace(0, 1, 10 ** 9, device="meta"), lambda: tm.eye(10 ** 6, device="meta"),
    lambda: tm.tril_indices(10 ** 5, 10 ** 5, device="meta"), lambda: tm.rand(*HUGE, device="meta"),
    lambda: tm.randn(*HUGE, device="meta"), lambda: tm.randint(0, 5, HUGE, device="meta"),
    lambda: tm.randperm(10 ** 9, device="meta"), lambda: tm.normal(0.0, 1.0, HUGE, device="meta"),
    lambda: tm.zeros_like(tm.empty(*HUGE, device="meta")), lambda: tm.rand_like(tm.empty(*HUGE, device="meta")),
])
def test_huge_meta_factories_allocate_nothing(make):
    assert _peak_bytes(make) < 1 << 20


def test_meta_factory_shapes_and_dtypes():
    assert tm.arange(0, 10 ** 12, 3, device="meta").shape == (333_333_333_334,)
    assert tm.arange(0.5, 3, device="meta", dtype=tm.int64).shape == tm.arange(0.5, 3, dtype=tm.int64).shape
    t = tm.tril_indices(100_000, 100_000, device="meta")
    assert (t.shape, t.dtype) == ((2, 5_000_050_000), tm.int64)
    assert tm.full((2,), 7, device="meta").dtype == tm.int64
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        tm.full((10 ** 6,), 300, dtype=tm.int8, device="meta")


@pytest.mark.parametrize("row, col, offset", [(r, c, o) for r in range(5) for c in range(5) for o in range(-6, 7)])
def test_triangle_counts_match_numpy(row, col, offset):
    assert _tril_size(row, col, offset) == len(np.tril_indices(row, offset, col)[0])
    assert tm.triu_indices(row, col, offset, device="meta").shape == tm.triu_indices(row, col, offset).shape


def test_meta_like_factories_with_a_real_device_give_data():
    result = tm.ones_like(tm.empty(2, 3, device="meta", dtype=tm.int32), device="cpu")
    assert not result.is_meta and result.tolist() == [[1, 1, 1]] * 2


def test_random_ops_on_meta_draw_nothing():
    generator = tm.Generator().manual_seed(7)
    states = generator.get_state().tolist(), tm.default_generator.get_state().tolist()
    x = tm.empty(*HUGE, device="meta")
    tm.rand(3, device="meta", generator=generator)
    tm.randn_like(x)
    tm.normal(x, 1.0, generator=generator)
    tm.bernoulli(x)
    tm.multinomial(tm.empty(10, 5, device="meta"), 3, generator=generator)
    for sampler in (x.uniform_, x.normal_, x.exponential_, x.cauchy_, x.log_normal_):
        assert sampler() is x
    assert x.random_(0, 3, generator=generator) is x and x.bernoulli_(0.5) is x and x.geometric_(0.5) is x
    assert (generator.get_state().tolist(), tm.default_generator.get_state().tolist()) == states


def test_meta_linear_layer_and_init():
    states = tm.default_generator.get_state().tolist()
    layer = nn.Linear(64, 128, device="meta")
    nn.init.kaiming_uniform_(layer.weight)
    nn.init.xavier_normal_(layer.weight)
    out = layer(tm.empty(*HUGE, device="meta"))
    assert out.is_meta and out.shape == (HUGE[0], 128) and tm.default_generator.get_state().tolist() == states


def test_meta_convolution_and_pooling_shapes_match_torch():
    torch = pytest.importorskip("torch")
    x, w = tm.empty(8, 3, 224, 224, device="meta"), tm.empty(64, 3, 7, 7, device="meta")
    y = F.max_pool2d(tm.conv2d(x, w, stride=2, padding=3), 3, 2, 1, ceil_mode=True)
    tx, tw = torch.empty(8, 3, 224, 224, device="meta"), torch.empty(64, 3, 7, 7, device="meta")
    ty = torch.nn.functional.max_pool2d(torch.conv2d(tx, tw, stride=2, padding=3), 3, 2, 1, ceil_mode=True)
    assert tuple(y.shape) == tuple(ty.shape)
    z = F.conv_transpose2d(y, tm.empty(64, 8, 4, 4, device="meta"), stride=2, padding=1, output_padding=1)
    tz = torch.nn.functional.conv_transpose2d(ty, torch.empty(64, 8, 4, 4, device="meta"), stride=2, padding=1,
                                              output_padding=1)
    assert tuple(z.shape) == tuple(tz.shape)
    assert tuple(F.adaptive_avg_pool2d(z, (5, 7)).shape) == (8, 8, 5, 7)
