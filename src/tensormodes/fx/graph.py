"""``Graph``: a list of :class:`Node` in program order, with editing, checking and printing.

>>> import operator
>>> from tensormodes import fx
>>> g = fx.Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(operator.add, (x, 1))
>>> _ = g.output(y)
>>> print(g)
graph():
    %x : [num_users=1] = placeholder[target=x]
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, 1), kwargs = {})
    return add
>>> print(g.python_code("self").src.strip())
def forward(self, x):
    add = x + 1;  x = None
    return add
"""

from __future__ import annotations

import contextlib
import copy
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

from ..nn.modules.module import Module
from . import _dot, _purity
from ._codegen import CodeGen, Namespace, PythonCode, python_code
from .node import Node, map_arg

__all__ = ["Graph"]

_NO_DEFAULT = object()


class _NodeList:
    """A live view of a graph's nodes: iteration tolerates erasing the current node."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self._graph = graph
        self._reverse = reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        current = getattr(root, step)
        while current is not root:
            following = getattr(current, step)
            if not current._erased:
                yield current
            current = following

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, not self._reverse))

    def __repr__(self) -> str:
        return repr(list(self))


def _candidate_name(op: str, target: Any) -> str:
    """torch.fx's name for a node without an explicit name: the function's ``__name__`` or the
    target string (``__add__`` -> ``add``), in snake case (``Pair`` -> ``pair``)."""
    if op == "output":
        return "output"
    if op == "call_function":
        name = getattr(target, "__name__", None) or type(target).__name__
        if name == "__get__":  # a property getter recorded as getattr
            name = "getattr"
    else:
        name = str(target)
        if name.startswith("__") and name.endswith("__"):
            name = name[2:-2]
    return _LOWER_THEN_UPPER.sub(r"_\1", name).lower()


_LOWER_THEN_UPPER = re.compile(r"(?<=[a-z])([A-Z])")


class Graph:
    """The graph of a traced program: placeholders, calls, and one output, in order.

    ``nodes`` is a live, doubly linked list; the editing methods (``create_node`` and its
    shortcuts, ``inserting_before``/``inserting_after``, ``erase_node``, ``node_copy``,
    ``graph_copy``) keep names unique and ``users`` exact.
    """

    def __init__(self, owning_module: Any = None, tracer_cls: type | None = None,
                 tracer_extras: dict[str, Any] | None = None) -> None:
        self._root = Node.__new__(Node)
        self._root._prev = self._root._next = self._root
        self._root._erased = False
        self._root.graph = self
        self._root.name = "<root>"
        self._len = 0
        self._namespace = Namespace()
        self._insert: Callable[[Node], None] = self._root.prepend
        self.owning_module = owning_module
        # the Tracer class (and its extra arguments) that made the graph, for re-tracing a copy
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        # where the traced function was defined (co_name, co_filename, co_firstlineno): named in
        # the generated code's file name, as torch.fx's ``_co_fields``
        self._co_fields: dict[str, Any] = {}

    @property
    def nodes(self) -> _NodeList:
        """The nodes in program order (a live view)."""
        return _NodeList(self)

    # -- creating nodes -------------------------------------------------------------------

    def create_node(self, op: str, target: Any, args: tuple | None = None, kwargs: dict | None = None,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Create a node at the current insertion point (by default, the end) and return it.

        ``name`` is a wish: it is sanitised and made unique, so ``node.name`` may differ.
        """
        args = tuple(args) if args is not None else ()
        kwargs = dict(kwargs) if kwargs is not None else {}
        candidate = name if name is not None else _candidate_name(op, target)
        node = Node(self, self._namespace.create_name(candidate), op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name: str, type_expr: Any = None, default_value: Any = _NO_DEFAULT) -> Node:
        """An input of the graph called ``name`` (``default_value`` makes it optional)."""
        args = () if default_value is _NO_DEFAULT else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Read the attribute ``qualified_name`` (dotted) of the owning module."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None, kwargs: dict | None = None,
                      type_expr: Any = None, name: str | None = None) -> Node:
        """Call ``the_function(*args, **kwargs)`` (``name``: the wished node name, as in ``create_node``)."""
        return self.create_node("call_function", the_function, args, kwargs, name, type_expr)

    def call_method(self, method_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        """Call the method ``method_name`` of ``args[0]`` with the remaining arguments."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        """Call the submodule at ``module_name`` (dotted) of the owning module."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        """Return ``result`` (any nesting of nodes and constants) from the graph."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    # -- where new nodes go ---------------------------------------------------------------

    @contextlib.contextmanager
    def inserting_before(self, n: Node | None = None):
        """Within the block, new nodes are inserted before ``n`` (``None``: at the start)."""
        if n is None:
            n = self._root._next
        saved = self._insert
        self._insert = n.prepend
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_after(self, n: Node | None = None):
        """Within the block, new nodes are inserted after ``n`` (``None``: at the start), each
        after the one inserted before it."""
        anchor = n if n is not None else self._root
        following = anchor._next
        saved = self._insert
        self._insert = following.prepend
        try:
            yield
        finally:
            self._insert = saved

    # -- removing and copying -------------------------------------------------------------

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that has no users.

        >>> from tensormodes import fx
        >>> g = fx.Graph(); x = g.placeholder("x"); y = g.call_method("neg", (x,))
        >>> g.erase_node(x)
        Traceback (most recent call last):
        ...
        RuntimeError: Tried to erase Node x but it still had 1 users in the graph: {neg: None}!
        """
        if to_erase.graph is not self:
            raise RuntimeError(f"Tried to erase Node {to_erase} of another graph")
        if to_erase._erased:
            raise RuntimeError(f"Tried to erase Node {to_erase}, which was already erased")
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users "
                               f"in the graph: {to_erase.users}!")
        to_erase._update_args_kwargs((), {})
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        self._namespace.release(to_erase.name)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """Copy ``node`` (of any graph) into this one; ``arg_transform`` maps its input nodes
        to this graph's values."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copy = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        copy.meta = dict(node.meta)
        return copy

    def graph_copy(self, g: Graph, val_map: dict[Node, Any], return_output_node: bool = False) -> Any:
        """Copy every node of ``g`` into this graph, recording old -> new in ``val_map``; returns
        the value ``g``'s output returned (mapped), without copying the output node itself."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n]) if node.args else None
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict | None = None) -> Graph:
        """A copy made node by node (iteratively, as torch.fx), without the owning module: a graph
        of 10,000 nodes copies without deep recursion."""
        g = Graph(tracer_cls=self._tracer_cls, tracer_extras=self._tracer_extras)
        copied = g.graph_copy(self, {}, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen, memo)
        g._co_fields = dict(self._co_fields)
        if copied is not None:
            value, old_output = copied
            g.output(value, type_expr=old_output.type).meta = dict(old_output.meta)
        return g

    # -- passes every graph has -----------------------------------------------------------

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Remove nodes whose value is unused and that have no side effect (random draws,
        in-place writes and ``setitem`` count as side effects). Returns whether anything changed.

        >>> from tensormodes import fx
        >>> g = fx.Graph(); x = g.placeholder("x"); _ = g.call_method("neg", (x,)); _ = g.output(x)
        >>> g.eliminate_dead_code(), [n.name for n in g.nodes]
        (True, ['x', 'output'])
        """
        is_impure = is_impure_node or _purity.is_impure
        changed = False
        for node in reversed(self.nodes):  # users come after their inputs: one backward sweep
            if not node.users and not is_impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph's invariants, with torch.fx's messages: every node belongs to this graph
        and takes only nodes of this graph defined before it, names are unique; then ours:
        ``users`` consistent, one output at the end; and, with an owning module, that
        ``get_attr`` / ``call_module`` targets exist in it. Raises ``RuntimeError`` on a violation.

        >>> from tensormodes import fx
        >>> other = fx.Graph(); a = other.placeholder("a")
        >>> g = fx.Graph(); _ = g.output(g.call_method("neg", (a,)))
        >>> try:
        ...     g.lint()
        ... except RuntimeError as error:
        ...     print(str(error)[:60])
        Argument 'a' of Node 'neg' does not belong to this Graph, bu
        """
        seen: set[Node] = set()
        names: set[str] = set()
        outputs = 0
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for used in node.all_input_nodes:
                if used.graph is not self:
                    raise RuntimeError(f"Argument '{used}' of Node '{node}' does not belong to this Graph, but was "
                                       "used as an argument! If you are copying nodes from another graph, make sure "
                                       f"to use ``arg_transform`` on node_copy() to remap values\n{self}")
                if used not in seen:
                    raise RuntimeError(f"Argument '{used}' of Node '{node}' was used before it has been defined! "
                                       f"Please check that Nodes in the graph are topologically ordered\n{self}")
                if node not in used.users:
                    raise RuntimeError(f"Node {node} is missing from the users of its input {used}")
            seen.add(node)
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for user in node.users:
                if user._erased or node not in user._input_nodes:
                    raise RuntimeError(f"Node {user} is recorded as a user of {node} but does not use it")
            if node.op == "output":
                outputs += 1
            elif outputs:
                raise RuntimeError(f"Node {node} comes after the graph's output")
        if outputs > 1:
            raise RuntimeError("Graph has more than one output node")
        if self.owning_module is not None:
            self._lint_targets()

    def _lint_targets(self) -> None:
        """torch.fx's check that ``get_attr`` and ``call_module`` targets exist in the owning module."""
        for node in self.nodes:
            if node.op not in ("get_attr", "call_module"):
                continue
            atoms = node.target.split(".")
            holder = self.owning_module
            for i, atom in enumerate(atoms):
                found = getattr(holder, atom, None)
                seen_qualname = ".".join(atoms[:i])
                if found is None:
                    raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute {atom} "
                                       f"of {seen_qualname}")
                if node.op == "call_module" and not isinstance(found, Module):
                    raise RuntimeError(f"Node {node} target {node.target} {atom} of {seen_qualname} does not "
                                       "reference an nn.Module")
                holder = found

    # -- text and pictures ----------------------------------------------------------------

    def python_code(self, root_module: str = "self", *, verbose: bool = False, include_stride: bool = False,
                    include_device: bool = False) -> PythonCode:
        """The Python source of ``forward(root_module, *inputs)`` and the globals it needs;
        ``verbose`` adds torch.fx's stack-trace comments and tensor annotations (``f32[2]``, with
        strides and device on request), as ``GraphModule.print_readable`` shows."""
        return python_code(self.nodes, root_module, codegen=self._codegen, verbose=verbose,
                           include_stride=include_stride, include_device=include_device)

    def set_codegen(self, codegen: CodeGen) -> None:
        """Use ``codegen`` (a :class:`CodeGen`) for the ``def`` line and return statement of the
        generated code (the owning GraphModule needs ``recompile()``)."""
        self._codegen = codegen

    def process_inputs(self, *args: Any) -> Any:
        """The codegen's ``process_inputs``: the custom signature's inputs as the graph's."""
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out: Any) -> Any:
        """The codegen's ``process_outputs``: the graph's outputs as the custom signature's."""
        return self._codegen.process_outputs(out)

    def __str__(self) -> str:
        lines = ["graph():"]
        lines.extend(f"    {n.format_node()}" for n in self.nodes)
        return "\n".join(lines)

    def tabular(self) -> str:
        """The nodes as a plain-text table (opcode, name, target, args, kwargs)."""
        header = ("opcode", "name", "target", "args", "kwargs")
        rows = [(n.op, n.name, n._pretty_target(), _plain(n.args), _plain(n.kwargs)) for n in self.nodes]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print :meth:`tabular` (no ``tabulate`` dependency).

        >>> import operator
        >>> from tensormodes import fx
        >>> g = fx.Graph(); x = g.placeholder("x"); _ = g.output(g.call_function(operator.neg, (x,)))
        >>> g.print_tabular()
        opcode         name    target        args    kwargs
        -------------  ------  ------------  ------  ------
        placeholder    x       x             ()      {}
        call_function  neg     operator.neg  (x,)    {}
        output         output  output        (neg,)  {}
        """
        print(self.tabular())

    def to_dot(self, name: str = "graph") -> str:
        """The graph in Graphviz's DOT language: one box per node (op, target and, after
        ``ShapeProp``, shape and dtype), an edge per use."""
        return _dot.graph_to_dot(self.nodes, name)

    def render(self, path: str) -> str:
        """Write a picture of the graph to ``path``: DOT text for ``.dot`` (no dependency), SVG
        or PNG for ``.svg`` / ``.png`` through Graphviz's ``dot`` executable. Returns ``path``."""
        text = self.to_dot()
        suffix = str(path).rsplit(".", 1)[-1].lower()
        if suffix == "dot":
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return path
        if suffix not in ("svg", "png"):
            raise ValueError(f"render: unsupported file type {suffix!r} in {path!r}; use .dot, .svg or .png")
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError("render: writing .svg or .png needs Graphviz's `dot` executable, which was not "
                               "found on PATH; install Graphviz, or write a .dot file")
        subprocess.run([dot, f"-T{suffix}", "-o", str(path)], input=text.encode("utf-8"), check=True,
                       capture_output=True)
        return path


def _plain(a: Any) -> str:
    kind = type(a)
    if kind is tuple:
        inner = ", ".join(_plain(v) for v in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if kind is list:
        return "[" + ", ".join(_plain(v) for v in a) + "]"
    if kind is dict:
        return "{" + ", ".join(f"{k}: {_plain(v)}" for k, v in a.items()) + "}"
    return str(a)
