"""``CrossRefMode``: every call runs for real and on meta copies of its inputs; the first
disagreement raises :class:`MetaMismatchError` at the user's line.

>>> import tensormodes as tm
>>> from tensormodes.meta import CrossRefMode
>>> x = tm.ones(3, 4)
>>> with CrossRefMode() as check:
...     y = x.clone().detach()
>>> check.checked
2
"""

from __future__ import annotations

import linecache

from .._api.tensor import Tensor
from .._autograd.grad_mode import grad_enabled, set_grad_enabled
from .._meta_array import MetaArray
from .._overrides import dispatch as _dispatch
from .._tensor_base import wrap_array
from ..modes.observing import user_location
from ..overrides import TorchFunctionMode, resolve_name
from ._records import _RECORDED_GRAPH, _rebuilt, _tensor_metadata, encode, exception_name
from .validate import _PRINTING, compare, judge, replayable, takes_device

__all__ = ["CrossRefMode", "MetaMismatchError"]


class MetaMismatchError(AssertionError):
    """A meta rule disagreed with real execution. ``op``: the function's public name;
    ``what``: what differed (``'shape'``, ``'dtype'``, ``'stride'``, ``'error'`` ...);
    ``real`` and ``meta``: the two sides as text; ``filename`` and ``lineno``: the user's
    line that made the call."""

    def __init__(self, op: str, what: str, real: str, meta: str, filename: str, lineno: int) -> None:
        self.op, self.what, self.real, self.meta = op, what, real, meta
        self.filename, self.lineno = filename, lineno
        source = linecache.getline(filename, lineno).strip()
        message = f"{op}: the meta result differs in {what}: real {real}, meta {meta} at {filename}:{lineno}"
        super().__init__(f"{message}: {source}" if source else message)


def _meta_copy(value):
    if isinstance(value, Tensor):
        data = value._data
        if type(data) is MetaArray or value._view_base is not None:
            return _rebuilt(_tensor_metadata(value))  # the general path: storage offsets
        # The common case, made directly (a call's inputs are copied on every call).
        itemsize = data.itemsize
        copy = wrap_array(MetaArray(data.shape, data.dtype, tuple(s // itemsize for s in data.strides)))
        if value._requires_grad:
            copy._requires_grad = True
            if value._grad_fn is not None:
                copy._grad_fn = _RECORDED_GRAPH
        return copy
    if type(value) is list:
        return [_meta_copy(v) for v in value]
    if type(value) is tuple:
        return tuple(_meta_copy(v) for v in value)
    return value


def _has_tensor(values) -> bool:
    for value in values:
        if isinstance(value, Tensor):
            return True
        if type(value) in (list, tuple) and _has_tensor(value):
            return True
    return False


def _differs(real, meta):
    """``compare`` for live results, without encoding them when they agree (the usual case)."""
    if isinstance(real, Tensor) and isinstance(meta, Tensor):
        r, m = real._data, meta._data
        if r.shape == m.shape and r.dtype == m.dtype and (r.size <= 1 or r.strides == m.strides or [
                s for n, s in zip(r.shape, r.strides) if n != 1] == [s for n, s in zip(m.shape, m.strides) if n != 1]):
            return None
    elif type(real) is tuple or type(real) is list or isinstance(real, tuple):
        if type(meta) is type(real) and len(meta) == len(real) and all(
                _differs(a, b) is None for a, b in zip(real, meta)):
            return None
    elif not isinstance(real, Tensor) and real == meta:
        return None
    return compare(encode(real), encode(meta))


class CrossRefMode(TorchFunctionMode):
    """Runs each call made in its scope twice: for real, and on meta copies of its tensor
    arguments (same shape, dtype, strides, storage offset and ``requires_grad``; factories
    get ``device="meta"``). The meta run's result must have the real result's shapes, dtypes
    and strides, and an error the same type and message; otherwise the real result is
    dropped and :class:`MetaMismatchError` names the op, both results and the user's source
    line. The real result is what the caller gets.

    Only the calls the user's code makes are checked, not those made by their bodies; calls
    whose meta run needs values (``item``, ``nonzero``) or that reach an op without a meta
    rule are counted in ``unchecked`` (public name -> calls) and pass. ``checked`` counts the
    calls that were compared. The meta runs are invisible to modes below this one.

    >>> import tensormodes as tm
    >>> from tensormodes.meta import CrossRefMode
    >>> x = tm.ones(2, 3)
    >>> with CrossRefMode() as check:
    ...     n = x.numel()
    >>> n, check.checked
    (6, 1)
    """

    def __init__(self) -> None:
        self.checked = 0
        self.unchecked: dict[str, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Run the call for real and on meta copies; compare."""
        kwargs = kwargs or {}
        name = resolve_name(func)
        if replayable(name, func if name is not None else None) is not None:
            return func(*args, **kwargs)
        meta_args = _meta_copy(args)
        meta_kwargs = {key: _meta_copy(value) for key, value in kwargs.items()}  # before an in-place call changes them
        if not _has_tensor(args) and not _has_tensor(kwargs.values()):
            if not takes_device(func):
                return func(*args, **kwargs)
            meta_kwargs["device"] = "meta"
        try:
            result = func(*args, **kwargs)
        except Exception as error:
            self._check(name, (exception_name(error), str(error)), None, func, meta_args, meta_kwargs)
            raise
        self._check(name, None, result, func, meta_args, meta_kwargs)
        return result

    def _check(self, name, real_error, result, func, meta_args, meta_kwargs) -> None:
        # The meta run is ours: modes below this one do not see it. After a real success it runs
        # without recording for autograd (grad mode only adds errors, and the real call passed them).
        # Set inside the try and restored by value, so that an exception arriving mid-way (a
        # signal handler's) leaves neither changed.
        state, grad = _dispatch.get_state(), grad_enabled()
        try:
            _dispatch.set_state(None)
            if real_error is None:
                set_grad_enabled(False)
            meta_result = func(*meta_args, **meta_kwargs)
        except Exception as error:  # noqa: BLE001 - the outcome under test
            outcome, detail = judge(name, real_error, None, error, None)
        else:
            if real_error is None and name not in _PRINTING:
                detail = _differs(result, meta_result)
                outcome = "match" if detail is None else "mismatch"
            else:
                outcome, detail = judge(name, real_error, None if real_error else encode(result), None, meta_result)
        finally:
            set_grad_enabled(grad)
            _dispatch.set_state(state)
        if outcome == "match":
            self.checked += 1
        elif outcome == "mismatch":
            raise MetaMismatchError(name, *detail, *user_location(3))
        else:
            self.unchecked[name] = self.unchecked.get(name, 0) + 1

    def __repr__(self) -> str:
        return f"CrossRefMode(checked={self.checked})"
