"""``Node``: one operation of a :class:`~tensormodes.fx.Graph`.

A node's ``op`` is one of a closed set of kinds:

================  ==========================================  ==============================
``op``            ``target``                                  ``args`` / ``kwargs``
================  ==========================================  ==============================
``placeholder``   the input's name (``*args`` / ``**kwargs``)   ``args`` holds the default, if any
``get_attr``      a dotted attribute path on the module       empty
``call_function`` any callable                                the call's arguments
``call_method``   a method name (``"relu"``)                  ``args[0]`` is the receiver
``call_module``   a dotted submodule path                     the call's arguments
``output``        ``"output"``                                ``args[0]`` is the returned value
================  ==========================================  ==============================

``users`` (the nodes reading this one) is kept by one setter, :meth:`Node._update_args_kwargs`,
so it is always right after ``node.args = ...``, ``replace_all_uses_with`` and ``erase_node``.

>>> from tensormodes import fx
>>> g = fx.Graph()
>>> x = g.placeholder("x")
>>> y = g.call_method("relu", (x,))
>>> list(x.users), y.all_input_nodes, y.format_node()
([relu], [x], '%relu : [num_users=0] = call_method[target=relu](args = (%x,), kwargs = {})')
"""

from __future__ import annotations

import builtins
import operator
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..overrides import resolve_name

__all__ = ["Node", "map_arg", "map_aggregate", "is_namedtuple", "type_repr", "Argument", "OPCODES"]

OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

Argument = Any  # a Node, a base value, or a tuple / list / dict / slice of Arguments


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply ``fn`` to every leaf of ``a``, rebuilding tuples, lists, dicts and slices.

    A named tuple and an ``OrderedDict`` keep their type. Any other subclass of ``tuple``,
    ``list`` or ``dict`` (``tm.Size``, a ``defaultdict``) is itself when no leaf changed, and
    becomes the plain base type otherwise (its constructor is unknown), as torch.fx's
    ``create_arg`` makes a plain ``dict`` of any mapping.

    >>> from collections import OrderedDict
    >>> map_aggregate((1, [2, {"k": 3}]), lambda v: v * 10)
    (10, [20, {'k': 30}])
    >>> mapped = map_aggregate(OrderedDict(k=1), lambda v: v + 1)
    >>> type(mapped).__name__, dict(mapped)
    ('OrderedDict', {'k': 2})
    """
    kind = type(a)
    if kind is tuple:
        return tuple(map_aggregate(v, fn) for v in a)
    if kind is list:
        return [map_aggregate(v, fn) for v in a]
    if kind is dict:
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if kind is slice:
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    if isinstance(a, _SUBCLASSABLE):
        return map_subclass(a, lambda v: map_aggregate(v, fn))
    return fn(a)


_SUBCLASSABLE = (tuple, list, dict)


def map_subclass(a: tuple | list | dict, map_item: Callable[[Argument], Argument]) -> Any:
    """``a`` (an instance of a subclass of tuple, list or dict) with ``map_item`` applied to
    each element or value, rebuilt as :func:`map_aggregate` documents."""
    if isinstance(a, dict):
        items = {k: map_item(v) for k, v in a.items()}
        if isinstance(a, OrderedDict):
            return OrderedDict(items)
        return a if all(items[k] is v for k, v in a.items()) else items
    items = [map_item(v) for v in a]
    if is_namedtuple(a):
        return type(a)(*items)
    if all(new is old for new, old in zip(items, a)):
        return a
    return tuple(items) if isinstance(a, tuple) else items


def is_namedtuple(a: Any) -> bool:
    """Whether ``a`` is an instance of a named tuple class (``collections.namedtuple``,
    ``typing.NamedTuple``, ``tm.return_types``): built from its fields, positionally.

    >>> from collections import namedtuple
    >>> is_namedtuple(namedtuple("P", "a b")(1, 2)), is_namedtuple((1, 2))
    (True, False)
    """
    return isinstance(a, tuple) and isinstance(getattr(type(a), "_fields", None), tuple)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to every :class:`Node` in ``a``; other leaves are kept.

    >>> from tensormodes import fx
    >>> g = fx.Graph(); x = g.placeholder("x")
    >>> map_arg((x, 2), lambda n: n.name)
    ('x', 2)
    """
    return map_aggregate(a, lambda v: fn(v) if isinstance(v, Node) else v)


_CONTAINERS = (tuple, list, dict, slice)  # with their subclasses: named tuples, OrderedDict, ...


def _collect_nodes(a: Argument, into: dict) -> None:
    # Flat arguments (the common case) skip map_aggregate: this runs for every recorded node.
    for v in (a.values() if type(a) is dict else a):
        if type(v) is Node:
            into[v] = None
        elif isinstance(v, _CONTAINERS):
            map_aggregate(v, lambda w: into.setdefault(w, None) if isinstance(w, Node) else None)


# Qualified names that read better than ``module.qualname`` for common builtins.
_BUILTIN_MODULES = {builtins: "builtins", operator: "operator"}


def qualified_name(target: Callable) -> str:
    """The dotted name a graph prints for a ``call_function`` target (``operator.add``,
    ``tensormodes.add``, ``builtins.getattr``, ``mymodule.my_function``).

    >>> import operator, tensormodes as tm
    >>> qualified_name(operator.add), qualified_name(tm.nn.functional.relu), qualified_name(getattr)
    ('operator.add', 'tensormodes.nn.functional.relu', 'builtins.getattr')
    """
    name = getattr(target, "__name__", None)
    for module, module_name in _BUILTIN_MODULES.items():
        if name is not None and getattr(module, name, None) is target:
            return f"{module_name}.{name}"
    public = resolve_name(target)
    if public is not None:
        return public
    module = getattr(target, "__module__", None) or "<unknown>"
    return f"{module}.{getattr(target, '__qualname__', name or repr(target))}"


def type_repr(t: Any) -> str:
    """How a graph prints a node's type (torch.fx's format): a builtin class by its name, other
    classes by their public dotted name, typing forms by their ``repr``.

    >>> import typing, tensormodes as tm
    >>> type_repr(int), type_repr(tm.Tensor), type_repr(typing.List[int])
    ('int', 'tensormodes.Tensor', 'typing.List[int]')
    """
    if isinstance(t, type):
        if t.__module__ == "builtins":
            return t.__qualname__
        return resolve_name(t) or f"{t.__module__}.{t.__qualname__}"
    return repr(t)


def _format_arg(a: Argument) -> str:
    kind = type(a)
    if isinstance(a, Node):
        return f"%{a.name}"
    if kind is tuple:
        inner = ", ".join(_format_arg(v) for v in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if kind is list:
        return "[" + ", ".join(_format_arg(v) for v in a) + "]"
    if kind is dict:
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in a.items()) + "}"
    return str(a)


class Node:
    """One operation in a :class:`Graph` (see the module docstring for the kinds of ``op``).

    Nodes are created by the graph (``Graph.create_node`` and its shortcuts), never directly;
    they form a doubly linked list in program order (``node.prev``, ``node.next``).
    ``meta`` is a free dict for passes (``ShapeProp`` stores ``tensor_meta`` there).
    """

    def __init__(self, graph, name: str, op: str, target: Any, args: tuple, kwargs: dict,
                 return_type: Any = None) -> None:
        if op not in OPCODES:
            raise ValueError(f"Node op must be one of {', '.join(OPCODES)}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target!r} has type "
                             f"{type(target).__name__} but a Callable is expected")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target!r} has type "
                             f"{type(target).__name__} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.meta: dict = {}
        self.users: dict[Node, None] = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._prev = self
        self._next = self
        self._erased = False
        self._update_args_kwargs(args, kwargs)

    # -- the linked list ------------------------------------------------------------------

    @property
    def next(self) -> Node:
        """The next node in the graph's order."""
        return self._next

    @property
    def prev(self) -> Node:
        """The previous node in the graph's order."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Insert ``x`` before this node (moving it if it is already in the graph).

        >>> from tensormodes import fx
        >>> g = fx.Graph(); a = g.placeholder("a"); b = g.placeholder("b")
        >>> b.prepend(g.call_method("neg", (a,))); [n.name for n in g.nodes]
        ['a', 'neg', 'b']
        """
        if self is x:  # torch.fx: a no-op
            return
        if x.graph is not self.graph:
            raise ValueError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Insert ``x`` after this node (moving it if it is already in the graph)."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # -- arguments and users --------------------------------------------------------------

    @property
    def args(self) -> tuple:
        """The positional arguments; assigning them updates ``users`` of the nodes involved."""
        return self._args

    @args.setter
    def args(self, value: tuple) -> None:
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments; assigning them updates ``users`` of the nodes involved."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict) -> None:
        self._update_args_kwargs(self._args, dict(value))

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct nodes among ``args`` and ``kwargs``, in order of appearance."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, args: tuple, kwargs: dict) -> None:
        """The one place ``users`` is maintained: every change of arguments goes through it."""
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        inputs: dict[Node, None] = {}
        _collect_nodes(args, inputs)
        _collect_nodes(kwargs, inputs)
        # A node of another graph is accepted, as torch.fx accepts it (``node_copy`` without a
        # value map); ``Graph.lint`` rejects it with torch.fx's message.
        for node in inputs:
            if node._erased:
                raise ValueError(f"node {self.name!r} takes {node.name!r}, which was erased from the graph")
            node.users[self] = None
        self._input_nodes = inputs

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set ``args[idx]`` to ``arg``."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg: Argument) -> None:
        """Insert ``arg`` into ``args`` before index ``idx`` (``0 <= idx <= len(args)``).

        >>> from tensormodes import fx
        >>> g = fx.Graph(); x = g.placeholder("x"); y = g.call_function(max, (1,))
        >>> y.insert_arg(0, x); y.args, list(x.users)
        ((x, 1), [max_1])
        """
        if not 0 <= idx <= len(self._args):
            raise AssertionError(f"insert_args index must be between 0 and len(self.args), got {idx}")
        self.args = (*self._args[:idx], arg, *self._args[idx:])

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set ``kwargs[key]`` to ``arg``."""
        self.kwargs = {**self._kwargs, key: arg}

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True) -> list[Node]:
        """Replace every use of this node in the graph with ``replace_with``.

        Returns the users that were changed (``delete_user_cb`` may keep some).

        >>> from tensormodes import fx
        >>> g = fx.Graph(); x = g.placeholder("x"); a = g.call_method("relu", (x,))
        >>> b = g.call_method("neg", (x,)); out = g.output(a)
        >>> a.replace_all_uses_with(b), out.args
        ([output], (neg,))
        """
        changed = [user for user in list(self.users) if delete_user_cb(user)]
        def swap(n):
            return (replace_with if n is self else n)
        for user in changed:
            user._update_args_kwargs(map_arg(user._args, swap), map_arg(user._kwargs, swap))
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Replace every occurrence of ``old_input`` in this node's arguments with ``new_input``."""
        def swap(n):
            return (new_input if n is old_input else n)
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    @property
    def stack_trace(self) -> str | None:
        """Where the traced code made this node (``node.meta["stack_trace"]``): the user's frames,
        innermost last, in ``traceback``'s format; recorded by a tracer with
        ``record_stack_traces = True``, else None (torch.fx's property)."""
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    # -- printing -------------------------------------------------------------------------

    def _pretty_target(self) -> str:
        return qualified_name(self.target) if self.op == "call_function" else str(self.target)

    def format_node(self) -> str:
        """This node as one line of :meth:`Graph.__str__` (torch.fx's format).

        >>> from tensormodes import fx
        >>> g = fx.Graph(); x = g.placeholder("x", default_value=2)
        >>> x.format_node()
        '%x : [num_users=0] = placeholder[target=x](default=2)'
        """
        if self.op == "output":
            return f"return {self._args[0]}" if self._args else "return None"
        typed = f"{type_repr(self.type)} " if self.type is not None else ""
        head = f"%{self.name} : {typed}[num_users={len(self.users)}] = {self.op}[target={self._pretty_target()}]"
        if self.op == "placeholder":
            return head + (f"(default={_format_arg(self._args[0])})" if self._args else "")
        if self.op == "get_attr":
            return head
        return f"{head}(args = {_format_arg(self._args)}, kwargs = {_format_arg(self._kwargs)})"

    def __repr__(self) -> str:
        return self.name
