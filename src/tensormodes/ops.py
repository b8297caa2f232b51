"""``tensormodes.ops``: the ops at the dispatch level, by namespace (PyTorch's ``torch.ops``).

``ops.aten.<name>`` is an ``OpOverloadPacket``, ``ops.aten.<name>.<overload>`` an
``OpOverload`` (see ``tensormodes._dispatch.aten``), for every op of the table; any other
namespace holds the ops defined at run time there (``tensormodes.library.custom_op``).

>>> import tensormodes as tm
>>> tm.ops.aten.mm.default(tm.ones(1, 2), tm.ones(2, 1))
tensor([[2.]])
"""

from __future__ import annotations

from ._dispatch.aten import OpOverload, OpOverloadPacket, aten, op_namespace

__all__ = ["aten", "OpOverload", "OpOverloadPacket"]


def __getattr__(name: str):
    """``tensormodes.ops.<namespace>`` for namespaces of ops defined at run time."""
    if name.startswith("__"):
        raise AttributeError(f"module 'tensormodes.ops' has no attribute '{name}'")
    return op_namespace(name)
