"""Layer 2 of docs/layout.md, the override layer's core (what PyTorch keeps in C++): the dynamic
state in one ``ContextVar``, overloaded-argument ordering, and calling modes and overrides
(``dispatch``). Its public Python API is ``tensormodes.overrides`` and ``tensormodes._C``."""
