"""The default device: ``with tm.device("meta"):`` and ``tm.set_default_device``, as PyTorch's
``torch.utils._device``: a mode, :class:`DeviceContext`, fills in ``device=`` for the factory
calls that do not give one.

>>> import tensormodes as tm
>>> with tm.device("meta"):
...     tm.get_default_device()
device(type='meta')
>>> tm.get_default_device()
device(type='cpu')
"""

from __future__ import annotations

from contextvars import ContextVar

from .. import _device
from .._api import build as _build
from .._ops import OPS
from .._ops.registry import TensorKind
from .._overrides import dispatch as _dispatch
from ..overrides import TorchFunctionMode

__all__ = ["DeviceContext", "set_default_device", "get_default_device", "device_constructors"]

_CONSTRUCTORS: list = []


def device_constructors() -> frozenset:
    """The factories a default device applies to: the op table's factories that take
    ``device`` and no tensor to copy it from (PyTorch's list: not ``*_like``, not
    ``normal``, whose ``device`` PyTorch's overloads do not all take)."""
    if not _CONSTRUCTORS:
        names = [o.function for o in OPS.values()
                 if o.factory and o.function and o.namespace == "tensormodes" and "device" in o.signature.parameters
                 and TensorKind.TENSOR not in o.tensor_params.values() and o.name != "normal"]
        _CONSTRUCTORS.append(frozenset(_build.public_function(name) for name in names))
    return _CONSTRUCTORS[0]


class DeviceContext(TorchFunctionMode):
    """The mode behind ``with tm.device(d):`` and ``tm.set_default_device(d)``: a factory call
    (``tm.empty``, ``tm.zeros``, ``tm.randn``, ``tm.tensor`` ... see ``device_constructors``)
    with no ``device`` or ``device=None`` is made on ``d``. Other calls pass through, at
    almost no cost (the mode declares ``handled_functions``).

    >>> import tensormodes as tm
    >>> from tensormodes.utils._device import DeviceContext
    >>> with DeviceContext("meta"):
    ...     tm.get_default_device(), tm.zeros(2, device="cpu").device
    (device(type='meta'), device(type='cpu'))
    """

    def __init__(self, device) -> None:
        self.device = _device.parse_device(device)
        self.handled_functions = device_constructors()
        self.entered_from = None  # the device object whose ``with`` pushed this mode

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Fill in ``device`` for a factory call that has none."""
        kwargs = kwargs or {}
        if func in self.handled_functions and kwargs.get("device") is None:
            kwargs = {**kwargs, "device": self.device}
        return func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"DeviceContext({str(self.device)!r})"


def _enter(device_object) -> None:
    mode = DeviceContext(device_object)
    mode.entered_from = device_object
    mode.__enter__()


def _exit(device_object) -> None:
    for mode in reversed(_dispatch.current_modes()):
        if isinstance(mode, DeviceContext) and mode.entered_from is device_object:
            mode.__exit__(None, None, None)
            return
    raise RuntimeError(f"exiting 'with {device_object!r}', which is not active in this context")


_device.HOOKS.enter, _device.HOOKS.exit = _enter, _exit

# The default set by set_default_device: a DeviceContext kept at the bottom of the mode stack.
_DEFAULT: ContextVar[DeviceContext | None] = ContextVar("tensormodes_default_device", default=None)


def set_default_device(device) -> None:
    """Sets the default device factory calls make tensors on when they are given no ``device``
    (``None``: back to cpu). Calls with an explicit ``device`` are not affected; ``with
    tm.device(d):`` changes the default only inside its block.

    Like PyTorch's, the default is a mode kept at the bottom of the mode stack (so every
    public call pays a small cost while it is set); it holds for the current thread or
    context.

    >>> import tensormodes as tm
    >>> tm.set_default_device("meta")
    >>> tm.get_default_device()
    device(type='meta')
    >>> tm.set_default_device(None)
    >>> tm.get_default_device(), tm.ones(2).is_meta
    (device(type='cpu'), False)
    """
    modes = _dispatch.current_modes()
    previous = _DEFAULT.get()
    if previous is not None:
        modes = tuple(m for m in modes if m is not previous)
    mode = None if device is None else DeviceContext(device)
    if mode is not None:
        modes = (mode, *modes)
    _DEFAULT.set(mode)
    _dispatch.set_modes(modes)


def get_default_device():
    """The device factory calls use when given none: that of the innermost ``with
    tm.device(...)`` block, else the one ``set_default_device`` set, else ``cpu``.

    >>> import tensormodes as tm
    >>> tm.get_default_device()
    device(type='cpu')
    """
    for mode in reversed(_dispatch.current_modes()):
        if isinstance(mode, DeviceContext):
            return mode.device
    return _device.CPU
