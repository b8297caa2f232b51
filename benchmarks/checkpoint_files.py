"""Saving and loading a 6 MiB state dict (16 float32 256x384 tensors) the way a script meets it:
in a fresh process. Each library runs in processes of its own, alternating: the first save and
the first load of the process, then the median of repeated loads and saves in that process.

``bench.py``'s data rows time the same calls in its own long-lived process, where earlier rows
have left the allocator holding freed memory: there both libraries reuse warm pages. In a
fresh process every new buffer is fresh pages (page faults), and the libraries allocate
differently: ``tm.load`` reads the file into one buffer the tensors share, ``safetensors.numpy``
copies each tensor into an array of its own, which the allocator hands back to the system
when it is freed (so repeated loads fault again). Rows: ``tensormodes`` (a ``.pt`` path: PyTorch's
zip format, read by the restricted pickle reader), ``tensormodes-st`` (a ``.safetensors`` path),
``safetensors.numpy`` (the baseline) and ``torch.save``/``torch.load(weights_only=True)`` when
PyTorch is installed, with the ratios of both tensormodes rows to each.

Run: ``python benchmarks/checkpoint_files.py [--processes N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

_CHILD = """
import json, os, sys, time
import numpy as np
library, folder = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
arrays = {f"layer{i}.weight": rng.standard_normal((256, 384)).astype(np.float32) for i in range(16)}
small = {"w": np.ones(4, np.float32)}
if library.startswith("tensormodes"):
    import tensormodes as tm
    state, small = ({k: tm.from_numpy(v) for k, v in d.items()} for d in (arrays, small))
    save, load = tm.save, tm.load
elif library == "safetensors":
    import safetensors.numpy as st
    state, save, load = arrays, lambda obj, path: st.save_file(obj, path), st.load_file
else:
    import torch
    torch.set_num_threads(1)
    state, small = ({k: torch.from_numpy(v) for k, v in d.items()} for d in (arrays, small))
    save, load = torch.save, lambda path: torch.load(path, weights_only=True)
# tm.save writes PyTorch's zip format to any name but a .safetensors one.
extension = ".safetensors" if library == "tensormodes-st" else ".pt"
path, warm = os.path.join(folder, library + extension), os.path.join(folder, library + ".small" + extension)
save(small, warm)
load(warm)  # the code paths, not the data, warmed

def timed(call):
    wall, cpu = time.perf_counter(), time.thread_time()
    call()
    return time.perf_counter() - wall, time.thread_time() - cpu

result = {"first save": timed(lambda: save(state, path)), "first load": timed(lambda: load(path))}
loads = [timed(lambda: load(path)) for _ in range(40)]
saves = [timed(lambda: save(state, path)) for _ in range(9)]
result["repeated load"] = [sorted(x)[len(x) // 2] for x in zip(*loads)]
result["repeated save"] = [sorted(x)[len(x) // 2] for x in zip(*saves)]
print(json.dumps(result))
"""

_METRICS = ("first save", "first load", "repeated save", "repeated load")


def _available(library: str) -> bool:
    module = {"tensormodes": "tensormodes", "tensormodes-st": "tensormodes", "safetensors": "safetensors.numpy",
              "torch": "torch"}[library]
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=7, help="processes per library (default 7)")
    processes = parser.parse_args().processes
    libraries = [name for name in ("tensormodes", "tensormodes-st", "safetensors", "torch") if _available(name)]
    runs: dict[str, list[dict]] = {name: [] for name in libraries}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(processes):
            for name in libraries:
                out = subprocess.run([sys.executable, "-c", _CHILD, name, folder], capture_output=True, text=True,
                                     check=True).stdout
                runs[name].append(json.loads(out))
    medians = {name: {m: [statistics.median(run[m][k] for run in rows) for k in (0, 1)] for m in _METRICS}
               for name, rows in runs.items()}
    print(f"6 MiB state dict, medians of {processes} fresh processes per library (wall ms / CPU ms)")
    print(f"{'':15s}" + "".join(f"{m:>22s}" for m in _METRICS))
    for name, values in medians.items():
        print(f"{name:15s}" + "".join(f"{values[m][0] * 1e3:13.2f} /{values[m][1] * 1e3:7.2f}" for m in _METRICS))
    if "safetensors" in medians:
        base = medians["safetensors"]
        for name in (n for n in medians if n != "safetensors"):
            ratios = "".join(f"{medians[name][m][0] / base[m][0]:13.2f}x /{medians[name][m][1] / base[m][1]:6.2f}x"
                             for m in _METRICS)
            print(f"{name + ' / st':15s}{ratios}")
    if "torch" in medians:
        base = medians["torch"]
        for name in (n for n in medians if n.startswith("tensormodes")):
            ratios = "".join(f"{medians[name][m][0] / base[m][0]:13.2f}x /{medians[name][m][1] / base[m][1]:6.2f}x"
                             for m in _METRICS)
            print(f"{name[:11] + ('-st' if name.endswith('st') else '') + ' / torch':15s}{ratios}")


if __name__ == "__main__":
    main()
