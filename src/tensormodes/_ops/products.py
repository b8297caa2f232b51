"""Products of vectors, matrices and batches: ``matmul``, ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``,
``outer`` (``ger``), ``inner``, ``tensordot``, ``addmm``. ``trace``, ``matrix_power``, ``kron``,
``cross``, ``cdist`` and ``vander`` are in ``products_structured.py``.

PyTorch does not promote in matrix products: operands must share a dtype, and each product
checks shapes and dtypes with its own message, which the kernels here reproduce. Integer
products work (wrapping on overflow), bool ones do not (except where no multiplication
happens). Half-precision products accumulate in float32, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .._tensor_base import PLAIN
from ._reduction import _checked_meta, _kernel_rule, _no_checks, _probe_quietly
from .common import (
    HALF_TYPES,
    adjoint,
    array_of,
    array_type_name,
    binary,
    check_same_shape_or_broadcast,
    cpp_type_name,
    dispatch_listens,
    dtype_of,
    not_implemented,
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


_BLAS_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def _product(func, *arrays: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """``func(*arrays)`` in PyTorch's precision, as an ndarray of ``dtype`` (default: the first operand's)."""
    result = np.asarray(func(*_compute(*arrays)))
    target = arrays[0].dtype if dtype is None else dtype
    return result if result.dtype == target else result.astype(target)


def times_transposed(input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``input @ weight.T`` as ``linear`` computes it. A few float32 rows (an RNN's step) are asked
    of BLAS as ``(weight @ input.T).T``, which OpenBLAS sums as the same products in the same
    order (the same bits), without the slow path NumPy takes for a few rows times a transposed
    matrix (2x faster). A contiguous batch is multiplied as the rows of one matrix, as PyTorch's
    ``linear`` folds it (into one ``addmm``, or ``matmul``'s ``mm``) and as our decomposition of
    ``linear`` does at the dispatch level; NumPy's batched product calls BLAS once per matrix:
    slower, and with other bits where a matrix's rows end inside one of OpenBLAS's blocks."""
    if input.ndim > 2 and weight.ndim == 2 and input.flags.c_contiguous:
        rows = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        return times_transposed(rows, weight).reshape(*input.shape[:-1], weight.shape[0])
    if transposed_product_alike(input, weight):
        return np.ascontiguousarray(np.matmul(weight, input.T).T)
    return np.asarray(np.matmul(input, weight.T))


def transposed_product_alike(input: np.ndarray, weight: np.ndarray) -> bool:
    """Whether ``input @ weight.T`` may be asked of BLAS as ``(weight @ input.T).T`` (a few float32
    rows: NumPy takes a slow path for them times a transposed matrix) with the same bits."""
    return (input.ndim == 2 and input.shape[0] <= 16 and input.dtype == weight.dtype == np.float32
            and weight.flags.c_contiguous and input.flags.c_contiguous and _blas_transposes_alike())


@functools.cache
def _blas_transposes_alike() -> bool:
    """Whether this machine's BLAS gives ``(weight @ input.T).T`` the bits of ``input @ weight.T``
    for a few float32 rows. It does with OpenBLAS's Haswell kernels on the machines it was measured
    on, not on every CPU (an AMD Zen 5 sums 4 rows or more in another order), so the shortcut is
    taken only where a probe of the row counts and layer widths it serves finds no difference:
    elsewhere ``linear`` keeps the bits of ``mm`` and ``matmul`` of the same operands."""
    rng = np.random.default_rng(0)
    for rows in range(1, 17):
        for features, outputs in ((5, 7), (33, 100), (64, 256), (128, 384), (256, 1024)):
            input = rng.standard_normal((rows, features)).astype(np.float32)
            weight = rng.standard_normal((outputs, features)).astype(np.float32)
            if not np.array_equal(np.matmul(weight, input.T).T, np.matmul(input, weight.T)):
                return False
    return True


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
    elif a_dims >= 3 and b_dims <= 2 and _folds(input.shape, input.elem_strides):
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
        shape = batch + (a_matrix[-2],) * (a_dims > 1) + (b_matrix[-1],) * (b_dims > 1)
        if a_dims == 1 and _folds_transposed(other.shape, other.elem_strides):
            _mv_checks(_rows_of_transposed(other.shape, other.dtype), input)
            return with_shape(_probe_quietly(kernel, input, other), shape)
        # No probe: whether bmm's kernel runs depends on the true sizes.
        return MetaArray(shape, _bmm_checks(_rows((count, *a_matrix[-2:]), input.dtype),
                                            _rows((count, *b_matrix[-2:]), other.dtype)))
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


def _bmm_checks(a: np.ndarray, b: np.ndarray) -> np.dtype:
    """bmm's checks; the result's dtype. A product with no result or nothing to add up never
    reaches PyTorch's kernel: its result (of ``b``'s dtype, as PyTorch makes it) is zeros."""
    batch, k = a.shape[0], a.shape[2]
    if b.shape[0] != batch or b.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: "
                           f"[{b.shape[0]}, {b.shape[1]}].")
    if k == 0 or a.shape[0] * a.shape[1] * b.shape[2] == 0:
        return b.dtype
    _check_bool("bmm", a)  # (the kernel is chosen by the first operand's dtype, then reads the second's)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(a))} but found "
                           f"{scalar_type_name(dtype_of(b))}")
    return a.dtype


def _batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``matmul`` of operands with batch dimensions: batches broadcast, then a bmm."""
    a_matrix = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b_matrix = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    batch = check_same_shape_or_broadcast(a_matrix.shape[:-2], b_matrix.shape[:-2])
    count = int(np.prod(batch, dtype=np.int64))
    a3 = np.broadcast_to(a_matrix, (*batch, *a_matrix.shape[-2:])).reshape(count, *a_matrix.shape[-2:])
    b3 = np.broadcast_to(b_matrix, (*batch, *b_matrix.shape[-2:])).reshape(count, *b_matrix.shape[-2:])
    dtype = _bmm_checks(a3, b3)
    if a3.shape[2] == 0 or a3.size == 0 or b3.size == 0:  # no kernel runs: zeros of bmm's dtype
        result = np.zeros((*batch, a_matrix.shape[-2], b_matrix.shape[-1]), dtype)
    else:
        result = _product(np.matmul, a3, b3).reshape(*batch, a_matrix.shape[-2], b_matrix.shape[-1])
    if a.ndim == 1:
        result = result[..., 0, :]
    if b.ndim == 1:
        result = result[..., 0]
    return result


def _folded_matmul_grad(grad, input, other, needs_input_grad):
    """``_matmul_grad`` where one operand is a batch and the other a matrix or vector: PyTorch folds
    the batch into one matrix product when the smaller operand requires grad, so that operand's
    gradient sums over the batch inside one product (accumulated in float32 for half types, where
    summing a batch of rounded products differs)."""
    want_input, want_other = needs_input_grad
    grad_input = grad_other = None
    if input.dim() >= 3:  # (B..., n, k) @ (k, m) or (k,)
        if want_input:
            b = other.unsqueeze(-1) if other.dim() == 1 else other
            g = grad.unsqueeze(-1) if other.dim() == 1 else grad
            grad_input = g.matmul(adjoint(b))
        if want_other:
            flat = grad.reshape(-1) if other.dim() == 1 else _folded(grad)
            grad_other = adjoint(_folded(input)).matmul(flat)
        return grad_input, grad_other
    # (n, k) or (k,) @ (B..., k, m): the batch of other.mT, folded
    if want_other:
        a = input.unsqueeze(0) if input.dim() == 1 else input
        g = grad.unsqueeze(-2) if input.dim() == 1 else grad
        grad_other = adjoint(a).matmul(g)
    if want_input:
        columns = _conj(_folded(other.mT))  # (B * m, k)
        if input.dim() == 1:
            grad_input = grad.reshape(-1).matmul(columns)
        else:
            grad_input = _folded(grad.mT).mT.matmul(columns)
    return grad_input, grad_other


def _folded(t):
    # (B..., r, c) -> (B * r, c) with the sizes spelt out: reshape(-1, c) is ambiguous when a size is 0
    return t.reshape(math.prod(t.shape[:-1]), t.shape[-1])


def _matmul_grad(grad, input, other, needs_input_grad):
    # Only the gradients an input needs (x @ w with a constant w costs one product, not two).
    want_input, want_other = needs_input_grad
    if input.dim() == 1 and other.dim() == 1:
        return (grad * _conj(other) if want_input else None), (grad * _conj(input) if want_other else None)
    if input.dim() >= 3 and other.dim() <= 2 or other.dim() >= 3 and input.dim() <= 2:
        return _folded_matmul_grad(grad, input, other, needs_input_grad)
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


def _should_fold(tensor1, tensor2) -> bool:
    """PyTorch's ``should_fold``: whether ``matmul`` folds the larger operand's batch into the rows of
    one ``mm`` / ``mv`` (it looks at the larger operand's transpose when that is the second: a view
    the dispatch level sees, as PyTorch's does)."""
    larger_first = tensor1.dim() >= tensor2.dim()
    t1 = tensor1 if larger_first else tensor2.mT
    smaller = tensor2 if larger_first else tensor1
    if not (t1.dim() >= 3 and smaller.dim() in (1, 2)):
        return False
    if smaller.requires_grad and ops.is_grad_enabled():
        return True  # a folded copy, rather than a large expanded gradient in the backward
    if tensor1.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, strides = tuple(t1.shape), t1.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.dim() - 1))


def _matmul_decomposition(input, other):
    """PyTorch's composite ``matmul`` (``_matmul_impl``), op for op: ``dot``, ``mv``, ``mm``; the
    larger operand's batch folded into one ``mm`` / ``mv`` then ``_unsafe_view``; else both
    batches expanded and flattened (``expand``, ``reshape``) into one ``bmm`` then ``_unsafe_view``."""
    dim1, dim2 = input.dim(), other.dim()
    if not dim1 or not dim2 or input.dtype != other.dtype or \
            input.shape[-1] != (other.shape[-2] if dim2 > 1 else other.shape[0]):
        return NotImplemented  # the op raises PyTorch's errors
    if dim1 == 2 and dim2 == 2:  # the common case first: no batch to broadcast
        return input.mm(other)
    batch1, batch2 = tuple(input.shape[:-2]), tuple(other.shape[:-2])
    try:
        batch = list(np.broadcast_shapes(batch1, batch2))
    except ValueError:
        return NotImplemented
    if dim1 == 1 and dim2 == 1:
        return input.dot(other)
    if dim1 == 2 and dim2 == 1:
        return input.mv(other)
    if dim1 == 1 and dim2 == 2:
        return input.unsqueeze(0).mm(other).squeeze_(0)  # as PyTorch: squeeze_.dim, SqueezeBackward4
    unsafe_view = ops.ops.aten._unsafe_view.default
    if _should_fold(input, other):
        transposed = dim2 > dim1
        t1 = other.mT if transposed else input
        t2 = (input.t() if dim1 == 2 else input) if transposed else other
        shape = list(t1.shape[:-1])
        folded = t1.reshape(math.prod(shape), t1.shape[-1])
        if t2.dim() == 1:
            return unsafe_view(folded.mv(t2), shape)
        result = unsafe_view(folded.mm(t2), shape + [t2.shape[1]])
        if not transposed:
            return result
        result = result.mT
        return result if result.is_contiguous() else result.clone(memory_format=ops.contiguous_format)
    n, m1 = (input.shape[-2] if dim1 > 1 else 1), input.shape[-1]
    m2, p = (other.shape[-2], other.shape[-1]) if dim2 > 1 else (other.shape[0], 1)
    count = math.prod(batch)
    expanded1 = input.expand(*batch, n, m1).reshape(count, n, m1)
    if dim2 == 1:
        expanded2 = other.expand(*batch, m2).reshape(count, m2).unsqueeze(2)
    else:
        expanded2 = other.expand(*batch, m2, p).reshape(count, m2, p)
    shape = batch + ([n] if dim1 > 1 else []) + ([p] if dim2 > 1 else [])
    product = expanded1.bmm(expanded2)
    return unsafe_view(product.squeeze(-1) if dim2 == 1 else product, shape)


@op(meta=_matmul_meta, decompose=_matmul_decomposition,
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
    if a_dims >= 3 and b_dims <= 2 and _folds(input.shape, _element_strides(input)):
        # PyTorch folds the batch into the rows and calls mm / mv: their messages show the folded shape.
        folded = input.reshape(int(np.prod(input.shape[:-1])), input.shape[-1])
        if b_dims == 1:
            _mv_checks(folded, other)
        else:
            _mm_checks(folded, other)
        return _product(np.matmul, input, other)
    if a_dims == 1 and b_dims >= 3 and _folds_transposed(other.shape, _element_strides(other)):
        # ... and a vector times a batch into the transposed batch's rows, through mv
        _mv_checks(_rows_of_transposed(other.shape, other.dtype), input)
        return _product(np.matmul, input, other)
    return _batched_matmul(input, other)


def _element_strides(array: np.ndarray) -> tuple[int, ...]:
    return tuple(stride // array.itemsize for stride in array.strides)


def _folds(shape: tuple, strides: tuple) -> bool:
    """Whether PyTorch's matmul folds a batch (left operand, of 3 dims or more, beside one of 1 or 2)
    into the rows of one matrix: only when that needs no copy (it is empty, or its batch dimensions
    are laid out as one). PyTorch also folds when the other operand requires grad, which the kernel
    does not see."""
    if math.prod(shape) == 0:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folds_transposed(shape: tuple, strides: tuple) -> bool:
    """``_folds`` for a batch as the right operand beside a vector: PyTorch folds its transpose."""
    order = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
    return _folds(tuple(shape[d] for d in order), tuple(strides[d] for d in order))


def _rows_of_transposed(shape: tuple, dtype) -> MetaArray:
    """The matrix PyTorch's folding makes of a batch's transpose (its shape and dtype only)."""
    return _rows((math.prod(shape[:-2]) * shape[-1], shape[-2]), dtype)


_OUT_DTYPE_ERROR = ("Could not run 'aten::{}.dtype' with arguments from the 'CPU' backend: out_dtype is only "
                    "supported for CUDA tensors")


def _column_major(matrix) -> bool:
    data = matrix._data if type(matrix) is PLAIN.tensor else None
    if type(data) is np.ndarray and data.ndim == 2 and data.size:  # ``stride()``'s elements, read from the array
        rows, (first, second), size = data.shape[0], data.strides, data.itemsize
        return first // size == 1 and second // size == rows and rows > 1
    rows = matrix.shape[0]
    return matrix.stride() == (1, rows) and rows > 1


def _mm_mat1_grad(grad, mat1, mat2):
    # PyTorch's mm_mat1_backward: a column-major mat1 gets its gradient in column order.
    if mat1 is not None and _column_major(mat1):
        return _conj(mat2).mm(grad.t()).t()
    return grad.mm(adjoint(mat2))


def _mm_mat2_grad(grad, mat1, mat2):
    # PyTorch's mm_mat2_backward, alike: ``x @ w.t()``'s weight gradient is ``(grad.t() @ x).t()``.
    if mat2 is not None and _column_major(mat2):
        return grad.t().mm(_conj(mat1)).t()
    return adjoint(mat1).mm(grad)


def _mm_grad(grad, input, mat2, needs_input_grad):
    # Only the gradients that are wanted: PyTorch computes no other (its FLOP counts show it); mat2's
    # first, as PyTorch's MmBackward0 (a dispatch mode sees its order; addmm's is mat1 first)
    grad_mat2 = _mm_mat2_grad(grad, input, mat2) if needs_input_grad[1] else None
    return _mm_mat1_grad(grad, input, mat2) if needs_input_grad[0] else None, grad_mat2


@op(meta=_checked_meta(_mm_all_checks, _mm_shape),
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((2, 3)))), Sample((TensorSpec((2, 3, 1)), TensorSpec((3, 2))))),
    grad=_mm_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample((TensorSpec((3, 3), "float64"), TensorSpec((3, 1), "float64"))),
    Sample((TensorSpec((2, 3), "int32"), TensorSpec((3, 2), "int32"))),
    Sample((TensorSpec((2, 3), "bfloat16"), TensorSpec((3, 2), "bfloat16"))),
    Sample((TensorSpec((0, 3), "int64"), TensorSpec((3, 2), "int64"))),
    Sample((TensorSpec((2, 0), "int32"), TensorSpec((0, 2), "int32")))),
    aten={"mm.default": ("out_dtype",)}, tags=("core",))
def mm(input: Tensor, mat2: Tensor, out_dtype: dt.dtype | None = None) -> Tensor:
    """Matrix product of the matrices ``input`` (n x m) and ``mat2`` (m x p); no broadcasting.

    (``out_dtype`` is accepted for PyTorch's signature; like PyTorch on the CPU,
    it is not supported.)

    >>> import tensormodes as tm
    >>> tm.mm(tm.tensor([[1, 2], [3, 4]]), tm.tensor([[1], [1]]))
    tensor([[3],
            [7]])
    """
    if type(input) is np.ndarray and type(mat2) is np.ndarray and input.ndim == 2 == mat2.ndim and \
            out_dtype is None and input.shape[1] == mat2.shape[0] and input.dtype == mat2.dtype and \
            input.dtype in _BLAS_FLOATS:
        return np.matmul(input, mat2)  # float32 or float64 matrices that fit: no check to make, no cast
    if out_dtype is not None:
        raise NotImplementedError(_OUT_DTYPE_ERROR.format("mm"))
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _mm_checks(input, mat2)
    return _product(np.matmul, input, mat2)


def _bmm_grad(grad, input, mat2, needs_input_grad):
    return (grad.bmm(adjoint(mat2)) if needs_input_grad[0] else None,
            adjoint(input).bmm(grad) if needs_input_grad[1] else None)


def _bmm_differentiable(input, mat2, out_dtype=None) -> bool:
    empty = input.shape[2] == 0 or 0 in (input.shape[0], input.shape[1], mat2.shape[2])
    return recordable(mat2.dtype if empty else input.dtype)


@op(meta=rule(_bmm_meta), differentiable=_bmm_differentiable,
    errors=(Sample((TensorSpec((2, 2, 3)), TensorSpec((3, 3, 2)))),), grad=_bmm_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 2, 3)), TensorSpec((2, 3, 4)))),
    Sample((TensorSpec((3, 1, 2), "int64"), TensorSpec((3, 2, 2), "int64"))),
    Sample((TensorSpec((1, 2, 2), "float16"), TensorSpec((1, 2, 3), "float16"))),
    Sample((TensorSpec((0, 2, 3), "int64"), TensorSpec((0, 3, 1), "int64")))),
    aten={"bmm.default": ("out_dtype",)}, tags=("core",))
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


def _mv_grad(grad, input, vec, needs_input_grad):
    # grad.view(-1, 1) where the dispatch level listens: PyTorch's formula is grad.ger(vec), whose
    # composite reshapes grad to a column (an unsqueeze is cheaper here)
    column = (grad.view(grad.shape[0], 1) if dispatch_listens(grad) else grad.unsqueeze(-1)) if needs_input_grad[0] \
        else None
    return (column * _conj(vec) if needs_input_grad[0] else None,
            adjoint(input).mv(grad) if needs_input_grad[1] else None)


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


def _dot_grad(grad, input, tensor, needs_input_grad):
    return (grad * _conj(tensor) if needs_input_grad[0] else None,
            grad * _conj(input) if needs_input_grad[1] else None)


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


def _vdot_grad(grad, input, other, needs_input_grad):
    # vdot conjugates its first operand: sum(conj(input) * other).
    return (_conj(grad) * other if needs_input_grad[0] else None,
            grad * input if needs_input_grad[1] else None)


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
    if dispatch_listens(grad):
        # The sums and views as PyTorch's: input's gradient summed to its column and viewed back,
        # vec2's summed over the column made by viewing input.
        return ((grad * _conj(vec2)).sum(1, keepdim=True).view(-1) if needs_input_grad[0] else None,
                (grad * _conj(input.view(-1, 1))).sum(0) if needs_input_grad[1] else None)
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


def _tensordot_grad(grad, a, b, dims, needs_input_grad):
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
    grad_a = grad_b = None  # (only those wanted)
    if needs_input_grad[0]:
        grad_a = grad.mm(adjoint(b_matrix)).reshape([a.shape[d] for d in order_a]).permute(_inverse(order_a))
    if needs_input_grad[1]:
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
    if a.dtype != b.dtype:  # PyTorch checks the dtypes before the dims
        raise RuntimeError("both inputs should have same dtype")
    wrapped_a, wrapped_b = wrap_dims(dims_a, a.ndim), wrap_dims(dims_b, b.ndim)
    for given_a, given_b, i, j in zip(dims_a, dims_b, wrapped_a, wrapped_b, strict=True):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim "
                               f"{given_a} and second has size {b.shape[j]} in dim {given_b}")
    contracted = int(np.prod([a.shape[i] for i in wrapped_a], dtype=np.int64))
    _check_bool("addmm_impl_cpu_", a, empty=contracted == 0 or a.size * b.size == 0)
    return wrapped_a, wrapped_b


def _addmm_grad(grad, mat1, mat2, beta, alpha, needs_input_grad):
    want_input, want_mat1, want_mat2 = needs_input_grad
    grad_mat1 = _mm_mat1_grad(grad, mat1, mat2) if want_mat1 else None
    grad_mat2 = _mm_mat2_grad(grad, mat1, mat2) if want_mat2 else None
    if alpha != 1:
        grad_mat1 = None if grad_mat1 is None else grad_mat1 * _conj(alpha)
        grad_mat2 = None if grad_mat2 is None else grad_mat2 * _conj(alpha)
    grad_input = (grad if beta == 1 else grad * _conj(beta)) if want_input else None
    return grad_input, grad_mat1, grad_mat2


def _same_size_in_place(result: np.ndarray, target: np.ndarray, inplace: bool) -> None:
    """The ``add*`` products' in-place forms (``addmm_``, ``addmv_``, ``baddbmm_``): ``self`` must have
    the product's shape already, PyTorch's own words rather than the broadcast rule's."""
    if inplace and result.shape != target.shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(target.shape)} and output tensor size "
                           f"{list(result.shape)} should match")


@op(meta=_addmm_meta, written_check=_same_size_in_place,
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
           {"alpha": 1j})), tags=("core",))
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, with ``input`` broadcast to the product's shape.

    With ``beta=0`` the values of ``input`` are ignored (NaNs in it do not
    propagate). For integer tensors ``beta`` and ``alpha`` are truncated to ints.

    >>> import tensormodes as tm
    >>> tm.addmm(tm.ones(2, 2), tm.ones(2, 3), tm.ones(3, 2), beta=2, alpha=0.5)
    tensor([[3.5000, 3.5000],
            [3.5000, 3.5000]])
    """
    if type(beta) is int and type(alpha) is int and beta == 1 == alpha and type(input) is np.ndarray and \
            type(mat1) is np.ndarray and type(mat2) is np.ndarray and input.dtype in _BLAS_FLOATS and \
            mat1.dtype == input.dtype == mat2.dtype and mat1.ndim == 2 == mat2.ndim and \
            mat1.shape[1] == mat2.shape[0] and input.shape in ((mat2.shape[1],), (mat1.shape[0], mat2.shape[1])):
        # ``linear``'s decomposition (a bias row or a whole matrix): the steps below, without their copies
        product = np.matmul(mat1, mat2)
        return np.add(product, input, out=product)
    return _scaled_sum_with_product(input, mat1, mat2, beta, alpha, _addmm_checks(input, mat1, mat2))


def _scaled_sum_with_product(input, first, second, beta, alpha, target: tuple[int, ...]) -> np.ndarray:
    """``beta * input + alpha * (first @ second)`` broadcast to ``target`` (``addmm``'s and
    ``addmv``'s kernel): integer inputs truncate the coefficients; half types scale and add the
    float32 product and round once, as PyTorch's kernel does; ``beta=0`` ignores ``input``."""
    dtype = dtype_of(input)
    beta, alpha = _coefficient(beta, dtype), _coefficient(alpha, dtype)
    if dtype._category == dt._INT:
        beta, alpha = int(beta), int(alpha)
    compute = np.float32 if input.dtype in HALF_TYPES else input.dtype
    product = _product(np.matmul, first, second, dtype=compute if input.dtype in HALF_TYPES else None)
    result = product.astype(compute) * alpha if alpha != 1 else product.astype(compute)
    if beta != 0:
        result = result + (input.astype(compute) * beta if beta != 1 else input.astype(compute))
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
    _check_expandable(input, target)
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
    # (half types scale in float32, PyTorch's opmath type: a complex value names float)
    return checked_fill_value(value, dt.float32 if dtype in (dt.float16, dt.bfloat16) else dtype)


def _check_expandable(input, target: tuple) -> None:
    """PyTorch's errors where ``input`` does not expand to the ``target`` shape."""
    source = input.shape
    if len(source) > len(target):
        raise RuntimeError(f"expand(torch.{array_type_name(input)}Tensor{{{list(source)}}}, size={list(target)}): the "
                           f"number of sizes provided ({len(target)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(source)})")
    for i in range(1, len(source) + 1):
        if source[-i] != target[-i] and source[-i] != 1:
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                               f"({source[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                               f"{list(target)}.  Tensor sizes: {list(source)}")
