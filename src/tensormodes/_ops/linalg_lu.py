"""Triangular solves and the LU factorisation, in ``tensormodes.linalg``: ``solve_triangular``,
``lu_factor_ex`` (with its checking composite ``lu_factor``), ``lu``, ``lu_solve``, ``solve_ex`` and
``inv_ex``; with PyTorch's older top-level names ``triangular_solve``, ``lu`` (``torch.lu``),
``lu_solve`` and ``lu_unpack``.

NumPy has no LU with pivots, so it is computed here: LAPACK's partial pivoting (each column's
pivot is its first entry of largest ``|re| + |im|``, as BLAS's ``i?amax``), right-looking, in the
input's dtype; pivots are LAPACK's 1-based row interchanges, int32. A zero pivot is recorded in
``info`` (its 1-based column) and the factorisation goes on, as LAPACK's ``getrf``. Triangular
systems are solved by substitution, row by row over the whole batch: a zero on the diagonal
gives infinities or NaN, never an error (BLAS's ``trsm``).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._meta_array import MetaArray
from .common import (
    HALF_TYPES,
    adjoint,
    check_same_shape_or_broadcast,
    dtype_of,
    not_implemented,
    ops,
    output_differentiability,
    quiet,
    scalar_type_name,
)
from .common import adjoint as _mH  # (for formulas whose `adjoint` is a parameter)
from .linalg import (
    LinAlgError,
    _batch_prefix,
    _check_bool_argument,
    _floating_check,
    _inv_grad,
    _low_precision_check,
    _solve_checks,
    _solve_grad,
    _square_checks,
)
from .linalg import inv as linalg_inv
from .linalg import solve as linalg_solve
from .meta_rules import rule
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, _return_type, op

# -- kernels on arrays ------------------------------------------------------------------------------


def _substitute(a: np.ndarray, b: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    """``X`` with ``A @ X = B`` for triangular ``A`` (``(..., n, n)``, read only in its ``lower`` or
    upper triangle; a ``unit`` diagonal is taken as ones), ``B`` of shape ``(..., n, k)``,
    batches already broadcast: forward or back substitution, one row of ``X`` at a time."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], a.dtype)
    rows = range(n) if lower else range(n - 1, -1, -1)
    with quiet():  # a zero diagonal gives inf / NaN, as BLAS's trsm
        for i in rows:
            known = slice(0, i) if lower else slice(i + 1, n)
            row = b[..., i, :] - (a[..., i:i + 1, known] @ x[..., known, :])[..., 0, :]
            x[..., i, :] = row if unit else row / a[..., i, i, None]
    return x


def _solve_triangular_array(A: np.ndarray, B: np.ndarray, upper: bool, left: bool, unit: bool) -> np.ndarray:
    if not left:  # X A = B  <=>  A^T X^T = B^T, whose triangle is the other one
        transposed = _substitute(np.swapaxes(A, -2, -1), np.swapaxes(B, -2, -1), upper, unit)
        return np.ascontiguousarray(np.swapaxes(transposed, -2, -1))
    return _substitute(A, B, not upper, unit)


def _lu_arrays(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's ``getrf`` of each matrix of ``A`` (any ``m x n``): the packed factors (``L``'s unit
    diagonal not stored), the 1-based int32 pivots (``min(m, n)`` of them) and ``info``, the
    1-based column of the first zero pivot or 0."""
    *batch, m, n = A.shape
    k = min(m, n)
    lu = np.array(A, dtype=A.dtype).reshape(int(np.prod(batch)), m, n)
    pivots = np.zeros((lu.shape[0], k), np.int32)
    info = np.zeros(lu.shape[0], np.int32)
    every = np.arange(lu.shape[0])
    with quiet():
        for j in range(k):
            column = lu[:, j:, j]
            sizes = np.abs(column.real) + np.abs(column.imag) if lu.dtype.kind == "c" else np.abs(column)
            pivot = j + blas_amax(sizes)
            pivots[:, j] = pivot + 1
            swapped = lu[every, pivot].copy()
            lu[every, pivot] = lu[:, j]
            lu[:, j] = swapped
            diagonal = lu[:, j, j]
            zero = diagonal == 0
            info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
            # (a zero pivot leaves its column unscaled: below it all is zero already)
            lu[:, j + 1:, j] /= np.where(zero, 1, diagonal)[:, None]
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(A.shape), pivots.reshape(*batch, k), info.reshape(batch)


def blas_amax(sizes: np.ndarray) -> np.ndarray:
    """BLAS's ``i?amax`` along the last axis: the first largest entry, where a NaN is never larger
    (only a leading NaN is picked, as nothing then compares larger than it)."""
    nan = np.isnan(sizes)
    if not nan.any():
        return np.argmax(sizes, axis=-1)
    best = np.argmax(np.where(nan, -np.inf, sizes), axis=-1)
    return np.where(nan[..., 0], 0, best)


def _permutation(pivots: np.ndarray, m: int) -> np.ndarray:
    """The row order ``order`` with ``A[order] = L @ U`` from LAPACK's 1-based interchanges."""
    order = np.broadcast_to(np.arange(m), (*pivots.shape[:-1], m)).copy()
    count = int(np.prod(pivots.shape[:-1]))
    flat, swaps = order.reshape(count, m), pivots.reshape(count, pivots.shape[-1]).astype(np.int64) - 1
    every = np.arange(flat.shape[0])
    for j in range(swaps.shape[-1]):
        other = flat[every, swaps[:, j]].copy()
        flat[every, swaps[:, j]] = flat[:, j]
        flat[:, j] = other
    return flat.reshape(order.shape)


def _unpack_arrays(LU: np.ndarray, pivots: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """``(P, L, U)`` of packed factors (``P`` None without pivots)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    lower = np.tril(LU[..., :, :k], -1)
    lower[..., np.arange(k), np.arange(k)] = 1
    upper = np.triu(LU[..., :k, :])
    if pivots is None:
        return None, lower, upper
    order = _permutation(pivots, m)
    P = np.zeros((*order.shape, m), LU.dtype)
    np.put_along_axis(P, order[..., :, None], 1, axis=-1)
    return np.ascontiguousarray(np.swapaxes(P, -2, -1)), lower, upper  # P[order[j], j] = 1


def _conj_t(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -2, -1).conj()


def _lu_solve_array(LU: np.ndarray, pivots: np.ndarray, B: np.ndarray, left: bool, adjoint_: bool) -> np.ndarray:
    """``X`` with ``op(A) X = B`` (``X op(A) = B`` unless ``left``), ``A = P L U`` from its packed
    factors, ``op`` the conjugate transpose when ``adjoint_``; batches already broadcast."""
    P, L, U = _unpack_arrays(LU, pivots)
    if not left:  # X op(A) = B  <=>  op(A)^H X^H = B^H
        return np.ascontiguousarray(_conj_t(_lu_solve_array(LU, pivots, _conj_t(B), True, not adjoint_)))
    if not adjoint_:  # P L U X = B
        y = _substitute(L, np.swapaxes(P, -2, -1) @ B, True, True)
        return _substitute(U, y, False, False)
    # U^H L^H P^T X = B
    y = _substitute(_conj_t(U), B, True, False)
    return P @ _substitute(_conj_t(L), y, False, True)


# -- checks -----------------------------------------------------------------------------------------

def _lapack_dtype_check(kernel: str, A: np.ndarray) -> None:
    if A.dtype.kind not in "fc" or A.dtype in HALF_TYPES:
        raise not_implemented(kernel, dtype_of(A))


def _solve_triangular_checks(A, B, upper, left, unitriangular) -> tuple[int, ...]:
    for argument, value in (("upper", upper), ("left", left), ("unitriangular", unitriangular)):
        _check_bool_argument("linalg_solve_triangular", argument, value)
    name = "linalg.solve_triangular"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    _square_checks(name, A)
    n = A.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    _lapack_dtype_check("triangular_solve_cpu", A)
    return tuple(check_same_shape_or_broadcast(A.shape[:-2], B.shape[:-2])) + B.shape[-2:]


# -- solve_triangular -------------------------------------------------------------------------------

_MIXED_GRADIENT = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be "
                   "true, but got false.  (Could this error message be improved?  If so, please report an enhancement "
                   "request to PyTorch.)")


def _solve_triangular_grad(grad, input, result, upper, left, unitriangular, B_dtype, needs_input_grad):
    if needs_input_grad[1] and result.is_complex() and not B_dtype.is_complex:
        raise RuntimeError(_MIXED_GRADIENT)  # (a real B, a complex A: PyTorch's engine refuses B's gradient)
    # PyTorch's: B's gradient solves the adjoint system; A's is the outer product, kept in A's triangle.
    grad_b = ops.linalg.solve_triangular(adjoint(input), grad, upper=not upper, left=left, unitriangular=unitriangular)
    grad_a = None
    if needs_input_grad[0]:
        grad_a = -(grad_b @ adjoint(result) if left else adjoint(result) @ grad_b)
        offset = 1 if unitriangular else 0
        grad_a = grad_a.triu(offset) if upper else grad_a.tril(-offset)
    return grad_a, (grad_b if needs_input_grad[1] else None)


def _solve_triangular_meta(input, B, *, upper, left=True, unitriangular=False):
    return MetaArray(_solve_triangular_checks(input, B, upper, left, unitriangular), input.dtype)


@op(grad=_solve_triangular_grad, meta=rule(_solve_triangular_meta), name="linalg_solve_triangular",
    function="solve_triangular", namespace="tensormodes.linalg", out=True,
    errors=(Sample((TensorSpec((3,)), TensorSpec((3, 2))), {"upper": True}),
            Sample((TensorSpec((3, 3)), TensorSpec((2, 2))), {"upper": False})),
    samples=(Sample((TensorSpec((3, 3), "float32", 1, 2), TensorSpec((3, 2))), {"upper": True}),
             Sample((TensorSpec((2, 3, 3), "float64", 1, 2), TensorSpec((3, 1), "float64")), {"upper": False}),
             Sample((TensorSpec((3, 3), "float64", 1, 2), TensorSpec((2, 3), "float64")),
                    {"upper": True, "left": False, "unitriangular": True}),
             Sample((TensorSpec((2, 2), "complex64", 1, 2), TensorSpec((2, 2), "complex64")),
                    {"upper": False, "left": False}),
             Sample((TensorSpec((0, 0)), TensorSpec((0, 2))), {"upper": True})))
def solve_triangular(input: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` if ``left=False``) for a triangular ``A``:
    only its upper (``upper=True``) or lower triangle is read, and with ``unitriangular`` its
    diagonal is taken as ones. Batches broadcast; a zero on the diagonal gives infinities or NaN
    (no error), as in PyTorch. The result has ``A``'s dtype.

    >>> import tensormodes as tm
    >>> tm.linalg.solve_triangular(tm.tensor([[2., 1.], [0., 4.]]), tm.tensor([[4.], [8.]]), upper=True)
    tensor([[1.],
            [2.]])
    """
    A = input  # (PyTorch's binding names it input; its documentation, A)
    shape = _solve_triangular_checks(A, B, upper, left, unitriangular)
    if 0 in shape or A.size == 0:
        return np.zeros(shape, A.dtype)
    b = B.astype(A.dtype) if B.dtype.kind != "c" or A.dtype.kind == "c" else B.real.astype(A.dtype)
    return _solve_triangular_array(A, b, bool(upper), bool(left), bool(unitriangular))


def _triangular_solve_grad(grad, A, result, upper, transpose, unitriangular, needs_input_grad):
    grad_x, grad_m = grad
    solution = result[0]
    op_a = A.mT if transpose else A
    upper_op = upper != transpose
    grad_b = ops.linalg.solve_triangular(adjoint(op_a), grad_x, upper=not upper_op, unitriangular=unitriangular)
    grad_a = None
    if needs_input_grad[1]:
        grad_op = -(grad_b @ adjoint(solution))
        grad_a = grad_op.mT if transpose else grad_op
        offset = 1 if unitriangular else 0
        grad_a = (grad_a.triu(offset) if upper else grad_a.tril(-offset)) + grad_m
    return (grad_b if needs_input_grad[0] else None), grad_a


def _triangular_solve_meta(input, A, upper=True, transpose=False, unitriangular=False):
    if input.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {input.ndim} "
                           "dimensions instead")
    if A.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {A.ndim} "
                           "dimensions instead")
    if input.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(dtype_of(input))} and A of type {scalar_type_name(dtype_of(A))} "
                           "instead.")
    _solve_triangular_checks(A, input, upper, True, unitriangular)
    batch = tuple(check_same_shape_or_broadcast(A.shape[:-2], input.shape[:-2]))
    return RETURN_TYPES["triangular_solve"](MetaArray(batch + input.shape[-2:], A.dtype),
                                            MetaArray(batch + A.shape[-2:], A.dtype))


@op(grad=_triangular_solve_grad, meta=rule(_triangular_solve_meta), method=True, returns=("solution",
    "cloned_coefficient"), errors=(Sample((TensorSpec((3,)), TensorSpec((3, 3)))),),
    samples=(Sample((TensorSpec((3, 2)), TensorSpec((3, 3), "float32", 1, 2))),
             Sample((TensorSpec((2, 3, 1), "float64"), TensorSpec((3, 3), "float64", 1, 2)), {"upper": False}),
             Sample((TensorSpec((3, 2), "float64"), TensorSpec((3, 3), "float64", 1, 2), True, True, True))))
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Tensor:
    """PyTorch's older triangular solver (arguments reversed): the solution ``X`` of
    ``op(A) @ X = input`` (``op`` transposes when ``transpose``), with a copy of ``A``, as the
    named tuple ``(solution, cloned_coefficient)``. Use ``linalg.solve_triangular``.

    >>> import tensormodes as tm
    >>> tm.triangular_solve(tm.tensor([[4.], [8.]]), tm.tensor([[2., 1.], [0., 4.]])).solution
    tensor([[1.],
            [2.]])
    """
    warn_once("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed "
               "in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does "
               "not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be "
               "replaced with\nX = torch.linalg.solve_triangular(A, B).")
    solution_meta, clone_meta = _triangular_solve_meta(input, A, upper, transpose, unitriangular)
    a = np.swapaxes(A, -2, -1) if transpose else A
    solution = np.zeros(solution_meta.shape, A.dtype)
    if solution.size and A.size:
        solution = _solve_triangular_array(a, input.astype(A.dtype), bool(upper != transpose), True,
                                           bool(unitriangular))
    clone = np.broadcast_to(A, clone_meta.shape).copy()
    return RETURN_TYPES["triangular_solve"](solution, clone)


_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """PyTorch's ``TORCH_WARN_ONCE``: the first call in the process warns."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)


# -- the LU factorisation ---------------------------------------------------------------------------

def _lu_factor_checks(name: str, A, pivot) -> None:
    """The checks of the LU factorisations; ``name`` the one PyTorch's rank message gives
    (``torch.lu_factor`` for all but ``linalg.lu``)."""
    _check_bool_argument(f"linalg_{name.rsplit('.', 1)[-1]}", "pivot", pivot)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_backward(grad_l, grad_u, P, L, U):
    """PyTorch's ``linalg_lu_backward``: the gradient of ``A = P L U`` from those of ``L`` (strictly
    lower) and ``U`` (upper), for square, wide and tall ``A``."""
    solve = ops.linalg.solve_triangular
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        inner = (adjoint(L) @ grad_l).tril(-1) + (grad_u @ adjoint(U)).triu()
        inner = solve(adjoint(U), inner, upper=False, left=False)
        return P @ solve(adjoint(L), inner, upper=True, unitriangular=True)
    if m < n:  # wide: U = [U1 U2], U1 square
        u1 = U[..., :k]
        inner = (adjoint(L) @ grad_l - grad_u.triu() @ adjoint(U)).tril(-1)
        inner = solve(adjoint(u1), inner, upper=False, left=False)
        inner = ops.cat([inner + grad_u[..., :k].triu(), grad_u[..., k:]], -1)
        return P @ solve(adjoint(L), inner, upper=True, unitriangular=True)
    l1 = L[..., :k, :]  # tall: L = [L1; L2], L1 square
    inner = (grad_u @ adjoint(U) - adjoint(L) @ grad_l.tril(-1)).triu()
    inner = solve(adjoint(l1), inner, upper=True, unitriangular=True)
    inner = ops.cat([inner + grad_l[..., :k, :].tril(-1), grad_l[..., k:, :]], -2)
    return P @ solve(adjoint(U), inner, upper=False, left=False)


@output_differentiability(True, False, False)
def _lu_factor_ex_grad(grad, result):
    LU, pivots = result[0], result[1]
    P, L, U = ops.lu_unpack(LU, pivots)
    k = min(LU.shape[-2], LU.shape[-1])
    grad_lu = grad[0]
    return _lu_backward(grad_lu[..., :, :k].tril(-1), grad_lu[..., :k, :].triu(), P, L, U)


def _lu_factor_ex_meta(A, *, pivot=True, check_errors=False):
    _lu_factor_checks("torch.lu_factor", A, pivot)
    _lapack_dtype_check("lu_cpu", A)
    *batch, m, n = A.shape
    return RETURN_TYPES["linalg_lu_factor_ex"](MetaArray(A.shape, A.dtype),
                                               MetaArray((*batch, min(m, n)), np.dtype(np.int32)),
                                               MetaArray(tuple(batch), np.dtype(np.int32)))


def _lu_error(name: str, batch: tuple, info: np.ndarray) -> RuntimeError:
    flat = info.reshape(-1)
    index = int(np.flatnonzero(flat)[0])
    column = int(flat[index])  # (LAPACK's 1-based info, as PyTorch prints it)
    return RuntimeError(f"torch.{name}: {_batch_prefix(batch, index)}U[{column},{column}] is zero and using it on "
                        "lu_solve would result in a division by zero. If you still want to perform the "
                        "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


@op(grad=_lu_factor_ex_grad, meta=rule(_lu_factor_ex_meta), name="linalg_lu_factor_ex", function="lu_factor_ex",
    namespace="tensormodes.linalg", out=True, returns=("LU", "pivots", "info"),
    errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 2), "int64"),))),
    samples=(Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 3, 3), "float64"),)),
             Sample((TensorSpec((2, 4), "float64"),)), Sample((TensorSpec((4, 2)),)),
             Sample((TensorSpec((2, 2), "complex128"),)), Sample((TensorSpec((0, 3)),))))
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Tensor:
    """The LU factorisation with partial pivoting ``A = P @ L @ U`` of a matrix (or of each in a
    batch, any ``m x n``), packed as LAPACK's: the named tuple ``(LU, pivots, info)``, ``LU``
    holding ``U`` and ``L`` below the diagonal (``L``'s unit diagonal not stored), ``pivots``
    LAPACK's 1-based int32 row interchanges, ``info`` the 1-based column of the first zero pivot
    (0 if none). A singular matrix still factors; ``check_errors`` raises for it instead.

    >>> import tensormodes as tm
    >>> LU, pivots, info = tm.linalg.lu_factor_ex(tm.tensor([[1., 2.], [3., 4.]]))
    >>> LU.tolist(), pivots.tolist(), info.item()
    ([[3.0, 4.0], [0.3333333432674408, 0.6666666269302368]], [2, 2], 0)
    """
    _lu_factor_checks("torch.lu_factor", A, pivot)
    if A.size:  # (PyTorch's kernel dispatches on the dtype only with data)
        _lapack_dtype_check("lu_cpu", A)
    _check_bool_argument("linalg_lu_factor_ex", "check_errors", check_errors)
    lu, pivots, info = _lu_arrays(A)
    if check_errors and info.any():
        raise _lu_error("linalg.lu_factor_ex", A.shape[:-2], info)
    return RETURN_TYPES["linalg_lu_factor_ex"](lu, pivots, np.asarray(info, np.int32))


def reported_errors(info) -> np.ndarray | None:
    """The values of an ``info`` tensor to check (PyTorch's ``_linalg_check_errors``, read without
    an op), or None for a tensor without data (fake or meta), where PyTorch's check does nothing."""
    data = info._data
    return data if isinstance(data, np.ndarray) and data.any() else None


def _lu_factor_decomposition(A, pivot=True):
    """PyTorch's composite: ``linalg_lu_factor_ex``, then its check of ``info`` (read without an op)."""
    LU, pivots, info = ops.linalg.lu_factor_ex(A, pivot=pivot)
    errors = reported_errors(info)
    if errors is not None:
        raise _lu_error("linalg.lu_factor", tuple(A.shape[:-2]), errors)
    return RETURN_TYPES["linalg_lu_factor"](LU, pivots)


@output_differentiability(True, False)
def _lu_factor_grad(grad, result):
    return _lu_factor_ex_grad((grad[0], None, None), result)


def _lu_factor_meta(A, *, pivot=True):
    _lu_factor_checks("torch.lu_factor", A, pivot)
    return RETURN_TYPES["linalg_lu_factor"](*_lu_factor_ex_meta(A, pivot=pivot)[:2])


@op(grad=_lu_factor_grad, meta=rule(_lu_factor_meta), name="linalg_lu_factor", function="lu_factor",
    namespace="tensormodes.linalg", out=True, returns=("LU", "pivots"),
    decompose=_lu_factor_decomposition, node="linalg_lu_factor_ex",
    errors=(Sample((TensorSpec((3,)),)),),
    samples=(Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 3), "float64"),)),
             Sample((TensorSpec((2, 2), "complex64"),))))
def lu_factor(A: Tensor, *, pivot: bool = True) -> Tensor:
    """``lu_factor_ex`` without ``info``: the named tuple ``(LU, pivots)``; a singular matrix
    (a zero pivot) raises, as in PyTorch.

    >>> import tensormodes as tm
    >>> tm.linalg.lu_factor(tm.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=tensormodes.int32)
    """
    _lu_factor_checks("torch.lu_factor", A, pivot)
    if A.size:
        _lapack_dtype_check("lu_cpu", A)
    lu, pivots, info = _lu_arrays(A)
    if info.any():
        raise _lu_error("linalg.lu_factor", A.shape[:-2], info)
    return RETURN_TYPES["linalg_lu_factor"](lu, pivots)


def _linalg_lu_grad(grad, result):
    P, L, U = result
    return _lu_backward(grad[1].tril(-1), grad[2].triu(), P, L, U)


def _linalg_lu_meta(A, *, pivot=True):
    _lu_factor_checks("linalg.lu", A, pivot)
    _lapack_dtype_check("lu_cpu", A)
    *batch, m, n = A.shape
    k = min(m, n)
    return RETURN_TYPES["linalg_lu"](MetaArray((*batch, m, m), A.dtype), MetaArray((*batch, m, k), A.dtype),
                                     MetaArray((*batch, k, n), A.dtype))


@op(grad=output_differentiability(False, True, True)(_linalg_lu_grad), meta=rule(_linalg_lu_meta), name="linalg_lu",
    function="lu", namespace="tensormodes.linalg", out=True, returns=("P", "L", "U"),
    errors=(Sample((TensorSpec((3,)),)),),
    samples=(Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 3), "float64"),)),
             Sample((TensorSpec((3, 2), "float64"),)), Sample((TensorSpec((2, 2), "complex64"),)),
             Sample((TensorSpec((0, 2, 2)),))))
def lu(A: Tensor, *, pivot: bool = True) -> Tensor:
    """The LU factorisation with partial pivoting of a matrix (or of each in a batch), unpacked:
    the named tuple ``(P, L, U)`` with ``A = P @ L @ U``, ``P`` a permutation matrix, ``L``
    ``m x k`` unit lower triangular, ``U`` ``k x n`` upper triangular (``k = min(m, n)``).

    >>> import tensormodes as tm
    >>> P, L, U = tm.linalg.lu(tm.tensor([[0., 1.], [2., 3.]]))
    >>> P.tolist(), L.tolist(), U.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0, 3.0], [0.0, 1.0]])
    """
    _lu_factor_checks("linalg.lu", A, pivot)
    if A.size:
        _lapack_dtype_check("lu_cpu", A)
    lu_, pivots, _ = _lu_arrays(A)
    return RETURN_TYPES["linalg_lu"](*_unpack_arrays(lu_, pivots))


# -- unpacking and solving with packed factors ------------------------------------------------------

def _lu_unpack_checks(LU, pivots, unpack_data, unpack_pivots) -> None:
    if LU.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(LU.shape)} "
                           "instead")
    if unpack_pivots and pivots.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")


def _unpacked_pivots(LU: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """The ``min(m, n)`` interchanges ``lu_unpack`` applies, for each matrix of ``LU``: PyTorch reads
    the first ``min(m, n)`` pivots (more are ignored; fewer, or one out of ``1..m``, raise)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    used = pivots[..., :k] if pivots.ndim else pivots.reshape(1)[:0]
    if used.shape[-1] != k or (used.size and (used.min() < 1 or used.max() > m)):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly "
                           "pass the result of lu_factor?")
    target = LU.shape[:-2] + (k,)
    try:
        return np.broadcast_to(used, target)
    except ValueError:  # (a batch of pivots laid out otherwise, with as many of them)
        return used.reshape(target)


def _lu_unpack_grad(grad, LU_data_shape, unpack_data):
    _, grad_l, grad_u = grad
    if not unpack_data:
        return None
    m, n = LU_data_shape[-2], LU_data_shape[-1]
    k = min(m, n)
    if m == n:
        return grad_l.tril(-1) + grad_u.triu()
    if m < n:
        return ops.cat([grad_l.tril(-1), ops.zeros_like(grad_u[..., k:])], -1) + grad_u.triu()
    return ops.cat([grad_u.triu(), ops.zeros_like(grad_l[..., k:, :])], -2) + grad_l.tril(-1)


def _lu_unpack_meta(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    _lu_unpack_checks(LU_data, LU_pivots, unpack_data, unpack_pivots)
    *batch, m, n = LU_data.shape
    k = min(m, n)
    empty = MetaArray((0,), LU_data.dtype)
    return RETURN_TYPES["lu_unpack"](MetaArray((*batch, m, m), LU_data.dtype) if unpack_pivots else empty,
                                     MetaArray((*batch, m, k), LU_data.dtype) if unpack_data else empty,
                                     MetaArray((*batch, k, n), LU_data.dtype) if unpack_data else empty)


@op(grad=output_differentiability(False, True, True)(_lu_unpack_grad), meta=rule(_lu_unpack_meta), out=True,
    returns=("P", "L", "U"), errors=(Sample((TensorSpec((3,)), TensorSpec((3,), "int32"))),),
    samples=(Sample((TensorSpec((3, 3)), TensorSpec((3,), "int32", 1, 3))),
             Sample((TensorSpec((2, 2, 3), "float64"), TensorSpec((2, 2), "int32", 1, 2))),
             Sample((TensorSpec((3, 2)), TensorSpec((2,), "int32", 1, 3))),
             Sample((TensorSpec((2, 2), "complex64"), TensorSpec((2,), "int32", 1, 2)), {"unpack_pivots": False})))
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> Tensor:
    """The factors of ``lu_factor``'s packed result: the named tuple ``(P, L, U)`` with
    ``A = P @ L @ U``. ``unpack_data=False`` leaves ``L`` and ``U`` empty, ``unpack_pivots=False``
    leaves ``P`` empty.

    >>> import tensormodes as tm
    >>> LU, pivots = tm.linalg.lu_factor(tm.tensor([[0., 1.], [2., 3.]]))
    >>> tm.lu_unpack(LU, pivots).P.tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    _lu_unpack_checks(LU_data, LU_pivots, unpack_data, unpack_pivots)
    pivots = _unpacked_pivots(LU_data, LU_pivots) if unpack_pivots else None
    P, L, U = _unpack_arrays(LU_data, pivots)
    empty = np.empty((0,), LU_data.dtype)
    if not unpack_data:
        L = U = empty
    return RETURN_TYPES["lu_unpack"](empty if P is None else P, L, U)


def _lu_solve_checks(LU, pivots, B, left, adjoint_, name="linalg.lu_solve") -> tuple[int, ...]:
    if LU.ndim < 2:
        raise RuntimeError(f"torch.{name}: The input tensor A must have at least 2 dimensions.")
    _square_checks(f"torch.{name}", LU)
    _floating_check(f"torch.{name}", LU)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of type "
                           f"{scalar_type_name(dtype_of(LU))} and B of type {scalar_type_name(dtype_of(B))} instead")
    if pivots.dtype != np.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    if pivots.ndim == 0:  # PyTorch reads pivots.size(-1) here
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if pivots.shape[-1:] != (n,):
        raise RuntimeError(f"{name}: Number of pivots per batch should be same as the dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape "
                           f"{list(pivots.shape)} instead")
    _lapack_dtype_check("linalg_lu_solve", LU)
    batch = check_same_shape_or_broadcast(LU.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    return tuple(batch) + B.shape[-2:]


def _lu_solve_grad(grad, LU, pivots, result, left, adjoint, needs_input_grad):
    # B's gradient solves the adjoint system; A's (A = P L U) is the outer product of it with the
    # solution, carried onto L's strict lower and U's upper triangle: the packed factors' gradient.
    grad_b = ops.linalg.lu_solve(LU, pivots, grad, left=left, adjoint=not adjoint)
    if not needs_input_grad[0]:
        return None, None, grad_b
    x = result
    if left:
        grad_a = -(x @ _mH(grad_b)) if adjoint else -(grad_b @ _mH(x))
    else:
        grad_a = -(_mH(grad_b) @ x) if adjoint else -(_mH(x) @ grad_b)
    P, L, U = ops.lu_unpack(LU, pivots)
    permuted = P.mT @ grad_a
    grad_lu = (permuted @ _mH(U)).tril(-1) + (_mH(L) @ permuted).triu()
    return grad_lu, None, (grad_b if needs_input_grad[2] else None)


def _lu_solve_meta(LU, pivots, B, *, left=True, adjoint=False):
    return MetaArray(_lu_solve_checks(LU, pivots, B, left, adjoint), LU.dtype)


@op(grad=_lu_solve_grad, meta=rule(_lu_solve_meta), name="linalg_lu_solve", function="lu_solve",
    namespace="tensormodes.linalg", out=True,
    errors=(Sample((TensorSpec((3,)), TensorSpec((3,), "int32"), TensorSpec((3, 1)))),),
    samples=(Sample((TensorSpec((3, 3), "float32", 1, 2), TensorSpec((3,), "int32", 3, 3), TensorSpec((3, 2)))),
             Sample((TensorSpec((2, 2, 2), "float64", 1, 2), TensorSpec((2, 2), "int32", 2, 2),
                     TensorSpec((2, 1), "float64")), {"adjoint": True}),
             Sample((TensorSpec((2, 2), "complex128", 1, 2), TensorSpec((2,), "int32", 1, 1),
                     TensorSpec((3, 2), "complex128")), {"left": False})))
def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` if ``left=False``; ``A.mH`` for ``A``
    if ``adjoint``) from ``A``'s packed LU factors (``lu_factor``'s). Batches broadcast.

    >>> import tensormodes as tm
    >>> A = tm.tensor([[0., 1.], [2., 3.]])
    >>> tm.linalg.lu_solve(*tm.linalg.lu_factor(A), tm.tensor([[1.], [5.]]))
    tensor([[1.],
            [1.]])
    """
    shape = _lu_solve_checks(LU, pivots, B, left, adjoint)
    if 0 in shape or LU.size == 0:
        return np.zeros(shape, LU.dtype)
    if pivots.min() < 1 or pivots.max() > LU.shape[-2]:
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly "
                           "pass the result of lu_factor?")
    batch = shape[:-2]
    lu_ = np.broadcast_to(LU, batch + LU.shape[-2:])
    pivots_ = np.broadcast_to(pivots, batch + pivots.shape[-1:])
    return np.asarray(_lu_solve_array(lu_, pivots_, B, bool(left), bool(adjoint)), LU.dtype)


# -- PyTorch's older names --------------------------------------------------------------------------

_LU_WITH_INFO = _return_type("_lu_with_info", ("LU", "pivots", "info"), RETURN_TYPES)
# torch.qr's result (the composite is tensormodes.qr, in _linalg_legacy.py)
LEGACY_QR_RESULT = _return_type("qr", ("Q", "R"), RETURN_TYPES)


def _legacy_lu_decomposition(A, pivot=True, get_infos=False):
    """PyTorch's Python ``torch.lu``: ``linalg_lu_factor_ex``, unchecked."""
    warn_once(_LU_DEPRECATED)
    LU, pivots, info = ops.linalg.lu_factor_ex(A, pivot=pivot)
    return _LU_WITH_INFO(LU, pivots, info) if get_infos else (LU, pivots)


_LU_DEPRECATED = ("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
                  "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
                  "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                  "torch.linalg.lu_factor_ex(A, compute_pivots)")


def _legacy_lu_meta(A, pivot=True, get_infos=False):
    results = _lu_factor_ex_meta(A, pivot=pivot)
    return _LU_WITH_INFO(*results) if get_infos else tuple(results[:2])


@op(grad=_lu_factor_ex_grad, meta=rule(_legacy_lu_meta), name="lu", method=True, node="linalg_lu_factor_ex",
    decompose=_legacy_lu_decomposition, aten="linalg_lu_factor_ex.default", schema={"get_infos": None},
    samples=(Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),), {"get_infos": True})))
def legacy_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> Tensor:
    """PyTorch's older ``torch.lu`` (deprecated: it warns once): ``linalg.lu_factor_ex``'s
    ``(LU, pivots)`` as a tuple, with ``info`` too (a named tuple) if ``get_infos``; a singular
    matrix does not raise.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     LU, pivots = tm.tensor([[1., 2.], [3., 4.]]).lu()
    >>> pivots
    tensor([2, 2], dtype=tensormodes.int32)
    """
    warn_once(_LU_DEPRECATED)
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    return _LU_WITH_INFO(LU, pivots, info) if get_infos else (LU, pivots)


_LU_SOLVE_DEPRECATED = ("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                        "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                        "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, "
                        "B)")


def _legacy_lu_solve_grad(grad, LU_data, LU_pivots, result, needs_input_grad):
    grad_lu, _, grad_b = _lu_solve_grad(grad, LU_data, LU_pivots, result, True, False,
                                        (needs_input_grad[1], False, needs_input_grad[0]))
    return grad_b, grad_lu, None


def _legacy_lu_solve_decomposition(input, LU_data, LU_pivots):
    warn_once(_LU_SOLVE_DEPRECATED)
    return ops.linalg.lu_solve(LU_data, LU_pivots, input)


def _legacy_lu_solve_meta(input, LU_data, LU_pivots):
    return _lu_solve_meta(LU_data, LU_pivots, input)


@op(grad=_legacy_lu_solve_grad, meta=rule(_legacy_lu_solve_meta),
    name="lu_solve", method=True, out=True, node="linalg_lu_solve", decompose=_legacy_lu_solve_decomposition,
    samples=(Sample((TensorSpec((3, 2)), TensorSpec((3, 3), "float32", 1, 2), TensorSpec((3,), "int32", 3, 3))),))
def legacy_lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """PyTorch's older ``torch.lu_solve`` (deprecated: it warns once; arguments reversed):
    ``linalg.lu_solve(LU_data, LU_pivots, input)``.

    >>> import tensormodes as tm, warnings
    >>> LU, pivots = tm.linalg.lu_factor(tm.tensor([[2., 0.], [0., 4.]]))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.lu_solve(tm.tensor([[2.], [4.]]), LU, pivots)
    tensor([[1.],
            [1.]])
    """
    warn_once(_LU_SOLVE_DEPRECATED)
    return linalg_lu_solve(LU_data, LU_pivots, input)


# -- solve and inv that report singular matrices in `info` ------------------------------------------

def _solve_ex_grad(grad, A, result, left, B_shape, needs_input_grad):
    return _solve_grad(grad[0], A, result[0], left, B_shape, needs_input_grad)


def _solve_ex_meta(A, B, *, left=True, check_errors=False):
    vector, batch = _solve_checks(A, B, left)
    shape = batch + ((A.shape[-1],) if vector else B.shape[-2:])
    return RETURN_TYPES["linalg_solve_ex"](MetaArray(shape, A.dtype), MetaArray(batch, np.dtype(np.int32)))


@op(grad=output_differentiability(True, False)(_solve_ex_grad), meta=rule(_solve_ex_meta), name="linalg_solve_ex",
    function="solve_ex", namespace="tensormodes.linalg", out=True, returns=("result", "info"),
    samples=(Sample((TensorSpec((3, 3), "float32", 1, 2), TensorSpec((3,)))),
             Sample((TensorSpec((2, 2, 2), "float64"), TensorSpec((3, 2), "float64")), {"left": False}),
             Sample((TensorSpec((2, 2), "complex64"), TensorSpec((2, 2), "complex64")))))
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Tensor:
    """``linalg.solve`` that reports singular matrices instead of raising (unless
    ``check_errors``): the named tuple ``(result, info)``, ``info`` the 1-based position of a zero
    pivot of ``A``'s LU factorisation, 0 for an invertible matrix; a singular matrix's result
    holds infinities or NaN, as LAPACK's.

    >>> import tensormodes as tm
    >>> tm.linalg.solve_ex(tm.tensor([[0., 0.], [0., 1.]]), tm.tensor([1., 1.])).info
    tensor(1, dtype=tensormodes.int32)
    """
    _check_bool_argument("linalg_solve_ex", "check_errors", check_errors)
    vector, batch = _solve_checks(A, B, left)
    info = np.zeros(batch, np.int32)
    if A.size:
        info = np.broadcast_to(_lu_arrays(A)[2], batch).copy()
    if not info.any():
        return RETURN_TYPES["linalg_solve_ex"](linalg_solve(A, B, left=left), info)
    if check_errors:
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(batch, int(np.flatnonzero(info)[0]))}The solver "
                          "failed because the input matrix is singular.")
    lu_, pivots, _ = _lu_arrays(np.broadcast_to(A, batch + A.shape[-2:]))
    matrix = B[..., None] if vector else B
    matrix = np.broadcast_to(matrix, batch + matrix.shape[-2:])
    x = _lu_solve_array(lu_, pivots, matrix, bool(left), False).astype(A.dtype)
    return RETURN_TYPES["linalg_solve_ex"](x[..., 0] if vector else x, info)


def _inv_ex_grad(grad, result):
    return _inv_grad(grad[0], result[0])


def _inv_ex_meta(A, *, check_errors=False):
    _square_checks("linalg.inv", A)
    _floating_check("linalg.inv", A)
    return RETURN_TYPES["linalg_inv_ex"](MetaArray(A.shape, A.dtype), MetaArray(A.shape[:-2], np.dtype(np.int32)))


@op(grad=output_differentiability(True, False)(_inv_ex_grad), meta=rule(_inv_ex_meta), name="linalg_inv_ex",
    function="inv_ex", namespace="tensormodes.linalg", out=True, returns=("inverse", "info"),
    errors=(Sample((TensorSpec((2, 3)),)),),
    samples=(Sample((TensorSpec((3, 3), "float32", 1, 2),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
             Sample((TensorSpec((2, 2), "complex128"),)), Sample((TensorSpec((0, 2, 2)),))))
def inv_ex(A: Tensor, *, check_errors: bool = False) -> Tensor:
    """``linalg.inv`` that reports singular matrices instead of raising (unless ``check_errors``):
    the named tuple ``(inverse, info)``, ``info`` as ``solve_ex``'s.

    >>> import tensormodes as tm
    >>> tm.linalg.inv_ex(tm.tensor([[2., 0.], [0., 4.]])).inverse
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _check_bool_argument("linalg_inv_ex", "check_errors", check_errors)
    _square_checks("linalg.inv", A)
    _floating_check("linalg.inv", A)
    _low_precision_check("linalg.inv", A)
    info = _lu_arrays(A)[2] if A.size else np.zeros(A.shape[:-2], np.int32)
    if not info.any():
        return RETURN_TYPES["linalg_inv_ex"](linalg_inv(A), info)
    if check_errors:
        index = int(np.flatnonzero(info)[0])
        raise LinAlgError(f"linalg.inv_ex: {_batch_prefix(A.shape[:-2], index)}The diagonal element "
                          f"{int(info.reshape(-1)[index])} is zero, the inversion could not be completed because the "
                          "input matrix is singular.")
    lu_, pivots, _ = _lu_arrays(A)
    identity = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape)
    return RETURN_TYPES["linalg_inv_ex"](_lu_solve_array(lu_, pivots, identity, True, False).astype(A.dtype), info)
