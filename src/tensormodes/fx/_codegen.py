"""Python source for a graph: names no user input can break, and the code text itself.

Every name written into generated code is either a node name (made by
:class:`Namespace`: ASCII letters, digits and ``_``, never a keyword, a builtin or a
reserved name) or a global registered by the code generator under such a name. Every
user-supplied string (attribute paths, method names, keyword names, constants) reaches
the code only as a ``repr`` literal or after the same sanitising, so it can neither
break the syntax nor inject code.
"""

from __future__ import annotations

import builtins
import keyword
import math
import operator
import re
from typing import Any

import tensormodes as tm

from .node import Node, qualified_name

__all__ = ["Namespace", "PythonCode", "python_code", "INFIX", "UNARY", "is_safe_identifier"]

_ILLEGAL_CHARS = re.compile(r"[^0-9a-zA-Z_]+")
_NUMBERED = re.compile(r"(.*)_(\d+)$")
# Names generated code relies on: node names never take them.
_RESERVED = frozenset({"self", "tensormodes", "__name__", "__builtins__"})
_ILLEGAL_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | _RESERVED


def is_safe_identifier(name: Any) -> bool:
    """True for an ASCII identifier that is not a keyword: safe to write as ``obj.name``.

    >>> is_safe_identifier("weight"), is_safe_identifier("class"), is_safe_identifier("a.b")
    (True, False, False)
    """
    return (isinstance(name, str) and name.isascii() and name.isidentifier()
            and not keyword.iskeyword(name))


class Namespace:
    """Unique, valid Python names derived from any candidate string (torch.fx's scheme:
    illegal characters become ``_``, clashes get ``_1``, ``_2`` ...).

    >>> ns = Namespace()
    >>> ns.create_name("getattr"), ns.create_name("a b"), ns.create_name("a b"), ns.create_name("1x")
    ('getattr_1', 'a_b', 'a_b_1', '_1x')
    """

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next_number: dict[str, int] = {}

    def create_name(self, candidate: str) -> str:
        """A fresh name based on ``candidate``, reserved from now on."""
        candidate = _ILLEGAL_CHARS.sub("_", str(candidate)) or "_"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        if candidate not in self._used and candidate not in _ILLEGAL_NAMES:
            self._used.add(candidate)
            return candidate
        match = _NUMBERED.match(candidate)
        base, number = (match.group(1), int(match.group(2))) if match else (candidate, 0)
        # remembering the last number per base keeps naming n nodes "add" linear, not quadratic
        number = max(number, self._next_number.get(base, 0))
        while True:
            number += 1
            name = f"{base}_{number}"
            if name not in self._used and name not in _ILLEGAL_NAMES:
                break
        self._next_number[base] = number
        self._used.add(name)
        return name

    def reserve(self, name: str) -> None:
        """Mark ``name`` as taken."""
        self._used.add(name)

    def release(self, name: str) -> None:
        """Make ``name`` available again (its node was erased)."""
        self._used.discard(name)


# operator function -> infix template; torch.fx writes these as Python operators.
INFIX = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
    operator.mod: "%", operator.pow: "**", operator.matmul: "@", operator.and_: "&", operator.or_: "|",
    operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==", operator.ne: "!=",
    operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
}
UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
_SIMPLE_OPERAND = re.compile(r"[A-Za-z0-9_.]+")
_LITERAL_TYPES = (bool, int, str, bytes, type(None))


class PythonCode:
    """The generated source (``src``) of a graph's function and the globals it needs."""

    def __init__(self, src: str, globals_: dict) -> None:
        self.src = src
        self.globals = globals_


class _Emitter:
    def __init__(self, node_names: set[str]) -> None:
        self.namespace = Namespace()
        for name in node_names:
            self.namespace.reserve(name)
        self.globals: dict[str, Any] = {"tensormodes": tm}
        self._global_of: dict[int, str] = {}

    def add_global(self, hint: str, value: Any) -> str:
        """A global name bound to ``value`` in the generated module (one per object)."""
        key = id(value)
        if key in self._global_of:
            return self._global_of[key]
        name = self.namespace.create_name(hint)
        self.globals[name] = value
        self._global_of[key] = name
        return name

    def target(self, target) -> str:
        public = qualified_name(target)
        if public.startswith("tensormodes.") and all(is_safe_identifier(p) for p in public.split(".")):
            path = public.split(".")[1:]
            holder: Any = tm
            for part in path:
                holder = getattr(holder, part, None)
            if holder is target:
                return public
        return self.add_global(getattr(target, "__name__", "fn"), target)

    def arg(self, a: Any) -> str:
        kind = type(a)
        if isinstance(a, Node):
            return a.name
        if kind is tuple:
            inner = ", ".join(self.arg(v) for v in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if kind is list:
            return "[" + ", ".join(self.arg(v) for v in a) + "]"
        if kind is dict:
            return "{" + ", ".join(f"{self.arg(k)}: {self.arg(v)}" for k, v in a.items()) + "}"
        if kind is slice:
            return f"slice({self.arg(a.start)}, {self.arg(a.stop)}, {self.arg(a.step)})"
        if a is Ellipsis:
            return "..."
        if kind in _LITERAL_TYPES:
            return repr(a)
        if kind is float and math.isfinite(a):
            return repr(a)
        if isinstance(a, tm.dtype) and is_safe_identifier(str(a).removeprefix("tensormodes.")):
            name = str(a).removeprefix("tensormodes.")
            if getattr(tm, name, None) is a:
                return f"tensormodes.{name}"
        return self.add_global(_constant_hint(a), a)

    def operand(self, a: Any) -> str:
        """``a`` as an operand of an operator, a receiver of ``.name`` or an indexed value:
        anything but a name or an unsigned number literal is parenthesised."""
        text = self.arg(a)
        return text if _SIMPLE_OPERAND.fullmatch(text) and not text[0] == "." else f"({text})"

    def receiver(self, a: Any) -> str:
        """``a`` before ``.name``: a number literal needs parentheses too (``(2).real``)."""
        text = self.operand(a)
        return f"({text})" if text[0].isdigit() else text

    def call_args(self, args: tuple, kwargs: dict) -> str:
        parts = [self.arg(a) for a in args]
        unsafe = {}
        for key, value in kwargs.items():
            if is_safe_identifier(key):
                parts.append(f"{key} = {self.arg(value)}")
            else:
                unsafe[key] = value
        if unsafe:
            parts.append("**" + self.arg(unsafe))
        return ", ".join(parts)


def _constant_hint(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if value > 0 else "neg_inf" if value < 0 else "nan"
    return f"_{type(value).__name__.lower()}_constant"


def attribute_chain(base: str, path: str) -> str:
    """``base.a.b`` for a dotted ``path``, with ``getattr(x, '...')`` for unsafe parts.

    >>> attribute_chain("self", "layer.weight"), attribute_chain("self", "my attr")
    ('self.layer.weight', "getattr(self, 'my attr')")
    """
    text = base
    for part in path.split("."):
        text = f"{text}.{part}" if is_safe_identifier(part) else f"getattr({text}, {part!r})"
    return text


def _expression(node: Node, emit: _Emitter) -> str:
    op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
    if op == "get_attr":
        return attribute_chain("self", target)
    if op == "call_module":
        return f"{attribute_chain('self', target)}({emit.call_args(args, kwargs)})"
    if op == "call_method":
        receiver = emit.receiver(args[0])
        method = f"{receiver}.{target}" if is_safe_identifier(target) else f"getattr({receiver}, {target!r})"
        return f"{method}({emit.call_args(args[1:], kwargs)})"
    # call_function
    if not kwargs:
        if target in INFIX and len(args) == 2:
            return f"{emit.operand(args[0])} {INFIX[target]} {emit.operand(args[1])}"
        if target in UNARY and len(args) == 1:
            return f"{UNARY[target]}{emit.operand(args[0])}"
        if target is operator.getitem and len(args) == 2:
            return f"{emit.operand(args[0])}[{emit.arg(args[1])}]"
        if target is getattr and len(args) == 2 and is_safe_identifier(args[1]):
            return f"{emit.receiver(args[0])}.{args[1]}"
    return f"{emit.target(target)}({emit.call_args(args, kwargs)})"


def python_code(nodes, root_module: str = "self", function_name: str = "forward") -> PythonCode:
    """Generate the source of ``function_name(root_module, *inputs)`` for ``nodes`` (in order).

    Each value is released (``name = None``) right after its last use, as torch.fx does, so
    large intermediates do not live until the function returns.
    """
    nodes = list(nodes)
    emit = _Emitter({n.name for n in nodes} | {root_module})
    last_use: dict[Node, Node] = {}
    for node in reversed(nodes):
        for used in node.all_input_nodes:
            last_use.setdefault(used, node)
    freed_at: dict[Node, list[str]] = {}
    for used, user in last_use.items():
        freed_at.setdefault(user, []).append(used.name)
    params, body = [root_module], []
    returned = False
    for node in nodes:
        if node.op == "placeholder":
            target = node.target
            if target.startswith("**"):
                params.append(f"**{node.name}")
            elif target.startswith("*"):
                params.append(f"*{node.name}")
            elif node.args:
                params.append(f"{node.name} = {emit.arg(node.args[0])}")
            else:
                params.append(node.name)
            continue
        if node.op == "output":
            body.append(f"return {emit.arg(node.args[0]) if node.args else 'None'}")
            returned = True
            break
        line = f"{node.name} = {_expression(node, emit)}"
        freed = [name for name in freed_at.get(node, ()) if name != node.name]
        if not node.users:
            freed.append(node.name)
        if freed:
            line += ";  " + " = ".join(freed) + " = None"
        body.append(line)
    if not returned:
        body.append("return None")
    code = "\n".join(f"    {line}" for line in body)
    src = f"\n\n\ndef {function_name}({', '.join(params)}):\n{code}\n    "
    return PythonCode(src, emit.globals)
