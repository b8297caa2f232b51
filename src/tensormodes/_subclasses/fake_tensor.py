"""Fake tensors: whole programs run without data, at PyTorch's path ``torch._subclasses.fake_tensor``.

Inside ``with FakeTensorMode():`` factories make ``FakeTensor``s, which report a real device
(``cpu``) but hold only shape, dtype and strides (a ``MetaArray``), and every op on them runs
its *meta rule* — the rule every op declares next to its kernel, checked against real runs —
so shapes, dtypes and strides propagate exactly as a real run would compute them. Autograd
records on fake tensors as on real ones, so a model's forward, backward and optimizer step run
too. Real tensors enter through ``mode.from_tensor(t)``.

>>> import tensormodes as tm
>>> from tensormodes._subclasses.fake_tensor import FakeTensorMode
>>> with FakeTensorMode():
...     x = tm.empty(10**6, 10**6)      # a trillion elements, no memory
...     y = (x @ x.T).sum(0)
>>> y
FakeTensor(..., size=(1000000,))
>>> y.device, y.stride()
(device(type='cpu'), (1,))

Ops whose result needs the data raise: ``DataDependentOutputException`` for values
(``.item()``, ``equal``), ``DynamicOutputShapeException`` for shapes (``nonzero``, boolean-mask
indexing), each naming the aten op as PyTorch does. Tensors made from Python data
(``tm.tensor(0.0)``) with at most one element keep their value (PyTorch's *constants*), so
``.item()`` of an optimizer's step counter still works.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from .. import _dtype as dt
from .._api import namespace as tm
from .._api.dispatch_modes import TorchDispatchMode, disable_current_modes
from .._api.meta_tensor import MetaTensor as _META_TENSOR
from .._api.parameter import Parameter
from .._api.tensor import Tensor
from .._api.tensor_str import PRINT_OPTS
from .._autograd.nodes import Node, grad_edge, next_sequence_nr
from .._device import device
from .._dispatch.aten import Tag, aten
from .._dispatch.python_dispatch import disabled_torch_dispatch_impl
from .._meta_array import MetaArray, WrapperArray
from .._overrides.dispatch import _disabled_torch_function_impl
from .._symbolic import SYMBOLS_MADE, ShapeEnv
from .._tensor_base import TensorBase
from .unbacked import has_symbolic, run_unbacked, unbacked_scalar

__all__ = ["FakeTensor", "FakeTensorMode", "DataDependentOutputException", "DynamicOutputShapeException",
           "UnsupportedFakeTensorException", "DispatchCacheInfo"]


# -- exceptions (PyTorch's: dataclasses, so ``str(e)`` is the op's name) -------------------------

@dataclass
class UnsupportedFakeTensorException(RuntimeError):
    """A tensor that cannot become fake (``from_tensor`` of a wrapper subclass ...)."""

    reason: str


@dataclass
class DynamicOutputShapeException(RuntimeError):
    """An op whose output *shape* depends on the input's values (``nonzero``, ``x[mask]``,
    ``unique``): it cannot run without data. ``str(e)`` names the op: ``aten.nonzero.default``."""

    func: object


@dataclass
class DataDependentOutputException(RuntimeError):
    """An op whose output is a Python value computed from the data (``.item()``, ``equal``):
    it cannot run without data. ``str(e)`` names the op: ``aten._local_scalar_dense.default``."""

    func: object


@dataclass
class DispatchCacheInfo:
    """The state of the fake-tensor dispatch cache (``FakeTensorMode.cache_info()``): ``hits``,
    ``misses``, ``bypasses`` (reason -> count of calls that could not be cached) and ``size``."""

    hits: int
    misses: int
    bypasses: dict
    size: int


_LOCAL_SCALAR_DENSE = aten._local_scalar_dense.default
_new = object.__new__
_CPU = device("cpu")
_META = device("meta")


# -- the tensor --------------------------------------------------------------------------------

class FakeTensor(Tensor):
    """A tensor with metadata and no data, owned by a ``FakeTensorMode`` (``fake_mode``).

    It reports the device it fakes (``cpu``; ``is_meta`` is False) while holding a
    ``MetaArray``: every op on it runs the op's meta rule. Used outside its mode, an op enters
    the mode for the call (PyTorch's behaviour), so results are fake too.
    """

    __torch_function__ = _disabled_torch_function_impl
    fake_mode = None  # set per tensor; None only for a moment (a Parameter made from a fake one)
    constant = None  # a real tensor holding the value, for tensors made from Python data (numel <= 1)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        """Reached when no ``FakeTensorMode`` handled the call: the tensor's mode runs it."""
        for kind in types:
            if not issubclass(kind, FakeTensor):
                return NotImplemented  # another subclass's handler unwraps first
        mode = _mode_of(args, kwargs)
        with mode:
            return func(*args, **(kwargs or {}))

    @property
    def device(self):
        """The device this tensor fakes: ``cpu``."""
        return _CPU

    @property
    def fake_device(self):
        """The device this tensor fakes (PyTorch's name)."""
        return _CPU

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    def __repr__(self, *, tensor_contents=None) -> str:
        return fake_repr(self)

    def tolist(self):
        """The values, for a tensor made from Python data; else, with a ``shape_env`` (``make_fx``'s
        fake tracing), unbacked symbols read as PyTorch reads them (``unbind`` then ``item`` per
        element); else ``DataDependentOutputException`` naming ``aten._local_scalar_dense.default``,
        as PyTorch. (``item()``, ``bool()``, ``int()`` ... reach that op, which the mode runs on a
        constant and refuses otherwise.)"""
        if self.constant is None and self.fake_mode is not None and self.fake_mode.shape_env is not None:
            if not self._data.shape:
                return self.item()
            return [row.tolist() for row in self.unbind(0)]
        return _constant_of(self).tolist()

    def cpu(self, memory_format=None):
        """The tensor on the CPU, where it already is: itself."""
        return self

    def to(self, *args, **kwargs):
        """``Tensor.to`` for a tensor whose data is a ``MetaArray`` standing for ``cpu``: a move
        to the cpu is no move (``to(other)`` reads ``other``'s dtype)."""
        if args and isinstance(args[0], FakeTensor):
            args = (_META, args[0].dtype, *args[1:])
        args = tuple(_META if _is_cpu(a) else a for a in args)
        if "device" in kwargs and _is_cpu(kwargs["device"]):
            kwargs = {**kwargs, "device": _META}
        return Tensor.to(self, *args, **kwargs)

    def numpy(self, *, force: bool = False):
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")


class FakeParameter(FakeTensor, Parameter):
    """A fake ``nn.Parameter`` (``isinstance(p, nn.Parameter)`` holds; printed as PyTorch's
    ``Parameter(FakeTensor(...))``)."""

    __torch_function__ = _disabled_torch_function_impl

    def __repr__(self, *, tensor_contents=None) -> str:
        return fake_repr(self)


FakeParameter.__name__ = FakeParameter.__qualname__ = "FakeTensor"
# What a fake tensor's aliases of another class become (``Parameter(fake)``, ``p.data``).
FakeTensor._alias_classes = {Tensor: FakeTensor, Parameter: FakeParameter}
_FAKE_CLASSES = frozenset({FakeTensor, FakeParameter})


class Error(Node):
    """The history of a fake tensor converted from a non-leaf (PyTorch's ``DelayedError`` node,
    printed ``<Error object at ...>``): gradients flow to the fake leaf below it for
    ``autograd.grad``, but a backward pass through it raises, as the real history is not there."""

    def __init__(self, leaf: FakeTensor) -> None:
        self.leaf = leaf  # kept alive: the node's AccumulateGrad holds only a weak reference
        self.next_functions = (grad_edge(leaf),)
        self._sequence_nr = next_sequence_nr()

    def name(self) -> str:
        return "torch::autograd::Error"

    def apply(self, grads: tuple) -> tuple:
        raise RuntimeError("Internal error: Tried to backward() through example input")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


def fake_repr(t: FakeTensor) -> str:
    """PyTorch's ``repr`` of a fake tensor: ``FakeTensor(..., size=(2, 3))``, with the dtype
    when it is not the default float dtype, and ``grad_fn`` or ``requires_grad``."""
    data = t._data
    parts = [f"FakeTensor(..., size={tuple(data.shape)}"]
    d = dt.NP_TO_DTYPE[data.dtype]
    if d is not dt.get_default_dtype():
        parts.append(f"dtype={d!r}")
    if t._grad_fn is not None:
        node = t._grad_fn
        name = node.name() if hasattr(node, "name") else type(node).__name__
        parts.append(f"grad_fn=<{name.rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        parts.append("requires_grad=True")
    text = ", ".join(parts) + ")"
    return f"Parameter({text})" if isinstance(t, Parameter) else text


def _constant_of(t: FakeTensor):
    """The real value behind ``t``, or PyTorch's error for reading data a fake tensor lacks."""
    if t.constant is None:
        raise DataDependentOutputException(_LOCAL_SCALAR_DENSE)
    return t.constant


def _is_cpu(value) -> bool:
    return (type(value) is str and value.split(":")[0] == "cpu") or (type(value) is device and value.type == "cpu")


def _mode_of(args, kwargs):
    for value in (*args, *(kwargs or {}).values()):
        for item in (value if type(value) is list or type(value) is tuple else (value,)):
            if isinstance(item, FakeTensor) and item.fake_mode is not None:
                return item.fake_mode
    return FakeTensorMode()



# -- the mode ----------------------------------------------------------------------------------

_LIFTS = frozenset(getattr(aten, name).default for name in ("lift_fresh", "lift", "lift_fresh_copy")
                   if hasattr(aten, name))
_UNSAFE_VIEW = aten._unsafe_view.default
_INDEX = aten.index.Tensor
_NONZERO = aten.nonzero.default
_MASK_DTYPES = frozenset({np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8)})
class _OpInfo:
    """What the mode needs to know of an overload, computed once (tags and kinds are fixed):
    why its calls are never cached (None: they are), whether it is random, writes into an
    argument, is a factory, and whether its result depends on the data (its tags say so)."""

    __slots__ = ("reason", "random", "writes", "factory", "data_dependent")

    def __init__(self, func) -> None:
        tags = func.tags
        self.reason = _static_reason(func)
        self.random = Tag.nondeterministic_seeded in tags
        self.writes = func._kind != "functional" or func._opdef.mutates
        # a factory making its tensor on a device: made on the meta device instead
        self.factory = func._opdef.factory and any(a.name == "device" for a in func._schema.arguments)
        self.data_dependent = Tag.data_dependent_output in tags or Tag.dynamic_output_shape in tags


_INFO: dict = {}


def _info(func) -> _OpInfo:
    info = _INFO.get(func)
    if info is None:
        info = _INFO[func] = _OpInfo(func)
    return info


def _static_reason(func) -> str | None:
    """Why calls of ``func`` are never cached, or None: data-dependent and dynamic-shape ops
    (they raise), random ops, ops that write into an argument, views (their results alias their
    input), and lifts (which read data)."""
    tags = func.tags
    if Tag.data_dependent_output in tags:
        return "data dependent output"
    if Tag.dynamic_output_shape in tags:
        return "dynamic output shape"
    if func in _LIFTS:
        return "lift"
    if Tag.nondeterministic_seeded in tags:
        return "random"
    if Tag.inplace_view in tags:
        return "inplace view"
    opdef = func._opdef
    if func._kind != "functional" or opdef.mutates:
        return "inplace"
    if func.is_view:
        return "view"
    if func is _UNSAFE_VIEW:
        return "unsafe view"
    return None


# The dispatch cache, shared by every mode as PyTorch's (``FakeTensorMode.cache``): key -> the
# output's metadata; the hit and miss counts; reason -> count of calls that bypassed it.
_CACHE: dict = {}
_COUNTS = [0, 0]
_BYPASSES: dict = {}
_SCALARS = frozenset({int, float, bool, complex, str, type(None)})


class FakeTensorMode(TorchDispatchMode):
    """Runs every op on fake tensors (see the module docstring): factories called in the mode
    make ``FakeTensor``s, ops on them propagate metadata with the ops' meta rules.

    ``allow_non_fake_inputs=False``: a real tensor meeting a fake one in an op raises PyTorch's
    AssertionError naming the option; with True it is converted (``from_tensor``).
    ``shape_env``: a ``tensormodes.fx.experimental.symbolic_shapes.ShapeEnv`` (``make_fx``'s fake
    tracing passes one), with which reading a value (``.item()``, ``tolist()``) gives an unbacked
    symbol (``u0``, ``zuf0``) instead of raising ``DataDependentOutputException``, and factories,
    pointwise ops and reductions take sizes holding one (``tensormodes._subclasses.unbacked``).
    Input shapes stay static (no ``tracing_mode="symbolic"``).

    It is an *infra* mode: user dispatch modes entered inside it still run first, and see
    fake tensors. Results are cached per op and argument metadata (``cache_info()``).
    """

    cache: dict = _CACHE
    cache_bypasses: dict = _BYPASSES

    def __init__(self, *, allow_fallback_kernels: bool = True, allow_non_fake_inputs: bool = False,
                 shape_env=None, static_shapes: bool | None = None, export: bool = False) -> None:
        if shape_env is not None and not isinstance(shape_env, ShapeEnv):
            raise TypeError(f"FakeTensorMode(shape_env=...): expected a ShapeEnv, got {type(shape_env).__name__}")
        super().__init__()
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.shape_env = shape_env
        self.static_shapes = True
        self.export = export
        self._memo: dict[int, tuple] = {}

    @classmethod
    def is_infra_mode(cls) -> bool:
        return True

    @classmethod
    def cache_info(cls) -> DispatchCacheInfo:
        """Query the state of the dispatch cache."""
        return DispatchCacheInfo(_COUNTS[0], _COUNTS[1], dict(_BYPASSES), len(_CACHE))

    @classmethod
    def cache_clear(cls) -> None:
        """Clear the dispatch cache and its counts."""
        _COUNTS[0] = _COUNTS[1] = 0
        _BYPASSES.clear()
        _CACHE.clear()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"

    # -- converting real tensors ------------------------------------------------------------

    def from_tensor(self, tensor, *, static_shapes=None, source=None, symbolic_context=None, trace=True):
        """A fake tensor with ``tensor``'s shape, dtype, strides, ``requires_grad`` and gradient
        (a Parameter gives a fake Parameter); the same one for the same tensor (memoized)."""
        if isinstance(tensor, FakeTensor):
            if tensor.fake_mode is None:
                tensor.fake_mode = self
            elif tensor.fake_mode is not self:
                raise AssertionError(f"Mixing fake modes NYI x.fake_mode={tensor.fake_mode} vs self={self}")
            return tensor
        if not isinstance(tensor, TensorBase):
            raise TypeError(f"from_tensor(): expected a Tensor, got {type(tensor).__name__}")
        known = self._memo.get(id(tensor))
        if known is not None and known[0]() is tensor:
            return known[1]
        fake = self._convert_with_history(tensor)
        if tensor._grad is not None:
            fake._grad = self.from_tensor(tensor._grad)
        key = id(tensor)
        memo = self._memo
        memo[key] = (weakref.ref(tensor, lambda _, key=key: memo.pop(key, None)), fake)
        return fake

    def _convert_with_history(self, tensor) -> FakeTensor:
        """PyTorch's meta converter: a view becomes the same view (``as_strided``) of its fake
        base, sharing the base's fake storage, ``_base`` and version counter, with
        ``AsStridedBackward0`` when the real view has history; a non-leaf gets history that
        refuses backward (PyTorch's ``Error`` node) above a fake leaf requiring grad."""
        base = tensor._view_base
        if base is not None and type(tensor._data) is not WrapperArray:
            fake_base = self.from_tensor(base)
            with disable_current_modes(), self, tm.set_grad_enabled(tensor._grad_fn is not None):
                fake = aten.as_strided.default(fake_base, tensor.shape, tensor.stride(), tensor.storage_offset())
            if tensor._requires_grad and fake._grad_fn is None:
                fake._requires_grad = True  # a view made under no_grad of a leaf requiring grad, as PyTorch's
            return fake
        fake = self._convert(tensor)
        if tensor._grad_fn is None:
            return fake
        out = _new(FakeTensor)
        out._data = fake._data
        out._requires_grad = True
        out._grad_fn = Error(fake)
        out.fake_mode = self
        return out

    def _convert(self, tensor) -> FakeTensor:
        data = tensor._data
        if type(data) is WrapperArray:
            raise UnsupportedFakeTensorException(
                f"from_tensor(): a wrapper subclass ({type(tensor).__name__}) holds no data of its own; convert "
                "the tensors it wraps instead")
        if type(data) is MetaArray:
            meta = MetaArray(data.shape, data.dtype, data.elem_strides, data.offset)
        else:
            offset = tensor.storage_offset() if tensor._view_base is not None else 0
            meta = MetaArray(data.shape, data.dtype, tuple(s // data.itemsize for s in data.strides), offset)
        fake = _new(FakeParameter if isinstance(tensor, Parameter) else FakeTensor)
        fake._data = meta
        fake._requires_grad = tensor._requires_grad
        fake.fake_mode = self
        return fake

    def _lift(self, tensor) -> FakeTensor:
        """A tensor just made from Python data entering the program: fake, keeping a small
        one's value (PyTorch's constants)."""
        fake = self._convert(tensor)
        if tensor._data.size <= 1:
            fake.constant = tensor
        return fake

    # -- running ops --------------------------------------------------------------------------

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        """Run ``func`` on fake tensors: from the cache when the same op met the same metadata
        before, else by its meta rule."""
        for kind in types:
            if kind is not FakeTensor and kind is not FakeParameter and not issubclass(kind, FakeTensor):
                return NotImplemented  # another subclass unwraps first, then calls us on its inner tensors
        if kwargs is None:
            kwargs = {}
        info = _INFO.get(func)
        if info is None:
            info = _info(func)
        reason = info.reason
        if reason is None:
            key = _cache_key(func, args, kwargs)
            if type(key) is tuple:
                try:
                    entry = _CACHE.get(key)
                except TypeError:
                    reason = "unhashable argument"
                else:
                    if entry is not None:
                        _COUNTS[0] += 1
                        if type(entry) is MetaArray:  # one tensor: the common case, inline
                            data = _new(MetaArray)
                            data.shape = entry.shape
                            data.dtype = entry.dtype
                            data.elem_strides = entry.elem_strides
                            data.offset = 0
                            data.base = None
                            t = _new(FakeTensor)
                            t._data = data
                            t._requires_grad = False
                            t.fake_mode = self
                            return t
                        return self._from_entry(entry)
                    return self._dispatch_and_cache(key, func, args, kwargs)
            else:
                reason = key
        _BYPASSES[reason] = _BYPASSES.get(reason, 0) + 1
        return self._dispatch(func, args, kwargs)

    def _dispatch_and_cache(self, key: tuple, func, args, kwargs):
        out = self._dispatch(func, args, kwargs)
        entry = _entry_of(out)
        if entry is None:
            _BYPASSES["non-FakeTensor output"] = _BYPASSES.get("non-FakeTensor output", 0) + 1
            return out
        _CACHE[key] = entry
        _COUNTS[1] += 1
        return out

    def _from_entry(self, entry):
        if type(entry) is MetaArray:
            t = _new(FakeTensor)
            t._data = MetaArray(entry.shape, entry.dtype, entry.elem_strides)
            t._requires_grad = False
            t.fake_mode = self
            return t
        kind, items = entry
        made = [self._from_entry(item) for item in items]
        return kind(*made) if hasattr(kind, "_fields") else kind(made)

    def _dispatch(self, func, args, kwargs):
        """The uncached path: check the inputs, then constants, data-dependent ops, the meta rule."""
        args, kwargs = self._check_inputs(func, args, kwargs)
        if func in _LIFTS:
            value = args[0] if args else kwargs["self"]
            return value if isinstance(value, FakeTensor) else self._lift(value)
        info = _info(func)
        if not info.random and _all_constant(args, kwargs):
            return self._run_on_constants(func, args, kwargs)
        if info.data_dependent:
            if func is _LOCAL_SCALAR_DENSE and self.shape_env is not None:
                value = unbacked_scalar(self.shape_env, args[0])
                if value is not None:
                    return value
            _raise_if_data_dependent(func, args, kwargs)
        if info.factory:
            kwargs = {**kwargs, "device": _META}
        if info.writes:
            _drop_constants(args, kwargs)
        if SYMBOLS_MADE[0] and has_symbolic(args, kwargs):  # only once some trace has read a value
            return run_unbacked(func, args, kwargs, info.writes,
                                lambda a, k: self._adopt(disabled_torch_dispatch_impl(func, (), a, k)))
        out = disabled_torch_dispatch_impl(func, (), args, kwargs)
        return self._adopt(out)

    def _check_inputs(self, func, args, kwargs):
        """Real tensors among the arguments: PyTorch's error, or converted when allowed."""
        real = False
        for value in (*args, *kwargs.values()) if kwargs else args:
            for item in (value if type(value) is list or type(value) is tuple else (value,)):
                kind = type(item)
                if kind is FakeTensor or kind is FakeParameter:
                    if item.fake_mode is None:
                        item.fake_mode = self
                elif kind is _META_TENSOR:
                    # made from a fake tensor by the library's own bookkeeping (autograd's seeds,
                    # a gradient formula's zeros): a fake tensor in all but its class
                    item.__class__ = FakeTensor
                    item.fake_mode = self
                elif isinstance(item, TensorBase) and not isinstance(item, FakeTensor):
                    real = True
        if not real or func in _LIFTS:
            return args, kwargs
        if not self.allow_non_fake_inputs:
            raise AssertionError("Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode "
                                 f"with 'allow_non_fake_inputs'. Found in {render_call(func, args, kwargs)}")
        return _map_tensors(args, self.from_tensor), {k: _map_tensors((v,), self.from_tensor)[0]
                                                       for k, v in kwargs.items()}

    def _run_on_constants(self, func, args, kwargs):
        """Every tensor argument holds a value: run the op for real (PyTorch's constant propagation);
        a result of at most one element keeps its value."""
        real_args = _map_tensors(args, _constant_or_self)
        real_kwargs = {k: _map_tensors((v,), _constant_or_self)[0] for k, v in kwargs.items()}
        out = disabled_torch_dispatch_impl(func, (), real_args, real_kwargs)
        if _info(func).writes:
            return args[0]  # the fake tensor written, whose constant was written
        return _map_tensors((out,), self._fake_of_real)[0]

    def _fake_of_real(self, tensor):
        fake = self._convert(tensor)
        fake._requires_grad = False
        if tensor._data.size <= 1:
            fake.constant = tensor
        return fake

    def _adopt(self, out):
        """The meta rule's results (plain meta tensors) become this mode's fake tensors; so do
        real ones (a factory reading data, ``from_numpy``), keeping a small one's value."""
        kind = type(out)
        if kind is _META_TENSOR:
            out.__class__ = FakeTensor
            out.fake_mode = self
        elif kind is tuple or kind is list or isinstance(out, tuple):
            items = [self._adopt(item) for item in out]
            return kind(*items) if hasattr(kind, "_fields") else kind(items)
        elif isinstance(out, FakeTensor):
            if out.fake_mode is None:
                out.fake_mode = self
        elif isinstance(out, TensorBase) and type(out._data) is np.ndarray:
            return self._fake_of_real(out)
        return out


def _cache_key(func, args, kwargs):
    """The cache key of a call (a tuple), or the reason it has none (a str)."""
    parts = [func, dt.get_default_dtype()]
    for value in args:
        kind = type(value)
        if kind is FakeTensor and value.constant is None:  # the common case, inline
            data = value._data
            parts += (data.shape, data.dtype, data.elem_strides)
        elif kind in _SCALARS:
            parts += (kind, value)
        else:
            reason = _add_metadata(parts, (value,))
            if reason is not None:
                return reason
    reason = None
    if kwargs:
        for name, value in kwargs.items():
            parts.append(name)
            reason = _add_metadata(parts, (value,))
            if reason is not None:
                break
    return tuple(parts) if reason is None else reason


def _add_metadata(parts: list, values) -> str | None:
    """Append what decides an op's result metadata: a fake tensor's shape, dtype and strides,
    a list's items, another value's type and value (``1`` and ``1.0`` differ)."""
    for value in values:
        kind = type(value)
        if kind is FakeTensor or kind is FakeParameter or kind is _META_TENSOR:
            if getattr(value, "constant", None) is not None:
                return "constant attribute"
            data = value._data
            parts.append(data.shape)
            parts.append(data.dtype)
            parts.append(data.elem_strides)
        elif kind is list or kind is tuple:
            parts.append(kind)
            parts.append(len(value))
            reason = _add_metadata(parts, value)
            if reason is not None:
                return reason
        elif isinstance(value, TensorBase):
            return "non-fake tensor"
        else:
            parts.append(kind)
            parts.append(value)
    return None


def _entry_of(out):
    """What the cache keeps of an op's result: a fake tensor's MetaArray (copied, never handed out), or the
    container's type and its items' entries (a list); None when the result is anything else."""
    kind = type(out)
    if kind is FakeTensor:
        data = out._data
        return MetaArray(data.shape, data.dtype, data.elem_strides)
    if isinstance(out, (tuple, list)) and out:
        items = [_entry_of(item) for item in out]
        if all(type(item) is MetaArray for item in items):
            return [kind, items]
    return None


def _all_constant(args, kwargs) -> bool:
    """True when there are tensor arguments and each holds a value (a fake tensor's constant)."""
    seen = False
    for value in (*args, *kwargs.values()) if kwargs else args:
        for item in (value if type(value) is list or type(value) is tuple else (value,)):
            if isinstance(item, TensorBase):
                if not isinstance(item, FakeTensor) or item.constant is None:
                    return False
                seen = True
    return seen


def _drop_constants(args, kwargs) -> None:
    """An op writing into fake tensors without running for real: their values are unknown now."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, FakeTensor) and value.constant is not None:
            value.constant = None


def _constant_or_self(value):
    return value.constant if isinstance(value, FakeTensor) else value


def _map_tensors(values, fn) -> tuple:
    """``values`` with ``fn`` applied to each tensor (in lists and tuples too)."""
    out = []
    for value in values:
        kind = type(value)
        if kind is list or kind is tuple:
            out.append(kind(fn(v) if isinstance(v, TensorBase) else v for v in value))
        elif isinstance(value, TensorBase):
            out.append(fn(value))
        else:
            out.append(value)
    return tuple(out)


def _raise_if_data_dependent(func, args, kwargs) -> None:
    """PyTorch's exceptions for ops whose result depends on the data: boolean-mask indexing
    runs ``nonzero`` (integer indices have static shapes)."""
    tags = func.tags
    if Tag.data_dependent_output in tags:
        raise DataDependentOutputException(func)
    if Tag.dynamic_output_shape in tags:
        if func is _INDEX:
            indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
            if any(isinstance(i, TensorBase) and i._data.dtype in _MASK_DTYPES for i in indices):
                raise DynamicOutputShapeException(_NONZERO)
            return
        raise DynamicOutputShapeException(func)


def render_call(func, args, kwargs) -> str:
    """``aten.add.Tensor(FakeTensor(..., size=(2,)), tensor([...], size=(2,)))``: a call as
    PyTorch's errors show it, tensors summarized."""
    saved = PRINT_OPTS.threshold, PRINT_OPTS.edgeitems
    try:
        PRINT_OPTS.threshold, PRINT_OPTS.edgeitems = 0, 0
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    finally:
        PRINT_OPTS.threshold, PRINT_OPTS.edgeitems = saved
    return f"{func}({', '.join(parts)})"
