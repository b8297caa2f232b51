"""Layer 2 of docs/layout.md, the override layer's core (what PyTorch keeps in C++): the dynamic
state in one ``ContextVar``, overloaded-argument ordering, and calling modes and overrides
(``dispatch``); how an observing mode sees a composite call and then its body
(``composite.run_composite``). Its public Python API is ``tensormodes.overrides`` and
``tensormodes._C``.

It may import the layers below it (``_autograd``, ``_dispatch``, ``_ops``) and the bottom
(``_tensor_base``, ``_dtype``, ``_device``, ``_generated``); never the public API above."""
