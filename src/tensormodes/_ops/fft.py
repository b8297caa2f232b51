"""Discrete Fourier transforms (``torch.fft``): ``fft``/``ifft``, ``rfft``/``irfft``,
``hfft``/``ihfft`` and their 2-D and N-D forms, ``fftfreq``/``rfftfreq`` and ``fftshift``/``ifftshift``.

Kernels are NumPy's pocketfft in the input's precision (float32 data gives complex64). Every
transform has three kinds, as PyTorch's: complex to complex (``c2c``), real to one-sided complex
(``r2c``) and one-sided complex to real (``c2r``). A transform's gradient is its adjoint: the
transform of the other direction with the *dual* normalization (``"backward"`` and
``"forward"`` swapped), the input's size restored along each transformed dim (cropped, or padded
with zeros); a one-sided spectrum is padded with zeros (``r2c``), or its mirrored bins doubled
(``c2r``). Backward nodes are named as PyTorch's (``FftC2CBackward0`` ...).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import ops, resolve_dtype, wrap_dim
from .creation import _DEFAULT_DTYPE, check_device
from .fft_plans import (
    _COMPLEX_OF,
    _NORMALIZATION,
    _REAL_OF,
    _c2r_dims_then_dtype,
    _check_axes,
    _check_dtype,
    _check_real,
    _float_dtype,
    _many_dims,
    _norm,
    _one_dim,
    _out_shape,
    _r2c_dims_then_dtype,
)
from .fft_transforms import _fft_c2c, _fft_c2r, _fft_r2c, decomposition, gradient
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

_NAMESPACE = "tensormodes.fft"


# -- the three kinds of transform ----------------------------------------------------------------

def _fitted(data, dims, sizes):
    """``data`` cropped or zero-padded along ``dims`` to ``sizes``. Done here rather than by NumPy,
    whose own padding of an empty axis reads uninitialized memory."""
    if all(data.shape[d] == n for d, n in zip(dims, sizes)):
        return data
    shape = list(data.shape)
    for d, n in zip(dims, sizes):
        shape[d] = n
    out = np.zeros(shape, data.dtype)
    common = tuple(slice(0, min(a, b)) for a, b in zip(data.shape, shape))
    out[common] = data[common]
    return out


def _c2c(input, dims, sizes, norm, forward: bool):
    data = _fitted(input.astype(_COMPLEX_OF[_float_dtype(input.dtype)], copy=False), dims, sizes)
    transform = np.fft.fftn if forward else np.fft.ifftn
    return np.asarray(transform(data, s=sizes, axes=dims, norm=norm))


def _r2c(input, dims, sizes, norm, name: str):
    _check_axes(dims, name)
    _check_real(input.dtype, name)
    data = _fitted(input.astype(_float_dtype(input.dtype), copy=False), dims, sizes)
    return np.asarray(np.fft.rfftn(data, s=sizes, axes=dims, norm=norm))


def _c2r(input, dims, sizes, norm):
    _check_axes(dims, "irfftn")
    data = input.astype(_COMPLEX_OF[_float_dtype(input.dtype)], copy=False)
    data = _fitted(data, dims, (*sizes[:-1], sizes[-1] // 2 + 1))
    return np.asarray(np.fft.irfftn(data, s=sizes, axes=dims, norm=norm))


def _hermitian_c2r(input, dims, sizes, norm):
    """``hfftn`` as PyTorch computes it: the forward ``_fft_c2c`` over the leading dims, then the
    conjugate's ``_fft_c2r`` over the last, both with the forward normalization's code."""
    _check_axes(dims, "irfftn")
    data = input.astype(_COMPLEX_OF[_float_dtype(input.dtype)], copy=False)
    data = _fitted(data, dims, (*sizes[:-1], sizes[-1] // 2 + 1))
    code = _NORMALIZATION[norm][0]
    if len(dims) > 1:
        data = _fft_c2c(data, list(dims[:-1]), code, True)
    return _fft_c2r(np.conjugate(data), [dims[-1]], code, sizes[-1])


def _hermitian_r2c(input, dims, sizes, norm, name: str):
    """``ihfftn`` as PyTorch computes it: the conjugate of the one-sided ``_fft_r2c`` of the last
    dim, then the inverse ``_fft_c2c`` over the leading dims, with the inverse normalization's code."""
    _check_axes(dims, name)
    _check_real(input.dtype, name)
    data = _fitted(input.astype(_float_dtype(input.dtype), copy=False), dims, sizes)
    code = _NORMALIZATION[norm][1]
    half = np.conjugate(_fft_r2c(data, [dims[-1]], code, True))
    return half if len(dims) == 1 else _fft_c2c(half, list(dims[:-1]), code, False)


# -- gradients ------------------------------------------------------------------------------------

def _node(kind):
    """Names the backward node of a call as PyTorch does: after its transform's kind."""
    def name(input, *rest) -> str:
        return kind(input.is_complex())
    return name


_C2C_OR_R2C = _node(lambda is_complex: "_fft_c2c" if is_complex else "_fft_r2c")


# -- complex to complex ---------------------------------------------------------------------------


def _c2c_1d_meta(forward):
    def meta(input, n=None, dim=-1, norm=None):
        _check_dtype(input.dtype)
        dims, sizes = _one_dim(input.shape, n, dim, False)
        _norm(norm)
        return MetaArray(_out_shape(input.shape, dims, sizes, False), _COMPLEX_OF[_float_dtype(input.dtype)])
    return rule(meta)


_NO_DIMS = Sample((TensorSpec((2, 3)),), {"dim": None})  # the 2-D transforms' dim is no Optional


def _two_dims(dim, name: str | None) -> None:
    """The 2-D transforms' ``dim`` is ``int[1]`` (no None, unlike the N-D ones'): PyTorch's
    argument parser refuses None."""
    if dim is None and name is not None:
        raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not NoneType")


def _c2c_nd_meta(default_dim, two_d: str | None = None):
    def meta(input, s=None, dim=default_dim, norm=None):
        _two_dims(dim, two_d)
        dims, sizes = _many_dims(input.shape, s, dim, False)
        _check_dtype(input.dtype)
        _norm(norm)
        return MetaArray(_out_shape(input.shape, dims, sizes, False), _COMPLEX_OF[_float_dtype(input.dtype)])
    return rule(meta)


_REAL_1D = TensorSpec((2, 5))
_COMPLEX_1D = TensorSpec((2, 5), "complex64")
_1D_SAMPLES = (Sample((_REAL_1D,)), Sample((_COMPLEX_1D,), {"n": 8, "norm": "ortho"}),
               Sample((TensorSpec((4, 3), "float64"),), {"dim": 0, "n": 3, "norm": "forward"}),
               Sample((TensorSpec((6,), "int64", -5, 5),)))
_1D_ERRORS = (Sample((_REAL_1D,), {"n": 0}), Sample((_REAL_1D,), {"dim": 2}), Sample((_REAL_1D,), {"norm": "x"}),
              Sample((TensorSpec((3,), "float16"),)))


@op(meta=_c2c_1d_meta(True), grad=gradient("c2c", True), decompose=decomposition("fft", "c2c", True),
    node=_C2C_OR_R2C, name="fft_fft", function="fft", namespace=_NAMESPACE,
    out=True, samples=_1D_SAMPLES, errors=_1D_ERRORS,
    schema={"n": "SymInt?"})
def fft_fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """Computes the one dimensional discrete Fourier transform of ``input`` along ``dim``
    (zero-padded or trimmed to ``n`` points; ``norm`` ``"backward"`` (default), ``"forward"`` or ``"ortho"``).

    >>> import tensormodes as tm
    >>> tm.fft.fft(tm.arange(4))
    tensor([ 6.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    _check_dtype(input.dtype)
    dims, sizes = _one_dim(input.shape, n, dim, False)
    norm = _norm(norm)
    return _c2c(input, dims, sizes, norm, True)


@op(meta=_c2c_1d_meta(False), grad=gradient("ic2c", True), decompose=decomposition("ifft", "ic2c", True),
    node=_node(lambda is_complex: "_fft_c2c" if is_complex else "conj"),
    name="fft_ifft", function="ifft", namespace=_NAMESPACE, out=True, samples=_1D_SAMPLES, errors=_1D_ERRORS,
    schema={"n": "SymInt?"})
def fft_ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """Computes the one dimensional inverse discrete Fourier transform of ``input``.

    >>> import tensormodes as tm
    >>> tm.fft.ifft(tm.tensor([6.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])).real
    tensor([0., 1., 2., 3.])
    """
    _check_dtype(input.dtype)
    dims, sizes = _one_dim(input.shape, n, dim, False)
    norm = _norm(norm)
    return _c2c(input, dims, sizes, norm, False)


_ND_SAMPLES = (Sample((TensorSpec((2, 3, 4)),)),
               Sample((TensorSpec((3, 4), "complex64"),), {"s": (4, 6), "norm": "ortho"}),
               Sample((TensorSpec((3, 4, 2), "float64"),), {"dim": (0, 2), "s": (2, -1), "norm": "forward"}),
               Sample((TensorSpec((2, 3), "int32", -3, 3),), {"dim": (1,)}))
_2D_SAMPLES = (Sample((TensorSpec((2, 3, 4)),)),
               Sample((TensorSpec((3, 4), "complex64"),), {"s": (4, 6), "norm": "ortho"}),
               Sample((TensorSpec((3, 4, 2), "float64"),), {"dim": (0, 2), "norm": "forward"}))
_ND_ERRORS = (Sample((TensorSpec((2, 3)),), {"s": (2,), "dim": (0, 1)}), Sample((TensorSpec((2, 3)),), {"dim": (0, 0)}),
              Sample((TensorSpec((2, 3)),), {"s": (0, 2)}))


@op(meta=_c2c_nd_meta(None), grad=gradient("c2c", False), decompose=decomposition("fftn", "c2c", False),
    node=lambda *a: "_fft_c2c", name="fft_fftn", function="fftn",
    namespace=_NAMESPACE, out=True, samples=_ND_SAMPLES, errors=_ND_ERRORS,
    schema={"s": "SymInt[1]?", "dim": "int[1]?"})
def fft_fftn(input: Tensor, s: list[int] | None = None, dim: list[int] | None = None,
             norm: str | None = None) -> Tensor:
    """Computes the N dimensional discrete Fourier transform of ``input`` (over ``dim``, the last
    ``len(s)`` dims or all dims; each zero-padded or trimmed to ``s``).

    >>> import tensormodes as tm
    >>> tm.fft.fftn(tm.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    dims, sizes = _many_dims(input.shape, s, dim, False)  # PyTorch reads the dims before the dtype
    _check_dtype(input.dtype)
    norm = _norm(norm)
    return _c2c(input, dims, sizes, norm, True)


@op(meta=_c2c_nd_meta(None), grad=gradient("ic2c", False), decompose=decomposition("ifftn", "ic2c", False),
    node=lambda *a: "_fft_c2c", name="fft_ifftn", function="ifftn",
    namespace=_NAMESPACE, out=True, samples=_ND_SAMPLES, errors=_ND_ERRORS,
    schema={"s": "SymInt[1]?", "dim": "int[1]?"})
def fft_ifftn(input: Tensor, s: list[int] | None = None, dim: list[int] | None = None,
              norm: str | None = None) -> Tensor:
    """Computes the N dimensional inverse discrete Fourier transform of ``input``."""
    dims, sizes = _many_dims(input.shape, s, dim, False)  # PyTorch reads the dims before the dtype
    _check_dtype(input.dtype)
    norm = _norm(norm)
    return _c2c(input, dims, sizes, norm, False)


@op(meta=_c2c_nd_meta((-2, -1), two_d="fft_fft2"), grad=gradient("c2c", False),
    decompose=decomposition("fft2", "c2c", False, (-2, -1)), node=lambda *a: "_fft_c2c", name="fft_fft2",
    function="fft2",
    namespace=_NAMESPACE, out=True, samples=_2D_SAMPLES, errors=(*_ND_ERRORS[:2], _NO_DIMS),
    schema={"s": "SymInt[1]?", "dim": "int[1]"})
def fft_fft2(input: Tensor, s: list[int] | None = None, dim: list[int] = (-2, -1), norm: str | None = None) -> Tensor:
    """Computes the 2 dimensional discrete Fourier transform of ``input`` (``fftn`` over the last two dims).

    >>> import tensormodes as tm
    >>> tm.fft.fft2(tm.ones(2, 2)).real
    tensor([[4., 0.],
            [0., 0.]])
    """
    _two_dims(dim, "fft_fft2")
    dims, sizes = _many_dims(input.shape, s, dim, False)  # PyTorch reads the dims before the dtype
    _check_dtype(input.dtype)
    norm = _norm(norm)
    return _c2c(input, dims, sizes, norm, True)


@op(meta=_c2c_nd_meta((-2, -1), two_d="fft_ifft2"), grad=gradient("ic2c", False),
    decompose=decomposition("ifft2", "ic2c", False, (-2, -1)), node=lambda *a: "_fft_c2c", name="fft_ifft2",
    function="ifft2",
    namespace=_NAMESPACE, out=True, samples=_2D_SAMPLES, errors=(*_ND_ERRORS[:2], _NO_DIMS),
    schema={"s": "SymInt[1]?", "dim": "int[1]"})
def fft_ifft2(input: Tensor, s: list[int] | None = None, dim: list[int] = (-2, -1), norm: str | None = None) -> Tensor:
    """Computes the 2 dimensional inverse discrete Fourier transform of ``input``."""
    _two_dims(dim, "fft_ifft2")
    dims, sizes = _many_dims(input.shape, s, dim, False)  # PyTorch reads the dims before the dtype
    _check_dtype(input.dtype)
    norm = _norm(norm)
    return _c2c(input, dims, sizes, norm, False)


# -- real to one-sided complex --------------------------------------------------------------------

def _r2c_1d_meta(name):
    def meta(input, n=None, dim=-1, norm=None):
        _check_dtype(input.dtype, name)
        dims, sizes = _one_dim(input.shape, n, dim, False)
        _norm(norm)
        return MetaArray(_out_shape(input.shape, dims, sizes, True), _COMPLEX_OF[_float_dtype(input.dtype)])
    return rule(meta)


def _r2c_nd_meta(default_dim, name, two_d: str | None = None):
    def meta(input, s=None, dim=default_dim, norm=None):
        _two_dims(dim, two_d)
        dims, sizes = _r2c_dims_then_dtype(input, s, dim, name)
        _norm(norm)
        return MetaArray(_out_shape(input.shape, dims, sizes, True), _COMPLEX_OF[_float_dtype(input.dtype)])
    return rule(meta)


_REAL_SAMPLES_1D = (Sample((_REAL_1D,)), Sample((_REAL_1D,), {"n": 8, "norm": "ortho"}),
                    Sample((TensorSpec((4, 3), "float64"),), {"dim": 0, "n": 3, "norm": "forward"}),
                    Sample((TensorSpec((6,), "int64", -5, 5),)))
_REAL_SAMPLES_ND = (Sample((TensorSpec((2, 3, 4)),)), Sample((TensorSpec((3, 4)),), {"s": (4, 5), "norm": "ortho"}),
                    Sample((TensorSpec((3, 4, 2), "float64"),), {"dim": (0, 2), "norm": "forward"}))


@op(meta=_r2c_1d_meta("rfft"), grad=gradient("r2c", True), decompose=decomposition("rfft", "r2c", True),
    node=lambda *a: "_fft_r2c", name="fft_rfft", function="rfft",
    namespace=_NAMESPACE, out=True, samples=_REAL_SAMPLES_1D, errors=(*_1D_ERRORS, Sample((_COMPLEX_1D,))),
    schema={"n": "SymInt?"})
def fft_rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """Computes the one dimensional Fourier transform of real-valued ``input``: the
    ``n // 2 + 1`` non-negative frequencies (the others are their conjugates).

    >>> import tensormodes as tm
    >>> tm.fft.rfft(tm.arange(4))
    tensor([ 6.+0.j, -2.+2.j, -2.+0.j])
    """
    _check_dtype(input.dtype, "rfft")
    dims, sizes = _one_dim(input.shape, n, dim, False)
    norm = _norm(norm)
    return _r2c(input, dims, sizes, norm, "rfft")


@op(meta=_r2c_nd_meta(None, "rfftn"), grad=gradient("r2c", False), decompose=decomposition("rfftn", "r2c", False),
    node=lambda *a: "_fft_r2c", name="fft_rfftn",
    function="rfftn", namespace=_NAMESPACE, out=True, samples=_REAL_SAMPLES_ND,
    errors=(*_ND_ERRORS, Sample((TensorSpec((2, 2), "complex64"),))),
    schema={"s": "SymInt[1]?", "dim": "int[1]?"})
def fft_rfftn(input: Tensor, s: list[int] | None = None, dim: list[int] | None = None,
              norm: str | None = None) -> Tensor:
    """Computes the N-dimensional discrete Fourier transform of real ``input``, one-sided along
    the last transformed dim.

    >>> import tensormodes as tm
    >>> tm.fft.rfftn(tm.ones(2, 4)).shape
    tensormodes.Size([2, 3])
    """
    dims, sizes = _r2c_dims_then_dtype(input, s, dim, "rfftn")
    norm = _norm(norm)
    return _r2c(input, dims, sizes, norm, "rfftn")


@op(meta=_r2c_nd_meta((-2, -1), "rfftn", "fft_rfft2"), grad=gradient("r2c", False),
    decompose=decomposition("rfft2", "r2c", False, (-2, -1)), node=lambda *a: "_fft_r2c", name="fft_rfft2",
    function="rfft2", namespace=_NAMESPACE, out=True, samples=_REAL_SAMPLES_ND, errors=(_NO_DIMS,),
    schema={"s": "SymInt[1]?", "dim": "int[1]"})
def fft_rfft2(input: Tensor, s: list[int] | None = None, dim: list[int] = (-2, -1), norm: str | None = None) -> Tensor:
    """Computes the 2-dimensional discrete Fourier transform of real ``input`` (``rfftn`` over the last two dims)."""
    _two_dims(dim, "fft_rfft2")
    dims, sizes = _r2c_dims_then_dtype(input, s, dim, "rfftn")
    norm = _norm(norm)
    return _r2c(input, dims, sizes, norm, "rfftn")


@op(meta=_r2c_1d_meta("ihfft"), grad=gradient("ir2c", True), decompose=decomposition("ihfft", "ir2c", True),
    node=lambda *a: "conj", name="fft_ihfft", function="ihfft",
    namespace=_NAMESPACE, out=True, samples=_REAL_SAMPLES_1D, errors=(*_1D_ERRORS, Sample((_COMPLEX_1D,))),
    schema={"n": "SymInt?"})
def fft_ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """Computes the inverse of ``hfft``: the one-sided inverse transform of real ``input``.

    >>> import tensormodes as tm
    >>> tm.fft.ihfft(tm.arange(4))
    tensor([ 1.5000-0.0000j, -0.5000-0.5000j, -0.5000-0.0000j])
    """
    _check_dtype(input.dtype, "ihfft")
    dims, sizes = _one_dim(input.shape, n, dim, False)
    norm = _norm(norm)
    return _hermitian_r2c(input, dims, sizes, norm, "ihfft")


# -- one-sided complex to real --------------------------------------------------------------------

def _c2r_1d_meta(input, n=None, dim=-1, norm=None):
    _check_dtype(input.dtype)
    dims, sizes = _one_dim(input.shape, n, dim, True)
    _norm(norm)
    return MetaArray(_out_shape(input.shape, dims, sizes, False), _REAL_OF[_float_dtype(input.dtype)])


def _c2r_nd_meta(default_dim, two_d: str | None = None):
    def meta(input, s=None, dim=default_dim, norm=None):
        _two_dims(dim, two_d)
        _check_dtype(input.dtype)
        dims, sizes = _many_dims(input.shape, s, dim, True)
        _check_axes(dims, "irfftn")
        _norm(norm)
        return MetaArray(_out_shape(input.shape, dims, sizes, False), _REAL_OF[_float_dtype(input.dtype)])
    return rule(meta)


_C2R_SAMPLES_1D = (Sample((_COMPLEX_1D,)), Sample((_COMPLEX_1D,), {"n": 5, "norm": "ortho"}),
                   Sample((TensorSpec((4, 3), "complex128"),), {"dim": 0, "n": 9, "norm": "forward"}),
                   Sample((TensorSpec((6,)),)))
_C2R_SAMPLES_ND = (Sample((TensorSpec((2, 3, 4), "complex64"),)),
                   Sample((TensorSpec((3, 4), "complex64"),), {"s": (4, 5), "norm": "ortho"}),
                   Sample((TensorSpec((3, 4, 2), "complex128"),), {"dim": (0, 2), "norm": "forward"}))


@op(meta=rule(_c2r_1d_meta), grad=gradient("c2r", True), decompose=decomposition("irfft", "c2r", True),
    node=lambda *a: "_fft_c2r", name="fft_irfft", function="irfft",
    namespace=_NAMESPACE, out=True, samples=_C2R_SAMPLES_1D, errors=_1D_ERRORS + (Sample((TensorSpec((1,)),)),),
    schema={"n": "SymInt?"})
def fft_irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """Computes the inverse of ``rfft``: ``n`` real points (default ``2 * (input.size(dim) - 1)``)
    from the non-negative frequencies of a Hermitian-symmetric signal.

    >>> import tensormodes as tm
    >>> tm.fft.irfft(tm.fft.rfft(tm.arange(4.)))
    tensor([0., 1., 2., 3.])
    """
    _check_dtype(input.dtype)
    dims, sizes = _one_dim(input.shape, n, dim, True)
    norm = _norm(norm)
    return _c2r(input, dims, sizes, norm)


@op(meta=_c2r_nd_meta(None), grad=gradient("c2r", False), decompose=decomposition("irfftn", "c2r", False),
    node=lambda *a: "_fft_c2r", name="fft_irfftn", function="irfftn",
    namespace=_NAMESPACE, out=True, samples=_C2R_SAMPLES_ND, errors=_ND_ERRORS,
    schema={"s": "SymInt[1]?", "dim": "int[1]?"})
def fft_irfftn(input: Tensor, s: list[int] | None = None, dim: list[int] | None = None,
               norm: str | None = None) -> Tensor:
    """Computes the inverse of ``rfftn`` (``s[-1]`` real points along the last dim, by default
    ``2 * (input.size(dim[-1]) - 1)``).

    >>> import tensormodes as tm
    >>> tm.fft.irfftn(tm.fft.rfftn(tm.ones(2, 4))).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    dims, sizes = _c2r_dims_then_dtype(input, s, dim, "irfftn")
    norm = _norm(norm)
    return _c2r(input, dims, sizes, norm)


@op(meta=_c2r_nd_meta((-2, -1), two_d="fft_irfft2"), grad=gradient("c2r", False),
    decompose=decomposition("irfft2", "c2r", False, (-2, -1)), node=lambda *a: "_fft_c2r", name="fft_irfft2",
    function="irfft2", namespace=_NAMESPACE, out=True, samples=_C2R_SAMPLES_ND, errors=(_NO_DIMS,),
    schema={"s": "SymInt[1]?", "dim": "int[1]"})
def fft_irfft2(input: Tensor, s: list[int] | None = None, dim: list[int] = (-2, -1), norm: str | None = None) -> Tensor:
    """Computes the inverse of ``rfft2``."""
    _two_dims(dim, "fft_irfft2")
    dims, sizes = _c2r_dims_then_dtype(input, s, dim, "irfftn")
    norm = _norm(norm)
    return _c2r(input, dims, sizes, norm)


@op(meta=rule(_c2r_1d_meta), grad=gradient("hc2r", True), decompose=decomposition("hfft", "hc2r", True),
    node=lambda *a: "_fft_c2r", name="fft_hfft", function="hfft",
    namespace=_NAMESPACE, out=True, samples=_C2R_SAMPLES_1D, errors=_1D_ERRORS,
    schema={"n": "SymInt?"})
def fft_hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """Computes the one dimensional discrete Fourier transform of a Hermitian symmetric
    ``input`` signal given by its non-negative frequencies: ``n`` real points.

    >>> import tensormodes as tm
    >>> tm.fft.hfft(tm.tensor([1.+0.j, 0.+0.j]))
    tensor([1., 1.])
    """
    _check_dtype(input.dtype)
    dims, sizes = _one_dim(input.shape, n, dim, True)
    norm = _norm(norm)
    return _hermitian_c2r(input, dims, sizes, norm)


@op(meta=_c2r_nd_meta(None), grad=gradient("hc2r", False), decompose=decomposition("hfftn", "hc2r", False),
    node=lambda *a: "_fft_c2r", name="fft_hfftn", function="hfftn",
    namespace=_NAMESPACE, out=True, samples=_C2R_SAMPLES_ND, errors=_ND_ERRORS,
    schema={"s": "SymInt[1]?", "dim": "int[1]?"})
def fft_hfftn(input: Tensor, s: list[int] | None = None, dim: list[int] | None = None,
              norm: str | None = None) -> Tensor:
    """Computes the N-dimensional discrete Fourier transform of a Hermitian symmetric ``input``
    given by its one-sided half (``irfftn`` of the conjugate, with the dual normalization).

    >>> import tensormodes as tm
    >>> tm.fft.hfftn(tm.ones(2, 2, dtype=tm.complex64)).shape
    tensormodes.Size([2, 2])
    """
    dims, sizes = _c2r_dims_then_dtype(input, s, dim, "hfftn")
    norm = _norm(norm)
    return _hermitian_c2r(input, dims, sizes, norm)


@op(meta=_c2r_nd_meta((-2, -1), two_d="fft_hfft2"), grad=gradient("hc2r", False),
    decompose=decomposition("hfft2", "hc2r", False, (-2, -1)), node=lambda *a: "_fft_c2r", name="fft_hfft2",
    function="hfft2",
    namespace=_NAMESPACE, out=True, samples=_C2R_SAMPLES_ND, errors=(_NO_DIMS,),
    schema={"s": "SymInt[1]?", "dim": "int[1]"})
def fft_hfft2(input: Tensor, s: list[int] | None = None, dim: list[int] = (-2, -1), norm: str | None = None) -> Tensor:
    """Computes the 2-dimensional discrete Fourier transform of a Hermitian symmetric ``input``."""
    _two_dims(dim, "fft_hfft2")
    dims, sizes = _c2r_dims_then_dtype(input, s, dim, "hfftn")
    norm = _norm(norm)
    return _hermitian_c2r(input, dims, sizes, norm)


@op(meta=_r2c_nd_meta(None, "ihfftn"), grad=gradient("ir2c", False), decompose=decomposition("ihfftn", "ir2c", False),
    node=lambda *a: "_fft_c2c", name="fft_ihfftn",
    function="ihfftn", namespace=_NAMESPACE, out=True, samples=_REAL_SAMPLES_ND,
    errors=(*_ND_ERRORS, Sample((TensorSpec((2, 2), "complex64"),))),
    schema={"s": "SymInt[1]?", "dim": "int[1]?"})
def fft_ihfftn(input: Tensor, s: list[int] | None = None, dim: list[int] | None = None,
               norm: str | None = None) -> Tensor:
    """Computes the N-dimensional inverse discrete Fourier transform of real ``input``, one-sided
    along the last transformed dim (the inverse of ``hfftn``).

    >>> import tensormodes as tm
    >>> tm.fft.ihfftn(tm.ones(2, 4)).shape
    tensormodes.Size([2, 3])
    """
    dims, sizes = _r2c_dims_then_dtype(input, s, dim, "ihfftn")
    norm = _norm(norm)
    return _hermitian_r2c(input, dims, sizes, norm, "ihfftn")


@op(meta=_r2c_nd_meta((-2, -1), "ihfftn", "fft_ihfft2"), grad=gradient("ir2c", False),
    decompose=decomposition("ihfft2", "ir2c", False, (-2, -1)), node=lambda *a: "_fft_c2c", name="fft_ihfft2",
    function="ihfft2", namespace=_NAMESPACE, out=True, samples=_REAL_SAMPLES_ND, errors=(_NO_DIMS,),
    schema={"s": "SymInt[1]?", "dim": "int[1]"})
def fft_ihfft2(input: Tensor, s: list[int] | None = None, dim: list[int] = (-2, -1),
               norm: str | None = None) -> Tensor:
    """Computes the 2-dimensional inverse discrete Fourier transform of real ``input`` (the inverse of ``hfft2``)."""
    _two_dims(dim, "fft_ihfft2")
    dims, sizes = _r2c_dims_then_dtype(input, s, dim, "ihfftn")
    norm = _norm(norm)
    return _hermitian_r2c(input, dims, sizes, norm, "ihfftn")


# -- frequencies and shifts -----------------------------------------------------------------------

def _frequency_dtype(dtype, name: str) -> np.dtype:
    target = resolve_dtype(dtype) or _DEFAULT_DTYPE.get()[0]
    if target._category not in (dt._FLOAT, dt._COMPLEX):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return target._np


def _frequencies(count: int, n: int, d: float, dtype, name: str, device):
    check_device(device)
    target = _frequency_dtype(dtype, name)
    values = np.arange(count, dtype=np.int64)
    if name == "fftfreq":
        values[(n + 1) // 2:] -= n  # the negative frequencies, after the non-negative ones
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.divide(1.0, np.float64(n) * d)  # inf for n * d == 0, as C++'s 1.0 / 0.0
        # PyTorch multiplies by 1 / (n * d) in the result's dtype
        return values.astype(target) * np.asarray(scale).astype(target)


def _fftfreq_meta(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    return MetaArray((n,), _frequency_dtype(dtype, "fftfreq"))


def _rfftfreq_meta(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    return MetaArray((n // 2 + 1,), _frequency_dtype(dtype, "rfftfreq"))


@op(meta=rule(_fftfreq_meta), factory=True, out=True, name="fft_fftfreq", function="fftfreq", namespace=_NAMESPACE,
    samples=(Sample((5,)), Sample((6, 0.5)), Sample((4,), {"dtype": dt.float64}), Sample((0,))),
    errors=(Sample((4,), {"dtype": dt.int64}),))
def fft_fftfreq(n: int, d: float = 1.0, *, dtype: dt.dtype | None = None, layout=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """Computes the discrete Fourier Transform sample frequencies for a signal of size ``n``
    (sample spacing ``d``): ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.

    >>> import tensormodes as tm
    >>> tm.fft.fftfreq(5)
    tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
    """
    return _frequencies(n, n, d, dtype, "fftfreq", device)


@op(meta=rule(_rfftfreq_meta), factory=True, out=True, name="fft_rfftfreq", function="rfftfreq",
    namespace=_NAMESPACE, samples=(Sample((5,)), Sample((6, 0.5)), Sample((4,), {"dtype": dt.float64})),
    errors=(Sample((4,), {"dtype": dt.int64}),))
def fft_rfftfreq(n: int, d: float = 1.0, *, dtype: dt.dtype | None = None, layout=None, device=None,
                 requires_grad: bool = False) -> Tensor:
    """Computes the sample frequencies for ``rfft`` with a signal of size ``n``:
    ``[0, 1, ..., n // 2] / (d * n)``.

    >>> import tensormodes as tm
    >>> tm.fft.rfftfreq(6)
    tensor([0.0000, 0.1667, 0.3333, 0.5000])
    """
    return _frequencies(n // 2 + 1, n, d, dtype, "rfftfreq", device)


def _checked_shift_dims(ndim: int, dim) -> tuple[int, ...]:
    dims = _shift_dims(ndim, dim)
    if not dims:
        raise RuntimeError("`shifts` required")  # PyTorch's roll, given no dims to roll
    return dims


def _shift_dims(ndim: int, dim) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(ndim))
    return tuple(wrap_dim(d, ndim) for d in ((dim,) if isinstance(dim, int) else dim))


def _shift(input, dim, inverse: bool):
    dims = _checked_shift_dims(input.ndim, dim)
    shifts = [-(input.shape[d] // 2) if inverse else input.shape[d] // 2 for d in dims]
    return np.roll(input, shifts, axis=dims)


def _shift_meta(input, dim=None):
    _checked_shift_dims(input.ndim, dim)
    return MetaArray(input.shape, input.dtype)


def _fftshift_grad(grad, dim):
    return ops.fft.ifftshift(grad, dim)


def _ifftshift_grad(grad, dim):
    return ops.fft.fftshift(grad, dim)


_SHIFT_SAMPLES = (Sample((TensorSpec((5,)),)), Sample((TensorSpec((2, 3), "int64", -5, 5),), {"dim": 1}),
                  Sample((TensorSpec((4, 3), "complex64"),), {"dim": (0, -1)}))


def _shift_decomposition(inverse: bool):
    """PyTorch's composite ``fftshift`` / ``ifftshift``: one ``roll`` by half of each dimension
    (rounded up for the inverse), what the dispatch level sees."""

    def decompose(input, dim=None):
        if dim is not None and not isinstance(dim, (int, list, tuple)):
            return NotImplemented  # the op raises PyTorch's argument error
        ndim = input.dim()
        dims = list(range(ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if any(not -max(ndim, 1) <= d < max(ndim, 1) for d in dims):
            return NotImplemented
        dims = [d % max(ndim, 1) for d in dims]
        shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
        return input.roll(shifts, dims)

    decompose.__name__ = decompose.__qualname__ = f"{'i' if inverse else ''}fftshift_decomposition"
    return decompose


@op(meta=rule(_shift_meta), grad=_fftshift_grad, node="roll", name="fft_fftshift", function="fftshift",
    decompose=_shift_decomposition(False),
    namespace=_NAMESPACE, samples=_SHIFT_SAMPLES, errors=(Sample((TensorSpec((2,)),), {"dim": 1}),),
    schema={"dim": "int[1]?"})
def fft_fftshift(input: Tensor, dim: int | list[int] | None = None) -> Tensor:
    """Reorders n-dimensional FFT data, as provided by ``fftn``, to have negative frequency terms
    first (a roll by ``size // 2`` along each of ``dim``, all dims by default).

    >>> import tensormodes as tm
    >>> tm.fft.fftshift(tm.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, False)


@op(meta=rule(_shift_meta), grad=_ifftshift_grad, node="roll", name="fft_ifftshift", function="ifftshift",
    decompose=_shift_decomposition(True),
    namespace=_NAMESPACE, samples=_SHIFT_SAMPLES,
    schema={"dim": "int[1]?"})
def fft_ifftshift(input: Tensor, dim: int | list[int] | None = None) -> Tensor:
    """Inverse of ``fftshift``.

    >>> import tensormodes as tm
    >>> tm.fft.ifftshift(tm.fft.fftshift(tm.arange(5))).tolist()
    [0, 1, 2, 3, 4]
    """
    return _shift(input, dim, True)

