"""Helpers shared by the linear algebra families (``products``, ``linalg``): half-precision
products in float32, batch shapes, and PyTorch's dtype and shape errors.

PyTorch does not promote in matrix products: operands must share a dtype, and
each product checks shapes and dtypes with its own message, which the kernels
reproduce. Integer products work (wrapping on overflow), bool ones do not
(except where no multiplication happens). Half-precision products accumulate
in float32, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from ._common import conjugate as _conj

_HALF_TYPES = (dt.float16._np, dt.bfloat16._np)


def _dtype(a: np.ndarray) -> dt.dtype:
    return dt.NP_TO_DTYPE[a.dtype]


# -- gradients -----------------------------------------------------------------------------------
# Formulas run on Tensors with public methods, so that they are differentiable
# themselves and modes see them. For complex operands they multiply by the other
# operands' conjugates (adjoints), as PyTorch's do. Broadcast gradients are summed
# back to each input's shape by the autograd engine.

def _adjoint(x):
    """The conjugate transpose of (a batch of) matrices: the transpose if real."""
    return _conj(x.mT)
