"""Factories that say how the new tensor lies in memory: ``empty_permuted`` (dimensions laid out
in a given physical order) and ``buffer_array``, the array of ``frombuffer`` (the memory of a
Python buffer, shared).

>>> import tensormodes as tm
>>> tm.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
(12, 1, 3)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import resolve_dtype
from .creation import _np_empty, _shape_of, _target_np, check_device
from .meta_rules import rule
from .registry import Sample, Tensor, op
from .shape import int_tuple

__all__ = ["empty_permuted", "buffer_array"]


def _permuted_geometry(size, physical_layout) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shape and the element strides of ``size`` laid out in ``physical_layout``'s order
    (its first entry the outermost dimension), PyTorch's checks first."""
    shape = _shape_of((size,), "empty_permuted")
    layout = int_tuple(physical_layout, "empty_permuted", "physical_layout", allow_int=False)
    if len(shape) != len(layout):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(shape)} is not equal to len(physical_layout) = {len(layout)}")
    seen = set()
    for d in layout:
        if not 0 <= d < len(shape):
            raise RuntimeError(f"Dimension out of range (expected to be in range of [{-len(shape)}, "
                               f"{len(shape) - 1}], but got {d})")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    strides, step = [0] * len(shape), 1
    for d in reversed(layout):
        strides[d] = step
        step *= max(shape[d], 1)
    return shape, tuple(strides)


def _empty_permuted_meta(size, physical_layout, *, dtype=None, device=None, **_):
    shape, strides = _permuted_geometry(size, physical_layout)
    check_device(device)
    return MetaArray(shape, _target_np(dtype), strides)


@op(meta=rule(_empty_permuted_meta), random=True, factory=True,
    errors=(Sample(((2, 3), (0, 2, 1))), Sample(((2, 3), (0, 0)))),
    samples=(Sample(((2, 3, 4), (0, 2, 1))), Sample(((2, 3), (1, 0)), {"dtype": dt.int64}), Sample(((), ()))),
    schema={"size": "SymInt[]", "physical_layout": "int[]"})
def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: dt.dtype | None = None,
                   layout=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Returns a tensor of shape ``size`` filled with uninitialized data, its dimensions laid out
    in memory in the order ``physical_layout`` gives (outermost first): ``empty`` of the permuted
    sizes, permuted back.

    >>> import tensormodes as tm
    >>> t = tm.empty_permuted((2, 3), (1, 0))
    >>> t.shape, t.stride()
    (tensormodes.Size([2, 3]), (1, 2))
    """
    shape, strides = _permuted_geometry(size, physical_layout)
    check_device(device)
    target = _target_np(dtype)
    storage = _np_empty(max(int(np.prod(shape)), 1) if shape else 1, target)
    return np.ndarray(shape, target, buffer=storage, strides=tuple(s * target.itemsize for s in strides))


_READ_ONLY_WARNING = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. This means you can "
    "write to the underlying (supposedly non-writable) buffer using the tensor. You may want to copy the buffer to "
    "protect its data or make it writable before converting it to a tensor. This type of warning will be "
    "suppressed for the rest of this program.")


def buffer_array(buffer, dtype: dt.dtype, count: int = -1, offset: int = 0) -> np.ndarray:
    """The array of ``tensormodes.frombuffer`` (a plain function in PyTorch too, which no mode
    sees): ``count`` elements of ``dtype`` (-1: to the end) over the memory of ``buffer`` from
    byte ``offset``, shared; a read-only buffer (``bytes``) is copied (PyTorch writes through it;
    NumPy refuses), with PyTorch's warning. PyTorch's checks and messages.

    >>> buffer_array(bytearray(b"abcd"), dt.int8, 2, 1).tolist()
    [98, 99]
    """
    target = resolve_dtype(dtype)._np
    view = memoryview(buffer).cast("B")
    length, itemsize = view.nbytes, target.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({itemsize})")
        count = (length - offset) // itemsize
    elif offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) "
                         f"must not be greater than actual buffer length ({length} bytes)")
    result = np.frombuffer(view, target, count, offset)
    if view.readonly:
        warnings.warn(_READ_ONLY_WARNING, UserWarning, stacklevel=3)
        result = result.copy()
    return result
