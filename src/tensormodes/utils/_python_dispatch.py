"""Dispatch-level modes and helpers for ``__torch_dispatch__`` subclasses, at PyTorch's path.

A ``TorchDispatchMode`` sees every op *below autograd*, as an aten ``OpOverload`` with
schema-form arguments: composites already decomposed (``F.linear`` is ``t`` and ``addmm``),
methods and operators merged (``a + b`` is ``aten.add.Tensor``), and the backward pass's ops
too. Its handler runs with itself popped, so ``func(*args, **kwargs)`` reaches the next mode
down and finally the kernel.

>>> import tensormodes as tm
>>> class Log(TorchDispatchMode):
...     def __init__(self):
...         self.ops = []
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         self.ops.append(str(func))
...         return func(*args, **(kwargs or {}))
>>> x = tm.ones(2, requires_grad=True)
>>> with Log() as log:
...     (x * 2).sum().backward()
>>> log.ops  # doctest: +NORMALIZE_WHITESPACE
['aten.mul.Tensor', 'aten.sum.default', 'aten.ones_like.default', 'aten.expand.default', 'aten.mul.Tensor',
 'aten.detach.default']

Forward, then backward: the seed, the formula's ops, the accumulation into ``x.grad``.
Its stack is separate from the ``__torch_function__`` modes' (those run first, at the public
API), per thread and per asyncio task, and keeps the same guarantees (exceptions, exits out
of order, abandoned generators). *Infra* modes (``is_infra_mode()``: fake tensors, the
``make_fx`` tracer) always run after the user's modes, whatever the order they were pushed in.

``missing_ops(cls_or_mode, fn, *args)`` lists the ops a mode or wrapper subclass declines for a
whole program, run without data (``tensormodes._subclasses.coverage``). The classes and helpers
are defined in ``tensormodes._api.dispatch_modes``, below the tools built on them; this module is
their face at PyTorch's path.
"""

from __future__ import annotations

from .._api.dispatch_modes import (
    BaseTorchDispatchMode,
    TorchDispatchMode,
    is_in_torch_dispatch_mode,
    is_traceable_wrapper_subclass,
    return_and_correct_aliasing,
    transform_subclass,
)
from .._api.dispatch_modes import current_dispatch_mode as _get_current_dispatch_mode
from .._api.dispatch_modes import current_dispatch_mode_stack as _get_current_dispatch_mode_stack
from .._api.dispatch_modes import disable_current_modes as _disable_current_modes
from .._api.dispatch_modes import pop_mode as _pop_mode
from .._api.dispatch_modes import pop_mode_temporarily as _pop_mode_temporarily
from .._api.dispatch_modes import push_mode as _push_mode
from .._subclasses.coverage import missing_ops

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode", "is_in_torch_dispatch_mode", "return_and_correct_aliasing",
           "is_traceable_wrapper_subclass", "transform_subclass", "missing_ops", "_get_current_dispatch_mode",
           "_get_current_dispatch_mode_stack", "_push_mode", "_pop_mode", "_pop_mode_temporarily",
           "_disable_current_modes"]
