"""Pointwise losses PyTorch computes natively (``torch._C._nn.mse_loss`` and friends): ``_mse_loss``,
``_smooth_l1_loss``, ``_huber_loss``, ``_soft_margin_loss`` and ``_binary_cross_entropy_with_logits``.

``nn.functional``'s Python-level functions check and broadcast their arguments and call these,
as PyTorch's do. Each is one op, so a loss records one node named as PyTorch's
(``MseLossBackward0`` ... through ``node=``) instead of the few a composition records, and its
gradient is one short formula. The reduction is a string (``'none'``, ``'mean'``, ``'sum'``),
checked by the caller.

Also here: what ``nll_loss`` and ``cross_entropy`` (declared in ``nn.py``) run when the dispatch
level listens (``op(decompose=)``): PyTorch's composites, through ATen's ``_log_softmax``,
``nll_loss_forward`` and ``nll_loss2d_forward`` (``dispatch_forms.py``).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .arithmetic import sub as _sub
from .backward_ops import REDUCTIONS
from .common import (
    HALF_TYPES,
    array_type_name,
    check_same_shape_or_broadcast,
    dtype_of,
    floating,
    no_complex_autograd,
    not_implemented,
    operand_dtype,
    ops,
    quiet,
    scalar_type_name,
)
from .meta_rules import MetaRule, pointwise, with_shape
from .registry import Sample, Tensor, TensorSpec, op

_FLOATING = frozenset({np.dtype(np.float32), np.dtype(np.float64)}) | HALF_TYPES


def _working(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``array`` in ``dtype``, or float32 for the half types (rounded once, at the end)."""
    if dtype in HALF_TYPES:
        if array.dtype != dtype:  # an operand of another dtype is first converted to the common one
            array = array.astype(dtype)
        dtype = np.dtype(np.float32)
    return array if array.dtype == dtype else array.astype(dtype)


def _reduced(losses: np.ndarray, reduction: str, dtype: np.dtype) -> np.ndarray:
    """The elementwise ``losses`` reduced as ``reduction`` says, in ``dtype``."""
    if reduction == "none":
        return np.asarray(losses, dtype=dtype)
    if dtype in HALF_TYPES:
        # PyTorch's elementwise loss kernel writes a half-type tensor, whose sum (or mean) it then
        # accumulates in float32: each loss is rounded before the reduction, as the result is after
        losses = losses.astype(dtype).astype(np.float32)
    total = np.add.reduce(losses, axis=None)
    if reduction == "mean":
        with quiet():  # the mean of no element is NaN, as in PyTorch
            total = total / losses.size
    return np.asarray(total, dtype=dtype)


def _difference(input: np.ndarray, target: np.ndarray, kernel: str) -> tuple[np.ndarray, np.dtype]:
    """``input - target`` broadcast, computed in their promoted floating dtype (returned too)."""
    check_same_shape_or_broadcast(input.shape, target.shape)
    dtype = operand_dtype(input, target)._np
    if dtype not in _FLOATING:
        raise not_implemented(kernel, dt.NP_TO_DTYPE[dtype])
    return _working(input, dtype) - _working(target, dtype), dtype


def _check_in_place_broadcast(shape: tuple, other: tuple) -> None:
    """PyTorch's errors where an in-place op on a ``shape`` tensor meets an ``other`` operand."""
    broadcast = check_same_shape_or_broadcast(shape, other)
    if broadcast != tuple(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}")


def _loss_meta(opdef, args, kwargs):
    # The elementwise losses' shape and dtype, then the reduction's: a 0-dim result unless 'none'.
    result = pointwise(opdef, args, kwargs)
    reduction = opdef.signature.bind(*args, **kwargs).arguments.get("reduction", "mean")
    return result if reduction == "none" else with_shape(result, ())


_LOSS_META = MetaRule(_loss_meta, "loss")


_REDUCTION_NAMES = {code: name for name, code in REDUCTIONS.items()}


def _mean_scaled(grad, reduction: str, count: int):
    """The loss's gradient per element: ``grad``, divided by the element count for ``'mean'``."""
    return grad / count if reduction == "mean" else grad


def _difference_of(input, target):
    """``input - target`` in a gradient formula: PyTorch's kernels subtract a bool operand as a
    number, where the public operator refuses it."""
    if input.dtype is dt.bool:
        input = input.to(target.dtype)
    elif target.dtype is dt.bool:
        target = target.to(input.dtype)
    return input - target


def _opposite(grad_input, needs_input_grad):
    """The gradients of a loss of ``input - target``: ``grad_input`` and its negation."""
    return (grad_input if needs_input_grad[0] else None,
            -grad_input if needs_input_grad[1] else None)


_PAIR = (TensorSpec((2, 3)), TensorSpec((2, 3)))
_PAIR64 = (TensorSpec((3, 4), "float64", -3, 3), TensorSpec((3, 4), "float64", -3, 3))
_BROADCAST = (TensorSpec((2, 3)), TensorSpec((3,)))
_ZERO_DIM = (TensorSpec(()), TensorSpec(()))
_HALF = (TensorSpec((4,), "float16"), TensorSpec((4,), "float16"))
_MIXED = (TensorSpec((2, 3), "float32"), TensorSpec((2, 3), "float64"))


# -- mean squared error ---------------------------------------------------------------------------

def _mse_loss_grad(grad, input, target, reduction, needs_input_grad):
    if input.shape == target.shape and not input.dtype.is_complex:
        # PyTorch's backward op, once per operand (the target's with the two swapped)
        backward, code = ops.ops.aten.mse_loss_backward.default, REDUCTIONS[reduction]
        return (backward(grad, input, target, code) if needs_input_grad[0] else None,
                backward(grad, target, input, code) if needs_input_grad[1] else None)
    # broadcast operands: PyTorch's op would divide by one operand's count, not the loss's
    difference = _difference_of(input, target)
    return _opposite(difference * _mean_scaled(grad * 2, reduction, difference.numel()), needs_input_grad)


@op(grad=_mse_loss_grad, node="mse_loss", meta=_LOSS_META, samples=(
    Sample(_PAIR), Sample(_PAIR64, {"reduction": "sum"}), Sample(_PAIR, {"reduction": "none"}),
    Sample(_BROADCAST), Sample(_ZERO_DIM), Sample(_HALF), Sample(_MIXED, {"reduction": "none"})),
    aten="mse_loss.default",
    schema={"reduction": "int=1"})
def _mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """``(input - target) ** 2``, broadcast and reduced (``'none'``, ``'mean'`` or ``'sum'``): what
    ``nn.functional.mse_loss`` runs (PyTorch's ``torch._C._nn.mse_loss``; node ``MseLossBackward0``).

    >>> import tensormodes as tm
    >>> tm._mse_loss(tm.tensor([1., 2.]), tm.tensor([1., 4.]))
    tensor(2.)
    """
    difference, dtype = _difference(input, target, "mse_cpu")
    if dtype in HALF_TYPES:  # PyTorch's half-type kernel rounds the difference, then its square
        difference = _half_step(difference, dtype)
        return _reduced(_half_step(difference * difference, dtype), reduction, dtype)
    return _reduced(difference * difference, reduction, dtype)


def _half_step(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32 ``values`` rounded to the half type ``dtype`` (and back to float32): one step of a
    PyTorch kernel computed in c10's half-type arithmetic."""
    return values.astype(dtype).astype(np.float32)


# -- smooth L1 and Huber ---------------------------------------------------------------------------

def smooth_l1_loss_backward_composite(grad_output, input, target, reduction: int, beta):
    """``smooth_l1_loss_backward``'s values with public ops (its double backward's form): the
    derivative ``d / beta`` inside ``(-beta, beta)``, its sign outside (``d = input - target``)."""
    difference = _difference_of(input, target)
    slope = (difference / beta).clamp(-1, 1)
    return slope * _mean_scaled(grad_output, _REDUCTION_NAMES[reduction], difference.numel())


def _smooth_l1_loss_grad(grad, input, target, reduction, beta, needs_input_grad):
    if input.shape == target.shape:  # PyTorch's backward op, once per operand (swapped for the target)
        backward, code = ops.ops.aten.smooth_l1_loss_backward.default, REDUCTIONS[reduction]
        return (backward(grad, input, target, code, beta) if needs_input_grad[0] else None,
                backward(grad, target, input, code, beta) if needs_input_grad[1] else None)
    # broadcast operands: PyTorch's op would divide by one operand's count, not the loss's
    return _opposite(smooth_l1_loss_backward_composite(grad, input, target, REDUCTIONS[reduction], beta),
                     needs_input_grad)


@op(grad=_smooth_l1_loss_grad, node="smooth_l1_loss", meta=_LOSS_META, samples=(
    Sample(_PAIR), Sample(_PAIR64, {"reduction": "sum", "beta": 0.5}), Sample(_PAIR, {"reduction": "none"}),
    Sample(_BROADCAST, {"beta": 2.0}), Sample(_ZERO_DIM), Sample(_HALF), Sample(_MIXED, {"reduction": "none"})),
    aten="smooth_l1_loss.default",
    schema={"reduction": "int=1"})
def _smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 * d ** 2 / beta`` where ``|d| < beta`` (``d = input - target``), ``|d| - 0.5 * beta``
    elsewhere, broadcast and reduced; ``beta`` positive (``nn.functional.smooth_l1_loss`` runs
    ``l1_loss`` for 0). PyTorch's ``torch._C._nn.smooth_l1_loss`` (node ``SmoothL1LossBackward0``).

    >>> import tensormodes as tm
    >>> tm._smooth_l1_loss(tm.tensor([0.0, 3.0]), tm.tensor([0.5, 0.0]), "sum")
    tensor(2.6250)
    """
    difference, dtype = _difference(input, target, "smooth_l1_cpu")
    if dtype == np.float16:
        # PyTorch's float16 kernel computes in float16, rounding every step (bfloat16's in float32)
        size, limit = np.abs(_half_step(difference, dtype)), _half_step(np.float32(beta), dtype)
        square = _half_step(_half_step(_half_step(0.5 * size, dtype) * size, dtype) / limit, dtype)
        losses = np.where(size < limit, square, _half_step(size - _half_step(0.5 * limit, dtype), dtype))
        return _reduced(losses, reduction, dtype)
    size = np.abs(difference)
    return _reduced(np.where(size < beta, 0.5 * difference * difference / beta, size - 0.5 * beta), reduction, dtype)


def huber_loss_backward_composite(grad_output, input, target, reduction: int, delta):
    """``huber_loss_backward``'s values with public ops (its double backward's form): the
    derivative ``d`` inside ``(-delta, delta)``, ``delta`` times its sign outside (``d = input - target``)."""
    difference = input - target
    slope = difference.clamp(-delta, delta)
    return slope * _mean_scaled(grad_output, _REDUCTION_NAMES[reduction], difference.numel())


def _huber_loss_grad(grad, input, target, reduction, delta, needs_input_grad):
    if input.shape == target.shape:  # PyTorch's backward op, once per operand (swapped for the target)
        backward, code = ops.ops.aten.huber_loss_backward.default, REDUCTIONS[reduction]
        return (backward(grad, input, target, code, delta) if needs_input_grad[0] else None,
                backward(grad, target, input, code, delta) if needs_input_grad[1] else None)
    # broadcast operands: PyTorch's op would divide by one operand's count, not the loss's
    return _opposite(huber_loss_backward_composite(grad, input, target, REDUCTIONS[reduction], delta),
                     needs_input_grad)


@op(grad=_huber_loss_grad, node="huber_loss", meta=_LOSS_META, samples=(
    Sample(_PAIR), Sample(_PAIR64, {"reduction": "sum", "delta": 0.5}), Sample(_PAIR, {"reduction": "none"}),
    Sample(_BROADCAST, {"delta": 2.0}), Sample(_ZERO_DIM), Sample(_HALF), Sample(_MIXED, {"reduction": "none"})),
    aten="huber_loss.default",
    schema={"reduction": "int=1"})
def _huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """``0.5 * d ** 2`` where ``|d| < delta`` (``d = input - target``), ``delta * (|d| - 0.5 * delta)``
    elsewhere, broadcast and reduced, in ``input``'s dtype. PyTorch's ``torch._C._nn.huber_loss``
    (node ``HuberLossBackward0``).

    >>> import tensormodes as tm
    >>> tm._huber_loss(tm.tensor([0.0, 3.0]), tm.tensor([0.5, 0.0]), "sum")
    tensor(2.6250)
    """
    check_same_shape_or_broadcast(input.shape, target.shape)
    _check_written(operand_dtype(input, target)._np, input)  # PyTorch writes into an input-like result
    difference, dtype = _difference(input, target, "huber_cpu")
    if dtype == dt.bfloat16._np:
        # PyTorch's bfloat16 kernel computes in bfloat16, rounding every step (float16's in float32)
        size, limit = np.abs(_half_step(difference, dtype)), _half_step(np.float32(delta), dtype)
        square = _half_step(_half_step(0.5 * size, dtype) * size, dtype)
        linear = _half_step(limit * _half_step(size - _half_step(0.5 * limit, dtype), dtype), dtype)
        return _reduced(np.where(size < limit, square, linear), reduction, input.dtype)
    size = np.abs(difference)
    losses = np.where(size < delta, 0.5 * difference * difference, delta * (size - 0.5 * delta))
    if dtype in HALF_TYPES:  # computed in the common dtype, then written into the input-like result
        losses = losses.astype(dtype)
    return _reduced(losses, reduction, input.dtype)


# -- soft margin -----------------------------------------------------------------------------------

def _soft_margin_loss_grad(grad, input, target, reduction, needs_input_grad):
    # d/dx log(1 + exp(-t x)) = -t sigmoid(-t x); the target's gradient (beyond PyTorch, which
    # refuses a target that requires grad) is the same with x for t.
    # (-target first: PyTorch's backward negates the target, and refuses a bool one as the operator does)
    grad_input = grad_target = None
    if needs_input_grad[0]:
        # PyTorch's steps: z = exp(-t x); (t z) * -norm / (1 + z) * grad (inf / inf is NaN where
        # exp overflows, which a sigmoid would round to 1)
        # (in place into a gradient of the input's dtype: each step rounded to it)
        z = (-target * input).exp()
        norm = 1 / max(input.numel(), 1) if reduction == "mean" else 1.0  # (no elements: an empty gradient)
        dtype = input.dtype
        grad_input = ((target * z).to(dtype) * -norm).to(dtype)
        grad_input = ((grad_input / (z + 1)).to(dtype) * grad).to(dtype)
    if needs_input_grad[1]:
        grad_target = (-target * input).sigmoid() * _mean_scaled(-grad, reduction, input.numel()) * input
    return grad_input, grad_target


def _check_written(result_dtype: np.dtype, output: np.ndarray) -> None:
    """PyTorch's error where its kernel writes a ``result_dtype`` result into ``output``'s dtype."""
    if not dt.can_cast(dt.NP_TO_DTYPE[result_dtype], dtype_of(output)):
        raise RuntimeError(f"result type {scalar_type_name(dt.NP_TO_DTYPE[result_dtype])} can't be cast to the desired "
                           f"output type {array_type_name(output)}")


@op(grad=_soft_margin_loss_grad, node="soft_margin_loss", meta=_LOSS_META,
    differentiable=no_complex_autograd("soft_margin_loss"), samples=(
    Sample(_PAIR), Sample(_PAIR64, {"reduction": "sum"}), Sample(_PAIR, {"reduction": "none"}),
    Sample(_BROADCAST), Sample(_ZERO_DIM), Sample(_HALF), Sample(_MIXED, {"reduction": "none"})),
    aten="soft_margin_loss.default",
    schema={"reduction": "int=1"})
def _soft_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, reduced, in ``input``'s shape and dtype. PyTorch's
    ``torch._C._nn.soft_margin_loss`` (node ``SoftMarginLossBackward0``).

    >>> import tensormodes as tm
    >>> round(tm._soft_margin_loss(tm.tensor([0.0]), tm.tensor([1.0])).item(), 4)
    0.6931
    """
    dtype = floating(operand_dtype(input, target))._np  # exp of integers gives floats
    _check_in_place_broadcast(input.shape, target.shape)
    _check_written(dtype, input)
    with quiet():  # exp overflows to inf for very wrong predictions, as in PyTorch
        product = -_working(input, dtype) * _working(target, dtype)
        if input.dtype.kind == "c":
            # PyTorch's steps, each written into the output (of input's dtype): the product's phase
            # is rounded before exp; its complex log1p is NaN wherever a part of its input is.
            exponential = np.exp(product.astype(input.dtype))
            nan = np.isnan(exponential.real) | np.isnan(exponential.imag)
            losses = np.where(nan, exponential.dtype.type(complex(np.nan, np.nan)), np.log1p(exponential))
        elif input.dtype in HALF_TYPES:
            # PyTorch's composite (log1p(exp(-input * target))) rounds each step to the half type
            def rounded(values):
                return values.astype(input.dtype).astype(np.float32)
            losses = rounded(np.log1p(rounded(np.exp(rounded(product)))))
        else:
            losses = np.log1p(np.exp(product))
    return _reduced(losses, reduction, input.dtype)


# -- binary cross entropy with logits -------------------------------------------------------------

def _binary_cross_entropy_with_logits_grad(grad, input, target, weight, pos_weight, reduction, needs_input_grad):
    # loss = (1 - t) x + w_t softplus(-x), w_t = 1 + (pos_weight - 1) t, times weight. Gradients for
    # weight and pos_weight go beyond PyTorch, which refuses them.
    grad_input = grad_target = grad_weight = grad_pos_weight = None
    if needs_input_grad[0]:
        grad_input = _logits_loss_input_grad(grad, input, target, weight, pos_weight, reduction)
    if not (needs_input_grad[1] or needs_input_grad[2] or needs_input_grad[3]):
        return grad_input, None, None, None  # (the usual case: nothing more to compute)
    per_element = _mean_scaled(grad, reduction, input.numel())
    scaled = per_element if weight is None else per_element * weight
    if needs_input_grad[1] or needs_input_grad[3]:
        softplus = None if pos_weight is None else ops.nn.functional.softplus(-input)
        if needs_input_grad[1]:
            grad_target = (-input if pos_weight is None else (pos_weight - 1) * softplus - input) * scaled
        if needs_input_grad[3]:
            grad_pos_weight = target * softplus * scaled
    if needs_input_grad[2]:
        unweighted = ops._binary_cross_entropy_with_logits(input, target, None, pos_weight, "none")
        grad_weight = unweighted * per_element
    return grad_input, grad_target, grad_weight, grad_pos_weight


def _logits_loss_input_grad(grad, input, target, weight, pos_weight, reduction):
    """PyTorch's steps: sigmoid(x) - t, or (pw t + 1 - t) sigmoid(x) - pw t; times the gradient,
    then the weight, then divided by the count. Without grad mode PyTorch runs them in place, so
    each step is rounded to the first one's dtype (a half-type sigmoid's: that decides the last bit)."""
    in_place = not ops.is_grad_enabled()

    def step(value, like):
        return value.to(like.dtype) if in_place and value.dtype != like.dtype else value

    if pos_weight is None:
        first = input.sigmoid()
        grad_input = step(first - target, first)
    else:
        first = pos_weight * target
        grad_input = step(first + 1, first)
        grad_input = step(grad_input - target, first)
        grad_input = step(grad_input * input.sigmoid(), first)
        grad_input = step(grad_input - first, first)
    grad_input = step(grad_input * grad, first)
    if weight is not None:
        grad_input = step(grad_input * weight, first)
    if reduction != "mean":
        return grad_input
    if in_place and grad_input.dtype == first.dtype:
        return grad_input.div_(input.numel())  # PyTorch's div_ (a fresh tensor: the same values)
    return step(grad_input / input.numel(), first)


def _real_logits_loss(input, target, *arguments) -> bool:
    """``differentiable=``: the loss has the target's dtype, and PyTorch differentiates no complex one."""
    if target.is_complex():
        raise RuntimeError("binary_cross_entropy_with_logits does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return True


@op(grad=_binary_cross_entropy_with_logits_grad, node="binary_cross_entropy_with_logits", meta=_LOSS_META,
    differentiable=_real_logits_loss, samples=(
    Sample((TensorSpec((2, 3), "float32", -4, 4), TensorSpec((2, 3), "float32", 0, 1))),
    Sample((TensorSpec((3, 2), "float64", -30, 30), TensorSpec((3, 2), "float64", 0, 1)), {"reduction": "sum"}),
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float32", 0, 1)), {"reduction": "none"}),
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float32", 0, 1), TensorSpec((3,), "float32", 0.5, 2),
            TensorSpec((3,), "float32", 0.5, 3))),
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float32", 0, 1)),
           {"pos_weight": TensorSpec((3,), "float32", 0.5, 3), "reduction": "none"}),
    Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float32", 0, 1), TensorSpec((2, 1), "float32", 0.5, 2))),
    Sample((TensorSpec(()), TensorSpec((), "float32", 0, 1))),
    Sample((TensorSpec((4,), "float16"), TensorSpec((4,), "float16", 0, 1))),
    Sample((TensorSpec((2, 3), "float64"), TensorSpec((2, 3), "float32", 0, 1)), {"reduction": "none"})),
    aten="binary_cross_entropy_with_logits.default",
    schema={"reduction": "int=1"})
def _binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                      pos_weight: Tensor | None = None, reduction: str = "mean") -> Tensor:
    """Binary cross entropy between ``sigmoid(input)`` and ``target``, from the logits without
    overflow: ``(1 - target) * input + (1 + (pos_weight - 1) * target) * log(1 + exp(-input))``,
    times ``weight``, reduced; in ``target``'s dtype, as PyTorch's kernel writes into a copy of
    it. PyTorch's ``torch.binary_cross_entropy_with_logits`` with the reduction as a string
    (node ``BinaryCrossEntropyWithLogitsBackward0``).

    >>> import tensormodes as tm
    >>> round(tm._binary_cross_entropy_with_logits(tm.tensor([0.0]), tm.tensor([1.0])).item(), 4)
    0.6931
    """
    if input.dtype not in _FLOATING:
        raise not_implemented("log_sigmoid_cpu", dtype_of(input))
    dtype = operand_dtype(input, target)._np
    # PyTorch computes into a copy of ``target`` and multiplies ``weight`` in place: neither
    # ``input`` nor the weights may grow the result beyond ``target``'s shape.
    _check_in_place_broadcast(target.shape, input.shape)
    _check_written(dtype, target)
    if pos_weight is not None:
        _check_in_place_broadcast(input.shape, check_same_shape_or_broadcast(pos_weight.shape, target.shape))
    if weight is not None:
        _check_in_place_broadcast(target.shape, weight.shape)
    # the in-place products below: the pos_weight term into the logits' dtype, the weight into the copy's
    if pos_weight is not None:
        term = dt.promote_types(dtype_of(pos_weight), dtype_of(target))
        _check_written(dt.promote_types(dtype_of(input), term)._np, input)
    if weight is not None:
        _check_written(dt.promote_types(dtype_of(target), dtype_of(weight))._np, target)
    # PyTorch's steps, each rounded to the dtype it writes: (1 - target) * input - log_sigmoid(input)
    # into a copy of the target, the log_sigmoid (times the pos_weight term) in the logits' dtype.
    # Each step is computed in double precision here (complex with a complex target).
    wide = np.complex128 if dtype.kind == "c" else np.float64

    def rounded(values: np.ndarray, to: np.dtype) -> np.ndarray:
        return values.astype(to).astype(wide)

    x, t, out = input.astype(wide), target.astype(wide), target.dtype
    softplus = rounded(np.logaddexp(0, -input.astype(np.float64)), input.dtype)  # of the real logits
    if pos_weight is not None:
        # pos_weight - 1 in pos_weight's own dtype, as PyTorch's kernel subtracts (an int8 -128 wraps to 127)
        term = operand_dtype(pos_weight, target)._np
        log_weight = rounded(rounded(_sub(pos_weight, 1).astype(wide) * t, term) + 1, term)
        softplus = rounded(softplus * log_weight, input.dtype)
    # the log_sigmoid is subtracted in the operands' common dtype (a 0-dim one rounded to the copy's,
    # as PyTorch's subtraction of a scalar; its multiplications take the scalar unrounded)
    losses = rounded(rounded(rounded(1 - t, out) * x, out) + rounded(softplus, dtype), out)
    if weight is not None:
        losses = rounded(losses * weight.astype(wide), out)
    return _reduced(losses, reduction, target.dtype)


# -- nll_loss and cross_entropy (declared in nn.py) at the dispatch level -------------------------

# PyTorch's Reduction enum: how ATen's loss ops (``nll_loss_forward``) take the reduction.
REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


def _nll_loss_nd(input, target, weight, reduction: str, ignore_index: int):
    """PyTorch's ``nll_loss_nd`` (what the dispatch level sees): ``nll_loss_forward`` of 1-D or 2-D
    log-probabilities, ``nll_loss2d_forward`` of 4-D ones, other shapes viewed as (N, C, 1, -1)
    and the targets as (N, 1, -1) (a ``'none'`` loss viewed back)."""
    mode, ndim = REDUCTION_ENUM[reduction], input.dim()
    if ndim <= 2:
        return ops.ops.aten.nll_loss_forward.default(input, target, weight, mode, ignore_index)[0]
    if ndim == 4:
        return ops.ops.aten.nll_loss2d_forward.default(input, target, weight, mode, ignore_index)[0]
    n, c, spatial = input.shape[0], input.shape[1], tuple(input.shape[2:])
    output = ops.ops.aten.nll_loss2d_forward.default(input.view(n, c, 1, -1), target.view(n, 1, -1), weight, mode,
                                                     ignore_index)[0]
    return output.view(n, *spatial) if mode == 0 else output


def _nd_decomposable(input, target, reduction, ignore_index) -> bool:
    """Whether ``_nll_loss_nd`` reproduces PyTorch's steps for these arguments (argument errors, and
    empty or non-contiguous operands of 3 or 5+ dimensions, are left to the op)."""
    if reduction not in REDUCTION_ENUM or type(ignore_index) is not int or input.dim() == 0:
        return False
    return input.dim() in (1, 2, 4) or (tuple(target.shape) == (input.shape[0], *input.shape[2:]) and
                                        input.numel() > 0 and target.is_contiguous())


def nll_loss_decomposition(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                           reduction="mean"):
    """PyTorch's ``nll_loss`` at the dispatch level (see ``_nll_loss_nd``); legacy arguments, which
    warn, are left to the op."""
    if size_average is not None or reduce is not None or not _nd_decomposable(input, target, reduction,
                                                                             ignore_index):
        return NotImplemented
    if input.dim() not in (1, 2, 4) and not input.is_contiguous():
        return NotImplemented
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


def cross_entropy_decomposition(input, target, weight=None, reduction="mean", ignore_index=-100):
    """PyTorch's ``cross_entropy``: ``_log_softmax`` along the class dimension, then for class indices
    ``nll_loss_nd``'s ops; for class probabilities (a floating target of the input's shape)
    ``mul`` by the target (and the class weights, ``view``-ed to broadcast), ``sum``, ``neg`` and
    for ``'mean'`` ``div`` by the number of class vectors."""
    probabilities = target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape)
    if probabilities:
        classes = input.shape[1 if input.dim() > 1 else 0] if input.dim() else None
        if classes is None or reduction not in REDUCTION_ENUM or ignore_index >= 0 or target.is_complex() or \
                (weight is not None and tuple(weight.shape) != (classes,)):
            return NotImplemented  # PyTorch's errors, from the op
    elif target.dtype.is_floating_point or not _nd_decomposable(input, target, reduction, ignore_index):
        return NotImplemented
    dim = 1 if input.dim() > 1 else 0
    log_probs = ops.ops.aten._log_softmax.default(input, dim, False)
    if not probabilities:
        return _nll_loss_nd(log_probs, target, weight, reduction, ignore_index)
    if weight is not None:
        weight = weight.view(*[classes if d == dim else 1 for d in range(input.dim())])
    product = log_probs * target
    if weight is not None:
        product = product * weight
    if reduction == "none":
        return -product.sum(dim)
    loss = -product.sum()
    return loss / (input.numel() // classes) if reduction == "mean" else loss
