"""Dead-code elimination as a pass over a GraphModule."""

from __future__ import annotations

from ..graph_module import GraphModule

__all__ = ["dead_code_elimination"]


def dead_code_elimination(gm: GraphModule) -> bool:
    """Remove unused nodes without side effects (``Graph.eliminate_dead_code``) and recompile.

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> def f(x):
    ...     unused = x * 2
    ...     noise = tm.randn(3)          # dropped would change later draws: kept
    ...     return x + 1
    >>> gm = fx.symbolic_trace(f)
    >>> dead_code_elimination(gm), [n.name for n in gm.graph.nodes]
    (True, ['x', 'randn', 'add', 'output'])
    """
    changed = gm.graph.eliminate_dead_code()
    if changed:
        gm.recompile()
    return changed
