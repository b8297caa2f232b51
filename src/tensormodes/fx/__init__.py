"""``tensormodes.fx``: trace programs into graphs, edit them, run them, generate code.

torch.fx's API and names, with one difference that modes make possible: calls that
take no traced value - factories (``tm.ones``), random ops (``tm.randn``), ``tm.arange``,
``tm.tensor`` - are recorded as nodes instead of being folded into constants, and
nothing is monkey-patched to achieve it (see :mod:`tensormodes.fx._symbolic_trace`).

>>> import tensormodes as tm
>>> from tensormodes import fx
>>> def f(x):
...     return (x + tm.randn(3)).relu()
>>> gm = fx.symbolic_trace(f)
>>> print(gm.graph)
graph():
    %x : [num_users=1] = placeholder[target=x]
    %randn : [num_users=1] = call_function[target=tensormodes.randn](args = (3,), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, %randn), kwargs = {})
    %relu : [num_users=1] = call_method[target=relu](args = (%add,), kwargs = {})
    return relu
>>> _ = tm.manual_seed(0); expected = f(tm.zeros(3))
>>> _ = tm.manual_seed(0); bool((gm(tm.zeros(3)) == expected).all())
True
"""

from . import experimental, immutable_collections, passes, subgraph_rewriter
from ._codegen import CodeGen
from ._purity import has_side_effect
from ._symbolic_trace import PH, PHBase, PHWithMeta, ProxyableClassMeta, Tracer, TracingMode, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Attribute, Proxy, TraceError
from .subgraph_rewriter import replace_pattern, replace_pattern_with_filters

__all__ = [
    "Graph", "Node", "GraphModule", "Proxy", "Attribute", "Tracer", "TracingMode", "TraceError", "symbolic_trace",
    "wrap", "Interpreter", "Transformer", "map_arg", "replace_pattern", "replace_pattern_with_filters", "passes",
    "subgraph_rewriter", "immutable_collections", "CodeGen", "has_side_effect", "PH", "PHBase", "PHWithMeta",
    "ProxyableClassMeta", "experimental",
]
