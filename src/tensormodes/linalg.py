"""Linear algebra functions, as in ``torch.linalg``: determinants (``det``, ``slogdet``),
``inv``, ``solve``, ``lstsq``, ``pinv`` and ``cross``, and the decompositions ``svd`` (whose gradient
also serves ``norm(p='nuc')``), ``cholesky``, ``qr``, ``eigh`` and ``eig``, with ``svdvals``,
``eigvalsh`` and ``eigvals``; ``matrix_exp``, ``matrix_power``, ``multi_dot``, ``matrix_rank``,
``cond`` and ``householder_product``; the norms ``vector_norm``, ``matrix_norm`` and ``norm``;
``solve_triangular``, the LU family (``lu_factor``, ``lu_factor_ex``, ``lu``, ``lu_solve``), the LDL
family (``ldl_factor``, ``ldl_factor_ex``, ``ldl_solve``), ``solve_ex``, ``inv_ex``, ``cholesky_ex``,
and the composites ``vecdot``, ``matmul``, ``diagonal``, ``vander``, ``tensorinv``, ``tensorsolve``.
Failures on the input (a singular matrix to invert) raise ``LinAlgError``.

The functions are the ops declared with ``namespace="tensormodes.linalg"`` (in ``_ops/linalg.py``,
``_ops/linalg_lu.py``, ``_ops/linalg_ldl.py``, ``_ops/linalg_cholesky.py``, ``_ops/least_squares.py``,
``_ops/matrix_functions.py`` and ``_ops/products_structured.py``), which this module binds under
their public names, and the composites of ``_linalg.py``.

>>> import tensormodes as tm
>>> U, S, Vh = tm.linalg.svd(tm.tensor([[0., 2.], [1., 0.]]))
>>> S.tolist()
[2.0, 1.0]
"""

from ._api import build as _build
from ._linalg import COMPOSITES as _COMPOSITES
from ._ops import OPS as _OPS
from ._ops.linalg import LinAlgError

_FUNCTIONS = [opdef.function for opdef in _OPS.values() if opdef.namespace == __name__ and opdef.function]
globals().update({name: _build.namespace_function(__name__, name) for name in _FUNCTIONS})
globals().update(_COMPOSITES)

__all__ = [*_FUNCTIONS, *_COMPOSITES, "LinAlgError"]
