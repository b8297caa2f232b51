"""``Parameter``: a tensor that a module registers as trainable (defined in ``_api/parameter.py``,
where the generated fast path can see it); ``Buffer``: one it registers as state;
``UninitializedParameter`` and ``UninitializedBuffer``: a lazy module's parameter or buffer
before its first forward."""

from __future__ import annotations

from .._api import namespace as tm
from .._api.parameter import Parameter
from .._api.tensor import Tensor
from .._tensor_base import wrap_array

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin"]


class _BufferMeta(type):
    # A Buffer is a plain Tensor carrying a mark, so isinstance asks for the mark.
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """A kind of Tensor that should not be considered a model parameter, but is part of the module's state.

    ``Buffer(data, persistent=True)`` returns a detached Tensor marked as a
    buffer: assigned as a Module attribute it is registered as a buffer
    (part of ``state_dict`` when ``persistent``). Assigning a plain Tensor has
    no such effect.

    >>> import tensormodes as tm
    >>> m = tm.nn.Module()
    >>> m.count = tm.nn.Buffer(tm.zeros(1), persistent=False)
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['count'], [])
    >>> type(m.count).__name__, isinstance(m.count, tm.nn.Buffer)
    ('Tensor', True)
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = wrap_array(Tensor(0)._data)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be a Tensor, not {type(data).__name__}")
        buffer = data.detach().requires_grad_(data.requires_grad)
        buffer.persistent = persistent
        buffer._is_buffer = True
        return buffer


_UNINITIALIZED_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                        "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
                        "Call `forward` to initialize the parameters before accessing their attributes.")


class UninitializedTensorMixin:
    """What uninitialised parameters and buffers share: ``materialize(shape)`` gives data and makes
    the object its ``cls_to_become``; until then only dtype, device and ``requires_grad`` can be
    read, and any operation raises ValueError (PyTorch's wording)."""

    cls_to_become = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor uninitialised data of ``shape`` (and ``device`` / ``dtype``, its own
        by default); it becomes a ``cls_to_become``."""
        if isinstance(shape, int):
            shape = (shape,)
        data = tm.empty(tuple(shape), device=self.device if device is None else device,
                        dtype=self.dtype if dtype is None else dtype)
        self._data = data._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        """Not known yet: RuntimeError, as PyTorch."""
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        if name in _UNINITIALIZED_ALLOWED:  # run as on a plain Tensor
            return Tensor.__torch_function__(func, (Tensor,), args, kwargs or {})
        raise ValueError(f"Attempted to use an uninitialized parameter in {func}. This error happens when you are "
                         f"using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` "
                         "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
                         "parameters before calling torch functions")

    def __reduce_ex__(self, protocol):
        return (type(self), (self._requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first forward):
    ``materialize(shape)`` gives it data and makes it a plain ``Parameter``. Until then only its
    dtype, device and ``requires_grad`` can be read; any operation on it raises ValueError.

    >>> import tensormodes as tm
    >>> p = tm.nn.UninitializedParameter()
    >>> p, p.dtype
    (<UninitializedParameter>, tensormodes.float32)
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', tensormodes.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return super().__new__(cls, tm.empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy normalisation layer's running statistics):
    ``materialize(shape)`` gives it data and makes it a plain ``Tensor``.

    >>> import tensormodes as tm
    >>> b = tm.nn.UninitializedBuffer()
    >>> b, b.requires_grad
    (<UninitializedBuffer>, False)
    >>> b.materialize(3)
    >>> type(b).__name__, b.shape
    ('Tensor', tensormodes.Size([3]))
    """

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        buffer = Tensor._make_subclass(cls, tm.empty(0, device=device, dtype=dtype), requires_grad)
        buffer.persistent = persistent
        buffer._is_buffer = True
        return buffer


# What PyTorch lets an uninitialised parameter do (UninitializedTensorMixin._allowed_methods).
_UNINITIALIZED_ALLOWED = frozenset({"__hash__", "size", "copy_", "is_complex", "is_floating_point", "half", "float",
                                    "double", "char", "short", "int", "long", "cuda", "cpu", "to", "get_device",
                                    "requires_grad_", "__get__", "__set__", "dtype", "device", "requires_grad"})
