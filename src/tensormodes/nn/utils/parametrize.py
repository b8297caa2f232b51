"""Parametrizations (``torch.nn.utils.parametrize``): make a module's parameter or buffer the
output of a function of other tensors, recomputed on every access.

``register_parametrization(module, "weight", p)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property returning
``p(original)``; the module's class becomes ``Parametrized<Class>`` (a subclass made for it), and
its state-dict keys become ``parametrizations.weight.original``, as in PyTorch.

>>> import tensormodes as tm
>>> from tensormodes.nn.utils import parametrize
>>> class Symmetric(tm.nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).transpose(-1, -2)
>>> layer = tm.nn.Linear(3, 3)
>>> _ = parametrize.register_parametrization(layer, "weight", Symmetric())
>>> tm.equal(layer.weight, layer.weight.T), type(layer).__name__
(True, 'ParametrizedLinear')
>>> sorted(layer.state_dict())
['bias', 'parametrizations.weight.original']
>>> _ = parametrize.remove_parametrizations(layer, "weight")
>>> type(layer).__name__, sorted(layer.state_dict())
('Linear', ['bias', 'weight'])
"""

from __future__ import annotations

import contextlib
import copy
import copyreg
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

from ..._api import namespace as tm
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

# The values computed inside ``cached()`` blocks, keyed by (id(module), tensor name); None outside.
_CACHE: ContextVar[dict | None] = ContextVar("tensormodes_parametrize_cache", default=None)


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Context manager that enables the caching system within parametrizations registered with
    ``register_parametrization``: each parametrized tensor is computed once within the block (the
    outermost block, when nested), and the cached values are discarded when leaving it.

    >>> import tensormodes as tm
    >>> from tensormodes.nn.utils import parametrize
    >>> layer = tm.nn.Linear(2, 2)
    >>> _ = parametrize.register_parametrization(layer, "weight", tm.nn.Tanh())
    >>> with parametrize.cached():
    ...     layer.weight is layer.weight
    True
    >>> layer.weight is layer.weight
    False
    """
    current = _CACHE.get()
    token = _CACHE.set({} if current is None else current)
    try:
        yield
    finally:
        _CACHE.reset(token)


def _register_parameter_or_buffer(module: Module, name: str, value) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set(dest, src) -> None:
    """``dest.set_(src)`` under no_grad: ``dest`` keeps its identity and takes ``src``'s data."""
    with tm.no_grad():
        dest.data = src


class ParametrizationList(ModuleList):
    """A sequential container that holds and manages the original parameters or buffers of a
    parametrized ``torch.nn.Module``: ``original`` (or ``original0``, ``original1``, ... when the
    first parametrization's ``right_inverse`` returns several tensors). Made by
    ``register_parametrization``."""

    def __init__(self, modules: Sequence[Module], original, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with tm.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (tm.Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, tm.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the device.\n"
                                 f"original.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            if new is not original:
                _set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, tm.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            value = self()
            if not isinstance(value, tm.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            if value.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {value.dtype}")
            if value.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {value.shape}")

    def right_inverse(self, value) -> None:
        """Call the ``right_inverse`` methods of the parametrizations in the inverse registration
        order, and store the result in ``original`` (or ``original0``, ``original1`` ...)."""
        with tm.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, tm.Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, tm.Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or reference-type opaques. "
                                     f"Got element {i} of type {type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                     f"`original{i}` has dtype {original_i.dtype}")
                _set(original_i, tensor)

    def forward(self):
        """The parametrized tensor: the parametrizations applied in registration order."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _serialization_error(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _default_deepcopy(self, memo):
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own, ``Parametrized<Class>``, to hold the properties."""
    cls = module.__class__
    namespace = {"__getstate__": _serialization_error}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Make ``module.<tensor_name>`` the parametrized value (cached in ``cached()`` blocks), and
    assigning to it set the originals through ``right_inverse``."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        cache = _CACHE.get()
        if cache is None:
            return parametrization()
        key = (id(module), tensor_name)
        value = cache.get(key)
        if value is None:
            value = cache[key] = parametrization()
        return value

    def set_original(self, value) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Register a parametrization to a tensor in a module.

    After it, ``module.<tensor_name>`` returns ``parametrization(original)``; registering a
    second one on the same name chains it after the first. ``parametrization.right_inverse``
    (optional) maps a value back to the original(s), for the initial value and assignments.
    Unless ``unsafe``, the parametrization may not change the tensor's dtype or shape.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_chained(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def _check_chained(module: Module, tensor_name: str, parametrization: Module) -> None:
    """PyTorch's checks on a parametrization chained after others: same dtype and shape out,
    and the same from its ``right_inverse``."""
    current = getattr(module, tensor_name)
    value = parametrization(current)
    if not isinstance(value, tm.Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
    if value.dtype != current.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.dtype: {current.dtype}\n"
                         f"parametrization(module.{tensor_name}).dtype: {value.dtype}")
    if value.shape != current.shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.shape: {current.shape}\n"
                         f"parametrization(module.{tensor_name}).shape: {value.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        back = parametrization.right_inverse(value)
    except NotImplementedError:
        return
    if not isinstance(back, tm.Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(back).__name__}")
    if back.dtype != current.dtype:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same dtype as "
                         f"module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {current.dtype}\nreturned dtype: {back.dtype}")
    if back.shape != current.shape:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same shape as "
                         f"module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {current.shape}\nreturned shape: {back.shape}")


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, or on any tensor)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations on a tensor in a module: ``module.<tensor_name>`` becomes a
    plain parameter or buffer again, holding its current parametrized value
    (``leave_parametrized=True``) or the original one."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with tm.no_grad():
                value = getattr(module, tensor_name)
            _set(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's type before parametrizations were applied (its type, if it has none)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Transfer parametrizations and the parameters they parametrize from ``from_module`` to
    ``to_module`` (only ``tensor_name``'s when given), creating the parameters if missing."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for parametrization in from_module.parametrizations[name]:
            register_parametrization(to_module, name, parametrization)
        source, target = from_module.parametrizations[name], to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
