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
    """``tensormodes.ops.<namespace>`` for namespaces of ops defined at run time. Unlike PyTorch's
    ``torch.ops``, a namespace exists only once an op is defined in it: tools probing a module's
    attributes (pytest's ``pytest_plugins``) must not find one."""
    namespace = op_namespace(name, create=False)
    if namespace is None:
        raise AttributeError(f"module 'tensormodes.ops' has no attribute '{name}'")
    return namespace
