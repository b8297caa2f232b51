"""ATen's own ops behind PyTorch's composites: what the dispatch level sees where a public call
is a composite there (``softmax`` -> ``_softmax``, ``cross_entropy`` -> ``_log_softmax`` and
``nll_loss_forward`` (``nll_loss2d_forward`` for spatial inputs), ``x[1:]`` -> ``slice.Tensor``,
``x[mask]`` -> ``index.Tensor``, ``tensor(data)`` -> ``lift_fresh`` (``lift_fresh_copy`` in
``make_fx``'s graphs), ``reshape`` of a strided
input -> ``clone`` and ``_unsafe_view``, ``x[...]`` -> ``alias``), and the backward ops of
``slice`` and ``select`` (``slice_backward``, ``select_backward``), as PyTorch's formulas call them.
The decomposition of ``conv1d`` / ``conv2d`` is here too (``convolution.py`` is full).

None is a public function (``function=False``): they are reached as
``tensormodes.ops.aten.<name>.<overload>``, which the public ops' decompositions
(``op(decompose=)``) call. Each reuses its public op's kernel, so a decomposed call computes
bit for bit what the public op does; each has its own gradient formula (written with public ops
and the backward ops), so autograd records the decomposition step by step as PyTorch's does.

>>> import tensormodes as tm
>>> tm.ops.aten.slice.Tensor(tm.arange(6), 0, 1, 5, 2).tolist()
[1, 3]
>>> str(tm.ops.aten._softmax.default._schema)
'aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _dtype as dt
from .._meta_array import DataDependentOutputError, MetaArray
from . import activation as _activation
from . import indexing as _indexing
from . import joining as _joining
from . import nn as _nn
from . import views as _views
from ._half_losses import half_weight_total
from ._samples import I23, M23, M234, SCALAR
from .common import HALF_TYPES, along, no_complex_autograd, ops, output_differentiability, scalar_type_name, wrap_dim
from .meta_rules import metadata, rule, same_metadata, same_shape
from .registry import Index, Sample, Tensor, TensorSpec, op
from .shape import meta_indexed, reshaped, value_dependent
from .views import infer_shape

# -- softmax and log_softmax -----------------------------------------------------------------

_LOGITS = TensorSpec((2, 3), "float32", -5, 5)
_SOFTMAX_SAMPLES = (
    Sample((_LOGITS, 1, False)), Sample((_LOGITS, 0, False)),
    Sample((TensorSpec((2, 3, 4), "float64", -9, 9), -1, False)),
    Sample((TensorSpec((), "float32"), 0, False)), Sample((TensorSpec((3, 2), "float16"), 0, False)),
    Sample((TensorSpec((2, 3), "bfloat16"), -1, False)))
_SOFTMAX_ERRORS = (Sample((_LOGITS, 2, False)), Sample((_LOGITS, 1, True)),
                   Sample((TensorSpec((4,), "int64"), 0, False)))


def _check_half_to_float(kernel: str, half_to_float: bool) -> None:
    if half_to_float:  # a CUDA-only conversion in PyTorch
        raise RuntimeError(f"{kernel} with half to float conversion is not supported on CPU")


def _softmax_grad(grad, result, dim, input_dtype):
    return ops._softmax_backward_data(grad, result, dim, input_dtype)


def _log_softmax_grad(grad, result, dim, input_dtype):
    return ops._log_softmax_backward_data(grad, result, dim, input_dtype)


@op(name="_softmax", function=False, aten="default", tags=("core",), grad=_softmax_grad,
    differentiable=no_complex_autograd("_softmax"), meta=same_shape, errors=_SOFTMAX_ERRORS, samples=_SOFTMAX_SAMPLES)
def _softmax_kernel(input: Tensor, dim: int, half_to_float: bool) -> Tensor:
    """``softmax(input, dim)``, ATen's form (``half_to_float``: a half input's float result,
    which only PyTorch's CUDA kernels compute). What ``softmax`` reaches at the dispatch level.

    >>> import tensormodes as tm
    >>> tm.ops.aten._softmax.default(tm.tensor([0.0, 0.0]), 0, False)
    tensor([0.5000, 0.5000])
    """
    _check_half_to_float("softmax", half_to_float)
    return _activation.softmax(input, dim)


@op(name="_log_softmax", function=False, aten="default", tags=("core",), grad=_log_softmax_grad,
    differentiable=no_complex_autograd("_log_softmax"), meta=same_shape, errors=_SOFTMAX_ERRORS,
    samples=_SOFTMAX_SAMPLES)
def _log_softmax_kernel(input: Tensor, dim: int, half_to_float: bool) -> Tensor:
    """``log_softmax(input, dim)``, ATen's form (see ``_softmax``). What ``log_softmax`` and
    ``cross_entropy`` reach at the dispatch level.

    >>> import tensormodes as tm
    >>> tm.ops.aten._log_softmax.default(tm.tensor([0.0, 0.0]), 0, False)
    tensor([-0.6931, -0.6931])
    """
    _check_half_to_float("log_softmax", half_to_float)
    return _activation.log_softmax(input, dim)


# -- nll_loss_forward ------------------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")  # PyTorch's Reduction enum, by value


def _reduction_name(reduction: int) -> str:
    if type(reduction) is not int or not 0 <= reduction < len(_REDUCTIONS):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


@output_differentiability(True, False)  # total_weight has no history, as in PyTorch
def _nll_loss_forward_grad(grad, input, target, weight, reduction, ignore_index, result1, needs_input_grad):
    mode = _reduction_name(reduction)
    grad_input = grad_weight = None
    if needs_input_grad[0]:  # PyTorch's backward op, given the forward's total weight
        total = result1
        if mode == "mean" and needs_input_grad[2] and ops.is_grad_enabled():
            # beyond PyTorch, differentiated again (create_graph): the total with its history in weight
            total = weight.gather(0, target.masked_select(target != ignore_index).reshape(-1)).sum()
        grad_input = _nll_backward_op(input.ndim)(grad[0], input, target, weight, reduction, ignore_index, total)
    if needs_input_grad[2]:  # beyond PyTorch, as for the public nll_loss
        grad_weight = _nn._nll_loss_weight_grad(grad[0], input, target, weight, mode, ignore_index)
    return grad_input, None, grad_weight


def _check_nll_input(input, target) -> None:
    """ATen's own checks, in its order (the public ``nll_loss`` makes its own before them)."""
    if input.ndim not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.dtype not in (np.int64, np.uint8):
        name = scalar_type_name(dt.NP_TO_DTYPE[target.dtype])
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {name}")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.ndim == 2 and target.ndim == 0:  # ATen reads the 0-dim target's size(0)
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    if input.ndim == 2 and input.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")


def _nll_loss_forward_meta(input, target, weight, reduction, ignore_index):
    _check_nll_input(input, target)
    output = _nn._nll_loss_meta(input, target, weight, None, ignore_index, None, _reduction_name(reduction))
    return output, MetaArray((), input.dtype)


def _nll_forward(input, target, weight, reduction: int, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """(``nll_loss``, the counted targets' total weight; 0 for ``'none'`` of a batch), as ATen's ops
    return them (a single input's kernel counts its target whatever the reduction)."""
    mode = _reduction_name(reduction)
    output = _nn.nll_loss(input, target, weight, None, ignore_index, None, mode)
    if mode == "none" and input.ndim != 1:
        return output, np.zeros((), input.dtype)
    index, positions, target, weight = _nn._counted(input, target, weight, ignore_index)
    if weight is None:
        total = index[1].size
    elif input.dtype in HALF_TYPES and index[1].size:
        total = half_weight_total(weight[index[1]], positions, target)
    else:
        total = weight[index[1]].sum(dtype=input.dtype)
    return output, np.asarray(total, input.dtype)


_TARGETS = TensorSpec((4,), "int64", 0, 2)


@op(function=False, aten="default", grad=_nll_loss_forward_grad, meta=rule(_nll_loss_forward_meta), node="nll_loss",
    schema={"ignore_index": "SymInt", "(returns)": "Tensor output, Tensor total_weight"},
    errors=(Sample((TensorSpec((4, 3)), TensorSpec((3,), "int64", 0, 2), None, 1, -100)),
            Sample((TensorSpec(()), TensorSpec((0,), "int64", 0, 2), None, 2, 0)),
            Sample((TensorSpec((4, 3)), _TARGETS, TensorSpec((2,)), 1, -100))),
    samples=(
    Sample((TensorSpec((4, 3)), _TARGETS, None, 1, -100)),
    Sample((TensorSpec((4, 3), "float64"), _TARGETS, None, 2, -100)),
    Sample((TensorSpec((4, 3)), _TARGETS, None, 0, -100)),
    Sample((TensorSpec((4, 3)), _TARGETS, TensorSpec((3,), "float32", 0.5, 2), 1, 1)),
    Sample((TensorSpec((4, 3)), _TARGETS, TensorSpec((3,), "float32", 0.5, 2), 2, 0)),
    Sample((TensorSpec((3,)), TensorSpec((), "int64", 0, 2), None, 1, -100))))
def nll_loss_forward(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                     ignore_index: int) -> tuple[Tensor, Tensor]:
    """``nll_loss`` as ATen's op: ``(output, total_weight)``, the reduction as PyTorch's enum
    (0 ``'none'``, 1 ``'mean'``, 2 ``'sum'``); ``total_weight`` is the counted targets' total
    weight (0 for ``'none'``). What ``nll_loss`` and ``cross_entropy`` reach at the dispatch level.

    >>> import tensormodes as tm
    >>> tm.ops.aten.nll_loss_forward.default(tm.tensor([[-1.0, -2.0], [-3.0, -0.5]]), tm.tensor([0, 1]), None, 1, -100)
    (tensor(0.7500), tensor(2.))
    """
    _check_nll_input(input, target)
    return _nll_forward(input, target, weight, reduction, ignore_index)


def _check_spatial(input, target, weight=None) -> None:
    if target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.ndim}")
    if input.ndim != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input of dimension: "
                           f"{input.ndim}")
    if target.dtype not in (np.int64, np.uint8):  # before the sizes, as ATen's CPU kernel
        name = scalar_type_name(dt.NP_TO_DTYPE[target.dtype])
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {name}")
    if weight is not None and weight.size != input.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if input.shape[0] != target.shape[0] or tuple(input.shape[2:]) != tuple(target.shape[1:]):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")


def _nll_loss2d_forward_meta(input, target, weight, reduction, ignore_index):
    _check_spatial(input, target, weight)
    output = _nn._nll_loss_meta(input, target, weight, None, ignore_index, None, _reduction_name(reduction))
    return output, MetaArray((), input.dtype)


_PLANE_TARGETS = TensorSpec((2, 4, 5), "int64", 0, 2)


@op(function=False, aten="default", grad=_nll_loss_forward_grad, meta=rule(_nll_loss2d_forward_meta),
    node="nll_loss2d", schema={"ignore_index": "SymInt", "(returns)": "Tensor output, Tensor total_weight"},
    errors=(Sample((TensorSpec((2, 3, 4)), _PLANE_TARGETS, None, 1, -100)),
            Sample((TensorSpec((2, 3, 4, 5)), TensorSpec((2, 4), "int64", 0, 2), None, 1, -100))),
    samples=(
    Sample((TensorSpec((2, 3, 4, 5)), _PLANE_TARGETS, None, 1, -100)),
    Sample((TensorSpec((2, 3, 4, 5), "float64"), _PLANE_TARGETS, None, 0, -100)),
    Sample((TensorSpec((2, 3, 1, 4)), TensorSpec((2, 1, 4), "int64", 0, 2), TensorSpec((3,), "float32", 0.5, 2),
            2, 1))))
def nll_loss2d_forward(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                       ignore_index: int) -> tuple[Tensor, Tensor]:
    """``nll_loss_forward`` of 4-D log-probabilities (N, C, H, W) and 3-D targets (N, H, W): what
    ``nll_loss`` and ``cross_entropy`` of spatial inputs reach at the dispatch level.

    >>> import tensormodes as tm
    >>> tm.ops.aten.nll_loss2d_forward.default(tm.zeros(1, 2, 1, 2), tm.tensor([[[0, 1]]]), None, 2, -100)
    (tensor(0.), tensor(2.))
    """
    _check_spatial(input, target, weight)
    return _nll_forward(input, target, weight, reduction, ignore_index)


# -- nll_loss_backward -------------------------------------------------------------------------

def _nll_loss_backward_grad(grad, grad_output, target, weight, reduction, ignore_index, total_weight, result,
                            needs_input_grad):
    # The op is linear in grad_output (nll_loss is its transpose) and in weight, and for 'mean' a
    # multiple of 1 / total_weight; input gives only its shape (zero gradient). Beyond PyTorch,
    # weight and total_weight get theirs, each as given (not recomputed from the other).
    mode = _reduction_name(reduction)
    grad_grad_output = grad_weight = grad_total = None
    if needs_input_grad[0]:
        loss = ops.nn.functional.nll_loss(grad, target, weight, ignore_index=ignore_index,
                                          reduction="sum" if mode == "mean" else mode)
        grad_grad_output = loss / total_weight if mode == "mean" else loss
    if needs_input_grad[3]:  # grad times the unweighted result, summed per class
        unweighted = _nll_backward_op(grad.ndim)(grad_output, grad, target, None, reduction, ignore_index,
                                                 total_weight)
        spread = [d for d in range(grad.ndim) if d != (1 if grad.ndim >= 2 else 0)]
        grad_weight = (grad * unweighted).sum(spread) if spread else grad * unweighted
    if needs_input_grad[4] and mode == "mean":
        grad_total = -(grad * result).sum() / total_weight
    return grad_grad_output, None, None, grad_weight, grad_total


def _nll_backward_op(ndim: int):
    """The ATen backward op of ``nll_loss_forward`` (``ndim``: of its input)."""
    return ops.ops.aten.nll_loss2d_backward.default if ndim == 4 else ops.ops.aten.nll_loss_backward.default


def _nll_loss_backward_meta(grad_output, input, target, weight, reduction, ignore_index, total_weight):
    _check_nll_input(input, target)
    return _nn._nll_loss_backward_meta(grad_output, input, target, weight, _reduction_name(reduction), ignore_index)


def _nll_loss2d_backward_meta(grad_output, input, target, weight, reduction, ignore_index, total_weight):
    _check_spatial(input, target)
    return _nn._nll_loss_backward_meta(grad_output, input, target, weight, _reduction_name(reduction), ignore_index)


def _nll_backward(grad_output, input, target, weight, reduction: int, ignore_index: int, total_weight):
    if reduction == 1 and type(input) is np.ndarray and grad_output.size == 1 and total_weight.size == 1 and \
            _nn.every_target_counts(input, target, weight, ignore_index):
        # The mean over every classifier's loss, in the steps of the general path below:
        # -grad_output / total_weight at each target's class
        total = total_weight.reshape(()).item()
        if total:
            grad_input = np.zeros(input.shape, input.dtype)
            grad_input[np.arange(target.shape[0]), target] = -(grad_output.reshape(()) / total)
            return grad_input
    mode = _reduction_name(reduction)
    total = None if mode != "mean" else total_weight.reshape(()).item()
    return _nn.nll_backward_values(grad_output, input, target, weight, mode, ignore_index, total)


_SCALAR_GRAD = TensorSpec(())


@op(function=False, aten="default", grad=_nll_loss_backward_grad, meta=rule(_nll_loss_backward_meta),
    schema={"input": "Tensor self", "ignore_index": "SymInt"},
    errors=(Sample((_SCALAR_GRAD, TensorSpec((4, 3)), TensorSpec((3,), "int64", 0, 2), None, 1, -100,
                    TensorSpec(()))),),
    samples=(
    Sample((_SCALAR_GRAD, TensorSpec((4, 3)), _TARGETS, None, 1, -100, TensorSpec((), "float32", 4, 4))),
    Sample((TensorSpec((), "float64"), TensorSpec((4, 3), "float64"), _TARGETS, None, 2, -100,
            TensorSpec((), "float64", 4, 4))),
    Sample((TensorSpec((4,)), TensorSpec((4, 3)), _TARGETS, None, 0, -100, TensorSpec(()))),
    Sample((_SCALAR_GRAD, TensorSpec((4, 3)), _TARGETS, TensorSpec((3,), "float32", 0.5, 2), 1, 1,
            TensorSpec((), "float32", 1.5, 1.5)))))
def nll_loss_backward(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                      ignore_index: int, total_weight: Tensor) -> Tensor:
    """The gradient of ``nll_loss_forward`` for its input (ATen's ``nll_loss_backward``): zero but
    at each counted target's class, ``-weight[class] * grad_output``, divided by ``total_weight``
    (the forward's second output) for ``'mean'`` (``reduction`` 1).

    >>> import tensormodes as tm
    >>> tm.ops.aten.nll_loss_backward.default(tm.tensor(1.0), tm.zeros(2, 2), tm.tensor([0, 1]), None, 1, -100,
    ...                                       tm.tensor(2.0))
    tensor([[-0.5000,  0.0000],
            [ 0.0000, -0.5000]])
    """
    _check_nll_input(input, target)
    return _nll_backward(grad_output, input, target, weight, reduction, ignore_index, total_weight)


@op(function=False, aten="default", grad=_nll_loss_backward_grad, meta=rule(_nll_loss2d_backward_meta),
    schema={"input": "Tensor self", "ignore_index": "SymInt"},
    errors=(Sample((_SCALAR_GRAD, TensorSpec((2, 3, 4)), _PLANE_TARGETS, None, 1, -100, TensorSpec(()))),),
    samples=(
    Sample((_SCALAR_GRAD, TensorSpec((2, 3, 4, 5)), _PLANE_TARGETS, None, 1, -100,
            TensorSpec((), "float32", 40, 40))),
    Sample((TensorSpec((2, 4, 5), "float64"), TensorSpec((2, 3, 4, 5), "float64"), _PLANE_TARGETS, None, 0, -100,
            TensorSpec((), "float64")))))
def nll_loss2d_backward(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                        ignore_index: int, total_weight: Tensor) -> Tensor:
    """``nll_loss_backward`` of 4-D log-probabilities (N, C, H, W) and 3-D targets (N, H, W)
    (ATen's ``nll_loss2d_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.nll_loss2d_backward.default(tm.tensor(1.0), tm.zeros(1, 2, 1, 2), tm.tensor([[[0, 1]]]), None,
    ...                                         2, -100, tm.tensor(2.0)).tolist()
    [[[[-1.0, 0.0]], [[0.0, -1.0]]]]
    """
    _check_spatial(input, target)
    return _nll_backward(grad_output, input, target, weight, reduction, ignore_index, total_weight)


# -- slice, alias and index ----------------------------------------------------------------

def _slice_key(ndim: int, dim: int, start, end, step) -> tuple[int, slice]:
    """(the wrapped dim, the slice), after PyTorch's checks."""
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return d, slice(start, end, step)


def _slice_grad(grad, input_shape, dim, start, end, step):
    return ops.ops.aten.slice_backward.default(grad, list(input_shape), dim, 0 if start is None else start,
                                               _indexing.OPEN_END if end is None else end, step)


@op(name="slice", function=False, aten="Tensor", tags=("core",), view=True, grad=_slice_grad, meta=metadata,
    schema={"start": "SymInt?", "end": "SymInt?", "step": "SymInt"},
    errors=(Sample((M23, 0, 0, 2, 0)), Sample((M23, 2)), Sample((SCALAR, 0, 0, 1))),
    samples=(Sample((M23, 1, 1, 9223372036854775807)), Sample((M234, 2, 0, 9223372036854775807, 2)),
             Sample((M23, 0, -5, -1)), Sample((I23,), {"dim": 1, "end": 2}), Sample((M23, 1, 2, 1)),
             Sample((M23,))))
def slice_kernel(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                 step: int = 1) -> Tensor:
    """The view ``input[start:end:step]`` along ``dim`` (out-of-range bounds are clamped): ATen's
    ``slice.Tensor``, what ``x[1:]`` reaches at the dispatch level.

    >>> import tensormodes as tm
    >>> tm.ops.aten.slice.Tensor(tm.tensor([[1, 2, 3], [4, 5, 6]]), 1, 1).tolist()
    [[2, 3], [5, 6]]
    """
    d, part = _slice_key(input.ndim, dim, start, end, step)
    if type(input) is MetaArray:
        return meta_indexed(input, (slice(None),) * d + (part,))
    return input[along(d, part)]


# -- the backward ops of slice and select ------------------------------------------------------

def _written_into_zeros(grad_output, input_sizes, region_of):
    """Zeros of ``input_sizes`` with ``grad_output`` copied into ``region_of(zeros)`` (a view), as
    PyTorch's ``slice_backward`` / ``select_backward`` compute them; MetaArrays give the metadata."""
    sizes = tuple(input_sizes)
    meta = type(grad_output) is MetaArray
    result = MetaArray(sizes, grad_output.dtype) if meta else np.zeros(sizes, grad_output.dtype)
    region = region_of(result)
    if len(grad_output.shape) > region.ndim:
        raise RuntimeError(f"output with shape {list(region.shape)} doesn't match the broadcast shape "
                           f"{list(grad_output.shape)}")
    for back in range(1, len(grad_output.shape) + 1):  # the copy broadcasts grad_output, as PyTorch's copy_
        a, b = region.shape[-back], grad_output.shape[-back]
        if b != a and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                               f"non-singleton dimension {region.ndim - back}")
    if not meta:
        region[...] = grad_output
    return result


def _slice_backward_grad(grad, dim, start, end, step):
    return ops.ops.aten.slice.Tensor(grad, dim, start, end, step)


@op(function=False, aten="default", grad=_slice_backward_grad, meta=metadata,
    schema={"input_sizes": "SymInt[]", "start": "SymInt", "end": "SymInt", "step": "SymInt"},
    errors=(Sample((TensorSpec((2, 3, 4)), [2, 3, 4], 1, 1, 100, 1)),
            Sample((TensorSpec((2, 2, 4)), [2, 3, 4], 3, 1, 9, 1)),
            Sample((TensorSpec((2, 2, 4)), [2, 3, 4], 1, 1, 9, 0))),
    samples=(Sample((TensorSpec((2, 2, 4)), [2, 3, 4], 1, 1, 9223372036854775807, 1)),
             Sample((TensorSpec((2, 3, 2), "float64"), [2, 3, 4], -1, -100, 100, 3)),
             Sample((TensorSpec((1, 3, 4), "int64"), [2, 3, 4], 0, 0, -1, 1)),
             Sample((TensorSpec((4,)), [2, 3, 4], 1, 0, 2, 1))))
def slice_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int, end: int,
                   step: int) -> Tensor:
    """The gradient of ``slice.Tensor(input, dim, start, end, step)`` for an input of ``input_sizes``:
    zeros with ``grad_output`` at the slice (PyTorch's ``slice_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.slice_backward.default(tm.ones(2), [4], 0, 1, 9223372036854775807, 2).tolist()
    [0.0, 1.0, 0.0, 1.0]
    """
    return _written_into_zeros(grad_output, input_sizes, lambda zeros: slice_kernel(zeros, dim, start, end, step))


def _select_backward_grad(grad, dim, index):
    return grad.select(dim, index)


@op(function=False, aten="default", grad=_select_backward_grad, meta=metadata,
    schema={"input_sizes": "SymInt[]", "index": "SymInt"},
    errors=(Sample((TensorSpec((2, 4)), [2, 3, 4], 1, 5)), Sample((TensorSpec((2, 3)), [2, 3, 4], 1, 0))),
    samples=(Sample((TensorSpec((3, 4)), [2, 3, 4], 0, 0)), Sample((TensorSpec((2, 4), "float64"), [2, 3, 4], 1, -1)),
             Sample((TensorSpec((), "int64"), [3], 0, 2)), Sample((TensorSpec((4,)), [2, 3, 4], -2, 1))))
def select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    """The gradient of ``select(input, dim, index)`` for an input of ``input_sizes``: zeros with
    ``grad_output`` at ``index`` along ``dim`` (PyTorch's ``select_backward``).

    >>> import tensormodes as tm
    >>> tm.ops.aten.select_backward.default(tm.ones(2), [2, 2], 1, 0).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    return _written_into_zeros(grad_output, input_sizes, lambda zeros: _joining.select(zeros, dim, index))


def _alias_grad(grad):
    return grad


@op(name="alias", function=False, aten="default", tags=("core",), view=True, grad=_alias_grad, meta=metadata,
    samples=(Sample((M23,)), Sample((SCALAR,)), Sample((I23,))))
def alias_kernel(input: Tensor) -> Tensor:
    """A view of all of ``input`` (what ``x[...]`` reaches at the dispatch level).

    >>> import tensormodes as tm
    >>> x = tm.tensor([1, 2])
    >>> tm.ops.aten.alias.default(x)._base is x
    True
    """
    if type(input) is MetaArray:
        return meta_indexed(input, ())
    return input[...]


def _aten_indices(indices, ndim: int) -> list:
    """``index.Tensor``'s indices (one entry per leading dimension; None: the whole dimension) with
    ATen's meaning in Python indexing's terms. ATen reads every tensor as an advanced index (a
    boolean one through its nonzero positions) where Python indexing reads 0-dim ones otherwise: a
    0-dim mask has no positions and takes no dimension (dropped; where only such masks are given,
    ATen fails an internal assert for an input with elements), and a 0-dim integer beside an index
    with dimensions broadcasts as one of shape (1,) would (alone, it acts as a number)."""
    if not len(indices):
        raise IndexError("at least one index must be provided")
    if len(indices) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(indices)})")
    if any(item is not None and np.dtype(getattr(item.dtype, "_np", item.dtype)) not in _indexing._INDEX_DTYPES
           for item in indices):
        raise IndexError(_indexing._INDEX_TYPES_ERROR)  # (a 0-dim int8 one too, which Python indexing takes)
    tensors = [item for item in indices if item is not None]
    kept = [item for item in tensors if not _zero_dim_mask(item)]
    if len(kept) < len(tensors):
        indices = [item for item in indices if item is None or not _zero_dim_mask(item)]
    if any(item.ndim for item in kept):
        indices = [_as_one_position(item) if item is not None and not item.ndim else item for item in indices]
    return list(indices)


def _zero_dim_mask(item) -> bool:
    return not item.ndim and str(item.dtype).rsplit(".", 1)[-1] in ("bool", "uint8")


def _as_one_position(item):
    return MetaArray((1,), item.dtype) if type(item) is MetaArray else item.reshape(1)


def _index_key(indices) -> tuple:
    return tuple(slice(None) if item is None else item for item in indices)


def _index_grad(grad, input_shape, indices):
    # PyTorch's index_backward: the gradient put back, accumulating, into zeros of the input's shape.
    # (index_put here takes no None for a whole dimension: those go the way of getitem's gradient.)
    meaning = _aten_indices(indices, len(input_shape))
    if any(item is None for item in meaning):
        return _indexing._getitem_grad(grad, input_shape, _index_key(meaning))
    # ``grad.options()`` as PyTorch's formula passes them (a handler sees dtype, layout, device)
    zeros = grad.new_zeros(tuple(input_shape), dtype=grad.dtype, device=grad.device)
    grad_input = zeros.index_put(tuple(meaning), grad, accumulate=True)
    return grad_input, [None] * len(indices)


def _integers_only_shape(input, meaning, *, checked: bool = True) -> tuple | None:
    """The result's shape where the indices are only 0-dim integers (their dimensions go), after
    the CPU kernel's check of an indexed dimension of size 0 (``checked``; PyTorch's meta rule
    has none); None for other indices."""
    if not all(item is None or not item.ndim for item in meaning):
        return None
    if checked and any(input.shape[dim] == 0 for dim, item in enumerate(meaning) if item is not None):
        raise IndexError("index is out of bounds for dimension with size 0")
    return tuple(size for size, item in zip(input.shape, meaning) if item is None) + input.shape[len(meaning):]


def _index_meta(input, indices):
    meaning = _aten_indices(indices, input.ndim)
    shape = _integers_only_shape(input, meaning, checked=False)
    if shape is not None:  # whatever the (unknown) positions
        return MetaArray(shape, input.dtype)
    try:
        return _indexing._getitem_meta(input, _index_key(meaning))
    except DataDependentOutputError:
        raise value_dependent("index") from None


_ROWS = TensorSpec((2,), "int64", -2, 1)


@op(name="index", function=False, aten="Tensor", tags=("core", "dynamic_output_shape"), grad=_index_grad,
    meta=rule(_index_meta),
    errors=(Sample((M23, [TensorSpec((3,), "bool")])), Sample((M23, [TensorSpec((2,), "float32")])),
            Sample((M23, [])), Sample((M23, [TensorSpec((), "int8", 0, 1)]))),
    samples=(Sample((M23, [_ROWS])), Sample((M234, [None, TensorSpec((2, 2), "int64", 0, 2)])),
             Sample((M234, [_ROWS, None, TensorSpec((2,), "int64", 0, 3)])),
             Sample((M23, [TensorSpec((2, 3), "bool")])),
             Sample((M23, [TensorSpec((), "int64", 0, 1)])), Sample((I23, [None, TensorSpec((3,), "bool")]))))
def index_kernel(input: Tensor, indices: Index) -> Tensor:
    """``input`` indexed by ``indices``, a list of index tensors (integer positions or boolean
    masks, one per leading dimension; None leaves a dimension whole): a copy, ATen's
    ``index.Tensor``, what ``x[mask]`` and ``x[:, positions]`` reach at the dispatch level.

    >>> import tensormodes as tm
    >>> tm.ops.aten.index.Tensor(tm.tensor([[1, 2], [3, 4]]), [None, tm.tensor([1, 1])]).tolist()
    [[2, 2], [4, 4]]
    """
    meaning = _aten_indices(indices, input.ndim)
    shape = _integers_only_shape(input, meaning)
    if shape is not None and 0 in shape:  # ATen reads no position for an empty result, so checks none
        return np.empty(shape, input.dtype)
    result = _indexing.getitem(input, _index_key(meaning))
    if np.may_share_memory(result, input):  # 0-dim integer indices act as integers there: a view
        result = result.copy()
    return result


# -- lift_fresh and _unsafe_view -------------------------------------------------------------

def _lift_fresh_grad(grad):
    return grad


@op(function=False, aten="default", alias=True, grad=_lift_fresh_grad, meta=metadata,
    differentiable=no_complex_autograd("lift_fresh"),
    samples=(Sample((M23,)), Sample((SCALAR,)), Sample((I23,))))
def lift_fresh(input: Tensor) -> Tensor:
    """``input`` itself: marks a tensor just made from Python data (``tensor([1, 2])``) as
    entering the program, as PyTorch's ``lift_fresh`` does for tracing modes.

    >>> import tensormodes as tm
    >>> tm.ops.aten.lift_fresh.default(tm.ones(2))
    tensor([1., 1.])
    """
    return input


@op(function=False, aten="default", tags=("view_copy",), grad=_lift_fresh_grad, meta=same_metadata,
    differentiable=no_complex_autograd("lift_fresh_copy"),
    samples=(Sample((M23,)), Sample((SCALAR,)), Sample((I23,))))
def lift_fresh_copy(input: Tensor) -> Tensor:
    """A copy of ``input``: what ``make_fx`` records for a ``lift_fresh`` (a tensor made from
    Python data inside the traced function), so the graph never aliases its constant.

    >>> import tensormodes as tm
    >>> tm.ops.aten.lift_fresh_copy.default(tm.ones(2))
    tensor([1., 1.])
    """
    return input.copy(order="K")


def _unsafe_view_grad(grad, input_shape):
    return grad.reshape(input_shape)


@op(function=False, aten="default", grad=_unsafe_view_grad, meta=metadata, schema={"size": "SymInt[]"},
    errors=(Sample((M23, [4, 2])), Sample((M23, [-1, -1]))),
    samples=(Sample((M23, [3, 2])), Sample((M234, [6, -1])), Sample((SCALAR, [1])), Sample((I23, [6]))))
def _unsafe_view(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input`` with the shape ``size`` (one entry may be -1), not recorded as a view of it:
    what ``reshape`` of a tensor whose strides allow no view runs on its contiguous clone.

    >>> import tensormodes as tm
    >>> tm.ops.aten._unsafe_view.default(tm.arange(6), [2, 3]).shape
    tensormodes.Size([2, 3])
    """
    return reshaped(input, infer_shape(tuple(size), input.size))


# -- view.dtype ------------------------------------------------------------------------------

@op(function=False, view=True, differentiable=False, meta=metadata, aten="view.dtype",
    samples=(Sample((TensorSpec((2, 4)), dt.int32)), Sample((TensorSpec((2, 4)), dt.float16))),
    errors=(Sample((SCALAR, dt.int16)),))
def view_dtype(input: Tensor, dtype: dt.dtype) -> Tensor:
    """``Tensor.view(dtype)`` as ATen's own overload: the same bytes read as ``dtype`` (what
    ``view``'s dtype form reaches at the dispatch level).

    >>> import tensormodes as tm
    >>> tm.ops.aten.view.dtype(tm.zeros(2), tm.int32).tolist()
    [0, 0]
    """
    return _views._view_dtype(input, dtype)


# -- decompositions of composites whose families are full ------------------------------------

def _per_dim(value, spatial: int) -> list[int] | None:
    """An int argument of conv1d / conv2d as one int per spatial dimension (None: not so given)."""
    values = [value] * spatial if type(value) is int else list(value) if isinstance(value, (list, tuple)) else None
    return values if values is not None and len(values) == spatial and all(type(v) is int for v in values) else None


def conv_decomposition(spatial: int):
    """PyTorch's composite ``conv1d`` / ``conv2d``: ``convolution`` with every argument as one int per
    spatial dimension ('valid' and a symmetric 'same' resolved); an unbatched input gets its batch
    dimension by ``unsqueeze`` and loses it by ``squeeze``. Anything else (complex operands, which
    PyTorch splits into parts, an asymmetric 'same', argument errors) is left to the op."""
    def decompose(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if input.is_complex() or weight.dim() != spatial + 2 or input.dim() not in (spatial + 1, spatial + 2) \
                or type(groups) is not int or (bias is not None and bias.dtype != input.dtype):
            return NotImplemented
        strides, dilations = _per_dim(stride, spatial), _per_dim(dilation, spatial)
        if padding == "valid":
            padding = 0
        elif padding == "same" and dilations is not None and strides == [1] * spatial:
            totals = [d * (k - 1) for d, k in zip(dilations, weight.shape[2:])]
            padding = [total // 2 if total % 2 == 0 else -1 for total in totals]  # odd: asymmetric
        paddings = None if isinstance(padding, str) else _per_dim(padding, spatial)
        if strides is None or dilations is None or paddings is None or any(p < 0 for p in paddings):
            return NotImplemented
        unbatched = input.dim() == spatial + 1
        batched = input.unsqueeze(0) if unbatched else input
        result = ops.convolution(batched, weight, bias, strides, paddings, dilations, False, [0] * spatial, groups)
        return result.squeeze(0) if unbatched else result

    decompose.__name__ = decompose.__qualname__ = f"conv{spatial}d_decomposition"
    return decompose
