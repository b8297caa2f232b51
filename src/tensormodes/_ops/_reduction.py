"""Helpers shared by the reduction families (``reduction``, ``scans``, ``statistics``, ``sorting``): dims
and dtypes of reductions, float32 accumulation of float16 and bfloat16, and PyTorch's errors;
the gradients of extrema and of p-norms (``norm``, ``linalg``'s norms and ``cdist`` use them).

Results follow PyTorch's dtypes: integer and bool sums, products and scans give
int64, means and statistics need floating inputs, index results are int64.
Float16 and bfloat16 sums and statistics accumulate in float32, as PyTorch's
CPU kernels do, and are rounded to the input's dtype at the end.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import (
    along,
    dispatch_listens,
    dtype_of,
    is_int,
    ops,
    quiet,
    recordable,
    resolve_dtype,
    scalar_type_name,
    wrap_dim,
    wrap_dims,
)
from .meta_rules import MetaRule, probe, reduction, with_shape
from .registry import TensorSpec

# Index-returning ops are compared with PyTorch index for index: values drawn
# from a wide range make ties (whose order PyTorch leaves unspecified) unlikely.
_WIDE_INT = TensorSpec((2, 3), "int64", -1000, 1000)
_INT64 = np.dtype(np.int64)
_FLOAT32 = np.dtype(np.float32)
_BFLOAT16 = dt.bfloat16._np

# Dtypes that PyTorch's CPU kernels accumulate in float32.
_LOW_PRECISION = frozenset({np.dtype(np.float16), _BFLOAT16})



# -- helpers -----------------------------------------------------------------------------


def _not_implemented(kernel: str, array: np.ndarray) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(dtype_of(array))}\'')


def _is_floating_or_complex(d: dt.dtype) -> bool:
    return d.is_floating_point or d.is_complex


def _check_dims(dim, op_name: str) -> None:
    """TypeError, worded like PyTorch's, unless ``dim`` is an int or a sequence of ints."""
    if is_int(dim):
        return
    if not isinstance(dim, (list, tuple)):
        raise TypeError(f"{op_name}(): argument 'dim' must be tuple of ints, not {type(dim).__name__}")
    for position, d in enumerate(dim):
        if not is_int(d):
            raise TypeError(f"{op_name}(): argument 'dim' must be tuple of ints, but found element of type "
                            f"{type(d).__name__} at pos {position}")


def _reduction_axes(dim, ndim: int, op_name: str) -> tuple[int, ...] | None:
    """``dim`` (None, an int or a sequence; empty means every dim) as a NumPy ``axis``."""
    if dim is None:
        return None
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, without the general checks
        return (dim % ndim,)
    _check_dims(dim, op_name)
    if not is_int(dim) and len(dim) == 0:
        return None
    axes = wrap_dims(dim, ndim)
    # A 0-dim tensor accepts dim 0 / -1, but NumPy has no axis to reduce.
    return axes if ndim else None


def _int_dim(dim, ndim: int, op_name: str, position: int | None = None) -> int:
    """An int ``dim`` wrapped; TypeError, worded like PyTorch's, for anything else (naming the
    argument's ``position`` where PyTorch does: ops without a Dimname overload)."""
    if not is_int(dim):
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


def _gather(array: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """The elements of ``array`` at ``indices`` along ``axis`` (``take_along_axis``, fast for 1-D)."""
    return array[indices] if array.ndim == 1 else np.take_along_axis(array, indices, axis=axis)


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


def _sum_in(array: np.ndarray, axis, keepdim: bool, target: dt.dtype) -> np.ndarray:
    """The sum of ``array`` cast to ``target`` (PyTorch casts first, then sums)."""
    work = array if array.dtype == target._np else array.astype(target._np)
    if work.dtype in _LOW_PRECISION:
        return np.asarray(np.add.reduce(work, axis=axis, keepdims=keepdim, dtype=_FLOAT32)).astype(target._np)
    # NumPy would widen small integers and bool; only floats may go without ``dtype`` (faster).
    accumulate = None if work.dtype.kind in "fc" else work.dtype
    return np.asarray(np.add.reduce(work, axis=axis, keepdims=keepdim, dtype=accumulate))


def _accumulation_dtype(np_dtype: np.dtype) -> np.dtype:
    return _FLOAT32 if np_dtype in _LOW_PRECISION else np_dtype


def _recordable_dtype(*arguments) -> bool:
    """``differentiable=`` of reductions and scans whose last parameter is ``dtype=`` (asked only
    for calls that would be recorded): PyTorch's autograd refuses an integer or bool result."""
    return arguments[-1] is None or recordable(resolve_dtype(arguments[-1]))


def _sum_dtype(array: np.ndarray, dtype) -> dt.dtype:
    """``dtype=`` if given, else int64 for integer and bool inputs, else the array's dtype."""
    target = resolve_dtype(dtype)
    if target is not None:
        return target
    return dt.int64 if array.dtype.kind in "biu" else dtype_of(array)


# -- gradient formulas (run on Tensors; see registry.op) -----------------------------------------

def _unreduce(grad, shape, dim, keepdim: bool):
    """``grad`` of a reduction over ``dim`` broadcast back to the input's ``shape``."""
    shape = tuple(shape)
    if not keepdim and dim is not None and dim != () and grad.dim() < len(shape):
        for d in sorted(wrap_dims(dim, len(shape))):
            grad = grad.unsqueeze(d)
    return grad.expand(shape)


def _restored(grad, ndim: int, dim, keepdim: bool):
    """``grad`` of a reduction over ``dim`` with the reduced dimensions back as size 1 (PyTorch's
    ``unsqueeze_multiple``), for formulas that let broadcasting do the rest (no ``expand``)."""
    if not keepdim and not _all_dims(dim) and grad.dim() < ndim:
        for d in sorted(wrap_dims(dim, ndim)):
            grad = grad.unsqueeze(d)
    return grad


def _reshaped_back(grad, ndim: int, dims: list[int], keepdim: bool):
    """PyTorch's ``restore_reduced_dims``: ``grad`` reshaped to the input's rank, size 1 where
    ``dims`` were reduced."""
    if keepdim:
        return grad
    sizes = iter(grad.shape)
    return grad.reshape([1 if d in dims else next(sizes) for d in range(ndim)])


def _all_dims(dim) -> bool:
    return dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)


def _evenly_distribute_backward(grad, input, result):
    """Gradient of a full ``max``/``min``/``median``, as PyTorch's: shared evenly among the
    elements equal to the result (the NaNs, when the result is NaN), exactly zero elsewhere."""
    mask = (input == result) | (input.isnan() & result.isnan())
    return ops.zeros_like(input).masked_fill(mask, grad / mask.sum())


def _distribute_evenly(grad, input, result, dim, keepdim):
    """Gradient of an extremum: shared evenly among the elements that attain it (PyTorch's
    ``scale_grad_by_count``, for ``amax``/``amin`` and reductions along dims: NaN where no element
    equals the result; see ``_evenly_distribute_backward`` for the full max/min/median). Op for op
    PyTorch's: gradient and result reshaped back, the count kept as a size-1 dimension."""
    ndim = input.dim()
    dims = list(range(ndim)) if _all_dims(dim) else sorted(wrap_dims(dim, ndim))
    mask = _reshaped_back(result, ndim, dims, keepdim) == input
    return _reshaped_back(grad, ndim, dims, keepdim) / mask.sum(dims, keepdim=True) * mask


def _norm_grad(grad, input, result, p, dim, keepdim):
    if p in (0, 0.0):
        return None  # a count of nonzeros: no gradient at all (PyTorch leaves .grad None)
    if result.dtype is input.dtype:
        # Reduced dims restored, broadcasting doing the rest (PyTorch's unsqueeze_multiple; no expand)
        full_grad = _restored(grad, input.dim(), dim, keepdim)
        full_norm = _restored(result, input.dim(), dim, keepdim)
    else:  # (a norm computed in another dtype: expanded, a 0-d norm would not promote the input)
        full_grad = _unreduce(grad, input.shape, dim, keepdim)
        full_norm = _unreduce(result, input.shape, dim, keepdim)
    if p == "nuc":
        # The nuclear norm is the sum of singular values, whose gradient is U @ Vh.
        rows, columns = (0, 1) if dim is None else wrap_dims(dim, input.dim())
        u, _, vh = ops.linalg.svd(input.movedim((rows, columns), (-2, -1)), full_matrices=False)
        return full_grad * (u @ vh).movedim((-2, -1), (rows, columns))
    if p in ("fro", None):
        p = 2
    if not isinstance(p, (int, float)):
        raise NotImplementedError(f"the gradient of norm with p={p!r} is not implemented")
    return _p_norm_grad(full_grad, input, full_norm, p, dim)


def _p_norm_grad(full_grad, input, full_norm, p: float, dim):
    """PyTorch's gradient of a ``p``-norm (``p`` a nonzero number), ``full_grad`` and
    ``full_norm`` broadcast to the input's shape.

    Where a formula would divide by a zero norm or raise a zero element to a negative power
    the gradient is 0, as PyTorch defines it (its subgradient at the kink). The denominators
    are masked before dividing, not only the quotients after, so that a second derivative
    of these formulas is finite there too.
    """
    if p == 1:
        return full_grad * input.sgn()
    if p in (float("inf"), float("-inf")):
        # amax / amin of |x|, the gradient shared among the elements attaining it; a NaN
        # element attains a NaN norm.
        absolute = input.abs()
        mask = (absolute == full_norm).logical_or(absolute.isnan())
        dims = list(range(input.dim())) if _all_dims(dim) else list(wrap_dims(dim, input.dim()))
        return input.sgn() * (full_grad / mask.sum(dims, keepdim=True) * mask)
    if p == 2 and dispatch_listens(full_grad) and not ops.is_grad_enabled():
        # PyTorch's form, where no second derivative is taken: the same values (0 where the norm is)
        return full_grad * (input / full_norm).masked_fill_(full_norm == 0, 0)
    zero_norm = full_norm == 0
    if p == 2:
        return full_grad * (input / full_norm.masked_fill(zero_norm, 1)).masked_fill(zero_norm, 0)
    absolute = input.abs()
    if p < 1:
        # |x|^(p-1) is infinite at x == 0 (for p < 1): its term is 0 there, and a zero
        # element of a negative-order norm makes the norm 0, so norm^(1-p) zeroes the rest.
        zero = input == 0
        scaled = input.sgn() * absolute.masked_fill(zero, 1).pow(p - 1).masked_fill(zero, 0)
        return scaled * full_grad * full_norm.pow(1 - p)
    scale = (full_grad / full_norm.masked_fill(zero_norm, 1).pow(p - 1)).masked_fill(zero_norm, 0)
    if p < 2:
        return input.sgn() * absolute.pow(p - 1) * scale
    return input * absolute.pow(p - 2) * scale


def _scatter_back(grad_values, shape, indices, dim, keepdim):
    """Gradient of an op that picked ``indices`` along ``dim`` from an input of ``shape``
    (max/min/sort/topk/median)."""
    d = wrap_dim(dim, len(shape))
    if not keepdim and grad_values.dim() < len(shape):
        grad_values = grad_values.unsqueeze(d)
        indices = indices.unsqueeze(d)
    return grad_values.new_zeros(tuple(shape)).scatter(d, indices, grad_values)


def _selection_grad(grad, input_shape, result1, dim, keepdim):
    """Gradient of an op that picked one element along ``dim`` (its index in ``result1``, the indices
    output, saved alone)."""
    if not input_shape:
        return grad[0]
    return _scatter_back(grad[0], input_shape, result1, dim, keepdim)


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


# -- sorting and selection -------------------------------------------------------------

def _sort_indices(array: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along ``axis``: equal elements keep their order, NaN sorts
    as the largest (last ascending, first descending)."""
    values = _sortable(array)
    if not descending:
        return np.argsort(values, axis=axis, kind="stable")
    # Sorting the reversed array ascending and reversing the order gives a descending
    # order in which equal elements still keep their original order.
    reverse = along(axis, slice(None, None, -1))
    reversed_order = np.argsort(values[reverse], axis=axis, kind="stable")
    return (values.shape[axis] - 1) - reversed_order[reverse]


# -- meta rules (see _meta) -------------------------------------------------------------------

def _quiet_meta(meta_rule: MetaRule) -> MetaRule:
    """``meta_rule`` without the warnings its probes may raise: a probe's sizes are not the
    input's, so a warning about them (degrees of freedom, empty slices) would be spurious."""

    def compute(opdef, args, kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return meta_rule(opdef, args, kwargs)

    return MetaRule(compute, meta_rule.__name__)


def _reduce_meta(dims=None) -> MetaRule:
    """The ``reduction`` family rule, quiet (see ``_quiet_meta``)."""
    return _quiet_meta(reduction(dims))


def _dim_defaulting(default):
    """A ``reduction`` dims function for ops whose ``dim`` defaults to ``default`` (not None)."""

    def dims(arguments, ndim: int):
        return wrap_dims(arguments.get("dim", default), max(ndim, 1))

    return dims


def _kept_shape(shape: tuple, axes, keepdim: bool) -> tuple:
    """``shape`` after reducing ``axes`` (None: all of them), keeping them as 1 if ``keepdim``."""
    if axes is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _probe_quietly(kernel, *args, **kwargs):
    """``kernel`` run on probes of its MetaArray arguments (sizes clamped to 1), warnings off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel(*probe(args), **{k: probe(v) for k, v in kwargs.items()})


def _is_array(value) -> bool:
    return type(value) is MetaArray or isinstance(value, np.ndarray)


def _kernel_rule(function) -> MetaRule:
    """An op's own meta rule, as ``_meta.rule``, whose ``function`` also takes the op's kernel
    first (to probe it: the kernel's own checks and dtypes, its own name in messages)."""
    return MetaRule(lambda opdef, args, kwargs: function(opdef.kernel, *args, **kwargs), function.__name__)


def _checked_meta(checks, shape):
    """A meta rule running ``checks(*args, **kwargs)`` (the kernel's checks) on the MetaArrays,
    then a probe for the dtype; ``shape(*args, **kwargs)`` is the result's shape."""

    def compute(kernel, *args, **kwargs):
        checks(*args, **kwargs)
        return with_shape(_probe_quietly(kernel, *args, **kwargs), shape(*args, **kwargs))

    compute.__name__ = f"{shape.__name__}_meta"
    return _kernel_rule(compute)


def _no_checks(*args, **kwargs) -> None:
    """For kernels whose checks do not depend on sizes: the probe raises their errors."""


# -- PyTorch's cascaded sums in a half type (nll_loss's reductions) --------------------------------

def _rounded_sum(items: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``0 + items[..., 0] + items[..., 1] + ...`` along the last axis, each addition rounded to
    ``dtype`` (float32 values of a half type): C++'s ``+=`` on c10's half types."""
    total = np.zeros(items.shape[:-1], np.float32)
    for k in range(items.shape[-1]):
        total = (total + items[..., k]).astype(dtype).astype(np.float32)
    return total


def _half_cascade(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The sum of ``values`` (float32 values of the half type ``dtype``, in order) as PyTorch's
    nll_loss kernels add them in that type: eight partial sums, the first taking values one by
    one and each passing its sum up a level after every 16th value (the first value goes up at
    once), the partial sums added last, lowest first. Every addition rounds."""
    partials, items = [], values[1:]
    for _ in range(7):
        full = items.size // 16 * 16
        partials.append(_rounded_sum(items[full:], dtype))
        items = _rounded_sum(items[:full].reshape(-1, 16), dtype)
    partials.append(_rounded_sum(np.concatenate([values[:1], items]), dtype))
    return _rounded_sum(np.stack(partials), dtype)


def _half_cascade_skipping(values: np.ndarray, counted: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``_half_cascade`` where some positions are ignored: PyTorch's loop skips an ignored
    position's passing up, so its levels fill irregularly (step by step here)."""
    partials = [np.float32(0)] * 8
    values = iter(values)

    def add(a, b):
        return np.float32(np.float32(a + b).astype(dtype))
    for position in counted.tolist():
        partials[0] = add(partials[0], next(values))
        for level in range(7):
            if position & (15 << (4 * level)):
                break
            partials[level + 1], partials[level] = add(partials[level + 1], partials[level]), np.float32(0)
    return _rounded_sum(np.asarray(partials, np.float32), dtype)
