"""``torch.special``'s Bessel functions beyond ``i0`` and ``i1`` (``special.py``): the scaled and
modified ones of the first and second kinds, ``bessel_j0`` / ``j1`` / ``y0`` / ``y1``,
``spherical_bessel_j0``; and the Airy function ``airy_ai`` (``_airy``).

The Bessel functions evaluate Cephes' series as PyTorch's CPU kernels do (``_cephes``), so
their values are PyTorch's bit for bit (``_bessel_jy`` for J and Y: beyond 5 in float32, up to
glibc's sinf / cosf). Like PyTorch, all but ``i0e`` and ``i1e`` have no float16 / bfloat16 kernels
and no gradient (their results never require grad).

>>> import tensormodes as tm
>>> tm.special.modified_bessel_k0(tm.tensor([0.0, 1.0, -1.0], dtype=tm.float64)).tolist()
[inf, 0.4210244382407082, nan]
"""
# Parameters carry PyTorch's names (input), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import functools

import numpy as np

from . import _airy, _bessel_jy, _cephes
from ._pointwise import _half_lanes
from ._random_math import fma32, fma64
from ._samples import BF16, C64, F16, I23, SCALAR_F64
from .common import HALF_TYPES, dtype_of, not_implemented, ops
from .meta_rules import elementwise
from .registry import Sample, Tensor, TensorSpec, op

_SPECIAL = "tensormodes.special"


_BESSEL_SAMPLES = (Sample((TensorSpec((2, 3), "float32", -10, 10),)), Sample((I23,)), Sample((SCALAR_F64,)),
                   Sample((TensorSpec((4,), "float64", -40, 40),)), Sample((TensorSpec((3,), "float32", 8, 90),)))
_HALF_SAMPLES = (Sample((F16,)), Sample((BF16,)))


def _i0e_grad(grad, input, result):
    return grad * (ops.special.i1e(input) - input.sgn() * result)  # PyTorch's formula


@op(name="special_i0e", function="i0e", namespace=_SPECIAL, errors=(Sample((C64,)),), meta=elementwise,
    grad=_i0e_grad, out=True, samples=_BESSEL_SAMPLES + _HALF_SAMPLES, tags=("pointwise",))
def special_i0e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function of order zero, ``exp(-|x|) * i0(x)``.

    >>> import tensormodes as tm
    >>> tm.special.i0e(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [1.0, 0.46575960759364043]
    """
    if input.dtype in HALF_TYPES:  # its vector loop widens to float; its scalar loop computes in the half type
        return _half_lanes(dtype_of(input), lambda: _cephes.bessel_i0e(input.astype(np.float32)),
                           lambda: _cephes.half_step_i0e(input), input.shape)
    return _cephes.cephes_unary(_cephes.bessel_i0e, "i0e_cpu", input)


def _i1e_grad(grad, input, result):
    # PyTorch's i1e_backward: i0e(x) - i1e(x) * (sgn(x) + 1 / x), and its limit 0.5 where |x| is
    # within epsilon of 0 (as i1's, in special.py)
    if input.dtype in (ops.float16, ops.bfloat16):
        raise not_implemented("i1e_backward", input.dtype)
    eps = float(ops.finfo(input.dtype).eps)
    not_tiny = input.abs() > eps
    safe = ops.where(not_tiny, input, ops.full((), eps, dtype=input.dtype))
    slope = ops.special.i0e(safe) - result * (input.sgn() + safe.reciprocal())
    return grad * ops.where(not_tiny, slope, ops.full((), 0.5, dtype=input.dtype))


@op(name="special_i1e", function="i1e", namespace=_SPECIAL, errors=(Sample((C64,)),), meta=elementwise,
    grad=_i1e_grad, out=True, samples=_BESSEL_SAMPLES + _HALF_SAMPLES, tags=("pointwise",))
def special_i1e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function of order one, ``exp(-|x|) * i1(x)``.

    >>> import tensormodes as tm
    >>> tm.special.i1e(tm.tensor([0.0, -1.0], dtype=tm.float64)).tolist()
    [0.0, -0.2079104153497085]
    """
    return _cephes.cephes_unary(_cephes.bessel_i1e, "i1e_cpu", input)


@op(name="special_modified_bessel_i0", function="modified_bessel_i0", namespace=_SPECIAL,
    errors=(Sample((C64,)), Sample((F16,))), meta=elementwise, differentiable=False, out=True,
    samples=_BESSEL_SAMPLES, tags=("pointwise",))
def special_modified_bessel_i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order zero (``i0``'s value; no float16
    or bfloat16, no gradient).

    >>> import tensormodes as tm
    >>> tm.special.modified_bessel_i0(tm.tensor([0.0, 1.0], dtype=tm.float64)).tolist()
    [1.0, 1.2660658777520082]
    """
    return _cephes.cephes_unary(_cephes.modified_bessel_i0, "modified_bessel_i0_cpu", input, halves=False)


@op(name="special_modified_bessel_i1", function="modified_bessel_i1", namespace=_SPECIAL,
    errors=(Sample((C64,)), Sample((BF16,))), meta=elementwise, differentiable=False, out=True,
    samples=_BESSEL_SAMPLES, tags=("pointwise",))
def special_modified_bessel_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order one (no float16 or bfloat16, no
    gradient).

    >>> import tensormodes as tm
    >>> tm.special.modified_bessel_i1(tm.tensor([0.0, -1.0], dtype=tm.float64)).tolist()
    [0.0, -0.5651591039924851]
    """
    return _cephes.cephes_unary(_cephes.modified_bessel_i1, "modified_bessel_i1_cpu", input, halves=False)


# Denominators of the Taylor series of sin(x) / x in x**2 (the terms' signs alternate, from -1/6)
_SPHERICAL_SERIES = (6.0, 120.0, 5040.0, 362880.0, 39916800.0, 6227020800.0)


def _spherical_bessel_j0(x: np.ndarray) -> np.ndarray:
    """``sin(x) / x`` as PyTorch's ``spherical_bessel_j0_forward``: below 0.5 its Taylor series
    in x**2 by Horner's rule (each coefficient the type's division, each step fused), 0 at the
    infinities."""
    kind = x.dtype.type
    fused = fma64 if kind is np.float64 else fma32
    square = x * x
    terms = [kind(-1.0 if k % 2 == 0 else 1.0) / kind(d) for k, d in enumerate(_SPHERICAL_SERIES)]
    series = np.full_like(x, terms[-1])
    for c in terms[-2::-1]:
        series = fused(square, series, np.full_like(x, c))
    near = fused(square, series, np.ones_like(x))
    far = np.sin(x.astype(np.float64)).astype(kind) / x if kind is np.float32 else np.sin(x) / x
    return np.where(np.isinf(x), kind(0), np.where(np.absolute(x) < 0.5, near, far))


@op(name="special_spherical_bessel_j0", function="spherical_bessel_j0", namespace=_SPECIAL,
    errors=(Sample((C64,)), Sample((F16,))), meta=elementwise, differentiable=False, out=True,
    samples=_BESSEL_SAMPLES + (Sample((TensorSpec((3,), "float64", -0.4, 0.4),)),), tags=("pointwise",))
def special_spherical_bessel_j0(x: Tensor) -> Tensor:
    """The spherical Bessel function of the first kind of order zero, ``sin(x) / x`` (1 at 0).

    >>> import tensormodes as tm
    >>> tm.special.spherical_bessel_j0(tm.tensor([0.0, float("inf")])).tolist()
    [1.0, 0.0]
    """
    return _cephes.cephes_unary(_spherical_bessel_j0, "spherical_bessel_j0_cpu", x, halves=False)


_K_SAMPLES = (Sample((TensorSpec((2, 3), "float32", 0.01, 2),)), Sample((TensorSpec((2, 3), "int64", 0, 5),)),
              Sample((SCALAR_F64,)), Sample((TensorSpec((4,), "float64", -1, 40),)),
              Sample((TensorSpec((3,), "float32", 2, 90),)))


def _declare(name: str, kernel, doc: str, samples: tuple[Sample, ...], *, named_x: bool = False) -> None:
    """Declare ``tensormodes.special.<name>``: ``kernel`` (a ``cephes_unary`` one), no half types,
    no gradient; its argument is ``x`` where PyTorch's schema names it so (``named_x``), else ``input``."""
    if named_x:
        def function(x: Tensor) -> Tensor:
            return _cephes.cephes_unary(kernel, f"{name}_cpu", x, halves=False)
    else:
        def function(input: Tensor) -> Tensor:
            return _cephes.cephes_unary(kernel, f"{name}_cpu", input, halves=False)
    function.__name__ = function.__qualname__ = f"special_{name}"
    function.__doc__ = doc
    function.__module__ = __name__
    op(name=f"special_{name}", function=name, namespace=_SPECIAL, errors=(Sample((C64,)), Sample((F16,))),
       meta=elementwise, differentiable=False, out=True, samples=samples, tags=("pointwise",))(function)


_declare("modified_bessel_k0", _cephes.bessel_k0,
         "The modified Bessel function of the second kind of order zero (inf at 0, NaN below; no gradient).",
         _K_SAMPLES)
_declare("modified_bessel_k1", _cephes.bessel_k1,
         "The modified Bessel function of the second kind of order one (inf at 0, NaN below; no gradient).",
         _K_SAMPLES)
_declare("scaled_modified_bessel_k0", functools.partial(_cephes.bessel_k0, scaled=True),
         "``exp(x) * modified_bessel_k0(x)``, without its underflow (no gradient).", _K_SAMPLES, named_x=True)
_declare("scaled_modified_bessel_k1", functools.partial(_cephes.bessel_k1, scaled=True),
         "``exp(x) * modified_bessel_k1(x)``, without its underflow (no gradient).", _K_SAMPLES, named_x=True)


_JY_SAMPLES = (Sample((TensorSpec((2, 3), "float32", -5, 5),)), Sample((I23,)), Sample((SCALAR_F64,)),
               Sample((TensorSpec((4,), "float64", -40, 40),)), Sample((TensorSpec((3,), "float64", 0.01, 5),)))
_declare("bessel_j0", _bessel_jy.bessel_j0, "The Bessel function of the first kind of order zero (no gradient).",
         _JY_SAMPLES)
_declare("bessel_j1", _bessel_jy.bessel_j1, "The Bessel function of the first kind of order one (no gradient).",
         _JY_SAMPLES)
_declare("bessel_y0", _bessel_jy.bessel_y0,
         "The Bessel function of the second kind of order zero (-inf at 0, NaN below; no gradient).", _JY_SAMPLES)
_declare("bessel_y1", _bessel_jy.bessel_y1,
         "The Bessel function of the second kind of order one (-inf at 0, NaN below; no gradient).", _JY_SAMPLES)
_declare("airy_ai", _airy.airy_ai, "The Airy function Ai (NaN at the infinities; no gradient).",
         (Sample((TensorSpec((2, 3), "float32", -5, 5),)), Sample((I23,)), Sample((SCALAR_F64,)),
          Sample((TensorSpec((4,), "float64", -40, 40),))), named_x=True)
