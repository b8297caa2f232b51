"""Overhead of the ready-made modes on a training step, in thread CPU time.

Run ``python benchmarks/ready_modes.py [REPEATS]`` (default 40).
``python benchmarks/ready_modes.py --dispatch [REPEATS] [--cpu-time]`` times the dispatch-level
instruments instead (``dispatch_instruments``), in wall time (thread CPU time with ``--cpu-time``,
steadier on a loaded machine). The step is the autograd
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


def dispatch_instruments(repeats: int, timer=time.perf_counter) -> None:
    """Wall time (or ``timer``'s) of 20 training steps (the MLP step above) under each dispatch-level instrument,
    against no mode and against a pass-through ``TorchDispatchMode`` (what any dispatch mode pays
    before its handler does anything); PyTorch's step under its own counter and DebugMode too."""
    from tensormodes.utils._debug_mode import DebugMode
    from tensormodes.utils._python_dispatch import TorchDispatchMode

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    step, torch_step = bench._mlp_steps()
    modes = {"no mode": None, "pass-through TorchDispatchMode": PassThrough,
             "FlopCounterMode": lambda: FlopCounterMode(display=False), "DebugMode": DebugMode,
             "DebugMode(record_hash=True)": lambda: DebugMode(record_hash=True)}
    runs = [(name, step, make, "no mode") for name, make in modes.items()]
    if torch_step is not None:
        from torch.utils._debug_mode import DebugMode as TorchDebugMode
        from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode

        runs += [("torch, no mode", torch_step, None, "torch, no mode"),
                 ("torch, its FlopCounterMode", torch_step, lambda: TorchFlopCounterMode(display=False),
                  "torch, no mode"),
                 ("torch, its DebugMode", torch_step, TorchDebugMode, "torch, no mode")]
    best = {name: float("inf") for name, *_ in runs}
    for _ in range(repeats):
        for name, run, make, _base in runs:
            if make is None:
                best[name] = min(best[name], timeit.Timer(run, timer=timer).timeit(20) / 20 * 1e6)
            else:
                with make():
                    best[name] = min(best[name], timeit.Timer(run, timer=timer).timeit(20) / 20 * 1e6)
    for name, _run, _make, base in runs:
        print(f"{name:34s} {best[name]:8.1f} us  {best[name] / best[base]:5.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dispatch"]:
        counts = [a for a in sys.argv[2:] if a.isdigit()]
        dispatch_instruments(int(counts[0]) if counts else 10,
                             time.thread_time if "--cpu-time" in sys.argv else time.perf_counter)
    else:
        main()
