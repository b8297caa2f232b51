"""Utilities, as ``torch.utils``: ``dlpack`` (exchange with NumPy and other libraries).

>>> import tensormodes as tm
>>> tm.utils.dlpack.from_dlpack is tm.from_dlpack
True
"""

from . import dlpack  # noqa: F401 - public submodule
