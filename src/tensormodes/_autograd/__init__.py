"""Layer 3: the autograd core — grad mode, the backward graph, the engine, custom
Functions and gradient checks; the public namespace is ``tensormodes.autograd``.

It knows tensors as the bare ``TensorBase`` of the bottom layer (its slots hold the graph;
bookkeeping tensors come from ``_tensor_base``'s helpers) and calls public ops only in
gradient formulas, through ``_ops.common.ops``. It may import the dispatch level, the kernels
and the bottom; never the override layer or the public API above.
"""
