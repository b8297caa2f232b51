"""``Parameter``: a tensor that a module registers as trainable (defined in ``_api/parameter.py``,
where the generated fast path can see it); ``Buffer``: one it registers as state."""

from __future__ import annotations

from .._api.parameter import Parameter
from .._api.tensor import Tensor
from .._tensor_base import wrap_array

__all__ = ["Parameter", "Buffer"]


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
