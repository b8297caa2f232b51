"""Trace the digits CNN of ``train_digits.py`` with ``tensormodes.fx``: its graph, generated code,
shapes on every node (no training needed), and a picture.

    python examples/trace_digits.py                   # writes digits_cnn.dot (and .svg with Graphviz)
    python examples/trace_digits.py graph.svg

Nothing is patched while tracing: module calls reach the tracer through ``nn.Module``'s
module-call interceptor, and tensor calls through ``__torch_function__`` and a mode.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from train_digits import cnn  # the model trained by examples/train_digits.py

import tensormodes as tm
from tensormodes import fx
from tensormodes.fx.passes import ShapeProp


def main(argv: list[str]) -> int:
    tm.manual_seed(0)
    model = cnn()
    traced = fx.symbolic_trace(model)
    ShapeProp(traced).propagate(tm.zeros(1, 64))       # shapes and dtypes into every node's meta
    traced.graph.print_tabular()
    print(traced.code)
    x = tm.randn(5, 64)
    print("traced model gives the model's outputs:", tm.equal(traced(x), model(x)))
    target = Path(argv[0]) if argv else Path("digits_cnn.dot")
    traced.graph.render(target)
    print(f"graph written to {target}")
    if target.suffix == ".dot" and shutil.which("dot"):
        svg = target.with_suffix(".svg")
        traced.graph.render(svg)
        print(f"and drawn to {svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
