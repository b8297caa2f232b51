"""Decompositions and solvers, in ``tensormodes.linalg`` (declared ``namespace="tensormodes.linalg"``):
``svd`` and ``svdvals`` (and the older top-level ``svd``, which returns ``V``), determinants
(``det``, ``slogdet``), ``inv``, ``solve``, ``cholesky``,
``qr``, and ``eigh`` with ``eigvalsh``; with their top-level names (``tm.det``, ``tm.inverse``,
``tm.logdet`` ...). Failures on the input (a singular matrix to invert) raise ``LinAlgError``.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from ._reduction import _checked_meta, _no_checks
from .common import (
    HALF_TYPES,
    adjoint,
    check_same_shape_or_broadcast,
    conj_mT,
    dtype_of,
    not_implemented,
    ops,
    quiet,
    scalar_type_name,
)
from .common import conjugate as _conj
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op

# -- decompositions ---------------------------------------------------------------------------------

class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (``torch.linalg.LinAlgError``): a
    RuntimeError, so code catching PyTorch's errors by that type still works.

    >>> import tensormodes as tm
    >>> issubclass(tm.linalg.LinAlgError, RuntimeError)
    True
    """

    __module__ = "tensormodes.linalg"


def _skew(x):
    return x - adjoint(x)


_PHASE_DEPENDENT = ("svd_backward: The singular vectors in the complex case are specified up to multiplication by "
                    "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.")


def _svd_checks(A: np.ndarray) -> None:
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if A.dtype.kind not in "fc" and A.dtype != dt.bfloat16._np:
        raise RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(dtype_of(A))}")
    if A.dtype in HALF_TYPES and A.size:  # PyTorch's kernel dispatches on the dtype only with data
        raise not_implemented("linalg_svd_cpu", dtype_of(A))


def _check_driver(driver) -> None:
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def _finite_matrices(A: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``A`` with its non-finite matrices zeroed, and a mask of them (None if all are finite).
    As in PyTorch, a NaN raises (naming the first matrix with one, if batched); a matrix
    with an infinity gets NaN factors."""
    has_nan = np.isnan(A).any(axis=(-2, -1))
    if has_nan.any():
        where = "" if A.ndim == 2 else f"(Batch element {int(np.flatnonzero(has_nan)[0])}): "
        raise LinAlgError(f"linalg.svd: {where}The algorithm failed to converge because the input matrix "
                          "contained non-finite values.")
    finite = np.isfinite(A).all(axis=(-2, -1))
    if finite.all():
        return A, None
    return np.where(finite[..., None, None], A, 0), ~finite


def _canonical_phases(u: np.ndarray, vh: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Singular vectors are unique only up to sign (a unit phase if complex), which LAPACK
    builds differ on; fixing it makes results reproducible: each column of ``u`` is turned
    so that its largest entry is real and positive, and the matching row of ``vh`` the other
    way (so that ``u * s @ vh`` is unchanged); rows of ``vh`` past ``k`` are turned alone."""

    def phases(vectors: np.ndarray, axis: int) -> np.ndarray:
        largest = np.take_along_axis(vectors, np.abs(vectors).argmax(axis=axis, keepdims=True), axis=axis)
        size = np.abs(largest)
        return np.where(size > 0, largest / np.where(size > 0, size, 1), 1)

    column_phases = phases(u, -2)  # (..., 1, columns)
    u = u * column_phases.conj()
    row_turns = phases(vh, -1).conj()  # (..., rows, 1)
    row_turns[..., :k, :] = np.swapaxes(column_phases[..., :k], -2, -1)
    return u, vh * row_turns


def _empty_svd(A: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    *batch, m, n = A.shape
    k = min(m, n)
    real = A.real.dtype
    if full_matrices:
        u_shape, vh_shape = (m, m), (n, n)
    else:
        u_shape, vh_shape = (m, k), (k, n)
    u = np.broadcast_to(np.eye(*u_shape, dtype=A.dtype), (*batch, *u_shape)).copy()
    vh = np.broadcast_to(np.eye(*vh_shape, dtype=A.dtype), (*batch, *vh_shape)).copy()
    return u, np.zeros((*batch, k), real), vh


def _svd_grad(grad, result, full_matrices):
    # PyTorch's svd_backward. An output that received no gradient arrives as zeros: its terms
    # are skipped, as PyTorch skips undefined gradients, because they divide by singular
    # values and their differences (0 / 0 for rank-deficient inputs).
    grad_u, grad_s, grad_vh = grad
    u, s, vh = result
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if full_matrices and m != n:
        # The columns past k span a null space, not a function of the input: PyTorch ignores
        # their gradient, and so does this.
        u, vh, grad_u, grad_vh = u[..., :k], vh[..., :k, :], grad_u[..., :k], grad_vh[..., :k, :]
    use_u, use_vh = (True, True) if grad_u.is_meta else (bool(grad_u.any()), bool(grad_vh.any()))
    if not (use_u or use_vh):
        return u @ (grad_s.unsqueeze(-1) * vh)
    squares = s * s
    # gaps[i, j] = s_j^2 - s_i^2, and 1 on the diagonal (whose terms are zero)
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1) + ops.eye(k, dtype=s.dtype, device=s.device)
    inner = 0
    u_grad_u = adjoint(u) @ grad_u if use_u else None
    if use_u:
        inner = _skew(u_grad_u) * s.unsqueeze(-2)
    if use_vh:
        inner = inner + s.unsqueeze(-1) * _skew(vh @ adjoint(grad_vh))
    inner = inner / gaps + grad_s.diag_embed()
    if u.dtype.is_complex:
        # Turning a singular vector pair by a phase leaves the input unchanged, so a loss
        # must not depend on it: as in PyTorch, the two phase derivatives must cancel.
        phase_u = u_grad_u.diagonal(0, -2, -1).imag if use_u else s * 0
        phase_v = (vh @ adjoint(grad_vh)).diagonal(0, -2, -1).imag if use_vh else s * 0
        if not ops.allclose(phase_u, -phase_v, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_PHASE_DEPENDENT)
        inner = inner + (phase_u / s * 1j).diag_embed()
    if m > n and use_u:
        scaled = grad_u / s.unsqueeze(-2)
        return (u @ inner + scaled - u @ (adjoint(u) @ scaled)) @ vh
    if m < n and use_vh:
        scaled = grad_vh / s.unsqueeze(-1)
        return u @ (inner @ vh + scaled - (scaled @ adjoint(vh)) @ vh)
    return u @ inner @ vh


# -- meta rules (see _meta): shapes from the operands' shapes; checks that read the sizes run on
# the MetaArrays (they read only shapes and dtypes), the rest and the dtypes come from a probe
# (sizes clamped to 1: a 1 x 1 matrix of ones, which every routine accepts).

def _svd_shapes(A, full_matrices=True, *, driver=None):
    *batch, m, n = A.shape
    k = min(m, n)
    u, vh = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return (*batch, *u), (*batch, k), (*batch, *vh)


def _svdvals_shape(A, *, driver=None):
    return _svd_shapes(A)[1]


def _square(name: str):
    def checks(A, *args, **kwargs):
        _square_checks(name, A)

    return checks


def _batch_shape(A):
    return A.shape[:-2]


def _slogdet_shapes(A):
    return A.shape[:-2], A.shape[:-2]


def _same_shape(A, *args, **kwargs):
    return A.shape


def _solve_meta_checks(A, B, *, left=True):
    _solve_checks(A, B, left)


def _solve_shape(A, B, *, left=True):
    vector, batch = _solve_checks(A, B, left)
    matrix = B.shape + (1,) if vector else B.shape
    shape = batch + matrix[-2:]
    return shape[:-1] if vector else shape


def _cholesky_checks(A, *, upper=False):
    _check_bool_argument("linalg_cholesky", "upper", upper)
    _square_checks("linalg.cholesky", A)


def _qr_shapes(A, mode="reduced"):
    *batch, m, n = A.shape
    k = m if mode == "complete" else min(m, n)
    return ((0,) if mode == "r" else (*batch, m, k)), (*batch, k, n)


def _eigh_shapes(A, UPLO="L"):
    return A.shape[:-1], A.shape


def _eigvalsh_shape(A, UPLO="L"):
    return A.shape[:-1]


@op(meta=_checked_meta(_no_checks, _svd_shapes),
    errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2), "int64"),))), returns=("U", "S", "Vh"),
    grad=_svd_grad, name="linalg_svd", function="svd", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((3, 2)), False)),
    Sample((TensorSpec((2, 4), "float64"),), {"full_matrices": False}), Sample((TensorSpec((2, 3, 2)), False)),
    Sample((TensorSpec((3, 2), "complex64"),)), Sample((TensorSpec((2, 3), "complex128"), True)),
    Sample((TensorSpec((0, 3)),)), Sample((TensorSpec((2, 0, 2)), False))))
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> Tensor:
    """The singular value decomposition ``A = U @ diag(S) @ Vh`` of a matrix (or of each in a
    batch), as the named tuple ``(U, S, Vh)``: ``S`` real and descending, ``U`` and ``Vh``
    with orthonormal columns and rows. ``full_matrices=False`` keeps only the ``min(m, n)``
    singular vectors that pair with ``S``. Each singular vector's sign (phase, if complex)
    is fixed so that its largest entry is real and positive; ``Vh``'s rows follow ``U``'s.

    >>> import tensormodes as tm
    >>> U, S, Vh = tm.linalg.svd(tm.tensor([[3., 0.], [0., -4.]]))
    >>> S.tolist(), (U @ S.diag_embed() @ Vh).tolist()
    ([4.0, 3.0], [[3.0, 0.0], [0.0, -4.0]])
    """
    _svd_checks(A)
    if not isinstance(full_matrices, (bool, np.bool_)):
        raise TypeError(f"linalg_svd(): argument 'full_matrices' must be bool, not {type(full_matrices).__name__}")
    _check_driver(driver)
    result_type = RETURN_TYPES["linalg_svd"]
    if A.size == 0:
        return result_type(*_empty_svd(A, bool(full_matrices)))
    work, broken = _finite_matrices(A)
    u, s, vh = np.linalg.svd(work, full_matrices=bool(full_matrices))
    u, vh = _canonical_phases(u, vh, s.shape[-1])
    if broken is not None:
        for factor in (u, s, vh):
            factor[broken] = np.nan
    return result_type(u, s, vh)


def _svdvals_grad(grad, A):
    # PyTorch keeps the factors of the forward SVD; this recomputes them, through the public
    # svd so that the gradient is itself differentiable.
    u, _, vh = ops.linalg.svd(A, full_matrices=False)
    return u @ (grad.unsqueeze(-1) * vh)


@op(meta=_checked_meta(_no_checks, _svdvals_shape),
    grad=_svdvals_grad, name="linalg_svdvals", function="svdvals", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 2)),)), Sample((TensorSpec((2, 3, 4), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),)), Sample((TensorSpec((0, 2)),))))
def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of a matrix (or of each in a batch), real and descending: ``S``
    of ``svd``, cheaper, since no singular vectors are computed.

    >>> import tensormodes as tm
    >>> tm.linalg.svdvals(tm.tensor([[3., 0.], [0., -4.]])).tolist()
    [4.0, 3.0]
    """
    _svd_checks(A)
    _check_driver(driver)
    if A.size == 0:
        return _empty_svd(A, False)[1]
    work, broken = _finite_matrices(A)
    s = np.linalg.svd(work, compute_uv=False)
    if broken is not None:
        s[broken] = np.nan
    return s


def _legacy_svd_checks(input, some=True, compute_uv=True) -> None:
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.ndim} dimensions "
                           "instead")
    _svd_checks(input)


def _legacy_svd_shapes(input, some=True, compute_uv=True):
    *batch, m, n = input.shape
    k = min(m, n)
    if not compute_uv or not some:
        return (*batch, m, m), (*batch, k), (*batch, n, n)
    return (*batch, m, k), (*batch, k), (*batch, n, k)


def _legacy_svd_grad(grad, input, result, some, compute_uv):
    grad_u, grad_s, grad_v = grad
    if not compute_uv:  # only S has a gradient
        return _svdvals_grad(grad_s, input)
    u, s, v = result
    return _svd_grad((grad_u, grad_s, adjoint(grad_v)), (u, s, adjoint(v)), not some)


@op(meta=_checked_meta(_legacy_svd_checks, _legacy_svd_shapes),
    errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2), "int64"),))), returns=("U", "S", "V"),
    grad=_legacy_svd_grad, name="svd", node="linalg_svd", method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((3, 3), "float64"), False)),
    Sample((TensorSpec((2, 4), "float64"),), {"some": True}), Sample((TensorSpec((2, 3, 2)),)),
    Sample((TensorSpec((2, 3), "complex128"),)), Sample((TensorSpec((0, 3)),))))
def legacy_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Tensor:
    """The singular value decomposition ``input = U @ diag(S) @ V^H`` (PyTorch's older ``torch.svd``:
    ``V``, not ``Vh``), as the named tuple ``(U, S, V)``; ``some=False`` gives the full square
    ``U`` and ``V``. With ``compute_uv=False`` only ``S`` is computed, and ``U`` and ``V`` are
    zero-filled square matrices. The signs follow ``linalg.svd``'s.

    >>> import tensormodes as tm
    >>> U, S, V = tm.svd(tm.tensor([[3., 0.], [0., -4.]]))
    >>> S.tolist(), (U @ S.diag_embed() @ V.mT).tolist()
    ([4.0, 3.0], [[3.0, 0.0], [0.0, -4.0]])
    """
    _legacy_svd_checks(input)
    result_type = RETURN_TYPES["svd"]  # (the op's name: tensormodes.svd)
    u_shape, s_shape, v_shape = _legacy_svd_shapes(input, some, compute_uv)
    if not compute_uv:
        values = svdvals(input)
        return result_type(np.zeros(u_shape, input.dtype), values, np.zeros(v_shape, input.dtype))
    u, s, vh = svd(input, not some)  # linalg.svd's kernel
    v = np.swapaxes(vh, -1, -2)
    return result_type(u, s, np.ascontiguousarray(v.conj() if v.dtype.kind == "c" else v))


# -- determinants, inverses and linear systems ----------------------------------------------------

def _square_checks(name: str, A: np.ndarray) -> None:
    """PyTorch's checks of a batch of square matrices, in its order (the dtype is checked apart)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _floating_check(name: str, A: np.ndarray) -> None:
    if A.dtype.kind not in "fc" and A.dtype != dt.bfloat16._np:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(dtype_of(A))}")


def _low_precision_check(name: str, A: np.ndarray) -> None:
    if A.dtype in HALF_TYPES:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {scalar_type_name(dtype_of(A))}")


def _batch_prefix(batch_shape: tuple, flat_index: int) -> str:
    return f"(Batch element {flat_index}): " if batch_shape else ""


def _first_zero_pivot(matrix: np.ndarray) -> int:
    """The 1-based position of the first zero on U's diagonal in the LU factorisation with partial
    pivoting (LAPACK's ``getrf`` info; its pivot is the first entry of largest |re| + |im|, a NaN
    never larger, as BLAS's ``i?amax`` scans), or 0."""
    lu = np.array(matrix, dtype=np.complex128 if matrix.dtype.kind == "c" else np.float64)
    n = lu.shape[0]
    with np.errstate(all="ignore"):
        for k in range(n):
            sizes = np.abs(lu[k:, k].real) + np.abs(lu[k:, k].imag)
            pivot = k + (int(np.argmax(sizes)) if not np.isnan(sizes).any() else _first_largest(sizes))
            if lu[pivot, k] == 0:
                return k + 1
            lu[[k, pivot]] = lu[[pivot, k]]
            lu[k + 1:, k] /= lu[k, k]
            lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return 0


def _first_largest(sizes: np.ndarray) -> int:
    best = 0
    for i in range(1, sizes.size):
        if sizes[i] > sizes[best]:
            best = i
    return best


def _singular_position(matrices: np.ndarray, *, exact: bool = False) -> tuple[int, int] | None:
    """``(batch element, 1-based diagonal position)`` of the first matrix of a batch whose LU
    factorisation meets a zero pivot; if rounding hides it, the matrix of smallest |det| (None
    with ``exact``)."""
    flat = matrices.reshape(-1, *matrices.shape[-2:])
    for index, matrix in enumerate(flat):
        position = _first_zero_pivot(matrix)
        if position:
            return index, position
    return None if exact else (int(np.argmin(np.abs(np.linalg.det(flat)))), flat.shape[-1])


def _lapack(function, a: np.ndarray, *rest: np.ndarray):
    """``function`` (NumPy's ``inv`` or ``solve``) of matrices ``a``; None where the matrices are
    singular. With infinities or NaN, LAPACK's pivoting decides that: PyTorch's build and NumPy's
    pick different pivots beside a NaN, so the factorisation is checked as BLAS scans; what
    NumPy's build then refuses is NaN."""
    finite = bool(np.isfinite(a).all())
    if not finite and _singular_position(a, exact=True) is not None:
        return None
    try:
        return function(a, *rest)
    except np.linalg.LinAlgError:
        return None if finite else np.full((rest[0] if rest else a).shape, np.nan, a.dtype)


def _det_grad(grad, A, result):
    if not A.numel():  # no matrices, or 0 by 0 ones: nothing to invert (half types have no inverse)
        return A.new_zeros(tuple(A.shape))
    if result.is_meta or not bool((result == 0).any()):  # meta: both branches give the same shape
        return _invertible_det_grad(grad, A, result)
    # The gradient is the conjugate of the cofactor matrix, adj(A)^H, which the inverse cannot give
    # for a singular matrix: with A = U diag(S) Vh, adj(A)^H = conj(det U det Vh) U diag(P) Vh,
    # P_i the product of the other singular values. (PyTorch gives it with create_graph=True, zeros
    # otherwise.)
    # A matrix with a NaN or an infinity has no SVD (it raises): it takes the inverse's formula,
    # as PyTorch's LU solve does, and the SVD sees the identity in its place.
    finite = A.isfinite().all(-1).all(-1).unsqueeze(-1).unsqueeze(-1)
    all_finite = bool(finite.all())
    if not all_finite:
        eye = ops.eye(A.shape[-1], dtype=A.dtype)
        infinite = _invertible_det_grad(grad, ops.where(finite, eye, A), result)
        A = ops.where(finite, A, eye)
    u, s, vh = ops.linalg.svd(A)
    n = s.shape[-1]
    others = ops.where(ops.eye(n, dtype=dt.bool), 1, s.unsqueeze(-2).expand(*s.shape[:-1], n, n))
    det = ops.linalg.det
    phase = _conj(det(u) * det(vh)).unsqueeze(-1).unsqueeze(-1)
    cofactors = grad.unsqueeze(-1).unsqueeze(-1) * phase * (u * others.prod(-1).unsqueeze(-2).to(u.dtype)) @ vh
    return cofactors if all_finite else ops.where(finite, cofactors, infinite)


def _invertible_det_grad(grad, A, result):
    return (grad * _conj(result)).unsqueeze(-1).unsqueeze(-1) * adjoint(ops.linalg.inv(A))


@op(meta=_checked_meta(_square("linalg.det"), _batch_shape),
    errors=(Sample((TensorSpec((2, 3)),)),),
    grad=_det_grad, name="linalg_det", function="det", namespace="tensormodes.linalg", out=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)), Sample((TensorSpec((1, 1)),)),
    Sample((TensorSpec((3, 3), "complex64"),)), Sample((TensorSpec((2, 2), "complex128"),)),
    Sample((TensorSpec((0, 3, 3)),)), Sample((TensorSpec((0, 0)),))))
def linalg_det(A: Tensor) -> Tensor:
    """The determinant of a square matrix (or of each in a batch); 0 for a singular one.

    The gradient is ``grad * conj(det) * inv(A).mH``; for a singular matrix, where the
    inverse does not exist, it is the conjugate of the cofactor matrix times ``grad`` (nonzero
    for rank ``n - 1``), computed through ``svd``: PyTorch gives that only with
    ``create_graph=True`` and zeros otherwise.

    >>> import tensormodes as tm
    >>> tm.linalg.det(tm.tensor([[2., 3.], [4., 5.]], dtype=tm.float64))
    tensor(-2., dtype=tensormodes.float64)
    """
    _square_checks("linalg.det", A)
    _floating_check("linalg.det", A)
    if A.dtype in HALF_TYPES:
        if A.size:
            raise not_implemented("lu_cpu", dtype_of(A))
        return np.asarray(np.linalg.det(A.astype(np.float32)), dtype=A.dtype)  # no matrices, or 0 by 0 ones
    with quiet():  # a NaN gives NaN without a word, as in PyTorch
        return np.asarray(np.linalg.det(A), dtype=A.dtype)


def _slogdet_grad(grad, A, result):
    grad_sign, grad_logabsdet = grad
    scale = grad_logabsdet
    if A.is_complex():
        # sign = det / |det| turns with the imaginary part of tr(A^-1 dA), logabsdet grows with its
        # real part: both are the same trace, weighted by a complex scale.
        scale = grad_logabsdet + (grad_sign * _conj(result[0])).imag * 1j
    return scale.unsqueeze(-1).unsqueeze(-1) * adjoint(ops.linalg.inv(A))


@op(meta=_checked_meta(_square("linalg.slogdet"), _slogdet_shapes), returns=("sign", "logabsdet"),
    grad=_slogdet_grad, name="linalg_slogdet", function="slogdet", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 3, 3), "complex64"),)), Sample((TensorSpec((0, 2, 2)),))))
def linalg_slogdet(A: Tensor) -> Tensor:
    """The sign (a unit phase, if complex) and the log of the absolute value of the determinant
    of a square matrix (or of each in a batch), as the named tuple ``(sign, logabsdet)``:
    ``det = sign * exp(logabsdet)``, without overflow. A singular matrix gives ``(0, -inf)``;
    its backward raises ``LinAlgError`` (PyTorch's returns infinities), as the gradient,
    ``inv(A).mH`` times the output gradients, does not exist there.

    >>> import tensormodes as tm
    >>> tm.linalg.slogdet(tm.tensor([[0., 2.], [1., 0.]]))
    tensormodes.return_types.linalg_slogdet(
    sign=tensor(-1.),
    logabsdet=tensor(0.6931))
    """
    _square_checks("linalg.slogdet", A)
    _floating_check("linalg.slogdet", A)
    _low_precision_check("linalg.slogdet", A)
    sign, logabsdet = np.linalg.slogdet(A)
    return RETURN_TYPES["linalg_slogdet"](np.asarray(sign, dtype=A.dtype),
                                          np.asarray(logabsdet, dtype=A.real.dtype))


def _top_level_det_grad(grad, input, result):
    return _det_grad(grad, input, result)


@op(meta=_checked_meta(_square("linalg.det"), _batch_shape), grad=_top_level_det_grad, method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),))))
def det(input: Tensor) -> Tensor:
    """``tensormodes.linalg.det`` under its top-level name (also ``Tensor.det()``).

    >>> import tensormodes as tm
    >>> tm.tensor([[2., 3.], [4., 5.]]).det()
    tensor(-2.)
    """
    return linalg_det(input)


def _top_level_slogdet_grad(grad, input, result):
    return _slogdet_grad(grad, input, result)


@op(meta=_checked_meta(_square("linalg.slogdet"), _slogdet_shapes),
    returns=("sign", "logabsdet"), grad=_top_level_slogdet_grad, method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex128"),))))
def slogdet(input: Tensor) -> Tensor:
    """``tensormodes.linalg.slogdet`` under its top-level name (also ``Tensor.slogdet()``): the
    named tuple ``(sign, logabsdet)``.

    >>> import tensormodes as tm
    >>> tm.slogdet(tm.tensor([[0., 2.], [1., 0.]])).sign
    tensor(-1.)
    """
    return RETURN_TYPES["slogdet"](*linalg_slogdet(input))


def _singular_inverse(name: str, A: np.ndarray) -> LinAlgError:
    index, position = _singular_position(A)
    return LinAlgError(f"{name}: {_batch_prefix(A.shape[:-2], index)}The diagonal element {position} is zero, "
                       "the inversion could not be completed because the input matrix is singular.")


def _inv_grad(grad, result):
    # PyTorch's -result.mH @ (grad @ result.mH) takes mH twice (associated as before here: values kept)
    return -conj_mT(result) @ grad @ conj_mT(result)


@op(meta=_checked_meta(_square("linalg.inv"), _same_shape),
    errors=(Sample((TensorSpec((2, 3, 4)),)),),
    grad=_inv_grad, name="linalg_inv", function="inv", namespace="tensormodes.linalg", out=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),)), Sample((TensorSpec((0, 2, 2)),)), Sample((TensorSpec((0, 0)),))))
def inv(A: Tensor) -> Tensor:
    """The inverse of a square matrix (or of each in a batch). A singular matrix raises
    ``LinAlgError``.

    >>> import tensormodes as tm
    >>> tm.linalg.inv(tm.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _square_checks("linalg.inv", A)
    _floating_check("linalg.inv", A)
    _low_precision_check("linalg.inv", A)
    if A.size == 0:
        return np.empty(A.shape, A.dtype)
    result = _lapack(np.linalg.inv, A)
    if result is None:
        raise _singular_inverse("linalg.inv", A)
    return np.asarray(result, dtype=A.dtype)


@op(meta=_checked_meta(_square("linalg.inv"), _same_shape), grad=_inv_grad, method=True, out=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),))))
def inverse(input: Tensor) -> Tensor:
    """``tensormodes.linalg.inv`` under its older name (also ``Tensor.inverse()``).

    >>> import tensormodes as tm
    >>> tm.tensor([[2., 0.], [0., 4.]]).inverse()
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return inv(input)


def _logdet_grad(grad, input, result):
    # d log det = tr(A^-1 dA); where det < 0 the (real) result is NaN and does not move.
    local = adjoint(ops.linalg.inv(input))
    scale = grad if input.is_complex() else grad.where(~result.isnan(), 0)
    return scale.unsqueeze(-1).unsqueeze(-1) * local


@op(meta=_checked_meta(_square("logdet"), _batch_shape), grad=_logdet_grad, method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex128"),))))
def logdet(input: Tensor) -> Tensor:
    """The logarithm of the determinant of a square matrix (or of each in a batch): NaN for a
    negative determinant of a real matrix, -inf for a singular one. A singular matrix has no
    gradient here (backward raises ``LinAlgError``; PyTorch returns infinities).

    >>> import tensormodes as tm
    >>> round(tm.logdet(tm.tensor([[2., 0.], [0., 3.]])).item(), 4)
    1.7918
    """
    _square_checks("logdet", input)
    _floating_check("logdet", input)
    _low_precision_check("logdet", input)
    sign, logabsdet = np.linalg.slogdet(input)
    if input.dtype.kind == "c":  # (a singular one: PyTorch's -inf + nan j)
        with quiet():
            return np.asarray(np.where(sign == 0, complex(-np.inf, np.nan), np.log(sign) + logabsdet), input.dtype)
    with quiet():
        return np.asarray(np.where(sign < 0, np.nan, logabsdet), dtype=input.dtype)


def _is_vector_rhs(A_shape, B_shape) -> bool:
    """Whether ``solve``'s ``B`` is a (batch of) vector(s) rather than of matrices."""
    return len(B_shape) == 1 or (len(B_shape) == len(A_shape) - 1 and tuple(B_shape) == tuple(A_shape[:-1]))


def _solve_grad(grad, A, result, left, B_shape, needs_input_grad):
    vector = _is_vector_rhs(A.shape, B_shape)
    grad_x, x = (grad.unsqueeze(-1), result.unsqueeze(-1)) if vector else (grad, result)
    grad_b = ops.linalg.solve(adjoint(A), grad_x, left=left)
    grad_a = None
    if needs_input_grad[0]:
        grad_a = -(grad_b @ adjoint(x) if left else adjoint(x) @ grad_b)
    if not needs_input_grad[1]:
        return grad_a, None
    return grad_a, (grad_b.squeeze(-1) if vector else grad_b)


@op(meta=_checked_meta(_solve_meta_checks, _solve_shape),
    errors=(Sample((TensorSpec((3, 3)), TensorSpec((2, 2)))), Sample((TensorSpec((2, 3)), TensorSpec((2,))))),
    grad=_solve_grad, name="linalg_solve", function="solve", namespace="tensormodes.linalg", out=True, samples=(
    Sample((TensorSpec((3, 3)), TensorSpec((3,)))),
    Sample((TensorSpec((3, 3), "float64"), TensorSpec((3, 2), "float64"))),
    Sample((TensorSpec((2, 2, 2)), TensorSpec((2, 2)))), Sample((TensorSpec((2, 2, 2)), TensorSpec((2, 2, 3)))),
    Sample((TensorSpec((2, 2)), TensorSpec((3, 1, 2, 1)))),
    Sample((TensorSpec((3, 3)), TensorSpec((2, 3))), {"left": False}),
    Sample((TensorSpec((2, 2, 2), "float64"), TensorSpec((2, 3, 2), "float64")), {"left": False}),
    Sample((TensorSpec((2, 2), "complex64"), TensorSpec((2,), "complex64"))),
    Sample((TensorSpec((2, 2), "complex128"), TensorSpec((2, 2), "complex128")), {"left": False}),
    Sample((TensorSpec((0, 2, 2)), TensorSpec((2,))))))
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of the linear system ``A @ X = B`` (``X @ A = B`` if ``left=False``),
    for a square, invertible ``A`` (or each of a batch; batches broadcast). ``B`` may be a
    vector (or a batch of them, shaped as ``A`` without its last dimension) when ``left``.
    A singular ``A`` raises ``LinAlgError``.

    >>> import tensormodes as tm
    >>> tm.linalg.solve(tm.tensor([[2., 0.], [0., 4.]]), tm.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    vector, batch = _solve_checks(A, B, left)
    matrix = B[..., None] if vector else B
    n = A.shape[-1]
    a = np.broadcast_to(A, (*batch, n, n))
    b = np.broadcast_to(matrix, (*batch, *matrix.shape[-2:]))
    if not left:
        a, b = np.swapaxes(a, -2, -1), np.swapaxes(b, -2, -1)
    if b.size == 0 or a.size == 0:
        x = np.zeros(b.shape, A.dtype)
    else:
        x = _lapack(np.linalg.solve, a, b)
        if x is None:
            index, _ = _singular_position(a)
            raise LinAlgError(f"tensormodes.linalg.solve: {_batch_prefix(batch, index)}The solver failed because "
                              "the input matrix is singular.")
    if not left:
        x = np.ascontiguousarray(np.swapaxes(x, -2, -1))  # contiguous, as PyTorch's
    x = np.asarray(x, dtype=A.dtype)
    return x[..., 0] if vector else x


def _solve_checks(A: np.ndarray, B: np.ndarray, left) -> tuple[bool, tuple[int, ...]]:
    """``solve``'s checks (of shapes and dtypes only); whether ``B`` is a vector, and the batch shape."""
    _check_bool_argument("linalg_solve", "left", left)
    _floating_check("linalg.solve", A)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_type_name(dtype_of(A))} and B of type {scalar_type_name(dtype_of(B))} instead")
    _square_checks("linalg.solve", A)
    if B.ndim < 1:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    vector = _is_vector_rhs(A.shape, B.shape)
    matrix = B.shape + (1,) if vector else B.shape
    n = A.shape[-1]
    if matrix[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} "
                           f"= B ({n}x{n} and {matrix[-2]}x{matrix[-1]})")
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    if A.dtype in HALF_TYPES:
        raise not_implemented("lu_cpu", dtype_of(A))
    return vector, tuple(check_same_shape_or_broadcast(matrix[:-2], A.shape[:-2]))


# -- Cholesky and QR decompositions ----------------------------------------------------------------

def _check_bool_argument(function: str, name: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{function}(): argument '{name}' must be bool, not {type(value).__name__}")


def _not_positive_definite(batch_shape: tuple, index: int, order: int) -> LinAlgError:
    return LinAlgError(f"linalg.cholesky: {_batch_prefix(batch_shape, index)}The factorization could not be "
                       "completed because the input is not positive-definite (the leading minor of order "
                       f"{order} is not positive-definite).")


def _first_failed_minor(A: np.ndarray) -> tuple[int, int]:
    """``(batch element, order)`` of the first leading minor that is not positive-definite."""
    flat = A.reshape(-1, *A.shape[-2:])
    for index, matrix in enumerate(flat):
        for order in range(1, matrix.shape[-1] + 1):
            try:
                np.linalg.cholesky(matrix[:order, :order])
            except np.linalg.LinAlgError:
                return index, order
    raise AssertionError("NumPy's Cholesky factorisation failed on a positive-definite batch")


def _cholesky_grad(grad, result, upper):
    # A = L L^H gives dL = L Phi(L^-1 dA L^-H), Phi keeping the lower triangle with the diagonal
    # halved. Its adjoint, taken on Hermitian perturbations as PyTorch does (the gradient spreads
    # over both triangles, though only one is read), is L^-H P L^-1 with P = (M + tril(M, -1)^H) / 2,
    # M the lower triangle of L^H grad (whose diagonal PyTorch keeps whole, imaginary part
    # included, and so does this).
    lower, grad_lower = (adjoint(result), adjoint(grad)) if upper else (result, grad)
    m = (adjoint(lower) @ grad_lower).tril()
    p = (m + adjoint(m.tril(-1))) * 0.5
    solve_ = ops.linalg.solve
    return solve_(lower, solve_(adjoint(lower), p), left=False)


@op(meta=_checked_meta(_cholesky_checks, _same_shape),
    errors=(Sample((TensorSpec((2, 3)),)),),
    grad=_cholesky_grad, name="linalg_cholesky", function="cholesky", namespace="tensormodes.linalg", out=True,
    samples=(
    Sample((TensorSpec((3, 1, 1), "float32", 0.5, 2.0),)), Sample((TensorSpec((2, 1, 1), "float64", 0.5, 2.0),),
                                                              {"upper": True}),
    Sample((TensorSpec((0, 3, 3)),)), Sample((TensorSpec((0, 2, 2), "complex64"),), {"upper": True})),
    schema={"A": "Tensor self"})
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` of a Hermitian positive-definite matrix (or of each in a
    batch): lower triangular with a positive real diagonal, ``A = L @ L.mH``. Only the
    lower triangle of ``A`` is read; ``upper=True`` reads the upper one and returns
    ``U = L.mH`` (``A = U.mH @ U``). A matrix that is not positive-definite raises
    ``LinAlgError``.

    The gradient is PyTorch's: the input is taken as Hermitian, so the gradient is spread
    over both triangles (finite differences of one triangle alone do not match it).

    >>> import tensormodes as tm
    >>> tm.linalg.cholesky(tm.tensor([[4., 2.], [2., 5.]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    _check_bool_argument("linalg_cholesky", "upper", upper)
    _square_checks("linalg.cholesky", A)
    _floating_check("linalg.cholesky", A)
    if A.size == 0:  # (PyTorch returns an empty result before its kernel checks the dtype)
        return np.empty(A.shape, A.dtype)
    if A.dtype in HALF_TYPES:
        raise not_implemented("cholesky_cpu", dtype_of(A))
    work = np.swapaxes(A, -2, -1).conj() if upper else A
    try:
        lower = np.linalg.cholesky(work)
    except np.linalg.LinAlgError:
        raise _not_positive_definite(A.shape[:-2], *_first_failed_minor(work)) from None
    # LAPACK stops at a NaN pivot as at a non-positive one; NumPy's build carries the NaN on.
    nan_pivots = np.isnan(np.diagonal(lower, axis1=-2, axis2=-1).real).reshape(-1, A.shape[-1])
    if nan_pivots.any():
        index = int(np.flatnonzero(nan_pivots.any(axis=-1))[0])
        raise _not_positive_definite(A.shape[:-2], index, int(np.argmax(nan_pivots[index])) + 1)
    return np.asarray(np.swapaxes(lower, -2, -1).conj() if upper else lower, dtype=A.dtype)


_QR_MODES = ("reduced", "complete", "r")


def _qr_square_grad(q, r, grad_q, grad_r):
    """The gradient of ``(Q, R) = qr(A)`` for ``A`` with at least as many rows as columns, ``Q``
    reduced: (grad_Q + Q C) R^-H, C the Hermitian matrix (with a real diagonal) whose lower
    triangle is that of R grad_R^H - grad_Q^H Q: the part of dR R^-1 and Q^H dQ it meets."""
    n = r @ adjoint(grad_r) - adjoint(grad_q) @ q
    below = n.tril(-1)
    c = below + adjoint(below) + n.diagonal(0, -2, -1).real.diag_embed().to(n.dtype)
    return _solve_right_lower(adjoint(r), grad_q + q @ c)


def _solve_right_lower(lower, b):
    """``X`` with ``X @ lower = b`` for a lower-triangular ``lower`` (batched), by substitution
    from the last column, with public ops: as PyTorch's triangular solve, a zero or NaN on the
    diagonal gives infinities or NaN rather than an error."""
    n = lower.shape[-1]
    columns = [None] * n
    for j in range(n - 1, -1, -1):
        column = b[..., j]
        if j + 1 < n:
            later = ops.stack(columns[j + 1:], -1)
            column = column - (later @ lower[..., j + 1:, j].unsqueeze(-1)).squeeze(-1)
        columns[j] = column / lower[..., j, j].unsqueeze(-1)
    return ops.stack(columns, -1) if n else b.clone()


def _qr_grad(grad, result, mode, A_shape):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = A_shape[-2], A_shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    grad_q, grad_r = grad
    q, r = result
    if m >= n:
        return _qr_square_grad(q, r, grad_q, grad_r)
    # A = Q [R1 R2]: (Q, R1) is the QR of A's first m columns, R2 = Q^H A2 (A2 the others),
    # which feeds grad_R2 into Q's gradient too.
    a2 = q @ r[..., m:]
    grad_r2 = grad_r[..., m:]
    grad_a1 = _qr_square_grad(q, r[..., :m], grad_q + a2 @ adjoint(grad_r2), grad_r[..., :m])
    return ops.cat([grad_a1, q @ grad_r2], -1)


@op(meta=_checked_meta(_no_checks, _qr_shapes),
    errors=(Sample((TensorSpec((3, 3)), "full")),),
    returns=("Q", "R"), grad=_qr_grad, name="linalg_qr", function="qr", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((4, 2), "float64"),)), Sample((TensorSpec((2, 2, 4)),)),
    Sample((TensorSpec((3, 2), "complex64"),)), Sample((TensorSpec((2, 3), "complex128"),), {"mode": "complete"}),
    Sample((TensorSpec((3, 3)), "complete")), Sample((TensorSpec((0, 4, 2)), "complete")),
    Sample((TensorSpec((2, 0, 3)),), {"mode": "r"}), Sample((TensorSpec((0, 3)),)), Sample((TensorSpec((3, 0)),)),
    Sample((TensorSpec((13, 3, 2), "float64"), "complete")), Sample((TensorSpec((13, 2, 3)), "r"))))
def qr(A: Tensor, mode: str = "reduced") -> Tensor:
    """The QR decomposition ``A = Q @ R`` of a matrix (or of each in a batch), as the named
    tuple ``(Q, R)``: ``Q`` with orthonormal columns, ``R`` upper triangular with a real
    diagonal (LAPACK's Householder convention, as PyTorch's). ``mode='reduced'`` keeps
    ``k = min(m, n)`` columns of ``Q`` and rows of ``R``, ``'complete'`` all ``m``, and
    ``'r'`` computes only ``R`` (``Q`` is empty). As in PyTorch, ``mode='r'`` and
    ``'complete'`` with more rows than columns have no gradient (backward raises).

    >>> import tensormodes as tm
    >>> Q, R = tm.linalg.qr(tm.tensor([[3., 1.], [4., 2.]], dtype=tm.float64))
    >>> R.tolist()
    [[-5.0, -2.2], [0.0, 0.3999999999999999]]
    """
    if not isinstance(mode, str):
        raise TypeError(f"linalg_qr(): argument 'mode' must be str, not {type(mode).__name__}")
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _floating_check("linalg.qr", A)
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    if A.dtype in HALF_TYPES:
        raise not_implemented("geqrf_cpu", dtype_of(A))
    *batch, m, n = A.shape
    result_type = RETURN_TYPES["linalg_qr"]
    k = m if mode == "complete" else min(m, n)
    if A.size == 0:
        q = np.broadcast_to(np.eye(m, k, dtype=A.dtype), (*batch, m, k)).copy()
        r = np.zeros((*batch, k, n), A.dtype)
    else:
        q, r = np.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.empty((0,), A.dtype)
    return result_type(np.asarray(q, dtype=A.dtype), np.asarray(r, dtype=A.dtype))


# -- Hermitian eigendecomposition ------------------------------------------------------------------

_EIGH_PHASE_DEPENDENT = ("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                         "multiplication by e^{i phi}. The specified loss function depends on this quantity, so it "
                         "is ill-defined.")


def _eigh_checks(A: np.ndarray, UPLO) -> None:
    if not isinstance(UPLO, str):
        raise TypeError(f"linalg_eigh(): argument 'UPLO' must be str, not {type(UPLO).__name__}")
    _square_checks("linalg.eigh", A)
    if len(UPLO) != 1 or UPLO.upper() not in "LU":
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if (A.dtype.kind not in "fc" or A.dtype in HALF_TYPES) and A.size:  # no dispatch without data, as PyTorch
        raise not_implemented("linalg_eigh_cpu", dtype_of(A))


def _canonical_eigenvectors(vectors: np.ndarray) -> np.ndarray:
    """Eigenvectors are unique only up to sign (a unit phase if complex): each column is turned
    so that its largest entry is real and positive, as ``svd``'s singular vectors."""
    largest = np.take_along_axis(vectors, np.abs(vectors).argmax(axis=-2)[..., None, :], axis=-2)
    size = np.abs(largest)
    return vectors * np.where(size > 0, largest / np.where(size > 0, size, 1), 1).conj()


def _eigh_grad(grad, result):
    # With A = V diag(L) V^H and K = V^H dA V: dL = diag(K), dV = V (K / (L_j - L_i)) off the
    # diagonal. The gradient, taken on Hermitian perturbations as PyTorch's, is
    # V (diag(grad_L) + skew(V^H grad_V) / 2 / (L_j - L_i)) V^H. An output that received no
    # gradient arrives as zeros: its term is skipped (it would divide by zero gaps).
    grad_values, grad_vectors = grad
    values, vectors = result
    inner = grad_values.to(vectors.dtype).diag_embed()
    if grad_vectors.is_meta or bool(grad_vectors.any()):
        projected = adjoint(vectors) @ grad_vectors
        if vectors.dtype.is_complex:
            # Turning an eigenvector by a phase leaves A unchanged: a loss must not depend on it.
            phases = projected.diagonal(0, -2, -1).imag
            if not ops.allclose(phases, phases * 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError(_EIGH_PHASE_DEPENDENT)
        n = values.shape[-1]
        # gaps[i, j] = L_j - L_i, and 1 on the diagonal (where the skew part is zero)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + ops.eye(n, dtype=values.dtype, device=values.device)
        inner = inner + _skew(projected) * 0.5 / gaps
    return vectors @ inner @ adjoint(vectors)


@op(meta=_checked_meta(_eigh_checks, _eigh_shapes),
    errors=(Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((2, 2)), "X"))), returns=("eigenvalues", "eigenvectors"),
    grad=_eigh_grad, name="linalg_eigh", function="eigh", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 1, 1)),)), Sample((TensorSpec((2, 1, 1), "float64"), "U")),
    Sample((TensorSpec((3, 5, 5)),), {"UPLO": "u"}), Sample((TensorSpec((3, 5, 5), "float64"), "U")),
    Sample((TensorSpec((2, 6, 6), "complex64"),)), Sample((TensorSpec((9, 9), "complex128"),), {"UPLO": "U"}),
    Sample((TensorSpec((0, 3, 3)),))), schema={"A": "Tensor self"})
def eigh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues (real, ascending) and eigenvectors (orthonormal columns) of a Hermitian
    matrix (or of each in a batch), as the named tuple ``(eigenvalues, eigenvectors)``: ``A =
    V @ diag(L) @ V.mH``. Only the lower triangle of ``A`` is read (the upper one with
    ``UPLO='U'``). Each eigenvector's sign (phase, if complex) is fixed so that its largest
    entry is real and positive.

    The gradient is PyTorch's: the input is taken as Hermitian, so the gradient is spread
    over both triangles; a complex loss must not depend on the eigenvectors' phases.

    >>> import tensormodes as tm
    >>> L, V = tm.linalg.eigh(tm.tensor([[2., 0.], [0., 1.]]))
    >>> L.tolist(), V.tolist()
    ([1.0, 2.0], [[0.0, 1.0], [1.0, 0.0]])
    """
    _eigh_checks(A, UPLO)
    result_type = RETURN_TYPES["linalg_eigh"]
    if A.size == 0:
        return result_type(np.zeros(A.shape[:-1], A.real.dtype), np.empty(A.shape, A.dtype))
    values, vectors = _converged(np.linalg.eigh, A, UPLO)
    return result_type(np.asarray(values, dtype=A.real.dtype),
                       np.asarray(_canonical_eigenvectors(vectors), dtype=A.dtype))


def _converges(routine, matrix: np.ndarray, UPLO: str) -> bool:
    try:
        routine(matrix, UPLO=UPLO.upper())
    except np.linalg.LinAlgError:
        return False
    return True


def _converged(routine, A: np.ndarray, UPLO: str):
    """``routine`` (NumPy's ``eigh``/``eigvalsh``) of ``A``; when LAPACK fails to converge (a matrix
    holding infinities, say), PyTorch's ``LinAlgError`` naming the first failing batch element."""
    try:
        return routine(A, UPLO=UPLO.upper())
    except np.linalg.LinAlgError:
        matrices = A.reshape(-1, *A.shape[-2:])
        index = next(i for i, matrix in enumerate(matrices) if not _converges(routine, matrix, UPLO))
        raise LinAlgError(f"linalg.eigh: {_batch_prefix(A.shape[:-2], index)}The algorithm failed to converge "
                          "because the input matrix is ill-conditioned or has too many repeated eigenvalues.") from None


def _eigvalsh_grad(grad, A, UPLO):
    # PyTorch keeps the eigenvectors of the forward pass; this recomputes them, through the
    # public eigh so that the gradient is itself differentiable.
    vectors = ops.linalg.eigh(A, UPLO).eigenvectors
    return (vectors * grad.unsqueeze(-2).to(vectors.dtype)) @ adjoint(vectors)


@op(meta=_checked_meta(_eigh_checks, _eigvalsh_shape),
    grad=_eigvalsh_grad, name="linalg_eigvalsh", function="eigvalsh", namespace="tensormodes.linalg", out=True,
    samples=(
    Sample((TensorSpec((3, 5, 5)),)), Sample((TensorSpec((3, 5, 5), "float64"), "U")),
    Sample((TensorSpec((2, 6, 6), "complex64"),)), Sample((TensorSpec((9, 9), "complex128"),), {"UPLO": "U"}),
    Sample((TensorSpec((0, 3, 3)),))),
    schema={"A": "Tensor self"})
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a Hermitian matrix (or of each in a batch), real and ascending:
    ``eigenvalues`` of ``eigh``, cheaper, since no eigenvectors are computed.

    >>> import tensormodes as tm
    >>> tm.linalg.eigvalsh(tm.tensor([[2., 1.], [1., 2.]])).tolist()
    [1.0, 3.0]
    """
    _eigh_checks(A, UPLO)
    if A.size == 0:
        return np.zeros(A.shape[:-1], A.real.dtype)
    return np.asarray(_converged(np.linalg.eigvalsh, A, UPLO), dtype=A.real.dtype)
