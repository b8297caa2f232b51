"""``torch.testing``'s ``assert_close``: PyTorch's default tolerances per dtype and its
mismatch messages, for tests written against tensormodes that port to PyTorch.

>>> import tensormodes as tm
>>> tm.testing.assert_close(tm.tensor([1.0, 2.0]), tm.tensor([1.0, 2.0 + 1e-7]))
>>> tm.testing.assert_close(tm.tensor([1.0, 2.0]), tm.tensor([1.0, 3.0]))
Traceback (most recent call last):
...
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 2 (50.0%)
Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.3333333432674408 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ._api.tensor import Tensor
from ._dtype import promote_types

__all__ = ["assert_close"]

# PyTorch's default (rtol, atol) per dtype; other dtypes (integers, bool) compare exactly.
_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(AssertionError):
    """A failed comparison, with the path of the item that failed inside containers."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def _dtype_name(dtype) -> str:
    return repr(dtype).rpartition(".")[2]


def _default_tolerances(*names: str) -> tuple[float, float]:
    pairs = [_TOLERANCES.get(name, (0.0, 0.0)) for name in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _as_numpy(t) -> np.ndarray:
    array = t.detach().numpy()
    if _dtype_name(t.dtype) == "bfloat16":
        array = array.astype(np.float32)
    return array


def _item(value):
    return value.item() if isinstance(value, np.generic | np.ndarray) else value


def _differences(actual: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if actual.dtype == np.bool_:
        actual, expected = actual.astype(np.int64), expected.astype(np.int64)
    absolute = np.abs(actual - expected)
    # An integer quotient is computed in the default dtype, as PyTorch's true division does.
    relative_type = np.float32 if absolute.dtype.kind in "iu" else absolute.dtype
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = absolute.astype(relative_type) / np.abs(expected).astype(relative_type)
    return absolute, relative


def _close(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    if actual.dtype == np.bool_ or actual.dtype.kind in "iu":
        equal = actual == expected
        if rtol == 0 and atol == 0:
            return equal
    else:
        equal = actual == expected
    with np.errstate(invalid="ignore", over="ignore"):
        within = np.abs(actual - expected) <= atol + rtol * np.abs(expected)
    close = equal | (within & np.isfinite(expected))
    if equal_nan and actual.dtype.kind in "fc":
        close |= np.isnan(actual) & np.isnan(expected)
    return close


def _scalar_message(actual, expected, rtol: float, atol: float) -> str:
    # Differences of scalars are computed on Python numbers, as PyTorch does.
    absolute = abs(actual - expected)
    relative = absolute / abs(expected) if expected != 0 else (float("nan") if absolute != absolute else float("inf"))
    exact = rtol == 0 and atol == 0
    lines = [f"Scalars are not {'equal' if exact else 'close'}!", "", f"Expected {expected} but got {actual}.",
             f"Absolute difference: {absolute}" + ("" if exact else f" (up to {atol} allowed)"),
             f"Relative difference: {relative}" + ("" if exact else f" (up to {rtol} allowed)")]
    return "\n".join(lines)


def _compare_numbers(actual, expected, rtol, atol, equal_nan: bool) -> None:
    if type(actual) is not type(expected):
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    default = _default_tolerances(_NUMBER_DTYPES[type(actual)])
    rtol, atol = default if rtol is None else (rtol, atol)
    a, e = np.asarray(actual), np.asarray(expected)
    if _close(a, e, rtol, atol, equal_nan):
        return
    raise _Mismatch(_scalar_message(actual, expected, rtol, atol))


def _compare_tensors(actual, expected, rtol, atol, equal_nan: bool, check_dtype: bool) -> None:
    if actual.shape != expected.shape:
        raise _Mismatch(f"The values for attribute 'shape' do not match: {actual.shape!r} != {expected.shape!r}.")
    if check_dtype and actual.dtype is not expected.dtype:
        raise _Mismatch(f"The values for attribute 'dtype' do not match: {actual.dtype!r} != {expected.dtype!r}.")
    if rtol is None:
        rtol, atol = _default_tolerances(_dtype_name(actual.dtype), _dtype_name(expected.dtype))
    a, e = _as_numpy(actual), _as_numpy(expected)
    if a.dtype != e.dtype:  # compared in PyTorch's promoted dtype (float32 and int64 give float32)
        common = promote_types(actual.dtype, expected.dtype)
        common_np = np.dtype(np.float32) if _dtype_name(common) == "bfloat16" else common._np
        a, e = a.astype(common_np), e.astype(common_np)
    close = _close(a, e, rtol, atol, equal_nan)
    if close.all():
        return
    if a.ndim == 0:
        raise _Mismatch(_scalar_message(_item(a), _item(e), rtol, atol))
    absolute, relative = _differences(a, e)
    exact = rtol == 0 and atol == 0
    mismatched = ~close
    count, total = int(mismatched.sum()), mismatched.size
    absolute = np.where(mismatched, absolute, 0)
    relative = np.where(mismatched, relative, 0)
    # NaN is the greatest difference, as torch.argmax ranks it
    abs_at = int(np.argmax(np.where(np.isnan(absolute), np.inf, absolute)))
    rel_at = int(np.argmax(np.where(np.isnan(relative), np.inf, relative)))
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {count} / {total} ({count / total:.1%})",
             f"Greatest absolute difference: {_item(absolute.flat[abs_at])} at index "
             f"{tuple(int(i) for i in np.unravel_index(abs_at, a.shape))}"
             + ("" if exact else f" (up to {atol} allowed)"),
             f"Greatest relative difference: {_item(relative.flat[rel_at])} at index "
             f"{tuple(int(i) for i in np.unravel_index(rel_at, a.shape))}"
             + ("" if exact else f" (up to {rtol} allowed)")]
    raise _Mismatch("\n".join(lines))


def _compare(actual, expected, path: str, options: dict) -> None:
    allow_subclasses = options["allow_subclasses"]
    if actual is None and expected is None:
        return
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
        try:
            _compare_tensors(actual, expected, options["rtol"], options["atol"], options["equal_nan"],
                             options["check_dtype"])
        except _Mismatch as mismatch:
            raise _Mismatch(mismatch.message, path) from None
        return
    numbers = (bool, int, float, complex)
    if isinstance(actual, numbers) and isinstance(expected, numbers) and not isinstance(actual, Tensor):
        try:
            _compare_numbers(actual, expected, options["rtol"], options["atol"], options["equal_nan"])
        except _Mismatch as mismatch:
            raise _Mismatch(mismatch.message, path) from None
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(f"The keys of the mappings do not match:\n{sorted(map(repr, actual))} != "
                            f"{sorted(map(repr, expected))}", path)
        for key in actual:
            _compare(actual[key], expected[key], f"{path}[{key!r}]", options)
        return
    sequence = (isinstance(actual, Sequence) and isinstance(expected, Sequence)
                and not isinstance(actual, str) and not isinstance(expected, str))
    if sequence:
        if len(actual) != len(expected):
            raise _Mismatch(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{path}[{i}]", options)
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Asserts that ``actual`` and ``expected`` are close.

    Tensors (or Python numbers) are close when ``|actual - expected| <= atol + rtol * |expected|``
    elementwise, with equal non-finite values (and NaNs with ``equal_nan=True``); sequences
    and mappings are compared item by item. Without ``rtol`` and ``atol`` (give both or
    neither), PyTorch's defaults for the dtype apply: float16 ``(1e-3, 1e-5)``, bfloat16
    ``(1.6e-2, 1e-5)``, float32 and complex64 ``(1.3e-6, 1e-5)``, float64 and complex128
    ``(1e-7, 1e-7)``, exact for the others. Shapes and (with ``check_dtype``) dtypes must
    match. ``msg`` replaces the message, or (a callable) maps it. Tensors all live on
    the cpu, with one layout, so ``check_device``/``check_layout``/``check_stride`` change
    nothing.

    >>> import tensormodes as tm
    >>> tm.testing.assert_close(tm.tensor(1.0), tm.tensor(1.5), rtol=0.0, atol=0.6)
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
               "check_dtype": check_dtype}
    try:
        _compare(actual, expected, "", options)
    except _Mismatch as mismatch:
        message = mismatch.message
        if callable(msg):
            message = msg(message)
        elif msg is not None:
            message = msg
        elif mismatch.path:
            message += f"\n\nThe failure occurred for item {mismatch.path}"
        raise AssertionError(message) from None
