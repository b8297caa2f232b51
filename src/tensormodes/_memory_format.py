"""Memory formats: ``contiguous_format``, ``channels_last``, ``channels_last_3d`` and
``preserve_format``, PyTorch's four singletons of ``tensormodes.memory_format``.

A tensor here holds a NumPy array, whose strides are what ``stride()`` reports;
``Tensor.is_contiguous(memory_format=...)`` reads them with PyTorch's rules. Factories and
copies accept ``memory_format=`` and give row-major (``contiguous_format``) results.

>>> import tensormodes as tm
>>> tm.channels_last, tm.zeros(2, 3, 4, 5).is_contiguous(memory_format=tm.channels_last)
(tensormodes.channels_last, False)
"""

from __future__ import annotations

import numpy as np

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "copied_as",
           "is_contiguous_as", "layout", "strided"]


class memory_format:  # noqa: N801 - PyTorch's spelling
    """The layout a tensor's elements are asked to have in memory (one of four singletons)."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'tensormodes.memory_format' instances")

    @classmethod
    def _make(cls, name: str) -> memory_format:
        made = object.__new__(cls)
        object.__setattr__(made, "_name", name)
        return made

    def __setattr__(self, name, value):
        raise AttributeError(f"'tensormodes.memory_format' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"tensormodes.{self._name}"

    def __reduce__(self):
        return self._name  # pickles and copies as the module-level singleton

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


memory_format.__module__ = "tensormodes"
contiguous_format = memory_format._make("contiguous_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
preserve_format = memory_format._make("preserve_format")



class layout:  # noqa: N801 - PyTorch's spelling
    """How a tensor's elements are stored: ``strided`` (dense, with strides), the one layout
    here. Factories take ``layout=`` and a dispatch handler sees it where PyTorch passes it
    (a gradient formula's ``grad.new_zeros(shape, grad.options())``).

    >>> import tensormodes as tm
    >>> tm.strided, type(tm.strided) is tm.layout
    (tensormodes.strided, True)
    """

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'tensormodes.layout' instances")

    def __setattr__(self, name, value):
        raise AttributeError(f"'tensormodes.layout' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"tensormodes.{self._name}"

    def __reduce__(self):
        return self._name

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


layout.__module__ = "tensormodes"
strided = object.__new__(layout)
object.__setattr__(strided, "_name", "strided")

# The order PyTorch walks dimensions in, innermost first, to check a channels-last layout.
_CHANNELS_LAST_ORDER = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}


def is_contiguous_as(array: np.ndarray, fmt, caller: str = "is_contiguous") -> bool:
    """Whether ``array``'s strides lay it out as ``fmt`` asks (PyTorch's rules: channels-last
    formats need 4-D / 5-D arrays; dimensions of size 1 may have any stride)."""
    if type(fmt) is not memory_format:
        raise TypeError(f"{caller}(): argument 'memory_format' must be tensormodes.memory_format, "
                        f"not {type(fmt).__name__}")
    shape, itemsize = array.shape, array.itemsize
    strides = [s // itemsize for s in array.strides] if itemsize else list(array.strides)
    order = _CHANNELS_LAST_ORDER.get(fmt)
    if order is None:  # contiguous_format, preserve_format: row-major
        if 0 in shape:
            return True
        dims = range(len(shape) - 1, -1, -1)
    elif len(shape) != order[0]:
        return False
    else:
        dims = order[1]
    expected = 1
    for d in dims:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def copied_as(array: np.ndarray, fmt) -> np.ndarray:
    """A copy of ``array`` laid out as ``fmt`` asks (``clone(memory_format=...)``): row-major for
    ``contiguous_format``, channels innermost for the channels-last formats, the input's own
    order for ``preserve_format`` (or None). PyTorch's error for a channels-last format of
    another rank."""
    if fmt is None or fmt is preserve_format:
        return array.copy(order="K")
    if type(fmt) is not memory_format:
        raise TypeError(f"clone(): argument 'memory_format' must be tensormodes.memory_format, not "
                        f"{type(fmt).__name__}")
    order = _CHANNELS_LAST_ORDER.get(fmt)
    if order is None:
        return np.array(array, order="C", copy=True)
    if array.ndim != order[0]:
        raise RuntimeError(f"required rank {order[0]} tensor to use {fmt._name} format")
    inward = (0, *range(2, array.ndim), 1)  # channels last in memory
    outward = (0, array.ndim - 1, *range(1, array.ndim - 1))
    return np.ascontiguousarray(array.transpose(inward)).transpose(outward)
