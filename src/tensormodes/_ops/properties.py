"""Tensor properties computed from the array (``is_floating_point``, ``numel``, ``is_nonzero`` ...;
``Tensor.is_complex``, ``is_floating_point`` and ``numel`` are defined with the class) and
whole-tensor copies and aliases: ``clone``, ``contiguous``, ``detach``.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._device import check_compute_device
from .._memory_format import copied_as, preserve_format, strided
from .._meta_array import MetaArray, contiguous_strides, dense_strides, view_of
from .._symbolic import SymInt
from ._samples import I23, M23, SCALAR
from .common import ops, resolve_dtype
from .meta_rules import MetaRule, checked_data_dependent, metadata, rule, same_metadata
from .registry import Sample, Tensor, TensorSpec, op
from .shape import _same_grad

# -- properties ------------------------------------------------------------------------------

_PROPERTY_SAMPLES = (Sample((M23,)), Sample((TensorSpec((2,), "complex64"),)), Sample((TensorSpec((3,), "int64"),)),
                     Sample((TensorSpec((2,), "uint8"),)), Sample((SCALAR,)), Sample((TensorSpec((0, 2)),)))


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES, meta=metadata)
def is_complex(input: Tensor) -> bool:
    """True if ``input``'s dtype is complex (also ``Tensor.is_complex()``).

    >>> import tensormodes as tm
    >>> tm.is_complex(tm.tensor([1j]))
    True
    """
    return input.dtype.kind == "c"


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES, meta=metadata)
def is_floating_point(input: Tensor) -> bool:
    """True if ``input``'s dtype is a floating-point one (also ``Tensor.is_floating_point()``).

    >>> import tensormodes as tm
    >>> tm.is_floating_point(tm.tensor([1.0]))
    True
    """
    return input.dtype.kind == "f" or input.dtype == dt.bfloat16._np


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES, meta=metadata)
def is_signed(input: Tensor) -> bool:
    """True if ``input``'s dtype holds negative numbers (all but ``bool`` and ``uint8``).

    >>> import tensormodes as tm
    >>> tm.is_signed(tm.tensor([1], dtype=tm.uint8))
    False
    """
    return input.dtype.kind not in "bu"


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES, meta=metadata)
def is_conj(input: Tensor) -> bool:
    """False: tensormodes computes conjugates rather than deferring them.

    >>> import tensormodes as tm
    >>> tm.is_conj(tm.tensor([1j]).conj())
    False
    """
    return False


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES, meta=metadata)
def is_neg(input: Tensor) -> bool:
    """False: tensormodes computes negations rather than deferring them.

    >>> import tensormodes as tm
    >>> tm.is_neg(tm.tensor([1.0]))
    False
    """
    return False


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES, meta=metadata)
def numel(input: Tensor) -> int:
    """The number of elements (also ``Tensor.numel()``).

    >>> import tensormodes as tm
    >>> tm.numel(tm.zeros(2, 3))
    6
    """
    size = input.size
    if type(size) is int or type(size) is SymInt:  # (a fake tensor's unbacked size: the SymInt itself)
        return size
    return int(size)


@op(differentiable=False, method=True, samples=_PROPERTY_SAMPLES, meta=metadata)
def is_inference(input: Tensor) -> bool:
    """False: whether ``input`` is an inference tensor; tensors made inside ``inference_mode``
    are not marked as such here (a documented difference).

    >>> import tensormodes as tm
    >>> tm.is_inference(tm.zeros(1)), tm.zeros(1).is_inference()
    (False, False)
    """
    return False


def _check_one_value(input) -> None:
    """``is_nonzero``'s checks, which read only the size (the meta rule runs them too)."""
    _check_count(input.size)


def _check_count(count: int) -> None:
    if count > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if count == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")


def _is_nonzero_decomposition(input):
    """PyTorch's composite: the checks, then ``item()`` (``aten._local_scalar_dense``) compared to 0."""
    _check_count(input.numel())
    return input.item() != 0


@op(errors=(Sample((M23,)), Sample((TensorSpec((0,)),))), decompose=_is_nonzero_decomposition,
    differentiable=False, method=True, meta=checked_data_dependent(rule(_check_one_value)), samples=(
    Sample((TensorSpec((1,)),)), Sample((TensorSpec((), "int64", 0, 0),)), Sample((TensorSpec((1, 1), "bool"),)),
    Sample((TensorSpec((), "complex64"),))))
def is_nonzero(input: Tensor) -> bool:
    """Whether the single element of ``input`` is nonzero (NaN is); more or fewer elements raise.

    >>> import tensormodes as tm
    >>> tm.is_nonzero(tm.tensor([0.5]))
    True
    """
    _check_one_value(input)
    return bool(input.reshape(()) != 0)


def _check_not_empty(input) -> None:
    if input.size == 0:
        raise RuntimeError("_local_scalar_dense: Empty tensor not supported")


@op(function=False, differentiable=False, aten="default", schema={"(returns)": "Scalar"},
    meta=checked_data_dependent(rule(_check_not_empty)), tags=("core", "data_dependent_output", "pt2_compliant_tag"),
    errors=(Sample((TensorSpec((0,)),)),),
    samples=(Sample((TensorSpec((1,)),)), Sample((TensorSpec((), "int64"),)), Sample((TensorSpec((1, 1), "bool"),)),
             Sample((TensorSpec((), "complex64"),)), Sample((TensorSpec((), "bfloat16"),)), Sample((M23,))))
def _local_scalar_dense(input: Tensor) -> Number:
    """The first element of ``input`` as a Python number: what ``.item()``, ``bool(t)``, ``int(t)``,
    ``float(t)`` and ``t.__index__()`` reach at the dispatch level, as in PyTorch (they check
    first that ``input`` has one element; the op itself reads the first of any).

    >>> import tensormodes as tm
    >>> tm.ops.aten._local_scalar_dense.default(tm.tensor([2.5, 1.0]))
    2.5
    """
    _check_not_empty(input)
    first = input.reshape(-1)[0]
    return float(first) if input.dtype == dt.bfloat16._np else first.item()


@op(differentiable=False, method=True, meta=metadata,
    samples=(Sample((M23, M23)), Sample((M23, TensorSpec((3, 2)))), Sample((SCALAR, TensorSpec((), "int64")))))
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether ``input`` and ``other`` have the same shape.

    >>> import tensormodes as tm
    >>> tm.is_same_size(tm.zeros(2, 3), tm.zeros(3, 2))
    False
    """
    return input.shape == other.shape


# -- copies and aliases -----------------------------------------------------------------

def _clone_meta(opdef, args, kwargs):
    source = opdef.signature.bind(*args, **kwargs).arguments
    fmt = source.get("memory_format")
    if fmt is None or fmt is preserve_format:
        return same_metadata(opdef, args, kwargs)
    laid_out = copied_as(np.empty(source["input"].shape, np.uint8), fmt)  # the strides, from a 1-byte stand-in
    return MetaArray(source["input"].shape, source["input"].dtype, tuple(laid_out.strides))


@op(grad=_same_grad, method=True, meta=MetaRule(_clone_meta, "clone"),
    samples=(Sample((M23,)), Sample((SCALAR,)), Sample((I23,), {"memory_format": None})), tags=("core", "pointwise"))
def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own memory, laid out as ``memory_format`` says (by default the input's
    own order: the strides of a dense input are preserved).

    >>> import tensormodes as tm
    >>> x = tm.tensor([1, 2]); y = x.clone(); y[0] = 5
    >>> x.tolist(), y.tolist()
    ([1, 2], [5, 2])
    >>> tm.zeros(2, 3).t().clone(memory_format=tm.contiguous_format).stride()
    (2, 1)
    """
    return copied_as(input, memory_format)


def _to_copy_meta(opdef, args, kwargs):
    # A cpu tensor moving to the meta device keeps its memory format, as a meta copy does.
    result = same_metadata(opdef, args, kwargs)
    source = opdef.signature.bind(*args, **kwargs).arguments["input"]
    if type(source) is np.ndarray and source.itemsize:
        strides = tuple(s // source.itemsize for s in source.strides)
        return MetaArray(source.shape, result.dtype, dense_strides(source.shape, strides))
    return result


@op(grad=_same_grad, meta=MetaRule(_to_copy_meta, "_to_copy"), samples=(
    Sample((M23,), {"dtype": dt.float64}), Sample((M23,)), Sample((I23,), {"dtype": dt.float32}),
    Sample((M23,), {"dtype": dt.int64}), Sample((TensorSpec((2, 3), "float64"),), {"dtype": dt.float16}),
    Sample((M23,), {"dtype": dt.bfloat16}), Sample((SCALAR,), {"dtype": dt.float64})),
    schema={"non_blocking": "*bool=False", "memory_format": "*MemoryFormat?=None"}, tags=("core",))
def _to_copy(input: Tensor, *, dtype: dt.dtype | None = None, layout=None, device=None) -> Tensor:
    """A copy of ``input`` in ``dtype`` (its own dtype when None) on ``device``: what
    ``Tensor.to(dtype)``, ``double()``, ``type()``, ``to("meta")`` ... run, as PyTorch's
    ``aten::_to_copy``. Differentiable: the gradient is the result's, converted back to ``input``'s
    dtype.

    >>> import tensormodes as tm
    >>> tm._to_copy(tm.tensor([1.5, -2.5]), dtype=tm.int64)
    tensor([ 1, -2])
    """
    if layout is not None and layout is not strided:  # strided is the one layout here
        raise RuntimeError(f"_to_copy(): unsupported layout {layout!r}: only tensormodes.strided is supported")
    if device is not None:
        check_compute_device(device)
    target = input.dtype if dtype is None else resolve_dtype(dtype)._np
    return dt.half_staged(input, target).astype(target, order="K", copy=True)


# A view when it returns its input's memory, so the two share a version counter (PyTorch
# returns the tensor itself; a separate Tensor over the same memory would hide writes).
def _contiguous_meta(input, *, memory_format=None):
    if input.elem_strides == contiguous_strides(input.shape) or input.size <= 1:
        return input
    return MetaArray(input.shape, input.dtype)


def _contiguous_decomposition(input, memory_format=None):
    """PyTorch's composite ``contiguous``: the tensor itself when it is already laid out so (no
    op), else ``clone`` into that layout."""
    layout = ops.contiguous_format if memory_format is None else memory_format
    if input.is_contiguous(memory_format=layout):
        return input
    return ops.clone(input, memory_format=layout)


@op(grad=_same_grad, method=True, function=False, view=True, meta=rule(_contiguous_meta),
    decompose=_contiguous_decomposition,
    samples=(Sample((M23,)), Sample((SCALAR,))), schema={"memory_format": "MemoryFormat=0"})
def contiguous(input: Tensor, *, memory_format=None) -> Tensor:
    """The data in row-major layout: the same memory when already contiguous, else a copy.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3).t().contiguous().is_contiguous()
    True
    """
    if input.flags.c_contiguous:
        return input
    return np.ascontiguousarray(input)


def _detach_meta(input):  # noqa: A002 - the kernel's parameter name
    return view_of(input, input.shape, input.elem_strides)


@op(method=True, differentiable=False, alias=True, samples=(Sample((M23,)), Sample((SCALAR,))),
    meta=rule(_detach_meta))
def detach(input: Tensor) -> Tensor:
    """A new tensor sharing memory with ``input`` but outside autograd (never requires grad).

    >>> import tensormodes as tm
    >>> x = tm.zeros(2); y = x.detach(); y[0] = 1; x.tolist()
    [1.0, 0.0]
    """
    return input.view()
