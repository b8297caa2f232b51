"""Linear algebra functions, as in ``torch.linalg``: determinants (``det``, ``slogdet``),
``inv``, ``solve`` and ``cross``, and the decompositions ``svd`` (whose gradient also serves
``norm(p='nuc')``), ``cholesky``, ``qr`` and ``eigh``, with ``svdvals`` and ``eigvalsh``.
Failures on the input (a singular matrix to invert) raise ``LinAlgError``.

>>> import tensormodes as tm
>>> U, S, Vh = tm.linalg.svd(tm.tensor([[0., 2.], [1., 0.]]))
>>> S.tolist()
[2.0, 1.0]
"""

from __future__ import annotations

from ._api import build as _build
from ._ops.linalg import LinAlgError

__all__ = ["svd", "svdvals", "det", "slogdet", "inv", "solve", "cholesky", "qr", "eigh", "eigvalsh", "cross",
           "LinAlgError"]

svd = _build.namespace_function(__name__, "svd")
svdvals = _build.namespace_function(__name__, "svdvals")
det = _build.namespace_function(__name__, "det")
slogdet = _build.namespace_function(__name__, "slogdet")
inv = _build.namespace_function(__name__, "inv")
solve = _build.namespace_function(__name__, "solve")
cholesky = _build.namespace_function(__name__, "cholesky")
qr = _build.namespace_function(__name__, "qr")
eigh = _build.namespace_function(__name__, "eigh")
eigvalsh = _build.namespace_function(__name__, "eigvalsh")
cross = _build.namespace_function(__name__, "cross")
