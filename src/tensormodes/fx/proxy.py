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

import dis
import linecache
import operator
import os
import sys

from .. import _generated
from .node import Node

__all__ = ["Proxy", "Attribute", "TraceError"]

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

    def __init__(self, node: Node, tracer=None) -> None:
        self.node = node
        self.tracer = tracer

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
        self.tracer.create_proxy("call_function", operator.setitem, (self, index, value), {})

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

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
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


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
    call = 'self.tracer.create_proxy("call_function", _target, '
    for name, target in _BINARY.items():
        _define_operator(f"__{name}__", f"self, other:{call}(self, other), {{}})", target)
        _define_operator(f"__r{name}__", f"self, other:{call}(other, self), {{}})", target)
    for name, target in _COMPARISONS.items():
        _define_operator(f"__{name}__", f"self, other:{call}(self, other), {{}})", target)
    for name, target in _UNARY.items():
        _define_operator(f"__{name}__", f"self:{call}(self,), {{}})", target)
    _define_operator("__getitem__", f"self, index:{call}(self, index), {{}})", operator.getitem)


_install_operators()
