"""The Tensor layer's own properties (``shape``, ``dtype``, ``grad``, ``T`` ...): plain
functions declared with ``tensor_property``; ``build.install()`` turns each into a dispatching
property of ``Tensor`` (its ``__get__``/``__set__`` are what handlers see), with the getter
inlined into the fast path where ``inline`` gives it as an expression.

>>> import tensormodes as tm
>>> x = tm.ones(2, 3, requires_grad=True)
>>> x.shape, x.mT.shape, x.is_leaf, x.grad is None
(tensormodes.Size([2, 3]), tensormodes.Size([3, 2]), True, True)
"""

from __future__ import annotations

import warnings

from .. import _dtype as dt
from .._autograd.graph import version_of
from .._device import CPU, META
from .._memory_format import strided
from .._meta_array import MetaArray
from .._ops.common import ops
from .._tensor_base import set_requires_grad, wrap_array
from .declarations import tensor_property
from .tensor import META_CLASSES, Size, Tensor


def _shape(self) -> Size:
    """The tensor's shape, as a ``Size``."""
    return Size(self._data.shape)


def _dtype(self) -> dt.dtype:
    """The tensor's element type."""
    return dt.NP_TO_DTYPE[self._data.dtype]


def _device(self):
    """The device the tensor lives on."""
    return CPU if type(self._data) is not MetaArray else META


def _is_meta(self) -> bool:
    """True for a tensor on the meta device (shape, dtype and strides, no data)."""
    return type(self._data) is MetaArray


def _is_cpu(self) -> bool:
    """True for a tensor on the cpu device."""
    return type(self._data) is not MetaArray


def _on_no_accelerator(self) -> bool:
    """False: tensormodes computes on the CPU (and the meta device) only."""
    return False


def _not_sparse(self) -> bool:
    """False: every tensor here is strided (dense)."""
    return False


def _layout(self):
    """The memory layout: ``tm.strided`` (dense), the only layout here.

    >>> import tensormodes as tm
    >>> tm.zeros(2).layout
    tensormodes.strided
    """
    return strided


def _ndim(self) -> int:
    """Number of dimensions (same as ``dim()``)."""
    return self._data.ndim


def _itemsize(self) -> int:
    """Bytes per element."""
    return self._data.itemsize


def _nbytes(self) -> int:
    """Bytes of all elements."""
    return self._data.nbytes


def _requires_grad_get(self) -> bool:
    """Whether gradients are recorded for this tensor."""
    return self._requires_grad


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


def _grad_get(self):
    """The accumulated gradient, or None."""
    grad = self._grad
    if grad is None and self._grad_fn is not None and not self.__dict__.get("_retains_grad"):
        warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=3)
    return grad


def _grad_set(self, value) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if value._data.shape != self._data.shape:
            raise RuntimeError("assigned grad has data of a different size")
        if value._data.dtype != self._data.dtype:
            raise RuntimeError("assigned grad has data of a different type")
    self._grad = value


def _grad_fn_get(self):
    """The backward node that created this tensor (None for leaves)."""
    return self._grad_fn


def _is_leaf(self) -> bool:
    """True for tensors not produced by a recorded operation."""
    return self._grad_fn is None


def _data_get(self) -> Tensor:
    """A tensor sharing storage but detached from autograd."""
    return wrap_array(self._data)


def _data_set(self, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
    self._data = value._data
    _match_class_to_data(self)


def _match_class_to_data(t: Tensor) -> None:
    """Give ``t`` the meta class when its data became meta, or back (``param.data = ...``)."""
    cls = type(t)
    if type(t._data) is MetaArray:
        t.__class__ = META_CLASSES.get(cls, cls)
    else:
        for plain, meta in META_CLASSES.items():
            if cls is meta:
                t.__class__ = plain


def _retains_grad(self) -> bool:
    """True if ``retain_grad()`` was called on this non-leaf tensor."""
    return self.__dict__.get("_retains_grad", False)


def _output_nr_get(self) -> int:
    """Which output of its ``grad_fn`` this tensor is (0 for leaves and single outputs)."""
    return self._output_nr


def _version_get(self) -> int:
    """How many in-place modifications this tensor's storage has seen."""
    return version_of(self)


def _base_get(self):
    """The tensor this one is a view of, or None."""
    return self._view_base


def _transposed(self) -> Tensor:
    """The tensor with its dimensions reversed (``permute(n-1, ..., 0)``)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=3)
    elif ndim != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                      "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                      "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                      "tensor.", UserWarning, stacklevel=3)
    return self.permute(*range(ndim - 1, -1, -1))  # an op: a view with autograd history


def _matrix_transposed(self) -> Tensor:
    """The last two dimensions transposed (a batch of matrices)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=3)
        return self.permute()
    if ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return self.transpose(-2, -1)


def _conj_of(t: Tensor) -> Tensor:
    return t.conj() if t._data.dtype.kind == "c" else t


def _conjugate_transposed(self) -> Tensor:
    """The conjugate transpose of a matrix (``transpose(0, 1).conj()``)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=3)
        return _conj_of(self.permute())
    if ndim != 2:
        hint = ". For batches of matrices, consider using tensor.mH" if ndim > 2 else "."
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor{hint}")
    return _conj_of(self.transpose(0, 1))


def _matrix_conjugate_transposed(self) -> Tensor:
    """The conjugate transpose of a batch of matrices (``transpose(-2, -1).conj()``)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=3)
        return _conj_of(self.permute())
    if ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return _conj_of(self.transpose(-2, -1))


def _real(self) -> Tensor:
    """The real part (a view for complex tensors, the tensor itself otherwise)."""
    return ops.real(self)  # an op: a view with autograd history


def _imag(self) -> Tensor:
    """The imaginary part of a complex tensor (a view)."""
    return ops.imag(self)



_INLINE_NAMES = {"_Size": Size, "_NP_TO_DTYPE": dt.NP_TO_DTYPE, "_CPU": CPU, "_STRIDED": strided}

for _name, _get, _set, _inline in (
    ("shape", _shape, None, "_Size(self._data.shape)"),
    ("dtype", _dtype, None, "_NP_TO_DTYPE[self._data.dtype]"),
    ("device", _device, None, "_CPU"),
    ("is_meta", _is_meta, None, "False"), ("is_cpu", _is_cpu, None, "True"),
    # Devices and layouts this library does not have: honest constant answers.
    ("is_cuda", _on_no_accelerator, None, "False"), ("is_mps", _on_no_accelerator, None, "False"),
    ("is_xpu", _on_no_accelerator, None, "False"),
    ("is_sparse", _not_sparse, None, "False"), ("is_sparse_csr", _not_sparse, None, "False"),
    ("layout", _layout, None, "_STRIDED"),
    ("is_quantized", _not_sparse, None, "False"), ("is_nested", _not_sparse, None, "False"),
    ("ndim", _ndim, None, "self._data.ndim"),
    ("itemsize", _itemsize, None, None), ("nbytes", _nbytes, None, None),
    ("requires_grad", _requires_grad_get, set_requires_grad, "self._requires_grad"),
    # Leaves pay one extra check; a non-leaf's getter warns like PyTorch's.
    ("grad", _grad_get, _grad_set, "g if (g := self._grad) is not None or self._grad_fn is None else _get(self)"),
    ("grad_fn", _grad_fn_get, None, "self._grad_fn"),
    ("is_leaf", _is_leaf, None, "self._grad_fn is None"),
    ("data", _data_get, _data_set, None),
    ("_base", _base_get, None, "self._view_base"),
    ("retains_grad", _retains_grad, None, None),
    ("_version", _version_get, None, None),
    ("output_nr", _output_nr_get, None, "self._output_nr"),
    ("T", _transposed, None, None), ("mT", _matrix_transposed, None, None),
    ("H", _conjugate_transposed, None, None), ("mH", _matrix_conjugate_transposed, None, None),
    ("real", _real, None, None), ("imag", _imag, None, None),
):
    tensor_property(_get, _set, name=_name, inline=_inline)
