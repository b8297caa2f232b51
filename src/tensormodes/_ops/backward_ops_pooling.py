"""PyTorch's backward ops of adaptive pooling: ``_adaptive_avg_pool2d_backward`` and
``adaptive_max_pool2d_backward`` (``avg_pool2d_backward`` and ``max_pool2d_with_indices_backward``
sit in ``pooling.py`` beside their forward ops).

Neither is a public function (``function=False``): the forward ops' gradient formulas (and, through
PyTorch's composites, those of the 1-D poolings) call them as ``tensormodes.ops.aten.<name>.default``,
so a ``TorchDispatchMode`` sees during backward the op PyTorch's formula calls. Each kernel computes
the composition the formula used before, step by step with the same kernels (so gradients keep
their values bit for bit); each op's own gradient (double backward) is PyTorch's: the forward
pooling again for the output gradient, zeros for the input.

>>> import tensormodes as tm
>>> tm.ops.aten._adaptive_avg_pool2d_backward.default(tm.tensor([[[4.0]]]), tm.zeros(1, 2, 2))
tensor([[[1., 1.],
         [1., 1.]]])
"""

from __future__ import annotations

import numpy as np

from .._meta_array import MetaArray
from .adaptive_pooling import _adaptive_bounds, _averaging_matrix, _check_adaptive_avg_grad
from .common import HALF_TYPES, ops
from .meta_rules import rule
from .pooling import zeros_as as _zeros_as
from .pooling import zeros_shaped as _zeros_shaped
from .products import matmul as _matmul
from .registry import Sample, Tensor, TensorSpec, op
from .scatter_gather import scatter as _scatter
from .scatter_gather import scatter_add as _scatter_add


def _check_planes(function: str, grad_output, input) -> None:
    if grad_output.ndim != input.ndim or grad_output.shape[:-2] != input.shape[:-2]:
        raise RuntimeError(f"{function}: expected grad_output of {input.ndim} dimensions with the input's "
                           f"leading sizes {list(input.shape[:-2])}, but got {list(grad_output.shape)}")


# -- adaptive average pooling -----------------------------------------------------------------------

def _adaptive_avg_pool2d_backward_grad(grad, grad_output_shape, input_shape, input_dtype, needs_input_grad):
    # Linear in grad_output: its gradient is the forward pooling again; zeros for the input (PyTorch's)
    return (ops._adaptive_avg_pool2d(grad, list(grad_output_shape[-2:])) if needs_input_grad[0] else None,
            _zeros_shaped(input_shape, input_dtype, grad.device) if needs_input_grad[1] else None)


def _adaptive_avg_pool2d_backward_meta(grad_output, input):
    _check_adaptive_avg_grad(grad_output.shape)
    _check_planes("adaptive_avg_pool2d_backward", grad_output, input)
    return MetaArray(input.shape, grad_output.dtype)


@op(function=False, grad=_adaptive_avg_pool2d_backward_grad, meta=rule(_adaptive_avg_pool2d_backward_meta),
    samples=(Sample((TensorSpec((1, 2, 3, 3)), TensorSpec((1, 2, 5, 7)))),
             Sample((TensorSpec((2, 2, 3), "float64"), TensorSpec((2, 5, 4), "float64"))),
             Sample((TensorSpec((1, 1, 4, 4), "float64"), TensorSpec((1, 1, 3, 6), "float64")))),
    errors=(Sample((TensorSpec((1, 0, 3, 3)), TensorSpec((1, 0, 5, 7)))),),
    schema={"input": "Tensor self"}, aten="default", tags=("core",))
def _adaptive_avg_pool2d_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    """The gradient of ``_adaptive_avg_pool2d`` (PyTorch's ``aten::_adaptive_avg_pool2d_backward``,
    which reads only the input's shape): each output's gradient spread evenly over its window,
    as ``rows.mT @ grad_output @ columns`` with the averaging matrices of both dimensions.

    >>> import tensormodes as tm
    >>> tm.ops.aten._adaptive_avg_pool2d_backward.default(tm.tensor([[[2.0, 4.0]]]), tm.zeros(1, 1, 4)).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    _check_adaptive_avg_grad(grad_output.shape)
    _check_planes("adaptive_avg_pool2d_backward", grad_output, input)
    if grad_output.dtype in HALF_TYPES:
        return _half_adaptive_avg_backward(grad_output, input.shape)
    rows = _averaging_matrix(input.shape[-2], grad_output.shape[-2], np.float64).astype(grad_output.dtype)
    columns = _averaging_matrix(input.shape[-1], grad_output.shape[-1], np.float64).astype(grad_output.dtype)
    return np.asarray(_matmul(_matmul(rows.T, grad_output), columns))


def _half_adaptive_avg_backward(grad_output: np.ndarray, input_shape) -> np.ndarray:
    """PyTorch's half-type kernel: each output's share ``grad / kh / kw`` (each division rounded to
    the half type) added over its window in output order, every sum rounded to the half type."""
    dtype = grad_output.dtype
    grad_input = np.zeros(input_shape, dtype)
    row_starts, row_ends = _adaptive_bounds(input_shape[-2], grad_output.shape[-2])
    column_starts, column_ends = _adaptive_bounds(input_shape[-1], grad_output.shape[-1])
    for oh, (top, bottom) in enumerate(zip(row_starts, row_ends)):
        for ow, (left, right) in enumerate(zip(column_starts, column_ends)):
            share = (grad_output[..., oh, ow].astype(np.float32) / np.float32(bottom - top)).astype(dtype)
            share = (share.astype(np.float32) / np.float32(right - left)).astype(dtype).astype(np.float32)
            window = grad_input[..., top:bottom, left:right]
            window[...] = (window.astype(np.float32) + share[..., None, None]).astype(dtype)
    return grad_input


# -- adaptive max pooling ---------------------------------------------------------------------------

def _adaptive_max_pool2d_backward_grad(grad, indices, needs_input_grad):
    # Linear in grad_output: each output reads the gradient at the element its index names; zeros
    # for the input, whose values it never reads (PyTorch's formula)
    planes = grad.flatten(-2)
    grad_grad_output = planes.gather(-1, indices.flatten(-2)).reshape(tuple(indices.shape))
    return grad_grad_output if needs_input_grad[0] else None, _zeros_as(grad) if needs_input_grad[1] else None


def _adaptive_max_pool2d_backward_meta(grad_output, input, indices):
    _check_planes("adaptive_max_pool2d_backward", grad_output, input)
    if indices.shape != grad_output.shape:
        raise RuntimeError(f"expected sizes of indices and grad_output to match, got {list(indices.shape)} and "
                           f"{list(grad_output.shape)}")
    return MetaArray(input.shape, grad_output.dtype)


@op(function=False, grad=_adaptive_max_pool2d_backward_grad, meta=rule(_adaptive_max_pool2d_backward_meta),
    # (overlapping windows: random indices may repeat, and PyTorch adds their gradients)
    samples=(Sample((TensorSpec((1, 2, 2, 3)), TensorSpec((1, 2, 5, 7)), TensorSpec((1, 2, 2, 3), "int64", 0, 34))),
             Sample((TensorSpec((2, 3, 3), "float64"), TensorSpec((2, 5, 5), "float64"),
                     TensorSpec((2, 3, 3), "int64", 0, 24)))),
    errors=(Sample((TensorSpec((1, 2, 2, 3)), TensorSpec((1, 2, 4, 6)), TensorSpec((1, 2, 3, 3), "int64", 0, 24))),),
    schema={"input": "Tensor self"}, aten="default")
def adaptive_max_pool2d_backward(grad_output: Tensor, input: Tensor, indices: Tensor) -> Tensor:
    """The gradient of ``adaptive_max_pool2d`` (PyTorch's ``aten::adaptive_max_pool2d_backward``, which
    reads only the input's shape): each output's gradient given to the element its index names
    (summed where windows overlap, which they do unless each output size divides the input's).

    >>> import tensormodes as tm
    >>> tm.ops.aten.adaptive_max_pool2d_backward.default(tm.tensor([[[2.0, 3.0]]]), tm.zeros(1, 1, 3),
    ...                                                  tm.tensor([[[1, 1]]])).tolist()
    [[[0.0, 5.0, 0.0]]]
    """
    _adaptive_max_pool2d_backward_meta(grad_output, input, indices)
    height, width = input.shape[-2:]
    out_height, out_width = grad_output.shape[-2:]
    overlapping = 0 in (out_height, out_width) or height % out_height or width % out_width
    outputs, elements = out_height * out_width, height * width
    planes = grad_output.reshape(*input.shape[:-2], outputs)
    # One slot more, as the formula this replaces: the same sums in the same order
    flat = np.zeros((*input.shape[:-2], elements + 1), grad_output.dtype)
    positions = indices.reshape(*input.shape[:-2], outputs)
    if overlapping and grad_output.dtype in HALF_TYPES:
        # PyTorch's kernel adds in the half type, output by output, every sum rounded
        rows = flat.reshape(-1, elements + 1)
        for k, (row, where) in enumerate(zip(rows, positions.reshape(-1, outputs))):
            np.add.at(row, where, planes.reshape(-1, outputs)[k])
        return np.ascontiguousarray(flat[..., :elements]).reshape(input.shape)
    flat = (_scatter_add if overlapping else _scatter)(flat, -1, positions, planes)
    return np.ascontiguousarray(flat[..., :elements]).reshape(input.shape)
