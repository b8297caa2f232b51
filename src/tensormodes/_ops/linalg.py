"""Linear algebra: products of vectors, matrices and batches, ``einsum``, ``trace``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from ._registry import OWN, Dunder, Sample, TensorSpec, op

if TYPE_CHECKING:
    from .._tensor import Tensor


def _check_same_dtype(a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dtype_name(dt.NP_TO_DTYPE[a.dtype])} != {_dtype_name(dt.NP_TO_DTYPE[b.dtype])}")


def _dtype_name(d) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(repr(d).split(".")[1], repr(d).split(".")[1])


@op(method=True, out=True,
    dunders=(Dunder("__matmul__"), Dunder("__rmatmul__", OWN, reflected=True)),
    samples=(Sample((TensorSpec((2, 3)), TensorSpec((3, 4)))), Sample((TensorSpec((3,)), TensorSpec((3,)))),
             Sample((TensorSpec((2, 2, 3)), TensorSpec((3, 2))))))
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with broadcasting over batch dimensions (vectors as in NumPy).

    >>> import tensormodes as tm
    >>> tm.tensor([[1., 2.]]) @ tm.tensor([[3.], [4.]])
    tensor([[11.]])
    """
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    _check_same_dtype(input, other)
    try:
        return np.asarray(np.matmul(input, other))
    except ValueError:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(input)} and "
                           f"{_shape_text(other)})") from None


def _shape_text(a: np.ndarray) -> str:
    return "x".join(str(d) for d in a.shape)
