"""``OpCounterMode``: how many times each public function was called.

>>> import tensormodes as tm
>>> from tensormodes.modes import OpCounterMode
>>> with OpCounterMode() as counter:
...     x = tm.ones(3)
...     y = (x + 1) * (x + 2)
>>> counter.counts["tensormodes.Tensor.add"], counter.counts["tensormodes.Tensor.mul"]
(2, 1)
"""

from __future__ import annotations

from collections import Counter

from .._api.tensor import Tensor
from .._overrides.composite import Observer, calls_public_api, run_composite
from ..overrides import TorchFunctionMode
from .observing import ThreadDepth, public_name, render_table, rich_table

__all__ = ["OpCounterMode"]

# func -> (public name, whether its body makes public calls): one lookup per call.
_PLANS: dict = {}


def _plan(func) -> tuple[str, bool]:
    plan = _PLANS[func] = (public_name(func), calls_public_api(func))
    return plan


class OpCounterMode(Observer, TorchFunctionMode):
    """Counts calls per public function, by resolved name (``tensormodes.add``,
    ``tensormodes.Tensor.add``, ``tensormodes.nn.functional.relu``), in ``.counts``
    (a ``collections.Counter``).

    The gradient formulas that ``Tensor.backward()`` runs are counted too (as the calls
    they make). ``nested=True`` also counts the calls made inside composite functions
    (``F.softmax`` calling ``Tensor.softmax``); by default only the calls your code makes.

    >>> import tensormodes as tm
    >>> from tensormodes.modes import OpCounterMode
    >>> x = tm.ones(2, requires_grad=True)
    >>> with OpCounterMode() as counter:
    ...     (x * x).sum().backward()
    >>> print(counter.table())
    function                     calls
    ---------------------------  -----
    tensormodes.Tensor.mul           3
    tensormodes.Tensor.sum           1
    tensormodes.Tensor.backward      1
    tensormodes.Tensor.expand        1
    """

    def __init__(self, *, nested: bool = False) -> None:
        self.nested = nested
        self.counts: Counter[str] = Counter()
        self._inside = ThreadDepth()  # depth of composite calls whose inner calls are not counted

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Count the call and run it."""
        plan = _PLANS.get(func) or _plan(func)
        if not self._inside.value:
            self.counts[plan[0]] += 1
        if not plan[1]:
            return func(*args, **(kwargs or {}))
        if not self._inside.value and (self.nested or func is _BACKWARD):
            return run_composite(self, func, args, kwargs or {}, True)
        self._inside.value += 1
        try:
            return run_composite(self, func, args, kwargs or {}, False)
        finally:
            self._inside.value -= 1

    def rows(self) -> list[list]:
        """``[name, calls]`` rows, most called first (ties in order of first call)."""
        return [[name, count] for name, count in self.counts.most_common()]

    def table(self) -> str:
        """The counts as a plain-text table, most called first."""
        return render_table(["function", "calls"], self.rows())

    def rich_table(self):
        """The counts as a ``rich.table.Table`` (needs ``rich``)."""
        return rich_table(["function", "calls"], self.rows(), title="calls per function")

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"OpCounterMode({sum(self.counts.values())} calls)"


_BACKWARD = Tensor.backward
