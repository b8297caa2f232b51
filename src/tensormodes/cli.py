"""``tensormodes trace``: run an unmodified script under ready-made modes and report what it did.

::

    tensormodes trace train.py --flops --log --nan --time --report run.json
    python -m tensormodes trace train.py --count -- --epochs 2      # the script's own arguments

The script runs as ``__main__`` with its own ``sys.argv`` and ``sys.path[0]``, under the
chosen modes (``tensormodes.modes``), composed on the mode stack like any user mode. After
its own output come the reports (on standard error, so the script's standard output stays
its own): a call log, FLOPs per op and per module, op counts, time per op, the first
NaN/Inf producer. Its exit code is kept (``sys.exit(3)`` exits 3; an exception exits 1,
printing the script's own traceback without tensormodes' frames; ``Ctrl-C`` exits 130);
the reports are printed in every case, partial if the script stopped early.

``--report PATH`` writes everything as one JSON document (schema in ``docs/trace-report.md``,
versioned by its ``"schema"`` field).
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import time
import traceback
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from ._api.tensor import Tensor
from .fx import symbolic_trace
from .fx.node import map_aggregate
from .fx.passes import ShapeProp
from .fx.passes.shape_prop import meta_copy
from .modes import LoggingMode, NanCheckMode, OpCounterMode, TimingMode
from .modes.observing import public_name, render_table
from .nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from .utils.flop_counter import FlopCounterMode
from .version import __version__

try:  # optional: tables drawn by rich when it is installed and standard error is a terminal
    from rich.console import Console as _RichConsole
except ImportError:
    _RichConsole = None

__all__ = ["main", "REPORT_SCHEMA"]

REPORT_SCHEMA = "tensormodes.trace/1"

_PACKAGE_DIR = str(Path(__file__).resolve().parent)

_EXAMPLES = """\
examples:
  tensormodes trace train.py --flops                 FLOPs per op and per module, forward and backward
  tensormodes trace train.py --log=calls.txt         every call, with shapes and dtypes, to a file
  tensormodes trace train.py --nan                   stop at the first op producing NaN/Inf, with your line
  tensormodes trace train.py --count --time          calls and time per op
  tensormodes trace train.py --flops -- --epochs 2   arguments after -- go to the script
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensormodes", description="Run PyTorch-style scripts written against tensormodes under modes.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_EXAMPLES)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    trace = commands.add_parser(
        "trace", help="run SCRIPT under the chosen modes and report what it did",
        description="Run SCRIPT (as __main__, with its own sys.argv) under the chosen modes and report what it "
                    "did after its own output. Without flags it runs the script plainly.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_EXAMPLES)
    trace.add_argument("script", metavar="SCRIPT", help="the Python script to run")
    trace.add_argument("args", nargs="*", metavar="ARGS", help="arguments for the script (after --)")
    trace.add_argument("--log", nargs="?", const="-", metavar="FILE",
                       help="log every call with its argument shapes and dtypes (to FILE with --log=FILE; "
                            "identical calls from one line are grouped): --log=calls.txt")
    trace.add_argument("--flops", action="store_true",
                       help="count FLOPs (2 per multiply-add) per op and per module, forward and backward")
    trace.add_argument("--count", action="store_true", help="count calls per public function")
    trace.add_argument("--nan", nargs="?", const="raise", choices=("raise", "warn"),
                       help="stop (or with --nan=warn, warn) at the first op whose result has a NaN or Inf, "
                            "naming the op and your source line")
    trace.add_argument("--time", action="store_true", help="wall time per op, inclusive and exclusive")
    trace.add_argument("--graph", metavar="PATH",
                       help="trace the first model the script calls (its outermost nn.Module) with tensormodes.fx "
                            "and draw its graph, with shapes, to PATH (.dot always; .svg/.png with Graphviz)")
    trace.add_argument("--shapes", action="store_true",
                       help="list the layers of the first model the script calls with their output shapes and "
                            "parameter counts, computed on the meta device (no data): --shapes")
    trace.add_argument("--report", metavar="PATH", help="write everything seen as JSON to PATH")
    trace.add_argument("--quiet", action="store_true", help="print no tables (use with --report)")
    return parser


def _split_script_arguments(argv: list[str]) -> tuple[list[str], list[str]]:
    """Our arguments, and the script's (everything after the first ``--``). Optional values must
    be attached (``--log=FILE``), so ``--log train.py`` never takes the script for a file."""
    if "--" in argv:
        i = argv.index("--")
        ours, theirs = argv[:i], argv[i + 1:]
    else:
        ours, theirs = argv, []
    attached = []
    for token in ours:
        if token in ("--log", "--nan"):
            token = f"{token}={'-' if token == '--log' else 'raise'}"
        attached.append(token)
    return attached, theirs


def main(argv: Sequence[str] | None = None) -> int:
    """The ``tensormodes`` command; returns the exit code (the traced script's own)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, script_args = _split_script_arguments(argv)
    options = _parser().parse_args(ours)
    script = Path(options.script)
    if not script.is_file():
        print(f"tensormodes trace: can't open file '{options.script}': no such file", file=sys.stderr)
        return 2
    instruments = _instruments(options)
    return _trace(script, [*options.args, *script_args], instruments, options)


def _trace(script: Path, script_args: list[str], instruments: list, options) -> int:
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(script), *script_args]
    sys.path[0:0] = [str(script.resolve().parent)]
    outcome = {"status": "finished", "exit_code": 0, "exception": None}
    start = time.perf_counter()
    try:
        with ExitStack() as stack:
            for instrument in instruments:
                stack.enter_context(instrument)
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit as stop:
        outcome.update(status="exited", exit_code=_exit_code(stop.code))
    except KeyboardInterrupt:
        outcome.update(status="interrupted", exit_code=130)
        print("\ntensormodes trace: interrupted (Ctrl-C); reports are partial", file=sys.stderr)
    except BaseException as error:  # the script's own failure: report it as Python would, then ours
        outcome.update(status="raised", exit_code=1,
                       exception={"type": type(error).__name__, "message": str(error)})
        sys.stderr.write(_user_traceback(error))
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    outcome["wall_time_s"] = time.perf_counter() - start
    if not options.quiet:
        console = _RichConsole(stderr=True) if _RichConsole is not None and sys.stderr.isatty() else None
        for instrument in instruments:
            instrument.print(console)
    if options.report:
        _write_report(Path(options.report), script, script_args, outcome, instruments)
    return outcome["exit_code"]


def _exit_code(code) -> int:
    """What ``python script.py`` exits with after ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _is_users_frame(frame: traceback.FrameSummary) -> bool:
    filename = frame.filename
    if filename.startswith(("<tensormodes generated", "<frozen runpy")):
        return False
    resolved = os.path.abspath(filename)
    return not (resolved.startswith(_PACKAGE_DIR + os.sep) or os.path.basename(resolved) == "runpy.py")


def _user_traceback(error: BaseException) -> str:
    """The traceback Python would print for ``error``, without tensormodes' (and runpy's) frames."""
    report = traceback.TracebackException.from_exception(error)
    seen = set()
    pending = [report]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current.stack = traceback.StackSummary.from_list([f for f in current.stack if _is_users_frame(f)])
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return "".join(report.format())


def _write_report(path: Path, script: Path, script_args: list[str], outcome: dict, instruments: list) -> None:
    document = {
        "schema": REPORT_SCHEMA,
        "script": str(script),
        "argv": script_args,
        "tensormodes_version": __version__,
        **outcome,
        "modes": {instrument.name: instrument.report() for instrument in instruments},
    }
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")


# -- what each flag runs, prints and reports ------------------------------------------------

class _Instrument:
    """One flag's mode, entered around the script, and what the command prints and reports
    for it afterwards (also after the script failed: the reports are then partial)."""

    name = ""
    title = ""

    def __init__(self, mode) -> None:
        self.mode = mode

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc_info):
        return self.mode.__exit__(*exc_info)

    def table(self) -> str:
        return self.mode.table()

    def rich_table(self):
        return self.mode.rich_table()

    def print(self, console) -> None:
        """Print the table, drawn by rich when ``console`` is one."""
        if console is not None:
            console.print(self.rich_table())
            return
        print(f"\n== {self.title}\n{self.table()}", file=sys.stderr)


class _LongTable(_Instrument):
    """A table with a row per function: the first ``_SHOWN`` rows are printed, all are reported."""

    _SHOWN = 15

    def table(self) -> str:
        rows = self.mode.rows()
        text = render_table(self.headers, rows[:self._SHOWN], align=self.align)
        if len(rows) > self._SHOWN:
            text += f"\n... and {len(rows) - self._SHOWN} more functions (all of them in --report)"
        return text

    def report(self) -> dict:
        return {}


class _Log(_Instrument):
    name, title = "log", "calls (identical calls from one source line grouped)"

    def __init__(self, target: str) -> None:
        self.path = None if target == "-" else target
        super().__init__(LoggingMode(self.path, dedupe=True))

    def print(self, console) -> None:
        if self.path is not None:
            print(f"\n== call log written to {self.path}", file=sys.stderr)
        else:
            print(f"\n== {self.title}", *self.mode.lines, sep="\n", file=sys.stderr)

    def report(self) -> dict:
        return {"file": self.path} if self.path is not None else {"lines": list(self.mode.lines)}


class _Flops(_Instrument):
    name, title = "flops", "FLOPs (2 per multiply-add), forward and backward"

    def __init__(self) -> None:
        super().__init__(FlopCounterMode(display=False))

    def table(self) -> str:
        return self.mode.get_table()

    def report(self) -> dict:
        counts = {module: {public_name(func): count for func, count in per_op.items()}
                  for module, per_op in self.mode.get_flop_counts().items()}
        return {"total": self.mode.get_total_flops(), "by_module": counts}


class _Count(_LongTable):
    name, title = "count", "calls per function"
    headers, align = ["function", "calls"], "lr"

    def __init__(self) -> None:
        super().__init__(OpCounterMode())

    def report(self) -> dict:
        return dict(self.mode.counts)


class _Time(_LongTable):
    name, title = "time", "time per function (exclusive of the calls it makes; inclusive)"
    headers, align = ["function", "calls", "exclusive", "inclusive", "exclusive/call"], "lrrrr"

    def __init__(self) -> None:
        super().__init__(TimingMode())

    def report(self) -> dict:
        return {name: {"calls": s.calls, "inclusive_ns": s.inclusive_ns, "exclusive_ns": s.exclusive_ns}
                for name, s in self.mode.stats.items()}


class _Nan(_Instrument):
    name, title = "nan", "NaN/Inf check"

    def __init__(self, action: str) -> None:
        super().__init__(NanCheckMode(action=action))

    def print(self, console) -> None:
        pass  # it speaks when it finds something: an exception or a warning

    def report(self) -> dict:
        return {"action": self.mode.action}


class _FirstModel:
    """Catches the first module the script calls from outside any module (its model) and the
    metadata of that first call's inputs (as meta tensors: no copy of the data); ``_finish``
    runs after the script."""

    def __init__(self) -> None:
        self.model = self.inputs = self.error = None
        self.message = ""
        self._depth = 0
        self._handles: list = []

    def _before(self, module, args) -> None:
        if self._depth == 0 and self.model is None:
            self.model = module
            self.inputs = tuple(a.detach().to("meta") if isinstance(a, Tensor) else a for a in args)
        self._depth += 1

    def _after(self, module, args, output) -> None:
        self._depth -= 1

    def __enter__(self):
        self._handles = [register_module_forward_pre_hook(self._before),
                         register_module_forward_hook(self._after, always_call=True)]
        return self

    def __exit__(self, *exc_info):
        for handle in self._handles:
            handle.remove()
        self.message = self._finish() if self.model is not None else f"{self.name}: the script called no nn.Module"

    def print(self, console) -> None:
        print(f"\n== {self.message}", file=sys.stderr)


class _Shapes(_FirstModel):
    """``--shapes``: the model's layers with their output shapes and parameter counts, computed
    on the meta device from the first call's input shapes (nothing is computed)."""

    name = "shapes"

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []

    def _finish(self) -> str:
        twin = meta_copy(self.model)
        named = list(twin.named_modules())
        paths = {id(module): path for path, module in named}
        order = {path: i for i, (path, _) in enumerate(named)}
        seen: list[tuple] = []

        def record(module, args, output) -> None:
            shapes = []
            map_aggregate(output, lambda v: shapes.append(tuple(v.shape)) if isinstance(v, Tensor) else None)
            # The model's row counts all its parameters; a layer's row only its own.
            own = module is not twin
            seen.append((paths.get(id(module), "?"), type(module).__name__, shapes,
                         sum(p.numel() for p in module.parameters(recurse=not own))))

        handle = register_module_forward_hook(record)
        try:
            twin(*self.inputs)
        except Exception as error:  # noqa: BLE001 - the script ran; say why its shapes could not be had
            self.error = f"{type(error).__name__}: {error}"
            return f"shapes: {type(self.model).__name__} could not run on the meta device ({self.error})"
        finally:
            handle.remove()
        rows = sorted(seen, key=lambda row: order.get(row[0], len(order)))  # the model first, then its layers
        self.rows = [{"module": path or "(model)", "type": kind, "output_shapes": [list(s) for s in shapes],
                      "parameters": count} for path, kind, shapes, count in rows]
        table = [[row["module"], row["type"], ", ".join(_shape_text(s) for s in row["output_shapes"]),
                  f"{row['parameters']:,}"] for row in self.rows]
        inputs = ", ".join(_shape_text(tuple(a.shape)) for a in self.inputs if isinstance(a, Tensor))
        return (f"shapes of {type(self.model).__name__} for inputs {inputs} (computed on the meta device)\n"
                + render_table(["module", "type", "output shape", "parameters"], table, align="lllr"))

    def report(self) -> dict:
        return {"model": None if self.model is None else type(self.model).__name__, "error": self.error,
                "rows": self.rows}


def _shape_text(shape: tuple) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


class _Graph(_FirstModel):
    """``--graph``: the script's model is traced with ``tensormodes.fx`` after the run, shapes
    propagated on the meta device from the first call's inputs, and the graph drawn to the path
    given."""

    name = "graph"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = Path(path)

    def _finish(self) -> str:
        try:
            traced = symbolic_trace(self.model)
            ShapeProp(traced).propagate(*self.inputs)
            traced.graph.render(self.path)
        except Exception as error:  # noqa: BLE001 - the script ran; say why its model could not be drawn
            self.error = f"{type(error).__name__}: {error}"
            return f"graph: {type(self.model).__name__} could not be traced ({self.error})"
        return f"graph of {type(self.model).__name__} ({len(traced.graph.nodes)} nodes) written to {self.path}"

    def report(self) -> dict:
        return {"path": str(self.path), "model": None if self.model is None else type(self.model).__name__,
                "error": self.error}


def _instruments(options) -> list[_Instrument]:
    """The modes the flags ask for, outermost first: the timer innermost, so that the other
    modes' own work is not counted in the ops' times."""
    chosen: list[_Instrument] = []
    if options.log:
        chosen.append(_Log(options.log))
    if options.count:
        chosen.append(_Count())
    if options.flops:
        chosen.append(_Flops())
    if options.nan:
        chosen.append(_Nan(options.nan))
    if options.time:
        chosen.append(_Time())
    if options.graph:
        chosen.append(_Graph(options.graph))
    if options.shapes:
        chosen.append(_Shapes())
    return chosen
