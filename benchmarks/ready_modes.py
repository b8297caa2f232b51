"""Overhead of the ready-made modes on a training step, in thread CPU time.

Run ``python benchmarks/ready_modes.py [REPEATS]`` (default 40). The step is the autograd
group's MLP of ``bench.py`` (forward and backward); each mode is entered around 20 steps,
the modes are interleaved within every repeat, and the minimum per step is kept.
CPU time rather than wall time: on a shared machine the wall clock swings far more.
PyTorch's plain step and its step under ``torch.utils.flop_counter.FlopCounterMode`` are
timed too when torch is installed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402 - sets the BLAS thread variables before NumPy loads

from tensormodes.modes import LoggingMode, NanCheckMode, OpCounterMode, TimingMode  # noqa: E402
from tensormodes.utils.flop_counter import FlopCounterMode  # noqa: E402


def _per_step(fn, number: int = 20) -> float:
    return timeit.Timer(fn, timer=time.thread_time).timeit(number) / number * 1e6


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    step, torch_step = bench._mlp_steps()
    path = os.path.join(tempfile.mkdtemp(), "calls.log")
    modes = {"no mode": lambda: None, "FlopCounterMode": lambda: FlopCounterMode(display=False),
             "OpCounterMode": OpCounterMode, "NanCheckMode": NanCheckMode, "TimingMode": TimingMode,
             "LoggingMode to a file": lambda: LoggingMode(path),
             "LoggingMode to a file, dedupe": lambda: LoggingMode(path, dedupe=True)}
    best = {name: float("inf") for name in modes}
    torch_flop = None
    if torch_step is not None:
        from torch.utils.flop_counter import FlopCounterMode as torch_flop
        best.update({"torch, no mode": float("inf"), "torch, its FlopCounterMode": float("inf")})
    for _ in range(repeats):
        for name, make in modes.items():
            mode = make()
            if mode is None:
                best[name] = min(best[name], _per_step(step))
            else:
                with mode:
                    best[name] = min(best[name], _per_step(step))
        if torch_step is not None:
            best["torch, no mode"] = min(best["torch, no mode"], _per_step(torch_step))
            with torch_flop(display=False):
                best["torch, its FlopCounterMode"] = min(best["torch, its FlopCounterMode"], _per_step(torch_step))
    for name, value in best.items():
        base = best["torch, no mode"] if name.startswith("torch") else best["no mode"]
        print(f"{name:32s} {value:8.1f} us  {value / base:5.2f}x")


if __name__ == "__main__":
    main()
