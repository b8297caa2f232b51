"""``nn.functional``'s linear map, convolutions (``tensormodes``' own functions, as PyTorch's
``F.conv2d`` is ``torch.conv2d``) and max pooling.
"""

from __future__ import annotations

from ..._ops._registry import Tensor
from ._common import _function, _native, _public, _reexport

# Native in PyTorch (torch._C._nn): single ops of the op table, declared in _ops/nn.py.
linear = _native("linear")
nll_loss = _native("nll_loss")
binary_cross_entropy = _native("binary_cross_entropy")

# PyTorch's F.conv2d is torch.conv2d itself: the same functions here.
conv1d = _reexport("conv1d")
conv2d = _reexport("conv2d")
conv_transpose1d = _reexport("conv_transpose1d")
conv_transpose2d = _reexport("conv_transpose2d")


def _max_pool(name: str, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    if return_indices:
        raise NotImplementedError(f"{name}(return_indices=True) is not implemented in tensormodes")
    return _function(name)(input, kernel_size, () if stride is None else stride, padding, dilation, ceil_mode)


@_public
def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """The maximum of each window of ``kernel_size`` along the last dimension (``stride``
    defaults to the kernel size); see ``tensormodes.max_pool1d``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_pool1d(tm.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[3.0, 2.0]]
    """
    return _max_pool("max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@_public
def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """The maximum of each ``kernel_size`` window over the last two dimensions (``stride``
    defaults to the kernel size); see ``tensormodes.max_pool2d``.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.max_pool2d(tm.tensor([[[1., 3.], [2., 0.]]]), 2).tolist()
    [[[3.0]]]
    """
    return _max_pool("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
