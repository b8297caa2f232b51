"""Activations that normalise along a dimension: ``softmax`` and ``log_softmax``, and their
backward ops ``_softmax_backward_data`` and ``_log_softmax_backward_data``.

Both subtract the maximum along ``dim`` before exponentiating, so large inputs
do not overflow. The math runs in the result dtype (float32 for half types, rounding
to the half type where PyTorch's kernels store intermediate results in it). float16 and
bfloat16 follow PyTorch's AVX-512 kernels step for step, so their results are its bits:
Sleef's ``exp`` in vector steps and the C library's in scalar ones, sums in the kernels'
lane orders (``_vector_kernels.py``), the inner-dim softmax's split among threads. float32
and float64 sums are added in another order, so those results agree with PyTorch's to
within an ulp or two, not bit for bit.

The gradient formulas are one call each, to the backward ops (PyTorch's
derivatives.yaml does the same): a training step's backward pass then pays
dispatch once per op, not once per elementary step of the formula.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype as dt
from .._meta_array import copy_of
from .._settings import SETTINGS
from ._cephes import exp_of
from ._random_math import fma32
from ._vector_kernels import FLOAT_LANES, HALF_VECTOR_LANES, float_row_sums, half_loop_exp, row_sums, sleef_expf
from .common import (
    HALF_TYPES,
    array_type_name,
    last_axis_maximum,
    not_implemented,
    ops,
    resolve_dtype,
    scalar_type_name,
    wrap_dim,
)
from .meta_rules import rule, same_shape
from .registry import Sample, Tensor, TensorSpec, op


def _dim_type_check(dim, kernel: str, position: int) -> None:
    if type(dim) is not int and (isinstance(dim, bool) or not isinstance(dim, numbers.Integral)):
        raise TypeError(f"{kernel}(): argument 'dim' (position {position}) must be int, not {type(dim).__name__}")


def _kernel_name(kernel: str, axis: int, ndim: int) -> str:
    return f"{kernel}_lastdim_kernel_impl" if axis == max(ndim, 1) - 1 else f"{kernel}_kernel_impl"


def _shifted(input: np.ndarray, dim, dtype, kernel: str) -> tuple[np.ndarray, int, dt.dtype]:
    """(``input`` minus its maximum along ``dim``, a new array; the axis; the result dtype).

    ``dtype`` casts the input first (PyTorch's way of avoiding overflow in low
    precision). The difference is in the result dtype (float32 for half types).
    """
    _dim_type_check(dim, kernel, 2)
    axis = wrap_dim(dim, input.ndim)
    target = dt.NP_TO_DTYPE[input.dtype] if dtype is None else resolve_dtype(dtype)
    if input.size == 0:  # PyTorch returns an empty result before it dispatches on the dtype
        return input.astype(target._np), axis, target
    if target._category != dt._FLOAT:
        raise not_implemented(_kernel_name(kernel, axis, input.ndim), target)
    if target._np in HALF_TYPES and input.dtype != target._np:
        input = input.astype(target._np)  # PyTorch converts to ``dtype`` first (rounding), then computes
    # No copy when the dtype is kept: the subtraction below makes the new array.
    x = input.astype(np.float32 if target._np in HALF_TYPES else target._np, copy=False)
    if x.ndim == 0:
        return np.asarray(x - x), 0, target  # an array (not a NumPy scalar), for in-place math
    if x.size == 0:
        return x.copy(), axis, target
    # not x.max(): a Python wrapper
    maximum = last_axis_maximum(x) if axis == x.ndim - 1 else np.maximum.reduce(x, axis, keepdims=True)
    return x - maximum, axis, target


# ``input_dtype`` is the dtype the forward kernel ran on, as PyTorch passes it: ``dtype`` casts first.
def _softmax_grad(grad, result, dim, input_dtype, dtype):
    return ops._softmax_backward_data(grad, result, dim, input_dtype if dtype is None else dtype)


def _log_softmax_grad(grad, result, dim, input_dtype, dtype):
    return ops._log_softmax_backward_data(grad, result, dim, input_dtype if dtype is None else dtype)


_M23 = TensorSpec((2, 3), "float32", -5, 5)
_SAMPLES = (
    Sample((_M23, 1)), Sample((_M23, 0)), Sample((_M23, -1), {"dtype": dt.float64}),
    Sample((TensorSpec((2, 3, 4), "float64", -50, 50), 1)), Sample((TensorSpec((), "float32"), 0)),
    Sample((TensorSpec((4,), "int64"), 0, dt.float32)), Sample((TensorSpec((3, 2), "float16"), 0)),
    Sample((TensorSpec((2, 3), "bfloat16"), -1)),
    Sample((TensorSpec((2, 3), "float64"), 1), {"dtype": dt.float32}))


def _real_result(name: str):
    """The ``differentiable=`` predicate of softmax and log_softmax: PyTorch has no gradient for a
    complex result (a ``dtype=`` decides the result's dtype)."""
    def check(input, dim, dtype=None, *arguments) -> bool:
        if (input.dtype if dtype is None else dtype).is_complex:
            raise RuntimeError(f"{name} does not support automatic differentiation for outputs with complex dtype.")
        return True
    return check


def _decomposition(aten_name: str):
    """PyTorch's composite ``softmax`` / ``log_softmax``: ``_to_copy`` to a ``dtype`` other than the
    input's, then ATen's ``_softmax`` / ``_log_softmax`` (what the dispatch level sees)."""
    def decompose(input, dim, dtype=None):
        if type(dim) is not int or (dtype is not None and type(dtype) is not dt.dtype):
            return NotImplemented  # the op raises PyTorch's argument errors
        if dtype is not None and dtype != input.dtype:
            input = ops._to_copy(input, dtype=dtype)
        aten = ops.ops.aten._softmax.default if aten_name == "_softmax" else ops.ops.aten._log_softmax.default
        return aten(input, dim, False)

    decompose.__name__ = decompose.__qualname__ = f"{aten_name}_decomposition"
    return decompose


@op(errors=(Sample((_M23, 2)), Sample((TensorSpec((4,), "int64"), 0)), Sample((_M23, 1.0))),
    decompose=_decomposition("_softmax"), meta=same_shape, grad=_softmax_grad,
    differentiable=_real_result("_softmax"), method=True, out=True, samples=_SAMPLES, aten="int")
def softmax(input: Tensor, dim: int, dtype: dt.dtype | None = None) -> Tensor:
    """Applies the softmax function along ``dim``: ``exp(x) / exp(x).sum(dim)``, so that the
    values along ``dim`` are in [0, 1] and sum to 1.

    Integer inputs need ``dtype`` (a floating dtype the input is cast to first).

    >>> import tensormodes as tm
    >>> tm.softmax(tm.tensor([[0., 0.], [1., 1.]]), dim=1)
    tensor([[0.5000, 0.5000],
            [0.5000, 0.5000]])
    >>> tm.tensor([1, 2]).softmax(0, dtype=tm.float64).dtype
    tensormodes.float64
    """
    shifted, axis, result = _shifted(input, dim, dtype, "softmax")
    if not shifted.size:
        return shifted
    if result._np in HALF_TYPES:
        if axis == shifted.ndim - 1 or not shifted.ndim:
            return _half_softmax_last(shifted, result._np)
        return _half_softmax_inner(shifted, axis, result._np)
    exponentials = np.exp(shifted, out=shifted)
    exponentials *= 1.0 / np.add.reduce(exponentials, axis, keepdims=True)
    return exponentials.astype(result._np, copy=False)  # a new array already


def _half_softmax_last(shifted: np.ndarray, low: np.dtype) -> np.ndarray:
    """Half softmax along the last dim (``shifted``: float32 ``x - max``) as PyTorch's CPU kernel
    computes it, a row at a time in float32: Sleef's ``exp`` over whole 16-lane vectors and the C
    library's ``expf`` after them, summed in its loop's order (``float_row_sums``), multiplied by
    the sum's reciprocal and rounded once."""
    length = shifted.shape[-1] if shifted.ndim else 1
    rows = shifted.reshape(-1, length)
    whole = length - length % FLOAT_LANES
    exponentials = np.empty_like(rows)
    exponentials[:, :whole] = sleef_expf(rows[:, :whole])
    exponentials[:, whole:] = exp_of(rows[:, whole:])
    exponentials *= (np.float32(1) / float_row_sums(exponentials))[:, None]
    return exponentials.astype(low).reshape(shifted.shape)


def _half_softmax_inner(shifted: np.ndarray, axis: int, low: np.dtype) -> np.ndarray:
    """Half softmax along a dim that is not the last, as PyTorch's CPU kernel computes it: its
    (outer, inner) positions split among the intra-op threads (``_vector_positions``); a thread
    takes whole blocks of 32 inner positions of one row at once in float32 (Sleef's ``exp``, the
    exponentials divided by their sum) and the rest one position at a time (the C library's
    ``expf``, the exponentials stored in the half dtype, then divided by their float32 sum)."""
    length = shifted.shape[axis]
    outer, inner = int(np.prod(shifted.shape[:axis])), int(np.prod(shifted.shape[axis + 1:]))
    blocks = shifted.reshape(outer, length, inner)
    vector = _vector_positions(outer, inner)[:, None, :]
    exponentials = half_loop_exp(blocks, ~vector)
    total = _in_order_sums(exponentials, 1)
    stored = np.where(vector, exponentials, exponentials.astype(low).astype(np.float32))
    return (stored / total).astype(low).reshape(shifted.shape)


def _vector_positions(outer: int, inner: int) -> np.ndarray:
    """Which (outer, inner) positions the half inner-dim softmax kernel computes in its vector
    steps: ``at::parallel_for`` (grain size 0) cuts the ``outer * inner`` positions into one
    contiguous range per intra-op thread (``SETTINGS.num_threads``); each range's stretch of a
    row takes blocks of 32 from its start, the rest of the stretch is scalar."""
    count = outer * inner
    chunk = -(-count // min(SETTINGS.num_threads, count))
    position = np.arange(count)
    range_start = position // chunk * chunk
    row_start = position // inner * inner
    start = np.maximum(range_start, row_start)
    end = np.minimum(np.minimum(range_start + chunk, count), row_start + inner)
    vector = position - start < (end - start) // HALF_VECTOR_LANES * HALF_VECTOR_LANES
    return vector.reshape(outer, inner)


@op(errors=(Sample((_M23, -3)), Sample((TensorSpec((4,), "int64"), 0))),
    decompose=_decomposition("_log_softmax"), meta=same_shape, grad=_log_softmax_grad,
    differentiable=_real_result("_log_softmax"), method=True, out=True, samples=_SAMPLES, aten="int")
def log_softmax(input: Tensor, dim: int, dtype: dt.dtype | None = None) -> Tensor:
    """Applies ``log(softmax(x))`` along ``dim``, computed as ``x - max - log(sum(exp(x - max)))``
    so that it stays accurate where ``softmax`` underflows.

    >>> import tensormodes as tm
    >>> tm.log_softmax(tm.tensor([0., 0.]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    shifted, axis, result = _shifted(input, dim, dtype, "log_softmax")
    if shifted.size and result._np in HALF_TYPES:
        # PyTorch's half kernels: exp and sums in float32 as for the backward kernels; along the
        # last dim they keep the sum and its log in the result dtype.
        total = _half_kernel_sums(_half_kernel_exponentials(shifted, axis), axis)
        if axis == shifted.ndim - 1:
            low = result._np
            total = total.astype(low).astype(np.float32)
            shifted -= np.log(total.astype(np.float64)).astype(np.float32).astype(low).astype(np.float32)
        else:
            shifted -= np.log(total.astype(np.float64)).astype(np.float32)
    elif shifted.size:
        shifted -= np.log(np.add.reduce(np.exp(shifted), axis, keepdims=True))
    return shifted.astype(result._np, copy=False)  # shifted is a new array


def _backward_checks(grad_output, output, dim, input_dtype, kernel: str) -> int:
    """PyTorch's CPU checks of the backward ops, in its order; the axis to sum over. They read
    only shapes and dtypes, so the meta rule runs them on the MetaArrays themselves.

    The result has ``grad_output``'s dtype: ``input_dtype`` only asks for a half result from
    float gradients, which only PyTorch's CUDA kernels produce (its CPU kernels refuse, and so
    does this one).
    """
    name = f"_{kernel}_backward_data"
    _dim_type_check(dim, name, 3)
    if type(input_dtype) is not dt.dtype:
        raise TypeError(f"{name}(): argument 'input_dtype' (position 4) must be tensormodes.dtype, not "
                        f"{type(input_dtype).__name__}")
    if grad_output.shape != output.shape:
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                           f"'output'; but {list(grad_output.shape)} does not equal {list(output.shape)} (while "
                           f"checking arguments for {kernel}_backward)")
    axis = wrap_dim(dim, grad_output.ndim)
    grad_dtype = dt.NP_TO_DTYPE[grad_output.dtype]
    if grad_dtype._category != dt._FLOAT:
        raise not_implemented(_kernel_name(f"{kernel}_backward", axis, grad_output.ndim), grad_dtype)
    if grad_dtype is dt.float32 and input_dtype is dt.float16:
        raise RuntimeError("expected scalar type Float but found Half")
    if output.dtype != grad_output.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(grad_dtype)} but found {array_type_name(output)}")
    return axis


def _backward_operands(grad_output: np.ndarray, output: np.ndarray, dim, input_dtype, kernel: str):
    """(``grad_output`` and ``output`` in the dtype the math runs in; the axis to sum over)."""
    axis = _backward_checks(grad_output, output, dim, input_dtype, kernel)
    if grad_output.dtype in HALF_TYPES:  # computed in float32 and rounded once, as PyTorch's kernels do
        return grad_output.astype(np.float32), output.astype(np.float32), axis
    return grad_output, output, axis


def _half_kernel_sums(values: np.ndarray, axis: int) -> np.ndarray:
    """The float32 sums of ``values`` along ``axis`` (kept) as PyTorch's half-type softmax backward
    kernels add them: along the last dim in its vector reduction's lane order (``row_sums``), along
    another dim one position after another (its vertical sums)."""
    if values.ndim == 0 or values.size == 0:
        return np.add.reduce(values, axis if values.ndim else None, keepdims=True)
    if axis != values.ndim - 1:
        return _in_order_sums(values, axis)
    length = values.shape[-1]
    return row_sums(values.reshape(-1, length)).reshape(values.shape[:-1] + (1,))


def _in_order_sums(values: np.ndarray, axis: int) -> np.ndarray:
    """The sums along ``axis`` (kept), each position added after the one before (NumPy's reduce
    would add pairwise along an axis contiguous in memory, as a dim followed by size-1 dims is)."""
    return np.add.accumulate(values, axis)[(slice(None),) * axis + (slice(-1, None),)]


_BACKWARD_BLOCK_BYTES = 128 * 1024  # the inner-dim kernels' working block along the softmax dim


def _half_kernel_exponentials(values: np.ndarray, axis: int) -> np.ndarray:
    """``exp`` of ``values`` (float32, or a half type: read from tables) as PyTorch's half log_softmax
    kernels (forward and backward) compute it: Sleef's vector ``exp`` along the last dim. Along
    another dim the kernel walks the inner positions in chunks (as many as fit 128 KiB of half
    values along the dim, whole vectors of 32, at least one); the positions after a chunk's last
    whole vector take the C library's ``expf``."""
    if values.ndim == 0 or axis == values.ndim - 1:
        return half_loop_exp(values, None)
    length, inner = values.shape[axis], int(np.prod(values.shape[axis + 1:]))
    chunk = max(_BACKWARD_BLOCK_BYTES // length // 2, HALF_VECTOR_LANES) // HALF_VECTOR_LANES * HALF_VECTOR_LANES
    position = np.arange(inner)
    chunk_length = np.minimum(chunk, inner - position // chunk * chunk)
    scalar = position % chunk >= chunk_length - chunk_length % HALF_VECTOR_LANES
    blocks = values.reshape(-1, length, inner)
    return half_loop_exp(blocks, scalar if scalar.any() else None).reshape(values.shape)


def _backward_meta(kernel: str):
    def backward_data(grad_output, output, dim, input_dtype):
        _backward_checks(grad_output, output, dim, input_dtype, kernel)
        return copy_of(grad_output)

    backward_data.__name__ = f"_{kernel}_backward_data"
    return rule(backward_data)


def _softmax_backward_data_grad(grad, grad_output, output, dim, input_dtype):
    # The result o * (g - sum(g * o)) is linear in g and its own transpose: the gradient for
    # g is the op itself. For o: G * g - g * sum(G * o) - G * sum(g * o).
    grad_grad_output = grad_output_grad = None
    if grad_output.requires_grad:
        grad_grad_output = ops._softmax_backward_data(grad, output, dim, input_dtype)
    if output.requires_grad:
        grad_output_grad = (grad_output * (grad - (grad * output).sum(dim, keepdim=True))
                            - grad * (grad_output * output).sum(dim, keepdim=True))
    return grad_grad_output, grad_output_grad


@op(errors=(Sample((TensorSpec((2, 3)), TensorSpec((3, 2)), 1, dt.float32)),
            Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float64"), 1, dt.float32)),
            Sample((TensorSpec((2, 3)), TensorSpec((2, 3)), 2, dt.float32))),
    grad=_softmax_backward_data_grad, meta=_backward_meta("softmax"), samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float32", 0, 1), 1, dt.float32)),
    Sample((TensorSpec((2, 3, 4), "float64"), TensorSpec((2, 3, 4), "float64", 0, 1), 0, dt.float64)),
    Sample((TensorSpec((3, 2), "float64"), TensorSpec((3, 2), "float64", 0, 1), -1, dt.float32)),
    Sample((TensorSpec(()), TensorSpec((), "float32", 0, 1), 0, dt.float32)),
    Sample((TensorSpec((2, 3), "float16"), TensorSpec((2, 3), "float16", 0, 1), 1, dt.float16)),
    Sample((TensorSpec((2, 3), "bfloat16"), TensorSpec((2, 3), "bfloat16", 0, 1), 0, dt.float32))))
def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int, input_dtype: dt.dtype) -> Tensor:
    """The gradient of ``softmax`` along ``dim`` for its input, given the gradient of its
    result ``grad_output`` and the result itself ``output``:
    ``output * (grad_output - (grad_output * output).sum(dim, keepdim=True))``.

    The result has ``grad_output``'s dtype, which must be ``output``'s too;
    ``input_dtype`` is the dtype softmax ran on (see PyTorch's op of this name).

    >>> import tensormodes as tm
    >>> tm._softmax_backward_data(tm.tensor([1., 0.]), tm.tensor([0.5, 0.5]), 0, tm.float32)
    tensor([ 0.2500, -0.2500])
    """
    grad, out, axis = _backward_operands(grad_output, output, dim, input_dtype, "softmax")
    result = grad * out
    if grad_output.dtype in HALF_TYPES:
        result = (grad - _half_kernel_sums(result, axis)) * out
    else:
        result -= out * np.add.reduce(result, axis, keepdims=True)
    return np.asarray(result.astype(grad_output.dtype, copy=False))


def _log_softmax_backward_data_grad(grad, grad_output, output, dim, input_dtype):
    # The result g - exp(o) * sum(g) is linear in g; its transpose gives G - sum(G * exp(o)).
    # For o: -G * exp(o) * sum(g).
    grad_grad_output = grad_output_grad = None
    probabilities = output.exp()
    if grad_output.requires_grad:
        grad_grad_output = grad - (grad * probabilities).sum(dim, keepdim=True)
    if output.requires_grad:
        grad_output_grad = -(grad * probabilities * grad_output.sum(dim, keepdim=True))
    return grad_grad_output, grad_output_grad


@op(errors=(Sample((TensorSpec((2, 3), "int64"), TensorSpec((2, 3), "int64"), 1, dt.float32)),),
    grad=_log_softmax_backward_data_grad, meta=_backward_meta("log_softmax"), samples=(
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float32", -3, 0), 1, dt.float32)),
    Sample((TensorSpec((2, 3, 4), "float64"), TensorSpec((2, 3, 4), "float64", -3, 0), 0, dt.float64)),
    Sample((TensorSpec((3, 2), "float64"), TensorSpec((3, 2), "float64", -3, 0), -1, dt.float32)),
    Sample((TensorSpec(()), TensorSpec((), "float32", -3, 0), 0, dt.float32)),
    Sample((TensorSpec((2, 3), "float16"), TensorSpec((2, 3), "float16", -3, 0), 1, dt.float16)),
    Sample((TensorSpec((2, 3), "bfloat16"), TensorSpec((2, 3), "bfloat16", -3, 0), 0, dt.float32))))
def _log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int, input_dtype: dt.dtype) -> Tensor:
    """The gradient of ``log_softmax`` along ``dim`` for its input, given the gradient of its
    result ``grad_output`` and the result itself ``output``:
    ``grad_output - output.exp() * grad_output.sum(dim, keepdim=True)``.

    The result has ``grad_output``'s dtype, which must be ``output``'s too;
    ``input_dtype`` is the dtype log_softmax ran on (see PyTorch's op of this name).

    >>> import tensormodes as tm
    >>> tm._log_softmax_backward_data(tm.tensor([1., 0.]), tm.tensor([0.5, 0.5]).log(), 0, tm.float32)
    tensor([ 0.5000, -0.5000])
    """
    grad, out, axis = _backward_operands(grad_output, output, dim, input_dtype, "log_softmax")
    if grad_output.dtype in HALF_TYPES:
        total = np.broadcast_to(_half_kernel_sums(grad, axis), grad.shape)
        return np.asarray(fma32(-_half_kernel_exponentials(output, axis), total, grad).astype(grad_output.dtype))
    if not out.ndim:
        result = grad - np.exp(out) * np.add.reduce(grad, axis, keepdims=True)
        return np.asarray(result.astype(grad_output.dtype, copy=False))
    result = np.exp(out)  # the same steps in one buffer
    result *= np.add.reduce(grad, axis, keepdims=True)
    return np.subtract(grad, result, out=result).astype(grad_output.dtype, copy=False)
