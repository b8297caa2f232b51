"""Python source for a graph: names no user input can break, and the code text itself.

Every name written into generated code is made here, at code generation, by a
:class:`Namespace` (ASCII letters, digits and ``_``, never a keyword, a builtin or a
reserved name), whatever ``node.name`` holds: a name assigned to ``node.name`` directly is
a wish like any other, as in torch.fx. The only other names are globals the generator
registers under such names, parameters taken from placeholder targets that are plain
identifiers, and the builtins ``getattr`` and ``slice``. Every other user-supplied string
(attribute paths, method names, keyword names, constants) reaches the code only as a
``repr`` literal, so it can neither break the syntax nor inject code.
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import math
import operator
import re
import typing
from collections import OrderedDict
from typing import Any

from .. import _device, _dtype, _memory_format
from .._api.namespace import package
from .._dispatch.aten import OpOverload
from ..overrides import resolve_name
from .node import Node, is_namedtuple, map_aggregate, qualified_name

__all__ = ["CodeGen", "Namespace", "PythonCode", "python_code", "INFIX", "UNARY", "is_safe_identifier", "sanitise"]

_ILLEGAL_CHARS = re.compile(r"[^0-9a-zA-Z_]+")
_NUMBERED = re.compile(r"(.*)_(\d+)$")
# Names generated code relies on: node names never take them.
_RESERVED = frozenset({"self", "tensormodes", "__name__", "__builtins__"})
_ILLEGAL_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | _RESERVED
# Builtins the generated code calls by name: a parameter must not shadow them.
_BARE_BUILTINS = frozenset({"getattr", "slice"})


def is_safe_identifier(name: Any) -> bool:
    """True for an ASCII identifier that is not a keyword: safe to write as ``obj.name``.

    >>> is_safe_identifier("weight"), is_safe_identifier("class"), is_safe_identifier("a.b")
    (True, False, False)
    """
    return (isinstance(name, str) and name.isascii() and name.isidentifier()
            and not keyword.iskeyword(name))


def sanitise(candidate: Any) -> str:
    """``candidate`` made a syntactically valid ASCII name, torch.fx's way: runs of other
    characters become ``_``, a leading digit gets a ``_`` prefix, nothing becomes ``_unnamed``.
    Keywords are left to the caller.

    >>> sanitise("a.b-c"), sanitise("1x"), sanitise(""), sanitise("é")
    ('a_b_c', '_1x', '_unnamed', '_')
    """
    candidate = _ILLEGAL_CHARS.sub("_", str(candidate)) or "_unnamed"
    return f"_{candidate}" if candidate[0].isdigit() else candidate


def class_name_for_source(name: Any) -> str:
    """The name a ``class`` statement can carry for ``name``: sanitised, and a keyword gets
    ``_1`` as a node name would (``class`` -> ``class_1``).

    >>> class_name_for_source("class"), class_name_for_source("<lambda>"), class_name_for_source("Net")
    ('class_1', '_lambda_', 'Net')
    """
    text = sanitise(name)
    return f"{text}_1" if keyword.iskeyword(text) else text


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
        candidate = sanitise(candidate)
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

    def __contains__(self, name: str) -> bool:
        """Whether ``name`` is taken."""
        return name in self._used

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
# in-place operator function -> augmented assignment; torch.fx writes these as statements
# (``a *= b;  imul = a``), so the receiver really is updated, as by the operator itself
INPLACE = {
    operator.iadd: "+=", operator.iand: "&=", operator.ifloordiv: "//=", operator.ilshift: "<<=",
    operator.imod: "%=", operator.imul: "*=", operator.imatmul: "@=", operator.ior: "|=", operator.ipow: "**=",
    operator.irshift: ">>=", operator.isub: "-=", operator.itruediv: "/=", operator.ixor: "^=",
}
# the typing aliases themselves (values, not annotations): torch.fx names typing.List[int] so
_TYPING_ORIGINS = {kind: getattr(typing, alias) for kind, alias in
                   ((list, "List"), (dict, "Dict"), (set, "Set"), (frozenset, "FrozenSet"), (tuple, "Tuple"))}
# torch.fx's dtype abbreviations in print_readable's annotations ("f32[2, 3]")
DTYPE_ABBREVIATIONS = {
    "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "float16": "f16",
    "float32": "f32", "float64": "f64", "complex32": "c32", "complex64": "c64", "complex128": "c128", "bool": "b8",
    "bfloat16": "bf16", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}
_SIMPLE_OPERAND = re.compile(r"[A-Za-z0-9_.]+")
_LITERAL_TYPES = (bool, int, str, bytes, type(None))
_OP_PATHS: dict[OpOverload, str | None] = {}  # an aten op's path in generated code


class PythonCode:
    """The generated source (``src``) of a graph's function and the globals it needs."""

    def __init__(self, src: str, globals_: dict) -> None:
        self.src = src
        self.globals = globals_


class _Emitter:
    """Names for one generated function: every node's variable and every placeholder's
    parameter, made from scratch (``node.name`` is only the wish), then the globals."""

    def __init__(self, nodes: list[Node], root_module: str) -> None:
        self.namespace = Namespace()
        self.namespace.reserve(root_module)
        # As in torch.fx, a placeholder's target names its parameter (what keyword calls use)
        # when it is a plain identifier the code can carry. Parameters are reserved before any
        # variable is named, so no variable ever overwrites one (torch.fx may reuse the name).
        self.params: dict[Node, str] = {}
        for node in nodes:
            if node.op == "placeholder":
                wanted = str(node.target).replace("*", "")
                if _usable_parameter(wanted, root_module) and wanted not in self.namespace:
                    self.namespace.reserve(wanted)
                    self.params[node] = wanted
        self.names: dict[Node, str] = {}
        for node in nodes:
            param = self.params.get(node)
            if param is not None and node.name == param:
                self.names[node] = param
            else:
                self.names[node] = self.namespace.create_name(node.name)
                if node.op == "placeholder" and param is None:
                    self.params[node] = self.names[node]
        self.globals: dict[str, Any] = {"tensormodes": package()}
        self._global_of: dict[int, str] = {}

    def name(self, node: Node) -> str:
        """The variable holding ``node``'s value."""
        found = self.names.get(node)
        if found is None:  # a node outside the list (a broken graph): still a valid name
            found = self.names[node] = self.namespace.create_name(node.name)
        return found

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
        """How the code names a callable: its public path for tensormodes' own, a builtin by its
        name, anything else by a global named as torch.fx names it (``<module>_<name>``:
        ``__main___leaf`` for ``leaf`` defined in ``__main__``)."""
        if type(target) is OpOverload:  # make_fx's graphs: many nodes, few ops, each at one path
            if target not in _OP_PATHS:
                _OP_PATHS[target] = self._public_target(target)
            path = _OP_PATHS[target]
        else:
            path = self._public_target(target)
        return path if path is not None else self._other_target(target)

    def _public_target(self, target) -> str | None:
        """The public path of one of tensormodes' callables, if ``target`` is one."""
        public = qualified_name(target)
        if public.startswith("tensormodes.") and all(is_safe_identifier(p) for p in public.split(".")):
            path = public.split(".")[1:]
            holder: Any = package()
            for part in path:
                holder = getattr(holder, part, None)
            if holder is target:
                return public
        return None

    def _other_target(self, target) -> str:
        name = getattr(target, "__name__", None)
        original = getattr(target, "__fx_leaf__", target)  # fx.wrap("len") keeps the name len
        if isinstance(name, str) and getattr(builtins, name, None) is original and name not in self.namespace:
            # no variable takes a builtin's name, and a parameter that does is reserved
            if original is not target and name not in _BARE_BUILTINS:
                self.globals[name] = target  # the wrapped builtin, so re-tracing records it
                self.namespace.reserve(name)
                self._global_of[id(target)] = name
            return name
        module = getattr(target, "__module__", None)
        if not isinstance(name, str):
            name = "fn"
        return self.add_global(f"{module}.{name}" if isinstance(module, str) else name, target)

    def annotation(self, t: Any) -> str:
        """A type annotation as torch.fx writes it: builtins by name, tensormodes' classes by
        their public path, other classes and typing forms through globals (``typing_List[int]``,
        arguments joined by ``,``)."""
        if t == ():
            return "()"
        if t is Ellipsis:
            return "..."
        if t is type(None):
            return self.add_global("NoneType", t)
        origin = getattr(t, "__origin__", None)
        if origin is not None:
            if isinstance(t, typing._GenericAlias):  # typing.List[int]: typing.List, not list
                origin = _TYPING_ORIGINS.get(origin, origin)
            base = self.annotation(origin) if isinstance(origin, type) else self.add_global(repr(origin), origin)
            arguments = getattr(t, "__args__", None)
            return f"{base}[{','.join(self.annotation(a) for a in arguments)}]" if arguments else base
        if isinstance(t, type):
            if t.__module__ == "builtins" and getattr(builtins, t.__qualname__, None) is t:
                return t.__qualname__
            public = resolve_name(t) or f"{t.__module__}.{t.__qualname__}"  # classes: by their module
            if public.startswith("tensormodes.") and self._is_public_path(public, t):
                return public
            return self.add_global(f"{t.__module__}.{t.__qualname__}", t)
        return self.add_global(repr(t), t)

    def _is_public_path(self, public: str, value: Any) -> bool:
        holder: Any = package()
        for part in public.split(".")[1:]:
            if not is_safe_identifier(part):
                return False
            holder = getattr(holder, part, None)
        return holder is value

    def arg(self, a: Any) -> str:
        kind = type(a)
        if isinstance(a, Node):
            return self.name(a)
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
        if isinstance(a, _dtype.dtype) and is_safe_identifier(str(a).removeprefix("tensormodes.")):
            name = str(a).removeprefix("tensormodes.")
            if getattr(package(), name, None) is a:
                return f"tensormodes.{name}"
        if kind is _device.device:
            # as torch.fx writes a device: its repr, with ``device`` the class (a global)
            return self.add_global("device", _device.device) + repr(a).removeprefix("device")
        if kind is _memory_format.memory_format and getattr(package(), str(a).removeprefix("tensormodes."), None) is a:
            return str(a)  # tensormodes.preserve_format
        if isinstance(a, (tuple, list, dict)):
            return self._container(a)
        return self.add_global(_constant_hint(a), a)

    def _container(self, a: tuple | list | dict) -> str:
        """A subclass of tuple, list or dict: rebuilt by code when it may hold nodes (a named
        tuple through its class, an ``OrderedDict`` through ``OrderedDict``, others as their
        base type, as :func:`map_aggregate` rebuilds them); a constant otherwise."""
        if is_namedtuple(a):
            return f"{self.target(type(a))}({', '.join(self.arg(v) for v in a)})"
        if isinstance(a, OrderedDict):
            return f"{self.add_global('OrderedDict', OrderedDict)}({self.arg(dict(a))})"
        if _holds_node(a):
            return self.arg(dict(a) if isinstance(a, dict) else tuple(a) if isinstance(a, tuple) else list(a))
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


def _usable_parameter(name: str, root_module: str) -> bool:
    return (is_safe_identifier(name) and name not in _RESERVED and name not in _BARE_BUILTINS
            and name != root_module)


def _holds_node(a: Any) -> bool:
    found = []
    map_aggregate(a, lambda v: found.append(v) if isinstance(v, Node) else None)
    return bool(found)


def _constant_hint(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if value > 0 else "neg_inf" if value < 0 else "nan"
    return f"_{type(value).__name__.lower()}_constant"


def attribute_chain(base: str, path: str) -> str:
    """``base.a.b`` for a dotted ``path``, with ``getattr(x, "...")`` for unsafe parts (torch.fx's
    spelling; any string still reaches the code only as a literal).

    >>> attribute_chain("self", "layer.weight"), attribute_chain("self", "seq.0")
    ('self.layer.weight', 'getattr(self.seq, "0")')
    """
    text = base
    for part in path.split("."):
        text = f"{text}.{part}" if is_safe_identifier(part) else f"getattr({text}, {string_literal(part)})"
    return text


def string_literal(text: str) -> str:
    """``text`` as a Python string literal in double quotes, as torch.fx writes attribute names;
    ``repr`` when it would need escapes.

    >>> print(string_literal("0"), string_literal('say "hi"'))
    "0" 'say "hi"'
    """
    quoted = repr(text)
    return f'"{text}"' if quoted[0] == "'" and '"' not in text and "\\" not in quoted else quoted


def _expression(node: Node, emit: _Emitter) -> str:
    op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
    if op == "get_attr":
        return attribute_chain("self", target)
    if op == "call_module":
        return f"{attribute_chain('self', target)}({emit.call_args(args, kwargs)})"
    if op == "call_method":
        receiver = emit.receiver(args[0])
        method = (f"{receiver}.{target}" if is_safe_identifier(target)
                  else f"getattr({receiver}, {string_literal(target)})")
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


def _inplace_statement(node: Node, emit: _Emitter, name: str, annotation: str = "") -> str | None:
    """torch.fx's statement for an in-place operator or ``setitem`` on a node
    (``a *= b;  imul = a``), or None for any other node (and when the receiver is a constant,
    which cannot be assigned to)."""
    if node.op != "call_function" or node.kwargs or not node.args or not isinstance(node.args[0], Node):
        return None
    target, args = node.target, node.args
    receiver = emit.name(args[0])
    if target in INPLACE and len(args) == 2:
        return f"{receiver} {INPLACE[target]} {emit.operand(args[1])};  {name}{annotation} = {receiver}"
    if target is operator.setitem and len(args) == 3:
        return f"{receiver}[{emit.arg(args[1])}] = {emit.arg(args[2])};  {name}{annotation} = {receiver}"
    return None


class CodeGen:
    """How a graph's function begins and returns (torch.fx's ``CodeGen``): subclass it and set
    it with ``graph.set_codegen`` to change the signature or the return statement; the body
    is always generated here.

    * ``gen_fn_def(free_vars, maybe_return_annotation)``: the ``def`` line (and any lines
      after it, indented), given the parameters without ``self``;
    * ``generate_output(output_args)``: the return statement, unindented;
    * ``additional_globals()``: ``(name, value)`` pairs the generated code may use;
    * ``process_inputs(*args)`` / ``process_outputs(outputs)``: how to turn the custom
      signature's inputs into the graph's and back (``graph.process_inputs``).

    >>> import operator
    >>> from tensormodes import fx
    >>> class ListCodeGen(fx.CodeGen):
    ...     def gen_fn_def(self, free_vars, annotation):
    ...         return f"def forward(self, args_list){annotation}:\\n    {', '.join(free_vars)} = args_list"
    >>> gm = fx.symbolic_trace(operator.add)
    >>> gm.graph.set_codegen(ListCodeGen()); _ = gm.recompile()
    >>> gm([1, 2])
    3
    """

    def __init__(self) -> None:
        self._func_name = "forward"

    def gen_fn_def(self, free_vars: list[str], maybe_return_annotation: str) -> str:
        """The ``def`` line: ``self`` is added first unless ``free_vars`` starts with it."""
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args: Any) -> str:
        """The return statement for the graph's output value (unindented)."""
        return f"return {output_args!r}"

    def process_inputs(self, *args: Any) -> Any:
        """The graph's inputs for the generated function's ``args`` (the identity here)."""
        return args

    def process_outputs(self, outputs: Any) -> Any:
        """The generated function's result for the graph's ``outputs`` (the identity here)."""
        return outputs

    def additional_globals(self) -> list[tuple[str, Any]]:
        """Extra ``(name, value)`` globals the generated code may use."""
        return []


def _overrides(codegen: CodeGen | None, name: str) -> bool:
    return codegen is not None and getattr(type(codegen), name) is not getattr(CodeGen, name)


def _user_output(codegen: CodeGen, output_args: Any, emit: _Emitter) -> str:
    """The user's ``generate_output``, offered torch.fx's ``repr_fn`` when it accepts one."""
    if "repr_fn" in inspect.signature(codegen.generate_output).parameters:
        return codegen.generate_output(output_args, repr_fn=emit.arg)
    return codegen.generate_output(output_args)


def _shape_text(shape: Any) -> str:
    return f"[{', '.join(str(size) for size in shape)}]"


def _node_annotation(node: Node, emit: _Emitter, verbose: bool, include_stride: bool, include_device: bool) -> str:
    """`` : T`` for a node with a type; with ``verbose``, torch.fx's ``: "f32[2, 3]"`` from the
    tensor it was seen holding (``meta["val"]``, ``["tensor_meta"]`` after ShapeProp)."""
    if verbose:
        seen = node.meta.get("val", node.meta.get("tensor_meta", node.meta.get("example_value")))
        dtype, shape = getattr(seen, "dtype", None), getattr(seen, "shape", None)
        abbreviation = DTYPE_ABBREVIATIONS.get(str(dtype).removeprefix("tensormodes."))
        if abbreviation is not None and shape is not None:
            text = abbreviation + _shape_text(shape)
            if callable(getattr(seen, "stride", None)):  # a tensor: stride and device on request
                text += (_shape_text(seen.stride()) if include_stride else "") + \
                    (str(seen.device) if include_device else "")
            return f': "{text}"'
    return f" : {emit.annotation(node.type)}" if node.type is not None else ""


def _stack_summary(stack_trace: str | None) -> str | None:
    """torch.fx's one-line summary of a node's stack trace: ``File: f.py:3 in fn, code: a = x + y``
    for its innermost frame."""
    if not stack_trace:
        return None
    lines = stack_trace.strip().split("\n")
    for i in range(len(lines) - 2, -1, -1):
        match = _FRAME_LINE.match(lines[i].strip())
        if match:
            file, line, name = match.groups()
            return f"File: {file}:{line} in {name}, code: {lines[i + 1].strip()}"
    return None


_FRAME_LINE = re.compile(r'^File "(.+)", line (\d+), in (.+)$')


def _parameter(node: Node, param: str, annotation: str, emit: _Emitter) -> str:
    target = str(node.target)
    if target.startswith("**"):
        return f"**{param}{annotation}"
    if target.startswith("*"):
        return f"*{param}{annotation}"
    if node.args:
        return f"{param}{annotation} = {emit.arg(node.args[0])}"
    return f"{param}{annotation}"


def python_code(nodes, root_module: str = "self", function_name: str = "forward",
                codegen: CodeGen | None = None, *, verbose: bool = False, include_stride: bool = False,
                include_device: bool = False) -> PythonCode:
    """Generate the source of ``function_name(root_module, *inputs)`` for ``nodes`` (in order).

    Each value is released (``name = None``) right after its last use, as torch.fx does, so
    large intermediates do not live until the function returns. A placeholder whose variable
    differs from its parameter (``def f(x, input)`` traces ``input`` to a node ``input_1``)
    is bound to it first, as torch.fx does: ``input_1 = input``. Node types are written as
    annotations (``x : tensormodes.Tensor``, ``-> int``). ``verbose`` adds torch.fx's comments
    naming the user's line each group of nodes came from (their ``stack_trace``) and annotates
    values with the tensors seen (``add: "f32[2]"``). A :class:`CodeGen` whose methods are
    overridden writes the ``def`` line and the return statement.
    """
    if not is_safe_identifier(root_module):
        raise ValueError(f"python_code: root_module must be a Python identifier, got {root_module!r}")
    nodes = list(nodes)
    emit = _Emitter(nodes, root_module)
    last_use: dict[Node, Node] = {}
    for node in reversed(nodes):
        for used in node.all_input_nodes:
            last_use.setdefault(used, node)
    freed_at: dict[Node, list[str]] = {}
    for used, user in last_use.items():
        freed_at.setdefault(user, []).append(emit.name(used))
    params, body = [root_module], []
    returned, return_annotation, previous_summary = False, "", None
    for node in nodes:
        name = emit.name(node)
        annotation = _node_annotation(node, emit, verbose, include_stride, include_device)
        if node.op == "placeholder":
            param = emit.params[node]
            params.append(_parameter(node, param, annotation, emit))
            if name != param:
                body.append(f"{name} = {param}")
            continue
        if node.op == "output":
            if node.type is not None:
                return_annotation = f" -> {emit.annotation(node.type)}"
            if _overrides(codegen, "generate_output"):
                body.append(_user_output(codegen, node.args[0] if node.args else None, emit))
            else:
                body.append(f"return {emit.arg(node.args[0]) if node.args else 'None'}")
            returned = True
            break
        if verbose:
            summary = f"# {_stack_summary(node.stack_trace) or 'No stacktrace found for following nodes'}"
            if summary != previous_summary:
                body.extend(["", summary] if body else [summary])
                previous_summary = summary
        line = _inplace_statement(node, emit, name, annotation) or f"{name}{annotation} = {_expression(node, emit)}"
        freed = [used for used in freed_at.get(node, ()) if used != name]
        if not node.users:
            freed.append(name)
        if freed:
            line += ";  " + " = ".join(freed) + " = None"
        body.append(line)
    if not returned:
        body.append("return None")
    code = "\n".join(f"    {line}" for line in body)
    if codegen is not None:
        for name, value in codegen.additional_globals():
            emit.globals[name] = value
    if _overrides(codegen, "gen_fn_def"):
        head = codegen.gen_fn_def(params[1:], return_annotation)
    else:
        head = f"def {function_name}({', '.join(params)}){return_annotation}:"
    src = f"\n\n\n{head}\n{code}\n    "
    return PythonCode(src, emit.globals)
