"""``ShapeProp``: run a GraphModule on example inputs and record each value's shape and dtype."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._api.tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ``ShapeProp`` records for a tensor value (torch.fx's field names)."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    is_contiguous: bool


def _extract(value: Any) -> TensorMetadata:
    return TensorMetadata(value.shape, value.dtype, value.requires_grad, value.stride(), value.is_contiguous())


class ShapeProp(Interpreter):
    """Runs the graph on real inputs and stores ``node.meta['tensor_meta']`` (a
    :class:`TensorMetadata`, or a structure of them for tuple results) and ``node.meta['type']``.

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> gm = fx.symbolic_trace(lambda x: x.sum(0))
    >>> _ = ShapeProp(gm).propagate(tm.ones(2, 3))
    >>> [tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes if n.op != "output"]
    [(2, 3), (3,)]
    """

    def run_node(self, n: Node) -> Any:
        """Run the node, then record the metadata of the tensors in its result."""
        result = super().run_node(n)
        found = []
        meta = map_aggregate(result, lambda v: found.append(v) or _extract(v) if isinstance(v, Tensor) else v)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args) -> Any:
        """Run the graph on ``args`` (any tensors), recording metadata; returns the result."""
        return self.run(*args)
