"""Complex numbers: ``real`` and ``imag`` views, conjugation (lazy and physical), ``angle``,
``sgn`` and ``polar``.

Gradients follow PyTorch's convention for complex inputs (see docs/adding-ops.md).
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._meta_array import copy_of, view_of
from .._tensor_base import TensorBase
from ._pointwise import _complex_divide, _complex_from_parts, _zeros_like
from ._samples import BOOL, C64, F16, F64, I23, M23, POSITIVE, SCALAR_F64
from .common import check_same_shape_or_broadcast, dtype_of, floating, ops, quiet, scalar_type_name
from .meta_rules import broadcasting, elementwise, metadata, rule
from .registry import Sample, Tensor, TensorSpec, op

# -- complex numbers -------------------------------------------------------------------------
# tensormodes has no lazy conjugate or negative bits: conj() of a complex tensor is a copy.

_C128 = TensorSpec((2, 3), "complex128", -1.0, 1.0)


def _part_meta(input, imaginary: bool):
    """``real`` / ``imag`` of a complex MetaArray: a view of the float pairs, so strides and the
    storage offset double (in the part's elements), and the imaginary part starts one further."""
    part = np.finfo(input.dtype).dtype
    return view_of(input, input.shape, tuple(2 * s for s in input.elem_strides), input.offset + imaginary, part)


def _real_meta(input):
    return _part_meta(input, False) if input.dtype.kind == "c" else input


def _imag_meta(input):
    if input.dtype.kind != "c":
        return imag(input)  # the kernel's error: it reads only the dtype
    return _part_meta(input, True)


def _conj_meta(input):
    return copy_of(input) if input.dtype.kind == "c" else input


def _part_decomposition(imaginary: bool):
    """PyTorch's composite ``real`` / ``imag`` of a complex tensor: ``view_as_real`` and the
    ``select.int`` of the part; ``real`` of a real tensor is the tensor itself (no op). Other
    arguments are left to the op (NotImplemented), which raises PyTorch's errors."""

    def decompose(input):
        if not isinstance(input, TensorBase):
            return NotImplemented
        if not input.is_complex():
            return NotImplemented if imaginary else input
        pairs = ops.ops.aten.view_as_real.default(input)
        return ops.ops.aten.select.int(pairs, pairs.dim() - 1, int(imaginary))

    decompose.__name__ = decompose.__qualname__ = f"{'imag' if imaginary else 'real'}_decomposition"
    return decompose


def _identity_grad(grad):
    return grad  # for real(): a real gradient, which the engine casts to the complex input's dtype


@op(grad=_identity_grad, method=False, view=True, meta=rule(_real_meta), decompose=_part_decomposition(False),
    samples=(Sample((C64,)), Sample((_C128,)), Sample((M23,)), Sample((I23,))))
def real(input: Tensor) -> Tensor:
    """The real part of a complex tensor, as a view (``input`` itself if it is real); also
    the property ``x.real``.

    >>> import tensormodes as tm
    >>> tm.real(tm.tensor([1 + 2j, 3 - 1j]))
    tensor([1., 3.])
    """
    return input.real if input.dtype.kind == "c" else input


def _imag_grad(grad):
    return grad * 1j


@op(errors=(Sample((M23,)),),
    grad=_imag_grad, method=False, view=True, meta=rule(_imag_meta), decompose=_part_decomposition(True),
    samples=(Sample((C64,)), Sample((_C128,))))
def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, as a view; also the property ``x.imag``.

    >>> import tensormodes as tm
    >>> tm.imag(tm.tensor([1 + 2j, 3 - 1j]))
    tensor([ 2., -1.])
    """
    if input.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return input.imag


def _conj_grad(grad):
    return grad.conj()


@op(grad=_conj_grad, method=True, view=True, meta=rule(_conj_meta),
    samples=(Sample((C64,)), Sample((_C128,)), Sample((M23,))))
def conj(input: Tensor) -> Tensor:
    """The complex conjugate: ``input`` itself for real tensors, a new tensor for complex ones
    (PyTorch returns a lazily conjugated view; tensormodes copies, so writes to the result do
    not reach ``input``, and ``is_conj()`` is always False).

    >>> import tensormodes as tm
    >>> tm.conj(tm.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return np.conjugate(input) if input.dtype.kind == "c" else input


def _conj_physical_grad(grad):
    return grad.conj_physical()


@op(function=False, grad=_conj_physical_grad, meta=rule(copy_of), aten="default", tags=("pointwise",),
    samples=(Sample((C64,)), Sample((_C128,)), Sample((M23,)), Sample((BOOL,))), schema={"input": "Tensor self"})
def _conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, always computed into a new tensor (PyTorch's ``aten::_conj_physical``,
    what ``conj_physical`` of a complex tensor reaches at the dispatch level).

    >>> import tensormodes as tm
    >>> tm.ops.aten._conj_physical.default(tm.tensor([1 - 1j]))
    tensor([1.+1.j])
    """
    return np.conjugate(input) if input.dtype.kind == "c" else input.copy()  # (NumPy's conj of bools: int8)


def _conj_physical_decomposition(input):
    """PyTorch's composite ``conj_physical``: ``_conj_physical`` of a complex tensor, the tensor
    itself otherwise (no op)."""
    if not isinstance(input, TensorBase):
        return NotImplemented
    return ops.ops.aten._conj_physical.default(input) if input.is_complex() else input


@op(grad=_conj_physical_grad, method=True, view=True, meta=rule(_conj_meta), decompose=_conj_physical_decomposition,
    samples=(Sample((C64,)), Sample((_C128,)), Sample((M23,)), Sample((BOOL,))),
    schema={"input": "Tensor()", "(returns)": "Tensor"}, tags=("maybe_aliasing_or_mutating", "pointwise"))
def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (a new tensor; ``input`` itself for real tensors).

    >>> import tensormodes as tm
    >>> tm.conj_physical(tm.tensor([1 - 1j]))
    tensor([1.+1.j])
    """
    return np.conjugate(input) if input.dtype.kind == "c" else input


@op(method=True, mutates=True, grad=_conj_physical_grad, meta=metadata, tags=("inplace", "pointwise"),
    samples=(Sample((C64,)), Sample((M23,))))
def conj_physical_(input: Tensor) -> Tensor:
    """Conjugate ``input`` in place (nothing to do for a real tensor).

    >>> import tensormodes as tm
    >>> tm.conj_physical_(tm.tensor([1 - 1j]))
    tensor([1.+1.j])
    """
    if input.dtype.kind == "c" and type(input) is np.ndarray:
        np.conjugate(input, out=input)
    return input


@op(grad=_identity_grad, method=True, view=True, meta=metadata, samples=(Sample((C64,)), Sample((M23,))))
def resolve_conj(input: Tensor) -> Tensor:
    """``input`` itself: tensormodes never defers a conjugation (see ``conj``).

    >>> import tensormodes as tm
    >>> x = tm.tensor([1j]); x.resolve_conj() is x
    True
    """
    return input


@op(grad=_identity_grad, method=True, view=True, meta=metadata, samples=(Sample((C64,)), Sample((M23,))))
def resolve_neg(input: Tensor) -> Tensor:
    """``input`` itself: tensormodes never defers a negation.

    >>> import tensormodes as tm
    >>> x = tm.tensor([1.0]); x.resolve_neg() is x
    True
    """
    return input


def _angle_grad(grad, input):
    if not input.dtype.is_complex:
        return _zeros_like(grad)
    # d angle = (x dy - y dx) / |z|^2, so the gradient is grad * 1j * z / |z|^2 (0 at 0), in
    # PyTorch's order: grad * z / |z|^2, then times 1j (which decides the NaN where |z|^2 underflows)
    return (grad * input / input.abs().pow(2) * 1j).where(input != 0, 0)


@op(meta=elementwise, grad=_angle_grad, method=True, out=True,
    samples=(Sample((C64,)), Sample((_C128,)), Sample((M23,)), Sample((I23,)), Sample((F16,)),
             Sample((BOOL,))), tags=("pointwise",))
def angle(input: Tensor) -> Tensor:
    """The argument (phase) of each element, in radians: ``atan2(imag, real)`` for complex
    tensors (a real result), pi for negative real numbers and 0 otherwise (NaN stays NaN).
    Integers give the default float dtype.

    >>> import tensormodes as tm
    >>> tm.angle(tm.tensor([1j, -1.0 + 0j]))
    tensor([1.5708, 3.1416])
    """
    d = dtype_of(input)
    if d.is_complex:
        return np.angle(input)
    result_type = floating(d)._np
    result = np.where(input < 0, np.pi, 0.0).astype(result_type, copy=False)
    if d.is_floating_point:
        result[np.isnan(input)] = np.nan
    return result


def _sgn_grad(grad, input, result):
    if not input.dtype.is_complex:
        return _zeros_like(grad)
    # Only the direction moves: the component of grad along the result itself is dropped.
    magnitude = input.abs()
    return ((grad - result * (grad * result.conj()).real) / magnitude).where(magnitude != 0, 0)


@op(meta=elementwise, grad=_sgn_grad, method=True, inplace=True, out=True,
    samples=(Sample((C64,)), Sample((_C128,)), Sample((M23,)), Sample((I23,)), Sample((BOOL,))), tags=("pointwise",))
def sgn(input: Tensor) -> Tensor:
    """``input / abs(input)`` for complex tensors (0 at 0), the sign (``sign``) for real ones.

    >>> import tensormodes as tm
    >>> tm.sgn(tm.tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    d = dtype_of(input)
    if not d.is_complex:
        return input.copy() if d is dt.bool else np.asarray((input > 0).astype(d._np) - (input < 0).astype(d._np))
    # PyTorch's kernel (on an AVX-512 CPU) runs blocks of 64 bytes' worth of elements per vector
    # step, two at a time, dividing each part by |z|; the elements left over go through
    # c10::complex division by |z| + 0j, whose infinities and NaNs differ (inf j gives
    # nan + nanj there, 0 + nanj in the vector steps).
    magnitude = np.hypot(input.real, input.imag)
    flat, flat_magnitude = input.reshape(-1), magnitude.reshape(-1)
    vectorised = flat.size - flat.size % (2 * 64 // input.dtype.itemsize)
    with quiet():
        real = flat.real / flat_magnitude
        imag = flat.imag / flat_magnitude
        if vectorised < flat.size:
            zero = np.zeros_like(flat_magnitude[vectorised:])
            tail_real, tail_imag = _complex_divide(flat.real[vectorised:], flat.imag[vectorised:],
                                                   flat_magnitude[vectorised:], zero)
            real[vectorised:], imag[vectorised:] = tail_real, tail_imag
    result = _complex_from_parts(real, imag, input.dtype)
    result[flat_magnitude == 0] = 0
    return result.reshape(input.shape)


def _complex_parts_type(name: str, first: np.ndarray, second: np.ndarray) -> np.dtype:
    """The complex dtype ``complex`` / ``polar`` make from float parts of one dtype (PyTorch's checks)."""
    if first.dtype.kind != "f" or second.dtype.kind != "f" or dt.bfloat16._np in (first.dtype, second.dtype):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(dtype_of(first))} and {scalar_type_name(dtype_of(second))}")
    if first.dtype != second.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(dtype_of(first))} but got scalar "
                           f"type {scalar_type_name(dtype_of(second))} for second argument")
    if first.dtype == np.float16:
        raise NotImplementedError(f"{name}(): float16 parts make a complex32 (ComplexHalf) tensor, which "
                                  "tensormodes does not have")
    return np.result_type(first.dtype, np.complex64)


def _complex_grad(grad):
    # The real part's gradient is grad's real part, the imaginary part's its imaginary part
    # (the engine keeps the real part of grad and of -1j * grad).
    return grad, grad * -1j


@op(errors=(Sample((M23, F64)), Sample((I23, I23)), Sample((M23, TensorSpec((3, 2))))),
    meta=broadcasting("real", "imag", kernel_first=True, keep_layout=False), name="complex", grad=_complex_grad,
    out=True, samples=(
    Sample((M23, M23)), Sample((F64, TensorSpec((3,), "float64"))), Sample((SCALAR_F64, SCALAR_F64))))
def _complex(real: Tensor, imag: Tensor) -> Tensor:  # the op "complex": a def would hide the builtin here
    """The complex tensor ``real + 1j * imag`` (float32 parts give complex64, float64 parts
    complex128; the parts broadcast).

    >>> import tensormodes as tm
    >>> tm.complex(tm.tensor([1.0]), tm.tensor([2.0]))
    tensor([1.+2.j])
    """
    result_type = _complex_parts_type("complex", real, imag)
    result = np.empty(check_same_shape_or_broadcast(real.shape, imag.shape), result_type)
    result.real, result.imag = real, imag
    return result


def _polar_grad(grad, result):
    # d result / d abs = exp(1j * angle) = sgn(result) and d result / d angle = 1j * result: the real
    # inputs' gradients are the real parts of grad times their conjugates (kept by the engine). As in
    # PyTorch, only the result is saved (so abs's gradient is 0 where abs is 0).
    return grad * result.sgn().conj(), grad * (result * 1j).conj()


@op(errors=(Sample((F64, M23)), Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=broadcasting("abs", "angle", kernel_first=True, keep_layout=False), grad=_polar_grad, out=True, samples=(
    Sample((POSITIVE, M23)), Sample((TensorSpec((3,), "float64", 0.1, 3), TensorSpec((2, 3), "float64"))),
    Sample((TensorSpec((), "float64", 0.5, 2), SCALAR_F64))))
def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - PyTorch's parameter names
    """The complex tensor with magnitudes ``abs`` and phases ``angle``: ``abs * (cos(angle) +
    1j * sin(angle))`` (float32 parts give complex64, float64 parts complex128).

    >>> import tensormodes as tm
    >>> tm.polar(tm.tensor([2.0]), tm.tensor([0.0]))
    tensor([2.+0.j])
    """
    result_type = _complex_parts_type("polar", abs, angle)
    result = np.empty(check_same_shape_or_broadcast(abs.shape, angle.shape), result_type)
    result.real, result.imag = abs * np.cos(angle), abs * np.sin(angle)
    return result
