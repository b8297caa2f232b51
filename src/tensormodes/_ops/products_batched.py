"""Products added to a tensor, beside ``addmm``: ``baddbmm`` (``beta * input + alpha * (batch1 @ batch2)``,
batch by batch), ``addbmm`` (the same with the batch of products summed) and ``addmv`` (a
matrix-vector product).

As for ``addmm``: ``input`` broadcasts to the result's shape, ``beta=0`` ignores its values (NaNs
in it do not propagate), integer tensors truncate ``beta`` and ``alpha`` to ints, and half types
compute in float32, rounded once.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._reduction import _kernel_rule, _probe_quietly
from .common import HALF_TYPES, adjoint, cpp_type_name, dtype_of, quiet, recordable, scalar_type_name
from .common import conjugate as _conj
from .meta_rules import rule, with_shape
from .products import (
    _check_bool,
    _check_expandable,
    _coefficient,
    _mv_grad,
    _product,
    _same_size_in_place,
    _scaled_sum_with_product,
)
from .registry import Sample, Tensor, TensorSpec, op


def _read_sizes(batch1, batch2, batch1_dims: tuple[int, ...]) -> None:
    """PyTorch reads the output's sizes before any check: an IndexError where one is missing."""
    for tensor, dim in [*((batch1, d) for d in batch1_dims), (batch2, 2)]:
        if tensor.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if dim >= tensor.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-tensor.ndim}, "
                             f"{tensor.ndim - 1}], but got {dim})")


def _check_batches(input, batch1, batch2, batch1_dims: tuple[int, ...], *, input_dtype_checked: bool = False
                   ) -> tuple[int, ...]:
    """The output's shape, after PyTorch's checks in its order: the sizes read, ``input``
    expanded to the output, (``input_dtype_checked``: baddbmm's input and batch1 of one dtype),
    then the ranks."""
    _read_sizes(batch1, batch2, batch1_dims)
    target = (*(batch1.shape[d] for d in batch1_dims), batch2.shape[2])
    _check_expandable(input, target)
    if input_dtype_checked and input.dtype != batch1.dtype:
        names = [cpp_type_name(dtype_of(a)) for a in (input, batch1, batch2)]  # C++ type names, as PyTorch's
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: {names[1]}, batch2: "
                           f"{names[2]}")
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return target


def _scaling_checked(dtype: np.dtype, beta) -> None:
    """The cast rule of ``output.mul_(beta)`` (PyTorch's path where nothing is multiplied): beta
    may not lift the output's category (an int beta into bool, a float one into an integer)."""
    if complex(beta) == 0:
        return  # (zero_ instead)
    computed = dt.result_dtype((np.empty((1,), dtype),), (beta,))
    if not dt.can_cast(computed, dt.NP_TO_DTYPE[np.dtype(dtype)]):
        raise RuntimeError(f"result type {scalar_type_name(computed)} can't be cast to the desired output type "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[np.dtype(dtype)])}")


def _scaled_input(input, target, beta, dtype) -> np.ndarray:
    """``input`` expanded to ``target``, copied into ``dtype`` and multiplied by ``beta`` in place
    (zeros for beta 0): PyTorch's result where there is nothing to multiply."""
    _scaling_checked(dtype, beta)
    if complex(beta) == 0:
        return np.zeros(target, dtype)
    with quiet():  # (a complex input copied into a real output keeps its real part, as copy_ does)
        copied = np.broadcast_to(input.real if input.dtype.kind == "c" and np.dtype(dtype).kind != "c" else input,
                                 target).astype(dtype, order="C")
        if np.dtype(dtype).kind == "b":
            return copied  # (beta True)
        compute = np.float32 if dtype in HALF_TYPES else dtype
        return np.asarray(copied.astype(compute) * np.asarray(beta).astype(compute)).astype(dtype)


def _baddbmm_checks(input, batch1, batch2) -> tuple[tuple[int, int, int], bool]:
    """The output's shape and whether PyTorch's kernel returns before its dtype checks (nothing
    to multiply: an empty output, or an empty inner dimension with the output's values beta *
    input, in batch2's dtype)."""
    target = _check_batches(input, batch1, batch2, (0, 1), input_dtype_checked=True)
    batch, k = batch1.shape[0], batch1.shape[2]
    if batch2.shape[0] != batch or batch2.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    if 0 in target or k == 0:
        return target, True
    if batch2.dtype != batch1.dtype:  # read by the kernel as batch1's type
        raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(batch1))} but found "
                           f"{scalar_type_name(dtype_of(batch2))}")
    _check_bool("baddbmm", input)
    return target, False


def _addbmm_checks(input, batch1, batch2) -> tuple[int, int]:
    target = _check_batches(input, batch1, batch2, (1,))
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    if batch1.shape[0] == 0:  # no batch: PyTorch's result is input * beta, before any dtype check
        return target
    if input.dtype != batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_type_name(dtype_of(input))} and "
                           f"{scalar_type_name(dtype_of(batch2))}")
    if batch1.dtype != batch2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_type_name(dtype_of(batch1))} "
                           f"and {scalar_type_name(dtype_of(batch2))}")
    _check_bool("addmm_impl_cpu_", input, empty=0 in target or batch1.shape[2] == 0)
    return target


def _added(input, product, target, beta, alpha) -> np.ndarray:
    """``beta * input + alpha * product`` in ``input``'s dtype (half types in float32), broadcast to ``target``."""
    dtype = dtype_of(input)
    beta, alpha = _coefficient(beta, dtype), _coefficient(alpha, dtype)
    if dtype._category == dt._INT:
        beta, alpha = int(beta), int(alpha)
    compute = np.float32 if input.dtype in HALF_TYPES else input.dtype
    result = product.astype(compute) * alpha if alpha != 1 else product.astype(compute)
    if beta != 0:
        result = result + (input.astype(compute) * beta if beta != 1 else input.astype(compute))
    return np.ascontiguousarray(np.broadcast_to(result, target)).astype(input.dtype)


def _batch_products(batch1, batch2, target) -> np.ndarray:
    if 0 in batch1.shape or 0 in batch2.shape:
        return np.zeros((batch1.shape[0], *target[-2:]), batch1.dtype)
    return _product(np.matmul, batch1, batch2)


def _scaled(gradient, factor):
    return gradient if factor == 1 else gradient * _conj(factor)


def _baddbmm_grad(grad, batch1, batch2, beta, alpha, needs_input_grad):
    want_input, want_batch1, want_batch2 = needs_input_grad
    return (_scaled(grad, beta) if want_input else None,
            _scaled(grad.bmm(adjoint(batch2)), alpha) if want_batch1 else None,
            _scaled(adjoint(batch1).bmm(grad), alpha) if want_batch2 else None)


def _baddbmm_meta(input, batch1, batch2, *, beta=1, alpha=1):
    target, shortcut = _baddbmm_checks(input, batch1, batch2)
    if shortcut and 0 not in target:
        _scaling_checked(batch2.dtype, beta)
    return MetaArray(target, batch2.dtype)


_B1, _B2 = TensorSpec((2, 3, 4)), TensorSpec((2, 4, 5))


@op(meta=rule(_baddbmm_meta), grad=_baddbmm_grad, method=True, inplace=True, out=True,
    written_check=_same_size_in_place,
    differentiable=lambda _, batch1, batch2, *rest: recordable(batch2.dtype),  # (an integer batch2: its dtype)
    save_only_for={"batch1": "batch2", "batch2": "batch1"},
    errors=(Sample((TensorSpec((2, 3, 5)), TensorSpec((2, 3)), _B2)),
            Sample((TensorSpec((5,)), _B1, TensorSpec((4, 5)))),
            Sample((TensorSpec((5,)), _B1, TensorSpec((3, 4, 5)))), Sample((TensorSpec((4,)), _B1, _B2)),
            Sample((TensorSpec((5,), "float64"), _B1, _B2)),
            Sample((TensorSpec((5,), "bool"), TensorSpec((2, 3, 4), "bool"), TensorSpec((2, 4, 5), "bool")))),
    samples=(Sample((TensorSpec((2, 3, 5)), _B1, _B2)), Sample((TensorSpec((5,)), _B1, _B2), {"beta": 0.5, "alpha": 2}),
             Sample((TensorSpec((), "float64"), TensorSpec((2, 3, 4), "float64"), TensorSpec((2, 4, 5), "float64")),
                    {"beta": 0}),
             Sample((TensorSpec((3, 1), "int64"), TensorSpec((2, 3, 4), "int64"), TensorSpec((2, 4, 5), "int64")),
                    {"beta": 2, "alpha": 2.5}),
             Sample((TensorSpec((5,), "float16"), TensorSpec((2, 3, 4), "float16"), TensorSpec((2, 4, 5), "float16"))),
             Sample((TensorSpec((5,)), TensorSpec((2, 3, 0)), TensorSpec((2, 0, 5))), {"beta": 2}),
             Sample((TensorSpec((2, 2, 2), "complex64"), TensorSpec((2, 2, 3), "complex64"),
                     TensorSpec((2, 3, 2), "complex64")), {"alpha": 1j})))
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for the 3-D ``batch1`` (b x n x m) and
    ``batch2`` (b x m x p), ``input`` broadcast to (b x n x p).

    >>> import tensormodes as tm
    >>> tm.baddbmm(tm.ones(3), tm.ones(2, 1, 4), tm.ones(2, 4, 3), alpha=0.5).tolist()
    [[[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]]
    """
    target, shortcut = _baddbmm_checks(input, batch1, batch2)
    if shortcut:  # (the output in batch2's dtype, as PyTorch allocates it)
        return np.empty(target, batch2.dtype) if 0 in target else _scaled_input(input, target, beta, batch2.dtype)
    return _added(input, _batch_products(batch1, batch2, target), target, beta, alpha)


def _addbmm_grad(grad, batch1, batch2, beta, alpha, needs_input_grad):
    want_input, want_batch1, want_batch2 = needs_input_grad
    batches = (batch2 if want_batch1 else batch1).shape[0]
    expanded = grad.unsqueeze(0).expand(batches, *grad.shape)
    return (_scaled(grad, beta) if want_input else None,
            _scaled(expanded.bmm(adjoint(batch2)), alpha) if want_batch1 else None,
            _scaled(adjoint(batch1).bmm(expanded), alpha) if want_batch2 else None)


def _addbmm_meta(input, batch1, batch2, *, beta=1, alpha=1):
    target = _addbmm_checks(input, batch1, batch2)
    _check_scalings(input, batch1, batch2, target, beta)
    return MetaArray(target, input.dtype)


def _check_scalings(input, batch1, batch2, target, beta) -> None:
    """addbmm's in-place scalings where nothing is multiplied: no batch (by beta), or an empty
    inner dimension (each batch's addmm_ scales the output: by beta, then by 1)."""
    if batch1.shape[0] == 0 or (batch1.shape[2] == 0 and 0 not in target):
        _scaling_checked(input.dtype, beta)
        if batch1.shape[0] > 1:
            _scaling_checked(input.dtype, 1)


@op(meta=rule(_addbmm_meta), grad=_addbmm_grad, method=True, inplace=True, out=True,
    differentiable=lambda self, *rest: recordable(self.dtype),  # (no batch: an integer input's dtype)
    save_only_for={"batch1": "batch2", "batch2": "batch1"},
    errors=(Sample((TensorSpec((3, 5)), TensorSpec((2, 3)), _B2)), Sample((TensorSpec((5,)), _B1, TensorSpec((4, 5)))),
            Sample((TensorSpec((5,)), _B1, TensorSpec((3, 4, 5)))),
            Sample((TensorSpec((5,)), _B1, TensorSpec((2, 3, 5)))),
            Sample((TensorSpec((4,)), _B1, _B2)), Sample((TensorSpec((5,), "float64"), _B1, _B2)),
            Sample((TensorSpec((5,)), TensorSpec((2, 3, 4), "float64"), _B2)),
            Sample((TensorSpec((5,), "bool"), TensorSpec((2, 3, 4), "bool"), TensorSpec((2, 4, 5), "bool")))),
    samples=(Sample((TensorSpec((3, 5)), _B1, _B2)), Sample((TensorSpec((5,)), _B1, _B2), {"beta": 0.5, "alpha": 2}),
             Sample((TensorSpec((), "float64"), TensorSpec((2, 3, 4), "float64"), TensorSpec((2, 4, 5), "float64")),
                    {"beta": 0}),
             Sample((TensorSpec((3, 1), "int64"), TensorSpec((2, 3, 4), "int64"), TensorSpec((2, 4, 5), "int64")),
                    {"beta": 2, "alpha": 2.5}),
             Sample((TensorSpec((5,), "float16"), TensorSpec((2, 3, 4), "float16"), TensorSpec((2, 4, 5), "float16"))),
             Sample((TensorSpec((5,)), TensorSpec((0, 3, 4)), TensorSpec((0, 4, 5))), {"beta": 2}),
             Sample((TensorSpec((2, 2), "complex64"), TensorSpec((2, 2, 3), "complex64"),
                     TensorSpec((2, 3, 2), "complex64")), {"alpha": 1j})))
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * sum_i(batch1[i] @ batch2[i])`` for the 3-D ``batch1`` (b x n x m)
    and ``batch2`` (b x m x p), ``input`` broadcast to (n x p).

    >>> import tensormodes as tm
    >>> tm.addbmm(tm.zeros(1, 2), tm.ones(3, 1, 4), tm.ones(3, 4, 2)).tolist()
    [[12.0, 12.0]]
    """
    target = _addbmm_checks(input, batch1, batch2)
    _check_scalings(input, batch1, batch2, target, beta)
    if batch1.shape[0] == 0 or (batch1.shape[2] == 0 and 0 not in target):
        return _scaled_input(input, target, beta, input.dtype)
    if 0 in target:  # (each batch's addmm_ returns before reading beta and alpha)
        return np.empty(target, input.dtype)
    if input.dtype in HALF_TYPES and batch1.dtype == input.dtype and batch1.size and batch2.size:
        # PyTorch's loop: result = beta * input + alpha * (b1[0] @ b2[0]), then result += alpha * (b1[i] @ b2[i]),
        # each step computed in float32 and rounded to the half type
        result = _added(input, np.matmul(batch1[0].astype(np.float32), batch2[0].astype(np.float32)), target, beta,
                        alpha)
        for first, second in zip(batch1[1:], batch2[1:]):
            result = _added(result, np.matmul(first.astype(np.float32), second.astype(np.float32)), target, 1, alpha)
        return result
    products = _batch_products(batch1, batch2, (batch1.shape[0], *target))
    return _added(input, products.sum(axis=0, dtype=products.dtype), target, beta, alpha)


def _addmv_checks(input: np.ndarray, mat: np.ndarray, vec: np.ndarray) -> tuple[int]:
    """``addmv``'s checks (of shapes and dtypes only), in PyTorch's order and words; the result's shape."""
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    rows = mat.shape[0]
    if mat.shape[1] != vec.shape[0] or input.size not in (rows, 1):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else rows}), mat "
                           f"({rows}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not input.dtype == mat.dtype == vec.dtype:
        names = ", ".join(scalar_type_name(dtype_of(a)) for a in (input, mat))
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names}, and "
                           f"{scalar_type_name(dtype_of(vec))}")
    _check_bool("addmv_impl_cpu", input, empty=False)
    return (rows,)


@_kernel_rule
def _addmv_meta(kernel, input, mat, vec, *, beta=1, alpha=1):
    target = _addmv_checks(input, mat, vec)
    return with_shape(_probe_quietly(kernel, input, mat, vec, beta=beta, alpha=alpha), target)


def _addmv_grad(grad, mat, vec, beta, alpha, needs_input_grad):
    # PyTorch's formula: beta * grad, and mv's gradients (grad.ger(vec), mat.t().mv(grad)) times alpha
    grad_mat, grad_vec = _mv_grad(grad, mat, vec, needs_input_grad[1:])
    if alpha != 1:
        grad_mat = None if grad_mat is None else grad_mat * _conj(alpha)
        grad_vec = None if grad_vec is None else grad_vec * _conj(alpha)
    grad_input = (grad if beta == 1 else grad * _conj(beta)) if needs_input_grad[0] else None
    return grad_input, grad_mat, grad_vec


@op(meta=_addmv_meta, grad=_addmv_grad, method=True, inplace=True, inplace_function=True, out=True,
    written_check=_same_size_in_place,
    errors=(Sample((TensorSpec((3,)), TensorSpec((2, 3)), TensorSpec((3,)))),
            Sample((TensorSpec((2,)), TensorSpec((2, 3, 1)), TensorSpec((3,)))),
            Sample((TensorSpec((2,), "float64"), TensorSpec((2, 3)), TensorSpec((3,))))),
    samples=(Sample((TensorSpec((2,)), TensorSpec((2, 3)), TensorSpec((3,)))),
             Sample((TensorSpec((1,)), TensorSpec((2, 3)), TensorSpec((3,))), {"beta": 2, "alpha": 0.5}),
             Sample((TensorSpec((2,), "int64"), TensorSpec((2, 3), "int64"), TensorSpec((3,), "int64")),
                    {"beta": 0.5, "alpha": 2.7}),
             Sample((TensorSpec((), "float64"), TensorSpec((2, 3), "float64"), TensorSpec((3,), "float64")),
                    {"beta": 0})))
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``, with ``input`` broadcast to the product's length
    (``beta=0``: its values are ignored; integer tensors truncate ``beta`` and ``alpha`` to ints).

    >>> import tensormodes as tm
    >>> tm.addmv(tm.ones(2), tm.ones(2, 3), tm.ones(3), beta=2, alpha=0.5)
    tensor([3.5000, 3.5000])
    """
    return _scaled_sum_with_product(input, mat, vec, beta, alpha, _addmv_checks(input, mat, vec))
