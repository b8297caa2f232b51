"""PyTorch-style printing of tensors: ``tensor([1.0000, 2.5000], dtype=...)``.

The text matches PyTorch's ``repr`` character for character (with
``tensormodes.`` in dtype names), including its choice between integer-like
(``1.``), fixed (``1.5000``) and scientific (``1.0000e+08``) notation, column
alignment, line wrapping and summarization of large tensors with ``...``.

>>> import tensormodes as tm
>>> tm.tensor([[1., -2.5], [3., 4.]])
tensor([[ 1.0000, -2.5000],
        [ 3.0000,  4.0000]])
>>> tm.tensor([1e-5, 1.0, 1e8], dtype=tm.float64)
tensor([1.0000e-05, 1.0000e+00, 1.0000e+08], dtype=tensormodes.float64)

Print options are process-global, as in PyTorch; see :func:`set_printoptions`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions", "printoptions", "PRINT_OPTS"]


@dataclasses.dataclass
class _PrinterOptions:
    """The current print options (one process-global instance: ``PRINT_OPTS``)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """Set the options for printing tensors (PyTorch's ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floating output (default 4).
        threshold: number of elements above which a tensor is summarized with
            ``...`` (default 1000).
        edgeitems: items kept at the start and end of each summarized dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``'default'``, ``'short'`` (precision 2, edgeitems 2) or
            ``'full'`` (never summarize), applied before the other arguments.
            Any other value is ignored, like in PyTorch.
        sci_mode: ``True`` or ``False`` to force or forbid scientific notation;
            ``None`` lets the formatter choose.  Unlike the other options this one
            is *always* set, so any call without ``sci_mode`` resets it to ``None``.

    >>> import tensormodes as tm
    >>> from tensormodes._api.tensor_str import set_printoptions
    >>> set_printoptions(precision=2)
    >>> tm.tensor([1.12345])
    tensor([1.12])
    >>> set_printoptions(threshold=5)
    >>> tm.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    tensor([0, 1, 2,  ..., 7, 8, 9])
    >>> set_printoptions(sci_mode=True)  # keeps precision=2 and threshold=5
    >>> tm.tensor([1.5, 2.0])
    tensor([1.50e+00, 2.00e+00])
    >>> set_printoptions(profile="default")
    >>> tm.tensor([1.12345])
    tensor([1.1235])
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`.

    >>> from tensormodes._api.tensor_str import get_printoptions
    >>> get_printoptions()
    {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager: set print options (as :func:`set_printoptions`), restore them on exit.

    >>> import tensormodes as tm
    >>> from tensormodes._api.tensor_str import printoptions
    >>> with printoptions(precision=1):
    ...     print(tm.tensor([1.25, 2.0]))
    tensor([1.2, 2.0])
    >>> tm.tensor([1.25, 2.0])
    tensor([1.2500, 2.0000])
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# -- element formatting ---------------------------------------------------------------

class _Formatter:
    """Chooses the notation and the column width shared by every element of a tensor.

    ``values`` holds the elements that will be shown (after summarization).  For
    floating tensors only the finite non-zero elements decide: they are printed
    integer-like (``3.``) when all are integral, and in scientific notation when
    their magnitudes span more than a factor 1000, exceed 1e8 or go below 1e-4.
    """

    __slots__ = ("floating", "int_mode", "sci_mode", "max_width", "_spec")

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self._spec = ""
        if not floating:
            if values.size:
                if values.dtype.kind == "b":
                    self.max_width = 4 if values.all() else 5
                else:
                    self.max_width = max(1, len(str(values.min())), len(str(values.max())))
            return
        v = values.reshape(-1)
        mask = np.isfinite(v)
        mask &= v != 0
        nz = v[mask]
        if not nz.size:
            return  # only zeros, nan and inf: integer-like, width 1, print options ignored
        nz = nz.astype(np.float64, copy=False)
        if not (nz == np.ceil(nz)).all():
            self.int_mode = False
        precision = PRINT_OPTS.precision
        if PRINT_OPTS.sci_mode is None:
            absval = np.abs(nz)
            lo, hi = float(absval.min()), float(absval.max())
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            # The exponent can have three digits at either end of the magnitude
            # range, so the widest element is an extreme of its sign.
            neg = nz[nz < 0]
            pos = nz[nz > 0]
            candidates = ([neg.min(), neg.max()] if neg.size else []) + ([pos.min(), pos.max()] if pos.size else [])
            spec = f".{precision}e"
            extra = 0
        elif self.int_mode:
            candidates = [nz.min(), nz.max()]
            spec = ".0f"
            extra = 1  # the trailing "."
        else:
            candidates = [nz.min(), nz.max()]
            spec = f".{precision}f"
            extra = 0
        self.max_width = max(1, *(len(format(float(c), spec)) + extra for c in candidates))
        if self.sci_mode:
            self._spec = f"{self.max_width}.{precision}e"
        else:
            self._spec = f".{precision}f"

    def format(self, value) -> str:
        """One element (a Python scalar), right-aligned to the shared width."""
        if self.floating:
            if self.sci_mode:
                ret = format(value, self._spec)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = format(value, self._spec)
        else:
            ret = str(value)
        return ret.rjust(self.max_width)


def _element_formatter(f1: _Formatter, f2: _Formatter | None):
    """A function formatting one Python scalar (complex when ``f2`` formats imaginary parts)."""
    if f2 is None:
        return f1.format

    def fmt_complex(value):
        real_str = f1.format(value.real)
        imag_str = (f2.format(value.imag) + "j").lstrip()
        if imag_str[0] in "+-":
            return real_str + imag_str
        return real_str + "+" + imag_str

    return fmt_complex


# -- layout ---------------------------------------------------------------------------------

def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarized printout shows (PyTorch's ``get_summarized_data``)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        # Note a[-0:] is the whole vector, like PyTorch's slicing.
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * edge:
            head = (slice(None),) * axis
            a = np.concatenate((a[(*head, slice(None, edge))], a[(*head, slice(n - edge, None))]), axis=axis)
    return a


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt, element_length: int) -> str:
    edge = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = [*map(fmt, a[:edge].tolist()), " ...", *map(fmt, a[-edge:].tolist())]
    else:
        data = list(map(fmt, a.tolist()))
    if len(data) <= per_line:
        return "[" + ", ".join(data) + "]"
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(a: np.ndarray, indent: int, summarize: bool, fmt, element_length: int) -> str:
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt, element_length)
    edge = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * edge:
        rows = [*range(edge), None, *range(n - edge, n)]
    else:
        rows = range(n)
    slices = ["..." if i is None else _nd_str(a[i], indent + 1, summarize, fmt, element_length) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


_WIDENED = {dt.float16._np, dt.bfloat16._np}


def _tensor_str(data: np.ndarray, indent: int) -> str:
    """The bracketed contents of a non-empty tensor, laid out for a prefix of ``indent`` characters."""
    summarize = data.size > PRINT_OPTS.threshold
    if data.dtype in _WIDENED:
        data = data.astype(np.float32)  # exact; Python floats format them the same way
    kind = data.dtype.kind
    if kind == "c":
        real, imag = data.real, data.imag
        f1 = _Formatter(_summarized(real) if summarize else real, True)
        f2 = _Formatter(_summarized(imag) if summarize else imag, True)
        element_length = f1.max_width + f2.max_width + 3
    else:
        f1 = _Formatter(_summarized(data) if summarize else data, kind == "f")
        f2 = None
        element_length = f1.max_width + 2
    fmt = _element_formatter(f1, f2)
    if data.ndim == 0:
        return fmt(data.tolist())
    return _nd_str(data, indent, summarize, fmt, element_length)


# Suffixes wrap exactly where PyTorch's would: a dtype name counts as long as its
# ``torch.`` spelling, so the layout is PyTorch's with only the module name changed.
_NAME_SURPLUS = len("tensormodes.") - len("torch.")


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items, moving one to a new line when it would pass the line width."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1  # PyTorch's arithmetic, kept for identical wrapping
    for suffix in suffixes:
        suffix_len = len(suffix) - _NAME_SURPLUS * suffix.count("tensormodes.")
        if last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
        else:
            parts.append(", " + suffix)
            last_line_len += suffix_len + 2
    parts.append(")")
    return "".join(parts)


# Classes printed as "tensor(...)" rather than under their own name: Tensor and
# nn.Parameter register themselves (this module sits below both).
PLAIN_REPR_CLASSES: set[type] = set()
# Subclasses of these print wrapped, as PyTorch prints Parameter subclasses: "Parameter(Sub(...))".
PARAMETER_CLASSES: set[type] = set()


def _grad_fn_name(grad_fn) -> str:
    name = getattr(grad_fn, "name", None)
    if callable(name):
        return str(name()).rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def tensor_repr(t, tensor_contents: str | None = None) -> str:
    """PyTorch's ``repr`` of tensor ``t``; ``tensor_contents`` replaces the bracketed data.

    The dtype is shown unless it is the default float dtype, its complex
    counterpart, int64 or bool; empty tensors always show a non-default dtype
    and, unless 1-D, their size.  Subclasses print their class name instead of
    ``tensor`` (``nn.Parameter`` itself prints as ``tensor``; a subclass of it as
    ``Parameter(MyParam(...))``).  ``grad_fn=<Name>`` uses the node's ``name()``
    method when it has one, else its class name.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2], dtype=tm.int32)
    tensor([1, 2], dtype=tensormodes.int32)
    >>> tm.tensor([[True, False]])
    tensor([[ True, False]])
    >>> tm.tensor([1 + 2j, -0.5j])
    tensor([1.+2.0000j, -0.-0.5000j])
    >>> tm.zeros(0, 3, dtype=tm.int64)
    tensor([], size=(0, 3), dtype=tensormodes.int64)
    >>> tm.tensor(3.5, requires_grad=True)
    tensor(3.5000, requires_grad=True)
    """
    data = t._data
    cls = type(t)
    plain = cls in PLAIN_REPR_CLASSES
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    d = dt.NP_TO_DTYPE[data.dtype]
    default = dt.get_default_dtype()
    suffixes = []
    if type(data) is MetaArray:  # no values: PyTorch prints the metadata
        suffixes.append(f"device='meta', size={tuple(data.shape)}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = "..."
    elif data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = "[]" if tensor_contents is None else tensor_contents
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if d is not default and d is not dt.int64 and d is not dt.bool and d is not dt.default_complex_dtype():
            suffixes.append(f"dtype={d!r}")
        body = _tensor_str(data, indent) if tensor_contents is None else tensor_contents
    grad_fn = t._grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    text = _add_suffixes(prefix + body, suffixes, indent) if suffixes else prefix + body + ")"
    if not plain:
        for base in PARAMETER_CLASSES:
            if isinstance(t, base):
                text = f"Parameter({text})"
    return text
