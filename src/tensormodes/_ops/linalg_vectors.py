"""Vector operations of linear algebra: the rank-one update ``addr`` (``beta * input + alpha *
outer(vec1, vec2)``), the distance ``dist`` (the ``p``-norm of a difference) and ``renorm``, which
scales the slices of a tensor whose ``p``-norm exceeds ``maxnorm`` down to it. The norms are
``linalg.vector_norm``'s kernel and gradient.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._reduction import _checked_meta
from .common import HALF_TYPES, check_same_shape_or_broadcast, dtype_of, operand_dtype, ops, scalar_type_name, wrap_dim
from .common import conjugate as _conj
from .meta_rules import rule
from .norm_kernels import _vector_norm
from .norms import _vector_norm_grad
from .products import _check_expandable, _coefficient
from .registry import Sample, Tensor, TensorSpec, op

# -- addr -------------------------------------------------------------------------------------------


def _addr_checks(input, vec1, vec2, beta, alpha) -> tuple[dt.dtype, tuple[int, int]]:
    _addr_shape_checks(input, vec1, vec2)
    dtype = operand_dtype(input, vec1, vec2)
    target = (vec1.shape[0], vec2.shape[0])
    if dtype._category == dt._INT and dtype is not dt.bool:
        for name, value in (("alpha", alpha), ("beta", beta)):
            if isinstance(value, (float, complex)):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    return dtype, target


def _addr_grad(grad, vec1, vec2, beta, alpha, needs_input_grad):
    # PyTorch's: beta and alpha conjugated, each skipped where it is 1
    grad_input = _scaled(grad, beta) if needs_input_grad[0] else None
    grad_vec1 = _scaled(grad.mv(_conj(vec2)), alpha) if needs_input_grad[1] else None
    grad_vec2 = _scaled(grad.t().mv(_conj(vec1)), alpha) if needs_input_grad[2] else None
    return grad_input, grad_vec1, grad_vec2


def _scaled(grad, coefficient):
    """``grad`` times the conjugated coefficient, or ``grad`` itself for 1 (PyTorch's maybe_multiply)."""
    if coefficient == 1:
        return grad
    return grad * (coefficient.conjugate() if isinstance(coefficient, complex) else coefficient)


def _addr_shape_checks(input, vec1, vec2, *, beta=1, alpha=1) -> None:
    for name, vector in (("vec1", vec1), ("vec2", vec2)):
        if vector.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {vector.ndim}-D")
    _check_expandable(input, (vec1.shape[0], vec2.shape[0]))


def _addr_shape(input, vec1, vec2, *, beta=1, alpha=1):
    return vec1.shape[0], vec2.shape[0]


def _addr_in_place(result: np.ndarray, target: np.ndarray, inplace: bool) -> None:
    """``addr_``'s ``self`` must be the outer product's matrix already (PyTorch's own words)."""
    if not inplace:
        return
    if target.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {target.ndim}D tensor for input")
    if target.shape != result.shape:
        raise RuntimeError(f"size mismatch, input: {list(target.shape)}, v1: [{result.shape[0]}], "
                           f"v2: [{result.shape[1]}]")


@op(grad=_addr_grad, meta=_checked_meta(_addr_shape_checks, _addr_shape), method=True, inplace=True, out=True,
    written_check=_addr_in_place,
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((2, 1)), TensorSpec((3,)))),
            Sample((TensorSpec((3, 3)), TensorSpec((2,)), TensorSpec((3,))))),
    samples=(Sample((TensorSpec((2, 3)), TensorSpec((2,)), TensorSpec((3,)))),
             Sample((TensorSpec((3,), "float64"), TensorSpec((2,), "float64"), TensorSpec((3,), "float64")),
                    {"beta": 0.5, "alpha": 2}),
             Sample((TensorSpec((2, 2), "int64"), TensorSpec((2,), "int64"), TensorSpec((2,), "int64")),
                    {"beta": 2, "alpha": 3}),
             Sample((TensorSpec((2, 3), "bool"), TensorSpec((2,), "bool"), TensorSpec((3,), "bool"))),
             Sample((TensorSpec((2, 2), "complex64"), TensorSpec((2,), "complex64"), TensorSpec((2,), "complex64")),
                    {"alpha": 1j}),
             Sample((TensorSpec((2, 3), "float16"), TensorSpec((2,), "float16"), TensorSpec((3,), "float16")),
                    {"alpha": 0.7}),
             Sample((TensorSpec((2, 3)), TensorSpec((2,), "float64"), TensorSpec((3,))), {"beta": 0})))
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)`` (``input`` broadcast to the outer product's
    shape; dtypes promote). ``beta=0`` ignores ``input`` (NaN included); for bool tensors the
    sum is ``or`` and the products ``and``.

    >>> import tensormodes as tm
    >>> tm.addr(tm.zeros(2, 2), tm.tensor([1., 2.]), tm.tensor([3., 4.]), alpha=2)
    tensor([[ 6.,  8.],
            [12., 16.]])
    """
    dtype, target = _addr_checks(input, vec1, vec2, beta, alpha)
    if dtype is dt.bool:
        product = np.logical_and.outer(vec1, vec2) & bool(alpha)
        result = product | (input.astype(bool) & bool(beta)) if beta else product
        return np.broadcast_to(result, target).copy()
    beta, alpha = _coefficient(beta, dtype), _coefficient(alpha, dtype)
    compute = np.dtype(np.float32 if dtype._np in HALF_TYPES else dtype._np).type
    first, second = vec1.astype(compute)[:, None], vec2.astype(compute)[None, :]
    # PyTorch's kernel: alpha * vec1 * vec2 + beta * input, left to right
    result = (first * compute(alpha) if alpha != 1 else first) * second
    if beta != 0:
        scaled = input.astype(compute)
        result = result + (scaled * compute(beta) if beta != 1 else scaled)
    return np.broadcast_to(result, target).astype(dtype._np)


# -- dist -------------------------------------------------------------------------------------------

def _difference(input: np.ndarray, other: np.ndarray) -> np.ndarray:
    check_same_shape_or_broadcast(input.shape, other.shape)
    bools = (input.dtype == np.bool_) + (other.dtype == np.bool_)
    if bools == 2:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if bools == 1:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    dtype = operand_dtype(input, other)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{scalar_type_name(dtype)} instead.")
    return np.subtract(input.astype(dtype._np), other.astype(dtype._np))


def _dist_grad(grad, input, other, result, p, needs_input_grad):
    local = _vector_norm_grad(grad, input - other, result, p, None, False)
    return (local if needs_input_grad[0] else None), (-local if needs_input_grad[1] else None)


def _dist_checks(input, other, p=2) -> None:
    check_same_shape_or_broadcast(input.shape, other.shape)


def _dist_shape(input, other, p=2):
    return ()


@op(grad=_dist_grad, meta=_checked_meta(_dist_checks, _dist_shape), method=True, schema={"p": "Scalar=2"},
    errors=(Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"))),),
    samples=(Sample((TensorSpec((2, 3)), TensorSpec((3,)))),
             Sample((TensorSpec((4,), "float64"), TensorSpec((4,), "float64"), 3)),
             Sample((TensorSpec((2, 3)), TensorSpec((2, 3))), {"p": 1}),
             Sample((TensorSpec((3,), "complex64"), TensorSpec((3,), "complex64"))),
             Sample((TensorSpec((3,), "float16"), TensorSpec((3,), "float16")))))
def dist(input: Tensor, other: Tensor, p: Number = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` over all elements (operands broadcast; ``p`` as
    ``linalg.vector_norm``'s ``ord``).

    >>> import tensormodes as tm
    >>> tm.dist(tm.tensor([1., 2.]), tm.tensor([4., 6.]))
    tensor(5.)
    """
    return _vector_norm(_difference(input, other), p, None, False, None)


# -- renorm -----------------------------------------------------------------------------------------

def _renorm_checks(input, p, dim, maxnorm) -> tuple[int, ...]:
    if isinstance(p, complex) or p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex) or maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    axis = wrap_dim(dim, input.ndim)
    if not (input.dtype.kind in "fc" or input.dtype in HALF_TYPES):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(dtype_of(input))}")
    return tuple(d for d in range(input.ndim) if d != axis)


def _accumulate_type(input: np.ndarray):
    return dt.float32 if input.dtype in HALF_TYPES else None


def _renorm_grad(grad, input, p, dim, maxnorm):
    # PyTorch's renorm_backward: where a slice was scaled, the scale's own derivative too
    dims = tuple(d for d in range(input.dim()) if d != wrap_dim(dim, input.dim()))
    wide = input.float() if input.dtype in (dt.float16, dt.bfloat16) else input
    norm = ops.linalg.vector_norm(wide, p, dims, True)
    along = (_conj(input) * grad)
    along = (along.real if along.is_complex() else along).sum(dims, keepdim=True)
    norm_grad = _vector_norm_grad(along.to(norm.dtype), wide, norm, p, dims, True)
    inverse = (norm + 1e-7).reciprocal()
    scaled = grad * (inverse * maxnorm) - (maxnorm * inverse.pow(2)) * norm_grad
    return scaled.where(norm > maxnorm, grad).to(input.dtype)


def _renorm_meta(input, p, dim, maxnorm):
    _renorm_checks(input, p, dim, maxnorm)
    return MetaArray(input.shape, input.dtype)


@op(grad=_renorm_grad, meta=rule(_renorm_meta), method=True, inplace=True, out=True,
    schema={"p": "Scalar", "maxnorm": "Scalar"},
    errors=(Sample((TensorSpec((3,)), 2, 0, 1.0)), Sample((TensorSpec((2, 3)), 0, 0, 1.0))),
    samples=(Sample((TensorSpec((2, 3)), 2, 0, 1.0)), Sample((TensorSpec((3, 2, 2), "float64"), 1, 1, 0.5)),
             Sample((TensorSpec((2, 3)), float("inf"), -1, 1.0)), Sample((TensorSpec((2, 3), "complex64"), 2, 0, 0.5)),
             Sample((TensorSpec((2, 3), "float16"), 3, 1, 1.0)), Sample((TensorSpec((2, 3)), 2, 0, 100.0))))
def renorm(input: Tensor, p: Number, dim: int, maxnorm: Number) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled by
    ``maxnorm / (norm + 1e-7)``; the others unchanged.

    >>> import tensormodes as tm
    >>> tm.renorm(tm.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    dims = _renorm_checks(input, p, dim, maxnorm)
    accumulate = _accumulate_type(input)
    norm = _vector_norm(input, p, dims, True, accumulate)
    bound = norm.dtype.type(maxnorm)
    with np.errstate(all="ignore"):
        factor = np.where(norm > bound, bound / (norm + norm.dtype.type(1e-7)), norm.dtype.type(1))
    return np.multiply(input, factor.astype(input.real.dtype))
