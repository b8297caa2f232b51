"""The classes of meta tensors: a Tensor or a Parameter whose data is a ``MetaArray``.

They are exact types of their own (printed as ``Tensor`` and ``Parameter``) so that the
generated fast path, which accepts exactly ``Tensor`` and ``Parameter``, never sees a meta
tensor: every call on one reaches an op's implementation, whose kernel-call site runs the
op's meta rule instead of its NumPy kernel. ``isinstance(t, Tensor)`` holds as usual.

>>> import tensormodes as tm
>>> t = tm.empty(2, 3, device="meta")
>>> isinstance(t, tm.Tensor), type(t).__name__, t.is_meta
(True, 'Tensor', True)
"""

from __future__ import annotations

from .._overrides.dispatch import _disabled_torch_function_impl
from .parameter import Parameter
from .tensor import META_CLASSES, Tensor, _rebuild
from .tensor_str import PARAMETER_CLASSES, PLAIN_REPR_CLASSES

__all__ = ["MetaTensor", "MetaParameter"]


class MetaTensor(Tensor, plain="meta_tensor"):
    """A tensor on the meta device (see the module docstring)."""

    # Opting out like Parameter: no override of its own, so calls go straight to the ops.
    __torch_function__ = _disabled_torch_function_impl

    def __reduce_ex__(self, protocol):
        return (_rebuild, (Tensor, self._data, self._requires_grad))  # by the public class's name


class MetaParameter(Parameter):
    """A Parameter on the meta device (``Module.to("meta")``, ``nn.Linear(..., device="meta")``)."""

    __torch_function__ = _disabled_torch_function_impl


for _cls, _shown in ((MetaTensor, Tensor), (MetaParameter, Parameter)):
    _cls.__name__ = _cls.__qualname__ = _shown.__name__
    _cls.__module__ = _shown.__module__
    META_CLASSES[_shown] = _cls
PLAIN_REPR_CLASSES.add(MetaTensor)
PLAIN_REPR_CLASSES.add(MetaParameter)
PARAMETER_CLASSES.add(MetaParameter)
