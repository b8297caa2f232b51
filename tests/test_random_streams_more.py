"""Same seed, same numbers, continued: the reduced-precision normals, alpha dropout, sparse
initialisation, ``gumbel_softmax``, ``poisson``, the gamma family and the transformer's draws.

The literals were produced by PyTorch 2.13 (CPU) with the same calls; the ``torch``-marked
tests compare against PyTorch directly (values bit for bit and the generator's state after).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm


def _seeded(seed: int = 0):
    tm.manual_seed(seed)
    return tm


def _same(expression: str, seeds=(0, 1, 7, 123)):
    """``expression`` (over ``L``) gives the same bits in both libraries after ``manual_seed``,
    and leaves the generator in the same state."""
    torch = pytest.importorskip("torch")
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
