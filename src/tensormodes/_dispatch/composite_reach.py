"""Which table ops a composite may run, read once from the code of its decomposition and of the
gradient formulas involved: what lets a dispatch mode that declares the ops it handles
(``handled_ops``) leave a composite undecomposed when neither it nor its backward can show the
mode one of them (``FlopCounterMode`` and ``cross_entropy``: no product in either).

The reading over-approximates, never under-: a function's code may call every op it names — an
attribute chain resolved from its globals or closure (``ops.ops.aten._log_softmax.default``,
``ops.addmm``), any attribute name that is an op's, method's or operator's name (``x.t()``, on a
value the reading cannot know), each Python operator's dunders (``a * b``: ``__mul__`` and
``__rmul__``) and the implicit conversions (``__bool__``, ``__iter__`` ...) — and every
tensormodes function it names is read too, transitively. A name the reading cannot follow (the
``getattr`` builtin, generated code without an op entry) makes the answer "anything" (None).

>>> from tensormodes._ops import OPS
>>> "mm" in op_closure("_cross_entropy_loss"), "addmm" in op_closure("linear")
(False, True)
"""

from __future__ import annotations

import builtins
import dis
import functools
import types

from .._ops import OPS, OpDef
from .._ops.common import PublicOps
from .._tensor_base import PLAIN, TensorBase

__all__ = ["op_closure"]

# builtins through which code reaches a callable by a computed name
_OPAQUE_BUILTINS = frozenset({"eval", "exec", "__import__", "globals", "vars", "locals", "compile"})
_SIMPLE_LOADS = frozenset({"LOAD_CONST", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE"})

# the dunders Python may call on a tensor without naming them (truth tests, iteration,
# conversions, formatting, containment)
_IMPLICIT = ("__bool__", "__iter__", "__len__", "__int__", "__float__", "__index__", "__complex__",
             "__format__", "__contains__", "__hash__")

_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
           "@": "matmul", "&": "and", "|": "or", "^": "xor", "<<": "lshift", ">>": "rshift"}
_COMPARE = {"<": ("__lt__", "__gt__"), "<=": ("__le__", "__ge__"), ">": ("__gt__", "__lt__"),
            ">=": ("__ge__", "__le__"), "==": ("__eq__",), "!=": ("__ne__",)}
_UNARY = {"UNARY_NEGATIVE": "__neg__", "UNARY_POSITIVE": "__pos__", "UNARY_INVERT": "__invert__",
          "UNARY_NOT": "__bool__", "BINARY_SUBSCR": "__getitem__", "STORE_SUBSCR": "__setitem__",
          "DELETE_SUBSCR": "__delitem__", "BINARY_SLICE": "__getitem__", "STORE_SLICE": "__setitem__"}


class _Unknown(Exception):
    """The code reaches a callable the reading cannot follow."""


def _operator_dunders(instruction) -> tuple[str, ...]:
    """The tensor dunders an operator instruction may call."""
    name = instruction.opname
    if name in _UNARY:
        return (_UNARY[name],)
    if name == "BINARY_OP":
        symbol = instruction.argrepr
        inplace = symbol.endswith("=") and symbol[:-1] in _BINARY
        stem = _BINARY[symbol[:-1] if inplace else symbol]
        forms = (f"__{stem}__", f"__r{stem}__")
        return (f"__i{stem}__", *forms) if inplace else forms
    if name == "COMPARE_OP":
        return _COMPARE.get(instruction.argval, ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"))
    if name.startswith("BINARY_") or name.startswith("INPLACE_"):  # Pythons before 3.11: any operator
        return tuple(f"__{stem}__" for stem in _BINARY.values()) + tuple(f"__r{stem}__" for stem in _BINARY.values())
    return ()


@functools.cache
def _names_index() -> dict[str, tuple]:
    """Every name by which code may call an op (its own, its function's, method's, in-place
    method's, dunders', aten packet's) -> what the name may run: op names and Python functions
    (a dunder's composite)."""
    index: dict[str, list] = {}
    for key, opdef in OPS.items():
        names = {key, opdef.name, opdef.function, opdef.method, opdef.inplace}
        aten = opdef.aten
        for spec in (aten if isinstance(aten, dict) else {aten: ()} if aten else {}):
            names.add(spec.rpartition(".")[0] or None)
        for name in names - {None}:
            index.setdefault(name, []).append(opdef.name)
        for dunder in opdef.dunders:
            index.setdefault(dunder.name, []).append(opdef.name)
            if dunder.composite is not None:
                index[dunder.name].append(dunder.composite)
    return {name: tuple(found) for name, found in index.items()}


def _getattr_name(instructions: list, position: int) -> str | None:
    """The constant name of the ``getattr`` call whose callable ``instructions[position]`` loads
    (``getattr(x, "name")``, ``getattr(x, "name", default)``); None for a computed one."""
    load = instructions[position]
    base = depth = dis.stack_effect(load.opcode, load.arg)
    for later in range(position + 1, len(instructions)):
        instruction = instructions[later]
        if instruction.opcode in dis.hasjrel or instruction.opcode in dis.hasjabs:
            break
        if instruction.opname in ("PRECALL", "CALL") and depth == base + instruction.arg:
            arguments = instruction.arg
            if arguments == 3 and instructions[later - 1].opname in _SIMPLE_LOADS:
                later -= 1
            named = instructions[later - 1]
            if arguments in (2, 3) and named.opname == "LOAD_CONST" and type(named.argval) is str:
                return named.argval
            break
        depth += dis.stack_effect(instruction.opcode, instruction.arg)
    return None


def _constants(code: types.CodeType):
    """The constants of ``code`` and of the functions nested in it."""
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _constants(constant)
        else:
            yield constant


class _Facts:
    """What one function's code names: ``ops``, the ``functions`` to read next, its identifier
    ``strings`` and whether it calls ``getattr`` with a computed name (``computed``)."""

    __slots__ = ("ops", "functions", "strings", "computed")

    def __init__(self) -> None:
        self.ops: set[str] = set()
        self.functions: list = []
        self.strings: set[str] = set()
        self.computed = False

    def name(self, name: str) -> None:
        """What an attribute called ``name``, on a value the reading does not know, may run."""
        found = _name_facts(name)
        self.ops |= found.ops
        self.functions += found.functions

    def object(self, value, depth: int = 0) -> None:
        """What ``value``, an object code names, may run when called (or read, for a property)."""
        if isinstance(value, OpDef):
            self.ops.add(value.name)
        elif hasattr(value, "_opdef") and hasattr(value, "overloadpacket"):  # an OpOverload
            self.ops.add(value._opdef.name)
            self.ops.update(view._opdef.name for view in value.__dict__.get("_alternatives", ()))
        elif hasattr(value, "_overloads") and hasattr(value, "overloads"):  # an OpOverloadPacket
            for overload in list(value._overloads.values()):
                self.object(overload, depth)
        elif isinstance(value, property):
            for accessor in (value.fget, value.fset, value.fdel):
                self.object(accessor, depth)
        elif isinstance(value, (staticmethod, classmethod, types.MethodType)):
            self.object(value.__func__, depth)
        elif isinstance(value, functools.partial):
            self.object(value.func, depth)
            for item in (*value.args, *value.keywords.values()):
                self.object(item, depth + 1)
        elif isinstance(value, types.FunctionType):
            self.functions.append(value)
        elif isinstance(value, type):
            # a tensor class named in code is an ``isinstance`` test or a constructor, which runs no op
            if value.__module__.startswith("tensormodes") and not issubclass(value, TensorBase):
                for method in ("__new__", "__init__", "__call__"):
                    self.object(value.__dict__.get(method), depth)
        elif isinstance(value, (dict, list, tuple, set, frozenset)) and depth < 2:
            for item in list(value.values() if isinstance(value, dict) else value):
                self.object(item, depth + 1)
        elif type(value).__module__.startswith("tensormodes") and not isinstance(value, (types.ModuleType, PublicOps)):
            self.object(type(value).__dict__.get("__call__"), depth)

    def code(self, code: types.CodeType, globals_: dict, cells: dict) -> None:
        chain = None  # the object an attribute chain has reached (None: not resolved)
        instructions = list(dis.get_instructions(code))
        for position, instruction in enumerate(instructions):
            opname = instruction.opname
            if opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"):
                self._end(chain)
                chain = _load(instruction.argval, globals_, cells, opname)
                if chain is getattr:  # a constant name is an attribute like any other
                    self._getattr(_getattr_name(instructions, position), instructions)
                    chain = None
                continue
            if opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"):
                name = instruction.argval
                if chain is not None and isinstance(chain, (types.ModuleType, PublicOps, type)) or \
                        type(chain).__name__ in ("_Namespace", "OpOverloadPacket"):
                    try:
                        chain = getattr(chain, name)
                        continue
                    except AttributeError:
                        pass
                chain = None
                self.name(name)
                continue
            self._end(chain)
            chain = None
            for dunder in _operator_dunders(instruction):
                self.name(dunder)
        self._end(chain)
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):  # nested functions, lambdas, comprehensions
                self.code(constant, globals_, {})

    def _getattr(self, name: str | None, instructions: list) -> None:
        """A ``getattr`` call: its constant ``name``; a computed one (``getattr(aten, packet)``)
        may be any string of the functions read with it (``op_closure``) — a name built in the
        code itself (an f-string) is ``_Unknown``."""
        if name is not None:
            self.name(name)
        elif any(i.opname in ("FORMAT_VALUE", "BUILD_STRING", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC")
                 for i in instructions):
            raise _Unknown("getattr of a name built in the code")
        else:
            self.computed = True

    def _end(self, chain) -> None:
        if chain is not None and not isinstance(chain, (types.ModuleType, PublicOps)):
            self.object(chain)


def _load(name: str, globals_: dict, cells: dict, opname: str):
    if opname.endswith("DEREF"):
        return cells.get(name)  # a local of an enclosing function is not known: None
    if name in globals_:
        return globals_[name]
    if name in _OPAQUE_BUILTINS:
        raise _Unknown(name)
    return getattr(builtins, name, None)


@functools.cache
def _name_facts(name: str) -> _Facts:
    """What an attribute called ``name`` may run: the ops the table binds to the name (and a
    dunder's composite), else a Tensor attribute written in Python (``to``, ``__iter__``)."""
    facts = _Facts()
    declared = _names_index().get(name)
    if declared is not None:
        for found in declared:
            facts.object(found) if callable(found) else facts.ops.add(found)
        return facts
    tensor = PLAIN.tensor
    if tensor is not None:
        facts.object(getattr(tensor, name, None))
    return facts


@functools.cache
def _function_facts(func: types.FunctionType) -> _Facts | None:
    """What one function's code names (None: something the reading cannot follow)."""
    facts = _Facts()
    if not func.__globals__.get("__name__", "").startswith("tensormodes"):
        return facts  # another library's function: it calls no op of ours
    try:
        if func.__code__.co_filename.startswith("<tensormodes generated"):
            entry = func.__globals__.get("_ENTRY")
            own = func.__globals__.get("_OP")  # an op's generated implementation names its op
            implementation = func.__globals__.get("_impl")
            if entry is not None:
                facts.ops.add(entry[0].name)
            elif type(own) is str and own in OPS:
                facts.ops.add(OPS[own].name)
            elif implementation is not None:
                facts.object(implementation)
            else:
                raise _Unknown(func.__qualname__)
            return facts
        cells = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__ or ())))
        values = (*_constants(func.__code__), *cells.values())
        facts.strings = {s for s in values if type(s) is str and s.isidentifier()}
        facts.code(func.__code__, func.__globals__, cells)
        for default in (*(func.__defaults__ or ()), *(func.__kwdefaults__ or {}).values()):
            facts.object(default, 1)
    except _Unknown:
        return None
    return facts


@functools.cache
def op_closure(name: str) -> frozenset | None:
    """The ops a call of the table's op ``name`` may run, forward and backward (at every order),
    decomposed or not: ``name``, the ops its decomposition and gradient formula call, theirs, and
    so on (None: anything — a run-time op, or code the reading cannot follow)."""
    ops, functions, strings, named = {name}, set(), set(), set()
    pending_ops, pending_functions, computed = [name], [], False
    implicit = _Facts()  # what Python may call on a tensor in any of the code read
    for dunder in _IMPLICIT:
        implicit.name(dunder)
    pending_functions += implicit.functions
    pending_ops += implicit.ops - ops
    ops |= implicit.ops
    while pending_ops or pending_functions:
        while pending_ops:
            opdef = OPS.get(pending_ops.pop())
            if opdef is None:
                return None
            start = _Facts()
            for func in (opdef.decompose, opdef.grad):
                if func is not None:
                    start.object(func)
            pending_functions += start.functions
            pending_ops += start.ops - ops
            ops |= start.ops
        while pending_functions:
            func = pending_functions.pop()
            if func in functions:
                continue
            functions.add(func)
            facts = _function_facts(func)
            if facts is None:
                return None
            pending_functions += facts.functions
            pending_ops += facts.ops - ops
            ops |= facts.ops
            strings |= facts.strings
            computed = computed or facts.computed
        if computed:  # a getattr of a computed name: any string read may be it
            for string in strings - named:
                named.add(string)
                found = _name_facts(string)
                pending_functions += found.functions
                pending_ops += found.ops - ops
                ops |= found.ops
    return frozenset(ops)
