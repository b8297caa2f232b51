"""Tutorial-style training scripts of issue 26's "Done when", written as PyTorch scripts that
import ``tensormodes as torch`` and run unmodified: a CNN fed by a ``DataLoader`` with worker
processes, an ``LBFGS`` fit with a closure, and a transformer trained under ``autocast`` with
gradient checkpointing. Each runs in its own process; with PyTorch installed, the same script
with ``import torch`` runs too and the printed losses must agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SOURCE = str(Path(__file__).resolve().parents[1] / "src")

CNN_WITH_WORKERS = '''
import tensormodes as torch

nn, F = torch.nn, torch.nn.functional
torch.manual_seed(0)
images = torch.randn(64, 1, 8, 8)
labels = (images.mean(dim=(1, 2, 3)) > 0).long()
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=16, shuffle=True,
                                     num_workers=2, generator=torch.Generator().manual_seed(1),
                                     persistent_workers=True)
model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(4 * 4 * 4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
for epoch in range(5):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"{total / len(loader):.6f}")
model.eval()
with torch.no_grad():
    accuracy = (model(images).argmax(1) == labels).float().mean().item()
print(f"{accuracy:.6f}")
'''

LBFGS_FIT = '''
import tensormodes as torch

torch.manual_seed(0)
x = torch.linspace(-2, 2, 50, dtype=torch.float64).unsqueeze(1)
y = 0.5 * x ** 3 - x + 0.3 + 0.01 * torch.randn(50, 1, dtype=torch.float64)
model = torch.nn.Sequential(torch.nn.Linear(1, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).double()
optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20, history_size=10, line_search_fn="strong_wolfe")


def closure():
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for step in range(4):
    loss = optimizer.step(closure)
    print(f"{loss.item():.10f}")
print(f"{closure().item():.10f}")
'''

TRANSFORMER_WITH_AUTOCAST = '''
import tensormodes as torch
from tensormodes.utils.checkpoint import checkpoint

nn = torch.nn
torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
                                    for _ in range(2))
        self.head = nn.Linear(16, 20)

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = checkpoint(layer, h, use_reentrant=False)
        return self.head(h)


model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
tokens = torch.randint(0, 20, (4, 6))
for step in range(4):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(tokens[:, :-1])
        assert logits.dtype == torch.bfloat16
        loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
    assert loss.dtype == torch.float32
    loss.backward()
    optimizer.step()
    print(f"{loss.item():.6f}")
'''


def _run(script: str, library: str) -> list[float]:
    if library == "torch":
        script = script.replace("import tensormodes as torch", "import torch").replace(
            "from tensormodes.utils.checkpoint", "from torch.utils.checkpoint")
    environment = {**os.environ, "PYTHONPATH": SOURCE, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [float(line) for line in done.stdout.split()]


def _compare_with_torch(script: str, ours: list[float], rtol: float, *, last_rtol: float | None = None) -> None:
    """The same script run by PyTorch prints the same losses (``last_rtol`` for the last one)."""
    if os.environ.get("TENSORMODES_SKIP_TORCH_SCRIPTS"):
        return
    try:
        import torch  # noqa: F401 - the oracle is optional
    except ImportError:
        return
    theirs = _run(script, "torch")
    np.testing.assert_allclose(ours[:-1], theirs[:-1], rtol=rtol)
    np.testing.assert_allclose(ours[-1], theirs[-1], rtol=last_rtol or rtol)


def test_cnn_with_dataloader_workers_runs_unmodified():
    losses = _run(CNN_WITH_WORKERS, "tensormodes")
    assert len(losses) == 6 and losses[4] < losses[0] and losses[5] > 0.8
    _compare_with_torch(CNN_WITH_WORKERS, losses, rtol=1e-4)


def test_lbfgs_fit_runs_unmodified():
    losses = _run(LBFGS_FIT, "tensormodes")
    assert len(losses) == 5 and losses[-1] < 1e-3 < losses[0]
    # the line searches agree to 1e-6 step after step; the last steps, near the optimum, amplify
    # the last bits of BLAS's tanh-layer products (0.3 % apart after 80 evaluations)
    _compare_with_torch(LBFGS_FIT, losses, rtol=1e-6, last_rtol=1e-2)


def test_transformer_with_autocast_and_checkpointing_runs_unmodified():
    losses = _run(TRANSFORMER_WITH_AUTOCAST, "tensormodes")
    assert len(losses) == 4 and losses[-1] < losses[0]
    # bfloat16 matmuls: the losses agree to bfloat16's precision, step after step
    _compare_with_torch(TRANSFORMER_WITH_AUTOCAST, losses, rtol=3e-2)


@pytest.mark.parametrize("script", [CNN_WITH_WORKERS, LBFGS_FIT, TRANSFORMER_WITH_AUTOCAST])
def test_scripts_are_pytorch_scripts(script):
    # Nothing tensormodes-only: the import line is the only difference from a PyTorch script.
    body = script.replace("import tensormodes as torch", "").replace("from tensormodes.utils.checkpoint", "")
    assert "tensormodes" not in body and "tm." not in body
