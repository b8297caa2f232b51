"""Devices: every device type PyTorch 2.13 names makes a device object; tensors live on
``cpu`` (NumPy storage) or ``meta`` (metadata only).

>>> import tensormodes as tm
>>> tm.device("cpu"), tm.device("cuda:1")
(device(type='cpu'), device(type='cuda', index=1))
"""

from __future__ import annotations

__all__ = ["device", "parse_device", "check_compute_device", "is_meta_device", "COMPUTE_TYPES", "HOOKS"]

# PyTorch 2.13's device types, in the order its error message lists them.
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
          "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_KNOWN = frozenset(_TYPES)
# Device types tensors can be created on.
COMPUTE_TYPES: set[str] = {"cpu", "meta"}


class _DeviceHooks:
    """What ``device(...)`` calls and ``with device(...):`` do, which belong to layers above this
    one: ``construct(cls, args, kwargs)`` makes a device (the override layer routes the call to
    active modes, as PyTorch's constructor does: a mode sees ``func is device``); ``enter(device)``
    and ``exit(device)`` push and pop the mode that makes it the default for factory calls
    (``utils/_device.py``). Each layer sets its hook when it is imported; until then a device is
    made plainly and cannot be entered."""

    __slots__ = ("construct", "enter", "exit")

    def __init__(self) -> None:
        self.construct = lambda cls, args, kwargs: type.__call__(cls, *args, **kwargs)
        self.enter = self.exit = None


HOOKS = _DeviceHooks()


class _DeviceMeta(type):
    """Sends ``device(...)`` through ``HOOKS.construct``."""

    def __call__(cls, *args, **kwargs):
        return HOOKS.construct(cls, args, kwargs)


def _parse_string(text: str) -> tuple[str, int | None]:
    if not text:
        raise RuntimeError("Device string must not be empty")
    kind, colon, idx = text.partition(":")
    if colon:
        if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
            raise RuntimeError(f"Invalid device string: '{text}'")
        index = int(idx)
    else:
        if not kind.isalpha():
            raise RuntimeError(f"Invalid device string: '{text}'")
        index = None
    if kind not in _KNOWN:
        raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device string: {kind}")
    return kind, index


class device(metaclass=_DeviceMeta):
    """Where a tensor lives, PyTorch style: ``device("cpu")``, ``device("cuda", 1)``,
    ``device("cuda:1")``.

    Every device type PyTorch knows makes a device object; tensors can be created on
    ``cpu`` (NumPy) and ``meta`` (no data) only. Modes see ``device(...)`` calls.

    >>> import tensormodes as tm
    >>> tm.device("cpu") == "cpu", str(tm.device("cuda", 1)), tm.device("xla").index is None
    (True, 'cuda:1', True)
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type: str | device | None = None, index: int | None = None, *,  # noqa: A002
                 device: str | device | None = None) -> None:
        if device is not None:  # PyTorch's other overload, ``device(device=...)``
            if type is not None:
                raise TypeError("device() got an unexpected keyword argument 'device'")
            if index is not None:  # PyTorch's parser then tries the (type, index) overload
                raise TypeError('device() missing 1 required positional arguments: "type"')
            type = device
        if type is None:
            raise TypeError("device() received an invalid combination of arguments - got (), but expected one of:\n"
                            " * (tensormodes.device device)\n * (str type, int index = -1)\n")
        if isinstance(type, __class__):  # the device class itself (the parameter "device" hides its name)
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not tensormodes.device")
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' (position 1) must be str, not {type.__class__.__name__}")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError(
                f"device(): argument 'index' (position 2) must be int, not {index.__class__.__name__}")
        kind, parsed = _parse_string(type)
        if index is not None:
            if parsed is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed explicitly: {type}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            parsed = index
        self._type = kind
        self._index = parsed

    @property
    def type(self) -> str:
        """The device type: ``'cpu'``, ``'cuda'``, ``'meta'`` ..."""
        return self._type

    @property
    def index(self) -> int | None:
        """The device index, or None."""
        return self._index

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = _make(other)
        return isinstance(other, device) and (self._type, self._index) == (other._type, other._index)

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __reduce__(self):
        return (_make, (str(self),))

    def __enter__(self) -> device:
        """Make this device the default for factory calls in the ``with`` block.

        >>> import tensormodes as tm
        >>> with tm.device("meta") as d:
        ...     d, tm.get_default_device()
        (device(type='meta'), device(type='meta'))
        """
        HOOKS.enter(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        HOOKS.exit(self)


def _make(value) -> device:
    # Internal parsing: factories' device= arguments are not device(...) calls a mode sees.
    return type.__call__(device, value)


CPU = _make("cpu")
META = _make("meta")


def parse_device(value) -> device:
    """A device from None (cpu), a string, an int index (cpu) or a device."""
    if value is None:
        return CPU
    if type(value) is device:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return CPU
    return _make(value)


def check_compute_device(value) -> device:
    """``value`` parsed, raising the error for a device tensormodes cannot compute on.

    >>> from tensormodes._device import check_compute_device
    >>> check_compute_device("cpu")
    device(type='cpu')
    """
    parsed = parse_device(value)
    if parsed._type not in COMPUTE_TYPES:
        raise NotImplementedError(
            f"tensormodes computes on {' and '.join(sorted(COMPUTE_TYPES))} only: tensors on device "
            f"'{parsed}' are not supported yet")
    return parsed


def is_meta_device(device) -> bool:
    """True if a ``device=`` argument names the meta device (a string, device or None)."""
    if device is None:
        return False
    if isinstance(device, str):
        return device == "meta" or device.startswith("meta:")
    return getattr(device, "type", None) == "meta"
