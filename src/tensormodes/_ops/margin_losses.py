"""Multi-class margin losses PyTorch computes natively (``torch._C._nn.multi_margin_loss`` and
``multilabel_margin_loss``): ``_multi_margin_loss`` and ``_multilabel_margin_loss``, behind
``nn.functional``'s functions of those names and ``nn.MultiMarginLoss`` / ``nn.MultiLabelMarginLoss``.

Both take a vector (one sample), a matrix (a batch of samples) or a 0-dim input; the reduction
is a string checked by the caller. A margin term counts only where it is positive (so a NaN
term counts nothing, as in PyTorch's kernels). The mean over an empty batch is NaN (PyTorch
returns an uninitialised value there).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import dtype_of, not_implemented, ops, quiet, scalar_type_name
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

_FLOATING = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def _check_input(input) -> tuple[int, int]:
    """The number of samples and of classes, after PyTorch's check of the input's shape."""
    ndim = input.ndim
    if not (ndim == 0 or (ndim == 1 and input.shape[0]) or (ndim == 2 and input.shape[1])):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if ndim <= 1:
        return 1, (input.shape[0] if ndim else 1)
    return input.shape


def _reduced_shape(reduction: str, frames_shape: tuple) -> tuple:
    return frames_shape if reduction == "none" else ()


def _reduce(losses: np.ndarray, reduction: str, shape: tuple, dtype: np.dtype) -> np.ndarray:
    if reduction == "none":
        return np.asarray(losses.reshape(shape), dtype=dtype)
    total = losses.sum()
    if reduction == "mean":
        with quiet():  # no sample: NaN
            total = total / losses.size
    return np.asarray(total, dtype=dtype)


def _per_sample(grad, reduction: str, frames: int):
    """The loss's gradient per sample, as a column: ``grad`` (one per sample for ``'none'``),
    divided by the number of samples for ``'mean'``."""
    if reduction == "none":
        return grad.reshape(frames, 1)
    return (grad / frames if reduction == "mean" else grad).expand(frames, 1)


# -- multi_margin_loss -------------------------------------------------------------------------------

def _check_multi_margin(input, target, weight) -> tuple[int, int]:
    frames, classes = _check_input(input)
    if target.ndim > 1 or target.size != frames:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{frames}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and (weight.ndim > 1 or weight.size != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
    if input.dtype not in _FLOATING:
        raise not_implemented("multi_margin_loss_cpu_kernel", dtype_of(input))
    for tensor, expected in ((target, np.dtype(np.int64)), (weight, input.dtype)):
        if tensor is not None and tensor.dtype != expected:
            raise RuntimeError(f"expected scalar type {scalar_type_name(dt.NP_TO_DTYPE[expected])} but found "
                               f"{scalar_type_name(dtype_of(tensor))}")
    return frames, classes


def _multi_margin_loss_meta(input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    frames, _ = _check_multi_margin(input, target, weight)
    frames_shape = (frames,) if target.ndim else ()
    return MetaArray(_reduced_shape(reduction, frames_shape), input.dtype)


def _multi_margin_loss_grad(grad, input, target, p, margin, weight, reduction, needs_input_grad):
    # (PyTorch refuses a weight that requires grad; the table op differentiates it all the same.)
    frames, classes = (1, input.numel()) if input.dim() <= 1 else tuple(input.shape)
    x = input.reshape(frames, classes)
    labels = target.reshape(frames, 1)
    z = x - x.gather(1, labels) + margin
    active = (z > 0) & (ops.arange(classes, device=input.device) != labels)
    scale = _per_sample(grad, reduction, frames) / classes
    grad_input = grad_weight = None
    if needs_input_grad[0]:
        terms = (z * 2 if p == 2 else ops.ones_like(z)).where(active, 0.0) * scale
        if weight is not None:
            terms = terms * weight[labels]
        grad_input = (terms - ops.zeros_like(terms).scatter(1, labels, terms.sum(1, keepdim=True))).reshape(input.shape)
    if weight is not None and needs_input_grad[2]:
        per_sample = ((z * z if p == 2 else z).where(active, 0.0) * scale).sum(1)
        grad_weight = ops.zeros_like(weight).index_add(0, labels.reshape(-1), per_sample.to(weight.dtype))
    return grad_input, None, grad_weight


_SCORES = TensorSpec((4, 5), "float32", -1, 1)
_LABELS = TensorSpec((4,), "int64", 0, 4)


@op(grad=_multi_margin_loss_grad, node="multi_margin_loss", meta=rule(_multi_margin_loss_meta),
    samples=(Sample((_SCORES, _LABELS)), Sample((_SCORES, _LABELS), {"reduction": "none"}),
             Sample((TensorSpec((4, 5), "float64", -1, 1), _LABELS, 2, 0.5, TensorSpec((5,), "float64", 0.5, 2),
                     "sum")),
             Sample((TensorSpec((5,), "float32", -1, 1), TensorSpec((), "int64", 0, 4)), {"reduction": "none"}),
             Sample((TensorSpec((5,), "float32", -1, 1), TensorSpec((1,), "int64", 0, 4)), {"reduction": "none"}),
             Sample((TensorSpec((), "float32"), TensorSpec((), "int64", 0, 0))),
             Sample((TensorSpec((0, 3)), TensorSpec((0,), "int64")), {"reduction": "none"})),
    errors=(Sample((TensorSpec((2, 0)), TensorSpec((2,), "int64", 0, 0))),
            Sample((TensorSpec((2, 3, 4)), TensorSpec((2,), "int64", 0, 0))),
            Sample((TensorSpec((2, 3)), TensorSpec((1,), "int64", 0, 0))),
            Sample((TensorSpec((2, 3)), TensorSpec((2,), "float32"))),
            Sample((TensorSpec((2, 3), "int64"), TensorSpec((2,), "int64", 0, 0))),
            Sample((TensorSpec((2, 3), "float16"), TensorSpec((2,), "int64", 0, 0))),
            Sample((TensorSpec((2, 3)), TensorSpec((2,), "int64", 0, 0), 1, 1.0, TensorSpec((2,)))),
            Sample((TensorSpec((2, 3)), TensorSpec((2,), "int64", 0, 0), 1, 1.0, TensorSpec((3,), "float64")))),
    aten="multi_margin_loss.default", schema={"p": "Scalar=1", "margin": "Scalar=1", "reduction": "int=1"})
def _multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                       reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss of each sample: the mean over the classes ``j`` other than
    its target ``y`` of ``max(0, margin - x[y] + x[j]) ** p``, times ``weight[y]``; reduced.
    PyTorch's ``torch._C._nn.multi_margin_loss`` (node ``MultiMarginLossBackward0``).

    >>> import tensormodes as tm
    >>> tm._multi_margin_loss(tm.tensor([[0.1, 0.2, 0.4, 0.8]]), tm.tensor([3]))
    tensor(0.3250)
    """
    frames, classes = _check_multi_margin(input, target, weight)
    x = input.reshape(frames, classes)
    labels = target.reshape(frames, 1)
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise RuntimeError("target out of range")
    with quiet():  # infinite scores: inf - inf is NaN, which counts nothing
        z = margin - np.take_along_axis(x, labels, 1) + x
        terms = np.where((z > 0) & (np.arange(classes) != labels), z if p == 1 else z * z, 0)
        if weight is not None:
            terms = terms * weight.reshape(-1)[labels]
        losses = terms.sum(axis=1) / classes
    return _reduce(losses, reduction, (frames,) if target.ndim else (), input.dtype)


# -- multilabel_margin_loss --------------------------------------------------------------------------

def _check_multilabel_margin(input, target) -> tuple[int, int]:
    frames, classes = _check_input(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    if target.size:
        _check_label_range(target, classes)
    if input.dtype not in _FLOATING:
        raise not_implemented("multilabel_margin_loss_forward_out_frame", dtype_of(input))
    if target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_type_name(dtype_of(target))}")
    return frames, classes


def _check_label_range(target, classes: int) -> None:
    """PyTorch's range check, before any dtype check: the target's minimum and maximum, read as
    int64 (a float truncated; NaN, inf or beyond int64 refused), within -1 .. classes - 1."""
    if target.dtype.kind == "c":
        raise not_implemented("min_all", dtype_of(target))
    if type(target) is MetaArray:
        return
    for extreme, in_range in ((target.min(), lambda v: v >= -1), (target.max(), lambda v: v < classes)):
        if target.dtype.kind not in "iub":
            extreme = float(extreme)
            if not math.isfinite(extreme) or abs(extreme) >= 2.0**63:
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
        if not in_range(int(extreme)):
            raise RuntimeError("argument #2 'target' is out of range")


def _multilabel_margin_loss_meta(input, target, reduction="mean"):
    _check_multilabel_margin(input, target)
    frames_shape = (input.shape[0],) if input.ndim == 2 else ()
    return MetaArray(_reduced_shape(reduction, frames_shape), input.dtype), MetaArray(input.shape, input.dtype)


def _multilabel_margin_loss_grad(grad, input, reduction, target_counts):
    frames, classes = (1, input.numel()) if input.dim() <= 1 else tuple(input.shape)
    x = input.reshape(frames, classes)
    counts = target_counts.reshape(frames, classes)
    # pairs[n, c, i]: the term of target c against non-target i is positive
    pairs = ((x.unsqueeze(1) - x.unsqueeze(2) + 1) > 0) & (counts > 0).unsqueeze(2) & (counts == 0).unsqueeze(1)
    weights = pairs.to(x.dtype) * counts.unsqueeze(2)
    scale = _per_sample(grad, reduction, frames) / classes
    grad_input = (weights.sum(1) - weights.sum(2)) * scale
    return grad_input.reshape(input.shape), None


@op(grad=_multilabel_margin_loss_grad, saves=("target_counts",), node="multilabel_margin_loss",
    meta=rule(_multilabel_margin_loss_meta),
    samples=(Sample((_SCORES, TensorSpec((4, 5), "int64", -1, 4))),
             Sample((_SCORES, TensorSpec((4, 5), "int64", -1, 4)), {"reduction": "none"}),
             Sample((TensorSpec((3, 4), "float64", -1, 1), TensorSpec((3, 4), "int64", -1, 3)), {"reduction": "sum"}),
             Sample((TensorSpec((5,), "float32", -1, 1), TensorSpec((5,), "int64", -1, 4)), {"reduction": "none"}),
             Sample((TensorSpec((), "float32"), TensorSpec((), "int64", 0, 0))),
             Sample((TensorSpec((0, 3)), TensorSpec((0, 3), "int64")), {"reduction": "none"})),
    errors=(Sample((TensorSpec((2, 0)), TensorSpec((2, 0), "int64"))),
            Sample((TensorSpec((2, 3)), TensorSpec((2, 2), "int64", 0, 1))),
            Sample((TensorSpec((2, 3)), TensorSpec((2, 3), "float32"))),
            Sample((TensorSpec((2, 3), "float16"), TensorSpec((2, 3), "int64", 0, 1)))),
    aten="multilabel_margin_loss_forward.default",
    schema={"reduction": "int reduction=", "(returns)": "Tensor output, Tensor is_target"})
def _multilabel_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss of each sample: ``target`` lists its classes, ended by the
    first ``-1``; the loss sums ``max(0, 1 - (x[c] - x[i]))`` over those classes ``c`` and the
    classes ``i`` not listed, divided by the number of classes; reduced. PyTorch's
    ``torch._C._nn.multilabel_margin_loss`` (node ``MultilabelMarginLossBackward0``).

    >>> import tensormodes as tm
    >>> tm._multilabel_margin_loss(tm.tensor([[0.1, 0.2, 0.4, 0.8]]), tm.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    frames, classes = _check_multilabel_margin(input, target)
    labels = target.reshape(frames, classes)
    listed = np.cumprod(labels != -1, axis=1).astype(bool)  # the entries before the first -1
    counts = np.zeros((frames, classes), np.int64)
    rows = np.broadcast_to(np.arange(frames)[:, None], labels.shape)
    np.add.at(counts, (rows[listed], labels[listed]), 1)
    x = input.reshape(frames, classes)
    with quiet():  # infinite scores: inf - inf is NaN, which counts nothing
        z = 1 - x[:, :, None] + x[:, None, :]  # z[n, c, i]: target c against class i
        terms = np.where((z > 0) & (counts[:, None, :] == 0), z, 0)
        losses = np.where(counts[:, :, None] > 0, terms * counts[:, :, None], 0).sum(axis=(1, 2)) / classes
    result = _reduce(losses, reduction, (frames,) if input.ndim == 2 else (), input.dtype)
    return result, counts.astype(input.dtype).reshape(input.shape)
