"""``ShapeProp``: run a GraphModule on example inputs and record each value's shape and dtype.
Given meta inputs, it runs the whole graph on the meta device (the module's parameters too):
shapes on every node, no compute."""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from ..._api.tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata", "meta_copy"]


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
        """Run the graph on ``args`` (any tensors), recording metadata; returns the result.

        With a meta tensor among ``args`` the module's parameters, buffers and tensor attributes
        are used as meta copies (the module itself is left as it is), so nothing is computed.

        >>> import tensormodes as tm
        >>> from tensormodes import fx, nn
        >>> gm = fx.symbolic_trace(nn.Linear(4, 8))
        >>> ShapeProp(gm).propagate(tm.empty(1_000_000, 4, device="meta")).shape
        tensormodes.Size([1000000, 8])
        """
        if not any(isinstance(a, Tensor) and a.is_meta for a in args):
            return self.run(*args)
        module = self.module
        self.module = meta_copy(module)
        try:
            return self.run(*args)
        finally:
            self.module = module


def meta_copy(module: Any) -> Any:
    """A shallow twin of ``module`` (and its submodules) whose tensors are meta copies: runs
    like the module, on the meta device, and leaves the module itself untouched.

    >>> import tensormodes as tm
    >>> twin = meta_copy(tm.nn.Linear(2, 3))
    >>> twin.weight.is_meta, twin(tm.empty(5, 2, device="meta")).shape
    (True, tensormodes.Size([5, 3]))
    """
    twin = copy.copy(module)
    state = twin.__dict__
    for key, value in list(state.items()):
        if isinstance(value, Tensor) and not value.is_meta:
            state[key] = value.detach().to("meta")
    if "_parameters" in state:
        parameters = {}
        for name, p in state["_parameters"].items():
            parameters[name] = None if p is None else type(p)(p.detach().to("meta"), p.requires_grad)
        state["_parameters"] = parameters
        state["_buffers"] = {name: None if b is None else b.detach().to("meta")
                             for name, b in state["_buffers"].items()}
        state["_modules"] = {name: None if m is None else meta_copy(m) for name, m in state["_modules"].items()}
    return twin
