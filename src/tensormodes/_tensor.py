"""``Tensor``: an ``ndarray`` with PyTorch's API, taking part in ``__torch_function__``.

The methods written here are the ones that belong to the tensor object itself
(properties, conversions, printing, Python protocols). Ops from the op table
are attached by ``_functions``. Every public callable, including each
property getter and setter, is wrapped by ``_codegen`` so that it enters the
override layer; the plain-tensor fast path costs one ``ContextVar`` read and
a few ``type(x) is Tensor`` checks.

>>> import tensormodes as tm
>>> x = tm.tensor([[1., 2.], [3., 4.]])
>>> x.shape, x.dtype
(tensormodes.Size([2, 2]), tensormodes.float32)
"""

from __future__ import annotations

import functools
import inspect
import numbers
import threading
import warnings
import weakref

import numpy as np

from . import _codegen, _dispatch
from . import _dtype as dt
from ._autograd import api as autograd_api
from ._autograd.engine import register_tensor_hook
from ._autograd.graph import bump_version, grad_edge, register_tensor_type, share_version, version_of
from ._device import CPU, check_compute_device
from ._dispatch import NO_WRAP, run_without_subclasses
from ._ops._common import public, scalar_type_name, wrap_dim
from ._ops.creation import parse_size
from ._tensor_str import PLAIN_REPR_CLASSES, tensor_repr

__all__ = ["Tensor", "Size", "BUILD_LOCK", "wrap_array", "tensor_api", "tensor_property", "finalize_tensor_class"]

_new = object.__new__


class Size(tuple):
    """The shape of a tensor: a tuple of ints with PyTorch's repr.

    >>> import tensormodes as tm
    >>> s = tm.Size([2, 3]); s, s.numel(), s[1:]
    (tensormodes.Size([2, 3]), 6, tensormodes.Size([3]))
    """

    __slots__ = ()

    def numel(self) -> int:
        """Number of elements a tensor of this shape has."""
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __repr__(self) -> str:
        return f"tensormodes.Size({list(self)})"


# -- declaring the tensor layer's own public callables ----------------------------------

_PENDING: list = []  # (name, kind, function(s), relevant) until the class exists


def tensor_api(*relevant: str, name: str | None = None, leaf: bool = True):
    """Mark a method defined in the class body as public and overridable.

    ``relevant`` names parameters besides ``self`` that may carry overrides;
    ``leaf=False`` for methods that call other public callables (so that modes
    skipping this method are popped around it, as a pass-through would be).
    """

    def mark(impl):
        _PENDING.append((name or impl.__name__, "method", impl, (relevant, leaf)))
        return impl

    return mark


def tensor_property(getter, setter=None, *, name: str, inline: str | None = None):
    """Declare a public property; its ``__get__`` / ``__set__`` are what handlers see.

    ``inline`` is the getter as an expression of ``self``, inlined into the fast path.
    """
    _PENDING.append((name, "property", (getter, setter, inline), ()))


def _relevant_for(impl, extra: tuple[str, ...]) -> list[_codegen.Relevant]:
    params = inspect.signature(impl).parameters
    names = list(params)
    relevant = [_codegen.Relevant(names[0], _codegen.TENSOR)]
    for n in extra:
        many = params[n].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        relevant.append(_codegen.Relevant(n, _codegen.ANY_LIST if many else _codegen.ANY))
    return relevant


def _make_property(cls, name: str, getter, setter, inline: str | None):
    self_only = [_codegen.Relevant("self", _codegen.TENSOR)]
    getter_fn = _codegen.make_accessor(
        name, "self", self_only, getter, f"return {inline}" if inline else "return _get(self)",
        {"_get": getter, **_INLINE_NAMES})
    setter_fn = None
    if setter is not None:
        setter_fn = _codegen.make_accessor(
            name, "self, value", self_only + [_codegen.Relevant("value", _codegen.ANY)], setter,
            "return _set(self, value)", {"_set": setter})
    prop = property(getter_fn, setter_fn, doc=getter.__doc__)
    setattr(cls, name, prop)
    # Handlers receive the property's bound accessors, which exist only now.
    _codegen.set_api(getter_fn, prop.__get__)
    _dispatch.register_overridable(cls, prop.__get__, f"tensormodes.Tensor.{name}.__get__")
    if setter_fn is not None:
        _codegen.set_api(setter_fn, prop.__set__)
        _dispatch.register_overridable(cls, prop.__set__, f"tensormodes.Tensor.{name}.__set__")
    return prop


def finalize_tensor_class(cls) -> None:
    """Turn the pending declarations into dispatching callables on ``cls``: properties and
    Python protocol methods now (the interpreter looks them up on the type), the
    rest on first use (see ``lazy_tensor_attribute``)."""
    for name, kind, impl, relevant in _PENDING:
        if kind == "property":
            _make_property(cls, name, *impl)
            continue
        delattr(cls, name)
        build = functools.partial(_make_method, cls, name, impl, *relevant)
        if name.startswith("__"):
            build()
        else:
            lazy_tensor_attribute(name, build)
    _PENDING.clear()


def _make_method(cls, name: str, impl, relevant: tuple[str, ...], leaf: bool):
    if not has_tensor_attribute(name):
        func = _codegen.make_callable(
            name, inspect.signature(impl), _relevant_for(impl, relevant), impl, leaf=leaf,
            qualname=f"Tensor.{name}", doc=impl.__doc__, module="tensormodes")
        setattr(cls, name, func)
        _dispatch.register_overridable(cls, func, f"tensormodes.Tensor.{name}")
    return cls.__dict__[name]


# Held while generating any public callable: threads reaching one not generated yet build
# and register it once. Reentrant: building one callable may build another.
BUILD_LOCK = threading.RLock()


class _LazyAttribute:
    """Stands in the Tensor class for an attribute generated on first access: ``build()``
    generates it and sets it on the class, replacing this placeholder.

    A placeholder in the class rather than a ``__getattr__``: CPython specialises
    attribute reads only on classes without ``__getattr__``, and every call reads
    tensor attributes (``t._data``) many times.
    """

    __slots__ = ("_name", "_build")

    def __init__(self, name: str, build) -> None:
        self._name, self._build = name, build

    def ensure_built(self) -> None:
        with BUILD_LOCK:
            if Tensor.__dict__.get(self._name) is self:
                self._build()

    def __get__(self, instance, owner=None):
        self.ensure_built()
        real = Tensor.__dict__[self._name]
        if type(real) is _LazyAttribute:
            raise RuntimeError(f"building Tensor.{self._name} did not define it")
        get = getattr(type(real), "__get__", None)
        return real if get is None else get(real, instance, owner)


def lazy_tensor_attribute(name: str, build) -> None:
    """Declare a Tensor attribute that is generated on first access."""
    placeholder = _LazyAttribute(name, build)
    setattr(Tensor, name, placeholder)
    _dispatch.BUILD_ALL.append(placeholder.ensure_built)


def has_tensor_attribute(name: str) -> bool:
    """True if ``Tensor.<name>`` exists, not counting a placeholder for one not generated yet."""
    attribute = Tensor.__dict__.get(name)
    return attribute is not None and type(attribute) is not _LazyAttribute


# -- wrapping arrays ---------------------------------------------------------------------

def wrap_array(array: np.ndarray) -> Tensor:
    """A plain Tensor over ``array`` (no copy)."""
    t = _new(Tensor)
    t._data = array
    t._requires_grad = False
    return t


def _as_array(data, dtype: dt.dtype | None) -> np.ndarray:
    """``data`` (nested sequences, scalars, tensors, arrays) as an ndarray with PyTorch's
    dtype inference: Python floats give the default dtype, ints int64, bools bool."""
    if isinstance(data, Tensor):
        array = data._data
    elif isinstance(data, np.ndarray):
        array = data
    else:
        array = np.asarray(_unwrap_nested(data))
        if dtype is None:
            dtype = _infer_dtype(array)
    if dtype is not None:
        return array.astype(dtype._np, copy=False)
    if array.dtype not in dt.NP_TO_DTYPE:
        dt.from_numpy_dtype(array.dtype)
    return array


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def _infer_dtype(array: np.ndarray) -> dt.dtype:
    kind = array.dtype.kind
    if kind == "f":
        return dt.get_default_dtype() if array.dtype == np.float64 else dt.NP_TO_DTYPE[array.dtype]
    if kind == "c":
        return dt.default_complex_dtype() if array.dtype == np.complex128 else dt.NP_TO_DTYPE[array.dtype]
    if kind == "b":
        return dt.bool
    if kind in "iu":
        return dt.int64 if array.dtype.itemsize == 8 or kind == "i" else dt.NP_TO_DTYPE.get(array.dtype, dt.int64)
    if kind == "O" and array.size == 0:
        return dt.get_default_dtype()
    raise TypeError(f"Could not infer dtype of {type(array.flat[0]).__name__}")


class Tensor:
    """A multi-dimensional array with PyTorch's API, backed by a NumPy ``ndarray``.

    ``Tensor(data)`` and ``Tensor(*sizes)`` follow PyTorch's legacy constructor (the
    default dtype, or aliasing an existing tensor); prefer ``tensormodes.tensor``.

    >>> import tensormodes as tm
    >>> tm.Tensor([1, 2]), tm.Tensor(2, 3).shape
    (tensor([1., 2.]), tensormodes.Size([2, 3]))
    """

    # ``_requires_grad`` is a slot (tested on every call of the fast path: a slot reads
    # faster than a class default), set wherever a tensor is created; the rest of the
    # autograd state lives in class defaults so a fresh tensor costs two attribute sets.
    __slots__ = ("_data", "_requires_grad", "__dict__", "__weakref__")
    _grad = None
    _grad_fn = None
    _output_nr = 0  # which output of _grad_fn this tensor is
    _grad_accumulator = None  # a leaf's AccumulateGrad node, once it has one
    _history_gen = 0  # bumped by in-place changes; a view made under an older one of its base is stale
    _view_base = None
    _has_views = False  # set on a base when a view of it is made (see _autograd.graph.refresh_views_of)
    __array_priority__ = 1000  # NumPy defers ``ndarray + Tensor`` to Tensor.__radd__

    def __new__(cls, *args, device=None):
        if device is not None:
            check_compute_device(device)
        if len(args) == 1 and isinstance(args[0], Tensor):
            return _alias(args[0], cls)
        if args and all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            array = np.empty(tuple(int(a) for a in args), dt.get_default_dtype()._np)
        elif len(args) == 1:
            array = np.asarray(_unwrap_nested(args[0]), dtype=dt.get_default_dtype()._np)
        elif not args:
            array = np.empty((0,), dt.get_default_dtype()._np)
        else:
            raise TypeError(f"Tensor(): invalid arguments {args!r}: expected data or sizes")
        t = _new(cls)
        t._data = array
        t._requires_grad = False
        return t

    def __init__(self, *args, **kwargs) -> None:
        # Construction happens in __new__; subclasses may define their own __init__.
        pass

    @staticmethod
    def _make_subclass(cls, data: Tensor, require_grad: bool = False) -> Tensor:
        """A ``cls`` instance sharing ``data``'s storage (PyTorch's subclass hook).

        >>> import tensormodes as tm
        >>> class Sub(tm.Tensor): pass
        >>> type(tm.Tensor._make_subclass(Sub, tm.ones(2))).__name__
        'Sub'
        """
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"_make_subclass(): cls must be a subclass of Tensor, got {cls!r}")
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): data must be a Tensor, not {type(data).__name__}")
        t = _alias(data, cls)
        if require_grad:
            t._requires_grad = True
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default override: run ``func`` with subclass handling disabled and turn
        Tensor results into ``cls``.

        Returns ``NotImplemented`` unless ``cls`` is a subclass of every type in
        ``types``; results of the no-wrap functions (``Tensor.grad.__get__`` ...)
        are returned as they are.
        """
        if kwargs is None:
            kwargs = {}
        if not (len(types) == 1 and types[0] is cls):
            for t in types:
                if not issubclass(cls, t):
                    return NotImplemented
        result = run_without_subclasses(func, args, kwargs)
        if func in NO_WRAP:
            return result
        return _convert(result, cls)

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (type(self), self._data, self._requires_grad))

    # -- methods of the tensor object itself ---------------------------------------------

    @tensor_api()
    def size(self, dim: int | None = None):
        """The shape as a ``Size``, or the size of dimension ``dim``.

        >>> import tensormodes as tm
        >>> tm.zeros(2, 3).size(), tm.zeros(2, 3).size(-1)
        (tensormodes.Size([2, 3]), 3)
        """
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    @tensor_api()
    def dim(self) -> int:
        """Number of dimensions.

        >>> import tensormodes as tm
        >>> tm.zeros(2, 3).dim()
        2
        """
        return self._data.ndim

    @tensor_api()
    def ndimension(self) -> int:
        """Alias of ``dim()``.

        >>> import tensormodes as tm
        >>> tm.zeros(2, 3).ndimension()
        2
        """
        return self._data.ndim

    @tensor_api()
    def numel(self) -> int:
        """Number of elements.

        >>> import tensormodes as tm
        >>> tm.zeros(2, 3).numel()
        6
        """
        return self._data.size

    @tensor_api()
    def nelement(self) -> int:
        """Alias of ``numel()``.

        >>> import tensormodes as tm
        >>> tm.zeros(2, 3).nelement()
        6
        """
        return self._data.size

    @tensor_api()
    def element_size(self) -> int:
        """Bytes per element.

        >>> import tensormodes as tm
        >>> tm.zeros(2, dtype=tm.float64).element_size()
        8
        """
        return self._data.itemsize

    @tensor_api()
    def stride(self, dim: int | None = None):
        """Strides in elements (PyTorch's unit, not bytes).

        >>> import tensormodes as tm
        >>> tm.zeros(2, 3).stride(), tm.zeros(2, 3).t().stride()
        ((3, 1), (1, 3))
        """
        itemsize = self._data.itemsize
        strides = tuple(s // itemsize for s in self._data.strides)
        if dim is None:
            return strides
        return strides[wrap_dim(dim, self._data.ndim)]

    @tensor_api()
    def storage_offset(self) -> int:
        """Offset in elements of this view's first element within its base's storage.

        >>> import tensormodes as tm
        >>> tm.arange(6)[2:].storage_offset()
        2
        """
        base = self._view_base
        if base is None:
            return 0
        start = base._data.__array_interface__["data"][0]
        return (self._data.__array_interface__["data"][0] - start) // self._data.itemsize

    @tensor_api()
    def data_ptr(self) -> int:
        """Address of the first element (tensors sharing memory share addresses).

        >>> import tensormodes as tm
        >>> x = tm.zeros(3); x.view(3).data_ptr() == x.data_ptr()
        True
        """
        return self._data.__array_interface__["data"][0]

    @tensor_api()
    def resize_(self, *sizes, memory_format=None) -> Tensor:
        """Give the tensor shape ``sizes`` in place, its elements kept in order as far as they
        go; new ones are zeros (PyTorch leaves them uninitialised). Shrinking keeps sharing
        memory with views; growing a tensor that shares memory with views raises.

        >>> import tensormodes as tm
        >>> tm.arange(6).resize_(2, 2)
        tensor([[0, 1],
                [2, 3]])
        """
        shape = parse_size(sizes, "size", "resize_")
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        data = self._data
        count = int(np.prod(shape))
        if count <= data.size and data.flags.c_contiguous:
            self._data = data.reshape(-1)[:count].reshape(shape)
        elif self._view_base is not None or self._has_views:
            raise RuntimeError("resize_: tensormodes cannot grow (or reorder) a tensor that shares its memory with "
                               "views; resize a clone instead")
        else:
            grown = np.zeros(shape, data.dtype)
            kept = min(count, data.size)
            grown.reshape(-1)[:kept] = data.reshape(-1)[:kept]
            self._data = grown
        bump_version(self)
        return self

    @tensor_api()
    def is_contiguous(self, memory_format=None) -> bool:
        """True if the elements are laid out row-major without gaps.

        >>> import tensormodes as tm
        >>> tm.zeros(2, 3).is_contiguous(), tm.zeros(2, 3).t().is_contiguous()
        (True, False)
        """
        return _is_contiguous(self._data)

    @tensor_api()
    def is_floating_point(self) -> bool:
        """True if the dtype is a floating-point type.

        >>> import tensormodes as tm
        >>> tm.zeros(1).is_floating_point(), tm.zeros(1, dtype=tm.int64).is_floating_point()
        (True, False)
        """
        return dt.NP_TO_DTYPE[self._data.dtype].is_floating_point

    @tensor_api()
    def is_complex(self) -> bool:
        """True if the dtype is complex.

        >>> import tensormodes as tm
        >>> tm.tensor([1j]).is_complex(), tm.zeros(1).is_complex()
        (True, False)
        """
        return self._data.dtype.kind == "c"

    @tensor_api()
    def item(self):
        """The value of a one-element tensor as a Python number.

        >>> import tensormodes as tm
        >>> tm.tensor([2.5]).item()
        2.5
        """
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return _python_scalar(self._data)

    @tensor_api()
    def tolist(self):
        """The data as (nested) Python lists of Python numbers.

        >>> import tensormodes as tm
        >>> tm.tensor([[1, 2], [3, 4]]).tolist()
        [[1, 2], [3, 4]]
        """
        data = self._data
        if data.dtype == dt.bfloat16._np:
            data = data.astype(np.float32)
        return data.tolist()

    @tensor_api()
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying ``ndarray`` (shared memory, like PyTorch).

        >>> import tensormodes as tm
        >>> tm.tensor([1, 2]).numpy()
        array([1, 2])
        """
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data

    @tensor_api()
    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """NumPy's conversion protocol: ``np.asarray(t)`` shares memory.

        >>> import numpy as np, tensormodes as tm
        >>> np.asarray(tm.tensor([1, 2]))
        array([1, 2])
        """
        if dtype is None:
            return self._data
        return self._data.astype(dtype, copy=False)

    @tensor_api()
    def __dlpack__(self, *, stream=-1, max_version: tuple[int, int] | None = None, dl_device=None,
                   copy: bool | None = None):
        """Creates a DLPack capsule of the current tensor to be exported to other libraries.

        The capsule shares this tensor's memory, and a consumer asking for DLPack 1.0
        (``max_version``, as ``np.from_dlpack`` does) receives it writable, as from PyTorch.

        >>> import numpy as np, tensormodes as tm
        >>> t = tm.zeros(2)
        >>> a = np.from_dlpack(t)
        >>> a[0] = 5; t
        tensor([5., 0.])
        """
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        if stream is not None and type(stream) is not int:
            raise TypeError("stream must be ``int`` or ``none``")
        if stream is not None and stream != -1:
            raise AssertionError("stream should be None on cpu.")
        if max_version is None or max_version[0] < 1:
            # PyTorch's unversioned capsule; NumPy marks arrays imported from one read-only.
            return self._data.__dlpack__(dl_device=dl_device, copy=copy)
        return self._data.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)

    @tensor_api()
    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack device of the data: ``(1, 0)``, the CPU (``kDLCPU``).

        >>> import tensormodes as tm
        >>> tm.ones(1).__dlpack_device__()
        (1, 0)
        """
        device_type, index = self._data.__dlpack_device__()
        return int(device_type), int(index)

    @tensor_api()
    def __repr__(self, *, tensor_contents=None) -> str:
        """PyTorch-style text.

        >>> import tensormodes as tm
        >>> tm.ones(2, requires_grad=True)
        tensor([1., 1.], requires_grad=True)
        """
        return tensor_repr(self, tensor_contents)

    @tensor_api("format_spec")
    def __format__(self, format_spec: str) -> str:
        """One-element tensors format like their Python value; others like ``repr``.

        >>> import tensormodes as tm
        >>> f"{tm.tensor(2.5):.2f}"
        '2.50'
        """
        if self._data.ndim == 0:
            return format(_python_scalar(self._data), format_spec)
        return object.__format__(self, format_spec)

    @tensor_api()
    def __len__(self) -> int:
        """Size of the first dimension (TypeError for a 0-dim tensor).

        >>> import tensormodes as tm
        >>> len(tm.zeros(4, 2))
        4
        """
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    @tensor_api()
    def __bool__(self) -> bool:
        """Truth value of a one-element tensor (RuntimeError for more elements).

        >>> import tensormodes as tm
        >>> bool(tm.tensor([3])), bool(tm.tensor(0.0))
        (True, False)
        """
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                               if self._data.size else "Boolean value of Tensor with no values is ambiguous")
        return bool(self._data.reshape(()))

    @tensor_api()
    def __float__(self) -> float:
        """The value of a one-element tensor as a float.

        >>> import tensormodes as tm
        >>> float(tm.tensor([2]))
        2.0
        """
        return float(_one_value(self))

    @tensor_api()
    def __int__(self) -> int:
        """The value of a one-element tensor as an int (truncated).

        >>> import tensormodes as tm
        >>> int(tm.tensor(-2.7))
        -2
        """
        return int(_one_value(self))

    @tensor_api()
    def __complex__(self) -> complex:
        """The value of a one-element tensor as a complex.

        >>> import tensormodes as tm
        >>> complex(tm.tensor(1.5))
        (1.5+0j)
        """
        return complex(_one_value(self))

    @tensor_api()
    def __index__(self) -> int:
        """A one-element integer tensor used as an index.

        >>> import tensormodes as tm
        >>> [10, 20, 30][tm.tensor(1)]
        20
        """
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    @tensor_api("cls")
    def as_subclass(self, cls):
        """This tensor's data as an instance of ``cls`` (a Tensor subclass), no copy.

        >>> import tensormodes as tm
        >>> class Sub(tm.Tensor): pass
        >>> type(tm.ones(2).as_subclass(Sub)).__name__
        'Sub'
        """
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
        return _alias(self, cls)

    @tensor_api()
    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` in place and return the tensor.

        >>> import tensormodes as tm
        >>> tm.zeros(2).requires_grad_().requires_grad
        True
        """
        _requires_grad_set(self, requires_grad)
        return self

    # -- autograd ------------------------------------------------------------------------

    @tensor_api("gradient", leaf=False)
    def backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False, inputs=None):
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on.

        >>> import tensormodes as tm
        >>> x = tm.tensor([1., 2.], requires_grad=True)
        >>> (x * x).sum().backward(); x.grad.tolist()
        [2.0, 4.0]
        """
        autograd_api.backward(self, gradient, retain_graph, create_graph, inputs)

    @tensor_api("hook")
    def register_hook(self, hook):
        """Call ``hook(grad)`` whenever this tensor's gradient is computed; a non-None result
        replaces the gradient. Returns a handle with ``remove()``.

        >>> import tensormodes as tm
        >>> x = tm.ones(2, requires_grad=True)
        >>> handle = x.register_hook(lambda g: g * 10)
        >>> x.sum().backward(); x.grad.tolist()
        [10.0, 10.0]
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node, output_nr = grad_edge(self)
        return register_tensor_hook(node, output_nr, hook)

    @tensor_api()
    def detach_(self):
        """Detach this tensor from the graph in place: it becomes a leaf that does not require grad.

        >>> import tensormodes as tm
        >>> y = tm.ones(2, requires_grad=True) * 2
        >>> y.detach_().requires_grad, y.is_leaf
        (False, True)
        """
        if self._view_base is not None and (self._requires_grad or self._view_base._requires_grad):
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._requires_grad = False
        self._grad_fn = None
        self.__dict__.pop("_output_nr", None)
        return self

    @tensor_api()
    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` during backward.

        >>> import tensormodes as tm
        >>> x = tm.ones(2, requires_grad=True); y = x * 3; y.retain_grad()
        >>> y.sum().backward(); y.grad.tolist()
        [1.0, 1.0]
        """
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self.__dict__.get("_retains_grad"):
            return
        self._retains_grad = True
        owner = weakref.ref(self)

        def keep(grad):
            tensor = owner()
            if tensor is not None:
                tensor._grad = grad.detach() if tensor._grad is None else tensor._grad + grad.detach()

        node, output_nr = grad_edge(self)
        register_tensor_hook(node, output_nr, keep)

    # -- conversions -------------------------------------------------------------------

    @tensor_api("args")
    def to(self, *args, **kwargs):
        """This tensor with another dtype (a copy), or itself when nothing changes.

        Accepts PyTorch's forms: ``to(dtype)``, ``to(device, dtype)``, ``to(other)``,
        with keywords ``dtype``, ``device``, ``non_blocking``, ``copy``, ``memory_format``.

        >>> import tensormodes as tm
        >>> x = tm.tensor([1, 2])
        >>> x.to(tm.float64).dtype, x.to(x) is x, x.to("cpu") is x
        (tensormodes.float64, True, True)
        """
        dtype, copy = _parse_to(self, args, kwargs)
        return _converted(self, dtype, copy)

    @tensor_api()
    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """With no argument, the tensor type name (``'tensormodes.FloatTensor'``); else ``to(dtype)``.

        >>> import tensormodes as tm
        >>> tm.zeros(1).type(), tm.zeros(1).type(tm.int64).dtype
        ('tensormodes.FloatTensor', tensormodes.int64)
        """
        if dtype is None:
            return f"tensormodes.{_TYPE_NAMES[dt.NP_TO_DTYPE[self._data.dtype]]}"
        if isinstance(dtype, str):
            by_name = {f"tensormodes.{v}": k for k, v in _TYPE_NAMES.items()}
            if dtype not in by_name:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = by_name[dtype]
        return _converted(self, dtype, False)

    @tensor_api("other")
    def type_as(self, other):
        """This tensor converted to ``other``'s dtype.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 2]).type_as(tm.zeros(1)).dtype
        tensormodes.float32
        """
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return _converted(self, dt.NP_TO_DTYPE[other._data.dtype], False)

    @tensor_api()
    def cpu(self, memory_format=None):
        """The tensor on the CPU: itself.

        >>> import tensormodes as tm
        >>> x = tm.zeros(1); x.cpu() is x
        True
        """
        return self

    @tensor_api()
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False, layout=None,
                   pin_memory: bool = False):
        """A new tensor from ``data``, with this tensor's dtype unless ``dtype`` is given.

        >>> import tensormodes as tm
        >>> tm.zeros(1, dtype=tm.float64).new_tensor([1, 2]).dtype
        tensormodes.float64
        """
        return _new_like(self, _as_array(data, dtype or dt.NP_TO_DTYPE[self._data.dtype]).copy(),
                         device, requires_grad)

    @tensor_api()
    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False, layout=None,
                  pin_memory: bool = False):
        """Zeros of ``size``, with this tensor's dtype unless ``dtype`` is given.

        >>> import tensormodes as tm
        >>> tm.zeros(1, dtype=tm.int32).new_zeros(2, 2).dtype
        tensormodes.int32
        """
        return _new_like(self, np.zeros(parse_size(size), _dtype_or(self, dtype)), device, requires_grad)

    @tensor_api()
    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False, layout=None,
                 pin_memory: bool = False):
        """Ones of ``size``, with this tensor's dtype unless ``dtype`` is given.

        >>> import tensormodes as tm
        >>> tm.zeros(1, dtype=tm.int64).new_ones(2).tolist()
        [1, 1]
        """
        return _new_like(self, np.ones(parse_size(size), _dtype_or(self, dtype)), device, requires_grad)

    @tensor_api()
    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False, layout=None,
                  pin_memory: bool = False):
        """An uninitialised tensor of ``size``, with this tensor's dtype unless ``dtype`` is given.

        >>> import tensormodes as tm
        >>> tm.zeros(1, dtype=tm.float64).new_empty(2, 3).shape
        tensormodes.Size([2, 3])
        """
        return _new_like(self, np.empty(parse_size(size), _dtype_or(self, dtype)), device, requires_grad)

    @tensor_api()
    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
                 layout=None, pin_memory: bool = False):
        """``size`` filled with ``fill_value``, with this tensor's dtype unless ``dtype`` is given.

        >>> import tensormodes as tm
        >>> tm.zeros(1).new_full((2,), 7).tolist()
        [7.0, 7.0]
        """
        return _new_like(self, np.full(parse_size((size,)), fill_value, _dtype_or(self, dtype)), device,
                         requires_grad)

    # -- Python protocols built on ops ------------------------------------------------

    def __iter__(self):
        # As in PyTorch, iteration is not overridable itself: it is dim() and unbind(0).
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    @tensor_api("element", leaf=False)
    def __contains__(self, element) -> bool:
        """``element in tensor``: whether any element equals it.

        >>> import tensormodes as tm
        >>> 2 in tm.tensor([1, 2]), 5 in tm.tensor([1, 2])
        (True, False)
        """
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool((element == self).any().item())

    @tensor_api(leaf=False)
    def __reversed__(self):
        """The tensor flipped along its first dimension.

        >>> import tensormodes as tm
        >>> reversed(tm.tensor([1, 2, 3])).tolist()
        [3, 2, 1]
        """
        if self.dim() == 0:
            return self
        return self.flip(0)

    @tensor_api()
    def float(self, memory_format=None):
        """``self.to(float32)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).float().dtype
        tensormodes.float32
        """
        return _converted(self, dt.float32, False)

    @tensor_api()
    def double(self, memory_format=None):
        """``self.to(float64)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).double().dtype
        tensormodes.float64
        """
        return _converted(self, dt.float64, False)

    @tensor_api()
    def half(self, memory_format=None):
        """``self.to(float16)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).half().dtype
        tensormodes.float16
        """
        return _converted(self, dt.float16, False)

    @tensor_api()
    def bfloat16(self, memory_format=None):
        """``self.to(bfloat16)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).bfloat16().dtype
        tensormodes.bfloat16
        """
        return _converted(self, dt.bfloat16, False)

    @tensor_api()
    def int(self, memory_format=None):
        """``self.to(int32)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).int().dtype
        tensormodes.int32
        """
        return _converted(self, dt.int32, False)

    @tensor_api()
    def long(self, memory_format=None):
        """``self.to(int64)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).long().dtype
        tensormodes.int64
        """
        return _converted(self, dt.int64, False)

    @tensor_api()
    def short(self, memory_format=None):
        """``self.to(int16)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).short().dtype
        tensormodes.int16
        """
        return _converted(self, dt.int16, False)

    @tensor_api()
    def bool(self, memory_format=None):
        """``self.to(bool)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).bool().dtype
        tensormodes.bool
        """
        return _converted(self, dt.bool, False)

    @tensor_api()
    def byte(self, memory_format=None):
        """``self.to(uint8)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).byte().dtype
        tensormodes.uint8
        """
        return _converted(self, dt.uint8, False)

    @tensor_api()
    def char(self, memory_format=None):
        """``self.to(int8)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).char().dtype
        tensormodes.int8
        """
        return _converted(self, dt.int8, False)

    @tensor_api()
    def cfloat(self, memory_format=None):
        """``self.to(complex64)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).cfloat().dtype
        tensormodes.complex64
        """
        return _converted(self, dt.complex64, False)

    @tensor_api()
    def cdouble(self, memory_format=None):
        """``self.to(complex128)``.

        >>> import tensormodes as tm
        >>> tm.tensor([1, 0]).cdouble().dtype
        tensormodes.complex128
        """
        return _converted(self, dt.complex128, False)

    @tensor_api("memo")
    def __deepcopy__(self, memo):
        """A deep copy with its own storage (``copy.deepcopy``).

        >>> import copy, tensormodes as tm
        >>> x = tm.zeros(2); y = copy.deepcopy(x); y.data_ptr() != x.data_ptr()
        True
        """
        if id(self) in memo:
            return memo[id(self)]
        new = _alias_array(self._data.copy(), type(self))
        new._requires_grad = self._requires_grad
        new.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_grad_fn", "_view_base")})
        memo[id(self)] = new
        return new


def _is_contiguous(array: np.ndarray) -> bool:
    if array.size == 0:
        return True
    expected = array.itemsize
    for size, stride in zip(reversed(array.shape), reversed(array.strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _python_scalar(array: np.ndarray):
    value = array.reshape(()).item() if array.dtype != dt.bfloat16._np else float(array.reshape(()))
    return value


def _one_value(t: Tensor):
    if t._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return _python_scalar(t._data)


# "tensormodes.FloatTensor" ...: the legacy tensor type names ``Tensor.type()`` uses.
_TYPE_NAMES = {d: f"{scalar_type_name(d)}Tensor" for d in dt.ALL_DTYPES}


def _parse_to(t: Tensor, args: tuple, kwargs: dict):
    """PyTorch's ``to`` overloads -> (target dtype or None, copy)."""
    if not kwargs and len(args) == 1 and type(args[0]) is dt.dtype:
        return args[0], False  # x.to(dtype): the common call
    unknown = set(kwargs) - {"dtype", "device", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword "
                        f"{sorted(unknown)[0]!r}")
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dtype = dt.NP_TO_DTYPE[other._data.dtype]
    elif rest and not isinstance(rest[0], dt.dtype):
        device = rest.pop(0)
    if rest and isinstance(rest[0], dt.dtype):
        dtype = rest.pop(0)
    if len(rest) > 2 or any(not isinstance(r, bool) for r in rest):
        raise TypeError(f"to() received an invalid combination of arguments - got {args!r}")
    if device is not None:
        check_compute_device(device)
    copy = kwargs.get("copy", rest[1] if len(rest) > 1 else False)
    return dtype, copy


def _converted(t: Tensor, dtype, copy: bool) -> Tensor:
    if dtype is not None and type(dtype) is not dt.dtype:
        raise TypeError(f"expected a tensormodes.dtype, got {type(dtype).__name__}")
    if (dtype is None or dtype._np == t._data.dtype) and not copy:
        return t
    return public("_to_copy")(t, dtype=dtype)  # an op: autograd records it (ToCopyBackward0)


def _dtype_or(t: Tensor, dtype) -> np.dtype:
    if dtype is None:
        return t._data.dtype
    if type(dtype) is not dt.dtype:
        raise TypeError(f"argument 'dtype' must be tensormodes.dtype, not {type(dtype).__name__}")
    return dtype._np


def _new_like(t: Tensor, array: np.ndarray, device, requires_grad: bool) -> Tensor:
    if device is not None:
        check_compute_device(device)
    result = wrap_array(array)
    if requires_grad:
        _requires_grad_set(result, True)
    return result


def _rebuild(cls, array, requires_grad):
    t = _alias_array(array, cls)
    t._requires_grad = requires_grad
    return t


def _alias_array(array: np.ndarray, cls: type) -> Tensor:
    t = _new(cls)
    t._data = array
    t._requires_grad = False
    return t


def _alias(source: Tensor, cls: type) -> Tensor:
    t = _new(cls)
    t._data = source._data
    t._requires_grad = False
    if source._view_base is not None:
        t._view_base = source._view_base
    return t


def _convert(result, cls):
    if isinstance(result, Tensor):
        return result if isinstance(result, cls) else _alias(result, cls)
    if isinstance(result, tuple):
        converted = [_convert(r, cls) for r in result]
        return type(result)(*converted) if hasattr(result, "_fields") else type(result)(converted)
    if isinstance(result, list):
        return [_convert(r, cls) for r in result]
    return result


# -- the tensor layer's own callables -------------------------------------------------
# Defined as plain functions then declared; finalize_tensor_class makes them dispatch.

def _shape(self) -> Size:
    """The tensor's shape, as a ``Size``."""
    return Size(self._data.shape)


def _dtype(self) -> dt.dtype:
    """The tensor's element type."""
    return dt.NP_TO_DTYPE[self._data.dtype]


def _device(self):
    """The device the tensor lives on."""
    return CPU


def _ndim(self) -> int:
    """Number of dimensions (same as ``dim()``)."""
    return self._data.ndim


def _itemsize(self) -> int:
    """Bytes per element."""
    return self._data.itemsize


def _nbytes(self) -> int:
    """Bytes of all elements."""
    return self._data.nbytes


def _requires_grad_get(self) -> bool:
    """Whether gradients are recorded for this tensor."""
    return self._requires_grad


def _requires_grad_set(self, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"requires_grad must be a bool, not {type(value).__name__}")
    if value and not (self._data.dtype.kind in "fc" or self._data.dtype == dt.bfloat16._np):
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    if not value and self._grad_fn is not None:
        raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                           "use a computed variable in a subgraph that doesn't require differentiation "
                           "use var_no_grad = var.detach().")
    self._requires_grad = value


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


def _grad_get(self):
    """The accumulated gradient, or None."""
    grad = self._grad
    if grad is None and self._grad_fn is not None and not self.__dict__.get("_retains_grad"):
        warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=3)
    return grad


def _grad_set(self, value) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if value._data.shape != self._data.shape:
            raise RuntimeError("assigned grad has data of a different size")
        if value._data.dtype != self._data.dtype:
            raise RuntimeError("assigned grad has data of a different type")
    self._grad = value


def _grad_fn_get(self):
    """The backward node that created this tensor (None for leaves)."""
    return self._grad_fn


def _is_leaf(self) -> bool:
    """True for tensors not produced by a recorded operation."""
    return self._grad_fn is None


def _data_get(self) -> Tensor:
    """A tensor sharing storage but detached from autograd."""
    return wrap_array(self._data)


def _data_set(self, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
    self._data = value._data


def _retains_grad(self) -> bool:
    """True if ``retain_grad()`` was called on this non-leaf tensor."""
    return self.__dict__.get("_retains_grad", False)


def _version_get(self) -> int:
    """How many in-place modifications this tensor's storage has seen."""
    return version_of(self)


def _base_get(self):
    """The tensor this one is a view of, or None."""
    return self._view_base


def _T(self) -> Tensor:
    """The tensor with its dimensions reversed (``permute(n-1, ..., 0)``)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=3)
    elif ndim != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                      "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                      "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                      "tensor.", UserWarning, stacklevel=3)
    return self.permute(*range(ndim - 1, -1, -1))  # an op: a view with autograd history


def _mT(self) -> Tensor:
    """The last two dimensions transposed (a batch of matrices)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=3)
        return self.permute()
    if ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return self.transpose(-2, -1)


def _conj_of(t: Tensor) -> Tensor:
    return t.conj() if t._data.dtype.kind == "c" else t


def _H(self) -> Tensor:
    """The conjugate transpose of a matrix (``transpose(0, 1).conj()``)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=3)
        return _conj_of(self.permute())
    if ndim != 2:
        hint = ". For batches of matrices, consider using tensor.mH" if ndim > 2 else "."
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor{hint}")
    return _conj_of(self.transpose(0, 1))


def _mH(self) -> Tensor:
    """The conjugate transpose of a batch of matrices (``transpose(-2, -1).conj()``)."""
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=3)
        return _conj_of(self.permute())
    if ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return _conj_of(self.transpose(-2, -1))


def _real(self) -> Tensor:
    """The real part (a view for complex tensors, the tensor itself otherwise)."""
    return public("real")(self)  # an op: a view with autograd history


def _imag(self) -> Tensor:
    """The imaginary part of a complex tensor (a view)."""
    return public("imag")(self)


PLAIN_REPR_CLASSES.add(Tensor)


def _alias_for_autograd(t: Tensor) -> Tensor:
    alias = wrap_array(t._data)
    share_version(alias, t)
    return alias


def _ones_like_for_autograd(t: Tensor) -> Tensor:
    array = np.empty(t._data.shape, t._data.dtype)
    array.fill(1)  # np.ones is a slower Python-level helper
    return wrap_array(array)


register_tensor_type(
    Tensor, alias=_alias_for_autograd, copy=lambda t: wrap_array(t._data.copy()),
    meta=lambda t: (t._data.shape, dt.NP_TO_DTYPE[t._data.dtype]),
    ones=_ones_like_for_autograd,
    zeros=lambda shape, dtype: wrap_array(np.zeros(shape, dtype._np)), wrap=wrap_array)

_INLINE_NAMES = {"_Size": Size, "_NP_TO_DTYPE": dt.NP_TO_DTYPE, "_CPU": CPU}

for _name, _get, _set, _inline in (
    ("shape", _shape, None, "_Size(self._data.shape)"),
    ("dtype", _dtype, None, "_NP_TO_DTYPE[self._data.dtype]"),
    ("device", _device, None, "_CPU"),
    ("ndim", _ndim, None, "self._data.ndim"),
    ("itemsize", _itemsize, None, None), ("nbytes", _nbytes, None, None),
    ("requires_grad", _requires_grad_get, _requires_grad_set, "self._requires_grad"),
    # Leaves pay one extra check; a non-leaf's getter warns like PyTorch's.
    ("grad", _grad_get, _grad_set, "g if (g := self._grad) is not None or self._grad_fn is None else _get(self)"),
    ("grad_fn", _grad_fn_get, None, "self._grad_fn"),
    ("is_leaf", _is_leaf, None, "self._grad_fn is None"),
    ("data", _data_get, _data_set, None),
    ("_base", _base_get, None, "self._view_base"),
    ("retains_grad", _retains_grad, None, None),
    ("_version", _version_get, None, None),
    ("T", _T, None, None), ("mT", _mT, None, None), ("H", _H, None, None), ("mH", _mH, None, None),
    ("real", _real, None, None), ("imag", _imag, None, None),
):
    tensor_property(_get, _set, name=_name, inline=_inline)

