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

from .._api.namespace import get_default_dtype
from ..ops import aten
from .decompositions import _reduce, _zero, register, scaled_sum

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
    if eps is not None:
        self = aten.clamp.default(self, eps, 1 - eps)
    return aten.log.default(aten.div.Tensor(self, aten.rsub.Scalar(self, 1)))


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
    largest = aten.maximum.default(self, other)
    gap = aten.neg.default(aten.abs.default(aten.sub.Tensor(self, other)))
    return aten.add.Tensor(largest, aten.div.Tensor(aten.log1p.default(aten.exp2.default(gap)), math.log(2)))


@register(aten.heaviside.default, core=True)
def heaviside(self, values):
    zero = aten.eq.Scalar(self, 0)
    step = aten._to_copy.default(aten.gt.Scalar(self, 0), dtype=self.dtype)
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
    dim = dim if dim >= 0 else dim + tensors[0].dim() + 1
    return aten.cat.default([aten.unsqueeze.default(t, dim) for t in tensors], dim)


@register(aten.unbind.int, core=True)
def unbind(self, dim: int = 0):
    return [aten.select.int(self, dim, i) for i in range(self.shape[dim])]


@register(aten.split.Tensor, core=True)
def split(self, split_size: int, dim: int = 0):
    length = self.shape[dim]
    starts = range(0, max(length, 1), split_size) if split_size else [0]
    return [aten.slice.Tensor(self, dim, start, min(start + split_size, length)) for start in starts]


# -- products, factories ---------------------------------------------------------------------

@register(aten.vdot.default, core=True)
def vdot(self, other):
    if self.is_complex():
        return NotImplemented
    return aten.sum.default(aten.mul.Tensor(self, other))


@register(aten.inner.default, core=True)
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
    row = aten.unsqueeze.default(aten.arange.default(n, device=device), 1)
    column = aten.arange.default(m, device=device)
    return aten._to_copy.default(aten.eq.Tensor(row, column), dtype=dtype or get_default_dtype())


# -- reductions, losses, norms ---------------------------------------------------------------

@register(aten.count_nonzero.default, core=True)
def count_nonzero(self, dim=None):
    nonzero = aten.ne.Scalar(self, 0)
    return aten.sum.default(nonzero) if dim is None else aten.sum.dim_IntList(nonzero, [dim])


@register(aten.nansum.default, core=True)
def nansum(self, dim=None, keepdim: bool = False, *, dtype=None):
    cleaned = aten.where.self(aten.isnan.default(self), _zero(self), self)
    return aten.sum.dim_IntList(cleaned, dim if dim is not None else [], keepdim, dtype=dtype) if dtype else \
        aten.sum.dim_IntList(cleaned, dim if dim is not None else [], keepdim)


@register(aten.binary_cross_entropy.default, core=True)
def binary_cross_entropy(self, target, weight=None, reduction: int = 1):
    # PyTorch clamps each log at -100
    log_p = aten.clamp.default(aten.log.default(self), -100)
    log_q = aten.clamp.default(aten.log1p.default(aten.neg.default(self)), -100)
    loss = aten.neg.default(aten.add.Tensor(aten.mul.Tensor(target, log_p),
                                            aten.mul.Tensor(aten.rsub.Scalar(target, 1), log_q)))
    if weight is not None:
        loss = aten.mul.Tensor(loss, weight)
    return _reduce(loss, reduction)


@register(aten.binary_cross_entropy_with_logits.default, core=True)
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction: int = 1):
    # -log(sigmoid(x)) = log1p(exp(-|x|)) + max(-x, 0), written so that no exp overflows
    minus_log_sigmoid = aten.add.Tensor(aten.log1p.default(aten.exp.default(aten.neg.default(aten.abs.default(self)))),
                                        aten.clamp.default(aten.neg.default(self), 0))
    if pos_weight is not None:
        minus_log_sigmoid = aten.mul.Tensor(
            minus_log_sigmoid, aten.add.Tensor(aten.mul.Tensor(aten.sub.Tensor(pos_weight, 1), target), 1))
    loss = aten.add.Tensor(aten.mul.Tensor(aten.rsub.Scalar(target, 1), self), minus_log_sigmoid)
    if weight is not None:
        loss = aten.mul.Tensor(loss, weight)
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
