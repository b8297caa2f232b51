"""Devices: ``cpu`` (NumPy storage) and ``meta`` (shape and dtype only).

>>> import tensormodes as tm
>>> tm.device("cpu")
device(type='cpu')
"""

from __future__ import annotations

__all__ = ["device", "parse_device"]

_TYPES = ("cpu", "meta")


class device:
    """Where a tensor lives, PyTorch style: ``device("cpu")``, ``device("cpu", 0)``.

    >>> import tensormodes as tm
    >>> tm.device("cpu") == "cpu", str(tm.device("meta"))
    (True, 'meta')
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type: str | device, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type._type, type._index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' must be str, not {type.__class__.__name__}")
        if ":" in type:
            type, _, idx = type.partition(":")
            if index is not None or not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _TYPES:
            raise RuntimeError(
                f"Expected one of cpu, meta device type at start of device string: {type}")
        self._type = type
        self._index = index

    @property
    def type(self) -> str:
        """The device type: ``'cpu'`` or ``'meta'``."""
        return self._type

    @property
    def index(self) -> int | None:
        """The device index, or None."""
        return self._index

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self._type, self._index) == (other._type, other._index)

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"


CPU = device("cpu")
META = device("meta")


def parse_device(value) -> device:
    """A device from None (cpu), a string, an int index (cpu) or a device."""
    if value is None:
        return CPU
    if type(value) is device:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return CPU
    return device(value)
