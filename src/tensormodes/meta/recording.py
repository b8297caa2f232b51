"""``RecordingMode``: collects every public call's metadata while the real computation runs.

>>> import tensormodes as tm
>>> from tensormodes.meta import RecordingMode
>>> with RecordingMode() as rec:
...     y = tm.ones(2, 3) @ tm.ones(3, 4)
>>> [r.fn for r in rec.records]
['tensormodes.ones', 'tensormodes.ones', 'tensormodes.Tensor.matmul']
>>> rec.records[-1].result["tensor"]["shape"]
[2, 4]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from .._overrides.composite import Observer, calls_public_api, run_composite
from ..modes.observing import public_name
from ..overrides import TorchFunctionMode, resolve_name
from ._records import Record, RecordFormatError, context_now, dumps, encode, exception_name

__all__ = ["RecordingMode"]


class RecordingMode(Observer, TorchFunctionMode):
    """Records every public call made in its scope as a :class:`Record`: the function's
    public dotted name, its arguments' metadata (taken before the call: an in-place op's
    record shows its input as it was), and its result's metadata or the exception's type and
    message. Tensors are described by shape, dtype, strides, storage offset, device,
    ``requires_grad`` and whether they are leaves, never by values; Python scalars, lists,
    tuples, dtypes, devices, slices, None and Ellipsis are kept as they are.

    The computation itself runs unchanged, and the mode's own bookkeeping makes no public
    call a mode below could see. Calls made by a call's body (``F.linear`` calling
    ``tm.matmul``, the gradient formulas ``Tensor.backward`` runs) are recorded after it with
    ``depth`` one more.

    ``rec.records`` is the list of records; ``rec.save(path)`` writes them as JSON lines and
    ``RecordingMode.load(path)`` reads them back (see ``docs/meta-records.md``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> from tensormodes.meta import RecordingMode
    >>> with RecordingMode() as rec:
    ...     _ = F.softmax(tm.ones(2, 3), dim=-1)
    >>> [(r.depth, r.fn) for r in rec.records]
    [(0, 'tensormodes.ones'), (0, 'tensormodes.nn.functional.softmax'), (1, 'tensormodes.Tensor.softmax')]
    """

    def __init__(self) -> None:
        self.records: list[Record] = []
        self._depth = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Record the call's arguments, run it (re-entering this mode for a body that makes
        public calls), then record its result or its error."""
        kwargs = kwargs or {}
        depth = self._depth
        record = Record(resolve_name(func) or public_name(func), [encode(a) for a in args],
                        {k: encode(v) for k, v in kwargs.items()}, depth=depth, context=context_now())
        self.records.append(record)  # before the call: a call's record precedes its body's
        self._depth = depth + 1
        try:
            if calls_public_api(func):
                result = run_composite(self, func, args, kwargs, True)
            else:
                result = func(*args, **kwargs)
        except Exception as error:
            record.error = (exception_name(error), str(error))
            raise
        finally:
            self._depth = depth
        record.result = encode(result)
        return result

    def save(self, path: str | os.PathLike) -> None:
        """Write the records to ``path``, one JSON object a line."""
        with open(path, "w", encoding="utf-8") as file:
            for record in self.records:
                file.write(dumps(record))
                file.write("\n")

    @staticmethod
    def load(path: str | os.PathLike) -> list[Record]:
        """The records of a file ``save`` wrote. Only JSON is parsed: names are resolved later,
        by a lookup of public tensormodes callables, and nothing in the file is executed.

        >>> import os, tempfile, tensormodes as tm
        >>> from tensormodes.meta import RecordingMode
        >>> with RecordingMode() as rec:
        ...     _ = tm.zeros(3).add(1)
        >>> path = os.path.join(tempfile.mkdtemp(), "calls.jsonl")
        >>> rec.save(path)
        >>> RecordingMode.load(path) == rec.records
        True
        """
        with open(path, encoding="utf-8") as file:
            return list(_parse(file, os.fspath(path)))

    def __repr__(self) -> str:
        return f"RecordingMode({len(self.records)} records)"


def _parse(lines: Iterable[str], where: str):
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield Record.from_json(json.loads(line))
        except (json.JSONDecodeError, RecordFormatError) as error:
            raise RecordFormatError(f"{where}:{number}: {error}") from None
