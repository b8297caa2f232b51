"""float16 / bfloat16 forward and backward bits of the ops a training step runs (issue 27, section 2),
on random shapes with odd row lengths (1 to 70): PyTorch 2.13's CPU kernels (AVX-512) when
installed, literals otherwise. ``tests/half_sweep.py`` covers every op's fixed samples; this file
draws shapes, where the kernels' vector steps, scalar tails, lane orders and thread splits show.

Still apart (strict xfails below, each with its cause): ``layer_norm``'s input gradient and
``group_norm``/``batch_norm`` (accumulation orders of their kernels not modelled), bfloat16 ``gelu``
with ``approximate='tanh'`` (PyTorch's vector tanh is Sleef's, ours correctly rounded) and bfloat16
``gelu`` (oneDNN's erf).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
import tensormodes.nn.functional as TF
from tensormodes._ops._vector_kernels import float_row_sums, half_loop_exp, row_sums, sleef_expf
from tensormodes._ops.activation import _vector_positions

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the cross-reference oracle is optional
    torch = F = None

DTYPES = ("float16", "bfloat16")


def _shape(rng: np.random.Generator, min_ndim: int = 1) -> tuple[int, ...]:
    while True:
        shape = tuple(int(s) for s in rng.integers(1, 71, int(rng.integers(min_ndim, 4))))
        if np.prod(shape) <= 12_000:
            return shape


def _draw(name: str, rng: np.random.Generator) -> tuple[list[np.ndarray], dict]:
    """The float arrays (cast to the half type by the run) and the other arguments of one case."""
    if name in ("cross_entropy", "cross_entropy_weighted", "nll_loss", "nll_loss_weighted", "cross_entropy_smoothed",
                "group_norm", "batch_norm"):
        shape = _shape(rng, 2)
        classes = shape[1]
        arrays = [(rng.standard_normal(shape) * 2).astype(np.float32)]
        options = {"target": rng.integers(0, classes, (shape[0], *shape[2:])),
                   "reduction": str(rng.choice(["mean", "sum", "none"]))}
        if name.endswith("weighted") or name in ("group_norm", "batch_norm"):
            arrays.append(rng.uniform(0.5, 2, classes).astype(np.float32))
        if name in ("group_norm", "batch_norm"):
            arrays.append(rng.standard_normal(classes).astype(np.float32))
            options["groups"] = int(rng.choice([g for g in range(1, classes + 1) if classes % g == 0]))
        return arrays, options
    shape = _shape(rng)
    arrays = [(rng.standard_normal(shape) * float(rng.choice([1, 4]))).astype(np.float32)]
    if name.startswith("mse"):
        arrays.append(rng.standard_normal(shape).astype(np.float32))
    return arrays, {"dim": int(rng.integers(-len(shape), len(shape))), "trailing": int(rng.integers(1, len(shape) + 1))}


def _call(name: str, L, functional, tensors: list, o: dict):
    x = tensors[0]
    calls = {
        "softmax": lambda: x.softmax(o["dim"]), "log_softmax": lambda: x.log_softmax(o["dim"]),
        "silu": lambda: functional.silu(x), "gelu": lambda: functional.gelu(x),
        "gelu_tanh": lambda: functional.gelu(x, approximate="tanh"),
        "layer_norm": lambda: functional.layer_norm(x, x.shape[-o["trailing"]:]),
        "mse_loss": lambda: functional.mse_loss(x, tensors[1]),
        "mse_loss_none": lambda: functional.mse_loss(x, tensors[1], reduction="none"),
        "sum": lambda: x.sum(o["dim"]), "mean": lambda: x.mean(o["dim"]), "sum_all": lambda: x.sum(),
        "mean_all": lambda: x.mean(),
        "cross_entropy": lambda: functional.cross_entropy(x, L.tensor(o["target"]), reduction=o["reduction"]),
        "cross_entropy_weighted": lambda: functional.cross_entropy(x, L.tensor(o["target"]), weight=tensors[1].detach(),
                                                                   reduction=o["reduction"]),
        "cross_entropy_smoothed": lambda: functional.cross_entropy(x, L.tensor(o["target"]), label_smoothing=0.1),
        "nll_loss": lambda: functional.nll_loss(x, L.tensor(o["target"]), reduction=o["reduction"]),
        "nll_loss_weighted": lambda: functional.nll_loss(x, L.tensor(o["target"]), weight=tensors[1].detach(),
                                                         reduction=o["reduction"]),
        "group_norm": lambda: functional.group_norm(x, o["groups"], tensors[1], tensors[2]),
        "batch_norm": lambda: functional.batch_norm(x, None, None, tensors[1], tensors[2], training=True),
    }
    return calls[name]()


def _run(name: str, L, functional, arrays: list, options: dict, dtype: str) -> list[np.ndarray]:
    """The result and every input's gradient (for a random incoming gradient), as float32 arrays."""
    tensors = [L.tensor(a).to(getattr(L, dtype)).requires_grad_(not name.endswith("weighted") or k == 0)
               for k, a in enumerate(arrays)]
    result = _call(name, L, functional, tensors, options)
    incoming = np.random.default_rng(1).standard_normal(tuple(result.shape)).astype(np.float32)
    result.backward(L.tensor(incoming).to(getattr(L, dtype)))
    return [result.detach().float().numpy()] + [t.grad.float().numpy() for t in tensors if t.grad is not None]


def _differences(name: str, dtype: str, cases: int, first_only: bool = False) -> list[str]:
    rng = np.random.default_rng([sum(map(ord, name)), len(dtype)])
    found = []
    for _ in range(cases):
        arrays, options = _draw(name, rng)
        if name == "batch_norm" and np.prod(arrays[0].shape) // arrays[0].shape[1] < 2:
            continue  # one value per channel: PyTorch refuses to train
        ours = _run(name, tm, TF, arrays, options, dtype)
        theirs = _run(name, torch, F, arrays, options, dtype)
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            if not np.array_equal(np.nan_to_num(a).view(np.int32), np.nan_to_num(b).view(np.int32)):
                found.append(f"{arrays[0].shape} {options.get('dim', '')}: output {k} differs at {int((a != b).sum())}")
                if first_only:
                    return found
    return found


MATCHING = ("softmax", "log_softmax", "silu", "gelu", "gelu_tanh", "mse_loss", "mse_loss_none", "sum", "mean",
            "sum_all", "mean_all", "cross_entropy", "cross_entropy_weighted", "cross_entropy_smoothed", "nll_loss",
            "nll_loss_weighted")
# (op, dtype or None for both) -> why its bits still differ from PyTorch's
APART = {
    ("layer_norm", None): "the input gradient's row sums: the kernel's accumulation order is not modelled",
    ("gelu_tanh", "bfloat16"): "PyTorch's vector tanh is Sleef's tanhf: its last bit (beyond its saturation at "
                               "8.664339742, which is modelled) differs from ours (correctly rounded)",
    ("gelu", "bfloat16"): "PyTorch runs bfloat16 gelu through oneDNN, whose erf and exp are its own",
    ("group_norm", None): "the kernel's per-group moments and gradient sums: accumulation orders not modelled",
    ("batch_norm", None): "the kernel's per-channel sums: accumulation order (and thread split) not modelled",
}


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name, dtype", [(name, dtype) for name in MATCHING for dtype in DTYPES
                                         if (name, dtype) not in APART])
def test_half_training_ops_match_torch_bit_for_bit_on_random_shapes(name, dtype):
    assert _differences(name, dtype, 12) == []


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name, dtype", [
    pytest.param(name, dtype, marks=pytest.mark.xfail(strict=True, reason=reason))
    for (name, only), reason in APART.items() for dtype in ((only,) if only else DTYPES)])
def test_half_training_ops_still_apart_from_torch(name, dtype):
    assert _differences(name, dtype, 40, first_only=True) == []


# -- literals (PyTorch 2.13's bits, no oracle needed) ------------------------------------------------

def test_half_softmax_gradient_of_ones_is_pytorchs_bit_for_bit():
    # The case: sum(g * softmax) is 1 up to rounding, so the gradient is that rounding,
    # (g - sum) * out in float32 rounded once; the sum in the vector kernel's lane order.
    x = np.random.default_rng(2990).standard_normal((4, 4)).astype(np.float16)
    expected = {
        "float16": [[1186, 152, 292, 1953], [-32368, -32733, -31820, -32615], [-32644, -32601, -32761, -32170],
                    [-32702, -32578, -32123, -32645]],
        "bfloat16": [[-18007, -18386, -18265, -17908], [-18025, -18480, -17870, -18202],
                     [-18246, -18181, -18783, -17952], [14469, 14654, 14881, 14581]]}
    for dtype, bits in expected.items():
        t = tm.tensor(x).to(getattr(tm, dtype)).requires_grad_()
        t.softmax(-1).backward(tm.ones(4, 4, dtype=t.dtype))
        assert t.grad.numpy().view(np.int16).tolist() == bits


def test_half_log_softmax_gradient_along_the_first_dim_is_pytorchs_bit_for_bit():
    x = np.random.default_rng(2990).standard_normal((4, 4)).astype(np.float16)
    expected = {
        "float16": [[-13797, -15441, -16249, -13687], [-15866, 16960, -13214, 17628], [17149, -14105, 18644, -14752],
                    [18908, 18755, 18707, 19275]],
        "bfloat16": [[-16061, -16265, -16367, -16046], [-16321, 16456, -15988, 16540], [16479, -16099, 16666, -16179],
                     [16699, 16680, 16674, 16745]]}
    for dtype, bits in expected.items():
        t = tm.tensor(x).to(getattr(tm, dtype)).requires_grad_()
        t.log_softmax(0).backward(tm.arange(16.).reshape(4, 4).to(t.dtype))
        assert t.grad.numpy().view(np.int16).tolist() == bits


def test_row_sums_add_in_the_reduced_float_kernels_lane_order():
    tiny = 2.0 ** -24  # half of float32's ulp at 1: each addition to 1 alone rounds back to 1
    # 20 elements: lanes 0-3 take elements 16-19 first, then lanes 0..15 left to right
    row = np.zeros((1, 20), np.float32)
    row[0, 0], row[0, 16] = 1.0, 2 * tiny
    assert row_sums(row).tolist() == [1.0 + 2 * tiny]
    row[0, 16], row[0, 1], row[0, 2] = 0.0, tiny, tiny
    assert row_sums(row).tolist() == [1.0]
    # 64 elements: two 16-lane accumulators, then the tree (i + 8, + 4, + 2, + 1): the two tiny
    # values in lanes 8 and 0 of the accumulators meet before 1 (lane 0) does
    row = np.zeros((1, 64), np.float32)
    row[0, 0], row[0, 8], row[0, 32 + 8] = 1.0, tiny, tiny
    assert row_sums(row).tolist() == [1.0 + 2 * tiny]
    # the float kernel's own loop: whole vectors of 16 in lanes, then the rest one by one
    row = np.zeros((1, 18), np.float32)
    row[0, 0], row[0, 16], row[0, 17] = 1.0, tiny, tiny
    assert float_row_sums(row).tolist() == [1.0]


def test_sleef_expf_and_the_c_librarys_expf_differ_in_the_last_bit():
    x = np.array([-1.08203125, -3.88671875, -3.791015625], np.float32)  # where they differ
    vector, scalar = half_loop_exp(x, None), half_loop_exp(x, np.ones(3, bool))
    assert (vector != scalar).all()
    assert sleef_expf(x).view(np.int32).tolist() == vector.view(np.int32).tolist()


def test_inner_dim_softmax_vector_blocks_follow_the_thread_split():
    with _threads(2):
        # 2 x 40 positions in 2 ranges of 40: each row's first 32 in vectors, its last 8 scalar
        assert _vector_positions(2, 40).sum(1).tolist() == [32, 32]
        # 1 x 80 positions in 2 ranges of 40: each range starts a block of 32
        assert _vector_positions(1, 80)[0].nonzero()[0].tolist() == list(range(32)) + list(range(40, 72))
    with _threads(1):
        assert _vector_positions(1, 80)[0].nonzero()[0].tolist() == list(range(64))


class _threads:
    def __init__(self, count: int):
        self.count = count

    def __enter__(self):
        self.before = tm.get_num_threads()
        tm.set_num_threads(self.count)

    def __exit__(self, *exc):
        tm.set_num_threads(self.before)
