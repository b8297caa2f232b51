"""Statistics: variance and standard deviation (with their means), medians, modes, ``nanmean``,
quantiles, ``histc`` and ``bincount``.
"""

from __future__ import annotations

import builtins
import math
import warnings
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._reduction import (
    _BFLOAT16,
    _INT64,
    _LOW_PRECISION,
    _all_dims,
    _dim_defaulting,
    _evenly_distribute_backward,
    _gather,
    _int_dim,
    _invalid_combination,
    _is_floating_or_complex,
    _kept_shape,
    _kernel_rule,
    _not_implemented,
    _probe_quietly,
    _quietly,
    _reduce_meta,
    _reduced_count,
    _reduction_axes,
    _restored,
    _scatter_back,
    _selection_grad,
    _single_axis,
    _sort_indices,
    _sortable,
    _sum_in,
    _unreduce,
)
from ._samples import M23, M234, SCALAR
from .common import (
    along,
    dispatch_listens,
    dtype_of,
    no_complex_autograd,
    no_derivative,
    ops,
    quiet,
    scalar_type_name,
    wrap_dims,
)
from .meta_rules import data_dependent, with_shape
from .reduction import nansum
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op

_VECTOR = TensorSpec((5,))


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
    # (dim=() is "all dims" too: the mean of everything, whose gradient is right at every order)
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


# -- statistics -------------------------------------------------------------------------

def _as_correction(op_name: str):
    """The decomposition of ``var``/``std``/``var_mean``/``std_mean``: PyTorch's binding turns
    ``unbiased`` into ``correction`` (its overloads take no ``unbiased``), so the dispatch level
    sees ``correction=0`` for ``unbiased=False``."""

    def decompose(input, dim=None, unbiased=None, keepdim=False, correction=None):
        dim, unbiased = _statistic_arguments(dim, unbiased)
        if unbiased is None and correction is None and dim is not None:
            unbiased = True  # the dim overload's default, which PyTorch's binding passes on as correction=1
        if unbiased is None or correction is not None or not isinstance(unbiased, bool):
            return NotImplemented  # nothing to turn (or the op's own error)
        return getattr(ops, op_name)(input, dim, keepdim=keepdim, correction=1 if unbiased else 0)

    decompose.__name__ = decompose.__qualname__ = f"{op_name}_decomposition"
    return decompose


_STATISTIC_OVERLOADS = (
    "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None)",
    "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None)",
    "(Tensor input, bool unbiased = True)")


def _variance_and_mean(name: str, array: np.ndarray, dim, unbiased, keepdim: bool, correction, root: bool):
    """``(variance, mean)`` over ``dim`` (the standard deviation if ``root``), merging
    PyTorch's ``unbiased`` and ``correction`` forms.

    ``var(x, True)`` passes ``unbiased`` where ``dim`` stands, as in PyTorch. As PyTorch's CPU
    kernels, every floating dtype accumulates in float64 and is rounded once at the end, and a
    complex input is the real and the imaginary part done apart: the variance is their sum,
    the mean puts them back together (so a NaN real part leaves the imaginary mean alone).
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
    kind = dtype_of(array)
    if not _is_floating_or_complex(kind):
        subject = name if name.endswith("_mean") else "std and var"
        raise RuntimeError(f"{subject} only support floating point and complex dtypes")
    axis = _reduction_axes(dim, array.ndim, name)
    count = _reduced_count(array.shape, axis)
    if count - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning,
                      stacklevel=5)  # past this helper, the kernel, its quiet wrapper and the public call
    shape = _kept_shape(array.shape, axis, keepdim)
    with_mean = name.endswith("_mean")
    if array.dtype.kind != "c":
        return _real_variance(array, axis, correction, shape, with_mean, root)
    real_variance, real_mean = _real_variance(array.real, axis, correction, shape, with_mean, False)
    imag_variance, imag_mean = _real_variance(array.imag, axis, correction, shape, with_mean, False)
    variance = real_variance + imag_variance
    if root:
        variance = np.sqrt(variance)
    if not with_mean:
        return np.asarray(variance), None
    centre = np.empty(shape, array.dtype)
    centre.real, centre.imag = real_mean, imag_mean
    return np.asarray(variance), centre


# Slices up to this long run PyTorch's Welford recurrence step by step (its exact results,
# overflow and infinities included); longer ones are summed in two passes, in float64 too.
_WELFORD_STEPS = 128


def _real_variance(array: np.ndarray, axis, correction, shape: tuple, with_mean: bool, root: bool):
    """Variance (its square root if ``root``) and mean of a real floating ``array`` over
    ``axis``, as PyTorch's CPU kernels compute them, rounded to the array's dtype and given
    ``shape``: for a single float32 / float64 result of ``var`` / ``std`` two passes in float64
    around the mean taken in the input's dtype, otherwise Welford's recurrence in float64."""
    if array.size == 0:
        return np.full(shape, np.nan, array.dtype), np.full(shape, np.nan, array.dtype)
    axes = tuple(range(array.ndim)) if axis is None else axis
    kept = [a for a in range(array.ndim) if a not in axes]
    rows = np.transpose(array, kept + list(axes)).reshape([array.shape[a] for a in kept] + [-1]).astype(np.float64)
    n = rows.shape[-1]
    if not with_mean and rows.size == n and array.dtype not in _LOW_PRECISION:
        # The mean is the input dtype's own, then the squared deviations are summed in float64.
        mean = np.asarray(np.add.reduce(array, axis=None) / array.dtype.type(n), array.dtype).astype(np.float64)
        squares = np.add.reduce(np.square(rows - mean), axis=-1)
    elif n <= _WELFORD_STEPS:
        mean = np.zeros(rows.shape[:-1])
        squares = np.zeros(rows.shape[:-1])
        for k in range(n):
            x = rows[..., k]
            delta = x - mean
            mean = mean + delta / (k + 1)
            squares = squares + delta * (x - mean)
    else:
        mean = np.add.reduce(rows, axis=-1) / n
        squares = np.add.reduce(np.square(rows - mean[..., None]), axis=-1)
        # Welford's running mean turns NaN after an infinity unless it is the last element.
        infinite = np.isinf(rows)
        mean = np.where(np.add.reduce(infinite, axis=-1) - infinite[..., -1] > 0, np.nan, mean)
    variance = squares / builtins.max(n - correction, 0)
    if root:
        variance = np.sqrt(variance)
    variance = np.asarray(variance.astype(array.dtype).reshape(shape))
    return variance, (mean.astype(array.dtype).reshape(shape) if with_mean else None)


def _statistic_dims(arguments, ndim: int):
    """The dims var/std reduce: ``var(x, True)`` (``unbiased`` where ``dim`` stands) reduces all."""
    dim = arguments.get("dim")
    if dim is None or isinstance(dim, bool) or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return wrap_dims(dim, ndim or 1)


_STATISTIC_SAMPLES = (
    Sample((M23,)), Sample((M23, 1)), Sample((M234, (0, 2)), {"keepdim": True}), Sample((M23,), {"correction": 0}),
    Sample((M23, -1), {"correction": 2.5}), Sample((M23,), {"unbiased": False}), Sample((M23, 0, False, True)),
    Sample((M23, False)), Sample((TensorSpec((3, 4), "float16"), 1)), Sample((TensorSpec((2, 3), "complex64"), 0)),
    Sample((TensorSpec((2, 3), "float64"), None), {"keepdim": True}), Sample((_VECTOR, ())))


def _var_grad(grad, input, dim, unbiased, keepdim, correction):
    dim, unbiased = _statistic_arguments(dim, unbiased)
    return _variance_backward(grad, input, dim, unbiased, keepdim, correction)


def _variance_backward(grad, input, dim, unbiased, keepdim, correction):
    """PyTorch's ``var_backward``, which ``std``'s gradient runs too."""
    if dim is None or input.dim() == 0:
        if input.numel() - _correction(unbiased, correction) <= 0:
            # 2 / (N - correction) is infinite or negative: PyTorch's answer is NaN where the
            # element equals the mean (inf * 0) and infinite elsewhere, whatever the sign
            return grad * ops.where(input == input.mean(), float("nan"), float("inf"))
    scale = _statistic_scale(grad, input, unbiased, correction, 2.0)
    if input.dim() > 1:  # PyTorch's: the reduced dims back as size 1 (a 1-D input's grad is 0-d)
        grad = _restored(grad, input.dim(), dim, keepdim)
    return scale * grad * _centered(input, dim)


@op(meta=_reduce_meta(_statistic_dims),
    errors=(Sample((TensorSpec((2, 3), "int64"),)), Sample((M23, 2))),
    grad=_var_grad, method=True, out=True, samples=_STATISTIC_SAMPLES,
    aten={"var.correction": ("unbiased",)}, decompose=_as_correction("var"),
    schema={"(order)": "self dim correction keepdim"}, tags=("core", "reduction"))
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


def _std_grad(grad, input, result, dim, unbiased, keepdim, correction):
    dim, unbiased = _statistic_arguments(dim, unbiased)
    # As PyTorch: where the deviation is 0 (a constant slice) its gradient is 0, not 0 / 0.
    # The divisor is masked too, so that a second derivative stays finite there.
    if dispatch_listens(grad) and not ops.is_grad_enabled():
        # PyTorch's form, where no second derivative is taken: the same values
        grad = (grad / (result * 2)).masked_fill_(result == 0, 0)
    else:
        zero = result == 0
        grad = (grad / (result.masked_fill(zero, 1) * 2)).masked_fill(zero, 0)
    return _variance_backward(grad, input, dim, unbiased, keepdim, correction)


@op(meta=_reduce_meta(_statistic_dims), grad=_std_grad, method=True, out=True, samples=_STATISTIC_SAMPLES,
    aten={"std.correction": ("unbiased",)}, decompose=_as_correction("std"),
    schema={"(order)": "self dim correction keepdim"}, tags=("reduction",))
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


def _var_mean_grad(grad, input, dim, unbiased, keepdim, correction):
    grad_var, grad_mean = grad
    dim, unbiased = _statistic_arguments(dim, unbiased)
    return (_var_grad(grad_var, input, dim, unbiased, keepdim, correction)
            + _unreduce(grad_mean, input.shape, dim, keepdim) / _count(input, dim))


@op(meta=_reduce_meta(_statistic_dims), grad=_var_mean_grad, samples=_STATISTIC_SAMPLES,
    aten={"var_mean.correction": ("unbiased",)}, decompose=_as_correction("var_mean"),
    schema={"(order)": "self dim correction keepdim", "(returns)": "Tensor, Tensor"},
    tags=("reduction",))
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


def _std_mean_grad(grad, input, result0, dim, unbiased, keepdim, correction):
    grad_std, grad_mean = grad  # (result0: the std alone is saved, as PyTorch's node)
    dim, unbiased = _statistic_arguments(dim, unbiased)
    return (_std_grad(grad_std, input, result0, dim, unbiased, keepdim, correction)
            + _unreduce(grad_mean, input.shape, dim, keepdim) / _count(input, dim))


@op(meta=_reduce_meta(_statistic_dims), grad=_std_mean_grad, samples=_STATISTIC_SAMPLES,
    aten={"std_mean.correction": ("unbiased",)}, decompose=_as_correction("std_mean"),
    schema={"(order)": "self dim correction keepdim", "(returns)": "Tensor, Tensor"},
    tags=("reduction",))
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


def _check_median_dtype(array: np.ndarray, kernel: str) -> None:
    if array.dtype.kind in "bc":
        raise _not_implemented(kernel, array)


def _check_median_slices(array: np.ndarray, axis: int | None) -> None:
    """median's and nanmedian's error (it names median) for slices of nothing, before their
    dtype's."""
    if axis is not None and array.shape[axis] == 0:
        raise IndexError(f"median(): Expected reduction dim {axis} to have non-zero size.")


def _median_grad(grad, input, result, dim, keepdim):
    if dim is None:
        return _evenly_distribute_backward(grad, input, result)
    return _scatter_back(grad[0], input.shape, result[1], dim, keepdim)


def _median_result_saved(input, dim=None, keepdim=False):  # noqa: A002 - the op's parameter names
    """As PyTorch's overloads: ``median()`` saves its result, ``median(dim)`` only the indices."""
    return True if dim is None else (1,)


_median_grad.result_saved = _median_result_saved


@op(meta=_reduce_meta(), returns=("values", "indices"), grad=_median_grad, method=True, out=True,
    differentiable=no_complex_autograd("median"),  # reachable through empty complex inputs
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((M23, 0, True)), Sample((TensorSpec((4, 3)), 0)),
             Sample((TensorSpec((3, 4), "int64", -1000, 1000), -1)), Sample((TensorSpec((2, 4), "float64"),)),
             Sample((TensorSpec((3, 2), "float16"), 0)), Sample((SCALAR,)), Sample((SCALAR, 0, True)),
             Sample((TensorSpec((0, 3)),)), Sample((TensorSpec((0, 3)), 1))),
    aten={
        "median.default": ("dim", "keepdim", "out+generated"),
        "median.dim": ("dim: int=", "out=dim_values"),
    })
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
        if input.size == 0:  # any dtype: PyTorch's kernel is not reached
            return _median_of_nothing(input)
        _check_median_dtype(input, "median_cpu")
        return _median_of_all(input)
    axis = _single_axis(dim, input.ndim, "median")
    _check_median_slices(input, axis)
    _check_median_dtype(input, "median_out")
    if axis is None:
        return RETURN_TYPES["median"](input.copy(), np.zeros((), _INT64))
    length = input.shape[axis]
    values = _sortable(input)
    order = np.argsort(values, axis=axis, kind="stable")
    middle = (length - 1) // 2
    indices = order[along(axis, slice(middle, middle + 1))]
    if values.dtype.kind == "f":
        # NaN sorts last: a slice holding NaN reports its first NaN.
        nan_count = np.add.reduce(np.isnan(values), axis=axis, keepdims=True, dtype=_INT64)
        if nan_count.any():
            position = np.where(nan_count > 0, length - nan_count, middle)
            indices = np.take_along_axis(order, position, axis=axis)
    result = _gather(input, indices, axis)
    if not keepdim:
        indices, result = indices.squeeze(axis), result.squeeze(axis)
    return RETURN_TYPES["median"](result, indices.astype(_INT64, order="C", copy=False))


@op(meta=_reduce_meta(), returns=("values", "indices"), grad=_median_grad, method=True, out=True,
    differentiable=no_complex_autograd("nanmedian"),  # reachable through empty complex inputs
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((M23, 0, True)), Sample((TensorSpec((3, 4), "float64"), -1)),
             Sample((TensorSpec((3, 4), "int64", -1000, 1000), -1)), Sample((TensorSpec((3, 2), "float16"), 0)),
             Sample((SCALAR,)), Sample((SCALAR, 0, True)), Sample((TensorSpec((0, 3)),))),
    aten={
        "nanmedian.default": ("dim", "keepdim", "out+generated"),
        "nanmedian.dim": ("dim: int=", "out=dim_values"),
    })
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
        if input.size == 0:  # any dtype: PyTorch's kernel is not reached
            return _median_of_nothing(input)
        _check_median_dtype(input, "median_cpu")
        flat = _sortable(input).reshape(-1)
        if flat.dtype.kind == "f":
            flat = flat[~np.isnan(flat)]
        if not flat.size:  # all NaN
            return np.full((), np.nan, input.dtype)
        middle = (flat.size - 1) // 2
        return np.asarray(np.partition(flat, middle)[middle]).astype(input.dtype, copy=False)
    axis = _single_axis(dim, input.ndim, "nanmedian")
    _check_median_slices(input, axis)
    _check_median_dtype(input, "median_out")
    if axis is None:
        return RETURN_TYPES["nanmedian"](input.copy(), np.zeros((), _INT64))
    order = _sort_indices(input, axis, False)  # NaN last
    values = _sortable(input)
    counted = np.add.reduce(~np.isnan(values), axis=axis, keepdims=True, dtype=_INT64) \
        if values.dtype.kind == "f" else np.full(np.shape(order[along(axis, slice(0, 1))]), input.shape[axis])
    position = np.maximum(counted - 1, 0) // 2
    indices = np.take_along_axis(order, position, axis=axis)
    result = _gather(input, indices, axis)
    if not keepdim:
        indices, result = indices.squeeze(axis), result.squeeze(axis)
    return RETURN_TYPES["nanmedian"](result, indices.astype(_INT64, order="C", copy=False))


# PyTorch's mode sorts each slice with the C++ standard library's std::sort (libstdc++'s
# introsort) comparing values with ``<`` alone: equal values and NaN (unordered) end up where
# that algorithm leaves them, which decides the index mode reports. Slices of at most 16
# elements are insertion-sorted (stable) by it, so without NaN the last occurrence is reported;
# the others run this step-by-step copy, within a budget of elements per call.
_INSERTION_SORT_LENGTH = 16
_STD_SORT_BUDGET = 1 << 16


def _std_heap_sort(items: list, less, first: int, last: int) -> None:
    """Sort ``items[first:last]`` in place as libstdc++'s heap sort does (``std::sort``'s
    fallback once its recursion budget is spent), with the comparison ``less``."""

    def adjust_heap(hole, length, value):
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(items[first + child], items[first + child - 1]):
                child -= 1
            items[first + hole] = items[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            items[first + hole] = items[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(items[first + parent], value):
            items[first + hole] = items[first + parent]
            hole, parent = parent, (parent - 1) // 2
        items[first + hole] = value

    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        adjust_heap(parent, length, items[first + parent])
    while last - first > 1:
        last -= 1
        value, items[last] = items[last], items[first]
        adjust_heap(0, last - first, value)


def _std_sort_order(values: list) -> list:
    """The positions of ``values`` in the order libstdc++'s ``std::sort`` leaves them with the
    comparison ``a < b`` (not a strict weak order with NaN; reads are kept in range)."""
    items = list(range(len(values)))

    def less(a, b):
        return values[a] < values[b]

    def move_median_to_first(result, a, b, c):
        if less(items[a], items[b]):
            chosen = b if less(items[b], items[c]) else c if less(items[a], items[c]) else a
        else:
            chosen = a if less(items[a], items[c]) else c if less(items[b], items[c]) else b
        items[result], items[chosen] = items[chosen], items[result]

    def partition(first, last, pivot):
        while True:
            while first < len(items) - 1 and less(items[first], items[pivot]):
                first += 1
            last -= 1
            while last > 0 and less(items[pivot], items[last]):
                last -= 1
            if not first < last:
                return first
            items[first], items[last] = items[last], items[first]
            first += 1

    def introsort(first, last, depth):
        while last - first > _INSERTION_SORT_LENGTH:
            if depth == 0:
                _std_heap_sort(items, less, first, last)
                return
            depth -= 1
            move_median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(position, start):
        value = items[position]
        while position > start and less(value, items[position - 1]):
            items[position] = items[position - 1]
            position -= 1
        items[position] = value

    n = len(items)
    if n > 1:
        introsort(0, n, 2 * (n.bit_length() - 1))
        for i in range(1, min(n, _INSERTION_SORT_LENGTH)):
            if less(items[i], items[0]):
                items[1:i + 1], items[0] = items[0:i], items[i]
            else:
                linear_insert(i, 0)
        for i in range(_INSERTION_SORT_LENGTH, n):
            linear_insert(i, 0)
    return items


def _mode_of_row(values: list) -> int:
    """The index PyTorch's mode reports for one slice: after ``std::sort``, the last element of
    the first longest run of equal neighbours (NaN equals nothing)."""
    order = _std_sort_order(values)
    best, best_count, count = 0, 0, 0
    for position, index in enumerate(order):
        count += 1
        if position == len(order) - 1 or values[index] != values[order[position + 1]]:
            if count > best_count:
                best, best_count = index, count
            count = 0
    return best


@op(meta=_reduce_meta(_dim_defaulting(-1)), returns=("values", "indices"),
    grad=_selection_grad, differentiable=no_complex_autograd("mode"), method=True, out=True,
    samples=(Sample((TensorSpec((3, 5), "int64", 0, 3),)), Sample((TensorSpec((4, 3), "int64", 0, 2), 0, True)),
             Sample((M23, 1)), Sample((TensorSpec((6,), "bool"),)), Sample((SCALAR,)),
             Sample((TensorSpec((3, 2), "float16"), 0))),
    aten={"mode.default": ("out=values",)})
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and an
    index of it, as the named tuple ``(values, indices)``: the one PyTorch's kernel reports (the
    last occurrence in slices of up to 16 elements without NaN).

    >>> import tensormodes as tm
    >>> tm.mode(tm.tensor([[1, 2, 2, 3, 3], [4, 4, 1, 1, 0]]))
    tensormodes.return_types.mode(
    values=tensor([2, 1]),
    indices=tensor([2, 3]))
    """
    axis = _int_dim(dim, input.ndim, "mode")
    if input.ndim == 0:  # any dtype: PyTorch's kernel is not reached
        return RETURN_TYPES["mode"](input.copy(), np.zeros((), _INT64))
    length = input.shape[axis]
    if length == 0:
        raise IndexError(f"mode(): Expected reduction dim {axis} to have non-zero size.")
    if input.dtype.kind == "c":
        raise _not_implemented("mode_cpu", input)
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
    # Slices std::sort does not leave in a stable order (NaN, or longer than its insertion sort)
    # take the index PyTorch's kernel reports.
    unstable = np.isnan(rows).any(axis=1) if rows.dtype.kind == "f" else np.zeros(rows.shape[0], bool)
    if length > _INSERTION_SORT_LENGTH:
        unstable[:] = True
    if unstable.any() and np.count_nonzero(unstable) * length <= _STD_SORT_BUDGET:
        for row in np.flatnonzero(unstable):
            last[row] = _mode_of_row(rows[row].tolist())
    kept_shape = np.moveaxis(input, axis, -1).shape[:-1]
    values = np.take_along_axis(np.moveaxis(input, axis, -1).reshape(-1, length), last[:, None],
                                axis=1).reshape(kept_shape)
    indices = last.astype(_INT64).reshape(kept_shape)
    if keepdim:
        values, indices = np.expand_dims(values, axis), np.expand_dims(indices, axis)
    return RETURN_TYPES["mode"](np.asarray(values), np.asarray(indices))


def _nanmean_grad(grad, input, dim, keepdim):
    kept = input.isnan().logical_not()
    count = kept.sum() if _all_dims(dim) else kept.sum(dim, keepdim=keepdim)
    # PyTorch's order: nansum's gradient (0 at NaN) divided by the count (0 / 0: NaN where all are NaN)
    spread = _unreduce(grad, input.shape, dim, keepdim).masked_fill(kept.logical_not(), 0)
    return spread / _unreduce(count, input.shape, dim, keepdim)


def _nanmean_written(result: np.ndarray, target: np.ndarray, inplace: bool) -> None:
    """``nanmean(out=)`` sums in the output's dtype, for which PyTorch's nansum has a loop only
    when it is floating point."""
    wanted = dtype_of(target)
    if not wanted.is_floating_point:
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{scalar_type_name(wanted)}'")


@op(meta=_reduce_meta(), grad=_nanmean_grad, method=True, out=True, written_check=_nanmean_written,
    errors=(Sample((M23,), {"dtype": dt.int64}), Sample((M23, 0), {"dtype": dt.complex64})),
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((M23, (0, 1), True)),
             Sample((TensorSpec((3, 4), "float16"), 0)), Sample((SCALAR, 0, True)),
             Sample((M23, 1), {"dtype": dt.float64}), Sample((TensorSpec((0, 3)), 0))))
@_quietly
def nanmean(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,
            dtype: dt.dtype | None = None) -> Tensor:
    """The mean of the elements that are not NaN (NaN where there are none).

    >>> import tensormodes as tm
    >>> tm.nanmean(tm.tensor([1.0, float('nan'), 2.0]))
    tensor(1.5000)
    """
    if not _is_floating_or_complex(dtype_of(input)):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{scalar_type_name(dtype_of(input))}")
    if dtype is not None and not _is_floating_or_complex(dtype):
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {scalar_type_name(dtype)}")
    axes = _reduction_axes(dim, input.ndim, "nanmean")  # before nansum refuses complex input, as PyTorch
    total = nansum(input, dim, keepdim, dtype=dtype)
    counted = ~np.isnan(input)
    count = _sum_in(counted, axes, keepdim, dtype_of(total))
    return np.asarray(total / count)


def _median_of_nothing(array: np.ndarray) -> np.ndarray:
    """PyTorch's median of an empty tensor: NaN converted as C++ converts it to the dtype
    (int32 and int64 hold their lowest value, narrower integers 0, bool True), any dtype."""
    if array.dtype.kind in "iu":
        fill = np.iinfo(array.dtype).min if array.dtype.itemsize >= 4 and array.dtype.kind == "i" else 0
    else:
        fill = True if array.dtype.kind == "b" else np.nan
    return np.full((), fill, array.dtype)


def _median_of_all(array: np.ndarray) -> np.ndarray:
    flat = _sortable(array).reshape(-1)
    if flat.size == 0:
        return _median_of_nothing(array)
    middle = (flat.size - 1) // 2
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        return np.full((), np.nan, array.dtype)
    return np.asarray(np.partition(flat, middle)[middle]).astype(array.dtype, copy=False)


@op(meta=data_dependent, grad=no_derivative("bincount"), method=True, samples=(
    Sample((TensorSpec((6,), "int64", 0, 4),)), Sample((TensorSpec((4,), "int64", 0, 3), TensorSpec((4,)))),
    Sample((TensorSpec((4,), "uint8", 0, 3),), {"minlength": 6}), Sample((TensorSpec((0,), "int64"),)),
    Sample((TensorSpec((3,), "int64", 0, 2), TensorSpec((3,), "int64", 0, 5)))),
    tags=("dynamic_output_shape",))
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
    if not input.size:  # PyTorch's counts of nothing, whatever the weights (unchecked)
        return np.zeros(minlength, _INT64)
    largest = int(input.max())
    if largest == np.iinfo(np.int64).max:  # (NumPy's bincount would overflow its length and corrupt memory)
        raise RuntimeError(f"maximum value of input overflowed, it should be < {largest} but got {largest}")
    length = max(largest + 1, minlength)
    if length * (4 if weights is not None and weights.dtype == np.float32 else 8) > np.iinfo(np.int64).max:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{length}]")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return np.bincount(input, minlength=minlength).astype(_INT64)
    result_type = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(input, weights.astype(np.float64), minlength=minlength).astype(result_type)


@_kernel_rule
def _histc_meta(kernel, input, bins=100, min=0, max=0):  # noqa: A002 - the kernel's parameter names
    return with_shape(_probe_quietly(kernel, input, bins, min, max), (bins,))


@op(meta=_histc_meta,
    errors=(Sample((TensorSpec((3,)), 0)),), differentiable=False, method=True, out=True, samples=(
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
        if low == high:  # (beyond 2 ** 53 the widened range is one point still: PyTorch counts it in the middle)
            counts = np.zeros(bins, np.int64)
            counts[bins // 2] = np.count_nonzero(values == low)
            return counts.astype(input.dtype)
    counts, _ = np.histogram(values, bins=bins, range=(low, high))
    return counts.astype(input.dtype)


def _number(value: float) -> str:
    """A float as C++ streams print it (``1``, ``2.5``, ``inf``)."""
    return f"{value:g}"


# -- quantiles ---------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


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
    if isinstance(q, np.ndarray) and q.dtype != input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    axis = None if dim is None else _int_dim(dim, input.ndim, name)  # before q's values, as PyTorch
    if isinstance(q, np.ndarray):
        if not np.all((q >= 0) & (q <= 1)):  # NaN too
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    # The reduced elements last: (kept dimensions..., n).
    positions = np.arange(input.size).reshape(input.shape)
    if axis is None or input.ndim == 0:
        values, positions = input.reshape(-1), positions.reshape(-1)
    else:
        values, positions = np.moveaxis(input, axis, -1), np.moveaxis(positions, axis, -1)
    order = np.argsort(values, axis=-1, kind="stable")  # NaN last
    ordered, ordered_positions = np.take_along_axis(values, order, -1), np.take_along_axis(positions, order, -1)
    n = ordered.shape[-1]
    nan_count = np.isnan(ordered).sum(-1, keepdims=True)
    # A slice with NaN gives NaN (quantile: its last element), or with nothing but NaN
    # (nanquantile: its first, where PyTorch clamps the negative rank)
    span = n - nan_count - 1 if skip_nan else np.full(nan_count.shape, n - 1)
    to_nan = nan_count == n if skip_nan else nan_count > 0
    # (..., quantiles), in the input's dtype as PyTorch (q rounded to it first)
    dtype = input.dtype
    ranks = np.where(to_nan, dtype.type(0 if skip_nan else n - 1),
                     span.astype(dtype) * np.asarray(q, dtype).reshape(-1))
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
    if interpolation in ("lower", "higher", "nearest"):
        value = low_values  # picked, not interpolated (an infinity stays one)
    else:  # PyTorch's lerp, from the nearer end, with a fused multiply-add (one rounding of float32)
        weight = weight.astype(dtype)
        with quiet():  # inf - inf is NaN without a word, as in PyTorch
            difference = (high_values - low_values).astype(np.float64)
            value = np.where(weight < 0.5, low_values.astype(np.float64) + weight.astype(np.float64) * difference,
                             high_values.astype(np.float64) - difference * (1 - weight).astype(np.float64))
    parts = (value, np.take_along_axis(ordered_positions, low, -1),
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
    return (result.astype(dtype), low_index.astype(_INT64), high_index.astype(_INT64), low_weight.astype(dtype),
            high_weight.astype(dtype), q_span.astype(dtype))


@_kernel_rule
def _quantile_meta(kernel, input, q, dim=None, keepdim=False, *, interpolation="linear"):
    result = _probe_quietly(kernel, input, q, dim, keepdim, interpolation=interpolation)
    axes = None if dim is None or input.ndim == 0 else (dim % input.ndim,)
    shape = _kept_shape(input.shape, axes, keepdim)
    if type(q) is MetaArray and q.ndim:
        shape = q.shape + shape
    return with_shape(result, shape)


_QUANTILE_SAMPLES = (
    Sample((TensorSpec((2, 5)), 0.3)), Sample((TensorSpec((2, 5), "float64"), TensorSpec((3,), "float64", 0, 1), 1)),
    Sample((TensorSpec((3, 4)), TensorSpec((2,), "float32", 0, 1), 0, True)), Sample((TensorSpec((6,)), 1.0)),
    Sample((TensorSpec((2, 3)), 0.5), {"keepdim": True}), Sample((SCALAR, 0.5)),
    Sample((TensorSpec((4, 3), "float64"), 0.4, -1), {"interpolation": "lower"}),
    Sample((TensorSpec((4, 3)), 0.6, 0), {"interpolation": "higher"}),
    Sample((TensorSpec((5,)), TensorSpec((3,), "float32", 0, 1))), Sample((TensorSpec((5,)), 0.5),
                                                                          {"interpolation": "midpoint"}),
    Sample((TensorSpec((5,)), 0.625), {"interpolation": "nearest"}))


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
        high_values = values[high_index]
        # a slice that gives NaN (for its NaN) has ranks PyTorch masked: no gradient for q there
        masked = high_values.isnan() & (q_span == 0)
        moved = grad * (high_values - values[low_index]).masked_fill(masked, 0) * q_span
        # one gradient per quantile: the rest summed (a reshape to (len(q), -1) fails for no q)
        grad_q = moved.sum() if not q.dim() else moved.sum(list(range(1, moved.dim()))) if moved.dim() > 1 else moved
    return grad_input, grad_q


@op(meta=_quantile_meta,
    errors=(Sample((TensorSpec((0, 3)), 0.5)), Sample((M23, 0.5, 2))), grad=_quantile_grad, method=True,
    saves=("low_index", "high_index", "low_weight", "high_weight", "q_span"), save_only_for={"input": "q", "q": "q"},
    samples=_QUANTILE_SAMPLES, schema={"(returns)": "Tensor"},
    aten="default")
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


@op(meta=_quantile_meta, grad=_quantile_grad, method=True,
    saves=("low_index", "high_index", "low_weight", "high_weight", "q_span"), save_only_for={"input": "q", "q": "q"},
    samples=_QUANTILE_SAMPLES, schema={"(returns)": "Tensor"},
    aten="default")
def nanquantile(input: Tensor, q: Tensor | Number, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaN (NaN only where a slice has nothing else).

    >>> import tensormodes as tm
    >>> tm.nanquantile(tm.tensor([1.0, float('nan'), 3.0]), 0.5)
    tensor(2.)
    """
    result, *handed = _quantiles(input, q, dim, keepdim, interpolation, "nanquantile", skip_nan=True)
    return (result, *handed)
