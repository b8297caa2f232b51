"""``Proxy``: the stand-in value a traced function computes with.

A Proxy is a *tensor-like* (it defines ``__torch_function__`` and is not a Tensor), so
every public call it reaches is handed to it by the override protocol and becomes a node.
Python operators on it (``x + y``, ``-x``, ``x[0]``, ``x @ w``) become ``call_function``
nodes of the :mod:`operator` function, and attribute reads become ``getattr`` nodes (or
``call_method`` nodes when called), as in torch.fx. What needs a concrete value -
``bool(proxy)``, ``len(proxy)``, iterating, ``int(proxy)`` - raises :class:`TraceError`
naming the line of the traced code that asked for it.
"""

from __future__ import annotations

import copy
import dataclasses
import dis
import linecache
import operator
import os
import sys
import traceback
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .. import _generated
from .._api.tensor import Tensor
from ..overrides import resolve_name
from ._purity import call_mutates
from .graph import Graph
from .node import Node, is_namedtuple, map_aggregate, map_subclass, qualified_name

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase", "GraphAppendingTracer", "Scope"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class TraceError(ValueError):
    """A traced function needed a concrete value where only a Proxy exists (control flow on a
    traced value, ``len``, iteration of unknown length ...)."""


def user_location() -> str:
    """``file:line in function`` and the source line of the innermost frame outside tensormodes:
    the traced code that asked for a concrete value."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (os.path.abspath(filename).startswith(_PACKAGE_DIR) or filename.startswith("<tensormodes generated")):
            break
        frame = frame.f_back
    if frame is None:
        return "<unknown location>"
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    where = f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
    return f"{where}\n    {line}" if line else where


def _trace_error(what: str, proxy: Proxy, advice: str) -> TraceError:
    return TraceError(f"{what} of {proxy!r} at {user_location()}\n{advice}")


class Proxy:
    """A value of the traced program: ``node`` is the graph node that computes it.

    >>> from tensormodes import fx
    >>> def f(x):
    ...     return (x + 1).relu()
    >>> [(n.op, str(n.target)) for n in fx.symbolic_trace(f).graph.nodes][1:3]
    [('call_function', '<built-in function add>'), ('call_method', 'relu')]
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        self.node = node
        # without a tracer, operations on the Proxy append to the node's graph (torch.fx)
        self.tracer = tracer if tracer is not None else GraphAppendingTracer(node.graph)

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    __hash__ = object.__hash__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Record ``func(*args, **kwargs)`` in the graph of the tracer that made the Proxy."""
        tracer = _find_tracer(args, kwargs)
        return tracer.record(func, args, kwargs or {})

    def __getattr__(self, name: str) -> Attribute:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # Python's protocols (copy, pickle ...) probe these
        return Attribute(self, name)

    def __setitem__(self, index, value) -> None:
        self.tracer.emit("call_function", operator.setitem, (self, index, value), {})

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.emit("call_method", "__call__", (self, *args), kwargs)

    # -- what a trace cannot know ------------------------------------------------------------

    def __bool__(self) -> bool:
        raise _trace_error("symbolically traced variables cannot be used as inputs to control flow: bool()", self,
                           "Pass the value that decides the branch in concrete_args, or move the branch into a "
                           "function registered with tensormodes.fx.wrap.")

    def __len__(self) -> int:
        raise _trace_error("'len' is not supported in symbolic tracing: len()", self,
                           "Use x.shape[0] (recorded as a node), or register a function with tensormodes.fx.wrap.")

    def __iter__(self):
        frame = sys._getframe(1)
        instructions = {i.offset: i for i in dis.get_instructions(frame.f_code)}
        current = instructions.get(frame.f_lasti)
        if current is not None and current.opname == "UNPACK_SEQUENCE":
            # `a, b = proxy`: the unpacking says how many values to take
            return iter([self[i] for i in range(current.argval)])
        raise _trace_error("Proxy object cannot be iterated: iter()", self,
                           "Its length is unknown while tracing; unpack a fixed number of values (a, b = x) "
                           "or index it (x[0]).")

    def __contains__(self, item) -> bool:
        raise _trace_error("'in' is not supported in symbolic tracing: __contains__()", self,
                           "The answer depends on the traced value.")

    def _no_number(self, kind: str):
        raise _trace_error(f"a traced value cannot be converted to a Python number: {kind}()", self,
                           "Keep computing with the traced value, or pass a constant in concrete_args.")

    def __int__(self):
        self._no_number("int")

    def __float__(self):
        self._no_number("float")

    def __index__(self):
        self._no_number("index")

    def __complex__(self):
        self._no_number("complex")


class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node, created only when the value is used (calling it
    records a ``call_method`` node instead)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:
        """The ``getattr`` node, created on first use."""
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __repr__(self) -> str:
        return f"Attribute({self.root!r}.{self.attr})"

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.emit("call_method", self.attr, (self.root, *args), kwargs)


# What a node recorded while re-recording another (a Transformer's) inherits from it: torch.fx's
# list of fields, beside the stack trace
_COPIED_META = ("nn_module_stack", "torch_fn", "source_fn_stack", "original_aten", "recompute", "ac_graph_id",
                "has_backward_hook", "from_node", "quantization_tag", "_numeric_debug_handle", "custom",
                "partitioner_tag")


class Scope:
    """The module a node is recorded in (torch.fx's ``Scope``): ``module_path``, its dotted path
    in the traced module (``""`` at the top), and ``module_type``, its class (None at the top).
    ``Tracer.scope`` is the current one while tracing."""

    def __init__(self, module_path: str, module_type: Any) -> None:
        self.module_path = module_path
        self.module_type = module_type

    def __repr__(self) -> str:
        return f"Scope(module_path={self.module_path!r}, module_type={self.module_type!r})"


def _user_stack() -> str | None:
    """The user's frames from the first ``forward`` on (torch.fx's filter), innermost last, as
    ``traceback`` formats them; tensormodes' own frames and generated code are left out. None
    when no ``forward`` is on the stack (a traced function, not a module)."""
    frames = [frame for frame in traceback.extract_stack()[:-2]]
    first = next((i for i, frame in enumerate(frames) if frame.name == "forward"), None)
    if first is None:
        return None
    user = [frame for frame in frames[first:]
            if not (os.path.abspath(frame.filename).startswith(_PACKAGE_DIR)
                    or frame.filename.startswith("<tensormodes generated"))]
    return "".join(traceback.StackSummary.from_list(user).format()).strip() or None


class TracerBase:
    """What every tracer does: turn values into node arguments and record nodes into
    ``self.graph`` (torch.fx's ``TracerBase``). :class:`~tensormodes.fx.Tracer` adds tracing
    functions and modules; :class:`GraphAppendingTracer` only appends to a graph.
    """

    # torch.fx's feature flag: refuse recording calls that write into their operands
    check_mutable_operations: bool = False
    # torch.fx's flag: record where each node was made in ``node.stack_trace``
    record_stack_traces: bool = False

    def __init__(self, graph: Graph | None = None) -> None:
        self.graph = graph
        self.attributes: dict[str, Any] = {}
        self._attribute_names: dict[int, str] = {}
        self._constants: dict[int, str] = {}
        self._parameter_proxies: dict[str, Proxy] = {}
        # the module being traced into (torch.fx's names): its scope, the stack of module calls
        # ("path" or "path@n" for the n-th call again -> (path, class)), each node's scope
        self.scope = Scope("", None)
        self.module_stack: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self.node_name_to_scope: dict[str, tuple[str, Any]] = {}
        # the metadata of the node being re-recorded (a Transformer's), which new nodes inherit
        self.current_meta: dict | None = None

    def create_node(self, kind: str, target: Any, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Called for every node the trace records; returns the node added to ``self.graph``.

        As torch.fx, the node's scope goes to ``node_name_to_scope``, the module calls around it
        to ``node.meta["nn_module_stack"]`` (when there are any) and, with
        ``record_stack_traces``, the user's frames to ``node.stack_trace``. With
        ``check_mutable_operations`` set, a ``call_function`` that writes into a tensor
        (``tm.relu_``, ``out=``, ``x[i] = v``) is refused, as torch.fx refuses mutable schemas.
        """
        if kind == "call_function" and self.check_mutable_operations and call_mutates(target, kwargs):
            raise RuntimeError(f"Tried to trace mutable operation {qualified_name(target)}. FX only supports "
                               "functional code, so operations that mutate operands in-place (e.g. via `out` "
                               "arguments) are not supported")
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        self.node_name_to_scope[node.name] = (self.scope.module_path, self.scope.module_type)
        if self.current_meta is not None:
            if self.current_meta.get("stack_trace"):
                node.stack_trace = self.current_meta["stack_trace"]
            for key in _COPIED_META:
                if key in self.current_meta:
                    node.meta[key] = copy.copy(self.current_meta[key])
        elif self.module_stack:
            node.meta["nn_module_stack"] = self.module_stack.copy()
        if self.record_stack_traces and not node.stack_trace:
            trace = _user_stack()
            if trace:
                node.stack_trace = trace
        return node

    def proxy(self, node: Node) -> Proxy:
        """Called to wrap each new node in the value the traced code continues with."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any = None, proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record one operation: arguments go through :meth:`create_arg`, then :meth:`create_node`;
        returns the Proxy of the result, made by ``proxy_factory_fn(node)`` when given, else by
        :meth:`proxy`."""
        make = self.proxy if proxy_factory_fn is None else proxy_factory_fn
        if kind == "placeholder":  # a default is a constant of the signature, kept as it is
            return make(self.create_node(kind, target, tuple(args), dict(kwargs), name, type_expr))
        leaf = self._leaf_arg
        # flat arguments (the common case) are converted here; nested ones through create_arg
        args = tuple([leaf(a) if not isinstance(a, _CONTAINERS) else self.create_arg(a) for a in args])
        kwargs = {k: leaf(v) if not isinstance(v, _CONTAINERS) else self.create_arg(v) for k, v in kwargs.items()}
        return make(self.create_node(kind, target, args, kwargs, name, type_expr))

    def emit(self, kind: str, target: Any, args: tuple, kwargs: dict) -> Proxy:
        """Record a call the traced code made: parameters and buffers of the root among the
        arguments get their ``get_attr`` Proxies first (as torch.fx, where reading
        ``self.weight`` makes it), then :meth:`create_proxy` records the call."""
        if self._attribute_names:
            names = self._attribute_names

            def proxied(v: Any) -> Any:
                name = names.get(id(v)) if isinstance(v, Tensor) else None
                return v if name is None else self.getattr(name, v, self._parameter_proxies)

            args = map_aggregate(args, proxied)
            kwargs = map_aggregate(kwargs, proxied)
        return self.create_proxy(kind, target, args, kwargs)

    def create_arg(self, a: Any) -> Any:
        """Turn a traced value into a node argument: Proxies become their nodes, parameters and
        buffers of the root ``get_attr`` nodes (through :meth:`getattr`), other tensors
        ``_tensor_constant<n>`` attributes; containers are converted element by element.

        As in torch.fx, a named tuple becomes a ``call_function`` node of its class (so
        ``tm.stack(Pair(x, y))`` records ``pair = Pair(x, y)``), and so does a dataclass
        instance, with its fields as keyword arguments; an ``OrderedDict`` stays one,
        other subclasses of tuple, list and dict follow :func:`~tensormodes.fx.node.map_aggregate`.
        """
        kind = type(a)
        if kind is tuple:
            return tuple([self.create_arg(v) for v in a])
        if kind is list:
            return [self.create_arg(v) for v in a]
        if kind is dict:
            return {self._dict_key(k): self.create_arg(v) for k, v in a.items()}
        if kind is slice:
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if is_namedtuple(a):
            return self.create_node("call_function", kind, tuple([self.create_arg(v) for v in a]), {})
        if isinstance(a, (tuple, list, dict)):
            return map_subclass(a, self.create_arg)
        return self._leaf_arg(a)

    def _dict_key(self, k: Any) -> Any:
        key = self.create_arg(k)
        found = []
        map_aggregate(key, lambda v: found.append(v) if isinstance(v, Node) else None)
        if found:
            raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {key}")
        return key

    def _leaf_arg(self, a: Any) -> Any:
        if isinstance(a, Proxy):
            if a.tracer is not self:
                raise RuntimeError(f"{a!r} belongs to another trace and cannot be used in this one")
            return a.node
        if isinstance(a, Tensor):
            name = self._attribute_names.get(id(a))
            if name is not None:
                return self.getattr(name, a, self._parameter_proxies).node
            name = self._constants.get(id(a))
            if name is None:
                name = f"_tensor_constant{len(self._constants)}"
                self._constants[id(a)] = name
                self.attributes[name] = a
            return self.create_node("get_attr", name, (), {})
        create = getattr(type(a), "__fx_create_arg__", None)
        if create is not None:  # a user class that knows its own node (torch.fx's protocol)
            return a.__fx_create_arg__(self)
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            # as torch.fx: a dataclass value becomes a call of its class with its fields by name,
            # so Proxies inside it stay traced values
            fields = {f.name: self.create_arg(getattr(a, f.name)) for f in dataclasses.fields(a)}
            return self.create_node("call_function", type(a), (), fields)
        return a

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Proxy]) -> Proxy:
        """Called when a parameter or buffer ``attr`` (a dotted path) of the traced module reaches
        a recorded call; returns its ``get_attr`` Proxy (one per attribute)."""
        if attr not in parameter_proxy_cache:
            self.attributes[attr] = attr_val
            parameter_proxy_cache[attr] = self.create_proxy("get_attr", attr, (), {})
        return parameter_proxy_cache[attr]

    def record(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """Record the public call ``func(*args, **kwargs)`` received through the protocol, with
        torch.fx's targets: methods as ``call_method``, ``x[i]`` as ``operator.getitem``,
        property reads as ``getattr``."""
        kind, target, attribute = _node_kind(func)
        if attribute is not None:
            args = (args[0], attribute, *args[1:])
        proxy = self.emit(kind, target, args, kwargs)
        return None if target is operator.setitem or target is setattr else proxy

    def _touches_attribute(self, args: tuple, kwargs: dict) -> bool:
        if not self._attribute_names:
            return False
        found = []
        map_aggregate((args, kwargs), lambda v: found.append(v) if id(v) in self._attribute_names else None)
        return bool(found)


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made without one (``Proxy(node)``): it appends to the node's graph."""

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)


_KINDS: dict = {}
_CONTAINERS = (tuple, list, dict, slice)


def _node_kind(func) -> tuple[str, Any, str | None]:
    """(op, target, attribute name) of the node recording ``func``: torch.fx's choices."""
    try:
        return _KINDS[func]
    except KeyError:
        pass
    except TypeError:  # an unhashable callable
        return "call_function", func, None
    name = getattr(func, "__name__", None)
    if func is Tensor.__getitem__:
        kind = ("call_function", operator.getitem, None)
    elif func is Tensor.__setitem__:
        kind = ("call_function", operator.setitem, None)
    elif name in ("__get__", "__set__") and isinstance(getattr(func, "__self__", None), property):
        attribute = (resolve_name(func) or "").split(".")[-2]
        kind = ("call_function", getattr if name == "__get__" else setattr, attribute)
    elif name is not None and getattr(func, "__qualname__", "").startswith("Tensor.") \
            and getattr(Tensor, name, None) is func:  # building one method, not all (is_tensor_method_or_property)
        kind = ("call_method", name, None)
    else:
        kind = ("call_function", func, None)
    _KINDS[func] = kind
    return kind


def _find_tracer(args, kwargs):
    pending = [args, kwargs]
    while pending:
        a = pending.pop()
        if isinstance(a, Proxy):
            return a.tracer
        if isinstance(a, (tuple, list)):
            pending.extend(a)
        elif isinstance(a, dict):
            pending.extend(a.values())
        elif isinstance(a, slice):
            pending.extend((a.start, a.stop, a.step))
    raise RuntimeError("Proxy.__torch_function__ was called without a Proxy among the arguments")


# Operators: name -> operator function; torch.fx records these targets. Generated as real,
# named methods (each with its own source) from the table.
_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "matmul": operator.matmul,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift,
}
_COMPARISONS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
                "ge": operator.ge}
_UNARY = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert, "abs": operator.abs}


def _define_operator(method: str, body: str, target) -> None:
    source = f"def {method}({body.split(':')[0]}):\n    return {body.split(':', 1)[1]}\n"
    func = _generated.define(source, method, {"_target": target}, qualname=f"Proxy.{method}",
                             label=f"tensormodes.fx.Proxy.{method}")
    setattr(Proxy, method, func)


def _install_operators() -> None:
    call = 'self.tracer.emit("call_function", _target, '
    for name, target in _BINARY.items():
        _define_operator(f"__{name}__", f"self, other:{call}(self, other), {{}})", target)
        _define_operator(f"__r{name}__", f"self, other:{call}(other, self), {{}})", target)
    for name, target in _COMPARISONS.items():
        _define_operator(f"__{name}__", f"self, other:{call}(self, other), {{}})", target)
    for name, target in _UNARY.items():
        _define_operator(f"__{name}__", f"self:{call}(self,), {{}})", target)
    _define_operator("__getitem__", f"self, index:{call}(self, index), {{}})", operator.getitem)


_install_operators()
