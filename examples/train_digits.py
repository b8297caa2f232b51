"""Train an MLP and a small CNN on scikit-learn's bundled 8x8 digits, with tensormodes.

Written exactly as a PyTorch script (change ``import tensormodes as tm`` to ``import torch as
tm`` and it runs on PyTorch): ``nn`` modules, ``AdamW`` with a cosine schedule, a seeded
``DataLoader``, label smoothing, gradient clipping, and a checkpoint saved with ``tm.save``
(a safetensors file: no pickle) and loaded back.

    python examples/train_digits.py                  # both models, about half a minute
    python examples/train_digits.py --epochs 3 --model mlp
    tensormodes trace examples/train_digits.py --flops --count -- --epochs 2

The data ships inside scikit-learn (``pip install "tensormodes[examples]"``): nothing is
downloaded.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import tensormodes as tm
from tensormodes import nn
from tensormodes.utils.data import DataLoader, TensorDataset


def load_digits_split(seed: int = 0):
    """(x_train, y_train, x_test, y_test): 1,797 images of 8x8 pixels scaled to [0, 1], 80/20."""
    from sklearn.datasets import load_digits  # the [examples] extra; here so the models import without it

    digits = load_digits()
    x = tm.tensor(digits.data, dtype=tm.float32) / 16.0
    y = tm.tensor(digits.target, dtype=tm.int64)
    order = tm.randperm(len(y), generator=tm.Generator().manual_seed(seed))
    x, y = x[order], y[order]
    cut = int(0.8 * len(y))
    return x[:cut], y[:cut], x[cut:], y[cut:]


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Unflatten(1, (1, 8, 8)),
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 32 x 2 x 2
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10),
    )


def accuracy(model: nn.Module, x: tm.Tensor, y: tm.Tensor) -> float:
    model.eval()
    with tm.no_grad():
        predicted = model(x).argmax(dim=1)
    model.train()
    return (predicted == y).float().mean().item()


def _progress(epoch: int, epochs: int, loss: float, test_accuracy: float, seconds: float) -> None:
    width = 20
    done = round(width * epoch / epochs)
    bar = "#" * done + "-" * (width - done)
    print(f"  epoch {epoch:2d}/{epochs} [{bar}] loss {loss:.3f}  test accuracy {100 * test_accuracy:5.1f}%  "
          f"({seconds:.1f} s)", flush=True)


def train(name: str, model: nn.Module, data, epochs: int, lr: float, seed: int = 0) -> float:
    x_train, y_train, x_test, y_test = data
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=tm.Generator().manual_seed(seed))
    optimizer = tm.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    schedule = tm.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    print(f"{name}: {sum(p.numel() for p in model.parameters()):,} parameters")
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        total, batches = 0.0, 0
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        schedule.step()
        _progress(epoch, epochs, total / batches, accuracy(model, x_test, y_test), time.perf_counter() - start)
    return accuracy(model, x_test, y_test)


def checkpoint_round_trip(model: nn.Module, make_model, data, path: Path) -> None:
    """Save the trained model with tm.save, load it into a fresh model, check it predicts the same."""
    tm.save({"model": model.state_dict(), "epoch": 0}, path)
    restored = make_model()
    restored.load_state_dict(tm.load(path)["model"])
    same = accuracy(restored, data[2], data[3]) == accuracy(model, data[2], data[3])
    print(f"checkpoint {path.name}: {path.stat().st_size:,} bytes, reloaded model agrees: {same}")
    if path.suffix != ".safetensors":  # any other name holds PyTorch's format, which torch.load reads
        return
    try:
        from safetensors.numpy import load_file
    except ImportError:
        return
    print(f"  read by safetensors: {sorted(load_file(str(path)))[:3]} ...")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20, help="epochs per model (default 20)")
    parser.add_argument("--model", choices=("mlp", "cnn", "both"), default="both")
    parser.add_argument("--checkpoint", type=Path, help="where to save the checkpoint (default: a temporary file)")
    options = parser.parse_args(argv)
    tm.manual_seed(0)
    data = load_digits_split()
    results = {}
    for name, make_model, lr in (("mlp", mlp, 1e-2), ("cnn", cnn, 5e-3)):
        if options.model in (name, "both"):
            model = make_model()
            results[name] = train(name.upper(), model, data, options.epochs, lr)
            with tempfile.TemporaryDirectory() as folder:
                path = options.checkpoint or Path(folder) / f"digits_{name}.safetensors"
                checkpoint_round_trip(model, make_model, data, path)
    print("test accuracy: " + ", ".join(f"{name.upper()} {100 * value:.1f}%" for name, value in results.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
