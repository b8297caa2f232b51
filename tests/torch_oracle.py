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


def assert_same_outcome(expression: str, *, values: bool = True, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Run ``expression`` on both libraries and fail with both outcomes if they differ.

    ``values=False`` compares dtype and shape only (random results); ``rtol`` /
    ``atol`` allow rounding differences.
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
    ours_array, ours_dtype = _as_numpy(ours[1])
    theirs_array, theirs_dtype = _as_numpy(theirs[1])
    if ours_dtype is None or theirs_dtype is None:
        assert _text(repr(ours[1])) == _text(repr(theirs[1])), f"{expression}: {ours[1]!r} != {theirs[1]!r}"
        return
    assert ours_dtype == theirs_dtype, f"{expression}: dtype {ours_dtype} != torch's {theirs_dtype}"
    assert ours_array.shape == theirs_array.shape, f"{expression}: shape {ours_array.shape} != {theirs_array.shape}"
    if values:
        np.testing.assert_allclose(ours_array, theirs_array, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=expression)
