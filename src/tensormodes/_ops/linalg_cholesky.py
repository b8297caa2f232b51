"""Cholesky factors and what is solved with them: ``linalg.cholesky_ex`` (``linalg.cholesky`` that
reports a matrix that is not positive-definite in ``info``), PyTorch's older ``cholesky``, and
``cholesky_solve`` and ``cholesky_inverse``, which take a factor. Systems are solved by
substitution (``linalg_lu``'s), as LAPACK's ``potrs`` does with the factor.
"""

from __future__ import annotations

import numpy as np

from .._meta_array import MetaArray
from .common import (
    adjoint,
    check_same_shape_or_broadcast,
    dtype_of,
    not_implemented,
    ops,
    output_differentiability,
    scalar_type_name,
)
from .linalg import (
    LinAlgError,
    _check_bool_argument,
    _cholesky_grad,
    _floating_check,
    _not_positive_definite,
    _square_checks,
)
from .linalg import cholesky as linalg_cholesky
from .linalg_lu import _lapack_dtype_check, _substitute, warn_once
from .meta_rules import rule
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op


def _partial_cholesky(matrix: np.ndarray) -> tuple[np.ndarray, int]:
    """LAPACK's unblocked ``potf2`` on one matrix's lower triangle: the factor and 0, or, at the
    first non-positive pivot ``j``, the columns before it factored, the pivot's value in its
    place, the rest as given, and ``j + 1``."""
    lower = np.tril(matrix).astype(matrix.dtype)
    with np.errstate(all="ignore"):
        for j in range(lower.shape[-1]):
            done = lower[j, :j]
            pivot = lower[j, j].real - np.vdot(done, done).real
            if not pivot > 0:
                lower[j, j] = pivot
                return lower, j + 1
            lower[j, j] = np.sqrt(pivot)
            lower[j + 1:, j] = (lower[j + 1:, j] - lower[j + 1:, :j] @ done.conj()) / lower[j, j]
    return lower, 0


def _cholesky_ex_arrays(A: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    try:
        return np.asarray(linalg_cholesky(A, upper=upper)), np.zeros(A.shape[:-2], np.int32)
    except RuntimeError:  # some matrix is not positive-definite: each is factored as far as it goes
        pass
    work = np.swapaxes(A, -2, -1).conj() if upper else A
    flat = work.reshape(-1, *A.shape[-2:])
    factors, info = zip(*(_partial_cholesky(matrix) for matrix in flat), strict=True)
    factor = np.stack(factors).reshape(A.shape)
    if upper:
        factor = np.ascontiguousarray(np.swapaxes(factor, -2, -1).conj())
    return factor, np.asarray(info, np.int32).reshape(A.shape[:-2])


@output_differentiability(True, False)
def _cholesky_ex_grad(grad, result, upper):
    return _cholesky_grad(grad[0], result[0], upper)


def _cholesky_ex_meta(input, *, upper=False, check_errors=False):
    _square_checks("linalg.cholesky", input)
    _floating_check("linalg.cholesky", input)
    return RETURN_TYPES["linalg_cholesky_ex"](MetaArray(input.shape, input.dtype),
                                              MetaArray(input.shape[:-2], np.dtype(np.int32)))


@op(grad=_cholesky_ex_grad, meta=rule(_cholesky_ex_meta), name="linalg_cholesky_ex", function="cholesky_ex",
    namespace="tensormodes.linalg", out=True, returns=("L", "info"),
    errors=(Sample((TensorSpec((2, 3)),)),),
    samples=(Sample((TensorSpec((3, 1, 1), "float32", 0.5, 2.0),)),
             Sample((TensorSpec((2, 1, 1), "float64", 0.5, 2.0),), {"upper": True}),
             Sample((TensorSpec((0, 2, 2), "complex64"),))))
def cholesky_ex(input: Tensor, *, upper: bool = False, check_errors: bool = False) -> Tensor:
    """``linalg.cholesky`` that reports a matrix that is not positive-definite instead of raising
    (unless ``check_errors``): the named tuple ``(L, info)``, ``info`` the order of the first
    leading minor that is not positive-definite (0 if none). For such a matrix ``L`` holds what
    LAPACK leaves: the columns before that minor factored, the failed pivot, the rest as given.

    >>> import tensormodes as tm
    >>> tm.linalg.cholesky_ex(tm.tensor([[4., 2.], [2., -5.]]))
    tensormodes.return_types.linalg_cholesky_ex(
    L=tensor([[ 2.,  0.],
            [ 1., -6.]]),
    info=tensor(2, dtype=tensormodes.int32))
    """
    A = input  # (PyTorch's binding names it input; its documentation, A)
    for argument, value in (("upper", upper), ("check_errors", check_errors)):
        _check_bool_argument("linalg_cholesky_ex", argument, value)
    _square_checks("linalg.cholesky", A)
    _floating_check("linalg.cholesky", A)
    if A.size == 0:
        return RETURN_TYPES["linalg_cholesky_ex"](np.empty(A.shape, A.dtype), np.zeros(A.shape[:-2], np.int32))
    _lapack_dtype_check("cholesky_cpu", A)
    factor, info = _cholesky_ex_arrays(A, bool(upper))
    if check_errors and info.any():
        index = int(np.flatnonzero(info)[0])
        error = _not_positive_definite(A.shape[:-2], index, int(info.reshape(-1)[index]))
        raise type(error)(str(error).replace("linalg.cholesky:", "linalg.cholesky_ex:", 1))
    return RETURN_TYPES["linalg_cholesky_ex"](factor, info)


_CHOLESKY_DEPRECATED = ("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
                        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU "
                        "= torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for all valid "
                        "(symmetric positive definite) inputs.")


def _legacy_cholesky_checks(input) -> None:
    """The older ``cholesky``'s checks: none for an empty input, then the shape, then (no floating
    check of its own) the kernel's dtypes."""
    if input.size == 0:
        return
    _square_checks("cholesky", input)
    if input.dtype.kind not in "fc" or input.dtype.itemsize < 4:
        raise not_implemented("cholesky_cpu", dtype_of(input))


def _legacy_cholesky_meta(input, upper=False):
    _legacy_cholesky_checks(input)
    return MetaArray(input.shape, input.dtype)


@op(grad=_cholesky_grad, meta=rule(_legacy_cholesky_meta), name="cholesky", method=True, out=True,
    samples=(Sample((TensorSpec((3, 1, 1), "float32", 0.5, 2.0),)),
             Sample((TensorSpec((2, 1, 1), "float64", 0.5, 2.0), True))))
def legacy_cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """PyTorch's older ``torch.cholesky`` (deprecated: it warns once): ``linalg.cholesky(input,
    upper=upper)``, whose errors name ``cholesky``.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.tensor([[4., 2.], [2., 5.]]).cholesky()
    tensor([[2., 0.],
            [1., 2.]])
    """
    warn_once(_CHOLESKY_DEPRECATED)
    _legacy_cholesky_checks(input)
    if input.size == 0:
        return np.empty(input.shape, input.dtype)
    try:
        return linalg_cholesky(input, upper=upper)
    except RuntimeError as error:
        raise type(error)(str(error).replace("linalg.cholesky:", "cholesky:", 1)) from None


def _factor_solve(factor: np.ndarray, B: np.ndarray, upper: bool) -> np.ndarray:
    """``X`` with ``L L^H X = B`` (``U^H U X = B`` if ``upper``)."""
    lower = np.swapaxes(factor, -2, -1).conj() if upper else factor
    y = _substitute(lower, B, True, False)
    return _substitute(np.swapaxes(lower, -2, -1).conj(), y, False, False)


def _cholesky_solve_checks(input, input2, upper) -> tuple[int, ...]:
    _check_bool_argument("cholesky_solve", "upper", upper)
    if input.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} dimensions instead")
    if input2.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.ndim} dimensions instead")
    if input.dtype != input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(dtype_of(input))} and A of type {scalar_type_name(dtype_of(input2))} "
                           "instead.")
    if input2.shape[-1] != input2.shape[-2] or input2.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {input2.shape[-2]} by "
                           f"{input2.shape[-1]} but each b matrix is {input.shape[-2]} by {input.shape[-1]}")
    _lapack_dtype_check("cholesky_solve_cpu", input)
    return tuple(check_same_shape_or_broadcast(input.shape[:-2], input2.shape[:-2])) + input.shape[-2:]


def _cholesky_solve_grad(grad, input2, result, upper, needs_input_grad):
    # PyTorch's cholesky_solve_backward
    grad_b = ops.cholesky_solve(grad, input2, upper=upper)
    grad_factor = None
    if needs_input_grad[1]:
        common = grad_b @ adjoint(result)
        common = common + adjoint(common)
        grad_factor = -(input2 @ common) if upper else -(common @ input2)
    return (grad_b if needs_input_grad[0] else None), grad_factor


def _cholesky_solve_meta(input, input2, upper=False):
    return MetaArray(_cholesky_solve_checks(input, input2, upper), input.dtype)


@op(grad=_cholesky_solve_grad, meta=rule(_cholesky_solve_meta), method=True, out=True,
    errors=(Sample((TensorSpec((3,)), TensorSpec((3, 3)))), Sample((TensorSpec((2, 1)), TensorSpec((3, 3))))),
    samples=(Sample((TensorSpec((3, 2)), TensorSpec((3, 3), "float32", 1, 2))),
             Sample((TensorSpec((2, 2, 1), "float64"), TensorSpec((2, 2), "float64", 1, 2)), {"upper": True}),
             Sample((TensorSpec((2, 2), "complex128"), TensorSpec((2, 2), "complex128", 1, 2)))))
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """The solution ``X`` of ``A @ X = input`` for ``A = L @ L.mH`` given its Cholesky factor
    ``input2`` (``L``; ``U`` with ``A = U.mH @ U`` if ``upper``, only that triangle read).
    Batches broadcast.

    >>> import tensormodes as tm
    >>> L = tm.linalg.cholesky(tm.tensor([[4., 2.], [2., 5.]]))
    >>> tm.cholesky_solve(tm.tensor([[6.], [7.]]), L)
    tensor([[1.],
            [1.]])
    """
    shape = _cholesky_solve_checks(input, input2, upper)
    if 0 in shape or input2.size == 0:
        return np.zeros(shape, input.dtype)
    factor = np.triu(input2) if upper else np.tril(input2)
    return _factor_solve(factor, input, bool(upper)).astype(input.dtype)


def _cholesky_inverse_checks(input, upper) -> None:
    _check_bool_argument("cholesky_inverse", "upper", upper)
    _square_checks("cholesky_inverse", input)
    if input.dtype.kind not in "fc" or input.dtype.itemsize < 4:
        raise not_implemented("cholesky_inverse_out_cpu", dtype_of(input))


def _check_nonzero_diagonal(factor: np.ndarray) -> None:
    """LAPACK's ``potri`` inverts the factor first: a zero on its diagonal is PyTorch's LinAlgError."""
    zeros = (np.diagonal(factor, axis1=-2, axis2=-1) == 0).reshape(-1, factor.shape[-1])
    if zeros.any():
        index = int(np.flatnonzero(zeros.any(axis=-1))[0])
        position = int(np.argmax(zeros[index])) + 1
        prefix = f"(Batch element {index}): " if factor.ndim > 2 else ""
        raise LinAlgError(f"cholesky_inverse: {prefix}The diagonal element {position} is zero, the inversion could not "
                          "be completed because the input matrix is singular.")


def _cholesky_inverse_grad(grad, input, result, upper):
    # PyTorch's cholesky_inverse_backward
    common = result @ (grad + adjoint(grad)) @ result
    return -(input @ common) if upper else -(common @ input)


def _cholesky_inverse_meta(input, upper=False):
    _cholesky_inverse_checks(input, upper)
    return MetaArray(input.shape, input.dtype)


@op(grad=_cholesky_inverse_grad, meta=rule(_cholesky_inverse_meta), method=True, out=True,
    errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((2, 3)),))),
    samples=(Sample((TensorSpec((3, 3), "float32", 1, 2),)), Sample((TensorSpec((2, 2, 2), "float64", 1, 2), True)),
             Sample((TensorSpec((3, 2, 2), "float32", 1, 2),)), Sample((TensorSpec((0, 0)),))))
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A = L @ L.mH`` given its Cholesky factor ``input`` (``L``; ``U`` with
    ``A = U.mH @ U`` if ``upper``, only that triangle read).

    >>> import tensormodes as tm
    >>> tm.cholesky_inverse(tm.tensor([[2., 0.], [0., 1.]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    _cholesky_inverse_checks(input, upper)
    if input.size == 0:
        return np.empty(input.shape, input.dtype)
    _check_nonzero_diagonal(input)
    factor = np.triu(input) if upper else np.tril(input)
    identity = np.broadcast_to(np.eye(input.shape[-1], dtype=input.dtype), input.shape)
    return _factor_solve(factor, identity, bool(upper)).astype(input.dtype)


