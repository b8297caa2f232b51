"""Layer 5: the op table and its NumPy kernels and meta rules, one op family per file.

Importing this package imports every family, which fills ``OPS``. Kernels work on
``ndarray`` (or ``MetaArray``) and Python scalars only; this package may import only the
bottom (``_tensor_base``, ``_meta_array``, ``_dtype``, ``_device``, ``_generated``). Its shared
modules have documented names (``registry``, ``common``, ``meta_rules``, ``shape``); the
leading-underscore ones (``_pointwise``, ``_reduction``, ``_samples``) are for its families only.
"""

from . import (  # noqa: F401
    activation,
    adaptive_pooling,
    arithmetic,
    attention_ops,
    backward_ops,
    backward_ops_bags,
    backward_ops_index,
    backward_ops_nn,
    backward_ops_pooling,
    backward_ops_resampling,
    binary_math,
    comparison,
    complex_numbers,
    convolution,
    convolution_3d,
    creation,
    ctc,
    dispatch_forms,
    eigen,
    einsum,
    fft,
    fft_transforms,
    float_parts,
    grids,
    index_arithmetic,
    indexing,
    indexing_selection,
    joining,
    least_squares,
    linalg,
    logical,
    losses,
    margin_losses,
    matrix_functions,
    memory_factories,
    nn,
    norm_kernels,
    normalization,
    norms,
    numpy_names,
    pointwise_activation,
    pooling,
    pooling_3d,
    products,
    products_batched,
    products_structured,
    properties,
    random,
    random_activation,
    random_inplace,
    random_rejection,
    ranges,
    recurrent,
    reduction,
    reordering,
    resampling,
    sampling_grids,
    scans,
    scatter_gather,
    scatter_reduce,
    shuffling,
    sorting,
    special,
    special_names,
    statistics,
    unary_math,
    view_copies,
    view_scatters,
    views,
    views_complex,
    windows,
)
from .registry import OPS, OpDef

__all__ = ["OPS", "OpDef", "RANDOM_MODULES"]

# The families whose kernels draw random numbers, by module name: fx passes never merge, fold or
# drop their calls, and the tests compare their results by dtype and shape only.
RANDOM_MODULES = frozenset({random.__name__, random_inplace.__name__, random_activation.__name__,
                            random_rejection.__name__})
