"""The backward graph: nodes recorded by operations, saved tensors, version counters.

This layer sits below the override layer: it knows tensors as the bare ``TensorBase``
(bookkeeping — aliases, copies, seeds of ones — goes through the bottom layer's helpers,
never through public calls, so modes see only real math), and gradient formulas call
public ops, so modes see them and they are themselves recorded when ``create_graph=True``.

>>> import tensormodes as tm
>>> x = tm.ones(2, requires_grad=True)
>>> y = (x * 2).exp()
>>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
('ExpBackward0', 'MulBackward0')
"""

from __future__ import annotations

import inspect
from contextvars import ContextVar

from .. import _dtype as dt
from .. import _generated
from .._dispatch.aten import aten
from .._dispatch.python_dispatch import HOOKS, is_dispatch_class
from .._memory_format import contiguous_format, strided
from .._meta_array import MetaArray, contiguous_strides
from .._ops.common import FORMULA_HOOKS, ops
from .._ops.registry import TensorKind
from .._state import STATE
from .._symbolic import SymBool, SymFloat, SymInt
from .._tensor_base import PLAIN, TensorBase, copy_detached, meta_of, wrap_array
from .grad_mode import grad_enabled
from .nodes import (
    AccumulateGrad,
    Node,
    alias,
    bump_version,
    differentiable_tensor,
    grad_edge,
    next_sequence_nr,
    saved_properties,
    share_version,
    version_of,
)
from .view_history import rebase, refresh_view, refresh_views_of

__all__ = ["Node", "AccumulateGrad", "record", "record_inplace", "record_inplace_view", "inplace_view_node",
           "first_grad_below",
           "needs_grad", "bump_version",
           "share_version", "version_of", "saving_for_backward"]

_BFLOAT16 = dt.bfloat16._np


def _freed_error() -> RuntimeError:
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors after "
        "they have already been freed). Saved intermediate values of the graph are freed when you call "
        ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
        "graph a second time or if you need to access saved tensors after calling backward.")


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    A saved *output* keeps only its array (saving the tensor itself would make a
    cycle node -> output -> node) and is rebuilt on unpack.
    """

    __slots__ = ("_tensor", "_version", "_counter", "_producer", "_output_nr", "_is_output", "_detached")

    def __init__(self, t, is_output: bool, output_nr: int = 0) -> None:
        attributes = t.__dict__
        counter = attributes.get("_version_counter")  # version_counter(t), inline: saved per op
        if counter is None:
            counter = t._version_counter = [0]
        self._counter = counter
        self._version = counter[0]
        self._is_output = is_output
        self._detached = False
        if is_output:
            if type(t) is PLAIN.tensor and not below_listens(t):
                self._tensor = t._data
            else:
                # A subclass output (or any, while the dispatch level listens) is kept as its
                # detached alias, as PyTorch's SavedVariable does: the dispatch level sees the
                # detach here and on unpack, and a wrapper stays a wrapper.
                self._tensor = _saved_alias(t)
                self._detached = True
            self._output_nr = output_nr
            self._producer = None
        else:
            self._tensor = t
            self._output_nr = attributes.get("_output_nr", 0)
            self._producer = t._grad_fn  # named in the error if t is modified in place before backward

    def unpack(self, node: Node):
        t = self._tensor
        if t is None:
            raise _freed_error()
        if self._counter[0] != self._version:
            if self._version < 0:  # packed by saved-tensor hooks (saved_hooks.py), never version-checked
                return t.unpack(self, node)
            self._raise_modified(node)
        if self._is_output:
            output = _saved_alias(t) if self._detached else wrap_array(t)
            output._version_counter = self._counter
            if grad_enabled():  # double backward: the output is differentiable, produced by this node
                output._requires_grad = True
                output._grad_fn = node
                if self._output_nr:
                    output._output_nr = self._output_nr
            return output
        return t

    def _raise_modified(self, node: Node):
        if self._is_output:
            array = self._tensor._data if self._detached else self._tensor
            producer, shape, type_name = node.name(), array.shape, _type_name(array)
        else:
            producer = None if self._producer is None else self._producer.name()
            shape, type_name = meta_of(self._tensor)[0], self._tensor.type()
        raise RuntimeError(
            f"one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{type_name} {list(shape)}]"
            + (f", which is output {self._output_nr} of {producer}," if producer else "")
            + f" is at version {self._counter[0]}; expected version {self._version} instead. Hint: the "
            f"backtrace further above can point at the operation that failed to compute its gradient.")

    def release(self) -> None:
        self._tensor = None


# True while autograd makes a saved tensor's alias (per thread and task).
_SAVING: ContextVar[bool] = ContextVar("tensormodes_saving_for_backward", default=False)


def _saved_alias(t):
    """The detached alias a saved output is kept as (and unpacked to), made with
    ``saving_for_backward()`` true."""
    token = _SAVING.set(True)
    try:
        return ops.detach(t)
    finally:
        _SAVING.reset(token)


def saving_for_backward() -> bool:
    """True while autograd makes a saved tensor's detached alias (when saving an output, and
    unpacking it in backward). PyTorch's ``SavedVariable`` makes these aliases with the
    dispatch level seeing a ``detach`` its ``DebugMode`` leaves out of the log; tools here do
    the same, and know the alias as the tensor it was made from."""
    return _SAVING.get()


_ATEN_OVERLOADS: dict = {}


def aten_overload(packet: str, overload: str):
    """``aten.<packet>.<overload>`` (cached: autograd's own calls at the dispatch level name them)."""
    found = _ATEN_OVERLOADS.get((packet, overload))
    if found is None:
        found = _ATEN_OVERLOADS[packet, overload] = getattr(getattr(aten, packet), overload)
    return found


def below_listens(t) -> bool:
    """True if the dispatch level would see an op on ``t``: a dispatch mode is active, or ``t``
    is a ``__torch_dispatch__`` subclass instance. Autograd's own tensors (the seed, ``.grad``,
    saved outputs) are then made with public ops, so the dispatch level sees them as PyTorch's."""
    state = STATE.get()
    if state is not None and state.dispatch_active and state.dispatch_sees_autograd:
        return True  # (not for modes that declared only ops none of those forms involves)
    return type(t) is not PLAIN.tensor and is_dispatch_class(type(t)) and (state is None or state.dispatch_enabled)


FORMULA_HOOKS.listens = below_listens  # (gradient formulas ask it through the op table's helpers)


def _type_name(array) -> str:
    return wrap_array(array).type()


class _SavedSequence:
    """A list or (named) tuple of arguments some of which are saved tensors."""

    __slots__ = ("_items", "_kind")

    def __init__(self, items: list, kind: type) -> None:
        self._items = items
        self._kind = kind

    def unpack(self, node: Node):
        items = [v.unpack(node) if type(v) is SavedTensor else v for v in self._items]
        kind = self._kind
        if kind is list:
            return items
        return kind(*items) if hasattr(kind, "_fields") else kind(items)


# Keyed by node name and formula: ops sharing a node name (``_cross_entropy_loss`` records
# ``NllLossBackward0``, as ``nll_loss`` does) get classes of that name each, as each class's
# ``apply`` is specialised for its op's formula.
_NODE_CLASSES: dict[tuple[str, object], type] = {}


def _node_class(op_name: str, formula) -> type:
    cls = _NODE_CLASSES.get((op_name, formula))
    if cls is None:
        # An op's method form has the op's node (permute_method -> PermuteBackward0). Parts are
        # title-cased as PyTorch's codegen does: a letter after a digit is a capital too
        # (log1p -> Log1PBackward0, avg_pool2d -> AvgPool2DBackward0). "sum#1" names the node of
        # another overload of the op, as PyTorch numbers them (sum.dim_IntList -> SumBackward1);
        # "permute/copy" a node PyTorch suffixes (permute_copy -> PermuteBackward0_copy).
        base, _, suffix = op_name.partition("/")
        name, _, overload = base.partition("#")
        camel = "".join(part.title() for part in name.strip("_").removesuffix("_method").split("_"))
        attributes = {"__module__": __name__, "_plain_outputs": _plain_outputs(formula),
                      "_wraps_numbers": name in WRAPPED_NUMBER_OPS,
                      **saved_properties(tuple(inspect.signature(formula).parameters), _freed_error)}
        cls = _NODE_CLASSES[op_name, formula] = type(f"{camel}Backward{overload or 0}{'_' * bool(suffix)}{suffix}",
                                                     (OpBackward,), attributes)
    return cls


def _plain_outputs(formula) -> frozenset:
    """The outputs of a formula's op that PyTorch does not differentiate (``common.output_differentiability``)."""
    flags = getattr(formula, "output_differentiability", ())
    return frozenset(i for i, differentiable in enumerate(flags) if not differentiable)


_NO_EDGE = (None, 0)
_NUMBERS = frozenset({int, float, complex, bool, SymInt, SymFloat, SymBool})  # (unbacked ones too: make_fx)
# Ops whose Python-number operands PyTorch wraps as tensors (``x * 2`` is ``mul.Tensor``
# with a wrapped number) and whose nodes save them (MulBackward0, DivBackward0): the number
# is freed after backward like a saved tensor, so a second backward raises. Other ops take
# numbers as Scalars (``lerp.Scalar``, ``fmod.Scalar``) that are never freed.
WRAPPED_NUMBER_OPS = {"mul", "div", "true_divide"}


class OpBackward(Node):
    """Backward of an op from the op table: runs its declared gradient formula.

    The formula receives the output gradient (``grad``, a tuple for ops with
    several outputs), the output (``result``) and the op's arguments by name,
    and returns one gradient (or None) per tensor parameter.
    """

    def __init__(self, plan: _Plan, arguments: list, saved_at: tuple[int, ...], edges: tuple, fits: tuple) -> None:
        self._sequence_nr = next_sequence_nr()
        self._plan = plan
        self._arguments = arguments  # in the formula's parameter order (the gradient's place left empty)
        self._saved_at = saved_at  # positions of saved tensors among the arguments
        self.next_functions = edges
        self._fits = fits  # per input: (shape, NumPy dtype) its gradient must have, or None

    _nested = False  # True when a tensor parameter was a list (its gradients come nested)
    _plain_outputs: frozenset = frozenset()  # outputs without history (see _plain_outputs)

    _wraps_numbers = False  # an op of WRAPPED_NUMBER_OPS

    def wrapped_numbers(self) -> tuple:
        """The numbers the forward call gave for tensor parameters of an op that wraps them
        (``x * 2``): PyTorch's formula gets them as tensors, not as Scalars (as ``pow``'s exponent)."""
        if not self._wraps_numbers:
            return ()
        arguments = self._arguments or ()
        return tuple(value for value, kind in zip(arguments, self._plan.kinds)
                     if kind == _TENSOR_PARAM and type(value) in _NUMBERS)

    def apply(self, grads: tuple) -> tuple:
        plan = self._plan
        if self._arguments is None:
            raise _freed_error()
        values = self._arguments.copy()
        for i in self._saved_at:
            value = values[i]
            if type(value) is SavedTensor or type(value) is _SavedSequence:  # (a saved number stays as it is)
                values[i] = value.unpack(self)
        if plan.grad >= 0:
            values[plan.grad] = grads if len(grads) > 1 else grads[0]
        keywords = plan.keywords
        result = plan.formula(*values) if keywords is None else plan.formula(**dict(zip(keywords, values)))
        if type(result) is not tuple:
            result = tuple(result) if isinstance(result, list) else (result,)
        if self._nested:  # a list input's gradients come as one nested sequence
            result = [g for value in result
                      for g in (value if type(value) is tuple or type(value) is list else (value,))]
        return _fitted(result, self._fits)

    def release(self) -> None:
        if self._saved_at:  # dropping the arguments frees the saved tensors
            self._arguments = None


def _fitted(result, fits: tuple) -> tuple:
    """A formula's gradients, each summed and cast to its input's shape and dtype (None where
    the input needs none)."""
    fitted = []
    for grad, fit in zip(result, fits):
        if grad is None or fit is None:
            fitted.append(None)
        elif type(grad) is PLAIN.tensor and grad._data.shape == fit[0] and grad._data.dtype is fit[1]:
            fitted.append(grad)
        else:
            fitted.append(_fit(grad, fit))
    return tuple(fitted)


def _fit(grad, fit: tuple):
    """Sum a broadcast gradient back to its input's shape and cast it to the input's dtype."""
    shape, np_dtype = fit
    grad_shape, grad_dtype = meta_of(grad)
    if grad_shape != shape:
        grad = sum_to_shape(grad, grad_shape, shape)
    dtype = dt.NP_TO_DTYPE[np_dtype]
    if grad_dtype is not dtype:
        if grad_dtype.is_complex and not dtype.is_complex:
            grad = grad.real  # a real input's gradient is the real part
        grad = grad.to(dtype)
    return grad


def sum_to_shape(grad, grad_shape: tuple, shape: tuple):
    """``grad`` summed over the dimensions broadcasting added or expanded to reach ``shape``."""
    extra = len(grad_shape) - len(shape)
    if extra < 0:
        raise RuntimeError(f"gradient of shape {list(grad_shape)} cannot be reduced to shape {list(shape)}")
    if not shape:  # to a scalar: one full sum (PyTorch's sum_to too)
        return grad.sum()
    listens = below_listens(grad)
    if extra and grad_shape[extra:] == shape and not listens:
        # Only leading dimensions to drop (a bias): one sum, no reshape. (PyTorch's sum_to keeps
        # the dimensions and views the result: the dispatch level sees that.)
        return grad.sum(0) if extra == 1 else grad.sum(list(range(extra)))
    dims = list(range(extra))
    dims += [extra + i for i, size in enumerate(shape) if size == 1 and grad_shape[extra + i] != 1]
    if listens and type(grad) is PLAIN.tensor and not grad_enabled():
        # PyTorch's sum_to as the dispatch level sees it, its ops handed to it directly (nothing
        # records: the public calls' forms and lanes would only arrive at the same calls)
        if dims:
            grad = HOOKS.below(aten_overload("sum", "dim_IntList"), (grad, dims, True), {})
        if extra and type(grad) is PLAIN.tensor and grad.is_contiguous():
            return HOOKS.below(aten_overload("view", "default"), (grad, list(shape)), {})
        dims = ()
    if dims:
        grad = grad.sum(dims, keepdim=True)
    if extra:
        grad = grad.view(shape) if grad.is_contiguous() else grad.reshape(shape)
    return grad


# -- recording ------------------------------------------------------------------------------------

def needs_grad(tensors) -> bool:
    """True if one of ``tensors`` (lists looked into) requires grad and grad mode is on."""
    for t in tensors:
        if isinstance(t, (list, tuple)):
            if any(getattr(x, "_requires_grad", False) for x in t):
                return grad_enabled()
        elif getattr(t, "_requires_grad", False):
            return grad_enabled()
    return False


# How each formula parameter is filled at record time.
_GRAD_PARAM, _RESULT_PARAM, _TENSOR_PARAM, _VALUE_PARAM, _META_PARAM, _NEEDS_PARAM, _SAVED_PARAM = range(7)
NEEDS_PARAM = _NEEDS_PARAM  # (the engine narrows a node's ``needs_input_grad`` for ``autograd.grad``)
# ``result1`` (``result0`` ...): one output of an op with several, saved alone: a formula needing only
# ``sort``'s indices keeps no values (PyTorch's nodes save only the outputs their formulas use).
_RESULT_PART = 7


def _output_index(name: str) -> int | None:
    """The output a formula parameter ``result<i>`` names (None for other names)."""
    return int(name[6:]) if name.startswith("result") and name[6:].isdigit() else None


class _Plan:
    """How one op's formula is fed, worked out once per op from the formula's signature."""

    __slots__ = ("formula", "names", "kinds", "keywords", "grad")

    def __init__(self, formula, tensor_params: tuple[str, ...], arguments: dict, saves: tuple[str, ...] = ()) -> None:
        parameters = inspect.signature(formula).parameters.values()
        self.formula = formula
        self.names = tuple(p.name for p in parameters)
        positional = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)
        self.keywords = None if positional else self.names  # None: called positionally (faster)
        self.kinds = tuple(
            _GRAD_PARAM if name == "grad" else _RESULT_PARAM if name == "result"
            else _RESULT_PART if _output_index(name) is not None
            else _NEEDS_PARAM if name == "needs_input_grad" else _SAVED_PARAM if name in saves
            else _TENSOR_PARAM if name in tensor_params else _VALUE_PARAM if name in arguments
            else _META_PARAM for name in self.names)
        self.grad = self.kinds.index(_GRAD_PARAM) if _GRAD_PARAM in self.kinds else -1


_PLANS: dict[str, _Plan] = {}


def _plan(op_name: str, formula, tensor_params: tuple[str, ...], arguments: dict) -> _Plan:
    plan = _PLANS[op_name] = _Plan(formula, tensor_params, arguments)
    return plan


def _edge_and_fit(item, edges: list, fits: list) -> None:
    if isinstance(item, TensorBase) and item._view_base is not None:
        refresh_view(item)
    if isinstance(item, TensorBase) and item._requires_grad:
        node = item._grad_fn
        edges.append((node, item._output_nr) if node is not None else grad_edge(item))
        data = item._data
        fits.append((data.shape, data.dtype))
    else:
        edges.append(_NO_EDGE)
        fits.append(None)


def record(op_name: str, formula, tensor_params: tuple[str, ...], arguments: dict, result,
           save_only_for: dict[str, str] | None = None):
    """Attach a backward node for one call of op ``op_name`` to its (wrapped) result.

    The general form: generated code calls the per-op ``make_recorder`` functions, which
    do the same for ops without list or index parameters.
    """
    edges, fits = [], []
    needs = []  # per tensor parameter: does some tensor in it need a gradient (needs_input_grad)
    nested = False
    for name in tensor_params:
        value = arguments[name]
        if value is result:
            return result  # the op returned its input itself (contiguous()): nothing happened
        count = len(fits)
        if type(value) is list or type(value) is tuple:
            nested = True
            for item in value:
                _edge_and_fit(item, edges, fits)
        else:
            _edge_and_fit(value, edges, fits)
        needs.append(any(fit is not None for fit in fits[count:]))
    if formula is None:
        raise RuntimeError(f"the derivative for '{op_name}' is not implemented")
    plan = _PLANS.get(op_name)
    if plan is None or plan.formula is not formula:
        plan = _plan(op_name, formula, tensor_params, arguments)
    saved = []
    positions = []
    for i, (name, kind) in enumerate(zip(plan.names, plan.kinds)):
        if kind == _VALUE_PARAM:
            saved.append(arguments[name])
            continue
        if kind == _TENSOR_PARAM:
            value = arguments[name]
            if save_only_for and name in save_only_for and not needs[tensor_params.index(save_only_for[name])]:
                saved.append(None if isinstance(value, TensorBase) else value)  # its one use is not wanted
                continue
            value = SavedTensor(value, False) if isinstance(value, TensorBase) else _save(value)
        elif kind == _GRAD_PARAM:
            saved.append(None)  # filled in by apply
            continue
        elif kind == _NEEDS_PARAM:
            saved.append(tuple(needs))
            continue
        elif kind == _RESULT_PARAM:
            if save_only_for and "result" in save_only_for and not needs[tensor_params.index(save_only_for["result"])]:
                saved.append(None)  # the output is saved only for that input's gradient (see make_recorder)
                continue
            selector = getattr(formula, "result_saved", None)
            value = save_result(result, True if selector is None else selector(*arguments.values()))
            if value is None:
                saved.append(None)
                continue
        elif kind == _RESULT_PART:
            index = _output_index(name)
            value = SavedTensor(result[index], False) if index in _plain_outputs(formula) else \
                _save_output(result, index)
        else:
            value = _savemeta_of(name, arguments)
        saved.append(value)
        if type(value) is SavedTensor or type(value) is _SavedSequence or (
                kind == _TENSOR_PARAM and type(value) in _NUMBERS and op_name in WRAPPED_NUMBER_OPS):
            positions.append(i)
    cls = _NODE_CLASSES.get((op_name, formula)) or _node_class(op_name, formula)
    node = cls(plan, saved, tuple(positions), tuple(edges), tuple(fits))
    if nested:
        node._nested = True
    if type(result) is PLAIN.tensor and (result._data.dtype.kind in "fc" or differentiable_tensor(result)):
        result._requires_grad = True
        result._grad_fn = node
    else:
        _mark_outputs(result, node)
    return result


def _mark_outputs(result, node) -> None:
    """Give the differentiable outputs of ``result`` their history (``node``)."""
    if isinstance(result, tuple):
        plain = node._plain_outputs
        # Outputs that receive no gradient get zeros (see engine._before_node).
        if len(result) > 1:
            node._output_meta = [meta_of(o) if isinstance(o, TensorBase) and differentiable_tensor(o) and i not in plain
                                 else (None, None) for i, o in enumerate(result)]
            node._special = True
        for i, out in enumerate(result):
            if isinstance(out, TensorBase) and differentiable_tensor(out) and i not in plain:
                out._requires_grad = True
                out._grad_fn = node
                if i:
                    out._output_nr = i
    elif isinstance(result, TensorBase) and differentiable_tensor(result):
        result._requires_grad = True
        result._grad_fn = node


# Tensor parameter kinds a generated recorder handles (lists and indices go through ``record``).
_SIMPLE_KINDS = frozenset({"tensor", "optional_tensor", "tensor_or_scalar", "optional_tensor_or_scalar"})


def make_recorder(op_name: str, formula, tensor_params: dict[str, str], param_names: tuple[str, ...],
                  saves: tuple[str, ...] = (), save_only_for: dict[str, str] | None = None, view: bool = True,
                  differentiable=None, node_name=None):
    """``record`` specialised for one op: a generated function taking the op's arguments
    positionally, then the result. Same effect as ``record``, without its loops and dicts
    (it runs for every call on tensors that require grad). Only a ``view`` op can return
    its input itself (``contiguous()``), so only its recorder checks for that. A
    ``differentiable`` function, given the arguments, says whether to record this call. A
    ``node_name`` function, given them, names each call's node (``linear``: ``AddmmBackward0`` or
    ``MmBackward0`` ... as PyTorch's composite ends); ``op_name`` names it otherwise.

    The recorder's source is written in three parts: the edges (where each input's gradient
    goes), the node's arguments (what is saved for the formula), and the node's creation."""
    if formula is None or not set(tensor_params.values()) <= _SIMPLE_KINDS:
        return _generic_recorder(op_name, formula, tensor_params, param_names, saves, save_only_for,
                                 differentiable, node_name)
    plan = _Plan(formula, tuple(tensor_params), dict.fromkeys(param_names), saves)
    lines = []
    if differentiable is not None:
        lines += [f"if not _differentiable_call({', '.join(param_names)}):",
                  "    return result  # a call the op does not differentiate: no history"]
    lines += _edge_lines(tensor_params, view)
    edges = "".join(f"_e_{name}, " for name in tensor_params)
    fits = "".join(f"_f_{name}, " for name in tensor_params)
    arguments, positions = _node_arguments(op_name, plan, tensor_params, param_names, saves, save_only_for)
    selected = getattr(formula, "result_saved", None)  # the result saved, or parts of it, per call
    optional_result = bool(save_only_for) and "result" in save_only_for or selected is not None
    node_class = f"_node_for({', '.join(param_names)})" if node_name is not None else "_Node"
    listed = f"[{', '.join(arguments)}]"
    if selected is not None:  # the positions saved depend on what was: the list first
        lines.append(f"_arguments = {listed}")
        listed = "_arguments"
    lines += [f"node = {node_class}(_PLAN, {listed}, {positions}, ({edges}), ({fits}))",
              "if type(result) is _Tensor and (result._data.dtype.kind in 'fc' or _differentiable(result)):",
              "    result._requires_grad = True",
              "    result._grad_fn = node",
              "else:",
              "    _mark_outputs(result, node)",
              "return result"]
    body = "\n".join("    " + line for line in lines)
    recorder_name = f"_record_{op_name.replace('#', '_').replace('/', '_')}"
    source = f"def {recorder_name}({', '.join(param_names)}, result, _saved=()):\n{body}\n"
    namespace = {"_Tensor": PLAIN.tensor, "_NO_EDGE": _NO_EDGE, "_SavedTensor": SavedTensor,
                 "_save_outputs": _save_outputs, "_save_output": _save_output, "_grad_edge": grad_edge,
                 "_save_result": save_result, "_result_saved": selected,
                 "_PLAN": plan,
                 "_Node": _node_class(op_name, formula), "_differentiable": differentiable_tensor,
                 "_mark_outputs": _mark_outputs, "_NP_TO_DTYPE": dt.NP_TO_DTYPE, "_as_tensor": wrap_array,
                 "_refresh_view": refresh_view, "_differentiable_call": differentiable, "_NUMBERS": _NUMBERS,
                 "_FITS": _FITS, "_fit_of": _fit_of, "_NEEDS": _needs_table(len(tensor_params))}
    if node_name is not None:
        def node_for(*values):
            cls = _node_class(node_name(*values), formula)
            if "apply" not in cls.__dict__:
                cls.apply = _make_apply(cls.__name__, plan, len(tensor_params), optional_result)
            return cls
        namespace["_node_for"] = node_for
    recorder = _generated.define(source, recorder_name, namespace, label=f"autograd.{recorder_name}")
    node_class = namespace["_Node"]
    node_class.apply = _make_apply(node_class.__name__, plan, len(tensor_params), optional_result)
    return recorder


# One shared tuple per (shape, dtype) a gradient is fitted to, and per needs_input_grad value: a
# recorded op keeps these instead of new tuples, so a graph holds fewer objects for the cyclic
# garbage collector to count and walk (which otherwise runs through long graphs, as an RNN's).
_FITS: dict[tuple, tuple] = {}
_MOST_FITS = 4096  # new shapes past this many start the table afresh (a program of ever-new shapes)
_MOST_NEEDS_BITS = 8
# needs_input_grad for up to 8 tensor parameters, indexed by its bits (parameter i is bit i)
_NEEDS = [tuple(bool(bits >> i & 1) for i in range(_MOST_NEEDS_BITS)) for bits in range(1 << _MOST_NEEDS_BITS)]


def _needs_table(count: int) -> list:
    """The needs_input_grad tuples of an op with ``count`` tensor parameters, by their bits."""
    return [flags[:count] for flags in _NEEDS[:1 << min(count, _MOST_NEEDS_BITS)]]


def _fit_of(fit: tuple) -> tuple:
    if len(_FITS) >= _MOST_FITS:
        _FITS.clear()
    return _FITS.setdefault(fit, fit)


def _generic_recorder(op_name, formula, tensor_params, param_names, saves, save_only_for, differentiable,
                      node_name):
    """The recorder of an op whose parameters the generated one does not handle (lists, indices)
    or without a formula: ``record`` itself, with its loops."""
    if node_name is not None:
        raise ValueError(f"op {op_name!r}: a node named per call needs a gradient formula and plain tensor "
                         f"parameters")
    if saves:
        raise ValueError(f"op {op_name!r}: saves= needs a gradient formula and plain tensor parameters")

    def generic(*values):
        if differentiable is not None and not differentiable(*values[:-1]):
            return values[-1]
        return record(op_name, formula, tuple(tensor_params), dict(zip(param_names, values)), values[-1],
                      save_only_for)
    return generic


def _edge_lines(tensor_params: dict[str, str], view: bool) -> list[str]:
    """Source setting ``_e_<param>`` (the input's edge, or ``_NO_EDGE``) and ``_f_<param>`` (its
    shape and dtype, to fit its gradient; None when it needs none) for each tensor parameter."""
    lines = []
    for name, kind in tensor_params.items():
        if view:
            lines += [f"if {name} is result:",
                      "    return result  # the op returned its input itself: nothing happened"]
        # A "tensor" parameter holds a tensor by now: the kernel call unwrapped it.
        is_tensor = "" if kind == TensorKind.TENSOR else f"isinstance({name}, _Tensor) and "
        lines += [f"if {is_tensor}{name}._requires_grad:",
                  f"    if {name}._view_base is not None and {name}._history_gen != {name}._view_base._history_gen:",
                  f"        _refresh_view({name})",
                  f"    _node = {name}._grad_fn",
                  "    if _node is None:",
                  f"        _node = {name}._grad_accumulator or _grad_edge({name})[0]",
                  f"    _e_{name} = (_node, {name}._output_nr)",
                  f"    _f_{name} = ({name}._data.shape, {name}._data.dtype)",
                  f"    _f_{name} = _FITS.get(_f_{name}) or _fit_of(_f_{name})",
                  "else:",
                  f"    _e_{name} = _NO_EDGE",
                  f"    _f_{name} = None"]
    return lines


def _node_arguments(op_name: str, plan: _Plan, tensor_params: dict[str, str], param_names: tuple[str, ...],
                    saves: tuple[str, ...], save_only_for: dict[str, str] | None) -> tuple[list[str], str]:
    """Source of the node's arguments, one per formula parameter, and of the positions among them
    that hold saved tensors (fixed ones, plus those saved only when a condition holds)."""
    wraps = op_name in WRAPPED_NUMBER_OPS
    arguments, fixed_saved, maybe_saved = [], [], []
    for i, (name, kind) in enumerate(zip(plan.names, plan.kinds)):
        if kind == _GRAD_PARAM:
            arguments.append("None")  # filled in by apply
        elif kind == _NEEDS_PARAM:
            if len(tensor_params) <= _MOST_NEEDS_BITS:  # a shared tuple, picked by its bits
                bits = " + ".join(f"{1 << i} * ({'_f_' + param} is not None)" for i, param in enumerate(tensor_params))
                arguments.append(f"_NEEDS[{bits}]" if tensor_params else "()")
            else:
                arguments.append("(" + "".join(f"_f_{param} is not None, " for param in tensor_params) + ")")
        elif kind == _RESULT_PARAM:
            saving = "(_SavedTensor(result, True) if type(result) is _Tensor else _save_outputs(result))"
            if getattr(plan.formula, "result_saved", None) is not None:  # what is saved depends on the call
                if save_only_for and "result" in save_only_for:
                    raise ValueError(f"op {op_name!r}: a formula's result_saved= and save_only_for['result'] "
                                     "exclude each other")
                arguments.append(f"_save_result(result, _result_saved({', '.join(param_names)}))")
                maybe_saved.append((i, f"_arguments[{i}] is not None"))
            elif save_only_for and "result" in save_only_for:  # saved only for that input's gradient
                wanted = f"_f_{save_only_for['result']} is not None"
                arguments.append(f"({saving} if {wanted} else None)")
                maybe_saved.append((i, wanted))
            else:
                arguments.append(saving)
                fixed_saved.append(i)
        elif kind == _RESULT_PART:
            index = _output_index(name)
            plain = index in _plain_outputs(plan.formula)
            arguments.append(f"_SavedTensor(result[{index}], False)" if plain else f"_save_output(result, {index})")
            fixed_saved.append(i)
        elif kind == _TENSOR_PARAM and save_only_for and name in save_only_for:
            wanted = f"_f_{save_only_for[name]} is not None"
            arguments.append(f"((_SavedTensor({name}, False) if {wanted} else None) if isinstance({name}, _Tensor) "
                             f"else {name})")
            saved_if = f"isinstance({name}, _Tensor)" + (f" or type({name}) in _NUMBERS" if wraps else "")
            maybe_saved.append((i, f"{wanted} and ({saved_if})"))
        elif kind == _TENSOR_PARAM:
            if tensor_params[name] == TensorKind.TENSOR:
                arguments.append(f"_SavedTensor({name}, False)")
                fixed_saved.append(i)
            else:
                arguments.append(f"(_SavedTensor({name}, False) if isinstance({name}, _Tensor) else {name})")
                maybe_saved.append((i, f"isinstance({name}, _Tensor) or type({name}) in _NUMBERS" if wraps
                                    else f"isinstance({name}, _Tensor)"))
        elif kind == _VALUE_PARAM:
            arguments.append(name)
        elif kind == _SAVED_PARAM:
            arguments.append(f"_as_tensor(_saved[{saves.index(name)}])")
        else:
            arguments.append(_metadata_argument(name, tensor_params, param_names))
    positions = "(" + "".join(f"{i}, " for i in fixed_saved) + ")"
    for i, condition in maybe_saved:
        positions += f" + (({i},) if {condition} else ())"
    return arguments, positions


def _metadata_argument(name: str, tensor_params: dict[str, str], param_names: tuple[str, ...]) -> str:
    """Source of a formula parameter ``<param>_shape`` / ``_dtype`` / ``_geometry``: that metadata of
    the op's argument ``<param>`` (None when it is not a tensor)."""
    base, _, what = name.rpartition("_")
    if base not in param_names or what not in ("shape", "dtype", "geometry"):
        raise TypeError(f"gradient formula parameter {name!r} names no argument of the op")
    value = {"shape": f"{base}._data.shape", "dtype": f"_NP_TO_DTYPE[{base}._data.dtype]",
             "geometry": f"({base}._data.shape, {base}.stride(), {base}.storage_offset())"}[what]
    if tensor_params.get(base) != "tensor":
        value = f"({value} if isinstance({base}, _Tensor) else None)"
    return value


def _make_apply(node_name: str, plan: _Plan, input_count: int, optional_result: bool = False):
    """``OpBackward.apply`` specialised for one op's formula (what its recorder saved where),
    with saved inputs unpacked and gradients fitted inline: it runs once per node per backward.
    ``optional_result``: the output may not have been saved (``save_only_for={"result": ...}``)."""
    lines = []
    values = []
    for i, kind in enumerate(plan.kinds):
        if kind == _GRAD_PARAM:
            values.append("(grads[0] if len(grads) == 1 else grads)")
        elif kind == _RESULT_PARAM:
            values.append(f"(None if a[{i}] is None else a[{i}].unpack(self))" if optional_result
                          else f"a[{i}].unpack(self)")
        elif kind == _RESULT_PART:
            values.append(f"a[{i}].unpack(self)")
        elif kind == _TENSOR_PARAM:
            # A saved input unpacks to itself when its version is unchanged (else unpack raises).
            lines += [f"v{i} = a[{i}]",
                      f"if type(v{i}) is _SavedTensor:",
                      f"    v{i} = v{i}._tensor if v{i}._counter[0] == v{i}._version and v{i}._tensor is not None "
                      f"else v{i}.unpack(self)"]
            values.append(f"v{i}")
        else:
            values.append(f"a[{i}]")
    if plan.keywords is not None:
        values = [f"{name}={value}" for name, value in zip(plan.keywords, values)]
    gradients = [f"g{i}" for i in range(input_count)]
    fitting = []
    for i, name in enumerate(gradients):
        fitting += [f"if {name} is not None:",
                    f"    fit = fits[{i}]",
                    "    if fit is None:",
                    f"        {name} = None",
                    f"    elif type({name}) is not _Tensor or {name}._data.shape != fit[0] "
                    f"or {name}._data.dtype is not fit[1]:",
                    f"        {name} = _fit({name}, fit)"]
    body = "\n    ".join(lines + [f"result = _formula({', '.join(values)})"])
    fitted = "\n    ".join(fitting)
    source = f"""def apply(self, grads):
    a = self._arguments
    if a is None:
        raise _freed_error()
    {body}
    if type(result) is not tuple:
        result = tuple(result) if isinstance(result, list) else (result,)
    fits = self._fits
    if len(result) != {input_count}:
        return _fitted(result, fits)
    {''.join(g + ', ' for g in gradients)}= result
    {fitted}
    return ({''.join(g + ', ' for g in gradients)})
"""
    namespace = {"_formula": plan.formula, "_SavedTensor": SavedTensor, "_freed_error": _freed_error,
                 "_fitted": _fitted, "_fit": _fit, "_Tensor": PLAIN.tensor}
    return _generated.define(source, "apply", namespace, qualname=f"{node_name}.apply",
                             label=f"autograd.{node_name}.apply")


def _savemeta_of(name: str, arguments: dict):
    """``<param>_shape`` / ``<param>_dtype`` / ``<param>_geometry`` (shape, strides and storage
    offset): what a formula may ask for instead of a whole tensor, so that modifying that tensor
    in place later does not break backward.

    None for an argument that is not a tensor (an optional tensor not given, a number
    given for ``Tensor | Number``); a tuple with one entry per item for a list of tensors.
    """
    base, _, what = name.rpartition("_")
    if what not in ("shape", "dtype", "geometry") or base not in arguments:
        raise TypeError(f"gradient formula parameter {name!r} names no argument of the op")
    value = arguments[base]
    if isinstance(value, (list, tuple)):
        return tuple(_meta_of(item, what) for item in value)
    return _meta_of(value, what)


def _meta_of(value, what: str):
    if not isinstance(value, TensorBase):
        return None
    if what == "geometry":
        return tuple(value.shape), value.stride(), value.storage_offset()
    shape, dtype = meta_of(value)
    return shape if what == "shape" else dtype


def _save(value):
    if isinstance(value, TensorBase):
        return SavedTensor(value, False)
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, TensorBase) for v in value):
        return _SavedSequence([SavedTensor(v, False) if isinstance(v, TensorBase) else v for v in value], type(value))
    return value


def _save_output(result: tuple, index: int) -> SavedTensor:
    """Output ``index`` of an op's results, saved alone (a ``result<i>`` formula parameter)."""
    output = result[index]
    return SavedTensor(output, True, index) if differentiable_tensor(output) else SavedTensor(output, False)


def save_result(result, which):
    """What a formula's ``result`` parameter keeps of an op's result: all of it (``which`` True),
    nothing (False: None), or only the outputs at the indices in ``which`` (the others None).

    A formula says which per call with a ``result_saved`` attribute, a function of the op's arguments
    (positionally), where PyTorch's overloads save different things: ``max()`` saves its result
    (a detach when backward unpacks it), ``max(dim)`` only its indices, ``max(other)`` nothing."""
    if which is True:
        return SavedTensor(result, True) if type(result) is PLAIN.tensor else _save_outputs(result)
    if not which:
        return None
    items = [None] * len(result)
    for i in which:
        items[i] = _save_output(result, i)
    return _SavedSequence(items, type(result))


def _save_outputs(result):
    if isinstance(result, tuple):
        # Outputs without gradients (indices) have no history: saved like inputs.
        items = [(SavedTensor(r, True, i) if differentiable_tensor(r) else SavedTensor(r, False))
                 if isinstance(r, TensorBase) else r for i, r in enumerate(result)]
        return _SavedSequence(items, type(result))
    return SavedTensor(result, True)


def check_inplace(t, op_name: str) -> None:
    """PyTorch's refusals for an in-place op on a tensor taking part in autograd."""
    if not grad_enabled():
        return
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._view_base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def record_inplace(op_name: str, formula, tensor_params: tuple[str, ...], arguments: dict, target, write,
                   save_only_for: dict[str, str] | None = None):
    """Record an in-place op on ``target``; ``write()`` performs the write.

    The formula sees the target's value from before the write, and the new
    node's edge for it continues the target's old history.
    """
    check_inplace(target, op_name)
    before = copy_detached(target)
    had_history = target._requires_grad
    _take_history(before, target)
    write()
    result = alias(target)
    record(op_name, formula, tensor_params,
           {name: (before if value is target else value) for name, value in arguments.items()}, result,
           save_only_for)
    # An integer target stays without gradient even when the written value has one.
    if result._requires_grad:
        target._requires_grad = True
        target._grad_fn = result._grad_fn
        target.__dict__.pop("_output_nr", None)
        base = target._view_base
        if base is None:
            target._history_gen += 1  # views of the target made before now describe its old values
            if not had_history:
                refresh_views_of(target)
        else:
            rebase(base, target)
    return target


def _take_history(before, target) -> None:
    """Give ``before`` (the target as it was, before an in-place op) the target's history, so the
    in-place op's node continues it."""
    if target._requires_grad:
        before._requires_grad = True
        before._grad_fn = target._grad_fn
        if "_output_nr" in target.__dict__:
            before._output_nr = target._output_nr


# -- in-place views --------------------------------------------------------------------------
# ``x.squeeze_()``, ``x.t_()``, ``x.as_strided_(...)`` change the tensor's own shape and strides,
# never its data (PyTorch's ``inplace_view`` ops): the tensor keeps its storage, its base and the
# views made of it; its history gains the view op's node, as if ``x`` were rebound to ``x.squeeze()``.


def inplace_view_node(opdef, node: str) -> str:
    """The node an in-place view records: PyTorch numbers it after the out-of-place overloads' nodes
    (``squeeze_.dim``: SqueezeBackward4, after squeeze's 0, 1, 2; ``t_``: TBackward1)."""
    declared = opdef.aten if isinstance(opdef.aten, dict) else {None: ()}
    overloads = sum(1 for key, entries in declared.items()
                    if "@" not in (key or "") and "formula" not in entries)
    name, _, number = node.partition("#")
    return f"{name}#{int(number or 0) + overloads}"


def record_inplace_view(op_name: str, formula, tensor_params: tuple[str, ...], arguments: dict, target, change):
    """Record an in-place view op on ``target``; ``change()`` gives it its new shape and strides.

    No data is written, so nothing is copied and the target's views stay current: the formula
    sees the target as it was (shape, strides) and the new node's edge continues its old history.
    """
    check_inplace(target, op_name)
    if target._view_base is not None:
        refresh_view(target)  # a view made before its base's last in-place write: its current history first
    before = alias(target)
    _take_history(before, target)
    change()
    result = alias(target)
    record(op_name, formula, tensor_params,
           {name: (before if value is target else value) for name, value in arguments.items()}, result)
    if result._requires_grad:
        target._requires_grad = True
        target._grad_fn = result._grad_fn
        target.__dict__.pop("_output_nr", None)
    return target


# -- a leaf's first gradient, while the dispatch level listens ------------------------------------
# PyTorch's AccumulateGrad keeps the incoming gradient itself (a detach) only when nothing else holds
# it and it is laid out as the leaf (the "layout contract"); otherwise ``.grad`` is a copy with the
# leaf's strides (new_empty_strided, copy_), or a contiguous clone for a leaf that is not dense: an
# expanded gradient (``x.sum()``'s) or one shared by two leaves (``x + y``) is copied.


def _element_strides(array) -> tuple:
    """``stride()``'s: an empty array's (NumPy gives it zero strides) are a contiguous tensor's."""
    if type(array) is MetaArray:
        return tuple(array.elem_strides)
    if not array.size and not any(array.strides):
        return contiguous_strides(array.shape)
    return tuple(stride // array.itemsize for stride in array.strides)


def _non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    # c10's test: dimensions of size 0 or 1 say nothing (an empty (0, 3) leaf is dense)
    expected = 1
    for size, stride in sorted(((n, s) for n, s in zip(shape, strides) if n > 1), key=lambda pair: pair[1]):
        if stride != expected:
            return False
        expected *= size
    return True


def _obeys_layout_contract(grad, leaf, leaf_dense: bool) -> bool:
    shape, strides = grad._data.shape, _element_strides(grad._data)
    if not leaf_dense:  # then the gradient must be contiguous (row-major)
        expected = 1
        for size, stride in zip(reversed(shape), reversed(strides)):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True
    return all(stride == wanted if size != 1 else stride != 0
               for size, stride, wanted in zip(shape, strides, _element_strides(leaf._data)))


def first_grad_below(leaf, grad, shared: bool):
    """The first ``.grad`` of ``leaf`` from a plain ``grad`` (``shared``: something besides the engine
    holds it), made with ops the dispatch level sees, as PyTorch's AccumulateGrad (see above)."""
    data, leaf_data = grad._data, leaf._data
    if (not shared and type(data) is not MetaArray and type(leaf_data) is not MetaArray
            and data.strides == leaf_data.strides and data.shape == leaf_data.shape
            and data.itemsize == leaf_data.itemsize and 1 not in data.shape and data.size
            and leaf_data.flags.c_contiguous):
        # The common case in one test (a row-major leaf, a gradient laid out alike): the leaf is dense and
        # the gradient obeys the contract (a size-1 dimension, whose stride the contract reads apart, or
        # an empty array, whose strides say nothing, goes the general way)
        return HOOKS.below(aten_overload("detach", "default"), (grad,), {})
    leaf_dense = _non_overlapping_and_dense(leaf._data.shape, _element_strides(leaf._data))
    if not shared and _obeys_layout_contract(grad, leaf, leaf_dense):
        return HOOKS.below(aten_overload("detach", "default"), (grad,), {})
    if not leaf_dense:
        return HOOKS.below(aten_overload("clone", "default"), (grad,), {"memory_format": contiguous_format})
    copy = HOOKS.below(aten_overload("new_empty_strided", "default"),
                       (grad, list(leaf._data.shape), list(_element_strides(leaf._data))),
                       {"dtype": leaf.dtype, "layout": strided, "device": leaf.device})
    return HOOKS.below(aten_overload("copy_", "default"), (copy, grad), {})
