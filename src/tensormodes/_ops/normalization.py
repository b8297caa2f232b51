"""Normalisation as PyTorch computes it natively: ``_native_layer_norm``, ``_native_group_norm`` and
``_native_batch_norm`` (the first output of ``torch.native_layer_norm`` ...), behind
``nn.functional``'s ``layer_norm``, ``group_norm``, ``batch_norm`` and ``instance_norm``.

Each is one op recording PyTorch's node (``NativeLayerNormBackward0`` ...) with one fused gradient.
The kernels hand the statistics they computed to the formula (``saves=``); with grad mode on
(``create_graph=True``) the formula computes them again from the input, so that second-order
gradients see their dependence on it. Half types compute in float32, rounded once at the end.
The running statistics of ``batch_norm`` are updated by ``nn.functional`` (the op never writes
into its arguments).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .._settings import SETTINGS
from ._random_math import fma32
from .common import HALF_TYPES, conjugate, dtype_of, not_implemented, ops, quiet, scalar_type_name
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op


def _working(array: np.ndarray, name: str) -> np.ndarray:
    if array.dtype.kind != "f" and array.dtype not in HALF_TYPES:
        raise not_implemented(name, dtype_of(array))
    return array.astype(np.float32) if array.dtype in HALF_TYPES else array


def _half(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32 ``values`` rounded to the half type ``dtype`` (kept as float32)."""
    return np.asarray(np.asarray(values, np.float32).astype(dtype), dtype=np.float32)


def _kept_mean(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``x.mean(axis=axes, keepdims=True)`` of a float array, in NumPy's own two steps (the sum,
    then a division by the count as an intp, so in float64 and rounded) without its Python
    wrapper's overhead."""
    total = np.add.reduce(x, axis=axes, keepdims=True)
    return np.true_divide(total, np.intp(math.prod(x.shape[a] for a in axes)), out=total, casting="unsafe")


def _moments(x: np.ndarray, axes: tuple[int, ...], eps: float, centred: bool = False) -> tuple[np.ndarray, ...]:
    """Mean and 1 / sqrt(biased variance + eps) over ``axes`` (kept); and ``x - mean`` if ``centred``."""
    mean = _kept_mean(x, axes)
    difference = x - mean
    variance = _kept_mean(difference * difference, axes)
    variance += eps
    rstd = 1 / np.sqrt(variance, out=variance)
    return (mean, rstd, difference) if centred else (mean, rstd)


def _working_tensor(t):
    return t.float() if t.dtype.is_floating_point and t.element_size() == 2 else t


def _tensor_moments(x, dims: list[int], eps: float):
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    return mean, ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()


def _summed(t, dims: list[int]):
    return t.sum(dims) if dims else t  # sum([]) would reduce every dimension


def _affine_normalised_grad(gy, x, mean, rstd, dims: list[int]):
    """The input's gradient of ``(x - mean(x)) * rstd * gamma`` over ``dims``, given ``gy``, the
    output's gradient times gamma, in the steps of PyTorch's layer and group norm kernels
    (ds = sum(gy x), db = sum(gy), then rstd gy + b x + c): they decide the NaNs of an infinite
    gamma."""
    count = 1
    for d in dims:
        count *= x.shape[d]
    scale = 1 / count if count else 0.0
    ds = (gy * x).sum(dims, keepdim=True)
    db = gy.sum(dims, keepdim=True)
    b = (db * mean - ds) * rstd * rstd * rstd * scale
    c = -b * mean - db * rstd * scale
    return rstd * gy + b * x + c


# -- layer norm --------------------------------------------------------------------------------------

def _check_parameter_dtypes(input, *parameters) -> None:
    """PyTorch's CPU rule for normalisation parameters (weights, biases, running statistics): all
    of the input's dtype, or all float32 for a float16 / bfloat16 input, in PyTorch's words."""
    given = [parameter for parameter in parameters if parameter is not None]
    if not given:
        return
    if given[0].dtype == input.dtype:
        for parameter in given[1:]:
            if parameter.dtype != input.dtype:
                raise RuntimeError(f"expected scalar type {scalar_type_name(dtype_of(input))} but found "
                                   f"{scalar_type_name(dtype_of(parameter))}")
        return
    if any(parameter.dtype != np.float32 for parameter in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in HALF_TYPES:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _check_group_norm(input, weight, bias, C: int, N: int, HxW: int, group: int) -> None:
    """PyTorch's checks of ``native_group_norm``'s arguments, in its order: the groups, the
    parameters' shapes and dtypes, the input's dtype (its kernel's dispatch), then the size."""
    if group <= 0 or C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={group}")
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and (parameter.ndim != 1 or parameter.size != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(parameter.shape)} and input of shape "
                               f"{list(input.shape)}")
    _check_parameter_dtypes(input, weight, bias)
    _working(np.ones(1, input.dtype), "GroupNormKernelImpl")
    if input.size != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_batch_norm(input, weight, bias, running_mean, running_var, training: bool) -> None:
    """A batch (dim 0) and channels (dim 1): PyTorch's IndexError for a 1-D input (its message for
    a 0-dim one is an internal allocation failure; this one says what is wrong); then, in
    PyTorch's order, the input's dtype, the parameters' dtypes, and a batch to compute statistics of."""
    if input.ndim == 0:
        raise RuntimeError("batch_norm(): expected an input with a batch and a channel dimension, got a 0-dim tensor")
    if input.ndim == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    _working(np.ones(1, input.dtype), "batch_norm")
    _check_parameter_dtypes(input, weight, bias, running_mean, running_var)
    if training and input.size == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = {list(input.shape)}")


def _layer_norm_axes(input, normalized_shape, weight=None, bias=None, *, batch: str = "*, ") -> tuple[int, ...]:
    """The normalised axes, after PyTorch's checks of ``normalized_shape``, ``weight`` and ``bias``, in its order
    (``batch``: how the message spells the leading dimensions, ``*`` without a comma for ``rms_norm``)."""
    count = len(normalized_shape)
    if count == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and tuple(parameter.shape) != tuple(normalized_shape):
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(parameter.shape)} and normalized_shape = {list(normalized_shape)}")
    if input.ndim == 0 and batch == "*":  # rms_norm's own check, after the parameters'
        raise ValueError("Input tensor must have at least 1 dimensions, but got 0")
    if tuple(input.shape[input.ndim - count:]) != tuple(normalized_shape) or count > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape [{batch}"
                           f"{', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    return tuple(range(input.ndim - count, input.ndim))


def _native_layer_norm_meta(input, normalized_shape, weight, bias, eps):
    axes = _layer_norm_axes(input, normalized_shape, weight, bias)
    _check_parameter_dtypes(input, weight, bias)
    _working(np.ones(1, input.dtype), "LayerNormKernelImpl")
    work = _statistics_dtype(input, weight, bias)
    kept = tuple(1 if i in axes else s for i, s in enumerate(input.shape))
    return MetaArray(input.shape, input.dtype), MetaArray(kept, work), MetaArray(kept, work)


def _statistics_dtype(input, weight, bias) -> np.dtype:
    """The dtype of layer_norm's saved mean and rstd: the input's, or float32 for a half-type
    input with float32 parameters (PyTorch's mixed-type kernel)."""
    mixed = input.dtype in HALF_TYPES and any(p is not None and p.dtype == np.float32 for p in (weight, bias))
    return np.dtype(np.float32) if mixed else input.dtype


def _native_layer_norm_grad(grad, input, normalized_shape, weight, bias, eps, mean, rstd, needs_input_grad):
    if not ops.is_grad_enabled():  # PyTorch's backward op, one kernel
        return ops.ops.aten.native_layer_norm_backward.default(
            grad, input, list(normalized_shape), mean, rstd, weight, bias, list(needs_input_grad))
    # create_graph: the same steps with public ops, the statistics computed again from the input
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    leading = list(range(input.dim() - len(normalized_shape)))
    x, g = _working_tensor(input), _working_tensor(grad)
    mean, rstd = _tensor_moments(x, dims, eps)
    xhat = (x - mean) * rstd
    grad_input = None
    if needs_input_grad[0]:
        grad_input = _affine_normalised_grad(g if weight is None else g * weight, x, mean, rstd, dims)
    return (grad_input, _summed(g * xhat, leading) if needs_input_grad[1] else None,
            _summed(g, leading) if needs_input_grad[2] else None)


@op(node="native_layer_norm", grad=_native_layer_norm_grad, saves=("mean", "rstd"),
    meta=rule(_native_layer_norm_meta),
    errors=(Sample((TensorSpec((2, 3)), [2], None, None, 1e-5)),
            Sample((TensorSpec((2, 3), "int64"), [3], None, None, 1e-5)),
            Sample((TensorSpec((2, 3)), [3], None, TensorSpec(()), 1e-5)),
            Sample((TensorSpec((2, 3)), [3], TensorSpec((2,)), None, 1e-5)),
            Sample((TensorSpec((2, 3)), [], None, None, 1e-5))),
    samples=(Sample((TensorSpec((2, 3, 4)), [4], TensorSpec((4,)), TensorSpec((4,)), 1e-5)),
             Sample((TensorSpec((2, 3, 4), "float64"), [3, 4], None, None, 1e-3)),
             Sample((TensorSpec((3, 4), "float64"), [4], TensorSpec((4,), "float64"), None, 1e-5)),
             Sample((TensorSpec((5,)), [5], None, TensorSpec((5,)), 0.0)),
             Sample((TensorSpec((2, 4), "float16"), [4], None, None, 1e-5))),
    aten="native_layer_norm.default",
    schema={"normalized_shape": "SymInt[]"}, tags=("core",))
def _native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None, bias: Tensor | None,
                       eps: float) -> Tensor:
    """``input`` normalised over its last ``len(normalized_shape)`` dimensions (mean 0, biased
    variance 1), times ``weight`` plus ``bias``: the output of PyTorch's
    ``torch.native_layer_norm``, which ``nn.functional.layer_norm`` runs (node
    ``NativeLayerNormBackward0``).

    >>> import tensormodes as tm
    >>> tm._native_layer_norm(tm.tensor([[1.0, 3.0]]), [2], None, None, 0.0)
    tensor([[-1.,  1.]])
    """
    axes = _layer_norm_axes(input, normalized_shape, weight, bias)
    _check_parameter_dtypes(input, weight, bias)
    x = _working(input, "LayerNormKernelImpl")
    if input.dtype in HALF_TYPES and input.size:
        result, mean, rstd = _half_layer_norm(x, len(axes), weight, bias, eps)
        work = _statistics_dtype(input, weight, bias)
        return result.astype(input.dtype), mean.astype(work), rstd.astype(work)
    mean, rstd, result = _moments(x, axes, eps, centred=True)
    result *= rstd  # (x - mean) * rstd * weight + bias, in place
    if weight is not None:
        result *= weight
    if bias is not None:
        result += bias
    # the output from the float32 statistics; the saved ones rounded to their dtype (the backward reads those)
    work = _statistics_dtype(input, weight, bias)
    # (mean and rstd are new arrays: already of that dtype, they are returned as they are)
    return np.asarray(result, dtype=input.dtype), mean.astype(work, copy=False), rstd.astype(work, copy=False)


def _half_layer_norm(x: np.ndarray, count: int, weight, bias, eps: float) -> tuple[np.ndarray, ...]:
    """A half-type layer norm (``x`` its float32 values, normalised over the last ``count``
    dimensions) as PyTorch's CPU kernel computes it: each row's mean and variance by its
    Welford cascade (``_rowwise_moments``), ``rstd = 1 / sqrt(variance + eps)`` in float32, then
    ``(x * rstd + (-rstd * mean)) * weight + bias`` as two fused multiply-adds. Returns the float32
    result and the statistics (shaped for broadcasting)."""
    shape = x.shape
    kept = shape[:x.ndim - count] + (1,) * count
    rows = x.reshape(math.prod(shape[:x.ndim - count]), -1)
    mean, variance = _rowwise_moments(rows)
    rstd = np.float32(1) / np.sqrt(variance + np.float32(eps))
    # fused multiply-adds in float64, where a product of float32 values is exact (one rounding
    # there, then to float32: a second rounding that could matter only at a float32 midpoint)
    result = np.multiply(rows, rstd[:, None], dtype=np.float64)
    result += (-rstd * mean)[:, None]
    result = result.astype(np.float32)
    if weight is not None or bias is not None:
        gamma = np.float32(1) if weight is None else weight.astype(np.float32).reshape(-1)
        result = np.multiply(result, gamma, dtype=np.float64)
        if bias is not None:
            result += bias.astype(np.float32).reshape(-1)
        result = result.astype(np.float32)
    return result.reshape(shape), mean.reshape(kept), rstd.reshape(kept)


_MOMENT_LANES = 8  # float32 lanes of the vectors PyTorch's half-type moments run in (16 half values each)
_MOMENT_CHUNK = 16  # vectors per Welford chunk (kChunkSize)


def _rowwise_moments(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's mean and biased variance (float32 ``rows``, half-type values) in the steps of
    PyTorch's ``RowwiseMoments``: whole vectors of 16 values by Welford's update in two sets of 8
    float32 lanes, a chunk of 16 vectors at a time, chunks merged in a binary cascade; the values
    after the last whole vector by the scalar Welford update; then the 8 lanes merged into it one
    by one. (Where its compiled code fuses a multiply-add, so does this.)"""
    count, size = rows.shape
    vectors = size // (2 * _MOMENT_LANES)
    chunks = -(-vectors // _MOMENT_CHUNK)
    depth = 1 if chunks <= 2 else (chunks - 1).bit_length()
    stack = [[0, np.zeros((count, _MOMENT_LANES), np.float32), np.zeros((count, _MOMENT_LANES), np.float32)]
             for _ in range(depth)]
    for i in range(chunks):
        taken = min(_MOMENT_CHUNK, vectors - i * _MOMENT_CHUNK)
        block = rows[:, i * _MOMENT_CHUNK * 2 * _MOMENT_LANES:][:, :taken * 2 * _MOMENT_LANES]
        block = block.reshape(count, taken, 2, _MOMENT_LANES)
        m1 = np.zeros((2, count, _MOMENT_LANES), np.float32)
        m2 = np.zeros((2, count, _MOMENT_LANES), np.float32)
        for j in range(taken):
            x = block[:, j].transpose(1, 0, 2)
            delta = x - m1
            m1 = fma32(delta, np.float32(1) / np.float32(j + 1), m1)
            m2 = fma32(delta, x - m1, m2)
        for half in range(2):
            _merge_moments(stack[0], taken, m1[half], m2[half])
        mask = i + 1
        for level in range(1, depth):
            if mask & 1:
                break
            _merge_moments(stack[level], *stack[level - 1])
            stack[level - 1] = [0, np.zeros_like(m1[0]), np.zeros_like(m1[0])]
            mask >>= 1
    for level in range(1, depth):
        _merge_moments(stack[0], *stack[level])
    merged = [0, np.zeros(count, np.float32), np.zeros(count, np.float32)]
    for k in range(vectors * 2 * _MOMENT_LANES, size):  # the scalar Welford update
        x = rows[:, k]
        delta = x - merged[1]
        merged[0] += 1
        merged[1] = merged[1] + delta / np.float32(merged[0])
        merged[2] = merged[2] + delta * (x - merged[1])
    for lane in range(_MOMENT_LANES):
        _merge_moments(merged, 2 * vectors, stack[0][1][:, lane], stack[0][2][:, lane], fused=True)
    return merged[1], merged[2] / np.float32(size)


def _merge_moments(into: list, count: int, mean: np.ndarray, m2: np.ndarray, *, fused: bool = False) -> None:
    """PyTorch's ``AddMoments`` (``fused``: its scalar version, whose multiply-adds are fused) or
    ``AddMomentsVec``: ``count`` values' mean and sum of squared deviations merged into ``into``
    (``[count, mean, m2]``), in place."""
    total = into[0] + count
    c = np.float32(0) if total == 0 else np.float32(count) / np.float32(total)
    delta = mean - into[1]
    if fused:
        into[1] = fma32(c, delta, into[1])
        into[2] = into[2] + fma32(delta * delta * c, np.float32(into[0]), m2)
    else:
        into[1] = into[1] + c * delta
        into[2] = into[2] + (m2 + delta * delta * c * np.float32(into[0]))
    into[0] = total


def _native_layer_norm_backward_grad(grad, grad_out, input, normalized_shape, mean, rstd, weight, output_mask,
                                     needs_input_grad):
    # Double backward: the backward's steps written with public ops and differentiated, the
    # statistics as functions of the input (their values the given ones, their derivatives
    # d mean / dx = 1 / N and d rstd / dx = -rstd**3 (x - mean) / N, which need no eps).
    for position, name in ((2, "mean"), (3, "rstd")):
        if needs_input_grad[position]:
            raise NotImplementedError(f"the derivative for 'native_layer_norm_backward {name}' is not implemented.")
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    leading = list(range(input.dim() - len(normalized_shape)))
    wanted = [(i, t) for i, t in ((0, grad_out), (1, input), (4, weight)) if t is not None and needs_input_grad[i]]
    create_graph = ops.is_grad_enabled()
    with ops.enable_grad():
        leaves = {i: t.detach().requires_grad_() for i, t in wanted}
        go, x = leaves.get(0, grad_out.detach()), leaves.get(1, input.detach())
        w = None if weight is None else leaves.get(4, weight.detach())
        m = x.mean(dims, keepdim=True)
        centred = x - m
        variance = (centred * centred).mean(dims, keepdim=True)
        r = rstd + (variance - variance.detach()) * (rstd * rstd * rstd * -0.5)
        xhat = (x - (mean + (m - m.detach()))) * r
        g = go if w is None else go * w
        outputs = [r * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True)),
                   _summed(go * xhat, leading), _summed(go, leading)]
        pairs = [(out, gg) for out, gg, on in zip(outputs, grad, output_mask) if on and gg is not None]
        found = ops.autograd.grad([o for o, _ in pairs], list(leaves.values()), [gg for _, gg in pairs],
                                  create_graph=create_graph, allow_unused=True) if pairs and leaves else ()
    by_input = dict(zip(leaves, found))
    return by_input.get(0), by_input.get(1), None, None, by_input.get(4), None


def _native_layer_norm_backward_meta(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    _layer_norm_axes(input, normalized_shape, weight, bias)
    shape = tuple(normalized_shape)
    return (MetaArray(input.shape, input.dtype) if output_mask[0] else None,
            MetaArray(shape, input.dtype) if output_mask[1] else None,
            MetaArray(shape, input.dtype) if output_mask[2] else None)


_LN_X = TensorSpec((2, 3, 4))
_LN_STAT = TensorSpec((2, 3, 1), "float32", 0.5, 2)


@op(function=False, grad=_native_layer_norm_backward_grad, meta=rule(_native_layer_norm_backward_meta),
    schema={"normalized_shape": "SymInt[]", "output_mask": "bool[3]", "(returns)": "Tensor, Tensor, Tensor"},
    samples=(Sample((_LN_X, _LN_X, [4], _LN_STAT, _LN_STAT, TensorSpec((4,)), TensorSpec((4,)), [True, True, True])),
             Sample((TensorSpec((3, 4), "float64"), TensorSpec((3, 4), "float64"), [4],
                     TensorSpec((3, 1), "float64"), TensorSpec((3, 1), "float64", 0.5, 2), None, None,
                     [True, False, False])),
             Sample((_LN_X, _LN_X, [3, 4], TensorSpec((2, 1, 1)), TensorSpec((2, 1, 1), "float32", 0.5, 2),
                     TensorSpec((3, 4)), None, [True, True, False]))),
    aten="default", tags=("core",))
def native_layer_norm_backward(grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
                               rstd: Tensor, weight: Tensor | None, bias: Tensor | None,
                               output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    """The gradients of ``native_layer_norm`` for its input, weight and bias (those ``output_mask``
    asks for, else None), given the forward's ``mean`` and ``rstd``: PyTorch's
    ``aten::native_layer_norm_backward``, in the steps of its CPU kernel.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1.0, 3.0]])
    >>> _, mean, rstd = tm.ops.aten.native_layer_norm.default(x, [2], None, None, 0.0)
    >>> tm.ops.aten.native_layer_norm_backward.default(tm.tensor([[1.0, 0.0]]), x, [2], mean, rstd, None, None,
    ...                                                [True, True, True])
    (tensor([[0., 0.]]), tensor([-1.,  0.]), tensor([1., 0.]))
    """
    axes = _layer_norm_axes(input, normalized_shape, weight, bias)
    leading = tuple(range(input.ndim - len(axes)))
    x, g = _working(input, "LayerNormBackwardKernelImpl"), _working(grad_out, "LayerNormBackwardKernelImpl")
    mean, rstd = _working(mean, "LayerNormBackwardKernelImpl"), _working(rstd, "LayerNormBackwardKernelImpl")
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        gy = g if weight is None else g * weight
        count = math.prod(x.shape[d] for d in axes)
        scale = 1 / count if count else 0.0
        ds = np.add.reduce(gy * x, axis=axes, keepdims=True)
        db = np.add.reduce(gy, axis=axes, keepdims=True)
        b = (db * mean - ds) * rstd * rstd * rstd * scale
        c = -b * mean - db * rstd * scale
        grad_input = rstd * g  # rstd * g * weight + b * x + c (PyTorch's order: a * dy * gamma), in place
        if weight is not None:
            grad_input *= weight
        grad_input += b * x
        grad_input += c
        grad_input = np.asarray(grad_input, dtype=input.dtype)
    if input.dtype in HALF_TYPES and (output_mask[1] or output_mask[2]):
        parameter_dtype = np.dtype(np.float32) if weight is not None and weight.dtype == np.float32 else input.dtype
        grad_weight, grad_bias = _half_layer_norm_parameter_grads(g, x, mean, rstd, len(leading), input.dtype,
                                                                  parameter_dtype, output_mask)
        return grad_input, grad_weight, grad_bias
    if output_mask[1]:
        xhat = x - mean
        xhat *= rstd
        grad_weight = np.asarray(np.add.reduce(np.multiply(g, xhat, out=xhat), axis=leading) if leading
                                 else g * xhat, dtype=input.dtype)
    if output_mask[2]:
        grad_bias = np.asarray(np.add.reduce(g, axis=leading) if leading else g, dtype=input.dtype)
    return grad_input, grad_weight, grad_bias


def _half_layer_norm_parameter_grads(g: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, leading: int,
                                     dtype: np.dtype, parameter_dtype: np.dtype, output_mask) -> tuple:
    """A half-type layer norm's weight and bias gradients (float32 operands) as PyTorch's CPU kernel
    sums them: its rows split among the intra-op threads (``SETTINGS.num_threads``) in contiguous
    chunks, each thread adding its rows' ``dy * (rstd * x - rstd * mean)`` (and ``dy``) into a
    buffer of the input's half type, every row's sum rounded; then the threads' buffers added in
    float32 and rounded to the parameters' dtype."""
    shape = g.shape[leading:]
    rows = math.prod(g.shape[:leading])
    g, x = g.reshape(rows, -1), x.reshape(rows, -1)
    a = rstd.reshape(rows, 1)
    # (its compiled loop fuses both multiply-adds of dgamma + dy * (a * x + b)); dbeta adds 1 * dy
    pairs = [(g, fma32(a, x, -a * mean.reshape(rows, 1)))] if output_mask[1] else []
    if output_mask[2]:
        pairs.append((np.ones_like(g), g))
    threads = SETTINGS.num_threads
    tasks = min(threads, rows) if threads > 1 else 1
    chunk = -(-rows // tasks) if rows else 0
    # (term, factor or term, thread, k-th row of its chunk, column) in float64: a product of two
    # float32 values is exact there, so each step rounds once to float32 (as a fused multiply-add)
    operands = np.zeros((len(pairs), 2, tasks * chunk, g.shape[1]))
    for i, pair in enumerate(pairs):
        operands[i, :, :rows] = pair
    operands = operands.reshape(len(pairs), 2, tasks, chunk, -1)
    buffers = np.zeros((len(pairs), threads, g.shape[1]))
    for k in range(chunk):  # the k-th row of every thread's chunk at once
        summed = operands[:, 0, :, k] * operands[:, 1, :, k]
        summed += buffers[:, :tasks]
        buffers[:, :tasks] = summed.astype(np.float32).astype(dtype)
    buffers = buffers.astype(np.float32)
    totals = iter(np.add.reduce(buffers, axis=1).astype(parameter_dtype).reshape((len(pairs), *shape)))
    return (next(totals) if output_mask[1] else None), (next(totals) if output_mask[2] else None)


# -- group norm --------------------------------------------------------------------------------------

def _native_group_norm_meta(input, weight, bias, N, C, HxW, group, eps):
    _check_group_norm(input, weight, bias, C, N, HxW, group)
    work = np.dtype(np.float32) if input.dtype in HALF_TYPES else input.dtype
    return MetaArray(input.shape, input.dtype), MetaArray((N, group), work), MetaArray((N, group), work)


def _channel_view(t, ndim: int):
    return t.reshape([-1] + [1] * (ndim - 2))


def _native_group_norm_grad(grad, input, weight, N, C, HxW, group, eps, mean, rstd, needs_input_grad):
    if not ops.is_grad_enabled():  # PyTorch's backward op, one kernel
        return ops.ops.aten.native_group_norm_backward.default(grad, input, mean, rstd, weight, N, C, HxW, group,
                                                               list(needs_input_grad))
    return native_group_norm_backward_composite(grad, input, weight, N, group, needs_input_grad, *_tensor_moments(
        _working_tensor(input).reshape(N, group, -1), [-1], eps))


def native_group_norm_backward_composite(grad, input, weight, N, group, output_mask, mean, rstd):
    """``native_group_norm_backward``'s values with public ops (with ``create_graph`` the formula,
    the statistics computed again from the input, of shape (N, group, 1))."""
    x, g = _working_tensor(input), _working_tensor(grad)
    grouped = x.reshape(N, group, -1)
    mean, rstd = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
    xhat = (grouped - mean) * rstd
    grad_input = None
    if output_mask[0]:
        scaled = g if weight is None else g * _channel_view(weight, g.dim())
        grad_input = _affine_normalised_grad(scaled.reshape(N, group, -1), grouped, mean, rstd, [-1]).reshape(
            input.shape)
    dims = [0] + list(range(2, input.dim()))
    return (grad_input, (g * xhat.reshape(input.shape)).sum(dims) if output_mask[1] else None,
            g.sum(dims) if output_mask[2] else None)


@op(node="native_group_norm", grad=_native_group_norm_grad, saves=("mean", "rstd"),
    meta=rule(_native_group_norm_meta),
    errors=(Sample((TensorSpec((2, 4, 3), "int64"), None, None, 2, 4, 3, 2, 1e-5)),),
    samples=(Sample((TensorSpec((2, 4, 3)), TensorSpec((4,)), TensorSpec((4,)), 2, 4, 3, 2, 1e-5)),
             Sample((TensorSpec((2, 6, 2, 2), "float64"), None, None, 2, 6, 4, 3, 1e-3)),
             Sample((TensorSpec((3, 4), "float64"), TensorSpec((4,), "float64"), None, 3, 4, 1, 1, 1e-5)),
             Sample((TensorSpec((1, 2, 4), "float16"), None, None, 1, 2, 4, 2, 1e-5))),
    aten="native_group_norm.default",
    schema={"N": "SymInt", "C": "SymInt", "HxW": "SymInt"}, tags=("core",))
def _native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int, HxW: int,
                       group: int, eps: float) -> Tensor:
    """``input`` (N, C, *) normalised over each of ``group`` groups of channels of each sample,
    then scaled and shifted per channel: the output of PyTorch's ``torch.native_group_norm``,
    which ``nn.functional.group_norm`` runs (node ``NativeGroupNormBackward0``).

    >>> import tensormodes as tm
    >>> tm._native_group_norm(tm.tensor([[1.0, 3.0]]), None, None, 1, 2, 1, 1, 0.0)
    tensor([[-1.,  1.]])
    """
    _check_group_norm(input, weight, bias, C, N, HxW, group)
    x = _working(input, "GroupNormKernelImpl")
    mean, rstd = _moments(x.reshape(N, group, (C // group) * HxW), (2,), eps)
    # PyTorch's kernel folds everything into one scale and shift per (sample, channel), x * scale +
    # shift, which decides the results at infinite parameters (inf - inf is NaN there)
    with quiet():  # an infinite weight meets zeros: NaN without a word, as in PyTorch
        scale = np.repeat(rstd.reshape(N, group), C // group, axis=1)
        if weight is not None:
            scale = scale * weight
        shift = -scale * np.repeat(mean.reshape(N, group), C // group, axis=1)
        if bias is not None:
            shift = shift + bias
        result = x.reshape(N, C, HxW) * scale[..., None] + shift[..., None]
    return np.asarray(result.reshape(input.shape), dtype=input.dtype), mean.reshape(N, group), rstd.reshape(N, group)


# -- batch norm --------------------------------------------------------------------------------------

def _statistics_dtype(input, *parameters) -> np.dtype:
    """The dtype of batch norm's saved statistics and parameter gradients: float32 for a half input
    with float32 parameters (PyTorch's mixed-type kernel), else the input's."""
    if input.dtype in HALF_TYPES and any(p is not None and p.dtype == np.float32 for p in parameters):
        return np.dtype(np.float32)
    return input.dtype


def _native_batch_norm_meta(input, weight, bias, running_mean, running_var, training, momentum, eps):
    _check_batch_norm(input, weight, bias, running_mean, running_var, training)
    statistics = (input.shape[1],) if training else (0,)
    dtype = _statistics_dtype(input, weight, bias, running_mean, running_var)
    return MetaArray(input.shape, input.dtype), MetaArray(statistics, dtype), MetaArray(statistics, dtype)


def _native_batch_norm_grad(grad, input, weight, running_mean, running_var, training, eps, mean, invstd,
                            needs_input_grad):
    if not training and ops.is_grad_enabled():
        # create_graph in evaluation: the input's gradient is a constant of the input, so its
        # second derivative is no tensor (None) rather than zeros, as PyTorch's engine gives
        dims = [0] + list(range(2, input.dim()))
        invstd = _channel_view((running_var + eps).rsqrt(), input.dim())
        scaled = grad * invstd
        xhat = (input - _channel_view(running_mean, input.dim())) * invstd
        return (scaled * _channel_view(weight, input.dim()) if weight is not None else scaled,
                (grad * xhat).sum(dims) if needs_input_grad[1] else None,
                grad.sum(dims) if needs_input_grad[2] else None, None, None)
    # PyTorch's formula: its backward op, also with grad mode on (the op has a double backward)
    return ops.ops.aten.native_batch_norm_backward.default(
        grad, input, weight, running_mean, running_var, mean, invstd, training, eps,
        [needs_input_grad[0], needs_input_grad[1], needs_input_grad[2]]) + (None, None)


def _update_running_statistics(running_mean, running_var, mean, variance, count: int, momentum: float) -> None:
    """PyTorch's update of the running statistics, in place and without a new version (its kernel
    writes them directly), computed in float64 as its accumulation type does: ``momentum * new +
    (1 - momentum) * old``, the variance unbiased."""
    if running_mean is not None:
        update = momentum * mean.reshape(-1).astype(np.float64) + (1 - momentum) * running_mean.astype(np.float64)
        running_mean[...] = update.astype(running_mean.dtype)
    if running_var is not None:
        with quiet():  # a single value per channel: the unbiased variance is inf or NaN, as PyTorch's
            unbiased = variance.reshape(-1).astype(np.float64) * count / (count - 1) if count > 1 else (
                variance.reshape(-1).astype(np.float64) * count / 0.0)
        update = momentum * unbiased + (1 - momentum) * running_var.astype(np.float64)
        running_var[...] = update.astype(running_var.dtype)


def _refuse_running_statistics(op_name: str, running_mean, running_var) -> bool:
    """PyTorch records no gradient for the running statistics: one requiring grad is refused."""
    for name, statistic in (("running_mean", running_mean), ("running_var", running_var)):
        if statistic is not None and statistic.requires_grad:
            raise RuntimeError(f"The function '{op_name}' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True.")
    return True


def _native_batch_norm_differentiable(input, weight, bias, running_mean, running_var, *args) -> bool:
    return _refuse_running_statistics("native_batch_norm", running_mean, running_var)


def _native_batch_norm_backward_differentiable(grad_out, input, weight, running_mean, running_var, *args) -> bool:
    return _refuse_running_statistics("native_batch_norm_backward", running_mean, running_var)


_IMAGES = TensorSpec((3, 2, 2, 2))
_CHANNEL = TensorSpec((2,))
_VARIANCE = TensorSpec((2,), "float32", 0.5, 2)


@op(node="native_batch_norm", grad=_native_batch_norm_grad, saves=("mean", "invstd"),
    differentiable=_native_batch_norm_differentiable,
    meta=rule(_native_batch_norm_meta),
    errors=(Sample((TensorSpec((3, 2), "int64"), None, None, None, None, True, 0.1, 1e-5)),),
    samples=(Sample((_IMAGES, _CHANNEL, _CHANNEL, None, None, True, 0.1, 1e-5)),
             Sample((_IMAGES, _CHANNEL, _CHANNEL, _CHANNEL, _VARIANCE, False, 0.1, 1e-5)),
             Sample((TensorSpec((4, 3), "float64"), None, None, None, None, True, 0.1, 1e-3)),
             Sample((TensorSpec((4, 3, 2), "float64"), TensorSpec((3,), "float64"), None,
                     TensorSpec((3,), "float64"), TensorSpec((3,), "float64", 0.5, 2), False, 0.1, 1e-5)),
             Sample((TensorSpec((4, 2), "float16"), None, None, None, None, True, 0.1, 1e-5))),
    aten="native_batch_norm.default")
def _native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                       running_var: Tensor | None, training: bool, momentum: float, eps: float) -> Tensor:
    """``input`` (N, C, *) normalised per channel with the batch's statistics (``training``) or
    the running ones, then scaled and shifted per channel: the output of PyTorch's
    ``torch.native_batch_norm`` (node ``NativeBatchNormBackward0``). In training the running
    statistics given are updated in place, as PyTorch's kernel does (without a new version:
    its schema does not declare the write).

    >>> import tensormodes as tm
    >>> tm._native_batch_norm(tm.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 0.0)
    tensor([[-1.],
            [ 1.]])
    """
    _check_batch_norm(input, weight, bias, running_mean, running_var, training)
    x = _working(input, "batch_norm")
    shape = (1, -1) + (1,) * (input.ndim - 2)
    statistics_dtype = _statistics_dtype(input, weight, bias, running_mean, running_var)
    if training:
        axes = (0,) + tuple(range(2, input.ndim))
        count = input.size // max(input.shape[1], 1)
        with quiet():  # no batch: NaN statistics, as PyTorch's
            if x.dtype == np.float32 and input.size == input.shape[0] * input.shape[1]:
                # one value per (sample, channel): PyTorch's channels-last kernel sums the rows in
                # the input's type (one thread's order: row after row)
                mean = np.add.reduce(x, axis=axes, keepdims=True) / x.dtype.type(count)
                centred = x - mean
                variance = np.add.reduce(centred * centred, axis=axes, keepdims=True) / x.dtype.type(count)
                invstd = (1 / np.sqrt(variance + eps)).astype(x.dtype)
            elif x.dtype == np.float32 or x.dtype == np.float64:
                # PyTorch's kernel: sums accumulated in float64, the mean rounded to the input's
                # type, the deviations' squares in it, the inverse deviation in float64
                mean = (np.add.reduce(x.astype(np.float64), axis=axes, keepdims=True) / count).astype(x.dtype)
                centred = x - mean
                variance = np.add.reduce((centred * centred).astype(np.float64), axis=axes, keepdims=True) / count
                invstd = (1 / np.sqrt(variance + eps)).astype(x.dtype)
            else:
                mean = x.mean(axis=axes, keepdims=True)
                centred = x - mean
                variance = (centred * centred).mean(axis=axes, keepdims=True)
                invstd = 1 / np.sqrt(variance + eps)
        if statistics_dtype in HALF_TYPES:
            # without float32 parameters PyTorch keeps the batch's statistics in the input's
            # half type, and normalises with those rounded values; for bfloat16 the sum of
            # squared deviations and the variance are rounded on the way too
            if input.dtype == np.float16:
                mean, invstd = _half(mean, input.dtype), _half(invstd, input.dtype)
            else:
                squares = _half((np.square(centred)).sum(axis=axes, keepdims=True), input.dtype)
                variance = _half(squares / np.float32(max(count, 1)), input.dtype)
                mean, invstd = _half(mean, input.dtype), _half(1 / np.sqrt(variance + np.float32(eps)), input.dtype)
        _update_running_statistics(running_mean, running_var, mean, variance, count, momentum)
        saved_mean = mean.reshape(-1).astype(statistics_dtype)
        saved_invstd = invstd.reshape(-1).astype(statistics_dtype)
    else:
        mean = np.asarray(running_mean, dtype=x.dtype).reshape(shape)
        invstd = 1 / np.sqrt(np.asarray(running_var, dtype=x.dtype).reshape(shape) + eps)
        saved_mean = np.empty(0, statistics_dtype)
        saved_invstd = np.empty(0, statistics_dtype)
    # PyTorch's kernel: one scale and shift per channel, x * scale + shift (this decides the
    # results at infinite parameters, and the last bit of half ones)
    with quiet():  # an infinite weight meets zeros: NaN without a word, as in PyTorch
        scale = invstd if weight is None else invstd * weight.reshape(shape)
        if x.dtype == np.float32:
            # float32: PyTorch's compiled loops contract both multiply-adds (each rounded once)
            scale = np.asarray(scale, np.float32)
            wide_shift = -mean.astype(np.float64) * scale
            shift = (wide_shift if bias is None else bias.reshape(shape).astype(np.float64) + wide_shift)
            result = (x.astype(np.float64) * scale + shift.astype(np.float32)).astype(np.float32)
        else:
            shift = -mean * scale if bias is None else bias.reshape(shape) - mean * scale
            result = x * scale + shift
    return np.asarray(result, dtype=input.dtype), saved_mean, saved_invstd


def _lane_sums(rows: np.ndarray) -> np.ndarray:
    """The sums of ``rows`` (R, L) as PyTorch's ``vec::reduce_all`` adds them (AVX2): rows shorter
    than a vector one by one; longer ones in 8 (float32) or 4 (float64) lanes, the last partial
    vector into the first lanes, then the lanes pairwise (float32) or one by one (float64)."""
    width = 8 if rows.dtype == np.float32 else 4
    count = rows.shape[1]
    if count < width:
        total = rows[:, 0].copy() if count else np.zeros(rows.shape[0], rows.dtype)
        for j in range(1, count):
            total = total + rows[:, j]
        return total
    whole = count - count % width
    lanes = rows[:, :width].copy()
    for d in range(width, whole, width):
        lanes = lanes + rows[:, d:d + width]
    start = max(width, whole)
    if count > start:
        lanes[:, :count - start] = lanes[:, :count - start] + rows[:, start:]
    if width == 4:
        return ((lanes[:, 0] + lanes[:, 1]) + lanes[:, 2]) + lanes[:, 3]
    while lanes.shape[1] > 1:
        half = lanes.shape[1] // 2
        lanes = lanes[:, :half] + lanes[:, half:]
    return lanes[:, 0]


def _channel_sums(values: np.ndarray) -> np.ndarray:
    """Per channel (dim 1) of ``values`` (N, C, *), the sum PyTorch's batch norm backward
    accumulates in float64: each (sample, channel) plane's ``_lane_sums``, added sample by sample."""
    n, c = values.shape[:2]
    planes = _lane_sums(values.reshape(n * c, -1)).reshape(n, c).astype(np.float64)
    total = np.zeros(c)
    for i in range(n):
        total = total + planes[i]
    return total


def _native_batch_norm_backward_grad(grad, grad_out, input, weight, running_mean, running_var, save_mean,
                                     save_invstd, train, eps, output_mask, needs_input_grad):
    # Double backward: PyTorch's formula (batchnorm_double_backward) with public ops. In training
    # it takes the saved statistics as the input's (their derivatives written out), in evaluation
    # the running ones as constants; the statistics themselves get no gradient, as in PyTorch.
    for position, name in ((3, "running_mean"), (4, "running_var"), (5, "save_mean"), (6, "save_invstd")):
        if needs_input_grad[position]:
            raise NotImplementedError(f"the derivative for 'native_batch_norm_backward {name}' is not implemented.")
    ggI, ggG, ggB = (g if on else None for g, on in zip(grad, output_mask))
    dims = [0] + list(range(2, input.dim()))
    count = input.numel() // max(input.shape[1], 1)

    def channel(t):
        return _channel_view(t, input.dim())

    def total(t):
        return t.sum(dims, keepdim=True)

    mu = channel(save_mean if train else running_mean)
    inv = channel(save_invstd) if train else channel((running_var + eps).pow(-0.5))
    inv2, inv3 = inv.pow(2), inv.pow(3)
    gamma = 1 if weight is None else channel(weight)
    go = grad_out
    centred = input - mu
    centred_inv3 = centred * inv3
    go_centred_sum, go_sum = total(go * centred), total(go)
    grad_input = grad_weight = grad_grad_out = None
    if ggI is not None and train:
        ggi_sum, ggi_centred_sum = total(ggI), total(ggI * centred)
        common = (ggi_sum * go_sum / count - total(go * ggI)
                  + inv2 * go_centred_sum * ggi_centred_sum * (3 / count))
        grad_input = gamma * (centred_inv3 * common / count
                              + ggi_centred_sum * inv3 / count * (go_sum / count - go)
                              + go_centred_sum * inv3 / count * (ggi_sum / count - ggI))
    if weight is not None and ggG is not None:
        if train:
            term = channel(ggG) * (go * inv + inv * go_sum / -count + centred_inv3 * go_centred_sum / -count)
        else:
            term = channel(ggG) * inv * go
        grad_input = term if grad_input is None else grad_input + term

    def first_backward(g, scale):  # the backward's input gradient in training
        return scale * inv / count * (g * count - total(g) - centred * inv2 * total(g * centred))

    if weight is not None and ggI is not None:
        grad_weight = (ggI * first_backward(go, 1) if train else ggI * go * inv).sum(dims)
    if ggI is not None:
        grad_grad_out = first_backward(ggI, gamma) if train else ggI * inv * gamma
    if weight is not None and ggG is not None:
        term = channel(ggG) * centred * inv
        grad_grad_out = term if grad_grad_out is None else grad_grad_out + term
    if ggB is not None:
        term = channel(ggB).expand(input.shape)
        grad_grad_out = term if grad_grad_out is None else grad_grad_out + term
    return (grad_grad_out if needs_input_grad[0] else None, grad_input if needs_input_grad[1] else None,
            grad_weight if needs_input_grad[2] else None, None, None, None, None)


def _check_batch_norm_backward(input, save_mean, save_invstd, running_mean, running_var, train):
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got 1)")
    _working(np.ones(1, input.dtype), "batch_norm_backward_cpu")
    given = (save_mean, save_invstd) if train else (running_mean, running_var)
    if any(t is None for t in given):
        raise RuntimeError("native_batch_norm_backward: the " + ("saved statistics" if train else
                                                                 "running statistics") + " must be given")


def _native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                                     train, eps, output_mask):
    _check_batch_norm_backward(input, save_mean, save_invstd, running_mean, running_var, train)
    dtype = _statistics_dtype(input, weight, running_mean, running_var, save_mean, save_invstd)
    channels = (input.shape[1],)
    return (MetaArray(input.shape, input.dtype) if output_mask[0] else None,
            MetaArray(channels, dtype) if output_mask[1] else None,
            MetaArray(channels, dtype) if output_mask[2] else None)


_BN_STAT = TensorSpec((2,), "float32", 0.5, 2)


@op(function=False, grad=_native_batch_norm_backward_grad, meta=rule(_native_batch_norm_backward_meta),
    differentiable=_native_batch_norm_backward_differentiable,
    schema={"output_mask": "bool[3]", "(returns)": "Tensor, Tensor, Tensor"},
    samples=(Sample((_IMAGES, _IMAGES, _CHANNEL, None, None, _CHANNEL, _BN_STAT, True, 1e-5, [True, True, True])),
             Sample((_IMAGES, _IMAGES, _CHANNEL, _CHANNEL, _VARIANCE, _CHANNEL, _BN_STAT, True, 1e-5,
                     [True, False, True])),
             Sample((_IMAGES, _IMAGES, _CHANNEL, _CHANNEL, _VARIANCE, TensorSpec((0,)), TensorSpec((0,)), False,
                     1e-5, [True, True, True])),
             Sample((TensorSpec((4, 3), "float64"), TensorSpec((4, 3), "float64"), None, None, None,
                     TensorSpec((3,), "float64"), TensorSpec((3,), "float64", 0.5, 2), True, 1e-3,
                     [True, False, False])),
             Sample((TensorSpec((4, 3, 2), "float64"), TensorSpec((4, 3, 2), "float64"), TensorSpec((3,), "float64"),
                     TensorSpec((3,), "float64"), TensorSpec((3,), "float64", 0.5, 2), None, None, False, 1e-5,
                     [True, True, False])),
             Sample((TensorSpec((4, 2), "float16"), TensorSpec((4, 2), "float16"), None, None, None,
                     TensorSpec((2,), "float16"), TensorSpec((2,), "float16", 0.5, 2), True, 1e-5,
                     [True, False, False]))),
    errors=(Sample((TensorSpec((3, 2), "int64"), TensorSpec((3, 2), "int64"), None, None, None,
                    TensorSpec((2,), "int64"), TensorSpec((2,), "int64"), True, 1e-5, [True, False, False])),),
    aten="default")
def native_batch_norm_backward(grad_out: Tensor, input: Tensor, weight: Tensor | None, running_mean: Tensor | None,
                               running_var: Tensor | None, save_mean: Tensor | None, save_invstd: Tensor | None,
                               train: bool, eps: float, output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    """The gradients of ``native_batch_norm`` for its input, weight and bias (those
    ``output_mask`` asks for, else None), given the forward's saved statistics (``train``) or the
    running ones: PyTorch's ``aten::native_batch_norm_backward``, in the steps of its CPU kernel
    (per channel: ``sum(dy)`` and ``dot = sum((x - mean) dy)`` accumulated in float64, then
    ``(dy - sum / N - (x - mean) dot invstd**2 / N) invstd w``).

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1.0], [3.0]])
    >>> _, mean, invstd = tm.ops.aten.native_batch_norm.default(x, None, None, None, None, True, 0.1, 0.0)
    >>> tm.ops.aten.native_batch_norm_backward.default(tm.tensor([[1.0], [0.0]]), x, None, None, None, mean, invstd,
    ...                                                True, 0.0, [True, False, False])
    (tensor([[0.],
            [0.]]), None, None)
    """
    _check_batch_norm_backward(input, save_mean, save_invstd, running_mean, running_var, train)
    dtype = _statistics_dtype(input, weight, running_mean, running_var, save_mean, save_invstd)
    x, dy = _working(input, "batch_norm_backward_cpu"), _working(grad_out, "batch_norm_backward_cpu")
    work = x.dtype.type
    shape = (1, -1) + (1,) * (input.ndim - 2)
    axes = (0,) + tuple(range(2, input.ndim))
    count = input.size // max(input.shape[1], 1)
    if train:
        mean = np.asarray(save_mean, dtype=x.dtype).reshape(shape)
        invstd = np.asarray(save_invstd, dtype=x.dtype).reshape(shape)
    else:
        mean = np.asarray(running_mean, dtype=x.dtype).reshape(shape)
        with quiet():
            invstd = (1 / np.sqrt(np.asarray(running_var, np.float64).reshape(shape) + eps)).astype(x.dtype)
    w = (np.ones((1, input.shape[1]) + (1,) * (input.ndim - 2), x.dtype) if weight is None else
         np.asarray(weight, dtype=x.dtype).reshape(shape))
    with quiet():  # infinite or NaN values propagate as in PyTorch's kernel
        planes = (input.shape[0], input.shape[1], -1)
        if x.dtype == np.float32 or x.dtype == np.float64:
            total = _channel_sums(dy.reshape(planes)).reshape(shape)
            dot = _channel_sums(((x - mean) * dy).reshape(planes)).reshape(shape)
        else:
            total = np.add.reduce(dy.astype(np.float64), axis=axes, keepdims=True)
            dot = np.add.reduce(((x - mean) * dy).astype(np.float64), axis=axes, keepdims=True)
        grad_input = grad_weight = grad_bias = None
        if output_mask[0]:
            if train:
                # PyTorch's k = (float) dot * invstd * invstd / N in the input's type; its vector
                # loop contracts dy - grad_mean - (x - mean) * k into one multiply-add
                k = dot.astype(x.dtype) * invstd * invstd / work(count) if count else np.zeros_like(invstd)
                grad_mean = (total / count).astype(x.dtype) if count else np.zeros_like(invstd)
                centred = x - mean
                if x.dtype == np.float32:
                    step = ((dy - grad_mean).astype(np.float64) - centred.astype(np.float64) * k).astype(x.dtype)
                else:
                    step = dy - grad_mean - centred * k
                grad_input = step * invstd * w
            else:
                grad_input = dy * invstd * w
            grad_input = np.asarray(grad_input, dtype=input.dtype)
        if output_mask[1]:
            grad_weight = np.asarray((dot * invstd).reshape(-1).astype(work), dtype=dtype)
        if output_mask[2]:
            grad_bias = np.asarray(total.reshape(-1).astype(work), dtype=dtype)
    return grad_input, grad_weight, grad_bias


# -- rms_norm --------------------------------------------------------------------------------------

def _rms_norm_types(input, weight) -> tuple[np.dtype, np.dtype]:
    """The dtype ``rms_norm`` computes in (float32 for the half types) and the dtype of its product
    with ``weight`` before the cast back to ``input``'s dtype, after PyTorch's dtype check."""
    if input.dtype.kind not in "fc" and input.dtype not in HALF_TYPES:
        raise not_implemented("rms_norm", dtype_of(input))
    work = np.dtype(np.float32) if input.dtype in HALF_TYPES else input.dtype
    if weight is None:
        return work, work
    return work, np.dtype(dt.promote_types(dt.NP_TO_DTYPE[work], dtype_of(weight))._np)


def _rms_norm_axes(input, normalized_shape, weight) -> tuple[int, ...]:
    """``_layer_norm_axes``, a 0-dim input refused (PyTorch's ValueError) after the checks of
    ``normalized_shape`` and the weight (those of an input of that shape)."""
    if input.ndim == 0 and len(normalized_shape):
        _layer_norm_axes(MetaArray(tuple(normalized_shape), input.dtype), normalized_shape, weight, batch="*")
        raise ValueError("Input tensor must have at least 1 dimensions, but got 0")
    return _layer_norm_axes(input, normalized_shape, weight, batch="*")


def _rms_norm_meta(input, normalized_shape, weight=None, eps=None):
    _rms_norm_axes(input, normalized_shape, weight)
    _rms_norm_types(input, weight)
    return MetaArray(input.shape, input.dtype)


def _rms_norm_node(input, normalized_shape, weight=None, eps=None) -> str:
    """PyTorch's composite ends with ``type_as(input)``, a recorded cast (``ToCopyBackward0``)
    when the product's dtype is not the input's; otherwise with a product (``MulBackward0``)."""
    work, product = _rms_norm_types(np.ones(0, input.dtype._np),
                                    None if weight is None else np.ones(0, weight.dtype._np))
    return "mul" if product == input.dtype._np else "_to_copy"


def _rms_norm_eps(eps, work: np.dtype) -> float:
    # PyTorch's default is the machine epsilon of the type it computes in.
    return float(np.finfo(work).eps) if eps is None else eps


def _rms_norm_grad(grad, input, normalized_shape, weight, eps, needs_input_grad):
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    x, g = _working_tensor(input), _working_tensor(grad)
    eps = _rms_norm_eps(eps, np.dtype(x.dtype.to_real()._np))
    rstd = ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    gw = g if weight is None else g * conjugate(weight)
    grad_input = grad_weight = None
    if needs_input_grad[0]:
        # y = x r w with r = (mean(x^2) + eps)^(-1/2): dr/dx = -r^3 x / N (conjugated for complex x).
        grad_input = (gw * conjugate(rstd)
                      - conjugate(rstd * rstd * rstd * x) * (gw * conjugate(x)).mean(dims, keepdim=True))
    if weight is not None and needs_input_grad[1]:
        # a complex weight of a real input: PyTorch's gradient reaches the product as complex (its
        # cast back), so a NaN there is NaN in both parts
        complex_g = g.to(dt.promote_types(g.dtype, weight.dtype)) if weight.is_complex() else g
        grad_weight = complex_g * conjugate(x * rstd)
    return grad_input, grad_weight


@op(grad=_rms_norm_grad, node=_rms_norm_node, meta=rule(_rms_norm_meta),
    errors=(Sample((TensorSpec((2, 3)), [2])), Sample((TensorSpec((2, 3), "int64"), [3])),
            Sample((TensorSpec((2, 3)), [3], TensorSpec((2,)))), Sample((TensorSpec((2, 3)), []))),
    samples=(Sample((TensorSpec((2, 3, 4)), [4], TensorSpec((4,)))),
             Sample((TensorSpec((2, 3, 4), "float64"), [3, 4]), {"eps": 1e-3}),
             Sample((TensorSpec((3, 4)), [4], TensorSpec((4,), "float64"))),
             Sample((TensorSpec((5,)), (5,), None, 0.0)),
             Sample((TensorSpec((2, 4), "float16"), [4], TensorSpec((4,), "float16"))),
             Sample((TensorSpec((2, 4), "bfloat16"), [4])),
             Sample((TensorSpec((0, 3)), [3])),
             Sample((TensorSpec((2, 3), "complex64"), [3], TensorSpec((3,), "complex64")))),
    schema={"input": "Tensor input", "normalized_shape": "SymInt[]"})
def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` dimensions:
    ``x / sqrt(mean(x**2) + eps)``, times ``weight``; ``eps`` defaults to the machine epsilon of
    the type computed in (float32 for the half types), and the result has ``input``'s dtype.

    >>> import tensormodes as tm
    >>> tm.rms_norm(tm.tensor([[3.0, 4.0]]), [2], eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    axes = _rms_norm_axes(input, normalized_shape, weight)
    work, product = _rms_norm_types(input, weight)
    x = input.astype(work)
    with quiet():  # a zero row with eps=0 is 0/0: NaN, as PyTorch gives
        rstd = 1 / np.sqrt((x * x).mean(axis=axes, keepdims=True) + work.type(_rms_norm_eps(eps, x.real.dtype)))
        result = x * rstd.astype(work)
        if weight is not None:
            result = result.astype(product) * weight.astype(product)
    return np.asarray(result, dtype=input.dtype)
