"""The home of every function tensormodes generates with ``exec``.

Public wrappers, their implementations, autograd's recorders and backward
``apply`` methods, and the testing overrides are all defined here by
:func:`define`. Each generated function

* gets a file name of its own (``<tensormodes generated tensormodes.add>``) whose
  source is registered with :mod:`linecache`, so ``inspect.getsource``, ``pdb``'s
  ``list`` and tracebacks show its real lines;
* carries its callable's real name and qualified name in its code object
  (``add``, ``Tensor.add``, ``AddBackward0.apply``), so a profiler reports each
  on its own row;
* runs as the module ``tensormodes._generated`` (this one), so warnings
  filters and ``inspect.getmodule`` treat it as tensormodes' own code.

>>> import inspect
>>> twice = define("def twice(x):\\n    return 2 * x\\n", "twice", {}, label="doc.twice")
>>> twice(21), inspect.getsource(twice)
(42, 'def twice(x):\\n    return 2 * x\\n')

To read the code behind any public callable: ``print(inspect.getsource(tm.add))``,
or :func:`sources` for everything generated for it (see ``docs/generated-code.md``).
"""

from __future__ import annotations

import linecache
import threading
from collections.abc import Callable

__all__ = ["MODULE_NAME", "define", "sources", "registered_files"]

# Generated code runs under this module's name (warnings from it are tensormodes').
MODULE_NAME = __name__

_LOCK = threading.Lock()
# File name -> source, for every generated function, in definition order.
_FILES: dict[str, str] = {}


def _file_name(label: str, source: str) -> str:
    """A file name of its own for ``label``; a label defined again with other source gets a
    numbered name, so the lines a traceback shows are always the ones that ran."""
    name = f"<tensormodes generated {label}>"
    number = 1
    while _FILES.get(name, source) != source:
        number += 1
        name = f"<tensormodes generated {label} #{number}>"
    return name


def define(source: str, name: str, names: dict, *, qualname: str | None = None, label: str | None = None,
           keep_global: bool = False) -> Callable:
    """Compile and run ``source`` (a module text defining the function ``name``) in a namespace
    holding ``names`` and return the function, with real source, name and qualified name.

    ``names`` is updated in place with what the source defines (so several generated functions
    may share one namespace's globals). The function's own global name is removed afterwards
    unless ``keep_global``: a generated ``float`` or ``type`` would otherwise shadow the
    builtins its body uses. ``label`` names the file (by default the qualified name).
    """
    qualname = qualname or name
    with _LOCK:
        file_name = _file_name(label or qualname, source)
        _FILES[file_name] = source
        # mtime None: linecache.checkcache keeps the entry (it has no file on disk to check).
        linecache.cache[file_name] = (len(source), None, source.splitlines(True), file_name)
    names["__name__"] = MODULE_NAME
    exec(compile(source, file_name, "exec"), names)
    func = names[name] if keep_global else names.pop(name)
    func.__qualname__ = qualname
    code = func.__code__
    if hasattr(code, "co_qualname"):  # Python 3.11+: profilers and tracebacks read it
        func.__code__ = code.replace(co_qualname=qualname)
    return func


def registered_files() -> dict[str, str]:
    """Every generated file so far: file name -> source (a copy)."""
    with _LOCK:
        return dict(_FILES)


def sources(func: Callable) -> str:
    """The source of ``func`` and of every generated function it reaches through its globals
    (implementation, autograd recorder, backward ``apply``), each under its file name.

    >>> import tensormodes as tm
    >>> print(sources(tm.neg).splitlines()[0])
    # <tensormodes generated tensormodes.neg>
    """
    seen: list[Callable] = []
    pending = [func]
    while pending:
        current = pending.pop(0)
        code = getattr(current, "__code__", None)
        if code is None or current in seen or code.co_filename not in _FILES:
            continue
        seen.append(current)
        for value in current.__globals__.values():
            if callable(value) and getattr(getattr(value, "__code__", None), "co_filename", None) in _FILES:
                pending.append(value)
            apply = getattr(value, "apply", None)  # a node class's generated backward
            if isinstance(value, type) and apply is not None:
                pending.append(apply)
    parts, files = [], []
    for current in seen:
        file_name = current.__code__.co_filename
        if file_name not in files:
            files.append(file_name)
            parts.append(f"# {file_name}\n{_FILES[file_name]}")
    return "\n".join(parts)
