"""Linear algebra functions, as in ``torch.linalg``: determinants (``det``, ``slogdet``),
``inv``, ``solve`` and ``cross``, and the decompositions ``svd`` (whose gradient also serves
``norm(p='nuc')``), ``cholesky``, ``qr`` and ``eigh``, with ``svdvals`` and ``eigvalsh``; the norms ``vector_norm``,
``matrix_norm`` and ``norm``.
Failures on the input (a singular matrix to invert) raise ``LinAlgError``.

>>> import tensormodes as tm
>>> U, S, Vh = tm.linalg.svd(tm.tensor([[0., 2.], [1., 0.]]))
>>> S.tolist()
[2.0, 1.0]
"""

from __future__ import annotations

from . import _functions
from ._ops.linalg import LinAlgError

__all__ = ["svd", "svdvals", "det", "slogdet", "inv", "solve", "cholesky", "qr", "eigh", "eigvalsh", "cross",
           "vector_norm", "matrix_norm", "norm", "LinAlgError"]

svd = _functions.namespace_function(__name__, "svd")
svdvals = _functions.namespace_function(__name__, "svdvals")
det = _functions.namespace_function(__name__, "det")
slogdet = _functions.namespace_function(__name__, "slogdet")
inv = _functions.namespace_function(__name__, "inv")
solve = _functions.namespace_function(__name__, "solve")
cholesky = _functions.namespace_function(__name__, "cholesky")
qr = _functions.namespace_function(__name__, "qr")
eigh = _functions.namespace_function(__name__, "eigh")
eigvalsh = _functions.namespace_function(__name__, "eigvalsh")
cross = _functions.namespace_function(__name__, "cross")
vector_norm = _functions.namespace_function(__name__, "vector_norm")
matrix_norm = _functions.namespace_function(__name__, "matrix_norm")
norm = _functions.namespace_function(__name__, "norm")
