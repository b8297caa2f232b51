"""The out-of-place writes into a view: ``slice_scatter``, ``select_scatter`` and
``diagonal_scatter`` — a copy of ``input`` whose slice (selected index, diagonal) holds ``src``
(cast to ``input``'s dtype), as functionalisation spells ``x[...] = src``.

>>> import tensormodes as tm
>>> tm.slice_scatter(tm.zeros(2, 4), tm.ones(2, 2), 1, start=0, step=2)
tensor([[1., 0., 1., 0.],
        [1., 0., 1., 0.]])
"""

from __future__ import annotations

import numpy as np

from .._meta_array import MetaArray
from .common import no_complex_autograd, ops, recordable, wrap_dim, writes_into_input
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op


def _check_src(src, view_shape) -> None:
    if tuple(src.shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view_shape)}")


def _written(input, src, index) -> np.ndarray:
    """A copy of ``input`` with ``src`` (cast to its dtype) written at ``index``."""
    result = input.copy()
    result[index] = src.astype(input.dtype, copy=False)
    return result


def _real_written(name: str):
    """A ``differentiable=`` check: PyTorch refuses a complex result of ``name`` under autograd, and
    (its autograd) a floating ``src`` written into an integer or bool input."""
    no_complex = no_complex_autograd(name)

    def real_written(input, *arguments) -> bool:
        return no_complex(input) and recordable(input.dtype)

    return real_written


def _zeros(shape, like):
    return ops.zeros(shape, dtype=like.dtype, device=like.device)


# -- slice_scatter --------------------------------------------------------------------------------------

def _slice_index(input, dim, start, end, step) -> tuple:
    """The index of the slice (PyTorch's checks first), and the slice's shape."""
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    piece = slice(start, end, step)
    shape = list(input.shape)
    shape[dim] = len(range(input.shape[dim])[piece])
    return (slice(None),) * dim + (piece,), shape


def _slice_scatter_meta(input, src, dim=0, start=None, end=None, step=1):
    _check_src(src, _slice_index(input, dim, start, end, step)[1])
    return MetaArray(input.shape, input.dtype)


def _slice_scatter_grad(grad, src_shape, src_dtype, dim, start, end, step, needs_input_grad):
    index = (slice(None),) * (dim % grad.dim()) + (slice(start, end, step),)
    grad_input = ops.slice_scatter(grad, _zeros(src_shape, grad), dim, start, end, step) \
        if needs_input_grad[0] else None
    grad_src = grad[index].to(src_dtype) if needs_input_grad[1] else None
    return grad_input, grad_src


_M34 = TensorSpec((3, 4))


@op(method=True, meta=rule(_slice_scatter_meta), grad=_slice_scatter_grad,
    differentiable=_real_written("slice_scatter"),
    samples=(Sample((_M34, TensorSpec((3, 2)), 1, 0, 4, 2)), Sample((_M34, TensorSpec((2, 4))), {"start": -2}),
             Sample((TensorSpec((3, 4), "float64"), TensorSpec((1, 4), "float64"), 0, 1, 2)),
             Sample((TensorSpec((2, 3), "float32"), TensorSpec((2, 1), "int64"), -1, 2)),
             Sample((_M34, TensorSpec((3, 0)), 1, 3, 1))),
    errors=(Sample((_M34, TensorSpec((3, 3)), 1, 0, 4, 2)), Sample((_M34, TensorSpec((3, 2)), 1, 0, 4, 0)),
            Sample((_M34, _M34, 2)), Sample((TensorSpec(()), TensorSpec(())))),
    schema={"start": "SymInt?", "end": "SymInt?", "step": "SymInt"}, tags=("core", "view_copy"))
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    """A copy of ``input`` whose slice ``start:end:step`` along ``dim`` holds ``src``.

    >>> import tensormodes as tm
    >>> tm.slice_scatter(tm.zeros(3), tm.ones(1), start=1, end=2)
    tensor([0., 1., 0.])
    """
    index, shape = _slice_index(input, dim, start, end, step)
    _check_src(src, shape)
    return _written(input, src, index)


# -- select_scatter -------------------------------------------------------------------------------------

def _select_index(input, dim, index) -> tuple:
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {dim}")
    return (slice(None),) * dim + (index % size,), input.shape[:dim] + input.shape[dim + 1:]


def _select_scatter_meta(input, src, dim, index):
    _check_src(src, _select_index(input, dim, index)[1])
    return MetaArray(input.shape, input.dtype)


def _select_scatter_grad(grad, src_shape, src_dtype, dim, index, needs_input_grad):
    grad_input = ops.select_scatter(grad, _zeros(src_shape, grad), dim, index) \
        if needs_input_grad[0] else None
    grad_src = grad.select(dim, index).to(src_dtype) if needs_input_grad[1] else None
    return grad_input, grad_src


@op(method=True, meta=rule(_select_scatter_meta), grad=_select_scatter_grad,
    differentiable=_real_written("select_scatter"),
    samples=(Sample((_M34, TensorSpec((4,)), 0, 1)), Sample((_M34, TensorSpec((3,)), 1, -1)),
             Sample((TensorSpec((2, 3, 2), "float64"), TensorSpec((2, 2), "float64"), 1, 2)),
             Sample((_M34, TensorSpec((4,), "int64"), 0, 2))),
    errors=(Sample((_M34, TensorSpec((3,)), 0, 1)), Sample((_M34, TensorSpec((4,)), 0, 5)),
            Sample((TensorSpec(()), TensorSpec(()), 0, 0))),
    schema={"index": "SymInt"}, tags=("core",))
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` whose ``index``-th entry along ``dim`` holds ``src``.

    >>> import tensormodes as tm
    >>> tm.select_scatter(tm.zeros(2, 2), tm.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    position, shape = _select_index(input, dim, index)
    _check_src(src, shape)
    return _written(input, src, position)


# -- diagonal_scatter -----------------------------------------------------------------------------------

def _diagonal_view(input, offset, dim1, dim2) -> tuple[np.ndarray, list[int]]:
    """Where the diagonal is (an index array per dimension) and the diagonal's shape (its
    entries last, as ``diagonal`` puts them)."""
    first, second = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rows, columns = input.shape[first], input.shape[second]
    length = max(0, min(rows + min(offset, 0), columns - max(offset, 0)))
    rest = [n for d, n in enumerate(input.shape) if d not in (first, second)]
    return (first, second, length), [*rest, length]


def _diagonal_scatter_meta(input, src, offset=0, dim1=0, dim2=1):
    _check_src(src, _diagonal_view(input, offset, dim1, dim2)[1])
    return MetaArray(input.shape, input.dtype)


def _diagonal_scatter_grad(grad, src_shape, src_dtype, offset, dim1, dim2, needs_input_grad):
    grad_input = ops.diagonal_scatter(grad, _zeros(src_shape, grad), offset, dim1, dim2) \
        if needs_input_grad[0] else None
    grad_src = grad.diagonal(offset, dim1, dim2).to(src_dtype) if needs_input_grad[1] else None
    return grad_input, grad_src


@op(method=True, meta=rule(_diagonal_scatter_meta), grad=_diagonal_scatter_grad, differentiable=writes_into_input,
    samples=(Sample((_M34, TensorSpec((3,)))), Sample((_M34, TensorSpec((2,)), 2)),
             Sample((TensorSpec((3, 4), "float64"), TensorSpec((2,), "float64"), -1)),
             Sample((TensorSpec((2, 3, 3), "float64"), TensorSpec((3, 2), "float64"), 0, 0, 2)),
             Sample((_M34, TensorSpec((0,)), 5))),
    errors=(Sample((_M34, TensorSpec((4,)))), Sample((_M34, TensorSpec((3,))), {"dim1": 0, "dim2": 0})))
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A copy of ``input`` whose diagonal (``offset`` above the main one, over ``dim1`` and
    ``dim2``) holds ``src``, shaped as ``input.diagonal(offset, dim1, dim2)``.

    >>> import tensormodes as tm
    >>> tm.diagonal_scatter(tm.zeros(2, 3), tm.ones(2), 1)
    tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    (first, second, length), shape = _diagonal_view(input, offset, dim1, dim2)
    _check_src(src, shape)
    result = input.copy()
    rows = np.arange(length) - min(offset, 0)
    columns = np.arange(length) + max(offset, 0)
    moved = np.moveaxis(result, (first, second), (-2, -1))
    moved[..., rows, columns] = src.astype(input.dtype, copy=False)
    return result
