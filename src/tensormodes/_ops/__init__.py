"""Layer 5: the op table and its NumPy kernels, one op family per file.

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
    random_inplace,
    ranges,
    reduction,
    reordering,
    resampling,
    scans,
    scatter_gather,
    sorting,
    special,
    special_names,
    statistics,
    unary_math,
    views,
)
from .registry import OPS, OpDef

__all__ = ["OPS", "OpDef", "RANDOM_MODULES"]

# The families whose kernels draw random numbers, by module name: fx passes never merge, fold or
# drop their calls, and the tests compare their results by dtype and shape only.
RANDOM_MODULES = frozenset({random.__name__, random_inplace.__name__})
