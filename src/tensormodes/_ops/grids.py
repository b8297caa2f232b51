"""Joins that combine their inputs' elements: ``block_diag``, ``cartesian_prod``,
``combinations`` and ``meshgrid``.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _dtype as dt
from .._meta_array import MetaArray, view_of
from .._tensor_base import TensorBase
from ._samples import M23, M234, SCALAR
from .common import dispatch_listens, one_sequence_as_items, operand_dtype, ops
from .meta_rules import metadata, probe, rule
from .registry import Sample, Tensor, TensorSpec, op
from .shape import _as_tuple, reshaped


def _check_block_diag(tensors) -> None:
    for position, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {position} "
                               f"has {t.ndim} dimensions")


def _block_diag_meta(*tensors):
    _check_block_diag(tensors)
    if not tensors:
        return MetaArray((1, 0), dt.get_default_dtype()._np)
    blocks = [(1, t.size) if t.ndim < 2 else t.shape for t in tensors]
    return MetaArray((sum(b[0] for b in blocks), sum(b[1] for b in blocks)), operand_dtype(*probe(tensors))._np)


def _block_diag_grad(grad, tensors_shape):
    grads, row, column = [], 0, 0
    for shape in tensors_shape:
        rows, columns = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        grads.append(grad[row:row + rows, column:column + columns].reshape(shape))
        row, column = row + rows, column + columns
    return grads


@op(grad=_block_diag_grad, meta=rule(_block_diag_meta), errors=(Sample((M234,)),), samples=(
    Sample((TensorSpec((1, 2)), SCALAR, TensorSpec((2,)))), Sample((TensorSpec((2, 2)), TensorSpec((1, 3)))),
    Sample((TensorSpec((1,), "bool"), TensorSpec((1, 1), "int64"))), Sample((TensorSpec((0, 2)), TensorSpec((1, 1)))),
    Sample(())))
def block_diag(*tensors: Tensor) -> Tensor:
    """A block diagonal matrix of ``tensors`` (0-D and 1-D ones as one row), dtypes promoted.

    >>> import tensormodes as tm
    >>> tm.block_diag(tm.tensor([[1, 2]]), tm.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    _check_block_diag(tensors)
    if not tensors:
        return np.zeros((1, 0), dt.get_default_dtype()._np)
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    result = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), operand_dtype(*tensors)._np)
    row = column = 0
    for b in blocks:
        result[row:row + b.shape[0], column:column + b.shape[1]] = b
        row, column = row + b.shape[0], column + b.shape[1]
    return result


def _check_cartesian_prod(tensors) -> None:
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) > 1 and any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")


def _cartesian_prod_meta(*tensors):
    _check_cartesian_prod(tensors)
    if len(tensors) == 1:
        return MetaArray(tensors[0].shape, tensors[0].dtype)
    return MetaArray((math.prod(t.size for t in tensors), len(tensors)), tensors[0].dtype)


def _cartesian_prod_grad(grad, tensors_shape):
    if len(tensors_shape) == 1:
        return [grad]
    sizes = [shape[0] for shape in tensors_shape]
    grads = []
    for i in range(len(sizes)):
        spread = grad[:, i].reshape(sizes)
        others = [d for d in range(len(sizes)) if d != i]
        if dispatch_listens(grad):  # as PyTorch's composite (meshgrid's expand of a viewed column)
            grads.append(spread.sum(others, keepdim=True).view(-1) if others else spread.view(-1))
        else:
            grads.append(spread.sum(others) if others else spread)
    return grads


@op(grad=_cartesian_prod_grad, meta=rule(_cartesian_prod_meta),
    errors=(Sample((M23,)), Sample((TensorSpec((2,)), TensorSpec((2,), "int64")))), samples=(
    Sample((TensorSpec((2,)), TensorSpec((3,)))), Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"),
                                                        TensorSpec((1,), "int64"))),
    Sample((TensorSpec((3,)),)), Sample((TensorSpec((2,)), TensorSpec((0,))))),
    tags=("maybe_aliasing_or_mutating",))
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-D tensor, as rows (one column per tensor);
    one tensor is returned as it is.

    >>> import tensormodes as tm
    >>> tm.cartesian_prod(tm.tensor([1, 2]), tm.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    _check_cartesian_prod(tensors)
    if len(tensors) == 1:
        return tensors[0].copy()
    grids = np.meshgrid(*tensors, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1)


def _check_combinations(input, r: int) -> None:
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")


def _combinations_count(n: int, r: int, with_replacement: bool) -> int:
    return math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)


def _combinations_meta(input, r=2, with_replacement=False):
    _check_combinations(input, r)
    if r == 0:
        return MetaArray((0,), input.dtype), MetaArray((0,), np.dtype(np.int64))
    shape = (_combinations_count(input.shape[0], r, with_replacement), r)
    return MetaArray(shape, input.dtype), MetaArray(shape, np.dtype(np.int64))


def _combinations_grad(grad, input_shape, indices):
    # Each element's gradient is the sum over the places the combinations copied it to.
    return ops.zeros(input_shape, dtype=grad.dtype, device=grad.device).index_add(
        0, indices.reshape(-1), grad.reshape(-1))


def _combinations_differentiable(input, r=2, with_replacement=False) -> bool:
    return r != 0  # PyTorch returns a new empty tensor for r = 0


def _combinations_decomposition(input, r=2, with_replacement=False):
    """PyTorch's composite ``combinations``: an ``ij`` meshgrid (``view`` / ``expand``) of ``r``
    copies of ``input``, the mask of increasing positions (``arange``'s meshgrid, ``full``, then
    ``lt`` or ``le`` of neighbouring grids into it by ``mul_``), each grid's ``masked_select``,
    ``stack``; ``r=0``: ``empty``."""
    if input.dim() != 1 or type(r) is not int or r < 0 or not isinstance(with_replacement, bool):
        return NotImplemented  # the op raises its errors
    if input.is_meta:
        return NotImplemented  # masked_select's size needs values; the op's meta rule knows it
    # (the factories as ATen's C++ calls them: tensor options, no pin_memory)
    if r == 0:
        return ops.ops.aten.empty.memory_format([0], dtype=input.dtype, device=input.device)
    size = input.shape[0]

    def grids(vector):
        return [vector.view([-1 if j == i else 1 for j in range(r)]).expand([size] * r) for i in range(r)]

    copies = grids(input)
    positions = grids(ops.ops.aten.arange.default(size, dtype=ops.int64, device=input.device))
    mask = ops.ops.aten.full.default([size] * r, True, dtype=ops.bool, device=input.device)
    for before, after in zip(positions, positions[1:]):
        mask.mul_(before <= after if with_replacement else before < after)
    return ops.stack([copy.masked_select(mask) for copy in copies], 1)


@op(grad=_combinations_grad, saves=("indices",), node="stack", meta=rule(_combinations_meta),
    differentiable=_combinations_differentiable, decompose=_combinations_decomposition,
    errors=(Sample((M23,)), Sample((TensorSpec(()),)), Sample((TensorSpec((3,)), -1))), samples=(
    Sample((TensorSpec((4,)),)), Sample((TensorSpec((4,), "int64"), 3)), Sample((TensorSpec((3,)), 1)),
    Sample((TensorSpec((3,), "float64"),), {"r": 2, "with_replacement": True}), Sample((TensorSpec((3,)), 0)),
    Sample((TensorSpec((2,)), 3)), Sample((TensorSpec((2,), "bool"), 4, True)), Sample((TensorSpec((0,)),))),
    schema={"(returns)": "Tensor"})
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of the 1-D ``input``, as rows in
    lexicographic order of positions (Python's ``itertools.combinations``, or
    ``combinations_with_replacement``); ``r=0`` gives an empty vector.

    >>> import tensormodes as tm
    >>> tm.combinations(tm.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    _check_combinations(input, r)
    if r == 0:
        return np.empty((0,), input.dtype), np.empty((0,), np.int64)
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    count = _combinations_count(input.shape[0], r, with_replacement)
    indices = np.fromiter(itertools.chain.from_iterable(choose(range(input.shape[0]), r)), np.int64,
                          count * r).reshape(count, r)
    return input[indices], indices


_MESHGRID_WARNING = "meshgrid: in an upcoming release, it will be required to pass the indexing argument."


def _meshgrid_arguments(tensors: tuple, indexing):
    return one_sequence_as_items(tensors), indexing


def _meshgrid_grad(grad, tensors_shape, indexing):
    # Grid i is input i (1-D, or 0-D: the engine sums the grid's [1] back to []) along one
    # dimension, repeated along the others.
    grads = _as_tuple(grad)
    swap = indexing == "xy" and len(grads) >= 2
    result = []
    for i, g in enumerate(grads):
        if g is None:  # an integer grid
            result.append(None)
            continue
        own = 1 - i if swap and i < 2 else i  # the dimension grid i varies along
        others = [d for d in range(g.dim()) if d != own]
        # As PyTorch's composite (a view of the input, expanded): summed keeping dims, viewed back
        if dispatch_listens(g):  # as PyTorch's composite (a view of the input, expanded)
            shape = tuple(tensors_shape[i])
            result.append(g.sum(others, keepdim=True).view(shape) if others else g.view(shape))
        else:
            result.append(g.sum(others) if others else g)
    return result


def _meshgrid_decomposition(tensors, indexing=None):
    """PyTorch's composite ``meshgrid``: each input ``view``ed to -1 along its own dimension and 1
    along the others, then ``expand``ed to the grid (``"xy"``: the first two inputs swapped before,
    their grids after). Arguments the op rejects or warns about are left to it."""
    tensors = list(tensors)  # the call's tensors, as the op's normalize gives them
    if indexing not in ("ij", "xy") or not tensors or not all(isinstance(t, TensorBase) for t in tensors) or any(
            t.dim() > 1 or t.dtype != tensors[0].dtype for t in tensors):
        return NotImplemented
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    aten = ops.ops.aten
    shape = [t.numel() for t in tensors]
    grids = [aten.expand.default(aten.view.default(t, [-1 if d == i else 1 for d in range(len(tensors))]), shape)
             for i, t in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@op(grad=_meshgrid_grad, normalize=_meshgrid_arguments, meta=metadata, decompose=_meshgrid_decomposition,
    errors=(Sample((M23, M23), {"indexing": "ij"}), Sample((TensorSpec((2,)),), {"indexing": "yx"}),
            Sample((TensorSpec((2,)), TensorSpec((2,), "int64")), {"indexing": "ij"})),
    samples=(Sample(([TensorSpec((2,)), TensorSpec((3,))],), {"indexing": "xy"}),
             Sample((TensorSpec((2,)), TensorSpec((3,))), {"indexing": "ij"}),
             Sample((TensorSpec((2,), "int64"), TensorSpec((3,), "int64"), TensorSpec((4,), "int64")),
             {"indexing": "xy"}),
             Sample((SCALAR, TensorSpec((3,))), {"indexing": "xy"})),
    aten={"meshgrid.default": ("indexing",), "meshgrid.indexing": ("indexing: *str=",)})
def meshgrid(*tensors: Tensor, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D (or 0-D) tensors: with ``indexing="ij"`` result ``i`` varies
    along dimension ``i``; ``"xy"`` swaps the first two dimensions (Cartesian layout). The
    grids share memory with the inputs. Omitting ``indexing`` means ``"ij"`` and warns.

    >>> import tensormodes as tm
    >>> x, y = tm.meshgrid(tm.tensor([1, 2]), tm.tensor([3, 4, 5]), indexing="ij")
    >>> x.tolist(), y.tolist()
    ([[1, 1, 1], [2, 2, 2]], [[3, 4, 5], [3, 4, 5]])
    """
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=3)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of shape "
                               f"{list(t.shape)}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    vectors = [reshaped(t, (t.size,)) for t in tensors]
    swap = indexing == "xy" and len(vectors) >= 2
    if swap:
        vectors[0], vectors[1] = vectors[1], vectors[0]
    shape = tuple(v.shape[0] for v in vectors)
    grids = []
    for i, v in enumerate(vectors):
        strides = [0] * len(shape)
        if type(v) is MetaArray:
            strides[i] = v.elem_strides[0]
            grids.append(view_of(v, shape, tuple(strides)))
            continue
        strides[i] = v.strides[0]
        grids.append(as_strided(v, shape, tuple(strides), writeable=v.flags.writeable))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
