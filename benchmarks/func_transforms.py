"""tm.func against torch.func: per-sample gradients of a small MLP (``vmap(grad)``, and the loop of
``autograd.grad`` it replaces), a Jacobian and a Hessian. Thread CPU time, best of ``--repeat``
timings, the two libraries interleaved within each repeat; BLAS pinned to one thread.

    python benchmarks/func_transforms.py [--repeat 7] [--batch 64]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402 - after pinning BLAS's threads

import tensormodes as tm  # noqa: E402

try:
    import torch  # noqa: E402
    import torch.func  # noqa: E402, F401 - torch.func
    torch.set_num_threads(1)
except ImportError:
    torch = None


def _rows(lib, batch: int) -> dict:
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.Tanh(), lib.nn.Linear(32, 4))
    params = {name: p.detach() for name, p in model.named_parameters()}
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((batch, 16)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((batch, 4)).astype(np.float32))
    mse = lib.nn.functional.mse_loss

    def loss(p, xi, yi):
        return mse(lib.func.functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    per_sample = lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    per_sample_different = lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0), randomness="different")
    weights = list(model.parameters())
    v = lib.tensor(rng.standard_normal(16).astype(np.float32))
    a = lib.tensor(rng.standard_normal((8, 8)).astype(np.float32))
    return {
        f"vmap(grad(loss)), batch {batch}": lambda: per_sample(params, x, y),
        "  randomness='different'": lambda: per_sample_different(params, x, y),
        f"  loop of autograd.grad, batch {batch}": lambda: [
            lib.autograd.grad(mse(model(x[i:i + 1]), y[i:i + 1]), weights)
            for i in range(batch)],
        "jacrev(tanh(W x)), 16 -> 16": lambda: lib.func.jacrev(lambda t: (model[0].weight[:16] @ t).tanh())(v),
        "hessian(sum((A x) ** 3)), 8": lambda: lib.func.hessian(lambda t: ((a @ t) ** 3).sum())(v[:8]),
    }


def _best(call, repeat: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.thread_time()
        call()
        times.append(time.thread_time() - start)
    return min(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--batch", type=int, default=64)
    options = parser.parse_args()
    ours = _rows(tm, options.batch)
    theirs = _rows(torch, options.batch) if torch is not None else {}
    print(f"{'row':40s} {'tensormodes ms':>15s} {'torch ms':>10s} {'/torch':>8s}")
    for name, call in ours.items():
        mine = _best(call, options.repeat)
        other = _best(theirs[name], options.repeat) if name in theirs else float("nan")
        print(f"{name:40s} {mine:15.2f} {other:10.2f} {mine / other:8.1f}")


if __name__ == "__main__":
    main()
