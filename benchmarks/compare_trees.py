"""Time the small-`add` hot path of two source trees, alternating processes.

Usage: ``python benchmarks/compare_trees.py OLD_SRC NEW_SRC [--rounds N]`` where each
argument is a directory holding a ``tensormodes`` package (``git worktree add /tmp/old
<commit>`` then ``/tmp/old/src``). Each round runs one process per tree; the minimum
per row over the rounds is printed, so that the VM's noise hits both trees alike. This
is how "the hot path moves by at most N%" is checked after a change to dispatch.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_MEASURE = """
import json, sys, timeit
sys.path.insert(0, sys.argv[1])
import tensormodes as tm
x, y = tm.ones(1), tm.ones(1)
add = tm.add
rows = {"tm.add(x, y)": lambda: add(x, y), "x + y": lambda: x + y, "x.add(y)": lambda: x.add(y)}
print(json.dumps({name: min(timeit.repeat(fn, number=200_000, repeat=7)) / 200_000 * 1e9
                  for name, fn in rows.items()}))
"""


def _run(tree: str) -> dict[str, float]:
    output = subprocess.run([sys.executable, "-c", _MEASURE, tree], check=True, capture_output=True, text=True)
    return json.loads(output.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    best: dict[str, dict[str, float]] = {options.old: {}, options.new: {}}
    for _ in range(options.rounds):
        for tree in (options.old, options.new):
            for name, ns in _run(tree).items():
                best[tree][name] = min(ns, best[tree].get(name, float("inf")))
    print(f"{'row':16s} {'old':>9s} {'new':>9s} {'change':>8s}")
    for name, old in best[options.old].items():
        new = best[options.new][name]
        print(f"{name:16s} {old:7.0f}ns {new:7.0f}ns {(new / old - 1) * 100:+7.1f}%")


if __name__ == "__main__":
    main()
