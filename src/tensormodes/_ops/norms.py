"""``torch.linalg``'s norms: ``vector_norm``, ``matrix_norm`` and ``norm``, which picks
one of them from ``ord`` and ``dim`` as PyTorch does.

>>> import tensormodes as tm
>>> A = tm.tensor([[1., -2., 3.], [4., 5., -6.]])
>>> tm.linalg.vector_norm(A, 1).item(), tm.linalg.matrix_norm(A, 1).item(), tm.linalg.norm(A, float("inf")).item()
(21.0, 9.0, 15.0)
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from ._reduction import _LOW_PRECISION, _dim_defaulting, _distribute_evenly, _norm_grad, _quietly, _reduce_meta
from ._samples import M23, M234
from .common import dtype_of, ops, scalar_type_name, wrap_dim
from .linalg import svdvals as _svdvals
from .norm_kernels import _matrix_norm as _fro_or_nuc_norm
from .norm_kernels import _norm_dtypes, _vector_norm
from .registry import Sample, Tensor, TensorSpec, op

_INF = float("inf")
_MATRIX_ORDERS = ("fro", "nuc", _INF, -_INF, 1, -1, 2, -2)


# -- kernels' helpers ----------------------------------------------------------------

def _check_vector_order(ord) -> None:  # noqa: A002 - PyTorch's parameter name
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, (int, float, complex)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")


def _matrix_dims(A: np.ndarray, ord, dim) -> tuple[int, int]:
    if ord not in _MATRIX_ORDERS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    rows, columns = wrap_dim(dims[0], A.ndim), wrap_dim(dims[1], A.ndim)
    if rows == columns:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({rows}, {columns})")
    return rows, columns


def _matrix_norm_kernel(A: np.ndarray, ord, dim, keepdim: bool, dtype) -> np.ndarray:  # noqa: A002
    rows, columns = _matrix_dims(A, ord, dim)
    if ord in ("fro", "nuc"):
        return _fro_or_nuc_norm(A, ord, (rows, columns), keepdim, dtype)
    if abs(ord) == 2 and A.dtype in _LOW_PRECISION:
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. "
                           f"Got {scalar_type_name(dtype_of(A))}")
    target = _norm_dtypes("matrix_norm", A, dtype)
    if abs(ord) == 2:
        work = np.moveaxis(A.astype(target._np, copy=False), (rows, columns), (-2, -1))
        if ord == -2 and 0 in work.shape[-2:]:  # PyTorch's amin of no singular values
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        if work.size == 0:
            result = np.zeros(work.shape[:-2], target.to_real()._np)
        else:
            values = _svdvals(work)  # (PyTorch's errors and NaNs for non-finite matrices)
            result = values[..., 0] if ord == 2 else values[..., -1]
        if keepdim:
            result = np.expand_dims(result, tuple(sorted((rows, columns))))
        return np.asarray(result).astype(target.to_real()._np, copy=False)
    # 1 / -1: the largest / smallest column sum of |A|; inf / -inf: the same over rows.
    summed, picked = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = _vector_norm(A, 1, summed, True, dtype)
    if sums.shape[picked] == 0:
        if ord < 0:  # PyTorch's amin over the empty dimension (numbered once the summed one is gone)
            raise IndexError(f"amin(): Expected reduction dim {picked - (not keepdim and summed < picked)} to have "
                             "non-zero size.")
        result = np.zeros(sums.shape[:picked] + (1,) + sums.shape[picked + 1:], sums.dtype)  # the sums are >= 0
    else:
        result = (np.maximum if ord > 0 else np.minimum).reduce(sums, axis=picked, keepdims=True)
    if not keepdim:
        result = np.squeeze(result, axis=(rows, columns))
    return np.asarray(result)


def _norm_kernel(A: np.ndarray, ord, dim, keepdim: bool, dtype) -> np.ndarray:  # noqa: A002
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    elif ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.ndim}D.")
        dims = tuple(range(A.ndim))
    if ord is None:
        return _vector_norm(A, 2, dim, keepdim, dtype)
    if len(dims) == 2:
        return _matrix_norm_kernel(A, ord, dims, keepdim, dtype)
    if isinstance(ord, str):  # a matrix order for a vector: matrix_norm's error, as PyTorch gives
        return _matrix_norm_kernel(A, ord, dims, keepdim, dtype)
    return _vector_norm(A, ord, dims, keepdim, dtype)


# -- gradients -------------------------------------------------------------------------

def _keep(grad, dims: tuple, keepdim: bool):
    """``grad`` of a reduction over ``dims`` with those dims kept (size 1)."""
    if not keepdim:
        for d in sorted(dims):
            grad = grad.unsqueeze(d)
    return grad


def _matrix_norm_grad_of(grad, A, result, ord, dims: tuple, keepdim: bool):  # noqa: A002
    rows, columns = dims
    if ord == "fro":
        return _norm_grad(grad, A, result, 2, dims, keepdim)
    if ord == "nuc":
        return _norm_grad(grad, A, result, "nuc", dims, keepdim)
    shape = tuple(A.shape)
    if not A.numel():
        return A.new_zeros(shape)
    grad = _keep(grad, dims, keepdim)
    if abs(ord) == 2:
        # amax / amin of the singular values, as PyTorch computes it: a tie (the identity,
        # a zero matrix) shares the gradient evenly among the singular pairs attaining it.
        u, singular_values, vh = ops.linalg.svd(A.movedim(dims, (-2, -1)), full_matrices=False)
        best = singular_values.amax(-1, keepdim=True) if ord == 2 else singular_values.amin(-1, keepdim=True)
        attained = singular_values == best
        weights = attained / attained.sum(-1, keepdim=True)
        outer = (u * weights.unsqueeze(-2).to(u.dtype)) @ vh
        return (grad.movedim(dims, (-2, -1)) * outer).movedim((-2, -1), dims)
    summed, picked = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = A.abs().sum(summed, keepdim=True)
    best = sums.amax(picked, keepdim=True) if ord > 0 else sums.amin(picked, keepdim=True)
    shared = _distribute_evenly(grad, sums, best, picked, True)
    return shared.expand(shape) * A.sgn()


def _vector_norm_grad(grad, x, result, ord, dim, keepdim):  # noqa: A002
    return _norm_grad(grad, x, result, ord, dim, keepdim)


def _matrix_norm_grad(grad, A, result, ord, dim, keepdim):  # noqa: A002
    dims = (wrap_dim(dim[0], A.dim()), wrap_dim(dim[1], A.dim()))
    return _matrix_norm_grad_of(grad, A, result, ord, dims, keepdim)


def _linalg_norm_grad(grad, A, result, ord, dim, keepdim):  # noqa: A002
    if ord is None:
        return _norm_grad(grad, A, result, 2, dim, keepdim)
    dims = tuple(range(A.dim())) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 2:
        return _matrix_norm_grad_of(grad, A, result, ord, tuple(wrap_dim(d, A.dim()) for d in dims), keepdim)
    return _norm_grad(grad, A, result, ord, dims, keepdim)


# -- the ops -------------------------------------------------------------------------

@op(meta=_reduce_meta(),
    grad=_vector_norm_grad, name="linalg_vector_norm", function="vector_norm", namespace="tensormodes.linalg",
    out=True, samples=(
        Sample((M23,)), Sample((M23, 1)), Sample((M23, 0)), Sample((M23, _INF, 1)), Sample((M23, -_INF)),
        Sample((M234, 3, (0, 2), True)), Sample((M23, 0.5, -1)), Sample((M23,), {"dtype": dt.float64}),
        Sample((TensorSpec((2, 3), "float16"),)), Sample((TensorSpec((2, 3), "complex64"), 2, 1)),
        Sample((TensorSpec(()), 2)), Sample((TensorSpec((4,), "float64"), -1.5))),
    schema={"ord": "Scalar=2", "x": "Tensor self"}, tags=("reduction",))
@_quietly
def vector_norm(x: Tensor, ord: float = 2, dim: int | tuple[int, ...] | None = None,  # noqa: A002
                keepdim: bool = False, *, dtype: dt.dtype | None = None) -> Tensor:
    """Computes a vector norm: over all elements of ``x`` (``dim=None``) or over ``dim``.

    ``ord`` is any real number, ``inf`` (the largest absolute value), ``-inf`` (the
    smallest) or ``0`` (the number of nonzeros). ``dtype`` is the (floating or complex)
    dtype computed in; the result is real.

    >>> import tensormodes as tm
    >>> tm.linalg.vector_norm(tm.tensor([3., -4.]))
    tensor(5.)
    """
    _check_vector_order(ord)
    return _vector_norm(x, ord, dim, keepdim, dtype)


def _max_over_nothing(shape: tuple, ord, dims) -> bool:  # noqa: A002
    """Whether matrix norm ``ord`` of a matrix of ``shape`` spanned by ``dims`` takes a max (ord 2,
    1, inf) over an empty dimension: PyTorch then returns zeros that have no history."""
    if isinstance(ord, str) or ord <= 0 or math.prod(shape):
        return False
    rows, columns = (wrap_dim(d, len(shape)) for d in dims)
    if ord == 2:
        return 0 in (shape[rows], shape[columns])
    return shape[columns if ord == 1 else rows] == 0


def _matrix_norm_recorded(A, ord="fro", dim=(-2, -1), *rest) -> bool:  # noqa: A002
    """``differentiable=`` of matrix_norm (see ``_max_over_nothing``)."""
    return not _max_over_nothing(tuple(A.shape), ord, dim)


def _norm_recorded(A, ord=None, dim=None, *rest) -> bool:  # noqa: A002
    """``differentiable=`` of linalg.norm: its matrix norms as matrix_norm's."""
    if ord is None:
        return True
    dims = tuple(range(A.dim())) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return len(dims) != 2 or not _max_over_nothing(tuple(A.shape), ord, dims)


@op(meta=_reduce_meta(_dim_defaulting((-2, -1))),
    errors=(Sample((TensorSpec((3,)),)), Sample((M23, "fro", (0, 0))), Sample((TensorSpec((3, 0)), -1)),
            Sample((TensorSpec((0, 3)), -2))),
    grad=_matrix_norm_grad, differentiable=_matrix_norm_recorded, name="linalg_matrix_norm", function="matrix_norm",
    namespace="tensormodes.linalg",
    out=True, samples=(
        Sample((M23,)), Sample((M23, "nuc")), Sample((M23, 1)), Sample((M23, -1)), Sample((M23, _INF)),
        Sample((M23, -_INF)), Sample((M23, 2)), Sample((M23, -2)), Sample((M234, 1, (2, 0), True)),
        Sample((M234, "fro", (0, 1))), Sample((M23,), {"dtype": dt.float64}),
        Sample((TensorSpec((2, 2), "complex128"), 2)), Sample((TensorSpec((3, 2), "float64"), _INF, (1, 0), True))),
    schema={"ord": "Scalar=", "A": "Tensor self"})
@_quietly
def matrix_norm(A: Tensor, ord: float | str = "fro", dim: tuple[int, int] = (-2, -1),  # noqa: A002
                keepdim: bool = False, *, dtype: dt.dtype | None = None) -> Tensor:
    """Computes a matrix norm of ``A`` (or of each matrix of a batch) spanned by ``dim``.

    ``ord``: ``'fro'`` (Frobenius), ``'nuc'`` (nuclear), ``inf`` / ``-inf`` (largest /
    smallest row sum of absolute values), ``1`` / ``-1`` (the same over columns), ``2`` /
    ``-2`` (largest / smallest singular value).

    >>> import tensormodes as tm
    >>> tm.linalg.matrix_norm(tm.tensor([[1., -2.], [3., 4.]]), 1)
    tensor(6.)
    """
    return _matrix_norm_kernel(A, ord, dim, keepdim, dtype)


@op(meta=_reduce_meta(), grad=_linalg_norm_grad, differentiable=_norm_recorded, name="linalg_norm", function="norm",
    namespace="tensormodes.linalg",
    out=True, samples=(
    Sample((M23,)), Sample((M234,)), Sample((M23, 2)), Sample((M23, "nuc")), Sample((M23, 1, 0)),
    Sample((M23, _INF)), Sample((TensorSpec((5,)), 3)), Sample((M234, None, (0, 2), True)),
    Sample((M234, -1, (1, 2))), Sample((M23,), {"dtype": dt.float64}), Sample((TensorSpec(()),))),
    schema={"A": "Tensor self"})
@_quietly
def norm(A: Tensor, ord: float | str | None = None, dim: int | tuple[int, ...] | None = None,  # noqa: A002
         keepdim: bool = False, *, dtype: dt.dtype | None = None) -> Tensor:
    """Computes a vector or matrix norm: ``vector_norm`` for one ``dim`` (or ``ord=None``
    over all elements), ``matrix_norm`` for two; without ``dim``, ``ord`` decides from
    ``A``'s dimensions (1-D: vector, 2-D: matrix).

    >>> import tensormodes as tm
    >>> A = tm.tensor([[1., -2.], [3., 4.]])
    >>> round(tm.linalg.norm(A).item() ** 2, 4), tm.linalg.norm(A, 1).item(), tm.linalg.norm(A, 1, dim=1).tolist()
    (30.0, 6.0, [3.0, 7.0])
    """
    return _norm_kernel(A, ord, dim, keepdim, dtype)
