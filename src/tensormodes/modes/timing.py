"""``TimingMode``: wall time per public function, inclusive and exclusive of nested calls.

>>> import tensormodes as tm, tensormodes.nn.functional as F
>>> from tensormodes.modes import TimingMode
>>> with TimingMode() as timer:
...     _ = F.softmax(tm.ones(4, 4), dim=-1)
>>> stats = timer.stats["tensormodes.nn.functional.softmax"]
>>> stats.calls, stats.inclusive_ns >= stats.exclusive_ns
(1, True)
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from time import perf_counter_ns

from .._overrides.composite import Observer, calls_public_api, run_composite
from ..overrides import TorchFunctionMode
from .module_calls import ModuleCalls, NestsModuleCalls
from .observing import format_ns, public_name, render_table, rich_table

__all__ = ["TimingMode", "OpTime"]


@dataclass
class OpTime:
    """Calls of one function and their total wall time in ns: ``inclusive_ns`` counts the
    calls it made itself, ``exclusive_ns`` does not."""

    calls: int = 0
    inclusive_ns: int = 0
    exclusive_ns: int = 0


_NAMES: dict = {}


class TimingMode(Observer, NestsModuleCalls, TorchFunctionMode):
    """Times every public call with ``time.perf_counter_ns``. A composite's own calls
    (``F.softmax`` calling ``Tensor.softmax``; the gradient formulas that
    ``Tensor.backward`` runs) are timed as well, and subtracted from its exclusive time.
    ``.stats`` maps the public name to an ``OpTime``; ``table()`` lists them by exclusive
    time, largest first.

    Module calls are timed too, under the module's path as ``FlopCounterMode`` names it
    (``MLP``, ``MLP.fc1``): inclusive of the calls its ``forward`` makes, which its exclusive
    time leaves out (through nn.Module's global hooks, registered while the mode is entered).

    >>> import tensormodes as tm
    >>> from tensormodes.modes import TimingMode
    >>> with TimingMode() as timer:
    ...     _ = tm.ones(3) + 1
    >>> sorted(timer.stats), timer.stats["tensormodes.ones"].calls
    (['tensormodes.Tensor.add', 'tensormodes.ones'], 1)
    """

    def __init__(self) -> None:
        self.stats: dict[str, OpTime] = {}
        self._children: list[int] = []
        self._entries = 0
        self._modules = ModuleCalls(self._enter_module, self._leave_module)
        self._module_starts: list[int] = []  # start times of the module calls under way

    def _last_exit(self) -> None:
        # module calls left open by an exit in their middle close nothing
        del self._children[len(self._children) - len(self._module_starts):]
        self._module_starts = []

    def _enter_module(self, module, name: str, args: tuple) -> None:
        self._children.append(0)
        self._module_starts.append(perf_counter_ns())

    def _leave_module(self, module, name: str, args: tuple, output, error) -> None:
        if self._module_starts:
            self._account(name, self._module_starts.pop())

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Run the call and add its time to its function's totals."""
        children = self._children
        children.append(0)
        start = perf_counter_ns()
        try:
            if calls_public_api(func):
                return run_composite(self, func, args, kwargs or {}, True)
            return func(*args, **(kwargs or {}))
        finally:
            name = _NAMES.get(func)
            if name is None:
                name = _NAMES[func] = public_name(func)
            self._account(name, start)

    def _account(self, name: str, start: int) -> None:
        """Close the innermost open call or span, started at ``start``, as one call of ``name``."""
        elapsed = perf_counter_ns() - start
        children = self._children
        nested = children.pop()
        if children:
            children[-1] += elapsed
        stats = self.stats.get(name)
        if stats is None:
            stats = self.stats[name] = OpTime()
        stats.calls += 1
        stats.inclusive_ns += elapsed
        stats.exclusive_ns += elapsed - nested

    @contextmanager
    def span(self, name: str):
        """Time the ``with`` block as one call of ``name``: the calls made inside it are nested
        in it, and it is nested in the call or span around it (``profiler.record_function``).

        >>> import tensormodes as tm
        >>> from tensormodes.modes import TimingMode
        >>> with TimingMode() as timer, timer.span("step"):
        ...     _ = tm.ones(2)
        >>> timer.stats["step"].calls, timer.stats["step"].inclusive_ns >= timer.stats["tensormodes.ones"].inclusive_ns
        (1, True)
        """
        self._children.append(0)
        start = perf_counter_ns()
        try:
            yield self
        finally:
            self._account(name, start)

    def rows(self) -> list[list]:
        """``[name, calls, exclusive, inclusive, exclusive per call]`` rows, by exclusive time."""
        ordered = sorted(self.stats.items(), key=lambda item: -item[1].exclusive_ns)
        return [[name, s.calls, format_ns(s.exclusive_ns), format_ns(s.inclusive_ns),
                 format_ns(s.exclusive_ns / s.calls)] for name, s in ordered]

    _HEADERS = ["function", "calls", "exclusive", "inclusive", "exclusive/call"]

    def table(self) -> str:
        """The times as a plain-text table, largest exclusive time first."""
        return render_table(self._HEADERS, self.rows(), align="lrrrr")

    def rich_table(self):
        """The times as a ``rich.table.Table`` (needs ``rich``)."""
        return rich_table(self._HEADERS, self.rows(), title="time per function")

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"TimingMode({len(self.stats)} functions)"
