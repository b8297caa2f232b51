"""What every family of ``nn.functional`` registers its functions with.

The families are private modules; their public functions belong to ``tensormodes.nn.functional``
(their ``__module__``, the namespace ``get_overridable_functions`` lists them under, the name
``resolve_name`` gives), which re-exports ``EXPORTS`` as its namespace and ``__all__``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..._api import build

# The public module the functions of every family belong to.
PUBLIC_MODULE = "tensormodes.nn.functional"

# Every public function of ``nn.functional``, by name, in the order the families define them.
EXPORTS: dict[str, Callable] = {}
_composite = build.composite(PUBLIC_MODULE)
# Functions PyTorch implements in C++ hand handlers only the arguments given.
_composite_builtin = build.composite(PUBLIC_MODULE, pass_defaults=False)
# Functions of ``tensormodes`` itself defined here, beside the nn.functional ones they serve
# (PyTorch's ``F.relu_`` is ``torch.relu_``; ``F.ctc_loss`` calls ``torch.ctc_loss``): the
# package face re-exports them.
TOP_LEVEL: dict[str, Callable] = {}
_composite_top_level = build.composite("tensormodes", pass_defaults=False)
# A public function of ``tensormodes`` looked up by name when called, for the functions
# generated from the op table (built on first use, above this package's import).
_function = build.public_function


def _export(func: Callable) -> Callable:
    EXPORTS[func.__name__] = func
    return func


def _public(impl: Callable) -> Callable:
    """Make ``impl`` the Python-level composite ``nn.functional.<name>`` (see ``build.composite``)."""
    return _export(_composite(impl))


def _builtin(impl: Callable) -> Callable:
    """``_public`` for functions PyTorch implements in C++: handlers see only the arguments given."""
    return _export(_composite_builtin(impl))


def _top_level(impl: Callable, name: str | None = None) -> Callable:
    """Make ``impl`` the function ``tensormodes.<name>`` (by default its own name; one PyTorch
    implements in C++: handlers see only the arguments given); ``_export`` it too where
    ``nn.functional`` has the same object."""
    if name is not None:
        impl.__name__ = impl.__qualname__ = name
    func = _composite_top_level(impl)
    TOP_LEVEL[func.__name__] = func
    return func


def _plain(func: Callable) -> Callable:
    """A plain Python function of ``nn.functional`` that is no public callable of its own (PyTorch's
    ``F.sigmoid`` calls the Tensor method without dispatching itself)."""
    func.__module__ = PUBLIC_MODULE
    return _export(func)


def _native(name: str) -> Callable:
    """The table op declared with ``namespace="tensormodes.nn.functional"`` (``linear``, ``nll_loss`` ...)."""
    return _export(build.namespace_function(PUBLIC_MODULE, name))


def _reexport(name: str) -> Callable:
    """The function ``tensormodes.<name>`` itself, as PyTorch's ``F.conv2d`` is ``torch.conv2d``."""
    return _export(build.public_function(name))
