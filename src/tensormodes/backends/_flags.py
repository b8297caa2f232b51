"""A module whose attributes are checked flags: PyTorch's ``torch.backends.cudnn`` style,
where ``cudnn.benchmark = 1`` raises ``RuntimeError: set_benchmark_cudnn expects a bool``."""

from __future__ import annotations

import types


class FlagModule(types.ModuleType):
    """A module class whose ``FLAGS`` (attribute name -> name PyTorch's setter is called) only
    take bools; other attributes set as on any module."""

    FLAGS: dict = {}

    def __setattr__(self, name: str, value) -> None:
        setter = type(self).FLAGS.get(name)
        if setter is not None and type(value) is not bool:
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)
