"""Layer 4: the op table and its NumPy kernels, one op family per file.

Importing this package imports every family, which fills ``OPS``. Kernels work
on ``ndarray`` and Python scalars only and never import anything above this
package.
"""

from . import (  # noqa: F401
    activation,
    convolution,
    creation,
    indexing,
    linalg,
    nn,
    norms,
    pointwise,
    random,
    reduction,
    shape,
)
from ._registry import OPS, OpDef

__all__ = ["OPS", "OpDef"]
