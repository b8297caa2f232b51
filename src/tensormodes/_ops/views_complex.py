"""Complex views: ``view_as_real`` (a complex tensor's memory as pairs of real numbers) and
``view_as_complex`` (the reverse), both sharing memory with their input as PyTorch's do.

>>> import tensormodes as tm
>>> tm.view_as_real(tm.tensor([1 + 2j])).tolist()
[[1.0, 2.0]]
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided as _np_as_strided

from .._meta_array import view_of
from ._samples import M23
from .common import array_type_name, ops
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op


def _view_as_real_meta(input):
    if input.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    part = np.dtype(input.dtype.char.lower())  # complex64 -> float32 ("F" -> "f")
    view = view_of(input, (*input.shape, 2), (*(2 * s for s in input.elem_strides), 1), dtype=part)
    view.offset *= 2
    return view


def _view_as_real_grad(grad):
    return ops.view_as_complex(grad.contiguous())


@op(grad=_view_as_real_grad, view=True, meta=rule(_view_as_real_meta), errors=(Sample((M23,)),), samples=(
    Sample((TensorSpec((2, 3), "complex64"),)), Sample((TensorSpec((), "complex128"),)),
    Sample((TensorSpec((3, 2), "complex128"),))))
def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's memory seen as real numbers: a view with a last dimension of size 2
    holding each element's real and imaginary parts.

    >>> import tensormodes as tm
    >>> tm.view_as_real(tm.tensor([1 + 2j, 3 - 1j]))
    tensor([[ 1.,  2.],
            [ 3., -1.]])
    """
    if input.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    part = input.real
    return _np_as_strided(part, input.shape + (2,), input.strides + (part.itemsize,))


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _storage_offset(array: np.ndarray) -> int:
    """Elements between the start of the memory ``array`` views and its first element."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return (array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]) // array.itemsize


def _check_view_as_complex(input, offset: int) -> None:
    if input.dtype not in _COMPLEX_OF:
        if input.dtype == np.float16:
            raise NotImplementedError("view_as_complex(): a float16 tensor would be complex32 (ComplexHalf), "
                                      "which tensormodes does not have")
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a "
                           f"tensor of scalar type: {array_type_name(input)}")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    itemsize = input.itemsize
    if input.strides[-1] != itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(stride % (2 * itemsize) for stride in input.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")


def _view_as_complex_meta(input):
    _check_view_as_complex(input, input.offset)
    view = view_of(input, input.shape[:-1], tuple(s // 2 for s in input.elem_strides[:-1]),
                   dtype=_COMPLEX_OF[input.dtype])
    view.offset //= 2
    return view


def _view_as_complex_grad(grad):
    return ops.view_as_real(grad)


@op(grad=_view_as_complex_grad, view=True, meta=rule(_view_as_complex_meta),
    errors=(Sample((M23,)), Sample((TensorSpec((2,), "int64"),)), Sample((TensorSpec((2, 2), "float16"),))), samples=(
    Sample((TensorSpec((3, 2)),)), Sample((TensorSpec((2,), "float64"),)), Sample((TensorSpec((2, 2, 2)),))))
def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dimension has size 2 seen as complex numbers (real and
    imaginary parts), as a view without that dimension.

    >>> import tensormodes as tm
    >>> tm.view_as_complex(tm.tensor([[1.0, 2.0], [3.0, -1.0]]))
    tensor([1.+2.j, 3.-1.j])
    """
    _check_view_as_complex(input, _storage_offset(input))
    return input.view(_COMPLEX_OF[input.dtype])[..., 0]
