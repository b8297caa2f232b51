"""``tensormodes.backends.mps``: there is no MPS here.

>>> import tensormodes as tm
>>> tm.backends.mps.is_available(), tm.backends.mps.is_built()
(False, False)
"""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: no MPS device here."""
    return False


def is_built() -> bool:
    """False: this library is not built with MPS."""
    return False
