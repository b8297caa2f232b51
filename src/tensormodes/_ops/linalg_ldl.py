"""The LDL factorisation of symmetric (or Hermitian) matrices, in ``tensormodes.linalg``:
``ldl_factor_ex`` (with its checking composite ``ldl_factor``) and ``ldl_solve``.

NumPy has no ``sytrf``, so LAPACK's unblocked Bunch-Kaufman algorithm (``sytf2`` / ``hetf2``, lower
triangle) is written out here: ``A = P L D L^T P^T`` (``L^H`` if Hermitian), ``D`` with 1 x 1 and
2 x 2 diagonal blocks, pivots as LAPACK's (1-based int32; a 2 x 2 block's two pivots both the
negated row it swapped in). ``ldl_solve`` is LAPACK's ``sytrs`` / ``hetrs``. Neither has a
derivative, as in PyTorch.
"""

from __future__ import annotations

import math

import numpy as np

from .._meta_array import MetaArray
from .common import check_same_shape_or_broadcast, dtype_of, no_derivative, not_implemented, ops, scalar_type_name
from .linalg import _floating_check, _square_checks
from .linalg_lu import _lapack_dtype_check, blas_amax, reported_errors
from .meta_rules import rule
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op

_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch and Kaufman's pivot threshold


def _size(value) -> float:
    """BLAS's ``cabs1``: ``|re| + |im|`` (``|x|`` for real numbers)."""
    return abs(value.real) + abs(value.imag) if isinstance(value, complex | np.complexfloating) else abs(value)


def _sizes(values: np.ndarray) -> np.ndarray:
    return np.abs(values.real) + np.abs(values.imag) if values.dtype.kind == "c" else np.abs(values)


def _diagonal_size(value, hermitian: bool) -> float:
    return abs(value.real) if hermitian else _size(value)


def _swap_rows_and_columns(a: np.ndarray, k: int, kk: int, kp: int, kstep: int, hermitian: bool) -> None:
    """``sytf2``'s interchange of rows and columns ``kk`` and ``kp`` of the trailing lower triangle."""
    n = a.shape[0]
    if kp + 1 < n:
        a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    between = a[kk + 1:kp, kk].copy()
    if hermitian:
        a[kk + 1:kp, kk] = a[kp, kk + 1:kp].conj()
        a[kp, kk + 1:kp] = between.conj()
        a[kp, kk] = np.conj(a[kp, kk])
        a[kk, kk], a[kp, kp] = a[kp, kp].real, a[kk, kk].real
    else:
        a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
        a[kp, kk + 1:kp] = between
        a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _ldl_one(a: np.ndarray, hermitian: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """``sytf2`` (``hetf2`` if ``hermitian``), lower, on one matrix: the factors (``a`` overwritten),
    the pivots and ``info``."""
    n = a.shape[0]
    pivots = np.zeros(n, np.int32)
    info = 0
    hermitian = hermitian and a.dtype.kind == "c"
    k = 0
    while k < n:
        kstep = 1
        absakk = _diagonal_size(a[k, k], hermitian)
        if k + 1 < n:
            imax = k + 1 + int(blas_amax(_sizes(a[k + 1:, k])))
            colmax = _size(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if not max(absakk, colmax) > 0:  # a zero column (or NaN): D(k) is zero, nothing to pivot
            info = info or k + 1
            kp = k
            if hermitian:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                jmax = k + int(blas_amax(_sizes(a[imax, k:imax])))
                rowmax = _size(a[imax, jmax])
                if imax + 1 < n:
                    rowmax = max(rowmax, float(_sizes(a[imax + 1:, imax]).max()))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif _diagonal_size(a[imax, imax], hermitian) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _swap_rows_and_columns(a, k, kk, kp, kstep, hermitian)
            elif hermitian:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                _update_one(a, k, hermitian)
            else:
                _update_two(a, k, hermitian)
        if kstep == 1:
            pivots[k] = kp + 1
        else:
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += kstep
    return a, pivots, info


def _update_one(a: np.ndarray, k: int, hermitian: bool) -> None:
    if k + 1 >= a.shape[0]:
        return
    x = a[k + 1:, k].copy()
    if hermitian:
        r1 = 1.0 / a[k, k].real
        a[k + 1:, k + 1:] -= np.multiply.outer(x, (r1 * x).conj())  # (zher: A(i, j) += x(i) * (alpha x(j))^*)
        diagonal = np.arange(k + 1, a.shape[0])
        a[diagonal, diagonal] = a[diagonal, diagonal].real
        a[k + 1:, k] = x * r1
    else:
        d11 = a.dtype.type(1) / a[k, k]
        a[k + 1:, k + 1:] -= np.multiply.outer(x, d11 * x)  # (syr: A(i, j) += x(i) * (alpha * x(j)))
        a[k + 1:, k] = x * d11


def _update_two(a: np.ndarray, k: int, hermitian: bool) -> None:
    if k + 2 >= a.shape[0]:
        return
    first, second = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
    if hermitian:
        d = abs(a[k + 1, k])
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
        wk = d * (d11 * first - d21 * second)
        wkp1 = d * (d22 * second - np.conj(d21) * first)
        # (sytf2's A(i, j) - A(i, k) w(j) - A(i, k + 1) w'(j), left to right)
        a[k + 2:, k + 2:] = a[k + 2:, k + 2:] - np.multiply.outer(first, wk.conj()) - np.multiply.outer(second,
                                                                                                      wkp1.conj())
        diagonal = np.arange(k + 2, a.shape[0])
        a[diagonal, diagonal] = a[diagonal, diagonal].real
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = a.dtype.type(1) / (d11 * d22 - a.dtype.type(1))
        d21 = t / d21
        wk = d21 * (d11 * first - second)
        wkp1 = d21 * (d22 * second - first)
        a[k + 2:, k + 2:] = a[k + 2:, k + 2:] - np.multiply.outer(first, wk) - np.multiply.outer(second, wkp1)
    a[k + 2:, k] = wk
    a[k + 2:, k + 1] = wkp1


def _ldl_arrays(A: np.ndarray, hermitian: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    *batch, n, _ = A.shape
    flat = np.array(A, dtype=A.dtype).reshape(int(np.prod(batch)), n, n)
    pivots = np.zeros((flat.shape[0], n), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for index in range(flat.shape[0]):
            flat[index], pivots[index], info[index] = _ldl_one(flat[index], hermitian)
    return np.tril(flat).reshape(A.shape), pivots.reshape(*batch, n), info.reshape(batch)


def _ldl_solve_one(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray, hermitian: bool) -> np.ndarray:
    """``sytrs`` (``hetrs``), lower, for one matrix: ``A X = B`` from ``A``'s factors."""
    n = ld.shape[0]
    b = b.copy()
    hermitian = hermitian and ld.dtype.kind == "c"
    conj = np.conj if hermitian else (lambda x: x)
    k = 0
    while k < n:  # L D Y = P^T B
        if pivots[k] > 0:
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.multiply.outer(ld[k + 1:, k], b[k])
            b[k] *= (1.0 / ld[k, k].real) if hermitian else ld.dtype.type(1) / ld[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.multiply.outer(ld[k + 2:, k], b[k])
            b[k + 2:] -= np.multiply.outer(ld[k + 2:, k + 1], b[k + 1])
            # the 2 x 2 block [[d11, conj(e)], [e, d22]] solved as LAPACK's hetrs divides it
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / conj(akm1k)
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / conj(akm1k), b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T P^T X = Y (L^H if Hermitian)
        if pivots[k] > 0:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


# -- the ops ----------------------------------------------------------------------------------------

def _ldl_checks(A) -> None:
    name = "torch.linalg.ldl_factor_ex"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    _square_checks(name, A)
    _floating_check(name, A)


def _ldl_factor_ex_meta(input, *, hermitian=False, check_errors=False):
    _ldl_checks(input)
    int32 = np.dtype(np.int32)
    return RETURN_TYPES["linalg_ldl_factor_ex"](MetaArray(input.shape, input.dtype), MetaArray(input.shape[:-1], int32),
                                                MetaArray(input.shape[:-2], int32))


def _unknown_error(name: str, batch: tuple, info: np.ndarray) -> RuntimeError:
    # PyTorch's check of info has no case for a singular D (an internal assertion fails there):
    # its message, as it is.
    flat = info.reshape(-1)
    code = int(flat[np.flatnonzero(flat)[0]])
    return RuntimeError(f'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                        f'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. {name}: Unknown error code: '
                        f"{code}.")


@op(grad=no_derivative("linalg_ldl_factor_ex"), meta=rule(_ldl_factor_ex_meta), name="linalg_ldl_factor_ex",
    function="ldl_factor_ex", namespace="tensormodes.linalg", out=True, returns=("LD", "pivots", "info"),
    errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 3)),))),
    samples=(Sample((TensorSpec((3, 3), "float64"),)), Sample((TensorSpec((2, 4, 4)),)),
             Sample((TensorSpec((3, 3), "complex128"),), {"hermitian": True}),
             Sample((TensorSpec((3, 3), "complex64"),)), Sample((TensorSpec((0, 2, 2)),))))
def ldl_factor_ex(input: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> Tensor:
    """The LDL factorisation with Bunch-Kaufman pivoting of a symmetric matrix (Hermitian if
    ``hermitian``; or of each in a batch), as LAPACK's ``sytrf`` leaves it, reading the lower
    triangle: the named tuple ``(LD, pivots, info)``, ``LD`` holding ``L`` below the diagonal and
    ``D``'s blocks on and below it, ``pivots`` LAPACK's (negative for a 2 x 2 block), ``info`` the
    1-based position of a zero in ``D`` (0 if none).

    >>> import tensormodes as tm
    >>> LD, pivots, info = tm.linalg.ldl_factor_ex(tm.tensor([[4., 2.], [2., 3.]]))
    >>> LD.tolist(), pivots.tolist(), info.item()
    ([[4.0, 0.0], [0.5, 2.0]], [1, 2], 0)
    """
    A = input  # (PyTorch's binding names it input; its documentation, A)
    _ldl_checks(A)
    if A.size == 0:
        return RETURN_TYPES["linalg_ldl_factor_ex"](np.empty(A.shape, A.dtype), np.zeros(A.shape[:-1], np.int32),
                                                    np.zeros(A.shape[:-2], np.int32))
    _lapack_dtype_check("ldl_factor_kernel_cpu", A)
    ld, pivots, info = _ldl_arrays(A, bool(hermitian))
    if check_errors and info.any():
        raise _unknown_error("torch.linalg.ldl_factor_ex", A.shape[:-2], info)
    return RETURN_TYPES["linalg_ldl_factor_ex"](ld, pivots, info)


def _ldl_factor_decomposition(input, hermitian=False):
    A = input
    """PyTorch's composite: ``linalg_ldl_factor_ex``, then its check of ``info`` (read without an op)."""
    LD, pivots, info = ops.linalg.ldl_factor_ex(A, hermitian=hermitian)
    errors = reported_errors(info)
    if errors is not None:
        raise _unknown_error("torch.linalg.ldl_factor", tuple(A.shape[:-2]), errors)
    return RETURN_TYPES["linalg_ldl_factor"](LD, pivots)


def _ldl_factor_meta(input, *, hermitian=False):
    return RETURN_TYPES["linalg_ldl_factor"](*_ldl_factor_ex_meta(input)[:2])


@op(grad=no_derivative("linalg_ldl_factor_ex"), meta=rule(_ldl_factor_meta), name="linalg_ldl_factor",
    function="ldl_factor", namespace="tensormodes.linalg", out=True, returns=("LD", "pivots"),
    decompose=_ldl_factor_decomposition, node="linalg_ldl_factor_ex",
    samples=(Sample((TensorSpec((3, 3), "float64"),)), Sample((TensorSpec((2, 2, 2), "complex128"),),
                                                              {"hermitian": True})))
def ldl_factor(input: Tensor, *, hermitian: bool = False) -> Tensor:
    """``ldl_factor_ex`` without ``info``: the named tuple ``(LD, pivots)``.

    >>> import tensormodes as tm
    >>> tm.linalg.ldl_factor(tm.tensor([[0., 1.], [1., 0.]])).pivots
    tensor([-2, -2], dtype=tensormodes.int32)
    """
    A = input  # (PyTorch's binding names it input; its documentation, A)
    _ldl_checks(A)
    if A.size == 0:
        return RETURN_TYPES["linalg_ldl_factor"](np.empty(A.shape, A.dtype), np.zeros(A.shape[:-1], np.int32))
    _lapack_dtype_check("ldl_factor_kernel_cpu", A)
    ld, pivots, info = _ldl_arrays(A, bool(hermitian))
    if info.any():
        raise _unknown_error("torch.linalg.ldl_factor", A.shape[:-2], info)
    return RETURN_TYPES["linalg_ldl_factor"](ld, pivots)


def _ldl_solve_checks(LD, pivots, B) -> tuple[int, ...]:
    name = "torch.linalg.ldl_solve"
    if LD.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    _square_checks(name, LD)
    _floating_check(name, LD)
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(dtype_of(B))} and A of type {scalar_type_name(dtype_of(LD))} instead.")
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(B.ndim, 1)}, "
                         f"{max(B.ndim, 1) - 1}], but got -2)")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(pivots.shape)} instead")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {LD.shape[-2]} by {LD.shape[-1]} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if LD.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise not_implemented("ldl_solve_cpu", dtype_of(LD))
    return tuple(check_same_shape_or_broadcast(LD.shape[:-2], B.shape[:-2])) + B.shape[-2:]


def _ldl_solve_meta(LD, pivots, B, *, hermitian=False):
    return MetaArray(_ldl_solve_checks(LD, pivots, B), B.dtype)


@op(grad=no_derivative("linalg_ldl_solve"), meta=rule(_ldl_solve_meta), name="linalg_ldl_solve",
    function="ldl_solve", namespace="tensormodes.linalg", out=True,
    errors=(Sample((TensorSpec((3,)), TensorSpec((3,), "int32"), TensorSpec((3, 1)))),),
    samples=(Sample((TensorSpec((3, 3), "float64"), TensorSpec((3,), "int32", 3, 3), TensorSpec((3, 2), "float64"))),
             Sample((TensorSpec((2, 2), "complex128"), TensorSpec((2,), "int32", 2, 2),
                     TensorSpec((2, 2, 1), "complex128")), {"hermitian": True})))
def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """The solution ``X`` of ``A @ X = B`` from ``A``'s LDL factors (``ldl_factor``'s); batches of
    ``B`` broadcast against ``LD``'s.

    >>> import tensormodes as tm
    >>> A = tm.tensor([[4., 2.], [2., 3.]], dtype=tm.float64)
    >>> tm.linalg.ldl_solve(*tm.linalg.ldl_factor(A), tm.tensor([[6.], [5.]], dtype=tm.float64))
    tensor([[1.],
            [1.]], dtype=tensormodes.float64)
    """
    shape = _ldl_solve_checks(LD, pivots, B)
    if 0 in shape or LD.size == 0:
        return np.zeros(shape, B.dtype)
    if np.abs(pivots).max() > LD.shape[-2] or (pivots == 0).any():
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you properly "
                           "pass the result of ldl_factor?")
    batch = shape[:-2]
    ld = np.broadcast_to(LD, batch + LD.shape[-2:]).reshape(-1, *LD.shape[-2:])
    pivot_rows = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape(-1, pivots.shape[-1]).astype(np.int64)
    b = np.broadcast_to(B, shape).reshape(-1, *shape[-2:])
    with np.errstate(all="ignore"):
        x = np.stack([_ldl_solve_one(ld[i], pivot_rows[i], b[i], bool(hermitian)) for i in range(b.shape[0])])
    return x.reshape(shape).astype(B.dtype)
