"""Layer 1 of docs/layout.md, the public API's machinery: the core namespace (``namespace``,
what ``tensormodes`` re-exports and the public-API modules use as ``tm``); ``Tensor``
(``tensor``, with parts of its body in ``tensor_conversions`` and ``tensor_properties``, declared
through ``declarations``), its printing (``tensor_str``), the generator of every public callable
(``codegen``), what generated code calls at run time (``runtime``) and the builder that puts the
callables in place (``build``).

Importing it completes the ``Tensor`` class: ``build.install()`` turns the class's declarations
into properties and methods and puts the op table's operators and method placeholders on it,
so no one can hold a ``Tensor`` whose generated part is missing. It may import every layer
below; the public-API modules above it import it, never the package face."""

from . import build

build.install()
