"""Volumetric convolutions: ``conv3d`` and ``conv_transpose3d`` (``nn.functional`` re-exports them,
as PyTorch's ``F.conv3d`` is ``torch.conv3d``), on the same N-dimensional kernels, checks and
gradient as ``conv1d`` / ``conv2d`` in ``convolution.py`` (node ``ConvolutionBackward0``). Both
reach the dispatch level as PyTorch's composites do: ``convolution``.
"""

from __future__ import annotations

from .common import ops
from .convolution import (
    _conv_differentiable,
    _conv_nd,
    _conv_nd_grad,
    _conv_transpose_nd,
    _conv_transpose_nd_grad,
    _meta_driver,
)
from .dispatch_forms import _per_dim, conv_decomposition
from .registry import Sample, Tensor, TensorSpec, op


@op(node="convolution", differentiable=_conv_differentiable, decompose=conv_decomposition(3),
    meta=_meta_driver(_conv_nd, "conv3d", 3),
    errors=(Sample((TensorSpec((1, 3, 4, 4, 4)), TensorSpec((3, 2, 2, 2, 2)))),
            Sample((TensorSpec((2, 4, 4)), TensorSpec((3, 2, 2, 2, 2)))),
            Sample((TensorSpec((1, 2, 4, 4, 4)), TensorSpec((3, 2, 2, 2, 2)), TensorSpec((2,))))),
    grad=_conv_nd_grad, samples=(
    Sample((TensorSpec((1, 2, 4, 4, 3)), TensorSpec((3, 2, 2, 2, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 3, 3, 2), "float64"), TensorSpec((2, 2, 2, 2, 1), "float64")), {"padding": (1, 0, 1)}),
    Sample((TensorSpec((1, 4, 4, 3, 3), "float64"), TensorSpec((2, 2, 2, 2, 2), "float64"),
            TensorSpec((2,), "float64")), {"stride": (2, 1, 1), "padding": 1, "groups": 2}),
    Sample((TensorSpec((1, 1, 4, 4, 4), "float64"), TensorSpec((2, 1, 3, 3, 3), "float64")),
           {"padding": "same", "dilation": (1, 2, 1)}),
    Sample((TensorSpec((1, 2, 3, 4, 4), "float16"), TensorSpec((1, 2, 2, 2, 2), "float16")), {"padding": "valid"}),
    Sample((TensorSpec((1, 2, 3, 3, 3), "int64", -3, 3), TensorSpec((1, 2, 2, 2, 2), "int64", -3, 3)))))
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """Applies a 3D convolution over an input volume composed of several input planes:
    ``input`` (N, C, D, H, W) or unbatched (C, D, H, W), ``weight`` (O, C / groups, kD, kH, kW);
    ``padding`` is ints or ``'valid'`` / ``'same'``.

    >>> import tensormodes as tm
    >>> tm.conv3d(tm.ones(1, 1, 2, 2, 2), tm.ones(1, 1, 2, 2, 2)).tolist()
    [[[[[8.0]]]]]
    """
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose3d_decomposition(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                                    dilation=1):
    """PyTorch's composite ``conv_transpose3d``: ``convolution`` (transposed) with every size as
    three ints; an unbatched input gets its batch dimension by ``unsqueeze`` and loses it by
    ``squeeze``. Complex operands (which PyTorch splits into parts) and argument errors are left
    to the op."""
    sizes = [_per_dim(value, 3) for value in (stride, padding, output_padding, dilation)]
    if input.is_complex() or weight.dim() != 5 or input.dim() not in (4, 5) or type(groups) is not int \
            or (bias is not None and bias.dtype != input.dtype) or any(size is None for size in sizes) \
            or any(p < 0 for p in sizes[1]):
        return NotImplemented
    strides, paddings, output_paddings, dilations = sizes
    unbatched = input.dim() == 4
    batched = input.unsqueeze(0) if unbatched else input
    result = ops.convolution(batched, weight, bias, strides, paddings, dilations, True, output_paddings, groups)
    return result.squeeze(0) if unbatched else result


@op(node="convolution", differentiable=_conv_differentiable, decompose=_conv_transpose3d_decomposition,
    meta=_meta_driver(_conv_transpose_nd, "conv_transpose3d", 3),
    errors=(Sample((TensorSpec((1, 2, 1, 1, 1)), TensorSpec((2, 3, 1, 1, 1))), {"padding": 1}),
            Sample((TensorSpec((2, 2, 2)), TensorSpec((2, 3, 2, 2, 2))))),
    grad=_conv_transpose_nd_grad, samples=(
    Sample((TensorSpec((1, 2, 3, 2, 3)), TensorSpec((2, 3, 2, 2, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 2, 3, 2), "float64"), TensorSpec((2, 1, 2, 2, 1), "float64")),
           {"stride": (2, 1, 1), "padding": (1, 0, 0), "output_padding": (1, 0, 0)}),
    Sample((TensorSpec((1, 4, 2, 2, 3), "float64"), TensorSpec((4, 1, 2, 2, 2), "float64"),
            TensorSpec((2,), "float64"), 1, 1, 0, 2, (2, 1, 1))),
    Sample((TensorSpec((1, 1, 2, 3, 3), "float16"), TensorSpec((1, 2, 2, 2, 2), "float16")))))
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Applies a 3D transposed convolution operator over an input volume composed of several
    input planes (the gradient of ``conv3d`` with respect to its input): ``input`` (N, C, D, H, W)
    or (C, D, H, W), ``weight`` (C, O / groups, kD, kH, kW).

    >>> import tensormodes as tm
    >>> tm.conv_transpose3d(tm.ones(1, 1, 1, 1, 2), tm.ones(1, 1, 1, 1, 2)).tolist()
    [[[[[1.0, 2.0, 1.0]]]]]
    """
    return _conv_transpose_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)
