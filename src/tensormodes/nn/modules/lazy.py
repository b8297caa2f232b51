"""Lazy modules: ``LazyModuleMixin`` and the layers built on it, ``LazyLinear`` and ``LazyConv1d`` /
``LazyConv2d`` / ``LazyConv3d``, whose input size is read from their first input.

Until then their parameters are ``UninitializedParameter``s; the first forward call materialises
and initialises them, and the module becomes its plain class (``Linear``, ``Conv2d`` ...).

>>> import tensormodes as tm
>>> layer = tm.nn.LazyLinear(3)
>>> layer(tm.ones(2, 4)).shape, layer
(tensormodes.Size([2, 3]), Linear(in_features=4, out_features=3, bias=True))
"""

from __future__ import annotations

from ..._api import namespace as tm
from ..parameter import UninitializedParameter
from .conv import Conv1d, Conv2d, Conv3d
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d"]


class LazyModuleMixin:
    """A mixin for modules that infer the shapes of their parameters from their first input:
    ``initialize_parameters(*args)`` runs before the first forward, then the module becomes
    ``cls_to_become``.

    >>> import tensormodes as tm
    >>> tm.nn.LazyLinear(2).has_uninitialized_params()
    True
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of the module is still uninitialised."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(isinstance(t, UninitializedParameter) for t in tensors)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialise and initialise the parameters for these forward arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # Uninitialised parameters are saved as they are (they cannot be detached).
        for name, param in self._parameters.items():
            if param is not None:
                uninitialized = isinstance(param, UninitializedParameter)
                destination[prefix + name] = param if keep_vars or uninitialized else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is inferred from its first input's last dimension.

    >>> import tensormodes as tm
    >>> tm.nn.LazyLinear(5)
    LazyLinear(in_features=0, out_features=5, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """``Linear``'s initialisation, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: tm.Tensor) -> None:
        """Shape the parameters for ``input``'s last dimension, and initialise them."""
        if self.has_uninitialized_params():
            with tm.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConv(LazyModuleMixin):
    """``initialize_parameters`` of the lazy convolutions: ``in_channels`` from dimension 1 of a
    batched input (0 of an unbatched one)."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """The convolution's initialisation, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input: tm.Tensor) -> int:
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input: tm.Tensor, *args, **kwargs) -> None:
        """Shape the parameters for ``input``'s channels, and initialise them."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with tm.no_grad():
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class LazyConv1d(_LazyConv, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyConv1d(4, 3)
    LazyConv1d(0, 4, kernel_size=(3,), stride=(1,))
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> conv = tm.nn.LazyConv2d(4, 3)
    >>> conv(tm.ones(1, 2, 5, 5)).shape, conv
    (tensormodes.Size([1, 4, 3, 3]), Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1)))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyConv3d(4, 2)
    LazyConv3d(0, 4, kernel_size=(2, 2, 2), stride=(1, 1, 1))
    """

    cls_to_become = Conv3d
