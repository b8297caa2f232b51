"""Histograms with bin edges: ``histogram`` (bins as a count over a range, or as a tensor of
edges) and the three ATen ops behind ``torch.histogramdd`` (``_histogramdd_bin_edges``,
``_histogramdd_from_bin_cts``, ``_histogramdd_from_bin_tensors``), as PyTorch's ``Histogram.cpp``
computes them (``histc`` lives with the statistics).

Each element is placed as PyTorch's kernel places it: with edges given, by a binary search
(``std::upper_bound``) over them; with a count, by the linear map from the range, corrected by a
search over the neighbouring edges (so it agrees with ``linspace``'s edges); the last bin holds its
right edge, and elements outside the edges (or NaN) count nowhere. Counts and weights add in the
input's dtype, element by element; ``density`` divides by the total and by each bin's widths.

>>> import tensormodes as tm
>>> hist, edges = tm.histogram(tm.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
>>> hist.tolist(), edges.tolist()
([0.0, 2.0, 1.0, 0.0], [0.0, 0.75, 1.5, 2.25, 3.0])
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from numbers import Number

import numpy as np

from .._meta_array import MetaArray
from .common import cpp_type_name, dtype_of, no_derivative, not_implemented
from .meta_rules import rule
from .ranges import linspace as _linspace
from .registry import RETURN_TYPES, Sample, Tensor, TensorSpec, op, register_return_type

# -- arguments --------------------------------------------------------------------------------------


def _points(input, function: str):
    """The input as (points, dimensions): ``histogram``'s every element a 1-D point,
    ``histogramdd``'s innermost dimension the coordinates."""
    if function == "histogram":
        shape = (math.prod(input.shape), 1)
    elif input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    else:
        shape = (math.prod(input.shape[:-1]), input.shape[-1])
    return MetaArray(shape, input.dtype) if type(input) is MetaArray else input.reshape(shape)


def _flat(weight):
    """``histogram``'s weight as one row (ATen reshapes it to its number of elements)."""
    if weight is None:
        return None
    shape = (math.prod(weight.shape),)
    return MetaArray(shape, weight.dtype) if type(weight) is MetaArray else weight.reshape(shape)


def _check_counts(counts) -> None:
    for dim, count in enumerate(counts):
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {dim}")


def _format(value: float) -> str:
    """A double as C++ streams print it (``1``, ``2.5``, ``inf``, ``nan``)."""
    return f"{value:g}"


def _outer_edges(points, range) -> list[tuple[float, float]]:  # noqa: A002 - PyTorch's name
    """Each dimension's leftmost and rightmost edge: ``range``'s, or the data's (0 and 1 without
    data), widened by a half on each side when they meet."""
    dims = points.shape[1]
    if range is not None:
        bounds = [float(v) for v in range]
        if len(bounds) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should have {2 * dims} "
                               f"elements, but got {len(bounds)}")
        pairs = [(bounds[2 * d], bounds[2 * d + 1]) for d in builtins.range(dims)]  # (``range`` is PyTorch's parameter)
    elif type(points) is not MetaArray and points.shape[0]:
        pairs = [(float(points[:, d].min()), float(points[:, d].max())) for d in builtins.range(dims)]
    else:
        pairs = [(0.0, 1.0)] * dims
    edges = []
    for dim, (low, high) in enumerate(pairs):
        if type(points) is MetaArray and range is None:
            edges.append((low, high))  # (the data's range: unknown, unchecked)
            continue
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{_format(low)}, {_format(high)}] is not "
                               "finite")
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_format(low)} max "
                               f"{_format(high)} for dimension {dim}")
        edges.append((low - 0.5, high + 0.5) if low == high else (low, high))
    return edges


def _check_inputs(points, bins, weight) -> None:
    """ATen's ``histogramdd_check_inputs``: the edges' and the weight's dtypes and shapes (``points``:
    the input, its innermost dimension the coordinates; ``histogram``'s as a column)."""
    dims = points.shape[-1]
    if len(bins) != dims:
        raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for a {dims}-dimensional "
                           f"histogram but got {len(bins)}")
    for dim, edges in enumerate(bins):
        if edges.dtype != points.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {cpp_type_name(dtype_of(points))} and bins for dimension {dim} with "
                               f"dtype {cpp_type_name(dtype_of(edges))}")
        if edges.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {edges.ndim} "
                               f"dimensions in the bins tensor for dimension {dim}")
        if edges.size == 0:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in "
                               f"the bins tensor for dimension {dim}")
    if weight is not None:
        if weight.dtype != points.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({cpp_type_name(dtype_of(points))}), and "
                               f"weight({cpp_type_name(dtype_of(weight))})")
        if tuple(weight.shape or (1,)) != tuple(points.shape[:-1]):
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               f"input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(points.shape)} and weight with shape {list(weight.shape)}")


def _check_dtype(points) -> None:
    if points.dtype not in (np.float32, np.float64):  # the kernel's dispatch: float and double only
        raise not_implemented("histogramdd", dtype_of(points))


def _edges_from_counts(points, counts, range) -> list:  # noqa: A002
    """``linspace`` edges over each dimension's outer edges, in the input's dtype."""
    _check_counts(counts)
    outer = _outer_edges(points, range)
    if type(points) is MetaArray:
        return [MetaArray((count + 1,), points.dtype) for count in counts]
    return [_linspace(low, high, count + 1, dtype=dtype_of(points)) for (low, high), count in zip(outer, counts)]


# -- the kernel -------------------------------------------------------------------------------------

def _upper_bound(edges: np.ndarray, values: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """``std::upper_bound(edges + first, edges + last, value) - edges`` for each value: the same
    halving steps (which, over edges that are not sorted, find what PyTorch's search finds)."""
    count = last - first
    while (count > 0).any():
        step = count // 2
        middle = first + step
        right = (count > 0) & ~(values < edges[np.minimum(middle, len(edges) - 1)])
        first = np.where(right, middle + 1, first)
        count = np.where(count > 0, np.where(right, count - step - 1, step), 0)
    return first


def _histogram_counts(points: np.ndarray, weight, edges: Sequence[np.ndarray], searched: bool,
                      density: bool) -> np.ndarray:
    """The counts (or summed weights) of ``points`` (M, N) in the bins of ``edges`` (one array
    per dimension); ``searched``: edges given (binary search), else a linear map from a count."""
    _check_dtype(points)
    dtype = points.dtype.type
    hist = np.zeros(tuple(len(e) - 1 for e in edges), points.dtype)
    inside = np.ones(points.shape[0], bool)
    positions = []
    for dim, dim_edges in enumerate(edges):
        values = points[:, dim]
        size = len(dim_edges)
        left, right = dim_edges[0], dim_edges[-1]
        with np.errstate(invalid="ignore"):
            inside &= (values >= left) & (values <= right)
        if searched:
            position = _upper_bound(dim_edges, values, np.zeros(len(values), np.int64),
                                    np.full(len(values), size, np.int64)) - 1
        else:
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                guess = (values - left) * dtype(size - 1) / (right - left)
            guess = np.where(inside, guess, 0).astype(np.int64)
            low, high = np.maximum(guess - 1, 0), np.minimum(guess + 2, size)
            position = _upper_bound(dim_edges, values, low, high) - 1
        positions.append(np.where(position == size - 1, position - 1, position))  # the last bin holds its right edge
    chosen = tuple(p[inside] for p in positions)
    added = np.ones(int(inside.sum()), points.dtype) if weight is None else weight.reshape(-1)[inside]
    np.add.at(hist, chosen, added)  # element by element, in the input's dtype
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = hist / hist.sum()
            for dim, dim_edges in enumerate(edges):
                shape = [1] * len(edges)
                shape[dim] = len(dim_edges) - 1
                hist = hist / np.diff(dim_edges).reshape(shape)
    return hist.astype(points.dtype, copy=False)


# -- histogram --------------------------------------------------------------------------------------

def _histogram_meta(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    points = _points(input, "histogram")
    if isinstance(bins, (MetaArray, np.ndarray)):
        _check_inputs(points, [bins], _flat(weight))
        _check_counts([bins.size - 1])
        edges = [bins]
    else:
        edges = _edges_from_counts(points, [bins], range)
        _check_inputs(points, edges, _flat(weight))
    _check_dtype(points)
    return RETURN_TYPES["histogram"](MetaArray((edges[0].shape[0] - 1,), input.dtype),
                                     MetaArray(edges[0].shape, input.dtype))


_VALUES = TensorSpec((12,), "float32", -2, 3)


@op(meta=rule(_histogram_meta), method=True, grad=no_derivative("histogram"), returns=("hist", "bin_edges"),
    errors=(Sample((_VALUES, 0)), Sample((TensorSpec((4,), "float16"), 3)), Sample((_VALUES, 3), {"range": (2., 1.)}),
            Sample((_VALUES, TensorSpec((4,), "float64"))), Sample((_VALUES, 3), {"weight": TensorSpec((5,))})),
    samples=(Sample((_VALUES,)), Sample((_VALUES, 5)), Sample((TensorSpec((3, 4), "float64"), 4), {"range": (-1., 1.)}),
             Sample((_VALUES, 4), {"weight": TensorSpec((12,)), "density": True}),
             Sample((_VALUES, TensorSpec((4,), "float32", -2, 3))),
             Sample((TensorSpec((0,)), 3)), Sample((TensorSpec(()), 2))),
    aten={"histogram.bins_tensor": ("range", "bins: Tensor=", "out=bins_tensor_out"),
          "histogram.bin_ct": ("bins: int=100", "out=bin_ct_out")}, schema={"range": "float[]?"})
def histogram(input: Tensor, bins: Tensor | Number = 100, *, range: Sequence[float] | None = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, Tensor]:
    """Computes a histogram of the values in a tensor: ``bins`` equal-width bins over ``range``
    (by default the data's minimum to maximum), or the bins between the edges of the 1-D tensor
    ``bins``; each element adds 1 (or its ``weight``) to its bin; ``density`` divides by the total
    and by each bin's width. Returns ``(hist, bin_edges)``.

    >>> import tensormodes as tm
    >>> tm.histogram(tm.tensor([1., 2., 1.]), tm.tensor([0., 1.5, 3.]), weight=tm.tensor([1., 2., 4.]))
    tensormodes.return_types.histogram(
    hist=tensor([5., 2.]),
    bin_edges=tensor([0.0000, 1.5000, 3.0000]))
    """
    points = _points(input, "histogram")
    flat_weight = _flat(weight)
    if isinstance(bins, np.ndarray):
        _check_inputs(points, [bins], flat_weight)
        _check_counts([bins.size - 1])
        _check_dtype(points)
        return RETURN_TYPES["histogram"](_histogram_counts(points, flat_weight, [bins], True, density), bins.copy())
    if isinstance(bins, float):  # (PyTorch's binding takes a tensor or an int)
        raise TypeError("histogram() received an invalid combination of arguments - got (Tensor, float)")
    edges = _edges_from_counts(points, [bins], range)
    _check_inputs(points, edges, flat_weight)
    return RETURN_TYPES["histogram"](_histogram_counts(points, flat_weight, edges, False, density), edges[0])


# -- histogramdd's ops ------------------------------------------------------------------------------

# ``torch.histogramdd``'s result (the composite over these ops, in ``tensormodes._histograms``)
register_return_type("histogramdd", ("hist", "bin_edges"))

def _counts(input, bins) -> list[int]:
    counts = [int(b) for b in bins]
    if len(counts) != input.shape[-1]:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    return counts


def _bin_edges_meta(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    return _histogramdd_bin_edges(input, bins, range=range, weight=weight, density=density)


_POINTS = TensorSpec((10, 2), "float32", -2, 3)


@op(meta=rule(_bin_edges_meta), grad=no_derivative("_histogramdd_bin_edges"),
    errors=(Sample((_POINTS, [2, 0])), Sample((_POINTS, [2, 2]), {"range": [0., 1.]})),
    samples=(Sample((_POINTS, [2, 3])),
             Sample((TensorSpec((2, 3, 2), "float64"), [4, 1]), {"range": [0., 1., -1., 1.]}),
             Sample((TensorSpec((0, 2)), [2, 2]))),
    schema={"range": "float[]?", "(returns)": "Tensor[]"})
def _histogramdd_bin_edges(input: Tensor, bins: Sequence[int], *, range: Sequence[float] | None = None,  # noqa: A002
                           weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, ...]:
    """The bin edges ``torch.histogramdd`` uses for a count of bins per dimension: ``linspace``
    over ``range`` (or the data's range) in each dimension (PyTorch's
    ``aten::_histogramdd_bin_edges``).

    >>> import tensormodes as tm
    >>> [e.tolist() for e in tm._histogramdd_bin_edges(tm.tensor([[0., 1.], [2., 1.]]), [2, 1])]
    [[0.0, 1.0, 2.0], [0.5, 1.5]]
    """
    counts = _counts(input, bins)
    points = _points(input, "histogramdd")
    edges = _edges_from_counts(points, counts, range)
    _check_dtype(points)
    return tuple(edges)


def _from_counts_meta(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    points = _points(input, "histogramdd")
    edges = _edges_from_counts(points, _counts(input, bins), range)
    _check_inputs(input, edges, weight)
    _check_dtype(points)
    return MetaArray(tuple(e.shape[0] - 1 for e in edges), input.dtype)


@op(meta=rule(_from_counts_meta), grad=no_derivative("_histogramdd_from_bin_cts"),
    errors=(Sample((_POINTS, [2, 0])), Sample((_POINTS, [2])), Sample((_POINTS, [2, 2]), {"weight": TensorSpec((3,))})),
    samples=(Sample((_POINTS, [2, 3])), Sample((_POINTS, [3, 2]), {"weight": TensorSpec((10,)), "density": True}),
             Sample((TensorSpec((2, 3, 2), "float64"), [4, 1]), {"range": [0., 1., -1., 1.]}),
             Sample((TensorSpec((0, 2)), [2, 2]))), schema={"range": "float[]?"})
def _histogramdd_from_bin_cts(input: Tensor, bins: Sequence[int], *, range: Sequence[float] | None = None,  # noqa: A002
                              weight: Tensor | None = None, density: bool = False) -> Tensor:
    """``torch.histogramdd``'s counts for a count of bins per dimension (PyTorch's
    ``aten::_histogramdd_from_bin_cts``).

    >>> import tensormodes as tm
    >>> tm._histogramdd_from_bin_cts(tm.tensor([[0., 1.], [2., 1.]]), [2, 1]).tolist()
    [[1.0], [1.0]]
    """
    points = _points(input, "histogramdd")
    edges = _edges_from_counts(points, _counts(input, bins), range)
    _check_inputs(input, edges, weight)
    return _histogram_counts(points, weight, edges, False, density)


def _from_tensors_meta(input, bins, *, weight=None, density=False):
    points = _points(input, "histogramdd")
    _check_inputs(input, bins, weight)
    _check_counts([b.shape[0] - 1 for b in bins])
    _check_dtype(points)
    return MetaArray(tuple(b.shape[0] - 1 for b in bins), input.dtype)


@op(meta=rule(_from_tensors_meta), grad=no_derivative("_histogramdd_from_bin_tensors"),
    errors=(Sample((_POINTS, [TensorSpec((3,))])), Sample((_POINTS, [TensorSpec((3,)), TensorSpec((1,))]))),
    samples=(Sample((_POINTS, [TensorSpec((3,), "float32", -1, 1), TensorSpec((4,), "float32", -1, 2)])),
             Sample((_POINTS, [TensorSpec((3,), "float32", -1, 1), TensorSpec((2,), "float32", -1, 2)]),
                    {"weight": TensorSpec((10,)), "density": True})))
def _histogramdd_from_bin_tensors(input: Tensor, bins: Sequence[Tensor], *, weight: Tensor | None = None,
                                  density: bool = False) -> Tensor:
    """``torch.histogramdd``'s counts for the bin edges of each dimension (PyTorch's
    ``aten::_histogramdd_from_bin_tensors``).

    >>> import tensormodes as tm
    >>> tm._histogramdd_from_bin_tensors(tm.tensor([[0., 1.], [2., 1.]]), [tm.tensor([0., 1., 2.]),
    ...                                  tm.tensor([0., 2.])]).tolist()
    [[1.0], [1.0]]
    """
    points = _points(input, "histogramdd")
    _check_inputs(input, bins, weight)
    _check_counts([b.shape[0] - 1 for b in bins])
    return _histogram_counts(points, weight, list(bins), True, density)
