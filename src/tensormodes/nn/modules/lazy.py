"""Lazy modules: ``LazyModuleMixin`` and the layers built on it, ``LazyLinear``,
``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d`` and
``LazyInstanceNorm1d/2d/3d``, whose input size is read from their first input.

Until then their parameters are ``UninitializedParameter``s (and the normalisation layers' running
statistics ``UninitializedBuffer``s); the first forward call materialises and initialises them,
and the module becomes its plain class (``Linear``, ``Conv2d``, ``BatchNorm1d`` ...).

>>> import tensormodes as tm
>>> layer = tm.nn.LazyLinear(3)
>>> layer(tm.ones(2, 4)).shape, layer
(tensormodes.Size([2, 3]), Linear(in_features=4, out_features=3, bias=True))
"""

from __future__ import annotations

from ..._api import namespace as tm
from ..parameter import UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _BatchNorm,
    _InstanceNorm,
    _NormBase,
)

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


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
        return any(isinstance(t, UninitializedTensorMixin) for t in tensors)

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
                uninitialized = isinstance(buf, UninitializedTensorMixin)
                destination[prefix + name] = buf if keep_vars or uninitialized else buf.detach()


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


class _LazyConvMixin(LazyModuleMixin):
    """``initialize_parameters`` of the lazy convolutions, plain and transposed: ``in_channels``
    from dimension 1 of a batched input (0 of an unbatched one)."""

    def _uninitialized(self, out_channels: int, bias: bool, device, dtype) -> None:
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
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._uninitialized(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._uninitialized(out_channels, bias, device, dtype)


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


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> conv = tm.nn.LazyConvTranspose1d(4, 3, groups=2)
    >>> conv(tm.ones(1, 2, 5)).shape, conv.weight.shape
    (tensormodes.Size([1, 4, 7]), tensormodes.Size([2, 2, 3]))
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyConvTranspose2d(4, 3)
    LazyConvTranspose2d(0, 4, kernel_size=(3, 3), stride=(1, 1))
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyConvTranspose3d(4, 2)
    LazyConvTranspose3d(0, 4, kernel_size=(2, 2, 2), stride=(1, 1, 1))
    """

    cls_to_become = ConvTranspose3d


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """The lazy normalisation layers: ``num_features`` is dimension 1 of the first input; the
    affine parameters and running statistics wait for it."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        # no affine parameters or statistics yet: they would be replaced at once
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tm.tensor(0, dtype=tm.long, device=device)

    def reset_parameters(self) -> None:
        """The layer's initialisation, once its tensors have their shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: tm.Tensor) -> None:
        """Shape the parameters and statistics for ``input.shape[1]`` features, and initialise them."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with tm.no_grad():
                for tensor in (self.weight, self.bias, self.running_mean, self.running_var):
                    if isinstance(tensor, UninitializedTensorMixin):
                        tensor.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm1d`` whose ``num_features`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> bn = tm.nn.LazyBatchNorm1d()
    >>> bn(tm.ones(4, 3)).shape, type(bn).__name__, bn.num_features
    (tensormodes.Size([4, 3]), 'BatchNorm1d', 3)
    """

    cls_to_become = BatchNorm1d

    def _check_input_dim(self, input: tm.Tensor) -> None:
        BatchNorm1d._check_input_dim(self, input)


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm2d`` whose ``num_features`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyBatchNorm2d()
    LazyBatchNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm2d

    def _check_input_dim(self, input: tm.Tensor) -> None:
        BatchNorm2d._check_input_dim(self, input)


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm3d`` whose ``num_features`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyBatchNorm3d(momentum=None)
    LazyBatchNorm3d(0, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm3d

    def _check_input_dim(self, input: tm.Tensor) -> None:
        BatchNorm3d._check_input_dim(self, input)


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm1d`` whose ``num_features`` is inferred from its first input (dimension
    1, batched or not, as PyTorch's). Its defaults are the lazy layers' (``affine=True``,
    ``track_running_stats=True``), not ``InstanceNorm1d``'s: PyTorch's are.

    >>> import tensormodes as tm
    >>> norm = tm.nn.LazyInstanceNorm1d(affine=True)
    >>> norm(tm.ones(2, 3, 4)).shape, norm.weight.shape
    (tensormodes.Size([2, 3, 4]), tensormodes.Size([3]))
    """

    cls_to_become = InstanceNorm1d
    _no_batch_dim = InstanceNorm1d._no_batch_dim


class LazyInstanceNorm2d(LazyInstanceNorm1d):
    """An ``InstanceNorm2d`` whose ``num_features`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyInstanceNorm2d()
    LazyInstanceNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = InstanceNorm2d
    _no_batch_dim = InstanceNorm2d._no_batch_dim


class LazyInstanceNorm3d(LazyInstanceNorm1d):
    """An ``InstanceNorm3d`` whose ``num_features`` is inferred from its first input.

    >>> import tensormodes as tm
    >>> tm.nn.LazyInstanceNorm3d(affine=False)
    LazyInstanceNorm3d(0, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)
    """

    cls_to_become = InstanceNorm3d
    _no_batch_dim = InstanceNorm3d._no_batch_dim
