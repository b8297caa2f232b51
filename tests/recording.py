"""A mode that records the public name of every call it sees (shared by the tests)."""

from __future__ import annotations

from tensormodes.overrides import TorchFunctionMode, resolve_name


class Recorder(TorchFunctionMode):
    """Records the public name of every call it sees, and passes it on."""

    def __init__(self):
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(resolve_name(func))
        return func(*args, **(kwargs or {}))
