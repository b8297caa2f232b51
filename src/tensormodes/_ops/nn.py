"""Neural-network ops that PyTorch implements natively in ``torch.nn.functional``:
``linear`` and ``nll_loss``.

They are single ops (one kernel, one gradient formula) rather than compositions,
so a training step records few nodes; ``nn.functional`` exposes them as they are
and builds ``cross_entropy`` on ``log_softmax`` and ``nll_loss``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._common import array_type_name
from ._registry import Sample, TensorSpec, op

if TYPE_CHECKING:
    from .._tensor import Tensor

def _shape_text(shape) -> str:
    return "x".join(str(d) for d in shape)


def _linear_grad(grad, input, weight):
    # The bias is not a parameter: its gradient is ``grad`` itself, so it need not be saved.
    if weight.dim() == 1:
        return grad.unsqueeze(-1) * weight, grad.unsqueeze(-1) * input, grad
    # Only the gradients some input needs: a first layer's input (the data) needs none.
    grad_input = grad.matmul(weight) if input.requires_grad else None
    grad_weight = None
    if weight.requires_grad:
        if grad.dim() == 2:
            grad_weight = grad.t().matmul(input)
        else:  # batch dimensions flattened into the rows
            rows = grad.reshape(-1, weight.shape[0])
            grad_weight = rows.t().matmul(input.reshape(-1, weight.shape[1]))
    return grad_input, grad_weight, grad


@op(namespace="tensormodes.nn.functional", grad=_linear_grad, samples=(
    Sample((TensorSpec((4, 3)), TensorSpec((2, 3)), TensorSpec((2,)))),
    Sample((TensorSpec((3,)), TensorSpec((2, 3)))),
    Sample((TensorSpec((2, 4, 3), "float64"), TensorSpec((5, 3), "float64"), TensorSpec((5,), "float64"))),
    Sample((TensorSpec((3,)), TensorSpec((3,)), TensorSpec(())))))
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: the affine map of a fully connected layer.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.linear(tm.ones(1, 2), tm.ones(3, 2), tm.zeros(3)).tolist()
    [[2.0, 2.0, 2.0]]
    """
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != input.dtype):
        other = weight if input.dtype != weight.dtype else bias
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {array_type_name(input)} and "
                           f"{array_type_name(other)}")
    if input.ndim == 0 or weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): input must be at least 1-D and weight 1-D or 2-D, got {input.ndim}-D and "
                           f"{weight.ndim}-D")
    if weight.ndim == 1 and input.ndim > 1:
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    if input.shape[-1] != weight.shape[-1]:
        rows = int(np.prod(input.shape[:-1], dtype=np.int64)) if input.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{_shape_text(weight.shape[::-1])})")
    result = np.matmul(input, weight.T)
    if bias is not None:
        if type(result) is np.ndarray and bias.ndim == 1 and result.ndim and bias.shape[0] == result.shape[-1]:
            result += bias  # the common (out_features,) bias: added into the fresh product, no new array
        else:
            result = result + bias
    return np.asarray(result)


def _reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "sum" if size_average is False else "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _nll_loss_grad(grad, input, target, weight, size_average, ignore_index, reduce, reduction):
    # The result is not saved (PyTorch does not save it either): only the rare weight
    # gradient needs it, and recomputes it.
    mode = _reduction(size_average, reduce, reduction)
    class_dim = 1 if input.dim() >= 2 else 0
    # Targets get their class dimension (size 1) first: scatter wants it, and every
    # per-target value computed from them then has it too.
    target = target.unsqueeze(class_dim)
    if mode == "none":
        grad = grad.unsqueeze(class_dim)
    keep = target != ignore_index
    safe = target.masked_fill(~keep, 0)
    per_target = keep.to(grad.dtype) if weight is None else weight[safe] * keep
    total = per_target.sum() if mode == "mean" else None
    scale = per_target * (grad / total) if mode == "mean" else per_target * grad
    grad_input = grad.new_zeros(input.shape).scatter(class_dim, safe, -scale)
    grad_weight = None
    if weight is not None and weight.requires_grad:
        # Beyond PyTorch, which refuses a weight that requires grad: d loss / d weight[c].
        picked = input.gather(class_dim, safe)
        per_element = -picked * keep
        if mode == "mean":
            result = (per_element * per_target).sum() / total
            per_element = (per_element - result * keep) * (grad / total)
        else:
            per_element = per_element * grad
        grad_weight = weight.new_zeros(weight.shape).scatter_add(0, safe.reshape(-1), per_element.reshape(-1))
    return grad_input, None, grad_weight


@op(namespace="tensormodes.nn.functional", grad=_nll_loss_grad, samples=(
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2))),
    Sample((TensorSpec((4, 3), "float64"), TensorSpec((4,), "int64", 0, 2)), {"reduction": "sum"}),
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2)), {"reduction": "none"}),
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2), TensorSpec((3,), "float32", 0.5, 2))),
    Sample((TensorSpec((3,)), TensorSpec((), "int64", 0, 2))),
    Sample((TensorSpec((2, 3, 4)), TensorSpec((2, 4), "int64", 0, 2))),
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2)), {"ignore_index": 1})))
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` class indices under log-probabilities ``input``
    (classes in dim 1, or dim 0 for unbatched input).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.nll_loss(tm.tensor([[-1.0, -2.0], [-3.0, -0.5]]), tm.tensor([0, 1])).item()
    0.75
    """
    mode = _reduction(size_average, reduce, reduction)
    if target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {array_type_name(target)}")
    class_dim = 1 if input.ndim >= 2 else 0
    batch_shape = input.shape[:class_dim] + input.shape[class_dim + 1:]
    if target.shape != batch_shape:
        if input.ndim >= 2 and target.ndim and target.shape[0] != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({target.shape[0]}).")
        raise RuntimeError(f"expected target of shape {list(batch_shape)}, got {list(target.shape)}")
    classes = input.shape[class_dim]
    keep = target != ignore_index
    # One reduction checks both bounds when every target is valid: as unsigned numbers,
    # negative targets are huge.
    if target.size and np.maximum.reduce(target.view(np.uint64), axis=None) >= classes:
        kept = target[keep]
        bad = kept[(kept < 0) | (kept >= classes)]
        if bad.size:
            raise IndexError(f"Target {bad[0]} is out of bounds.")
    if weight is not None and weight.shape != (classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    safe = np.where(keep, target, 0)
    if input.ndim == 2:  # (batch, classes): plain indexing, without NumPy's Python-level helpers
        picked = input[np.arange(input.shape[0]), safe]
    else:
        picked = np.take_along_axis(input, np.expand_dims(safe, class_dim), class_dim).squeeze(class_dim)
    per_target = keep.astype(input.dtype) if weight is None else weight[safe] * keep
    losses = -picked * per_target
    if mode == "none":
        return np.asarray(losses, dtype=input.dtype)
    total = losses.sum(dtype=input.dtype)
    if mode == "sum":
        return np.asarray(total)
    count = per_target.sum(dtype=input.dtype)
    if weight is None and count:
        # Dividing by a positive count of targets cannot warn: no errstate (a slow context manager).
        return np.asarray(total / count, dtype=input.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / count, dtype=input.dtype)
