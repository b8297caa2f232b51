"""tensormodes micro-benchmarks: ns per call, side by side with NumPy and PyTorch.

Run ``python benchmarks/bench.py`` (``--quick`` for fewer repeats, ``--group NAME``
to run one group). Each row times the same operation in tensormodes, in the bare
NumPy kernel it ends in, and in PyTorch when it is installed. Libraries are
interleaved within every repeat and the minimum over repeats is reported, so
that machine noise hits all columns alike. BLAS is pinned to one thread for
both libraries (interleaved multi-threaded BLAS calls spin-wait and run ~10x
slower).

Columns: tensormodes, a baseline (per group: the bare NumPy kernel, the same call
on plain tensors, or the same call with no mode), PyTorch; then the ratios
tensormodes / baseline and tensormodes / PyTorch.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

import tensormodes as tm  # noqa: E402
from tensormodes.overrides import TorchFunctionMode  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None


@dataclass
class Row:
    """One benchmarked operation: tensormodes, a baseline, and PyTorch."""

    group: str
    name: str
    ours: Callable
    baseline: Callable | None = None
    torch: Callable | None = None


# Wall-clock time by default; --cpu-time measures the thread's CPU time instead, which a busy
# shared machine disturbs far less (BLAS is pinned to this thread, so it is all the work).
_TIMER = [time.perf_counter]


def _time(fn: Callable, number: int) -> float:
    return timeit.Timer(fn, timer=_TIMER[0]).timeit(number) / number * 1e9


def _calibrate(fn: Callable, target_seconds: float) -> int:
    number = 1
    while True:
        if timeit.Timer(fn, timer=_TIMER[0]).timeit(number) > target_seconds or number >= 1_000_000:
            return number
        number *= 4


def measure(rows: list[Row], repeats: int, target_seconds: float) -> list[dict]:
    """Minimum ns per call of every column, interleaving columns and rows per repeat."""
    plans = []
    for row in rows:
        columns = {"ours": row.ours, "baseline": row.baseline, "torch": row.torch}
        columns = {k: v for k, v in columns.items() if v is not None}
        numbers = {k: _calibrate(v, target_seconds) for k, v in columns.items()}
        plans.append((row, columns, numbers, {k: float("inf") for k in columns}))
    for _ in range(repeats):
        for _row, columns, numbers, best in plans:
            for key, fn in columns.items():
                best[key] = min(best[key], _time(fn, numbers[key]))
    return [{"row": row, **best} for row, _, _, best in plans]


# -- rows ------------------------------------------------------------------------------------


def foundation_rows() -> list[Row]:
    x1, y1 = tm.ones(1), tm.ones(1)
    a1, b1 = x1.numpy(), y1.numpy()
    big_x, big_y = tm.randn(1000, 1000), tm.randn(1000, 1000)
    big_a, big_b = big_x.numpy(), big_y.numpy()
    m, n = tm.randn(256, 256), tm.randn(256, 256)
    ma, na = m.numpy(), n.numpy()
    rows = [
        Row("foundation", "tm.add(x, y) 1 elem", lambda: tm.add(x1, y1), lambda: np.add(a1, b1)),
        Row("foundation", "x + y 1 elem", lambda: x1 + y1, lambda: np.add(a1, b1)),
        Row("foundation", "x.add(y) 1 elem", lambda: x1.add(y1), lambda: np.add(a1, b1)),
        Row("foundation", "zeros(3)", lambda: tm.zeros(3), lambda: np.zeros(3, np.float32)),
        Row("foundation", "x.sum() 1 elem", lambda: x1.sum(), lambda: np.sum(a1)),
        Row("foundation", "x.shape", lambda: x1.shape, lambda: a1.shape),
        Row("foundation", "add 1000x1000", lambda: tm.add(big_x, big_y), lambda: np.add(big_a, big_b)),
        Row("foundation", "matmul 256x256", lambda: tm.matmul(m, n), lambda: np.matmul(ma, na)),
    ]
    if torch is not None:
        tx1, ty1 = torch.ones(1), torch.ones(1)
        tbx, tby = torch.randn(1000, 1000), torch.randn(1000, 1000)
        tm_, tn_ = torch.randn(256, 256), torch.randn(256, 256)
        for row, fn in zip(rows, [lambda: torch.add(tx1, ty1), lambda: tx1 + ty1, lambda: tx1.add(ty1),
                                  lambda: torch.zeros(3), lambda: tx1.sum(), lambda: tx1.shape,
                                  lambda: torch.add(tbx, tby), lambda: torch.matmul(tm_, tn_)]):
            row.torch = fn
    return rows


def subclass_rows() -> list[Row]:
    class PassThrough(tm.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)

    class Inherits(tm.Tensor):
        pass

    rows = []
    torch_classes = {}
    if torch is not None:
        class TorchPassThrough(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs)

        class TorchInherits(torch.Tensor):
            pass

        torch_classes = {"pass-through": TorchPassThrough, "inherits default": TorchInherits}
    px, py = tm.ones(1), tm.ones(1)
    for label, cls in (("pass-through", PassThrough), ("inherits default", Inherits)):
        x, y = tm.ones(1).as_subclass(cls), tm.ones(1).as_subclass(cls)
        new = [Row("subclass", f"{label}: x + y", lambda x=x, y=y: x + y, lambda: px + py),
               Row("subclass", f"{label}: x.add(y)", lambda x=x, y=y: x.add(y), lambda: px.add(py)),
               Row("subclass", f"{label}: tm.add(x, y)", lambda x=x, y=y: tm.add(x, y), lambda: tm.add(px, py))]
        if torch_classes:
            tcls = torch_classes[label]
            tx, ty = torch.ones(1).as_subclass(tcls), torch.ones(1).as_subclass(tcls)
            new[0].torch = lambda tx=tx, ty=ty: tx + ty
            new[1].torch = lambda tx=tx, ty=ty: tx.add(ty)
            new[2].torch = lambda tx=tx, ty=ty: torch.add(tx, ty)
        rows += new
    return rows


class _PassThrough(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _AddsNothing(TorchFunctionMode):
    handled_functions = {tm.mul}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def mode_rows() -> list[Row]:
    x, y = tm.ones(1), tm.ones(1)
    torch_mode = None
    if torch is not None:
        from torch.overrides import TorchFunctionMode as TorchMode

        class TorchPassThrough(TorchMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        torch_mode = TorchPassThrough
        tx, ty = torch.ones(1), torch.ones(1)
    rows = []
    for depth in (1, 2, 4):
        for label, ours, theirs in (
            ("tm.add(x, y)", lambda: tm.add(x, y), lambda: torch.add(tx, ty)),
            ("x + y", lambda: x + y, lambda: tx + ty),
            ("zeros(3)", lambda: tm.zeros(3), lambda: torch.zeros(3)),
        ):
            row = Row("modes", f"{depth} pass-through mode(s): {label}",
                      _looped_under([_PassThrough() for _ in range(depth)], ours))
            if torch_mode is not None:
                row.torch = _looped_under([torch_mode() for _ in range(depth)], theirs)
            rows.append(row)
    rows.append(Row("modes", "declared mode skipping add: tm.add(x, y)",
                    _looped_under([_AddsNothing()], lambda: tm.add(x, y))))
    for row in rows:
        if row.baseline is None:
            call = row.name.split(": ")[1]
            row.baseline = _looped_under([], {"tm.add(x, y)": lambda: tm.add(x, y), "x + y": lambda: x + y,
                                              "zeros(3)": lambda: tm.zeros(3)}[call])
    return rows


def _looped_under(modes: list, fn: Callable, inner: int = 200) -> Callable:
    """Run ``fn`` ``inner`` times inside the modes; reported per call of ``fn``."""

    def run():
        for mode in modes:
            mode.__enter__()
        try:
            for _ in range(inner):
                fn()
        finally:
            for mode in reversed(modes):
                mode.__exit__(None, None, None)

    run.per_call = inner
    return run


def autograd_rows() -> list[Row]:
    """Forward + backward of a small MLP (Linear 64->64, ReLU, Linear 64->10, cross-entropy, batch 32).

    Baseline: the same network in HIPS autograd (``pip install autograd``) when installed.
    """
    import tensormodes.nn.functional as F

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((32, 64)).astype(np.float32)
    y_np = rng.integers(0, 10, 32)
    w1_np = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    b1_np = np.zeros(64, np.float32)
    w2_np = (rng.standard_normal((10, 64)) * 0.1).astype(np.float32)
    b2_np = np.zeros(10, np.float32)
    x, y = tm.tensor(x_np), tm.tensor(y_np)
    params = [tm.tensor(a, requires_grad=True) for a in (w1_np, b1_np, w2_np, b2_np)]

    def step():
        w1, b1, w2, b2 = params
        loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)
        loss.backward()
        for p in params:
            p.grad = None

    x_small, y_small = tm.ones(1), tm.ones(1)
    rows = [Row("autograd", "MLP forward+backward (batch 32)", step),
            Row("autograd", "add 1 elem, no grad (cf. foundation)", lambda: tm.add(x_small, y_small))]
    try:
        import autograd
        import autograd.numpy as anp

        def hips_loss(weights):
            w1, b1, w2, b2 = weights
            hidden = anp.maximum(x_np @ w1.T + b1, 0)
            logits = hidden @ w2.T + b2
            shifted = logits - anp.max(logits, axis=1, keepdims=True)
            log_probs = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
            return -anp.mean(log_probs[np.arange(32), y_np])

        hips_grad = autograd.grad(hips_loss)
        weights = [w1_np, b1_np, w2_np, b2_np]
        rows[0].baseline = lambda: hips_grad(weights)
    except ImportError:
        pass
    if torch is not None:
        tx, ty = torch.tensor(x_np), torch.tensor(y_np)
        tparams = [torch.tensor(a, requires_grad=True) for a in (w1_np, b1_np, w2_np, b2_np)]
        tF = torch.nn.functional

        def torch_step():
            w1, b1, w2, b2 = tparams
            loss = tF.cross_entropy(tF.linear(tF.relu(tF.linear(tx, w1, b1)), w2, b2), ty)
            loss.backward()
            for p in tparams:
                p.grad = None

        rows[0].torch = torch_step
        tx1, ty1 = torch.ones(1), torch.ones(1)
        rows[1].torch = lambda: torch.add(tx1, ty1)
    return rows


def _mlp_steps():
    """One training step (forward + backward) of the autograd group's MLP, in tensormodes and in
    PyTorch when installed (None otherwise)."""
    import tensormodes.nn.functional as F

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((32, 64)).astype(np.float32), rng.integers(0, 10, 32),
              (rng.standard_normal((64, 64)) * 0.1).astype(np.float32), np.zeros(64, np.float32),
              (rng.standard_normal((10, 64)) * 0.1).astype(np.float32), np.zeros(10, np.float32)]

    def make(library, functional):
        x, y = library.tensor(arrays[0]), library.tensor(arrays[1])
        params = [library.tensor(a, requires_grad=True) for a in arrays[2:]]

        def step():
            w1, b1, w2, b2 = params
            loss = functional.cross_entropy(functional.linear(functional.relu(functional.linear(x, w1, b1)), w2, b2),
                                            y)
            loss.backward()
            for p in params:
                p.grad = None

        return step

    return make(tm, F), None if torch is None else make(torch, torch.nn.functional)


def ready_mode_rows() -> list[Row]:
    """The MLP step of the autograd group under each ready-made mode (entered once around 20
    steps), against the same steps with no mode; the torch column is PyTorch's step under its
    own FlopCounterMode (FlopCounterMode row) or with no mode."""
    import tempfile

    from tensormodes.modes import LoggingMode, NanCheckMode, OpCounterMode, TimingMode
    from tensormodes.utils.flop_counter import FlopCounterMode

    step, torch_step = _mlp_steps()
    log_path = os.path.join(tempfile.mkdtemp(), "calls.log")
    modes = [("no mode", lambda: []),
             ("FlopCounterMode", lambda: [FlopCounterMode(display=False)]),
             ("OpCounterMode", lambda: [OpCounterMode()]),
             ("NanCheckMode", lambda: [NanCheckMode()]),
             ("TimingMode", lambda: [TimingMode()]),
             ("LoggingMode to a file", lambda: [LoggingMode(log_path)]),
             ("LoggingMode to a file, dedupe", lambda: [LoggingMode(log_path, dedupe=True)])]
    rows = []
    for label, make_modes in modes:
        row = Row("ready modes", f"MLP step, {label}", _looped_under(make_modes(), step, 20),
                  _looped_under([], step, 20))
        if torch_step is not None:
            if label == "FlopCounterMode":
                from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode
                row.torch = _looped_under([TorchFlopCounterMode(display=False)], torch_step, 20)
            else:
                row.torch = _looped_under([], torch_step, 20)
        rows.append(row)
    return rows


GROUPS = {"foundation": foundation_rows, "subclass": subclass_rows, "modes": mode_rows, "autograd": autograd_rows,
          "ready modes": ready_mode_rows}
BASELINES = {"foundation": "the bare NumPy call", "subclass": "the same call on plain tensors",
             "modes": "the same call with no mode active", "autograd": "HIPS autograd, same network",
             "ready modes": "the same steps with no mode"}


def import_time() -> float:
    """Seconds to import tensormodes in a fresh interpreter (best of 5)."""
    code = "import time; t = time.perf_counter(); import tensormodes; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    parser.add_argument("--group", choices=sorted(GROUPS), action="append", help="run only these groups")
    parser.add_argument("--cpu-time", action="store_true", help="time the thread's CPU time, not wall time")
    options = parser.parse_args()
    if options.cpu_time:
        _TIMER[0] = time.thread_time
    repeats, target = (3, 0.02) if options.quick else (9, 0.05)
    print(f"tensormodes benchmarks - Python {platform.python_version()}, NumPy {np.__version__}, "
          f"PyTorch {torch.__version__ if torch else 'not installed'}, {platform.machine()}, {os.cpu_count()} cores")
    print(f"{'row':48s} {'tensormodes':>12s} {'baseline':>10s} {'torch':>9s} {'/base':>7s} {'/torch':>7s}")
    for group in options.group or list(GROUPS):
        print(f"-- {group} (baseline: {BASELINES[group]})")
        for result in measure(GROUPS[group](), repeats, target):
            row = result["row"]
            ours = result["ours"] / getattr(row.ours, "per_call", 1)
            base = result.get("baseline", float("nan")) / getattr(row.baseline, "per_call", 1)
            theirs = result.get("torch", float("nan")) / getattr(row.torch, "per_call", 1)
            print(f"{row.name:48s} {ours:10.0f}ns {base:8.0f}ns {theirs:7.0f}ns "
                  f"{ours / base:6.2f}x {ours / theirs:6.2f}x")
    print(f"import tensormodes: {import_time() * 1000:.0f} ms")


if __name__ == "__main__":
    main()
