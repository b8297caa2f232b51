"""Tensor subclasses built on the dispatch level, at PyTorch's path ``torch._subclasses``:
``fake_tensor`` (``FakeTensorMode``, ``FakeTensor`` and their exceptions) and ``coverage``
(``missing_ops``: the ops a dispatch mode or subclass declines for a whole program, found
without data).

>>> import tensormodes as tm
>>> from tensormodes._subclasses import FakeTensorMode
>>> with FakeTensorMode():
...     print(tm.ones(2, 3) @ tm.ones(3, 4))
FakeTensor(..., size=(2, 4))
"""

from . import coverage, fake_tensor
from .coverage import missing_ops
from .fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)

__all__ = ["coverage", "fake_tensor", "missing_ops", "FakeTensor", "FakeTensorMode", "DataDependentOutputException",
           "DynamicOutputShapeException", "UnsupportedFakeTensorException"]
