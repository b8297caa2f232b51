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

import ast
import dataclasses
import enum
import inspect
import re
import threading
from dataclasses import dataclass, field

from .._ops import OPS, OpDef
from .._ops.registry import TensorKind
from .._state import STATE as _STATE
from .._symbolic import SymBool, SymFloat, SymInt
from .._tensor_base import PLAIN as _PLAIN
from .._tensor_base import TensorBase
from . import composite_reach, python_dispatch

__all__ = ["Tag", "Argument", "FunctionSchema", "OpOverload", "OpOverloadPacket", "aten", "overload_of",
           "formula_overload", "overloads_of", "op_namespace", "define_overload", "reaches"]


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
    # the public parameter it holds (None: an argument the public signature lacks)
    public: str | None = field(default=None, compare=False, repr=False)
    # the value a handler always receives for it when the call leaves it None (a factory's device)
    given: object = field(default=_NO_DEFAULT, compare=False, repr=False)

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
            text += f"={_default_text(self.default_value, self.type)}"
        return text


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
    ("int | tuple[int, ...]", "int[1]"), ("dtype", "ScalarType"), ("Generator", "Generator"),
    ("Sequence[int]", "int[]"), ("tuple[int", "int[]"),
    ("list[int]", "int[]"), ("list[bool]", "bool[]"), ("Number", "Scalar"), ("float | str", "Scalar"),
    ("str", "str"), ("float", "float"), ("bool", "bool"), ("int", "int"),
)

# Unannotated parameters PyTorch's factories and conversions share, by name.
_NAMED_TYPES = {"device": "Device?", "layout": "Layout?", "pin_memory": "bool?", "memory_format": "MemoryFormat?",
                "generator": "Generator?", "dtype": "ScalarType?", "names": "str[]?"}

# Int parameters PyTorch's schemas make symbolic (sizes, counts): ``SymInt groups``, ``SymInt k``.
_SYMBOLIC = frozenset({"groups", "padding_idx", "num_samples", "minlength", "split_size"})

# Ops whose first tensor PyTorch's schema calls ``input``, not ``self``.
_KEEP_INPUT = ("conv", "linear", "native_layer_norm", "native_group_norm", "native_batch_norm", "layer_norm",
               "group_norm", "batch_norm", "dropout")

# A window's parameters, ``int[N]`` in an N-d op (``max_pool2d_with_indices``'s ``int[2] stride=[]``).
_WINDOW = frozenset({"kernel_size", "stride", "padding", "dilation", "output_size", "output_padding"})
_DIMS = re.compile(r"(?<=[a-z_])([123])d(?:_|$)")

# A factory's tensor options: in ATen always these four, in this order, with these defaults,
# where the public signature has any of them (keyword-only), whatever it spells.
_TENSOR_OPTIONS = ("dtype", "layout", "device", "pin_memory")

# Parameters that stay above the dispatch level (autograd and the Python layer consume them).
_ABOVE_DISPATCH = frozenset({"requires_grad"})

# ``torch.dtype`` -> ATen's ScalarType number, as schemas print a dtype default (``dtype=4``).
_SCALAR_TYPES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6,
                 "float64": 7, "complex32": 8, "complex64": 9, "complex128": 10, "bool": 11, "bfloat16": 15}


class _Text(str):
    """A default printed as written (``schema={"reduction": "int=1"}``)."""

    @property
    def value(self):
        """The default as a handler receives it (``[]``, ``1.``, ``None``, ``"mean"``)."""
        try:
            return ast.literal_eval(self)
        except (ValueError, SyntaxError):
            return str(self)


def _default_text(value, schema_type: str = "") -> str:
    """A default as PyTorch's schema prints it: ``1.`` for a float 1, ``1`` for a Scalar 1,
    ``1.0000000000000001e-05``, ``"mean"``, ``[]``, ``None``, a dtype as its number, a device as ``cpu``."""
    if isinstance(value, _Text):
        return str(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_default_text(v, schema_type) for v in value) + "]"
    if isinstance(value, int) and schema_type.startswith("float"):
        return f"{value}."
    if isinstance(value, float):
        if value == int(value) if value == value and abs(value) != float("inf") else False:
            return str(int(value)) if schema_type.startswith("Scalar") else f"{int(value)}."
        return f"{value:.17g}"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if type(value).__name__ == "dtype":
        return str(_SCALAR_TYPES[repr(value).rpartition(".")[2]])
    if type(value).__name__ == "device":
        return str(value)  # ``Device device=cpu``
    return repr(value)


@dataclass(frozen=True)
class _Spelled:
    """A declaration's spelling of one schema argument (``schema=`` or an overload's entry):
    ``[*|~]TYPE [NAME][=DEFAULT]``; ``=`` alone: no default in the schema; ``*``: keyword-only,
    ``~``: positional."""

    type: str
    name: str | None = None
    default: object = None  # None: as the public default; _NO_DEFAULT: none; else _Text
    kwarg_only: bool | None = None


# ``schema={"(order)": "n self"}``: the schema's order of these arguments, where it is not the
# signature's (``polygamma(int n, Tensor self)``).
_ORDER = "(order)"
# ``schema={"(returns)": "Tensor"}``: the returns, where the op's return annotation does not say them.
_RETURNS = "(returns)"
# ``"(out): max max_values"``: the out= form's argument names, where not the returns' fields.
_OUT = "(out)"
_RAW = (_ORDER, _RETURNS, _OUT)
# A factory's options its Python binding always passes down (the default device, no pinning).
_ALWAYS_GIVEN = {"device": "cpu", "pin_memory": False}

_SPELLING = re.compile(r"([*~])?\s*([^\s=]+)(?:\s+(\w+))?\s*(?:(=)(.*))?")


def _parse_spelling(text: str) -> _Spelled:
    match = _SPELLING.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"bad schema spelling {text!r}")
    star, type_, name, equals, default = match.groups()
    if equals:
        default = _Text(default.strip()) if default.strip() else _NO_DEFAULT
    else:
        default = None
    return _Spelled(type_, name, default, None if not star else star == "*")


@dataclass(frozen=True)
class _OverloadSpec:
    """One overload in a declaration's ``aten=``: the parameters it lacks, its own argument
    spellings, its tags beyond the op's, its ``out=`` variant's name."""

    dropped: frozenset = frozenset()
    spelled: tuple = ()  # ((param, _Spelled), ...)
    tags_added: frozenset = frozenset()
    tags_removed: frozenset = frozenset()
    out_name: str | None = None
    inplace_name: str | None = None  # "" where PyTorch has no in-place form of it
    kind_tags: tuple = ()  # ((kind, "+" or "-", tag), ...): the in-place or out= variant's own tags
    formula: bool = False  # reached only from gradient formulas (``"formula"``), never a public call


def _parse_overload(entries) -> _OverloadSpec:
    dropped, spelled, added, removed, out_name, inplace_name = set(), [], set(), set(), None, None
    kind_tags = []
    formula = False
    for entry in entries:
        kind, sign, tag = entry.partition("+") if "+" in entry else entry.partition("-")
        if entry == "formula":
            formula = True
        elif kind in ("inplace", "out") and sign:
            kind_tags.append((kind, sign, tag))
        elif entry.startswith("+"):
            added.add(entry[1:])
        elif entry.startswith("-"):
            removed.add(entry[1:])
        elif entry.startswith("out="):
            out_name = entry[4:]
        elif entry.startswith("inplace="):
            inplace_name = entry[8:]
        elif ":" in entry:
            param, _, text = entry.partition(":")
            param = param.strip()
            spelled.append((param, text.strip() if param in _RAW else _parse_spelling(text)))
        else:
            dropped.add(entry)
    return _OverloadSpec(frozenset(dropped), tuple(spelled), frozenset(added), frozenset(removed), out_name,
                         inplace_name, tuple(kind_tags), formula)


def _schema_type(opdef: OpDef, param: inspect.Parameter, tokens: dict, dims: str = "", packet: str = "") -> str:
    kind = opdef.tensor_params.get(param.name)
    if kind is not None:
        token = tokens.get(param.name)
        if token == "Scalar" and kind in (TensorKind.TENSOR_OR_SCALAR, TensorKind.OPTIONAL_TENSOR_OR_SCALAR):
            return "Scalar" if kind is TensorKind.TENSOR_OR_SCALAR else "Scalar?"
        return _TENSOR_TYPES[kind]
    if param.kind is param.VAR_POSITIONAL:
        return "SymInt[]"
    text = param.annotation if isinstance(param.annotation, str) else ""
    if not text:
        if param.name in _NAMED_TYPES:
            return _NAMED_TYPES[param.name]
        if dims and param.name in _WINDOW:  # ``max_pool2d``'s ``int[2] kernel_size``, ``conv2d``'s SymInt[2]
            return f"SymInt[{dims}]" if packet.startswith("conv") else f"int[{dims}]"
        default = param.default
        return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(default), "Any")
    if text == "int" and param.name in _SYMBOLIC:
        return "SymInt"
    if packet.startswith("conv") and param.name in _WINDOW and "int" in text:  # ``convolution``'s SymInt[]
        return f"SymInt[{dims}]"
    for needle, schema_type in _ANNOTATION_TYPES:
        if needle in text:
            if schema_type == "int[]" and param.name in ("size", "shape"):
                schema_type = "SymInt[]"
            return schema_type + ("?" if "None" in text else "")
    return "Any"


def _scalar_tokens(opdef: OpDef, overload_name: str) -> dict:
    """Which tensor-or-number parameters an overload's name makes Scalars: ``Tensor_Scalar``
    names each in order; ``Scalar`` (or ``Scalar_<anything>``) all but the first."""
    mixed = [name for name, kind in opdef.tensor_params.items()
             if kind in (TensorKind.TENSOR_OR_SCALAR, TensorKind.OPTIONAL_TENSOR_OR_SCALAR, TensorKind.TENSOR)]
    tokens = overload_name.split("_")
    if all(t in ("Tensor", "Scalar") for t in tokens) and len(tokens) == len(mixed) and len(tokens) > 1:
        return dict(zip(mixed, tokens))
    if tokens[0] == "Scalar" and len(tokens) == 1:
        return {name: "Scalar" for name in mixed[1:]}
    return {}


def _letters():
    return iter("abcdefghijklmnopqrstuvwxyz")


def _returns(opdef: OpDef, kind: str, spelled: str | None = None) -> tuple[Argument, ...]:
    if spelled is not None and kind in ("inplace", "out") and "," not in spelled:
        return (Argument("", "Tensor", alias_info="a!"),)
    if spelled is not None:  # ``"(returns)": "Tensor, Tensor values"``
        returns = []
        for text in spelled.split(","):
            type_, _, name = text.strip().partition(" ")
            returns.append(Argument(name, type_))
        return tuple(returns)
    if opdef.saves and kind == "functional":
        return tuple(Argument("", "Tensor") for _ in range(1 + len(opdef.saves)))
    if opdef.returns is not None:
        if kind == "out":
            return tuple(Argument(field, "Tensor", alias_info=f"{letter}!")
                         for field, letter in zip(opdef.returns._fields, _letters()))
        return tuple(Argument(field, "Tensor") for field in opdef.returns._fields)
    if kind in ("inplace", "out") or opdef.mutates:
        return (Argument("", "Tensor", alias_info="a!"),)
    annotation = opdef.signature.return_annotation
    text = annotation if isinstance(annotation, str) else "Tensor"
    alias = "a" if (opdef.view or opdef.alias) else None
    if "..." in text or text.startswith("list"):
        return (Argument("", "Tensor[]", alias_info=alias),)
    if text.startswith("tuple[") and "Tensor" in text:
        return tuple(Argument("", "Tensor") for _ in range(text.count("Tensor")))
    if text in ("bool", "int", "float", "None"):
        return () if text == "None" else (Argument("", text),)
    if text == "dt.dtype":
        return (Argument("", "ScalarType"),)
    return (Argument("", "Tensor", alias_info=alias),)


def _spellings(opdef: OpDef, spec: _OverloadSpec) -> dict:
    """The op's ``schema=`` spellings with the overload's own over them."""
    spelled = {name: _parse_spelling(text) if isinstance(text, str) and name not in _RAW else text
               for name, text in opdef.schema_types.items()}
    spelled.update(spec.spelled)
    return spelled


def _reorder(arguments: list, order: str) -> None:
    """The listed arguments take the places they hold among themselves in ``order``."""
    names = order.split()
    slots = [i for i, a in enumerate(arguments) if a.name in names]
    moved = sorted((arguments[i] for i in slots), key=lambda a: names.index(a.name))
    for i, argument in zip(slots, moved):
        arguments[i] = argument
    # After the first keyword-only argument every one is keyword-only (``std.correction``'s keepdim)
    first = next((i for i, a in enumerate(arguments) if a.kwarg_only), None)
    if first is not None:
        for i in range(first + 1, len(arguments)):
            if not arguments[i].kwarg_only:
                arguments[i] = dataclasses.replace(arguments[i], kwarg_only=True)


def _out_arguments(opdef: OpDef, returns: tuple, out_names: str | None) -> list:
    """An ``out=`` form's keyword-only out tensors: one per named result, else ``out``."""
    if opdef.returns is not None and len(returns) > 1:
        fields = out_names.split() if out_names else opdef.returns._fields
        return [Argument(field, "Tensor", kwarg_only=True, alias_info=f"{letter}!", public="out")
                for field, letter in zip(fields, _letters())]
    return [Argument("out", "Tensor", kwarg_only=True, alias_info="a!", public="out")]


def _schema(overload: OpOverload) -> FunctionSchema:
    opdef, kind, spec = overload._opdef, overload._kind, overload._spec
    spelled = _spellings(opdef, spec)
    order = spelled.pop(_ORDER, None)
    out_names = spelled.pop(_OUT, None)
    returned = spelled.pop(_RETURNS, None)
    if returned is None and opdef.returns is not None and "dim" in spec.dropped:
        returned = "Tensor"  # a reduction over everything returns one tensor (``max.default``)
    returns = _returns(opdef, kind, returned)
    tokens = _scalar_tokens(opdef, overload._functional_name)
    dims = _DIMS.search(overload._packet_name)
    dims = dims.group(1) if dims else ""
    parameters = [p for p in opdef.signature.parameters.values() if p.name not in spec.dropped
                  and p.name not in _ABOVE_DISPATCH and spelled.get(p.name, 1) is not None]
    names = {p.name for p in parameters}
    options = [p for p in parameters if p.name in _TENSOR_OPTIONS and p.kind is p.KEYWORD_ONLY]
    grouped = len(options) >= 2
    first_kind = opdef.tensor_params.get(next(iter(opdef.signature.parameters), ""))
    arguments, first_tensor = [], True

    def add(public: str | None, name: str, schema_type: str, default, kwarg_only: bool, alias=None,
            given=_NO_DEFAULT) -> None:
        own = spelled.get(public or name)
        if own is not None:
            schema_type = own.type
            if "(" in schema_type:  # ``Tensor()``: no alias annotation, ``Tensor(a)``: this one
                schema_type, _, annotation = schema_type.partition("(")
                alias = annotation.rstrip(")") or None
            name = own.name or name
            if own.default is not None:
                default = own.default
            if own.kwarg_only is not None:
                kwarg_only = own.kwarg_only
        if isinstance(default, tuple):
            default = list(default)
        arguments.append(Argument(name, schema_type, default, kwarg_only, alias, public, given))

    for param in parameters:
        if grouped and param.name in _TENSOR_OPTIONS:
            if param is options[0] and kind != "out":  # an ``out=`` variant has the out tensor's
                for option in _TENSOR_OPTIONS:
                    given = _ALWAYS_GIVEN.get(option, _NO_DEFAULT) if opdef.factory else _NO_DEFAULT
                    if option == "device" and first_kind is TensorKind.TENSOR:  # ``zeros_like``: the input's
                        given = _NO_DEFAULT
                    add(option if option in names else None, option, _NAMED_TYPES[option], None, True, None, given)
            continue
        name = param.name.rstrip("_") or param.name
        alias = None
        default = param.default
        if param.name in opdef.tensor_params:
            if name == "input" and first_tensor and not overload._packet_name.startswith(_KEEP_INPUT):
                name = "self"
            if first_tensor:
                first_tensor = False
                alias = _alias_of(opdef, kind)
                if alias == "a" and returns and returns[0].type == "Tensor[]":
                    alias = "a -> *"
        if type(param.default) is int and dims and param.name in _WINDOW and overload._packet_name.startswith("conv"):
            default = [param.default] * int(dims)  # ``SymInt[2] stride=[1, 1]``
        add(param.name, name, _schema_type(opdef, param, tokens, dims, overload._packet_name), default,
            param.kind is param.KEYWORD_ONLY, alias)
    for extra, own in spelled.items():
        if own is not None and extra not in opdef.signature.parameters:
            arguments.append(Argument(own.name or extra, own.type, own.default if own.default is not None
                                      else _NO_DEFAULT, bool(own.kwarg_only), None, None))
    if order is not None:
        _reorder(arguments, order)
    if kind == "out":
        arguments.extend(_out_arguments(opdef, returns, out_names))
    return FunctionSchema(f"aten::{overload._packet_name}", overload._overloadname, tuple(arguments), returns)


def _alias_of(opdef: OpDef, kind: str) -> str | None:
    """The alias annotation of the first tensor argument."""
    if kind == "inplace" or opdef.mutates:
        return "a!"
    if opdef.view or opdef.alias:
        return "a"
    return None


# What an overload's argument takes, for picking the overload of a call (``OpOverload._fits``).
_TAKES_TENSOR, _TAKES_NUMBER, _TAKES_INTS = "tensor", "number", "ints"


_GRAD = python_dispatch.HOOKS  # ``enabled``: grad mode's flag, given by the autograd layer
_FORMULA_CALLS = python_dispatch.FORMULA_CALLS
_run_chain = python_dispatch.run_chain
_as_dispatched = python_dispatch.as_dispatched

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
                 spec: _OverloadSpec, functional_name: str | None = None) -> None:
        self.overloadpacket = packet
        self._packet_name = packet._name
        self._overloadname = overload_name
        self._functional_name = functional_name or overload_name  # its functional overload's name
        self._opdef = opdef
        self._kind = kind  # "functional", "inplace" or "out"
        self._spec = spec
        self._dropped = spec.dropped
        self.namespace = packet._namespace
        self._schema_cache: FunctionSchema | None = None
        self.__name__ = f"{packet._name}.{overload_name}"
        self.__qualname__ = self.__name__
        self.__module__ = f"tensormodes.ops.{self.namespace}"

    @property
    def _schema(self) -> FunctionSchema:
        if self._schema_cache is None:
            self._schema_cache = _schema(self)
        return self._schema_cache

    @property
    def tags(self) -> list[Tag]:
        """PyTorch's tags of this overload: the op's declared ones with this overload's changes
        (``aten=``), plus those its flags imply (random, in-place, ``out=``, in-place view)."""
        opdef, spec = self._opdef, self._spec
        names = (set(opdef.tags) | spec.tags_added) - spec.tags_removed
        if "generator" in opdef.signature.parameters:
            names.add("nondeterministic_seeded")
        if self._kind == "inplace":
            names.add("inplace")
            names.discard("core")
            if opdef.view:
                names.add("inplace_view")
        if self._kind == "out":
            names.add("out")
            names.discard("core")
        for kind, sign, tag in spec.kind_tags:
            if kind == self._kind:
                (names.add if sign == "+" else names.discard)(tag)
        names.add("pt2_compliant_tag")
        return sorted((Tag[n] for n in names), key=lambda t: t.value)

    def _fits(self, values: dict) -> int:
        """How a call's arguments (parameter name -> value) fit this overload: 0 not at all (a
        lacking parameter is not at its default, a tensor where it takes a number, a list where
        it takes one int), 1 with a number where it takes a Tensor or one int for an int list,
        2 exactly."""
        plan = self.__dict__.get("_fit_plan")
        if plan is None:
            parameters = self._opdef.signature.parameters
            typed, required = [], []
            for argument in self._schema.arguments:
                if argument.public is None or argument.public not in parameters:
                    continue
                if not argument.has_default_value and not argument.type.endswith("?"):
                    required.append(argument.public)
                kind = argument.type.rstrip("?")
                if kind == "Tensor":
                    typed.append((argument.public, _TAKES_TENSOR))
                elif kind in ("Scalar", "float", "int", "SymInt"):
                    typed.append((argument.public, _TAKES_NUMBER))
                elif kind.startswith(("int[", "SymInt[")):
                    typed.append((argument.public, _TAKES_INTS))
            plan = self._fit_plan = ([(name, parameters[name].default) for name in self._dropped if name in parameters],
                                     typed, required)
        dropped, typed, required = plan
        for name in required:  # ``randint.low`` needs its ``high``
            if values.get(name) is None:
                return 0
        for name, default in dropped:
            value = values.get(name, default)
            if value is not default and not (type(value) in (int, float, bool, str) and value == default):
                return 0
        fits = 2
        for name, takes in typed:
            value = values.get(name)
            if value is None:
                continue
            is_tensor = isinstance(value, TensorBase)
            listed = type(value) is list or type(value) is tuple
            if takes is _TAKES_TENSOR:
                if listed:
                    return 0
                if not is_tensor:
                    fits = 1
            elif takes is _TAKES_NUMBER:
                if is_tensor or listed:
                    return 0
            elif is_tensor:
                return 0
            elif not listed:
                fits = 1
        return fits

    @property
    def is_view(self) -> bool:
        return bool(self._opdef.view or self._opdef.alias) and self._kind == "functional"

    def name(self) -> str:
        """``aten::add.Tensor`` (``aten::sum`` for a default overload, as PyTorch)."""
        suffix = "" if self._overloadname == "default" else f".{self._overloadname}"
        return f"{self.namespace}::{self._packet_name}{suffix}"

    # The kernel end when schema-form positional arguments are the implementation's own (set
    # with ``_kernel`` at the first call that reaches the kernel; None before, or when they are not).
    _plain_kernel = None
    # How many positional arguments the schema has without a default: a direct call giving more
    # may hold trailing ones at their defaults, which PyTorch's dispatcher leaves out (set by
    # ``python_dispatch.as_dispatched`` at its first look; 0 before, so that it looks).
    _required_positional = 0

    def __call__(self, /, *args, **kwargs):
        if _GRAD.enabled():  # where autograd may record, it runs first (see HOOKS.call)
            return python_dispatch.HOOKS.call(self, args, kwargs)
        if _FORMULA_CALLS.get() is None:  # a handler's call: the chain directly
            kernel = self._plain_kernel
            if kernel is not None and not kwargs:
                # ``run_chain``'s last step inline when nothing listens below (the handler of the
                # last mode calling ``func``): a frame less on every op a mode passes through
                state = _STATE.get()
                if state is None or state.kernel_next:
                    plain = _PLAIN.tensor
                    for value in args:
                        cls = type(value)
                        if cls is list or cls is tuple:
                            # an int list (``sum``'s dims, ``view``'s size) asks no subclass
                            for item in value:
                                if type(item) is not int:
                                    break
                            else:
                                continue
                            break  # a list of tensors: the chain looks at them
                        if cls is not plain and isinstance(value, TensorBase):
                            break  # a subclass may be asked (the chain looks)
                    else:
                        try:
                            return kernel(*args)
                        except TypeError:
                            python_dispatch.bind(self, args, kwargs)  # PyTorch's error for wrong arguments
                            raise
            if kwargs or len(args) > self._required_positional:  # (the class's 0 until the first look)
                args, kwargs = _as_dispatched(self, args, kwargs)
            return _run_chain(self, args, kwargs)
        if kwargs or len(args) > self._required_positional:
            args, kwargs = _as_dispatched(self, args, kwargs)
        return python_dispatch.call_overload(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.namespace}.{self._packet_name}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self.namespace}.{self._packet_name}.{self._overloadname}"

    def __reduce__(self):
        return (_lookup, (self._packet_name, self._overloadname, self.namespace))

    def decompose(self, *args, **kwargs):
        """Run the op's composite definition when it has one, else ``NotImplemented``."""
        if self._opdef.decompose is None:
            return NotImplemented
        return python_dispatch.HOOKS.decompose(self._opdef, args, kwargs)


def _lookup(packet: str, overload: str, namespace: str = "aten") -> OpOverload:
    return getattr(getattr(op_namespace(namespace), packet), overload)


class OpOverloadPacket:
    """All overloads of one aten op (``aten.add``): attribute access gives an overload;
    calling it picks the overload PyTorch would for the arguments."""

    def __init__(self, name: str, namespace: str = "aten") -> None:
        self._name = name
        self._namespace = namespace
        self._overloads: dict[str, OpOverload] = {}
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = f"tensormodes.ops.{namespace}"

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __getattr__(self, overload: str) -> OpOverload:
        overloads = self.__dict__.get("_overloads")
        if overloads is not None and overload in overloads:
            return overloads[overload]
        raise AttributeError(f"The underlying op of '{self._namespace}.{self._name}' has no overload name "
                             f"'{overload}'")

    @property
    def _qualified_op_name(self) -> str:
        return f"{self._namespace}::{self._name}"

    def __repr__(self) -> str:
        return f"{self._namespace}.{self._name}"

    def __call__(self, /, *args, **kwargs):
        errors, lenient = [], None
        for overload in self._overloads.values():
            try:
                bound = python_dispatch.bind(overload, args, kwargs)
            except RuntimeError as error:
                errors.append(str(error))
                continue
            # a number where the overload takes a Tensor fits only when nothing fits better
            # (``aten.gt(x, 0)`` is ``gt.Scalar``, ``aten.add(x, 2)`` ``add.Tensor``: PyTorch declares
            # add.Scalar, as the other overloads only formulas reach, after it)
            if overload._spec.formula or any(
                    a.type.startswith("Tensor") and a.name in bound and isinstance(bound[a.name], (int, float, bool))
                    for a in overload._schema.arguments):
                lenient = lenient or overload
                continue
            return overload(*args, **kwargs)
        if lenient is not None:
            return lenient(*args, **kwargs)
        if len(errors) == 1:
            raise RuntimeError(errors[0])
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n"
                           + "".join(f"{error}\n\n" for error in errors))


# -- the table -------------------------------------------------------------------------------

_PACKETS: dict[str, OpOverloadPacket] = {}
# (op name, kind) -> its overloads in the order a call tries them
_BY_OP: dict[tuple[str, str], tuple[OpOverload, ...]] = {}
_BUILT = threading.Event()
# op name -> its own view of each of its functional overloads, where it has several
_VIEWS: dict[str, tuple[OpOverload, ...]] = {}
# op name -> its overloads only gradient formulas reach (``"formula"`` in ``aten=``)
_FORMULA_FORMS: dict[str, tuple[OpOverload, ...]] = {}
_LOCK = threading.Lock()


def _declared_overloads(opdef: OpDef) -> dict[str, _OverloadSpec]:
    """``{"name.overload[@label]": spec}`` from the declaration (see ``op``'s ``aten``); an alias
    without its own takes its target's."""
    target = OPS.get(opdef.alias_of) if opdef.alias_of else None
    source = target if target is not None else opdef
    spec = source.aten
    if spec is None:
        scalar_or_tensor = any(kind in (TensorKind.TENSOR_OR_SCALAR, TensorKind.OPTIONAL_TENSOR_OR_SCALAR)
                               for kind in source.tensor_params.values())
        spec = "Tensor" if scalar_or_tensor else "default"
    if isinstance(spec, str):
        spec = {spec: ()}
    named = {}
    for key, entries in spec.items():
        name, _, overload = key.rpartition(".")
        named[f"{name or source.name}.{overload}"] = _parse_overload((entries,) if isinstance(entries, str)
                                                                      else entries)
    return named


def _overload(name: str, overload_name: str, opdef: OpDef, kind: str, spec: _OverloadSpec,
              functional_name: str | None = None) -> OpOverload:
    packet = _PACKETS.get(name)
    if packet is None:
        packet = _PACKETS[name] = OpOverloadPacket(name)
    overload = packet._overloads.get(overload_name)
    if overload is None:
        overload = packet._overloads[overload_name] = OpOverload(packet, overload_name, opdef, kind, spec,
                                                                 functional_name)
    return overload


def _build() -> None:
    with _LOCK:
        if _BUILT.is_set():
            return
        for opdef in OPS.values():
            declared = _declared_overloads(opdef)
            functional, inplace, out, formula = [], [], [], []
            for key, spec in declared.items():
                name, _, overload_name = key.partition("@")[0].rpartition(".")
                overload = _overload(name, overload_name, opdef, "functional", spec)
                (formula if spec.formula else functional).append(overload)
                if opdef.inplace:
                    inplace_name = overload_name if spec.inplace_name is None else spec.inplace_name
                    if inplace_name:
                        overload = _overload(name + "_", inplace_name, opdef, "inplace", spec, overload_name)
                        if not spec.formula:
                            inplace.append(overload)
                if opdef.out and spec.out_name != "":  # ``out=`` alone: PyTorch has no out= form of it
                    out_name = spec.out_name or ("out" if overload_name == "default" else f"{overload_name}_out")
                    overload = _overload(name, out_name, opdef, "out", spec, overload_name)
                    if not spec.formula:
                        out.append(overload)
            if formula:
                _FORMULA_FORMS[opdef.name] = tuple(formula)
            declared = {key: spec for key, spec in declared.items() if not spec.formula}
            # an overload another op declared first is that op's, and one overload may take a call's
            # arguments two ways (``name.overload@label``): this op picks it, and makes a handler's
            # arguments, by its own view of it (its parameters, what it lacks)
            views = []
            for overload, spec in zip(functional, declared.values()):
                view = overload
                if overload._opdef is not opdef or overload._spec is not spec:
                    view = OpOverload(overload.overloadpacket, overload._overloadname, opdef, "functional", spec)
                    overload.__dict__.setdefault("_alternatives", []).append(view)
                views.append(view)
            if len(functional) > 1:
                _VIEWS[opdef.name] = tuple(views)
            _BY_OP[(opdef.name, "functional")] = tuple(functional)
            _BY_OP[(opdef.name, "inplace")] = tuple(inplace)
            _BY_OP[(opdef.name, "out")] = tuple(out)
        _BUILT.set()


_SYMBOLIC_SCALARS = frozenset({SymInt, SymFloat, SymBool})


def formula_overload(opdef: OpDef, arguments: dict, wrapped: tuple = ()) -> OpOverload | None:
    """The overload a gradient formula's call of ``opdef`` reaches where it differs from a public
    call's: PyTorch's formulas are C++, which passes a number as a Scalar (``grad.div(n)`` is
    ``div.Scalar``), where Python's binding makes it a tensor (``x / n`` is ``div.Tensor``) —
    and so does the formula of that call, given the number as a tensor: a number among
    ``wrapped`` stays a tensor. None where the call fits no such overload (declared
    ``"formula"`` in ``aten=``)."""
    forms = _FORMULA_FORMS.get(opdef.name)
    if forms is None:
        return None
    for name in opdef.tensor_params:
        value = arguments.get(name)
        if type(value) in (int, float, bool, complex) and any(type(w) is type(value) and w == value for w in wrapped):
            return None
        if type(value) in _SYMBOLIC_SCALARS and any(w is value for w in wrapped):  # (== of symbols is symbolic)
            return None
    for overload in forms:
        if overload._fits(arguments) == 2:
            return overload
    return None


def has_formula_forms(opdef: OpDef) -> bool:
    """Whether ``opdef`` has overloads only gradient formulas reach (``formula_overload``)."""
    if not _BUILT.is_set():
        _build()
    return opdef.name in _FORMULA_FORMS


def overloads_of(opdef: OpDef, kind: str = "functional") -> tuple[OpOverload, ...]:
    """The overloads a call of ``opdef`` (``kind``: "functional", "inplace" or "out") may reach."""
    if not _BUILT.is_set():
        _build()
    return _BY_OP[(opdef.name, kind)]


def reaches(name: str, packets: frozenset) -> bool:
    """Whether a call of the table's op ``name`` may show the dispatch level an op of one of
    ``packets`` (``OpOverloadPacket``s): one of its own overloads (any kind, those only gradient
    formulas reach included) is in them, or, for a composite, one of any op its decomposition
    or the gradient formulas of either form may run (``composite_reach.op_closure``), or it is
    not the table's (a run-time op: assumed to). A mode declaring ``handled_ops`` lets every
    other op take the plain path — a composite then runs undecomposed, as with no mode."""
    opdef = OPS.get(name)
    if opdef is None or opdef.name != name:
        return True
    if opdef.decompose is None:
        return _own_overload_in(name, packets)
    closure = composite_reach.op_closure(name)
    return closure is None or any(_own_overload_in(op, packets) for op in closure)


def _own_overload_in(name: str, packets: frozenset) -> bool:
    """Whether one of op ``name``'s own overloads (any kind, formulas' included) is in ``packets``."""
    if not _BUILT.is_set():
        _build()
    for kind in ("functional", "inplace", "out"):
        for overload in _BY_OP.get((name, kind), ()):
            if overload.overloadpacket in packets:
                return True
    return any(overload.overloadpacket in packets for overload in _FORMULA_FORMS.get(name, ()))


def overload_of(opdef: OpDef, kind: str, arguments: dict) -> OpOverload:
    """The overload a call of ``opdef`` with ``arguments`` (its parameter name -> value, all of
    them in order) reaches, as PyTorch's Python binding picks it: the first whose lacking
    parameters all hold their defaults and whose Scalar arguments are given numbers (a number
    given for a Tensor of an op without a Scalar overload is fine: ``x + 2`` is ``add.Tensor``)."""
    candidates = overloads_of(opdef, kind)
    if len(candidates) == 1:
        return candidates[0]
    if kind == "functional":  # the op's own views: its own parameter names
        views, values = _VIEWS.get(opdef.name, candidates), arguments
    else:  # an in-place or out= overload (an alias's are its target's): by position
        views, values = candidates, dict(zip(candidates[0]._opdef.signature.parameters, arguments.values()))
    fallback = None
    for overload, view in zip(candidates, views):
        fits = view._fits(values)
        if fits == 2:
            return overload
        if fits == 1 and fallback is None:
            fallback = overload
    return fallback if fallback is not None else candidates[-1]


class _Namespace:
    """``tensormodes.ops.aten``: every aten op of the table by name; ``tensormodes.ops.<other>``:
    the ops defined at run time in that namespace (``tensormodes.library.custom_op``)."""

    def __init__(self, name: str, packets: dict[str, OpOverloadPacket] | None = None) -> None:
        self._name = name
        self._packets = _PACKETS if packets is None else packets

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        if not _BUILT.is_set():
            _build()
        packet = self._packets.get(name)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{name}'")
        return packet

    def __dir__(self):
        if not _BUILT.is_set():
            _build()
        return sorted(self._packets)

    def __repr__(self) -> str:
        return f"<module 'tensormodes.ops.{self._name}'>"


aten = _Namespace("aten")
# The namespaces of ops defined at run time (``tensormodes.library``), by name.
_NAMESPACES: dict[str, _Namespace] = {"aten": aten}


def op_namespace(name: str, create: bool = True) -> _Namespace | None:
    """``tensormodes.ops.<name>``: ``aten``, or the namespace of ops defined at run time (made
    when ``create``, empty until an op is defined in it; else None if no op was defined there)."""
    namespace = _NAMESPACES.get(name)
    if namespace is None and create:
        with _LOCK:
            namespace = _NAMESPACES.setdefault(name, _Namespace(name, {}))
    return namespace


def define_overload(namespace: str, name: str, opdef: OpDef, schema: FunctionSchema,
                    cls: type = OpOverload, packet_cls: type = OpOverloadPacket) -> OpOverload:
    """Put a run-time op (``tensormodes.library``) at ``tensormodes.ops.<namespace>.<name>.default``:
    an overload of class ``cls`` (an ``OpOverload``) in a packet of class ``packet_cls`` (an
    ``OpOverloadPacket``), with ``schema`` given, not computed; a new
    definition of the same name replaces the old one, as PyTorch's ``custom_op`` does. Ops of
    the table are never replaced (``aten`` is theirs)."""
    if namespace == "aten":
        raise RuntimeError(f"{namespace}::{name}: the aten namespace holds the op table's ops only")
    packets = op_namespace(namespace)._packets
    with _LOCK:
        packet = packets[name] = packet_cls(name, namespace)
        overload = packet._overloads[schema.overload_name or "default"] = cls(
            packet, schema.overload_name or "default", opdef, "functional", _OverloadSpec())
        overload._schema_cache = schema
        _BY_OP[(opdef.name, "functional")] = (overload,)
        _BY_OP[(opdef.name, "inplace")] = _BY_OP[(opdef.name, "out")] = ()
    return overload
