"""``Tracer`` and ``symbolic_trace``: run a function on Proxies and record what it does.

Two mechanisms of the override protocol do the recording; nothing is patched but the
functions of ``math`` (torch.fx's autowrap, see below):

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
  registered with :func:`wrap` (one ``call_function`` node each, never traced into); and,
  as torch.fx's autowrap, the functions of the tracer's ``autowrap_modules`` (``math``) and its
  ``autowrap_functions`` when given a Proxy (``math.sqrt(x.size(-1))``): while a trace runs they
  are leaves in those modules and in the traced function's globals, and are restored after;
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
import contextlib
import functools
import inspect
import math
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

from .._api import namespace as tm
from .._api.declarations import value_methods
from .._api.tensor import Tensor
from .._ops import OPS
from .._overrides.dispatch import handle_torch_function, has_torch_function
from ..nn.modules.container import Sequential
from ..overrides import TorchFunctionMode
from ._purity import has_side_effect
from .graph import Graph
from .graph_module import GraphModule, TracedAttributes, intercept_module_calls
from .node import map_aggregate
from .proxy import Proxy, Scope, TracerBase, _node_kind

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


_GUARDED_TYPES = (bool, int, float, complex, str)


@has_side_effect
def _assert_is_none(value: Any, msg: str) -> None:
    """The guard of a ``concrete_args`` entry fixed to None (torch.fx's ``_assert_is_none``)."""
    assert value is None, msg


@has_side_effect
def _assert(condition: Any, message: str) -> None:
    """The guard of a ``concrete_args`` entry fixed to a value: ``condition`` compares them."""
    if not condition:
        raise AssertionError(message)


_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _call_with_placeholders(fn: Callable, signature: inspect.Signature, values: dict[str, Any]) -> Any:
    """Call ``fn`` with the placeholder values by parameter name. A ``*args`` / ``**kwargs``
    parameter receives its own Proxy, as torch.fx: the call goes through a copy of the
    function whose code takes every parameter positionally (its body unchanged), so the body
    indexes the Proxy (``args[0]`` becomes a ``getitem`` node)."""
    P = inspect.Parameter
    kinds = {name: parameter.kind for name, parameter in signature.parameters.items()}
    if P.VAR_POSITIONAL not in kinds.values() and P.VAR_KEYWORD not in kinds.values():
        args = [values[n] for n, kind in kinds.items() if kind is not P.KEYWORD_ONLY]
        return fn(*args, **{n: values[n] for n, kind in kinds.items() if kind is P.KEYWORD_ONLY})
    bound_self = getattr(fn, "__self__", None) if inspect.ismethod(fn) else None
    func = fn.__func__ if inspect.ismethod(fn) else fn
    code = getattr(func, "__code__", None)
    if code is None or not code.co_flags & _VARIADIC or inspect.unwrap(func) is not func:
        raise NotImplementedError(f"tracing {getattr(fn, '__qualname__', fn)}: *args / **kwargs are traced only on "
                                  "plain Python functions and methods")
    count = code.co_argcount + code.co_kwonlyargcount + bin(code.co_flags & _VARIADIC).count("1")
    flat = types.FunctionType(code.replace(co_flags=code.co_flags & ~_VARIADIC, co_argcount=count,
                                           co_posonlyargcount=0, co_kwonlyargcount=0),
                              func.__globals__, func.__name__, None, func.__closure__)
    ordered = [values[name] for name in code.co_varnames[1 if bound_self is not None else 0:count]]
    return flat(bound_self, *ordered) if bound_self is not None else flat(*ordered)


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
            return found[0].tracer.emit("call_function", cls, args, kwargs)
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


class Tracer(TracerBase):
    """Turns a function or module into a :class:`Graph` by running it on Proxies.

    Subclasses customise tracing through the hook methods (torch.fx's names): ``create_arg``,
    ``create_node``, ``create_proxy``, ``is_leaf_module``, ``call_module``, ``getattr``.
    """

    # the method of a traced module that is traced (torch.fx's class attribute)
    traced_func_name: str = "forward"

    def __init__(self, autowrap_modules: tuple[types.ModuleType, ...] = (math,),
                 autowrap_functions: tuple[Callable, ...] = ()) -> None:
        super().__init__(None)
        self.root: Any = None
        # torch.fx's autowrap: the public callables of these modules, and these functions, become
        # leaves while a trace runs, so a Proxy reaching them is recorded instead of failing
        # (the ids are collected when a trace starts, so an Interpreter's tracer pays nothing)
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_functions = tuple(autowrap_functions)
        self._module_paths: dict[int, str] = {}
        self.num_calls: dict[str, int] = {}  # calls so far per module path (``path@n`` keys)

    def _autowrap_function_ids(self) -> set[int]:
        ids = {id(value) for module in self._autowrap_modules for name, value in vars(module).items()
               if not name.startswith("_") and callable(value)}
        return ids | {id(fn) for fn in self._autowrap_functions}

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
        # as torch.fx: the module is the scope of what is recorded inside it, and its call is
        # on module_stack, keyed "path@n" for its n-th call after the first
        saved_scope = (self.scope.module_path, self.scope.module_type)
        self.scope.module_path, self.scope.module_type = qualified_name, type(m)
        calls = self.num_calls.get(qualified_name, 0)
        key = f"{qualified_name}@{calls}" if calls else qualified_name
        self.module_stack[key] = (qualified_name, type(m))
        self.num_calls[qualified_name] = calls + 1
        try:
            if not self.is_leaf_module(m, qualified_name):
                return forward(*args, **kwargs)
            self.attributes[qualified_name] = m
            return self.emit("call_module", qualified_name, args, kwargs)
        finally:
            self.module_stack.pop(key, None)
            self.scope.module_path, self.scope.module_type = saved_scope

    # -- tracing --------------------------------------------------------------------------

    def _collect_root(self, root: Any) -> None:
        for method, table in (("named_parameters", self._attribute_names), ("named_buffers", self._attribute_names),
                              ("named_modules", self._module_paths)):
            named = getattr(root, method, None)
            if callable(named):
                for name, value in named():
                    table.setdefault(id(value), name)

    def trace(self, root: Any, concrete_args: dict[str, Any] | None = None) -> Graph:
        """Trace ``root`` (a function, or a module whose ``traced_func_name`` method, by default
        ``forward``, is traced) into a new Graph.

        ``concrete_args`` fixes some inputs to Python values (which then decide control flow),
        as torch.fx: each gets a placeholder ``<name>_1`` and, for ``None``, numbers, strings,
        dtypes and devices, a guard that the value passed equals it (:data:`PH` keeps the
        input a traced value instead).
        """
        fn = self._root_function(root)
        self.scope = Scope("", None)
        self.module_stack.clear()
        self.num_calls.clear()
        self.node_name_to_scope = {}
        concrete_args = dict(concrete_args or {})
        self.graph = Graph(tracer_cls=type(self))
        code = getattr(inspect.unwrap(fn), "__code__", None)
        if code is not None:
            self.graph._co_fields = {"co_name": code.co_name, "co_filename": code.co_filename,
                                     "co_firstlineno": code.co_firstlineno}
        signature = inspect.signature(fn)
        unknown = set(concrete_args) - set(signature.parameters)
        if unknown:
            raise TypeError(f"concrete_args names {sorted(unknown)}, which are not parameters of "
                            f"{getattr(fn, '__qualname__', fn)}{signature}")
        _bind_pending_wraps()
        annotations = getattr(inspect.unwrap(fn), "__annotations__", None) or {}
        values: dict[str, Any] = {}
        P = inspect.Parameter
        # torch.fx's order (the code's): named parameters, then *args, then **kwargs
        order = {P.VAR_POSITIONAL: 1, P.VAR_KEYWORD: 2}
        for name, parameter in sorted(signature.parameters.items(), key=lambda item: order.get(item[1].kind, 0)):
            if name in concrete_args:
                values[name] = self._concrete_placeholder(name, concrete_args[name], parameter)
                continue
            target = {P.VAR_POSITIONAL: f"*{name}", P.VAR_KEYWORD: f"**{name}"}.get(parameter.kind, name)
            default = () if parameter.default is P.empty else (parameter.default,)
            values[name] = self.create_proxy("placeholder", target, default, {}, type_expr=annotations.get(name))
        namespaces = [vars(module) for module in self._autowrap_modules]
        namespaces.append(getattr(inspect.unwrap(fn), "__globals__", {}))
        with TracingMode(self), intercept_module_calls(self._intercepted_module_call), \
                _autowrapped(namespaces, self._autowrap_function_ids()):
            result = _call_with_placeholders(fn, signature, values)
        self.create_node("output", "output", (self.create_arg(result),), {}, type_expr=annotations.get("return"))
        return self.graph

    def _root_function(self, root: Any) -> Callable:
        if inspect.isfunction(root) or inspect.ismethod(root) or isinstance(root, functools.partial) \
                or inspect.isbuiltin(root):
            self.root = None
            return root
        if not callable(getattr(root, "forward", None)):
            raise TypeError(f"symbolic_trace expects a function or a module with a forward method, "
                            f"got {type(root).__name__}")
        self.root = root
        fn = getattr(root, self.traced_func_name, None)
        if fn is None:
            raise AssertionError(f"traced_func_name={self.traced_func_name} doesn't exist in {type(root).__name__}")
        self._collect_root(root)
        return fn

    def _concrete_placeholder(self, name: str, value: Any, parameter: inspect.Parameter) -> Any:
        """The value a ``concrete_args`` entry gives the traced code (torch.fx's scheme): a
        placeholder ``<name>_1`` (with the parameter's default), whose Proxy is the value for
        :data:`PH` (a :class:`PHWithMeta`'s attributes copied onto the node); for any other
        value, the value itself, after a guard node checking the input equals it."""
        if not isinstance(value, PHBase) and isinstance(value, (tuple, list, dict)):
            nested = []
            map_aggregate(value, lambda v: nested.append(v) if isinstance(v, PHBase) else None)
            if nested:
                raise NotImplementedError(f"concrete_args[{name!r}]: PH inside a container (flattening the input "
                                          "with pytree) is not supported; trace with the container's parts as "
                                          "arguments")
        default = () if parameter.default is inspect.Parameter.empty else (parameter.default,)
        proxy = self.create_proxy("placeholder", f"{name}_1", default, {})
        if isinstance(value, PHBase):
            if value is not PH:
                for key, attribute in vars(value).items():
                    setattr(proxy.node, key, attribute)
            return proxy
        if value is None:
            message = f"{name} has been specialized to have value None but got another value"
            self.create_proxy("call_function", _assert_is_none, (proxy, message), {})
        elif type(value) in _GUARDED_TYPES or isinstance(value, (tm.dtype, tm.device)):
            message = f"{name} has been specialized to have value {value} but got another value"
            self.create_proxy("call_function", _assert, (proxy == value, message), {})
        else:
            warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to specialized function. "
                          "It is up to the user to make sure that your inputs match the inputs you specialized the "
                          "function with.", stacklevel=3)
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
    return GraphModule(TracedAttributes(tracer.attributes), graph, name)


# (globals, name) of every ``wrap("name")`` whose function was not defined yet: bound at the
# next trace, as torch.fx binds its wrapped names when tracing starts
_PENDING_WRAPS: list[tuple[dict, str]] = []


def _bind_pending_wraps() -> None:
    for caller, name in list(_PENDING_WRAPS):
        original = caller.get(name)
        if callable(original):
            if getattr(original, "__fx_leaf__", None) is None:
                caller[name] = _make_leaf(original)
            _PENDING_WRAPS.remove((caller, name))


def wrap(fn_or_name: Callable | str) -> Callable:
    """Register a function as a leaf of tracing: each call becomes one ``call_function`` node
    and its body is not traced (so it may use control flow on its arguments).

    Use it as a decorator (``@fx.wrap``), as a call on a function (``fx.wrap(f)``) or with a
    name (``fx.wrap("len")``): the global of that name in the calling module (or the builtin)
    is rebound to the registered function, so calls through the global are recorded; a name
    not defined yet is bound when the next trace starts, as torch.fx does. The registered
    function takes part in the override protocol; outside a trace it just calls the original.

    >>> import tensormodes as tm
    >>> from tensormodes import fx
    >>> @fx.wrap
    ... def clip_if_large(x):
    ...     return x.clamp(max=1) if x.max() > 1 else x
    >>> gm = fx.symbolic_trace(lambda x: clip_if_large(x) + 1)
    >>> [n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"]
    ['clip_if_large', 'add']
    """
    caller = sys._getframe(1).f_globals
    if isinstance(fn_or_name, str):
        original = caller.get(fn_or_name, getattr(builtins, fn_or_name, None))
        if original is None:
            _PENDING_WRAPS.append((caller, fn_or_name))
            return fn_or_name
        if not callable(original):
            raise NameError(f"wrap: {fn_or_name!r} is neither a callable global of the calling module nor a builtin")
        if getattr(original, "__fx_leaf__", None) is None:
            caller[fn_or_name] = _make_leaf(original)
        return fn_or_name  # torch.fx returns the name too
    if not callable(fn_or_name):
        raise TypeError(f"wrap expects a callable or the name of one, got {type(fn_or_name).__name__}")
    if getattr(fn_or_name, "__fx_leaf__", None) is not None:
        return fn_or_name
    leaf = _make_leaf(fn_or_name)
    name = getattr(fn_or_name, "__name__", None)
    if name is not None and caller.get(name) is fn_or_name:
        caller[name] = leaf  # fx.wrap(f) as a statement: calls through the global f are recorded
    return leaf


@contextlib.contextmanager
def _autowrapped(namespaces: list[dict], function_ids: set[int]):
    """Within the block, each entry of ``namespaces`` that is one of the autowrapped functions is
    its leaf (torch.fx patches the same places); every entry is restored on the way out."""
    patched: list[tuple[dict, str, Any]] = []
    try:
        for namespace in namespaces:
            for name, value in list(namespace.items()):
                if id(value) in function_ids and getattr(value, "__fx_leaf__", None) is None:
                    patched.append((namespace, name, value))
                    namespace[name] = _leaf_of(value)
        yield
    finally:
        for namespace, name, value in reversed(patched):
            namespace[name] = value


@functools.cache
def _leaf_of(fn: Callable) -> Callable:
    # as torch.fx's autowrap: recorded only when given a Proxy (``math.sqrt(4)`` stays 2.0)
    return _make_leaf(fn, proxies_only=True)


def _holds_proxy(values: tuple) -> bool:
    found = []
    map_aggregate(values, lambda value: found.append(value) if isinstance(value, Proxy) else None)
    return bool(found)


def _make_leaf(fn: Callable, proxies_only: bool = False) -> Callable:
    @functools.wraps(fn)
    def leaf(*args, **kwargs):
        relevant = (*args, *kwargs.values())
        if has_torch_function(relevant) and (not proxies_only or _holds_proxy(relevant)):
            return handle_torch_function(leaf, relevant, *args, **kwargs)
        return fn(*args, **kwargs)

    leaf.__fx_leaf__ = fn
    return leaf
