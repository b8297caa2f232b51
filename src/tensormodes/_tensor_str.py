"""PyTorch-style printing of tensors: ``tensor([1.0000, 2.5000], dtype=...)``."""

from __future__ import annotations

import numpy as np

from . import _dtype as dt

__all__ = ["tensor_repr"]


def tensor_repr(t, tensor_contents=None) -> str:
    data = t._data
    if data.dtype == dt.bfloat16._np:
        data = data.astype(np.float32)
    prefix = "tensor("
    body = np.array2string(data, separator=", ", prefix=prefix) if tensor_contents is None else tensor_contents
    suffixes = []
    d = dt.NP_TO_DTYPE[t._data.dtype]
    if d not in (dt.get_default_dtype(), dt.int64, dt.bool, dt.default_complex_dtype()):
        suffixes.append(f"dtype={d!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + ", ".join([body, *suffixes]) + ")"
