"""The ``out=`` overloads of the decomposed ops, derived: PyTorch registers a decomposition for
an op's packet through its ``out_wrapper``, so ``get_decompositions([aten.addmm])`` also holds
``addmm.out``, which computes the functional result, resizes ``out`` to it and copies it in.
Here every decomposition of an overload whose op declares an ``out=`` overload gets that entry,
made by ``out_variant`` (nothing is written per op).

>>> import tensormodes as tm
>>> from tensormodes._decomp import decomposition_table
>>> out = tm.empty(0)
>>> decomposition_table[tm.ops.aten.dot.out](tm.ones(3), tm.ones(3), out=out)
tensor(3.)
>>> out
tensor(3.)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..ops import aten

__all__ = ["out_variant", "add_out_variants"]


def out_variant(decomposition: Callable) -> Callable:
    """The decomposition of an op's ``out=`` overload from its functional one's, as PyTorch's
    ``out_wrapper``: compute, resize ``out`` when its shape differs (warning when it had
    elements), refuse a cast that lowers the dtype's kind, copy, return ``out``."""

    def out_decomposition(*args, out, **kwargs):
        result = decomposition(*args, **kwargs)
        if result is NotImplemented:
            return NotImplemented
        if out.shape != result.shape:
            if out.numel() != 0:
                # PyTorch's text, its second line not formatted (sic)
                warnings.warn(
                    f"An output with one or more elements was resized since it had shape {out.shape} "
                    "which does not match the required output shape {str(shape)}. "
                    "This behavior is deprecated, and in a future PyTorch release outputs will not "
                    "be resized unless they have zero elements. "
                    "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                    "t.resize_(0).", stacklevel=2)
            # ``resize_`` is a tensor method here, not an aten op: a trace does not record it (PyTorch's
            # records ``aten.resize_.default``), so only an ``out`` of the result's shape traces as its
            out.resize_(result.shape)
        if result.dtype._category > out.dtype._category:
            raise RuntimeError(f"Attempting to cast from {result.dtype} to out tensor with dtype {out.dtype}, "
                               "but this can't be cast because it is not safe!")
        return aten.copy_.default(out, result)

    out_decomposition.__name__ = f"{getattr(decomposition, '__name__', 'decomposition')}_out"
    out_decomposition.__qualname__ = out_decomposition.__name__
    out_decomposition.__doc__ = f"``{out_decomposition.__name__[:-4]}`` written into ``out``."
    return out_decomposition


def add_out_variants(table: dict, core: set, registered: dict) -> None:
    """Put into ``table`` the ``out=`` overload (one ``out`` tensor) of each functional overload
    it decomposes, where the op declares one, ``table`` lacks it and ``registered`` (overload ->
    ``register``'s ``out``) does not say False; ``core`` (PyTorch's core ATen set) gets it where
    it has the functional overload, unless ``registered`` says "table"."""
    for overload, decomposition in list(table.items()):
        form = registered.get(overload, True)
        if overload._kind != "functional" or not form:
            continue
        packet = overload.overloadpacket
        for name in packet.overloads():
            variant = getattr(packet, name)
            if variant._kind != "out" or variant._functional_name != overload._overloadname or variant in table:
                continue
            if [a.name for a in variant._schema.arguments if a.is_write] != ["out"]:
                continue  # several outputs (``values``, ``indices``): not derived
            table[variant] = out_variant(decomposition)
            if overload in core and form is True:
                core.add(variant)
