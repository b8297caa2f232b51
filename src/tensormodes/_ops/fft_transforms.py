"""ATen's transform ops, what ``torch.fft``'s transforms reach at the dispatch level: ``_fft_c2c``
(complex to complex), ``_fft_r2c`` (real to complex, one-sided or full) and ``_fft_c2r`` (one-sided
complex to real), each with PyTorch's schema, meta rule and gradient formula (derivatives.yaml's
``fft_r2c_backward`` / ``fft_c2r_backward``), and the public transforms' decompositions into them.

A transform's ``normalization`` is a code: 0 scales by nothing, 1 by 1/sqrt(n), 2 by 1/n. PyTorch's
public transforms first resize their input to the requested sizes (``slice.Tensor`` to shrink a
dim, then one ``constant_pad_nd`` to grow), then call one op — or, for ``hfftn``/``ihfftn``, a
``_fft_c2c`` over the leading dims and a ``_fft_c2r``/``_fft_r2c`` over the last one, with a
conjugate between. A dispatch mode sees those steps (``decompose``); without one the public op runs
at once, and its gradient formula runs the steps' formulas in reverse, so both give the same bits.

>>> import tensormodes as tm
>>> tm.ops.aten._fft_r2c.default(tm.tensor([1.0, 2.0, 3.0, 4.0]), [0], 0, True)
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .._tensor_base import TensorBase
from .common import ops, scalar_type_name, wrap_dim
from .fft_plans import _COMPLEX_OF, _NORMALIZATION, _NUMPY_NORM, _REAL_OF, _check_points, _many_dims, _norm, _one_dim
from .meta_rules import rule
from .registry import Sample, Tensor, TensorSpec, op

_REALS = (np.dtype(np.float32), np.dtype(np.float64))
_COMPLEXES = (np.dtype(np.complex64), np.dtype(np.complex128))
_COMPLEX_OF_DTYPE = {dt.float32: dt.complex64, dt.float64: dt.complex128}


def _transformed_dims(dim, ndim: int) -> tuple[int, ...]:
    if not dim:
        raise RuntimeError("ArrayRef: attempted to access back() of empty list")  # PyTorch's message
    return tuple(wrap_dim(d, ndim) for d in dim)


def _check_kind(dtype: np.dtype, complex_input: bool) -> None:
    if dtype not in (_COMPLEXES if complex_input else _REALS):
        kind = "complex" if complex_input else "floating-point"
        raise RuntimeError(f"Only supports {kind} dtypes, but found: {scalar_type_name(dt.NP_TO_DTYPE[dtype])}")


def _fft_c2c_meta(input, dim, normalization, forward):
    if input.dtype.kind != "c":
        raise RuntimeError(f"Only supports complex dtypes, but found: {scalar_type_name(dt.NP_TO_DTYPE[input.dtype])}")
    for d in dim:
        _check_points(input.shape[wrap_dim(d, input.ndim)])  # (PyTorch's op crashes on zero points)
    return MetaArray(input.shape, input.dtype)


def _fft_c2c_grad(grad, dim, normalization, forward):
    # PyTorch's formula: the transform of the other direction, the same normalization
    return ops.ops.aten._fft_c2c.default(grad, dim, normalization, not forward)


@op(function=False, grad=_fft_c2c_grad, meta=rule(_fft_c2c_meta),
    samples=(Sample((TensorSpec((2, 5), "complex64"), [1], 0, True)),
             Sample((TensorSpec((3, 4), "complex128"), [0, 1], 1, False)),
             Sample((TensorSpec((2, 3, 4), "complex64"), [0, 2], 2, True))),
    errors=(Sample((TensorSpec((2, 5)), [1], 0, True)),),
    schema={"input": "Tensor self", "dim": "SymInt[]"}, aten="default")
def _fft_c2c(input: Tensor, dim: list[int], normalization: int, forward: bool) -> Tensor:
    """The complex-to-complex transform over ``dim`` (PyTorch's ``aten::_fft_c2c``, what ``fft``,
    ``ifft`` and their N-D forms of a complex input reach at the dispatch level): forward or
    inverse, scaled by nothing (``normalization`` 0), 1/sqrt(n) (1) or 1/n (2).

    >>> import tensormodes as tm
    >>> tm.ops.aten._fft_c2c.default(tm.tensor([1.0 + 0j, 1.0 + 0j]), [0], 0, True)
    tensor([2.+0.j, 0.+0.j])
    """
    _fft_c2c_meta(input, dim, normalization, forward)
    dims = tuple(wrap_dim(d, input.ndim) for d in dim)
    transform = np.fft.fftn if forward else np.fft.ifftn
    return np.asarray(transform(input, s=tuple(input.shape[d] for d in dims), axes=dims,
                                norm=_NUMPY_NORM[bool(forward)][normalization]))


def _fft_r2c_meta(input, dim, normalization, onesided):
    _check_kind(input.dtype, False)
    dims = _transformed_dims(dim, input.ndim)
    for d in dims:
        _check_points(input.shape[d])  # (PyTorch's op fails on zero points)
    shape = list(input.shape)
    if onesided:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return MetaArray(tuple(shape), _COMPLEX_OF[input.dtype])


def r2c_backward(grad, dim, normalization, onesided, last_dim_size):
    """PyTorch's ``fft_r2c_backward``: a one-sided gradient completed with zeros (``new_zeros``,
    ``copy_`` into its ``slice``), the inverse ``_fft_c2c``, its real part (``view_as_real``,
    ``select``)."""
    if onesided:
        last = wrap_dim(dim[-1], grad.dim())
        half = grad.shape[last]
        if last_dim_size > half:
            shape = list(grad.shape)
            shape[last] = last_dim_size
            full = grad.new_zeros(shape)
            ops.ops.aten.slice.Tensor(full, last, 0, half).copy_(grad)
            grad = full
    spectrum = ops.ops.aten._fft_c2c.default(grad, list(dim), normalization, False)
    return ops.ops.aten.select.int(ops.ops.aten.view_as_real.default(spectrum), spectrum.dim(), 0)


def _fft_r2c_grad(grad, input_shape, dim, normalization, onesided):
    return r2c_backward(grad, dim, normalization, onesided, input_shape[wrap_dim(dim[-1], len(input_shape))])


@op(function=False, grad=_fft_r2c_grad, meta=rule(_fft_r2c_meta), tags=("core",),
    samples=(Sample((TensorSpec((2, 5)), [1], 0, True)), Sample((TensorSpec((3, 4), "float64"), [0, 1], 1, False)),
             Sample((TensorSpec((2, 3, 4)), [0, 2], 2, True))),
    errors=(Sample((TensorSpec((2, 5), "complex64"), [1], 0, True)), Sample((TensorSpec((2, 5)), [], 0, True))),
    schema={"input": "Tensor self"}, aten="default")
def _fft_r2c(input: Tensor, dim: list[int], normalization: int, onesided: bool) -> Tensor:
    """The real-to-complex forward transform over ``dim`` (PyTorch's ``aten::_fft_r2c``, what
    ``rfft``, ``rfftn``, ``ihfft`` and ``fft`` of a real input reach at the dispatch level): the
    non-negative frequencies of the last dim only (``onesided``) or all of them.

    >>> import tensormodes as tm
    >>> tm.ops.aten._fft_r2c.default(tm.tensor([1.0, 1.0]), [0], 2, False)
    tensor([1.+0.j, 0.+0.j])
    """
    _fft_r2c_meta(input, dim, normalization, onesided)
    dims = _transformed_dims(dim, input.ndim)
    sizes, norm = tuple(input.shape[d] for d in dims), _NUMPY_NORM[True][normalization]
    if onesided:
        return np.asarray(np.fft.rfftn(input, s=sizes, axes=dims, norm=norm))
    return np.asarray(np.fft.fftn(input.astype(_COMPLEX_OF[input.dtype]), s=sizes, axes=dims, norm=norm))


def _fft_c2r_meta(input, dim, normalization, last_dim_size):
    _check_kind(input.dtype, True)
    dims = _transformed_dims(dim, input.ndim)
    _check_points(last_dim_size)
    if input.shape[dims[-1]] != last_dim_size // 2 + 1:
        raise RuntimeError(f"_fft_c2r: expected {last_dim_size // 2 + 1} frequencies (last_dim_size // 2 + 1) "
                           f"along dim {dims[-1]}, but got {input.shape[dims[-1]]}")
    for d in dims[:-1]:
        _check_points(input.shape[d])
    shape = list(input.shape)
    shape[dims[-1]] = last_dim_size
    return MetaArray(tuple(shape), _REAL_OF[input.dtype])


def c2r_backward(grad, dim, normalization):
    """PyTorch's ``fft_c2r_backward``: the one-sided ``_fft_r2c`` of the gradient, its bins that
    the transform mirrored doubled in place (``slice``, ``mul_``)."""
    spectrum = ops.ops.aten._fft_r2c.default(grad, list(dim), normalization, True)
    last = wrap_dim(dim[-1], grad.dim())
    doubled = grad.shape[last] - spectrum.shape[last]
    if doubled > 0:
        ops.ops.aten.slice.Tensor(spectrum, last, 1, 1 + doubled).mul_(2)
    return spectrum


@op(function=False, grad=c2r_backward, meta=rule(_fft_c2r_meta), tags=("core",),
    samples=(Sample((TensorSpec((2, 4), "complex64"), [1], 0, 6)),
             Sample((TensorSpec((3, 4), "complex128"), [0, 1], 1, 7)),
             Sample((TensorSpec((2, 3, 2), "complex64"), [0, 2], 2, 2))),
    errors=(Sample((TensorSpec((2, 4)), [1], 0, 6)), Sample((TensorSpec((2, 4), "complex64"), [1], 0, 9))),
    schema={"input": "Tensor self", "last_dim_size": "SymInt"}, aten="default")
def _fft_c2r(input: Tensor, dim: list[int], normalization: int, last_dim_size: int) -> Tensor:
    """The one-sided complex-to-real inverse transform over ``dim`` (PyTorch's ``aten::_fft_c2r``,
    what ``irfft``, ``irfftn`` and ``hfft`` reach at the dispatch level): ``last_dim_size`` real
    points along the last dim, from its ``last_dim_size // 2 + 1`` non-negative frequencies.

    >>> import tensormodes as tm
    >>> tm.ops.aten._fft_c2r.default(tm.tensor([4.0 + 0j, 0j, 0j]), [0], 2, 4)
    tensor([1., 1., 1., 1.])
    """
    _fft_c2r_meta(input, dim, normalization, last_dim_size)
    dims = _transformed_dims(dim, input.ndim)
    sizes = (*(input.shape[d] for d in dims[:-1]), last_dim_size)
    return np.asarray(np.fft.irfftn(input, s=sizes, axes=dims, norm=_NUMPY_NORM[False][normalization]))


# -- the public transforms' steps --------------------------------------------------------------------

def resized(input, dims, sizes):
    """PyTorch's ``resize_fft_input``: each dim longer than its size sliced (``slice.Tensor``), then
    the shorter ones padded with zeros by one ``constant_pad_nd``; the input itself if none differs."""
    pad, grow = [0] * (2 * input.dim()), False
    for d, n in zip(dims, sizes, strict=True):
        have = input.shape[d]
        if have < n:
            grow, pad[len(pad) - 2 * d - 1] = True, n - have
        elif have > n:
            input = ops.ops.aten.slice.Tensor(input, d, 0, n)
    return ops.ops.aten.constant_pad_nd.default(input, pad) if grow else input


def resized_backward(grad, input_shape, dims, sizes):
    """The gradient of ``resized``, by its steps' formulas in reverse: ``constant_pad_nd`` by the
    negated padding, then a ``slice_backward`` per sliced dim, the last sliced first."""
    pad, grow, shapes = [0] * (2 * len(input_shape)), False, []
    shape = list(input_shape)
    for d, n in zip(dims, sizes, strict=True):
        if shape[d] < n:
            grow, pad[len(pad) - 2 * d - 1] = True, -(n - shape[d])
        elif shape[d] > n:
            shapes.append((d, n, list(shape)))
            shape[d] = n
    if grow:
        grad = ops.ops.aten.constant_pad_nd.default(grad, pad)
    for d, n, before in reversed(shapes):
        grad = ops.ops.aten.slice_backward.default(grad, before, d, 0, n, 1)
    return grad


def plan(input_shape, n_or_s, dim, norm, one_dim: bool, kind: str):
    """``(dims, sizes the input is resized to, last_dim_size, normalization code)`` of a public
    transform: ``kind`` ``"c2c"`` / ``"r2c"`` (forward) or their inverses ``"ic2c"`` / ``"ir2c"``,
    ``"c2r"`` (irfft: inverse) or ``"hc2r"`` (hfft: forward). Raises the public op's errors."""
    c2r = kind in ("c2r", "hc2r")
    dims, sizes = (_one_dim if one_dim else _many_dims)(tuple(input_shape), n_or_s, dim, c2r)
    code = _NORMALIZATION[_norm(norm)][0 if kind in ("c2c", "r2c", "hc2r") else 1]
    if c2r:
        return dims, (*sizes[:-1], sizes[-1] // 2 + 1), sizes[-1], code
    return dims, sizes, sizes[-1] if sizes else None, code


def transformed(input, kind: str, dims, last_dim_size, code, onesided: bool = True):
    """The step(s) after the resize: one ``_fft_c2c`` / ``_fft_r2c`` / ``_fft_c2r``, or ``hfftn``'s
    and ``ihfftn``'s (``_fft_c2c`` over the leading dims, a conjugate, then the real transform of the
    last dim; in the other order for ``ihfftn``)."""
    aten = ops.ops.aten
    if kind in ("c2c", "ic2c"):
        return aten._fft_c2c.default(input, list(dims), code, kind == "c2c")
    if kind == "c2r":
        return aten._fft_c2r.default(input, list(dims), code, last_dim_size)
    if kind == "hc2r":
        if len(dims) > 1:
            input = aten._fft_c2c.default(input, list(dims[:-1]), code, True)
        return aten._fft_c2r.default(ops.conj(input), [dims[-1]], code, last_dim_size)
    if kind == "r2c" or not onesided:
        return aten._fft_r2c.default(input, list(dims), code, onesided)
    half = aten._fft_r2c.default(input, [dims[-1]], code, True)  # ihfft
    if len(dims) == 1:
        return ops.conj(half)
    return aten._fft_c2c.default(ops.conj_physical(half), list(dims[:-1]), code, False)


def transformed_backward(grad, kind: str, dims, resized_shape, code, onesided: bool = True):
    """The gradient of ``transformed``: its steps' formulas, in reverse order."""
    aten = ops.ops.aten
    if kind in ("c2c", "ic2c"):
        return aten._fft_c2c.default(grad, list(dims), code, kind != "c2c")
    if kind == "c2r":
        return c2r_backward(grad, list(dims), code)
    if kind == "hc2r":
        grad = ops.conj(c2r_backward(grad, [dims[-1]], code))
        return aten._fft_c2c.default(grad, list(dims[:-1]), code, False) if len(dims) > 1 else grad
    if kind == "r2c" or not onesided:
        return r2c_backward(grad, list(dims), code, onesided, resized_shape[dims[-1]])
    if len(dims) > 1:
        grad = ops.conj_physical(aten._fft_c2c.default(grad, list(dims[:-1]), code, True))
    else:
        grad = ops.conj(grad)
    return r2c_backward(grad, [dims[-1]], code, True, resized_shape[dims[-1]])


def _kind_of(dtype, kind: str, one_dim: bool):
    """The kind of transform a public op of ``kind`` runs on an input of ``dtype`` (``fft`` of a real
    input: a full ``_fft_r2c``; ``fftn`` makes it complex first), or None where its decomposition
    is not PyTorch's here (integer inputs, which PyTorch converts first; ``ifft`` of a real input, a
    conjugated ``_fft_r2c`` in PyTorch)."""
    is_complex = dtype in (dt.complex64, dt.complex128)
    if not is_complex and dtype not in (dt.float32, dt.float64):
        return None
    if kind in ("c2r", "hc2r"):
        return kind if is_complex else None
    if kind in ("r2c", "ir2c"):
        return None if is_complex else kind
    if is_complex or not one_dim:
        return kind  # (N-D: a real input made complex first)
    return "r2c" if kind == "c2c" else None


def decomposition(name: str, kind: str, one_dim: bool, default_dim=None):
    """The dispatch-level form of public transform ``name`` (see the module's docstring); arguments
    the op rejects, or whose steps are not PyTorch's here (``_kind_of``), are left to the op."""

    def transform(input, n_or_s, dim, norm):
        actual = _kind_of(input.dtype, kind, one_dim) if isinstance(input, TensorBase) else None
        if actual is None:
            return NotImplemented
        try:
            dims, sizes, last, code = plan(tuple(input.shape), n_or_s, dim, norm, one_dim, actual)
        except (RuntimeError, IndexError, TypeError, KeyError, ValueError):
            return NotImplemented
        if not dims:
            return NotImplemented
        onesided = not (kind == "c2c" and actual == "r2c")
        if kind in ("c2c", "ic2c") and not one_dim and not input.is_complex():  # PyTorch's fftn makes it complex
            input = ops.ops.aten._to_copy.default(input, dtype=_COMPLEX_OF_DTYPE[input.dtype])
        return transformed(resized(input, dims, sizes), actual, dims, last, code, onesided)

    if one_dim:
        def decompose(input, n=None, dim=-1, norm=None):
            return transform(input, n, dim, norm)
    else:
        def decompose(input, s=None, dim=default_dim, norm=None):
            return transform(input, s, dim, norm)

    decompose.__name__ = decompose.__qualname__ = f"{name}_decomposition"
    return decompose


def gradient(kind: str, one_dim: bool):
    """The public transform's gradient formula: ``transformed_backward`` then ``resized_backward``,
    the formulas of the steps its decomposition runs (so a mode changes no bit)."""

    def grad_of(grad, input_shape, input_dtype, n_or_s, dim, norm):
        actual = _kind_of(input_dtype, kind, one_dim) or kind
        dims, sizes, _, code = plan(tuple(input_shape), n_or_s, dim, norm, one_dim, actual)
        resized_shape = list(input_shape)
        for d, n in zip(dims, sizes, strict=True):
            resized_shape[d] = n
        onesided = not (kind == "c2c" and actual == "r2c")
        grad = transformed_backward(grad, actual, dims, resized_shape, code, onesided)
        return resized_backward(grad, tuple(input_shape), dims, sizes)

    if one_dim:
        def formula(grad, input_shape, input_dtype, n, dim, norm):
            return grad_of(grad, input_shape, input_dtype, n, dim, norm)
    else:
        def formula(grad, input_shape, input_dtype, s, dim, norm):
            return grad_of(grad, input_shape, input_dtype, s, dim, norm)
    return formula
