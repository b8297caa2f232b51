"""Layer 3: the autograd core — grad mode, the backward graph, the engine, custom
Functions and gradient checks. It works on tensors through their methods and
never imports the Tensor layer; the public namespace is ``tensormodes.autograd``.
"""
