"""Volumetric adaptive pooling and unpooling: ``_adaptive_avg_pool3d`` (behind
``F.adaptive_avg_pool3d``), ``adaptive_max_pool3d`` (behind ``F.adaptive_max_pool3d``) and
``max_unpool3d``, over the last three dimensions of an (N, C, D, H, W) or (C, D, H, W) input, with
PyTorch's backward ops ``_adaptive_avg_pool3d_backward`` and ``adaptive_max_pool3d_backward``.

The windows and kernels are the 2-D ones' (``adaptive_pooling.py``) over one more dimension: the
sums run in PyTorch's order (depth, then rows, then columns), a window's first largest element
(or its last NaN) wins, and indices are flat positions in the volume.

>>> import tensormodes as tm
>>> tm._adaptive_avg_pool3d(tm.arange(8.0).reshape(1, 2, 2, 2), [1, 1, 2]).flatten().tolist()
[3.0, 4.0]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._meta_array import MetaArray
from .adaptive_pooling import (
    _adaptive_bounds,
    _adaptive_maxima,
    _averaged,
    _output_sizes,
    _unpool_gradient,
    _unpooled,
)
from .common import HALF_TYPES, dtype_of, not_implemented, ops
from .meta_rules import rule
from .pooling import check_unpool_operands, zeros_as, zeros_shaped
from .registry import Sample, Tensor, TensorSpec, op


def _check_float(function: str, input) -> None:
    if input.dtype.kind != "f" and input.dtype not in HALF_TYPES:
        raise not_implemented(f"{function}_cpu", dtype_of(input))


# -- adaptive average pooling -----------------------------------------------------------------------

def _adaptive_avg_pool3d_arguments(input, output_size) -> list[int]:
    """``_adaptive_avg_pool3d``'s checks, in PyTorch's order; the output sizes."""
    sizes = _output_sizes("adaptive_avg_pool3d", output_size, 3)
    for dim in range(1, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {dim} being empty")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    if min(sizes) < 0:  # (PyTorch's composite adaptive_avg_pool3d checks this before its kernel runs)
        raise RuntimeError(f"adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{sizes[0]}, {sizes[1]},{sizes[2]}}}")
    _check_float("adaptive_avg_pool3d", input)
    return sizes


def _adaptive_avg_pool3d_meta(input, output_size):
    sizes = _adaptive_avg_pool3d_arguments(input, output_size)
    return MetaArray((*input.shape[:-3], *sizes), input.dtype)


def _adaptive_avg_pool3d_grad(grad, input):
    # One backward op, PyTorch's
    return ops.ops.aten._adaptive_avg_pool3d_backward.default(grad, input)


@op(meta=rule(_adaptive_avg_pool3d_meta), grad=_adaptive_avg_pool3d_grad,
    errors=(Sample((TensorSpec((1, 2, 4, 4, 4)), (2, 2))), Sample((TensorSpec((4, 4, 4)), 2)),
            Sample((TensorSpec((1, 0, 2, 2, 2)), 2)), Sample((TensorSpec((2, 2, 2, 2), "int64"), 1))),
    samples=(Sample((TensorSpec((1, 2, 5, 7, 3)), 3)),
             Sample((TensorSpec((2, 5, 4, 3), "float64"), [2, 3, 1])),
             Sample((TensorSpec((1, 1, 3, 2, 6), "float64"), (4, 3, 4))),
             Sample((TensorSpec((0, 2, 3, 3, 3)), 2)),
             Sample((TensorSpec((1, 3, 4, 2, 4), "bfloat16"), [2, 1, 3]))),
    schema={"output_size": "SymInt[3]"}, tags=("core",))
def _adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """3D adaptive average pooling (ATen's op behind ``F.adaptive_avg_pool3d``): an ``output_size``
    grid of averages of windows spread evenly over the last three dimensions.

    >>> import tensormodes as tm
    >>> tm._adaptive_avg_pool3d(tm.arange(8.0).reshape(1, 2, 2, 2), 1).flatten().tolist()
    [3.5]
    """
    return _averaged(input, _adaptive_avg_pool3d_arguments(input, output_size), rounded=True)


def _adaptive_avg_pool3d_backward_grad(grad, grad_output_shape, input_shape, input_dtype, needs_input_grad):
    # Linear in grad_output: its gradient is the forward pooling again; zeros for the input (PyTorch's)
    return (ops._adaptive_avg_pool3d(grad, list(grad_output_shape[-3:])) if needs_input_grad[0] else None,
            zeros_shaped(input_shape, input_dtype, grad.device) if needs_input_grad[1] else None)


def _adaptive_avg_pool3d_backward_meta(grad_output, input):
    for dim in range(1, grad_output.ndim):
        if grad_output.shape[dim] == 0:
            raise RuntimeError(f"adaptive_avg_pool3d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {list(grad_output.shape)} with "
                               f"dimension {dim} being empty")
    if grad_output.ndim != input.ndim or grad_output.shape[:-3] != input.shape[:-3]:
        raise RuntimeError(f"adaptive_avg_pool3d_backward: expected grad_output of {input.ndim} dimensions with the "
                           f"input's leading sizes {list(input.shape[:-3])}, but got {list(grad_output.shape)}")
    _check_float("adaptive_avg_pool3d_backward", grad_output)
    return MetaArray(input.shape, grad_output.dtype)


@op(function=False, grad=_adaptive_avg_pool3d_backward_grad, meta=rule(_adaptive_avg_pool3d_backward_meta),
    samples=(Sample((TensorSpec((1, 2, 3, 3, 2)), TensorSpec((1, 2, 5, 7, 3)))),
             Sample((TensorSpec((2, 2, 3, 1), "float64"), TensorSpec((2, 5, 4, 3), "float64")))),
    errors=(Sample((TensorSpec((1, 0, 3, 3, 3)), TensorSpec((1, 0, 5, 7, 3)))),),
    schema={"input": "Tensor self"}, aten="default")
def _adaptive_avg_pool3d_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    """The gradient of ``_adaptive_avg_pool3d`` (PyTorch's ``aten::_adaptive_avg_pool3d_backward``,
    which reads only the input's shape): each output's gradient divided by its window's depth,
    height and width, added to every element of the window, output by output as PyTorch's kernel.

    >>> import tensormodes as tm
    >>> tm.ops.aten._adaptive_avg_pool3d_backward.default(tm.tensor([[[[4.0]]]]), tm.zeros(1, 1, 2, 2)).tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    _adaptive_avg_pool3d_backward_meta(grad_output, input)
    half = grad_output.dtype in HALF_TYPES
    work = grad_output.astype(np.float32) if half else grad_output
    grad_input = np.zeros(input.shape, work.dtype)
    bounds = [list(zip(*_adaptive_bounds(size, out))) for size, out in zip(input.shape[-3:], grad_output.shape[-3:])]
    for position in itertools.product(*(range(len(b)) for b in bounds)):
        windows = [b[p] for b, p in zip(bounds, position)]
        share = work[(..., *position)]
        for start, end in windows:  # (each division rounded to the half type, as its kernel's)
            share = share / work.dtype.type(end - start)
            if half:
                share = share.astype(grad_output.dtype).astype(np.float32)
        window = grad_input[(..., *(slice(start, end) for start, end in windows))]
        window += share[..., None, None, None]
        if half:
            window[...] = window.astype(grad_output.dtype)
    return grad_input.astype(grad_output.dtype)


# -- adaptive max pooling ---------------------------------------------------------------------------

def _adaptive_max_pool3d_arguments(input, output_size) -> list[int]:
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    for dim in range(1, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"adaptive_max_pool3d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {dim} being empty")
    sizes = [int(s) for s in ([output_size] * 3 if isinstance(output_size, int) else output_size)]
    if len(sizes) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    if min(sizes) < 0:
        shape = [*input.shape[:-3], *sizes]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {shape}")
    _check_float("adaptive_max_pool3d", input)
    return sizes


def _adaptive_max_pool3d_meta(input, output_size):
    shape = (*input.shape[:-3], *_adaptive_max_pool3d_arguments(input, output_size))
    return MetaArray(shape, input.dtype), MetaArray(shape, np.dtype(np.int64))


def _adaptive_max_pool3d_grad(grad, input, result1):
    # One backward op, PyTorch's (the maxima's gradients spread to their indices)
    return ops.ops.aten.adaptive_max_pool3d_backward.default(grad[0], input, result1)


@op(meta=rule(_adaptive_max_pool3d_meta), name="_adaptive_max_pool3d", grad=_adaptive_max_pool3d_grad,
    errors=(Sample((TensorSpec((4, 4, 4)), 2)), Sample((TensorSpec((1, 2, 4, 4, 4), "int64"), 2)),
            Sample((TensorSpec((1, 2, 4, 4, 4)), (2, 2)))),
    samples=(Sample((TensorSpec((1, 2, 5, 7, 3)), 3)),
             Sample((TensorSpec((2, 5, 4, 3), "float64"), [2, 3, 1])),
             Sample((TensorSpec((1, 1, 3, 2, 6), "float64"), (4, 3, 4))),
             Sample((TensorSpec((0, 2, 3, 3, 3)), 2)),
             Sample((TensorSpec((1, 3, 4, 2, 4), "bfloat16"), [2, 1, 3]))),
    aten="adaptive_max_pool3d.default", schema={"output_size": "int[3]", "(returns)": "Tensor, Tensor"})
def _adaptive_max_pool3d(input: Tensor, output_size) -> tuple:
    """3D adaptive max pooling (``torch._C._nn.adaptive_max_pool3d``, behind ``F.adaptive_max_pool3d``):
    the largest element of each window of an ``output_size`` grid spread evenly over the last three
    dimensions, and its flat position in the volume.

    >>> import tensormodes as tm
    >>> values, indices = tm._adaptive_max_pool3d(tm.tensor([[[[1., 5.], [0., 3.]]]]), (1, 1, 1))
    >>> values.flatten().tolist(), indices.flatten().tolist()
    ([5.0], [1])
    """
    return _adaptive_maxima(input, _adaptive_max_pool3d_arguments(input, output_size))


def _adaptive_max_pool3d_backward_grad(grad, indices, needs_input_grad):
    # Linear in grad_output: each output reads the gradient at the element its index names; zeros
    # for the input, whose values it never reads (PyTorch's max_pool_double_backward)
    grad_grad_output = grad.flatten(-3).gather(-1, indices.flatten(-3)).reshape(tuple(indices.shape))
    return grad_grad_output if needs_input_grad[0] else None, zeros_as(grad) if needs_input_grad[1] else None


def _adaptive_max_pool3d_backward_meta(grad_output, input, indices):
    if indices.shape != grad_output.shape:
        raise RuntimeError(f"expected sizes {list(indices.shape)} for `gradOutput` but got sizes "
                           f"{list(grad_output.shape)}")
    if grad_output.ndim != input.ndim or grad_output.shape[:-3] != input.shape[:-3]:
        raise RuntimeError(f"adaptive_max_pool3d_backward: expected grad_output of {input.ndim} dimensions with the "
                           f"input's leading sizes {list(input.shape[:-3])}, but got {list(grad_output.shape)}")
    _check_float("adaptive_max_pool3d_backward", grad_output)
    return MetaArray(input.shape, grad_output.dtype)


@op(function=False, grad=_adaptive_max_pool3d_backward_grad, meta=rule(_adaptive_max_pool3d_backward_meta),
    # (overlapping windows: random indices may repeat, and PyTorch adds their gradients)
    samples=(Sample((TensorSpec((1, 2, 2, 3, 1)), TensorSpec((1, 2, 5, 7, 2)),
                     TensorSpec((1, 2, 2, 3, 1), "int64", 0, 69))),
             Sample((TensorSpec((2, 3, 3, 2), "float64"), TensorSpec((2, 5, 5, 2), "float64"),
                     TensorSpec((2, 3, 3, 2), "int64", 0, 49)))),
    errors=(Sample((TensorSpec((1, 2, 2, 3, 1)), TensorSpec((1, 2, 4, 6, 1)),
                    TensorSpec((1, 2, 3, 3, 1), "int64", 0, 24))),),
    schema={"input": "Tensor self"}, aten="default")
def adaptive_max_pool3d_backward(grad_output: Tensor, input: Tensor, indices: Tensor) -> Tensor:
    """The gradient of ``adaptive_max_pool3d`` (PyTorch's ``aten::adaptive_max_pool3d_backward``,
    which reads only the input's shape): each output's gradient added to the element its index
    names.

    >>> import tensormodes as tm
    >>> tm.ops.aten.adaptive_max_pool3d_backward.default(tm.tensor([[[[2.0, 3.0]]]]), tm.zeros(1, 1, 1, 3),
    ...                                                  tm.tensor([[[[1, 1]]]])).tolist()
    [[[[0.0, 5.0, 0.0]]]]
    """
    _adaptive_max_pool3d_backward_meta(grad_output, input, indices)
    volume = math.prod(input.shape[-3:])
    outputs = math.prod(grad_output.shape[-3:])
    rows = grad_output.reshape(-1, outputs)
    half = grad_output.dtype in HALF_TYPES
    flat = np.zeros((rows.shape[0], volume), np.float32 if half else grad_output.dtype)
    positions = indices.reshape(-1, outputs)
    for k in range(outputs):  # output by output, as PyTorch's kernel adds (in the half type, rounded)
        np.add.at(flat, (np.arange(rows.shape[0]), positions[:, k]), rows[:, k])
        if half:
            flat = flat.astype(grad_output.dtype).astype(np.float32)
    return flat.astype(grad_output.dtype).reshape(input.shape)


# -- unpooling --------------------------------------------------------------------------------------

def _max_unpool3d_arguments(input, indices, output_size, stride, padding) -> list[int]:
    """``max_unpool3d``'s checks, in PyTorch's order; the output's (depth, height, width)."""
    if indices.dtype != np.int64:
        raise RuntimeError("elements in indices should be type int64")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {input.ndim} "
                           f"dimensions.")
    sizes, steps, pads = ([int(v) for v in values] for values in (output_size, stride, padding))
    for name, values, colon in (("output_size", sizes, ""), ("stride", steps, ":"), ("padding", pads, ":")):
        if len(values) != 3:
            raise RuntimeError(f"There should be exactly three elements (depth, height, width) in {name}, but got"
                               f"{colon} {len(values)} elements.")
    check_unpool_operands(input, indices, 3)
    if min(steps) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {steps}")
    if math.prod((*input.shape[:-3], *sizes)) and input.dtype.kind != "f" and input.dtype not in HALF_TYPES:
        raise not_implemented("max_unpool3d", dtype_of(input))  # (the kernel runs only for an output with elements)
    return sizes


def _max_unpool3d_meta(input, indices, output_size, stride, padding):
    # The kernel's checks but the one of the indices' values (out of range), which needs data.
    sizes = _max_unpool3d_arguments(input, indices, output_size, stride, padding)
    return MetaArray((*input.shape[:-3], *sizes), input.dtype)


def _max_unpool3d_grad(grad, indices, input_shape):
    return _unpool_gradient(grad, indices, input_shape, 3)


# One element per volume: random indices cannot collide (where they do, which value lands is
# PyTorch's implementation's choice, and the finite-difference check of the gradient fails).
@op(meta=rule(_max_unpool3d_meta), name="_max_unpool3d", grad=_max_unpool3d_grad,
    errors=(Sample((TensorSpec((1, 1, 1, 1, 1)), TensorSpec((1, 1, 1, 1, 1), "int32", 0, 3), (2, 2, 2), (2, 2, 2),
                    (0, 0, 0))),
            Sample((TensorSpec((1, 1, 1, 1)), TensorSpec((1, 1, 1, 1), "int64", 0, 3), (2, 2), (2, 2, 2),
                    (0, 0, 0))),
            Sample((TensorSpec((1, 1, 1)), TensorSpec((1, 1, 1), "int64", 0, 3), (2, 2, 2), (2, 2, 2), (0, 0, 0)))),
    samples=(Sample((TensorSpec((1, 2, 1, 1, 1)), TensorSpec((1, 2, 1, 1, 1), "int64", 0, 7), (2, 2, 2), (2, 2, 2),
                     (0, 0, 0))),
             Sample((TensorSpec((3, 1, 1, 1), "float64"), TensorSpec((3, 1, 1, 1), "int64", 0, 29), [2, 3, 5],
                     [2, 3, 5], [0, 0, 0])),
             Sample((TensorSpec((0, 1, 1, 1, 1)), TensorSpec((0, 1, 1, 1, 1), "int64", 0, 7), (2, 2, 2), (2, 2, 2),
                     (0, 0, 0))),
             Sample((TensorSpec((1, 2, 1, 1, 1), "bfloat16"), TensorSpec((1, 2, 1, 1, 1), "int64", 0, 7), (2, 2, 2),
                     (2, 2, 2), (0, 0, 0)))),
    aten="max_unpool3d.default",
    schema={"output_size": "SymInt[3]", "stride": "int[3]", "padding": "int[3]"})
def _max_unpool3d(input: Tensor, indices: Tensor, output_size, stride, padding) -> Tensor:
    """The inverse of ``max_pool3d`` for its ``indices`` (``torch._C._nn.max_unpool3d``, behind
    ``F.max_unpool3d``): a zero volume of ``output_size`` with each input value at its index
    (``stride`` and ``padding`` are only checked).

    >>> import tensormodes as tm
    >>> out = tm._max_unpool3d(tm.tensor([[[[5.0]]]]), tm.tensor([[[[3]]]]), [1, 2, 2], [1, 2, 2], [0, 0, 0])
    >>> out.tolist()
    [[[[0.0, 0.0], [0.0, 5.0]]]]
    """
    return _unpooled(input, indices, _max_unpool3d_arguments(input, indices, output_size, stride, padding))
