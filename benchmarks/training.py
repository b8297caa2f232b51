"""Training steps of the small models people prototype with, beside PyTorch (issue 28's table).

Run ``python benchmarks/training.py`` (``--steps N``, ``--only NAME``). Each row builds the same
model in both libraries (PyTorch's weights copied into ours), then times whole training steps
(zero_grad, forward, loss, backward, optimizer step) on the same batch, alternating the two
libraries, one BLAS/OpenMP thread each. Printed per row: the median step time of each library in
thread CPU time (robust on a loaded machine) and wall time, and tensormodes / PyTorch.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402 - after the thread settings, which BLAS reads when loaded

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.real_models import GPT_SOURCE, define  # noqa: E402

import tensormodes as tm  # noqa: E402

try:
    import torch  # noqa: E402
    torch.set_num_threads(1)
except ImportError:  # the table then has tensormodes' column only
    torch = None

GPT_HAND_SOURCE = GPT_SOURCE.replace(
    "y = F.scaled_dot_product_attention(q, k, v, is_causal=True)",
    "att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))\n"
    "        att = att.masked_fill(L.ones(T, T).tril() == 0, float('-inf'))\n"
    "        y = F.softmax(att, dim=-1) @ v").replace("L.nn.GELU()", "L.nn.GELU(approximate='tanh')")


def _gpt(L, source):
    model = define(source, L)["GPT"](vocab=65, width=64, heads=2, layers=2, context=32)
    rng = np.random.default_rng(0)
    idx, targets = (L.tensor(rng.integers(0, 65, (8, 32))) for _ in range(2))
    optimizer = L.optim.AdamW(model.parameters(), lr=1e-3)
    return model, optimizer, lambda: model(idx, targets)[1]


def _lstm(L, cell):
    class CharModel(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = L.nn.Embedding(65, 64)
            self.rnn = cell(64, 128, batch_first=True)
            self.head = L.nn.Linear(128, 65)

        def forward(self, idx):
            return self.head(self.rnn(self.embed(idx))[0])

    model = CharModel()
    rng = np.random.default_rng(0)
    idx, targets = (L.tensor(rng.integers(0, 65, (8, 32))) for _ in range(2))
    optimizer = L.optim.Adam(model.parameters(), lr=1e-3)
    return model, optimizer, lambda: L.nn.functional.cross_entropy(model(idx).reshape(-1, 65), targets.reshape(-1))


def _cnn(L):
    nn = L.nn
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Dropout(0.25), nn.Flatten(), nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
                          nn.Linear(128, 10))
    rng = np.random.default_rng(0)
    images = L.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    labels = L.tensor(rng.integers(0, 10, 64))
    optimizer = L.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, optimizer, lambda: L.nn.functional.cross_entropy(model(images), labels)


def _mlp(L):
    model = L.nn.Sequential(L.nn.Flatten(), L.nn.Linear(784, 128), L.nn.ReLU(), L.nn.Linear(128, 10))
    rng = np.random.default_rng(0)
    images = L.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    labels = L.tensor(rng.integers(0, 10, 64))
    optimizer = L.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer, lambda: L.nn.functional.cross_entropy(model(images), labels)


def _gather_mlp(L):
    model = L.nn.Sequential(L.nn.Linear(64, 64), L.nn.ReLU(), L.nn.Linear(64, 10))
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((32, 64)).astype(np.float32))
    labels = L.tensor(rng.integers(0, 10, (32, 1)))
    optimizer = L.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer, lambda: -model(x).log_softmax(-1).gather(1, labels).mean()


MODELS = {
    "GPT (exact GELU, SDPA, AdamW)": lambda L: _gpt(L, GPT_SOURCE),
    "GPT (tanh GELU, hand-written attention)": lambda L: _gpt(L, GPT_HAND_SOURCE),
    "char-LSTM (embed 64, 1x128, seq 32, Adam)": lambda L: _lstm(L, L.nn.LSTM),
    "char-GRU (embed 64, 1x128, seq 32, Adam)": lambda L: _lstm(L, L.nn.GRU),
    "CNN (2 conv, max-pool, dropout, 2 linear), batch 64": _cnn,
    "MLP 784-128-10, batch 64, SGD": _mlp,
    "MLP log_softmax+gather+mean (32x64)": _gather_mlp,
}


def _copy_weights(ours, theirs) -> None:
    """PyTorch's initial weights into our model (same architecture, same parameter order)."""
    with tm.no_grad():
        for mine, other in zip(ours.parameters(), theirs.parameters(), strict=True):
            mine.copy_(tm.tensor(other.detach().numpy()))


def _step(optimizer, loss_of):
    def run():
        optimizer.zero_grad()
        loss = loss_of()
        loss.backward()
        optimizer.step()
    return run


def _time(run, steps: int) -> tuple[float, float]:
    cpu, wall = time.thread_time(), time.perf_counter()
    for _ in range(steps):
        run()
    return (time.thread_time() - cpu) / steps, (time.perf_counter() - wall) / steps


def measure(name: str, steps: int, rounds: int, freeze_gc: bool = False) -> dict:
    """Median seconds per step (thread CPU, wall) of tensormodes and PyTorch, rounds alternating."""
    tm.manual_seed(0)
    ours_model, ours_optimizer, ours_loss = MODELS[name](tm)
    runs = {"tensormodes": _step(ours_optimizer, ours_loss)}
    if torch is not None:
        torch.manual_seed(0)
        their_model, their_optimizer, their_loss = MODELS[name](torch)
        _copy_weights(ours_model, their_model)
        runs["torch"] = _step(their_optimizer, their_loss)
    for run in runs.values():  # warm-up: first calls build caches on both sides
        _time(run, 2)
    if freeze_gc:
        gc.collect()
        gc.freeze()
    samples = {library: [] for library in runs}
    for _ in range(rounds):
        for library, run in runs.items():
            samples[library].append(_time(run, steps))
    if freeze_gc:
        gc.unfreeze()
    return {library: (statistics.median(s[0] for s in values), statistics.median(s[1] for s in values))
            for library, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="steps per timing")
    parser.add_argument("--rounds", type=int, default=5, help="alternating timings per library")
    parser.add_argument("--only", help="run the rows whose name contains this")
    parser.add_argument("--freeze-gc", action="store_true",
                        help="move the objects alive after each row's setup (both libraries' modules, the "
                             "models) out of the garbage collector's sight (gc.freeze), so that its full "
                             "collections, which the many short-lived objects of a tensormodes step trigger "
                             "every few steps, do not traverse PyTorch's 160,000 import-time objects too")
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, NumPy "
          f"{np.__version__}, tensormodes {tm.__version__}" + (f", PyTorch {torch.__version__}" if torch else ""))
    print(f"{'training step':<52} {'ours ms (cpu/wall)':>20} {'torch ms (cpu/wall)':>20} {'ours/torch':>10}")
    for name in MODELS:
        if args.only and args.only.lower() not in name.lower():
            continue
        result = measure(name, args.steps, args.rounds, args.freeze_gc)
        ours = result["tensormodes"]
        theirs = result.get("torch")
        ratio = f"{ours[0] / theirs[0]:.2f}x" if theirs else "-"
        their_text = f"{theirs[0] * 1e3:.1f}/{theirs[1] * 1e3:.1f}" if theirs else "-"
        print(f"{name:<52} {ours[0] * 1e3:>11.1f}/{ours[1] * 1e3:<8.1f} {their_text:>20} {ratio:>10}", flush=True)


if __name__ == "__main__":
    main()
