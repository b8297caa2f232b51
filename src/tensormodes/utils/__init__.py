"""Utilities: ``data`` (datasets, samplers, ``DataLoader``).

>>> import tensormodes as tm
>>> tm.utils.data.DataLoader.__name__
'DataLoader'
"""

from . import data

__all__ = ["data"]
