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

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..nn.modules.module import Module
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "ReplacedPatterns", "InternalMatch", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    """One replaced occurrence: the pattern's node of its (first) result (as torch.fx, the
    anchor is a node of the pattern graph), and the map from pattern nodes to the graph's
    nodes (or values, for placeholders bound to constants)."""

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


@dataclass
class ReplacedPatterns:
    """One replaced occurrence (``replace_pattern_with_filters``): ``anchor`` and ``nodes_map`` as
    in :class:`Match`, and ``replacements``, the nodes added to the graph."""

    anchor: Node
    nodes_map: dict[Node, Any]
    replacements: list[Node]


@dataclass
class InternalMatch:
    """A match as match filters and replacement callbacks see it: the pattern's result nodes
    (``anchors``), the graph nodes they matched (``returning_nodes``), the graph values its
    inputs matched (``placeholder_nodes``), and the map from pattern nodes to graph nodes."""

    anchors: list[Node]
    nodes_map: dict[Node, Any] = field(default_factory=dict)
    placeholder_nodes: list[Any] = field(default_factory=list)
    returning_nodes: list[Node] = field(default_factory=list)
    name_node_map: dict[str, Node] = field(default_factory=dict)


@dataclass
class _Options:
    ignore_literals: bool = False
    node_name_match: str = ""


def _same_call(p: Node, g: Any, options: _Options) -> bool:
    if not isinstance(g, Node):
        return False
    if options.node_name_match and options.node_name_match in g.name:
        return True  # torch.fx's node_name_match: a named graph node stands for any pattern node
    return g.op == p.op and g.target == p.target


def _match(pattern_output: Node, anchor: Node, bound: dict[Node, Any],
           options: _Options | None = None) -> dict[Node, Any] | None:
    """Extend ``bound`` (pattern node -> graph node) by matching the pattern ending at
    ``pattern_output`` against the graph ending at ``anchor``; None if they differ."""
    bound = dict(bound)
    options = options or _Options()
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
        if not _same_call(p, g, options):
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
            elif isinstance(ga, Node) or (pa != ga and not options.ignore_literals):
                return None
    return bound


def _match_all(results: list[Node], anchor: Node, candidates: list[Node], claimed: set[Node], options: _Options):
    """Match every pattern result, the first at ``anchor`` and each other at some unclaimed
    graph node, consistently (shared pattern nodes bind to the same graph nodes)."""
    bound = _match(results[0], anchor, {}, options)
    for result in results[1:]:
        if bound is None:
            return None
        if result in bound:
            continue
        bound = next((found for g in candidates if g not in claimed and _same_call(result, g, options)
                      and (found := _match(result, g, bound, options)) is not None), None)
    return bound


def _check_shapes(pattern_graph: Graph, replacement_graph: Graph) -> tuple[list[Node], list[Node]]:
    """The replacement's results and inputs, after checking they are as many as the pattern's."""
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
    return replacement_results, replacement_inputs


def _find_matches(gm: GraphModule, pattern_graph: Graph, match_filters: list, options: _Options):
    """Every non-overlapping occurrence of the pattern that its filters accept, in graph order,
    each with the node the replacement goes before."""
    graph = gm.graph
    pattern_results = _results(pattern_graph, "pattern")
    pattern_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    order = {node: i for i, node in enumerate(graph.nodes)}
    candidates = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
    matches: list[tuple[InternalMatch, Node]] = []
    claimed: set[Node] = set()
    for anchor in candidates:
        if anchor in claimed:
            continue
        bound = _match_all(pattern_results, anchor, candidates, claimed, options)
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
        found = InternalMatch(anchors=list(pattern_results), nodes_map=bound,
                              placeholder_nodes=[bound[p] for p in pattern_inputs], returning_nodes=list(outputs))
        if not all(accept(found, graph, pattern_graph) for accept in match_filters):
            continue
        claimed |= inner
        matches.append((found, place))
    return matches


def _splice(gm: GraphModule, pattern_graph: Graph, found: InternalMatch, place: Node, replacement_graph: Graph,
            replaced: dict[Node, Any]) -> list[Node]:
    """Insert the replacement before ``place``, route the pattern's results' uses to it, erase
    what the match computed; returns the nodes added."""
    graph = gm.graph
    replacement_results, replacement_inputs = _check_shapes(pattern_graph, replacement_graph)
    pattern_results = _results(pattern_graph, "pattern")
    values: dict[Node, Any] = {}
    for bound, r in zip(found.placeholder_nodes, replacement_inputs):
        values[r] = replaced.get(bound, bound) if isinstance(bound, Node) else bound
    added = []
    with graph.inserting_before(place):
        for node in replacement_graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                break
            values[node] = graph.node_copy(node, values.__getitem__)
            added.append(values[node])
    for p, r in zip(pattern_results, replacement_results):
        old, new = found.nodes_map[p], values[r]
        old.replace_all_uses_with(new)
        replaced[old] = new
    inner = [found.nodes_map[p] for p in reversed(pattern_graph.nodes) if p.op not in ("placeholder", "output")]
    for node in inner:
        if not node.users and not node._erased:
            graph.erase_node(node)
    return added


def _rewrite(gm: GraphModule, pattern, replacement, match_filters=None, ignore_literals: bool = False,
             replacement_callback: Callable | None = None, node_name_match: str = "") -> list[ReplacedPatterns]:
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement) if replacement is not None else None
    if replacement_graph is None and replacement_callback is None:
        raise ValueError("replace_pattern_with_filters: give a replacement or a replacement_callback")
    if replacement_graph is not None:
        _check_shapes(pattern_graph, replacement_graph)
    options = _Options(ignore_literals, node_name_match)
    matches = _find_matches(gm, pattern_graph, list(match_filters or ()), options)
    replaced: dict[Node, Any] = {}  # results of earlier matches -> their replacements
    done = []
    for found, place in matches:
        graph_for_match = replacement_graph
        if replacement_callback is not None:
            graph_for_match = replacement_callback(found, gm.graph, pattern_graph)
        added = _splice(gm, pattern_graph, found, place, graph_for_match, replaced)
        done.append(ReplacedPatterns(found.anchors[0], found.nodes_map, added))
    gm.recompile()
    if isinstance(replacement, Module):
        _replace_attributes(gm, replacement)
    return done


def _attribute(holder: Module, target: str) -> Any:
    path, _, name = target.rpartition(".")
    try:
        module = holder.get_submodule(path)
    except AttributeError:
        return None
    return getattr(module, name, None)


def _replace_attributes(gm: GraphModule, replacement: Module) -> None:
    """Give ``gm`` the attributes the spliced replacement nodes read, as torch.fx does: unused
    submodules are dropped first; a target ``gm`` has is kept; one only ``replacement`` has is
    deep-copied into ``gm`` (a module through ``add_submodule``)."""
    gm.delete_all_unused_submodules()
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr") or _attribute(gm, node.target) is not None:
            continue
        value = _attribute(replacement, node.target)
        if value is None:
            raise RuntimeError(f"Attempted to create a {node.op!r} node during subgraph rewriting with target "
                               f"{node.target}, but the referenced attribute does not exist in the replacement "
                               "GraphModule")
        value = copy.deepcopy(value)
        if isinstance(value, Module):
            gm.add_submodule(node.target, value)
        else:
            setattr(gm, node.target, value)
    gm.graph.lint()


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
    return [Match(r.anchor, r.nodes_map) for r in _rewrite(gm, pattern, replacement)]


def replace_pattern_with_filters(gm: GraphModule, pattern: Callable | GraphModule | Graph,
                                 replacement: Callable | GraphModule | Graph | None = None,
                                 match_filters: list[Callable] | None = None, ignore_literals: bool = False,
                                 replacement_callback: Callable | None = None,
                                 node_name_match: str = "") -> list[ReplacedPatterns]:
    """:func:`replace_pattern` with torch.fx's extra controls: each of ``match_filters``
    (``filter(match, original_graph, pattern_graph) -> bool``, ``match`` an
    :class:`InternalMatch`) must accept a match; ``ignore_literals`` lets the pattern's constants
    match any constant; ``replacement_callback(match, original_graph, pattern_graph)`` gives the
    replacement graph per match; a graph node whose name contains ``node_name_match`` matches any
    pattern node. Returns a :class:`ReplacedPatterns` per replacement.

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> gm = fx.symbolic_trace(lambda x: (x + 1) * (x + 2))
    >>> def only_one(match, original_graph, pattern_graph):
    ...     return match.returning_nodes[0].args[1] == 1
    >>> done = fx.replace_pattern_with_filters(gm, lambda a: a + 1, lambda a: a - 1, [only_one],
    ...                                        ignore_literals=True)
    >>> [r.replacements for r in done], gm(tm.tensor([3.0]))
    ([[sub]], tensor([10.]))
    """
    return _rewrite(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback, node_name_match)
