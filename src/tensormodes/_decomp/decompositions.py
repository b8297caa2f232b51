"""The decompositions: each aten op of the table written as a short Python function of other
aten ops (PyTorch's ``torch._decomp.decompositions``, in tensormodes' words).

A decomposition is called as a dispatch handler calls an op — schema-form arguments — and
returns what the op returns, or ``NotImplemented`` for arguments it does not cover (the op
then runs itself). ``register(*overloads, core=)`` puts one in ``DECOMPOSITIONS``; ``core``
marks the ones PyTorch's ``core_aten_decompositions()`` holds.

>>> import tensormodes as tm
>>> x = tm.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> DECOMPOSITIONS[tm.ops.aten.t.default](x).tolist()
[[1.0, 3.0], [2.0, 4.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .._api.namespace import float32, get_default_dtype
from ..ops import aten

__all__ = ["DECOMPOSITIONS", "CORE", "OUT_VARIANTS", "register"]

DECOMPOSITIONS: dict = {}
CORE: set = set()  # the overloads PyTorch's core_aten_decompositions() decomposes
# overload -> whether PyTorch's tables also hold its ``out=`` overload (``register``'s ``out``)
OUT_VARIANTS: dict = {}


def register(*overloads, core: bool = False, out: bool | str = True) -> Callable:
    """Decorator: ``fn`` is the decomposition of each of ``overloads`` (``core``: PyTorch's
    core ATen decompositions include it). ``out``: PyTorch registers it for the op's packet,
    so its tables also hold the op's ``out=`` overload (derived, ``out_variants``); "table":
    its full table does, its core set names the functional overload only; False: PyTorch
    registers the overload alone."""

    def decorate(fn: Callable) -> Callable:
        for overload in overloads:
            DECOMPOSITIONS[overload] = fn
            OUT_VARIANTS[overload] = out
            if core:
                CORE.add(overload)
        return fn

    return decorate


def _reduce(loss, reduction: int):
    """A loss's ATen reduction enum applied: 0 none, 1 mean, 2 sum."""
    if reduction == 1:
        return aten.mean.default(loss)
    if reduction == 2:
        return aten.sum.default(loss)
    return loss


def _zero(like):
    """A 0-d zero of ``like``'s dtype, for ``where``."""
    return aten.scalar_tensor.default(0, dtype=like.dtype, device=like.device)


_HALVES = ("tensormodes.float16", "tensormodes.bfloat16")


def _opmath(*tensors):
    """PyTorch's ``pw_cast_for_opmath``: float16 and bfloat16 tensors computed in float32 (one
    ``_to_copy`` each); returns the tensors and the dtype the result goes back to (None: no cast)."""
    dtype = next((t.dtype for t in tensors if t is not None and str(t.dtype) in _HALVES), None)
    if dtype is None:
        return tensors, None
    return tuple(aten._to_copy.default(t, dtype=float32) if t is not None and str(t.dtype) in _HALVES else t
                 for t in tensors), dtype


def _back(result, dtype):
    """The result of an ``_opmath`` computation in its inputs' half type again."""
    return result if dtype is None else aten._to_copy.default(result, dtype=dtype)


# -- views and copies ------------------------------------------------------------------------

@register(aten.t.default, core=True)
def t(self):
    if self.dim() > 2:
        return NotImplemented  # the op raises PyTorch's error
    return aten.transpose.int(self, 0, 0 if self.dim() < 2 else 1)


@register(aten.transpose.int, core=True)
def transpose(self, dim0: int, dim1: int):
    dims = list(range(self.dim()))
    if dims:
        dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return aten.permute.default(self, dims)


@register(aten.detach.default, core=True)
def detach(self):
    return aten.alias.default(self)


@register(aten.squeeze.default, aten.squeeze.dim, core=True)
def squeeze(self, dim=None):
    if dim is None:
        dims = [d for d, size in enumerate(self.shape) if size == 1]
    else:
        dims = [dim]
    return aten.squeeze.dims(self, dims)


@register(aten._unsafe_view.default, core=True)
def _unsafe_view(self, size):
    return aten.view.default(self, size)


# -- factories -------------------------------------------------------------------------------

@register(aten.ones.default, core=True, out=False)
def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return aten.full.default(size, 1, dtype=dtype or get_default_dtype(), layout=layout, device=device,
                             pin_memory=pin_memory)


@register(aten.zeros.default, core=True, out=False)
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return aten.full.default(size, 0, dtype=dtype or get_default_dtype(), layout=layout, device=device,
                             pin_memory=pin_memory)


@register(aten.ones_like.default, core=True)
def ones_like(self, **kwargs):
    return aten.full_like.default(self, 1, **kwargs)


@register(aten.zeros_like.default, core=True)
def zeros_like(self, **kwargs):
    return aten.full_like.default(self, 0, **kwargs)


@register(aten.arange.default, core=True, out="table")
def arange(end, **kwargs):
    return aten.arange.start_step(0, end, 1, **kwargs)


@register(aten.arange.start, core=True, out="table")
def arange_start(start, end, **kwargs):
    return aten.arange.start_step(start, end, 1, **kwargs)


# -- pointwise -------------------------------------------------------------------------------

@register(aten.silu.default, core=True)
def silu(self):
    return aten.mul.Tensor(self, aten.sigmoid.default(self))


@register(aten.hardsigmoid.default, core=True)
def hardsigmoid(self):
    return aten.div.Tensor(_clamp_0_6(aten.add.Tensor(self, 3)), 6)


def _clamp_0_6(x):
    """PyTorch's two clamps: below at 0, then above at 6."""
    return aten.clamp.default(aten.clamp.default(x, 0), None, 6)


@register(aten.hardswish.default, core=True)
def hardswish(self):
    return aten.div.Tensor(aten.mul.Tensor(self, _clamp_0_6(aten.add.Tensor(self, 3))), 6)


@register(aten.hardtanh.default)
def hardtanh(self, min_val=-1, max_val=1):
    return aten.clamp.default(self, min_val, max_val)


@register(aten.leaky_relu.default)
def leaky_relu(self, negative_slope=0.01):
    return aten.where.self(aten.gt.Scalar(self, 0), self, aten.mul.Tensor(self, negative_slope))


@register(aten.elu.default)
def elu(self, alpha=1, scale=1, input_scale=1):
    positive = aten.gt.Scalar(self, 0)
    scaled = aten.mul.Tensor(self, scale)
    negative = aten.mul.Tensor(aten.expm1.default(aten.mul.Tensor(self, input_scale)), alpha * scale)
    return aten.where.self(positive, scaled, negative)


@register(aten.celu.default, core=True)
def celu(self, alpha=1.0):
    if alpha == 1:  # PyTorch's: the default alpha is no alpha
        negative = aten.expm1.default(self)
    else:
        negative = aten.mul.Tensor(aten.expm1.default(aten.div.Tensor(self, alpha)), alpha)
    return aten.where.self(aten.gt.Scalar(self, 0), self, negative)


@register(aten.softplus.default, core=True)
def softplus(self, beta=1, threshold=20):
    if beta == 1:  # PyTorch's: the default beta is no beta
        scaled, soft = self, aten.log1p.default(aten.exp.default(self))
    else:
        scaled = aten.mul.Tensor(self, beta)
        soft = aten.div.Tensor(aten.log1p.default(aten.exp.default(scaled)), beta)
    return aten.where.self(aten.gt.Scalar(scaled, threshold), self, soft)


@register(aten.mish.default, core=True)
def mish(self):
    return aten.mul.Tensor(self, aten.tanh.default(aten.softplus.default(self)))


@register(aten.gelu.default)
def gelu(self, *, approximate: str = "none"):
    if approximate == "tanh":
        cube = aten.mul.Tensor(aten.mul.Tensor(self, self), self)
        inner = aten.mul.Tensor(aten.add.Tensor(self, aten.mul.Tensor(cube, 0.044715)), math.sqrt(2 / math.pi))
        half = aten.mul.Tensor(self, 0.5)
        return aten.mul.Tensor(half, aten.add.Tensor(aten.tanh.default(inner), 1))
    half = aten.mul.Tensor(self, 0.5)
    return aten.mul.Tensor(half, aten.add.Tensor(aten.erf.default(aten.mul.Tensor(self, math.sqrt(0.5))), 1))


@register(aten.square.default, core=True, out=False)
def square(self):
    return aten.pow.Tensor_Scalar(self, 2)


@register(aten.rsub.Tensor, aten.rsub.Scalar, core=True)
def rsub(self, other, alpha=1):
    return aten.sub.Tensor(other, self, alpha=alpha) if alpha != 1 else aten.sub.Tensor(other, self)


@register(aten.addcmul.default, core=True)
def addcmul(self, tensor1, tensor2, *, value=1):
    product = aten.mul.Tensor(tensor1, tensor2)
    return aten.add.Tensor(self, aten.mul.Tensor(product, value) if value != 1 else product)


@register(aten.addcdiv.default, core=True)
def addcdiv(self, tensor1, tensor2, *, value=1):
    return aten.add.Tensor(self, aten.div.Tensor(aten.mul.Tensor(tensor1, value), tensor2))


@register(aten.lerp.Scalar, aten.lerp.Tensor, core=True)
def lerp(self, end, weight):
    # PyTorch's two-sided formula, exact at both ends: from the nearer end, as a weight tensor
    # (a number weight becomes a 0-d one)
    if not hasattr(weight, "dim"):
        weight = aten.new_full.default(self, [], weight, pin_memory=False)
    far = aten.ge.Scalar(aten.abs.default(weight), 0.5)
    coefficient = aten.where.self(far, aten.sub.Tensor(weight, 1), weight)
    base = aten.where.self(far, end, self)
    return aten.add.Tensor(aten.mul.Tensor(coefficient, aten.sub.Tensor(end, self)), base)


@register(aten.frac.default, core=True)
def frac(self):
    return aten.sub.Tensor(self, aten.trunc.default(self))


@register(aten.deg2rad.default, core=True)
def deg2rad(self):
    return aten.mul.Tensor(self, math.pi / 180)


@register(aten.rad2deg.default, core=True)
def rad2deg(self):
    return aten.mul.Tensor(self, 180 / math.pi)


@register(aten.logaddexp.default, core=True)
def logaddexp(self, other):
    if self.is_complex() or other.is_complex():
        return NotImplemented
    larger, smaller = _ordered(self, other)
    # equal infinities: the input itself (inf - inf would be NaN); isfinite as PyTorch spells it
    not_infinite = aten.ne.Scalar(aten.abs.default(self), math.inf)
    finite = aten.mul.Tensor(aten.eq.Tensor(self, self), not_infinite)
    same_infinity = aten.logical_and.default(aten.logical_not.default(finite), aten.eq.Tensor(self, other))
    result = aten.add.Tensor(larger, aten.log1p.default(aten.exp.default(aten.sub.Tensor(smaller, larger))))
    return aten.where.self(same_infinity, self, result)


def _ordered(self, other):
    """``logaddexp``'s larger and smaller operand, element by element (``self`` on ties)."""
    first = aten.ge.Tensor(self, other)
    return aten.where.self(first, self, other), aten.where.self(first, other, self)


@register(aten.sgn.default, core=True)
def sgn(self):
    if not self.is_complex():
        return aten.sign.default(self)
    size = aten.abs.default(self)
    at_zero = aten.eq.Scalar(size, 0)
    unit = aten.div.Tensor(self, size)
    return aten.where.self(at_zero, _zero(self), unit)


@register(aten.clamp_min.default, core=True)
def clamp_min(self, min):
    return aten.clamp.default(self, min)


@register(aten.clamp_max.default, core=True)
def clamp_max(self, max):
    return aten.clamp.default(self, None, max)


@register(aten.isneginf.default, core=True)
def isneginf(self):
    return aten.eq.Scalar(self, -math.inf)


@register(aten.isposinf.default, core=True)
def isposinf(self):
    return aten.eq.Scalar(self, math.inf)


# -- reductions and products -----------------------------------------------------------------

@register(aten.sum.default, aten.sum.out, core=True)
def sum_all(self, *, dtype=None, out=None):
    if out is not None:  # PyTorch's own out= form (not its out_wrapper's)
        return aten.sum.IntList_out(self, [], dtype=dtype, out=out)
    return aten.sum.dim_IntList(self, [], dtype=dtype) if dtype is not None else aten.sum.dim_IntList(self, [])


@register(aten.logsumexp.default, core=True, out="table")
def logsumexp(self, dim, keepdim=False):
    if self.numel() == 0:
        return aten.log.default(_sum_dims(aten.exp.default(self), dim, keepdim))
    largest = aten.amax.default(self, dim, True)
    # an infinite maximum shifts by 0: all -inf stays -inf, an inf stays inf (no inf - inf)
    largest = aten.masked_fill.Scalar(largest, aten.eq.Scalar(aten.abs.default(largest), math.inf), 0)
    squeezed = largest if keepdim else aten.squeeze.dims(largest, dim)
    total = _sum_dims(aten.exp.default(aten.sub.Tensor(self, largest)), dim, keepdim)
    return aten.add.Tensor(aten.log.default(total), squeezed)


def _sum_dims(self, dim, keepdim):
    """``sum.dim_IntList`` with ``keepdim`` passed only when set, as PyTorch's Python calls it."""
    return aten.sum.dim_IntList(self, dim, True) if keepdim else aten.sum.dim_IntList(self, dim)


@register(aten.trace.default, core=True)
def trace(self):
    # PyTorch's ``sum(diag(self))``: ``diag`` of a matrix is ``diagonal_copy``
    if self.dim() != 2:
        raise RuntimeError(f"expected a matrix, but got tensor with dim {self.dim()}")
    return aten.sum.default(aten.diagonal_copy.default(self))


@register(aten.outer.default, core=True, out=False)
def outer(self, vec2):
    return aten.mul.Tensor(aten.unsqueeze.default(self, 1), vec2)


@register(aten.dot.default, core=True)
def dot(self, tensor):
    return aten.sum.default(aten.mul.Tensor(self, tensor))


@register(aten.mv.default, core=True)
def mv(self, vec):
    return aten.sum.dim_IntList(aten.mul.Tensor(self, vec), [1])


@register(aten.addmm.default)
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    (self, mat1, mat2), dtype = _opmath(self, mat1, mat2)
    if not self.is_floating_point() and not self.is_complex():
        beta, alpha = int(beta), int(alpha)
    out = aten.mul.Tensor(aten.mm.default(mat1, mat2), alpha)
    if beta == 0:  # self ignored, its NaNs too
        return _back(out, dtype)
    # the product first: the result takes its (contiguous) strides
    return _back(aten.add.Tensor(out, aten.mul.Tensor(self, beta)), dtype)


def scaled_sum(self, product, beta, alpha):
    """``beta * self + alpha * product`` (``addmm``'s and ``baddbmm``'s), with no multiply by 1 and
    ``self`` ignored for a ``beta`` of 0 (its NaNs too), as PyTorch's kernels."""
    if alpha != 1:
        product = aten.mul.Tensor(product, alpha)
    if beta == 0:
        return product
    return aten.add.Tensor(aten.mul.Tensor(self, beta) if beta != 1 else self, product)


# -- softmax and normalisation ---------------------------------------------------------------

@register(aten._softmax.default)
def _softmax(self, dim: int, half_to_float: bool):
    if half_to_float:
        return NotImplemented
    shifted = aten.exp.default(aten.sub.Tensor(self, aten.amax.default(self, [dim], True)))
    return aten.div.Tensor(shifted, aten.sum.dim_IntList(shifted, [dim], True))


@register(aten._log_softmax.default)
def _log_softmax(self, dim: int, half_to_float: bool):
    if half_to_float:
        return NotImplemented
    shifted = aten.sub.Tensor(self, aten.amax.default(self, [dim], True))
    total = aten.sum.dim_IntList(aten.exp.default(shifted), [dim], True)
    return aten.sub.Tensor(shifted, aten.log.default(total))


@register(aten._softmax_backward_data.default, core=True)
def _softmax_backward_data(grad_output, output, dim: int, input_dtype):
    weighted = aten.mul.Tensor(grad_output, output)
    return aten.sub.Tensor(weighted, aten.mul.Tensor(output, aten.sum.dim_IntList(weighted, [dim], True)))


@register(aten._log_softmax_backward_data.default, core=True)
def _log_softmax_backward_data(grad_output, output, dim: int, input_dtype):
    exp = aten.exp.default(output)
    return aten.sub.Tensor(grad_output, aten.mul.Tensor(exp, aten.sum.dim_IntList(grad_output, [dim], True)))


@register(aten.native_layer_norm.default)
def native_layer_norm(input, normalized_shape, weight, bias, eps: float):
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    (computed,), dtype = _opmath(input)
    variance, mean = aten.var_mean.correction(computed, dims, correction=0, keepdim=True)
    rstd = aten.rsqrt.default(aten.add.Tensor(variance, eps))
    out = aten.mul.Tensor(aten.sub.Tensor(computed, mean), rstd)
    if weight is not None:
        out = aten.mul.Tensor(out, weight)
    if bias is not None:
        out = aten.add.Tensor(out, bias)
    return _back(out, dtype), _back(mean, dtype), _back(rstd, dtype)


# -- backward ops ----------------------------------------------------------------------------

@register(aten.threshold_backward.default, core=True)
def threshold_backward(grad_output, self, threshold):
    return aten.where.self(aten.le.Scalar(self, threshold), _zero(grad_output), grad_output)


@register(aten.tanh_backward.default, core=True)
def tanh_backward(grad_output, output):
    return aten.mul.Tensor(grad_output, aten.rsub.Scalar(aten.mul.Tensor(output, output), 1))


# -- losses ----------------------------------------------------------------------------------

@register(aten.mse_loss.default, core=True)
def mse_loss(self, target, reduction: int = 1):
    return _reduce(aten.pow.Tensor_Scalar(aten.sub.Tensor(self, target), 2), reduction)


@register(aten.huber_loss.default, core=True)
def huber_loss(self, target, reduction: int = 1, delta: float = 1.0):
    gap = aten.abs.default(aten.sub.Tensor(self, target))
    near = aten.lt.Scalar(gap, delta)
    quadratic = aten.mul.Tensor(aten.mul.Tensor(gap, 0.5), gap)
    linear = aten.mul.Tensor(aten.sub.Tensor(gap, 0.5 * delta), delta)
    return _reduce(aten.where.self(near, quadratic, linear), reduction)


@register(aten.smooth_l1_loss.default, core=True)
def smooth_l1_loss(self, target, reduction: int = 1, beta: float = 1.0):
    (self, target), dtype = _opmath(self, target)
    gap = aten.abs.default(aten.sub.Tensor(self, target))
    if beta == 0:  # PyTorch's formula divides by 0 there, a NaN gradient; the op's is the L1 loss's
        return _back(_reduce(gap, reduction), dtype)
    near = aten.lt.Scalar(gap, beta)
    quadratic = aten.div.Tensor(aten.mul.Tensor(aten.pow.Tensor_Scalar(gap, 2), 0.5), beta)
    return _back(_reduce(aten.where.self(near, quadratic, aten.sub.Tensor(gap, 0.5 * beta)), reduction), dtype)


@register(aten.soft_margin_loss.default, core=True)
def soft_margin_loss(self, target, reduction: int = 1):
    margin = aten.mul.Tensor(aten.neg.default(self), target)
    return _reduce(aten.log1p.default(aten.exp.default(margin)), reduction)


@register(aten.nll_loss_forward.default, core=True)
def nll_loss_forward(self, target, weight, reduction: int, ignore_index: int):
    channel = 0 if self.dim() < 2 else 1
    if weight is not None:  # weighted log-probabilities; the weights along the classes' dimension
        if self.dim() > 1:
            weight = aten.view.default(weight, [weight.shape[0] if d == channel else 1 for d in range(self.dim())])
        self = aten.mul.Tensor(self, weight)
    safe = aten.unsqueeze.default(_kept(target, ignore_index, target), channel)
    loss = aten.neg.default(aten.squeeze.dim(aten.gather.default(self, channel, safe), channel))
    loss = _kept(target, ignore_index, loss)
    if reduction == 0 and self.dim() > 1:
        return loss, aten.new_full.default(self, [], 0.0, pin_memory=False)
    if weight is not None:
        picked = aten.squeeze.dim(aten.gather.default(aten.expand.default(weight, list(self.shape)), channel, safe),
                                  channel)
        total_weight = aten.sum.default(_kept(target, ignore_index, picked))
    else:
        total_weight = aten._to_copy.default(aten.sum.default(aten.ne.Scalar(target, ignore_index)),
                                             dtype=self.dtype, device=self.device)
    if reduction == 2:
        loss = aten.sum.default(loss)
    elif reduction == 1:
        loss = aten.div.Tensor(aten.sum.default(loss), total_weight)
    return loss, total_weight


def _kept(target, ignore_index: int, values):
    """``values`` where ``target`` is not ``ignore_index``, 0 elsewhere."""
    return aten.where.self(aten.ne.Scalar(target, ignore_index), values, _zero(values))
