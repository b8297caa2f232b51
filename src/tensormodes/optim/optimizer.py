"""``Optimizer``: the base class of every optimizer, with PyTorch's parameter groups,
per-parameter state, ``state_dict`` layout and step hooks.

A subclass fills ``defaults`` with its hyperparameters and implements ``step``;
everything else (groups, state, saving and loading, hooks, ``zero_grad``) lives here.

>>> import tensormodes as tm
>>> w = tm.nn.Parameter(tm.ones(2))
>>> opt = tm.optim.SGD([{"params": [w], "lr": 0.5}], lr=0.1)
>>> opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]
(0.5, 0)
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from .._api import namespace as tm
from .._api.tensor import Tensor
from ..autograd import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

# Hooks every optimizer runs around ``step`` (PyTorch's global optimizer hooks).
_GLOBAL_PRE_HOOKS: list[Callable] = []
_GLOBAL_POST_HOOKS: list[Callable] = []


class _RequiredParameter:
    """The default of a hyperparameter that every parameter group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a pre hook common to all optimizers: ``hook(optimizer, args, kwargs)`` runs
    before every ``step`` and may return ``(new_args, new_kwargs)``.

    >>> import tensormodes as tm
    >>> seen = []
    >>> handle = tm.optim.register_optimizer_step_pre_hook(lambda opt, args, kwargs: seen.append(type(opt).__name__))
    >>> tm.optim.SGD([tm.nn.Parameter(tm.ones(1))]).step()
    >>> handle.remove()
    >>> seen
    ['SGD']
    """
    _GLOBAL_PRE_HOOKS.append(hook)
    return RemovableHandle(_GLOBAL_PRE_HOOKS, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register a post hook common to all optimizers: ``hook(optimizer, args, kwargs)`` runs
    after every ``step``.

    >>> import tensormodes as tm
    >>> seen = []
    >>> handle = tm.optim.register_optimizer_step_post_hook(lambda opt, args, kwargs: seen.append("after"))
    >>> tm.optim.SGD([tm.nn.Parameter(tm.ones(1))]).step()
    >>> handle.remove()
    >>> seen
    ['after']
    """
    _GLOBAL_POST_HOOKS.append(hook)
    return RemovableHandle(_GLOBAL_POST_HOOKS, hook)


def _typename(obj) -> str:
    """``torch.typename``: ``tensormodes.FloatTensor`` for a tensor, the qualified type name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = cls.__module__ or ""
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


def _scalar_dtype():
    """The dtype of a ``step`` counter: float64 under a float64 default dtype, else float32."""
    return tm.float64 if tm.get_default_dtype() is tm.float64 else tm.float32


def _with_step_hooks(step: Callable) -> Callable:
    """Wrap a subclass's ``step`` so the registered pre and post hooks run around it."""

    @functools.wraps(step)
    def hooked_step(self, *args, **kwargs):
        # The common case (no hook anywhere) costs two truth tests.
        if _GLOBAL_PRE_HOOKS or self._optimizer_step_pre_hooks:
            for hook in (*_GLOBAL_PRE_HOOKS, *self._optimizer_step_pre_hooks):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
        out = step(self, *args, **kwargs)
        if _GLOBAL_POST_HOOKS or self._optimizer_step_post_hooks:
            for hook in (*self._optimizer_step_post_hooks, *_GLOBAL_POST_HOOKS):
                hook(self, args, kwargs)
        return out

    hooked_step._step_hooks_wrapped = True
    return hooked_step


# The per-optimizer hook lists (not saved by pickling: __getstate__ leaves them out).
_HOOK_LISTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
               "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
               "_optimizer_load_state_dict_post_hooks")


def _register(hooks: list, hook: Callable, prepend: bool) -> RemovableHandle:
    if prepend:
        hooks.insert(0, hook)
    else:
        hooks.append(hook)
    return RemovableHandle(hooks, hook)


class Optimizer:
    """Base class for all optimizers.

    Parameters need to be given as collections with a deterministic order (a list, not a
    set), so that ``state_dict`` indices mean the same parameters between runs.

    Args:
        params (iterable): an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts
            (parameter groups, each with a ``"params"`` entry and optional hyperparameters).
        defaults (dict): default values of the optimization options, used when a parameter
            group does not specify them.

    >>> import tensormodes as tm
    >>> w, b = tm.nn.Parameter(tm.ones(2)), tm.nn.Parameter(tm.zeros(1))
    >>> opt = tm.optim.SGD([{"params": [w]}, {"params": [b], "lr": 1.0}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 1.0]
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_step_hooks_wrapped", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        for name in _HOOK_LISTS:
            setattr(self, name, [])
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_LISTS:
            self.__dict__.setdefault(name, [])
        self.defaults.setdefault("differentiable", False)

    def _restore_groups(self, defaults: dict[str, Any], *, step_as_tensor: bool = True) -> None:
        """After unpickling (``__setstate__``): the group options older pickles lack, with their
        defaults, and (``step_as_tensor``) each parameter's ``step`` as a tensor, as PyTorch's
        optimizers do when they load an older state."""
        for group in self.param_groups:
            for key, value in defaults.items():
                group.setdefault(key, value)
            if step_as_tensor:
                for p in group["params"]:
                    _step_as_tensor(self.state.get(p))

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Register a hook ``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``
        called before each ``step``.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))])
        >>> handle = opt.register_step_pre_hook(lambda opt, args, kwargs: print("before", args))
        >>> opt.step()
        before ()
        >>> handle.remove()
        """
        return _register(self._optimizer_step_pre_hooks, hook, prepend=False)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Register a hook ``hook(optimizer, args, kwargs) -> None`` called after each ``step``.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))])
        >>> handle = opt.register_step_post_hook(lambda opt, args, kwargs: print("after"))
        >>> opt.step()
        after
        """
        return _register(self._optimizer_step_post_hooks, hook, prepend=False)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer) -> None``, called before ``state_dict`` builds the dict
        (first of all when ``prepend``).

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))])
        >>> handle = opt.register_state_dict_pre_hook(lambda opt: print("saving"))
        >>> _ = opt.state_dict()
        saving
        """
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, called on the dict
        ``state_dict`` built; a dict it returns replaces it.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))])
        >>> handle = opt.register_state_dict_post_hook(lambda opt, sd: {**sd, "note": "v2"})
        >>> opt.state_dict()["note"]
        'v2'
        """
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, called before
        ``load_state_dict`` loads (on a shallow copy); a dict it returns is loaded instead.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> def halve_lr(opt, sd):
        ...     sd["param_groups"] = [{**g, "lr": g["lr"] / 2} for g in sd["param_groups"]]
        >>> handle = opt.register_load_state_dict_pre_hook(halve_lr)
        >>> opt.load_state_dict(opt.state_dict()); opt.param_groups[0]["lr"]
        0.05
        """
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer) -> None``, called after ``load_state_dict`` has loaded.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))])
        >>> handle = opt.register_load_state_dict_post_hook(lambda opt: print("loaded"))
        >>> opt.load_state_dict(opt.state_dict())
        loaded
        """
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self) -> dict[str, Any]:
        """Return the state of the optimizer as a dict with two entries:

        * ``state``: the per-parameter state (its tensors, not copies), keyed by the
          parameter's index in the order the groups list them;
        * ``param_groups``: a list of the groups' options, each with ``params`` holding
          the indices of its parameters.

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.ones(2))
        >>> opt = tm.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = tm.ones(2)
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([1., 1.])}}
        >>> sd["param_groups"][0]["params"]
        [0]
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks:
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for index, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), index)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks:
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _cast_state_value(param: Tensor, value: Tensor, key) -> Tensor:
        # Floating-point state follows the parameter's dtype; ``step`` is never cast.
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the optimizer state from a dict returned by ``state_dict``.

        The saved groups must match the optimizer's in number and sizes; the state's
        floating-point tensors are cast to their parameter's dtype (except ``step``).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.ones(2))
        >>> opt = tm.optim.SGD([w], lr=0.1)
        >>> opt.load_state_dict({"state": {}, "param_groups": [{**opt.state_dict()["param_groups"][0], "lr": 0.5}]})
        >>> opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is w
        (0.5, True)
        """
        state_dict = state_dict.copy()  # hooks may replace entries; the caller's dict stays as it was
        for pre_hook in self._optimizer_load_state_dict_pre_hooks:
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                return self._cast_state_value(param, value, key)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict[Tensor, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [update_group(g, s) for g, s in zip(groups, saved_groups)]})
        for post_hook in self._optimizer_load_state_dict_post_hooks:
            post_hook(self)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors: to ``None`` (the default), or, with
        ``set_to_none=False``, to zeros in place (detached from any graph).

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.ones(2))
        >>> (w * 3).sum().backward()
        >>> opt = tm.optim.SGD([w])
        >>> opt.zero_grad(set_to_none=False); w.grad
        tensor([0., 0.])
        >>> opt.zero_grad(); w.grad is None
        True
        """
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step (implemented by each optimizer).

        ``closure``, if given, re-evaluates the model and returns the loss; it runs with
        grad mode enabled and its result is returned.

        >>> import tensormodes as tm
        >>> class Halve(tm.optim.Optimizer):
        ...     def __init__(self, params):
        ...         super().__init__(params, {})
        ...     def step(self, closure=None):
        ...         with tm.no_grad():
        ...             for group in self.param_groups:
        ...                 for p in group["params"]:
        ...                     p.mul_(0.5)
        >>> w = tm.nn.Parameter(tm.ones(2))
        >>> Halve([w]).step(); w
        Parameter containing:
        tensor([0.5000, 0.5000], requires_grad=True)
        """
        raise NotImplementedError

    def _step_groups(self, closure: Callable[[], Any] | None) -> Any:
        """What every built-in optimizer's ``step`` does: evaluate ``closure`` with grad mode on,
        then update each group (``self._update_group``, the optimizer's own loop) without
        recording, and return the loss."""
        loss = None
        if closure is not None:
            with tm.enable_grad():
                loss = closure()
        with tm.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group to ``param_groups`` (to train more parameters as training
        goes on); options it does not give take the optimizer's defaults.

        >>> import tensormodes as tm
        >>> opt = tm.optim.SGD([tm.nn.Parameter(tm.ones(1))], lr=0.1)
        >>> opt.add_param_group({"params": tm.nn.Parameter(tm.ones(3)), "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set[Tensor] = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _check_single_implementation(name: str, foreach, capturable: bool, differentiable: bool, fused) -> None:
    """Reject the options that choose an implementation tensormodes does not have.

    ``foreach`` is accepted whatever its value: the one implementation computes what
    PyTorch's per-tensor loop computes on the CPU.
    """
    if capturable:
        raise NotImplementedError(f"{name}: capturable=True is for graph capture on accelerators, which "
                                  "tensormodes does not have")
    if differentiable:
        raise NotImplementedError(f"{name}: differentiable=True is not supported by tensormodes yet")
    if fused:
        raise NotImplementedError(f"{name}: fused=True is not supported by tensormodes (it has no fused kernels)")


def _check_float_lr(lr) -> None:
    """Reject a Tensor learning rate, which tensormodes' optimizers do not support yet."""
    if isinstance(lr, Tensor):
        raise NotImplementedError("tensormodes.optim: a Tensor lr is not supported yet; pass a float")


def _step_as_tensor(param_state: dict | None) -> None:
    """Checkpoints from before ``step`` became a tensor hold a number: make it one."""
    if param_state and "step" in param_state and not isinstance(param_state["step"], Tensor):
        param_state["step"] = tm.tensor(float(param_state["step"]), dtype=_scalar_dtype())
