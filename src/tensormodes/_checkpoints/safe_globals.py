"""The user's allow-list: plain-data classes a checkpoint may hold besides PyTorch's own values.

A class is *plain data* when its instances are made by ``object.__new__`` and pickled as their
attributes: it is a class (no function, no module), it does not define ``__new__``,
``__reduce__`` or ``__reduce_ex__`` (so no builtin subclass such as a namedtuple or a dict
subclass, no Enum) and is not a tensor. Loading makes an instance with ``object.__new__`` (no
``__init__``, ``__post_init__`` or ``__setstate__`` runs) and sets each attribute of the file's
state straight into the instance's ``__dict__`` (or its ``__slots__``); a dataclass accepts its
fields only (frozen or not, with slots or not: a frozen one with slots pickles a list of its
fields' values, set in field order). Attribute names must be identifiers not starting with
``__``. The attribute values are built by the same restricted reader.
"""

from __future__ import annotations

import contextlib
import dataclasses

from .._api.tensor import Tensor

__all__ = ["add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals", "user_classes",
           "plain_fields", "field_order"]


class _Registry:
    """The allowed classes by the name a file spells them with (``module.QualName``)."""

    def __init__(self) -> None:
        self.classes: dict[str, type] = {}


_REGISTRY = _Registry()


def _check(entry) -> tuple[str, type]:
    cls, name = entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
    if not isinstance(cls, type):
        raise TypeError(f"add_safe_globals: tensormodes accepts plain-data classes only, not {cls!r}: loading "
                        "never calls a function named by a file")
    for method in ("__new__", "__reduce__", "__reduce_ex__"):
        if getattr(cls, method) is not getattr(object, method):
            raise TypeError(f"add_safe_globals: {cls.__qualname__} is not a plain-data class: it defines or "
                            f"inherits its own {method}, which loading would have to call")
    if issubclass(cls, Tensor):
        raise TypeError(f"add_safe_globals: {cls.__qualname__} is a tensor subclass; tensors need no registering")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"add_safe_globals: a name must be a str, not {type(name).__name__}")
    return name or f"{cls.__module__}.{cls.__qualname__}", cls


def add_safe_globals(safe_globals: list) -> None:
    """Allows ``tm.load`` to rebuild instances of these plain-data classes (see the module's
    docstring for what plain data is); entries are classes or ``(class, "module.Name")``.

    >>> import dataclasses, io
    >>> import tensormodes as tm
    >>> @dataclasses.dataclass
    ... class Config:
    ...     lr: float
    >>> tm.serialization.add_safe_globals([Config])
    >>> Config in tm.serialization.get_safe_globals()
    True
    >>> tm.serialization.clear_safe_globals()
    """
    checked = [_check(entry) for entry in safe_globals]
    _REGISTRY.classes.update(checked)


def get_safe_globals() -> list:
    """The classes added with :func:`add_safe_globals`, as PyTorch lists them."""
    return [cls if name == f"{cls.__module__}.{cls.__qualname__}" else (cls, name)
            for name, cls in _REGISTRY.classes.items()]


def clear_safe_globals() -> None:
    """Forgets every class added with :func:`add_safe_globals`."""
    _REGISTRY.classes.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Allows these classes inside the ``with`` block only (as :func:`add_safe_globals`)."""
    before = dict(_REGISTRY.classes)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _REGISTRY.classes.clear()
        _REGISTRY.classes.update(before)


def user_classes() -> dict[str, type]:
    """The allowed classes by name (read at every load)."""
    return _REGISTRY.classes


def plain_fields(cls: type) -> frozenset[str] | None:
    """The attribute names a file may set on ``cls``: a dataclass's fields, else None (any
    attribute name that is an identifier and not ``__dunder__``)."""
    if dataclasses.is_dataclass(cls):
        return frozenset(f.name for f in dataclasses.fields(cls))
    return None


def field_order(cls: type) -> tuple[str, ...] | None:
    """A dataclass's field names in order (a frozen dataclass with slots pickles its values as a
    list in this order), else None."""
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    return None
