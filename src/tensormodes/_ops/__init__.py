"""Layer 4: the op table and its NumPy kernels, one op family per file.

Importing this package imports every family, which fills ``OPS``. Kernels work
on ``ndarray`` and Python scalars only and never import anything above this
package.
"""

from . import (  # noqa: F401
    activation,
    arithmetic,
    comparison,
    complex_numbers,
    convolution,
    creation,
    einsum,
    indexing,
    indexing_selection,
    joining,
    linalg,
    losses,
    nn,
    normalization,
    norms,
    pointwise_activation,
    pooling,
    products,
    products_structured,
    properties,
    random,
    ranges,
    reduction,
    reordering,
    resampling,
    scans,
    scatter_gather,
    sorting,
    special,
    statistics,
    unary_math,
    views,
)
from ._registry import OPS, OpDef

__all__ = ["OPS", "OpDef"]

# After the families: it names ops they declare.
from . import special_names  # noqa: E402, F401
