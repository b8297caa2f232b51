"""``autograd.graph.allow_mutation_on_saved_tensors``: within it, a tensor saved for backward
may be modified in place; it is cloned just before the write, and backward uses the clone.

Built as PyTorch's: saved-tensor hooks that keep a handle per saved tensor (by identity, data
pointer and version), and a dispatch mode that clones a saved tensor (or any tensor sharing
its data and version) before an op writes to it.

>>> import tensormodes as tm
>>> from tensormodes.autograd.graph import allow_mutation_on_saved_tensors
>>> with allow_mutation_on_saved_tensors():
...     a = tm.ones(2, requires_grad=True)
...     b = a.clone()
...     out = (b ** 2).sum()
...     _ = b.sin_()
...     out.backward()
>>> a.grad.tolist()
[2.0, 2.0]
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from weakref import WeakKeyDictionary, WeakValueDictionary

from .._api.dispatch_modes import TorchDispatchMode
from .._autograd.saved_hooks import saved_tensors_hooks

__all__ = ["allow_mutation_on_saved_tensors"]

_ENABLED = [False]


def _tensor_id(t) -> tuple:
    return id(t), t.data_ptr(), t._version


def _storage_id(t) -> tuple:
    return t.data_ptr(), t._version


class _Handle:
    """What the pack hook keeps for one saved tensor (weakly keyed to its original or clone)."""


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (cleared on exit)."""

    def __init__(self) -> None:
        self.cloned: WeakKeyDictionary = WeakKeyDictionary()
        self.original: WeakKeyDictionary = WeakKeyDictionary()
        self.tid_to_weakhandle: WeakValueDictionary = WeakValueDictionary()
        self.sid_to_tid: defaultdict = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


class _swap_with_cloned(saved_tensors_hooks):
    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack_hook(tensor) -> _Handle:
            tid, sid = _tensor_id(tensor), _storage_id(tensor)
            ctx.sid_to_tid[sid].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:  # (the same tensor at the same version may be saved several times)
                handle = ctx.tid_to_weakhandle[tid] = _Handle()
                ctx.original[handle] = tensor
            return handle

        def unpack_hook(handle: _Handle):
            error = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph "
                     "was originally recorded.")
            if not _ENABLED[0]:
                raise AssertionError(error)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(error)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


class _CloneArgBeforeMutateMode(TorchDispatchMode):
    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        self.ctx = ctx

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for index, argument in enumerate(func._schema.arguments):
            if not argument.is_write:
                continue
            value = kwargs.get(argument.name) if argument.kwarg_only or index >= len(args) else args[index]
            for t in value if isinstance(value, (list, tuple)) else (value,):
                if t is not None:
                    self._maybe_clone(t)
        return func(*args, **kwargs)

    def _maybe_clone(self, t) -> None:
        ctx = self.ctx
        for tid in ctx.sid_to_tid.get(_storage_id(t), ()):
            handle = ctx.tid_to_weakhandle.get(tid)
            # (a saved tensor already freed by backward has no handle left; one cloned already keeps its clone)
            if handle is None or handle in ctx.cloned:
                continue
            ctx.cloned[handle] = ctx.original[handle].clone()
            del ctx.original[handle]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Within it, tensors saved for backward may be modified in place (they are cloned first);
    run forward and backward in the same block. Yields the block's state (for debugging)."""
    ctx = _AllowMutationOnSavedContext()
    with _swap_with_cloned(ctx), _CloneArgBeforeMutateMode(ctx):
        try:
            if _ENABLED[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _ENABLED[0] = True
            yield ctx
        finally:
            ctx.clear()
            _ENABLED[0] = False
