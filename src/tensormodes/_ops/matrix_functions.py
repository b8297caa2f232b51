"""Functions of square matrices: the matrix exponential (``linalg.matrix_exp``, with the top-level
``matrix_exp`` and ``Tensor.matrix_exp``); ``linalg.matrix_power`` is beside ``matrix_power`` in
``products_structured.py``.

The exponential is computed by scaling and squaring with a degree-13 Padé approximant (Higham,
2005) in double precision, rounded once to the input's dtype; half types compute in float32.
"""

from __future__ import annotations

import math

import numpy as np

from .._meta_array import MetaArray
from .common import HALF_TYPES, adjoint, dtype_of, ops, quiet, scalar_type_name
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

# Padé coefficients b_0 ... b_13 and the 1-norm up to which degree 13 needs no scaling.
_PADE_13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
            10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
            1.0)
_THETA_13 = 5.371920351148152


def _check_matrix_exp(A) -> None:
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.dtype.kind not in "fc" and A.dtype not in HALF_TYPES:
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(dtype_of(A))}")


def _exp_of_one(a: np.ndarray) -> np.ndarray:
    """``exp`` of one square matrix (double or complex double)."""
    norm = np.abs(a).sum(axis=0).max() if a.size else 0.0
    if not math.isfinite(norm):
        return np.full(a.shape, np.nan, a.dtype)
    squarings = max(0, math.ceil(math.log2(norm / _THETA_13))) if norm > _THETA_13 else 0
    a = a / 2.0 ** squarings
    b = _PADE_13
    identity = np.eye(a.shape[0], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a2 @ a4
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
    result = np.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        result = result @ result
    return result


def _matrix_exp(A: np.ndarray) -> np.ndarray:
    _check_matrix_exp(A)
    if A.size == 0:
        return A.copy()
    wide = np.complex128 if A.dtype.kind == "c" else np.float64
    matrices = A.astype(wide).reshape(-1, *A.shape[-2:])
    with quiet():  # overflow to inf, as PyTorch's does
        result = np.stack([_exp_of_one(a) for a in matrices]).reshape(A.shape)
        return result.astype(A.dtype)


def _matrix_exp_grad(grad, A):
    # PyTorch's: the upper right block of exp([[A^H, G], [0, A^H]]) is the gradient.
    n = A.shape[-1]
    transposed = adjoint(A)
    top = ops.cat([transposed, grad], -1)
    bottom = ops.cat([ops.zeros_like(transposed), transposed], -1)
    return ops.linalg.matrix_exp(ops.cat([top, bottom], -2))[..., :n, n:]


def _matrix_exp_meta(A):
    _check_matrix_exp(A)
    return MetaArray(A.shape, A.dtype)


_EXP_SAMPLES = (Sample((TensorSpec((3, 3), "float32", -1, 1),)), Sample((TensorSpec((2, 2, 2), "float64", -3, 3),)),
                Sample((TensorSpec((2, 2), "complex64", -1, 1),)), Sample((TensorSpec((1, 1), "float64", 5, 8),)),
                Sample((TensorSpec((0, 0)),)))
_EXP_ERRORS = (Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((2, 2), "int64"),)))


@op(grad=_matrix_exp_grad, meta=rule(_matrix_exp_meta), name="linalg_matrix_exp", function="matrix_exp",
    namespace="tensormodes.linalg", samples=_EXP_SAMPLES, errors=_EXP_ERRORS, schema={"A": "Tensor self"})
def linalg_matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential ``sum_k A^k / k!`` of a square matrix (or of each in a batch).

    >>> import tensormodes as tm
    >>> tm.linalg.matrix_exp(tm.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    return _matrix_exp(A)


def _matrix_exp_decomposition(A):
    """PyTorch's composite ``matrix_exp``: ``linalg_matrix_exp`` (whose errors are the same)."""
    return ops.linalg.matrix_exp(A)


@op(grad=_matrix_exp_grad, meta=rule(_matrix_exp_meta), node="linalg_matrix_exp", method=True,
    decompose=_matrix_exp_decomposition, samples=_EXP_SAMPLES[:2], errors=_EXP_ERRORS, schema={"A": "Tensor self"})
def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of a square matrix (or of each in a batch): ``linalg.matrix_exp``.

    >>> import tensormodes as tm
    >>> tm.tensor([[1.0]]).matrix_exp()
    tensor([[2.7183]])
    """
    return _matrix_exp(A)
