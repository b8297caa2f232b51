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

import copy
import inspect
import itertools
import linecache
import os
import sys
from typing import Any

from .. import _generated
from .._api.tensor import Tensor
from ..nn.modules.module import Module, intercept_module_calls
from ..nn.parameter import Parameter
from ._codegen import class_name_for_source
from .graph import Graph

__all__ = ["GraphModule", "TracedAttributes", "intercept_module_calls"]


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


def _install(owner: Any, target: str, value: Any, made: set[int]) -> None:
    """Put ``value`` at the dotted path ``target`` of ``owner``, creating empty modules on the
    way (their ids are added to ``made``). As torch.fx, a tensor that is not a Parameter is
    registered as a buffer (persistent: ``state_dict`` has the keys torch.fx's has), and nothing
    is installed below a module installed whole (``lin`` then ``lin.weight``)."""
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
            made.add(id(inner))
            setattr(holder, part, inner)
        elif id(inner) not in made:
            return  # a module of the root, installed whole: what it holds comes with it
        holder = inner
    _check_settable(holder, last, target)
    if isinstance(value, Tensor) and not isinstance(value, Parameter) and isinstance(holder, Module):
        try:
            holder.register_buffer(last, value)
            return
        except KeyError:  # a name no buffer may have ("", or one the module holds otherwise)
            pass
    setattr(holder, last, value)


def _check_settable(holder: Any, name: str, target: str) -> None:
    """A clear error where ``name`` is a data descriptor of ``holder``'s class (``__dict__``,
    ``__class__``, a property), which an instance attribute cannot hold or would not be read."""
    found = inspect.getattr_static(type(holder), name, None)
    if found is not None and hasattr(type(found), "__set__"):
        raise ValueError(f"GraphModule: the attribute {target!r} the graph reads cannot be stored: {name!r} is "
                         f"an attribute of {type(holder).__name__} itself; rename it in the traced module")


class TracedAttributes(dict):
    """The attributes a trace collected (dotted path -> value), all from the traced module or
    captured by the trace: a GraphModule installs them in graph order, as torch.fx installs
    from the module itself."""


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _error_context(forward_file: str, error: BaseException) -> str | None:
    """torch.fx's account of an error raised on a line of the generated ``forward`` (in file
    ``forward_file``), or None when the error came from a submodule's forward or user code
    called from that line (then the traceback already points there)."""
    tb, line_number, after = error.__traceback__, None, False
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == forward_file:
            line_number, after = tb.tb_lineno, True
        elif after:
            frame_self = tb.tb_frame.f_locals.get("self")
            user_code = not (os.path.abspath(code.co_filename).startswith(_PACKAGE_DIR)
                             or code.co_filename.startswith("<tensormodes generated"))
            if user_code or (code.co_name == "forward" and isinstance(frame_self, Module)):
                return None
        tb = tb.tb_next
    if line_number is None:
        return None
    lines = linecache.getlines(forward_file)
    line = lines[line_number - 1].strip() if line_number <= len(lines) else ""
    return "\n".join([f"Call using an FX-traced Module, line {line_number} of the traced Module's generated forward "
                      "function:", "".join(lines[max(line_number - 2, 0):line_number]).rstrip("\n"),
                      "~" * len(line) + "~~~ <--- HERE", "".join(lines[line_number:line_number + 2]).rstrip("\n")])


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
        made: set[int] = set()
        targets = [node.target for node in graph.nodes if node.op in ("get_attr", "call_module")]
        if isinstance(root, dict) and not isinstance(root, TracedAttributes):
            # torch.fx installs shallower paths first for a dict; from a module (and from what a
            # trace of one collected), in graph order: state_dict keys come in torch.fx's order
            targets.sort(key=lambda target: target.count("."))
        for target in targets:
            _install(self, target, _fetch(root, target), made)
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
        # the file name carries the sanitised class name (a given name may hold any character)
        # and, as torch.fx's, where the traced function was defined
        label = f"fx {class_name_for_source(cls.__name__)}.forward"
        fields = getattr(self._graph, "_co_fields", None)
        if fields:
            label += f" from {fields['co_filename']}:{fields['co_firstlineno']} in {fields['co_name']}"
        forward = _generated.define(python_code.src, "forward", dict(python_code.globals),
                                    qualname=f"{cls.__name__}.forward", label=label)
        cls.forward = forward
        return python_code

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the module; an exception raised by an operation of the generated ``forward`` itself
        (not inside a submodule or a user function it calls) prints torch.fx's context to stderr:
        the generated line with ``<--- HERE`` and the lines around it."""
        try:
            return super().__call__(*args, **kwargs)
        except Exception as error:
            context = _error_context(type(self).forward.__code__.co_filename, error)
            if context is not None:
                print(context, file=sys.stderr)
            raise

    def __deepcopy__(self, memo: dict) -> GraphModule:
        """A new GraphModule built, as torch.fx builds it, from deep copies of this one's state
        and graph: submodules, parameters and buffers are copied, the class name is
        ``GraphModule`` again, ``meta`` and the state-dict hooks are kept."""
        copied = type(self).__new__(type(self))
        memo[id(self)] = copied
        state = copy.deepcopy(self.__dict__, memo)
        holder = Module()
        holder.__dict__.update(state)
        GraphModule.__init__(copied, holder, state["_graph"])
        for name in ("_state_dict_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            if name in state:
                setattr(copied, name, state[name])
        copied.meta = state.get("meta", {})
        return copied

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

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The generated code inside a class statement, as torch.fx shows it: each group of nodes
        under a comment naming the user's line it came from (``node.stack_trace``), values
        annotated with the tensors seen (``"f32[2, 3]"``, after ``ShapeProp``), then the
        submodules that are GraphModules, nested. Printed unless ``print_output`` is False;
        ``colored`` is accepted for torch.fx's signature and adds no colour.

        The text is valid Python whatever ``class_name`` was: a name that cannot follow
        ``class`` is sanitised as node names are (``"class"`` -> ``class_1``, ``"<lambda>"`` ->
        ``_lambda_``).
        """
        text = self._readable(class_name_for_source(type(self).__name__), include_stride, include_device)
        if print_output:
            print(text)
        return text

    def _readable(self, name: str, include_stride: bool, include_device: bool) -> str:
        code = self._graph.python_code("self", verbose=True, include_stride=include_stride,
                                       include_device=include_device).src
        body = "\n".join(f"    {line}".rstrip() for line in code.strip("\n").rstrip().splitlines())
        text = f"class {name}(tensormodes.nn.Module):\n{body}\n"
        for child_name, child in self.named_children():
            if isinstance(child, GraphModule):
                nested = child._readable(class_name_for_source(child_name), include_stride, include_device)
                text += "\n" + "\n".join(f"    {line}".rstrip() for line in nested.splitlines()) + "\n"
        return text

    def __repr__(self) -> str:
        # as torch.fx: the module tree, then the generated code
        return f"{super().__repr__()}\n\n\n\n{self._code.strip(chr(10))}"
