"""Coverage before running: which aten ops a dispatch mode or a ``__torch_dispatch__`` subclass
declines for a whole program, found in one run without data.

A subclass author otherwise learns of unsupported ops one crash at a time: the first op the
handler returns ``NotImplemented`` for stops the program. ``missing_ops`` runs the program under
``FakeTensorMode`` instead, offers every op to the handler on fake inputs, records the ones it
declines and carries on with the op's fake result.

It is ``tensormodes.utils._python_dispatch.missing_ops`` too (issue 25's path): that public face
re-exports it, as it re-exports ``TorchDispatchMode``, which lives below both in
``_api/dispatch_modes.py`` so that ``FakeTensorMode`` needs nothing from the face.

>>> import tensormodes as tm
>>> from tensormodes.utils._python_dispatch import TorchDispatchMode
>>> class OnlyMatmuls(TorchDispatchMode):
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         if func in (tm.ops.aten.mm.default, tm.ops.aten.t.default):
...             return func(*args, **(kwargs or {}))
...         return NotImplemented
>>> def step(x, w):
...     return (x @ w.t()).relu().sum()
>>> missing_ops(OnlyMatmuls, step, tm.ones(4, 3), tm.ones(2, 3))
[<OpOverload(op='aten.relu', overload='default')>, <OpOverload(op='aten.sum', overload='default')>]
"""

from __future__ import annotations

from .._api import namespace as tm
from .._api.dispatch_modes import TorchDispatchMode, is_traceable_wrapper_subclass, transform_subclass
from .._tensor_base import TensorBase
from .fake_tensor import FakeTensor, FakeTensorMode

__all__ = ["missing_ops"]


def missing_ops(cls_or_mode, fn, *args, **kwargs) -> list:
    """The aten ops ``cls_or_mode`` declines when ``fn(*args, **kwargs)`` runs, sorted by name.

    ``cls_or_mode``: a ``TorchDispatchMode`` (instance, or class built with no arguments), which
    is offered every op the program runs, forward and backward; or a ``__torch_dispatch__``
    subclass, which is offered every op with one of its instances among the arguments — pass
    instances of it among ``args`` (made as usual, with real tensors inside; a traceable
    wrapper's inner tensors, per ``__tensor_flatten__``, are made fake, other tensors inside it
    are converted when first used). Everything runs under ``FakeTensorMode``: real tensors among
    ``args`` become fake (``from_tensor``), so nothing is computed and sizes cost nothing.

    An op is declined when the handler returns ``NotImplemented`` or raises
    ``NotImplementedError``; the program then goes on with the op run on fake values. For a
    subclass, the result of a declined op is a plain fake tensor, so ops that only depend on
    it are no longer offered to the subclass (a handler that dequantizes to plain tensors for
    unknown ops behaves the same way).

    >>> import tensormodes as tm
    >>> from tensormodes.utils._python_dispatch import BaseTorchDispatchMode
    >>> missing_ops(BaseTorchDispatchMode, lambda x: x.sin().sum(), tm.ones(3))
    []
    """
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    if isinstance(cls_or_mode, type) and issubclass(cls_or_mode, TorchDispatchMode):
        cls_or_mode = cls_or_mode()
    probe = _Probe(cls_or_mode)
    convert = _converter(fake_mode, None if isinstance(cls_or_mode, TorchDispatchMode) else cls_or_mode)
    with fake_mode:
        fake_args = [convert(a) for a in args]
        fake_kwargs = {k: convert(v) for k, v in kwargs.items()}
        with probe:
            fn(*fake_args, **fake_kwargs)
    return sorted(probe.declined, key=str)


def _converter(fake_mode: FakeTensorMode, cls):
    """What a program's argument becomes: plain tensors fake ones, instances of ``cls`` with
    their inner tensors made fake (when they say which those are)."""

    def convert(value):
        if isinstance(value, (list, tuple)):
            return type(value)(convert(v) for v in value)
        if cls is not None and isinstance(value, cls):
            if is_traceable_wrapper_subclass(value):
                return transform_subclass(value, lambda name, inner: convert(inner))
            return value
        if isinstance(value, TensorBase) and not isinstance(value, FakeTensor):
            return fake_mode.from_tensor(value)
        return value

    return convert


class _Probe(TorchDispatchMode):
    """Offers each op to the handler under test and records the ones it declines (run, as the
    dispatch chain runs a handler, with this mode popped: FakeTensorMode below it)."""

    def __init__(self, target) -> None:
        super().__init__()
        self.target = target
        self.declined: set = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        target = self.target
        if isinstance(target, TorchDispatchMode):
            offered = (types, args, kwargs)
        elif any(issubclass(kind, target) for kind in types):
            offered = (tuple(t for t in types if issubclass(t, target)), args, kwargs)
            args, kwargs = _outer(args, target), {k: _outer((v,), target)[0] for k, v in kwargs.items()}
        else:
            return func(*args, **kwargs)
        try:
            result = target.__torch_dispatch__(func, *offered)
        except NotImplementedError:
            result = NotImplemented
        if result is NotImplemented:
            self.declined.add(func)
            return func(*args, **kwargs)  # on fake values, so that the program goes on
        return result


def _outer(values: tuple, cls) -> tuple:
    """``values`` with each instance of ``cls`` replaced by a fake tensor of its outer metadata."""
    return tuple(type(v)(_outer(v, cls)) if isinstance(v, (list, tuple)) else
                 _fake_like(v) if isinstance(v, cls) else v for v in values)


def _fake_like(t):
    return tm.empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype, requires_grad=t.requires_grad)
