"""Products of vectors, matrices and batches (``matmul``, ``mm``, ``bmm``, ``mv``, ``dot``, ``outer``,
``inner``, ``tensordot``, ``addmm``), ``trace``, ``matrix_power``, ``kron``, ``cross``, ``cdist`` and
``vander``.

PyTorch does not promote in matrix products: operands must share a dtype, and each product
checks shapes and dtypes with its own message, which the kernels here reproduce. Integer
products work (wrapping on overflow), bool ones do not (except where no multiplication
happens). Half-precision products accumulate in float32, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._reduction import _checked_meta, _kernel_rule, _no_checks, _norm_grad, _probe_quietly
from .common import (
    HALF_TYPES,
    adjoint,
    array_of,
    binary,
    check_same_shape_or_broadcast,
    cpp_type_name,
    dtype_of,
    not_implemented,
    operand_dtype,
    ops,
    recordable,
    scalar_type_name,
    shape_text,
    wrap_dims,
)
from .common import conjugate as _conj
from .creation import checked_fill_value
from .meta_rules import rule, with_shape
from .registry import OWN, Dunder, Sample, Tensor, TensorSpec, alias, op


def _compute(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Operands as NumPy should multiply them: half types widened to float32."""
    return tuple(a.astype(np.float32) if a.dtype in HALF_TYPES else a for a in arrays)


def _product(func, *arrays: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """``func(*arrays)`` in PyTorch's precision, as an ndarray of ``dtype`` (default: the first operand's)."""
    result = np.asarray(func(*_compute(*arrays)))
    target = arrays[0].dtype if dtype is None else dtype
    return result if result.dtype == target else result.astype(target)


def _check_bool(kernel_name: str, *arrays: np.ndarray, empty: bool = False) -> None:
    """PyTorch's matrix kernels have no bool version (they are skipped when nothing is multiplied)."""
    if arrays[0].dtype == np.bool_ and not empty:
        raise not_implemented(kernel_name, dt.bool)


def _count(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _inverse(order: list[int]) -> list[int]:
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    return inverse


# -- meta rules (see _meta): the kernels' own checks, which read only shapes and dtypes, run on
# the MetaArrays; the dtype comes from a probe (sizes clamped to 1, so the shapes still agree).

def _rows(shape: tuple, dtype) -> MetaArray:
    return MetaArray(shape, dtype)


@_kernel_rule
def _matmul_meta(kernel, input, other):
    a_dims, b_dims = input.ndim, other.ndim
    if a_dims == 0 or b_dims == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a_dims}D and "
                           f"{b_dims}D")
    if a_dims == 1 and b_dims == 1:
        _dot_checks(input, other)
        shape = ()
    elif a_dims == 2 and b_dims == 1:
        _mv_checks(input, other)
        shape = input.shape[:1]
    elif a_dims <= 2 and b_dims == 2:
        _mm_checks(_rows((1, input.shape[0]), input.dtype) if a_dims == 1 else input, other)
        shape = input.shape[:-1] + other.shape[1:]
    elif a_dims >= 3 and b_dims <= 2:
        folded = _rows((math.prod(input.shape[:-1]), input.shape[-1]), input.dtype)
        if b_dims == 1:
            _mv_checks(folded, other)
        else:
            _mm_checks(folded, other)
        shape = input.shape[:-1] + other.shape[1:]
    else:
        a_matrix = (1, input.shape[0]) if a_dims == 1 else input.shape
        b_matrix = (other.shape[0], 1) if b_dims == 1 else other.shape
        batch = tuple(check_same_shape_or_broadcast(a_matrix[:-2], b_matrix[:-2]))
        count = math.prod(batch)
        _bmm_checks(_rows((count, *a_matrix[-2:]), input.dtype), _rows((count, *b_matrix[-2:]), other.dtype),
                    empty_allowed=False)
        shape = batch + (a_matrix[-2],) * (a_dims > 1) + (b_matrix[-1],) * (b_dims > 1)
    return with_shape(_probe_quietly(kernel, input, other), shape)


def _mm_all_checks(input, mat2, out_dtype=None):
    if out_dtype is not None:
        raise NotImplementedError(_OUT_DTYPE_ERROR.format("mm"))
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _mm_checks(input, mat2)


def _mm_shape(input, mat2, out_dtype=None):
    return (input.shape[0], mat2.shape[1])


def _bmm_all_checks(input, mat2, out_dtype=None):
    if out_dtype is not None:
        raise NotImplementedError(_OUT_DTYPE_ERROR.format("bmm"))
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return _bmm_checks(input, mat2)


def _bmm_meta(input, mat2, out_dtype=None) -> MetaArray:
    return MetaArray((input.shape[0], input.shape[1], mat2.shape[2]), _bmm_all_checks(input, mat2, out_dtype))


def _mv_all_checks(input, vec):
    if input.ndim == 0:  # PyTorch sizes its result by ``input.size(0)`` before any check
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _mv_checks(input, vec)


def _mv_shape(input, vec):
    return input.shape[:1]


def _dot_shape(input, other):
    return ()


def _outer_shape(input, vec2):
    return input.shape + vec2.shape


@_kernel_rule
def _inner_meta(kernel, input, other):
    if input.ndim and other.ndim:
        _inner_checks(input, other)
        shape = input.shape[:-1] + other.shape[:-1]
    else:
        shape = tuple(check_same_shape_or_broadcast(input.shape, other.shape))
    return with_shape(_probe_quietly(kernel, input, other), shape)


@_kernel_rule
def _tensordot_meta(kernel, a, b, dims=2):
    wrapped_a, wrapped_b = _tensordot_checks(a, b, dims)
    shape = tuple(s for d, s in enumerate(a.shape) if d not in wrapped_a) + \
        tuple(s for d, s in enumerate(b.shape) if d not in wrapped_b)
    # The probe contracts what the real product does (clamped sizes still match).
    return with_shape(_probe_quietly(kernel, a, b, dims), shape)


@_kernel_rule
def _addmm_meta(kernel, input, mat1, mat2, *, beta=1, alpha=1):
    target = _addmm_checks(input, mat1, mat2)
    return with_shape(_probe_quietly(kernel, input, mat1, mat2, beta=beta, alpha=alpha), tuple(target))


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


@_kernel_rule
def _cdist_meta(kernel, x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    _cdist_checks(x1, x2, p)
    batch = tuple(check_same_shape_or_broadcast(x1.shape[:-2], x2.shape[:-2]))
    return with_shape(_probe_quietly(kernel, x1, x2, p, compute_mode), batch + (x1.shape[-2], x2.shape[-2]))


@_kernel_rule
def _vander_meta(kernel, x, N=None, increasing=False):
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    count = x.shape[0] if N is None else N
    if count < 0:
        raise RuntimeError("N must be non-negative.")
    return with_shape(_probe_quietly(kernel, x, None, increasing), (x.shape[0], count))


# -- the product family, one PyTorch error vocabulary each ------------------------------------------------

def _mm_checks(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({shape_text(a.shape)} and "
                           f"{shape_text(b.shape)})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_type_name(dtype_of(a))} != "
                           f"{cpp_type_name(dtype_of(b))}")
    _check_bool("addmm_impl_cpu_", a, empty=a.shape[1] == 0 or a.shape[0] * b.shape[1] == 0)


def _mv_checks(matrix: np.ndarray, vector: np.ndarray) -> None:
    if matrix.shape[1] != vector.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({matrix.shape[0]}), mat ({shape_text(matrix.shape)}), "
                           f"vec ({vector.shape[0]})")
    if matrix.dtype != vector.dtype:
        vec, mat = scalar_type_name(dtype_of(vector)), scalar_type_name(dtype_of(matrix))
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {vec}, {mat}, and {vec}")
    _check_bool("addmv_impl_cpu", matrix, empty=matrix.size == 0)


def _dot_checks(a: np.ndarray, b: np.ndarray, kernel_name: str = "dot") -> None:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(dtype_of(a))} and {scalar_type_name(dtype_of(b))}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                           f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                           "respectively")
    _check_bool(kernel_name, a)


def _bmm_checks(a: np.ndarray, b: np.ndarray, empty_allowed: bool = True) -> np.dtype:
    """bmm's checks; the result's dtype. A product with no result or nothing to add up never
    reaches PyTorch's kernel: its result (of ``b``'s dtype, as PyTorch makes it) is zeros.
    ``empty_allowed=False``: matmul's, which may fold its operands into an ``mm`` that checks
    their dtypes first (not modelled: the dtypes must agree)."""
    batch, k = a.shape[0], a.shape[2]
    if b.shape[0] != batch or b.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: "
                           f"[{b.shape[0]}, {b.shape[1]}].")
    mismatch = RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(a))} but found "
                            f"{scalar_type_name(dtype_of(b))}")
    if k == 0 or a.shape[0] * a.shape[1] * b.shape[2] == 0:
        if empty_allowed:
            return b.dtype
        if a.dtype != b.dtype:
            raise mismatch
        return a.dtype
    _check_bool("bmm", a)  # (the kernel is chosen by the first operand's dtype, then reads the second's)
    if a.dtype != b.dtype:
        raise mismatch
    return a.dtype


def _batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``matmul`` of operands with batch dimensions: batches broadcast, then a bmm."""
    a_matrix = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b_matrix = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    batch = check_same_shape_or_broadcast(a_matrix.shape[:-2], b_matrix.shape[:-2])
    count = int(np.prod(batch, dtype=np.int64))
    a3 = np.broadcast_to(a_matrix, (*batch, *a_matrix.shape[-2:])).reshape(count, *a_matrix.shape[-2:])
    b3 = np.broadcast_to(b_matrix, (*batch, *b_matrix.shape[-2:])).reshape(count, *b_matrix.shape[-2:])
    _bmm_checks(a3, b3, empty_allowed=False)
    result = _product(np.matmul, a3, b3).reshape(*batch, a_matrix.shape[-2], b_matrix.shape[-1])
    if a.ndim == 1:
        result = result[..., 0, :]
    if b.ndim == 1:
        result = result[..., 0]
    return result


def _matmul_grad(grad, input, other, needs_input_grad):
    # Only the gradients an input needs (x @ w with a constant w costs one product, not two).
    want_input, want_other = needs_input_grad
    if input.dim() == 1 and other.dim() == 1:
        return (grad * _conj(other) if want_input else None), (grad * _conj(input) if want_other else None)
    a = input.unsqueeze(0) if input.dim() == 1 else input
    b = other.unsqueeze(-1) if other.dim() == 1 else other
    if input.dim() == 1:
        grad = grad.unsqueeze(-2)
    if other.dim() == 1:
        grad = grad.unsqueeze(-1)
    grad_a = grad.matmul(adjoint(b)) if want_input else None
    grad_b = adjoint(a).matmul(grad) if want_other else None
    if grad_a is not None and input.dim() == 1:
        grad_a = grad_a.squeeze(-2)
    if grad_b is not None and other.dim() == 1:
        grad_b = grad_b.squeeze(-1)
    return grad_a, grad_b


@op(meta=_matmul_meta,
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((4, 2)))),
            Sample((TensorSpec((2, 2, 3)), TensorSpec((3, 3, 2)))),
            Sample((TensorSpec((2, 3)), TensorSpec((3,), "float64")))),
    grad=_matmul_grad, method=True, out=True, ufunc=np.matmul,
    dunders=(Dunder("__matmul__"), Dunder("__rmatmul__", OWN, reflected=True)),
    samples=(Sample((TensorSpec((2, 3)), TensorSpec((3, 4)))), Sample((TensorSpec((3,)), TensorSpec((3,)))),
             Sample((TensorSpec((2, 2, 3)), TensorSpec((3, 2)))), Sample((TensorSpec((2, 3)), TensorSpec((3,)))),
             Sample((TensorSpec((3,)), TensorSpec((3, 4)))), Sample((TensorSpec((3,)), TensorSpec((2, 3, 4)))),
             Sample((TensorSpec((2, 1, 2, 3)), TensorSpec((3, 3, 2)))),
             Sample((TensorSpec((2, 3), "int64"), TensorSpec((3, 2), "int64"))),
             Sample((TensorSpec((4, 3), "float16"), TensorSpec((3,), "float16"))),
             Sample((TensorSpec((2, 3), "complex64"), TensorSpec((3, 2), "complex64"))),
             Sample((TensorSpec((3, 0), "bool"), TensorSpec((0, 3), "bool"))),
             Sample((TensorSpec((2, 2, 3), "int32"), TensorSpec((3,), "int32")))))
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product of two tensors.

    1-D operands are vectors (a dot product for two of them), 2-D ones matrices,
    and higher ones batches of matrices whose batch dimensions broadcast. Both
    operands must have the same dtype.

    >>> import tensormodes as tm
    >>> tm.tensor([[1., 2.]]) @ tm.tensor([[3.], [4.]])
    tensor([[11.]])
    >>> tm.matmul(tm.ones(5, 2, 3), tm.ones(3)).shape
    tensormodes.Size([5, 2])
    """
    a_dims, b_dims = input.ndim, other.ndim
    if a_dims == 0 or b_dims == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a_dims}D and "
                           f"{b_dims}D")
    if a_dims == 1 and b_dims == 1:
        _dot_checks(input, other)
        return _product(np.dot, input, other)
    if a_dims == 2 and b_dims == 1:
        _mv_checks(input, other)
        return _product(np.matmul, input, other)
    if a_dims <= 2 and b_dims == 2:
        _mm_checks(input.reshape(1, input.shape[0]) if a_dims == 1 else input, other)
        return _product(np.matmul, input, other)
    if a_dims >= 3 and b_dims <= 2:
        # PyTorch folds the batch into the rows and calls mm / mv: their messages show the folded shape.
        folded = input.reshape(int(np.prod(input.shape[:-1])), input.shape[-1])
        if b_dims == 1:
            _mv_checks(folded, other)
        else:
            _mm_checks(folded, other)
        return _product(np.matmul, input, other)
    return _batched_matmul(input, other)


_OUT_DTYPE_ERROR = ("Could not run 'aten::{}.dtype' with arguments from the 'CPU' backend: out_dtype is only "
                    "supported for CUDA tensors")


def _mm_grad(grad, input, mat2):
    return grad.mm(adjoint(mat2)), adjoint(input).mm(grad)


@op(meta=_checked_meta(_mm_all_checks, _mm_shape),
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((2, 3)))), Sample((TensorSpec((2, 3, 1)), TensorSpec((3, 2))))),
    grad=_mm_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample((TensorSpec((3, 3), "float64"), TensorSpec((3, 1), "float64"))),
    Sample((TensorSpec((2, 3), "int32"), TensorSpec((3, 2), "int32"))),
    Sample((TensorSpec((2, 3), "bfloat16"), TensorSpec((3, 2), "bfloat16"))),
    Sample((TensorSpec((0, 3), "int64"), TensorSpec((3, 2), "int64"))),
    Sample((TensorSpec((2, 0), "int32"), TensorSpec((0, 2), "int32")))))
def mm(input: Tensor, mat2: Tensor, out_dtype: dt.dtype | None = None) -> Tensor:
    """Matrix product of the matrices ``input`` (n x m) and ``mat2`` (m x p); no broadcasting.

    (``out_dtype`` is accepted for PyTorch's signature; like PyTorch on the CPU,
    it is not supported.)

    >>> import tensormodes as tm
    >>> tm.mm(tm.tensor([[1, 2], [3, 4]]), tm.tensor([[1], [1]]))
    tensor([[3],
            [7]])
    """
    if out_dtype is not None:
        raise NotImplementedError(_OUT_DTYPE_ERROR.format("mm"))
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _mm_checks(input, mat2)
    return _product(np.matmul, input, mat2)


def _bmm_grad(grad, input, mat2):
    return grad.bmm(adjoint(mat2)), adjoint(input).bmm(grad)


def _bmm_differentiable(input, mat2, out_dtype=None) -> bool:
    empty = input.shape[2] == 0 or 0 in (input.shape[0], input.shape[1], mat2.shape[2])
    return recordable(mat2.dtype if empty else input.dtype)


@op(meta=rule(_bmm_meta), differentiable=_bmm_differentiable,
    errors=(Sample((TensorSpec((2, 2, 3)), TensorSpec((3, 3, 2)))),), grad=_bmm_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 2, 3)), TensorSpec((2, 3, 4)))),
    Sample((TensorSpec((3, 1, 2), "int64"), TensorSpec((3, 2, 2), "int64"))),
    Sample((TensorSpec((1, 2, 2), "float16"), TensorSpec((1, 2, 3), "float16"))),
    Sample((TensorSpec((0, 2, 3), "int64"), TensorSpec((0, 3, 1), "int64")))))
def bmm(input: Tensor, mat2: Tensor, out_dtype: dt.dtype | None = None) -> Tensor:
    """Batch matrix-matrix product of the 3-D tensors ``input`` (b x n x m) and ``mat2`` (b x m x p).

    >>> import tensormodes as tm
    >>> tm.bmm(tm.ones(4, 2, 3), tm.ones(4, 3, 5)).shape
    tensormodes.Size([4, 2, 5])
    """
    if out_dtype is not None:
        raise NotImplementedError(_OUT_DTYPE_ERROR.format("bmm"))
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    dtype = _bmm_checks(input, mat2)
    if input.shape[2] == 0 or input.size == 0 or mat2.size == 0:
        return np.zeros((input.shape[0], input.shape[1], mat2.shape[2]), dtype)
    return _product(np.matmul, input, mat2)


def _mv_grad(grad, input, vec):
    return grad.unsqueeze(-1) * _conj(vec), adjoint(input).mv(grad)


@op(meta=_checked_meta(_mv_all_checks, _mv_shape),
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((2,)))), Sample((TensorSpec(()), TensorSpec((2,))))),
    grad=_mv_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((3,)))),
    Sample((TensorSpec((4, 2), "int16"), TensorSpec((2,), "int16"))),
    Sample((TensorSpec((2, 0), "int64"), TensorSpec((0,), "int64")))))
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product of the matrix ``input`` (n x m) and the vector ``vec`` (m).

    >>> import tensormodes as tm
    >>> tm.mv(tm.tensor([[1, 2], [3, 4]]), tm.tensor([1, -1]))
    tensor([-1, -1])
    """
    _mv_all_checks(input, vec)
    return _product(np.matmul, input, vec)


def _dot_grad(grad, input, tensor):
    return grad * _conj(tensor), grad * _conj(input)


@op(meta=_checked_meta(_dot_checks, _dot_shape),
    errors=(Sample((TensorSpec((3,)), TensorSpec((4,)))), Sample((TensorSpec((3,)), TensorSpec((3,), "float64")))),
    grad=_dot_grad, method=True, out=True, samples=(
    Sample((TensorSpec((3,)), TensorSpec((3,)))),
    Sample((TensorSpec((4,), "int64"), TensorSpec((4,), "int64"))),
    Sample((TensorSpec((2,), "complex128"), TensorSpec((2,), "complex128"))),
    Sample((TensorSpec((0,), "int64"), TensorSpec((0,), "int64"))),
    Sample((TensorSpec((5,), "float16"), TensorSpec((5,), "float16")))))
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Dot product of two 1-D tensors with the same number of elements and the same dtype.

    >>> import tensormodes as tm
    >>> tm.dot(tm.tensor([2, 3]), tm.tensor([2, 1]))
    tensor(7)
    """
    _dot_checks(input, tensor)
    return _product(np.dot, input, tensor)


def _vdot_grad(grad, input, other):
    # vdot conjugates its first operand: sum(conj(input) * other).
    return _conj(grad) * other, grad * input


@op(meta=_checked_meta(_dot_checks, _dot_shape), grad=_vdot_grad, method=True, out=True, samples=(
    Sample((TensorSpec((3,)), TensorSpec((3,)))),
    Sample((TensorSpec((2,), "complex64"), TensorSpec((2,), "complex64"))),
    Sample((TensorSpec((3,), "int32"), TensorSpec((3,), "int32")))))
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """Dot product of two 1-D tensors, conjugating the first: sum of ``conj(input[i]) * other[i]``.

    >>> import tensormodes as tm
    >>> tm.vdot(tm.tensor([1j, 2]), tm.tensor([1j, 1]))
    tensor(3.+0.j)
    """
    _dot_checks(input, other)
    return _product(np.vdot, input, other)


def _outer(input: np.ndarray, vec2: np.ndarray) -> np.ndarray:
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return binary(np.multiply, input[:, None], vec2)


_OUTER_SAMPLES = (
    Sample((TensorSpec((2,)), TensorSpec((3,)))), Sample((TensorSpec((3,), "int64"), TensorSpec((2,), "float64"))),
    Sample((TensorSpec((2,), "bool"), TensorSpec((2,), "bool"))),
    Sample((TensorSpec((0,), "int64"), TensorSpec((2,), "int64"))))


def _outer_grad(grad, input, vec2, needs_input_grad):
    # Products and sums rather than mv: outer promotes, so the operands' dtypes may differ. Each
    # operand is saved only for the other's gradient (save_only_for), as by PyTorch's composite
    # (a MulBackward0 of input.reshape(n, 1) and vec2).
    return ((grad * _conj(vec2)).sum(1) if needs_input_grad[0] else None,
            (grad * _conj(input.unsqueeze(1))).sum(0) if needs_input_grad[1] else None)


@op(meta=_checked_meta(_no_checks, _outer_shape), grad=_outer_grad, save_only_for={"input": "vec2", "vec2": "input"},
    method=True, out=True,
    samples=_OUTER_SAMPLES)
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of the vectors ``input`` (n) and ``vec2`` (m): an n x m matrix (dtypes promote).

    >>> import tensormodes as tm
    >>> tm.outer(tm.tensor([1, 2]), tm.tensor([1, 10, 100]))
    tensor([[  1,  10, 100],
            [  2,  20, 200]])
    """
    return _outer(input, vec2)


ger = alias("ger", of="outer", method=True,
            samples=_OUTER_SAMPLES[:2],
            doc="""Alias of ``outer`` (deprecated in PyTorch).

    >>> import tensormodes as tm
    >>> tm.ger(tm.tensor([1, 2]), tm.tensor([3])).tolist()
    [[3], [6]]
    """)


def _inner_grad(grad, input, other, input_shape, other_shape, needs_input_grad):
    # Each operand is saved only for the other's gradient (save_only_for), as by PyTorch's
    # composite (a mul, or a tensordot's mm); their shapes serve for the rest.
    if not input_shape or not other_shape:
        return (grad * _conj(other) if needs_input_grad[0] else None,
                grad * _conj(input) if needs_input_grad[1] else None)
    k = input_shape[-1]
    m, n = _count(input_shape, range(len(input_shape) - 1)), _count(other_shape, range(len(other_shape) - 1))
    grad = grad.reshape(m, n)
    return (grad.mm(_conj(other.reshape(n, k))).reshape(input_shape) if needs_input_grad[0] else None,
            grad.t().mm(_conj(input.reshape(m, k))).reshape(other_shape) if needs_input_grad[1] else None)


@op(meta=_inner_meta, grad=_inner_grad, save_only_for={"input": "other", "other": "input"}, method=True, out=True,
    samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((4, 3)))), Sample((TensorSpec((3,)), TensorSpec((3,)))),
    Sample((TensorSpec((), "int64"), TensorSpec((3,), "float32"))),
    Sample((TensorSpec((2, 2, 3), "int32"), TensorSpec((3,), "int32")))))
def inner(input: Tensor, other: Tensor) -> Tensor:
    """Dot products along the last dimension: a dot product for 1-D tensors, else the sum of
    ``input[..., k] * other[..., k]`` for every pair of leading positions (a product if either is 0-d).

    >>> import tensormodes as tm
    >>> tm.inner(tm.tensor([[1, 2], [3, 4]]), tm.tensor([1, 1]))
    tensor([3, 7])
    """
    if input.ndim == 0 or other.ndim == 0:
        return binary(np.multiply, input, other)
    _inner_checks(input, other)
    return _product(np.inner, input, other)


def _inner_checks(input: np.ndarray, other: np.ndarray) -> None:
    """``inner``'s checks of operands that are not 0-d (they read only shapes and dtypes)."""
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype != other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if input.ndim == 1 and other.ndim == 1:
        _check_bool("dot", input, empty=input.size == 0)
    else:
        _check_bool("addmm_impl_cpu_", input, empty=input.shape[-1] == 0 or input.size * other.size == 0)


def _tensordot_dims(dims, a_ndim: int, b_ndim: int) -> tuple[list[int], list[int]]:
    """``dims`` as PyTorch accepts it: an int (last dims of ``a`` with first dims of ``b``), a pair
    of int lists, or a tensor holding either."""
    inner = array_of(dims)
    if inner is not None:
        dims = int(inner) if inner.size == 1 and inner.ndim <= 1 else inner.tolist()
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a_ndim, b_ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if isinstance(dims, (list, tuple)) and len(dims) == 2:
        first, second = dims
        for position, part in ((3, first), (4, second)):
            if isinstance(part, numbers.Integral):
                name = "dims_self" if position == 3 else "dims_other"
                raise TypeError(f"tensordot(): argument '{name}' (position {position}) must be tuple of ints, "
                                f"not {type(part).__name__}")
        first, second = [operator.index(d) for d in first], [operator.index(d) for d in second]
        if len(first) != len(second):
            raise RuntimeError("both dimension lists should have same length")
        return first, second
    raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                       f"containing two lists, but got dims={dims}")


def _tensordot_grad(grad, a, b, dims):
    """Through the matrix product ``tensordot`` is: ``a`` as (free x contracted), ``b`` as
    (contracted x free)."""
    dims_a, dims_b = _tensordot_dims(dims, a.dim(), b.dim())
    contracted_a, contracted_b = wrap_dims(dims_a, a.dim()), wrap_dims(dims_b, b.dim())
    free_a = [d for d in range(a.dim()) if d not in contracted_a]
    free_b = [d for d in range(b.dim()) if d not in contracted_b]
    order_a, order_b = free_a + list(contracted_a), list(contracted_b) + free_b
    a_matrix = a.permute(order_a).reshape(_count(a.shape, free_a), _count(a.shape, contracted_a))
    b_matrix = b.permute(order_b).reshape(_count(b.shape, contracted_b), _count(b.shape, free_b))
    grad = grad.reshape(a_matrix.shape[0], b_matrix.shape[1])
    grad_a = grad.mm(adjoint(b_matrix)).reshape([a.shape[d] for d in order_a]).permute(_inverse(order_a))
    grad_b = adjoint(a_matrix).mm(grad).reshape([b.shape[d] for d in order_b]).permute(_inverse(order_b))
    return grad_a, grad_b


@op(meta=_tensordot_meta,
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((2, 3))), {"dims": 1}),
            Sample((TensorSpec((2, 3)), TensorSpec((2, 3))), {"dims": 3})),
    grad=_tensordot_grad, out=True, samples=(
    Sample((TensorSpec((2, 3, 4)), TensorSpec((3, 4, 5)))), Sample((TensorSpec((2, 3, 4)), TensorSpec((4, 5)), 1)),
    Sample((TensorSpec((2, 3)), TensorSpec((4, 5))), {"dims": 0}),
    Sample((TensorSpec((2, 3, 4)), TensorSpec((3, 4, 5))), {"dims": ([1, 2], [0, 1])}),
    Sample((TensorSpec((2, 3, 4)), TensorSpec((4, 5))), {"dims": [[-1], [-2]]}),
    Sample((TensorSpec((3, 2), "int64"), TensorSpec((2, 3), "int64")), {"dims": ([0, 1], [1, 0])})))
def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contraction of ``a`` and ``b`` over several dimensions.

    ``dims=d`` contracts the last ``d`` dimensions of ``a`` with the first ``d``
    of ``b``; ``dims=([i...], [j...])`` contracts the listed dimensions pairwise.

    >>> import tensormodes as tm
    >>> tm.tensordot(tm.ones(2, 3, 4), tm.ones(3, 4, 5)).shape
    tensormodes.Size([2, 5])
    >>> tm.tensordot(tm.ones(2, 3), tm.ones(4, 3), dims=([1], [1])).shape
    tensormodes.Size([2, 4])
    """
    wrapped_a, wrapped_b = _tensordot_checks(a, b, dims)
    return _product(lambda x, y: np.tensordot(x, y, axes=(list(wrapped_a), list(wrapped_b))), a, b)


def _tensordot_checks(a: np.ndarray, b: np.ndarray, dims) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``tensordot``'s checks (of shapes and dtypes only); the contracted dims, wrapped."""
    dims_a, dims_b = _tensordot_dims(dims, a.ndim, b.ndim)
    wrapped_a, wrapped_b = wrap_dims(dims_a, a.ndim), wrap_dims(dims_b, b.ndim)
    for given_a, given_b, i, j in zip(dims_a, dims_b, wrapped_a, wrapped_b, strict=True):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim "
                               f"{given_a} and second has size {b.shape[j]} in dim {given_b}")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    contracted = int(np.prod([a.shape[i] for i in wrapped_a], dtype=np.int64))
    _check_bool("addmm_impl_cpu_", a, empty=contracted == 0 or a.size * b.size == 0)
    return wrapped_a, wrapped_b


def _addmm_grad(grad, mat1, mat2, beta, alpha):
    grad_mat1, grad_mat2 = grad.mm(adjoint(mat2)), adjoint(mat1).mm(grad)
    if alpha != 1:
        grad_mat1, grad_mat2 = grad_mat1 * _conj(alpha), grad_mat2 * _conj(alpha)
    return (grad if beta == 1 else grad * _conj(beta)), grad_mat1, grad_mat2


@op(meta=_addmm_meta,
    errors=(Sample((TensorSpec((3, 4)), TensorSpec((2, 3)), TensorSpec((3, 4)))),
            Sample((TensorSpec((2, 4)), TensorSpec((2, 3)), TensorSpec((2, 4))))),
    grad=_addmm_grad, method=True, inplace=True, out=True, samples=(
    Sample((TensorSpec((2, 4)), TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample((TensorSpec((4,)), TensorSpec((2, 3)), TensorSpec((3, 4))), {"beta": 0.5, "alpha": 2}),
    Sample((TensorSpec((2, 2), "int64"), TensorSpec((2, 3), "int64"), TensorSpec((3, 2), "int64")),
           {"beta": 2, "alpha": 3}),
    Sample((TensorSpec((2, 2), "int64"), TensorSpec((2, 3), "int64"), TensorSpec((3, 2), "int64")),
           {"beta": 0.5, "alpha": 2.7}),
    Sample((TensorSpec((), "float64"), TensorSpec((2, 3), "float64"), TensorSpec((3, 2), "float64")),
           {"beta": 0}),
    Sample((TensorSpec((2, 2), "complex64"), TensorSpec((2, 3), "complex64"), TensorSpec((3, 2), "complex64")),
           {"alpha": 1j})))
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, with ``input`` broadcast to the product's shape.

    With ``beta=0`` the values of ``input`` are ignored (NaNs in it do not
    propagate). For integer tensors ``beta`` and ``alpha`` are truncated to ints.

    >>> import tensormodes as tm
    >>> tm.addmm(tm.ones(2, 2), tm.ones(2, 3), tm.ones(3, 2), beta=2, alpha=0.5)
    tensor([[3.5000, 3.5000],
            [3.5000, 3.5000]])
    """
    target = _addmm_checks(input, mat1, mat2)
    dtype = dtype_of(input)
    beta, alpha = _coefficient(beta, dtype), _coefficient(alpha, dtype)
    if dtype._category == dt._INT:
        beta, alpha = int(beta), int(alpha)
    product = _product(np.matmul, mat1, mat2)
    compute = np.float32 if input.dtype in HALF_TYPES else input.dtype
    result = product.astype(compute) * alpha if alpha != 1 else product.astype(compute)
    if beta != 0:
        scaled = input.astype(compute) * beta if beta != 1 else input.astype(compute)
        result = result + scaled
    return np.broadcast_to(result, target).astype(input.dtype)


def _addmm_checks(input: np.ndarray, mat1: np.ndarray, mat2: np.ndarray) -> tuple[int, int]:
    """``addmm``'s checks (of shapes and dtypes only); the result's shape."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({shape_text(mat1.shape)} and "
                           f"{shape_text(mat2.shape)})")
    target = (mat1.shape[0], mat2.shape[1])
    _check_expandable(input.shape, target)
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_type_name(dtype_of(input))} and "
                           f"{scalar_type_name(dtype_of(mat2))}")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_type_name(dtype_of(mat1))} and "
                           f"{scalar_type_name(dtype_of(mat2))}")
    _check_bool("addmm_impl_cpu_", input, empty=0 in target)
    return target


def _coefficient(value, dtype: dt.dtype):
    """``alpha`` / ``beta`` checked against the tensors' dtype as PyTorch does (no complex for real ones)."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"alpha and beta must be numbers, not {type(value).__name__}")
    return checked_fill_value(value, dtype) if dtype._category != dt._INT else value


def _check_expandable(source: tuple, target: tuple) -> None:
    if len(source) > len(target):
        raise RuntimeError(f"expand: the number of sizes provided ({len(target)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(source)})")
    for i in range(1, len(source) + 1):
        if source[-i] != target[-i] and source[-i] != 1:
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                               f"({source[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                               f"{list(target)}.  Tensor sizes: {list(source)}")


def _trace_grad(grad, input_shape):
    # The gradient is ``grad`` on the main diagonal: a mask of ones kept by both triangles.
    return grad * grad.new_ones(tuple(input_shape)).triu().tril()


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
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype == np.bool_:
        raise not_implemented("trace", dt.bool)
    if input.dtype.kind in "iu":
        return np.asarray(np.trace(input, dtype=np.int64))
    return _product(np.trace, input)


def _singular_error() -> RuntimeError:
    return RuntimeError("linalg.inv: The diagonal element is zero, the inversion could not be completed because "
                        "the input matrix is singular.")


def _matrix_power_grad(grad, input, n):
    if n == 0:
        return grad * 0
    base = input if n > 0 else input.matrix_power(-1)
    steps = abs(n)
    transposed = adjoint(base)
    # d(B^k) = sum_j B^j dB B^(k-1-j), so the gradient is sum_j (B^H)^j grad (B^H)^(k-1-j).
    grad_base = None
    for j in range(steps):
        term = transposed.matrix_power(j).matmul(grad).matmul(transposed.matrix_power(steps - 1 - j))
        grad_base = term if grad_base is None else grad_base + term
    if n > 0:
        return grad_base
    # B = A^-1: dB = -B dA B, so the gradient for A is -B^H grad_B B^H.
    return -transposed.matmul(grad_base).matmul(transposed)


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
        try:
            base = _product(np.linalg.inv, input)
        except np.linalg.LinAlgError:
            raise _singular_error() from None
        n = -n
    _check_bool("addmm_impl_cpu_", base, empty=base.size == 0)
    # Square-and-multiply, each product rounded to the dtype like PyTorch's chain of matmuls.
    result = None
    while n:
        if n & 1:
            result = base if result is None else _product(np.matmul, result, base)
        n >>= 1
        if n:
            base = _product(np.matmul, base, base)
    return result


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


@op(meta=_checked_meta(_no_checks, _kron_shape), grad=_kron_grad, out=True, samples=(
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
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(input))} but found "
                           f"{scalar_type_name(dtype_of(other))}")
    if input.dtype == np.bool_:
        raise not_implemented("cross", dt.bool)
    check_same_shape_or_broadcast(input.shape, other.shape)
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
    # Through the norm of the pairwise differences (reduction's norm gradient, any p).
    difference = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    spread = _norm_grad(grad, difference, result, p, -1, False)
    if spread is None:  # p = 0 counts: a zero gradient (PyTorch's, unlike norm's none)
        spread = difference * 0
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
    _cdist_checks(x1, x2, p)
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


def _cdist_checks(x1: np.ndarray, x2: np.ndarray, p) -> None:
    """``cdist``'s checks (of shapes, dtypes and ``p``)."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind != "f" or x.dtype in HALF_TYPES:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {scalar_type_name(dtype_of(x))}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(x1))} but found "
                           f"{scalar_type_name(dtype_of(x2))}")


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
        result[:, 1:] = np.cumprod(np.repeat(values[:, None], count - 1, axis=1), axis=1)
    return np.asarray(result if increasing else result[:, ::-1].copy())
