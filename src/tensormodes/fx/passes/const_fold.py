"""Constant folding: compute pure subgraphs that depend on no input once, at fold time."""

from __future__ import annotations

from typing import Any

from .. import _purity
from ..graph_module import GraphModule
from ..interpreter import Interpreter
from ..node import Node, map_arg
from .cse import mutated_or_aliased

__all__ = ["fold_constants"]

_INLINE_TYPES = (bool, int, float, str, type(None))


def fold_constants(gm: GraphModule) -> bool:
    """Replace every pure node whose inputs are all constants by its value: a Python scalar
    inline, anything else a ``_folded_constant<n>`` attribute of ``gm``. Random ops, in-place
    writes, unknown functions and values a write may reach are left alone.

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> gm = fx.symbolic_trace(lambda x: x + tm.arange(3).float().mean())
    >>> fold_constants(gm), [n.op for n in gm.graph.nodes]
    (True, ['placeholder', 'get_attr', 'call_function', 'output'])
    """
    graph = gm.graph
    excluded = mutated_or_aliased(graph.nodes)
    runner = Interpreter(gm, garbage_collect_values=False)
    constant: dict[Node, Any] = {}
    for node in graph.nodes:
        if node.op in ("placeholder", "output") or node in excluded or not _purity.is_pure(node):
            continue
        if not all(n in constant for n in node.all_input_nodes):
            continue
        runner.env = constant
        constant[node] = runner.run_node(node)
    # fold only the last constant node of each chain: the ones used by non-constant nodes
    frontier = [n for n in constant if n.op != "get_attr" and any(u not in constant for u in n.users)]
    changed = False
    for number, node in enumerate(frontier):
        value = constant[node]
        if type(value) in _INLINE_TYPES:
            for user in list(node.users):
                user._update_args_kwargs(*_substitute(user, node, value))
        else:
            name = _free_attribute(gm, "_folded_constant", number)
            setattr(gm, name, value)
            with graph.inserting_before(node):
                fetched = graph.get_attr(name)
            node.replace_all_uses_with(fetched)
        changed = True
    if changed:
        graph.eliminate_dead_code()
        gm.recompile()
    return changed


def _substitute(user: Node, node: Node, value: Any) -> tuple[tuple, dict]:
    def swap(n):
        return (value if n is node else n)
    return map_arg(user.args, swap), map_arg(user.kwargs, swap)


def _free_attribute(gm: GraphModule, prefix: str, number: int) -> str:
    while hasattr(gm, f"{prefix}{number}"):
        number += 1
    return f"{prefix}{number}"
