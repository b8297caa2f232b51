"""Dispatch-level forms of reductions PyTorch implements as composites (``op(decompose=)``), kept
apart from ``reduction.py``, which declares the ops: ``trapezoid`` with a constant spacing.

>>> import tensormodes as tm
>>> from tensormodes.utils._python_dispatch import TorchDispatchMode
>>> class Names(TorchDispatchMode):
...     def __init__(self):
...         self.seen = []
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         self.seen.append(str(func).split(".")[1])
...         return func(*args, **(kwargs or {}))
>>> with Names() as names:
...     _ = tm.trapezoid(tm.ones(2, 3), dx=2.0)
>>> names.seen[1:]
['select', 'select', 'add', 'mul', 'sum', 'sub', 'mul']
"""

from __future__ import annotations

from .._tensor_base import TensorBase
from .common import ops, wrap_dim


def trapezoid_decomposition(y, x=None, dx=None, dim=-1):  # (the op's arguments, all by position)
    """PyTorch's composite ``trapezoid`` with a constant spacing: ``(y.sum(dim) - (y[0] + y[-1]) * 0.5)
    * dx`` along ``dim`` (``select`` twice, ``add``, ``mul``, ``sum``, ``sub``, ``mul``), the op's own
    kernel's steps. Sample points (``x``), no samples, and arguments the op rejects are left to it."""
    if x is not None or not isinstance(y, TensorBase) or y.dim() == 0 or y.dtype is ops.bool:
        return NotImplemented
    if isinstance(dx, (bool, complex)) or not isinstance(dim, int):
        return NotImplemented
    try:
        d = wrap_dim(dim, y.dim())
    except IndexError:
        return NotImplemented
    if y.shape[d] == 0:
        return NotImplemented
    aten = ops.ops.aten
    ends = aten.add.Tensor(aten.select.int(y, d, 0), aten.select.int(y, d, -1))
    halves = aten.mul.Scalar(ends, 0.5)
    total = aten.sum.dim_IntList(y, [d])
    return aten.mul.Scalar(aten.sub.Tensor(total, halves), float(1 if dx is None else dx))
