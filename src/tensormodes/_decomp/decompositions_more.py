"""More of PyTorch's core ATen decompositions: activations and shrinkage, element-wise
arithmetic, masking and triangles, joining and splitting, products, losses and norms — each a
short function of aten ops, registered in ``decompositions.DECOMPOSITIONS``.

>>> import tensormodes as tm
>>> from tensormodes._decomp.decompositions import DECOMPOSITIONS
>>> DECOMPOSITIONS[tm.ops.aten.hardshrink.default](tm.tensor([-1.0, 0.2, 0.7])).tolist()
[-1.0, 0.0, 0.699999988079071]
"""

from __future__ import annotations

import math

from .._api.namespace import get_default_dtype, int32, int64, uint8
from ..ops import aten
from .decompositions import _back, _opmath, _ordered, _reduce, _zero, register, scaled_sum

__all__: list[str] = []


# -- activations -----------------------------------------------------------------------------

@register(aten.glu.default, core=True)
def glu(self, dim: int = -1):
    half = self.shape[dim] // 2
    first = aten.slice.Tensor(self, dim, 0, half)
    second = aten.slice.Tensor(self, dim, half, 2 * half)
    return aten.mul.Tensor(first, aten.sigmoid.default(second))


@register(aten.hardshrink.default, core=True)
def hardshrink(self, lambd=0.5):
    return aten.where.self(aten.le.Scalar(aten.abs.default(self), lambd), _zero(self), self)


@register(aten.softshrink.default, core=True)
def softshrink(self, lambd=0.5):
    outside = aten.gt.Scalar(aten.abs.default(self), lambd)
    shrunk = aten.sub.Tensor(self, aten.mul.Tensor(aten.sign.default(self), lambd))
    return aten.where.self(outside, shrunk, aten.mul.Tensor(self, 0))  # x * 0 keeps NaN, as PyTorch's


@register(aten.threshold.default, core=True)
def threshold(self, threshold, value):
    return aten.where.self(aten.le.Scalar(self, threshold), _full(self, value), self)


@register(aten.logit.default, core=True)
def logit(self, eps=None):
    # PyTorch's clamp to [eps, 1 - eps] as two wheres; no eps clamps to [-1, 2], which changes no
    # result (outside [0, 1] the logarithm is NaN either way)
    low = -1.0 if eps is None else eps
    high = 1 - low
    below, above = aten.lt.Scalar(self, low), aten.gt.Scalar(self, high)
    self = aten.where.self(above, _full(self, high), self)
    self = aten.where.self(below, _full(self, low), self)
    return aten.log.default(aten.div.Tensor(self, aten.sub.Tensor(1, self)))


@register(aten._prelu_kernel.default, core=True)
def _prelu_kernel(self, weight):
    return aten.where.self(aten.gt.Scalar(self, 0), self, aten.mul.Tensor(self, weight))


# -- element-wise ----------------------------------------------------------------------------

@register(aten.sinc.default, core=True)
def sinc(self):
    at_zero = aten.eq.Scalar(self, 0)
    # a denominator of 1 where x is 0, so that no 0/0 reaches the gradient either
    scaled = aten.mul.Tensor(aten.where.self(at_zero, aten.full_like.default(self, 1), self), math.pi)
    ratio = aten.div.Tensor(aten.sin.default(scaled), scaled)
    return aten.where.self(at_zero, aten.full_like.default(ratio, 1), ratio)


@register(aten.logaddexp2.default, core=True)
def logaddexp2(self, other):
    if self.is_complex() or other.is_complex():
        return NotImplemented  # the op raises PyTorch's error
    larger, smaller = _ordered(self, other)
    same_infinity = aten.logical_and.default(aten.isinf.default(self), aten.eq.Tensor(self, other))
    gap = aten.log1p.default(aten.exp2.default(aten.sub.Tensor(smaller, larger)))
    result = aten.add.Tensor(larger, aten.mul.Tensor(gap, 1.0 / math.log(2)))
    return aten.where.self(same_infinity, self, result)


@register(aten.heaviside.default, core=True)
def heaviside(self, values):
    zero = aten.eq.Scalar(self, 0)
    below = aten.logical_or.default(aten.lt.Scalar(self, 0), aten.isnan.default(self))
    one = aten.scalar_tensor.default(1, dtype=int64, device=self.device)
    step = aten.where.self(below, aten.scalar_tensor.default(0, dtype=int64, device=self.device), one)
    return aten.where.self(zero, values, step)


@register(aten.nan_to_num.default, core=True)
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    if not self.is_floating_point():
        return aten.clone.default(self)
    finfo = _FLOAT_LIMITS[str(self.dtype).removeprefix("tensormodes.")]
    result = aten.where.self(aten.isnan.default(self), _full(self, 0.0 if nan is None else nan), self)
    result = aten.where.self(aten.isneginf.default(self), _full(self, -finfo if neginf is None else neginf), result)
    return aten.where.self(aten.isposinf.default(self), _full(self, finfo if posinf is None else posinf), result)


_FLOAT_LIMITS = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
                 "float64": 1.7976931348623157e308}


def _full(like, value):
    return aten.scalar_tensor.default(value, dtype=like.dtype, device=like.device)


@register(aten.clamp_min.Tensor, core=True)
def clamp_min_tensor(self, min):
    return aten.clamp.Tensor(self, min)


@register(aten.clamp_max.Tensor, core=True)
def clamp_max_tensor(self, max):
    return aten.clamp.Tensor(self, None, max)


@register(aten.floor_divide.default, core=True)
def floor_divide(self, other):
    return aten.div.Tensor_mode(self, other, rounding_mode="floor")


@register(aten.xlogy.Tensor, core=True)
def xlogy(self, other):
    at_zero = aten.eq.Scalar(self, 0)
    product = aten.mul.Tensor(self, aten.log.default(other))
    result = aten.where.self(at_zero, _zero(product), product)
    return aten.where.self(aten.isnan.default(other), _full(result, math.nan), result)


# -- masking, triangles, flips ---------------------------------------------------------------

@register(aten.masked_fill.Scalar, aten.masked_fill.Tensor, core=True)
def masked_fill(self, mask, value):
    if hasattr(value, "dim"):
        if value.dtype != self.dtype:
            value = aten._to_copy.default(value, dtype=self.dtype)
    else:
        value = _full(self, value)
    return aten.where.self(mask, value, self)


def _triangle_mask(self, diagonal: int, lower: bool):
    rows, columns = self.shape[-2], self.shape[-1]
    row = aten.unsqueeze.default(aten.arange.default(rows, device=self.device), 1)
    column = aten.unsqueeze.default(aten.arange.default(columns, device=self.device), 0)
    offset = aten.sub.Tensor(column, row)
    return aten.le.Scalar(offset, diagonal) if lower else aten.ge.Scalar(offset, diagonal)


@register(aten.tril.default, core=True)
def tril(self, diagonal: int = 0):
    return aten.where.self(_triangle_mask(self, diagonal, True), self, _zero(self))


@register(aten.triu.default, core=True)
def triu(self, diagonal: int = 0):
    return aten.where.self(_triangle_mask(self, diagonal, False), self, _zero(self))


@register(aten.fliplr.default, core=True)
def fliplr(self):
    return aten.flip.default(self, [1])


@register(aten.flipud.default, core=True)
def flipud(self):
    return aten.flip.default(self, [0])


# -- joining and splitting -------------------------------------------------------------------

@register(aten.stack.default, core=True)
def stack(tensors, dim: int = 0):
    if not tensors or any(t.shape != tensors[0].shape for t in tensors):
        return NotImplemented  # the op raises PyTorch's error
    dim = dim if dim >= 0 else dim + tensors[0].dim() + 1
    if dim < tensors[0].dim():  # joined along an existing dimension, then viewed apart
        sizes = list(tensors[0].shape)
        sizes.insert(dim, len(tensors))
        return aten.view.default(aten.cat.default(tensors, dim) if dim else aten.cat.default(tensors), sizes)
    return aten.cat.default([aten.unsqueeze.default(t, dim) for t in tensors], dim)


@register(aten.unbind.int, core=True)
def unbind(self, dim: int = 0):
    if self.dim() == 0:
        return NotImplemented  # the op raises PyTorch's error
    dim = dim if dim >= 0 else dim + self.dim()
    # PyTorch's tensor_split into single slices, then each squeezed
    pieces = [aten.slice.Tensor(self, dim, i, i + 1) for i in range(self.shape[dim])]
    return tuple(aten.squeeze.dim(piece, dim) for piece in pieces)


@register(aten.split.Tensor, core=True)
def split(self, split_size: int, dim: int = 0):
    length = self.shape[dim]
    if length == 0:
        return (aten.detach.default(self),)
    if split_size <= 0:
        return NotImplemented  # the op raises PyTorch's error
    chunks = -(-length // split_size)
    sizes = [split_size] * (chunks - 1) + [length - split_size * (chunks - 1)]
    return aten.split_with_sizes.default(self, sizes, dim) if dim else aten.split_with_sizes.default(self, sizes)


# -- products, factories ---------------------------------------------------------------------

@register(aten.vdot.default, core=True)
def vdot(self, other):
    if self.is_complex():
        return NotImplemented
    return aten.dot.default(self, other)


@register(aten.inner.default, core=True, out=False)
def inner(self, other):
    if self.dim() == 0 or other.dim() == 0:
        return aten.mul.Tensor(self, other)
    size = self.shape[-1]
    rows, columns = aten.view.default(self, [-1, size]), aten.view.default(other, [-1, size])
    product = aten.mm.default(rows, aten.permute.default(columns, [1, 0]))
    return aten.view.default(product, [*self.shape[:-1], *other.shape[:-1]])


@register(aten.baddbmm.default, core=True)
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    return scaled_sum(self, aten.bmm.default(batch1, batch2), beta, alpha)


@register(aten.empty_like.default, core=True)
def empty_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return aten.empty.memory_format(list(self.shape), dtype=dtype or self.dtype, layout=layout,
                                    device=device or self.device, pin_memory=pin_memory)


@register(aten.eye.default, aten.eye.m, core=True)
def eye(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = n if m is None else m
    if n < 0 or m < 0:
        return NotImplemented  # the op raises PyTorch's error
    # PyTorch's ranges in the narrowest integer type holding them (uint16, which this library
    # lacks, as int32)
    largest = max(n, m)
    ranges = uint8 if largest <= 255 else int32 if largest < 2 ** 31 else int64
    rows = aten.arange.default(n, dtype=ranges, device=device, pin_memory=False)
    columns = aten.arange.default(m, dtype=ranges, device=device, pin_memory=False)
    return aten._to_copy.default(aten.eq.Tensor(aten.unsqueeze.default(rows, -1), columns),
                                 dtype=dtype or get_default_dtype())


# -- reductions, losses, norms ---------------------------------------------------------------

@register(aten.count_nonzero.default, core=True)
def count_nonzero(self, dim=None):
    return aten.sum.dim_IntList(aten.ne.Scalar(self, 0), dim if dim is None else [dim])


@register(aten.nansum.default, core=True)
def nansum(self, dim=None, keepdim: bool = False, *, dtype=None):
    cleaned = aten.where.self(aten.isnan.default(self), _zero(self), self)
    return aten.sum.dim_IntList(cleaned, dim if dim is not None else [], keepdim, dtype=dtype) if dtype else \
        aten.sum.dim_IntList(cleaned, dim if dim is not None else [], keepdim)


@register(aten.binary_cross_entropy.default, core=True)
def binary_cross_entropy(self, target, weight=None, reduction: int = 1):
    (self, target, weight), dtype = _opmath(self, target, weight)
    # (target - 1) * max(log(1 - p), -100) - target * max(log(p), -100): PyTorch clamps each log at -100
    miss = aten.mul.Tensor(aten.sub.Tensor(target, 1), _at_least_minus_100(aten.log1p.default(aten.neg.default(self)),
                                                                             self))
    hit = aten.mul.Tensor(target, _at_least_minus_100(aten.log.default(self), self))
    loss = aten.sub.Tensor(miss, hit)
    if weight is not None:
        loss = aten.mul.Tensor(loss, weight)
    return _back(_reduce(loss, reduction), dtype)


def _at_least_minus_100(log, like):
    return aten.maximum.default(log, aten.new_full.default(like, [], -100, pin_memory=False))


@register(aten.binary_cross_entropy_with_logits.default, core=True)
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction: int = 1):
    # (1 - target) * x - log_weight * log(sigmoid(x)), the log-sigmoid as its stable op
    log_weight = None
    if pos_weight is not None:
        log_weight = aten.add.Tensor(aten.mul.Tensor(aten.sub.Tensor(pos_weight, 1), target), 1)
    linear = aten.mul.Tensor(aten.rsub.Scalar(target, 1), self)
    log_sigmoid = aten.log_sigmoid_forward.default(self)[0]
    loss = aten.sub.Tensor(linear, log_sigmoid if log_weight is None else aten.mul.Tensor(log_weight, log_sigmoid))
    if weight is not None:
        loss = aten.mul.Tensor(loss, weight)
    if loss.dtype != target.dtype:
        loss = aten._to_copy.default(loss, dtype=target.dtype)
    return _reduce(loss, reduction)


@register(aten.rms_norm.default, core=True)
def rms_norm(input, normalized_shape, weight=None, eps=None):
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    if eps is None:
        eps = _EPSILONS[str(input.dtype).removeprefix("tensormodes.")]
    mean_square = aten.mean.dim(aten.mul.Tensor(input, input), dims, True)
    out = aten.mul.Tensor(input, aten.rsqrt.default(aten.add.Tensor(mean_square, eps)))
    return aten.mul.Tensor(out, weight) if weight is not None else out


_EPSILONS = {"float16": 0.0009765625, "bfloat16": 0.0078125, "float32": 1.1920928955078125e-07,
             "float64": 2.220446049250313e-16}
