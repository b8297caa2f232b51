"""``skip_init``: a module built without running its parameters' initialisation.

>>> import tensormodes as tm
>>> tm.nn.utils.skip_init(tm.nn.Linear, 6, 1).weight.shape
tensormodes.Size([1, 6])
"""

from __future__ import annotations

import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with uninitialised parameters and buffers (made on the meta
    device, then given memory on ``device``, by default the CPU), as PyTorch's; the class must take a
    ``device`` argument.

    >>> import tensormodes as tm
    >>> tm.nn.utils.skip_init(tm.nn.Linear, 2, 3, device="meta").weight.device
    device(type='meta')
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
