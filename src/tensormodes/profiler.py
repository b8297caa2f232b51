"""``tensormodes.profiler``: PyTorch's ``torch.profiler.profile`` and ``record_function``,
built on ``TimingMode``: the wall time of every public call made inside the ``with`` block,
and of the regions named with ``record_function``.

Rows are named by public function (``tensormodes.mm``, ``tensormodes.nn.functional.linear``)
rather than PyTorch's ATen operators (``aten::mm``); times are in microseconds like
PyTorch's. Only the CPU is profiled; ``schedule`` is accepted and the whole block is
profiled; ``record_shapes``, ``profile_memory``, ``with_stack`` and ``with_flops`` are
accepted and ignored.

>>> import tensormodes as tm
>>> from tensormodes.profiler import profile, record_function
>>> with profile() as prof:
...     with record_function("forward"):
...         _ = tm.ones(2, 2) @ tm.ones(2, 2)
>>> sorted(event.key for event in prof.key_averages())
['forward', 'tensormodes.Tensor.matmul', 'tensormodes.ones']
>>> [event.count for event in prof.key_averages() if event.key == "tensormodes.ones"]
[2]
"""

from __future__ import annotations

import enum
from contextlib import nullcontext

from .modes.observing import render_table
from .modes.timing import TimingMode

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule", "FunctionEventAvg",
           "EventList"]

# The profilers in force, innermost last: record_function reports to them all.
_ACTIVE: list = []


class ProfilerActivity(enum.Enum):
    """What a profiler records: only ``CPU`` is recorded here."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a ``schedule`` tells the profiler to do at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """PyTorch's step schedule, as a function of the step number (accepted by ``profile``, which
    here profiles the whole block)."""
    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


class FunctionEventAvg:
    """One row of ``key_averages()``: a function (or ``record_function`` region), its number of
    calls and its times in microseconds (total includes nested calls, self does not)."""

    def __init__(self, key: str, count: int, cpu_time_total: float, self_cpu_time_total: float) -> None:
        self.key = key
        self.count = count
        self.cpu_time_total = cpu_time_total
        self.self_cpu_time_total = self_cpu_time_total

    @property
    def cpu_time(self) -> float:
        """Average total time per call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us count={self.count}>")


_SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
              "cpu_time": "cpu_time", "count": "count"}


def _us(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.3f}s"
    if value >= 1e3:
        return f"{value / 1e3:.3f}ms"
    return f"{value:.3f}us"


class EventList(list):
    """``key_averages()``'s list of ``FunctionEventAvg``, with PyTorch's ``table()``."""

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The rows as a text table (Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
        avg, # of Calls), sorted by ``sort_by`` (largest first) and cut at ``row_limit``."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
            rows.sort(key=lambda event: getattr(event, _SORT_KEYS[sort_by]), reverse=True)
        if row_limit > 0:
            rows = rows[:row_limit]
        total_self = sum(event.self_cpu_time_total for event in self) or 1.0
        body = [[event.key[:max_name_column_width], f"{100 * event.self_cpu_time_total / total_self:.2f}%",
                 _us(event.self_cpu_time_total), f"{100 * event.cpu_time_total / total_self:.2f}%",
                 _us(event.cpu_time_total), _us(event.cpu_time), event.count] for event in rows]
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        text = render_table(headers, body, align="lrrrrrr")
        footer = f"Self CPU time total: {_us(sum(event.self_cpu_time_total for event in self))}"
        return (f"{header}\n" if header else "") + text + "\n" + footer + "\n"


class profile:  # noqa: N801 - PyTorch's spelling
    """Context manager timing every public call in its block (see the module docstring).
    ``key_averages()`` gives the rows; ``.table()`` prints them as PyTorch's does."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None, custom_trace_id_callback=None,
                 post_processing_timeout_s: float | None = None) -> None:
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.timer = TimingMode()
        self._running = None

    def start(self) -> None:
        """Starts profiling (as entering the ``with`` block)."""
        self._running = self.timer.__enter__()
        _ACTIVE.append(self)

    def stop(self) -> None:
        """Stops profiling, and calls ``on_trace_ready(self)`` if given."""
        _ACTIVE.remove(self)
        self.timer.__exit__(None, None, None)
        self._running = None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.stop()

    def step(self) -> None:
        """Marks the end of a training step (counted; the whole block is profiled)."""
        self.step_num += 1

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """One ``FunctionEventAvg`` per function and ``record_function`` region."""
        return EventList(FunctionEventAvg(name, stats.calls, stats.inclusive_ns / 1e3, stats.exclusive_ns / 1e3)
                         for name, stats in self.timer.stats.items())


class record_function:  # noqa: N801 - PyTorch's spelling
    """Context manager (and decorator) naming a region of code: the profilers in force show it
    as a row of its own, whose total time includes the calls made inside it."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._spans: list = []

    def __enter__(self):
        span = _ACTIVE[-1].timer.span(self.name) if _ACTIVE else nullcontext()
        span.__enter__()
        self._spans.append(span)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self._spans.pop().__exit__(exc_type, exc_value, traceback)

    def __call__(self, func):
        """Use as a decorator: each call of ``func`` is a region."""
        def recorded(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)
        recorded.__name__ = getattr(func, "__name__", "recorded")
        recorded.__doc__ = getattr(func, "__doc__", None)
        return recorded
