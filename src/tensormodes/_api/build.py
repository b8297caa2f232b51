"""Builds the public API from the op table and the Tensor layer's declarations:
functions, Tensor methods, in-place variants, operators and properties.

Nothing here is written per op: for each declaration ``codegen`` writes the
source and this module puts the result where users find it (``tensormodes.add``,
``Tensor.add``, ``Tensor.__add__``), registers it as overridable, and builds it
lazily (see "building lazily" below).

>>> import tensormodes as tm
>>> public_function("add") is tm.add
True
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable

from .._autograd.graph import needs_grad, record
from .._dispatch import kernel_site
from .._ops import OPS, OpDef
from .._ops.registry import METHOD, TensorKind, tensor_kind_of
from .._overrides import dispatch as _dispatch
from . import codegen, dispatch_level
from .declarations import BUILD_LOCK, has_tensor_attribute, lazy_tensor_attribute, take_declarations
from .runtime import tensor_arg, tensor_or_scalar_arg, wrap
from .tensor import Tensor
from .tensor_properties import _INLINE_NAMES

__all__ = ["install", "build_all", "composite", "public_function", "function_names", "namespace_function"]


# -- the Tensor layer's own methods and properties -------------------------------------

def _relevant_for(impl, extra: tuple[str, ...]) -> list[codegen.Relevant]:
    params = inspect.signature(impl).parameters
    names = list(params)
    relevant = [codegen.Relevant(names[0], TensorKind.TENSOR)]
    for n in extra:
        many = params[n].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        relevant.append(codegen.Relevant(n, TensorKind.ANY_LIST if many else TensorKind.ANY))
    return relevant


def _make_property(cls, name: str, getter, setter, inline: str | None):
    self_only = [codegen.Relevant("self", TensorKind.TENSOR)]
    getter_fn = codegen.make_accessor(
        name, f"Tensor.{name}.__get__", "self", self_only, getter,
        f"return {inline}" if inline else "return _get(self)", {"_get": getter, **_INLINE_NAMES})
    setter_fn = None
    if setter is not None:
        setter_fn = codegen.make_accessor(
            name, f"Tensor.{name}.__set__", "self, value",
            self_only + [codegen.Relevant("value", TensorKind.ANY)],
            setter, "return _set(self, value)", {"_set": setter})
    prop = property(getter_fn, setter_fn, doc=getter.__doc__)
    # Handlers receive the property's bound accessors, which exist only now.
    codegen.set_api(getter_fn, prop.__get__)
    _dispatch.register_overridable(cls, prop.__get__, f"tensormodes.Tensor.{name}.__get__")
    if setter_fn is not None:
        codegen.set_api(setter_fn, prop.__set__)
        _dispatch.register_overridable(cls, prop.__set__, f"tensormodes.Tensor.{name}.__set__")
    setattr(cls, name, prop)  # published last, registered
    return prop


def _finalize_tensor_class(cls) -> None:
    """Turn the pending declarations into dispatching callables on ``cls``: properties and
    Python protocol methods now (the interpreter looks them up on the type), the
    rest on first use (see ``lazy_tensor_attribute``)."""
    for name, kind, impl, relevant in take_declarations():
        if kind == "property":
            _make_property(cls, name, *impl)
            continue
        _remove_declaration(cls, name, impl)
        build = functools.partial(_make_method, cls, name, impl, *relevant)
        if name.startswith("__"):
            build()
        else:
            lazy_tensor_attribute(cls, name, build)


def _remove_declaration(cls, name: str, impl) -> None:
    """Take the declared implementation off the class body that declared it (``Tensor`` or a
    part of its body kept in its own file, such as ``TensorConversions``): from now on the
    generated callable on ``cls`` is the only ``<name>``."""
    for owner in cls.__mro__:
        if owner.__dict__.get(name) is impl:
            delattr(owner, name)
            return


def _make_method(cls, name: str, impl, relevant: tuple[str, ...], leaf: bool, pass_defaults: bool, plain):
    if not has_tensor_attribute(cls, name):
        signature = inspect.signature(impl)
        # ``plain``: the fast path's body; the declared method reaches the dispatch level, so its
        # fast path closes while a dispatch mode listens (``runs_kernel``), as an op's does
        fast = {} if plain is None else {"fast_body": f"return _plain({', '.join(signature.parameters)})",
                                         "fast_names": {"_plain": plain}, "runs_kernel": True}
        func = codegen.make_callable(
            name, signature, _relevant_for(impl, relevant), impl, leaf=leaf,
            qualname=f"Tensor.{name}", doc=impl.__doc__, module="tensormodes", pass_defaults=pass_defaults, **fast)
        _dispatch.register_overridable(cls, func, f"tensormodes.Tensor.{name}")
        setattr(cls, name, func)  # published last, registered
    return cls.__dict__[name]



# -- operators, functions and methods of the op table -------------------------------------

def _reflected_impl(opdef: OpDef):
    """``other <op> self`` for a reflected operator (``2 - x``): the op with its operands swapped."""
    name, formula = opdef.name, opdef.grad
    first, second = list(opdef.signature.parameters)[:2]
    params = tuple(opdef.tensor_params)
    defaults = {p.name: p.default for p in opdef.signature.parameters.values()
                if p.default is not inspect.Parameter.empty}
    # ``2 @ x``: an op whose first operand must be a tensor refuses a number (TypeError, so the
    # operator returns NotImplemented and Python raises its own TypeError, as for PyTorch).
    first_arg = tensor_arg if opdef.tensor_params.get(first) == TensorKind.TENSOR else tensor_or_scalar_arg

    reversed_op = OPS.get(f"r{name}")  # ``2 - x`` is ``rsub(x, 2)`` at the dispatch level, as in PyTorch
    # the node is named as that op's (``2 - x``: RsubBackward1; ``2 ** x``: pow.Scalar's PowBackward2)
    named_by = reversed_op or opdef
    trailing_defaults = [p.default for p in list(named_by.signature.parameters.values())[2:]]

    def node_name(self, other) -> str:
        if callable(named_by.node):
            return named_by.node(*((self, other) if reversed_op is not None else (other, self)), *trailing_defaults)
        return named_by.node or named_by.name

    def reflected(self, other):
        state = _dispatch.get_state()
        if state is not None and state.dispatch_active or dispatch_level.listens(self) or \
                dispatch_level.listens(other):
            if reversed_op is not None:
                return codegen.shared_impl(reversed_op, False)(self, other)
            return codegen.shared_impl(opdef, False)(other, self)
        a, b = first_arg(other, name, "other", 2), tensor_arg(self, name, "self", 1)
        result = wrap(kernel_site.call(opdef, a, b))
        if opdef.differentiable and needs_grad((self, other)):
            return record(node_name(self, other), formula, params, {**defaults, first: other, second: self}, result,
                          opdef.save_only_for)
        return result

    return reflected


def _composite_reflected_impl(opdef: OpDef, composite):
    """``other <op> self`` for a reflected operator PyTorch writes over public ops: ``composite``
    runs them (each records its own gradient, as in PyTorch)."""
    name = opdef.name

    def reflected(self, other):
        # the arguments' checks (a TypeError: Python tries the other operand's operator)
        tensor_or_scalar_arg(other, name, "other", 2)
        tensor_arg(self, name, "self", 1)
        return composite(self, other)

    return reflected


def _make_dunder(opdef: OpDef, dunder):
    """An operator: the method's code under the operator's name, except reflected ones."""
    with BUILD_LOCK:
        return _make_dunder_locked(opdef, dunder)


def _make_dunder_locked(opdef: OpDef, dunder):
    existing = Tensor.__dict__.get(dunder.name)
    if existing is not None and not getattr(existing, "is_stub", False):
        return existing
    signature = codegen.as_method(opdef.signature)
    binary = sum(1 for p in signature.parameters.values() if p.default is inspect.Parameter.empty) >= 2
    qualname = f"Tensor.{dunder.name}"
    if dunder.reflected:
        P = inspect.Parameter
        signature = inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD), P("other", P.POSITIONAL_OR_KEYWORD)])
        # ``other`` takes what the op's first operand takes (``2 @ x`` is refused: no fast path)
        first = next(iter(opdef.signature.parameters))
        other_kind = TensorKind.TENSOR if opdef.tensor_params.get(first) == TensorKind.TENSOR else \
            TensorKind.TENSOR_OR_SCALAR
        relevant = [codegen.Relevant("self", TensorKind.TENSOR), codegen.Relevant("other", other_kind)]
        impl = _composite_reflected_impl(opdef, dunder.composite) if dunder.composite else _reflected_impl(opdef)
        func = codegen.make_callable(dunder.name, signature, relevant, impl, leaf=True,
                                      qualname=qualname, not_implemented_on_type_error=True, runs_kernel=True)
    else:
        func = codegen.op_callable(opdef, dunder.name, signature, inplace=dunder.inplace, qualname=qualname,
                                   operator=binary)
    func.__doc__ = f"``{dunder.name}``: see ``{opdef.name}``."
    if dunder.api == METHOD:
        codegen.set_api(func, _tensor_method(opdef, inplace=dunder.inplace))
    else:
        _dispatch.register_overridable(Tensor, func, f"tensormodes.Tensor.{dunder.name}")
    # Published last: another thread may call it as soon as it is on the class (without the lock).
    setattr(Tensor, dunder.name, func)
    return func


# -- building lazily -------------------------------------------------------------------
# Generating and compiling a callable costs a fraction of a millisecond; doing it
# for every op at import would make ``import tensormodes`` take most of a second.
# So operators (which must exist on the class for Python to find them) are
# built at import, and everything else on first access: ``tm.add`` through the
# package's ``__getattr__``, ``Tensor.add`` through the Tensor layer's lazy
# attributes. Either way the object is built once and then is a plain attribute.

# The ops declaring a public function, by (namespace, name), with whether the function is the
# op's in-place form (``tensormodes.abs_``), and the functions built so far.
_FUNCTION_OPS: dict[tuple[str, str], tuple[OpDef, bool]] = {}
_NAMESPACED: dict[tuple[str, str], object] = {}


def _build_function(opdef: OpDef, inplace: bool = False) -> object:
    name = opdef.inplace if inplace else opdef.function
    key = (opdef.namespace, name)
    with BUILD_LOCK:
        if key not in _NAMESPACED:
            # the in-place function takes the method's arguments (no ``out=``) under the op's names
            signature = opdef.signature.replace(return_annotation=inspect.Signature.empty) if inplace else \
                codegen.function_signature(opdef)
            func = codegen.op_callable(opdef, name, signature, inplace=inplace, qualname=name)
            func.__module__ = opdef.namespace
            _NAMESPACED[key] = func
            _dispatch.register_overridable(sys.modules[opdef.namespace], func, f"{opdef.namespace}.{name}")
    return _NAMESPACED[key]


def namespace_function(namespace: str, name: str):
    """The public function ``name`` of ``namespace`` (for modules such as nn.functional)."""
    found = _FUNCTION_OPS.get((namespace, name))
    if found is None:
        raise AttributeError(f"no op declares the function {name!r} of {namespace}")
    return _build_function(*found)


def _tensor_method(opdef: OpDef, *, inplace: bool) -> object:
    name = opdef.inplace if inplace else opdef.method
    with BUILD_LOCK:
        if not has_tensor_attribute(Tensor, name):
            func = codegen.op_callable(opdef, name, codegen.as_method(opdef.signature), inplace=inplace,
                                       qualname=f"Tensor.{name}")
            _dispatch.register_overridable(Tensor, func, f"tensormodes.Tensor.{name}")
            setattr(Tensor, name, func)  # published last, registered
    return Tensor.__dict__[name]


def public_function(name: str):
    """The public function ``tensormodes.<name>``, built on first use (AttributeError if none)."""
    found = _FUNCTION_OPS.get(("tensormodes", name))
    if found is None:
        raise AttributeError(f"module 'tensormodes' has no attribute '{name}'")
    return _build_function(*found)


def function_names() -> list[str]:
    """Names of every public function of the op table, built or not."""
    return [name for namespace, name in _FUNCTION_OPS if namespace == "tensormodes"]


def build_all() -> None:
    """Build every public function now (for introspection: overridable lists, docs); methods
    are built by their placeholders' own entries in ``BUILD_ALL``."""
    for opdef in OPS.values():
        if opdef.function and opdef.namespace in sys.modules:
            _build_function(opdef)
        if opdef.inplace_function and opdef.namespace in sys.modules:
            _build_function(opdef, inplace=True)


def install() -> None:
    """What is generated at import, run once by the package: turn the Tensor layer's
    declarations into properties and methods, and index the op table — operators now,
    functions and methods when first used."""
    _finalize_tensor_class(Tensor)
    _dispatch.NO_WRAP.update({Tensor.grad.__get__, Tensor._base.__get__})
    for opdef in OPS.values():
        if opdef.function:
            _FUNCTION_OPS[opdef.namespace, opdef.function] = (opdef, False)
        if opdef.inplace_function:
            _FUNCTION_OPS[opdef.namespace, opdef.inplace] = (opdef, True)
        for name, inplace in ((opdef.method, False), (opdef.inplace, True)):
            if name and name.startswith("__"):
                # Python finds protocol methods (t[i]) on the type itself, never lazily.
                _tensor_method(opdef, inplace=inplace)
            elif name:
                lazy_tensor_attribute(Tensor, name, functools.partial(_tensor_method, opdef, inplace=inplace))
        for dunder in opdef.dunders:
            if dunder.api == METHOD:
                _install_dunder_stub(opdef, dunder)
            else:
                _make_dunder(opdef, dunder)
    _dispatch.BUILD_ALL.append(build_all)


def _install_dunder_stub(opdef: OpDef, dunder) -> None:
    """An operator presented to handlers as a method (``a + b`` -> ``Tensor.add``) is not
    a public callable itself, so it can start as a stub that builds the real
    operator, puts it on the class, and calls it."""

    def stub(self, *args):
        return _make_dunder(opdef, dunder)(self, *args)

    stub.__name__, stub.__qualname__ = dunder.name, f"Tensor.{dunder.name}"
    stub.is_stub = True
    setattr(Tensor, dunder.name, stub)
    _dispatch.BUILD_ALL.append(functools.partial(_make_dunder, opdef, dunder))


def composite(module_name: str, *, pass_defaults: bool = True):
    """Make a Python-level function a public callable of ``module_name`` that takes
    part in the protocol on its own (``F.relu`` is what handlers see).

    Parameters annotated as in the op table mark what may carry overrides. The
    function's own calls run below the mode that handled it, so a pass-through
    mode sees ``F.relu`` and not the ``relu`` inside it. Handlers receive every
    optional argument as a keyword, as from PyTorch's Python-level functions,
    unless ``pass_defaults=False`` (for functions PyTorch implements in C++).
    """

    def decorate(impl):
        signature = inspect.signature(impl)
        kinds = {}
        for p in signature.parameters.values():
            kind = tensor_kind_of(p.annotation)
            if kind is not None:
                many = kind == TensorKind.TENSOR and p.kind is p.VAR_POSITIONAL
                kinds[p.name] = TensorKind.TENSOR_LIST if many else kind
        func = codegen.make_callable(
            impl.__name__, signature, codegen.relevant_parameters(signature, kinds), impl, leaf=False,
            qualname=impl.__qualname__, doc=impl.__doc__, module=module_name, pass_defaults=pass_defaults)
        _dispatch.register_overridable(sys.modules[module_name], func, f"{module_name}.{impl.__name__}")
        return func

    return decorate


def native_composites(module_name: str) -> tuple[dict[str, Callable], Callable]:
    """A registry and a decorator for Python-written public functions of ``module_name`` that
    PyTorch implements in C++ (so handlers get only the arguments given, as from C++ bindings).
    The package face re-exports each registry; for example ``_integration.py`` starts with
    ``COMPOSITES, _public = build.native_composites("tensormodes")`` and decorates
    ``cumulative_trapezoid`` with ``@_public``.
    """
    registry: dict[str, Callable] = {}

    def public(impl: Callable) -> Callable:
        func = composite(module_name, pass_defaults=False)(impl)
        registry[func.__name__] = func
        return func

    return registry, public
