"""``NanCheckMode``: stop (or warn) at the first call whose result holds a NaN, or an Inf that
the call made from finite arguments.

>>> import tensormodes as tm
>>> from tensormodes.modes import NanCheckMode
>>> try:
...     with NanCheckMode():
...         y = tm.tensor([0.0, 1.0]).log()
... except FloatingPointError as error:
...     print(str(error).split(" at ")[0])
tensormodes.Tensor.log produced Inf in its result
"""

from __future__ import annotations

import linecache
import math
import warnings

import numpy as np

from .. import _dtype
from .._api import build as _build
from .._api.tensor import Tensor
from .._ops import OPS
from .._overrides.composite import Observer, calls_public_api, run_composite
from ..overrides import TorchFunctionMode
from .observing import ThreadDepth, public_name, user_location

__all__ = ["NanCheckMode"]

# Only floating and complex results can hold NaN or Inf.
_CHECKED = frozenset(d._np for d in (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64,
                                     _dtype.complex64, _dtype.complex128))


def _non_finite(value) -> str | None:
    """'NaN', 'Inf' or 'NaN and Inf' if the tensor has such values, else None."""
    data = value._data
    if data.dtype not in _CHECKED or type(data) is not np.ndarray:  # meta tensors hold no values
        return None
    flat = data.ravel()
    try:
        # One BLAS dot: a sum of squares is NaN or Inf if any element is (squares cannot cancel
        # an Inf), and four times cheaper than isfinite(...).all(); it can also overflow, so a
        # non-finite sum is confirmed element by element.
        total = flat.dot(flat)
    except TypeError:  # no dot for this dtype
        total = math.nan
    if total - total == 0 or np.isfinite(data).all():
        return None
    nan = bool(np.isnan(data).any())
    inf = bool(np.isinf(data).any())
    return "NaN and Inf" if nan and inf else "NaN" if nan else "Inf"


def _find(result) -> tuple[str, str] | None:
    """(what, where) of the first non-finite output: the result, an index or a field."""
    if isinstance(result, Tensor):
        found = _non_finite(result)
        return None if found is None else (found, "its result")
    if isinstance(result, (tuple, list)):
        fields = getattr(result, "_fields", None)
        for i, item in enumerate(result):
            if isinstance(item, Tensor):
                found = _non_finite(item)
                if found is not None:
                    return found, f"output {fields[i]!r}" if fields else f"output {i}"
    return None


def _holds_inf(value) -> bool:
    """Whether an argument brought an Inf in: a tensor, an array or a number (in tuples, lists
    and dicts) holding one. Only asked when a result holds an Inf, so its cost is off the
    common path."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Tensor):
            found = _non_finite(item)
            if found is not None and "Inf" in found:
                return True
        elif isinstance(item, float):
            if math.isinf(item):
                return True
        elif isinstance(item, complex):
            if math.isinf(item.real) or math.isinf(item.imag):
                return True
        elif isinstance(item, np.ndarray):
            if item.dtype.kind in "fc" and bool(np.isinf(item).any()):
                return True
        elif isinstance(item, (tuple, list)):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
    return False


class NanCheckMode(Observer, TorchFunctionMode):
    """Checks the result of every public call for NaN and Inf, in the forward pass and in the
    gradient formulas that ``Tensor.backward()`` runs. At the first non-finite result it
    raises ``FloatingPointError`` (``action="raise"``) or warns with a ``RuntimeWarning``
    pointing at the user's line (``action="warn"``), naming the function, which output
    (``its result``, ``output 1``, ``output 'values'``) and the user's source line: the
    first frame outside the tensormodes package.

    The rule: a NaN is flagged wherever it appears; an Inf (or -Inf) only where a call made it
    from finite arguments (an overflow, a division by zero, ``log(0)``), never where an Inf came
    in through an argument (a fill value, an additive mask), so correct code such as
    ``scores.masked_fill(~mask, float("-inf"))`` and the softmax after it runs unstopped. What is
    flagged does not depend on other modes being active. Only floating and complex results are
    checked, with one NumPy reduction each (and the arguments only when a result holds an Inf).

    >>> import warnings, tensormodes as tm
    >>> from tensormodes.modes import NanCheckMode
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     with NanCheckMode(action="warn"):
    ...         _ = tm.tensor([-1.0]).sqrt()
    >>> str(caught[0].message).split(" at ")[0]
    'tensormodes.Tensor.sqrt produced NaN in its result'
    """

    def __init__(self, action: str = "raise") -> None:
        if action not in ("raise", "warn"):
            raise ValueError(f"NanCheckMode: action must be 'raise' or 'warn', got {action!r}")
        self.action = action
        self._backward = ThreadDepth()  # depth of backward calls in this thread

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Run the call and check its result."""
        if func is _BACKWARD:
            self._backward.value += 1
            try:
                return run_composite(self, func, args, kwargs or {}, True)
            finally:
                self._backward.value -= 1
        if calls_public_api(func):
            result = run_composite(self, func, args, kwargs or {}, False)
        else:
            result = func(*args, **(kwargs or {}))
        if func in _UNINITIALIZED or public_name(func) in _NO_NEW_VALUES:
            return result
        found = _find(result)
        if found is not None and (found[0] != "Inf" or not _holds_inf((args, kwargs))):
            self._report(func, *found)
        return result

    def _report(self, func, what: str, where: str) -> None:
        filename, lineno = user_location(3)
        source = linecache.getline(filename, lineno).strip()
        phase = " during backward" if self._backward.value else ""
        message = f"{public_name(func)} produced {what} in {where}{phase} at {filename}:{lineno}"
        if source:
            message += f": {source}"
        if self.action == "raise":
            raise FloatingPointError(message)
        warnings.warn_explicit(message, RuntimeWarning, filename, lineno)

    def __repr__(self) -> str:
        return f"NanCheckMode(action={self.action!r})"


_BACKWARD = Tensor.backward
# Factories whose values are uninitialized memory (PyTorch's torch.empty), and resize_'s new part
# (``Tensor.new(2, 3)``, the legacy constructor, gives uninitialized memory too).
_UNINITIALIZED = frozenset({_build.public_function("empty"), _build.public_function("empty_like"),
                            Tensor.new_empty, Tensor.resize_, Tensor.new})
# Calls that make no new values (views, aliases, flags): a NaN they show was made, and checked,
# where it was computed, or is uninitialized memory (a module's parameters before their init).
_NO_NEW_VALUES = frozenset(
    [f"{o.namespace}.{o.function}" for o in OPS.values() if (o.view or o.alias) and o.function]
    + [f"tensormodes.Tensor.{o.method}" for o in OPS.values() if (o.view or o.alias) and o.method]
    + ["tensormodes.Tensor.requires_grad_", "tensormodes.Tensor.retain_grad", "tensormodes.Tensor.detach_"])
