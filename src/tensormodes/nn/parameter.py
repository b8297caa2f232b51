"""``Parameter``: a tensor that a module registers as trainable; ``Buffer``: one it registers as state."""

from __future__ import annotations

from .._dispatch import _disabled_torch_function_impl
from .._tensor import Tensor, _alias, wrap_array
from .._tensor_str import PARAMETER_CLASSES, PLAIN_REPR_CLASSES

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A Tensor that is a module parameter (``requires_grad=True`` by default).

    It opts out of ``__torch_function__`` with the disabled sentinel: it never
    blocks other overrides, and operations on it return plain Tensors.

    >>> import tensormodes as tm
    >>> p = tm.nn.Parameter(tm.zeros(2))
    >>> p
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    >>> type(p + 1).__name__
    'Tensor'
    """

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = wrap_array(Tensor(0)._data)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be a Tensor, not {type(data).__name__}")
        param = _alias(data, cls)
        param._view_base = None
        if requires_grad:
            param.requires_grad_(True)
        return param

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (Parameter, (wrap_array(self._data), self._requires_grad))


PLAIN_REPR_CLASSES.add(Parameter)
PARAMETER_CLASSES.add(Parameter)


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
