"""Joins and splits: ``cat``, ``stack`` and their relatives (``hstack``, ``column_stack``,
...; ``block_diag`` and its kin are in ``grids.py``); ``split``, ``chunk``, ``unbind``,
``tensor_split``, ``narrow`` and ``select`` (views of their input), and ``atleast_*d``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .._tensor_base import TensorBase
from ._samples import I23, M23, M234, SCALAR
from .common import along, array_of, dispatch_listens, is_int, operand_dtype, ops, wrap_dim
from .meta_rules import MetaRule, metadata, probe
from .registry import Sample, Tensor, TensorSpec, alias, op
from .shape import (
    _as_tuple,
    _cat,
    _legacy_empty,
    _wrap_dim_of_tensor,
    int_tuple,
    legacy_type_name,
    reshaped,
    selected,
    sliced,
    value_dependent,
)


def _place(grad, shape, index):
    """Gradient of the view ``input[index]`` of an input of ``shape`` (basic indexing: each
    element once): zeros with ``grad`` written at ``index``."""
    out = grad.new_zeros(tuple(shape))
    out[index] = grad
    return out


def _unsplit(grads: tuple, shape, d: int, points: list[int]):
    """Gradient of a split of an input of ``shape`` at ``points`` along ``d`` (Python slice
    rules: clamped, possibly empty pieces): each piece's gradient written back at its slice.
    Unsorted points (``tensor_split``) make pieces overlap; overlapping ones are added."""
    out = grads[0].new_zeros(tuple(shape))
    size, covered = shape[d], 0
    bounds = [None, *points, None]
    for start, stop, grad in zip(bounds[:-1], bounds[1:], grads, strict=True):
        start, stop, _ = slice(start, stop).indices(size)
        index = along(d, slice(start, stop))
        if start >= covered or start >= stop:
            out[index] = grad
        else:  # overlaps an earlier piece: add (reading ``out`` before writing it would
            # invalidate what the read saved for a higher-order gradient)
            out = out + _place(grad, shape, index)
        covered = max(covered, stop)
    return out


def _unjoin(grad, shapes, d: int, extents: list[int], needs=None, columns: bool = False):
    """Gradient of a join along ``d`` to which the tensor of shape ``shapes[i]`` contributed
    ``extents[i]`` slices: the part of ``grad`` it contributed (a slice of it, as PyTorch's
    formula takes), in its own shape where the input needs a gradient (``needs``: all when None).
    ``columns``: 1-D inputs were made columns (``column_stack``), not ``atleast_*d``."""
    grads, start = [], 0
    size = grad.shape[d]
    for i, (shape, extent) in enumerate(zip(shapes, extents, strict=True)):
        shape = tuple(shape)
        if _legacy_empty(shape):  # a (0,)-shaped tensor took no part: zeros, as PyTorch's formula
            grads.append(ops.zeros(0, dtype=grad.dtype, device=grad.device))
            continue
        if extent == size:  # all of it: still the slice op (indexing would make it an alias)
            piece = ops.ops.aten.slice.Tensor(grad, d, start, start + extent)
        else:
            piece = grad[along(d, slice(start, start + extent))]
        start += extent
        if needs is not None and not needs[i]:
            grads.append(None)  # the reshaping below is the input's own node's work in PyTorch
            continue
        grads.append(piece if piece.shape == shape else _unstretched(piece, shape, columns))
    return grads


def _unstretched(piece, shape: tuple, columns: bool):
    """``piece`` back in ``shape``, undoing the ``atleast_2d`` / ``atleast_3d`` that made the joined
    tensor: size-1 dimensions squeezed out where PyTorch's unsqueezes added them (the trailing one
    of ``atleast_3d``, then the leading one); a reshape where PyTorch's reshapes (0-dimensional
    inputs, ``column_stack``'s columns)."""
    if shape and not columns:
        if piece.dim() == 3:
            piece = piece.squeeze(2)
        if piece.dim() == 2 and len(shape) == 1:
            piece = piece.squeeze(0)
        if piece.shape == shape:
            return piece
    return piece.reshape(shape)


def _cat_grad(grad, tensors_shape, dim):
    d = wrap_dim(dim, grad.dim())
    return _unjoin(grad, tensors_shape, d, [0 if _legacy_empty(s) else s[d] for s in tensors_shape])


# The aliases' kernels name themselves in errors: the rule runs the op's own kernel.
_cat_meta = MetaRule(lambda opdef, args, kwargs: opdef.kernel(*args, **kwargs), "cat")


@op(grad=_cat_grad, out=True, meta=_cat_meta,
    errors=(Sample(([M23, TensorSpec((2, 2))],)), Sample(([M23, TensorSpec((3,))],)), Sample(([SCALAR, SCALAR],)),
            Sample(([M23, M23], 2))),
    samples=(Sample(([M23, M23],)), Sample(([M23, TensorSpec((1, 3), "int64")],)),
             Sample(([M23, TensorSpec((2, 1))], -1)), Sample(([M23, TensorSpec((0,))],), {"dim": 0}),
             Sample(([TensorSpec((2,), "bool"), TensorSpec((3,), "int32")],))), tags=("core",))
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenates tensors along an existing dimension ``dim`` (dtypes promote).

    >>> import tensormodes as tm
    >>> tm.cat([tm.tensor([[1, 2]]), tm.tensor([[3, 4]])]).tolist()
    [[1, 2], [3, 4]]
    >>> tm.cat([tm.tensor([[1, 2]]), tm.tensor([[3, 4]])], dim=1).tolist()
    [[1, 2, 3, 4]]
    """
    return _cat(tensors, dim)


concat = alias("concat", of="cat", kernel=lambda tensors, dim=0: _cat(tensors, dim, "concat"),
               samples=(Sample(([M23, M23], 1)),),
               doc="""Alias of ``cat``.

    >>> import tensormodes as tm
    >>> tm.concat([tm.tensor([1]), tm.tensor([2])]).tolist()
    [1, 2]
    """)
concatenate = alias("concatenate", of="cat", kernel=lambda tensors, dim=0: _cat(tensors, dim, "concatenate"),
                    samples=(Sample(([M23, M23], -1)),),
                    doc="""Alias of ``cat`` (NumPy's name).

    >>> import tensormodes as tm
    >>> tm.concatenate([tm.tensor([1]), tm.tensor([2])]).tolist()
    [1, 2]
    """)


def _stack(arrays: list[np.ndarray], dim: int, op_name: str = "stack") -> np.ndarray:
    if not arrays:
        raise RuntimeError(f"{op_name} expects a non-empty TensorList")
    first = arrays[0]
    axis = wrap_dim(dim, first.ndim + 1)  # before the sizes, as PyTorch checks
    for position, a in enumerate(arrays[1:], start=1):
        if a.shape != first.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 "
                               f"and {list(a.shape)} at entry {position}")
    if any(type(a) is MetaArray for a in arrays):
        return MetaArray((*first.shape[:axis], len(arrays), *first.shape[axis:]), operand_dtype(*probe(arrays))._np)
    dtype = operand_dtype(*arrays)._np
    return np.stack([a.astype(dtype, copy=False) for a in arrays], axis=axis)


def _stack_grad(grad, dim):
    d = wrap_dim(dim, grad.dim())
    if dispatch_listens(grad):  # PyTorch's formula selects each slice; one unbind does it faster
        return [grad.select(d, i) for i in range(grad.shape[d])]
    return grad.unbind(d)


@op(grad=_stack_grad, out=True, meta=metadata,
    errors=(Sample(([M23, TensorSpec((3, 2))],)), Sample(([M23, M23], 3))),
    samples=(Sample(([M23, M23],)), Sample(([M23, M23], -1)), Sample(([SCALAR, SCALAR],)),
             Sample(([TensorSpec((3,), "int32"), TensorSpec((3,), "bool")],), {"dim": 1})))
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Joins tensors of one shape along a new dimension ``dim`` (dtypes promote).

    >>> import tensormodes as tm
    >>> tm.stack([tm.tensor([1, 2]), tm.tensor([3, 4])], dim=1).tolist()
    [[1, 3], [2, 4]]
    """
    return _stack(tensors, dim)


def _at_least_shape(shape: tuple[int, ...], ndim: int) -> tuple[int, ...]:
    """NumPy's ``atleast_1d``/``atleast_2d``/``atleast_3d`` layout, which PyTorch shares:
    ``[n]`` becomes ``[1, n]`` or ``[1, n, 1]``, ``[m, n]`` becomes ``[m, n, 1]``."""
    if len(shape) >= ndim:
        return shape
    if not shape:
        return (1,) * ndim
    if ndim == 2 or len(shape) == 1:
        return (1, *shape, 1)[:ndim]
    return (*shape, 1)


def _at_least(array: np.ndarray, ndim: int) -> np.ndarray:
    return array if array.ndim >= ndim else reshaped(array, _at_least_shape(array.shape, ndim))


def _join_at_least_grad(grad, shapes, ndim: int, d: int, dtypes):
    """Gradient of joining the tensors of ``shapes`` made at least ``ndim``-dimensional along ``d``."""
    extents = [_at_least_shape(tuple(s), ndim) for s in shapes]
    return _unjoin(grad, shapes, d, [0 if _legacy_empty(s) else s[d] for s in extents], _differentiable(dtypes))


def _differentiable(dtypes) -> list[bool]:
    """Which of a list's tensors can have gradients (the others' shaping is skipped: in PyTorch it
    is their own nodes' work, and they have none)."""
    return [d.is_floating_point or d.is_complex for d in dtypes]


def _hstack_grad(grad, tensors_shape, tensors_dtype):
    return _join_at_least_grad(grad, tensors_shape, 1, 0 if len(tensors_shape[0]) <= 1 else 1, tensors_dtype)


@op(grad=_hstack_grad, out=True, meta=metadata, errors=(Sample(([M23, TensorSpec((3,))],)),),
    samples=(Sample(([M23, M23],)), Sample(([TensorSpec((2,)), TensorSpec((3,), "int64")],)),
             Sample(([SCALAR, SCALAR],))))
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors horizontally: along dimension 1, or 0 for 1-dimensional tensors.

    >>> import tensormodes as tm
    >>> tm.hstack([tm.tensor([1, 2]), tm.tensor([3])]).tolist()
    [1, 2, 3]
    """
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    arrays = [_at_least(a, 1) for a in tensors]
    return _cat(arrays, 0 if arrays[0].ndim == 1 else 1, "hstack")


def _vstack_grad(grad, tensors_shape, tensors_dtype):
    return _join_at_least_grad(grad, tensors_shape, 2, 0, tensors_dtype)


@op(grad=_vstack_grad, out=True, meta=metadata, errors=(Sample(([M23, TensorSpec((2,))],)),),
    samples=(Sample(([M23, TensorSpec((3,))],)), Sample(([SCALAR, SCALAR],))))
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors vertically (along dimension 0, after making them at least 2-dimensional).

    >>> import tensormodes as tm
    >>> tm.vstack([tm.tensor([1, 2]), tm.tensor([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _cat([_at_least(a, 2) for a in tensors], 0, "vstack")


def _dstack_grad(grad, tensors_shape, tensors_dtype):
    return _join_at_least_grad(grad, tensors_shape, 3, 2, tensors_dtype)


@op(grad=_dstack_grad, out=True, meta=metadata, errors=(Sample(([M23, TensorSpec((3, 2))],)),),
    samples=(Sample(([M23, M23],)), Sample(([TensorSpec((3,)), TensorSpec((3,), "int32")],)),
             Sample(([SCALAR, SCALAR],))))
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors depthwise (along dimension 2, after making them at least 3-dimensional).

    >>> import tensormodes as tm
    >>> tm.dstack([tm.tensor([1, 2]), tm.tensor([3, 4])]).shape
    tensormodes.Size([1, 2, 2])
    """
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _cat([_at_least(a, 3) for a in tensors], 2, "dstack")


# -- splitting --------------------------------------------------------------------------

def _split_sizes(array: np.ndarray, split_size_or_sections, d: int) -> list[int]:
    size = array.shape[d]
    if is_int(split_size_or_sections):
        split_size = int(split_size_or_sections)
        if split_size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
        if split_size == 0:
            if size != 0:
                raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension size of "
                                   f"{size}")
            return [0]
        count = max(-(-size // split_size), 1)
        return [split_size] * (count - 1) + [size - split_size * (count - 1)]
    sizes = list(int_tuple(split_size_or_sections, "split", "split_size"))
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return sizes


def _pieces(array: np.ndarray, sizes: list[int], d: int) -> tuple[np.ndarray, ...]:
    bounds = list(itertools.accumulate(sizes, initial=0))  # Python ints: np.cumsum of a list costs ~15 us
    return tuple(sliced(array, d, start, stop) for start, stop in zip(bounds[:-1], bounds[1:], strict=True))


def _split(array: np.ndarray, split_size_or_sections, dim: int) -> tuple[np.ndarray, ...]:
    if array.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, array.ndim)
    return _pieces(array, _split_sizes(array, split_size_or_sections, d), d)


def _unsplit_consecutive(grads: tuple, shape, d: int):
    """Gradient of a split into consecutive pieces along ``d`` (their sizes are the gradients'):
    the pieces' gradients joined, as PyTorch's formula does."""
    return ops.cat(grads, d)


def _split_grad(grad, tensor_shape, dim):
    return _unsplit_consecutive(_as_tuple(grad), tensor_shape, wrap_dim(dim, len(tensor_shape)))


@op(grad=_split_grad, view=True, meta=metadata,
    errors=(Sample((TensorSpec((5, 2)), [1, 3])), Sample((TensorSpec((5, 2)), -1)), Sample((SCALAR, 1)),
            Sample((TensorSpec((5, 2)), 0))),
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((TensorSpec((2, 5)), [1, 4], 1)),
             Sample((I23, 2), {"dim": -1}), Sample((TensorSpec((0, 2)), 0))),
    aten={
        "split.Tensor": ("split_size_or_sections: SymInt split_size",),
        "split_with_sizes.default": ("split_size_or_sections: SymInt[] split_sizes", "+core"),
    },
    schema={"tensor": "Tensor self"})
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Splits the tensor into chunks, each a view: of ``split_size_or_sections`` along ``dim``
    (the last may be smaller), or of the listed sizes.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.split(tm.tensor([0, 1, 2, 3, 4]), 2)]
    [[0, 1], [2, 3], [4]]
    >>> [t.tolist() for t in tm.split(tm.tensor([0, 1, 2, 3, 4]), [1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    return _split(tensor, split_size_or_sections, dim)


def _split_method_grad(grad, input_shape, dim):
    return _unsplit_consecutive(_as_tuple(grad), input_shape, wrap_dim(dim, len(input_shape)))


@op(grad=_split_method_grad, function=False, method="split", view=True, meta=metadata,
    errors=(Sample((TensorSpec((5, 2)), [1, -1, 5])), Sample((TensorSpec((5, 2)), 2, 2))),
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((TensorSpec((2, 5)), [1, 4], 1)),
             Sample((I23,), {"split_size": 1, "dim": -1})),
    aten={
        "split.Tensor": ("split_size: SymInt",),
        "split_with_sizes.default": ("split_size: SymInt[] split_sizes", "+core"),
    })
def split_method(input: Tensor, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """``Tensor.split(split_size, dim=0)``: see ``tensormodes.split``.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([0, 1, 2, 3]).split(3)]
    [[0, 1, 2], [3]]
    """
    return _split(input, split_size, dim)


@op(grad=_split_method_grad, method=True, view=True, meta=metadata,
    errors=(Sample((M23, 0)), Sample((SCALAR, 2)), Sample((M23, 2.0))),
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((TensorSpec((6, 2)), 4)), Sample((I23, 3, -1)),
             Sample((TensorSpec((0,)), 2)), Sample((TensorSpec((5, 2)),), {"chunks": 3, "dim": 0})))
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Splits into at most ``chunks`` views of equal size along ``dim`` (the last may be
    smaller, and there may be fewer chunks).

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([0, 1, 2, 3, 4]).chunk(2)]
    [[0, 1, 2], [3, 4]]
    """
    return _chunk(input, chunks, dim, "chunk")


def _chunk(input: np.ndarray, chunks, dim: int, name: str) -> tuple[np.ndarray, ...]:
    if not is_int(chunks):
        raise TypeError(f"{name}(): argument 'chunks' (position 2) must be int, not {type(chunks).__name__}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    split_size = -(-size // chunks)
    if split_size == 0 and size == 0:
        return _pieces(input, [0] * chunks, d)
    return _pieces(input, _split_sizes(input, split_size, d), d)


@op(grad=_split_method_grad, method=True, view=True, meta=metadata,
    errors=(Sample((TensorSpec((5, 2)), [1, 3])), Sample((SCALAR, [1]))),
    samples=(Sample((TensorSpec((5, 2)), [2, 3])), Sample((TensorSpec((2, 5)), [1, 0, 4], 1)),
             Sample((I23, [3]), {"dim": -1})),
    schema={"split_sizes": "SymInt[]"}, tags=("core",))
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Splits ``input`` along ``dim`` into views of the listed sizes (``split`` with a list).

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([0, 1, 2]).split_with_sizes([1, 2])]
    [[0], [1, 2]]
    """
    return _split(input, list(int_tuple(split_sizes, "split_with_sizes", "split_sizes")), dim)


# The unsafe forms: the same pieces, sharing the input's memory, yet not views for autograd (no
# base, a version counter of their own): PyTorch's contract is that neither side is written in place.

@op(grad=_split_method_grad, method=True, meta=metadata,
    errors=(Sample((TensorSpec((5, 2)), -1)), Sample((SCALAR, 1)), Sample((TensorSpec((5, 2)), [1, 4]))),
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((I23, 2), {"dim": -1})), aten="Tensor",
    schema={"split_size": "SymInt"})
def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``split`` into pieces of ``split_size`` that autograd does not track as views of ``input``
    (they share its memory: write neither in place).

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.unsafe_split(tm.tensor([0, 1, 2]), 2)]
    [[0, 1], [2]]
    """
    if not is_int(split_size):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return _split(input, split_size, dim)


def _unsafe_chunk_decomposition(input, chunks, dim=0):
    """PyTorch's composite ``unsafe_chunk``: ``unsafe_split`` at the chunks' size."""
    if not is_int(chunks) or chunks <= 0 or not input.dim() or not input.shape[wrap_dim(dim, input.dim())]:
        return NotImplemented
    size = -(-input.shape[wrap_dim(dim, input.dim())] // chunks)
    return ops.ops.aten.unsafe_split.Tensor(input, size, *((dim,) if dim else ()))  # (a default is not shown)


@op(grad=_split_method_grad, method=True, meta=metadata, node="unsafe_split", decompose=_unsafe_chunk_decomposition,
    tags=("maybe_aliasing_or_mutating",),
    errors=(Sample((M23, 0)), Sample((SCALAR, 2))),
    samples=(Sample((TensorSpec((5, 2)), 2)), Sample((I23, 3, -1))))
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk`` whose pieces autograd does not track as views of ``input`` (they share its
    memory: write neither in place).

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([0, 1, 2]).unsafe_chunk(2)]
    [[0, 1], [2]]
    """
    return _chunk(input, chunks, dim, "unsafe_chunk")


@op(grad=_split_method_grad, method=True, meta=metadata,
    errors=(Sample((TensorSpec((5, 2)), [1, 3])),),
    samples=(Sample((TensorSpec((5, 2)), [2, 3])), Sample((I23, [1, 2]), {"dim": 1})),
    schema={"split_sizes": "SymInt[]"})
def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """``split_with_sizes`` whose pieces autograd does not track as views of ``input`` (they
    share its memory: write neither in place).

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.unsafe_split_with_sizes(tm.tensor([0, 1, 2]), [1, 2])]
    [[0], [1, 2]]
    """
    return _split(input, list(int_tuple(split_sizes, "unsafe_split_with_sizes", "split_sizes")), dim)


def _unbind_grad(grad, input_shape, dim):
    # The slices' gradients stacked, as PyTorch's formula does.
    return ops.stack(_as_tuple(grad), wrap_dim(dim, len(input_shape)))


@op(grad=_unbind_grad, method=True, view=True, meta=metadata, errors=(Sample((SCALAR,)), Sample((M23, 2))),
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((I23, -1))), aten="int")
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along ``dim``, each a view without that dimension.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor([[1, 2], [3, 4]]).unbind(1)]
    [[1, 3], [2, 4]]
    """
    d = _wrap_dim_of_tensor(dim, input.ndim)
    return tuple(selected(input, d, i) for i in range(input.shape[d]))


def _narrow_grad(grad, input_shape, dim, start, length):
    d = wrap_dim(dim, len(input_shape))
    start = int(start)
    if start < 0:
        start += input_shape[d]
    # PyTorch's backward op (narrow is its slice): zeros with the gradient at the slice
    return ops.ops.aten.slice_backward.default(grad, list(input_shape), d, start, start + length, 1), None


@op(grad=_narrow_grad, method=True, view=True, meta=metadata,
    errors=(Sample((M23, 1, 2, 2)), Sample((M23, 1, 4, 1)), Sample((M23, 1, 0, -1)), Sample((SCALAR, 0, 0, 1))),
    samples=(Sample((M23, 1, 1, 2)), Sample((M23, -1, -2, 1)), Sample((I23, 0, 0, 0)), Sample((M23, 1, 3, 0))),
    schema={"length": "SymInt"})
def narrow(input: Tensor, dim: int, start: Tensor | Number, length: int) -> Tensor:
    """The view of ``length`` elements of dimension ``dim`` from index ``start``.

    >>> import tensormodes as tm
    >>> tm.tensor([0, 1, 2, 3, 4, 5]).narrow(0, 2, 3).tolist()
    [2, 3, 4]
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    if isinstance(start, np.ndarray) or type(start) is MetaArray:
        if start.ndim != 0 or start.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        if type(start) is MetaArray:
            raise value_dependent("narrow")
        start = int(start)
    if not is_int(start):
        raise TypeError(f"narrow(): argument 'start' must be int, not {type(start).__name__}")
    if not is_int(length):
        raise TypeError(f"narrow(): argument 'length' must be int, not {type(length).__name__}")
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return sliced(input, d, start, start + length)


def _select_grad(grad, input_shape, dim, index):
    return ops.ops.aten.select_backward.default(grad, list(input_shape), dim, index)


@op(grad=_select_grad, method=True, view=True, meta=metadata,
    errors=(Sample((M23, 0, 2)), Sample((SCALAR, 0, 0)), Sample((M23, 2, 0))),
    samples=(Sample((M23, 0, 1)), Sample((M23, -1, -1)), Sample((TensorSpec((3,), "int64"), 0, 2))),
    aten="int",
    schema={"index": "SymInt"}, tags=("core",))
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The view of ``input`` at ``index`` along ``dim`` (that dimension removed).

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2], [3, 4]]).select(1, 0).tolist()
    [1, 3]
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    if not is_int(index):
        raise TypeError(f"select(): argument 'index' (position 2) must be int, not {type(index).__name__}")
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return selected(input, d, int(index))


# -- more splits, flips and dimension helpers --------------------------------------------

def _tensor_split_points(size: int, indices_or_sections) -> list[int]:
    """Split points of a dimension of ``size`` for ``tensor_split``: ``sections`` nearly
    equal parts, or explicit indices."""
    given = array_of(indices_or_sections)
    if given is not None:  # a tensor: 0-dim means sections, 1-dim means indices
        if given.dtype != np.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{legacy_type_name(given)[len('torch.'):-len('Tensor')]}")
        if given.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {given.ndim} dims")
        if type(given) is MetaArray:
            raise value_dependent("tensor_split")
        indices_or_sections = int(given) if given.ndim == 0 else given.tolist()
    if is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(size, sections)
        sizes = [small + 1] * extra + [small] * (sections - extra)
        return np.cumsum(sizes)[:-1].tolist()
    return list(int_tuple(indices_or_sections, "tensor_split", "indices"))


def _split_at(array: np.ndarray, points: list[int], d: int) -> tuple[np.ndarray, ...]:
    """Views between consecutive split points (Python slice rules: clamped, possibly empty)."""
    bounds = [None, *points, None]
    return tuple(sliced(array, d, start, stop) for start, stop in zip(bounds[:-1], bounds[1:], strict=True))


def _split_points_grad(grad, shape, indices_or_sections, d: int):
    return _unsplit(_as_tuple(grad), shape, d, _tensor_split_points(shape[d], indices_or_sections))


def _sliced_pieces(input, points: list[int], d: int) -> tuple:
    """PyTorch's composite split at ``points`` along ``d``: one ``slice.Tensor`` per piece, from
    each point to the next (the last to the dimension's size), as ``tensor_split`` makes them."""
    slice_op = ops.ops.aten.slice.Tensor
    starts, ends = [0, *points], [*points, input.shape[d]]
    return tuple(slice_op(input, d, start, end) for start, end in zip(starts, ends, strict=True))


def _split_decomposition(name: str, min_ndim: int, dim_of):
    """The dispatch-level form of ``tensor_split`` / ``hsplit`` / ``vsplit`` / ``dsplit``, composites
    in PyTorch: the pieces as ``slice.Tensor`` views (whose gradients are ``slice_backward``s,
    added). Arguments the op rejects are left to it (NotImplemented), which raises PyTorch's errors."""

    def decompose(input, indices_or_sections, *dim):
        if not isinstance(input, TensorBase) or input.dim() < min_ndim:
            return NotImplemented
        given = indices_or_sections
        if isinstance(given, TensorBase):  # tensor_split's tensor form: its values, read as PyTorch does
            if given.dtype != dt.int64 or given.dim() > 1 or given.is_meta:
                return NotImplemented
            given = given.item() if given.dim() == 0 else given.tolist()
        try:
            d = dim_of(input.dim(), *dim)
            if name != "tensor_split" and is_int(given) and (given == 0 or input.shape[d] % given):
                return NotImplemented
            points = _tensor_split_points(input.shape[d], given)
        except (RuntimeError, IndexError, TypeError, ValueError):
            return NotImplemented
        return _sliced_pieces(input, points, d)

    decompose.__name__ = decompose.__qualname__ = f"{name}_decomposition"
    return decompose


def _tensor_split_grad(grad, input_shape, indices_or_sections, dim):
    return _split_points_grad(grad, input_shape, indices_or_sections, wrap_dim(dim, len(input_shape)))


@op(grad=_tensor_split_grad, method=True, view=True, meta=metadata,
    decompose=_split_decomposition("tensor_split", 1, lambda ndim, dim=0: wrap_dim(dim, ndim)),
    errors=(Sample((M23, 0)), Sample((SCALAR, 2)), Sample((M23, 2, 2))),
    samples=(Sample((TensorSpec((7,)), 3)), Sample((TensorSpec((7,), "int64"), (1, 6))), Sample((M23, 2, 1)),
             Sample((M23, [5, 1], -1)), Sample((M23, 4), {"dim": 0})),
    aten="sections",
    schema={"indices_or_sections": "SymInt sections"})
def tensor_split(input: Tensor, indices_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Splits into views: ``sections`` parts as equal as possible (the first ones one larger),
    or at the given indices along ``dim``.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.tensor_split(tm.tensor([0, 1, 2, 3, 4, 5, 6]), 3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    >>> [t.tolist() for t in tm.tensor_split(tm.tensor([0, 1, 2, 3]), (1, 3))]
    [[0], [1, 2], [3]]
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, input.ndim)
    return _split_at(input, _tensor_split_points(input.shape[d], indices_or_sections), d)


def _directional_split(array: np.ndarray, indices_or_sections, op_name: str, min_ndim: int, d: int):
    if array.ndim < min_ndim:
        raise RuntimeError(f"torch.{op_name} requires a tensor with at least {min_ndim} dimension, but got a tensor "
                           f"with {array.ndim} dimensions!")
    if is_int(indices_or_sections):
        size = array.shape[d]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{op_name} attempted to split along dimension {d}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
    return _split_at(array, _tensor_split_points(array.shape[d], indices_or_sections), d)


def _hsplit_grad(grad, input_shape, indices_or_sections):
    return _split_points_grad(grad, input_shape, indices_or_sections, 1 if len(input_shape) >= 2 else 0)


@op(grad=_hsplit_grad, method=True, view=True, meta=metadata,
    decompose=_split_decomposition("hsplit", 1, lambda ndim: 1 if ndim >= 2 else 0),
    errors=(Sample((M23, 2)), Sample((SCALAR, 1))),
    samples=(Sample((M23, 3)), Sample((TensorSpec((4,)), [1, 3])), Sample((I23, [2]))),
    aten="int",
    schema={"indices_or_sections": "int sections"})
def hsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dimension 1 (dimension 0 for 1-D tensors); an int must divide the size.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.hsplit(tm.tensor([[1, 2], [3, 4]]), 2)]
    [[[1], [3]], [[2], [4]]]
    """
    return _directional_split(input, indices_or_sections, "hsplit", 1, 1 if input.ndim >= 2 else 0)


def _vsplit_grad(grad, input_shape, indices_or_sections):
    return _split_points_grad(grad, input_shape, indices_or_sections, 0)


@op(grad=_vsplit_grad, method=True, view=True, meta=metadata,
    decompose=_split_decomposition("vsplit", 2, lambda ndim: 0),
    errors=(Sample((TensorSpec((3,)), 1)), Sample((TensorSpec((3, 2)), 2))),
    samples=(Sample((TensorSpec((4, 2)), 2)), Sample((I23, [1]))),
    aten="int",
    schema={"indices_or_sections": "int sections"})
def vsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dimension 0 of a tensor with at least 2 dimensions.

    >>> import tensormodes as tm
    >>> [t.tolist() for t in tm.vsplit(tm.tensor([[1, 2], [3, 4]]), 2)]
    [[[1, 2]], [[3, 4]]]
    """
    return _directional_split(input, indices_or_sections, "vsplit", 2, 0)


def _dsplit_grad(grad, input_shape, indices_or_sections):
    return _split_points_grad(grad, input_shape, indices_or_sections, 2)


@op(grad=_dsplit_grad, method=True, view=True, meta=metadata,
    decompose=_split_decomposition("dsplit", 3, lambda ndim: 2),
    errors=(Sample((M23, 1)), Sample((M234, 3))),
    samples=(Sample((TensorSpec((2, 2, 4)), 2)), Sample((M234, [1, 3]))),
    aten="int",
    schema={"indices_or_sections": "int sections"})
def dsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dimension 2 of a tensor with at least 3 dimensions.

    >>> import tensormodes as tm
    >>> [t.shape for t in tm.dsplit(tm.zeros(1, 2, 4), 2)]
    [tensormodes.Size([1, 2, 2]), tensormodes.Size([1, 2, 2])]
    """
    return _directional_split(input, indices_or_sections, "dsplit", 3, 2)


def _column_stack_grad(grad, tensors_shape, tensors_dtype):
    return _unjoin(grad, tensors_shape, 1, [1 if len(s) <= 1 else s[1] for s in tensors_shape],
                   _differentiable(tensors_dtype), columns=True)


@op(grad=_column_stack_grad, out=True, meta=metadata,
    errors=(Sample(([TensorSpec((2,)), TensorSpec((3, 2))],)),),
    samples=(Sample(([TensorSpec((2,)), TensorSpec((2, 2))],)), Sample(([SCALAR, SCALAR],)),
             Sample(([TensorSpec((3,), "int64"), TensorSpec((3,), "int32")],))))
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks tensors as columns: 0-D and 1-D tensors become columns, then ``hstack``.

    >>> import tensormodes as tm
    >>> tm.column_stack([tm.tensor([1, 2]), tm.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [reshaped(a, (a.size, 1)) if a.ndim <= 1 else a for a in tensors]
    return _cat(columns, 1, "column_stack")


def _at_least_each(arrays: list[np.ndarray], ndim: int):
    results = tuple(_at_least(a, ndim) for a in arrays)
    return results[0] if len(results) == 1 else results


def _atleast_leading_grad(grad, tensors_shape):
    """``atleast_1d`` / ``atleast_2d``: each output's gradient back in its input's shape, as PyTorch's
    composites make them (a reshape of a 0-D input, an unsqueeze of a 1-D one: a squeeze back) when
    the dispatch level listens; else as they are (only leading size-1 dims added: the engine sums
    them away, faster)."""
    grads = _as_tuple(grad)
    if any(g is not None and dispatch_listens(g) for g in grads):
        return _atleast_grad(grad, tensors_shape)
    return list(grads)


def _at_least_decomposition(ndim: int):
    """PyTorch's composite ``atleast_{ndim}d``, tensor by tensor: ``reshape`` of a 0-d one,
    ``unsqueeze``s of the others short of ``ndim``, the tensor itself otherwise."""

    def one(t):
        if t.dim() == 0:
            return t.reshape([1] * ndim)
        if t.dim() == 1 and ndim >= 2:
            t = t.unsqueeze(0)
            return t.unsqueeze(-1) if ndim == 3 else t
        if t.dim() == 2 and ndim == 3:
            return t.unsqueeze(-1)
        return t

    def decompose(tensors):  # the ``*tensors`` parameter, as one tuple
        if not tensors or not all(isinstance(t, TensorBase) for t in tensors):
            return NotImplemented  # the op raises PyTorch's errors
        results = tuple(one(t) for t in tensors)
        return results[0] if len(results) == 1 else results

    decompose.__name__ = decompose.__qualname__ = f"atleast_{ndim}d_decomposition"
    return decompose


@op(grad=_atleast_leading_grad, meta=metadata, decompose=_at_least_decomposition(1),
    samples=(Sample((SCALAR,)), Sample((M23,)), Sample((SCALAR, TensorSpec((2,), "int64")))),
    schema={"tensors": "Tensor self", "(returns)": "Tensor"}, tags=("maybe_aliasing_or_mutating",))
def atleast_1d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least one dimension (0-D ones become shape ``[1]``); one tensor
    gives a tensor, several a tuple.

    >>> import tensormodes as tm
    >>> tm.atleast_1d(tm.tensor(3)).tolist()
    [3]
    """
    return _at_least_each(tensors, 1)


@op(grad=_atleast_leading_grad, meta=metadata, decompose=_at_least_decomposition(2),
    samples=(Sample((SCALAR,)), Sample((TensorSpec((3,)),)), Sample((SCALAR, M234))),
    tags=("maybe_aliasing_or_mutating",))
def atleast_2d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least two dimensions (1-D ones become a row).

    >>> import tensormodes as tm
    >>> tm.atleast_2d(tm.tensor([1, 2])).tolist()
    [[1, 2]]
    """
    return _at_least_each(tensors, 2)


def _atleast_grad(grad, tensors_shape):
    # Outputs of integer inputs have no gradient (None).
    return [g if g is None or g.shape == tuple(s) else _unstretched(g, tuple(s), False)
            for g, s in zip(_as_tuple(grad), tensors_shape, strict=True)]


@op(grad=_atleast_grad, meta=metadata, decompose=_at_least_decomposition(3),
    samples=(Sample((SCALAR,)), Sample((TensorSpec((3,)),)), Sample((M23, TensorSpec((2,), "bool")))),
    schema={"tensors": "Tensor self", "(returns)": "Tensor"}, tags=("maybe_aliasing_or_mutating",))
def atleast_3d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least three dimensions (``[n]`` becomes ``[1, n, 1]``, ``[m, n]``
    becomes ``[m, n, 1]``).

    >>> import tensormodes as tm
    >>> tm.atleast_3d(tm.tensor([1, 2])).shape
    tensormodes.Size([1, 2, 1])
    """
    return _at_least_each(tensors, 3)
