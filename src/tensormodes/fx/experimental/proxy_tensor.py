"""``make_fx``: trace a function at the dispatch level into a ``GraphModule`` of aten ops.

A tracing dispatch mode (``ProxyTorchDispatchMode``, an infra mode) sees every op below
autograd, as PyTorch's ``make_fx`` does: composites already decomposed, the backward pass's
ops too. Each op becomes a ``call_function`` node whose target is its ``OpOverload``; each
tensor the program makes is remembered with the node that made it. What the graph reads
from outside the inputs — parameters and tensors closed over, a tensor literal's data — is a
``get_attr`` of a constant (``_param_constant0``, ``_tensor_constant0``); Python numbers are
baked in, and in fake tracing the unbacked symbols ``.item()`` gives are nodes, as is Python
arithmetic on them (``mul = _local_scalar_dense * 2``). So when ``f`` calls ``autograd.grad``,
the graph holds the forward and the backward in one straight line (a joint graph).

>>> import tensormodes as tm
>>> from tensormodes.fx.experimental.proxy_tensor import make_fx
>>> def f(x, y):
...     return (x * y).sum()
>>> print(make_fx(f)(tm.ones(2), tm.ones(2)).code.strip())
def forward(self, x_1, y_1):
    mul = tensormodes.ops.aten.mul.Tensor(x_1, y_1);  x_1 = y_1 = None
    sum_1 = tensormodes.ops.aten.sum.default(mul);  mul = None
    return sum_1
"""

from __future__ import annotations

import contextlib
import inspect
import operator
from collections.abc import Callable
from typing import Any

from ..._dispatch.aten import Tag
from ..._subclasses.fake_tensor import FakeTensor, FakeTensorMode, render_call
from ..._symbolic import ShapeEnv, SymBool, SymFloat, SymInt
from ..._tensor_base import TensorBase
from ...nn.modules.module import Module, register_module_forward_hook, register_module_forward_pre_hook
from ...nn.parameter import Parameter
from ...ops import aten
from ...utils._python_dispatch import TorchDispatchMode as _TorchDispatchMode
from ...utils._python_dispatch import _disable_current_modes
from ...utils._pytree import is_namedtuple_instance, tree_leaves, tree_map, tree_structure
from .._codegen import CodeGen
from ..graph import Graph
from ..graph_module import GraphModule

__all__ = ["make_fx", "ProxyTorchDispatchMode", "get_isolated_graphmodule"]



class _Tracer:
    """What one trace builds: the graph, the module holding its constants, and which node
    made each tensor the program has seen (by identity; the tensors are kept alive so that
    no id is reused during the trace)."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.root = Module()
        self.slots: dict[int, tuple[TensorBase, Any]] = {}
        # the same by the array a tensor holds: autograd saves an op's outputs (layer norm's mean
        # and rstd) as tensors of their own around the very arrays the op returned
        self.by_data: dict[int, tuple[Any, Any]] = {}
        self.constants: dict[int, tuple[TensorBase, str]] = {}
        self.counts = {"_param_constant": 0, "_tensor_constant": 0}
        self.module_stack: dict | None = None  # record_module_stack: the module calls in progress
        # ids of the traced tensors whose value is known at trace time (PyTorch's constants): a
        # literal of at most one element, and such results of ops on them
        self.known: set[int] = set()
        # the unbacked symbolic scalars of a fake trace (``.item()``'s, and arithmetic on them): id ->
        # (value, node); the arithmetic's nodes, erased at the end when nothing uses them (PyTorch's)
        self.symbols: dict[int, tuple[Any, Any]] = {}
        self.symbol_nodes: list = []

    def all_known(self, args: tuple, kwargs: dict) -> bool:
        """Whether every tensor among the arguments has a value the trace may read: a constant
        (``known``) or a tensor from outside that no op of the trace made, as in PyTorch."""
        return all(id(value) in self.known or id(value) not in self.slots
                   for value in tree_leaves((args, kwargs)) if isinstance(value, TensorBase))

    def propagates(self, args: tuple, kwargs: dict) -> bool:
        """Whether an op's small results are constants: an argument is one, and each is known."""
        leaves = [value for value in tree_leaves((args, kwargs)) if isinstance(value, TensorBase)]
        return any(id(value) in self.known for value in leaves) and self.all_known(args, kwargs)

    def node_of(self, tensor: TensorBase):
        """The node whose value ``tensor`` is: the one that made it, or — for a tensor from
        outside — a new ``get_attr`` of a constant (one attribute per tensor, as PyTorch's)."""
        slot = self.slots.get(id(tensor))
        if slot is not None:
            return slot[1]
        slot = self.by_data.get(id(tensor._data))
        if slot is not None and slot[0] is tensor._data:
            return slot[1]
        known = self.constants.get(id(tensor))
        if known is None:
            prefix = "_param_constant" if isinstance(tensor, Parameter) else "_tensor_constant"
            name = f"{prefix}{self.counts[prefix]}"
            self.counts[prefix] += 1
            setattr(self.root, name, tensor)
            known = self.constants[id(tensor)] = (tensor, name)
        return self.stamp(self.graph.create_node("get_attr", known[1], (), {}, name=known[1]))

    def stamp(self, node):
        """``node`` with ``meta["nn_module_stack"]`` — the module calls in progress, ``{}`` outside
        them — when the trace records module stacks (every node but placeholders and output)."""
        if self.module_stack is not None:
            node.meta["nn_module_stack"] = dict(self.module_stack)
        return node

    def arg(self, value):
        """``value`` (an op's argument) with tensors and symbolic scalars replaced by their nodes."""
        if isinstance(value, TensorBase):
            return self.node_of(value)
        kind = type(value)
        if kind is list or kind is tuple:
            return kind(self.arg(v) for v in value)
        if kind in _SYMBOLIC_TYPES:
            return self.symbol_node(value)
        return value

    def record_symbolic(self, value) -> None:
        """Record Python arithmetic on symbols (``n * 2``) as a node (``operator.mul``), at once
        as PyTorch's make_fx (the ShapeEnv's ``recorder``)."""
        node = self.stamp(self.graph.create_node("call_function", value._op, tuple(self.arg(a) for a in value._args),
                                                 {}, name=value.node_name()))
        node.meta["val"] = value
        self.symbols[id(value)] = (value, node)
        self.symbol_nodes.append(node)

    def symbol_node(self, value):
        """The node whose value the symbolic scalar ``value`` is; a size the fake tensor rules
        derived (``2*u0`` of a result) is recorded where first used."""
        slot = self.symbols.get(id(value))
        if slot is not None:
            return slot[1]
        if value._op is None:
            raise RuntimeError(f"make_fx: the symbol {value} was not made by this trace")
        self.record_symbolic(value)
        return self.symbols[id(value)][1]

    def erase_unused_symbolic(self) -> None:
        """Erase the arithmetic nodes nothing uses (latest first, so chains go), as PyTorch's."""
        for node in reversed(self.symbol_nodes):
            if not node.users:
                self.graph.erase_node(node)

    def track(self, value, node) -> None:
        """Remember ``node`` as the maker of ``value`` (an op's result). A tuple result (named
        tuples too: ``max.dim``'s) or list result gets a ``getitem`` node per item, made at once
        and for every item — a ``None`` of ``convolution_backward`` too —, as PyTorch's."""
        if isinstance(value, TensorBase):
            self.slots[id(value)] = (value, node)
            self.by_data[id(value._data)] = (value._data, node)
        elif type(value) in _SYMBOLIC_TYPES:  # ``_local_scalar_dense``'s unbacked symbol
            self.symbols[id(value)] = (value, node)
        elif isinstance(value, (tuple, list)):
            for index, item in enumerate(value):
                self.track(item, self.stamp(self.graph.create_node("call_function", operator.getitem, (node, index),
                                                                   {}, name="getitem")))

    def output(self, value):
        """The traced function's result as the output node's argument: tensors as their nodes,
        containers rebuilt, a ``Size`` as a tuple, anything else as itself."""
        if isinstance(value, TensorBase):
            return self.node_of(value)
        kind = type(value)
        if kind in _SYMBOLIC_TYPES:
            return self.symbol_node(value)
        if kind is tuple or kind is list:
            return kind(self.output(v) for v in value)
        if kind is dict:
            return {k: self.output(v) for k, v in value.items()}
        if isinstance(value, tuple) and not is_namedtuple_instance(value):
            return tuple(self.output(v) for v in value)  # Size
        if isinstance(value, tuple):
            return kind(*(self.output(v) for v in value))
        return value


class ProxyTorchDispatchMode(_TorchDispatchMode):
    """The tracing mode of ``make_fx``: runs each op (on real or fake tensors, whatever is
    below) and records it in ``tracer``'s graph; an op of ``decomposition_table`` runs its
    decomposition instead, whose ops are recorded in turn. With a ``fake_mode`` (fake
    tracing), a real tensor reaching an op is refused unless ``allow_non_fake_inputs``, and
    each node keeps its fake value in ``node.meta["val"]``."""

    def __init__(self, tracer: _Tracer, decomposition_table: dict | None = None, fake_mode=None,
                 allow_non_fake_inputs: bool = False) -> None:
        super().__init__()
        self.tracer = tracer
        self.decomposition_table = decomposition_table or {}
        self.fake_mode = fake_mode
        self.check_fake = fake_mode is not None and not allow_non_fake_inputs

    @classmethod
    def is_infra_mode(cls) -> bool:
        """An infra mode: the user's dispatch modes entered inside ``f`` still run first."""
        return True

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        """Run ``func`` and record it as a node (see the class)."""
        kwargs = kwargs or {}
        run_args = args
        if func is _LIFT_FRESH:
            func = _LIFT_FRESH_COPY  # the graph copies its constant, as PyTorch's make_fx
            if self.fake_mode is not None:  # a literal's data: the constant in the graph, fake below
                with _disable_current_modes():
                    run_args = tuple(_fake_literal(self.fake_mode, a) for a in args)
        elif _DATA_DEPENDENT in func.tags and self.tracer.all_known(args, kwargs):
            # a value known while tracing (a small literal, a tensor from outside): read, not recorded
            with _disable_current_modes():
                return func(*_constants_of(args), **kwargs)
        elif _DATA_DEPENDENT in func.tags and self.fake_mode is None:
            raise RuntimeError(
                f"It appears that you're trying to get value out of a tracing tensor with {func} - erroring "
                "out! It's likely that this is caused by data-dependent control flow or similar.  It may be "
                "possible to trace this with dynamic shapes; try setting tracing_mode='symbolic' in your "
                "make_fx call.")
        elif self.check_fake:
            _refuse_real_tensors(func, args, kwargs)
        decomposition = self.decomposition_table.get(func)
        if decomposition is not None:
            with self:
                result = decomposition(*args, **kwargs)
            if result is not NotImplemented:
                return result
        tracer = self.tracer
        node_args, node_kwargs = tracer.arg(args), {k: tracer.arg(v) for k, v in kwargs.items()}
        known = func is _LIFT_FRESH_COPY or (tracer.known and tracer.propagates(args, kwargs))
        out = func(*run_args, **kwargs)
        name = _NODE_NAMES.get(func)
        if name is None:
            name = _NODE_NAMES[func] = func.overloadpacket.__name__
        node = tracer.graph.create_node("call_function", func, node_args, node_kwargs, name=name)
        if self.fake_mode is not None:
            node.meta["val"] = out
        tracer.track(out, tracer.stamp(node))
        if known and isinstance(out, TensorBase) and out.numel() <= 1:
            tracer.known.add(id(out))
        return out


def _fake_literal(fake_mode: FakeTensorMode, tensor: TensorBase) -> FakeTensor:
    """A literal's data as a fake tensor, keeping the value of one of at most one element (a
    constant, which ops on constants propagate and ``.item()`` reads, as in PyTorch)."""
    fake = fake_mode.from_tensor(tensor)
    if tensor.numel() <= 1:
        fake.constant = tensor
    return fake


def _constants_of(args: tuple) -> tuple:
    """Fake tensors among ``args`` replaced by the values they hold (a fake constant's)."""
    return tuple(a.constant if isinstance(a, FakeTensor) and a.constant is not None else a for a in args)


def _refuse_real_tensors(func, args: tuple, kwargs: dict) -> None:
    """PyTorch's error for a real tensor reaching an op while tracing with fake tensors."""
    for value in tree_leaves((args, kwargs)):
        if isinstance(value, TensorBase) and not isinstance(value, FakeTensor):
            raise AssertionError(
                "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with "
                f"'allow_non_fake_inputs'. Found in {render_call(func, args, kwargs)}. (make_fx: pass "
                "_allow_non_fake_inputs=True to trace, with tracing_mode='fake', a function that uses real "
                "tensors such as a module's parameters)")


_DATA_DEPENDENT = Tag.data_dependent_output
_SYMBOLIC_TYPES = frozenset({SymInt, SymFloat, SymBool})
_LIFT_FRESH = aten.lift_fresh.default
_LIFT_FRESH_COPY = aten.lift_fresh_copy.default
_NODE_NAMES: dict = {}


def make_fx(f: Callable, decomposition_table: dict | None = None, tracing_mode: str = "real",
            _allow_non_fake_inputs: bool = False, *, pre_dispatch: bool = False,
            record_module_stack: bool = False, _allow_fake_constant: bool = False,
            _error_on_data_dependent_ops: bool = True) -> Callable[..., GraphModule]:
    """A function that, called with example inputs, runs ``f`` on them and returns the
    ``GraphModule`` of the aten ops it ran (PyTorch's ``make_fx``).

    ``decomposition_table`` maps ``OpOverload``s to Python functions run in their place
    (``tensormodes._decomp.get_decompositions`` / ``core_aten_decompositions``).
    ``tracing_mode``: ``"real"`` runs ``f`` on the inputs themselves; ``"fake"`` on fake
    copies under a ``FakeTensorMode`` with a ``ShapeEnv`` (no data: a value read with ``.item()``
    is an unbacked ``SymInt``/``SymFloat``/``SymBool``, whose arithmetic is recorded as nodes,
    as PyTorch's); ``"symbolic"`` is not supported.
    ``_allow_non_fake_inputs``: with ``"fake"``, lets ``f`` use real tensors it closes over
    (a module's parameters), which become constants of the graph. ``record_module_stack``:
    each node's ``meta["nn_module_stack"]`` names the module calls it ran in (PyTorch's format),
    when ``f`` is a module or, as PyTorch requires, has the module as ``f._orig_mod``.
    ``_allow_fake_constant`` and ``_error_on_data_dependent_ops`` are accepted for PyTorch's
    callers and change nothing here.
    """
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"tracing_mode must be real/fake/symbolic, got {tracing_mode}")
    if tracing_mode == "symbolic":
        raise NotImplementedError("make_fx: tracing_mode='symbolic' (dynamic shapes) is not supported by "
                                  "tensormodes; use tracing_mode='real' or 'fake' (static shapes)")
    if pre_dispatch:
        raise NotImplementedError("make_fx: pre_dispatch=True (tracing above autograd) is not supported by "
                                  "tensormodes")

    def wrapped(*args):
        return _trace(f, args, decomposition_table, tracing_mode, _allow_non_fake_inputs, record_module_stack)

    wrapped.__name__ = getattr(f, "__name__", "wrapped")
    wrapped.__doc__ = make_fx.__doc__
    return wrapped


def _trace(f: Callable, args: tuple, decomposition_table, tracing_mode: str, allow_non_fake: bool,
           record_module_stack: bool) -> GraphModule:
    tracer = _Tracer()
    fake_mode = None
    if tracing_mode == "fake":
        # with a ShapeEnv, as PyTorch's: values read from fake tensors become unbacked symbols
        fake_mode = FakeTensorMode(allow_non_fake_inputs=allow_non_fake, shape_env=ShapeEnv())
        fake_mode.shape_env.recorder = tracer.record_symbolic
        args = tuple(tree_map(lambda a: fake_mode.from_tensor(a) if isinstance(a, TensorBase) else a, args))
    flat_inputs = _placeholders(tracer, f, args)
    if flat_inputs is not None:
        tracer.graph.set_codegen(flat_inputs)
    proxy_mode = ProxyTorchDispatchMode(tracer, decomposition_table, fake_mode, allow_non_fake)
    with contextlib.ExitStack() as scopes:
        if record_module_stack:
            scopes.enter_context(_module_stack(tracer, f))
        if fake_mode is not None:
            scopes.enter_context(fake_mode)
        scopes.enter_context(proxy_mode)
        result = f(*args)
    if fake_mode is not None:
        fake_mode.shape_env.recorder = None  # symbols used after the trace record nothing
    tracer.graph.output(tracer.output(result))
    tracer.erase_unused_symbolic()
    name = getattr(f, "__name__", None) if not isinstance(f, Module) else type(f).__name__
    return GraphModule(tracer.root, tracer.graph, name if isinstance(name, str) else "GraphModule")


def _placeholders(tracer: _Tracer, f: Callable, args: tuple) -> CodeGen | None:
    """One placeholder per leaf of the inputs, named as PyTorch's make_fx names them
    (``x_1``; ``xs_1``, ``xs_2`` for the leaves of a list ``xs``; ``arg0_1`` ... when ``f`` takes
    ``*args`` or has no signature). Returns the code generator flattening nested inputs, if any."""
    names = _parameter_names(f, len(args))
    nested = False
    for name, value in zip(names, args):
        leaves = tree_leaves(value)
        nested = nested or not (len(leaves) == 1 and leaves[0] is value)
        for count, leaf in enumerate(leaves, 1):
            node = tracer.graph.placeholder(f"{name}_{count}")
            if isinstance(leaf, TensorBase):
                tracer.track(leaf, node)
    return _FlatInputs(names, args) if nested else None


def _parameter_names(f: Callable, count: int) -> list[str]:
    code = getattr(inspect.unwrap(f), "__code__", None)
    if code is None or code.co_flags & inspect.CO_VARARGS:
        return [f"arg{i}" for i in range(count)]
    names = list(inspect.signature(f).parameters)[:count]
    return names + [f"arg{i}" for i in range(len(names), count)]


class _FlatInputs(CodeGen):
    """The code of a graph whose inputs hold nested containers: ``forward`` takes them as
    ``f`` did and binds the placeholders to their leaves."""

    def __init__(self, names: list[str], args: tuple) -> None:
        super().__init__()
        self.names = names
        self.structure = [tree_structure(a) for a in args]

    def gen_fn_def(self, free_vars: list[str], maybe_return_annotation: str) -> str:
        """``def forward(self, xs, y):`` then the leaves bound to the placeholders."""
        head = f"def forward(self, {', '.join(self.names)}){maybe_return_annotation}:"
        return f"{head}\n    {', '.join(free_vars)}, = tree_leaves([{', '.join(self.names)}])"

    def additional_globals(self) -> list[tuple[str, Any]]:
        """``tree_leaves``, which the ``def`` line's binding calls."""
        return [("tree_leaves", tree_leaves)]

    def process_inputs(self, *args: Any) -> Any:
        """The placeholders' values for ``forward``'s inputs."""
        return tree_leaves(list(args))


@contextlib.contextmanager
def _module_stack(tracer: _Tracer, f: Callable):
    """``record_module_stack=True``: while ``f`` runs, the calls in progress of the modules of
    its root — ``f._orig_mod`` (PyTorch's rule: a compiled module's original), else ``f`` when
    it is a module — as ``tracer.module_stack``, PyTorch's ``{path: (path, "module.Class")}``
    (the root's path ``''``), outermost first. A module outside the root is not recorded (PyTorch
    traces through it without an entry); without a root nothing is recorded, as in PyTorch."""
    root = getattr(f, "_orig_mod", f)
    if not isinstance(root, Module):
        yield
        return
    paths = {id(m): name for name, m in root.named_modules()}
    stack: list = []

    def enter(module, args):
        path = paths.get(id(module))
        stack.append(None if path is None else (path, f"{type(module).__module__}.{type(module).__qualname__}"))
        tracer.module_stack = {entry[0]: entry for entry in stack if entry is not None}

    def leave(module, args, output):
        stack.pop()
        tracer.module_stack = {entry[0]: entry for entry in stack if entry is not None}

    handles = [register_module_forward_pre_hook(enter), register_module_forward_hook(leave, always_call=True)]
    tracer.module_stack = {}
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
        tracer.module_stack = None


def get_isolated_graphmodule(func: Callable, args: tuple, kwargs: dict, tracing_mode: str = "real",
                             decomposition_table: dict | None = None) -> GraphModule:
    """``make_fx`` of ``func(*args, **kwargs)``, traced apart from any trace in progress."""
    with _disable_current_modes():
        return make_fx(lambda *a: func(*a, **kwargs), decomposition_table, tracing_mode)(*args)
