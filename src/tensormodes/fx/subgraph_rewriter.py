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
from .node import Node, map_arg

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One replaced occurrence: the node that produced the pattern's result, and the map from
    pattern nodes to the graph's nodes (or values, for placeholders bound to constants)."""

    anchor: Node
    nodes_map: dict[Node, Any]


def _as_graph(pattern: Callable | GraphModule | Graph) -> Graph:
    if isinstance(pattern, Graph):
        return pattern
    if isinstance(pattern, GraphModule):
        return pattern.graph
    return symbolic_trace(pattern).graph


def _match(pattern_output: Node, anchor: Node) -> dict[Node, Any] | None:
    """Match the pattern ending at ``pattern_output`` against the graph ending at ``anchor``."""
    bound: dict[Node, Any] = {}
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


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule | Graph,
                    replacement: Callable | GraphModule | Graph) -> list[Match]:
    """Replace every non-overlapping occurrence of ``pattern`` in ``gm`` by ``replacement``.

    Both are functions (traced here), GraphModules or Graphs with the same inputs; the
    pattern's placeholders match any value, its other nodes must match op, target and
    constants exactly, and values computed inside a match may not be used outside it (except
    the pattern's result). A pattern returns one value. ``gm`` is recompiled.
    """
    pattern_graph, replacement_graph = _as_graph(pattern), _as_graph(replacement)
    outputs = [n for n in pattern_graph.nodes if n.op == "output"]
    if len(outputs) != 1 or not isinstance(outputs[0].args[0], Node):
        raise ValueError("replace_pattern: the pattern must return a single value")
    pattern_result = outputs[0].args[0]
    pattern_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    replacement_inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(pattern_inputs) != len(replacement_inputs):
        raise ValueError(f"replace_pattern: the pattern takes {len(pattern_inputs)} inputs but the replacement "
                         f"takes {len(replacement_inputs)}")
    graph = gm.graph
    matches: list[Match] = []
    claimed: set[Node] = set()
    for anchor in list(graph.nodes):
        if anchor.op in ("placeholder", "output") or anchor in claimed:
            continue
        bound = _match(pattern_result, anchor)
        if bound is None:
            continue
        inner = {bound[p] for p in bound if p.op != "placeholder"}
        if inner & claimed or any(user not in inner for n in inner - {anchor} for user in n.users):
            continue
        claimed |= inner
        matches.append(Match(anchor, bound))
    replaced: dict[Node, Any] = {}  # anchors of earlier matches -> their replacement's result
    for match in matches:
        anchor = match.anchor
        values: dict[Node, Any] = {}
        for p, r in zip(pattern_inputs, replacement_inputs):
            bound = match.nodes_map[p]
            values[r] = replaced.get(bound, bound) if isinstance(bound, Node) else bound
        with graph.inserting_before(anchor):
            for node in replacement_graph.nodes:
                if node.op == "placeholder":
                    continue
                if node.op == "output":
                    result = map_arg(node.args[0], values.__getitem__)
                    break
                if node.op in ("get_attr", "call_module"):
                    raise ValueError("replace_pattern: the replacement may not read module attributes")
                values[node] = graph.node_copy(node, values.__getitem__)
        anchor.replace_all_uses_with(result)
        replaced[anchor] = result
        inner = [match.nodes_map[p] for p in reversed(pattern_graph.nodes) if p.op not in ("placeholder", "output")]
        for node in inner:
            if not node.users and not node._erased:
                graph.erase_node(node)
    gm.recompile()
    return matches
