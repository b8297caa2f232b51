"""What a meta tensor holds: a ``MetaArray`` (shape, dtype, strides and storage offset, no
data), where a cpu tensor holds a NumPy ``ndarray``. It sits at the bottom with the bare tensor;
the rules computing an op's result metadata live with the kernels (``_ops/meta_rules.py``).

>>> import numpy as np
>>> a = MetaArray((1000, 64), np.dtype(np.float32))
>>> a.shape, a.strides, a.nbytes
((1000, 64), (256, 4), 256000)
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MetaArray", "DataDependentOutputError", "contiguous_strides", "dense_strides", "copy_of", "meta_like",
           "view_of", "no_data_error"]


class DataDependentOutputError(RuntimeError):
    """Raised by meta execution of an op whose output shape depends on tensor values
    (``nonzero``, ``masked_select``, ``unique``, boolean-mask indexing ...)."""


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's strides (in elements) of a contiguous tensor of ``shape``.

    >>> contiguous_strides((2, 3, 4)), contiguous_strides(())
    ((12, 4, 1), ())
    """
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def no_data_error(operation: str) -> NotImplementedError:
    """PyTorch's error for copying values out of a meta tensor, with a note naming the
    ``operation`` that needed them (the message itself stays PyTorch's, word for word).

    >>> error = no_data_error("Tensor.tolist()")
    >>> str(error)
    'Cannot copy out of meta tensor; no data!'
    >>> print(error.__notes__[0])
    Tensor.tolist() needs the tensor's values; a meta tensor has only its shape, dtype and strides
    """
    error = NotImplementedError("Cannot copy out of meta tensor; no data!")
    error.add_note(f"{operation} needs the tensor's values; a meta tensor has only its shape, dtype and strides")
    return error


class MetaArray:
    """What a meta tensor holds: shape, NumPy dtype, strides and storage offset (in elements,
    PyTorch's unit), no data. It reads like an ``ndarray`` for metadata (``shape``, ``ndim``,
    ``size``, ``dtype``, ``itemsize``, ``strides`` in bytes) and refuses everything that needs
    values, naming the operation.

    >>> import numpy as np
    >>> m = MetaArray((2, 3), np.dtype(np.int64))
    >>> m.ndim, m.size, m.elem_strides
    (2, 6, (3, 1))
    >>> MetaArray((), np.dtype(np.int64)).item()
    Traceback (most recent call last):
      ...
    RuntimeError: Tensor.item() cannot be called on meta tensors
    """

    # ``base``: the MetaArray a view was made from (its root, as ``ndarray.base``), else None.
    __slots__ = ("shape", "dtype", "elem_strides", "offset", "base")
    __array_ufunc__ = None  # NumPy ufuncs refuse meta arrays instead of reading them

    def __init__(self, shape, dtype: np.dtype, strides: tuple[int, ...] | None = None, offset: int = 0) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.elem_strides = contiguous_strides(self.shape) if strides is None else tuple(strides)
        self.offset = offset
        self.base = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(s * self.dtype.itemsize for s in self.elem_strides)

    def item(self):
        if self.size != 1:
            raise RuntimeError(f"a Tensor with {self.size} elements cannot be converted to Scalar")
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def tolist(self):
        raise no_data_error("Tensor.tolist()")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                        "host memory first.")

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype}, strides={self.elem_strides})"


class WrapperArray(MetaArray):
    """What a wrapper subclass (``Tensor._make_wrapper_subclass``) holds: the public metadata
    its ``__torch_dispatch__`` serves, and no data. Unlike a meta tensor's MetaArray, it is on
    the device the wrapper names; a kernel reaching it (a handler that forgot to unwrap) fails.
    """

    __slots__ = ("device",)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage: a wrapper subclass "
                           "holds no data; its __torch_dispatch__ must unwrap it before calling the op")

    def __repr__(self) -> str:
        return f"WrapperArray(shape={self.shape}, dtype={self.dtype}, strides={self.elem_strides})"


def dense_strides(shape, strides) -> tuple[int, ...]:
    """Contiguous strides laid out in the order of ``strides`` (largest first): what a copy that
    preserves its input's memory format (``clone``, ``empty_like``, NumPy's ``order="K"``) gets.

    >>> dense_strides((2, 3), (1, 2))
    (1, 2)
    """
    order = sorted(range(len(shape)), key=lambda i: (-strides[i], i))
    result, step = [0] * len(shape), 1
    for i in reversed(order):
        result[i] = step
        step *= max(shape[i], 1)
    return tuple(result)


def copy_of(source: MetaArray, dtype=None) -> MetaArray:
    """A new MetaArray with ``source``'s shape and memory format (``dtype``: a NumPy dtype)."""
    return MetaArray(source.shape, source.dtype if dtype is None else dtype,
                     dense_strides(source.shape, source.elem_strides))


def meta_like(shape, dtype) -> MetaArray:
    """A contiguous MetaArray (``dtype``: a NumPy dtype, or anything with ``._np``)."""
    return MetaArray(shape, getattr(dtype, "_np", dtype))


def view_of(source: MetaArray, shape, strides, offset: int = 0, dtype=None) -> MetaArray:
    """A view of ``source``: ``strides`` in elements, ``offset`` added to the source's."""
    view = MetaArray(shape, source.dtype if dtype is None else dtype, strides, source.offset + offset)
    view.base = source if source.base is None else source.base
    return view
