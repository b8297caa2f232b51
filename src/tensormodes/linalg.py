"""Linear algebra functions, as in ``torch.linalg``: for now the singular value
decomposition, whose gradient also serves ``norm(p='nuc')``.

>>> import tensormodes as tm
>>> U, S, Vh = tm.linalg.svd(tm.tensor([[0., 2.], [1., 0.]]))
>>> S.tolist()
[2.0, 1.0]
"""

from __future__ import annotations

from . import _functions
from ._ops.linalg import LinAlgError

__all__ = ["svd", "svdvals", "LinAlgError"]

svd = _functions.namespace_function(__name__, "svd")
svdvals = _functions.namespace_function(__name__, "svdvals")
