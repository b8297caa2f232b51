"""The order in which a tensor's incoming gradients are summed, seen in the last bit of float16 and
bfloat16 gradients: PyTorch's engine runs the nodes that made gradients latest-made first and adds
each gradient to the sum as it arrives, so ``x * 1 + x * 2**-8 + x * 2**-8`` gives
``(2**-8 + 2**-8) + 1`` (exact) where the forward order would give ``(1 + 2**-8) + 2**-8`` (each
addition a tie, rounded to 1). Literals, and PyTorch 2.13 on random small graphs when installed."""

from __future__ import annotations

import random

import numpy as np
import pytest

import tensormodes as tm

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None

SMALL = 2.0 ** -8  # half of bfloat16's ulp at 1


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_latest_uses_gradients_are_summed_first(dtype):
    small = SMALL if dtype == "bfloat16" else 2.0 ** -11  # half of float16's ulp at 1
    grads = []
    for terms in ((1.0, small, small), (small, small, 1.0), (small, 1.0, small)):
        x = tm.ones(1, dtype=getattr(tm, dtype), requires_grad=True)
        (x * terms[0] + x * terms[1] + x * terms[2]).sum().backward()
        grads.append(x.grad.item())
    assert grads == [1.0 + 2 * small, 1.0, 1.0]


def _graph(library, dtype: str, seed: int):
    """A random graph of a few uses of two or three leaves; the leaves' gradients as float32."""
    chooser = random.Random(seed)
    leaves = [library.tensor(np.random.default_rng(seed * 10 + k).standard_normal((4, 4)).astype(np.float32))
              .to(getattr(library, dtype)).requires_grad_() for k in range(chooser.randint(2, 3))]
    values = list(leaves)
    steps = {
        "mul": lambda a, b: a * b, "add": lambda a, b: a + b, "square": lambda a, b: a * a,
        "tanh": lambda a, b: a.tanh(), "matmul": lambda a, b: (a @ b) * 0.25,
        "broadcast": lambda a, b: a * b[0:1, :] + a[:, 1:2], "mean": lambda a, b: a - a.mean(1, keepdim=True),
        "unbind": lambda a, b: library.stack([u * a[0] for u in a.unbind(0)]),
        "expand": lambda a, b: a[0].expand(4, 4) * b, "select": lambda a, b: a * a[2] + a[:, 3:4],
    }
    for _ in range(chooser.randint(4, 9)):
        name = chooser.choice(sorted(steps))
        values.append(steps[name](values[chooser.randrange(len(values))], values[chooser.randrange(len(values))]))
    out = values[-1]
    for _ in range(chooser.randint(1, 3)):
        out = out + values[chooser.randrange(len(values))] * 0.5
    out.sum().backward()
    return [None if leaf.grad is None else leaf.grad.float().numpy() for leaf in leaves]


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_gradient_sums_of_random_graphs_are_pytorchs_bit_for_bit(dtype):
    for seed in range(40):
        for ours, theirs in zip(_graph(tm, dtype, seed), _graph(torch, dtype, seed), strict=True):
            assert (ours is None) == (theirs is None)
            if ours is not None:
                assert ours.view(np.int32).tolist() == theirs.view(np.int32).tolist(), seed
