"""PyTorch's backward ops of activations and losses whose formulas here were compositions of public
ops: ``mish_backward``, ``glu_backward``, ``_prelu_kernel_backward``, ``smooth_l1_loss_backward``,
``huber_loss_backward`` and ``binary_cross_entropy_backward``.

None is a public function (``function=False``): the forward ops' gradient formulas call them as
``tensormodes.ops.aten.<name>.default``, so a ``TorchDispatchMode`` sees during backward the op
PyTorch's formula calls, and the plain backward runs one NumPy kernel. Each kernel computes the
composition the formula used before, step by step in the same dtypes (so gradients keep their
values bit for bit); each op's own gradient (double backward) differentiates that composition,
kept here as ``<op>_composite`` (:func:`through_composite`), except ``mish_backward``, which
PyTorch never differentiates (with grad mode on its formula is the composition itself).

>>> import tensormodes as tm
>>> tm.ops.aten.glu_backward.default(tm.tensor([1.0]), tm.tensor([2.0, 0.0]), 0)
tensor([0.5000, 0.5000])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ._samples import M23
from .backward_ops import REDUCTIONS
from .common import (
    HALF_TYPES,
    check_same_shape_or_broadcast,
    no_derivative,
    not_implemented,
    operand_dtype,
    ops,
    quiet,
    wrap_dim,
)
from .comparison import clamp as _clamp
from .losses import huber_loss_backward_composite, smooth_l1_loss_backward_composite
from .meta_rules import MetaArray, broadcasting, probe, rule
from .pointwise_activation import _softplus, glu_backward_composite, prelu_kernel_backward_composite
from .reduction import sum as _sum
from .registry import Sample, Tensor, TensorSpec, op
from .unary_math import sigmoid as _sigmoid
from .unary_math import tanh as _tanh


def through_composite(composite: Callable, arguments: tuple, grads, needs_input_grad) -> tuple:
    """The gradients of ``composite(*arguments)`` (a backward op's values written with public ops)
    for the tensor ``arguments`` whose ``needs_input_grad`` is set, given the output's ``grads``
    (a tuple for several outputs): a backward op's double backward. With ``create_graph`` the
    gradients keep their history (the arguments themselves are differentiated); else detached
    copies are. One gradient (or None) per tensor argument, in order; None arguments count."""
    create_graph = ops.is_grad_enabled()
    with ops.enable_grad():
        wanted = {}
        for i, (value, needed) in enumerate(zip((a for a in arguments if _is_tensor_or_none(a)), needs_input_grad,
                                                strict=False)):
            if needed and value is not None:
                wanted[i] = value if create_graph and value.requires_grad else value.detach().requires_grad_()
        tensors = iter(range(len(arguments)))
        position = {}
        for k, a in enumerate(arguments):
            if _is_tensor_or_none(a):
                position[next(tensors)] = k
        replaced = list(arguments)
        for i, leaf in wanted.items():
            replaced[position[i]] = leaf
        outputs = composite(*replaced)
        outputs, grads = (outputs, grads) if isinstance(outputs, tuple) else ((outputs,), (grads,))
        pairs = [(out, g) for out, g in zip(outputs, grads, strict=True) if out is not None and g is not None]
        found = ops.autograd.grad([o for o, _ in pairs], list(wanted.values()), [g for _, g in pairs],
                                  create_graph=create_graph, allow_unused=True) if pairs and wanted else ()
    by_position = dict(zip(wanted, found))
    return tuple(by_position.get(i) for i in range(len(needs_input_grad)))


def _is_tensor_or_none(value) -> bool:
    return value is None or hasattr(value, "requires_grad")


def _promoted(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays in their promoted dtype (as a public binary op computes); NumPy scalars (0-dim
    results) as arrays, so they promote as tensors, not as numbers."""
    arrays = tuple(np.asarray(a) for a in arrays)
    dtype = arrays[0].dtype
    if any(a.dtype != dtype for a in arrays[1:]):
        dtype = operand_dtype(*arrays)._np
        return tuple(a.astype(dtype, copy=False) for a in arrays)
    return arrays


def _check_floating(kernel: str, *arrays: np.ndarray, integers: bool = False) -> None:
    """PyTorch's error for operands whose promoted dtype the ``kernel`` has no loop for: complex,
    and unless ``integers`` integer and bool ones."""
    dtype = operand_dtype(*arrays)
    if dtype.is_complex or not (integers or dtype.is_floating_point):
        raise not_implemented(kernel, dtype)


def _promoted_dtype(*arrays) -> np.dtype:
    """The promoted dtype of arrays or MetaArrays (for meta rules)."""
    return operand_dtype(*(probe(a) for a in arrays))._np


_GRAD = TensorSpec((2, 3))
_X = TensorSpec((2, 3), "float32", -4, 4)


# -- mish ---------------------------------------------------------------------------------------------

# PyTorch differentiates mish through the composite with grad mode on, and never this op
@op(function=False, grad=no_derivative("mish_backward"), meta=broadcasting("grad_output", "input"),
    samples=(Sample((_GRAD, _X)), Sample((TensorSpec((3, 2), "float64"), TensorSpec((3, 2), "float64", -6, 6))),
             Sample((TensorSpec(()), TensorSpec((), "float32", -2, 2))),
             Sample((TensorSpec((0, 3)), TensorSpec((0, 3)))),
             Sample((TensorSpec((4,), "float16"), TensorSpec((4,), "float16", -3, 3)))),
    schema={"input": "Tensor self"}, aten="default")
def mish_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    """The gradient of ``mish`` (PyTorch's ``aten::mish_backward``): ``grad_output * (t + x *
    sigmoid(x) * (1 - t * t))`` with ``t = tanh(softplus(x))``.

    >>> import tensormodes as tm
    >>> tm.ops.aten.mish_backward.default(tm.tensor([1.0]), tm.tensor([0.0]))
    tensor([0.6000])
    """
    _check_floating("mish_backward_cpu", grad_output, input)
    grad_output, input = _promoted(grad_output, input)
    t = _tanh(np.asarray(_softplus(input)))
    one = t.dtype.type(1)
    with quiet():
        return np.asarray(grad_output * (t + input * _sigmoid(input) * (one - t * t)))


# -- glu ----------------------------------------------------------------------------------------------

def _glu_backward_grad(grad, grad_output, input, dim, needs_input_grad):
    return through_composite(glu_backward_composite, (grad_output, input, dim), grad, needs_input_grad)[:2]


def _glu_backward_meta(grad_output, input, dim):
    axis = wrap_dim(dim, input.ndim)
    if input.shape[axis] != 2 * grad_output.shape[axis]:
        raise RuntimeError(f"glu_backward: the gradient's size {grad_output.shape[axis]} along dimension {axis} "
                           f"is not half the input's {input.shape[axis]}")
    return MetaArray(input.shape, _promoted_dtype(grad_output, input))


@op(function=False, grad=_glu_backward_grad, meta=rule(_glu_backward_meta),
    samples=(Sample((TensorSpec((2, 2)), TensorSpec((2, 4)), -1)),
             Sample((TensorSpec((2, 3), "float64"), TensorSpec((4, 3), "float64"), 0)),
             Sample((TensorSpec((2, 1, 2)), TensorSpec((2, 2, 2)), 1)),
             Sample((TensorSpec((3,), "float16"), TensorSpec((6,), "float16"), 0))),
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((2, 4)), -1)),),
    schema={"input": "Tensor self"}, aten="default")
def glu_backward(grad_output: Tensor, input: Tensor, dim: int) -> Tensor:
    """The gradient of ``glu`` (PyTorch's ``aten::glu_backward``): with ``a``, ``b`` the halves of
    ``input`` along ``dim`` and ``s = sigmoid(b)``, ``grad_output * s`` for ``a`` and
    ``grad_output * a * s * (1 - s)`` for ``b``.

    >>> import tensormodes as tm
    >>> tm.ops.aten.glu_backward.default(tm.tensor([2.0]), tm.tensor([3.0, 0.0]), 0)
    tensor([1.0000, 1.5000])
    """
    axis = wrap_dim(dim, input.ndim)
    if input.shape[axis] != 2 * grad_output.shape[axis]:
        raise RuntimeError(f"glu_backward: the gradient's size {grad_output.shape[axis]} along dimension {axis} "
                           f"is not half the input's {input.shape[axis]}")
    _check_floating("glu_backward_cpu", grad_output, input)
    first, second = np.split(input, 2, axis)
    gate = _sigmoid(second)
    half = grad_output.dtype in HALF_TYPES
    if half:
        dtype = grad_output.dtype
        grad_output, first, gate = (a.astype(np.float32) for a in (grad_output, first, gate))
    one = gate.dtype.type(1)
    with quiet():
        result = np.concatenate([grad_output * gate, grad_output * first * gate * (one - gate)], axis)
    return np.asarray(result.astype(dtype) if half else result)


# -- prelu --------------------------------------------------------------------------------------------

def _prelu_kernel_backward_grad(grad, grad_output, input, weight, needs_input_grad):
    return through_composite(prelu_kernel_backward_composite, (grad_output, input, weight), grad, needs_input_grad)


def _prelu_kernel_backward_meta(grad_output, input, weight):
    shape = check_same_shape_or_broadcast(grad_output.shape, input.shape, weight.shape)
    dtype = _promoted_dtype(grad_output, input, weight)
    return MetaArray(shape, dtype), MetaArray(shape, dtype)


@op(function=False, grad=_prelu_kernel_backward_grad, meta=rule(_prelu_kernel_backward_meta),
    samples=(Sample((_GRAD, _X, TensorSpec((1,)))),
             Sample((TensorSpec((2, 3, 2), "float64"), TensorSpec((2, 3, 2), "float64", -3, 3),
                     TensorSpec((3, 1), "float64"))),
             Sample((TensorSpec((4,)), TensorSpec((4,), "float32", -3, 3), TensorSpec(())))),
    schema={"input": "Tensor self", "(returns)": "Tensor, Tensor"}, aten="default")
def _prelu_kernel_backward(grad_output: Tensor, input: Tensor, weight: Tensor) -> tuple[Tensor, Tensor]:
    """The gradients of ``_prelu_kernel`` (PyTorch's ``aten::_prelu_kernel_backward``): for the
    input ``grad_output`` where ``input > 0``, else ``grad_output * weight``; for the weight
    (in the input's shape, summed by autograd) ``input * grad_output`` where ``input <= 0``, else 0.

    >>> import tensormodes as tm
    >>> tm.ops.aten._prelu_kernel_backward.default(tm.ones(2), tm.tensor([-2.0, 3.0]), tm.tensor([0.25]))
    (tensor([0.2500, 1.0000]), tensor([-2.,  0.]))
    """
    shape = check_same_shape_or_broadcast(grad_output.shape, input.shape, weight.shape)
    _check_floating("prelu_backward_cpu", grad_output, input, weight)
    positive = input > 0
    with quiet():
        grad_input = np.where(positive, grad_output, grad_output * weight)
        product = input * grad_output
        grad_weight = np.where(~positive, product, product.dtype.type(0))
    return (np.array(np.broadcast_to(grad_input, shape)), np.array(np.broadcast_to(grad_weight, shape)))


# -- smooth L1, Huber, binary cross entropy --------------------------------------------------------------

def _loss_samples(*extra) -> tuple[Sample, ...]:
    """Samples of a ``(grad_output, input, target, reduction, *extra)`` loss backward op."""
    pair = (TensorSpec((2, 3)), TensorSpec((2, 3)))
    pair64 = (TensorSpec((3, 4), "float64"), TensorSpec((3, 4), "float64"))
    return (Sample((TensorSpec(()), *pair, 1, *extra)), Sample((TensorSpec((), "float64"), *pair64, 2, *extra)),
            Sample((TensorSpec((2, 3)), *pair, 0, *extra)),
            Sample((TensorSpec(()), TensorSpec(()), TensorSpec(()), 1, *extra)),
            Sample((TensorSpec((), "float16"), TensorSpec((4,), "float16"), TensorSpec((4,), "float16"), 1, *extra)))


def _per_element(grad_output: np.ndarray, reduction: int, count: int) -> np.ndarray:
    """The loss's gradient per element: ``grad_output``, divided by the count for a mean (1)."""
    with quiet():  # the mean of nothing: an infinite (unused) scale
        return grad_output / count if reduction == REDUCTIONS["mean"] else grad_output


def _difference(input: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``input - target``, a bool operand taken as a number of the other's dtype (as PyTorch's
    kernels subtract it, where the public operator refuses it)."""
    if input.dtype == np.bool_:
        input = input.astype(target.dtype)
    elif target.dtype == np.bool_:
        target = target.astype(input.dtype)
    return np.subtract(*_promoted(input, target))


def _loss_backward_meta(grad_output, input, target, reduction, *extra):
    shape = check_same_shape_or_broadcast(input.shape, target.shape, grad_output.shape)
    return MetaArray(shape, _promoted_dtype(grad_output, input, target))


def _scaled_by(slope: np.ndarray, grad_output: np.ndarray, reduction: int) -> np.ndarray:
    slope, scale = _promoted(slope, _per_element(grad_output, reduction, slope.size))
    with quiet():
        return np.asarray(slope * scale)


def _smooth_l1_loss_backward_grad(grad, grad_output, input, target, reduction, beta, needs_input_grad):
    return through_composite(smooth_l1_loss_backward_composite, (grad_output, input, target, reduction, beta), grad,
                             needs_input_grad)


@op(function=False, grad=_smooth_l1_loss_backward_grad, meta=rule(_loss_backward_meta),
    samples=_loss_samples(1.0) + (Sample((TensorSpec(()), M23, M23, 1, 0.5)),),
    schema={"input": "Tensor self"}, aten="default")
def smooth_l1_loss_backward(grad_output: Tensor, input: Tensor, target: Tensor, reduction: int, beta: float) -> Tensor:
    """The gradient of ``smooth_l1_loss`` for ``input`` (PyTorch's ``aten::smooth_l1_loss_backward``;
    for the target with the two swapped): ``(input - target) / beta`` clamped to ``[-1, 1]``, times
    ``grad_output`` (divided by the element count for a mean, ``reduction`` 1).

    >>> import tensormodes as tm
    >>> tm.ops.aten.smooth_l1_loss_backward.default(tm.tensor(1.0), tm.tensor([0.5, 3.0]), tm.zeros(2), 2, 1.0)
    tensor([0.5000, 1.0000])
    """
    _check_floating("smooth_l1_backward_cpu_out", grad_output, input, target, integers=True)
    with quiet():
        slope = _clamp(np.asarray(_difference(input, target) / beta), -1, 1)
    return _scaled_by(slope, grad_output, reduction)


def _huber_loss_backward_grad(grad, grad_output, input, target, reduction, delta, needs_input_grad):
    return through_composite(huber_loss_backward_composite, (grad_output, input, target, reduction, delta), grad,
                             needs_input_grad)


@op(function=False, grad=_huber_loss_backward_grad, meta=rule(_loss_backward_meta),
    samples=_loss_samples(1.0) + (Sample((TensorSpec(()), M23, M23, 1, 0.5)),),
    schema={"input": "Tensor self"}, aten="default")
def huber_loss_backward(grad_output: Tensor, input: Tensor, target: Tensor, reduction: int, delta: float) -> Tensor:
    """The gradient of ``huber_loss`` for ``input`` (PyTorch's ``aten::huber_loss_backward``; for the
    target with the two swapped): ``input - target`` clamped to ``[-delta, delta]``, times
    ``grad_output`` (divided by the element count for a mean, ``reduction`` 1).

    >>> import tensormodes as tm
    >>> tm.ops.aten.huber_loss_backward.default(tm.tensor(1.0), tm.tensor([0.5, 3.0]), tm.zeros(2), 2, 1.0)
    tensor([0.5000, 1.0000])
    """
    _check_floating("huber_backward_cpu_out", grad_output, input, target)
    with quiet():
        slope = _clamp(np.asarray(np.subtract(*_promoted(input, target))), -delta, delta)
    return _scaled_by(slope, grad_output, reduction)


def binary_cross_entropy_backward_composite(grad_output, input, target, weight=None, reduction=1):
    """``binary_cross_entropy_backward``'s values with public ops (its double backward's form)."""
    grad = grad_output / max(input.numel(), 1) if reduction == REDUCTIONS["mean"] else grad_output
    if weight is not None:
        grad = grad * weight
    return grad * (input - target) / ((1 - input) * input).clamp(min=1e-12)


def _binary_cross_entropy_backward_grad(grad, grad_output, input, target, weight, reduction, needs_input_grad):
    return through_composite(binary_cross_entropy_backward_composite,
                             (grad_output, input, target, weight, reduction), grad, needs_input_grad)


_PROBABILITY = TensorSpec((2, 3), "float32", 0.05, 0.95)
_TARGET = TensorSpec((2, 3), "float32", 0, 1)


def _binary_cross_entropy_backward_meta(grad_output, input, target, weight=None, reduction=1):
    shape = check_same_shape_or_broadcast(input.shape, target.shape, grad_output.shape,
                                          *([] if weight is None else [weight.shape]))
    return MetaArray(shape, _promoted_dtype(grad_output, input, target))


@op(function=False, grad=_binary_cross_entropy_backward_grad, meta=rule(_binary_cross_entropy_backward_meta),
    samples=(Sample((TensorSpec(()), _PROBABILITY, _TARGET)),
             Sample((TensorSpec((), "float64"), TensorSpec((4,), "float64", 0.05, 0.95),
                     TensorSpec((4,), "float64", 0, 1), None, 2)),
             Sample((TensorSpec((2, 3)), _PROBABILITY, _TARGET, TensorSpec((3,), "float32", 0.5, 2), 0)),
             Sample((TensorSpec(()), _PROBABILITY, _TARGET), {"weight": TensorSpec((2, 3), "float32", 0.5, 2)})),
    schema={"input": "Tensor self", "reduction": "int=1"}, aten="default")
def binary_cross_entropy_backward(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None = None,
                                  reduction: int = 1) -> Tensor:
    """The gradient of ``binary_cross_entropy`` for ``input`` (PyTorch's
    ``aten::binary_cross_entropy_backward``): ``g * (input - target) / max(input * (1 - input),
    1e-12)``, ``g`` being ``grad_output`` (divided by the element count for a mean, ``reduction``
    1) times ``weight``.

    >>> import tensormodes as tm
    >>> tm.ops.aten.binary_cross_entropy_backward.default(tm.tensor(1.0), tm.tensor([0.5]), tm.tensor([1.0]))
    tensor([-2.])
    """
    _check_floating("binary_cross_entropy_backward", grad_output, input, target)
    with quiet():
        grad = grad_output / max(input.size, 1) if reduction == REDUCTIONS["mean"] else grad_output
        if weight is not None:
            grad = np.multiply(*_promoted(grad, weight))
        one = input.dtype.type(1)
        numerator = np.multiply(*_promoted(grad, np.subtract(*_promoted(input, target))))
        return np.asarray(np.divide(*_promoted(numerator, _clamp(np.asarray((one - input) * input), 1e-12))))


# -- group norm ---------------------------------------------------------------------------------------

def _native_group_norm_backward_meta(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    work = np.dtype(np.float32) if input.dtype in HALF_TYPES else input.dtype
    return (MetaArray(input.shape, input.dtype) if output_mask[0] else None,
            MetaArray((C,), work) if output_mask[1] else None,
            MetaArray((C,), work) if output_mask[2] else None)


_GN_X = TensorSpec((2, 4, 3))
_GN_STAT = TensorSpec((2, 2), "float32", 0.5, 2)


# PyTorch differentiates group norm through a composite with grad mode on, and never this op
@op(function=False, grad=no_derivative("native_group_norm_backward"), meta=rule(_native_group_norm_backward_meta),
    schema={"N": "SymInt", "C": "SymInt", "HxW": "SymInt", "output_mask": "bool[3]",
            "(returns)": "Tensor, Tensor, Tensor"},
    samples=(Sample((_GN_X, _GN_X, _GN_STAT, _GN_STAT, TensorSpec((4,)), 2, 4, 3, 2, [True, True, True])),
             Sample((TensorSpec((3, 6, 2, 2), "float64"), TensorSpec((3, 6, 2, 2), "float64"),
                     TensorSpec((3, 3), "float64"), TensorSpec((3, 3), "float64", 0.5, 2), TensorSpec((6,), "float64"),
                     3, 6, 4, 3,
                     [True, False, True])),
             Sample((TensorSpec((3, 4), "float64"), TensorSpec((3, 4), "float64"), TensorSpec((3, 1), "float64"),
                     TensorSpec((3, 1), "float64", 0.5, 2), TensorSpec((4,), "float64"), 3, 4, 1, 1,
                     [False, True, True]))),
    aten="default", tags=("core",))
def native_group_norm_backward(grad_out: Tensor, input: Tensor, mean: Tensor, rstd: Tensor, weight: Tensor | None,
                               N: int, C: int, HxW: int, group: int,
                               output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    """The gradients of ``native_group_norm`` for its input, weight and bias (those ``output_mask``
    asks for, else None), given the forward's ``mean`` and ``rstd`` of shape (N, group): PyTorch's
    ``aten::native_group_norm_backward``, in the steps of its CPU kernel (half types computed in
    float32).

    >>> import tensormodes as tm
    >>> x = tm.tensor([[1.0, 3.0]])
    >>> mean, rstd = tm.tensor([[2.0]]), tm.tensor([[1.0]])
    >>> tm.ops.aten.native_group_norm_backward.default(tm.tensor([[1.0, 0.0]]), x, mean, rstd, None, 1, 2, 1, 1,
    ...                                                [True, True, True])
    (tensor([[0., 0.]]), tensor([-1.,  0.]), tensor([1., 0.]))
    """
    x = input.astype(np.float32) if input.dtype in HALF_TYPES else input
    g = grad_out.astype(np.float32) if grad_out.dtype in HALF_TYPES else grad_out
    grouped = x.reshape(N, group, -1)
    mean, rstd = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
    grad_input = grad_weight = grad_bias = None
    dims = [0, *range(2, input.ndim)]
    with quiet():  # the steps of the composition: _affine_normalised_grad's over each group
        if output_mask[0]:
            gy = (g if weight is None else g * weight.reshape(-1, *[1] * (g.ndim - 2))).reshape(N, group, -1)
            count = gy.shape[-1]
            scale = gy.dtype.type(1 / count if count else 0.0)
            ds = _sum(gy * grouped, [-1], True)
            db = _sum(gy, [-1], True)
            b = (db * mean - ds) * rstd * rstd * rstd * scale
            c = -b * mean - db * rstd * scale
            grad_input = np.asarray((rstd * gy + b * grouped + c).reshape(input.shape), dtype=input.dtype)
        if output_mask[1]:
            xhat = (grouped - mean) * rstd
            grad_weight = _sum(g * xhat.reshape(input.shape), dims)
        if output_mask[2]:
            grad_bias = _sum(g, dims)
    return grad_input, grad_weight, grad_bias
