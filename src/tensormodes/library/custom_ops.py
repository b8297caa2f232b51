"""Custom ops (PyTorch's ``torch.library.custom_op``): a Python function becomes one op of the
dispatch level, ``tensormodes.ops.<namespace>.<name>.default``, with its kernel, fake rule and
gradient declared beside it.

The op is an ``OpDef`` like the table's (its kernel and meta rule work on arrays, so the
kernel-call site, meta execution and FakeTensorMode run it as any op) and an ``OpOverload`` at
the dispatch level (``_dispatch.aten.define_overload``). A call travels PyTorch's way:

1. ``__torch_function__`` modes and subclasses see ``tensormodes.ops.mylib.foo.default`` (the
   overload, as in PyTorch) with the arguments as given;
2. autograd: with an input that requires grad, a generated ``autograd.Function``
   (``GeneratedBackwardFor_mylib_foo_default``) records the call; its backward is the one given to
   ``register_autograd`` (``setup_context(ctx, inputs, output)`` runs at forward time);
3. the dispatch level, with grad mode off: a ``register_torch_dispatch`` rule of the top mode's
   or a subclass's type, else ``TorchDispatchMode``s and ``__torch_dispatch__`` subclasses see the
   one overload, then its kernel end: the fake rule on meta tensors, the kernel of the tensors'
   device otherwise, after which the mutated arguments' versions are bumped.

>>> import tensormodes as tm
>>> @custom_op("doc::twice", mutates_args=())
... def twice(x: tm.Tensor) -> tm.Tensor:
...     return x * 2
>>> @twice.register_fake
... def _(x):
...     return tm.empty_like(x)
>>> twice(tm.ones(2)), twice(tm.ones(2, device="meta")).shape
(tensor([2., 2.]), tensormodes.Size([2]))
>>> str(tm.ops.doc.twice.default._schema)
'doc::twice(Tensor x) -> Tensor'
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Callable, Iterable

import numpy as np

from .._api import namespace as tm
from .._autograd.function import Function
from .._autograd.grad_mode import BELOW_AUTOGRAD, grad_enabled, reset_grad_enabled, set_grad_enabled_raw
from .._autograd.graph import bump_version
from .._dispatch import python_dispatch
from .._dispatch.aten import OpOverload, OpOverloadPacket, define_overload
from .._meta_array import MetaArray
from .._ops.registry import OpDef, TensorKind
from .._state import STATE
from .._tensor_base import TensorBase, wrap_array
from ..overrides import handle_torch_function, has_torch_function
from .schema import infer_schema, parse_schema

__all__ = ["custom_op", "CustomOpDef", "CustomOpOverload", "custom_op_of"]

# qualified name ("mylib::foo") -> its CustomOpDef, the latest definition
_CUSTOM_OPS: dict[str, CustomOpDef] = {}
_LOCK = threading.Lock()

_KINDS = {"Tensor": TensorKind.TENSOR, "Tensor?": TensorKind.OPTIONAL_TENSOR, "Tensor[]": TensorKind.TENSOR_LIST,
          "Tensor?[]": TensorKind.TENSOR_LIST}


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: Iterable[str] | str,
              device_types: str | Iterable[str] | None = None, schema: str | None = None, tags=None):
    """Wraps a function into custom operator (PyTorch's ``torch.library.custom_op``).

    ``name`` is ``"namespace::opname"``; ``mutates_args`` (required) names the Tensor arguments
    the function writes into, or is ``"unknown"``; ``device_types`` the device types the
    function is the kernel of (all by default); ``schema`` the op's schema when it should not
    be inferred from the type hints (see ``infer_schema``). Returns a ``CustomOpDef``, callable
    like the function, on which the op's fake rule, gradient, kernels and dispatch rules are
    registered.

    >>> import tensormodes as tm
    >>> @custom_op("doc::add_one_", mutates_args=("x",))
    ... def add_one_(x: tm.Tensor) -> None:
    ...     x.add_(1)
    >>> t = tm.zeros(2); add_one_(t); t
    tensor([1., 1.])
    >>> str(tm.ops.doc.add_one_.default._schema)
    'doc::add_one_(Tensor(a0!) x) -> ()'
    """

    def inner(fn: Callable) -> CustomOpDef:
        schema_text = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_text, fn, tags)
        if schema is not None:
            result._check_mutates_args(mutates_args)
        result.register_kernel(device_types)(fn)
        return result

    return inner if fn is None else inner(fn)


def custom_op_of(op) -> CustomOpDef | None:
    """The ``CustomOpDef`` behind ``op`` (a CustomOpDef, its overload or packet, or its name
    ``"mylib::foo"``), or None for other ops."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, CustomOpOverload):
        return op._custom
    if isinstance(op, str):
        return _CUSTOM_OPS.get(op)
    overloads = getattr(op, "_overloads", None)
    if overloads and len(overloads) == 1:
        return custom_op_of(next(iter(overloads.values())))
    return None


class CustomOpOverload(OpOverload):
    """The ``OpOverload`` of a custom op: calling it runs the op as its ``CustomOpDef`` does
    (``__torch_function__`` handling, autograd, then the dispatch level)."""

    _custom: CustomOpDef

    def __call__(self, /, *args, **kwargs):
        return self._custom._call(args, kwargs)

    def decompose(self, *args, **kwargs):
        """A custom op has no composite definition."""
        return NotImplemented


class CustomOpOverloadPacket(OpOverloadPacket):
    """The packet of a custom op: ``__torch_function__`` handlers see the packet when it is called,
    as in PyTorch; then its one overload runs."""

    def __call__(self, /, *args, **kwargs):
        relevant = _relevant(args, kwargs)
        if has_torch_function(relevant):
            return handle_torch_function(self, relevant, *args, **kwargs)
        return self.default(*args, **kwargs)


class CustomOpDef:
    """A custom op (PyTorch's ``CustomOpDef``): call it like the function it was made from;
    ``register_fake``, ``register_autograd``, ``register_kernel`` and ``register_torch_dispatch``
    give it the rest of its declaration."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable | None, tags=None) -> None:
        self._namespace, self._name = namespace, name
        self._qualname = f"{namespace}::{name}"
        self._init_fn = fn
        self._tags = tuple(tags or ())
        self._backend_fns: dict[str | None, Callable] = {}
        self._abstract_fn: Callable | None = None
        self._setup_context_fn: Callable | None = None
        self._backward_fn: Callable | None = None
        self._torch_dispatch_fns: dict[type, Callable] = {}
        self._autograd_function: type | None = None
        self._schema = parse_schema(self._qualname, schema)
        self._mutated = tuple(a.name for a in self._schema.arguments if a.is_write)
        self._opdef = self._make_opdef()
        overload = define_overload(namespace, name, self._opdef, self._schema, CustomOpOverload,
                                   CustomOpOverloadPacket)
        overload._custom = self
        # the end of the overload's chain at the dispatch level (``python_dispatch.call_overload``):
        # its arguments are already the kernel's (a custom op's schema names are its parameters)
        overload._kernel, overload._converts, overload._string_reduction = self._kernel_end, False, False
        self._opoverload = overload
        with _LOCK:
            _CUSTOM_OPS[self._qualname] = self
        if fn is not None:
            self.__wrapped__ = fn
            self.__doc__ = fn.__doc__

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    # -- the op's declaration -----------------------------------------------------------------

    def _make_opdef(self) -> OpDef:
        """The op as an ``OpDef`` of the table's kind: a kernel and a meta rule on arrays."""
        parameters = [inspect.Parameter(a.name, inspect.Parameter.KEYWORD_ONLY if a.kwarg_only else
                                        inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=inspect.Parameter.empty if not a.has_default_value else
                                        getattr(a.default_value, "value", a.default_value))
                      for a in self._schema.arguments]
        tensors = {a.name: _KINDS[a.type] for a in self._schema.arguments if a.type in _KINDS}
        return OpDef(name=self._qualname, kernel=self._array_kernel, signature=inspect.Signature(parameters),
                     tensor_params=tensors, function=None, method=None, inplace=None, dunders=(), out=False,
                     view=False, factory=not tensors, doc=getattr(self._init_fn, "__doc__", None) or "", samples=(),
                     differentiable=True, ufunc=None, grad=None, mutates=bool(self._mutated), alias=False,
                     namespace="tensormodes.library", meta=self._meta_rule, tags=self._tags)

    def _check_mutates_args(self, mutates_args) -> None:
        """A schema given as text must declare exactly the mutated arguments ``mutates_args`` names."""
        if mutates_args == "unknown":
            return
        if set(mutates_args) != set(self._mutated):
            raise ValueError(f"{self._qualname}: mutates_args={tuple(mutates_args)} do not match the arguments the "
                             f"schema declares mutable ({', '.join(self._mutated) or 'none'}): {self._schema}")

    def register_kernel(self, device_types, fn: Callable | None = None, /):
        """Register ``fn`` as the op's implementation for ``device_types`` (``"cpu"``, a sequence
        of them, or None for every device type); usable as a decorator."""

        def register(fn: Callable) -> Callable:
            kinds = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)
            for kind in kinds:
                if kind is not None:
                    tm.device(kind)  # PyTorch's error for a device type that does not exist
                self._backend_fns[kind] = fn
            return fn

        return register if fn is None else register(fn)

    def register_fake(self, fn: Callable, /, *, _stacklevel: int = 1) -> Callable:
        """Register the op's fake rule: given tensors without data (meta or fake tensors), it
        returns tensors with the metadata of the real results (``tm.empty_like(x)``,
        ``x.new_empty(n)``). Meta tensors and FakeTensorMode run it instead of the kernel."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward: Callable, /, *, setup_context: Callable | None = None) -> None:
        """Register the op's backward formula: ``backward(ctx, *grads)`` returns one gradient per
        argument (None for non-tensors); ``setup_context(ctx, inputs, output)`` (with
        ``keyword_only_inputs`` when the op has keyword-only arguments) runs after the forward and
        saves what backward needs (``ctx.save_for_backward``, attributes of ``ctx``)."""
        if self._mutated or any(r.alias_info for r in self._schema.returns):
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with schema "
                               f"{self._schema}. Please create a functional operator and register an autograd "
                               "formula for that.")
        self._backward_fn, self._setup_context_fn = backward, setup_context

    def register_torch_dispatch(self, torch_dispatch_class, fn: Callable | None = None, /):
        """Register what the op does for one ``__torch_dispatch__`` subclass or dispatch mode type:
        ``fn(cls_or_mode, func, types, args, kwargs)`` runs instead of its ``__torch_dispatch__``."""

        def register(fn: Callable) -> Callable:
            self._torch_dispatch_fns[torch_dispatch_class] = fn
            return fn

        return register if fn is None else register(fn)

    # -- a call --------------------------------------------------------------------------------

    def _call(self, args: tuple, kwargs: dict):
        overload = self._opoverload
        relevant = _relevant(args, kwargs)
        if has_torch_function(relevant):
            return handle_torch_function(overload, relevant, *args, **kwargs)
        args, kwargs = python_dispatch.normalized(overload, python_dispatch.bind(overload, args, kwargs))
        if grad_enabled() and any(t._requires_grad for t in _tensors_of(args, kwargs)):
            return self._autograd_call(args, kwargs)
        return self._below_autograd(args, kwargs)

    def _below_autograd(self, args: tuple, kwargs: dict):
        """The dispatch level, with grad mode off (nothing below autograd records; a handler's
        ``is_grad_enabled()`` still says what it was, see ``BELOW_AUTOGRAD``)."""
        token = set_grad_enabled_raw(BELOW_AUTOGRAD if grad_enabled() else False)
        try:
            if self._torch_dispatch_fns:
                result = self._dispatch_rule(args, kwargs)
                if result is not NotImplemented:
                    return result
            return python_dispatch.call_overload(self._opoverload, args, kwargs)
        finally:
            reset_grad_enabled(token)

    def _dispatch_rule(self, args: tuple, kwargs: dict):
        """A ``register_torch_dispatch`` rule for the handler that would run first: the top
        dispatch mode's type, else a subclass's among the arguments (NotImplemented: none)."""
        overload = self._opoverload
        subclasses = python_dispatch.dispatch_classes((*args, *kwargs.values()))
        types = tuple(type(a) for a in subclasses)
        modes = python_dispatch.active_modes()
        if modes:
            rule = _rule_for(self._torch_dispatch_fns, type(modes[-1]))
            if rule is None:
                return NotImplemented
            state = STATE.get()
            token = None
            try:  # the rule runs as the mode's handler would: with the mode popped
                token = STATE.set(state.dispatch_popped())
                return rule(modes[-1], overload, types, args, kwargs)
            finally:
                if token is None:
                    STATE.set(state)
                else:
                    STATE.reset(token)
        for arg in subclasses:
            rule = _rule_for(self._torch_dispatch_fns, type(arg))
            if rule is not None:
                result = rule(type(arg), overload, types, args, kwargs)
                if result is not NotImplemented:
                    return result
        return NotImplemented

    def _kernel_end(self, *args, **kwargs):
        """What runs at the end of the dispatch level: the fake rule when the tensors hold no data,
        else the kernel of their device type; then the mutated arguments' versions are bumped."""
        tensors = _tensors_of(args, kwargs)
        if any(type(t._data) is MetaArray for t in tensors):
            return self._fake(args, kwargs)
        kind = "cpu"
        kernel = self._backend_fns.get(kind, self._backend_fns.get(None))
        if kernel is None:
            raise NotImplementedError(f"Could not run '{self._qualname}' with arguments from the 'CPU' backend: "
                                      f"it has kernels for {sorted(k for k in self._backend_fns if k)} only.")
        result = kernel(*args, **kwargs)
        self._check_aliasing(tensors, result)
        if self._mutated:
            bound = dict(zip((a.name for a in self._schema.arguments), args))
            bound.update(kwargs)
            for name in self._mutated:
                for t in _as_list(bound.get(name)):
                    bump_version(t)
        return result

    def _fake(self, args: tuple, kwargs: dict):
        fn = self._abstract_fn
        if fn is None:
            if self._mutated and not self._schema.returns:  # nothing to make: PyTorch's trivial fake rule
                return None
            raise RuntimeError(f"There was no fake impl registered for {self}. This is necessary for "
                               "torch.compile/export/fx tracing to work. Please use "
                               f"`{getattr(self._init_fn, '__name__', self._name)}.register_fake` to add an fake "
                               "impl.")
        return fn(*args, **kwargs)

    def _check_aliasing(self, inputs: list, result) -> None:
        """PyTorch's rule for custom ops: an output is never an input nor a view of one."""
        outputs = [r for r in _as_list(result) if isinstance(r, TensorBase)]
        for i, out in enumerate(outputs):
            if any(out is t or _shares_memory(out, t) for t in (*inputs, *outputs[:i])):
                module = sys.modules[__name__]
                raise RuntimeError(
                    f"{self._name} (with implementation in {module!r}): The output of this custom operator (1) "
                    "must not also be an input to this custom operator and (2) may not alias any inputs to this "
                    "custom operator or other returns. The most common way to trigger this error is if we have "
                    "y = custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
                    "offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
                    "return y.")

    # -- the op on arrays: what the kernel-call site and meta execution run ------------------------

    def _array_kernel(self, *args, **kwargs):
        return _unwrapped(self._kernel_end(*_wrapped(args), **dict(zip(kwargs, _wrapped(kwargs.values())))))

    def _meta_rule(self, opdef: OpDef, args: tuple, kwargs: dict):
        return _unwrapped(self._fake(tuple(_wrapped(args)), dict(zip(kwargs, _wrapped(kwargs.values())))))

    # -- autograd ------------------------------------------------------------------------------

    def _autograd_call(self, args: tuple, kwargs: dict):
        function = self._autograd_function or self._make_autograd_function()
        flat, layout = [], []
        for value in args:
            if type(value) is list or type(value) is tuple:
                layout.append(len(value))
                flat.extend(value)
            else:
                layout.append(None)
                flat.append(value)
        outputs = function.apply(*flat, _Metadata(tuple(layout), kwargs))
        return list(outputs) if self._schema.returns and self._schema.returns[0].type == "Tensor[]" else outputs

    def _make_autograd_function(self) -> type:
        custom = self
        returns_list = bool(self._schema.returns) and self._schema.returns[0].type == "Tensor[]"

        def forward(ctx, *flat):
            metadata = flat[-1]
            args = _unflatten(flat[:-1], metadata.layout)
            result = custom._below_autograd(args, metadata.kwargs)
            if custom._setup_context_fn is not None:
                inputs, keywords = custom._filled(args, metadata.kwargs)
                if any(a.kwarg_only for a in custom._schema.arguments):
                    custom._setup_context_fn(ctx=ctx, inputs=inputs, keyword_only_inputs=keywords, output=result)
                else:
                    custom._setup_context_fn(ctx=ctx, inputs=inputs, output=result)
            ctx._custom_layout = metadata.layout
            return tuple(result) if returns_list else result

        def backward(ctx, *grads):
            if custom._backward_fn is None:
                raise RuntimeError(f"Trying to backward through {custom._opoverload} but no autograd formula was "
                                   "registered. Please use register_autograd to add one.")
            layout = ctx._custom_layout
            previous = ctx.needs_input_grad
            try:
                ctx.needs_input_grad = _unflatten(previous[:-1], layout)
                result = custom._backward_fn(ctx, *([list(grads)] if returns_list else grads))
            finally:
                ctx.needs_input_grad = previous
            result = result if isinstance(result, tuple) else (result,)
            return (*_flatten(result, layout), None)

        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_{self._opoverload._overloadname}"
        self._autograd_function = type(name, (Function,), {"forward": staticmethod(forward),
                                                           "backward": staticmethod(backward)})
        return self._autograd_function

    def _filled(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Every argument, defaults filled in (what ``setup_context`` receives, as in PyTorch)."""
        inputs, keywords = list(args), {}
        for position, argument in enumerate(self._schema.arguments):
            default = getattr(argument.default_value, "value", argument.default_value)
            if argument.kwarg_only:
                keywords[argument.name] = kwargs.get(argument.name, default)
            elif position >= len(inputs):
                inputs.append(default)
        return tuple(inputs), keywords


class _Metadata:
    """The last argument of a custom op's generated Function: not a tensor, so no gradient."""

    def __init__(self, layout: tuple, kwargs: dict) -> None:
        self.layout, self.kwargs = layout, kwargs


def _unflatten(flat, layout: tuple) -> tuple:
    items, position = [], 0
    for size in layout:
        if size is None:
            items.append(flat[position])
            position += 1
        else:
            items.append(list(flat[position:position + size]))
            position += size
    return tuple(items)


def _flatten(grads: tuple, layout: tuple) -> list:
    flat = []
    for grad, size in zip(grads, layout):
        if size is None:
            flat.append(grad)
        else:
            flat.extend(grad if grad is not None else [None] * size)
    return flat


def _rule_for(rules: dict, cls: type):
    for klass in cls.__mro__:
        rule = rules.get(klass)
        if rule is not None:
            return rule
    return None


def _as_list(value) -> list:
    if value is None:
        return []
    if type(value) is list or type(value) is tuple:
        return [v for v in value if v is not None]
    return [value]


def _relevant(args: tuple, kwargs: dict) -> tuple:
    """What may carry a ``__torch_function__`` override: every argument, and the items of lists
    (tensors, tensor-likes such as fx proxies); ``(None,)`` when there is none, so modes still
    see a call without arguments."""
    found = []
    for value in (*args, *kwargs.values()):
        if type(value) is list or type(value) is tuple:
            found.extend(value)
        else:
            found.append(value)
    return tuple(found) or (None,)


def _tensors_of(args: tuple, kwargs: dict) -> list:
    found = []
    for value in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(value, TensorBase):
            found.append(value)
        elif type(value) is list or type(value) is tuple:
            found.extend(v for v in value if isinstance(v, TensorBase))
    return found


def _shares_memory(a: TensorBase, b: TensorBase) -> bool:
    x, y = a._data, b._data
    return type(x) is np.ndarray and type(y) is np.ndarray and np.may_share_memory(x, y)


def _wrapped(values):
    """Arrays (and lists of them) as tensors over the same data, for the user's functions."""
    for value in values:
        if type(value) is np.ndarray or type(value) is MetaArray:
            yield wrap_array(value)
        elif type(value) is list or type(value) is tuple:
            yield [wrap_array(v) if type(v) in (np.ndarray, MetaArray) else v for v in value]
        else:
            yield value


def _unwrapped(result):
    """A user function's result as the kernel-call site returns it: arrays for tensors."""
    if isinstance(result, TensorBase):
        return result._data
    if type(result) is list or type(result) is tuple:
        return type(result)(_unwrapped(r) for r in result)
    return result
