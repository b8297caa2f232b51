"""Reductions: sums, means, extrema, norms, statistics, sorts and scans.

Results follow PyTorch's dtypes: integer and bool sums, products and scans give
int64, means and statistics need floating inputs, index results are int64.
Float16 and bfloat16 sums and statistics accumulate in float32, as PyTorch's
CPU kernels do, and are rounded to the input's dtype at the end.

Ops that return values together with indices (``max(input, dim)``, ``sort``,
``topk`` ...) return named tuples mirroring ``torch.return_types``; their types
are collected in ``RETURN_TYPES``.
"""

from __future__ import annotations

import builtins
import functools
import math
import numbers
import warnings
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from ._common import (
    binary,
    no_complex_autograd,
    operand_dtype,
    public,
    quiet,
    resolve_dtype,
    scalar_type_name,
    wrap_dim,
    wrap_dims,
)
from ._common import conjugate as _conj
from ._registry import Sample, TensorSpec, op

if TYPE_CHECKING:
    from numbers import Number

    from .._tensor import Tensor

__all__ = ["RETURN_TYPES"]

_M23 = TensorSpec((2, 3))
_M234 = TensorSpec((2, 3, 4))
_SCALAR = TensorSpec(())
_VECTOR = TensorSpec((5,))
# Index-returning ops are compared with PyTorch index for index: values drawn
# from a wide range make ties (whose order PyTorch leaves unspecified) unlikely.
_WIDE_INT = TensorSpec((2, 3), "int64", -1000, 1000)

_INT64 = np.dtype(np.int64)
_FLOAT32 = np.dtype(np.float32)
_BFLOAT16 = dt.bfloat16._np
# Dtypes that PyTorch's CPU kernels accumulate in float32.
_LOW_PRECISION = frozenset({np.dtype(np.float16), _BFLOAT16})


# -- named tuples of results (torch.return_types) ----------------------------------------

def _return_type(name: str, fields: tuple[str, ...]) -> type:
    """A named tuple type called ``name``, printed like PyTorch's ``torch.return_types``."""

    def __repr__(self) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self, strict=True))
        return f"tensormodes.return_types.{name}(\n{body})"

    base = namedtuple(name, fields)
    return type(name, (base,), {
        "__slots__": (), "__repr__": __repr__, "__module__": "tensormodes.return_types",
        "__doc__": f"The result of ``{name}``: a named tuple of ``{', '.join(fields)}``."})


RETURN_TYPES: dict[str, type] = {
    name: _return_type(name, fields) for name, fields in (
        ("max", ("values", "indices")), ("min", ("values", "indices")), ("sort", ("values", "indices")),
        ("topk", ("values", "indices")), ("median", ("values", "indices")), ("aminmax", ("min", "max")),
        ("cummax", ("values", "indices")), ("cummin", ("values", "indices")), ("kthvalue", ("values", "indices")),
        ("mode", ("values", "indices")), ("nanmedian", ("values", "indices")), ("linalg_svd", ("U", "S", "Vh")),
        ("linalg_slogdet", ("sign", "logabsdet")), ("slogdet", ("sign", "logabsdet")), ("linalg_qr", ("Q", "R")),
        ("linalg_eigh", ("eigenvalues", "eigenvectors")))
}


# -- helpers -----------------------------------------------------------------------------

def _dtype_of(array: np.ndarray) -> dt.dtype:
    return dt.NP_TO_DTYPE[array.dtype]


def _not_implemented(kernel: str, array: np.ndarray) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(_dtype_of(array))}\'')


def _is_floating_or_complex(d: dt.dtype) -> bool:
    return d.is_floating_point or d.is_complex


def _is_int(value) -> bool:
    # type() first: isinstance against the numbers ABC is slow.
    return type(value) is int or (isinstance(value, numbers.Integral) and not isinstance(value, bool))


def _check_dims(dim, op_name: str) -> None:
    """TypeError, worded like PyTorch's, unless ``dim`` is an int or a sequence of ints."""
    if _is_int(dim):
        return
    if not isinstance(dim, (list, tuple)):
        raise TypeError(f"{op_name}(): argument 'dim' must be tuple of ints, not {type(dim).__name__}")
    for position, d in enumerate(dim):
        if not _is_int(d):
            raise TypeError(f"{op_name}(): argument 'dim' must be tuple of ints, but found element of type "
                            f"{type(d).__name__} at pos {position}")


def _reduction_axes(dim, ndim: int, op_name: str) -> tuple[int, ...] | None:
    """``dim`` (None, an int or a sequence; empty means every dim) as a NumPy ``axis``."""
    if dim is None:
        return None
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, without the general checks
        return (dim % ndim,)
    _check_dims(dim, op_name)
    if not _is_int(dim) and len(dim) == 0:
        return None
    axes = wrap_dims(dim, ndim)
    # A 0-dim tensor accepts dim 0 / -1, but NumPy has no axis to reduce.
    return axes if ndim else None


def _int_dim(dim, ndim: int, op_name: str, position: int | None = None) -> int:
    """An int ``dim`` wrapped; TypeError, worded like PyTorch's, for anything else (naming the
    argument's ``position`` where PyTorch does: ops without a Dimname overload)."""
    if not _is_int(dim):
        where = "" if position is None else f" (position {position})"
        raise TypeError(f"{op_name}(): argument 'dim'{where} must be int, not {type(dim).__name__}")
    return wrap_dim(dim, ndim)


def _single_axis(dim, ndim: int, op_name: str) -> int | None:
    """An int ``dim`` as a NumPy ``axis`` (None for a 0-dim input, which has no axis)."""
    axis = _int_dim(dim, ndim, op_name)
    return axis if ndim else None


def _reduced_count(shape: tuple[int, ...], axis: tuple[int, ...] | None) -> int:
    """How many elements each output element reduces."""
    return math.prod(shape) if axis is None else math.prod(shape[a] for a in axis)


def _along(axis: int, index) -> tuple:
    """An index applying ``index`` (a slice or an int) to ``axis`` only."""
    return (slice(None),) * axis + (index,)


def _gather(array: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """The elements of ``array`` at ``indices`` along ``axis`` (``take_along_axis``, fast for 1-D)."""
    return array[indices] if array.ndim == 1 else np.take_along_axis(array, indices, axis=axis)


def _accumulation_dtype(np_dtype: np.dtype) -> np.dtype:
    return _FLOAT32 if np_dtype in _LOW_PRECISION else np_dtype


def _no_empty_dims(array: np.ndarray, axis, op_name: str, shown=None) -> None:
    """PyTorch's errors for extrema over nothing (they have no identity)."""
    if array.size:
        return
    if axis is None:
        if array.ndim == 0:
            return
        raise RuntimeError(f"{op_name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    for position, a in enumerate(axis):
        if array.shape[a] == 0:
            dim = a if shown is None else shown[position]
            raise IndexError(f"{op_name}(): Expected reduction dim {dim} to have non-zero size.")


def _sortable(array: np.ndarray) -> np.ndarray:
    """The array NumPy should compare: bfloat16 as float32 (exact; NumPy orders its NaNs wrongly)."""
    return array.astype(_FLOAT32) if array.dtype == _BFLOAT16 else array


def _quietly(kernel):
    """Run ``kernel`` with NumPy's floating-point warnings off: PyTorch overflows to inf
    (and divides 0 by 0 into NaN) silently."""

    @functools.wraps(kernel)
    def silenced(*args, **kwargs):
        with quiet():
            return kernel(*args, **kwargs)

    return silenced


def _invalid_combination(op_name: str, got: str, overloads: tuple[str, ...]) -> TypeError:
    listed = "\n".join(f" * {o}" for o in overloads)
    return TypeError(f"{op_name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{listed}\n")


# -- sums and products --------------------------------------------------------------------

_PLAIN_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def _sum_in(array: np.ndarray, axis, keepdim: bool, target: dt.dtype) -> np.ndarray:
    """The sum of ``array`` cast to ``target`` (PyTorch casts first, then sums)."""
    work = array if array.dtype == target._np else array.astype(target._np)
    if work.dtype in _LOW_PRECISION:
        return np.asarray(np.add.reduce(work, axis=axis, keepdims=keepdim, dtype=_FLOAT32)).astype(target._np)
    # NumPy would widen small integers and bool; only floats may go without ``dtype`` (faster).
    accumulate = None if work.dtype.kind in "fc" else work.dtype
    return np.asarray(np.add.reduce(work, axis=axis, keepdims=keepdim, dtype=accumulate))


def _sum_dtype(array: np.ndarray, dtype) -> dt.dtype:
    """``dtype=`` if given, else int64 for integer and bool inputs, else the array's dtype."""
    target = resolve_dtype(dtype)
    if target is not None:
        return target
    return dt.int64 if array.dtype.kind in "biu" else _dtype_of(array)


# -- gradient formulas (run on Tensors; see _registry.op) -----------------------------------------

def _unreduce(grad, shape, dim, keepdim: bool):
    """``grad`` of a reduction over ``dim`` broadcast back to the input's ``shape``."""
    shape = tuple(shape)
    if not keepdim and dim is not None and dim != () and grad.dim() < len(shape):
        for d in sorted(wrap_dims(dim, len(shape))):
            grad = grad.unsqueeze(d)
    return grad.expand(shape)


def _sum_grad(grad, input_shape, dim, keepdim):
    return _unreduce(grad, input_shape, dim, keepdim)


def _mean_grad(grad, input_shape, dim, keepdim):
    ndim = len(input_shape)
    axes = range(ndim) if dim is None or dim == () or ndim == 0 else wrap_dims(dim, ndim)
    count = 1
    for d in axes:
        count *= input_shape[d]
    return _unreduce(grad, input_shape, dim, keepdim) / count



def _all_dims(dim) -> bool:
    return dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)


def _distribute_evenly(grad, input, result, dim, keepdim):
    """Gradient of an extremum: shared evenly among the elements that attain it."""
    if _all_dims(dim):
        mask = input == result
        return mask * (grad / mask.sum())
    expanded = _unreduce(result, input.shape, dim, keepdim)
    mask = input == expanded
    count = mask.sum(list(wrap_dims(dim, input.dim())), keepdim=True)
    return mask * (_unreduce(grad, input.shape, dim, keepdim) / count)


def _scatter_back(grad_values, shape, indices, dim, keepdim):
    """Gradient of an op that picked ``indices`` along ``dim`` from an input of ``shape``
    (max/min/sort/topk/median)."""
    d = wrap_dim(dim, len(shape))
    if not keepdim and grad_values.dim() < len(shape):
        grad_values = grad_values.unsqueeze(d)
        indices = indices.unsqueeze(d)
    return grad_values.new_zeros(tuple(shape)).scatter(d, indices, grad_values)


def _nansum_grad(grad, input, dim, keepdim):
    return _unreduce(grad, input.shape, dim, keepdim).masked_fill(input.isnan(), 0)


def _cat(tensors, d: int):
    """Concatenate along ``d`` with public methods only (``cat`` has no Tensor method)."""
    shape = list(tensors[0].shape)
    shape[d] = 0
    for t in tensors:
        shape[d] += t.shape[d]
    out = tensors[0].new_zeros(shape)
    start = 0
    for t in tensors:
        index = [slice(None)] * len(shape)
        index[d] = slice(start, start + t.shape[d])
        out[tuple(index)] = t
        start += t.shape[d]
    return out


def _exclusive_products(x, d: int):
    """Product of all elements but one along ``d``, exact with zeros (no division)."""
    n = x.shape[d]
    ones = x.narrow(d, 0, 1).new_ones(x.narrow(d, 0, 1).shape)
    if n == 1:
        return ones
    left = _cat([ones, x.narrow(d, 0, n - 1).cumprod(d)], d)
    right = _cat([x.narrow(d, 1, n - 1).flip(d).cumprod(d).flip(d), ones], d)
    return left * right


def _prod_grad(grad, input, dim, keepdim):
    if dim is None:
        flat = input.reshape(-1)
        if not flat.numel():
            return grad.expand(input.shape)
        return (grad * _conj(_exclusive_products(flat, 0))).reshape(input.shape)
    d = wrap_dim(dim, input.dim())
    if input.dim() == 0:
        return grad
    return _unreduce(grad, input.shape, dim, keepdim) * _conj(_exclusive_products(input, d))


def _cumsum_grad(grad, input_shape, dim):
    if not input_shape:
        return grad
    d = wrap_dim(dim, len(input_shape))
    return grad.flip(d).cumsum(d).flip(d)


def _cumprod_grad(grad, input, result, dim):
    if input.dim() == 0:
        return grad
    if (input == 0).any().item():
        raise NotImplementedError("the gradient of cumprod for inputs containing zeros is not implemented")
    d = wrap_dim(dim, input.dim())
    return (grad * _conj(result)).flip(d).cumsum(d).flip(d) / _conj(input)


def _elementwise_extreme_grad(grad, input, other, larger: bool):
    """Ties share the gradient equally, as in PyTorch's maximum/minimum."""
    wins = input > other if larger else input < other
    ties = input == other
    grad_input = grad * wins + grad * ties * 0.5
    grad_other = grad * (~(wins | ties)) + grad * ties * 0.5
    return grad_input, grad_other


def _extreme_grad(larger: bool):
    def formula(grad, input, result, dim, keepdim):
        if dim is None:
            return _distribute_evenly(grad, input, result, None, False), None
        if hasattr(dim, "shape"):
            return _elementwise_extreme_grad(grad, input, dim, larger)
        values, indices = result
        return _scatter_back(grad[0], input.shape, indices, dim, keepdim), None

    return formula


def _amax_amin_grad(grad, input, result, dim, keepdim):
    return _distribute_evenly(grad, input, result, dim, keepdim)


def _aminmax_grad(grad, input, result, dim, keepdim):
    return (_distribute_evenly(grad[0], input, result[0], dim, keepdim)
            + _distribute_evenly(grad[1], input, result[1], dim, keepdim))


def _correction(unbiased, correction) -> float:
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def _count(input, dim) -> int:
    if _all_dims(dim) or input.dim() == 0:
        return input.numel()
    count = 1
    for d in wrap_dims(dim, input.dim()):
        count *= input.shape[d]
    return count


def _centered(input, dim):
    return input - (input.mean() if _all_dims(dim) else input.mean(list(wrap_dims(dim, input.dim())), keepdim=True))


def _statistic_arguments(dim, unbiased):
    """``x.var(True)`` is the legacy spelling of ``unbiased=True``."""
    if isinstance(dim, bool):
        return None, dim
    return dim, unbiased


def _statistic_scale(grad, input, unbiased, correction, numerator: float) -> float:
    # As PyTorch: N is numel(input) / numel(grad) (1 for dim=(), which reduces nothing
    # in var/std), while the mean is still taken over everything for dim=().
    divisor = input.numel() / (grad.numel() or 1) - _correction(unbiased, correction)
    return numerator / divisor if divisor else float("inf")


def _var_grad(grad, input, dim, unbiased, keepdim, correction):
    dim, unbiased = _statistic_arguments(dim, unbiased)
    scale = _statistic_scale(grad, input, unbiased, correction, 2.0)
    return _unreduce(grad, input.shape, dim, keepdim) * _centered(input, dim) * scale


def _std_grad(grad, input, result, dim, unbiased, keepdim, correction):
    dim, unbiased = _statistic_arguments(dim, unbiased)
    scale = _statistic_scale(grad, input, unbiased, correction, 1.0)
    return _unreduce(grad / result, input.shape, dim, keepdim) * _centered(input, dim) * scale


def _var_mean_grad(grad, input, dim, unbiased, keepdim, correction):
    grad_var, grad_mean = grad
    dim, unbiased = _statistic_arguments(dim, unbiased)
    return (_var_grad(grad_var, input, dim, unbiased, keepdim, correction)
            + _unreduce(grad_mean, input.shape, dim, keepdim) / _count(input, dim))


def _std_mean_grad(grad, input, result, dim, unbiased, keepdim, correction):
    grad_std, grad_mean = grad
    dim, unbiased = _statistic_arguments(dim, unbiased)
    return (_std_grad(grad_std, input, result[0], dim, unbiased, keepdim, correction)
            + _unreduce(grad_mean, input.shape, dim, keepdim) / _count(input, dim))


def _logsumexp_grad(grad, input, result, dim, keepdim):
    weights = (input - _unreduce(result, input.shape, dim, keepdim)).exp()  # the softmax
    return _unreduce(grad, input.shape, dim, keepdim) * _conj(weights)


def _norm_grad(grad, input, result, p, dim, keepdim):
    if p in (0, 0.0):
        return None  # a count of nonzeros: no gradient at all (PyTorch leaves .grad None)
    full_grad = _unreduce(grad, input.shape, dim, keepdim)
    full_norm = _unreduce(result, input.shape, dim, keepdim)
    if p in ("fro", 2, 2.0, None):
        return full_grad * input / full_norm.masked_fill(full_norm == 0, 1)
    if p in (1, 1.0):
        return full_grad * input.sgn()
    if p in (float("inf"), float("-inf")):
        return _distribute_evenly(grad, input.abs(), result, dim, keepdim) * input.sgn()
    if isinstance(p, (int, float)) and p > 0:
        scale = (input.abs() / full_norm.masked_fill(full_norm == 0, 1)) ** (p - 1)
        return full_grad * scale * input.sgn()
    if p == "nuc":
        # The nuclear norm is the sum of singular values, whose gradient is U @ Vh.
        rows, columns = (0, 1) if dim is None else wrap_dims(dim, input.dim())
        u, _, vh = public("svd", "tensormodes.linalg")(input.movedim((rows, columns), (-2, -1)), full_matrices=False)
        return full_grad * (u @ vh).movedim((-2, -1), (rows, columns))
    raise NotImplementedError(f"the gradient of norm with p={p!r} is not implemented")


def _sort_grad(grad, input_shape, result, dim):
    return _scatter_back(grad[0], input_shape, result[1], dim, True)


def _topk_grad(grad, input_shape, result, dim):
    return _scatter_back(grad[0], input_shape, result[1], dim, True)


def _selection_grad(grad, input_shape, result, dim, keepdim):
    """Gradient of an op that picked one element along ``dim`` (its index in ``result[1]``)."""
    if not input_shape:
        return grad[0]
    return _scatter_back(grad[0], input_shape, result[1], dim, keepdim)


def _nanmean_grad(grad, input, dim, keepdim):
    kept = input.isnan().logical_not()
    count = kept.sum() if _all_dims(dim) else kept.sum(dim, keepdim=keepdim)
    return _unreduce(grad / count, input.shape, dim, keepdim).masked_fill(kept.logical_not(), 0)


def _median_grad(grad, input, result, dim, keepdim):
    if dim is None:
        return _distribute_evenly(grad, input, result, None, False)
    return _scatter_back(grad[0], input.shape, result[1], dim, keepdim)



@op(grad=_sum_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, (0, 1), True)),
             Sample((TensorSpec((2, 3), "int32"), -1)), Sample((TensorSpec((4,), "bool"),)),
             Sample((TensorSpec((3, 4), "float16"), 0)), Sample((_SCALAR, 0, True)),
             Sample((_M23, ()), {"dtype": dt.float64}), Sample((TensorSpec((2, 2), "int8"),), {"dtype": dt.int8}),
             Sample((TensorSpec((2, 3), "complex64"), [1])), Sample((TensorSpec((0, 3)),))))
def sum(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,  # noqa: A001
        dtype: dt.dtype | None = None) -> Tensor:
    """Sum of the elements, over all of them or over ``dim`` (an int or a tuple of ints).

    Integer and bool inputs sum to int64 unless ``dtype`` is given; the input is
    cast to ``dtype`` before summing. The sum of no elements is 0.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 2], [3, 4]])
    >>> x.sum(), x.sum(dim=1, keepdim=True)
    (tensor(10), tensor([[3],
            [7]]))
    """
    # Float sums overflow to inf without a warning in PyTorch, and NumPy only warns
    # then: this kernel skips _quietly, whose errstate would double its cost.
    if dtype is None and input.dtype in _PLAIN_FLOATS:
        if dim is None:
            return np.asarray(np.add.reduce(input, axis=None, keepdims=keepdim))
        ndim = input.ndim
        if type(dim) is int and -ndim <= dim < ndim:  # one dim, as gradient formulas ask: no general parsing
            return np.asarray(np.add.reduce(input, axis=dim % ndim, keepdims=keepdim))
    return _sum_in(input, _reduction_axes(dim, input.ndim, "sum"), keepdim, _sum_dtype(input, dtype))


@op(grad=_nansum_grad, method=True, out=True,
    samples=(Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((2, 3), "float64", -1e3, 1e3), 1, True)),
             Sample((TensorSpec((3,), "float32"),)), Sample((TensorSpec((4,), "int64"),)),
             Sample((TensorSpec((2, 3), "int32"), 0), {"dtype": dt.float32}), Sample((_SCALAR,))))
@_quietly
def nansum(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,
           dtype: dt.dtype | None = None) -> Tensor:
    """Sum of the elements, treating NaN as zero.

    >>> import tensormodes as tm
    >>> tm.nansum(tm.tensor([1., float('nan'), 2.])).item()
    3.0
    """
    if input.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    target = _sum_dtype(input, dtype)
    numbers_only = input if input.dtype.kind in "biu" else np.where(np.isnan(input), input.dtype.type(0), input)
    return _sum_in(numbers_only, _reduction_axes(dim, input.ndim, "nansum"), keepdim, target)


@op(grad=_mean_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, (0, 1), True)), Sample((_M234, (-1, 0))),
             Sample((TensorSpec((3, 4), "float16"), 0)), Sample((TensorSpec((2, 3), "complex64"),)),
             Sample((TensorSpec((2, 3), "int64"),), {"dtype": dt.float64}), Sample((_SCALAR, 0, True)),
             Sample((TensorSpec((0, 3)), 0))))
@_quietly
def mean(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,
         dtype: dt.dtype | None = None) -> Tensor:
    """Mean of the elements, over all of them or over ``dim``.

    The input must be floating point or complex, unless ``dtype`` (floating or
    complex) is given. The mean of no elements is NaN.

    >>> import tensormodes as tm
    >>> tm.tensor([[1., 2.], [3., 5.]]).mean(dim=0).tolist()
    [2.0, 3.5]
    >>> tm.mean(tm.tensor([1, 2]), dtype=tm.float64).item()
    1.5
    """
    target = resolve_dtype(dtype)
    if target is None:
        target = _dtype_of(input)
        if not _is_floating_or_complex(target):
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                               f"or complex dtype. Got: {scalar_type_name(target)}")
    elif not _is_floating_or_complex(target):
        raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {scalar_type_name(target)}")
    axis = _reduction_axes(dim, input.ndim, "mean")
    work = input if input.dtype == target._np else input.astype(target._np)
    if work.dtype in _LOW_PRECISION:
        work = work.astype(_FLOAT32)
    total = np.add.reduce(work, axis=axis, keepdims=keepdim)
    result = total / _reduced_count(input.shape, axis)
    return np.asarray(result).astype(target._np, copy=False)


@op(grad=_prod_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, -1, True)),
             Sample((TensorSpec((2, 3), "int32", -3, 3),)), Sample((TensorSpec((4,), "bool"), 0)),
             Sample((TensorSpec((2, 3), "float16"), 0)), Sample((TensorSpec((2, 2), "complex64"), 1)),
             Sample((TensorSpec((2, 3), "int64"), 1), {"dtype": dt.float64}), Sample((_SCALAR, 0))))
@_quietly
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: dt.dtype | None = None) -> Tensor:
    """Product of the elements, over all of them or over the single dimension ``dim``.

    Integer and bool inputs multiply in int64 unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2], [3, 4]]).prod(1)
    tensor([ 2, 12])
    """
    target = _sum_dtype(input, dtype)
    if dim is None:
        if keepdim:
            raise _invalid_combination("prod", "Tensor, keepdim=bool", (
                "(Tensor input, *, torch.dtype dtype = None)",
                "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)"))
        axis = None
    else:
        axis = _single_axis(dim, input.ndim, "prod")
    work = input if input.dtype == target._np else input.astype(target._np)
    # NumPy accumulates float16 products in float32, PyTorch in float16: a product whose
    # partial results overflow float16 is inf in PyTorch and may be finite here.
    return np.asarray(np.multiply.reduce(work, axis=axis, keepdims=keepdim, dtype=work.dtype))


def _scan(ufunc, name: str, array: np.ndarray, dim, dtype) -> np.ndarray:
    target = _sum_dtype(array, dtype)
    if target is dt.bool:
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
    axis = _int_dim(dim, array.ndim, name)
    work = array if array.dtype == target._np else array.astype(target._np)
    if array.ndim == 0:
        return work.copy()
    # Low-precision floats accumulate in float32; each partial result is rounded on output.
    accumulate = _accumulation_dtype(target._np)
    result = ufunc.accumulate(work, axis=axis, dtype=accumulate)
    return result if accumulate is target._np else result.astype(target._np)


@op(grad=_cumsum_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23, 0)), Sample((_M23, -1)), Sample((TensorSpec((2, 3), "int32"), 1)),
             Sample((TensorSpec((5,), "bool"), 0)), Sample((TensorSpec((2, 3), "float16"), 1)),
             Sample((_SCALAR, 0)), Sample((_M23, 1), {"dtype": dt.float64}),
             Sample((TensorSpec((2, 3), "complex64"), 0))))
@_quietly
def cumsum(input: Tensor, dim: int, *, dtype: dt.dtype | None = None) -> Tensor:
    """Cumulative sums along ``dim``; integer and bool inputs give int64 unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.cumsum(tm.tensor([1, 2, 3, 4]), dim=0)
    tensor([ 1,  3,  6, 10])
    """
    return _scan(np.add, "cumsum", input, dim, dtype)


@op(grad=_cumprod_grad, method=True, inplace=True, out=True,
    samples=(Sample((_M23, 0)), Sample((_M23, -1)), Sample((TensorSpec((2, 3), "int32", -3, 3), 1)),
             Sample((TensorSpec((5,), "bool"), 0)), Sample((TensorSpec((2, 3), "float16"), 1)),
             Sample((_SCALAR, -1)), Sample((TensorSpec((2, 3), "int64", -3, 3), 1), {"dtype": dt.float64})))
@_quietly
def cumprod(input: Tensor, dim: int, *, dtype: dt.dtype | None = None) -> Tensor:
    """Cumulative products along ``dim``; integer and bool inputs give int64 unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2, 3, 4]).cumprod(0)
    tensor([ 1,  2,  6, 24])
    """
    return _scan(np.multiply, "cumprod", input, dim, dtype)


def _running_extreme_grad(grad, input_shape, result, dim):
    # Each output took its value from input[indices]: the gradient goes back there (summed).
    if not input_shape:
        return grad[0]
    d = wrap_dim(dim, len(input_shape))
    return grad[0].new_zeros(tuple(input_shape)).scatter_add(d, result[1], grad[0])


def _running_extreme(accumulate, name: str, input: np.ndarray, dim):
    """cummax / cummin: running extremes along ``dim`` and where each was attained (the
    latest position on ties; a NaN stays, and each new NaN takes over, as in PyTorch)."""
    axis = _int_dim(dim, input.ndim, name, position=2)
    if input.dtype.kind == "c" and input.size and input.ndim:
        raise _not_implemented(f"{name}_cpu", input)
    if input.ndim == 0:
        return RETURN_TYPES[name](input.copy(), np.zeros((), np.int64))
    values = accumulate(input, axis=axis)
    attained = values == input
    if input.dtype.kind == "f" or input.dtype == dt.bfloat16._np:
        attained |= np.isnan(input)
    shape = [1] * input.ndim
    shape[axis] = input.shape[axis]
    positions = np.where(attained, np.arange(input.shape[axis]).reshape(shape), 0)
    return RETURN_TYPES[name](values, np.maximum.accumulate(positions, axis=axis))


_RUNNING_SAMPLES = (Sample((_M23, 1)), Sample((TensorSpec((4, 3), "int64", -2, 2), 0)), Sample((_SCALAR, 0)),
                    Sample((TensorSpec((5,), "bool"), -1)), Sample((TensorSpec((3, 2), "float16"), 0)),
                    Sample((TensorSpec((0, 3)), 1)))


@op(grad=_running_extreme_grad, differentiable=no_complex_autograd("cummax"), method=True, out=True,
    samples=_RUNNING_SAMPLES)
def cummax(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """The running maximum along ``dim``, and the index where each was attained (the
    latest one on ties; NaN propagates).

    >>> import tensormodes as tm
    >>> tm.cummax(tm.tensor([1, 3, 2, 3]), dim=0)
    tensormodes.return_types.cummax(
    values=tensor([1, 3, 3, 3]),
    indices=tensor([0, 1, 1, 3]))
    """
    return _running_extreme(np.maximum.accumulate, "cummax", input, dim)


@op(grad=_running_extreme_grad, differentiable=no_complex_autograd("cummin"), method=True, out=True,
    samples=_RUNNING_SAMPLES)
def cummin(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """The running minimum along ``dim``, and the index where each was attained (the
    latest one on ties; NaN propagates).

    >>> import tensormodes as tm
    >>> tm.cummin(tm.tensor([3, 1, 2, 1]), dim=0).indices
    tensor([0, 1, 1, 3])
    """
    return _running_extreme(np.minimum.accumulate, "cummin", input, dim)


def _reverse_logcumsumexp(x, d: int):
    return x.flip(d).logcumsumexp(d).flip(d)


def _logcumsumexp_grad(grad, input, result, dim):
    if input.dim() == 0:
        return grad
    d = wrap_dim(dim, input.dim())
    if input.is_complex():
        # d result_i / d input_j = exp(input_j - result_i) for j <= i, conjugated.
        return input.exp().conj() * (grad * (-result).exp().conj()).flip(d).cumsum(d).flip(d)
    # grad_j = sum over i >= j of grad_i * exp(input_j - result_i), in log space for range: the
    # positive and negative parts of grad separately (the logarithm of a lowest number
    # stands for that of 0).
    lowest = public("finfo")(grad.dtype).min
    magnitude = grad.abs().log()
    positive = magnitude.where(grad > 0, lowest)
    negative = magnitude.where(grad < 0, lowest)
    return (_reverse_logcumsumexp(positive - result, d) + input).exp() - \
        (_reverse_logcumsumexp(negative - result, d) + input).exp()


def _complex_logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    shift = np.maximum(a.real, b.real)
    shift = np.where(np.isfinite(shift), shift, 0)
    return np.log(np.exp(a - shift) + np.exp(b - shift)) + shift


@op(grad=_logcumsumexp_grad, method=True, out=True, samples=(
    Sample((_M23, 1)), Sample((TensorSpec((3, 2), "float64", -50, 50), 0)), Sample((_SCALAR, 0)),
    Sample((TensorSpec((4,), "float16"), 0)), Sample((TensorSpec((2, 3), "complex64"), -1)),
    Sample((TensorSpec((0, 2)), 0))))
@_quietly
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed without overflow.

    >>> import tensormodes as tm
    >>> tm.logcumsumexp(tm.tensor([0.0, 0.0, 0.0]), 0)
    tensor([0.0000, 0.6931, 1.0986])
    """
    d = _dtype_of(input)
    if not _is_floating_or_complex(d):
        raise _not_implemented("logcumsumexp_out_cpu", input)
    axis = _int_dim(dim, input.ndim, "logcumsumexp", position=2)
    if input.ndim == 0 or not input.size:
        return input.copy()
    if d.is_complex:
        moved = np.moveaxis(input, axis, 0)
        result = np.empty_like(moved)
        result[0] = moved[0]
        for i in range(1, moved.shape[0]):
            result[i] = _complex_logaddexp(result[i - 1], moved[i])
        return np.moveaxis(result, 0, axis)
    work = input.astype(_accumulation_dtype(input.dtype), copy=False)
    return np.logaddexp.accumulate(work, axis=axis).astype(input.dtype, copy=False)


# -- logical reductions and counting ---------------------------------------------------

def _truth_reduction(ufunc, name: str, array: np.ndarray, dim, keepdim: bool) -> np.ndarray:
    axis = _reduction_axes(dim, array.ndim, name)
    if dim is not None and axis is None and (array.ndim == 0 or (not _is_int(dim) and len(dim) == 0)):
        # all/any over no dims test each element, where sum and the others reduce every dim.
        axis = ()
    truth = array if array.dtype.kind == "b" else array != 0
    result = np.asarray(ufunc.reduce(truth, axis=axis, keepdims=keepdim))
    # PyTorch keeps uint8 for uint8 inputs (a legacy of masks stored as bytes).
    return result.astype(np.uint8) if array.dtype == np.uint8 else result


_TRUTH_SAMPLES = (Sample((TensorSpec((2, 3), "bool"),)), Sample((TensorSpec((2, 3), "bool"), 1)),
                  Sample((TensorSpec((2, 3), "int64", 0, 1), (0, 1), True)),
                  Sample((TensorSpec((3, 2), "uint8", 0, 1),)),
                  Sample((TensorSpec((3, 2), "uint8", 0, 1), 0)), Sample((_M23, ())),
                  Sample((TensorSpec((2, 2), "float16", 0, 1), -1, True)), Sample((_SCALAR, 0)),
                  Sample((TensorSpec((0, 2), "bool"),)), Sample((TensorSpec((2, 2), "complex64"), 1)))


@op(differentiable=False, method=True, out=True, samples=_TRUTH_SAMPLES)
def all(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True if every element (over ``dim``, if given) is nonzero. The result is bool
    (uint8 for uint8 inputs); ``all`` of no elements is True.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[True, False], [True, True]])
    >>> x.all(), x.all(dim=1)
    (tensor(False), tensor([False,  True]))
    """
    return _truth_reduction(np.logical_and, "all", input, dim, keepdim)


@op(differentiable=False, method=True, out=True, samples=_TRUTH_SAMPLES)
def any(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True if any element (over ``dim``, if given) is nonzero. The result is bool
    (uint8 for uint8 inputs); ``any`` of no elements is False.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[0, 0], [0, 3]])
    >>> x.any(), x.any(dim=0)
    (tensor(True), tensor([False,  True]))
    """
    return _truth_reduction(np.logical_or, "any", input, dim, keepdim)


@op(differentiable=False, method=True,
    samples=(Sample((TensorSpec((3, 4), "int64", -1, 1),)), Sample((TensorSpec((3, 4), "int64", -1, 1), 1)),
             Sample((TensorSpec((2, 3), "bool"), (0, 1))), Sample((TensorSpec((2, 3), "float32", -1, 1), ())),
             Sample((_SCALAR, 0)), Sample((TensorSpec((2, 2), "complex64"), [-1]))))
def count_nonzero(input: Tensor, dim: int | tuple[int, ...] | None = None) -> Tensor:
    """Number of nonzero elements, over all of them or over ``dim``, as int64.

    >>> import tensormodes as tm
    >>> tm.count_nonzero(tm.tensor([[0, 1, 2], [3, 0, 0]]), dim=1)
    tensor([2, 1])
    """
    axis = _reduction_axes(dim, input.ndim, "count_nonzero")
    truth = input if input.dtype.kind == "b" else input != 0
    return np.asarray(np.add.reduce(truth, axis=axis, dtype=_INT64))


# -- extrema ---------------------------------------------------------------------------

_MAX_OVERLOADS = ("(Tensor input, *, Tensor out = None)", "(Tensor input, Tensor other, *, Tensor out = None)",
                  "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)")


def _elementwise_extreme(ufunc, name: str, array: np.ndarray, other: np.ndarray) -> np.ndarray:
    if array.dtype.kind == "c" or other.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return np.asarray(binary(ufunc, array, other))


def _extreme_along(arg_function, op_name: str, array: np.ndarray, dim, keepdim: bool) -> tuple:
    """Values and int64 indices of the extreme elements along the int ``dim``."""
    if array.dtype.kind == "c":
        raise RuntimeError(f"{op_name}(): does not support complex input")
    axis = wrap_dim(dim, array.ndim)
    if array.ndim == 0:
        return array.copy(), np.zeros((), _INT64)
    _no_empty_dims(array, (axis,), op_name)
    # NumPy's argmax/argmin pick the first extreme element and treat NaN as extreme, like
    # PyTorch. The values are read at the indices (a reduction could pick 0. for -0.).
    indices = arg_function(_sortable(array), axis=axis, keepdims=True)
    values = _gather(array, indices, axis)
    if not keepdim:
        indices, values = indices.squeeze(axis), values.squeeze(axis)
    return values, indices.astype(_INT64, copy=False)


def _extreme(ufunc, arg_function, name: str, elementwise: str, array: np.ndarray, dim, keepdim: bool):
    """The three overloads of ``max`` / ``min``: over everything, elementwise, along a dim."""
    if dim is None:
        if keepdim:
            raise _invalid_combination(name, "Tensor, keepdim=bool", _MAX_OVERLOADS)
        if array.dtype.kind == "c":
            raise _not_implemented(f"{name}_all", array)
        _no_empty_dims(array, None, name)
        return np.asarray(ufunc.reduce(array, axis=None))
    if type(dim) is np.ndarray:
        if keepdim:
            raise _invalid_combination(name, "Tensor, Tensor, keepdim=bool", _MAX_OVERLOADS)
        return _elementwise_extreme(ufunc, elementwise, array, dim)
    if not _is_int(dim):
        raise _invalid_combination(name, f"Tensor, {type(dim).__name__}", _MAX_OVERLOADS)
    values, indices = _extreme_along(arg_function, name, array, dim, keepdim)
    return RETURN_TYPES[name](values, indices)


_EXTREME_SAMPLES = (Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, 0, True)), Sample((_WIDE_INT, -1)),
                    Sample((TensorSpec((4,), "bool"),)), Sample((TensorSpec((3, 2), "float16"), 1)),
                    Sample((_SCALAR, 0)), Sample((_SCALAR,)), Sample((_M23, _M23)),
                    Sample((TensorSpec((2, 3), "int32"), TensorSpec((3,), "float32"))),
                    Sample((TensorSpec((2, 3), "uint8", 0, 9), TensorSpec((), "int8"))),
                    Sample((TensorSpec((2, 3), "bfloat16"),)), Sample((TensorSpec((0, 3)), 1)))


@op(grad=_extreme_grad(True), method=True, out=True, samples=_EXTREME_SAMPLES)
def max(input: Tensor, dim: Tensor | Number | None = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """The largest element; with an int ``dim``, a named tuple ``(values, indices)`` of
    the largest elements along ``dim``; with a tensor, the elementwise maximum of
    ``input`` and that tensor (like ``maximum``). NaN propagates.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 5, 2], [7, 0, 7]])
    >>> x.max()
    tensor(7)
    >>> x.max(dim=1)
    tensormodes.return_types.max(
    values=tensor([5, 7]),
    indices=tensor([1, 0]))
    >>> tm.max(x, tm.tensor([3, 3, 3]))
    tensor([[3, 5, 3],
            [7, 3, 7]])
    """
    return _extreme(np.maximum, np.ndarray.argmax, "max", "maximum", input, dim, keepdim)


@op(grad=_extreme_grad(False), method=True, out=True, samples=_EXTREME_SAMPLES)
def min(input: Tensor, dim: Tensor | Number | None = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """The smallest element; with an int ``dim``, a named tuple ``(values, indices)`` of
    the smallest elements along ``dim``; with a tensor, the elementwise minimum of
    ``input`` and that tensor (like ``minimum``). NaN propagates.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 5, 2], [7, 0, 7]])
    >>> x.min()
    tensor(0)
    >>> x.min(dim=0, keepdim=True)
    tensormodes.return_types.min(
    values=tensor([[1, 0, 2]]),
    indices=tensor([[0, 1, 0]]))
    """
    return _extreme(np.minimum, np.ndarray.argmin, "min", "minimum", input, dim, keepdim)


def _amax_amin(ufunc, name: str, array: np.ndarray, dim, keepdim: bool) -> np.ndarray:
    if array.dtype.kind == "c":
        raise _not_implemented(f"{name[1:]}_values_cpu", array)
    axis = _reduction_axes(dim, array.ndim, name)
    shown = None if axis is None else ((dim,) if _is_int(dim) else tuple(dim))
    _no_empty_dims(array, axis, name, shown)
    return np.asarray(ufunc.reduce(array, axis=axis, keepdims=keepdim))


_AMAX_SAMPLES = (Sample((_M23,)), Sample((_M23, 1)), Sample((_M234, (0, 2), True)), Sample((_M23, -1)),
                 Sample((TensorSpec((2, 3), "int32"), 0)), Sample((TensorSpec((4,), "bool"),)),
                 Sample((TensorSpec((2, 3), "float16"), [1])), Sample((_SCALAR, 0, True)), Sample((_M23, ())),
                 Sample((TensorSpec((0, 3)), 1)))


@op(grad=_amax_amin_grad, method=True, out=True, samples=_AMAX_SAMPLES)
def amax(input: Tensor, dim: int | tuple[int, ...] = (), keepdim: bool = False) -> Tensor:
    """The largest elements over ``dim`` (an int or a tuple; empty means every dim).
    NaN propagates.

    >>> import tensormodes as tm
    >>> tm.amax(tm.tensor([[1, 5, 2], [7, 0, 3]]), dim=1)
    tensor([5, 7])
    """
    return _amax_amin(np.maximum, "amax", input, dim, keepdim)


@op(grad=_amax_amin_grad, method=True, out=True, samples=_AMAX_SAMPLES)
def amin(input: Tensor, dim: int | tuple[int, ...] = (), keepdim: bool = False) -> Tensor:
    """The smallest elements over ``dim`` (an int or a tuple; empty means every dim).
    NaN propagates.

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 5, 2], [7, 0, 3]]).amin(dim=(0, 1))
    tensor(0)
    """
    return _amax_amin(np.minimum, "amin", input, dim, keepdim)


def _arg_extreme(arg_function, name: str, array: np.ndarray, dim, keepdim: bool) -> np.ndarray:
    if array.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if array.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    values = _sortable(array)
    if dim is None:
        if array.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        index = np.asarray(arg_function(values, axis=None), _INT64)
        return index.reshape((1,) * array.ndim) if keepdim else index
    axis = _int_dim(dim, array.ndim, name)
    if array.ndim == 0:
        return np.zeros((), _INT64)
    if array.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    return np.asarray(arg_function(values, axis=axis, keepdims=keepdim), _INT64)


_ARG_SAMPLES = (Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, 0, True)), Sample((_M23, None, True)),
                Sample((_WIDE_INT, -1)), Sample((TensorSpec((3, 2), "float16"), 0)),
                Sample((TensorSpec((2, 3), "uint8", 0, 255),)), Sample((_SCALAR,)), Sample((_SCALAR, 0, True)),
                Sample((TensorSpec((0, 3)), 1)))


@op(differentiable=False, method=True, out=True, samples=_ARG_SAMPLES)
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the largest element, in the flattened input or along ``dim``.
    The first one wins ties; NaN counts as largest.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 5, 2], [7, 0, 7]])
    >>> x.argmax(), x.argmax(dim=1)
    (tensor(3), tensor([1, 0]))
    """
    return _arg_extreme(np.ndarray.argmax, "argmax", input, dim, keepdim)


@op(differentiable=False, method=True, out=True, samples=_ARG_SAMPLES)
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the smallest element, in the flattened input or along ``dim``.
    The first one wins ties; NaN counts as smallest.

    >>> import tensormodes as tm
    >>> tm.argmin(tm.tensor([[1, 5, 2], [7, 0, 7]]), dim=0)
    tensor([0, 1, 0])
    """
    return _arg_extreme(np.ndarray.argmin, "argmin", input, dim, keepdim)


@op(grad=_aminmax_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23,), {"dim": 1}), Sample((_M23,), {"dim": -1, "keepdim": True}),
             Sample((_M23,), {"keepdim": True}), Sample((TensorSpec((2, 3), "int32"),), {"dim": 0}),
             Sample((TensorSpec((4,), "bool"),)), Sample((TensorSpec((2, 3), "float16"),), {"dim": 1}),
             Sample((_SCALAR,)), Sample((_SCALAR,), {"dim": 0}), Sample((TensorSpec((0, 3)),), {"dim": 1})))
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The smallest and largest elements, over everything or along ``dim``, as the
    named tuple ``(min, max)``.

    >>> import tensormodes as tm
    >>> tm.aminmax(tm.tensor([[1, 5, 2], [7, 0, 3]]), dim=1)
    tensormodes.return_types.aminmax(
    min=tensor([1, 0]),
    max=tensor([5, 7]))
    """
    if input.dtype.kind == "c":
        if dim is not None and input.ndim == 0:  # PyTorch's scalar path has its own message
            raise RuntimeError(f"aminmax not implemented for {scalar_type_name(dt.NP_TO_DTYPE[input.dtype])}")
        raise _not_implemented("aminmax_cpu", input)
    if dim is None:
        if input.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               "no identity.")
        axis = None
    else:
        axis = _single_axis(dim, input.ndim, "aminmax")
        if axis is not None and input.shape[axis] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {axis} to have non-zero size.")
    low = np.asarray(np.minimum.reduce(input, axis=axis, keepdims=keepdim))
    high = np.asarray(np.maximum.reduce(input, axis=axis, keepdims=keepdim))
    return RETURN_TYPES["aminmax"](low, high)


# -- statistics -------------------------------------------------------------------------

_STATISTIC_OVERLOADS = (
    "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None)",
    "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None)",
    "(Tensor input, bool unbiased = True)")


def _variance_and_mean(name: str, array: np.ndarray, dim, unbiased, keepdim: bool, correction, root: bool):
    """``(variance, mean)`` over ``dim`` (the standard deviation if ``root``), merging
    PyTorch's ``unbiased`` and ``correction`` forms.

    ``var(x, True)`` passes ``unbiased`` where ``dim`` stands, as in PyTorch. Low
    precision inputs compute in float32 and are rounded once, at the end.
    """
    if isinstance(dim, bool):
        if unbiased is not None or keepdim or correction is not None:
            raise _invalid_combination(name, "Tensor, bool, bool", _STATISTIC_OVERLOADS)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        given = "" if dim is None else f"dim={type(dim).__name__}, "
        raise _invalid_combination(name, f"Tensor, {given}correction={type(correction).__name__}, unbiased=bool",
                                   _STATISTIC_OVERLOADS)
    if correction is None:
        correction = 0 if unbiased is False else 1
    kind = _dtype_of(array)
    if not _is_floating_or_complex(kind):
        subject = name if name.endswith("_mean") else "std and var"
        raise RuntimeError(f"{subject} only support floating point and complex dtypes")
    axis = _reduction_axes(dim, array.ndim, name)
    work = array.astype(_FLOAT32) if array.dtype in _LOW_PRECISION else array
    count = _reduced_count(array.shape, axis)
    centre = np.add.reduce(work, axis=axis, keepdims=True) / count
    deviation = work - centre
    squares = deviation.real * deviation.real + deviation.imag * deviation.imag \
        if deviation.dtype.kind == "c" else deviation * deviation
    degrees_of_freedom = count - correction
    if degrees_of_freedom <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning,
                      stacklevel=5)  # past this helper, the kernel, its quiet wrapper and the public call
    variance = np.add.reduce(squares, axis=axis, keepdims=keepdim) / builtins.max(degrees_of_freedom, 0)
    if root:
        variance = np.sqrt(variance)
    variance = np.asarray(variance).astype(kind.to_real()._np, copy=False)
    centre = centre.reshape(variance.shape).astype(array.dtype, copy=False)
    return variance, centre


_STATISTIC_SAMPLES = (
    Sample((_M23,)), Sample((_M23, 1)), Sample((_M234, (0, 2)), {"keepdim": True}), Sample((_M23,), {"correction": 0}),
    Sample((_M23, -1), {"correction": 2.5}), Sample((_M23,), {"unbiased": False}), Sample((_M23, 0, False, True)),
    Sample((_M23, False)), Sample((TensorSpec((3, 4), "float16"), 1)), Sample((TensorSpec((2, 3), "complex64"), 0)),
    Sample((TensorSpec((2, 3), "float64"), None), {"keepdim": True}), Sample((_VECTOR, ())))


@op(grad=_var_grad, method=True, out=True, samples=_STATISTIC_SAMPLES)
@_quietly
def var(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
    """Variance over ``dim``: ``sum((x - mean)**2) / (N - correction)``, ``correction``
    defaulting to 1 (Bessel's correction). The legacy ``unbiased=False`` means
    ``correction=0``. Complex inputs give a real variance.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1., 2.], [3., 5.]])
    >>> x.var(dim=1).tolist(), x.var(1, correction=0).tolist()
    ([0.5, 2.0], [0.25, 1.0])
    """
    return _variance_and_mean("var", input, dim, unbiased, keepdim, correction, root=False)[0]


@op(grad=_std_grad, method=True, out=True, samples=_STATISTIC_SAMPLES)
@_quietly
def std(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
    """Standard deviation over ``dim``: the square root of ``var`` with the same arguments.

    >>> import tensormodes as tm
    >>> tm.std(tm.tensor([1., 3., 5.])).item()
    2.0
    >>> tm.tensor([1., 3.]).std(unbiased=False).item()
    1.0
    """
    return _variance_and_mean("std", input, dim, unbiased, keepdim, correction, root=True)[0]


@op(grad=_var_mean_grad, samples=_STATISTIC_SAMPLES)
@_quietly
def var_mean(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
    """The tuple ``(var, mean)`` over ``dim`` (see ``var``).

    >>> import tensormodes as tm
    >>> v, m = tm.var_mean(tm.tensor([1., 3., 5.]))
    >>> v.item(), m.item()
    (4.0, 3.0)
    """
    return _variance_and_mean("var_mean", input, dim, unbiased, keepdim, correction, root=False)


@op(grad=_std_mean_grad, samples=_STATISTIC_SAMPLES)
@_quietly
def std_mean(input: Tensor, dim: int | tuple[int, ...] | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
    """The tuple ``(std, mean)`` over ``dim`` (see ``std``).

    >>> import tensormodes as tm
    >>> s, m = tm.std_mean(tm.tensor([[1., 3.], [2., 2.]]), dim=1)
    >>> s.tolist(), m.tolist()
    ([1.4142135381698608, 0.0], [2.0, 2.0])
    """
    return _variance_and_mean("std_mean", input, dim, unbiased, keepdim, correction, root=True)


@op(grad=_logsumexp_grad, method=True, out=True,
    samples=(Sample((_M23, 1)), Sample((_M23, (0, 1))), Sample((_M23, -1, True)), Sample((_M23, [0], True)),
             Sample((TensorSpec((2, 3), "int64"), 1)), Sample((TensorSpec((3,), "bool"), 0)),
             Sample((TensorSpec((2, 3), "float16"), 0)), Sample((TensorSpec((2, 3), "complex64"), 1)),
             Sample((TensorSpec((2, 3), "float32", -100, 100), 1)), Sample((_SCALAR, 0)),
             Sample((TensorSpec((0, 3)), 0)), Sample((TensorSpec((2, 0)), 1))))
@_quietly
def logsumexp(input: Tensor, dim: int | tuple[int, ...], keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim``, computed stably (no overflow for large inputs).
    Integer inputs compute in the default float dtype.

    >>> import tensormodes as tm
    >>> tm.logsumexp(tm.tensor([1000., 1000.]), dim=0).item() > 1000
    True
    """
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' (position 2) must be tuple of ints, not NoneType")
    kind = _dtype_of(input)
    if not _is_floating_or_complex(kind):
        kind = dt.get_default_dtype()
    axis = _reduction_axes(dim, input.ndim, "logsumexp")
    work = input.astype(_accumulation_dtype(kind._np), copy=False)
    if work.size == 0:
        result = np.log(np.add.reduce(np.exp(work), axis=axis, keepdims=keepdim))
    else:
        # Shift by the largest (real part), so that exp cannot overflow; infinite
        # shifts are replaced by 0 so that inf - inf does not make NaN.
        shift = np.maximum.reduce(work.real, axis=axis, keepdims=True)
        shift = np.where(np.isfinite(shift), shift, 0).astype(shift.dtype, copy=False)
        total = np.add.reduce(np.exp(work - shift), axis=axis, keepdims=keepdim)
        result = np.log(total) + (shift if keepdim else shift.reshape(np.shape(total)))
    return np.asarray(result).astype(kind._np, copy=False)


# -- norms ----------------------------------------------------------------------------

def _norm_order_text(order) -> str:
    """An order as PyTorch prints it in messages: ``inf``, ``-1``, ``1.5``."""
    value = float(order)
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    return str(int(value)) if value == int(value) else repr(value)


def _norm_dtypes(kind: str, array: np.ndarray, dtype) -> dt.dtype:
    """The dtype a norm computes in (PyTorch's ``linalg`` checks); the result is its real part."""
    source = _dtype_of(array)
    if not _is_floating_or_complex(source):
        raise RuntimeError(f"linalg.{kind}: Expected a floating point or complex tensor as input. "
                           f"Got {scalar_type_name(source)}")
    target = resolve_dtype(dtype)
    if target is None:
        return source
    if not _is_floating_or_complex(target):
        raise RuntimeError(f"linalg.{kind}: dtype should be floating point or complex, but got "
                           f"{scalar_type_name(target)}")
    if source.is_complex != target.is_complex:
        wanted = "complex for complex" if source.is_complex else "real for real"
        raise RuntimeError(f"linalg.{kind}: dtype should be {wanted} inputs, but got {scalar_type_name(target)}")
    if dt.promote_types(source, target) is not target:
        raise RuntimeError(f"linalg.{kind}: the dtype of the input ({scalar_type_name(source)}) should be convertible "
                           f"without narrowing to the specified dtype ({scalar_type_name(target)})")
    return target


def _vector_norm(array: np.ndarray, order, dim, keepdim: bool, dtype) -> np.ndarray:
    if isinstance(order, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of norm.")
    order = float(order)
    target = _norm_dtypes("vector_norm", array, dtype)
    if _is_int(dim):
        dim = (dim,)
    axis = _reduction_axes(dim, array.ndim, "linalg_vector_norm")
    if order < 0 or order == float("inf"):
        # Orders computed by a min or max have no value over nothing.
        if array.size == 0 and axis is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_norm_order_text(order)} norm on an empty "
                               "tensor because the operation does not have an identity")
        for position, a in enumerate(axis or ()):
            if array.shape[a] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_norm_order_text(order)} norm on the "
                                   f"dimension {dim[position]}because this dimension is empty and the operation "
                                   "does not have an identity")
    work = array.astype(target._np, copy=False)
    work = np.abs(work.astype(_FLOAT32) if work.dtype in _LOW_PRECISION else work)
    if order == 2:
        result = np.sqrt(np.add.reduce(work * work, axis=axis, keepdims=keepdim))
    elif order == 1:
        result = np.add.reduce(work, axis=axis, keepdims=keepdim)
    elif order == float("inf"):
        result = np.maximum.reduce(work, axis=axis, keepdims=keepdim)
    elif order == float("-inf"):
        result = np.minimum.reduce(work, axis=axis, keepdims=keepdim)
    elif order == 0:
        result = np.add.reduce(work != 0, axis=axis, keepdims=keepdim, dtype=work.dtype)
    else:
        result = np.add.reduce(work ** order, axis=axis, keepdims=keepdim) ** (1 / order)
    return np.asarray(result).astype(target.to_real()._np, copy=False)


def _matrix_norm(array: np.ndarray, order: str, dim, keepdim: bool, dtype) -> np.ndarray:
    if order not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {order} not supported.")
    if array.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = (dim,) if _is_int(dim) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    rows, columns = wrap_dim(dims[0], array.ndim), wrap_dim(dims[1], array.ndim)
    if rows == columns:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({rows}, {columns})")
    if order == "nuc" and array.dtype in _LOW_PRECISION:
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. "
                           f"Got {scalar_type_name(_dtype_of(array))}")
    target = _norm_dtypes("matrix_norm", array, dtype)
    if order == "fro":
        return _vector_norm(array, 2, (rows, columns), keepdim, dtype)
    work = array.astype(target._np, copy=False)
    matrices = np.moveaxis(work, (rows, columns), (-2, -1))
    if matrices.size == 0:
        result = np.zeros(matrices.shape[:-2], target.to_real()._np)
    else:
        result = np.linalg.svd(matrices, compute_uv=False).sum(axis=-1)
    if keepdim:
        result = np.expand_dims(result, tuple(sorted((rows, columns))))
    return np.asarray(result).astype(target.to_real()._np, copy=False)


@op(grad=_norm_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, 0)), Sample((_M23, float("inf"), 1)),
             Sample((_M23, float("-inf"))), Sample((_M23, 3, (0, 1), True)), Sample((_M23, 0.5, -1)),
             Sample((_M23, "fro", 1, True)), Sample((_M23, "nuc")), Sample((_M234, "nuc", (2, 0), True)),
             Sample((_M23, None), {"dim": 0}), Sample((_M23, 2), {"dtype": dt.float64}),
             Sample((TensorSpec((2, 3), "float16"),)), Sample((TensorSpec((2, 3), "complex64"), 2, 1)),
             Sample((_SCALAR, 2, 0)), Sample((_M234, "fro", (0, 2)))))
@_quietly
def norm(input: Tensor, p: float | str | None = "fro", dim: int | tuple[int, ...] | None = None,
         keepdim: bool = False, dtype: dt.dtype | None = None) -> Tensor:
    """The ``p``-norm of ``input``, over all elements or over ``dim``.

    ``p`` may be a number (``inf``, ``-inf``, ``0`` - the count of nonzeros - or any
    real), ``'fro'`` (the 2-norm) or ``'nuc'`` (the nuclear norm of the matrices
    spanned by two dims). ``dtype`` (floating or complex, no narrower than the
    input) is the dtype computed in; the result is real.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[3., -4.], [0., 0.]])
    >>> x.norm().item(), x.norm(1).item(), x.norm(float('inf')).item()
    (5.0, 7.0, 4.0)
    >>> tm.norm(x, dim=1).tolist()
    [5.0, 0.0]
    """
    if isinstance(p, str):
        if p == "fro" and (dim is None or _is_int(dim) or len(dim) <= 2):
            return _vector_norm(input, 2, dim, keepdim, dtype)
        return _matrix_norm(input, p, tuple(range(input.ndim)) if dim is None else dim, keepdim, dtype)
    return _vector_norm(input, 2 if p is None else p, dim, keepdim, dtype)


# -- sorting and selection -------------------------------------------------------------

def _sort_indices(array: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along ``axis``: equal elements keep their order, NaN sorts
    as the largest (last ascending, first descending)."""
    values = _sortable(array)
    if not descending:
        return np.argsort(values, axis=axis, kind="stable")
    # Sorting the reversed array ascending and reversing the order gives a descending
    # order in which equal elements still keep their original order.
    reverse = _along(axis, slice(None, None, -1))
    reversed_order = np.argsort(values[reverse], axis=axis, kind="stable")
    return (values.shape[axis] - 1) - reversed_order[reverse]


def _check_sortable(array: np.ndarray) -> None:
    if array.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")


_SORT_SAMPLES = (Sample((_M23,)), Sample((_M23, 0)), Sample((_M23, -1, True)), Sample((_M23,), {"descending": True}),
                 Sample((_M23,), {"stable": True, "dim": 0}), Sample((_WIDE_INT, 1)),
                 Sample((TensorSpec((5,), "int64", -2, 2),), {"stable": True}),
                 Sample((TensorSpec((5,), "int64", -2, 2),), {"stable": True, "descending": True}),
                 Sample((TensorSpec((4,), "bool"),), {"stable": True}),
                 Sample((TensorSpec((2, 3), "float16"),)), Sample((TensorSpec((2, 3), "bfloat16"), 0, True)),
                 Sample((_SCALAR,)), Sample((TensorSpec((0, 3)), 0)))


@op(grad=_sort_grad, method=True, out=True, samples=_SORT_SAMPLES)
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False) -> Tensor:
    """The elements sorted along ``dim``, with the indices that sort them, as the named
    tuple ``(values, indices)``. The sort is always stable; NaN sorts as the largest.

    >>> import tensormodes as tm
    >>> tm.sort(tm.tensor([3, 1, 2]), descending=True)
    tensormodes.return_types.sort(
    values=tensor([3, 2, 1]),
    indices=tensor([0, 2, 1]))
    """
    _check_sortable(input)
    axis = _int_dim(dim, input.ndim, "sort")
    if input.ndim == 0:
        return RETURN_TYPES["sort"](input.copy(), np.zeros((), _INT64))
    indices = _sort_indices(input, axis, descending)
    return RETURN_TYPES["sort"](_gather(input, indices, axis), indices.astype(_INT64, copy=False))


@op(differentiable=False, method=True, out=True, samples=_SORT_SAMPLES)
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False) -> Tensor:
    """The indices (int64) that sort ``input`` along ``dim`` (stably; see ``sort``).

    >>> import tensormodes as tm
    >>> tm.tensor([[3, 1, 2], [0, 5, 4]]).argsort(dim=1)
    tensor([[1, 2, 0],
            [0, 2, 1]])
    """
    _check_sortable(input)
    axis = _int_dim(dim, input.ndim, "argsort")
    if input.ndim == 0:
        return np.zeros((), _INT64)
    return _sort_indices(input, axis, descending).astype(_INT64, copy=False)


@op(grad=_topk_grad, method=True, out=True,
    samples=(Sample((_M23, 2)), Sample((_M23, 1, 0)), Sample((_M23, 2), {"largest": False}),
             Sample((_M23, 3, -1, True, True)), Sample((_M234, 2, 1), {"sorted": True}), Sample((_WIDE_INT, 2)),
             Sample((TensorSpec((2, 3), "float16"), 1, 0, False)), Sample((_M23, 0)), Sample((_SCALAR, 1)),
             Sample((TensorSpec((0, 3)), 0, 0))))
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Tensor:  # noqa: A002
    """The ``k`` largest (or, with ``largest=False``, smallest) elements along ``dim``
    with their indices, as the named tuple ``(values, indices)``. NaN counts as the
    largest. Results always come sorted; the order of equal elements may differ
    from PyTorch's, which leaves it unspecified.

    >>> import tensormodes as tm
    >>> tm.topk(tm.tensor([1, 9, 4, 7]), 2)
    tensormodes.return_types.topk(
    values=tensor([9, 7]),
    indices=tensor([1, 3]))
    """
    if input.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if input.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    axis = _int_dim(dim, input.ndim, "topk")
    length = input.shape[axis] if input.ndim else 1
    if not _is_int(k):
        raise TypeError(f"topk(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    if not 0 <= k <= length:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return RETURN_TYPES["topk"](input.copy(), np.zeros((), _INT64))
    indices = _sort_indices(input, axis, largest)[_along(axis, slice(0, k))]
    values = _gather(input, indices, axis)
    return RETURN_TYPES["topk"](values, indices.astype(_INT64, copy=False))


def _check_median_dtype(array: np.ndarray, kernel: str) -> None:
    if array.dtype.kind in "bc":
        raise _not_implemented(kernel, array)


@op(grad=_median_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, 0, True)), Sample((TensorSpec((4, 3)), 0)),
             Sample((TensorSpec((3, 4), "int64", -1000, 1000), -1)), Sample((TensorSpec((2, 4), "float64"),)),
             Sample((TensorSpec((3, 2), "float16"), 0)), Sample((_SCALAR,)), Sample((_SCALAR, 0, True)),
             Sample((TensorSpec((0, 3)),)), Sample((TensorSpec((0, 3)), 1))))
def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The median (the lower of the two middle elements for an even count). Without
    ``dim`` a tensor; with ``dim`` the named tuple ``(values, indices)``. NaN
    propagates. Which index is returned among equal medians may differ from PyTorch's.

    >>> import tensormodes as tm
    >>> tm.median(tm.tensor([4, 1, 3, 2]))
    tensor(2)
    >>> tm.tensor([[4, 1, 3], [2, 9, 6]]).median(dim=1)
    tensormodes.return_types.median(
    values=tensor([3, 6]),
    indices=tensor([2, 2]))
    """
    if dim is None:
        if keepdim:
            raise TypeError('median() missing 1 required positional arguments: "dim"')
        _check_median_dtype(input, "median_cpu")
        return _median_of_all(input)
    _check_median_dtype(input, "median_out")
    axis = _single_axis(dim, input.ndim, "median")
    if axis is None:
        return RETURN_TYPES["median"](input.copy(), np.zeros((), _INT64))
    length = input.shape[axis]
    if length == 0:
        raise IndexError(f"median(): Expected reduction dim {axis} to have non-zero size.")
    values = _sortable(input)
    order = np.argsort(values, axis=axis, kind="stable")
    middle = (length - 1) // 2
    indices = order[_along(axis, slice(middle, middle + 1))]
    if values.dtype.kind == "f":
        # NaN sorts last: a slice holding NaN reports its first NaN.
        nan_count = np.add.reduce(np.isnan(values), axis=axis, keepdims=True, dtype=_INT64)
        if nan_count.any():
            position = np.where(nan_count > 0, length - nan_count, middle)
            indices = np.take_along_axis(order, position, axis=axis)
    result = _gather(input, indices, axis)
    if not keepdim:
        indices, result = indices.squeeze(axis), result.squeeze(axis)
    return RETURN_TYPES["median"](result, indices.astype(_INT64, copy=False))


@op(grad=_median_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, 0, True)), Sample((TensorSpec((3, 4), "float64"), -1)),
             Sample((TensorSpec((3, 4), "int64", -1000, 1000), -1)), Sample((TensorSpec((3, 2), "float16"), 0)),
             Sample((_SCALAR,)), Sample((_SCALAR, 0, True)), Sample((TensorSpec((0, 3)),))))
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The median ignoring NaN (NaN only where a slice has nothing else); otherwise as
    ``median``: a tensor without ``dim``, the named tuple ``(values, indices)`` with it.

    >>> import tensormodes as tm
    >>> tm.nanmedian(tm.tensor([4.0, float('nan'), 1.0, 3.0]))
    tensor(3.)
    """
    if dim is None:
        if keepdim:
            raise TypeError('nanmedian() missing 1 required positional arguments: "dim"')
        _check_median_dtype(input, "median_cpu")
        flat = _sortable(input).reshape(-1)
        if flat.dtype.kind == "f":
            flat = flat[~np.isnan(flat)]
        if not flat.size:  # empty, or all NaN: as median (NaN, or the lowest int for empty int tensors)
            return _median_of_all(input.reshape(-1)[:1])
        middle = (flat.size - 1) // 2
        return np.asarray(np.partition(flat, middle)[middle]).astype(input.dtype, copy=False)
    _check_median_dtype(input, "median_out")
    axis = _single_axis(dim, input.ndim, "nanmedian")
    if axis is None:
        return RETURN_TYPES["nanmedian"](input.copy(), np.zeros((), _INT64))
    if input.shape[axis] == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {axis} to have non-zero size.")
    order = _sort_indices(input, axis, False)  # NaN last
    values = _sortable(input)
    counted = np.add.reduce(~np.isnan(values), axis=axis, keepdims=True, dtype=_INT64) \
        if values.dtype.kind == "f" else np.full(np.shape(order[_along(axis, slice(0, 1))]), input.shape[axis])
    position = np.maximum(counted - 1, 0) // 2
    indices = np.take_along_axis(order, position, axis=axis)
    result = _gather(input, indices, axis)
    if not keepdim:
        indices, result = indices.squeeze(axis), result.squeeze(axis)
    return RETURN_TYPES["nanmedian"](result, indices.astype(_INT64, copy=False))


@op(grad=_selection_grad, differentiable=no_complex_autograd("kthvalue"), method=True, out=True,
    samples=(Sample((_M23, 2)), Sample((_M23, 1, 0, True)), Sample((TensorSpec((3, 4), "float64"), 4, -1)),
             Sample((TensorSpec((2, 5), "int64", -1000, 1000), 3)), Sample((TensorSpec((3, 2), "float16"), 1, 0)),
             Sample((_SCALAR, 1)), Sample((TensorSpec((0, 3)), 1, 1))))
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The ``k``-th smallest element along ``dim`` (``k`` counts from 1; NaN is the largest)
    and its index, as the named tuple ``(values, indices)``. Which index is returned among
    equal elements may differ from PyTorch's.

    >>> import tensormodes as tm
    >>> tm.kthvalue(tm.tensor([4, 1, 3, 2]), 2)
    tensormodes.return_types.kthvalue(
    values=tensor(2),
    indices=tensor(3))
    """
    axis = _int_dim(dim, input.ndim, "kthvalue")
    length = input.shape[axis] if input.ndim else 1
    if not _is_int(k):
        raise TypeError(f"kthvalue(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    if not 1 <= k <= length:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    if input.ndim == 0:  # any dtype: PyTorch's kernel is not reached
        return RETURN_TYPES["kthvalue"](input.copy(), np.zeros((), _INT64))
    if input.dtype.kind in "bc":
        raise _not_implemented("kthvalue_cpu", input)
    indices = _sort_indices(input, axis, False)[_along(axis, slice(k - 1, k))]
    values = _gather(input, indices, axis)
    if not keepdim:
        indices, values = indices.squeeze(axis), values.squeeze(axis)
    return RETURN_TYPES["kthvalue"](values, indices.astype(_INT64, copy=False))


@op(grad=_selection_grad, differentiable=no_complex_autograd("mode"), method=True, out=True,
    samples=(Sample((TensorSpec((3, 5), "int64", 0, 3),)), Sample((TensorSpec((4, 3), "int64", 0, 2), 0, True)),
             Sample((_M23, 1)), Sample((TensorSpec((6,), "bool"),)), Sample((_SCALAR,)),
             Sample((TensorSpec((3, 2), "float16"), 0))))
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence, as the named tuple ``(values, indices)``.

    >>> import tensormodes as tm
    >>> tm.mode(tm.tensor([[1, 2, 2, 3, 3], [4, 4, 1, 1, 0]]))
    tensormodes.return_types.mode(
    values=tensor([2, 1]),
    indices=tensor([2, 3]))
    """
    axis = _int_dim(dim, input.ndim, "mode")
    if input.ndim == 0:  # any dtype: PyTorch's kernel is not reached
        return RETURN_TYPES["mode"](input.copy(), np.zeros((), _INT64))
    if input.dtype.kind == "c":
        raise _not_implemented("mode_cpu", input)
    length = input.shape[axis]
    if length == 0:
        raise IndexError(f"mode(): Expected reduction dim {axis} to have non-zero size.")
    rows = np.moveaxis(_sortable(input), axis, -1).reshape(-1, length)
    ordered = np.sort(rows, axis=1)  # NaN last; each NaN its own run (NaN != NaN)
    starts = np.ones(ordered.shape, bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    runs = np.cumsum(starts, axis=1) - 1 + np.arange(rows.shape[0])[:, None] * length
    run_lengths = np.bincount(runs.reshape(-1), minlength=rows.size)[runs]
    best = np.argmax(run_lengths == run_lengths.max(axis=1, keepdims=True), axis=1)  # the smallest value
    chosen = ordered[np.arange(rows.shape[0]), best]
    same = (rows == chosen[:, None]) | (np.isnan(rows) & np.isnan(chosen)[:, None]) if rows.dtype.kind == "f" \
        else rows == chosen[:, None]
    last = length - 1 - np.argmax(same[:, ::-1], axis=1)
    kept_shape = np.moveaxis(input, axis, -1).shape[:-1]
    values = np.take_along_axis(np.moveaxis(input, axis, -1).reshape(-1, length), last[:, None],
                                axis=1).reshape(kept_shape)
    indices = last.astype(_INT64).reshape(kept_shape)
    if keepdim:
        values, indices = np.expand_dims(values, axis), np.expand_dims(indices, axis)
    return RETURN_TYPES["mode"](np.asarray(values), np.asarray(indices))


def _msort_grad(grad, input_shape, indices):
    if not input_shape:
        return grad
    return grad.new_zeros(tuple(input_shape)).scatter(0, indices, grad)


@op(grad=_msort_grad, saves=("indices",),
    samples=(Sample((_M23,)), Sample((TensorSpec((4,), "int64", -5, 5),)), Sample((_SCALAR,)),
             Sample((TensorSpec((3, 2), "float16"),))))
def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dimension (``sort(input, 0).values``).

    >>> import tensormodes as tm
    >>> tm.msort(tm.tensor([[3, 0], [1, 2]]))
    tensor([[1, 0],
            [3, 2]])
    """
    _check_sortable(input)
    if input.ndim == 0:
        return input.copy(), np.zeros((), _INT64)
    indices = _sort_indices(input, 0, False).astype(_INT64, copy=False)
    return _gather(input, indices, 0), indices


@op(grad=_nanmean_grad, method=True, out=True,
    samples=(Sample((_M23,)), Sample((_M23, 1)), Sample((_M23, (0, 1), True)),
             Sample((TensorSpec((3, 4), "float16"), 0)), Sample((_SCALAR, 0, True)),
             Sample((_M23, 1), {"dtype": dt.float64}), Sample((TensorSpec((0, 3)), 0))))
@_quietly
def nanmean(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,
            dtype: dt.dtype | None = None) -> Tensor:
    """The mean of the elements that are not NaN (NaN where there are none).

    >>> import tensormodes as tm
    >>> tm.nanmean(tm.tensor([1.0, float('nan'), 2.0]))
    tensor(1.5000)
    """
    if not _is_floating_or_complex(_dtype_of(input)):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{scalar_type_name(_dtype_of(input))}")
    total = nansum(input, dim, keepdim, dtype=dtype)
    counted = ~np.isnan(input)
    count = _sum_in(counted, _reduction_axes(dim, input.ndim, "nanmean"), keepdim, _dtype_of(total))
    return np.asarray(total / count)


def _median_of_all(array: np.ndarray) -> np.ndarray:
    flat = _sortable(array).reshape(-1)
    if flat.size == 0:
        # PyTorch reports NaN, which integer dtypes hold as their lowest value.
        fill = np.nan if array.dtype.kind not in "iu" else np.iinfo(array.dtype).min
        return np.full((), fill, array.dtype)
    middle = (flat.size - 1) // 2
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        return np.full((), np.nan, array.dtype)
    return np.asarray(np.partition(flat, middle)[middle]).astype(array.dtype, copy=False)


# -- searching, counting and uniques ---------------------------------------------------------

def _search_side(right: bool, side: str | None) -> str:
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        return side
    return "right" if right else "left"


def _searchable(array: np.ndarray, kernel: str) -> np.ndarray:
    if array.dtype.kind in "bc":
        raise _not_implemented(kernel, array)
    return _sortable(array)


@op(differentiable=False, out=True, samples=(
    Sample((TensorSpec((5,), "int64", 0, 0), TensorSpec((3,), "int64", -2, 8))),
    Sample((TensorSpec((4,), "float32", 0, 0), TensorSpec((2, 2))), {"right": True}),
    Sample((TensorSpec((2, 3), "float64", 0, 0), TensorSpec((2, 2), "float64")), {"side": "right"}),
    Sample((TensorSpec((4,), "int64", 0, 0), 3)), Sample((TensorSpec((4,), "int64", 0, 0), TensorSpec((3,), "int64")),
                                                          {"out_int32": True})))
def searchsorted(sorted_sequence: Tensor, values: Tensor | Number, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each of ``values`` would be inserted into ``sorted_sequence`` (sorted along its last
    dimension, which is searched; leading dimensions match ``values``') to keep it sorted:
    before equal elements, or after them with ``right=True`` / ``side='right'``.

    >>> import tensormodes as tm
    >>> tm.searchsorted(tm.tensor([1, 3, 5, 7]), tm.tensor([3, 6, 9]))
    tensor([1, 3, 4])
    """
    which = _search_side(right, side)
    if sorter is not None:
        if sorter.shape != sorted_sequence.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(sorted_sequence.shape)}and got sorter tensor {list(sorter.shape)}")
        sorted_sequence = np.take_along_axis(sorted_sequence, sorter, axis=-1)
    scalar = not isinstance(values, np.ndarray)
    query = np.asarray(values) if scalar else values
    if sorted_sequence.ndim > 1 and sorted_sequence.shape[:-1] != query.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor {list(query.shape)}")
    boundaries = _searchable(sorted_sequence, "searchsorted_out_cpu")
    query = _searchable(query, "searchsorted_out_cpu")
    index_type = np.int32 if out_int32 else _INT64
    if boundaries.ndim == 1:
        return np.asarray(np.searchsorted(boundaries, query, side=which)).astype(index_type)
    rows = boundaries.reshape(-1, boundaries.shape[-1])
    questions = query.reshape(rows.shape[0], -1)
    found = np.stack([np.searchsorted(r, q, side=which) for r, q in zip(rows, questions)]) if rows.shape[0] else \
        np.zeros(questions.shape, _INT64)
    return found.reshape(query.shape).astype(index_type)


@op(differentiable=False, out=True, samples=(
    Sample((TensorSpec((3,), "int64", -2, 8), TensorSpec((5,), "int64", 0, 0))),
    Sample((TensorSpec((2, 2)), TensorSpec((4,), "float32", 0, 0)), {"right": True}),
    Sample((TensorSpec((3,), "int64", -2, 8), TensorSpec((5,), "int64", 0, 0)), {"out_int32": True})))
def bucketize(input: Tensor | Number, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The index of the bucket each element of ``input`` falls into, among the sorted 1-D
    ``boundaries`` (``searchsorted(boundaries, input)``).

    >>> import tensormodes as tm
    >>> tm.bucketize(tm.tensor([3, 6, 9]), tm.tensor([1, 3, 5, 7]))
    tensor([1, 3, 4])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@op(differentiable=False, samples=(
    Sample((TensorSpec((6,), "int64", 0, 4),)), Sample((TensorSpec((4,), "int64", 0, 3), TensorSpec((4,)))),
    Sample((TensorSpec((4,), "uint8", 0, 3),), {"minlength": 6}), Sample((TensorSpec((0,), "int64"),)),
    Sample((TensorSpec((3,), "int64", 0, 2), TensorSpec((3,), "int64", 0, 5)))))
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in the 1-D non-negative integer ``input`` (at least
    ``minlength`` counts), or the sums of ``weights`` per value (float64 unless float32).

    >>> import tensormodes as tm
    >>> tm.bincount(tm.tensor([0, 1, 1, 3]))
    tensor([1, 2, 0, 1])
    """
    if input.dtype.kind not in "iub" or input.dtype.kind == "b":
        raise _not_implemented("bincount_cpu", input)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or (input.size and input.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return np.bincount(input, minlength=minlength).astype(_INT64)
    result_type = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(input, weights.astype(np.float64), minlength=minlength).astype(result_type)


@op(differentiable=False, out=True, samples=(
    Sample((TensorSpec((6,)),), {"bins": 4}), Sample((TensorSpec((5,), "float64"), 3, -1, 1)),
    Sample((TensorSpec((2, 3)), 5, 0, 0)), Sample((TensorSpec((0,)), 2))))
def histc(input: Tensor, bins: int = 100, min: Number = 0, max: Number = 0) -> Tensor:  # noqa: A002
    """A histogram of ``input`` with ``bins`` equal bins over ``[min, max]`` (the data's range
    when both are 0); elements outside are ignored.

    >>> import tensormodes as tm
    >>> tm.histc(tm.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if input.dtype.kind not in "f" and input.dtype != _BFLOAT16:
        raise _not_implemented("histogram_cpu", input)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    values = input.reshape(-1).astype(np.float64)
    if low == high and values.size:
        low, high = float(values.min()), float(values.max())
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{_number(low)}, {_number(high)}] is not finite")
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = np.histogram(values, bins=bins, range=(low, high))
    return counts.astype(input.dtype)


def _number(value: float) -> str:
    """A float as C++ streams print it (``1``, ``2.5``, ``inf``)."""
    return f"{value:g}"


def _unique_along(input: np.ndarray, dim, consecutive: bool):
    """(values, inverse, counts) of the distinct elements (or slices along ``dim``), sorted,
    or in order for runs of equal neighbours when ``consecutive``."""
    if dim is None:
        flat = input.reshape(-1)
        if consecutive:
            starts = np.ones(flat.shape, bool)
            starts[1:] = flat[1:] != flat[:-1]
            inverse = np.cumsum(starts) - 1
            return flat[starts], inverse.reshape(input.shape), np.diff(np.append(np.flatnonzero(starts), flat.size))
        # Each NaN is distinct, as in PyTorch.
        values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True, equal_nan=False)
        return values, inverse.reshape(input.shape), counts
    axis = wrap_dim(dim, input.ndim)
    moved = np.moveaxis(input, axis, 0)
    rows = moved.reshape(moved.shape[0], -1)
    if consecutive:
        starts = np.ones(rows.shape[0], bool)
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        inverse = np.cumsum(starts) - 1
        counts = np.diff(np.append(np.flatnonzero(starts), rows.shape[0]))
        kept = moved[starts]
    else:
        _, first, inverse, counts = np.unique(rows, axis=0, return_index=True, return_inverse=True,
                                              return_counts=True)
        kept = moved[first]
    return np.moveaxis(kept, 0, axis), inverse.reshape(-1), counts


def _unique_result(values, inverse, counts, return_inverse: bool, return_counts: bool):
    result = (values,)
    if return_inverse:
        result += (inverse.astype(_INT64),)
    if return_counts:
        result += (counts.astype(_INT64),)
    return result[0] if len(result) == 1 else result


@op(differentiable=False, samples=(
    Sample((TensorSpec((6,), "int64", 0, 3),)), Sample((TensorSpec((2, 3), "int64", 0, 2),),
                                                       {"return_inverse": True, "return_counts": True}),
    Sample((TensorSpec((4, 2), "int64", 0, 1),), {"dim": 0, "return_counts": True}), Sample((TensorSpec((5,)),)),
    Sample((TensorSpec((4,), "bool"),), {"sorted": False})))
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None) -> Tensor:
    """The distinct elements of ``input`` (or its distinct slices along ``dim``), sorted; with
    ``return_inverse`` also where each element went, with ``return_counts`` how often each occurs.

    >>> import tensormodes as tm
    >>> tm.unique(tm.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    if input.dtype.kind == "c":
        raise _not_implemented("unique", input)
    return _unique_result(*_unique_along(_sortable(input) if dim is None else input, dim, False),
                          return_inverse, return_counts)


@op(differentiable=False, samples=(
    Sample((TensorSpec((8,), "int64", 0, 1),), {"return_inverse": True, "return_counts": True}),
    Sample((TensorSpec((4, 2), "int64", 0, 1),), {"dim": 0}), Sample((TensorSpec((3,)),))))
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Tensor:
    """``input`` with each run of equal neighbours (or equal slices along ``dim``) kept once;
    with ``return_inverse`` also each element's run, with ``return_counts`` the runs' lengths.

    >>> import tensormodes as tm
    >>> tm.unique_consecutive(tm.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    return _unique_result(*_unique_along(input, dim, True), return_inverse, return_counts)


# -- quantiles ---------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_grad(grad, input, q, input_shape, low_index, high_index, low_weight, high_weight, q_span,
                   needs_input_grad):
    # Each quantile mixes two elements of the input (flat positions handed over by the kernel,
    # as PyTorch's composite keeps its sort's indices): the gradient goes back to both. With
    # linear interpolation a q tensor moves the mix (the weight grows by q_span per unit of q):
    # then input and q are saved (save_only_for), and the weights written as functions of q.
    if needs_input_grad[1]:
        q_spread = q.reshape((-1,) + (1,) * (grad.dim() - 1)) if q.dim() else q
        high_weight = high_weight + (q_spread - q_spread.detach()) * q_span
        low_weight = 1 - high_weight
    grad_input = grad_q = None
    if needs_input_grad[0]:
        size = math.prod(input_shape)
        flat = grad.new_zeros(size).index_add(0, low_index.reshape(-1), (grad * low_weight).reshape(-1))
        grad_input = flat.index_add(0, high_index.reshape(-1), (grad * high_weight).reshape(-1)).reshape(input_shape)
    if needs_input_grad[1]:
        values = input.reshape(-1)
        moved = grad * (values[high_index] - values[low_index]) * q_span
        grad_q = moved.reshape(q.shape[0], -1).sum(1) if q.dim() else moved.sum()
    return grad_input, grad_q


def _quantiles(input: np.ndarray, q, dim, keepdim: bool, interpolation: str, name: str, skip_nan: bool):
    """``(result, low_index, high_index, low_weight, high_weight, q_span)`` for quantile /
    nanquantile: each result mixes the input's elements at flat positions ``low_index`` and
    ``high_index`` with those weights; the high weight grows by ``q_span`` per unit of ``q``."""
    if not isinstance(q, np.ndarray) and not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if input.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if isinstance(q, np.ndarray) and q.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, np.ndarray):
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if np.any((q < 0) | (q > 1)):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    # The reduced elements last: (kept dimensions..., n).
    positions = np.arange(input.size).reshape(input.shape)
    axis = None if dim is None else _int_dim(dim, input.ndim, name)
    if axis is None or input.ndim == 0:
        values, positions = input.reshape(-1), positions.reshape(-1)
    else:
        values, positions = np.moveaxis(input, axis, -1), np.moveaxis(positions, axis, -1)
    order = np.argsort(values, axis=-1, kind="stable")  # NaN last
    ordered, ordered_positions = np.take_along_axis(values, order, -1), np.take_along_axis(positions, order, -1)
    n = ordered.shape[-1]
    nan_count = np.isnan(ordered).sum(-1, keepdims=True)
    # A slice with NaN gives NaN (quantile), or with nothing but NaN (nanquantile): its last element.
    span = n - nan_count - 1 if skip_nan else np.full(nan_count.shape, n - 1)
    to_nan = nan_count == n if skip_nan else nan_count > 0
    ranks = np.where(to_nan, float(n - 1), span * np.asarray(q, np.float64).reshape(-1))  # (..., quantiles)
    low, high = np.floor(ranks).astype(np.int64), np.ceil(ranks).astype(np.int64)
    weight = ranks - low
    if interpolation == "lower":
        high, weight = low, weight * 0
    elif interpolation == "higher":
        low, weight = high, weight * 0
    elif interpolation == "nearest":
        low = high = np.round(ranks).astype(np.int64)  # half to even, as PyTorch
        weight = weight * 0
    elif interpolation == "midpoint":
        weight = np.where(high > low, 0.5, 0.0)
    low_values, high_values = np.take_along_axis(ordered, low, -1), np.take_along_axis(ordered, high, -1)
    q_span = np.where(to_nan, 0, span) * 1.0 if interpolation == "linear" else weight * 0
    parts = (low_values + (high_values - low_values) * weight, np.take_along_axis(ordered_positions, low, -1),
             np.take_along_axis(ordered_positions, high, -1), 1 - weight, weight, np.broadcast_to(q_span, weight.shape))

    def shaped(array: np.ndarray) -> np.ndarray:
        array = np.moveaxis(array, -1, 0)  # the quantiles first, then the kept dimensions
        if keepdim:
            if axis is None:
                array = array.reshape((array.shape[0],) + (1,) * input.ndim)
            elif input.ndim:
                array = np.expand_dims(array, axis + 1)
        return np.array(array if isinstance(q, np.ndarray) and q.ndim else array[0], order="C")

    result, low_index, high_index, low_weight, high_weight, q_span = map(shaped, parts)
    dtype = input.dtype
    return (result.astype(dtype), low_index.astype(_INT64), high_index.astype(_INT64), low_weight.astype(dtype),
            high_weight.astype(dtype), q_span.astype(dtype))


_QUANTILE_SAMPLES = (
    Sample((TensorSpec((2, 5)), 0.3)), Sample((TensorSpec((2, 5), "float64"), TensorSpec((3,), "float64", 0, 1), 1)),
    Sample((TensorSpec((3, 4)), TensorSpec((2,), "float32", 0, 1), 0, True)), Sample((TensorSpec((6,)), 1.0)),
    Sample((TensorSpec((2, 3)), 0.5), {"keepdim": True}), Sample((_SCALAR, 0.5)),
    Sample((TensorSpec((4, 3), "float64"), 0.4, -1), {"interpolation": "lower"}),
    Sample((TensorSpec((4, 3)), 0.6, 0), {"interpolation": "higher"}),
    Sample((TensorSpec((5,)), TensorSpec((3,), "float32", 0, 1))), Sample((TensorSpec((5,)), 0.5),
                                                                          {"interpolation": "midpoint"}),
    Sample((TensorSpec((5,)), 0.625), {"interpolation": "nearest"}))


@op(grad=_quantile_grad, method=True, saves=("low_index", "high_index", "low_weight", "high_weight", "q_span"),
    save_only_for={"input": "q", "q": "q"},
    samples=_QUANTILE_SAMPLES)
def quantile(input: Tensor, q: Tensor | Number, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles of ``input`` (of all elements, or along ``dim``), interpolating
    between the two nearest ranks as ``interpolation`` says; a 1-D ``q`` gives a leading
    dimension of quantiles. NaN propagates.

    >>> import tensormodes as tm
    >>> tm.quantile(tm.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)
    tensor(2.5000)
    """
    result, *handed = _quantiles(input, q, dim, keepdim, interpolation, "quantile", skip_nan=False)
    return (result, *handed)


@op(grad=_quantile_grad, method=True, saves=("low_index", "high_index", "low_weight", "high_weight", "q_span"),
    save_only_for={"input": "q", "q": "q"},
    samples=_QUANTILE_SAMPLES)
def nanquantile(input: Tensor, q: Tensor | Number, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaN (NaN only where a slice has nothing else).

    >>> import tensormodes as tm
    >>> tm.nanquantile(tm.tensor([1.0, float('nan'), 3.0]), 0.5)
    tensor(2.)
    """
    result, *handed = _quantiles(input, q, dim, keepdim, interpolation, "nanquantile", skip_nan=True)
    return (result, *handed)


# -- integration -------------------------------------------------------------------------------

def _pad_along(x, d: int, before: bool):
    """``x`` with one zero slice added along ``d``, before or after (public ops only)."""
    shape = list(x.shape)
    shape[d] = 1
    zeros = x.new_zeros(shape)
    return public("cat")([zeros, x] if before else [x, zeros], d)


def _trapezoid_grad(grad, y, x, y_shape, x_shape, dx, dim, needs_input_grad):
    # result = sum over k of (y[k] + y[k + 1]) / 2 * (x[k + 1] - x[k]): each y[k] gets half of
    # the spacings on its sides; each x[k] the mean of the pair before it less that after it.
    # y is saved only for x's gradient and x only for y's (save_only_for).
    ndim = len(y_shape)
    d = wrap_dim(dim, ndim)
    n = y_shape[d]
    if n < 2:
        return grad.new_zeros(y_shape), (None if x_shape is None else grad.new_zeros(x_shape))
    spread = grad.unsqueeze(d)
    grad_y = grad_x = None
    if needs_input_grad[0]:
        if x_shape is None:
            spacing = 1 if dx is None else dx
        else:
            full = x if len(x_shape) == ndim else x.reshape([n if axis == d else 1 for axis in range(ndim)])
            spacing = _conj(full.narrow(d, 1, n - 1) - full.narrow(d, 0, n - 1))
        pairs_shape = [n - 1 if axis == d else size for axis, size in enumerate(y_shape)]
        halves = (spread * spacing * 0.5).expand(pairs_shape)
        grad_y = _pad_along(halves, d, True) + _pad_along(halves, d, False)
    if x_shape is not None and needs_input_grad[1]:
        means = spread * _conj(y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5
        grad_x = _pad_along(means, d, True) - _pad_along(means, d, False)
        if len(x_shape) != ndim:  # a 1-D x: summed over y's other dimensions
            grad_x = grad_x.movedim(d, -1).reshape(-1, n).sum(0)
    return grad_y, grad_x


@op(grad=_trapezoid_grad, save_only_for={"y": "x", "x": "y"}, samples=(
    Sample((TensorSpec((5,)),)), Sample((TensorSpec((2, 3)), TensorSpec((3,)))), Sample((TensorSpec((3, 2)),),
                                                                                      {"dx": 0.5, "dim": 0}),
    Sample((TensorSpec((2, 3), "float64"), TensorSpec((2, 3), "float64")), {"dim": 1}),
    Sample((TensorSpec((4,), "int64"),)), Sample((TensorSpec((1,)),)), Sample((TensorSpec((3, 2)), TensorSpec((3,))),
                                                                          {"dim": 0})))
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Number | None = None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at the sample points ``x``
    (1-D, or shaped like ``y``) or spaced ``dx`` apart (1 by default).

    >>> import tensormodes as tm
    >>> tm.trapezoid(tm.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx cannot both be given")
    if y.dtype == np.bool_:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    if x is not None and ((x.ndim == 1 and x.shape[0] != n) or (x.ndim != 1 and x.shape[d - y.ndim] != n)):
        raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
    values = y if y.dtype.kind in "fc" or y.dtype == _BFLOAT16 else y.astype(dt.get_default_dtype()._np)
    if x is not None and x.dtype.kind not in "fc" and x.dtype != _BFLOAT16:
        x = x.astype(dt.get_default_dtype()._np)
    if n < 2:
        dtype = values.dtype if x is None else operand_dtype(values, x)._np
        return np.zeros(values.shape[:d] + values.shape[d + 1:], dtype)
    pairs = (np.delete(values, 0, d) + np.delete(values, -1, d)) / 2
    if x is None:
        return np.asarray(pairs.sum(d) * (1 if dx is None else dx), dtype=values.dtype)
    full = x if x.ndim != 1 else x.reshape([n if axis == d else 1 for axis in range(y.ndim)])
    spacing = np.diff(full, axis=d - y.ndim if full.ndim != y.ndim else d)
    return np.asarray((pairs * spacing).sum(d))
