"""``Parameter``: a tensor that a module registers as trainable (defined in ``_api/parameter.py``,
where the generated fast path can see it)."""

from __future__ import annotations

from .._api.parameter import Parameter

__all__ = ["Parameter"]
