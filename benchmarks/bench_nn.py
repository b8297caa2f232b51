"""nn.Module call overhead: ``nn.Linear(64, 128)(x)`` against ``F.linear(x, w, b)``, and against PyTorch.

Run ``python benchmarks/bench_nn.py`` (``--quick`` for fewer repeats). The baseline
column is the functional call the module makes, so ``module - baseline`` is what
the module call itself costs (``__call__`` -> ``forward`` -> attribute reads);
the PyTorch column runs the same row in PyTorch, and the overhead rows subtract
the two there too.
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from bench import Row, measure, torch  # the shared timing loop (BLAS pinned to one thread there)

import tensormodes as tm
import tensormodes.nn.functional as F


def rows() -> list[Row]:
    x_np = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    layer = tm.nn.Linear(64, 128)
    x = tm.tensor(x_np)
    w, b = layer.weight, layer.bias
    hooked = tm.nn.Linear(64, 128)
    hooked.register_forward_hook(lambda module, args, out: None)
    small = tm.nn.Linear(1, 1)
    x1 = tm.ones(1, 1)
    identity = tm.nn.Identity()
    table = [
        Row("nn", "nn.Identity()(x) (baseline: .forward(x))", lambda: identity(x1), lambda: identity.forward(x1)),
        Row("nn", "nn.Linear(64,128)(x), batch 32", lambda: layer(x), lambda: F.linear(x, w, b)),
        Row("nn", "  same, one forward hook", lambda: hooked(x), lambda: F.linear(x, w, b)),
        Row("nn", "nn.Linear(1,1)(x), 1 elem", lambda: small(x1),
            lambda: F.linear(x1, small.weight, small.bias)),
    ]
    if torch is not None:
        tlayer = torch.nn.Linear(64, 128)
        thooked = torch.nn.Linear(64, 128)
        thooked.register_forward_hook(lambda module, args, out: None)
        tsmall = torch.nn.Linear(1, 1)
        tx, tx1 = torch.tensor(x_np), torch.ones(1, 1)
        tF = torch.nn.functional
        with torch.no_grad():
            tlayer.weight.copy_(torch.tensor(w.detach().numpy()))
        tidentity = torch.nn.Identity()
        table[0].torch = lambda: tidentity(tx1)
        table[1].torch = lambda: tlayer(tx)
        table[2].torch = lambda: thooked(tx)
        table[3].torch = lambda: tsmall(tx1)
        table.append(Row("nn", "PyTorch nn.Identity()(x) (baseline: .forward(x))", lambda: tidentity(tx1),
                         lambda: tidentity.forward(tx1)))
        table.append(Row("nn", "PyTorch F.linear, batch 32 (baseline: module)",
                         lambda: tF.linear(tx, tlayer.weight, tlayer.bias), lambda: tlayer(tx)))
        table.append(Row("nn", "PyTorch F.linear, 1 elem (baseline: module)",
                         lambda: tF.linear(tx1, tsmall.weight, tsmall.bias), lambda: tsmall(tx1)))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    options = parser.parse_args()
    repeats, target = (3, 0.02) if options.quick else (9, 0.05)
    print(f"nn benchmarks - Python {platform.python_version()}, NumPy {np.__version__}, "
          f"PyTorch {torch.__version__ if torch else 'not installed'}")
    print(f"{'row':48s} {'ours':>10s} {'baseline':>10s} {'torch':>10s} {'ours-base':>10s}")
    for result in measure(rows(), repeats, target):
        row = result["row"]
        ours, base, theirs = result["ours"], result.get("baseline", float("nan")), result.get("torch", float("nan"))
        print(f"{row.name:48s} {ours:9.0f}ns {base:9.0f}ns {theirs:9.0f}ns {ours - base:9.0f}ns")


if __name__ == "__main__":
    main()
