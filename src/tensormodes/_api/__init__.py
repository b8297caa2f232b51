"""Layer 1 of docs/layout.md, the public API's machinery: ``Tensor`` (``tensor``), its printing
(``tensor_str``), the generator of every public callable (``codegen``), what generated code
calls at run time (``runtime``) and the builder that puts the callables in place (``build``).
Importing it completes the ``Tensor`` class: ``build.install()`` turns the class's declarations
into properties and methods and puts the op table's operators and method placeholders on it,
so no one can hold a ``Tensor`` whose generated part is missing."""

from . import build

build.install()
