"""Meta execution: an op whose arguments hold ``MetaArray``s runs its meta rule (declared next
to its kernel in ``_ops``) instead of its kernel, after PyTorch's device check.

>>> import tensormodes as tm
>>> on_meta([1, tm.empty(2, device="meta")]), on_meta(tm.ones(2)), on_meta(1)
(True, False, False)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._meta_array import MetaArray

__all__ = ["on_meta", "meta_runner"]


def on_meta(value) -> bool:
    """True if ``value`` (an argument of the slow path) holds meta data: a meta tensor, or a
    list, tuple or index with one in it."""
    data = getattr(value, "_data", None)
    if type(data) is MetaArray:
        return True
    if type(value) is list or type(value) is tuple:
        return any(on_meta(v) for v in value)
    return False


def _device_of(value) -> str:
    return "meta" if type(value) is MetaArray else "cpu"


def _check_devices(args, kwargs) -> None:
    """PyTorch's error when meta and cpu tensors (other than cpu scalars) meet."""
    first = None
    for value in (*args, *kwargs.values()):
        for item in (value if isinstance(value, (list, tuple)) else (value,)):
            if type(item) is MetaArray or (isinstance(item, np.ndarray) and item.ndim):
                if first is None:
                    first = _device_of(item)
                elif _device_of(item) != first:
                    raise RuntimeError(f"Tensor on device {_device_of(item)} is not on the expected device {first}!")


def meta_runner(opdef) -> Callable:
    """What the kernel-call site calls in place of ``opdef``'s kernel when an argument is meta:
    the op's rule, after PyTorch's device check (factories have no inputs to check)."""
    check = not opdef.factory

    def run(*args, **kwargs):
        if check:
            _check_devices(args, kwargs)
        if opdef.meta is None:
            raise NotImplementedError(f"{opdef.name}(): no meta rule yet; it cannot run on meta tensors")
        return opdef.meta(opdef, args, kwargs)

    run.__name__ = f"meta_{opdef.name}"
    return run
