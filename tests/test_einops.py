"""einops finds a backend for tensormodes tensors by itself (no ``import tensormodes as torch``).

einops is an optional test dependency (the ``test`` extra): without it these tests skip."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm

einops = pytest.importorskip("einops")


def test_einops_picks_the_tensormodes_backend():
    from einops._backends import get_backend

    assert get_backend(tm.zeros(1)).framework_name == "tensormodes"
    assert get_backend(tm.nn.Parameter(tm.zeros(1))).framework_name == "tensormodes"


@pytest.mark.parametrize("call", [
    "einops.rearrange(x, 'b h w -> b (w h)')",
    "einops.rearrange(x, 'b h (w c) -> (b c) h w', c=2)",
    "einops.reduce(x, 'b h w -> b', 'max')",
    "einops.reduce(x, 'b h w -> h', 'mean')",
    "einops.reduce(x, 'b h w -> w', 'min')",
    "einops.reduce(x, 'b h w -> b w', 'sum')",
    "einops.reduce(x, 'b h w -> b', 'prod')",
    "einops.reduce(x, 'b (h h2) w -> b h w', 'max', h2=3)",
    "einops.repeat(x, 'b h w -> b h w c', c=2)",
    "einops.repeat(x, 'b h w -> (b r) h w', r=2)",
    "einops.einsum(x, x, 'b h w, b h v -> b w v')",
    "einops.pack([x, x[:, :, 0]], 'b h *')[0]",
])
def test_results_equal_einops_on_numpy(call):
    x = tm.arange(24., dtype=tm.float64).reshape(2, 3, 4) / 7
    ours = eval(call, {"einops": einops, "x": x})
    theirs = eval(call, {"einops": einops, "x": x.numpy()})
    assert isinstance(ours, tm.Tensor) and ours.dtype == tm.float64
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12)


def test_gradients_flow_and_modes_see_the_ops():
    from tensormodes.modes import OpCounterMode

    x = tm.arange(6.).reshape(2, 3).requires_grad_()
    with OpCounterMode() as counter:
        y = einops.rearrange(x, "a b -> b a")
    (y * tm.arange(6.).reshape(3, 2)).sum().backward()
    assert x.grad.tolist() == [[0., 2., 4.], [1., 3., 5.]]
    assert sum(counter.counts.values()) >= 1 and any("permute" in name or "reshape" in name for name in counter.counts)
    packed, shapes = einops.pack([tm.ones(2, 3), tm.zeros(2)], "b *")
    assert packed.shape == (2, 4) and [tuple(p.shape) for p in einops.unpack(packed, shapes, "b *")] == [(2, 3), (2,)]
