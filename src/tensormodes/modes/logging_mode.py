"""``LoggingMode``: one line per public call, nested calls indented under the call that made them.

>>> import tensormodes as tm, tensormodes.nn.functional as F
>>> from tensormodes.modes import LoggingMode
>>> with LoggingMode() as log:
...     y = F.softmax(tm.ones(2, 3), dim=-1)
>>> print("\\n".join(log.lines))
tensormodes.ones(2, 3) -> f32[2, 3]
tensormodes.nn.functional.softmax(f32[2, 3], dim=-1) -> f32[2, 3]
  tensormodes.Tensor.softmax(f32[2, 3], -1) -> f32[2, 3]
"""

from __future__ import annotations

import logging
import os
from typing import Any

from .._overrides.composite import Observer, calls_public_api, run_composite
from ..overrides import TorchFunctionMode
from .module_calls import ModuleCalls, NestsModuleCalls
from .observing import summarize, summarize_call, user_location

__all__ = ["LoggingMode"]


class LoggingMode(Observer, NestsModuleCalls, TorchFunctionMode):
    """Logs every public call made in its scope: the function's public name, its arguments
    summarized (``f32[2, 3]``: dtype and shape, never values; ``{grad}`` when the tensor
    requires grad; scalars as values) and its result.

    Calls made by a function's own body (``F.softmax`` calling ``Tensor.softmax``, the
    gradient formulas run by ``Tensor.backward``) are logged indented under it, and so are the
    calls a module makes: a module call is a line of its own, named by the module's path as
    ``FlopCounterMode`` names it (``MLP``, ``MLP.fc1``), with its positional arguments and its
    result, and what its ``forward`` calls is indented under it (through nn.Module's global
    hooks, registered while the mode is entered).

    ``target``: ``None`` (collect in ``.lines``), a list to append to, a ``logging.Logger``
    (one record per line at ``level``), a file path (written, and closed on exit) or an open
    text file. ``dedupe=True`` groups identical calls made from the same user source line
    and writes them on exit, once each, with a count (``x12``).

    >>> import tensormodes as tm
    >>> from tensormodes.modes import LoggingMode
    >>> lines = []
    >>> with LoggingMode(lines, dedupe=True):
    ...     for _ in range(3):
    ...         _ = tm.ones(2, requires_grad=True) * 2
    >>> print("\\n".join(lines))
    tensormodes.ones(2, requires_grad=True) -> f32[2]{grad}  x3
    tensormodes.Tensor.mul(f32[2]{grad}, 2) -> f32[2]{grad}  x3
    """

    def __init__(self, target: Any = None, *, dedupe: bool = False, indent: str = "  ",
                 level: int = logging.INFO) -> None:
        self.target = target
        self.dedupe = dedupe
        self.indent = indent
        self.level = level
        self.lines: list[str] | None = [] if target is None else target if isinstance(target, list) else None
        self._file = None
        self._entries = 0
        self._depth = 0
        self._pending: list[str] = []
        self._groups: dict[tuple, int] = {}
        self._modules = ModuleCalls(self._enter_module, self._leave_module)
        self._open_modules: list[tuple[int, int]] = []  # (slot, depth) of each module call under way

    def _first_enter(self) -> None:
        if isinstance(self.target, (str, os.PathLike)):
            self._file = open(self.target, "w", encoding="utf-8")  # noqa: SIM115 - closed by _last_exit

    def _last_exit(self) -> None:
        self._open_modules = []
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None

    def flush(self) -> None:
        """Write the grouped calls collected so far (``dedupe=True``) and forget them."""
        groups, self._groups = self._groups, {}
        for (_, lines), count in groups.items():
            self._write([f"{lines[0]}  x{count}" if count > 1 else lines[0], *lines[1:]])

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Log the call, run it (re-entering this mode for a body that makes public calls)."""
        kwargs = kwargs or {}
        depth = self._depth
        slot = len(self._pending)
        self._pending.append("")
        call = summarize_call(func, args, kwargs)
        self._depth = depth + 1
        try:
            if calls_public_api(func):
                result = run_composite(self, func, args, kwargs, True)
            else:
                result = func(*args, **kwargs)
        except BaseException as error:
            self._pending[slot] = f"{self.indent * depth}{call} -> raised {type(error).__name__}"
            raise
        else:
            self._pending[slot] = f"{self.indent * depth}{call} -> {summarize(result)}"
        finally:
            self._closed(depth)
        return result

    def _closed(self, depth: int) -> None:
        """A call or module call at ``depth`` ended: back to its depth; at the top, its lines
        (with those nested in it) are written, or grouped with ``dedupe``."""
        self._depth = depth
        if depth == 0:
            lines, self._pending = self._pending, []
            if self.dedupe:
                key = (user_location(4), tuple(lines))
                self._groups[key] = self._groups.get(key, 0) + 1
            else:
                self._write(lines)

    def _enter_module(self, module, name: str, args: tuple) -> None:
        """A module call starts: its line is reserved here, so the calls it makes go under it."""
        self._open_modules.append((len(self._pending), self._depth))
        self._pending.append("")
        self._depth += 1

    def _leave_module(self, module, name: str, args: tuple, output, error) -> None:
        """A module call ended (``error``: the exception it raised, if any): its line is written."""
        if not self._open_modules:
            return  # the mode was left while the module ran
        slot, depth = self._open_modules.pop()
        call = f"{name}({', '.join(summarize(a) for a in args)})"
        outcome = f"raised {type(error).__name__}" if error is not None else summarize(output)
        self._pending[slot] = f"{self.indent * depth}{call} -> {outcome}"
        self._closed(depth)

    def _write(self, lines: list[str]) -> None:
        target = self.target if self._file is None else self._file
        if self.lines is not None:
            self.lines.extend(lines)
        elif isinstance(target, logging.Logger):
            for line in lines:
                target.log(self.level, line)
        elif target is not None and hasattr(target, "write"):
            target.write("\n".join(lines) + "\n")
        else:
            raise TypeError(f"LoggingMode: cannot write to {type(target).__name__}; expected None, a list, a "
                            f"logging.Logger, a file path or a text file")

    def __repr__(self) -> str:
        return f"LoggingMode({'dedupe=True' if self.dedupe else ''})"
