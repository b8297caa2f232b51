"""Reductions: sums, means and products, logical reductions and counting, extrema (``max``,
``amax``, ``argmax``, ``aminmax`` ...), norms, ``logsumexp`` and ``trapezoid``. The scans
(``cumsum``, ``cummax`` ...) are in ``scans.py``.

Ops that return values together with indices (``max(input, dim)``, ``aminmax`` ...) return named
tuples mirroring ``torch.return_types``, declared with the op (``@op(returns=...)``).
"""

from __future__ import annotations

import builtins
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._reduction import (
    _FLOAT32,
    _INT64,
    _LOW_PRECISION,
    _WIDE_INT,
    _accumulation_dtype,
    _cat,
    _distribute_evenly,
    _evenly_distribute_backward,
    _gather,
    _int_dim,
    _invalid_combination,
    _is_array,
    _is_floating_or_complex,
    _not_implemented,
    _probe_quietly,
    _quietly,
    _recordable_dtype,
    _reduce_meta,
    _reduced_count,
    _reduction_axes,
    _restored,
    _scatter_back,
    _single_axis,
    _sortable,
    _sum_dtype,
    _sum_in,
    _unreduce,
)
from ._samples import M23, M234, SCALAR
from .common import (
    PLAIN_FLOATS,
    along,
    binary,
    check_same_shape_or_broadcast,
    dtype_of,
    is_int,
    no_complex_autograd,
    ops,
    resolve_dtype,
    scalar_type_name,
    wrap_dim,
    wrap_dims,
)
from .common import conjugate as _conj
from .comparison import extremum_grad
from .meta_rules import MetaRule, pointwise, rule, with_shape
from .reduction_composites import trapezoid_decomposition
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op


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


# -- sums and products --------------------------------------------------------------------


def _exclusive_products(x, d: int):
    """Product of all elements but one along ``d``, exact with zeros (no division)."""
    n = x.shape[d]
    ones = x.narrow(d, 0, 1).new_ones(x.narrow(d, 0, 1).shape)
    if n == 1:
        return ones
    left = _cat([ones, x.narrow(d, 0, n - 1).cumprod(d)], d)
    right = _cat([x.narrow(d, 1, n - 1).flip(d).cumprod(d).flip(d), ones], d)
    return left * right


def _extreme_grad(larger: bool):
    def formula(grad, input, result, dim, keepdim, needs_input_grad):
        if dim is None:
            return _evenly_distribute_backward(grad, input, result), None
        if hasattr(dim, "shape"):  # max(input, other): maximum's gradients, only those wanted
            return extremum_grad(grad, input, dim, larger, needs_input_grad)
        values, indices = result
        return _scatter_back(grad[0], input.shape, indices, dim, keepdim), None

    formula.result_saved = _extreme_result_saved
    return formula


def _extreme_result_saved(input, dim=None, keepdim=False):
    """What ``max`` / ``min`` save of their result, as PyTorch's overloads: all of it (``max()``), only the
    indices (``max(dim)``), nothing (``max(other)``, maximum's formula)."""
    return True if dim is None else False if hasattr(dim, "shape") else (1,)


def _sum_grad(grad, input_shape, dim, keepdim):
    return _unreduce(grad, input_shape, dim, keepdim)


def _overload_node(name: str):
    """Names a reduction's node after PyTorch's overload: ``sum()`` is ``SumBackward0``,
    ``sum(dim)`` ``SumBackward1``."""
    dim_overload = f"{name}#1"

    def node(input, dim, *_):
        return name if dim is None else dim_overload
    return node


@op(meta=_reduce_meta(), node=_overload_node("sum"), differentiable=_recordable_dtype,
    errors=(Sample((M23, 2)), Sample((M23, (0, 0)))), grad=_sum_grad, method=True, out=True,
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((M23, (0, 1), True)),
             Sample((TensorSpec((2, 3), "int32"), -1)), Sample((TensorSpec((4,), "bool"),)),
             Sample((TensorSpec((3, 4), "float16"), 0)), Sample((SCALAR, 0, True)),
             Sample((M23, ()), {"dtype": dt.float64}), Sample((TensorSpec((2, 2), "int8"),), {"dtype": dt.int8}),
             Sample((TensorSpec((2, 3), "complex64"), [1])), Sample((TensorSpec((0, 3)),))),
    aten={"sum.default": ("dim", "keepdim", "out+generated", "out-reduction"),
        "sum.dim_IntList": ("dim: int[1]?=", "+core", "out=IntList_out")}, tags=("reduction",))
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
    if dtype is None and input.dtype in PLAIN_FLOATS:
        if dim is None:
            return np.asarray(np.add.reduce(input, axis=None, keepdims=keepdim))
        ndim = input.ndim
        if type(dim) is list and len(dim) == 1:  # ``sum.dim_IntList``'s one dim (autograd's ``sum_to``)
            dim = dim[0] if type(dim[0]) is int else dim
        if type(dim) is int and -ndim <= dim < ndim:  # one dim, as gradient formulas ask: no general parsing
            return np.asarray(np.add.reduce(input, axis=dim % ndim, keepdims=keepdim))
    return _sum_in(input, _reduction_axes(dim, input.ndim, "sum"), keepdim, _sum_dtype(input, dtype))


def _nansum_grad(grad, input, dim, keepdim):
    return _unreduce(grad, input.shape, dim, keepdim).masked_fill(input.isnan(), 0)


@op(meta=_reduce_meta(), grad=_nansum_grad, method=True, out=True, differentiable=_recordable_dtype,
    samples=(Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((2, 3), "float64", -1e3, 1e3), 1, True)),
             Sample((TensorSpec((3,), "float32"),)), Sample((TensorSpec((4,), "int64"),)),
             Sample((TensorSpec((2, 3), "int32"), 0), {"dtype": dt.float32}), Sample((SCALAR,))), tags=("reduction",))
@_quietly
def nansum(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,
           dtype: dt.dtype | None = None) -> Tensor:
    """Sum of the elements, treating NaN as zero.

    >>> import tensormodes as tm
    >>> tm.nansum(tm.tensor([1., float('nan'), 2.])).item()
    3.0
    """
    axes = _reduction_axes(dim, input.ndim, "nansum")  # the dims first, as PyTorch
    if input.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    target = _sum_dtype(input, dtype)
    # PyTorch sums floats into a complex dtype with no kernel (integers are summed as by sum)
    if target.is_complex and input.dtype.kind not in "biu":
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{scalar_type_name(target)}'")
    numbers_only = input if input.dtype.kind in "biu" else np.where(np.isnan(input), input.dtype.type(0), input)
    return _sum_in(numbers_only, axes, keepdim, target)


def _mean_grad(grad, input_shape, dim, keepdim):
    ndim = len(input_shape)
    axes = range(ndim) if dim is None or dim == () or ndim == 0 else wrap_dims(dim, ndim)
    count = 1
    for d in axes:
        count *= input_shape[d]
    return _unreduce(grad, input_shape, dim, keepdim) / count


@op(meta=_reduce_meta(), grad=_mean_grad, method=True, out=True, node=_overload_node("mean"),
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((M23, (0, 1), True)), Sample((M234, (-1, 0))),
             Sample((TensorSpec((3, 4), "float16"), 0)), Sample((TensorSpec((2, 3), "complex64"),)),
             Sample((TensorSpec((2, 3), "int64"),), {"dtype": dt.float64}), Sample((SCALAR, 0, True)),
             Sample((TensorSpec((0, 3)), 0))),
    aten={"mean.default": ("dim", "keepdim", "out=dtype_out"), "mean.dim": ("dim: int[1]?=", "out=out")},
    tags=("core", "reduction"))
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
        target = dtype_of(input)
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


def _prod_grad(grad, input, result, dim, keepdim):
    # As PyTorch's prod_backward: without a zero in the input the gradient is result / input
    # (which decides the NaNs and infinities at non-finite elements); with zeros, the exact
    # products of the other elements (a meta input's gradient has the general shape).
    if input.dim() == 0:
        return grad
    zeros = 0 if input.is_meta else int((input == 0).sum().item())
    if dim is None:
        flat = input.reshape(-1)
        if not flat.numel():
            return grad.expand(input.shape)
        if not zeros and not input.is_meta:
            return grad * _conj(result / input)
        if zeros > 1 and not ops.is_grad_enabled():
            return ops.zeros_like(input)
        return (grad * _conj(_exclusive_products(flat, 0))).reshape(input.shape)
    d = wrap_dim(dim, input.dim())
    if not input.shape[d]:  # the product of nothing is 1, whatever the (absent) elements
        return _unreduce(grad, input.shape, dim, keepdim)
    if not zeros and not input.is_meta:
        return _unreduce(grad, input.shape, dim, keepdim) * _conj(_unreduce(result, input.shape, dim, keepdim) / input)
    return _unreduce(grad, input.shape, dim, keepdim) * _conj(_exclusive_products(input, d))


@op(meta=_reduce_meta(), grad=_prod_grad, method=True, out=True, differentiable=_recordable_dtype,
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((M23, -1, True)),
             Sample((TensorSpec((2, 3), "int32", -3, 3),)), Sample((TensorSpec((4,), "bool"), 0)),
             Sample((TensorSpec((2, 3), "float16"), 0)), Sample((TensorSpec((2, 2), "complex64"), 1)),
             Sample((TensorSpec((2, 3), "int64"), 1), {"dtype": dt.float64}), Sample((SCALAR, 0))),
    aten={"prod.default": ("dim", "keepdim", "out+generated", "out-reduction"),
        "prod.dim_int": ("dim: int=", "out=int_out")}, tags=("core", "reduction"))
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
    if work.dtype in _LOW_PRECISION and work.size:
        return _rounded_product(work, axis, keepdim)
    return np.asarray(np.multiply.reduce(work, axis=axis, keepdims=keepdim, dtype=work.dtype))


# PyTorch's vectorised CPU product of a contiguous row keeps 4 vectors of 16 partial products
# while at least 64 elements remain, then folds them, then multiplies in the rest one by one.
_PRODUCT_LANES = 16


def _rounded_product(work: np.ndarray, axis: int | None, keepdim: bool) -> np.ndarray:
    """The float16 / bfloat16 product as PyTorch's CPU kernel computes it: every partial
    product is rounded to the input's dtype (so [300, 300, 0.001] overflows to inf in float16),
    in PyTorch's order — along the last dim (and over all elements) in its vector lanes, along
    any other dim element by element."""
    low = work.dtype

    def times(a, b):
        return (a.astype(_FLOAT32) * b.astype(_FLOAT32)).astype(low)

    rows = work.reshape(-1) if axis is None else np.moveaxis(work, axis, -1)
    n = rows.shape[-1]
    total = np.ones(rows.shape[:-1], low)
    start = 0
    lanes = 4 * _PRODUCT_LANES
    if n >= lanes and (axis is None or axis == work.ndim - 1):
        start = n - n % lanes
        blocks = rows[..., :start].reshape(rows.shape[:-1] + (start // lanes, 4, _PRODUCT_LANES))
        vectors = blocks[..., 0, :, :]
        for i in range(1, blocks.shape[-3]):
            vectors = times(vectors, blocks[..., i, :, :])
        folded = times(times(vectors[..., 0, :], vectors[..., 1, :]), times(vectors[..., 2, :], vectors[..., 3, :]))
        lane_product = folded[..., 0]
        for j in range(1, _PRODUCT_LANES):
            lane_product = times(lane_product, folded[..., j])
        total = times(total, lane_product)
    for k in range(start, n):
        total = times(total, rows[..., k])
    if keepdim:
        total = total.reshape((1,) * work.ndim) if axis is None else np.expand_dims(total, axis)
    return np.asarray(total)


# -- logical reductions and counting ---------------------------------------------------

def _truth_reduction(ufunc, name: str, array: np.ndarray, dim, keepdim: bool) -> np.ndarray:
    axis = _reduction_axes(dim, array.ndim, name)
    if dim is not None and axis is None and (array.ndim == 0 or (not is_int(dim) and len(dim) == 0)):
        # all/any over no dims test each element, where sum and the others reduce every dim.
        axis = ()
    truth = array if array.dtype.kind == "b" else array != 0
    result = np.asarray(ufunc.reduce(truth, axis=axis, keepdims=keepdim))
    # PyTorch keeps uint8 for uint8 inputs (a legacy of masks stored as bytes).
    return result.astype(np.uint8) if array.dtype == np.uint8 else result


def _truth_dims(arguments, ndim: int):
    """The dims ``all`` / ``any`` reduce: an empty ``dim`` reduces none (each element is tested)."""
    dim = arguments.get("dim")
    if dim is None:
        return None
    if not is_int(dim) and len(dim) == 0:
        return ()
    return wrap_dims(dim, ndim or 1)


_TRUTH_SAMPLES = (Sample((TensorSpec((2, 3), "bool"),)), Sample((TensorSpec((2, 3), "bool"), 1)),
                  Sample((TensorSpec((2, 3), "int64", 0, 1), (0, 1), True)),
                  Sample((TensorSpec((3, 2), "uint8", 0, 1),)),
                  Sample((TensorSpec((3, 2), "uint8", 0, 1), 0)), Sample((M23, ())),
                  Sample((TensorSpec((2, 2), "float16", 0, 1), -1, True)), Sample((SCALAR, 0)),
                  Sample((TensorSpec((0, 2), "bool"),)), Sample((TensorSpec((2, 2), "complex64"), 1)))


@op(meta=_reduce_meta(_truth_dims), differentiable=False, method=True, out=True, samples=_TRUTH_SAMPLES,
    aten={"all.default": ("dim", "keepdim", "out=all_out"), "all.dim": ("dim: int=", "out=out"),
          "all.dims": ("dim: int[]?",)},
    tags=("reduction",))
def all(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True if every element (over ``dim``, if given) is nonzero. The result is bool
    (uint8 for uint8 inputs); ``all`` of no elements is True.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[True, False], [True, True]])
    >>> x.all(), x.all(dim=1)
    (tensor(False), tensor([False,  True]))
    """
    return _truth_reduction(np.logical_and, "all", input, dim, keepdim)


@op(meta=_reduce_meta(_truth_dims), differentiable=False, method=True, out=True, samples=_TRUTH_SAMPLES,
    aten={"any.default": ("dim", "keepdim", "out=all_out"), "any.dim": ("dim: int=", "out=out"),
          "any.dims": ("dim: int[]?",)},
    tags=("core", "reduction"))
def any(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True if any element (over ``dim``, if given) is nonzero. The result is bool
    (uint8 for uint8 inputs); ``any`` of no elements is False.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[0, 0], [0, 3]])
    >>> x.any(), x.any(dim=0)
    (tensor(True), tensor([False,  True]))
    """
    return _truth_reduction(np.logical_or, "any", input, dim, keepdim)


@op(meta=_reduce_meta(), differentiable=False, method=True,
    samples=(Sample((TensorSpec((3, 4), "int64", -1, 1),)), Sample((TensorSpec((3, 4), "int64", -1, 1), 1)),
             Sample((TensorSpec((2, 3), "bool"), (0, 1))), Sample((TensorSpec((2, 3), "float32", -1, 1), ())),
             Sample((SCALAR, 0)), Sample((TensorSpec((2, 2), "complex64"), [-1]))),
    aten={"count_nonzero.default": ("dim: int?",), "count_nonzero.dim_IntList": ("dim: int[]=",)}, tags=("reduction",))
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
    axis = wrap_dim(dim, array.ndim)
    if array.ndim:
        _no_empty_dims(array, (axis,), op_name)
    if array.dtype.kind == "c":
        raise RuntimeError(f"{op_name}(): does not support complex input")
    if array.ndim == 0:
        return array.copy(), np.zeros((), _INT64)
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
        _no_empty_dims(array, None, name)
        if array.dtype.kind == "c":
            raise _not_implemented(f"{name}_all", array)
        return np.asarray(ufunc.reduce(array, axis=None))
    if type(dim) is np.ndarray:
        if keepdim:
            raise _invalid_combination(name, "Tensor, Tensor, keepdim=bool", _MAX_OVERLOADS)
        return _elementwise_extreme(ufunc, elementwise, array, dim)
    if not is_int(dim):
        raise _invalid_combination(name, f"Tensor, {type(dim).__name__}", _MAX_OVERLOADS)
    values, indices = _extreme_along(arg_function, name, array, dim, keepdim)
    return RETURN_TYPES[name](values, indices)


_EXTREME_SAMPLES = (Sample((M23,)), Sample((M23, 1)), Sample((M23, 0, True)), Sample((_WIDE_INT, -1)),
                    Sample((TensorSpec((4,), "bool"),)), Sample((TensorSpec((3, 2), "float16"), 1)),
                    Sample((SCALAR, 0)), Sample((SCALAR,)), Sample((M23, M23)),
                    Sample((TensorSpec((2, 3), "int32"), TensorSpec((3,), "float32"))),
                    Sample((TensorSpec((2, 3), "uint8", 0, 9), TensorSpec((), "int8"))),
                    Sample((TensorSpec((2, 3), "bfloat16"),)), Sample((TensorSpec((0, 3)), 1)))


def _extreme_meta(opdef, args, kwargs):
    """``max`` / ``min``: a tensor ``dim`` is the elementwise overload (broadcasting), else a reduction."""
    bound = opdef.signature.bind(*args, **kwargs)
    if _is_array(bound.arguments.get("dim")):
        return pointwise(opdef, args, kwargs)
    return _reduce_meta()(opdef, args, kwargs)


def _extreme_node(name: str, elementwise: str):
    """PyTorch's node for the overload a ``max``/``min`` call reaches: the whole tensor's
    (MaxBackward1), along a dim (MaxBackward0), or elementwise against a tensor (MaximumBackward0)."""
    def node(input, dim=None, keepdim=False) -> str:
        if dim is None:
            return f"{name}#1"
        return name if isinstance(dim, Number) else elementwise

    return node


@op(meta=MetaRule(_extreme_meta, "extreme"),
    errors=(Sample((M23, M234)), Sample((TensorSpec((0, 3)), 0))),
    returns=("values", "indices"), grad=_extreme_grad(True), node=_extreme_node("max", "maximum"), method=True,
    out=True, samples=_EXTREME_SAMPLES,
    aten={"max.default": ("dim", "keepdim", "out=unary_out"), "maximum.default": ("keepdim", "dim: Tensor other="),
          "max.dim": ("dim: int=", "+core", "out=dim_max", "(out): max max_values")}, tags=("reduction",))
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


@op(meta=MetaRule(_extreme_meta, "extreme"), returns=("values", "indices"), grad=_extreme_grad(False),
    node=_extreme_node("min", "minimum"),
    method=True,
    out=True, samples=_EXTREME_SAMPLES,
    aten={"min.default": ("dim", "keepdim", "out=unary_out"), "minimum.default": ("keepdim", "dim: Tensor other="),
          "min.dim": ("dim: int=", "+core", "out=dim_min", "(out): min min_indices")}, tags=("reduction",))
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
    axis = _reduction_axes(dim, array.ndim, name)
    shown = None if axis is None else ((dim,) if is_int(dim) else tuple(dim))
    _no_empty_dims(array, axis, name, shown)
    if array.dtype.kind == "c" and array.size:  # an empty result needs no kernel: PyTorch gives it
        raise _not_implemented(f"{name[1:]}_values_cpu", array)
    return np.asarray(ufunc.reduce(array, axis=axis, keepdims=keepdim))


_AMAX_SAMPLES = (Sample((M23,)), Sample((M23, 1)), Sample((M234, (0, 2), True)), Sample((M23, -1)),
                 Sample((TensorSpec((2, 3), "int32"), 0)), Sample((TensorSpec((4,), "bool"),)),
                 Sample((TensorSpec((2, 3), "float16"), [1])), Sample((SCALAR, 0, True)), Sample((M23, ())),
                 Sample((TensorSpec((0, 3)), 1)))


def _amax_amin_grad(grad, input, result, dim, keepdim):
    return _distribute_evenly(grad, input, result, dim, keepdim)


@op(meta=_reduce_meta(), grad=_amax_amin_grad, differentiable=no_complex_autograd("amax"), method=True, out=True,
    samples=_AMAX_SAMPLES, tags=("core", "reduction"))
def amax(input: Tensor, dim: int | tuple[int, ...] = (), keepdim: bool = False) -> Tensor:
    """The largest elements over ``dim`` (an int or a tuple; empty means every dim).
    NaN propagates.

    >>> import tensormodes as tm
    >>> tm.amax(tm.tensor([[1, 5, 2], [7, 0, 3]]), dim=1)
    tensor([5, 7])
    """
    return _amax_amin(np.maximum, "amax", input, dim, keepdim)


@op(meta=_reduce_meta(), grad=_amax_amin_grad, differentiable=no_complex_autograd("amin"), method=True, out=True,
    samples=_AMAX_SAMPLES, tags=("core", "reduction"))
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


_ARG_SAMPLES = (Sample((M23,)), Sample((M23, 1)), Sample((M23, 0, True)), Sample((M23, None, True)),
                Sample((_WIDE_INT, -1)), Sample((TensorSpec((3, 2), "float16"), 0)),
                Sample((TensorSpec((2, 3), "uint8", 0, 255),)), Sample((SCALAR,)), Sample((SCALAR, 0, True)),
                Sample((TensorSpec((0, 3)), 1)))


@op(meta=_reduce_meta(), differentiable=False, method=True, out=True, samples=_ARG_SAMPLES, tags=("core", "reduction"))
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the largest element, in the flattened input or along ``dim``.
    The first one wins ties; NaN counts as largest.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1, 5, 2], [7, 0, 7]])
    >>> x.argmax(), x.argmax(dim=1)
    (tensor(3), tensor([1, 0]))
    """
    return _arg_extreme(np.ndarray.argmax, "argmax", input, dim, keepdim)


@op(meta=_reduce_meta(), differentiable=False, method=True, out=True, samples=_ARG_SAMPLES, tags=("core", "reduction"))
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the smallest element, in the flattened input or along ``dim``.
    The first one wins ties; NaN counts as smallest.

    >>> import tensormodes as tm
    >>> tm.argmin(tm.tensor([[1, 5, 2], [7, 0, 7]]), dim=0)
    tensor([0, 1, 0])
    """
    return _arg_extreme(np.ndarray.argmin, "argmin", input, dim, keepdim)


def _aminmax_grad(grad, input, result, dim, keepdim):
    return (_distribute_evenly(grad[0], input, result[0], dim, keepdim)
            + _distribute_evenly(grad[1], input, result[1], dim, keepdim))


@op(meta=_reduce_meta(), returns=("min", "max"), grad=_aminmax_grad, method=True, out=True,
    samples=(Sample((M23,)), Sample((M23,), {"dim": 1}), Sample((M23,), {"dim": -1, "keepdim": True}),
             Sample((M23,), {"keepdim": True}), Sample((TensorSpec((2, 3), "int32"),), {"dim": 0}),
             Sample((TensorSpec((4,), "bool"),)), Sample((TensorSpec((2, 3), "float16"),), {"dim": 1}),
             Sample((SCALAR,)), Sample((SCALAR,), {"dim": 0}), Sample((TensorSpec((0, 3)),), {"dim": 1})),
    tags=("reduction",))
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The smallest and largest elements, over everything or along ``dim``, as the
    named tuple ``(min, max)``.

    >>> import tensormodes as tm
    >>> tm.aminmax(tm.tensor([[1, 5, 2], [7, 0, 3]]), dim=1)
    tensormodes.return_types.aminmax(
    min=tensor([1, 0]),
    max=tensor([5, 7]))
    """
    if dim is None:
        if input.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               "no identity.")
        axis = None
    else:
        axis = _single_axis(dim, input.ndim, "aminmax")
        if axis is not None and input.shape[axis] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {axis} to have non-zero size.")
    if input.dtype.kind == "c":
        if dim is not None and input.ndim == 0:  # PyTorch's scalar path has its own message
            raise RuntimeError(f"aminmax not implemented for {scalar_type_name(dt.NP_TO_DTYPE[input.dtype])}")
        raise _not_implemented("aminmax_cpu", input)
    low = np.asarray(np.minimum.reduce(input, axis=axis, keepdims=keepdim))
    high = np.asarray(np.maximum.reduce(input, axis=axis, keepdims=keepdim))
    return RETURN_TYPES["aminmax"](low, high)


def _logsumexp_grad(grad, input, result, dim, keepdim):
    # PyTorch's: gradient and result with the reduced dims back as size 1, broadcasting the rest
    weights = (input - _restored(result, input.dim(), dim, keepdim)).exp()  # the softmax
    return _restored(grad, input.dim(), dim, keepdim) * _conj(weights)


@op(meta=_reduce_meta(),
    errors=(Sample((M23, 3)),), grad=_logsumexp_grad, method=True, out=True,
    samples=(Sample((M23, 1)), Sample((M23, (0, 1))), Sample((M23, -1, True)), Sample((M23, [0], True)),
             Sample((TensorSpec((2, 3), "int64"), 1)), Sample((TensorSpec((3,), "bool"), 0)),
             Sample((TensorSpec((2, 3), "float16"), 0)), Sample((TensorSpec((2, 3), "complex64"), 1)),
             Sample((TensorSpec((2, 3), "float32", -100, 100), 1)), Sample((SCALAR, 0)),
             Sample((TensorSpec((0, 3)), 0)), Sample((TensorSpec((2, 0)), 1))), tags=("reduction",))
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
    kind = dtype_of(input)
    if not _is_floating_or_complex(kind):
        kind = dt.get_default_dtype()
    axis = _reduction_axes(dim, input.ndim, "logsumexp")
    if kind._np in _LOW_PRECISION and input.size:
        return _rounded_logsumexp(input.astype(kind._np, copy=False), axis, keepdim)
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


def _rounded_logsumexp(work: np.ndarray, axis, keepdim: bool) -> np.ndarray:
    """float16 / bfloat16 logsumexp as PyTorch composes it: ``amax``, then ``exp(input - max)``,
    its sum, ``log`` and the shift added back, each step rounded to the input's dtype (only the
    sum accumulates in float32)."""
    low = work.dtype
    shift = np.maximum.reduce(work, axis=axis, keepdims=True)
    shift = np.where(np.isinf(shift), low.type(0), shift)
    exps = np.exp((work.astype(_FLOAT32) - shift.astype(_FLOAT32)).astype(low).astype(_FLOAT32)).astype(low)
    total = np.add.reduce(exps.astype(_FLOAT32), axis=axis, keepdims=keepdim).astype(low)
    logs = np.log(total.astype(_FLOAT32)).astype(low)
    shift = shift if keepdim else shift.reshape(np.shape(total))
    return np.asarray((logs.astype(_FLOAT32) + shift.astype(_FLOAT32)).astype(low))


# -- integration -------------------------------------------------------------------------------

def _pad_along(x, d: int, before: bool):
    """``x`` with one zero slice added along ``d``, before or after (public ops only)."""
    shape = list(x.shape)
    shape[d] = 1
    zeros = x.new_zeros(shape)
    return ops.cat([zeros, x] if before else [x, zeros], d)


def _trapezoid_grad(grad, y, x, y_shape, x_shape, dx, dim, needs_input_grad):
    # result = sum over k of (y[k] + y[k + 1]) / 2 * (x[k + 1] - x[k]): each y[k] gets half of the spacings
    # on its sides; each x[k] the mean of the pair before it less that after it (y saved for x only, x for y).
    ndim = len(y_shape)
    d = wrap_dim(dim, ndim)
    n = y_shape[d]
    along = None if x_shape is None else n if len(x_shape) == 1 else ((1,) * (ndim - len(x_shape)) + tuple(x_shape))[d]
    if n < 2 or along not in (None, n):  # (an x of one point along dim, as a 0-dim one: nothing summed)
        return grad.new_zeros(y_shape), (None if x_shape is None else grad.new_zeros(x_shape))
    spread = grad.unsqueeze(d)
    grad_y = grad_x = None
    if needs_input_grad[0]:
        if x_shape is None:
            spacing = 1 if dx is None else dx
        else:
            full = _trapezoid_points(x, x_shape, ndim, d, n)
            spacing = _conj(full.narrow(d, 1, n - 1) - full.narrow(d, 0, n - 1))
        pairs_shape = [n - 1 if axis == d else size for axis, size in enumerate(y_shape)]
        halves = (spread * spacing * 0.5).expand(pairs_shape)
        grad_y = _pad_along(halves, d, True) + _pad_along(halves, d, False)
    if x_shape is not None and needs_input_grad[1]:
        means = spread * _conj(y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5
        grad_x = _pad_along(means, d, True) - _pad_along(means, d, False)
        if len(x_shape) == 1 and ndim > 1:  # a 1-D x: summed over y's other dimensions
            grad_x = grad_x.movedim(d, -1).reshape(-1, n).sum(0)
        elif len(x_shape) < ndim:  # x broadcast over y's leading dimensions: summed over them
            grad_x = grad_x.sum(list(range(ndim - len(x_shape))))
    return grad_y, grad_x


def _trapezoid_points(x, x_shape, ndim: int, d: int, n: int):
    """The sample points ``x`` shaped to broadcast with ``y``, as the kernel reads them: a 1-D
    ``x`` along ``dim``, a multi-dimensional one aligned with ``y``'s trailing dimensions."""
    if len(x_shape) == ndim:
        return x
    if len(x_shape) == 1:
        return x.reshape([n if axis == d else 1 for axis in range(ndim)])
    return x.reshape((1,) * (ndim - len(x_shape)) + tuple(x_shape))


def _trapezoid_differentiable(y, x, dx, dim) -> bool:
    # No samples: PyTorch returns new zeros, which have no history.
    return len(y.shape) == 0 or y.shape[wrap_dim(dim, len(y.shape))] != 0


def _trapezoid_shape(y_shape: tuple, x_shape: tuple | None, d: int) -> tuple:
    """The result's shape, with PyTorch's errors for sample points that do not fit: ``x`` is
    viewed as PyTorch views it (1-D along ``dim``, else padded with leading ones), its differences
    along ``dim`` broadcast with the pairs of ``y``, and ``dim`` is summed away."""
    n = y_shape[d]
    if x_shape is None or n == 0:
        return y_shape[:d] + y_shape[d + 1:]
    if len(x_shape) == 1:
        if x_shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        viewed = tuple(n if axis == d else 1 for axis in range(len(y_shape)))
    else:
        viewed = (1,) * (len(y_shape) - len(x_shape)) + tuple(x_shape)
    spacing = viewed[:d] + (builtins.max(viewed[d] - 1, 0),) + viewed[d + 1:]
    pairs = y_shape[:d] + (n - 1,) + y_shape[d + 1:]
    shape = tuple(check_same_shape_or_broadcast(pairs, spacing))
    return shape[:d] + shape[d + 1:]


@rule
def _trapezoid_meta(y, x=None, *, dx=None, dim=-1):
    # A probe raises the kernel's argument and dtype errors and gives the dtype; the shapes need
    # the real sizes.
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, y.ndim)
    shape = _trapezoid_shape(y.shape, None if x is None else x.shape, d)
    if y.shape[d] == 0:
        return MetaArray(shape, y.dtype)
    result = _probe_quietly(trapezoid, y, x, dx=dx, dim=dim)
    return with_shape(result, shape)


@op(meta=_trapezoid_meta, differentiable=_trapezoid_differentiable, decompose=trapezoid_decomposition,
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((4,)))), Sample((SCALAR,)),
            Sample((TensorSpec((2, 3)), TensorSpec((2, 4))), {"dim": 1})),
    grad=_trapezoid_grad, save_only_for={"y": "x", "x": "y"}, samples=(
    Sample((TensorSpec((5,)),)), Sample((TensorSpec((2, 3)), TensorSpec((3,)))), Sample((TensorSpec((3, 2)),),
                                                                                      {"dx": 0.5, "dim": 0}),
    Sample((TensorSpec((2, 3), "float64"), TensorSpec((2, 3), "float64")), {"dim": 1}),
    Sample((TensorSpec((4,), "int64"),)), Sample((TensorSpec((1,)),)), Sample((TensorSpec((3, 2)), TensorSpec((3,))),
                                                                          {"dim": 0}),
    Sample((TensorSpec((0, 2)),), {"dx": 0.5, "dim": 0}), Sample((TensorSpec((3,), "int8", -100, 100),
                                                                  TensorSpec((3,), "int8", 0, 5)))))
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Number | None = None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at the sample points ``x``
    (1-D, or shaped like ``y``) or spaced ``dx`` apart (1 by default).

    As PyTorch: ``(sum(y) - (y[0] + y[-1]) / 2) * dx`` for a constant spacing (an integer sum
    wraps around in int64), ``sum((y[1:] + y[:-1]) * diff(x)) / 2`` with sample points, each
    step in PyTorch's result dtypes; no samples integrate to zeros of ``y``'s dtype.

    >>> import tensormodes as tm
    >>> tm.trapezoid(tm.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx cannot both be given")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    shape = _trapezoid_shape(y.shape, None if x is None else x.shape, d)
    if n == 0:
        return np.zeros(shape, y.dtype)
    if x is None:
        if y.dtype == np.bool_:
            raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
        if isinstance(dx, (bool, complex)):
            raise RuntimeError("trapezoid: Currently, we only support dx as a real number.")
        total = _sum_in(y, (d,), False, _sum_dtype(y, None))
        # Each step an array (0-d ones too, which NumPy would turn into scalars): PyTorch's dtypes.
        first, last = np.asarray(y.take(0, axis=d)), np.asarray(y.take(n - 1, axis=d))
        ends = np.asarray(binary(np.multiply, np.asarray(binary(np.add, first, last)), 0.5))
        difference = np.asarray(binary(np.subtract, total, ends))
        return np.asarray(binary(np.multiply, difference, float(1 if dx is None else dx)))
    if y.dtype == np.bool_ or x.dtype == np.bool_:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if x.ndim == 1:
        x = x.reshape([n if axis == d else 1 for axis in range(y.ndim)])
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + x.shape)
    spacing = binary(np.subtract, x[along(d, slice(1, None))], x[along(d, slice(0, -1))])
    pairs = binary(np.add, y[along(d, slice(1, None))], y[along(d, slice(0, -1))])
    products = np.asarray(binary(np.multiply, pairs, spacing))
    return np.asarray(binary(np.true_divide, _sum_in(products, (d,), False, _sum_dtype(products, None)), 2.0))
