"""``tensormodes.fx.experimental``: tracing at the dispatch level (``proxy_tensor.make_fx``),
at PyTorch's path."""

from . import proxy_tensor, symbolic_shapes

__all__ = ["proxy_tensor", "symbolic_shapes"]
