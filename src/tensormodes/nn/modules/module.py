"""``nn.Module``: the base class of every layer, and the hooks every module call honours.

A module owns parameters, buffers and child modules, registered by plain
attribute assignment; ``state_dict`` names them by their dotted paths.

>>> import tensormodes as tm
>>> class Affine(tm.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.scale = tm.nn.Parameter(tm.ones(2))
...         self.register_buffer("shift", tm.zeros(2))
...     def forward(self, x):
...         return x * self.scale + self.shift
>>> m = Affine()
>>> list(m.state_dict())
['scale', 'shift']
>>> m(tm.tensor([1., 2.])).tolist()
[1.0, 2.0]

A call runs ``forward`` directly when no hook and no interceptor is
installed; otherwise forward pre-hooks, ``forward``, forward hooks and the
full backward hooks run as in PyTorch. ``intercept_module_calls`` (a
tensormodes extension for tracers) lets a function decide how module calls
run within a scope.

``Module`` is assembled from its families: registration, attributes, iteration,
modes and conversions, and printing here; the hooks, the global module hooks and
the module call in ``_hooks.py``; state dicts in ``_state_dict.py``. The global
hook registrars and ``intercept_module_calls`` are importable from here, as in
PyTorch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ..._api import namespace as tm
from ..parameter import Buffer, Parameter
from ._hooks import (
    RemovableHandle,
    _ModuleHooks,
    intercept_module_calls,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from ._state_dict import _ModuleStateDict

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "intercept_module_calls", "RemovableHandle"]


def _typename(obj: Any) -> str:
    """``torch.typename``: a tensor's type string, else the object's qualified class name."""
    if isinstance(obj, tm.Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__qualname__
    if not isinstance(qualname, str):
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return "\n".join([first] + [(" " * spaces + line) if line.strip() else "" for line in lines])


def _forward_unimplemented(self, *input: Any) -> None:
    """Define the computation performed at every call. Should be overridden by all subclasses."""
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module(_ModuleHooks, _ModuleStateDict):
    """Base class for all neural network modules.

    Your models should also subclass this class. Modules can also contain
    other Modules, allowing them to be nested in a tree structure. You can
    assign the submodules as regular attributes; submodules assigned this way
    will be registered, and their parameters converted too when you call
    ``to()``, etc.

    >>> import tensormodes as tm
    >>> class Model(tm.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = tm.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> Model()
    Model(
      (fc): Linear(in_features=2, out_features=1, bias=True)
    )
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Initialise the internal module state (no parameters, buffers, submodules or hooks)."""
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # object.__setattr__ skips Module.__setattr__'s registration logic for the bookkeeping itself.
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # ------------------------------------------------------------------ registration

    def register_buffer(self, name: str, tensor: tm.Tensor | None, persistent: bool = True) -> None:
        """Add a buffer to the module.

        Buffers are tensors that are not parameters, e.g. BatchNorm's
        ``running_mean``; persistent buffers are part of ``state_dict``.

        >>> import tensormodes as tm
        >>> m = tm.nn.Module()
        >>> m.register_buffer("step", tm.zeros(()), persistent=False)
        >>> list(m.named_buffers()), list(m.state_dict())
        ([('step', tensor(0.))], [])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not (isinstance(tensor, tm.Tensor) or hasattr(tensor, "__torch_function__")):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter to the module (``None`` registers the name without a parameter).

        >>> import tensormodes as tm
        >>> m = tm.nn.Module()
        >>> m.register_parameter("bias", None)
        >>> m.bias is None, list(m.parameters())
        (True, [])
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module to the current module, accessible as an attribute of the given name.

        >>> import tensormodes as tm
        >>> m = tm.nn.Module()
        >>> m.add_module("act", tm.nn.ReLU())
        >>> m
        Module(
          (act): ReLU()
        )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for :meth:`add_module`.

        >>> import tensormodes as tm
        >>> m = tm.nn.Module(); m.register_module("a", tm.nn.Identity()); list(m._modules)
        ['a']
        """
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """Return the submodule given by ``target`` (a dotted path) if it exists, otherwise throw an error.

        >>> import tensormodes as tm
        >>> net = tm.nn.Sequential(tm.nn.Sequential(tm.nn.ReLU()))
        >>> net.get_submodule("0.0")
        ReLU()
        """
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Set the submodule given by ``target`` (a dotted path), replacing it or, unless ``strict``, adding it.

        >>> import tensormodes as tm
        >>> net = tm.nn.Sequential(tm.nn.Sequential(tm.nn.ReLU()))
        >>> net.set_submodule("0.0", tm.nn.Tanh()); net.set_submodule("0.act", tm.nn.ReLU())
        >>> list(net[0].named_children())
        [('0', Tanh()), ('act', ReLU())]
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """Return the parameter given by ``target`` if it exists, otherwise throw an error.

        >>> import tensormodes as tm
        >>> tm.nn.Sequential(tm.nn.Linear(1, 2)).get_parameter("0.bias").shape
        tensormodes.Size([2])
        """
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> tm.Tensor:
        """Return the buffer given by ``target`` if it exists, otherwise throw an error.

        >>> import tensormodes as tm
        >>> tm.nn.Sequential(tm.nn.BatchNorm1d(2)).get_buffer("0.running_var").tolist()
        [1.0, 1.0]
        """
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        buffer = getattr(module, name)
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer

    # ------------------------------------------------------------------ attributes

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: registered members live in the three dicts.
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*containers) -> None:
            for container in containers:
                if name in container:
                    if isinstance(container, dict):
                        del container[name]
                    else:
                        container.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not (isinstance(value, tm.Tensor) or hasattr(value, "__torch_function__")):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._modules)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ iteration

    def _named_members(self, get_members, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for key, value in get_members(module):
                if value is None or id(value) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + key, value)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Return an iterator over module parameters (each shared parameter once).

        >>> import tensormodes as tm
        >>> [tuple(p.shape) for p in tm.nn.Linear(3, 2).parameters()]
        [(2, 3), (2,)]
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Return an iterator over module parameters, yielding both the name of the parameter and the parameter.

        >>> import tensormodes as tm
        >>> [name for name, _ in tm.nn.Sequential(tm.nn.Linear(1, 1)).named_parameters(prefix="net")]
        ['net.0.weight', 'net.0.bias']
        """
        yield from self._named_members(lambda module: module._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[tm.Tensor]:
        """Return an iterator over module buffers.

        >>> import tensormodes as tm
        >>> len(list(tm.nn.BatchNorm1d(3).buffers()))
        3
        """
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, tm.Tensor]]:
        """Return an iterator over module buffers, yielding both the name of the buffer and the buffer.

        >>> import tensormodes as tm
        >>> [name for name, _ in tm.nn.BatchNorm1d(3).named_buffers()]
        ['running_mean', 'running_var', 'num_batches_tracked']
        """
        yield from self._named_members(lambda module: module._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        """Return an iterator over immediate children modules.

        >>> import tensormodes as tm
        >>> list(tm.nn.Sequential(tm.nn.ReLU(), tm.nn.Tanh()).children())
        [ReLU(), Tanh()]
        """
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Return an iterator over immediate children modules, yielding both the name and the module.

        >>> import tensormodes as tm
        >>> [name for name, _ in tm.nn.Sequential(tm.nn.ReLU(), tm.nn.Tanh()).named_children()]
        ['0', '1']
        """
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        """Return an iterator over all modules in the network (this one first; shared modules once).

        >>> import tensormodes as tm
        >>> relu = tm.nn.ReLU()
        >>> len(list(tm.nn.Sequential(relu, relu).modules()))
        2
        """
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Return an iterator over all modules in the network, yielding both the name of the module and the module.

        >>> import tensormodes as tm
        >>> relu = tm.nn.ReLU()
        >>> [name for name, _ in tm.nn.Sequential(relu, relu).named_modules(remove_duplicate=False)]
        ['', '0', '1']
        """
        # An explicit stack instead of recursion: deep chains of modules must not hit the recursion limit.
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            module_prefix, module = stack.pop()
            if remove_duplicate:
                if module in memo:
                    continue
                memo.add(module)
            yield module_prefix, module
            children = [(module_prefix + ("." if module_prefix else "") + name, child)
                        for name, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))

    # ------------------------------------------------------------------ modes and conversions

    def train(self, mode: bool = True) -> Module:
        """Set the module in training mode (``mode=False``: evaluation mode); returns ``self``.

        >>> import tensormodes as tm
        >>> net = tm.nn.Sequential(tm.nn.Dropout()).train(False)
        >>> net[0].training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set the module in evaluation mode: equivalent to ``self.train(False)``.

        >>> import tensormodes as tm
        >>> tm.nn.Dropout().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Change if autograd should record operations on parameters in this module; returns ``self``.

        >>> import tensormodes as tm
        >>> [p.requires_grad for p in tm.nn.Linear(1, 1).requires_grad_(False).parameters()]
        [False, False]
        """
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset gradients of all model parameters (to None, or to zero with ``set_to_none=False``).

        >>> import tensormodes as tm
        >>> m = tm.nn.Linear(1, 1); m(tm.ones(1)).sum().backward(); m.zero_grad()
        >>> m.weight.grad is None
        True
        """
        for param in self.parameters():
            if param.grad is not None:
                if set_to_none:
                    param.grad = None
                else:
                    if param.grad.grad_fn is not None:
                        param.grad.detach_()
                    else:
                        param.grad.requires_grad_(False)
                    param.grad.zero_()

    def _apply(self, fn: Callable[[tm.Tensor], tm.Tensor], recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            # Parameters keep their identity (optimizers hold them): the new value becomes their data.
            with tm.no_grad():
                param_applied = fn(param)
            param.data = param_applied
            if param.grad is not None:
                with tm.no_grad():
                    grad_applied = fn(param.grad)
                param.grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Apply ``fn`` recursively to every submodule (as returned by ``.children()``) as well as self.

        >>> import tensormodes as tm
        >>> names = []
        >>> _ = tm.nn.Sequential(tm.nn.ReLU()).apply(lambda m: names.append(m._get_name()))
        >>> names
        ['ReLU', 'Sequential']
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast the parameters and buffers (``to(device)``, ``to(dtype)``, ``to(tensor)``).

        Only floating point or complex parameters and buffers are cast to a
        floating ``dtype``; integral ones keep their dtype.

        >>> import tensormodes as tm
        >>> bn = tm.nn.BatchNorm1d(2).to(tm.float64)
        >>> bn.weight.dtype, bn.num_batches_tracked.dtype
        (tensormodes.float64, tensormodes.int64)
        """
        device, dtype, non_blocking = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t: tm.Tensor) -> tm.Tensor:
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                return t.to(device, dtype) if device is not None else t.to(dtype)
            return t.to(device) if device is not None else t

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Move the parameters and buffers to ``device`` without copying storage: each becomes
        ``tm.empty_like(t, device=device)`` (uninitialized). The way to materialize a module
        built on the meta device: ``model.to_empty(device="cpu")``, then initialize it.

        >>> import tensormodes as tm
        >>> layer = tm.nn.Linear(2, 3)
        >>> weight = layer.weight
        >>> layer.to_empty(device="cpu").weight is weight, layer.weight.shape
        (True, tensormodes.Size([3, 2]))
        """
        return self._apply(lambda t: tm.empty_like(t, device=device), recurse=recurse)

    def cpu(self) -> Module:
        """Move all model parameters and buffers to the CPU.

        >>> import tensormodes as tm
        >>> tm.nn.Linear(1, 1).cpu().weight.device
        device(type='cpu')
        """
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type: Any) -> Module:
        """Casts all parameters and buffers to ``dst_type``.

        >>> import tensormodes as tm
        >>> tm.nn.BatchNorm1d(1).type(tm.float64).num_batches_tracked.dtype
        tensormodes.float64
        """
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        """Casts all floating point parameters and buffers to ``float`` datatype.

        >>> import tensormodes as tm
        >>> tm.nn.Linear(1, 1).double().float().weight.dtype
        tensormodes.float32
        """
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Casts all floating point parameters and buffers to ``double`` datatype.

        >>> import tensormodes as tm
        >>> tm.nn.Linear(1, 1).double().bias.dtype
        tensormodes.float64
        """
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Casts all floating point parameters and buffers to ``half`` datatype.

        >>> import tensormodes as tm
        >>> tm.nn.Linear(1, 1).half().weight.dtype
        tensormodes.float16
        """
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Casts all floating point parameters and buffers to ``bfloat16`` datatype.

        >>> import tensormodes as tm
        >>> tm.nn.Linear(1, 1).bfloat16().weight.dtype
        tensormodes.bfloat16
        """
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # ------------------------------------------------------------------ printing

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """Return the extra representation of the module (one line, or several), shown inside its ``repr``.

        >>> import tensormodes as tm
        >>> tm.nn.Linear(2, 3).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"



def _parse_to(args: tuple, kwargs: dict) -> tuple:
    """``(device, dtype, non_blocking)`` from ``Module.to``'s overloads."""
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    tensor = kwargs.pop("tensor", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], tm.Tensor):
        tensor = rest.pop(0)
    elif rest and isinstance(rest[0], tm.dtype):
        dtype = rest.pop(0)
    elif rest and (isinstance(rest[0], (str, tm.device, int)) or rest[0] is None):
        device = rest.pop(0)
        if rest and isinstance(rest[0], tm.dtype):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        given = tuple(type(a).__name__ for a in args)
        raise TypeError(f"to() received an invalid combination of arguments - got {given}")
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    if device is not None:
        device = tm.device(device)
    return device, dtype, non_blocking

