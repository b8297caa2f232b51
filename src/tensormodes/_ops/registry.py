"""The op table: one declaration per op, everything else derived from it.

An op is declared once, in the file of its family, by decorating its NumPy
kernel (docs/adding-ops.md has the complete example, tested)::

    @op(meta=elementwise, grad=_add_grad, method=True, inplace=True, out=True,
        dunders=(Dunder("__add__"), Dunder("__radd__"), Dunder("__iadd__", inplace=True)),
        samples=(Sample((M23, M23)), Sample((M23, 2.5), {"alpha": 2})))
    def add(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
        "Adds ``other``, scaled by ``alpha``, to ``input``. ..."
        ...

The kernel's signature *is* the public signature (PyTorch's parameter names and
defaults); its annotations say which parameters hold tensors:

==========================  =========================================================
annotation                  the kernel receives
==========================  =========================================================
``Tensor``                  an ``ndarray`` (a non-tensor argument is a TypeError)
``Tensor | None``           an ``ndarray`` or ``None``
``Tensor | Number``         an ``ndarray`` or a Python scalar
``Tensor | Number | None``  an ``ndarray``, a Python scalar or ``None``
``Sequence[Tensor]``        a list of ``ndarray`` (also ``*tensors: Tensor``)
``Index``                   an index with each Tensor in it replaced by its ``ndarray``
==========================  =========================================================

Kernels return an ``ndarray``, a (named) tuple of them, or a Python value, and
never look above this package. From the table the Tensor layer builds the
public function ``tensormodes.add``, the method ``Tensor.add``, the in-place
``Tensor.add_``, ``out=`` handling and the operators; ``overrides`` derives
``get_overridable_functions`` and ``get_testing_overrides``; the tests derive
their op coverage.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import inspect
import sys
import types
from collections import namedtuple
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["op", "alias", "OpDef", "Dunder", "OPS", "METHOD", "OWN", "Sample", "TensorSpec", "Index", "Tensor",
           "TensorKind", "RETURN_TYPES", "tensor_kind_of", "scratch_table", "register_return_type"]

# Which public callable a dunder presents to handlers (see ``Dunder``).
METHOD, OWN = "method", "own"


@dataclass(frozen=True)
class Dunder:
    """An operator bound to an op, presented to handlers as PyTorch 2.13 does.

    ``api=METHOD``: handlers see the op's method, or its in-place method when
    ``inplace`` (``a + b`` -> ``Tensor.add``, ``a += b`` -> ``Tensor.add_``);
    the operands reach it as ``(self, other)``, so a reflected METHOD dunder is
    only right for a commutative op. ``api=OWN``: the dunder is a public callable
    of its own (``a // b`` -> ``Tensor.__floordiv__``); a ``reflected`` one
    computes ``op(other, self)``, or ``composite(self, other)`` where PyTorch's operator is
    Python code of its own over public ops (``2 / x`` is ``x.reciprocal() * 2``).
    """

    name: str
    api: str = METHOD
    reflected: bool = False
    inplace: bool = False
    composite: Callable | None = None


@dataclass(frozen=True)
class TensorSpec:
    """A random tensor for table-driven tests: its shape, dtype name and value range."""

    shape: tuple
    dtype: str = "float32"
    low: float = -2.0
    high: float = 2.0


@dataclass(frozen=True)
class Sample:
    """Arguments that exercise an op in the table-driven tests (and cross-checks
    against PyTorch); ``TensorSpec`` entries become random tensors, lists of them
    tensor lists."""

    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass
class OpDef:
    """Everything the library knows about one op."""

    name: str
    kernel: Callable
    signature: inspect.Signature
    tensor_params: dict[str, str]
    function: str | None
    method: str | None
    inplace: str | None
    dunders: tuple[Dunder, ...]
    out: bool
    view: bool
    factory: bool
    doc: str
    samples: tuple[Sample, ...]
    differentiable: bool | Callable[..., bool]
    ufunc: Callable | None
    grad: Callable | None
    mutates: bool
    alias: bool
    namespace: str
    saves: tuple[str, ...] = ()
    save_only_for: dict[str, str] = field(default_factory=dict)
    normalize: Callable | None = None
    written_check: Callable | None = None
    random: bool = False
    returns: type | None = None
    alias_of: str | None = None
    # names the backward node when not the op's own name (``special_erf``: Erf); a function of the
    # op's arguments names it per call (``linear``: addmm, mm ...)
    node: str | Callable | None = None
    meta: Callable | None = None  # the meta rule (see _meta.MetaRule)
    errors: tuple[Sample, ...] = ()  # arguments real execution rejects (meta execution must, alike)
    # the op's identity at the dispatch level (see ``op``'s ``aten``, ``tags``, ``decompose``)
    aten: str | dict | None = None
    tags: tuple[str, ...] = ()
    decompose: Callable | None = None
    # its gradient formula calls the products and convolutions its decomposition's formulas call,
    # alike and in order (for the arguments a function of them accepts; see ``op``'s ``fused_grad_products``)
    fused_grad_products: bool | Callable[..., bool] = False
    schema_types: dict[str, str] = field(default_factory=dict)
    # the in-place form is a function of the namespace too (``torch.abs_``; see ``op``)
    inplace_function: bool = False


OPS: dict[str, OpDef] = {}

# The named tuple types of ops with several outputs (``torch.return_types``), by op name: made
# by the ops' declarations (``returns=``); ``tensormodes.return_types`` exposes them.
RETURN_TYPES: dict[str, type] = {}

# Where declarations go: None for ``OPS`` and ``RETURN_TYPES``, else the ``(ops, return types)``
# of the innermost ``scratch_table()``. Read once per declaration, never by calls of ops.
_SCRATCH: ContextVar[tuple[dict, dict] | None] = ContextVar("tensormodes_scratch_op_table", default=None)


def _tables() -> tuple[dict, dict]:
    scratch = _SCRATCH.get()
    return (OPS, RETURN_TYPES) if scratch is None else scratch


@contextlib.contextmanager
def scratch_table() -> Iterator[dict[str, OpDef]]:
    """Declarations made inside (``op``, ``alias``) go into a fresh op table, which this yields,
    instead of ``OPS`` (and their ``returns=`` types not into ``RETURN_TYPES``): for tests and
    documentation examples that declare an op without adding it to the library. ``alias``
    finds its target in the scratch table. Nothing is generated from a scratch table.

    >>> with scratch_table() as table:
    ...     @op(meta=None, samples=(Sample((TensorSpec((2,)),)),))
    ...     def twice(input: Tensor) -> Tensor:
    ...         "``input`` doubled."
    ...         return input * 2
    >>> list(table), table["twice"].tensor_params, "twice" in OPS
    (['twice'], {'input': <TensorKind.TENSOR: 'tensor'>}, False)
    """
    tables: tuple[dict, dict] = ({}, {})
    token = _SCRATCH.set(tables)
    try:
        yield tables[0]
    finally:
        _SCRATCH.reset(token)


class TensorKind(str, enum.Enum):
    """What a tensor parameter of an op accepts (read from its annotation, see the table above).

    The values are plain strings, so a kind compares equal to its value (``"tensor"``)."""

    TENSOR = "tensor"
    OPTIONAL_TENSOR = "optional_tensor"
    TENSOR_OR_SCALAR = "tensor_or_scalar"
    OPTIONAL_TENSOR_OR_SCALAR = "optional_tensor_or_scalar"
    TENSOR_LIST = "tensor_list"
    INDEX = "index"
    # Only for the Tensor layer's own methods (``tensor_api``): any value, or a sequence of
    # values, that may carry an override.
    ANY = "any"
    ANY_LIST = "any_list"

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__

# Annotation-only names (see the table above): kernels annotate parameters with them and
# receive ndarrays; the annotation's text is what the registry reads.
Index = object


class Tensor:
    """Annotation-only marker: a kernel parameter annotated ``Tensor`` receives an ``ndarray``
    (the public callable built from the kernel takes a tensormodes Tensor there)."""

_KINDS = (
    ("Sequence[Tensor]", TensorKind.TENSOR_LIST),
    ("Tensor | None", TensorKind.OPTIONAL_TENSOR),
    ("Tensor | Number | None", TensorKind.OPTIONAL_TENSOR_OR_SCALAR),
    ("Tensor | Number", TensorKind.TENSOR_OR_SCALAR),
    ("Tensor", TensorKind.TENSOR),
    ("Index", TensorKind.INDEX),
)


def tensor_kind_of(annotation) -> TensorKind | None:
    """The kind of tensor parameter an annotation's text declares (None for other parameters).

    >>> tensor_kind_of("Tensor | None")
    <TensorKind.OPTIONAL_TENSOR: 'optional_tensor'>
    """
    if not isinstance(annotation, str):
        return None
    for text, kind in _KINDS:
        if annotation == text:
            return kind
    if "Tensor" in annotation:
        raise TypeError(f"unsupported tensor annotation {annotation!r}")
    return None


# long: the docstring is the reference of every flag; the body is one short register().
def op(*, function: bool | str = True, method: bool | str = False, inplace: bool | str = False,
       dunders: tuple[Dunder, ...] = (), out: bool = False, view: bool = False,
       factory: bool = False, name: str | None = None, samples: tuple[Sample, ...] = (),
       differentiable: bool | Callable[..., bool] = True, ufunc: Callable | None = None,
       grad: Callable | None = None,
       mutates: bool = False, alias: bool = False, namespace: str = "tensormodes", saves: tuple[str, ...] = (),
       save_only_for: dict[str, str] | None = None, normalize: Callable | None = None,
       written_check: Callable | None = None, random: bool = False, returns: tuple[str, ...] | None = None,
       node: str | Callable | None = None, meta: Callable | None = None, errors: tuple[Sample, ...] = (),
       aten: str | dict | None = None, tags: tuple[str, ...] = (), decompose: Callable | None = None,
       schema: dict[str, str] | None = None, inplace_function: bool = False,
       fused_grad_products: bool | Callable[..., bool] = False):
    """Declare the decorated NumPy kernel as an op (see the module docstring).

    ``name`` (by default the kernel's) is the op's name in the table, ATen's where they
    differ from the public name, which ``function`` or ``method`` then give as a string:
    ``name="linalg_det", function="det"`` is ``tensormodes.linalg.det`` (node
    ``LinalgDetBackward0``), ``name="where_method", function=False, method="where"`` is
    ``Tensor.where`` alone.

    ``ufunc`` is a hot-path hint: for operands of one floating dtype (and
    keyword-only arguments at their defaults) the op's result is exactly
    ``ufunc(*arrays)`` — or the ufunc raises ValueError / TypeError, and the
    kernel then raises PyTorch's error — so the generated fast path calls it
    directly.

    ``grad`` is the gradient formula: a function whose parameters are any of
    ``grad`` (the output gradient; a tuple for ops with several outputs),
    ``result`` (the op's output), the op's own parameter names, and
    ``<param>_shape`` / ``<param>_dtype`` (just that tensor's shape or dtype:
    prefer them when the formula needs no values, so later in-place changes
    of the tensor do not invalidate the graph) and ``needs_input_grad`` (one
    bool per tensor parameter: whether its gradient is wanted). It returns one gradient (a
    Tensor, or None) per tensor parameter in order — a single Tensor for an op
    with one tensor parameter; a tensor-list or index parameter takes one
    entry per tensor in it. It runs on Tensors and is
    written with public ops (so higher-order gradients and modes work through
    it); gradients are summed back to broadcast inputs' shapes automatically.
    ``differentiable=False`` marks ops without gradients (comparisons,
    integer results ...), whose outputs never require grad. A function instead
    decides per call, given the op's arguments positionally (a ``*args``
    parameter as one tuple): False for the calls PyTorch does not differentiate
    (``view(dtype)``, a separate overload there), whose outputs do not require grad.

    ``inplace_function=True``: the in-place form is a public function of ``namespace`` too
    (``tensormodes.abs_(x)``, the same call as ``x.abs_()``), where PyTorch declares the in-place
    variant as a function and a method (``variants: function, method``: ``torch.abs_`` exists,
    ``torch.add_`` does not).

    ``mutates=True``: the kernel writes into its first tensor argument itself
    (``__setitem__``); the generated code bumps that tensor's version and
    records the op as in-place for autograd.

    ``alias=True``: the result shares its input's storage and version counter
    without being a view of it (``detach``).

    ``saves=("name", ...)``: the kernel returns ``(result, *intermediates)``; the intermediates
    (arrays) are not returned to the caller but given to the gradient formula, under these
    parameter names, when the call is recorded — as PyTorch's kernels return buffers for
    their backward (``nll_loss_forward``'s ``total_weight``). They carry no history, so a
    formula must not use them when grad mode is on (``create_graph=True``). Only for plain
    out-of-place ops.

    ``save_only_for={"other": "input", ...}``: save tensor parameter ``other`` for the formula
    only when ``input``'s gradient is wanted (its only use), as PyTorch's nodes do: ``x * 2`` or
    ``x * w`` with a constant ``w`` then keeps nothing of ``x``. The formula receives None
    instead, and must not compute that gradient. ``"result"`` may be named too: the output is
    then saved only for that input's gradient (``pow``'s output, for the exponent's).

    ``normalize``: a function of the op's parameters (a ``*args`` parameter as one tuple)
    returning them, in order, in the one form the kernel takes. The public callable runs it
    before dispatch, for calling conventions PyTorch's Python functions accept before they
    dispatch: a single list for ``*tensors`` (``torch.meshgrid([x, y])``), ``einsum``'s sublist
    format. Handlers and the kernel see the normalized arguments.

    ``written_check``: a function ``(result, target, inplace)`` of arrays, run before an in-place
    form or ``out=`` writes the result into ``target`` (the tensor itself if ``inplace``), that
    raises PyTorch's error where the op demands more than the usual cast rule (``float_power``
    writes only into float64 or complex128, ``signbit`` only into bool).

    ``random=True``: the results of the declared samples are not determined by the arguments
    (random draws, or the uninitialised memory of ``empty``), so the table-driven tests compare
    only their shapes and dtypes. Samplers whose samples fix the outcome (``bernoulli`` with
    probabilities 0 and 1) leave it False, and their values are compared.

    ``returns=("values", "indices")``: the op returns a named tuple with these fields, the type
    ``RETURN_TYPES[name]`` (``tensormodes.return_types.<name>``), which the kernel builds its
    result with.

    ``meta``: the op's meta rule (``_meta.pointwise``, ``_meta.reduction()``, ``_meta.rule(f)`` ...):
    what the kernel would return, as MetaArrays, when an argument is a meta tensor. ``errors``:
    samples that real execution rejects; the meta rule must raise the same exception type and
    message for them (``tests/test_meta_rules.py`` checks both kinds of sample).

    ``namespace``: the module whose function the op is (``"tensormodes.nn.functional"``
    for ops PyTorch implements natively there, such as ``linear``).

    ``node``: the op whose name names the backward node, where it is not this op's own: the
    private ``_mse_loss`` records ``MseLossBackward0`` (``node="mse_loss"``), as PyTorch's
    ``torch._C._nn.mse_loss`` does. A function instead, given the op's arguments positionally
    (tensors as Tensors), names the node of each recorded call: ``linear`` is one fused op, and
    its node is named as the last step of PyTorch's composite for those arguments (``addmm``,
    ``mm``, ``view`` ...).

    The op's identity at the dispatch level (``tensormodes.ops.aten``, see ``_dispatch.aten``),
    from which its schemas are computed:

    ``aten``: the ATen overload a call of the op reaches, ``"name.overload"`` or just
    ``"overload"`` (the name is then the op's own). By default ``Tensor`` when a parameter
    takes a tensor or a number (``add.Tensor``), else ``default``. An op reaching one of
    several overloads gives a dict ``{"name.overload": (entries), ...}``; a call takes the
    first whose lacking parameters hold their defaults and whose arguments fit its types (a
    number for a Scalar, a tensor for a Tensor, an int or a list as typed; a number for a
    Tensor only when nothing fits better: ``x + 2`` is ``add.Tensor``, ``x > 0`` ``gt.Scalar``).
    Entries: ``"dim"`` — the overload lacks that parameter; ``"dim: int[1]?="`` — its spelling
    in this overload (below); ``"+core"`` / ``"-pointwise"`` — its tags beyond the op's;
    ``"out=IntList_out"`` / ``"inplace=Tensor"`` — the names of its ``out=`` and in-place forms
    (by default ``out`` for ``default``, else ``<overload>_out``, and its own name; ``"out="``:
    none); ``"out+generated"`` / ``"inplace-pointwise"`` — those forms' own tags; ``"formula"`` —
    only gradient formulas reach it (PyTorch's C++ formulas pass numbers as Scalars:
    ``mul.Scalar``), never a public call. A key
    ``"name.overload@label"`` maps the call's parameters to the same overload another way
    (``randint(5, (3,))`` and ``randint(high=5, size=(3,))`` are both ``randint.default``).
    ``schema``: a parameter's spelling where its annotation does not say it exactly,
    ``"[*|~]TYPE [NAME][=DEFAULT]"``: ``{"dim": "int[1]?"}``; ``"Tensor input"`` also renames it
    (a first tensor ``input`` is ``self``); ``"int[1]? dim="`` — no default in the schema;
    ``"int=1"`` — the default as printed; ``*`` keyword-only, ``~`` positional; ``None`` — not in
    the schema; a name not in the signature adds an argument (``"implicit": "*bool=False"``);
    ``"(order)": "n self"`` — the schema's order of those arguments; ``"(returns)": "Tensor"``.
    The rest is derived: types from annotations, a factory's tensor options, ``int[N]`` windows
    of N-d ops, alias annotations from ``view``/``inplace``/``mutates``, out= arguments.
    ``tags``: PyTorch's tags for it (``"pointwise"``, ``"core"`` ...), beyond those derived
    (a ``generator`` parameter gives ``nondeterministic_seeded``; in-place and out= forms theirs).
    ``decompose``: a function of the op's parameters computing it from other ops (with
    ``common.ops``, like gradient formulas), run instead of the op when a dispatch-level mode
    or subclass listens, where PyTorch's op is a composite: ``F.linear`` reaches the dispatch
    level as ``t`` and ``addmm``. Its calls are seen by autograd and by the dispatch level,
    not by ``__torch_function__`` handlers. ``fused_grad_products``: the op's gradient formula
    calls the products and convolutions (``mm`` ...) its decomposition's formulas call, with the
    same arguments and in the same order (a function of the op's arguments: for the calls it
    accepts), so under dispatch modes that handle only those autograd may record the op's own
    node while the modes see the decomposition's forward.
    """

    def register(kernel: Callable) -> Callable:
        op_name = name or kernel.__name__
        table, return_types = _tables()
        if op_name in table:
            raise ValueError(f"op {op_name!r} is declared twice")
        signature = inspect.signature(kernel)
        tensor_params = {}
        for p in signature.parameters.values():
            kind = tensor_kind_of(p.annotation)
            if kind is TensorKind.TENSOR and p.kind is p.VAR_POSITIONAL:
                kind = TensorKind.TENSOR_LIST
            if kind is not None:
                tensor_params[p.name] = kind
        if inplace_function and not inplace:
            raise ValueError(f"op {op_name!r}: inplace_function= needs an in-place form (inplace=)")
        if saves and (inplace or out or view or alias or mutates or ufunc or factory or dunders):
            raise ValueError(f"op {op_name!r}: saves= is only for plain out-of-place ops")
        function_name = op_name if function is True else (function or None)
        method_name = op_name if method is True else (method or None)
        inplace_name = f"{op_name}_" if inplace is True else (inplace or None)
        table[op_name] = OpDef(
            name=op_name, kernel=kernel, signature=signature, tensor_params=tensor_params,
            function=function_name, method=method_name, inplace=inplace_name, dunders=dunders,
            out=out, view=view, factory=factory, doc=inspect.cleandoc(kernel.__doc__ or ""),
            samples=samples, differentiable=differentiable, ufunc=ufunc, grad=grad, mutates=mutates, alias=alias,
            namespace=namespace, saves=tuple(saves), save_only_for=dict(save_only_for or {}), normalize=normalize,
            written_check=written_check, random=random, node=node, meta=meta, errors=tuple(errors),
            aten=aten, tags=tuple(tags), decompose=decompose, schema_types=dict(schema or {}),
            inplace_function=inplace_function, fused_grad_products=fused_grad_products,
            returns=None if returns is None else _return_type(op_name, tuple(returns), return_types))
        return kernel

    return register


def register_return_type(name: str, fields: tuple[str, ...]) -> type:
    """A ``torch.return_types`` named tuple for a composite that is not an op of the table
    (``histogramdd``), made like the ops' (``returns=``) and registered with them.

    >>> register_return_type.__name__
    'register_return_type'
    """
    return _return_type(name, fields, _tables()[1])


def _return_type(name: str, fields: tuple[str, ...], return_types: dict[str, type]) -> type:
    """A named tuple type called ``name``, printed like PyTorch's ``torch.return_types``,
    registered in ``return_types`` (``RETURN_TYPES``, or a scratch table's)."""

    def __repr__(self) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self, strict=True))
        return f"tensormodes.return_types.{name}(\n{body})"

    base = namedtuple(name, fields)
    return_types[name] = type(name, (base,), {
        "__slots__": (), "__repr__": __repr__, "__module__": "tensormodes.return_types",
        "__doc__": f"The result of ``{name}``: a named tuple of ``{', '.join(fields)}``."})
    return return_types[name]


def alias(name: str, *, of: str, doc: str, samples: tuple[Sample, ...], function: bool | str = True,
          method: bool = False, inplace: bool = False, inplace_function: bool = False,
          renames: dict[str, str] | None = None, drops: tuple[str, ...] = (), kernel: Callable | None = None,
          namespace: str | None = None, node: str | None = None) -> Callable:
    """Declare op ``name`` as another name of the declared op ``of``: the same kernel, gradient
    formula and flags (not its operators or hot-path hint), under its own name, docstring and
    samples, with the public function, and the method and in-place method if asked
    (``inplace_function``: the in-place form as a function too, as ``op``'s).

    ``renames={"dim0": "axis0"}`` gives parameters other names (``swapaxes``); ``drops`` leaves
    out trailing parameters with defaults (``true_divide`` is ``div`` without ``rounding_mode``).
    ``kernel`` replaces the kernel where the alias must name itself in errors (``concat``); it takes
    the target's parameters. ``function="erf", namespace="tensormodes.special"`` makes the public
    function ``tensormodes.special.erf``. Its backward node is its target's (``ErfBackward0``;
    ``clip``: ``clamp``'s), as PyTorch's composite aliases record, unless ``node=`` names another. Returns the
    alias's kernel, for the declaring module to bind (its
    docstring is the module's doctest).
    """
    table = _tables()[0]
    target = table[of]
    renames = renames or {}
    parameters = [p.replace(name=renames.get(p.name, p.name)) for p in target.signature.parameters.values()
                  if p.name not in drops]
    signature = target.signature.replace(parameters=parameters)
    source = kernel or target.kernel
    # A new function object with the same code: the alias costs no extra call, and has its own
    # name, docstring and module (where doctest finds it).
    alias_kernel = types.FunctionType(source.__code__, source.__globals__, name, source.__defaults__,
                                      source.__closure__)
    alias_kernel.__kwdefaults__ = source.__kwdefaults__
    alias_kernel.__doc__ = doc
    alias_kernel.__qualname__ = name
    alias_kernel.__module__ = sys._getframe(1).f_globals["__name__"]
    alias_kernel.__signature__ = signature
    inplace_name = f"{name}_" if inplace else None
    table[name] = dataclasses.replace(
        target, name=name, kernel=alias_kernel, signature=signature,
        tensor_params={renames.get(k, k): v for k, v in target.tensor_params.items() if k not in drops},
        function=name if function is True else (function or None), method=name if method else None,
        inplace=inplace_name, inplace_function=inplace and inplace_function, dunders=(),
        namespace=namespace or target.namespace, node=node or target.node or of,
        doc=inspect.cleandoc(doc), samples=samples, ufunc=None, grad=_renamed_formula(target.grad, renames, drops),
        save_only_for={renames.get(k, k): renames.get(v, v) for k, v in target.save_only_for.items()},
        alias_of=of, errors=())
    return alias_kernel


def _renamed_formula(formula: Callable | None, renames: dict[str, str], drops: tuple[str, ...]):
    """``formula`` asking for the alias's parameter names (it is called positionally)."""
    if formula is None or not (renames or drops):
        return formula
    signature = inspect.signature(formula)
    kept = [p for p in signature.parameters.values() if p.name not in drops]
    if [p.name for p in kept] != list(signature.parameters)[:len(kept)]:
        raise ValueError(f"the gradient formula {formula.__name__} takes a dropped parameter before a kept one")

    def renamed(*arguments):
        return formula(*arguments)

    renamed.__name__ = renamed.__qualname__ = formula.__name__
    renamed.__signature__ = signature.replace(
        parameters=[p.replace(name=renames.get(p.name, p.name)) for p in kept])
    return renamed
