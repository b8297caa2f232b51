"""How the Tensor layer declares its own public callables: ``tensor_api`` marks a method,
``tensor_property`` a property; ``build.install()`` takes the declarations and turns each into
a dispatching callable on ``Tensor`` — properties and Python protocol methods at once, the rest
on first access through a placeholder (``lazy_tensor_attribute``). ``BUILD_LOCK`` is held
while any public callable is generated.
"""

from __future__ import annotations

import threading

from .._overrides import dispatch as _dispatch

__all__ = ["tensor_api", "tensor_property", "take_declarations", "BUILD_LOCK", "lazy_tensor_attribute",
           "has_tensor_attribute", "value_methods", "pure_methods"]


_PENDING: list = []  # (name, kind, function(s), relevant) until the class exists
# The facts declared with each method, kept for tools (fx): name -> (returns_value, pure).
_FACTS: dict[str, tuple[bool, bool]] = {}


def tensor_api(*relevant: str, name: str | None = None, leaf: bool = True, returns_value: bool = False,
               pure: bool = False, pass_defaults: bool = False, plain=None):
    """Mark a method defined in the class body as public and overridable.

    ``relevant`` names parameters besides ``self`` that may carry overrides;
    ``leaf=False`` for methods that call other public callables (so that modes
    skipping this method are popped around it, as a pass-through would be).
    ``returns_value``: the method gives a Python value or acts, not a tensor (fx runs it
    eagerly when no Proxy is involved); ``pure``: it computes without writing, so equal
    calls give equal results (fx's passes may merge or fold them). ``pass_defaults``: handlers
    receive every optional argument as a keyword, as from a method PyTorch writes in Python
    that hands all its keywords on (``Tensor.backward``). ``plain``: the body for a plain tensor
    while nothing listens below autograd (the fast path), where the declared method reads the
    value through the dispatch level (``item`` reaches ``aten._local_scalar_dense``, which a
    ``TorchDispatchMode`` or a wrapper subclass sees); the declared one runs on every other path.
    """

    def mark(impl):
        declared = name or impl.__name__
        _PENDING.append((declared, "method", impl, (relevant, leaf, pass_defaults, plain)))
        _FACTS[declared] = (returns_value, pure)
        return impl

    return mark


def value_methods() -> frozenset[str]:
    """The Tensor layer's methods declared ``returns_value``.

    >>> import tensormodes
    >>> {"item", "size", "backward"} <= value_methods(), "to" in value_methods()
    (True, False)
    """
    return frozenset(name for name, (returns_value, _) in _FACTS.items() if returns_value)


def pure_methods() -> frozenset[str]:
    """The Tensor layer's methods declared ``pure``.

    >>> import tensormodes
    >>> {"to", "float", "size"} <= pure_methods(), "backward" in pure_methods()
    (True, False)
    """
    return frozenset(name for name, (_, pure) in _FACTS.items() if pure)


def tensor_property(getter, setter=None, *, name: str, inline: str | None = None):
    """Declare a public property; its ``__get__`` / ``__set__`` are what handlers see.

    ``inline`` is the getter as an expression of ``self``, inlined into the fast path.
    """
    _PENDING.append((name, "property", (getter, setter, inline), ()))


def take_declarations() -> list:
    """The declarations made so far, for the builder (``build.install``), which turns them
    into dispatching callables once the class exists."""
    declared = list(_PENDING)
    _PENDING.clear()
    return declared


# Held while generating any public callable: threads reaching one not generated yet build
# and register it once. Reentrant: building one callable may build another.
BUILD_LOCK = threading.RLock()


class _LazyAttribute:
    """Stands in the Tensor class for an attribute generated on first access: ``build()``
    generates it and sets it on the class, replacing this placeholder.

    A placeholder in the class rather than a ``__getattr__``: CPython specialises
    attribute reads only on classes without ``__getattr__``, and every call reads
    tensor attributes (``t._data``) many times.
    """

    __slots__ = ("_cls", "_name", "_build")

    def __init__(self, cls: type, name: str, build) -> None:
        self._cls, self._name, self._build = cls, name, build

    def ensure_built(self) -> None:
        with BUILD_LOCK:
            if self._cls.__dict__.get(self._name) is self:
                self._build()

    def __get__(self, instance, owner=None):
        self.ensure_built()
        real = self._cls.__dict__[self._name]
        if type(real) is _LazyAttribute:
            raise RuntimeError(f"building {self._cls.__name__}.{self._name} did not define it")
        get = getattr(type(real), "__get__", None)
        return real if get is None else get(real, instance, owner)


def lazy_tensor_attribute(cls: type, name: str, build) -> None:
    """Declare an attribute of the Tensor class ``cls`` that is generated on first access."""
    placeholder = _LazyAttribute(cls, name, build)
    setattr(cls, name, placeholder)
    _dispatch.BUILD_ALL.append(placeholder.ensure_built)


def has_tensor_attribute(cls: type, name: str) -> bool:
    """True if ``cls.<name>`` exists, not counting a placeholder for one not generated yet."""
    attribute = cls.__dict__.get(name)
    return attribute is not None and type(attribute) is not _LazyAttribute
