"""The eigendecomposition of general square matrices, in ``tensormodes.linalg``: ``eig`` and
``eigvals``, complex whatever the input (eigenvalues in LAPACK's order, as PyTorch's).

Each eigenvector has norm 1 and is defined only up to a unit phase, which LAPACK builds choose
differently; fixing it makes results reproducible: each vector is turned so that its largest
entry is real and positive. (``eigh`` for Hermitian matrices is in ``linalg.py``.)
"""

from __future__ import annotations

import numpy as np

from .._meta_array import MetaArray
from .common import HALF_TYPES, adjoint, dtype_of, not_implemented, ops, scalar_type_name
from .meta_rules import rule
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128),
            np.dtype(np.complex64): np.dtype(np.complex64), np.dtype(np.complex128): np.dtype(np.complex128)}


def _check_eig(name: str, A) -> np.dtype:
    """PyTorch's checks; the complex dtype of the results."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.dtype in HALF_TYPES:
        raise not_implemented("linalg_eig_out_cpu", dtype_of(A))
    if A.dtype not in _COMPLEX:
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(dtype_of(A))}")
    return _COMPLEX[A.dtype]


def _eig_arrays(A: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    complex_type = _check_eig(name, A)
    if A.size == 0:
        return np.zeros(A.shape[:-1], complex_type), np.zeros(A.shape, complex_type)
    if not np.isfinite(A).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    values, vectors = np.linalg.eig(A)
    vectors = vectors.astype(complex_type)
    largest = np.take_along_axis(vectors, np.abs(vectors).argmax(axis=-2)[..., None, :], axis=-2)
    size = np.abs(largest)
    phases = np.where(size > 0, largest / np.where(size > 0, size, 1), 1)
    return values.astype(complex_type), vectors * phases.conj()


def _eig_meta(A):
    complex_type = _check_eig("linalg.eig", A)
    return RETURN_TYPES["linalg_eig"](MetaArray(A.shape[:-1], complex_type), MetaArray(A.shape, complex_type))


_PHASE_DEPENDENT = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
                    "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")


def _eig_backward(grad_values, grad_vectors, values, vectors):
    """PyTorch's linalg_eig_backward: the gradient of A for the eigenvalues' and eigenvectors' gradients."""
    vectors_h = adjoint(vectors)
    if grad_vectors is None:
        return ops.linalg.solve(vectors_h, grad_values.unsqueeze(-1) * vectors_h)
    projected = vectors_h @ grad_vectors
    diagonal = projected.diagonal(0, -2, -1)
    if not ops.allclose(diagonal.imag, ops.zeros_like(diagonal.imag), rtol=1e-2, atol=1e-2):
        raise RuntimeError(_PHASE_DEPENDENT)
    projected = projected - vectors_h @ (vectors * diagonal.real.unsqueeze(-2))
    conjugates = values.conj()
    gaps = conjugates.unsqueeze(-2) - conjugates.unsqueeze(-1)
    gaps = gaps + ops.eye(gaps.shape[-1], dtype=gaps.dtype, device=gaps.device)  # 1 on the diagonal
    inner = projected / gaps
    n = inner.shape[-1]
    off_diagonal = 1 - ops.eye(n, dtype=inner.dtype, device=inner.device)
    inner = inner * off_diagonal + grad_values.diag_embed()
    return ops.linalg.solve(vectors_h, inner @ vectors_h)


def _eig_grad(grad, result):
    grad_values, grad_vectors = grad
    values, vectors = result
    uses_vectors = grad_vectors.is_meta or bool(grad_vectors.any())
    return _eig_backward(grad_values, grad_vectors if uses_vectors else None, values, vectors)


@op(meta=rule(_eig_meta), returns=("eigenvalues", "eigenvectors"), grad=_eig_grad, name="linalg_eig", function="eig",
    namespace="tensormodes.linalg",
    errors=(Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2), "int64"),)),
            Sample((TensorSpec((2, 2), "float16"),))),
    samples=(Sample((TensorSpec((3, 3), "float64"),)), Sample((TensorSpec((2, 3, 3)),)),
             Sample((TensorSpec((3, 3), "complex128"),)), Sample((TensorSpec((0, 0)),))),
    schema={"A": "Tensor self"})
def linalg_eig(A: Tensor) -> Tensor:
    """The eigenvalues and eigenvectors of a square matrix (or of each in a batch), complex, as the
    named tuple ``(eigenvalues, eigenvectors)`` with ``A @ V = V @ diag(L)``; each eigenvector
    has norm 1 and its largest entry real and positive.

    >>> import tensormodes as tm
    >>> L, V = tm.linalg.eig(tm.tensor([[2.0, 0.0], [0.0, 3.0]]))
    >>> L
    tensor([2.+0.j, 3.+0.j])
    """
    return RETURN_TYPES["linalg_eig"](*_eig_arrays(A, "linalg.eig"))


def _eigvals_meta(A):
    complex_type = _check_eig("linalg.eigvals", A)
    return MetaArray(A.shape[:-1], complex_type)


def _eigvals_grad(grad, A):
    # PyTorch keeps the eigenvectors of the forward; this recomputes them, through the public eig
    # so that the gradient is itself differentiable.
    values, vectors = ops.linalg.eig(A)
    return _eig_backward(grad, None, values, vectors)


def _eigvals_decomposition(A):
    """PyTorch's composite ``linalg.eigvals`` at the dispatch level: ``linalg_eig``'s eigenvalues
    (the same LAPACK call, so the same values)."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2] or A.dtype not in (ops.float32, ops.float64, ops.complex64,
                                                                    ops.complex128):
        return NotImplemented  # the op raises its errors, which name linalg.eigvals
    return ops.ops.aten.linalg_eig.default(A)[0]


@op(meta=rule(_eigvals_meta), grad=_eigvals_grad, node="linalg_eig", name="linalg_eigvals", function="eigvals",
    namespace="tensormodes.linalg", decompose=_eigvals_decomposition, schema={"A": "Tensor self"},
    errors=(Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((2, 2), "int64"),))),
    samples=(Sample((TensorSpec((3, 3), "float64"),)), Sample((TensorSpec((2, 2, 2)),)),
             Sample((TensorSpec((2, 2), "complex64"),))))
def linalg_eigvals(A: Tensor) -> Tensor:
    """The eigenvalues of a square matrix (or of each in a batch), complex, in LAPACK's order.

    >>> import tensormodes as tm
    >>> tm.linalg.eigvals(tm.tensor([[0.0, -1.0], [1.0, 0.0]]))
    tensor([0.+1.j, 0.-1.j])
    """
    return _eig_arrays(A, "linalg.eigvals")[0]
