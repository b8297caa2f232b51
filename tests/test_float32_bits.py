"""float32 results PyTorch's CPU kernels compute with IEEE operations only (no vendor math library),
reproduced bit for bit: ``rsqrt`` is the float32 square root, then its float32 reciprocal (two
roundings), not the correctly rounded ``1/sqrt`` a float64 evaluation gives."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm


def test_rsqrt_rounds_the_square_root_then_the_reciprocal_in_float32():
    x = np.array([49.860523, 32.52646, 34.425453, 2.0, 3.0, 0.3], np.float32)
    bits = tm.rsqrt(tm.tensor(x)).numpy().view(np.uint32).tolist()
    # PyTorch 2.13's bits; the third differs from the correctly rounded 0x3e2e86a8
    assert bits == [0x3E110494, 0x3E338C65, 0x3E2E86A7, 0x3F3504F3, 0x3F13CD3A, 0x3FE9B1E8]
    assert tm.rsqrt(tm.tensor([0, 4, -1])).tolist()[:2] == [float("inf"), 0.5]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsqrt_is_pytorchs_bit_for_bit(dtype):
    import torch

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(lo, hi, 20011) for lo, hi in ((1e-30, 1e-20), (0.01, 100), (1e20, 1e30))])
    x = np.concatenate([x, [0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38]]).astype(dtype)
    ours, theirs = tm.rsqrt(tm.tensor(x)).numpy(), torch.rsqrt(torch.from_numpy(x)).numpy()
    assert np.array_equal(ours, theirs, equal_nan=True)
