"""``tensormodes.histogramdd``: PyTorch's CompositeImplicitAutograd function (ATen's
``Histogram.cpp``) over its three ATen ops: a count of bins per dimension reaches the dispatch
level as ``_histogramdd_bin_edges`` then ``_histogramdd_from_bin_cts``, tensors of edges as
``_histogramdd_from_bin_tensors``. Handlers of ``__torch_function__`` see ``histogramdd`` itself.
The package face re-exports ``COMPOSITES``.

>>> import tensormodes as tm
>>> tm.histogramdd(tm.tensor([[0., 1.], [2., 1.]]), [2, 1]).hist.tolist()
[[1.0], [1.0]]
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from ._api import build
from ._api import namespace as tm
from ._ops.registry import RETURN_TYPES, Tensor

COMPOSITES, _public = build.native_composites("tensormodes")
_HISTOGRAMDD = RETURN_TYPES["histogramdd"]


@_public
def histogramdd(input: Tensor, bins, *, range: Sequence[float] | None = None,  # noqa: A002 - PyTorch's names
                weight: Tensor | None = None, density: bool = False):
    """Computes a multi-dimensional histogram of the values in a tensor: the innermost dimension
    of ``input`` holds each point's coordinates; ``bins`` is a count of equal-width bins (one for
    every dimension, or one per dimension) over ``range`` (by default the data's), or one 1-D
    tensor of edges per dimension. Returns ``(hist, bin_edges)``, ``bin_edges`` a tuple.

    >>> import tensormodes as tm
    >>> result = tm.histogramdd(tm.tensor([[0., 0.], [1., 1.], [1., 0.]]), 2)
    >>> result.hist.tolist(), [e.tolist() for e in result.bin_edges]
    ([[1.0, 0.0], [1.0, 1.0]], [[0.0, 0.5, 1.0], [0.0, 0.5, 1.0]])
    """
    if isinstance(bins, tm.Tensor) or (isinstance(bins, (list, tuple)) and bins and
                                       all(isinstance(b, tm.Tensor) for b in bins)):
        edges = (bins,) if isinstance(bins, tm.Tensor) else tuple(bins)
        hist = tm._histogramdd_from_bin_tensors(input, list(edges), weight=weight, density=density)
        return _HISTOGRAMDD(hist, edges)
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        if input.dim() == 0:
            raise IndexError("Dimension specified as -1 but tensor has no dimensions")
        bins = [int(bins)] * input.shape[-1]
    elif not all(isinstance(b, numbers.Integral) for b in bins):
        raise TypeError(f"histogramdd(): argument 'bins' must be an int, a tuple of ints or a tuple of Tensors, not "
                        f"{type(bins).__name__}")
    counts = [int(b) for b in bins]
    edges = tm._histogramdd_bin_edges(input, counts, range=range, weight=weight, density=density)
    hist = tm._histogramdd_from_bin_cts(input, counts, range=range, weight=weight, density=density)
    return _HISTOGRAMDD(hist, tuple(edges))

