"""``TensorBase``: the bare tensor at the bottom of every layer — an array (a NumPy ``ndarray``,
or a ``MetaArray`` on the meta device) and the autograd slots; no public methods, no dispatch.

Every layer imports it normally: kernels read ``t._data``, autograd keeps the backward graph in
its slots and makes the tensors it needs for bookkeeping with the helpers below (``wrap_array`` ...), the override and
dispatch layers recognise plain tensors by it. ``Tensor``, the public class with PyTorch's
methods and properties, is built on it in ``_api/tensor.py``.

Tensors made here are *plain* tensors: of the class that declares itself plain where it is
defined (``class Tensor(TensorBase, plain="tensor")``, and ``plain="meta_tensor"`` for the
class of plain meta tensors), recorded in :data:`PLAIN` — that is the one link from this layer
to the classes built on it, the same one PyTorch's C++ core keeps to ``torch.Tensor``.

>>> import numpy as np
>>> import tensormodes as tm
>>> t = wrap_array(np.ones(2, np.float32))
>>> type(t) is tm.Tensor, isinstance(t, TensorBase), meta_of(t)
(True, True, ((2,), tensormodes.float32))
"""

from __future__ import annotations

import numpy as np

from . import _dtype as dt
from ._meta_array import MetaArray, copy_of, meta_like

__all__ = ["TensorBase", "PLAIN", "wrap_array", "meta_of", "copy_detached", "ones_like", "zeros", "set_requires_grad"]


class _PlainClasses:
    """The classes of plain tensors, filled in as they are defined (see the module docstring)."""

    __slots__ = ("tensor", "meta_tensor")

    def __init__(self) -> None:
        self.tensor = self.meta_tensor = None


PLAIN = _PlainClasses()


class TensorBase:
    """An array and the autograd state; see the module docstring.

    ``_requires_grad`` is a slot (tested on every call of the fast path: a slot reads faster
    than a class default), set wherever a tensor is created; the rest of the autograd state
    lives in class defaults, so a fresh tensor costs two attribute sets.
    """

    __slots__ = ("_data", "_requires_grad", "__dict__", "__weakref__")
    _grad = None
    _grad_fn = None
    _output_nr = 0  # which output of _grad_fn this tensor is
    _grad_accumulator = None  # a leaf's AccumulateGrad node, once it has one
    _history_gen = 0  # bumped by in-place changes; a view made under an older one of its base is stale
    _view_base = None
    _has_views = False  # set on a base when a view of it is made (see _autograd.graph.refresh_views_of)

    def __init_subclass__(cls, *, plain: str | None = None, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if plain is not None:
            setattr(PLAIN, plain, cls)


_new = object.__new__


def wrap_array(array) -> TensorBase:
    """A plain tensor over ``array`` (no copy), without history; a meta tensor over a MetaArray."""
    t = _new(PLAIN.tensor if type(array) is not MetaArray else PLAIN.meta_tensor)
    t._data = array
    t._requires_grad = False
    return t


def meta_of(t: TensorBase) -> tuple:
    """``(shape, dtype)`` of a tensor, without a public call."""
    return t._data.shape, dt.NP_TO_DTYPE[t._data.dtype]


def copy_detached(t: TensorBase) -> TensorBase:
    """A new plain tensor with a copy of ``t``'s data and no history."""
    data = t._data
    return wrap_array(copy_of(data) if type(data) is MetaArray else data.copy())


def ones_like(t: TensorBase) -> TensorBase:
    """Ones with ``t``'s shape and dtype, no history."""
    if type(t._data) is MetaArray:
        return wrap_array(meta_like(t._data.shape, t._data.dtype))
    array = np.empty(t._data.shape, t._data.dtype)
    array.fill(1)  # np.ones is a slower Python-level helper
    return wrap_array(array)


def zeros(shape: tuple, dtype, like: TensorBase | None = None) -> TensorBase:
    """A zero tensor of ``shape`` and ``dtype``, no history, on ``like``'s device (cpu when None)."""
    if like is not None and type(like._data) is MetaArray:
        return wrap_array(meta_like(shape, dtype._np))
    return wrap_array(np.zeros(shape, dtype._np))


def set_requires_grad(t: TensorBase, value) -> None:
    """Set ``t.requires_grad`` with PyTorch's checks: a bool, a floating or complex dtype to
    require gradients, and only a leaf may stop requiring them."""
    if not isinstance(value, bool):
        raise TypeError(f"requires_grad must be a bool, not {type(value).__name__}")
    if value and not (t._data.dtype.kind in "fc" or t._data.dtype == dt.bfloat16._np):
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    if not value and t._grad_fn is not None:
        raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                           "use a computed variable in a subgraph that doesn't require differentiation "
                           "use var_no_grad = var.detach().")
    t._requires_grad = value
