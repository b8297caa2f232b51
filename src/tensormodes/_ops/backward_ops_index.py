"""PyTorch's backward ops of views that pick elements: ``diagonal_backward`` and ``unfold_backward``
(``slice_backward`` and ``select_backward`` are in ``dispatch_forms.py``).

Neither is a public function (``function=False``): the forward ops' gradient formulas
(``views.py``) call them as ``tensormodes.ops.aten.<name>.default``, so a ``TorchDispatchMode``
sees during backward the op PyTorch's formula calls. Each kernel adds every gradient element back
at the flat position its element came from (``index_add``'s kernel over the positions the view
picks), the steps of the composition the formulas ran before, so gradients keep their values bit
for bit; overlapping windows accumulate. Each op's own gradient (double backward) is PyTorch's:
the view of the gradient.

>>> import tensormodes as tm
>>> tm.ops.aten.diagonal_backward.default(tm.tensor([1.0, 2.0]), [2, 2], 0, 0, 1)
tensor([[1., 0.],
        [0., 2.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._meta_array import MetaArray
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op
from .scatter_gather import index_add as _index_add
from .views import _diagonal_dims, diagonal_view
from .views import unfold as _unfold


def _added_back(grad: np.ndarray, shape, picked: np.ndarray) -> np.ndarray:
    """Zeros of ``shape`` with each element of ``grad`` added at the flat position ``picked`` holds
    for it (``shape.gather_back``'s steps)."""
    shape = tuple(int(s) for s in shape)
    flat = np.zeros(math.prod(shape), grad.dtype)
    return np.asarray(_index_add(flat, 0, picked.reshape(-1), grad.reshape(-1))).reshape(shape)


def _positions(shape) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.int64).reshape(tuple(shape))


def _check_picked(name: str, grad_output, picked) -> None:
    if tuple(grad_output.shape) != tuple(picked.shape):
        raise RuntimeError(f"{name}: expected grad_output of size {list(picked.shape)}, but got "
                           f"{list(grad_output.shape)}")


def _diagonal_picked(input_sizes, offset, dim1, dim2):
    positions = _positions(input_sizes)
    d1, d2 = _diagonal_dims(positions.ndim, dim1, dim2)
    return diagonal_view(positions, offset, d1, d2)


def _diagonal_backward_meta(grad_output, input_sizes, offset, dim1, dim2):
    _check_picked("diagonal_backward", grad_output, _diagonal_picked(input_sizes, offset, dim1, dim2))
    return MetaArray(tuple(input_sizes), grad_output.dtype)


def _diagonal_backward_grad(grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


@op(function=False, grad=_diagonal_backward_grad, meta=rule(_diagonal_backward_meta),
    samples=(Sample((TensorSpec((3,)), [3, 4], 0, 0, 1)), Sample((TensorSpec((2,), "float64"), [3, 4], 2, 0, 1)),
             Sample((TensorSpec((3, 2)), [2, 3, 4], -1, -1, 0))),
    errors=(Sample((TensorSpec((4,)), [3, 4], 0, 0, 1)),),
    schema={"input_sizes": "SymInt[]"}, aten="default")
def diagonal_backward(grad_output: Tensor, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int) -> Tensor:
    """The gradient of ``diagonal(input, offset, dim1, dim2)`` for an input of ``input_sizes``
    (PyTorch's ``aten::diagonal_backward``): zeros with ``grad_output`` on that diagonal.

    >>> import tensormodes as tm
    >>> tm.ops.aten.diagonal_backward.default(tm.tensor([5.0]), [2, 2], 1, 0, 1).tolist()
    [[0.0, 5.0], [0.0, 0.0]]
    """
    picked = _diagonal_picked(input_sizes, offset, dim1, dim2)
    _check_picked("diagonal_backward", grad_output, picked)
    return _added_back(grad_output, input_sizes, picked)


def _unfold_picked(input_sizes, dim, size, step):
    return _unfold(_positions(input_sizes), dim, size, step)


def _unfold_backward_meta(grad_in, input_sizes, dim, size, step):
    _check_picked("unfold_backward", grad_in, _unfold_picked(input_sizes, dim, size, step))
    return MetaArray(tuple(input_sizes), grad_in.dtype)


def _unfold_backward_grad(grad, dim, size, step):
    return grad.unfold(dim, size, step)


@op(function=False, grad=_unfold_backward_grad, meta=rule(_unfold_backward_meta),
    samples=(Sample((TensorSpec((2, 2, 2)), [2, 3], 1, 2, 1)),
             Sample((TensorSpec((2, 2, 2), "float64"), [5, 2], 0, 2, 2)),
             Sample((TensorSpec((3, 2)), [4], 0, 2, 1)), Sample((TensorSpec((1,)), [], 0, 1, 1))),
    errors=(Sample((TensorSpec((2, 2, 3)), [2, 3], 1, 2, 1)),),
    schema={"input_sizes": "SymInt[]"}, aten="default")
def unfold_backward(grad_in: Tensor, input_sizes: Sequence[int], dim: int, size: int, step: int) -> Tensor:
    """The gradient of ``input.unfold(dim, size, step)`` for an input of ``input_sizes`` (PyTorch's
    ``aten::unfold_backward``): each window's gradient added back where it was taken from
    (overlapping windows accumulate).

    >>> import tensormodes as tm
    >>> tm.ops.aten.unfold_backward.default(tm.ones(3, 2), [4], 0, 2, 1).tolist()
    [1.0, 2.0, 2.0, 1.0]
    """
    picked = _unfold_picked(input_sizes, dim, size, step)
    _check_picked("unfold_backward", grad_in, picked)
    return _added_back(grad_in, input_sizes, picked)
