"""What passes may assume about a node, from the op table's facts (``tensormodes._ops.OPS``).

* *random*: the op draws from a generator (declared in ``_ops/random.py`` or
  ``_ops/random_inplace.py``: ``RANDOM_MODULES``), so each
  call gives new values and advances the generator: never merged, folded or dropped;
* *mutating*: an in-place variant (``add_``), a kernel that writes its input
  (``__setitem__``), an ``out=`` call, ``operator.setitem`` / ``setattr``: never merged,
  folded or dropped, and it may change any value it can reach through views;
* *pure*: a known op that is neither: the same inputs give the same result.

Calls the table does not know (user functions, Python-level composites such as
``nn.functional.dropout``) are never merged or folded; dead-code elimination keeps
torch.fx's rule and drops them when unused.
"""

from __future__ import annotations

import functools
import operator

from .._api.declarations import pure_methods
from .._ops import OPS, RANDOM_MODULES, OpDef
from ..overrides import resolve_name
from ._codegen import INFIX, UNARY
from .node import Node

__all__ = ["has_side_effect", "call_mutates", "is_impure", "is_random", "is_mutating", "is_pure", "op_of"]

_PURE_FUNCTIONS = frozenset({*INFIX, *UNARY, operator.getitem, getattr, operator.abs, len})
_MUTATING_FUNCTIONS = frozenset({operator.setitem, setattr})
_SIDE_EFFECTFUL: set = set()  # functions registered with has_side_effect


def has_side_effect(fn):
    """Register ``fn`` as having a side effect: ``eliminate_dead_code`` keeps its
    ``call_function`` nodes even when their value is unused (torch.fx's decorator).

    >>> from tensormodes import fx
    >>> @fx.has_side_effect
    ... def log(x):
    ...     print(x)
    >>> g = fx.Graph(); x = g.placeholder("x"); _ = g.call_function(log, (x,)); _ = g.output(x)
    >>> g.eliminate_dead_code(), len(g.nodes)
    (False, 3)
    """
    _SIDE_EFFECTFUL.add(fn)
    return fn

@functools.cache
def _pure_tensor_methods() -> frozenset[str]:
    return pure_methods()  # the Tensor layer's methods declared pure (not in the op table)


@functools.cache
def _tables() -> tuple[dict, dict]:
    functions: dict[tuple[str, str], tuple[OpDef, bool]] = {}
    methods: dict[str, tuple[OpDef, bool]] = {}
    for opdef in OPS.values():
        if opdef.function:
            functions[(opdef.namespace, opdef.function)] = (opdef, False)
        if opdef.method:
            methods[opdef.method] = (opdef, False)
        if opdef.inplace:
            methods[opdef.inplace] = (opdef, True)
        if opdef.inplace_function:  # ``tensormodes.abs_``
            functions[(opdef.namespace, opdef.inplace)] = (opdef, True)
    return functions, methods


def op_of(node: Node) -> tuple[OpDef | None, bool]:
    """The op-table entry a ``call_function`` / ``call_method`` node calls, and whether the
    call is the op's in-place form; ``(None, False)`` for anything else."""
    functions, methods = _tables()
    if node.op == "call_method":
        return methods.get(node.target, (None, False))
    if node.op == "call_function":
        target = node.target
        key = (getattr(target, "__module__", None), getattr(target, "__name__", None))
        found = functions.get(key)
        if found is not None:
            return found
    return None, False


def is_random(node: Node) -> bool:
    """True if the node draws random numbers (``randn``, ``rand_like``, ``x.uniform_()`` ...)."""
    opdef, _ = op_of(node)
    return opdef is not None and opdef.kernel.__module__ in RANDOM_MODULES


def is_mutating(node: Node) -> bool:
    """True if the node writes into a tensor (in-place method, ``setitem``, ``out=``)."""
    if node.op == "call_function" and node.target in _MUTATING_FUNCTIONS:
        return True
    if node.op not in ("call_function", "call_method"):
        return False
    if node.kwargs.get("out") is not None:
        return True
    opdef, inplace = op_of(node)
    if opdef is not None:
        return inplace or opdef.mutates
    # PyTorch's convention for the tensor layer's own methods (requires_grad_, resize_ ...)
    target = node.target
    return node.op == "call_method" and target.endswith("_") and not target.endswith("__")


def call_mutates(target, kwargs: dict) -> bool:
    """True if calling the function ``target`` with ``kwargs`` writes into a tensor: an ``out=``
    argument, ``operator.setitem`` / ``setattr``, or a library function that works in place
    (``tm.relu_``, the op table's mutating ops). Functions the library does not know are
    assumed not to."""
    if kwargs.get("out") is not None or target in _MUTATING_FUNCTIONS:
        return True
    opdef, inplace = op_of(_CallView(target, kwargs))
    if opdef is not None:
        return inplace or opdef.mutates
    name = getattr(target, "__name__", "") or ""
    public = resolve_name(target) or ""
    return public.startswith("tensormodes.") and name.endswith("_") and not name.endswith("__")


class _CallView:
    """What :func:`op_of` reads of a node, for a call not recorded yet."""

    op = "call_function"

    def __init__(self, target, kwargs: dict) -> None:
        self.target = target
        self.kwargs = kwargs


def is_impure(node: Node) -> bool:
    """True if removing the node when unused would change the program: inputs, the output,
    random draws and writes (and a ``call_module`` whose module sets ``_is_impure``)."""
    if node.op in ("placeholder", "output"):
        return True
    if node.op == "call_function" and _registered_side_effect(node.target):
        return True
    if node.op == "call_module":
        owner = node.graph.owning_module
        module = owner
        for part in node.target.split("."):
            module = getattr(module, part, None)
        return bool(getattr(module, "_is_impure", False))
    return is_random(node) or is_mutating(node)


def _registered_side_effect(target) -> bool:
    try:
        return target in _SIDE_EFFECTFUL
    except TypeError:  # an unhashable callable
        return False


def is_pure(node: Node) -> bool:
    """True if the node is known to give equal results for equal inputs and to write nothing:
    ``get_attr``, operators, ``getattr``, and the op table's non-random, non-writing ops."""
    if node.op == "get_attr":
        return True
    if node.op == "call_function" and node.target in _PURE_FUNCTIONS:
        return not node.kwargs
    if node.op == "call_method" and node.target in _pure_tensor_methods():
        return node.kwargs.get("copy") is not True
    opdef, inplace = op_of(node)
    if opdef is None or inplace or opdef.mutates or node.kwargs.get("out") is not None:
        return False
    return opdef.kernel.__module__ not in RANDOM_MODULES
