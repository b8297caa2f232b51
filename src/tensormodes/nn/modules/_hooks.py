"""Hook handles and the identity ``Function`` that carries a module's full backward hooks.

>>> import tensormodes as tm
>>> hooks = {}
>>> handle = RemovableHandle(hooks)
>>> hooks[handle.id] = print
>>> handle.remove(); hooks
{}
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from typing import Any

from ..._api import namespace as tm
from ...autograd import Function

__all__ = ["RemovableHandle", "BackwardHook"]

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
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                          "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                          "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                          "details.", stacklevel=5)
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
