"""``nn.functional``'s linear and bilinear maps, convolutions (``tensormodes``' own functions, as PyTorch's
``F.conv2d`` is ``torch.conv2d``); pooling is in ``pooling.py``.
"""

from __future__ import annotations

from ..._ops.common import cpp_type_name
from ..._ops.registry import Tensor
from ._common import _export, _function, _native, _reexport, _top_level

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



@_export
@_top_level
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y = x1^T A x2 + b`` over the last dimension of ``input1`` and ``input2``; ``weight``
    is ``(out_features, in1_features, in2_features)``. PyTorch's ``F.bilinear`` is
    ``torch.bilinear``, a native function: handlers see this call, not its parts.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.bilinear(tm.ones(2, 3), tm.ones(2, 4), tm.ones(5, 3, 4), tm.arange(5.0)).tolist()[0]
    [12.0, 13.0, 14.0, 15.0, 16.0]
    """
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        tensors.append(("bias", bias))
    if any(t.dtype != input1.dtype for _, t in tensors):
        raise RuntimeError("All tensors must have the same dtype, got "
                           + ", ".join(f"{name}: {cpp_type_name(t.dtype)}" for name, t in tensors))
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.size(i)} and {input2.size(i)}")
    if input1.size(-1) != weight.size(1):
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.size(-1)} but "
                           f"expected {weight.size(1)}")
    if input2.size(-1) != weight.size(2):
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.size(-1)} but "
                           f"expected {weight.size(2)}")
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.size(0)} but "
                           f"expected {weight.size(0)}")
    output = _function("einsum")("...i,oij,...j->...o", input1, weight, input2)
    return output if bias is None else output + bias
