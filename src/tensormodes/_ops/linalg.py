"""Linear algebra: products of vectors, matrices and batches, ``einsum``, ``tensordot``,
``trace`` and ``matrix_power``; in ``tensormodes.linalg``, determinants (``det``,
``slogdet``), ``inv``, ``solve`` and the decompositions ``svd``, ``cholesky``, ``qr`` and
``eigh`` (with ``svdvals`` and ``eigvalsh``).

PyTorch does not promote in matrix products: operands must share a dtype, and
each product checks shapes and dtypes with its own message, which the kernels
here reproduce. Integer products work (wrapping on overflow), bool ones do not
(except where no multiplication happens). Half-precision products accumulate
in float32, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from ._common import (
    array_of,
    binary,
    check_same_shape_or_broadcast,
    cpp_type_name,
    not_implemented,
    one_sequence_as_items,
    operand_dtype,
    public,
    quiet,
    scalar_type_name,
    wrap_dims,
)
from ._common import conjugate as _conj
from ._reduction import RETURN_TYPES
from ._registry import OWN, Dunder, Sample, TensorSpec, op
from .creation import checked_fill_value
from .reduction import _norm_grad

if TYPE_CHECKING:
    from .._tensor import Tensor

Number = numbers.Number

_HALF_TYPES = (dt.float16._np, dt.bfloat16._np)


def _dtype(a: np.ndarray) -> dt.dtype:
    return dt.NP_TO_DTYPE[a.dtype]


def _compute(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Operands as NumPy should multiply them: half types widened to float32."""
    return tuple(a.astype(np.float32) if a.dtype in _HALF_TYPES else a for a in arrays)


def _product(func, *arrays: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """``func(*arrays)`` in PyTorch's precision, as an ndarray of ``dtype`` (default: the first operand's)."""
    result = np.asarray(func(*_compute(*arrays)))
    target = arrays[0].dtype if dtype is None else dtype
    return result if result.dtype == target else result.astype(target)


def _shape_text(shape) -> str:
    return "x".join(str(d) for d in shape)


def _check_bool(kernel_name: str, *arrays: np.ndarray, empty: bool = False) -> None:
    """PyTorch's matrix kernels have no bool version (they are skipped when nothing is multiplied)."""
    if arrays[0].dtype == np.bool_ and not empty:
        raise not_implemented(kernel_name, dt.bool)


# -- gradients -----------------------------------------------------------------------------------
# Formulas run on Tensors with public methods, so that they are differentiable
# themselves and modes see them. For complex operands they multiply by the other
# operands' conjugates (adjoints), as PyTorch's do. Broadcast gradients are summed
# back to each input's shape by the autograd engine.

def _adjoint(x):
    """The conjugate transpose of (a batch of) matrices: the transpose if real."""
    return _conj(x.mT)


def _matmul_grad(grad, input, other):
    if input.dim() == 1 and other.dim() == 1:
        return grad * _conj(other), grad * _conj(input)
    a = input.unsqueeze(0) if input.dim() == 1 else input
    b = other.unsqueeze(-1) if other.dim() == 1 else other
    if input.dim() == 1:
        grad = grad.unsqueeze(-2)
    if other.dim() == 1:
        grad = grad.unsqueeze(-1)
    grad_a, grad_b = grad.matmul(_adjoint(b)), _adjoint(a).matmul(grad)
    return (grad_a.squeeze(-2) if input.dim() == 1 else grad_a,
            grad_b.squeeze(-1) if other.dim() == 1 else grad_b)


def _mm_grad(grad, input, mat2):
    return grad.mm(_adjoint(mat2)), _adjoint(input).mm(grad)


def _bmm_grad(grad, input, mat2):
    return grad.bmm(_adjoint(mat2)), _adjoint(input).bmm(grad)


def _mv_grad(grad, input, vec):
    return grad.unsqueeze(-1) * _conj(vec), _adjoint(input).mv(grad)


def _dot_grad(grad, input, tensor):
    return grad * _conj(tensor), grad * _conj(input)


def _vdot_grad(grad, input, other):
    # vdot conjugates its first operand: sum(conj(input) * other).
    return _conj(grad) * other, grad * input


def _outer_grad(grad, input, vec2, needs_input_grad):
    # Products and sums rather than mv: outer promotes, so the operands' dtypes may differ. Each
    # operand is saved only for the other's gradient (save_only_for), as by PyTorch's composite
    # (a MulBackward0 of input.reshape(n, 1) and vec2).
    return ((grad * _conj(vec2)).sum(1) if needs_input_grad[0] else None,
            (grad * _conj(input.unsqueeze(1))).sum(0) if needs_input_grad[1] else None)


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
    grad_a = grad.mm(_adjoint(b_matrix)).reshape([a.shape[d] for d in order_a]).permute(_inverse(order_a))
    grad_b = _adjoint(a_matrix).mm(grad).reshape([b.shape[d] for d in order_b]).permute(_inverse(order_b))
    return grad_a, grad_b


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


def _addmm_grad(grad, mat1, mat2, beta, alpha):
    grad_mat1, grad_mat2 = grad.mm(_adjoint(mat2)), _adjoint(mat1).mm(grad)
    if alpha != 1:
        grad_mat1, grad_mat2 = grad_mat1 * _conj(alpha), grad_mat2 * _conj(alpha)
    return (grad if beta == 1 else grad * _conj(beta)), grad_mat1, grad_mat2


def _trace_grad(grad, input_shape):
    # The gradient is ``grad`` on the main diagonal: a mask of ones kept by both triangles.
    return grad * grad.new_ones(tuple(input_shape)).triu().tril()


def _matrix_power_grad(grad, input, n):
    if n == 0:
        return grad * 0
    base = input if n > 0 else input.matrix_power(-1)
    steps = abs(n)
    transposed = _adjoint(base)
    # d(B^k) = sum_j B^j dB B^(k-1-j), so the gradient is sum_j (B^H)^j grad (B^H)^(k-1-j).
    grad_base = None
    for j in range(steps):
        term = transposed.matrix_power(j).matmul(grad).matmul(transposed.matrix_power(steps - 1 - j))
        grad_base = term if grad_base is None else grad_base + term
    if n > 0:
        return grad_base
    # B = A^-1: dB = -B dA B, so the gradient for A is -B^H grad_B B^H.
    return -transposed.matmul(grad_base).matmul(transposed)


def _einsum_grad(grad, equation, operands):
    """Each operand's gradient: the output gradient times every other operand, in one
    broadcast space of all labels, summed over the labels the operand lacks; repeated
    labels (diagonals) are embedded back with ``diag_embed``."""
    tensors = list(operands)
    labels = _EinsumLabels(equation.replace(" ", ""), [tuple(t.shape) for t in tensors])
    space = list(dict.fromkeys(labels.output + [label for full in labels.full for label in full]))
    spread = [_to_label_space(t, full, space) for t, full in zip(tensors, labels.full, strict=True)]
    spread_grad = _to_label_space(grad, labels.output, space)
    grads = []
    for i, (tensor, full) in enumerate(zip(tensors, labels.full, strict=True)):
        total = spread_grad
        for j, other in enumerate(spread):
            if j != i:
                total = total * _conj(other)
        own = list(dict.fromkeys(full))
        summed = tuple(k for k, label in enumerate(space) if label not in own)
        if summed:
            total = total.sum(summed)
        present = [label for label in space if label in own]
        total = total.permute([present.index(label) for label in own]) if own else total
        sizes = dict(zip(full, tensor.shape, strict=True))
        total = total.expand([sizes[label] if total.shape[k] == 1 else total.shape[k]
                              for k, label in enumerate(own)])
        grads.append(_embed_repeats(total, own, full))
    return grads


def _to_label_space(t, full: list[str], space: list[str]):
    """``t`` (dims labelled ``full``) with diagonals taken for repeated labels, permuted to
    ``space``'s order and with size-1 dims for the labels it lacks."""
    full = list(full)
    while len(set(full)) != len(full):
        label = next(x for x in full if full.count(x) > 1)
        first = full.index(label)
        second = full.index(label, first + 1)
        t = t.diagonal(0, first, second)
        full = [x for k, x in enumerate(full) if k not in (first, second)] + [label]
    if full:
        order = sorted(range(len(full)), key=lambda k: space.index(full[k]))
        t = t.permute(order)
        full = [full[k] for k in order]
    sizes = dict(zip(full, t.shape, strict=True))
    return t.reshape([sizes.get(label, 1) for label in space])


def _embed_repeats(t, own: list[str], full: list[str]):
    """``t`` (dims labelled ``own``, unique) spread onto the diagonals ``full`` repeats."""
    current = list(own)
    for label in own:
        if full.count(label) < 2:
            continue
        if full.count(label) > 2:
            raise NotImplementedError("einsum backward: a subscript repeated more than twice in one operand")
        t = t.movedim(current.index(label), -1).diag_embed(0, -2, -1)
        current.remove(label)
        current += [label, label]
    if current == full:
        return t
    order, used = [], set()
    for label in full:
        k = next(k for k, x in enumerate(current) if x == label and k not in used)
        used.add(k)
        order.append(k)
    return t.permute(order)


# -- the product family, one PyTorch error vocabulary each ------------------------------------------------

def _mm_checks(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(a.shape)} and "
                           f"{_shape_text(b.shape)})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_type_name(_dtype(a))} != "
                           f"{cpp_type_name(_dtype(b))}")
    _check_bool("addmm_impl_cpu_", a, empty=a.shape[1] == 0 or a.shape[0] * b.shape[1] == 0)


def _mv_checks(matrix: np.ndarray, vector: np.ndarray) -> None:
    if matrix.shape[1] != vector.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({matrix.shape[0]}), mat ({_shape_text(matrix.shape)}), "
                           f"vec ({vector.shape[0]})")
    if matrix.dtype != vector.dtype:
        vec, mat = scalar_type_name(_dtype(vector)), scalar_type_name(_dtype(matrix))
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {vec}, {mat}, and {vec}")
    _check_bool("addmv_impl_cpu", matrix, empty=matrix.size == 0)


def _dot_checks(a: np.ndarray, b: np.ndarray, kernel_name: str = "dot") -> None:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(_dtype(a))} and {scalar_type_name(_dtype(b))}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                           f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                           "respectively")
    _check_bool(kernel_name, a)


def _bmm_checks(a: np.ndarray, b: np.ndarray) -> None:
    batch, k = a.shape[0], a.shape[2]
    if b.shape[0] != batch or b.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: "
                           f"[{b.shape[0]}, {b.shape[1]}].")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(_dtype(a))} but found "
                           f"{scalar_type_name(_dtype(b))}")
    _check_bool("bmm", a, empty=k == 0 or a.shape[0] * a.shape[1] * b.shape[2] == 0)


def _batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``matmul`` of operands with batch dimensions: batches broadcast, then a bmm."""
    a_matrix = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b_matrix = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    batch = check_same_shape_or_broadcast(a_matrix.shape[:-2], b_matrix.shape[:-2])
    count = int(np.prod(batch, dtype=np.int64))
    a3 = np.broadcast_to(a_matrix, (*batch, *a_matrix.shape[-2:])).reshape(count, *a_matrix.shape[-2:])
    b3 = np.broadcast_to(b_matrix, (*batch, *b_matrix.shape[-2:])).reshape(count, *b_matrix.shape[-2:])
    _bmm_checks(a3, b3)
    result = _product(np.matmul, a3, b3).reshape(*batch, a_matrix.shape[-2], b_matrix.shape[-1])
    if a.ndim == 1:
        result = result[..., 0, :]
    if b.ndim == 1:
        result = result[..., 0]
    return result


@op(grad=_matmul_grad, method=True, out=True, ufunc=np.matmul,
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


@op(grad=_mm_grad, method=True, out=True, samples=(
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


@op(grad=_bmm_grad, method=True, out=True, samples=(
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
    _bmm_checks(input, mat2)
    return _product(np.matmul, input, mat2)


@op(grad=_mv_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((3,)))),
    Sample((TensorSpec((4, 2), "int16"), TensorSpec((2,), "int16"))),
    Sample((TensorSpec((2, 0), "int64"), TensorSpec((0,), "int64")))))
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product of the matrix ``input`` (n x m) and the vector ``vec`` (m).

    >>> import tensormodes as tm
    >>> tm.mv(tm.tensor([[1, 2], [3, 4]]), tm.tensor([1, -1]))
    tensor([-1, -1])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _mv_checks(input, vec)
    return _product(np.matmul, input, vec)


@op(grad=_dot_grad, method=True, out=True, samples=(
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


@op(grad=_vdot_grad, method=True, out=True, samples=(
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


@op(grad=_outer_grad, save_only_for={"input": "vec2", "vec2": "input"}, method=True, out=True,
    samples=_OUTER_SAMPLES)
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of the vectors ``input`` (n) and ``vec2`` (m): an n x m matrix (dtypes promote).

    >>> import tensormodes as tm
    >>> tm.outer(tm.tensor([1, 2]), tm.tensor([1, 10, 100]))
    tensor([[  1,  10, 100],
            [  2,  20, 200]])
    """
    return _outer(input, vec2)


@op(grad=_outer_grad, save_only_for={"input": "vec2", "vec2": "input"}, method=True, out=True,
    samples=_OUTER_SAMPLES[:2])
def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """Alias of ``outer`` (deprecated in PyTorch).

    >>> import tensormodes as tm
    >>> tm.ger(tm.tensor([1, 2]), tm.tensor([3])).tolist()
    [[3], [6]]
    """
    return _outer(input, vec2)


@op(grad=_inner_grad, save_only_for={"input": "other", "other": "input"}, method=True, out=True, samples=(
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
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype != other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if input.ndim == 1 and other.ndim == 1:
        _check_bool("dot", input, empty=input.size == 0)
    else:
        _check_bool("addmm_impl_cpu_", input, empty=input.shape[-1] == 0 or input.size * other.size == 0)
    return _product(np.inner, input, other)


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


@op(grad=_tensordot_grad, out=True, samples=(
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
    return _product(lambda x, y: np.tensordot(x, y, axes=(list(wrapped_a), list(wrapped_b))), a, b)


@op(grad=_addmm_grad, method=True, inplace=True, out=True, samples=(
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
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(mat1.shape)} and "
                           f"{_shape_text(mat2.shape)})")
    target = (mat1.shape[0], mat2.shape[1])
    _check_expandable(input.shape, target)
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_type_name(_dtype(input))} and "
                           f"{scalar_type_name(_dtype(mat2))}")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_type_name(_dtype(mat1))} and "
                           f"{scalar_type_name(_dtype(mat2))}")
    dtype = _dtype(input)
    _check_bool("addmm_impl_cpu_", input, empty=0 in target)
    beta, alpha = _coefficient(beta, dtype), _coefficient(alpha, dtype)
    if dtype._category == dt._INT:
        beta, alpha = int(beta), int(alpha)
    product = _product(np.matmul, mat1, mat2)
    compute = np.float32 if input.dtype in _HALF_TYPES else input.dtype
    result = product.astype(compute) * alpha if alpha != 1 else product.astype(compute)
    if beta != 0:
        scaled = input.astype(compute) * beta if beta != 1 else input.astype(compute)
        result = result + scaled
    return np.broadcast_to(result, target).astype(input.dtype)


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


@op(grad=_trace_grad, method=True, samples=(
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


@op(grad=_matrix_power_grad, method=True, out=True, samples=(
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
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    n = int(n)
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    if n == 0:
        return np.broadcast_to(np.eye(input.shape[-1], dtype=input.dtype), input.shape).copy()
    if n == 1:
        return input.copy()
    base = input
    if n < 0:
        if input.dtype.kind not in "fc" and input.dtype != dt.bfloat16._np:
            raise RuntimeError(f"linalg.inv: Expected a floating point or complex tensor as input. Got "
                               f"{scalar_type_name(_dtype(input))}")
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


# -- einsum -----------------------------------------------------------------------------------------

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_equation(arguments: tuple) -> tuple[str, list]:
    """``einsum(op0, [0, 1], op1, [1, 2], [0, 2])`` -> (``"Ab,bc->Ac"``-style equation, operands)."""
    operands, terms = list(arguments[0::2]), [list(s) for s in arguments[1::2]]
    output = None
    if len(operands) > len(terms):  # the trailing element is the output sublist
        output = operands.pop()
    if len(operands) != len(terms):
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")

    def letters(sublist) -> str:
        text = []
        for s in sublist:
            if s is Ellipsis:
                text.append("...")
                continue
            if not isinstance(s, numbers.Integral) or not 0 <= s < len(_LETTERS):
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            text.append(_LETTERS[int(s)])
        return "".join(text)

    equation = ",".join(letters(t) for t in terms)
    if output is not None:
        equation += "->" + letters(output)
    return equation, operands


def _einsum_arguments(equation, operands: tuple) -> tuple:
    """The forms PyTorch's ``einsum`` accepts besides ``(equation, *operands)``: a single list
    of operands, and the sublist format (a tensor first), turned into an equation."""
    if array_of(equation) is not None:
        equation, operands = _sublist_equation((equation, *operands))
        return equation, tuple(operands)
    return equation, one_sequence_as_items(operands)


def _parse_term(term: str, offset: int, operand: int | str) -> tuple[list[str], bool]:
    """Labels of one subscript term (``"..."`` kept as one label) and whether it has an ellipsis."""
    labels, i, ellipsis = [], 0, False
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {operand} that is not part of any ellipsis")
            labels.append("...")
            ellipsis = True
            i += 3
            continue
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        labels.append(c)
        i += 1
    return labels, ellipsis


class _EinsumLabels:
    """An einsum equation checked against the operands' shapes (PyTorch's messages).

    ``named``: each operand's letter labels; ``full``: each operand's label per
    dimension, the ellipsis dimensions labelled ``"0"``, ``"1"`` ... aligned to the
    right as they broadcast; ``output``: the output's labels in the same terms;
    ``kept``: the letters the output keeps.
    """

    def __init__(self, equation: str, shapes: list[tuple[int, ...]]) -> None:
        lhs, arrow, rhs = equation.partition("->")
        terms = lhs.split(",")
        if len(terms) > len(shapes):
            raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
        if len(terms) < len(shapes):
            raise RuntimeError("einsum(): more operands were provided than specified in the equation")
        parsed, offset = [], 0
        sizes: dict[str, int] = {}
        ellipsis_counts = []
        for index, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
            labels, ellipsis = _parse_term(term, offset, index)
            offset += len(term) + 1
            named = [label for label in labels if label != "..."]
            if not ellipsis and len(named) != len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(named)}) does not "
                                   f"match the number of dimensions ({len(shape)}) for operand {index} and no "
                                   "ellipsis was given")
            if ellipsis and len(named) > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(named)}) is more than "
                                   f"the number of dimensions ({len(shape)}) for operand {index}")
            ellipsis_counts.append(len(shape) - len(named))
            dims = iter(shape)
            seen_here: dict[str, int] = {}
            for label in labels:
                if label == "...":
                    for _ in range(len(shape) - len(named)):
                        next(dims)
                    continue
                size = next(dims)
                if label in seen_here and seen_here[label] != size:
                    raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {index} but the sizes "
                                       f"don't match, {size} != {seen_here[label]}")
                seen_here[label] = size
                previous = sizes.get(label)
                if previous is not None and size != previous and size != 1 and previous != 1:
                    raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand {index} which does "
                                       f"not broadcast with previously seen size {previous}")
                if previous is None or previous == 1:
                    sizes[label] = size
            parsed.append(labels)
        widest = max(ellipsis_counts, default=0)
        self.named = [[label for label in labels if label != "..."] for labels in parsed]
        self.full = [self._expand(labels, count, widest) for labels, count in zip(parsed, ellipsis_counts, strict=True)]
        if arrow:
            output, _ = _parse_term(rhs, len(lhs) + 2, "output")
            for label in output:
                if label == "...":
                    continue
                if label not in sizes:
                    raise RuntimeError(f"einsum(): output subscript {label} does not appear in the equation for any "
                                       "input operand")
                if output.count(label) > 1:
                    raise RuntimeError(f"einsum(): output subscript {label} appears more than once in the output")
            self.kept = {label for label in output if label != "..."}
            self.output = self._expand(output, widest, widest)
        else:
            counts: dict[str, int] = {}
            for named in self.named:
                for label in named:
                    counts[label] = counts.get(label, 0) + 1
            self.kept = {label for label, count in counts.items() if count == 1}
            self.output = [str(i) for i in range(widest)] + sorted(self.kept)

    @staticmethod
    def _expand(labels: list[str], count: int, widest: int) -> list[str]:
        """Labels with ``...`` replaced by ``count`` ellipsis labels, right-aligned among ``widest``."""
        expanded = []
        for label in labels:
            if label == "...":
                expanded.extend(str(i) for i in range(widest - count, widest))
            else:
                expanded.append(label)
        return expanded


def _einsum_plan(equation: str, arrays: list[np.ndarray]) -> tuple[str, dt.dtype]:
    """Validate ``equation`` against the operands; return the equation for NumPy and the
    result dtype PyTorch's contraction order produces."""
    equation = equation.replace(" ", "")
    labels = _EinsumLabels(equation, [a.shape for a in arrays])
    return equation, _einsum_dtype(labels.named, labels.kept, arrays)


def _einsum_dtype(parsed: list[list[str]], kept: set[str], arrays: list[np.ndarray]) -> dt.dtype:
    """PyTorch's result dtype: labels found in one operand only are summed out first (``sum``
    promotes integers to int64), then operands combine left to right, by a product (dtypes
    promote) or, when labels are contracted, by a bmm (dtypes must match, no bool)."""
    last_operand = {}
    for index, named in enumerate(parsed):
        for label in named:
            last_operand[label] = index
    dtypes = []
    for index, (named, array) in enumerate(zip(parsed, arrays, strict=True)):
        d = _dtype(array)
        own = {label for label in named if label not in kept
               and all(label not in other for j, other in enumerate(parsed) if j != index)}
        if own and d._category <= dt._INT:
            d = dt.int64
        dtypes.append(d)
    combined = dtypes[0]
    for index in range(1, len(parsed)):
        earlier = set().union(*parsed[:index])
        contracted = {label for label in parsed[index]
                      if label not in kept and last_operand[label] == index and label in earlier}
        d = dtypes[index]
        if contracted:
            if combined is not d:
                raise RuntimeError(f"expected scalar type {scalar_type_name(combined)} but found "
                                   f"{scalar_type_name(d)}")
            if d is dt.bool:
                raise not_implemented("bmm", d)
        else:
            combined = dt.promote_types(combined, d)
    return combined


@op(grad=_einsum_grad, normalize=_einsum_arguments, samples=(
    Sample(("ij,jk->ik", TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample(("ij,jk", TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample(("ii", TensorSpec((3, 3)))), Sample(("ii->i", TensorSpec((3, 3), "int32"))),
    Sample(("...ij->...ji", TensorSpec((2, 3, 4)))),
    Sample(("i,j->ij", TensorSpec((3,), "int32"), TensorSpec((2,), "int64"))),
    Sample(("i->", TensorSpec((4,), "bool"))), Sample(("bij,bjk->bik", TensorSpec((2, 2, 3)), TensorSpec((2, 3, 2)))),
    Sample(("ij,ij->ij", TensorSpec((2, 3)), TensorSpec((1, 3)))),
    Sample(("i j , j k -> i k", TensorSpec((2, 3)), TensorSpec((3, 4)))),
    Sample(("ij,k->i", TensorSpec((2, 3), "int32"), TensorSpec((4,), "int32"))),
    Sample(("i,i,i->", TensorSpec((3,), "float64"), TensorSpec((3,), "float64"), TensorSpec((3,), "float64"))),
    Sample(("Ab,bC->CA", TensorSpec((2, 3), "float16"), TensorSpec((3, 2), "float16"))),
    Sample(("ii,i->i", TensorSpec((3, 3)), TensorSpec((3,)))), Sample(("i,i->i", TensorSpec((3,)), TensorSpec((1,)))),
    Sample(("ij,jk", [TensorSpec((2, 3)), TensorSpec((3, 4))])),
    Sample((TensorSpec((2, 3)), [0, 1], TensorSpec((3, 4)), [1, 2], [2, 0])),
    Sample((TensorSpec((2, 3)), [Ellipsis, 1], TensorSpec((3,)), [1]))))
def einsum(equation, *operands: Tensor) -> Tensor:
    """Sums the product of the elements of ``operands`` along the dimensions named in
    ``equation``, using the Einstein summation convention.

    ``equation`` labels each dimension of each operand with a letter
    (``"ij,jk->ik"``); ``...`` stands for broadcast dimensions; without ``->``
    the output keeps the letters used once, in alphabetical order.

    >>> import tensormodes as tm
    >>> tm.einsum("ij,jk->ik", tm.ones(2, 3), tm.ones(3, 4)).shape
    tensormodes.Size([2, 4])
    >>> tm.einsum("ii", tm.tensor([[1, 2], [3, 4]]))
    tensor(5)

    The operands may also come as one list, or in the sublist format, each operand
    followed by a list of ints naming its dimensions (then, optionally, the output's):

    >>> tm.einsum(tm.ones(2, 3), [0, 1], tm.ones(3, 4), [1, 2], [0, 2]).shape
    tensormodes.Size([2, 4])
    """
    arrays = list(operands)
    if not arrays:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    equation, result_dtype = _einsum_plan(equation, arrays)
    compute = np.float32 if result_dtype._np in _HALF_TYPES else result_dtype._np
    result = np.einsum(equation, *(a.astype(compute, copy=False) for a in arrays))
    return np.asarray(result).astype(result_dtype._np, copy=False)



# -- decompositions ---------------------------------------------------------------------------------

class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (``torch.linalg.LinAlgError``): a
    RuntimeError, so code catching PyTorch's errors by that type still works.

    >>> import tensormodes as tm
    >>> issubclass(tm.linalg.LinAlgError, RuntimeError)
    True
    """

    __module__ = "tensormodes.linalg"


def _skew(x):
    return x - _adjoint(x)


_PHASE_DEPENDENT = ("svd_backward: The singular vectors in the complex case are specified up to multiplication by "
                    "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.")


def _svd_grad(grad, result, full_matrices):
    # PyTorch's svd_backward. An output that received no gradient arrives as zeros: its terms
    # are skipped, as PyTorch skips undefined gradients, because they divide by singular
    # values and their differences (0 / 0 for rank-deficient inputs).
    grad_u, grad_s, grad_vh = grad
    u, s, vh = result
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if full_matrices and m != n:
        # The columns past k span a null space, not a function of the input: PyTorch ignores
        # their gradient, and so does this.
        u, vh, grad_u, grad_vh = u[..., :k], vh[..., :k, :], grad_u[..., :k], grad_vh[..., :k, :]
    use_u, use_vh = bool(grad_u.any()), bool(grad_vh.any())
    if not (use_u or use_vh):
        return u @ (grad_s.unsqueeze(-1) * vh)
    squares = s * s
    # gaps[i, j] = s_j^2 - s_i^2, and 1 on the diagonal (whose terms are zero)
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1) + public("eye")(k, dtype=s.dtype)
    inner = 0
    u_grad_u = _adjoint(u) @ grad_u if use_u else None
    if use_u:
        inner = _skew(u_grad_u) * s.unsqueeze(-2)
    if use_vh:
        inner = inner + s.unsqueeze(-1) * _skew(vh @ _adjoint(grad_vh))
    inner = inner / gaps + grad_s.diag_embed()
    if u.dtype.is_complex:
        # Turning a singular vector pair by a phase leaves the input unchanged, so a loss
        # must not depend on it: as in PyTorch, the two phase derivatives must cancel.
        phase_u = u_grad_u.diagonal(0, -2, -1).imag if use_u else s * 0
        phase_v = (vh @ _adjoint(grad_vh)).diagonal(0, -2, -1).imag if use_vh else s * 0
        if not public("allclose")(phase_u, -phase_v, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_PHASE_DEPENDENT)
        inner = inner + (phase_u / s * 1j).diag_embed()
    if m > n and use_u:
        scaled = grad_u / s.unsqueeze(-2)
        return (u @ inner + scaled - u @ (_adjoint(u) @ scaled)) @ vh
    if m < n and use_vh:
        scaled = grad_vh / s.unsqueeze(-1)
        return u @ (inner @ vh + scaled - (scaled @ _adjoint(vh)) @ vh)
    return u @ inner @ vh


def _svdvals_grad(grad, A):
    # PyTorch keeps the factors of the forward SVD; this recomputes them, through the public
    # svd so that the gradient is itself differentiable.
    u, _, vh = public("svd", "tensormodes.linalg")(A, full_matrices=False)
    return u @ (grad.unsqueeze(-1) * vh)


def _svd_checks(A: np.ndarray) -> None:
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if A.dtype.kind not in "fc" and A.dtype != dt.bfloat16._np:
        raise RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(_dtype(A))}")
    if A.dtype in _HALF_TYPES:
        raise not_implemented("linalg_svd_cpu", _dtype(A))


def _check_driver(driver) -> None:
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def _finite_matrices(A: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``A`` with its non-finite matrices zeroed, and a mask of them (None if all are finite).
    As in PyTorch, a NaN raises (naming the first matrix with one, if batched); a matrix
    with an infinity gets NaN factors."""
    has_nan = np.isnan(A).any(axis=(-2, -1))
    if has_nan.any():
        where = "" if A.ndim == 2 else f"(Batch element {int(np.flatnonzero(has_nan)[0])}): "
        raise LinAlgError(f"linalg.svd: {where}The algorithm failed to converge because the input matrix "
                          "contained non-finite values.")
    finite = np.isfinite(A).all(axis=(-2, -1))
    if finite.all():
        return A, None
    return np.where(finite[..., None, None], A, 0), ~finite


def _canonical_phases(u: np.ndarray, vh: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Singular vectors are unique only up to sign (a unit phase if complex), which LAPACK
    builds differ on; fixing it makes results reproducible: each column of ``u`` is turned
    so that its largest entry is real and positive, and the matching row of ``vh`` the other
    way (so that ``u * s @ vh`` is unchanged); rows of ``vh`` past ``k`` are turned alone."""

    def phases(vectors: np.ndarray, axis: int) -> np.ndarray:
        largest = np.take_along_axis(vectors, np.abs(vectors).argmax(axis=axis, keepdims=True), axis=axis)
        size = np.abs(largest)
        return np.where(size > 0, largest / np.where(size > 0, size, 1), 1)

    column_phases = phases(u, -2)  # (..., 1, columns)
    u = u * column_phases.conj()
    row_turns = phases(vh, -1).conj()  # (..., rows, 1)
    row_turns[..., :k, :] = np.swapaxes(column_phases[..., :k], -2, -1)
    return u, vh * row_turns


def _empty_svd(A: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    *batch, m, n = A.shape
    k = min(m, n)
    real = A.real.dtype
    if full_matrices:
        u_shape, vh_shape = (m, m), (n, n)
    else:
        u_shape, vh_shape = (m, k), (k, n)
    u = np.broadcast_to(np.eye(*u_shape, dtype=A.dtype), (*batch, *u_shape)).copy()
    vh = np.broadcast_to(np.eye(*vh_shape, dtype=A.dtype), (*batch, *vh_shape)).copy()
    return u, np.zeros((*batch, k), real), vh


@op(grad=_svd_grad, name="linalg_svd", function="svd", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((3, 2)), False)),
    Sample((TensorSpec((2, 4), "float64"),), {"full_matrices": False}), Sample((TensorSpec((2, 3, 2)), False)),
    Sample((TensorSpec((3, 2), "complex64"),)), Sample((TensorSpec((2, 3), "complex128"), True)),
    Sample((TensorSpec((0, 3)),)), Sample((TensorSpec((2, 0, 2)), False))))
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> Tensor:
    """The singular value decomposition ``A = U @ diag(S) @ Vh`` of a matrix (or of each in a
    batch), as the named tuple ``(U, S, Vh)``: ``S`` real and descending, ``U`` and ``Vh``
    with orthonormal columns and rows. ``full_matrices=False`` keeps only the ``min(m, n)``
    singular vectors that pair with ``S``. Each singular vector's sign (phase, if complex)
    is fixed so that its largest entry is real and positive; ``Vh``'s rows follow ``U``'s.

    >>> import tensormodes as tm
    >>> U, S, Vh = tm.linalg.svd(tm.tensor([[3., 0.], [0., -4.]]))
    >>> S.tolist(), (U @ S.diag_embed() @ Vh).tolist()
    ([4.0, 3.0], [[3.0, 0.0], [0.0, -4.0]])
    """
    _svd_checks(A)
    if not isinstance(full_matrices, (bool, np.bool_)):
        raise TypeError(f"linalg_svd(): argument 'full_matrices' must be bool, not {type(full_matrices).__name__}")
    _check_driver(driver)
    result_type = RETURN_TYPES["linalg_svd"]
    if A.size == 0:
        return result_type(*_empty_svd(A, bool(full_matrices)))
    work, broken = _finite_matrices(A)
    u, s, vh = np.linalg.svd(work, full_matrices=bool(full_matrices))
    u, vh = _canonical_phases(u, vh, s.shape[-1])
    if broken is not None:
        for factor in (u, s, vh):
            factor[broken] = np.nan
    return result_type(u, s, vh)


@op(grad=_svdvals_grad, name="linalg_svdvals", function="svdvals", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 2)),)), Sample((TensorSpec((2, 3, 4), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),)), Sample((TensorSpec((0, 2)),))))
def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of a matrix (or of each in a batch), real and descending: ``S``
    of ``svd``, cheaper, since no singular vectors are computed.

    >>> import tensormodes as tm
    >>> tm.linalg.svdvals(tm.tensor([[3., 0.], [0., -4.]])).tolist()
    [4.0, 3.0]
    """
    _svd_checks(A)
    _check_driver(driver)
    if A.size == 0:
        return _empty_svd(A, False)[1]
    work, broken = _finite_matrices(A)
    s = np.linalg.svd(work, compute_uv=False)
    if broken is not None:
        s[broken] = np.nan
    return s


# -- determinants, inverses and linear systems ----------------------------------------------------

def _square_checks(name: str, A: np.ndarray) -> None:
    """PyTorch's checks of a batch of square matrices, in its order (the dtype is checked apart)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _floating_check(name: str, A: np.ndarray) -> None:
    if A.dtype.kind not in "fc" and A.dtype != dt.bfloat16._np:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(_dtype(A))}")


def _low_precision_check(name: str, A: np.ndarray) -> None:
    if A.dtype in _HALF_TYPES:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {scalar_type_name(_dtype(A))}")


def _batch_prefix(batch_shape: tuple, flat_index: int) -> str:
    return f"(Batch element {flat_index}): " if batch_shape else ""


def _first_zero_pivot(matrix: np.ndarray) -> int:
    """The 1-based position of the first zero on U's diagonal in the LU factorisation with partial
    pivoting (LAPACK's ``getrf`` info; its pivot is the first entry of largest |re| + |im|), or 0."""
    lu = np.array(matrix, dtype=np.complex128 if matrix.dtype.kind == "c" else np.float64)
    n = lu.shape[0]
    for k in range(n):
        column = lu[k:, k]
        pivot = k + int(np.argmax(np.abs(column.real) + np.abs(column.imag)))
        if lu[pivot, k] == 0:
            return k + 1
        lu[[k, pivot]] = lu[[pivot, k]]
        lu[k + 1:, k] /= lu[k, k]
        lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return 0


def _singular_position(matrices: np.ndarray) -> tuple[int, int]:
    """``(batch element, 1-based diagonal position)`` of the first matrix of a batch whose LU
    factorisation meets a zero pivot; if rounding hides it, the matrix of smallest |det|."""
    flat = matrices.reshape(-1, *matrices.shape[-2:])
    for index, matrix in enumerate(flat):
        position = _first_zero_pivot(matrix)
        if position:
            return index, position
    return int(np.argmin(np.abs(np.linalg.det(flat)))), flat.shape[-1]


def _det_grad(grad, A, result):
    if not bool((result == 0).any()):
        return (grad * _conj(result)).unsqueeze(-1).unsqueeze(-1) * _adjoint(public("inv", "tensormodes.linalg")(A))
    # The gradient is the conjugate of the cofactor matrix, adj(A)^H, which the inverse cannot give
    # for a singular matrix: with A = U diag(S) Vh, adj(A)^H = conj(det U det Vh) U diag(P) Vh,
    # P_i the product of the other singular values. (PyTorch gives it with create_graph=True, zeros
    # otherwise.)
    u, s, vh = public("svd", "tensormodes.linalg")(A)
    n = s.shape[-1]
    others = public("where")(public("eye")(n, dtype=public("bool")), 1, s.unsqueeze(-2).expand(*s.shape[:-1], n, n))
    det = public("det", "tensormodes.linalg")
    phase = _conj(det(u) * det(vh)).unsqueeze(-1).unsqueeze(-1)
    return grad.unsqueeze(-1).unsqueeze(-1) * phase * (u * others.prod(-1).unsqueeze(-2).to(u.dtype)) @ vh


@op(grad=_det_grad, name="linalg_det", function="det", namespace="tensormodes.linalg", out=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)), Sample((TensorSpec((1, 1)),)),
    Sample((TensorSpec((3, 3), "complex64"),)), Sample((TensorSpec((2, 2), "complex128"),)),
    Sample((TensorSpec((0, 3, 3)),)), Sample((TensorSpec((0, 0)),))))
def linalg_det(A: Tensor) -> Tensor:
    """The determinant of a square matrix (or of each in a batch); 0 for a singular one.

    The gradient is ``grad * conj(det) * inv(A).mH``; for a singular matrix, where the
    inverse does not exist, it is the conjugate of the cofactor matrix times ``grad`` (nonzero
    for rank ``n - 1``), computed through ``svd``: PyTorch gives that only with
    ``create_graph=True`` and zeros otherwise.

    >>> import tensormodes as tm
    >>> tm.linalg.det(tm.tensor([[2., 3.], [4., 5.]], dtype=tm.float64))
    tensor(-2., dtype=tensormodes.float64)
    """
    _square_checks("linalg.det", A)
    _floating_check("linalg.det", A)
    if A.dtype in _HALF_TYPES:
        raise not_implemented("lu_cpu", _dtype(A))
    return np.asarray(np.linalg.det(A), dtype=A.dtype)


def _slogdet_grad(grad, A, result):
    grad_sign, grad_logabsdet = grad
    scale = grad_logabsdet
    if A.is_complex():
        # sign = det / |det| turns with the imaginary part of tr(A^-1 dA), logabsdet grows with its
        # real part: both are the same trace, weighted by a complex scale.
        scale = grad_logabsdet + (grad_sign * _conj(result[0])).imag * 1j
    return scale.unsqueeze(-1).unsqueeze(-1) * _adjoint(public("inv", "tensormodes.linalg")(A))


@op(grad=_slogdet_grad, name="linalg_slogdet", function="slogdet", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 3, 3), "complex64"),)), Sample((TensorSpec((0, 2, 2)),))))
def linalg_slogdet(A: Tensor) -> Tensor:
    """The sign (a unit phase, if complex) and the log of the absolute value of the determinant
    of a square matrix (or of each in a batch), as the named tuple ``(sign, logabsdet)``:
    ``det = sign * exp(logabsdet)``, without overflow. A singular matrix gives ``(0, -inf)``;
    its backward raises ``LinAlgError`` (PyTorch's returns infinities), as the gradient,
    ``inv(A).mH`` times the output gradients, does not exist there.

    >>> import tensormodes as tm
    >>> tm.linalg.slogdet(tm.tensor([[0., 2.], [1., 0.]]))
    tensormodes.return_types.linalg_slogdet(
    sign=tensor(-1.),
    logabsdet=tensor(0.6931))
    """
    _square_checks("linalg.slogdet", A)
    _floating_check("linalg.slogdet", A)
    _low_precision_check("linalg.slogdet", A)
    sign, logabsdet = np.linalg.slogdet(A)
    return RETURN_TYPES["linalg_slogdet"](np.asarray(sign, dtype=A.dtype),
                                          np.asarray(logabsdet, dtype=A.real.dtype))


def _top_level_det_grad(grad, input, result):
    return _det_grad(grad, input, result)


@op(grad=_top_level_det_grad, method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),))))
def det(input: Tensor) -> Tensor:
    """``tensormodes.linalg.det`` under its top-level name (also ``Tensor.det()``).

    >>> import tensormodes as tm
    >>> tm.tensor([[2., 3.], [4., 5.]]).det()
    tensor(-2.)
    """
    return linalg_det(input)


def _top_level_slogdet_grad(grad, input, result):
    return _slogdet_grad(grad, input, result)


@op(grad=_top_level_slogdet_grad, method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex128"),))))
def slogdet(input: Tensor) -> Tensor:
    """``tensormodes.linalg.slogdet`` under its top-level name (also ``Tensor.slogdet()``): the
    named tuple ``(sign, logabsdet)``.

    >>> import tensormodes as tm
    >>> tm.slogdet(tm.tensor([[0., 2.], [1., 0.]])).sign
    tensor(-1.)
    """
    return RETURN_TYPES["slogdet"](*linalg_slogdet(input))


def _inv_grad(grad, result):
    transposed = _adjoint(result)
    return -transposed @ grad @ transposed


def _singular_inverse(name: str, A: np.ndarray) -> LinAlgError:
    index, position = _singular_position(A)
    return LinAlgError(f"{name}: {_batch_prefix(A.shape[:-2], index)}The diagonal element {position} is zero, "
                       "the inversion could not be completed because the input matrix is singular.")


@op(grad=_inv_grad, name="linalg_inv", function="inv", namespace="tensormodes.linalg", out=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),)), Sample((TensorSpec((0, 2, 2)),)), Sample((TensorSpec((0, 0)),))))
def inv(A: Tensor) -> Tensor:
    """The inverse of a square matrix (or of each in a batch). A singular matrix raises
    ``LinAlgError``.

    >>> import tensormodes as tm
    >>> tm.linalg.inv(tm.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _square_checks("linalg.inv", A)
    _floating_check("linalg.inv", A)
    _low_precision_check("linalg.inv", A)
    if A.size == 0:
        return np.empty(A.shape, A.dtype)
    try:
        return np.asarray(np.linalg.inv(A), dtype=A.dtype)
    except np.linalg.LinAlgError:
        raise _singular_inverse("linalg.inv", A) from None


@op(grad=_inv_grad, method=True, out=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex64"),))))
def inverse(input: Tensor) -> Tensor:
    """``tensormodes.linalg.inv`` under its older name (also ``Tensor.inverse()``).

    >>> import tensormodes as tm
    >>> tm.tensor([[2., 0.], [0., 4.]]).inverse()
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return inv(input)


def _logdet_grad(grad, input, result):
    # d log det = tr(A^-1 dA); where det < 0 the (real) result is NaN and does not move.
    local = _adjoint(public("inv", "tensormodes.linalg")(input))
    scale = grad if input.is_complex() else grad.where(~result.isnan(), 0)
    return scale.unsqueeze(-1).unsqueeze(-1) * local


@op(grad=_logdet_grad, method=True, samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((2, 2, 2), "float64"),)),
    Sample((TensorSpec((2, 2), "complex128"),))))
def logdet(input: Tensor) -> Tensor:
    """The logarithm of the determinant of a square matrix (or of each in a batch): NaN for a
    negative determinant of a real matrix, -inf for a singular one. A singular matrix has no
    gradient here (backward raises ``LinAlgError``; PyTorch returns infinities).

    >>> import tensormodes as tm
    >>> round(tm.logdet(tm.tensor([[2., 0.], [0., 3.]])).item(), 4)
    1.7918
    """
    _square_checks("logdet", input)
    _floating_check("logdet", input)
    _low_precision_check("logdet", input)
    sign, logabsdet = np.linalg.slogdet(input)
    if input.dtype.kind == "c":
        return np.asarray(np.log(sign) + logabsdet, dtype=input.dtype)
    with quiet():
        return np.asarray(np.where(sign < 0, np.nan, logabsdet), dtype=input.dtype)


def _is_vector_rhs(A_shape, B_shape) -> bool:
    """Whether ``solve``'s ``B`` is a (batch of) vector(s) rather than of matrices."""
    return len(B_shape) == 1 or (len(B_shape) == len(A_shape) - 1 and tuple(B_shape) == tuple(A_shape[:-1]))


def _solve_grad(grad, A, result, left, B_shape, needs_input_grad):
    vector = _is_vector_rhs(A.shape, B_shape)
    grad_x, x = (grad.unsqueeze(-1), result.unsqueeze(-1)) if vector else (grad, result)
    grad_b = public("solve", "tensormodes.linalg")(_adjoint(A), grad_x, left=left)
    grad_a = None
    if needs_input_grad[0]:
        grad_a = -(grad_b @ _adjoint(x) if left else _adjoint(x) @ grad_b)
    if not needs_input_grad[1]:
        return grad_a, None
    return grad_a, (grad_b.squeeze(-1) if vector else grad_b)


@op(grad=_solve_grad, name="linalg_solve", function="solve", namespace="tensormodes.linalg", out=True, samples=(
    Sample((TensorSpec((3, 3)), TensorSpec((3,)))),
    Sample((TensorSpec((3, 3), "float64"), TensorSpec((3, 2), "float64"))),
    Sample((TensorSpec((2, 2, 2)), TensorSpec((2, 2)))), Sample((TensorSpec((2, 2, 2)), TensorSpec((2, 2, 3)))),
    Sample((TensorSpec((2, 2)), TensorSpec((3, 1, 2, 1)))),
    Sample((TensorSpec((3, 3)), TensorSpec((2, 3))), {"left": False}),
    Sample((TensorSpec((2, 2, 2), "float64"), TensorSpec((2, 3, 2), "float64")), {"left": False}),
    Sample((TensorSpec((2, 2), "complex64"), TensorSpec((2,), "complex64"))),
    Sample((TensorSpec((2, 2), "complex128"), TensorSpec((2, 2), "complex128")), {"left": False}),
    Sample((TensorSpec((0, 2, 2)), TensorSpec((2,))))))
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of the linear system ``A @ X = B`` (``X @ A = B`` if ``left=False``),
    for a square, invertible ``A`` (or each of a batch; batches broadcast). ``B`` may be a
    vector (or a batch of them, shaped as ``A`` without its last dimension) when ``left``.
    A singular ``A`` raises ``LinAlgError``.

    >>> import tensormodes as tm
    >>> tm.linalg.solve(tm.tensor([[2., 0.], [0., 4.]]), tm.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    _check_bool_argument("linalg_solve", "left", left)
    _floating_check("linalg.solve", A)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_type_name(_dtype(A))} and B of type {scalar_type_name(_dtype(B))} instead")
    _square_checks("linalg.solve", A)
    if B.ndim < 1:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    vector = _is_vector_rhs(A.shape, B.shape)
    matrix = B[..., None] if vector else B
    n = A.shape[-1]
    if matrix.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} "
                           f"= B ({n}x{n} and {matrix.shape[-2]}x{matrix.shape[-1]})")
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    if A.dtype in _HALF_TYPES:
        raise not_implemented("lu_cpu", _dtype(A))
    batch = check_same_shape_or_broadcast(matrix.shape[:-2], A.shape[:-2])
    a = np.broadcast_to(A, (*batch, n, n))
    b = np.broadcast_to(matrix, (*batch, *matrix.shape[-2:]))
    if not left:
        a, b = np.swapaxes(a, -2, -1), np.swapaxes(b, -2, -1)
    if b.size == 0 or a.size == 0:
        x = np.zeros(b.shape, A.dtype)
    else:
        try:
            x = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            index, _ = _singular_position(a)
            raise LinAlgError(f"tensormodes.linalg.solve: {_batch_prefix(batch, index)}The solver failed because "
                              "the input matrix is singular.") from None
    if not left:
        x = np.swapaxes(x, -2, -1)
    x = np.asarray(x, dtype=A.dtype)
    return x[..., 0] if vector else x


# -- Cholesky and QR decompositions ----------------------------------------------------------------

def _check_bool_argument(function: str, name: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{function}(): argument '{name}' must be bool, not {type(value).__name__}")


def _cholesky_grad(grad, result, upper):
    # A = L L^H gives dL = L Phi(L^-1 dA L^-H), Phi keeping the lower triangle with the diagonal
    # halved. Its adjoint, taken on Hermitian perturbations as PyTorch does (the gradient spreads
    # over both triangles, though only one is read), is L^-H P L^-1 with P = (M + tril(M, -1)^H) / 2,
    # M the lower triangle of L^H grad (whose diagonal PyTorch keeps whole, imaginary part
    # included, and so does this).
    lower, grad_lower = (_adjoint(result), _adjoint(grad)) if upper else (result, grad)
    m = (_adjoint(lower) @ grad_lower).tril()
    p = (m + _adjoint(m.tril(-1))) * 0.5
    solve_ = public("solve", "tensormodes.linalg")
    return solve_(lower, solve_(_adjoint(lower), p), left=False)


def _not_positive_definite(batch_shape: tuple, index: int, order: int) -> LinAlgError:
    return LinAlgError(f"linalg.cholesky: {_batch_prefix(batch_shape, index)}The factorization could not be "
                       "completed because the input is not positive-definite (the leading minor of order "
                       f"{order} is not positive-definite).")


def _first_failed_minor(A: np.ndarray) -> tuple[int, int]:
    """``(batch element, order)`` of the first leading minor that is not positive-definite."""
    flat = A.reshape(-1, *A.shape[-2:])
    for index, matrix in enumerate(flat):
        for order in range(1, matrix.shape[-1] + 1):
            try:
                np.linalg.cholesky(matrix[:order, :order])
            except np.linalg.LinAlgError:
                return index, order
    raise AssertionError("NumPy's Cholesky factorisation failed on a positive-definite batch")


@op(grad=_cholesky_grad, name="linalg_cholesky", function="cholesky", namespace="tensormodes.linalg", out=True,
    samples=(
    Sample((TensorSpec((3, 1, 1), "float32", 0.5, 2.0),)), Sample((TensorSpec((2, 1, 1), "float64", 0.5, 2.0),),
                                                              {"upper": True}),
    Sample((TensorSpec((0, 3, 3)),)), Sample((TensorSpec((0, 2, 2), "complex64"),), {"upper": True})))
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` of a Hermitian positive-definite matrix (or of each in a
    batch): lower triangular with a positive real diagonal, ``A = L @ L.mH``. Only the
    lower triangle of ``A`` is read; ``upper=True`` reads the upper one and returns
    ``U = L.mH`` (``A = U.mH @ U``). A matrix that is not positive-definite raises
    ``LinAlgError``.

    The gradient is PyTorch's: the input is taken as Hermitian, so the gradient is spread
    over both triangles (finite differences of one triangle alone do not match it).

    >>> import tensormodes as tm
    >>> tm.linalg.cholesky(tm.tensor([[4., 2.], [2., 5.]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    _check_bool_argument("linalg_cholesky", "upper", upper)
    _square_checks("linalg.cholesky", A)
    _floating_check("linalg.cholesky", A)
    if A.dtype in _HALF_TYPES:
        raise not_implemented("cholesky_cpu", _dtype(A))
    if A.size == 0:
        return np.empty(A.shape, A.dtype)
    work = np.swapaxes(A, -2, -1).conj() if upper else A
    try:
        lower = np.linalg.cholesky(work)
    except np.linalg.LinAlgError:
        raise _not_positive_definite(A.shape[:-2], *_first_failed_minor(work)) from None
    # LAPACK stops at a NaN pivot as at a non-positive one; NumPy's build carries the NaN on.
    nan_pivots = np.isnan(np.diagonal(lower, axis1=-2, axis2=-1).real).reshape(-1, A.shape[-1])
    if nan_pivots.any():
        index = int(np.flatnonzero(nan_pivots.any(axis=-1))[0])
        raise _not_positive_definite(A.shape[:-2], index, int(np.argmax(nan_pivots[index])) + 1)
    return np.asarray(np.swapaxes(lower, -2, -1).conj() if upper else lower, dtype=A.dtype)


_QR_MODES = ("reduced", "complete", "r")


def _qr_square_grad(q, r, grad_q, grad_r):
    """The gradient of ``(Q, R) = qr(A)`` for ``A`` with at least as many rows as columns, ``Q``
    reduced: (grad_Q + Q C) R^-H, C the Hermitian matrix (with a real diagonal) whose lower
    triangle is that of R grad_R^H - grad_Q^H Q: the part of dR R^-1 and Q^H dQ it meets."""
    n = r @ _adjoint(grad_r) - _adjoint(grad_q) @ q
    below = n.tril(-1)
    c = below + _adjoint(below) + n.diagonal(0, -2, -1).real.diag_embed().to(n.dtype)
    return public("solve", "tensormodes.linalg")(_adjoint(r), grad_q + q @ c, left=False)


def _qr_grad(grad, result, mode, A_shape):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = A_shape[-2], A_shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    grad_q, grad_r = grad
    q, r = result
    if m >= n:
        return _qr_square_grad(q, r, grad_q, grad_r)
    # A = Q [R1 R2]: (Q, R1) is the QR of A's first m columns, R2 = Q^H A2 (A2 the others),
    # which feeds grad_R2 into Q's gradient too.
    a2 = q @ r[..., m:]
    grad_r2 = grad_r[..., m:]
    grad_a1 = _qr_square_grad(q, r[..., :m], grad_q + a2 @ _adjoint(grad_r2), grad_r[..., :m])
    return public("cat")([grad_a1, q @ grad_r2], -1)


@op(grad=_qr_grad, name="linalg_qr", function="qr", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 3)),)), Sample((TensorSpec((4, 2), "float64"),)), Sample((TensorSpec((2, 2, 4)),)),
    Sample((TensorSpec((3, 2), "complex64"),)), Sample((TensorSpec((2, 3), "complex128"),), {"mode": "complete"}),
    Sample((TensorSpec((3, 3)), "complete")), Sample((TensorSpec((0, 4, 2)), "complete")),
    Sample((TensorSpec((2, 0, 3)),), {"mode": "r"}), Sample((TensorSpec((0, 3)),)), Sample((TensorSpec((3, 0)),)),
    Sample((TensorSpec((13, 3, 2), "float64"), "complete")), Sample((TensorSpec((13, 2, 3)), "r"))))
def qr(A: Tensor, mode: str = "reduced") -> Tensor:
    """The QR decomposition ``A = Q @ R`` of a matrix (or of each in a batch), as the named
    tuple ``(Q, R)``: ``Q`` with orthonormal columns, ``R`` upper triangular with a real
    diagonal (LAPACK's Householder convention, as PyTorch's). ``mode='reduced'`` keeps
    ``k = min(m, n)`` columns of ``Q`` and rows of ``R``, ``'complete'`` all ``m``, and
    ``'r'`` computes only ``R`` (``Q`` is empty). As in PyTorch, ``mode='r'`` and
    ``'complete'`` with more rows than columns have no gradient (backward raises).

    >>> import tensormodes as tm
    >>> Q, R = tm.linalg.qr(tm.tensor([[3., 1.], [4., 2.]], dtype=tm.float64))
    >>> R.tolist()
    [[-5.0, -2.2], [0.0, 0.3999999999999999]]
    """
    if not isinstance(mode, str):
        raise TypeError(f"linalg_qr(): argument 'mode' must be str, not {type(mode).__name__}")
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _floating_check("linalg.qr", A)
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    if A.dtype in _HALF_TYPES:
        raise not_implemented("geqrf_cpu", _dtype(A))
    *batch, m, n = A.shape
    result_type = RETURN_TYPES["linalg_qr"]
    k = m if mode == "complete" else min(m, n)
    if A.size == 0:
        q = np.broadcast_to(np.eye(m, k, dtype=A.dtype), (*batch, m, k)).copy()
        r = np.zeros((*batch, k, n), A.dtype)
    else:
        q, r = np.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.empty((0,), A.dtype)
    return result_type(np.asarray(q, dtype=A.dtype), np.asarray(r, dtype=A.dtype))


# -- Hermitian eigendecomposition ------------------------------------------------------------------

_EIGH_PHASE_DEPENDENT = ("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                         "multiplication by e^{i phi}. The specified loss function depends on this quantity, so it "
                         "is ill-defined.")


def _eigh_grad(grad, result):
    # With A = V diag(L) V^H and K = V^H dA V: dL = diag(K), dV = V (K / (L_j - L_i)) off the
    # diagonal. The gradient, taken on Hermitian perturbations as PyTorch's, is
    # V (diag(grad_L) + skew(V^H grad_V) / 2 / (L_j - L_i)) V^H. An output that received no
    # gradient arrives as zeros: its term is skipped (it would divide by zero gaps).
    grad_values, grad_vectors = grad
    values, vectors = result
    inner = grad_values.to(vectors.dtype).diag_embed()
    if bool(grad_vectors.any()):
        projected = _adjoint(vectors) @ grad_vectors
        if vectors.dtype.is_complex:
            # Turning an eigenvector by a phase leaves A unchanged: a loss must not depend on it.
            phases = projected.diagonal(0, -2, -1).imag
            if not public("allclose")(phases, phases * 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError(_EIGH_PHASE_DEPENDENT)
        n = values.shape[-1]
        # gaps[i, j] = L_j - L_i, and 1 on the diagonal (where the skew part is zero)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + public("eye")(n, dtype=values.dtype)
        inner = inner + _skew(projected) * 0.5 / gaps
    return vectors @ inner @ _adjoint(vectors)


def _eigh_checks(A: np.ndarray, UPLO) -> None:
    if not isinstance(UPLO, str):
        raise TypeError(f"linalg_eigh(): argument 'UPLO' must be str, not {type(UPLO).__name__}")
    _square_checks("linalg.eigh", A)
    if len(UPLO) != 1 or UPLO.upper() not in "LU":
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if A.dtype.kind not in "fc" or A.dtype in _HALF_TYPES:
        raise not_implemented("linalg_eigh_cpu", _dtype(A))


def _canonical_eigenvectors(vectors: np.ndarray) -> np.ndarray:
    """Eigenvectors are unique only up to sign (a unit phase if complex): each column is turned
    so that its largest entry is real and positive, as ``svd``'s singular vectors."""
    largest = np.take_along_axis(vectors, np.abs(vectors).argmax(axis=-2)[..., None, :], axis=-2)
    size = np.abs(largest)
    return vectors * np.where(size > 0, largest / np.where(size > 0, size, 1), 1).conj()


@op(grad=_eigh_grad, name="linalg_eigh", function="eigh", namespace="tensormodes.linalg", samples=(
    Sample((TensorSpec((3, 1, 1)),)), Sample((TensorSpec((2, 1, 1), "float64"), "U")),
    Sample((TensorSpec((3, 5, 5)),), {"UPLO": "u"}), Sample((TensorSpec((3, 5, 5), "float64"), "U")),
    Sample((TensorSpec((2, 6, 6), "complex64"),)), Sample((TensorSpec((9, 9), "complex128"),), {"UPLO": "U"}),
    Sample((TensorSpec((0, 3, 3)),))))
def eigh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues (real, ascending) and eigenvectors (orthonormal columns) of a Hermitian
    matrix (or of each in a batch), as the named tuple ``(eigenvalues, eigenvectors)``: ``A =
    V @ diag(L) @ V.mH``. Only the lower triangle of ``A`` is read (the upper one with
    ``UPLO='U'``). Each eigenvector's sign (phase, if complex) is fixed so that its largest
    entry is real and positive.

    The gradient is PyTorch's: the input is taken as Hermitian, so the gradient is spread
    over both triangles; a complex loss must not depend on the eigenvectors' phases.

    >>> import tensormodes as tm
    >>> L, V = tm.linalg.eigh(tm.tensor([[2., 0.], [0., 1.]]))
    >>> L.tolist(), V.tolist()
    ([1.0, 2.0], [[0.0, 1.0], [1.0, 0.0]])
    """
    _eigh_checks(A, UPLO)
    result_type = RETURN_TYPES["linalg_eigh"]
    if A.size == 0:
        return result_type(np.zeros(A.shape[:-1], A.real.dtype), np.empty(A.shape, A.dtype))
    values, vectors = np.linalg.eigh(A, UPLO=UPLO.upper())
    return result_type(np.asarray(values, dtype=A.real.dtype),
                       np.asarray(_canonical_eigenvectors(vectors), dtype=A.dtype))


def _eigvalsh_grad(grad, A, UPLO):
    # PyTorch keeps the eigenvectors of the forward pass; this recomputes them, through the
    # public eigh so that the gradient is itself differentiable.
    vectors = public("eigh", "tensormodes.linalg")(A, UPLO).eigenvectors
    return (vectors * grad.unsqueeze(-2).to(vectors.dtype)) @ _adjoint(vectors)


@op(grad=_eigvalsh_grad, name="linalg_eigvalsh", function="eigvalsh", namespace="tensormodes.linalg", out=True,
    samples=(
    Sample((TensorSpec((3, 5, 5)),)), Sample((TensorSpec((3, 5, 5), "float64"), "U")),
    Sample((TensorSpec((2, 6, 6), "complex64"),)), Sample((TensorSpec((9, 9), "complex128"),), {"UPLO": "U"}),
    Sample((TensorSpec((0, 3, 3)),))))
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a Hermitian matrix (or of each in a batch), real and ascending:
    ``eigenvalues`` of ``eigh``, cheaper, since no eigenvectors are computed.

    >>> import tensormodes as tm
    >>> tm.linalg.eigvalsh(tm.tensor([[2., 1.], [1., 2.]])).tolist()
    [1.0, 3.0]
    """
    _eigh_checks(A, UPLO)
    if A.size == 0:
        return np.zeros(A.shape[:-1], A.real.dtype)
    return np.asarray(np.linalg.eigvalsh(A, UPLO=UPLO.upper()), dtype=A.real.dtype)


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


@op(grad=_kron_grad, out=True, samples=(
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
    dtype = operand_dtype(input, other)._np
    return np.asarray(np.kron(input.astype(dtype, copy=False), other.astype(dtype, copy=False)))


def _cross_grad(grad, input, other, dim, needs_input_grad):
    # <grad, a x b> = <a, b x grad> = <b, grad x a>, with conjugates for complex operands.
    cross = public("cross", "tensormodes.linalg")
    return (cross(_conj(other), grad, dim=dim) if needs_input_grad[0] else None,
            cross(grad, _conj(input), dim=dim) if needs_input_grad[1] else None)


def _cross_product(input: np.ndarray, other: np.ndarray, dim: int) -> np.ndarray:
    """linalg.cross's checks and result."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = wrap_dims(dim, input.ndim)[0]
    if input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[axis]} and "
                           f"{other.shape[axis]}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(_dtype(input))} but found "
                           f"{scalar_type_name(_dtype(other))}")
    if input.dtype == np.bool_:
        raise not_implemented("cross", dt.bool)
    check_same_shape_or_broadcast(input.shape, other.shape)
    return np.asarray(np.cross(input, other, axis=axis))


@op(grad=_cross_grad, name="linalg_cross", function="cross", namespace="tensormodes.linalg", out=True, samples=(
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


@op(grad=_top_level_cross_grad, method=True, out=True, samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3)), 1)), Sample((TensorSpec((3, 2)), TensorSpec((3, 2))), {"dim": 0}),
    Sample((TensorSpec((3,), "int64"), TensorSpec((3,), "int64"), -1))))
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``tensormodes.linalg.cross`` along ``dim``; without it, along the first dimension of size 3
    (deprecated, with PyTorch's warning).

    >>> import tensormodes as tm
    >>> tm.cross(tm.tensor([[1, 0, 0]]), tm.tensor([[0, 1, 0]]), dim=1)
    tensor([[0, 0, 1]])
    """
    if dim is None:
        warnings.warn("Using tensormodes.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                      "dim explicitly or simply use tensormodes.linalg.cross.\nThe default value of dim will change "
                      "to agree with that of linalg.cross in a future release.", UserWarning, stacklevel=3)
        dim = _default_cross_dim(np.broadcast_shapes(input.shape, other.shape) if input.ndim == other.ndim
                                 else input.shape)
    return _cross_product(input, other, dim)


def _cdist_grad(grad, x1, x2, result, p, needs_input_grad):
    # Through the norm of the pairwise differences (reduction's norm gradient, any p).
    difference = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    spread = _norm_grad(grad, difference, result, p, -1, False)
    if spread is None:  # p = 0 counts: a zero gradient (PyTorch's, unlike norm's none)
        spread = difference * 0
    return (spread.sum(-2) if needs_input_grad[0] else None, -spread.sum(-3) if needs_input_grad[1] else None)


@op(grad=_cdist_grad, samples=(
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
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind != "f" or x.dtype in _HALF_TYPES:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {scalar_type_name(_dtype(x))}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(_dtype(x1))} but found "
                           f"{scalar_type_name(_dtype(x2))}")
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


def _vander_grad(grad, x, result, N, increasing):
    count = result.shape[-1]
    exponents = public("arange")(count, dtype=x.real.dtype if x.is_complex() else x.dtype)
    if not increasing:
        exponents = exponents.flip(0)
    # d x^e = e x^(e - 1); the clamp keeps x^-1 (infinite at 0) out of the e = 0 column.
    local = exponents * x.unsqueeze(-1) ** (exponents - 1).clamp(min=0)
    return (grad * _conj(local)).sum(-1)


def _vander_differentiable(x, N, increasing) -> bool:
    # Columns x ** 0 alone are constants: PyTorch's result then has no history.
    return (x.shape[0] if N is None else N) > 1


@op(grad=_vander_grad, differentiable=_vander_differentiable, samples=(
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
