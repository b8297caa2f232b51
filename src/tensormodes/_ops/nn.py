"""Neural-network ops that PyTorch implements natively in ``torch.nn.functional``:
``linear`` and ``nll_loss``, and ``nll_loss``'s backward op ``_nll_loss_backward``; and
``_cross_entropy_loss`` (``log_softmax`` and ``nll_loss`` fused) with its backward op
``_cross_entropy_loss_backward``.

They are single ops (one kernel, one gradient formula) rather than compositions,
so a training step records few nodes; ``nn.functional`` exposes the public ones as
they are, and ``cross_entropy`` runs ``_cross_entropy_loss`` in its common case. Each
gradient is one call, to a backward op, as in PyTorch's derivatives.yaml: the
backward pass pays dispatch once, not once per step of a composed formula.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray, contiguous_strides
from .._tensor_base import zeros
from . import activation as _activation
from ._half_losses import _half_nll_total, half_softmax_less_one_hot, half_weight_total
from ._samples import SCALAR
from .backward_ops import REDUCTIONS
from .common import (
    HALF_TYPES,
    array_type_name,
    binary,
    check_same_shape_or_broadcast,
    cpp_type_name,
    dtype_of,
    no_complex_autograd,
    not_implemented,
    ops,
    quiet,
    scalar_type_name,
    shape_text,
)
from .common import conjugate as _conj
from .losses import cross_entropy_decomposition, nll_loss_decomposition
from .meta_rules import probe, rule
from .products import times_transposed
from .registry import Sample, Tensor, TensorSpec, op
from .shape import reshaped


def _linear_grad(grad, input, weight, input_shape, weight_shape, needs_input_grad):
    # The bias is not a parameter: its gradient is ``grad`` itself, so it need not be saved.
    if grad.is_complex():  # complex operands' gradients use their conjugates (one check: linear takes one dtype)
        input, weight = _conj(input), _conj(weight)
    if len(weight_shape) == 1:
        return grad.unsqueeze(-1) * weight, grad.unsqueeze(-1) * input, grad
    # Only the gradients some input needs: a first layer's input (the data) needs none.
    grad_input = grad.matmul(weight) if needs_input_grad[0] else None
    grad_weight = None
    if needs_input_grad[1]:
        if len(input_shape) == 2:
            grad_weight = grad.t().matmul(input)
        else:  # batch dimensions flattened into the rows
            count = math.prod(input_shape[:-1])  # not -1: a weight without rows leaves it ambiguous
            rows = grad.reshape(count, weight_shape[0])
            grad_weight = rows.t().matmul(input.reshape(count, weight_shape[1]))
    # The bias's gradient is ``grad`` summed over the rows (the engine would sum it too, later).
    grad_bias = grad.sum(0) if needs_input_grad[2] and len(input_shape) == 2 else grad
    return grad_input, grad_weight, grad_bias


def _fused_linear(input, weight, bias) -> bool:
    """Whether PyTorch's ``linear`` runs one ``addmm`` (a bias with a 2-D input; or a contiguous input
    with a contiguous bias that is 1-D once squeezed) rather than ``matmul`` and then ``add_(bias)``:
    the two differ in their checks."""
    if bias is None:
        return False
    if input.ndim == 2:
        return True
    fusable = (bias.ndim == 1 or sum(size != 1 for size in bias.shape) == 1) and _is_contiguous(bias)
    return fusable and _is_contiguous(input)


def _is_contiguous(array) -> bool:
    if type(array) is MetaArray:  # PyTorch's rule: strides of dimensions of size 1 do not matter
        expected = contiguous_strides(array.shape)
        return all(size == 1 or stride == want
                   for size, stride, want in zip(array.shape, array.elem_strides, expected))
    return array.flags.c_contiguous


def _check_linear(input, weight, bias) -> tuple[int, ...]:
    """``linear``'s checks of dtypes and shapes, in the order and words of the ops PyTorch's composite
    runs (metadata only: the meta rule runs them too); the result's shape."""
    if input.ndim == 0 or weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): input must be at least 1-D and weight 1-D or 2-D, got {input.ndim}-D and "
                           f"{weight.ndim}-D")
    fused = _fused_linear(input, weight, bias)
    if fused:  # addmm checks dtypes before shapes, matmul after
        for name, operand in (("self", bias), ("mat1", input)):
            if operand.dtype != weight.dtype:
                raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {array_type_name(operand)} and "
                                   f"{array_type_name(weight)}")
        if weight.ndim == 1:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    if input.shape[-1] != weight.shape[-1]:
        rows = math.prod(input.shape[:-1]) if input.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{shape_text(weight.shape[::-1])})")
    if not fused and input.dtype != weight.dtype:  # matmul's ops: mm, dot or mv
        if weight.ndim == 2:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_type_name(dtype_of(input))} "
                               f"!= {cpp_type_name(dtype_of(weight))}")
        if input.ndim == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {array_type_name(input)} "
                               f"and {array_type_name(weight)}")
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {array_type_name(weight)}, "
                           f"{array_type_name(input)}, and {array_type_name(weight)}")
    shape = tuple(input.shape[:-1]) + tuple(weight.shape[:-1])
    if bias is None:
        return shape
    if fused:  # addmm expands the bias to the (rows, out_features) product
        if bias.ndim == 1 and (bias.shape[0] == weight.shape[0] or bias.shape[0] == 1):
            return shape  # the usual (out_features,) bias
        target = (math.prod(input.shape[:-1]), weight.shape[0])
        if bias.ndim > 2:
            raise RuntimeError(f"expand(torch.{array_type_name(bias)}Tensor{{{list(bias.shape)}}}, "
                               f"size={list(target)}): the number of sizes provided (2) must be greater or equal to "
                               f"the number of dimensions in the tensor ({bias.ndim})")
        for dim, size in enumerate(bias.shape, start=2 - bias.ndim):
            if size != target[dim] and size != 1:
                raise RuntimeError(f"The expanded size of the tensor ({target[dim]}) must match the existing size "
                                   f"({size}) at non-singleton dimension {dim}.  Target sizes: {list(target)}.  "
                                   f"Tensor sizes: {list(bias.shape)}")
        return shape
    # add_ into the product: the bias may not grow it, nor need a wider dtype category
    broadcast = check_same_shape_or_broadcast(shape, bias.shape)
    if broadcast != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}")
    computed = dt.result_dtype([MetaArray(shape, input.dtype), bias])
    if not dt.can_cast(computed, dtype_of(input)):
        raise RuntimeError(f"result type {scalar_type_name(computed)} can't be cast to the desired output type "
                           f"{array_type_name(input)}")
    return shape


def _linear_meta(input, weight, bias=None):
    return MetaArray(_check_linear(input, weight, bias), input.dtype)


def _linear_node(input, weight, bias) -> str:
    """The last op PyTorch's ``linear`` composite records for these arguments."""
    if weight.dim() == 1:
        return "dot" if bias is None else "add"
    if input.dim() == 2:
        return "mm" if bias is None else "addmm"
    if bias is None:
        return "squeeze#4" if input.dim() == 1 else "_unsafe_view"  # matmul's last step
    # a contiguous input with a contiguous 1-D bias is folded into one addmm, then viewed back
    return "view" if bias.dim() == 1 and input.is_contiguous() and bias.is_contiguous() else "add"


def _linear_decomposition(input, weight, bias=None):
    """PyTorch's composite ``linear``, op for op: ``addmm`` for a 2-D input with a bias, a contiguous
    input folded into one ``addmm`` and viewed back, else ``matmul`` of ``weight.t()`` then ``add`` (out of
    place, as PyTorch's is for modes and subclasses)."""
    if weight.dim() != 2 or (dims := input.dim()) == 0 or input.shape[-1] != weight.shape[1] or \
            (bias is not None and ((bias_dims := bias.dim()) > 1 or bias.dtype != input.dtype)):
        return NotImplemented  # the fused op raises PyTorch's errors
    if bias is not None and dims == 2:
        return ops.addmm(bias, input, weight.t())
    if bias is not None and input.is_contiguous() and (dims == 3 or bias_dims == 1):
        flat = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        result = ops.addmm(bias, flat, weight.t())
        return result.view(*input.shape[:-1], result.shape[1])
    result = ops.matmul(input, weight.t())
    return result if bias is None else result + bias


@op(namespace="tensormodes.nn.functional", grad=_linear_grad, meta=rule(_linear_meta), node=_linear_node,
    decompose=_linear_decomposition, fused_grad_products=lambda *args: _linear_node(*args) == "addmm",
    errors=(Sample((TensorSpec((4, 3)), TensorSpec((2, 3), "float64"))),
            Sample((TensorSpec((4, 3)), TensorSpec((2, 4)))), Sample((TensorSpec(()), TensorSpec((2, 3)))),
            Sample((TensorSpec((2, 3)), TensorSpec((3,)), TensorSpec((2,)))),
            Sample((TensorSpec((4, 3)), TensorSpec((2, 3)), TensorSpec((3,)))),
            Sample((TensorSpec((3,)), TensorSpec((2, 3)), TensorSpec((), "complex64"))),
            Sample((TensorSpec((2, 2, 2, 3)), TensorSpec((2, 3)), TensorSpec((3, 2, 2)))),
            Sample((TensorSpec((2, 2, 2, 3)), TensorSpec((2, 3)), TensorSpec((1, 2), "float64")))),
    samples=(
    Sample((TensorSpec((4, 3)), TensorSpec((2, 3)), TensorSpec((2,)))),
    Sample((TensorSpec((3,)), TensorSpec((2, 3)))),
    Sample((TensorSpec((2, 4, 3), "float64"), TensorSpec((5, 3), "float64"), TensorSpec((5,), "float64"))),
    Sample((TensorSpec((3,)), TensorSpec((3,)), TensorSpec(()))),
    Sample((TensorSpec((2, 3)), TensorSpec((3,)))),
    Sample((TensorSpec((3,)), TensorSpec((2, 3)), TensorSpec((), "int32"))),
    Sample((TensorSpec((2, 2, 2, 3)), TensorSpec((2, 3)), TensorSpec((2, 2), "float64")))))
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: the affine map of a fully connected layer.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.linear(tm.ones(1, 2), tm.ones(3, 2), tm.zeros(3)).tolist()
    [[2.0, 2.0, 2.0]]
    """
    _check_linear(input, weight, bias)
    if input.dtype in HALF_TYPES:
        return _half_linear(input, weight, bias)
    result = times_transposed(input, weight)
    if bias is not None:
        if bias.dtype != result.dtype:  # only where PyTorch adds in place into the product
            result = np.asarray(result + bias).astype(result.dtype)
        elif result.ndim and bias.shape == result.shape[-bias.ndim:]:
            result += bias  # the common (out_features,) bias: added into the fresh product, no new array
        else:
            result = result + bias
    return np.asarray(result)


def _half_linear(input: np.ndarray, weight: np.ndarray, bias) -> np.ndarray:
    """``linear`` of float16 or bfloat16 operands as PyTorch computes it: products summed in float32;
    its fused ``addmm`` adds the bias before rounding once, its ``matmul`` then ``add_`` rounds twice
    (NumPy's own half matmul would round each step, and ml_dtypes' bfloat16 one gives float32)."""
    dtype = input.dtype
    product = np.matmul(input.astype(np.float32), weight.T.astype(np.float32))
    if bias is None:
        return np.asarray(product.astype(dtype))
    if bias.dtype == dtype and _fused_linear(input, weight, bias):
        return np.asarray((product + bias.astype(np.float32)).astype(dtype))
    rounded = product.astype(dtype)
    return np.asarray((rounded.astype(np.float32) + bias.astype(np.float32)).astype(dtype)
                      if bias.dtype in HALF_TYPES else np.asarray(rounded + bias).astype(dtype))


def legacy_reduction(size_average, reduce, stacklevel: int | None) -> str:
    """The reduction the deprecated ``size_average`` / ``reduce`` arguments (one at least given)
    stand for, with PyTorch's warning ``stacklevel`` frames above the caller (none if None)."""
    mode = "none" if reduce is False else "sum" if size_average is False else "mean"
    if stacklevel is not None:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{mode}' instead.",
                      UserWarning, stacklevel=stacklevel + 1)
    return mode


def _reduction(size_average, reduce, reduction: str, warn: bool = False) -> str:
    """The reduction, from the legacy ``size_average`` / ``reduce`` arguments when given (with
    PyTorch's deprecation warning if ``warn``: forward calls, not their gradients)."""
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce, 4 if warn else None)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


_NLL_INPUT_TYPES = frozenset(d._np for d in (dt.float16, dt.bfloat16, dt.float32, dt.float64))


def _nll_kernel(input: np.ndarray, backward: bool) -> str:
    """The name of PyTorch's nll_loss kernel for ``input`` (in its errors)."""
    if input.ndim > 2:
        return "nll_loss2d_backward_out_frame" if backward else "nll_loss2d_forward_out_frame"
    return "nll_loss_backward_out_frame" if backward else "nll_loss_out_frame"


def _check_nll_arguments(input: np.ndarray, target: np.ndarray, backward: bool) -> None:
    """PyTorch's checks of nll_loss's (or its backward's) input and target shapes and target dtype."""
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if input.ndim != 1 and (target.shape[0] if target.ndim else 0) != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")
    if target.dtype != np.int64 and target.dtype != np.uint8:
        if backward and input.ndim <= 2:
            raise RuntimeError(f"expected scalar type Long but found {array_type_name(target)}")
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {array_type_name(target)}")
    if input.ndim == 1 and target.ndim == 1 and target.size != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.size}")
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 2 and target.ndim == 0:  # PyTorch asks the 0-dim target for its batch size
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if backward and input.ndim == 1 and target.ndim == 1:
            # The forward squeezes such a target (of one element); PyTorch's backward gets it as given
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")
    elif input.ndim != 4 and target.shape[1:] != input.shape[2:]:
        raise RuntimeError(f"Expected target size {[input.shape[0], *input.shape[2:]]}, got {list(target.shape)}")
    elif input.ndim == 4 and target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                           f"dimension: {target.ndim}")


def every_target_counts(input: np.ndarray, target: np.ndarray, weight, ignore_index: int) -> bool:
    """Whether nll_loss's arguments are the common case: a (batch, classes) input of a type its
    kernels take, no weight, one int64 target per row, every target a class and none ignored."""
    return bool(input.ndim == 2 and weight is None and target.dtype == np.int64 and target.shape == input.shape[:1]
                and target.size and input.dtype in _NLL_INPUT_TYPES and not 0 <= ignore_index < input.shape[1]
                and np.maximum.reduce(target.view(np.uint64), axis=None) < input.shape[1])


def _counted(input: np.ndarray, target: np.ndarray, weight, ignore_index,
             backward: bool = False) -> tuple[tuple, tuple | None, np.ndarray, np.ndarray | None]:
    """PyTorch's checks of nll_loss's arguments (or its backward's), in its order; then the targets
    that count (are not ``ignore_index``), as ``(index, positions)`` for ``input`` with a batch
    dimension (one is put in front of an unbatched input): ``input[index]`` are their entries,
    ``index[1]`` the targets themselves, ``positions`` where they are in ``target`` (likewise
    batched) — or None when every target counts, and the index is then target-shaped. Last, the
    target and weight as the kernels use them (see ``_check_counted``).
    """
    if every_target_counts(input, target, weight, ignore_index):
        # in few steps (it runs for every loss and again for its gradient); anything else takes the path below
        return (np.arange(target.shape[0]), target), None, target, weight
    target, weight = _check_counted(input, target, weight, backward)
    given_target = target
    class_dim = 1 if input.ndim >= 2 else 0
    classes = input.shape[class_dim]
    if target.dtype == np.uint8:
        target = target.astype(np.int64)
    if not class_dim:
        target = target[None]
    # One reduction checks both bounds when every target is valid (as unsigned numbers,
    # negative targets are huge), and then shows that none is ignored unless ignore_index
    # names a class.
    valid = target.size and np.maximum.reduce(target.view(np.uint64), axis=None) < classes
    keep = None if valid and not 0 <= ignore_index < classes else target != ignore_index
    if not valid and target.size:
        kept = target[keep]
        bad = kept[(kept < 0) | (kept >= classes)]
        if bad.size:
            raise IndexError(f"Target {bad[0]} is out of bounds.")
    if keep is None:
        if target.ndim == 1:  # (batch, classes): the common case, without np.indices
            return (np.arange(target.shape[0]), target), None, given_target, weight
        rows, *rest = np.indices(target.shape, sparse=True)
        return (rows, target, *rest), None, given_target, weight
    positions = np.nonzero(keep)
    return (positions[0], target[positions], *positions[1:]), positions, given_target, weight


def _check_counted(input, target, weight, backward: bool) -> tuple:
    """``_counted``'s checks of shapes and dtypes (metadata only: meta rules run them too), in
    PyTorch's order. Returns the target and weight as the kernels use them: the one-element 1-D
    target of a 1-D input as a 0-dim one (PyTorch squeezes it), the weight of a spatial loss
    (more than 2-D input), which PyTorch only counts, flat."""
    _check_nll_arguments(input, target, backward)
    classes = input.shape[1 if input.ndim >= 2 else 0]
    if weight is not None:
        if input.ndim > 2:
            if weight.size != classes:
                raise RuntimeError("weight tensor should be defined either for all or no classes")
            weight = reshaped(weight, (classes,))
        elif weight.shape != (classes,):
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes "
                               f"but got weight tensor of shape: {list(weight.shape)}")
    if input.ndim == 4 and target.shape[1:] != input.shape[2:]:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    if input.dtype not in _NLL_INPUT_TYPES:
        raise not_implemented(_nll_kernel(input, backward), dt.NP_TO_DTYPE[input.dtype])
    if weight is not None and weight.dtype != input.dtype:  # the kernel reads it as input's type
        raise RuntimeError(f"expected scalar type {array_type_name(input)} but found {array_type_name(weight)}")
    if target.dtype == np.uint8 and input.ndim > 2:
        raise RuntimeError("expected scalar type Long but found Byte")
    if input.ndim == 1 and target.ndim == 1:
        target = reshaped(target, ())
    return target, weight


def _nll_loss_weight_grad(grad, input, target, weight, mode, ignore_index):
    """d (grad * nll_loss(input, target, weight)) / d weight, beyond PyTorch, which refuses a
    weight that requires grad. Recomputes the loss it needs (it is not saved)."""
    class_dim = 1 if input.dim() >= 2 else 0
    # Targets get their class dimension (size 1) first: scatter wants it, and every
    # per-target value computed from them then has it too.
    target = target.long().unsqueeze(class_dim)  # a Byte target would index as a mask
    if mode == "none":
        grad = grad.unsqueeze(class_dim)
    keep = target != ignore_index
    safe = target.masked_fill(~keep, 0)
    shape, weight = tuple(weight.shape), weight.reshape(-1)  # a spatial loss's weight may have any shape
    per_target = weight[safe] * keep
    per_element = -input.gather(class_dim, safe) * keep
    if mode == "mean":
        total = per_target.sum()
        result = (per_element * per_target).sum() / total
        per_element = (per_element - result * keep) * (grad / total)
    else:
        per_element = per_element * grad
    return weight.new_zeros(weight.shape).scatter_add(0, safe.reshape(-1), per_element.reshape(-1)).reshape(shape)


def _nll_loss_grad(grad, input, target, weight, size_average, ignore_index, reduce, reduction, needs_input_grad):
    # The result is not saved (PyTorch does not save it either): only the rare weight
    # gradient needs it, and recomputes it.
    mode = _reduction(size_average, reduce, reduction)
    grad_input = ops._nll_loss_backward(grad, input, target, weight, mode, ignore_index)
    grad_weight = None
    if needs_input_grad[2]:
        grad_weight = _nll_loss_weight_grad(grad, input, target, weight, mode, ignore_index)
    return grad_input, None, grad_weight


# -- meta rules: the kernels' checks of shapes and dtypes, then the result's metadata ----------------
# (the checks of values, such as targets out of range, need data: meta tensors skip them, as PyTorch's do)

def _nll_loss_meta(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                   reduction="mean"):
    mode = _reduction(size_average, reduce, reduction, warn=True)
    target, weight = _check_counted(input, target, weight, False)
    return MetaArray(target.shape if mode == "none" else (), input.dtype)


def _nll_loss_backward_meta(grad_output, input, target, weight=None, reduction="mean", ignore_index=-100):
    mode = _reduction(None, None, reduction)
    target, weight = _check_counted(input, target, weight, True)
    _check_grad_output(grad_output, target, mode)
    return MetaArray(input.shape, input.dtype)


def _cross_entropy_loss_meta(input, target, weight=None, reduction="mean", ignore_index=-100):
    # log_softmax's dtype and errors from a one-element probe; the saved log-probabilities are
    # the second result, as the kernel returns them (see saves=).
    if input.shape == target.shape:
        dim = _check_probability_target(input, target, weight, ignore_index)
        mode = _reduction(None, None, reduction)
        log_probs = MetaArray(input.shape, _activation.log_softmax(probe(input), dim).dtype)
        operands = [log_probs, target] + ([] if weight is None else [weight])  # (promotion reads dtypes, ndim)
        shape = input.shape[:dim] + input.shape[dim + 1:] if mode == "none" else ()
        return MetaArray(shape, dt.result_dtype(operands)._np), log_probs
    log_probs = MetaArray(input.shape, _activation.log_softmax(probe(input), _class_dim(input)).dtype)
    return _nll_loss_meta(log_probs, target, weight, None, ignore_index, None, reduction), log_probs


def _cross_entropy_loss_backward_meta(grad_output, log_probs, target, weight=None, reduction="mean",
                                      ignore_index=-100):
    mode = _reduction(None, None, reduction)
    _check_softmax_backward_dtype(log_probs, _class_dim(log_probs))
    target, weight = _check_counted(log_probs, target, weight, True)
    _check_grad_output(grad_output, target, mode)
    return MetaArray(log_probs.shape, log_probs.dtype)


def _binary_cross_entropy_meta(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    mode = _reduction(size_average, reduce, reduction, warn=True)
    _check_binary_cross_entropy(input, target, weight)
    _check_weight_cast(input, weight)
    return MetaArray(input.shape if mode == "none" else (), input.dtype)


@op(namespace="tensormodes.nn.functional", grad=_nll_loss_grad, meta=rule(_nll_loss_meta),
    decompose=nll_loss_decomposition,
    errors=(Sample((TensorSpec((4, 3)), TensorSpec((3,), "int64", 0, 2))),
            Sample((TensorSpec((4, 3)), TensorSpec((4,), "float32"))),
            Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2), TensorSpec((2,))))),
    samples=(
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2))),
    Sample((TensorSpec((4, 3), "float64"), TensorSpec((4,), "int64", 0, 2)), {"reduction": "sum"}),
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2)), {"reduction": "none"}),
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2), TensorSpec((3,), "float32", 0.5, 2))),
    Sample((TensorSpec((3,)), TensorSpec((), "int64", 0, 2))),
    Sample((TensorSpec((2, 3, 4)), TensorSpec((2, 4), "int64", 0, 2))),
    Sample((TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2)), {"ignore_index": 1})),
    schema={"(order)": "self target weight reduction ignore_index", "ignore_index": "SymInt", "reduction": "int=1",
            "size_average": None, "reduce": None})
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` class indices under log-probabilities ``input``
    (classes in dim 1, or dim 0 for unbatched input).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.nll_loss(tm.tensor([[-1.0, -2.0], [-3.0, -0.5]]), tm.tensor([0, 1])).item()
    0.75
    """
    mode = _reduction(size_average, reduce, reduction, warn=True)
    index, positions, target, weight = _counted(input, target, weight, ignore_index)
    picked = (input if input.ndim >= 2 else input[None])[index]
    per_target = None if weight is None else weight[index[1]]
    if mode != "none" and input.dtype in HALF_TYPES and picked.size:
        return _half_nll_total(picked, per_target, positions, target, mode)
    if per_target is None and mode != "none" and picked.size:
        # Unweighted and reduced: negate the sum rather than every entry (one array op less).
        total = 0 - np.add.reduce(picked, None, input.dtype)  # 0 - s: a zero sum is +0, as in PyTorch
        return np.asarray(total if mode == "sum" else total / picked.size, dtype=input.dtype)
    losses = -picked if per_target is None else -picked * per_target
    if mode == "none":
        if positions is not None:  # ignored targets lose nothing
            every = np.zeros(target.shape or (1,), losses.dtype)
            every[positions] = losses
            losses = every
        return np.asarray(losses.reshape(target.shape), dtype=input.dtype)
    total = np.add.reduce(losses, None, input.dtype)
    if mode == "sum":
        return np.asarray(total)
    count = losses.size if per_target is None else per_target.sum(dtype=input.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / count, dtype=input.dtype)


def _nll_loss_backward_grad(grad, grad_output, target, weight, reduction, ignore_index, needs_input_grad):
    # The op is linear in grad_output, and nll_loss is its transpose; its result does not
    # depend on input's values at all (zero gradient, as in PyTorch). For a weight that requires
    # grad: <grad, op(grad_output)> = grad_output * nll_loss(grad), so it is nll_loss's weight gradient.
    grad_grad_output = ops.nn.functional.nll_loss(
        grad, target, weight, ignore_index=ignore_index, reduction=reduction)
    grad_weight = None
    if needs_input_grad[3]:
        grad_weight = _nll_loss_weight_grad(grad_output, grad, target, weight, reduction, ignore_index)
    # input's zero gradient is made without an op, as PyTorch's zero tensor: no dispatch mode sees it
    return grad_grad_output, zeros(tuple(grad.shape), dt.NP_TO_DTYPE[grad._data.dtype], grad), None, grad_weight


@op(grad=_nll_loss_backward_grad, meta=rule(_nll_loss_backward_meta),
    errors=(Sample((TensorSpec((3,)), TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2))),
            Sample((TensorSpec((3,)), TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2)), {"reduction": "none"}),
            Sample((TensorSpec(()), TensorSpec((4, 3), "int64"), TensorSpec((4,), "int64", 0, 2)))),
    samples=(
    Sample((TensorSpec(()), TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2))),
    Sample((TensorSpec((), "float64"), TensorSpec((4, 3), "float64"), TensorSpec((4,), "int64", 0, 2)),
           {"reduction": "sum"}),
    Sample((TensorSpec((4,)), TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2)), {"reduction": "none"}),
    Sample((TensorSpec(()), TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2),
            TensorSpec((3,), "float32", 0.5, 2))),
    Sample((TensorSpec((4,)), TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2),
            TensorSpec((3,), "float32", 0.5, 2), "none", 1)),
    Sample((TensorSpec(()), TensorSpec((3,)), TensorSpec((), "int64", 0, 2))),
    Sample((TensorSpec(()), TensorSpec((3,)), TensorSpec((), "int64", 1, 1)), {"ignore_index": 1}),
    Sample((TensorSpec(()), TensorSpec((2, 3, 4)), TensorSpec((2, 4), "int64", 0, 2))),
    Sample((TensorSpec((2, 4)), TensorSpec((2, 3, 4)), TensorSpec((2, 4), "int64", 0, 2)),
           {"reduction": "none", "ignore_index": 0}),
    Sample((TensorSpec(()), TensorSpec((4, 3)), TensorSpec((4,), "int64", 0, 2)), {"ignore_index": 1}),
    Sample((TensorSpec(()), TensorSpec((4, 3)), TensorSpec((4,), "int64", 1, 1)), {"ignore_index": 1}),
    Sample((TensorSpec((), "bfloat16"), TensorSpec((4, 3), "bfloat16"), TensorSpec((4,), "int64", 0, 2)))))
def _nll_loss_backward(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None = None,
                       reduction: str = "mean", ignore_index: int = -100) -> Tensor:
    """The gradient of ``nll_loss(input, target, weight, reduction=reduction, ignore_index=ignore_index)``
    for ``input``, given the loss's gradient ``grad_output`` (target-shaped for ``reduction='none'``,
    else one element): zero but for each counted target's class, which gets
    ``-weight[class] * grad_output``, divided by the targets' total weight for ``'mean'``.

    PyTorch's ``aten::nll_loss_backward``, with ``reduction`` named as in ``nll_loss`` and the
    total weight recomputed rather than passed. Only ``input``'s shape and dtype matter (the
    result has both); its values do not.

    >>> import tensormodes as tm
    >>> tm._nll_loss_backward(tm.tensor(1.0), tm.zeros(2, 2), tm.tensor([0, 1]))
    tensor([[-0.5000,  0.0000],
            [ 0.0000, -0.5000]])
    """
    return nll_backward_values(grad_output, input, target, weight, _reduction(None, None, reduction), ignore_index)


def nll_backward_values(grad_output: np.ndarray, input: np.ndarray, target: np.ndarray, weight, mode: str,
                        ignore_index: int, total=None) -> np.ndarray:
    """``_nll_loss_backward``'s result; ``total``: the counted targets' total weight as the
    forward returned it (ATen's ``nll_loss_backward`` is given it), else computed here."""
    index, positions, target, weight = _counted(input, target, weight, ignore_index, backward=True)
    per_target = None if weight is None else weight[index[1]]
    scales = _target_scales(grad_output, input, target, mode, index, positions, per_target, total)
    return _nll_gradient(input, index, scales)


def _target_scales(grad_output: np.ndarray, input: np.ndarray, target: np.ndarray, mode: str, index: tuple,
                   positions: tuple | None, per_target: np.ndarray | None, total=None):
    """How much nll_loss's gradient takes off at each counted target (see ``_counted``):
    ``grad_output`` (its element for that target, for ``'none'``) times the target's weight,
    divided by the counted targets' total weight for ``'mean'``. A scalar when that is the
    same for every target, else one value per counted target. PyTorch's checks of
    ``grad_output`` first.
    """
    _check_grad_output(grad_output, target, mode)
    if mode == "none":
        scale = grad_output if input.ndim >= 2 else grad_output[None]
        if positions is not None:
            scale = scale[positions]
    else:
        scale = grad_output.reshape(())
    if mode == "mean":
        if total is None and per_target is not None and input.dtype in HALF_TYPES:
            total = np.asarray(half_weight_total(per_target, positions, target), input.dtype)
        elif total is None:
            total = index[1].size if per_target is None else per_target.sum(dtype=input.dtype)
        if not total:  # nothing counts (nothing is written), or the weights sum to 0: NaN, as in PyTorch
            with quiet():
                scale = scale / total
                return scale if per_target is None else per_target * scale
        scale = scale / total
    return scale if per_target is None else per_target * scale


def _check_grad_output(grad_output, target, mode: str) -> None:
    if mode == "none":
        if grad_output.shape != target.shape:
            raise RuntimeError(f"expected grad_output of shape {list(target.shape)}, got "
                               f"{list(grad_output.shape)}")
    elif grad_output.size != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {list(grad_output.shape)}")


def _nll_gradient(input: np.ndarray, index: tuple, scales) -> np.ndarray:
    """Zeros like ``input`` but ``-scales`` at ``index`` (see ``_counted``, ``_target_scales``)."""
    grad_input = np.zeros(input.shape, input.dtype)
    (grad_input if input.ndim >= 2 else grad_input[None])[index] = -scales
    return grad_input


# -- binary cross entropy ----------------------------------------------------------------------------

def _binary_cross_entropy_grad(grad, input, target, weight, size_average, reduce, reduction, needs_input_grad):
    # PyTorch's formulas: its backward op for the input (binary_cross_entropy_backward), and
    # -logit(input) for the target. The weight's gradient (the unweighted loss) is beyond PyTorch.
    mode, grad_input = _reduction(size_average, reduce, reduction), None
    if needs_input_grad[0]:
        grad_input = ops.ops.aten.binary_cross_entropy_backward.default(grad, input, target, weight, REDUCTIONS[mode])
    if mode == "mean" and (needs_input_grad[1] or needs_input_grad[2]):
        grad = grad / max(input.numel(), 1)
    if weight is not None and (needs_input_grad[1] or needs_input_grad[2]):
        grad = grad * weight
    grad_target = grad_weight = None
    if needs_input_grad[1]:
        grad_target = -grad * (input / (1 - input)).log()
    if needs_input_grad[2]:
        unweighted = ops.nn.functional.binary_cross_entropy(input, target, reduction="none")
        grad_weight = unweighted * (grad / weight)
    return grad_input, grad_target, grad_weight


_PROBABILITY = TensorSpec((2, 3), "float32", 0.05, 0.95)


@op(namespace="tensormodes.nn.functional", grad=_binary_cross_entropy_grad, meta=rule(_binary_cross_entropy_meta),
    errors=(Sample((_PROBABILITY, TensorSpec((3, 2), "float32", 0, 1))),
            Sample((_PROBABILITY, TensorSpec((2, 3), "float64", 0, 1))),
            Sample((_PROBABILITY, TensorSpec((2, 3), "float32", 0, 1), TensorSpec((4,)))),
            Sample((_PROBABILITY, TensorSpec((2, 3), "float32", 0, 1), TensorSpec((1, 2, 3)))),
            Sample((_PROBABILITY, TensorSpec((2, 3), "float32", 0, 1), TensorSpec((3,), "complex64")))),
    samples=(
    Sample((_PROBABILITY, TensorSpec((2, 3), "float32", 0, 1))),
    Sample((TensorSpec((4,), "float64", 0.05, 0.95), TensorSpec((4,), "float64", 0, 1)), {"reduction": "sum"}),
    Sample((_PROBABILITY, TensorSpec((2, 3), "float32", 0, 1), TensorSpec((3,), "float32", 0.5, 2), None, None,
            "none")),
    Sample((TensorSpec((), "float32", 0.05, 0.95), TensorSpec((), "float32", 0, 1))),
    Sample((TensorSpec((3,), "float16", 0.05, 0.95), TensorSpec((3,), "float16", 0, 1)))),
    schema={"reduction": "int=1", "size_average": None, "reduce": None})
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Binary cross entropy between probabilities ``input`` and ``target``, each term scaled by
    ``weight`` (broadcast to ``input``'s shape). The logarithms are clamped at -100, as in
    PyTorch, so probabilities of exactly 0 or 1 give finite losses.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> round(F.binary_cross_entropy(tm.tensor([0.5]), tm.tensor([1.0])).item(), 4)
    0.6931
    """
    mode = _reduction(size_average, reduce, reduction, warn=True)
    _check_binary_cross_entropy(input, target, weight)
    _check_probabilities(input, target)
    _check_weight_cast(input, weight)
    with quiet():
        # PyTorch's loop, step by step in the input's dtype (float16 rounds after each step):
        # (y - 1) * max(log1p(-x), -100) - y * max(log(x), -100). Its logarithms are the C
        # library's, which NumPy's float32 ones miss by an ulp more often than float64 ones rounded.
        wide = input.astype(np.float64) if input.dtype.itemsize < 8 else input
        log_q = np.maximum(np.log1p(-wide), -100).astype(input.dtype, copy=False)
        log_p = np.maximum(np.log(wide), -100).astype(input.dtype, copy=False)
        losses = (target - 1) * log_q - target * log_p
        if weight is not None:
            losses = losses * weight
    if mode == "none":
        return np.asarray(losses, dtype=input.dtype)
    # Sums of float16 / bfloat16 accumulate in float32; the mean of nothing is NaN.
    total = np.add.reduce(losses, axis=None, dtype=np.float32 if input.dtype.itemsize < 4 else None)
    with quiet():
        return np.asarray(total if mode == "sum" else total / total.dtype.type(losses.size), dtype=input.dtype)


def _check_probabilities(input: np.ndarray, target: np.ndarray) -> None:
    """PyTorch's loop checks each element's input, then its target, in order (NaN fails both)."""
    bad_input, bad_target = ~((input >= 0) & (input <= 1)), ~((target >= 0) & (target <= 1))
    if not (bad_input.any() or bad_target.any()):
        return
    first_input = np.argmax(bad_input.reshape(-1)) if bad_input.any() else bad_input.size
    first_target = np.argmax(bad_target.reshape(-1)) if bad_target.any() else bad_target.size
    which = "input" if first_input <= first_target else "target"
    raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def _check_binary_cross_entropy(input, target, weight) -> None:
    """``binary_cross_entropy``'s checks of shapes and dtypes (metadata only)."""
    if target.shape != input.shape:
        raise ValueError(f"Using a target size (tensormodes.Size({list(target.shape)})) that is different to the "
                         f"input size (tensormodes.Size({list(input.shape)})) is deprecated. Please ensure they have "
                         "the same size.")
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {array_type_name(target)} but expected {array_type_name(input)}")
    if weight is not None:
        shape = _broadcast_shapes_checked(target.shape, weight.shape)  # F.binary_cross_entropy expands the weight
        if shape != input.shape:
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")
    if input.dtype not in _NLL_INPUT_TYPES:
        raise not_implemented("binary_cross_entropy", dt.NP_TO_DTYPE[input.dtype])


def _check_weight_cast(input, weight) -> None:
    """PyTorch multiplies the losses by ``weight`` in place: a complex weight cannot be written."""
    if weight is not None and weight.dtype.kind == "c":
        computed = dt.result_dtype([input, weight])
        raise RuntimeError(f"result type {scalar_type_name(computed)} can't be cast to the desired output type "
                           f"{array_type_name(input)}")


def _broadcast_shapes_checked(*shapes) -> tuple[int, ...]:
    """``torch.broadcast_shapes``: the broadcast shape, or its RuntimeError naming the first size
    that does not fit the shape broadcast so far (from the last dimension of each shape)."""
    result = [1] * max(len(shape) for shape in shapes)
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == 1 or shape[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[i]} at {i}! Mismatching "
                                   f"argument at index {index} had tensormodes.Size({list(shape)}); but expected "
                                   f"shape should be broadcastable to {result}")
            result[i] = shape[i]
    return tuple(result)


# -- cross_entropy's common case, fused -------------------------------------------------------------
# F.cross_entropy with class-index targets and no label smoothing is log_softmax then nll_loss. As
# two ops it records two nodes and its gradient runs two backward ops (nll's, then log_softmax's),
# paying dispatch and recording twice each way; fused (PyTorch's torch._C._nn.cross_entropy_loss)
# it is one kernel, one node and one backward op.

def _class_dim(input) -> int:
    """PyTorch's class dimension: 0 of a 1-D input, else 1 (which a 0-dim input lacks)."""
    return 0 if input.ndim == 1 else 1


def _check_probability_target(input, target, weight, ignore_index) -> int:
    """PyTorch's checks of cross entropy with class probabilities (a target shaped as the input), in
    its order; the class dimension."""
    if not dtype_of(target).is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{array_type_name(target)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if input.ndim == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    dim = _class_dim(input)
    classes = input.shape[dim]
    if weight is not None and weight.shape != (classes,):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    return dim


def _class_shaped(weight, ndim: int, dim: int):
    """A per-class ``weight`` shaped to broadcast along dimension ``dim`` of ``ndim`` dimensions."""
    return weight.reshape((1,) * dim + (-1,) + (1,) * (ndim - dim - 1))


def _probability_loss(input, target, weight, reduction, dim):
    """Cross entropy with class probabilities ``target``, as PyTorch's composite computes it:
    ``-(log_softmax(input) * target * weight)`` summed over classes, in the operands' promoted dtype;
    ``'mean'`` divides the sum by the number of class vectors (NaN for an empty input). Also
    returns the log-probabilities."""
    log_probs = _activation.log_softmax(input, dim)
    product = binary(np.multiply, log_probs, target)
    if weight is not None:
        product = binary(np.multiply, product, _class_shaped(weight, input.ndim, dim))
    wide = np.float32 if product.dtype.itemsize < 4 else product.dtype  # half sums accumulate in float32
    if reduction == "none":
        return np.asarray(-np.add.reduce(product, dim, wide)).astype(product.dtype), log_probs
    total = -np.add.reduce(product, None, wide)
    if reduction == "mean":
        total = total / (input.size // input.shape[dim]) if input.size else np.nan
    return np.asarray(total).astype(product.dtype), log_probs


def _probability_grad(grad, input, target, weight, reduction, needs_input_grad):
    """The gradients of ``_probability_loss`` for the input, target and weight."""
    dim = _class_dim(input)
    log_probs = input.log_softmax(dim)
    class_weight = None if weight is None else _class_shaped(weight, input.dim(), dim)
    weighted = target if class_weight is None else target * class_weight
    if reduction == "none":
        grad = grad.unsqueeze(dim)
    elif reduction == "mean":
        grad = grad / max(input.numel() // input.shape[dim], 1)
    grad_input = grad_target = grad_weight = None
    if needs_input_grad[0]:
        grad_input = (log_probs.exp() * weighted.sum(dim, keepdim=True) - weighted) * grad
    if needs_input_grad[1]:
        grad_target = -(log_probs if class_weight is None else log_probs * class_weight) * grad
    if needs_input_grad[2]:
        per_element = -(log_probs * target * grad)
        others = tuple(i for i in range(per_element.dim()) if i != dim)
        grad_weight = per_element.sum(others) if others else per_element
    return grad_input, grad_target, grad_weight


def _cross_entropy_loss_grad(grad, input, target, target_dtype, weight, reduction, ignore_index, log_probs,
                             needs_input_grad):
    if target_dtype.is_floating_point:  # class probabilities (class indices are integers)
        return _probability_grad(grad, input, target, weight, reduction, needs_input_grad)
    # ``log_probs`` is the forward's log_softmax (handed over by the kernel, see saves=): the backward op
    # works from it, as PyTorch's LogSoftmaxBackward works from its saved output, instead of recomputing
    # the softmax. It carries no history, so with create_graph=True it is recomputed from ``input`` with
    # history (same kernel, same values), and double and triple backward go through the softmax.
    if ops.is_grad_enabled():
        log_probs = input.log_softmax(_class_dim(input))
    grad_input = None
    if needs_input_grad[0]:  # one public call; the backward op is differentiable itself
        grad_input = ops._cross_entropy_loss_backward(grad, log_probs, target, weight, reduction,
                                                             ignore_index)
    grad_weight = None
    if needs_input_grad[2]:  # beyond PyTorch, as for nll_loss
        grad_weight = _nll_loss_weight_grad(grad, log_probs, target, weight, reduction, ignore_index)
    return grad_input, None, grad_weight


_LOGITS = TensorSpec((4, 3), "float32", -5, 5)
_TARGET = TensorSpec((4,), "int64", 0, 2)
_CLASS_WEIGHT = TensorSpec((3,), "float32", 0.5, 2)


def _cross_entropy_node(input, target, weight, reduction, ignore_index) -> str:
    """The last op of PyTorch's composite: nll_loss for class indices; for class probabilities
    the division of ``'mean'`` (``DivBackward1``), else the negation."""
    if target.dtype.is_floating_point:
        return "div#1" if reduction == "mean" and input.numel() else "neg"
    return "nll_loss"


@op(grad=_cross_entropy_loss_grad, saves=("log_probs",), node=_cross_entropy_node,
    decompose=cross_entropy_decomposition, differentiable=no_complex_autograd("_log_softmax"),
    meta=rule(_cross_entropy_loss_meta),
    errors=(Sample((_LOGITS, TensorSpec((3,), "int64", 0, 2))), Sample((TensorSpec((4, 3), "int64"), _TARGET)),
            Sample((_LOGITS, _TARGET, TensorSpec((2,)))), Sample((_LOGITS, TensorSpec((4, 3), "int64", 0, 2))),
            Sample((SCALAR, SCALAR)), Sample((SCALAR, TensorSpec((), "int64"))),
            Sample((_LOGITS, TensorSpec((4, 3), "float32", 0, 1), TensorSpec((2,)))),
            Sample((_LOGITS, _TARGET, TensorSpec((3,), "int8")))),
    samples=(
    Sample((_LOGITS, _TARGET)),
    Sample((TensorSpec((4, 3), "float64", -50, 50), _TARGET), {"reduction": "sum"}),
    Sample((_LOGITS, _TARGET), {"reduction": "none"}),
    Sample((_LOGITS, _TARGET, _CLASS_WEIGHT)),
    Sample((_LOGITS, _TARGET, _CLASS_WEIGHT, "none", 1)),
    Sample((_LOGITS, _TARGET, _CLASS_WEIGHT), {"reduction": "sum", "ignore_index": 0}),
    Sample((_LOGITS, _TARGET), {"ignore_index": 1}),
    Sample((TensorSpec((3,)), TensorSpec((), "int64", 0, 2))),
    Sample((TensorSpec((3,)), TensorSpec((), "int64", 0, 2)), {"reduction": "none"}),
    Sample((TensorSpec((2, 3, 4)), TensorSpec((2, 4), "int64", 0, 2))),
    Sample((TensorSpec((2, 3, 4)), TensorSpec((2, 4), "int64", 0, 2), _CLASS_WEIGHT, "none", 2)),
    Sample((TensorSpec((4, 3), "bfloat16"), _TARGET)),
    # class probabilities: a target of the input's shape
    Sample((_LOGITS, TensorSpec((4, 3), "float32", 0, 1))),
    Sample((TensorSpec((2, 3, 2), "float64"), TensorSpec((2, 3, 2), "float64", 0, 1), _CLASS_WEIGHT, "none")),
    Sample((TensorSpec((3,)), TensorSpec((3,), "float64", 0, 1)), {"reduction": "sum"})))
def _cross_entropy_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: str = "mean",
                        ignore_index: int = -100) -> Tensor:
    """``nll_loss(log_softmax(input, class_dim), target, weight, ...)`` in one op: cross entropy
    between logits ``input`` (classes in dim 1, or dim 0 unbatched) and ``target`` class indices;
    a floating-point ``target`` of ``input``'s shape holds class probabilities instead, as in
    PyTorch's ``cross_entropy_loss``.

    What ``nn.functional.cross_entropy`` runs for class indices without label smoothing (as
    PyTorch's ``torch._C._nn.cross_entropy_loss``, without ``label_smoothing``): the same
    kernels as the two ops, so the same results and errors, but one autograd node. The
    log-probabilities are kept for the backward pass (``saves=``), as PyTorch's composite keeps
    log_softmax's result.

    >>> import tensormodes as tm
    >>> round(tm._cross_entropy_loss(tm.tensor([[0., 0.]]), tm.tensor([1])).item(), 4)
    0.6931
    """
    if input.shape == target.shape:  # class probabilities, as PyTorch assumes for a target of input's shape
        dim = _check_probability_target(input, target, weight, ignore_index)
        return _probability_loss(input, target, weight, _reduction(None, None, reduction), dim)
    log_probs = _activation.log_softmax(input, _class_dim(input))
    return nll_loss(log_probs, target, weight, None, ignore_index, None, reduction), log_probs


def _cross_entropy_loss_backward_grad(grad, grad_output, log_probs, target, weight, reduction, ignore_index,
                                      needs_input_grad):
    # The result is R = N - p * N.sum(dim), with p = exp(log_probs) and N = _nll_loss_backward(grad_output,
    # ...) (-scale at each counted target: linear in grad_output and free of log_probs' values). R is linear
    # in N, with transpose H = G - (G * p).sum(dim): <G, R> = <H, N> = <grad_output, nll_loss(H)>, so the
    # gradients for grad_output and weight are nll_loss's (see _nll_loss_backward_grad). For log_probs,
    # <G, R> = <G, N> - <G * N.sum(dim), p> varies only through p, and dp = p * dlog_probs.
    dim = _class_dim(log_probs)
    probabilities = log_probs.exp()
    grad_grad_output = grad_log_probs = grad_weight = None
    if needs_input_grad[0] or needs_input_grad[3]:
        transposed = grad - (grad * probabilities).sum(dim, keepdim=True)
        if needs_input_grad[0]:
            grad_grad_output = ops.nn.functional.nll_loss(
                transposed, target, weight, ignore_index=ignore_index, reduction=reduction)
        if needs_input_grad[3]:
            grad_weight = _nll_loss_weight_grad(grad_output, transposed, target, weight, reduction, ignore_index)
    if needs_input_grad[1]:
        scales = ops._nll_loss_backward(grad_output, log_probs, target, weight, reduction, ignore_index)
        grad_log_probs = grad * probabilities * -scales.sum(dim, keepdim=True)
    return grad_grad_output, grad_log_probs, None, grad_weight


_LOG_PROBS = TensorSpec((4, 3), "float32", -4, 0)


@op(grad=_cross_entropy_loss_backward_grad, meta=rule(_cross_entropy_loss_backward_meta),
    errors=(Sample((TensorSpec((2,)), _LOG_PROBS, _TARGET)), Sample((SCALAR, TensorSpec((4, 3), "int64"), _TARGET)),
            Sample((SCALAR, _LOG_PROBS, TensorSpec((4,), "int32", 0, 2)))),
    samples=(
    Sample((SCALAR, _LOG_PROBS, _TARGET)),
    Sample((TensorSpec((), "float64"), TensorSpec((4, 3), "float64", -50, 0), _TARGET), {"reduction": "sum"}),
    Sample((TensorSpec((4,)), _LOG_PROBS, _TARGET), {"reduction": "none"}),
    Sample((SCALAR, _LOG_PROBS, _TARGET, _CLASS_WEIGHT)),
    Sample((TensorSpec((4,)), _LOG_PROBS, _TARGET, _CLASS_WEIGHT, "none", 1)),
    Sample((SCALAR, _LOG_PROBS, _TARGET, _CLASS_WEIGHT), {"reduction": "sum", "ignore_index": 0}),
    Sample((SCALAR, _LOG_PROBS, _TARGET), {"ignore_index": 1}),
    Sample((SCALAR, _LOG_PROBS, TensorSpec((4,), "int64", 1, 1)), {"ignore_index": 1}),
    Sample((SCALAR, TensorSpec((4, 3), "float32", -2, 2), _TARGET)),  # any values: exp need not sum to 1
    Sample((SCALAR, TensorSpec((3,), "float32", -3, 0), TensorSpec((), "int64", 0, 2))),
    Sample((SCALAR, TensorSpec((3,), "float32", -3, 0), TensorSpec((), "int64", 0, 2)), {"reduction": "none"}),
    Sample((SCALAR, TensorSpec((3,), "float32", -3, 0), TensorSpec((), "int64", 1, 1)), {"ignore_index": 1}),
    Sample((SCALAR, TensorSpec((2, 3, 4), "float32", -3, 0), TensorSpec((2, 4), "int64", 0, 2))),
    Sample((TensorSpec((2, 4)), TensorSpec((2, 3, 4), "float32", -3, 0), TensorSpec((2, 4), "int64", 0, 2),
            _CLASS_WEIGHT), {"reduction": "none", "ignore_index": 0}),
    Sample((SCALAR, TensorSpec((0, 3)), TensorSpec((0,), "int64", 0, 2))),
    Sample((TensorSpec((), "float16"), TensorSpec((4, 3), "float16", -3, 0), _TARGET)),
    Sample((TensorSpec((), "bfloat16"), TensorSpec((4, 3), "bfloat16", -3, 0), _TARGET))))
def _cross_entropy_loss_backward(grad_output: Tensor, log_probs: Tensor, target: Tensor, weight: Tensor | None = None,
                                 reduction: str = "mean", ignore_index: int = -100) -> Tensor:
    """The gradient of ``_cross_entropy_loss(input, target, weight, reduction, ignore_index)`` for
    ``input``, given the loss's gradient ``grad_output`` (target-shaped for ``reduction='none'``,
    else one element) and the log-probabilities ``log_probs = log_softmax(input, class_dim)``:
    ``exp(log_probs)`` minus the one-hot target, along the class dimension, times each target's
    weight and ``grad_output``, divided by the targets' total weight for ``'mean'``; zero for
    targets equal to ``ignore_index`` (NaN where that row's log-probabilities are NaN, as in PyTorch).

    One op instead of ``_nll_loss_backward`` then ``_log_softmax_backward_data`` (PyTorch's
    composite, which also works from log_softmax's result); the result has ``log_probs``' dtype.

    >>> import tensormodes as tm
    >>> tm._cross_entropy_loss_backward(tm.tensor(1.0), tm.zeros(2, 2).log_softmax(1), tm.tensor([0, 1]))
    tensor([[-0.2500,  0.2500],
            [ 0.2500, -0.2500]])
    """
    mode = _reduction(None, None, reduction)
    with quiet():  # NaN log-probabilities give NaN rows, as in PyTorch, without warnings
        return _softmax_less_one_hot(grad_output, log_probs, target, weight, mode, ignore_index,
                                     _class_dim(log_probs))


_FULL_PRECISION = (np.dtype(np.float32), np.dtype(np.float64))


def _check_softmax_backward_dtype(log_probs, dim: int) -> None:
    if log_probs.dtype not in _FULL_PRECISION and log_probs.dtype not in HALF_TYPES:
        # PyTorch's composite fails in _log_softmax_backward_data, whose gradient has log_probs' dtype
        raise not_implemented(_activation._kernel_name("log_softmax_backward", dim, log_probs.ndim),
                              dt.NP_TO_DTYPE[log_probs.dtype])


def _softmax_less_one_hot(grad_output, log_probs, target, weight, mode, ignore_index, dim) -> np.ndarray:
    """``_cross_entropy_loss_backward``'s result (run quietly)."""
    _check_softmax_backward_dtype(log_probs, dim)
    index, positions, target, weight = _counted(log_probs, target, weight, ignore_index, backward=True)
    per_target = None if weight is None else weight[index[1]]
    scales = _target_scales(grad_output, log_probs, target, mode, index, positions, per_target)
    if not log_probs.size:
        return np.zeros(log_probs.shape, log_probs.dtype)
    if log_probs.dtype in HALF_TYPES:
        return half_softmax_less_one_hot(log_probs, index, positions, target, scales, dim)
    probabilities = np.exp(log_probs if log_probs.dtype in _FULL_PRECISION else log_probs.astype(np.float32))
    batched = probabilities if dim else probabilities[None]
    # Each target's row (along the class dimension) is exp(log_probs) * its scale, less the scale at its class.
    if positions is not None:  # some targets do not count: their rows get exp(log_probs) * 0
        row_scales = np.zeros(target.shape if dim else (1,), np.result_type(scales))
        row_scales[positions] = scales
        batched *= row_scales[:, None]
    else:
        batched *= scales[:, None] if scales.ndim else scales
    np.subtract.at(batched, index, scales)  # faster than batched[index] -= scales
    return np.asarray(probabilities.astype(log_probs.dtype, copy=False))

