"""Common-subexpression elimination: one node for each repeated pure computation."""

from __future__ import annotations

from typing import Any

from .. import _purity
from ..graph_module import GraphModule
from ..node import Node

__all__ = ["common_subexpression_elimination", "mutated_or_aliased"]


def _key(a: Any) -> Any:
    """A hashable stand-in for an argument structure (nodes by identity, containers by type)."""
    if isinstance(a, Node):
        return ("node", id(a))
    if isinstance(a, (tuple, list)):
        return (type(a).__name__, tuple(_key(v) for v in a))
    if isinstance(a, dict):
        return ("dict", tuple((k, _key(v)) for k, v in a.items()))
    if isinstance(a, slice):
        return ("slice", _key(a.start), _key(a.stop), _key(a.step))
    try:
        hash(a)
    except TypeError:
        return ("object", id(a))
    return (type(a).__name__, a)


def mutated_or_aliased(nodes) -> set[Node]:
    """Every node whose value a mutating node may write: the written argument and, since a
    write through a view changes its base, everything that value was computed from."""
    touched: set[Node] = set()
    pending = [n.args[0] for n in nodes if _purity.is_mutating(n) and n.args and isinstance(n.args[0], Node)]
    while pending:
        node = pending.pop()
        if node not in touched:
            touched.add(node)
            pending.extend(node.all_input_nodes)
    return touched


def common_subexpression_elimination(gm: GraphModule) -> bool:
    """Merge nodes computing the same pure op on the same inputs; returns whether any merged.

    Random ops, in-place writes, unknown functions and values a write may reach are never
    merged, and a write ends every earlier match (what it wrote may differ afterwards).

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> gm = fx.symbolic_trace(lambda x: tm.randn(2) + tm.randn(2) + x.exp() + x.exp())
    >>> common_subexpression_elimination(gm), [n.name for n in gm.graph.nodes if n.op != "placeholder"]
    (True, ['randn', 'randn_1', 'add', 'exp', 'add_1', 'add_2', 'output'])
    """
    graph = gm.graph
    excluded = mutated_or_aliased(graph.nodes)
    seen: dict[Any, Node] = {}
    changed = False
    for node in list(graph.nodes):
        if _purity.is_mutating(node):
            seen.clear()
            continue
        if node in excluded or not _purity.is_pure(node):
            continue
        target = ("callable", id(node.target)) if callable(node.target) else node.target
        key = (node.op, target, _key(node.args), _key(node.kwargs))
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = node
            continue
        node.replace_all_uses_with(earlier)
        graph.erase_node(node)
        changed = True
    if changed:
        gm.recompile()
    return changed

