"""``replace_pattern``: find every occurrence of a pattern graph and splice in a replacement.

>>> import tensormodes as tm
>>> from tensormodes import fx
>>> def f(x):
...     return (x + 1).relu() * 2
>>> gm = fx.symbolic_trace(f)
>>> matches = fx.replace_pattern(gm, lambda a: (a + 1).relu(), lambda a: (a + 1).clamp(min=0))
>>> len(matches), [n.target for n in gm.graph.nodes if n.op == "call_method"]
(1, ['clamp'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One replaced occurrence: the node that produced the pattern's (first) result, and the map
    from pattern nodes to the graph's nodes (or values, for placeholders bound to constants)."""

    anchor: Node
    nodes_map: dict[Node, Any]


def _as_graph(pattern: Callable | GraphModule | Graph) -> Graph:
    if isinstance(pattern, Graph):
        return pattern
    if isinstance(pattern, GraphModule):
        return pattern.graph
    return symbolic_trace(pattern).graph


def _results(graph: Graph, role: str) -> list[Node]:
    """The nodes a pattern or replacement returns: one value, or a tuple / list of them."""
    outputs = [n for n in graph.nodes if n.op == "output"]
    value = outputs[0].args[0] if len(outputs) == 1 else None
    results = list(value) if isinstance(value, (tuple, list)) else [value]
    # A replacement may return an input itself (it removes what the pattern computed).
    if not results or not all(isinstance(r, Node) and (r.op != "placeholder" or role == "replacement")
                              for r in results):
        raise ValueError(f"replace_pattern: the {role} must return a value computed from its inputs, or a tuple "
                         f"of them")
    return results


def _match(pattern_output: Node, anchor: Node, bound: dict[Node, Any]) -> dict[Node, Any] | None:
    """Extend ``bound`` (pattern node -> graph node) by matching the pattern ending at
    ``pattern_output`` against the graph ending at ``anchor``; None if they differ."""
    bound = dict(bound)
    pending = [(pattern_output, anchor)]
    while pending:
        p, g = pending.pop()
        if p in bound:
            if bound[p] is not g and bound[p] != g:
                return None
            continue
        if p.op == "placeholder":
            bound[p] = g
            continue
        if not isinstance(g, Node) or g.op != p.op or g.target != p.target:
            return None
        if len(g.args) != len(p.args) or set(g.kwargs) != set(p.kwargs):
            return None
        bound[p] = g
        pairs = list(zip(p.args, g.args)) + [(p.kwargs[k], g.kwargs[k]) for k in p.kwargs]
        while pairs:
            pa, ga = pairs.pop()
            if isinstance(pa, Node):
                pending.append((pa, ga))
            elif isinstance(pa, (tuple, list)) and type(pa) is type(ga) and len(pa) == len(ga):
                pairs.extend(zip(pa, ga))
            elif isinstance(ga, Node) or pa != ga:
                return None
    return bound


def _match_all(results: list[Node], anchor: Node, candidates: list[Node], claimed: set[Node]):
    """Match every pattern result, the first at ``anchor`` and each other at some unclaimed
    graph node, consistently (shared pattern nodes bind to the same graph nodes)."""
    bound = _match(results[0], anchor, {})
    for result in results[1:]:
        if bound is None:
            return None
        if result in bound:
            continue
        bound = next((found for g in candidates if g not in claimed and g.op == result.op and g.target == result.target
                      and (found := _match(result, g, bound)) is not None), None)
    return bound


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule | Graph,
                    replacement: Callable | GraphModule | Graph) -> list[Match]:
    """Replace every non-overlapping occurrence of ``pattern`` in ``gm`` by ``replacement``.

    Both are functions (traced here), GraphModules or Graphs with the same inputs, returning
    one value or a tuple of as many values; the pattern's placeholders match any value, its
    other nodes must match op, target and constants exactly, and values computed inside a
    match may not be used outside it except the pattern's results, whose uses take the
    replacement's results in order. ``gm`` is recompiled.

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> gm = fx.symbolic_trace(lambda x: (x + 1).relu() + (x * 2).sigmoid())
    >>> _ = fx.replace_pattern(gm, lambda a: (a + 1, a * 2), lambda a: (a - 1, a / 2))
    >>> gm(tm.tensor([3.0]))  # (3 - 1).relu() + (3 / 2).sigmoid()
    tensor([2.8176])
    """
    pattern_graph, replacement_graph = _as_graph(pattern), _as_graph(replacement)
    pattern_results = _results(pattern_graph, "pattern")
    replacement_results = _results(replacement_graph, "replacement")
    if len(pattern_results) != len(replacement_results):
        raise ValueError(f"replace_pattern: the pattern returns {len(pattern_results)} values but the replacement "
                         f"returns {len(replacement_results)}")
    pattern_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    replacement_inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(pattern_inputs) != len(replacement_inputs):
        raise ValueError(f"replace_pattern: the pattern takes {len(pattern_inputs)} inputs but the replacement "
                         f"takes {len(replacement_inputs)}")
    graph = gm.graph
    order = {node: i for i, node in enumerate(graph.nodes)}
    candidates = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
    matches: list[tuple[Match, Node]] = []
    claimed: set[Node] = set()
    for anchor in candidates:
        if anchor in claimed:
            continue
        bound = _match_all(pattern_results, anchor, candidates, claimed)
        if bound is None:
            continue
        inner = {bound[p] for p in bound if p.op != "placeholder"}
        outputs = [bound[r] for r in pattern_results]
        if inner & claimed or len(set(outputs)) != len(outputs) or any(
                user not in inner for n in inner - set(outputs) for user in n.users):
            continue
        # The replacement goes where every input exists and no outside user of a result has run.
        inputs = [bound[p] for p in pattern_inputs if isinstance(bound.get(p), Node)]
        outside = [user for n in outputs for user in n.users if user not in inner]
        place = min(outside, key=order.__getitem__, default=None)
        if place is None or order[place] > max(order[n] for n in inner):
            place = max(inner, key=order.__getitem__)
        if any(order[n] >= order[place] for n in inputs):
            continue
        claimed |= inner
        matches.append((Match(anchor, bound), place))
    replaced: dict[Node, Any] = {}  # results of earlier matches -> their replacements
    for match, place in matches:
        values: dict[Node, Any] = {}
        for p, r in zip(pattern_inputs, replacement_inputs):
            bound = match.nodes_map[p]
            values[r] = replaced.get(bound, bound) if isinstance(bound, Node) else bound
        with graph.inserting_before(place):
            for node in replacement_graph.nodes:
                if node.op == "placeholder":
                    continue
                if node.op == "output":
                    break
                if node.op in ("get_attr", "call_module"):
                    raise ValueError("replace_pattern: the replacement may not read module attributes")
                values[node] = graph.node_copy(node, values.__getitem__)
        for p, r in zip(pattern_results, replacement_results):
            old, new = match.nodes_map[p], values[r]
            old.replace_all_uses_with(new)
            replaced[old] = new
        inner = [match.nodes_map[p] for p in reversed(pattern_graph.nodes) if p.op not in ("placeholder", "output")]
        for node in inner:
            if not node.users and not node._erased:
                graph.erase_node(node)
    gm.recompile()
    return [match for match, _ in matches]
