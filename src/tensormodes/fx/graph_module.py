"""``GraphModule``: owns a graph and the attributes it reads, and runs it as generated Python.

``recompile()`` turns the graph into source and defines ``forward`` from it through
``tensormodes._generated.define``, so ``inspect.getsource(gm.forward)``, tracebacks and
debuggers show the generated lines.

A GraphModule is an ``nn.Module``: it owns the submodules, parameters and buffers the graph
reads, and ``state_dict`` and hooks work on it as on any module. The tracer sees module calls
through ``nn.modules.module.intercept_module_calls``, the documented, scoped extension point of
``nn.Module`` (nothing is patched).
"""

from __future__ import annotations

import inspect
import itertools
from typing import Any

from .. import _generated
from ..nn.modules.module import Module, intercept_module_calls
from ._codegen import class_name_for_source
from .graph import Graph

__all__ = ["GraphModule", "intercept_module_calls"]


def _fetch(root: Any, target: str) -> Any:
    if isinstance(root, dict):
        if target in root:
            return root[target]
        raise AttributeError(f"GraphModule: the attributes given have no {target!r}")
    value = root
    for i, part in enumerate(target.split(".")):
        if not hasattr(value, part):
            prefix = ".".join(target.split(".")[:i]) or type(root).__name__
            raise AttributeError(f"Node referenced nonexistent target {target!r}: {prefix} has no attribute {part!r}")
        value = getattr(value, part)
    return value


def _own_attribute(holder: Any, name: str) -> Any:
    """What ``holder`` itself holds under ``name`` (a registered submodule, or an instance
    attribute), never what its class provides."""
    modules = vars(holder).get("_modules")
    if isinstance(modules, dict) and name in modules:
        return modules[name]
    return vars(holder).get(name)


def _install(owner: Any, target: str, value: Any) -> None:
    *path, last = target.split(".")
    if hasattr(type(owner), path[0] if path else last):
        raise ValueError(f"GraphModule: the attribute {target!r} the graph reads would hide "
                         f"GraphModule.{path[0] if path else last}; rename it in the traced module")
    holder = owner
    for part in path:
        inner = _own_attribute(holder, part)
        if inner is None:
            _check_settable(holder, part, target)
            inner = Module()
            setattr(holder, part, inner)
        holder = inner
    _check_settable(holder, last, target)
    setattr(holder, last, value)


def _check_settable(holder: Any, name: str, target: str) -> None:
    """A clear error where ``name`` is a data descriptor of ``holder``'s class (``__dict__``,
    ``__class__``, a property), which an instance attribute cannot hold or would not be read."""
    found = inspect.getattr_static(type(holder), name, None)
    if found is not None and hasattr(type(found), "__set__"):
        raise ValueError(f"GraphModule: the attribute {target!r} the graph reads cannot be stored: {name!r} is "
                         f"an attribute of {type(holder).__name__} itself; rename it in the traced module")


class GraphModule(Module):
    """A callable built from a :class:`Graph`: ``gm(*inputs)`` runs the generated ``forward``.

    ``root`` supplies the attributes the graph reads (``get_attr`` and ``call_module``
    targets): a module or any object (looked up along each dotted path), or a dict from
    dotted path to value.

    >>> import operator
    >>> from tensormodes import fx
    >>> g = fx.Graph(); x = g.placeholder("x"); _ = g.output(g.call_function(operator.mul, (x, 3)))
    >>> gm = fx.GraphModule({}, g)
    >>> gm(2), print(gm.code.strip())
    def forward(self, x):
        mul = x * 3;  x = None
        return mul
    (6, None)
    """

    def __new__(cls, *args, **kwargs):
        # Each instance gets a class of its own, so ``forward`` is a real method of it.
        class GraphModuleImpl(cls):
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Any, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        cls = type(self)
        # the name as given (torch.fx's ``__name__``); print_readable writes a sanitised one
        cls.__name__ = cls.__qualname__ = str(class_name)
        for node in graph.nodes:
            if node.op in ("get_attr", "call_module"):
                _install(self, node.target, _fetch(root, node.target))
        self.graph = graph
        # torch.fx keeps the tracer class only when it can be found again by name
        tracer_cls = graph._tracer_cls
        self._tracer_cls = tracer_cls if tracer_cls and "<locals>" not in tracer_cls.__qualname__ else None
        self._tracer_extras = graph._tracer_extras or {}
        self.meta: dict[str, Any] = {}  # free for passes, as Node.meta

    @property
    def graph(self) -> Graph:
        """The graph; assigning a new one regenerates the code."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise TypeError(f"GraphModule.graph must be a Graph, got {type(g).__name__}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward`` generated from the graph."""
        return self._code

    def recompile(self):
        """Regenerate ``code`` and ``forward`` from the graph (call it after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        cls = type(self)
        # the file name carries the sanitised class name: a given name may hold any character
        forward = _generated.define(python_code.src, "forward", dict(python_code.globals),
                                    qualname=f"{cls.__name__}.forward",
                                    label=f"fx {class_name_for_source(cls.__name__)}.forward")
        cls.forward = forward
        return python_code

    # -- submodules ------------------------------------------------------------------------

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at the dotted path ``target``, creating empty modules on the way.

        Returns False (installing nothing) if something on the way is not a module.
        """
        *prefix, last = target.split(".")
        holder: Module = self
        for part in prefix:
            inner = getattr(holder, part, None)
            if inner is None:
                inner = Module()
                setattr(holder, part, inner)
            if not isinstance(inner, Module):
                return False
            holder = inner
        holder.add_module(last, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at the dotted path ``target``; False if there is none there."""
        *path, last = target.split(".")
        holder: Any = self
        for part in path:
            if not hasattr(holder, part):
                return False
            holder = getattr(holder, part)
            if not isinstance(holder, Module):
                return False
        if not isinstance(getattr(holder, last, None), Module):
            return False
        delattr(holder, last)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove every submodule the graph does not use: one is used if a ``call_module`` node
        calls it or something inside it, or a ``get_attr`` node reads through it."""
        used: set[str] = set()
        for node in self._graph.nodes:
            if node.op not in ("call_module", "get_attr") or not isinstance(node.target, str):
                continue
            used.update(itertools.accumulate(node.target.split("."), lambda a, b: f"{a}.{b}"))
            if node.op == "call_module":
                try:
                    called = self.get_submodule(node.target)
                except AttributeError:
                    continue  # a target that does not exist keeps nothing alive
                used.update(f"{node.target}.{name}" for name, _ in called.named_modules() if name)
        for name in [name for name, _ in self.named_modules() if name not in used]:
            self.delete_submodule(name)

    def print_readable(self, print_output: bool = True) -> str:
        """The generated code inside a class statement; printed unless ``print_output`` is False.

        The text is valid Python whatever ``class_name`` was: a name that cannot follow
        ``class`` is sanitised as node names are (``"class"`` -> ``class_1``, ``"<lambda>"`` ->
        ``_lambda_``).
        """
        body = "\n".join(f"    {line}" if line.strip() else "" for line in self._code.strip("\n").splitlines())
        name = class_name_for_source(type(self).__name__)
        text = f"class {name}(tensormodes.fx.GraphModule):\n{body.rstrip()}\n"
        if print_output:
            print(text)
        return text

    def __repr__(self) -> str:
        # as torch.fx: the module tree, then the generated code
        return f"{super().__repr__()}\n\n\n\n{self._code.strip(chr(10))}"
