"""Modes that record what they see, shared by the tests: the public name of every call
(``Recorder``), the name of every aten op (``aten_op_log``)."""

from __future__ import annotations

from importlib import import_module

from tensormodes.overrides import TorchFunctionMode, resolve_name


class Recorder(TorchFunctionMode):
    """Records the public name of every call it sees, and passes it on."""

    def __init__(self):
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(resolve_name(func))
        return func(*args, **(kwargs or {}))


def aten_op_log(library):
    """A ``TorchDispatchMode`` of ``library`` (tensormodes, or torch as the oracle) that records the
    name of each aten op it sees in ``.ops`` (``"aten.mm.default"``), and passes it on."""
    python_dispatch = import_module(f"{library.__name__}.utils._python_dispatch")

    class AtenOpLog(python_dispatch.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    return AtenOpLog()
