"""Tools for meta tensors: record real calls, check meta rules against them.

* :class:`RecordingMode` records every public call's metadata while the real computation runs;
* :func:`validate` replays records on meta tensors and reports where a meta rule disagrees;
* :class:`CrossRefMode` runs each call for real and on meta copies, and stops at the first
  disagreement (:class:`MetaMismatchError`);
* ``python -m tensormodes.meta validate calls.jsonl`` validates a record file.

>>> import tensormodes as tm
>>> from tensormodes.meta import RecordingMode, validate
>>> with RecordingMode() as rec:
...     y = tm.ones(4, 3).clone().detach()
>>> validate(rec.records).ok
True
"""

from .._meta_array import DataDependentOutputError
from ._records import Record, RecordFormatError, encode, meta_tensor
from .cross_ref import CrossRefMode, MetaMismatchError
from .recording import RecordingMode
from .validate import OUTCOMES, Mismatch, ValidationReport, validate

__all__ = ["RecordingMode", "Record", "RecordFormatError", "DataDependentOutputError", "validate",
           "ValidationReport", "Mismatch", "OUTCOMES", "encode", "meta_tensor",
           "CrossRefMode", "MetaMismatchError"]
