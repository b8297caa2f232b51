"""Running the same expression on tensormodes and on PyTorch, and comparing what came out.

An expression is a string over ``L`` (the library: ``tensormodes`` or ``torch``),
``np``, ``inf`` and ``nan``, such as ``"L.arange(0, 1, 0.25, dtype=L.float64)"``.
Both runs must agree on the outcome: an exception of the same type with the same
message (``torch.`` spelled ``tensormodes.``), or a result with the same dtype,
shape and values.
"""

from __future__ import annotations

import warnings

import numpy as np

import tensormodes as tm

_NAMESPACE = {"np": np, "inf": float("inf"), "nan": float("nan")}


def run(library, expression: str):
    """``("ok", value)`` or ``("error", exception)`` for ``expression`` evaluated with ``L = library``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", eval(expression, {**_NAMESPACE, "L": library})
        except Exception as error:
            return "error", error


def _as_numpy(value):
    import torch

    if isinstance(value, torch.Tensor):
        value = value.detach()
        name = str(value.dtype).split(".")[1]
        return (value.float() if name == "bfloat16" else value).numpy(force=True), name
    if isinstance(value, tm.Tensor):
        name = repr(value.dtype).split(".")[1]
        data = value._data
        return (data.astype(np.float32) if name == "bfloat16" else data), name
    return None, None


def _text(value) -> str:
    return str(value).replace("torch.", "tensormodes.")


# torch.testing.assert_close's default (rtol, atol) per dtype: for results computed by
# different LAPACK builds, which may differ in the last bits (-4.7e-17 where another has 0.).
DTYPE_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}


def assert_same_outcome(expression: str, *, values: bool = True, rtol: float | None = 0.0,
                        atol: float | None = 0.0) -> None:
    """Run ``expression`` on both libraries and fail with both outcomes if they differ.

    ``values=False`` compares dtype and shape only (random results); ``rtol`` /
    ``atol`` allow rounding differences, and ``None`` takes the result dtype's default
    tolerance of ``torch.testing.assert_close`` (use it for LAPACK results). Tuples and
    lists of results (named tuples too) are compared item by item.
    """
    import torch

    ours, theirs = run(tm, expression), run(torch, expression)
    if ours[0] == "error" or theirs[0] == "error":
        assert ours[0] == theirs[0], f"{expression}: tensormodes {ours}, torch {theirs}"
        # PyTorch's error classes defined in C++ are named with an underscore (torch._C._LinAlgError),
        # and made public without it (torch.linalg.LinAlgError), as tensormodes names them.
        assert type(ours[1]).__name__ == type(theirs[1]).__name__.lstrip("_") or isinstance(ours[1], type(theirs[1])), \
            f"{expression}: {type(ours[1]).__name__} != torch's {type(theirs[1]).__name__}"
        assert _text(ours[1]) == _text(theirs[1]), f"{expression}: message {ours[1]!r} != torch's {theirs[1]!r}"
        return
    _assert_same_value(expression, ours[1], theirs[1], values, rtol, atol)


def _assert_same_value(expression: str, ours, theirs, values: bool, rtol, atol) -> None:
    if isinstance(ours, (tuple, list)) and isinstance(theirs, (tuple, list)) and not _is_size(ours):
        assert type(ours).__name__ == type(theirs).__name__, \
            f"{expression}: {type(ours).__name__} != torch's {type(theirs).__name__}"
        assert len(ours) == len(theirs), f"{expression}: {len(ours)} items != torch's {len(theirs)}"
        for o, t in zip(ours, theirs):
            _assert_same_value(expression, o, t, values, rtol, atol)
        return
    ours_array, ours_dtype = _as_numpy(ours)
    theirs_array, theirs_dtype = _as_numpy(theirs)
    if ours_dtype is None or theirs_dtype is None:
        assert _text(repr(ours)) == _text(repr(theirs)), f"{expression}: {ours!r} != {theirs!r}"
        return
    assert ours_dtype == theirs_dtype, f"{expression}: dtype {ours_dtype} != torch's {theirs_dtype}"
    assert ours_array.shape == theirs_array.shape, f"{expression}: shape {ours_array.shape} != {theirs_array.shape}"
    if values:
        default_rtol, default_atol = DTYPE_TOLERANCES.get(ours_dtype, (0.0, 0.0))
        np.testing.assert_allclose(ours_array, theirs_array, rtol=default_rtol if rtol is None else rtol,
                                   atol=default_atol if atol is None else atol, equal_nan=True,
                                   err_msg=expression)


def _is_size(value) -> bool:
    return type(value).__name__ == "Size"


def assert_raises_like_torch(expression: str) -> None:
    """``expression`` (over ``L``) raises in tensormodes, and the same type and message as in
    PyTorch (warnings silenced; ``torch.`` spelled ``tensormodes.``)."""
    import torch

    outcomes = []
    for library in (tm, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                eval(expression, {"L": library})
        except Exception as error:  # noqa: BLE001 - the error itself is what is compared
            outcomes.append((type(error).__name__, _text(error)))
        else:
            outcomes.append(None)
    assert outcomes[0] is not None, f"{expression}: tensormodes raised nothing, torch raised {outcomes[1]}"
    assert outcomes[0] == outcomes[1]
