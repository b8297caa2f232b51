"""Normalisation layers: ``BatchNorm1d/2d``, ``InstanceNorm2d``, ``LayerNorm``, ``GroupNorm``.

BatchNorm keeps running statistics (``running_mean``, ``running_var``,
``num_batches_tracked``) while training and normalises with them in
evaluation mode; ``momentum=None`` makes the running statistics a
cumulative average.

>>> import tensormodes as tm
>>> bn = tm.nn.BatchNorm1d(2)
>>> _ = bn(tm.tensor([[0., 10.], [2., 30.]]))
>>> bn.running_mean.tolist(), int(bn.num_batches_tracked)
([0.10000000149011612, 2.0], 1)
"""

from __future__ import annotations

import numbers
import warnings

from ..._api import namespace as tm
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d",
           "LayerNorm", "GroupNorm", "RMSNorm"]


def _register_affine(module: Module, affine: bool, bias: bool, shape, device, dtype) -> None:
    """``weight`` and (if ``bias``) ``bias`` parameters of ``shape`` when ``affine``, else None."""
    module.register_parameter("weight", Parameter(tm.empty(shape, device=device, dtype=dtype)) if affine else None)
    module.register_parameter("bias", Parameter(tm.empty(shape, device=device, dtype=dtype))
                              if affine and bias else None)


def _reset_affine(module: Module) -> None:
    """``weight`` to 1 and ``bias`` to 0, where they exist."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    """Common base of BatchNorm and InstanceNorm: affine parameters and running-statistics buffers."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, affine, bias, num_features, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", tm.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", tm.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tm.tensor(0, dtype=tm.long, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Reset ``running_mean`` to 0, ``running_var`` to 1 and ``num_batches_tracked`` to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, ``weight`` to 1 and ``bias`` to 0."""
        self.reset_running_stats()
        _reset_affine(self)

    def extra_repr(self) -> str:
        """``num_features, eps=..., momentum=..., affine=..., bias=..., track_running_stats=...``."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        version = local_metadata.get("version", None)
        # Checkpoints older than version 2 have no num_batches_tracked.
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else tm.tensor(0, dtype=tm.long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """Normalise with batch statistics (training, or no running stats) or the running ones."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative moving average over every batch seen.
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        # Buffers are passed only when they are updated (training and tracked) or used (evaluation).
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Applies Batch Normalization over a 2D or 3D input (N, C) or (N, C, L).

    >>> import tensormodes as tm
    >>> tm.nn.BatchNorm1d(3)
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def _check_input_dim(self, input: tm.Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Applies Batch Normalization over a 4D input (N, C, H, W).

    >>> import tensormodes as tm
    >>> bn = tm.nn.BatchNorm2d(2, momentum=None).eval()
    >>> bn(tm.ones(1, 2, 1, 1)).flatten().tolist()
    [0.9999949932098389, 0.9999949932098389]
    """

    def _check_input_dim(self, input: tm.Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Applies Batch Normalization over a 5D input (N, C, D, H, W).

    >>> import tensormodes as tm
    >>> tm.nn.BatchNorm3d(2, affine=False)
    BatchNorm3d(2, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)
    """

    def _check_input_dim(self, input: tm.Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch Normalization whose statistics are reduced over the processes of ``process_group`` in
    training. With one process (tensormodes has no process groups: ``distributed`` is never
    initialized) it is ``BatchNorm`` over an input of 2 or more dimensions, as PyTorch's is then.

    >>> import tensormodes as tm
    >>> model = tm.nn.SyncBatchNorm.convert_sync_batchnorm(tm.nn.Sequential(tm.nn.BatchNorm2d(3)))
    >>> model[0]
    SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: tm.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every batch-norm layer in it replaced by a ``SyncBatchNorm`` sharing its
        parameters and buffers (the module itself when it is one).

        >>> import tensormodes as tm
        >>> bn = tm.nn.BatchNorm1d(2)
        >>> tm.nn.SyncBatchNorm.convert_sync_batchnorm(bn).weight is bn.weight
        True
        """
        converted = module
        if isinstance(module, _BatchNorm):
            converted = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with tm.no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


class _InstanceNorm(_NormBase):
    """Instance normalisation over the spatial dimensions of each channel of each sample; by
    default no affine parameters and no running statistics. ``_no_batch_dim``: the rank of an
    unbatched input."""

    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input: tm.Tensor) -> None:
        ranks = (self._no_batch_dim, self._no_batch_dim + 1)
        if input.dim() not in ranks:
            raise ValueError(f"expected {ranks[0]}D or {ranks[1]}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: tm.Tensor) -> tm.Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                name = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                    "track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                    "them. See the documentation of {klass} for details.".format(
                        names=" and ".join(f'"{k}"' for k in keys), klass=name))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """Normalise each channel of each sample over its spatial dimensions."""
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Applies Instance Normalization over a 3D input (N, C, L) or an unbatched 2D one (C, L).

    >>> import tensormodes as tm
    >>> tm.nn.InstanceNorm1d(3, affine=True)
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=False)
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Applies Instance Normalization over a 4D input (N, C, H, W) or an unbatched 3D one (C, H, W).

    By default no affine parameters and no running statistics.

    >>> import tensormodes as tm
    >>> tm.nn.InstanceNorm2d(3)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Applies Instance Normalization over a 5D input (N, C, D, H, W) or an unbatched 4D one.

    >>> import tensormodes as tm
    >>> tm.nn.InstanceNorm3d(2)(tm.arange(8.0).reshape(1, 2, 2, 2, 1)).shape
    tensormodes.Size([1, 2, 2, 2, 1])
    """

    _no_batch_dim = 4


class LayerNorm(Module):
    """Applies Layer Normalization over the trailing ``normalized_shape`` dimensions of the input.

    ``weight`` (ones) and ``bias`` (zeros) have shape ``normalized_shape``
    when ``elementwise_affine``.

    >>> import tensormodes as tm
    >>> tm.nn.LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> tm.nn.LayerNorm(2)(tm.tensor([[1., 3.]])).tolist()
    [[-0.9999949932098389, 0.9999949932098389]]
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: int | list[int] | tm.Size, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, elementwise_affine, bias, self.normalized_shape, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set ``weight`` to 1 and ``bias`` to 0."""
        _reset_affine(self)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.layer_norm(input, normalized_shape, weight, bias, eps)``."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """``normalized_shape, eps=..., elementwise_affine=..., bias=...``."""
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Applies Root Mean Square Layer Normalization over the trailing ``normalized_shape``
    dimensions: ``x / sqrt(mean(x**2) + eps) * weight``; ``weight`` (ones) has shape
    ``normalized_shape`` when ``elementwise_affine``. ``eps=None`` is the machine epsilon of the
    type computed in.

    >>> import tensormodes as tm
    >>> tm.nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    >>> tm.nn.RMSNorm(2, eps=0.0)(tm.tensor([[1., -1.]])).tolist()
    [[1.0, -1.0]]
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: int | list[int] | tm.Size, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.register_parameter("weight", Parameter(tm.empty(self.normalized_shape, device=device, dtype=dtype))
                                if elementwise_affine else None)  # no bias at all, as PyTorch's
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set ``weight`` to 1."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: tm.Tensor) -> tm.Tensor:
        """``F.rms_norm(x, normalized_shape, weight, eps)``."""
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """``normalized_shape, eps=..., elementwise_affine=...``."""
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Applies Group Normalization over a mini-batch of inputs: channels are split into ``num_groups`` groups.

    >>> import tensormodes as tm
    >>> tm.nn.GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, affine, bias, num_channels, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set ``weight`` to 1 and ``bias`` to 0."""
        _reset_affine(self)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.group_norm(input, num_groups, weight, bias, eps)``."""
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """``num_groups, num_channels, eps=..., affine=..., bias=...``."""
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    """Local response normalisation across channels (``F.local_response_norm``), as in AlexNet.

    >>> import tensormodes as tm
    >>> tm.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.local_response_norm`` with the module's settings."""
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
