"""``torch.norm`` (the legacy norm: ``p`` as a number or ``"fro"``/``"nuc"``) and the vector and
matrix norm kernels it shares with ``torch.linalg``'s norms (``norms.py``).

>>> import tensormodes as tm
>>> tm.norm(tm.tensor([[3., 4.], [0., 0.]]), dim=1)
tensor([5., 0.])
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from ._reduction import (
    _FLOAT32,
    _LOW_PRECISION,
    _is_floating_or_complex,
    _norm_grad,
    _quietly,
    _reduce_meta,
    _reduction_axes,
)
from ._samples import M23, M234, SCALAR
from .common import (
    dtype_of,
    is_int,
    resolve_dtype,
    scalar_type_name,
    wrap_dim,
)
from .linalg import svdvals as _svdvals
from .registry import Sample, Tensor, TensorSpec, alias, op


def _norm_order_text(order) -> str:
    """An order as PyTorch prints it in messages: ``inf``, ``-1``, ``1.5``."""
    value = float(order)
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    return str(int(value)) if value == int(value) else repr(value)


def _norm_dtypes(kind: str, array: np.ndarray, dtype) -> dt.dtype:
    """The dtype a norm computes in (PyTorch's ``linalg`` checks); the result is its real part."""
    source = dtype_of(array)
    if not _is_floating_or_complex(source):
        raise RuntimeError(f"linalg.{kind}: Expected a floating point or complex tensor as input. "
                           f"Got {scalar_type_name(source)}")
    target = resolve_dtype(dtype)
    if target is None:
        return source
    if not _is_floating_or_complex(target):
        raise RuntimeError(f"linalg.{kind}: dtype should be floating point or complex, but got "
                           f"{scalar_type_name(target)}")
    if source.is_complex != target.is_complex:
        wanted = "complex for complex" if source.is_complex else "real for real"
        raise RuntimeError(f"linalg.{kind}: dtype should be {wanted} inputs, but got {scalar_type_name(target)}")
    if dt.promote_types(source, target) is not target:
        raise RuntimeError(f"linalg.{kind}: the dtype of the input ({scalar_type_name(source)}) should be convertible "
                           f"without narrowing to the specified dtype ({scalar_type_name(target)})")
    return target


def _vector_norm(array: np.ndarray, order, dim, keepdim: bool, dtype) -> np.ndarray:
    if isinstance(order, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of norm.")
    order = float(order)
    target = _norm_dtypes("vector_norm", array, dtype)
    if is_int(dim):
        dim = (dim,)
    axis = _reduction_axes(dim, array.ndim, "linalg_vector_norm")
    if order < 0 or order == float("inf"):
        # Orders computed by a min or max have no value over nothing.
        if array.size == 0 and axis is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_norm_order_text(order)} norm on an empty "
                               "tensor because the operation does not have an identity")
        for position, a in enumerate(axis or ()):
            if array.shape[a] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_norm_order_text(order)} norm on the "
                                   f"dimension {dim[position]}because this dimension is empty and the operation "
                                   "does not have an identity")
    work = array.astype(target._np, copy=False)
    if work.dtype.kind == "c":  # C's hypot, as PyTorch (and ``abs``): NumPy's complex absolute rounds differently
        work = np.hypot(work.real, work.imag)
    else:
        work = np.abs(work.astype(_FLOAT32) if work.dtype in _LOW_PRECISION else work)
    reduced = math.prod(array.shape[a] for a in axis) if axis else array.size
    if order == 1 or (reduced == 1 and order != 0):
        # (one element per norm: PyTorch returns its absolute value, whatever the order, so
        # that 1e30 does not overflow through its square)
        result = np.add.reduce(work, axis=axis, keepdims=keepdim)
    elif order == 2:
        result = np.sqrt(np.add.reduce(work * work, axis=axis, keepdims=keepdim))
    elif order == float("inf"):
        result = np.maximum.reduce(work, axis=axis, keepdims=keepdim)
    elif order == float("-inf"):
        result = np.minimum.reduce(work, axis=axis, keepdims=keepdim)
    elif order == 0:
        result = np.add.reduce(work != 0, axis=axis, keepdims=keepdim, dtype=work.dtype)
    else:
        result = np.add.reduce(work ** order, axis=axis, keepdims=keepdim) ** (1 / order)
    return np.asarray(result).astype(target.to_real()._np, copy=False)


def _matrix_norm(array: np.ndarray, order: str, dim, keepdim: bool, dtype) -> np.ndarray:
    if order not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {order} not supported.")
    if array.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = (dim,) if is_int(dim) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    rows, columns = wrap_dim(dims[0], array.ndim), wrap_dim(dims[1], array.ndim)
    if rows == columns:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({rows}, {columns})")
    if order == "nuc" and array.dtype in _LOW_PRECISION:
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. "
                           f"Got {scalar_type_name(dtype_of(array))}")
    target = _norm_dtypes("matrix_norm", array, dtype)
    if order == "fro":
        return _vector_norm(array, 2, (rows, columns), keepdim, dtype)
    work = array.astype(target._np, copy=False)
    matrices = np.moveaxis(work, (rows, columns), (-2, -1))
    if matrices.size == 0:
        result = np.zeros(matrices.shape[:-2], target.to_real()._np)
    else:
        result = _svdvals(matrices).sum(axis=-1)  # (PyTorch's errors and NaNs for non-finite matrices)
    if keepdim:
        result = np.expand_dims(result, tuple(sorted((rows, columns))))
    return np.asarray(result).astype(target.to_real()._np, copy=False)


def _norm_node(input, p="fro", dim=None, keepdim=False, dtype=None) -> str:
    """PyTorch's ``norm`` ends in ``linalg_vector_norm``, or for the nuclear norm in a sum."""
    return "sum#1" if p == "nuc" else "linalg_vector_norm"


@op(meta=_reduce_meta(), grad=_norm_grad, method=True, out=True, node=_norm_node,
    samples=(Sample((M23,)), Sample((M23, 1)), Sample((M23, 0)), Sample((M23, float("inf"), 1)),
             Sample((M23, float("-inf"))), Sample((M23, 3, (0, 1), True)), Sample((M23, 0.5, -1)),
             Sample((M23, "fro", 1, True)), Sample((M23, "nuc")), Sample((M234, "nuc", (2, 0), True)),
             Sample((M23, None), {"dim": 0}), Sample((M23, 2), {"dtype": dt.float64}),
             Sample((TensorSpec((2, 3), "float16"),)), Sample((TensorSpec((2, 3), "complex64"), 2, 1)),
             Sample((SCALAR, 2, 0)), Sample((M234, "fro", (0, 2)))), aten={"norm.default": ("out+reduction",)})
@_quietly
def norm(input: Tensor, p: float | str | None = "fro", dim: int | tuple[int, ...] | None = None,
         keepdim: bool = False, dtype: dt.dtype | None = None) -> Tensor:
    """The ``p``-norm of ``input``, over all elements or over ``dim``.

    ``p`` may be a number (``inf``, ``-inf``, ``0`` - the count of nonzeros - or any
    real), ``'fro'`` (the 2-norm) or ``'nuc'`` (the nuclear norm of the matrices
    spanned by two dims). ``dtype`` (floating or complex, no narrower than the
    input) is the dtype computed in; the result is real.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[3., -4.], [0., 0.]])
    >>> x.norm().item(), x.norm(1).item(), x.norm(float('inf')).item()
    (5.0, 7.0, 4.0)
    >>> tm.norm(x, dim=1).tolist()
    [5.0, 0.0]
    """
    if isinstance(p, str):
        if p == "fro" and (dim is None or is_int(dim) or len(dim) <= 2):
            return _vector_norm(input, 2, dim, keepdim, dtype)
        return _matrix_norm(input, p, tuple(range(input.ndim)) if dim is None else dim, keepdim, dtype)
    return _vector_norm(input, 2 if p is None else p, dim, keepdim, dtype)


_norm_dim = alias("_norm_dim", of="norm", node="norm#1", samples=(
    Sample((M23, 2, 1)), Sample((M23, 1, -1, True)), Sample((M234, 3, (0, 2))), Sample((M23, float("inf"), 0))),
    doc="""``norm`` over ``dim`` as ATen's ``norm.ScalarOpt_dim`` overload, which PyTorch's native
    ``pairwise_distance`` ends in (node ``NormBackward1``; ``Tensor.norm`` records
    ``LinalgVectorNormBackward0`` instead, through its Python-level dispatch).

    >>> import tensormodes as tm
    >>> tm._norm_dim(tm.tensor([[3., 4.]]), 2, -1)
    tensor([5.])
    """)
