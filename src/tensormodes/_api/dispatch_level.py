"""Where a public call goes down to the dispatch level: autograd records on the outer tensors,
then the call continues below autograd as an ``OpOverload`` (``_dispatch.python_dispatch``).

Generated implementations (``codegen``) come here only when something listens below autograd
— a ``TorchDispatchMode`` is active or an argument's class has a ``__torch_dispatch__`` — so
the plain path never pays for it. ``below_autograd`` is the autograd level of such a call:

1. an op that PyTorch implements as a composite runs its decomposition (``op(decompose=)``),
   whose calls autograd records and the dispatch level sees one by one;
2. otherwise the call becomes its overload with schema-form arguments, runs through the modes,
   subclasses and kernel with grad mode off (below autograd nothing records), and autograd
   records the result against the call's own arguments — so a wrapper subclass gets its
   gradient, of its own type, from the formulas.

>>> import tensormodes as tm
>>> from tensormodes.utils._python_dispatch import TorchDispatchMode
>>> class Names(TorchDispatchMode):
...     def __init__(self):
...         self.seen = []
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         self.seen.append(str(func))
...         return func(*args, **(kwargs or {}))
>>> with Names() as names:
...     _ = tm.ones(2, 3).sum(1)
>>> names.seen
['aten.ones.default', 'aten.sum.dim_IntList']
"""

from __future__ import annotations

from contextvars import ContextVar

from .. import _generated
from .._autograd.grad_mode import BELOW_AUTOGRAD, grad_enabled, reset_grad_enabled, set_grad_enabled_raw
from .._autograd.graph import bump_version, inplace_view_node, record_inplace, record_inplace_view, share_version
from .._dispatch import aten, kernel_site, python_dispatch
from .._dispatch.python_dispatch import FORMULA_CALLS as _FORMULA_CALLS
from .._dispatch.python_dispatch import (
    after_modes,
    form_source,
    is_dispatch_class,
    schema_form,
    skip_top_mode,
    subclass_types,
)
from .._memory_format import strided
from .._ops import OpDef
from .._ops.registry import TensorKind
from .._overrides import dispatch as _overrides
from .._state import STATE as _STATE
from .._tensor_base import PLAIN, TensorBase, wrap_array
from .runtime import GENERATED_NAMES, wrap

__all__ = ["below_autograd", "by_position", "listens", "saving_impl", "correct_aliasing"]


_formula_calls = _FORMULA_CALLS.get
# While a direct call of an overload that autograd records runs as its public call: that overload,
# which ``below_autograd`` takes instead of picking one from the public arguments.
_WRITTEN: ContextVar = ContextVar("tensormodes_written_overload", default=None)


def listens(value) -> bool:
    """True if ``value`` (an argument: a tensor, a list of them) is a ``__torch_dispatch__``
    subclass instance, or holds one — generated code's per-argument test."""
    if isinstance(value, TensorBase):
        return is_dispatch_class(type(value))
    if type(value) is list or type(value) is tuple:
        return any(isinstance(item, TensorBase) and is_dispatch_class(type(item)) for item in value)
    return False


def below_autograd(entry: list, arguments: dict, out=None, composite: bool = True):
    """The call of op ``entry = [opdef, kind, recorder, overload, lane]`` with ``arguments``
    (public parameter name -> value, ``out=`` apart), when the dispatch level listens.
    ``overload`` is the op's only overload, found at the first call (False: it has several);
    ``lane`` what generated code calls with the arguments' values by position and ``out``:
    ``by_position`` until the first call, then the op's own code (``_lane``) or, for an op
    without one, ``_without_lane``. ``composite=False``: the decomposition has declined these
    arguments already."""
    opdef, kind, recorder, overload = entry[:4]
    if composite and opdef.decompose is not None and kind == "functional" and out is None:
        if entry[4] is by_position:  # a composite's lane too, made before its decomposition returns
            if overload is None:
                candidates = aten.overloads_of(opdef, kind)
                entry[3] = candidates[0] if len(candidates) == 1 else False
            entry[4] = _lane(entry) or _without_lane
        result = _decomposed(opdef, tuple(arguments.values()), recorder)
        if result is not NotImplemented:  # NotImplemented: the op itself, for these arguments
            return result
    if out is not None:
        kind = "out"
        overload = aten.overload_of(opdef, kind, arguments)
        arguments = {**arguments, "out": out}
    elif overload is None:
        candidates = aten.overloads_of(opdef, kind)
        overload = entry[3] = candidates[0] if len(candidates) == 1 else False
    if overload is False:
        overload = _overload_for(opdef, kind, arguments)
    if entry[4] is by_position and out is None:
        entry[4] = _lane(entry) or _without_lane  # the op's own code, from the next call on
    formula = _formula_calls()
    if formula is not None and kind == "functional":
        overload = aten.formula_overload(opdef, arguments, formula) or overload
    compiled = overload.__dict__.get("_form_code")
    if compiled is None or overload.__dict__.get("_alternatives"):
        args, kwargs = schema_form(overload, arguments)
    else:
        args, kwargs = compiled(arguments)
    grad = grad_enabled()
    records = False
    if grad and opdef.differentiable and not opdef.factory:
        for name in opdef.tensor_params:
            value = arguments[name]
            if getattr(value, "_requires_grad", False) or (type(value) is list or type(value) is tuple) and any(
                    getattr(v, "_requires_grad", False) for v in value):
                records = True
                break
    if kind == "out":
        if records:
            raise RuntimeError(f"{opdef.name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        return _below(overload, args, kwargs, grad, formula)
    if kind == "inplace" or opdef.mutates:
        if not records:
            return _below(overload, args, kwargs, grad, formula)
        target = next(iter(arguments.values()))
        box = []
        node = opdef.node(*arguments.values()) if callable(opdef.node) else opdef.node or opdef.name
        if kind == "inplace" and opdef.view:  # squeeze_, t_: the end of the chain changes the geometry
            record_inplace_view(inplace_view_node(opdef, node), opdef.grad, tuple(opdef.tensor_params), arguments,
                                target, lambda: box.append(_below(overload, args, kwargs, grad_enabled(), formula)))
            return box[0]
        record_inplace(node, opdef.grad, tuple(opdef.tensor_params), arguments, target,
                       lambda: box.append(_below(overload, args, kwargs, grad_enabled(), formula)),
                       opdef.save_only_for)
        return box[0]
    result = _below(overload, args, kwargs, grad, formula)
    if not records:
        if opdef.saves:
            result = result[0]
        if "requires_grad" in arguments and arguments["requires_grad"]:
            result._requires_grad = True
        return result
    if opdef.saves:
        saved = tuple(t._data for t in result[1:])
        return recorder(*arguments.values(), result[0], saved)
    return recorder(*arguments.values(), result)


def _overload_for(opdef: OpDef, kind: str, arguments: dict):
    """The overload of a call of an op with several: a direct call's own (``div.Scalar`` stays
    itself, not the ``div.Tensor`` of ``x.div(2)``), else the one its arguments fit."""
    written = _WRITTEN.get()
    if written is not None and written._opdef is opdef and written._kind == kind:
        _WRITTEN.set(None)  # (for this call only, not its inner calls; ``call_overload`` restores it)
        return written
    return aten.overload_of(opdef, kind, arguments)


def by_position(entry: list, *values):
    """``entry[4]`` until the op's first call below autograd: ``below_autograd`` of ``values``
    (the op's parameters in order, then ``out``), which makes the op's lane."""
    return below_autograd(entry, dict(zip(entry[0].signature.parameters, values)), values[-1])


def _without_lane(entry: list, *values):
    """``entry[4]`` of an op without a lane (see ``_lane``)."""
    return below_autograd(entry, dict(zip(entry[0].signature.parameters, values)), values[-1])


def _lane(entry: list):
    """``below_autograd`` for one op as generated straight-line code (``entry[4]``, which
    generated implementations call when set): its one overload's schema form inline, the
    requires-grad test over its tensor parameters, the recorder; a composite's decomposition
    first — for a functional, non-mutating op with one overload of its own; anything else
    (``out=``, a gradient formula's call reaching an overload only formulas reach) goes to
    ``below_autograd``, which it follows step by step. None when the op does not qualify."""
    opdef, kind, recorder, overload = entry[:4]
    if (kind != "functional" or overload in (None, False) or opdef.mutates
            or overload.__dict__.get("_alternatives") or overload._opdef is not opdef):
        return None
    # the values come by position (p0, p1, ...: no clash with a parameter's name)
    values = [f"p{k}" for k in range(len(opdef.signature.parameters))]
    read = dict(zip(opdef.signature.parameters, values))
    arguments = "{" + ", ".join(f"{name!r}: {value}" for name, value in read.items()) + "}"
    lines, names = form_source(overload, read)
    names.update({"_generic": below_autograd, "_below": _below, "_OVERLOAD": overload, "_rec": recorder,
                  "_formula_calls": _formula_calls, "_grad_enabled": grad_enabled, "_OPDEF": opdef,
                  "_decomposed": _decomposed, "_formula_overload": aten.formula_overload})
    given = "".join(v + ", " for v in values)
    body = []
    if opdef.decompose is not None:  # a composite: its decomposition, unless it declines these arguments
        body += ["if out is None:", f"    result = _decomposed(_OPDEF, ({given}), _rec)",
                 "    if result is not NotImplemented:", "        return result"]
    body += ["formula = _formula_calls()", "if out is not None:", f"    return _generic(entry, {arguments}, out)"]
    if aten.has_formula_forms(opdef):  # a gradient formula's call may reach another overload
        body += [f"if formula is not None and _formula_overload(_OPDEF, {arguments}, formula) is not None:",
                 f"    return _generic(entry, {arguments}, out, False)"]
    body += [*lines, "grad = _grad_enabled()"]
    first, saved = ("result[0]", ", tuple([t._data for t in result[1:]])") if opdef.saves else ("result", "")
    plain = _plain_test(opdef, read, names)
    records = opdef.differentiable and not opdef.factory and opdef.tensor_params and recorder is not None
    if records:
        terms = []
        for name in opdef.tensor_params:
            terms.append(f"getattr({read[name]}, '_requires_grad', False)")
            if opdef.tensor_params[name] in (TensorKind.TENSOR_LIST, TensorKind.ANY_LIST, TensorKind.INDEX):
                terms[-1] = f"_list_requires_grad({read[name]})"
        names["_list_requires_grad"] = _list_requires_grad
        if plain is not None:
            body.append(f"records = grad and ({' or '.join(terms)})")
        else:
            body += [f"if grad and ({' or '.join(terms)}):",
                     "    result = _below(_OVERLOAD, args, kwargs, True, formula)",
                     f"    return _rec({given}{first}{saved})"]
    if plain is not None:  # plain arguments under a mode that handles every op: ``_below`` inline
        names.update({"_get_state": _STATE.get, "_set_state": _STATE.set, "_reset_state": _STATE.reset,
                      "_set_grad": set_grad_enabled_raw, "_reset_grad": reset_grad_enabled,
                      "_BELOW_AUTOGRAD": BELOW_AUTOGRAD, "_set_formula": _FORMULA_CALLS.set,
                      "_reset_formula": _FORMULA_CALLS.reset, "_after_modes": after_modes})
        body += ["state = _get_state()",
                 f"if state is not None and state.inline_top is not None and {plain}:",
                 *("    " + line for line in _INLINE_BELOW),
                 "else:",
                 "    result = _below(_OVERLOAD, args, kwargs, grad, formula)"]
        if records:
            body += ["if records:", f"    return _rec({given}{first}{saved})"]
        body.append(f"return {first}")
        source = (f"def below_autograd(entry, {''.join(v + ', ' for v in values)}out):\n"
                  + "".join(f"    {line}\n" for line in body))
        label = f"{opdef.namespace}._below_{opdef.name}"
        return _generated.define(source, "below_autograd", names, qualname=f"_below_{opdef.name}", label=label)
    if opdef.saves or "requires_grad" in read:
        body.append("result = _below(_OVERLOAD, args, kwargs, grad, formula)")
        if opdef.saves:
            body.append("result = result[0]")
        if "requires_grad" in read:
            body += [f"if {read['requires_grad']}:", "    result._requires_grad = True"]
        body.append("return result")
    else:
        body.append("return _below(_OVERLOAD, args, kwargs, grad, formula)")
    source = (f"def below_autograd(entry, {''.join(v + ', ' for v in values)}out):\n"
              + "".join(f"    {line}\n" for line in body))
    label = f"{opdef.namespace}._below_{opdef.name}"
    return _generated.define(source, "below_autograd", names, qualname=f"_below_{opdef.name}", label=label)


# ``_below`` for plain arguments and a top mode that declared no ``handled_ops``, as lines of a
# lane (``result`` set from ``args`` and ``kwargs``; ``grad`` and ``formula`` as ``_below`` takes them).
_INLINE_BELOW = (
    "mode = state.inline_top",
    "popped = state._dispatch_popped",
    "if popped is False:",
    "    popped = state.dispatch_popped()",
    "grad_token = formula_token = None",
    "try:",
    "    if grad:",
    "        grad_token = _set_grad(_BELOW_AUTOGRAD)",
    "    if formula is not None:",
    "        formula_token = _set_formula(None)",
    "    token = None",
    "    try:",
    "        token = _set_state(popped)",
    "        result = mode.__torch_dispatch__(_OVERLOAD, (), args, kwargs)",
    "    finally:",
    "        if token is None:",
    "            _set_state(state)",
    "        else:",
    "            _reset_state(token)",
    "    if result is NotImplemented:",
    "        result = _after_modes(_OVERLOAD, args, kwargs, state, mode)",
    "finally:",
    "    if formula_token is not None:",
    "        _reset_formula(formula_token)",
    "    if grad_token is not None:",
    "        _reset_grad(grad_token)",
)


def _plain_test(opdef: OpDef, read: dict, names: dict) -> str | None:
    """The lane's test that ``_below`` would find no ``__torch_dispatch__`` subclass among the
    arguments (the handler's ``types`` is then ``()``, and no aliasing needs correcting): each
    tensor parameter a Tensor or Parameter (or None, or a number, where the parameter takes one),
    no other parameter a tensor. None for an op whose lane keeps calling ``_below`` (factories,
    whose formula calls ``_below`` rewrites, tensor lists, ``requires_grad=``)."""
    if opdef.factory or "requires_grad" in read:
        return None
    plain = GENERATED_NAMES["_T"], GENERATED_NAMES["_P"]
    names.update({"_T": plain[0], "_P": plain[1], "_TB": TensorBase, "_NUMBERS": _NUMBER_TYPES})
    terms = []
    for name, value in read.items():
        kind = opdef.tensor_params.get(name)
        if kind is None:
            terms.append(f"not isinstance({value}, _TB)")
        elif kind == TensorKind.TENSOR:
            terms.append(f"(type({value}) is _T or type({value}) is _P)")
        elif kind == TensorKind.OPTIONAL_TENSOR:
            terms.append(f"({value} is None or type({value}) is _T or type({value}) is _P)")
        elif kind in (TensorKind.TENSOR_OR_SCALAR, TensorKind.OPTIONAL_TENSOR_OR_SCALAR):
            terms.append(f"(type({value}) is _T or type({value}) is _P or type({value}) in _NUMBERS"
                         f"{f' or {value} is None' if kind == TensorKind.OPTIONAL_TENSOR_OR_SCALAR else ''})")
        else:
            return None
    return " and ".join(terms) if terms else "True"


_NUMBER_TYPES = frozenset({int, float, bool, complex})


def _list_requires_grad(value) -> bool:
    if getattr(value, "_requires_grad", False):
        return True
    return (type(value) is list or type(value) is tuple) and any(getattr(v, "_requires_grad", False) for v in value)


def _formula_options(kwargs: dict) -> dict:
    """A factory's keywords as PyTorch's C++ gradient formulas pass them: none of the options
    its Python binding always passes (``pin_memory=False``: ``grad.new_zeros(shape)`` shows
    ``{}``); given a dtype, a whole ``TensorOptions`` (``grad.options()``): dtype, layout
    ``strided``, device, in the schema's order, and no ``pin_memory``."""
    if "dtype" not in kwargs:
        if kwargs.get("pin_memory") is False:
            return {name: value for name, value in kwargs.items() if name != "pin_memory"}
        return kwargs
    options = {"dtype": kwargs["dtype"], "layout": kwargs.get("layout") or strided}
    if "device" in kwargs:
        options["device"] = kwargs["device"]
    for name, value in kwargs.items():
        if name not in options and name != "pin_memory":
            options[name] = value
    return options


def _below(overload, args: tuple, kwargs: dict, grad: bool = True, formula=None):
    """Run the chain with grad mode off (below autograd nothing records; ``grad``: it is on
    now) and ``FORMULA_CALLS`` clear (``formula``: it is set now — the handlers' own calls are
    user calls); a wrapper's result is made to alias as the op says (``correct_aliasing``).
    The top mode's handler is called here (``run_chain``'s first step, inline: every op under a
    dispatch mode comes this way)."""
    state = _STATE.get()
    plain = PLAIN.tensor
    grad_token = formula_token = None
    try:
        if grad:  # off for recording, still on for ``is_grad_enabled()`` (as a PyTorch handler sees it)
            grad_token = set_grad_enabled_raw(BELOW_AUTOGRAD)
        if formula is not None:
            formula_token = _FORMULA_CALLS.set(None)
            if kwargs and overload._opdef.factory:
                kwargs = _formula_options(kwargs)
        if state is not None and state.dispatch_active:
            mode = state.dispatch_modes[-1]
            popped = state._dispatch_popped
            if popped is False:
                popped = state.dispatch_popped()
            handled = state.dispatch_top_handled
            if handled is not None and overload.overloadpacket not in handled:
                result = skip_top_mode(overload, args, kwargs, state)
            else:
                types = ()
                for value in args:  # ``subclass_types`` inline for plain tensors, numbers and int lists
                    cls = type(value)
                    if cls is plain:
                        continue
                    if cls is list or cls is tuple:
                        for item in value:  # (``sum``'s dims, ``view``'s size: autograd's own calls)
                            if type(item) is not int:
                                break
                        else:
                            continue
                        types = subclass_types(args, kwargs)
                        break
                    if isinstance(value, TensorBase):
                        types = subclass_types(args, kwargs)
                        break
                else:
                    if kwargs:
                        types = subclass_types(args, kwargs)
                token = None
                try:
                    token = _STATE.set(popped)
                    result = mode.__torch_dispatch__(overload, types, args, kwargs)
                finally:
                    if token is None:
                        _STATE.set(state)
                    else:
                        _STATE.reset(token)
                if result is NotImplemented:
                    result = after_modes(overload, args, kwargs, state, mode)
        else:  # no mode listens: the subclasses, then the kernel
            result = after_modes(overload, args, kwargs, state, None)
    finally:
        if formula_token is not None:
            _FORMULA_CALLS.reset(formula_token)
        if grad_token is not None:
            reset_grad_enabled(grad_token)
    if args and type(args[0]) is not plain and isinstance(args[0], TensorBase) and is_dispatch_class(type(args[0])):
        return correct_aliasing(overload, args, kwargs, result)
    return result


def correct_aliasing(overload, args: tuple, kwargs: dict, out):
    """``out`` as ``overload`` says it aliases its inputs: an in-place op returns its input
    itself, an ``out=`` variant the ``out`` tensor, and a view's results share the input's
    version counter and know it as their base — whatever a wrapper's handler returned."""
    kind = overload._kind
    if kind == "inplace" or (kind == "functional" and overload._opdef.mutates):
        if out is not args[0]:
            bump_version(args[0])  # the handler wrote into the tensors it wraps
        return args[0]
    if kind == "out":
        return kwargs["out"]
    if overload.is_view:
        base = args[0]
        root = base if base._view_base is None else base._view_base
        for view in (out if isinstance(out, (list, tuple)) else (out,)):
            if isinstance(view, TensorBase) and view is not base and view._view_base is None:
                view._view_base = root
                root._has_views = True
                share_version(view, base)
    return out


def _decomposed(opdef: OpDef, values, recorder=None):
    """Run ``opdef``'s decomposition with ``__torch_function__`` handling off: a composite's
    inner calls are not public calls (PyTorch makes them in C++), but autograd and the dispatch
    level see each of them — but for an op declared ``fused_grad_products`` (given its
    ``recorder``) under modes that declared only products and convolutions (the state's
    ``dispatch_sees_autograd`` off): its gradient formula calls those as the decomposition's
    formulas do, so the decomposition runs with grad mode off and autograd records the op's own
    node, as with no mode (one node and one formula instead of several)."""
    state = _overrides.get_state()
    inner = _overrides.without_torch_function(state)
    fused = recorder is not None and opdef.fused_grad_products and state is not None and \
        not state.dispatch_sees_autograd and grad_enabled() and _plain_and_recording(opdef, values) and \
        (opdef.fused_grad_products is True or opdef.fused_grad_products(*values))
    token = grad_token = None
    try:
        token = _overrides.set_state(inner)
        if fused:
            grad_token = set_grad_enabled_raw(False)
        result = opdef.decompose(*values)
    finally:
        if grad_token is not None:
            reset_grad_enabled(grad_token)
        if token is None:
            _overrides.set_state(state)
        else:
            _overrides.reset_state(token)
    if not fused or result is NotImplemented:
        return result
    if result._view_base is not None:  # a view of the decomposition's own product: the op's fresh result
        result = wrap_array(result._data)
    return recorder(*values, result)


# op name -> the positions of its tensor parameters among its parameters
_TENSOR_POSITIONS: dict[str, tuple[int, ...]] = {}


def _plain_and_recording(opdef: OpDef, values) -> bool:
    """Whether the op's tensor arguments are all plain tensors (or None) and one requires grad."""
    positions = _TENSOR_POSITIONS.get(opdef.name)
    if positions is None:
        names = list(opdef.signature.parameters)
        positions = _TENSOR_POSITIONS[opdef.name] = tuple(names.index(name) for name in opdef.tensor_params)
    plain, recording = PLAIN.tensor, False
    for position in positions:
        value = values[position]
        if value is not None:
            if type(value) is not plain:
                return False
            recording = recording or value._requires_grad
    return recording


def saving_impl(opdef: OpDef):
    """The kernel of an op whose kernel returns intermediates for its backward (``saves=``):
    at the dispatch level they are outputs (``native_layer_norm`` returns mean and rstd)."""

    def run(*args, **kwargs):
        arrays = [a._data if isinstance(a, TensorBase) else a for a in args]
        keywords = {k: (v._data if isinstance(v, TensorBase) else v) for k, v in kwargs.items()}
        return wrap(kernel_site.call(opdef, *arrays, **keywords))

    return run


def call_overload(overload, args: tuple, kwargs: dict):
    """``overload(*args, **kwargs)`` with grad mode on: like PyTorch, an OpOverload called where
    autograd records (an argument requiring grad) goes through autograd first; below autograd —
    in a dispatch handler, where grad mode is off — it goes straight down the chain (``aten``'s
    ``OpOverload.__call__`` decides)."""
    # Checked against the schema here, where user code calls overloads (grad mode on); inside
    # handlers (grad mode off) the arguments come from the dispatch level itself, and a wrong
    # one still fails in the kernel with PyTorch's error (see python_dispatch.call_overload).
    if kwargs:
        args, kwargs = python_dispatch.normalized(overload, python_dispatch.bind(overload, args, kwargs))
        records = any(getattr(a, "_requires_grad", False) for a in args) or any(
            getattr(v, "_requires_grad", False) for v in kwargs.values())
    else:
        python_dispatch.check_positional(overload, args)
        if len(args) > overload._required_positional:  # trailing ones at their defaults are dropped
            args, kwargs = python_dispatch.as_dispatched(overload, args, kwargs)
        records = False
        for value in args:
            if getattr(value, "_requires_grad", False):
                records = True
                break
    opdef = overload._opdef
    # A factory (``new_empty``) or an op without gradients records nothing: it goes down the
    # chain as written, not in its public function's form (which adds ``pin_memory=False``).
    if records and grad_enabled() and not opdef.factory and opdef.differentiable is not False:
        args, kwargs = python_dispatch.public_call(overload, args, kwargs, checked=True)  # (checked above)
        if opdef.saves and overload._kind == "functional":
            # The recorded output, and the intermediates the overload also returns (computed
            # again: this form is only met when user code calls such an overload with grad on).
            recorded = python_dispatch.HOOKS.impl_of(opdef, "recording")(*args, **kwargs)
            return (recorded, *python_dispatch.HOOKS.impl_of(opdef, "functional")(*args, **kwargs)[1:])
        if overload._spec.formula and _formula_calls() is None:
            # An overload only C++ calls reach (``mul.Scalar``: a number as a Scalar), called by
            # name (a composite written as PyTorch's C++): below autograd it is that overload still
            token = _FORMULA_CALLS.set(())
            try:
                return python_dispatch.HOOKS.impl_of(opdef, overload._kind)(*args, **kwargs)
            finally:
                _FORMULA_CALLS.reset(token)
        token = _WRITTEN.set(overload)
        try:
            return python_dispatch.HOOKS.impl_of(opdef, overload._kind)(*args, **kwargs)
        finally:
            _WRITTEN.reset(token)
    return python_dispatch.call_overload(overload, args, kwargs)


def below(overload, args: tuple, kwargs: dict):
    """``HOOKS.below``: ``overload`` on schema-form arguments with autograd done (grad mode and
    ``FORMULA_CALLS`` as they are now), as a lane does after its schema form."""
    return _below(overload, args, kwargs, grad_enabled(), _formula_calls())


python_dispatch.HOOKS.call = call_overload
python_dispatch.HOOKS.below = below
python_dispatch.HOOKS.decompose = lambda opdef, args, kwargs: opdef.decompose(*args, **kwargs)
