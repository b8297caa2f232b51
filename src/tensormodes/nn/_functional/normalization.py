"""Normalisation layers' functions: ``layer_norm``, ``batch_norm``, ``group_norm`` and
``instance_norm``, which check their arguments and run PyTorch's native ops
(``_ops/normalization.py``: ``_native_layer_norm`` ...), as PyTorch's do; ``batch_norm`` and
``instance_norm`` update the running statistics themselves.
"""

from __future__ import annotations

import math

from ... import _dtype
from ..._ops.registry import Tensor
from ...ops import aten
from ._common import _function, _public, _top_level
from .padding import pad
from .pooling import avg_pool2d, avg_pool3d


def _layer_norm_function(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None,
                         bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    """``tensormodes.layer_norm``, as PyTorch's ``torch.layer_norm`` (``cudnn_enable`` changes nothing
    on the CPU).

    >>> import tensormodes as tm
    >>> tm.layer_norm(tm.tensor([[1.0, 3.0]]), [2], None, None, 0.0).tolist()
    [[-1.0, 1.0]]
    """
    if isinstance(normalized_shape, int):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    return _function("_native_layer_norm")(input, list(normalized_shape), weight, bias, eps)


_torch_layer_norm = _top_level(_layer_norm_function, name="layer_norm")


@_public
def layer_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dimensions (mean 0, biased variance 1),
    then scale by ``weight`` and shift by ``bias``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.layer_norm(tm.tensor([[1.0, 3.0]]), [2], eps=0.0).tolist()
    [[-1.0, 1.0]]
    """
    return _torch_layer_norm(input, normalized_shape, weight, bias, eps, True)


@_public
def rms_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` dimensions, scaled
    by ``weight`` (``tensormodes.rms_norm``).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.rms_norm(tm.tensor([[1.0, -1.0]]), [2], eps=0.0).tolist()
    [[1.0, -1.0]]
    """
    return _function("rms_norm")(input, normalized_shape, weight, eps)


# -- normalisation ---------------------------------------------------------------------------

def _standardised(x: Tensor, dims: list[int], eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``x`` less its mean over ``dims``, over the square root of its biased variance plus
    ``eps``; with that mean and variance (kept dimensions)."""
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    variance = (centred * centred).mean(dims, keepdim=True)
    return centred * (variance + eps).rsqrt(), mean, variance


def _working_copy(input: Tensor) -> Tensor:
    """The input to normalise: float16 / bfloat16 ones in float32, as PyTorch's CPU kernels
    compute their statistics."""
    return input.float() if input.dtype in (_dtype.float16, _dtype.bfloat16) else input


def _check_normalisation_arguments(channels: int, copies: int, training: bool, running_mean: Tensor | None,
                                   running_var: Tensor | None, weight: Tensor | None, bias: Tensor | None) -> None:
    """PyTorch's batch_norm checks, in its order; instance_norm's per-channel tensors count
    ``copies`` times (one per sample), as PyTorch repeats them."""
    given = (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias))
    for name, tensor in given:
        if tensor is None:
            if not training and name.startswith("running"):
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        elif tensor.numel() * copies != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {tensor.numel() * copies}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")


def _reserve(input: Tensor) -> None:
    # PyTorch's batch_norm allocates an empty byte tensor (the reserve of the cuDNN path) before
    # its native op: the dispatch level sees it, so DebugMode and make_fx list it too
    _function("empty")(0, dtype=_dtype.uint8, device=input.device)


def _aten_alias(t: Tensor) -> Tensor:
    # PyTorch writes the averaged statistics through an alias of the running ones (they are
    # const arguments of its C++ function)
    return aten.alias.default(t)


def _batch_norm_function(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                         running_var: Tensor | None, training: bool, momentum: float, eps: float,
                         cudnn_enabled: bool) -> Tensor:
    """``tensormodes.batch_norm``: every argument given, in PyTorch's ``torch.batch_norm``'s order;
    its checks (not the batch's size: ``nn.functional``'s).

    >>> import tensormodes as tm
    >>> tm.batch_norm(tm.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 0.0, False).tolist()
    [[-1.0], [1.0]]
    """
    _check_normalisation_arguments(input.size(1), 1, training, running_mean, running_var, weight, bias)
    _reserve(input)
    return _function("_native_batch_norm")(input, weight, bias, running_mean, running_var, training, momentum, eps)


_torch_batch_norm = _top_level(_batch_norm_function, name="batch_norm")


@_public
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dimension 1) over the batch and spatial dimensions. In training
    the batch's statistics are used and the running ones updated in place (the running variance
    with the unbiased estimate); otherwise the running statistics are used.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> mean, var = tm.zeros(1), tm.ones(1)
    >>> F.batch_norm(tm.tensor([[1.0], [3.0]]), mean, var, training=True, eps=0.0).tolist()
    [[-1.0], [1.0]]
    >>> mean.tolist(), var.tolist()
    ([0.20000000298023224], [1.100000023841858])
    """
    size = list(input.shape)
    if training:
        values_per_channel = size[0] * math.prod(size[2:])
        if values_per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    return _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def _group_norm_function(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
                         eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    """``tensormodes.group_norm``, as PyTorch's ``torch.group_norm`` (its checks; not the batch's
    size: ``nn.functional``'s).

    >>> import tensormodes as tm
    >>> tm.group_norm(tm.tensor([[1.0, 3.0]]), 1, None, None, 0.0).tolist()
    [[-1.0, 1.0]]
    """
    size = list(input.shape)
    if size[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {size} and num_groups={num_groups}")
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and (parameter.dim() != 1 or parameter.numel() != size[1]):
            # PyTorch's message names the weight's shape ([0] when absent) for a wrong bias too.
            shown = [0] if weight is None else list(weight.shape)
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {shown} and input of shape {size}")
    return _function("_native_group_norm")(input, weight, bias, size[0], size[1], math.prod(size[2:]), num_groups, eps)


_torch_group_norm = _top_level(_group_norm_function, name="group_norm")


@_public
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Split the channels (dimension 1) into ``num_groups`` groups and normalise each group of
    each sample; then scale and shift per channel.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.group_norm(tm.tensor([[1.0, 3.0]]), 1, eps=0.0).tolist()
    [[-1.0, 1.0]]
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    size = list(input.shape)
    sizes = [size[0] * size[1] // num_groups, num_groups] + size[2:]
    if math.prod(sizes[:1] + sizes[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {sizes}")
    return _torch_group_norm(input, num_groups, weight, bias, eps, False)


def _instance_norm_function(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                            running_mean: Tensor | None, running_var: Tensor | None, use_input_stats: bool,
                            momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``tensormodes.instance_norm``: every argument given, in PyTorch's ``torch.instance_norm``'s
    order; its checks (not the spatial size: ``nn.functional``'s).

    >>> import tensormodes as tm
    >>> tm.instance_norm(tm.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1, 0.0, False).tolist()
    [[[-1.0, 1.0]]]
    """
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    _check_normalisation_arguments(input.size(0) * input.size(1), input.size(0), use_input_stats, running_mean,
                                   running_var, weight, bias)
    # PyTorch's way: batch_norm of the samples' channels side by side, (1, N * C, *), whose
    # running statistics (repeated) are averaged back into the given ones
    size = list(input.shape)
    batch = size[0]

    def repeated(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(batch)

    weight_, bias_ = repeated(weight), repeated(bias)
    running_mean_, running_var_ = repeated(running_mean), repeated(running_var)
    # PyTorch's C++ contiguous() of a contiguous tensor is the tensor itself: nothing dispatched
    folded = (input if input.is_contiguous() else input.contiguous()).view([1, batch * size[1]] + size[2:])
    _reserve(input)
    result = _function("_native_batch_norm")(folded, weight_, bias_, running_mean_, running_var_, use_input_stats,
                                             momentum, eps)
    for running, updated in ((running_mean, running_mean_), (running_var, running_var_)):
        if running is not None:
            _aten_alias(running).copy_(updated.view(batch, size[1]).mean(0))
    return result.view(size)


_torch_instance_norm = _top_level(_instance_norm_function, name="instance_norm")


@_public
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dimensions. With
    ``use_input_stats`` the given running statistics are updated in place with the batch's
    average; otherwise they are used instead.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.instance_norm(tm.tensor([[[1.0, 3.0]]]), eps=0.0).tolist()
    [[[-1.0, 1.0]]]
    """
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    return _torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


@_public
def local_response_norm(input: Tensor, size: int, alpha: float = 0.0001, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Local response normalisation across channels (dim 1): each value divided by
    ``(k + alpha * mean of the squares of the size channels around it) ** beta``; PyTorch's
    composite (zero padding, then an average pool over the channels).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.local_response_norm(tm.ones(1, 2, 1), 2, alpha=1.0, beta=1.0, k=0.0).tolist()
    [[[2.0], [1.0]]]
    """
    dims = input.dim()
    if dims < 3:
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input (got {dims} dimensions)")
    if input.numel() == 0:
        return input
    squares = input.mul(input)
    if dims == 3:
        squares = pad(squares.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        squares = avg_pool2d(squares, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        squares = pad(squares.view(sizes[0], 1, sizes[1], sizes[2], -1), (0, 0, 0, 0, size // 2, (size - 1) // 2))
        squares = avg_pool3d(squares, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / squares.mul(alpha).add(k).pow(beta)
