"""Tensor subclasses built on the dispatch level, at PyTorch's path ``torch._subclasses``:
``fake_tensor`` (``FakeTensorMode``, ``FakeTensor`` and their exceptions).

>>> import tensormodes as tm
>>> from tensormodes._subclasses import FakeTensorMode
>>> with FakeTensorMode():
...     print(tm.ones(2, 3) @ tm.ones(3, 4))
FakeTensor(..., size=(2, 4))
"""

from . import fake_tensor
from .fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)

__all__ = ["fake_tensor", "FakeTensor", "FakeTensorMode", "DataDependentOutputException",
           "DynamicOutputShapeException", "UnsupportedFakeTensorException"]
