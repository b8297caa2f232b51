"""The building blocks of observing modes (modes that watch calls and never change them):
public names of callables, the user's source line, short argument summaries and the table
renderer. The ready-made modes (``tensormodes.modes``), the meta tools (``tensormodes.meta``),
``FlopCounterMode`` and the ``tensormodes trace`` command share them. How such a mode sees a
composite call and then the calls its body makes is the override layer's API:
``tensormodes._overrides.composite`` (``run_composite``, ``Observer``).

>>> import tensormodes as tm
>>> from tensormodes.modes.observing import render_table, summarize
>>> summarize(tm.ones(2, 3))
'f32[2, 3]'
>>> print(render_table(["op", "calls"], [["tensormodes.add", 3], ["tensormodes.mul", 12]]))
op               calls
---------------  -----
tensormodes.add      3
tensormodes.mul     12
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._api.tensor import Tensor
from .._overrides.composite import implementation
from .._overrides.dispatch import resolve_public_name

__all__ = ["render_table", "rich_table", "summarize", "user_frame", "public_name", "ThreadDepth"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Frames of the package: its files, and the functions it generates (see _generated.py).
_INTERNAL = (_PACKAGE_DIR, "<tensormodes generated")


class ThreadDepth(threading.local):
    """A depth counter of its own in every thread: how deep this thread is inside calls a mode
    treats specially (a counted composite, a backward node). One mode serves every thread a
    traced script starts; a depth kept on the mode itself would let one thread's composite hide
    another thread's calls.

    >>> depth = ThreadDepth(); depth.value += 1; depth.value
    1
    """

    value = 0


def public_name(func) -> str:
    """``'tensormodes.add'`` for ``tm.add``; the qualified name for other callables."""
    name = _NAMES.get(func)
    if name is None:
        name = _NAMES[func] = resolve_public_name(func)
    return name


_NAMES: dict = {}


def user_frame(skip: int = 1):
    """The innermost frame outside the tensormodes package (the user's line), or None."""
    frame = sys._getframe(skip)
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
    return frame


def user_location(skip: int = 2) -> tuple[str, int]:
    """(file name, line number) of the user's line that led to the current call."""
    frame = user_frame(skip)
    if frame is None:
        return "<unknown>", 0
    return frame.f_code.co_filename, frame.f_lineno


# -- argument summaries ----------------------------------------------------------------------

_SHORT_DTYPES = {
    _dtype.bool: "b8", _dtype.uint8: "u8", _dtype.int8: "i8", _dtype.int16: "i16", _dtype.int32: "i32",
    _dtype.int64: "i64", _dtype.float16: "f16", _dtype.bfloat16: "bf16", _dtype.float32: "f32",
    _dtype.float64: "f64", _dtype.complex64: "c64", _dtype.complex128: "c128",
}
_SHORT_BY_NUMPY = {d._np: short for d, short in _SHORT_DTYPES.items()}
# (NumPy dtype, shape) -> "f32[2, 3]": a logging mode describes the same few shapes again and again.
_TENSOR_TEXT: dict = {}


class _DeviceReader:
    """Reads a tensor's device through the ``device`` getter's implementation, not the
    property (a handler's property read would reach the modes below it). The getter is
    looked up on first use: it is bound once ``Tensor``'s properties are built."""

    __slots__ = ("read", "cpu")

    def __init__(self) -> None:
        self.read = None
        self.cpu = None  # the cpu device object, once seen

    def off_cpu(self, t: Tensor) -> str | None:
        """The tensor's device type when it is not the cpu."""
        read = self.read
        if read is None:
            read = self.read = implementation(Tensor.device.__get__)
        device = read(t)
        if device is self.cpu:
            return None
        if device.type == "cpu":
            self.cpu = device
            return None
        return device.type


_DEVICES = _DeviceReader()


def summarize(value: Any) -> str:
    """A short description of an argument or result: ``f32[2, 3]`` for a tensor (``{grad}``
    when it requires grad, ``{meta}`` off the cpu), values for scalars; never tensor data.
    Reads private attributes: a handler's property reads would reach the modes below it."""
    if isinstance(value, Tensor):
        data = value._data
        key = (data.dtype, data.shape)
        text = _TENSOR_TEXT.get(key)
        if text is None:
            if len(_TENSOR_TEXT) > 4096:  # bounded: a program may see many shapes
                _TENSOR_TEXT.clear()
            dims = ", ".join(map(str, data.shape))
            text = _TENSOR_TEXT[key] = f"{_SHORT_BY_NUMPY.get(data.dtype) or data.dtype}[{dims}]"
        device = _DEVICES.off_cpu(value)
        if device is not None or value._requires_grad:
            text += "{" + ",".join(([device] if device else []) + (["grad"] if value._requires_grad else [])) + "}"
        return text if type(value) is Tensor else f"{type(value).__name__}:{text}"
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return repr(value)
    if isinstance(value, _dtype.dtype):
        return str(value).removeprefix("tensormodes.")
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return f"{type(value).__name__}({', '.join(f'{k}={summarize(v)}' for k, v in zip(value._fields, value))})"
    if isinstance(value, list):
        return f"[{', '.join(summarize(v) for v in value)}]"
    if isinstance(value, tuple):
        return f"({', '.join(summarize(v) for v in value)}{',' if len(value) == 1 else ''})"
    if isinstance(value, slice):
        parts = ["" if p is None else summarize(p) for p in (value.start, value.stop, value.step)]
        return ":".join(parts[:2] if value.step is None else parts)
    if value is Ellipsis:
        return "..."
    if isinstance(value, np.generic):
        return repr(value.item())
    return type(value).__name__


def summarize_call(func, args: tuple, kwargs: dict | None) -> str:
    """``tensormodes.add(f32[2], 1)``: the function's public name and its arguments summarized;
    keyword arguments that hold their default (handlers of Python-level functions receive
    every optional argument) are left out."""
    parts = [summarize(a) for a in args]
    if kwargs:
        defaults = _DEFAULTS.get(func)
        if defaults is None:
            defaults = _defaults(func)
        for k, v in kwargs.items():
            default = defaults.get(k, _NO_DEFAULT)
            if v is not default and not (type(v) is type(default) and v == default):
                parts.append(f"{k}={summarize(v)}")
    return f"{public_name(func)}({', '.join(parts)})"


_NO_DEFAULT = object()
_DEFAULTS: dict = {}


def _defaults(func) -> dict:
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # no signature to read
        parameters = ()
    defaults = _DEFAULTS[func] = {p.name: p.default for p in parameters if p.default is not p.empty}
    return defaults


# -- tables ----------------------------------------------------------------------------------

def _cell(value: Any) -> str:
    return value if isinstance(value, str) else f"{value}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """Plain aligned text: a header, a rule of dashes, and the rows. ``align`` has one letter per
    column, ``l`` or ``r`` (default: the first column left, numbers right).

    >>> from tensormodes.modes.observing import render_table
    >>> print(render_table(["name", "n"], [["a", 1], ["bc", 10]]))
    name   n
    ----  --
    a      1
    bc    10
    """
    cells = [[_cell(c) for c in row] for row in rows]
    if align is None:
        align = "l" + "".join("r" if all(not isinstance(row[i], str) or row[i][:1].isdigit() for row in rows)
                              else "l" for i in range(1, len(headers)))
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values) -> str:
        padded = [v.ljust(w) if a == "l" else v.rjust(w) for v, w, a in zip(values, widths, align)]
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(row) for row in cells])


def rich_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None):
    """The same table as a ``rich.table.Table`` (requires the optional ``rich`` package)."""
    try:
        # Optional dependency, loaded only when asked for (importing rich costs tens of ms).
        table_module = importlib.import_module("rich.table")
    except ImportError as error:
        raise ImportError("rich_table() needs the optional 'rich' package: pip install rich") from error
    table = table_module.Table(title=title)
    for header in headers:
        table.add_column(header)
    for row in rows:
        table.add_row(*(_cell(c) for c in row))
    return table


def format_ns(ns: float) -> str:
    """A duration in ns as text with a unit: ``'1.50 ms'``."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


class ModuleNames:
    """Paths of modules as PyTorch's module tracker names them: a module first seen outside any
    named one is its class's name (``GPT``); when a module is first seen, its whole subtree is
    named under it (``GPT.blocks.0.attn``), also through containers never called themselves
    (``ModuleList``). Modules are held weakly.

    >>> import tensormodes as tm
    >>> model = tm.nn.Sequential(tm.nn.Linear(2, 2))
    >>> names = ModuleNames()
    >>> names(model), names(model[0])
    ('Sequential', 'Sequential.0')
    """

    def __init__(self) -> None:
        self._names: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._named_below: weakref.WeakSet = weakref.WeakSet()

    def __call__(self, module: Any) -> str:
        """The path of ``module`` (naming its subtree on first sight)."""
        names = self._names
        if module not in names:
            names[module] = type(module).__name__
        if module not in self._named_below:
            # depth first, children in order, as PyTorch's recursion; a module seen before keeps
            # its subtree's names
            self._named_below.add(module)
            pending = [iter(module.named_children())]
            parents = [names[module]]
            while pending:
                child_name, child = next(pending[-1], (None, None))
                if child_name is None:
                    pending.pop()
                    parents.pop()
                    continue
                names[child] = f"{parents[-1]}.{child_name}"
                if child not in self._named_below:
                    self._named_below.add(child)
                    pending.append(iter(child.named_children()))
                    parents.append(names[child])
        return names[module]
