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
import contextvars
import inspect
import json
import os
import runpy
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ._api import namespace as tm
from ._api.tensor import Tensor
from .fx import symbolic_trace
from .fx.node import map_aggregate
from .fx.passes import ShapeProp
from .fx.proxy import Proxy
from .modes import LoggingMode, NanCheckMode, OpCounterMode, TimingMode
from .modes.observing import render_table
from .nn.modules.module import intercept_module_calls, register_module_forward_hook
from .nn.parameter import Parameter
from .overrides import capture_torch_function_modes
from .utils import DebugMode
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
  tensormodes trace train.py --dispatch              every aten call, forward and backward, under your line
  tensormodes trace train.py --nan                   stop at the first op producing NaN (or Inf from finite inputs)
  tensormodes trace train.py --count --time          calls and time per op
  tensormodes trace train.py --flops -- --epochs 2   arguments after -- go to the script
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensormodes", description="Run PyTorch-style scripts written against tensormodes under modes.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_EXAMPLES)
    parser.add_argument("--version", action="version", version=f"tensormodes {__version__}")
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
    trace.add_argument("--dispatch", nargs="?", const="-", metavar="FILE",
                       help="log every aten call below autograd (DebugMode's text: aten::mm(t: f32[3, 4], ...)), "
                            "forward and backward, under the line of your script that ran it (for a backward op, "
                            "the forward line that made it), to FILE with --dispatch=FILE")
    trace.add_argument("--flops", action="store_true",
                       help="count FLOPs (2 per multiply-add) per op and per module (to 3 levels of module paths; all "
                            "of them in --report), forward and backward")
    trace.add_argument("--count", action="store_true", help="count calls per public function")
    trace.add_argument("--nan", nargs="?", const="raise", choices=("raise", "warn"),
                       help="stop (or with --nan=warn, warn) at the first op whose result has a NaN, or an Inf it "
                            "made from finite inputs (an Inf passed in, such as a -inf mask, is not flagged), "
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
        if token in ("--log", "--nan", "--dispatch"):
            token = f"{token}={'raise' if token == '--nan' else '-'}"
        attached.append(token)
    return attached, theirs


def main(argv: Sequence[str] | None = None) -> int:
    """The ``tensormodes`` command; returns the exit code (the traced script's own)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, script_args = _split_script_arguments(argv)
    options = _parser().parse_args(ours)
    script = Path(options.script)
    if not (script.is_file() or (script / "__main__.py").is_file()):
        print(f"tensormodes trace: can't open file '{options.script}': no such file", file=sys.stderr)
        return 2
    if options.report and (problem := _unwritable(Path(options.report))):
        print(f"tensormodes trace: can't write the report to '{options.report}': {problem}", file=sys.stderr)
        return 2
    instruments = _instruments(options)
    return _trace(script, [*options.args, *script_args], instruments, options)


def _unwritable(path: Path) -> str | None:
    """Why ``path`` could not be written (checked before the script runs), or None. A file that
    did not exist is created to know, and removed again."""
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError as error:
        return error.strerror or str(error)
    if not existed:
        path.unlink()
    return None


def _trace(script: Path, script_args: list[str], instruments: list, options) -> int:
    saved_argv, saved_path = sys.argv, list(sys.path)
    stream = sys.stderr  # the reports' stream, whatever the script does to sys.stderr
    sys.argv = [str(script), *script_args]
    folder = script.resolve() if script.is_dir() else script.resolve().parent
    sys.path[0:0] = [str(folder)]
    outcome = {"status": "finished", "exit_code": 0, "exception": None}
    start = time.perf_counter()
    try:
        with ExitStack() as stack:
            for instrument in instruments:
                stack.enter_context(instrument)
            stack.enter_context(_threads_inherit(capture_torch_function_modes()))
            # In a copy of the context: modes (or other scopes) the script enters and never
            # exits end with it, as they do when Python exits, and leave ours to exit cleanly.
            contextvars.copy_context().run(runpy.run_path, str(script), run_name="__main__")
    except SystemExit as stop:
        outcome.update(status="exited", exit_code=_exit_code(stop.code, _open_stream(stream)))
    except KeyboardInterrupt:
        outcome.update(status="interrupted", exit_code=130)
        print("\ntensormodes trace: interrupted (Ctrl-C); reports are partial", file=_open_stream(stream))
    except BaseException as error:  # the script's own failure: report it as Python would, then ours
        outcome.update(status="raised", exit_code=1,
                       exception={"type": type(error).__name__, "message": str(error)})
        _open_stream(stream).write(_user_traceback(error))
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    outcome["wall_time_s"] = time.perf_counter() - start
    for instrument in instruments:  # the probes run the model again: after the script, outside every mode
        if isinstance(instrument, _FirstModel):
            instrument.finish()
    stream = _open_stream(stream)
    if not options.quiet:
        console = _RichConsole(file=stream) if _RichConsole is not None and stream.isatty() else None
        for instrument in instruments:
            instrument.print(console, stream)
        verdicts = [v for v in (instrument.saw_nothing() for instrument in instruments) if v is not None]
        if verdicts and all(verdicts) and "torch" in sys.modules:
            print("\ntensormodes trace: no tensormodes calls were seen; the script imports torch "
                  "(tensormodes traces scripts written against tensormodes: `import tensormodes as torch`)",
                  file=stream)
    if options.report:
        _write_report(Path(options.report), script, script_args, outcome, instruments)
    return outcome["exit_code"]


def _open_stream(stream):
    """``stream`` (standard error as it was before the script ran), or a new writer on file
    descriptor 2 if the script closed it."""
    if stream is not None and not getattr(stream, "closed", False):
        return stream
    return open(2, "w", closefd=False, encoding="utf-8", errors="backslashreplace")  # noqa: SIM115 - fd 2 stays open


@contextmanager
def _threads_inherit(captured):
    """While the script runs, threads it starts run with our modes (``captured``): a new thread
    starts with an empty context, which would make its calls invisible to them."""
    start = threading.Thread.start

    def start_with_modes(thread, *args, **kwargs):
        thread.run = captured.wrap(thread.run)
        return start(thread, *args, **kwargs)

    threading.Thread.start = start_with_modes
    try:
        yield
    finally:
        threading.Thread.start = start


def _exit_code(code, stream) -> int:
    """What ``python script.py`` exits with after ``sys.exit(code)`` (printing a message to ``stream``)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stream)
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

    def print(self, console, stream) -> None:
        """Print the table to ``stream``, drawn by rich when ``console`` is one."""
        if console is not None:
            console.print(self.rich_table())
            return
        print(f"\n== {self.title}\n{self.table()}", file=stream)

    def saw_nothing(self) -> bool | None:
        """Whether the mode saw no call at all (None: it cannot tell)."""
        return None


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

    def print(self, console, stream) -> None:
        if self.path is not None:
            print(f"\n== call log written to {self.path}", file=stream)
        else:
            print(f"\n== {self.title}", *self.mode.lines, sep="\n", file=stream)

    def report(self) -> dict:
        return {"file": self.path} if self.path is not None else {"lines": list(self.mode.lines)}

    def saw_nothing(self) -> bool | None:
        return None if self.path is not None else not self.mode.lines


class _Dispatch(_Instrument):
    name, title = "dispatch", "aten calls below autograd, under the line that ran them (backward: the forward line)"

    def __init__(self, target: str) -> None:
        self.path = None if target == "-" else target
        super().__init__(DebugMode(record_stack_trace=True, record_nn_module=True))

    def lines(self) -> list[str]:
        """The log: each call indented by its nesting (module calls, ``[nn.Mod] MLP.fc1``), and
        above each run of calls from one line of the user's code, that line
        (``# train.py:12 in step: loss = model(x)``; ``# backward of train.py:12 ...``)."""
        lines, previous = [], None
        for call in self.mode.operators:
            indent = "  " * (call.call_depth - 1)
            site = DebugMode.call_site(call)
            if site is not None and site != previous:
                where, backward = site
                path = os.path.relpath(where.path) if os.path.isabs(where.path) else where.path
                lines.append(f"{indent}# {'backward of ' if backward else ''}{path}:{where.line} in {where.name}: "
                             f"{where.code}")
                previous = site
            lines.append(indent + call.render(self.mode.record_tensor_attributes))
        return lines

    def print(self, console, stream) -> None:
        if self.path is not None:
            Path(self.path).write_text("".join(line + "\n" for line in self.lines()))
            print(f"\n== aten call log written to {self.path}", file=stream)
        else:
            print(f"\n== {self.title}", *self.lines(), sep="\n", file=stream)

    def report(self) -> dict:
        return {"file": self.path} if self.path is not None else {"lines": self.lines()}

    def saw_nothing(self) -> bool:
        return not self.mode.operators


class _Flops(_Instrument):
    name, title = "flops", "FLOPs (2 per multiply-add), forward and backward"

    # Module paths to three levels: a model's blocks in a ModuleList (GPT.blocks.0) are the third.
    depth = 3

    def __init__(self) -> None:
        super().__init__(FlopCounterMode(display=False, depth=self.depth, track_uncounted=True))

    def table(self) -> str:
        return self.mode.get_table(self.depth)

    def rich_table(self):
        return self.mode.rich_table(self.depth)

    def report(self) -> dict:
        counts = {module: {str(func): count for func, count in per_op.items()}
                  for module, per_op in self.mode.get_flop_counts().items()}
        return {"total": self.mode.get_total_flops(), "by_module": counts}

    def saw_nothing(self) -> bool:
        return not any(self.mode.flop_counts.values()) and not self.mode.not_counted


class _Count(_LongTable):
    name, title = "count", "calls per function"
    headers, align = ["function", "calls"], "lr"

    def __init__(self) -> None:
        super().__init__(OpCounterMode())

    def table(self) -> str:
        # Property reads (tensor.grad, .requires_grad ...), most of them made by the library's own
        # optimizer and module code, get a section of their own below the calls.
        rows = self.mode.rows()
        calls = [row for row in rows if not _is_property_access(row[0])]
        reads = [row for row in rows if _is_property_access(row[0])]
        text = render_table(self.headers, calls[:self._SHOWN], align=self.align)
        if len(calls) > self._SHOWN:
            text += f"\n... and {len(calls) - self._SHOWN} more functions (all of them in --report)"
        if reads:
            text += "\n\n" + render_table(["tensor attribute read or set", "times"], reads[:5], align="lr")
            if len(reads) > 5:
                text += f"\n... and {len(reads) - 5} more attributes (all of them in --report)"
        return text

    def report(self) -> dict:
        return dict(self.mode.counts)

    def saw_nothing(self) -> bool:
        return not self.mode.counts


class _Time(_LongTable):
    name, title = "time", "time per function (exclusive of the calls it makes; inclusive)"
    headers, align = ["function", "calls", "exclusive", "inclusive", "exclusive/call"], "lrrrr"

    def __init__(self) -> None:
        super().__init__(TimingMode())

    def report(self) -> dict:
        return {name: {"calls": s.calls, "inclusive_ns": s.inclusive_ns, "exclusive_ns": s.exclusive_ns}
                for name, s in self.mode.stats.items()}

    def saw_nothing(self) -> bool:
        return not self.mode.stats


class _Nan(_Instrument):
    name, title = "nan", "NaN/Inf check"

    def __init__(self, action: str) -> None:
        super().__init__(NanCheckMode(action=action))

    def print(self, console, stream) -> None:
        pass  # it speaks when it finds something: an exception or a warning

    def report(self) -> dict:
        return {"action": self.mode.action}


class _FirstModel:
    """Catches the first module the script calls from outside any module (its model) and the
    metadata of that first call's inputs, positional and keyword, nested in tuples, lists and
    dicts (as meta tensors: no copy of the data); ``finish`` runs after the script, outside
    every mode."""

    def __init__(self) -> None:
        self.model = self.error = None
        self.inputs: tuple = ()
        self.kwargs: dict = {}
        self.message = ""
        self._depth = 0
        self._scope = None

    def _intercept(self, module, forward, args, kwargs):
        if self._depth == 0 and self.model is None and not _holds_proxy((args, kwargs)):
            # kept as they are, and made meta in ``finish``: here the modes would see it
            self.model, self.inputs, self.kwargs = module, args, kwargs
        self._depth += 1
        try:
            return forward(*args, **kwargs)
        finally:
            self._depth -= 1

    def __enter__(self):
        self._scope = intercept_module_calls(self._intercept)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc_info):
        scope, self._scope = self._scope, None
        return scope.__exit__(*exc_info)

    def finish(self) -> None:
        """Run the probe on the model caught (after the script, outside every mode)."""
        self.inputs, self.kwargs = _to_meta(self.inputs), _to_meta(self.kwargs)
        self.message = self._finish() if self.model is not None else f"{self.name}: the script called no nn.Module"

    def print(self, console, stream) -> None:
        print(f"\n== {self.message}", file=stream)

    def saw_nothing(self) -> bool:
        return self.model is None


def _to_meta(value):
    """``value`` with every tensor in it (in tuples, lists, dicts) a meta tensor of its metadata."""
    return map_aggregate(value, lambda v: v.detach().to("meta") if isinstance(v, Tensor) else v)


def _holds_proxy(value) -> bool:
    """Whether ``value`` holds an fx ``Proxy`` (a module call made by a tracer, not by the model's user)."""
    found = []
    map_aggregate(value, lambda v: found.append(v) if isinstance(v, Proxy) else None)
    return bool(found)


def _tensors_in(value) -> list:
    found: list = []
    map_aggregate(value, lambda v: found.append(v) if isinstance(v, Tensor) else None)
    return found


@contextmanager
def _on_meta(model):
    """``model``'s tensors (parameters, buffers, tensor attributes of its modules) swapped in
    place for meta twins, and restored on exit. In place, not on a copy: a lambda or closure
    attribute holding the model's submodules (``self.mlpf = lambda x: self.fc(x)``) reaches
    them through the model itself. A tensor held twice (tied weights) gets one twin."""
    twins: dict[int, Tensor] = {}
    swapped: list[tuple[dict, str, Tensor]] = []

    def twin(tensor: Tensor) -> Tensor:
        found = twins.get(id(tensor))
        if found is None:
            data = tensor.detach().to("meta")
            found = twins[id(tensor)] = (type(tensor)(data, tensor.requires_grad) if isinstance(tensor, Parameter)
                                         else data)
        return found

    try:
        for module in model.modules():
            state = module.__dict__
            for holder in (state.get("_parameters", {}), state.get("_buffers", {}), state):
                for key, value in list(holder.items()):
                    if isinstance(value, Tensor) and not value.is_meta:
                        swapped.append((holder, key, value))
                        holder[key] = twin(value)
        yield model
    finally:
        for holder, key, value in reversed(swapped):
            holder[key] = value


class _Shapes(_FirstModel):
    """``--shapes``: the model's layers with their output shapes and parameter counts, computed
    on the meta device from the first call's input shapes (nothing is computed). The model runs
    with its tensors swapped for meta ones and under ``with tm.device("meta")``, so that the
    tensors its ``forward`` makes without ``device=`` (``tm.arange(T)`` positions) are meta too."""

    name = "shapes"

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []

    def _finish(self) -> str:
        named = list(self.model.named_modules())
        paths = {id(module): path for path, module in named}
        order = {path: i for i, (path, _) in enumerate(named)}
        seen: list[tuple] = []
        parameters = {id(module): sum(p.numel() for p in module.parameters(recurse=module is self.model))
                      for _, module in named}  # the model's row counts all its parameters; a layer's its own

        def record(module, args, output) -> None:
            shapes = [tuple(v.shape) for v in _tensors_in(output)]
            seen.append((paths.get(id(module), "?"), type(module).__name__, shapes, parameters.get(id(module), 0)))

        handle = register_module_forward_hook(record)
        try:
            with _on_meta(self.model), tm.device("meta"):
                self.model(*self.inputs, **self.kwargs)
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
        inputs = ", ".join(_shape_text(tuple(t.shape)) for t in _tensors_in((self.inputs, self.kwargs)))
        return (f"shapes of {type(self.model).__name__} for inputs {inputs} (computed on the meta device)\n"
                + render_table(["module", "type", "output shape", "parameters"], table, align="lllr"))

    def report(self) -> dict:
        return {"model": None if self.model is None else type(self.model).__name__, "error": self.error,
                "rows": self.rows}


def _is_property_access(name: str) -> bool:
    return name.endswith(("__get__", "__set__"))


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
            # the graph's placeholders are forward's parameters: keyword arguments take their places
            arguments = inspect.signature(self.model.forward).bind(*self.inputs, **self.kwargs).args
            with tm.device("meta"):  # tensors the graph makes without device= (tm.arange(T)) follow
                ShapeProp(traced).propagate(*arguments)
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
    if options.dispatch:
        chosen.append(_Dispatch(options.dispatch))
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
