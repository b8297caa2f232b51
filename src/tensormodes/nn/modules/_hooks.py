"""Module hooks: hook handles, the identity ``Function`` that carries a module's full backward
hooks, the global module hooks and the module-call interceptors, and ``Module``'s hook
registrars and the call that runs them all.

>>> import tensormodes as tm
>>> hooks = {}
>>> handle = RemovableHandle(hooks)
>>> hooks[handle.id] = print
>>> handle.remove(); hooks
{}
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from ..._api import namespace as tm
from ...autograd import Function

__all__ = ["RemovableHandle", "BackwardHook", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "intercept_module_calls"]

_NEXT_ID = itertools.count()


def _reference(hooks: dict):
    """A weak reference (a handle must not keep a dead module's hooks alive); plain dicts, which cannot be
    weakly referenced, are held strongly."""
    try:
        return weakref.ref(hooks)
    except TypeError:
        return lambda: hooks


class RemovableHandle:
    """A handle which provides the capability to remove a hook.

    Args:
        hooks_dict: a dictionary of hooks, indexed by hook ``id``.
        extra_dict: an additional dictionary or list of dictionaries whose keys
            will be deleted when the same keys are removed from ``hooks_dict``.

    >>> hooks = {}
    >>> with RemovableHandle(hooks) as handle:
    ...     hooks[handle.id] = len
    ...     len(hooks)
    1
    >>> hooks
    {}
    """

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = _reference(hooks_dict)
        self.id = next(_NEXT_ID)
        if extra_dict is None:
            extra_dict = []
        elif isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(_reference(d) for d in extra_dict)

    def remove(self) -> None:
        """Remove the hook (and its entries in the extra dictionaries); removing twice is a no-op."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()


class BackwardHookFunction(Function):
    """Identity over a module's input or output tensors: its backward node is where hooks attach."""

    @staticmethod
    def forward(ctx, *tensors: tm.Tensor) -> tuple:
        """Return the tensors unchanged (those not requiring grad stay non-differentiable)."""
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads: tm.Tensor | None) -> tuple:
        """Pass the gradients through."""
        return grads


def _pack_with_none(indices: list[int], values, size: int) -> tuple:
    packed = [None] * size
    for index, value in zip(indices, values):
        packed[index] = value
    return tuple(packed)


class BackwardHook:
    """Runs a module's full backward (pre-)hooks, as PyTorch's ``torch.utils.hooks.BackwardHook``.

    The module's tensor inputs and outputs pass through ``BackwardHookFunction``;
    a post-hook on the outputs' node sees ``grad_output`` (and runs the pre-hooks,
    which may replace it), and a post-hook on the inputs' node sees
    ``grad_input`` and calls the hooks with both.
    """

    def __init__(self, module, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _input_hook(self, grad_input, _grad_output):
        if self.grad_outputs is None:
            # The gradient reached the inputs without passing through the outputs (double backward).
            return None
        result = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, result, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(result):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(result)}")
            result = out
        self.grad_outputs = None
        return tuple(result[i] for i in self.input_tensors_index)

    def _output_hook(self, _grad_input, grad_output):
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        expected = len(self.grad_outputs)
        for pre_hook in self.user_pre_hooks:
            replaced = pre_hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != expected:
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(replaced)}, but expected {expected}")
            self.grad_outputs = replaced
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            if any(not getattr(hook, "quiet_tool_hook", False) for hook in self.user_hooks):
                # (a tool's own hook, ``FlopCounterMode``'s, marked so: it must not make a model warn)
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for "
                              "more details.", stacklevel=5)
            grad_inputs = _pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                result = hook(self.module, grad_inputs, self.grad_outputs)
                if result is not None and not (isinstance(result, tuple) and all(g is None for g in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, hook, args: tuple):
        indices = [i for i, a in enumerate(args) if isinstance(a, tm.Tensor)]
        tensors = [args[i] for i in indices]
        if not (tm.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        wrapped = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
        node.register_hook(hook)
        items = list(args)
        for index, value in zip(indices, wrapped):
            items[index] = value
        return (tuple(items) if type(args) is tuple else type(args)(*items)), indices

    def setup_input_hook(self, args: tuple) -> tuple:
        """Route the module's tensor inputs through the identity node that calls the hooks."""
        result, self.input_tensors_index = self._apply_on_tensors(self._input_hook, args)
        self.n_inputs = len(args)
        return result

    def setup_output_hook(self, outputs: Any) -> Any:
        """Route the module's tensor outputs through the identity node that records ``grad_output``."""
        is_tuple = isinstance(outputs, tuple)
        packed = outputs if is_tuple else (outputs,)
        result, self.output_tensors_index = self._apply_on_tensors(self._output_hook, packed)
        self.n_outputs = len(packed)
        return result if is_tuple else result[0]


# -- the global module hooks and the module-call interceptors --------------------------------------

# Hooks that run around every module call (PyTorch's global module hooks).
_global_backward_pre_hooks: dict[int, Callable] = OrderedDict()
_global_backward_hooks: dict[int, Callable] = OrderedDict()
_global_forward_pre_hooks: dict[int, Callable] = OrderedDict()
_global_forward_hooks: dict[int, Callable] = OrderedDict()
_global_forward_hooks_always_called: dict[int, bool] = OrderedDict()
_global_forward_hooks_with_kwargs: dict[int, bool] = OrderedDict()

# The module-call interceptors in scope, innermost last (an immutable tuple, so a scope restores it exactly).
_INTERCEPTORS: ContextVar[tuple] = ContextVar("tensormodes_module_call_interceptors", default=())


class _GlobalHookState:
    """Whether a global module hook was ever registered: set once and never cleared (removing a
    hook leaves its dict empty, which the full check sees), so that a module call with no hook
    anywhere reads one attribute."""

    __slots__ = ("registered",)

    def __init__(self) -> None:
        self.registered = False


_GLOBAL_HOOK_STATE = _GlobalHookState()


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a forward pre-hook common to all modules.

    ``hook(module, args)`` runs before every module's ``forward``, before the
    module's own pre-hooks; a non-None result replaces ``args``.

    >>> import tensormodes as tm
    >>> seen = []
    >>> handle = tm.nn.modules.module.register_module_forward_pre_hook(lambda m, a: seen.append(type(m).__name__))
    >>> _ = tm.nn.Identity()(tm.ones(1)); handle.remove(); seen
    ['Identity']
    """
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    _GLOBAL_HOOK_STATE.registered = True
    return handle


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """Register a global forward hook for all the modules.

    ``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``
    with ``with_kwargs=True``) runs after every module's ``forward``, before the
    module's own hooks; a non-None result replaces the output. ``always_call``
    runs it even when ``forward`` raised.

    >>> import tensormodes as tm
    >>> handle = tm.nn.modules.module.register_module_forward_hook(lambda m, a, out: out * 2)
    >>> tm.nn.Identity()(tm.ones(1)).tolist(); handle.remove()
    [2.0]
    """
    handle = RemovableHandle(_global_forward_hooks, extra_dict=[_global_forward_hooks_always_called,
                                                                _global_forward_hooks_with_kwargs])
    _global_forward_hooks[handle.id] = hook
    _GLOBAL_HOOK_STATE.registered = True
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a backward pre-hook common to all the modules.

    ``hook(module, grad_output)`` runs when the gradients of a module's outputs
    are known; a non-None result replaces ``grad_output``.

    >>> import tensormodes as tm
    >>> seen = []
    >>> handle = tm.nn.modules.module.register_module_full_backward_pre_hook(lambda m, g: seen.append(len(g)))
    >>> tm.nn.Tanh()(tm.ones(1, requires_grad=True)).sum().backward(); handle.remove(); seen
    [1]
    """
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    _GLOBAL_HOOK_STATE.registered = True
    return handle


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """Register a backward hook common to all the modules.

    ``hook(module, grad_input, grad_output)`` runs when the gradients of a
    module's inputs are known; a non-None result replaces ``grad_input``.

    >>> import tensormodes as tm
    >>> seen = []
    >>> handle = tm.nn.modules.module.register_module_full_backward_hook(
    ...     lambda m, gi, go: seen.append(gi[0].tolist()))
    >>> tm.nn.ReLU()(tm.tensor([-1., 1.], requires_grad=True)).sum().backward(); handle.remove(); seen
    [[0.0, 1.0]]
    """
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    _GLOBAL_HOOK_STATE.registered = True
    return handle


@contextlib.contextmanager
def intercept_module_calls(fn: Callable) -> Iterator[Callable]:
    """Within the scope, every module call runs as ``fn(module, forward, args, kwargs)`` decides.

    A tensormodes extension point (PyTorch has none), made for tracers that
    record some module calls as single steps instead of running them.
    ``forward(*args, **kwargs)`` continues the call as it would have run
    without ``fn``: through the next interceptor out, or the module's hooks
    and ``forward``; calls made by that ``forward`` are intercepted again.
    ``fn``'s result is the call's result. Scopes nest (innermost first) and
    are held per thread and asyncio task; leaving one restores the previous
    state even on an exception.

    >>> import tensormodes as tm
    >>> calls = []
    >>> def record(module, forward, args, kwargs):
    ...     calls.append(type(module).__name__)
    ...     return forward(*args, **kwargs)
    >>> net = tm.nn.Sequential(tm.nn.ReLU())
    >>> with intercept_module_calls(record):
    ...     net(tm.ones(1)).tolist()
    [1.0]
    >>> calls
    ['Sequential', 'ReLU']
    """
    if not callable(fn):
        raise TypeError(f"intercept_module_calls() expects a callable, got {type(fn).__name__}")
    token = _INTERCEPTORS.set(_INTERCEPTORS.get() + (fn,))
    try:
        yield fn
    finally:
        _INTERCEPTORS.reset(token)


# -- the hooks of one module ----------------------------------------------------------------------

class _ModuleHooks:
    """``Module``'s forward and backward hooks: their registrars, and the module call, which runs
    them with the global hooks and the interceptors in scope (a base class of ``Module``)."""

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Register a forward pre-hook on the module.

        ``hook(module, args)`` (or ``hook(module, args, kwargs)`` with
        ``with_kwargs=True``, returning None or ``(new_args, new_kwargs)``) runs
        before ``forward``; a non-None result replaces the input.

        >>> import tensormodes as tm
        >>> m = tm.nn.Identity()
        >>> handle = m.register_forward_pre_hook(lambda module, args: (args[0] + 1,))
        >>> m(tm.zeros(1)).tolist()
        [1.0]
        """
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        self._hooks_registered = True
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Register a forward hook on the module.

        ``hook(module, args, output)`` (or ``hook(module, args, kwargs,
        output)`` with ``with_kwargs=True``) runs after ``forward``; a non-None
        result replaces the output. ``always_call`` runs it even if ``forward``
        raised.

        >>> import tensormodes as tm
        >>> m = tm.nn.Identity()
        >>> with m.register_forward_hook(lambda module, args, out: out * 3):
        ...     m(tm.ones(1)).tolist()
        [3.0]
        """
        handle = RemovableHandle(self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        self._hooks_registered = True
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register a backward pre-hook on the module.

        ``hook(module, grad_output)`` runs when the gradients with respect to
        the module's outputs are computed; a non-None result replaces
        ``grad_output``.

        >>> import tensormodes as tm
        >>> m, x = tm.nn.Identity(), tm.ones(2, requires_grad=True)
        >>> h = m.register_full_backward_pre_hook(lambda module, g: (g[0] * 10,))
        >>> m(x).sum().backward(); x.grad.tolist()
        [10.0, 10.0]
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        self._hooks_registered = True
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register a backward hook on the module.

        ``hook(module, grad_input, grad_output)`` runs when the gradients with
        respect to the module's inputs are computed; ``grad_input`` has one
        entry per positional argument (None for non-tensors). A non-None result
        replaces ``grad_input``.

        >>> import tensormodes as tm
        >>> m, x = tm.nn.Tanh(), tm.zeros(1, requires_grad=True)
        >>> h = m.register_full_backward_hook(lambda module, gi, go: print(gi[0].tolist(), go[0].tolist()))
        >>> m(x).sum().backward()
        [1.0] [1.0]
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single "
                               "Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        self._hooks_registered = True
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    # ------------------------------------------------------------------ calling

    # Set by the module's hook registrars (never cleared, like _GLOBAL_HOOK_STATE.registered).
    _hooks_registered = False

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        # The plain path: no hook ever registered here or globally, no interceptor -> forward directly.
        if not (self._hooks_registered or _GLOBAL_HOOK_STATE.registered or _INTERCEPTORS.get()):
            return self.forward(*args, **kwargs)
        # Hooks were registered at some point: the full check (their dicts may be empty again).
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks or _INTERCEPTORS.get()):
            return self.forward(*args, **kwargs)
        interceptors = _INTERCEPTORS.get()
        if interceptors:
            return self._intercepted_call(interceptors, args, kwargs)
        return self._hooked_call(args, kwargs)

    __call__: Callable[..., Any] = _call_impl

    def _intercepted_call(self, interceptors: tuple, args: tuple, kwargs: dict) -> Any:
        def continue_with(level: int) -> Callable:
            if level < 0:
                return lambda *a, **k: self._hooked_call(a, k)
            return lambda *a, **k: interceptors[level](self, continue_with(level - 1), a, k)

        return continue_with(len(interceptors) - 1)(*args, **kwargs)

    def _hooked_call(self, args: tuple, kwargs: dict) -> Any:
        result = None
        called_always = set()
        try:
            backward_pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
            backward_hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    replaced = hook(self, args, kwargs)
                    if replaced is not None:
                        if isinstance(replaced, tuple) and len(replaced) == 2:
                            args, kwargs = replaced
                        else:
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {replaced}.")
                else:
                    replaced = hook(self, args)
                    if replaced is not None:
                        args = replaced if isinstance(replaced, tuple) else (replaced,)
            backward_hook = None
            if backward_hooks or backward_pre_hooks:
                backward_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
                args = backward_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                    called_always.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    replaced = hook(self, args, kwargs, result)
                else:
                    replaced = hook(self, args, result)
                if replaced is not None:
                    result = replaced
            if backward_hook is not None:
                if not isinstance(result, (tm.Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple "
                                  f"of Tensors but received {type(result)}", stacklevel=2)
                else:
                    result = backward_hook.setup_output_hook(result)
            return result
        except Exception:
            self._run_always_called_hooks(called_always, args, kwargs, result)
            raise

    def _run_always_called_hooks(self, called: set, args: tuple, kwargs: dict, result: Any) -> None:
        for hook_id, hook in _global_forward_hooks.items():
            if hook_id in _global_forward_hooks_always_called and hook_id not in called:
                try:
                    replaced = hook(self, args, result)
                    if replaced is not None:
                        result = replaced
                except Exception as error:
                    warnings.warn("global module forward hook with ``always_call=True`` raised an exception that "
                                  f"was silenced as another error was raised in forward: {error}", stacklevel=3)
        for hook_id, hook in self._forward_hooks.items():
            if hook_id in self._forward_hooks_always_called and hook_id not in called:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        replaced = hook(self, args, kwargs, result)
                    else:
                        replaced = hook(self, args, result)
                    if replaced is not None:
                        result = replaced
                except Exception as error:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {error}", stacklevel=3)
