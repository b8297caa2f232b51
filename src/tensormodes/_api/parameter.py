"""``Parameter``: a tensor that a module registers as trainable (public as ``nn.Parameter``).

It lives with the Tensor layer because the generated fast path treats it like a plain
Tensor: it opts out of ``__torch_function__``, so operations on it never need the
override layer (``runtime.GENERATED_NAMES["_P"]``).
"""

from __future__ import annotations

from .._overrides.dispatch import _disabled_torch_function_impl
from .._tensor_base import wrap_array
from .tensor import Tensor, _alias
from .tensor_str import PARAMETER_CLASSES, PLAIN_REPR_CLASSES

__all__ = ["Parameter"]


class _ParameterMeta(type):
    # PyTorch's metaclass check: a tensor marked ``_is_param = True`` (a subclass instance
    # standing for a parameter) is a Parameter to isinstance, whatever its class.
    def __instancecheck__(cls, instance) -> bool:
        if cls is Parameter and isinstance(instance, Tensor) and getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that is a module parameter (``requires_grad=True`` by default).

    It opts out of ``__torch_function__`` with the disabled sentinel: it never
    blocks other overrides, and operations on it return plain Tensors. A tensor
    with ``_is_param = True`` passes ``isinstance(t, Parameter)``, as in PyTorch.

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


Parameter.__module__ = "tensormodes.nn.parameter"  # where users import it from, as torch.nn.parameter
__test__ = {"Parameter": Parameter}

PLAIN_REPR_CLASSES.add(Parameter)
PARAMETER_CLASSES.add(Parameter)
