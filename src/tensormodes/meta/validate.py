"""``validate``: replay recorded calls on meta tensors and compare with what really happened.

>>> import tensormodes as tm
>>> from tensormodes.meta import RecordingMode, validate
>>> x = tm.ones(3, 2)
>>> with RecordingMode() as rec:
...     _ = x.clone().contiguous()
>>> report = validate(rec.records)
>>> report.ok, report.counts["tensormodes.Tensor.contiguous"]["match"]
(True, 1)
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable
from dataclasses import dataclass

from .. import _dtype
from .._autograd.grad_mode import no_grad
from .._meta_array import DataDependentOutputError
from ..modes.observing import render_table
from ._records import _DTYPES, Record, RecordFormatError, Unreplayable, decode, describe, encode, exception_name, lookup

__all__ = ["validate", "ValidationReport", "Mismatch", "OUTCOMES", "compare", "needs_values", "judge", "replay",
           "repro", "replayable"]

# What a replayed record can come to, in the order the report's columns show them.
OUTCOMES = ("match", "mismatch", "data-dependent", "no rule", "skipped")

# Results that depend on state a record does not describe (gradients, the graph, storage):
# their records are not replayed.
_STATEFUL = frozenset({"tensormodes.autograd.grad", "tensormodes.autograd.backward"}) | frozenset(
    f"tensormodes.Tensor.{name}" for name in (
        "backward", "grad.__get__", "grad_fn.__get__", "_base.__get__", "retains_grad.__get__", "_version.__get__",
        "data_ptr", "untyped_storage"))
# Calls whose results show values (printing): on meta they show metadata instead.
_PRINTING = frozenset({"tensormodes.Tensor.__repr__", "tensormodes.Tensor.__str__", "tensormodes.Tensor.__format__"})
# What meta tensors say when asked for values they do not have (see _ops/_meta.MetaArray).
_NO_VALUES = ("cannot be called on meta tensors", "Cannot copy out of meta tensor", "can't convert meta device")
_NO_RULE = "no meta rule yet"


def needs_values(error: BaseException) -> bool:
    """True if meta execution raised ``error`` because the call needs values: an op whose
    output shape depends on them (``DataDependentOutputError``) or a read of data."""
    return isinstance(error, DataDependentOutputError) or any(text in str(error) for text in _NO_VALUES)


@dataclass(frozen=True)
class Mismatch:
    """A record whose meta replay disagreed with the real call.

    ``index``: the record's position; ``op``: its function's public name; ``what``: which
    property differed (``'shape'``, ``'dtype'``, ``'stride'``, ``'error'`` ...); ``real`` and
    ``meta``: the two sides, as text; ``repro``: a Python line that replays the call on meta
    tensors (``import tensormodes as tm, tensormodes.meta`` first)."""

    index: int
    op: str
    what: str
    real: str
    meta: str
    repro: str

    def __str__(self) -> str:
        return self.text()

    def text(self, repeats: int = 1) -> str:
        """Two lines: what differed (with how many records repeat it), then the repro line."""
        times = f"  (x{repeats})" if repeats > 1 else ""
        return f"{self.op}: {self.what} differs: real {self.real}, meta {self.meta}{times}\n    {self.repro}"


class ValidationReport:
    """What ``validate`` found: ``ok`` (no mismatch), ``mismatches`` (a list of
    :class:`Mismatch`), ``counts`` (public name -> outcome -> number of records, outcomes as
    in ``OUTCOMES``), ``skipped`` (reason -> number of records); ``str()`` is a table with one
    row per function, then the mismatches."""

    def __init__(self) -> None:
        self.mismatches: list[Mismatch] = []
        self.counts: dict[str, dict[str, int]] = {}
        self.skipped: dict[str, int] = {}

    @property
    def ok(self) -> bool:
        """True when no replay disagreed with its record."""
        return not self.mismatches

    @property
    def records(self) -> int:
        """How many records were read."""
        return sum(sum(row.values()) for row in self.counts.values())

    def total(self, outcome: str) -> int:
        """How many records came to ``outcome`` (one of ``OUTCOMES``)."""
        return sum(row.get(outcome, 0) for row in self.counts.values())

    def _count(self, op: str, outcome: str) -> None:
        row = self.counts.get(op)
        if row is None:
            row = self.counts[op] = dict.fromkeys(OUTCOMES, 0)
        row[outcome] += 1

    def __str__(self) -> str:
        rows = [[op, *(row[o] for o in OUTCOMES)] for op, row in sorted(self.counts.items())]
        rows.append(["total", *(self.total(o) for o in OUTCOMES)])
        lines = [render_table(["function", *OUTCOMES], rows)]
        if self.skipped:
            lines.append("skipped: " + "; ".join(f"{reason} ({n})" for reason, n in sorted(self.skipped.items())))
        if self.mismatches:
            lines.append(f"{len(self.mismatches)} mismatches (repro lines: import tensormodes as tm, "
                         "tensormodes.meta):")
            repeats: dict[str, list] = {}
            for mismatch in self.mismatches:
                repeats.setdefault(mismatch.repro, [mismatch, 0])[1] += 1
            lines.extend(m.text(n) for m, n in repeats.values())
        else:
            lines.append("no mismatches")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"ValidationReport(records={self.records}, match={self.total('match')}, "
                f"mismatches={len(self.mismatches)})")


# -- comparing outcomes -------------------------------------------------------------------

def _significant_strides(item: dict) -> list:
    # Strides of size-1 dims are arbitrary (PyTorch's own meta kernels differ there).
    return [s for size, s in zip(item["shape"], item["stride"]) if size != 1]


def _numel(shape) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def compare(real, meta) -> tuple[str, str, str] | None:
    """``(what, real, meta)`` for the first difference between two encoded results, else None.
    Tensors compare by shape, dtype and strides (those of dims larger than 1, for tensors of
    more than one element); other values by equality."""
    if isinstance(real, dict) and "tensor" in real:
        if not (isinstance(meta, dict) and "tensor" in meta):
            return "type", describe(real), describe(meta)
        r, m = real["tensor"], meta["tensor"]
        if r["shape"] != m["shape"]:
            return "shape", str(tuple(r["shape"])), str(tuple(m["shape"]))
        if r["dtype"] != m["dtype"]:
            return "dtype", r["dtype"], m["dtype"]
        if _numel(r["shape"]) > 1 and _significant_strides(r) != _significant_strides(m):
            return "stride", str(tuple(r["stride"])), str(tuple(m["stride"]))
        return None
    if isinstance(real, dict) and len(real) == 1 and isinstance(meta, dict) and meta.keys() == real.keys():
        (kind, items), = real.items()
        if kind in ("tuple", "size"):
            return _compare_sequences(items, meta[kind], real, meta)
    if isinstance(real, list) and isinstance(meta, list):
        return _compare_sequences(real, meta, real, meta)
    if real != meta:
        return "value", describe(real), describe(meta)
    return None


def _compare_sequences(real_items, meta_items, real, meta):
    if len(real_items) != len(meta_items):
        return "length", describe(real), describe(meta)
    for i, (r, m) in enumerate(zip(real_items, meta_items)):
        found = compare(r, m)
        if found is not None:
            return f"{found[0]} of output {i}", found[1], found[2]
    return None


# -- repro lines --------------------------------------------------------------------------

def _source(value) -> str:
    if isinstance(value, list):
        return f"[{', '.join(_source(v) for v in value)}]"
    if not isinstance(value, dict):
        return repr(value)
    (kind, item), = value.items()
    if kind == "tensor":
        shape, stride = tuple(item["shape"]), tuple(item["stride"])
        grad = ", requires_grad=True" if item.get("requires_grad") else ""
        if list(stride) == _contiguous(shape) and not item.get("offset"):
            text = f"tm.empty({shape}, dtype=tm.{item['dtype']}, device='meta'{grad})"
        elif not item.get("offset") and min(stride, default=0) >= 0:
            text = f"tm.empty_strided({shape}, {stride}, dtype=tm.{item['dtype']}, device='meta'{grad})"
        else:
            offset = f", storage_offset={item['offset']}" if item.get("offset") else ""
            text = f"tm.meta.meta_tensor({shape}, {stride}, dtype=tm.{item['dtype']}{offset}{grad})"
        return text if item.get("is_leaf", True) or not grad else f"{text}.clone()"
    if kind == "tuple":
        inner = ", ".join(_source(v) for v in item)
        return f"({inner},)" if len(item) == 1 else f"({inner})"
    if kind == "size":
        return f"tm.Size({item!r})"
    if kind == "dtype":
        return f"tm.{item}"
    if kind == "device":
        return f"tm.device({item!r})"
    if kind == "slice":
        return f"slice({', '.join(_source(v) for v in item)})"
    if kind == "ellipsis":
        return "..."
    if kind == "float":
        return f"float({item!r})"
    if kind == "complex":
        return f"complex({_source(item[0])}, {_source(item[1])})"
    return f"<{item}>"


def _contiguous(shape) -> list:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return strides[::-1]


def repro(record: Record, kwargs: dict | None = None) -> str:
    """A Python line that makes ``record``'s call on meta tensors."""
    kwargs = record.kwargs if kwargs is None else kwargs
    arguments = [_source(a) for a in record.args] + [f"{k}={_source(v)}" for k, v in kwargs.items()]
    call = f"{record.fn.replace('tensormodes.', 'tm.', 1)}({', '.join(arguments)})"
    context = record.context or {}
    if "default_dtype" in context:
        call = f"tm.set_default_dtype(tm.{context['default_dtype']}); {call}"
    return f"with tm.no_grad(): {call}" if context.get("grad_enabled") is False else call


_KEY = json.JSONEncoder(separators=(",", ":"), default=repr).encode

# -- replaying ----------------------------------------------------------------------------

_TAKES_DEVICE: dict = {}


def _takes_device(function) -> bool:
    known = _TAKES_DEVICE.get(function)
    if known is None:
        try:
            known = "device" in inspect.signature(function).parameters
        except (TypeError, ValueError):
            known = False
        _TAKES_DEVICE[function] = known
    return known


def _has_tensor(values) -> bool:
    for value in values:
        if isinstance(value, dict):
            if "tensor" in value:
                return True
            if ("tuple" in value and _has_tensor(value["tuple"])):
                return True
        elif isinstance(value, list) and _has_tensor(value):
            return True
    return False


def _run(function, args, kwargs, context):
    if context is None:
        return function(*args, **kwargs)
    default = context.get("default_dtype")
    previous = _dtype.get_default_dtype()
    if default is not None:
        _dtype.set_default_dtype(_DTYPES[default])
    try:
        if context.get("grad_enabled") is False:
            with no_grad():
                return function(*args, **kwargs)
        return function(*args, **kwargs)
    finally:
        if default is not None:
            _dtype.set_default_dtype(previous)


def replayable(name: str, function) -> str | None:
    """None if calls of ``function`` (public name ``name``) can be replayed on meta tensors,
    else the reason they cannot."""
    if function is None:
        return "not a public tensormodes callable"
    if name in _STATEFUL:
        return "depends on autograd or storage state"
    return None


def takes_device(function) -> bool:
    """True if ``function`` has a ``device`` parameter (a factory, made on meta with ``device="meta"``)."""
    return _takes_device(function)


def replay(record: Record):
    """Replay ``record`` on meta tensors: ``(outcome, detail)``, the outcome one of
    ``OUTCOMES`` and the detail a :class:`Mismatch` (without index) or a reason to skip."""
    function = lookup(record.fn)
    reason = replayable(record.fn, function)
    if reason is not None:
        return "skipped", reason
    kwargs = record.kwargs
    if not _has_tensor(record.args) and not _has_tensor(kwargs.values()):
        if not _takes_device(function):
            return "skipped", "no tensor argument"
        kwargs = {**kwargs, "device": "meta"}  # a factory: made on the meta device
    try:
        args = [decode(a) for a in record.args]
        meta_kwargs = {k: decode(v) for k, v in kwargs.items()}
    except Unreplayable as reason:
        return "skipped", str(reason)
    try:
        result = _run(function, args, meta_kwargs, record.context)
    except Exception as error:  # noqa: BLE001 - the outcome under test
        outcome, detail = judge(record.fn, record.error, record.result, error, None)
    else:
        outcome, detail = judge(record.fn, record.error, record.result, None, result)
    return outcome, detail if detail is None else (*detail, kwargs)


def judge(fn: str, real_error: tuple[str, str] | None, real_result, meta_error: BaseException | None, meta_result):
    """Compare a real call's outcome (``real_error`` as ``(type name, message)``, else the
    encoded ``real_result``) with a meta call's (``meta_error``, else ``meta_result``):
    ``(outcome, None)`` or ``("mismatch", (what, real, meta))``."""
    if meta_error is not None:
        if isinstance(meta_error, NotImplementedError) and _NO_RULE in str(meta_error):
            return "no rule", None
        if needs_values(meta_error):
            return "data-dependent", None
        observed = (exception_name(meta_error), str(meta_error))
        if real_error is None:
            return "mismatch", ("error", "no error", f"{observed[0]}: {observed[1]}")
        if observed != real_error:
            return "mismatch", ("error", f"{real_error[0]}: {real_error[1]}", f"{observed[0]}: {observed[1]}")
        return "match", None
    if real_error is not None:
        return "mismatch", ("error", f"{real_error[0]}: {real_error[1]}", "no error")
    if fn in _PRINTING:
        return "data-dependent", None
    found = compare(real_result, encode(meta_result))
    return ("match", None) if found is None else ("mismatch", found)


def validate(records: Iterable[Record]) -> ValidationReport:
    """Replay each record on meta inputs built from its metadata and compare the result's
    shapes, dtypes and strides, or the exception's type and message, with the recorded ones.

    A factory call (no tensor argument, a ``device`` parameter) is replayed with
    ``device="meta"``. Outcomes: ``match``; ``mismatch`` (listed in ``report.mismatches``
    with a repro line); ``data-dependent`` (the meta call raised ``DataDependentOutputError``
    or needed values: ``item``, printing ...); ``no rule`` (an op without a meta rule);
    ``skipped`` (not replayable: an argument that was not recorded, no tensor argument, a
    result that depends on autograd state; ``report.skipped`` has the reasons).

    >>> import tensormodes as tm
    >>> from tensormodes.meta import Record, validate
    >>> wrong = Record("tensormodes.Tensor.clone", [tm.meta.encode(tm.ones(2, 3))], {},
    ...                result=tm.meta.encode(tm.ones(3, 2)))
    >>> print(validate([wrong]).mismatches[0].what)
    shape
    """
    report = ValidationReport()
    # A loop records the same calls again and again: each distinct record is replayed once.
    seen: dict[str, tuple] = {}
    for index, record in enumerate(records):
        if not isinstance(record, Record):
            raise TypeError(f"validate() expects Record objects, got {type(record).__name__} at position {index}")
        key = _KEY((record.fn, record.args, record.kwargs, record.result, record.error, record.context))
        known = seen.get(key)
        if known is None:
            try:
                known = seen[key] = replay(record)
            except RecordFormatError as error:
                raise RecordFormatError(f"record {index} ({record.fn}): {error}") from None
        outcome, detail = known
        report._count(record.fn, outcome)
        if outcome == "mismatch":
            what, real, meta, kwargs = detail
            report.mismatches.append(Mismatch(index, record.fn, what, real, meta, repro(record, kwargs)))
        elif outcome == "skipped":
            report.skipped[detail] = report.skipped.get(detail, 0) + 1
    return report
