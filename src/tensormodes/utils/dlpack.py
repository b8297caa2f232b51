"""DLPack exchange, as ``torch.utils.dlpack``: tensors share memory with NumPy arrays and
any other DLPack library, both ways, without copying.

>>> import numpy as np, tensormodes as tm
>>> array = np.arange(3.0)
>>> t = tm.from_dlpack(array)
>>> t[0] = 7.0; array
array([7., 1., 2.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype as dt
from .._api.tensor import Tensor
from .._device import check_compute_device
from .._tensor_base import wrap_array

__all__ = ["from_dlpack", "to_dlpack"]

_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
                    "once, so you might have already constructed a tensor from it once.")


class _Capsule:
    """A bare DLPack capsule presented as a producer, so that NumPy can import it."""

    __slots__ = ("_capsule",)

    def __init__(self, capsule) -> None:
        self._capsule = capsule

    def __dlpack__(self, **_):
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # a capsule holds no device NumPy could ask for: CPU, or NumPy refuses it


def from_dlpack(ext_tensor: Any, *, device=None, copy: bool | None = None) -> Tensor:
    """Converts a tensor from an external library into a ``tensormodes.Tensor``.

    ``ext_tensor`` is an object with ``__dlpack__`` and ``__dlpack_device__`` (a NumPy
    array, a tensor of another library) or a DLPack capsule (``to_dlpack``'s result,
    which can be consumed only once). The result shares memory with the source, unless
    ``copy=True``. Arrays imported from an unversioned capsule are read-only (NumPy's rule).

    >>> import numpy as np, tensormodes as tm
    >>> tm.from_dlpack(np.ones(2, dtype=np.int32))
    tensor([1, 1], dtype=tensormodes.int32)
    """
    if device is not None:
        check_compute_device(device)
    if type(ext_tensor).__name__ == "PyCapsule":
        source = _Capsule(ext_tensor)
    elif hasattr(ext_tensor, "__dlpack__"):
        source = ext_tensor
    else:
        raise RuntimeError(_INVALID_CAPSULE)
    try:
        array = np.from_dlpack(source, copy=copy)
    except ValueError as error:
        if "PyCapsule" in str(error):  # a capsule that was already consumed
            raise RuntimeError(_INVALID_CAPSULE) from None
        raise
    if array.dtype not in dt.NP_TO_DTYPE:
        raise TypeError(f"from_dlpack: tensormodes has no dtype for the DLPack data type {array.dtype}")
    return wrap_array(array)


def to_dlpack(tensor: Tensor):
    """Returns an opaque object (a "DLPack capsule") representing the tensor.

    The capsule can be consumed once, by ``from_dlpack`` of tensormodes or of another
    library; it shares the tensor's memory. It is a DLPack 1.0 (versioned) capsule, so
    that the importer may write to it, where PyTorch's legacy capsule would import
    read-only into NumPy.

    >>> import tensormodes as tm
    >>> t = tm.ones(2)
    >>> back = tm.utils.dlpack.from_dlpack(tm.utils.dlpack.to_dlpack(t))
    >>> back[0] = 3.0; t
    tensor([3., 1.])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    return tensor.__dlpack__(max_version=(1, 0))
