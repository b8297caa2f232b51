"""The storage a ``map_location`` callable receives, as ``torch.load`` passes it: an untyped
block of bytes on a device (``map_location(storage, location)``), to return as it is, moved, or
not at all (``None``: the storage goes where the file says).
"""

from __future__ import annotations

import numpy as np

from .._device import device, parse_device

__all__ = ["UntypedStorage"]

_CUDA_MESSAGE = "Torch not compiled with CUDA enabled: tensormodes has no CUDA device (map storages to the cpu)"


class UntypedStorage:
    """A checkpoint's storage during ``tm.load``: its bytes on the cpu, or only its size on the
    meta device. The part of ``torch.UntypedStorage`` that ``map_location`` callables use.

    >>> s = UntypedStorage(np.arange(3, dtype=np.uint8))
    >>> s.device, s.nbytes(), s.tolist(), s.cpu() is s
    (device(type='cpu'), 3, [0, 1, 2], True)
    >>> s.to(device="meta")
    tensormodes.UntypedStorage(device=meta) of size 3
    """

    __slots__ = ("_raw", "_nbytes", "_device")

    def __init__(self, raw: np.ndarray | None, nbytes: int | None = None) -> None:
        self._raw = raw  # uint8 bytes on the cpu; None on the meta device
        self._nbytes = len(raw) if raw is not None else int(nbytes)
        self._device = device("cpu" if raw is not None else "meta")

    @property
    def device(self) -> device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return self._raw is None

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def element_size(self) -> int:
        return 1

    def __getitem__(self, index: int) -> int:
        if self._raw is None:
            raise NotImplementedError("Not available for 'meta' device type")
        return int(self._raw[index])

    def tolist(self) -> list[int]:
        if self._raw is None:
            raise NotImplementedError("Not available for 'meta' device type")
        return self._raw.tolist()

    def cpu(self) -> UntypedStorage:
        """This storage if it is on the cpu, else a zero-filled cpu storage of its size."""
        return self if self._raw is not None else UntypedStorage(np.zeros(self._nbytes, np.uint8))

    def cuda(self, device=None, non_blocking: bool = False) -> UntypedStorage:
        raise RuntimeError(_CUDA_MESSAGE)

    def to(self, *, device, non_blocking: bool = False) -> UntypedStorage:
        """This storage on ``device`` (``"cpu"`` or ``"meta"``)."""
        kind = parse_device(device).type
        if kind == "cpu":
            return self.cpu()
        if kind == "meta":
            return self if self._raw is None else UntypedStorage(None, self._nbytes)
        if kind == "cuda":
            raise RuntimeError(_CUDA_MESSAGE)
        raise RuntimeError(f"tm.load: cannot move a storage to device {str(device)!r}: tensormodes has the cpu and "
                           "meta devices")

    def __repr__(self) -> str:
        return f"tensormodes.UntypedStorage(device={self._device.type}) of size {self._nbytes}"
