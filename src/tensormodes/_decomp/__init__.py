"""``tensormodes._decomp``: decomposition tables for ``make_fx`` (PyTorch's ``torch._decomp``).

A decomposition table maps an aten ``OpOverload`` to a Python function computing it from
other aten ops; ``make_fx(f, decomposition_table=...)`` runs the function instead of
recording the op, and records the ops it calls. ``get_decompositions`` picks entries (by
overload, or by packet for all its overloads); ``core_aten_decompositions()`` is the table
lowering to PyTorch's core ATen op set, as far as this library's ops go. An op's ``out=``
overload is decomposed through its functional one (``out_variants``), as PyTorch's ``out_wrapper``.

>>> import tensormodes as tm
>>> from tensormodes._decomp import get_decompositions
>>> aten = tm.ops.aten
>>> sorted(str(op) for op in get_decompositions([aten.addmm, aten._softmax.default]))
['aten._softmax.default', 'aten.addmm.default', 'aten.addmm.out']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ops import OpOverload, OpOverloadPacket
from . import decompositions, decompositions_more, out_variants
from .decompositions import CORE, DECOMPOSITIONS, OUT_VARIANTS, register

out_variants.add_out_variants(DECOMPOSITIONS, CORE, OUT_VARIANTS)  # (after every module has registered its own)

__all__ = ["decomposition_table", "get_decompositions", "core_aten_decompositions", "register_decomposition",
           "decompositions", "decompositions_more", "out_variants"]

decomposition_table = DECOMPOSITIONS
"""Every decomposition this library has: ``OpOverload`` -> function."""


def register_decomposition(aten_op, registry: dict | None = None, *, type: str = "post_autograd",
                           unsafe: bool = False) -> Callable:
    """Decorator: the function decomposes ``aten_op`` (an overload, a packet for all its
    overloads, or a list of them), put in ``registry`` (by default the global table)."""
    if type != "post_autograd":
        raise RuntimeError(f"register_decomposition: type={type!r} is not supported (only 'post_autograd')")
    overloads = _overloads(aten_op if isinstance(aten_op, (list, tuple)) else [aten_op])

    def decorate(fn: Callable) -> Callable:
        if registry is None:
            register(*overloads)(fn)
        else:
            for overload in overloads:
                registry[overload] = fn
        return fn

    return decorate


def get_decompositions(aten_ops: Iterable, type: str = "post_autograd") -> dict:
    """The table's entries for ``aten_ops`` (overloads, or packets meaning every overload of
    theirs the table has); ops the table lacks are left out, as in PyTorch."""
    if type != "post_autograd":
        raise RuntimeError(f"get_decompositions: type={type!r} is not supported (only 'post_autograd')")
    wanted = set(_overloads(aten_ops))
    return {overload: fn for overload, fn in DECOMPOSITIONS.items() if overload in wanted}


def core_aten_decompositions() -> dict:
    """The decompositions to PyTorch's core ATen op set: the entries of PyTorch's
    ``core_aten_decompositions()`` that this library's op table has (a new dict)."""
    return {overload: fn for overload, fn in DECOMPOSITIONS.items() if overload in CORE}


def _overloads(ops: Iterable) -> list:
    found = []
    for op in ops:
        if isinstance(op, OpOverloadPacket):
            found.extend(getattr(op, name) for name in op.overloads())
        elif isinstance(op, OpOverload):
            found.append(op)
        else:
            raise TypeError(f"expected an OpOverload or OpOverloadPacket, got {op!r}")
    return found
