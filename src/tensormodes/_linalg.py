"""The composites of ``tensormodes.linalg`` (PyTorch's CompositeImplicitAutograd functions):
Python functions over the op table's ops, each a public callable of ``tensormodes.linalg`` that
handlers see itself; their gradients are those of the ops they run. ``linalg.py`` binds
``COMPOSITES``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._api import build
from ._api import namespace as tm
from ._ops.common import cpp_type_name, scalar_type_name
from ._ops.linalg import LinAlgError
from ._ops.linalg_lu import reported_errors
from ._ops.registry import RETURN_TYPES, Tensor

PUBLIC_MODULE = "tensormodes.linalg"
COMPOSITES, _public = build.native_composites(PUBLIC_MODULE)


@_public
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None):
    """A least-squares solution ``X`` of ``A @ X = B`` (for each matrix of a batch), as the named
    tuple ``(solution, residuals, rank, singular_values)``. As PyTorch on the CPU, ``driver``
    (``'gelsy'`` by default, ``'gels'``, ``'gelsd'``, ``'gelss'``) decides what is filled in:
    ``rank`` except for ``'gels'``; ``singular_values`` for ``'gelsd'`` and ``'gelss'``;
    ``residuals`` (the squared residual norms of each column) where ``A`` is taller than wide,
    of full rank, and the driver is not ``'gelsy'``. Singular values at most ``rcond`` times the
    largest count as zero (``rcond`` defaults to ``eps * max(m, n)``). ``solution`` and
    ``residuals`` are differentiable (node ``LinalgLstsqBackward0``).

    >>> import tensormodes as tm
    >>> A = tm.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> tm.linalg.lstsq(A, tm.tensor([[1.0], [2.0], [3.0]])).solution
    tensor([[1.],
            [2.]])
    """
    solution, residuals = tm._linalg_lstsq(A, B, rcond, driver=driver)
    rank, singular_values = tm._linalg_lstsq_rank(A, B, rcond, driver=driver)
    return RETURN_TYPES["linalg_lstsq"](solution, residuals, rank, singular_values)


# -- ranks and condition numbers ---------------------------------------------------------------------

def _linalg():
    """``tensormodes.linalg``, read at call time (it imports this module)."""
    return tm.package().linalg


def _tolerance(value, like):
    """``atol`` / ``rtol`` (a number or a tensor of batch shape) as a tensor against ``like``'s last dimension."""
    if isinstance(value, tm.Tensor):
        return value.to(like.dtype).unsqueeze(-1)
    return tm.full_like(like[..., :1], value)


@_public
def matrix_rank(A: Tensor, tol: float | None = None, hermitian: bool = False, *, atol: Tensor | None = None,
                rtol: Tensor | None = None):
    """The numerical rank of a matrix (or of each in a batch): how many singular values (the
    absolute eigenvalues if ``hermitian``) exceed ``max(atol, rtol * largest)``; ``rtol`` defaults
    to ``eps * max(m, n)``, or 0 when a positive ``atol`` is given. ``tol`` is PyTorch's older
    spelling of ``atol`` (with ``rtol`` 0).

    >>> import tensormodes as tm
    >>> tm.linalg.matrix_rank(tm.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype not in (tm.float32, tm.float64, tm.complex64, tm.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0:
        return tm.zeros(A.shape[:-2], dtype=tm.int64)
    values = _linalg().eigvalsh(A).abs() if hermitian else _linalg().svdvals(A)
    if rtol is None:
        positive = atol is not None and bool((tm.as_tensor(atol) > 0).any())
        rtol = 0.0 if positive else tm.finfo(values.dtype).eps * max(m, n)
    limit = values.amax(-1, keepdim=True) * _tolerance(rtol, values)
    if atol is not None:
        limit = tm.maximum(limit, _tolerance(atol, values))
    return (values > limit).sum(-1)


_COND_NORMS = (None, 2, -2, "fro", "nuc", float("inf"), -float("inf"), 1, -1)


@_public
def cond(A: Tensor, p=None):
    """The condition number of a matrix (or of each in a batch) in the norm ``p``: the ratio of
    the largest to the smallest singular value for ``p`` None or 2 (the inverse for -2), else
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` for square ``A`` (``inf`` where ``A`` is
    singular). ``p`` is one of None, 2, -2, ``'fro'``, ``'nuc'``, inf, -inf, 1, -1.

    >>> import tensormodes as tm
    >>> tm.linalg.cond(tm.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor(4.)
    """
    if p not in _COND_NORMS or isinstance(p, bool):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        values = _linalg().svdvals(A)
        if A.numel() == 0:
            return tm.zeros(A.shape[:-2], dtype=values.dtype)
        ratio = values[..., 0] / values[..., -1]
        return ratio if p != -2 else values[..., -1] / values[..., 0]
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.numel() == 0:
        return tm.zeros(A.shape[:-2], dtype=A.real.dtype if A.is_complex() else A.dtype)
    norms = _linalg().matrix_norm(A, p)
    try:
        return norms * _linalg().matrix_norm(_linalg().inv(A), p)
    except LinAlgError:
        pass
    # Some matrix is singular: its condition number is infinite, the others' as usual.
    flat = A.reshape(-1, *A.shape[-2:])
    parts = []
    for matrix in flat.unbind(0):
        try:
            parts.append(_linalg().matrix_norm(matrix, p) * _linalg().matrix_norm(_linalg().inv(matrix), p))
        except LinAlgError:
            parts.append(tm.full((), float("inf"), dtype=norms.dtype))
    return tm.stack(parts).reshape(A.shape[:-2])


# -- products -----------------------------------------------------------------------------------------

def _chain_order(shapes: list[tuple[int, int]]) -> list[list[int]]:
    """The cheapest parenthesisation of a chain of matrices of ``shapes`` (textbook dynamic
    programming, as PyTorch's multi_dot): ``split[i][j]``, where the product of ``i..j`` splits."""
    count = len(shapes)
    dims = [shapes[0][0]] + [shape[1] for shape in shapes]
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                total = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or total < cost[i][j]:
                    cost[i][j], split[i][j] = total, k
    return split


def _chain_product(matrices, split, i: int, j: int):
    if i == j:
        return matrices[i]
    k = split[i][j]
    return tm.mm(_chain_product(matrices, split, i, k), _chain_product(matrices, split, k + 1, j))


@_public
def multi_dot(tensors: Sequence[Tensor]):
    """The product of two or more matrices, multiplied in the cheapest order; the first may be
    a row vector and the last a column vector (1-D), their dimension dropped from the result.

    >>> import tensormodes as tm
    >>> tm.linalg.multi_dot([tm.tensor([1.0, 2.0]), tm.ones(2, 3), tm.tensor([1.0, 0.0, 1.0])])
    tensor(6.)
    """
    count = len(tensors)
    if count < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {count}")
    for i, tensor in enumerate(tensors):
        if i in (0, count - 1):
            if tensor.dim() not in (1, 2):
                which = "first" if i == 0 else "last"
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {tensor.dim()}D")
        elif tensor.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensor.dim()}D")
    for i, tensor in enumerate(tensors[1:], start=1):
        if tensor.dtype != tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{cpp_type_name(tensors[0].dtype)} and tensor {i} {cpp_type_name(tensor.dtype)}")
    matrices = [tensors[0].unsqueeze(0) if tensors[0].dim() == 1 else tensors[0], *tensors[1:-1],
                tensors[-1].unsqueeze(-1) if tensors[-1].dim() == 1 else tensors[-1]]
    for i in range(count - 1):
        if matrices[i].shape[-1] != matrices[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    product = _chain_product(matrices, _chain_order([tuple(m.shape) for m in matrices]), 0, count - 1)
    shape = [*([matrices[0].shape[0]] if tensors[0].dim() == 2 else []),
             *([matrices[-1].shape[1]] if tensors[-1].dim() == 2 else [])]
    return product.view(shape)


@_public
def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None):
    """``tensormodes.matmul`` under its ``linalg`` name (PyTorch's alias).

    >>> import tensormodes as tm
    >>> tm.linalg.matmul(tm.tensor([[1., 2.]]), tm.tensor([[3.], [4.]]))
    tensor([[11.]])
    """
    return tm.matmul(input, other) if out is None else tm.matmul(input, other, out=out)


@_public
def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """``tensormodes.diagonal`` with defaults for batches of matrices: the diagonal of each
    matrix of the last two dimensions (a view).

    >>> import tensormodes as tm
    >>> tm.linalg.diagonal(tm.arange(8.).reshape(2, 2, 2))
    tensor([[0., 3.],
            [4., 7.]])
    """
    return tm.diagonal(A, offset, dim1, dim2)


@_public
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None):
    """The dot product of vectors along ``dim`` (batches broadcast), conjugating ``x``:
    ``(x.conj() * y).sum(dim)``, as PyTorch's composite (``vdot`` for two 1-D tensors).

    >>> import tensormodes as tm
    >>> tm.linalg.vecdot(tm.tensor([[1., 2.], [3., 4.]]), tm.tensor([1., 1.]))
    tensor([3., 7.])
    """
    for tensor in (x, y):
        if not (tensor.is_floating_point() or tensor.is_complex()):
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                               f"{scalar_type_name(tensor.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{scalar_type_name(x.dtype)} and y of type {scalar_type_name(y.dtype)} instead")
    if x.dim() == 1 and y.dim() == 1:
        result = tm.vdot(x, y)
    else:
        result = ((x.conj() if x.is_complex() else x) * y).sum(dim)
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result


@_public
def vander(x: Tensor, *, N: int | None = None):
    """The Vandermonde matrix of the vectors of ``x`` (the last dimension; batches kept): columns
    ``x ** 0``, ..., ``x ** (N - 1)``, increasing, ``N`` defaulting to ``x``'s last size, built
    by a cumulative product as PyTorch's composite.

    >>> import tensormodes as tm
    >>> tm.linalg.vander(tm.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    if x.dim() == 0:  # (a scalar is one vector of one element, as PyTorch's composite reads it)
        x = x.unsqueeze(0)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return tm.cat([powers.new_ones((*x.shape, 1)), powers], -1)


@_public
def tensorinv(input: Tensor, ind: int = 2, *, out: Tensor | None = None):
    """The inverse of ``A`` for ``tensordot`` over ``ind`` dimensions: ``A`` read as a square matrix
    (its first ``ind`` dimensions the rows), inverted, and shaped ``A.shape[ind:] + A.shape[:ind]``.

    >>> import tensormodes as tm
    >>> tuple(tm.linalg.tensorinv(tm.eye(4).reshape(4, 2, 2) * 2, ind=1).shape)
    (2, 2, 4)
    """
    A = input  # (PyTorch's binding names it input; its documentation, A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, columns = list(A.shape[:ind]), list(A.shape[ind:])
    count_rows = _product_of(rows)
    if count_rows != _product_of(columns):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_product_of(columns)} != {count_rows}")
    inverse, info = _linalg().inv_ex(A.reshape(count_rows, -1))
    if reported_errors(info) is not None:  # (PyTorch's _linalg_check_errors, read without an op)
        raise LinAlgError(f"inv: The diagonal element {int(info.item())} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    result = inverse.reshape(columns + rows)
    return result if out is None else out.resize_(result.shape).copy_(result)


@_public
def tensorsolve(input: Tensor, other: Tensor, dims: Sequence[int] | None = None, *, out: Tensor | None = None):
    """The ``X`` with ``tensordot(A, X, X.dim()) = B``: ``A`` (its ``dims`` moved last first) read as
    a square matrix whose rows are ``B``'s elements, solved for ``X`` of shape
    ``A.shape[B.dim():]``.

    >>> import tensormodes as tm
    >>> tm.linalg.tensorsolve(tm.eye(6).reshape(2, 3, 6) * 2, tm.ones(2, 3)).tolist()
    [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    """
    A, B = input, other  # (PyTorch's binding names them input and other; its documentation, A and B)
    if dims is not None:
        moved = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in moved] + moved)
    solution_shape = list(A.shape[B.dim():])
    rows = B.numel()
    if rows != _product_of(solution_shape):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape"
                           f"[:other.ndim]), but got {_product_of(solution_shape)} != {rows}")
    result, info = _linalg().solve_ex(A.reshape(rows, rows), B.reshape(rows))
    if reported_errors(info) is not None:  # (PyTorch's _linalg_check_errors, read without an op)
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    result = result.reshape(solution_shape)
    return result if out is None else out.resize_(result.shape).copy_(result)


def _product_of(sizes) -> int:
    total = 1
    for size in sizes:
        total *= int(size)
    return total
