"""``Tracer`` and ``symbolic_trace``: run a function on Proxies and record what it does.

Two mechanisms of the override protocol do the recording; nothing is patched:

* every Proxy is a tensor-like, so any public call that receives one is handed to
  ``Proxy.__torch_function__`` and recorded;
* while tracing, a :class:`TorchFunctionMode` is active, so calls that receive *no*
  Proxy - ``tm.ones(3)``, ``tm.randn(2)``, ``tm.arange(n)``, ``tm.tensor([...])`` - are
  recorded too instead of being folded into constants (torch.fx, which has no mode, folds
  them).

What is recorded and what runs eagerly while tracing:

* recorded: every call with a Proxy argument; every public function, method and operator
  call without one (factories, random ops, ops on captured tensors); calls touching a
  parameter or buffer of the traced module (through a ``get_attr`` node); functions
  registered with :func:`wrap` (one ``call_function`` node each, never traced into);
* eager: Python arithmetic on Python numbers; calls with no Proxy that return Python
  values - property reads (``w.shape``, ``w.dtype``), ``size()``, ``dim()``, ``numel()``,
  ``item()``, ``tolist()``, ``len()``, ``bool()``, ``repr()`` and the op table's ops that
  return a bool, int or dtype (``equal``, ``allclose``, ``is_complex`` ...) - on tensors that
  are not parameters or buffers of the traced module;
* on a Proxy, ``x.shape`` is a ``getattr`` node and ``x.shape[0]`` a ``getitem`` node (as in
  torch.fx); what needs a concrete value (``bool``, ``len``, iteration) raises
  :class:`TraceError`.

>>> import tensormodes as tm
>>> from tensormodes import fx
>>> def f(x):
...     return x + tm.ones(3)
>>> print(fx.symbolic_trace(f).code.strip())
def forward(self, x):
    ones = tensormodes.ones(3)
    add = x + ones;  x = ones = None
    return add
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator
import sys
from collections.abc import Callable
from typing import Any

from .._api.declarations import value_methods
from .._api.tensor import Tensor
from .._ops import OPS
from .._overrides.dispatch import handle_torch_function, has_torch_function
from ..nn.modules.container import Sequential
from ..overrides import TorchFunctionMode, resolve_name
from .graph import Graph
from .graph_module import GraphModule, intercept_module_calls
from .node import Node, is_namedtuple, map_aggregate, map_subclass
from .proxy import Proxy

__all__ = ["Tracer", "symbolic_trace", "wrap", "TracingMode", "PH", "PHBase", "PHWithMeta", "ProxyableClassMeta"]

@functools.cache
def _eager_functions() -> frozenset:
    # The Tensor layer's methods declared returns_value, and the op table's ops returning no
    # tensor: with no Proxy argument they run eagerly (on a Proxy they are recorded like any method).
    eager = {getattr(Tensor, name) for name in value_methods()}
    for opdef in OPS.values():
        if "Tensor" in str(opdef.signature.return_annotation):
            continue
        if opdef.method:
            eager.add(getattr(Tensor, opdef.method))
        if opdef.function:
            namespace = sys.modules[opdef.namespace]
            eager.add(getattr(namespace, opdef.function))
    return frozenset(eager)


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


class PHBase:
    """A placeholder in ``concrete_args``: the argument stays an input of the graph."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


class PHWithMeta(PHBase):
    """A :data:`PH` carrying a key: ``ph_key`` is set on the placeholder node it makes, so
    passes can find that input."""

    def __init__(self, ph_key: str | None = None) -> None:
        super().__init__()
        self.ph_key = ph_key


class ProxyableClassMeta(type):
    """A metaclass making a class's construction traceable: ``Pair(x, y)`` with a Proxy among
    the arguments records a ``call_function`` node of the class instead of running
    ``__init__`` (torch.fx's ``ProxyableClassMeta``).

    >>> from tensormodes import fx
    >>> class Pair(metaclass=fx.ProxyableClassMeta):
    ...     def __init__(self, left, right):
    ...         self.left, self.right = left, right
    >>> gm = fx.symbolic_trace(lambda x: Pair(x, x))
    >>> [n.target for n in gm.graph.nodes if n.op == "call_function"] == [Pair]
    True
    >>> Pair(1, 2).right
    2
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        found: list[Proxy] = []
        map_aggregate((args, kwargs), lambda v: found.append(v) if isinstance(v, Proxy) else None)
        if found:
            return found[0].tracer.create_proxy("call_function", cls, args, kwargs)
        return super().__call__(*args, **kwargs)


class TracingMode(TorchFunctionMode):
    """The mode a :class:`Tracer` pushes while tracing: records the calls that take no Proxy
    (factories, random ops, calls on parameters), lets Proxies record their own."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for kind in types:
            if issubclass(kind, Proxy):
                return NotImplemented  # the Proxy's own __torch_function__ records it
        if func in _eager_functions() or _node_kind(func)[2] is not None:  # a Python value, or a property
            if not self.tracer._touches_attribute(args, kwargs):
                return func(*args, **kwargs)
        return self.tracer.record(func, args, kwargs)


class Tracer:
    """Turns a function or module into a :class:`Graph` by running it on Proxies.

    Subclasses customise tracing through the hook methods (torch.fx's names): ``create_arg``,
    ``create_node``, ``create_proxy``, ``is_leaf_module``, ``call_module``, ``getattr``.
    """

    def __init__(self) -> None:
        self.graph: Graph | None = None
        self.root: Any = None
        self.attributes: dict[str, Any] = {}
        self._attribute_names: dict[int, str] = {}
        self._module_paths: dict[int, str] = {}
        self._constants: dict[int, str] = {}
        self._parameter_proxies: dict[str, Proxy] = {}

    # -- hooks ----------------------------------------------------------------------------

    def create_node(self, kind: str, target: Any, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Called for every node the trace records; returns the node added to ``self.graph``."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        """Called to wrap each new node in the value the traced code continues with."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any = None) -> Proxy:
        """Record one operation: arguments go through :meth:`create_arg`, then :meth:`create_node`;
        returns the Proxy of the result."""
        leaf = self._leaf_arg
        # flat arguments (the common case) are converted here; nested ones through create_arg
        args = tuple([leaf(a) if not isinstance(a, _CONTAINERS) else self.create_arg(a) for a in args])
        kwargs = {k: leaf(v) if not isinstance(v, _CONTAINERS) else self.create_arg(v) for k, v in kwargs.items()}
        return self.proxy(self.create_node(kind, target, args, kwargs, name, type_expr))

    def create_arg(self, a: Any) -> Any:
        """Turn a traced value into a node argument: Proxies become their nodes, parameters and
        buffers of the root ``get_attr`` nodes (through :meth:`getattr`), other tensors
        ``_tensor_constant<n>`` attributes; containers are converted element by element.

        As in torch.fx, a named tuple becomes a ``call_function`` node of its class (so
        ``tm.stack(Pair(x, y))`` records ``pair = Pair(x, y)``); an ``OrderedDict`` stays one,
        other subclasses of tuple, list and dict follow :func:`~tensormodes.fx.node.map_aggregate`.
        """
        kind = type(a)
        if kind is tuple:
            return tuple([self.create_arg(v) for v in a])
        if kind is list:
            return [self.create_arg(v) for v in a]
        if kind is dict:
            return {k: self.create_arg(v) for k, v in a.items()}
        if kind is slice:
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if is_namedtuple(a):
            return self.create_node("call_function", kind, tuple([self.create_arg(v) for v in a]), {})
        if isinstance(a, (tuple, list, dict)):
            return map_subclass(a, self.create_arg)
        return self._leaf_arg(a)

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
        return a

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Proxy]) -> Proxy:
        """Called when a parameter or buffer ``attr`` (a dotted path) of the traced module reaches
        a recorded call; returns its ``get_attr`` Proxy (one per attribute)."""
        if attr not in parameter_proxy_cache:
            self.attributes[attr] = attr_val
            parameter_proxy_cache[attr] = self.create_proxy("get_attr", attr, (), {})
        return parameter_proxy_cache[attr]

    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        """Whether a module call is recorded as one ``call_module`` node (True) or traced into:
        tensormodes' own layers are leaves, except containers such as ``Sequential``."""
        return type(m).__module__.startswith("tensormodes.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Any) -> str:
        """The dotted name of ``mod`` inside the traced module."""
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Any, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """Called for every module call while tracing: records a ``call_module`` node for a leaf
        module, otherwise runs ``forward`` so the module's body is traced."""
        qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, qualified_name):
            return forward(*args, **kwargs)
        self.attributes[qualified_name] = m
        return self.create_proxy("call_module", qualified_name, args, kwargs)

    # -- what the protocol hands over -----------------------------------------------------

    def record(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """Record the public call ``func(*args, **kwargs)`` received through the protocol, with
        torch.fx's targets: methods as ``call_method``, ``x[i]`` as ``operator.getitem``,
        property reads as ``getattr``."""
        kind, target, attribute = _node_kind(func)
        if attribute is not None:
            args = (args[0], attribute, *args[1:])
        proxy = self.create_proxy(kind, target, args, kwargs)
        return None if target is operator.setitem or target is setattr else proxy

    def _touches_attribute(self, args: tuple, kwargs: dict) -> bool:
        if not self._attribute_names:
            return False
        found = []
        map_aggregate((args, kwargs), lambda v: found.append(v) if id(v) in self._attribute_names else None)
        return bool(found)

    # -- tracing --------------------------------------------------------------------------

    def _collect_root(self, root: Any) -> None:
        for method, table in (("named_parameters", self._attribute_names), ("named_buffers", self._attribute_names),
                              ("named_modules", self._module_paths)):
            named = getattr(root, method, None)
            if callable(named):
                for name, value in named():
                    table.setdefault(id(value), name)

    def trace(self, root: Any, concrete_args: dict[str, Any] | None = None) -> Graph:
        """Trace ``root`` (a function, or a module whose ``forward`` is traced) into a new Graph.

        ``concrete_args`` fixes some inputs to Python values (which then decide control flow);
        each still has a placeholder, with the value as its default.
        """
        if inspect.isfunction(root) or inspect.ismethod(root) or isinstance(root, functools.partial) \
                or inspect.isbuiltin(root):
            fn, self.root = root, None
        elif callable(getattr(root, "forward", None)):
            fn, self.root = root.forward, root
            self._collect_root(root)
        else:
            raise TypeError(f"symbolic_trace expects a function or a module with a forward method, "
                            f"got {type(root).__name__}")
        concrete_args = dict(concrete_args or {})
        self.graph = Graph(tracer_cls=type(self))
        signature = inspect.signature(fn)
        unknown = set(concrete_args) - set(signature.parameters)
        if unknown:
            raise TypeError(f"concrete_args names {sorted(unknown)}, which are not parameters of "
                            f"{getattr(fn, '__qualname__', fn)}{signature}")
        args, kwargs = [], {}
        P = inspect.Parameter
        for name, parameter in signature.parameters.items():
            if parameter.kind is P.VAR_POSITIONAL:
                self.create_node("placeholder", f"*{name}", (), {})
                continue
            if parameter.kind is P.VAR_KEYWORD:
                self.create_node("placeholder", f"**{name}", (), {})
                continue
            if name in concrete_args:
                value = self._concrete_placeholder(name, concrete_args[name])
            else:
                default = () if parameter.default is P.empty else (parameter.default,)
                value = self.proxy(self.create_node("placeholder", name, default, {}))
            if parameter.kind is P.KEYWORD_ONLY:
                kwargs[name] = value
            else:
                args.append(value)
        with TracingMode(self), intercept_module_calls(self._intercepted_module_call):
            result = fn(*args, **kwargs)
        self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph

    def _concrete_placeholder(self, name: str, value: Any) -> Any:
        """The value a ``concrete_args`` entry gives the traced code: a Proxy of a placeholder
        ``<name>_1`` for :data:`PH` (a :class:`PHWithMeta`'s attributes copied onto the node,
        as torch.fx does), otherwise the value itself, kept as the placeholder's default."""
        if isinstance(value, PHBase):
            node = self.create_node("placeholder", f"{name}_1", (), {})
            if value is not PH:
                for key, attribute in vars(value).items():
                    setattr(node, key, attribute)
            return self.proxy(node)
        nested = []
        map_aggregate(value, lambda v: nested.append(v) if isinstance(v, PHBase) else None)
        if nested:
            raise NotImplementedError(f"concrete_args[{name!r}]: PH inside a container (flattening the input with "
                                      "pytree) is not supported; trace with the container's parts as arguments")
        # the value itself, not create_arg's form: a default is a constant of the signature
        self.create_node("placeholder", name, (value,), {})
        return value

    def _intercepted_module_call(self, module, forward, args, kwargs):
        return self.call_module(module, forward, args, kwargs)


def symbolic_trace(root: Any, concrete_args: dict[str, Any] | None = None) -> GraphModule:
    """Trace a function or module into a :class:`GraphModule` (torch.fx's entry point).

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> gm = fx.symbolic_trace(lambda x: x * 2 + tm.randn(3))
    >>> [n.op for n in gm.graph.nodes]
    ['placeholder', 'call_function', 'call_function', 'call_function', 'output']
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    if tracer.root is not None:
        name = type(root).__name__
    else:
        name = getattr(root, "__name__", None) or getattr(getattr(root, "func", None), "__name__", "GraphModule")
    return GraphModule(tracer.attributes, graph, name)


def wrap(fn_or_name: Callable | str) -> Callable:
    """Register a function as a leaf of tracing: each call becomes one ``call_function`` node
    and its body is not traced (so it may use control flow on its arguments).

    Use it as a decorator (``@fx.wrap``), or with a name (``fx.wrap("len")``) at module level to
    rebind that global of the calling module (or builtin) to the registered function. The
    registered function takes part in the override protocol; outside a trace it just calls
    the original.

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> @fx.wrap
    ... def clip_if_large(x):
    ...     return x.clamp(max=1) if x.max() > 1 else x
    >>> gm = fx.symbolic_trace(lambda x: clip_if_large(x) + 1)
    >>> [n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"]
    ['clip_if_large', 'add']
    """
    if isinstance(fn_or_name, str):
        caller = sys._getframe(1).f_globals
        original = caller.get(fn_or_name, getattr(builtins, fn_or_name, None))
        if original is None or not callable(original):
            raise NameError(f"wrap: {fn_or_name!r} is neither a callable global of the calling module nor a builtin")
        leaf = _make_leaf(original)
        caller[fn_or_name] = leaf
        return leaf
    if not callable(fn_or_name):
        raise TypeError(f"wrap expects a callable or the name of one, got {type(fn_or_name).__name__}")
    return _make_leaf(fn_or_name)


def _make_leaf(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def leaf(*args, **kwargs):
        relevant = (*args, *kwargs.values())
        if has_torch_function(relevant):
            return handle_torch_function(leaf, relevant, *args, **kwargs)
        return fn(*args, **kwargs)

    leaf.__fx_leaf__ = fn
    return leaf
