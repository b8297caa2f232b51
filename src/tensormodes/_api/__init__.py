"""Layer 1 of docs/layout.md, the public API's machinery: ``Tensor`` (``tensor``), its printing
(``tensor_str``), the generator of every public callable (``codegen``), what generated code
calls at run time (``runtime``) and the builder that puts the callables in place (``build``)."""
