"""Matrix functions and structured products: ``trace``, ``matrix_power``, the Kronecker
product ``kron``, cross products (``cross``, ``linalg.cross``), pairwise distances ``cdist`` and
``pdist``, and Vandermonde matrices ``vander``. The plain products of vectors, matrices and batches are in
``products.py``, whose precision helpers these share.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._reduction import _checked_meta, _kernel_rule, _no_checks, _norm_grad, _probe_quietly
from .common import (
    HALF_TYPES,
    adjoint,
    check_same_shape_or_broadcast,
    cpp_type_name,
    dtype_of,
    not_implemented,
    operand_dtype,
    ops,
    quiet,
    scalar_type_name,
    wrap_dims,
)
from .common import conjugate as _conj
from .linalg import _singular_inverse
from .meta_rules import rule, with_shape
from .products import _check_bool, _product
from .registry import Sample, Tensor, TensorSpec, alias, op
from .scans import _scan

# -- meta rules (see _meta): the kernels' own checks, which read only shapes and dtypes, run on
# the MetaArrays; the dtype comes from a probe (sizes clamped to 1, so the shapes still agree).

def _trace_shape(input):
    return ()


@_kernel_rule
def _matrix_power_meta(kernel, input, n):
    _matrix_power_checks(input, n)
    return with_shape(_probe_quietly(kernel, input, n), input.shape)


def _kron_shape(input, other):
    ndim = max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + input.shape
    b_shape = (1,) * (ndim - other.ndim) + other.shape
    return tuple(a * b for a, b in zip(a_shape, b_shape, strict=True))


def _cross_shape(input, other, dim=-1):
    return tuple(check_same_shape_or_broadcast(input.shape, other.shape))


@rule
def _linalg_cross_meta(input, other, *, dim=-1):
    # No probe: its sizes could not be 3. A cross product keeps the operands' (common) dtype.
    _cross_checks(input, other, dim)
    return MetaArray(_cross_shape(input, other), input.dtype)


@rule
def _cross_meta(input, other, dim=None):
    return _linalg_cross_meta.compute(None, (input, other), {"dim": _cross_dim(input, other, dim)})


@rule
def _cdist_meta(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    # No probe: the route (direct or through a matrix product) depends on the true row counts.
    shape, _ = _cdist_route(x1, x2, p, compute_mode)
    return MetaArray(shape, x1.dtype)


@_kernel_rule
def _vander_meta(kernel, x, N=None, increasing=False):
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    count = x.shape[0] if N is None else N
    if count < 0:
        raise RuntimeError("N must be non-negative.")
    return with_shape(_probe_quietly(kernel, x, None, increasing), (x.shape[0], count))


# -- trace and matrix powers ----------------------------------------------------------------------

def _trace_grad(grad, input_shape):
    # The gradient is ``grad`` on the main diagonal, PyTorch's way: zeros with ``grad`` filled in at
    # the diagonal's flat positions.
    rows, columns = input_shape
    flat = ops.zeros(rows * columns, dtype=grad.dtype, device=grad.device)
    # (a tall matrix's diagonal ends at its last column: positions beyond it are other rows')
    positions = ops.arange(0, min(rows, columns) * (columns + 1), columns + 1, device=grad.device)
    return flat.index_fill(0, positions, grad).view(rows, columns)


@op(meta=_checked_meta(_no_checks, _trace_shape), grad=_trace_grad, method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 4), "int32"),)), Sample((TensorSpec((3, 2), "uint8"),)),
    Sample((TensorSpec((2, 2), "complex64"),)), Sample((TensorSpec((0, 3), "int16"),)),
    Sample((TensorSpec((4, 4), "float16"),))))
def trace(input: Tensor) -> Tensor:
    """Sum of the elements on the main diagonal of a 2-D tensor (integers sum as int64).

    >>> import tensormodes as tm
    >>> tm.trace(tm.arange(9).view(3, 3))
    tensor(12)
    """
    if input.dtype == np.bool_:  # PyTorch's kernel is chosen (by dtype) before it checks the shape
        raise not_implemented("trace", dt.bool)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype.kind in "iu":
        return np.asarray(np.trace(input, dtype=np.int64))
    return _product(np.trace, input)


def _power_steps(k: int) -> tuple[list[tuple[int, int]], int]:
    """PyTorch's chain of products for ``B ** k`` (k >= 1): value 0 is ``B``, step ``i`` (a pair of
    value indices, left and right) makes value ``i + 1``; also the index of the result."""
    if k == 1:
        return [], 0
    if k == 2:
        return [(0, 0)], 1
    if k == 3:
        return [(0, 0), (1, 0)], 2
    steps: list[tuple[int, int]] = []
    square = result = None
    while k:
        bit, k = k & 1, k >> 1
        if square is None:
            square = 0
        else:
            steps.append((square, square))
            square = len(steps)
        if bit:
            if result is None:
                result = square
            else:
                steps.append((result, square))
                result = len(steps)
    return steps, result


def _matrix_power_grad(grad, input, n):
    # Backward through PyTorch's own chain of products (and inverse), in its autograd engine's
    # order: each value's gradient sums its consumers' parts, the latest consumer first.
    if n == 0:
        return ops.zeros_like(grad)
    base = input if n > 0 else input.inverse()
    steps, result = _power_steps(abs(n))
    values = [base]
    for left, right in steps:
        values.append(values[left].matmul(values[right]))
    grads: list = [None] * len(values)
    grads[result] = grad
    for index in range(len(steps) - 1, -1, -1):
        out = grads[index + 1]
        if out is None:
            continue
        left, right = steps[index]
        for target, part in ((left, out.matmul(adjoint(values[right]))), (right, adjoint(values[left]).matmul(out))):
            grads[target] = part if grads[target] is None else grads[target] + part
    if n > 0:
        return grads[0]
    # base = A^-1: PyTorch's inverse backward, -B^H (grad B^H)
    transposed = adjoint(base)
    return -transposed.matmul(grads[0].matmul(transposed))


@op(meta=_matrix_power_meta,
    errors=(Sample((TensorSpec((2, 3)), 2)),), grad=_matrix_power_grad, method=True, out=True, samples=(
    Sample((TensorSpec((3, 3)), 3)), Sample((TensorSpec((2, 2), "int64"), 2)), Sample((TensorSpec((2, 2, 2)), 0)),
    Sample((TensorSpec((2, 2), "float64", 1, 2), -2)), Sample((TensorSpec((2, 2), "bool"), 1)),
    Sample((TensorSpec((2, 2), "int32"), 5))))
def matrix_power(input: Tensor, n: int) -> Tensor:
    """The ``n``-th power of a square matrix (or of each matrix in a batch); ``n = 0`` gives the
    identity and negative ``n`` powers of the inverse.

    >>> import tensormodes as tm
    >>> tm.matrix_power(tm.tensor([[1, 1], [0, 1]]), 3)
    tensor([[1, 3],
            [0, 1]])
    """
    n = _matrix_power_checks(input, n)
    if n == 0:
        return np.broadcast_to(np.eye(input.shape[-1], dtype=input.dtype), input.shape).copy()
    if n == 1:
        return input.copy()
    base = input
    if n < 0:
        if input.dtype.kind not in "fc" and input.dtype != dt.bfloat16._np:
            raise RuntimeError(f"linalg.inv: Expected a floating point or complex tensor as input. Got "
                               f"{scalar_type_name(dtype_of(input))}")
        if input.dtype in HALF_TYPES:  # (also for empty matrices, as PyTorch's check comes first)
            raise RuntimeError("linalg.inv: Low precision dtypes not supported. Got "
                               f"{scalar_type_name(dtype_of(input))}")
        try:
            base = _product(np.linalg.inv, input)
        except np.linalg.LinAlgError:
            raise _singular_inverse("linalg.inv", input) from None
        n = -n
    _check_bool("addmm_impl_cpu_", base, empty=base.size == 0)
    # PyTorch's chain of products, each rounded to the dtype like its matmuls.
    steps, result = _power_steps(n)
    values = [base]
    for left, right in steps:
        values.append(_product(np.matmul, values[left], values[right]))
    return values[result]


linalg_matrix_power = alias(
    "linalg_matrix_power", of="matrix_power", function="matrix_power", namespace="tensormodes.linalg",
    renames={"input": "A"}, node="matrix_power",
    samples=(Sample((TensorSpec((3, 3)), 3)), Sample((TensorSpec((2, 2, 2), "float64", 1, 2), -2))),
    doc="""``A`` raised to the integer power ``n`` (its inverse's power for ``n < 0``, the identity
    for ``n = 0``): ``matrix_power`` under its ``linalg`` name.

    >>> import tensormodes as tm
    >>> tm.linalg.matrix_power(tm.tensor([[1, 1], [0, 1]]), 3)
    tensor([[1, 3],
            [0, 1]])
    """)


def _matrix_power_checks(input: np.ndarray, n) -> int:
    """``matrix_power``'s checks of ``n`` and the shape; ``n`` as an int."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    n = int(n)
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    return n


# -- products of pairs: kron and cross; distances; Vandermonde matrices ----------------------------

def _kron_grad(grad, input, other, needs_input_grad):
    # result[i * m + k] = input[i] * other[k] in each dimension (leading ones added to the
    # shorter shape): grad read as (input's, other's) index pairs, summed over the other factor.
    ndim = max(input.dim(), other.dim())
    if ndim == 0:
        return grad * _conj(other), grad * _conj(input)
    a_shape = [1] * (ndim - input.dim()) + list(input.shape)
    b_shape = [1] * (ndim - other.dim()) + list(other.shape)
    paired = grad.reshape([size for pair in zip(a_shape, b_shape) for size in pair])
    grad_input = grad_other = None
    if needs_input_grad[0]:
        spread = _conj(other).reshape([size for b in b_shape for size in (1, b)])
        grad_input = (paired * spread).sum(list(range(1, 2 * ndim, 2))).reshape(input.shape)
    if needs_input_grad[1]:
        spread = _conj(input).reshape([size for a in a_shape for size in (a, 1)])
        grad_other = (paired * spread).sum(list(range(0, 2 * ndim, 2))).reshape(other.shape)
    return grad_input, grad_other


@op(meta=_checked_meta(_no_checks, _kron_shape), grad=_kron_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 2)), TensorSpec((2, 3)))), Sample((TensorSpec((3,), "int64"), TensorSpec((2, 1)))),
    Sample((TensorSpec((2, 1, 2)), TensorSpec((3, 1)))), Sample((TensorSpec(()), TensorSpec((2,)))),
    Sample((TensorSpec((2,), "bool"), TensorSpec((2,), "bool"))), Sample((TensorSpec((2,), "complex64"),
                                                                       TensorSpec((2,), "complex64")))))
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: each element of ``input`` times the whole of ``other``, as blocks
    (the shorter shape gets leading ones; dtypes promote).

    >>> import tensormodes as tm
    >>> tm.kron(tm.tensor([1, 2]), tm.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    # PyTorch's kron reshapes both operands first: a 0-dim one promotes as a dimensioned one
    dtype = operand_dtype(np.atleast_1d(input), np.atleast_1d(other))._np
    return np.asarray(np.kron(input.astype(dtype, copy=False), other.astype(dtype, copy=False)))


def _cross_product(input: np.ndarray, other: np.ndarray, dim: int) -> np.ndarray:
    """linalg.cross's checks and result."""
    # Contiguous, as PyTorch's result (NumPy's along dim 0 is not).
    return np.ascontiguousarray(np.cross(input, other, axis=_cross_checks(input, other, dim)))


def _cross_checks(input: np.ndarray, other: np.ndarray, dim: int) -> int:
    """``cross``'s checks (of shapes and dtypes only); ``dim`` wrapped."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = wrap_dims(dim, input.ndim)[0]
    if input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[axis]} and "
                           f"{other.shape[axis]}")
    check_same_shape_or_broadcast(input.shape, other.shape)
    # PyTorch's kernel is chosen by the first operand's dtype, then reads the second as that type.
    if input.dtype == np.bool_:
        raise not_implemented("cross", dt.bool)
    if input.dtype != other.dtype:
        _scalar_type_mismatch(input, other)
    return axis


def _cross_grad(grad, input, other, dim, needs_input_grad):
    # <grad, a x b> = <a, b x grad> = <b, grad x a>, with conjugates for complex operands.
    cross = ops.linalg.cross
    return (cross(_conj(other), grad, dim=dim) if needs_input_grad[0] else None,
            cross(grad, _conj(input), dim=dim) if needs_input_grad[1] else None)


@op(meta=_linalg_cross_meta,
    errors=(Sample((TensorSpec((2, 4)), TensorSpec((2, 4)))),),
    grad=_cross_grad, name="linalg_cross", function="cross", namespace="tensormodes.linalg",
    out=True, samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3)))),
    Sample((TensorSpec((3, 2), "float64"), TensorSpec((3, 2), "float64")), {"dim": 0}),
    Sample((TensorSpec((2, 3)), TensorSpec((1, 3)))), Sample((TensorSpec((3,), "int64"), TensorSpec((3,), "int64"))),
    Sample((TensorSpec((3,), "complex64"), TensorSpec((3,), "complex64")))))
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the other dimensions broadcast).

    >>> import tensormodes as tm
    >>> tm.linalg.cross(tm.tensor([1., 0., 0.]), tm.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    return _cross_product(input, other, dim)


def _default_cross_dim(shape: tuple) -> int:
    for axis, size in enumerate(shape):
        if size == 3:
            return axis
    raise RuntimeError("no dimension of size 3 in input")


def _top_level_cross_grad(grad, input, other, dim, needs_input_grad):
    return _cross_grad(grad, input, other, _default_cross_dim(tuple(input.shape)) if dim is None else dim,
                       needs_input_grad)


@op(meta=_cross_meta, grad=_top_level_cross_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3)), 1)), Sample((TensorSpec((3, 2)), TensorSpec((3, 2))), {"dim": 0}),
    Sample((TensorSpec((3,), "int64"), TensorSpec((3,), "int64"), -1))))
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``tensormodes.linalg.cross`` along ``dim``; without it, along the first dimension of size 3
    (deprecated, with PyTorch's warning).

    >>> import tensormodes as tm
    >>> tm.cross(tm.tensor([[1, 0, 0]]), tm.tensor([[0, 1, 0]]), dim=1)
    tensor([[0, 0, 1]])
    """
    return _cross_product(input, other, _cross_dim(input, other, dim))


def _cross_dim(input: np.ndarray, other: np.ndarray, dim: int | None) -> int:
    """``dim``, or (with PyTorch's deprecation warning) the first dim of size 3."""
    if dim is None:
        warnings.warn("Using tensormodes.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                      "dim explicitly or simply use tensormodes.linalg.cross.\nThe default value of dim will change "
                      "to agree with that of linalg.cross in a future release.", UserWarning, stacklevel=4)
        dim = _default_cross_dim(np.broadcast_shapes(input.shape, other.shape) if input.ndim == other.ndim
                                 else input.shape)
    return dim


def _cdist_grad(grad, x1, x2, result, p, needs_input_grad):
    if not ops.is_grad_enabled():
        # PyTorch's formula: its backward op for each input (x2's over the transposed gradient and distances)
        backward = ops.ops.aten._cdist_backward.default
        return (backward(grad.contiguous(), x1, x2, p, result) if needs_input_grad[0] else None,
                backward(grad.mT.contiguous(), x2, x1, p, result.mT.contiguous()) if needs_input_grad[1] else None)
    # With create_graph (PyTorch has no derivative of _cdist_backward): the same values through public ops.
    difference = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == math.inf:
        # PyTorch's kernel: every coordinate at the maximum gets the whole gradient (ties are not
        # shared, unlike norm's), NaN where the gap to the distance is NaN (an infinite coordinate).
        gap = (difference.abs() - result.unsqueeze(-1)).abs().ceil()
        spread = grad.unsqueeze(-1) * difference.sign() * (1 - gap.clamp(max=1))
        return (spread.sum(-2) if needs_input_grad[0] else None, -spread.sum(-3) if needs_input_grad[1] else None)
    # Through the norm of the pairwise differences (reduction's norm gradient, any other p).
    spread = _norm_grad(grad, difference, result, p, -1, False)
    if spread is None:  # p = 0 counts: a zero gradient (PyTorch's, unlike norm's none)
        spread = ops.zeros_like(difference)  # (not difference * 0: NaN at an infinite coordinate)
    return (spread.sum(-2) if needs_input_grad[0] else None, -spread.sum(-3) if needs_input_grad[1] else None)


@op(meta=_cdist_meta,
    errors=(Sample((TensorSpec((3, 2)), TensorSpec((4, 3)))),), grad=_cdist_grad, samples=(
    Sample((TensorSpec((3, 2)), TensorSpec((4, 2)))),
    Sample((TensorSpec((2, 3), "float64"), TensorSpec((2, 3), "float64"), 1.0)),
    Sample((TensorSpec((2, 2, 3)), TensorSpec((3, 3))), {"p": 3.0}),
    Sample((TensorSpec((3, 2)), TensorSpec((2, 2)), float("inf"))),
    Sample((TensorSpec((0, 2)), TensorSpec((2, 2)))), Sample((TensorSpec((2, 2)), TensorSpec((2, 2)), 0.0))))
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` and each row of ``x2`` (batch
    dimensions broadcast): ``result[..., i, j] = norm(x1[..., i, :] - x2[..., j, :], p)``.

    >>> import tensormodes as tm
    >>> tm.cdist(tm.tensor([[0., 0.], [3., 4.]]), tm.tensor([[0., 0.]]))
    tensor([[0.],
            [5.]])
    """
    shape, route = _cdist_route(x1, x2, p, compute_mode)
    if route == "empty":
        return np.empty(shape, x1.dtype)
    if route == "zeros":
        return np.zeros(shape, x1.dtype)
    if route == "mm":
        return _euclidean_through_products(x1, x2)
    difference = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        result = np.count_nonzero(difference, axis=-1).astype(x1.dtype)
    elif p == math.inf:
        result = difference.max(axis=-1, initial=0)
    elif p == 1:
        result = difference.sum(axis=-1)
    elif p == 2:
        result = np.sqrt(np.einsum("...k,...k->...", difference, difference))
    else:
        result = (difference ** p).sum(axis=-1) ** (1 / p)
    return np.asarray(result, dtype=x1.dtype)


def _cdist_backward_meta(grad, x1, x2, p, cdist):
    batch = tuple(check_same_shape_or_broadcast(x1.shape[:-2], x2.shape[:-2]))
    return MetaArray(batch + x1.shape[-2:], x1.dtype)


@op(function=False, aten="default", meta=rule(_cdist_backward_meta), differentiable=False, samples=tuple(
    Sample((TensorSpec((3, 4)), TensorSpec((3, 2)), TensorSpec((4, 2)), p, TensorSpec((3, 4), low=0.5)))
    for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf)) + (
    Sample((TensorSpec((2, 3, 4), "float64"), TensorSpec((3, 2), "float64"), TensorSpec((2, 4, 2), "float64"), 2.0,
            TensorSpec((2, 3, 4), "float64", 0.5))),))
def _cdist_backward(grad: Tensor, x1: Tensor, x2: Tensor, p: float, cdist: Tensor) -> Tensor:
    """The gradient of ``cdist(x1, x2, p)`` (whose result is ``cdist``) with respect to ``x1``, for
    output gradient ``grad``, batch dimensions broadcast (autograd sums them back): PyTorch's kernel,
    term for term (0 where a distance is 0).

    >>> import tensormodes as tm
    >>> x1, x2 = tm.tensor([[0.0, 0.0], [3.0, 4.0]]), tm.tensor([[0.0, 0.0]])
    >>> tm.ops.aten._cdist_backward.default(tm.ones(2, 1), x1, x2, 2.0, tm.cdist(x1, x2))
    tensor([[0.0000, 0.0000],
            [0.6000, 0.8000]])
    """
    batch = tuple(check_same_shape_or_broadcast(x1.shape[:-2], x2.shape[:-2]))
    x1 = np.broadcast_to(x1, batch + x1.shape[-2:])
    difference = x1[..., :, None, :] - np.broadcast_to(x2, batch + x2.shape[-2:])[..., None, :, :]
    distance, g = cdist[..., None], grad[..., None]
    with quiet():
        if p == 0:
            terms = np.zeros_like(difference)
        elif p == 1:
            terms = g * np.sign(difference)
        elif p < 2:
            terms = np.where((distance == 0) | ((difference == 0) & (p < 1)), 0,
                             np.sign(difference) * np.abs(difference) ** (p - 1) * g / distance ** (p - 1))
        elif p == 2:
            terms = np.where(distance == 0, 0, g * difference / distance)
        elif p == math.inf:
            terms = g * np.sign(difference) * (1 - np.minimum(1, np.ceil(np.abs(np.abs(difference) - distance))))
        else:
            terms = np.where(distance == 0, 0, difference * np.abs(difference) ** (p - 2) * g / distance ** (p - 1))
    return np.asarray(terms.sum(-2), dtype=x1.dtype)


def _check_pdist(input, p) -> None:
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input.dtype.kind != "f" and input.dtype not in HALF_TYPES:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input.dtype in HALF_TYPES:
        raise not_implemented("pdist", dtype_of(input))


def _pdist_meta(input, p=2):
    _check_pdist(input, p)
    rows = input.shape[0]
    return MetaArray((rows * (rows - 1) // 2,), input.dtype)


def _pdist_grad(grad, input, p, result):
    # Each pair's gradient, +- on its two rows: sign(d) |d|^(p-1) / dist^(p-1) (0 where dist is 0).
    rows = input.shape[0]
    first, second = ops.triu_indices(rows, rows, 1, device=input.device)
    difference = input[first] - input[second]
    distance = result.unsqueeze(-1)
    if p == 0:
        return ops.zeros_like(input)
    if p == 1:
        slope = difference.sign()
    elif p == math.inf:
        slope = difference.sign() * (difference.abs() == distance)
    else:
        slope = difference.sign() * difference.abs().pow(p - 1) / distance.pow(p - 1)
        slope = slope.masked_fill(distance == 0, 0)
    share = slope * grad.unsqueeze(-1)
    return ops.zeros_like(input).index_add(0, first, share).index_add(0, second, -share)


@op(meta=rule(_pdist_meta), grad=_pdist_grad,
    errors=(Sample((TensorSpec((3,)),)), Sample((TensorSpec((3, 2), "int64"),)), Sample((TensorSpec((3, 2)), -1.0)),
            Sample((TensorSpec((3, 2), "float16"),))),
    samples=(Sample((TensorSpec((4, 3)),)), Sample((TensorSpec((3, 2), "float64"), 1.0)),
             Sample((TensorSpec((3, 4), "float64"),), {"p": 3.0}), Sample((TensorSpec((3, 2), "float64"), math.inf)),
             Sample((TensorSpec((3, 2)), 0.0)), Sample((TensorSpec((1, 2)),)), Sample((TensorSpec((3, 0)),))),
    aten="_pdist_forward.default", tags=("core",))
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between every pair of rows of the 2-D ``input``, as the upper
    triangle (row pairs ``i < j`` in order) of ``cdist(input, input, p)``.

    >>> import tensormodes as tm
    >>> tm.pdist(tm.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]))
    tensor([5.0000, 1.4142, 3.6056])
    """
    _check_pdist(input, p)
    first, second = np.triu_indices(input.shape[0], 1)
    difference = np.abs(input[first] - input[second])
    if p == 0:
        result = np.count_nonzero(difference, axis=-1).astype(input.dtype)
    elif p == math.inf:
        result = difference.max(axis=-1, initial=0)
    elif p == 1:
        result = difference.sum(axis=-1)
    elif p == 2:
        result = np.sqrt(np.einsum("...k,...k->...", difference, difference))
    else:
        result = (difference ** p).sum(axis=-1) ** (1 / p)
    return np.asarray(result, dtype=input.dtype)

def _cdist_checks(x1: np.ndarray, x2: np.ndarray, p) -> None:
    """``cdist``'s checks (of shapes, dtypes and ``p``)."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind != "f" and x.dtype not in HALF_TYPES:  # ml_dtypes' bfloat16 is of kind "V"
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {scalar_type_name(dtype_of(x))}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _cdist_route(x1, x2, p, compute_mode) -> tuple[tuple[int, ...], str]:
    """``cdist``'s checks in PyTorch's order, the result's shape and how PyTorch computes it:
    ``"empty"`` (no rows), ``"zeros"`` (no columns), ``"mm"`` (Euclidean distances through a
    matrix product) or ``"direct"`` (the kernel over the differences)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    _cdist_checks(x1, x2, p)
    batch = tuple(check_same_shape_or_broadcast(x1.shape[:-2], x2.shape[:-2]))
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    shape = batch + (rows1, rows2)
    if rows1 == 0 or rows2 == 0 or math.prod(batch) == 0:
        return shape, "empty"
    if x1.shape[-1] == 0:
        return shape, "zeros"
    mode = _CDIST_MODES[compute_mode]
    if p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25))):
        if x1.dtype != x2.dtype:
            if len(shape) > 2:  # PyTorch's batched product's words
                _scalar_type_mismatch(x2, x1)
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{cpp_type_name(dtype_of(x1))} != {cpp_type_name(dtype_of(x2))}")
        return shape, "mm"
    if x1.dtype in HALF_TYPES:  # PyTorch's kernel is chosen by x1's dtype before comparing x2's
        raise not_implemented("cdist", dtype_of(x1))
    if x1.dtype != x2.dtype:
        _scalar_type_mismatch(x1, x2)
    return shape, "direct"


def _scalar_type_mismatch(expected: np.ndarray, found: np.ndarray) -> None:
    raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(expected))} but found "
                       f"{scalar_type_name(dtype_of(found))}")


def _euclidean_through_products(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """PyTorch's Euclidean distances through one matrix product (its route for p = 2 with many
    rows): sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)), each step rounded to the dtype as PyTorch does."""
    dtype = x1.dtype
    work = np.float32 if dtype in HALF_TYPES else dtype  # half steps accumulate in float32
    squares1 = np.square(x1).astype(work).sum(-1, keepdims=True).astype(dtype)
    squares2 = np.square(x2).astype(work).sum(-1, keepdims=True).astype(dtype)
    left = np.concatenate([(x1 * dtype.type(-2)), squares1, np.ones_like(squares1)], axis=-1)
    right = np.concatenate([x2, np.ones_like(squares2), squares2], axis=-1)
    product = np.matmul(left.astype(work), np.swapaxes(right, -1, -2).astype(work)).astype(dtype)
    return np.sqrt(np.maximum(product, dtype.type(0)).astype(work)).astype(dtype)


def _vander_differentiable(x, N, increasing) -> bool:
    # Columns x ** 0 alone are constants: PyTorch's result then has no history.
    return (x.shape[0] if N is None else N) > 1


def _vander_grad(grad, x, result, N, increasing):
    count = result.shape[-1]
    exponents = ops.arange(count, dtype=x.real.dtype if x.is_complex() else x.dtype, device=x.device)
    if not increasing:
        exponents = exponents.flip(0)
    # d x^e = e x^(e - 1); the clamp keeps x^-1 (infinite at 0) out of the e = 0 column.
    local = exponents * x.unsqueeze(-1) ** (exponents - 1).clamp(min=0)
    return (grad * _conj(local)).sum(-1)


@op(meta=_vander_meta, grad=_vander_grad, differentiable=_vander_differentiable, samples=(
    Sample((TensorSpec((3,)),)), Sample((TensorSpec((4,), "int64", -3, 3), 3)), Sample((TensorSpec((3,), "float64"),),
                                                                                  {"N": 4, "increasing": True}),
    Sample((TensorSpec((2,), "bool"),)), Sample((TensorSpec((2,)), 0)), Sample((TensorSpec((2,), "complex64"),))))
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1)``, ..., ``x ** 0`` (the
    other way round with ``increasing``); ``N`` defaults to ``len(x)``. Integers give int64.

    >>> import tensormodes as tm
    >>> tm.vander(tm.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    count = x.shape[0] if N is None else N
    if count < 0:
        raise RuntimeError("N must be non-negative.")
    values = x.astype(np.int64) if x.dtype.kind in "biu" else x
    result = np.ones((x.shape[0], count), values.dtype)
    if count > 1:
        # PyTorch's cumprod (half types accumulate in float32, complex products step by step)
        result[:, 1:] = _scan(np.multiply, "cumprod", np.repeat(values[:, None], count - 1, axis=1), 1, None)
    return np.asarray(result if increasing else result[:, ::-1].copy())
