"""Layer 4: the op table and its NumPy kernels, one op family per file.

Importing this package imports every family, which fills ``OPS``. Kernels work
on ``ndarray`` and Python scalars only and never import anything above this
package.
"""

from . import activation, convolution, creation, indexing, linalg, nn, pointwise, pooling, random, reduction, shape  # noqa: F401,E501
from ._registry import OPS, OpDef

__all__ = ["OPS", "OpDef"]
