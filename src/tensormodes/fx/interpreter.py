"""``Interpreter`` runs a graph node by node; ``Transformer`` builds a new graph the same way.

Each node goes through :meth:`Interpreter.run_node`, which calls the method named after the
node's ``op`` (``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
``call_module``, ``output``): override any of them to change what a node does. ``run`` walks
the node list iteratively, so graphs of any length run without recursion.

>>> import tensormodes as tm
>>> from tensormodes import fx
>>> class Negate(fx.Interpreter):
...     def call_function(self, target, args, kwargs):
...         result = super().call_function(target, args, kwargs)
...         return -result if target is tm.relu else result
>>> gm = fx.symbolic_trace(lambda x: tm.relu(x) + 1)
>>> Negate(gm).run(tm.tensor([1., -2.]))
tensor([0., 1.])
"""

from __future__ import annotations

from typing import Any

from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule, TracedAttributes
from .node import Node, map_aggregate
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]

_NO_DEFAULT = object()


class Interpreter:
    """Runs ``module``'s graph (or ``graph``) on concrete values, one node at a time.

    ``garbage_collect_values`` drops each value after its last use, as generated code does.
    """

    def __init__(self, module: Any, garbage_collect_values: bool = True, graph: Graph | None = None) -> None:
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.garbage_collect_values = garbage_collect_values
        self.env: dict[Node, Any] = {}
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        self._plans: dict[Node, tuple] = {}
        seen: set[Node] = set()
        for node in reversed(self.graph.nodes):
            plan = _plan(node)
            if plan is not None:
                self._plans[node] = plan
            dying = [used for used in node.all_input_nodes if used not in seen]
            seen.update(dying)
            if dying:
                self.user_to_last_uses[node] = dying

    def run(self, *args, initial_env: dict[Node, Any] | None = None, enable_io_processing: bool = True) -> Any:
        """Run the graph on ``args`` and return what its output node returns.

        ``initial_env`` maps nodes to values that are used instead of running those nodes.
        """
        self.env = env = dict(initial_env) if initial_env is not None else {}
        self.args_iter = iter(args)
        last_uses = self.user_to_last_uses if self.garbage_collect_values else {}
        # Unless run_node is overridden, its steps are inlined (one plan lookup per node, and a
        # direct call of the target when call_function / call_method are not overridden either):
        # an Interpreter then costs little more than the generated code.
        cls = type(self)
        inline = cls.run_node is Interpreter.run_node
        handlers = {op: getattr(self, op) for op in _OPS}
        direct_function = cls.call_function is Interpreter.call_function
        direct_method = cls.call_method is Interpreter.call_method
        plans = self._plans
        check_env = bool(env)
        for node in self.graph.nodes:
            if check_env and node in env:
                continue
            try:
                plan = plans.get(node) if inline else None
                if plan is None or plan[0] is not node._args or plan[2] is not node._kwargs:
                    env[node] = self.run_node(node) if not inline else handlers[node.op](
                        node.target, *self.fetch_args_kwargs_from_env(node))
                else:
                    args_, positions, kwargs_, keys = plan
                    if positions:
                        values = list(args_)
                        for i in positions:
                            values[i] = env[args_[i]]
                        args_ = tuple(values)
                    if keys:
                        kwargs_ = dict(kwargs_)
                        for key in keys:
                            kwargs_[key] = env[kwargs_[key]]
                    op = node.op
                    if op == "call_function" and direct_function:
                        env[node] = node.target(*args_, **kwargs_) if kwargs_ else node.target(*args_)
                    elif op == "call_method" and direct_method:
                        env[node] = getattr(args_[0], node.target)(*args_[1:], **kwargs_)
                    else:
                        env[node] = handlers[op](node.target, args_, dict(kwargs_))  # theirs to keep
            except Exception as error:
                if hasattr(error, "add_note"):
                    error.add_note(f"While executing {node.format_node()}")
                raise
            for dead in last_uses.get(node, ()):
                env.pop(dead, None)
            if node.op == "output":
                return env[node]
        return None

    def boxed_run(self, args_list: list[Any]) -> Any:
        """Run the graph on the inputs in ``args_list``, which is emptied first (the "boxed"
        convention: the caller's list no longer keeps the inputs alive)."""
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(args_list) != len(placeholders):
            detail = "extra arguments" if len(args_list) > len(placeholders) else "missing arguments"
            raise RuntimeError(f"Interpreter.boxed_run expected {len(placeholders)} arguments for placeholders "
                               f"but received {len(args_list)} ({detail})")
        env = dict(zip(placeholders, args_list))
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n: Node) -> Any:
        """Run one node: fetch its arguments from ``env`` and call the method named by ``n.op``."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per op ----------------------------------------------------------------

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The next input (``*args`` takes the rest as a list); the default if inputs ran out."""
        if target.startswith("**"):
            return {}
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!") from None

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The module's attribute at the dotted path ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        """``args[0].target(*args[1:], **kwargs)``."""
        receiver, *rest = args
        return getattr(receiver, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Call the submodule at ``target``."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The value the graph returns."""
        return args[0] if args else None

    # -- helpers --------------------------------------------------------------------------

    def fetch_attr(self, target: str) -> Any:
        """Follow the dotted path ``target`` from the module."""
        value = self.module
        for i, part in enumerate(target.split(".")):
            if not hasattr(value, part):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target.split('.')[:i + 1])}")
            value = getattr(value, part)
        return value

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        """``n``'s arguments with every node replaced by its value."""
        env = self.env
        plan = self._plans.get(n)
        if plan is not None and plan[0] is n.args and plan[2] is n.kwargs:
            return _fetch_planned(plan, env)
        args = tuple([env[a] if type(a) is Node else _load(a, env) for a in n.args])
        kwargs = {k: env[v] if type(v) is Node else _load(v, env) for k, v in n.kwargs.items()} if n.kwargs else {}
        return args, kwargs

    def map_nodes_to_values(self, args: Any, n: Node) -> Any:
        """``args`` with every node replaced by its value."""
        return _load(args, self.env)


_CONTAINERS = (tuple, list, dict, slice)
_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def _plan(node: Node) -> tuple | None:
    """How to fetch a node's arguments when none is a container: (args, positions of nodes in
    args, kwargs, keys of nodes in kwargs); None for nested arguments (the general path)."""
    args, kwargs = node.args, node.kwargs
    for a in (*args, *kwargs.values()):
        if type(a) is not Node and isinstance(a, _CONTAINERS):
            return None
    return (args, tuple(i for i, a in enumerate(args) if type(a) is Node), kwargs,
            tuple(k for k, v in kwargs.items() if type(v) is Node))


def _fetch_planned(plan: tuple, env: dict) -> tuple[tuple, dict]:
    args, positions, kwargs, keys = plan
    if positions:
        values = list(args)
        for i in positions:
            values[i] = env[args[i]]
        args = tuple(values)
    if not kwargs:
        return args, {}
    kwargs = dict(kwargs)
    for key in keys:
        kwargs[key] = env[kwargs[key]]
    return args, kwargs


def _load(a: Any, env: dict) -> Any:
    if isinstance(a, _CONTAINERS) or isinstance(a, Node):
        return map_aggregate(a, lambda v: env[v] if isinstance(v, Node) else v)
    return a


class Transformer(Interpreter):
    """Runs a graph on Proxies to build a new one: override the per-op methods to rewrite
    nodes, then call :meth:`transform` for the new :class:`GraphModule`.

    >>> import operator, tensormodes as tm
    >>> from tensormodes import fx
    >>> class AddToMul(fx.Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         return super().call_function(operator.mul if target is operator.add else target, args, kwargs)
    >>> AddToMul(fx.symbolic_trace(lambda x: x + 3)).transform()(tm.tensor([2.]))
    tensor([6.])
    """

    def __init__(self, module: Any) -> None:
        super().__init__(module)
        # a Tracer without a traced root: it records into the new graph
        self.new_graph = Graph()
        self.tracer = Tracer()
        self.tracer.graph = self.new_graph
        self.tracer.root = module

    def run_node(self, n: Node) -> Any:
        """Run one node, the nodes it records carrying its metadata (its ``stack_trace`` and
        ``nn_module_stack``, as torch.fx's Transformer preserves them)."""
        saved, self.tracer.current_meta = self.tracer.current_meta, n.meta
        try:
            return super().run_node(n)
        finally:
            self.tracer.current_meta = saved

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A placeholder of the new graph (keeping the default), as a Proxy."""
        default = args[0] if args else _NO_DEFAULT
        if default is _NO_DEFAULT:
            return Proxy(self.new_graph.placeholder(target), self.tracer)
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A ``get_attr`` node of the new graph; the new module owns the attribute too."""
        self.tracer.attributes[target] = self.fetch_attr(target)
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Proxy:
        """Record ``target(*args, **kwargs)`` in the new graph (``args`` may hold Proxies)."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """Record the method call ``args[0].target(*args[1:], **kwargs)`` in the new graph."""
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """Record a call of the submodule ``target``; the new module owns the submodule too."""
        self.tracer.attributes[target] = self.fetch_attr(target)
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the transformation and return the new GraphModule."""
        result = self.run()
        self.new_graph.output(self.tracer.create_arg(result))
        return GraphModule(TracedAttributes(self.tracer.attributes), self.new_graph, type(self.module).__name__)
