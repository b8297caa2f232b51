"""``nn.functional``'s linear map, convolutions (``tensormodes``' own functions, as PyTorch's
``F.conv2d`` is ``torch.conv2d``); pooling is in ``pooling.py``.
"""

from __future__ import annotations

from ._common import _native, _reexport

# Native in PyTorch (torch._C._nn): single ops of the op table, declared in _ops/nn.py.
linear = _native("linear")
nll_loss = _native("nll_loss")
binary_cross_entropy = _native("binary_cross_entropy")

# PyTorch's F.conv2d is torch.conv2d itself: the same functions here.
conv1d = _reexport("conv1d")
conv2d = _reexport("conv2d")
conv_transpose1d = _reexport("conv_transpose1d")
conv_transpose2d = _reexport("conv_transpose2d")
conv3d = _reexport("conv3d")
conv_transpose3d = _reexport("conv_transpose3d")

