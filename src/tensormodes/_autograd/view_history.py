"""In-place writes through views: the base's history after them (PyTorch's CopySlices).

>>> import tensormodes as tm
>>> base = tm.zeros(3, requires_grad=True).clone()
>>> base[1:].mul_(2)
tensor([0., 0.], grad_fn=<MulBackward0>)
>>> type(base.grad_fn).__name__
'CopySlices'
"""

from __future__ import annotations

import gc

import numpy as np

from .._ops.common import ops
from .._ops.shape import gather_back
from .._tensor_base import TensorBase, wrap_array
from .nodes import Node, differentiable_tensor, grad_edge, next_sequence_nr

__all__ = ["CopySlices", "ViewOfRebased", "refresh_view", "refresh_views_of", "rebase"]


# -- in-place writes through views ------------------------------------------------------------
# Writing through a view changes its base: the base's history becomes a CopySlices node
# (the view's region comes from the write's node, the rest from the base's old history),
# as in PyTorch. Views are located in their base by the flat positions of their elements.
# Other views of the base made before the write then describe old values: each tensor
# carries the generation of its base's history it was made under, and a view used after
# its base moved on gets a fresh node reading its region of the base's current history.
#
# A real view of a complex base (x.real, view_as_real(x)) is located among the base's real
# numbers (view_as_real(base), flattened), and a complex view of a real base
# (view_as_complex(x)) by its own real numbers: gradients cross over through those two ops.

_SAME, _REAL_OF_COMPLEX, _COMPLEX_OF_REAL = 0, 1, 2


def _view_positions(base, view):
    """``(positions, kind)``: the flat positions (in ``base``'s C order, counted in real numbers
    when ``kind`` is not ``_SAME``, see above) of ``view``'s elements (view-shaped, with a last
    dimension of 2 for a complex view of a real base), or None when the layout is not one this
    can describe (a base that is not C-contiguous, another reinterpretation of the bytes)."""
    data, region = base._data, view._data
    if not data.flags.c_contiguous:
        return None
    kind = _SAME
    if region.dtype != data.dtype:
        if data.dtype.kind == "c" and region.dtype == data.real.dtype:
            kind, data = _REAL_OF_COMPLEX, data.view(region.dtype)
        elif region.dtype.kind == "c" and data.dtype == region.real.dtype:
            part = region.real
            kind, region = _COMPLEX_OF_REAL, np.lib.stride_tricks.as_strided(
                part, region.shape + (2,), region.strides + (part.itemsize,))
        else:
            return None
    itemsize = data.itemsize
    offset = region.__array_interface__["data"][0] - data.__array_interface__["data"][0]
    if offset % itemsize or any(stride % itemsize for stride in region.strides):
        return None
    positions = np.arange(data.size, dtype=np.int64)
    step = positions.itemsize
    return np.lib.stride_tricks.as_strided(
        positions[offset // itemsize:], region.shape,
        tuple(stride // itemsize * step for stride in region.strides)).copy(), kind


def _as_real(grad, kind):
    """A gradient in the terms positions count in (see ``_view_positions``)."""
    return ops.view_as_real(grad) if grad.is_complex() and kind != _SAME else grad


class _RegionNode(Node):
    """A node between a base and the region of it a view covers (flat positions, see
    ``_view_positions``)."""

    def __init__(self, edges: tuple, located: tuple, base_shape: tuple) -> None:
        self._sequence_nr = next_sequence_nr()
        self.next_functions = edges
        self._positions, self._kind = located
        self._base_shape = base_shape


class CopySlices(_RegionNode):
    """A base's history after a write through one of its views: edges to the base's old
    history and to the write's node."""

    def apply(self, grads: tuple) -> tuple:
        kind = self._kind
        flat = _as_real(grads[0], kind).reshape(-1)
        base_grad = None
        if self.next_functions[0][0] is not None:
            base_grad = flat.index_fill(0, self._positions.reshape(-1), 0)
            if kind == _REAL_OF_COMPLEX:
                base_grad = ops.view_as_complex(base_grad.reshape(self._base_shape + (2,)))
            else:
                base_grad = base_grad.reshape(self._base_shape)
        view_grad = flat[self._positions]
        if kind == _COMPLEX_OF_REAL:
            view_grad = ops.view_as_complex(view_grad)
        return base_grad, view_grad


class ViewOfRebased(_RegionNode):
    """A view's history regenerated after its base's history changed: its region of the base."""

    def apply(self, grads: tuple) -> tuple:
        kind = self._kind
        if kind == _REAL_OF_COMPLEX:
            gathered = gather_back(grads[0], self._base_shape + (2,), self._positions)
            return (ops.view_as_complex(gathered),)
        return (gather_back(_as_real(grads[0], kind), self._base_shape, self._positions),)


def _positions_or_raise(base, view, what: str) -> tuple:
    located = _view_positions(base, view)
    if located is None:
        raise RuntimeError(f"{what}: tensormodes' autograd cannot locate this view in its base (the base is not "
                           "contiguous, or the view reinterprets its dtype); work on a clone instead")
    return wrap_array(located[0]), located[1]


def rebase(base, view) -> None:
    """Give ``base`` the history of a write through ``view`` (see above)."""
    located = _positions_or_raise(base, view, "in-place write through a view")
    node = CopySlices((grad_edge(base), (view._grad_fn, view._output_nr)), located, base._data.shape)
    had_history = base._requires_grad
    base._requires_grad = True
    base._grad_fn = node
    base.__dict__.pop("_output_nr", None)
    base._history_gen += 1
    view._history_gen = base._history_gen
    if not had_history:
        refresh_views_of(base)


def refresh_views_of(base) -> None:
    """Refresh the views of ``base`` made while it had no history, now that it has one.

    Views that require grad are refreshed when next used (the recorders check them), but
    these did not require grad, so nothing would look at them: they would stay constants,
    silently losing their share of the gradient. A base does not know its views (tracking
    them would cost every view op), so they are found among the garbage collector's
    referrers of the base - a whole-heap scan, paid only on this rare event: the first
    in-place write giving history to a tensor that has had views. A view holds its base
    directly, or through its ``__dict__`` once that exists as an object.
    """
    if not base._has_views:
        return
    referrers = gc.get_referrers(base)
    views = [r for r in referrers if isinstance(r, TensorBase) and r._view_base is base]
    dicts = [r for r in referrers if type(r) is dict and r.get("_view_base") is base]
    if dicts:
        views += [t for t in gc.get_referrers(*dicts)
                  if isinstance(t, TensorBase) and any(t.__dict__ is d for d in dicts)]
    for view in views:
        if not view._requires_grad and differentiable_tensor(view):
            if _view_positions(base, view) is None:
                view._requires_grad = True  # not locatable: its next use raises refresh_view's error
            else:
                refresh_view(view)


def refresh_view(view) -> None:
    """Give a view made before its base's last in-place change a node reading its region of the
    base's current history (a no-op for views that are current)."""
    base = view._view_base
    if base._history_gen != view._history_gen and base._requires_grad:
        located = _positions_or_raise(base, view, "use of a view after an in-place change of its base")
        view._grad_fn = ViewOfRebased((grad_edge(base),), located, base._data.shape)
        view._requires_grad = True
        view.__dict__.pop("_output_nr", None)
        view._history_gen = base._history_gen
