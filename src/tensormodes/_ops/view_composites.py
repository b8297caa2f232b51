"""What the dispatch level sees for ``movedim`` and ``unflatten``: PyTorch's composites of them
(``op(decompose=)``), over the view ops ``permute``, ``alias`` and ``view``.

>>> import tensormodes as tm
>>> movedim_decomposition(tm.zeros(2, 3, 4), 0, -1).shape
tensormodes.Size([3, 4, 2])
>>> unflatten_decomposition(tm.zeros(2, 6), 1, (2, -1)).shape
tensormodes.Size([2, 2, 3])
"""

from __future__ import annotations

import math

from .._tensor_base import TensorBase
from .common import is_int, ops, wrap_dim
from .shape import int_tuple

__all__ = ["movedim_decomposition", "unflatten_decomposition"]


def movedim_decomposition(input, source, destination):
    """PyTorch's composite ``movedim``: ``permute`` to the moved order (``alias`` of a 0-dimensional
    tensor). Arguments the op rejects are left to it."""
    if not isinstance(input, TensorBase):
        return NotImplemented
    ndim = input.dim()
    try:
        moved = [wrap_dim(d, ndim) for d in int_tuple(source, "movedim", "source")]
        targets = [wrap_dim(d, ndim) for d in int_tuple(destination, "movedim", "destination")]
    except (RuntimeError, IndexError, TypeError):
        return NotImplemented
    if len(moved) != len(targets) or len(set(moved)) != len(moved) or len(set(targets)) != len(targets):
        return NotImplemented
    if ndim == 0:
        return ops.ops.aten.alias.default(input)
    order = [d for d in range(ndim) if d not in moved]
    for target, d in sorted(zip(targets, moved, strict=True)):
        order.insert(target, d)
    return ops.ops.aten.permute.default(input, order)


def unflatten_decomposition(input, dim, sizes):
    """PyTorch's composite ``unflatten``: a ``view`` to the shape with ``dim`` split into ``sizes``,
    a -1 among them resolved (splitting one dimension is always a view). Arguments the op rejects
    are left to it."""
    if not isinstance(input, TensorBase) or not is_int(dim) or not input.dim():
        return NotImplemented
    try:
        sizes = list(int_tuple(sizes, "unflatten", "sizes"))
        d = wrap_dim(dim, input.dim())
    except (RuntimeError, IndexError, TypeError):
        return NotImplemented
    size, known = input.shape[d], math.prod(s for s in sizes if s != -1)
    if not sizes or sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        return NotImplemented
    if -1 in sizes:
        if known == 0 or size % known:
            return NotImplemented
        sizes[sizes.index(-1)] = size // known
    elif known != size:
        return NotImplemented
    return ops.ops.aten.view.default(input, [*input.shape[:d], *sizes, *input.shape[d + 1:]])
