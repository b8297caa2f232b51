"""Utilities, as ``torch.utils``: ``data`` (datasets, samplers, ``DataLoader``) and ``dlpack``
(exchange with NumPy and other libraries).

>>> import tensormodes as tm
>>> tm.utils.data.DataLoader.__name__, tm.utils.dlpack.from_dlpack is tm.from_dlpack
('DataLoader', True)
"""

from . import data, dlpack

__all__ = ["data", "dlpack"]
