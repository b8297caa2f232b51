"""What torch.fft's transforms share: their checks (PyTorch's messages, for kernels and meta rules
alike), the dims and sizes a call transforms (``s``/``n`` and ``dim`` canonicalized as PyTorch's),
and the normalization codes of ATen's transform ops (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``).

>>> _many_dims((2, 3, 4), (5, -1), None, False)
((1, 2), (5, 4))
>>> _NORMALIZATION["ortho"]
(1, 1)
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .common import scalar_type_name, wrap_dim
from .creation import _DEFAULT_DTYPE

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(np.complex64): np.dtype(np.complex64), np.dtype(np.complex128): np.dtype(np.complex128)}
_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64),
            np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64)}


# -- checks shared by kernels and meta rules --------------------------------------------------

def _norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _float_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a transform computes in: integers and bools in the default float dtype; half
    types are not supported on a CPU, as in PyTorch."""
    if dtype.kind in "biu":
        return _DEFAULT_DTYPE.get()[0]._np
    if dtype not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {scalar_type_name(dt.NP_TO_DTYPE[dtype])}")
    return dtype


def _check_real(dtype: np.dtype, name: str) -> None:
    if dtype.kind == "c" and name == "ihfftn":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {scalar_type_name(dt.NP_TO_DTYPE[dtype])}")
    if dtype.kind == "c":
        kind = "real-valued" if name.endswith("n") else "real"
        raise RuntimeError(f"{name} expects a {kind} input tensor, but got {scalar_type_name(dt.NP_TO_DTYPE[dtype])}")


def _check_dtype(dtype: np.dtype, real_only: str | None = None) -> None:
    """PyTorch's first check: a supported dtype (and a real one for ``real_only``, the op's name)."""
    if real_only is not None:
        _check_real(dtype, real_only)
    _float_dtype(dtype)


def _check_axes(dims: tuple, name: str) -> None:
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _c2r_dims_then_dtype(input, s, dim, name: str):
    """``_many_dims`` of a one-sided input, then the dtype: PyTorch's order there (the axes and
    the point count are checked before the dtype)."""
    dims, sizes = _many_dims(input.shape, s, dim, True)
    _check_axes(dims, name)
    _check_points(sizes[-1])
    _check_dtype(input.dtype)
    return dims, sizes


def _r2c_dims_then_dtype(input, s, dim, name: str):
    """``_many_dims`` of a real-to-complex n-dim transform with PyTorch's checks in its order: a
    real input (``rfftn``; ``ihfftn`` checks that last), the dims, at least one axis, the dtype."""
    if name != "ihfftn":
        _check_real(input.dtype, name)
    dims, sizes = _many_dims(input.shape, s, dim, False)
    _check_axes(dims, name)
    _check_dtype(input.dtype, name)
    return dims, sizes


def _one_dim(shape: tuple, n, dim: int, c2r: bool) -> tuple[tuple[int], tuple[int]]:
    """(dims, output sizes) of a 1-D transform along ``dim``; ``c2r`` counts ``n`` in real points."""
    if not shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = wrap_dim(dim, len(shape))
    if n is None:
        n = 2 * (shape[axis] - 1) if c2r else shape[axis]
    _check_points(n)
    return (axis,), (n,)


def _many_dims(shape: tuple, s, dim, c2r: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(dims, output sizes) of an N-D transform, as PyTorch canonicalizes ``s`` and ``dim``."""
    ndim = len(shape)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        # PyTorch wraps the dims and checks them unique before comparing them with s
        if ndim == 0 and dims:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = tuple(wrap_dim(d, ndim) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        dims = tuple(range(ndim - len(s), ndim))
    else:
        dims = tuple(range(ndim))
    if s is None:
        sizes = [shape[d] for d in dims]
        if c2r and dims:
            sizes[-1] = 2 * (sizes[-1] - 1)
    else:
        sizes = [shape[d] if n == -1 else n for d, n in zip(dims, s)]
        if c2r and dims and s[-1] == -1:
            sizes[-1] = 2 * (shape[dims[-1]] - 1)
    for n in sizes:
        _check_points(n)
    return dims, tuple(sizes)


def _out_shape(shape: tuple, dims: tuple, sizes: tuple, onesided_last: bool) -> tuple[int, ...]:
    out = list(shape)
    for d, n in zip(dims, sizes):
        out[d] = n
    if onesided_last and dims:
        out[dims[-1]] = sizes[-1] // 2 + 1
    return tuple(out)


# PyTorch's normalization argument of its transform ops (``_fft_c2c``): 0 none, 1 by 1/sqrt(n), 2 by
# 1/n; and NumPy's ``norm`` doing the same, for a forward and an inverse transform.
_NORMALIZATION = {"backward": (0, 2), "ortho": (1, 1), "forward": (2, 0)}
_NUMPY_NORM = {True: {0: "backward", 1: "ortho", 2: "forward"}, False: {0: "forward", 1: "ortho", 2: "backward"}}
