"""Padding and upsampling: ``constant_pad_nd``, and the ops ``nn.functional.pad`` and
``interpolate`` run as PyTorch does (``_reflection_pad2d``, ``_replication_pad1d``,
``_upsample_nearest2d``, ``_upsample_bilinear2d``, ``_upsample_bicubic2d`` ...), so they record
PyTorch's backward nodes (``ReflectionPad2DBackward0``, ``UpsampleBilinear2DBackward0`` ...).

The reflecting, replicating and upsampling ops are separable: along each dimension they work,
every output position reads one or two input positions (*taps*), the second with a weight, or
four weighted ones for bicubic upsampling. The forward pass gathers the taps with NumPy; the
gradient is PyTorch's backward op of each (``backward_ops_resampling.py``), which adds ``grad``
(times the weight) back at the taps, one dimension at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import HALF_TYPES, dtype_of, not_implemented, ops, quiet
from .creation import checked_fill_value
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

# -- constant padding --------------------------------------------------------------------------


def _check_pad(input, pad) -> list[int]:
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {input.ndim}dimensions.")
    return pad


def _padded_shape(input, pad: list[int]) -> tuple[int, ...]:
    shape = list(input.shape)
    for pair in range(len(pad) // 2):
        dim = input.ndim - 1 - pair
        cropped = shape[dim] + min(pad[2 * pair], 0) + min(pad[2 * pair + 1], 0)
        if cropped < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        shape[dim] = cropped + max(pad[2 * pair], 0) + max(pad[2 * pair + 1], 0)
    return tuple(shape)


def _constant_pad_nd_meta(input, pad, value=0):
    return MetaArray(_padded_shape(input, _check_pad(input, pad)), input.dtype)


def _constant_pad_nd_grad(grad, pad):
    return ops.constant_pad_nd(grad, [-p for p in pad])


@op(grad=_constant_pad_nd_grad, meta=rule(_constant_pad_nd_meta),
    errors=(Sample((TensorSpec((2, 3)), [1])), Sample((TensorSpec((2, 3)), [1, 1, 1, 1, 1, 1])),
            Sample((TensorSpec((2, 3)), [-2, -2]))),
    samples=(Sample((TensorSpec((2, 3)), [1, 2])), Sample((TensorSpec((2, 3, 4), "float64"), [1, 0, -1, 2], 2.5)),
             Sample((TensorSpec((3, 4), "int64", -5, 5), [1, 1]), {"value": 7}),
             Sample((TensorSpec((2, 2), "bool"), [1, 1, 1, 1], True)), Sample((TensorSpec((3,)), [0, 0])),
             Sample((TensorSpec((4, 4), "float16"), [-1, -1, 2, 0]))), schema={"pad": "SymInt[]"}, tags=("core",))
def constant_pad_nd(input: Tensor, pad: Sequence[int], value: Number = 0) -> Tensor:
    """Pads the last ``len(pad) // 2`` dimensions of ``input`` with ``value``; ``pad`` lists
    (before, after) sizes from the last dimension on, and negative sizes crop. What
    ``nn.functional.pad`` runs in its constant mode.

    >>> import tensormodes as tm
    >>> tm.constant_pad_nd(tm.tensor([[1, 2]]), [1, 2], 9)
    tensor([[9, 1, 2, 9, 9]])
    """
    pad = _check_pad(input, pad)
    result = np.empty(_padded_shape(input, pad), input.dtype)
    result.fill(checked_fill_value(value, dtype_of(input), result.size == 1))
    source, target = [slice(None)] * input.ndim, [slice(None)] * input.ndim
    for pair in range(len(pad) // 2):
        dim = input.ndim - 1 - pair
        before, after = pad[2 * pair], pad[2 * pair + 1]
        source[dim] = slice(max(-before, 0), input.shape[dim] - max(-after, 0))
        target[dim] = slice(max(before, 0), result.shape[dim] - max(after, 0))
    result[tuple(target)] = input[tuple(source)]
    return result


# -- separable resampling: taps along each dimension ---------------------------------------------

def _gather(input: np.ndarray, plan) -> np.ndarray:
    """``input`` resampled by ``plan``: (dim, low, high, weight) steps, where ``high`` and
    ``weight`` are None for a plain gather; weights are cast to the input's dtype. A 2-D ``low``
    (outputs, taps) holds several taps per output, with ``weight`` of the same shape."""
    if plan and plan[0][1].ndim == 2:
        return _gather_taps(input, plan)
    result = input
    for dim, low, high, weight in plan:
        taken = np.take(result, low, axis=dim)
        if high is not None:
            shape = [1] * result.ndim
            shape[dim] = len(low)
            w = weight.reshape(shape)
            with quiet():  # inf * 0 is NaN without a word, as in PyTorch
                taken = taken * (1 - w).astype(input.dtype) + np.take(result, high, axis=dim) * w.astype(input.dtype)
        result = taken
    return result


def _gather_taps(input: np.ndarray, plan) -> np.ndarray:
    """``_gather`` of several weighted taps per output: summed in float32 (float64 for float64
    input) and rounded once, as PyTorch's kernels accumulate half-precision input; the weights
    are first rounded to the input's dtype, as PyTorch stores them (except float64 weights of
    half-type input, which its bilinear kernel keeps in float32)."""
    work = np.float64 if input.dtype == np.float64 else np.float32
    result = input.astype(work)
    # The last dimension first: PyTorch's kernel nests the sums, the innermost over the last
    # dimension (which decides the rounding where large values cancel)
    for dim, taps, _, weight in reversed(plan):
        shape = [1] * result.ndim
        shape[dim] = len(taps)
        # (float64 weights for half-type input are kept as float32, unrounded: see _upsample_plan)
        keep = weight.dtype == np.float64 and input.dtype in HALF_TYPES
        weights = weight.astype(work) if keep else weight.astype(input.dtype).astype(work)
        total = np.take(result, taps[:, 0], axis=dim) * weights[:, 0].reshape(shape)
        for k in range(1, taps.shape[1]):
            total += np.take(result, taps[:, k], axis=dim) * weights[:, k].reshape(shape)
        result = total
    return result.astype(input.dtype)


# -- reflection and replication padding ----------------------------------------------------------

def _source_index(position: int, size: int, reflect: bool) -> int:
    """The input index output position ``position`` (counted from the input's start, so
    negative before it) copies."""
    if not reflect:
        return min(max(position, 0), size - 1)
    position = abs(position)  # the edge itself is not repeated
    return 2 * (size - 1) - position if position > size - 1 else position


def _pad_plan(name: str, input, padding, spatial: int, reflect: bool):
    padding = [int(p) for p in padding]
    if len(padding) != 2 * spatial:
        raise RuntimeError(f"padding size is expected to be {2 * spatial}, but got: {len(padding)}")
    batched = input.ndim == spatial + 2
    if input.ndim not in (spatial + 1, spatial + 2) or 0 in input.shape[1 if batched else 0:]:
        raise RuntimeError(f"Expected {spatial + 1}D or {spatial + 2}D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: {list(input.shape)}")
    if input.dtype == np.bool_:
        raise not_implemented(name, dtype_of(input))
    plan = []
    for pair in range(spatial):
        dim = input.ndim - 1 - pair
        before, after = padding[2 * pair], padding[2 * pair + 1]
        size = input.shape[dim]
        if reflect and not (before < size and after < size):
            raise RuntimeError(f"Argument #{2 * spatial + 2}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
                               f"{list(input.shape)}")
        if size + before + after <= 0:
            raise RuntimeError(f"input (size {size}) is too small; calculated output size is {size + before + after}")
        index = np.array([_source_index(p, size, reflect) for p in range(-before, size + after)], dtype=np.int64)
        plan.append((dim, index, None, None))
    return plan


# The padding ops' backward ops (backward_ops_resampling.py, which imports this module), looked up when a
# formula runs
_PAD_BACKWARD = {
    "reflection_pad1d": lambda: ops.ops.aten.reflection_pad1d_backward.default,
    "reflection_pad2d": lambda: ops.ops.aten.reflection_pad2d_backward.default,
    "reflection_pad3d": lambda: ops.ops.aten.reflection_pad3d_backward.default,
    "replication_pad1d": lambda: ops.ops.aten.replication_pad1d_backward.default,
    "replication_pad2d": lambda: ops.ops.aten.replication_pad2d_backward.default,
    "replication_pad3d": lambda: ops.ops.aten.replication_pad3d_backward.default,
}


def _pad_op(name: str, spatial: int, reflect: bool):
    """The kernel, meta rule and gradient of one of the six reflection / replication ops."""
    def kernel(input, padding):
        return _gather(input, _pad_plan(name, input, padding, spatial, reflect))

    def meta(input, padding):
        shape = list(input.shape)
        for dim, index, _, _ in _pad_plan(name, input, padding, spatial, reflect):
            shape[dim] = len(index)
        return MetaArray(tuple(shape), input.dtype)

    def grad_formula(grad, input, padding):
        # One backward op, PyTorch's (grad added back where each output copied from)
        return _PAD_BACKWARD[name]()(grad, input, padding)

    meta.__name__ = f"_{name}_meta"
    grad_formula.__name__ = f"_{name}_grad"
    return kernel, rule(meta), grad_formula


def _pad_samples(spatial: int, reflect: bool) -> tuple[Sample, ...]:
    batched = (2, 3) + (4,) * spatial
    pads = [1, 2] * spatial
    cropping = [-1, 2] + [1, 0] * (spatial - 1)
    return (Sample((TensorSpec(batched), pads)), Sample((TensorSpec(batched[1:], "float64"), cropping)),
            Sample((TensorSpec(batched, "int64", -5, 5), [0, 1] * spatial)),
            Sample((TensorSpec(batched[1:], "float16"), pads)))


def _pad_errors(spatial: int) -> tuple[Sample, ...]:
    return (Sample((TensorSpec((2,) * spatial), [1, 1] * spatial)), Sample((TensorSpec((1, 2) + (3,) * spatial), [1])),
            Sample((TensorSpec((1, 2) + (3,) * spatial), [3, 1] * spatial)))


_kernel, _meta_rule, _grad = _pad_op("reflection_pad1d", 1, True)


@op(grad=_grad, meta=_meta_rule, samples=_pad_samples(1, True), errors=_pad_errors(1),
    aten="reflection_pad1d.default",
    schema={"padding": "SymInt[2]"}, tags=("core",))
def _reflection_pad1d(input: Tensor, padding: Sequence[int]) -> Tensor:
    """``input`` (C, W) or (N, C, W) padded with its reflection at the edges (the edge not
    repeated); negative sizes crop: ``nn.functional.pad(mode="reflect")``'s op (node
    ``ReflectionPad1DBackward0``).

    >>> import tensormodes as tm
    >>> tm._reflection_pad1d(tm.tensor([[1, 2, 3]]), [2, 1])
    tensor([[3, 2, 1, 2, 3, 2]])
    """
    return _kernel(input, padding)


_kernel2, _meta_rule, _grad = _pad_op("reflection_pad2d", 2, True)


@op(grad=_grad, meta=_meta_rule, samples=_pad_samples(2, True), errors=_pad_errors(2),
    aten="reflection_pad2d.default",
    schema={"padding": "SymInt[4]"}, tags=("core",))
def _reflection_pad2d(input: Tensor, padding: Sequence[int]) -> Tensor:
    """``_reflection_pad1d`` over the last two dimensions (node ``ReflectionPad2DBackward0``).

    >>> import tensormodes as tm
    >>> tm._reflection_pad2d(tm.tensor([[[1, 2], [3, 4]]]), [1, 0, 0, 1]).tolist()
    [[[2, 1, 2], [4, 3, 4], [2, 1, 2]]]
    """
    return _kernel2(input, padding)


_kernel3, _meta_rule, _grad = _pad_op("reflection_pad3d", 3, True)


@op(grad=_grad, meta=_meta_rule, samples=_pad_samples(3, True)[:2], errors=_pad_errors(3),
    aten="reflection_pad3d.default",
    schema={"padding": "SymInt[6]"}, tags=("core",))
def _reflection_pad3d(input: Tensor, padding: Sequence[int]) -> Tensor:
    """``_reflection_pad1d`` over the last three dimensions (node ``ReflectionPad3DBackward0``).

    >>> import tensormodes as tm
    >>> tm._reflection_pad3d(tm.ones(1, 2, 2, 2), [1, 1, 1, 1, 1, 1]).shape
    tensormodes.Size([1, 4, 4, 4])
    """
    return _kernel3(input, padding)


_kernel4, _meta_rule, _grad = _pad_op("replication_pad1d", 1, False)


@op(grad=_grad, meta=_meta_rule, samples=_pad_samples(1, False), errors=_pad_errors(1)[:2],
    aten="replication_pad1d.default",
    schema={"padding": "SymInt[2]"})
def _replication_pad1d(input: Tensor, padding: Sequence[int]) -> Tensor:
    """``input`` (C, W) or (N, C, W) padded with copies of its edges; negative sizes crop:
    ``nn.functional.pad(mode="replicate")``'s op (node ``ReplicationPad1DBackward0``).

    >>> import tensormodes as tm
    >>> tm._replication_pad1d(tm.tensor([[1, 2, 3]]), [2, 1])
    tensor([[1, 1, 1, 2, 3, 3]])
    """
    return _kernel4(input, padding)


_kernel5, _meta_rule, _grad = _pad_op("replication_pad2d", 2, False)


@op(grad=_grad, meta=_meta_rule, samples=_pad_samples(2, False), errors=_pad_errors(2)[:2],
    aten="replication_pad2d.default",
    schema={"padding": "SymInt[4]"}, tags=("core",))
def _replication_pad2d(input: Tensor, padding: Sequence[int]) -> Tensor:
    """``_replication_pad1d`` over the last two dimensions (node ``ReplicationPad2DBackward0``).

    >>> import tensormodes as tm
    >>> tm._replication_pad2d(tm.tensor([[[1, 2], [3, 4]]]), [1, 0, 0, 1]).tolist()
    [[[1, 1, 2], [3, 3, 4], [3, 3, 4]]]
    """
    return _kernel5(input, padding)


_kernel6, _meta_rule, _grad = _pad_op("replication_pad3d", 3, False)


@op(grad=_grad, meta=_meta_rule, samples=_pad_samples(3, False)[:2], errors=_pad_errors(3)[:2],
    aten="replication_pad3d.default",
    schema={"padding": "SymInt[6]"}, tags=("core",))
def _replication_pad3d(input: Tensor, padding: Sequence[int]) -> Tensor:
    """``_replication_pad1d`` over the last three dimensions (node ``ReplicationPad3DBackward0``).

    >>> import tensormodes as tm
    >>> tm._replication_pad3d(tm.ones(1, 2, 2, 2), [1, 0, 0, 0, 0, 1]).shape
    tensormodes.Size([1, 3, 2, 3])
    """
    return _kernel6(input, padding)


# -- upsampling ------------------------------------------------------------------------------------

def _source_scale(size: int, out: int, factor, align_corners: bool, work):
    """PyTorch's step from an output position to its source position along one dimension."""
    if align_corners:
        return work((size - 1) / (out - 1)) if out > 1 else work(0)
    return work(1.0 / factor) if factor is not None and factor > 0 else work(size / out)


def _nearest_index(size: int, out: int, factor, shortcuts: bool) -> np.ndarray:
    if shortcuts:  # PyTorch's 2-D kernel, whatever the scale factor says (its 1-D one has none)
        if out == size:
            return np.arange(out)
        if out == 2 * size:
            return np.arange(out) // 2
    scale = _source_scale(size, out, factor, False, np.float32)
    # floorf(dst * scale) in float32, as PyTorch's nearest kernel computes it
    return np.minimum(np.floor(np.arange(out, dtype=np.float32) * scale).astype(np.int64), size - 1)


def _linear_taps(size: int, out: int, factor, align_corners: bool, dtype: np.dtype):
    work = np.float64 if dtype == np.float64 else np.float32
    if out == size:
        # PyTorch takes each element with weight 1 plus itself with weight 0, whatever the scale
        # factor says: a copy, except that an infinity becomes NaN (inf * 0)
        return np.arange(out), np.arange(out), np.zeros(out, work)
    scale = _source_scale(size, out, factor, align_corners, work)
    positions = np.arange(out, dtype=work)
    if align_corners:
        source = scale * positions
    else:
        # scale * (i + 0.5) - 0.5 with one rounding, as PyTorch's compiled kernel fuses it (a
        # multiply-add: exact in float64 for float32, in extended precision nearly so for float64)
        wide = np.float64 if work == np.float32 else np.longdouble
        source = (wide(scale) * (positions + work(0.5)).astype(wide) - wide(0.5)).astype(work)
        source = np.maximum(source, 0)
    # PyTorch floors the source position as a float32 (floorf), also for float64, and clamps the
    # fraction to [0, 1]: these decide which weights are exactly 0 (inf * 0 is NaN)
    low = np.minimum(np.floor(source.astype(np.float32)).astype(np.int64), size - 1)
    high = low + (low < size - 1)
    return low, high, np.clip(source - low, 0, 1).astype(work)


# A = -0.75: the cubic convolution kernel PyTorch (and OpenCV) interpolate with.
_CUBIC_A = -0.75


def _cubic_taps(size: int, out: int, factor, align_corners: bool, dtype: np.dtype):
    """Four taps per output position (clamped to the input) and their cubic convolution weights,
    computed as PyTorch does: in float32 (float64 for float64 input), the source position not
    clamped at the start, its integer part at most ``size - 1`` and the fraction within [0, 1]."""
    work = np.float64 if dtype == np.float64 else np.float32
    scale = _source_scale(size, out, factor, align_corners, work)
    positions = np.arange(out, dtype=work)
    source = scale * positions if align_corners else scale * (positions + work(0.5)) - work(0.5)
    index = np.minimum(np.floor(source).astype(np.int64), size - 1)
    t = np.clip(source - index.astype(work), work(0), work(1))
    a, one = work(_CUBIC_A), work(1)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + one

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = np.stack([far(t + one), near(t), near(one - t), far(work(2) - t)], axis=1)
    taps = np.clip(index[:, None] + np.arange(-1, 3), 0, size - 1)
    return taps, weights


def _upsample_plan(name: str, input, output_size, spatial: int, scales, align_corners=None, *, cubic: bool = False,
                   backward: bool = False):
    sizes = [int(s) for s in output_size]
    if len(sizes) != spatial:
        raise RuntimeError(f"It is expected output_size equals to {spatial}, but got size {len(sizes)}")
    if input.ndim != spatial + 2:
        raise RuntimeError(f"It is expected input_size equals to {spatial + 2}, but got size {input.ndim}")
    if min(sizes) <= 0 or 0 in input.shape[2:]:
        names = ("D", "H", "W")[-spatial:]
        shown = ", ".join(f"{n}: {size}" for n, size in zip(names, input.shape[2:]))
        wanted = ", ".join(f"{n}: {size}" for n, size in zip(names, sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({shown})"
                           f"{' and' if spatial == 1 else ''} output ({wanted})")
    if input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    if cubic:
        if input.dtype.kind != "f" and input.dtype not in HALF_TYPES:
            raise not_implemented("compute_indices_weights_cubic", dtype_of(input))
        plan = []
        for i, (out, factor) in enumerate(zip(sizes, scales, strict=True)):
            taps, weights = _cubic_taps(input.shape[2 + i], out, factor, align_corners, input.dtype)
            plan.append((2 + i, taps, None, weights))
        return plan
    # bfloat16's NumPy kind is "V"; nearest also takes uint8 (a gather), as PyTorch's kernels do
    # (its linear uint8 kernel, with fixed-point weights, is not modelled: refused)
    if input.dtype.kind != "f" and input.dtype not in HALF_TYPES and (
            input.dtype != np.uint8 or align_corners is not None):
        raise not_implemented(name, dtype_of(input))
    # PyTorch's half-type linear kernels store both weights in the dtype and sum the taps in
    # float32, rounding once: as several weighted taps (_gather_taps)
    as_taps = align_corners is not None and input.dtype in HALF_TYPES
    plan = []
    for i, (out, factor) in enumerate(zip(sizes, scales, strict=True)):
        dim, size = 2 + i, input.shape[2 + i]
        if align_corners is None:
            # (the backward kernels take the shortcuts in every dimension)
            plan.append((dim, _nearest_index(size, out, factor, spatial == 2 or backward), None, None))
        else:
            low, high, weight = _linear_taps(size, out, factor, align_corners, input.dtype)
            if as_taps and spatial == 1:  # the far weight rounded, the near one 1 minus that (rounded too)
                far = weight.astype(input.dtype).astype(np.float32)
                plan.append((dim, np.stack([low, high], axis=1), None, np.stack([1 - far, far], axis=1)))
            elif as_taps:  # the 2-D kernel keeps float32 weights: float64 here marks them not to round
                far = weight.astype(np.float32)
                plan.append((dim, np.stack([low, high], axis=1), None,
                             np.stack([1 - far, far], axis=1).astype(np.float64)))
            else:
                plan.append((dim, low, high, weight))
    return plan


def _upsample_meta(input, plan):
    shape = list(input.shape)
    for dim, index, _, _ in plan:
        shape[dim] = len(index)
    return MetaArray(tuple(shape), input.dtype)


def _probe(shape, dtype) -> MetaArray:
    return MetaArray(tuple(shape), np.dtype(dtype._np if isinstance(dtype, dt.dtype) else dtype))


_IMAGE = TensorSpec((2, 3, 3, 4))
_SIGNAL = TensorSpec((2, 3, 4))


def _upsample_nearest1d_meta(input, output_size, scales=None):
    return _upsample_meta(input, _upsample_plan("upsample_nearest1d", input, output_size, 1, [scales]))


def _upsample_nearest1d_grad(grad, input_shape, output_size, scales):
    # One backward op, PyTorch's
    return ops.ops.aten.upsample_nearest1d_backward.default(
        grad, output_size, list(input_shape), scales)


@op(grad=_upsample_nearest1d_grad, meta=rule(_upsample_nearest1d_meta),
    errors=(Sample((TensorSpec((3, 4)), [8])), Sample((TensorSpec((1, 3, 4), "int64"), [8]))),
    samples=(Sample((_SIGNAL, [8])), Sample((_SIGNAL, [6], 1.5)), Sample((TensorSpec((1, 2, 5), "float64"), [3])),
             Sample((_SIGNAL, [4], 1.0))), aten="upsample_nearest1d.default", schema={"output_size": "SymInt[1]"})
def _upsample_nearest1d(input: Tensor, output_size: Sequence[int], scales: float | None = None) -> Tensor:
    """``input`` (N, C, W) resized to ``output_size`` by copying the nearest earlier sample
    (PyTorch's legacy ``'nearest'``): ``interpolate``'s op (node ``UpsampleNearest1DBackward0``).

    >>> import tensormodes as tm
    >>> tm._upsample_nearest1d(tm.tensor([[[1., 2.]]]), [4])
    tensor([[[1., 1., 2., 2.]]])
    """
    return _gather(input, _upsample_plan("upsample_nearest1d", input, output_size, 1, [scales]))


def _upsample_nearest2d_meta(input, output_size, scales_h=None, scales_w=None):
    return _upsample_meta(input, _upsample_plan("upsample_nearest2d", input, output_size, 2, [scales_h, scales_w]))


def _upsample_nearest2d_grad(grad, input_shape, output_size, scales_h, scales_w):
    # One backward op, PyTorch's
    return ops.ops.aten.upsample_nearest2d_backward.default(
        grad, output_size, list(input_shape), scales_h, scales_w)


@op(grad=_upsample_nearest2d_grad, meta=rule(_upsample_nearest2d_meta),
    errors=(Sample((TensorSpec((3, 3, 4)), [6, 8])), Sample((_IMAGE, [6])),
            Sample((TensorSpec((1, 1, 2, 2), "int64"), [4, 4]))),
    samples=(Sample((_IMAGE, [6, 8])), Sample((_IMAGE, [4, 5], 1.5, 1.25)),
             Sample((TensorSpec((1, 2, 5, 3), "float64"), [2, 7])),
             Sample((TensorSpec((1, 1, 2, 2), "float16"), [4, 3]))),
    aten="upsample_nearest2d.default",
    schema={"output_size": "SymInt[2]"})
def _upsample_nearest2d(input: Tensor, output_size: Sequence[int], scales_h: float | None = None,
                        scales_w: float | None = None) -> Tensor:
    """``_upsample_nearest1d`` over the last two dimensions of (N, C, H, W) input (node
    ``UpsampleNearest2DBackward0``).

    >>> import tensormodes as tm
    >>> tm._upsample_nearest2d(tm.tensor([[[[1., 2.]]]]), [2, 4]).tolist()
    [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]]
    """
    return _gather(input, _upsample_plan("upsample_nearest2d", input, output_size, 2, [scales_h, scales_w]))


def _upsample_linear1d_meta(input, output_size, align_corners, scales=None):
    return _upsample_meta(input, _upsample_plan("upsample_linear1d", input, output_size, 1, [scales],
                                                bool(align_corners)))


def _upsample_linear1d_grad(grad, input_shape, output_size, align_corners, scales):
    # One backward op, PyTorch's
    return ops.ops.aten.upsample_linear1d_backward.default(
        grad, output_size, list(input_shape), align_corners, scales)


@op(grad=_upsample_linear1d_grad, meta=rule(_upsample_linear1d_meta),
    errors=(Sample((TensorSpec((3, 4)), [8], False)), Sample((TensorSpec((1, 3, 4), "int64"), [8], True))),
    samples=(Sample((_SIGNAL, [8], False)), Sample((_SIGNAL, [7], True)), Sample((_SIGNAL, [6], False, 1.5)),
             Sample((TensorSpec((1, 2, 5), "float64"), [3], False)), Sample((_SIGNAL, [4], True))),
    aten="upsample_linear1d.default",
    schema={"output_size": "SymInt[1]"})
def _upsample_linear1d(input: Tensor, output_size: Sequence[int], align_corners: bool,
                       scales: float | None = None) -> Tensor:
    """``input`` (N, C, W) resized to ``output_size`` by linear interpolation, the end samples
    aligned when ``align_corners``: ``interpolate(mode="linear")``'s op (node
    ``UpsampleLinear1DBackward0``).

    >>> import tensormodes as tm
    >>> tm._upsample_linear1d(tm.tensor([[[1., 2.]]]), [3], True)
    tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    return _gather(input, _upsample_plan("upsample_linear1d", input, output_size, 1, [scales], bool(align_corners)))


def _upsample_bilinear2d_meta(input, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample_meta(input, _upsample_plan("upsample_bilinear2d", input, output_size, 2, [scales_h, scales_w],
                                                bool(align_corners)))


def _upsample_bilinear2d_grad(grad, input_shape, output_size, align_corners, scales_h, scales_w):
    # One backward op, PyTorch's
    return ops.ops.aten.upsample_bilinear2d_backward.default(
        grad, output_size, list(input_shape), align_corners, scales_h,
        scales_w)


@op(grad=_upsample_bilinear2d_grad, meta=rule(_upsample_bilinear2d_meta),
    errors=(Sample((TensorSpec((3, 3, 4)), [6, 8], False)), Sample((TensorSpec((1, 1, 2, 2), "int64"), [4, 4], True))),
    samples=(Sample((_IMAGE, [6, 8], False)), Sample((_IMAGE, [5, 7], True)),
             Sample((_IMAGE, [4, 5], False, 1.5, 1.25)),
             Sample((TensorSpec((1, 2, 5, 3), "float64"), [2, 7], False)),
             Sample((TensorSpec((1, 2, 5, 3), "float64"), [3, 3], True))),
    aten="upsample_bilinear2d.default",
    schema={"output_size": "SymInt[2]"})
def _upsample_bilinear2d(input: Tensor, output_size: Sequence[int], align_corners: bool,
                         scales_h: float | None = None, scales_w: float | None = None) -> Tensor:
    """``_upsample_linear1d`` over the last two dimensions of (N, C, H, W) input:
    ``interpolate(mode="bilinear")``'s op (node ``UpsampleBilinear2DBackward0``).

    >>> import tensormodes as tm
    >>> tm._upsample_bilinear2d(tm.tensor([[[[1., 2.]]]]), [1, 3], True)
    tensor([[[[1.0000, 1.5000, 2.0000]]]])
    """
    return _gather(input, _upsample_plan("upsample_bilinear2d", input, output_size, 2, [scales_h, scales_w],
                                         bool(align_corners)))


def _upsample_bicubic2d_meta(input, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample_meta(input, _upsample_plan("upsample_bicubic2d", input, output_size, 2, [scales_h, scales_w],
                                                bool(align_corners), cubic=True))


def _upsample_bicubic2d_grad(grad, input_shape, output_size, align_corners, scales_h, scales_w):
    # One backward op, PyTorch's
    return ops.ops.aten.upsample_bicubic2d_backward.default(
        grad, output_size, list(input_shape), align_corners, scales_h,
        scales_w)


@op(grad=_upsample_bicubic2d_grad, meta=rule(_upsample_bicubic2d_meta),
    errors=(Sample((TensorSpec((3, 3, 4)), [6, 8], False)), Sample((TensorSpec((1, 1, 2, 2), "int64"), [4, 4], True)),
            Sample((TensorSpec((1, 0, 2, 2)), [4, 4], False)), Sample((_IMAGE, [0, 4], False))),
    samples=(Sample((_IMAGE, [6, 8], False)), Sample((_IMAGE, [5, 7], True)),
             Sample((_IMAGE, [4, 5], False, 1.5, 1.25)), Sample((_IMAGE, [2, 2], False)),
             Sample((TensorSpec((1, 2, 5, 3), "float64"), [2, 7], False)),
             Sample((TensorSpec((1, 2, 5, 3), "float64"), [3, 3], True)),
             Sample((TensorSpec((1, 2, 5, 3), "float64"), [1, 1], True)),
             Sample((TensorSpec((0, 2, 3, 3), "float64"), [4, 4], False)),
             Sample((TensorSpec((1, 1, 3, 3), "float16"), [5, 4], False))),
    aten="upsample_bicubic2d.default",
    schema={"output_size": "SymInt[2]"})
def _upsample_bicubic2d(input: Tensor, output_size: Sequence[int], align_corners: bool,
                        scales_h: float | None = None, scales_w: float | None = None) -> Tensor:
    """``input`` (N, C, H, W) resized to ``output_size`` by bicubic convolution (A = -0.75) over
    the four nearest samples along each dimension, the edge samples repeated past the borders:
    ``interpolate(mode="bicubic")``'s op (node ``UpsampleBicubic2DBackward0``).

    >>> import tensormodes as tm
    >>> tm._upsample_bicubic2d(tm.tensor([[[[0., 1., 2.]]]]), [1, 5], True)
    tensor([[[[0.0000, 0.4062, 1.0000, 1.5938, 2.0000]]]])
    """
    return _gather(input, _upsample_plan("upsample_bicubic2d", input, output_size, 2, [scales_h, scales_w],
                                         bool(align_corners), cubic=True))
