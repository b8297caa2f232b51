"""Reductions into positions: ``scatter_reduce`` (each element of ``src`` combined into the
position ``index`` gives along ``dim``) and ``index_reduce`` (each slice of ``source`` combined
into the slice ``index`` names), with ``sum``, ``prod``, ``mean``, ``amax`` or ``amin``.

``include_self=False`` leaves the input's values out of the positions written to (the others
keep them). Integer means round down (floor), as PyTorch's do; sums and products wrap in the
tensor's own dtype and accumulate in index order. ``index_reduce`` is ``scatter_reduce`` with
its index spread over the source's shape, so both share one kernel and one gradient.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._samples import I23, M23, SCALAR
from .common import dtype_of, no_complex_autograd, not_implemented, ops, quiet, scalar_type_name, wrap_dim
from .indexing import _as_nd, _out_of_bounds
from .meta_rules import metadata
from .registry import Sample, Tensor, TensorSpec, op
from .scatter_gather import _check_scatter, _counting

_BFLOAT16 = dt.bfloat16._np
_ACCUMULATE = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    """What a reduction starts from where ``include_self=False`` leaves the input out."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype == np.bool_:
        return reduce == "amin"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return -np.inf if reduce == "amax" else np.inf


def _reduced_into(input: np.ndarray, d: int, index: np.ndarray, src: np.ndarray, reduce: str,
                  include_self: bool, kernel: str) -> np.ndarray:
    """``input`` with ``src[i][j]`` combined into position ``index[i][j]`` along ``d`` (after the
    scatter checks); ``kernel`` names PyTorch's kernel in dtype errors."""
    dtype = input.dtype
    if (reduce == "mean" and dtype == np.bool_) or (reduce in ("amax", "amin") and dtype.kind == "c"):
        raise not_implemented(f"{kernel}_{reduce}", dtype_of(input))
    if type(input) is MetaArray:
        return MetaArray(input.shape, input.dtype)
    result = input.copy()
    target, positions = _as_nd(result), _as_nd(index)
    if not positions.size:
        return result
    size = target.shape[d]
    bad = _out_of_bounds(positions, size, 0)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    ndim = target.ndim
    coordinates = tuple(positions if i == d else _counting(n, i, ndim) for i, n in enumerate(positions.shape))
    values = _as_nd(src)[tuple(slice(0, n) for n in positions.shape)]
    if not include_self:
        target[coordinates] = _identity(reduce, dtype)
    # scatter_reduce's sums and products of half types accumulate in float32 and round once;
    # index_reduce's round every step
    wide = kernel != "index_func" and reduce in ("sum", "mean", "prod") and dtype in (np.float16, _BFLOAT16)
    with quiet():  # integers wrap, infinities meet, as in PyTorch's kernels
        if wide:
            accumulator = target.astype(np.float32)
            _ACCUMULATE[reduce].at(accumulator, coordinates, values.astype(np.float32))
            target[...] = accumulator
        else:
            _ACCUMULATE[reduce].at(target, coordinates, values)
        if reduce == "mean":
            counts = np.zeros(target.shape, np.int64)
            np.add.at(counts, coordinates, 1)
            counts += include_self
            written = counts > 0
            if dtype.kind in "iu":
                target[written] = np.floor_divide(target[written], counts[written]).astype(dtype)
            else:
                target[written] = (target[written] / counts[written]).astype(dtype)
    return result


def _check_reduce(reduce: str) -> None:
    if reduce not in _ACCUMULATE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")


# -- the gradient both ops share (PyTorch's scatter_reduce_backward) ---------------------------------

def _scatter_reduce_grads(grad, input, dim, index, src, reduce, include_self, result):
    """The gradients of ``input`` and ``src`` of ``input.scatter_reduce(dim, index, src, reduce,
    include_self=...)`` (``index`` as large as ``src``) that gave ``result``, in PyTorch's
    steps: ties of ``amax`` / ``amin`` share the gradient; ``prod`` computes the product of the
    others where an element is 0."""
    if reduce == "sum":
        grad_self, grad_src = grad, grad.gather(dim, index)
    elif reduce == "prod":
        masked_self = input.masked_fill(input == 0, 1)
        grad_self = grad * masked_self.scatter_reduce(dim, index, src, "prod", include_self=include_self) / masked_self
        src_zero = src == 0
        zeros = ops.zeros_like(input).scatter_add(dim, index, src_zero.to(input.dtype)).gather(dim, index)
        single_zero = src_zero & (zeros == 1)
        others = input.scatter_reduce(dim, index, src.masked_fill(single_zero, 1), "prod", include_self=include_self)
        grad_src = ops.where(single_zero, (grad * others).gather(dim, index),
                             (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
    elif reduce == "mean":
        start = ops.ones_like(input) if include_self else ops.zeros_like(input)
        counts = start.scatter_add(dim, index, ops.ones_like(src))
        grad_self = grad / counts.masked_fill(counts == 0, 1)
        grad_src = grad_self.gather(dim, index)
    else:
        value = result.gather(dim, index)
        self_is_result = (input == result).to(grad.dtype)
        src_is_result = (src == value).to(grad.dtype)
        shared = grad / self_is_result.scatter_add(dim, index, src_is_result)
        grad_self = self_is_result * shared
        grad_src = src_is_result * shared.gather(dim, index)
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, grad_src


def _scatter_reduce_grad(grad, input, dim, index, src, reduce, include_self, result):
    used = tuple(slice(0, n) for n in index.shape)
    whole = tuple(index.shape) == tuple(src.shape) or index.dim() != src.dim()
    grad_self, grad_src = _scatter_reduce_grads(grad, input, dim, index, src if whole else src[used], reduce,
                                                include_self, result)
    if not whole:  # the entries of a src larger than index were not used
        padded = grad_src.new_zeros(src.shape)
        padded[used] = grad_src
        grad_src = padded
    return grad_self, None, grad_src


_UNIQUE = TensorSpec((2, 3), "int64", 0, 1)  # repeats along dim 0 of a (2, 3) input


@op(grad=_scatter_reduce_grad, method=True, inplace=True, meta=metadata,
    differentiable=no_complex_autograd("scatter_reduce"),
    errors=(Sample((M23, 0, _UNIQUE, M23, "max")), Sample((M23, 0, _UNIQUE, TensorSpec((2, 3), "float64"), "sum")),
            Sample((M23, 0, TensorSpec((2, 3)), M23, "sum")),
            Sample((M23, 0, TensorSpec((3,), "int64", 0, 1), M23, "sum")),
            Sample((TensorSpec((2,), "bool"), 0, TensorSpec((2,), "int64", 0, 1), TensorSpec((2,), "bool"), "mean")),
            Sample((TensorSpec((2,), "complex64"), 0, TensorSpec((2,), "int64", 0, 1), TensorSpec((2,), "complex64"),
                    "amax"))),
    samples=(Sample((M23, 0, _UNIQUE, M23, "sum")), Sample((M23, 0, _UNIQUE, M23, "prod"), {"include_self": False}),
             Sample((M23, 1, TensorSpec((2, 4), "int64", 0, 2), TensorSpec((2, 4)), "mean")),
             Sample((M23, -1, TensorSpec((2, 2), "int64", 0, 2), TensorSpec((2, 2)), "amax"), {"include_self": False}),
             Sample((TensorSpec((4,), "float64"), 0, TensorSpec((6,), "int64", 0, 3), TensorSpec((6,), "float64"),
                     "amin")),
             Sample((I23, 0, TensorSpec((2, 3), "int64", 0, 1), TensorSpec((2, 3), "int64", -9, 9), "mean")),
             Sample((TensorSpec((2,), "bool"), 0, TensorSpec((3,), "int64", 0, 1), TensorSpec((3,), "bool"), "sum")),
             Sample((TensorSpec((3,), "float16"), 0, TensorSpec((4,), "int64", 0, 2), TensorSpec((4,), "float16"),
                     "mean")),
             Sample((SCALAR, 0, TensorSpec((), "int64", 0, 0), SCALAR, "prod")),
             Sample((M23, 0, TensorSpec((0, 3), "int64"), M23, "mean"))),
    aten="two", tags=("core",))
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """A copy of ``input`` with each element of ``src`` combined into the position ``index``
    gives along ``dim`` (``out[index[i][j]][j]`` for ``dim=0``), by ``reduce``: ``"sum"``,
    ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``; ``include_self=False`` leaves ``input``'s
    values out of the positions written to.

    >>> import tensormodes as tm
    >>> x = tm.tensor([1.0, 2.0, 3.0, 4.0])
    >>> x.scatter_reduce(0, tm.tensor([0, 1, 0, 1]), tm.tensor([5.0, 6.0, 7.0, 8.0]), "amax")
    tensor([7., 8., 3., 4.])
    """
    d = wrap_dim(dim, input.ndim)
    _check_scatter("scatter", input, d, index, src)
    _check_reduce(reduce)
    return _reduced_into(input, d, index, src, reduce, include_self, "scatter_gather_tensor_cpu_reduce")


# -- index_reduce -----------------------------------------------------------------------------------

def _check_index_reduce(input, d: int, index, source, reduce: str, include_self: bool) -> None:
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{scalar_type_name(dtype_of(index))} and size: {list(index.shape)}")
    # PyTorch's order: the index's dtype, the scalar types, the dim against the source's rank, the count
    if index.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(dtype_of(index))}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_type_name(dtype_of(input))}) and source "
                           f"({scalar_type_name(dtype_of(source))}) must have the same scalar type")
    if d and d >= source.ndim:
        raise RuntimeError(f"index_reduce_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{source.ndim}")
    source_size = source.shape[d] if source.ndim else 1
    if index.size != source_size:
        if not source.ndim:  # PyTorch's message asks a 0-dim source for its size along dim
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.size}) should be equal to source.size(dim): "
                           f"({source_size}), for dim: {d}")
    if source.ndim != input.ndim or any(s != t for i, (s, t) in enumerate(zip(source.shape, input.shape)) if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    # PyTorch's kernels differ by rank: vectors take no bool or complex tensor; other ranks
    # take them where the reduction's own kernel does
    kind = "b" if input.dtype == np.bool_ else input.dtype.kind
    if kind in "bc" and input.ndim <= 1:
        raise not_implemented("index_func_", dtype_of(input))
    if kind == "c" and reduce in ("amax", "amin"):
        raise not_implemented("maximum_cpu" if reduce == "amax" else "minimum_cpu", dtype_of(input))
    if kind == "b" and reduce == "mean":
        raise not_implemented("div_floor_cpu", dtype_of(input))
    if kind in "bc" and not include_self:
        raise not_implemented("index_reduce_func_exclude_input_init", dtype_of(input))


def _spread(index, source_shape: tuple, d: int):
    """``index`` (one position per slice along ``d``) as one position per element of the source."""
    shape = [1] * len(source_shape)
    if shape:
        shape[d] = -1
    return index.reshape(shape).expand(source_shape) if shape else index.reshape(())


def _index_reduce_grad(grad, input, dim, index, source, reduce, include_self, result):
    d = dim % max(input.dim(), 1)
    spread = _spread(index.long(), tuple(source.shape), d)
    grad_self, grad_source = _scatter_reduce_grads(grad, input, d, spread, source, reduce, include_self, result)
    return grad_self, None, grad_source


@op(grad=_index_reduce_grad, method=True, inplace=True, meta=metadata,
    differentiable=no_complex_autograd("index_reduce"),
    errors=(Sample((M23, 0, TensorSpec((2,), "int64", 0, 1), M23, "sum")),
            Sample((M23, 0, TensorSpec((3,), "int64", 0, 1), M23, "prod")),
            Sample((M23, 0, TensorSpec((2,), "int64", 0, 1), TensorSpec((2, 3), "float64"), "prod")),
            Sample((M23, 0, TensorSpec((2, 1), "int64", 0, 1), M23, "prod")),
            Sample((M23, 0, TensorSpec((2,), "int64", 0, 1), TensorSpec((2, 4)), "prod")),
            Sample((TensorSpec((2,), "bool"), 0, TensorSpec((2,), "int64", 0, 1), TensorSpec((2,), "bool"), "amax"))),
    samples=(Sample((TensorSpec((3, 2)), 0, TensorSpec((4,), "int64", 0, 2), TensorSpec((4, 2)), "prod")),
             Sample((TensorSpec((3, 2)), 0, TensorSpec((4,), "int64", 0, 2), TensorSpec((4, 2)), "mean"),
                    {"include_self": False}),
             Sample((M23, 1, TensorSpec((4,), "int32", 0, 2), TensorSpec((2, 4)), "amax")),
             Sample((M23, -1, TensorSpec((2,), "int64", 0, 2), TensorSpec((2, 2)), "amin"), {"include_self": False}),
             Sample((TensorSpec((3,), "int64"), 0, TensorSpec((2,), "int64", 0, 0), TensorSpec((2,), "int64"), "mean")),
             Sample((SCALAR, 0, TensorSpec((1,), "int64", 0, 0), SCALAR, "prod")),
             Sample((TensorSpec((3, 2), "bool"), 0, TensorSpec((4,), "int64", 0, 2), TensorSpec((4, 2), "bool"),
                     "amax"))))
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of ``input`` with each slice ``i`` of ``source`` along ``dim`` combined into the
    slice ``index[i]``, by ``reduce``: ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``;
    ``include_self=False`` leaves ``input``'s values out of the slices written to.

    >>> import tensormodes as tm
    >>> source = tm.tensor([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])
    >>> tm.ones(3, 2).index_reduce(0, tm.tensor([0, 2, 0]), source, "prod")
    tensor([[12., 21.],
            [ 1.,  1.],
            [ 4.,  5.]])
    """
    d = wrap_dim(dim, input.ndim)
    _check_index_reduce(input, d, index, source, reduce, include_self)
    if type(input) is MetaArray:
        return MetaArray(input.shape, input.dtype)
    shape = [1] * source.ndim
    if shape:
        shape[d] = -1
    spread = np.broadcast_to(index.reshape(shape), source.shape) if shape else index.reshape(())
    bad = _out_of_bounds(_as_nd(spread), input.shape[d] if input.ndim else 1, 0)
    if bad is not None:
        raise IndexError("index out of range in self")
    return _reduced_into(input, d, spread.astype(np.int64), source, reduce, include_self, "index_func")
