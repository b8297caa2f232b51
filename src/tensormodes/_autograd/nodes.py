"""The backward graph's nodes and the bookkeeping every tensor of it carries: version counters
(shared by a tensor and its views), ``Node`` / ``AccumulateGrad``, the edge a tensor feeds.

``graph`` records nodes; ``view_history`` rewrites a base's history after writes through views;
the engine runs them.

>>> import tensormodes as tm
>>> x = tm.ones(2, requires_grad=True)
>>> type(grad_edge(x)[0]).__name__, version_of(x)
('AccumulateGrad', 0)
"""

from __future__ import annotations

import itertools
import weakref
from typing import NamedTuple

from .. import _dtype as dt
from .._tensor_base import wrap_array

__all__ = ["Node", "AccumulateGrad", "grad_edge", "alias", "version_counter", "version_of", "bump_version",
           "share_version", "next_sequence_nr", "differentiable_tensor", "GradientEdge",
           "saved_properties"]

_BFLOAT16 = dt.bfloat16._np
_DIFFERENTIABLE_KINDS = frozenset("fc")


def differentiable_tensor(t) -> bool:
    """Whether ``t``'s dtype can carry a gradient (floating, complex, bfloat16)."""
    data = t._data
    return data.dtype.kind in _DIFFERENTIABLE_KINDS or data.dtype == _BFLOAT16


def alias(t):
    """A new plain tensor sharing ``t``'s storage and version counter, without history."""
    view = wrap_array(t._data)
    share_version(view, t)
    return view


# -- version counters ------------------------------------------------------------------------
# A tensor and its views share one counter (a one-element list), bumped by every
# in-place write; a saved tensor remembers the version it was saved at.

def version_counter(t) -> list:
    counter = t.__dict__.get("_version_counter")
    if counter is None:
        counter = t._version_counter = [0]
    return counter


def version_of(t) -> int:
    counter = t.__dict__.get("_version_counter")
    return 0 if counter is None else counter[0]


def bump_version(t) -> None:
    """Record an in-place modification of ``t`` (and of every tensor sharing its storage)."""
    version_counter(t)[0] += 1


def share_version(view, base) -> None:
    """Make ``view`` share ``base``'s version counter."""
    view._version_counter = version_counter(base)


# -- nodes ----------------------------------------------------------------------------------------

# Nodes are numbered as they are created. A node's inputs existed before it, so the
# nodes feeding gradients into a node all have higher numbers: the engine runs nodes
# from the highest number down and never needs to count dependencies.
next_sequence_nr = itertools.count().__next__


class Node:
    """A function of the backward graph: takes output gradients, returns input gradients.

    ``next_functions`` holds, for each input, ``(node, output_nr)`` or ``(None, 0)``
    for inputs that need no gradient. Subclasses set ``_sequence_nr`` from
    ``next_sequence_nr()`` when created.
    """

    _sequence_nr = -1

    next_functions: tuple = ()
    # True once the node has hooks or outputs needing zeros: the engine's loop checks
    # this one flag and only then looks for them (class defaults cost nothing per node).
    _special = False
    _pre_hooks = _post_hooks = _tensor_hooks = _output_meta = None

    def name(self) -> str:
        """The node's name, PyTorch style (``'MulBackward0'``)."""
        return type(self).__name__

    def apply(self, grads: tuple) -> tuple:
        """Input gradients (one per entry of ``next_functions``) from output gradients."""
        raise NotImplementedError

    def release(self) -> None:
        """Free saved tensors (after a backward pass without ``retain_graph``)."""

    def register_hook(self, hook) -> None:
        """``hook(grad_inputs, grad_outputs)`` runs after the node; a non-None result
        replaces ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(hook)
        self._special = True

    def register_prehook(self, hook) -> None:
        """``hook(grad_outputs)`` runs before the node; a non-None result replaces them."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(hook)
        self._special = True

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """Sink of a leaf tensor: adds incoming gradients into its ``.grad``."""

    def __init__(self, variable) -> None:
        self._variable = weakref.ref(variable)
        self._sequence_nr = next_sequence_nr()

    @property
    def variable(self):
        """The leaf tensor this node accumulates into."""
        return self._variable()

    def apply(self, grads: tuple) -> tuple:
        return ()


def grad_edge(t) -> tuple:
    """The ``(node, output_nr)`` a gradient for ``t`` must flow into."""
    node = t._grad_fn
    if node is not None:
        return (node, t._output_nr)
    if not t._requires_grad:
        return (None, 0)
    accumulator = t._grad_accumulator
    if accumulator is None:
        accumulator = t._grad_accumulator = AccumulateGrad(t)
    return (accumulator, 0)


def saved_properties(names: tuple, freed_error) -> dict:
    """PyTorch's ``node._saved_self``, ``_saved_other``, ``_saved_result`` ... for an op's node class
    whose formula takes ``names`` (``input`` is PyTorch's ``self``, ``<name>_shape`` its
    ``<name>_sym_sizes``): properties reading a saved argument, unpacked (saved-tensor hooks run).
    Properties, not ``__getattr__``, which would slow every attribute read of every node."""
    def reader(index: int) -> property:
        def read(node):
            if node._arguments is None:
                raise freed_error()
            value = node._arguments[index]
            return value.unpack(node) if hasattr(value, "unpack") else value
        return property(read)
    renamed = (("self" + name[5:] if name.startswith("input") else name) for name in names)
    return {"_saved_" + (name[:-6] + "_sym_sizes" if name.endswith("_shape") else name): reader(i)
            for i, name in enumerate(renamed) if name not in ("grad", "needs_input_grad")}


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor arrives in the backward graph: ``(node, output_nr)``
    (PyTorch's ``torch.autograd.graph.GradientEdge``; ``autograd.grad`` takes one as an input).
    ``ownership_token`` is PyTorch's, kept for its signature (here the node keeps its graph alive)."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None
