"""PyTorch's backward ops of reflection and replication padding and of upsampling:
``reflection_pad{1,2,3}d_backward``, ``replication_pad{1,2,3}d_backward`` and
``upsample_{nearest1d,nearest2d,linear1d,bilinear2d,bicubic2d}_backward``.

None is a public function (``function=False``): the forward ops' gradient formulas
(``resampling.py``) call them as ``tensormodes.ops.aten.<name>.default``, so a
``TorchDispatchMode`` sees during backward the op PyTorch's formula calls. Every kernel adds each
output position's gradient back at the input positions it read (times the weight), one dimension
at a time, with ``index_add``'s kernel: the steps of the composition the formulas ran before, so
gradients keep their values bit for bit. Each op's own gradient (double backward) is PyTorch's:
the forward op applied to the gradient (all are linear in ``grad_output``), zeros for the input.

>>> import tensormodes as tm
>>> tm.ops.aten.reflection_pad1d_backward.default(tm.ones(1, 5), tm.zeros(1, 3), [1, 1])
tensor([[1., 3., 1.]])
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from .._meta_array import MetaArray
from .common import HALF_TYPES, ops
from .meta_rules import rule
from .pooling import zeros_shaped
from .registry import Sample, Tensor, TensorSpec, op
from .resampling import _pad_plan, _probe, _upsample_plan
from .scatter_gather import index_add as _index_add


def _scattered_back(grad: np.ndarray, input_shape, plan) -> np.ndarray:
    """The gradient of a resampling by ``plan`` (``resampling._gather``'s): each output position's
    gradient added back at its taps, the last planned dimension first."""
    if grad.dtype in HALF_TYPES and all(high is None and low.ndim == 1 for _, low, high, _ in plan):
        # a half-type padding: PyTorch's kernel adds each output position's gradient into its input
        # position in output order, every sum rounded to the half type
        taps = {dim: low for dim, low, _, _ in plan}
        axes = [taps.get(d, np.arange(n)) for d, n in enumerate(grad.shape)]
        positions = np.ravel_multi_index(np.meshgrid(*axes, indexing="ij"), tuple(input_shape)).reshape(-1)
        flat = np.zeros(math.prod(input_shape), grad.dtype)
        np.add.at(flat, positions, np.ascontiguousarray(grad).reshape(-1))
        return flat.reshape(tuple(input_shape))
    shapes = [tuple(input_shape)]
    for dim, low, _, _ in plan[:-1]:
        shape = list(shapes[-1])
        shape[dim] = len(low)
        shapes.append(tuple(shape))
    for (dim, low, high, weight), shape in zip(reversed(plan), reversed(shapes), strict=True):
        zeros = np.zeros(shape, grad.dtype)
        view = [1] * grad.ndim
        view[dim] = len(low)
        if low.ndim == 2:  # several weighted taps per output
            for k in range(low.shape[1]):
                w = weight[:, k].reshape(view).astype(grad.dtype)
                zeros = _index_add(zeros, dim, low[:, k], np.asarray(grad * w))
            grad = zeros
        elif high is None:
            grad = _index_add(zeros, dim, low, grad)
        else:
            w = weight.reshape(view).astype(grad.dtype)
            grad = _index_add(_index_add(zeros, dim, low, np.asarray(grad * (1 - w))), dim, high,
                              np.asarray(grad * w))
    return np.asarray(grad)


def _check_grad_shape(name: str, grad_output, expected) -> None:
    if tuple(grad_output.shape) != tuple(expected):
        raise RuntimeError(f"{name}: expected grad_output of size {list(expected)}, but got "
                           f"{list(grad_output.shape)}")


# -- reflection and replication padding -------------------------------------------------------------

def _pad_backward(name: str, spatial: int, reflect: bool):
    """The kernel, meta rule and double backward of a padding's backward op."""
    forward = name.removesuffix("_backward")

    def plan_of(grad_output, input, padding):
        plan = _pad_plan(forward, input, padding, spatial, reflect)
        shape = list(input.shape)
        for dim, index, _, _ in plan:
            shape[dim] = len(index)
        _check_grad_shape(name, grad_output, shape)
        return plan

    def kernel(grad_output, input, padding):
        return _scattered_back(grad_output, input.shape, plan_of(grad_output, input, padding))

    def meta(grad_output, input, padding):
        plan_of(grad_output, input, padding)
        return MetaArray(tuple(input.shape), grad_output.dtype)

    def grad_formula(grad, input_shape, input_dtype, padding, needs_input_grad):
        return (getattr(ops, f"_{forward}")(grad, padding) if needs_input_grad[0] else None,
                zeros_shaped(input_shape, input_dtype, grad.device) if needs_input_grad[1] else None)

    meta.__name__, grad_formula.__name__ = f"_{name}_meta", f"_{name}_grad"
    return kernel, rule(meta), grad_formula


def _pad_backward_samples(spatial: int) -> tuple[Sample, ...]:
    image = (2, 3) + (4,) * spatial
    padded = (2, 3) + (7,) * spatial
    cropped = (3,) + (3,) * (spatial - 1) + (5,)  # the last dimension cropped by 1 and padded by 2, the others cropped
    return (Sample((TensorSpec(padded), TensorSpec(image), [1, 2] * spatial)),
            Sample((TensorSpec(cropped, "float64"), TensorSpec(image[1:], "float64"),
                    [-1, 2] + [0, -1] * (spatial - 1))))


_PAD_SCHEMA = {1: {"input": "Tensor self", "padding": "SymInt[2]"}, 2: {"input": "Tensor self", "padding": "SymInt[4]"},
               3: {"input": "Tensor self", "padding": "SymInt[6]"}}
_PAD_ERRORS = {spatial: (Sample((TensorSpec((2, 3) + (6,) * spatial), TensorSpec((2, 3) + (4,) * spatial),
                                 [1, 2] * spatial)),) for spatial in (1, 2, 3)}

_kernel, _meta, _grad = _pad_backward("reflection_pad1d_backward", 1, True)


@op(function=False, grad=_grad, meta=_meta, samples=_pad_backward_samples(1), errors=_PAD_ERRORS[1],
    schema=_PAD_SCHEMA[1], aten="default")
def reflection_pad1d_backward(grad_output: Tensor, input: Tensor, padding: Sequence[int]) -> Tensor:
    """The gradient of ``reflection_pad1d`` (PyTorch's ``aten::reflection_pad1d_backward``, which
    reads only the input's shape): each output's gradient added at the input element it copies.

    >>> import tensormodes as tm
    >>> tm.ops.aten.reflection_pad1d_backward.default(tm.tensor([[1., 2., 3., 4.]]), tm.zeros(1, 2), [1, 1])
    tensor([[6., 4.]])
    """
    return _kernel(grad_output, input, padding)


_kernel2, _meta, _grad = _pad_backward("reflection_pad2d_backward", 2, True)


@op(function=False, grad=_grad, meta=_meta, samples=_pad_backward_samples(2), errors=_PAD_ERRORS[2],
    schema=_PAD_SCHEMA[2], aten="default")
def reflection_pad2d_backward(grad_output: Tensor, input: Tensor, padding: Sequence[int]) -> Tensor:
    """``reflection_pad1d_backward`` over the last two dimensions (PyTorch's
    ``aten::reflection_pad2d_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.reflection_pad2d_backward.default(tm.ones(1, 2, 3), tm.zeros(1, 2, 2), [1, 0, 0, 0]).tolist()
    [[[1.0, 2.0], [1.0, 2.0]]]
    """
    return _kernel2(grad_output, input, padding)


_kernel3, _meta, _grad = _pad_backward("reflection_pad3d_backward", 3, True)


@op(function=False, grad=_grad, meta=_meta, samples=_pad_backward_samples(3), errors=_PAD_ERRORS[3],
    schema=_PAD_SCHEMA[3], aten="default")
def reflection_pad3d_backward(grad_output: Tensor, input: Tensor, padding: Sequence[int]) -> Tensor:
    """``reflection_pad1d_backward`` over the last three dimensions (PyTorch's
    ``aten::reflection_pad3d_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.reflection_pad3d_backward.default(tm.ones(1, 1, 1, 3), tm.zeros(1, 1, 1, 2),
    ...                                               [1, 0, 0, 0, 0, 0]).tolist()
    [[[[1.0, 2.0]]]]
    """
    return _kernel3(grad_output, input, padding)


_kernel4, _meta, _grad = _pad_backward("replication_pad1d_backward", 1, False)


@op(function=False, grad=_grad, meta=_meta, samples=_pad_backward_samples(1), schema=_PAD_SCHEMA[1], aten="default")
def replication_pad1d_backward(grad_output: Tensor, input: Tensor, padding: Sequence[int]) -> Tensor:
    """The gradient of ``replication_pad1d`` (PyTorch's ``aten::replication_pad1d_backward``, which
    reads only the input's shape): each output's gradient added at the input element it copies.

    >>> import tensormodes as tm
    >>> tm.ops.aten.replication_pad1d_backward.default(tm.tensor([[1., 2., 3., 4.]]), tm.zeros(1, 2), [1, 1])
    tensor([[3., 7.]])
    """
    return _kernel4(grad_output, input, padding)


_kernel5, _meta, _grad = _pad_backward("replication_pad2d_backward", 2, False)


@op(function=False, grad=_grad, meta=_meta, samples=_pad_backward_samples(2), schema=_PAD_SCHEMA[2], aten="default")
def replication_pad2d_backward(grad_output: Tensor, input: Tensor, padding: Sequence[int]) -> Tensor:
    """``replication_pad1d_backward`` over the last two dimensions (PyTorch's
    ``aten::replication_pad2d_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.replication_pad2d_backward.default(tm.ones(1, 2, 3), tm.zeros(1, 2, 2), [1, 0, 0, 0]).tolist()
    [[[2.0, 1.0], [2.0, 1.0]]]
    """
    return _kernel5(grad_output, input, padding)


_kernel6, _meta, _grad = _pad_backward("replication_pad3d_backward", 3, False)


@op(function=False, grad=_grad, meta=_meta, samples=_pad_backward_samples(3), schema=_PAD_SCHEMA[3], aten="default")
def replication_pad3d_backward(grad_output: Tensor, input: Tensor, padding: Sequence[int]) -> Tensor:
    """``replication_pad1d_backward`` over the last three dimensions (PyTorch's
    ``aten::replication_pad3d_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.replication_pad3d_backward.default(tm.ones(1, 1, 1, 3), tm.zeros(1, 1, 1, 2),
    ...                                                [1, 0, 0, 0, 0, 0]).tolist()
    [[[[2.0, 1.0]]]]
    """
    return _kernel6(grad_output, input, padding)


# -- upsampling -------------------------------------------------------------------------------------

def _upsample_backward(name: str, grad_output, output_size, input_size, scales, align_corners=None, *,
                       cubic: bool = False, meta: bool = False):
    """An upsampling's gradient (or, if ``meta``, its MetaArray) for an input of ``input_size``,
    planned for the gradient's dtype (the input's)."""
    spatial = len(scales)
    plan = _upsample_plan(name.removesuffix("_backward"), _probe(input_size, grad_output.dtype), output_size, spatial,
                          scales, align_corners, cubic=cubic, backward=True)
    _check_grad_shape(name, grad_output, (*input_size[:2], *output_size))
    if meta:
        return MetaArray(tuple(input_size), grad_output.dtype)
    if cubic and tuple(grad_output.shape) == tuple(input_size):
        # PyTorch's backward copies the gradient when the sizes agree, even where scale factors
        # made the forward pass resample (size 5 at scale 1.1)
        return grad_output.copy()
    if grad_output.dtype in HALF_TYPES:
        # PyTorch's half-type kernels: float32 weights, each channel summed in a float32 buffer
        plan = _upsample_plan(name.removesuffix("_backward"), _probe(input_size, np.float32), output_size, spatial,
                              scales, align_corners, cubic=cubic, backward=True)
        return _half_upsample_backward(grad_output, input_size, plan, cubic)
    return _scattered_back(grad_output, input_size, plan)


def _half_upsample_backward(grad: np.ndarray, input_size, plan, cubic: bool) -> np.ndarray:
    """A half-type upsampling's gradient as PyTorch's CPU kernels compute it: every output
    position's taps in turn, added into a float32 buffer per channel in output order and rounded
    to the half type once. A weighted tap adds ``weight * grad`` with one rounding (the compiled
    ``acc += w * g`` is a fused multiply-add), the weight the per-dimension weights' product,
    outermost first (bicubic's ``grad * y weight`` times the x weight, its x taps outermost).
    ``plan``: the float32 plan (``_upsample_plan``)."""
    g = grad.astype(np.float32).reshape((-1,) + grad.shape[2:])
    in_shape = tuple(input_size[2:])
    per_dim = []  # per spatial dimension: its taps, each (input index, float32 weight or None) per output
    for _, low, high, weight in plan:
        if weight is None:
            per_dim.append([(low, None)])
        elif high is not None:  # linear: PyTorch's lambda0 = 1 - lambda1, in float32
            per_dim.append([(low, np.float32(1) - weight), (high, weight)])
        else:
            per_dim.append([(low[:, k], weight[:, k]) for k in range(low.shape[1])])
    offsets, factors, terms = [], [], []
    for corner in itertools.product(*(reversed(per_dim) if cubic else per_dim)):
        if cubic:  # taken (x tap, y tap); added as (grad * y weight) * x weight
            corner = corner[::-1]
        grids = np.meshgrid(*[index for index, _ in corner], indexing="ij")
        offsets.append(np.ravel_multi_index(grids, in_shape))
        if corner[0][1] is None:
            factors.append(np.ones_like(g))
            terms.append(g)
            continue
        weights = np.meshgrid(*[weight for _, weight in corner], indexing="ij")
        if cubic:  # a value computed before its call adds: no fused multiply-add
            factors.append(g * weights[0] * weights[1])
            terms.append(np.ones_like(g))
        else:
            product = weights[0]
            for w in weights[1:]:
                product = product * w
            factors.append(np.broadcast_to(product, g.shape))
            terms.append(g)
    slice_size = math.prod(in_shape)
    positions = (np.stack(offsets, axis=-1)[None] + (np.arange(g.shape[0]) * slice_size).reshape(
        (-1,) + (1,) * g.ndim)).reshape(-1)
    buffer = _fused_accumulate(positions, np.stack(factors, axis=-1).reshape(-1),
                               np.stack(terms, axis=-1).reshape(-1), g.shape[0] * slice_size)
    return buffer.astype(grad.dtype).reshape(tuple(input_size))


def _fused_accumulate(positions: np.ndarray, factors: np.ndarray, terms: np.ndarray, size: int) -> np.ndarray:
    """A float32 buffer of ``size`` zeros into which ``factors[i] * terms[i]`` is added at
    ``positions[i]`` in order of ``i``, each as one fused multiply-add (in float64, whose product of
    two float32 values is exact, rounded to float32): the k-th additions into every position at once."""
    order = np.argsort(positions, kind="stable")
    sorted_positions = positions[order]
    starts = np.flatnonzero(np.r_[True, sorted_positions[1:] != sorted_positions[:-1]])
    rank = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
    buffer = np.zeros(size, np.float32)
    for k in range(int(rank.max()) + 1 if rank.size else 0):
        chosen = order[rank == k]
        at = positions[chosen]
        buffer[at] = (factors[chosen].astype(np.float64) * terms[chosen] + buffer[at]).astype(np.float32)
    return buffer


def _upsample_samples(spatial: int, *extra) -> tuple[Sample, ...]:
    small, large = (2, 3) + (3, 4)[-spatial:], (2, 3) + (5, 7)[-spatial:]
    return (Sample((TensorSpec(large), list(large[2:]), list(small), *extra)),
            Sample((TensorSpec(small[:2] + (2,) * spatial, "float64"), [2] * spatial, list(small), *extra)))


def _upsample_nearest1d_backward_grad(grad, output_size, scales):
    return ops._upsample_nearest1d(grad, output_size, scales)


@op(function=False, grad=_upsample_nearest1d_backward_grad,
    meta=rule(lambda grad_output, output_size, input_size, scales=None: _upsample_backward(
        "upsample_nearest1d_backward", grad_output, output_size, input_size, [scales], meta=True)),
    samples=_upsample_samples(1), schema={"output_size": "SymInt[1]", "input_size": "SymInt[3]"}, aten="default")
def upsample_nearest1d_backward(grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int],
                                scales: float | None = None) -> Tensor:
    """The gradient of ``upsample_nearest1d`` (PyTorch's ``aten::upsample_nearest1d_backward``):
    each output's gradient added at the input sample it copies.

    >>> import tensormodes as tm
    >>> tm.ops.aten.upsample_nearest1d_backward.default(tm.ones(1, 1, 4), [4], [1, 1, 2])
    tensor([[[2., 2.]]])
    """
    return _upsample_backward("upsample_nearest1d_backward", grad_output, output_size, input_size, [scales])


def _upsample_nearest2d_backward_grad(grad, output_size, scales_h, scales_w):
    return ops._upsample_nearest2d(grad, output_size, scales_h, scales_w)


@op(function=False, grad=_upsample_nearest2d_backward_grad,
    meta=rule(lambda grad_output, output_size, input_size, scales_h=None, scales_w=None: _upsample_backward(
        "upsample_nearest2d_backward", grad_output, output_size, input_size, [scales_h, scales_w], meta=True)),
    samples=_upsample_samples(2), schema={"output_size": "SymInt[2]", "input_size": "SymInt[4]"}, aten="default")
def upsample_nearest2d_backward(grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int],
                                scales_h: float | None = None, scales_w: float | None = None) -> Tensor:
    """``upsample_nearest1d_backward`` over the last two dimensions (PyTorch's
    ``aten::upsample_nearest2d_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.upsample_nearest2d_backward.default(tm.ones(1, 1, 2, 4), [2, 4], [1, 1, 1, 2]).tolist()
    [[[[4.0, 4.0]]]]
    """
    return _upsample_backward("upsample_nearest2d_backward", grad_output, output_size, input_size,
                              [scales_h, scales_w])


def _upsample_linear1d_backward_grad(grad, output_size, align_corners, scales):
    return ops._upsample_linear1d(grad, output_size, align_corners, scales)


@op(function=False, grad=_upsample_linear1d_backward_grad,
    meta=rule(lambda grad_output, output_size, input_size, align_corners, scales=None: _upsample_backward(
        "upsample_linear1d_backward", grad_output, output_size, input_size, [scales], bool(align_corners),
        meta=True)),
    samples=_upsample_samples(1, False) + _upsample_samples(1, True),
    schema={"output_size": "SymInt[1]", "input_size": "SymInt[3]"}, aten="default")
def upsample_linear1d_backward(grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int],
                               align_corners: bool, scales: float | None = None) -> Tensor:
    """The gradient of ``upsample_linear1d`` (PyTorch's ``aten::upsample_linear1d_backward``): each
    output's gradient shared between the two input samples it interpolates, by their weights.

    >>> import tensormodes as tm
    >>> tm.ops.aten.upsample_linear1d_backward.default(tm.ones(1, 1, 3), [3], [1, 1, 2], True)
    tensor([[[1.5000, 1.5000]]])
    """
    return _upsample_backward("upsample_linear1d_backward", grad_output, output_size, input_size, [scales],
                              bool(align_corners))


def _upsample_bilinear2d_backward_grad(grad, output_size, align_corners, scales_h, scales_w):
    return ops._upsample_bilinear2d(grad, output_size, align_corners, scales_h, scales_w)


@op(function=False, grad=_upsample_bilinear2d_backward_grad,
    meta=rule(lambda grad_output, output_size, input_size, align_corners, scales_h=None, scales_w=None:
              _upsample_backward("upsample_bilinear2d_backward", grad_output, output_size, input_size,
                                 [scales_h, scales_w], bool(align_corners), meta=True)),
    samples=_upsample_samples(2, False) + _upsample_samples(2, True),
    schema={"output_size": "SymInt[2]", "input_size": "SymInt[4]"}, aten="default")
def upsample_bilinear2d_backward(grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int],
                                 align_corners: bool, scales_h: float | None = None,
                                 scales_w: float | None = None) -> Tensor:
    """``upsample_linear1d_backward`` over the last two dimensions (PyTorch's
    ``aten::upsample_bilinear2d_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.upsample_bilinear2d_backward.default(tm.ones(1, 1, 1, 3), [1, 3], [1, 1, 1, 2], True).tolist()
    [[[[1.5, 1.5]]]]
    """
    return _upsample_backward("upsample_bilinear2d_backward", grad_output, output_size, input_size,
                              [scales_h, scales_w], bool(align_corners))


def _upsample_bicubic2d_backward_grad(grad, output_size, align_corners, scales_h, scales_w):
    return ops._upsample_bicubic2d(grad, output_size, align_corners, scales_h, scales_w)


@op(function=False, grad=_upsample_bicubic2d_backward_grad,
    meta=rule(lambda grad_output, output_size, input_size, align_corners, scales_h=None, scales_w=None:
              _upsample_backward("upsample_bicubic2d_backward", grad_output, output_size, input_size,
                                 [scales_h, scales_w], bool(align_corners), cubic=True, meta=True)),
    samples=_upsample_samples(2, False) + _upsample_samples(2, True),
    schema={"output_size": "SymInt[2]", "input_size": "SymInt[4]"}, aten="default")
def upsample_bicubic2d_backward(grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int],
                                align_corners: bool, scales_h: float | None = None,
                                scales_w: float | None = None) -> Tensor:
    """The gradient of ``upsample_bicubic2d`` (PyTorch's ``aten::upsample_bicubic2d_backward``): each
    output's gradient shared among the sixteen input samples it convolves, by their weights (the
    gradient itself where the sizes agree).

    >>> import tensormodes as tm
    >>> tm.ops.aten.upsample_bicubic2d_backward.default(tm.ones(1, 1, 1, 1), [1, 1], [1, 1, 1, 1], False)
    tensor([[[[1.]]]])
    """
    return _upsample_backward("upsample_bicubic2d_backward", grad_output, output_size, input_size,
                              [scales_h, scales_w], bool(align_corners), cubic=True)
