"""Folding an evaluation-mode batch norm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): the fused layer computes ``bn(layer(x))`` in one product.

>>> import tensormodes as tm
>>> conv, bn = tm.nn.Conv2d(2, 3, 1).eval(), tm.nn.BatchNorm2d(3).eval()
>>> x = tm.randn(1, 2, 4, 4)
>>> fused = tm.nn.utils.fuse_conv_bn_eval(conv, bn)
>>> bool(tm.allclose(fused(x), bn(conv(x)), atol=1e-6))
True
"""

from __future__ import annotations

import copy

from ..._api import namespace as tm
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _statistics(bn):
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    return bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` whose weight and bias include ``bn``'s normalisation (both in eval mode;
    ``transpose`` for a transposed convolution, whose output channels are the weight's second dim).

    >>> import tensormodes as tm
    >>> tm.nn.utils.fuse_conv_bn_eval(tm.nn.Conv1d(1, 2, 1).eval(), tm.nn.BatchNorm1d(2).eval()).bias.shape
    tensormodes.Size([2])
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, *_statistics(bn), transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The fused convolution's ``(weight, bias)`` Parameters: the weight scaled per output channel by
    ``bn_w / sqrt(bn_rv + bn_eps)``, the bias ``(conv_b - bn_rm) * that + bn_b``, in the
    convolution's dtypes (a missing bias, batch-norm weight or bias count as 0, 1 and 0).

    >>> import tensormodes as tm
    >>> w, b = tm.nn.utils.fuse_conv_bn_weights(tm.ones(1, 1, 1), None, tm.zeros(1), tm.full((1,), 3.0), 1.0,
    ...                                          None, None)
    >>> w.flatten().tolist(), b.tolist()
    ([0.5], [0.0])
    """
    weight_dtype = conv_w.dtype
    bias_dtype = weight_dtype if conv_b is None else conv_b.dtype
    conv_b = tm.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = tm.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = tm.zeros_like(bn_rm) if bn_b is None else bn_b
    inverse_std = tm.rsqrt(bn_rv + bn_eps)
    channels = [1, -1] if transpose else [-1, 1]
    weight = (conv_w * (bn_w * inverse_std).reshape(channels + [1] * (conv_w.dim() - 2))).to(dtype=weight_dtype)
    bias = ((conv_b - bn_rm) * inverse_std * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose weight and bias include ``bn``'s normalisation (both in eval mode;
    ``bn`` has ``linear.out_features`` features, or one).

    >>> import tensormodes as tm
    >>> tm.nn.utils.fuse_linear_bn_eval(tm.nn.Linear(3, 2).eval(), tm.nn.BatchNorm1d(2).eval()).weight.shape
    tensormodes.Size([2, 3])
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, *_statistics(bn))
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b) -> tuple[Parameter,
                                                                                                 Parameter]:
    """The fused linear layer's ``(weight, bias)`` Parameters: rows scaled by
    ``bn_w / sqrt(bn_rv + bn_eps)``, the bias ``(linear_b - bn_rm) * that + bn_b`` (no bias counts as 0).

    >>> import tensormodes as tm
    >>> w, b = tm.nn.utils.fuse_linear_bn_weights(tm.ones(1, 2), None, tm.ones(1), tm.full((1,), 3.0), 1.0,
    ...                                            tm.ones(1), tm.zeros(1))
    >>> w.tolist(), b.tolist()
    ([[0.5, 0.5]], [-0.5])
    """
    weight_dtype = linear_w.dtype
    bias_dtype = weight_dtype if linear_b is None else linear_b.dtype
    linear_b = tm.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * tm.rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)
