"""PyTorch's backward ops of embedding bags: ``_embedding_bag_backward`` (the weight's gradient) and
``_embedding_bag_per_sample_weights_backward``, which ``_embedding_bag``'s gradient formula
(``pointwise_activation.py``) calls as ``tensormodes.ops.aten.<name>.default`` over the layout its
kernel returns (each index's bag, each bag's size, the maxima's rows), so a ``TorchDispatchMode``
sees during backward the ops PyTorch's formula calls. Neither is a public function, nor has a
gradient of its own (PyTorch's has none either).

>>> import tensormodes as tm
>>> tm.ops.aten._embedding_bag_backward.default(tm.ones(1, 2), tm.tensor([1, 1]), tm.tensor([0]),
...     tm.zeros(2, dtype=tm.int64), tm.tensor([2]), tm.tensor([0]), 2, False, 0, False, None)
tensor([[0., 0.],
        [2., 2.]])
"""

from __future__ import annotations

import numpy as np

from .._meta_array import MetaArray
from .common import HALF_TYPES
from .meta_rules import rule
from .pointwise_activation import _BAG_INDICES, _BAG_WEIGHT
from .registry import Sample, Tensor, TensorSpec, op


def _embedding_bag_backward_meta(grad, indices, offsets, offset2bag, bag_size, maximum_indices, num_weights,
                                 *_):
    return MetaArray((num_weights, grad.shape[1]), grad.dtype)


_BAG_GRAD = TensorSpec((3, 3), "float32")


@op(function=False, aten="default", differentiable=False, meta=rule(_embedding_bag_backward_meta),
    schema={"num_weights": "SymInt", "padding_idx": "int=-1"}, samples=tuple(
        Sample((_BAG_GRAD, _BAG_INDICES, TensorSpec((3,), "int64", 0, 0), TensorSpec((6,), "int64", 0, 2),
                TensorSpec((3,), "int64", 1, 3), TensorSpec((3, 3), "int64", 0, 4), 5, scale, mode, False, None, *pad))
        for scale, mode, pad in ((False, 0, ()), (True, 1, ()), (False, 1, (2,)), (False, 2, ()), (True, 0, (3,)))))
def _embedding_bag_backward(grad: Tensor, indices: Tensor, offsets: Tensor, offset2bag: Tensor, bag_size: Tensor,
                            maximum_indices: Tensor, num_weights: int, scale_grad_by_freq: bool, mode: int,
                            sparse: bool, per_sample_weights: Tensor | None, padding_idx: int = -1) -> Tensor:
    """The gradient of ``_embedding_bag``'s weight (``num_weights`` rows) for output gradient ``grad``:
    each index's row gets its bag's (``offset2bag``) gradient, over the bag's ``bag_size`` for 'mean'
    (``mode`` 1), times its sample weight, over the index's count with ``scale_grad_by_freq``; for
    'max' (2) each bag's gradient goes to the rows in ``maximum_indices``. Dense, also for ``sparse``.

    >>> import tensormodes as tm
    >>> i = tm.tensor([0, 2, 2])
    >>> tm.ops.aten._embedding_bag_backward.default(tm.ones(1, 2), i, tm.tensor([0]), tm.zeros(3, dtype=tm.int64),
    ...     tm.tensor([3]), tm.tensor([0]), 3, False, 1, False, None)
    tensor([[0.3333, 0.3333],
            [0.0000, 0.0000],
            [0.6667, 0.6667]])
    """
    width = grad.shape[1]
    result = np.zeros((num_weights, width), grad.dtype)
    if mode == 2:
        won = maximum_indices >= 0
        np.add.at(result, (maximum_indices[won], np.broadcast_to(np.arange(width), maximum_indices.shape)[won]),
                  grad[won])
        return result
    if indices.size and not offset2bag.size:  # PyTorch's forward leaves it empty on its fast path
        offset2bag = _offset2bag(indices, offsets)
    kept = indices != padding_idx
    scale = np.ones(indices.shape, grad.dtype)
    if mode == 1:
        scale = scale / np.maximum(bag_size[offset2bag], 1).astype(grad.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    if scale_grad_by_freq:  # (counts of the indices taken: not padding_idx)
        scale = scale / np.maximum(np.bincount(indices[kept], minlength=num_weights), 1)[indices].astype(grad.dtype)
    np.add.at(result, indices[kept], grad[offset2bag[kept]] * scale[kept][:, None])
    return result


def _per_sample_weights_backward_meta(grad, weight, indices, *_):
    return MetaArray(indices.shape, grad.dtype)


@op(function=False, aten="default", differentiable=False, meta=rule(_per_sample_weights_backward_meta),
    schema={"padding_idx": "int=-1"}, samples=(
        Sample((_BAG_GRAD, _BAG_WEIGHT, _BAG_INDICES, TensorSpec((3,), "int64", 0, 0), TensorSpec((6,), "int64", 0, 2),
                0)),
        Sample((_BAG_GRAD, _BAG_WEIGHT, _BAG_INDICES, TensorSpec((3,), "int64", 0, 0), TensorSpec((6,), "int64", 0, 2),
                0, 1))))
def _embedding_bag_per_sample_weights_backward(grad: Tensor, weight: Tensor, indices: Tensor, offsets: Tensor,
                                               offset2bag: Tensor, mode: int, padding_idx: int = -1) -> Tensor:
    """The gradient of ``_embedding_bag``'s ``per_sample_weights`` ('sum' bags only): each index's
    weight row dotted with its bag's (``offset2bag``) output gradient, 0 at ``padding_idx``.

    >>> import tensormodes as tm
    >>> tm.ops.aten._embedding_bag_per_sample_weights_backward.default(
    ...     tm.tensor([[1.0, 2.0]]), tm.tensor([[1.0, 1.0], [3.0, 0.0]]), tm.tensor([1, 0]), tm.tensor([0]),
    ...     tm.zeros(2, dtype=tm.int64), 0)
    tensor([3., 3.])
    """
    if mode != 0:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    if indices.size and not offset2bag.size:  # PyTorch's forward leaves it empty on its fast path
        offset2bag = _offset2bag(indices, offsets)
    work = np.float32 if grad.dtype in HALF_TYPES else grad.dtype  # (einsum takes no bfloat16)
    products = np.einsum("ij,ij->i", grad[offset2bag].astype(work), weight[indices].astype(work)).astype(grad.dtype)
    return np.where(indices != padding_idx, products, grad.dtype.type(0))


def _offset2bag(indices: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """ATen's make_offset2bag: each index's bag, from the bags' first positions."""
    starts = np.zeros(indices.size + 1, np.int64)
    np.add.at(starts, offsets, 1)
    starts[0] -= 1
    return np.cumsum(starts)[:indices.size]
