"""Sorting and searching: ``sort``, ``argsort``, ``msort``, ``topk``, ``kthvalue``, ``searchsorted``,
``bucketize``, ``isin`` and the uniques.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._reduction import (
    _INT64,
    _WIDE_INT,
    _gather,
    _int_dim,
    _kept_shape,
    _kernel_rule,
    _not_implemented,
    _probe_quietly,
    _scatter_back,
    _selection_grad,
    _sort_indices,
    _sortable,
)
from ._samples import M23, M234, SCALAR
from .common import (
    along,
    array_type_name,
    derivative_not_implemented,
    is_int,
    no_complex_autograd,
    ops,
    quiet,
    scalar_type_name,
)
from .meta_rules import data_dependent, probe, rule, same_shape, with_shape
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op
from .shape import _wrap_dim_of_tensor


def _check_sortable(array: np.ndarray) -> None:
    if array.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")


_SORT_SAMPLES = (Sample((M23,)), Sample((M23, 0)), Sample((M23, -1, True)), Sample((M23,), {"descending": True}),
                 Sample((M23,), {"stable": True, "dim": 0}), Sample((_WIDE_INT, 1)),
                 Sample((TensorSpec((5,), "int64", -2, 2),), {"stable": True}),
                 Sample((TensorSpec((5,), "int64", -2, 2),), {"stable": True, "descending": True}),
                 Sample((TensorSpec((4,), "bool"),), {"stable": True}),
                 Sample((TensorSpec((2, 3), "float16"),)), Sample((TensorSpec((2, 3), "bfloat16"), 0, True)),
                 Sample((SCALAR,)), Sample((TensorSpec((0, 3)), 0)))


def _sort_grad(grad, input_shape, result1, dim):
    return _scatter_back(grad[0], input_shape, result1, dim, True)


@op(meta=same_shape,
    errors=(Sample((TensorSpec((3,), "complex64"),)), Sample((M23, 2))),
    returns=("values", "indices"), grad=_sort_grad, method=True, out=True, samples=_SORT_SAMPLES,
    aten={
        "sort.default": ("stable", "out=values"),
        "sort.stable": (
            "(order): self stable dim descending",
            "dim: *int",
            "descending: *bool",
            "stable: bool?=",
            "-core",
            "out=values_stable",
        ),
    },
    tags=("core",))
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False) -> Tensor:
    """The elements sorted along ``dim``, with the indices that sort them, as the named
    tuple ``(values, indices)``. The sort is always stable; NaN sorts as the largest.

    >>> import tensormodes as tm
    >>> tm.sort(tm.tensor([3, 1, 2]), descending=True)
    tensormodes.return_types.sort(
    values=tensor([3, 2, 1]),
    indices=tensor([0, 2, 1]))
    """
    axis = _int_dim(dim, input.ndim, "sort")  # the dim first, as PyTorch
    _check_sortable(input)
    if input.ndim == 0:
        return RETURN_TYPES["sort"](input.copy(), np.zeros((), _INT64))
    indices = _sort_indices(input, axis, descending)
    return RETURN_TYPES["sort"](_gather(input, indices, axis), indices.astype(_INT64, copy=False))


@op(meta=same_shape, differentiable=False, method=True, out=True, samples=_SORT_SAMPLES,
    aten={"argsort.default": ("stable", "out="),
        "argsort.stable": ("(order): self stable dim descending", "dim: *int", "descending: *bool",
            "stable: bool=")})
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False) -> Tensor:
    """The indices (int64) that sort ``input`` along ``dim`` (stably; see ``sort``).

    >>> import tensormodes as tm
    >>> tm.tensor([[3, 1, 2], [0, 5, 4]]).argsort(dim=1)
    tensor([[1, 2, 0],
            [0, 2, 1]])
    """
    axis = _int_dim(dim, input.ndim, "argsort")  # the dim first, as PyTorch
    _check_sortable(input)
    if input.ndim == 0:
        return np.zeros((), _INT64)
    return _sort_indices(input, axis, descending).astype(_INT64, copy=False)


def _topk_grad(grad, input_shape, result1, dim):
    return _scatter_back(grad[0], input_shape, result1, dim, True)


@_kernel_rule
def _topk_meta(kernel, input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - the kernel's names
    # The probe (k clamped to its length) raises the dtype, dim and type errors in the kernel's
    # order; the range of k needs the real length.
    length = input.shape[_int_dim(dim, input.ndim, "topk")] if input.ndim else 1
    fits = is_int(k) and 0 <= k <= length
    result = _probe_quietly(kernel, input, min(k, 1) if fits else k, dim, largest, sorted)
    if not fits:
        raise RuntimeError("selected index k out of range")
    if not input.ndim:
        return with_shape(result, ())
    axis = dim % input.ndim
    return with_shape(result, input.shape[:axis] + (k,) + input.shape[axis + 1:])


@op(meta=_topk_meta,
    errors=(Sample((M23, 4)), Sample((M23, 1, 2)), Sample((TensorSpec((3,), "bool"), 1))),
    returns=("values", "indices"), grad=_topk_grad, method=True, out=True,
    samples=(Sample((M23, 2)), Sample((M23, 1, 0)), Sample((M23, 2), {"largest": False}),
             Sample((M23, 3, -1, True, True)), Sample((M234, 2, 1), {"sorted": True}), Sample((_WIDE_INT, 2)),
             Sample((TensorSpec((2, 3), "float16"), 1, 0, False)), Sample((M23, 0)), Sample((SCALAR, 1)),
             Sample((TensorSpec((0, 3)), 0, 0))), tags=("core",),
    aten={"topk.default": ("out=values",)},
    schema={"k": "SymInt"})
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
    if not is_int(k):
        raise TypeError(f"topk(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    if not 0 <= k <= length:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return RETURN_TYPES["topk"](input.copy(), np.zeros((), _INT64))
    indices = _sort_indices(input, axis, largest)[along(axis, slice(0, k))]
    values = _gather(input, indices, axis)
    return RETURN_TYPES["topk"](values, indices.astype(_INT64, order="C", copy=False))


def _check_kthvalue(input, k, dim) -> int:
    """PyTorch's checks of kthvalue's arguments, in its order (dim, an empty slice, k's type and
    range); the wrapped dim."""
    axis = _int_dim(dim, input.ndim, "kthvalue")
    length = input.shape[axis] if input.ndim else 1
    if length == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {axis} to have non-zero size.")
    if not is_int(k):
        raise TypeError(f"kthvalue(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    if not 1 <= k <= length:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    return axis


@_kernel_rule
def _kthvalue_meta(kernel, input, k, dim=-1, keepdim=False):
    # The kernel checks dim, an empty slice, k's type and range (the real length) before the dtype.
    axis = _check_kthvalue(input, k, dim)
    result = _probe_quietly(kernel, input, 1, dim, keepdim)
    return with_shape(result, _kept_shape(input.shape, (axis,) if input.ndim else None, keepdim))


def _greater_or_nan(x, y) -> bool:
    return (x != x and y == y) or x > y


def _quick_select(row: list, k: int) -> int:
    """The position in ``row`` of the element PyTorch's kthvalue picks as the ``k``-th smallest
    (from 0): its CPU kernel's quickselect (Sedgewick's, median-of-three pivot, NaN largest),
    step by step, which decides which of several equal elements is reported."""
    values = list(row)
    positions = list(range(len(values)))

    def swap(i, j):
        values[i], values[j] = values[j], values[i]
        positions[i], positions[j] = positions[j], positions[i]

    low, high = 0, len(values) - 1
    while high > low:
        if high == low + 1:
            if _greater_or_nan(values[low], values[high]):
                swap(low, high)
            break
        swap((low + high) >> 1, low + 1)
        if _greater_or_nan(values[low + 1], values[high]):
            swap(low + 1, high)
        if _greater_or_nan(values[low], values[high]):
            swap(low, high)
        if _greater_or_nan(values[low + 1], values[low]):
            swap(low + 1, low)
        i, j, pivot = low + 1, high, values[low]
        while True:
            i += 1
            while _greater_or_nan(pivot, values[i]):
                i += 1
            j -= 1
            while _greater_or_nan(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
    return positions[k]


@op(meta=_kthvalue_meta,
    errors=(Sample((M23, 4)), Sample((M23, 0))), returns=("values", "indices"),
    grad=_selection_grad, differentiable=no_complex_autograd("kthvalue"), method=True, out=True,
    samples=(Sample((M23, 2)), Sample((M23, 1, 0, True)), Sample((TensorSpec((3, 4), "float64"), 4, -1)),
             Sample((TensorSpec((2, 5), "int64", -1000, 1000), 3)), Sample((TensorSpec((3, 2), "float16"), 1, 0)),
             Sample((SCALAR, 1)), Sample((TensorSpec((0, 3)), 1, 1))),
    aten={"kthvalue.default": ("out=values",)},
    schema={"k": "SymInt"})
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The ``k``-th smallest element along ``dim`` (``k`` counts from 1; NaN is the largest)
    and its index, as the named tuple ``(values, indices)``. Among equal elements, the index
    is the one PyTorch's quickselect reports.

    >>> import tensormodes as tm
    >>> tm.kthvalue(tm.tensor([4, 1, 3, 2]), 2)
    tensormodes.return_types.kthvalue(
    values=tensor(2),
    indices=tensor(3))
    """
    axis = _check_kthvalue(input, k, dim)
    if input.ndim == 0:  # any dtype: PyTorch's kernel is not reached
        return RETURN_TYPES["kthvalue"](input.copy(), np.zeros((), _INT64))
    if input.dtype.kind in "bc":
        raise _not_implemented("kthvalue_cpu", input)
    indices = _sort_indices(input, axis, False)[along(axis, slice(k - 1, k))]
    values = _gather(input, indices, axis)
    # Where the k-th value occurs more than once (NaN included), which of its copies PyTorch
    # reports is up to its quickselect: those slices run it.
    sortable = _sortable(input)
    same = sortable == _sortable(values)
    if sortable.dtype.kind == "f":
        same |= np.isnan(sortable) & np.isnan(_sortable(values))
    copies = np.moveaxis(np.add.reduce(same, axis=axis, keepdims=True), axis, -1)[..., 0]
    if np.any(copies > 1):
        rows = np.moveaxis(sortable, axis, -1).reshape(-1, input.shape[axis])
        chosen = np.moveaxis(indices, axis, -1).reshape(-1)  # a copy
        for row in np.flatnonzero(copies > 1):
            chosen[row] = _quick_select(rows[row].tolist(), k - 1)
        indices = np.moveaxis(chosen.reshape(copies.shape + (1,)), -1, axis)
        values = _gather(input, indices, axis)
    if not keepdim:
        indices, values = indices.squeeze(axis), values.squeeze(axis)
    return RETURN_TYPES["kthvalue"](values, indices.astype(_INT64, order="C", copy=False))


def _msort_grad(grad, input_shape, indices):
    if not input_shape:
        return grad
    return grad.new_zeros(tuple(input_shape)).scatter(0, indices, grad)


def _msort_decomposition(input):
    """PyTorch's composite ``msort``: the values of ``sort`` along dimension 0."""
    return ops.ops.aten.sort.default(input, 0)[0]


@op(meta=same_shape, grad=_msort_grad, saves=("indices",), method=True, node="sort", decompose=_msort_decomposition,
    samples=(Sample((M23,)), Sample((TensorSpec((4,), "int64", -5, 5),)), Sample((SCALAR,)),
             Sample((TensorSpec((3, 2), "float16"),))),
    schema={"(returns)": "Tensor"})
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


def _search_probe(value):
    """A probe for searchsorted's operands; a ``sorter`` probe must hold valid indices (0)."""
    return np.zeros(tuple(min(s, 1) for s in value.shape), value.dtype) if type(value) is MetaArray else value


def _check_search(boundaries, query, right: bool, side, sorter) -> str:
    """PyTorch's checks of searchsorted's arguments that read no values, in its order; the side."""
    which = _search_side(right, side)
    if sorter is not None and sorter.shape != boundaries.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(boundaries.shape)}and got sorter tensor {list(sorter.shape)}")
    if query.ndim == 0 and boundaries.ndim != 1:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is "
                           f"1, but we got boundaries tensor dim({boundaries.ndim}) and input value's dim(0) numel(1)")
    if boundaries.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if boundaries.ndim > 1 and boundaries.shape[:-1] != query.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(boundaries.shape)} and input value tensor {list(query.shape)}")
    if sorter is not None and sorter.dtype != _INT64:
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{array_type_name(sorter)}")
    return which


def _search_query(values):
    """``values`` as an array: a number as PyTorch's 0-dim tensor of its type."""
    return values if isinstance(values, (np.ndarray, MetaArray)) else np.asarray(values)


@_kernel_rule
def _searchsorted_meta(kernel, sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    # The shape checks need the real shapes; the dtype errors and the dtype come from a probe.
    query = _search_query(values)
    _check_search(sorted_sequence, query, right, side, sorter)
    result = kernel(_search_probe(sorted_sequence), _search_probe(values), out_int32=out_int32, right=right,
                    side=side, sorter=_search_probe(sorter))
    return with_shape(result, query.shape)


@_kernel_rule
def _bucketize_meta(kernel, input, boundaries, *, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    result = kernel(_search_probe(input), _search_probe(boundaries), out_int32=out_int32, right=right)
    return with_shape(result, input.shape if isinstance(input, (MetaArray, np.ndarray)) else ())


@op(meta=_searchsorted_meta,
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((3, 2)))), Sample((SCALAR, TensorSpec((2,)))),
            Sample((TensorSpec((2, 3)), SCALAR)), Sample((TensorSpec((2, 3)), 1.5)),
            Sample((TensorSpec((3,)), TensorSpec((2,))), {"sorter": TensorSpec((3,), "int32", 0, 2)})),
    differentiable=False, out=True, samples=(
    Sample((TensorSpec((5,), "int64", 0, 0), TensorSpec((3,), "int64", -2, 8))),
    Sample((TensorSpec((4,), "float32", 0, 0), TensorSpec((2, 2))), {"right": True}),
    Sample((TensorSpec((2, 3), "float64", 0, 0), TensorSpec((2, 2), "float64")), {"side": "right"}),
    Sample((TensorSpec((4,), "int64", 0, 0), 3)), Sample((TensorSpec((4,), "int64", 0, 0), TensorSpec((3,), "int64")),
                                                          {"out_int32": True}),
    Sample((TensorSpec((3,), "bool", 0, 0), TensorSpec((2,), "float64"))),
    Sample((TensorSpec((3,), "uint8", 0, 0), -1)),
    Sample((TensorSpec((2, 0)), TensorSpec((2, 3)))), Sample((TensorSpec((3,), "complex64"), TensorSpec((0,))))),
    aten={
        "searchsorted.Tensor": ("values: Tensor self",),
        "searchsorted.Scalar": ("values: Scalar self",),
    })
def searchsorted(sorted_sequence: Tensor, values: Tensor | Number, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each of ``values`` would be inserted into ``sorted_sequence`` (sorted along its last
    dimension, which is searched; leading dimensions match ``values``') to keep it sorted:
    before equal elements, or after them with ``right=True`` / ``side='right'``.

    >>> import tensormodes as tm
    >>> tm.searchsorted(tm.tensor([1, 3, 5, 7]), tm.tensor([3, 6, 9]))
    tensor([1, 3, 4])
    """
    query = _search_query(values)
    which = _check_search(sorted_sequence, query, right, side, sorter)
    index_type = np.int32 if out_int32 else _INT64
    if sorter is not None and sorter.size:
        if sorter.min() < 0 or sorter.max() >= sorter.shape[-1]:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        sorted_sequence = np.take_along_axis(sorted_sequence, sorter, axis=-1)
    if not query.size:  # PyTorch returns before it reads (or checks the dtype of) anything
        return np.zeros(query.shape, index_type)
    # Both in their promoted dtype (a number as a 0-dim tensor: it wraps into an integer type)
    common = dt.result_dtype([sorted_sequence, query])._np
    with quiet():
        boundaries = _searchable(sorted_sequence.astype(common, copy=False), "searchsorted_out_cpu")
        query = _searchable(query.astype(common, copy=False), "searchsorted_out_cpu")
    if boundaries.ndim == 1:
        return np.asarray(np.searchsorted(boundaries, query, side=which)).astype(index_type)
    rows = boundaries.reshape(query.size // query.shape[-1], boundaries.shape[-1])  # (leading shapes match)
    questions = query.reshape(rows.shape[0], query.shape[-1])
    found = np.stack([np.searchsorted(r, q, side=which) for r, q in zip(rows, questions, strict=True)])
    return found.reshape(query.shape).astype(index_type)


@op(meta=_bucketize_meta, differentiable=False, out=True, samples=(
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


def _isin_meta(elements, test_elements, *, assume_unique=False, invert=False):
    # the kernel on one-element probes: its type and dtype errors; the shape is the elements'
    checked = isin(probe(elements), probe(test_elements), assume_unique=assume_unique, invert=invert)
    return with_shape(checked, tuple(getattr(elements, "shape", ())))


@op(meta=rule(_isin_meta), differentiable=False, out=True,
    errors=(Sample((TensorSpec((2,), "complex64"), TensorSpec((2,), "complex64"))),
            Sample((TensorSpec((2,), "bool"), TensorSpec((1,), "bool")))),
    samples=(Sample((TensorSpec((3, 4), "int64", 0, 6), TensorSpec((3,), "int64", 0, 6))),
             Sample((TensorSpec((5,), "int64", 0, 4), 2), {"invert": True}),
             Sample((3, TensorSpec((4,), "int64", 0, 4))),
             Sample((TensorSpec((4,), "int64", 0, 4), 2.5)),
             Sample((TensorSpec((4,), "uint8", 0, 3), TensorSpec((2,), "int8", -1, 2))),
             Sample((TensorSpec((4,), "float16", 0, 2), TensorSpec((2,), "bfloat16", 0, 2)), {"assume_unique": True}),
             Sample((TensorSpec((0, 2), "float64"), TensorSpec((2,), "float64"))),
             Sample((TensorSpec((), "int64", 0, 2), TensorSpec((0,), "int64"))),
             Sample((TensorSpec((3,), "float32", 0, 3), TensorSpec((2, 2), "int64", 0, 3)))),
    aten={"isin.Tensor_Tensor": (), "isin.Tensor_Scalar": ("test_elements: Scalar test_element",),
          "isin.Scalar_Tensor": ("elements: Scalar element",)})
def isin(elements: Tensor | Number, test_elements: Tensor | Number, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements`` (compared in their promoted
    dtype; NaN is in nothing), as a bool tensor of ``elements``' shape; ``invert`` negates it.
    ``assume_unique`` is a speed hint that changes no result.

    >>> import tensormodes as tm
    >>> tm.isin(tm.tensor([[1, 2], [3, 4]]), tm.tensor([2, 3]))
    tensor([[False,  True],
            [ True, False]])
    """
    if not isinstance(elements, np.ndarray) and not isinstance(test_elements, np.ndarray):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__}), but expected one of:\n"
                        " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = "
                        "False, Tensor out = None)\n"
                        " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = "
                        "False, Tensor out = None)\n"
                        " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = "
                        "False, Tensor out = None)\n")
    for given in (elements, test_elements):  # each tensor's own type first, as PyTorch checks them
        if isinstance(given, np.ndarray) and given.dtype.kind in "bc":
            raise RuntimeError(f"Unsupported input type encountered for isin(): "
                               f"{scalar_type_name(dt.NP_TO_DTYPE[given.dtype])}")
    common = dt.result_dtype([e for e in (elements, test_elements) if isinstance(e, np.ndarray)],
                             [e for e in (elements, test_elements) if not isinstance(e, np.ndarray)])
    if common.is_complex or common is dt.bool:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {scalar_type_name(common)}")
    compute = np.float32 if common._np in (np.dtype(np.float16), dt.bfloat16._np) else common._np
    with quiet():  # a number into a narrower integer type wraps, as PyTorch's conversion
        values = np.asarray(elements).astype(compute)
        tests = np.asarray(test_elements).astype(compute)
    return np.asarray(np.isin(values, tests, invert=invert))


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
        # Each NaN is distinct, as in PyTorch; bfloat16 is compared as float32 (exactly) and kept.
        values, inverse, counts = np.unique(_sortable(flat), return_inverse=True, return_counts=True,
                                            equal_nan=False)
        return values.astype(input.dtype, copy=False), inverse.reshape(input.shape), counts
    axis = _wrap_dim_of_tensor(dim, input.ndim)
    if input.size == 0:
        if input.shape.count(0) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
        if input.shape[axis]:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
        empty = np.zeros(0, _INT64)
        return input.copy(), empty, empty
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


def _unique_node(input, sorted=True, return_inverse=False, return_counts=False, dim=None) -> str:  # noqa: A002
    return "_unique2" if dim is None else "unique_dim"


def _unique_consecutive_node(input, return_inverse=False, return_counts=False, dim=None) -> str:
    return "unique_consecutive"


# PyTorch records the uniques of a tensor that requires grad, without a derivative.
@op(meta=data_dependent, grad=derivative_not_implemented(lambda dim: _unique_node(None, dim=dim)),
    node=_unique_node, method=True, samples=(
    Sample((TensorSpec((6,), "int64", 0, 3),)), Sample((TensorSpec((2, 3), "int64", 0, 2),),
                                                       {"return_inverse": True, "return_counts": True}),
    Sample((TensorSpec((4, 2), "int64", 0, 1),), {"dim": 0, "return_counts": True}), Sample((TensorSpec((5,)),)),
    Sample((TensorSpec((4,), "bool"),), {"sorted": False}),
    Sample((TensorSpec((5,), "bfloat16", 0, 2),), {"return_inverse": True})),
    aten={
        "_unique2.default": ("dim",),
        "unique_dim.default": ("(order): self dim sorted return_inverse return_counts", "dim: int="),
    },
    schema={"(returns)": "Tensor, Tensor, Tensor"}, tags=("dynamic_output_shape",))
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None) -> Tensor:
    """The distinct elements of ``input`` (or its distinct slices along ``dim``), sorted; with
    ``return_inverse`` also where each element went, with ``return_counts`` how often each occurs.

    >>> import tensormodes as tm
    >>> tm.unique(tm.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    if input.dtype.kind == "c":
        raise _not_implemented("unique" if dim is None else "unique_dim", input)
    return _unique_result(*_unique_along(input, dim, False), return_inverse, return_counts)


@op(meta=data_dependent, grad=derivative_not_implemented("unique_consecutive"), node=_unique_consecutive_node,
    method=True, samples=(
    Sample((TensorSpec((8,), "int64", 0, 1),), {"return_inverse": True, "return_counts": True}),
    Sample((TensorSpec((4, 2), "int64", 0, 1),), {"dim": 0}), Sample((TensorSpec((3,)),))),
    schema={"(returns)": "Tensor, Tensor, Tensor"}, tags=("dynamic_output_shape",))
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Tensor:
    """``input`` with each run of equal neighbours (or equal slices along ``dim``) kept once;
    with ``return_inverse`` also each element's run, with ``return_counts`` the runs' lengths.

    >>> import tensormodes as tm
    >>> tm.unique_consecutive(tm.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    if input.dtype.kind == "c":
        raise _not_implemented("unique" if dim is None else "unique_dim", input)
    return _unique_result(*_unique_along(input, dim, True), return_inverse, return_counts)
