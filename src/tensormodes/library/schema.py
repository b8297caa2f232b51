"""Schemas of custom ops: inferred from a function's type hints (``infer_schema``, PyTorch's rules
and errors), and read from their text into the dispatch level's ``FunctionSchema``.

>>> import tensormodes as tm
>>> def scale(x: tm.Tensor, factor: float = 2.0, *, out_dtype: tm.dtype | None = None) -> tm.Tensor:
...     return x * factor
>>> infer_schema(scale, mutates_args=())
'(Tensor x, float factor=2.0, *, ScalarType? out_dtype=None) -> Tensor'
>>> str(parse_schema("mylib::scale", infer_schema(scale, mutates_args=())))
'mylib::scale(Tensor x, float factor=2., *, ScalarType? out_dtype=None) -> Tensor'
"""

from __future__ import annotations

import ast
import collections.abc
import inspect
import typing
from collections.abc import Callable
from types import GenericAlias

from .. import _dtype as dt
from .._api.tensor import Tensor
from .._device import device
from .._dispatch.aten import Argument, FunctionSchema
from .._dtype import dtype

__all__ = ["infer_schema", "parse_schema", "SUPPORTED_PARAM_TYPES", "SUPPORTED_RETURN_TYPES"]

UNKNOWN_MUTATES = "unknown"

# ``torch.types.Number``: what a ``Scalar`` argument takes.
Number = int | float | bool


def _derived_types(base, schema_type: str, list_base: bool, optional_base_list: bool,
                   optional_list_base: bool) -> list[tuple]:
    """The annotations meaning ``schema_type`` (its optional, list and optional-list forms), in
    PyTorch's order, which its error message lists."""
    def sequences(item):
        return (typing.Sequence[item], typing.List[item],  # noqa: UP006 - PyTorch accepts both spellings
                GenericAlias(collections.abc.Sequence, (item,)), GenericAlias(list, (item,)))

    result = [(base, schema_type), (typing.Optional[base], f"{schema_type}?")]  # noqa: UP045
    if list_base:
        result.extend((sequence, f"{schema_type}[]") for sequence in sequences(base))
    if optional_base_list:
        result.extend((sequence, f"{schema_type}?[]") for sequence in sequences(typing.Optional[base]))  # noqa: UP045
    if optional_list_base:
        result.extend((typing.Optional[sequence], f"{schema_type}[]?") for sequence in sequences(base))  # noqa: UP045
    return result


def _supported_param_types() -> dict:
    table = [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
             (float, "float", True, False, True), (bool, "bool", True, False, True), (str, "str", False, False, False),
             (Number, "Scalar", True, False, False), (dtype, "ScalarType", False, False, False),
             (device, "Device", False, False, False)]
    return dict(entry for line in table for entry in _derived_types(*line))


SUPPORTED_PARAM_TYPES = _supported_param_types()
SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",  # noqa: UP006
                          int: "SymInt", float: "float", bool: "bool", Number: "Scalar"}


# long: PyTorch's rules one after the other, each with its error; splitting them would hide the order.
def infer_schema(prototype_function: Callable, /, *, mutates_args, op_name: str | None = None) -> str:
    """Parses the schema of a given function with type hints (PyTorch's
    ``torch.library.infer_schema``): ``Tensor``, ``Tensor | None``, ``list[Tensor]``, ``int``
    (``SymInt``), ``float``, ``bool``, ``str``, numbers (``Scalar``), ``dtype``, ``device``, their
    optional and list forms; returns ``Tensor``, a tuple or list of Tensors, numbers, or None.
    ``mutates_args`` names the Tensor arguments the function writes into (``"unknown"``: all).

    >>> import tensormodes as tm
    >>> def add_(x: tm.Tensor, y: tm.Tensor) -> None:
    ...     x.add_(y)
    >>> infer_schema(add_, op_name="add_", mutates_args=("x",))
    'add_(Tensor(a0!) x, Tensor y) -> ()'
    """
    signature = inspect.signature(prototype_function)

    def error(what: str):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {signature})")

    def resolve(annotation):
        if not isinstance(annotation, str):
            return annotation
        try:
            return eval(annotation, prototype_function.__globals__)  # noqa: S307 - PyTorch reads string hints so
        except Exception as exc:  # noqa: BLE001 - any failure means "not a type", as PyTorch says
            error(f"Unsupported type annotation {annotation}. It is not a type. ({type(exc).__name__}: {exc})")

    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)
    params, seen, keyword_only = [], set(), False
    for index, (name, param) in enumerate(signature.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind is param.KEYWORD_ONLY and not keyword_only:
            params.append("*")
            keyword_only = True
        if param.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        schema_type = _param_type(name, param.annotation, resolve(param.annotation), error)
        if type(mutates_args) is str:
            if mutates_args != UNKNOWN_MUTATES:
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{index}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:
            if not schema_type.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be mutated")
            schema_type = f"Tensor(a{index}!){schema_type[len('Tensor'):]}"
        seen.add(name)
        params.append(f"{schema_type} {name}" if param.default is inspect.Parameter.empty else
                      f"{schema_type} {name}={_default_repr(name, param.default, error)}")
    if mutates_args != UNKNOWN_MUTATES:
        unseen = set(mutates_args) - seen
        if unseen:
            error(f"{unseen} in mutates_args were not found in the custom op's signature. mutates_args should "
                  "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                  "don't know.")
    returns = _return_type(resolve(signature.return_annotation), error)
    prefix = op_name if op_name is not None else ""
    return f"{prefix}({', '.join(params)}) -> {returns}"


def _param_type(name: str, written, annotation, error) -> str:
    try:
        schema_type = SUPPORTED_PARAM_TYPES.get(annotation)
    except TypeError:  # an unhashable annotation
        schema_type = None
    if schema_type is not None:
        return schema_type
    if typing.get_origin(annotation) is tuple:
        items = typing.get_args(annotation)
        if not items:
            as_list = list
        elif len(items) == 1 or items[1:] == (Ellipsis,):
            as_list = list[items[0]]
        else:
            as_list = list[typing.Union[items]]  # noqa: UP007 - PyTorch's suggestion, spelled as it spells it
        example = f"For example, {as_list}.\n\n" if as_list in SUPPORTED_PARAM_TYPES else "\n\n"
        error(f"Parameter {name} has unsupported type {written}. We do not support Tuple inputs in schema. As a "
              f"workaround, please try to use List instead. {example}The valid types are: "
              f"{SUPPORTED_PARAM_TYPES.keys()}.")
    error(f"Parameter {name} has unsupported type {written}. The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")


def _default_repr(name: str, default, error) -> str:
    if default is None or isinstance(default, (int, float, bool)):
        return str(default)
    if isinstance(default, (str, device)):
        return f'"{default}"'
    if isinstance(default, dtype):
        return repr(default).rpartition(".")[2]
    error(f"Parameter {name} has an unsupported default value type {type(default)}. Please file an issue on "
          "GitHub so we can prioritize this.")


def _return_type(annotation, error) -> str:
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in SUPPORTED_RETURN_TYPES:
            error(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
        return SUPPORTED_RETURN_TYPES[annotation]
    items = typing.get_args(annotation)
    for item in items:
        if item not in SUPPORTED_RETURN_TYPES:
            error(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
    text = ", ".join(SUPPORTED_RETURN_TYPES[item] for item in items)
    return f"(({text}))" if len(items) == 1 else f"({text})"


# -- reading a schema ------------------------------------------------------------------------

def _split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (``int[] x=[1, 2], Tensor y``)."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _type_and_alias(text: str) -> tuple[str, str | None]:
    """``Tensor(a0!)?[]`` -> ``("Tensor?[]", "a0!")``."""
    if "(" not in text:
        return text, None
    head, _, rest = text.partition("(")
    alias, _, tail = rest.partition(")")
    return head + tail, alias


def _default_value(text: str, schema_type: str):
    """A default as written in a schema, as the value a call leaves it at."""
    base = schema_type.rstrip("?")
    if text == "None":
        return None
    if base == "ScalarType":
        return getattr(dt, text)
    if base == "Device":
        return device(text.strip('"'))
    value = ast.literal_eval(text)
    return float(value) if base == "float" and type(value) is int else value


def _check_none_default(schema_type: str, line: str, column: int) -> None:
    """PyTorch's parser refuses None as the default of a non-optional list or ``Device``, pointing
    at it (the other types take it)."""
    expected = "[" if schema_type.endswith("]") else "string_literal" if schema_type == "Device" else None
    if expected is not None:
        raise RuntimeError(f"expected {expected} but found 'None' here:\n{line}\n{' ' * column}~~~~ <--- HERE\n")


def parse_schema(qualname: str, text: str) -> FunctionSchema:
    """``text`` (``"(Tensor x, float k=2.0) -> Tensor"``, with or without the name) as the
    ``FunctionSchema`` of op ``qualname`` (``"mylib::foo"``), printed as PyTorch prints it."""
    head, _, tail = text.partition(") -> ")
    if not tail:
        raise RuntimeError(f"expected a schema of the form '(args) -> returns', got {text!r}")
    name, _, overload = qualname.partition(".")
    line = text if not text.startswith("(") else f"{name.rpartition('::')[2]}{text}"  # as PyTorch's parser shows it
    arguments, keyword_only, cursor = [], False, line.index("(")
    for part in _split(head.partition("(")[2]):
        cursor = line.index(part, cursor)
        if part == "*":
            keyword_only = True
            continue
        declared, _, default = part.partition("=")
        schema_type, _, arg_name = declared.strip().rpartition(" ")
        schema_type, alias = _type_and_alias(schema_type)
        if default.strip() == "None" and not schema_type.endswith("?"):
            _check_none_default(schema_type, line, cursor + len(declared) + 1 + len(default) - len(default.lstrip()))
        value = _default_value(default.strip(), schema_type) if default else inspect.Parameter.empty
        arguments.append(Argument(arg_name, schema_type, value, keyword_only, alias, public=arg_name))
    tail = tail.strip()
    if tail == "()":
        returns = ()
    elif tail.startswith("(("):  # one Tensor in a tuple
        returns = (Argument("", tail[2:-2]),)
    else:
        texts = _split(tail[1:-1]) if tail.startswith("(") else [tail]
        returns = tuple(Argument("", type_, alias_info=alias) for type_, alias in map(_type_and_alias, texts))
    return FunctionSchema(name, overload or "default", tuple(arguments), returns)
