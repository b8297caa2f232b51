"""Pseudoinverses, least squares and orthogonal factors: ``linalg.pinv`` (with the top-level
``pinverse``), the two ops behind ``linalg.lstsq`` (a composite in ``linalg.py``): ``_linalg_lstsq``,
its differentiable outputs, and ``_linalg_lstsq_rank``, the others; ``linalg.householder_product``,
and LAPACK's other Householder functions ``geqrf``, ``orgqr`` (``householder_product``'s alias) and
``ormqr`` (``Q`` from ``householder_product``, then a product). The first two go through the
singular value decomposition (or, for a Hermitian ``pinv``, the eigendecomposition); a NaN in the
input raises ``LinAlgError`` as PyTorch's SVD does.
"""

from __future__ import annotations

from numbers import Number, Real

import numpy as np

from .._meta_array import DataDependentOutputError, MetaArray
from .common import (
    adjoint,
    check_same_shape_or_broadcast,
    dtype_of,
    no_complex_autograd,
    not_implemented,
    ops,
    scalar_type_name,
)
from .common import conjugate as _conj
from .linalg import _finite_matrices
from .meta_rules import rule
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, _return_type, alias, op

_LAPACK_TYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


# -- pinv -------------------------------------------------------------------------------------------

def _check_pinv(A) -> None:
    if A.ndim < 2 or A.dtype not in _LAPACK_TYPES:
        raise RuntimeError(f"linalg.pinv({scalar_type_name(dtype_of(A))}{{{list(A.shape)}}}): expected a tensor with "
                           "2 or more dimensions of float, double, cfloat or cdouble types")


def _tolerance(values, batch: tuple[int, ...]):
    """A tolerance argument as an array broadcasting against a batch's singular values."""
    if values is None:
        return None
    return np.asarray(values, dtype=np.float64)[..., None] if np.ndim(values) else float(values)


def _pseudoinverse(A: np.ndarray, atol, rtol, hermitian: bool) -> np.ndarray:
    _check_pinv(A)
    *batch, m, n = A.shape
    if A.size == 0:
        return np.zeros((*batch, n, m), A.dtype)
    atol, rtol = _tolerance(atol, tuple(batch)), _tolerance(rtol, tuple(batch))
    if rtol is None:
        # PyTorch's default: eps * max(m, n), or 0 when a positive atol is given
        given = atol is not None and np.any(np.asarray(atol) > 0)
        rtol = 0.0 if given else float(np.finfo(A.real.dtype).eps) * max(m, n)
    atol = 0.0 if atol is None else atol
    if hermitian:
        values, vectors = np.linalg.eigh(A)
        size = np.abs(values)
        tol = np.maximum(atol, rtol * size.max(axis=-1, keepdims=True))
        inverse = np.where(size > tol, 1 / np.where(size > tol, values, 1), 0).astype(values.dtype)
        return ((vectors * inverse[..., None, :]) @ adjoint_array(vectors)).astype(A.dtype)
    work, broken = _finite_matrices(A)
    u, s, vh = np.linalg.svd(work, full_matrices=False)
    tol = np.maximum(atol, rtol * s[..., :1])
    inverse = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0).astype(s.dtype)
    result = (adjoint_array(vh) * inverse[..., None, :]) @ adjoint_array(u)
    if broken is not None:
        result[broken] = np.nan
    return result.astype(A.dtype)


def adjoint_array(x: np.ndarray) -> np.ndarray:
    """The conjugate transpose of (each matrix of) an array."""
    return np.swapaxes(x, -1, -2).conj() if x.dtype.kind == "c" else np.swapaxes(x, -1, -2)


def _pinv_backward(grad, pinv, A):
    # PyTorch's pinv_backward (the Golub-Pereyra derivative of the pseudoinverse)
    m, n = A.shape[-2], A.shape[-1]
    pinv_h, grad_h = adjoint(pinv), adjoint(grad)
    if m <= n:
        k = grad_h @ pinv
        k_pinv_h = k @ pinv_h
        return -adjoint(pinv @ k) + k_pinv_h - (A @ pinv) @ k_pinv_h + (pinv_h @ pinv) @ (grad_h - k @ A)
    k = pinv @ grad_h
    pinv_h_k = pinv_h @ k
    return -adjoint(k @ pinv) + (grad_h - A @ k) @ pinv @ pinv_h + pinv_h_k - pinv_h_k @ pinv @ A


def _pinv_grad(grad, A, result):
    return _pinv_backward(grad, result, A), None, None


def _pinv_meta(A, *, atol=None, rtol=None, hermitian=False):
    _check_pinv(A)
    return MetaArray((*A.shape[:-2], A.shape[-1], A.shape[-2]), A.dtype)


def _tolerance_tensors(A, atol, rtol):
    """PyTorch's ``linalg_pinv.atol_rtol_float`` composite: the tolerances as float64 scalars, an
    omitted ``atol`` 0, an omitted ``rtol`` its default (0 after a positive ``atol``)."""
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else ops.finfo(A.dtype).eps * max(A.shape[-2:])
    return [ops.ops.aten.full.default([], float(value), dtype=ops.float64, device=A.device)
            for value in (0.0 if atol is None else atol, rtol)]


def _pinv_decomposition(A, atol=None, rtol=None, hermitian=False):
    """PyTorch's composite ``linalg.pinv`` for number tolerances: ``linalg_pinv.atol_rtol_tensor``
    of them as tensors (``full``). Tensor tolerances (or none) reach it directly."""
    numbers = [v for v in (atol, rtol) if v is not None]
    if not numbers or not all(isinstance(v, Real) and not isinstance(v, bool) for v in numbers) \
            or (rtol is None and (A.dim() == 0 or not (A.is_floating_point() or A.is_complex()))):
        return NotImplemented  # the op itself: tensor tolerances, or its errors before any default
    atol, rtol = _tolerance_tensors(A, atol, rtol)  # (the op then raises its errors, as PyTorch's)
    return ops.ops.aten.linalg_pinv.atol_rtol_tensor(A, atol=atol, rtol=rtol, hermitian=hermitian)


@op(grad=_pinv_grad, meta=rule(_pinv_meta), name="linalg_pinv", function="pinv", namespace="tensormodes.linalg",
    decompose=_pinv_decomposition, aten="atol_rtol_tensor", schema={"A": "Tensor self"},
    out=True, errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2), "int64"),)),
                      Sample((TensorSpec((2, 2), "float16"),))),
    samples=(Sample((TensorSpec((3, 2)),)), Sample((TensorSpec((2, 4), "float64"),)),
             Sample((TensorSpec((2, 3, 3), "float64"),), {"rtol": 1e-4}),
             Sample((TensorSpec((3, 2), "float64"),), {"atol": 0.5, "rtol": 0.1}),
             Sample((TensorSpec((2, 2), "complex64"),)), Sample((TensorSpec((0, 3)),))))
def linalg_pinv(A: Tensor, *, atol: Tensor | Number | None = None, rtol: Tensor | Number | None = None,
                hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudoinverse of a matrix (or of each in a batch), from its SVD:
    singular values at most ``max(atol, rtol * largest)`` count as zero (``rtol`` defaults to
    ``eps * max(m, n)``, or 0 when a positive ``atol`` is given). ``hermitian`` uses the
    eigendecomposition of a Hermitian ``A``.

    >>> import tensormodes as tm
    >>> tm.linalg.pinv(tm.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    return _pseudoinverse(A, atol, rtol, hermitian)


def _pinverse_grad(grad, input, result):
    return _pinv_backward(grad, result, input)


def _pinverse_meta(input, rcond=1e-15):
    return _pinv_meta(input)


def _pinverse_decomposition(input, rcond=1e-15):
    """PyTorch's composite ``pinverse``: ``linalg_pinv.atol_rtol_tensor`` with ``atol`` 0 and
    ``rtol`` ``rcond``, as tensors."""
    if not isinstance(rcond, Real) or isinstance(rcond, bool):
        return NotImplemented  # the op raises its argument error
    atol, rtol = _tolerance_tensors(input, 0.0, rcond)
    return ops.ops.aten.linalg_pinv.atol_rtol_tensor(input, atol=atol, rtol=rtol)


@op(grad=_pinverse_grad, meta=rule(_pinverse_meta), node="linalg_pinv", method=True,
    decompose=_pinverse_decomposition,
    errors=(Sample((TensorSpec((3,)),)),),
    samples=(Sample((TensorSpec((3, 2)),)), Sample((TensorSpec((2, 3, 3), "float64"), 1e-4))))
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudoinverse of ``input``, singular values at most ``rcond`` times the largest
    counting as zero: ``linalg.pinv(input, rtol=rcond)``.

    >>> import tensormodes as tm
    >>> tm.pinverse(tm.tensor([[4.0]]))
    tensor([[0.2500]])
    """
    return _pseudoinverse(input, None, rcond, False)


# -- lstsq ------------------------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _check_lstsq(A, B, driver) -> tuple[bool, tuple[int, ...]]:
    """PyTorch's checks; whether ``B`` is a batch of vectors, and the broadcast batch shape."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {scalar_type_name(dtype_of(A))} and other's dtype {scalar_type_name(dtype_of(B))}")
    if A.dtype not in _LAPACK_TYPES:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if not 0 <= A.ndim - B.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                           "other.dim()) <= 1")
    vector = B.ndim == A.ndim - 1
    # PyTorch reads B as vectors (for the row check) only when it is 1-D or A's shape without its
    # columns; a B of one dimension less otherwise is checked as matrices, then broadcast as vectors
    as_vectors = vector and (B.ndim == 1 or tuple(B.shape) == tuple(A.shape[:-1]))
    rows = B.shape[-1] if as_vectors else B.shape[-2]
    if rows != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if as_vectors else -2})")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    batch = check_same_shape_or_broadcast(A.shape[:-2], B.shape[:-1] if vector else B.shape[:-2])
    return vector, tuple(batch)


def _lstsq_shapes(A, B, driver):
    vector, batch = _check_lstsq(A, B, driver)
    m, n = A.shape[-2:]
    k = 1 if vector else B.shape[-1]
    solution = (*batch, n) if vector else (*batch, n, k)
    driver = driver or "gelsy"
    rank = (0,) if driver == "gels" else batch
    values = (*batch, min(m, n)) if driver in ("gelsd", "gelss") else (0,)
    return solution, rank, values, vector, batch


def _lstsq_meta(A, B, rcond=None, *, driver=None):
    solution, _, _, _, _ = _lstsq_shapes(A, B, driver)
    if (driver or "gelsy") != "gelsy" and A.shape[-2] > A.shape[-1]:
        raise DataDependentOutputError("_linalg_lstsq(): the output shape depends on the input's values, which meta "
                                       "tensors do not have (the residuals are computed only where A has full rank)")
    return MetaArray(solution, A.dtype), MetaArray((0,), _real(A.dtype))


def _lstsq_rank_meta(A, B, rcond=None, *, driver=None):
    _, rank, values, _, _ = _lstsq_shapes(A, B, driver)
    return MetaArray(rank, np.dtype(np.int64)), MetaArray(values, _real(A.dtype))


def _real(dtype: np.dtype) -> np.dtype:
    return np.dtype(dtype).type(0).real.dtype


def _lstsq_grad(grad, A, B, result, needs_input_grad):
    # The solution is pinv(A) @ B (PyTorch's formula). A residual r = |A x - b|^2 is at its
    # minimum over x, so only its explicit dependence counts: dr/dA = 2 (A x - b) x^H, dr/db = -2 (A x - b).
    grad_x, grad_r = grad[0], grad[1]
    vector = B.dim() == A.dim() - 1
    x = result[0]
    if vector:
        grad_x, B, x = grad_x.unsqueeze(-1), B.unsqueeze(-1), x.unsqueeze(-1)
    pinv = ops.linalg.pinv(A)
    grad_a = _pinv_backward(grad_x @ adjoint(B), pinv, A) if needs_input_grad[0] else None
    grad_b = adjoint(pinv) @ grad_x if needs_input_grad[1] else None
    if grad_r.numel() and bool(grad_r.any()):
        weighted = (A @ x - B) * grad_r.unsqueeze(-2) * 2
        grad_a = None if grad_a is None else grad_a + weighted @ adjoint(x)
        grad_b = None if grad_b is None else grad_b - weighted
    if vector and grad_b is not None:
        grad_b = grad_b.squeeze(-1)
    return grad_a, grad_b


def _lstsq_parts(A, B, rcond, driver):
    """``(solution, residuals, rank, singular_values)`` as PyTorch's CPU ``linalg.lstsq`` fills them."""
    solution_shape, rank_shape, values_shape, vector, batch = _lstsq_shapes(A, B, driver)
    driver = driver or "gelsy"
    m, n = A.shape[-2:]
    matrices = B[..., None] if vector else B
    a = np.broadcast_to(A, (*batch, m, n))
    b = np.broadcast_to(matrices, (*batch, m, matrices.shape[-1]))
    real = _real(A.dtype)
    cutoff = float(np.finfo(real).eps) * max(m, n) if rcond is None or rcond < 0 else rcond
    if a.size:
        work, broken = _finite_matrices(a)
        u, s, vh = np.linalg.svd(work, full_matrices=False)
        kept = s > cutoff * s[..., :1]
        inverse = np.where(kept, 1 / np.where(kept, s, 1), 0).astype(s.dtype)
        x = (adjoint_array(vh) * inverse[..., None, :]) @ (adjoint_array(u) @ b)
        if broken is not None:
            x[broken] = np.nan
        ranks = kept.sum(axis=-1).astype(np.int64)
    else:
        s = np.zeros((*batch, min(m, n)), real)
        x = np.zeros((*batch, n, b.shape[-1]), A.dtype)
        ranks = np.zeros(batch, np.int64)
    solution = np.ascontiguousarray(x[..., 0] if vector else x).astype(A.dtype).reshape(solution_shape)
    residuals = np.zeros((0,), real)
    if driver != "gelsy" and m > n and bool(np.all(ranks == n)):  # also for an empty batch, or no columns
        residuals = (np.abs(a @ x - b) ** 2).sum(axis=-2).astype(real)
        if driver == "gels" and n == 0:
            residuals[...] = 0  # LAPACK's gels zeroes B when A has no columns, so PyTorch's residuals are 0
    rank = np.zeros((0,), np.int64) if driver == "gels" else np.asarray(ranks).reshape(rank_shape)
    values = s.astype(real).reshape(values_shape) if driver in ("gelsd", "gelss") else np.zeros((0,), real)
    return solution, residuals, rank, values


# PyTorch's result type of linalg.lstsq, which nn's composite in ``linalg.py`` builds from the two ops below
_return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"), RETURN_TYPES)

_LSTSQ_ERRORS = (Sample((TensorSpec((3,)), TensorSpec((3,)))), Sample((TensorSpec((3, 2)), TensorSpec((2, 1)))),
                 Sample((TensorSpec((3, 2)), TensorSpec((3, 1), "float64"))),
                 Sample((TensorSpec((3, 2), "int64"), TensorSpec((3, 1), "int64"))),
                 Sample((TensorSpec((3, 2)), TensorSpec((3, 1))), {"driver": "foo"}),
                 Sample((TensorSpec((3, 2)), TensorSpec((1, 1, 3, 1)))))
_LSTSQ_SAMPLES = (Sample((TensorSpec((4, 2)), TensorSpec((4, 3)))),
                  Sample((TensorSpec((4, 2), "float64"), TensorSpec((4,), "float64"))),
                  Sample((TensorSpec((2, 3, 3), "float64"), TensorSpec((2, 3, 2), "float64")), {"driver": "gelsd"}),
                  Sample((TensorSpec((4, 2), "float64"), TensorSpec((4, 1), "float64")), {"driver": "gelss"}),
                  Sample((TensorSpec((4, 2), "float64"), TensorSpec((4,), "float64")), {"driver": "gels"}),
                  Sample((TensorSpec((3, 3), "complex128"), TensorSpec((3, 1), "complex128"))),
                  Sample((TensorSpec((0, 2)), TensorSpec((0, 1)))))


@op(grad=_lstsq_grad, meta=rule(_lstsq_meta), node="linalg_lstsq", errors=_LSTSQ_ERRORS, samples=_LSTSQ_SAMPLES)
def _linalg_lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Tensor:
    """The differentiable outputs of ``linalg.lstsq``: ``(solution, residuals)`` (node
    ``LinalgLstsqBackward0``), which ``tensormodes.linalg.lstsq`` runs.

    >>> import tensormodes as tm
    >>> tm._linalg_lstsq(tm.tensor([[2.0], [2.0]]), tm.tensor([2.0, 4.0]), driver="gelsd")
    (tensor([1.5000]), tensor([2.]))
    """
    return _lstsq_parts(A, B, rcond, driver)[:2]


@op(differentiable=False, meta=rule(_lstsq_rank_meta), errors=_LSTSQ_ERRORS, samples=_LSTSQ_SAMPLES)
def _linalg_lstsq_rank(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Tensor:
    """The outputs of ``linalg.lstsq`` PyTorch does not differentiate: ``(rank, singular_values)``.

    >>> import tensormodes as tm
    >>> tm._linalg_lstsq_rank(tm.tensor([[2.0], [2.0]]), tm.tensor([2.0, 4.0]), driver="gelsd")
    (tensor(1), tensor([2.8284]))
    """
    return _lstsq_parts(A, B, rcond, driver)[2:]


# -- householder_product ----------------------------------------------------------------------------

def _check_householder(input, tau) -> None:
    name = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.ndim == 0:  # PyTorch reads tau.size(-1) here
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {input.ndim}")
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"{name}: tau dtype {scalar_type_name(dtype_of(tau))} does not match input dtype "
                           f"{scalar_type_name(dtype_of(input))}")
    if input.dtype not in _LAPACK_TYPES:
        raise not_implemented("orgqr_cpu", dtype_of(input))


def _reflectors(input: np.ndarray, count: int) -> np.ndarray:
    """The Householder vectors (..., m, count): the columns of ``input`` below the diagonal, 1 on it."""
    m = input.shape[-2]
    rows = np.arange(m)[:, None]
    columns = np.arange(count)[None, :]
    vectors = np.where(rows > columns, input[..., :count], 0).astype(input.dtype)
    return np.where(rows == columns, np.ones((), input.dtype), vectors)


def _householder_meta(input, tau):
    _check_householder(input, tau)
    return MetaArray(input.shape, input.dtype)


def _householder_grad(grad, input, tau, needs_input_grad):
    # Reverse mode through Q = (H_1 ... H_k)[:, :n], H_i = I - tau_i v_i v_i^H: with M the gradient
    # of H_i, tau_i gets -v^H M v and v_i gets -(conj(tau_i) M v + tau_i M^H v) (below the diagonal).
    m, n = input.shape[-2], input.shape[-1]
    count = tau.shape[-1]
    eye = ops.eye(m, dtype=input.dtype, device=input.device)
    rows = ops.arange(m, device=input.device).unsqueeze(-1)
    factors = []
    for i in range(count):
        column = input[..., :, i:i + 1].masked_fill(rows <= i, 0) + (rows == i).to(input.dtype)
        factors.append((column, eye - tau[..., i:i + 1].unsqueeze(-1) * (column @ adjoint(column))))
    prefixes = [eye.expand(*input.shape[:-2], m, m)]
    for _, factor in factors[:-1]:
        prefixes.append(prefixes[-1] @ factor)
    full_grad = ops.cat([grad, grad.new_zeros((*grad.shape[:-1], m - n))], -1)
    suffix = eye.expand(*input.shape[:-2], m, m)
    grad_columns, grad_taus = [], []
    for i in range(count - 1, -1, -1):
        column, factor = factors[i]
        outer = adjoint(prefixes[i]) @ full_grad @ adjoint(suffix)
        suffix = factor @ suffix
        t = tau[..., i:i + 1].unsqueeze(-1)
        grad_taus.append(-(adjoint(column) @ outer @ column).reshape(*tau.shape[:-1], 1))
        grad_column = -(_conj(t) * (outer @ column) + t * (adjoint(outer) @ column))
        grad_columns.append(grad_column.masked_fill(rows <= i, 0))
    grad_input = grad_tau = None
    if needs_input_grad[0]:
        parts = grad_columns[::-1]
        if n > count:
            parts.append(input.new_zeros((*input.shape[:-1], n - count)))
        grad_input = ops.cat(parts, -1) if parts else ops.zeros_like(input)
    if needs_input_grad[1]:
        grad_tau = ops.cat(grad_taus[::-1], -1) if grad_taus else ops.zeros_like(tau)
    return grad_input, grad_tau


@op(grad=_householder_grad, meta=rule(_householder_meta), name="linalg_householder_product",
    function="householder_product", namespace="tensormodes.linalg",
    errors=(Sample((TensorSpec((3,)), TensorSpec((2,)))), Sample((TensorSpec((2, 3)), TensorSpec((2,)))),
            Sample((TensorSpec((4, 3)), TensorSpec((4,)))), Sample((TensorSpec((4, 3)), TensorSpec((1, 2)))),
            Sample((TensorSpec((4, 3)), TensorSpec((2,), "float64"))),
            Sample((TensorSpec((4, 3), "int64"), TensorSpec((2,), "int64")))),
    samples=(Sample((TensorSpec((4, 3), "float64"), TensorSpec((2,), "float64"))),
             Sample((TensorSpec((3, 3)), TensorSpec((3,)))),
             Sample((TensorSpec((2, 4, 2), "float64"), TensorSpec((2, 2), "float64"))),
             Sample((TensorSpec((3, 2), "complex128"), TensorSpec((2,), "complex128"))),
             Sample((TensorSpec((3, 0)), TensorSpec((0,))))),
    schema={"input": "Tensor input"})
def linalg_householder_product(input: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of the product ``H_1 ... H_k`` of Householder reflections
    ``H_i = I - tau_i v_i v_i^H``, where ``v_i`` is column ``i`` of ``input`` (m x n, m >= n) below
    the diagonal with a 1 on it, and ``k`` the length of ``tau`` (LAPACK's ``orgqr``).

    >>> import tensormodes as tm
    >>> tm.linalg.householder_product(tm.tensor([[1.0], [0.0]]), tm.tensor([2.0]))
    tensor([[-1.],
            [ 0.]])
    """
    _check_householder(input, tau)
    *batch, m, n = input.shape
    count = tau.shape[-1]
    vectors = _reflectors(input, count)
    product = np.broadcast_to(np.eye(m, dtype=input.dtype), (*batch, m, m)).copy()
    for i in range(count):
        v = vectors[..., :, i:i + 1]
        product = product - (product @ v) * tau[..., i, None, None] @ adjoint_array(v)
    return np.ascontiguousarray(product[..., :n], dtype=input.dtype)


# -- geqrf, orgqr, ormqr: the QR decomposition as LAPACK keeps it -------------------------------------

def _geqrf_grad(grad):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


_geqrf_grad.no_derivative = True  # (gradient checks skip it)


def _geqrf_meta(input):
    _check_geqrf(input)
    *batch, m, n = input.shape
    return RETURN_TYPES["geqrf"](MetaArray(input.shape, input.dtype), MetaArray((*batch, min(m, n)), input.dtype))


def _check_geqrf(input) -> None:
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if input.dtype not in _LAPACK_TYPES:
        raise not_implemented("geqrf_cpu", dtype_of(input))


@op(grad=_geqrf_grad, differentiable=no_complex_autograd("geqrf"), meta=rule(_geqrf_meta), method=True, out=True,
    returns=("a", "tau"),
    errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2), "int64"),))),
    samples=(Sample((TensorSpec((4, 3), "float64"),)), Sample((TensorSpec((2, 2, 3)),)),
             Sample((TensorSpec((3, 2), "complex128"),)), Sample((TensorSpec((0, 3)),))))
def geqrf(input: Tensor) -> Tensor:
    """The QR decomposition as LAPACK's ``geqrf`` leaves it: the named tuple ``(a, tau)``, ``R`` on
    and above ``a``'s diagonal, the Householder vectors below it, and their scales ``tau``
    (``linalg.householder_product(a, tau)`` is ``Q``). Not differentiable, as in PyTorch.

    >>> import tensormodes as tm
    >>> a, tau = tm.geqrf(tm.tensor([[3., 1.], [4., 2.]], dtype=tm.float64))
    >>> a[0].tolist(), tau.tolist()
    ([-5.0, -2.2], [1.6, 0.0])
    """
    _check_geqrf(input)
    *batch, m, n = input.shape
    if input.size == 0:
        return RETURN_TYPES["geqrf"](np.empty(input.shape, input.dtype), np.zeros((*batch, min(m, n)), input.dtype))
    packed, tau = np.linalg.qr(input, mode="raw")  # (NumPy's is LAPACK's, transposed)
    return RETURN_TYPES["geqrf"](np.ascontiguousarray(np.swapaxes(packed, -2, -1), dtype=input.dtype),
                                 np.asarray(tau, dtype=input.dtype))


orgqr = alias("orgqr", of="linalg_householder_product", method=True, namespace="tensormodes",
              renames={"tau": "input2"},
              samples=(Sample((TensorSpec((4, 3), "float64"), TensorSpec((2,), "float64"))),),
              doc="""``linalg.householder_product`` under LAPACK's name (``Q`` from ``geqrf``'s result).

    >>> import tensormodes as tm
    >>> tm.orgqr(*tm.geqrf(tm.tensor([[3., 1.], [4., 2.]], dtype=tm.float64))).tolist()
    [[-0.6000000000000001, -0.8], [-0.8, 0.6]]
    """)


def _check_ormqr(input, input2, input3, left, transpose) -> None:
    name = "torch.ormqr"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input3.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    if input3.ndim != input.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {input3.ndim} and input.ndim is equal to {input.ndim}")
    side = -2 if left else -1
    if input3.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if input2.ndim == 0:  # PyTorch reads tau.size(-1) here
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input2.shape[-1] != min(input3.shape[side], input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])")
    if input2.ndim != input.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{input2.ndim} and input.ndim is equal to {input.ndim}")
    if tuple(input2.shape[:-1]) != tuple(input.shape[:-2]) or tuple(input3.shape[:-2]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau and other to be equal to input.shape[:-2], "
                           f"but got {list(input2.shape[:-1])} and {list(input3.shape[:-2])}")
    for other_name, other in (("tau", input2), ("other", input3)):
        if other.dtype != input.dtype:
            raise RuntimeError(f"{name}: Expected input and {other_name} to have the same dtype, but input has "
                               f"dtype{scalar_type_name(dtype_of(input))} and {other_name} has dtype "
                               f"{scalar_type_name(dtype_of(other))}")
    if input.dtype not in _LAPACK_TYPES:
        raise not_implemented("ormqr_cpu", dtype_of(input))


def _full_reflectors(input, count: int):
    """``input``'s first ``count`` columns (the reflectors) padded with zero columns to square."""
    m = input.shape[-2]
    return ops.cat([input[..., :count], input.new_zeros((*input.shape[:-1], m - count))], -1)


def _ormqr_grad(grad, input, input2, input3, left, transpose, needs_input_grad):
    # Q = householder_product of the reflectors (square): the product's gradient, then
    # householder_product's own for the reflectors and tau.
    count = input2.shape[-1]
    reflectors = _full_reflectors(input, count)
    q = ops.linalg.householder_product(reflectors, input2)
    applied = adjoint(q) if transpose else q
    grad_other = adjoint(applied) @ grad if left else grad @ adjoint(applied)
    grad_input = grad_tau = None
    if needs_input_grad[0] or needs_input_grad[1]:
        grad_applied = grad @ adjoint(input3) if left else adjoint(input3) @ grad
        grad_q = adjoint(grad_applied) if transpose else grad_applied
        grad_reflectors, grad_tau = _householder_grad(grad_q, reflectors, input2, (True, True))
        n = input.shape[-1]
        grad_input = ops.cat([grad_reflectors[..., :count], input.new_zeros((*input.shape[:-1], n - count))], -1)
    return grad_input, grad_tau, (grad_other if needs_input_grad[2] else None)


def _ormqr_meta(input, input2, input3, left=True, transpose=False):
    _check_ormqr(input, input2, input3, left, transpose)
    return MetaArray(input3.shape, input3.dtype)


@op(grad=_ormqr_grad, meta=rule(_ormqr_meta), method=True, out=True,
    errors=(Sample((TensorSpec((3, 2)), TensorSpec((2,)), TensorSpec((2, 2)))),
            Sample((TensorSpec((3, 2)), TensorSpec((2,), "float64"), TensorSpec((3, 2))))),
    samples=(Sample((TensorSpec((3, 2), "float64"), TensorSpec((2,), "float64"), TensorSpec((3, 2), "float64"))),
             Sample((TensorSpec((3, 2), "float64"), TensorSpec((2,), "float64"), TensorSpec((2, 3), "float64")),
                    {"left": False, "transpose": True}),
             Sample((TensorSpec((2, 4, 3)), TensorSpec((2, 3)), TensorSpec((2, 4, 1))), {"transpose": True}),
             Sample((TensorSpec((3, 3), "complex128"), TensorSpec((3,), "complex128"),
                     TensorSpec((3, 2), "complex128")))))
def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
    """The product of ``Q`` (the Householder reflections of ``input`` and ``input2``, ``geqrf``'s
    ``(a, tau)``, as ``orgqr`` builds it, square) with ``input3``: ``Q @ input3`` (``input3 @ Q``
    if ``left=False``; ``Q.mH`` for ``Q`` if ``transpose``), as LAPACK's ``ormqr``.

    >>> import tensormodes as tm
    >>> a, tau = tm.geqrf(tm.tensor([[3., 1.], [4., 2.]], dtype=tm.float64))
    >>> tm.ormqr(a, tau, tm.eye(2, dtype=tm.float64), transpose=True).tolist()
    [[-0.6000000000000001, -0.8], [-0.8, 0.6]]
    """
    _check_ormqr(input, input2, input3, left, transpose)
    if input3.size == 0:
        return np.zeros(input3.shape, input3.dtype)
    count = input2.shape[-1]
    *batch, m, _ = input.shape
    padded = np.concatenate([input[..., :count], np.zeros((*batch, m, m - count), input.dtype)], -1)
    q = linalg_householder_product(padded, input2)
    applied = adjoint_array(q) if transpose else q
    return np.ascontiguousarray(applied @ input3 if left else input3 @ applied, dtype=input3.dtype)
