"""Every op's identity at the dispatch level: ``tensormodes.ops.aten.<name>.<overload>``.

An ``OpOverload`` is what a dispatch-level handler receives as ``func``: ``aten.add.Tensor``,
with PyTorch's schema (``_schema``), ``name()``, ``overloadpacket``, ``namespace`` and
``tags``. Nothing here is written twice: each overload is computed from its op's one
declaration in the op table — its aten name and overloads (``op(aten=...)``), its signature
(the schema's arguments, their types read from the annotations), its flags (in-place, view,
``out=``, random) and its ``tags``. Calling an overload runs it through the dispatch level
(``python_dispatch.call_overload``): the modes, the subclasses, then the kernel.

>>> from tensormodes._dispatch.aten import aten
>>> str(aten.add.Tensor._schema)
'aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'
>>> aten.add_.Tensor.name(), aten.transpose.int._schema.returns[0].alias_info
('aten::add_.Tensor', 'a')
"""

from __future__ import annotations

import enum
import inspect
import threading
from dataclasses import dataclass

from .._ops import OPS, OpDef
from .._ops.registry import TensorKind
from . import python_dispatch

__all__ = ["Tag", "Argument", "FunctionSchema", "OpOverload", "OpOverloadPacket", "aten", "overload_of",
           "overloads_of"]


class Tag(enum.Enum):
    """PyTorch's op tags (``torch.Tag``), in its order."""

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19


_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class Argument:
    """One argument (or return) of a schema, printed as PyTorch prints it."""

    name: str
    type: str
    default_value: object = _NO_DEFAULT
    kwarg_only: bool = False
    alias_info: str | None = None  # "a", "a!" ... (the letter in ``Tensor(a!)``)

    @property
    def has_default_value(self) -> bool:
        return self.default_value is not _NO_DEFAULT

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.endswith("!")

    def _type_text(self) -> str:
        if self.alias_info is None:
            return self.type
        base, _, suffix = self.type.partition("[")  # Tensor(a)[] / Tensor(a!)?
        optional = base.endswith("?")
        base = base.rstrip("?")
        return f"{base}({self.alias_info}){'?' if optional else ''}" + (f"[{suffix}" if suffix else "")

    def __str__(self) -> str:
        text = self._type_text()
        if self.name:
            text += f" {self.name}"
        if self.has_default_value:
            text += f"={_default_text(self.default_value)}"
        return text


def _default_text(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_default_text(v) for v in value) + "]"
    return repr(value) if not isinstance(value, enum.Enum) else str(value.value)


@dataclass(frozen=True)
class FunctionSchema:
    """An op overload's schema: ``str()`` is PyTorch's schema string."""

    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    returns: tuple[Argument, ...]

    def __str__(self) -> str:
        parts, star = [], False
        for argument in self.arguments:
            if argument.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(argument))
        if len(self.returns) == 1 and not self.returns[0].name:
            returns = str(self.returns[0])
        else:
            returns = "(" + ", ".join(str(r) for r in self.returns) + ")"
        overload = f".{self.overload_name}" if self.overload_name and self.overload_name != "default" else ""
        return f"{self.name}{overload}({', '.join(parts)}) -> {returns}"

    def __repr__(self) -> str:
        return str(self)


# -- schema computed from a declaration ---------------------------------------------------

_TENSOR_TYPES = {
    TensorKind.TENSOR: "Tensor", TensorKind.OPTIONAL_TENSOR: "Tensor?", TensorKind.TENSOR_OR_SCALAR: "Tensor",
    TensorKind.OPTIONAL_TENSOR_OR_SCALAR: "Tensor?", TensorKind.TENSOR_LIST: "Tensor[]",
    TensorKind.INDEX: "Tensor?[]", TensorKind.ANY: "Any", TensorKind.ANY_LIST: "Any[]",
}

# Annotation text -> schema type (``?`` added when the annotation admits None).
_ANNOTATION_TYPES = (
    ("dtype", "ScalarType"), ("Generator", "Generator"), ("Sequence[int]", "int[]"), ("tuple[int", "int[]"),
    ("list[int]", "int[]"), ("list[bool]", "bool[]"), ("Number", "Scalar"), ("float | str", "Scalar"),
    ("str", "str"), ("float", "float"), ("bool", "bool"), ("int", "int"),
)

# Unannotated parameters PyTorch's factories and conversions share, by name.
_NAMED_TYPES = {"device": "Device?", "layout": "Layout?", "pin_memory": "bool?", "memory_format": "MemoryFormat?",
                "generator": "Generator?", "dtype": "ScalarType?", "names": "str[]?"}

# Parameters that stay above the dispatch level (autograd and the Python layer consume them).
_ABOVE_DISPATCH = frozenset({"requires_grad"})


def _schema_type(opdef: OpDef, param: inspect.Parameter, scalar_overload: bool) -> str:
    kind = opdef.tensor_params.get(param.name)
    if kind is not None:
        if scalar_overload and kind in (TensorKind.TENSOR_OR_SCALAR, TensorKind.OPTIONAL_TENSOR_OR_SCALAR) \
                and param.name != next(iter(opdef.signature.parameters)):
            return "Scalar" if kind is TensorKind.TENSOR_OR_SCALAR else "Scalar?"
        return _TENSOR_TYPES[kind]
    if param.kind is param.VAR_POSITIONAL:
        return "SymInt[]"
    text = param.annotation if isinstance(param.annotation, str) else ""
    if not text:
        if param.name in _NAMED_TYPES:
            return _NAMED_TYPES[param.name]
        default = param.default
        text = {bool: "bool", int: "int", float: "float", str: "str"}.get(type(default), "Any")
        return text
    for needle, schema_type in _ANNOTATION_TYPES:
        if needle in text:
            return schema_type + ("?" if "None" in text else "")
    return "Any"


def _alias_of(opdef: OpDef, position: int, kind: str) -> str | None:
    """The alias annotation of the first tensor argument (position 0) or of a return."""
    if kind == "inplace" or (opdef.mutates and position == 0):
        return "a!"
    if opdef.view or opdef.alias:
        return "a"
    return None


def _returns(opdef: OpDef, kind: str) -> tuple[Argument, ...]:
    if kind in ("inplace", "out") and opdef.returns is None:
        return (Argument("", "Tensor", alias_info="a!"),)
    annotation = opdef.signature.return_annotation
    text = annotation if isinstance(annotation, str) else "Tensor"
    alias = "a" if (opdef.view or opdef.alias) else None
    if opdef.returns is not None:
        return tuple(Argument(field, "Tensor") for field in opdef.returns._fields)
    if "..." in text or text.startswith("list"):
        return (Argument("", "Tensor[]", alias_info=alias),)
    if text.startswith("tuple[") and "Tensor" in text:
        return tuple(Argument("", "Tensor") for _ in range(text.count("Tensor")))
    if text in ("bool", "int", "float", "None"):
        return () if text == "None" else (Argument("", text),)
    if text == "dt.dtype":
        return (Argument("", "ScalarType"),)
    return (Argument("", "Tensor", alias_info=alias),)


def _schema(overload: OpOverload) -> FunctionSchema:
    opdef, kind = overload._opdef, overload._kind
    overrides = opdef.schema_types
    scalar = overload._overloadname.startswith("Scalar")
    arguments = []
    first_tensor = True
    for param in opdef.signature.parameters.values():
        if param.name in overload._dropped or param.name in _ABOVE_DISPATCH:
            continue
        schema_type = _schema_type(opdef, param, scalar)
        name = param.name
        spelled = overrides.get(param.name)
        if spelled:
            schema_type, _, own_name = spelled.partition(" ")
            name = own_name or name
        elif name == "input" and param.name in opdef.tensor_params:
            name = "self"
        alias = None
        if param.name in opdef.tensor_params and first_tensor:
            first_tensor = False
            alias = _alias_of(opdef, 0, kind)
            if alias == "a" and opdef.view and _returns(opdef, kind)[0].type == "Tensor[]":
                alias = "a -> *"
        default = param.default
        if default is not _NO_DEFAULT and isinstance(default, tuple):
            default = list(default)
        arguments.append(Argument(name, schema_type, default, param.kind is param.KEYWORD_ONLY, alias))
    if kind == "out":
        if opdef.returns is not None:
            for field in opdef.returns._fields:
                arguments.append(Argument(field, "Tensor", kwarg_only=True, alias_info="a!"))
        else:
            arguments.append(Argument("out", "Tensor", kwarg_only=True, alias_info="a!"))
    return FunctionSchema(f"aten::{overload._packet_name}", overload._overloadname, tuple(arguments),
                          _returns(opdef, kind))


_GRAD = python_dispatch.HOOKS  # ``enabled``: grad mode's flag, given by the autograd layer

# -- overloads and packets -----------------------------------------------------------------

class OpOverload:
    """One overload of an aten op (``aten.add.Tensor``): calling it runs the op through the
    dispatch level — the active ``TorchDispatchMode``s, then ``__torch_dispatch__``
    subclasses, then the kernel.

    >>> import tensormodes as tm
    >>> tm.ops.aten.mul.Tensor(tm.tensor([1.0, 2.0]), 3)
    tensor([3., 6.])
    """

    def __init__(self, packet: OpOverloadPacket, overload_name: str, opdef: OpDef, kind: str,
                 dropped: tuple[str, ...]) -> None:
        self.overloadpacket = packet
        self._packet_name = packet._name
        self._overloadname = overload_name
        self._opdef = opdef
        self._kind = kind  # "functional", "inplace" or "out"
        self._dropped = frozenset(dropped)
        self.namespace = "aten"
        self._schema_cache: FunctionSchema | None = None
        self.__name__ = f"{packet._name}.{overload_name}"
        self.__qualname__ = self.__name__
        self.__module__ = "tensormodes.ops.aten"

    @property
    def _schema(self) -> FunctionSchema:
        if self._schema_cache is None:
            self._schema_cache = _schema(self)
        return self._schema_cache

    @property
    def tags(self) -> list[Tag]:
        """PyTorch's tags of this overload: declared ones plus those its flags imply."""
        opdef, names = self._opdef, set(self._opdef.tags)
        if opdef.random:
            names.add("nondeterministic_seeded")
        if self._kind == "inplace":
            names.add("inplace")
            names.discard("core")
            if opdef.view:
                names.add("inplace_view")
        if self._kind == "out":
            names.add("out")
            names.discard("core")
        names.add("pt2_compliant_tag")
        return sorted((Tag[n] for n in names), key=lambda t: t.value)

    @property
    def is_view(self) -> bool:
        return bool(self._opdef.view or self._opdef.alias) and self._kind == "functional"

    def name(self) -> str:
        """``aten::add.Tensor`` (``aten::sum`` for a default overload, as PyTorch)."""
        suffix = "" if self._overloadname == "default" else f".{self._overloadname}"
        return f"aten::{self._packet_name}{suffix}"

    def __call__(self, /, *args, **kwargs):
        if _GRAD.enabled():  # where autograd may record, it runs first (see HOOKS.call)
            return python_dispatch.HOOKS.call(self, args, kwargs)
        return python_dispatch.call_overload(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<OpOverload(op='aten.{self._packet_name}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"aten.{self._packet_name}.{self._overloadname}"

    def __hash__(self) -> int:
        return id(self)

    def __reduce__(self):
        return (_lookup, (self._packet_name, self._overloadname))

    def decompose(self, *args, **kwargs):
        """Run the op's composite definition when it has one, else ``NotImplemented``."""
        if self._opdef.decompose is None:
            return NotImplemented
        return python_dispatch.HOOKS.decompose(self._opdef, args, kwargs)


def _lookup(packet: str, overload: str) -> OpOverload:
    return getattr(getattr(aten, packet), overload)


class OpOverloadPacket:
    """All overloads of one aten op (``aten.add``): attribute access gives an overload;
    calling it picks the overload PyTorch would for the arguments."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._overloads: dict[str, OpOverload] = {}
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = "tensormodes.ops.aten"

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __getattr__(self, overload: str) -> OpOverload:
        overloads = self.__dict__.get("_overloads")
        if overloads is not None and overload in overloads:
            return overloads[overload]
        raise AttributeError(f"The underlying op of 'aten.{self._name}' has no overload name '{overload}'")

    @property
    def _qualified_op_name(self) -> str:
        return f"aten::{self._name}"

    def __repr__(self) -> str:
        return f"aten.{self._name}"

    def __call__(self, /, *args, **kwargs):
        errors = []
        for overload in self._overloads.values():
            if overload._kind == "out" and "out" not in kwargs:
                continue
            try:
                python_dispatch.bind(overload, args, kwargs)
            except RuntimeError as error:
                errors.append(str(error))
                continue
            return overload(*args, **kwargs)
        raise RuntimeError(f"aten.{self._name}() got arguments no overload accepts:\n  " + "\n  ".join(errors))


# -- the table -------------------------------------------------------------------------------

_PACKETS: dict[str, OpOverloadPacket] = {}
# (op name, kind) -> its overloads in the order a call tries them: ((overload, dropped), ...)
_BY_OP: dict[tuple[str, str], tuple[OpOverload, ...]] = {}
_BUILT = threading.Event()
_LOCK = threading.Lock()


def _declared_overloads(opdef: OpDef) -> dict[str, tuple[str, ...]]:
    """``{"name.overload": dropped parameters}`` from the declaration (see ``op``'s ``aten``)."""
    target = OPS.get(opdef.alias_of) if opdef.alias_of else None
    source = target if target is not None and opdef.aten is None else opdef
    spec = source.aten
    if spec is None:
        scalar_or_tensor = any(kind in (TensorKind.TENSOR_OR_SCALAR, TensorKind.OPTIONAL_TENSOR_OR_SCALAR)
                               for kind in source.tensor_params.values())
        spec = "Tensor" if scalar_or_tensor else "default"
    if isinstance(spec, str):
        spec = {spec: ()}
    named = {}
    for key, dropped in spec.items():
        name, _, overload = key.rpartition(".")
        named[f"{name or source.name}.{overload}"] = tuple(dropped)
    return named


def _build() -> None:
    with _LOCK:
        if _BUILT.is_set():
            return
        for opdef in OPS.values():
            kinds = [("functional", "")]
            if opdef.inplace:
                kinds.append(("inplace", "_"))
            for kind, suffix in kinds:
                found = []
                for key, dropped in _declared_overloads(opdef).items():
                    name, _, overload_name = key.rpartition(".")
                    name = name + suffix
                    packet = _PACKETS.setdefault(name, OpOverloadPacket(name))
                    overload = packet._overloads.get(overload_name)
                    if overload is None:
                        overload = packet._overloads[overload_name] = OpOverload(
                            packet, overload_name, opdef, kind, dropped)
                    found.append(overload)
                _BY_OP[(opdef.name, kind)] = tuple(found)
            if opdef.out:
                key = next(iter(_declared_overloads(opdef)))
                name = key.rpartition(".")[0]
                packet = _PACKETS.setdefault(name, OpOverloadPacket(name))
                packet._overloads.setdefault("out", OpOverload(packet, "out", opdef, "out", _declared_overloads(
                    opdef)[key]))
                _BY_OP[(opdef.name, "out")] = (packet._overloads["out"],)
        _BUILT.set()


def overloads_of(opdef: OpDef, kind: str = "functional") -> tuple[OpOverload, ...]:
    """The overloads a call of ``opdef`` (``kind``: "functional", "inplace" or "out") may reach."""
    if not _BUILT.is_set():
        _build()
    return _BY_OP[(opdef.name, kind)]


def overload_of(opdef: OpDef, kind: str, arguments: dict) -> OpOverload:
    """The overload a call of ``opdef`` with ``arguments`` (public parameter name -> value)
    reaches: the first whose lacking parameters all hold their defaults."""
    candidates = overloads_of(opdef, kind)
    if len(candidates) == 1:
        return candidates[0]
    parameters = opdef.signature.parameters
    for overload in candidates:
        if all(arguments.get(name, parameters[name].default) is parameters[name].default
               or arguments.get(name, parameters[name].default) == parameters[name].default
               for name in overload._dropped):
            return overload
    return candidates[-1]


class _Namespace:
    """``tensormodes.ops.aten``: every aten op of the table by name."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        if not _BUILT.is_set():
            _build()
        packet = _PACKETS.get(name)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{name}'")
        return packet

    def __dir__(self):
        if not _BUILT.is_set():
            _build()
        return sorted(_PACKETS)

    def __repr__(self) -> str:
        return f"<module 'tensormodes.ops.{self._name}'>"


aten = _Namespace("aten")
