"""``tensormodes.cumulative_trapezoid``: PyTorch's CompositeImplicitAutograd function (ATen's
``Integration.cpp``), written over public ops as PyTorch computes it. Handlers of
``__torch_function__`` see ``cumulative_trapezoid`` itself; the dispatch level sees the ops it runs
(``slice``, ``add``, ``mul``, ``cumsum`` ...); gradients are those of those ops. The package face
re-exports ``COMPOSITES``.

>>> import tensormodes as tm
>>> tm.cumulative_trapezoid(tm.tensor([1., 2., 4.]))
tensor([1.5000, 4.5000])
"""

from __future__ import annotations

from numbers import Number

from ._api import build
from ._api import namespace as tm
from ._ops.common import ops, wrap_dim
from ._ops.registry import Tensor

COMPOSITES, _public = build.native_composites("tensormodes")


@_public
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Number | None = None, dim: int = -1) -> Tensor:
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule, at the sample points
    ``x`` (1-D, or shaped like ``y``) or spaced ``dx`` apart (1 by default): one value fewer than
    ``y`` along ``dim``.

    >>> import tensormodes as tm
    >>> tm.cumulative_trapezoid(tm.tensor([1., 2., 4.]), tm.tensor([0., 1., 3.]))
    tensor([1.5000, 7.5000])
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: x and dx cannot both "
                        "be given")
    aten = ops.ops.aten  # (the ops PyTorch's C++ runs, with their overloads: slice, mul.Scalar ...)
    d = wrap_dim(dim, y.dim()) if y.dim() else wrap_dim(dim, 1)
    if x is None:
        if y.dtype is tm.bool:
            raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
        if isinstance(dx, (bool, complex)):
            raise RuntimeError("cumulative_trapezoid: Currently, we only support dx as a real number.")
        step = 1.0 if dx is None else float(dx)
        pairs = aten.slice.Tensor(y, d, 0, -1) + aten.slice.Tensor(y, d, 1)
        return aten.mul.Scalar(pairs, step / 2.0).cumsum(d)
    if y.dtype is tm.bool or x.dtype is tm.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[d] = x.shape[0]
        x = x.view(sizes)
    steps = aten.slice.Tensor(x, d, 1) - aten.slice.Tensor(x, d, 0, -1)
    pairs = aten.slice.Tensor(y, d, 0, -1) + aten.slice.Tensor(y, d, 1)
    return aten.div.Scalar((pairs * steps).cumsum(d), 2.0)
